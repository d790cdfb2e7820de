/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the core (deferred.c) offers the features built on it, and all it
 * knows of them: one pointer in every task for the state they keep, a
 * list of listeners it tells of each pass, and the current entry's cookie.
 * A feature registers at boot; the core calls none by name, so that a new
 * one changes its own file, this header, Kconfig and the Makefile only.
 * Internal to kernel/unwind.
 */
#ifndef _KERNEL_UNWIND_FEATURE_H
#define _KERNEL_UNWIND_FEATURE_H

#include <linux/init.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/types.h>

/* Recent cookies a thread may report its own frames for. */
#define UNWIND_REPORT_WINDOW	4

/**
 * struct unwind_report_task - a thread's self-unwinding state (report.c)
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

/**
 * struct unwind_task_features - what the features keep for one task
 * @report:	self-unwinding by signal
 *
 * Hangs off unwind_task_info::features. Allocated by the first feature
 * that needs it, in the task's own context (unwind_task_features()),
 * freed with the task; a new task starts without it. Only the task itself
 * uses it, so it takes no lock.
 */
struct unwind_task_features {
#ifdef CONFIG_UNWIND_USER_REPORT
	struct unwind_report_task report;
#endif
};

/**
 * unwind_task_features - the current task's feature state
 * @alloc:	allocate it if the task has none yet
 *
 * Context: Task context of the current task; may sleep if @alloc.
 * Return: the state, or NULL if the task has none (or, with @alloc, if
 * it could not be allocated).
 */
static inline struct unwind_task_features *unwind_task_features(bool alloc)
{
	struct unwind_task_info *info = &current->unwind_info;

	if (!info->features && alloc)
		info->features = kzalloc(sizeof(*info->features),
					 GFP_KERNEL_ACCOUNT);
	return info->features;
}

/**
 * struct unwind_pass_listener - a feature the core tells of its passes
 * @list:	in the core's list of listeners, which never shrinks
 * @after_pass:	called by each pass that answered requests, after the
 *		clients' callbacks, with the entry's cookie. Task context of
 *		the unwound task, on its way to user space; may sleep
 * @wants_pass:	may be NULL. Does the current task need every stack of its
 *		entries to be taken by the pass, which alone calls
 *		@after_pass? Then a walk in an interrupt, which answers at
 *		once, is not made. Any context, NMI included, without a lock
 */
struct unwind_pass_listener {
	struct list_head list;
	void (*after_pass)(u64 cookie);
	bool (*wants_pass)(void);
};

void __init unwind_pass_listen(struct unwind_pass_listener *listener);
u64 unwind_entry_cookie(void);

#endif /* _KERNEL_UNWIND_FEATURE_H */
