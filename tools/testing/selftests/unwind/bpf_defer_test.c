// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF client of deferred unwinding: bpf_unwind_deferred_request() from
 * every kind of program that may call it (perf_event, kprobe in task
 * context and in NMI, tracepoint, BTF tracepoint, fentry, uprobe,
 * syscall), the stacks delivered through the unwind_user_stack_tp
 * tracepoint, one walk shared with perf and ftrace, programs detached with
 * stacks pending, hostile stacks, frames a process reports for itself
 * (unwind_user_report_tp), and what the verifier and an unprivileged user
 * are told.
 *
 * Each accepted request must lead to exactly one stack with its cookie,
 * and a stack whose first address is the system call of the 60-frame test
 * chain must be exactly that chain.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "unwind_chain.h"
#include "bpf_defer.h"
#include "bpf_defer.skel.h"
#include "bpf_defer_bad.skel.h"

#define BD_MAX_RECORDS	4096
#define KERNEL_START	0xffff800000000000UL

/* bpf_unwind_deferred_request()'s results (enum unwind_request_result). */
#define UNWIND_QUEUED_RET		0
#define UNWIND_ALREADY_QUEUED_RET	1
#define UNWIND_ALREADY_DONE_RET		2

/* What the ring buffer brought, in order. */
static struct {
	int			nreq, nstack, nwalked, nreport;
	struct bd_request	req[BD_MAX_RECORDS];
	struct bd_stack		stack[BD_MAX_RECORDS / 4];
	struct bd_stack		walked[16];
	struct bd_stack		report[16];
} got;

static int collect(void *ctx, void *data, size_t size)
{
	__u32 type = *(__u32 *)data;

	if (type == BD_REQUEST && size >= sizeof(struct bd_request) &&
	    got.nreq < BD_MAX_RECORDS)
		got.req[got.nreq++] = *(struct bd_request *)data;
	else if (type == BD_STACK && size >= sizeof(struct bd_stack) &&
		 got.nstack < BD_MAX_RECORDS / 4)
		got.stack[got.nstack++] = *(struct bd_stack *)data;
	else if (type == BD_GOT_STACK && size >= sizeof(struct bd_stack) &&
		 got.nwalked < 16)
		got.walked[got.nwalked++] = *(struct bd_stack *)data;
	else if (type == BD_REPORT && size >= sizeof(struct bd_stack) &&
		 got.nreport < 16)
		got.report[got.nreport++] = *(struct bd_stack *)data;
	return 0;
}

/* libbpf's messages (the verifier's log among them) with BD_VERBOSE set. */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	if (!getenv("BD_VERBOSE"))
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The last verifier log of a failed load, for the rejection tests. */
static char verifier_log[64 * 1024];

static struct bd_stack *stack_of(__u32 tid, __u64 cookie, int *count)
{
	struct bd_stack *found = NULL;

	*count = 0;
	for (int i = 0; i < got.nstack; i++) {
		if (got.stack[i].tid == tid && got.stack[i].cookie == cookie) {
			found = &got.stack[i];
			(*count)++;
		}
	}
	return found;
}

static int stack_is_chain(struct __test_metadata *_metadata,
			  struct bd_stack *s)
{
	unsigned long ips[BD_MAX_FRAMES];
	int nr = s->nr < BD_MAX_FRAMES ? s->nr : BD_MAX_FRAMES;

	for (int i = 0; i < nr; i++)
		ips[i] = s->ips[i];
	return chain_matches_ips(_metadata, nr, ips);
}

/* Is the kfunc in the running kernel's BTF? */
static bool kernel_has_kfunc(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool has;

	if (!btf)
		return false;
	has = btf__find_by_name_kind(btf, "bpf_unwind_deferred_request",
				     BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return has;
}

/* The loaded programs of one test, their links and the ring's reader. */
struct bd_ctx {
	struct bpf_defer	*skel;
	struct ring_buffer	*rb;
	struct bpf_link		*links[16];
	int			nlinks;
};

FIXTURE(bpf_defer) {
	struct bd_ctx c;
};

FIXTURE_SETUP(bpf_defer)
{
	memset(&got, 0, sizeof(got));
	libbpf_set_print(libbpf_quiet);
	if (!kernel_has_kfunc())
		SKIP(return, "no kernel BTF or no bpf_unwind_deferred_request()");
	self->c.skel = bpf_defer__open();
	ASSERT_NE(NULL, self->c.skel);
	self->c.skel->bss->target_tgid = getpid();
	self->c.skel->bss->target_syscall = SYS_getppid;
	bpf_program__set_autoload(self->c.skel->progs.on_stack, true);
	bpf_program__set_autoload(self->c.skel->progs.on_walk, true);
	chain_prime();
}

FIXTURE_TEARDOWN(bpf_defer)
{
	ring_buffer__free(self->c.rb);
	for (int i = 0; i < self->c.nlinks; i++)
		bpf_link__destroy(self->c.links[i]);
	bpf_defer__destroy(self->c.skel);
}

static void add_link(struct __test_metadata *_metadata,
		     struct bd_ctx *c, struct bpf_link *link)
{
	ASSERT_NE(NULL, link) TH_LOG("attach: %s", strerror(errno));
	ASSERT_LT(c->nlinks, 16);
	c->links[c->nlinks++] = link;
}

/*
 * Load the receiver, the walk counter and the requesters whose autoload
 * the test turned on, and attach those that libbpf can attach by their
 * section name.
 */
static void start(struct __test_metadata *_metadata, struct bd_ctx *c)
{
	struct bpf_program *prog;
	int err;

	err = bpf_defer__load(c->skel);
	ASSERT_EQ(0, err) TH_LOG("load failed (BD_VERBOSE=1 shows the verifier's log)");
	bpf_object__for_each_program(prog, c->skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		/* The test attaches those itself. */
		if (!bpf_program__autoload(prog) || !strcmp(sec, "kprobe") ||
		    !strcmp(sec, "uprobe") || !strcmp(sec, "uprobe.s") ||
		    !strcmp(sec, "perf_event") || !strcmp(sec, "syscall"))
			continue;
		add_link(_metadata, c, bpf_program__attach(prog));
	}
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), collect,
				 NULL, NULL);
	ASSERT_NE(NULL, c->rb);
}

static void drain(struct bd_ctx *c)
{
	ring_buffer__consume(c->rb);
}

/*
 * Every accepted request has exactly one stack with its cookie; every
 * refused one a zero cookie; every stack answers an accepted request;
 * stacks taken at the chain's system call are the chain. Returns the
 * number of such chain stacks.
 */
static int check_answers(struct __test_metadata *_metadata,
			 struct bd_ctx *c)
{
	int chains = 0;

	drain(c);
	EXPECT_EQ(0, c->skel->bss->dropped);
	for (int i = 0; i < got.nreq; i++) {
		struct bd_request *r = &got.req[i];
		int n;

		if (r->ret < 0) {
			EXPECT_EQ(0, r->cookie);
			continue;
		}
		EXPECT_LE(r->ret, 2);
		stack_of(r->tid, r->cookie, &n);
		EXPECT_EQ(1, n)
			TH_LOG("request %d (source %u, ret %d, cookie %#llx): %d stacks",
			       i, r->source, r->ret, (unsigned long long)r->cookie, n);
	}
	for (int i = 0; i < got.nstack; i++) {
		struct bd_stack *s = &got.stack[i];
		int asked = 0;

		for (int j = 0; j < got.nreq; j++)
			asked += got.req[j].ret >= 0 && got.req[j].tid == s->tid &&
				 got.req[j].cookie == s->cookie;
		EXPECT_NE(0, asked) TH_LOG("stack %#llx answers no request",
					   (unsigned long long)s->cookie);
		if (s->nr && s->ips[0] == (unsigned long)ut_syscall_ret) {
			EXPECT_TRUE(stack_is_chain(_metadata, s));
			chains++;
		}
	}
	return chains;
}

/* Requests from a kprobe on getppid(): one per entry, each the chain. */
TEST_F(bpf_defer, kprobe)
{
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	start(_metadata, &self->c);
	for (int i = 0; i < 20; i++)
		chain_run(UT_SYS_GETPPID, 0, 0, 0);
	EXPECT_EQ(20, check_answers(_metadata, &self->c));
	ASSERT_EQ(20, got.nreq);
	for (int i = 0; i < got.nreq; i++) {
		EXPECT_EQ(UNWIND_QUEUED_RET, got.req[i].ret);
		EXPECT_EQ(0, got.req[i].in_nmi);
	}
	EXPECT_EQ(20, got.nstack);
	EXPECT_EQ(20, self->c.skel->bss->walks);
}

/* What the "runtime" below reports: opaque values, not code addresses. */
static const __u64 reported[3] = { 0x11, 0x22, 0x33 };

static void report_frames(int sig, siginfo_t *si, void *uc)
{
	if (si->si_code == SI_UNWIND)
		prctl(PR_USER_STACK_REPORT, (unsigned long)si->si_value.sival_ptr,
		      reported, 3, 1);
}

/*
 * A process that reports its own frames: BPF gets them on their own
 * tracepoint, with the cookie of the native stack it got, and the flags.
 */
TEST_F(bpf_defer, reported_frames)
{
	struct sigaction sa = { .sa_sigaction = report_frames,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	int sig = SIGRTMIN + 1;

	if (access("/sys/kernel/tracing/events/unwind_report", F_OK))
		SKIP(return, "no self-unwinding by signal in this kernel");
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	bpf_program__set_autoload(self->c.skel->progs.on_report, true);
	start(_metadata, &self->c);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(sig, &sa, NULL));
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, sig, 0, 0, 0));
	for (int i = 0; i < 5; i++)
		chain_run(UT_SYS_GETPPID, 0, 0, 0);
	ASSERT_EQ(0, prctl(PR_USER_STACK_SIGNAL, 0, 0, 0, 0));
	EXPECT_EQ(5, check_answers(_metadata, &self->c));
	ASSERT_EQ(5, got.nreport);
	for (int i = 0; i < got.nreport; i++) {
		struct bd_stack *r = &got.report[i];
		int n;

		stack_of(r->tid, r->cookie, &n);
		EXPECT_EQ(1, n);
		EXPECT_EQ(1, r->guessed);
		ASSERT_EQ(3, r->nr);
		for (int k = 0; k < 3; k++)
			EXPECT_EQ(reported[k], r->ips[k]);
	}
}

/*
 * Four program types ask in the same getppid() entry: the first request
 * queues, the others find it queued; one cookie, one stack, one walk.
 */
TEST_F(bpf_defer, every_tracing_type_one_entry)
{
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	bpf_program__set_autoload(self->c.skel->progs.on_tracepoint, true);
	bpf_program__set_autoload(self->c.skel->progs.on_tp_btf, true);
	bpf_program__set_autoload(self->c.skel->progs.on_fentry, true);
	start(_metadata, &self->c);
	for (int i = 0; i < 5; i++)
		chain_run(UT_SYS_GETPPID, 0, 0, 0);
	EXPECT_EQ(5, check_answers(_metadata, &self->c));
	ASSERT_EQ(20, got.nreq);
	for (int e = 0; e < 5; e++) {
		unsigned int sources = 0;
		int queued = 0;

		for (int i = 4 * e; i < 4 * e + 4; i++) {
			EXPECT_EQ(got.req[4 * e].cookie, got.req[i].cookie);
			queued += got.req[i].ret == UNWIND_QUEUED_RET;
			EXPECT_TRUE(got.req[i].ret == UNWIND_QUEUED_RET ||
				    got.req[i].ret == UNWIND_ALREADY_QUEUED_RET);
			sources |= 1U << got.req[i].source;
		}
		EXPECT_EQ(1, queued);
		EXPECT_EQ((1U << BD_KPROBE) | (1U << BD_TRACEPOINT) |
			  (1U << BD_TP_BTF) | (1U << BD_FENTRY), sources);
	}
	EXPECT_EQ(5, got.nstack);
	EXPECT_EQ(5, self->c.skel->bss->walks);
}

/*
 * A program that asks from the delivery of the entry's stack gets "already
 * done" and the entry's cookie: no second walk, no second delivery.
 */
TEST_F(bpf_defer, request_from_the_delivery)
{
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	bpf_program__set_autoload(self->c.skel->progs.on_stack_asks, true);
	start(_metadata, &self->c);
	for (int i = 0; i < 3; i++)
		chain_run(UT_SYS_GETPPID, 0, 0, 0);
	EXPECT_EQ(3, check_answers(_metadata, &self->c));
	ASSERT_EQ(6, got.nreq);
	for (int i = 0; i < 6; i += 2) {
		EXPECT_EQ(BD_KPROBE, got.req[i].source);
		EXPECT_EQ(UNWIND_QUEUED_RET, got.req[i].ret);
		EXPECT_EQ(BD_DELIVERY, got.req[i + 1].source);
		EXPECT_EQ(UNWIND_ALREADY_DONE_RET, got.req[i + 1].ret);
		EXPECT_EQ(got.req[i].cookie, got.req[i + 1].cookie);
	}
	EXPECT_EQ(3, got.nstack);
	EXPECT_EQ(3, self->c.skel->bss->walks);
}

/*
 * A perf_event program on the hrtimer-driven cpu-clock of the test
 * thread, while it reads /dev/zero at the end of the chain: every sample
 * is answered once, the kernel-mode ones in read() with the chain.
 */
TEST_F(bpf_defer, perf_event)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 100000,
		.disabled = 1,
	};
	int fd, user = 0;

	bpf_program__set_autoload(self->c.skel->progs.on_perf_event, true);
	start(_metadata, &self->c);
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	ASSERT_GE(fd, 0);
	add_link(_metadata, &self->c,
		 bpf_program__attach_perf_event(self->c.skel->progs.on_perf_event, fd));
	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	/*
	 * Samples per read vary tenfold with the host's load under TCG:
	 * read until 100 stacks came, so the count checked below does not
	 * depend on the machine's speed, in rounds short enough that a slow
	 * (debug) kernel does not fill the requests kept here first.
	 */
	for (int round = 0; round < 500 && got.nstack < 100 &&
	     got.nreq < BD_MAX_RECORDS / 2; round++) {
		chain_read_zero(10);
		drain(&self->c);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	EXPECT_LT(30, check_answers(_metadata, &self->c));
	for (int i = 0; i < got.nreq; i++) {
		EXPECT_EQ(BD_PERF_EVENT, got.req[i].source);
		EXPECT_LE(0, got.req[i].ret);
		user += got.req[i].user_mode;
	}
	TH_LOG("%d samples (%d in user mode), %d stacks, %llu walks",
	       got.nreq, user, got.nstack,
	       (unsigned long long)self->c.skel->bss->walks);
	EXPECT_EQ(got.nstack, self->c.skel->bss->walks);
}

/*
 * A kprobe on the test client's self-NMI handler runs in NMI: its request
 * is accepted, shares its cookie with the client's own request from the
 * same NMI, and is answered with the chain of the write() that raised it.
 */
TEST_F(bpf_defer, nmi)
{
	static struct ut_log log_;
	struct ut_event *req;
	long ret;

	if (!ut_available())
		SKIP(return, "test client not loaded");
	bpf_program__set_autoload(self->c.skel->progs.on_nmi_kprobe, true);
	start(_metadata, &self->c);
	add_link(_metadata, &self->c,
		 bpf_program__attach_kprobe(self->c.skel->progs.on_nmi_kprobe,
					    false, "ut_nmi_handler"));
	ut_drain();
	ret = chain_request(UT_DIR "/request", "nmi 1 1");
	if (ret == -EOPNOTSUPP)
		SKIP(return, "no self-NMI on this machine");
	ASSERT_LT(0, ret);
	ASSERT_EQ(1, check_answers(_metadata, &self->c));
	ASSERT_LE(1, got.nreq);
	EXPECT_EQ(1, got.req[0].in_nmi);
	EXPECT_EQ(UNWIND_QUEUED_RET, got.req[0].ret);
	ASSERT_EQ(0, ut_read_events(&log_));
	req = ut_find(&log_, getpid(), UT_REQ, 'A');
	ASSERT_NE(NULL, req);
	EXPECT_STREQ("nmi", req->ctx);
	EXPECT_EQ(req->cookie, got.req[0].cookie);
	EXPECT_EQ(1, self->c.skel->bss->walks);
}

/* A syscall program run by bpf(BPF_PROG_TEST_RUN) made from the chain. */
TEST_F(bpf_defer, syscall_program)
{
	union bpf_attr attr;

	bpf_program__set_autoload(self->c.skel->progs.on_syscall, true);
	start(_metadata, &self->c);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = bpf_program__fd(self->c.skel->progs.on_syscall);
	/* chain_run() adds one per level to what the system call returned. */
	ASSERT_EQ(CHAIN_LEN, chain_run(SYS_bpf, BPF_PROG_TEST_RUN, (long)&attr,
				       sizeof(attr)));
	EXPECT_EQ(1, check_answers(_metadata, &self->c));
	ASSERT_EQ(1, got.nreq);
	EXPECT_EQ(BD_SYSCALL, got.req[0].source);
}

/* The offset in its file of a code address of this program. */
static long file_offset_of(unsigned long addr, char *path, size_t len)
{
	unsigned long start, end, off;
	char line[512];
	long ret = -1;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) != 3 ||
		    addr < start || addr >= end || !p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		snprintf(path, len, "%s", p);
		ret = addr - start + off;
		break;
	}
	if (f)
		fclose(f);
	return ret;
}

/*
 * A uprobe program: the request is made in the breakpoint's entry and
 * answered when the task goes back to the probed function, whose frame
 * pointer register holds this function's frame.
 */
TEST_F(bpf_defer, uprobe)
{
	unsigned long target = (unsigned long)ut_fp_probe_at;
	struct bpf_link *link;
	struct bd_stack *s;
	char path[256];
	long off;
	int n;

	bpf_program__set_autoload(self->c.skel->progs.on_uprobe, true);
	start(_metadata, &self->c);
	off = file_offset_of(target, path, sizeof(path));
	ASSERT_LT(0, off);
	link = bpf_program__attach_uprobe(self->c.skel->progs.on_uprobe, false,
					  0, path, off);
	add_link(_metadata, &self->c, link);
	for (int i = 0; i < 3; i++)
		ut_fp_probe((unsigned long)__builtin_frame_address(0));
	check_answers(_metadata, &self->c);
	ASSERT_EQ(3, got.nreq);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(UNWIND_QUEUED_RET, got.req[i].ret);
		s = stack_of(got.req[i].tid, got.req[i].cookie, &n);
		ASSERT_NE(NULL, s);
		EXPECT_LE(2, s->nr);
		EXPECT_LE(target, s->ips[0]);
		EXPECT_GT(target + 2, s->ips[0]);
	}
}

/* Start the sleepable uprobe program, attached at ut_fp_probe_at. */
static void start_sleepable_probe(struct __test_metadata *_metadata,
				  struct bd_ctx *c)
{
	char path[256];
	long off;

	bpf_program__set_autoload(c->skel->progs.on_uprobe_sleepable, true);
	start(_metadata, c);
	off = file_offset_of((unsigned long)ut_fp_probe_at, path, sizeof(path));
	ASSERT_LT(0, off);
	add_link(_metadata, c,
		 bpf_program__attach_uprobe(c->skel->progs.on_uprobe_sleepable,
					    false, 0, path, off));
}

/*
 * bpf_get_stack(BPF_F_USER_STACK) in a sleepable uprobe program walks
 * with page faults allowed, and shares the walk with a deferred request of
 * the same entry. (bpf_get_stackid() needs a stack map, which sleepable
 * programs may not use.) The frame records lie in a file mapping whose page the
 * task has never touched: a walk that may not fault stops at the first
 * record, the faultable one reads all four.
 */
TEST_F(bpf_defer, sleepable_get_stack_faults_and_shares)
{
	static const char file[] = "/tmp/bpf_defer_frames";
	struct { unsigned long next, ra; } f[4];
	struct bd_stack *walked, *s;
	void *map;
	int fd, n;

	start_sleepable_probe(_metadata, &self->c);

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 4096));
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	/* Written through the file, so the mapping's page is not mapped in. */
	for (int i = 0; i < 4; i++) {
		f[i].next = i < 3 ? (unsigned long)map + (i + 1) * sizeof(f[0]) : 0;
		f[i].ra = (unsigned long)chain_00 + 4 * i + 1;
	}
	ASSERT_EQ(sizeof(f), pwrite(fd, f, sizeof(f), 0));

	ut_fp_probe((unsigned long)map);
	check_answers(_metadata, &self->c);
	ASSERT_EQ(1, got.nreq);
	EXPECT_EQ(UNWIND_QUEUED_RET, got.req[0].ret);
	ASSERT_EQ(1, got.nwalked);
	walked = &got.walked[0];
	s = stack_of(got.req[0].tid, got.req[0].cookie, &n);
	ASSERT_NE(NULL, s);
	TH_LOG("bpf_get_stack: %u entries, deferred: %u, walks %llu",
	       walked->nr, s->nr, (unsigned long long)self->c.skel->bss->walks);
	EXPECT_EQ(5, walked->nr);
	EXPECT_EQ(5, s->nr);
	for (int i = 1; i < 5 && i < (int)walked->nr; i++)
		EXPECT_EQ(f[i - 1].ra, walked->ips[i]);
	for (int i = 0; i < 5 && i < (int)s->nr; i++)
		EXPECT_EQ(s->ips[i], walked->ips[i]);
	EXPECT_EQ(1, self->c.skel->bss->walks);
	munmap(map, 4096);
	close(fd);
	unlink(file);
}

/* The child of sleepable_task_stack_under_inode_lock, see there. */
#define CHMOD_SELF_ENV	"BPF_DEFER_CHMOD_SELF"

__attribute__((constructor)) static void chmod_self(void)
{
	const char *path = getenv(CHMOD_SELF_ENV);

	if (path)
		_exit(chmod(path, 0700) ? 1 : 0);
}

/* A directory of a writable 9p mount (the test guest's), or -1. */
static int writable_9p_dir(char *dir, size_t len)
{
	char mnt[256], type[32], opts[512];
	FILE *f = fopen("/proc/mounts", "r");
	int ret = -1;

	while (f && fscanf(f, "%*s %255s %31s %511s %*d %*d", mnt, type,
			   opts) == 3) {
		if (!strcmp(type, "9p") && !strncmp(opts, "rw", 2) &&
		    (opts[2] == ',' || !opts[2]) && !access(mnt, W_OK)) {
			snprintf(dir, len, "%s", mnt);
			ret = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out, ret = 0;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			ret = -1;
	if (n < 0)
		ret = -1;
	close(in);
	close(out);
	return ret;
}

/* Where @pid sleeps in the kernel (its wchan), "" if it does not. */
static void sleeps_in(pid_t pid, char *wchan, size_t len)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, wchan, len - 1);
		close(fd);
	}
	wchan[n > 0 && strcmp(wchan, "0") ? n : 0] = '\0';
}

/*
 * A sleepable LSM program on inode_setattr, which runs with the inode's
 * i_rwsem held for writing, calls bpf_get_task_stack() on the task that
 * changes the mode of its own executable, freshly exec'd (no walk has
 * looked for its tables yet). On 9p, as on every netfs file system and
 * XFS, reading a file takes its i_rwsem: a walk that read the
 * executable's ELF headers to find its SFrame table would wait for the
 * lock its own task holds, for ever. The walk of sleepable
 * bpf_get_task_stack() reads no file: the chmod returns, with a stack.
 */
TEST_F(bpf_defer, sleepable_task_stack_under_inode_lock)
{
	char dir[256], exe[512], where[128] = "", go = 1;
	int status = 0, pipefd[2], stuck = 0;
	pid_t child;

	if (writable_9p_dir(dir, sizeof(dir)))
		SKIP(return, "no writable 9p mount (the test guest's)");
	bpf_program__set_autoload(self->c.skel->progs.on_setattr_sleepable,
				  true);
	if (bpf_defer__load(self->c.skel))
		SKIP(return, "no sleepable BPF LSM programs (CONFIG_BPF_LSM)");
	add_link(_metadata, &self->c,
		 bpf_program__attach(self->c.skel->progs.on_setattr_sleepable));
	snprintf(exe, sizeof(exe), "%s/bpf_defer_chmod.%d", dir, getpid());
	ASSERT_EQ(0, copy_file("/proc/self/exe", exe));
	ASSERT_EQ(0, pipe(pipefd));

	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		char *const argv[] = { exe, NULL };
		char env[600];
		char *const envp[] = { env, NULL };

		snprintf(env, sizeof(env), "%s=%s", CHMOD_SELF_ENV, exe);
		close(pipefd[1]);
		if (read(pipefd[0], &go, 1) != 1)
			_exit(2);
		execve(exe, argv, envp);
		_exit(3);
	}
	close(pipefd[0]);
	self->c.skel->bss->lsm_tgid = child;
	ASSERT_EQ(1, write(pipefd[1], &go, 1));
	close(pipefd[1]);

	/*
	 * Wait for the child, or see it asleep in the same kernel function
	 * for two seconds on end: the walk then waits for the lock its own
	 * chmod() holds (in down_read_interruptible(), from netfs).
	 */
	for (int i = 0; i < 400 && stuck < 40; i++) {
		char now[128];

		if (waitpid(child, &status, WNOHANG) == child)
			break;
		sleeps_in(child, now, sizeof(now));
		stuck = now[0] && !strcmp(now, where) ? stuck + 1 : 0;
		snprintf(where, sizeof(where), "%s", now);
		usleep(50000);
	}
	if (stuck >= 40 || waitpid(child, &status, WNOHANG) == 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		unlink(exe);
		ASSERT_LT(stuck, 40) TH_LOG("the chmod sleeps in %s for good", where);
		ASSERT_TRUE(0) TH_LOG("the chmod did not finish in 20 s");
	}
	unlink(exe);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	if (!self->c.skel->bss->lsm_calls)
		SKIP(return, "the BPF LSM is not active (CONFIG_LSM, lsm=)");
	TH_LOG("%llu calls, bpf_get_task_stack(): %lld",
	       (unsigned long long)self->c.skel->bss->lsm_calls,
	       (long long)self->c.skel->bss->lsm_ret);
	EXPECT_EQ(1, self->c.skel->bss->lsm_calls);
	EXPECT_LT(0, self->c.skel->bss->lsm_ret);
	EXPECT_NE(0, self->c.skel->bss->lsm_ips[0]);
}

/*
 * Guessed frames (PR_SET_USER_STACK_GUESS): at a uprobe whose frame pointer
 * is 0, the walk stops at once and the stack above is scanned. The
 * tracepoint's stack counts the guesses; bpf_get_stack() on the same walk,
 * whose output cannot mark them, gets the walked entries only.
 */
TEST_F(bpf_defer, guessed_frames)
{
	struct bd_stack *walked, *s;
	int n;

	start_sleepable_probe(_metadata, &self->c);

	ASSERT_EQ(0, prctl(PR_SET_USER_STACK_GUESS, 1, 0, 0, 0));
	ut_fp_probe(0);
	ASSERT_EQ(0, prctl(PR_SET_USER_STACK_GUESS, 0, 0, 0, 0));
	check_answers(_metadata, &self->c);
	ASSERT_EQ(1, got.nreq);
	ASSERT_EQ(1, got.nwalked);
	walked = &got.walked[0];
	s = stack_of(got.req[0].tid, got.req[0].cookie, &n);
	ASSERT_NE(NULL, s);
	TH_LOG("tracepoint: %u entries, %u guessed; bpf_get_stack: %u",
	       s->nr, s->guessed, walked->nr);
	EXPECT_GT(s->guessed, 0);
	EXPECT_EQ(s->nr - s->guessed, walked->nr);
	for (int i = 0; i < (int)walked->nr && i < BD_MAX_FRAMES; i++)
		EXPECT_EQ(s->ips[i], walked->ips[i]);
}

/*
 * Hostile frame chains under a write() to the test client, which asks in
 * the same entry as a kprobe program: BPF's stack ends where the client's
 * does, before anything that is not a user return address.
 */
static void hostile(struct __test_metadata *_metadata,
		    struct bd_ctx *c, unsigned long fp,
		    int want_nr)
{
	static const char cmd[] = "task 1 1";
	static struct ut_log log_;
	struct ut_event *cb;
	struct bd_stack *s;
	int fd, n;

	fd = open(UT_DIR "/request", O_WRONLY);
	/* Forget the writes of the test's own log lines. */
	drain(c);
	memset(&got, 0, sizeof(got));
	ASSERT_LE(0, fd);
	ut_drain();
	ut_syscall_fp(UT_SYS_WRITE, fd, (long)cmd, strlen(cmd), fp);
	close(fd);
	check_answers(_metadata, c);
	ASSERT_EQ(1, got.nreq);
	s = stack_of(got.req[0].tid, got.req[0].cookie, &n);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(want_nr, s->nr);
	EXPECT_EQ((unsigned long)ut_syscall_fp_ret, s->ips[0]);
	for (int i = 0; i < (int)s->nr && i < BD_MAX_FRAMES; i++)
		EXPECT_GT(KERNEL_START, s->ips[i]);
	ASSERT_EQ(0, ut_read_events(&log_));
	cb = ut_find(&log_, getpid(), UT_CB, 'A');
	ASSERT_NE(NULL, cb);
	EXPECT_EQ(got.req[0].cookie, cb->cookie);
	EXPECT_EQ(cb->nr, (int)s->nr);
	for (int i = 0; i < cb->nr && i < (int)s->nr; i++)
		EXPECT_EQ(cb->ips[i], s->ips[i]);
}

TEST_F(bpf_defer, hostile_stacks)
{
	static struct { unsigned long next, ra; } f[4];
	char *page;

	if (!ut_available())
		SKIP(return, "test client not loaded");
	bpf_program__set_autoload(self->c.skel->progs.on_tp_btf, true);
	self->c.skel->bss->target_syscall = SYS_write;
	start(_metadata, &self->c);

	for (int i = 0; i < 4; i++) {
		f[i].next = i < 3 ? (unsigned long)&f[i + 1] : 0;
		f[i].ra = (unsigned long)chain_00 + 4 * i + 1;
	}
	TH_LOG("four good frames");
	hostile(_metadata, &self->c, (unsigned long)f, 5);
	TH_LOG("a kernel return address in the third frame");
	f[2].ra = 0xffffffff81000000UL;
	hostile(_metadata, &self->c, (unsigned long)f, 3);
	TH_LOG("a loop: the second frame points back at the first");
	f[2].ra = (unsigned long)chain_00 + 9;
	f[1].next = (unsigned long)&f[0];
	hostile(_metadata, &self->c, (unsigned long)f, 3);
	TH_LOG("a frame pointer into the kernel, one misaligned, one unmapped");
	hostile(_metadata, &self->c, 0xffffffff81000000UL, 1);
	hostile(_metadata, &self->c, (unsigned long)f + 3, 1);
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	hostile(_metadata, &self->c, (unsigned long)page, 1);
	munmap(page, 4096);
}

/*
 * BPF, perf and ftrace ask in the same getppid() entry: one walk, and the
 * same cookie in the BPF request, the perf sample and the ftrace entry.
 */
#define BD_INSTANCE	"/sys/kernel/tracing/instances/bpf_defer_test"

static int tracefs_write(const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), BD_INSTANCE "/%s", file);
	return ut_write(path, val);
}

static __u64 ftrace_cookie(pid_t pid)
{
	char line[512], tag[32];
	unsigned long long cookie = 0;
	FILE *f = fopen(BD_INSTANCE "/trace", "r");

	snprintf(tag, sizeof(tag), "-%d ", pid);
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strstr(line, "<user stack deferred> cookie=");

		if (c && strstr(line, tag))
			cookie = strtoull(c + strlen("<user stack deferred> cookie="),
					  NULL, 16);
	}
	if (f)
		fclose(f);
	return cookie;
}

static __u64 perf_cookie(struct perf_event_mmap_page *meta)
{
	char *data = (char *)meta + meta->data_offset;
	__u64 head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	__u64 off = meta->data_tail, cookie = 0;

	while (off < head) {
		struct perf_event_header *h = (void *)(data + off % meta->data_size);
		__u64 *p = (__u64 *)(h + 1);

		/* One small record: it does not wrap in a fresh 64 KiB ring. */
		if (h->type == PERF_RECORD_SAMPLE) {
			__u64 nr = p[1];

			for (__u64 i = 0; i + 1 < nr; i++)
				if (p[2 + i] == PERF_CONTEXT_USER_DEFERRED)
					cookie = p[3 + i];
		}
		off += h->size;
	}
	return cookie;
}

TEST_F(bpf_defer, shared_with_perf_and_ftrace)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
		.exclude_callchain_kernel = 1,
		.defer_callchain = 1,
		.defer_output = 1,
	};
	struct perf_event_mmap_page *meta;
	char id[32] = "";
	__u64 pc, fc;
	int fd, idfd;

	if (access("/sys/kernel/tracing/options/userstacktrace_delay", F_OK))
		SKIP(return, "no userstacktrace_delay");
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	start(_metadata, &self->c);

	idfd = open("/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id",
		    O_RDONLY);
	ASSERT_LE(0, idfd);
	ASSERT_LT(0, read(idfd, id, sizeof(id) - 1));
	close(idfd);
	attr.config = strtoull(id, NULL, 10);
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	meta = mmap(NULL, 17 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, meta);

	rmdir(BD_INSTANCE);
	ASSERT_EQ(0, mkdir(BD_INSTANCE, 0755));
	ASSERT_EQ(0, tracefs_write("events/syscalls/sys_enter_getppid/enable", "1"));
	ASSERT_EQ(0, tracefs_write("options/userstacktrace_delay", "1"));

	ASSERT_EQ(0, ioctl(fd, PERF_EVENT_IOC_ENABLE, 0));
	chain_run(UT_SYS_GETPPID, 0, 0, 0);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);

	EXPECT_EQ(1, check_answers(_metadata, &self->c));
	ASSERT_EQ(1, got.nreq);
	pc = perf_cookie(meta);
	fc = ftrace_cookie(getpid());
	TH_LOG("cookies: bpf %#llx perf %#llx ftrace %#llx",
	       (unsigned long long)got.req[0].cookie, (unsigned long long)pc,
	       (unsigned long long)fc);
	EXPECT_NE(0, got.req[0].cookie);
	EXPECT_EQ(got.req[0].cookie, pc);
	EXPECT_EQ(got.req[0].cookie, fc);
	EXPECT_EQ(1, self->c.skel->bss->walks);

	tracefs_write("options/userstacktrace_delay", "0");
	tracefs_write("events/syscalls/sys_enter_getppid/enable", "0");
	rmdir(BD_INSTANCE);
	munmap(meta, 17 * 4096);
	close(fd);
}

/*
 * Stacks pending while the requesting program is unloaded and the
 * receiving one detached: a thread asks (kprobe on getppid is too quick,
 * so the request is made at the entry of a read() that blocks), the
 * programs go away, the read() returns. Nothing is called, and a new load
 * is served as usual: the BPF client's slot is intact.
 */
static int block_pipe[2];

/* readv(), which nothing else of the test calls. */
static void *blocked_reader(void *arg)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };

	chain_run(SYS_readv, block_pipe[0], (long)&iov, 1);
	return NULL;
}

TEST_F(bpf_defer, detached_with_stacks_pending)
{
	pthread_t thread;

	bpf_program__set_autoload(self->c.skel->progs.on_tp_btf, true);
	self->c.skel->bss->target_syscall = SYS_readv;
	start(_metadata, &self->c);
	ASSERT_EQ(0, pipe(block_pipe));
	ASSERT_EQ(0, pthread_create(&thread, NULL, blocked_reader, NULL));
	/* Wait until the request is made, then drop every program. */
	for (int i = 0; i < 500 && !got.nreq; i++) {
		usleep(10000);
		drain(&self->c);
	}
	ASSERT_EQ(1, got.nreq);
	EXPECT_EQ(UNWIND_QUEUED_RET, got.req[0].ret);
	ring_buffer__free(self->c.rb);
	self->c.rb = NULL;
	for (int i = 0; i < self->c.nlinks; i++)
		bpf_link__destroy(self->c.links[i]);
	self->c.nlinks = 0;
	bpf_defer__destroy(self->c.skel);
	self->c.skel = NULL;
	/* Let the RCU grace periods of the detach and the free pass. */
	usleep(100000);
	ASSERT_EQ(1, write(block_pipe[1], "x", 1));
	pthread_join(thread, NULL);
	close(block_pipe[0]);
	close(block_pipe[1]);

	/* A new load gets the next entries, as always. */
	memset(&got, 0, sizeof(got));
	self->c.skel = bpf_defer__open();
	ASSERT_NE(NULL, self->c.skel);
	self->c.skel->bss->target_tgid = getpid();
	bpf_program__set_autoload(self->c.skel->progs.on_stack, true);
	bpf_program__set_autoload(self->c.skel->progs.on_walk, true);
	bpf_program__set_autoload(self->c.skel->progs.on_kprobe, true);
	start(_metadata, &self->c);
	chain_run(UT_SYS_GETPPID, 0, 0, 0);
	EXPECT_EQ(1, check_answers(_metadata, &self->c));
	EXPECT_EQ(1, got.nreq);
	EXPECT_EQ(1, got.nstack);
}

/* Load one program of bpf_defer_bad alone; return the errno. */
static int load_bad(struct bpf_program *(*pick)(struct bpf_defer_bad *))
{
	struct bpf_defer_bad *bad = bpf_defer_bad__open();
	int err;

	if (!bad)
		return -errno;
	bpf_program__set_autoload(pick(bad), true);
	verifier_log[0] = '\0';
	bpf_program__set_log_buf(pick(bad), verifier_log, sizeof(verifier_log));
	err = bpf_defer_bad__load(bad);
	bpf_defer_bad__destroy(bad);
	return err;
}

#define PICK(name) \
	static struct bpf_program *pick_##name(struct bpf_defer_bad *b) \
	{ return b->progs.name; }
PICK(socket_filter)
PICK(xdp)
PICK(raw_tracepoint)
PICK(null_cookie)
PICK(small_value)
PICK(read_only)
PICK(scalar_cookie)

static void rejected(struct __test_metadata *_metadata, const char *name,
		     struct bpf_program *(*pick)(struct bpf_defer_bad *),
		     int want_err, const char *want_msg)
{
	int err = load_bad(pick);

	EXPECT_EQ(want_err, err) TH_LOG("%s", name);
	EXPECT_NE(NULL, strstr(verifier_log, want_msg))
		TH_LOG("%s: the verifier said:\n%s", name, verifier_log);
}

#define REJECTED(name, err, msg) rejected(_metadata, #name, pick_##name, err, msg)

TEST(verifier_rejects)
{
	if (!kernel_has_kfunc())
		SKIP(return, "no kernel BTF or no bpf_unwind_deferred_request()");
	libbpf_set_print(libbpf_quiet);
	TH_LOG("program types that may not ask");
	REJECTED(socket_filter, -EACCES,
		 "calling kernel function bpf_unwind_deferred_request is not allowed");
	REJECTED(xdp, -EACCES,
		 "calling kernel function bpf_unwind_deferred_request is not allowed");
	REJECTED(raw_tracepoint, -EACCES,
		 "calling kernel function bpf_unwind_deferred_request is not allowed");
	TH_LOG("cookie arguments that are not 8 writable bytes");
	REJECTED(null_cookie, -EACCES, "Possibly NULL pointer passed to trusted arg0");
	REJECTED(small_value, -EACCES, "R1");
	REJECTED(read_only, -EACCES, "R1");
	REJECTED(scalar_cookie, -EACCES, "R1");
}

/* A user without CAP_BPF/CAP_PERFMON cannot load the requester at all. */
TEST(unprivileged_load_refused)
{
	pid_t pid;
	int status;

	if (!kernel_has_kfunc())
		SKIP(return, "no kernel BTF or no bpf_unwind_deferred_request()");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct bpf_defer *skel;
		int err;

		libbpf_set_print(libbpf_quiet);
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		skel = bpf_defer__open();
		if (!skel)
			_exit(11);
		bpf_program__set_autoload(skel->progs.on_kprobe, true);
		err = bpf_defer__load(skel);
		_exit(err == -EPERM ? 0 : 12);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
