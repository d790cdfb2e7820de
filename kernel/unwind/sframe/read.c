// SPDX-License-Identifier: GPL-2.0
/*
 * Reading SFrame sections (versions 1, 2 and 3) in user memory.
 *
 * sframe_sec_init() (check.c) checks a section once, when a mapping's
 * table is added; it decodes the function descriptors with this file's
 * helpers (read.h). sframe_find_row_budget() then answers one IP: a
 * binary search of the descriptors and a scan of one function's rows,
 * all in user memory.
 * Both read user memory and may fault: task context, page faults allowed.
 *
 * A valid table can still cost without bound: one function may have
 * millions of rows, and a lookup past its last row scans them all. The
 * scan therefore takes its rows from the caller's budget (the walk's,
 * see SFRAME_WALK_ROWS), gives the CPU up between chunks of rows and
 * stops for a fatal signal.
 *
 * User memory may change after the first check, so a lookup checks again
 * what it reads (bounds, widths, order); -EINVAL means the table is bad,
 * -ENOENT that it has no row for the IP, -EFAULT that it cannot be read.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>
#include "sframe.h"
#include "read.h"

/* Bytes of the largest descriptor (v2) or index entry. */
#define SFRAME_FDE_MAX	sizeof(struct sframe_fde_v2)

/* Where the byte at table address @addr of a table the kernel holds is. */
static inline const void *sframe_kptr(const struct unwind_sframe_sec *sec,
				      unsigned long addr)
{
	return sec->kbuf + (addr - sec->sframe);
}

/*
 * Copy @len bytes at table address @addr, from user memory or from the
 * kernel's copy; the callers have checked that they lie in the section.
 */
int sframe_copy(const struct unwind_sframe_sec *sec, void *dst,
		unsigned long addr, size_t len)
{
	if (sec->kbuf) {
		if (addr < sec->sframe || len > sec->sframe_end - addr)
			return -EFAULT;
		memcpy(dst, sframe_kptr(sec, addr), len);
		return 0;
	}
	return copy_from_user(dst, (void __user *)addr, len) ? -EFAULT : 0;
}

int sframe_bad(const char **why, const char *reason)
{
	if (why)
		*why = reason;
	return -EINVAL;
}

/* The descriptor's function start: relative to itself or to the section. */
static unsigned long sframe_fde_start(const struct unwind_sframe_sec *sec,
				      unsigned long entry, s64 start)
{
	if (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		return entry + start;
	return sec->sframe + start;
}

/* Decode descriptor @i from the bytes of its entry (and attributes, v3). */
int sframe_decode_fde(const struct unwind_sframe_sec *sec, u32 i,
		      const void *raw, struct sframe_fde *fde,
		      const char **why)
{
	unsigned long entry = sec->fdes + (unsigned long)i * sec->fde_size;
	unsigned long fre_off;

	switch (sec->version) {
	case 1: {
		const struct sframe_fde_v1 *v1 = raw;

		fde->start = sframe_fde_start(sec, entry, v1->func_start);
		fde->size = v1->func_size;
		fre_off = v1->fre_off;
		fde->num_fres = v1->num_fres;
		fde->info = v1->info;
		fde->info2 = 0;
		fde->rep_size = SFRAME_INFO_PCMASK(v1->info) ?
				SFRAME_V1_PLT_SIZE : 0;
		break;
	}
	case 2: {
		const struct sframe_fde_v2 *v2 = raw;

		fde->start = sframe_fde_start(sec, entry, v2->func_start);
		fde->size = v2->func_size;
		fre_off = v2->fre_off;
		fde->num_fres = v2->num_fres;
		fde->info = v2->info;
		fde->info2 = 0;
		fde->rep_size = v2->rep_size;
		break;
	}
	default: {
		const struct sframe_fde_v3 *v3 = raw;
		struct sframe_fda_v3 fda;

		fde->start = sframe_fde_start(sec, entry, v3->func_start);
		fde->size = v3->func_size;
		fre_off = v3->fre_off;
		if (fre_off > sec->fres_end - sec->fres ||
		    sec->fres_end - sec->fres - fre_off < sizeof(fda))
			return sframe_bad(why, "function attributes past the end");
		if (sec->kbuf ? sframe_copy(sec, &fda, sec->fres + fre_off,
					    sizeof(fda)) :
		    unwind_user_copy(&fda, (void __user *)(sec->fres + fre_off),
				     sizeof(fda)))
			return -EFAULT;
		fre_off += sizeof(fda);
		fde->num_fres = fda.num_fres;
		fde->info = fda.info;
		fde->info2 = fda.info2;
		fde->rep_size = fda.rep_size;
		if (SFRAME_INFO2_FDE_TYPE(fda.info2) > SFRAME_FDE_TYPE_FLEX)
			return sframe_bad(why, "unknown function type");
		break;
	}
	}

	if (fre_off > sec->fres_end - sec->fres)
		return sframe_bad(why, "FRE offset past the end");
	fde->fres = sec->fres + fre_off;
	if (fde->num_fres > sec->fres_end - fde->fres)
		return sframe_bad(why, "more FREs than bytes");
	if (SFRAME_INFO_FRE_TYPE(fde->info) > SFRAME_FRE_TYPE_ADDR4)
		return sframe_bad(why, "unknown FRE type");
	if (SFRAME_INFO_PCMASK(fde->info) && !fde->rep_size)
		return sframe_bad(why, "PC-mask function without a block size");
	if (fde->start + fde->size < fde->start)
		return sframe_bad(why, "function wraps around");
	return 0;
}

/* Most data words a row of ours has (v3 flexible: three pairs). */
#define SFRAME_FRE_MAX_WORDS	6

/*
 * Rows scanned in one user access window: between two chunks the scan
 * may reschedule and checks for a fatal signal. Honest functions have
 * a few dozen rows, so nearly every scan is one chunk.
 */
#define SFRAME_SCAN_CHUNK	1024

/*
 * The scans, read from user memory and from the kernel's own copy. User
 * memory is read in a user access window; a copy the kernel holds was
 * checked with its table and does not change, and is read at its offsets
 * with the kernel's own no-fault reads, so that the scans' fault paths
 * stay what they are.
 */
static __always_inline bool sframe_user_begin(const struct unwind_sframe_sec *sec,
					      unsigned long addr,
					      unsigned long len)
{
	return user_access_begin((void __user *)addr, len);
}

static __always_inline void sframe_user_end(const struct unwind_sframe_sec *sec)
{
	user_access_end();
}

/* A table in user memory is read where it is. */
static __always_inline void __user *sframe_uptr(const struct unwind_sframe_sec *sec,
						unsigned long addr)
{
	return (void __user *)addr;
}

static __always_inline bool sframe_kernel_begin(const struct unwind_sframe_sec *sec,
						unsigned long addr,
						unsigned long len)
{
	return true;
}

static __always_inline void sframe_kernel_end(const struct unwind_sframe_sec *sec)
{
}

#define SFRAME_SCAN(name)		name##_user
#define SFRAME_BEGIN(sec, addr, len)	sframe_user_begin(sec, addr, len)
#define SFRAME_END(sec)			sframe_user_end(sec)
#define SFRAME_GET(x, sec, addr, label)	\
	unsafe_get_user(x, (typeof(x) __user *)sframe_uptr(sec, addr), label)
#include "scan.h"

#define SFRAME_SCAN(name)		name##_kernel
#define SFRAME_BEGIN(sec, addr, len)	sframe_kernel_begin(sec, addr, len)
#define SFRAME_END(sec)			sframe_kernel_end(sec)
#define SFRAME_GET(x, sec, addr, label)	\
	__get_kernel_nofault(&(x), sframe_kptr(sec, addr), typeof(x), label)
#include "scan.h"

static int sframe_search(const struct unwind_sframe_sec *sec, unsigned long pc,
			 u32 *found, u8 raw[SFRAME_FDE_MAX])
{
	if (sec->kbuf)
		return sframe_search_kernel(sec, pc, found, raw);
	return sframe_search_user(sec, pc, found, raw);
}

static int sframe_find_fre(const struct unwind_sframe_sec *sec,
			   const struct sframe_fde *fde, unsigned long pc_off,
			   u8 *fre_info, u32 words[SFRAME_FRE_MAX_WORDS],
			   u32 *rows)
{
	if (sec->kbuf)
		return sframe_find_fre_kernel(sec, fde, pc_off, fre_info, words,
					      rows);
	return sframe_find_fre_user(sec, fde, pc_off, fre_info, words, rows);
}

static void sframe_loc_set(struct unwind_user_loc *loc, u8 rule, bool deref,
			   s64 off)
{
	loc->rule = rule;
	loc->deref = deref;
	loc->off = off;
}

/* A flexible rule: register or CFA based, dereferenced or not. */
static int sframe_flex_loc(struct unwind_user_loc *loc, u64 ctrl, s64 off,
			   bool is_cfa)
{
	u8 rule;

	if (SFRAME_FLEX_REG_P(ctrl)) {
		if (SFRAME_FLEX_REGNUM(ctrl) == SFRAME_AMD64_RSP)
			rule = UNWIND_USER_RULE_SP;
		else if (SFRAME_FLEX_REGNUM(ctrl) == SFRAME_AMD64_RBP)
			rule = UNWIND_USER_RULE_FP;
		else
			return -EOPNOTSUPP;	/* no other register is known */
	} else {
		/* Only "the word at CFA + offset" is CFA based. */
		if (is_cfa || !SFRAME_FLEX_DEREF_P(ctrl))
			return -EINVAL;
		rule = UNWIND_USER_RULE_CFA;
	}
	sframe_loc_set(loc, rule, SFRAME_FLEX_DEREF_P(ctrl), off);
	return 0;
}

/* An offset word of 1 << @size bytes, read unsigned, as a signed value. */
static s64 sframe_sext(s64 w, unsigned int size)
{
	return size == 0 ? (s8)w : size == 1 ? (s16)w : (s32)w;
}

/* Version 3 flexible rows: (control, offset) pairs for CFA, RA and FP. */
static int sframe_flex_row(const u32 *w, unsigned int n, unsigned int size,
			   struct unwind_sframe_row *row)
{
	unsigned int i = 2;
	int ret;

	if (n < 2 || n == 3)
		return -EINVAL;
	ret = sframe_flex_loc(&row->cfa, w[0], sframe_sext(w[1], size), true);
	if (ret)
		return ret;
	if (i < n) {
		if (!w[i]) {
			i++;			/* padding: RA at its fixed place */
		} else {
			ret = sframe_flex_loc(&row->ra, w[i],
					      sframe_sext(w[i + 1], size), false);
			if (ret)
				return ret;
			i += 2;
		}
	}
	if (i < n) {
		if (i + 2 != n)
			return -EINVAL;
		ret = sframe_flex_loc(&row->fp, w[i],
				      sframe_sext(w[i + 1], size), false);
		if (ret)
			return ret;
		i += 2;
	}
	return i == n ? 0 : -EINVAL;
}

/**
 * sframe_find_row_budget - the SFrame row of a section for an IP
 * @sec:	a section checked by sframe_sec_init()
 * @pc:		the IP (a return address minus one for callers' frames)
 * @row:	receives the rules for the caller's CFA, RA and FP
 * @rows:	rows the lookup may read; decreased by those it read
 *
 * Context: Task context, page faults allowed; may sleep.
 * Return: 0; -ENOENT if no function of the section has a row for @pc;
 * -EINVAL if the table is bad; -EOPNOTSUPP if the row needs a register
 * the walker does not have; -EFAULT if the table cannot be read; -E2BIG
 * if *@rows ran out first; -EINTR if a fatal signal is pending.
 */
int sframe_find_row_budget(const struct unwind_sframe_sec *sec,
			   unsigned long pc, struct unwind_sframe_row *row,
			   u32 *rows)
{
	u8 raw[SFRAME_FDE_MAX];
	unsigned long pc_off;
	struct sframe_fde fde;
	unsigned int n, size;
	u32 w[SFRAME_FRE_MAX_WORDS];
	u32 index;
	u8 info;
	int ret;

	might_fault();
	ret = sframe_search(sec, pc, &index, raw);
	if (ret)
		return ret;
	ret = sframe_decode_fde(sec, index, raw, &fde, NULL);
	if (ret)
		return ret;
	if (pc - fde.start >= fde.size)
		return -ENOENT;

	memset(row, 0, sizeof(*row));
	sframe_loc_set(&row->ra, UNWIND_USER_RULE_CFA, true, sec->ra_off);
	if (sec->version == 3 && SFRAME_INFO_SIGNAL(fde.info)) {
		row->signal = true;
		return 0;
	}

	pc_off = pc - fde.start;
	if (fde.rep_size)
		pc_off %= fde.rep_size;
	ret = sframe_find_fre(sec, &fde, pc_off, &info, w, rows);
	if (ret)
		return ret;

	n = SFRAME_FRE_NWORDS(info);
	size = SFRAME_FRE_WORD_SIZE(info);
	if (!n) {
		/* No rule for the return address: the outermost frame. */
		row->outermost = true;
		return 0;
	}
	if (n > ARRAY_SIZE(w) || SFRAME_FRE_MANGLED_RA(info))
		return -EINVAL;

	if (SFRAME_INFO2_FDE_TYPE(fde.info2) == SFRAME_FDE_TYPE_FLEX) {
		/* Control words are unsigned; offsets are sign-extended. */
		return sframe_flex_row(w, n, size, row);
	}

	/* Default rows on x86-64: CFA, then the saved FP if any. */
	if (n > 2)
		return -EINVAL;
	sframe_loc_set(&row->cfa, SFRAME_FRE_CFA_SP(info) ? UNWIND_USER_RULE_SP :
		       UNWIND_USER_RULE_FP, false, sframe_sext(w[0], size));
	if (n == 2)
		sframe_loc_set(&row->fp, UNWIND_USER_RULE_CFA, true,
			       sframe_sext(w[1], size));
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_find_row_budget);
