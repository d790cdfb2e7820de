/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records unwindprof's BPF programs send to user space through one ring
 * buffer. A single buffer keeps them in order: a task's samples are always
 * reserved before the stack of their entry, which is sent when the task
 * returns to user space.
 */
#ifndef __UNWINDPROF_H
#define __UNWINDPROF_H

#define UP_MAX_FRAMES	127
#define UP_COMM_LEN	16

enum up_record_type {
	UP_SAMPLE = 1,	/* struct up_sample */
	UP_STACK = 2,	/* struct up_stack, with nr frames */
};

/*
 * One perf event sample. kstack and ustack are ids in the stack maps, or a
 * negative errno of bpf_get_stackid(). In deferred mode, cookie is the
 * entry's (ustack then unused), or 0 when the user stack was walked in the
 * sample instead (the request was refused, or its entry already
 * answered). Samples of kernel threads (kthread) have no user stack.
 */
struct up_sample {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__s32 kstack;
	__s32 ustack;
	__s32 request;
	__u32 kthread;
	__u32 pad;
	__u64 cookie;
	char comm[UP_COMM_LEN];
};

/*
 * The user stack of one kernel entry, innermost frame first; its last
 * @guessed entries are marked (guessed, or resting on a convention).
 */
struct up_stack {
	__u32 type;
	__u32 pid;
	__u32 tid;
	__u32 nr;
	__u32 guessed;
	__u32 pad;
	__u64 cookie;
	__u64 ips[UP_MAX_FRAMES];
};

/* The counts map's entries. */
enum up_count {
	UP_SAMPLE_DROPPED,	/* ring buffer full: a sample lost */
	UP_STACK_DROPPED,	/* ring buffer full: an entry's stack lost */
	UP_REFUSED,		/* requests refused, walked in the sample */
	UP_STACKS,		/* stacks delivered by the kernel */
	UP_TRUNCATED,		/* stacks cut to UP_MAX_FRAMES */
	UP_NR_COUNTS
};

#define UP_STACK_HEADER	(sizeof(struct up_stack) - UP_MAX_FRAMES * sizeof(__u64))

#endif /* __UNWINDPROF_H */
