// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads of the macro-benchmark, each a fixed amount of work done at the
 * end of a frame-pointer call chain of a given depth; each prints its own
 * elapsed time in nanoseconds, so that perf's start and finish do not count.
 *
 *   workload syscall DEPTH N   N read()s of 16 MiB from /dev/zero: kernel
 *                              time, a few milliseconds per system call, so
 *                              several samples fall in each
 *   workload user DEPTH N      N thousand rounds of arithmetic: user time
 *   workload threads DEPTH N   4 threads, each N/2 such reads and N*2000
 *                              rounds of arithmetic
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int depth;
static long count;
static unsigned long sink;	/* written atomically: keeps the work */

static void do_syscalls(long n)
{
	static __thread char buf[16 << 20];
	int fd = open("/dev/zero", O_RDONLY);

	for (long i = 0; i < n && fd >= 0; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

static void do_user(long n)
{
	unsigned long x = 1;

	for (long i = 0; i < n * 1000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	__atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

/* One frame per level; the addition keeps the call off a tail call. */
static __attribute__((noinline)) int chain(int level, void (*work)(long), long n)
{
	if (level <= 0) {
		work(n);
		return 0;
	}
	return chain(level - 1, work, n) + 1;
}

static void *thread_fn(void *arg)
{
	chain(depth, do_syscalls, count / 2);
	chain(depth, do_user, count * 2);
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t threads[4];

	if (argc != 4) {
		fprintf(stderr, "usage: %s syscall|user|threads DEPTH N\n", argv[0]);
		return 2;
	}
	depth = atoi(argv[2]);
	count = atol(argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!strcmp(argv[1], "syscall")) {
		chain(depth, do_syscalls, count);
	} else if (!strcmp(argv[1], "user")) {
		chain(depth, do_user, count);
	} else if (!strcmp(argv[1], "threads")) {
		for (int i = 0; i < 4; i++)
			pthread_create(&threads[i], NULL, thread_fn, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(threads[i], NULL);
	} else {
		fprintf(stderr, "unknown workload %s\n", argv[1]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elapsed_ns %lld\n", (t1.tv_sec - t0.tv_sec) * 1000000000LL +
	       (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
