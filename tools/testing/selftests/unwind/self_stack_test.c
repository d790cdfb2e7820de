// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_USER_STACK_READ): a thread reads its own user stack through the
 * kernel's walker. The exact 60-frame chain (64-bit, and 32-bit as
 * self_stack_test_32), skipping entries, the size query, the buffer bound,
 * bad buffers, from a signal handler, from a thread, a seccomp filter
 * refusing it like any system call, and user_backtrace() (the example
 * header) against glibc's backtrace(). The Makefile's -fno-inline keeps
 * every function its own frame, which the exact stacks below rely on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "unwind_chain.h"
#include "user_backtrace.h"

#define MAX_ENTRIES	512
/* A value no walk stores: marks entries the kernel must not write. */
#define CANARY		0x5a5a5a5a5a5a5a5aULL

static uint64_t stack_buf[MAX_ENTRIES + 8];

/*
 * The chain's stack as the prctl returns it, in the caller's word size.
 * Each chain function adds 1 to what the one it called returned.
 */
static long chain_read(uint64_t *buf, long size, unsigned long *ips)
{
	long n = chain_run(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
			   size) - CHAIN_LEN;

	for (long i = 0; i < n && ips; i++)
		ips[i] = (unsigned long)buf[i];
	return n;
}

/*
 * A read from a function with a frame. On x86-64 through the C library's
 * prctl(), which leaves %rbp alone. 32-bit glibc's wrapper has no frame
 * and takes %ebp for an argument register, so a frame-pointer walk from
 * inside it cannot go on: the system call is made here instead. Returns
 * -errno on failure.
 */
static long read_stack(uint64_t *buf, unsigned long size, unsigned long skip)
{
#ifdef __x86_64__
	long ret = prctl(PR_USER_STACK_READ, buf, size, skip, 0);

	return ret < 0 ? -errno : ret;
#else
	return user_stack_read(buf, size, skip);
#endif
}

/* One call site for every read, so that each sees the same stack. */
static long read_here(uint64_t *buf, unsigned long size, unsigned long skip)
{
	return read_stack(buf, size, skip);
}

TEST(chain)
{
	unsigned long ips[MAX_ENTRIES];
	int n;

	n = chain_read(stack_buf, MAX_ENTRIES, ips);
	ASSERT_GT(n, CHAIN_LEN + 3);
	ASSERT_TRUE(chain_matches_ips(_metadata, n, ips));
}

#define SKIPS	16

/* Read with each skip from one call site, so that each sees one stack. */
static void read_skips(uint64_t (*bufs)[64], long *counts)
{
	for (long skip = 0; skip < SKIPS; skip++)
		counts[skip] = read_here(bufs[skip], 64, skip);
}

TEST(skip)
{
	static uint64_t bufs[SKIPS][64];
	long counts[SKIPS], skip, i;
	uint64_t part[64];

	read_skips(bufs, counts);
	ASSERT_GT(counts[0], 4);
	for (skip = 1; skip < SKIPS; skip++) {
		long want = counts[0] > skip ? counts[0] - skip : 0;

		ASSERT_EQ(counts[skip], want);
		for (i = 0; i < want; i++)
			ASSERT_EQ(bufs[skip][i], bufs[0][skip + i]);
	}
	/* Skipping more than there are: nothing, not an error. */
	ASSERT_EQ(read_here(part, 64, counts[0]), 0);
	ASSERT_EQ(read_here(part, 64, -1UL), 0);
}

TEST(size_query)
{
	long n, count;

	for (int i = 0; i < 8; i++)
		stack_buf[i] = CANARY;
	n = chain_read(stack_buf, MAX_ENTRIES, NULL);
	ASSERT_GT(n, CHAIN_LEN + 3);
	for (int i = 0; i < 8; i++)
		stack_buf[i] = CANARY;
	/* Size 0: the number of entries, nothing written, any pointer. */
	count = chain_read(stack_buf, 0, NULL);
	EXPECT_EQ(count, n);
	for (int i = 0; i < 8; i++)
		EXPECT_EQ(stack_buf[i], CANARY);
	EXPECT_EQ(chain_read(NULL, 0, NULL), n);
	EXPECT_EQ(chain_read((uint64_t *)16, 0, NULL), n);
}

TEST(bounded)
{
	unsigned long ips[MAX_ENTRIES];
	long n;

	for (int i = 0; i < MAX_ENTRIES + 8; i++)
		stack_buf[i] = CANARY;
	n = chain_read(stack_buf, 5, ips);
	ASSERT_EQ(n, 5);
	EXPECT_EQ(ips[0], (unsigned long)ut_syscall_ret);
	EXPECT_EQ(ips[1], ut_leaf_ra);
	for (int i = 5; i < MAX_ENTRIES + 8; i++)
		ASSERT_EQ(stack_buf[i], CANARY);
}

TEST(bad_buffer)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *ro, *edge;
	char *map;

	EXPECT_EQ(read_stack((uint64_t *)16, 64, 0), -EFAULT);
	EXPECT_EQ(read_stack((uint64_t *)(uintptr_t)-4096, 64, 0), -EFAULT);

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	EXPECT_EQ(read_stack(ro, 64, 0), -EFAULT);
	munmap(ro, page);

	/* Two entries fit before an unmapped page: EFAULT, the two written. */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(map, MAP_FAILED);
	ASSERT_EQ(munmap(map + page, page), 0);
	edge = (uint64_t *)(map + page) - 2;
	edge[0] = CANARY;
	edge[1] = CANARY;
	EXPECT_EQ(read_stack(edge, 64, 0), -EFAULT);
	EXPECT_NE(edge[0], CANARY);
	munmap(map, page);

	/* The last argument is reserved. */
	errno = 0;
	EXPECT_EQ(prctl(PR_USER_STACK_READ, stack_buf, 64, 0, 1), -1);
	EXPECT_EQ(errno, EINVAL);
}

/*
 * From a signal handler: the handler's frames, the return into the signal
 * trampoline (the restorer sigaction() reports), then the chain,
 * interrupted in its kill() system call. Where the C library has a table
 * given for its file (a machine set up with cfi2sframe -R), the restorer
 * is in the table's gap and the walk reads the signal frame: the
 * interrupted IP comes next, then its callers. Without one, the frame
 * pointer the interrupted code had gives its callers, and its own IP,
 * which only the signal frame holds, is not reported. Either way, exact.
 */
static uint64_t handler_buf[MAX_ENTRIES];
static long handler_n;
static unsigned long handler_ra;

static void handler(int sig)
{
	handler_n = ut_syscall(UT_SYS_PRCTL, PR_USER_STACK_READ,
			       (long)handler_buf, MAX_ENTRIES);
	handler_ra = ut_leaf_ra;
}

TEST(signal_handler)
{
	struct sigaction sa = { .sa_handler = handler }, old;
	unsigned long chain_leaf_ra, restorer;
	int i, sigframe;

	chain_prime();
	chain_leaf_ra = ut_leaf_ra;
	ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	ASSERT_EQ(sigaction(SIGUSR1, NULL, &old), 0);
	/*
	 * glibc gives the kernel its restorer on x86-64; 32-bit glibc leaves
	 * it to the vDSO's, which sigaction() does not report.
	 */
	restorer = (unsigned long)old.sa_restorer;

	chain_run(UT_SYS_KILL, getpid(), SIGUSR1, 0);
	ASSERT_GT(handler_n, CHAIN_LEN + 5);
	EXPECT_EQ(handler_buf[0], (unsigned long)ut_syscall_ret);
	EXPECT_EQ(handler_buf[1], handler_ra);
	EXPECT_TRUE(restorer ? handler_buf[2] == restorer : handler_buf[2] != 0);
	/* The interrupted kill(): ut_syscall, at the same return point. */
	sigframe = handler_buf[3] == (unsigned long)ut_syscall_ret;
	TH_LOG("the interrupted frame %s", sigframe ?
	       "read from the signal frame" : "stepped by its frame pointer");
	ASSERT_GT(handler_n, CHAIN_LEN + 5 + sigframe);
	EXPECT_EQ(handler_buf[3 + sigframe], chain_leaf_ra);
	EXPECT_EQ(handler_buf[4 + sigframe], leaf_caller_ra);
	for (i = 0; i < CHAIN_LEN; i++)
		ASSERT_EQ(handler_buf[5 + sigframe + i], chain_ra[CHAIN_LEN - 1 - i]);
	signal(SIGUSR1, SIG_DFL);
}

static void *thread_chain(void *arg)
{
	unsigned long *ips = arg;
	uint64_t buf[MAX_ENTRIES];

	return (void *)(long)chain_read(buf, MAX_ENTRIES, ips);
}

/* Each thread gets its own stack: a thread's, then the main thread's. */
TEST(thread)
{
	static unsigned long ips[MAX_ENTRIES];
	unsigned long main_ips[MAX_ENTRIES];
	pthread_t t;
	void *ret;
	long n;

	ASSERT_EQ(pthread_create(&t, NULL, thread_chain, ips), 0);
	ASSERT_EQ(pthread_join(t, &ret), 0);
	n = (long)ret;
	ASSERT_TRUE(chain_matches_ips(_metadata, n, ips));
	/* Above the chain: thread_chain, not this test's frames. */
	ASSERT_GT(n, CHAIN_LEN + 4);

	n = chain_read(stack_buf, MAX_ENTRIES, main_ips);
	ASSERT_TRUE(chain_matches_ips(_metadata, n, main_ips));
	EXPECT_NE(main_ips[CHAIN_LEN + 4], ips[CHAIN_LEN + 4]);
}

#ifndef __x86_64__
#include <sys/auxv.h>

static unsigned long vdso_caller_ra;
/* A global: the asm below moves %esp, so no stack-relative operand. */
static unsigned long vsyscall_entry;

/*
 * A 32-bit system call through the vDSO's __kernel_vsyscall, which pushes
 * three registers and has no frame: the walk starts at its landing pad and
 * must find the return into this function three words up.
 */
static long vdso_read(uint64_t *buf, long size)
{
	long ret;

	vdso_caller_ra = (unsigned long)__builtin_return_address(0);
	asm volatile("push %%ebx\n\t"
		     "mov %2, %%ebx\n\t"
		     "call *%3\n\t"
		     "pop %%ebx"
		     : "=a" (ret)
		     : "0" (UT_SYS_PRCTL), "i" (PR_USER_STACK_READ),
		       "m" (vsyscall_entry), "c" (buf), "d" (size), "S" (0), "D" (0)
		     : "memory");
	return ret;
}

TEST(vdso_syscall)
{
	unsigned long vsyscall = getauxval(AT_SYSINFO);
	long n;

	ASSERT_NE(vsyscall, 0);
	vsyscall_entry = vsyscall;
	n = vdso_read(stack_buf, MAX_ENTRIES);
	ASSERT_GT(n, 3);
	/* The landing pad, in __kernel_vsyscall, a few bytes after its start. */
	EXPECT_GE(stack_buf[0], vsyscall);
	EXPECT_LT(stack_buf[0], vsyscall + 64);
	EXPECT_GT(stack_buf[1], (unsigned long)vdso_read);
	EXPECT_LT(stack_buf[1], (unsigned long)vdso_read + 128);
	EXPECT_EQ(stack_buf[2], vdso_caller_ra);
}
#endif

#ifdef __x86_64__
/*
 * prctl(PR_USER_STACK_READ, buf, size, 0, 0) with the frame pointer
 * register set to fp, so that the walk follows crafted frame records.
 * The user IP is crafted_read_ret. The "and $-1, %rsp" there changes
 * nothing, but the kernel's reading of frames from their code gives up
 * on it, so that the walk takes the crafted frame pointer (as for
 * ut_syscall_fp in unwind_helpers.h).
 */
long crafted_read(uint64_t *buf, long size, unsigned long fp);
asm(".text\n"
	".globl crafted_read, crafted_read_ret\n"
	"crafted_read:\n"
	"	push %rbp\n"
	"	mov %rdx, %rbp\n"
	"	mov %rsi, %rdx\n"
	"	mov %rdi, %rsi\n"
	"	mov $0x55535452, %edi\n"
	"	mov $157, %eax\n"
	"	xor %r10d, %r10d\n"
	"	xor %r8d, %r8d\n"
	"	syscall\n"
	"crafted_read_ret:\n"
	"	and $-1, %rsp\n"
	"	pop %rbp\n"
	"	ret\n");

/* The address of the label crafted_read_ret. */
static unsigned long crafted_read_ip(void)
{
	unsigned long ip;

	asm("lea crafted_read_ret(%%rip), %0" : "=r" (ip));
	return ip;
}

#define CRAFTED		6

static struct crafted_frame {
	unsigned long next, ra;
} crafted[CRAFTED];

/* Records in a row, return addresses in this program's text; @bad at @at. */
static long read_crafted(int at, unsigned long bad)
{
	for (int i = 0; i < CRAFTED; i++) {
		crafted[i].next = i + 1 < CRAFTED ?
				  (unsigned long)&crafted[i + 1] : 0;
		crafted[i].ra = (unsigned long)chain_00 + 4 * i + 1;
	}
	if (at >= 0)
		crafted[at].ra = bad;
	return crafted_read(stack_buf, MAX_ENTRIES, (unsigned long)crafted);
}

/*
 * The walk finds this program's text in the SFrame registry as it goes
 * and skips those entries in its check of return addresses afterwards;
 * an entry outside executable memory after such a run must still end the
 * stack: a data address of this program (its mapping is next to the
 * text), one on the stack, and one in a mapping without execute right.
 */
TEST(cut_after_known_text)
{
	const unsigned long page = sysconf(_SC_PAGESIZE);
	unsigned long bad[3], local;
	void *noexec;
	long n;

	noexec = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(noexec, MAP_FAILED);
	bad[0] = (unsigned long)stack_buf;
	bad[1] = (unsigned long)&local;
	bad[2] = (unsigned long)noexec + 16;

	/* The whole crafted stack: the IP, then every record's. */
	n = read_crafted(-1, 0);
	ASSERT_EQ(n, CRAFTED + 1);
	EXPECT_EQ(stack_buf[0], crafted_read_ip());
	for (int i = 0; i < CRAFTED; i++)
		EXPECT_EQ(stack_buf[i + 1], crafted[i].ra);

	for (int b = 0; b < 3; b++) {
		for (int at = 0; at < CRAFTED; at++) {
			memset(stack_buf, 0x5a, sizeof(stack_buf));
			n = read_crafted(at, bad[b]);
			ASSERT_EQ(n, at + 1) {
				TH_LOG("bad address %d at record %d: %ld entries",
				       b, at, n);
			}
			for (int i = 0; i < at; i++)
				EXPECT_EQ(stack_buf[i + 1],
					  (unsigned long)chain_00 + 4 * i + 1);
		}
	}
	munmap(noexec, page);
}
#endif

/* A filter that refuses PR_USER_STACK_READ, and no other prctl. */
static int refuse_stack_reads(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_USER_STACK_READ, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(insns), .filter = insns,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

TEST(seccomp)
{
	char name[16];
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (refuse_stack_reads())
			_exit(10);
		if (chain_read(stack_buf, MAX_ENTRIES, NULL) != -EPERM)
			_exit(11);
		if (read_stack(stack_buf, MAX_ENTRIES, 0) != -EPERM)
			_exit(12);
		/* Other prctl options pass the filter. */
		if (prctl(PR_GET_NAME, name, 0, 0, 0))
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
}

/*
 * user_backtrace() next to backtrace(), from the bottom of a recursion:
 * the same return addresses, entry 0 aside (two call sites), up to main
 * and its caller; backtrace() may go on (it reads the C library's
 * .eh_frame, which has no frame pointers for the kernel to follow).
 */
#define RECURSE_DEPTH	20

static void *bt_glibc[64], *bt_kernel[64];
static int n_glibc, n_kernel;

static int recurse(int depth)
{
	if (depth) {
		/* Not a tail call: a frame per level. */
		return recurse(depth - 1) + 1;
	}
	n_glibc = backtrace(bt_glibc, 64);
	n_kernel = user_backtrace(bt_kernel, 64);
	return 0;
}

TEST(like_backtrace)
{
	int i;

	recurse(RECURSE_DEPTH);
	/* recurse x 21, this test, the harness's runner ... main, libc. */
	ASSERT_GT(n_kernel, RECURSE_DEPTH + 3);
	ASSERT_GE(n_glibc, n_kernel);
	for (i = 1; i < n_kernel; i++)
		ASSERT_EQ(bt_kernel[i], bt_glibc[i]) {
			TH_LOG("entry %d: %p, backtrace() says %p", i,
			       bt_kernel[i], bt_glibc[i]);
		}
	/* Entry 0: both in the bottom frame of the recursion. */
	ASSERT_GT((char *)bt_kernel[0], (char *)bt_glibc[0]);
	ASSERT_LT((char *)bt_kernel[0] - (char *)bt_glibc[0], 64);
}

TEST_HARNESS_MAIN
