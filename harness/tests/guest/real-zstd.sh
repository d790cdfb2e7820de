#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: a real multithreaded program, zstd built from Debian's source
# package with frame pointers (harness/build-zstd), compresses 22 MB of
# kernel source with 4 worker threads under perf record with two cpu-clock
# events: one with --call-graph fp (the user stack walked in the
# interrupt), one with fp,defer. In the same run both see the same mix of
# system calls and faults. With deferral no sample may lose its user
# stack, and the share of zstd's kernel samples whose user chain reaches
# the thread's root function (main, or POOL_thread for the worker and I/O
# threads) must be no lower than with fp: 5 points of sampling noise are
# allowed (about 900 kernel samples per event). ZSTD, PERF and SRC are set
# by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }

if [ ! -x "${ZSTD:-}" ]; then
	echo "1..1"
	echo "ok 1 # SKIP zstd was not built (harness/build-zstd)"
	exit 0
fi
in=/tmp/zstd-input
out=/tmp/zstd-output.zst
data=/tmp/zstd.data
# The same 22 MB in every run: the kernel's C sources, in a fixed order.
find "$SRC/kernel" "$SRC/mm" "$SRC/fs" -name '*.c' | sort | xargs cat 2>/dev/null |
	head -c $((22 << 20)) >"$in" 2>/dev/null

stat_of() {
	"$PERF" report -i "$1" --stats 2>/dev/null |
		awk -v n="$2" '$1 == n && $2 == "events:" { print $3; f = 1; exit }
			END { if (!f) print 0 }'
}

if "$PERF" record -q -F 4000 --call-graph fp,defer -e cpu-clock/call-graph=fp/ \
	-e cpu-clock -o "$data" -- "$ZSTD" -q -T4 -3 -f "$in" -o "$out" \
	2>/tmp/zstd-record.err; then
	ok "perf record, cpu-clock with fp and with fp,defer, of zstd -T4"
else
	not_ok "perf record, cpu-clock with fp and with fp,defer, of zstd -T4"
	sed 's/^/# /' /tmp/zstd-record.err
fi
if "$ZSTD" -q -d -c "$out" | cmp -s - "$in"; then
	ok "zstd output decompresses to its input"
else
	not_ok "zstd output decompresses to its input"
fi

# Per event: "EVENT THREADS KSAMPLES ROOTED", zstd's threads with samples,
# its kernel samples, and those whose user chain reaches main or
# POOL_thread. The deferring event is the plain "cpu-clock".
"$PERF" script -i "$data" -F event,comm,tid,ip,sym,dso 2>/dev/null | awk '
	function flush() {
		if (comm == "zstd") {
			tids[ev, tid] = 1
			if (kernel) { k[ev]++; r[ev] += root }
		}
		comm = ""; kernel = root = 0; first = 1
	}
	/^$/ { flush(); next }
	/^[ \t]+[0-9a-f]+ / {
		if (first) { kernel = /kernel\.kallsyms/; first = 0 }
		if ($2 == "main" || $2 == "POOL_thread") root = 1
		next
	}
	{ flush(); comm = $1; tid = $2; ev = ($3 ~ /call-graph=fp/) ? "fp" : "defer" }
	END {
		flush()
		for (x in tids) { split(x, a, SUBSEP); t[a[1]]++ }
		for (e in k) print e, t[e] + 0, k[e], r[e] + 0
	}' >/tmp/zstd-chains
while read -r ev threads ksamples rooted; do
	echo "# $ev: $threads zstd threads sampled, $rooted of $ksamples kernel samples reach their root"
	eval "threads_$ev=$threads ksamples_$ev=$ksamples share_$ev=$((rooted * 1000 / ksamples))"
done </tmp/zstd-chains

samples=$(stat_of "$data" SAMPLE)
stitched=$(stat_of "$data" DEFERRED_STITCHED)
lost=$(stat_of "$data" DEFERRED_LOST)
if [ "$lost" -eq 0 ] && [ "$stitched" -gt 0 ]; then
	ok "fp,defer: $stitched samples stitched, $lost lost (of $samples with both events)"
else
	not_ok "fp,defer: $stitched samples stitched, $lost lost (of $samples with both events)"
fi
if [ "${threads_defer:-0}" -ge 3 ]; then
	ok "fp,defer: samples of $threads_defer zstd threads"
else
	not_ok "fp,defer: samples of ${threads_defer:-0} zstd threads, want 3 or more"
fi
msg="kernel samples reaching the thread's root: fp,defer $((${share_defer:-0} / 10)).$((${share_defer:-0} % 10))% of ${ksamples_defer:-0}, fp $((${share_fp:-0} / 10)).$((${share_fp:-0} % 10))% of ${ksamples_fp:-0}"
if [ "${ksamples_defer:-0}" -gt 0 ] && [ "${share_defer:-0}" -ge $((${share_fp:-0} - 50)) ]; then
	ok "$msg"
else
	not_ok "$msg (at most 5 points lower)"
fi
echo "1..$n"
