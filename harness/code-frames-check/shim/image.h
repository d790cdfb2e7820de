/* SPDX-License-Identifier: GPL-2.0 */
/* The ELF file the host check reads as user memory (image.c). */
#ifndef _SHIM_IMAGE_H
#define _SHIM_IMAGE_H
int image_load(const char *path);
unsigned long code_user_read(void *dst, unsigned long addr, unsigned long n);
void code_mapping(unsigned long addr, unsigned long *start,
		  unsigned long *end);
#endif
