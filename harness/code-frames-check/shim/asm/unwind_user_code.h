/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_ASM_UNWIND_USER_CODE_H
#define _SHIM_ASM_UNWIND_USER_CODE_H
/* As arch/x86/include/asm/unwind_user_code.h declares them. */
enum unwind_code_found {
	UNWIND_CODE_NONE,
	UNWIND_CODE_EXACT,
	UNWIND_CODE_INFERRED,
};

#define ARCH_UNWIND_CODE_SCRATCH	4608

enum unwind_code_found
arch_unwind_user_code_frame(const struct unwind_user_pos *pos,
			    unsigned long start, unsigned long end,
			    struct unwind_user_frame *frame, void *scratch,
			    unsigned int *budget);
#endif
