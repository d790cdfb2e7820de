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

enum { OP_CALL, OP_RET, OP_READ, OP_WORK, OP_LOOP };

struct vm_fn {
	const char		*name;
	const unsigned char	*code;
};

/* OP_LOOP n: run the rest of the function n times (one loop per function). */
static const unsigned char code_main[] = { OP_CALL, 1, OP_CALL, 4, OP_RET };
static const unsigned char code_load[] = { OP_CALL, 2, OP_RET };
static const unsigned char code_parse[] = { OP_LOOP, 4, OP_CALL, 3, OP_RET };
static const unsigned char code_read_block[] = { OP_READ, OP_RET };
static const unsigned char code_compute[] = { OP_LOOP, 3, OP_WORK, OP_CALL, 5,
					      OP_RET };
static const unsigned char code_checksum[] = { OP_WORK, OP_READ, OP_RET };

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
#define VM_DEPTH	32
#define VM_FN_SIZE	0x100

struct vm_frame {
	int	fn;
	int	pc;
	int	loop_pc;
	int	loops;
};

static struct vm_frame vm_stack[VM_DEPTH];
/* Changed between ops only, with signal fences: the handler reads it. */
static int vm_depth;
static unsigned long vm_text;
static int zero_fd;
static char buf[1 << 16];
static unsigned long signals, reports;

static void vm_op_work(void)
{
	unsigned long h = 5381;

	for (int i = 0; i < 20000; i++)
		h = h * 33 + i;
	/* Keep the result, so that the loop is not optimised away. */
	__asm__ __volatile__("" : : "r" (h));
}

static void vm_run(int fn)
{
	int base = vm_depth;

	vm_stack[vm_depth] = (struct vm_frame){ .fn = fn };
	vm_depth = vm_depth + 1;
	while (vm_depth > base) {
		struct vm_frame *f = &vm_stack[vm_depth - 1];
		unsigned char op = vm_fns[f->fn].code[f->pc++];

		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		switch (op) {
		case OP_CALL:
			vm_stack[vm_depth] = (struct vm_frame){
				.fn = vm_fns[f->fn].code[f->pc++] };
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			vm_depth = vm_depth + 1;
			break;
		case OP_RET:
			if (f->loops > 1) {
				f->loops--;
				f->pc = f->loop_pc;
				break;
			}
			vm_depth = vm_depth - 1;
			break;
		case OP_LOOP:
			f->loops = vm_fns[f->fn].code[f->pc++];
			f->loop_pc = f->pc;
			break;
		case OP_READ:
			if (read(zero_fd, buf, sizeof(buf)) < 0)
				exit(1);
			break;
		case OP_WORK:
			vm_op_work();
			break;
		}
	}
}

/* Report the interpreted frames, innermost first, for the cookie. */
static void on_unwind(int sig __attribute__((unused)), siginfo_t *si,
		      void *uc __attribute__((unused)))
{
	uint64_t frames[VM_DEPTH];
	int n = 0;

	if (si->si_code != SI_UNWIND)
		return;
	signals++;
	for (int i = vm_depth - 1; i >= 0; i--)
		frames[n++] = vm_text + vm_stack[i].fn * VM_FN_SIZE +
			      vm_stack[i].pc;
	if (!prctl(PR_USER_STACK_REPORT, (unsigned long)si->si_value.sival_ptr,
		   frames, n, 0))
		reports++;
}

/* The interpreted functions' addresses, named for perf as a JIT does. */
static int vm_map_functions(void)
{
	char path[64];
	FILE *map;

	vm_text = (unsigned long)mmap(NULL, VM_FNS * VM_FN_SIZE,
				      PROT_READ | PROT_EXEC,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm_text == (unsigned long)MAP_FAILED)
		return -1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return -1;
	for (unsigned int i = 0; i < VM_FNS; i++)
		fprintf(map, "%lx %x vm:%s\n", vm_text + i * VM_FN_SIZE,
			VM_FN_SIZE, vm_fns[i].name);
	return fclose(map);
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
	if (zero_fd < 0 || vm_map_functions()) {
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
