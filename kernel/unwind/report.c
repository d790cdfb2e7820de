// SPDX-License-Identifier: GPL-2.0
/*
 * Self-unwinding by signal: interpreters and JITs report their own frames.
 *
 * No kernel walker can name the frames of interpreted or JIT-compiled
 * code: they are data of the runtime. A runtime opts in with
 * prctl(PR_USER_STACK_SIGNAL, sig) after installing a handler for sig. Then,
 * whenever a deferred request for one of its threads is answered (the
 * kernel walk still happens and is delivered to every client as always),
 * the kernel also queues sig to that thread, with si_code SI_UNWIND and
 * the entry's cookie in si_value. SI_UNWIND is positive, a code only the
 * kernel sends: rt_sigqueueinfo() and pidfd_send_signal() refuse codes
 * >= 0 to other processes, so a handler that sees it knows the kernel
 * (or its own process) asked. sig is a real-time signal or SIGUSR1/2.
 * The handler, which may take faults and knows the runtime's data
 * structures, reports its frames with
 * prctl(PR_USER_STACK_REPORT, cookie, entries, nr, flags), and the report goes
 * to the event unwind_report:unwind_user_report (ftrace, perf) and the
 * bare tracepoint unwind_user_report_tp (BPF), for tools to stitch to
 * every sample that carries the cookie.
 *
 * Rules, per thread (in struct unwind_report_task, the feature's part of
 * the thread's block in feature.h, used by the thread itself only, in task
 * context, so without a lock):
 *  - at most one signal per kernel entry;
 *  - none while the last one is still pending (blocked, or not delivered
 *    yet), and none for UNWIND_REPORT_WAIT after it was sent unless its
 *    report came: a handler that never reports costs the thread at most
 *    one signal per UNWIND_REPORT_WAIT;
 *  - none for the entry of a report itself (a tracer sampling the report
 *    event makes requests there);
 *  - a report is accepted only for one of the last UNWIND_REPORT_WINDOW
 *    cookies signalled to this thread, and once: another thread's cookie,
 *    an old one, or one never signalled is refused, so that no report can
 *    be made for another task's samples.
 *
 * The opt-in is per process, as signal handlers are:
 * signal_struct::unwind_signal, written under the siglock, read without
 * it. Delivery checks again, under the siglock, that a handler is still
 * installed, since the default action of most signals kills. Exec clears
 * the opt-in (the new program has not installed the handler), and a child
 * of fork() starts without it.
 */
#include <linux/jiffies.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_report.h>
#include "feature.h"

#define CREATE_TRACE_POINTS
#include <trace/events/unwind_report.h>

/* Recent cookies a thread may report its own frames for. */
#define UNWIND_REPORT_WINDOW	4

/**
 * struct unwind_report_task - a thread's self-unwinding state
 * @cookies:	the last cookies signalled to the thread for it to report
 *		its own frames, 0 once reported
 * @next:	the slot of @cookies the next cookie takes
 * @sent:	jiffies (with bit 0 set) when the last signal was sent and
 *		not reported yet, 0 if none
 * @sig:	the signal it was sent with
 * @quiet:	cookie of the last entry that reported: it asks for no
 *		report itself
 */
struct unwind_report_task {
	u64		cookies[UNWIND_REPORT_WINDOW];
	unsigned int	next;
	unsigned long	sent;
	int		sig;
	u64		quiet;
};

/* Its part of a task's block is a struct unwind_report_task. */
static struct unwind_feature unwind_report_feature;

/* How long a signal without a report holds off the next one. */
#define UNWIND_REPORT_WAIT	(HZ / 10)

/*
 * The current task's signal handlers. Only the task itself replaces them
 * (exec, after killing its other threads), so it needs no RCU to use them.
 */
static struct sighand_struct *unwind_report_sighand(void)
{
	return rcu_dereference_protected(current->sighand, true);
}

/* Is a handler installed for @sig? Called with the siglock held. */
static bool unwind_report_handled(struct sighand_struct *sighand, int sig)
{
	__sighandler_t handler = sighand->action[sig - 1].sa.sa_handler;

	return handler != SIG_DFL && handler != SIG_IGN;
}

/*
 * The signals a runtime may take for self-unwinding: the real-time ones
 * and SIGUSR1/SIGUSR2, which mean nothing to the kernel. Any other has a
 * meaning of its own, which every answered sample would trigger (SIGCONT
 * resumes the process group and tells the parent, SIGCHLD and SIGSEGV
 * carry their own si_code values, job control stops).
 */
static bool unwind_report_signal_ok(unsigned long sig)
{
	return sig == SIGUSR1 || sig == SIGUSR2 ||
	       (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

static int unwind_report_set_signal(unsigned long sig, unsigned long arg3,
				    unsigned long arg4, unsigned long arg5)
{
	struct sighand_struct *sighand = unwind_report_sighand();
	int ret = 0;

	if (arg3 || arg4 || arg5)
		return -EINVAL;
	/* The cookie is 64 bits; a compat task's si_value holds 32. */
	if (in_compat_syscall() || !current->mm)
		return -EINVAL;
	if (sig && !unwind_report_signal_ok(sig))
		return -EINVAL;
	/* Before the first opt-in, so that no interrupt misses it. */
	if (sig)
		unwind_feature_wants_passes();

	spin_lock_irq(&sighand->siglock);
	if (sig && !unwind_report_handled(sighand, sig))
		ret = -EINVAL;
	else
		WRITE_ONCE(current->signal->unwind_signal, sig);
	spin_unlock_irq(&sighand->siglock);
	return ret;
}

/*
 * The core's pass answered the current thread's requests for the entry
 * @cookie (struct unwind_feature::after_pass): ask the thread to
 * unwind itself, if its process opted in.
 */
static void unwind_report_after_pass(u64 cookie)
{
	struct sighand_struct *sighand = unwind_report_sighand();
	struct task_struct *task = current;
	int sig = READ_ONCE(task->signal->unwind_signal);
	struct unwind_report_task *rt;
	struct kernel_siginfo si;
	bool sent = false;
	unsigned int last;

	if (!sig || !cookie || (task->flags & PF_EXITING) || task->in_execve)
		return;
	/* The thread's first signal allocates its state: without it, none. */
	rt = unwind_feature_task(&unwind_report_feature, true);
	if (!rt)
		return;
	/*
	 * A report's own entry asks for none: a tracer that samples the
	 * report event would otherwise keep the handler running for ever.
	 */
	if (cookie == rt->quiet)
		return;
	last = (rt->next + UNWIND_REPORT_WINDOW - 1) % UNWIND_REPORT_WINDOW;
	if (rt->cookies[last] == cookie)
		return;
	if (rt->sent && time_before(jiffies, rt->sent + UNWIND_REPORT_WAIT))
		return;

	clear_siginfo(&si);
	si.si_signo = sig;
	si.si_code = SI_UNWIND;
	si.si_value.sival_ptr = (void __user *)(unsigned long)cookie;

	spin_lock_irq(&sighand->siglock);
	if (READ_ONCE(task->signal->unwind_signal) == sig &&
	    unwind_report_handled(sighand, sig) &&
	    !sigismember(&task->pending.signal, sig) &&
	    !sigismember(&task->signal->shared_pending.signal, sig))
		sent = !send_signal_locked(sig, &si, task, PIDTYPE_PID);
	spin_unlock_irq(&sighand->siglock);
	if (!sent)
		return;

	rt->cookies[rt->next] = cookie;
	rt->next = (rt->next + 1) % UNWIND_REPORT_WINDOW;
	rt->sent = jiffies | 1;
	rt->sig = sig;
}

static int unwind_report_frames(unsigned long cookie, unsigned long buf,
				unsigned long nr, unsigned long flags)
{
	struct unwind_report_task *rt =
		unwind_feature_task(&unwind_report_feature, false);
	u64 *entries = NULL;
	unsigned int i;

	if (flags & ~PR_USER_STACK_REPORT_OPAQUE || !cookie)
		return -EINVAL;
	if (nr > PR_USER_STACK_REPORT_MAX)
		return -E2BIG;
	/* A thread never signalled has no state, and no cookie to report. */
	if (!rt)
		return -ENOENT;
	for (i = 0; i < UNWIND_REPORT_WINDOW; i++)
		if (rt->cookies[i] == cookie)
			break;
	if (i == UNWIND_REPORT_WINDOW)
		return -ENOENT;
	if (nr) {
		entries = memdup_array_user((void __user *)buf, nr,
					    sizeof(*entries));
		if (IS_ERR(entries))
			return PTR_ERR(entries);
	}
	/* Once per cookie; the next signal need not wait any more. */
	rt->cookies[i] = 0;
	rt->sent = 0;
	rt->quiet = unwind_entry_cookie();
	trace_unwind_user_report(cookie, flags, entries, nr);
	if (trace_unwind_user_report_tp_enabled()) {
		/* The kernel is 64-bit: an entry is an unsigned long. */
		struct unwind_stacktrace trace = {
			.nr = nr,
			.entries = (unsigned long *)entries,
		};

		trace_unwind_user_report_tp(cookie, &trace, flags);
	}
	kfree(entries);
	return 0;
}

/**
 * unwind_report_prctl - opt in to self-unwinding, or report frames
 * @option:	PR_USER_STACK_SIGNAL or PR_USER_STACK_REPORT
 * @arg2:	SIGNAL: the signal to send, 0 to stop; REPORT: the cookie
 * @arg3:	SIGNAL: 0; REPORT: user address of __u64 entries
 * @arg4:	SIGNAL: 0; REPORT: how many (at most PR_USER_STACK_REPORT_MAX)
 * @arg5:	SIGNAL: 0; REPORT: PR_USER_STACK_REPORT_* flags
 *
 * Context: Task context (the prctl() system call).
 * Return: 0; -EINVAL for a bad argument, a signal without a handler
 * installed, or a compat task; -E2BIG for too many entries; -ENOENT for a
 * cookie that is not one of this thread's recent signalled ones, or that
 * was reported already; -EFAULT if the entries cannot be read.
 */
int unwind_report_prctl(int option, unsigned long arg2, unsigned long arg3,
			unsigned long arg4, unsigned long arg5)
{
	switch (option) {
	case PR_USER_STACK_SIGNAL:
		return unwind_report_set_signal(arg2, arg3, arg4, arg5);
	case PR_USER_STACK_REPORT:
		return unwind_report_frames(arg2, arg3, arg4, arg5);
	}
	return -EINVAL;
}

/*
 * Did the current process opt in (struct unwind_feature::wants_pass)?
 * Its stacks must then be taken by the pass, whose answer signals the
 * runtime with the cookie its report is made for. A racy read, as
 * unwind_report_after_pass() makes first.
 */
static bool unwind_report_wants_pass(void)
{
	return READ_ONCE(current->signal->unwind_signal) != 0;
}

/**
 * unwind_report_exec - a new program has not opted in
 *
 * Clears the opt-in, and drops every report signal still pending for the
 * thread: the new program has no handler for it, and the default action
 * of most signals kills. That is every queued signal with si_code
 * SI_UNWIND, whatever the process opted in to since it was sent (it may
 * have switched signals, or opted out), and the pending bit of the last
 * one sent if its queue entry could not be allocated (a non-real-time
 * signal is then pending without one).
 *
 * Context: exec, after de_thread(): the task is the only thread.
 */
void unwind_report_exec(void)
{
	struct sighand_struct *sighand = unwind_report_sighand();
	struct unwind_report_task *rt =
		unwind_feature_task(&unwind_report_feature, false);
	int bare = rt && rt->sent ? rt->sig : 0;

	spin_lock_irq(&sighand->siglock);
	WRITE_ONCE(current->signal->unwind_signal, 0);
	flush_sigqueue_code(current, SI_UNWIND, bare);
	recalc_sigpending();
	spin_unlock_irq(&sighand->siglock);
	if (rt)
		memset(rt, 0, sizeof(*rt));
}

static struct unwind_feature unwind_report_feature = {
	.task_size	= sizeof(struct unwind_report_task),
	.after_pass	= unwind_report_after_pass,
	.wants_pass	= unwind_report_wants_pass,
};

unwind_feature_initcall(unwind_report_feature);
