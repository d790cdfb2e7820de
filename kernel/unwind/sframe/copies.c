// SPDX-License-Identifier: GPL-2.0
/*
 * A task's copies of what its SFrame lookups found: the registry entries
 * of the objects its walks met last, and the rows of the return addresses
 * they met. A profiled task is walked again and again through the same
 * few objects and call sites; with these, such a walk searches neither
 * the registry's tree nor the tables in user memory.
 *
 * The copies belong to the task and need no lock: they are read, filled
 * and emptied by the task's own walks (task context), and by walks that
 * may not fault (unwind_user_nofault(), in an interrupt or NMI on top of
 * the task), never by both at once. An interrupt walks the task's stack
 * only where no walk of the task can be under way: the task was in user
 * mode, or in the kernel with the entry's ACTIVE bit clear, and every
 * walk of the task runs with ACTIVE or SEALED set or while exiting, in
 * which states interrupts do not walk (kernel/unwind/entry.c, which
 * checks it). A walk that may not fault does not allocate the copies,
 * nor keep rows (which may allocate), and reads no file. They are valid
 * while the mm's
 * generation (mm->sframe_gen, see sframe/registry.c) is the one they were made
 * under: an erase from the registry (munmap, prctl remove or replace)
 * gives the mm a new one, and the next use finds the copies stale and
 * drops them. Inserts change no entry a task copied.
 *
 * Rows are kept only for tables the kernel found in an object's file.
 * A table added by prctl may be rewritten in place by the code generator
 * that added it, so its rows are read from user memory at every use.
 * (Rewriting a file's table in place, which needs an mprotect() first,
 * can only make the task's own walks wrong, as a wrong table could.)
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <kunit/visibility.h>
#include "sframe.h"

/* The mm's generation, for copies made or used after reading it. */
static u64 sframe_gen_now(struct mm_struct *mm)
{
	/* Pairs with sframe_new_gen(): what follows sees its erase. */
	return smp_load_acquire(&mm->sframe_gen);
}

static void sframe_cache_empty(struct unwind_sframe_cache *cache, u64 gen)
{
	memset(cache->secs, 0, sizeof(cache->secs));
	cache->next = 0;
	if (cache->rows)
		memset(cache->rows, 0,
		       sizeof(*cache->rows) << SFRAME_ROW_BITS);
	cache->gen = gen;
}

/*
 * The current task's copies for @mm, emptied if @mm changed since they
 * were made; NULL if they cannot be allocated (lookups then use the tree).
 */
static struct unwind_sframe_cache *sframe_cache_get(struct mm_struct *mm)
{
	struct unwind_sframe_cache *cache = sframe_cache_current();
	struct unwind_sframe_cache **slot;
	u64 gen = sframe_gen_now(mm);

	if (!cache) {
		/* Walks that may not fault are blocked before getting here. */
		if (WARN_ON_ONCE(pagefault_disabled()))
			return NULL;
		slot = unwind_feature_task(&sframe_cache_feature, true);
		if (!slot)
			return NULL;
		cache = kzalloc(sizeof(*cache), GFP_KERNEL);
		if (!cache)
			return NULL;
		WRITE_ONCE(*slot, cache);
	}
	if (cache->gen != gen)
		sframe_cache_empty(cache, gen);
	return cache;
}

/**
 * sframe_cache_copy - copy the kept registry entry whose text holds @pc
 * @mm:		the current task's mm
 * @pc:		a user address
 * @sec:	receives the copy
 *
 * Starts the copies afresh first if @mm changed since they were made.
 *
 * Context: Task context (may allocate), or a walk that may not fault
 * where no walk of the task is under way (see the top of this file).
 * Return: true if @sec was filled.
 */
bool sframe_cache_copy(struct mm_struct *mm, unsigned long pc,
		       struct unwind_sframe_sec *sec)
{
	struct unwind_sframe_cache *cache = sframe_cache_get(mm);
	const struct unwind_sframe_sec *copy;

	copy = cache ? sframe_cache_find(cache, pc) : NULL;
	if (!copy)
		return false;
	*sec = *copy;
	return true;
}

/**
 * sframe_cache_add - keep a copy of a registry entry, replacing the oldest
 * @sec:	the entry, read from the tree after sframe_cache_copy() missed
 *
 * Not kept if the mm's generation changed since that miss: the entry
 * may already be gone.
 *
 * Context: Task context, or a walk that may not fault where no walk of
 * the task is under way (see the top of this file).
 */
void sframe_cache_add(const struct unwind_sframe_sec *sec)
{
	struct unwind_sframe_cache *cache = sframe_cache_valid();

	if (!cache)
		return;
	cache->secs[cache->next] = *sec;
	cache->next = (cache->next + 1) % SFRAME_CACHE_SECS;
}

/**
 * sframe_row_keep - keep the row a table gave for @pc
 * @sec:	the section the row was read from
 * @pc:		a frame's IP
 * @row:	the row
 * @frame:	its description
 *
 * Not kept if @sec was added by prctl (its table may be rewritten in
 * place), for a signal trampoline's row (which ends walks), or if the
 * mm's generation changed since @sec was copied: then @sec may be gone,
 * and the row with it.
 *
 * Context: Task context (may allocate), in the walk that copied @sec.
 */
void sframe_row_keep(const struct unwind_sframe_sec *sec, unsigned long pc,
		     const struct unwind_sframe_row *row,
		     const struct unwind_user_frame *frame)
{
	struct unwind_sframe_cache *cache = sframe_cache_valid();
	struct sframe_row_copy *copy;

	if (!cache || sec->registered || !pc || row->signal)
		return;
	if (!cache->rows) {
		cache->rows = kcalloc(1 << SFRAME_ROW_BITS, sizeof(*cache->rows),
				      GFP_KERNEL);
		if (!cache->rows)
			return;
	}
	copy = &cache->rows[hash_long(pc, SFRAME_ROW_BITS)];
	copy->pc = pc;
	copy->row = *row;
	copy->frame = *frame;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_row_keep);

/* A task that is being freed frees its copies (struct unwind_feature). */
static void sframe_cache_task_free(void *state)
{
	struct unwind_sframe_cache *cache = *(struct unwind_sframe_cache **)state;

	if (cache)
		kfree(cache->rows);
	kfree(cache);
}

/**
 * unwind_sframe_known_text - is @addr in text the registry found itself?
 * @addr:	a user address of the current task
 * @start:	set to the start of that text, if so
 * @end:	set to its end (exclusive)
 *
 * Only the current task's copies are asked, not the tree: the walk that
 * just ran put the entries of its frames there. Text the registry found
 * was an executable file mapping when found, and its entry goes when the
 * mapping is unmapped; text added by prctl is whatever the task said, and
 * does not count.
 *
 * Context: Task context, after a walk.
 * Return: true if @addr lies in such text.
 */
bool unwind_sframe_known_text(unsigned long addr, unsigned long *start,
			      unsigned long *end)
{
	struct unwind_sframe_cache *cache = sframe_cache_valid();
	const struct unwind_sframe_sec *sec;

	if (!cache)
		return false;
	sec = sframe_cache_find(cache, addr);
	if (!sec || sec->registered)
		return false;
	*start = sec->text_start;
	*end = sec->text_end;
	return true;
}

struct unwind_feature sframe_cache_feature = {
	.task_size	= sizeof(struct unwind_sframe_cache *),
	.task_free	= sframe_cache_task_free,
};

unwind_feature_initcall(sframe_cache_feature);
