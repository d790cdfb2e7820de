// SPDX-License-Identifier: GPL-2.0
/*
 * Rewrite the SFrame table of a linked x86-64 object from version 1 (what
 * binutils 2.40 emits) into version 2 or 3, following binutils' published
 * SFrame specification, so that the kernel's readers of those versions
 * can be tested on real programs with a toolchain that only makes the
 * first:
 *
 *   sframe_convert VERSION IN OUT
 *
 * Version 2 descriptors are 20 bytes (block size, padding) with function
 * starts relative to the descriptor (SFRAME_F_FDE_FUNC_START_PCREL).
 * Version 3 has a 16-byte index (64-bit relative start, size, offset of
 * the function's attributes) and 5-byte attributes heading each function's
 * rows. Rows are copied unchanged: their encoding did not change.
 *
 * The new table is larger, so it is written into the object's "room": a
 * read-only array the object reserves, starting with SFRAME_ROOM_MAGIC
 * (sframe_room.h); PT_GNU_SFRAME is pointed at it. Host tool, not a test.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sframe_room.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

#define HDR_SIZE	28

static unsigned char *image;
static size_t image_size;

static void die(const char *msg)
{
	fprintf(stderr, "sframe_convert: %s\n", msg);
	exit(1);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* The virtual address of file offset @off, from the PT_LOAD holding it. */
static uint64_t vaddr_of(const Elf64_Phdr *ph, int n, uint64_t off)
{
	for (int i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset &&
		    off < ph[i].p_offset + ph[i].p_filesz)
			return ph[i].p_vaddr + off - ph[i].p_offset;
	die("room is not in a loaded segment");
	return 0;
}

/* Bytes of the @n rows at @fre, each of the width @info's type gives. */
static size_t rows_size(const unsigned char *fre, const unsigned char *end,
			uint32_t n, uint8_t info)
{
	size_t asize = 1u << (info & 0xf), len = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t ri;

		if (fre + len + asize + 1 > end)
			die("row past the end of the table");
		ri = fre[len + asize];
		len += asize + 1 + (((ri >> 1) & 0xf) << ((ri >> 5) & 3));
	}
	return len;
}

int main(int argc, char **argv)
{
	const unsigned char *sec, *fdes, *fres, *end;
	unsigned char *room = NULL, *out, *p;
	uint32_t nfdes, nfres, fre_len;
	uint64_t sec_vaddr, out_vaddr;
	Elf64_Phdr *ph, *sf = NULL;
	size_t out_len, fde_size;
	int version, i;
	Elf64_Ehdr *eh;
	FILE *f;

	if (argc != 4)
		die("usage: sframe_convert VERSION IN OUT");
	version = atoi(argv[1]);
	if (version != 2 && version != 3)
		die("VERSION is 2 or 3");
	f = fopen(argv[2], "rb");
	if (!f)
		die("cannot open IN");
	fseek(f, 0, SEEK_END);
	image_size = ftell(f);
	rewind(f);
	image = malloc(image_size);
	if (!image || fread(image, 1, image_size, f) != image_size)
		die("cannot read IN");
	fclose(f);

	eh = (Elf64_Ehdr *)image;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_machine != EM_X86_64)
		die("not an x86-64 ELF object");
	ph = (Elf64_Phdr *)(image + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_SFRAME)
			sf = &ph[i];
	if (!sf)
		die("no PT_GNU_SFRAME");
	sec = image + sf->p_offset;
	sec_vaddr = sf->p_vaddr;
	if ((get32(sec) & 0xffffff) != (0xdee2 | 1 << 16) || sec[7])
		die("not an SFrame version 1 table without aux header");
	nfdes = get32(sec + 8);
	nfres = get32(sec + 12);
	fre_len = get32(sec + 16);
	fdes = sec + HDR_SIZE + get32(sec + 20);
	fres = sec + HDR_SIZE + get32(sec + 24);
	end = fres + fre_len;

	for (size_t off = 0; off + SFRAME_ROOM_SIZE <= image_size; off++) {
		if (!memcmp(image + off, SFRAME_ROOM_MAGIC, sizeof(SFRAME_ROOM_MAGIC))) {
			room = image + off;
			break;
		}
	}
	if (!room)
		die("no room for the new table (sframe_room.h)");
	/* The table's 32-bit fields at their natural alignment. */
	out = room + (-(room - image) & 7);
	out_vaddr = vaddr_of(ph, eh->e_phnum, out - image);
	fde_size = version == 2 ? 20 : 16;
	out_len = HDR_SIZE + nfdes * fde_size + fre_len + (version == 3 ? 5 * nfdes : 0);
	if (out_len + 8 > SFRAME_ROOM_SIZE)
		die("table does not fit in the room");
	memset(room, 0, SFRAME_ROOM_SIZE);

	/* Header: same counts and fixed offsets; sorted, PC-relative starts. */
	memcpy(out, sec, HDR_SIZE);
	out[2] = version;
	out[3] = 0x1 | 0x4;
	put32(out + 20, 0);
	put32(out + 24, nfdes * fde_size);

	p = out + HDR_SIZE + nfdes * fde_size;
	for (uint32_t n = 0; n < nfdes; n++) {
		const unsigned char *v1 = fdes + 17 * n;
		unsigned char *d = out + HDR_SIZE + n * fde_size;
		uint64_t d_vaddr = out_vaddr + (d - out);
		uint64_t start = sec_vaddr + (int32_t)get32(v1);
		uint32_t size = get32(v1 + 4), fre_off = get32(v1 + 8);
		uint32_t rows = get32(v1 + 12);
		uint8_t info = v1[16];
		/* Version 1's PC-mask functions are x86-64 PLT entries. */
		uint8_t rep = info & 0x10 ? 16 : 0;
		size_t len;

		if (fres + fre_off > end)
			die("row offset past the end of the table");
		len = rows_size(fres + fre_off, end, rows, info);
		if (version == 2) {
			put32(d, (uint32_t)(int32_t)(start - d_vaddr));
			put32(d + 4, size);
			put32(d + 8, fre_off);
			put32(d + 12, rows);
			d[16] = info;
			d[17] = rep;
			continue;
		}
		if (rows > 0xffff)
			die("too many rows in one function for version 3");
		put64(d, start - d_vaddr);
		put32(d + 8, size);
		put32(d + 12, p - (out + HDR_SIZE + nfdes * fde_size));
		put16(p, rows);
		p[2] = info;
		p[3] = 0;		/* default rows */
		p[4] = rep;
		memcpy(p + 5, fres + fre_off, len);
		p += 5 + len;
	}
	if (version == 2) {
		memcpy(p, fres, fre_len);
		p += fre_len;
	}
	put32(out + 16, p - (out + HDR_SIZE + nfdes * fde_size));
	(void)nfres;

	sf->p_offset = out - image;
	sf->p_vaddr = out_vaddr;
	sf->p_paddr = out_vaddr;
	sf->p_filesz = p - out;
	sf->p_memsz = p - out;

	f = fopen(argv[3], "wb");
	if (!f || fwrite(image, 1, image_size, f) != image_size || fclose(f) ||
	    chmod(argv[3], 0755))
		die("cannot write OUT");
	return 0;
}
