// SPDX-License-Identifier: GPL-2.0
/*
 * The "user memory" of the host check (check.c): an ELF file's loadable,
 * executable segments, which the stand-in uaccess.h reads.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "image.h"

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
void code_mapping(unsigned long addr, unsigned long *start,
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

/* Map the ELF file at @path; 0, or 1 after saying why not. */
int image_load(const char *path)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
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
	return 0;
}
