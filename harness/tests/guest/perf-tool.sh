#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the perf tool built from the prepared tree records the demo with
# frame-pointer callchains (cpu-clock: the guest has no PMU), and its
# samples show kernel frames and the demo's user chain together, as
# `make run` promises. PERF and DEMO are set by harness/run-tests.
echo "TAP version 13"
echo "1..3"
data=/tmp/perf-tool-smoke.data
if "$PERF" record -q -e cpu-clock -F 1000 -g -o "$data" -- "$DEMO" 1 >/dev/null 2>/tmp/perf-record.err; then
	echo "ok 1 perf record -g of the demo"
else
	echo "not ok 1 perf record -g of the demo"
	sed 's/^/# /' /tmp/perf-record.err
fi
"$PERF" script -i "$data" -F ip,sym,dso 2>/dev/null >/tmp/perf-script.txt
# One sample's callchain is a block of lines separated by a blank line.
mixed=$(awk 'BEGIN { RS = "" } /kernel\.kallsyms/ && /demo_level_00/ { n++ } END { print n + 0 }' /tmp/perf-script.txt)
deep=$(awk 'BEGIN { RS = "" } /demo_level_23/ && /demo_level_00/ && /main/ { n++ } END { print n + 0 }' /tmp/perf-script.txt)
if [ "$mixed" -gt 0 ]; then
	echo "ok 2 samples with kernel frames and the user chain together ($mixed)"
else
	echo "not ok 2 no sample shows kernel frames and the user chain together"
fi
if [ "$deep" -gt 0 ]; then
	echo "ok 3 samples resolve the whole 24-level user chain to main ($deep)"
else
	echo "not ok 3 no sample resolves demo_level_23 .. demo_level_00 .. main"
fi
