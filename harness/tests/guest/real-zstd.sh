#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: a real multithreaded program, zstd built from Debian's source
# package with frame pointers (harness/build-zstd), compresses 22 MB of
# kernel source with 4 worker threads under perf record with two cpu-clock
# events: one with --call-graph fp (the user stack walked in the
# interrupt), one with fp,defer. With deferral no sample may lose its
# user stack, and deferral must not cut chains short: zstd's kernel samples
# are sorted into places (innermost user frame and kernel entry point), and
# in each place the share whose user chain reaches the thread's root
# function (main, or POOL_thread for the worker and I/O threads) must be as
# high with fp,defer as with fp. Comparing the two raw shares would not do:
# they move by several points from run to run with the mix of places each
# event happens to sample. ZSTD, PERF and SRC are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }

if [ ! -x "${ZSTD:-}" ]; then
	echo "1..1"
	echo "ok 1 # SKIP zstd was not built (harness/build-zstd)"
	exit 0
fi
. "$(dirname "$0")/zstd-common.sh"
in=/tmp/zstd-input
out=/tmp/zstd-output.zst
data=/tmp/zstd.data
zstd_input "$in"

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
# POOL_thread. The deferring event is the plain "cpu-clock". A last line,
# "compare N GOT EXPECTED", puts the two events side by side on the same
# footing: the kernel samples are sorted into places (the innermost user
# frame, its file, and the kernel's entry point), and for the N samples of
# fp,defer in places where fp has samples too, GOT of them reach the root
# where fp's per-place shares predict EXPECTED (in thousandths). The raw
# shares differ from run to run with the mix of places each event happens
# to sample; within one place a user stack is as deep whichever way it is
# walked, unless deferral loses frames. "ucompare N GOT EXPECTED" does the
# same for the samples that interrupted user mode, by innermost frame.
"$PERF" script -i "$data" -F event,comm,tid,ip,sym,dso 2>/dev/null | awk '
	function flush() {
		if (comm == "zstd" && nframes) {
			tids[ev, tid] = 1
			if (kernel) {
				k[ev]++; r[ev] += root
				place = leaf SUBSEP entry
				pk[ev, place]++; pr[ev, place] += root
				places[place] = 1
			} else {
				uk[ev, leaf]++; ur[ev, leaf] += root
				uplaces[leaf] = 1
			}
		}
		comm = ""; kernel = root = nframes = 0; leaf = "none"; entry = ""
	}
	/^$/ { flush(); next }
	/^[ \t]+[0-9a-f]+ / {
		if (!nframes++) kernel = /kernel\.kallsyms/
		if (/kernel\.kallsyms/) entry = $2
		else if (leaf == "none") leaf = $2 " " $NF
		if ($2 == "main" || $2 == "POOL_thread") root = 1
		next
	}
	{ flush(); comm = $1; tid = $2; ev = ($3 ~ /call-graph=fp/) ? "fp" : "defer" }
	END {
		flush()
		for (x in tids) { split(x, a, SUBSEP); t[a[1]]++ }
		for (e in k) print e, t[e] + 0, k[e], r[e] + 0
		for (p in places) {
			if (!pk["fp", p] || !pk["defer", p]) continue
			n += pk["defer", p]; got += pr["defer", p]
			want += pk["defer", p] * pr["fp", p] * 1000 / pk["fp", p]
		}
		printf "compare %d %d %d\n", n, got, want
		n = got = want = 0
		for (p in uplaces) {
			if (!uk["fp", p] || !uk["defer", p]) continue
			n += uk["defer", p]; got += ur["defer", p]
			want += uk["defer", p] * ur["fp", p] * 1000 / uk["fp", p]
		}
		printf "ucompare %d %d %d\n", n, got, want
	}' >/tmp/zstd-chains
compare_n=0 compare_got=0 compare_want=0
ucompare_n=0 ucompare_got=0 ucompare_want=0
while read -r ev threads ksamples rooted; do
	if [ "$ev" = compare ]; then
		compare_n=$threads compare_got=$ksamples compare_want=$rooted
		continue
	fi
	if [ "$ev" = ucompare ]; then
		ucompare_n=$threads ucompare_got=$ksamples ucompare_want=$rooted
		continue
	fi
	echo "# $ev: $threads zstd threads sampled, $rooted of $ksamples kernel samples reach their root"
	eval "threads_$ev=$threads ksamples_$ev=$ksamples"
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
# Allowed: 2% of the compared samples (at least 3), for places where fp
# itself reaches the root only sometimes. Checked only when fp,defer's
# compared samples are most (90%) of its kernel samples.
msg="fp,defer: $compare_got of $compare_n kernel samples reach their root, $((compare_want / 1000)) expected from fp's shares in the same places"
slack=$((compare_n * 20 > 3000 ? compare_n * 20 : 3000))
if [ "$compare_n" -gt 0 ] && [ $((compare_n * 10)) -ge $((${ksamples_defer:-0} * 9)) ] &&
	[ $((compare_got * 1000)) -ge $((compare_want - slack)) ]; then
	ok "$msg"
else
	not_ok "$msg (at most 2% fewer; ${ksamples_defer:-0} kernel samples in all)"
fi
# User-mode samples: fp,defer walks them in the interrupt too, with the
# deferred walk's walker; it must reach the root as often as fp does.
msg="fp,defer: $ucompare_got of $ucompare_n user-mode samples reach their root, $((ucompare_want / 1000)) expected from fp's shares in the same places"
slack=$((ucompare_n * 20 > 3000 ? ucompare_n * 20 : 3000))
if [ "$ucompare_n" -gt 0 ] && [ $((ucompare_got * 1000)) -ge $((ucompare_want - slack)) ]; then
	ok "$msg"
else
	not_ok "$msg (at most 2% fewer)"
fi
echo "1..$n"
