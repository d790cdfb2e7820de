// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame tables the kernel holds for files.
 *
 * Distributions build their objects with neither frame pointers nor SFrame,
 * but with .eh_frame, which a tool converts to SFrame in user space
 * (tools/unwind/cfi2sframe). A privileged process (CAP_PERFMON or
 * CAP_SYS_ADMIN: it decides how every process's stacks are walked) gives
 * such a table for a file with prctl(PR_SFRAME_FILE_ADD), and every
 * process that maps the file is walked with it: the walker meets the
 * mapping, finds no table of the object's own (sframe/registry.c) and takes the
 * file's. The kernel opens no file by path; the caller passes a file
 * descriptor of the object, and the build ID the table was made from,
 * which must be the file's.
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
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/prctl.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_sframe.h>
#include "sframe.h"
#include "elf.h"
#include "file.h"

/* All tables together: a distribution's objects need about 80 MiB. */
#define SFRAME_FILES_MAX_BYTES	(512UL << 20)
#define SFRAME_FILES_MAX	65536

/* The largest build ID (elf.c reads it). */
#define SFRAME_BUILD_ID_MAX	BUILD_ID_SIZE_MAX

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
	/* Pairs with the release in sframe_file_add(): its table is found. */
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

/* The regular file @fd names, open for reading, with a reference. */
static int sframe_file_of_fd(int fd, struct file **filep)
{
	struct file *file = fget(fd);

	if (!file)
		return -EBADF;
	if (!S_ISREG(file_inode(file)->i_mode) ||
	    !(file->f_mode & FMODE_READ)) {
		fput(file);
		return -EBADF;
	}
	*filep = file;
	return 0;
}

static int sframe_file_add(unsigned long uarg, unsigned long usize)
{
	struct sframe_file_table *t, *old;
	struct unwind_sframe_sec sec = {};
	struct prctl_sframe_file arg;
	u8 id[SFRAME_BUILD_ID_MAX];
	struct file *file;
	struct inode *inode;
	const char *why;
	int ret, size;

	ret = copy_struct_from_user(&arg, sizeof(arg), (void __user *)uarg,
				    usize);
	if (ret)
		return ret;
	if (arg.flags || !arg.build_id_size ||
	    arg.build_id_size > SFRAME_BUILD_ID_MAX || !arg.table_size)
		return -EINVAL;
	if (arg.table_size > SFRAME_MAX_SIZE)
		return -E2BIG;
	ret = sframe_file_of_fd(arg.fd, &file);
	if (ret)
		return ret;
	inode = file_inode(file);

	size = sframe_elf_build_id(file, id);
	if (size <= 0) {
		ret = size ? size : -ENODATA;
		goto out_file;
	}
	if (size != arg.build_id_size || memcmp(id, arg.build_id, size)) {
		ret = -ESTALE;
		goto out_file;
	}

	ret = -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		goto out_file;
	t->data = kvmalloc(arg.table_size, GFP_KERNEL_ACCOUNT);
	if (!t->data)
		goto out_table;
	ret = -EFAULT;
	if (copy_from_user(t->data, u64_to_user_ptr(arg.table), arg.table_size))
		goto out_table;
	/* Checked as a section at address 0: the starts are the object's. */
	ret = sframe_sec_init_kernel(&sec, t->data, 0, arg.table_size, &why);
	if (ret) {
		if (ret == -EINVAL)
			pr_info_ratelimited("unwind: %s[%d]: SFrame table for %pD refused: %s\n",
					    current->comm, task_pid_nr(current),
					    file, why ? why : "unreadable");
		goto out_table;
	}
	refcount_set(&t->ref, 1);
	t->dev = inode->i_sb->s_dev;
	t->ino = inode->i_ino;
	t->gen = inode->i_generation;
	t->build_id_size = size;
	memcpy(t->build_id, id, size);
	t->len = arg.table_size;

	mutex_lock(&sframe_files_lock);
	old = sframe_file_lookup(inode);
	ret = -ENOSPC;
	if ((!old && sframe_files_count >= SFRAME_FILES_MAX) ||
	    sframe_files_bytes - (old ? old->len : 0) + t->len >
	    SFRAME_FILES_MAX_BYTES) {
		mutex_unlock(&sframe_files_lock);
		goto out_table;
	}
	if (old)
		sframe_file_unlink(old);
	hash_add(sframe_files, &t->node,
		 sframe_file_hash(t->dev, t->ino));
	sframe_files_bytes += t->len;
	WRITE_ONCE(sframe_files_count, sframe_files_count + 1);
	/* After the table is in the hash: who sees the count finds it. */
	smp_store_release(&sframe_files_gen, sframe_files_gen + 1 ?: 1);
	mutex_unlock(&sframe_files_lock);
	fput(file);
	return 0;

out_table:
	kvfree(t->data);
	kfree(t);
out_file:
	fput(file);
	return ret;
}

static int sframe_file_remove(int fd)
{
	struct sframe_file_table *t;
	struct file *file;
	int ret;

	ret = sframe_file_of_fd(fd, &file);
	if (ret)
		return ret;
	mutex_lock(&sframe_files_lock);
	t = sframe_file_lookup(file_inode(file));
	if (t)
		sframe_file_unlink(t);
	mutex_unlock(&sframe_files_lock);
	fput(file);
	return t ? 0 : -ENOENT;
}

/**
 * unwind_sframe_file_prctl - give or take back the SFrame table of a file
 * @option:	PR_SFRAME_FILE_ADD or PR_SFRAME_FILE_REMOVE
 * @arg2:	ADD: address of a struct prctl_sframe_file; REMOVE: a file
 *		descriptor of the file
 * @arg3:	ADD: the struct's size; REMOVE: 0
 * @arg4:	0
 * @arg5:	0
 *
 * A table given for a file answers for every executable mapping of it
 * that a walk meets from then on, in every process; mappings met before
 * keep what was found then. Given again, it replaces the first.
 *
 * Context: Task context (the prctl() system call).
 * Return: 0; -EPERM without CAP_PERFMON (or CAP_SYS_ADMIN); -EINVAL for
 * bad arguments or a table that fails a check; -E2BIG for a table or
 * struct too large; -EBADF for a descriptor that is not of a regular file
 * open for reading; -ENODATA if the file has no build ID; -ESTALE if its
 * build ID is not the one given; -EFAULT; -ENOMEM; -ENOSPC when the
 * tables' limits are reached; -ENOENT if REMOVE finds no table.
 */
int unwind_sframe_file_prctl(int option, unsigned long arg2, unsigned long arg3,
			     unsigned long arg4, unsigned long arg5)
{
	if (!perfmon_capable())
		return -EPERM;
	if (arg4 || arg5)
		return -EINVAL;
	switch (option) {
	case PR_SFRAME_FILE_ADD:
		return sframe_file_add(arg2, arg3);
	case PR_SFRAME_FILE_REMOVE:
		if (arg3)
			return -EINVAL;
		if (arg2 > INT_MAX)	/* a negative descriptor, say */
			return -EBADF;
		return sframe_file_remove(arg2);
	}
	return -EINVAL;
}
