// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_USER_STACK_READ): the calling thread reads its own user stack.
 *
 * Crash handlers, allocation profilers and loggers call backtrace(), which
 * unwinds by DWARF in user space: slow, not async-signal-safe on its first
 * call (it loads libgcc_s), and blind where .eh_frame is missing. The
 * kernel already has a walker for every deferred client; this hands its
 * result to the thread itself. It is async-signal-safe by construction
 * (one system call, no user-space state), and shares the walk of the
 * entry with that entry's deferred requests (unwind_user_faultable()).
 *
 * A prctl rather than a new system call: x86-64 system call numbers are
 * handed out upstream in order, and any number taken here would sooner or
 * later collide; the option value spells a tag ("USTR") as PR_SET_VMA's
 * does. seccomp filters it like any prctl, by its first argument.
 *
 * Only the calling thread's own stack is ever read: there is no pid
 * argument, so no new way to look at another task.
 */
#include <linux/minmax.h>
#include <linux/prctl.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_self.h>

/**
 * unwind_user_read_self - copy the calling thread's user stack to it
 * @buf:	user address of an array of u64 entries
 * @size:	number of entries @buf holds; 0 asks how many there are
 * @skip:	innermost entries to leave out
 * @zero:	must be 0 (room for flags)
 *
 * Entry 0 is the user IP after the system call, then one return address
 * per frame, as every deferred client gets them; entries guessed by
 * scanning the stack (PR_SET_USER_STACK_GUESS) carry PR_USER_STACK_GUESSED.
 * Nothing is written past @size entries; a fault leaves the entries
 * before it written.
 *
 * Context: Task context (the prctl system call), page faults allowed.
 * Return: the number of entries stored; for @size 0, the number there are
 * after @skip; -EINVAL if @zero is not 0, -EFAULT if @buf cannot be
 * written, -EPERM for a task without a user stack.
 */
int unwind_user_read_self(unsigned long buf, unsigned long size,
			  unsigned long skip, unsigned long zero)
{
	u64 __user *out = (u64 __user *)buf;
	struct unwind_stacktrace trace;
	unsigned int i, n;
	int ret;

	if (zero)
		return -EINVAL;
	ret = unwind_user_faultable(&trace);
	if (ret)
		return ret;
	n = skip < trace.nr ? trace.nr - skip : 0;
	if (!size)
		return n;
	n = min_t(unsigned long, n, size);
	if (!n)
		return 0;
	/*
	 * The entries are the task's walk cache; it changes only when this
	 * task walks again, which a fault taken here cannot make it do.
	 */
	if (!user_write_access_begin(out, n * sizeof(*out)))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		u64 ip = trace.entries[skip + i];

		if (skip + i >= trace.nr - trace.guessed)
			ip |= PR_USER_STACK_GUESSED;
		unsafe_put_user(ip, &out[i], fault);
	}
	user_write_access_end();
	return n;
fault:
	user_write_access_end();
	return -EFAULT;
}
