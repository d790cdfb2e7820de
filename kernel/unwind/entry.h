/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The current kernel entry as the task's state word records it: what the
 * core (deferred.c, entry.c) shares with nofault.c, which answers an entry's
 * requests at once from interrupts. Internal to kernel/unwind.
 *
 * Per-task state (unwind_task_info::state, one atomic_long_t, changed with
 * atomic_long_*() operations only; the entry and exit hooks only read it
 * unless it is non-zero):
 *
 *   bits		set by				cleared by
 *   queued[i]		request of client i		the pass, which moves it to
 *							done[i]; cancel of client i
 *   done[i]		the pass			close, flush, open; cancel
 *   ACTIVE		first request of the entry,	close, flush, open
 *			unwind_user_faultable(),
 *			unwind_user_nofault()
 *			(info->cookie is the entry's)
 *   PENDING		the request that sets		the pass
 *			TIF_NOTIFY_RESUME for a pass
 *   CLOSED		close, at the exit of an entry	open, at the next entry
 *			that left a record (with	(which clears the flag)
 *			SYSCALL_WORK_UNWIND)
 *   SEALED		flush, where the user state	unseal once it has changed;
 *			is about to change		close; open
 *
 * Only the task, and interrupts and NMIs on top of it, touch its state;
 * cancel clears one client's bits in every task. The pass,
 * unwind_deferred_run() in the exit work loop, takes the queued bits,
 * walks once per entry (cached under the cookie) and calls the clients it
 * took; a later request asks for another pass, which reuses the walk,
 * unless its client was called already (UNWIND_ALREADY_DONE).
 *
 * What every task pays. An interrupt or exception entry from user mode
 * reads the state and branches; a system call's entry reads nothing more
 * than its syscall work flags, which it reads anyway: an entry that leaves
 * a record sets SYSCALL_WORK_UNWIND, and the next system call's entry work
 * opens (unwind_deferred_open()). The exit hook runs at the end of the
 * exit work loop: every change of a clear state sets TIF_NOTIFY_RESUME,
 * so an exit without work has nothing to close. A task whose state is
 * clear, as it is for every task that never asked, writes nothing. That
 * leaves the state of such a task clear also after the exit work loop, on
 * the rest of the way out and in user mode, where a request belongs to
 * the next entry, not this one (its callback can no longer run before the
 * return). Only two kinds of
 * context can be there: an NMI (or an exception that runs like one, as
 * int3 does for kprobes), and the exit path's own code after the hook,
 * which is task context with interrupts disabled. So the first request of
 * an entry made from either kind of context raises a self-interrupt
 * (unwind_kick): if the task was on its way out, or in user mode, the
 * interrupt is taken before the task runs a user instruction, and the
 * entry it makes answers the request with the user state the request saw.
 * If the task was not, the interrupt comes in kernel mode and costs no
 * more than that. unwind_deferred_open() keeps such a request for the
 * entry it starts, and drops everything else of the last entry.
 *
 * The phases of a task, and what a request made in each leads to:
 *
 *   open	from the entry hook to the exit work loop's last pass: the
 *		request is answered by the loop, with this entry's stack.
 *   sealed	from a flush to the change it announces: the request is
 *		refused with -EAGAIN, as its stack would be walked on user
 *		registers that are being rewritten.
 *   closed	from the close of an entry that left a record, through
 *		user mode, to the next entry hook. A request from an NMI is
 *		for the next entry, which the self-interrupt brings at once.
 *		Other requests can only come from the exit path's own code
 *		(tracepoints, kprobes), once on every exit, so forcing an
 *		entry for them too could keep the task from ever running user
 *		code: they are refused with -EAGAIN, and callers fall back.
 *		An entry forced for the exit path's request of a task whose
 *		state was clear (above) leaves a record, so the exit path's
 *		next request is refused: at most every other exit is forced.
 *
 * An interrupt (not an NMI) cannot come in the closed phase: interrupts
 * are disabled from the exit work loop's end to user mode, and an
 * interrupt of user mode is an entry of its own, which the entry hook
 * opened. One that finds CLOSED came in a system call before its entry
 * work opened it, and opens it itself (unwind_state_in_irq()).
 *
 * execve(), signal delivery, sigreturn and a tracer's writes to a stopped
 * task change the user stack within one entry: they seal the entry,
 * pending requests are answered first with the old stack, requests are
 * refused until the change is done, and the next request gets a new
 * cookie for the new stack.
 * (Another thread writing to the stack memory is not seen: as for any
 * walk, the stack is read as it is then.)
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

/* The entry's walk, kept in the task's cache (entry.c). */
struct unwind_stacktrace;
void unwind_user_cached(struct unwind_task_info *info, u64 cookie,
			struct unwind_stacktrace *trace, bool read_files);

#endif /* _KERNEL_UNWIND_ENTRY_H */
