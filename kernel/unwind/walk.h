/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user stack walk's own state, which only kernel/unwind reads: where
 * the walk stands (struct unwind_user_pos, the part the architecture's
 * code shares), the description of the frame it steps by, and each
 * format's cursor, which the format's own header declares.
 */
#ifndef _KERNEL_UNWIND_WALK_H
#define _KERNEL_UNWIND_WALK_H

#include <linux/errno.h>
#include <linux/unwind_user_types.h>
#include "code_cursor.h"
#include "sframe/cursor.h"

struct pt_regs;

/**
 * struct unwind_user_state - where a user stack walk stands
 * @pos:	the frame the walk stands at, in the task's user mode
 * @frames:	entries the walk has stored: formats bound their work by it
 * @last_record: CFA of the last frame-pointer record stepped, 0 if none
 * @above_sp:	a frame was stepped by a table's description: later
 *		frame-pointer records must lie at or above the stack pointer
 * @guess:	where the walk stops early, scan the stack for more frames
 *		(set by the caller after unwind_user_start())
 * @frame:	the description the walk steps by (struct unwind_user_frame)
 * @sframe:	the SFrame format's cursor (sframe/cursor.h)
 * @code:	the code reading's cursor (code_cursor.h)
 * @marked_from: entries from this one on rest on a convention: a format
 *		found their first frame by one, not by what it read. The
 *		walk counts them with the guessed ones (UINT_MAX: none)
 * @no_files:	the walk may fault but reads no object's file: the caller
 *		may hold locks that reading it takes
 *		(unwind_user_faultable_known())
 * @files_skipped: set by a walk with @no_files that met text whose table
 *		a walk reading files could have found: exact, but maybe shorter
 * @in_table_gap: the IP is in an object whose table, given for its file
 *		(converted from its CFI), does not describe it, or whose
 *		row for it is one the walk cannot step by (set by the SFrame
 *		format): a frame-pointer record there rests on a convention
 */
struct unwind_user_state {
	struct unwind_user_pos pos;
	unsigned int	frames;
	unsigned long	last_record;
	bool		above_sp;
	bool		guess;
	struct unwind_user_frame frame;
	struct unwind_sframe_cursor sframe;
	struct unwind_code_cursor code;
	unsigned int	marked_from;
	bool		no_files;
	bool		files_skipped;
	bool		in_table_gap;
};

#ifdef CONFIG_UNWIND_USER

void unwind_user_start(struct unwind_user_state *state, struct pt_regs *regs);
void unwind_user_start_nofault(struct unwind_user_state *state,
			       struct pt_regs *regs);
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max);
bool unwind_user_walk_current(struct unwind_stacktrace *trace,
			      unsigned int max, bool read_files);

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

static inline bool unwind_user_walk_current(struct unwind_stacktrace *trace,
					    unsigned int max, bool read_files)
{
	trace->nr = 0;
	return true;
}

#endif /* CONFIG_UNWIND_USER */

/* Guessed frames where a walk stops early (guess.c). */
#ifdef CONFIG_UNWIND_USER_GUESS
void unwind_user_guess(struct unwind_user_state *state,
		       struct unwind_stacktrace *trace, unsigned int max);
#else
static inline void unwind_user_guess(struct unwind_user_state *state,
				     struct unwind_stacktrace *trace,
				     unsigned int max) { }
#endif

#endif /* _KERNEL_UNWIND_WALK_H */
