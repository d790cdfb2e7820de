// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame sections a process's user stack walks may use.
 *
 * Each mm keeps a maple tree (mm->sframe_mt) from text ranges to checked
 * sections (struct unwind_sframe_sec). A range with no usable table is kept too,
 * with sframe == 0, so that a file is read once. Ranges come from:
 *
 *  - exec: binfmt_elf passes the program headers of the executable and of
 *    its interpreter (unwind_sframe_add_elf(), discover.c);
 *  - the walker, the first time it meets an IP in an executable mapping it
 *    has no entry for (sframe_lookup(), discover.c): it reads that
 *    file's ELF and program headers, which is how ld.so's and dlopen()'s
 *    objects are found;
 *  - prctl(PR_SFRAME_ADD/PR_SFRAME_REMOVE) (prctl.c), for text that code
 *    makes or maps itself (JITs, custom loaders);
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
#include "registry.h"
#include "file.h"

#define CREATE_TRACE_POINTS
#include <trace/events/unwind_sframe.h>

void sframe_report(const struct unwind_sframe_sec *sec, struct file *file,
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
bool sframe_read_may_pass(int err)
{
	return fatal_signal_pending(current) || err == -ENOMEM ||
	       err == -EINTR || err == -ERESTARTSYS || err == -EIO ||
	       err == -EAGAIN;
}

/*
 * Check the section for @sec's text. On a failure that may pass, return
 * it: the caller records nothing. On another, record "no table" (0).
 */
int sframe_sec_fill(struct unwind_sframe_sec *sec, unsigned long sframe,
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

/* Entries erased in one go between two chances to reschedule. */
#define SFRAME_ERASE_BATCH	64

/* Generations of all mms: each erase and each new mm draws a new one. */
static atomic64_t sframe_gen_last;

/*
 * Give @mm a new generation, after erasing entries: the fully ordered
 * increment orders the erase before the store, which pairs with the
 * acquire in sframe/copies.c.
 */
void sframe_new_gen(struct mm_struct *mm)
{
	WRITE_ONCE(mm->sframe_gen, atomic64_inc_return(&sframe_gen_last));
}

/* Charged to the process's memory cgroup: prctl() adds as many as it likes. */
struct unwind_sframe_sec *sframe_alloc(unsigned long start,
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
int sframe_tree_add(struct mm_struct *mm, struct unwind_sframe_sec *sec)
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
int sframe_tree_del(struct mm_struct *mm, struct unwind_sframe_sec *sec,
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
void sframe_insert(struct mm_struct *mm, struct unwind_sframe_sec *sec)
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
int sframe_erase(struct mm_struct *mm, unsigned long start,
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
