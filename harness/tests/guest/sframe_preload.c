// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=sframe_preload.so SFRAME_TABLES=DIR program ...
 *
 * For the harness only: hands the kernel, with prctl(PR_SFRAME_ADD), the
 * SFrame tables cfi2sframe wrote from .eh_frame for every object the
 * program has mapped when it starts (DIR/BUILD_ID.sframe, by the object's
 * GNU build ID), so that the walker of a stock program, not rebuilt, can
 * be measured with them before the kernel takes tables by file. Objects
 * loaded later by dlopen() are not covered.
 *
 * cfi2sframe writes function starts as object addresses, as if the
 * section sat at address 0; PR_SFRAME_ADD reads them relative to where
 * the section is. So each table is copied within 2 GiB of its object's
 * text, and each start is rebased there. SFRAME_PRELOAD_VERBOSE=1 says
 * what was added; errors are always printed, and the program runs on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PR_SFRAME_ADD
#define PR_SFRAME_ADD	0x5346522b
#endif
#define HDR_SIZE	28
#define FDE_SIZE	20

static const char *dir;
static int verbose;

/* The object's GNU build ID, in hex, from its notes in memory. */
static int build_id(struct dl_phdr_info *info, char *hex, size_t len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		const char *note = (const char *)(info->dlpi_addr + p->p_vaddr);
		size_t off = 0;

		if (p->p_type != PT_NOTE)
			continue;
		while (off + sizeof(ElfW(Nhdr)) <= p->p_filesz) {
			const ElfW(Nhdr) *n = (const void *)(note + off);
			size_t name = (n->n_namesz + 3) & ~3UL;
			size_t desc = (n->n_descsz + 3) & ~3UL;
			const unsigned char *d = (const unsigned char *)(n + 1) + name;

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(n + 1, "GNU", 4) && 2 * n->n_descsz < len) {
				for (unsigned int k = 0; k < n->n_descsz; k++)
					sprintf(hex + 2 * k, "%02x", d[k]);
				return 0;
			}
			off += sizeof(*n) + name + desc;
		}
	}
	return -1;
}

static int add_table(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name[0] ? info->dlpi_name : "(program)";
	uintptr_t text_start = 0, text_end = 0, page = getpagesize();
	char hex[128], path[4096];
	unsigned char *sec;
	struct stat st;
	uint32_t nfdes;
	int fd;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		text_start = (info->dlpi_addr + p->p_vaddr) & ~(page - 1);
		text_end = (info->dlpi_addr + p->p_vaddr + p->p_memsz + page - 1) &
			   ~(page - 1);
	}
	if (!text_end || build_id(info, hex, sizeof(hex)))
		return 0;		/* the vDSO, or no build ID: nothing to do */
	snprintf(path, sizeof(path), "%s/%s.sframe", dir, hex);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (verbose)
			fprintf(stderr, "sframe_preload: %s: no table %s\n", name, path);
		return 0;
	}
	if (fstat(fd, &st) || st.st_size < HDR_SIZE) {
		close(fd);
		return 0;
	}
	/* Within 2 GiB of the text: the rebased starts are 32-bit. */
	sec = mmap((void *)(text_end + (64UL << 20)), st.st_size,
		   PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (sec == MAP_FAILED)
		return 0;
	if ((uintptr_t)sec - text_start > (1UL << 31) - st.st_size) {
		fprintf(stderr, "sframe_preload: %s: no room for its table near its text\n",
			name);
		munmap(sec, st.st_size);
		return 0;
	}
	memcpy(&nfdes, sec + 8, 4);
	if (HDR_SIZE + (uint64_t)nfdes * FDE_SIZE > (uint64_t)st.st_size) {
		munmap(sec, st.st_size);
		return 0;
	}
	for (uint32_t i = 0; i < nfdes; i++) {
		unsigned char *d = sec + HDR_SIZE + i * FDE_SIZE;
		int32_t start;

		memcpy(&start, d, 4);
		start = (int32_t)(info->dlpi_addr + start - (uintptr_t)sec);
		memcpy(d, &start, 4);
	}
	mprotect(sec, st.st_size, PROT_READ);
	if (prctl(PR_SFRAME_ADD, sec, st.st_size, text_start, text_end))
		fprintf(stderr, "sframe_preload: %s: PR_SFRAME_ADD: %s\n", name,
			strerror(errno));
	else if (verbose)
		fprintf(stderr, "sframe_preload: %s: %u functions, text %#lx-%#lx\n",
			name, nfdes, (unsigned long)text_start,
			(unsigned long)text_end);
	return 0;
}

__attribute__((constructor)) static void sframe_preload(void)
{
	dir = getenv("SFRAME_TABLES");
	verbose = getenv("SFRAME_PRELOAD_VERBOSE") != NULL;
	if (dir)
		dl_iterate_phdr(add_table, NULL);
}
