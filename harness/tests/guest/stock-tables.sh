#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: Debian's own xz and python3.11, not rebuilt, profiled with
# --call-graph fp,defer, without and then with SFrame tables that
# tools/unwind/cfi2sframe writes from their objects' .eh_frame (issue 45)
# and gives the kernel by file (cfi2sframe -R: prctl(PR_SFRAME_FILE_ADD)),
# so that every process mapping them is walked with them from its exec
# on, with no help from the process. Counted are the program's samples
# whose user chain reaches its root (__libc_start_call_main, start_thread
# or ld.so's entry): with tables, at least 0.95 of each; without, they
# are printed. The tables are taken back (cfi2sframe -U) at the end, so
# that the streams after this one see the kernel as it boots. C2S, PERF
# and SRC are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
if [ ! -x "${C2S:-}" ] || [ ! -x /usr/bin/xz ] ||
   [ ! -x /usr/bin/python3.11 ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, xz or python3.11 missing"
	exit 0
fi
tables=/tmp/stock-tables

# A program and every object ldd lists for it.
objects() { # program
	echo "$1"
	ldd "$1" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
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
	for mode in without with; do
		out=/tmp/stock-$name-$mode.data
		if [ $mode = with ]; then
			# shellcheck disable=SC2046
			if "$C2S" -R -q -C "$tables" $(objects "$prog") >/tmp/stock-$name.reg 2>&1; then
				ok "$name: the kernel takes the tables of $prog and its objects: $(cat /tmp/stock-$name.reg)"
			else
				not_ok "$name: the kernel takes the tables of $prog and its objects"
				sed 's/^/# /' /tmp/stock-$name.reg
			fi
		fi
		"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer -o "$out" -- \
			"$prog" "$@" >/dev/null 2>/tmp/stock-$name.err
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
check python3.11 0.95 /usr/bin/python3.11 /tmp/stock-io.py
# shellcheck disable=SC2046
"$C2S" -U -q $(objects /usr/bin/xz) $(objects /usr/bin/python3.11) >/dev/null
rm -rf "$tables" /tmp/stock-input /tmp/stock-io.py
echo "1..$n"
