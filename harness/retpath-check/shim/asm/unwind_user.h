/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_ASM_UNWIND_USER_H
#define _SHIM_ASM_UNWIND_USER_H
/* As arch/x86/include/asm/unwind_user.h declares them. */
enum unwind_retpath_found {
	UNWIND_RETPATH_NONE,
	UNWIND_RETPATH_EXACT,
	UNWIND_RETPATH_INFERRED,
};
#define ARCH_UNWIND_RETPATH_SCRATCH	4608
enum unwind_retpath_found arch_unwind_user_retpath(struct unwind_user_state *state,
						   struct unwind_user_frame *frame,
						   void *scratch,
						   unsigned int *budget);
#endif
