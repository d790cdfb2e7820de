/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code reading's part of a user stack walk's state (walk.h): the
 * mapping whose frames the walk reads from their code (code.c), and what
 * the reading may still spend.
 */
#ifndef _KERNEL_UNWIND_CODE_CURSOR_H
#define _KERNEL_UNWIND_CODE_CURSOR_H

#include <linux/types.h>

struct unwind_code_cache;

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
 * struct unwind_code_cursor - the code reading's part of a walk
 * @start:	the executable mapping whose frames the walk reads
 *		from their code (the C library a system call was made from)
 * @end:	its end (exclusive); equal to @start if none
 * @ident:	what the mapping maps, for the task's copies of frames
 *		read before; all 0 if they may not be kept
 * @frames:	frames this walk has read from their code
 * @budget:	instructions this walk may still decode to read them
 * @cache:	the task's frames read before, and the reading's scratch
 *		(code.c), once this walk has looked them up; NULL until
 *		then
 */
struct unwind_code_cursor {
	unsigned long	start;
	unsigned long	end;
	struct unwind_code_ident ident;
	unsigned int	frames;
	unsigned int	budget;
	struct unwind_code_cache *cache;
};

#endif /* _KERNEL_UNWIND_CODE_CURSOR_H */
