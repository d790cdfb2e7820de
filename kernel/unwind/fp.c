// SPDX-License-Identifier: GPL-2.0
/*
 * The frame-pointer format of user stack unwinding: code built with frame
 * pointers keeps, at the frame pointer, a record { caller's frame pointer,
 * return address } in the task's word size. Every such frame has the same
 * description, so the walk (user.c) steps a run of them by one.
 *
 * The interrupted frame may not have set its record up (caught in its
 * prologue or epilogue, or a leaf that keeps none): the walk finds such a
 * frame before it asks this format (unwind_user_first_frame() in user.c).
 */
#include <linux/unwind_user.h>
#include "format.h"

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
 * Context: Any walk's: it reads nothing.
 * Return: UNWIND_USER_FRAME.
 */
enum unwind_user_step unwind_fp_frame(struct unwind_user_state *state,
				      bool topmost,
				      const struct unwind_user_frame **framep)
{
	struct unwind_user_frame *frame = &state->frame;

	*framep = frame;
	unwind_user_frame_fp_record(state, frame);
	return UNWIND_USER_FRAME;
}
