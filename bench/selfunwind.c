// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of self-unwinding by signal, per kernel entry, against the kernel
 * walk alone.
 *
 * Each iteration is one getppid() system call, timed, median over rounds:
 *
 *   null    nothing traced
 *   defer   ftrace traces the call's entry event with a deferred user
 *           stack (option userstacktrace_delay): a request in the call,
 *           the walk on the way out, the stack written to the ring buffer
 *   signal  the same in a process that opted in (prctl(PR_USER_STACK_SIGNAL)):
 *           plus the signal, a handler that reports 8 interpreted frames
 *           (prctl(PR_USER_STACK_REPORT)), and the return from the handler
 *
 * defer - null is what the kernel's deferred walk costs an entry; signal -
 * defer is what the round trip through the runtime adds.
 *
 *   round MODE NS [SIGNALS REPORTS]
 *
 *   selfunwind ROUNDS ITERATIONS
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The kernel's si_code (asm-generic/siginfo.h), which <signal.h> lacks. */
#define SI_UNWIND		0x5557

#define TRACEFS		"/sys/kernel/tracing"
#define EVENT		TRACEFS "/events/syscalls/sys_enter_getppid"
#define FRAMES		8
#define DEPTH		16

static unsigned long signals, reports;

static void on_unwind(int sig __attribute__((unused)), siginfo_t *si,
		      void *uc __attribute__((unused)))
{
	/* What an interpreter would report: its call frames. */
	static const uint64_t frames[FRAMES] = {
		0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000, 0x7000, 0x8000,
	};

	if (si->si_code != SI_UNWIND)
		return;
	signals++;
	if (!prctl(PR_USER_STACK_REPORT, (unsigned long)si->si_value.sival_ptr,
		   frames, FRAMES, 0))
		reports++;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int put(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_TRUNC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static double timed(int iterations)
{
	long long start = now_ns();

	for (int i = 0; i < iterations; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - start) / iterations;
}

static int trace(int on)
{
	char filter[64];

	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	if (on && (put(EVENT "/filter", filter) ||
		   put(TRACEFS "/options/userstacktrace_delay", "1")))
		return -1;
	return put(EVENT "/enable", on ? "1" : "0");
}

static void __attribute__((noinline)) run(int depth, int rounds, int iterations)
{
	if (depth) {
		run(depth - 1, rounds, iterations);
		__asm__ volatile("" ::: "memory");
		return;
	}
	for (int r = 0; r < rounds; r++) {
		double ns;

		printf("%d null %.1f\n", r, timed(iterations));
		if (trace(1))
			exit(1);
		printf("%d defer %.1f\n", r, timed(iterations));

		signals = reports = 0;
		prctl(PR_USER_STACK_SIGNAL, SIGRTMIN + 1, 0, 0, 0);
		ns = timed(iterations);
		prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0);
		trace(0);
		printf("%d signal %.1f %lu %lu\n", r, ns, signals, reports);
	}
	put(TRACEFS "/options/userstacktrace_delay", "0");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_unwind,
				.sa_flags = SA_SIGINFO | SA_RESTART };

	if (argc != 3) {
		fprintf(stderr, "usage: %s ROUNDS ITERATIONS\n", argv[0]);
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGRTMIN + 1, &sa, NULL)) {
		perror("selfunwind");
		return 1;
	}
	run(DEPTH, atoi(argv[1]), atoi(argv[2]));
	return 0;
}
