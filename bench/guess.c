// SPDX-License-Identifier: GPL-2.0
/*
 * How good are guessed frames? The 60-frame chain of the selftests, built
 * without frame pointers and without SFrame (as distributions build most
 * code), reads its own stack at the end of the chain two ways, from one
 * function: glibc's backtrace(), which unwinds by .eh_frame and is the
 * truth here, and the kernel's walker through prctl(PR_USER_STACK_READ)
 * with guessing on (PR_SET_USER_STACK_GUESS), whose walk stops early and
 * guesses the rest. Each run prints
 *
 *   chain RUN TRUE REPORTED GUESSED MATCHED GUESSED_TRUE
 *
 * TRUE: frames backtrace() found above the reading function; REPORTED:
 * the kernel's entries above it (walked and guessed); MATCHED: the longest
 * common subsequence of the two; GUESSED_TRUE: guessed entries that are in
 * it. Recall is MATCHED / TRUE, precision GUESSED_TRUE / GUESSED.
 *
 *   guess RUNS
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stdint.h>
#include <sys/prctl.h>

#define UNWIND_CHAIN_NO_HARNESS
#include "../tools/testing/selftests/unwind/unwind_chain.h"
#include "../tools/testing/selftests/unwind/user_backtrace.h"

#define GUESSED_BIT		PR_USER_STACK_GUESSED
#define MAX_FRAMES		USER_BACKTRACE_MAX

static void *truth[MAX_FRAMES];
static uint64_t reported[MAX_FRAMES];
static int n_truth, n_reported;

/* The leaf of the chain: both reads, from this one function. */
static long read_both(long nr, long a, long b, long c)
{
	n_truth = backtrace(truth, MAX_FRAMES);
	n_reported = user_stack_read(reported, MAX_FRAMES, 0);
	return 0;
}

/* Longest common subsequence of t[1..] and r[1..]; marks r's matches. */
static int lcs(int *in_lcs)
{
	static short len[MAX_FRAMES + 1][MAX_FRAMES + 1];
	int nt = n_truth - 1, nr = n_reported - 1, i, j;

	for (i = nt - 1; i >= 0; i--)
		for (j = nr - 1; j >= 0; j--) {
			uint64_t r = reported[1 + j] & ~GUESSED_BIT;

			if ((uint64_t)(uintptr_t)truth[1 + i] == r)
				len[i][j] = len[i + 1][j + 1] + 1;
			else
				len[i][j] = len[i + 1][j] > len[i][j + 1] ?
					    len[i + 1][j] : len[i][j + 1];
		}
	for (i = 0, j = 0; i < nt && j < nr; ) {
		uint64_t r = reported[1 + j] & ~GUESSED_BIT;

		if ((uint64_t)(uintptr_t)truth[1 + i] == r) {
			in_lcs[1 + j] = 1;
			i++;
			j++;
		} else if (len[i + 1][j] >= len[i][j + 1]) {
			i++;
		} else {
			j++;
		}
	}
	return len[0][0];
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5;

	if (prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0)) {
		perror("PR_SET_USER_STACK_GUESS");
		return 1;
	}
	for (int run = 0; run < runs; run++) {
		int in_lcs[MAX_FRAMES] = { 0 }, guessed = 0, guessed_true = 0;
		int matched;

		chain_run(UT_SYS_GETPPID, 0, 0, 0);	/* binds lazy symbols */
		chain_call = read_both;
		chain_00();
		chain_call = ut_syscall;
		if (n_reported < 1 || n_truth < 1) {
			fprintf(stderr, "no stack: kernel %d, backtrace %d\n",
				n_reported, n_truth);
			return 1;
		}
		matched = lcs(in_lcs);
		for (int j = 1; j < n_reported; j++) {
			if (!(reported[j] & GUESSED_BIT))
				continue;
			guessed++;
			guessed_true += in_lcs[j];
		}
		printf("chain %d %d %d %d %d %d\n", run, n_truth - 1,
		       n_reported - 1, guessed, matched, guessed_true);
	}
	return 0;
}
