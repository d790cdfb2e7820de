// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer walk of a user space stack.
 *
 * Each frame is { saved frame pointer, return address } at the frame
 * pointer, in the task's word size. The walk reads user memory and may
 * fault: task context only, page faults allowed. It ends cleanly, keeping
 * the frames found, when a frame pointer does not move up the stack, is
 * misaligned, leaves user space or cannot be read, when a return address is
 * zero or outside an executable mapping, or at the depth limit.
 *
 * The first frame needs care: an IP sampled at the first instructions of a
 * function, before it pushed the frame pointer, or at its return, after it
 * popped it, belongs to a function whose frame is not (or no longer) set
 * up. The architecture reads the instruction bytes to find the return
 * address on the stack instead (arch_unwind_user_first_frame()).
 *
 * Where an SFrame table covers the IP (CONFIG_UNWIND_USER_SFRAME), its row
 * gives the caller instead (sframe_walk.c), so code built without frame
 * pointers is walked too, and a stack may mix both kinds of code. A first
 * frame in code with neither (a leaf such as a system call wrapper) is
 * passed by taking the word at the stack pointer as its return address when
 * it follows a call instruction in code that has a table.
 */
#include <linux/unwind_user.h>
#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <asm/unwind_user.h>
#include "sframe.h"

/* Read one word of the task's size at a user address. */
static int unwind_user_read_word(struct unwind_user_state *state,
				 unsigned long addr, unsigned long *val)
{
	if (state->ws == 8) {
		u64 v;

		if (get_user(v, (u64 __user *)addr))
			return -EFAULT;
		*val = v;
	} else {
		u32 v;

		if (get_user(v, (u32 __user *)addr))
			return -EFAULT;
		*val = v;
	}
	return 0;
}

/*
 * Read a frame record { next frame pointer, return address }: one
 * access_ok() and one user access window for both words, then two plain
 * loads. This is the walk's cost per frame, and a copy_from_user() of
 * the record costs more for so few bytes (a call, and a string copy with
 * a startup cost). Faults are handled as for any user access: the page is
 * brought in, or the read fails.
 */
static int unwind_user_read_frame(struct unwind_user_state *state,
				  unsigned long addr, unsigned long *next,
				  unsigned long *ra)
{
	if (state->ws == 8) {
		u64 __user *rec = (u64 __user *)addr;
		u64 n, r;

		if (!user_access_begin(rec, 2 * sizeof(u64)))
			return -EFAULT;
		unsafe_get_user(n, &rec[0], fault);
		unsafe_get_user(r, &rec[1], fault);
		user_access_end();
		*next = n;
		*ra = r;
	} else {
		u32 __user *rec = (u32 __user *)addr;
		u32 n, r;

		if (!user_access_begin(rec, 2 * sizeof(u32)))
			return -EFAULT;
		unsafe_get_user(n, &rec[0], fault);
		unsafe_get_user(r, &rec[1], fault);
		user_access_end();
		*next = n;
		*ra = r;
	}
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/*
 * Cut the trace at the first return address outside executable memory.
 * Text the SFrame registry found by itself is known to be (see
 * unwind_sframe_known_text()); the mmap lock is taken only for the rest.
 * The entries before @known are: the walk found them in the registry's
 * text as it stored them. Like the lookups here, that holds until the
 * next munmap, which another thread may make at any time.
 */
static void unwind_user_check_text(struct unwind_stacktrace *trace,
				   unsigned int known)
{
	struct mm_struct *mm = current->mm;
	unsigned long start = 0, end = 0;
	struct vm_area_struct *vma;
	bool locked = false;
	unsigned int i;

	if (!mm || known >= trace->nr)
		return;
	/* Entry 0 is the interrupted IP; the others are return addresses. */
	for (i = max(known, 1U); i < trace->nr; i++) {
		unsigned long addr = trace->entries[i] - 1;

		/* One lookup per run of entries in the same mapping. */
		if (addr - start < end - start ||
		    unwind_sframe_known_text(addr, &start, &end))
			continue;
		if (!locked) {
			if (mmap_read_lock_killable(mm))
				return;
			locked = true;
		}
		vma = vma_lookup(mm, addr);
		if (!vma || !(vma->vm_flags & VM_EXEC)) {
			trace->nr = i;
			break;
		}
		start = vma->vm_start;
		end = vma->vm_end;
	}
	if (locked)
		mmap_read_unlock(mm);
}

/**
 * unwind_user_start - set up a walk from a task's user registers
 * @state:	the walk to set up
 * @regs:	user registers of the current task
 */
void unwind_user_start(struct unwind_user_state *state, struct pt_regs *regs)
{
	/* Nothing of another walk: its cached tables are not this one's. */
	memset(state, 0, sizeof(*state));
	arch_unwind_user_init(state, regs);
}

/*
 * The interrupted frame, with no table for its IP: a function caught in
 * its prologue or epilogue, or a leaf with no frame called from code with
 * a table. Returns -ENOENT if it is neither (its frame pointer is good).
 */
static int unwind_user_first_frame(struct unwind_user_state *state)
{
	unsigned long ra, sp_off;

	if (arch_unwind_user_first_frame(state, &sp_off)) {
		if (unwind_user_read_word(state,
					  unwind_user_addr(state, state->sp_base,
							   state->sp + sp_off),
					  &ra) || !ra)
			return -EFAULT;
		state->ip = ra;
		state->sp += sp_off + state->ws;
		return 0;
	}
	/*
	 * The table first: decoding the call costs more, and rarely runs.
	 * A process with no table at all (most of them) reads nothing.
	 */
	if (state->ws == 8 && unwind_sframe_has_tables() &&
	    !unwind_user_read_word(state, state->sp, &ra) &&
	    unwind_sframe_covers(state, ra) &&
	    arch_unwind_user_after_call(state, ra, NULL)) {
		state->ip = ra;
		state->sp += state->ws;
		return 0;
	}
	return -ENOENT;
}

/*
 * One frame by its frame pointer: the record there gives the caller's
 * frame pointer and return address, and the caller's stack pointer is
 * right above it. Records must rise (@last is the previous one), which
 * ends loops; after SFrame steps, the record must also lie above the
 * stack pointer they reached. A walk that guesses checks more (below).
 */
static __always_inline int
unwind_user_fp_step(struct unwind_user_state *state, unsigned long *last,
		    bool above_sp)
{
	unsigned long fp = state->fp, next, ra;

	if (!fp || fp & (state->ws - 1) || fp <= *last ||
	    ((above_sp || state->guess) && fp < state->sp))
		return -EINVAL;
	/* Checks that the record lies in user space, too. */
	if (unwind_user_read_frame(state,
				   unwind_user_addr(state, state->sp_base, fp),
				   &next, &ra))
		return -EFAULT;
	/*
	 * A walk that guesses where it stops must stop where it goes wrong:
	 * code without frame pointers leaves anything in the register, and a
	 * step through it would start the scan past real frames, or end the
	 * walk as if at the stack's end (a return address of 0).
	 */
	if (state->guess && state->ws == 8 &&
	    (!ra || !arch_unwind_user_after_call(state, ra, NULL)))
		return -EINVAL;
	*last = fp;
	state->ip = ra;
	state->sp = fp + 2 * state->ws;
	state->fp = next;
	return 0;
}

/* Does the text of the section the walk holds contain @pc? */
static __always_inline bool
unwind_user_in_sec(const struct unwind_user_state *state, unsigned long pc)
{
	const struct unwind_sframe_sec *sec = &state->sframe_sec;

	return pc - sec->text_start < sec->text_end - sec->text_start;
}

/*
 * Is the frame's IP in text without an SFrame table? Then it goes by its
 * frame pointer at once, and a walk of code without tables pays one
 * comparison per frame for SFrame. A frame that leaves the held section
 * takes the task's copy of the next one, if it has it, without a call:
 * every walk passes at least the program's and the C library's text.
 */
static __always_inline bool
unwind_user_untabled(struct unwind_user_state *state, bool topmost)
{
	unsigned long pc = topmost ? state->ip : state->ip - 1;
	const struct unwind_sframe_sec *copy;

	if (!IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) || state->ws != 8)
		return true;
	if (!unwind_user_in_sec(state, pc)) {
		copy = sframe_sec_find(pc);
		if (!copy)
			return false;
		state->sframe_sec = *copy;
	}
	return !state->sframe_sec.sframe;
}

/*
 * Is the held section's text some the registry found itself (an
 * executable file mapping, see unwind_sframe_known_text())? Then the
 * return addresses stored in it need no check after the walk, which in a
 * deep walk is most of that check's cost.
 */
static __always_inline bool
unwind_user_sec_known(const struct unwind_user_state *state)
{
	const struct unwind_sframe_sec *sec = &state->sframe_sec;

	return IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) && !sec->registered &&
	       sec->text_end > sec->text_start;
}

/* Is @ra, a return address just stored, in such text? */
static __always_inline bool
unwind_user_known_text(const struct unwind_user_state *state, unsigned long ra)
{
	return unwind_user_sec_known(state) && unwind_user_in_sec(state, ra - 1);
}

/*
 * Walk a run of 64-bit frames in text without tables by their frame
 * pointers, in one user access window, storing their return addresses:
 * the deep walk of code built with frame pointers. Opening a window per
 * frame (unwind_user_fp_step()) costs more than the frame's two loads.
 * The window spans from the first record to the top of user space; each
 * record must lie above the one before (which ends loops) and end below
 * that top, so every load stays in it. Nothing in the window calls out.
 *
 * Stops before a frame it cannot step, and leaves that frame to the loop,
 * which steps it by its table or stops where unwind_user_fp_step() does;
 * a fault in the window is left to it the same way. A walk that guesses
 * checks each return address against the code (a call) and takes the
 * slow path. Returns true at a return address of 0, the stack's end.
 *
 * @known counts the entries known to be in the registry's text; if all
 * stored before are, it grows by those stored in the held section's text.
 */
static __always_inline bool
unwind_user_fp_run(struct unwind_user_state *state,
		   struct unwind_stacktrace *trace, unsigned int max,
		   unsigned long *last, bool above_sp, unsigned int *known)
{
	const unsigned long top = TASK_SIZE_MAX;
	/* The text without tables that the run stays in: all, without SFrame. */
	const unsigned long text = state->sframe_sec.text_start;
	const unsigned long span = IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) ?
				   state->sframe_sec.text_end - text : ULONG_MAX;
	/* Locals, not the state: stores to the entries cannot alias them. */
	unsigned long fp = state->fp, sp = state->sp, ip = state->ip;
	unsigned long prev = *last, next, ra;
	unsigned int nr = trace->nr, in_text = nr;
	bool ended = false;

	if (state->ws != 8 || state->guess || !fp || fp >= top - 16)
		return false;
	if (!user_access_begin((void __user *)fp, top - fp))
		return false;
	while (nr < max) {
		if (!fp || fp & 7 || fp <= prev || fp > top - 16 ||
		    (above_sp && fp < sp))
			break;
		unsafe_get_user(next, (u64 __user *)fp, out);
		unsafe_get_user(ra, (u64 __user *)fp + 1, out);
		prev = fp;
		ip = ra;
		sp = fp + 16;
		fp = next;
		if (!ra) {
			ended = true;
			break;
		}
		trace->entries[nr++] = ra;
		if (ra - 1 - text >= span)
			break;
		in_text = nr;
	}
out:
	user_access_end();
	if (*known == trace->nr && unwind_user_sec_known(state))
		*known = in_text;
	*last = prev;
	state->ip = ip;
	state->sp = sp;
	state->fp = fp;
	trace->nr = nr;
	return ended;
}

/*
 * Is the frame's SFrame row the one the walk holds, in its quick form?
 * The frames of a recursion share their return address, so their row.
 */
static __always_inline bool
unwind_user_sframe_cached(const struct unwind_user_state *state, bool topmost)
{
	return IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) && !topmost &&
	       state->sframe_quick.ok && state->ip - 1 == state->sframe_pc;
}

/*
 * Has the task kept the frame's SFrame row, in its quick form, from an
 * earlier walk (sframe_cache.c)? Then that becomes the row the walk holds,
 * with no call and no table read: a stack walked before costs about what
 * frame pointers cost. Other rows go through unwind_sframe_step().
 */
static __always_inline bool
unwind_user_sframe_kept(struct unwind_user_state *state, bool topmost)
{
	unsigned long pc = topmost ? state->ip : state->ip - 1;
	const struct sframe_row_copy *copy;

	if (!IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) || state->ws != 8)
		return false;
	copy = sframe_row_find(pc);
	if (!copy || !copy->quick.ok)
		return false;
	state->sframe_row = copy->row;
	state->sframe_quick = copy->quick;
	state->sframe_pc = pc;
	return true;
}

/*
 * One frame by the quick form of the SFrame row the walk holds: the CFA,
 * then the saved words in one user access window, as a frame-pointer
 * step reads its record. The CFA must rise above the SP, which also ends
 * loops. Inline here, not in sframe_walk.c: this is the per-frame cost of
 * a deep walk by tables, and a call per frame shows in it.
 */
static __always_inline int
unwind_user_sframe_quick(struct unwind_user_state *state)
{
	const struct unwind_sframe_quick *q = &state->sframe_quick;
	unsigned long cfa = (q->cfa_fp ? state->fp : state->sp) + q->cfa_off;
	u64 ra, fp = state->fp;

	if (cfa <= state->sp || cfa & 7)
		return -EINVAL;
	if (!user_access_begin((void __user *)(cfa + q->lo_off), q->span))
		return -EFAULT;
	unsafe_get_user(ra, (u64 __user *)(cfa + q->ra_off), fault);
	if (q->fp_saved)
		unsafe_get_user(fp, (u64 __user *)(cfa + q->fp_off), fault);
	user_access_end();
	state->ip = ra;
	state->sp = cfa;
	state->fp = fp;
	return 0;
fault:
	user_access_end();
	return -EFAULT;
}

/*
 * Walk the frames of a recursion by the quick form of their shared SFrame
 * row, in one user access window, storing their return addresses: what
 * unwind_user_fp_run() does for frame pointers. The window spans from the
 * stack pointer to the top of user space; each CFA must rise above the
 * stack pointer (which ends loops), and the words read must lie in the
 * window. Stops, leaving the frame to the loop, at a return address with
 * another row, or at a frame it cannot step; returns true at a return
 * address of 0, the stack's end. @known as for unwind_user_fp_run(), from
 * the entry stored last, whose row this is.
 */
static __always_inline bool
unwind_user_sframe_run(struct unwind_user_state *state,
		       struct unwind_stacktrace *trace, unsigned int max,
		       unsigned int *known)
{
	const unsigned long top = TASK_SIZE_MAX;
	const struct unwind_sframe_quick q = state->sframe_quick;
	const unsigned long pc = state->sframe_pc;
	unsigned long start = state->sp, sp = state->sp, fp = state->fp;
	unsigned long ip = state->ip, cfa;
	unsigned int nr = trace->nr, in_text = nr;
	bool ended = false;
	u64 ra, next;

	if (!q.ok || sp >= top || !user_access_begin((void __user *)sp, top - sp))
		return false;
	while (nr < max && ip - 1 == pc) {
		in_text = nr;
		cfa = (q.cfa_fp ? fp : sp) + q.cfa_off;
		if (cfa <= sp || cfa & 7 || cfa + q.lo_off < start ||
		    cfa + q.lo_off > top - q.span)
			break;
		unsafe_get_user(ra, (u64 __user *)(cfa + q.ra_off), out);
		next = fp;
		if (q.fp_saved)
			unsafe_get_user(next, (u64 __user *)(cfa + q.fp_off), out);
		ip = ra;
		sp = cfa;
		fp = next;
		if (!ra) {
			ended = true;
			break;
		}
		trace->entries[nr++] = ra;
	}
	/* Each return address that met the loop's test was pc + 1. */
	if (ip - 1 == pc)
		in_text = nr;
out:
	user_access_end();
	if (*known == trace->nr - 1 && unwind_user_known_text(state, pc + 1))
		*known = in_text;
	state->ip = ip;
	state->sp = sp;
	state->fp = fp;
	trace->nr = nr;
	return ended;
}

/**
 * unwind_user_walk - walk the current task's user stack
 * @state:	where the walk starts (unwind_user_start(), or crafted)
 * @trace:	receives the stack; @trace->entries holds @max entries
 * @max:	most entries to store
 *
 * Each frame is stepped by its SFrame row where a table covers its IP,
 * else by frame pointers. If @state->guess is set and the walk stops
 * before the stack's end, the stack above is scanned for return addresses
 * (unwind_user_guess()), counted in @trace->guessed.
 *
 * Context: Task context, page faults allowed.
 * Return: the number of entries stored (also in @trace->nr).
 */
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max)
{
	bool topmost = true, by_sframe = false, ended = false, untabled;
	unsigned long last_fp = 0;
	unsigned int walked, before;
	/* Entries before this are in the registry's text (entry 0: the IP). */
	unsigned int known = 1;
	int ret;

	might_fault();
	trace->nr = 0;
	trace->guessed = 0;
	if (!max || !state->ip)
		return 0;
	trace->entries[trace->nr++] = unwind_user_addr(state, state->ip_base,
						       state->ip);
	state->sframe_rows_read = 0;
	state->sframe_rows_limit = SFRAME_WALK_ROWS_BASE +
				   SFRAME_WALK_ROWS_PER_FRAME;

	while (trace->nr < max) {
		untabled = unwind_user_untabled(state, topmost);
		if (!topmost && known == trace->nr - 1 &&
		    unwind_user_known_text(state, state->ip))
			known = trace->nr;
		if (untabled) {
			ret = -ENOENT;
		} else if (unwind_user_sframe_cached(state, topmost) ||
			   unwind_user_sframe_kept(state, topmost)) {
			ret = unwind_user_sframe_quick(state);
		} else {
			/* The rows a table lookup may still read (sframe.h). */
			state->sframe_rows_limit = SFRAME_WALK_ROWS_BASE +
				SFRAME_WALK_ROWS_PER_FRAME * trace->nr;
			ret = unwind_sframe_step(state, topmost);
		}
		if (ret == UNWIND_SFRAME_QUICK)
			ret = unwind_user_sframe_quick(state);
		if (!ret)
			by_sframe = true;
		if (ret == -ENOENT && topmost)
			ret = unwind_user_first_frame(state);
		if (ret == -ENOENT) {
			/*
			 * By frame pointers: the run takes this frame and the
			 * ones after it in one window; the single step only
			 * what the run leaves (guessing, compat, a bad record),
			 * and ends the walk there as it should.
			 */
			before = trace->nr;
			if (unwind_user_fp_run(state, trace, max, &last_fp,
					       by_sframe, &known)) {
				ended = true;
				break;
			}
			if (trace->nr > before) {
				topmost = false;
				continue;
			}
			ret = unwind_user_fp_step(state, &last_fp, by_sframe);
		}
		/* A return address of 0, or a table's outermost row. */
		if (ret == 1 || (!ret && !state->ip)) {
			ended = true;
			break;
		}
		if (ret)
			break;
		topmost = false;
		trace->entries[trace->nr++] = unwind_user_addr(state,
							       state->ip_base,
							       state->ip);
		if (unwind_user_sframe_cached(state, false) &&
		    unwind_user_sframe_run(state, trace, max, &known)) {
			ended = true;
			break;
		}
	}
	/* Stopped early, not at the stack's end: guess on, if asked to. */
	if (state->guess && !ended && trace->nr < max)
		unwind_user_guess(state, trace, max);
	walked = trace->nr - trace->guessed;
	unwind_user_check_text(trace, known);
	trace->guessed = trace->nr > walked ? trace->nr - walked : 0;
	return trace->nr;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_user_walk);
