// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF client of deferred user stack unwinding.
 *
 * A tracing BPF program asks for the current task's user stack with the
 * bpf_unwind_deferred_request() kfunc, from any context its type runs in
 * (NMI included), and gets the cookie of the task's kernel entry at once,
 * to store beside its kernel sample. Just before the task returns to user
 * space, the core walks the stack (once per entry, shared with perf and
 * ftrace) and this client fires the bare tracepoint unwind_user_stack_tp
 * with the cookie and the stack. BPF programs attached there (tp_btf or
 * raw_tp) copy the frames into their maps or ring buffers, and user space
 * joins them to the samples by thread and cookie.
 *
 * Why one client and a tracepoint, rather than a callback program named by
 * each request:
 *
 *  - Nothing here refers to a BPF program. The program that asked may be
 *    unloaded, and the receiving one detached, while stacks are pending:
 *    the core holds bits, not programs, and the tracepoint's own RCU rules
 *    (those of every BPF raw tracepoint link) keep a detached program from
 *    being called. No new lifetime rule is needed.
 *  - The core has a fixed number of client slots. A slot per program or
 *    per link would run out; one slot serves every BPF program, and the
 *    core's "one callback per client per entry" becomes one tracepoint
 *    call per entry, however many programs asked.
 *  - A program attached to the tracepoint sees every stack BPF asked for,
 *    as perf and ftrace see theirs; programs that share the tracepoint
 *    filter by what they stored (cookie, thread), which they must do to
 *    stitch anyway.
 *
 * A program that asks from the tracepoint itself gets UNWIND_ALREADY_DONE:
 * the entry was answered, and asking cannot cause a second walk or call.
 */
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/init.h>
#include <linux/unwind_deferred.h>

#define CREATE_TRACE_POINTS
#include <trace/events/unwind_user.h>

/* Registered at boot; its bit is -1 if the core had no slot left. */
static struct unwind_work unwind_bpf_work = { .bit = -1 };

/* In task context at the return to user space; may sleep. */
static void unwind_bpf_deliver(struct unwind_work *work,
			       struct unwind_stacktrace *trace, u64 cookie)
{
	trace_unwind_user_stack_tp(cookie, trace);
}

__bpf_kfunc_start_defs();

/**
 * bpf_unwind_deferred_request - ask for the current task's user stack
 * @cookie: where the cookie of the current kernel entry is stored; zeroed
 *	    when the request is refused
 *
 * The stack is delivered, with the same cookie, to the programs attached to
 * the unwind_user_stack_tp tracepoint just before the task returns to user
 * space: once per kernel entry, however many programs or samples asked.
 *
 * Context: any a tracing program runs in: NMI, hard and soft interrupts,
 * task context. Never sleeps and never reads user memory.
 * Return: as unwind_deferred_request(): 0 (queued), 1 (an earlier request
 * of this entry will be answered) or 2 (this entry's stack was already
 * delivered), or a negative errno when refused: -EPERM for a kernel
 * thread, -ESRCH for an exiting task, -EAGAIN on the way back to user space
 * outside NMI, -EINVAL if the BPF client could not be registered at boot.
 * A refused program can fall back to bpf_get_stack().
 */
__bpf_kfunc int bpf_unwind_deferred_request(u64 *cookie)
{
	return unwind_deferred_request(&unwind_bpf_work, cookie);
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(unwind_bpf_kfunc_ids)
/*
 * KF_TRUSTED_ARGS makes the verifier refuse a NULL cookie pointer, which
 * it would otherwise accept for a pointer to memory.
 */
BTF_ID_FLAGS(func, bpf_unwind_deferred_request, KF_TRUSTED_ARGS)
BTF_KFUNCS_END(unwind_bpf_kfunc_ids)

static const struct btf_kfunc_id_set unwind_bpf_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &unwind_bpf_kfunc_ids,
};

/*
 * Program types that run on top of a user task in some context and may ask
 * for its stack: perf events (NMI or hrtimer interrupt), kprobes and
 * uprobes, tracepoints, BTF-typed raw tracepoints and fentry/fexit (both
 * BPF_PROG_TYPE_TRACING), and syscall programs (the caller of
 * bpf(BPF_PROG_TEST_RUN)). Untyped raw tracepoint programs cannot call
 * kfuncs in this kernel (the verifier has no kfunc hook for them); they
 * attach as tp_btf instead. Other types are rejected by the verifier at
 * load time ("calling kernel function ... is not allowed").
 */
static const enum bpf_prog_type unwind_bpf_prog_types[] = {
	BPF_PROG_TYPE_PERF_EVENT,
	BPF_PROG_TYPE_KPROBE,
	BPF_PROG_TYPE_TRACEPOINT,
	BPF_PROG_TYPE_TRACING,
	BPF_PROG_TYPE_SYSCALL,
};

/*
 * The kfunc is registered even when the core has no slot left for BPF, so
 * that programs load and get -EINVAL, their cue to fall back, rather than
 * fail to load on one kernel and not on another.
 */
static int __init unwind_bpf_init(void)
{
	int i, ret;

	ret = unwind_deferred_init(&unwind_bpf_work, unwind_bpf_deliver);
	if (ret)
		pr_warn("unwind_user: no client slot for BPF (%d)\n", ret);
	for (i = 0; i < ARRAY_SIZE(unwind_bpf_prog_types); i++) {
		ret = register_btf_kfunc_id_set(unwind_bpf_prog_types[i],
						&unwind_bpf_kfunc_set);
		if (ret) {
			pr_warn("unwind_user: BPF kfunc not registered for program type %d (%d)\n",
				unwind_bpf_prog_types[i], ret);
			return ret;
		}
	}
	return 0;
}
late_initcall(unwind_bpf_init);
