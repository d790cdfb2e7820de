/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User space stack walker. It reads user memory and may fault, so it runs
 * only in task context with page faults allowed; the deferred unwinder
 * (<linux/unwind_deferred.h>) is how other contexts get a user stack.
 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/unwind_user_types.h>

struct task_struct;

/*
 * Most entries one walk returns: the interrupted IP and 511 return
 * addresses. Deeper stacks end at this limit, with their innermost frames.
 */
#define UNWIND_USER_MAX_DEPTH	512

struct pt_regs;

/*
 * The linear address of @off in a segment at @base. A compat task's
 * addresses wrap at 4 GiB, as the CPU computes them in its 32-bit mode.
 */
static inline unsigned long unwind_user_addr(const struct unwind_user_pos *pos,
					     unsigned long base, unsigned long off)
{
	unsigned long addr = base + off;

	return pos->ws == 4 ? (u32)addr : addr;
}

/* The IP the walk stands at, as a linear address. */
static inline unsigned long unwind_user_ip(const struct unwind_user_pos *pos)
{
	return unwind_user_addr(pos, pos->ip_base, pos->ip);
}

/**
 * unwind_user_copy - copy user memory for a walk
 * @dst:	the kernel buffer
 * @src:	the user address
 * @len:	how many bytes
 *
 * A walk that may fault copies with copy_from_user(). One that may not
 * (page faults disabled: an interrupt's walk, NMI included) takes the
 * in-atomic copy, which never faults and never consults usercopy fault
 * injection, whose should_fail() takes locks and is not NMI-safe.
 *
 * Context: Any; faults only where page faults are allowed.
 * Return: the number of bytes not copied.
 */
static inline unsigned long unwind_user_copy(void *dst,
					     const void __user *src,
					     unsigned long len)
{
	if (!pagefault_disabled())
		return copy_from_user(dst, src, len);
	if (!access_ok(src, len))
		return len;
	return __copy_from_user_inatomic(dst, src, len);
}

/**
 * unwind_user_read_failed - a read of user memory by the walk failed
 * @pos:	where the walk stands
 * @addr:	the user address it could not read
 *
 * A walk that may fault failed because nothing readable is there, and
 * ends as it would anyway. A walk that may not (@pos->nofault) may
 * also have met a page that is mapped but not present, or swapped out:
 * unless no readable mapping holds @addr, it is blocked.
 *
 * Context: Any the walk runs in; no lock, no fault.
 */
static inline void unwind_user_read_failed(struct unwind_user_pos *pos,
					   unsigned long addr)
{
	unsigned long start, end;
	vm_flags_t flags;

	if (!pos->nofault)
		return;
	if (!vma_flags_under_rcu(current->mm, addr, &flags, &start, &end) ||
	    (flags & (VM_READ | VM_WRITE | VM_EXEC)))
		pos->blocked = true;
}

/**
 * unwind_user_maybe_text - may @addr be in executable memory?
 * @addr:	a user address of the current task
 *
 * For a walk that may not fault, which takes no lock to look.
 *
 * Return: false if no executable mapping holds @addr; true if one does,
 * or if that cannot be told without a lock.
 */
static inline bool unwind_user_maybe_text(unsigned long addr)
{
	unsigned long start, end;
	vm_flags_t flags;

	return !vma_flags_under_rcu(current->mm, addr, &flags, &start, &end) ||
	       (flags & VM_EXEC);
}

/* prctl() of guessed frames (kernel/unwind/guess.c). */
#ifdef CONFIG_UNWIND_USER_GUESS

int unwind_user_guess_prctl(int option, unsigned long arg2,
			    unsigned long arg3, unsigned long arg4,
			    unsigned long arg5);

#else /* !CONFIG_UNWIND_USER_GUESS */

static inline int unwind_user_guess_prctl(int option, unsigned long arg2,
					  unsigned long arg3,
					  unsigned long arg4,
					  unsigned long arg5)
{
	return -EINVAL;
}

#endif /* CONFIG_UNWIND_USER_GUESS */

#endif /* _LINUX_UNWIND_USER_H */
