// SPDX-License-Identifier: GPL-2.0
/*
 * Requests from NMIs that land wherever the task is, user mode included:
 * QEMU's monitor injects them (harness/vm-run --nmi: the test asks for
 * them through the file named by $VMRUN_NMI). QEMU raises them on every
 * vCPU's LINT1 pin, but Linux masks LINT1 on all CPUs but the boot CPU,
 * so they land on CPU 0 alone: the test runs there. The test client requests
 * from each one that interrupts this task (/sys/kernel/debug/unwind_test/
 * nmi). The task spins in user mode at the end of the 60-frame chain, and
 * before each spin makes a deferred request of its own in a system call,
 * so that every NMI follows an entry that used deferral.
 *
 * Every request from an NMI that interrupted user mode must be accepted
 * and answered once per client, with the stack of the interrupted user
 * state: its IP first, then, for an IP in the spin loop, the chain.
 * Requests from NMIs that interrupted the task in the kernel must be
 * answered once each too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"

#define NMI_INTERVAL_MS	"15"
#define MIN_USER_NMIS	20
#define MAX_SECONDS	20
#define SPIN_TURNS	20000000L
/* The only CPU that takes external (LINT1) NMIs: see setup_local_APIC(). */
#define NMI_CPU		0

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The callback of @client for @cookie; fails on a second one. */
static struct ut_event *find_cb(struct __test_metadata *_metadata,
				struct ut_log *log, char client, uint64_t cookie)
{
	struct ut_event *found = NULL;

	for (int i = 0; i < log->n; i++) {
		struct ut_event *ev = &log->ev[i];

		if (ev->kind != UT_CB || ev->client != client ||
		    ev->cookie != cookie)
			continue;
		if (found) {
			TH_LOG("two callbacks of %c for cookie %#llx", client,
			       (unsigned long long)cookie);
			return NULL;
		}
		found = ev;
	}
	if (!found)
		TH_LOG("no callback of %c for cookie %#llx", client,
		       (unsigned long long)cookie);
	return found;
}

/* The stack of an NMI that interrupted the spin loop at @ip. */
static int spin_stack_matches(struct __test_metadata *_metadata,
			      struct ut_event *cb, unsigned long ip)
{
	int i;

	if (cb->nr < CHAIN_LEN + 3) {
		TH_LOG("stack of %d entries, the chain alone is %d", cb->nr,
		       CHAIN_LEN + 3);
		return 0;
	}
	if (cb->ips[1] != ut_leaf_ra || cb->ips[2] != leaf_caller_ra) {
		TH_LOG("entries 1, 2 are %#lx, %#lx, not %#lx, %#lx",
		       cb->ips[1], cb->ips[2], ut_leaf_ra, leaf_caller_ra);
		return 0;
	}
	for (i = 0; i < CHAIN_LEN; i++) {
		if (cb->ips[3 + i] != chain_ra[CHAIN_LEN - 1 - i]) {
			TH_LOG("entry %d is %#lx, not chain_%02d's return",
			       3 + i, cb->ips[3 + i], CHAIN_LEN - 1 - i);
			return 0;
		}
	}
	return 1;
}

FIXTURE(nmi) {
	struct ut_log log;
};

FIXTURE_SETUP(nmi)
{
	cpu_set_t cpus;

	if (!ut_available() || access(UT_DIR "/nmi", W_OK))
		SKIP(return, "the unwind_test_client module with NMI support is not loaded");
	if (!getenv("VMRUN_NMI"))
		SKIP(return, "no NMIs from outside (run under harness/vm-run --nmi)");
	CPU_ZERO(&cpus);
	CPU_SET(NMI_CPU, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus)) {
		TH_LOG("cannot run on CPU %d, the one external NMIs reach: %s",
		       NMI_CPU, strerror(errno));
	}
	ut_drain();
}

FIXTURE_TEARDOWN(nmi)
{
	ut_write(UT_DIR "/nmi", "0 0");
	ut_stop_nmis();
}

TEST_F(nmi, user_mode_nmis_answered_with_interrupted_stack)
{
	int user = 0, kernel = 0, spin = 0, refused = 0;
	unsigned long loop = (unsigned long)ut_spin_loop;
	unsigned long end = (unsigned long)ut_spin_end;
	char arm[64];
	double start;

	chain_prime();
	snprintf(arm, sizeof(arm), "%d 3", getpid());
	ASSERT_EQ(0, ut_write(UT_DIR "/nmi", arm));
	ASSERT_EQ(0, ut_ask_for_nmis(NMI_INTERVAL_MS));

	start = now();
	while (spin < MIN_USER_NMIS && now() - start < MAX_SECONDS) {
		/* An entry that used deferral, then user mode. */
		ASSERT_EQ((long)strlen("task 1 1") + CHAIN_LEN,
			  chain_request(UT_DIR "/request", "task 1 1"));
		chain_spin(SPIN_TURNS);
		ut_write(UT_DIR "/nmi", "0 0");
		ASSERT_EQ(0, ut_read_events(&self->log));
		ASSERT_FALSE(self->log.overflow);
		ASSERT_EQ(0, ut_write(UT_DIR "/nmi", arm));

		for (int i = 0; i < self->log.n; i++) {
			struct ut_event *req = &self->log.ev[i], *cb;

			if (req->kind != UT_REQ || req->pid != getpid() ||
			    strncmp(req->ctx, "nmi-", 4))
				continue;
			if (req->ret < 0) {
				TH_LOG("%s request refused: %d (ip %#lx)",
				       req->ctx, req->ret, req->ip);
				refused++;
				continue;
			}
			ASSERT_NE(0, req->cookie);
			cb = find_cb(_metadata, &self->log, req->client,
				     req->cookie);
			ASSERT_NE(NULL, cb);
			if (strcmp(req->ctx, "nmi-user")) {
				kernel++;
				continue;
			}
			user++;
			ASSERT_GT(cb->nr, 0);
			ASSERT_EQ(req->ip, cb->ips[0]) {
				TH_LOG("the stack starts at %#lx, the NMI interrupted %#lx",
				       cb->ips[0], req->ip);
			}
			if (req->ip >= loop && req->ip < end) {
				ASSERT_TRUE(spin_stack_matches(_metadata, cb,
							       req->ip));
				spin++;
			}
		}
	}
	ut_write(UT_DIR "/nmi", "0 0");
	ut_stop_nmis();
	TH_LOG("%d requests from user-mode NMIs (%d in the spin loop)",
	       user, spin);
	TH_LOG("%d from kernel-mode NMIs, %d refused", kernel, refused);
	ASSERT_EQ(0, refused);
	ASSERT_GE(spin, MIN_USER_NMIS) {
		TH_LOG("too few NMIs landed in the spin loop in %d s",
		       MAX_SECONDS);
	}
}

TEST_HARNESS_MAIN
