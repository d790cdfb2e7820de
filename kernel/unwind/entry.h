/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The current kernel entry as the task's state word records it: what the
 * core (deferred.c) shares with nofault.c, which answers an entry's
 * requests at once from interrupts. The word's bits, who sets and clears
 * each, and the phases of an entry are described at the top of
 * deferred.c. Internal to kernel/unwind.
 */
#ifndef _KERNEL_UNWIND_ENTRY_H
#define _KERNEL_UNWIND_ENTRY_H

#include <linux/bits.h>
#include <linux/sched.h>
#include <linux/unwind_deferred_types.h>

#define UNWIND_QUEUED_MASK	(BIT(UNWIND_MAX_CLIENTS) - 1)
#define UNWIND_DONE_MASK	(UNWIND_QUEUED_MASK << UNWIND_DONE_SHIFT)
#define UNWIND_ACTIVE		BIT(UNWIND_ACTIVE_BIT)
#define UNWIND_PENDING		BIT(UNWIND_PENDING_BIT)
#define UNWIND_CLOSED		BIT(UNWIND_CLOSED_BIT)
#define UNWIND_SEALED		BIT(UNWIND_SEALED_BIT)

/* Kernel threads and io workers have no user stack to walk. */
static inline bool unwind_refuses_task(struct task_struct *task)
{
	return task->flags & (PF_KTHREAD | PF_USER_WORKER) || !task->mm;
}

bool unwind_entry_update(struct unwind_task_info *info,
			 unsigned long set, unsigned long stop,
			 unsigned long *old);

#endif /* _KERNEL_UNWIND_ENTRY_H */
