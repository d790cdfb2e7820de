// SPDX-License-Identifier: GPL-2.0
/*
 * perf's deferred user callchains (attr.defer_callchain, attr.defer_output),
 * through perf_event_open() and the mmap ring buffer alone.
 *
 * Samples of a software clock taken while the task runs system calls from
 * the end of a 60-function chain must carry their kernel callchain, then
 * PERF_CONTEXT_USER_DEFERRED and a cookie, and no user addresses; one
 * PERF_RECORD_CALLCHAIN_DEFERRED per kernel entry and buffer must carry
 * that cookie and the chain. Samples that interrupt user mode carry the
 * chain themselves, walked in the interrupt, unless it must be deferred.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"

#define RING_PAGES	512
#define MAX_ITEMS	20000
/* A tenth of a second or so in user mode under TCG: the ring holds it. */
#define SPIN_TURNS	20000000L

/* What one buffer held: samples and deferred records, by task and cookie. */
struct item {
	int		is_record;
	uint16_t	misc;		/* the record header's */
	uint32_t	tid;
	uint64_t	cookie;		/* 0: a sample without deferral */
	int		user_ips;	/* samples: user addresses present */
	/*
	 * Samples: user part inline after this many PERF_CONTEXT_USER: one
	 * if the unwinder walked it, two if perf's walker did (refused).
	 */
	int		walker;
	int		nr;		/* addresses: all, or a sample's user ones */
	unsigned long	*ips;
};

struct ring {
	int		fd;		/* the tracking event, owner of the ring */
	int		sampler;	/* sampling event writing into it, or -1 */
	int		cpu_clock;	/* the sampler counts CPU time in ns */
	void		*base;
	int		n;
	int		lost;
	struct item	item[MAX_ITEMS];
};

static struct ring rings[2];

static void ring_parse(struct ring *r);

static int open_event_pid(struct perf_event_attr *attr, int pid, int cpu,
			  int group)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, 0);
}

/* This task's event (cpu < 0), or a CPU's event for every task. */
static int open_event(struct perf_event_attr *attr, int cpu, int group)
{
	return open_event_pid(attr, cpu < 0 ? 0 : -1, cpu, group);
}

static void base_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = 100000;		/* ns: 10 kHz; see rings_run() */
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->exclude_hv = 1;
	attr->defer_callchain = 1;
	attr->defer_output = 1;
}

/*
 * A ring owned by a tracking event (a dummy software event with
 * defer_output, as perf record uses), into which the sampling event writes
 * too, if attr is given. The tracking event stays enabled until after the
 * sampler is disabled and one more system call returned: a sample taken in
 * the disabling ioctl gets its record when that ioctl returns.
 */
static int ring_open_pid(struct ring *r, struct perf_event_attr *sampler,
			 int pid, int cpu)
{
	struct perf_event_attr track;

	memset(r, 0, sizeof(*r));
	r->sampler = -1;
	memset(&track, 0, sizeof(track));
	track.size = sizeof(track);
	track.type = PERF_TYPE_SOFTWARE;
	track.config = PERF_COUNT_SW_DUMMY;
	track.sample_type = PERF_SAMPLE_TID;
	track.sample_id_all = 1;
	track.disabled = 1;
	track.defer_output = 1;
	track.inherit = sampler && sampler->inherit;
	r->fd = open_event_pid(&track, pid, cpu, -1);
	if (r->fd < 0)
		return -errno;
	r->base = mmap(NULL, (RING_PAGES + 1) * getpagesize(),
		       PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED)
		return -errno;
	if (!sampler)
		return 0;
	r->sampler = open_event_pid(sampler, pid, cpu, -1);
	if (r->sampler < 0)
		return -errno;
	r->cpu_clock = sampler->type == PERF_TYPE_SOFTWARE &&
		       sampler->config == PERF_COUNT_SW_CPU_CLOCK;
	return ioctl(r->sampler, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ? -errno : 0;
}

static int ring_open(struct ring *r, struct perf_event_attr *sampler, int cpu)
{
	return ring_open_pid(r, sampler, cpu < 0 ? 0 : -1, cpu);
}

static void rings_start(struct ring *r, int nr)
{
	for (int i = 0; i < nr; i++)
		ioctl(r[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < nr; i++)
		if (r[i].sampler >= 0)
			ioctl(r[i].sampler, PERF_EVENT_IOC_ENABLE, 0);
}

static void rings_stop(struct ring *r, int nr)
{
	for (int i = 0; i < nr; i++)
		if (r[i].sampler >= 0)
			ioctl(r[i].sampler, PERF_EVENT_IOC_DISABLE, 0);
	getppid();
	for (int i = 0; i < nr; i++) {
		ioctl(r[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		ring_parse(&r[i]);
	}
}

/* CPU time the cpu-clock samplers of these rings have counted, in ns. */
static uint64_t rings_cpu_ns(struct ring *r, int nr)
{
	uint64_t sum = 0, ns;

	for (int i = 0; i < nr; i++)
		if (r[i].cpu_clock && read(r[i].sampler, &ns, sizeof(ns)) ==
				      sizeof(ns))
			sum += ns;
	return sum;
}

static int rings_cpu_clocks(struct ring *r, int nr)
{
	int n = 0;

	for (int i = 0; i < nr; i++)
		n += r[i].cpu_clock;
	return n;
}

/*
 * How much CPU time a round of reads takes depends on how fast the host
 * emulates the guest: 20 rounds gave 4 samples on one CI machine and more
 * than 10 here. So the work goes on, in batches of the given rounds, until cpu-clock
 * samplers have counted RUN_MIN_PERIODS periods of base_attr(), or
 * RUN_MAX_BATCHES batches have run.
 */
#define RUN_MIN_PERIODS	40
#define RUN_MAX_BATCHES	50

static void rings_run(struct ring *r, int nr, int rounds)
{
	int clocks = rings_cpu_clocks(r, nr), batch = 0;

	rings_start(r, nr);
	do
		chain_read_zero(rounds);
	while (clocks && ++batch < RUN_MAX_BATCHES &&
	       rings_cpu_ns(r, nr) / clocks < RUN_MIN_PERIODS * 100000ULL);
	rings_stop(r, nr);
}

/* The samples a ring holds, the records of deferred stacks left out. */
static int ring_samples(struct ring *r)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += !r->item[i].is_record;
	return n;
}

static void ring_close(struct ring *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->item[i].ips);
	munmap(r->base, (RING_PAGES + 1) * getpagesize());
	if (r->sampler >= 0)
		close(r->sampler);
	close(r->fd);
}

/* Copy one record out of the ring, which may wrap. */
static void ring_copy(struct perf_event_mmap_page *meta, uint64_t off,
		      void *dst, size_t len)
{
	char *data = (char *)meta + meta->data_offset;

	for (size_t i = 0; i < len; i++)
		((char *)dst)[i] = data[(off + i) % meta->data_size];
}

static void ring_parse(struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	static uint64_t rec[8192];
	uint64_t tail;

	for (tail = meta->data_tail; tail < head && r->n < MAX_ITEMS;) {
		struct perf_event_header hdr;
		struct item *it = &r->item[r->n];

		ring_copy(meta, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > sizeof(rec))
			break;
		ring_copy(meta, tail, rec, hdr.size);
		tail += hdr.size;

		if (hdr.type == PERF_RECORD_LOST) {
			r->lost++;
		} else if (hdr.type == PERF_RECORD_SAMPLE) {
			/* header, pid/tid, nr, ips[nr] */
			uint64_t nr = rec[2];
			int user = 0;

			memset(it, 0, sizeof(*it));
			it->misc = hdr.misc;
			it->tid = rec[1] >> 32;
			it->ips = calloc(nr + 1, sizeof(*it->ips));
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t ip = rec[3 + i];

				if (ip == PERF_CONTEXT_USER_DEFERRED && i + 1 < nr) {
					it->cookie = rec[3 + ++i];
				} else if (ip == PERF_CONTEXT_USER) {
					/* Two in a row: perf's walk, not the unwinder's. */
					if (!user)
						it->walker = 1;
					else if (!it->user_ips)
						it->walker = 2;
					user = 1;
				} else if (user && ip < PERF_CONTEXT_MAX) {
					it->ips[it->user_ips++] = ip;
				}
			}
			it->nr = it->user_ips;
			r->n++;
		} else if (hdr.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
			/* header, cookie, nr, ips[nr], sample_id: pid/tid */
			uint64_t nr = rec[2];

			memset(it, 0, sizeof(*it));
			it->is_record = 1;
			it->cookie = rec[1];
			it->nr = nr;
			it->tid = rec[3 + nr] >> 32;
			it->ips = calloc(nr + 1, sizeof(*it->ips));
			for (uint64_t i = 0; i < nr; i++)
				it->ips[i] = rec[3 + i];
			/* Misc says user addresses; checked by the caller. */
			it->user_ips = hdr.misc == PERF_RECORD_MISC_USER;
			r->n++;
		}
	}
	meta->data_tail = tail;
}

/* How many samples of the ring carry a cookie. */
static int ring_deferred(const struct ring *r)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += !r->item[i].is_record && r->item[i].cookie;
	return n;
}

static struct item *find_record(struct ring *r, uint32_t tid, uint64_t cookie)
{
	for (int i = 0; i < r->n; i++) {
		if (r->item[i].is_record && r->item[i].tid == tid &&
		    r->item[i].cookie == cookie)
			return &r->item[i];
	}
	return NULL;
}

/* Did the sample interrupt user mode? */
static int user_mode_sample(const struct item *it)
{
	return (it->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
}

/*
 * The user stack of an interrupt in ut_spin's loop at the end of the
 * chain: the loop's IP, then the same return addresses as the system
 * call's stack (chain_matches_ips()).
 */
static int spin_chain_matches(struct __test_metadata *_metadata, int nr,
			      const unsigned long *ips)
{
	unsigned long copy[nr + 1];

	if (nr < 1 || ips[0] < (unsigned long)ut_spin_loop ||
	    ips[0] >= (unsigned long)ut_spin_end) {
		TH_LOG("entry 0 is %#lx, not in the spin loop", nr ? ips[0] : 0);
		return 0;
	}
	memcpy(copy, ips, nr * sizeof(*ips));
	copy[0] = (unsigned long)ut_syscall_ret;
	return chain_matches_ips(_metadata, nr, copy);
}

FIXTURE(perf_defer) {
	int unused;
};

FIXTURE_SETUP(perf_defer)
{
	struct perf_event_attr attr;
	int fd;

	base_attr(&attr);
	fd = open_event(&attr, -1, -1);
	if (fd < 0)
		SKIP(return, "no deferred callchains in this kernel (%s)",
		     strerror(errno));
	close(fd);
}

FIXTURE_TEARDOWN(perf_defer)
{
}

/*
 * Per-task event: every sample has the marker and a cookie, no user
 * addresses; every cookie has exactly one record, whose stack is the
 * chain; samples of one entry share a cookie.
 */
TEST_F(perf_defer, task_event)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int samples = 0, deferred = 0, shared = 0, records = 0, inline_user = 0;

	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	/*
	 * How many ticks land inside the reads depends on the emulator's
	 * timing: run again (each run appends to the ring) until there are
	 * enough samples for the counts below to mean something.
	 */
	for (int run = 0; run < 10 && ring_deferred(r) <= 10; run++)
		rings_run(r, 1, 40);
	ASSERT_EQ(0, r->lost);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i], *rec;
		int dup = 0;

		if (it->is_record) {
			records++;
			EXPECT_TRUE(it->user_ips);
			for (int j = 0; j < i; j++)
				dup += r->item[j].is_record &&
				       r->item[j].cookie == it->cookie &&
				       r->item[j].tid == it->tid;
			EXPECT_EQ(0, dup);
			continue;
		}
		samples++;
		/*
		 * Between the reads, or in a page fault: may carry its user
		 * chain itself.
		 */
		if (!it->cookie && it->user_ips) {
			inline_user++;
			continue;
		}
		if (!it->cookie)
			continue;
		deferred++;
		EXPECT_EQ(0, it->user_ips);
		rec = find_record(r, it->tid, it->cookie);
		EXPECT_TRUE(!!rec);
		if (!rec)
			continue;
		for (int j = 0; j < i; j++) {
			if (!r->item[j].is_record &&
			    r->item[j].cookie == it->cookie) {
				shared++;
				break;
			}
		}
		/* Samples inside the read: the record is the chain. */
		if (rec->nr && rec->ips[0] == (unsigned long)ut_syscall_ret)
			EXPECT_TRUE(chain_matches_ips(_metadata, rec->nr, rec->ips));
	}
	TH_LOG("%d samples, %d deferred, %d sharing a cookie, %d records",
	       samples, deferred, shared, records);
	TH_LOG("%d samples carry their chain", inline_user);
	EXPECT_GT(deferred, 10);
	/* Every kernel sample of this task asked for deferral and got it. */
	EXPECT_EQ(samples, deferred + inline_user);
	/* Several samples in one system call share one cookie and record. */
	EXPECT_GT(shared, 0);
	EXPECT_LT(records, deferred);
	ring_close(r);
}

/*
 * A sample that interrupts user mode is an entry of its own: it carries
 * its user chain, walked in the interrupt by the deferred walk's walker,
 * with no cookie and no record. Only where that walk cannot be made
 * without faulting (the task's first walk, an object its registry has
 * not met) is it deferred, and its record then carries the chain.
 */
TEST_F(perf_defer, user_mode_inline)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int user = 0, inline_user = 0, deferred = 0, in_loop = 0, matched = 0;

	chain_prime();
	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	rings_start(r, 1);
	chain_spin(SPIN_TURNS);
	rings_stop(r, 1);
	ASSERT_EQ(0, r->lost);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i], *rec;
		const unsigned long *ips = it->ips;
		int nr = it->nr;

		if (it->is_record || !user_mode_sample(it))
			continue;
		user++;
		if (it->cookie) {
			deferred++;
			EXPECT_EQ(0, it->user_ips);
			rec = find_record(r, it->tid, it->cookie);
			EXPECT_TRUE(!!rec);
			if (!rec)
				continue;
			ips = rec->ips;
			nr = rec->nr;
		} else {
			inline_user++;
			/* Walked by the unwinder: one PERF_CONTEXT_USER. */
			EXPECT_EQ(1, it->walker);
		}
		/* In the loop: the whole chain (prologue and epilogue aside). */
		if (nr && ips[0] >= (unsigned long)ut_spin_loop &&
		    ips[0] < (unsigned long)ut_spin_end) {
			in_loop++;
			matched += spin_chain_matches(_metadata, nr, ips);
		}
	}
	TH_LOG("%d user-mode samples: %d with their chain, %d deferred",
	       user, inline_user, deferred);
	TH_LOG("%d in the loop, %d of them with the whole chain",
	       in_loop, matched);
	EXPECT_GT(user, 10);
	EXPECT_EQ(in_loop, matched);
	/* Deferred: the first walk of the task, and of objects it meets. */
	EXPECT_GE(inline_user * 10, user * 9);
	ring_close(r);
}

/* Sample a quarter of the chain's spin into @r. */
static int spin_sampled(struct ring *r)
{
	struct perf_event_attr attr;

	base_attr(&attr);
	if (ring_open(r, &attr, -1))
		return -1;
	rings_start(r, 1);
	chain_spin(SPIN_TURNS / 4);
	rings_stop(r, 1);
	return 0;
}

/* How many of @r's user-mode samples carry a cookie, of *@user in all. */
static int user_mode_cookies(const struct ring *r, int *user)
{
	int deferred = 0;

	*user = 0;
	for (int i = 0; i < r->n; i++) {
		const struct item *it = &r->item[i];

		if (it->is_record || !user_mode_sample(it))
			continue;
		(*user)++;
		deferred += !!it->cookie;
	}
	return deferred;
}

/* A task that guesses frames gets cookies: they carry the guessed count. */
TEST_F(perf_defer, user_mode_guess_deferred)
{
	struct ring *r = &rings[0];
	int user, deferred;

	if (prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0))
		SKIP(return, "no guessed frames in this kernel");
	ASSERT_EQ(0, spin_sampled(r));
	prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0);
	deferred = user_mode_cookies(r, &user);
	TH_LOG("%d user-mode samples, %d deferred", user, deferred);
	EXPECT_GT(user, 0);
	EXPECT_EQ(user, deferred);
	ring_close(r);
}

/* The runtime's handler of the report signal: it reports nothing. */
static void report_ignore(int sig, siginfo_t *si, void *uc)
{
}

/*
 * A process that takes its runtime's reports (PR_USER_STACK_SIGNAL) gets
 * cookies too: the signal that asks for a report carries one. The first
 * opt-in since boot turns on what the walk in the interrupt checks.
 */
TEST_F(perf_defer, user_mode_report_deferred)
{
	struct sigaction sa = {
		.sa_sigaction = report_ignore,
		.sa_flags = SA_SIGINFO | SA_RESTART,
	};
	struct ring *r = &rings[0];
	struct sigaction old;
	int user, deferred;

	ASSERT_EQ(0, sigaction(SIGUSR2, &sa, &old));
	if (prctl(PR_USER_STACK_SIGNAL, SIGUSR2, 0, 0, 0)) {
		sigaction(SIGUSR2, &old, NULL);
		SKIP(return, "no reports by signal in this kernel");
	}
	ASSERT_EQ(0, spin_sampled(r));
	prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0);
	sigaction(SIGUSR2, &old, NULL);
	deferred = user_mode_cookies(r, &user);
	TH_LOG("%d user-mode samples, %d deferred", user, deferred);
	EXPECT_GT(user, 0);
	EXPECT_EQ(user, deferred);
	ring_close(r);
}

/* Page faults of a loop at the end of the chain. */
static char *touch_base;

/* Called through chain_call: out of line, with a frame of its own. */
static long chain_touch(long pages, long a, long b, long c)
{
	ut_leaf_ra = (unsigned long)__builtin_return_address(0);
	for (long i = 0; i < pages; i++)
		touch_base[i * 4096] = 1;
	return 0;
}

/*
 * Is a user stack one of chain_touch's? Its IP is in the function (a few
 * dozen bytes: the range may hold the next function too) and its first
 * return address is the one into chain_leaf that chain_touch stored.
 */
static int in_touch(int nr, const unsigned long *ips)
{
	return nr > 1 && ips[0] >= (unsigned long)chain_touch &&
	       ips[0] < (unsigned long)chain_touch + 256 && ips[1] == ut_leaf_ra;
}

/*
 * A page fault is an entry of its own, mostly sampled once: its first
 * sample carries its user chain, walked in the interrupt by the unwinder
 * (one PERF_CONTEXT_USER), with no cookie; later samples of the same
 * fault carry a copy of that walk, kept for the entry. Only faults whose
 * first walk could not be made in the interrupt are deferred. A debug
 * kernel's faults last several sample periods: there, most fault samples
 * are later ones, and the rounds fill the ring (read after each).
 */
TEST_F(perf_defer, fault_inline)
{
	const long pages = 1024;
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int inline_fault = 0, deferred_fault = 0, matched = 0, cookies = 0;
	int rec_matched = 0;

	chain_prime();
	base_attr(&attr);
	/* 2 kHz: a debug kernel's faults would overflow the ring at 10. */
	attr.sample_period = 500000;
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	rings_start(r, 1);
	for (int round = 0; round < 8; round++) {
		touch_base = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(touch_base != MAP_FAILED);
		chain_nr = pages;
		chain_call = chain_touch;
		chain_00();
		chain_call = ut_syscall;
		munmap(touch_base, pages * 4096);
		ring_parse(r);
	}
	rings_stop(r, 1);
	ASSERT_EQ(0, r->lost);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i], *rec;
		unsigned long copy[UT_MAX_IPS];
		const unsigned long *ips = it->ips;
		int nr = it->nr, first = 1;

		if (it->is_record || user_mode_sample(it))
			continue;
		if (it->cookie) {
			rec = find_record(r, it->tid, it->cookie);
			EXPECT_TRUE(!!rec);
			if (!rec || !in_touch(rec->nr, rec->ips))
				continue;
			deferred_fault++;
			for (int j = 0; j < i && first; j++)
				first = r->item[j].is_record ||
					r->item[j].cookie != it->cookie;
			cookies += first;
			ips = rec->ips;
			nr = rec->nr;
		} else if (in_touch(it->nr, it->ips)) {
			inline_fault++;
			EXPECT_EQ(1, it->walker);
		} else {
			continue;
		}
		nr = nr < UT_MAX_IPS ? nr : UT_MAX_IPS;
		memcpy(copy, ips, nr * sizeof(*copy));
		copy[0] = (unsigned long)ut_syscall_ret;
		if (it->cookie)
			rec_matched += chain_matches_ips(_metadata, nr, copy);
		else
			matched += chain_matches_ips(_metadata, nr, copy);
	}
	TH_LOG("kernel samples in faults of the loop: %d with their chain,",
	       inline_fault);
	TH_LOG("%d deferred (%d entries)", deferred_fault, cookies);
	TH_LOG("whole chain: %d with their chain, %d records", matched,
	       rec_matched);
	EXPECT_GT(inline_fault, 10);
	EXPECT_EQ(inline_fault, matched);
	EXPECT_EQ(deferred_fault, rec_matched);
	/*
	 * A deferred fault sample is one of an entry whose first walk could
	 * not be made in the interrupt (the task's first walks): few. Later
	 * samples of the others copy the kept walk.
	 */
	EXPECT_LE(cookies, inline_fault / 10 + 10);
	ring_close(r);
}

/* Two events with defer_output in one buffer: still one record per entry. */
TEST_F(perf_defer, one_record_per_buffer)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int second, records = 0, dup = 0;

	/* The tracking event, the sampler and a second sampler: all output. */
	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	attr.sample_period = 150000;
	second = open_event(&attr, -1, -1);
	ASSERT_GE(second, 0);
	ASSERT_EQ(0, ioctl(second, PERF_EVENT_IOC_SET_OUTPUT, r->fd));
	ioctl(second, PERF_EVENT_IOC_ENABLE, 0);
	/* Under TCG a run may see no tick inside the reads: run again. */
	for (int run = 0; run < 10 && !ring_deferred(r); run++)
		rings_run(r, 1, 20);
	ioctl(second, PERF_EVENT_IOC_DISABLE, 0);
	ASSERT_EQ(0, r->lost);
	for (int i = 0; i < r->n; i++) {
		if (!r->item[i].is_record)
			continue;
		records++;
		for (int j = 0; j < i; j++)
			dup += r->item[j].is_record &&
			       r->item[j].cookie == r->item[i].cookie;
	}
	EXPECT_GT(records, 0);
	EXPECT_EQ(0, dup);
	close(second);
	ring_close(r);
}

/* Two buffers with defer_output: each gets the record. */
TEST_F(perf_defer, every_buffer_gets_it)
{
	struct perf_event_attr attr;
	int matched = 0, deferred = 0;

	/* Samples go to ring 0; ring 1 has only a tracking event. */
	base_attr(&attr);
	attr.defer_output = 0;
	ASSERT_EQ(0, ring_open(&rings[0], &attr, -1));
	ASSERT_EQ(0, ring_open(&rings[1], NULL, -1));
	/*
	 * A short run under TCG may see no tick inside the reads; run again
	 * (each run appends to the rings) until ring 0 holds a sample.
	 */
	for (int run = 0; run < 10 && !ring_deferred(&rings[0]); run++)
		rings_run(rings, 2, 20);
	for (int i = 0; i < rings[0].n; i++) {
		struct item *it = &rings[0].item[i];

		if (it->is_record || !it->cookie)
			continue;
		deferred++;
		matched += find_record(&rings[0], it->tid, it->cookie) &&
			   find_record(&rings[1], it->tid, it->cookie);
	}
	EXPECT_GT(deferred, 0);
	EXPECT_EQ(deferred, matched);
	ring_close(&rings[0]);
	ring_close(&rings[1]);
}

/* Per-CPU events: the records reach the buffer of the CPU they ran on. */
TEST_F(perf_defer, cpu_events)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_attr attr;
	int deferred = 0, matched = 0;

	if (ncpu > 2)
		ncpu = 2;
	base_attr(&attr);
	for (int c = 0; c < ncpu; c++) {
		int ret = ring_open(&rings[c], &attr, c);

		if (ret == -EACCES || ret == -EPERM)
			SKIP(return, "per-CPU events need privileges");
		ASSERT_EQ(0, ret);
	}
	rings_run(rings, ncpu, 40);
	/* Each sample of this task has its record in one of the buffers. */
	for (int c = 0; c < ncpu; c++) {
		for (int i = 0; i < rings[c].n; i++) {
			struct item *it = &rings[c].item[i];
			int found = 0;

			if (it->is_record || !it->cookie || it->tid != (uint32_t)gettid())
				continue;
			deferred++;
			for (int d = 0; d < ncpu; d++)
				found |= !!find_record(&rings[d], it->tid, it->cookie);
			matched += found;
		}
	}
	TH_LOG("%d deferred samples of this task, %d with their record",
	       deferred, matched);
	EXPECT_GT(deferred, 0);
	EXPECT_EQ(deferred, matched);
	for (int c = 0; c < ncpu; c++)
		ring_close(&rings[c]);
}

/* Moves a task back and forth between CPU 0 and CPU 1 until told to stop. */
struct flipper {
	pid_t		tid;
	int		stop;		/* __atomic: set by the test, read here */
	int		moves;
};

static void *flip_affinity(void *arg)
{
	struct flipper *f = arg;
	cpu_set_t set;

	for (int cpu = 0; !__atomic_load_n(&f->stop, __ATOMIC_RELAXED); cpu ^= 1) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		f->moves += !sched_setaffinity(f->tid, sizeof(set), &set);
		usleep(200);
	}
	return NULL;
}

/*
 * Per-CPU events and a task that migrates while it is in the kernel: a
 * sample taken on one CPU gets its record in the buffer of the CPU where
 * the task returned to user space, and no sample is left without one.
 */
TEST_F(perf_defer, migrating_task)
{
	struct flipper f = { .tid = gettid() };
	struct perf_event_attr attr;
	int deferred = 0, matched = 0, crossed = 0;
	pthread_t thread;
	cpu_set_t all;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	base_attr(&attr);
	for (int c = 0; c < 2; c++) {
		int ret = ring_open(&rings[c], &attr, c);

		if (ret == -EACCES || ret == -EPERM)
			SKIP(return, "per-CPU events need privileges");
		ASSERT_EQ(0, ret);
	}
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	ASSERT_EQ(0, pthread_create(&thread, NULL, flip_affinity, &f));
	/*
	 * A sample whose record crosses needs a move inside that entry,
	 * which a busy host makes rare: run until one did (at most 10 runs).
	 */
	for (int run = 0; run < 10 && !crossed; run++) {
		rings_run(rings, 2, 100);
		deferred = 0;
		matched = 0;
		crossed = 0;
		for (int c = 0; c < 2; c++) {
			for (int i = 0; i < rings[c].n; i++) {
				struct item *it = &rings[c].item[i];
				int here, there;

				if (it->is_record || !it->cookie || it->tid != f.tid)
					continue;
				deferred++;
				here = !!find_record(&rings[c], it->tid, it->cookie);
				there = !!find_record(&rings[!c], it->tid, it->cookie);
				matched += here || there;
				crossed += !here && there;
			}
		}
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	sched_setaffinity(0, sizeof(all), &all);

	TH_LOG("%d moves, %d deferred samples, %d with their record, %d of them on the other CPU",
	       f.moves, deferred, matched, crossed);
	EXPECT_GT(deferred, 0);
	EXPECT_EQ(deferred, matched);
	EXPECT_GT(crossed, 0);
	ring_close(&rings[0]);
	ring_close(&rings[1]);
}

/*
 * What the samples and records of inherited events tell, over all rings:
 * every deferred sample of every task is answered by exactly one record
 * with its task and cookie, in one of the rings.
 */
struct inherit_tally {
	int	deferred;	/* samples with a cookie */
	int	answered;	/* of them, with their record */
	int	tasks;		/* distinct tasks with deferred samples */
	int	dup;		/* records that repeat a task and cookie */
	int	chains;		/* records inside the read, checked */
	int	bad_chains;
};

static int records_of(struct ring *r, int nr, uint32_t tid, uint64_t cookie,
		      struct item **rec)
{
	int n = 0;

	for (int c = 0; c < nr; c++) {
		for (int i = 0; i < r[c].n; i++) {
			struct item *it = &r[c].item[i];

			if (it->is_record && it->tid == tid && it->cookie == cookie) {
				*rec = it;
				n++;
			}
		}
	}
	return n;
}

static void inherit_tally(struct __test_metadata *_metadata, struct ring *r,
			  int nr, struct inherit_tally *t)
{
	uint32_t seen[64];
	int nseen = 0;

	memset(t, 0, sizeof(*t));
	for (int c = 0; c < nr; c++) {
		EXPECT_EQ(0, r[c].lost);
		for (int i = 0; i < r[c].n; i++) {
			struct item *it = &r[c].item[i], *rec = NULL;
			int n, known = 0;

			if (it->is_record) {
				n = records_of(r, nr, it->tid, it->cookie, &rec);
				t->dup += n > 1;
				if (it->nr && it->ips[0] == (unsigned long)ut_syscall_ret) {
					t->chains++;
					t->bad_chains += !chain_matches_ips(_metadata,
								it->nr, it->ips);
				}
				continue;
			}
			if (!it->cookie)
				continue;
			t->deferred++;
			t->answered += records_of(r, nr, it->tid, it->cookie, &rec) > 0;
			for (int k = 0; k < nseen; k++)
				known |= seen[k] == it->tid;
			if (!known && nseen < 64)
				seen[nseen++] = it->tid;
		}
	}
	t->tasks = nseen;
	TH_LOG("%d tasks, %d deferred samples, %d with their record, %d duplicates",
	       t->tasks, t->deferred, t->answered, t->dup);
	TH_LOG("%d stacks in the read checked, %d wrong", t->chains, t->bad_chains);
}

/*
 * At least @min_tasks tasks sampled, every deferred sample answered by
 * exactly one record, the stacks inside the read exactly the chain. Closes
 * the rings.
 */
static void inherit_check(struct __test_metadata *_metadata, struct ring *r,
			  int nr, int min_tasks)
{
	struct inherit_tally t;

	inherit_tally(_metadata, r, nr, &t);
	EXPECT_GE(t.tasks, min_tasks);
	EXPECT_GT(t.deferred, 0);
	EXPECT_EQ(t.deferred, t.answered);
	EXPECT_EQ(0, t.dup);
	EXPECT_GT(t.chains, 0);
	EXPECT_EQ(0, t.bad_chains);
	for (int c = 0; c < nr; c++)
		ring_close(&r[c]);
}

#define INHERIT_THREADS	3
#define INHERIT_ROUNDS	40

static void *inherit_thread(void *arg)
{
	chain_read_zero(INHERIT_ROUNDS);
	return arg;
}

/* Start threads, do the workload here too, and wait for them. */
static void run_threads(void)
{
	pthread_t th[INHERIT_THREADS];
	int n = 0;

	for (int i = 0; i < INHERIT_THREADS; i++)
		n += !pthread_create(&th[n], NULL, inherit_thread, NULL);
	chain_read_zero(INHERIT_ROUNDS);
	while (n--)
		pthread_join(th[n], NULL);
}

/*
 * perf record's way: one ring per CPU, events on this task with inherit,
 * opened before the threads exist. The threads get inherited copies of
 * the events, whose output goes to the parent events' rings; perf also
 * swaps equivalent contexts between the threads at context switches. The
 * records of every thread must reach the rings, once.
 */
static int inherit_rings_open(struct __test_metadata *_metadata, struct ring *r)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct perf_event_attr attr;

	if (ncpu > 2)
		ncpu = 2;
	base_attr(&attr);
	attr.inherit = 1;
	attr.sample_period = 500000;
	for (int c = 0; c < ncpu; c++)
		EXPECT_EQ(0, ring_open_pid(&r[c], &attr, 0, c));
	return ncpu;
}

TEST_F(perf_defer, inherited_threads)
{
	int nr;

	nr = inherit_rings_open(_metadata, rings);
	rings_start(rings, nr);
	run_threads();
	rings_stop(rings, nr);
	inherit_check(_metadata, rings, nr, 2);
}

/* A child process, inheriting the events, that starts threads of its own. */
TEST_F(perf_defer, inherited_fork)
{
	int nr, status;
	pid_t child;

	nr = inherit_rings_open(_metadata, rings);
	rings_start(rings, nr);
	child = fork();
	if (!child) {
		run_threads();
		_exit(0);
	}
	chain_read_zero(INHERIT_ROUNDS);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	rings_stop(rings, nr);
	inherit_check(_metadata, rings, nr, 3);
}

static long tracepoint_id(const char *event)
{
	char path[256], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", event);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atol(buf);
}

static void *exec_from_thread(void *arg)
{
	static char *const argv[] = { "/bin/true", NULL };

	chain_run(UT_SYS_EXECVE, (long)argv[0], (long)argv, 0);
	return arg;
}

/*
 * A thread that is not the leader execs: de_thread() gives it the
 * leader's thread id inside the entry. The deferred record of every
 * sample taken before that must still carry the thread id the sample
 * carries, and a sample taken after it, on the way to the new image,
 * gets no cookie that no record answers: nothing is lost.
 */
TEST_F(perf_defer, exec_from_thread)
{
	static const char * const events[] = {
		"syscalls/sys_enter_execve", "syscalls/sys_exit_execve",
	};
	struct inherit_tally t;
	struct perf_event_attr attr;
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), status;
	int extra[2] = { -1, -1 };
	pthread_t th;
	pid_t child;

	if (ncpu > 2)
		ncpu = 2;
	base_attr(&attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.sample_period = 1;
	attr.inherit = 1;
	for (int c = 0; c < ncpu; c++) {
		struct ring *r = &rings[c];

		attr.config = tracepoint_id(events[0]);
		if ((long)attr.config < 0)
			SKIP(return, "no %s tracepoint", events[0]);
		ASSERT_EQ(0, ring_open_pid(r, &attr, 0, c));
		/* The second event writes into the same ring. */
		attr.config = tracepoint_id(events[1]);
		extra[c] = open_event_pid(&attr, 0, c, -1);
		ASSERT_GE(extra[c], 0);
		ASSERT_EQ(0, ioctl(extra[c], PERF_EVENT_IOC_SET_OUTPUT, r->fd));
		ASSERT_EQ(0, ioctl(extra[c], PERF_EVENT_IOC_ENABLE, 0));
	}
	rings_start(rings, ncpu);
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		if (pthread_create(&th, NULL, exec_from_thread, NULL))
			_exit(2);
		pause();
		_exit(3);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	chain_read_zero(1);
	for (int c = 0; c < ncpu; c++)
		close(extra[c]);
	rings_stop(rings, ncpu);
	inherit_tally(_metadata, rings, ncpu, &t);
	EXPECT_GT(t.deferred, 0);
	EXPECT_EQ(t.deferred, t.answered);
	EXPECT_EQ(0, t.dup);
	for (int c = 0; c < ncpu; c++)
		ring_close(&rings[c]);
}

/*
 * Samples of a vCPU thread running guest code (the test client plays KVM
 * and tells perf this task is in guest user mode) are not deferred: the
 * user stack at the task's return would be the VMM's, not the guest's.
 * Like the in-interrupt walk, they get no user addresses.
 */
TEST_F(perf_defer, guest_mode_not_deferred)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int guest = 0, deferred = 0, records = 0, user_ips = 0;
	char pid[16];

	if (access(UT_DIR "/guest", W_OK))
		SKIP(return, "no %s (test client, CONFIG_GUEST_PERF_EVENTS)",
		     UT_DIR "/guest");
	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	snprintf(pid, sizeof(pid), "%d", (int)syscall(SYS_gettid));
	ASSERT_EQ(0, ut_write(UT_DIR "/guest", pid));
	rings_run(r, 1, 40);
	ASSERT_EQ(0, ut_write(UT_DIR "/guest", "0"));
	ASSERT_EQ(0, r->lost);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i];

		if (it->is_record) {
			records++;
			continue;
		}
		if ((it->misc & PERF_RECORD_MISC_CPUMODE_MASK) !=
		    PERF_RECORD_MISC_GUEST_USER)
			continue;
		guest++;
		deferred += !!it->cookie;
		user_ips += it->user_ips;
	}
	TH_LOG("%d guest samples, %d deferred, %d records, %d user addresses",
	       guest, deferred, records, user_ips);
	EXPECT_GT(guest, 10);
	EXPECT_EQ(0, deferred);
	EXPECT_EQ(0, records);
	EXPECT_EQ(0, user_ips);
	ring_close(r);
}

#define KPROBE_EVENTS	"/sys/kernel/tracing/kprobe_events"
#define KPROBE_ID	"/sys/kernel/tracing/events/unwind_selftest/pass_probe/id"

/*
 * A sample taken after its entry's pass: the test client's "probe" write
 * hits a kprobe in the write, then again in task work that client A's
 * callback queues, which runs in the exit work loop's next round, after
 * the pass that wrote perf's record for the first sample. The second
 * sample's request finds perf's callback done for the entry: its record
 * went out before it, and no other will come. It must carry the entry's
 * stack itself, the same as the record's.
 */
TEST_F(perf_defer, sample_after_the_pass)
{
	const char *probe = "p:unwind_selftest/pass_probe ut_probe_point\n";
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int fd, deferred = 0, inline_chains = 0;
	uint64_t last_cookie = 0;
	char id[32];

	if (access(UT_DIR "/request", W_OK))
		SKIP(return, "no %s (test client)", UT_DIR "/request");
	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND);
	/* A probe left by a run that failed half-way, if any, goes first. */
	if (fd >= 0 && write(fd, "-:unwind_selftest/pass_probe\n", 29) < 0)
		errno = 0;
	if (fd < 0 || write(fd, probe, strlen(probe)) < 0)
		SKIP(return, "cannot add a kprobe (%s)", strerror(errno));
	close(fd);
	fd = open(KPROBE_ID, O_RDONLY);
	ASSERT_GE(fd, 0);
	memset(id, 0, sizeof(id));
	ASSERT_GT(read(fd, id, sizeof(id) - 1), 0);
	close(fd);

	base_attr(&attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = strtoull(id, NULL, 10);
	attr.sample_period = 1;
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(r->sampler, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, ut_write(UT_DIR "/request", "task 1 1 probe"));
	ioctl(r->sampler, PERF_EVENT_IOC_DISABLE, 0);
	getppid();
	ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_parse(r);
	ut_drain();

	/* Per write: a deferred sample, then one with the same stack inline. */
	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i], *rec;

		if (it->is_record)
			continue;
		if (it->cookie) {
			/* Its record comes after it. */
			int later = 0;

			for (int k = i + 1; k < r->n; k++)
				later += r->item[k].is_record &&
					 r->item[k].cookie == it->cookie;
			EXPECT_EQ(1, later);
			deferred++;
			last_cookie = it->cookie;
			continue;
		}
		inline_chains++;
		EXPECT_EQ(1, it->walker);
		rec = find_record(r, it->tid, last_cookie);
		ASSERT_TRUE(!!rec);
		ASSERT_GT(it->user_ips, 0);
		EXPECT_EQ(rec->nr, it->user_ips);
		EXPECT_EQ(0, memcmp(rec->ips, it->ips,
				    it->user_ips * sizeof(*it->ips)));
	}
	TH_LOG("%d samples deferred, %d with the entry's stack inline, of %d items",
	       deferred, inline_chains, r->n);
	EXPECT_EQ(5, deferred);
	EXPECT_EQ(5, inline_chains);
	ring_close(r);

	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(29, write(fd, "-:unwind_selftest/pass_probe\n", 29));
	close(fd);
}

#define KPROBE_PROFILE	"/sys/kernel/tracing/kprobe_profile"
#define KWALK_ENABLE	"/sys/kernel/tracing/events/unwind_selftest/kwalk/enable"

/*
 * A kprobe on perf_callchain_kernel(), the kernel stack walk of a sample:
 * start (1) puts it and enables it, then stop (0) returns how often it
 * hit and removes it; -1 if it cannot be put (the test then does not
 * count).
 */
static long kwalk_probe(struct __test_metadata *_metadata, int start)
{
	const char *probe = "p:unwind_selftest/kwalk perf_callchain_kernel\n";
	char line[256], name[128];
	long hits = -1, h;
	FILE *f;
	int fd;

	if (start) {
		fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND);
		if (fd < 0)
			return -1;
		if (write(fd, "-:unwind_selftest/kwalk\n", 24) < 0)
			errno = 0;
		if (write(fd, probe, strlen(probe)) < 0) {
			close(fd);
			return -1;
		}
		close(fd);
		return ut_write(KWALK_ENABLE, "1") ? -1 : 0;
	}
	if (ut_write(KWALK_ENABLE, "0"))
		return -1;
	f = fopen(KPROBE_PROFILE, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld", name, &h) == 2 &&
		    !strcmp(name, "kwalk"))
			hits = h;
	}
	if (f)
		fclose(f);
	fd = open(KPROBE_EVENTS, O_WRONLY | O_APPEND);
	if (fd >= 0) {
		EXPECT_EQ(24, write(fd, "-:unwind_selftest/kwalk\n", 24));
		close(fd);
	}
	return hits;
}

#define FAIL_REQUEST "/sys/kernel/debug/fail_unwind_request/"

/*
 * When the unwinder refuses (here by fault injection, as for a task too
 * far on its way out), samples take their user part in the interrupt, as
 * without defer_callchain: no cookie, no record, the user chain inline.
 */
TEST_F(perf_defer, fallback_when_refused)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int samples = 0, with_user = 0, records = 0, perf_walked = 0;
	long walks;

	if (access(FAIL_REQUEST "probability", W_OK))
		SKIP(return, "no fail_unwind_request fault injection");
	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	/* Kernel stack walks, counted by a kprobe: one per sample. */
	kwalk_probe(_metadata, 1);
	/* Every request fails while it is set: the test runs alone. */
	ASSERT_EQ(0, ut_write(FAIL_REQUEST "verbose", "0"));
	ASSERT_EQ(0, ut_write(FAIL_REQUEST "times", "-1"));
	ASSERT_EQ(0, ut_write(FAIL_REQUEST "interval", "1"));
	ASSERT_EQ(0, ut_write(FAIL_REQUEST "probability", "100"));
	/*
	 * A refused sample walks both stacks in the interrupt, slow under
	 * emulation, and a slow guest gets fewer samples than the periods
	 * it counted (8 for 40 in one run): run again until 10 came.
	 */
	for (int run = 0; run < 8 && ring_samples(r) <= 10; run++)
		rings_run(r, 1, 20);
	ASSERT_EQ(0, ut_write(FAIL_REQUEST "probability", "0"));
	walks = kwalk_probe(_metadata, 0);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i];

		if (it->is_record) {
			records++;
			continue;
		}
		samples++;
		EXPECT_EQ(0, it->cookie);
		with_user += it->user_ips > 0;
		/*
		 * User mode: the unwinder walks it in the interrupt, no
		 * request made; kernel mode: refused, so perf's walker.
		 */
		if (!user_mode_sample(it)) {
			EXPECT_EQ(2, it->walker);
			perf_walked++;
		}
	}
	TH_LOG("%d samples, %d with user addresses, %d records",
	       samples, with_user, records);
	TH_LOG("%d walked by perf after a refusal; %ld kernel stack walks",
	       perf_walked, walks);
	EXPECT_GT(samples, 10);
	EXPECT_EQ(samples, with_user);
	EXPECT_EQ(0, records);
	/* Each kernel-mode sample walks the kernel stack once, not twice. */
	if (walks >= 0)
		EXPECT_EQ(perf_walked, walks);
	ring_close(r);
}

/* The file offset of a function of this program, for a uprobe. */
static long file_offset(unsigned long addr, char *path, size_t len)
{
	unsigned long start, end, off;
	char line[512], exe[256];
	long ret = -1;
	ssize_t n;
	FILE *f;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) != 3)
			continue;
		if (addr >= start && addr < end && strstr(line, exe)) {
			ret = addr - start + off;
			break;
		}
	}
	fclose(f);
	snprintf(path, len, "%s", exe);
	return ret;
}

#define UPROBE_EVENTS	"/sys/kernel/tracing/uprobe_events"
#define UPROBE_ID	"/sys/kernel/tracing/events/unwind_selftest/chain30/id"

/*
 * A uprobe in chain_30's prologue, sampled with deferral: the stack is
 * walked when the breakpoint returns to user space. At delta 0 the probe
 * sits on "push %rbp", which x86 emulates: the task returns to the "mov
 * %rsp,%rbp" after it. At delta 1 it sits on the mov, which the task is
 * about to single-step out of line. Either way the record must start at
 * chain_30 + 1, not at the out-of-line slot, and name chain_30's caller
 * although the frame is not set up.
 */
static void uprobe_in_prologue(struct __test_metadata *_metadata, int delta)
{
	static const unsigned char prologue[] = { 0x55, 0x48, 0x89, 0xe5 };
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	char path[256], probe[400], id[32];
	int fd, checked = 0;
	long off;

	if (memcmp((void *)chain_30, prologue, sizeof(prologue)))
		SKIP(return, "chain_30 does not start with push %%rbp; mov %%rsp,%%rbp");
	chain_prime();
	off = file_offset((unsigned long)chain_30, path, sizeof(path));
	ASSERT_GE(off, 0);
	snprintf(probe, sizeof(probe), "p:unwind_selftest/chain30 %s:%#lx\n",
		 path, off + delta);
	fd = open(UPROBE_EVENTS, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, probe, strlen(probe)) < 0)
		SKIP(return, "cannot add a uprobe (%s)", strerror(errno));
	close(fd);
	fd = open(UPROBE_ID, O_RDONLY);
	ASSERT_GE(fd, 0);
	memset(id, 0, sizeof(id));
	ASSERT_GT(read(fd, id, sizeof(id) - 1), 0);
	close(fd);

	base_attr(&attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = strtoull(id, NULL, 10);
	attr.sample_period = 1;
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	ioctl(r->fd, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(r->sampler, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 5; i++)
		chain_run(UT_SYS_GETPPID, 0, 0, 0);
	ioctl(r->sampler, PERF_EVENT_IOC_DISABLE, 0);
	getppid();
	ioctl(r->fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_parse(r);

	for (int i = 0; i < r->n; i++) {
		struct item *it = &r->item[i], *rec;

		if (it->is_record || !it->cookie)
			continue;
		rec = find_record(r, it->tid, it->cookie);
		ASSERT_TRUE(!!rec);
		ASSERT_GE(rec->nr, 32);
		EXPECT_EQ((unsigned long)chain_30 + 1, rec->ips[0]);
		/* chain_30's caller, then the rest of the chain. */
		for (int k = 0; k < 31; k++)
			EXPECT_EQ(chain_ra[30 - k], rec->ips[1 + k]);
		checked++;
	}
	EXPECT_EQ(5, checked);
	ring_close(r);

	fd = open(UPROBE_EVENTS, O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(26, write(fd, "-:unwind_selftest/chain30\n", 26));
	close(fd);
}

TEST_F(perf_defer, uprobe_on_emulated_push)
{
	uprobe_in_prologue(_metadata, 0);
}

TEST_F(perf_defer, uprobe_on_single_stepped_mov)
{
	uprobe_in_prologue(_metadata, 1);
}

/* exclude_callchain_user still means no user part at all. */
TEST_F(perf_defer, exclude_callchain_user)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;

	base_attr(&attr);
	attr.exclude_callchain_user = 1;
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	rings_run(r, 1, 10);
	for (int i = 0; i < r->n; i++) {
		EXPECT_EQ(0, r->item[i].is_record);
		EXPECT_EQ(0, r->item[i].cookie);
		EXPECT_EQ(0, r->item[i].user_ips);
	}
	ring_close(r);
}

/* defer_callchain without callchains is a clear error. */
TEST_F(perf_defer, needs_callchain)
{
	struct perf_event_attr attr;

	base_attr(&attr);
	attr.sample_type = PERF_SAMPLE_TID;
	EXPECT_EQ(-1, open_event(&attr, -1, -1));
	EXPECT_EQ(EINVAL, errno);
}

#ifdef UNWIND_GUESS_BUILD
/* Index of a PERF_CONTEXT_USER in a record's addresses, from @from; or -1. */
static int user_mark(const struct item *rec, int from)
{
	for (int i = from; i < rec->nr; i++)
		if (rec->ips[i] == (unsigned long)PERF_CONTEXT_USER)
			return i;
	return -1;
}

/*
 * Guessed frames (perf_defer_test_guess: no frame pointers, no SFrame):
 * the walk stops after ut_syscall's own frame, and the chain found by
 * scanning the stack follows one PERF_CONTEXT_USER in the record.
 */
TEST_F(perf_defer, guessed_frames)
{
	struct ring *r = &rings[0];
	struct perf_event_attr attr;
	int checked = 0;

	ASSERT_EQ(0, prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0));
	base_attr(&attr);
	ASSERT_EQ(0, ring_open(r, &attr, -1));
	rings_run(r, 1, 40);
	ASSERT_EQ(0, prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0));
	chain_prime();

	for (int i = 0; i < r->n; i++) {
		struct item *rec = &r->item[i];
		int mark, k = 0;

		if (!rec->is_record || !rec->nr ||
		    rec->ips[0] != (unsigned long)ut_syscall_ret)
			continue;
		checked++;
		mark = user_mark(rec, 0);
		/* ut_syscall keeps a frame: its IP and return are walked. */
		ASSERT_GE(mark, 2);
		EXPECT_EQ(rec->ips[1], ut_leaf_ra);
		EXPECT_EQ(-1, user_mark(rec, mark + 1));
		/* The chain's return addresses, in order, after the mark. */
		for (int j = mark + 1; j < rec->nr && k < CHAIN_LEN; j++)
			if (rec->ips[j] == chain_ra[CHAIN_LEN - 1 - k])
				k++;
		EXPECT_GE(k * 10, CHAIN_LEN * 9);
	}
	TH_LOG("%d records of the chain checked", checked);
	EXPECT_GT(checked, 0);
	ring_close(r);
}
#endif /* UNWIND_GUESS_BUILD */

#ifdef UNWIND_SFRAME_BUILD
/*
 * Built without frame pointers and with an SFrame table: the chain's
 * records must be exact all the same, and so must the chains that
 * user-mode and page-fault samples take in the interrupt. The other cases test perf, not
 * the walk, and run in the frame-pointer build.
 */
int main(int argc, char **argv)
{
	static char * const args[] = {
		"perf_defer_test_sframe", "-t", "task_event",
		"-t", "user_mode_inline", "-t", "fault_inline", NULL
	};

	return test_harness_run(7, (char **)args);
}
#elif defined(UNWIND_GUESS_BUILD)
/* Built without frame pointers or SFrame: the guessed frames' case only. */
int main(int argc, char **argv)
{
	static char * const args[] = {
		"perf_defer_test_guess", "-t", "guessed_frames", NULL
	};

	return test_harness_run(3, (char **)args);
}
#else
TEST_HARNESS_MAIN
#endif
