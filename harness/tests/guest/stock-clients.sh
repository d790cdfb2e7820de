#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: the clients other than perf on a stock program (issue 45 item 4):
# Debian's python3.11, not rebuilt, with the SFrame tables cfi2sframe
# converts from its objects' .eh_frame given to the kernel by file
# (cfi2sframe -R). The same program runs a Python function three calls
# deep that reads a file in a loop, then reads its own stack with
# prctl(PR_USER_STACK_READ) through ctypes, while ftrace records the
# deferred user stack (userstacktrace_delay) of its read() and prctl()
# system calls; then it runs again under unwindprof (BPF). Each client's
# stacks are named alike (stock_clients.py) and must be full, from
# python3.11's _start through __libc_start_main and Py_BytesMain with no
# frame marked: all of PR_USER_STACK_READ's, and at least 0.95 of
# ftrace's and of unwindprof's. The stack ftrace records for the prctl()
# must be the one the prctl() returned. Without the tables, the share is
# printed. C2S and UNWINDPROF are set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
here=$(dirname "$0")
py=/usr/bin/python3.11
T=/sys/kernel/tracing
if [ ! -x "${C2S:-}" ] || [ ! -x "${UNWINDPROF:-}" ] || [ ! -x $py ] ||
   [ ! -e $T/options/userstacktrace_delay ]; then
	echo "1..1"
	echo "ok 1 # SKIP cfi2sframe, unwindprof, python3.11 or userstacktrace_delay missing"
	exit 0
fi

# The program, ctypes' module (for the prctl()), and what they load.
objects() {
	local o
	for o in $py /usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-*.so; do
		echo "$o"
		ldd "$o" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
	done | sort -u
}

head -c $((1 << 20)) "$py" >/tmp/clients-input

# At least 100 stacks, and at least 0.95 of them full?
most_full() { # n full
	[ "${1:-0}" -ge 100 ] && awk -v s="$1" -v f="$2" 'BEGIN { exit !(f / s >= 0.95) }'
}

# Share of full stacks in a folded file: "N FULL".
full() { python3 "$here/stock_clients.py" full "$1" | awk '{ print $2, $3 }'; }

# ftrace's stacks of one run of the program; its own read to $1.read.
traced() { # name
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 'comm == "python3.11"' >$T/events/syscalls/sys_enter_read/filter
	echo 'comm == "python3.11"' >$T/events/syscalls/sys_enter_prctl/filter
	echo 1 >$T/events/syscalls/sys_enter_read/enable
	echo 1 >$T/events/syscalls/sys_enter_prctl/enable
	echo 1 >$T/options/userstacktrace_delay
	echo 1 >$T/tracing_on
	$py "$here/stock_io.py" /tmp/clients-input 300 --read-own-stack \
		>"/tmp/$1.read" 2>"/tmp/$1.read-raw"
	echo 0 >$T/tracing_on
	echo 0 >$T/options/userstacktrace_delay
	echo 0 >$T/events/syscalls/sys_enter_read/enable
	echo 0 >$T/events/syscalls/sys_enter_prctl/enable
	echo 0 >$T/events/syscalls/sys_enter_read/filter
	echo 0 >$T/events/syscalls/sys_enter_prctl/filter
	cp $T/trace "/tmp/$1.trace"
	echo 1 >$T/tracing_on
	python3 "$here/stock_clients.py" ftrace "/tmp/$1.trace" python3.11 >"/tmp/$1.ftrace"
}

traced without
read -r s f < <(full /tmp/without.ftrace)
echo "# without tables: ftrace $f of $s stacks full; PR_USER_STACK_READ $(full /tmp/without.read | cut -d' ' -f2) of 1"

# shellcheck disable=SC2046
if "$C2S" -R -q -C /tmp/clients-tables $(objects) >/tmp/clients.reg 2>&1; then
	ok "the kernel takes the tables of $py and its objects: $(cat /tmp/clients.reg)"
else
	not_ok "the kernel takes the tables of $py and its objects"
	sed 's/^/# /' /tmp/clients.reg
fi

traced with
read -r s f < <(full /tmp/with.read)
if [ "$s" = 1 ] && [ "$f" = 1 ]; then
	ok "PR_USER_STACK_READ from Python, three calls deep, reads the full stack: $(cut -d' ' -f1 /tmp/with.read | tr ';' ' ')"
else
	not_ok "PR_USER_STACK_READ from Python reads the full stack"
	sed 's/^/# /' /tmp/with.read /tmp/with.read-raw | head -60
fi
read -r s f < <(full /tmp/with.ftrace)
if most_full "$s" "$f"; then
	ok "ftrace userstacktrace_delay: $f of $s stacks of read() and prctl() full"
else
	not_ok "ftrace userstacktrace_delay: ${f:-0} of ${s:-0} stacks of read() and prctl() full (at least 0.95)"
	sort -k2 -n -r /tmp/with.ftrace | head -5 | sed 's/^/# /'
fi
# The prctl()'s own entry: ftrace's deferred stack of it is what it read.
if grep -qxF "$(cat /tmp/with.read)" /tmp/with.ftrace; then
	ok "ftrace recorded for the prctl() the stack it returned"
else
	not_ok "ftrace recorded for the prctl() the stack it returned"
fi

if "$UNWINDPROF" -F 499 -o /tmp/clients.folded -- $py "$here/stock_io.py" /tmp/clients-input 3000 \
	>/dev/null 2>/tmp/clients.err; then
	python3 "$here/stock_clients.py" folded /tmp/clients.folded python3.11 >/tmp/with.bpf
	read -r s f < <(full /tmp/with.bpf)
	if most_full "$s" "$f"; then
		ok "unwindprof: $f of $s samples' stacks full ($(tail -n 1 /tmp/clients.err))"
	else
		not_ok "unwindprof: ${f:-0} of ${s:-0} samples' stacks full (at least 0.95)"
		sort -k2 -n -r /tmp/with.bpf | head -5 | sed 's/^/# /'
	fi
else
	not_ok "unwindprof ran"
	sed 's/^/# /' /tmp/clients.err | head
fi

# shellcheck disable=SC2046
"$C2S" -U -q $(objects) >/dev/null
rm -rf /tmp/clients-tables /tmp/clients-input
echo "1..$n"
