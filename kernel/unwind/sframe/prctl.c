// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_SFRAME_ADD/PR_SFRAME_REMOVE): SFrame sections for text a
 * process makes or maps itself (JITs, custom loaders). They go into the
 * mm's registry (registry.c) under the mmap write lock, and are charged
 * to the process's memory cgroup.
 */
#include <linux/compat.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/unwind_sframe.h>
#include <kunit/visibility.h>
#include "sframe.h"
#include "registry.h"

/*
 * Most ranges prctl(PR_SFRAME_ADD) may add to one mm (-ENOSPC past it):
 * a JIT adds one per code region, not one per function.
 */
#define SFRAME_MAX_REGISTERED	16384

/* Is all of [@start, @end) mapped executable? */
static bool sframe_text_mapped(struct mm_struct *mm, unsigned long start,
			       unsigned long end)
{
	VMA_ITERATOR(vmi, mm, start);
	struct vm_area_struct *vma;
	unsigned long next = start;

	for_each_vma_range(vmi, vma, end) {
		if (vma->vm_start > next || !(vma->vm_flags & VM_EXEC))
			return false;
		next = vma->vm_end;
	}
	return next >= end;
}

static int sframe_prctl_add(unsigned long sframe, unsigned long len,
			    unsigned long start, unsigned long end)
{
	struct mm_struct *mm = current->mm;
	struct unwind_sframe_sec *sec;
	const char *why;
	int ret;

	if (start >= end || end > TASK_SIZE)
		return -EINVAL;
	sec = sframe_alloc(start, end);
	if (!sec)
		return -ENOMEM;
	ret = sframe_sec_init(sec, sframe, len, &why);
	if (ret)
		goto free;
	sec->registered = true;

	ret = mmap_write_lock_killable(mm);
	if (ret)
		goto free;
	if (!sframe_text_mapped(mm, start, end))
		ret = -EINVAL;
	else if (mm->sframe_registered >= SFRAME_MAX_REGISTERED)
		ret = -ENOSPC;
	else
		ret = sframe_erase(mm, start, end, false);
	if (ret >= 0)
		ret = sframe_tree_add(mm, sec);
	mmap_write_unlock(mm);
	if (!ret)
		return 0;
free:
	kfree(sec);
	return ret;
}

static int sframe_prctl_remove(unsigned long start)
{
	struct mm_struct *mm = current->mm;
	struct unwind_sframe_sec *sec;
	int ret;

	ret = mmap_write_lock_killable(mm);
	if (ret)
		return ret;
	sec = mtree_load(&mm->sframe_mt, start);
	if (sec && sec->registered && sec->text_start == start &&
	    !READ_ONCE(sec->erased)) {
		/* An entry left marked erased is removed for every reader. */
		sframe_tree_del(mm, sec, start);
		sframe_new_gen(mm);
	} else {
		ret = -ENOENT;
	}
	mmap_write_unlock(mm);
	return ret;
}

/**
 * unwind_sframe_prctl - add or remove an SFrame section for a text range
 * @option:	PR_SFRAME_ADD or PR_SFRAME_REMOVE
 * @arg2:	ADD: user address of the section; REMOVE: start of the text
 * @arg3:	ADD: size of the section; REMOVE: 0
 * @arg4:	ADD: start of the text it describes; REMOVE: 0
 * @arg5:	ADD: end of that text (exclusive); REMOVE: 0
 *
 * An added section answers for IPs in [@arg4, @arg5), which must be
 * mapped executable, until it is removed or the text is unmapped; it
 * replaces what the kernel found by itself there, and overlapping another
 * added section is an error. An mm holds at most SFRAME_MAX_REGISTERED.
 *
 * Context: Task context (the prctl() system call).
 * Return: 0; -EINVAL for bad arguments, text not mapped executable or a
 * section that fails a check; -EFAULT if the section cannot be read;
 * -EEXIST if the text overlaps an added section (nothing is changed);
 * -ENOSPC if the mm holds SFRAME_MAX_REGISTERED of them; -ENOMEM;
 * -ENOENT if REMOVE finds no added section at @arg2.
 */
int unwind_sframe_prctl(int option, unsigned long arg2, unsigned long arg3,
			unsigned long arg4, unsigned long arg5)
{
	if (!current->mm || in_compat_syscall())
		return -EINVAL;
	switch (option) {
	case PR_SFRAME_ADD:
		return sframe_prctl_add(arg2, arg3, arg4, arg5);
	case PR_SFRAME_REMOVE:
		if (arg3 || arg4 || arg5)
			return -EINVAL;
		return sframe_prctl_remove(arg2);
	}
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_sframe_prctl);
