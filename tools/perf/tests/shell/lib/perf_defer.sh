#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Helpers of the tests of deferred user callchains (record_defer*.sh). The
# test sets tmpdir before sourcing this; fail() records the failure in err.

err=0

cleanup() {
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}

fail() {
	echo "FAIL: $*"
	err=1
}

pass() {
	echo "ok: $*"
}

# Number of "<name> events:" in perf report --stats of DATA.
stat_of() { # data name
	perf report -i "$1" --stats 2>/dev/null |
		awk -v n="$2" '$1 == n && $2 == "events:" { print $3; f = 1; exit }
			END { if (!f) print 0 }'
}

# The kernel knows the bits: perf does not fall back to plain fp.
kernel_can_defer() {
	perf record -e cpu-clock --call-graph fp,defer -o "${tmpdir}/probe.data" \
		-- true 2>"${tmpdir}/probe.err"
	! grep -q 'cannot defer user callchains' "${tmpdir}/probe.err"
}
