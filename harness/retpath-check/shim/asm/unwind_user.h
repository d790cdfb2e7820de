/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_ASM_UNWIND_USER_H
#define _SHIM_ASM_UNWIND_USER_H
bool arch_unwind_user_retpath(struct unwind_user_state *state,
			      struct unwind_user_frame *frame);
#endif
