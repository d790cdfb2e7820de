// SPDX-License-Identifier: GPL-2.0
/*
 * A program reading its own stack, three ways, on the same chain: the
 * kernel's walker through prctl(PR_USER_STACK_READ) (user_backtrace() of
 * the selftests' example header), glibc's backtrace() and libunwind's
 * unw_backtrace(). For each depth, recurse to it and time ITERATIONS calls
 * of each, ROUNDS times; print one line per round and method:
 *
 *   depth round method ns_per_call frames
 *
 *   selfstack ROUNDS ITERATIONS DEPTH...
 *
 * make bench builds it three ways: with frame pointers (selfstack), without
 * them but with SFrame tables and .eh_frame (selfstack-sframe), and with
 * SFrame tables but no .eh_frame (selfstack-noeh), where the DWARF
 * unwinders are blind.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "../tools/testing/selftests/unwind/user_backtrace.h"

#define noinline __attribute__((noinline))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_FRAMES	USER_BACKTRACE_MAX

static int rounds, iterations;
static void *frames[MAX_FRAMES];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int by_kernel(void)
{
	return user_backtrace(frames, MAX_FRAMES);
}

static int by_glibc(void)
{
	return backtrace(frames, MAX_FRAMES);
}

static int by_libunwind(void)
{
	return unw_backtrace(frames, MAX_FRAMES);
}

static const struct {
	const char *name;
	int (*fn)(void);
} methods[] = {
	{ "kernel", by_kernel },
	{ "backtrace", by_glibc },
	{ "libunwind", by_libunwind },
};

static void measure(int depth)
{
	for (int r = 0; r < rounds; r++) {
		for (unsigned int m = 0; m < ARRAY_SIZE(methods); m++) {
			long long t0;
			int n = 0;

			/* Warm: backtrace() loads libgcc_s on its first call. */
			methods[m].fn();
			t0 = now_ns();
			for (int i = 0; i < iterations; i++)
				n = methods[m].fn();
			printf("%d %d %s %.1f %d\n", depth, r, methods[m].name,
			       (double)(now_ns() - t0) / iterations, n);
		}
	}
}

/* One frame per level; the addition keeps it off a tail call. */
static noinline int recurse(int depth, int target)
{
	if (depth >= target) {
		measure(target);
		return 0;
	}
	return recurse(depth + 1, target) + 1;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s ROUNDS ITERATIONS DEPTH...\n", argv[0]);
		return 2;
	}
	rounds = atoi(argv[1]);
	iterations = atoi(argv[2]);
	for (int i = 3; i < argc; i++)
		recurse(0, atoi(argv[i]));
	return 0;
}
