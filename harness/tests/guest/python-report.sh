#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: CPython reports its Python frames. Debian's python3.11, unmodified,
# runs a script that imports the series' extension module (python/
# unwind_report.c, built as build/python/unwind_report*.so), which opts the
# process in to self-unwinding by signal; perf records cpu-clock with
# --call-graph fp,defer and the report event. Checks that the kernel
# samples of the script's read()s carry its Python call chain, innermost
# first (script.py:gamma, beta, alpha, <module>), with the native frames
# after them, and measures the cost per sample against the same run
# without the module. PERF and DEMO are set by harness/run-tests; the
# module sits in build/python, beside DEMO's directory.
echo "TAP version 13"
echo "1..5"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
check() { if eval "$1"; then ok "$2"; else not_ok "$2"; fi; }

pydir=$(dirname "$(dirname "${DEMO:-/nonexistent/x}")")/python
python=/usr/bin/python3.11
data=/tmp/python.data
if [ ! -x "$python" ] || ! ls "$pydir"/unwind_report*.so >/dev/null 2>&1 ||
   [ ! -d /sys/kernel/tracing/events/unwind_report ]; then
	for i in 1 2 3 4 5; do echo "ok $i # SKIP no python3.11, module or report event"; done
	exit 0
fi

# A file-reading script: gamma reads, called through beta and alpha.
cat >/tmp/script.py <<'PY'
import os, sys, time
if os.environ.get("UNWIND_REPORT", "1") == "1":
    import unwind_report

def gamma(fd):
    return len(os.read(fd, 1 << 18))

def beta(fd):
    return gamma(fd)

def alpha(seconds):
    fd = os.open("/dev/zero", os.O_RDONLY)
    end = time.monotonic() + seconds
    n = reads = 0
    while time.monotonic() < end:
        n += beta(fd)
        reads += 1
    os.close(fd)
    return reads

reads = alpha(float(sys.argv[1]))
stats = unwind_report.stats() if "unwind_report" in sys.modules else {}
print(reads, stats.get("reports", 0), stats.get("failed", 0))
PY

run() {	# run OUT SECONDS UNWIND_REPORT(0/1) [report event]
	local out=$1 secs=$2 mod=$3 ev=()
	[ "$mod" = 1 ] && ev=(-e unwind_report:unwind_user_report)
	UNWIND_REPORT=$mod PYTHONPATH="$pydir" "$PERF" record -q \
		-e cpu-clock/freq=2000/ "${ev[@]}" --call-graph fp,defer -o "$out" \
		-- "$python" /tmp/script.py "$secs" 2>/tmp/python.err
}

if run "$data" 3 1 >/tmp/python.out; then
	ok "perf record of python3.11 script.py with the module ($(cat /tmp/python.out): reads, reports, failed)"
else
	not_ok "perf record of python3.11 script.py with the module"
	sed 's/^/# /' /tmp/python.err
fi

"$PERF" script -i "$data" -F event,ip,sym 2>/dev/null >/tmp/python.script
# Per cpu-clock sample in read(): does it carry gamma, beta, alpha,
# <module> in that order right after the kernel frames, then native ones?
# Samples count from the first that carries Python frames on: the reads
# of the interpreter's start (its own modules, before the script imports
# unwind_report) have none to carry, and weigh more on a slow kernel.
counts=$(awk 'BEGIN { RS = "" }
	/cpu-clock/ && /script\.py:/ { started = 1 }
	started && /cpu-clock/ && /vfs_read/ {
		kernel++
		k = split($0, line, "\n"); py = ""; first = last = 0; nat = 0
		for (i = 2; i <= k; i++) {
			f = split(line[i], w, " "); sym = w[f]
			if (sym ~ /^script\.py:/) {
				py = py " " sym
				if (!first) first = i
				last = i
			} else if (last && i > last) {
				nat++
			}
		}
		if (py == "") next
		stitched++
		if (py == " script.py:gamma script.py:beta script.py:alpha script.py:<module>")
			right++
		if (nat) native++
	}
	END { print kernel + 0, stitched + 0, right + 0, native + 0 }' /tmp/python.script)
read -r kernel stitched right native <<<"$counts"
echo "# kernel samples in read() after the opt-in: $kernel, with Python frames: $stitched, the whole chain in order: $right, native frames after: $native"
# The share of samples a report reaches depends on how fast the handler
# answers: under the debug kernel (KASAN, lockdep) it runs several times
# slower and more samples meet the rate limit, so that lane asks less.
want=90
[ "${CONFIG:-}" = debug ] && want=75
check '[ "$kernel" -gt 50 ] && [ $((right * 100)) -ge $((kernel * want)) ]' \
	"at least $want% of read()'s kernel samples carry gamma, beta, alpha, <module> innermost first ($right of $kernel)"
check '[ "$right" -eq "$stitched" ] && [ "$stitched" -gt 0 ]' \
	"no sample carries another chain ($((stitched - right)) of $stitched)"
check '[ "$native" -gt 0 ] && [ $((native * 100)) -ge $((right * 90)) ]' \
	"the interpreter's native frames follow the Python ones ($native of $right)"

# The same script without the module: the cost per sample of reporting.
run "$data.plain" 3 0 >/tmp/python.plain.out
"$PERF" report -i "$data" --stats 2>/dev/null >/tmp/python.stats
"$PERF" report -i "$data.plain" --stats 2>/dev/null >/tmp/python.plain.stats
samples() { awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }' "$1"; }
s1=$(samples /tmp/python.stats); s0=$(samples /tmp/python.plain.stats)
b1=$(stat -c %s "$data"); b0=$(stat -c %s "$data.plain")
r1=$(cut -d' ' -f1 /tmp/python.out); r0=$(cut -d' ' -f1 /tmp/python.plain.out)
echo "# with the module: $r1 reads, $s1 samples, $b1 bytes; without: $r0 reads, $s0 samples, $b0 bytes"
echo "# python-report: reads_with=$r1 reads_without=$r0 samples_with=$s1 samples_without=$s0 bytes_with=$b1 bytes_without=$b0"
check '[ -n "$r0" ] && [ "$r0" -gt 0 ] && ! grep -q "script.py:" <("$PERF" script -i "$data.plain" -F ip,sym 2>/dev/null)' \
	"without the module no Python frame appears ($r0 reads)"
