// SPDX-License-Identifier: GPL-2.0
/*
 * minivm: a small bytecode interpreter that reports its own frames.
 *
 * Its functions (main, load, parse, read_block, compute, checksum) exist
 * only as bytecode: no walker of the native stack can name them, which
 * shows only the interpreter's C loop. It opts in to self-unwinding by
 * signal (prctl(PR_USER_STACK_SIGNAL)): when a profiler's deferred request
 * takes its user stack, the kernel also signals it with the entry's
 * cookie, and its handler reports the interpreted call stack
 * (prctl(PR_USER_STACK_REPORT)). The reported addresses are in an executable
 * anonymous mapping that is never run, and /tmp/perf-PID.map names them,
 * as a JIT's are named.
 *
 *   minivm [SECONDS]    (default 3)
 *
 * With -s it also prints, at the end, how many signals it got and how many
 * reports the kernel accepted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* The kernel's si_code (asm-generic/siginfo.h), which <signal.h> lacks. */
#define SI_UNWIND		0x5557

#include "../tools/testing/selftests/unwind/minivm.h"

/* The program (the interpreter is minivm.h, shared with report_test). */
static const unsigned char code_main[] = { OP_CALL, 1, OP_CALL, 4, OP_RET };
static const unsigned char code_load[] = { OP_CALL, 2, OP_RET };
static const unsigned char code_parse[] = { OP_LOOP, 4, OP_CALL, 3, OP_RET };
static const unsigned char code_read_block[] = { OP_SYS, OP_RET };
static const unsigned char code_compute[] = { OP_LOOP, 3, OP_WORK, OP_CALL, 5,
					      OP_RET };
static const unsigned char code_checksum[] = { OP_WORK, OP_SYS, OP_RET };

static const struct vm_fn vm_fns[] = {
	{ "main", code_main },
	{ "load", code_load },
	{ "parse", code_parse },
	{ "read_block", code_read_block },
	{ "compute", code_compute },
	{ "checksum", code_checksum },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define VM_FNS		ARRAY_SIZE(vm_fns)

static int zero_fd;
static char buf[1 << 16];
static unsigned long signals, reports;

/* OP_SYS: a read of /dev/zero, the system call the samples land in. */
static void vm_sys(void)
{
	if (read(zero_fd, buf, sizeof(buf)) < 0)
		exit(1);
}

/* Report the interpreted frames, innermost first, for the cookie. */
static void on_unwind(int sig __attribute__((unused)), siginfo_t *si,
		      void *uc __attribute__((unused)))
{
	uint64_t frames[VM_DEPTH];
	int n;

	if (si->si_code != SI_UNWIND)
		return;
	signals++;
	n = vm_frames(frames);
	if (!prctl(PR_USER_STACK_REPORT, (unsigned long)si->si_value.sival_ptr,
		   frames, n, 0))
		reports++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_unwind,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	int stats = argc > 1 && !strcmp(argv[1], "-s");
	double seconds = argc > 1 + stats ? atof(argv[1 + stats]) : 3;
	int sig = SIGRTMIN + 1;
	double end;

	zero_fd = open("/dev/zero", O_RDONLY);
	vm_load(vm_fns, VM_FNS);
	if (zero_fd < 0 || vm_map_text()) {
		perror("minivm");
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) ||
	    prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0))
		fprintf(stderr, "minivm: no self-unwinding (%s): native stacks only\n",
			strerror(errno));
	end = now() + seconds;
	while (now() < end)
		vm_run(0);
	if (stats)
		printf("minivm: %lu signals, %lu reports accepted\n", signals,
		       reports);
	return 0;
}
