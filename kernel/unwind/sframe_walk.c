// SPDX-License-Identifier: GPL-2.0
/*
 * One step of a user stack walk by SFrame: from a frame's IP, stack
 * pointer and frame pointer to its caller's, with the row the IP's table
 * gives. The walker (user.c) tries this first at every frame and falls
 * back to frame pointers where no table covers the IP.
 *
 * Task context, page faults allowed: tables and stack are user memory.
 */
#include <linux/minmax.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include "sframe.h"

/* The value a rule of the row gives, from the callee's registers. */
static int sframe_loc_value(const struct unwind_user_state *state,
			    const struct unwind_sframe_loc *loc, unsigned long cfa,
			    unsigned long *val)
{
	unsigned long base;
	u64 word;

	switch (loc->rule) {
	case SFRAME_RULE_SAME:
		*val = state->fp;
		return 0;
	case SFRAME_RULE_SP:
		base = state->sp;
		break;
	case SFRAME_RULE_FP:
		base = state->fp;
		break;
	default:
		base = cfa;
		break;
	}
	base += loc->off;
	if (!loc->deref) {
		*val = base;
		return 0;
	}
	if (base & (state->ws - 1) || get_user(word, (u64 __user *)base))
		return -EFAULT;
	*val = word;
	return 0;
}

/*
 * Make state->sframe_sec the section for @pc: the one the walk used last
 * if its text holds @pc, else the registry's (which may read a file, if
 * @discover).
 */
static int sframe_walk_sec(struct unwind_user_state *state, unsigned long pc,
			   bool discover)
{
	struct unwind_sframe_sec *sec = &state->sframe_sec;

	if (pc < sec->text_start || pc >= sec->text_end)
		sframe_lookup(pc, sec, discover);
	return pc >= sec->text_start && pc < sec->text_end && sec->sframe ?
	       0 : -ENOENT;
}

/* Is @loc a word saved at an aligned offset from the CFA? */
static bool sframe_saved_at_cfa(const struct unwind_sframe_loc *loc)
{
	return loc->rule == SFRAME_RULE_CFA && loc->deref && !(loc->off & 7);
}

/*
 * Fill state->sframe_quick from state->sframe_row, if it has that form:
 * the walk loop (user.c) steps the next frames with the same return
 * address (a recursion) by it, with no call here.
 */
static void sframe_quick_set(struct unwind_user_state *state)
{
	const struct unwind_sframe_row *row = &state->sframe_row;
	struct unwind_sframe_quick *q = &state->sframe_quick;
	bool fp_saved = sframe_saved_at_cfa(&row->fp);
	s32 lo, hi;

	q->ok = false;
	if (row->outermost || row->signal || row->cfa.deref ||
	    (row->cfa.rule != SFRAME_RULE_SP && row->cfa.rule != SFRAME_RULE_FP) ||
	    !sframe_saved_at_cfa(&row->ra) ||
	    (!fp_saved && row->fp.rule != SFRAME_RULE_SAME))
		return;
	lo = fp_saved ? min(row->ra.off, row->fp.off) : row->ra.off;
	hi = fp_saved ? max(row->ra.off, row->fp.off) : row->ra.off;
	/* Near each other, as a prologue saves them: one small window. */
	if ((s64)hi - lo > 256)
		return;
	q->cfa_fp = row->cfa.rule == SFRAME_RULE_FP;
	q->fp_saved = fp_saved;
	q->cfa_off = row->cfa.off;
	q->ra_off = row->ra.off;
	q->fp_off = row->fp.off;
	q->lo_off = lo;
	q->span = hi - lo + sizeof(u64);
	q->ok = true;
}

/*
 * Make state->sframe_row the row for @pc. The frames of a recursion share
 * the row of their return address, and the first frame's check of its
 * caller (unwind_sframe_covers()) finds the row the next step uses.
 */
static int sframe_walk_row(struct unwind_user_state *state, unsigned long pc,
			   bool discover)
{
	const struct sframe_row_copy *copy;
	int ret;

	if (pc && pc == state->sframe_pc)
		return 0;
	state->sframe_pc = 0;
	ret = sframe_walk_sec(state, pc, discover);
	if (ret)
		return ret;
	/* The task's walks meet the same call sites again and again. */
	copy = sframe_row_find(pc);
	if (copy) {
		state->sframe_row = copy->row;
		state->sframe_quick = copy->quick;
	} else {
		u32 rows = state->sframe_rows_limit > state->sframe_rows_read ?
			   state->sframe_rows_limit - state->sframe_rows_read : 0;
		u32 before = rows;

		ret = sframe_find_row_budget(&state->sframe_sec, pc,
					     &state->sframe_row, &rows);
		state->sframe_rows_read += before - rows;
		if (ret)
			return ret;
		sframe_quick_set(state);
		sframe_row_keep(&state->sframe_sec, pc, &state->sframe_row,
				&state->sframe_quick);
	}
	state->sframe_pc = pc;
	return 0;
}

/**
 * unwind_sframe_step - step to the caller of a frame by its SFrame row
 * @state:	the frame; on success, its caller's
 * @topmost:	@state is the interrupted frame, not a return address
 *
 * Context: Task context, page faults allowed.
 * Return: 0 if @state now describes the caller; UNWIND_SFRAME_QUICK if
 * the row's quick form (state->sframe_quick) is to step it, which the
 * caller does; 1 if the table says the stack ends here; -ENOENT if no
 * table covers the IP (walk by frame pointers); another error if the
 * table or stack is bad or the walk read its budget of rows (stop).
 */
int unwind_sframe_step(struct unwind_user_state *state, bool topmost)
{
	/* A return address may be past the end of a function that calls. */
	unsigned long pc = topmost ? state->ip : state->ip - 1;
	const struct unwind_sframe_row *row = &state->sframe_row;
	unsigned long cfa, ra, fp;
	int ret;

	if (state->ws != 8)
		return -ENOENT;
	ret = sframe_walk_row(state, pc, true);
	if (ret)
		return ret;
	if (row->outermost)
		return 1;
	/* Signal frames are not call frames: stop with what was found. */
	if (row->signal)
		return -EOPNOTSUPP;
	/* Most rows: the walk loop steps the frame in one user access. */
	if (state->sframe_quick.ok)
		return UNWIND_SFRAME_QUICK;

	ret = sframe_loc_value(state, &row->cfa, 0, &cfa);
	if (ret)
		return ret;
	/* The caller's frame lies above: this also ends loops. */
	if (cfa <= state->sp || cfa & (state->ws - 1))
		return -EINVAL;
	ret = sframe_loc_value(state, &row->ra, cfa, &ra);
	if (!ret)
		ret = sframe_loc_value(state, &row->fp, cfa, &fp);
	if (ret)
		return ret;

	state->ip = ra;
	state->sp = cfa;
	state->fp = fp;
	return 0;
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
bool unwind_sframe_covers(struct unwind_user_state *state, unsigned long ra)
{
	return state->ws == 8 && ra && !sframe_walk_row(state, ra - 1, false) &&
	       !state->sframe_row.signal;
}
