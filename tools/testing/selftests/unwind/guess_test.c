// SPDX-License-Identifier: GPL-2.0
/*
 * Guessed frames (prctl(PR_SET_USER_STACK_GUESS)), seen through
 * prctl(PR_USER_STACK_READ). Built without frame pointers and without
 * SFrame tables, so that the walk stops early: after the frame of
 * ut_syscall (which keeps its own frame) the chain is found by scanning.
 * The setting (off by default, inherited, kept across exec, bad
 * arguments), the chain found and marked, the scan bound on a deep frame
 * of zeros, and a stack full of return addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "unwind_chain.h"

#define MAX_ENTRIES	512
#define CANARY		0x5a5a5a5a5a5a5a5aULL

static uint64_t buf[MAX_ENTRIES + 64];

static long chain_read(void)
{
	return chain_run(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
			 MAX_ENTRIES) - CHAIN_LEN;
}

static int guessed(uint64_t e)
{
	return !!(e & PR_USER_STACK_GUESSED);
}

static unsigned long addr(uint64_t e)
{
	return (unsigned long)(e & ~PR_USER_STACK_GUESSED);
}

/* Walked entries first, then guessed ones, nothing after. */
static int marks_ordered(long n)
{
	long i = 0;

	while (i < n && !guessed(buf[i]))
		i++;
	while (i < n && guessed(buf[i]))
		i++;
	return i == n;
}

/* How many of the chain's return addresses appear, in order, from @from. */
static int chain_found(long from, long n)
{
	unsigned long want[CHAIN_LEN + 1];
	int k = 0;

	want[0] = leaf_caller_ra;
	for (int i = 0; i < CHAIN_LEN; i++)
		want[1 + i] = chain_ra[CHAIN_LEN - 1 - i];
	for (long i = from; i < n && k < CHAIN_LEN + 1; i++)
		if (addr(buf[i]) == want[k])
			k++;
	return k;
}

TEST(setting)
{
	int status;
	pid_t pid;

	ASSERT_EQ(prctl(PR_GET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 2, 0, 0, 0), -1);
	ASSERT_EQ(errno, EINVAL);
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 1, 1, 0, 0), -1);
	ASSERT_EQ(errno, EINVAL);
	ASSERT_EQ(prctl(PR_GET_USER_STACK_GUESS, 1, 0, 0, 0), -1);
	ASSERT_EQ(errno, EINVAL);

	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0), 0);
	ASSERT_EQ(prctl(PR_GET_USER_STACK_GUESS, 0, 0, 0, 0), 1);
	/* A child inherits it; exec keeps it. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (prctl(PR_GET_USER_STACK_GUESS, 0, 0, 0, 0) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(2);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
	ASSERT_EQ(prctl(PR_GET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
}

/* The setting survives exec: the child execs this test, which reports it. */
TEST(kept_across_exec)
{
	char self[4096];
	int status;
	ssize_t len;
	pid_t pid;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ASSERT_GT(len, 0);
	self[len] = 0;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0);
		execl(self, self, "--report-guess", (char *)NULL);
		_exit(3);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 1);
}

TEST(off_by_default)
{
	long n;

	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
	n = chain_read();
	ASSERT_GT(n, 1);
	/* Without frame pointers or tables the walk stops early. */
	EXPECT_LT(n, CHAIN_LEN);
	for (long i = 0; i < n; i++)
		EXPECT_FALSE(guessed(buf[i]));
}

TEST(chain)
{
	long n, first = -1;
	int found;

	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0), 0);
	n = chain_read();
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
	ASSERT_GT(n, CHAIN_LEN);
	/* ut_syscall keeps a frame: its IP and return are walked. */
	EXPECT_EQ(buf[0], (unsigned long)ut_syscall_ret);
	EXPECT_EQ(buf[1], ut_leaf_ra);
	EXPECT_TRUE(marks_ordered(n));
	for (long i = 0; i < n && first < 0; i++)
		if (guessed(buf[i]))
			first = i;
	ASSERT_GE(first, 2);
	found = chain_found(first, n);
	TH_LOG("%ld entries, %ld guessed, chain return addresses found: %d of %d",
	       n, n - first, found, CHAIN_LEN + 1);
	/* The target: at least 9 in 10 of the true frames. */
	EXPECT_GE(found * 10, (CHAIN_LEN + 1) * 9);
}

/*
 * A frame of @words zero words between the system call and its caller:
 * the scan stops after its bound (64 KiB), so the caller's return address
 * is found above a small frame and not above a big one.
 */
static unsigned long zeros_caller_ra;

static long read_over_zeros(long words)
{
	uint64_t zeros[words];

	memset(zeros, 0, sizeof(zeros));
	/* The stores must reach the stack before the call. */
	asm volatile("" : : "r" (zeros) : "memory");
	zeros_caller_ra = (unsigned long)__builtin_return_address(0);
	/* A frame pointer of 0: the walk stops at once, the scan starts. */
	return ut_syscall_fp(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
			     MAX_ENTRIES, 0);
}

static int found_zeros_caller(long n)
{
	for (long i = 0; i < n; i++)
		if (guessed(buf[i]) && addr(buf[i]) == zeros_caller_ra)
			return 1;
	return 0;
}

TEST(scan_bound)
{
	long n;

	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0), 0);
	n = read_over_zeros(1024);		/* 8 KiB */
	EXPECT_TRUE(found_zeros_caller(n));
	n = read_over_zeros(16384);		/* 128 KiB */
	EXPECT_FALSE(found_zeros_caller(n));
	EXPECT_TRUE(marks_ordered(n));
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
}

/*
 * A stack full of one return address: the scan takes each copy as a
 * frame and stops at the walk's depth limit; nothing is written past it.
 */
static long read_over_copies(long words, unsigned long ra)
{
	uint64_t copies[words];

	for (long i = 0; i < words; i++)
		copies[i] = ra;
	asm volatile("" : : "r" (copies) : "memory");
	return ut_syscall_fp(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
			     MAX_ENTRIES + 64, 0);
}

TEST(hostile_copies)
{
	long n;

	chain_prime();
	for (int i = 0; i < MAX_ENTRIES + 64; i++)
		buf[i] = CANARY;
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0), 0);
	n = read_over_copies(4096, chain_ra[0]);
	ASSERT_EQ(prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0), 0);
	EXPECT_EQ(n, MAX_ENTRIES);
	EXPECT_TRUE(marks_ordered(n));
	EXPECT_EQ(addr(buf[n - 1]), chain_ra[0]);
	for (int i = MAX_ENTRIES; i < MAX_ENTRIES + 64; i++)
		ASSERT_EQ(buf[i], CANARY);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--report-guess"))
		return prctl(PR_GET_USER_STACK_GUESS, 0, 0, 0, 0);
	return test_harness_run(argc, argv);
}
