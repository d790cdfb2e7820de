/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SFrame format of user stack unwinding: the frame at an IP, as the
 * row of the IP's SFrame table gives it, for 64-bit tasks. The walk
 * (user.c) asks this format first at every frame (format.h), and frame
 * pointers (fp.c) where it has nothing.
 *
 * The section and row of the last lookup are held in the walk's state,
 * and the task keeps copies of the lookups of its earlier walks
 * (sframe/copies.c): the frames of one object look its section up once,
 * the frames of a recursion share one row, and a stack walked before
 * costs about what frame pointers cost. That common answer is inline
 * here, as the walk asks at every frame and a call per frame shows in a
 * deep walk; table lookups are in sframe/lookup.c.
 *
 * Task context, page faults allowed: tables and stack are user memory.
 */
#ifndef _KERNEL_UNWIND_SFRAME_FRAME_H
#define _KERNEL_UNWIND_SFRAME_FRAME_H

#include "sframe.h"
#include "../walk.h"

/*
 * Make state->sframe.held the description of the row for @pc. The frames
 * of a recursion share the row of their return address, and the first
 * frame's check of its caller (unwind_sframe_covers()) finds the row the
 * next step uses. Inline: the walk asks at every frame in text with a
 * table, and the row the task kept from an earlier walk (sframe/copies.c)
 * is the common answer, used where it is kept. A lookup, which may
 * replace kept rows, always holds its own copy.
 */
static __always_inline int sframe_walk_row(struct unwind_user_state *state,
					   unsigned long pc, bool discover)
{
	const struct sframe_row_copy *copy;

	if (pc && pc == state->sframe.pc)
		return 0;
	state->sframe.pc = 0;
	if (sframe_in_sec(state, pc) && sframe_sec_usable(&state->sframe.sec)) {
		/* The task's walks meet the same call sites again and again. */
		copy = sframe_row_find(pc);
		if (copy) {
			state->sframe.held = &copy->frame;
			state->sframe.pc = pc;
			return 0;
		}
	}
	return sframe_walk_lookup(state, pc, discover);
}

/**
 * unwind_sframe_covers - does a table describe the code at a return address?
 * @state:	the walk (its word size)
 * @ra:		a return address
 *
 * Only text the registry knows counts: @ra is a word from the stack that
 * may be no address at all, and finding out by reading the mapping would
 * take the mmap lock in every walk that starts in a leaf. The registry
 * knows the executable and its interpreter from exec, and other objects
 * once a walk has passed through them.
 *
 * Context: Task context, page faults allowed.
 * Return: true if an SFrame row covers the call before @ra.
 */
static __always_inline bool
unwind_sframe_covers(struct unwind_user_state *state, unsigned long ra)
{
	return state->pos.ws == 8 && ra &&
	       !sframe_walk_row(state, ra - 1, false);
}

/**
 * unwind_sframe_frame - the frame at an IP, by its SFrame row
 * @state:	the walk, at the frame
 * @topmost:	the frame is the interrupted one, not at a return address
 * @framep:	set to the held row's description, for this IP only
 *
 * Where no table covers the IP, says so and narrows the range of the
 * walk's description (state->frame) to the text it knows has no table
 * (the whole object, if it has none), so that the frame-pointer steps
 * after it run through that text at once. Where the IP's object has a
 * table given for its file (PR_SFRAME_FILE_ADD: converted from the
 * object's CFI) that leaves it out, says that too (state->in_table_gap).
 *
 * A row the walk cannot step by (a CFA off a register it does not
 * have, as in ld.so's trampolines, or a signal frame's, which is no call
 * frame) is a gap too: the table describes that code, but not in a way
 * this walk can use, so it is stepped as code the table leaves out
 * (past the signal frame the kernel wrote, or by frame pointers,
 * marked), not ended there.
 *
 * Context: Task context, page faults allowed.
 * Return: UNWIND_USER_FRAME (an outermost row's description says so);
 * UNWIND_USER_UNKNOWN if no table covers the IP, or its row is one the
 * walk cannot step by; UNWIND_USER_STOP if the table is bad or the walk
 * has read its budget of rows.
 */
static __always_inline enum unwind_user_step
unwind_sframe_frame(struct unwind_user_state *state, bool topmost,
		    const struct unwind_user_frame **framep)
{
	/* A return address may be past the end of a function that calls. */
	unsigned long pc = topmost ? state->pos.ip : state->pos.ip - 1;
	const struct unwind_sframe_sec *sec = &state->sframe.sec;
	struct unwind_user_frame *frame;
	int ret;

	state->in_table_gap = false;
	if (state->pos.ws != 8)
		return UNWIND_USER_UNKNOWN;
	ret = sframe_walk_row(state, pc, true);
	if (ret == -ENOENT) {
		frame = &state->frame;
		if (sframe_in_sec(state, pc) && !sframe_sec_usable(sec)) {
			/* An object without a table: all its text. */
			frame->pc_start = sec->text_start;
			frame->pc_end = sec->text_end;
			frame->known_text = sframe_sec_known(state);
		} else {
			/* Code its table does not cover: this frame only. */
			frame->pc_start = pc;
			frame->pc_end = pc;
			state->in_table_gap = sframe_in_sec(state, pc) &&
					      sec->kbuf;
		}
		return UNWIND_USER_UNKNOWN;
	}
	if (ret == -EOPNOTSUPP) {
		state->frame.pc_start = pc;
		state->frame.pc_end = pc;
		state->in_table_gap = true;
		return UNWIND_USER_UNKNOWN;
	}
	if (ret)
		return UNWIND_USER_STOP;
	*framep = state->sframe.held;
	return UNWIND_USER_FRAME;
}

#endif /* _KERNEL_UNWIND_SFRAME_FRAME_H */
