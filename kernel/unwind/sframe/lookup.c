// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame format's lookups for the walk: the slow path behind
 * unwind_sframe_frame() (sframe/frame.h), which finds a row in the IP's
 * table (sframe/read.c).
 *
 * Task context, page faults allowed: tables and stack are user memory; or
 * a walk that may not fault (state->pos.nofault), see sframe_walk_sec().
 */
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include "../format.h"
#include "sframe.h"
#include "file.h"

/*
 * Make state->sframe.sec the section for @pc: the one the walk holds if
 * its text holds @pc, else the task's copy of the registry's entry, else
 * the registry's (which may read a file, if @discover).
 *
 * A walk that may not fault reads no file: where the registry knows
 * nothing of executable text, a walk that may would have read it, and
 * this one is blocked. Nor does it allocate the task's copies (which the
 * tree lookup does the first time): a task without them is blocked too,
 * until a walk that may fault has made them. A walk that may fault but
 * not read files (state->no_files) goes on there as in text without a
 * table, and says so (state->files_skipped).
 */
static int sframe_walk_sec(struct unwind_user_state *state, unsigned long pc,
			   bool discover)
{
	struct unwind_sframe_sec *sec = &state->sframe.sec;
	const struct unwind_sframe_sec *copy;
	bool stale;

	if (sframe_in_sec(state, pc))
		goto out;
	copy = sframe_sec_find(pc);
	/* Found with no table before one was given for a file: look again. */
	stale = copy && discover && sframe_sec_stale(copy);
	if (copy && !stale) {
		*sec = *copy;
	} else if (!state->pos.nofault && !state->no_files) {
		sframe_lookup(pc, sec, discover);
	} else if (state->pos.nofault &&
		   (stale || !sframe_cache_current())) {
		state->pos.blocked = true;
	} else {
		sframe_lookup(pc, sec, false);
		if (stale)
			state->files_skipped = true;
		if (discover && sec->text_end == sec->text_start &&
		    unwind_user_maybe_text(pc)) {
			if (state->pos.nofault)
				state->pos.blocked = true;
			else
				state->files_skipped = true;
		}
	}
out:
	return sframe_in_sec(state, pc) && sframe_sec_usable(sec) ? 0 : -ENOENT;
}

/*
 * The row for @pc as the description the walk steps by: for this IP
 * only (the frames of a recursion share it), in text the registry found
 * itself unless the section was added by prctl().
 */
static void sframe_frame_set(struct unwind_user_frame *frame,
			     const struct unwind_sframe_row *row,
			     unsigned long pc, bool known_text)
{
	*frame = (struct unwind_user_frame){
		.cfa = row->cfa, .ra = row->ra, .fp = row->fp,
		.pc_start = pc, .pc_end = pc + 1, .known_text = known_text,
		.outermost = row->outermost, .sets_floor = true,
	};
	unwind_user_frame_prepare(frame);
}

/**
 * sframe_walk_lookup - find the row for @pc by a table lookup
 * @state:	the walk: receives the row (sframe_row), its description
 *		(sframe_frame, held) and, if the section changed, the section
 * @pc:		a frame's IP
 * @discover:	read the mapping's file if the registry has no entry
 *
 * The slow path of sframe_walk_row() (sframe/frame.h), out of line:
 * finds the section first where the walk does not hold @pc's, then the
 * row the task kept, if any, before it reads the table.
 *
 * Context: Task context, page faults allowed.
 * Return: 0, -ENOENT if no table covers @pc, -EOPNOTSUPP at a signal
 * trampoline's row (not a call frame), or another error if the table is
 * bad or the walk has read its budget of rows.
 */
int sframe_walk_lookup(struct unwind_user_state *state, unsigned long pc,
		       bool discover)
{
	const struct sframe_row_copy *copy;
	u32 rows, before;
	int ret;

	ret = sframe_walk_sec(state, pc, discover);
	if (ret)
		return ret;
	/*
	 * The first frame, and the first in each object the walk enters,
	 * come here with the section to find: their rows may be kept too.
	 */
	copy = sframe_row_find(pc);
	if (copy) {
		state->sframe.held = &copy->frame;
		state->sframe.pc = pc;
		return 0;
	}
	/* The rows a table lookup may still read (sframe/sframe.h). */
	state->sframe.rows_limit = SFRAME_WALK_ROWS_BASE +
				   SFRAME_WALK_ROWS_PER_FRAME * state->frames;
	if (state->pos.nofault)
		state->sframe.rows_limit = min(state->sframe.rows_limit,
					       SFRAME_WALK_ROWS_NOFAULT);
	rows = state->sframe.rows_limit > state->sframe.rows_read ?
	       state->sframe.rows_limit - state->sframe.rows_read : 0;
	before = rows;
	ret = sframe_find_row_budget(&state->sframe.sec, pc,
				     &state->sframe.row, &rows);
	state->sframe.rows_read += before - rows;
	/*
	 * Without faults, a table's page may be missing and the budget is
	 * smaller: a walk that may fault could find the row.
	 */
	if (state->pos.nofault && (ret == -EFAULT || ret == -E2BIG))
		state->pos.blocked = true;
	if (ret)
		return ret;
	if (state->sframe.row.signal)
		return -EOPNOTSUPP;
	sframe_frame_set(&state->sframe.frame, &state->sframe.row, pc,
			 sframe_sec_known(state));
	/* Keeping a row may allocate: walks that may fault keep them. */
	if (!state->pos.nofault)
		sframe_row_keep(&state->sframe.sec, pc, &state->sframe.row,
				&state->sframe.frame);
	state->sframe.held = &state->sframe.frame;
	state->sframe.pc = pc;
	return 0;
}
