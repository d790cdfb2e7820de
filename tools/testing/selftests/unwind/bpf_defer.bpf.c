// SPDX-License-Identifier: GPL-2.0
/*
 * BPF programs of bpf_defer_test: one requester per program type that may
 * call bpf_unwind_deferred_request(), each sending the kfunc's result and
 * cookie, and the receiver on unwind_user_stack_tp, sending each stack it
 * is given. All of them ignore every process but the test's. The test
 * loads the requesters it needs (autoload is off for the others).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bpf_defer.h"

char LICENSE[] SEC("license") = "GPL";

/* preempt_count() bits of NMI context (include/linux/preempt.h). */
#define BD_NMI_MASK	(0xfU << 20)

extern int bpf_unwind_deferred_request(__u64 *cookie) __ksym;

__u32 target_tgid;
/* The system call the syscall tracepoint programs ask in (getppid). */
__u64 target_syscall;
__u64 dropped;
__u64 walks;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

static bool is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/* A record in the ring buffer, or NULL (counted in dropped). */
static __always_inline void *reserve(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec)
		__sync_fetch_and_add(&dropped, 1);
	return rec;
}

static __u32 in_nmi(void)
{
	const struct pcpu_hot *hot = bpf_this_cpu_ptr(&pcpu_hot);

	return !!(hot->preempt_count & BD_NMI_MASK);
}

static int ask(enum bd_source source, __u32 user_mode)
{
	struct bd_request *r;
	__u64 cookie = 0;
	int ret;

	if (!is_target())
		return 0;
	ret = bpf_unwind_deferred_request(&cookie);
	r = reserve(sizeof(*r));
	if (!r)
		return 0;
	r->type = BD_REQUEST;
	r->tid = (__u32)bpf_get_current_pid_tgid();
	r->source = source;
	r->ret = ret;
	r->cookie = cookie;
	r->in_nmi = in_nmi();
	r->user_mode = user_mode;
	bpf_ringbuf_submit(r, 0);
	return 0;
}

SEC("?perf_event")
int on_perf_event(struct bpf_perf_event_data *ctx)
{
	return ask(BD_PERF_EVENT, (ctx->regs.csx & 3) == 3);
}

SEC("?kprobe/__x64_sys_getppid")
int on_kprobe(struct pt_regs *regs)
{
	return ask(BD_KPROBE, 0);
}

/* Attached by the test to the test client's self-NMI handler. */
SEC("?kprobe")
int on_nmi_kprobe(struct pt_regs *regs)
{
	return ask(BD_NMI_KPROBE, 0);
}

SEC("?tracepoint/syscalls/sys_enter_getppid")
int on_tracepoint(void *ctx)
{
	return ask(BD_TRACEPOINT, 0);
}

SEC("?tp_btf/sys_enter")
int BPF_PROG(on_tp_btf, struct pt_regs *regs, long id)
{
	if (id != target_syscall)
		return 0;
	return ask(BD_TP_BTF, 0);
}

/* The system call wrappers have no BTF; their body does. */
SEC("?fentry/__do_sys_getppid")
int BPF_PROG(on_fentry)
{
	return ask(BD_FENTRY, 0);
}

SEC("?syscall")
int on_syscall(void *ctx)
{
	return ask(BD_SYSCALL, 0);
}

SEC("?uprobe")
int on_uprobe(struct pt_regs *regs)
{
	return ask(BD_UPROBE, 0);
}

/*
 * A sleepable uprobe asks, then walks in place with bpf_get_stack(): the
 * faultable walker serves both with one walk.
 */
SEC("?uprobe.s")
int on_uprobe_sleepable(struct pt_regs *regs)
{
	struct bd_stack *s;
	long n;

	ask(BD_UPROBE_SLEEPABLE, 0);
	if (!is_target())
		return 0;
	s = reserve(sizeof(*s));
	if (!s)
		return 0;
	s->type = BD_GOT_STACK;
	s->tid = (__u32)bpf_get_current_pid_tgid();
	s->guessed = 0;
	s->cookie = 0;
	n = bpf_get_stack(regs, s->ips, sizeof(s->ips), BPF_F_USER_STACK);
	s->nr = n < 0 ? 0 : n / sizeof(__u64);
	bpf_ringbuf_submit(s, 0);
	return 0;
}

/*
 * A sleepable LSM program on inode_setattr, which runs with the inode's
 * i_rwsem held, walks the task that changes it with bpf_get_task_stack().
 * Only lsm_tgid's calls count; lsm_ret is the helper's last result.
 */
__u32 lsm_tgid;
__u64 lsm_calls;
__s64 lsm_ret;
__u64 lsm_ips[BD_MAX_FRAMES];

SEC("?lsm.s/inode_setattr")
int BPF_PROG(on_setattr_sleepable, struct mnt_idmap *idmap,
	     struct dentry *dentry, struct iattr *attr)
{
	if ((bpf_get_current_pid_tgid() >> 32) != lsm_tgid)
		return 0;
	lsm_ret = bpf_get_task_stack(bpf_get_current_task_btf(), lsm_ips,
				     sizeof(lsm_ips), BPF_F_USER_STACK);
	lsm_calls++;
	return 0;
}

/* Counts the walks of the test's tasks: one per entry, however many ask. */
SEC("?kprobe/unwind_user_walk")
int on_walk(struct pt_regs *regs)
{
	if (is_target())
		__sync_fetch_and_add(&walks, 1);
	return 0;
}

/*
 * Send a stack the kernel delivered (native or reported) to user space;
 * @extra: the guessed count, or the report's flags.
 */
static __always_inline int send_stack(__u32 type, __u64 cookie,
				      const struct unwind_stacktrace *trace,
				      __u32 extra)
{
	struct bd_stack *s;
	__u32 nr;

	if (!is_target())
		return 0;
	s = reserve(sizeof(*s));
	if (!s)
		return 0;
	nr = trace->nr;
	if (nr > BD_MAX_FRAMES)
		nr = BD_MAX_FRAMES;
	s->type = type;
	s->tid = (__u32)bpf_get_current_pid_tgid();
	s->nr = trace->nr;
	s->guessed = extra;
	s->cookie = cookie;
	if (bpf_probe_read_kernel(s->ips, nr * sizeof(__u64), trace->entries))
		s->nr = 0;
	bpf_ringbuf_submit(s, 0);
	return 0;
}

/*
 * The count of guessed frames, as kernels that guess have it: a flavor of
 * the kernel's type, so that this builds against a vmlinux.h without the
 * field too, and reads it only where the running kernel's BTF has it.
 */
struct unwind_stacktrace___guessed {
	unsigned int guessed;
} __attribute__((preserve_access_index));

SEC("?tp_btf/unwind_user_stack_tp")
int BPF_PROG(on_stack, __u64 cookie, const struct unwind_stacktrace *trace)
{
	const struct unwind_stacktrace___guessed *g = (const void *)trace;

	return send_stack(BD_STACK, cookie, trace,
			  bpf_core_field_exists(g->guessed) ?
			  BPF_CORE_READ(g, guessed) : 0);
}

/*
 * Frames a runtime reported for itself (self-unwinding by signal): they
 * come the way native stacks do, on their own tracepoint.
 */
SEC("?tp_btf/unwind_user_report_tp")
int BPF_PROG(on_report, __u64 cookie, const struct unwind_stacktrace *trace,
	     unsigned int flags)
{
	return send_stack(BD_REPORT, cookie, trace, flags);
}

/* A second program on the tracepoint that asks from the delivery itself. */
SEC("?tp_btf/unwind_user_stack_tp")
int BPF_PROG(on_stack_asks, __u64 cookie, const struct unwind_stacktrace *trace)
{
	return ask(BD_DELIVERY, 0);
}
