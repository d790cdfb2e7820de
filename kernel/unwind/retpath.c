// SPDX-License-Identifier: GPL-2.0
/*
 * Frames read from their code: the format of user stack unwinding for the
 * frames of a system call's wrapper and its callers in the same library,
 * where there are neither tables nor frame pointers.
 *
 * A program built with frame pointers makes its system calls through a C
 * library that most distributions build without them. A walk by frame
 * pointers cannot step the library's frames: it skips the program's own
 * caller, or goes on from whatever the library left in the frame pointer
 * register. The architecture can read a frame from the code after its IP
 * instead (arch_unwind_user_retpath()): what every way to the function's
 * return pops and adds back. That costs a few hundred instructions
 * decoded, so this format reads only where it pays:
 *
 * - the interrupted frame, when the task is in a system call and the
 *   instruction before the IP is the system call instruction;
 * - then its callers while they lie in the same executable mapping, the
 *   library that made the call, up to UNWIND_RETPATH_FRAMES of them.
 *
 * The walk leaves the mapping at the program's code, which it steps by
 * frame pointers or SFrame as before. Where a reading gives up, the
 * interrupted frame goes to the frame-pointer format and its rules for a
 * first frame; a caller in the mapping is stepped by frame pointer with
 * its return address checked to follow a call, so that a frame pointer
 * the library left behind ends the walk rather than adding wrong frames.
 * Every return address read by a frame read from its code is checked the
 * same way.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>
#include "format.h"

/* Frames one walk reads from their code, at most. */
#define UNWIND_RETPATH_FRAMES	16

/*
 * Note the executable mapping of the interrupted IP as the one whose
 * frames the walk reads. False if the IP is in none.
 */
static bool unwind_retpath_mapping(struct unwind_user_state *state)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	bool found = false;

	if (!mm || mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, state->ip);
	if (vma && (vma->vm_flags & VM_EXEC)) {
		state->retpath_start = vma->vm_start;
		state->retpath_end = vma->vm_end;
		found = true;
	}
	mmap_read_unlock(mm);
	return found;
}

/**
 * unwind_retpath_frame - the frame at an IP, read from the code after it
 * @state:	the walk, at the frame
 * @topmost:	the frame is the interrupted one
 * @framep:	set to the walk's description (state->frame), filled in
 *
 * Context: Task context, page faults allowed.
 * Return: UNWIND_USER_FRAME, or UNWIND_USER_UNKNOWN outside the frames
 * this format reads (and for an interrupted frame it could not read).
 */
enum unwind_user_step unwind_retpath_frame(struct unwind_user_state *state,
					   bool topmost,
					   const struct unwind_user_frame **framep)
{
	struct unwind_user_frame *frame = &state->frame;
	enum unwind_user_step step;

	if (state->ws != 8)
		return UNWIND_USER_UNKNOWN;
	if (topmost) {
		state->retpath_start = state->retpath_end = 0;
		state->retpath_frames = 0;
		if (!state->syscall || !arch_unwind_user_after_syscall(state) ||
		    !unwind_retpath_mapping(state))
			return UNWIND_USER_UNKNOWN;
	} else if (state->ip - 1 - state->retpath_start >=
		   state->retpath_end - state->retpath_start) {
		return UNWIND_USER_UNKNOWN;
	}

	if (state->retpath_frames < UNWIND_RETPATH_FRAMES &&
	    arch_unwind_user_retpath(state, frame)) {
		state->retpath_frames++;
		*framep = frame;
		frame->outermost = false;
		frame->records = false;
		/* Frame records after it lie above the stack it found. */
		frame->sets_floor = true;
		frame->check_ra = true;
		/* This frame only: the next one is read again. */
		frame->pc_end = frame->pc_start;
		unwind_user_frame_prepare(frame);
		return UNWIND_USER_FRAME;
	}
	if (topmost) {
		state->retpath_end = state->retpath_start;
		return UNWIND_USER_UNKNOWN;
	}
	/* Code without frame pointers: trust its %rbp only if it checks. */
	step = unwind_fp_frame(state, false, framep);
	frame->check_ra = true;
	frame->pc_end = frame->pc_start;
	return step;
}
