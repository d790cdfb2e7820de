/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records the BPF programs of bpf_defer_test send to user space, in the
 * order they happen, through one ring buffer.
 */
#ifndef BPF_DEFER_H
#define BPF_DEFER_H

#define BD_MAX_FRAMES	128

/* Where a request was made: which program type asked. */
enum bd_source {
	BD_PERF_EVENT,
	BD_KPROBE,
	BD_TRACEPOINT,
	BD_TP_BTF,
	BD_FENTRY,
	BD_SYSCALL,
	BD_UPROBE,
	BD_UPROBE_SLEEPABLE,
	BD_DELIVERY,
	BD_NMI_KPROBE,
	BD_NR_SOURCES
};

enum bd_type {
	BD_REQUEST = 1,
	BD_STACK = 2,
	BD_GOT_STACK = 3,	/* struct bd_stack from bpf_get_stack() */
	BD_REPORT = 4,		/* struct bd_stack from unwind_user_report_tp */
};

/* A request: the kfunc's result and cookie, and the context it ran in. */
struct bd_request {
	__u32 type;
	__u32 tid;
	__u32 source;
	__s32 ret;
	__u64 cookie;
	__u32 in_nmi;
	__u32 user_mode;
};

/*
 * A stack delivered through the unwind_user_stack_tp tracepoint, or got
 * with bpf_get_stack(); guessed: how many of the last entries the kernel
 * guessed (tracepoint stacks; 0 for the others). For BD_REPORT, the frames
 * a runtime reported, and guessed holds the report's flags.
 */
struct bd_stack {
	__u32 type;
	__u32 tid;
	__u32 nr;
	__u32 guessed;
	__u64 cookie;
	__u64 ips[BD_MAX_FRAMES];
};

#ifdef __bpf__
/* The CPU's preempt_count(), for the programs to tell NMI context. */
extern const struct pcpu_hot pcpu_hot __ksym;
#endif

#endif /* BPF_DEFER_H */
