// SPDX-License-Identifier: GPL-2.0
/*
 * Drives the torture test of deferred user stack unwinding (the
 * unwind_torture module, CONFIG_UNWIND_USER_TORTURE): starts a run, keeps
 * worker processes busy until it ends, then reads the module's counters
 * and reports them as TAP.
 *
 *   torture_test [-d SECONDS] [-w WORKERS]
 *
 * Workers write to the module's "work" file from the innermost frame of a
 * recursion of random depth, telling it the stack it will walk for that
 * kernel entry; meanwhile they fork (children that work, exit or get
 * SIGKILLed), exec themselves, take SIGALRM (whose handler works too) and
 * move between CPUs; they also spin in user mode and fault pages in, so
 * that interrupts land in user mode and in page faults, where the module
 * walks them in the interrupt too. The module requests from task,
 * hrtimer and NMI context, cancels and registers clients, and checks
 * every callback. Under harness/vm-run --nmi the host injects NMIs
 * during the run too, which land in user mode as well.
 *
 * Half of the workers run torture_test_sframe, this program built without
 * frame pointers and with an SFrame table, when it sits beside this one:
 * their stacks can only be walked by table, and are checked as exactly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "unwind_helpers.h"

#ifndef UNWIND_SFRAME_BUILD
#define UNWIND_SFRAME_BUILD	0
#endif

#define TT_DIR		"/sys/kernel/debug/unwind_torture"
#define TT_MAX_DEPTH	40
/* Injected NMIs during the run, every this many ms (vm-run --nmi). */
#define NMI_INTERVAL_MS	"4"

/* What the workers did, in a memfd shared across fork and exec. */
struct tt_ops {
	long	works;
	long	forks;
	long	kills;
	long	execs;
	long	signals;
	long	migrations;
	long	sframe_works;	/* works of the SFrame build's workers */
	long	faults;		/* pages faulted in */
	long	spins;		/* spells of user-mode spinning */
};

static struct tt_ops *ops;
static int ops_fd = -1;
static int work_fd = -1;
static unsigned long ra_leaf, ra_rec, ra_top;
static unsigned long prime_ra[3];
static int priming;
/* Set when the run is over, by the main flow or the signal handler. */
static int over;
static unsigned long long deadline_ns;
static unsigned int rnd;
static int ncpus;

static unsigned int rand_next(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 17;
	rnd ^= rnd << 5;
	return rnd;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * rec(DEPTH) recurses down to rec(0), which makes the system call through
 * ut_syscall(): the stack the kernel walks is the syscall IP, the return
 * into rec(0), DEPTH returns into rec(), then the return into tt_chain().
 */
static long rec(int d, long fd, long buf, long len)
{
	long ret;

	if (priming)
		prime_ra[d] = (unsigned long)__builtin_return_address(0);
	if (!d)
		return ut_syscall(UT_SYS_WRITE, fd, buf, len);
	ret = rec(d - 1, fd, buf, len);
	/* Keep the compiler from turning the recursion into a loop. */
	asm volatile("" : "+r" (ret));
	return ret;
}

static long tt_chain(int fd, int depth, unsigned int ctx)
{
	char buf[128];
	long ret;
	int len;

	len = snprintf(buf, sizeof(buf), "%d %lx %lx %lx %lx %x", depth,
		       (unsigned long)ut_syscall_ret, ra_leaf, ra_rec, ra_top,
		       ctx);
	ret = rec(depth, fd, (long)buf, len);
	asm volatile("" : "+r" (ret));
	return ret;
}

/* Learn the return addresses of the chain by running it harmlessly. */
static void prime(void)
{
	priming = 1;
	tt_chain(-1, 2, 0);
	priming = 0;
	ra_top = prime_ra[2];
	ra_rec = prime_ra[1];
	ra_leaf = ut_leaf_ra;
}

/* One work write; 1 while the run goes on. */
static int work_once(void)
{
	long ret;

	if (__atomic_load_n(&over, __ATOMIC_RELAXED) || now_ns() > deadline_ns) {
		__atomic_store_n(&over, 1, __ATOMIC_RELAXED);
		return 0;
	}
	ret = tt_chain(work_fd, rand_next() % (TT_MAX_DEPTH + 1),
		       rand_next() % 16);
	if (ret == -ECANCELED)
		__atomic_store_n(&over, 1, __ATOMIC_RELAXED);
	else if (ret > 0)
		__atomic_fetch_add(UNWIND_SFRAME_BUILD ? &ops->sframe_works :
				   &ops->works, 1, __ATOMIC_RELAXED);
	return !__atomic_load_n(&over, __ATOMIC_RELAXED);
}

/*
 * Fault fresh pages in: page faults are kernel entries that are no system
 * call, whose first sample perf walks in the interrupt.
 */
static void fault_pages(void)
{
	size_t len = 256 * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t off = 0; off < len; off += 4096)
		p[off] = 1;
	munmap(p, len);
	__atomic_fetch_add(&ops->faults, len / 4096, __ATOMIC_RELAXED);
}

/* Stay in user mode a while: interrupts then land there. */
static void spin_user(void)
{
	unsigned int x = rnd;

	for (int i = 0; i < 200000; i++) {
		x = x * 1103515245 + 12345;
		/* Keep the loop: the compiler must not fold it away. */
		asm volatile("" : "+r" (x));
	}
	__atomic_fetch_add(&ops->spins, 1, __ATOMIC_RELAXED);
}

static void on_alarm(int sig)
{
	int saved = errno;

	__atomic_fetch_add(&ops->signals, 1, __ATOMIC_RELAXED);
	/* A new kernel entry, made from the signal frame. */
	work_once();
	errno = saved;
}

static void worker(int level, const char *self);

static void spawn(int level, const char *self, int kill_it)
{
	pid_t child = fork();

	if (child < 0)
		return;
	if (!child) {
		rnd ^= getpid() * 2654435761U;
		worker(level + 1, self);
		_exit(0);
	}
	__atomic_fetch_add(&ops->forks, 1, __ATOMIC_RELAXED);
	if (!kill_it)
		return;
	/* Killed wherever it is, in user space or with requests pending. */
	usleep(200 + rand_next() % 3000);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	__atomic_fetch_add(&ops->kills, 1, __ATOMIC_RELAXED);
}

/* Become a worker of @level running @prog; returns only if exec fails. */
static void exec_worker(const char *prog, int level)
{
	char lvl[16], dl[32], fd[16];

	snprintf(lvl, sizeof(lvl), "%d", level);
	snprintf(dl, sizeof(dl), "%llu", deadline_ns);
	snprintf(fd, sizeof(fd), "%d", ops_fd);
	execl(prog, prog, "--worker", lvl, dl, fd, (char *)NULL);
}

static void re_exec(int level, const char *self)
{
	struct itimerval stopped = { { 0, 0 }, { 0, 0 } }, armed;

	/*
	 * Interval timers survive exec but the handler does not: stop the
	 * timer, or SIGALRM kills the new image before it installs one.
	 */
	setitimer(ITIMER_REAL, &stopped, &armed);
	__atomic_fetch_add(&ops->execs, 1, __ATOMIC_RELAXED);
	exec_worker(self, level);
	/* Exec failed: go on without it. */
	__atomic_fetch_sub(&ops->execs, 1, __ATOMIC_RELAXED);
	setitimer(ITIMER_REAL, &armed, NULL);
}

/*
 * Work until the run is over. Level 0 workers live for the whole run;
 * the children they fork (level 1) do a few rounds and exit.
 */
static void worker(int level, const char *self)
{
	struct itimerval it = { { 0, 3000 }, { 0, 1000 + rand_next() % 3000 } };
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	int rounds = level ? 5 + rand_next() % 20 : -1;

	work_fd = open(TT_DIR "/work", O_WRONLY | O_CLOEXEC);
	if (work_fd < 0)
		_exit(2);
	prime();
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);

	while (!__atomic_load_n(&over, __ATOMIC_RELAXED) && rounds--) {
		unsigned int r = rand_next() % 100;

		if (r < 63) {
			work_once();
		} else if (r < 69) {
			fault_pages();
		} else if (r < 75) {
			spin_user();
		} else if (r < 83) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(rand_next() % ncpus, &set);
			if (!sched_setaffinity(0, sizeof(set), &set))
				__atomic_fetch_add(&ops->migrations, 1,
						   __ATOMIC_RELAXED);
			work_once();
		} else if (r < 90 && !level) {
			spawn(level, self, 0);
		} else if (r < 95 && !level) {
			spawn(level, self, 1);
		} else if (r < 97) {
			re_exec(level, self);
		} else {
			sched_yield();
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	while (wait(NULL) > 0)
		;
}

/* The module's summary, "key=value" lines. */
static char summary[8192];

static long stat_of(const char *key)
{
	char pat[64], *p;

	snprintf(pat, sizeof(pat), "\n%s=", key);
	p = strstr(summary, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static int read_summary(void)
{
	int fd = open(TT_DIR "/control", O_RDONLY);
	ssize_t len = 0, r;

	if (fd < 0)
		return -1;
	summary[len++] = '\n';
	while ((r = read(fd, summary + len, sizeof(summary) - 1 - len)) > 0)
		len += r;
	close(fd);
	summary[len] = '\0';
	return 0;
}

#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

/*
 * Leak suspects that kmemleak (debug kernels) finds after the run, in
 * all and with an unwinding function in their allocation backtrace; -1
 * without kmemleak.
 */
static void kmemleak_scan(long *all, long *ours)
{
	static char buf[1 << 20];
	char *obj, *next;
	ssize_t len = 0, r;
	int fd;

	*all = *ours = -1;
	/* Two scans: an object a scan catches in flight is not reported. */
	if (ut_write(KMEMLEAK, "scan") || ut_write(KMEMLEAK, "scan"))
		return;
	fd = open(KMEMLEAK, O_RDONLY);
	if (fd < 0)
		return;
	while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += r;
	close(fd);
	buf[len] = '\0';
	*all = *ours = 0;
	for (obj = strstr(buf, "unreferenced object"); obj; obj = next) {
		next = strstr(obj + 1, "unreferenced object");
		if (next)
			next[-1] = '\0';
		(*all)++;
		if (strstr(obj, "unwind")) {
			(*ours)++;
			ksft_print_msg("leak: %s\n", obj);
		}
	}
}

static void check(int ok, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	ksft_test_result(ok, "%s\n", name);
}

int main(int argc, char **argv)
{
	int duration = 20, nworkers = 0, i, opt;
	char cmd[64], *line, *save, sframe_self[4200];
	long leaks, our_leaks;
	bool nmis;
	const char *self = "/proc/self/exe";
	char path[4096];
	ssize_t n;

	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus < 1)
		ncpus = 1;
	n = readlink(self, path, sizeof(path) - 1);
	if (n > 0) {
		path[n] = '\0';
		self = path;
	}
	if (argc == 5 && !strcmp(argv[1], "--worker")) {
		deadline_ns = strtoull(argv[3], NULL, 10);
		ops_fd = atoi(argv[4]);
		ops = mmap(NULL, sizeof(*ops), PROT_READ | PROT_WRITE,
			   MAP_SHARED, ops_fd, 0);
		if (ops == MAP_FAILED)
			return 2;
		rnd = getpid() * 2654435761U ^ (unsigned int)now_ns();
		worker(atoi(argv[2]), self);
		return 0;
	}
	if (getenv("UNWIND_TORTURE_DURATION"))
		duration = atoi(getenv("UNWIND_TORTURE_DURATION"));
	while ((opt = getopt(argc, argv, "d:w:")) != -1) {
		if (opt == 'd')
			duration = atoi(optarg);
		else if (opt == 'w')
			nworkers = atoi(optarg);
	}
	if (duration < 1)
		duration = 1;
	if (nworkers < 1)
		nworkers = 2 * ncpus + 2;

	ksft_print_header();
	if (access(TT_DIR "/control", W_OK))
		ksft_exit_skip("torture module not loaded (%s)\n", TT_DIR);
	ksft_set_plan(15);
	snprintf(sframe_self, sizeof(sframe_self), "%s_sframe", self);
	if (access(sframe_self, X_OK))
		sframe_self[0] = '\0';

	ops_fd = memfd_create("unwind_torture_ops", 0);
	if (ops_fd < 0 || ftruncate(ops_fd, sizeof(*ops)))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	ops = mmap(NULL, sizeof(*ops), PROT_READ | PROT_WRITE, MAP_SHARED,
		   ops_fd, 0);
	if (ops == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));

	/* Suspects from before the run are not this run's. */
	if (!ut_write(KMEMLEAK, "scan"))
		ut_write(KMEMLEAK, "clear");

	snprintf(cmd, sizeof(cmd), "start %d", duration);
	if (ut_write(TT_DIR "/control", cmd))
		ksft_exit_fail_msg("cannot start a run: %s\n", strerror(errno));
	deadline_ns = now_ns() + duration * 1000000000ULL;
	nmis = !ut_ask_for_nmis(NMI_INTERVAL_MS);
	ksft_print_msg("run: %d s, %d workers, %d CPUs\n", duration, nworkers,
		       ncpus);

	for (i = 0; i < nworkers; i++) {
		pid_t pid = fork();

		if (pid < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pid) {
			rnd = getpid() * 2654435761U ^ (unsigned int)now_ns();
			if (i % 2 && sframe_self[0])
				exec_worker(sframe_self, 0);
			worker(0, self);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	ut_stop_nmis();

	if (ut_write(TT_DIR "/control", "report") || read_summary())
		ksft_exit_fail_msg("cannot read the summary\n");
	for (line = strtok_r(summary + 1, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		ksft_print_msg("%s\n", line);
	/* strtok_r() cut the lines: read the summary again to look it up. */
	read_summary();
	ksft_print_msg("workers: works=%ld forks=%ld kills=%ld execs=%ld signals=%ld\n",
		       ops->works, ops->forks, ops->kills, ops->execs,
		       ops->signals);
	ksft_print_msg("workers: migrations=%ld sframe_works=%ld faults=%ld spins=%ld\n",
		       ops->migrations, ops->sframe_works, ops->faults,
		       ops->spins);

	check(stat_of("requests_task") > 0 && stat_of("requests_irq") > 0 &&
	      stat_of("requests_nmi") > 0,
	      "requests from task, irq and nmi context (%ld, %ld, %ld)",
	      stat_of("requests_task"), stat_of("requests_irq"),
	      stat_of("requests_nmi"));
	check(ops->forks > 0 && ops->kills > 0 && ops->execs > 0 &&
	      ops->signals > 0 && ops->migrations > 0,
	      "workers forked, were killed, exec'd, took signals and migrated");
	check(stat_of("queued") > 0 &&
	      stat_of("queued") == stat_of("callbacks") +
				   stat_of("dropped_by_cancel"),
	      "each accepted request answered once: queued %ld = callbacks %ld + dropped by cancel %ld",
	      stat_of("queued"), stat_of("callbacks"),
	      stat_of("dropped_by_cancel"));
	check(stat_of("lost") == 0, "no request lost (%ld)", stat_of("lost"));
	check(stat_of("duplicates") == 0 && stat_of("spurious") == 0 &&
	      stat_of("untracked_callbacks") == 0,
	      "no duplicate (%ld) or unasked (%ld, %ld) callback",
	      stat_of("duplicates"), stat_of("spurious"),
	      stat_of("untracked_callbacks"));
	if (!sframe_self[0])
		ksft_test_result_skip("%s\n",
				      "workers of the SFrame build: torture_test_sframe not built");
	else
		check(ops->sframe_works > 0 && ops->works > 0,
		      "workers of both builds worked (%ld SFrame, %ld frame pointers); their stacks are checked below",
		      ops->sframe_works, ops->works);
	/*
	 * A worker killed while its walk needs a table its mm has not read
	 * yet gets the stack up to there (killable reads give up): counted
	 * apart, and checked to be the start of the right one.
	 */
	check(stat_of("verified_stacks") > 0 && stat_of("wrong_stacks") == 0,
	      "known stacks delivered right (%ld checked, %ld wrong, %ld of killed workers ending early)",
	      stat_of("verified_stacks"), stat_of("wrong_stacks"),
	      stat_of("killed_short"));
	if (!nmis)
		ksft_test_result_skip("%s\n",
				      "requests from NMIs that hit user mode: no NMIs from outside (harness/vm-run --nmi)");
	else
		check(stat_of("requests_nmi_user") > 0 &&
		      stat_of("user_ip_stacks") > 0 &&
		      stat_of("refused_from_user") == 0,
		      "requests from NMIs that hit user mode accepted (%ld, %ld refused) and stacks start at the interrupted IP (%ld checked; %ld external NMIs)",
		      stat_of("requests_nmi_user"),
		      stat_of("refused_from_user"), stat_of("user_ip_stacks"),
		      stat_of("external_nmis"));
	/*
	 * The walks in interrupts (unwind_user_nofault()): of user mode
	 * (hrtimers and injected NMIs landing there), and of page faults,
	 * whose walk is kept for the entry; each is compared with the stack
	 * later delivered for the request the same interrupt made.
	 */
	check(stat_of("requests_irq_user") > 0 &&
	      stat_of("nofault_user_walks") > 0 &&
	      stat_of("nofault_kernel_walks") > 0 &&
	      stat_of("nofault_checked") > 0 && stat_of("nofault_wrong") == 0,
	      "walks in interrupts: %ld of user, %ld of faults, %ld deferred, %ld compared, %ld wrong",
	      stat_of("nofault_user_walks"), stat_of("nofault_kernel_walks"),
	      stat_of("nofault_deferred"), stat_of("nofault_checked"),
	      stat_of("nofault_wrong"));
	check(stat_of("walks") > 0 && stat_of("double_walks") == 0,
	      "at most one walk per entry (%ld walks, %ld second walks)",
	      stat_of("walks"), stat_of("double_walks"));
	check(stat_of("after_cancel") == 0 && stat_of("cancel_raced") == 0,
	      "no callback after cancel (%ld cancels, %ld with a callback running; %ld after, %ld running)",
	      stat_of("cancels"), stat_of("cancels_in_callback"),
	      stat_of("after_cancel"), stat_of("cancel_raced"));
	check(stat_of("kernel_addresses") == 0,
	      "no kernel address in a delivered stack (%ld)",
	      stat_of("kernel_addresses"));
	check(stat_of("bad_results") == 0 && stat_of("refused_other") == 0,
	      "no unexpected request result (%ld, %ld)",
	      stat_of("bad_results"), stat_of("refused_other"));
	check(stat_of("errors") == 0, "torture run: %ld errors",
	      stat_of("errors"));
	kmemleak_scan(&leaks, &our_leaks);
	if (leaks < 0)
		ksft_test_result_skip("no leak: no kmemleak in this kernel\n");
	else
		check(our_leaks == 0,
		      "no leak of deferred unwinding (kmemleak: %ld suspects, %ld of unwinding)",
		      leaks, our_leaks);
	ksft_finished();
}
