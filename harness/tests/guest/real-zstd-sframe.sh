#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: zstd from Debian's source package built the way distributions build
# it, without frame pointers, and with SFrame tables (zstd-sframe, from
# harness/build-zstd), compresses the same 22 MB as real-zstd.sh with 4
# worker threads under perf record --call-graph fp,defer, and so does the
# frame-pointer build. The deferred walk must follow the tables as far as
# the frame pointers go: samples of both builds are sorted into places (the
# innermost user function and its object, and the kernel entry point of
# kernel samples), and for the SFrame build's samples in places where the
# frame-pointer build has samples too, as many must reach the thread's
# root (main, or POOL_thread) as the frame-pointer build's per-place
# shares predict. Where the C library, which has neither, is the innermost
# frame, both builds lose alike. perf's in-interrupt walk (-g) of the
# SFrame build is recorded too, for contrast: it follows frame pointers
# only. ZSTD (the frame-pointer build), PERF and SRC are set by
# harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
check() { if eval "$1"; then ok "$2"; else not_ok "$2"; fi; }

sf=${ZSTD:-}-sframe
if [ ! -x "${ZSTD:-}" ] || [ ! -x "$sf" ]; then
	echo "1..1"
	echo "ok 1 # SKIP zstd-sframe was not built (harness/build-zstd)"
	exit 0
fi
. "$(dirname "$0")/zstd-common.sh"
in=/tmp/zstd-input
zstd_input "$in"

check 'readelf -lW "$sf" | grep -q GNU_SFRAME' "zstd-sframe has an SFrame table"

# record NAME PROGRAM CALLGRAPH: zstd -T4 under perf record.
record() {
	rm -f "/tmp/$1.data"
	if "$PERF" record -q -F 4000 --call-graph "$3" -e cpu-clock -o "/tmp/$1.data" -- \
		"$2" -q -T4 -3 -f "$in" -o "/tmp/$1.zst" 2>"/tmp/$1.err" &&
	   "$2" -q -d -c "/tmp/$1.zst" | cmp -s - "$in"; then
		ok "$1: perf record --call-graph $3 of zstd -T4, output decompresses"
	else
		not_ok "$1: perf record --call-graph $3 of zstd -T4, output decompresses"
		sed 's/^/# /' "/tmp/$1.err"
	fi
}
record sframe "$sf" fp,defer
record fp "$ZSTD" fp,defer
record sframe-nmi "$sf" fp

lost=$(stat_of /tmp/sframe.data DEFERRED_LOST)
stitched=$(stat_of /tmp/sframe.data DEFERRED_STITCHED)
check '[ "$lost" -eq 0 ] && [ "$stitched" -gt 0 ]' \
	"sframe: $stitched samples stitched, $lost lost"

# "SAMPLES ROOTED" of one recording, then per place "P PLACE SAMPLES
# ROOTED", PLACE being "function@(object)|kernel entry" ("user" for user
# samples). Objects are named without the build's suffix, so places match.
places() {
	"$PERF" script -i "$1" -F comm,tid,ip,sym,dso 2>/dev/null | awk '
		function flush() {
			if (comm ~ /^zstd/ && nframes) {
				s++; r += root
				place = leaf "|" entry
				ps[place]++; pr[place] += root
			}
			comm = ""; root = nframes = 0; leaf = "none"; entry = "user"
		}
		/^$/ { flush(); next }
		/^[ \t]+[0-9a-f]+ / {
			nframes++
			if (/kernel\.kallsyms/) { entry = $2; next }
			if (leaf == "none") {
				dso = $NF; sub(/-sframe\)$/, ")", dso)
				leaf = $2 "@" dso
			}
			if ($2 == "main" || $2 == "POOL_thread") root = 1
			next
		}
		{ flush(); comm = $1 }
		END {
			flush()
			print s + 0, r + 0
			for (p in ps) print "P", p, ps[p], pr[p]
		}'
}
places /tmp/sframe.data >/tmp/zstd-sframe.places
places /tmp/fp.data >/tmp/zstd-fp.places
places /tmp/sframe-nmi.data >/tmp/zstd-nmi.places
read -r s_all s_root </tmp/zstd-sframe.places
read -r f_all f_root </tmp/zstd-fp.places
read -r i_all i_root </tmp/zstd-nmi.places
echo "# sframe, fp,defer: $s_root of $s_all zstd samples reach their root"
echo "# fp build, fp,defer: $f_root of $f_all"
echo "# sframe, -g (in-interrupt, frame pointers only): $i_root of $i_all"

# For the SFrame build's samples in places the frame-pointer build sampled
# too: how many reach the root, and how many its shares predict (x1000).
read -r cmp_n cmp_got cmp_want < <(awk '
	FNR == 1 { next }
	NR == FNR { fs[$2] = $3; fr[$2] = $4; next }
	{
		if (!($2 in fs)) next
		n += $3; got += $4; want += $3 * fr[$2] * 1000 / fs[$2]
	}
	END { printf "%d %d %d\n", n, got, want }' /tmp/zstd-fp.places /tmp/zstd-sframe.places)
msg="sframe: $cmp_got of $cmp_n samples reach their root, $((cmp_want / 1000)) expected from the frame-pointer build's shares in the same places"
# 2% slack (at least 3 samples); compared places must hold 90% of samples.
slack=$((cmp_n * 20 > 3000 ? cmp_n * 20 : 3000))
check '[ "$cmp_n" -gt 0 ] && [ $((cmp_n * 10)) -ge $((s_all * 9)) ] &&
       [ $((cmp_got * 1000)) -ge $((cmp_want - slack)) ]' "$msg"
# Without the tables the same binary's chains stop at once.
check '[ "$s_root" -gt $((i_root * 2)) ]' \
	"sframe: the deferred walk reaches the root more than twice as often as -g ($s_root vs $i_root)"
echo "1..$n"
