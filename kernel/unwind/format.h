/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Formats of unwinding data, as the user stack walk (user.c) asks them.
 *
 * A format answers one question: what is the frame at this IP? It
 * answers with a frame description (struct unwind_user_frame), which the
 * walk steps the same way for every format, or says that the stack ends
 * there, that its data for the IP is bad, or that it has none. The walk
 * asks the formats in its order (unwind_user_find() in user.c) and takes
 * the first answer that is not UNWIND_USER_UNKNOWN.
 *
 * Adding a format: its own files, with its *_frame() function declared in
 * its own header, and one call in unwind_user_find().
 */
#ifndef _KERNEL_UNWIND_FORMAT_H
#define _KERNEL_UNWIND_FORMAT_H

#include <linux/minmax.h>
#include "walk.h"

/**
 * enum unwind_user_step - a format's answer, or how a step went
 * @UNWIND_USER_FRAME:	the format filled in the frame's description
 * @UNWIND_USER_NEXT:	a step: the state is now the caller's
 * @UNWIND_USER_END:	the stack ends at this frame (an outermost frame,
 *			or a return address of 0)
 * @UNWIND_USER_STOP:	the data or the stack is bad, or the walk spent its
 *			budget: the walk ends with the frames found so far
 * @UNWIND_USER_UNKNOWN: the format has nothing for the IP: ask the next.
 *			It may narrow the description's range to the text
 *			it knows has nothing, for the formats after it.
 */
enum unwind_user_step {
	UNWIND_USER_FRAME,
	UNWIND_USER_NEXT,
	UNWIND_USER_END,
	UNWIND_USER_STOP,
	UNWIND_USER_UNKNOWN,
};

/* Is @loc a word saved at an aligned offset from the CFA? */
static inline bool unwind_user_saved_at_cfa(const struct unwind_user_loc *loc)
{
	return loc->rule == UNWIND_USER_RULE_CFA && loc->deref &&
	       !(loc->off & 7);
}

/**
 * unwind_user_frame_prepare - find whether a description has the usual form
 * @frame:	the description; its simple, lo_off and span are set
 *
 * Nearly every frame has it: CFA from SP or FP, return address saved at
 * the CFA, frame pointer saved near it or unchanged. The walk steps such
 * frames of a 64-bit task in one user access window, reading one or two
 * words; others take a slower step that follows any rule. Each format
 * calls it on the descriptions it makes; inline, so that a format needs
 * nothing of the walk's file but its header.
 */
static inline void unwind_user_frame_prepare(struct unwind_user_frame *frame)
{
	bool fp_saved = unwind_user_saved_at_cfa(&frame->fp);
	s32 lo, hi;

	frame->simple = false;
	if (frame->cfa.deref ||
	    (frame->cfa.rule != UNWIND_USER_RULE_SP &&
	     frame->cfa.rule != UNWIND_USER_RULE_FP) ||
	    !unwind_user_saved_at_cfa(&frame->ra) ||
	    (!fp_saved && frame->fp.rule != UNWIND_USER_RULE_SAME))
		return;
	lo = fp_saved ? min(frame->ra.off, frame->fp.off) : frame->ra.off;
	hi = fp_saved ? max(frame->ra.off, frame->fp.off) : frame->ra.off;
	/* Near each other, as a prologue saves them: one small window. */
	if ((s64)hi - lo > 256)
		return;
	frame->lo_off = lo;
	frame->span = hi - lo + sizeof(u64);
	frame->simple = true;
}

/**
 * unwind_user_frame_fp_record - describe a frame by its frame-pointer record
 * @state:	the walk, at the frame
 * @frame:	receives the description
 *
 * The frame pointer points to the record: the caller's frame pointer,
 * then the return address, with the CFA just above. The frame-pointer
 * format (fp.c) describes every frame so, and another format a frame it
 * finds to keep a record; inline, so that no format calls another.
 */
static inline void
unwind_user_frame_fp_record(struct unwind_user_state *state,
			    struct unwind_user_frame *frame)
{
	s32 ws = state->pos.ws;

	/*
	 * In the gap of a table given for the object's file, the record
	 * rests on a convention (see unwind_fp_frame()): the entries from
	 * the one it gives on are marked.
	 */
	if (state->in_table_gap)
		state->marked_from = min(state->marked_from, state->frames);
	frame->cfa = (struct unwind_user_loc){ UNWIND_USER_RULE_FP, false,
					       2 * ws };
	frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true, -ws };
	frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true,
					      -2 * ws };
	frame->outermost = false;
	frame->sets_floor = false;
	frame->records = true;
	frame->check_ra = state->guess && ws == 8;
	unwind_user_frame_prepare(frame);
}

/*
 * Each format implements one function of this form, which
 * unwind_user_find() calls: describe the frame at state->pos.ip (the
 * interrupted IP if @topmost, else a return address) and point *@frame
 * at the description. state->frame is the walk's own, whose range the
 * walk set to all of user space and earlier formats may have narrowed: a
 * format fills that in, or points at a description it keeps (a row it
 * holds), which stays valid until the walk asks the formats again.
 * Task context, page faults allowed.
 */

/* Frame pointers (fp.c): every frame of code that keeps them. */
enum unwind_user_step unwind_fp_frame(struct unwind_user_state *state,
				      bool topmost,
				      const struct unwind_user_frame **frame);

/* SFrame tables (sframe/frame.h): code that has them, 64-bit tasks. */
#ifdef CONFIG_UNWIND_USER_SFRAME
#include "sframe/frame.h"
#else
static inline enum unwind_user_step
unwind_sframe_frame(struct unwind_user_state *state, bool topmost,
		    const struct unwind_user_frame **frame)
{
	return UNWIND_USER_UNKNOWN;
}

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
#endif

#endif /* _KERNEL_UNWIND_FORMAT_H */
