#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perf tool: damaged or unusual PERF_RECORD_CALLCHAIN_DEFERRED records
# (harness/tests/guest/perf-craft.py) read by perf report, perf script,
# perf report -D and perf inject: no crash, no hang, no sanitizer report,
# and records whose size cannot hold what they claim are ignored with a
# warning. Uses the perf built with AddressSanitizer and UBSan
# ($PERF_ASAN, make perf-asan) when there is one. TAP on stdout.
#
#   perf-crafted.sh                 record in this kernel, then read
#   perf-crafted.sh --record FILE   only record, to FILE (in the guest)
#   perf-crafted.sh --from FILE     only read copies of FILE's recording
#
# Reading needs no particular kernel, and the sanitized perf runs many
# times faster natively than in the TCG guest: harness/run-tests records
# in the guest and reads on the host.
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
perf=${PERF:-$here/build/bin/perf}
reader=$perf
[ -x "${PERF_ASAN:-}" ] && reader=$PERF_ASAN
demo=${DEMO:-$here/build/demo/deepstack}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
# perf 6.12's own, on any sample perf inject marks: bsearch() of a thread
# with no maps yet is given a NULL array (of zero elements). Not ours.
known_ubsan="util/maps.c:1040:5: runtime error: null pointer passed as argument 2"

record() {
	"$perf" record -q -o - -e cpu-clock -c 200000 --call-graph fp,defer -- \
		"$demo" 1 >"$1" 2>"$tmp/record.err"
}

# The same with the report event, of the demo interpreter that reports its
# frames (minivm, beside the demo), into FILE.report; none without them.
record_report() {
	local minivm
	minivm=$(dirname "$demo")/minivm
	[ -x "$minivm" ] && [ -d /sys/kernel/tracing/events/unwind_report ] || return 0
	"$perf" record -q -o - -e cpu-clock -c 200000 \
		-e unwind_report:unwind_user_report --call-graph fp,defer -- \
		"$minivm" -s 1 >"$1.report" 2>>"$tmp/record.err" </dev/null ||
		rm -f "$1.report"
}

if [ "${1:-}" = --record ]; then
	record "$2" || { cat "$tmp/record.err" >&2; exit 1; }
	record_report "$2"
	exit 0
fi

echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }

echo "# reader: $reader"
if [ "${1:-}" = --from ]; then
	cp "$2" "$tmp/base.data" 2>"$tmp/record.err" &&
	{ [ ! -f "$2.report" ] || cp "$2.report" "$tmp/base.data.report"; }
else
	record "$tmp/base.data" && record_report "$tmp/base.data"
fi
if [ $? -ne 0 ] ||
   ! "$here/harness/tests/guest/perf-craft.py" "$tmp/base.data" "$tmp/v" \
	$([ -f "$tmp/base.data.report" ] && echo "$tmp/base.data.report") >"$tmp/list"; then
	sed 's/^/# /' "$tmp/record.err"
	not_ok "a pipe-mode recording with deferred records to damage"
	echo "1..$n"
	exit 1
fi
ok "a pipe-mode recording with deferred records to damage"
if [ -f "$tmp/base.data.report" ]; then
	ok "a recording with runtime reports to damage"
else
	not_ok "a recording with runtime reports to damage (minivm and the report event)"
fi

while read -r name valid; do
	f=$tmp/v/$name.data
	for cmd in "report --stdio" "script" "report -D" "inject -o $tmp/out.data"; do
		# shellcheck disable=SC2086
		timeout 120 "$reader" $cmd -i "$f" >"$tmp/out" 2>"$tmp/err" </dev/null
		rc=$?
		what="$name: perf $cmd"
		if [ $rc -eq 124 ]; then
			not_ok "$what: hung"
		elif [ $rc -ge 132 ] && [ $rc -le 139 ]; then
			# SIGILL to SIGSEGV; perf's own errors exit 255, 244, ...
			not_ok "$what: killed by signal $((rc - 128))"
		elif grep -E "AddressSanitizer|runtime error:" "$tmp/err" |
		     grep -q -v -F "$known_ubsan"; then
			grep -E -A12 "AddressSanitizer|runtime error:" "$tmp/err" | head -20 | sed 's/^/# /'
			not_ok "$what: sanitizer report"
		elif [ "$valid" = 0 ] && [ "$cmd" = "report --stdio" ] &&
		     ! grep -q "CALLCHAIN_DEFERRED records were ignored" "$tmp/out" "$tmp/err"; then
			not_ok "$what: no warning that the record was ignored"
		elif [ "$valid" = 2 ] && [ "$cmd" = "report --stdio" ] &&
		     ! grep -q "unwind_user_report of tid .* ignored" "$tmp/out" "$tmp/err"; then
			not_ok "$what: no warning that the report was ignored"
		else
			ok "$what (exit $rc)"
		fi
	done
done <"$tmp/list"
echo "1..$n"
