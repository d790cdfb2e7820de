#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mainline's perf tool and ours read each other's recordings of deferred
# callchains (Documentation/trace/unwind_deferred.rst, "perf"): each tool
# records the demo with --call-graph fp,defer on this kernel, to a file and
# to a pipe, and each tool reads all four recordings. Both must read every
# one without error and give every sample the same callchain, and ours must
# hold each way a user chain comes (deferred, and inline by the unwinder's
# walk, after one PERF_CONTEXT_USER; perf's own walk after a refusal has
# two) so that mainline's reading of each is checked. TAP on stdout.
#
# Mainline's perf is Debian unstable's linux-perf (harness/mainline-perf
# --setup); without it the stream is skipped. It prints inlined functions
# from DWARF by default and ours does not, so it reads with --no-inline;
# the chains are compared by address.
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
perf=${PERF:-$here/build/bin/perf}
mperf=$here/harness/mainline-perf
demo=${DEMO:-$here/build/demo/deepstack}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
if ! version=$("$mperf" version 2>/dev/null); then
	echo "ok 1 # SKIP mainline perf not bootstrapped (harness/mainline-perf --setup)"
	echo "1..1"
	exit 0
fi
echo "# mainline: $version; ours: $("$perf" version)"

# tool_of NAME: the command of tool NAME (ours or mainline).
tool_of() { [ "$1" = ours ] && echo "$perf" || echo "$mperf"; }

# record TOOL MODE FILE
record() {
	local t out
	t=$(tool_of "$1")
	if [ "$2" = pipe ]; then
		"$t" record -q -o - -e cpu-clock -c 200000 --call-graph fp,defer -- \
			"$demo" 1 >"$3" 2>"$3.err" </dev/null
	else
		"$t" record -q -o "$3" -e cpu-clock -c 200000 --call-graph fp,defer -- \
			"$demo" 1 >"$3.err" 2>&1 </dev/null
	fi
}

# Samples of FILE (as read by our perf report -D) by how their user
# chain came: "deferred walker perf" (a cookie; inline after one
# PERF_CONTEXT_USER, the unwinder's; inline after two, perf's own walk).
kinds() {
	"$perf" report -D -i "$1" 2>/dev/null | awk '
		/PERF_RECORD_SAMPLE/ { flush(); s = 1; users = 0; next }
		/PERF_RECORD_/ { flush(); next }
		s && /^\.\.\.\.\. +[0-9]+: fffffffffffffe00$/ { users++ }
		s && /user part deferred/ { d++; s = 0 }
		function flush() { if (s && users == 1) w++; else if (s && users == 2) p++; s = 0 }
		END { flush(); printf "%d %d %d\n", d, w, p }'
}

for mode in file pipe; do
	for who in mainline ours; do
		f=$tmp/$who-$mode.data
		if record "$who" "$mode" "$f"; then
			ok "$who perf records fp,defer on this kernel ($mode)"
		else
			not_ok "$who perf records fp,defer on this kernel ($mode)"
			sed 's/^/# /' "$f.err" | tail -5
			rm -f "$f"
		fi
	done
done

for f in "$tmp"/*.data; do
	[ -s "$f" ] || continue
	name=$(basename "$f" .data)
	read -r d w p < <(kinds "$f")
	echo "# $name: samples with deferred chains $d, inline by the walk $w, inline by perf's walker $p"
	if [ "${name%%-*}" = ours ]; then
		[ "$d" -gt 0 ] && [ "$w" -gt 0 ] &&
			ok "$name holds deferred chains and the walk's inline chains" ||
			not_ok "$name holds deferred chains and the walk's inline chains ($d, $w)"
	else
		[ "$d" -gt 0 ] &&
			ok "$name holds deferred chains: this kernel took mainline's attr" ||
			not_ok "$name holds deferred chains: this kernel took mainline's attr"
	fi
	for reader in ours mainline; do
		extra=
		[ "$reader" = mainline ] && extra=--no-inline
		out=$tmp/$name.by-$reader
		# Addresses only: ours marks guessed frames beside the symbol
		# ("? name"), and mainline's does not know the mark.
		"$(tool_of $reader)" script $extra -F tid,ip -i "$f" 2>"$out.err" |
			awk '/^\t/ { print "  " $1; next } NF { print "T " $1 }' >"$out"
		rc=${PIPESTATUS[0]}
		if [ $rc -eq 0 ] && [ -s "$out" ]; then
			ok "$reader perf script reads $name"
		else
			not_ok "$reader perf script reads $name (exit $rc)"
			sed 's/^/# /' "$out.err" | tail -5
		fi
		"$(tool_of $reader)" report -D -i "$f" 2>/dev/null |
			grep -c "PERF_RECORD_CALLCHAIN_DEFERRED" >"$out.records"
	done
	samples=$(grep -c '^T' "$tmp/$name.by-ours")
	frames=$(grep -c '^ ' "$tmp/$name.by-ours")
	differ=$(diff "$tmp/$name.by-ours" "$tmp/$name.by-mainline" | grep -c '^[<>]')
	if [ "$differ" -eq 0 ] && [ "$samples" -gt 0 ]; then
		ok "$name: both tools give the same callchain to each of $samples samples ($frames frames)"
	else
		not_ok "$name: both tools give the same callchain to each of $samples samples ($differ lines differ)"
		diff "$tmp/$name.by-ours" "$tmp/$name.by-mainline" | head -8 | sed 's/^/# /'
	fi
	r_ours=$(cat "$tmp/$name.by-ours.records")
	r_main=$(cat "$tmp/$name.by-mainline.records")
	[ "$r_ours" = "$r_main" ] && [ "$r_ours" -gt 0 ] &&
		ok "$name: both tools read its $r_ours deferred records" ||
		not_ok "$name: both tools read its deferred records (ours $r_ours, mainline $r_main)"
done
echo "1..$n"
