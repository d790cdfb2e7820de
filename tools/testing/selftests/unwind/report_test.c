// SPDX-License-Identifier: GPL-2.0
/*
 * Self-unwinding by signal (prctl(PR_USER_STACK_SIGNAL), PR_USER_STACK_REPORT).
 *
 * A small bytecode interpreter, written for the test, runs functions that
 * exist only as bytecode: no kernel walker can name them. Its system calls
 * make deferred requests (the test client, client A); the kernel answers
 * them with the native stack as always, and sends the opted-in signal with
 * the entry's cookie. The handler walks the interpreter's own call frames
 * and reports them; the report comes out as the event
 * unwind_report:unwind_user_report with the cookie of the native stack.
 *
 * Also: the opt-in's errors, reports refused (foreign, stale, forged,
 * repeated cookies, too many entries, bad pointer, bad flags), a handler
 * that never reports, a blocked signal, a handler removed after the
 * opt-in, a handler that faults, exec and exit with the signal pending. In
 * every case each request still gets its native stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "unwind_helpers.h"
#include "../kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define REPORT_EVENT	TRACEFS "/events/unwind_report/unwind_user_report"

#include "minivm.h"

/* The interpreter's program. */
static const unsigned char code_main[] = { OP_CALL, 1, OP_CALL, 3, OP_RET };
static const unsigned char code_parse[] = { OP_CALL, 2, OP_RET };
static const unsigned char code_read[] = { OP_SYS, OP_RET };
static const unsigned char code_eval[] = { OP_CALL, 2, OP_SYS, OP_RET };

static const struct vm_fn vm_fns[] = {
	{ "main", code_main },
	{ "parse", code_parse },
	{ "read_input", code_read },
	{ "eval", code_eval },
};

#define VM_FNS		ARRAY_SIZE(vm_fns)
/* Offset from vm_text of function FN at bytecode offset PC. */
#define FN(fn, pc)	((fn) * VM_FN_SIZE + (pc))

static void vm_sys(void)
{
	ut_write(UT_DIR "/request", "task 1 1");
}

/* What the handler saw and did, for the test to check. */
#define MAX_SIGNALS	512

static struct {
	int		mode;		/* REPORT, SILENT or FAULT */
	int		n;
	int		bad_code;
	uint64_t	cookie[MAX_SIGNALS];
	int		nr[MAX_SIGNALS];
	uint64_t	frames[MAX_SIGNALS][8];
	long		ret[MAX_SIGNALS];
} seen;

enum { REPORT, SILENT, FAULT };

/* NULL: where a faulting handler writes. */
static int *fault_here;

static void on_unwind(int sig, siginfo_t *si, void *uc)
{
	int i = seen.n;

	if (si->si_code != SI_UNWIND) {
		seen.bad_code++;
		return;
	}
	if (seen.mode == FAULT)
		*fault_here = 0;
	if (i == MAX_SIGNALS)
		return;
	seen.n++;
	seen.cookie[i] = (uint64_t)(uintptr_t)si->si_value.sival_ptr;
	seen.nr[i] = vm_frames(seen.frames[i]);
	if (seen.mode == REPORT)
		seen.ret[i] = prctl(PR_USER_STACK_REPORT, seen.cookie[i],
				    seen.frames[i], seen.nr[i], 0) ? -errno : 0;
}

static int install(int sig)
{
	struct sigaction sa = { .sa_sigaction = on_unwind,
				.sa_flags = SA_SIGINFO | SA_RESTART };

	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL);
}

static void vm_setup(int mode)
{
	memset(&seen, 0, sizeof(seen));
	seen.mode = mode;
	if (!vm_text) {
		vm_load(vm_fns, VM_FNS);
		vm_map_text();
	}
}

static int trace_setup(void)
{
	char filter[64];
	int fd;

	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	if (ut_write(REPORT_EVENT "/filter", filter) ||
	    ut_write(REPORT_EVENT "/enable", "1"))
		return -1;
	/* Opening the trace with O_TRUNC empties it. */
	fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void trace_stop(void)
{
	ut_write(REPORT_EVENT "/enable", "0");
}

struct report {
	uint64_t	cookie;
	int		opaque;
	int		nr;
	uint64_t	e[8];
};

/* Parse the reports in the trace: "cookie=0x.. ips nr=N entries={0x..,..}". */
static int trace_reports(struct report *out, int max)
{
	static char buf[1 << 20];
	char *line, *save;
	ssize_t len = 0, r;
	int fd, n = 0;

	fd = open(TRACEFS "/trace", O_RDONLY);
	if (fd < 0)
		return -1;
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "unwind_user_report: cookie="), kind[8];
		unsigned long long cookie;
		struct report *rep = &out[n];

		if (!p || sscanf(p, "unwind_user_report: cookie=%llx %7s nr=%d",
				 &cookie, kind,
				 &rep->nr) != 3)
			continue;
		rep->cookie = cookie;
		rep->opaque = !strcmp(kind, "opaque");
		p = strstr(p, "entries={");
		for (int k = 0; p && k < rep->nr && k < 8; k++) {
			p += k ? 1 : strlen("entries={");
			rep->e[k] = strtoull(p, &p, 16);
		}
		n++;
	}
	return n;
}

static int callbacks_with_cookie(struct ut_log *log, uint64_t cookie)
{
	int n = 0;

	for (int i = 0; i < log->n; i++)
		n += log->ev[i].kind == UT_CB && log->ev[i].client == 'A' &&
		     log->ev[i].pid == getpid() && log->ev[i].cookie == cookie;
	return n;
}

static long report(uint64_t cookie, const void *buf, unsigned long nr,
		   unsigned long flags)
{
	return prctl(PR_USER_STACK_REPORT, cookie, buf, nr, flags) ? -errno : 0;
}

TEST(opt_in)
{
	int sig = SIGRTMIN + 1;

	signal(sig, SIG_DFL);
	/* The handler comes first. */
	ASSERT_EQ(-1, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(-1, prctl(PR_USER_STACK_SIGNAL, SIGKILL, 0, 0, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, prctl(PR_USER_STACK_SIGNAL, 65, 0, 0, 0));
	ASSERT_EQ(EINVAL, errno);
	/* Signals with a meaning of their own, handled or not. */
	for (int i = 0; i < 6; i++) {
		static const int special[] = {
			SIGCONT, SIGCHLD, SIGTSTP, SIGSEGV, SIGALRM, SIGPIPE,
		};

		ASSERT_EQ(0, install(special[i]));
		errno = 0;
		EXPECT_EQ(-1, prctl(PR_USER_STACK_SIGNAL, special[i], 0, 0, 0));
		EXPECT_EQ(EINVAL, errno);
		signal(special[i], SIG_DFL);
	}
	ASSERT_EQ(0, install(SIGUSR2));
	EXPECT_EQ(0, prctl(PR_USER_STACK_SIGNAL, SIGUSR2, 0, 0, 0));
	signal(SIGUSR2, SIG_DFL);
	ASSERT_EQ(-1, prctl(PR_USER_STACK_SIGNAL, sig, 1, 0, 0));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
	/* Nothing was signalled, so nothing can be reported. */
	ASSERT_EQ(-ENOENT, report(0x1234, NULL, 0, 0));
}

/*
 * Another process cannot forge the kernel's request: SI_UNWIND is a code
 * rt_sigqueueinfo() refuses to send to other processes.
 */
TEST(not_forgeable)
{
	int status, sig = SIGRTMIN + 1;
	pid_t pid;

	/* Installed first: a forged signal must not kill the test. */
	ASSERT_EQ(0, install(sig));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		siginfo_t si = { 0 };

		si.si_signo = sig;
		si.si_code = SI_UNWIND;
		si.si_value.sival_ptr = (void *)0x1234;
		if (!syscall(SYS_rt_sigqueueinfo, getppid(), sig, &si))
			_exit(1);
		_exit(errno == EPERM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("another process sent SI_UNWIND");
	}
	signal(sig, SIG_DFL);
}

/* The interpreter's frames come out under the native stack's cookie. */
TEST(interpreted_frames)
{
	int sig = SIGRTMIN + 1, runs = 20, nreports;
	static struct report reps[64];
	static struct ut_log log;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	ASSERT_EQ(0, trace_setup());
	vm_setup(REPORT);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	ut_drain();
	for (int i = 0; i < runs; i++)
		vm_run(0);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
	ASSERT_EQ(0, ut_read_events(&log));
	nreports = trace_reports(reps, 64);
	trace_stop();

	/*
	 * Three system calls per run, each reported as the interpreter's
	 * frames (function + bytecode offset after the current op):
	 * read_input <- parse <- main, read_input <- eval <- main, and
	 * eval <- main.
	 */
	ASSERT_EQ(0, seen.bad_code);
	ASSERT_EQ(3 * runs, seen.n);
	ASSERT_EQ(3 * runs, ut_count(&log, getpid(), UT_CB, 'A'));
	ASSERT_EQ(3 * runs, nreports);
	for (int i = 0; i < seen.n; i++) {
		static const int want[3][4] = {
			{ 3, FN(2, 1), FN(1, 2), FN(0, 2) },
			{ 3, FN(2, 1), FN(3, 2), FN(0, 4) },
			{ 2, FN(3, 3), FN(0, 4) },
		};
		const int *w = want[i % 3];

		ASSERT_EQ(0, seen.ret[i]);
		/* The report belongs to exactly one native stack. */
		ASSERT_EQ(1, callbacks_with_cookie(&log, seen.cookie[i]));
		ASSERT_EQ(seen.cookie[i], reps[i].cookie);
		ASSERT_EQ(0, reps[i].opaque);
		ASSERT_EQ(w[0], reps[i].nr);
		for (int k = 0; k < w[0]; k++)
			ASSERT_EQ(vm_text + w[k + 1], reps[i].e[k]);
	}
}

/*
 * Reports traced with a deferred user stack each (userstacktrace_delay):
 * the report's own entry makes a request, which must not signal again, or
 * every report would ask for the next one.
 */
TEST(report_entry_quiet)
{
	int sig = SIGRTMIN + 1, runs = 10;
	static struct report reps[64];
	int nreports;

	if (!ut_available() ||
	    access(TRACEFS "/options/userstacktrace_delay", W_OK))
		SKIP(return, "no test client or no userstacktrace_delay");
	ASSERT_EQ(0, trace_setup());
	ASSERT_EQ(0, ut_write(TRACEFS "/options/userstacktrace_delay", "1"));
	vm_setup(REPORT);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	for (int i = 0; i < runs; i++)
		vm_run(0);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
	ut_write(TRACEFS "/options/userstacktrace_delay", "0");
	nreports = trace_reports(reps, 64);
	trace_stop();
	ASSERT_EQ(3 * runs, seen.n);
	ASSERT_EQ(3 * runs, nreports);
}

static uint64_t thread_cookie;
static long thread_ret;

static void *report_foreign(void *arg)
{
	thread_ret = report(thread_cookie, NULL, 0, 0);
	return NULL;
}

/* Reports for anything but this thread's own recent cookies are refused. */
TEST(refused_reports)
{
	uint64_t frames[PR_USER_STACK_REPORT_MAX + 1] = { 0 };
	int status, sig = SIGRTMIN + 1;
	pthread_t t;
	pid_t pid;
	uint64_t c;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	vm_setup(SILENT);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	vm_sys();
	ASSERT_EQ(1, seen.n);
	c = seen.cookie[0];
	ASSERT_NE(0, c);

	ASSERT_EQ(-ENOENT, report(c + 1, frames, 1, 0));
	ASSERT_EQ(-EINVAL, report(0, frames, 1, 0));
	ASSERT_EQ(-E2BIG, report(c, frames, PR_USER_STACK_REPORT_MAX + 1, 0));
	ASSERT_EQ(-EINVAL, report(c, frames, 1, 2));
	ASSERT_EQ(-EFAULT, report(c, (void *)8, 1, 0));
	thread_cookie = c;
	ASSERT_EQ(0, pthread_create(&t, NULL, report_foreign, NULL));
	pthread_join(t, NULL);
	ASSERT_EQ(-ENOENT, thread_ret);
	/* Nor can a child of fork(): it starts with no cookie at all. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(report(c, NULL, 0, 0) == -ENOENT ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	/* Still acceptable after all that, once. */
	ASSERT_EQ(0, report(c, frames, PR_USER_STACK_REPORT_MAX,
			    PR_USER_STACK_REPORT_OPAQUE));
	ASSERT_EQ(-ENOENT, report(c, frames, 1, 0));

	/* A cookie older than the window is refused. */
	for (int i = 0; i < 8; i++) {
		vm_sys();
		ASSERT_EQ(0, report(seen.cookie[seen.n - 1], NULL, 0, 0));
	}
	ASSERT_EQ(9, seen.n);
	ASSERT_EQ(-ENOENT, report(seen.cookie[1], NULL, 0, 0));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * A handler that never reports gets a signal at most once per wait
 * (100 ms), however many entries are walked; every request still gets its
 * native stack.
 */
TEST(never_reports)
{
	int sig = SIGRTMIN + 1, requests = 0, callbacks = 0;
	static struct ut_log log;
	long long start, ms;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	vm_setup(SILENT);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	ut_drain();
	start = now_ms();
	for (int batch = 0; batch < 4; batch++) {
		for (int i = 0; i < 50; i++, requests++)
			vm_sys();
		ASSERT_EQ(0, ut_read_events(&log));
		ASSERT_EQ(0, log.overflow);
		callbacks += ut_count(&log, getpid(), UT_CB, 'A');
	}
	ms = now_ms() - start;
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
	ASSERT_EQ(requests, callbacks);
	ASSERT_GE(seen.n, 1);
	ASSERT_LE(seen.n, 2 + ms / 100);
	TH_LOG("%d requests in %lld ms: %d signals", requests, ms, seen.n);
}

/* A blocked signal stays pending, once; requests go on being answered. */
TEST(blocked)
{
	int sig = SIGRTMIN + 1;
	static struct ut_log log;
	sigset_t set, pending;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	vm_setup(REPORT);
	ASSERT_EQ(0, install(sig));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	sigemptyset(&set);
	sigaddset(&set, sig);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	ut_drain();
	for (int i = 0; i < 50; i++)
		vm_sys();
	ASSERT_EQ(0, ut_read_events(&log));
	ASSERT_EQ(50, ut_count(&log, getpid(), UT_CB, 'A'));
	ASSERT_EQ(0, sigpending(&pending));
	ASSERT_TRUE(sigismember(&pending, sig));
	ASSERT_EQ(0, seen.n);
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &set, NULL));
	ASSERT_EQ(1, seen.n);
	/* Its cookie is the first entry's, still in the window. */
	ASSERT_EQ(0, seen.ret[0]);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
}

/* Without a handler any more, nothing is sent: SIGUSR1 would kill. */
TEST(handler_removed)
{
	static struct ut_log log;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	vm_setup(REPORT);
	ASSERT_EQ(0, install(SIGUSR1));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, SIGUSR1, 0, 0, 0));
	signal(SIGUSR1, SIG_DFL);
	ut_drain();
	vm_sys();
	ASSERT_EQ(0, ut_read_events(&log));
	ASSERT_EQ(1, ut_count(&log, getpid(), UT_CB, 'A'));
	ASSERT_EQ(0, seen.n);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
}

/* A process that did not opt in gets nothing. */
TEST(not_opted_in)
{
	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	vm_setup(REPORT);
	ASSERT_EQ(0, install(SIGRTMIN + 1));
	vm_sys();
	ASSERT_EQ(0, seen.n);
}

/* Run @fn in a child; return its wait status. */
static int in_child(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void child_faults(void)
{
	vm_setup(FAULT);
	install(SIGRTMIN + 1);
	prctl(PR_USER_STACK_SIGNAL, SIGRTMIN + 1, 0, 0, 0);
	vm_sys();
}

/* A handler that faults kills its process, as any handler would. */
TEST(handler_faults)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_faults);
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGSEGV, WTERMSIG(status));
}

static void block_and_request_sig(int sig)
{
	sigset_t set;

	install(sig);
	prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
	vm_sys();
}

static void block_and_request(void)
{
	block_and_request_sig(SIGRTMIN + 1);
}

/*
 * The program a child execs with the signal pending: it has no handler,
 * and unblocks every signal, so a pending unwind signal left for it would
 * kill it (the default action of real-time signals).
 */
static void __attribute__((constructor)) exec_target(void)
{
	sigset_t none;

	if (!getenv("REPORT_TEST_EXEC_TARGET"))
		return;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	_exit(7);
}

static void child_execs_pending(void)
{
	block_and_request();
	execle("/proc/self/exe", "report_test", (char *)NULL,
	       (char *[]){ "REPORT_TEST_EXEC_TARGET=1", NULL });
	_exit(99);
}

/* Exec the target, the unwind signal pending: 99 if exec fails. */
static void exec_target_now(void)
{
	execle("/proc/self/exe", "report_test", (char *)NULL,
	       (char *[]){ "REPORT_TEST_EXEC_TARGET=1", NULL });
	_exit(99);
}

/* Pending, then opted out: the signal is still the kernel's. */
static void child_execs_opted_out(void)
{
	block_and_request();
	if (prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0))
		_exit(98);
	exec_target_now();
}

/* Pending, then switched to another signal: the first is still pending. */
static void child_execs_switched(void)
{
	block_and_request();
	install(SIGUSR2);
	if (prctl(PR_USER_STACK_SIGNAL, SIGUSR2, 0, 0, 0))
		_exit(98);
	exec_target_now();
}

/* The same with SIGUSR1, a signal queued once at most, then opted out. */
static void child_execs_usr1_opted_out(void)
{
	block_and_request_sig(SIGUSR1);
	if (prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0))
		_exit(98);
	exec_target_now();
}

static void child_exits_pending(void)
{
	block_and_request();
	_exit(5);
}

TEST(exec_pending)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_execs_pending);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(7, WEXITSTATUS(status));
}

/*
 * Exec drops the unwind signal left pending whatever the process opted in
 * to since it was sent: the new program would die of it.
 */
TEST(exec_pending_after_opt_out)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_execs_opted_out);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(7, WEXITSTATUS(status));
}

TEST(exec_pending_after_switch)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_execs_switched);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(7, WEXITSTATUS(status));
}

TEST(exec_pending_usr1_after_opt_out)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_execs_usr1_opted_out);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(7, WEXITSTATUS(status));
}

TEST(exit_pending)
{
	int status;

	if (!ut_available())
		SKIP(return, "unwind_test client not loaded");
	status = in_child(child_exits_pending);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(5, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
