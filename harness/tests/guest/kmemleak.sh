#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: no memory leaked by the tests, by kmemleak (debug lane). guest-tests
# clears the list of suspects before the first test, so only objects
# allocated and lost since are reported; two scans, as kmemleak itself
# advises, after its minimum object age has passed.
echo "TAP version 13"
echo "1..1"
k=/sys/kernel/debug/kmemleak
if [ ! -w "$k" ]; then
	echo "ok 1 # SKIP kmemleak is not configured"
	exit 0
fi
sleep 6
echo scan >"$k"
sleep 1
echo scan >"$k"
n=$(grep -c '^unreferenced object' "$k")
if [ "$n" -eq 0 ]; then
	echo "ok 1 kmemleak: no new suspected leak after the tests"
else
	echo "not ok 1 kmemleak: $n new suspected leaks after the tests"
	sed 's/^/# /' "$k" | head -200
fi
