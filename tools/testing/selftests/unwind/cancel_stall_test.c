// SPDX-License-Identifier: GPL-2.0
/*
 * A client can be cancelled while a task's walk of its user stack is
 * stalled: the walk reads user memory, and a user can stall a page of its
 * own (here with userfaultfd; FUSE would do as well) for as long as it
 * likes. Removing an ftrace instance, clearing userstacktrace_delay in
 * another and unloading the test client's module must not wait for the
 * stall, or one user could block tracing's control files for everyone.
 * Once the page is served, the stalled task finishes cleanly. Nor must it
 * wait for a callback that needs the mmap lock, which a thread of the
 * traced process holds (the test client's mmap_hold).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"
#include "unwind_uffd.h"

#define TRACEFS		"/sys/kernel/tracing"
#define INST_A		TRACEFS "/instances/unwind_stall_a"
#define INST_B		TRACEFS "/instances/unwind_stall_b"
#define INST_C		TRACEFS "/instances/unwind_stall_c"
#define EVENT_C		INST_C "/events/syscalls/sys_enter_getppid"
#define MMAP_HOLD	"/sys/kernel/debug/unwind_test/mmap_hold"
#define EVENT_A		INST_A "/events/syscalls/sys_enter_getppid"
#define TEST_MODULE	"unwind_test_client"
/* Far more than any of the operations takes when it does not wait. */
#define OP_TIMEOUT_S	10

struct fake_frame {
	unsigned long next;
	unsigned long ra;
};

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * The stalled task: its stack's third frame lies on a userfaultfd page
 * that its own thread serves only when told to (a byte on @serve).
 */
struct stalled {
	int	uffd;
	char	*page;
	int	serve;
};

static void *serve_page(void *arg)
{
	struct stalled *st = arg;
	char c;

	if (read(st->serve, &c, 1) != 1)
		return NULL;
	ut_uffd_serve_frame(st->uffd, st->page, (unsigned long)chain_00 + 1);
	return NULL;
}

/* Child: wait for @go, then a getppid() whose walk stalls. Exit 0 after. */
static int stalled_child(int go, int serve)
{
	static struct fake_frame f[2];
	struct stalled st = { .serve = serve };
	pthread_t thread;
	char c;

	st.uffd = ut_uffd_page(&st.page);
	if (st.uffd < 0)
		return 4;
	if (pthread_create(&thread, NULL, serve_page, &st))
		return 3;
	f[0].next = (unsigned long)&f[1];
	f[0].ra = (unsigned long)chain_00 + 1;
	f[1].next = (unsigned long)st.page + UT_UFFD_FRAME_OFFSET;
	f[1].ra = (unsigned long)chain_00 + 5;
	if (read(go, &c, 1) != 1)
		return 3;
	ut_syscall_fp(UT_SYS_GETPPID, 0, 0, 0, (unsigned long)f);
	pthread_join(thread, NULL);
	return 0;
}

/* Does /proc/PID/task/TID/stack name @fn? */
static int task_in(pid_t pid, pid_t tid, const char *fn)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return !!strstr(buf, fn);
}

/* Does the task sleep in handle_userfault()? */
static int in_userfault(pid_t pid)
{
	return task_in(pid, pid, "handle_userfault");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run @op in a child process; wait at most OP_TIMEOUT_S seconds. Return
 * its result (0 or a positive errno), or -1 if it still runs: then *@pid
 * is left to be reaped once the stall ends.
 */
static int run_op(int (*op)(const char *), const char *arg, pid_t *pid,
		  double *took)
{
	double start = now();
	int status;

	*pid = fork();
	if (*pid < 0)
		return errno;
	if (*pid == 0)
		_exit(op(arg));
	while (now() - start < OP_TIMEOUT_S) {
		if (waitpid(*pid, &status, WNOHANG) == *pid) {
			*took = now() - start;
			*pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
		}
		usleep(10000);
	}
	*took = now() - start;
	return -1;
}

static int op_rmdir(const char *path)
{
	return rmdir(path) ? errno : 0;
}

static int op_clear_option(const char *inst)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/options/userstacktrace_delay", inst);
	return -write_file(path, "0");
}

/* Unload the test client's module (its clients are cancelled) and reload it. */
static int op_reload_module(const char *ko)
{
	int fd, ret = 0;

	if (syscall(__NR_delete_module, TEST_MODULE, O_NONBLOCK))
		return errno;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || syscall(__NR_finit_module, fd, "", 0))
		ret = errno;
	if (fd >= 0)
		close(fd);
	return ret;
}

FIXTURE(stall) {
	pid_t	child;
	int	go[2], serve[2];
};

FIXTURE_SETUP(stall)
{
	if (access(TRACEFS "/options/userstacktrace_delay", F_OK))
		SKIP(return, "no userstacktrace_delay option in this kernel");
	rmdir(INST_A);
	rmdir(INST_B);
	ASSERT_EQ(0, mkdir(INST_A, 0755));
	ASSERT_EQ(0, mkdir(INST_B, 0755));
	ASSERT_EQ(0, pipe(self->go));
	ASSERT_EQ(0, pipe(self->serve));
	self->child = fork();
	ASSERT_GE(self->child, 0);
	if (self->child == 0)
		_exit(stalled_child(self->go[0], self->serve[0]));
}

FIXTURE_TEARDOWN(stall)
{
	int status;

	/* Serve the page if nobody did, so the child ends. */
	if (self->child > 0) {
		if (write(self->serve[1], "s", 1) != 1)
			kill(self->child, SIGKILL);
		waitpid(self->child, &status, 0);
	}
	write_file(INST_B "/options/userstacktrace_delay", "0");
	rmdir(INST_A);
	rmdir(INST_B);
}

TEST_F_TIMEOUT(stall, cancel_does_not_wait_for_a_stalled_walk, 120)
{
	const char *ko = getenv("UNWIND_TEST_CLIENT_KO");
	char filter[64];
	pid_t op_pid[3];
	double took[3];
	int ret[3], status, i;

	/* A: the child's getppid() asks for its stack. B: a second client. */
	snprintf(filter, sizeof(filter), "common_pid == %d", self->child);
	ASSERT_EQ(0, write_file(EVENT_A "/filter", filter));
	ASSERT_EQ(0, write_file(EVENT_A "/enable", "1"));
	ASSERT_EQ(0, write_file(INST_A "/options/userstacktrace_delay", "1"));
	ASSERT_EQ(0, write_file(INST_B "/options/userstacktrace_delay", "1"));
	ASSERT_EQ(1, write(self->go[1], "g", 1));

	for (i = 0; i < 1000 && !in_userfault(self->child); i++)
		usleep(10000);
	if (!in_userfault(self->child)) {
		waitpid(self->child, &status, WNOHANG);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			SKIP(return, "no userfaultfd");
		ASSERT_TRUE(in_userfault(self->child));
	}

	ret[0] = run_op(op_rmdir, INST_A, &op_pid[0], &took[0]);
	ret[1] = run_op(op_clear_option, INST_B, &op_pid[1], &took[1]);
	ret[2] = 0;
	took[2] = 0;
	op_pid[2] = 0;
	if (ko && !access("/sys/module/" TEST_MODULE, F_OK))
		ret[2] = run_op(op_reload_module, ko, &op_pid[2], &took[2]);
	else
		TH_LOG("UNWIND_TEST_CLIENT_KO not set or module not loaded: no module reload");
	/* The child still stalls: nothing above waited for it. */
	EXPECT_TRUE(in_userfault(self->child));

	/* Let the walk go on: everything finishes. */
	ASSERT_EQ(1, write(self->serve[1], "s", 1));
	for (i = 0; i < 3; i++) {
		if (op_pid[i] > 0 && waitpid(op_pid[i], &status, 0) == op_pid[i] &&
		    ret[i] == -1)
			TH_LOG("operation %d finished only once the page was served", i);
	}
	TH_LOG("instance removed in %.3f s, option cleared in %.3f s, module reloaded in %.3f s",
	       took[0], took[1], took[2]);
	EXPECT_EQ(0, ret[0]);
	EXPECT_EQ(0, ret[1]);
	EXPECT_EQ(0, ret[2]);
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static int hold_fd = -1;

/* A thread of the traced process keeps the mmap lock (for 60 s). */
static void *hold_mmap_lock(void *arg)
{
	int *ready = arg;

	if (write(*ready, "h", 1) != 1)
		return NULL;
	if (write(hold_fd, "60000", 5) < 0)
		return NULL;
	return NULL;
}

/* Does a thread of @pid sleep in the test client's mmap_hold? */
static int holds_mmap_lock(pid_t pid)
{
	struct dirent *d;
	char path[64];
	int found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (d = readdir(dir)))
		found = d->d_name[0] != '.' &&
			task_in(pid, atoi(d->d_name), "ut_mmap_hold_write");
	closedir(dir);
	return found;
}

/*
 * Child: wait for @go, make a getppid() whose walk meets the program's
 * mappings (so that the next one finds them known), start the holding
 * thread and wait until it holds the lock, report our tid, then make one
 * getppid() whose stack has one frame (the walk takes no lock), and
 * report that it returned.
 */
static int holding_child(int go, int report)
{
	int ready[2];
	pthread_t th;
	pid_t tid;
	char c;
	int i;

	hold_fd = open(MMAP_HOLD, O_WRONLY);
	if (hold_fd < 0 || pipe(ready))
		return 4;
	if (read(go, &c, 1) != 1)
		return 3;
	ut_syscall_fp(UT_SYS_GETPPID, 0, 0, 0, 0);
	if (pthread_create(&th, NULL, hold_mmap_lock, &ready[1]))
		return 3;
	if (read(ready[0], &c, 1) != 1)
		return 3;
	for (i = 0; i < 1000 && !holds_mmap_lock(getpid()); i++)
		usleep(10000);
	if (!holds_mmap_lock(getpid()))
		return 5;
	tid = gettid();
	if (write(report, &tid, sizeof(tid)) != sizeof(tid))
		return 3;
	ut_syscall_fp(UT_SYS_GETPPID, 0, 0, 0, 0);
	if (write(report, "r", 1) != 1)
		return 3;
	pause();
	return 0;
}

FIXTURE(hold) {
	int unused;
};

FIXTURE_SETUP(hold)
{
}

FIXTURE_TEARDOWN(hold)
{
}

TEST_F_TIMEOUT(hold, cancel_does_not_wait_for_the_mmap_lock, 120)
{
	char filter[64], c;
	int go[2], report[2], ret, status, i;
	struct pollfd pfd;
	pid_t child, tid = 0, op_pid;
	double took;

	if (access(TRACEFS "/options/userstacktrace_delay", F_OK))
		SKIP(return, "no userstacktrace_delay option in this kernel");
	if (access(MMAP_HOLD, F_OK))
		SKIP(return, "test client not loaded");
	rmdir(INST_C);
	ASSERT_EQ(0, mkdir(INST_C, 0755));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(report));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(holding_child(go[0], report[1]));
	close(go[0]);
	close(report[1]);

	snprintf(filter, sizeof(filter), "common_pid == %d", child);
	ASSERT_EQ(0, write_file(EVENT_C "/filter", filter));
	ASSERT_EQ(0, write_file(EVENT_C "/enable", "1"));
	ASSERT_EQ(0, write_file(INST_C "/options/userstacktrace_delay", "1"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	if (read(report[0], &tid, sizeof(tid)) != sizeof(tid)) {
		waitpid(child, &status, 0);
		rmdir(INST_C);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 5)
			SKIP(return, "the holding thread did not get the lock");
		ASSERT_TRUE(0);
	}
	/* Until getppid() returned, or its callback waits for the lock. */
	pfd.fd = report[0];
	pfd.events = POLLIN;
	for (i = 0; i < 500; i++) {
		if (poll(&pfd, 1, 20) == 1)
			break;
		if (task_in(child, tid, "trace_user_unwind"))
			break;
	}
	TH_LOG("getppid() %s", poll(&pfd, 1, 0) == 1 ? "returned" :
	       "waits in its callback");
	ret = run_op(op_clear_option, INST_C, &op_pid, &took);
	TH_LOG("option cleared in %.3f s", took);
	EXPECT_EQ(0, ret);

	kill(child, SIGKILL);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	if (op_pid > 0)
		waitpid(op_pid, &status, 0);
	if (poll(&pfd, 1, 0) == 1 && read(report[0], &c, 1) == 1)
		TH_LOG("getppid() returned before the kill");
	write_file(EVENT_C "/enable", "0");
	rmdir(INST_C);
}

TEST_HARNESS_MAIN
