/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 part of the code reading (kernel/unwind/code.c): the frame of
 * 64-bit user code read from the instructions after its IP
 * (arch/x86/kernel/unwind_user_code.c).
 */
#ifndef _ASM_X86_UNWIND_USER_CODE_H
#define _ASM_X86_UNWIND_USER_CODE_H

#include <linux/unwind_user_types.h>

/* What arch_unwind_user_code_frame() found. */
enum unwind_code_found {
	UNWIND_CODE_NONE,		/* nothing: the reading gave up */
	UNWIND_CODE_EXACT,		/* the frame, by every way out */
	UNWIND_CODE_INFERRED,		/* the frame, resting on a convention */
};

/* Bytes of scratch the reading needs, kept with the task. */
#define ARCH_UNWIND_CODE_SCRATCH	4608

enum unwind_code_found
arch_unwind_user_code_frame(const struct unwind_user_pos *pos,
			    unsigned long start, unsigned long end,
			    struct unwind_user_frame *frame, void *scratch,
			    unsigned int *budget);

#endif /* _ASM_X86_UNWIND_USER_CODE_H */
