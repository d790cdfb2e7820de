/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the walk's public types, from the kernel's own header. */
#ifndef _SHIM_LINUX_UNWIND_USER_TYPES_H
#define _SHIM_LINUX_UNWIND_USER_TYPES_H
struct rcu_head { void *next, *func; };
#include "../../../../include/linux/unwind_user_types.h"
#endif
