// SPDX-License-Identifier: GPL-2.0
/*
 * Host check of the x86-64 return-path reader (unwind_user_code.c),
 * built from the kernel's own source with stand-in headers: reads the
 * frame at each address given on stdin in an ELF file's code, with the
 * stack pointer there (mod 16: the reading checks the stack's alignment),
 * and prints what it found, for check.py to compare with the file's
 * .eh_frame.
 *
 *   check ELF < "ADDR SP" lines (hexadecimal)
 *   -> "ADDR -" (given up), or "ADDR sp|fp CFA_OFF same|c-N exact|inferred"
 *
 * Each reading gets a walk's whole budget of instructions, 320 as
 * UNWIND_CODE_WALK_INSNS in kernel/unwind/code.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user_code.h>
#include "image.h"

int main(int argc, char **argv)
{
	static char scratch[ARCH_UNWIND_CODE_SCRATCH];
	enum unwind_code_found found;
	struct unwind_user_pos pos;
	unsigned long start, end;
	struct unwind_user_frame frame;
	unsigned int budget;
	unsigned long addr, sp;

	if (argc != 2) {
		fprintf(stderr, "usage: check ELF < \"ADDR SP\" lines\n");
		return 2;
	}
	if (image_load(argv[1]))
		return 1;
	while (scanf("%lx %lx", &addr, &sp) == 2) {
		memset(&pos, 0, sizeof(pos));
		pos.ip = addr;
		pos.sp = sp;
		pos.ws = 8;
		code_mapping(addr, &start, &end);
		budget = 320;
		found = arch_unwind_user_code_frame(&pos, start, end, &frame,
						    scratch, &budget);
		if (found == UNWIND_CODE_NONE) {
			printf("%lx -\n", addr);
			continue;
		}
		printf("%lx %s %d ", addr,
		       frame.cfa.rule == UNWIND_USER_RULE_FP ? "fp" : "sp",
		       frame.cfa.off);
		if (frame.fp.rule == UNWIND_USER_RULE_SAME)
			printf("same");
		else
			printf("c%d", frame.fp.off);
		printf(" %s\n", found == UNWIND_CODE_EXACT ? "exact" :
							    "inferred");
	}
	return 0;
}
