// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the SFrame reader and of the walker's SFrame steps, on
 * sections and stacks crafted by the tests in user memory (kunit_vm_mmap()
 * gives the test thread an address space): good sections of versions 1, 2
 * and 3, hostile ones (truncated, unsorted, overlapping, offsets and counts
 * past the end, wrong ABI, bad rows), and walks mixing SFrame and
 * frame-pointer frames.
 */
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/prctl.h>
#include <linux/uaccess.h>
#include <linux/unwind_sframe.h>
#include <linux/unwind_user.h>
#include "../sframe/sframe.h"
#include "../walk.h"

/* A lookup with the budget of the deepest walk. */
static int sframe_find_row(const struct unwind_sframe_sec *sec,
			   unsigned long pc, struct unwind_sframe_row *row)
{
	u32 rows = SFRAME_WALK_ROWS_BASE +
		   SFRAME_WALK_ROWS_PER_FRAME * UNWIND_USER_MAX_DEPTH;

	return sframe_find_row_budget(sec, pc, row, &rows);
}

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/*
 * One row: from byte @start of the function, CFA = SP or FP + @cfa; an
 * outermost row has no words (the stack ends there).
 */
struct sfk_row {
	u8	start;
	bool	fp_based;
	s8	cfa;
	s8	fp;		/* saved FP at CFA + fp, if not 0 */
	bool	outermost;
};

struct sfk_func {
	u32			off;	/* from the text start */
	u32			size;
	u8			rep;	/* PC-mask block, 0 for none */
	u8			nrows;
	const struct sfk_row	*rows;
};

/* Two functions with a gap between them, the second one a PC mask. */
static const struct sfk_row sfk_rows_a[] = {
	{ 0, false, 8, 0 }, { 1, false, 16, -16 }, { 4, true, 16, -16 },
	{ 30, false, 8, 0 },
};

static const struct sfk_row sfk_rows_b[] = {
	{ 0, false, 8, 0 }, { 6, false, 24, 0 },
};

static const struct sfk_func sfk_funcs[] = {
	{ 0x100, 32, 0, ARRAY_SIZE(sfk_rows_a), sfk_rows_a },
	{ 0x200, 64, 16, ARRAY_SIZE(sfk_rows_b), sfk_rows_b },
};

struct sfk_env {
	unsigned long	text;		/* user text the tables describe */
	unsigned long	sec;		/* user address of the section */
	unsigned long	stack;
	u8		buf[1024];	/* the section, built here first */
	size_t		len;
	size_t		fdes, fres;	/* offsets in buf */
	unsigned long	entries[UNWIND_USER_MAX_DEPTH];
	struct unwind_stacktrace trace;
};

static size_t sfk_fde_size(int version)
{
	return version == 1 ? 17 : version == 2 ? 20 : 16;
}

/* Build a section of @version for @funcs at env->sec, describing env->text. */
static void sfk_build(struct sfk_env *env, int version,
		      const struct sfk_func *funcs, int n)
{
	size_t fde_size = sfk_fde_size(version), pos;
	struct sframe_header *h = (void *)env->buf;
	int i, j;

	memset(env->buf, 0, sizeof(env->buf));
	h->magic = SFRAME_MAGIC;
	h->version = version;
	h->flags = SFRAME_F_FDE_SORTED |
		   (version > 1 ? SFRAME_F_FDE_FUNC_START_PCREL : 0);
	h->abi_arch = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	h->cfa_fixed_ra_offset = -8;
	h->num_fdes = n;
	h->fdeoff = 0;
	h->freoff = n * fde_size;
	env->fdes = sizeof(*h);
	env->fres = env->fdes + n * fde_size;
	pos = env->fres;
	for (i = 0; i < n; i++) {
		const struct sfk_func *f = &funcs[i];
		u8 *fde = env->buf + env->fdes + i * fde_size;
		unsigned long entry = env->sec + env->fdes + i * fde_size;
		unsigned long start = env->text + f->off;
		s64 rel = start - (version == 1 ? env->sec : entry);
		u8 info = f->rep ? 0x10 : 0;	/* 1-byte starts */
		u32 fre_off = pos - env->fres;

		if (version == 3) {
			struct sframe_fde_v3 v3 = { rel, f->size, fre_off };
			struct sframe_fda_v3 fda = { f->nrows, info, 0, f->rep };

			memcpy(fde, &v3, sizeof(v3));
			memcpy(env->buf + pos, &fda, sizeof(fda));
			pos += sizeof(fda);
		} else {
			struct sframe_fde_v2 v2 = { rel, f->size, fre_off,
						    f->nrows, info, f->rep };

			memcpy(fde, &v2, fde_size);
		}
		for (j = 0; j < f->nrows; j++) {
			const struct sfk_row *r = &f->rows[j];
			int words = r->outermost ? 0 : r->fp ? 2 : 1;

			env->buf[pos++] = r->start;
			env->buf[pos++] = (r->fp_based ? 0 : 1) | words << 1;
			if (words)
				env->buf[pos++] = r->cfa;
			if (r->fp)
				env->buf[pos++] = r->fp;
		}
		h->num_fres += f->nrows;
	}
	h->fre_len = pos - env->fres;
	env->len = pos;
}

static void sfk_put(struct kunit *test, struct sfk_env *env)
{
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)env->sec, env->buf,
					   sizeof(env->buf)), 0);
}

static struct sfk_env *sfk_env(struct kunit *test, int version)
{
	struct sfk_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	unsigned long flags = MAP_ANONYMOUS | MAP_PRIVATE;

	KUNIT_ASSERT_NOT_NULL(test, env);
	env->trace.entries = env->entries;
	env->text = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
				  PROT_READ | PROT_WRITE | PROT_EXEC, flags, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(env->text));
	env->sec = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
				 PROT_READ | PROT_WRITE, flags, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(env->sec));
	env->stack = kunit_vm_mmap(test, NULL, 0, 2 * PAGE_SIZE,
				   PROT_READ | PROT_WRITE, flags, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(env->stack));
	sfk_build(env, version, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	sfk_put(test, env);
	return env;
}

static int sfk_init(struct sfk_env *env, struct unwind_sframe_sec *sec)
{
	const char *why;

	memset(sec, 0, sizeof(*sec));
	return sframe_sec_init(sec, env->sec, env->len, &why);
}

/* Expect the row at text + @off: CFA from SP/FP + @cfa, FP saved or not. */
static void sfk_expect_row(struct kunit *test, struct sfk_env *env,
			   struct unwind_sframe_sec *sec, unsigned long off,
			   bool fp_based, int cfa, int fp)
{
	struct unwind_sframe_row row;

	KUNIT_ASSERT_EQ_MSG(test, sframe_find_row(sec, env->text + off, &row),
			    0, "at %#lx", off);
	KUNIT_EXPECT_EQ(test, row.cfa.rule,
			fp_based ? UNWIND_USER_RULE_FP : UNWIND_USER_RULE_SP);
	KUNIT_EXPECT_EQ(test, row.cfa.off, cfa);
	KUNIT_EXPECT_FALSE(test, row.cfa.deref);
	KUNIT_EXPECT_EQ(test, row.ra.rule, UNWIND_USER_RULE_CFA);
	KUNIT_EXPECT_EQ(test, row.ra.off, -8);
	KUNIT_EXPECT_TRUE(test, row.ra.deref);
	KUNIT_EXPECT_EQ(test, row.fp.rule, fp ? UNWIND_USER_RULE_CFA : UNWIND_USER_RULE_SAME);
	if (fp)
		KUNIT_EXPECT_EQ(test, row.fp.off, fp);
}

static void sfk_good(struct kunit *test, int version)
{
	struct sfk_env *env = sfk_env(test, version);
	struct unwind_sframe_sec sec;
	struct unwind_sframe_row row;

	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	KUNIT_EXPECT_EQ(test, sec.version, version);
	KUNIT_EXPECT_EQ(test, sec.num_fdes, 2);
	sfk_expect_row(test, env, &sec, 0x100, false, 8, 0);
	sfk_expect_row(test, env, &sec, 0x101, false, 16, -16);
	sfk_expect_row(test, env, &sec, 0x103, false, 16, -16);
	sfk_expect_row(test, env, &sec, 0x104, true, 16, -16);
	sfk_expect_row(test, env, &sec, 0x11d, true, 16, -16);
	sfk_expect_row(test, env, &sec, 0x11f, false, 8, 0);
	/* The PC-mask function repeats its rows every 16 bytes. */
	sfk_expect_row(test, env, &sec, 0x205, false, 8, 0);
	sfk_expect_row(test, env, &sec, 0x206, false, 24, 0);
	sfk_expect_row(test, env, &sec, 0x215, false, 8, 0);
	sfk_expect_row(test, env, &sec, 0x23f, false, 24, 0);
	/* Before, between and after the functions: no row. */
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text, &row), -ENOENT);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x120, &row),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x240, &row),
			-ENOENT);
}

static void sframe_good_v1(struct kunit *test)
{
	sfk_good(test, 1);
}

static void sframe_good_v2(struct kunit *test)
{
	sfk_good(test, 2);
}

static void sframe_good_v3(struct kunit *test)
{
	sfk_good(test, 3);
}

static void sfk_expect_bad(struct kunit *test, struct sfk_env *env,
			   int version, const char *what)
{
	struct unwind_sframe_sec sec;

	sfk_put(test, env);
	KUNIT_EXPECT_EQ_MSG(test, sfk_init(env, &sec), -EINVAL, "v%d: %s",
			    version, what);
}

/* Rebuild the section, run @stmt on its bytes, expect the check to fail. */
#define SFK_BAD_INIT(test, env, version, stmt) do {			\
		struct sfk_env *__env = (env);				\
		int __version = (version);				\
		struct sframe_header *h = (void *)__env->buf;		\
									\
		sfk_build(__env, __version, sfk_funcs,			\
			  ARRAY_SIZE(sfk_funcs));			\
		(void)h;						\
		stmt;							\
		sfk_expect_bad(test, __env, __version, #stmt);		\
	} while (0)

static void sfk_hostile(struct kunit *test, int version)
{
	struct sfk_env *env = sfk_env(test, version);
	size_t fsz = sfk_fde_size(version);
	struct unwind_sframe_sec sec;

	SFK_BAD_INIT(test, env, version, env->len = 27);
	SFK_BAD_INIT(test, env, version, h->magic = 0xe2de);
	SFK_BAD_INIT(test, env, version, h->version = 4);
	SFK_BAD_INIT(test, env, version, h->flags &= ~SFRAME_F_FDE_SORTED);
	SFK_BAD_INIT(test, env, version, h->flags |= 0x80);
	SFK_BAD_INIT(test, env, version, h->abi_arch = 2);
	SFK_BAD_INIT(test, env, version, h->cfa_fixed_ra_offset = -16);
	SFK_BAD_INIT(test, env, version, h->num_fdes = 0x10000000);
	SFK_BAD_INIT(test, env, version, h->fre_len = 0x10000);
	SFK_BAD_INIT(test, env, version, h->num_fres = 1000);
	SFK_BAD_INIT(test, env, version, h->freoff = 0);
	/* Descriptor fields: FRE offset, FRE type. */
	SFK_BAD_INIT(test, env, version,
		     *(u32 *)(env->buf + env->fdes + (version == 3 ? 12 : 8)) =
			0xfffffff0);
	if (version < 3)
		SFK_BAD_INIT(test, env, version,
			     env->buf[env->fdes + 16] = 0x0f);
	/* The second function starts before the first one ends... */
	SFK_BAD_INIT(test, env, version,
		     sfk_build(env, version, (const struct sfk_func[]) {
			     { 0x100, 0x200, 0, 1, sfk_rows_a },
			     { 0x200, 16, 0, 1, sfk_rows_b } }, 2));
	/* ...or before it. */
	SFK_BAD_INIT(test, env, version,
		     sfk_build(env, version, (const struct sfk_func[]) {
			     { 0x300, 16, 0, 1, sfk_rows_a },
			     { 0x200, 16, 0, 1, sfk_rows_b } }, 2));
	/* A PC-mask function with no block size (versions 2 and 3). */
	if (version > 1)
		SFK_BAD_INIT(test, env, version,
			     sfk_build(env, version, sfk_funcs, 1);
			     env->buf[version == 2 ? env->fdes + 16 :
				      env->fres + 2] |= 0x10);

	/* Built again as it should be, it is good. */
	sfk_build(env, version, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	KUNIT_EXPECT_EQ(test, fsz, sec.fde_size);
}

static void sframe_hostile_v1(struct kunit *test)
{
	sfk_hostile(test, 1);
}

static void sframe_hostile_v2(struct kunit *test)
{
	sfk_hostile(test, 2);
}

static void sframe_hostile_v3(struct kunit *test)
{
	sfk_hostile(test, 3);
}

/* Rows that pass the section check but not the lookup. */
static void sframe_bad_rows(struct kunit *test)
{
	struct sfk_env *env = sfk_env(test, 2);
	size_t row1 = env->fres + 3;	/* second row of the first function */
	struct unwind_sframe_sec sec;
	struct unwind_sframe_row row;

	/* Word size 3 does not exist. */
	env->buf[row1 + 1] |= 0x60;
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x101, &row),
			-EINVAL);
	/* Row starts must rise. */
	sfk_build(env, 2, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	env->buf[row1] = 0;
	sfk_put(test, env);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x105, &row),
			-EINVAL);
	/* Three words on x86-64 (RA is fixed): no such row. */
	sfk_build(env, 2, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	env->buf[row1 + 1] = 0x07;
	sfk_put(test, env);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x101, &row),
			-EINVAL);
	/* A row running past the FRE sub-section. */
	sfk_build(env, 2, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	env->buf[env->len - 2] = 0x1f;	/* last row: 15 words */
	sfk_put(test, env);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x23f, &row),
			-EINVAL);
	/* No words: the outermost frame. */
	sfk_build(env, 2, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	env->buf[env->fres + 1] = 0x01;
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row), 0);
	KUNIT_EXPECT_TRUE(test, row.outermost);
}

/* Version 3: flexible rows, signal frames. */
static void sframe_v3_flex(struct kunit *test)
{
	static const struct sfk_row one = { 0, false, 8, 0 };
	struct sfk_env *env = sfk_env(test, 3);
	struct sframe_header *h = (void *)env->buf;
	struct unwind_sframe_sec sec;
	struct unwind_sframe_row row;
	size_t fda, fre;

	sfk_build(env, 3, (const struct sfk_func[]) {
		{ 0x100, 32, 0, 1, &one } }, 1);
	fda = env->fres;
	fre = fda + sizeof(struct sframe_fda_v3);
	/* CFA = *(rbp - 8) (DRAP); RA at CFA - 8; FP at CFA - 16. */
	env->buf[fda + 3] = SFRAME_FDE_TYPE_FLEX;
	env->buf[fre + 1] = 0x01 | 6 << 1;	/* six 1-byte words */
	env->buf[fre + 2] = SFRAME_AMD64_RBP << 3 | 3;
	env->buf[fre + 3] = -8;
	env->buf[fre + 4] = 2;			/* CFA based, dereferenced */
	env->buf[fre + 5] = -8;
	env->buf[fre + 6] = 2;
	env->buf[fre + 7] = -16;
	h->fre_len = fre + 8 - env->fres;
	env->len = fre + 8;
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	KUNIT_ASSERT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row), 0);
	KUNIT_EXPECT_EQ(test, row.cfa.rule, UNWIND_USER_RULE_FP);
	KUNIT_EXPECT_TRUE(test, row.cfa.deref);
	KUNIT_EXPECT_EQ(test, row.cfa.off, -8);
	KUNIT_EXPECT_EQ(test, row.ra.rule, UNWIND_USER_RULE_CFA);
	KUNIT_EXPECT_EQ(test, row.fp.off, -16);

	/* RA padding, then FP: five words. */
	env->buf[fre + 1] = 0x01 | 5 << 1;
	env->buf[fre + 4] = 0;
	env->buf[fre + 5] = 2;
	env->buf[fre + 6] = -16;
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row), 0);
	KUNIT_EXPECT_EQ(test, row.ra.off, -8);
	KUNIT_EXPECT_EQ(test, row.fp.off, -16);

	/* Three words is no valid layout; a CFA from r12 needs a register. */
	env->buf[fre + 1] = 0x01 | 3 << 1;
	sfk_put(test, env);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row),
			-EINVAL);
	env->buf[fre + 1] = 0x01 | 2 << 1;
	env->buf[fre + 2] = 12 << 3 | 1;
	sfk_put(test, env);
	KUNIT_EXPECT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row),
			-EOPNOTSUPP);

	/* A signal frame: no call frame to step through. */
	env->buf[fda + 2] = 0x80;
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, sframe_find_row(&sec, env->text + 0x100, &row), 0);
	KUNIT_EXPECT_TRUE(test, row.signal);
}

/*
 * A crafted stack, walked with the tables added by prctl: frames of the
 * two functions (SP-based CFA), a frame-pointer frame between them, and
 * the outermost one ending with a frame pointer of zero.
 *
 *   A+0x108 (CFA = FP + 16, FP saved at CFA - 16)
 *   -> B+0x20c (looked up at 0x20b: offset 11 in its 16-byte block,
 *      CFA = SP + 24)
 *   -> X (no table: a frame-pointer record at the FP A restored)
 *   -> A+0x120 (looked up at 0x11f: CFA = SP + 8) -> return address 0
 */
static void sframe_walk_mixed(struct kunit *test)
{
	struct sfk_env *env = sfk_env(test, 2);
	unsigned long s = env->stack + PAGE_SIZE, fp_a = s + 0x40;
	unsigned long x_ip = env->text + 0x800, fp_x = s + 0x100;
	u64 words[64] = { };
	struct unwind_user_state state = {
		.pos.ip = env->text + 0x108, .pos.sp = s, .pos.fp = fp_a,
		.pos.ws = 8,
	};
	int i;

	KUNIT_ASSERT_EQ(test, unwind_sframe_prctl(PR_SFRAME_ADD, env->sec,
						  env->len, env->text,
						  env->text + 0x400), 0);
	/* A: CFA = fp_a + 16; RA at CFA - 8 into B; saved FP at CFA - 16. */
	words[(fp_a - s) / 8] = fp_x;			/* caller's FP */
	words[(fp_a + 8 - s) / 8] = env->text + 0x20c;	/* into B */
	/* B: CFA = SP + 24 = fp_a + 16 + 24. */
	words[(fp_a + 16 + 16 - s) / 8] = x_ip;		/* into X */
	/* X: frame record at fp_x. */
	words[(fp_x - s) / 8] = 0;
	words[(fp_x + 8 - s) / 8] = env->text + 0x11f + 1;	/* into A */
	/* A at 0x11f: CFA = SP + 8, SP = fp_x + 16; RA at fp_x + 16. */
	words[(fp_x + 16 - s) / 8] = 0;
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)s, words,
					   sizeof(words)), 0);

	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 4);
	KUNIT_EXPECT_EQ(test, env->entries[0], env->text + 0x108);
	KUNIT_EXPECT_EQ(test, env->entries[1], env->text + 0x20c);
	KUNIT_EXPECT_EQ(test, env->entries[2], x_ip);
	KUNIT_EXPECT_EQ(test, env->entries[3], env->text + 0x120);

	/* A loop through the table (CFA not above SP) ends the walk. */
	state = (struct unwind_user_state){
		.pos.ip = env->text + 0x108, .pos.sp = fp_a + 16,
		.pos.fp = fp_a, .pos.ws = 8,
	};
	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	KUNIT_EXPECT_EQ(test, env->trace.nr, 1);

	for (i = 0; i < 2; i++)
		unwind_sframe_prctl(PR_SFRAME_REMOVE, env->text, 0, 0, 0);
}

/* A third function, C at 0x300, whose only row is outermost. */
static const struct sfk_row sfk_rows_c[] = { { 0, false, 0, 0, true } };

static const struct sfk_func sfk_funcs_abc[] = {
	{ 0x100, 32, 0, ARRAY_SIZE(sfk_rows_a), sfk_rows_a },
	{ 0x200, 64, 16, ARRAY_SIZE(sfk_rows_b), sfk_rows_b },
	{ 0x300, 16, 0, ARRAY_SIZE(sfk_rows_c), sfk_rows_c },
};

/*
 * Walk a crafted recursion of B (CFA = SP + 24, FP untouched): B+0x208
 * -> B+0x20c three times -> @last. The first frames find their rows by
 * lookup, the later ones step by the row the walk holds, in one window.
 * The frame pointer is @fp all along, with a record { 0, @fp_ra } there.
 */
static void sfk_walk_recursion(struct kunit *test, struct sfk_env *env,
			       unsigned long last, unsigned long fp,
			       unsigned long fp_ra)
{
	unsigned long s = env->stack + PAGE_SIZE;
	struct unwind_user_state state = {
		.pos.ip = env->text + 0x208, .pos.sp = s, .pos.fp = fp,
		.pos.ws = 8,
	};
	u64 zero = 0;
	int i;

	for (i = 0; i < 4; i++) {
		u64 ra = i < 3 ? env->text + 0x20c : last;

		KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(s + 24 * i + 16),
						   &ra, sizeof(ra)), 0);
	}
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)fp, &zero,
					   sizeof(zero)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(fp + 8), &fp_ra,
					   sizeof(fp_ra)), 0);
	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
}

/*
 * Steps by the row a walk holds, and how walks end: at an outermost row,
 * at a frame-pointer record below the stack pointer SFrame steps reached,
 * and at a loop met by a held row.
 */
static void sframe_walk_ends(struct kunit *test)
{
	struct sfk_env *env = sfk_env(test, 2);
	unsigned long s = env->stack + PAGE_SIZE, f = s + 0x40;
	unsigned long x_ip = env->text + 0x800, x2_ip = env->text + 0x810;
	u64 loop[2] = { f, env->text + 0x108 };
	struct unwind_user_state state = {
		.pos.ip = env->text + 0x107, .pos.sp = s, .pos.fp = f,
		.pos.ws = 8,
	};
	int i;

	sfk_build(env, 2, sfk_funcs_abc, ARRAY_SIZE(sfk_funcs_abc));
	sfk_put(test, env);
	KUNIT_ASSERT_EQ(test, unwind_sframe_prctl(PR_SFRAME_ADD, env->sec,
						  env->len, env->text,
						  env->text + 0x400), 0);

	/* Into C: its row ends the stack, though a frame record follows. */
	sfk_walk_recursion(test, env, env->text + 0x304, s + 0x100, x_ip);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 5);
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ(test, env->entries[i], env->text + 0x20c);
	KUNIT_EXPECT_EQ(test, env->entries[4], env->text + 0x304);

	/* Into X (no table): its frame record lies above the SP, taken. */
	sfk_walk_recursion(test, env, x_ip, s + 0x100, x2_ip);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 6);
	KUNIT_EXPECT_EQ(test, env->entries[4], x_ip);
	KUNIT_EXPECT_EQ(test, env->entries[5], x2_ip);

	/* The same record below the SP the SFrame steps reached: not taken. */
	sfk_walk_recursion(test, env, x_ip, s - 0x20, x2_ip);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 5);
	KUNIT_EXPECT_EQ(test, env->entries[4], x_ip);

	/*
	 * A at 0x107 (CFA = FP + 16, FP saved at CFA - 16) saving its own FP:
	 * the second frame has the held row and a CFA that does not rise.
	 */
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)f, loop,
					   sizeof(loop)), 0);
	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 2);
	KUNIT_EXPECT_EQ(test, env->entries[1], env->text + 0x108);

	unwind_sframe_prctl(PR_SFRAME_REMOVE, env->text, 0, 0, 0);
}

/*
 * The rows a task keeps (sframe/copies.c): found again for their pc only,
 * dropped when the registry erases an entry (a new generation), and never
 * kept for a table added by prctl, which its code generator may rewrite.
 */
static void sframe_row_copies(struct kunit *test)
{
	struct sfk_env *env = sfk_env(test, 2);
	unsigned long pc = env->text + 0x105;
	const struct unwind_user_frame frame = { .simple = true, .span = 8 };
	const struct sframe_row_copy *copy;
	struct unwind_sframe_sec sec, none;
	struct unwind_sframe_row row;

	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	KUNIT_ASSERT_EQ(test, sframe_find_row(&sec, pc, &row), 0);
	KUNIT_EXPECT_NULL(test, sframe_row_find(pc));
	/* A lookup (a miss here) sets up the task's copies. */
	KUNIT_EXPECT_EQ(test, sframe_lookup(pc, &none, false), -ENOENT);

	sframe_row_keep(&sec, pc, &row, &frame);
	copy = sframe_row_find(pc);
	KUNIT_ASSERT_NOT_NULL(test, copy);
	KUNIT_EXPECT_EQ(test, memcmp(&copy->row, &row, sizeof(row)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&copy->frame, &frame, sizeof(frame)), 0);
	KUNIT_EXPECT_NULL(test, sframe_row_find(pc + 1));
	KUNIT_EXPECT_NULL(test, sframe_row_find(0));

	/* Adding and removing a table elsewhere: a new generation. */
	KUNIT_ASSERT_EQ(test, unwind_sframe_prctl(PR_SFRAME_ADD, env->sec,
						  env->len, env->text + 0x800,
						  env->text + 0xc00), 0);
	KUNIT_ASSERT_EQ(test, unwind_sframe_prctl(PR_SFRAME_REMOVE,
						  env->text + 0x800, 0, 0, 0), 0);
	KUNIT_EXPECT_NULL(test, sframe_row_find(pc));

	/* Kept again under the new generation, but not a prctl table's. */
	KUNIT_EXPECT_EQ(test, sframe_lookup(pc, &none, false), -ENOENT);
	sec.registered = true;
	sframe_row_keep(&sec, pc, &row, &frame);
	KUNIT_EXPECT_NULL(test, sframe_row_find(pc));
	sec.registered = false;
	sframe_row_keep(&sec, pc, &row, &frame);
	KUNIT_EXPECT_NOT_NULL(test, sframe_row_find(pc));
}

/* Where the section lies in sfk_elf_file()'s page. */
#define SFK_ELF_SEC	0x800

/*
 * A one-page ELF object in a shmem file: a PT_LOAD segment of the page,
 * executable, holding a version 1 section at SFK_ELF_SEC that describes
 * sfk_funcs from the page's start. What the walker's discovery reads.
 */
static struct file *sfk_elf_file(struct kunit *test)
{
	struct sfk_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	struct {
		struct elf64_hdr	eh;
		struct elf64_phdr	ph[2];
	} hdr = {};
	struct file *file;
	loff_t pos = 0;
	u8 *page;

	KUNIT_ASSERT_NOT_NULL(test, env);
	page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	/* Version 1 starts are relative to the section: any base will do. */
	env->sec = SFK_ELF_SEC;
	sfk_build(env, 1, sfk_funcs, ARRAY_SIZE(sfk_funcs));
	memcpy(hdr.eh.e_ident, ELFMAG, SELFMAG);
	hdr.eh.e_ident[EI_CLASS] = ELFCLASS64;
	hdr.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	hdr.eh.e_ident[EI_VERSION] = EV_CURRENT;
	hdr.eh.e_type = ET_DYN;
	hdr.eh.e_machine = EM_X86_64;
	hdr.eh.e_version = EV_CURRENT;
	hdr.eh.e_phoff = sizeof(hdr.eh);
	hdr.eh.e_ehsize = sizeof(hdr.eh);
	hdr.eh.e_phentsize = sizeof(hdr.ph[0]);
	hdr.eh.e_phnum = ARRAY_SIZE(hdr.ph);
	hdr.ph[0].p_type = PT_LOAD;
	hdr.ph[0].p_flags = PF_R | PF_X;
	hdr.ph[0].p_filesz = PAGE_SIZE;
	hdr.ph[0].p_memsz = PAGE_SIZE;
	hdr.ph[0].p_align = PAGE_SIZE;
	hdr.ph[1].p_type = PT_GNU_SFRAME;
	hdr.ph[1].p_flags = PF_R;
	hdr.ph[1].p_offset = SFK_ELF_SEC;
	hdr.ph[1].p_vaddr = SFK_ELF_SEC;
	hdr.ph[1].p_filesz = env->len;
	hdr.ph[1].p_memsz = env->len;
	memcpy(page, &hdr, sizeof(hdr));
	memcpy(page + SFK_ELF_SEC, env->buf, env->len);

	file = shmem_kernel_file_setup("sframe_kunit", PAGE_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, kernel_write(file, page, PAGE_SIZE, &pos),
			(ssize_t)PAGE_SIZE);
	return file;
}

/*
 * A discovery whose reads give up because the task has SIGKILL pending
 * records nothing: the next lookup reads the object and finds its table.
 * Recorded as "no table", the mm (which other tasks may share) would
 * have walked the object without its table until it was unmapped.
 */
static void sframe_discover_killed(struct kunit *test)
{
	struct file *file = sfk_elf_file(test);
	struct unwind_sframe_sec sec;
	unsigned long start, pc;
	int killed, later;

	start = kunit_vm_mmap(test, file, 0, PAGE_SIZE, PROT_READ | PROT_EXEC,
			      MAP_PRIVATE, 0);
	fput(file);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(start));
	pc = start + sfk_funcs[0].off + 5;

	/*
	 * SIGKILL pending, as for a task being killed; the test runs in a
	 * kthread, which takes signals only once allowed, and is not killed
	 * by them. Taken back right after the lookup.
	 */
	allow_signal(SIGKILL);
	send_sig(SIGKILL, current, 1);
	KUNIT_EXPECT_TRUE(test, fatal_signal_pending(current));
	killed = sframe_lookup(pc, &sec, true);
	flush_signals(current);
	disallow_signal(SIGKILL);

	KUNIT_EXPECT_EQ(test, killed, -ENOENT);
	/* Nothing known about the mapping: no "no table" entry. */
	later = sframe_lookup(pc, &sec, false);
	KUNIT_EXPECT_EQ(test, later, -ENOENT);
	KUNIT_EXPECT_EQ(test, sec.text_end, 0);
	/* Read again, and found. */
	KUNIT_ASSERT_EQ(test, sframe_lookup(pc, &sec, true), 0);
	KUNIT_EXPECT_EQ(test, sec.sframe, start + SFK_ELF_SEC);
	KUNIT_EXPECT_EQ(test, sec.text_start, start);
}

/*
 * A lookup takes each row it reads from its budget, the row that ends the
 * scan included, and fails with -E2BIG when the budget runs out first.
 */
static void sframe_row_budget(struct kunit *test)
{
	struct sfk_env *env = sfk_env(test, 2);
	struct unwind_sframe_sec sec;
	struct unwind_sframe_row row;
	u32 rows;

	KUNIT_ASSERT_EQ(test, sfk_init(env, &sec), 0);
	/* Past the last of the first function's four rows: all are read. */
	rows = 3;
	KUNIT_EXPECT_EQ(test, sframe_find_row_budget(&sec, env->text + 0x11f,
						     &row, &rows), -E2BIG);
	KUNIT_EXPECT_EQ(test, rows, 0);
	rows = 4;
	KUNIT_EXPECT_EQ(test, sframe_find_row_budget(&sec, env->text + 0x11f,
						     &row, &rows), 0);
	KUNIT_EXPECT_EQ(test, rows, 0);
	/* At its start: the first row, and the second that ends the scan. */
	rows = 10;
	KUNIT_EXPECT_EQ(test, sframe_find_row_budget(&sec, env->text + 0x100,
						     &row, &rows), 0);
	KUNIT_EXPECT_EQ(test, rows, 8);
}

static struct kunit_case sframe_cases[] = {
	KUNIT_CASE(sframe_good_v1),
	KUNIT_CASE(sframe_good_v2),
	KUNIT_CASE(sframe_good_v3),
	KUNIT_CASE(sframe_hostile_v1),
	KUNIT_CASE(sframe_hostile_v2),
	KUNIT_CASE(sframe_hostile_v3),
	KUNIT_CASE(sframe_bad_rows),
	KUNIT_CASE(sframe_v3_flex),
	KUNIT_CASE(sframe_walk_mixed),
	KUNIT_CASE(sframe_walk_ends),
	KUNIT_CASE(sframe_row_copies),
	KUNIT_CASE(sframe_discover_killed),
	KUNIT_CASE(sframe_row_budget),
	{}
};

static struct kunit_suite sframe_suite = {
	.name = "unwind_user_sframe",
	.test_cases = sframe_cases,
};

kunit_test_suites(&sframe_suite);

MODULE_DESCRIPTION("KUnit tests of the SFrame user stack walker");
MODULE_LICENSE("GPL");
