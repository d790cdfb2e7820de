// SPDX-License-Identifier: GPL-2.0
/*
 * Torture test of deferred user stack unwinding.
 *
 * User-space workers (tools/testing/selftests/unwind/torture_test.c) fork,
 * exec, exit, take signals, get killed and migrate between CPUs, while
 * this module asks for their user stacks from task context, from per-CPU
 * hrtimers, from self-NMIs and from NMIs injected from outside (which land
 * in user mode too), walks them in those interrupts without faulting
 * (unwind_user_nofault(), as perf does for a sample), and cancels and
 * registers its clients again. Every request and every callback is
 * checked against the guarantees of kernel/unwind/deferred.c:
 *
 *  - each accepted request is answered by exactly one callback, with its
 *    cookie (no loss, no duplicate, no callback nobody asked for);
 *  - the stack delivered for a kernel entry whose user stack the module
 *    knows (a "work" write made from a known call chain) is that stack;
 *  - the stack delivered for a request from an NMI that interrupted user
 *    mode starts at the interrupted IP, and no such request is refused;
 *  - a walk in an interrupt of user mode starts at the interrupted IP; a
 *    walk in an interrupt, of user mode or of an entry that is no system
 *    call (a page fault), is the stack later delivered for the request
 *    the same interrupt made (the walk kept for the entry answers it, or
 *    the deferred walk finds the same);
 *  - no callback of a client runs once its cancel returned;
 *  - a kernel entry is walked at most once (a kprobe on the walker);
 *  - no kernel address appears in a delivered stack.
 *
 * Interface, in /sys/kernel/debug/unwind_torture/:
 *
 *   control  write "start SECONDS" to begin a run, "report" to print the
 *            summary to the console (reading returns the same summary,
 *            with "state=idle|running|done")
 *   work     written by a worker from the innermost frame of its chain:
 *            "DEPTH IP0 RA_LEAF RA_REC RA_TOP CTX" (see tt_sig_match());
 *            the write makes requests from the contexts in CTX and
 *            fails with -ECANCELED once the run is over
 *
 * Contexts: the checks run in the context of the task they concern (its
 * system call, an interrupt or NMI on top of it, its callbacks, its exit),
 * so the per-task records need no locks, only care about nesting.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <asm/irq_regs.h>
#ifdef CONFIG_X86_LOCAL_APIC
#include <linux/nmi.h>
#include <asm/apic.h>
#endif
#include "unwind_test_ctx.h"
#include "../walk.h"

#define TT_MAX_CLIENTS	8
#define TT_SLOTS	256
#define TT_PROBES	32
#define TT_MAX_DEPTH	64

static unsigned int nclients = 4;
module_param(nclients, uint, 0444);
MODULE_PARM_DESC(nclients, "clients registered at once (1-8)");

static unsigned int tick_us = 400;
module_param(tick_us, uint, 0644);
MODULE_PARM_DESC(tick_us, "period of the per-CPU request hrtimers");

static unsigned int nmi_every = 3;
module_param(nmi_every, uint, 0644);
MODULE_PARM_DESC(nmi_every, "one hrtimer tick in N also raises a self-NMI (0: never)");

static unsigned int churn_ms = 15;
module_param(churn_ms, uint, 0644);
MODULE_PARM_DESC(churn_ms, "cancel and register a client again every N ms (0: never)");

static unsigned int nofault_every = 2;
module_param(nofault_every, uint, 0644);
MODULE_PARM_DESC(nofault_every, "one interrupt request in N also walks in the interrupt (0: never)");

static unsigned int cb_sleep = 32;
module_param(cb_sleep, uint, 0644);
MODULE_PARM_DESC(cb_sleep, "one callback in N sleeps a little (0: never)");

enum tt_ctx { TT_TASK, TT_IRQ, TT_NMI, TT_NR_CTX };

/* Bits of the CTX field of a work write. */
#define TT_WORK_TASK	BIT(0)
#define TT_WORK_IRQ	BIT(1)
#define TT_WORK_NMI	BIT(2)
#define TT_WORK_SLEEP	BIT(3)

/*
 * The counters the summary prints. The first group describes the load,
 * the second are errors: any nonzero one fails the run.
 */
enum tt_stat {
	TT_REQ_TASK, TT_REQ_IRQ, TT_REQ_NMI,
	TT_QUEUED, TT_ALREADY_QUEUED, TT_ALREADY_DONE,
	TT_REFUSED_EAGAIN, TT_REFUSED_ESRCH, TT_REFUSED_EINVAL,
	TT_CALLBACKS, TT_VERIFIED, TT_WALKS, TT_DROPPED, TT_CANCELS,
	TT_WORKS, TT_EXITS, TT_CANCELS_IN_CALLBACK,
	TT_EXT_NMIS, TT_REQ_NMI_USER, TT_USER_IP_STACKS, TT_KILLED_SHORT,
	TT_REQ_IRQ_USER, TT_NOFAULT_USER, TT_NOFAULT_KERNEL, TT_NOFAULT_DEFER,
	TT_NOFAULT_CHECKED,
	TT_ERRORS_FIRST,
	TT_LOST = TT_ERRORS_FIRST, TT_DUPLICATES, TT_WRONG_STACKS, TT_UNTRACKED,
	TT_SPURIOUS, TT_DOUBLE_WALKS, TT_KERNEL_ADDRS, TT_AFTER_CANCEL,
	TT_CANCEL_RACED, TT_BAD_RESULT, TT_REFUSED_OTHER, TT_REFUSED_FROM_USER,
	TT_NOFAULT_WRONG,
	TT_NR_STATS,
};

static const char * const tt_stat_name[TT_NR_STATS] = {
	"requests_task", "requests_irq", "requests_nmi",
	"queued", "already_queued", "already_done",
	"refused_eagain", "refused_esrch", "refused_einval",
	"callbacks", "verified_stacks", "walks", "dropped_by_cancel",
	"cancels", "works", "exits", "cancels_in_callback",
	"external_nmis", "requests_nmi_user", "user_ip_stacks",
	"killed_short", "requests_irq_user", "nofault_user_walks",
	"nofault_kernel_walks", "nofault_deferred", "nofault_checked",
	"lost", "duplicates", "wrong_stacks", "untracked_callbacks",
	"spurious", "double_walks", "kernel_addresses", "after_cancel",
	"cancel_raced", "bad_results", "refused_other", "refused_from_user",
	"nofault_wrong",
};

static atomic_long_t tt_stats[TT_NR_STATS];

static void tt_inc(enum tt_stat s)
{
	atomic_long_inc(&tt_stats[s]);
}

/*
 * A client's life: LIVE (requests made), CANCELLING (requests still made,
 * unwind_deferred_cancel() running), DEAD (no requests; a callback now is
 * an error). Requesters hold @users while they request and record, so that
 * the churn thread, once DEAD and @users drained, knows no record of the
 * old generation is still being written; @gen then moves on and records
 * of older generations are requests the cancel dropped.
 */
enum tt_client_state { TT_LIVE, TT_CANCELLING, TT_DEAD };

struct tt_client {
	struct unwind_work	work;
	int			state;
	unsigned int		gen;
	atomic_t		users;
	atomic_t		in_callback;
};

static struct tt_client tt_clients[TT_MAX_CLIENTS];

/* The stack a work write was made from: see tt_sig_match(). */
struct tt_sig {
	unsigned int	depth;
	unsigned long	ip0;
	unsigned long	ra_leaf;
	unsigned long	ra_rec;
	unsigned long	ra_top;
};

/* Where a request was made, for the report of a lost one. */
enum tt_where {
	TT_FROM_USER = 1,	/* interrupt or NMI that hit user mode */
	TT_FROM_KERNEL,		/* interrupt or NMI that hit the kernel */
	TT_FROM_WORK_IRQ,	/* the work write's hrtimer */
	TT_FROM_WORK,		/* the work write itself */
	TT_FROM_WORK_SLEEP,	/* the work write, after sleeping */
};

/*
 * One client's requests of one task: the cookie waiting for its callback
 * and the last one answered, with the client generation they belong to.
 */
struct tt_cstate {
	unsigned int	gen;
	u64		pending;
	u64		done;
	u8		ctx;
	u8		where;
};

/*
 * A tracked task. Claimed by the task's first work write, released by its
 * exit (a kprobe on exit_files(), which do_exit() calls after the last
 * callbacks ran). Everything but @task is touched only in the context of
 * the task itself: its system calls and callbacks, and interrupts and NMIs
 * on top of them. @busy is set while the task-level code updates the
 * records; an interrupt or NMI that finds it set makes no request, so that
 * it never sees a record half written.
 */
struct tt_slot {
	struct task_struct	*task;
	int			busy;
	bool			in_work;
	struct tt_sig		sig;
	u64			sig_cookie;
	u64			walk_cookie;
	u64			uip_cookie;
	unsigned long		uip;
	/* A walk in an interrupt, and the request it made with it. */
	u64			nf_cookie;
	unsigned int		nf_nr;
	unsigned long		nf_ips[TT_MAX_DEPTH];
	struct tt_cstate	c[TT_MAX_CLIENTS];
};

static struct tt_slot tt_slots[TT_SLOTS];

enum tt_run { TT_IDLE, TT_RUNNING, TT_DONE };
static int tt_run_state;
static u64 tt_start_ns, tt_end_ns, tt_stop_ns;
static DEFINE_MUTEX(tt_control_lock);
static struct task_struct *tt_churn_thread;
static DEFINE_PER_CPU(struct hrtimer, tt_tick);
static DEFINE_PER_CPU(unsigned int, tt_tick_count);
static DEFINE_PER_CPU(int, tt_nmi_armed);
static DEFINE_PER_CPU(int, tt_nmi_seen);

static struct tt_slot *tt_slot_find(struct task_struct *task)
{
	unsigned int h = task->pid, i;

	for (i = 0; i < TT_PROBES; i++) {
		struct tt_slot *s = &tt_slots[(h + i) % TT_SLOTS];

		if (READ_ONCE(s->task) == task)
			return s;
	}
	return NULL;
}

static struct tt_slot *tt_slot_claim(void)
{
	unsigned int h = current->pid, i;

	for (i = 0; i < TT_PROBES; i++) {
		struct tt_slot *s = &tt_slots[(h + i) % TT_SLOTS];

		if (!cmpxchg(&s->task, NULL, current))
			return s;
	}
	return NULL;
}

static bool tt_user_task(void)
{
	return current->mm && !(current->flags & (PF_KTHREAD | PF_EXITING));
}

/*
 * Requests of the previous kernel entries must all have been answered
 * before the task came back: a pending cookie of a client that stayed
 * live all along is a lost request. One of a generation since cancelled
 * was dropped by the cancel, as its contract allows.
 */
static void tt_settle(struct tt_slot *s, bool exiting)
{
	u64 entry = READ_ONCE(current->unwind_info.cookie);
	int c;

	for (c = 0; c < nclients; c++) {
		struct tt_client *cl = &tt_clients[c];
		struct tt_cstate *cs = &s->c[c];
		unsigned int gen;
		int state;

		/*
		 * A request of this entry, made by an interrupt before the
		 * work write got here, is still to be answered.
		 */
		if (!cs->pending || (!exiting && cs->pending == entry))
			continue;
		/*
		 * State first: the churn thread moves the generation on before
		 * it makes the client live again, so a live client of the
		 * request's generation was not cancelled since the request.
		 * The acquire pairs with the release of LIVE in tt_churn().
		 */
		state = smp_load_acquire(&cl->state);
		gen = READ_ONCE(cl->gen);
		if (state == TT_LIVE && cs->gen == gen) {
			tt_inc(TT_LOST);
			pr_err("lost: pid %d client %d cookie %#llx ctx %d where %d%s\n",
			       current->pid, c, cs->pending, cs->ctx, cs->where,
			       exiting ? " at exit" : "");
		} else {
			/* Dropped by a cancel, as its contract allows. */
			tt_inc(TT_DROPPED);
		}
		cs->pending = 0;
	}
}

/* Record the answer of the core to one request of client @c. */
static void tt_bad(int c, int ret, u64 cookie, struct tt_cstate *cs, int ctx)
{
	tt_inc(TT_BAD_RESULT);
	pr_err_ratelimited("bad result: pid %d client %d ctx %d ret %d cookie %#llx pending %#llx done %#llx task cookie %#llx state %#lx\n",
			   current->pid, c, ctx, ret, cookie, cs->pending, cs->done,
			   current->unwind_info.cookie,
			   atomic_long_read(&current->unwind_info.state));
}

static void tt_account(struct tt_slot *s, int c, unsigned int gen, int ret,
		       u64 cookie, bool bind, int ctx, enum tt_where where)
{
	struct tt_cstate *cs = &s->c[c];

	switch (ret) {
	case -EAGAIN:
		/*
		 * An interrupt or NMI that hit user mode is the task's next
		 * entry, or the only kernel code before it: never too late.
		 */
		tt_inc(where == TT_FROM_USER ? TT_REFUSED_FROM_USER :
		       TT_REFUSED_EAGAIN);
		return;
	case -ESRCH:
		tt_inc(TT_REFUSED_ESRCH);
		return;
	case -EINVAL:
		/* Only a client being cancelled may refuse so. */
		tt_inc(READ_ONCE(tt_clients[c].state) == TT_LIVE ?
		       TT_REFUSED_OTHER : TT_REFUSED_EINVAL);
		return;
	default:
		if (ret < 0) {
			tt_inc(TT_REFUSED_OTHER);
			return;
		}
	}
	if (!cookie)
		tt_inc(TT_BAD_RESULT);
	if (cs->gen != gen) {
		if (cs->pending)
			tt_inc(TT_DROPPED);
		cs->gen = gen;
		cs->pending = 0;
		cs->done = 0;
	}
	switch (ret) {
	case UNWIND_QUEUED:
		tt_inc(TT_QUEUED);
		if (cs->pending) {
			/* A second callback, or the first one lost. */
			if (cs->pending == cookie)
				tt_bad(c, ret, cookie, cs, ctx);
			else
				tt_inc(TT_LOST);
		}
		cs->pending = cookie;
		cs->ctx = ctx;
		cs->where = where;
		break;
	case UNWIND_ALREADY_QUEUED:
		tt_inc(TT_ALREADY_QUEUED);
		if (cs->pending != cookie)
			tt_bad(c, ret, cookie, cs, ctx);
		break;
	case UNWIND_ALREADY_DONE:
		tt_inc(TT_ALREADY_DONE);
		/*
		 * The pass took the request but may not have called this
		 * client yet (it walks, or calls another client first).
		 */
		if (cs->done != cookie && cs->pending != cookie)
			tt_bad(c, ret, cookie, cs, ctx);
		break;
	default:
		tt_bad(c, ret, cookie, cs, ctx);
	}
	/* The entry is the work write whose stack the slot knows. */
	if (bind)
		s->sig_cookie = cookie;
}

/*
 * Requests for the current task from the clients in @mask. @uip, if not
 * zero, is the user IP an interrupt or NMI interrupted: the stack
 * delivered for the requests' cookie must start there.
 */
static u64 tt_request(struct tt_slot *s, enum tt_ctx ctx, unsigned int mask,
		      bool bind, enum tt_where where, unsigned long uip)
{
	u64 cookie, accepted = 0;
	int c, ret;

	s->busy++;
	barrier();
	for (c = 0; c < nclients; c++) {
		struct tt_client *cl = &tt_clients[c];
		unsigned int gen;

		if (!(mask & BIT(c)))
			continue;
		atomic_inc(&cl->users);
		/* Pairs with smp_mb() in tt_churn(): it sees us, or we see DEAD. */
		smp_mb__after_atomic();
		if (READ_ONCE(cl->state) != TT_DEAD) {
			gen = READ_ONCE(cl->gen);
			ret = unwind_deferred_request(&cl->work, &cookie);
			tt_inc(TT_REQ_TASK + ctx);
			if (ctx == TT_NMI && where == TT_FROM_USER)
				tt_inc(TT_REQ_NMI_USER);
			if (ctx == TT_IRQ && where == TT_FROM_USER)
				tt_inc(TT_REQ_IRQ_USER);
			tt_account(s, c, gen, ret, cookie, bind, ctx, where);
			if (ret >= 0)
				accepted = cookie;
		}
		/* The record is written before tt_churn() sees us gone. */
		smp_mb__before_atomic();
		atomic_dec(&cl->users);
	}
	/*
	 * The callbacks of this cookie all run before the task is back in
	 * user mode, where the next interrupt or NMI could write these again.
	 */
	if (uip && accepted) {
		s->uip_cookie = accepted;
		s->uip = uip;
	}
	barrier();
	s->busy--;
	return accepted;
}

/*
 * Random numbers for any context: get_random_u32() takes a local lock,
 * which NMIs must not. A per-CPU xorshift is enough to pick clients; an
 * NMI racing with the context it interrupted only repeats a number.
 */
static DEFINE_PER_CPU(u32, tt_rand_state);

static u32 tt_rand(void)
{
	u32 x = this_cpu_read(tt_rand_state) ?: 0x9e3779b9;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	this_cpu_write(tt_rand_state, x);
	return x;
}

static unsigned int tt_random_mask(void)
{
	return 1 + tt_rand() % (BIT(nclients) - 1);
}

/* Buffers of the walks in interrupts: an NMI may interrupt an hrtimer's. */
static DEFINE_PER_CPU(unsigned long [TT_NR_CTX][TT_MAX_DEPTH], tt_nf_buf);

/*
 * Walk the task in the interrupt, as perf does for a sample, and check
 * what can be checked at once: a walk of user mode starts at the
 * interrupted IP, and holds no kernel address. Return: the entries, or
 * a negative error (-EAGAIN: the walk is left to the deferred one).
 */
static int tt_nofault_walk(struct tt_slot *s, enum tt_ctx ctx,
			   struct pt_regs *regs, bool user,
			   struct unwind_stacktrace *trace)
{
	unsigned int i;
	int n;

	trace->entries = (*this_cpu_ptr(&tt_nf_buf))[ctx];
	n = unwind_user_nofault(regs, trace, TT_MAX_DEPTH);
	if (n < 0) {
		tt_inc(TT_NOFAULT_DEFER);
		return n;
	}
	tt_inc(user ? TT_NOFAULT_USER : TT_NOFAULT_KERNEL);
	/*
	 * Kept for its entry (the cache is the entry's): the entry is
	 * walked, and a deferred walk of it would be a second one.
	 */
	if (READ_ONCE(current->unwind_info.cache_cookie) &&
	    READ_ONCE(current->unwind_info.cache_cookie) ==
	    READ_ONCE(current->unwind_info.cookie))
		WRITE_ONCE(s->walk_cookie, current->unwind_info.cache_cookie);
	if (user && (!n || trace->entries[0] != instruction_pointer(regs))) {
		tt_inc(TT_NOFAULT_WRONG);
		pr_err_ratelimited("nofault walk: pid %d starts at %#lx, not the interrupted %#lx\n",
				   current->pid, n ? trace->entries[0] : 0,
				   instruction_pointer(regs));
	}
	for (i = 0; i < n; i++) {
		if (trace->entries[i] >= TASK_SIZE_MAX) {
			tt_inc(TT_KERNEL_ADDRS);
			break;
		}
	}
	return n;
}

/* Keep the walk for the check of the stack delivered for @cookie. */
static void tt_nofault_keep(struct tt_slot *s, u64 cookie,
			    const struct unwind_stacktrace *trace)
{
	s->busy++;
	barrier();
	s->nf_nr = trace->nr;
	memcpy(s->nf_ips, trace->entries, trace->nr * sizeof(*s->nf_ips));
	s->nf_cookie = cookie;
	barrier();
	s->busy--;
}

/*
 * The stack delivered for the cookie of a walk in an interrupt: the same
 * stack (its first TT_MAX_DEPTH entries, if the walk filled them). A
 * worker being killed may get a deferred walk that ends early.
 */
static void tt_nofault_check(struct tt_slot *s,
			     const struct unwind_stacktrace *trace)
{
	unsigned int n = min_t(unsigned int, trace->nr, TT_MAX_DEPTH);
	bool same;

	tt_inc(TT_NOFAULT_CHECKED);
	same = s->nf_nr == n &&
	       !memcmp(s->nf_ips, trace->entries, n * sizeof(*s->nf_ips));
	if (same)
		return;
	if (fatal_signal_pending(current) && n < s->nf_nr &&
	    !memcmp(s->nf_ips, trace->entries, n * sizeof(*s->nf_ips))) {
		tt_inc(TT_KILLED_SHORT);
		return;
	}
	tt_inc(TT_NOFAULT_WRONG);
	pr_err_ratelimited("nofault walk: pid %d cookie %#llx walked %u entries, delivered %u\n",
			   current->pid, s->nf_cookie, s->nf_nr, trace->nr);
}

/*
 * A request from an interrupt or NMI that hit a tracked task. If it came
 * from the kernel while the task was in its work write, the entry is the
 * write's, whose stack the slot knows. Some also walk the task in the
 * interrupt first, which an interrupt of user mode or of an entry that is
 * no system call (a worker's page fault) may do.
 */
static void tt_request_remote(enum tt_ctx ctx, struct pt_regs *regs)
{
	bool user = regs && user_mode(regs);
	struct unwind_stacktrace trace;
	struct tt_slot *s;
	int walked = -1;
	u64 cookie;

	if (!tt_user_task())
		return;
	s = tt_slot_find(current);
	if (!s || READ_ONCE(s->busy))
		return;
	if (regs && nofault_every && !(tt_rand() % nofault_every))
		walked = tt_nofault_walk(s, ctx, regs, user, &trace);
	cookie = tt_request(s, ctx, tt_random_mask(),
			    !user && READ_ONCE(s->in_work),
			    user ? TT_FROM_USER : TT_FROM_KERNEL,
			    user ? instruction_pointer(regs) : 0);
	if (walked >= 0 && cookie)
		tt_nofault_keep(s, cookie, &trace);
}

#ifdef CONFIG_X86_LOCAL_APIC
static int tt_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(tt_nmi_armed))
		return NMI_DONE;
	this_cpu_write(tt_nmi_armed, 0);
	tt_request_remote(TT_NMI, regs);
	this_cpu_inc(tt_nmi_seen);
	return NMI_HANDLED;
}

/*
 * NMIs injected from outside the guest (harness/vm-run --nmi), which land
 * wherever the CPU is, user mode included: no self-NMI can interrupt user
 * mode. Claimed while a run goes on, tracked task or not.
 */
static int tt_ext_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (READ_ONCE(tt_run_state) != TT_RUNNING)
		return NMI_DONE;
	tt_inc(TT_EXT_NMIS);
	tt_request_remote(TT_NMI, regs);
	return NMI_HANDLED;
}

static bool tt_raise_nmi(void)
{
	this_cpu_write(tt_nmi_armed, 1);
	apic->send_IPI_self(NMI_VECTOR);
	return true;
}
#else
static bool tt_raise_nmi(void)
{
	return false;
}
#endif

static enum hrtimer_restart tt_tick_fn(struct hrtimer *t)
{
	if (READ_ONCE(tt_run_state) != TT_RUNNING)
		return HRTIMER_NORESTART;
	tt_request_remote(TT_IRQ, get_irq_regs());
	if (nmi_every && !(this_cpu_inc_return(tt_tick_count) % nmi_every))
		tt_raise_nmi();
	hrtimer_forward_now(t, ns_to_ktime((u64)max(tick_us, 50U) * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void tt_tick_start(void *unused)
{
	hrtimer_start(this_cpu_ptr(&tt_tick), ns_to_ktime(tick_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Does @trace hold the stack of a work write made through the worker's
 * chain? The worker's tt_chain() calls rec(DEPTH), which recurses down to
 * rec(0), which makes the system call through ut_syscall(): the syscall
 * IP, the return into rec(0), DEPTH returns into rec(), then the return
 * into tt_chain().
 */
static bool tt_sig_match(const struct tt_sig *sig,
			 const struct unwind_stacktrace *trace)
{
	unsigned int i;

	if (trace->nr < sig->depth + 3)
		return false;
	if (trace->entries[0] != sig->ip0 || trace->entries[1] != sig->ra_leaf)
		return false;
	for (i = 0; i < sig->depth; i++) {
		if (trace->entries[2 + i] != sig->ra_rec)
			return false;
	}
	return trace->entries[2 + sig->depth] == sig->ra_top;
}

/*
 * A stack that ends early, but only there: what a task being killed gets
 * when its walk needs a page or a file read (SFrame tables of objects its
 * mm has not met yet), which fail once SIGKILL is pending.
 */
static bool tt_sig_prefix(const struct tt_sig *sig,
			  const struct unwind_stacktrace *trace)
{
	unsigned int i;

	for (i = 0; i < trace->nr && i < sig->depth + 3; i++) {
		unsigned long want = i == 0 ? sig->ip0 :
				     i == 1 ? sig->ra_leaf :
				     i < sig->depth + 2 ? sig->ra_rec : sig->ra_top;

		if (trace->entries[i] != want)
			return false;
	}
	return trace->nr > 0;
}

static void tt_callback(struct unwind_work *work,
			struct unwind_stacktrace *trace, u64 cookie)
{
	struct tt_client *cl = container_of(work, struct tt_client, work);
	int c = cl - tt_clients;
	struct tt_cstate *cs;
	struct tt_slot *s;
	unsigned int i;

	atomic_inc(&cl->in_callback);
	tt_inc(TT_CALLBACKS);
	/* Pairs with the release of DEAD-then-LIVE ordering in tt_churn(). */
	if (smp_load_acquire(&cl->state) == TT_DEAD)
		tt_inc(TT_AFTER_CANCEL);
	for (i = 0; i < trace->nr; i++) {
		if (trace->entries[i] >= TASK_SIZE_MAX) {
			tt_inc(TT_KERNEL_ADDRS);
			break;
		}
	}

	s = tt_slot_find(current);
	if (!s) {
		tt_inc(TT_UNTRACKED);
		goto out;
	}
	s->busy++;
	barrier();
	cs = &s->c[c];
	if (cs->gen != READ_ONCE(cl->gen)) {
		/* Asked in a generation cancelled since. */
		tt_inc(TT_AFTER_CANCEL);
	} else if (cookie && cs->pending == cookie) {
		/* Done first: an NMI now finds the request answered. */
		cs->done = cookie;
		barrier();
		cs->pending = 0;
	} else if (cookie && cs->done == cookie) {
		tt_inc(TT_DUPLICATES);
	} else {
		tt_inc(TT_SPURIOUS);
		pr_err_ratelimited("spurious: pid %d client %d cookie %#llx pending %#llx done %#llx\n",
				   current->pid, c, cookie, cs->pending, cs->done);
	}
	if (cookie && cookie == s->uip_cookie) {
		tt_inc(TT_USER_IP_STACKS);
		if (!trace->nr || trace->entries[0] != s->uip) {
			tt_inc(TT_WRONG_STACKS);
			pr_err("wrong stack: pid %d cookie %#llx starts at %#lx, not the interrupted %#lx\n",
			       current->pid, cookie,
			       trace->nr ? trace->entries[0] : 0, s->uip);
		}
	}
	if (cookie && cookie == s->nf_cookie)
		tt_nofault_check(s, trace);
	if (cookie && cookie == s->sig_cookie) {
		bool right = tt_sig_match(&s->sig, trace);

		tt_inc(TT_VERIFIED);
		if (!right && fatal_signal_pending(current) &&
		    tt_sig_prefix(&s->sig, trace)) {
			tt_inc(TT_KILLED_SHORT);
		} else if (!right) {
			tt_inc(TT_WRONG_STACKS);
			pr_err("wrong stack: pid %d cookie %#llx nr %u depth %u\n",
			       current->pid, cookie, trace->nr, s->sig.depth);
		}
	}
	barrier();
	s->busy--;
out:
	/* Give the churn thread a chance to cancel a running client. */
	if (cb_sleep && !get_random_u32_below(cb_sleep))
		usleep_range(50, 200);
	atomic_dec(&cl->in_callback);
}

/*
 * At most one walk per kernel entry: the entry's cookie identifies it.
 * Walks in interrupts are counted by tt_nofault_walk(): one that is not
 * kept for an entry belongs to none (an NMI in user mode may not join),
 * and one that is marks the entry walked.
 */
static int tt_walk_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct unwind_user_state *state =
		(struct unwind_user_state *)regs_get_kernel_argument(regs, 0);
	u64 cookie = READ_ONCE(current->unwind_info.cookie);
	struct tt_slot *s = tt_slot_find(current);

	if (!s || state->pos.nofault)
		return 0;
	tt_inc(TT_WALKS);
	if (cookie && cookie == s->walk_cookie)
		tt_inc(TT_DOUBLE_WALKS);
	s->walk_cookie = cookie;
	return 0;
}

static struct kprobe tt_walk_probe = {
	.symbol_name	= "unwind_user_walk",
	.pre_handler	= tt_walk_pre,
};

/* A tracked task is gone: its requests must all have been answered. */
static int tt_exit_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct task_struct *task;
	struct tt_slot *s;

	/* copy_process() also calls exit_files(), for a child that failed. */
	task = (struct task_struct *)regs_get_kernel_argument(regs, 0);
	if (task != current)
		return 0;
	s = tt_slot_find(task);
	if (!s)
		return 0;
	s->busy++;
	tt_settle(s, true);
	tt_inc(TT_EXITS);
	memset(&s->sig, 0, sizeof(*s) - offsetof(struct tt_slot, sig));
	s->in_work = false;
	s->busy = 0;
	/* Pairs with the cmpxchg() that claims the slot. */
	smp_store_release(&s->task, NULL);
	return 0;
}

static struct kprobe tt_exit_probe = {
	.symbol_name	= "exit_files",
	.pre_handler	= tt_exit_pre,
};

/* Spin in the kernel, on this CPU, until @seen moved or a second passed. */
static void tt_wait(int *seen, int old)
{
	u64 end = ktime_get_ns() + NSEC_PER_SEC;

	while (READ_ONCE(*seen) == old && ktime_get_ns() < end)
		cpu_relax();
}

/*
 * The work write waiting, on this CPU, for its hrtimer's request: the
 * run (unwind_test_ctx.h, which the test client uses too) and the slot
 * of the task it waits on top of. Both are used with preemption off.
 */
static DEFINE_PER_CPU(struct unwind_test_ctx, tt_work_ctx);
static DEFINE_PER_CPU(struct tt_slot *, tt_work_slot);

static enum hrtimer_restart tt_work_timer_fn(struct hrtimer *t)
{
	struct unwind_test_ctx *c = this_cpu_ptr(&tt_work_ctx);
	struct tt_slot *s = this_cpu_read(tt_work_slot);

	if (!unwind_test_ctx_mine(c))
		return HRTIMER_NORESTART;
	if (!READ_ONCE(s->busy))
		tt_request(s, TT_IRQ, tt_random_mask(), true, TT_FROM_WORK_IRQ,
			   0);
	unwind_test_ctx_done(c);
	return HRTIMER_NORESTART;
}

/* Requests in the work write, from the contexts the worker asked for. */
static void tt_work(struct tt_slot *s, unsigned int ctx)
{
	if (ctx & TT_WORK_TASK) {
		guard(preempt)();
		tt_request(s, TT_TASK, tt_random_mask(), true, TT_FROM_WORK, 0);
	}
	if (ctx & TT_WORK_IRQ) {
		guard(preempt)();
		this_cpu_write(tt_work_slot, s);
		unwind_test_ctx_run(this_cpu_ptr(&tt_work_ctx), false,
				    tt_work_timer_fn);
	}
	if (ctx & TT_WORK_NMI) {
		guard(preempt)();
		int seen = this_cpu_read(tt_nmi_seen);

		if (tt_raise_nmi())
			tt_wait(this_cpu_ptr(&tt_nmi_seen), seen);
	}
	/* Sleep within the entry: the task may move to another CPU. */
	if (ctx & TT_WORK_SLEEP) {
		usleep_range(20, 200);
		guard(preempt)();
		tt_request(s, TT_TASK, tt_random_mask(), true,
			   TT_FROM_WORK_SLEEP, 0);
	}
}

static ssize_t tt_work_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct tt_sig sig;
	unsigned int ctx;
	struct tt_slot *s;
	char buf[128];

	if (READ_ONCE(tt_run_state) != TT_RUNNING ||
	    ktime_get_ns() > READ_ONCE(tt_end_ns))
		return -ECANCELED;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %lx %lx %lx %lx %x", &sig.depth, &sig.ip0,
		   &sig.ra_leaf, &sig.ra_rec, &sig.ra_top, &ctx) != 6 ||
	    sig.depth > TT_MAX_DEPTH)
		return -EINVAL;

	s = tt_slot_find(current);
	if (!s)
		s = tt_slot_claim();
	if (!s)
		return -ENOSPC;
	tt_inc(TT_WORKS);

	s->busy++;
	barrier();
	tt_settle(s, false);
	s->sig = sig;
	s->sig_cookie = 0;
	barrier();
	s->busy--;
	WRITE_ONCE(s->in_work, true);
	tt_work(s, ctx);
	WRITE_ONCE(s->in_work, false);
	return len;
}

/*
 * The churn thread: cancels a client while requests and callbacks run,
 * checks that no callback is still running when the cancel returned, and
 * registers it again under a new generation.
 */
static int tt_churn(void *unused)
{
	while (!kthread_should_stop()) {
		struct tt_client *cl;

		if (!churn_ms || READ_ONCE(tt_run_state) != TT_RUNNING) {
			msleep(20);
			continue;
		}
		msleep(churn_ms);
		cl = &tt_clients[get_random_u32_below(nclients)];
		/* Requests go on while the cancel runs: release for readers. */
		smp_store_release(&cl->state, TT_CANCELLING);
		/* The cancel must wait for this callback: counted as exercised. */
		if (atomic_read(&cl->in_callback))
			tt_inc(TT_CANCELS_IN_CALLBACK);
		unwind_deferred_cancel(&cl->work);
		WRITE_ONCE(cl->state, TT_DEAD);
		/* Orders the store above before the loads of the counters. */
		smp_mb();
		if (atomic_read(&cl->in_callback))
			tt_inc(TT_CANCEL_RACED);
		/* No record of the old generation is still being written. */
		while (atomic_read(&cl->users))
			cpu_relax();
		WRITE_ONCE(cl->gen, cl->gen + 1);
		tt_inc(TT_CANCELS);
		if (unwind_deferred_init(&cl->work, tt_callback)) {
			pr_err("cannot register client %td again\n", cl - tt_clients);
			continue;
		}
		/* The new generation is visible before the client is live. */
		smp_store_release(&cl->state, TT_LIVE);
	}
	return 0;
}

static void tt_stop(void)
{
	int cpu;

	if (tt_run_state != TT_RUNNING)
		return;
	WRITE_ONCE(tt_run_state, TT_DONE);
	for_each_online_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&tt_tick, cpu));
	tt_stop_ns = ktime_get_ns();
}

static unsigned long tt_errors(void)
{
	unsigned long sum = 0;
	int i;

	for (i = TT_ERRORS_FIRST; i < TT_NR_STATS; i++)
		sum += atomic_long_read(&tt_stats[i]);
	return sum;
}

static int tt_format(char *buf, size_t cap)
{
	static const char * const state[] = { "idle", "running", "done" };
	u64 end = tt_run_state == TT_DONE ? tt_stop_ns : ktime_get_ns();
	u64 ms = tt_run_state == TT_IDLE ? 0 : (end - tt_start_ns) / NSEC_PER_MSEC;
	unsigned long req = 0;
	int i, len;

	for (i = TT_REQ_TASK; i <= TT_REQ_NMI; i++)
		req += atomic_long_read(&tt_stats[i]);
	len = scnprintf(buf, cap, "state=%s\nduration_ms=%llu\nrequests=%lu\nrequests_per_s=%llu\n",
			state[tt_run_state], ms, req,
			ms ? (u64)req * MSEC_PER_SEC / ms : 0);
	for (i = 0; i < TT_NR_STATS; i++)
		len += scnprintf(buf + len, cap - len, "%s=%ld\n",
				 tt_stat_name[i], atomic_long_read(&tt_stats[i]));
	len += scnprintf(buf + len, cap - len, "errors=%lu\n", tt_errors());
	return len;
}

static void tt_report(void)
{
	char *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	char *line, *p;

	if (!buf)
		return;
	tt_format(buf, PAGE_SIZE);
	p = buf;
	while ((line = strsep(&p, "\n")) && *line)
		pr_info("%s\n", line);
	if (tt_errors())
		pr_err("FAIL: %lu errors\n", tt_errors());
	else
		pr_info("PASS\n");
	kfree(buf);
}

static ssize_t tt_control_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	unsigned int secs, i;
	char buf[32];

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	guard(mutex)(&tt_control_lock);
	if (sscanf(buf, "start %u", &secs) == 1) {
		if (tt_run_state == TT_RUNNING || !secs)
			return -EBUSY;
		for (i = 0; i < TT_NR_STATS; i++)
			atomic_long_set(&tt_stats[i], 0);
		tt_start_ns = ktime_get_ns();
		WRITE_ONCE(tt_end_ns, tt_start_ns + (u64)secs * NSEC_PER_SEC);
		WRITE_ONCE(tt_run_state, TT_RUNNING);
		on_each_cpu(tt_tick_start, NULL, 1);
		pr_info("start: %u s, %u clients, tick %u us, nmi 1/%u, churn %u ms\n",
			secs, nclients, tick_us, nmi_every, churn_ms);
		return len;
	}
	if (!strncmp(buf, "report", 6)) {
		tt_stop();
		tt_report();
		return len;
	}
	return -EINVAL;
}

static ssize_t tt_control_read(struct file *file, char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	char *buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	ssize_t ret;

	if (!buf)
		return -ENOMEM;
	scoped_guard(mutex, &tt_control_lock) {
		if (tt_run_state == TT_RUNNING && ktime_get_ns() > tt_end_ns)
			tt_stop();
		ret = tt_format(buf, PAGE_SIZE);
	}
	ret = simple_read_from_buffer(ubuf, len, ppos, buf, ret);
	kfree(buf);
	return ret;
}

static const struct file_operations tt_control_fops = {
	.write	= tt_control_write,
	.read	= tt_control_read,
};

static const struct file_operations tt_work_fops = {
	.write	= tt_work_write,
};

static struct dentry *tt_dir;

static void tt_cleanup(void)
{
	int i;

	debugfs_remove_recursive(tt_dir);
	if (tt_churn_thread)
		kthread_stop(tt_churn_thread);
	scoped_guard(mutex, &tt_control_lock)
		tt_stop();
	unregister_kprobe(&tt_exit_probe);
	unregister_kprobe(&tt_walk_probe);
#ifdef CONFIG_X86_LOCAL_APIC
	unregister_nmi_handler(NMI_UNKNOWN, "unwind_torture");
	unregister_nmi_handler(NMI_LOCAL, "unwind_torture");
#endif
	for (i = 0; i < nclients; i++)
		unwind_deferred_cancel(&tt_clients[i].work);
}

static int __init tt_init(void)
{
	int cpu, i, ret;

	if (!nclients || nclients > TT_MAX_CLIENTS)
		return -EINVAL;
	for_each_possible_cpu(cpu) {
		per_cpu(tt_rand_state, cpu) = get_random_u32() | 1;
		hrtimer_init(per_cpu_ptr(&tt_tick, cpu), CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		per_cpu_ptr(&tt_tick, cpu)->function = tt_tick_fn;
	}
	for (i = 0; i < nclients; i++) {
		ret = unwind_deferred_init(&tt_clients[i].work, tt_callback);
		if (ret) {
			while (i--)
				unwind_deferred_cancel(&tt_clients[i].work);
			return ret;
		}
	}
#ifdef CONFIG_X86_LOCAL_APIC
	ret = register_nmi_handler(NMI_LOCAL, tt_nmi_handler, 0, "unwind_torture");
	if (!ret)
		ret = register_nmi_handler(NMI_UNKNOWN, tt_ext_nmi_handler, 0,
					   "unwind_torture");
	if (ret)
		goto fail;
#endif
	ret = register_kprobe(&tt_walk_probe);
	if (ret)
		goto fail;
	ret = register_kprobe(&tt_exit_probe);
	if (ret)
		goto fail;
	tt_churn_thread = kthread_run(tt_churn, NULL, "unwind_torture");
	if (IS_ERR(tt_churn_thread)) {
		ret = PTR_ERR(tt_churn_thread);
		tt_churn_thread = NULL;
		goto fail;
	}
	tt_dir = debugfs_create_dir("unwind_torture", NULL);
	debugfs_create_file("control", 0600, tt_dir, NULL, &tt_control_fops);
	debugfs_create_file("work", 0200, tt_dir, NULL, &tt_work_fops);
	return 0;
fail:
	tt_cleanup();
	return ret;
}

static void __exit tt_exit(void)
{
	tt_cleanup();
}

module_init(tt_init);
module_exit(tt_exit);
MODULE_DESCRIPTION("Torture test of deferred user stack unwinding");
MODULE_LICENSE("GPL");
