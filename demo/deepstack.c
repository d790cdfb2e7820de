// SPDX-License-Identifier: GPL-2.0
/*
 * deepstack: the demo workload of `make run`.
 *
 * A user call chain 24 functions deep (demo_level_00 ... demo_level_23)
 * whose innermost function alternates between user work (a hash loop) and
 * system calls that spend time in the kernel (reading /dev/zero, which
 * clears the buffer in the kernel, and getppid()). A profile of it should
 * therefore show kernel frames and the whole user chain together.
 *
 *   deepstack [SECONDS]    (default 3)
 *
 * Built with frame pointers and without sibling-call optimisation so that
 * every level keeps its own frame.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int zero_fd;
static char buf[1 << 16];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long demo_user_work(void)
{
	unsigned long h = 1469598103934665603ul;

	for (int i = 0; i < 100000; i++)
		h = (h ^ i) * 1099511628211ul;
	return h;
}

__attribute__((noinline)) static unsigned long demo_kernel_work(void)
{
	unsigned long n = 0;

	for (int i = 0; i < 8; i++) {
		n += read(zero_fd, buf, sizeof(buf));
		n += getppid();
	}
	return n;
}

__attribute__((noinline)) static unsigned long demo_leaf(int round)
{
	return (round & 1) ? demo_user_work() : demo_kernel_work();
}

/* Each level calls the next and uses its result, so no call is a tail call. */
#define LEVEL(n, next)							\
	__attribute__((noinline)) static unsigned long demo_level_##n(int r) \
	{								\
		return next(r) + 1;					\
	}

LEVEL(23, demo_leaf)
LEVEL(22, demo_level_23) LEVEL(21, demo_level_22) LEVEL(20, demo_level_21)
LEVEL(19, demo_level_20) LEVEL(18, demo_level_19) LEVEL(17, demo_level_18)
LEVEL(16, demo_level_17) LEVEL(15, demo_level_16) LEVEL(14, demo_level_15)
LEVEL(13, demo_level_14) LEVEL(12, demo_level_13) LEVEL(11, demo_level_12)
LEVEL(10, demo_level_11) LEVEL(09, demo_level_10) LEVEL(08, demo_level_09)
LEVEL(07, demo_level_08) LEVEL(06, demo_level_07) LEVEL(05, demo_level_06)
LEVEL(04, demo_level_05) LEVEL(03, demo_level_04) LEVEL(02, demo_level_03)
LEVEL(01, demo_level_02) LEVEL(00, demo_level_01)

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	double end = now() + seconds;
	int round = 0;

	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		perror("deepstack: /dev/zero");
		return 1;
	}
	while (now() < end)
		sink += demo_level_00(round++);
	printf("deepstack: %d rounds through 24 levels in %.1fs\n", round, seconds);
	return 0;
}
