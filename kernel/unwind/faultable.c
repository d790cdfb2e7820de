// SPDX-License-Identifier: GPL-2.0
/*
 * The current task's user stack, walked now by a caller in task context
 * that cannot wait for the deferred pass: a sleepable BPF program, a
 * tracer at a user breakpoint. The walk is the entry's one walk, kept in
 * the task's cache (entry.c): the entry's deferred requests and these
 * callers share it, whichever comes first.
 *
 * Contexts:
 *   unwind_user_faultable()	task context with page faults allowed
 *   unwind_user_faultable_known() the same, under locks a file read takes
 */
#include <linux/unwind_deferred.h>
#include <linux/sched.h>
#include "entry.h"

static int unwind_user_walk_now(struct unwind_stacktrace *trace,
				bool read_files)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old;
	u64 cookie = 0;

	might_fault();
	trace->nr = 0;
	trace->guessed = 0;
	if (unwind_refuses_task(current))
		return -EPERM;

	/*
	 * Share with this entry's requests. An exiting task's entry is over
	 * (its requests were answered), and a closed task cannot be here
	 * (page faults are allowed), but walk without sharing if it is.
	 */
	if (!(current->flags & PF_EXITING) &&
	    unwind_entry_update(info, 0, UNWIND_CLOSED | UNWIND_SEALED, &old))
		cookie = READ_ONCE(info->cookie);
	unwind_user_cached(info, cookie, trace, read_files);
	return 0;
}

/**
 * unwind_user_faultable - walk the current task's user stack now
 * @trace:	receives the stack; its entries stay valid until the task
 *		returns to user space
 *
 * Shares the walk with deferred requests of the same kernel entry: if the
 * entry was already walked, the cached walk is returned, and requests that
 * follow in this entry reuse this one.
 *
 * Context: Task context, page faults allowed, no lock held that reading
 * a file may take (the walk may read an object's ELF headers).
 * Return: 0, or -EPERM for a task without a user stack.
 */
int unwind_user_faultable(struct unwind_stacktrace *trace)
{
	return unwind_user_walk_now(trace, true);
}
EXPORT_SYMBOL_GPL(unwind_user_faultable);

/**
 * unwind_user_faultable_known - walk the current task's user stack now,
 *				 by the tables already known
 * @trace:	receives the stack; its entries stay valid until the task
 *		returns to user space
 *
 * As unwind_user_faultable(), for callers that may hold locks a file read
 * takes (a sleepable BPF program in an LSM hook that holds an inode's
 * i_rwsem): the walk faults user pages in, as copy_from_user() would,
 * but reads no object's file to find its SFrame table. Text whose table
 * is not known yet is walked as text without one: the frames are exact,
 * and the stack may be shorter than the deferred walk's. Such a walk is
 * not kept for the entry's deferred requests.
 *
 * Context: Task context, page faults allowed.
 * Return: 0, or -EPERM for a task without a user stack.
 */
int unwind_user_faultable_known(struct unwind_stacktrace *trace)
{
	return unwind_user_walk_now(trace, false);
}
EXPORT_SYMBOL_GPL(unwind_user_faultable_known);
