/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in for the kernel's slab.h. */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H
#include <stdlib.h>
#define GFP_KERNEL	0
#define __GFP_NOWARN	0
static inline void *kmalloc(size_t size, int flags) { return malloc(size); }
static inline void kfree(void *p) { free(p); }
#endif
