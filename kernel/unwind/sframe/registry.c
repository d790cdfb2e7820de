// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame sections a process's user stack walks may use.
 *
 * Each mm keeps a maple tree (mm->sframe_mt) from text ranges to checked
 * sections (struct unwind_sframe_sec). A range with no usable table is kept too,
 * with sframe == 0, so that a file is read once. Ranges come from:
 *
 *  - exec: binfmt_elf passes the program headers of the executable and of
 *    its interpreter (unwind_sframe_add_elf());
 *  - the walker, the first time it meets an IP in an executable mapping it
 *    has no entry for (sframe_lookup()): it reads that file's ELF and
 *    program headers, which is how ld.so's and dlopen()'s objects are found;
 *  - prctl(PR_SFRAME_ADD/PR_SFRAME_REMOVE), for text that code makes or
 *    maps itself (JITs, custom loaders);
 *  - the tables the kernel holds for files (sframe/file.c), which the
 *    walker's discovery takes for an object without a table of its own;
 *    the mm keeps each one it used (mm->sframe_pins) until it is freed.
 *    Such an object found with no table at all records when
 *    (@files_seen); after a table is given for any file, the next lookup
 *    of its text reads the file again and replaces the entry, so that
 *    processes that mapped the file before its table came get it too.
 *    Its first discovery fires unwind_sframe_missing, so that a tool
 *    knows which file to give a table.
 *
 * mm->sframe_tables counts the entries with a table (atomic: walkers of
 * different threads insert under the mmap read lock). mm->sframe_registered
 * counts those prctl() added (under the mmap write lock), at most
 * SFRAME_MAX_REGISTERED: each costs kernel memory (charged to the memory
 * cgroup, as are the tree's nodes), and prctl() takes only text that is
 * mapped executable, so that munmap() takes its entries away again.
 *
 * Rules of the tree (its own spinlock orders writers; readers use RCU):
 *
 *   who		lock held		does
 *   walker (lookup)	rcu_read_lock		copies an entry out, never keeps it
 *   walker (found)	mmap_read_lock		inserts if the range is free and the
 *						mapping is still the one it read;
 *						first erases the entries with no
 *						table it read the file again for
 *   exec		(new mm, one thread)	inserts
 *   munmap		mmap_write_lock		erases entries that overlap
 *   prctl		mmap_write_lock		erases and inserts
 *   __mmput		(no users left)		frees everything
 *
 * Because the walker's insert and munmap's erase both hold the mmap lock,
 * a range is never inserted for a mapping that is already gone. Erased
 * entries are freed after an RCU grace period. A fork starts with an empty
 * tree (the child finds its tables again), and so does an exec (new mm).
 *
 * In RCU mode an erase allocates tree nodes, and may fail. The entry then
 * stays in the tree marked @erased (readers skip it, and the next erase
 * or discovery over its range tries again); only the task whose erase
 * took an entry out of the tree frees it, and __mmput frees what is left.
 * A walker's insert over a range that is partly taken (by prctl()'s
 * entries, say) inserts an entry for each free part.
 *
 * A walk copies the entries it needs; each task keeps copies of the last
 * ones it met, and of the rows it found (sframe/copies.c), so that its
 * walks, which meet the same few objects each time, need no tree lookup.
 * An erase gives the mm a new generation (mm->sframe_gen, a value no mm
 * had before), which makes every task's copies stale; inserts take free
 * ranges only and change no entry a task copied.
 *
 * Sections stay in user memory: what the walker reads there is checked at
 * each use (sframe/read.c), so a process that rewrites or unmaps its own
 * tables can only make its own walks stop early. Tables given for files
 * are in kernel memory, checked once and never written.
 */
#include <linux/elf.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/unwind_sframe.h>
#include <linux/unwind_user.h>
#include <kunit/visibility.h>
#include "sframe.h"
#include "file.h"

#define CREATE_TRACE_POINTS
#include <trace/events/unwind_sframe.h>

static void sframe_report(const struct unwind_sframe_sec *sec, struct file *file,
			  const char *why)
{
	if (file)
		pr_info_ratelimited("unwind: %s[%d]: SFrame of %pD not used: %s\n",
				    current->comm, task_pid_nr(current), file,
				    why);
	else
		pr_info_ratelimited("unwind: %s[%d]: SFrame at %#lx not used: %s\n",
				    current->comm, task_pid_nr(current),
				    sec->sframe, why);
}

/*
 * Could a failed read of an object's headers or table succeed later? Not
 * if the object says so (no table, a bad one), but a killable file read or
 * page fault gives up once the task has a fatal signal pending, and memory
 * or I/O may fail for a moment. Such a failure must not be recorded as
 * "no table": the mm would walk the object without it until it is
 * unmapped, also in the tasks that share the mm with a killed one.
 */
static bool sframe_read_may_pass(int err)
{
	return fatal_signal_pending(current) || err == -ENOMEM ||
	       err == -EINTR || err == -ERESTARTSYS || err == -EIO ||
	       err == -EAGAIN;
}

/*
 * Check the section for @sec's text. On a failure that may pass, return
 * it: the caller records nothing. On another, record "no table" (0).
 */
static int sframe_sec_fill(struct unwind_sframe_sec *sec, unsigned long sframe,
			   unsigned long len, struct file *file)
{
	const char *why = "unreadable";
	int ret;

	ret = sframe_sec_init(sec, sframe, len, &why);
	if (!ret)
		return 0;
	/* The caller frees @sec: nothing of it is used. */
	if (sframe_read_may_pass(ret))
		return ret;
	sec->sframe = sframe;
	sframe_report(sec, file, why ? why : "unreadable");
	sframe_sec_unusable(sec);
	return 0;
}

/*
 * Most ranges prctl(PR_SFRAME_ADD) may add to one mm (-ENOSPC past it):
 * a JIT adds one per code region, not one per function.
 */
#define SFRAME_MAX_REGISTERED	16384

/* Entries erased in one go between two chances to reschedule. */
#define SFRAME_ERASE_BATCH	64

/* Generations of all mms: each erase and each new mm draws a new one. */
static atomic64_t sframe_gen_last;

/*
 * Give @mm a new generation, after erasing entries: the fully ordered
 * increment orders the erase before the store, which pairs with the
 * acquire in sframe/copies.c.
 */
static void sframe_new_gen(struct mm_struct *mm)
{
	WRITE_ONCE(mm->sframe_gen, atomic64_inc_return(&sframe_gen_last));
}

/* Charged to the process's memory cgroup: prctl() adds as many as it likes. */
static struct unwind_sframe_sec *sframe_alloc(unsigned long start,
					      unsigned long end)
{
	struct unwind_sframe_sec *sec = kzalloc(sizeof(*sec), GFP_KERNEL_ACCOUNT);

	if (sec) {
		sec->text_start = start;
		sec->text_end = end;
	}
	return sec;
}

/* Add @sec to the tree and its counts; -EEXIST if its range is taken. */
static int sframe_tree_add(struct mm_struct *mm, struct unwind_sframe_sec *sec)
{
	int ret = mtree_insert_range(&mm->sframe_mt, sec->text_start,
				     sec->text_end - 1, sec, GFP_KERNEL_ACCOUNT);

	if (ret)
		return ret;
	if (sframe_sec_usable(sec))
		atomic_inc(&mm->sframe_tables);
	if (sec->registered)
		mm->sframe_registered++;
	return 0;
}

/*
 * Take @sec, found at @start, out of the tree and its counts, and free it
 * after readers, if it is still there: two walkers may both try to erase
 * an entry an earlier erase left behind, and only one frees it; @sec is
 * not read until the tree's lock shows it is there. If the tree cannot
 * allocate for the erase, @sec stays, marked erased, and -ENOMEM is
 * returned; the caller gives the mm a new generation either way.
 */
static int sframe_tree_del(struct mm_struct *mm, struct unwind_sframe_sec *sec,
			   unsigned long start)
{
	MA_STATE(mas, &mm->sframe_mt, start, start);
	int ret;

	mtree_lock(&mm->sframe_mt);
	if (mas_walk(&mas) != sec) {
		mtree_unlock(&mm->sframe_mt);
		return 0;
	}
	mas_set_range(&mas, sec->text_start, sec->text_end - 1);
	ret = mas_store_gfp(&mas, NULL, GFP_KERNEL_ACCOUNT);
	if (ret)
		WRITE_ONCE(sec->erased, true);
	mtree_unlock(&mm->sframe_mt);
	if (ret)
		return ret;
	if (sframe_sec_usable(sec))
		atomic_dec(&mm->sframe_tables);
	if (sec->registered)
		mm->sframe_registered--;
	kfree_rcu(sec, rcu);
	return 0;
}

/*
 * The first entry overlapping [@index, @end) and its text range, read
 * under RCU: another walker may erase an entry left marked erased. The
 * entry is returned if it is one of those, else NULL.
 */
static struct unwind_sframe_sec *
sframe_tree_next(struct mm_struct *mm, unsigned long index, unsigned long end,
		 unsigned long *start, unsigned long *stop)
{
	struct unwind_sframe_sec *sec, *erased = NULL;

	*start = end;
	*stop = end;
	rcu_read_lock();
	sec = mt_find(&mm->sframe_mt, &index, end - 1);
	if (sec) {
		*start = sec->text_start;
		*stop = sec->text_end;
		if (READ_ONCE(sec->erased))
			erased = sec;
	}
	rcu_read_unlock();
	return erased;
}

/*
 * Insert @sec (a walker's discovery, mmap read lock held), or, where its
 * text is partly taken, a copy of it for each free part: a JIT that added
 * a table for part of an anonymous mapping, or an entry an erase left
 * behind (erased here, if it can be). Another walker may have found the
 * same text first; then nothing is inserted there.
 */
static void sframe_insert(struct mm_struct *mm, struct unwind_sframe_sec *sec)
{
	unsigned long next = sec->text_start, end = sec->text_end;
	struct unwind_sframe_sec *part, *erased;
	unsigned long start, stop;

	if (!sframe_tree_add(mm, sec))
		return;
	while (next < end) {
		erased = sframe_tree_next(mm, next, end, &start, &stop);
		/* Left by a failed erase: try again, then look again. */
		if (erased && !sframe_tree_del(mm, erased, start)) {
			sframe_new_gen(mm);
			continue;
		}
		if (start > next) {
			part = kmemdup(sec, sizeof(*sec), GFP_KERNEL_ACCOUNT);
			if (!part)
				break;
			part->text_start = next;
			part->text_end = start;
			if (sframe_tree_add(mm, part))
				kfree(part);
		}
		next = max(stop, next + 1);
	}
	kfree(sec);
}

/*
 * Erase every entry overlapping [start, end); if not @all, none when one
 * of them was added by prctl() (-EEXIST): a failed prctl() changes
 * nothing. Returns how many were erased, or -ENOMEM if an erase failed
 * and not @all (the entry stays, marked erased; munmap() goes on).
 */
static int sframe_erase(struct mm_struct *mm, unsigned long start,
			unsigned long end, bool all)
{
	unsigned long index = start;
	struct unwind_sframe_sec *sec;
	int erased = 0, ret = 0;

	if (!all) {
		mt_for_each(&mm->sframe_mt, sec, index, end - 1)
			if (sec->registered && !READ_ONCE(sec->erased))
				return -EEXIST;
		index = start;
	}
	while (index < end && (sec = mt_find(&mm->sframe_mt, &index, end - 1))) {
		if (sframe_tree_del(mm, sec, sec->text_start))
			ret = -ENOMEM;
		/* One munmap() may erase all of an mm's entries. */
		if (!(++erased % SFRAME_ERASE_BATCH))
			cond_resched();
	}
	if (erased)
		sframe_new_gen(mm);
	return ret && !all ? ret : erased;
}

/**
 * unwind_sframe_mm_init - start an mm with no known SFrame sections
 * @mm:	a new mm (fork, exec)
 *
 * Context: Any context that may set up an mm.
 */
void unwind_sframe_mm_init(struct mm_struct *mm)
{
	mt_init_flags(&mm->sframe_mt, MT_FLAGS_USE_RCU);
	atomic_set(&mm->sframe_tables, 0);
	init_llist_head(&mm->sframe_pins);
	sframe_new_gen(mm);
}

/**
 * unwind_sframe_has_tables - does the current mm know any SFrame table?
 *
 * Most processes have none (distributions build without them), and a walk
 * can then skip asking whether a word on the stack is code with a table.
 * An insert racing with this may not be seen: the walk then goes as if it
 * came a moment earlier.
 *
 * Context: Task context.
 * Return: true if the registry holds an entry with a table.
 */
bool unwind_sframe_has_tables(void)
{
	struct mm_struct *mm = current->mm;

	return mm && atomic_read(&mm->sframe_tables);
}

/**
 * unwind_sframe_mm_free - forget an mm's SFrame sections
 * @mm:	an mm with no users left
 *
 * Context: Task context; no walk of @mm can run.
 */
void unwind_sframe_mm_free(struct mm_struct *mm)
{
	unsigned long index = 0;
	struct unwind_sframe_sec *sec;
	unsigned int n = 0;

	mt_for_each(&mm->sframe_mt, sec, index, ULONG_MAX) {
		kfree(sec);
		if (!(++n % SFRAME_ERASE_BATCH))
			cond_resched();
	}
	mtree_destroy(&mm->sframe_mt);
	sframe_file_unpin_all(mm);
}

/**
 * unwind_sframe_unmap - forget sections of text that is being unmapped
 * @mm:		the mm, write-locked
 * @start:	start of the unmapped range
 * @end:	its end (exclusive)
 *
 * Context: Task context, mmap_lock held for writing.
 */
void unwind_sframe_unmap(struct mm_struct *mm, unsigned long start,
			 unsigned long end)
{
	mmap_assert_write_locked(mm);
	if (mtree_empty(&mm->sframe_mt))
		return;
	sframe_erase(mm, start, end, true);
}

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
	struct elf64_hdr ehdr;
	unsigned int i;
	loff_t pos = 0;
	size_t size;
	int ret = -ENOEXEC;
	ssize_t n;

	*sframe = 0;
	n = kernel_read(file, &ehdr, sizeof(ehdr), &pos);
	if (n != (ssize_t)sizeof(ehdr))
		return n < 0 ? n : -ENOEXEC;
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || !elf_check_arch(&ehdr) ||
	    ehdr.e_phentsize != sizeof(*phdrs) || !ehdr.e_phnum ||
	    ehdr.e_phnum > SZ_64K / sizeof(*phdrs))
		return -ENOEXEC;

	size = ehdr.e_phnum * sizeof(*phdrs);
	phdrs = kmalloc(size, GFP_KERNEL);
	if (!phdrs)
		return -ENOMEM;
	pos = ehdr.e_phoff;
	n = kernel_read(file, phdrs, size, &pos);
	if (n != (ssize_t)size) {
		if (n < 0)
			ret = n;
		goto out;
	}

	sf = sframe_phdr(phdrs, ehdr.e_phnum);
	/* The executable segment this mapping comes from gives the bias. */
	for (i = 0; i < ehdr.e_phnum; i++) {
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
out:
	kfree(phdrs);
	return ret;
}

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
