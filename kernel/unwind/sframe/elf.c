// SPDX-License-Identifier: GPL-2.0
/*
 * An object's ELF headers, read from its file: the program headers, where
 * the registry finds a mapping's SFrame section (discover.c), and the build ID
 * a table given for a file was made from (file.c).
 */
#include <linux/elf.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/buildid.h>
#include "elf.h"

/**
 * sframe_elf_phdrs - read the program headers of an ELF object's file
 * @file:	the object's file
 * @phnum:	receives how many it has
 *
 * Reads 64-bit objects of this architecture, with at most 64 KiB of
 * program headers.
 *
 * Context: Task context; reads the file.
 * Return: the headers, for the caller to kfree(); ERR_PTR(-ENOEXEC) for a
 * file that is no such object or is shorter than its headers; or
 * ERR_PTR() of a read's error or of -ENOMEM.
 */
struct elf64_phdr *sframe_elf_phdrs(struct file *file, unsigned int *phnum)
{
	struct elf64_phdr *phdrs;
	struct elf64_hdr ehdr;
	loff_t pos = 0;
	size_t size;
	ssize_t n;

	n = kernel_read(file, &ehdr, sizeof(ehdr), &pos);
	if (n != (ssize_t)sizeof(ehdr))
		return ERR_PTR(n < 0 ? n : -ENOEXEC);
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) ||
	    ehdr.e_ident[EI_CLASS] != ELFCLASS64 || !elf_check_arch(&ehdr) ||
	    ehdr.e_phentsize != sizeof(*phdrs) || !ehdr.e_phnum ||
	    ehdr.e_phnum > SZ_64K / sizeof(*phdrs))
		return ERR_PTR(-ENOEXEC);
	size = ehdr.e_phnum * sizeof(*phdrs);
	phdrs = kmalloc(size, GFP_KERNEL);
	if (!phdrs)
		return ERR_PTR(-ENOMEM);
	pos = ehdr.e_phoff;
	n = kernel_read(file, phdrs, size, &pos);
	if (n != (ssize_t)size) {
		kfree(phdrs);
		return ERR_PTR(n < 0 ? n : -ENOEXEC);
	}
	*phnum = ehdr.e_phnum;
	return phdrs;
}

/* The GNU build ID note (NT_GNU_BUILD_ID of binutils' elf/common.h). */
#define SFRAME_NT_GNU_BUILD_ID	3
/* Notes of one segment read to find it: a few hundred bytes in practice. */
#define SFRAME_NOTES_MAX	SZ_64K

/*
 * Find the build ID note in @buf, @len bytes of notes. Returns its size,
 * 0 if there is none.
 */
static u32 sframe_note_build_id(const u8 *buf, size_t len, u8 *id)
{
	size_t off = 0;

	while (len - off >= sizeof(struct elf64_note)) {
		const struct elf64_note *n = (const void *)(buf + off);
		size_t name = ALIGN(n->n_namesz, 4), desc = ALIGN(n->n_descsz, 4);

		off += sizeof(*n);
		if (n->n_namesz > len - off || name > len - off ||
		    n->n_descsz > len - off - name ||
		    desc > len - off - name)
			return 0;
		if (n->n_type == SFRAME_NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(buf + off, "GNU", 4) && n->n_descsz &&
		    n->n_descsz <= BUILD_ID_SIZE_MAX) {
			memcpy(id, buf + off + name, n->n_descsz);
			return n->n_descsz;
		}
		off += name + desc;
	}
	return 0;
}

/**
 * sframe_elf_build_id - the GNU build ID of an ELF object's file
 * @file:	the object's file
 * @id:		receives the build ID, BUILD_ID_SIZE_MAX bytes at most
 *
 * Context: Task context; reads the file.
 * Return: the build ID's size; 0 if the object has none, or is no 64-bit
 * object of this architecture; or the error of a read.
 */
int sframe_elf_build_id(struct file *file, u8 *id)
{
	struct elf64_phdr *phdrs;
	unsigned int i, phnum;
	int ret = 0;
	loff_t pos;
	ssize_t n;

	phdrs = sframe_elf_phdrs(file, &phnum);
	if (IS_ERR(phdrs))
		return PTR_ERR(phdrs) == -ENOEXEC ? 0 : PTR_ERR(phdrs);
	for (i = 0; i < phnum && !ret; i++) {
		const struct elf64_phdr *ph = &phdrs[i];
		u8 *notes;

		if (ph->p_type != PT_NOTE || !ph->p_filesz ||
		    ph->p_filesz > SFRAME_NOTES_MAX)
			continue;
		notes = kmalloc(ph->p_filesz, GFP_KERNEL);
		if (!notes) {
			ret = -ENOMEM;
			break;
		}
		pos = ph->p_offset;
		n = kernel_read(file, notes, ph->p_filesz, &pos);
		if (n < 0)
			ret = n;
		else
			ret = sframe_note_build_id(notes, n, id);
		kfree(notes);
	}
	kfree(phdrs);
	return ret;
}
