/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A chain of 60 distinct frame-pointer functions whose innermost one makes
 * a system call through ut_syscall(): the user stack the kernel sees during
 * that call is known exactly, and chain_matches() checks a walked stack
 * against it. Shared by the deferred unwinding selftests; programs that do
 * not use the kselftest harness define UNWIND_CHAIN_NO_HARNESS first.
 */
#ifndef UNWIND_CHAIN_H
#define UNWIND_CHAIN_H

#ifndef UNWIND_CHAIN_NO_HARNESS
#include "../kselftest_harness.h"
#endif
#include "unwind_helpers.h"

#define CHAIN_LEN	60

static unsigned long chain_ra[CHAIN_LEN];
static unsigned long leaf_caller_ra;
static long chain_nr, chain_arg[3];
/* What the leaf calls: ut_syscall, or ut_spin for chain_spin(). */
static long (*chain_call)(long nr, long a, long b, long c) = ut_syscall;

/*
 * chain_00 calls chain_01 ... calls chain_59, which makes the system call.
 * Each records its own return address. The Makefile's -fno-inline and
 * -fno-optimize-sibling-calls keep every call a real call with a frame.
 */
#define CHAIN_FN(n, next)						\
	static long chain_##n(void)		\
	{								\
		chain_ra[1##n - 100] =					\
			(unsigned long)__builtin_return_address(0);	\
		return next() + 1;					\
	}

static long chain_leaf(void)
{
	leaf_caller_ra = (unsigned long)__builtin_return_address(0);
	/*
	 * No branch here: every run has the same return addresses, whichever
	 * function the pointer holds.
	 */
	return chain_call(chain_nr, chain_arg[0], chain_arg[1], chain_arg[2]);
}

CHAIN_FN(59, chain_leaf)
CHAIN_FN(58, chain_59) CHAIN_FN(57, chain_58) CHAIN_FN(56, chain_57)
CHAIN_FN(55, chain_56) CHAIN_FN(54, chain_55) CHAIN_FN(53, chain_54)
CHAIN_FN(52, chain_53) CHAIN_FN(51, chain_52) CHAIN_FN(50, chain_51)
CHAIN_FN(49, chain_50) CHAIN_FN(48, chain_49) CHAIN_FN(47, chain_48)
CHAIN_FN(46, chain_47) CHAIN_FN(45, chain_46) CHAIN_FN(44, chain_45)
CHAIN_FN(43, chain_44) CHAIN_FN(42, chain_43) CHAIN_FN(41, chain_42)
CHAIN_FN(40, chain_41) CHAIN_FN(39, chain_40) CHAIN_FN(38, chain_39)
CHAIN_FN(37, chain_38) CHAIN_FN(36, chain_37) CHAIN_FN(35, chain_36)
CHAIN_FN(34, chain_35) CHAIN_FN(33, chain_34) CHAIN_FN(32, chain_33)
CHAIN_FN(31, chain_32) CHAIN_FN(30, chain_31) CHAIN_FN(29, chain_30)
CHAIN_FN(28, chain_29) CHAIN_FN(27, chain_28) CHAIN_FN(26, chain_27)
CHAIN_FN(25, chain_26) CHAIN_FN(24, chain_25) CHAIN_FN(23, chain_24)
CHAIN_FN(22, chain_23) CHAIN_FN(21, chain_22) CHAIN_FN(20, chain_21)
CHAIN_FN(19, chain_20) CHAIN_FN(18, chain_19) CHAIN_FN(17, chain_18)
CHAIN_FN(16, chain_17) CHAIN_FN(15, chain_16) CHAIN_FN(14, chain_15)
CHAIN_FN(13, chain_14) CHAIN_FN(12, chain_13) CHAIN_FN(11, chain_12)
CHAIN_FN(10, chain_11) CHAIN_FN(09, chain_10) CHAIN_FN(08, chain_09)
CHAIN_FN(07, chain_08) CHAIN_FN(06, chain_07) CHAIN_FN(05, chain_06)
CHAIN_FN(04, chain_05) CHAIN_FN(03, chain_04) CHAIN_FN(02, chain_03)
CHAIN_FN(01, chain_02) CHAIN_FN(00, chain_01)

/* Every run of the chain enters it here, from the same call site. */
static long chain_run(long nr, long a, long b, long c)
{
	chain_nr = nr;
	chain_arg[0] = a;
	chain_arg[1] = b;
	chain_arg[2] = c;
	chain_call = ut_syscall;
	return chain_00();
}

/* Spin N turns in user mode at the end of the chain (ut_spin). */
static inline void chain_spin(long n)
{
	chain_nr = n;
	chain_call = ut_spin;
	chain_00();
	chain_call = ut_syscall;
}

/* Spend time in the kernel from the end of the chain: read /dev/zero. */
static inline void chain_read_zero(int rounds)
{
	static char buf[1 << 20];
	int fd = open("/dev/zero", O_RDONLY);

	for (int i = 0; i < rounds && fd >= 0; i++)
		chain_run(UT_SYS_READ, fd, (long)buf, sizeof(buf));
	close(fd);
}

/* Write cmd to the client's file from the end of the chain. */
static inline long chain_request(const char *file, const char *cmd)
{
	int fd = open(file, O_WRONLY);
	long ret;

	if (fd < 0)
		return -1;
	ret = chain_run(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd));
	close(fd);
	return ret;
}

#ifndef UNWIND_CHAIN_NO_HARNESS
/*
 * Code addresses are the same in every process forked from this one, so a
 * process checking a stack that another one (a child) walked learns the
 * expected return addresses by running the chain itself, harmlessly.
 */
static void chain_prime(void)
{
	chain_run(UT_SYS_GETPPID, 0, 0, 0);
}

/*
 * The stack of a system call made through the chain: the IP after the
 * syscall instruction, the return into chain_leaf (stored by ut_syscall),
 * chain_leaf's return into chain_59, chain_59 ... chain_00's returns; then
 * the callers.
 */
static inline int chain_matches_ips(struct __test_metadata *_metadata,
				    int nr, const unsigned long *ips)
{
	int i;

	if (!leaf_caller_ra)
		chain_prime();
	if (nr < CHAIN_LEN + 3) {
		TH_LOG("callback has %d entries, the chain alone is %d",
		       nr, CHAIN_LEN + 3);
		return 0;
	}
	if (ips[0] != (unsigned long)ut_syscall_ret) {
		TH_LOG("entry 0 is %#lx, not the syscall IP %p", ips[0],
		       ut_syscall_ret);
		return 0;
	}
	if (ips[1] != ut_leaf_ra) {
		TH_LOG("entry 1 is %#lx, not the return into the leaf %#lx",
		       ips[1], ut_leaf_ra);
		return 0;
	}
	if (ips[2] != leaf_caller_ra) {
		TH_LOG("entry 2 is %#lx, not the return into chain_59 %#lx",
		       ips[2], leaf_caller_ra);
		return 0;
	}
	for (i = 0; i < CHAIN_LEN; i++) {
		if (ips[3 + i] != chain_ra[CHAIN_LEN - 1 - i]) {
			TH_LOG("entry %d is %#lx, not chain_%02d's return %#lx",
			       3 + i, ips[3 + i], CHAIN_LEN - 1 - i,
			       chain_ra[CHAIN_LEN - 1 - i]);
			return 0;
		}
	}
	return 1;
}

static inline int chain_matches(struct __test_metadata *_metadata,
				struct ut_event *cb)
{
	return chain_matches_ips(_metadata, cb->nr, cb->ips);
}
#endif /* UNWIND_CHAIN_NO_HARNESS */

#endif /* UNWIND_CHAIN_H */
