// SPDX-License-Identifier: GPL-2.0
/*
 * The features built on the core of deferred unwinding (feature.h): the
 * list they register on, and the core's calls into all of them, so that
 * the core (deferred.c, entry.c, nofault.c) names none.
 *
 * Features register at boot, from initcalls, under unwind_features_lock,
 * and are never removed: the list is read without a lock, from any
 * context.
 */
#include <kunit/visibility.h>
#include <linux/align.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "feature.h"

static DEFINE_MUTEX(unwind_features_lock);
VISIBLE_IF_KUNIT struct list_head unwind_features =
	LIST_HEAD_INIT(unwind_features);
EXPORT_SYMBOL_IF_KUNIT(unwind_features);

/*
 * Bytes of a task's block (feature.h): every registered feature's part,
 * each at an offset aligned to 8 bytes. Features register from
 * initcalls, before the first user task runs, so the size is fixed
 * before any task allocates a block. unwind_features_in_use, set by
 * every allocation, lets a registration that came later say so: blocks
 * already allocated would be too small for its part.
 */
VISIBLE_IF_KUNIT size_t unwind_features_size;
EXPORT_SYMBOL_IF_KUNIT(unwind_features_size);
static bool unwind_features_in_use;

/*
 * Off until a feature may want passes (unwind_feature_wants_passes()):
 * until then, the walks in interrupts ask no feature.
 */
static DEFINE_STATIC_KEY_FALSE(unwind_passes_wanted);

/**
 * unwind_feature_register - add a feature built on the core
 * @feature:	the feature, registered for good
 *
 * Context: Boot, from an initcall.
 */
void __init unwind_feature_register(struct unwind_feature *feature)
{
	mutex_lock(&unwind_features_lock);
	WARN_ON_ONCE(READ_ONCE(unwind_features_in_use));
	feature->task_off = unwind_features_size;
	unwind_features_size += ALIGN(feature->task_size, sizeof(u64));
	list_add_tail_rcu(&feature->list, &unwind_features);
	mutex_unlock(&unwind_features_lock);
}

/**
 * unwind_task_features_alloc - allocate the current task's block
 *
 * Charged to the task's memory cgroup; freed with the task
 * (unwind_features_task_free()).
 *
 * Context: Task context of the current task, which has no block yet; may
 * sleep.
 * Return: the block, zeroed, or NULL if it could not be allocated.
 */
void *unwind_task_features_alloc(void)
{
	void *block;

	WRITE_ONCE(unwind_features_in_use, true);
	block = kzalloc(unwind_features_size, GFP_KERNEL_ACCOUNT);
	WRITE_ONCE(current->unwind_info.features, block);
	return block;
}
EXPORT_SYMBOL_IF_KUNIT(unwind_task_features_alloc);

/**
 * unwind_features_after_pass - tell every feature that a pass answered
 * @cookie:	the cookie of the entry whose requests the pass answered
 *
 * Context: Task context of the unwound task, after the clients'
 * callbacks, on its way to user space; may sleep.
 */
void unwind_features_after_pass(u64 cookie)
{
	struct unwind_feature *feature;

	list_for_each_entry_lockless(feature, &unwind_features, list)
		if (feature->after_pass)
			feature->after_pass(cookie);
}

void unwind_feature_wants_passes(void)
{
	/* Every opt-in calls this: the lock the enabling takes, once. */
	if (!static_key_enabled(&unwind_passes_wanted))
		static_branch_enable(&unwind_passes_wanted);
}

/**
 * unwind_pass_wanted - does a feature need the task's stacks by the pass?
 *
 * Context: Any, NMI included; the current task.
 * Return: true if a feature wants every stack of the current task's
 * entries taken by the deferred pass, not by a walk in an interrupt.
 */
bool unwind_pass_wanted(void)
{
	struct unwind_feature *feature;

	if (!static_branch_unlikely(&unwind_passes_wanted))
		return false;
	list_for_each_entry_lockless(feature, &unwind_features, list)
		if (feature->wants_pass && feature->wants_pass())
			return true;
	return false;
}

/**
 * unwind_features_task_free - free what the features keep for a task
 * @task:	the task being freed
 */
void unwind_features_task_free(struct task_struct *task)
{
	void *block = task->unwind_info.features;
	struct unwind_feature *feature;

	if (!block)
		return;
	list_for_each_entry_lockless(feature, &unwind_features, list)
		if (feature->task_free)
			feature->task_free(block + feature->task_off);
	kfree(block);
}
