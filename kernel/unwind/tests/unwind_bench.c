// SPDX-License-Identifier: GPL-2.0
/*
 * Micro-benchmark of deferred user stack unwinding against perf's in-NMI
 * frame-pointer walk, on the stack of the task that drives it.
 *
 * A program recurses to the depth it wants and writes one command to
 * /sys/kernel/debug/unwind_bench per measurement, each in its own system
 * call, so that every request is the first of its kernel entry:
 *
 *   nmi    from a self-NMI: time unwind_deferred_request(), then time
 *          perf_callchain_user() on the same user registers
 *   irq    the same from a hard hrtimer interrupt
 *   walk   in the system call itself: time the walker that deferred
 *          requests use (unwind_user_start() + unwind_user_walk())
 *
 * For counting instructions (bench/insns/), which a clock would disturb,
 * four more run one part alone from a self-NMI, untimed: "nmi-none" (the
 * NMI and nothing else), "nmi-request" (the deferred request; the entry's
 * walk and pass follow at its return to user space), "nmi-perf"
 * (perf_callchain_user()) and "nmi-nofault" (unwind_user_nofault() on
 * the NMI's registers: a system call, which it leaves to the deferred
 * walk after its checks, what every interrupt that asks pays first).
 *
 * A self-NMI interrupts the writer in the kernel. For NMIs that interrupt
 * it in user mode, where a request must also raise the interrupt that
 * makes the task enter the kernel, the writer writes "nmi-user", then runs
 * in user mode while NMIs come from outside (harness/vm-run --nmi; they
 * land on CPU 0 alone), then writes "stop": each NMI that interrupted it in
 * user mode meanwhile was measured as "nmi" is. Between the two writes the
 * file refuses everyone else with -EBUSY.
 *
 * Reading the file returns one line per measurement since the last read,
 * "mode ret request_ns perf_ns perf_frames walk_ns walk_frames clock_ns",
 * clock_ns being the cost of two back-to-back local_clock() calls, which
 * every figure includes. Built in, not a module: perf_callchain_user() is
 * not exported.
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/nmi.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include "unwind_test_ctx.h"
#include "../walk.h"

#define BENCH_MAX_SAMPLES	4096

enum bench_mode {
	BENCH_NMI, BENCH_IRQ, BENCH_WALK, BENCH_NMI_USER,
	BENCH_NMI_NONE, BENCH_NMI_REQUEST, BENCH_NMI_PERF, BENCH_NMI_NOFAULT,
};

static const char * const bench_mode_names[] = {
	"nmi", "irq", "walk", "nmi-user", "nmi-none", "nmi-request", "nmi-perf",
	"nmi-nofault"
};

struct bench_sample {
	u8	mode;
	s8	ret;
	u16	perf_frames;
	u16	walk_frames;
	u32	request_ns;
	u32	perf_ns;
	u32	walk_ns;
	u32	clock_ns;
};

/*
 * bench_lock serialises writers and readers. The sample being taken is
 * filled by the NMI or hrtimer handler on top of the writer, which waits
 * for it with preemption disabled: bench_ctx publishes it.
 */
static DEFINE_MUTEX(bench_lock);
static struct bench_sample bench_samples[BENCH_MAX_SAMPLES];
static unsigned int bench_nr;
static struct bench_sample *bench_cur;
static struct unwind_test_ctx bench_ctx;

/*
 * The task between its "nmi-user" and "stop" writes. Only that task's NMIs
 * add samples, and only while it is in user mode, so they never run
 * concurrently with its own writes, and every other writer is refused:
 * bench_samples and the walk buffers need no lock then.
 */
static struct task_struct *bench_user_task;

/* Buffers of both walks, used under bench_lock only. */
static u64 bench_perf_buf[1 + UNWIND_USER_MAX_DEPTH];
static unsigned long bench_walk_buf[UNWIND_USER_MAX_DEPTH];

static struct unwind_work bench_work;

/* Deferred walks happen at the return to user space; nothing to keep. */
static void bench_callback(struct unwind_work *work,
			   struct unwind_stacktrace *trace, u64 cookie)
{
}

static u32 bench_clock_ns(void)
{
	u64 t0 = local_clock();

	return local_clock() - t0;
}

/* One part alone, untimed, for an instruction count. */
static void bench_count_remote(struct bench_sample *s, struct pt_regs *regs,
			       struct pt_regs *irq_regs)
{
	struct perf_callchain_entry *entry = (void *)bench_perf_buf;
	struct perf_callchain_entry_ctx ctx = {
		.entry = entry,
		.max_stack = UNWIND_USER_MAX_DEPTH,
	};
	struct unwind_stacktrace trace = { .entries = bench_walk_buf };
	u64 cookie;

	if (s->mode == BENCH_NMI_REQUEST) {
		s->ret = unwind_deferred_request(&bench_work, &cookie);
	} else if (s->mode == BENCH_NMI_PERF) {
		entry->nr = 0;
		perf_callchain_user(&ctx, regs);
		s->perf_frames = ctx.nr;
	} else if (s->mode == BENCH_NMI_NOFAULT) {
		s->ret = unwind_user_nofault(irq_regs, &trace,
					     UNWIND_USER_MAX_DEPTH);
		s->walk_frames = trace.nr;
	}
}

/*
 * In NMI or hardirq context, on top of the writing task at @regs (its
 * user registers), the interrupt's own being @irq_regs.
 */
static void bench_measure_remote(struct bench_sample *s, struct pt_regs *regs,
				 struct pt_regs *irq_regs)
{
	struct perf_callchain_entry *entry = (void *)bench_perf_buf;
	struct perf_callchain_entry_ctx ctx = {
		.entry = entry,
		.max_stack = UNWIND_USER_MAX_DEPTH,
	};
	u64 cookie, t0, t1;
	int ret;

	if (s->mode >= BENCH_NMI_NONE) {
		bench_count_remote(s, regs, irq_regs);
		return;
	}

	/*
	 * The walk first: a request from user mode raises a self-interrupt,
	 * and under TCG what the NMI runs after that, with the interrupt
	 * pending, runs slower (2.6x for the 64-frame walk, measured with an
	 * irq_work raised before it). Before issue 13's rework every request
	 * from NMI raised one, and walking after the request made that
	 * version of this benchmark report the in-NMI walk 2.6x too slow.
	 */
	entry->nr = 0;
	t0 = local_clock();
	perf_callchain_user(&ctx, regs);
	t1 = local_clock();
	s->perf_ns = t1 - t0;
	s->perf_frames = ctx.nr;

	t0 = local_clock();
	ret = unwind_deferred_request(&bench_work, &cookie);
	t1 = local_clock();
	s->request_ns = t1 - t0;
	s->ret = ret;
	s->clock_ns = bench_clock_ns();
}

static void bench_remote(struct pt_regs *irq_regs)
{
	if (!unwind_test_ctx_mine(&bench_ctx))
		return;
	bench_measure_remote(bench_cur, task_pt_regs(current), irq_regs);
	unwind_test_ctx_done(&bench_ctx);
}

static int bench_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!unwind_test_ctx_mine(&bench_ctx))
		return NMI_DONE;
	bench_remote(regs);
	return NMI_HANDLED;
}

/* NMIs from outside that interrupted the armed task in user mode. */
static int bench_user_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct bench_sample *s;

	if (current != READ_ONCE(bench_user_task))
		return NMI_DONE;
	if (user_mode(regs) && bench_nr < BENCH_MAX_SAMPLES) {
		s = &bench_samples[bench_nr];
		s->mode = BENCH_NMI_USER;
		bench_measure_remote(s, regs, regs);
		bench_nr++;
	}
	return NMI_HANDLED;
}

static enum hrtimer_restart bench_hrtimer_fn(struct hrtimer *timer)
{
	bench_remote(get_irq_regs());
	return HRTIMER_NORESTART;
}

static int bench_measure(struct bench_sample *s, enum bench_mode mode)
{
	struct unwind_stacktrace trace = { .entries = bench_walk_buf };
	struct unwind_user_state state;
	u64 t0, t1;

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	if (mode == BENCH_WALK) {
		t0 = local_clock();
		unwind_user_start(&state, task_pt_regs(current));
		unwind_user_walk(&state, &trace, UNWIND_USER_MAX_DEPTH);
		t1 = local_clock();
		s->walk_ns = t1 - t0;
		s->walk_frames = trace.nr;
		s->clock_ns = bench_clock_ns();
		return 0;
	}

	bench_cur = s;
	return unwind_test_ctx_run(&bench_ctx, mode != BENCH_IRQ,
				   bench_hrtimer_fn);
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	char buf[16];
	int mode, ret;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mode = sysfs_match_string(bench_mode_names, strim(buf));
	if (mode < 0 && strcmp(strim(buf), "stop"))
		return mode;

	guard(mutex)(&bench_lock);
	if (bench_user_task) {
		if (bench_user_task != current || mode >= 0)
			return -EBUSY;
		/* "stop": no NMI adds a sample once we are here. */
		WRITE_ONCE(bench_user_task, NULL);
		return len;
	}
	if (mode < 0)
		return -EINVAL;
	if (mode == BENCH_NMI_USER) {
		WRITE_ONCE(bench_user_task, current);
		return len;
	}
	if (bench_nr == BENCH_MAX_SAMPLES) {
		ret = -ENOSPC;
	} else {
		ret = bench_measure(&bench_samples[bench_nr], mode);
		if (!ret)
			bench_nr++;
	}
	return ret ? ret : len;
}

static int bench_show(struct seq_file *m, void *v)
{
	unsigned int i;

	mutex_lock(&bench_lock);
	if (bench_user_task) {
		mutex_unlock(&bench_lock);
		return -EBUSY;
	}
	for (i = 0; i < bench_nr; i++) {
		struct bench_sample *s = &bench_samples[i];

		seq_printf(m, "%s %d %u %u %u %u %u %u\n",
			   bench_mode_names[s->mode], s->ret, s->request_ns,
			   s->perf_ns, s->perf_frames, s->walk_ns,
			   s->walk_frames, s->clock_ns);
	}
	/* A read that did not fit is retried from the start: keep them. */
	if (!seq_has_overflowed(m))
		bench_nr = 0;
	mutex_unlock(&bench_lock);
	return 0;
}

static int bench_open(struct inode *inode, struct file *file)
{
	return single_open_size(file, bench_show, NULL,
				BENCH_MAX_SAMPLES * 64);
}

/* A task that dies between "nmi-user" and "stop" closes its file here. */
static int bench_release(struct inode *inode, struct file *file)
{
	scoped_guard(mutex, &bench_lock) {
		if (bench_user_task == current)
			WRITE_ONCE(bench_user_task, NULL);
	}
	return single_release(inode, file);
}

static const struct file_operations bench_fops = {
	.owner		= THIS_MODULE,
	.open		= bench_open,
	.read		= seq_read,
	.write		= bench_write,
	.llseek		= seq_lseek,
	.release	= bench_release,
};

static int __init unwind_bench_init(void)
{
	int ret;

	ret = unwind_deferred_init(&bench_work, bench_callback);
	if (ret)
		return ret;
	ret = register_nmi_handler(NMI_LOCAL, bench_nmi_handler, 0,
				   "unwind_bench");
	if (!ret) {
		ret = register_nmi_handler(NMI_UNKNOWN, bench_user_nmi_handler,
					   0, "unwind_bench");
		if (ret)
			unregister_nmi_handler(NMI_LOCAL, "unwind_bench");
	}
	if (ret) {
		unwind_deferred_cancel(&bench_work);
		return ret;
	}
	debugfs_create_file("unwind_bench", 0600, NULL, NULL, &bench_fops);
	return 0;
}
late_initcall(unwind_bench_init);
