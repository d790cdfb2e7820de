/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A task reads its own user stack: prctl(PR_USER_STACK_READ), served by
 * the kernel's user stack walker (kernel/unwind/self.c).
 */
#ifndef _LINUX_UNWIND_SELF_H
#define _LINUX_UNWIND_SELF_H

#include <linux/errno.h>

#ifdef CONFIG_UNWIND_USER_SELF

int unwind_user_read_self(unsigned long buf, unsigned long size,
			  unsigned long skip, unsigned long zero);

#else /* !CONFIG_UNWIND_USER_SELF */

static inline int unwind_user_read_self(unsigned long buf, unsigned long size,
					unsigned long skip, unsigned long zero)
{
	return -EINVAL;
}

#endif /* CONFIG_UNWIND_USER_SELF */

#endif /* _LINUX_UNWIND_SELF_H */
