/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-task state of deferred user stack unwinding, embedded in task_struct.
 * Only <linux/types.h> is included here: sched.h includes this file, and
 * pulling arch atomics or other headers in would create include cycles.
 */
#ifndef _LINUX_UNWIND_DEFERRED_TYPES_H
#define _LINUX_UNWIND_DEFERRED_TYPES_H

#include <linux/types.h>

/**
 * struct unwind_task_info - deferred unwinding state of one task
 * @state:	requests, deliveries and the entry's phase; see the table in
 *		kernel/unwind/entry.h for who sets and clears each bit
 * @cookie:	cookie of the current entry, valid while the ACTIVE bit of
 *		@state is set. Written only by the task itself or by an
 *		interrupt or NMI running on top of it, by a cmpxchg from the
 *		value it read, and only while ACTIVE is clear
 * @cache:	UNWIND_USER_MAX_DEPTH entries, allocated by the first walk
 *		of this task and freed with the task; NULL for tasks that
 *		were never unwound
 * @cache_nr:	valid entries in @cache
 * @cache_guessed: how many of them were guessed (see @guess)
 * @cache_cookie: the entry whose walk @cache holds, 0 if none. The task's
 *		walks write @cache and set @cache_cookie last; so does an
 *		interrupt that walks an entry's user stack first
 *		(unwind_user_nofault(), while ACTIVE is clear, when no walk of
 *		the task can be under way), and other interrupts of the entry
 *		read it once @cache_cookie is the entry's
 * @guess:	the task asked for guessed frames where the walk stops early
 *		(prctl(PR_SET_USER_STACK_GUESS)); changed only by the task
 *		itself, inherited at fork, kept across exec
 * @features:	what the features built on the core keep for this task
 *		(kernel/unwind/feature.h), NULL until one needs it
 */
struct unwind_task_info {
	/*
	 * An atomic_long_t, spelled as the type it stands for: atomic_long_t
	 * comes with the atomic operations, which this header must not include.
	 */
#ifdef CONFIG_64BIT
	atomic64_t		state;
#else
	atomic_t		state;
#endif
	u64			cookie;
	unsigned long		*cache;
	unsigned int		cache_nr;
	unsigned int		cache_guessed;
	u64			cache_cookie;
	bool			guess;
	struct unwind_task_features *features;
};

#endif /* _LINUX_UNWIND_DEFERRED_TYPES_H */
