#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: tracefs is mounted and records events: a trace_marker write and a
# sched_process_fork event caused by this script both reach the buffer.
t=/sys/kernel/tracing
echo "TAP version 13"
echo "1..3"
if [ -w "$t/trace_marker" ]; then echo "ok 1 tracefs mounted"; else echo "not ok 1 tracefs mounted at $t"; fi
echo 0 >"$t/tracing_on"
: >"$t/trace"
echo 1 >"$t/events/sched/sched_process_fork/enable"
echo 1 >"$t/tracing_on"
echo "vm-smoke-marker-$$" >"$t/trace_marker"
/bin/true &
child=$!
wait
echo 0 >"$t/tracing_on"
echo 0 >"$t/events/sched/sched_process_fork/enable"
if grep -q "vm-smoke-marker-$$" "$t/trace"; then echo "ok 2 trace_marker write recorded"; else echo "not ok 2 trace_marker write recorded"; fi
if grep -q "sched_process_fork:.*child_pid=$child" "$t/trace"; then
	echo "ok 3 sched_process_fork event recorded"
else
	echo "not ok 3 sched_process_fork event for pid $child recorded"
	sed 's/^/# /' "$t/trace" | tail -5
fi
: >"$t/trace"
