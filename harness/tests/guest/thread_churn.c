// SPDX-License-Identifier: GPL-2.0
/*
 * Short-lived threads, for perf-threads.sh: THREADS threads, four at a
 * time, each making CALLS getppid() system calls and exiting. perf keeps
 * state per thread for deferred callchains; a recording of this program
 * shows whether it is given back when each thread exits.
 *
 *   thread_churn THREADS CALLS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static long calls;

static void *churn(void *arg)
{
	for (long i = 0; i < calls; i++)
		syscall(SYS_getppid);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t th[4];
	long threads;

	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS CALLS\n", argv[0]);
		return 2;
	}
	threads = atol(argv[1]);
	calls = atol(argv[2]);
	for (long done = 0; done < threads; done += 4) {
		int n = 0;

		for (int i = 0; i < 4 && done + i < threads; i++)
			n += !pthread_create(&th[n], NULL, churn, NULL);
		while (n--)
			pthread_join(th[n], NULL);
	}
	return 0;
}
