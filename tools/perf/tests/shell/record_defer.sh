#!/bin/bash
# perf record deferred user callchains (fp,defer)
# SPDX-License-Identifier: GPL-2.0
#
# Samples recorded with --call-graph fp,defer carry their kernel callchain
# and a cookie; the user part arrives in one PERF_RECORD_CALLCHAIN_DEFERRED
# per kernel entry. Samples that interrupted user mode (the leafloop
# workload's) mostly carry their user part themselves, walked in the
# interrupt; those of a system call (dd's reads) are deferred. Check that
# record asks for it, that script and report stitch it back (and keep the
# samples whose record never came), that the records can be shown on their
# own and decoded, that inject and archive keep working, and that kernels
# without support fall back to plain fp.
# Software events only: cpu-clock needs no PMU.

shelldir=$(dirname "$0")
# shellcheck source=lib/perf_has_symbol.sh
. "${shelldir}"/lib/perf_has_symbol.sh
# shellcheck source=lib/perf_defer.sh
. "${shelldir}"/lib/perf_defer.sh

skip_test_missing_symbol leaf

tmpdir=$(mktemp -d /tmp/__perf_test.defer.XXXXX)
data=${tmpdir}/perf.data
# perf record caches build ids in ~/.debug, and perf archive reads them
# there: keep that cache in tmpdir, whatever earlier runs left in HOME.
export HOME=${tmpdir}

trap trap_cleanup EXIT TERM INT

test_record() {
	perf record -q -e cpu-clock -F 2000 --call-graph fp,defer -o "${data}" \
		-- perf test -w leafloop 1 2>"${tmpdir}/record.err" ||
		{ fail "perf record --call-graph fp,defer"; cat "${tmpdir}/record.err"; return; }
	perf evlist -v -i "${data}" >"${tmpdir}/evlist" 2>&1
	if grep -q 'defer_callchain: 1' "${tmpdir}/evlist" &&
	   grep -q 'defer_output: 1' "${tmpdir}/evlist"; then
		pass "the sampling event defers, the tracking event receives the records"
	else
		fail "defer_callchain/defer_output not in the recorded attributes"
		cat "${tmpdir}/evlist"
	fi
}

test_script_stitched() {
	# Every sample of the workload ends in its user chain: leaf, parent.
	perf script -i "${data}" -F ip,sym 2>"${tmpdir}/script.err" >"${tmpdir}/script"
	chains=$(awk 'BEGIN { RS = "" } / leaf(\n|$)/ && / parent(\n|$)/ { n++ }
		END { print n + 0 }' "${tmpdir}/script")
	if [ "${chains}" -gt 0 ]; then
		pass "perf script stitches leaf <- parent to ${chains} samples"
	else
		fail "perf script shows no leaf <- parent chain"
		head -40 "${tmpdir}/script"
	fi

	# Every sample with a cookie is stitched. The others carry their
	# user part inline, as with plain fp: those that interrupted user
	# mode (most of leafloop's; the first of the task, and any whose walk
	# would need a fault, are deferred), and those the unwinder refused
	# (taken in do_exit(), or too late on the way out).
	samples=$(stat_of "${data}" SAMPLE)
	stitched=$(stat_of "${data}" DEFERRED_STITCHED)
	lost=$(stat_of "${data}" DEFERRED_LOST)
	records=$(stat_of "${data}" CALLCHAIN_DEFERRED)
	perf report -i "${data}" -D 2>/dev/null >"${tmpdir}/leaf.dump"
	deferred=$(grep -c '(user part deferred)' "${tmpdir}/leaf.dump")
	if [ "${samples}" -gt 0 ] && [ "${lost}" -eq 0 ] &&
	   [ "${stitched}" -eq "${deferred}" ]; then
		pass "${stitched} of ${samples} samples stitched from ${records} records, none lost"
	else
		fail "samples ${samples}, deferred ${deferred}," \
		     "stitched ${stitched}, lost ${lost}, records ${records}"
	fi
	# Samples of user mode (misc 2): at most a tenth deferred.
	read -r umode udeferred < <(awk '
		/PERF_RECORD_SAMPLE\(/ { u = /\(IP, 0x2\)/; n += u; next }
		/PERF_RECORD_/ { u = 0 }
		u && /\(user part deferred\)/ { d++ }
		END { print n + 0, d + 0 }' "${tmpdir}/leaf.dump")
	if [ "${umode}" -gt 0 ] && [ $((udeferred * 10)) -le "${umode}" ]; then
		pass "${umode} samples of user mode, ${udeferred} of them deferred"
	else
		fail "samples of user mode ${umode}, deferred ${udeferred}: want at most a tenth"
	fi
}

# dd spends long read() system calls in the kernel: its samples are
# deferred, several share one cookie and record.
record_dd() {
	perf record -q -e cpu-clock -F 4000 --call-graph fp,defer -o "${tmpdir}/dd.data" \
		-- dd if=/dev/zero of=/dev/null bs=4M count=64 2>/dev/null
	perf report -i "${tmpdir}/dd.data" -D 2>/dev/null >"${tmpdir}/dd.dump"
}

test_no_merge() {
	perf script -i "${tmpdir}/dd.data" --no-merge-callchains -F comm,tid,ip,sym \
		>"${tmpdir}/dd.nomerge" 2>&1
	if awk '/cookie: 0x/ { c = 1; next } c && /[a-z_]\+0x/ { f = 1 }
		END { exit !f }' "${tmpdir}/dd.nomerge"; then
		pass "--no-merge-callchains shows the records, resolved"
	else
		fail "--no-merge-callchains shows no resolved CALLCHAIN_DEFERRED record"
		head -20 "${tmpdir}/dd.nomerge"
	fi
	perf script -i "${data}" --no-merge-callchains -F comm,tid,ip,sym \
		>"${tmpdir}/nomerge" 2>&1
	# The samples themselves keep their kernel part only: only those
	# that were not deferred at all show parent.
	inline=$(awk 'BEGIN { RS = "" } !/cookie: 0x/ && / parent(\n|$)/ { n++ }
		END { print n + 0 }' "${tmpdir}/nomerge")
	undeferred=$(($(stat_of "${data}" SAMPLE) - $(stat_of "${data}" DEFERRED_STITCHED)))
	if [ "${inline}" -le "${undeferred}" ]; then
		pass "--no-merge-callchains leaves the samples unstitched"
	else
		fail "${inline} samples show parent unmerged, ${undeferred} were not deferred"
	fi
}

test_report() {
	perf report -i "${data}" --stdio --no-children -g graph,0,callee \
		--sort sym 2>/dev/null >"${tmpdir}/report"
	if grep -q '\[\.\] leaf' "${tmpdir}/report" &&
	   grep -q -- '---leaf\|parent' "${tmpdir}/report"; then
		pass "perf report shows leaf with its callers"
	else
		fail "perf report has no leaf callchain"
		head -30 "${tmpdir}/report"
	fi
	if grep -q 'PERF_RECORD_CALLCHAIN_DEFERRED cookie: 0x' "${tmpdir}/dd.dump" &&
	   grep -q '(user part deferred)' "${tmpdir}/dd.dump"; then
		pass "perf report -D decodes the records and the marker"
	else
		fail "perf report -D does not decode CALLCHAIN_DEFERRED"
	fi
}

test_inject_archive() {
	perf inject -i "${data}" -o "${tmpdir}/injected.data" ||
		{ fail "perf inject"; return; }
	perf script -i "${data}" -F ip,sym >"${tmpdir}/a" 2>/dev/null
	perf script -i "${tmpdir}/injected.data" -F ip,sym >"${tmpdir}/b" 2>/dev/null
	if cmp -s "${tmpdir}/a" "${tmpdir}/b"; then
		pass "perf inject keeps samples and records: same stitched script"
	else
		fail "perf script differs after perf inject"
		diff "${tmpdir}/a" "${tmpdir}/b" | head -10
	fi
	if ! command -v bzip2 >/dev/null; then
		echo "skip: perf archive needs bzip2"
		return
	fi
	# archive writes beside the data and reads the build-id cache in
	# ~/.debug, which perf record filled: HOME is tmpdir for both (set
	# at the top). tar may leave an empty archive behind when it fails:
	# the archive must hold the cached objects.
	if perf archive "${data}" >"${tmpdir}/archive.out" 2>&1 &&
	   tar tjf "${data}.tar.bz2" 2>/dev/null | grep -q '^\.build-id/'; then
		pass "perf archive"
	else
		fail "perf archive"
		head -5 "${tmpdir}/archive.out"
	fi
}

test_shared_entry() {
	# Several samples of one read() share its cookie and the one record
	# of that entry.
	cookies=$(grep -c '(cookie)$' "${tmpdir}/dd.dump")
	records=$(grep -c 'PERF_RECORD_CALLCHAIN_DEFERRED cookie' "${tmpdir}/dd.dump")
	lost=$(stat_of "${tmpdir}/dd.data" DEFERRED_LOST)
	if [ "${records}" -gt 0 ] && [ "${cookies}" -gt "${records}" ] &&
	   [ "${lost}" -eq 0 ]; then
		pass "${cookies} deferred samples share ${records} records"
	else
		fail "deferred samples ${cookies}, records ${records}, lost ${lost}"
	fi
}

test_lost() {
	# Stop recording while the task is inside a long read(): the samples
	# of that call never get their record. They must still be shown, with
	# their kernel part, and counted. Reading 1 GiB into a fresh buffer
	# takes seconds in one system call (page faults and zeroing), longer
	# than perf takes to start and record it for a second.
	dd if=/dev/zero of=/dev/null bs=1G count=1 2>/dev/null &
	ddpid=$!
	perf record -q -e cpu-clock -F 4000 --call-graph fp,defer -p "${ddpid}" \
		-o "${tmpdir}/lost.data" -- sleep 1 2>/dev/null
	kill -KILL "${ddpid}"
	wait "${ddpid}" 2>/dev/null
	samples=$(stat_of "${tmpdir}/lost.data" SAMPLE)
	stitched=$(stat_of "${tmpdir}/lost.data" DEFERRED_STITCHED)
	lost=$(stat_of "${tmpdir}/lost.data" DEFERRED_LOST)
	if [ "${lost}" -gt 0 ] && [ $((stitched + lost)) -eq "${samples}" ]; then
		pass "${lost} samples without their record kept and counted (of ${samples})"
	else
		fail "samples ${samples}, stitched ${stitched}, lost ${lost}"
	fi
	if perf script -i "${tmpdir}/lost.data" -F ip,sym 2>&1 >/dev/null |
	   grep -q 'never got it'; then
		pass "perf script warns about them"
	else
		fail "no warning about samples whose record was lost"
	fi
}

test_system_wide() {
	# Per-CPU events: the record reaches the buffer of the CPU the task
	# returned to user space on, whichever CPU took the sample.
	perf record -q -a -e cpu-clock -F 2000 --call-graph fp,defer -o "${tmpdir}/a.data" \
		-- perf test -w leafloop 1 2>/dev/null
	perf script -i "${tmpdir}/a.data" -F comm,ip,sym 2>/dev/null >"${tmpdir}/a.script"
	if awk 'BEGIN { RS = "" } / leaf(\n|$)/ && / parent(\n|$)/ { n++ } END { exit !n }' \
		"${tmpdir}/a.script"; then
		pass "perf record -a stitches the workload's chains"
	else
		fail "perf record -a: no leaf <- parent chain"
	fi
}

test_context_switches() {
	# A context-switches sample is taken with the runqueue lock held: the
	# request must not allocate there (the debug kernel's lockdep and
	# KASAN watch it). Two threads switch at every pipe message.
	perf record -q -e context-switches -c 1 --call-graph fp,defer \
		-o "${tmpdir}/cs.data" -- perf bench sched pipe -T -l 5000 \
		>/dev/null 2>&1 || { fail "perf record -e context-switches"; return; }
	samples=$(stat_of "${tmpdir}/cs.data" SAMPLE)
	stitched=$(stat_of "${tmpdir}/cs.data" DEFERRED_STITCHED)
	lost=$(stat_of "${tmpdir}/cs.data" DEFERRED_LOST)
	if [ "${stitched}" -gt 0 ] && [ "${lost}" -eq 0 ]; then
		pass "context-switches: ${stitched} of ${samples} samples stitched, none lost"
	else
		fail "context-switches: samples ${samples}, stitched ${stitched}, lost ${lost}"
	fi
}

test_config_and_errors() {
	printf '[call-graph]\n\trecord-mode = fp,defer\n' >"${tmpdir}/perfconfig"
	PERF_CONFIG=${tmpdir}/perfconfig perf record -q -e cpu-clock -g \
		-o "${tmpdir}/cfg.data" -- true 2>/dev/null
	if perf evlist -v -i "${tmpdir}/cfg.data" 2>&1 | grep -q 'defer_callchain: 1'; then
		pass "call-graph.record-mode = fp,defer"
	else
		fail "call-graph.record-mode = fp,defer is not used by -g"
	fi
	for mode in dwarf,defer lbr,defer fp,deferred; do
		if perf record -q -e cpu-clock --call-graph "${mode}" -o "${tmpdir}/bad.data" \
			-- true >"${tmpdir}/bad.err" 2>&1; then
			fail "--call-graph ${mode} was accepted"
		elif grep -q -e "defer' works only with frame pointers" \
			-e "Unknown --call-graph fp option" "${tmpdir}/bad.err"; then
			pass "--call-graph ${mode} is refused with a clear message"
		else
			fail "--call-graph ${mode}: unclear error"
			cat "${tmpdir}/bad.err"
		fi
	done
}

test_fallback() {
	# Make perf believe the kernel refuses the bits, as kernels before the
	# feature (EINVAL, reserved bits) or without the unwinder (EOPNOTSUPP)
	# do: it must say so and record in-NMI frame-pointer callchains.
	if ! command -v cc >/dev/null; then
		echo "skip: the fallback test needs a C compiler"
		return
	fi
	cat >"${tmpdir}/nodefer.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

/* perf_event_open() fails when attr's flags word (at byte 40) has bit 38 or 39. */
long syscall(long nr, ...)
{
	long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	unsigned long long flags;
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_perf_event_open) {
		memcpy(&flags, (char *)a[0] + 40, sizeof(flags));
		if (flags & (3ULL << 38)) {
			errno = atoi(getenv("NODEFER_ERRNO") ?: "22");
			return -1;
		}
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
EOF
	if ! cc -shared -fPIC -o "${tmpdir}/nodefer.so" "${tmpdir}/nodefer.c" -ldl; then
		fail "cannot build the test's syscall shim"
		return
	fi
	for errno_val in 22 95; do
		LD_PRELOAD=${tmpdir}/nodefer.so NODEFER_ERRNO=${errno_val} \
			perf record -e cpu-clock -F 2000 --call-graph fp,defer \
			-o "${tmpdir}/fb.data" -- perf test -w leafloop 1 \
			>"${tmpdir}/fb.err" 2>&1
		if ! grep -q 'cannot defer user callchains' "${tmpdir}/fb.err"; then
			fail "errno ${errno_val}: no message about the missing kernel support"
			cat "${tmpdir}/fb.err"
			continue
		fi
		perf evlist -v -i "${tmpdir}/fb.data" >"${tmpdir}/fb.evlist" 2>&1
		perf script -i "${tmpdir}/fb.data" -F ip,sym 2>/dev/null >"${tmpdir}/fb.script"
		if ! grep -q 'defer_' "${tmpdir}/fb.evlist" &&
		   awk 'BEGIN { RS = "" } / leaf(\n|$)/ && / parent(\n|$)/ { n++ }
			END { exit !n }' "${tmpdir}/fb.script"; then
			pass "errno ${errno_val}: in-NMI fp callchains, with a message"
		else
			fail "errno ${errno_val}: the fallback recording is not plain fp"
		fi
	done
}

test_fallback
if ! kernel_can_defer; then
	echo "skip: the kernel cannot defer user callchains"
	cleanup
	exit 2
fi
test_record
test_script_stitched
record_dd
test_no_merge
test_report
test_inject_archive
test_shared_entry
test_lost
test_system_wide
test_context_switches
test_config_and_errors

cleanup
exit ${err}
