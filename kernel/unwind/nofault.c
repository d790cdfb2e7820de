// SPDX-License-Identifier: GPL-2.0
/*
 * Answers from interrupts, at once: the walk of the stack of an
 * interrupted user mode that takes no fault (unwind_user_nofault()),
 * and the stack the pass kept for the entry (unwind_user_entry_stack()).
 * They join the entry's record in the task's state word (entry.h; its
 * rules are in entry.h), and share the walk the core keeps
 * for the entry.
 */
#include <linux/minmax.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <asm/syscall.h>
#include <asm/tlb.h>
#include "entry.h"
#include "feature.h"
#include "walk.h"

/*
 * Copy the entry's cached walk, if the cache holds it, for another
 * interrupt of the same entry. The task writes the cache beneath us only
 * while cache_cookie is not yet the entry's (see unwind_user_cached()).
 */
static bool unwind_user_copy_cached(struct unwind_task_info *info, u64 cookie,
				    struct unwind_stacktrace *trace,
				    unsigned int max)
{
	if (!info->cache || READ_ONCE(info->cache_cookie) != cookie ||
	    READ_ONCE(info->cache_guessed))
		return false;
	barrier();
	trace->nr = min(READ_ONCE(info->cache_nr), max);
	memcpy(trace->entries, info->cache, trace->nr * sizeof(*info->cache));
	return true;
}

/*
 * May an interrupt with @regs join the current entry? An interrupt that is
 * not an NMI is always inside an open entry (see entry.h). An
 * NMI is not, if it came in user mode, and may not be, if it came in
 * kernel mode with interrupts disabled: on the way out, a task whose state
 * is clear has no CLOSED bit to tell.
 */
static bool unwind_nofault_may_join(struct pt_regs *regs)
{
	if (!in_nmi())
		return true;
	return IS_ENABLED(CONFIG_ARCH_HAVE_NMI_SAFE_CMPXCHG) &&
	       !user_mode(regs) && !regs_irqs_disabled(regs);
}

/*
 * The walk itself, out of line: its state is some 400 bytes, which a
 * kernel that zeroes stack variables (CONFIG_INIT_STACK_ALL_ZERO, as
 * distributions build) clears on entry. The checks before it, and the
 * copy of a kept walk, do not pay for that. True if the walk is whole.
 */
static noinline bool unwind_nofault_walk(struct pt_regs *regs,
					 struct unwind_task_info *info,
					 struct unwind_stacktrace *trace,
					 unsigned int max)
{
	struct unwind_user_state state;

	unwind_user_start_nofault(&state, regs);
	state.guess = READ_ONCE(info->guess);
	pagefault_disable();
	unwind_user_walk(&state, trace, max);
	pagefault_enable();
	if (state.pos.blocked)
		trace->nr = 0;
	return !state.pos.blocked;
}

/**
 * unwind_user_nofault - walk the user stack of the entry an interrupt is in
 * @regs:	the interrupt's registers, of the current task
 * @trace:	receives the stack, in the caller's @trace->entries
 * @max:	most entries to store
 *
 * An interrupt of user mode (a sample of a task running its own code) is
 * a kernel entry of its own: a deferred request from it is answered at
 * its return, with a walk and a record for that one sample. This walks
 * it at once instead, with the same walker and the same result, taking
 * no fault, lock or allocation. Where the result could differ from the
 * deferred walk's (a page of the stack or of a table mapped but not
 * present, text the SFrame registry has not met yet, the task's first
 * walk, more table rows than an interrupt may read), or where the answer
 * carries more than a stack (guessed frames, a runtime's report by
 * signal, which need the request's cookie), it returns -EAGAIN with no
 * entry: the caller then makes the deferred request, whose walk also
 * brings in what was missing, so that later samples are walked here.
 * Frames that rest on a convention (a frame-pointer record in the gap of
 * a table) are counted in @trace->guessed, as the deferred walk counts
 * them: the caller reports them marked.
 *
 * An interrupt of kernel mode is walked here only if it is the first
 * request of an entry that is no system call (a page fault, an interrupt
 * of user mode), from the entry's user registers: such entries are short
 * and mostly sampled once, so a deferred record would cost more than the
 * stack. The walk is kept under the entry's cookie: the entry's later
 * requests (deferred ones included) are answered with it, and walk no
 * more; later interrupts of the entry get a copy of it here. A system
 * call, often sampled many times, and an entry that already has a request
 * but no kept walk are left to the deferred walk (-EAGAIN).
 *
 * Context: Any: NMI, IRQ, or task context with user registers.
 * Return: the number of entries stored, or -EAGAIN (defer instead),
 * -EPERM for a task without a user stack.
 */
int unwind_user_nofault(struct pt_regs *regs, struct unwind_stacktrace *trace,
			unsigned int max)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct pt_regs *irq_regs = regs;
	bool kernel = !user_mode(regs);
	unsigned long old = 0;
	u64 cookie = 0;

	trace->nr = 0;
	trace->guessed = 0;
	if (unwind_refuses_task(current) || (current->flags & PF_EXITING))
		return -EPERM;
	/* Under a switch of page tables, user addresses are not the task's. */
	if (!nmi_uaccess_okay() || unwind_pass_wanted())
		return -EAGAIN;
	if (kernel) {
		regs = task_pt_regs(current);
		if (syscall_get_nr(current, regs) >= 0)
			return -EAGAIN;
	}

	/*
	 * Join the entry, unless the task is closed or may be: an NMI in
	 * user mode, or one with interrupts disabled where the task may be
	 * on its way out (the entry then is the next one), or sealed (the
	 * registers are being rewritten).
	 */
	if (unwind_nofault_may_join(irq_regs) &&
	    unwind_entry_update(info, 0, in_nmi() || in_task() ?
				UNWIND_CLOSED | UNWIND_SEALED : UNWIND_SEALED,
				&old))
		cookie = READ_ONCE(info->cookie);
	if (cookie && (old & UNWIND_ACTIVE) &&
	    unwind_user_copy_cached(info, cookie, trace, max))
		return trace->nr;
	if (kernel && (!cookie || (old & UNWIND_ACTIVE)))
		return -EAGAIN;

	if (!unwind_nofault_walk(regs, info, trace, max))
		return -EAGAIN;

	/*
	 * The entry's first walk, whole: keep it for its later requests.
	 * Nothing of the task uses the cache while the entry has no request
	 * but the one just made (ACTIVE was clear).
	 */
	if (cookie && !(old & UNWIND_ACTIVE) && info->cache &&
	    trace->nr < max) {
		memcpy(info->cache, trace->entries,
		       trace->nr * sizeof(*info->cache));
		info->cache_nr = trace->nr;
		info->cache_guessed = trace->guessed;
		barrier();
		WRITE_ONCE(info->cache_cookie, cookie);
	}
	return trace->nr;
}
EXPORT_SYMBOL_GPL(unwind_user_nofault);

/**
 * unwind_user_entry_stack - the stack of an entry whose pass already ran
 * @cookie:	the entry's cookie, as unwind_deferred_request() gave it
 * @trace:	receives the stack, in the caller's @trace->entries
 * @max:	most entries to store
 *
 * A request answered %UNWIND_ALREADY_DONE comes after its client's
 * callback ran for this entry: its answer went out before the request was
 * made, to whatever the client had then. A client that must answer this
 * request too (perf, for a buffer that was not there or a sample that
 * came after the record) takes the entry's stack here: the pass walked it
 * and keeps it under @cookie until the entry ends, and no walk of the
 * entry writes it again (a request finds the pass done only while ACTIVE
 * is set and SEALED clear, where every walk is the entry's and reuses the
 * kept one). Guessed entries are counted in @trace->guessed, as in the
 * callback's trace.
 *
 * Context: Any, NMI included; current task, after a request of this entry.
 * Return: the number of entries stored, or -EAGAIN if the entry's stack is
 * not kept under @cookie (the entry ended, or its walk was not kept).
 */
int unwind_user_entry_stack(u64 cookie, struct unwind_stacktrace *trace,
			    unsigned int max)
{
	struct unwind_task_info *info = &current->unwind_info;
	unsigned int nr, walked;

	trace->nr = 0;
	trace->guessed = 0;
	if (!cookie || !info->cache || READ_ONCE(info->cookie) != cookie ||
	    READ_ONCE(info->cache_cookie) != cookie ||
	    !(atomic_long_read(&info->state) & UNWIND_ACTIVE))
		return -EAGAIN;
	/* Pairs with the barrier() before cache_cookie is written. */
	barrier();
	nr = READ_ONCE(info->cache_nr);
	walked = nr - min(READ_ONCE(info->cache_guessed), nr);
	trace->nr = min(nr, max);
	trace->guessed = trace->nr > walked ? trace->nr - walked : 0;
	memcpy(trace->entries, info->cache, trace->nr * sizeof(*info->cache));
	return trace->nr;
}
EXPORT_SYMBOL_GPL(unwind_user_entry_stack);
