// SPDX-License-Identifier: GPL-2.0
/*
 * The frame-pointer format of user stack unwinding: code built with frame
 * pointers keeps, at the frame pointer, a record { caller's frame pointer,
 * return address } in the task's word size. Every such frame has the same
 * description, so the walk (user.c) steps a run of them by one.
 *
 * The first frame needs care: an IP sampled at the first instructions of a
 * function, before it pushed the frame pointer, or at its return, after it
 * popped it, belongs to a function whose frame is not (or no longer) set
 * up. The architecture reads the instruction bytes to find the return
 * address on the stack instead (arch_unwind_user_first_frame()). A first
 * frame in code with neither frame pointers nor a table (a leaf such as a
 * system call wrapper) is passed by taking the word at the stack pointer
 * as its return address when it follows a call instruction in code that
 * has a table.
 */
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>
#include "format.h"

/*
 * The frame of a function whose return address is the word at
 * SP + @sp_off, with the caller's frame pointer still in the register.
 */
static void unwind_fp_frame_at_sp(struct unwind_user_state *state,
				  struct unwind_user_frame *frame,
				  unsigned long sp_off)
{
	frame->cfa = (struct unwind_user_loc){ UNWIND_USER_RULE_SP, false,
					       sp_off + state->ws };
	frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true,
					      -(s32)state->ws };
	frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_SAME };
	/* This frame only: its caller has a frame of its own. */
	frame->pc_end = frame->pc_start;
	unwind_user_frame_prepare(frame);
}

/*
 * The interrupted frame, when its frame record is not set up: caught in
 * its prologue or epilogue, or a leaf with no frame called from code with
 * a table. False if it is neither (the frame pointer is good).
 */
static bool unwind_fp_first_frame(struct unwind_user_state *state,
				  struct unwind_user_frame *frame)
{
	unsigned long ra, sp_off;

	if (arch_unwind_user_first_frame(state, &sp_off)) {
		unwind_fp_frame_at_sp(state, frame, sp_off);
		return true;
	}
	/*
	 * The table first: decoding the call costs more, and rarely runs.
	 * A process with no table at all (most of them) reads nothing.
	 */
	if (state->ws != 8 || !unwind_sframe_has_tables())
		return false;
	if (get_user(ra, (u64 __user *)state->sp)) {
		unwind_user_read_failed(state, state->sp);
		return false;
	}
	if (unwind_sframe_covers(state, ra) &&
	    arch_unwind_user_after_call(state, ra, NULL)) {
		unwind_fp_frame_at_sp(state, frame, 0);
		return true;
	}
	return false;
}

/**
 * unwind_fp_frame - the frame at an IP, by its frame-pointer record
 * @state:	the walk, at the frame
 * @topmost:	the frame is the interrupted one
 * @framep:	set to the walk's description (state->frame), which
 *		receives the frame's; its range is kept, so that the walk
 *		steps by frame pointers only through text that no format
 *		before this one describes
 *
 * Any IP has a frame by frame pointers: whether its record is good, the
 * step tells. A walk that guesses where it stops checks every return
 * address, so that it stops where code without frame pointers left
 * anything in the register, instead of going on from there.
 *
 * In the gap of a table given for the object's file (state->in_table_gap),
 * the record rests on a convention: the table was converted from the
 * object's CFI, which described that code in a way SFrame cannot say (a
 * CFA off another register) or not at all, and %rbp there may point to a
 * record further out, skipping frames. The entries from the one it gives
 * on are marked.
 *
 * Context: Task context, page faults allowed, or a walk that may not
 * fault (state->nofault: reads that fail say so).
 * Return: UNWIND_USER_FRAME.
 */
enum unwind_user_step unwind_fp_frame(struct unwind_user_state *state,
				      bool topmost,
				      const struct unwind_user_frame **framep)
{
	struct unwind_user_frame *frame = &state->frame;

	*framep = frame;
	frame->outermost = false;
	frame->records = false;
	frame->sets_floor = false;
	frame->check_ra = false;
	if (topmost && unwind_fp_first_frame(state, frame))
		return UNWIND_USER_FRAME;
	unwind_user_frame_fp_record(state, frame);
	return UNWIND_USER_FRAME;
}
