// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks walked by SFrame tables (CONFIG_UNWIND_USER_SFRAME), seen
 * through the test client (debugfs unwind_test/).
 *
 * This program is built without frame pointers and with an SFrame table
 * (-fomit-frame-pointer -Wa,--gsframe), so its 60-function chain can only
 * be walked by the table the kernel finds at exec. It also calls through
 * a shared object loaded by ld.so and one loaded by dlopen() (both SFrame),
 * through frame-pointer code without a table, through "JIT" code whose
 * table it adds with prctl(PR_SFRAME_ADD) in each format version, and it
 * runs copies of itself with corrupted tables.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <libgen.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "unwind_helpers.h"
#include "unwind_chain.h"
#include "sframe_lib.h"

/* The table's version: 1 as built; 2 and 3 as sframe_convert rewrote it. */
#ifndef SF_VERSION
#define SF_VERSION		1
#define SF_DL_NAME		"libsframe_dl.so"
#else
#define SF_STR(x)		#x
#define SF_DL(v)		"libsfv" SF_STR(v) "_dl.so"
#define SF_DL_NAME		SF_DL(SF_VERSION)
#endif

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/*
 * A leaf with no frame and no table, like a C library system call
 * wrapper: the kernel finds its return address at the stack pointer.
 * It stores that address in ut_leaf_ra without touching the stack.
 */
asm(".text\n"
	".globl sf_leaf_syscall, sf_leaf_ret\n"
	"sf_leaf_syscall:\n"
	"	mov (%rsp), %rax\n"
	"	mov %rax, ut_leaf_ra(%rip)\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	syscall\n"
	"sf_leaf_ret:\n"
	"	cmp $-4095, %rax\n"
	"	ret\n");

static struct ut_log log_;

/* The program header of this program's SFrame table, read from its file. */
static int sf_self_table(Elf64_Phdr *out)
{
	Elf64_Ehdr eh;
	int fd, i, found = 0;

	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh)) {
		for (i = 0; i < eh.e_phnum && !found; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
			    sizeof(ph))
				break;
			if (ph.p_type == PT_GNU_SFRAME) {
				*out = ph;
				found = 1;
			}
		}
	}
	close(fd);
	return found;
}

FIXTURE(sframe) {
	int unused;
};

FIXTURE_SETUP(sframe)
{
	Elf64_Phdr ph;

	if (!ut_available())
		SKIP(return, "test client not loaded (%s)", UT_DIR);
	/* A kernel with SFrame support knows the option: ENOENT, not EINVAL. */
	if (prctl(PR_SFRAME_REMOVE, 0, 0, 0, 0) == 0 || errno != ENOENT)
		SKIP(return, "kernel without CONFIG_UNWIND_USER_SFRAME");
	if (!sf_self_table(&ph))
		SKIP(return, "toolchain emitted no SFrame table (-Wa,--gsframe)");
	ut_drain();
}

FIXTURE_TEARDOWN(sframe)
{
}

/* Request from the end of the chain, its leaf being @leaf. */
static long sf_chain_request(long (*leaf)(long, long, long, long),
			     const char *cmd)
{
	int fd = open(UT_DIR "/request", O_WRONLY);
	long ret;

	if (fd < 0)
		return -1;
	chain_nr = UT_SYS_WRITE;
	chain_arg[0] = fd;
	chain_arg[1] = (long)cmd;
	chain_arg[2] = strlen(cmd);
	chain_call = leaf;
	ret = chain_00();
	chain_call = ut_syscall;
	close(fd);
	return ret;
}

/* The one callback of client A for this process, after one request. */
static struct ut_event *sf_one_callback(struct __test_metadata *_metadata)
{
	if (ut_read_events(&log_) ||
	    ut_count(&log_, getpid(), UT_CB, 'A') != 1) {
		TH_LOG("expected one callback");
		return NULL;
	}
	return ut_find(&log_, getpid(), UT_CB, 'A');
}

/* Do @seq[0..n) appear, in order and with nothing between, in @cb? */
static int sf_has_seq(struct __test_metadata *_metadata, struct ut_event *cb,
		      const unsigned long *seq, int n)
{
	int i, j;

	for (i = CHAIN_LEN + 3; i + n <= cb->nr; i++) {
		if (cb->ips[i] != seq[0])
			continue;
		for (j = 1; j < n && cb->ips[i + j] == seq[j]; j++)
			;
		if (j == n)
			return 1;
		TH_LOG("entry %d is %#lx, not %#lx", i + j, cb->ips[i + j],
		       seq[j]);
		return 0;
	}
	TH_LOG("%#lx is not in the %d entries after the chain", seq[0], cb->nr);
	return 0;
}

static void sf_chain(struct __test_metadata *_metadata, const char *ctx)
{
	char cmd[32];
	struct ut_event *cb;

	snprintf(cmd, sizeof(cmd), "%s 1 1", ctx);
	ASSERT_EQ(strlen(cmd) + CHAIN_LEN,
		  sf_chain_request(ut_syscall, cmd));
	cb = sf_one_callback(_metadata);
	ASSERT_NE(NULL, cb);
	EXPECT_TRUE(chain_matches(_metadata, cb));
}

/* The chain of this program (no frame pointers) is walked exactly. */
TEST_F(sframe, chain_task)
{
	sf_chain(_metadata, "task");
}

/*
 * Walked again in the same process: the task's kept rows (taken by the
 * walk loop without reading the table) give the same exact chain.
 */
TEST_F(sframe, chain_kept_rows)
{
	sf_chain(_metadata, "task");
	ut_drain();
	sf_chain(_metadata, "task");
}

TEST_F(sframe, chain_nmi)
{
	sf_chain(_metadata, "nmi");
}

/* A frameless leaf without a table does not end the walk. */
TEST_F(sframe, frameless_leaf)
{
	unsigned long ips[UT_MAX_IPS];
	struct ut_event *cb;

	ASSERT_EQ(strlen("task 1 1") + CHAIN_LEN,
		  sf_chain_request(sf_leaf_syscall, "task 1 1"));
	cb = sf_one_callback(_metadata);
	ASSERT_NE(NULL, cb);
	ASSERT_GT(cb->nr, 0);
	EXPECT_EQ((unsigned long)sf_leaf_ret, cb->ips[0]);
	/* The rest is the chain that ut_syscall's callers would have. */
	memcpy(ips, cb->ips, cb->nr * sizeof(*ips));
	ips[0] = (unsigned long)ut_syscall_ret;
	EXPECT_TRUE(chain_matches_ips(_metadata, cb->nr, ips));
}

#define SF_RECURSION	200

static unsigned long sf_rec_ra;

/*
 * One function recursing into itself: every frame has the same row, and
 * the walker steps the run of them in one user access window. The
 * Makefile's -fno-inline and -fno-optimize-sibling-calls keep every call.
 */
static long sf_recurse(int n)
{
	if (!n) {
		sf_rec_ra = (unsigned long)__builtin_return_address(0);
		return chain_request(UT_DIR "/request", "task 1 1");
	}
	return sf_recurse(n - 1) + 1;
}

/* The recursion is walked whole, and the walk goes on past it. */
TEST_F(sframe, recursion)
{
	struct ut_event *cb;
	int i, run = 0, first = -1;

	sf_recurse(SF_RECURSION);
	cb = sf_one_callback(_metadata);
	ASSERT_NE(NULL, cb);
	for (i = 0; i < cb->nr; i++) {
		if (cb->ips[i] != sf_rec_ra)
			continue;
		if (first < 0)
			first = i;
		run++;
	}
	/* sf_recurse(SF_RECURSION - 1) .. sf_recurse(0) return there. */
	ASSERT_GE(first, 0);
	EXPECT_EQ(SF_RECURSION, run);
	ASSERT_GT(cb->nr, first + run);
	/* Consecutive, then the test's own frame and beyond. */
	for (i = first; i < first + run; i++)
		EXPECT_EQ(sf_rec_ra, cb->ips[i]);
	EXPECT_NE(0, cb->ips[first + run]);
	EXPECT_GT(cb->nr, first + run + 1);
}

static unsigned long sf_cb_ra;

/* Called back at the end of a chain of other code: request from there. */
static long sf_request_cb(void *arg)
{
	sf_cb_ra = (unsigned long)__builtin_return_address(0);
	return chain_request(UT_DIR "/request", "task 1 1");
}

typedef long (*sf_chain_fn)(long (*cb)(void *), void *arg,
			    unsigned long *ras);

/* Through @fn's frames: the chain, then @fn's return addresses. */
static void sf_through(struct __test_metadata *_metadata, sf_chain_fn fn)
{
	unsigned long ras[SFLIB_DEPTH + 1], seq[SFLIB_DEPTH + 2];
	struct ut_event *cb;
	int i;

	fn(sf_request_cb, NULL, ras);
	cb = sf_one_callback(_metadata);
	ASSERT_NE(NULL, cb);
	ASSERT_TRUE(chain_matches(_metadata, cb));
	seq[0] = sf_cb_ra;
	for (i = 0; i <= SFLIB_DEPTH; i++)
		seq[1 + i] = ras[SFLIB_DEPTH - i];
	EXPECT_TRUE(sf_has_seq(_metadata, cb, seq, SFLIB_DEPTH + 2));
}

/* A shared object with a table, mapped by ld.so. */
TEST_F(sframe, shared_object_linked)
{
	sf_through(_metadata, sflib_linked);
}

/* A shared object with a table, mapped by dlopen() after exec. */
TEST_F(sframe, shared_object_dlopen)
{
	char path[PATH_MAX], *dir;
	sf_chain_fn fn;
	ssize_t n;
	void *h;

	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	ASSERT_GT(n, 0);
	path[n] = '\0';
	dir = dirname(path);
	strcat(dir, "/" SF_DL_NAME);
	h = dlopen(dir, RTLD_NOW);
	ASSERT_NE(NULL, h) TH_LOG("dlopen: %s", dlerror());
	fn = (sf_chain_fn)dlsym(h, "sflib_dl");
	ASSERT_NE(NULL, fn);
	sf_through(_metadata, fn);
	dlclose(h);
}

/* Frame-pointer code without a table, called from and calling SFrame code. */
TEST_F(sframe, mixed_frame_pointer)
{
	sf_through(_metadata, sflib_fp);
}

/*
 * "JIT" code, made at run time: stores its return address at *arg3,
 * calls arg2(arg1) with a 32-byte frame and no frame pointer:
 *   0: mov (%rsp),%rax   4: mov %rax,(%rdx)   7: sub $0x18,%rsp
 *  11: call *%rsi       13: add $0x18,%rsp   17: ret
 */
static const unsigned char jit_code[] = {
	0x48, 0x8b, 0x04, 0x24, 0x48, 0x89, 0x02, 0x48, 0x83, 0xec, 0x18,
	0xff, 0xd6, 0x48, 0x83, 0xc4, 0x18, 0xc3,
};

/* Its rows: CFA = SP + 8 at 0 and 17, SP + 32 from 11 (start, CFA). */
static const unsigned char jit_rows[3][2] = { { 0, 8 }, { 11, 32 }, { 17, 8 } };

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/*
 * An SFrame section of @version at @sec describing @code: the layouts of
 * binutils' SFrame specification. Returns its size.
 */
static size_t sf_craft(unsigned char *sec, int version, unsigned long code)
{
	size_t fde_size = version == 1 ? 17 : version == 2 ? 20 : 16;
	size_t attr = version == 3 ? 5 : 0;
	unsigned char *fde = sec + 28, *fre = fde + fde_size;
	unsigned long fde_addr = (unsigned long)fde;
	int i;

	memset(sec, 0, 28 + fde_size + attr + 9);
	put16(sec, 0xdee2);
	sec[2] = version;
	/* Sorted; v2 and v3 relative to the descriptor, v1 to the section. */
	sec[3] = version == 1 ? 0x1 : 0x5;
	sec[4] = 3;				/* x86-64 */
	sec[6] = (unsigned char)-8;		/* RA at CFA - 8 */
	put32(sec + 8, 1);			/* one function */
	put32(sec + 12, 3);			/* three rows */
	put32(sec + 16, attr + 9);		/* FRE bytes */
	put32(sec + 20, 0);			/* FDEs right after the header */
	put32(sec + 24, fde_size);		/* FREs right after them */
	if (version == 3) {
		put64(fde, code - fde_addr);
		put32(fde + 8, sizeof(jit_code));
		put32(fde + 12, 0);
		put16(fre, 3);			/* rows; info, info2, rep 0 */
		fre += attr;
	} else {
		put32(fde, version == 1 ? code - (unsigned long)sec :
					  code - fde_addr);
		put32(fde + 4, sizeof(jit_code));
		put32(fde + 8, 0);
		put32(fde + 12, 3);		/* rows; info 0: 1-byte starts */
	}
	for (i = 0; i < 3; i++) {
		fre[3 * i] = jit_rows[i][0];
		fre[3 * i + 1] = 0x03;		/* SP based, one 1-byte word */
		fre[3 * i + 2] = jit_rows[i][1];
	}
	return 28 + fde_size + attr + 9;
}

typedef long (*jit_fn)(void *arg, long (*target)(void *), unsigned long *ra);

static unsigned long jit_ra, jit_target_ra;

static long jit_target(void *arg)
{
	jit_target_ra = (unsigned long)__builtin_return_address(0);
	return chain_request(UT_DIR "/request", "task 1 1");
}

/* Is the JIT frame's return address right after the JIT's own? */
static int sf_jit_walked(struct __test_metadata *_metadata)
{
	unsigned long seq[2] = { jit_target_ra, jit_ra };
	struct ut_event *cb = sf_one_callback(_metadata);

	return cb && chain_matches(_metadata, cb) &&
	       sf_has_seq(_metadata, cb, seq, 2);
}

static void sf_jit(struct __test_metadata *_metadata, int version)
{
	unsigned char *mem, *sec;
	jit_fn fn;
	size_t len;

	mem = mmap(NULL, 2 * getpagesize(), PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, mem);
	memcpy(mem, jit_code, sizeof(jit_code));
	fn = (jit_fn)mem;
	sec = mem + getpagesize();
	len = sf_craft(sec, version, (unsigned long)mem);

	/* Without its table the JIT frame cannot be passed. */
	fn(NULL, jit_target, &jit_ra);
	EXPECT_FALSE(sf_jit_walked(_metadata));
	ASSERT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, mem, mem + sizeof(jit_code)))
		TH_LOG("PR_SFRAME_ADD v%d: %s", version, strerror(errno));
	fn(NULL, jit_target, &jit_ra);
	EXPECT_TRUE(sf_jit_walked(_metadata));
	EXPECT_EQ(-1, prctl(PR_SFRAME_ADD, sec, len, mem, mem + 4));
	EXPECT_EQ(EEXIST, errno);

	ASSERT_EQ(0, prctl(PR_SFRAME_REMOVE, mem, 0, 0, 0));
	EXPECT_EQ(-1, prctl(PR_SFRAME_REMOVE, mem, 0, 0, 0));
	EXPECT_EQ(ENOENT, errno);
	ut_drain();
	fn(NULL, jit_target, &jit_ra);
	EXPECT_FALSE(sf_jit_walked(_metadata));
	munmap(mem, 2 * getpagesize());
}

TEST_F(sframe, jit_v1)
{
	sf_jit(_metadata, 1);
}

TEST_F(sframe, jit_v2)
{
	sf_jit(_metadata, 2);
}

TEST_F(sframe, jit_v3)
{
	sf_jit(_metadata, 3);
}

/* An added table goes away with its text. */
TEST_F(sframe, jit_unmapped)
{
	unsigned char *mem = mmap(NULL, 2 * getpagesize(),
				  PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t len;

	ASSERT_NE(MAP_FAILED, mem);
	memcpy(mem, jit_code, sizeof(jit_code));
	len = sf_craft(mem + getpagesize(), 2, (unsigned long)mem);
	ASSERT_EQ(0, prctl(PR_SFRAME_ADD, mem + getpagesize(), len, mem,
			   mem + sizeof(jit_code)));
	munmap(mem, 2 * getpagesize());
	EXPECT_EQ(-1, prctl(PR_SFRAME_REMOVE, mem, 0, 0, 0));
	EXPECT_EQ(ENOENT, errno);
}

/* Every bad argument or section is refused with its error. */
TEST_F(sframe, prctl_errors)
{
	unsigned char *mem = mmap(NULL, 2 * getpagesize(),
				  PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *sec = mem + getpagesize();
	unsigned long code = (unsigned long)mem, end = code + 18;
	size_t len;

	ASSERT_NE(MAP_FAILED, mem);
	len = sf_craft(sec, 2, code);
#define ADD_FAILS(err, s, l, a, b) do {					\
		errno = 0;						\
		EXPECT_EQ(-1, prctl(PR_SFRAME_ADD, s, l, a, b));	\
		EXPECT_EQ(err, errno);					\
	} while (0)
	ADD_FAILS(EINVAL, sec, len, end, code);		/* empty text */
	ADD_FAILS(EINVAL, sec, 27, code, end);		/* truncated */
	ADD_FAILS(EFAULT, 4096, len, code, end);	/* unreadable */
	ADD_FAILS(EINVAL, sec, len, code, -4096UL);	/* not user text */
	sec[0] ^= 1;					/* magic */
	ADD_FAILS(EINVAL, sec, len, code, end);
	sec[0] ^= 1;
	sec[2] = 9;					/* version */
	ADD_FAILS(EINVAL, sec, len, code, end);
	sec[2] = 2;
	sec[3] = 0x4;					/* not sorted */
	ADD_FAILS(EINVAL, sec, len, code, end);
	sec[3] = 0x5;
	sec[4] = 2;					/* arm64 */
	ADD_FAILS(EINVAL, sec, len, code, end);
	sec[4] = 3;
	put32(sec + 8, 1000);				/* FDEs past the end */
	ADD_FAILS(EINVAL, sec, len, code, end);
	put32(sec + 8, 1);
	put32(sec + 28 + 8, 1000);			/* FRE offset past it */
	ADD_FAILS(EINVAL, sec, len, code, end);
	put32(sec + 28 + 8, 0);
	sec[28 + 16] = 7;				/* unknown FRE type */
	ADD_FAILS(EINVAL, sec, len, code, end);
	sec[28 + 16] = 0;
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SFRAME_REMOVE, code, 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* The section itself is good: nothing above was a false refusal. */
	EXPECT_EQ(0, prctl(PR_SFRAME_ADD, sec, len, code, end));
	EXPECT_EQ(0, prctl(PR_SFRAME_REMOVE, code, 0, 0, 0));
	munmap(mem, 2 * getpagesize());
}

/* Corruptions of this program's table, at the offset of the table. */
enum { BAD_VERSION, BAD_SORT, BAD_FDE_COUNT, BAD_FRE_OFFSET, BAD_ROWS,
	BAD_UNSORTED_FDES, BAD_NR };

static void sf_corrupt(unsigned char *t, size_t len, int how)
{
	/* Descriptor size and its FRE offset field, per version. */
	size_t fsz = SF_VERSION == 1 ? 17 : SF_VERSION == 2 ? 20 : 16;
	size_t fre_off = SF_VERSION == 3 ? 12 : 8;
	uint32_t nfdes, fre_len, fres;
	unsigned char tmp[20];

	memcpy(&nfdes, t + 8, 4);
	memcpy(&fre_len, t + 16, 4);
	memcpy(&fres, t + 24, 4);
	switch (how) {
	case BAD_VERSION:
		t[2] = 9;
		break;
	case BAD_SORT:
		t[3] &= ~1;
		break;
	case BAD_FDE_COUNT:
		put32(t + 8, 0x7fffffff);
		break;
	case BAD_FRE_OFFSET:
		put32(t + 28 + fre_off, 0xffffff00);	/* FDE 0's */
		break;
	case BAD_ROWS:
		/* Every row's info byte says 8-byte words: no such size. */
		if (28 + fres + fre_len <= len)
			memset(t + 28 + fres, 0xff, fre_len);
		break;
	case BAD_UNSORTED_FDES:
		if (nfdes >= 2) {
			memcpy(tmp, t + 28, fsz);
			memcpy(t + 28, t + 28 + fsz * (nfdes - 1), fsz);
			memcpy(t + 28 + fsz * (nfdes - 1), tmp, fsz);
		}
		break;
	}
}

/*
 * Copies of this program with a corrupted table make a request from the
 * chain: the walk ends early and cleanly (the console must stay clean).
 */
TEST_F(sframe, corrupted_table)
{
	static unsigned char image[8 << 20];
	char path[64], dir[PATH_MAX];
	Elf64_Phdr ph;
	ssize_t size;
	int fd, how;

	ASSERT_TRUE(sf_self_table(&ph));
	size = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	ASSERT_GT(size, 0);
	dir[size] = '\0';
	dirname(dir);
	fd = open("/proc/self/exe", O_RDONLY);
	ASSERT_GE(fd, 0);
	size = read(fd, image, sizeof(image));
	close(fd);
	ASSERT_GT(size, 0);
	ASSERT_LT(size, sizeof(image));
	ASSERT_EQ(SF_VERSION, image[ph.p_offset + 2])
		TH_LOG("expected version %d", SF_VERSION);

	for (how = 0; how < BAD_NR; how++) {
		unsigned char *copy = malloc(size);
		struct ut_event *cb;
		int status;
		pid_t pid;

		ASSERT_NE(NULL, copy);
		memcpy(copy, image, size);
		sf_corrupt(copy + ph.p_offset, ph.p_filesz, how);
		snprintf(path, sizeof(path), "/tmp/sframe_bad_v%d_%d",
			 SF_VERSION, how);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(size, write(fd, copy, size));
		close(fd);
		free(copy);

		ut_drain();
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			/* The copy finds its shared object next to us. */
			setenv("LD_LIBRARY_PATH", dir, 1);
			execl(path, path, "--request", NULL);
			_exit(127);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("corruption %d: child status %#x", how, status);
		ASSERT_EQ(0, ut_read_events(&log_));
		EXPECT_EQ(1, ut_count(&log_, pid, UT_CB, 'A'))
			TH_LOG("corruption %d: no callback", how);
		cb = ut_find(&log_, pid, UT_CB, 'A');
		if (cb) {
			EXPECT_GT(cb->nr, 0);
			EXPECT_LT(cb->nr, CHAIN_LEN + 3)
				TH_LOG("corruption %d: walked %d entries", how,
				       cb->nr);
		}
		unlink(path);
	}
}

int main(int argc, char **argv)
{
	/* A corrupted copy's one job: a request from the chain. */
	if (argc == 2 && !strcmp(argv[1], "--request"))
		return chain_request(UT_DIR "/request", "task 1 1") < 0;
	return test_harness_run(argc, argv);
}
