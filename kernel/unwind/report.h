/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Self-unwinding by signal (report.c), as the core (deferred.c) calls it:
 * after an entry's walk, and when a task starts. Internal to kernel/unwind;
 * the prctl and exec hooks are in <linux/unwind_report.h>.
 */
#ifndef _KERNEL_UNWIND_REPORT_H
#define _KERNEL_UNWIND_REPORT_H

#include <linux/types.h>

struct unwind_task_info;

#ifdef CONFIG_UNWIND_USER_REPORT
void unwind_report_signal(struct unwind_task_info *info, u64 cookie);
u64 unwind_entry_cookie(void);
void unwind_report_task_init(struct unwind_task_info *info);
bool unwind_report_wanted(void);
#else /* !CONFIG_UNWIND_USER_REPORT */
static inline void unwind_report_signal(struct unwind_task_info *info,
					u64 cookie) { }
static inline void unwind_report_task_init(struct unwind_task_info *info) { }
static inline bool unwind_report_wanted(void)
{
	return false;
}
#endif /* CONFIG_UNWIND_USER_REPORT */

#endif /* _KERNEL_UNWIND_REPORT_H */
