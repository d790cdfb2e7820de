// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that spend their time in read() system calls and in user code,
 * started in two batches, so that some threads exist before perf attaches
 * (-p, -t) and some are created under inherited events. For the tests of
 * deferred user callchains: every kernel sample of every thread must get
 * its user chain, up to the thread's root function.
 *
 *   perf test -w deferthreads [THREADS [SECONDS [fork|signal]]]
 *
 * The second batch starts half way through the SECONDS. With "fork", a
 * child process does the same with threads of its own. With "signal", the
 * second batch starts on SIGUSR2 and everything ends on SIGUSR1 (SECONDS
 * is then only a limit), so that a test attaching to the process decides
 * when threads come and when the process exits, however slowly perf
 * starts.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/compiler.h>
#include "../tests.h"

#define DEFER_MAX_THREADS	64

/* The symbols the tests look for in the user chains. */
noinline void defer_work(int fd);
noinline void *defer_thread_root(void *arg);
noinline void defer_main_root(int fd, const struct timespec *until);

static struct timespec defer_end;
static unsigned long defer_sink;
/* Set by the signal handler: lock-free atomics, safe in a handler. */
static int defer_stop, defer_more;

static void defer_signal(int sig)
{
	if (sig == SIGUSR1)
		__atomic_store_n(&defer_stop, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&defer_more, 1, __ATOMIC_RELAXED);
}

static int defer_past(const struct timespec *t)
{
	struct timespec now;

	if (__atomic_load_n(&defer_stop, __ATOMIC_RELAXED))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static int defer_done(void)
{
	return defer_past(&defer_end);
}

/* One round: a 1 MiB read() from /dev/zero, then a little arithmetic. */
noinline void defer_work(int fd)
{
	static __thread char buf[1 << 20];
	unsigned long x = 1;

	if (read(fd, buf, sizeof(buf)) < 0)
		return;
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	__atomic_fetch_add(&defer_sink, x, __ATOMIC_RELAXED);
}

noinline void *defer_thread_root(void *arg __maybe_unused)
{
	int fd = open("/dev/zero", O_RDONLY);

	while (fd >= 0 && !defer_done())
		defer_work(fd);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Work until @until, or until SIGUSR2 asks for more threads. */
noinline void defer_main_root(int fd, const struct timespec *until)
{
	while (!defer_past(until) &&
	       !__atomic_load_n(&defer_more, __ATOMIC_RELAXED))
		defer_work(fd);
}

static void defer_run(int nthreads, int seconds, int by_signal)
{
	pthread_t th[DEFER_MAX_THREADS];
	struct timespec half;
	int n = 0, fd;

	clock_gettime(CLOCK_MONOTONIC, &defer_end);
	half = defer_end;
	defer_end.tv_sec += seconds;
	half.tv_sec += seconds / 2;
	half.tv_nsec += (seconds % 2) * 500000000L;
	if (half.tv_nsec >= 1000000000L) {
		half.tv_sec++;
		half.tv_nsec -= 1000000000L;
	}
	if (by_signal)
		half = defer_end;

	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		return;
	for (; n < nthreads / 2; n++)
		if (pthread_create(&th[n], NULL, defer_thread_root, NULL))
			break;
	defer_main_root(fd, &half);
	for (; n < nthreads; n++)
		if (pthread_create(&th[n], NULL, defer_thread_root, NULL))
			break;
	__atomic_store_n(&defer_more, 0, __ATOMIC_RELAXED);
	defer_main_root(fd, &defer_end);
	while (n--)
		pthread_join(th[n], NULL);
	close(fd);
}

static int deferthreads(int argc, const char **argv)
{
	int nthreads = argc > 0 ? atoi(argv[0]) : 4;
	int seconds = argc > 1 ? atoi(argv[1]) : 2;
	int do_fork = argc > 2 && !strcmp(argv[2], "fork");
	int by_signal = argc > 2 && !strcmp(argv[2], "signal");
	pid_t child = -1;

	if (nthreads < 0 || nthreads > DEFER_MAX_THREADS || seconds <= 0)
		return -1;
	if (by_signal) {
		signal(SIGUSR1, defer_signal);
		signal(SIGUSR2, defer_signal);
	}
	if (do_fork) {
		child = fork();
		if (child < 0)
			return -1;
	}
	defer_run(nthreads, seconds, by_signal);
	if (child == 0)
		_exit(0);
	if (child > 0 && waitpid(child, NULL, 0) != child)
		return -1;
	return 0;
}

DEFINE_WORKLOAD(deferthreads);
