/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for the kernel's uaccess.h: "user memory" is the code of
 * the ELF file the check loaded (image.c).
 */
#ifndef _SHIM_LINUX_UACCESS_H
#define _SHIM_LINUX_UACCESS_H
#include <linux/types.h>
#include <linux/compiler.h>
#define __user
#define TASK_SIZE_MAX	((1UL << 47) - 4096)
#include "image.h"
static inline unsigned long copy_from_user(void *dst, const void __user *src,
					   unsigned long n)
{
	return n - code_user_read(dst, (unsigned long)src, n);
}
#endif
