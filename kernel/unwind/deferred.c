// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user space stack unwinding.
 *
 * Clients ask for the user stack of the current task from any context
 * (task, softirq, hardirq, NMI) and get a cookie at once. The stack is
 * walked once per kernel entry, in task context just before the return to
 * user space, and handed to every client that asked, with that cookie.
 *
 * Contexts:
 *   unwind_deferred_request()	any, NMI included; never sleeps or faults
 *   unwind_deferred_init()	process context, may sleep
 *   unwind_deferred_cancel()	process context, may sleep
 *   callbacks			task context of the unwound task, may sleep
 *
 * The task's state word, who sets and clears each of its bits, and the
 * phases of an entry are described in entry.h; the entry's record in
 * it (its cookie, open, close, seal) and the walk an entry keeps are
 * in entry.c, which calls nothing here. Walks from task context that
 * share that walk (unwind_user_faultable()) are in faultable.c.
 */
#include <linux/unwind_deferred.h>
#include <linux/unwind_deferred_hooks.h>
#include <linux/unwind_user.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/sched/signal.h>
#include <linux/srcu.h>
#include "entry.h"
#include "feature.h"
#include "walk.h"

/*
 * Registered clients. Writers hold unwind_clients_lock; requests read a
 * client's bit under RCU (NMIs included) and passes walk the list under
 * unwind_srcu, because callbacks sleep.
 */
static DEFINE_MUTEX(unwind_clients_lock);
static LIST_HEAD(unwind_clients);
static unsigned long unwind_bits_used;
DEFINE_STATIC_SRCU(unwind_srcu);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * /sys/kernel/debug/fail_unwind_request refuses requests with -EAGAIN, to
 * test clients' fallbacks. should_fail() must not run here (NMIs, raw
 * spinlocks: its random draw takes a lock that sleeps on PREEMPT_RT), so
 * only probability 100 and times (-1: no limit) count.
 */
static DECLARE_FAULT_ATTR(fail_unwind_request);

static int __init fail_unwind_request_debugfs(void)
{
	return PTR_ERR_OR_ZERO(fault_create_debugfs_attr("fail_unwind_request",
							 NULL, &fail_unwind_request));
}
late_initcall(fail_unwind_request_debugfs);

static bool unwind_request_should_fail(void)
{
	atomic_t *times = &fail_unwind_request.times;

	if (likely(READ_ONCE(fail_unwind_request.probability) < 100))
		return false;
	/* times counts down to 0, where failing stops; -1 never ends. */
	return atomic_read(times) == -1 || atomic_dec_if_positive(times) >= 0;
}
#else
static inline bool unwind_request_should_fail(void)
{
	return false;
}
#endif

/*
 * Could the current task be past its exit hook, or in user mode, with a
 * state that does not say so (see entry.h)? Only an NMI or
 * the exit path's own code, task context with interrupts disabled, can be
 * there. Anything else is certainly inside an open entry.
 */
static bool unwind_maybe_closed(void)
{
	return in_nmi() || (in_task() && irqs_disabled());
}

/*
 * The first half of the pass: walk (or reuse the walk) if a request is
 * queued. A user can stall the walk's reads at will (userfaultfd, FUSE),
 * so it runs outside the SRCU section that unwind_deferred_cancel() waits
 * for. Requests made during the walk are taken after it, from the cache.
 */
static bool unwind_deferred_walk(struct unwind_task_info *info,
				 struct unwind_stacktrace *trace, u64 *cookie)
{
	if (!(atomic_long_read(&info->state) & UNWIND_QUEUED_MASK))
		return false;
	*cookie = READ_ONCE(info->cookie);
	unwind_user_cached(info, *cookie, trace, true);
	return true;
}

/**
 * unwind_deferred_run - answer the requests queued in this entry
 * @info:	the current task's state
 *
 * Called through unwind_deferred_resume_user() in the exit work loop, by
 * unwind_deferred_flush() and at exit.
 *
 * Context: Task context of the unwound task, page faults allowed.
 */
void unwind_deferred_run(struct unwind_task_info *info)
{
	struct unwind_stacktrace trace;
	unsigned long old, new, take;
	struct unwind_work *work;
	u64 cookie = 0;
	bool walked;
	int idx, bit;

	might_sleep();
	walked = unwind_deferred_walk(info, &trace, &cookie);

	/*
	 * The SRCU section spans taking the bits and the callbacks: a cancel
	 * that waits for it never hands a bit on while a pass that took it
	 * runs. PENDING is cleared even when nothing is taken (a cancel
	 * cleared the bits), or later requests would never ask for a pass.
	 */
retry:
	idx = srcu_read_lock(&unwind_srcu);
	old = atomic_long_read(&info->state);
	do {
		take = old & UNWIND_QUEUED_MASK;
		if (take && !walked) {
			/* Queued since the walk was skipped: walk outside. */
			srcu_read_unlock(&unwind_srcu, idx);
			walked = unwind_deferred_walk(info, &trace, &cookie);
			goto retry;
		}
		new = (old & ~(UNWIND_QUEUED_MASK | UNWIND_PENDING)) |
		      (take << UNWIND_DONE_SHIFT);
	} while (!atomic_long_try_cmpxchg(&info->state, &old, new));

	if (take) {
		list_for_each_entry_srcu(work, &unwind_clients, list,
					 srcu_read_lock_held(&unwind_srcu)) {
			/* Cancel writes -1 concurrently: read the bit once. */
			bit = READ_ONCE(work->bit);
			if (bit >= 0 && take & BIT(bit))
				work->func(work, &trace, cookie);
		}
	}
	srcu_read_unlock(&unwind_srcu, idx);
	/* Then the features that follow the passes. */
	if (take)
		unwind_features_after_pass(cookie);
}

/**
 * unwind_deferred_resume - answer this entry's requests, if any is pending
 * @info:	the current task's state, which is not clear
 * @to_guest:	the task is about to enter a guest (KVM_RUN), not user mode
 *
 * On the way into a guest the entry goes on, and it may later return to
 * user space without running the exit work loop, at whose end records are
 * closed. So the record ends here once its requests are answered: later
 * requests of the same entry start a new one (the stack is walked again,
 * and is the same), and no record is left behind for the next entry.
 *
 * Context: Task context of the current task, in the exit work loop or
 * the work before entering a guest.
 */
void unwind_deferred_resume(struct unwind_task_info *info, bool to_guest)
{
	unsigned long old;

	if (atomic_long_read(&info->state) & UNWIND_PENDING)
		unwind_deferred_run(info);
	if (!to_guest)
		return;
	/* A request still queued set TIF_NOTIFY_RESUME: the next round ends it. */
	old = atomic_long_read(&info->state);
	while (old && !(old & (UNWIND_QUEUED_MASK | UNWIND_PENDING |
			       UNWIND_SEALED))) {
		if (atomic_long_try_cmpxchg(&info->state, &old, 0))
			break;
	}
}

/*
 * Raised by a request made while the task is closed, from an NMI: its
 * only job is to make the task enter the kernel as soon as it is back in
 * user mode, so that the entry that answers the request starts with the
 * user state the request saw. TIF_NOTIFY_RESUME, set by the request, does
 * the rest.
 */
static void unwind_kick_func(struct irq_work *work)
{
}

static DEFINE_PER_CPU(struct irq_work, unwind_kick) =
	IRQ_WORK_INIT_HARD(unwind_kick_func);

/**
 * unwind_deferred_request - ask for the user stack of the current task
 * @work:	a client registered with unwind_deferred_init()
 * @cookie:	where to store the cookie of this kernel entry
 *
 * The client's callback will run once, before the task returns to user
 * space, with the user stack of this entry and the same cookie. Every
 * request of one entry gets the same cookie, whatever the client.
 *
 * Context: Any, NMI included. Never sleeps and never touches user memory.
 * Return: a non-negative &enum unwind_request_result with *@cookie set
 * (%UNWIND_QUEUED: the callback will run; %UNWIND_ALREADY_QUEUED: an
 * earlier request of this entry will be answered; %UNWIND_ALREADY_DONE: the
 * callback for this cookie already ran), or a refusal with *@cookie zero,
 * so that the caller can fall back: -EPERM for a task without a user stack
 * (kernel thread, io worker), -ESRCH for an exiting task, -EINVAL for an
 * unregistered or cancelled client, -EOPNOTSUPP in NMI on architectures
 * without NMI-safe cmpxchg, -EAGAIN when this entry is too far on its way
 * back to user space for a callback to run before it returns, or while
 * the user stack is being changed (execve(), a signal frame, sigreturn,
 * a ptrace stop).
 */
int unwind_deferred_request(struct unwind_work *work, u64 *cookie)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old, mask, stop;
	int bit;

	*cookie = 0;
	if (unwind_refuses_task(current))
		return -EPERM;
	if (current->flags & PF_EXITING)
		return -ESRCH;
	if (in_nmi() && !IS_ENABLED(CONFIG_ARCH_HAVE_NMI_SAFE_CMPXCHG))
		return -EOPNOTSUPP;
	/* Without the self-interrupt, a request that may be late is refused. */
	if (!arch_irq_work_has_interrupt() && unwind_maybe_closed())
		return -EAGAIN;
	if (unwind_request_should_fail())
		return -EAGAIN;

	/*
	 * Pairs with synchronize_rcu() in unwind_deferred_cancel(), which
	 * waits for regions without preemption too: cheaper than
	 * rcu_read_lock() under PREEMPT_RCU, on the path every sample takes.
	 */
	guard(preempt_notrace)();
	bit = READ_ONCE(work->bit);
	if (bit < 0)
		return -EINVAL;
	mask = BIT(bit);

	/*
	 * A closed task takes requests from NMIs only, where the interrupt
	 * that makes it enter the kernel at once can be raised; see the top
	 * of this file. A sealed one takes none.
	 */
	stop = mask | mask << UNWIND_DONE_SHIFT | UNWIND_SEALED;
	if (in_task())
		stop |= UNWIND_CLOSED;
	if (!unwind_entry_update(info, mask | UNWIND_PENDING, stop, &old)) {
		if (old & stop & (UNWIND_CLOSED | UNWIND_SEALED))
			return -EAGAIN;
		*cookie = READ_ONCE(info->cookie);
		return (old & mask) ? UNWIND_ALREADY_QUEUED : UNWIND_ALREADY_DONE;
	}
	*cookie = READ_ONCE(info->cookie);
	if (old & UNWIND_PENDING)
		return UNWIND_QUEUED;

	/*
	 * The first request since the last pass asks for one. The flag is
	 * set on this task here, NMI or not, so that it cannot land on
	 * another task if the scheduler switches before an interrupt would
	 * set it. A task that is closed, or may be, is made to enter the
	 * kernel before it runs user code: the first request of an entry
	 * from where that may be the case raises the self-interrupt. Later
	 * ones find PENDING set, or ACTIVE without CLOSED, which means open
	 * (or the interrupt already raised).
	 */
	set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);
	if ((old & UNWIND_CLOSED) ||
	    (!(old & UNWIND_ACTIVE) && unwind_maybe_closed()))
		irq_work_queue(this_cpu_ptr(&unwind_kick));
	return UNWIND_QUEUED;
}
EXPORT_SYMBOL_GPL(unwind_deferred_request);

/* Answer the requests queued so far, until none is left. */
static void unwind_deferred_drain(struct unwind_task_info *info)
{
	while (atomic_long_read(&info->state) & UNWIND_QUEUED_MASK)
		unwind_deferred_run(info);
}

/**
 * unwind_deferred_flush - seal the entry and answer its requests
 *
 * Called by execve() before the other threads are killed (which changes
 * the task's thread id) and the old memory map is dropped, by signal
 * delivery before the signal frame is set up, by sigreturn before the
 * interrupted registers are restored, and by a task about to stop for its
 * tracer, which may rewrite its registers and stack: requests accepted so
 * far are answered with the stack they were made for, requests are
 * refused until the change is done (unwind_deferred_unseal(), or the end
 * of the entry), and the next request after that gets a new cookie for
 * the new stack.
 *
 * Context: Task context, page faults allowed.
 */
void unwind_deferred_flush(void)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old;

	might_fault();
	unwind_deferred_seal();
	old = atomic_long_read(&info->state);
	for (;;) {
		if (old & UNWIND_QUEUED_MASK) {
			unwind_deferred_drain(info);
			old = atomic_long_read(&info->state);
			continue;
		}
		/* A new record for the new stack, whatever came before. */
		if (atomic_long_try_cmpxchg(&info->state, &old, UNWIND_SEALED))
			break;
	}
}

/**
 * unwind_deferred_task_exit - the task is exiting
 *
 * Called by do_exit() before exit_mm(): pending requests are answered while
 * the user stack can still be read. Later requests are refused (PF_EXITING
 * is already set).
 *
 * Context: Task context, page faults allowed.
 */
void unwind_deferred_task_exit(void)
{
	unwind_deferred_drain(&current->unwind_info);
}

/**
 * unwind_deferred_init - register a client of deferred unwinding
 * @work:	the client, to be passed to unwind_deferred_request()
 * @func:	its callback
 *
 * Each client owns one bit of every task's request mask: at most
 * %UNWIND_MAX_CLIENTS clients (30 on 64-bit kernels) are registered at once.
 *
 * Context: Process context, may sleep.
 * Return: 0, or -EBUSY when every bit is taken.
 */
int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func)
{
	int bit;

	guard(mutex)(&unwind_clients_lock);
	bit = find_first_zero_bit(&unwind_bits_used, UNWIND_MAX_CLIENTS);
	if (bit >= UNWIND_MAX_CLIENTS) {
		WRITE_ONCE(work->bit, -1);
		return -EBUSY;
	}
	__set_bit(bit, &unwind_bits_used);
	work->func = func;
	WRITE_ONCE(work->bit, bit);
	list_add_rcu(&work->list, &unwind_clients);
	return 0;
}
EXPORT_SYMBOL_GPL(unwind_deferred_init);

/**
 * unwind_deferred_cancel - unregister a client
 * @work:	the client
 *
 * When this returns, the client's callback is not running and will not run
 * again, on any task; its requests still pending are dropped. The client
 * may then be freed, or its module unloaded.
 *
 * Context: Process context, may sleep (waits for RCU and SRCU readers).
 */
void unwind_deferred_cancel(struct unwind_work *work)
{
	struct task_struct *g, *t;
	unsigned long bits;
	int bit;

	guard(mutex)(&unwind_clients_lock);
	bit = work->bit;
	if (bit < 0)
		return;
	list_del_rcu(&work->list);
	WRITE_ONCE(work->bit, -1);
	/*
	 * No request still sets the bit after this (requests run with
	 * preemption disabled, and synchronize_rcu() waits for such
	 * regions too)...
	 */
	synchronize_rcu();

	/* ...so stale bits can be cleared for good... */
	bits = BIT(bit) | BIT(bit) << UNWIND_DONE_SHIFT;
	scoped_guard(rcu) {
		for_each_process_thread(g, t)
			atomic_long_andnot(bits, &t->unwind_info.state);
	}

	/* ...and once passes that took it are done, the bit is free. */
	synchronize_srcu(&unwind_srcu);
	__clear_bit(bit, &unwind_bits_used);
}
EXPORT_SYMBOL_GPL(unwind_deferred_cancel);
