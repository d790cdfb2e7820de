#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the clients other than perf on stock programs (issue 45 item 4):
# Debian's python3.11, xz and bash, not rebuilt, with the SFrame tables
# cfi2sframe converts from their objects' .eh_frame given to the kernel
# by file (cfi2sframe -R). ftrace records the deferred user stack
# (userstacktrace_delay) of each program's read(), write() and prctl()
# system calls: python3.11 runs a Python function three calls deep that
# reads a file in a loop, then reads its own stack with
# prctl(PR_USER_STACK_READ) through ctypes; xz compresses; bash runs a
# loop. xz and bash read their own stacks in their first read() or write() through
# own_stack.so, an LD_PRELOAD (the programs are not rebuilt). Each program
# runs again under unwindprof (BPF). Stacks are named alike
# (stock_clients.py, with the objects' debug files as perf reads them)
# and are full when they hold a root (__libc_start_call_main,
# start_thread, or ld.so's start-up) with no frame marked, and, for
# python3.11's stacks in its main() (not in ld.so's start-up or the exit
# handlers, which run outside it), Py_BytesMain: each stack
# PR_USER_STACK_READ returned, and
# at least 0.95 of ftrace's and of unwindprof's for each program.
# ftrace's stack of each prctl() must be the one it returned. Without the
# tables, the shares are printed, and unwindprof must mark the frames the
# kernel guessed in xz (guessing on). The tables the guest was given at
# boot (stock-boot.sh) are taken away first and given back at the end
# (stock-common.sh). C2S, UNWINDPROF and PROGS are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
here=$(dirname "$0")
py=/usr/bin/python3.11
own=${PROGS:-}/own_stack.so
T=/sys/kernel/tracing
if [ ! -x "${C2S:-}" ] || [ ! -x "${UNWINDPROF:-}" ] || [ ! -x $py ] ||
   [ ! -x /usr/bin/xz ] || [ ! -e $T/options/userstacktrace_delay ] ||
   [ ! -e "$own" ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, unwindprof, own_stack.so, python3.11, xz or userstacktrace_delay missing"
	exit 0
fi
. "$here/stock-common.sh"
was_given=$(stock_given && echo 1)
stock_off

# The programs, ctypes' module (for the prctl()), the preload, and what
# they load.
objects() {
	local o
	for o in $py /usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-*.so \
		 /usr/bin/xz /usr/bin/bash "$own"; do
		echo "$o"
		ldd "$o" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
	done | sort -u
}

head -c $((1 << 20)) "$py" >/tmp/clients-input
cat >/tmp/clients-sh.sh <<'SH'
f() { local s=$1; echo "${s//a/b}" >/dev/null; }
for ((i = 0; i < ${1:-500}; i++)); do f "abcabc$i"; done
SH

# At least 100 stacks, and at least 0.95 of them full?
most_full() { # n full
	[ "${1:-0}" -ge 100 ] && awk -v s="$1" -v f="$2" 'BEGIN { exit !(f / s >= 0.95) }'
}

# Stacks in a folded file, and the full ones: "N FULL"; the others in
# FILE.notfull.
full() { # file [name...]
	python3 "$here/stock_clients.py" full "$@" 2>"$1.notfull" | awk '{ print $2, $3 }'
}

# The most frequent stacks of FILE.notfull, as comments.
show_notfull() { # file
	awk '{ print $NF, $0 }' "$1.notfull" | sort -n -r | head -3 | cut -d' ' -f2- |
		cut -c1-400 | sed 's/^/# /'
}

# ftrace's stacks of COMM's system calls in one run of a command, to
# /tmp/NAME.ftrace; the command's output to /tmp/NAME.out. The buffer
# must not wrap: a file is named once per buffer, before its first stack.
traced() { # name comm command...
	local name=$1 comm=$2 e
	shift 2
	echo 0 >$T/tracing_on
	echo 16384 >$T/buffer_size_kb
	echo >$T/trace
	for e in read write prctl; do
		echo "comm == \"$comm\"" >$T/events/syscalls/sys_enter_$e/filter
		echo 1 >$T/events/syscalls/sys_enter_$e/enable
	done
	echo 1 >$T/options/userstacktrace_delay
	echo 1 >$T/tracing_on
	"$@" >"/tmp/$name.out" 2>"/tmp/$name.err"
	echo 0 >$T/tracing_on
	echo 0 >$T/options/userstacktrace_delay
	for e in read write prctl; do
		echo 0 >$T/events/syscalls/sys_enter_$e/enable
		echo 0 >$T/events/syscalls/sys_enter_$e/filter
	done
	cp $T/trace "/tmp/$name.trace"
	echo "$size" >$T/buffer_size_kb
	echo 1 >$T/tracing_on
	python3 "$here/stock_clients.py" ftrace "/tmp/$name.trace" "$comm" >"/tmp/$name.ftrace"
}

# A stock program with own_stack.so: its first read() or write() reads its own
# stack into /tmp/NAME.own, named in /tmp/NAME.ownstack.
with_own() { # name command...
	local name=$1
	shift
	rm -f "/tmp/$name.own"
	env LD_PRELOAD="$own" OWN_STACK_OUT="/tmp/$name.own" "$@"
}
name_own() { # name
	python3 "$here/stock_clients.py" own "/tmp/$1.own" >"/tmp/$1.ownstack" 2>"/tmp/$1.ownerr"
}

# Each program traced: python3.11 (its own read in .out), xz, bash.
trace_all() { # suffix
	traced "py-$1" python3.11 $py "$here/stock_io.py" /tmp/clients-input 300 --read-own-stack
	cp "/tmp/py-$1.out" "/tmp/py-$1.ownstack"
	traced "xz-$1" xz with_own "xz-$1" /usr/bin/xz -T2 -6 -c /tmp/clients-input
	name_own "xz-$1"
	traced "bash-$1" bash with_own "bash-$1" /usr/bin/bash /tmp/clients-sh.sh
	name_own "bash-$1"
}

size=$(sed 's/ .*//' $T/buffer_size_kb)
trace_all without
echo "# without tables: ftrace python3.11 $(full /tmp/py-without.ftrace Py_BytesMain), xz $(full /tmp/xz-without.ftrace), bash $(full /tmp/bash-without.ftrace) (stacks, full); PR_USER_STACK_READ full: python3.11 $(full /tmp/py-without.ownstack Py_BytesMain | cut -d' ' -f2), xz $(full /tmp/xz-without.ownstack | cut -d' ' -f2), bash $(full /tmp/bash-without.ownstack | cut -d' ' -f2) of 1"

# unwindprof's stacks of COMM in one run of a command, to /tmp/NAME.bpf;
# its summary to /tmp/NAME.bpferr.
profiled() { # name comm command...
	local name=$1 comm=$2
	shift 2
	"$UNWINDPROF" -F 499 -o "/tmp/$name.folded" -- "$@" >/dev/null 2>"/tmp/$name.bpferr" &&
		python3 "$here/stock_clients.py" folded "/tmp/$name.folded" "$comm" >"/tmp/$name.bpf"
}

# Without tables, with guessing on: xz's walks stop in its first frames
# and the kernel guesses the rest; unwindprof must show the guesses marked.
if profiled xz-guess xz "$here/guess-exec" /usr/bin/xz -T2 -6 -c /tmp/clients-input; then
	read -r s g < <(awk '{ s += $NF } /(^|;)\?/ { g += $NF } END { print s + 0, g + 0 }' /tmp/xz-guess.bpf)
	if [ "$s" -gt 0 ] && [ "$g" -gt 0 ]; then
		ok "unwindprof marks guessed frames: $g of $s samples of xz without tables carry frames marked '?'"
	else
		not_ok "unwindprof marks guessed frames: ${g:-0} of ${s:-0} samples of xz without tables carry frames marked '?'"
		sort -k2 -n -r /tmp/xz-guess.bpf | head -3 | cut -c1-400 | sed 's/^/# /'
	fi
else
	not_ok "unwindprof ran xz with guessing on"
	sed 's/^/# /' /tmp/xz-guess.bpferr | head
fi

# shellcheck disable=SC2046
if "$C2S" -R -q -C /tmp/clients-tables $(objects) >/tmp/clients.reg 2>&1; then
	ok "the kernel takes the tables of python3.11, xz, bash, own_stack.so and their objects: $(cat /tmp/clients.reg)"
else
	not_ok "the kernel takes the tables of python3.11, xz, bash, own_stack.so and their objects"
	sed 's/^/# /' /tmp/clients.reg
fi

trace_all with
# Each program's own read: full, and what ftrace recorded for its prctl().
check_own() { # program what [name...]
	local p=$1 what=$2 s f
	shift 2
	read -r s f < <(full "/tmp/$p-with.ownstack" "$@")
	if [ "$s" = 1 ] && [ "$f" = 1 ]; then
		ok "PR_USER_STACK_READ, $p ($what), reads the full stack: $(cut -d' ' -f1 "/tmp/$p-with.ownstack" | tr ';' ' ')"
	else
		not_ok "PR_USER_STACK_READ, $p ($what), reads the full stack"
		sed 's/^/# /' "/tmp/$p-with.ownstack" "/tmp/$p-with.ownerr" "/tmp/$p-with.err" 2>/dev/null | head -60
	fi
	if [ -s "/tmp/$p-with.ownstack" ] &&
	   grep -qxF "$(cat "/tmp/$p-with.ownstack")" "/tmp/$p-with.ftrace"; then
		ok "ftrace recorded for $p's prctl() the stack it returned"
	else
		not_ok "ftrace recorded for $p's prctl() the stack it returned"
	fi
}
check_own py "from Python, three calls deep" Py_BytesMain
check_own xz "in its first read() or write(), by LD_PRELOAD"
check_own bash "in its first read() or write(), by LD_PRELOAD"

# At least 0.95 of a client's stacks of PROGRAM full (with NAMEs).
check_full() { # client file program [name...]
	local c=$1 file=$2 p=$3 s f
	shift 3
	read -r s f < <(full "$file" "$@")
	if most_full "$s" "$f"; then
		ok "$c, $p: $f of $s stacks full"
	else
		not_ok "$c, $p: ${f:-0} of ${s:-0} stacks full (at least 0.95)"
		show_notfull "$file"
	fi
}
check_full "ftrace userstacktrace_delay (read, write, prctl)" /tmp/py-with.ftrace python3.11 Py_BytesMain
check_full "ftrace userstacktrace_delay (read, write, prctl)" /tmp/xz-with.ftrace xz
check_full "ftrace userstacktrace_delay (read, write, prctl)" /tmp/bash-with.ftrace bash

# unwindprof on each program; its summary line in the result.
check_bpf() { # name comm [name...] -- command...
	local name=$1 comm=$2 need=()
	shift 2
	while [ "$1" != -- ]; do need+=("$1"); shift; done
	shift
	if profiled "$name" "$comm" "$@"; then
		check_full "unwindprof ($(tail -n 1 "/tmp/$name.bpferr"))" "/tmp/$name.bpf" "$comm" "${need[@]}"
	else
		not_ok "unwindprof ran $comm"
		sed 's/^/# /' "/tmp/$name.bpferr" | head
	fi
}
check_bpf py-bpf python3.11 Py_BytesMain -- $py "$here/stock_io.py" /tmp/clients-input 3000
check_bpf xz-bpf xz -- /usr/bin/xz -T2 -6 -c /tmp/clients-input
check_bpf bash-bpf bash -- /usr/bin/bash /tmp/clients-sh.sh 3000

# shellcheck disable=SC2046
"$C2S" -U -q $(objects) >/dev/null
rm -rf /tmp/clients-tables /tmp/clients-input /tmp/clients-sh.sh
[ -z "$was_given" ] || stock_on
echo "1..$n"
