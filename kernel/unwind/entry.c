// SPDX-License-Identifier: GPL-2.0
/*
 * The record of the current kernel entry in the task's state word: the
 * update that every request and walk of the entry makes, which gives the
 * entry its cookie; the hooks that open, close and seal the entry as it
 * moves on (<linux/unwind_deferred_hooks.h>); the walk the entry keeps
 * for all its requests; and the state a task starts and ends with.
 * Nothing here calls a client: the passes that do (the exit work loop's,
 * a flush's, do_exit()'s) are deferred.c's, which calls in here.
 *
 * Contexts:
 *   unwind_entry_update()         any, NMI included; never sleeps or faults
 *   unwind_user_cached()          the current task, may fault
 *   unwind_deferred_close()       the exit path, interrupts disabled
 *   unwind_deferred_open()        the entry hook, or a system call's entry work
 *   unwind_deferred_seal()        any, for the current task
 *   unwind_task_init(), _free()   fork, and the release of a task
 *
 * The state word, who sets and clears each of its bits, and the phases
 * of an entry are described in entry.h.
 */
#include <linux/unwind_deferred.h>
#include <linux/unwind_deferred_hooks.h>
#include <linux/unwind_user.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <asm/local64.h>
#include "entry.h"
#include "feature.h"
#include "walk.h"

/* Kernel entries that requested on each CPU, the low bits of each cookie. */
static DEFINE_PER_CPU(local64_t, unwind_entry_seq);

/* A cookie for a new entry: unique, as each CPU counts its own entries. */
static u64 unwind_new_cookie(void)
{
	guard(preempt_notrace)();
	return unwind_cookie_make(smp_processor_id(),
				  local64_inc_return(this_cpu_ptr(&unwind_entry_seq)));
}

/*
 * The state as it counts for the current entry, read by a hard or soft
 * interrupt (not an NMI). Those never run in the closed phase: interrupts
 * are disabled from the close to user mode, and an interrupt of user mode
 * is an entry of its own, opened by its entry hook. So a CLOSED they find
 * is the mark of the last entry, left for a system call that has enabled
 * interrupts but not yet reached its entry work (which would have opened
 * it): the interrupt opens the entry itself, as unwind_deferred_open()
 * would.
 */
static unsigned long unwind_state_in_irq(unsigned long state)
{
	if (!(state & UNWIND_CLOSED))
		return state;
	if (state & UNWIND_PENDING)
		return state & ~(UNWIND_CLOSED | UNWIND_SEALED);
	return 0;
}

/*
 * Add @set and ACTIVE to the state of the current entry, giving the entry
 * a cookie if it has none (ACTIVE clear), unless the state has a bit of
 * @stop: then return false without a change. A hard or soft interrupt
 * that does not stop at CLOSED opens the entry (unwind_state_in_irq()).
 * On return, *@old is the state as it counted for the entry (after that
 * opening), and info->cookie is the entry's cookie if ACTIVE is now set.
 * An entry that starts sets TIF_NOTIFY_RESUME, so that the exit work loop,
 * at whose end the entry is closed, runs.
 *
 * An interrupt or NMI may run the same steps on top of us at any point,
 * to completion. The cookie is installed with a cmpxchg from the value
 * read before the state, and the state with a cmpxchg from the state read:
 * if a nested request started the entry in between, one of the two fails
 * and we start again, to find ACTIVE set and its cookie in place. Cookies
 * are never reused, so a stale read cannot match. Only the task and what
 * interrupts it on its own CPU write info->cookie, so a CPU-local cmpxchg
 * is enough for it; the state needs a full one, because
 * unwind_deferred_cancel() clears bits of every task from other CPUs.
 */
bool unwind_entry_update(struct unwind_task_info *info, unsigned long set,
			 unsigned long stop, unsigned long *old)
{
	bool in_irq = !in_nmi() && !in_task() && !(stop & UNWIND_CLOSED);
	unsigned long found, cur;
	u64 cookie;

	for (;;) {
		cookie = READ_ONCE(info->cookie);
		found = atomic_long_read(&info->state);
		cur = in_irq ? unwind_state_in_irq(found) : found;
		if (cur & stop) {
			*old = cur;
			return false;
		}
		if (!(cur & UNWIND_ACTIVE) &&
		    !try_cmpxchg64_local(&info->cookie, &cookie,
					 unwind_new_cookie()))
			continue;
		if (atomic_long_try_cmpxchg(&info->state, &found,
					    cur | set | UNWIND_ACTIVE))
			break;
	}
	*old = cur;
	/*
	 * A state that is not clear is closed at the end of the exit work
	 * loop, which runs only if a work flag is set: make sure it runs.
	 */
	if (!(cur & UNWIND_ACTIVE))
		set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);
	return true;
}

/*
 * The user stack of the current entry, walked at most once: the walk is
 * kept in the task's cache under the entry's cookie. A walk that reads
 * no file (!@read_files) and met text whose table it could not look for
 * is not the entry's walk: it is kept under no cookie, and the entry's
 * next walk, which may read files, walks again.
 */
void unwind_user_cached(struct unwind_task_info *info, u64 cookie,
			struct unwind_stacktrace *trace, bool read_files)
{
	bool whole;

	if (!info->cache) {
		info->cache = kcalloc(UNWIND_USER_MAX_DEPTH,
				      sizeof(*info->cache), GFP_KERNEL);
		if (!info->cache) {
			/* Answered all the same, with an empty stack. */
			trace->nr = 0;
			trace->guessed = 0;
			trace->entries = NULL;
			return;
		}
	}
	trace->entries = info->cache;
	/*
	 * Interrupts walk the stack (and fill the walk's per-task copies,
	 * sframe/copies.c) only where ACTIVE and SEALED are clear and the
	 * task is not exiting: no walk of the task may run in that state.
	 */
	WARN_ON_ONCE(!(atomic_long_read(&info->state) &
		       (UNWIND_ACTIVE | UNWIND_SEALED)) &&
		     !(current->flags & PF_EXITING));
	if (!cookie || info->cache_cookie != cookie) {
		whole = unwind_user_walk_current(trace, UNWIND_USER_MAX_DEPTH,
						 read_files);
		info->cache_nr = trace->nr;
		info->cache_guessed = trace->guessed;
		/* An interrupt reads the cache once it is the entry's. */
		barrier();
		WRITE_ONCE(info->cache_cookie, whole ? cookie : 0);
	}
	trace->nr = info->cache_nr;
	trace->guessed = info->cache_guessed;
}

/**
 * unwind_entry_cookie - the cookie of the current kernel entry
 *
 * Gives the entry one if no request has yet, as unwind_user_faultable()
 * does, so that a request later in the entry gets the same.
 *
 * Context: Task context of the current task.
 * Return: the cookie, or 0 for a task without a user stack or exiting.
 */
u64 unwind_entry_cookie(void)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned long old;

	if (unwind_refuses_task(current) || (current->flags & PF_EXITING) ||
	    !unwind_entry_update(info, 0, UNWIND_CLOSED | UNWIND_SEALED, &old))
		return 0;
	return READ_ONCE(info->cookie);
}

/**
 * unwind_deferred_close - end the entry on the way to user space
 * @info:	the current task's state
 *
 * Called through unwind_deferred_exit_to_user() with interrupts disabled,
 * at the end of the exit work loop, when the state is not clear: the task
 * made requests in this entry (or an NMI just did), was walked, or was
 * sealed.
 *
 * Return: true if a request is still to be answered, so the caller must
 * run the exit work loop once more before returning.
 */
bool unwind_deferred_close(struct unwind_task_info *info)
{
	unsigned long old;

	lockdep_assert_irqs_disabled();
	old = atomic_long_read(&info->state);
	do {
		if (old & UNWIND_PENDING) {
			/*
			 * The request set TIF_NOTIFY_RESUME, but make sure:
			 * the loop must reach the pass, or the task would
			 * cycle here for ever.
			 */
			set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);
			return true;
		}
		/* The entry's record ends: its done bits, ACTIVE, cookie. */
	} while (!atomic_long_try_cmpxchg(&info->state, &old, UNWIND_CLOSED));
	/* The next system call opens the next entry in its entry work. */
	set_syscall_work(UNWIND);
	return false;
}

/**
 * unwind_deferred_open - start a new entry for a task whose state is set
 * @info:	the current task's state
 *
 * Called through unwind_deferred_enter_from_user() with interrupts
 * disabled when the state is not clear, and by the entry work of the
 * first system call after an entry that left a record
 * (SYSCALL_WORK_UNWIND), with interrupts enabled. A request still
 * pending was made after the last entry's close, and raised the
 * self-interrupt that brought this entry before any user instruction ran,
 * or was made by an NMI in this system call before it got here: it is
 * this entry's, with its cookie. Anything else (CLOSED, the last entry's
 * done bits) is the last entry's record, and ends here.
 */
void unwind_deferred_open(struct unwind_task_info *info)
{
	unsigned long old, new;

	clear_syscall_work(UNWIND);
	old = atomic_long_read(&info->state);
	do {
		/* An interrupt of this system call opened it already. */
		if (!(old & UNWIND_CLOSED))
			return;
		new = 0;
		if (old & UNWIND_PENDING)
			new = old & ~(UNWIND_CLOSED | UNWIND_SEALED);
	} while (!atomic_long_try_cmpxchg(&info->state, &old, new));
}

/**
 * unwind_deferred_seal - the user stack is about to change in this entry
 *
 * From here until unwind_deferred_unseal(), or the end of the entry,
 * requests are refused (-EAGAIN) and interrupts do not walk the user
 * stack, whose registers are about to be rewritten. Requests accepted
 * before are still queued: unwind_deferred_flush() answers them.
 *
 * Context: Any, for the current task; used under the siglock by
 * ptrace_stop(), which cannot answer requests there.
 * Return: true if requests are queued, for unwind_deferred_flush().
 */
bool unwind_deferred_seal(void)
{
	unsigned long old;

	old = atomic_long_fetch_or(UNWIND_SEALED, &current->unwind_info.state);
	/* The exit work loop ends what this starts. */
	if (!old)
		set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);
	return old & UNWIND_QUEUED_MASK;
}

/**
 * unwind_deferred_unseal - the user stack has changed
 *
 * Ends what unwind_deferred_flush() or unwind_deferred_seal() began:
 * requests from here on are walked on the new stack.
 *
 * Context: Task context of the current task.
 */
void unwind_deferred_unseal(void)
{
	atomic_long_andnot(UNWIND_SEALED, &current->unwind_info.state);
}

/**
 * unwind_task_init - start a new task with nothing pending
 * @task:	the new task, a copy of its parent
 */
void unwind_task_init(struct task_struct *task)
{
	struct unwind_task_info *info = &task->unwind_info;

	atomic_long_set(&info->state, 0);
	clear_task_syscall_work(task, UNWIND);
	info->cookie = 0;
	info->cache = NULL;
	info->cache_nr = 0;
	info->cache_guessed = 0;
	info->cache_cookie = 0;
	info->features = NULL;
	/* info->guess is the parent's: children guess if it did. */
}

/**
 * unwind_task_free - release a task's unwinding cache
 * @task:	the task being freed
 */
void unwind_task_free(struct task_struct *task)
{
	kfree(task->unwind_info.cache);
	unwind_features_task_free(task);
}
