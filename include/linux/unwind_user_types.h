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
 * struct unwind_sframe_row - how to find the caller of a frame at some IP
 * @cfa:	the canonical frame address, the caller's stack pointer
 * @ra:		the return address
 * @fp:		the caller's frame pointer
 * @outermost:	the IP is in the outermost frame: the stack ends here
 * @signal:	a signal trampoline: the caller is not a call frame
 */
struct unwind_sframe_row {
	struct unwind_user_loc		cfa;
	struct unwind_user_loc		ra;
	struct unwind_user_loc		fp;
	bool				outermost;
	bool				signal;
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
 * struct unwind_sframe_sec - an SFrame section, checked, as the registry keeps it
 * @text_start:	first address of the text it answers for
 * @text_end:	end of that text (exclusive)
 * @sframe:	user address of the section (of a table the kernel holds: the
 *		address its function starts count from)
 * @sframe_end:	end of the section (exclusive); 0 if the text has no usable
 *		table
 * @kbuf:	the bytes of a table the kernel holds (NULL: the table is in
 *		user memory, at @sframe)
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
 * @files_seen:	for an object found with no table, the generation of the
 *		tables given for files when it was found (0: none can
 *		serve it); a newer one means its file may have one now
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
	const void	*kbuf;
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
	u32		files_seen;
	struct rcu_head	rcu;
};

/**
 * struct unwind_code_ident - the code an executable mapping maps
 * @ino:	its file's inode number (0: none)
 * @pgoff:	the mapping's offset in the file, in pages
 * @start:	the mapping's address
 * @dev:	the file's device
 * @gen:	the inode's generation
 */
struct unwind_code_ident {
	unsigned long	ino;
	unsigned long	pgoff;
	unsigned long	start;
	u32		dev;
	u32		gen;
};

/**
 * struct unwind_user_state - where a user stack walk stands
 * @ip:		user instruction pointer of the current frame
 * @sp:		user stack pointer of the current frame
 * @fp:		user frame pointer of the current frame
 * @ws:		word size of the task's user mode: 8, or 4 for compat tasks
 * @ip_base:	segment base added to code addresses (compat tasks)
 * @sp_base:	segment base added to stack addresses (compat tasks)
 * @frames:	entries the walk has stored: formats bound their work by it
 * @last_record: CFA of the last frame-pointer record stepped, 0 if none
 * @above_sp:	a frame was stepped by a table's description: later
 *		frame-pointer records must lie at or above the stack pointer
 * @frame:	the description the walk steps by (struct unwind_user_frame)
 * @sframe_sec:	the SFrame section (or "no table", sframe 0) of the text
 *		the last lookup met, so that the frames of a walk in one
 *		object look it up once; text_end 0 if none
 * @sframe_pc:	the IP whose SFrame row @sframe_row holds, 0 if none: the
 *		frames of a function that recurses share one lookup
 * @sframe_row:	the row the last table lookup found
 * @sframe_frame: that row as a frame description
 * @sframe_held: the description of the row for @sframe_pc: @sframe_frame,
 *		or the task's copy of it (sframe_cache.c)
 * @sframe_rows_read: rows of SFrame tables this walk has read
 * @sframe_rows_limit: rows it may read by now (kernel/unwind/sframe.h)
 * @guess:	where the walk stops early, scan the stack for more frames
 *		(set by the caller after unwind_user_start())
 * @syscall:	the task entered the kernel by a system call, or may have:
 *		the architecture's cheap test of the entry registers
 * @code_start: the executable mapping whose frames the walk reads
 *		from their code (the C library a system call was made from)
 * @code_end: its end (exclusive); equal to @code_start if none
 * @code_ident: what the mapping maps, for the task's copies of frames
 *		read before; all 0 if they may not be kept
 * @code_frames: frames this walk has read from their code
 * @code_budget: instructions this walk may still decode to read them
 * @marked_from: entries from this one on rest on a convention (a frame
 *		read from its code that the code alone did not prove): the
 *		walk counts them with the guessed ones (UINT_MAX: none)
 * @nofault:	the walk may not fault, sleep, take a lock or allocate (an
 *		interrupt of user mode, unwind_user_nofault()), and runs
 *		with page faults disabled
 * @blocked:	set by a walk with @nofault where a walk that may fault could
 *		have gone on or found other frames: its result is not used
 * @no_files:	the walk may fault but reads no object's file: the caller
 *		may hold locks that reading it takes (unwind_user_faultable_known())
 * @files_skipped: set by a walk with @no_files that met text whose table
 *		a walk reading files could have found: exact, but maybe shorter
 * @in_table_gap: the IP is in an object whose table, given for its file
 *		(converted from its CFI), does not describe it, or whose
 *		row for it is one the walk cannot step by (set by the SFrame
 *		format): a frame-pointer record there rests on a convention
 */
struct unwind_user_state {
	unsigned long	ip;
	unsigned long	sp;
	unsigned long	fp;
	unsigned int	ws;
	unsigned long	ip_base;
	unsigned long	sp_base;
	unsigned int	frames;
	unsigned long	last_record;
	bool		above_sp;
	struct unwind_user_frame frame;
	struct unwind_sframe_sec sframe_sec;
	unsigned long	sframe_pc;
	struct unwind_sframe_row sframe_row;
	struct unwind_user_frame sframe_frame;
	const struct unwind_user_frame *sframe_held;
	u32		sframe_rows_read;
	u32		sframe_rows_limit;
	bool		guess;
	bool		syscall;
	unsigned long	code_start;
	unsigned long	code_end;
	struct unwind_code_ident code_ident;
	unsigned int	code_frames;
	unsigned int	code_budget;
	unsigned int	marked_from;
	bool		nofault;
	bool		blocked;
	bool		no_files;
	bool		files_skipped;
	bool		in_table_gap;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
