#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: objects a machine was not set up for get their tables as walks
# meet them (issue 45): with the stock tables taken away, `cfi2sframe -W`
# runs as a daemon; Debian's xz, not rebuilt, is profiled with
# --call-graph fp,defer while the daemon, told by the kernel of each
# object xz's walks meet without a table (unwind_sframe_missing), gives
# their tables. The kernel must trace xz and its libraries, the daemon
# give their tables, and the samples of the same xz after the tables
# came must reach their root (at least 0.95 of the last half: the
# process takes a table given after it mapped the file); a second xz,
# started after, must be walked whole from its start (at least 0.95).
# The daemon ends on SIGTERM with its summary. The tables it gave are
# taken back and the guest's own given back (stock-common.sh). C2S and
# PERF are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
here=$(dirname "$0")
if [ ! -x "${C2S:-}" ] || [ ! -x "${PERF:-}" ] || [ ! -x /usr/bin/xz ] ||
   [ ! -e /sys/kernel/tracing/events/unwind_sframe/unwind_sframe_missing ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, perf, xz or the unwind_sframe_missing event missing"
	exit 0
fi
. "$here/stock-common.sh"
was_given=$(stock_given && echo 1)
stock_off

find "$SRC/kernel" "$SRC/mm" -name '*.c' | sort | xargs cat 2>/dev/null |
	head -c $((8 << 20)) >/tmp/watch-input
rm -rf /tmp/watch-cache

"$C2S" -W -v -C /tmp/watch-cache >/tmp/watch.out 2>/tmp/watch.err &
daemon=$!
for _ in $(seq 50); do
	grep -q "^cfi2sframe: watching" /tmp/watch.err && break
	sleep 0.2
done
if grep -q "^cfi2sframe: watching" /tmp/watch.err; then
	ok "cfi2sframe -W watches for objects walks meet without a table"
else
	not_ok "cfi2sframe -W watches for objects walks meet without a table"
	sed 's/^/# /' /tmp/watch.err
fi

# Per sample of COMM in time order: 1 if its chain reaches the root.
rooted_seq() { # perf.data comm
	"$PERF" script -i "$1" --comm "$2" 2>/dev/null | stock_rooted_seq
}
# "samples rooted" over the last half of a sequence of 0s and 1s, and all of it.
share() { # file
	awk '{ v[NR] = $1 } END {
		h = int(NR / 2); for (i = h + 1; i <= NR; i++) { s++; r += v[i] }
		for (i = 1; i <= NR; i++) a += v[i]
		printf "%d %d %d %d\n", s, r, NR, a }' "$1"
}

"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o /tmp/watch-1.data \
	-- /usr/bin/xz -T2 -6 -c /tmp/watch-input >/dev/null 2>/tmp/watch-1.err
rooted_seq /tmp/watch-1.data xz >/tmp/watch-1.seq
read -r s r all all_r < <(share /tmp/watch-1.seq)
given=$(grep -c ": table given" /tmp/watch.err)
if [ "$given" -ge 3 ] && grep -q "liblzma" /tmp/watch.err; then
	ok "the daemon gave $given tables as xz's walks met its objects: $(sed -n "s/^cfi2sframe: \(.*\): table given.*/\1/p" /tmp/watch.err | tr '\n' ' ')"
else
	not_ok "the daemon gave tables to xz's objects ($given given)"
	sed 's/^/# /' /tmp/watch.err | tail -20
fi
if [ "${s:-0}" -ge 50 ] && awk -v s="$s" -v r="$r" 'BEGIN { exit !(r / s >= 0.95) }'; then
	ok "the same xz, after the tables came: $r of the last $s samples reach the root ($all_r of $all in all)"
else
	not_ok "the same xz, after the tables came: ${r:-0} of the last ${s:-0} samples reach the root (at least 0.95; $all_r of $all in all)"
fi

"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o /tmp/watch-2.data \
	-- /usr/bin/xz -T2 -6 -c /tmp/watch-input >/dev/null 2>/tmp/watch-2.err
rooted_seq /tmp/watch-2.data xz >/tmp/watch-2.seq
read -r _ _ all all_r < <(share /tmp/watch-2.seq)
if [ "${all:-0}" -ge 100 ] && awk -v s="$all" -v r="$all_r" 'BEGIN { exit !(r / s >= 0.95) }'; then
	ok "a second xz: $all_r of $all samples reach the root"
else
	not_ok "a second xz: ${all_r:-0} of ${all:-0} samples reach the root (at least 0.95)"
fi

kill -TERM "$daemon"
for _ in $(seq 50); do
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.2
done
if ! kill -0 "$daemon" 2>/dev/null && wait "$daemon" &&
   grep -q "^cfi2sframe: [0-9]* tables given" /tmp/watch.out &&
   [ ! -d "/sys/kernel/tracing/instances/cfi2sframe-$daemon" ]; then
	ok "the daemon ends on SIGTERM and removes its tracefs instance: $(cat /tmp/watch.out)"
else
	not_ok "the daemon ends on SIGTERM and removes its tracefs instance"
	kill -KILL "$daemon" 2>/dev/null
	sed 's/^/# /' /tmp/watch.out
fi

# The tables it gave, back.
sed -n "s/^cfi2sframe: \(.*\): table given.*/\1/p" /tmp/watch.err |
	xargs -r "$C2S" -U -q >/dev/null 2>&1
rm -rf /tmp/watch-cache /tmp/watch-input /tmp/watch-[12].*
[ -z "$was_given" ] || stock_on
echo "1..$n"
