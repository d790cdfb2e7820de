/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User space stack walker. It reads user memory and may fault, so it runs
 * only in task context with page faults allowed; the deferred unwinder
 * (<linux/unwind_deferred.h>) is how other contexts get a user stack.
 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/errno.h>
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
static inline unsigned long unwind_user_addr(const struct unwind_user_state *state,
					     unsigned long base, unsigned long off)
{
	unsigned long addr = base + off;

	return state->ws == 4 ? (u32)addr : addr;
}

#ifdef CONFIG_UNWIND_USER

void unwind_user_start(struct unwind_user_state *state, struct pt_regs *regs);
void unwind_user_start_nofault(struct unwind_user_state *state,
			       struct pt_regs *regs);
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max);
void unwind_user_read_failed(struct unwind_user_state *state,
			     unsigned long addr);
unsigned long unwind_user_copy(void *dst, const void __user *src,
			       unsigned long len);
bool unwind_user_maybe_text(unsigned long addr);

#else /* !CONFIG_UNWIND_USER */

static inline void unwind_user_start(struct unwind_user_state *state,
				     struct pt_regs *regs) { }
static inline int unwind_user_walk(struct unwind_user_state *state,
				   struct unwind_stacktrace *trace,
				   unsigned int max)
{
	trace->nr = 0;
	return -EOPNOTSUPP;
}

#endif /* CONFIG_UNWIND_USER */

/* What the walk asks of the SFrame registry (kernel/unwind/sframe_*.c). */
#ifdef CONFIG_UNWIND_USER_SFRAME

bool unwind_sframe_covers(struct unwind_user_state *state, unsigned long ra);
bool unwind_sframe_has_tables(void);
bool unwind_sframe_known_text(unsigned long addr, unsigned long *start,
			      unsigned long *end);
void unwind_sframe_task_free(struct task_struct *task);

#else /* !CONFIG_UNWIND_USER_SFRAME */

static inline bool unwind_sframe_covers(struct unwind_user_state *state,
					unsigned long ra)
{
	return false;
}

static inline bool unwind_sframe_has_tables(void)
{
	return false;
}

static inline bool unwind_sframe_known_text(unsigned long addr,
					    unsigned long *start,
					    unsigned long *end)
{
	return false;
}

static inline void unwind_sframe_task_free(struct task_struct *task) { }

#endif /* CONFIG_UNWIND_USER_SFRAME */

/* Guessed frames where a walk stops early (kernel/unwind/guess.c). */
#ifdef CONFIG_UNWIND_USER_GUESS

void unwind_user_guess(struct unwind_user_state *state,
		       struct unwind_stacktrace *trace, unsigned int max);
int unwind_user_guess_prctl(int option, unsigned long arg2,
			    unsigned long arg3, unsigned long arg4,
			    unsigned long arg5);

#else /* !CONFIG_UNWIND_USER_GUESS */

static inline void unwind_user_guess(struct unwind_user_state *state,
				     struct unwind_stacktrace *trace,
				     unsigned int max) { }
static inline int unwind_user_guess_prctl(int option, unsigned long arg2,
					  unsigned long arg3,
					  unsigned long arg4,
					  unsigned long arg5)
{
	return -EINVAL;
}

#endif /* CONFIG_UNWIND_USER_GUESS */

/* Frames read from their code (kernel/unwind/code.c). */
#ifdef CONFIG_UNWIND_USER_CODE_FRAMES
void unwind_code_task_free(struct task_struct *task);
#else
static inline void unwind_code_task_free(struct task_struct *task) { }
#endif

#endif /* _LINUX_UNWIND_USER_H */
