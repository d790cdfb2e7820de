// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user stack unwinding under faults, through the test client
 * (CONFIG_UNWIND_USER_TEST_CLIENT, debugfs unwind_test/):
 *
 *  - the per-task cache cannot be allocated (failslab, debug kernels):
 *    the request is answered all the same, with an empty stack, and the
 *    next entry walks normally;
 *  - frames on PROT_NONE or unmapped pages end the walk cleanly;
 *  - a frame on a page that userfaultfd stalls: the walk sleeps there,
 *    requests made meanwhile are answered from that same walk (one walk);
 *  - the task is killed while its walk sleeps on a stalled page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"
#include "unwind_uffd.h"

#define FAILSLAB	"/sys/kernel/debug/failslab"

static struct ut_log log_;

FIXTURE(fault) {
	int unused;
};

FIXTURE_SETUP(fault)
{
	if (!ut_available())
		SKIP(return, "test client not loaded (%s)", UT_DIR);
	ut_drain();
}

FIXTURE_TEARDOWN(fault)
{
}

struct fake_frame {
	unsigned long next;
	unsigned long ra;
};

/* Return addresses inside this program's text. */
#define TEXT_RA(n)	((unsigned long)chain_00 + 4 * (n) + 1)

/* A request from client A made with the frame pointer at @f. */
static long fp_request(int fd, const char *cmd, struct fake_frame *f)
{
	return ut_syscall_fp(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd),
			     (unsigned long)f);
}

/* Two good frames, the second pointing at @next. */
static void two_frames(struct fake_frame *f, unsigned long next)
{
	f[0].next = (unsigned long)&f[1];
	f[0].ra = TEXT_RA(0);
	f[1].next = next;
	f[1].ra = TEXT_RA(1);
}

static void expect_frames(struct __test_metadata *_metadata,
			  struct ut_event *cb, const unsigned long *ra, int n)
{
	int i;

	ASSERT_TRUE(!!cb);
	ASSERT_EQ(n + 1, cb->nr);
	EXPECT_EQ((unsigned long)ut_syscall_fp_ret, cb->ips[0]);
	for (i = 0; i < n; i++)
		EXPECT_EQ(ra[i], cb->ips[i + 1]);
}

static int write_str(const char *path, const char *val)
{
	return ut_write(path, val);
}

/*
 * The first walk of a task allocates its cache. With failslab failing
 * every allocation of this task, the request is still answered, once,
 * with its cookie and an empty stack; nothing is walked; the next entry,
 * with allocations working again, gets the whole chain.
 */
TEST_F(fault, cache_allocation_fails)
{
	struct ut_event *req, *cb;
	int status, first_cb = -1, i, n = 0;
	pid_t child;

	if (access(FAILSLAB "/probability", W_OK))
		SKIP(return, "no failslab (CONFIG_FAILSLAB, debugfs)");
	ASSERT_EQ(0, write_str(FAILSLAB "/task-filter", "Y"));
	ASSERT_EQ(0, write_str(FAILSLAB "/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, write_str(FAILSLAB "/interval", "1"));
	ASSERT_EQ(0, write_str(FAILSLAB "/times", "-1"));
	ASSERT_EQ(0, write_str(FAILSLAB "/verbose", "0"));
	ASSERT_EQ(0, write_str(FAILSLAB "/probability", "100"));

	/* A new task: no cache yet. */
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		static const char cmd[] = "task 1 1";
		int req_fd = open(UT_DIR "/request", O_WRONLY);
		int fail_fd = open("/proc/self/make-it-fail", O_WRONLY);

		if (req_fd < 0 || fail_fd < 0)
			_exit(2);
		/*
		 * Fault in the pages the chain writes (copies since fork) with
		 * a system call that asks for nothing, so that only the cache
		 * is left to allocate.
		 */
		chain_prime();
		/* Every slab allocation of this task fails from here... */
		if (write(fail_fd, "1", 1) != 1)
			_exit(3);
		chain_run(UT_SYS_WRITE, req_fd, (long)cmd, strlen(cmd));
		/* ...to here: the callback ran before the write returned. */
		if (write(fail_fd, "0", 1) != 1)
			_exit(4);
		chain_run(UT_SYS_WRITE, req_fd, (long)cmd, strlen(cmd));
		_exit(0);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	write_str(FAILSLAB "/probability", "0");
	write_str(FAILSLAB "/task-filter", "N");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(2, ut_count(&log_, child, UT_REQ, 'A'));
	ASSERT_EQ(2, ut_count(&log_, child, UT_CB, 'A'));
	/* Only the second entry had a cache to walk into. */
	EXPECT_EQ(1, ut_count(&log_, child, UT_WALK, 0));
	req = ut_find(&log_, child, UT_REQ, 'A');
	for (i = 0; i < log_.n; i++) {
		if (log_.ev[i].kind == UT_CB && log_.ev[i].pid == child &&
		    n++ == 0)
			first_cb = i;
	}
	ASSERT_GE(first_cb, 0);
	cb = &log_.ev[first_cb];
	EXPECT_EQ(0, req->ret);
	EXPECT_EQ(req->cookie, cb->cookie);
	EXPECT_EQ(0, cb->nr);
	for (i = first_cb + 1; i < log_.n; i++) {
		if (log_.ev[i].kind == UT_CB && log_.ev[i].pid == child) {
			EXPECT_NE(cb->cookie, log_.ev[i].cookie);
			EXPECT_TRUE(chain_matches(_metadata, &log_.ev[i]));
		}
	}
}

/* A frame on a PROT_NONE page ends the walk with the frames before it. */
TEST_F(fault, prot_none_frame)
{
	unsigned long want[2] = { TEXT_RA(0), TEXT_RA(1) };
	struct fake_frame *f;
	char *page;
	int fd;

	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(page != MAP_FAILED);
	f = (struct fake_frame *)page;
	/* The third frame is good, but on a page nobody may read. */
	two_frames(f, (unsigned long)(page + 4096));
	((struct fake_frame *)(page + 4096))->next = 0;
	((struct fake_frame *)(page + 4096))->ra = TEXT_RA(2);
	ASSERT_EQ(0, mprotect(page + 4096, 4096, PROT_NONE));

	fd = open(UT_DIR "/request", O_WRONLY);
	ASSERT_GE(fd, 0);
	fp_request(fd, "task 1 1", f);
	close(fd);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	expect_frames(_metadata, ut_find(&log_, getpid(), UT_CB, 'A'), want, 2);

	/* Readable again: the same frames give the third one too. */
	ASSERT_EQ(0, mprotect(page + 4096, 4096, PROT_READ));
	fd = open(UT_DIR "/request", O_WRONLY);
	fp_request(fd, "task 1 1", f);
	close(fd);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	EXPECT_EQ(4, ut_find(&log_, getpid(), UT_CB, 'A')->nr);
	munmap(page, 2 * 4096);
}

/* A frame pointer into a hole in the middle of the stack's mapping. */
TEST_F(fault, unmapped_frame_page)
{
	unsigned long want[2] = { TEXT_RA(0), TEXT_RA(1) };
	struct fake_frame *f;
	char *page;
	int fd;

	page = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(page != MAP_FAILED);
	f = (struct fake_frame *)page;
	two_frames(f, (unsigned long)(page + 4096 + 64));
	ASSERT_EQ(0, munmap(page + 4096, 4096));

	fd = open(UT_DIR "/request", O_WRONLY);
	ASSERT_GE(fd, 0);
	fp_request(fd, "task 1 1", f);
	close(fd);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	expect_frames(_metadata, ut_find(&log_, getpid(), UT_CB, 'A'), want, 2);
	munmap(page, 4096);
	munmap(page + 2 * 4096, 4096);
}

/* A page registered with userfaultfd, whose faults someone must serve. */
struct stall {
	int		uffd;
	char		*page;
	int		delay_ms;	/* < 0: never serve */
	pthread_t	thread;
	int		served;
};

static int stall_open(struct stall *st)
{
	st->uffd = ut_uffd_page(&st->page);
	return st->uffd < 0 ? st->uffd : 0;
}

/* Wait for the walk's fault, let it sleep, then fill the page: one frame. */
static void *stall_serve(void *arg)
{
	struct stall *st = arg;
	struct pollfd pfd = { .fd = st->uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, 10000) != 1 ||
	    read(st->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return NULL;
	usleep(st->delay_ms * 1000);
	if (!ut_uffd_serve_frame(st->uffd, st->page, TEXT_RA(5)))
		st->served = 1;
	return NULL;
}

/*
 * The walk sleeps on a stalled frame page for 300 ms. Meanwhile, from a
 * kprobe on handle_userfault() in the walking task, A (being answered)
 * and B (not asked yet) request again. The walk runs before the pass takes
 * the queued requests: A's is still queued (already queued), B's is
 * queued, and the pass after the walk answers both. One walk, one
 * callback each, one cookie, and both see the frame that was stalled.
 */
TEST_F(fault, userfaultfd_stalled_walk)
{
	unsigned long want[3] = { TEXT_RA(0), TEXT_RA(1), TEXT_RA(5) };
	static struct fake_frame f[2];
	struct ut_event *a, *b;
	struct stall st = { .delay_ms = 300 };
	int fd, i, late = 0, ret;

	ret = stall_open(&st);
	if (ret)
		SKIP(return, "no userfaultfd (%s)", strerror(-ret));
	two_frames(f, (unsigned long)st.page + UT_UFFD_FRAME_OFFSET);
	ASSERT_EQ(0, pthread_create(&st.thread, NULL, stall_serve, &st));

	fd = open(UT_DIR "/request", O_WRONLY);
	ASSERT_GE(fd, 0);
	if (ut_write(UT_DIR "/arm", "handle_userfault 3"))
		SKIP(return, "cannot probe handle_userfault");
	fp_request(fd, "task 1 1", f);
	close(fd);
	pthread_join(st.thread, NULL);
	ASSERT_TRUE(st.served);

	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'B'));
	EXPECT_EQ(1, ut_count(&log_, getpid(), UT_WALK, 0));
	a = ut_find(&log_, getpid(), UT_CB, 'A');
	b = ut_find(&log_, getpid(), UT_CB, 'B');
	EXPECT_EQ(a->cookie, b->cookie);
	expect_frames(_metadata, a, want, 3);
	expect_frames(_metadata, b, want, 3);
	for (i = 0; i < log_.n; i++) {
		struct ut_event *ev = &log_.ev[i];

		if (ev->kind != UT_REQ || strcmp(ev->ctx, "kprobe"))
			continue;
		late++;
		EXPECT_EQ(a->cookie, ev->cookie);
		/* A: still queued during the walk; B: queued. */
		EXPECT_EQ(ev->client == 'A' ? 1 : 0, ev->ret);
	}
	EXPECT_EQ(2, late);
	close(st.uffd);
}

/*
 * The task is killed while its walk sleeps on a page nobody will serve:
 * the walk ends with the frames before it, the callback runs once, before
 * the task is gone, and nothing is walked twice.
 */
TEST_F(fault, killed_while_walk_stalls)
{
	unsigned long want[2] = { TEXT_RA(0), TEXT_RA(1) };
	int status, ret, pipefd[2];
	pid_t child;
	char c;

	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		static struct fake_frame f[2];
		struct stall st = { .delay_ms = -1 };
		int fd;

		if (stall_open(&st))
			_exit(4);
		two_frames(f, (unsigned long)st.page + UT_UFFD_FRAME_OFFSET);
		fd = open(UT_DIR "/request", O_WRONLY);
		if (fd < 0)
			_exit(2);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(3);
		fp_request(fd, "task 1 1", f);
		/* Not reached: the walk sleeps until the task is killed. */
		_exit(5);
	}
	close(pipefd[1]);
	ret = read(pipefd[0], &c, 1);
	close(pipefd[0]);
	if (ret != 1) {
		waitpid(child, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			SKIP(return, "no userfaultfd");
		ASSERT_EQ(1, ret);
	}
	/* Let it reach the stalled page, then kill it there. */
	usleep(500 * 1000);
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));

	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, child, UT_REQ, 'A'));
	ASSERT_EQ(1, ut_count(&log_, child, UT_CB, 'A'));
	EXPECT_EQ(1, ut_count(&log_, child, UT_WALK, 0));
	EXPECT_EQ(ut_find(&log_, child, UT_REQ, 'A')->cookie,
		  ut_find(&log_, child, UT_CB, 'A')->cookie);
	expect_frames(_metadata, ut_find(&log_, child, UT_CB, 'A'), want, 2);
}

TEST_HARNESS_MAIN
