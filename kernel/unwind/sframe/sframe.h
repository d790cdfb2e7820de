/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame sections as the user stack walker reads them: the on-disk layout
 * (versions 1, 2 and 3 of binutils' libsframe/doc/sframe-spec.texi), and
 * what the reader (sframe/read.c), the per-mm registry (sframe/registry.c) and
 * the walker's step (sframe/lookup.c) share.
 *
 * Every byte of a section lives in user memory and may change under the
 * reader: each field is checked where it is used, and a check that fails
 * ends the lookup with an error, never with a wrong row. Tables given for
 * files (sframe/file.c) live in kernel memory instead, and are read with
 * the same checks.
 */
#ifndef _KERNEL_UNWIND_SFRAME_H
#define _KERNEL_UNWIND_SFRAME_H

#include <linux/hash.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/unwind_user.h>
#include "../feature.h"
#include "../walk.h"

#define SFRAME_MAGIC			0xdee2

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2	/* versions 1 and 2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4	/* version 2 (errata) and 3 */

#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3

/* Section header, the same in all three versions; aux header follows. */
struct sframe_header {
	u16	magic;
	u8	version;
	u8	flags;
	u8	abi_arch;
	s8	cfa_fixed_fp_offset;
	s8	cfa_fixed_ra_offset;
	u8	auxhdr_len;
	u32	num_fdes;
	u32	num_fres;
	u32	fre_len;
	u32	fdeoff;		/* from the end of the (aux) header */
	u32	freoff;		/* from the end of the (aux) header */
} __packed;

/* Function descriptor, version 1: 17 bytes, so often misaligned. */
struct sframe_fde_v1 {
	s32	func_start;	/* from the section's first byte */
	u32	func_size;
	u32	fre_off;	/* from the FRE sub-section */
	u32	num_fres;
	u8	info;
} __packed;

/* Version 2 adds the size of a repeated block (PLT entries) and padding. */
struct sframe_fde_v2 {
	s32	func_start;	/* from the section, or from itself if PCREL */
	u32	func_size;
	u32	fre_off;
	u32	num_fres;
	u8	info;
	u8	rep_size;
	u16	padding;
} __packed;

/*
 * Version 3 splits the descriptor: a fixed index entry that is binary
 * searched, and attributes at the head of the function's FREs.
 */
struct sframe_fde_v3 {
	s64	func_start;	/* from this entry (PCREL), else the section */
	u32	func_size;
	u32	fre_off;	/* of the attributes, from the FRE sub-section */
} __packed;

struct sframe_fda_v3 {
	u16	num_fres;
	u8	info;
	u8	info2;
	u8	rep_size;
} __packed;

/* Descriptor info byte: FRE start address width, PC type, signal (v3). */
#define SFRAME_INFO_FRE_TYPE(i)		((i) & 0xf)
#define SFRAME_INFO_PCMASK(i)		(((i) >> 4) & 1)
#define SFRAME_INFO_SIGNAL(i)		(((i) >> 7) & 1)
#define SFRAME_INFO2_FDE_TYPE(i)	((i) & 0x1f)

#define SFRAME_FRE_TYPE_ADDR4		2
#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* Version 1 PC-mask descriptors (x86-64 PLT) carry no size: pltN is 16. */
#define SFRAME_V1_PLT_SIZE		16

/* FRE info byte: CFA base, number and size of the data words. */
#define SFRAME_FRE_CFA_SP(i)		((i) & 1)
#define SFRAME_FRE_NWORDS(i)		(((i) >> 1) & 0xf)
#define SFRAME_FRE_WORD_SIZE(i)		(((i) >> 5) & 3)
#define SFRAME_FRE_MANGLED_RA(i)	(((i) >> 7) & 1)

/* Flexible (v3) control word: register or CFA based, dereferenced or not. */
#define SFRAME_FLEX_REG_P(c)		((c) & 1)
#define SFRAME_FLEX_DEREF_P(c)		(((c) >> 1) & 1)
#define SFRAME_FLEX_REGNUM(c)		((c) >> 3)

/* DWARF register numbers of x86-64's frame and stack pointers. */
#define SFRAME_AMD64_RBP		6
#define SFRAME_AMD64_RSP		7

/*
 * Sections larger than this are not read: the biggest shared objects of a
 * distribution carry a few MiB of SFrame.
 */
#define SFRAME_MAX_SIZE			(256UL << 20)

int sframe_sec_init(struct unwind_sframe_sec *sec, unsigned long sframe,
		    unsigned long len, const char **why);
int sframe_sec_init_kernel(struct unwind_sframe_sec *sec, const void *kbuf,
			   unsigned long sframe, unsigned long len,
			   const char **why);

/* Does the registry entry @sec hold a table for its text? */
static inline bool sframe_sec_usable(const struct unwind_sframe_sec *sec)
{
	return sec->sframe_end;
}

/* Record that @sec's text has no usable table. */
static inline void sframe_sec_unusable(struct unwind_sframe_sec *sec)
{
	sec->sframe = 0;
	sec->sframe_end = 0;
	sec->kbuf = NULL;
}

int sframe_find_row_budget(const struct unwind_sframe_sec *sec,
			   unsigned long pc, struct unwind_sframe_row *row,
			   u32 *rows);

/*
 * Rows of SFrame tables one walk may read: SFRAME_WALK_ROWS_BASE, and
 * SFRAME_WALK_ROWS_PER_FRAME more for each entry it has stored. A walk
 * through honest tables reads a few rows per frame (and none for the
 * rows a task keeps), so this only ends walks through functions with
 * thousands of rows, which a hostile table uses to make every lookup
 * scan them all. Such a walk ends with the frames found so far.
 */
#define SFRAME_WALK_ROWS_BASE		1024
#define SFRAME_WALK_ROWS_PER_FRAME	64

/*
 * A walk that may not fault runs in an interrupt: it reads at most this
 * many rows, and is blocked after (the walk at the return to user space
 * reads the rest). No more than one scan chunk (sframe/read.c), as the
 * scan may reschedule between chunks.
 */
#define SFRAME_WALK_ROWS_NOFAULT	1024

int sframe_lookup(unsigned long pc, struct unwind_sframe_sec *sec,
		  bool discover);

/* Does the text of the section the walk holds contain @pc? */
static __always_inline bool
sframe_in_sec(const struct unwind_user_state *state, unsigned long pc)
{
	const struct unwind_sframe_sec *sec = &state->sframe.sec;

	return pc - sec->text_start < sec->text_end - sec->text_start;
}

/*
 * Is the held section's text some the registry found itself (an
 * executable file mapping, see unwind_sframe_known_text())? Then the
 * return addresses the walk stores in it need no check after the walk,
 * which in a deep walk is most of that check's cost.
 */
static __always_inline bool
sframe_sec_known(const struct unwind_user_state *state)
{
	const struct unwind_sframe_sec *sec = &state->sframe.sec;

	return !sec->registered && sec->text_end > sec->text_start;
}

int sframe_walk_lookup(struct unwind_user_state *state, unsigned long pc,
		       bool discover);

/* What the walk asks of the registry (sframe/registry.c, sframe/copies.c). */
bool unwind_sframe_has_tables(void);
bool unwind_sframe_known_text(unsigned long addr, unsigned long *start,
			      unsigned long *end);

/* A task's copies of its lookups (sframe/copies.c). */
#define SFRAME_CACHE_SECS	2
#define SFRAME_ROW_BITS		6

/* The row of one frame's IP (a return address minus one), and its description. */
struct sframe_row_copy {
	unsigned long		pc;
	struct unwind_sframe_row row;
	struct unwind_user_frame frame;
};

/**
 * struct unwind_sframe_cache - a task's copies of SFrame lookups
 * @gen:	mm->sframe_gen when the copies were made
 * @next:	the slot of @secs the next copy replaces
 * @secs:	registry entries; text_end 0 for an empty slot
 * @rows:	rows by pc, hashed; pc 0 for an empty slot. Allocated by the
 *		first row kept, so that tasks walking only code without
 *		tables do not pay for them.
 *
 * Used by the task itself only (its walks, in task context): no lock.
 */
struct unwind_sframe_cache {
	u64			gen;
	unsigned int		next;
	struct unwind_sframe_sec secs[SFRAME_CACHE_SECS];
	struct sframe_row_copy	*rows;
};

bool sframe_cache_copy(struct mm_struct *mm, unsigned long pc,
		       struct unwind_sframe_sec *sec);
void sframe_cache_add(const struct unwind_sframe_sec *sec);
void sframe_row_keep(const struct unwind_sframe_sec *sec, unsigned long pc,
		     const struct unwind_sframe_row *row,
		     const struct unwind_user_frame *frame);

#ifdef CONFIG_UNWIND_USER_SFRAME
/* The copies' feature: its part of a task's block is a pointer to them. */
extern struct unwind_feature sframe_cache_feature;

/* The current task's copies, NULL if it has none yet (feature.h). */
static inline struct unwind_sframe_cache *sframe_cache_current(void)
{
	struct unwind_sframe_cache **slot =
		unwind_feature_task(&sframe_cache_feature, false);

	return slot ? READ_ONCE(*slot) : NULL;
}

/*
 * The current task's copies if they are still valid; no allocation and no
 * emptying here, the lookups that fill them do that.
 */
static inline struct unwind_sframe_cache *sframe_cache_valid(void)
{
	struct unwind_sframe_cache *cache = sframe_cache_current();
	struct mm_struct *mm = current->mm;

	if (!cache || !mm)
		return NULL;
	/* Pairs with sframe_new_gen(): an erase makes the copies stale. */
	if (cache->gen != smp_load_acquire(&mm->sframe_gen))
		return NULL;
	return cache;
}

/**
 * sframe_row_find - the current task's kept row for @pc
 * @pc:		a frame's IP (a return address minus one)
 *
 * Inline: the walk loop asks at every frame that has a table.
 *
 * Context: Task context.
 * Return: the copy, or NULL if none is kept or the copies are stale.
 */
static inline const struct sframe_row_copy *sframe_row_find(unsigned long pc)
{
	const struct unwind_sframe_cache *cache = sframe_cache_valid();
	const struct sframe_row_copy *copy;

	if (!cache || !cache->rows || !pc)
		return NULL;
	copy = &cache->rows[hash_long(pc, SFRAME_ROW_BITS)];
	return copy->pc == pc ? copy : NULL;
}

/* The copy in @cache of the registry entry whose text holds @pc, or NULL. */
static inline const struct unwind_sframe_sec *
sframe_cache_find(const struct unwind_sframe_cache *cache, unsigned long pc)
{
	unsigned int i;

	for (i = 0; i < SFRAME_CACHE_SECS; i++) {
		const struct unwind_sframe_sec *sec = &cache->secs[i];

		if (pc - sec->text_start < sec->text_end - sec->text_start)
			return sec;
	}
	return NULL;
}

/**
 * sframe_sec_find - the current task's copy of the registry entry for @pc
 * @pc:		a frame's IP
 *
 * Inline: the walk loop asks whenever a frame leaves the text of the
 * section it holds, which a stack through two objects does at least
 * twice per walk; sframe_lookup() is the slow path behind it.
 *
 * Context: Task context.
 * Return: the copy, or NULL if none is kept or the copies are stale.
 */
static inline const struct unwind_sframe_sec *sframe_sec_find(unsigned long pc)
{
	const struct unwind_sframe_cache *cache = sframe_cache_valid();

	return cache ? sframe_cache_find(cache, pc) : NULL;
}
#else
static inline const struct sframe_row_copy *sframe_row_find(unsigned long pc)
{
	return NULL;
}

static inline const struct unwind_sframe_sec *sframe_sec_find(unsigned long pc)
{
	return NULL;
}
#endif

#endif /* _KERNEL_UNWIND_SFRAME_H */
