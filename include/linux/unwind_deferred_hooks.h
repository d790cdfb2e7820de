/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deferred user space stack unwinding: the hooks of the code that starts,
 * changes and ends a task's user context (fork, exec, signal delivery,
 * exit) and of the entry code, which open and close each kernel entry and
 * answer its requests on the way out. Clients use <linux/unwind_deferred.h>.
 */
#ifndef _LINUX_UNWIND_DEFERRED_HOOKS_H
#define _LINUX_UNWIND_DEFERRED_HOOKS_H

#include <linux/atomic.h>
#include <linux/sched.h>
#include <linux/unwind_deferred_types.h>

struct pt_regs;
struct task_struct;

#ifdef CONFIG_UNWIND_USER

void unwind_task_init(struct task_struct *task);
void unwind_task_free(struct task_struct *task);
void unwind_deferred_flush(void);
bool unwind_deferred_seal(void);
void unwind_deferred_unseal(void);
void unwind_deferred_task_exit(void);
void unwind_deferred_open(struct unwind_task_info *info);
bool unwind_deferred_close(struct unwind_task_info *info);
void unwind_deferred_run(struct unwind_task_info *info);
void unwind_deferred_resume(struct unwind_task_info *info, bool to_guest);

/**
 * unwind_deferred_enter_from_user - an interrupt or exception entry begins
 *
 * Called from irqentry_enter_from_user_mode(), with interrupts disabled,
 * inside an instrumentable section. A task whose state is clear, every
 * task that never asked for its stack among them, pays this load and
 * branch and nothing else. Otherwise the last entry left a record, or an
 * NMI (or the exit path's own code) asked for this entry:
 * unwind_deferred_open() sorts them out. System calls need no hook: the
 * entry that leaves a record sets SYSCALL_WORK_UNWIND, and the system
 * call's entry work opens the next entry.
 */
static __always_inline void unwind_deferred_enter_from_user(void)
{
	struct unwind_task_info *info = &current->unwind_info;

	if (unlikely(atomic_long_read(&info->state)))
		unwind_deferred_open(info);
}

/**
 * unwind_deferred_syscall_enter - a system call after a recorded entry
 *
 * Called from syscall_trace_enter() when SYSCALL_WORK_UNWIND is set: the
 * last entry left a record, which this entry starts without.
 */
static inline void unwind_deferred_syscall_enter(void)
{
	unwind_deferred_open(&current->unwind_info);
}

/**
 * unwind_deferred_exit_to_user - the kernel entry ends
 *
 * Called at the end of exit_to_user_mode_loop(), with interrupts disabled,
 * once no work is left. Every entry that changes the task's state also
 * sets TIF_NOTIFY_RESUME, so an exit that runs no work loop has nothing
 * to close, and costs nothing here. Otherwise the entry's record ends and
 * the task is closed until its next entry.
 *
 * Return: true if a request is still to be answered (an NMI slipped one in
 * after the loop's last check); the caller runs the work loop again.
 */
static __always_inline bool unwind_deferred_exit_to_user(void)
{
	struct unwind_task_info *info = &current->unwind_info;

	if (likely(!atomic_long_read(&info->state)))
		return false;
	return unwind_deferred_close(info);
}

/**
 * unwind_deferred_resume_user - answer this entry's requests
 * @regs:	the user registers, or NULL on the way into a guest
 *
 * Called from resume_user_mode_work(), in task context on the way to user
 * space (or into a guest), when TIF_NOTIFY_RESUME was set: requests set it
 * and mark the state PENDING, which unwind_deferred_resume() checks.
 */
static inline void unwind_deferred_resume_user(struct pt_regs *regs)
{
	struct unwind_task_info *info = &current->unwind_info;

	if (unlikely(atomic_long_read(&info->state)))
		unwind_deferred_resume(info, !regs);
}

#else /* !CONFIG_UNWIND_USER */

static inline void unwind_task_init(struct task_struct *task) { }
static inline void unwind_task_free(struct task_struct *task) { }
static inline void unwind_deferred_flush(void) { }
static inline bool unwind_deferred_seal(void) { return false; }
static inline void unwind_deferred_unseal(void) { }
static inline void unwind_deferred_task_exit(void) { }
static inline void unwind_deferred_enter_from_user(void) { }
static inline void unwind_deferred_syscall_enter(void) { }
static inline bool unwind_deferred_exit_to_user(void) { return false; }
static inline void unwind_deferred_resume_user(struct pt_regs *regs) { }

#endif /* CONFIG_UNWIND_USER */

#endif /* _LINUX_UNWIND_DEFERRED_HOOKS_H */
