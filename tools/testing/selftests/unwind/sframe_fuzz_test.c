// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer of the kernel's SFrame reader, through its user interfaces.
 *
 *   sframe_fuzz_test [-d SECONDS] [-s SEED]   (or SFRAME_FUZZ_DURATION)
 *
 * One thread registers sections of all three versions with
 * prctl(PR_SFRAME_ADD) over "JIT" text, most of them damaged at random
 * (before the kernel's check, so that some are refused, or after it, so
 * that tables change under the walks), removes them, and unmaps, remaps
 * and re-protects the text and the sections. Other threads of the same
 * process read their own stacks (prctl(PR_USER_STACK_READ)) over crafted
 * frame records whose return addresses land in that text, so that every
 * walk looks rows up in tables that are being damaged, replaced and
 * unmapped.
 *
 * It passes if every read returns a count within the buffer (or an
 * error), writes nothing past it, and the process survives; the kernel's
 * part is judged by its console (KASAN, lockdep, UBSAN in the debug
 * lane). It runs 10 s in the guest lane, minutes in the debug lane and
 * in make torture.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "../kselftest.h"
#include "unwind_helpers.h"

#define SLOTS		4
#define TEXT_PAGES	2
#define SEC_PAGES	2
#define WALKERS		2
#define RECORDS		64
#define ENTRIES		128
#define CANARY		0x5a5a5a5a5a5a5a5aULL

#ifdef __x86_64__
/* JIT text and its section; the addresses never change, the mappings do. */
struct slot {
	unsigned char	*text;
	unsigned char	*sec;
};

static struct slot slots[SLOTS];
static size_t page;
static double deadline;
static atomic_long adds_ok, adds_refused, reads, entries, read_errors;
static atomic_int failures;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift: each thread its own state. */
static uint32_t next_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void put(unsigned char *p, uint64_t v, int bytes)
{
	memcpy(p, &v, bytes);
}

/*
 * A section of @version at @sec for text at @text: up to 8 functions of
 * up to 16 rows, of random widths and rules, mostly plausible. Returns
 * its size.
 */
static size_t build(uint32_t *r, int version, unsigned char *sec,
		    unsigned long text, size_t room)
{
	const size_t fde_size = version == 1 ? 17 : version == 2 ? 20 : 16;
	int nfuncs = 1 + next_rand(r) % 8, i, j;
	size_t fres, pos, text_len = TEXT_PAGES * page;
	uint32_t total_rows = 0, func = 0;

	memset(sec, 0, 28);
	put(sec, 0xdee2, 2);
	sec[2] = version;
	sec[3] = 0x1 | (version > 1 ? 0x4 : 0);
	sec[4] = 3;
	sec[6] = (unsigned char)-8;
	put(sec + 8, nfuncs, 4);
	put(sec + 24, nfuncs * fde_size, 4);
	fres = 28 + nfuncs * fde_size;
	pos = fres;
	for (i = 0; i < nfuncs; i++) {
		unsigned char *fde = sec + 28 + i * fde_size;
		uint32_t size = 16 + next_rand(r) % 256;
		int type = next_rand(r) % 3, asize = 1 << type;
		int rows = next_rand(r) % 17, rep = next_rand(r) % 8 ? 0 : 16;
		unsigned long start = text + func;
		uint32_t fre_off = pos - fres;

		if (pos + 5 + rows * (asize + 1 + 12) > room)
			break;
		if (version == 3) {
			put(fde, start - (unsigned long)fde, 8);
			put(fde + 8, size, 4);
			put(fde + 12, fre_off, 4);
			put(sec + pos, rows, 2);
			sec[pos + 2] = type | (rep ? 0x10 : 0);
			sec[pos + 3] = next_rand(r) % 4 ? 0 : 1;	/* flex */
			sec[pos + 4] = rep;
			pos += 5;
		} else {
			unsigned long base = version == 1 ? (unsigned long)sec :
				(unsigned long)fde;

			put(fde, start - base, 4);
			put(fde + 4, size, 4);
			put(fde + 8, fre_off, 4);
			put(fde + 12, rows, 4);
			fde[16] = type | (rep ? 0x10 : 0);
			if (version == 2)
				fde[17] = rep;
		}
		for (j = 0; j < rows; j++) {
			int nwords = next_rand(r) % 5, wsize = next_rand(r) % 3;

			put(sec + pos, j * (1 + next_rand(r) % 4), asize);
			sec[pos + asize] = (next_rand(r) & 1) | nwords << 1 |
					   wsize << 5;
			pos += asize + 1;
			for (int w = 0; w < nwords; w++) {
				uint32_t v = next_rand(r) % 2 ? 8 * (next_rand(r) % 5) :
					     next_rand(r);

				put(sec + pos, v, 1 << wsize);
				pos += 1 << wsize;
			}
		}
		total_rows += rows;
		func += size + next_rand(r) % 32;
		if (func >= text_len)
			func = 0;
	}
	put(sec + 12, total_rows, 4);
	put(sec + 16, pos - fres, 4);
	return pos;
}

/* Flip a few bytes of a section. */
static void damage(uint32_t *r, unsigned char *sec, size_t len)
{
	int n = 1 + next_rand(r) % 4;

	while (n-- && len)
		sec[next_rand(r) % len] ^= 1 << (next_rand(r) % 8);
}

static void remap(unsigned char *addr, size_t len, int prot)
{
	mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

/* The thread that adds, damages, removes and unmaps. */
static void *mutator(void *arg)
{
	uint32_t r = (uint32_t)(uintptr_t)arg;
	const size_t text_len = TEXT_PAGES * page, sec_len = SEC_PAGES * page;

	while (now() < deadline) {
		struct slot *s = &slots[next_rand(&r) % SLOTS];
		unsigned long text = (unsigned long)s->text;
		int op = next_rand(&r) % 16;
		size_t len;

		if (op < 8) {
			len = build(&r, 1 + next_rand(&r) % 3, s->sec,
				    text, sec_len);
			if (op < 4)
				damage(&r, s->sec, len);
			if (op == 0)
				len = next_rand(&r) % (len + 16);
			prctl(PR_SFRAME_REMOVE, text, 0, 0, 0);
			if (prctl(PR_SFRAME_ADD, s->sec, len, text,
				  text + 1 + next_rand(&r) % text_len))
				adds_refused++;
			else
				adds_ok++;
		} else if (op < 12) {
			/* Under the walks: the kernel checked it already. */
			damage(&r, s->sec, 64 + next_rand(&r) % 512);
		} else if (op == 12) {
			prctl(PR_SFRAME_REMOVE, text, 0, 0, 0);
		} else if (op == 13) {
			remap(s->text, text_len, PROT_READ | PROT_EXEC);
		} else if (op == 14) {
			remap(s->sec, sec_len, PROT_READ | PROT_WRITE);
		} else {
			mprotect(s->text, page, next_rand(&r) % 2 ?
				 PROT_READ : PROT_READ | PROT_EXEC);
		}
	}
	return NULL;
}

/* A thread reading its stack over crafted records into the JIT text. */
static void *walker(void *arg)
{
	static __thread struct { unsigned long next, ra; } rec[RECORDS + 1];
	static __thread uint64_t buf[ENTRIES + 8];
	uint32_t r = (uint32_t)(uintptr_t)arg;

	while (now() < deadline) {
		long size = 1 + next_rand(&r) % ENTRIES, n;

		for (int i = 0; i < RECORDS; i++) {
			struct slot *s = &slots[next_rand(&r) % SLOTS];
			int skip = next_rand(&r) % 8 ? 1 : 2;

			rec[i].next = i + skip <= RECORDS ?
				      (unsigned long)&rec[i + skip] : 0;
			rec[i].ra = next_rand(&r) % 16 ?
				    (unsigned long)s->text +
				    next_rand(&r) % (TEXT_PAGES * page) :
				    next_rand(&r);
		}
		rec[RECORDS].next = 0;
		rec[RECORDS].ra = 0;
		for (int i = 0; i < ENTRIES + 8; i++)
			buf[i] = CANARY;
		n = ut_syscall_fp(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
				  size, (unsigned long)rec);
		reads++;
		if (n < 0) {
			read_errors++;
			n = 0;
		} else if (n > size) {
			ksft_print_msg("a read of %ld returned %ld\n", size, n);
			failures++;
		}
		entries += n;
		for (long i = size; i < ENTRIES + 8; i++) {
			if (buf[i] != CANARY) {
				ksft_print_msg("entry %ld written past %ld\n",
					       i, size);
				failures++;
				break;
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[WALKERS + 1];
	uint32_t seed = (uint32_t)time(NULL);
	int duration = 10, opt, i;

	if (getenv("SFRAME_FUZZ_DURATION"))
		duration = atoi(getenv("SFRAME_FUZZ_DURATION"));
	while ((opt = getopt(argc, argv, "d:s:")) != -1) {
		if (opt == 'd')
			duration = atoi(optarg);
		else if (opt == 's')
			seed = strtoul(optarg, NULL, 0);
	}
	ksft_print_header();
	if (!prctl(PR_SFRAME_REMOVE, 0, 0, 0, 0) || errno != ENOENT)
		ksft_exit_skip("kernel without CONFIG_UNWIND_USER_SFRAME\n");
	if (prctl(PR_USER_STACK_READ, 0, 0, 0, 0) < 0)
		ksft_exit_skip("kernel without PR_USER_STACK_READ\n");
	ksft_set_plan(1);
	page = getpagesize();
	for (i = 0; i < SLOTS; i++) {
		slots[i].text = mmap(NULL, TEXT_PAGES * page,
				     PROT_READ | PROT_EXEC,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		slots[i].sec = mmap(NULL, SEC_PAGES * page,
				    PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (slots[i].text == MAP_FAILED || slots[i].sec == MAP_FAILED)
			ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	}
	ksft_print_msg("seed %u, %d s, %d walkers\n", seed, duration, WALKERS);
	deadline = now() + duration;
	pthread_create(&threads[0], NULL, mutator, (void *)(uintptr_t)(seed | 1));
	for (i = 1; i <= WALKERS; i++)
		pthread_create(&threads[i], NULL, walker,
			       (void *)(uintptr_t)((seed * 2654435761U + i) | 1));
	for (i = 0; i <= WALKERS; i++)
		pthread_join(threads[i], NULL);
	ksft_print_msg("adds: %ld accepted, %ld refused; reads: %ld (%ld errors), %ld entries\n",
		       adds_ok, adds_refused, reads, read_errors, entries);
	ksft_test_result(!failures && adds_ok && reads,
			 "fuzzed SFrame tables under walks\n");
	ksft_finished();
}
#else
int main(void)
{
	ksft_print_header();
	ksft_exit_skip("x86-64 only\n");
}
#endif
