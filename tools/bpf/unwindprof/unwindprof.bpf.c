// SPDX-License-Identifier: GPL-2.0
/*
 * unwindprof's BPF side: a perf_event program takes each sample's kernel
 * stack and asks for the task's user stack with
 * bpf_unwind_deferred_request(), keeping the cookie; a tp_btf program on
 * unwind_user_stack_tp receives each entry's user stack, once per entry,
 * when the task returns to user space. Both send records through one ring
 * buffer; user space stitches them by thread and cookie.
 *
 * With in_sample set (or a kernel without the kfunc, or a refused request)
 * the user stack is walked in the sample by bpf_get_stackid(), the
 * baseline this profiler exists to improve on.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "unwindprof.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before the programs are loaded. */
__u32 target_pid;	/* 0: every user task */
__u32 self_pid;		/* never profile the profiler */
bool in_sample;

/* include/linux/sched.h and enum unwind_request_result. */
#define UP_PF_KTHREAD		0x00200000
#define UP_ALREADY_DONE		2

extern int bpf_unwind_deferred_request(__u64 *cookie) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} records SEC(".maps");

/* Kernel stacks, and user stacks walked in the sample: ids by hash. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, UP_MAX_FRAMES * sizeof(__u64));
	__uint(max_entries, 32768);
} stacks SEC(".maps");

/* Room to build a variable-size stack record before it is sent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct up_stack);
} scratch SEC(".maps");

/* Per-CPU counters, enum up_count, summed by user space at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UP_NR_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&counts, &what);

	if (n)
		*n += 1;
}

static bool wanted(__u32 pid)
{
	if (!pid || pid == self_pid)
		return false;
	return !target_pid || pid == target_pid;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct up_sample *s;
	__u32 pid = id >> 32;

	if (!wanted(pid))
		return 0;
	s = bpf_ringbuf_reserve(&records, sizeof(*s), 0);
	if (!s) {
		count(UP_SAMPLE_DROPPED);
		return 0;
	}
	s->type = UP_SAMPLE;
	s->pid = pid;
	s->tid = (__u32)id;
	s->cookie = 0;
	s->pad = 0;
	s->ustack = -1;
	s->kstack = bpf_get_stackid(ctx, &stacks, 0);
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	s->request = -1;
	s->kthread = !!(bpf_get_current_task_btf()->flags & UP_PF_KTHREAD);
	if (s->kthread)
		goto out;
	if (!in_sample && bpf_ksym_exists(bpf_unwind_deferred_request)) {
		s->request = bpf_unwind_deferred_request(&s->cookie);
		if (s->request < 0)
			count(UP_REFUSED);
	}
	/*
	 * Refused, or answered already in this entry (asked from the
	 * delivery itself): the stack will not come, walk it here.
	 */
	if (s->request < 0 || s->request == UP_ALREADY_DONE) {
		s->cookie = 0;
		s->ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	}
out:
	bpf_ringbuf_submit(s, 0);
	return 0;
}

SEC("tp_btf/unwind_user_stack_tp")
int BPF_PROG(on_user_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 key = 0, nr, guessed = 0, cut = 0, pid = id >> 32;
	struct up_stack *st;

	if (!wanted(pid))
		return 0;
	st = bpf_map_lookup_elem(&scratch, &key);
	if (!st)
		return 0;
	nr = trace->nr;
	if (nr > UP_MAX_FRAMES) {
		count(UP_TRUNCATED);
		nr = UP_MAX_FRAMES;
	}
	st->type = UP_STACK;
	st->pid = pid;
	st->tid = (__u32)id;
	st->nr = nr;
	st->cookie = cookie;
	if (bpf_probe_read_kernel(st->ips, nr * sizeof(__u64), trace->entries))
		st->nr = 0;
	/*
	 * The last @guessed entries are marked (a kernel may not say), and a
	 * stack is cut from its outer end: so are its marked entries. Worked
	 * out after the read, so that the bound the verifier needs on @nr
	 * stays on @nr.
	 */
	if (bpf_core_field_exists(trace->guessed))
		guessed = trace->guessed;
	cut = trace->nr - nr;
	guessed = guessed > cut ? guessed - cut : 0;
	st->guessed = guessed < nr ? guessed : nr;
	count(UP_STACKS);
	if (bpf_ringbuf_output(&records, st, UP_STACK_HEADER + nr * sizeof(__u64), 0))
		count(UP_STACK_DROPPED);
	return 0;
}
