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
 * if its text holds @pc, else the registry's (which may read a file).
 */
static int sframe_walk_sec(struct unwind_user_state *state, unsigned long pc)
{
	struct unwind_sframe_sec *sec = &state->sframe_sec;

	if (pc < sec->text_start || pc >= sec->text_end)
		sframe_lookup(pc, sec);
	return pc >= sec->text_start && pc < sec->text_end && sec->sframe ?
	       0 : -ENOENT;
}

/* Are the return address and the frame pointer both saved on the stack? */
static bool sframe_saved_pair(const struct unwind_sframe_row *row)
{
	return row->ra.rule == SFRAME_RULE_CFA && row->ra.deref &&
	       row->fp.rule == SFRAME_RULE_CFA && row->fp.deref &&
	       !((row->ra.off | row->fp.off) & 7);
}

/*
 * Read the words at @a1 and @a2 (aligned, near each other) in one user
 * access window: two loads, as the frame-pointer walk reads its record.
 */
static int sframe_read_pair(unsigned long a1, unsigned long *v1,
			    unsigned long a2, unsigned long *v2)
{
	unsigned long lo = min(a1, a2), hi = max(a1, a2);
	u64 w1, w2;

	if (lo & 7 || hi - lo > 256 ||
	    !user_access_begin((void __user *)lo, hi - lo + sizeof(u64)))
		return -EFAULT;
	unsafe_get_user(w1, (u64 __user *)a1, fault);
	unsafe_get_user(w2, (u64 __user *)a2, fault);
	user_access_end();
	*v1 = w1;
	*v2 = w2;
	return 0;
fault:
	user_access_end();
	return -EFAULT;
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
	const struct unwind_sframe_row *row = &state->sframe_row;
	unsigned long cfa, ra, fp;
	int ret;

	if (state->ws != 8)
		return -ENOENT;
	/* The frames of a recursion share the row of their return address. */
	if (!pc || pc != state->sframe_pc) {
		state->sframe_pc = 0;
		ret = sframe_walk_sec(state, pc);
		if (ret)
			return ret;
		ret = sframe_find_row(&state->sframe_sec, pc, &state->sframe_row);
		if (ret)
			return ret;
		state->sframe_pc = pc;
	}
	if (row->outermost)
		return 1;
	/* Signal frames are not call frames: stop with what was found. */
	if (row->signal)
		return -EOPNOTSUPP;

	ret = sframe_loc_value(state, &row->cfa, 0, &cfa);
	if (ret)
		return ret;
	/* The caller's frame lies above: this also ends loops. */
	if (cfa <= state->sp || cfa & (state->ws - 1))
		return -EINVAL;
	if (sframe_saved_pair(row)) {
		/* The usual frame: both saved near the CFA, one user access. */
		ret = sframe_read_pair(cfa + row->ra.off, &ra,
				       cfa + row->fp.off, &fp);
	} else {
		ret = sframe_loc_value(state, &row->ra, cfa, &ra);
		if (!ret)
			ret = sframe_loc_value(state, &row->fp, cfa, &fp);
	}
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
	struct unwind_sframe_row row;

	return state->ws == 8 && ra && !sframe_walk_sec(state, ra - 1) &&
	       !sframe_find_row(&state->sframe_sec, ra - 1, &row) &&
	       !row.signal;
}
