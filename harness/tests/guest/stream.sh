# SPDX-License-Identifier: GPL-2.0
#
# Sourced by harness/guest-tests (and by run-tests' host check of it).
#
# stream NAME CMD...: run one test stream, its TAP to $out/NAME.tap and to
# the output, for at most STREAM_LIMIT seconds (900 unless set). A stream
# stopped at its limit ends with a failed result: its TAP has no plan that
# would count the results it did not reach, so without one they would be
# lost without a word; and the recordings it left in /tmp (STREAM_TMP)
# are removed.
stream() {
	local name=$1
	shift
	local start=$SECONDS
	local limit=${STREAM_LIMIT:-900}

	echo "# ---- $name"
	# Where a guest that died was: .ci/run prints it.
	echo "$name" >"$out/last-stream"
	timeout "$limit" "$@" 2>&1 | tee "$out/$name.tap"
	if [ "${PIPESTATUS[0]}" -eq 124 ]; then
		echo "not ok - $name: stopped at its limit of $limit s, the results after the last one did not run" |
			tee -a "$out/$name.tap"
		# The guest's /tmp is memory: the recordings a stopped stream
		# left there would leave the next streams without room.
		rm -f "${STREAM_TMP:-/tmp}"/*.data "${STREAM_TMP:-/tmp}"/*.data.old \
			"${STREAM_TMP:-/tmp}"/*.script
	fi
	# The guest's /tmp is memory too: what each stream leaves there, and
	# what is left, tell a guest that ran out of it from a kernel bug.
	echo "# ---- $name took $((SECONDS - start)) s; /tmp holds" \
		"$(du -sm "${STREAM_TMP:-/tmp}" 2>/dev/null | cut -f1) MiB," \
		"$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null) MiB available"
}
