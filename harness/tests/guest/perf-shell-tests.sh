#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP from the perf shell tests of the series (tools/perf/tests/shell/),
# run by `perf test` of the built perf from the prepared tree, so that perf
# finds its shell tests and workloads. Each check a test prints as "ok: ...",
# "FAIL: ..." or "skip: ..." becomes one TAP result, and perf test's verdict
# on the whole test one more. PERF is set by harness/run-tests.
here=$(cd "$(dirname "$0")/../../.." && pwd)
tests=("perf record deferred user callchains (fp,defer)"
	"perf record deferred user callchains of threads (fp,defer)")
# perf finds its helper scripts (perf archive) through PERF_EXEC_PATH;
# make perf installs them beside the binary.
PATH=$(dirname "$PERF"):$PATH
PERF_EXEC_PATH=$(dirname "$PERF")
export PATH PERF_EXEC_PATH
cd "$here/build/linux/tools/perf" || exit 1

echo "TAP version 13"
n=0
for t in "${tests[@]}"; do
	log=/tmp/perf-test.log
	timeout 600 perf test -vv "$t" >"$log" 2>&1
	while IFS= read -r line; do
		case "$line" in
		ok:*) n=$((n + 1)); echo "ok $n ${line#ok: }" ;;
		FAIL:*) n=$((n + 1)); echo "not ok $n ${line#FAIL: }" ;;
		skip:*) n=$((n + 1)); echo "ok $n # SKIP ${line#skip: }" ;;
		*) echo "# $line" ;;
		esac
	done <"$log"
	n=$((n + 1))
	verdict=$(grep -F -- "$t" "$log" | grep -E ': (Ok|FAILED!|Skip)' | tail -1)
	case "$verdict" in
	*": Ok") echo "ok $n perf test: $t" ;;
	*": Skip"*) echo "ok $n # SKIP perf test: $t" ;;
	*) echo "not ok $n perf test: $t (${verdict:-no verdict})" ;;
	esac
done
echo "1..$n"
