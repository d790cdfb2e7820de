// SPDX-License-Identifier: GPL-2.0
/*
 * How the SFrame registry (registry.c) learns an object's table: from its
 * ELF program headers, at exec for the executable and its interpreter, and
 * for every other executable mapping the first time a walk meets an IP
 * in it (sframe_lookup()), by reading the mapping's file; or from the
 * tables the kernel holds for files (file.c) where the object has none.
 * The rules of the tree it inserts into are registry.c's.
 */
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/unwind_sframe.h>
#include <kunit/visibility.h>
#include "sframe.h"
#include "file.h"
#include "elf.h"
#include "registry.h"

#include <trace/events/unwind_sframe.h>

/* The PT_GNU_SFRAME header of an object, if it has one. */
static const struct elf64_phdr *sframe_phdr(const struct elf64_phdr *phdrs,
					    unsigned int phnum)
{
	unsigned int i;

	for (i = 0; i < phnum; i++)
		if (phdrs[i].p_type == PT_GNU_SFRAME)
			return &phdrs[i];
	return NULL;
}

/**
 * unwind_sframe_add_elf - add the SFrame section of an object being exec'd
 * @file:	the object's file, for messages
 * @phdrs:	its program headers
 * @phnum:	how many
 * @bias:	its load bias
 *
 * binfmt_elf calls this for the executable and its interpreter, once their
 * segments are mapped in the new mm. An object without PT_GNU_SFRAME adds
 * nothing: the walker records that when it first needs to know.
 *
 * Context: Task context (execve), page faults allowed.
 */
void unwind_sframe_add_elf(struct file *file, const struct elf64_phdr *phdrs,
			   unsigned int phnum, unsigned long bias)
{
	const struct elf64_phdr *sf = sframe_phdr(phdrs, phnum);
	struct mm_struct *mm = current->mm;
	unsigned int i;

	if (!sf || !mm)
		return;
	for (i = 0; i < phnum; i++) {
		const struct elf64_phdr *ph = &phdrs[i];
		struct unwind_sframe_sec *sec;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !ph->p_memsz)
			continue;
		sec = sframe_alloc(PAGE_ALIGN_DOWN(bias + ph->p_vaddr),
				   PAGE_ALIGN(bias + ph->p_vaddr + ph->p_memsz));
		if (!sec)
			return;
		/* Not recorded: the first walk that needs it reads it again. */
		if (sframe_sec_fill(sec, bias + sf->p_vaddr, sf->p_memsz, file)) {
			kfree(sec);
			continue;
		}
		if (sframe_tree_add(mm, sec))
			kfree(sec);
	}
}

/*
 * Read the ELF and program headers of the file mapped at @start (file
 * offset @pgoff pages) and find its SFrame section's address in memory,
 * and the object's load bias. Returns 0 with *sframe = 0 if the file has
 * none (*bias is then valid too), -ENOEXEC if it is no ELF object we read
 * or the mapping is of no executable segment, or the error of a read
 * that failed.
 */
static int sframe_from_file(struct file *file, unsigned long start,
			    unsigned long pgoff, unsigned long *sframe,
			    unsigned long *len, unsigned long *bias)
{
	const struct elf64_phdr *sf, *load = NULL;
	u64 off = (u64)pgoff << PAGE_SHIFT;
	struct elf64_phdr *phdrs;
	unsigned int i, phnum;
	int ret = -ENOEXEC;

	*sframe = 0;
	phdrs = sframe_elf_phdrs(file, &phnum);
	if (IS_ERR(phdrs))
		return PTR_ERR(phdrs);

	sf = sframe_phdr(phdrs, phnum);
	/* The executable segment this mapping comes from gives the bias. */
	for (i = 0; i < phnum; i++) {
		const struct elf64_phdr *ph = &phdrs[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    PAGE_ALIGN_DOWN(ph->p_offset) <= off &&
		    off < ph->p_offset + ph->p_filesz) {
			load = ph;
			break;
		}
	}
	if (load) {
		*bias = start - off + load->p_offset - load->p_vaddr;
		if (sf) {
			*sframe = *bias + sf->p_vaddr;
			*len = sf->p_memsz;
		}
		ret = 0;
	}
	kfree(phdrs);
	return ret;
}

/* Is @vma still the mapping described by @file, @start, @end, @pgoff? */
static bool sframe_same_vma(struct vm_area_struct *vma, struct file *file,
			    unsigned long start, unsigned long end,
			    unsigned long pgoff)
{
	return vma && vma->vm_file == file && vma->vm_start == start &&
	       vma->vm_end == end && vma->vm_pgoff == pgoff &&
	       (vma->vm_flags & VM_EXEC);
}

/*
 * The table the kernel holds for @file, if any, for its mapping at load
 * bias @bias; the mm keeps the table while it lives. Returns 0 with @sec
 * left without a table if there is none, noting the generation of the
 * tables given for files that had none for it.
 */
static int sframe_sec_fill_file(struct mm_struct *mm,
				struct unwind_sframe_sec *sec,
				struct file *file, unsigned long bias)
{
	u32 gen = sframe_file_generation();
	struct sframe_file_table *t = sframe_file_get(file);
	unsigned long len;
	const void *data;
	const char *why;
	int ret;

	if (!t) {
		sec->files_seen = gen;
		return 0;
	}
	data = sframe_file_table_data(t, &len);
	ret = sframe_sec_init_kernel(sec, data, bias, len, &why);
	if (ret) {
		sframe_file_release(t);
		if (sframe_read_may_pass(ret))
			return ret;
		sframe_report(sec, file, why ? why : "unreadable");
		sframe_sec_unusable(sec);
		/* A table given later for the file may be a good one. */
		sec->files_seen = gen;
		return 0;
	}
	ret = sframe_file_pin(mm, t);
	if (ret)
		sframe_sec_unusable(sec);
	return ret;
}

/*
 * Erase the entries of [@start, @end) that recorded no table at an older
 * generation (mmap read lock held, the mapping checked): the caller read
 * the file again and inserts what it found. Anything else there stays,
 * and the insert goes around it.
 */
static void sframe_erase_stale(struct mm_struct *mm, unsigned long start,
			       unsigned long end)
{
	struct unwind_sframe_sec *sec, *stale;
	unsigned long next = start;
	bool erased = false;

	while (next < end) {
		rcu_read_lock();
		/* Sets @next past the entry found. */
		sec = mt_find(&mm->sframe_mt, &next, end - 1);
		stale = sec;
		if (sec && (READ_ONCE(sec->erased) || sframe_sec_usable(sec) ||
			    !sframe_sec_stale(sec)))
			stale = NULL;
		rcu_read_unlock();
		if (!sec)
			break;
		/* The tree's lock shows whether @stale is still there. */
		if (stale && !sframe_tree_del(mm, stale, next - 1))
			erased = true;
	}
	if (erased)
		sframe_new_gen(mm);
}

/*
 * Find the table of the executable mapping that holds @pc and record it
 * (or its absence) for the whole mapping; @again: the mapping's entry
 * recorded no table, and tables for files were given since. A read that
 * failed and may pass (sframe_read_may_pass()) records nothing; the error
 * is returned.
 */
static int sframe_discover(struct mm_struct *mm, unsigned long pc, bool again)
{
	unsigned long start, end, pgoff, sframe = 0, len = 0, bias = 0;
	struct vm_area_struct *vma;
	struct unwind_sframe_sec *sec;
	struct file *file;
	int ret = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, pc);
	if (!vma || !(vma->vm_flags & VM_EXEC)) {
		mmap_read_unlock(mm);
		return -ENOENT;
	}
	start = vma->vm_start;
	end = vma->vm_end;
	pgoff = vma->vm_pgoff;
	file = vma->vm_file ? get_file(vma->vm_file) : NULL;
	mmap_read_unlock(mm);

	sec = sframe_alloc(start, end);
	if (!sec) {
		if (file)
			fput(file);
		return -ENOMEM;
	}
	if (file) {
		ret = sframe_from_file(file, start, pgoff, &sframe, &len,
				       &bias);
		if (!ret && sframe)
			ret = sframe_sec_fill(sec, sframe, len, file);
		else if (!ret)
			ret = sframe_sec_fill_file(mm, sec, file, bias);
		else if (ret && !sframe_read_may_pass(ret))
			ret = 0;	/* not an object we read: no table */
	}

	if (ret || mmap_read_lock_killable(mm)) {
		kfree(sec);
	} else {
		if (sframe_same_vma(vma_lookup(mm, pc), file, start, end, pgoff)) {
			if (again)
				sframe_erase_stale(mm, start, end);
			/* Its first walk: a tool may give the file a table. */
			else if (sec->files_seen && !sframe_sec_usable(sec))
				trace_unwind_sframe_missing(file, start, end, pgoff);
			sframe_insert(mm, sec);
		} else {
			kfree(sec);
		}
		mmap_read_unlock(mm);
	}
	if (file)
		fput(file);
	return ret;
}

/**
 * sframe_lookup - the SFrame section for an IP of the current task
 * @pc:		a user address in executable memory
 * @sec:	receives a copy of the section
 * @discover:	read the mapping's file if the registry has no entry for @pc
 *
 * Finds the table of the mapping the first time it is asked, if
 * @discover, and again where it found none before a table was given for
 * a file; without it, a miss costs no mmap lock (for words that may
 * not be code addresses at all). On -ENOENT,
 * @sec's text range is the text known to have no table around @pc (empty
 * if none is known).
 *
 * Context: Task context, page faults allowed.
 * Return: 0, or -ENOENT if @pc has no usable table.
 */
int sframe_lookup(unsigned long pc, struct unwind_sframe_sec *sec,
		  bool discover)
{
	struct mm_struct *mm = current->mm;
	int tries;

	sec->text_start = 0;
	sec->text_end = 0;
	if (!mm)
		return -ENOENT;
	if (sframe_cache_copy(mm, pc, sec)) {
		if (sframe_sec_usable(sec))
			return 0;
		if (!discover || !sframe_sec_stale(sec))
			return -ENOENT;
	}
	for (tries = 0; tries < 2; tries++) {
		struct unwind_sframe_sec *found;
		unsigned long index = pc;
		bool again = false;

		rcu_read_lock();
		found = mt_find(&mm->sframe_mt, &index, pc);
		if (found) {
			/* Racy only with a failed erase marking it: checked below. */
			*sec = data_race(*found);
		}
		rcu_read_unlock();
		if (found && !sec->erased) {
			if (sframe_sec_usable(sec)) {
				sframe_cache_add(sec);
				return 0;
			}
			if (tries || !discover || !sframe_sec_stale(sec)) {
				sframe_cache_add(sec);
				return -ENOENT;
			}
			/* A table for its file may have come: look again. */
			again = true;
		} else {
			/* Nothing known about @pc: no text range either. */
			sec->text_start = 0;
			sec->text_end = 0;
		}
		if (tries || !discover || sframe_discover(mm, pc, again))
			break;
	}
	return -ENOENT;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_lookup);
