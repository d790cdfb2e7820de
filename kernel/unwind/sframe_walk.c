// SPDX-License-Identifier: GPL-2.0
/*
 * One step of a user stack walk by SFrame: from a frame's IP, stack
 * pointer and frame pointer to its caller's, with the row the IP's table
 * gives. The walker (user.c) tries this first at every frame and falls
 * back to frame pointers where no table covers the IP.
 *
 * Task context, page faults allowed: tables and stack are user memory.
 */
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include "sframe.h"

/* The value a rule of the row gives, from the callee's registers. */
static int sframe_loc_value(const struct unwind_user_state *state,
			    const struct sframe_loc *loc, unsigned long cfa,
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

/**
 * unwind_sframe_step - step to the caller of a frame by its SFrame row
 * @state:	the frame; on success, its caller's
 * @topmost:	@state is the interrupted frame, not a return address
 *
 * Context: Task context, page faults allowed.
 * Return: 0 if @state now describes the caller; 1 if the table says the
 * stack ends here; -ENOENT if no table covers the IP (walk by frame
 * pointers); another error if the table or stack is bad (stop).
 */
int unwind_sframe_step(struct unwind_user_state *state, bool topmost)
{
	/* A return address may be past the end of a function that calls. */
	unsigned long pc = topmost ? state->ip : state->ip - 1;
	unsigned long cfa, ra, fp;
	struct sframe_sec sec;
	struct sframe_row row;
	int ret;

	if (state->ws != 8 ||
	    (pc >= state->no_sframe_start && pc < state->no_sframe_end))
		return -ENOENT;
	ret = sframe_lookup(pc, &sec);
	if (ret) {
		state->no_sframe_start = sec.text_start;
		state->no_sframe_end = sec.text_end;
		return ret;
	}
	ret = sframe_find_row(&sec, pc, &row);
	if (ret)
		return ret;
	if (row.outermost)
		return 1;
	/* Signal frames are not call frames: stop with what was found. */
	if (row.signal)
		return -EOPNOTSUPP;

	ret = sframe_loc_value(state, &row.cfa, 0, &cfa);
	if (ret)
		return ret;
	/* The caller's frame lies above: this also ends loops. */
	if (cfa <= state->sp || cfa & (state->ws - 1))
		return -EINVAL;
	ret = sframe_loc_value(state, &row.ra, cfa, &ra);
	if (!ret)
		ret = sframe_loc_value(state, &row.fp, cfa, &fp);
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
 * Context: Task context, page faults allowed.
 * Return: true if an SFrame row covers the call before @ra.
 */
bool unwind_sframe_covers(struct unwind_user_state *state, unsigned long ra)
{
	struct sframe_sec sec;
	struct sframe_row row;

	return state->ws == 8 && ra && !sframe_lookup(ra - 1, &sec) &&
	       !sframe_find_row(&sec, ra - 1, &row) && !row.signal;
}
