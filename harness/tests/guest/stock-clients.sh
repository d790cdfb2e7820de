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
# loop. python3.11 runs again under unwindprof (BPF). Stacks are named
# alike (stock_clients.py, with the objects' debug files as perf reads
# them) and are full when they hold a root (__libc_start_call_main,
# start_thread, or ld.so's start-up) with no frame marked, and Python's
# Py_BytesMain: the one PR_USER_STACK_READ returned, and at least 0.95 of
# ftrace's for each program; unwindprof names no local function of the
# C library, so its stacks are full from python3.11's _start and
# __libc_start_main (at least 0.95, the rest printed). ftrace's stack of
# the prctl() must be the one it returned. Without the tables, the shares are printed. C2S and
# UNWINDPROF are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
here=$(dirname "$0")
py=/usr/bin/python3.11
T=/sys/kernel/tracing
if [ ! -x "${C2S:-}" ] || [ ! -x "${UNWINDPROF:-}" ] || [ ! -x $py ] ||
   [ ! -x /usr/bin/xz ] || [ ! -e $T/options/userstacktrace_delay ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, unwindprof, python3.11, xz or userstacktrace_delay missing"
	exit 0
fi

# The programs, ctypes' module (for the prctl()), and what they load.
objects() {
	local o
	for o in $py /usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-*.so \
		 /usr/bin/xz /usr/bin/bash; do
		echo "$o"
		ldd "$o" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
	done | sort -u
}

head -c $((1 << 20)) "$py" >/tmp/clients-input
cat >/tmp/clients-sh.sh <<'SH'
f() { local s=$1; echo "${s//a/b}" >/dev/null; }
for ((i = 0; i < 500; i++)); do f "abcabc$i"; done
SH

# At least 100 stacks, and at least 0.95 of them full?
most_full() { # n full
	[ "${1:-0}" -ge 100 ] && awk -v s="$1" -v f="$2" 'BEGIN { exit !(f / s >= 0.95) }'
}

# Stacks in a folded file, and the full ones: "N FULL".
full() { # file [name...]
	python3 "$here/stock_clients.py" full "$@" | awk '{ print $2, $3 }'
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

# Each program traced: python3.11 (its own read in .out), xz, bash.
trace_all() { # suffix
	traced "py-$1" python3.11 $py "$here/stock_io.py" /tmp/clients-input 300 --read-own-stack
	traced "xz-$1" xz /usr/bin/xz -T2 -6 -c /tmp/clients-input
	traced "bash-$1" bash /usr/bin/bash /tmp/clients-sh.sh
}

size=$(sed 's/ .*//' $T/buffer_size_kb)
trace_all without
echo "# without tables: ftrace python3.11 $(full /tmp/py-without.ftrace Py_BytesMain), xz $(full /tmp/xz-without.ftrace), bash $(full /tmp/bash-without.ftrace) (stacks, full); PR_USER_STACK_READ $(full /tmp/py-without.out Py_BytesMain | cut -d' ' -f2) of 1"

# shellcheck disable=SC2046
if "$C2S" -R -q -C /tmp/clients-tables $(objects) >/tmp/clients.reg 2>&1; then
	ok "the kernel takes the tables of python3.11, xz, bash and their objects: $(cat /tmp/clients.reg)"
else
	not_ok "the kernel takes the tables of python3.11, xz, bash and their objects"
	sed 's/^/# /' /tmp/clients.reg
fi

trace_all with
read -r s f < <(full /tmp/py-with.out Py_BytesMain)
if [ "$s" = 1 ] && [ "$f" = 1 ]; then
	ok "PR_USER_STACK_READ from Python, three calls deep, reads the full stack: $(cut -d' ' -f1 /tmp/py-with.out | tr ';' ' ')"
else
	not_ok "PR_USER_STACK_READ from Python reads the full stack"
	sed 's/^/# /' /tmp/py-with.out /tmp/py-with.err | head -60
fi
# At least 0.95 of PROGRAM's stacks in ftrace full (with NAMEs).
check_ftrace() { # program [name...]
	local p=$1 s f
	shift
	read -r s f < <(full "/tmp/$p-with.ftrace" "$@")
	if most_full "$s" "$f"; then
		ok "ftrace userstacktrace_delay, $p: $f of $s stacks of read(), write() and prctl() full"
	else
		not_ok "ftrace userstacktrace_delay, $p: ${f:-0} of ${s:-0} stacks full (at least 0.95)"
		sort -k2 -n -r "/tmp/$p-with.ftrace" | head -3 | sed 's/^/# /'
	fi
}
check_ftrace py Py_BytesMain
check_ftrace xz
check_ftrace bash
# The prctl()'s own entry: ftrace's deferred stack of it is what it read.
if grep -qxF "$(cat /tmp/py-with.out)" /tmp/py-with.ftrace; then
	ok "ftrace recorded for the prctl() the stack it returned"
else
	not_ok "ftrace recorded for the prctl() the stack it returned"
fi

if "$UNWINDPROF" -F 499 -o /tmp/clients.folded -- $py "$here/stock_io.py" /tmp/clients-input 3000 \
	>/dev/null 2>/tmp/clients.err; then
	python3 "$here/stock_clients.py" folded /tmp/clients.folded python3.11 >/tmp/py-with.bpf
	# unwindprof names no local function of the C library: the root is
	# python3.11's _start, then __libc_start_main, or ld.so's entry.
	read -r s f < <(python3 "$here/stock_clients.py" full-entry /tmp/py-with.bpf \
		_start __libc_start_main 2>/tmp/py-with.notfull | awk '{ print $2, $3 }')
	if most_full "$s" "$f"; then
		ok "unwindprof: $f of $s samples' stacks full ($(tail -n 1 /tmp/clients.err))"
	else
		not_ok "unwindprof: ${f:-0} of ${s:-0} samples' stacks full (at least 0.95)"
	fi
	awk '{ print $NF, $0 }' /tmp/py-with.notfull | sort -n -r | head -3 | cut -d' ' -f2- | cut -c1-400 | sed 's/^/# /'
else
	not_ok "unwindprof ran"
	sed 's/^/# /' /tmp/clients.err | head
fi

# shellcheck disable=SC2046
"$C2S" -U -q $(objects) >/dev/null
rm -rf /tmp/clients-tables /tmp/clients-input /tmp/clients-sh.sh
echo "1..$n"
