/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user space stack unwinding: the client API. A request from any
 * context returns a cookie at once; the callback gets the stack and the
 * cookie before the task returns to user space. See
 * Documentation/trace/unwind_deferred.rst.
 */
#ifndef _LINUX_UNWIND_DEFERRED_H
#define _LINUX_UNWIND_DEFERRED_H

#include <linux/unwind_deferred_types.h>
#include <linux/unwind_user_types.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/list.h>
#include <linux/sched.h>

struct pt_regs;

struct unwind_work;
struct task_struct;

/**
 * typedef unwind_callback_t - receives a deferred user stack
 * @work:	the client
 * @trace:	the user stack of the entry; valid only during the call
 * @cookie:	the cookie unwind_deferred_request() returned for it
 *
 * Runs in task context of the unwound task, before it returns to user space
 * (or in do_exit()). It may sleep, but must not touch user memory, which a
 * user can stall at will: unwind_deferred_cancel() waits for callbacks.
 */
typedef void (*unwind_callback_t)(struct unwind_work *work,
				  struct unwind_stacktrace *trace, u64 cookie);

/**
 * struct unwind_work - a client of deferred unwinding
 * @list:	entry in the list of clients (RCU/SRCU protected)
 * @func:	the callback
 * @bit:	the client's bit in each task's request mask, -1 when not
 *		registered
 */
struct unwind_work {
	struct list_head	list;
	unwind_callback_t	func;
	int			bit;
};

/**
 * enum unwind_request_result - what an accepted request will lead to
 * @UNWIND_QUEUED:		the callback will run with the cookie
 * @UNWIND_ALREADY_QUEUED:	an earlier request of this entry will be
 *				answered, with the same cookie
 * @UNWIND_ALREADY_DONE:	the callback for the cookie already ran in
 *				this entry
 */
enum unwind_request_result {
	UNWIND_QUEUED		= 0,
	UNWIND_ALREADY_QUEUED	= 1,
	UNWIND_ALREADY_DONE	= 2,
};

/*
 * Layout of unwind_task_info::state. Each client owns one bit in the low
 * half ("queued": asked in this entry, callback not run yet) and the
 * matching bit in the high half ("done": callback ran in this entry).
 * Four flags sit on top. kernel/unwind/deferred.c says who changes what.
 */
#define UNWIND_MAX_CLIENTS	((BITS_PER_LONG - 4) / 2)
#define UNWIND_DONE_SHIFT	UNWIND_MAX_CLIENTS
#define UNWIND_ACTIVE_BIT	(BITS_PER_LONG - 4)
#define UNWIND_PENDING_BIT	(BITS_PER_LONG - 3)
#define UNWIND_CLOSED_BIT	(BITS_PER_LONG - 2)
#define UNWIND_SEALED_BIT	(BITS_PER_LONG - 1)

/* Cookies: the CPU number + 1 in bits 63..48, a per-CPU count below. */
#define UNWIND_COOKIE_CPU_SHIFT	48
#define UNWIND_COOKIE_SEQ_MASK	((1ULL << UNWIND_COOKIE_CPU_SHIFT) - 1)

static inline u64 unwind_cookie_make(unsigned int cpu, u64 seq)
{
	return ((u64)(cpu + 1) << UNWIND_COOKIE_CPU_SHIFT) |
	       (seq & UNWIND_COOKIE_SEQ_MASK);
}

static inline unsigned int unwind_cookie_cpu(u64 cookie)
{
	return (cookie >> UNWIND_COOKIE_CPU_SHIFT) - 1;
}

#ifdef CONFIG_UNWIND_USER

int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func);
int unwind_deferred_request(struct unwind_work *work, u64 *cookie);
void unwind_deferred_cancel(struct unwind_work *work);
int unwind_user_faultable(struct unwind_stacktrace *trace);
int unwind_user_faultable_known(struct unwind_stacktrace *trace);
int unwind_user_nofault(struct pt_regs *regs, struct unwind_stacktrace *trace,
			unsigned int max);
int unwind_user_entry_stack(u64 cookie, struct unwind_stacktrace *trace,
			    unsigned int max);

/* The kfunc of the BPF client, kernel/bpf/deferred_stack.c. */
int bpf_unwind_deferred_request(u64 *cookie);

#else /* !CONFIG_UNWIND_USER */

static inline int unwind_deferred_init(struct unwind_work *work,
				       unwind_callback_t func)
{
	return -EOPNOTSUPP;
}

static inline int unwind_deferred_request(struct unwind_work *work,
					  u64 *cookie)
{
	*cookie = 0;
	return -EOPNOTSUPP;
}

static inline void unwind_deferred_cancel(struct unwind_work *work) { }

static inline int unwind_user_faultable(struct unwind_stacktrace *trace)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

static inline int unwind_user_faultable_known(struct unwind_stacktrace *trace)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

static inline int unwind_user_nofault(struct pt_regs *regs,
				      struct unwind_stacktrace *trace,
				      unsigned int max)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

static inline int unwind_user_entry_stack(u64 cookie,
					  struct unwind_stacktrace *trace,
					  unsigned int max)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER */

#endif /* _LINUX_UNWIND_DEFERRED_H */
