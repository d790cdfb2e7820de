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

if profile demo -F 499 -- "$DEMO" 2; then
	s=$(field /tmp/demo.err samples)
	t=$(field /tmp/demo.err stitched)
	l=$(field /tmp/demo.err lost)
	r=$(field /tmp/demo.err refused)
	check "demo: samples taken ($s)" [ "${s:-0}" -gt 50 ]
	check "demo: every sample stitched ($t of $s), none lost ($l), none refused ($r)" \
		[ "$t" = "$s" ] && [ "$l" = 0 ] && [ "$r" = 0 ]
	full=$(count_chain /tmp/demo.folded "main;$chain;demo_leaf;demo_kernel_work;.*_\\[k\\]")
	check "demo: kernel samples carry the whole 24-level chain from main ($full)" \
		[ "$full" -gt 0 ]
fi

if profile demo-in-sample --in-sample -F 499 -- "$DEMO" 2; then
	s=$(field /tmp/demo-in-sample.err samples)
	i=$(field /tmp/demo-in-sample.err "in the sample")
	full=$(count_chain /tmp/demo-in-sample.folded "main;$chain;demo_leaf")
	check "demo --in-sample: every sample walked in the sample ($i of $s), the chain found ($full)" \
		[ "$i" = "$s" ] && [ "$full" -gt 0 ]
fi

if [ ! -x "${ZSTD:-}" ]; then
	ok "# SKIP zstd was not built (harness/build-zstd)"
else
	in=/tmp/unwindprof-zstd.in
	head -c 12000000 /dev/urandom | base64 >"$in"
	if profile zstd -F 499 -- "$ZSTD" -q -T4 -3 -f "$in" -o /tmp/unwindprof-zstd.zst; then
		s=$(field /tmp/zstd.err samples)
		t=$(field /tmp/zstd.err stitched)
		l=$(field /tmp/zstd.err lost)
		check "zstd -T4: every sample stitched ($t of $s), none lost ($l)" \
			[ "$t" = "$s" ] && [ "$l" = 0 ]
		w=$(count_chain /tmp/zstd.folded ";POOL_thread;")
		check "zstd -T4: worker threads sampled, their stacks reach POOL_thread ($w)" \
			[ "$w" -gt 0 ]
	fi
	# The whole system, while zstd runs in the background.
	"$ZSTD" -q -T4 -3 -f "$in" -o /tmp/unwindprof-zstd2.zst &
	zpid=$!
	if profile system -F 499 -d 3; then
		# Other tasks sampled in the kernel may still be blocked there
		# at the end; zstd's threads all return to user space.
		z=$(count_comm /tmp/system.folded zstd)
		l=$(count_chain /tmp/system.folded "^zstd;\\[user stack lost\\]")
		check "whole system: zstd's samples among them ($z), none of them lost ($l)" \
			[ "$z" -gt 0 ] && [ "$l" = 0 ]
	fi
	# One running process by pid.
	if kill -0 "$zpid" 2>/dev/null && profile pid -F 499 -d 2 -p "$zpid"; then
		s=$(field /tmp/pid.err samples)
		t=$(field /tmp/pid.err stitched)
		l=$(field /tmp/pid.err lost)
		o=$(awk -v c=zstd 'index($0, c ";") != 1 { s += $NF } END { print s + 0 }' /tmp/pid.folded)
		check "-p zstd: every sample stitched ($t of $s), none lost ($l), no other process ($o)" \
			[ "$t" = "$s" ] && [ "$l" = 0 ] && [ "$o" = 0 ]
	fi
	wait "$zpid"
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
