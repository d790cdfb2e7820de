/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the core (deferred.c, entry.c) offers the features built on it, and all it
 * knows of them: one pointer in every task to the state they keep, and a
 * list of the features, each with the calls it wants from the core. A
 * feature registers at boot; the core calls none by name, so that a new
 * one changes its own files, this header, Kconfig and the Makefile only.
 * Internal to kernel/unwind.
 */
#ifndef _KERNEL_UNWIND_FEATURE_H
#define _KERNEL_UNWIND_FEATURE_H

#include <linux/init.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/types.h>

/* Recent cookies a thread may report its own frames for. */
#define UNWIND_REPORT_WINDOW	4

/**
 * struct unwind_report_task - a thread's self-unwinding state (report.c)
 * @cookies:	the last cookies signalled to the thread for it to report
 *		its own frames, 0 once reported
 * @next:	the slot of @cookies the next cookie takes
 * @sent:	jiffies (with bit 0 set) when the last signal was sent and
 *		not reported yet, 0 if none
 * @sig:	the signal it was sent with
 * @quiet:	cookie of the last entry that reported: it asks for no
 *		report itself
 */
struct unwind_report_task {
	u64		cookies[UNWIND_REPORT_WINDOW];
	unsigned int	next;
	unsigned long	sent;
	int		sig;
	u64		quiet;
};

/**
 * struct unwind_task_features - what the features keep for one task
 * @sframe_cache: copies of the SFrame registry entries and rows the task's
 *		walks met last (sframe/copies.c), allocated by its first
 *		lookup
 * @report:	self-unwinding by signal (report.c)
 * @code_cache:	frames the task's walks read from their code (code.c),
 *		allocated by its first reading
 *
 * Hangs off unwind_task_info::features. Allocated by the first feature
 * that needs it, in the task's own context (unwind_task_features()); a
 * new task starts without it, and it is freed with the task, each feature
 * freeing what it hung there first (struct unwind_feature::task_free).
 * Used by the task itself, and read by walks in interrupts on top of it
 * (see sframe/copies.c), so it takes no lock.
 */
struct unwind_task_features {
#ifdef CONFIG_UNWIND_USER_SFRAME
	struct unwind_sframe_cache *sframe_cache;
#endif
#ifdef CONFIG_UNWIND_USER_REPORT
	struct unwind_report_task report;
#endif
#ifdef CONFIG_UNWIND_USER_CODE_FRAMES
	struct unwind_code_cache *code_cache;
#endif
};

/**
 * unwind_task_features - the current task's feature state
 * @alloc:	allocate it if the task has none yet
 *
 * Context: Task context of the current task, which may sleep if @alloc;
 * without @alloc, also an interrupt or NMI on top of it.
 * Return: the state, or NULL if the task has none (or, with @alloc, if
 * it could not be allocated).
 */
static inline struct unwind_task_features *unwind_task_features(bool alloc)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct unwind_task_features *features = READ_ONCE(info->features);

	if (!features && alloc) {
		features = kzalloc(sizeof(*features), GFP_KERNEL_ACCOUNT);
		WRITE_ONCE(info->features, features);
	}
	return features;
}

/**
 * struct unwind_feature - a feature built on the core, and what it asks
 * @list:	in the core's list of features, which never shrinks
 * @after_pass:	may be NULL. Called by each pass that answered requests,
 *		after the clients' callbacks, with the entry's cookie. Task
 *		context of the unwound task, on its way to user space; may
 *		sleep
 * @wants_pass:	may be NULL. Does the current task need every stack of its
 *		entries to be taken by the pass, which alone calls
 *		@after_pass? Then a walk in an interrupt, which answers at
 *		once, is not made. Any context, NMI included, without a lock.
 *		Asked only once a feature called unwind_feature_wants_passes()
 * @task_free:	may be NULL. Free what the feature hung in @features, a
 *		task's that is being freed
 */
struct unwind_feature {
	struct list_head list;
	void (*after_pass)(u64 cookie);
	bool (*wants_pass)(void);
	void (*task_free)(struct unwind_task_features *features);
};

void __init unwind_feature_register(struct unwind_feature *feature);

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

#endif /* _KERNEL_UNWIND_FEATURE_H */
