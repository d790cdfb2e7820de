/* SPDX-License-Identifier: GPL-2.0 */
/* An object's ELF headers, read from its file (sframe/elf.c). */
#ifndef _KERNEL_UNWIND_SFRAME_ELF_H
#define _KERNEL_UNWIND_SFRAME_ELF_H

#include <linux/elf.h>

struct file;

struct elf64_phdr *sframe_elf_phdrs(struct file *file, unsigned int *phnum);
int sframe_elf_build_id(struct file *file, u8 *id);

#endif /* _KERNEL_UNWIND_SFRAME_ELF_H */
