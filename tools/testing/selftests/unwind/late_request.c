// SPDX-License-Identifier: GPL-2.0
/*
 * The program of the ftrace test late-request.tc: it makes the exit path
 * request a stack after the deferred unwinding work loop has run.
 *
 *   late_request ROUNDS
 *
 * It moves itself to CPU 0 and starts a child there that spins on
 * floating point, so that whenever this process gets the CPU back, its FPU
 * registers are reloaded on the way out of the kernel: the
 * x86_fpu_regs_activated tracepoint fires after the work loop. Each round
 * yields to the child from late_yield(), then calls getppid() from
 * late_getppid(), a new kernel entry with a stack of its own. It prints the
 * return address into each of the two callers (frame 1 of each call's user
 * stack; frame 0 is ut_syscall_ret):
 *
 *   yield ADDRESS
 *   getppid ADDRESS
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "unwind_helpers.h"

static unsigned long yield_ra, getppid_ra;

/* The Makefile's -fno-inline keeps each caller a frame of its own. */
static void late_yield(void)
{
	ut_syscall(SYS_sched_yield, 0, 0, 0);
	yield_ra = ut_leaf_ra;
}

static void late_getppid(void)
{
	ut_syscall(SYS_getppid, 0, 0, 0);
	getppid_ra = ut_leaf_ra;
}

/* Keeps the FPU registers of CPU 0 busy with this process's values. */
static void spin_fpu(void)
{
	double x = 1.0;

	for (;;) {
		x = x * 1.000001 + 0.5;
		/* Keep x live in an SSE register. */
		asm("" : "+x" (x));
	}
}

int main(int argc, char **argv)
{
	int rounds = argc == 2 ? atoi(argv[1]) : 0;
	cpu_set_t set;
	pid_t child;

	if (rounds <= 0) {
		fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		spin_fpu();
		_exit(0);
	}

	while (rounds--) {
		late_yield();
		late_getppid();
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("yield %#lx\ngetppid %#lx\n", yield_ra, getppid_ra);
	return 0;
}
