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
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>

static const unsigned char *image;
static const Elf64_Phdr *phdrs;
static unsigned int nphdrs;

/* Copy what the file maps at @addr: its loadable, executable segments. */
unsigned long code_user_read(void *dst, unsigned long addr, unsigned long n)
{
	unsigned int i;

	for (i = 0; i < nphdrs; i++) {
		const Elf64_Phdr *p = &phdrs[i];
		unsigned long avail;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) ||
		    addr < p->p_vaddr || addr >= p->p_vaddr + p->p_filesz)
			continue;
		avail = p->p_vaddr + p->p_filesz - addr;
		if (n > avail)
			n = avail;
		memcpy(dst, image + p->p_offset + (addr - p->p_vaddr), n);
		return n;
	}
	return 0;
}

/* The executable segment holding @addr, as the mapping the reading stays in. */
static void code_mapping(unsigned long addr, unsigned long *start,
			 unsigned long *end)
{
	unsigned int i;

	*start = *end = 0;
	for (i = 0; i < nphdrs; i++) {
		const Elf64_Phdr *p = &phdrs[i];

		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) &&
		    addr >= p->p_vaddr && addr < p->p_vaddr + p->p_memsz) {
			*start = p->p_vaddr;
			*end = p->p_vaddr + p->p_memsz;
			return;
		}
	}
}

int main(int argc, char **argv)
{
	static char scratch[ARCH_UNWIND_CODE_SCRATCH];
	enum unwind_code_found found;
	struct unwind_user_state state;
	struct unwind_user_frame frame;
	unsigned int budget;
	const Elf64_Ehdr *eh;
	unsigned long addr, sp;
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: check ELF < \"ADDR SP\" lines\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[1]);
		return 1;
	}
	image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	eh = (const Elf64_Ehdr *)image;
	phdrs = (const Elf64_Phdr *)(image + eh->e_phoff);
	nphdrs = eh->e_phnum;
	while (scanf("%lx %lx", &addr, &sp) == 2) {
		memset(&state, 0, sizeof(state));
		state.ip = addr;
		state.sp = sp;
		state.ws = 8;
		code_mapping(addr, &state.code_start, &state.code_end);
		budget = 320;
		found = arch_unwind_user_code_frame(&state, &frame, scratch,
						    &budget);
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
