// SPDX-License-Identifier: GPL-2.0
/*
 * Driver of the in-kernel micro-benchmark (kernel/unwind/tests/unwind_bench.c).
 *
 * For each stack depth, recurse to it and, from there, write one command per
 * system call to /sys/kernel/debug/unwind_bench: "nmi" and "irq" time a
 * deferred request and perf's in-NMI frame-pointer walk of this stack from a
 * self-NMI and from an hrtimer interrupt, "walk" times the walker deferred
 * requests use. Print the kernel's measurements, one per line:
 *
 *   depth round mode ret request_ns perf_ns perf_frames walk_ns walk_frames clock_ns
 *
 *   micro ROUNDS ITERATIONS DEPTH...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_FILE "/sys/kernel/debug/unwind_bench"

static const char * const modes[] = { "nmi", "irq", "walk" };
static int fd, iterations;

static void measure(void)
{
	for (int m = 0; m < 3; m++) {
		for (int i = 0; i < iterations; i++) {
			if (write(fd, modes[m], strlen(modes[m])) < 0) {
				perror(BENCH_FILE);
				exit(1);
			}
		}
	}
}

/* One frame-pointer frame per level; the addition keeps it off a tail call. */
static __attribute__((noinline)) int recurse(int depth)
{
	if (depth <= 0) {
		measure();
		return 0;
	}
	return recurse(depth - 1) + 1;
}

static void dump(int depth, int round)
{
	char line[256];
	FILE *f = fopen(BENCH_FILE, "r");

	if (!f) {
		perror(BENCH_FILE);
		exit(1);
	}
	while (fgets(line, sizeof(line), f))
		printf("%d %d %s", depth, round, line);
	fclose(f);
}

int main(int argc, char **argv)
{
	int rounds;

	if (argc < 4) {
		fprintf(stderr, "usage: %s ROUNDS ITERATIONS DEPTH...\n", argv[0]);
		return 2;
	}
	rounds = atoi(argv[1]);
	iterations = atoi(argv[2]);
	fd = open(BENCH_FILE, O_WRONLY);
	if (fd < 0) {
		perror(BENCH_FILE);
		return 1;
	}
	/* Rounds outermost, so that drift over time hits every depth alike. */
	for (int r = 0; r < rounds; r++) {
		for (int a = 3; a < argc; a++) {
			int depth = atoi(argv[a]);

			/* main and the libc frames below it count too. */
			recurse(depth > 4 ? depth - 4 : 0);
			dump(depth, r);
		}
	}
	return 0;
}
