// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack unwinding, seen from user space through the test
 * client (CONFIG_UNWIND_USER_TEST_CLIENT, debugfs unwind_test/).
 *
 * Requests are made from the end of a chain of 60 distinct frame-pointer
 * functions; the stack each callback receives must be exactly that chain.
 * Built twice: as a 64-bit program and as a 32-bit (compat) one.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"

static struct ut_log log_;

/* Every test needs the test client, and starts with an empty log. */
FIXTURE(unwind) {
	int unused;
};

FIXTURE_SETUP(unwind)
{
	if (!ut_available())
		SKIP(return, "test client not loaded (%s)", UT_DIR);
	ut_drain();
}

FIXTURE_TEARDOWN(unwind)
{
}

/* One request from ctx: one callback, same cookie, the whole chain. */
static void one_request(struct __test_metadata *_metadata, const char *ctx)
{
	struct ut_event *req, *cb;
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "%s 1 1", ctx);
	ASSERT_EQ(strlen(cmd), chain_request(UT_DIR "/request", cmd) - CHAIN_LEN);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_REQ, 'A'));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	req = ut_find(&log_, getpid(), UT_REQ, 'A');
	cb = ut_find(&log_, getpid(), UT_CB, 'A');
	EXPECT_STREQ(ctx, req->ctx);
	EXPECT_EQ(0, req->ret);
	EXPECT_NE(0, req->cookie);
	EXPECT_EQ(req->cookie, cb->cookie);
	EXPECT_TRUE(chain_matches(_metadata, cb));
}

TEST_F(unwind, task_context)
{
	one_request(_metadata, "task");
}

TEST_F(unwind, irq_context)
{
	one_request(_metadata, "irq");
}

TEST_F(unwind, nmi_context)
{
	one_request(_metadata, "nmi");
}

/* 100 requests each from two clients in one system call: one cookie. */
TEST_F(unwind, many_requests_one_entry)
{
	struct ut_event *a, *b;
	int i, want, first[2] = { 0, 0 };

	chain_request(UT_DIR "/request", "nmi 100 3");
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(200, ut_count(&log_, getpid(), UT_REQ, 0));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'B'));
	/* However many requests and clients: one walk. */
	EXPECT_EQ(1, ut_count(&log_, getpid(), UT_WALK, 0));
	a = ut_find(&log_, getpid(), UT_CB, 'A');
	b = ut_find(&log_, getpid(), UT_CB, 'B');
	for (i = 0; i < log_.n; i++) {
		struct ut_event *ev = &log_.ev[i];

		if (ev->kind != UT_REQ)
			continue;
		EXPECT_EQ(a->cookie, ev->cookie);
		/* The first request per client queues, the rest join it. */
		want = first[ev->client - 'A']++ ? 1 : 0;
		EXPECT_EQ(want, ev->ret);
	}
	EXPECT_EQ(a->cookie, b->cookie);
	EXPECT_EQ(a->nr, b->nr);
	EXPECT_EQ(0, memcmp(a->ips, b->ips, a->nr * sizeof(*a->ips)));
	EXPECT_TRUE(chain_matches(_metadata, a));
}

/* Each kernel entry has a cookie of its own. */
TEST_F(unwind, new_entry_new_cookie)
{
	uint64_t first;

	chain_request(UT_DIR "/request", "task 1 1");
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_TRUE(!!(ut_find(&log_, getpid(), UT_CB, 'A')));
	first = ut_find(&log_, getpid(), UT_CB, 'A')->cookie;
	chain_request(UT_DIR "/request", "task 1 1");
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_TRUE(!!(ut_find(&log_, getpid(), UT_CB, 'A')));
	EXPECT_NE(first, ut_find(&log_, getpid(), UT_CB, 'A')->cookie);
}

/*
 * Requests made while the callbacks run (A's callback asks for A and B):
 * A's says "already done" with the same cookie, B's is answered in the
 * same entry with the same stack, and nothing is walked or called twice.
 */
TEST_F(unwind, late_requests)
{
	struct ut_event *a, *b;
	int i, late = 0;

	chain_request(UT_DIR "/request", "task 1 1 late");
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'B'));
	/* B's callback came in a second pass, from the cached walk. */
	EXPECT_EQ(1, ut_count(&log_, getpid(), UT_WALK, 0));
	a = ut_find(&log_, getpid(), UT_CB, 'A');
	b = ut_find(&log_, getpid(), UT_CB, 'B');
	for (i = 0; i < log_.n; i++) {
		struct ut_event *ev = &log_.ev[i];

		if (ev->kind != UT_REQ || strcmp(ev->ctx, "callback"))
			continue;
		late++;
		EXPECT_EQ(a->cookie, ev->cookie);
		EXPECT_EQ(ev->client == 'A' ? 2 : 0, ev->ret);
	}
	EXPECT_EQ(2, late);
	EXPECT_EQ(a->cookie, b->cookie);
	EXPECT_TRUE(chain_matches(_metadata, b));
}

/* A request in fork() is the parent's; the child starts clean. */
TEST_F(unwind, fork_child_clean)
{
	struct ut_event *cb;
	int status, i;
	pid_t child;

	ASSERT_EQ(0, ut_write(UT_DIR "/arm", "kernel_clone 1"));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		/* The child's own request gets a cookie and a stack of its own. */
		chain_request(UT_DIR "/request", "task 1 2");
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	ASSERT_EQ(1, ut_count(&log_, child, UT_CB, 'B'));
	EXPECT_EQ(0, ut_count(&log_, child, UT_CB, 'A'));
	cb = ut_find(&log_, child, UT_CB, 'B');
	EXPECT_NE(ut_find(&log_, getpid(), UT_CB, 'A')->cookie, cb->cookie);
	EXPECT_TRUE(chain_matches(_metadata, cb));
	for (i = 0; i < log_.n; i++)
		EXPECT_TRUE(log_.ev[i].kind != UT_CB || log_.ev[i].nr > 0);
}

/*
 * Wait for @child to exit with @code, then find its one request and one
 * callback of client A, which must share a cookie: the callback in @cb,
 * NULL if any of that failed.
 */
static void child_answer(struct __test_metadata *_metadata, pid_t child,
			 int code, struct ut_event **cb)
{
	int status;

	*cb = NULL;
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(code, WEXITSTATUS(status));
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, child, UT_REQ, 'A'));
	ASSERT_EQ(1, ut_count(&log_, child, UT_CB, 'A'));
	ASSERT_EQ(ut_find(&log_, child, UT_REQ, 'A')->cookie,
		  ut_find(&log_, child, UT_CB, 'A')->cookie);
	*cb = ut_find(&log_, child, UT_CB, 'A');
}

/*
 * A request made in execve() before the old image goes is answered with
 * the old image's stack (the chain), not the new one's.
 */
TEST_F(unwind, exec_delivers_old_stack)
{
	static const char * const argv[] = { "/bin/true", NULL };
	struct ut_event *cb;
	pid_t child;

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		if (ut_write(UT_DIR "/arm", "begin_new_exec 1"))
			_exit(2);
		chain_run(UT_SYS_EXECVE, (long)argv[0], (long)argv, 0);
		_exit(3);
	}
	child_answer(_metadata, child, 0, &cb);
	ASSERT_TRUE(!!cb);
	EXPECT_TRUE(chain_matches(_metadata, cb));
}

/* A request made in exit_group() is answered before the memory goes. */
TEST_F(unwind, exit_delivers_stack)
{
	struct ut_event *cb;
	pid_t child;

	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		if (ut_write(UT_DIR "/arm", "do_group_exit 1"))
			_exit(2);
		chain_run(UT_SYS_EXIT_GROUP, 7, 0, 0);
		_exit(3);
	}
	child_answer(_metadata, child, 7, &cb);
	ASSERT_TRUE(!!cb);
	EXPECT_TRUE(chain_matches(_metadata, cb));
}

/*
 * Hostile stacks: the system call runs with the frame pointer register
 * pointing at crafted frames. The walk must end cleanly with the frames
 * before the bad one.
 */
struct fake_frame {
	unsigned long next;
	unsigned long ra;
};

static struct ut_event *hostile(struct __test_metadata *_metadata,
				struct fake_frame *f)
{
	int fd = open(UT_DIR "/request", O_WRONLY);
	static const char cmd[] = "task 1 1";

	if (fd < 0)
		return NULL;
	ut_syscall_fp(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd), (unsigned long)f);
	close(fd);
	if (ut_read_events(&log_) || ut_count(&log_, getpid(), UT_CB, 'A') != 1)
		return NULL;
	return ut_find(&log_, getpid(), UT_CB, 'A');
}

/* Return addresses inside this program's text. */
#define TEXT_RA(n)	((unsigned long)chain_00 + 4 * (n) + 1)

static struct fake_frame *fake_frames(void)
{
	static struct fake_frame f[8];
	int i;

	for (i = 0; i < 8; i++) {
		f[i].next = i < 7 ? (unsigned long)&f[i + 1] : 0;
		f[i].ra = TEXT_RA(i);
	}
	return f;
}

static void expect_fake(struct __test_metadata *_metadata,
			struct ut_event *cb, int frames)
{
	int i;

	ASSERT_TRUE(!!(cb));
	EXPECT_EQ(frames + 1, cb->nr);
	EXPECT_EQ((unsigned long)ut_syscall_fp_ret, cb->ips[0]);
	for (i = 0; i < frames && i + 1 < cb->nr; i++)
		EXPECT_EQ(TEXT_RA(i), cb->ips[i + 1]);
}

TEST_F(unwind, hostile_good_fake_chain)
{
	expect_fake(_metadata, hostile(_metadata, fake_frames()), 8);
}

TEST_F(unwind, hostile_loop)
{
	struct fake_frame *f;

	f = fake_frames();
	f[2].next = (unsigned long)&f[1];
	expect_fake(_metadata, hostile(_metadata, f), 3);
	f = fake_frames();
	f[2].next = (unsigned long)&f[2];
	expect_fake(_metadata, hostile(_metadata, f), 3);
}

TEST_F(unwind, hostile_kernel_address)
{
	struct fake_frame *f;

	f = fake_frames();
	f[1].next = (unsigned long)-4096L * 1024;
	expect_fake(_metadata, hostile(_metadata, f), 2);
}

TEST_F(unwind, hostile_unmapped)
{
	struct fake_frame *f;
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(page != MAP_FAILED);
	ASSERT_EQ(0, munmap(page, 4096));
	f = fake_frames();
	f[1].next = (unsigned long)page + 64;
	expect_fake(_metadata, hostile(_metadata, f), 2);
}

TEST_F(unwind, hostile_misaligned)
{
	struct fake_frame *f;

	f = fake_frames();
	f[1].next = (unsigned long)&f[2] + 3;
	expect_fake(_metadata, hostile(_metadata, f), 2);
}

TEST_F(unwind, hostile_return_address_not_text)
{
	struct fake_frame *f;

	f = fake_frames();
	f[3].ra = (unsigned long)&f[0];
	expect_fake(_metadata, hostile(_metadata, f), 3);
	f = fake_frames();
	f[3].ra = 0;
	expect_fake(_metadata, hostile(_metadata, f), 3);
}

/* Fake frames whose return addresses start at TEXT_RA(first). */
static void fake_frames_from(struct fake_frame *f, int first)
{
	int i;

	for (i = 0; i < 8; i++) {
		f[i].next = i < 7 ? (unsigned long)&f[i + 1] : 0;
		f[i].ra = TEXT_RA(first + i);
	}
}

/*
 * A tracer rewrites the frame pointer of a tracee stopped at the exit of
 * a system call in which the tracee asked for its stack: the request is
 * answered with the stack it was made for (fake frames A), not with the
 * one the tracee returns to (fake frames B). ut_syscall_fp() restores the
 * tracee's own frame pointer from its stack, so the rewrite is harmless.
 */
TEST_F(unwind, tracer_rewrites_registers)
{
	static struct fake_frame a[8], b[8];
	static const char cmd[] = "task 1 1";
	struct user_regs_struct regs;
	int status, fd, stops = 0;
	struct ut_event *cb;
	pid_t child;

	fake_frames_from(a, 0);
	fake_frames_from(b, 20);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		fd = open(UT_DIR "/request", O_WRONLY);
		if (fd < 0 || ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(2);
		raise(SIGSTOP);
		ut_syscall_fp(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd),
			      (unsigned long)a);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	/* Syscall stops until the exit of the write made with frames A. */
	for (;;) {
		ASSERT_EQ(0, ptrace(PTRACE_SYSCALL, child, 0, 0));
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_TRUE(WIFSTOPPED(status));
		ASSERT_EQ(0, ptrace(PTRACE_GETREGS, child, 0, &regs));
#ifdef __x86_64__
		if (regs.rbp == (unsigned long)a && ++stops == 2) {
			regs.rbp = (unsigned long)b;
			break;
		}
#else
		if (regs.ebp == (long)a && ++stops == 2) {
			regs.ebp = (long)b;
			break;
		}
#endif
	}
	ASSERT_EQ(0, ptrace(PTRACE_SETREGS, child, 0, &regs));
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, child, 0, 0));
	child_answer(_metadata, child, 0, &cb);
	ASSERT_TRUE(!!cb);
	EXPECT_EQ(9, cb->nr);
	EXPECT_EQ((unsigned long)ut_syscall_fp_ret, cb->ips[0]);
	if (cb->nr > 1)
		EXPECT_EQ(TEXT_RA(0), cb->ips[1]);
}

#ifdef __x86_64__
#define SIGRETURN_SYM		"__x64_sys_rt_sigreturn"
#define RESTORE_ALTSTACK_SYM	"restore_altstack"
#else
#define SIGRETURN_SYM		"__ia32_compat_sys_rt_sigreturn"
#define RESTORE_ALTSTACK_SYM	"compat_restore_altstack"
#endif

static void empty_handler(int sig, siginfo_t *info, void *uc)
{
}

/*
 * rt_sigreturn() swaps the handler's registers for the interrupted ones
 * inside one entry. Client A asks on the way in (the handler's stack,
 * which starts in the restorer), client B from restore_altstack(): two
 * records, two cookies. In the compat sigreturn that comes after the
 * registers are back, and B gets the interrupted stack, the chain that
 * sent itself the signal. The 64-bit one restores the alternate stack
 * before the registers, while the entry is sealed: B is refused.
 */
TEST_F(unwind, sigreturn_splits_entry)
{
	struct sigaction sa = { .sa_sigaction = empty_handler,
				.sa_flags = SA_SIGINFO };
	struct ut_event *cb_a, *req_b;
#ifndef __x86_64__
	struct ut_event *cb_b;
#endif
	unsigned long restorer;
	char cmd[64];

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGUSR1, NULL, &sa));
	restorer = (unsigned long)sa.sa_restorer;
	snprintf(cmd, sizeof(cmd), "%s 1", SIGRETURN_SYM);
	if (ut_write(UT_DIR "/arm", cmd))
		SKIP(return, "cannot probe %s", SIGRETURN_SYM);
	snprintf(cmd, sizeof(cmd), "%s 2", RESTORE_ALTSTACK_SYM);
	if (ut_write(UT_DIR "/arm", cmd))
		SKIP(return, "cannot probe %s", RESTORE_ALTSTACK_SYM);
	chain_run(UT_SYS_KILL, getpid(), SIGUSR1, 0);
	signal(SIGUSR1, SIG_DFL);

	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	cb_a = ut_find(&log_, getpid(), UT_CB, 'A');
	req_b = ut_find(&log_, getpid(), UT_REQ, 'B');
	EXPECT_EQ(ut_find(&log_, getpid(), UT_REQ, 'A')->cookie, cb_a->cookie);
	ASSERT_GE(cb_a->nr, 1);
	EXPECT_NE((unsigned long)ut_syscall_ret, cb_a->ips[0]);
	/* The restorer's sigreturn system call is within its first bytes. */
	if (restorer)
		EXPECT_TRUE(cb_a->ips[0] > restorer && cb_a->ips[0] <= restorer + 16);
	ASSERT_TRUE(!!req_b);
#ifdef __x86_64__
	EXPECT_EQ(-EAGAIN, req_b->ret);
	EXPECT_EQ(0, ut_count(&log_, getpid(), UT_CB, 'B'));
#else
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'B'));
	cb_b = ut_find(&log_, getpid(), UT_CB, 'B');
	EXPECT_EQ(req_b->cookie, cb_b->cookie);
	EXPECT_NE(cb_a->cookie, cb_b->cookie);
	EXPECT_TRUE(chain_matches(_metadata, cb_b));
#endif
}

#ifdef __x86_64__
#define SETUP_FRAME_SYM		"x64_setup_rt_frame"
#else
#define SETUP_FRAME_SYM		"ia32_setup_rt_frame"
#endif

/*
 * The callback of client A's one request from @pid, made while the entry
 * was sealed: NULL if the request was refused, as a sealed entry does
 * (then no callback may have come); else its callback, for the caller to
 * check that it carries the stack the request was made on.
 */
static struct ut_event *sealed_answer(struct __test_metadata *_metadata,
				      pid_t pid)
{
	struct ut_event *req, *cb;

	req = ut_find(&log_, pid, UT_REQ, 'A');
	EXPECT_TRUE(!!req);
	if (!req)
		return NULL;
	if (req->ret < 0) {
		EXPECT_EQ(-EAGAIN, req->ret);
		EXPECT_EQ(0, ut_count(&log_, pid, UT_CB, 'A'));
		return NULL;
	}
	cb = ut_find(&log_, pid, UT_CB, 'A');
	EXPECT_TRUE(!!cb);
	if (cb)
		EXPECT_EQ(req->cookie, cb->cookie);
	return cb;
}

/*
 * Signal delivery writes the handler's frame and registers inside the
 * entry, after answering the requests made so far. A request made while
 * the frame is being written (a kprobe on the arch's setup_rt_frame) is
 * refused, or answered with the interrupted stack: never with registers
 * that are half the handler's.
 */
TEST_F(unwind, signal_frame_sealed)
{
	struct sigaction sa = { .sa_sigaction = empty_handler,
				.sa_flags = SA_SIGINFO };
	struct ut_event *cb;
	char cmd[64];

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	snprintf(cmd, sizeof(cmd), "%s 1", SETUP_FRAME_SYM);
	if (ut_write(UT_DIR "/arm", cmd))
		SKIP(return, "cannot probe %s", SETUP_FRAME_SYM);
	chain_run(UT_SYS_KILL, getpid(), SIGUSR1, 0);
	signal(SIGUSR1, SIG_DFL);

	ASSERT_EQ(0, ut_read_events(&log_));
	cb = sealed_answer(_metadata, getpid());
	if (cb)
		EXPECT_TRUE(chain_matches(_metadata, cb));
}

/*
 * A tracer may rewrite a stopped tracee's registers. A request made as the
 * tracee stops (do_notify_parent_cldstop() runs after the stop's flush) is
 * refused, or answered with the stack it was made on (fake frames A):
 * never with the frame pointer the tracer wrote meanwhile (frames B).
 */
TEST_F(unwind, ptrace_stop_sealed)
{
	static struct fake_frame a[8], b[8];
	struct user_regs_struct regs;
	struct ut_event *cb;
	int status;
	pid_t child;

	fake_frames_from(a, 0);
	fake_frames_from(b, 20);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(2);
		raise(SIGSTOP);
		if (ut_write(UT_DIR "/arm", "do_notify_parent_cldstop 1"))
			_exit(3);
		ut_syscall_fp(UT_SYS_KILL, getpid(), SIGUSR1, 0,
			      (unsigned long)a);
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(0, ptrace(PTRACE_CONT, child, 0, 0));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		SKIP(return, "cannot probe do_notify_parent_cldstop");
	/* The signal-delivery stop of SIGUSR1, at the end of kill(). */
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(SIGUSR1, WSTOPSIG(status));
	ASSERT_EQ(0, ptrace(PTRACE_GETREGS, child, 0, &regs));
#ifdef __x86_64__
	ASSERT_EQ((unsigned long)a, regs.rbp);
	regs.rbp = (unsigned long)b;
#else
	ASSERT_EQ((long)a, regs.ebp);
	regs.ebp = (long)b;
#endif
	ASSERT_EQ(0, ptrace(PTRACE_SETREGS, child, 0, &regs));
	/* Detach without the signal: ut_syscall_fp() restores its rbp. */
	ASSERT_EQ(0, ptrace(PTRACE_DETACH, child, 0, 0));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, ut_read_events(&log_));
	cb = sealed_answer(_metadata, child);
	if (cb) {
		ASSERT_GE(cb->nr, 2);
		EXPECT_EQ(TEXT_RA(0), cb->ips[1]);
	}
}

/* 100k-deep recursion: the walk stops at its depth limit. */
static long recurse(int depth)
{
	static const char cmd[] = "task 1 1";
	long ret;
	int fd;

	if (depth) {
		ret = recurse(depth - 1);
		/* Keep the compiler from turning the recursion into a loop. */
		asm volatile("" : "+r" (ret));
		return ret + 1;
	}
	fd = open(UT_DIR "/request", O_WRONLY);
	ret = ut_syscall(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd));
	close(fd);
	return ret;
}

TEST_F(unwind, deep_recursion)
{
	struct ut_event *cb;
	int i;

	recurse(100000);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	cb = ut_find(&log_, getpid(), UT_CB, 'A');
	EXPECT_EQ(UT_MAX_IPS, cb->nr);
	/* After the syscall IP and the leaf, every frame is recurse(). */
	for (i = 3; i < cb->nr; i++)
		ASSERT_EQ(cb->ips[2], cb->ips[i]);
}

/*
 * Many requests from every context in a row: each accepted request is
 * answered by exactly one callback with its cookie, none twice.
 */
TEST_F(unwind, accepted_equals_delivered)
{
	static const char * const cmds[] = {
		"task 1 1", "irq 1 2", "nmi 2 3", "task 3 3 late", "nmi 1 1",
	};
	int round, i, j, accepted = 0, delivered = 0, walks = 0, entries = 0;

	for (round = 0; round < 40; round++) {
		for (i = 0; i < 5; i++)
			chain_request(UT_DIR "/request", cmds[i]);
		ASSERT_EQ(0, ut_read_events(&log_));
		ASSERT_FALSE(log_.overflow);
		for (i = 0; i < log_.n; i++) {
			struct ut_event *ev = &log_.ev[i];
			int first_of_entry = 1;

			if (ev->pid != getpid())
				continue;
			if (ev->kind == UT_WALK) {
				walks++;
				continue;
			}
			if (ev->kind == UT_REQ) {
				accepted += ev->ret == 0;
				continue;
			}
			delivered++;
			for (j = 0; j < i; j++) {
				struct ut_event *e = &log_.ev[j];

				if (e->kind != UT_CB || e->cookie != ev->cookie)
					continue;
				first_of_entry = 0;
				ASSERT_NE(e->client, ev->client);
			}
			entries += first_of_entry;
			ASSERT_TRUE(chain_matches(_metadata, ev));
		}
	}
	EXPECT_EQ(accepted, delivered);
	/* One walk per kernel entry that had callbacks, never more. */
	EXPECT_EQ(entries, walks);
	TH_LOG("%d requests accepted, %d callbacks, %d entries, %d walks",
	       accepted, delivered, entries, walks);
}

/*
 * Two inline walks in one timer interrupt of user mode, as two perf events
 * sampling together make (/sys/kernel/debug/unwind_test/nofault): the
 * first walks and keeps the stack for the entry, the second copies it.
 * Both must be the interrupted stack, the spin loop at the chain's end.
 */
TEST_F(unwind, nofault_second_walk_copies)
{
	unsigned int interrupts, walked, kept, copied, differ, nr;
	unsigned long loop = (unsigned long)ut_spin_loop;
	unsigned long end = (unsigned long)ut_spin_end;
	static char buf[UT_MAX_IPS * 20 + 256];
	unsigned long ips[CHAIN_LEN + 3];
	cpu_set_t cpus;
	char *p;
	int fd, n, i;

	if (access(UT_DIR "/nofault", W_OK))
		SKIP(return, "the test client has no nofault file");
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	/* A walk that may fault first: it allocates the task's cache. */
	ASSERT_EQ((long)strlen("task 1 1") + CHAIN_LEN,
		  chain_request(UT_DIR "/request", "task 1 1"));
	ASSERT_EQ(0, ut_write(UT_DIR "/nofault", "20"));
	chain_spin(50000000L);
	ASSERT_EQ(0, ut_write(UT_DIR "/nofault", "0"));
	fd = open(UT_DIR "/nofault", O_RDONLY);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	n = sscanf(buf, "interrupts=%u walked=%u kept=%u copied=%u differ=%u nr=%u",
		   &interrupts, &walked, &kept, &copied, &differ, &nr);
	ASSERT_EQ(6, n);
	TH_LOG("%u interrupts of user mode: %u walked, %u kept, %u copied, %u differ",
	       interrupts, walked, kept, copied, differ);
	EXPECT_EQ(0, differ);
	ASSERT_GE(copied, 10);
	ASSERT_GE(nr, CHAIN_LEN + 3);
	p = strstr(buf, "ips=") + 4;
	for (i = 0; i < CHAIN_LEN + 3; i++) {
		ips[i] = strtoul(p, &p, 0);
		if (*p == ',')
			p++;
	}
	/* The last copied walk: an interrupt of the spin loop. */
	EXPECT_TRUE(ips[0] >= loop && ips[0] < end);
	EXPECT_EQ(ut_leaf_ra, ips[1]);
	EXPECT_EQ(leaf_caller_ra, ips[2]);
	for (i = 0; i < CHAIN_LEN; i++)
		EXPECT_EQ(chain_ra[CHAIN_LEN - 1 - i], ips[3 + i]);
}

TEST_HARNESS_MAIN
