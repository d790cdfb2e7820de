/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Self-unwinding by signal: a runtime (an interpreter, a JIT) that opted
 * in gets a signal carrying the cookie of each kernel entry whose user
 * stack was taken, and reports its own frames for that cookie
 * (kernel/unwind/report.c, Documentation/trace/unwind_deferred.rst).
 */
#ifndef _LINUX_UNWIND_REPORT_H
#define _LINUX_UNWIND_REPORT_H

#include <linux/errno.h>

#ifdef CONFIG_UNWIND_USER_REPORT

int unwind_report_prctl(int option, unsigned long arg2, unsigned long arg3,
			unsigned long arg4, unsigned long arg5);
void unwind_report_exec(void);

#else /* !CONFIG_UNWIND_USER_REPORT */

static inline int unwind_report_prctl(int option, unsigned long arg2,
				      unsigned long arg3, unsigned long arg4,
				      unsigned long arg5)
{
	return -EINVAL;
}

static inline void unwind_report_exec(void) { }

#endif /* CONFIG_UNWIND_USER_REPORT */

#endif /* _LINUX_UNWIND_REPORT_H */
