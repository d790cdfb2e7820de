// SPDX-License-Identifier: GPL-2.0
/*
 * The program the ftrace tests of deferred user stacks trace
 * (tools/testing/selftests/ftrace/test.d/unwind/). It makes one system
 * call at the end of the 60-frame chain of unwind_chain.h, then prints the
 * frames the kernel must record for it, innermost first, one per line:
 *
 *   frame INDEX ADDRESS FILE_OFFSET
 *
 * with the file offset of the address in this program's file, from
 * /proc/self/maps. Usage:
 *
 *   ftrace_chain getpriority WHICH WHO	getpriority(WHICH, WHO)
 *   ftrace_chain setaffinity CPU	move itself to CPU (from another one)
 *   ftrace_chain read			read one byte from standard input
 *   ftrace_chain kill			send itself SIGUSR1, which a handler
 *					takes at the system call's return
 *   ftrace_chain stop			send itself SIGSTOP (until SIGCONT)
 *   ftrace_chain fault			write to a read-only page: the
 *					SIGSEGV handler makes it writable
 *
 * Built with UNWIND_CHAIN_GUESS (ftrace_chain_guess: no frame pointers, no
 * SFrame), it first asks for guessed frames (PR_SET_USER_STACK_GUESS).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define UNWIND_CHAIN_NO_HARNESS
#include "unwind_chain.h"

/* The frames the chain's system call leaves, innermost first. */
static int chain_frames(unsigned long *ips)
{
	int i, n = 0;

	ips[n++] = (unsigned long)ut_syscall_ret;
	ips[n++] = ut_leaf_ra;
	ips[n++] = leaf_caller_ra;
	for (i = CHAIN_LEN - 1; i >= 0; i--)
		ips[n++] = chain_ra[i];
	return n;
}

/* The file offset of @ip in its mapping, -1 if it is in none. */
static long long file_offset(unsigned long ip)
{
	unsigned long start, end, pgoff;
	char line[512];
	long long off = -1;
	FILE *maps;

	maps = fopen("/proc/self/maps", "r");
	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (ip >= start && ip < end) {
			off = ip - start + pgoff;
			break;
		}
	}
	fclose(maps);
	return off;
}

static int print_usage(const char *prog)
{
	fprintf(stderr, "usage: %s getpriority WHICH WHO | setaffinity CPU | read\n"
		"       %s kill | stop | fault\n", prog, prog);
	return 2;
}

static void on_usr1(int sig)
{
}

static char *fault_page;

static void on_segv(int sig)
{
	if (mprotect(fault_page, 4096, PROT_READ | PROT_WRITE))
		_exit(3);
}

int main(int argc, char **argv)
{
	unsigned long ips[CHAIN_LEN + 3];
	cpu_set_t set;
	char byte;
	int i, n;

	if (argc < 2)
		return print_usage(argv[0]);
#ifdef UNWIND_CHAIN_GUESS
	if (prctl(0x55534753 /* PR_SET_USER_STACK_GUESS */, 1, 0, 0, 0)) {
		perror("PR_SET_USER_STACK_GUESS");
		return 1;
	}
#endif
	if (!strcmp(argv[1], "getpriority") && argc == 4) {
		chain_run(SYS_getpriority, atol(argv[2]), atol(argv[3]), 0);
	} else if (!strcmp(argv[1], "setaffinity") && argc == 3) {
		int cpu = atoi(argv[2]);

		/* Start on another CPU, so the call itself moves the task. */
		CPU_ZERO(&set);
		for (i = 0; i < CPU_SETSIZE; i++)
			if (i != cpu)
				CPU_SET(i, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		/* Each frame of the chain adds one to the result. */
		if (chain_run(SYS_sched_setaffinity, 0, sizeof(set),
			      (long)&set) != CHAIN_LEN) {
			fprintf(stderr, "cannot move to CPU %d\n", cpu);
			return 1;
		}
	} else if (!strcmp(argv[1], "read") && argc == 2) {
		chain_run(SYS_read, 0, (long)&byte, 1);
	} else if (!strcmp(argv[1], "kill") && argc == 2) {
		signal(SIGUSR1, on_usr1);
		chain_run(SYS_kill, getpid(), SIGUSR1, 0);
	} else if (!strcmp(argv[1], "stop") && argc == 2) {
		chain_run(SYS_kill, getpid(), SIGSTOP, 0);
	} else if (!strcmp(argv[1], "fault") && argc == 2) {
		fault_page = mmap(NULL, 4096, PROT_READ,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fault_page == MAP_FAILED)
			return 1;
		signal(SIGSEGV, on_segv);
		/* A store the compiler keeps: it faults once. */
		__atomic_store_n(fault_page, 1, __ATOMIC_RELAXED);
	} else {
		return print_usage(argv[0]);
	}

	n = chain_frames(ips);
	for (i = 0; i < n; i++)
		printf("frame %d %#lx %#llx\n", i, ips[i], file_offset(ips[i]));
	return 0;
}
