// SPDX-License-Identifier: GPL-2.0
/*
 * The walk of a user space stack, the same for every format.
 *
 * At each frame the walk asks the formats of unwinding data, in the order
 * of unwind_user_find(), for the frame's description (format.h), frame
 * pointers (fp.c) last, which describe any frame. It steps the frame by
 * that description, and goes on stepping
 * the callers whose IP stays in the description's range by it without
 * asking again: a run of frame-pointer frames through text without
 * tables, or the frames of a recursion, which share an SFrame row. Such a
 * run of 64-bit frames reads its words in one user access window.
 *
 * The walk reads user memory and may fault: task context, page faults
 * allowed. A walk with state->pos.nofault set takes no fault, lock or
 * allocation instead, for an interrupt of user mode (unwind_user_nofault()):
 * where a walk that may fault could go on or find other frames (a page
 * that is mapped but not present, text the SFrame registry has not met
 * yet), it sets state->pos.blocked and ends, and its result is not used.
 *
 * A walk ends cleanly, keeping the frames found, when a step
 * finds a frame that does not lie above the one before it, is misaligned,
 * leaves user space or cannot be read, when a format finds its data bad,
 * at the stack's end (a return address of 0, or an outermost frame), at
 * a return address outside executable memory, or at the depth limit.
 */
#include <linux/unwind_user.h>
#include <kunit/visibility.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/unwind_user.h>
#include "code.h"
#include "format.h"

/* Read one word of the task's size at a user address. */
static int unwind_user_read_word(struct unwind_user_state *state,
				 unsigned long addr, unsigned long *val)
{
	if (state->pos.ws == 8) {
		u64 v;

		if (get_user(v, (u64 __user *)addr))
			goto fail;
		*val = v;
	} else {
		u32 v;

		if (get_user(v, (u32 __user *)addr))
			goto fail;
		*val = v;
	}
	return 0;
fail:
	unwind_user_read_failed(&state->pos, addr);
	return -EFAULT;
}

/*
 * Is @addr in executable memory, and in which mapping? The caller holds
 * the mmap lock, unless the walk may take none.
 * Return: 1 if so, 0 if not, -EAGAIN if a walk that may not lock cannot
 * tell.
 */
static int unwind_user_text(struct unwind_user_state *state,
			    struct mm_struct *mm, unsigned long addr,
			    unsigned long *start, unsigned long *end)
{
	struct vm_area_struct *vma;
	vm_flags_t flags;

	if (state->pos.nofault) {
		if (!vma_flags_under_rcu(current->mm, addr, &flags, start, end))
			return -EAGAIN;
		return !!(flags & VM_EXEC);
	}
	vma = vma_lookup(mm, addr);
	if (!vma || !(vma->vm_flags & VM_EXEC))
		return 0;
	*start = vma->vm_start;
	*end = vma->vm_end;
	return 1;
}

/*
 * Cut the trace at the first return address outside executable memory.
 * Text the SFrame registry found by itself is known to be (see
 * unwind_sframe_known_text()); the mmap lock is taken only for the rest.
 * The entries before @known are: the walk found them in the registry's
 * text as it stored them. Like the lookups here, that holds until the
 * next munmap, which another thread may make at any time.
 */
static void unwind_user_check_text(struct unwind_user_state *state,
				   struct unwind_stacktrace *trace,
				   unsigned int known)
{
	struct mm_struct *mm = current->mm;
	unsigned long start = 0, end = 0;
	bool locked = false;
	unsigned int i;
	int text;

	if (!mm || known >= trace->nr)
		return;
	/* Entry 0 is the interrupted IP; the others are return addresses. */
	for (i = max(known, 1U); i < trace->nr; i++) {
		unsigned long addr = trace->entries[i] - 1;

		/* One lookup per run of entries in the same mapping. */
		if (addr - start < end - start ||
		    unwind_sframe_known_text(addr, &start, &end))
			continue;
		if (!locked && !state->pos.nofault) {
			if (mmap_read_lock_killable(mm))
				return;
			locked = true;
		}
		text = unwind_user_text(state, mm, addr, &start, &end);
		if (text < 0)
			state->pos.blocked = true;
		if (text <= 0) {
			trace->nr = i;
			break;
		}
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
	arch_unwind_user_init(&state->pos, regs);
}

/**
 * unwind_user_start_nofault - set up a walk that may not fault
 * @state:	the walk to set up: state->pos.nofault, and state->pos.blocked
 *		if the registers cannot be read without a lock
 * @regs:	user registers of the current task
 */
void unwind_user_start_nofault(struct unwind_user_state *state,
			       struct pt_regs *regs)
{
	memset(state, 0, sizeof(*state));
	state->pos.nofault = true;
	arch_unwind_user_init(&state->pos, regs);
}

/* The value a rule gives, from the callee's registers and the CFA. */
static int unwind_user_loc_value(struct unwind_user_state *state,
				 const struct unwind_user_loc *loc,
				 unsigned long cfa, unsigned long *val)
{
	unsigned long base;

	switch (loc->rule) {
	case UNWIND_USER_RULE_SAME:
		*val = state->pos.fp;
		return 0;
	case UNWIND_USER_RULE_SP:
		base = state->pos.sp;
		break;
	case UNWIND_USER_RULE_FP:
		base = state->pos.fp;
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
	if (base & (state->pos.ws - 1))
		return -EFAULT;
	return unwind_user_read_word(state,
				     unwind_user_addr(&state->pos,
						      state->pos.sp_base, base),
				     val);
}

/*
 * Does a frame whose CFA is @cfa lie above the one before? A CFA must
 * rise above the stack pointer, which ends loops. A frame-pointer record
 * must rise above the record before it instead; after a step by a table,
 * or in a walk that guesses, it must lie at or above the stack pointer
 * too.
 */
static __always_inline bool
unwind_user_rises(const struct unwind_user_frame *frame, unsigned long cfa,
		  unsigned long sp, unsigned long last, bool above_sp)
{
	if (!frame->records)
		return cfa > sp;
	return cfa > last && (!above_sp || cfa + frame->fp.off >= sp);
}

/*
 * One frame by its description, any word size, any rule: each word read
 * on its own. Return: UNWIND_USER_NEXT, UNWIND_USER_END at a return
 * address of 0, or UNWIND_USER_STOP.
 */
static enum unwind_user_step
unwind_user_step_frame(struct unwind_user_state *state,
		       const struct unwind_user_frame *frame)
{
	unsigned long cfa, ra, fp;

	/* A frame pointer of 0 is no frame: the outermost frame has it. */
	if (frame->cfa.rule == UNWIND_USER_RULE_FP && !state->pos.fp)
		return UNWIND_USER_STOP;
	if (unwind_user_loc_value(state, &frame->cfa, 0, &cfa) ||
	    cfa & (state->pos.ws - 1) ||
	    !unwind_user_rises(frame, cfa, state->pos.sp, state->last_record,
			       state->above_sp || state->guess))
		return UNWIND_USER_STOP;
	if (unwind_user_loc_value(state, &frame->ra, cfa, &ra) ||
	    unwind_user_loc_value(state, &frame->fp, cfa, &fp))
		return UNWIND_USER_STOP;
	/*
	 * Code without frame pointers leaves anything in the register: a
	 * walk that guesses must stop where it goes wrong, or its scan would
	 * start past real frames, or it would end as if at the stack's end.
	 */
	if (frame->check_ra &&
	    (!ra || !arch_unwind_user_after_call(&state->pos, ra, NULL)))
		return UNWIND_USER_STOP;
	if (frame->records)
		state->last_record = cfa;
	if (frame->sets_floor)
		state->above_sp = true;
	state->pos.ip = ra;
	state->pos.sp = cfa;
	state->pos.fp = fp;
	return ra ? UNWIND_USER_NEXT : UNWIND_USER_END;
}

/* Is @pc in the range of IPs that @frame describes? */
static __always_inline bool
unwind_user_in_range(const struct unwind_user_frame *frame, unsigned long pc)
{
	return pc - frame->pc_start < frame->pc_end - frame->pc_start;
}

/*
 * Step a 64-bit frame of the usual form, and its callers while their IP
 * stays in the description's range, in one user access window, storing
 * their return addresses: the deep walk of code built with frame
 * pointers, or of a recursion by its SFrame row. Opening a window per
 * frame costs more than the frame's two loads. The window spans from the
 * first frame's lowest word to the top of user space; each frame lies
 * above the one before (unwind_user_rises()), and every word read must
 * lie in the window. Nothing in the window calls out.
 *
 * @known counts the entries known to be in executable text; if all
 * stored before are, it grows by those stored in the range, if the
 * range's text is known.
 *
 * Return: UNWIND_USER_NEXT if the last frame stored has an IP out of the
 * range; UNWIND_USER_END at a return address of 0; UNWIND_USER_STOP at a
 * frame it cannot step (or at the depth limit, which the caller sees);
 * UNWIND_USER_UNKNOWN, having done nothing, if the first frame's words
 * are not in user space (the step one word at a time tells why).
 */
static __always_inline enum unwind_user_step
unwind_user_run(struct unwind_user_state *state,
		const struct unwind_user_frame *frame,
		struct unwind_stacktrace *trace, unsigned int max,
		unsigned int *known, const bool record)
{
	/*
	 * Locals, not the description: stores to the entries could alias
	 * it. A frame record's rules are constants here, which keeps the
	 * deep walk of frame-pointer code in registers.
	 */
	const bool cfa_fp = record || frame->cfa.rule == UNWIND_USER_RULE_FP;
	const bool fp_saved = record || frame->fp.rule == UNWIND_USER_RULE_CFA;
	const bool above_sp = state->above_sp || state->guess;
	const long cfa_off = record ? 16 : frame->cfa.off;
	const long ra_off = record ? -8 : frame->ra.off;
	const long fp_off = record ? -16 : frame->fp.off;
	const long lo_off = record ? -16 : frame->lo_off;
	/* Where the lowest word read of a frame may lie, at the most. */
	const unsigned long lo_max = TASK_SIZE_MAX -
				     (record ? 16 : frame->span);
	const unsigned long pc_start = frame->pc_start;
	const unsigned long pc_len = frame->pc_end - frame->pc_start;
	unsigned long fp = state->pos.fp, sp = state->pos.sp;
	unsigned long ip = state->pos.ip;
	unsigned long last = state->last_record, lo, cfa = 0, next, ra;
	unsigned int nr = trace->nr;
	enum unwind_user_step step = UNWIND_USER_STOP;
	bool faulted = false;

	if (cfa_fp && !fp)
		return UNWIND_USER_STOP;
	lo = (cfa_fp ? fp : sp) + cfa_off + lo_off;
	if (lo > lo_max ||
	    !user_access_begin((void __user *)lo, TASK_SIZE_MAX - lo))
		return UNWIND_USER_UNKNOWN;
	/*
	 * Every frame lies above the one before (which ends loops), and
	 * the frames share lo_off: each frame's words lie above the first
	 * one's, at @lo, so in the window. A frame pointer of 0 fails that
	 * test after the first frame.
	 */
	while (nr < max) {
		cfa = (cfa_fp ? fp : sp) + cfa_off;
		if (cfa & 7 ||
		    (record ? cfa <= last || (above_sp && cfa + fp_off < sp) :
			      cfa <= sp) ||
		    cfa + lo_off > lo_max)
			break;
		unsafe_get_user(ra, (u64 __user *)(cfa + ra_off), fault);
		next = fp;
		if (fp_saved)
			unsafe_get_user(next, (u64 __user *)(cfa + fp_off), fault);
		if (record)
			last = cfa;
		ip = ra;
		sp = cfa;
		fp = next;
		if (!ra) {
			step = UNWIND_USER_END;
			break;
		}
		trace->entries[nr++] = ra;
		if (ra - 1 - pc_start >= pc_len) {
			step = UNWIND_USER_NEXT;
			break;
		}
	}
	goto out;
fault:
	faulted = true;
out:
	user_access_end();
	if (faulted)
		unwind_user_read_failed(&state->pos, cfa + lo_off);
	/* All but a last entry out of the range are in it. */
	if (*known == trace->nr && frame->known_text)
		*known = step == UNWIND_USER_NEXT ? nr - 1 : nr;
	if (frame->sets_floor && nr > trace->nr)
		state->above_sp = true;
	state->last_record = last;
	state->pos.ip = ip;
	state->pos.sp = sp;
	state->pos.fp = fp;
	trace->nr = nr;
	return step;
}

/* Is @frame a 64-bit frame-pointer record, { caller's FP, RA } at FP? */
static bool unwind_user_record64(const struct unwind_user_frame *frame)
{
	return frame->records && frame->cfa.rule == UNWIND_USER_RULE_FP &&
	       frame->cfa.off == 16 && frame->ra.off == -8 &&
	       frame->fp.off == -16;
}

/*
 * The frame of a function whose return address is the word at
 * SP + @sp_off, with the caller's frame pointer still in the register:
 * this frame only, as its caller has a frame of its own.
 */
static void unwind_user_frame_at_sp(struct unwind_user_state *state,
				    unsigned long sp_off)
{
	struct unwind_user_frame *frame = &state->frame;

	frame->cfa = (struct unwind_user_loc){ UNWIND_USER_RULE_SP, false,
					       sp_off + state->pos.ws };
	frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true,
					      -(s32)state->pos.ws };
	frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_SAME };
	frame->outermost = false;
	frame->sets_floor = false;
	frame->records = false;
	frame->check_ra = false;
	frame->pc_end = frame->pc_start;
	unwind_user_frame_prepare(frame);
}

/*
 * The interrupted frame, where no format describes it by its data and
 * its frame record is not set up: caught in its prologue or epilogue,
 * which the architecture tells from the instructions at the IP, or a
 * leaf with no frame (a system call wrapper) called from code a table
 * describes, which the word at the stack pointer tells. Asked before
 * frame pointers, which would step such a frame by the caller's record
 * and skip the caller.
 *
 * Return: UNWIND_USER_FRAME, with *@framep at the walk's description
 * (state->frame); UNWIND_USER_UNKNOWN if it is neither (the record is
 * good).
 */
static enum unwind_user_step
unwind_user_first_frame(struct unwind_user_state *state,
			const struct unwind_user_frame **framep)
{
	unsigned long ra, sp_off;

	*framep = &state->frame;
	if (arch_unwind_user_first_frame(&state->pos, &sp_off)) {
		unwind_user_frame_at_sp(state, sp_off);
		return UNWIND_USER_FRAME;
	}
	/*
	 * The table first: decoding the call costs more, and rarely runs.
	 * A process with no table at all (most of them) reads nothing.
	 */
	if (state->pos.ws != 8 || !unwind_sframe_has_tables())
		return UNWIND_USER_UNKNOWN;
	if (get_user(ra, (u64 __user *)state->pos.sp)) {
		unwind_user_read_failed(&state->pos, state->pos.sp);
		return UNWIND_USER_UNKNOWN;
	}
	if (unwind_sframe_covers(state, ra) &&
	    arch_unwind_user_after_call(&state->pos, ra, NULL)) {
		unwind_user_frame_at_sp(state, 0);
		return UNWIND_USER_FRAME;
	}
	return UNWIND_USER_UNKNOWN;
}

/*
 * Describe the frame at state->pos.ip, asking the formats in the order the
 * walk wants them, the most exact first: frame pointers, asked last,
 * describe any frame (whether its record is good, the step tells).
 *
 * An interrupted frame that has not set its frame record up is
 * found before frame pointers are asked (unwind_user_first_frame()).
 *
 * Direct calls, not a table of function pointers: the walk asks at
 * every frame it cannot step by the description before, an indirect
 * call per format costs a retpoline where the kernel uses them, and a
 * format's common answer may be inline (format.h). A new format: its
 * own files, its function in its own header, one call here.
 *
 * @topmost is a constant in each caller: the interrupted frame's search
 * (unwind_user_find_topmost()) is out of line, and a caller's is inline
 * in the walk's loop, with nothing in it that only the first frame asks.
 *
 * Return: what the first format that knows the IP said; on
 * UNWIND_USER_FRAME, *@frame points to the description; UNWIND_USER_NEXT
 * if the frame was a signal frame, stepped to the interrupted one.
 */
static __always_inline enum unwind_user_step
unwind_user_find(struct unwind_user_state *state, const bool topmost,
		 const struct unwind_user_frame **frame)
{
	enum unwind_user_step found;

	/* What formats that have nothing for the IP may narrow. */
	state->frame.pc_start = 0;
	state->frame.pc_end = ULONG_MAX;
	state->frame.known_text = false;
	found = unwind_sframe_frame(state, topmost, frame);
	/*
	 * A caller's IP a table given for its file leaves out may be a
	 * signal restorer, whose CFI no table can say: the frame below is
	 * the one the kernel wrote, which gives the interrupted registers.
	 */
	if (found == UNWIND_USER_UNKNOWN && !topmost && state->in_table_gap &&
	    arch_unwind_user_sigframe(&state->pos))
		return UNWIND_USER_NEXT;
	if (found == UNWIND_USER_UNKNOWN)
		found = unwind_code_frame(state, topmost, frame);
	if (found == UNWIND_USER_UNKNOWN && topmost)
		found = unwind_user_first_frame(state, frame);
	if (found == UNWIND_USER_UNKNOWN)
		found = unwind_fp_frame(state, topmost, frame);
	return found == UNWIND_USER_UNKNOWN ? UNWIND_USER_STOP : found;
}

/*
 * The interrupted frame's search, once per walk and after a signal
 * frame: out of line, so that the rules only it needs add nothing to the
 * loop that steps every caller (make bench-insns-hist).
 */
static noinline enum unwind_user_step
unwind_user_find_topmost(struct unwind_user_state *state,
			 const struct unwind_user_frame **frame)
{
	return unwind_user_find(state, true, frame);
}

/**
 * unwind_user_walk - walk the current task's user stack
 * @state:	where the walk starts (unwind_user_start(), or crafted)
 * @trace:	receives the stack; @trace->entries holds @max entries
 * @max:	most entries to store
 *
 * If @state->guess is set and the walk stops before the stack's end, the
 * stack above is scanned for return addresses (unwind_user_guess()),
 * counted in @trace->guessed.
 *
 * With @state->pos.nofault set, the caller has disabled page faults (see
 * unwind_user_nofault()): the walk takes no lock and allocates nothing,
 * and sets @state->pos.blocked where it would have to (the result must then
 * be thrown away).
 *
 * Context: Task context, page faults allowed; with @state->pos.nofault, any
 * context whose task is in user mode below it, page faults disabled.
 * Return: the number of entries stored (also in @trace->nr).
 */
int unwind_user_walk(struct unwind_user_state *state,
		     struct unwind_stacktrace *trace, unsigned int max)
{
	const struct unwind_user_frame *frame;
	enum unwind_user_step step = UNWIND_USER_STOP;
	bool topmost = true;
	unsigned int walked;
	/* Entries before this are in known text (entry 0: the IP). */
	unsigned int known = 1;

	might_fault();
	trace->nr = 0;
	trace->guessed = 0;
	if (!max || !state->pos.ip)
		return 0;
	trace->entries[trace->nr++] = unwind_user_ip(&state->pos);
	/* What one walk learns; a state may be walked again. */
	state->last_record = 0;
	state->above_sp = false;
	state->sframe.rows_read = 0;
	state->marked_from = UINT_MAX;

	while (trace->nr < max && !state->pos.blocked) {
		state->frames = trace->nr;
		if (topmost)
			step = unwind_user_find_topmost(state, &frame);
		else
			step = unwind_user_find(state, false, &frame);
		if (step == UNWIND_USER_NEXT) {
			/*
			 * Past a signal frame: the interrupted frame, whose IP
			 * is no return address, on a stack that may be another
			 * (sigaltstack). Every stored entry bounds the walk.
			 */
			trace->entries[trace->nr++] =
				unwind_user_ip(&state->pos);
			state->last_record = 0;
			state->above_sp = false;
			topmost = true;
			continue;
		}
		if (step == UNWIND_USER_FRAME && frame->outermost)
			step = UNWIND_USER_END;
		if (step != UNWIND_USER_FRAME)
			break;
		/* The frame's own IP, a return address, in known text? */
		if (!topmost && known == trace->nr - 1 && frame->known_text &&
		    unwind_user_in_range(frame, state->pos.ip - 1))
			known = trace->nr;
		topmost = false;
		step = UNWIND_USER_UNKNOWN;
		if (state->pos.ws == 8 && frame->simple && !frame->check_ra) {
			if (unwind_user_record64(frame))
				step = unwind_user_run(state, frame, trace, max,
						       &known, true);
			else if (!frame->records)
				step = unwind_user_run(state, frame, trace, max,
						       &known, false);
		}
		if (step == UNWIND_USER_NEXT)
			continue;
		if (step != UNWIND_USER_UNKNOWN)
			break;
		/* One word at a time: compat, rare rules, or guessing. */
		do {
			step = unwind_user_step_frame(state, frame);
			if (step != UNWIND_USER_NEXT)
				break;
			trace->entries[trace->nr++] =
				unwind_user_ip(&state->pos);
		} while (trace->nr < max &&
			 unwind_user_in_range(frame, state->pos.ip - 1));
		if (step != UNWIND_USER_NEXT)
			break;
	}
	/*
	 * Stopped early, not at the stack's end: guess on, if asked to. The
	 * scan looks mappings up under the mmap lock: not without faults.
	 */
	if (state->guess && step != UNWIND_USER_END && trace->nr < max &&
	    !state->pos.blocked) {
		if (state->pos.nofault)
			state->pos.blocked = true;
		else
			unwind_user_guess(state, trace, max);
	}
	if (state->pos.blocked)
		return trace->nr;
	walked = trace->nr - trace->guessed;
	unwind_user_check_text(state, trace, known);
	trace->guessed = trace->nr > walked ? trace->nr - walked : 0;
	/* Frames that rest on a convention are marked as guessed ones are. */
	if (state->marked_from < trace->nr)
		trace->guessed = max(trace->guessed,
				     trace->nr - state->marked_from);
	return trace->nr;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_user_walk);

/**
 * unwind_user_walk_current - walk the current task's user stack from its
 *			      entry
 * @trace:	receives the stack
 * @max:	entries @trace has room for
 * @read_files:	the walk may read an object's file to find its table; the
 *		caller holds no lock that reading it takes
 *
 * The walk the deferred core keeps for an entry: from the user registers
 * the task entered the kernel with, guessing where the walk stops early
 * if the task asked for it (PR_SET_USER_STACK_GUESS).
 *
 * Context: Task context, page faults allowed.
 * Return: true, or false if the walk, reading no file, met text whose
 * table a walk that reads files could have found: its frames are exact,
 * but the stack may be shorter, so it is not the entry's walk.
 */
bool unwind_user_walk_current(struct unwind_stacktrace *trace,
			      unsigned int max, bool read_files)
{
	struct unwind_user_state state;

	unwind_user_start(&state, task_pt_regs(current));
	state.guess = READ_ONCE(current->unwind_info.guess);
	state.no_files = !read_files;
	unwind_user_walk(&state, trace, max);
	return !state.files_skipped;
}
