/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code reading as the user stack walk (user.c) asks it: the frame a
 * system call was made from, and its callers in the same mapping, read
 * from their code (code.c) where neither tables nor frame pointers
 * describe them (a C library's), for 64-bit tasks. Internal to
 * kernel/unwind.
 */
#ifndef _KERNEL_UNWIND_CODE_H
#define _KERNEL_UNWIND_CODE_H

#include "format.h"

#ifdef CONFIG_UNWIND_USER_CODE_FRAMES
enum unwind_user_step unwind_code_frame(struct unwind_user_state *state,
					bool topmost,
					const struct unwind_user_frame **frame);
#else
static inline enum unwind_user_step
unwind_code_frame(struct unwind_user_state *state, bool topmost,
		  const struct unwind_user_frame **frame)
{
	return UNWIND_USER_UNKNOWN;
}
#endif

#endif /* _KERNEL_UNWIND_CODE_H */
