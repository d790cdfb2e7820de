#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: zstd from Debian's source package built without frame pointers and
# without SFrame tables (zstd-nofp, from harness/build-zstd), the way most
# of a distribution is built, compresses the same 22 MB as real-zstd.sh
# with 4 worker threads under perf record --call-graph fp,defer, once as
# it is and once asking for guessed frames (PR_SET_USER_STACK_GUESS, set
# by a launcher and kept across exec). The frame-pointer build is recorded
# too: its chains are the truth. guess-exec is the launcher. guess_quality.py compares the chains by
# function name, place by place, and prints recall and precision. ZSTD
# (the frame-pointer build), PERF and SRC are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
check() { if eval "$1"; then ok "$2"; else not_ok "$2"; fi; }

nofp=${ZSTD:-}-nofp
if [ ! -x "${ZSTD:-}" ] || [ ! -x "$nofp" ]; then
	echo "1..1"
	echo "ok 1 # SKIP zstd-nofp was not built (harness/build-zstd)"
	exit 0
fi
here=$(dirname "$0")
. "$here/zstd-common.sh"
in=/tmp/zstd-input
zstd_input "$in"

# record NAME [LAUNCHER] PROGRAM: zstd -T4 under perf record fp,defer.
record() {
	local name=$1
	shift
	rm -f "/tmp/$name.data"
	if "$PERF" record -q -F 4000 --call-graph fp,defer -e cpu-clock \
		-o "/tmp/$name.data" -- "$@" -q -T4 -3 -f "$in" -o "/tmp/$name.zst" \
		2>"/tmp/$name.err" &&
	   "$ZSTD" -q -d -c "/tmp/$name.zst" | cmp -s - "$in"; then
		ok "$name: perf record --call-graph fp,defer of zstd -T4, output decompresses"
	else
		not_ok "$name: perf record --call-graph fp,defer of zstd -T4, output decompresses"
		sed 's/^/# /' "/tmp/$name.err"
	fi
	"$PERF" script -i "/tmp/$name.data" -F comm,tid,ip,sym,dso \
		>"/tmp/$name.script" 2>/dev/null
}
record fp "$ZSTD"
record nofp "$nofp"
record guess "$here/guess-exec" "$nofp"

lost=$(stat_of /tmp/guess.data DEFERRED_LOST)
stitched=$(stat_of /tmp/guess.data DEFERRED_STITCHED)
check '[ "$lost" -eq 0 ] && [ "$stitched" -gt 0 ]' \
	"guess: $stitched samples stitched, $lost lost"

# perf script marks guessed frames "ADDRESS ? SYMBOL". Without guessing,
# only frames after one read from the C library's or ld.so's code by a
# convention are marked: the frame before a chain's first mark is theirs.
marked=$(grep -cE '^[[:space:]]+[0-9a-f]+ \? ' /tmp/guess.script)
read -r unmarked_chains other_marks < <(python3 - /tmp/nofp.script <<'PY'
import sys
chains = marks = other = 0
prev = None
first = True
for line in open(sys.argv[1], errors="replace"):
    if not line.strip():
        prev, first = None, True
        continue
    if not line[0].isspace():
        continue
    f = line.split(None, 1)
    if len(f) < 2:
        continue
    if f[1].startswith("? "):
        if first:
            chains += 1
            if not prev or not ("libc.so" in prev or "ld-linux" in prev):
                other += 1
        first = False
    prev = f[1]
print(chains, other)
PY
)
check '[ "$marked" -gt 0 ] && [ "$other_marks" -eq 0 ]' \
	"perf script marks $marked guessed frames; without guessing, $unmarked_chains chains marked, $other_marks not after a frame read from the C library's code"

read -r _ s0 _ r0 _ p0 < <(python3 "$here/guess_quality.py" /tmp/fp.script /tmp/nofp.script)
read -r _ s1 _ r1 _ p1 < <(python3 "$here/guess_quality.py" /tmp/fp.script /tmp/guess.script)
echo "# zstd-nofp, walked only: samples $s0 recall $r0 precision $p0"
echo "# zstd-nofp, guessed frames: samples $s1 recall $r1 precision $p1"
# Guessing must recover frames the walk cannot reach.
check 'awk -v a="$r0" -v b="$r1" -v n="$s1" "BEGIN { exit !(n > 0 && b > a + 0.1) }"' \
	"guess: recall $r1 with guessed frames, $r0 without"
echo "1..$n"
