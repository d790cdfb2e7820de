/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the core (deferred.c, entry.c) offers the features built on it, and
 * all it knows of them: a list of the features, each with the calls it
 * wants from the core and the size of what it keeps per task, and one
 * block in every task that keeps such state, each feature's part at its
 * offset. A feature registers at boot; the core calls none by name and
 * the block names none, so that a new one changes its own files, Kconfig
 * and the Makefile only.
 * Internal to kernel/unwind.
 */
#ifndef _KERNEL_UNWIND_FEATURE_H
#define _KERNEL_UNWIND_FEATURE_H

#include <linux/init.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/types.h>

/**
 * struct unwind_feature - a feature built on the core, and what it asks
 * @list:	in the core's list of features, which never shrinks
 * @task_size:	bytes the feature keeps for a task, 0 if none: its part of
 *		the task's block (unwind_feature_task())
 * @task_off:	where that part starts in the block; set by
 *		unwind_feature_register()
 * @after_pass:	may be NULL. Called by each pass that answered requests,
 *		after the clients' callbacks, with the entry's cookie. Task
 *		context of the unwound task, on its way to user space; may
 *		sleep
 * @wants_pass:	may be NULL. Does the current task need every stack of its
 *		entries to be taken by the pass, which alone calls
 *		@after_pass? Then a walk in an interrupt, which answers at
 *		once, is not made. Any context, NMI included, without a lock.
 *		Asked only once a feature called unwind_feature_wants_passes()
 * @task_free:	may be NULL. Free what the feature hung in @state, its
 *		part of the block of a task that is being freed
 */
struct unwind_feature {
	struct list_head list;
	size_t		task_size;
	size_t		task_off;
	void (*after_pass)(u64 cookie);
	bool (*wants_pass)(void);
	void (*task_free)(void *state);
};

void __init unwind_feature_register(struct unwind_feature *feature);
void *unwind_task_features_alloc(void);

/**
 * unwind_feature_task - a feature's part of the current task's block
 * @feature:	the feature, registered
 * @alloc:	allocate the block if the task has none yet
 *
 * A task's block holds every registered feature's part (struct
 * unwind_feature::task_size) at its offset. It hangs off
 * unwind_task_info::features: a new task starts without it, the first
 * feature that needs it allocates it, zeroed, in the task's own context,
 * and it is freed with the task, each feature freeing what it hung in its
 * part first (struct unwind_feature::task_free). Used by the task itself,
 * and read by walks in interrupts on top of it (see sframe/copies.c), so
 * it takes no lock.
 *
 * Context: Task context of the current task, which may sleep if @alloc;
 * without @alloc, also an interrupt or NMI on top of it.
 * Return: the feature's part, or NULL if the task has no block (or, with
 * @alloc, if it could not be allocated).
 */
static inline void *unwind_feature_task(const struct unwind_feature *feature,
					bool alloc)
{
	void *block = READ_ONCE(current->unwind_info.features);

	if (!block && alloc)
		block = unwind_task_features_alloc();
	return block ? block + feature->task_off : NULL;
}

/* The core's calls into every registered feature (feature.c). */
void unwind_features_task_free(struct task_struct *task);
void unwind_features_after_pass(u64 cookie);

/*
 * Define a feature's registration at boot: @feature, a struct
 * unwind_feature, is in the core's list before any task can use it.
 */
#define unwind_feature_initcall(feature)				\
	static int __init feature##_register(void)			\
	{								\
		unwind_feature_register(&(feature));		\
		return 0;						\
	}								\
	core_initcall(feature##_register)
/*
 * A feature whose @wants_pass is about to answer true for the first time
 * calls this first (process context, may sleep): until one has, the walk
 * in an interrupt asks no feature and costs nothing more.
 */
void unwind_feature_wants_passes(void);
bool unwind_pass_wanted(void);
u64 unwind_entry_cookie(void);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit test of the blocks' layout. */
extern struct list_head unwind_features;
extern size_t unwind_features_size;
#endif

#endif /* _KERNEL_UNWIND_FEATURE_H */
