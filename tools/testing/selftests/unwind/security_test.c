// SPDX-License-Identifier: GPL-2.0
/*
 * What deferred user stack unwinding must not give away:
 *
 *  - an unprivileged user gets no other task's user stack through perf
 *    (per-CPU events under perf_event_paranoid >= 1, events on another
 *    user's task), and the deferred records in its own buffer are all of
 *    its own task;
 *  - an unprivileged user cannot reach tracefs or the test interfaces;
 *  - deferred records are exactly as long as their fields, with the
 *    reserved bytes zero, across many wraps of a small ring, and carry
 *    no kernel address;
 *  - a user stack whose return address points into the kernel is cut
 *    there, not reported.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define NOBODY		65534
/* Lowest kernel address on x86-64 (5-level paging included). */
#define KERNEL_START	0xff00000000000000UL

static int open_event(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, 0);
}

static void sampler_attr(struct perf_event_attr *attr, __u64 sample_type)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = 100000;
	attr->sample_type = sample_type | PERF_SAMPLE_CALLCHAIN;
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->exclude_hv = 1;
	attr->defer_callchain = 1;
	attr->defer_output = 1;
}

static int read_paranoid(void)
{
	char buf[16] = "";
	int fd = open(PARANOID, O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -100;
	close(fd);
	return atoi(buf);
}

static int set_paranoid(int level)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", level);
	return ut_write(PARANOID, buf);
}

/* Run fn as user nobody in a child; its exit status, or -1. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t child;

	child = fork();
	if (child < 0)
		return -1;
	if (child == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(security) {
	int paranoid;
};

FIXTURE_SETUP(security)
{
	struct perf_event_attr attr;
	int fd;

	self->paranoid = read_paranoid();
	if (getuid())
		SKIP(return, "needs root to switch users");
	sampler_attr(&attr, PERF_SAMPLE_TID);
	fd = open_event(&attr, 0, -1);
	if (fd < 0)
		SKIP(return, "no deferred callchains (%s)", strerror(errno));
	close(fd);
}

FIXTURE_TEARDOWN(security)
{
	if (self->paranoid > -100)
		set_paranoid(self->paranoid);
}

/* Every event that could see other tasks' stacks must be refused. */
static int try_foreign_events(void *arg)
{
	pid_t victim = *(pid_t *)arg;
	struct perf_event_attr attr;
	int fd, bad = 0;

	sampler_attr(&attr, PERF_SAMPLE_TID);
	/* Per-CPU sampler with deferred callchains. */
	fd = open_event(&attr, -1, 0);
	bad |= fd >= 0 || (errno != EACCES && errno != EPERM);
	/* Per-CPU side-band event that would receive deferred records. */
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID;
	attr.defer_callchain = 0;
	fd = open_event(&attr, -1, 0);
	bad |= (fd >= 0 || (errno != EACCES && errno != EPERM)) << 1;
	/* Both on another user's task. */
	sampler_attr(&attr, PERF_SAMPLE_TID);
	fd = open_event(&attr, victim, -1);
	bad |= (fd >= 0 || (errno != EACCES && errno != EPERM)) << 2;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID;
	attr.defer_callchain = 0;
	fd = open_event(&attr, victim, -1);
	bad |= (fd >= 0 || (errno != EACCES && errno != EPERM)) << 3;
	return bad;
}

TEST_F(security, unprivileged_foreign_events_refused)
{
	pid_t victim = getpid();
	int level;

	for (level = 1; level <= 2; level++) {
		ASSERT_EQ(0, set_paranoid(level));
		/* Bits: cpu sampler, cpu side-band, task sampler, task side-band. */
		EXPECT_EQ(0, as_nobody(try_foreign_events, &victim))
			TH_LOG("perf_event_paranoid=%d", level);
	}
}

/* A small ring, read as it fills, so that it wraps many times. */
#define SMALL_PAGES	2

struct check {
	int	records;
	int	bad_size;
	int	bad_misc;
	int	bad_reserved;
	int	bad_task;
	int	kernel_addrs;
	int	others;
	int	lost;
};

/* The sample_id of the records below: TID, TIME, ID, STREAM_ID, CPU. */
#define ID_TYPES	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
			 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU)
#define ID_WORDS	5

static void drain(void *base, struct check *ck)
{
	struct perf_event_mmap_page *meta = base;
	char *data = (char *)base + meta->data_offset;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail, rec[1024];

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t nr, *id, i;
		int marks;

		for (i = 0; i < sizeof(hdr); i++)
			((char *)&hdr)[i] = data[(tail + i) % meta->data_size];
		if (hdr.size < sizeof(hdr) || hdr.size > sizeof(rec))
			break;
		for (i = 0; i < hdr.size; i++)
			((char *)rec)[i] = data[(tail + i) % meta->data_size];
		tail += hdr.size;
		if (hdr.type == PERF_RECORD_LOST)
			ck->lost++;
		if (hdr.type != PERF_RECORD_CALLCHAIN_DEFERRED)
			continue;
		/* header, cookie, nr, ips[nr], sample_id */
		ck->records++;
		nr = rec[2];
		if (hdr.size != (3 + nr + ID_WORDS) * sizeof(uint64_t) || !rec[1]) {
			ck->bad_size++;
			continue;
		}
		ck->bad_misc += hdr.misc != PERF_RECORD_MISC_USER;
		/*
		 * A second PERF_CONTEXT_USER, once at most, marks the
		 * guessed frames after it; any other word above user space
		 * would be a kernel address.
		 */
		marks = 0;
		for (i = 0; i < nr; i++) {
			if (rec[3 + i] == (uint64_t)PERF_CONTEXT_USER &&
			    !marks++)
				continue;
			ck->kernel_addrs += rec[3 + i] >= KERNEL_START;
		}
		id = &rec[3 + nr];
		ck->bad_task += (uint32_t)id[0] != (uint32_t)getpid() ||
				(uint32_t)(id[0] >> 32) != (uint32_t)gettid();
		/* u32 cpu, u32 reserved: the reserved half must be zero. */
		ck->bad_reserved += (id[4] >> 32) != 0;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

/* Sample this task while it runs the chain, checking every record. */
static int sample_self(struct check *ck, int rounds)
{
	static char buf[1 << 16];
	struct perf_event_attr attr;
	void *base;
	int fd, zero;

	memset(ck, 0, sizeof(*ck));
	sampler_attr(&attr, ID_TYPES);
	attr.sample_period = 50000;
	fd = open_event(&attr, 0, -1);
	if (fd < 0)
		return -errno;
	base = mmap(NULL, (SMALL_PAGES + 1) * getpagesize(),
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	zero = open("/dev/zero", O_RDONLY);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/*
	 * How many samples land in the short reads depends on the machine's
	 * timing: go on, up to 50 times longer, until there are records to
	 * check.
	 */
	for (int i = 0; i < rounds || (ck->records <= 40 && i < 50 * rounds); i++) {
		chain_run(UT_SYS_READ, zero, (long)buf, sizeof(buf));
		drain(base, ck);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	getppid();
	drain(base, ck);
	close(zero);
	munmap(base, (SMALL_PAGES + 1) * getpagesize());
	close(fd);
	return 0;
}

static int own_task_only(void *arg)
{
	struct check ck;

	if (sample_self(&ck, 2000))
		return 10;
	/* Records exist, and every one is this task's. */
	return (ck.records ? 0 : 1) | (!!ck.bad_task << 1) |
	       (!!ck.kernel_addrs << 2);
}

/*
 * An unprivileged user profiling itself (perf_event_paranoid=1) gets
 * deferred records of its own task only, while root's tasks run chains
 * on the same CPUs.
 */
TEST_F(security, unprivileged_gets_own_stacks_only)
{
	pid_t busy[2];
	int i, ret;

	ASSERT_EQ(0, set_paranoid(1));
	for (i = 0; i < 2; i++) {
		busy[i] = fork();
		ASSERT_GE(busy[i], 0);
		if (busy[i] == 0) {
			static char buf[1 << 16];
			int zero = open("/dev/zero", O_RDONLY);

			for (;;)
				chain_run(UT_SYS_READ, zero, (long)buf, sizeof(buf));
		}
	}
	ret = as_nobody(own_task_only, NULL);
	for (i = 0; i < 2; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], NULL, 0);
	}
	/* Bits: no record, another task's record, a kernel address. */
	EXPECT_EQ(0, ret);
}

static int try_open_closed(void *arg)
{
	static const char * const paths[] = {
		"/sys/kernel/tracing/trace", "/sys/kernel/tracing/trace_pipe",
		"/sys/kernel/tracing/set_event",
		UT_DIR "/request", UT_DIR "/events", UT_DIR "/arm",
		"/sys/kernel/debug/unwind_torture/work",
		"/sys/kernel/debug/unwind_torture/control",
	};
	int bad = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(paths); i++) {
		int fd = open(paths[i], i == 0 || i == 1 || i == 4 ?
				       O_RDONLY : O_WRONLY);

		if (fd >= 0) {
			close(fd);
			bad |= 1 << i;
		}
	}
	return bad;
}

/* tracefs and the test interfaces are root's: nobody opens any. */
TEST_F(security, unprivileged_no_tracefs_or_test_files)
{
	if (access("/sys/kernel/tracing/trace", R_OK))
		SKIP(return, "tracefs not mounted");
	/* Bit i set: the i-th file of try_open_closed() opened. */
	EXPECT_EQ(0, as_nobody(try_open_closed, NULL));
}

/*
 * Every deferred record over many wraps of a two-page ring: exactly the
 * size its fields need, reserved bytes zero, this task's ids, no kernel
 * address.
 */
TEST_F(security, records_exact_and_initialised)
{
	struct check ck;

	ASSERT_EQ(0, sample_self(&ck, 3000));
	TH_LOG("%d records, %d lost", ck.records, ck.lost);
	ASSERT_GT(ck.records, 20);
	EXPECT_EQ(0, ck.bad_size);
	EXPECT_EQ(0, ck.bad_misc);
	EXPECT_EQ(0, ck.bad_reserved);
	EXPECT_EQ(0, ck.bad_task);
	EXPECT_EQ(0, ck.kernel_addrs);
}

/*
 * Crafted frames whose third return address is a kernel text address:
 * the walk ends before it, the kernel address is never reported.
 */
TEST_F(security, kernel_return_address_not_reported)
{
	static const char cmd[] = "task 1 1";
	static struct fake {
		unsigned long next, ra;
	} f[4];
	static struct ut_log log_;
	struct ut_event *cb;
	int fd, i;

	if (!ut_available())
		SKIP(return, "test client not loaded");
	ut_drain();
	for (i = 0; i < 4; i++) {
		f[i].next = i < 3 ? (unsigned long)&f[i + 1] : 0;
		f[i].ra = (unsigned long)chain_00 + 4 * i + 1;
	}
	f[2].ra = 0xffffffff81000000UL;
	fd = open(UT_DIR "/request", O_WRONLY);
	ASSERT_GE(fd, 0);
	ut_syscall_fp(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd), (unsigned long)f);
	close(fd);
	ASSERT_EQ(0, ut_read_events(&log_));
	ASSERT_EQ(1, ut_count(&log_, getpid(), UT_CB, 'A'));
	cb = ut_find(&log_, getpid(), UT_CB, 'A');
	EXPECT_EQ(3, cb->nr);
	for (i = 0; i < cb->nr; i++)
		EXPECT_LT(cb->ips[i], KERNEL_START);
}

TEST_HARNESS_MAIN
