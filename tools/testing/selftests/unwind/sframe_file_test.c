// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame tables given to the kernel for a file (prctl(PR_SFRAME_FILE_ADD)).
 *
 * This program is built as a distribution builds: neither frame pointers
 * nor an SFrame section, but .eh_frame. The build converts its .eh_frame
 * to an SFrame table (cfi2sframe, built here from tools/unwind), and a
 * second table from another program's (guess_test's), which lies about
 * this one. Each case forks a child that execs this program again (a new
 * mm, whose walker meets the program's mapping for the first time) to
 * read its own stack from the end of the 60-function chain:
 *
 *   - with its table given, the stack is exactly the chain, no entry
 *     guessed;
 *   - with the lying table, the walk still ends, and is not the chain;
 *   - taken back, the next process does not get the table;
 *   - a process that walked before the table came gets it after;
 *   - without a table, the walk traces unwind_sframe_missing for it;
 *   - every error a caller can meet, the bound on all tables' memory, and
 *     no caller without CAP_PERFMON;
 *   - in code the table leaves out, a frame found by the frame pointer
 *     is marked;
 *   - damaged tables and arguments, given while children walk (a fuzzer:
 *     SFRAME_FILE_FUZZ_DURATION seconds, 5 by default, and
 *     SFRAME_FILE_FUZZ_SEED to run one sequence again).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind_chain.h"

#define MAX_ENTRIES	512

static uint64_t buf[MAX_ENTRIES];
static char self_path[PATH_MAX];

/* The child: read the stack from the end of the chain; 0 if exact. */
static int chain_child(void)
{
	unsigned long want[CHAIN_LEN + 3];
	long n;

	n = chain_run(UT_SYS_PRCTL, PR_USER_STACK_READ, (long)buf,
		      MAX_ENTRIES) - CHAIN_LEN;
	want[0] = (unsigned long)ut_syscall_ret;
	want[1] = ut_leaf_ra;
	want[2] = leaf_caller_ra;
	for (int i = 0; i < CHAIN_LEN; i++)
		want[3 + i] = chain_ra[CHAIN_LEN - 1 - i];
	if (n < CHAIN_LEN + 3) {
		printf("# child: %ld entries\n", n);
		return 1;
	}
	for (int i = 0; i < CHAIN_LEN + 3; i++) {
		if (buf[i] != want[i]) {
			printf("# child: entry %d is %#llx, not %#lx\n", i,
			       (unsigned long long)buf[i], want[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * A gap in the table: gap_asm has no CFI, so no row, and keeps no frame
 * pointer, while gap_outer (CFI, and a frame-pointer record) left %rbp
 * pointing at its record. By frame pointers, the frame after gap_asm's
 * would be gap_outer's caller, two frames out. ut_syscall (CFI) reads
 * the stack.
 *   gap_child -> gap_outer -> gap_mid -> gap_asm -> ut_syscall
 */
#define STR1(x)	#x
#define STR(x)	STR1(x)

asm(".text\n"
	"gap_mid:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	call gap_asm\n"
	"gap_mid_ra:\n"
	"	add $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"gap_asm:\n"
	"	sub $8, %rsp\n"
	"	mov %rsi, %rcx\n"
	"	mov %rdi, %rdx\n"
	"	mov $" STR(PR_USER_STACK_READ) ", %esi\n"
	"	mov $" STR(UT_SYS_PRCTL) ", %edi\n"
	"	call ut_syscall\n"
	"gap_asm_ra:\n"
	"	add $8, %rsp\n"
	"	ret\n");

/* The compiler writes this one's CFI around the body. */
__attribute__((naked)) static long gap_outer(uint64_t *buf, long size)
{
	asm("push %rbp\n"
	    ".cfi_def_cfa_offset 16\n"
	    ".cfi_offset %rbp, -16\n"
	    "mov %rsp, %rbp\n"
	    ".cfi_def_cfa_register %rbp\n"
	    "call gap_mid\n"
	    "pop %rbp\n"
	    ".cfi_def_cfa %rsp, 8\n"
	    "ret\n");
}

/* The address of an asm label of this file. */
#define LABEL(name) ({						\
	uintptr_t __a;							\
	asm("lea " #name "(%%rip), %0" : "=r" (__a));			\
	__a;								\
})

/*
 * The child: read the stack through the gap. 0 if the entry into the gap
 * is exact and the one after it right or marked (and all after a marked
 * one marked), 1 if not.
 */
static int gap_child(void)
{
	long n = gap_outer(buf, MAX_ENTRIES);

	if (n < 4 || buf[1] != LABEL(gap_asm_ra)) {
		printf("# child: %ld entries, the second %#llx\n", n,
		       (unsigned long long)buf[1]);
		return 1;
	}
	if (!(buf[2] & PR_USER_STACK_GUESSED) && buf[2] != LABEL(gap_mid_ra)) {
		printf("# child: entry 2, after the gap, is %#llx unmarked\n",
		       (unsigned long long)buf[2]);
		return 1;
	}
	for (long i = 3; i < n; i++)
		if ((buf[i - 1] & PR_USER_STACK_GUESSED) &&
		    !(buf[i] & PR_USER_STACK_GUESSED))
			return 1;
	return 0;
}

/*
 * A row the kernel's walk cannot step by: realign_asm keeps its CFA in
 * %rbx while it aligns the stack, as ld.so's trampolines do, which only
 * a version 3 table says (cfi2sframe writes one for this program). The
 * walk has no %rbx beyond the interrupted frame, so it must step that
 * frame as it steps a gap, by the frame-pointer record realign_outer
 * left (marked), and go on; it stopped there before.
 *   realign_child -> realign_outer -> realign_asm -> ut_syscall
 */
asm(".text\n"
	"realign_asm:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	mov %rsp, %rbx\n"
	"	.cfi_def_cfa_register %rbx\n"
	"	and $-64, %rsp\n"
	"	mov %rsi, %rcx\n"
	"	mov %rdi, %rdx\n"
	"	mov $" STR(PR_USER_STACK_READ) ", %esi\n"
	"	mov $" STR(UT_SYS_PRCTL) ", %edi\n"
	"	call ut_syscall\n"
	"realign_ra:\n"
	"	mov %rbx, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n");

__attribute__((naked)) static long realign_outer(uint64_t *buf, long size)
{
	asm("push %rbp\n"
	    ".cfi_def_cfa_offset 16\n"
	    ".cfi_offset %rbp, -16\n"
	    "mov %rsp, %rbp\n"
	    ".cfi_def_cfa_register %rbp\n"
	    "call realign_asm\n"
	    "pop %rbp\n"
	    ".cfi_def_cfa %rsp, 8\n"
	    "ret\n");
}

/*
 * The child: read the stack through realign_asm. 0 if its frame is exact
 * and the walk goes on past it, marked from there; 1 if not.
 */
static int realign_child(void)
{
	long n = realign_outer(buf, MAX_ENTRIES);

	if (n < 4 || buf[1] != LABEL(realign_ra)) {
		printf("# child: %ld entries, the second %#llx\n", n,
		       (unsigned long long)buf[1]);
		return 1;
	}
	for (long i = 2; i < n; i++) {
		if (!(buf[i] & PR_USER_STACK_GUESSED)) {
			printf("# child: entry %ld, past realign_asm, unmarked\n",
			       i);
			return 1;
		}
	}
	return 0;
}

/*
 * The child of given_later: read the stack, tell the parent how it went
 * (chain_child()'s result, one byte on @wfd), wait for the parent's byte
 * on @rfd (a table given meanwhile), and read it again: the exit status
 * is how that went.
 */
static int later_child(int rfd, int wfd)
{
	char c = chain_child();

	if (write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1)
		return 2;
	return chain_child();
}

/* Exec this program as a child: "--chain" or "--gap"; @quiet: no output. */
static pid_t spawn(const char *what, int quiet)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (quiet)
			dup2(open("/dev/null", O_WRONLY), 1);
		execl(self_path, self_path, what, NULL);
		_exit(127);
	}
	return pid;
}

static pid_t spawn_child(void)
{
	return spawn("--chain", 0);
}

/* The exit status of the child @pid, or -1 if it did not exit. */
static int reap_child(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int run_child(void)
{
	return reap_child(spawn_child());
}

/* The whole of a file, in @len bytes of memory. */
static void *slurp(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = malloc(st.st_size);
	if (p && read(fd, p, st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	close(fd);
	*len = st.st_size;
	return p;
}

/* The GNU build ID of the ELF file @path, into @id: its size, or 0. */
static int file_build_id(const char *path, uint8_t id[20])
{
	size_t len;
	uint8_t *img = slurp(path, &len);
	const Elf64_Ehdr *eh = (const void *)img;
	int ret = 0;

	if (!img || len < sizeof(*eh))
		goto out;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;
		size_t off = ph->p_offset;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= ph->p_offset + ph->p_filesz) {
			const Elf64_Nhdr *n = (const void *)(img + off);
			size_t name = (n->n_namesz + 3) & ~3UL;
			size_t desc = (n->n_descsz + 3) & ~3UL;

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    n->n_descsz <= 20) {
				memcpy(id, (const uint8_t *)(n + 1) + name, n->n_descsz);
				ret = n->n_descsz;
				goto out;
			}
			off += sizeof(*n) + name + desc;
		}
	}
out:
	free(img);
	return ret;
}

/* Copy the file at @from into @fd: another inode with the same build ID. */
static int copy_file(const char *from, int fd)
{
	size_t len;
	void *p = slurp(from, &len);
	int ret = p && write(fd, p, len) == (ssize_t)len ? 0 : -1;

	free(p);
	return ret;
}

struct sframe_file_arg {
	struct prctl_sframe_file a;
	uint64_t tail;		/* for sizes past the struct */
};

static char table_path[PATH_MAX + 32], liar_path[PATH_MAX + 32];

/* The argument giving @table (a file) for this program, @fd open on it. */
static void *fill(struct prctl_sframe_file *a, int fd, const char *table,
		  size_t *len)
{
	void *t = slurp(table, len);

	memset(a, 0, sizeof(*a));
	a->fd = fd;
	a->build_id_size = file_build_id(self_path, a->build_id);
	a->table = (uintptr_t)t;
	a->table_size = *len;
	return t;
}

static long add(const struct prctl_sframe_file *a, unsigned long size)
{
	return prctl(PR_SFRAME_FILE_ADD, a, size, 0, 0) ? -errno : 0;
}

static long remove_fd(int fd)
{
	return prctl(PR_SFRAME_FILE_REMOVE, fd, 0, 0, 0) ? -errno : 0;
}

FIXTURE(file) {
	int fd;
	struct prctl_sframe_file a;
	void *table;
	size_t len;
};

FIXTURE_SETUP(file)
{
	self->fd = open(self_path, O_RDONLY);
	ASSERT_GE(self->fd, 0);
	self->table = fill(&self->a, self->fd, table_path, &self->len);
	ASSERT_NE(NULL, self->table) TH_LOG("no table at %s", table_path);
	ASSERT_GT(self->a.build_id_size, 0) TH_LOG("%s has no build ID", self_path);
	/* A table left by an earlier run or case. */
	remove_fd(self->fd);
}

FIXTURE_TEARDOWN(file)
{
	remove_fd(self->fd);
	close(self->fd);
	free(self->table);
}

/* Given, the chain is walked exactly; taken back, the next exec is not. */
TEST_F(file, walked_with_the_table)
{
	int without = run_child();

	TH_LOG("without a table the child's stack is %s",
	       without ? "not the chain" : "the chain (read from the code)");
	ASSERT_EQ(0, add(&self->a, sizeof(self->a)));
	EXPECT_EQ(0, run_child());
	/* Given again: replaced, still used. */
	ASSERT_EQ(0, add(&self->a, sizeof(self->a)));
	EXPECT_EQ(0, run_child());
	ASSERT_EQ(0, remove_fd(self->fd));
	EXPECT_EQ(-ENOENT, remove_fd(self->fd));
	EXPECT_EQ(without, run_child());
}

/* Code the table leaves out: a frame there by frame pointers is marked. */
TEST_F(file, a_gap_is_marked)
{
	ASSERT_EQ(0, add(&self->a, sizeof(self->a)));
	EXPECT_EQ(0, reap_child(spawn("--gap", 0)));
}

/*
 * A row the walk cannot use (a CFA off %rbx, in the version 3 table
 * cfi2sframe wrote for this program) is stepped as a gap, marked.
 */
TEST_F(file, a_row_the_walk_cannot_use_is_a_gap)
{
	ASSERT_GT(self->len, 2);
	ASSERT_EQ(3, ((uint8_t *)self->table)[2])
		TH_LOG("the table is not version 3: no flexible row to test");
	ASSERT_EQ(0, add(&self->a, sizeof(self->a)));
	EXPECT_EQ(0, reap_child(spawn("--realign", 0)));
}

/*
 * A process that walked its stack before the file's table came walks with
 * the table after, as one started after it does. The table is this
 * program's, or, where the code reading finds the chain without one, the
 * lying table, which is the one whose effect a child can see.
 */
TEST_F(file, given_later)
{
	int without = run_child(), with, first, to_child[2], from_child[2];
	struct prctl_sframe_file a = self->a;
	void *liar = NULL;
	char rfd[16], wfd[16], c = 0;
	size_t len;
	pid_t pid;

	if (!without) {
		liar = slurp(liar_path, &len);
		ASSERT_NE(NULL, liar);
		a.table = (uintptr_t)liar;
		a.table_size = len;
	}
	ASSERT_EQ(0, add(&a, sizeof(a)));
	with = run_child();
	ASSERT_EQ(0, remove_fd(self->fd));
	ASSERT_NE(without, with) TH_LOG("the table changes nothing a child sees");

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(from_child));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		snprintf(rfd, sizeof(rfd), "%d", to_child[0]);
		snprintf(wfd, sizeof(wfd), "%d", from_child[1]);
		execl(self_path, self_path, "--later", rfd, wfd, NULL);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	ASSERT_EQ(1, read(from_child[0], &c, 1));
	first = c;
	EXPECT_EQ(without, first);
	ASSERT_EQ(0, add(&a, sizeof(a)));
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	EXPECT_EQ(with, reap_child(pid))
		TH_LOG("the child walked as before the table (%s)",
		       without ? "not the chain" : "the chain, from the code");
	close(to_child[1]);
	close(from_child[0]);
	free(liar);
}

/* A tracefs instance of this test's own, so as not to touch the main buffer. */
#define TRACE_DIR	"/sys/kernel/tracing/instances/sframe_file_test"

/* Write @val to the file @name of the instance; 0 or -1. */
static int trace_write(const char *name, const char *val)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), TRACE_DIR "/%s", name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

/* Does the instance's buffer hold an event of @pid for this program? */
static int traced_missing(pid_t pid)
{
	char line[512], want[64], ino[32];
	struct stat st;
	FILE *f;
	int found = 0;

	if (stat(self_path, &st))
		return -1;
	snprintf(want, sizeof(want), "pid=%d ", pid);
	snprintf(ino, sizeof(ino), " ino=%lu ", (unsigned long)st.st_ino);
	f = fopen(TRACE_DIR "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "unwind_sframe_missing:") &&
		    strstr(line, want) && strstr(line, ino))
			found = 1;
	fclose(f);
	return found;
}

/*
 * A walk that meets this program with no table fires
 * unwind_sframe_missing for it, once, naming the process and the file;
 * with the table given, none fires.
 */
TEST_F(file, missing_is_traced)
{
	pid_t pid;

	if (mkdir(TRACE_DIR, 0755) && errno != EEXIST)
		SKIP(return, "no tracefs instances (%s)", strerror(errno));
	if (trace_write("events/unwind_sframe/unwind_sframe_missing/enable", "1")) {
		rmdir(TRACE_DIR);
		SKIP(return, "no unwind_sframe_missing event");
	}
	pid = spawn_child();
	reap_child(pid);
	EXPECT_EQ(1, traced_missing(pid));
	ASSERT_EQ(0, trace_write("trace", ""));
	ASSERT_EQ(0, add(&self->a, sizeof(self->a)));
	pid = spawn_child();
	EXPECT_EQ(0, reap_child(pid));
	EXPECT_EQ(0, traced_missing(pid));
	trace_write("events/unwind_sframe/unwind_sframe_missing/enable", "0");
	rmdir(TRACE_DIR);
}

/* A table of another program, given as this one's: stacks only. */
TEST_F(file, a_lying_table_hurts_only_stacks)
{
	struct prctl_sframe_file a = self->a;
	size_t len;
	void *liar = slurp(liar_path, &len);

	ASSERT_NE(NULL, liar);
	a.table = (uintptr_t)liar;
	a.table_size = len;
	ASSERT_EQ(0, add(&a, sizeof(a)));
	/* The walk ends (the child exits), with a stack that is not the chain. */
	EXPECT_EQ(1, run_child());
	free(liar);
}

TEST_F(file, errors)
{
	struct sframe_file_arg big = { .a = self->a };
	struct prctl_sframe_file a;
	char tmp[] = "/tmp/sframe_file_XXXXXX";
	uint8_t *junk;
	int fd;

	EXPECT_EQ(-EFAULT, add(NULL, sizeof(a)));
	a = self->a;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	a = self->a;
	a.build_id_size = 0;
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	a.build_id_size = 21;
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	a = self->a;
	a.table_size = 0;
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	a.table_size = 1ULL << 40;
	EXPECT_EQ(-E2BIG, add(&a, sizeof(a)));
	a = self->a;
	a.table = 8;
	EXPECT_EQ(-EFAULT, add(&a, sizeof(a)));
	/* A larger struct is taken if what this kernel does not know is 0. */
	EXPECT_EQ(0, add(&big.a, sizeof(big)));
	big.tail = 1;
	EXPECT_EQ(-E2BIG, add(&big.a, sizeof(big)));
	EXPECT_EQ(-EINVAL, prctl(PR_SFRAME_FILE_ADD, &self->a, sizeof(a), 1, 0) ? -errno : 0);

	/* The file: a descriptor of a regular file open for reading. */
	a = self->a;
	a.fd = -1;
	EXPECT_EQ(-EBADF, add(&a, sizeof(a)));
	a.fd = open("/", O_RDONLY | O_DIRECTORY);
	EXPECT_EQ(-EBADF, add(&a, sizeof(a)));
	close(a.fd);
	fd = mkstemp(tmp);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(5, write(fd, "hello", 5));
	a.fd = fd;		/* read-write: but no ELF, no build ID */
	EXPECT_EQ(-ENODATA, add(&a, sizeof(a)));
	close(fd);
	a.fd = open(tmp, O_WRONLY);
	EXPECT_EQ(-EBADF, add(&a, sizeof(a)));
	close(a.fd);
	unlink(tmp);

	/* The build ID must be the file's. */
	a = self->a;
	a.build_id[0] ^= 0xff;
	EXPECT_EQ(-ESTALE, add(&a, sizeof(a)));
	a = self->a;
	a.build_id_size--;
	EXPECT_EQ(-ESTALE, add(&a, sizeof(a)));

	/* A table that is not one: refused as any mapped section would be. */
	a = self->a;
	junk = malloc(self->len);
	ASSERT_NE(NULL, junk);
	memset(junk, 0xa5, self->len);
	a.table = (uintptr_t)junk;
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	memcpy(junk, self->table, self->len);
	((uint8_t *)junk)[2] = 9;	/* version */
	EXPECT_EQ(-EINVAL, add(&a, sizeof(a)));
	free(junk);

	EXPECT_EQ(-EBADF, remove_fd(-1));
	EXPECT_EQ(-EINVAL, prctl(PR_SFRAME_FILE_REMOVE, self->fd, 1, 0, 0) ? -errno : 0);
}

/*
 * All tables together are bounded (512 MiB): the largest table, 256 MiB
 * of rows for no function, given for copies of this program until one is
 * refused (-ENOSPC), which it is until one is taken back.
 */
TEST_F(file, memory_limit)
{
	const size_t big = 256UL << 20;
	char path[3][32];
	int fd[3], i;
	uint8_t *t;
	struct prctl_sframe_file a;
	long ret = 0;

	t = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	/* The header of this program's table, saying: no function, all rows. */
	memcpy(t, self->table, 28);
	t[7] = 0;				/* auxhdr_len */
	memset(t + 8, 0, 20);			/* counts and offsets */
	*(uint32_t *)(t + 16) = big - 28;	/* fre_len */
	for (i = 0; i < 3; i++) {
		snprintf(path[i], sizeof(path[i]), "/tmp/sframe_file_%d", i);
		fd[i] = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0700);
		ASSERT_GE(fd[i], 0);
		ASSERT_EQ(0, copy_file(self_path, fd[i]));
	}
	a = self->a;
	a.table = (uintptr_t)t;
	a.table_size = big;
	/*
	 * 512 MiB in all: at most two such tables, one if the machine holds
	 * other tables (set up with cfi2sframe -R, as the test guest is),
	 * and never three.
	 */
	for (i = 0; i < 3; i++) {
		a.fd = fd[i];
		ret = add(&a, sizeof(a));
		if (ret)
			break;
	}
	ASSERT_EQ(-ENOSPC, ret);
	ASSERT_GE(i, 1) TH_LOG("not one table of 256 MiB fits");
	ASSERT_LE(i, 2);
	/* A second table for a file replaces its first: 256 MiB, again. */
	a.fd = fd[i - 1];
	EXPECT_EQ(0, add(&a, sizeof(a)));
	/* Taken back, its room is free for the file refused. */
	EXPECT_EQ(0, remove_fd(fd[0]));
	a.fd = fd[i];
	EXPECT_EQ(0, add(&a, sizeof(a)));
	for (i = 0; i < 3; i++) {
		remove_fd(fd[i]);
		close(fd[i]);
		unlink(path[i]);
	}
	munmap(t, big);
}

/* Only CAP_PERFMON (or CAP_SYS_ADMIN) decides how every process is walked. */
TEST_F(file, privileged_only)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(add(&self->a, sizeof(self->a)) == -EPERM &&
		      remove_fd(self->fd) == -EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static uint32_t fuzz_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* What an add of a damaged table or argument may answer. */
static int fuzz_answer_ok(long r)
{
	return r == 0 || r == -EINVAL || r == -E2BIG || r == -ESTALE ||
	       r == -ENODATA;
}

/*
 * Damaged copies of the table (a few bits flipped, in the rows most often,
 * so that many pass the kernel's check of the header and descriptors;
 * truncated; extended with junk) and damaged arguments (build ID, its size, flags), given for this
 * program while children exec it and walk their stacks: each add races
 * the last child's discovery of its mapping and its walk, and some adds
 * are taken back at once. Every add is taken or refused with an error of
 * the ABI, and every child exits (a damaged table costs its stack only);
 * the kernel's part is judged by its console (KASAN, lockdep and UBSAN in
 * the debug lane, which runs this for minutes).
 */
TEST_F_TIMEOUT(file, fuzz, 1800)
{
	const char *d = getenv("SFRAME_FILE_FUZZ_DURATION");
	const char *sd = getenv("SFRAME_FILE_FUZZ_SEED");
	uint32_t seed = sd ? strtoul(sd, NULL, 0) : (uint32_t)time(NULL);
	time_t end = time(NULL) + (d ? atoi(d) : 5);
	long taken = 0, refused = 0, exact = 0, children = 0;
	uint8_t *t = malloc(self->len + 64);
	pid_t pid = -1;

	ASSERT_NE(NULL, t);
	seed |= 1;
	TH_LOG("seed %#x", seed);
	while (time(NULL) < end) {
		struct prctl_sframe_file a = self->a;
		size_t len = self->len, head = len < 256 ? len : 256;
		unsigned int kind = fuzz_rand(&seed) % 8;
		int flips = 1 + fuzz_rand(&seed) % 3, status;
		long r;

		memcpy(t, self->table, self->len);
		for (int i = 0; i < flips; i++) {
			size_t at = fuzz_rand(&seed) % (fuzz_rand(&seed) % 4 ?
							 len : head);

			t[at] ^= 1 << (fuzz_rand(&seed) % 8);
		}
		if (kind == 0)
			len = fuzz_rand(&seed) % len;
		if (kind == 1) {
			memset(t + len, fuzz_rand(&seed), 64);
			len += 1 + fuzz_rand(&seed) % 64;
		}
		a.table = (uintptr_t)t;
		a.table_size = len;
		if (kind == 2)
			a.build_id_size = fuzz_rand(&seed) % 32;
		if (kind == 3)
			a.build_id[fuzz_rand(&seed) % 20] ^= 1;
		if (kind == 4)
			a.flags = fuzz_rand(&seed);
		r = add(&a, sizeof(a));
		EXPECT_TRUE(fuzz_answer_ok(r))
			TH_LOG("add %ld (kind %u): %ld", taken + refused, kind, r);
		r ? refused++ : taken++;
		if (pid > 0) {
			status = reap_child(pid);
			EXPECT_TRUE(status == 0 || status == 1)
				TH_LOG("child %ld: %d", children, status);
			exact += !status;
		}
		pid = spawn("--chain", 1);
		ASSERT_GT(pid, 0);
		children++;
		if (fuzz_rand(&seed) % 4 == 0)
			remove_fd(self->fd);
	}
	if (pid > 0) {
		int status = reap_child(pid);

		EXPECT_TRUE(status == 0 || status == 1);
		exact += !status;
	}
	free(t);
	TH_LOG("%ld damaged adds taken, %ld refused; %ld children walked, %ld exactly",
	       taken, refused, children, exact);
	EXPECT_GT(taken, 0);
	EXPECT_GT(refused, 0);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX];

	if (argc == 2 && !strcmp(argv[1], "--chain"))
		return chain_child();
	if (argc == 2 && !strcmp(argv[1], "--gap"))
		return gap_child();
	if (argc == 2 && !strcmp(argv[1], "--realign"))
		return realign_child();
	if (argc == 4 && !strcmp(argv[1], "--later"))
		return later_child(atoi(argv[2]), atoi(argv[3]));
	if (!realpath("/proc/self/exe", self_path)) {
		perror("realpath");
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s", self_path);
	snprintf(table_path, sizeof(table_path), "%s/sframe_file_test.sframe",
		 dirname(dir));
	snprintf(liar_path, sizeof(liar_path), "%s/guess_test.sframe", dir);
	return test_harness_run(argc, argv);
}
