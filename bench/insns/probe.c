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
 *
 * The unwind_bench phases run only where the file exists (not on a kernel
 * built without CONFIG_UNWIND_USER), and not with "null". Static and not position independent,
 * so that probe_mark() has one address, which "nm" tells the host.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_FILE "/sys/kernel/debug/unwind_bench"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NULL_OPS 20000
#define BENCH_OPS 500

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

/* unwind_bench keeps its samples until read: empty it, outside the marks. */
static void bench_drain(void)
{
	char buf[65536];
	int fd = open(BENCH_FILE, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void phase(const char *name, void (*ops)(int), int n)
{
	probe_mark();
	ops(n);
	probe_mark();
	printf("PHASE %s %d\n", name, n);
	fflush(stdout);
}

struct bench_run {
	int rounds;
	int depth;
};

/* Frames of its own, so that the walks below see @depth of them. */
__attribute__((noinline)) static void at_depth(int left, struct bench_run *r)
{
	static const char * const cmds[] = {
		"walk", "nmi-none", "nmi-request", "nmi-perf"
	};
	char name[32];

	if (left > 0) {
		at_depth(left - 1, r);
		asm volatile("" ::: "memory");
		return;
	}
	for (int i = 0; i < r->rounds; i++) {
		for (size_t c = 0; c < ARRAY_SIZE(cmds); c++) {
			bench_cmd = cmds[c];
			snprintf(name, sizeof(name), "%s-%d", cmds[c], r->depth);
			phase(name, bench_ops, BENCH_OPS);
			bench_drain();
		}
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	static const int depths[] = { 8, 64 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	/* Warm the caches and the TCG translations up first. */
	null_ops(NULL_OPS);
	for (int i = 0; i < rounds; i++)
		phase("null", null_ops, NULL_OPS);

	if (argc > 2 && !strcmp(argv[2], "null"))
		return 0;
	bench_fd = open(BENCH_FILE, O_WRONLY);
	if (bench_fd < 0)
		return 0;
	for (size_t d = 0; d < ARRAY_SIZE(depths); d++) {
		struct bench_run r = { rounds, depths[d] };

		/* The frames below main's: the probe's own reach 8 or 64. */
		at_depth(depths[d] - 4, &r);
	}
	return 0;
}
