#!/bin/bash
# perf record deferred user callchains of threads (fp,defer)
# SPDX-License-Identifier: GPL-2.0
#
# Every way perf record opens its events must bring every deferred sample
# of every thread its record: per-CPU buffers with inherited events (the
# default), --per-thread, -p of a running process whose threads come and
# go, -t, -a, -C, --no-inherit, and a process that forks a child with
# threads of its own. The workload (perf test -w deferthreads) exits by
# itself before recording stops, so no system call is left in flight and
# nothing may be lost.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_defer.sh
. "${shelldir}"/lib/perf_defer.sh

tmpdir=$(mktemp -d /tmp/__perf_test.defer_threads.XXXXX)

trap trap_cleanup EXIT TERM INT

# "TIDS KSAMPLES ROOTED": the workload's threads whose kernel samples
# reach their root function, the workload's kernel samples, and how many
# of them reach it. The workload's processes are those with a sample in a
# defer_* function.
chains_of() {
	perf script -i "$1" -F pid,tid,ip,sym,dso 2>/dev/null >"$1.script"
	awk '
		function flush() {
			if (pid != "") {
				n++; kern[n] = kernel; rooted[n] = root
				spid[n] = pid; stid[n] = tid
				if (root || mine) wpid[pid] = 1
			}
			pid = ""; mine = kernel = root = 0; first = 1
		}
		/^$/ { flush(); next }
		/^ *[0-9]+\/[0-9]+ *$/ {
			flush(); split($1, a, "/"); pid = a[1]; tid = a[2]; next
		}
		{
			if (first) { kernel = /kernel\.kallsyms/; first = 0 }
			if (/ defer_work/) mine = 1
			if (/ defer_thread_root/ || / defer_main_root/) root = 1
		}
		END {
			flush()
			for (i = 1; i <= n; i++)
				if (spid[i] in wpid)
					print stid[i] > "/dev/stderr"
			for (i = 1; i <= n; i++) {
				if (!(spid[i] in wpid) || !kern[i])
					continue
				k++
				if (rooted[i]) { r++; tids[stid[i]] = 1 }
			}
			t = 0; for (x in tids) t++
			print t, k + 0, r + 0
		}' "$1.script" 2>"$1.tids"
}

# check NAME DATA MIN_TIDS [all]: nothing lost, records present, and at
# least MIN_TIDS threads with kernel samples stitched up to their root.
# With "all" (-a, -C), only the workload's losses count: other tasks may
# be inside a system call when recording stops, and miss that record.
check() {
	local name=$1 data=$2 min_tids=$3 scope=${4:-}
	local samples stitched lost records tids ksamples rooted got

	samples=$(stat_of "${data}" SAMPLE)
	stitched=$(stat_of "${data}" DEFERRED_STITCHED)
	lost=$(stat_of "${data}" DEFERRED_LOST)
	records=$(stat_of "${data}" CALLCHAIN_DEFERRED)
	read -r tids ksamples rooted <<<"$(chains_of "${data}")"
	if [ "${scope}" = all ]; then
		lost=$(perf script -i "${data}" -v -F tid,ip,sym 2>&1 >/dev/null |
			awk 'NR == FNR { w[$1] = 1; next }
			     /never came/ { t = $5; sub(",", "", t); n += (t in w) }
			     END { print n + 0 }' "${data}.tids" -)
	fi
	got="${stitched} of ${samples} samples stitched from ${records} records"
	got="${got}, ${lost} lost; ${rooted} of ${ksamples} kernel samples"
	got="${got} of ${tids} threads (want ${min_tids}) reach their root"
	if [ "${lost}" -eq 0 ] && [ "${stitched}" -gt 0 ] && [ "${records}" -gt 0 ] &&
	   [ "${tids}" -ge "${min_tids}" ]; then
		pass "${name}: ${got}"
	else
		fail "${name}: ${got}"
		perf script -i "${data}" -v -F tid,ip,sym 2>&1 >/dev/null |
			grep 'never came' | head -5
	fi
}

# "STITCHED LOST" of DATA as perf report -D counts them, with OPTS.
dump_counts() { # data opts...
	local data=$1

	shift
	perf report -D -i "${data}" "$@" 2>/dev/null |
		awk '$2 == "events:" && $1 == "DEFERRED_STITCHED" { s = $3 }
		     $2 == "events:" && $1 == "DEFERRED_LOST" { l = $3 }
		     END { print s + 0, l + 0 }'
}

# unordered NAME DATA: processed out of time order (perf report -D
# --disable-order), where a thread's sample may come after records of its
# later entries, the samples stitched and lost are those of the ordered
# run.
unordered() {
	local name=$1 data=$2 s0 l0 s1 l1

	read -r s0 l0 <<<"$(dump_counts "${data}")"
	read -r s1 l1 <<<"$(dump_counts "${data}" --disable-order)"
	if [ "${s0}" -gt 0 ] && [ "${s1}" -eq "${s0}" ] && [ "${l1}" -eq "${l0}" ]; then
		pass "${name}, out of order: ${s1} stitched, ${l1} lost, as in order"
	else
		fail "${name}, out of order: ${s1} stitched, ${l1} lost;" \
		     "in order ${s0} and ${l0}"
	fi
}

record() {
	local data=$1
	shift
	perf record -q -e cpu-clock -F 1000 --call-graph fp,defer -o "${data}" "$@" \
		2>"${data}.err" >/dev/null ||
		{ fail "perf record $*"; head -5 "${data}.err"; return 1; }
}

workload=(perf test -w deferthreads)

# -p and -t: the workload runs alone, driven by signals (it starts its
# second batch of threads on SIGUSR2 and ends on SIGUSR1); perf starts
# with its events disabled and enables them through its control fifo, so
# that the threads are known to come and go while perf records, however
# long perf takes to start. Recording ends when the targets exit. Enabling
# is where perf used to lose records: it must enable the events that
# receive them before the sampling events.
record_attached() { # data target-option target
	local data=$1 ctl=${tmpdir}/ctl ack=${tmpdir}/ack pid reply=

	shift
	"${workload[@]}" 4 120 signal &
	wpid=$!
	# The main thread and the first batch of two threads.
	for _ in $(seq 100); do
		[ "$(ls "/proc/${wpid}/task" 2>/dev/null | wc -l)" -ge 3 ] && break
		sleep 0.1
	done
	[ "$1" = "-t" ] && set -- -t "$(ls "/proc/${wpid}/task" | grep -v "^${wpid}\$" | head -1)"
	[ "$1" = "-p" ] && set -- -p "${wpid}"
	rm -f "${ctl}" "${ack}"
	mkfifo "${ctl}" "${ack}"
	perf record -q -D -1 --control "fifo:${ctl},${ack}" -e cpu-clock -F 1000 \
		--call-graph fp,defer -o "${data}" "$@" 2>"${data}.err" >/dev/null &
	pid=$!
	exec 8<>"${ctl}" 9<>"${ack}"
	echo enable >&8
	read -r -t 60 reply <&9
	[ "${reply}" = "ack" ] || fail "perf record $*: no ack of 'enable' (${reply})"
	sleep 1
	kill -USR2 "${wpid}"
	sleep 1
	kill -USR1 "${wpid}"
	wait "${wpid}"
	wait "${pid}" || { fail "perf record $*"; head -5 "${data}.err"; }
	exec 8>&- 9>&-
}

test_modes() {
	record "${tmpdir}/inherit.data" -- "${workload[@]}" 4 2 &&
		check "per-CPU, inherited (default)" "${tmpdir}/inherit.data" 5

	record "${tmpdir}/perthread.data" --per-thread -- "${workload[@]}" 4 2 &&
		check "--per-thread" "${tmpdir}/perthread.data" 1

	record "${tmpdir}/noinherit.data" --no-inherit -- "${workload[@]}" 4 2 &&
		check "--no-inherit" "${tmpdir}/noinherit.data" 1

	record "${tmpdir}/fork.data" -- "${workload[@]}" 4 2 fork &&
		check "a child process with threads" "${tmpdir}/fork.data" 10
	unordered "per-CPU, inherited" "${tmpdir}/inherit.data"
	unordered "a child process with threads" "${tmpdir}/fork.data"

	record_attached "${tmpdir}/pid.data" -p
	check "-p of a running process" "${tmpdir}/pid.data" 5

	record_attached "${tmpdir}/tid.data" -t
	check "-t of one thread" "${tmpdir}/tid.data" 1

	record "${tmpdir}/all.data" -a -- "${workload[@]}" 4 2 &&
		check "-a" "${tmpdir}/all.data" 5 all

	# -C: a task that returns to user space on a CPU that is not recorded
	# loses its record (documented), so keep the workload on CPU 0.
	if command -v taskset >/dev/null; then
		record "${tmpdir}/cpu.data" -C 0 -- taskset -c 0 "${workload[@]}" 4 2 &&
			check "-C 0, workload on CPU 0" "${tmpdir}/cpu.data" 5 all
	else
		echo "skip: -C needs taskset"
	fi
}

if ! kernel_can_defer; then
	echo "skip: the kernel cannot defer user callchains"
	cleanup
	exit 2
fi
test_modes

cleanup
exit ${err}
