/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two scans of an SFrame lookup, written once for the two places a
 * table may be: included by sframe/read.c with SFRAME_SCAN(name) naming
 * the copy, SFRAME_BEGIN()/SFRAME_END() opening and closing a window onto
 * the bytes, and SFRAME_GET(x, sec, addr, label) reading one value at a
 * table address (jumping to @label if it cannot). User memory gets a user
 * access window and unsafe_get_user(); a table the kernel holds gets
 * __get_kernel_nofault(). No include guard: each inclusion makes one copy.
 */

/*
 * The last descriptor starting at or below @pc, by binary search, and a
 * copy of its bytes, in one user access window: the search is the
 * lookup's main cost.
 */
static int SFRAME_SCAN(sframe_search)(const struct unwind_sframe_sec *sec,
				      unsigned long pc, u32 *found,
				      u8 raw[SFRAME_FDE_MAX])
{
	u32 lo = 0, hi = sec->num_fdes;
	int ret = -ENOENT;

	if (!hi)
		return -ENOENT;
	if (!SFRAME_BEGIN(sec, sec->fdes, (unsigned long)hi * sec->fde_size))
		return -EFAULT;
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		unsigned long entry = sec->fdes +
				      (unsigned long)mid * sec->fde_size;
		unsigned long start;
		s64 off;

		if (sec->version == 3) {
			SFRAME_GET(off, sec, entry, fault);
		} else {
			s32 off32;

			SFRAME_GET(off32, sec, entry, fault);
			off = off32;
		}
		start = (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL) ?
			entry + off : sec->sframe + off;
		if (start <= pc) {
			*found = mid;
			ret = 0;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (!ret) {
		/* Descriptors are 16, 17 or 20 bytes: two words and a tail. */
		unsigned long entry = sec->fdes +
				      (unsigned long)*found * sec->fde_size;
		unsigned int i;
		u64 w[2];
		u8 b;

		SFRAME_GET(w[0], sec, entry, fault);
		SFRAME_GET(w[1], sec, entry + 8, fault);
		memcpy(raw, w, sizeof(w));
		for (i = sizeof(w); i < sec->fde_size; i++) {
			SFRAME_GET(b, sec, entry + i, fault);
			raw[i] = b;
		}
	}
	SFRAME_END(sec);
	return ret;
fault:
	SFRAME_END(sec);
	return -EFAULT;
}

/*
 * Scan a function's rows for the last one starting at or below @pc_off,
 * and read its info byte and (up to SFRAME_FRE_MAX_WORDS) data words,
 * unsigned, in the same user access window. Rows are variable-sized, so
 * this is linear; their starts must rise. Each row read costs one of
 * *@rows; -E2BIG when none is left before the row is found.
 */
static int SFRAME_SCAN(sframe_find_fre)(const struct unwind_sframe_sec *sec,
					const struct sframe_fde *fde,
					unsigned long pc_off, u8 *fre_info,
					u32 words[SFRAME_FRE_MAX_WORDS],
					u32 *rows)
{
	unsigned int asize = 1U << SFRAME_INFO_FRE_TYPE(fde->info);
	unsigned long addr = fde->fres, end = sec->fres_end, fre = 0;
	u32 i, start, prev = 0;
	int ret = -ENOENT;
	u8 info;

	/* A walk that may not fault must never reach a reschedule. */
	BUILD_BUG_ON(SFRAME_WALK_ROWS_NOFAULT > SFRAME_SCAN_CHUNK);
	if (!fde->num_fres)
		return -ENOENT;
	if (!SFRAME_BEGIN(sec, addr, end - addr))
		return -EFAULT;
	for (i = 0; i < fde->num_fres; i++) {
		unsigned long len;

		if (!*rows)
			goto budget;
		(*rows)--;
		if (i && !(i % SFRAME_SCAN_CHUNK)) {
			SFRAME_END(sec);
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
			if (!SFRAME_BEGIN(sec, addr, end - addr))
				return -EFAULT;
		}
		if (end - addr < asize + 1)
			goto bad;
		if (asize == 1) {
			u8 s8;

			SFRAME_GET(s8, sec, addr, fault);
			start = s8;
		} else if (asize == 2) {
			u16 s16;

			SFRAME_GET(s16, sec, addr, fault);
			start = s16;
		} else {
			SFRAME_GET(start, sec, addr, fault);
		}
		SFRAME_GET(info, sec, addr + asize, fault);
		if (SFRAME_FRE_WORD_SIZE(info) == 3)
			goto bad;
		len = asize + 1 + (SFRAME_FRE_NWORDS(info) <<
				   SFRAME_FRE_WORD_SIZE(info));
		if (end - addr < len || (i && start <= prev))
			goto bad;
		if (start > pc_off)
			break;
		fre = addr + asize + 1;
		*fre_info = info;
		prev = start;
		ret = 0;
		addr += len;
	}
	if (!ret) {
		/* The scan checked that the row's words lie before the end. */
		unsigned int size = SFRAME_FRE_WORD_SIZE(*fre_info);
		unsigned int n = min(SFRAME_FRE_NWORDS(*fre_info),
				     SFRAME_FRE_MAX_WORDS);

		for (i = 0; i < n; i++) {
			unsigned long w = fre + (i << size);

			if (size == 0) {
				u8 v8;

				SFRAME_GET(v8, sec, w, fault);
				words[i] = v8;
			} else if (size == 1) {
				u16 v16;

				SFRAME_GET(v16, sec, w, fault);
				words[i] = v16;
			} else {
				SFRAME_GET(words[i], sec, w, fault);
			}
		}
	}
	SFRAME_END(sec);
	return ret;
budget:
	SFRAME_END(sec);
	return -E2BIG;
bad:
	SFRAME_END(sec);
	return -EINVAL;
fault:
	SFRAME_END(sec);
	return -EFAULT;
}

#undef SFRAME_SCAN
#undef SFRAME_BEGIN
#undef SFRAME_END
#undef SFRAME_GET
