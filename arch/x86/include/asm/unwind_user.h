/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 part of the user stack walker (kernel/unwind/user.c): frame-pointer
 * frames of 64-bit tasks and of 32-bit compat tasks.
 */
#ifndef _ASM_X86_UNWIND_USER_H
#define _ASM_X86_UNWIND_USER_H

#include <linux/unwind_user_types.h>

struct pt_regs;

void arch_unwind_user_init(struct unwind_user_pos *pos,
			   struct pt_regs *regs);
bool arch_unwind_user_first_frame(struct unwind_user_pos *pos,
				  unsigned long *sp_off);
bool arch_unwind_user_after_call(struct unwind_user_pos *pos,
				 unsigned long ra, unsigned long *target);
bool arch_unwind_user_after_syscall(struct unwind_user_pos *pos);
bool arch_unwind_user_sigframe(struct unwind_user_pos *pos);

#endif /* _ASM_X86_UNWIND_USER_H */
