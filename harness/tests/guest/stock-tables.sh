#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: Debian's own xz, python3.11 and bash, not rebuilt, profiled with
# --call-graph fp,defer, without and then with SFrame tables that
# tools/unwind/cfi2sframe writes from their objects' .eh_frame (issue 45)
# and gives the kernel by file (cfi2sframe -R: prctl(PR_SFRAME_FILE_ADD)),
# so that every process mapping them is walked with them from its exec
# on, with no help from the process. Counted are the program's samples
# whose user chain reaches its root (__libc_start_call_main,
# __libc_start_main, start_thread or ld.so's entry; a sample in execve()
# is not the program's, stock-common.sh): with tables, at least 0.95 of
# each; without, they are printed. Against --call-graph dwarf (perf's own unwinding of the
# same .eh_frame, copying 16 KiB of stack per sample): a recording with
# both events, where no unmarked return address of fp,defer's chains may
# follow anything but a call instruction (read in the object's file:
# syscall_roots.py --all) and, through dwarf_also.so, the dwarf event's
# samples carry the kernel's chain too, which must be dwarf's on every
# frame both have, sample by sample (same_sample.py); and a recording
# with dwarf alone, whose bytes per sample must be at least 20 times the
# fp,defer recording's. The tables the guest was given at boot
# (stock-boot.sh) are taken away first and given back at the end
# (stock-common.sh). C2S, PERF, PROGS and SRC are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
if [ ! -x "${C2S:-}" ] || [ ! -f "${PROGS:-}/dwarf_also.so" ] || [ ! -x /usr/bin/xz ] ||
   [ ! -x /usr/bin/python3.11 ] || [ ! -x /usr/bin/bash ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, dwarf_also.so, xz, python3.11 or bash missing"
	exit 0
fi
here=$(dirname "$0")
. "$here/stock-common.sh"
was_given=$(stock_given && echo 1)
stock_off
tables=/tmp/stock-tables
roots=__libc_start_call_main,start_thread,_dl_start_user,_dl_start

# A program and every object ldd lists for it.
objects() { # program
	echo "$1"
	ldd "$1" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
}

# COMM's samples in a recording, and those that reach their root: "N R".
rooted() { # perf.data comm
	"$PERF" script -i "$1" --comm "$2" 2>/dev/null | stock_rooted_seq |
		awk '{ n++; r += $1 } END { printf "%d %d\n", n, r }'
}

# The checks are shares and ratios, which thousands of samples decide as
# well as tens of thousands: every workload does half the work it once
# did (the stream took 733 s of the guest lane's 34 minutes with the
# whole, and xz alone gave 40,000 samples), and an eighth in the debug
# lane, whose kernel runs the same work four to five times slower (the
# dwarf recordings most: 16 KiB copied per sample under KASAN) and in
# which the whole did not end within the lane's 1800 s.
div=2
[ "${CONFIG:-guest}" = debug ] && div=8
find "$SRC/kernel" "$SRC/mm" -name '*.c' | sort | xargs cat 2>/dev/null |
	head -c $(((8 << 20) / div)) >/tmp/stock-input
# A shell doing its own work: arithmetic, strings and a function call.
cat >/tmp/stock-sh.sh <<EOF
f() { local s=\$1; echo "\${s//a/b}" >/dev/null; }
x=0
for ((i = 0; i < $((30000 / div)); i++)); do x=\$(((x + i * 7) % 1000003)); f "abcabc\$i"; done
EOF

check() { # name min program args...
	local name=$1 min=$2 prog=$3 out s r without with bytes
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
		[ $mode = with ] && read -r _ bytes < <(per_sample "$out")
		rm -f "$out"
	done
	read -r s r <<<"$with"
	if [ "${s:-0}" -gt 100 ] && awk -v s="$s" -v r="$r" -v m="$min" 'BEGIN { exit !(r / s >= m) }'; then
		ok "$name: with tables from .eh_frame, $r of $s samples reach the root (at least $min; without: ${without#* } of ${without% *})"
	else
		sed 's/^/# /' /tmp/stock-$name.err | head -5
		not_ok "$name: with tables from .eh_frame, ${r:-0} of ${s:-0} samples reach the root (at least $min)"
	fi
	against_dwarf "$name" "${bytes:-0}" "$prog" "$@"
}

# Samples and bytes per sample of a recording (its samples' and records' bytes).
per_sample() { # perf.data
	"$PERF" report -D -i "$1" 2>/dev/null | python3 "$here/sample_bytes.py" |
		awk '{ if ($1) printf "%d %d\n", $1, ($2 + $3) / $1; else print "0 0" }'
}

# The tables given, against perf's dwarf unwinding of the same program.
against_dwarf() { # name fp,defer-bytes-per-sample program args...
	local name=$1 both=/tmp/stock-$1-both.data alone=/tmp/stock-$1-dwarf.data
	local ev cnt rt exact nc d_bytes f_bytes=$2 f_n=0 c_n=0
	local s_n s_p s_a s_d s_u s_f
	shift 2
	LD_PRELOAD=$PROGS/dwarf_also.so "$PERF" record -q -F 250 --call-graph fp,defer \
		-e cpu-clock/call-graph=dwarf,stack-size=16384/ -e cpu-clock \
		-o "$both" -- "$@" >/dev/null 2>/tmp/stock-$name.err
	"$PERF" record -q -F 250 -e cpu-clock/call-graph=dwarf/ -o "$alone" -- "$@" \
		>/dev/null 2>/tmp/stock-$name.err
	read -r cnt d_bytes < <(per_sample "$alone")
	echo "# $name dwarf alone: $cnt samples, $d_bytes bytes per sample"
	"$PERF" script --no-inline -i "$both" -F event,comm,tid,ip,sym,symoff,dso,dsoff \
		>/tmp/stock-$name-both.txt 2>/dev/null
	# The same samples, unwound by both: the kernel's chain and dwarf's.
	read -r _ s_n _ s_p _ s_a _ s_d _ s_u _ s_f < <(python3 "$here/same_sample.py" \
		/tmp/stock-$name-both.txt "${1##*/}" 2>/tmp/stock-$name.differ)
	sed "s/^/# $name: /" /tmp/stock-$name.differ | head -60
	if [ "${s_p:-0}" -gt 100 ] && [ $((s_p * 10)) -ge $((s_n * 9)) ] && [ "$s_d" = 0 ]; then
		ok "$name: in $s_p of $s_n samples unwound by both, the kernel's chain is dwarf's on every frame both have ($s_f frames; $s_u samples differ where dwarf had no table and guessed)"
	else
		not_ok "$name: in ${s_p:-?} of ${s_n:-?} samples unwound by both, ${s_d:-?} differ from dwarf where it had a table (${s_u:-?} where it had none)"
	fi
	# The fp,defer event's samples, and the edges of dwarf's alone.
	while read -r ev _ cnt _ rt _ _ _ _ _ _ _ exact _ _ _ nc; do
		echo "# $name $ev: $rt of $cnt samples reach the root, $exact with no frame marked${nc:+; $nc with an unmarked return address after no call}"
		[ "$ev" = defer ] && f_n=$cnt c_n=${nc:-?}
	done < <({ awk 'BEGIN { RS = ""; ORS = "\n\n" } !/call-graph=dwarf/' /tmp/stock-$name-both.txt
		  "$PERF" script -i "$alone" -F event,comm,tid,ip,sym,symoff,dso,dsoff 2>/dev/null
		} | python3 "$here/syscall_roots.py" --all /dev/stdin "${1##*/}" "$roots" \
		2>/tmp/stock-$name.misses)
	# Caller edges compare by address within one process: dwarf's alone
	# ran in another, so only where fp,defer stops short is printed.
	grep -v "unseen caller" /tmp/stock-$name.misses | sed "s/^/# $name: /"
	rm -f "$both" "$alone" /tmp/stock-$name-both.txt
	if [ "$f_n" -gt 100 ] && [ "$c_n" = 0 ]; then
		ok "$name: fp,defer with tables: every unmarked return address of $f_n samples follows a call"
	else
		not_ok "$name: fp,defer with tables: $c_n of $f_n samples have an unmarked return address that follows no call"
	fi
	if [ "${f_bytes:-0}" -gt 0 ] && [ $((f_bytes * 20)) -le "${d_bytes:-0}" ]; then
		ok "$name: fp,defer writes $f_bytes bytes per sample, dwarf $d_bytes (at most 1/20)"
	else
		not_ok "$name: fp,defer writes ${f_bytes:-?} bytes per sample, dwarf ${d_bytes:-?} (at most 1/20)"
	fi
}

# The whole machine, as README sets one up: every object under /usr/bin
# and /usr/lib/x86_64-linux-gnu given from the cache the host filled
# (make stock-cache: cfi2sframe -R -n), then two programs no case above
# named, which must reach their root; then all taken back.
machine() {
	local cache=$stock_cache s r dirs=$stock_dirs
	local given cached nid failed bytes start
	if [ ! -d "$cache" ]; then
		ok "the whole machine # SKIP no cache (make stock-cache)"
		return
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$C2S" -R -q -C "$cache" $dirs >/tmp/stock-machine.reg 2>&1
	read -r given cached nid failed bytes < <(sed -n \
		's/.* \([0-9]*\) tables given (\([0-9]*\) from the cache),.* \([0-9]*\) without a build ID, \([0-9]*\) failed; \([0-9]*\) bytes.*/\1 \2 \3 \4 \5/p' \
		/tmp/stock-machine.reg)
	if [ "${given:-0}" -gt 500 ] && [ "$failed" = 0 ] &&
	   [ "$bytes" -lt $((512 << 20)) ]; then
		ok "the whole machine: $given tables given in $(($(date +%s) - start)) s, $cached of them from the host's cache, $((bytes >> 20)) MiB of kernel memory; $nid objects without a build ID"
	else
		not_ok "the whole machine: tables given"
		sed 's/^/# /' /tmp/stock-machine.reg | tail -5
	fi
	for prog in "/usr/bin/gzip -6 -c /tmp/stock-input" \
		    "/usr/bin/perl -e \$s=0;for(1..3000000){\$s+=\$_*7%13}"; do
		# shellcheck disable=SC2086
		"$PERF" record -q -e cpu-clock -F 1000 --call-graph fp,defer \
			-o /tmp/stock-machine.data -- $prog >/dev/null 2>&1
		set -- $prog
		read -r s r < <(rooted /tmp/stock-machine.data "${1##*/}")
		rm -f /tmp/stock-machine.data
		if [ "${s:-0}" -gt 100 ] && awk -v s="$s" -v r="$r" 'BEGIN { exit !(r / s >= 0.95) }'; then
			ok "the whole machine: ${1##*/}, named by no case, $r of $s samples reach the root"
		else
			not_ok "the whole machine: ${1##*/}, $r of $s samples reach the root (at least 0.95)"
		fi
	done
	# Files linked under two names were given twice (the second add
	# replaced the first) and are taken back once; a second pass finds
	# nothing left.
	# shellcheck disable=SC2086
	"$C2S" -U -q $dirs >/tmp/stock-machine.unreg 2>&1
	# shellcheck disable=SC2086
	"$C2S" -U -q $dirs >>/tmp/stock-machine.unreg 2>&1
	if [ "$(grep -c " taken back, 0 failed$" /tmp/stock-machine.unreg)" = 2 ] &&
	   grep -q "^cfi2sframe: 0 tables taken back" /tmp/stock-machine.unreg; then
		ok "the whole machine: all taken back ($(head -n 1 /tmp/stock-machine.unreg | cut -d' ' -f2) files), none left"
	else
		not_ok "the whole machine: all taken back"
		sed 's/^/# /' /tmp/stock-machine.unreg
	fi
}

check xz 0.95 /usr/bin/xz -T2 -6 -c /tmp/stock-input
check python3.11 0.95 /usr/bin/python3.11 "$here/stock_io.py" /tmp/stock-input $((10000 / div))
check bash 0.95 /usr/bin/bash /tmp/stock-sh.sh
# shellcheck disable=SC2046
"$C2S" -U -q $(objects /usr/bin/xz) $(objects /usr/bin/python3.11) \
	$(objects /usr/bin/bash) >/dev/null
machine
rm -rf "$tables" /tmp/stock-input /tmp/stock-sh.sh
[ -z "$was_given" ] || stock_on
echo "1..$n"
