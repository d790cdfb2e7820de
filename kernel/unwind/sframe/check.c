// SPDX-License-Identifier: GPL-2.0
/*
 * The checks of an SFrame section (versions 1, 2 and 3), made once when
 * a mapping's table is added (sframe_sec_init()): header, version, ABI,
 * flags, the sub-sections' bounds, and every function descriptor (sorted,
 * disjoint, within the FRE sub-section). The lookups (read.c) check again
 * what they read, since user memory may change after this.
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

/*
 * Check every descriptor once: sorted by start, disjoint, and with rows
 * inside the FRE sub-section. Entries are copied a page at a time.
 */
static int sframe_check_fdes(struct unwind_sframe_sec *sec, u32 num_fres,
			     const char **why)
{
	unsigned int per_chunk = PAGE_SIZE / sec->fde_size;
	unsigned long prev_end = 0;
	u64 total_fres = 0;
	u8 *buf;
	u32 i;
	int ret = 0;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < sec->num_fdes && !ret; i++) {
		unsigned int slot = i % per_chunk;
		struct sframe_fde fde;

		if (!slot) {
			unsigned int n = min(per_chunk, sec->num_fdes - i);

			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
			ret = sframe_copy(sec, buf, sec->fdes +
					  (unsigned long)i * sec->fde_size,
					  n * sec->fde_size);
			if (ret)
				break;
		}
		ret = sframe_decode_fde(sec, i, buf + slot * sec->fde_size,
					&fde, why);
		if (ret)
			break;
		if (fde.start < prev_end)
			ret = sframe_bad(why, "functions unsorted or overlapping");
		prev_end = fde.start + fde.size;
		total_fres += fde.num_fres;
	}
	if (!ret && total_fres > num_fres)
		ret = sframe_bad(why, "more FREs than the header counts");
	kfree(buf);
	return ret;
}

/*
 * Check the section at table address @sframe, in user memory or (@sec->kbuf
 * set) in the kernel's copy, and fill in @sec's layout.
 */
static int sframe_sec_check(struct unwind_sframe_sec *sec, unsigned long sframe,
			    unsigned long len, const char **why)
{
	u64 hdr_end, fdes, fdes_end, fres, fres_end;
	struct sframe_header hdr;
	u8 allowed;

	might_fault();
	*why = NULL;
	if (len < sizeof(hdr))
		return sframe_bad(why, "truncated header");
	if (len > SFRAME_MAX_SIZE)
		return sframe_bad(why, "too large");
	if (sframe + len < sframe || sframe + len > TASK_SIZE_MAX)
		return sframe_bad(why, "outside user space");
	sec->sframe = sframe;
	sec->sframe_end = sframe + len;
	if (sframe_copy(sec, &hdr, sframe, sizeof(hdr)))
		return -EFAULT;
	if (hdr.magic != SFRAME_MAGIC)
		return sframe_bad(why, "bad magic");

	switch (hdr.version) {
	case 1:
		sec->fde_size = sizeof(struct sframe_fde_v1);
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
		break;
	case 2:
		sec->fde_size = sizeof(struct sframe_fde_v2);
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER |
			  SFRAME_F_FDE_FUNC_START_PCREL;
		break;
	case 3:
		sec->fde_size = sizeof(struct sframe_fde_v3);
		allowed = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
		break;
	default:
		return sframe_bad(why, "unknown version");
	}
	if (hdr.flags & ~allowed)
		return sframe_bad(why, "unknown flags");
	/* Lookups are binary searches: an unsorted table is of no use. */
	if (!(hdr.flags & SFRAME_F_FDE_SORTED))
		return sframe_bad(why, "functions not sorted");
	if (hdr.abi_arch != SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		return sframe_bad(why, "not an x86-64 table");
	/* The x86-64 ABI: return address right below the CFA, FP in rows. */
	if (hdr.cfa_fixed_ra_offset != -8 || hdr.cfa_fixed_fp_offset)
		return sframe_bad(why, "unexpected fixed offsets");

	hdr_end = sizeof(hdr) + hdr.auxhdr_len;
	fdes = hdr_end + hdr.fdeoff;
	fdes_end = fdes + (u64)hdr.num_fdes * sec->fde_size;
	fres = hdr_end + hdr.freoff;
	fres_end = fres + hdr.fre_len;
	if (fdes_end > len || fres_end > len)
		return sframe_bad(why, "sub-sections past the end");
	if (fdes_end > fres && fres_end > fdes)
		return sframe_bad(why, "sub-sections overlap");
	if (hdr.num_fres > hdr.fre_len)
		return sframe_bad(why, "more FREs than bytes");

	sec->fdes = sframe + fdes;
	sec->fres = sframe + fres;
	sec->fres_end = sframe + fres_end;
	sec->num_fdes = hdr.num_fdes;
	sec->version = hdr.version;
	sec->flags = hdr.flags;
	sec->ra_off = hdr.cfa_fixed_ra_offset;
	return sframe_check_fdes(sec, hdr.num_fres, why);
}

/**
 * sframe_sec_init - check an SFrame section in user memory
 * @sec:	receives the section's checked layout (text range untouched)
 * @sframe:	user address of the section
 * @len:	its size in bytes
 * @why:	on -EINVAL, set to what is wrong with it
 *
 * Context: Task context, page faults allowed.
 * Return: 0, -EINVAL for a section that is not one we can use, -EFAULT if
 * it cannot be read, -ENOMEM or -EINTR.
 */
int sframe_sec_init(struct unwind_sframe_sec *sec, unsigned long sframe,
		    unsigned long len, const char **why)
{
	might_fault();
	sec->kbuf = NULL;
	return sframe_sec_check(sec, sframe, len, why);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_sec_init);

/**
 * sframe_sec_init_kernel - check an SFrame table the kernel holds
 * @sec:	receives the table's checked layout (text range untouched)
 * @kbuf:	the table's bytes; they must not change while @sec is used
 * @sframe:	the user address the table is taken to be at: where its
 *		function starts are counted from (the object's load bias, for
 *		a table whose starts are the object's addresses)
 * @len:	its size in bytes
 * @why:	on -EINVAL, set to what is wrong with it
 *
 * Context: Task context.
 * Return: 0, -EINVAL for a table that is not one we can use, -ENOMEM or
 * -EINTR.
 */
int sframe_sec_init_kernel(struct unwind_sframe_sec *sec, const void *kbuf,
			   unsigned long sframe, unsigned long len,
			   const char **why)
{
	sec->kbuf = kbuf;
	return sframe_sec_check(sec, sframe, len, why);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_sec_init_kernel);
