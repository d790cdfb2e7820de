// SPDX-License-Identifier: GPL-2.0
/*
 * Frames read from their code: a system call made through a wrapper that
 * keeps no frame pointer, in a program built with them. Without the
 * reading, a frame-pointer walk from inside the wrapper skips the
 * function that called it. The stacks are read with
 * prctl(PR_USER_STACK_READ), itself a system call made through such a
 * wrapper: the C library's prctl(), or the wrappers below, shaped as the
 * C library's cancellable ones are (a frame of their own, %rbp used and
 * restored).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "unwind_chain.h"

#define ENTRIES	64

/* A reader of the stack: the entries into buf, their number or -errno. */
typedef long stack_reader(uint64_t *buf, unsigned long size);

/* The wrappers, in assembly below. */
stack_reader frame_read, rbp_read;
#define STR_(x)	#x
#define STR(x)	STR_(x)

/*
 * The arguments of prctl(PR_USER_STACK_READ, buf, size, 0, 0) from a
 * wrapper's (buf, size), and the system call's number.
 */
#define PRCTL_READ_ARGS							\
	"mov %rsi, %rdx\n\t"						\
	"mov %rdi, %rsi\n\t"						\
	"mov $" STR(PR_USER_STACK_READ) ", %edi\n\t"			\
	"xor %r10d, %r10d\n\t"					\
	"xor %r8d, %r8d\n\t"						\
	"mov $" STR(UT_SYS_PRCTL) ", %eax\n\t"

/*
 * long frame_read(buf, size): prctl(PR_USER_STACK_READ, buf, size, 0, 0)
 * with a 0x28-byte frame around the system call, as glibc's read() has
 * in a multithreaded process. Returns the result, or -errno.
 */
asm(".text\n"
	".globl frame_read\n"
	".type frame_read, @function\n"
	"frame_read:\n\t"
	"sub $0x28, %rsp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"add $0x28, %rsp\n\t"
	"ret\n"
	".size frame_read, .-frame_read\n");

/*
 * The same with %rbp saved, used for a value and popped at the end, and
 * a branch whose two ways meet before the return.
 */
asm(".text\n"
	".globl rbp_read\n"
	".type rbp_read, @function\n"
	"rbp_read:\n\t"
	"push %rbp\n\t"
	"push %rbx\n\t"
	"sub $0x18, %rsp\n\t"
	"mov $0x1234, %ebp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"test %rax, %rax\n\t"
	"js 1f\n\t"
	"mov %rax, %rbx\n\t"
	"jmp 2f\n"
	"1:\n\t"
	"mov %rax, %rbx\n"
	"2:\n\t"
	"mov %rbx, %rax\n\t"
	"add $0x18, %rsp\n\t"
	"pop %rbx\n\t"
	"pop %rbp\n\t"
	"ret\n"
	".size rbp_read, .-rbp_read\n");

/*
 * A function of the library that keeps a frame pointer (as the C
 * library's do where they call alloca()), between the wrapper and a
 * caller that uses %rbp for its own values: fp_read() calls frame_read()
 * in a frame record; rbp_outer_read() saves %rbp, puts a value in it and
 * calls fp_read(). The record's saved %rbp is that value: the walk must
 * read rbp_outer_read()'s frame from its code, not follow the value.
 */
stack_reader fp_read, rbp_outer_read;
asm(".text\n"
	".globl fp_read\n"
	".type fp_read, @function\n"
	"fp_read:\n\t"
	"push %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"call frame_read\n\t"
	"pop %rbp\n\t"
	"ret\n"
	".size fp_read, .-fp_read\n"
	".globl rbp_outer_read\n"
	".type rbp_outer_read, @function\n"
	"rbp_outer_read:\n\t"
	"push %rbp\n\t"
	"push %rbx\n\t"
	"sub $0x8, %rsp\n\t"
	"mov $0x1234, %ebp\n\t"
	"call fp_read\n\t"
	"add $0x8, %rsp\n\t"
	"pop %rbx\n\t"
	"pop %rbp\n\t"
	"ret\n"
	".size rbp_outer_read, .-rbp_outer_read\n");

/*
 * Two more such wrappers, for code_replaced: the system call at the same
 * offset in both (0x20), frames of different sizes around it. Only their
 * bytes are used, copied into files.
 */
#define REPLACED_WRAPPER(name, frame)					\
	asm(".text\n"							\
	    ".globl " #name "\n"					\
	    #name ":\n\t"						\
	    "sub $" #frame ", %rsp\n\t"				\
	    PRCTL_READ_ARGS						\
	    ".org " #name " + 0x20, 0x90\n\t"				\
	    "syscall\n\t"						\
	    "add $" #frame ", %rsp\n\t"				\
	    "ret\n"							\
	    ".globl " #name "_end\n"					\
	    #name "_end:\n")
REPLACED_WRAPPER(wide_read, 0x48);
REPLACED_WRAPPER(narrow_read, 0x8);
/* Their ends are labels, declared as the functions for their addresses. */
stack_reader wide_read, wide_read_end, narrow_read, narrow_read_end;

/*
 * A wrapper with two ways out after its system call: the one taken
 * (prctl() succeeded) returns at once, the other lies a page further, for
 * kept_failure_read_again. Only its bytes are used, copied into a file.
 */
asm(".text\n"
	".globl twoway_read\n"
	"twoway_read:\n\t"
	"sub $0x18, %rsp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"test %rax, %rax\n\t"
	"js twoway_far\n\t"
	"add $0x18, %rsp\n\t"
	"ret\n\t"
	".org twoway_read + 0x1000, 0xcc\n"
	"twoway_far:\n\t"
	"add $0x18, %rsp\n\t"
	"ret\n"
	".globl twoway_read_end\n"
	"twoway_read_end:\n");
stack_reader twoway_read, twoway_read_end;

/*
 * A wrapper that saves the caller's %rbp with a mov into a slot of its
 * frame after the system call, as GCC's separate shrink-wrapping places
 * a save on the one way that needs it. Before the system call the slot
 * holds a stale frame record's address (decoy_record, whose return
 * address decoy_ra follows a call): a reading that takes the load at the
 * end for a restore of what the slot held at the system call would give
 * the stale record, and the walk would report decoy_ra. decoy_caller()
 * calls it in a frame record of its own, left with "leave", so that the
 * walk steps the caller by the frame pointer the wrapper gives.
 */
stack_reader decoy_read, decoy_caller;
asm(".text\n"
	".globl decoy_read\n"
	".type decoy_read, @function\n"
	"decoy_read:\n\t"
	"sub $0x18, %rsp\n\t"
	"lea decoy_record(%rip), %rax\n\t"
	"mov %rax, 0x8(%rsp)\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"mov %rbp, 0x8(%rsp)\n\t"
	"mov $0x1234, %ebp\n\t"
	"mov 0x8(%rsp), %rbp\n\t"
	"add $0x18, %rsp\n\t"
	"ret\n"
	".size decoy_read, .-decoy_read\n"
	".globl decoy_caller\n"
	".type decoy_caller, @function\n"
	"decoy_caller:\n\t"
	"push %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"call decoy_read\n\t"
	"leave\n\t"
	"ret\n"
	".size decoy_caller, .-decoy_caller\n"
	"decoy_stub:\n\t"
	"call decoy_caller\n"
	"decoy_ra:\n\t"
	"ret\n"
	".data\n"
	".balign 16\n"
	"decoy_record:\n\t"
	".quad 0, decoy_ra\n"
	".text\n");

/*
 * Wrappers whose ways out move the stack pointer by instructions that
 * write it without naming it: push %fs and push %gs, then a pop.
 * Ignoring them would read the return address a word too high.
 */
stack_reader fs_read, gs_read;
asm(".text\n"
	".globl fs_read\n"
	".type fs_read, @function\n"
	"fs_read:\n\t"
	"sub $0x18, %rsp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"push %fs\n\t"
	"pop %rcx\n\t"
	"add $0x18, %rsp\n\t"
	"ret\n"
	".size fs_read, .-fs_read\n"
	".globl gs_read\n"
	".type gs_read, @function\n"
	"gs_read:\n\t"
	"sub $0x18, %rsp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"push %gs\n\t"
	"add $0x8, %rsp\n\t"
	"add $0x18, %rsp\n\t"
	"ret\n"
	".size gs_read, .-gs_read\n");

/*
 * Wrappers whose frame the reading finds by a convention, not by every
 * way out: the walk must mark the entries from the wrapper's caller on
 * (PR_USER_STACK_GUESSED). Each has a way out that returns at once, as
 * the frames above do, and another that
 *
 * - indirect_read: leaves by an indirect jump, whose targets the
 *   reading takes to be the function's own;
 * - noreturn_read: calls abort() and runs into the next function, which
 *   the reading takes for a call that does not return;
 * - long_read: is longer than a reading decodes;
 * - indexed_read: stores into the frame at an index before the caller's
 *   %rbp is popped from it, which the reading takes not to hit the slot.
 */
stack_reader indirect_read, noreturn_read, long_read, indexed_read;
#define MARKED_WRAPPER(name, way)					\
	asm(".text\n"							\
	    ".globl " #name "\n"					\
	    ".type " #name ", @function\n"				\
	    #name ":\n\t"						\
	    "push %rbp\n\t"						\
	    "sub $0x10, %rsp\n\t"					\
	    "mov $0x1234, %ebp\n\t"					\
	    PRCTL_READ_ARGS						\
	    "syscall\n\t"						\
	    "test %rax, %rax\n\t"					\
	    "js 1f\n\t"							\
	    "add $0x10, %rsp\n\t"					\
	    "pop %rbp\n\t"						\
	    "ret\n"							\
	    "1:\n\t"							\
	    way								\
	    ".size " #name ", .-" #name "\n")
MARKED_WRAPPER(indirect_read,
	       "lea 2f(%rip), %rcx\n\t"
	       "jmp *%rcx\n"
	       "2:\n\t"
	       "add $0x10, %rsp\n\t"
	       "pop %rbp\n\t"
	       "ret\n");
MARKED_WRAPPER(noreturn_read,
	       "call abort\n"
	       "noreturn_next:\n\t"
	       "push %rbx\n\t"
	       "pop %rbx\n\t"
	       "ret\n");
MARKED_WRAPPER(long_read,
	       ".rept 1100\n\t"
	       "add $1, %rcx\n\t"
	       ".endr\n\t"
	       "add $0x10, %rsp\n\t"
	       "pop %rbp\n\t"
	       "ret\n");
/* Here both ways store at an index; the caller's %rbp is popped after. */
asm(".text\n"
	".globl indexed_read\n"
	".type indexed_read, @function\n"
	"indexed_read:\n\t"
	"push %rbp\n\t"
	"sub $0x10, %rsp\n\t"
	"mov $0x1234, %ebp\n\t"
	PRCTL_READ_ARGS
	"syscall\n\t"
	"xor %ecx, %ecx\n\t"
	"movb $0, (%rsp,%rcx,1)\n\t"
	"add $0x10, %rsp\n\t"
	"pop %rbp\n\t"
	"ret\n"
	".size indexed_read, .-indexed_read\n");

/*
 * fallback_caller() calls frame_read() in a frame record, then realigns
 * the stack, which the reading of its frame cannot follow: the walk steps
 * it by its frame pointer, a fallback, and marks what follows.
 */
stack_reader fallback_caller;
asm(".text\n"
	".globl fallback_caller\n"
	".type fallback_caller, @function\n"
	"fallback_caller:\n\t"
	"push %rbp\n\t"
	"mov %rsp, %rbp\n\t"
	"call frame_read\n\t"
	"and $-16, %rsp\n\t"
	"leave\n\t"
	"ret\n"
	".size fallback_caller, .-fallback_caller\n");

struct read_case {
	stack_reader *read;
	uint64_t buf[ENTRIES];
	long n;
	/* Where the caller of the wrapper returns to. */
	uintptr_t ra;
};

static long glibc_read(uint64_t *buf, unsigned long size)
{
	return prctl(PR_USER_STACK_READ, buf, size, 0, 0);
}

/*
 * The function that calls the wrapper, and whose frame the walk must not
 * skip: entry 1 returns into it, entry 2 is its own return address. The
 * Makefile's -fno-inline keeps it a function of its own.
 */
static void read_from_here(struct read_case *c)
{
	c->n = c->read(c->buf, ENTRIES);
	c->ra = (uintptr_t)__builtin_return_address(0);
}

/*
 * @depth functions lie between the wrapper and read_from_here(): entry
 * 1 + @depth returns into read_from_here(), the next one is its own
 * return address.
 */
static void check_case(struct __test_metadata *_metadata,
		       stack_reader *read, int depth)
{
	struct read_case c = { .read = read };

	read_from_here(&c);
	ASSERT_GE(c.n, 4 + depth);
	/* Entry 0 is in the wrapper, after its system call. */
	EXPECT_NE(c.buf[1 + depth], c.ra);
	EXPECT_LT(c.buf[1 + depth] - (uintptr_t)read_from_here, 256);
	EXPECT_EQ(c.buf[2 + depth], c.ra);
}

#define GUESSED	PR_USER_STACK_GUESSED

/*
 * As check_case(), and the entries from @marked_from on (and no other)
 * carry the guessed mark: they rest on a convention.
 */
static void check_marked(struct __test_metadata *_metadata,
			 stack_reader *read, int depth, int marked_from)
{
	struct read_case c = { .read = read };

	read_from_here(&c);
	ASSERT_GE(c.n, 4 + depth);
	for (int i = 1; i <= 2 + depth; i++) {
		EXPECT_EQ(i >= marked_from, !!(c.buf[i] & GUESSED))
			TH_LOG("entry %d: %#llx", i,
			       (unsigned long long)c.buf[i]);
		c.buf[i] &= ~GUESSED;
	}
	EXPECT_NE(c.buf[1 + depth], c.ra);
	EXPECT_LT(c.buf[1 + depth] - (uintptr_t)read_from_here, 256);
	EXPECT_EQ(c.buf[2 + depth], c.ra);
}

/*
 * As check_case(), for a wrapper of the C library: the frames from its
 * caller on may carry the guessed mark. Its prctl() checks a stack
 * protector's canary and calls __stack_chk_fail() where it differs, a
 * call that does not return: the reading ends that way by what follows
 * the call, a convention. The entries must be right, marked or not.
 */
static void check_libc_case(struct __test_metadata *_metadata,
			    stack_reader *read, int depth)
{
	struct read_case c = { .read = read };
	int marked = 0;

	read_from_here(&c);
	ASSERT_GE(c.n, 4 + depth);
	for (int i = 1; i <= 2 + depth; i++) {
		marked += !!(c.buf[i] & GUESSED);
		c.buf[i] &= ~GUESSED;
	}
	TH_LOG("%d of the first %d entries marked", marked, 2 + depth);
	EXPECT_NE(c.buf[1 + depth], c.ra);
	EXPECT_LT(c.buf[1 + depth] - (uintptr_t)read_from_here, 256);
	EXPECT_EQ(c.buf[2 + depth], c.ra);
}

/* glibc_read() calls the C library's prctl(): one frame more. */
TEST(glibc_wrapper)
{
	check_libc_case(_metadata, glibc_read, 1);
}

TEST(wrapper_with_frame)
{
	check_case(_metadata, frame_read, 0);
}

TEST(wrapper_using_rbp)
{
	check_case(_metadata, rbp_read, 0);
}

/*
 * rbp_outer_read() -> fp_read() -> frame_read(): two functions between
 * the wrapper and read_from_here(), the inner one a frame record.
 */
TEST(record_between_frames_without)
{
	check_case(_metadata, rbp_outer_read, 2);
}

/*
 * The caller's %rbp saved into a slot after the system call, over a
 * stale frame record: the walk reports decoy_caller() and
 * read_from_here(), not the stale record's return address.
 */
TEST(rbp_saved_after_syscall)
{
	check_case(_metadata, decoy_caller, 1);
}

/* Frames found by a convention: marked from the wrapper's caller on. */
TEST(marked_indirect_jump)
{
	check_marked(_metadata, indirect_read, 0, 1);
}

TEST(marked_call_not_returning)
{
	check_marked(_metadata, noreturn_read, 0, 1);
}

TEST(marked_too_long_to_read)
{
	check_marked(_metadata, long_read, 0, 1);
}

TEST(marked_indexed_store)
{
	check_marked(_metadata, indexed_read, 0, 1);
}

/* The fallback by frame pointer: exact up to it, marked from it on. */
TEST(marked_frame_pointer_fallback)
{
	check_marked(_metadata, fallback_caller, 1, 2);
}

/* push %fs and push %gs move the stack pointer as any push does. */
TEST(segment_pushes)
{
	check_case(_metadata, fs_read, 0);
	check_case(_metadata, gs_read, 0);
}

/*
 * Read again and again: the task's copies of the reading give what the
 * reading gave. The wrapper's entry, its caller's and the one after are
 * compared: the loop's call site may be copied by the compiler.
 */
TEST(same_each_time)
{
	static struct read_case first, again;

	for (int i = 0; i < 200; i++) {
		again.read = rbp_read;
		read_from_here(&again);
		if (!i)
			first = again;
		ASSERT_GE(again.n, 4);
		ASSERT_EQ(again.buf[0], first.buf[0]);
		ASSERT_EQ(again.buf[1], first.buf[1]);
		ASSERT_EQ(again.buf[2], again.ra);
	}
}

/* A file holding a copy of the code from @start to @end, or -1. */
static int code_file(const void *start_addr, const void *end_addr)
{
	const char *start = start_addr, *end = end_addr;
	int fd = memfd_create("code_code", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, start, end - start) != end - start) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The task keeps what it read of a wrapper, and the mapping the system
 * call came from, for as long as the process's mappings are not changed.
 * Here they are: the same address, in turn, holds two wrappers whose
 * system calls lie at the same offset and whose frames differ. Each read
 * must take the frame of the code mapped then, not of the code before.
 */
TEST(code_replaced)
{
	int fds[2] = {
		code_file((void *)wide_read, (void *)wide_read_end),
		code_file((void *)narrow_read, (void *)narrow_read_end),
	};
	void *at;

	if (fds[0] < 0 || fds[1] < 0)
		SKIP(return, "no memfd for code");
	at = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(at, MAP_FAILED);
	for (int i = 0; i < 8; i++) {
		void *code = mmap(at, 4096, PROT_READ | PROT_EXEC,
				  MAP_PRIVATE | MAP_FIXED, fds[i % 2], 0);

		if (code == MAP_FAILED && !i)
			SKIP(return, "no executable mapping of a memfd");
		ASSERT_EQ(code, at);
		/* Each wrapper twice: the second read uses what was kept. */
		check_case(_metadata, (stack_reader *)at, 0);
		check_case(_metadata, (stack_reader *)at, 0);
	}
	munmap(at, 4096);
	close(fds[0]);
	close(fds[1]);
}

/*
 * A reading that gave up is not kept. The wrapper's second way out lies
 * on a page that cannot be read at the first read (PROT_NONE): the
 * reading gives up there, and the walk may lose the wrapper's caller.
 * Once the page is executable again, the same thread's next read must
 * find the caller: a failure kept under the wrapper's IP would lose it
 * for the thread's life.
 */
TEST(kept_failure_read_again)
{
	int fd = code_file((void *)twoway_read, (void *)twoway_read_end);
	struct read_case c = { 0 };
	void *at;

	if (fd < 0 || ftruncate(fd, 2 * 4096))
		SKIP(return, "no memfd for code");
	at = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (at == MAP_FAILED)
		SKIP(return, "no executable mapping of a memfd");
	ASSERT_EQ(0, mprotect((char *)at + 4096, 4096, PROT_NONE));
	c.read = (stack_reader *)at;
	read_from_here(&c);
	ASSERT_LT(0, c.n);
	TH_LOG("far way unreadable: %ld entries, caller %s", c.n,
	       c.n > 2 && c.buf[2] == c.ra ? "found" : "lost");
	ASSERT_EQ(0, mprotect((char *)at + 4096, 4096, PROT_READ | PROT_EXEC));
	check_case(_metadata, (stack_reader *)at, 0);
	munmap(at, 2 * 4096);
	close(fd);
}

/* @fd, a memfd, made to hold wide_read() and mapped executable; NULL if not. */
static void *map_wide_code(int fd)
{
	size_t wide = (char *)wide_read_end - (char *)wide_read;
	void *at;

	if (fd < 0 || ftruncate(fd, 4096) ||
	    pwrite(fd, (void *)wide_read, wide, 0) != (ssize_t)wide)
		return NULL;
	at = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	return at == MAP_FAILED ? NULL : at;
}

/*
 * The image exec'd by copies_dropped_at_exec: maps the file it is given
 * at the address it is given, where the code now is narrow_read(), and
 * reads through it. Exits 0 if the walk found the caller.
 */
#define EXEC_CODE_ENV	"CODE_FRAMES_TEST_CODE"

__attribute__((constructor)) static void exec_code_read(void)
{
	const char *env = getenv(EXEC_CODE_ENV);
	struct read_case c = { 0 };
	unsigned long at;
	int fd;

	if (!env)
		return;
	if (sscanf(env, "%d:%lx", &fd, &at) != 2)
		_exit(2);
	/* The new image may have something there already: 6, skipped. */
	if (mmap((void *)at, 4096, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) != (void *)at)
		_exit(6);
	c.read = (stack_reader *)at;
	read_from_here(&c);
	_exit(c.n > 2 && c.buf[2] == c.ra ? 0 : 1);
}

/*
 * The task's copies do not outlive its exec. A file holds wide_read();
 * it is mapped and read through, which keeps the frame read. Then the
 * file is changed to hold narrow_read(), and the task execs an image
 * that maps the same file at the same address and offset: its read must
 * find the narrow frame, not the copy of the wide one.
 */
TEST(copies_dropped_at_exec)
{
	int fd = memfd_create("code_exec_code", 0), status;
	size_t narrow = (char *)narrow_read_end - (char *)narrow_read;
	char env[64];
	char *const envp[] = { env, NULL };
	char *const argv[] = { "code_frames_test", NULL };
	void *at;
	pid_t pid;

	at = map_wide_code(fd);
	if (!at)
		SKIP(return, "no executable mapping of a memfd holding code");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct read_case c = { .read = (stack_reader *)at };

		/* Read twice: the second read uses what the first kept. */
		read_from_here(&c);
		read_from_here(&c);
		if (c.n <= 2 || c.buf[2] != c.ra)
			_exit(3);
		if (pwrite(fd, (void *)narrow_read, narrow, 0) != (ssize_t)narrow)
			_exit(4);
		snprintf(env, sizeof(env), "%s=%d:%lx", EXEC_CODE_ENV, fd,
			 (unsigned long)at);
		execve("/proc/self/exe", argv, envp);
		_exit(5);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 6)
		SKIP(return, "the exec'd image has a mapping at %p", at);
	/* 1: the exec'd image's walk lost its caller. */
	EXPECT_EQ(0, WEXITSTATUS(status));
	munmap(at, 4096);
	close(fd);
}

#define UPROBE_EVENTS	"/sys/kernel/tracing/uprobe_events"
#define UPROBE_ENABLE	"/sys/kernel/tracing/events/code_frames_test/idle/enable"

/* Set (or remove) an enabled uprobe on glibc_read(), never called here. */
static int idle_uprobe(bool set)
{
	unsigned long start, end, off, addr = (unsigned long)glibc_read;
	char line[512], exe[256], probe[400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;
	int ret = -1;

	if (!set) {
		ut_write(UPROBE_ENABLE, "0");
		return ut_write(UPROBE_EVENTS, "-:code_frames_test/idle\n");
	}
	f = fopen("/proc/self/maps", "r");
	if (n < 0 || !f)
		return -1;
	exe[n] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    addr >= start && addr < end && strstr(line, exe)) {
			snprintf(probe, sizeof(probe), "p:code_frames_test/idle %s:%#lx\n",
				 exe, addr - start + off);
			ret = 0;
			break;
		}
	}
	fclose(f);
	if (ret || ut_write(UPROBE_EVENTS, probe))
		return -1;
	return ut_write(UPROBE_ENABLE, "1");
}

/*
 * Nothing is kept in an mm with uprobes: a breakpoint in the text changes
 * what a reading finds. Shown as copies_dropped_at_exec shows a copy
 * kept: the code read changes under the same file, offset and address,
 * here without an exec, and the next read must find the new frame.
 */
TEST(not_kept_with_uprobes)
{
	int fd = memfd_create("code_uprobe_code", 0);
	size_t narrow = (char *)narrow_read_end - (char *)narrow_read;
	void *at;

	at = map_wide_code(fd);
	if (!at)
		SKIP(return, "no executable mapping of a memfd holding code");
	idle_uprobe(false);
	if (idle_uprobe(true)) {
		idle_uprobe(false);
		SKIP(return, "cannot set a uprobe (tracefs, CONFIG_UPROBE_EVENTS)");
	}
	check_case(_metadata, (stack_reader *)at, 0);
	check_case(_metadata, (stack_reader *)at, 0);
	ASSERT_EQ((ssize_t)narrow, pwrite(fd, (void *)narrow_read, narrow, 0));
	check_case(_metadata, (stack_reader *)at, 0);
	EXPECT_EQ(0, idle_uprobe(false));
	munmap(at, 4096);
	close(fd);
}

static void *thread_read(void *arg)
{
	struct __test_metadata *_metadata = arg;

	check_libc_case(_metadata, glibc_read, 1);
	check_case(_metadata, frame_read, 0);
	check_case(_metadata, rbp_read, 0);
	return NULL;
}

/* From another thread, whose stack ends in the C library's start_thread. */
TEST(from_thread)
{
	pthread_t thread;

	ASSERT_EQ(pthread_create(&thread, NULL, thread_read, _metadata), 0);
	ASSERT_EQ(pthread_join(thread, NULL), 0);
}

TEST_HARNESS_MAIN
