/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an SFrame section's checks (check.c) use of its reading (read.c):
 * the function descriptor, decoded from any version, and the helpers
 * that read and reject it.
 */
#ifndef _KERNEL_UNWIND_SFRAME_READ_H
#define _KERNEL_UNWIND_SFRAME_READ_H

#include <linux/types.h>

struct unwind_sframe_sec;

/* A function descriptor of any version, with absolute user addresses. */
struct sframe_fde {
	unsigned long	start;
	u32		size;
	unsigned long	fres;		/* first FRE */
	u32		num_fres;
	u8		info;
	u8		info2;
	u8		rep_size;	/* PC-mask block size, 0 if none */
};

int sframe_copy(const struct unwind_sframe_sec *sec, void *dst,
		unsigned long addr, size_t len);
int sframe_bad(const char **why, const char *reason);
int sframe_decode_fde(const struct unwind_sframe_sec *sec, u32 i,
		      const void *raw, struct sframe_fde *fde,
		      const char **why);

#endif /* _KERNEL_UNWIND_SFRAME_READ_H */
