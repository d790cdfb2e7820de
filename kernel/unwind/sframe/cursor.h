/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SFrame format's part of a user stack walk's state (walk.h): the
 * section and the row the last lookup found, kept so that the frames of
 * one object look its section up once and the frames of a recursion share
 * one row (sframe/frame.h), and the rows the walk may still read.
 */
#ifndef _KERNEL_UNWIND_SFRAME_CURSOR_H
#define _KERNEL_UNWIND_SFRAME_CURSOR_H

#include <linux/types.h>
#include <linux/unwind_user_types.h>

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
 * struct unwind_sframe_sec - a checked SFrame section in the registry
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
 * Immutable once in the registry (kernel/unwind/sframe/registry.c has its
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
 * struct unwind_sframe_cursor - the SFrame format's part of a walk
 * @sec:	the SFrame section (or "no table", sframe 0) of the text
 *		the last lookup met, so that the frames of a walk in one
 *		object look it up once; text_end 0 if none
 * @pc:		the IP whose SFrame row @row holds, 0 if none: the
 *		frames of a function that recurses share one lookup
 * @row:	the row the last table lookup found
 * @frame:	that row as a frame description
 * @held:	the description of the row for @pc: @frame,
 *		or the task's copy of it (sframe/copies.c)
 * @rows_read:	rows of SFrame tables this walk has read
 * @rows_limit:	rows it may read by now (kernel/unwind/sframe/sframe.h)
 */
struct unwind_sframe_cursor {
	struct unwind_sframe_sec sec;
	unsigned long	pc;
	struct unwind_sframe_row row;
	struct unwind_user_frame frame;
	const struct unwind_user_frame *held;
	u32		rows_read;
	u32		rows_limit;
};

#endif /* _KERNEL_UNWIND_SFRAME_CURSOR_H */
