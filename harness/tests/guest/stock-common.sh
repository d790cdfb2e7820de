# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the streams that give or take the stock tables of the whole
# guest: every object under /usr/bin and /usr/lib/x86_64-linux-gnu, its
# SFrame table converted from .eh_frame on the host into build/stock-cache
# (make stock-cache), as README's one command sets up a real machine.
# The guest gives them at boot (stock-boot.sh), so that every stream sees
# stock programs walked exactly; a stream that measures the machine
# without them takes them away (stock_off) and gives them back at its end
# (stock_on). C2S is set by harness/run-tests.
stock_dirs="/usr/bin /usr/lib/x86_64-linux-gnu"
stock_cache=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/build/stock-cache

# The tables are given while this file exists: a stream can leave the
# machine as it found it.
stock_mark=/tmp/stock-tables-given

# Give every table from the cache; cfi2sframe's summary in /tmp/stock-on.out.
stock_on() {
	[ -x "${C2S:-}" ] && [ -d "$stock_cache" ] || return 1
	# shellcheck disable=SC2086
	"$C2S" -R -q -C "$stock_cache" $stock_dirs >/tmp/stock-on.out 2>&1 &&
		touch "$stock_mark"
}

# Take every table of those directories back; the summary in /tmp/stock-off.out.
stock_off() {
	[ -x "${C2S:-}" ] || return 1
	rm -f "$stock_mark"
	# shellcheck disable=SC2086
	"$C2S" -U -q $stock_dirs >/tmp/stock-off.out 2>&1
}

# Are the tables given (by stock_on)?
stock_given() {
	[ -e "$stock_mark" ]
}

# perf script's output on stdin: for each sample in order, 1 if its chain
# reaches a root (__libc_start_call_main, start_thread, ld.so's entry, or
# __libc_start_main, which only the executable's _start calls: a sample
# in it before it calls main, registering the exit handlers, has the
# whole stack), else 0. A sample taken in execve() is left out: until the
# new image returns to user space the program has no stack of its own
# (from the old memory map's release until the new registers are set,
# perf's walk in the interrupt reads the old image's: __GI___execve).
# The debug kernel spends a short run's tenth there: gzip of 1 MiB, 24
# of its 316 samples, which made stock-tables fail at 0.907.
stock_rooted_seq() {
	awk '
		function done() {
			if (frames && !inexec) print root ? 1 : 0
			frames = root = inexec = 0
		}
		/^[^ \t]/ { done(); next }
		/^$/ { done(); next }
		{
			frames++
			if ($2 ~ /^(__libc_start_call_main|__libc_start_main|start_thread|_dl_start_user)/ ||
			    ($2 ~ /^_start/ && $3 ~ /ld-linux/))
				root = 1
			if ($2 ~ /^(__x64_sys_execve|__x64_sys_execveat|__ia32_sys_execve|__ia32_sys_execveat|__ia32_compat_sys_execve|__ia32_compat_sys_execveat)\+/)
				inexec = 1
		}
		END { done() }'
}
