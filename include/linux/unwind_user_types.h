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
 * struct unwind_sframe_loc - a value of the caller, as a rule of an SFrame row
 * @rule:	what the offset is added to (enum sframe_rule, in
 *		kernel/unwind/sframe.h): unchanged, SP, FP or CFA
 * @deref:	the value is the word at that address (else the address)
 * @off:	the offset
 */
struct unwind_sframe_loc {
	u8		rule;
	bool		deref;
	s32		off;
};

/**
 * struct unwind_sframe_row - how to find the caller of a frame at some IP
 * @cfa:	the canonical frame address, the caller's stack pointer
 * @ra:		the return address
 * @fp:		the caller's frame pointer
 * @outermost:	the IP is in the outermost frame: the stack ends here
 * @signal:	a signal trampoline: the caller is not a call frame
 */
struct unwind_sframe_row {
	struct unwind_sframe_loc	cfa;
	struct unwind_sframe_loc	ra;
	struct unwind_sframe_loc	fp;
	bool				outermost;
	bool				signal;
};

/**
 * struct unwind_sframe_quick - an SFrame row of the usual form, ready to use
 * @ok:		the row has that form; the other fields are valid
 * @cfa_fp:	the CFA is the frame pointer plus @cfa_off (else the SP)
 * @fp_saved:	the caller's frame pointer is at CFA + @fp_off (else it is
 *		unchanged)
 * @cfa_off:	offset of the CFA from its base register
 * @ra_off:	offset from the CFA of the saved return address
 * @fp_off:	offset from the CFA of the saved frame pointer
 * @lo_off:	offset from the CFA of the lower of the words read
 * @span:	bytes from there to the end of the higher one
 *
 * Nearly every row says this: CFA from SP or FP, return address saved at
 * the CFA, frame pointer saved there or untouched. A step by such a row is
 * one user access window and one or two loads, as a frame-pointer step.
 */
struct unwind_sframe_quick {
	bool		ok;
	bool		cfa_fp;
	bool		fp_saved;
	s32		cfa_off;
	s32		ra_off;
	s32		fp_off;
	s32		lo_off;
	u32		span;
};

/**
 * struct unwind_sframe_sec - an SFrame section, checked, as the registry keeps it
 * @text_start:	first address of the text it answers for
 * @text_end:	end of that text (exclusive)
 * @sframe:	user address of the section; 0 if the text has no usable one
 * @sframe_end:	end of the section (exclusive)
 * @fdes:	user address of the first function descriptor (index entry)
 * @fres:	user address of the FRE sub-section
 * @fres_end:	end of the FRE sub-section (exclusive)
 * @num_fdes:	number of function descriptors
 * @version:	1, 2 or 3
 * @flags:	the header's flags
 * @fde_size:	bytes per descriptor (17, 20) or index entry (16)
 * @ra_off:	where the return address is, from the CFA
 * @registered:	added by prctl(): only prctl() removes it, or an unmap
 * @erased:	an erase could not take it out of the tree: readers skip it
 * @rcu:	entries are freed after a grace period, readers copy them
 *
 * Immutable once in the registry (kernel/unwind/sframe_mm.c has its
 * rules); a walk keeps a copy of the last one it used.
 */
struct unwind_sframe_sec {
	unsigned long	text_start;
	unsigned long	text_end;
	unsigned long	sframe;
	unsigned long	sframe_end;
	unsigned long	fdes;
	unsigned long	fres;
	unsigned long	fres_end;
	u32		num_fdes;
	u8		version;
	u8		flags;
	u8		fde_size;
	s8		ra_off;
	bool		registered;
	bool		erased;
	struct rcu_head	rcu;
};

/**
 * struct unwind_user_state - where a user stack walk stands
 * @ip:		user instruction pointer of the current frame
 * @sp:		user stack pointer of the current frame
 * @fp:		user frame pointer of the current frame
 * @ws:		word size of the task's user mode: 8, or 4 for compat tasks
 * @ip_base:	segment base added to code addresses (compat tasks)
 * @sp_base:	segment base added to stack addresses (compat tasks)
 * @sframe_sec:	the SFrame section (or "no table", sframe 0) of the text
 *		the last lookup met, so that the frames of a walk in one
 *		object look it up once; text_end 0 if none
 * @sframe_pc:	the IP whose SFrame row @sframe_row holds, 0 if none: the
 *		frames of a function that recurses share one lookup
 * @sframe_row:	that row
 * @sframe_quick: that row in its quick form, if it has one
 * @sframe_rows_read: rows of SFrame tables this walk has read
 * @sframe_rows_limit: rows it may read by now (kernel/unwind/sframe.h)
 * @guess:	where the walk stops early, scan the stack for more frames
 *		(set by the caller after unwind_user_start())
 */
struct unwind_user_state {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned int	ws;
	unsigned long	ip_base;
	unsigned long	sp_base;
	struct unwind_sframe_sec sframe_sec;
	unsigned long	sframe_pc;
	struct unwind_sframe_row sframe_row;
	struct unwind_sframe_quick sframe_quick;
	u32		sframe_rows_read;
	u32		sframe_rows_limit;
	bool		guess;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
