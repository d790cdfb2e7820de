#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: self-unwinding by signal through perf. The demo interpreter minivm
# (demo/minivm.c) reports its interpreted frames when signalled; perf
# records cpu-clock with --call-graph fp,defer and the report event, and
# its tools put the reported frames under the kernel frames of each
# sample. Checks that the kernel samples of its read()s carry the
# interpreted chain of the function that read, never another's, and that
# without the report event nothing is stitched. PERF and DEMO are set by
# harness/run-tests; minivm sits beside DEMO.
echo "TAP version 13"
echo "1..5"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
check() { if eval "$1"; then ok "$2"; else not_ok "$2"; fi; }

minivm=$(dirname "${DEMO:-/nonexistent}")/minivm
data=/tmp/minivm.data
if [ ! -x "$minivm" ] || [ ! -d /sys/kernel/tracing/events/unwind_report ]; then
	for i in 1 2 3 4 5; do echo "ok $i # SKIP no minivm or no report event"; done
	exit 0
fi

if "$PERF" record -q -e cpu-clock/freq=2000/ -e unwind_report:unwind_user_report \
	--call-graph fp,defer -o "$data" -- "$minivm" -s 2 >/tmp/minivm.out 2>/tmp/minivm.err; then
	ok "perf record of minivm with the report event ($(cat /tmp/minivm.out))"
else
	not_ok "perf record of minivm with the report event"
	sed 's/^/# /' /tmp/minivm.err
fi

# One cpu-clock sample per paragraph; its chain, innermost first.
"$PERF" script -i "$data" -F event,ip,sym 2>/dev/null >/tmp/minivm.script
counts=$(awk 'BEGIN { RS = "" }
	/cpu-clock/ && /vfs_read/ {
		kernel++
		if (!/vm:/) next
		stitched++
		# The interpreted caller chain of each reading function.
		if (/vm:read_block/ && !/vm:read_block[^\n]*\n[^\n]*vm:parse[^\n]*\n[^\n]*vm:load[^\n]*\n[^\n]*vm:main/)
			wrong++
		else if (/vm:checksum/ && !/vm:checksum[^\n]*\n[^\n]*vm:compute[^\n]*\n[^\n]*vm:main/)
			wrong++
		else if (!/vm:read_block/ && !/vm:checksum/)
			wrong++
	}
	END { print kernel + 0, stitched + 0, wrong + 0 }' /tmp/minivm.script)
read -r kernel stitched wrong <<<"$counts"
echo "# kernel samples in read(): $kernel, with interpreted frames: $stitched, wrong chains: $wrong"
# The share of samples a report reaches depends on how fast the handler
# answers: under the debug kernel (KASAN, lockdep) it runs several times
# slower and more samples meet the rate limit, so that lane asks less.
want=90
[ "${CONFIG:-}" = debug ] && want=75
check '[ "$kernel" -gt 50 ] && [ $((stitched * 100)) -ge $((kernel * want)) ]' \
	"at least $want% of read()'s kernel samples carry interpreted frames ($stitched of $kernel)"
check '[ "$wrong" -eq 0 ] && [ "$stitched" -gt 0 ]' \
	"each carries the chain of the function that read ($wrong wrong)"
# The interpreted frames come right under the kernel's, before the
# native user frames (read(), the interpreter's loop).
order=$(awk 'BEGIN { RS = "" } /cpu-clock/ && /vm:read_block/ && /vfs_read/ {
	k = split($0, line, "\n"); sys = vm = main = nat = 0
	for (i = 1; i <= k; i++) {
		f = split(line[i], w, " "); sym = w[f]
		if (sym ~ /^entry_SYSCALL/) sys = i
		if (sym ~ /^vm:/ && !vm) vm = i
		if (sym == "vm:main") main = i
		if (sym == "read" && !nat) nat = i
	}
	if (sys && sys < vm && main && main < nat) good++; else bad++ }
	END { print good + 0, bad + 0 }' /tmp/minivm.script)
read -r good bad <<<"$order"
check '[ "$good" -gt 0 ] && [ "$bad" -eq 0 ]' \
	"interpreted frames sit between the kernel and the native user frames ($good, $bad not)"

# Without the report event, perf has nothing to stitch: native stacks only.
"$PERF" record -q -e cpu-clock/freq=2000/ --call-graph fp,defer -o "$data.plain" \
	-- "$minivm" 1 >/dev/null 2>&1
plain=$("$PERF" script -i "$data.plain" -F ip,sym 2>/dev/null | grep -c 'vm:')
check '[ "$plain" -eq 0 ]' "without the report event no interpreted frame appears ($plain)"
