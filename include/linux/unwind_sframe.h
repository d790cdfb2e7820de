/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame tables of a process's user code, for the user stack walker.
 *
 * Each mm keeps what it knows about the SFrame sections of its executable
 * mappings (kernel/unwind/sframe/registry.c): the executable and its
 * interpreter are added at exec, every other executable mapping the first time
 * the walker meets an address in it, and code that makes its own text (JITs,
 * custom loaders) adds and removes sections with prctl(). Objects built without
 * SFrame can be given tables by file, by a privileged process
 * (kernel/unwind/sframe/file.c), which every process mapping them uses. The
 * walker (<linux/unwind_user.h>) asks for one frame at a time.
 */
#ifndef _LINUX_UNWIND_SFRAME_H
#define _LINUX_UNWIND_SFRAME_H

#include <linux/errno.h>
#include <linux/types.h>

struct elf64_phdr;
struct file;
struct mm_struct;

#ifdef CONFIG_UNWIND_USER_SFRAME

void unwind_sframe_mm_init(struct mm_struct *mm);
void unwind_sframe_mm_free(struct mm_struct *mm);
void unwind_sframe_unmap(struct mm_struct *mm, unsigned long start,
			 unsigned long end);
void unwind_sframe_add_elf(struct file *file, const struct elf64_phdr *phdrs,
			   unsigned int phnum, unsigned long bias);
int unwind_sframe_prctl(int option, unsigned long arg2, unsigned long arg3,
			unsigned long arg4, unsigned long arg5);
int unwind_sframe_file_prctl(int option, unsigned long arg2, unsigned long arg3,
			     unsigned long arg4, unsigned long arg5);

#else /* !CONFIG_UNWIND_USER_SFRAME */

static inline void unwind_sframe_mm_init(struct mm_struct *mm) { }
static inline void unwind_sframe_mm_free(struct mm_struct *mm) { }
static inline void unwind_sframe_unmap(struct mm_struct *mm,
				       unsigned long start,
				       unsigned long end) { }
static inline void unwind_sframe_add_elf(struct file *file,
					 const struct elf64_phdr *phdrs,
					 unsigned int phnum,
					 unsigned long bias) { }
static inline int unwind_sframe_prctl(int option, unsigned long arg2,
				      unsigned long arg3, unsigned long arg4,
				      unsigned long arg5)
{
	return -EINVAL;
}

static inline int unwind_sframe_file_prctl(int option, unsigned long arg2,
					   unsigned long arg3,
					   unsigned long arg4,
					   unsigned long arg5)
{
	return -EINVAL;
}

#endif /* CONFIG_UNWIND_USER_SFRAME */

#endif /* _LINUX_UNWIND_SFRAME_H */
