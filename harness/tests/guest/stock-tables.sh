#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: Debian's own xz and python3.11, not rebuilt, profiled with
# --call-graph fp,defer, without and then with SFrame tables that
# tools/unwind/cfi2sframe writes from their objects' .eh_frame (issue 45).
# The kernel does not take tables by file yet: sframe_preload.so hands
# each program's tables over with PR_SFRAME_ADD when it starts, so
# samples taken before that (exec, ld.so's loading) have none. Counted
# are the program's samples whose user chain reaches its root
# (__libc_start_call_main, start_thread or ld.so's entry): with tables,
# at least 0.95 of xz's and 0.90 of python's (0.999 and 0.92 to 0.95 measured);
# without, they are printed. C2S, PRELOAD, PERF and SRC are set by
# harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
if [ ! -x "${C2S:-}" ] || [ ! -f "${PRELOAD:-}" ] || [ ! -x /usr/bin/xz ] ||
   [ ! -x /usr/bin/python3.11 ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, sframe_preload.so, xz or python3.11 missing"
	exit 0
fi
here=$(dirname "$0")
tables=/tmp/stock-tables
mkdir -p "$tables"

# Tables for a program and every object ldd lists for it, by build ID.
convert() { # program
	local obj id
	for obj in "$1" $(ldd "$1" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'); do
		id=$("$C2S" -B "$obj") || return 1
		[ -f "$tables/$id.sframe" ] && continue
		"$C2S" -q -o "$tables/$id.sframe" "$obj" || return 1
	done
}

# The ratio of COMM's samples in a recording that reach their root.
rooted() { # perf.data comm
	"$PERF" script -i "$1" --comm "$2" 2>/dev/null | awk '
		function done() {
			if (!frames) return
			samples++
			if (root) rooted++
			frames = root = 0
		}
		/^[^ \t]/ { done(); next }
		/^$/ { done(); next }
		{
			frames++
			if ($2 ~ /^(__libc_start_call_main|start_thread|_dl_start_user)/ ||
			    ($2 ~ /^_start/ && $3 ~ /ld-linux/))
				root = 1
		}
		END { done(); printf "%d %d\n", samples, rooted }'
}

find "$SRC/kernel" "$SRC/mm" -name '*.c' | sort | xargs cat 2>/dev/null |
	head -c $((8 << 20)) >/tmp/stock-input
cat >/tmp/stock-io.py <<'EOF'
def a(n):
    return b(n)
def b(n):
    return c(n)
def c(n):
    s = 0
    for i in range(n):
        with open('/tmp/stock-input', 'rb') as f:
            s += len(f.read(65536))
    return s
a(10000)
EOF

check() { # name min program args...
	local name=$1 min=$2 prog=$3 out s r without with
	shift 3
	if ! convert "$prog"; then
		not_ok "$name: cfi2sframe converts $prog and the objects it links"
		return
	fi
	for mode in without with; do
		out=/tmp/stock-$name-$mode.data
		if [ $mode = with ]; then
			"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o "$out" -- \
				env LD_PRELOAD="$PRELOAD" SFRAME_TABLES="$tables" "$prog" "$@" \
				>/dev/null 2>/tmp/stock-$name.err
		else
			"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o "$out" -- \
				"$prog" "$@" >/dev/null 2>/tmp/stock-$name.err
		fi
		read -r s r < <(rooted "$out" "${prog##*/}")
		echo "# $name $mode tables: samples=$s rooted=$r bytes=$(stat -c %s "$out")"
		eval "$mode=\"$s $r\""
		rm -f "$out"
	done
	read -r s r <<<"$with"
	if [ "${s:-0}" -gt 100 ] && awk -v s="$s" -v r="$r" -v m="$min" 'BEGIN { exit !(r / s >= m) }'; then
		ok "$name: with tables from .eh_frame, $r of $s samples reach the root (at least $min; without: ${without#* } of ${without% *})"
	else
		sed 's/^/# /' /tmp/stock-$name.err | head -5
		not_ok "$name: with tables from .eh_frame, ${r:-0} of ${s:-0} samples reach the root (at least $min)"
	fi
}

check xz 0.95 /usr/bin/xz -T2 -6 -c /tmp/stock-input
check python3.11 0.90 /usr/bin/python3.11 /tmp/stock-io.py
rm -rf "$tables" /tmp/stock-input /tmp/stock-io.py
echo "1..$n"
