/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types of user space stack unwinding, kept free of other kernel headers so
 * that sched.h and other low-level headers can include them cheaply.
 */
#ifndef _LINUX_UNWIND_USER_TYPES_H
#define _LINUX_UNWIND_USER_TYPES_H

#include <linux/types.h>

/**
 * struct unwind_stacktrace - a user space stack trace
 * @nr:		number of valid entries
 * @entries:	user addresses, innermost first: the interrupted user
 *		instruction pointer, then one return address per frame
 */
struct unwind_stacktrace {
	unsigned int	nr;
	unsigned long	*entries;
};

/**
 * struct unwind_user_state - where a user stack walk stands
 * @ip:		user instruction pointer of the current frame
 * @sp:		user stack pointer of the current frame
 * @fp:		user frame pointer of the current frame
 * @ws:		word size of the task's user mode: 8, or 4 for compat tasks
 * @ip_base:	segment base added to code addresses (compat tasks)
 * @sp_base:	segment base added to stack addresses (compat tasks)
 * @no_sframe_start: start of text known to have no SFrame table, so that
 *		the frames of a walk in it look it up once
 * @no_sframe_end: end of that text (exclusive); 0 if none is known
 */
struct unwind_user_state {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned int	ws;
	unsigned long	ip_base;
	unsigned long	sp_base;
	unsigned long	no_sframe_start;
	unsigned long	no_sframe_end;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
