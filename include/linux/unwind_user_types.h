/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types of user space stack unwinding, kept free of other kernel headers so
 * that sched.h and other low-level headers can include them cheaply.
 */
#ifndef _LINUX_UNWIND_USER_TYPES_H
#define _LINUX_UNWIND_USER_TYPES_H

#include <linux/types.h>

/**
 * struct unwind_stacktrace - a user space stack trace
 * @nr:		number of valid entries
 * @guessed:	how many of the last entries were guessed by scanning the
 *		stack, not walked (only for tasks that asked for guesses)
 * @entries:	user addresses, innermost first: the interrupted user
 *		instruction pointer, then one return address per frame
 */
struct unwind_stacktrace {
	unsigned int	nr;
	unsigned int	guessed;
	unsigned long	*entries;
};

/**
 * enum unwind_user_rule - where a frame's CFA or a caller's register comes from
 * @UNWIND_USER_RULE_SAME:	unchanged: the callee's value (frame pointer)
 * @UNWIND_USER_RULE_SP:	the stack pointer plus the offset
 * @UNWIND_USER_RULE_FP:	the frame pointer plus the offset
 * @UNWIND_USER_RULE_CFA:	the CFA plus the offset (a saved register)
 */
enum unwind_user_rule {
	UNWIND_USER_RULE_SAME,
	UNWIND_USER_RULE_SP,
	UNWIND_USER_RULE_FP,
	UNWIND_USER_RULE_CFA,
};

/**
 * struct unwind_user_loc - one rule of a frame description
 * @rule:	what @off is added to (enum unwind_user_rule)
 * @deref:	the value is the word at that address, not the address
 * @off:	the offset
 */
struct unwind_user_loc {
	u8		rule;
	bool		deref;
	s32		off;
};

/**
 * struct unwind_user_frame - how to find the caller of a frame, in any format
 * @cfa:	the canonical frame address: the caller's stack pointer
 * @ra:		the return address
 * @fp:		the caller's frame pointer
 * @pc_start:	first IP this description holds for: callers whose IP
 *		(their return address minus one) lies in @pc_start..@pc_end
 *		are stepped by it too, without asking the formats again
 * @pc_end:	end of that range (exclusive); empty for this frame only
 * @outermost:	the stack ends at this frame (its caller is none)
 * @records:	a frame-pointer record: it must lie above the record of the
 *		frame before (which ends loops) rather than above the stack
 *		pointer, as records built by hand may lie off the stack
 * @sets_floor: the description comes from data that knows where the
 *		stack is (a table): frame-pointer records met after the
 *		step must lie at or above the stack pointer it reached
 * @check_ra:	each return address must follow a call (a walk that
 *		guesses, through code that may not keep frame pointers)
 * @known_text:	the text of the range is known to be executable (the SFrame
 *		registry found it): its return addresses need no check
 * @simple:	the usual form, which the walk steps in one user access
 *		window: CFA from SP or FP, not dereferenced; return address
 *		and frame pointer saved near the CFA, or the frame pointer
 *		unchanged. @lo_off and @span are valid.
 * @lo_off:	offset from the CFA of the lower of the words read
 * @span:	bytes from there to the end of the higher one
 *
 * Each format of unwinding data answers the walk with one of these for
 * the frame at an IP (kernel/unwind/format.h); the walk (user.c) steps
 * every frame by them, the same way for all formats.
 */
struct unwind_user_frame {
	struct unwind_user_loc	cfa;
	struct unwind_user_loc	ra;
	struct unwind_user_loc	fp;
	unsigned long		pc_start;
	unsigned long		pc_end;
	bool			outermost;
	bool			records;
	bool			sets_floor;
	bool			check_ra;
	bool			known_text;
	bool			simple;
	s32			lo_off;
	u32			span;
};

/**
 * struct unwind_user_pos - the frame a user stack walk stands at
 * @ip:		user instruction pointer of the current frame
 * @sp:		user stack pointer of the current frame
 * @fp:		user frame pointer of the current frame
 * @ip_base:	segment base added to code addresses (compat tasks)
 * @sp_base:	segment base added to stack addresses (compat tasks)
 * @ws:		word size of the task's user mode: 8, or 4 for compat tasks
 * @syscall:	the task entered the kernel by a system call, or may have:
 *		the architecture's cheap test of the entry registers
 * @nofault:	the walk may not fault, sleep, take a lock or allocate (an
 *		interrupt of user mode, unwind_user_nofault()), and runs
 *		with page faults disabled
 * @blocked:	set by a walk with @nofault where a walk that may fault could
 *		have gone on or found other frames: its result is not used
 *
 * The architecture's part of the walk (<asm/unwind_user.h>) reads and
 * writes this alone; the rest of the walk's state is the walk's own
 * (kernel/unwind/walk.h).
 */
struct unwind_user_pos {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned long	ip_base;
	unsigned long	sp_base;
	unsigned int	ws;
	bool		syscall;
	bool		nofault;
	bool		blocked;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
