#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TAP: unwindprof, the BPF profiler built on deferred user stacks
# (tools/bpf/unwindprof), on the demo (a 24-level chain, user and kernel
# time) and on zstd built from Debian's sources (4 worker threads), per
# process and for the whole system, and its in-sample baseline. Every
# sample of the profiled program must be stitched, none lost, and the
# folded stacks must hold the whole chain. UNWINDPROF, DEMO and ZSTD are
# set by harness/run-tests.
echo "TAP version 13"
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

# "unwindprof: S samples, T stitched, L lost, W user walks (D deferred,
# I in the sample; R refused, K of kernel threads, ...)": field by name.
field() { # summary-file word
	sed -n "s/.* \([0-9][0-9]*\) $2[,; )].*/\1/p" "$1" | tail -n 1
}

# Run unwindprof ARGS..., folded stacks to $1.folded, summary to $1.err.
profile() {
	local name=$1
	shift
	if "$UNWINDPROF" -o "/tmp/$name.folded" "$@" >/dev/null 2>"/tmp/$name.err"; then
		ok "unwindprof $name: $(tail -n 1 "/tmp/$name.err")"
	else
		not_ok "unwindprof $name"
		sed 's/^/# /' "/tmp/$name.err"
		return 1
	fi
}

# Samples of COMM in a folded file, and those with the root FRAMES.
count_comm() { # file comm
	awk -v c="$2" 'index($0, c ";") == 1 { s += $NF } END { print s + 0 }' "$1"
}
count_chain() { # file regexp
	awk -v r="$2" '$0 ~ r { s += $NF } END { print s + 0 }' "$1"
}

chain="demo_level_00"
for i in $(seq -w 1 23); do chain="$chain;demo_level_$i"; done

# Every sample got its user stack: stitched by cookie, or walked in the
# sample where the kernel refused the request or had answered its entry
# already; none lost.
all_stacks() { # summary-file
	local s t i l
	s=$(field "$1" samples)
	t=$(field "$1" stitched)
	i=$(field "$1" "in the sample")
	l=$(field "$1" lost)
	[ "${s:-0}" -gt 0 ] && [ $((t + i)) = "$s" ] && [ "$l" = 0 ]
}

if profile demo -F 499 -- "$DEMO" 2; then
	s=$(field /tmp/demo.err samples)
	t=$(field /tmp/demo.err stitched)
	l=$(field /tmp/demo.err lost)
	check "demo: samples taken ($s)" [ "${s:-0}" -gt 50 ]
	check "demo: every sample has its user stack, none lost ($t of $s stitched, $l lost)" \
		all_stacks /tmp/demo.err
	check "demo: most samples stitched by cookie ($t of $s)" [ $((t * 10)) -ge $((s * 9)) ]
	full=$(count_chain /tmp/demo.folded "main;$chain;.*_\\[k\\]")
	check "demo: kernel samples carry the whole 24-level chain from main ($full)" \
		[ "$full" -gt 0 ]
fi

if profile demo-in-sample --in-sample -F 499 -- "$DEMO" 2; then
	s=$(field /tmp/demo-in-sample.err samples)
	i=$(field /tmp/demo-in-sample.err "in the sample")
	full=$(count_chain /tmp/demo-in-sample.folded "main;$chain;.*_\\[k\\]")
	check "demo --in-sample: every sample walked in the sample ($i of $s), kernel samples with the chain ($full)" \
		[ "$i" = "$s" ] && [ "$full" -gt 0 ]
fi

if [ ! -x "${ZSTD:-}" ]; then
	ok "# SKIP zstd was not built (harness/build-zstd)"
else
	in=/tmp/unwindprof-zstd.in
	head -c 12000000 /dev/urandom | base64 >"$in"
	if profile zstd -F 499 -- "$ZSTD" -q -T4 -3 -f "$in" -o /tmp/unwindprof-zstd.zst; then
		check "zstd -T4: every sample has its user stack, none lost ($(tail -n 1 /tmp/zstd.err | cut -d: -f2))" \
			all_stacks /tmp/zstd.err
		w=$(count_chain /tmp/zstd.folded ";POOL_thread;")
		check "zstd -T4: worker threads sampled, their stacks reach POOL_thread ($w)" \
			[ "$w" -gt 0 ]
	fi
	# The whole system and one process by pid, while a slow zstd runs.
	"$ZSTD" -q -T4 -19 -f "$in" -o /tmp/unwindprof-zstd2.zst &
	zpid=$!
	sleep 0.5
	if profile system -F 499 -d 2; then
		# Other tasks sampled in the kernel may still be blocked there
		# at the end; zstd's threads all return to user space.
		z=$(count_comm /tmp/system.folded zstd)
		l=$(count_chain /tmp/system.folded "^zstd;\\[user stack lost\\]")
		w=$(count_chain /tmp/system.folded "^zstd;.*POOL_thread;")
		check "whole system: zstd's samples among them ($z, $w in worker threads), none of them lost ($l)" \
			[ "$z" -gt 0 ] && [ "$w" -gt 0 ] && [ "$l" = 0 ]
	fi
	if profile pid -F 499 -d 2 -p "$zpid"; then
		o=$(awk 'index($0, "zstd;") != 1 { s += $NF } END { print s + 0 }' /tmp/pid.folded)
		w=$(count_chain /tmp/pid.folded "^zstd;.*POOL_thread;")
		check "-p zstd: every sample has its user stack, none lost, threads included ($w), no other process ($o)" \
			all_stacks /tmp/pid.err && [ "$w" -gt 0 ] && [ "$o" = 0 ]
	fi
	kill "$zpid" 2>/dev/null
	wait "$zpid" 2>/dev/null
fi

# Bad input: a clear error and exit status 2 (argp) or 1.
"$UNWINDPROF" -F abc -d 1 >/dev/null 2>/tmp/bad.err
rc=$?
check "-F abc is refused with a message (exit $rc)" \
	[ $rc -ne 0 ] && grep -q "HZ must be a number" /tmp/bad.err
"$UNWINDPROF" -p 999999 -d 1 >/dev/null 2>/tmp/bad.err
rc=$?
check "-p of a process that does not exist is refused (exit $rc)" \
	[ $rc -ne 0 ] && grep -q "no process 999999" /tmp/bad.err
echo "1..$n"
