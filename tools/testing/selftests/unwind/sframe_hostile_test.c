// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile SFrame input through prctl(PR_SFRAME_ADD), seen through a
 * task's read of its own stack (prctl(PR_USER_STACK_READ)) over crafted
 * stacks whose return addresses lie in "JIT" text the tables describe:
 *
 *  - rows_1m, rows_4m: one function with a million (four million) rows
 *    and return addresses past the last one, which every lookup scans
 *    whole: the walk reads its budget of rows and ends, in a time of the
 *    order of the same walk over an honest table;
 *  - killed_in_hostile_walk: SIGKILL ends a task that walks such a table;
 *  - registrations_bounded: one mm holds at most 16384 added ranges
 *    (ENOSPC), only over executable mappings, and munmap() frees them;
 *  - failed_add_changes_nothing: an add refused with EEXIST erases
 *    nothing, and a later add over the same text is used at once;
 *  - partial_overlap_found_once: a mapping that a table covers in part is
 *    discovered once, not at every frame of every walk (no mmap lock);
 *  - erase_fails: erases that cannot allocate (fail-nth, debug lane)
 *    leave no freed entry in the registry.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"

/* Frames of the crafted stack, and the most an own-stack read returns. */
#define DEPTH		256
#define MAX_ENTRIES	512
/* The most ranges one mm may add (kernel/unwind/sframe/registry.c). */
#define MAX_REGISTERED	16384

#ifdef __x86_64__
struct record {
	unsigned long next, ra;
};

static struct record records[DEPTH + 1];
static uint64_t entries[MAX_ENTRIES];

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

/*
 * A version 2 section at @sec with one function of @size bytes at @text
 * and @rows rows, starting at its bytes 0, 1, 2, ... (4-byte starts).
 * Each row says CFA = FP + 16, caller's FP at CFA - 16 (a frame-pointer
 * frame), or, if @outermost, that the stack ends there. Returns its size.
 */
static size_t table_build(unsigned char *sec, unsigned long text,
			  uint32_t size, uint32_t rows, bool outermost)
{
	const size_t hdr = 28, fde = 20, row = outermost ? 5 : 7;
	unsigned char *fre = sec + hdr + fde;
	uint32_t i;

	memset(sec, 0, hdr + fde);
	put16(sec, 0xdee2);
	sec[2] = 2;			/* version */
	sec[3] = 0x1 | 0x4;		/* sorted, PC-relative starts */
	sec[4] = 3;			/* x86-64 */
	sec[6] = (unsigned char)-8;	/* RA at CFA - 8 */
	put32(sec + 8, 1);
	put32(sec + 12, rows);
	put32(sec + 16, rows * row);
	put32(sec + 24, fde);		/* FREs after the one descriptor */
	put32(sec + hdr, (uint32_t)(text - (unsigned long)(sec + hdr)));
	put32(sec + hdr + 4, size);
	put32(sec + hdr + 12, rows);
	sec[hdr + 16] = 2;		/* 4-byte row starts */
	for (i = 0; i < rows; i++, fre += row) {
		put32(fre, i);
		if (outermost) {
			fre[4] = 0;
			continue;
		}
		fre[4] = 2 << 1;	/* FP based, two 1-byte words */
		fre[5] = 16;
		fre[6] = (unsigned char)-16;
	}
	return hdr + fde + (size_t)rows * row;
}

/* JIT text with its table in one mapping, text first. */
struct jit {
	unsigned char *mem;
	size_t len;
	unsigned long text;
	uint32_t size;
};

static int jit_add(struct jit *j, uint32_t rows, bool outermost)
{
	const size_t page = getpagesize();
	size_t text_len, sec_len, len;

	j->size = rows + 4096;
	text_len = (j->size + page - 1) / page * page;
	sec_len = (48 + (size_t)rows * 7 + page - 1) / page * page;
	j->len = text_len + sec_len;
	j->mem = mmap(NULL, j->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j->mem == MAP_FAILED)
		return -1;
	j->text = (unsigned long)j->mem;
	if (mprotect(j->mem, text_len, PROT_READ | PROT_EXEC))
		return -1;
	len = table_build(j->mem + text_len, j->text, j->size, rows, outermost);
	return prctl(PR_SFRAME_ADD, j->mem + text_len, len, j->text,
		     j->text + j->size);
}

/* Two return addresses past the last row of @j's function. */
static unsigned long ra_a(const struct jit *j)
{
	return j->text + j->size - 4096 + 16;
}

static unsigned long ra_b(const struct jit *j)
{
	return j->text + j->size - 4096 + 48;
}

/*
 * Read the own stack with the frame pointer at a chain of @depth records
 * whose return addresses alternate between @a and @b, so that no lookup
 * is the one before it again.
 */
static long read_through(unsigned long a, unsigned long b, int depth)
{
	for (int i = 0; i < depth; i++) {
		records[i].next = (unsigned long)&records[i + 1];
		records[i].ra = i % 2 ? b : a;
	}
	records[depth].next = 0;
	records[depth].ra = 0;
	return ut_syscall_fp(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)entries,
			     MAX_ENTRIES, (unsigned long)records);
}

/* Are the first @n entries the interrupted IP and the records' addresses? */
static bool entries_match(long n)
{
	if (n < 1 || entries[0] != (unsigned long)ut_syscall_fp_ret)
		return false;
	for (long i = 1; i < n; i++)
		if (entries[i] != records[i - 1].ra)
			return false;
	return true;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The fastest of five reads, in seconds, and what the last one returned. */
static double read_time(const struct jit *j, long *n)
{
	double best = 1e9;

	for (int i = 0; i < 5; i++) {
		double t = now();

		*n = read_through(ra_a(j), ra_b(j), DEPTH);
		t = now() - t;
		if (t < best)
			best = t;
	}
	return best;
}

static bool sframe_prctl_known(void)
{
	/* A kernel with SFrame support: ENOENT, not EINVAL. */
	return prctl(PR_SFRAME_REMOVE, 0, 0, 0, 0) && errno == ENOENT;
}

static bool stack_read_known(void)
{
	return prctl(PR_USER_STACK_READ, 0, 0, 0, 0) >= 0;
}

/* Why the kernel cannot run these tests, or NULL. */
static const char *missing(void)
{
	if (!sframe_prctl_known())
		return "no CONFIG_UNWIND_USER_SFRAME";
	if (!stack_read_known())
		return "no PR_USER_STACK_READ";
	return NULL;
}

/*
 * The same crafted walk over an honest table (two rows) and over one
 * whose function has @rows rows, all before the return addresses.
 */
static void hostile_rows(struct __test_metadata *_metadata, uint32_t rows)
{
	struct jit honest, hostile;
	double t_honest, t_hostile;
	long n;

	ASSERT_EQ(0, jit_add(&honest, 2, false));
	ASSERT_EQ(0, jit_add(&hostile, rows, false));

	t_honest = read_time(&honest, &n);
	ASSERT_EQ(DEPTH + 1, n);
	EXPECT_TRUE(entries_match(n));

	t_hostile = read_time(&hostile, &n);
	TH_LOG("%u rows: %.0f us against %.0f us for the honest table, %ld entries",
	       rows, t_hostile * 1e6, t_honest * 1e6, n);
	/* It ends where its budget of rows runs out, with what it found. */
	ASSERT_GE(n, 2);
	EXPECT_LT(n, DEPTH + 1);
	EXPECT_TRUE(entries_match(n));
	/* Not a benchmark: seconds per walk before the budget, microseconds now. */
	EXPECT_LT(t_hostile, 10 * t_honest + 0.02);
	munmap(honest.mem, honest.len);
	munmap(hostile.mem, hostile.len);
}

TEST(rows_1m)
{
	if (missing())
		SKIP(return, "%s", missing());
	hostile_rows(_metadata, 1 << 20);
}

TEST(rows_4m)
{
	if (missing())
		SKIP(return, "%s", missing());
	hostile_rows(_metadata, 4 << 20);
}

/* A task walking a hostile table in a loop dies of SIGKILL at once. */
TEST(killed_in_hostile_walk)
{
	int status, pipefd[2];
	double start;
	pid_t pid;
	char c;

	if (missing())
		SKIP(return, "%s", missing());
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct jit j;

		if (jit_add(&j, 4 << 20, false))
			_exit(2);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(3);
		for (;;)
			read_through(ra_a(&j), ra_b(&j), DEPTH);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	usleep(100000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	start = now();
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now() - start > 3) {
			waitpid(pid, &status, 0);
			ASSERT_TRUE(false) {
				TH_LOG("SIGKILL took %.1f s", now() - start);
			}
		}
		usleep(10000);
	}
	EXPECT_TRUE(WIFSIGNALED(status));
	close(pipefd[0]);
}

/* Add one-byte ranges of @code until refused; returns how many. */
static int add_until_refused(unsigned char *sec, size_t len,
			     unsigned long code, int *err)
{
	int i;

	for (i = 0; i < 4 * MAX_REGISTERED; i++)
		if (prctl(PR_SFRAME_ADD, sec, len, code + i, code + i + 1))
			break;
	*err = errno;
	return i;
}

/* Adding 16384 ranges twice takes a while under KASAN and lockdep. */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

/*
 * Added ranges are bounded per mm, lie in executable mappings, and go
 * with them: after munmap() the mm can add as many again.
 */
TEST_F_TIMEOUT(slow, registrations_bounded, 300)
{
	const size_t page = getpagesize(), code_len = 8 * page;
	unsigned char *code, *sec, *data;
	double t_all, t_few;
	size_t len;
	int n, err;

	if (missing())
		SKIP(return, "%s", missing());
	sec = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	data = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	code = mmap(NULL, code_len, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sec);
	ASSERT_NE(MAP_FAILED, data);
	ASSERT_NE(MAP_FAILED, code);
	len = table_build(sec, (unsigned long)code, 1, 1, false);

	/* Text that is not mapped, or not executable. */
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SFRAME_ADD, sec, len, data, data + 16));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SFRAME_ADD, sec, len, code + code_len - 16,
			    code + code_len + 16));
	EXPECT_EQ(EINVAL, errno);

	n = add_until_refused(sec, len, (unsigned long)code, &err);
	EXPECT_EQ(MAX_REGISTERED, n);
	EXPECT_EQ(ENOSPC, err);

	/* One munmap() over all of them. */
	t_all = now();
	ASSERT_EQ(0, munmap(code, code_len));
	t_all = now() - t_all;
	EXPECT_EQ(-1, prctl(PR_SFRAME_REMOVE, code, 0, 0, 0));

	code = mmap(NULL, code_len, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	n = add_until_refused(sec, len, (unsigned long)code, &err);
	EXPECT_EQ(MAX_REGISTERED, n);
	ASSERT_EQ(0, munmap(code, code_len));

	code = mmap(NULL, code_len, PROT_READ | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, code + i,
				   code + i + 1));
	t_few = now();
	ASSERT_EQ(0, munmap(code, code_len));
	t_few = now() - t_few;
	TH_LOG("munmap() of %d added ranges: %.0f us; of 4: %.0f us",
	       MAX_REGISTERED, t_all * 1e6, t_few * 1e6);
	munmap(sec, page);
	munmap(data, page);
}

/*
 * Two executable mappings, [p0, p2) and [p2, p3): a table added for the
 * second, and the first discovered (anonymous: no table) by a walk. An
 * add over both must fail and change nothing; an add for the first then
 * replaces what was discovered, and the next walk uses it.
 */
TEST(failed_add_changes_nothing)
{
	const size_t page = getpagesize();
	unsigned char *mem, *sec;
	unsigned long p0, p2, p3;
	size_t len;
	long n;

	if (missing())
		SKIP(return, "%s", missing());
	mem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sec = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_NE(MAP_FAILED, sec);
	ASSERT_EQ(0, mprotect(mem + 2 * page, page, PROT_READ | PROT_EXEC));
	p0 = (unsigned long)mem;
	p2 = p0 + 2 * page;
	p3 = p0 + 3 * page;

	len = table_build(sec, p2, page, 2, false);
	ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, p2, p3));

	/* By frame pointers through [p0, p2): discovered, no table. */
	n = read_through(p0 + 16, p0 + 48, DEPTH);
	ASSERT_EQ(DEPTH + 1, n);

	len = table_build(sec, p0, 3 * page, 2, false);
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SFRAME_ADD, sec, len, p0, p3));
	EXPECT_EQ(EEXIST, errno);

	/* A table that ends the stack in [p0, p2). */
	len = table_build(sec, p0, 2 * page, 2, true);
	ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, p0, p2));
	n = read_through(p0 + 16, p0 + 48, DEPTH);
	EXPECT_EQ(2, n) {
		TH_LOG("the walk did not use the table added last");
	}
	EXPECT_TRUE(entries_match(n));
	munmap(mem, 3 * page);
	munmap(sec, page);
}

#define LOCK_EVENT	"events/mmap_lock/mmap_lock_start_locking/enable"

static const char *const tracefs_dirs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

static const char *tracefs(void)
{
	for (unsigned int i = 0; i < 2; i++)
		if (!access(tracefs_dirs[i], W_OK))
			return tracefs_dirs[i];
	return NULL;
}

static int trace_write(const char *dir, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return ut_write(path, val);
}

/*
 * Empty the trace buffer, or a list such as set_event_pid: an open for
 * writing that truncates does it (a write of nothing does not).
 */
static int trace_clear(const char *dir, const char *file)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* mmap_lock_start_locking events of this process in the trace buffer. */
static int lock_events(const char *dir)
{
	char path[256], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#' && strstr(line, "mmap_lock_start_locking")) {
			n++;
			if (getenv("SHT_DEBUG"))
				fputs(line, stderr);
		}
	}
	fclose(f);
	return n;
}

/*
 * One anonymous executable mapping [p0, p4) with a table added for
 * [p2, p3): the walk's discovery records the rest, so that later walks
 * through [p0, p2) take no mmap lock.
 */
TEST(partial_overlap_found_once)
{
	const size_t page = getpagesize();
	unsigned char *mem, *sec;
	const char *dir = tracefs();
	int first, later;
	char pid[32];
	size_t len;

	if (missing())
		SKIP(return, "%s", missing());
	if (!dir)
		SKIP(return, "no tracefs");
	if (trace_write(dir, LOCK_EVENT, "0"))
		SKIP(return, "no mmap_lock trace events");
	mem = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sec = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_NE(MAP_FAILED, sec);
	len = table_build(sec, (unsigned long)mem + 2 * page, page, 2, false);
	ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, mem + 2 * page,
			   mem + 3 * page));
	/* The pages the walks touch, touched before tracing. */
	read_through(1, 1, DEPTH);

	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, trace_write(dir, "set_event_pid", pid));
	ASSERT_EQ(0, trace_clear(dir, "trace"));
	ASSERT_EQ(0, trace_write(dir, LOCK_EVENT, "1"));
	EXPECT_EQ(DEPTH + 1, read_through((unsigned long)mem + 16,
					  (unsigned long)mem + 48, DEPTH));
	ASSERT_EQ(0, trace_write(dir, LOCK_EVENT, "0"));
	first = lock_events(dir);
	ASSERT_EQ(0, trace_clear(dir, "trace"));
	ASSERT_EQ(0, trace_write(dir, LOCK_EVENT, "1"));
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(DEPTH + 1, read_through((unsigned long)mem + 16,
						  (unsigned long)mem + 48,
						  DEPTH));
	trace_write(dir, LOCK_EVENT, "0");
	later = lock_events(dir);
	trace_clear(dir, "set_event_pid");
	TH_LOG("mmap lock taken %d times in the first walk, %d in 10 more",
	       first, later);
	/* The discovery itself takes it: the events are seen. */
	EXPECT_GT(first, 0);
	EXPECT_EQ(0, later);
	munmap(mem, 4 * page);
	munmap(sec, page);
}

#define FAILSLAB	"/sys/kernel/debug/failslab"

static long failslab_read(const char *file)
{
	char path[128], buf[32] = "";
	int fd;

	snprintf(path, sizeof(path), FAILSLAB "/%s", file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atol(buf);
}

/*
 * munmap() of @mem with slab allocations of this task failing (four in a
 * row: a tree retries a failed allocation that may not sleep with one
 * that may) once @space bytes were allocated. Returns 1 if some failed
 * after the munmap() could no longer fail, where the registry's erase
 * runs; the munmap() is done again without failures if it failed.
 */
static int munmap_failing(unsigned char *mem, size_t len, int space)
{
	char val[16];
	int fail, done;

	snprintf(val, sizeof(val), "%d", space);
	ut_write(FAILSLAB "/space", val);
	ut_write(FAILSLAB "/times", "4");
	fail = open("/proc/self/make-it-fail", O_WRONLY);
	if (fail < 0 || write(fail, "1", 1) != 1)
		return -1;
	done = !munmap(mem, len);
	if (write(fail, "0", 1) != 1)
		return -1;
	close(fail);
	if (!done)
		return munmap(mem, len) ? -1 : 0;
	return failslab_read("times") < 4;
}

/*
 * Text discovered by a walk (and a table added for part of it) unmapped
 * with allocations failing from ever later points of the munmap(), each
 * time mapped again at the same place and walked. An erase that cannot
 * allocate must not free an entry the tree still holds: KASAN (debug
 * lane) reports any use after free, and what is left is freed at exit.
 */
TEST(erase_fails)
{
	const size_t page = getpagesize();
	int injected = 0, ret;
	unsigned char *mem, *sec;
	unsigned long p0;
	size_t len;

	if (missing())
		SKIP(return, "%s", missing());
	if (access(FAILSLAB "/space", W_OK) ||
	    access("/proc/self/make-it-fail", W_OK))
		SKIP(return, "no failslab (debug lane)");
	ASSERT_EQ(0, ut_write(FAILSLAB "/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, ut_write(FAILSLAB "/verbose", "0"));
	ASSERT_EQ(0, ut_write(FAILSLAB "/task-filter", "Y"));
	ASSERT_EQ(0, ut_write(FAILSLAB "/interval", "1"));
	ASSERT_EQ(0, ut_write(FAILSLAB "/probability", "100"));
	sec = mmap(NULL, page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sec);
	mem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	p0 = (unsigned long)mem;

	for (int space = 0; space <= 8192; space += 128) {
		len = table_build(sec, p0 + page, page, 2, false);
		ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, p0 + page,
				   p0 + 2 * page));
		EXPECT_EQ(DEPTH + 1, read_through(p0 + 16, p0 + 48, DEPTH));

		ret = munmap_failing(mem, 2 * page, space);
		ASSERT_GE(ret, 0);
		injected += ret;

		mem = mmap(mem, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			   -1, 0);
		ASSERT_EQ((unsigned long)mem, p0);
		/* Lookups over what the failed erases left. */
		EXPECT_EQ(DEPTH + 1, read_through(p0 + 16, p0 + 48, DEPTH));
	}
	TH_LOG("%d munmap() calls had allocations fail past their point of no return",
	       injected);
	EXPECT_GT(injected, 0);
	ut_write(FAILSLAB "/probability", "0");
	ut_write(FAILSLAB "/space", "0");
	ut_write(FAILSLAB "/ignore-gfp-wait", "Y");
	munmap(mem, 2 * page);
	munmap(sec, page);
}
#endif /* __x86_64__ */

TEST_HARNESS_MAIN
