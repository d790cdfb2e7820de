// SPDX-License-Identifier: GPL-2.0
/*
 * A test client of deferred user stack unwinding, driven from user space
 * through debugfs (/sys/kernel/debug/unwind_test/), for the kselftests in
 * tools/testing/selftests/unwind/.
 *
 * Two clients, A and B, are registered at load. Writing to "request" makes
 * requests for the writing task:
 *
 *   task|irq|nmi COUNT MASK [late|probe]
 *
 * COUNT requests per client in MASK (1: A, 2: B), made in the write()
 * itself, from an hrtimer interrupt or from a self-NMI taken while the
 * writer spins in the kernel. With "late", client A's callback requests
 * again for A and B, as a tracer whose events fire on the way out would.
 * With "probe", ut_probe_point() is called before the requests, and
 * again by task work that client A's callback queues: a kprobe there
 * fires once in the entry and once after its pass, in the next round of
 * the exit work loop, when every client taken by the pass was called.
 *
 * Writing "SYMBOL MASK" to "arm" makes one request per client in MASK
 * from a kprobe on SYMBOL (one of ut_probe_syms[]) the next time the
 * writing task gets there: requests made in fork, exec, exit and
 * rt_sigreturn(), and while a walk sleeps on a stalled page.
 *
 * Writing "PID MASK" to "nmi" makes one request per client in MASK from
 * every NMI of unknown reason that interrupts task PID ("0 0" disarms);
 * while armed, the client claims every such NMI. Those are the NMIs that
 * QEMU's monitor injects (harness/vm-run --nmi): they land wherever the
 * task is, user mode included, which no self-NMI can do. Their requests are
 * logged with the context "nmi-user" or "nmi-kernel" and the interrupted
 * instruction pointer.
 *
 * Writing "COUNT" to "nofault" walks the writer's stack inline from the
 * next COUNT timer interrupts that land in its user mode on this CPU
 * (a hard hrtimer every millisecond; "0" stops it): twice each, with
 * unwind_user_nofault(), as two perf events sampling in one interrupt
 * do. The second call must copy the first one's walk, kept for the
 * entry. Reading "nofault" after stopping gives the tally, and the last
 * copied stack:
 *
 *   interrupts=N walked=N kept=N copied=N differ=N nr=N ips=0x...,0x...
 *
 * Writing "PID" to "guest" makes perf see task PID as a vCPU thread
 * running guest user code, as KVM would report it (perf_guest_state());
 * "0" ends it. perf must not defer the user callchain of such samples:
 * the user stack at the task's return would be the VMM's, not the
 * guest's. The callbacks are registered on first use, so the module must
 * not be used with KVM loaded.
 *
 * Writing "MS" to "mmap_hold" holds the writer's mmap lock for writing
 * for MS milliseconds (at most 60000; a fatal signal ends it sooner), as a
 * process can keep it taken: callbacks must not wait for it.
 *
 * Writing "walk-closed" to "misuse" breaks a rule of the core on purpose,
 * to show that the core checks it: see ut_misuse_write().
 *
 * Reading "events" returns, and forgets, every request, callback and user
 * stack walk (seen by a kprobe on unwind_user_walk()) since the last read,
 * one line each:
 *
 *   req pid=P client=A ctx=nmi ret=0 cookie=0x...
 *   req pid=P client=A ctx=nmi-user ret=0 cookie=0x... ip=0x...
 *   cb pid=P client=A cookie=0x... nr=N ips=0x...,0x...
 *   walk pid=P
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mmap_lock.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <linux/vmalloc.h>
#include <asm/irq_regs.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <linux/nmi.h>
#include <asm/apic.h>
#endif
#include "unwind_test_ctx.h"

#define UT_EVENTS	256
#define UT_CLIENTS	2

enum ut_ctx {
	UT_TASK, UT_IRQ, UT_NMI, UT_KPROBE, UT_CALLBACK, UT_NMI_USER,
	UT_NMI_KERNEL,
};

static const char * const ut_ctx_name[] = {
	"task", "irq", "nmi", "kprobe", "callback", "nmi-user", "nmi-kernel",
};

/*
 * Logged requests and callbacks. Slots are claimed with an atomic counter
 * so that NMIs can log; a slot is published with ready = 1. The reader
 * holds ut_read_lock and resets the log after reading it.
 */
enum ut_kind { UT_REQ, UT_CB, UT_WALK };

struct ut_event {
	int		ready;
	enum ut_kind	kind;
	pid_t		pid;
	int		client;
	enum ut_ctx	ctx;
	int		ret;
	u64		cookie;
	unsigned long	ip;
	unsigned int	nr;
	unsigned long	ips[UNWIND_USER_MAX_DEPTH];
};

static struct ut_event *ut_log;
static atomic_t ut_log_next;
static DEFINE_MUTEX(ut_read_lock);

static struct unwind_work ut_clients[UT_CLIENTS];
static bool ut_late;
static bool ut_probe;

/* A place for a kprobe: see "probe" at the top of this file. */
static noinline void ut_probe_point(void)
{
	/* Keeps the call, and the function, for the kprobe. */
	asm volatile ("");
}

static void ut_probe_work_fn(struct callback_head *head)
{
	ut_probe_point();
	kfree(head);
}

/* After the pass that calls us, in the same entry. */
static void ut_probe_after_pass(void)
{
	struct callback_head *head = kmalloc(sizeof(*head), GFP_KERNEL);

	if (!head)
		return;
	init_task_work(head, ut_probe_work_fn);
	if (task_work_add(current, head, TWA_RESUME))
		kfree(head);
}

static struct ut_event *ut_claim(void)
{
	int i = atomic_inc_return(&ut_log_next) - 1;

	return i < UT_EVENTS ? &ut_log[i] : NULL;
}

static void ut_log_request(int client, enum ut_ctx ctx, int ret, u64 cookie,
			   unsigned long ip)
{
	struct ut_event *ev = ut_claim();

	if (!ev)
		return;
	ev->kind = UT_REQ;
	ev->pid = current->pid;
	ev->client = client;
	ev->ctx = ctx;
	ev->ret = ret;
	ev->cookie = cookie;
	ev->ip = ip;
	/* Publish the event: pairs with smp_load_acquire() in the reader. */
	smp_store_release(&ev->ready, 1);
}

static void ut_request_at(unsigned int mask, unsigned int count,
			  enum ut_ctx ctx, unsigned long ip)
{
	unsigned int i, c;
	u64 cookie;
	int ret;

	for (i = 0; i < count; i++) {
		for (c = 0; c < UT_CLIENTS; c++) {
			if (!(mask & BIT(c)))
				continue;
			ret = unwind_deferred_request(&ut_clients[c], &cookie);
			ut_log_request(c, ctx, ret, cookie, ip);
		}
	}
}

static void ut_request(unsigned int mask, unsigned int count, enum ut_ctx ctx)
{
	ut_request_at(mask, count, ctx, 0);
}

static void ut_callback(struct unwind_work *work,
			struct unwind_stacktrace *trace, u64 cookie)
{
	int client = work - ut_clients;
	struct ut_event *ev = ut_claim();

	if (ev) {
		ev->kind = UT_CB;
		ev->pid = current->pid;
		ev->client = client;
		ev->cookie = cookie;
		ev->nr = min(trace->nr, UNWIND_USER_MAX_DEPTH);
		memcpy(ev->ips, trace->entries, ev->nr * sizeof(ev->ips[0]));
		/* Publish the event: pairs with smp_load_acquire() in the reader. */
		smp_store_release(&ev->ready, 1);
	}
	if (client == 0 && READ_ONCE(ut_late))
		ut_request(BIT(0) | BIT(1), 1, UT_CALLBACK);
	if (client == 0 && READ_ONCE(ut_probe))
		ut_probe_after_pass();
}

/* Requests from interrupt and NMI context, on top of the writing task. */
static struct unwind_test_ctx ut_ctx;
static struct {
	unsigned int		mask;
	unsigned int		count;
} ut_remote;

static void ut_remote_request(enum ut_ctx ctx)
{
	if (!unwind_test_ctx_mine(&ut_ctx))
		return;
	ut_request(ut_remote.mask, ut_remote.count, ctx);
	/* The requests are logged before the writer goes on. */
	unwind_test_ctx_done(&ut_ctx);
}

static enum hrtimer_restart ut_hrtimer_fn(struct hrtimer *t)
{
	ut_remote_request(UT_IRQ);
	return HRTIMER_NORESTART;
}

#ifdef CONFIG_X86_LOCAL_APIC
static int ut_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!unwind_test_ctx_mine(&ut_ctx))
		return NMI_DONE;
	ut_remote_request(UT_NMI);
	return NMI_HANDLED;
}

/* Injected NMIs, for the armed task. */
static struct {
	pid_t		pid;
	unsigned int	mask;
} ut_nmi_target;

static int ut_unknown_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	pid_t pid = READ_ONCE(ut_nmi_target.pid);

	if (!pid)
		return NMI_DONE;
	if (current->pid == pid)
		ut_request_at(READ_ONCE(ut_nmi_target.mask), 1,
			      user_mode(regs) ? UT_NMI_USER : UT_NMI_KERNEL,
			      instruction_pointer(regs));
	return NMI_HANDLED;
}

static ssize_t ut_nmi_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	unsigned int mask;
	char buf[32];
	int pid;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%d %u", &pid, &mask) != 2 || pid < 0 ||
	    mask >= BIT(UT_CLIENTS) || !pid != !mask)
		return -EINVAL;
	WRITE_ONCE(ut_nmi_target.pid, 0);
	WRITE_ONCE(ut_nmi_target.mask, mask);
	WRITE_ONCE(ut_nmi_target.pid, pid);
	return len;
}

static const struct file_operations ut_nmi_fops = {
	.write = ut_nmi_write,
};
#endif

static int ut_request_from(enum ut_ctx ctx, unsigned int mask,
			   unsigned int count)
{
	ut_remote.mask = mask;
	ut_remote.count = count;
	return unwind_test_ctx_run(&ut_ctx, ctx == UT_NMI, ut_hrtimer_fn);
}

static ssize_t ut_request_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	unsigned int count, mask;
	char buf[64], ctx[8], late[8] = "";
	int n, ret = 0;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%7s %u %u %7s", ctx, &count, &mask, late);
	if (n < 3 || !count || count > 1000 || !mask || mask >= BIT(UT_CLIENTS))
		return -EINVAL;
	WRITE_ONCE(ut_late, n == 4 && !strcmp(late, "late"));
	WRITE_ONCE(ut_probe, n == 4 && !strcmp(late, "probe"));
	if (n == 4 && !ut_late && !ut_probe)
		return -EINVAL;
	if (ut_probe)
		ut_probe_point();

	if (!strcmp(ctx, "task"))
		ut_request(mask, count, UT_TASK);
	else if (!strcmp(ctx, "irq"))
		ret = ut_request_from(UT_IRQ, mask, count);
	else if (!strcmp(ctx, "nmi"))
		ret = ut_request_from(UT_NMI, mask, count);
	else
		return -EINVAL;
	return ret ? ret : len;
}

/*
 * Inline walks from timer interrupts of user mode (the "nofault" file).
 * The timer runs on the CPU of the writer, which the test pins there; the
 * tally is written by the timer function only, and read after stopping
 * it (hrtimer_cancel() waits for a running one).
 */
static struct {
	struct hrtimer	timer;
	pid_t		pid;
	unsigned int	left;
	unsigned int	interrupts;	/* of the task's user mode */
	unsigned int	walked;		/* the first walk gave a stack */
	unsigned int	kept;		/* ... and kept it for the entry */
	unsigned int	copied;		/* the second gave the same stack */
	unsigned int	differ;		/* the second gave another */
	unsigned int	nr;
	unsigned long	first[UNWIND_USER_MAX_DEPTH];
	unsigned long	again[UNWIND_USER_MAX_DEPTH];
} ut_nf;

static DEFINE_MUTEX(ut_nf_lock);

static void ut_nf_walk_twice(struct pt_regs *regs)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct unwind_stacktrace t1 = { .entries = ut_nf.first };
	struct unwind_stacktrace t2 = { .entries = ut_nf.again };
	int n1, n2;

	ut_nf.interrupts++;
	n1 = unwind_user_nofault(regs, &t1, UNWIND_USER_MAX_DEPTH);
	if (n1 <= 0)
		return;
	ut_nf.walked++;
	/* The entry's cookie on the cache: the next call copies it. */
	if (!info->cookie || READ_ONCE(info->cache_cookie) != info->cookie)
		return;
	ut_nf.kept++;
	n2 = unwind_user_nofault(regs, &t2, UNWIND_USER_MAX_DEPTH);
	if (n2 == n1 && !memcmp(ut_nf.first, ut_nf.again, n1 * sizeof(long))) {
		ut_nf.copied++;
		ut_nf.nr = n2;
	} else {
		ut_nf.differ++;
	}
}

static enum hrtimer_restart ut_nf_timer_fn(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();

	if (current->pid == ut_nf.pid && regs && user_mode(regs)) {
		ut_nf_walk_twice(regs);
		ut_nf.left--;
	}
	if (!ut_nf.left)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ms_to_ktime(1));
	return HRTIMER_RESTART;
}

static ssize_t ut_nf_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	unsigned int count;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 10, &count);
	if (ret)
		return ret;
	if (count > 1000)
		return -EINVAL;
	guard(mutex)(&ut_nf_lock);
	hrtimer_cancel(&ut_nf.timer);
	if (!count)
		return len;
	ut_nf.pid = current->pid;
	ut_nf.left = count;
	ut_nf.interrupts = 0;
	ut_nf.walked = 0;
	ut_nf.kept = 0;
	ut_nf.copied = 0;
	ut_nf.differ = 0;
	ut_nf.nr = 0;
	hrtimer_start(&ut_nf.timer, ms_to_ktime(1), HRTIMER_MODE_REL_PINNED_HARD);
	return len;
}

static ssize_t ut_nf_read(struct file *file, char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	size_t cap = 128 + UNWIND_USER_MAX_DEPTH * 19;
	ssize_t ret;
	char *buf;
	int n, i;

	buf = kvmalloc(cap, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	scoped_guard(mutex, &ut_nf_lock) {
		n = scnprintf(buf, cap,
			      "interrupts=%u walked=%u kept=%u copied=%u differ=%u nr=%u ips=",
			      ut_nf.interrupts, ut_nf.walked, ut_nf.kept,
			      ut_nf.copied, ut_nf.differ, ut_nf.nr);
		for (i = 0; i < ut_nf.nr; i++)
			n += scnprintf(buf + n, cap - n, "%s%#lx", i ? "," : "",
				       ut_nf.again[i]);
	}
	n += scnprintf(buf + n, cap - n, "\n");
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, n);
	kvfree(buf);
	return ret;
}

static const struct file_operations ut_nf_fops = {
	.write = ut_nf_write,
	.read = ut_nf_read,
};

/*
 * Requests from kprobes in fork, exec and exit, in a user fault that
 * userfaultfd stalls (the walk sleeps there), at the start and in the
 * middle (after the registers are restored) of rt_sigreturn(), while a
 * signal frame is written and as a tracee stops, for one armed task each.
 */
static const char * const ut_probe_syms[] = {
	"kernel_clone", "begin_new_exec", "do_group_exit", "handle_userfault",
	"__x64_sys_rt_sigreturn", "restore_altstack",
	"__ia32_compat_sys_rt_sigreturn", "compat_restore_altstack",
	"x64_setup_rt_frame", "ia32_setup_rt_frame", "do_notify_parent_cldstop",
};

static struct kprobe ut_probes[ARRAY_SIZE(ut_probe_syms)];

static struct {
	pid_t		pid;
	unsigned int	mask;
} ut_armed[ARRAY_SIZE(ut_probe_syms)];

static int ut_probe_pre(struct kprobe *p, struct pt_regs *regs)
{
	int i = p - ut_probes;
	unsigned int mask;

	if (READ_ONCE(ut_armed[i].pid) != current->pid)
		return 0;
	mask = ut_armed[i].mask;
	WRITE_ONCE(ut_armed[i].pid, 0);
	ut_request(mask, 1, UT_KPROBE);
	return 0;
}

/* Every user stack walk, whoever asked for it. */
static int ut_walk_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct ut_event *ev = ut_claim();

	if (ev) {
		ev->kind = UT_WALK;
		ev->pid = current->pid;
		/* Publish the event: pairs with smp_load_acquire() in the reader. */
		smp_store_release(&ev->ready, 1);
	}
	return 0;
}

static struct kprobe ut_walk_probe = {
	.symbol_name	= "unwind_user_walk",
	.pre_handler	= ut_walk_pre,
};

static ssize_t ut_arm_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[64], sym[32];
	unsigned int mask, i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%31s %u", sym, &mask) != 2 || !mask ||
	    mask >= BIT(UT_CLIENTS))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(ut_probe_syms); i++) {
		if (strcmp(sym, ut_probe_syms[i]))
			continue;
		if (!ut_probes[i].addr)
			return -ENODEV;
		ut_armed[i].mask = mask;
		WRITE_ONCE(ut_armed[i].pid, current->pid);
		return len;
	}
	return -EINVAL;
}

/* What one open of "events" reads: the log as text, taken at open. */
struct ut_text {
	size_t	len;
	char	buf[];
};

static size_t ut_format(struct ut_event *ev, char *buf, size_t cap)
{
	size_t len;
	int j;

	if (ev->kind == UT_WALK)
		return scnprintf(buf, cap, "walk pid=%d\n", ev->pid);
	if (ev->kind == UT_REQ && !ev->ip)
		return scnprintf(buf, cap,
				 "req pid=%d client=%c ctx=%s ret=%d cookie=%#llx\n",
				 ev->pid, 'A' + ev->client, ut_ctx_name[ev->ctx],
				 ev->ret, ev->cookie);
	if (ev->kind == UT_REQ)
		return scnprintf(buf, cap,
				 "req pid=%d client=%c ctx=%s ret=%d cookie=%#llx ip=%#lx\n",
				 ev->pid, 'A' + ev->client, ut_ctx_name[ev->ctx],
				 ev->ret, ev->cookie, ev->ip);
	len = scnprintf(buf, cap, "cb pid=%d client=%c cookie=%#llx nr=%u ips=",
			ev->pid, 'A' + ev->client, ev->cookie, ev->nr);
	for (j = 0; j < ev->nr; j++)
		len += scnprintf(buf + len, cap - len, "%s%#lx", j ? "," : "",
				 ev->ips[j]);
	return len + scnprintf(buf + len, cap - len, "\n");
}

static int ut_events_open(struct inode *inode, struct file *file)
{
	struct ut_text *text;
	size_t cap;
	int i, n;

	guard(mutex)(&ut_read_lock);
	n = min(atomic_read(&ut_log_next), UT_EVENTS);
	cap = 64 + (size_t)n * (128 + UNWIND_USER_MAX_DEPTH * 19);
	text = kvmalloc(struct_size(text, buf, cap), GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	text->len = 0;
	for (i = 0; i < n; i++) {
		/* Pairs with the release that published the event. */
		if (smp_load_acquire(&ut_log[i].ready))
			text->len += ut_format(&ut_log[i], text->buf + text->len,
					       cap - text->len);
		ut_log[i].ready = 0;
	}
	if (atomic_read(&ut_log_next) > UT_EVENTS)
		text->len += scnprintf(text->buf + text->len, cap - text->len,
				       "overflow\n");
	atomic_set(&ut_log_next, 0);
	file->private_data = text;
	return 0;
}

static ssize_t ut_events_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct ut_text *text = file->private_data;

	return simple_read_from_buffer(ubuf, len, ppos, text->buf, text->len);
}

static int ut_events_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

static const struct file_operations ut_request_fops = {
	.write = ut_request_write,
};

static const struct file_operations ut_arm_fops = {
	.write = ut_arm_write,
};

static const struct file_operations ut_events_fops = {
	.open = ut_events_open,
	.read = ut_events_read,
	.release = ut_events_release,
};

static struct dentry *ut_dir;

#ifdef CONFIG_GUEST_PERF_EVENTS
/* The task perf is told is in guest user mode; 0: none. */
static pid_t ut_guest_pid;
static bool ut_guest_registered;
static DEFINE_MUTEX(ut_guest_lock);

/* Called by perf in any context, NMI included. */
static unsigned int ut_guest_state(void)
{
	if (current->pid != READ_ONCE(ut_guest_pid))
		return 0;
	return PERF_GUEST_ACTIVE | PERF_GUEST_USER;
}

/* A made-up guest instruction pointer, for the sample's IP. */
static unsigned long ut_guest_get_ip(void)
{
	return 0x400000;
}

static struct perf_guest_info_callbacks ut_guest_cbs = {
	.state	= ut_guest_state,
	.get_ip	= ut_guest_get_ip,
};

static ssize_t ut_guest_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	int pid, ret;

	ret = kstrtoint_from_user(ubuf, len, 10, &pid);
	if (ret)
		return ret;
	if (pid < 0)
		return -EINVAL;
	mutex_lock(&ut_guest_lock);
	if (pid && !ut_guest_registered) {
		perf_register_guest_info_callbacks(&ut_guest_cbs);
		ut_guest_registered = true;
	}
	WRITE_ONCE(ut_guest_pid, pid);
	mutex_unlock(&ut_guest_lock);
	return len;
}

static const struct file_operations ut_guest_fops = {
	.write = ut_guest_write,
};

static void ut_guest_cleanup(void)
{
	if (ut_guest_registered)
		perf_unregister_guest_info_callbacks(&ut_guest_cbs);
}
#else
static void ut_guest_cleanup(void) { }
#endif

static void ut_cleanup(void)
{
	int i;

	debugfs_remove_recursive(ut_dir);
	hrtimer_cancel(&ut_nf.timer);
	ut_guest_cleanup();
	unregister_kprobe(&ut_walk_probe);
	for (i = 0; i < ARRAY_SIZE(ut_probes); i++) {
		if (ut_probes[i].addr)
			unregister_kprobe(&ut_probes[i]);
	}
#ifdef CONFIG_X86_LOCAL_APIC
	unregister_nmi_handler(NMI_LOCAL, "unwind_test");
	unregister_nmi_handler(NMI_UNKNOWN, "unwind_test");
#endif
	for (i = 0; i < UT_CLIENTS; i++)
		unwind_deferred_cancel(&ut_clients[i]);
	vfree(ut_log);
}

/*
 * The writer's stack walked while its state says CLOSED, as between the
 * close of an entry and the next entry: no walk of the task may run there,
 * because interrupts walk the task's stack and fill its per-task copies
 * where its state has neither ACTIVE nor SEALED (kernel/unwind/entry.c).
 * The core must warn, once; harness/run-tests boots a guest for this alone
 * and expects the warning. The state is put back after the walk; a request
 * an interrupt made in between is lost, which only this misuse can cause.
 */
static ssize_t ut_misuse_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	struct unwind_task_info *info = &current->unwind_info;
	struct unwind_stacktrace trace;
	char buf[16];
	long old;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (strcmp(strim(buf), "walk-closed"))
		return -EINVAL;
	old = atomic_long_xchg(&info->state, BIT(UNWIND_CLOSED_BIT));
	unwind_user_faultable(&trace);
	atomic_long_set(&info->state, old);
	return len;
}

static const struct file_operations ut_misuse_fops = {
	.write = ut_misuse_write,
};

/* The mmap lock held for writing, as a process may keep it (mmap_hold). */
static ssize_t ut_mmap_hold_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct mm_struct *mm = current->mm;
	unsigned long end;
	unsigned int ms;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 0, &ms);
	if (ret)
		return ret;
	if (!mm || ms > 60000)
		return -EINVAL;
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	end = jiffies + msecs_to_jiffies(ms);
	while (time_before(jiffies, end) && !fatal_signal_pending(current))
		schedule_timeout_killable(min_t(unsigned long, end - jiffies,
						HZ / 10));
	mmap_write_unlock(mm);
	return len;
}

static const struct file_operations ut_mmap_hold_fops = {
	.write = ut_mmap_hold_write,
};

static int __init ut_init(void)
{
	int i, ret;

	hrtimer_init(&ut_nf.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ut_nf.timer.function = ut_nf_timer_fn;
	ut_log = vzalloc(array_size(UT_EVENTS, sizeof(*ut_log)));
	if (!ut_log)
		return -ENOMEM;
	for (i = 0; i < UT_CLIENTS; i++) {
		ret = unwind_deferred_init(&ut_clients[i], ut_callback);
		if (ret) {
			while (i--)
				unwind_deferred_cancel(&ut_clients[i]);
			vfree(ut_log);
			return ret;
		}
	}
#ifdef CONFIG_X86_LOCAL_APIC
	ret = register_nmi_handler(NMI_LOCAL, ut_nmi_handler, 0, "unwind_test");
	if (!ret) {
		ret = register_nmi_handler(NMI_UNKNOWN, ut_unknown_nmi_handler,
					   0, "unwind_test");
		if (ret)
			unregister_nmi_handler(NMI_LOCAL, "unwind_test");
	}
	if (ret) {
		for (i = 0; i < UT_CLIENTS; i++)
			unwind_deferred_cancel(&ut_clients[i]);
		vfree(ut_log);
		return ret;
	}
#endif
	/* A probe that cannot be placed only disables its "arm" symbol. */
	for (i = 0; i < ARRAY_SIZE(ut_probes); i++) {
		ut_probes[i].symbol_name = ut_probe_syms[i];
		ut_probes[i].pre_handler = ut_probe_pre;
		if (register_kprobe(&ut_probes[i]))
			ut_probes[i].addr = NULL;
	}
	ret = register_kprobe(&ut_walk_probe);
	if (ret) {
		ut_cleanup();
		return ret;
	}
	ut_dir = debugfs_create_dir("unwind_test", NULL);
	debugfs_create_file("request", 0200, ut_dir, NULL, &ut_request_fops);
	debugfs_create_file("arm", 0200, ut_dir, NULL, &ut_arm_fops);
	debugfs_create_file("events", 0400, ut_dir, NULL, &ut_events_fops);
	debugfs_create_file("nofault", 0600, ut_dir, NULL, &ut_nf_fops);
	debugfs_create_file("mmap_hold", 0200, ut_dir, NULL, &ut_mmap_hold_fops);
	debugfs_create_file("misuse", 0200, ut_dir, NULL, &ut_misuse_fops);
#ifdef CONFIG_X86_LOCAL_APIC
	debugfs_create_file("nmi", 0200, ut_dir, NULL, &ut_nmi_fops);
#endif
#ifdef CONFIG_GUEST_PERF_EVENTS
	debugfs_create_file("guest", 0200, ut_dir, NULL, &ut_guest_fops);
#endif
	return 0;
}

static void __exit ut_exit(void)
{
	ut_cleanup();
}

module_init(ut_init);
module_exit(ut_exit);
MODULE_DESCRIPTION("Test client of deferred user stack unwinding");
MODULE_LICENSE("GPL");
