/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame tables the kernel holds for files (sframe/file.c), as the prctl
 * that gives them (sframe/file_prctl.c), the registry of a process's
 * mappings (sframe/registry.c) and the walk (sframe/lookup.c) use them.
 */
#ifndef _KERNEL_UNWIND_SFRAME_FILE_H
#define _KERNEL_UNWIND_SFRAME_FILE_H

#include <linux/buildid.h>
#include <linux/types.h>

/* The largest build ID (elf.c reads it). */
#define SFRAME_BUILD_ID_MAX	BUILD_ID_SIZE_MAX

struct file;
struct inode;
struct mm_struct;
struct sframe_file_table;
struct unwind_sframe_sec;

int sframe_file_store(const struct inode *inode, const u8 *id, u32 id_size,
		      void *data, unsigned long len);
int sframe_file_forget(const struct inode *inode);
struct sframe_file_table *sframe_file_get(struct file *file);
const void *sframe_file_table_data(const struct sframe_file_table *t,
				   unsigned long *len);
void sframe_file_release(struct sframe_file_table *t);
int sframe_file_pin(struct mm_struct *mm, struct sframe_file_table *t);
void sframe_file_unpin_all(struct mm_struct *mm);

/*
 * Tables given so far (a generation), and whether an object's text found
 * with no table before the last one may have one now: the registry then
 * reads its mapping again.
 */
u32 sframe_file_generation(void);
bool sframe_sec_stale(const struct unwind_sframe_sec *sec);

#endif /* _KERNEL_UNWIND_SFRAME_FILE_H */
