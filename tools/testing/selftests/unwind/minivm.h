/* SPDX-License-Identifier: GPL-2.0 */
/*
 * minivm: a small bytecode interpreter whose functions exist only as
 * bytecode, so that no walker of the native stack can name them: what a
 * runtime reporting its own frames by signal (PR_USER_STACK_SIGNAL,
 * PR_USER_STACK_REPORT) looks like. report_test and the demo
 * (demo/minivm.c) run their programs on it.
 *
 * A program defines vm_sys(), what OP_SYS does (a system call), and its
 * functions, an array of struct vm_fn that vm_load() installs. The
 * interpreted frames are reported as addresses in vm_text, a mapping that
 * is never run: function FN at bytecode offset PC is
 * vm_text + FN * VM_FN_SIZE + PC, named for perf by vm_map_text().
 */
#ifndef MINIVM_H
#define MINIVM_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * OP_CALL n calls function n; OP_RET returns; OP_SYS runs vm_sys();
 * OP_WORK spends user time; OP_LOOP n runs the rest of the function n
 * times (one loop per function).
 */
enum { OP_CALL, OP_RET, OP_SYS, OP_WORK, OP_LOOP };

struct vm_fn {
	const char		*name;
	const unsigned char	*code;
};

#define VM_DEPTH	64
#define VM_FN_SIZE	0x100

struct vm_frame {
	int	fn;
	int	pc;
	int	loop_pc;
	int	loops;
};

static void vm_sys(void);

static const struct vm_fn *vm_prog;
static unsigned int vm_nfns;
static struct vm_frame vm_stack[VM_DEPTH];
/* Changed between ops only, with signal fences: the handler reads it. */
static int vm_depth;
/* Where the interpreted functions "are": reserved, never executed. */
static unsigned long vm_text;

static inline void vm_load(const struct vm_fn *fns, unsigned int n)
{
	vm_prog = fns;
	vm_nfns = n;
}

static inline void vm_op_work(void)
{
	unsigned long h = 5381;

	for (int i = 0; i < 20000; i++)
		h = h * 33 + i;
	/* Keep the result, so that the loop is not optimised away. */
	__asm__ __volatile__("" : : "r" (h));
}

static inline void vm_run(int fn)
{
	int base = vm_depth;

	vm_stack[vm_depth] = (struct vm_frame){ .fn = fn };
	vm_depth = vm_depth + 1;
	while (vm_depth > base) {
		struct vm_frame *f = &vm_stack[vm_depth - 1];
		unsigned char op = vm_prog[f->fn].code[f->pc++];

		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		switch (op) {
		case OP_CALL:
			vm_stack[vm_depth] = (struct vm_frame){
				.fn = vm_prog[f->fn].code[f->pc++] };
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
			f->loops = vm_prog[f->fn].code[f->pc++];
			f->loop_pc = f->pc;
			break;
		case OP_SYS:
			vm_sys();
			break;
		case OP_WORK:
			vm_op_work();
			break;
		}
	}
}

/* The address a frame reports: its function's, plus its bytecode offset. */
static inline uint64_t vm_frame_addr(const struct vm_frame *f)
{
	return vm_text + f->fn * VM_FN_SIZE + f->pc;
}

/* The interpreted frames, innermost first (async-signal-safe). */
static inline int vm_frames(uint64_t *out)
{
	int n = 0;

	for (int i = vm_depth - 1; i >= 0; i--)
		out[n++] = vm_frame_addr(&vm_stack[i]);
	return n;
}

/*
 * Reserve vm_text, executable so that perf records the mapping, and name
 * its functions "vm:NAME" in /tmp/perf-PID.map, as a JIT does.
 */
static inline int vm_map_text(void)
{
	char path[64];
	FILE *map;

	vm_text = (unsigned long)mmap(NULL, vm_nfns * VM_FN_SIZE,
				      PROT_READ | PROT_EXEC,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm_text == (unsigned long)MAP_FAILED) {
		vm_text = 0;
		return -1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		return -1;
	for (unsigned int i = 0; i < vm_nfns; i++)
		fprintf(map, "%lx %x vm:%s\n", vm_text + i * VM_FN_SIZE,
			VM_FN_SIZE, vm_prog[i].name);
	return fclose(map);
}

#endif /* MINIVM_H */
