// SPDX-License-Identifier: GPL-2.0
/*
 * Driver of the in-kernel micro-benchmark (kernel/unwind/tests/unwind_bench.c).
 *
 * For each stack depth, recurse to it and, from there, write one command per
 * system call to /sys/kernel/debug/unwind_bench: "nmi" and "irq" time a
 * deferred request and perf's in-NMI frame-pointer walk of this stack from a
 * self-NMI and from an hrtimer interrupt, "walk" times the walker deferred
 * requests use. Under harness/vm-run --nmi it also spins in user mode at
 * that depth, on CPU 0, while the host injects NMIs ("nmi-user": each NMI
 * that interrupts the spin times a request, which must raise an interrupt
 * here, and perf's walk). Print the kernel's measurements, one per line:
 *
 *   depth round mode ret request_ns perf_ns perf_frames walk_ns walk_frames clock_ns
 *
 *   micro ROUNDS ITERATIONS DEPTH...
 *
 * "micro null ROUNDS ITERATIONS" times a null system call (getppid),
 * ITERATIONS * 100 of them at once, once per round:
 *
 *   0 round null ns_per_call
 *
 * It needs no unwind_bench file, so that it runs on a kernel built without
 * the series' CONFIG_UNWIND_USER too (make bench compares the two).
 *
 * "micro walk ROUNDS ITERATIONS DEPTH..." times the walker alone; make
 * bench runs it built without frame pointers and with an SFrame table
 * (micro-sframe), whose walk goes by the table. "walk-alt" does the same
 * with two functions recursing into each other, so that no frame has the
 * return address of the one below it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* ut_ask_for_nmis(), shared with the selftests that ask for NMIs. */
#include "../tools/testing/selftests/unwind/unwind_helpers.h"

#define noinline __attribute__((noinline))

#define BENCH_FILE "/sys/kernel/debug/unwind_bench"
/* Injected NMIs every this many ms, for this long per depth and round. */
#define NMI_INTERVAL_MS	"2"
#define NMI_SPIN_NS	600000000LL

static const char * const modes[] = { "nmi", "irq", "walk" };
static int fd, iterations, first_mode, alternate;
static const char *nmi_control;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void command(const char *cmd)
{
	if (write(fd, cmd, strlen(cmd)) < 0) {
		perror(cmd);
		exit(1);
	}
}

/* The leaf the injected NMIs interrupt: user code only, no system call. */
static noinline void spin_in_user_mode(void)
{
	long long end = now_ns() + NMI_SPIN_NS;
	unsigned long x = 0;

	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++)
			x += i;
		/* Keep the loop: the compiler must assume x is used. */
		asm volatile("" : : "r" (x));
	}
}

static void measure(void)
{
	for (int m = first_mode; m < 3; m++) {
		for (int i = 0; i < iterations; i++)
			command(modes[m]);
	}
	if (nmi_control) {
		int err;

		command("nmi-user");
		err = ut_ask_for_nmis(NMI_INTERVAL_MS);
		if (err) {
			fprintf(stderr, "%s: %s\n", nmi_control, strerror(-err));
			exit(1);
		}
		spin_in_user_mode();
		ut_stop_nmis();
		command("stop");
	}
}

static void null_syscalls(int round)
{
	long n = iterations * 100L;
	long long t0 = now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("0 %d null %.1f\n", round, (double)(now_ns() - t0) / n);
}

/* One frame-pointer frame per level; the addition keeps it off a tail call. */
static noinline int recurse(int depth)
{
	if (depth <= 0) {
		measure();
		return 0;
	}
	return recurse(depth - 1) + 1;
}

/*
 * The same depth in two functions calling each other: no frame has the
 * return address of the frame below it, so a walker cannot reuse the
 * lookup of the frame before ("walk-alt").
 */
static noinline int recurse_b(int depth);

static noinline int recurse_a(int depth)
{
	if (depth <= 0) {
		measure();
		return 0;
	}
	return recurse_b(depth - 1) + 1;
}

static noinline int recurse_b(int depth)
{
	if (depth <= 0) {
		measure();
		return 0;
	}
	return recurse_a(depth - 1) + 2;
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

	if (argc == 4 && !strcmp(argv[1], "null")) {
		rounds = atoi(argv[2]);
		iterations = atoi(argv[3]);
		for (int r = 0; r < rounds; r++)
			null_syscalls(r);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "walk") || !strcmp(argv[1], "walk-alt"))) {
		first_mode = 2;
		alternate = !strcmp(argv[1], "walk-alt");
		argc--;
		argv++;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: %s [walk] ROUNDS ITERATIONS DEPTH...\n"
			"       %s null ROUNDS ITERATIONS\n", argv[0], argv[0]);
		return 2;
	}
	rounds = atoi(argv[1]);
	iterations = atoi(argv[2]);
	fd = open(BENCH_FILE, O_WRONLY);
	if (fd < 0) {
		perror(BENCH_FILE);
		return 1;
	}
	nmi_control = first_mode ? NULL : getenv("VMRUN_NMI");
	if (nmi_control) {
		cpu_set_t cpus;

		/* The only CPU that takes NMIs from outside. */
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	/* Rounds outermost, so that drift over time hits every depth alike. */
	for (int r = 0; r < rounds; r++) {
		for (int a = 3; a < argc; a++) {
			int depth = atoi(argv[a]);

			/* main and the libc frames below it count too. */
			if (alternate)
				recurse_a(depth > 4 ? depth - 4 : 0);
			else
				recurse(depth > 4 ? depth - 4 : 0);
			dump(depth, r);
		}
	}
	return 0;
}
