/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running a piece of test code from interrupt context on top of the
 * current task: the test client and the micro-benchmark make their
 * requests (and time them) from a hard hrtimer or a self-NMI on this CPU
 * while the task that asked spins in the kernel, waiting for it.
 *
 *	static struct unwind_test_ctx ctx;
 *
 *	// in the hrtimer function, or in the module's NMI_LOCAL handler:
 *	if (unwind_test_ctx_mine(&ctx)) {
 *		...;			// the request, on top of the task
 *		unwind_test_ctx_done(&ctx);
 *	}
 *
 *	ret = unwind_test_ctx_run(&ctx, nmi, my_hrtimer_fn);
 *
 * The module registers its own NMI handler (its name, and what else it
 * claims, are its own); the hrtimer is set up here.
 */
#ifndef _UNWIND_TEST_CTX_H
#define _UNWIND_TEST_CTX_H

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#endif

/**
 * struct unwind_test_ctx - one run of test code in interrupt context
 * @task:	the task the handler must find current; NULL when not armed
 * @done:	set by the handler when the code ran (release), read by the
 *		waiting task (acquire)
 */
struct unwind_test_ctx {
	struct task_struct	*task;
	int			done;
};

/* In the handler: is this the run the current task is waiting for? */
static inline bool unwind_test_ctx_mine(struct unwind_test_ctx *c)
{
	return current == READ_ONCE(c->task) && !READ_ONCE(c->done);
}

/* In the handler: the code ran; what it wrote is published. */
static inline void unwind_test_ctx_done(struct unwind_test_ctx *c)
{
	/* Pairs with smp_load_acquire() in unwind_test_ctx_run(). */
	smp_store_release(&c->done, 1);
}

/**
 * unwind_test_ctx_run - run the handler's code on top of the current task
 * @c:		the run
 * @nmi:	from a self-NMI (the module's NMI_LOCAL handler), else from
 *		a hard hrtimer calling @fn
 * @fn:		the hrtimer function
 *
 * Spins with preemption disabled, so that the interrupt comes on this CPU
 * with this task current, for at most a second.
 *
 * Context: Task context.
 * Return: 0, -ETIMEDOUT, or -EOPNOTSUPP for an NMI without a local APIC.
 */
static inline int unwind_test_ctx_run(struct unwind_test_ctx *c, bool nmi,
				      enum hrtimer_restart (*fn)(struct hrtimer *))
{
	u64 end = ktime_get_ns() + NSEC_PER_SEC;
	struct hrtimer timer;
	int ret = 0;

	c->done = 0;
	WRITE_ONCE(c->task, current);
	preempt_disable();
	if (nmi) {
#ifdef CONFIG_X86_LOCAL_APIC
		apic->send_IPI_self(NMI_VECTOR);
#else
		ret = -EOPNOTSUPP;
#endif
	} else {
		hrtimer_init_on_stack(&timer, CLOCK_MONOTONIC,
				      HRTIMER_MODE_REL_PINNED_HARD);
		timer.function = fn;
		hrtimer_start(&timer, ns_to_ktime(1000),
			      HRTIMER_MODE_REL_PINNED_HARD);
	}
	/* Pairs with smp_store_release() in unwind_test_ctx_done(). */
	while (!ret && !smp_load_acquire(&c->done)) {
		if (ktime_get_ns() > end)
			ret = -ETIMEDOUT;
		cpu_relax();
	}
	if (!nmi) {
		hrtimer_cancel(&timer);
		destroy_hrtimer_on_stack(&timer);
	}
	WRITE_ONCE(c->task, NULL);
	preempt_enable();
	return ret;
}

#endif /* _UNWIND_TEST_CTX_H */
