// SPDX-License-Identifier: GPL-2.0
/*
 * The guest half of make bench-insns: kernel operations between calls of
 * probe_mark(), whose address the counting plugin (plugin.c) watches.
 *
 *   probe ROUNDS [null]
 *
 * Pinned to CPU 0, it runs each phase ROUNDS times as "mark, OPS
 * operations, mark", and after the second mark prints "PHASE NAME OPS",
 * so that the host pairs each two of the plugin's lines with a phase:
 *
 *   null            getppid(), the null system call
 *   walk-D          a "walk" write to unwind_bench at a stack D frames deep:
 *                   the deferred walker in the system call
 *   nmi-none-D      a write whose self-NMI does nothing
 *   nmi-request-D   a write whose self-NMI makes a deferred request: the
 *                   request, then the walk and the pass at the return
 *   nmi-perf-D      a write whose self-NMI runs perf_callchain_user()
 *   nmi-nofault-D   a write whose self-NMI runs unwind_user_nofault() on
 *                   its own registers: a system call, which the walk in
 *                   an interrupt leaves to the deferred walk (-EAGAIN)
 *                   after the checks every interrupt that asks pays, with
 *                   no process opted in to reports by signal since boot
 *
 *   probe ROUNDS asked (run after the first, in the same boot)
 *
 *   nmi-nofault-asked-D  nmi-nofault-D after the probe opted in to reports
 *                   by signal and out again (PR_USER_STACK_SIGNAL): from
 *                   then on the checks ask the features whether the task
 *                   wants the deferred pass
 *   codeframe-short  prctl(PR_USER_STACK_READ) through 16 frames of the
 *                   probe's own code, each a frame record whose way out
 *                   is one instruction: frames read from their code,
 *                   found to be records (after the first read, from the
 *                   task's copies)
 *   codeframe-hostile the same with ways out of 1100 instructions, more
 *                   than a reading decodes: no reading succeeds, none is
 *                   kept, each frame is stepped by its record and the
 *                   next one read again, as far as the walk's budget
 *
 *   probe ROUNDS sframe
 *
 *   selfread-D      prctl(PR_USER_STACK_READ) from D frames of C code, in
 *                   a leaf with CFI: the walk in the system call, by
 *                   whatever describes the build's frames (frame pointers
 *                   as built for make bench-insns; built without them and
 *                   with -Wa,--gsframe, or with a table given for the
 *                   file: bench/insns/run-sframe)
 *
 * The unwind_bench phases run only where the file exists (not on a kernel
 * built without CONFIG_UNWIND_USER), and not with "null". Static and not position independent,
 * so that probe_mark() has one address, which "nm" tells the host.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_FILE "/sys/kernel/debug/unwind_bench"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NULL_OPS 20000
#define BENCH_OPS 500
#define CODEFRAME_OPS 20
#define PR_USER_STACK_READ 0x55535452
#define PR_USER_STACK_SIGNAL 0x55535347

/*
 * codeframe_short(buf, size) and codeframe_hostile(buf, size): 16 frames,
 * then prctl(PR_USER_STACK_READ, buf, size, 0, 0) as a C library's wrapper
 * makes it. Each frame is a frame record, "push %rbp; mov %rsp, %rbp;
 * call; WAY; pop %rbp; ret", WAY being @way instructions that leave the
 * stack alone: where a reading fails, the walk steps the frame by its
 * record and reads the next one.
 */
long codeframe_short(unsigned long *buf, unsigned long size);
long codeframe_hostile(unsigned long *buf, unsigned long size);
#define STR_(x) #x
#define STR(x) STR_(x)
#define CF_FRAME(name, next, way)					\
	".globl " #name "\n" #name ":\n\t"				\
	"push %rbp\n\t"						\
	"mov %rsp, %rbp\n\t"						\
	"call " #next "\n\t"						\
	".rept " #way "\n\t"						\
	"add $1, %rcx\n\t"						\
	".endr\n\t"							\
	"pop %rbp\n\t"						\
	"ret\n"
#define CF_CHAIN(p, way)						\
	asm(".text\n"							\
	    CF_FRAME(p, p##1, way) CF_FRAME(p##1, p##2, way)		\
	    CF_FRAME(p##2, p##3, way) CF_FRAME(p##3, p##4, way)		\
	    CF_FRAME(p##4, p##5, way) CF_FRAME(p##5, p##6, way)		\
	    CF_FRAME(p##6, p##7, way) CF_FRAME(p##7, p##8, way)		\
	    CF_FRAME(p##8, p##9, way) CF_FRAME(p##9, p##10, way)		\
	    CF_FRAME(p##10, p##11, way) CF_FRAME(p##11, p##12, way)	\
	    CF_FRAME(p##12, p##13, way) CF_FRAME(p##13, p##14, way)	\
	    CF_FRAME(p##14, p##15, way) CF_FRAME(p##15, p##_sys, way)	\
	    #p "_sys:\n\t"						\
	    "mov %rsi, %rdx\n\t"					\
	    "mov %rdi, %rsi\n\t"					\
	    "mov $" STR(PR_USER_STACK_READ) ", %edi\n\t"		\
	    "xor %r10d, %r10d\n\t"					\
	    "xor %r8d, %r8d\n\t"					\
	    "mov $" STR(SYS_prctl) ", %eax\n\t"			\
	    "syscall\n\t"						\
	    "ret\n")
CF_CHAIN(codeframe_short, 1);
CF_CHAIN(codeframe_hostile, 1100);

__attribute__((noinline)) void probe_mark(void)
{
	asm volatile("" ::: "memory");
}

static int bench_fd = -1;
static const char *bench_cmd;

static void null_ops(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void bench_ops(int n)
{
	size_t len = strlen(bench_cmd);

	for (int i = 0; i < n; i++) {
		if (write(bench_fd, bench_cmd, len) != (ssize_t)len) {
			perror(bench_cmd);
			exit(1);
		}
	}
}

/*
 * unwind_bench keeps its samples until read: empty it, outside the marks.
 * A walk in the NMI must leave the system call to the deferred walk
 * (-EAGAIN, 11), or it measured something else: stop there.
 */
static void bench_drain(void)
{
	static char buf[1 << 20];
	char mode[32], *line;
	size_t have = 0;
	ssize_t n;
	int ret, fd = open(BENCH_FILE, O_RDONLY);

	if (fd < 0)
		return;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += n;
	close(fd);
	buf[have] = '\0';
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "%31s %d", mode, &ret) == 2 &&
		    !strcmp(mode, "nmi-nofault") && ret != -11) {
			fprintf(stderr, "nmi-nofault: %d, not -EAGAIN\n", ret);
			exit(1);
		}
	}
}

static void phase(const char *name, void (*ops)(int), int n)
{
	probe_mark();
	ops(n);
	probe_mark();
	printf("PHASE %s %d\n", name, n);
	fflush(stdout);
}

static long (*codeframe_read)(unsigned long *buf, unsigned long size);

/* The system call of selfread-D, a leaf that CFI describes in any build. */
long selfread_sys(unsigned long *buf, unsigned long size);
asm(".text\n"
	".globl selfread_sys\n"
	"selfread_sys:\n\t"
	".cfi_startproc\n\t"
	"mov %rsi, %rdx\n\t"
	"mov %rdi, %rsi\n\t"
	"mov $" STR(PR_USER_STACK_READ) ", %edi\n\t"
	"xor %r10d, %r10d\n\t"
	"xor %r8d, %r8d\n\t"
	"mov $" STR(SYS_prctl) ", %eax\n\t"
	"syscall\n\t"
	"ret\n\t"
	".cfi_endproc\n");

static void selfread_ops(int n)
{
	unsigned long buf[128];

	for (int i = 0; i < n; i++) {
		if (selfread_sys(buf, 128) < 1) {
			fprintf(stderr, "selfread: no stack\n");
			exit(1);
		}
	}
}

/* C frames down to @left = 0, then the phase. */
__attribute__((noinline)) static void selfread_at(int left, int rounds, int depth)
{
	char name[32];

	if (left > 0) {
		selfread_at(left - 1, rounds, depth);
		asm volatile("" ::: "memory");
		return;
	}
	snprintf(name, sizeof(name), "selfread-%d", depth);
	/* The first walk from here finds the tables and keeps its rows. */
	selfread_ops(CODEFRAME_OPS);
	for (int i = 0; i < rounds; i++)
		phase(name, selfread_ops, CODEFRAME_OPS);
}

static void codeframe_ops(int n)
{
	unsigned long buf[64];

	for (int i = 0; i < n; i++) {
		if (codeframe_read(buf, 64) < 1) {
			fprintf(stderr, "codeframe: no stack\n");
			exit(1);
		}
	}
}

struct bench_run {
	int rounds;
	int depth;
	const char * const *cmds;
	size_t ncmds;
	const char *suffix;
};

/* Frames of its own, so that the walks below see @depth of them. */
__attribute__((noinline)) static void at_depth(int left, struct bench_run *r)
{
	char name[48];

	if (left > 0) {
		at_depth(left - 1, r);
		asm volatile("" ::: "memory");
		return;
	}
	for (int i = 0; i < r->rounds; i++) {
		for (size_t c = 0; c < r->ncmds; c++) {
			bench_cmd = r->cmds[c];
			snprintf(name, sizeof(name), "%s%s-%d", r->cmds[c],
				 r->suffix, r->depth);
			phase(name, bench_ops, BENCH_OPS);
			bench_drain();
		}
	}
}

static void report_ignore(int sig __attribute__((unused)))
{
}

/* Opt in to reports by signal and out again, as a runtime would. */
static int opt_in_and_out(void)
{
	struct sigaction sa = { .sa_handler = report_ignore }, old;

	if (sigaction(SIGUSR2, &sa, &old) ||
	    syscall(SYS_prctl, PR_USER_STACK_SIGNAL, SIGUSR2, 0, 0, 0) ||
	    syscall(SYS_prctl, PR_USER_STACK_SIGNAL, 0, 0, 0, 0) ||
	    sigaction(SIGUSR2, &old, NULL)) {
		perror("PR_USER_STACK_SIGNAL");
		return -1;
	}
	return 0;
}

/*
 * probe ROUNDS asked: the nmi-nofault phases again, after an opt-in, in a
 * process of their own, so that the first run's frames stay as they are.
 */
static int asked_phases(int rounds)
{
	static const char * const asked[] = { "nmi-nofault" };
	static const int depths[] = { 8, 64 };

	bench_fd = open(BENCH_FILE, O_WRONLY);
	if (bench_fd < 0 || opt_in_and_out())
		return 0;
	for (size_t d = 0; d < ARRAY_SIZE(depths); d++) {
		struct bench_run r = { rounds, depths[d], asked,
				       ARRAY_SIZE(asked), "-asked" };

		at_depth(depths[d] - 4, &r);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char * const cmds[] = {
		"walk", "nmi-none", "nmi-request", "nmi-perf", "nmi-nofault"
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	static const int depths[] = { 8, 64 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	if (argc > 2 && !strcmp(argv[2], "asked"))
		return asked_phases(rounds);
	/* Warm the caches and the TCG translations up first. */
	null_ops(NULL_OPS);
	for (int i = 0; i < rounds; i++)
		phase("null", null_ops, NULL_OPS);

	if (argc > 2 && !strcmp(argv[2], "null"))
		return 0;
	if (argc > 2 && !strcmp(argv[2], "sframe")) {
		for (size_t d = 0; d < ARRAY_SIZE(depths); d++)
			selfread_at(depths[d], rounds, depths[d]);
		return 0;
	}
	/* Frames read from their code, where the kernel has the read. */
	codeframe_read = codeframe_short;
	if (codeframe_short((unsigned long [64]){ 0 }, 64) > 0) {
		for (int i = 0; i < rounds; i++) {
			codeframe_read = codeframe_short;
			phase("codeframe-short", codeframe_ops, CODEFRAME_OPS);
			codeframe_read = codeframe_hostile;
			phase("codeframe-hostile", codeframe_ops,
			      CODEFRAME_OPS);
		}
	}
	bench_fd = open(BENCH_FILE, O_WRONLY);
	if (bench_fd < 0)
		return 0;
	for (size_t d = 0; d < ARRAY_SIZE(depths); d++) {
		struct bench_run r = { rounds, depths[d], cmds,
				       ARRAY_SIZE(cmds), "" };

		/* The frames below main's: the probe's own reach 8 or 64. */
		at_depth(depths[d] - 4, &r);
	}
	return 0;
}
