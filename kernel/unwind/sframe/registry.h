/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the SFrame registry's files share. registry.c keeps each mm's tree
 * of sections and states its rules; discover.c (ELF headers, tables given
 * for files) and prctl.c (sections a process adds) go through these.
 */
#ifndef _KERNEL_UNWIND_SFRAME_REGISTRY_H
#define _KERNEL_UNWIND_SFRAME_REGISTRY_H

#include "sframe.h"

struct file;
struct mm_struct;

void sframe_report(const struct unwind_sframe_sec *sec, struct file *file,
		   const char *why);
bool sframe_read_may_pass(int err);
int sframe_sec_fill(struct unwind_sframe_sec *sec, unsigned long sframe,
		    unsigned long len, struct file *file);
void sframe_new_gen(struct mm_struct *mm);
struct unwind_sframe_sec *sframe_alloc(unsigned long start,
				       unsigned long end);
int sframe_tree_add(struct mm_struct *mm, struct unwind_sframe_sec *sec);
int sframe_tree_del(struct mm_struct *mm, struct unwind_sframe_sec *sec,
		    unsigned long start);
void sframe_insert(struct mm_struct *mm, struct unwind_sframe_sec *sec);
int sframe_erase(struct mm_struct *mm, unsigned long start,
		 unsigned long end, bool all);

#endif /* _KERNEL_UNWIND_SFRAME_REGISTRY_H */
