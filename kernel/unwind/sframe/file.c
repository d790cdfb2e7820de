// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame tables the kernel holds for files.
 *
 * Distributions build their objects with neither frame pointers nor SFrame,
 * but with .eh_frame, which a tool converts to SFrame in user space
 * (tools/unwind/cfi2sframe). A privileged process gives such a table for
 * a file (prctl(PR_SFRAME_FILE_ADD), sframe/file_prctl.c), and every
 * process that maps the file is walked with it: the walker meets the
 * mapping, finds no table of the object's own (sframe/registry.c) and takes the
 * file's. This file keeps the tables.
 *
 * Tables are keyed by the file's device, inode number and generation. A
 * key outlives its file (nothing here hooks inode eviction, and pinning
 * the inode would keep a deleted file's blocks): a walker that meets the
 * key again checks the file's build ID, and drops a table that no longer
 * matches. Package upgrades replace files with new inodes, whose key is
 * new; the old table stays until PR_SFRAME_FILE_REMOVE, a new table for
 * the same key, or the limits below make room only by refusing more.
 *
 * Bounds: a table is at most SFRAME_MAX_SIZE bytes, charged to the memory
 * cgroup of the process that gives it; all tables together at most
 * SFRAME_FILES_MAX_BYTES in SFRAME_FILES_MAX entries. A table is checked as
 * any section a process maps (sframe/read.c); one that lies about its file
 * costs walks no more than a hostile section in user memory does, and
 * its bytes never change after the check.
 *
 * Lifetime: the hash table holds one reference to each table, and each mm
 * whose registry used a table holds one (mm->sframe_pins) until the mm is
 * freed: a walk copies registry entries, and may read through its copy
 * after another thread's munmap() erased the entry, so the bytes must stay
 * while any task of the mm may walk.
 *
 * Locking: sframe_files_lock (a mutex) orders everything of the hash
 * table; lookups are rare (a mapping's first walk) and may sleep anyway.
 * Pins are pushed lock-free (walkers of one mm discover in parallel) and
 * only taken off when the mm has no users.
 */
#include <linux/buildid.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/unwind_sframe.h>
#include "sframe.h"
#include "elf.h"
#include "file.h"

/* All tables together: a distribution's objects need about 80 MiB. */
#define SFRAME_FILES_MAX_BYTES	(512UL << 20)
#define SFRAME_FILES_MAX	65536

/**
 * struct sframe_file_table - a table the kernel holds for a file
 * @node:	in sframe_files, under sframe_files_lock
 * @ref:	the hash table's reference, and one per mm that pins it
 * @dev:	the file's device
 * @ino:	its inode number
 * @gen:	its inode's generation
 * @build_id_size: bytes of @build_id
 * @build_id:	the build ID the table was made from, and the file had
 * @len:	bytes of @data
 * @data:	the table, checked; never written after
 */
struct sframe_file_table {
	struct hlist_node	node;
	refcount_t		ref;
	dev_t			dev;
	unsigned long		ino;
	u32			gen;
	u32			build_id_size;
	u8			build_id[SFRAME_BUILD_ID_MAX];
	unsigned long		len;
	void			*data;
};

/* What an mm pins: one node per table its registry used. */
struct sframe_file_pin {
	struct llist_node		node;
	struct sframe_file_table	*table;
};

static DEFINE_MUTEX(sframe_files_lock);
static DEFINE_HASHTABLE(sframe_files, 8);
static unsigned long sframe_files_bytes;	/* under sframe_files_lock */
/* Written under sframe_files_lock; read without it by sframe_file_get(). */
static unsigned int sframe_files_count;
/*
 * Tables given so far, as a generation that is never 0; written under
 * sframe_files_lock, read without it (sframe_file_generation()).
 */
static u32 sframe_files_gen = 1;

static void sframe_file_put(struct sframe_file_table *t)
{
	if (refcount_dec_and_test(&t->ref)) {
		kvfree(t->data);
		kfree(t);
	}
}

static unsigned long sframe_file_hash(dev_t dev, unsigned long ino)
{
	return ino ^ ((unsigned long)dev << 20);
}

static bool sframe_file_same(const struct sframe_file_table *t,
			     const struct inode *inode)
{
	return t->dev == inode->i_sb->s_dev && t->ino == inode->i_ino &&
	       t->gen == inode->i_generation;
}

/* The table for @inode's key, or NULL. Caller holds sframe_files_lock. */
static struct sframe_file_table *sframe_file_lookup(const struct inode *inode)
{
	struct sframe_file_table *t;

	lockdep_assert_held(&sframe_files_lock);
	hash_for_each_possible(sframe_files, t, node,
			       sframe_file_hash(inode->i_sb->s_dev,
						inode->i_ino))
		if (sframe_file_same(t, inode))
			return t;
	return NULL;
}

/* Take @t out of the hash table and drop its reference. */
static void sframe_file_unlink(struct sframe_file_table *t)
{
	lockdep_assert_held(&sframe_files_lock);
	hash_del(&t->node);
	sframe_files_bytes -= t->len;
	WRITE_ONCE(sframe_files_count, sframe_files_count - 1);
	sframe_file_put(t);
}

/**
 * sframe_file_store - hold a table for a file, in place of any before it
 * @inode:	the file's inode, whose key the table takes
 * @id:		the file's build ID, which the table was made from
 * @id_size:	its bytes, at most SFRAME_BUILD_ID_MAX
 * @data:	the table, checked (sframe_sec_init_kernel()); on success it
 *		belongs to the store, which never writes it
 * @len:	its bytes, at most SFRAME_MAX_SIZE
 *
 * Context: Task context, the process that gives the table (its memory
 * cgroup is charged).
 * Return: 0; -ENOMEM; -ENOSPC when the tables' limits are reached. On
 * error @data is still the caller's.
 */
int sframe_file_store(const struct inode *inode, const u8 *id, u32 id_size,
		      void *data, unsigned long len)
{
	struct sframe_file_table *t, *old;

	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	refcount_set(&t->ref, 1);
	t->dev = inode->i_sb->s_dev;
	t->ino = inode->i_ino;
	t->gen = inode->i_generation;
	t->build_id_size = id_size;
	memcpy(t->build_id, id, id_size);
	t->len = len;
	t->data = data;

	mutex_lock(&sframe_files_lock);
	old = sframe_file_lookup(inode);
	if ((!old && sframe_files_count >= SFRAME_FILES_MAX) ||
	    sframe_files_bytes - (old ? old->len : 0) + len >
	    SFRAME_FILES_MAX_BYTES) {
		mutex_unlock(&sframe_files_lock);
		kfree(t);
		return -ENOSPC;
	}
	if (old)
		sframe_file_unlink(old);
	hash_add(sframe_files, &t->node, sframe_file_hash(t->dev, t->ino));
	sframe_files_bytes += len;
	WRITE_ONCE(sframe_files_count, sframe_files_count + 1);
	/* After the table is in the hash: who sees the count finds it. */
	smp_store_release(&sframe_files_gen, sframe_files_gen + 1 ?: 1);
	mutex_unlock(&sframe_files_lock);
	return 0;
}

/**
 * sframe_file_forget - drop the table held for a file
 * @inode:	the file's inode
 *
 * Walks that use the table keep it until their mm goes (sframe_file_pin()).
 *
 * Return: 0, or -ENOENT if no table is held for @inode's key.
 */
int sframe_file_forget(const struct inode *inode)
{
	struct sframe_file_table *t;

	mutex_lock(&sframe_files_lock);
	t = sframe_file_lookup(inode);
	if (t)
		sframe_file_unlink(t);
	mutex_unlock(&sframe_files_lock);
	return t ? 0 : -ENOENT;
}

/**
 * sframe_file_get - the table the kernel holds for a file
 * @file:	an object mapped executable
 *
 * Checks that the file still has the build ID the table was made from;
 * drops the table if not.
 *
 * Context: Task context; reads the file.
 * Return: the table with a reference the caller passes to
 * sframe_file_pin() or drops with sframe_file_release(), or NULL.
 */
struct sframe_file_table *sframe_file_get(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct sframe_file_table *t;
	u8 id[SFRAME_BUILD_ID_MAX];
	int size;

	/* Unlocked: a table given at this moment is missed by this walk only. */
	if (!READ_ONCE(sframe_files_count))
		return NULL;
	mutex_lock(&sframe_files_lock);
	t = sframe_file_lookup(inode);
	if (t)
		refcount_inc(&t->ref);
	mutex_unlock(&sframe_files_lock);
	if (!t)
		return NULL;

	size = sframe_elf_build_id(file, id);
	if (size == t->build_id_size && !memcmp(id, t->build_id, size))
		return t;
	if (size >= 0) {
		/* Not the file the table was made from: forget the table. */
		mutex_lock(&sframe_files_lock);
		if (sframe_file_lookup(inode) == t)
			sframe_file_unlink(t);
		mutex_unlock(&sframe_files_lock);
	}
	sframe_file_put(t);
	return NULL;
}

/**
 * sframe_file_table_data - the bytes of a table
 * @t:		the table
 * @len:	receives its size
 *
 * Return: the bytes, which do not change while @t is referenced.
 */
const void *sframe_file_table_data(const struct sframe_file_table *t,
				   unsigned long *len)
{
	*len = t->len;
	return t->data;
}

/**
 * sframe_file_release - drop a reference sframe_file_get() gave
 * @t:		the table
 */
void sframe_file_release(struct sframe_file_table *t)
{
	sframe_file_put(t);
}

/**
 * sframe_file_generation - how many tables have been given for files
 *
 * Read before sframe_file_get(): a registry entry that recorded no table
 * at one generation looks again at a later one (sframe/registry.c).
 *
 * Return: a value that changes with each table given, and is never 0.
 */
u32 sframe_file_generation(void)
{
	/* Pairs with the release in sframe_file_store(): its table is found. */
	return smp_load_acquire(&sframe_files_gen);
}

/**
 * sframe_sec_stale - may a table have come for an object found without one?
 * @sec:	a registry entry for an object's text that recorded no table
 *
 * A table given for a file since @sec was recorded may be its file's: the
 * registry then reads the mapping again (sframe_lookup()).
 *
 * Return: true if @sec must be looked up again.
 */
bool sframe_sec_stale(const struct unwind_sframe_sec *sec)
{
	return sec->files_seen && sec->files_seen != sframe_file_generation();
}

/**
 * sframe_file_pin - keep a table for as long as an mm lives
 * @mm:		the mm whose registry uses the table
 * @t:		the table; takes over the caller's reference
 *
 * Context: Task context, a task of @mm.
 * Return: 0, or -ENOMEM: then the reference is dropped, and the caller
 * must not use the table.
 */
int sframe_file_pin(struct mm_struct *mm, struct sframe_file_table *t)
{
	struct sframe_file_pin *pin;

	/* Pins are never taken off while the mm has users: safe to walk. */
	llist_for_each_entry(pin, READ_ONCE(mm->sframe_pins.first), node) {
		if (pin->table == t) {
			sframe_file_put(t);
			return 0;
		}
	}
	pin = kmalloc(sizeof(*pin), GFP_KERNEL_ACCOUNT);
	if (!pin) {
		sframe_file_put(t);
		return -ENOMEM;
	}
	pin->table = t;
	llist_add(&pin->node, &mm->sframe_pins);
	return 0;
}

/**
 * sframe_file_unpin_all - drop the tables an mm pinned
 * @mm:		an mm with no users left
 */
void sframe_file_unpin_all(struct mm_struct *mm)
{
	struct llist_node *list = llist_del_all(&mm->sframe_pins);
	struct sframe_file_pin *pin, *next;

	llist_for_each_entry_safe(pin, next, list, node) {
		sframe_file_put(pin->table);
		kfree(pin);
	}
}
