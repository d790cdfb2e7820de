/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The converter (cfi2sframe.c) as the rest of the tool uses it, one
 * object at a time: open_object(), convert(), finish(), then
 * write_sframe() or compare(), and reset() before the next object.
 */
#ifndef CFI2SFRAME_CONVERT_H
#define CFI2SFRAME_CONVERT_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* -q and -v, for every file of the tool. */
extern bool quiet, verbose;

/* What a row could not say, by kind: the -s columns. */
enum why {
	WHY_CFA_EXPR,		/* CFA by expression: PLT stubs, realignment */
	WHY_CFA_REG,		/* CFA based on a register but %rsp and %rbp */
	WHY_OUTERMOST,		/* no return address: the stack's root */
	WHY_RA,			/* return address not at CFA - 8 */
	WHY_FP,			/* %rbp kept in a register or by expression */
	WHY_SP,			/* the caller's %rsp is not the CFA */
	WHY_SIGNAL,		/* signal frame: registers in a ucontext */
	WHY_BAD,		/* an opcode or encoding this reader refuses */
	WHY_NR,
	WHY_PLT = WHY_NR,	/* not a reason: said by PC-mask rows */
};

struct stats {
	unsigned long	fdes, exact, partial, none;
	unsigned long	rows, why[WHY_NR];
};

/* The object, mapped whole, and what is known of its layout. */
struct object {
	const char	*path;
	int		fd;		/* kept open for -R and -U */
	const uint8_t	*image;
	size_t		size;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Shdr *sh;
	const uint8_t	*eh_frame;	/* in the image */
	size_t		eh_frame_len;
	uint64_t	eh_frame_addr;
};

/* Print "cfi2sframe: ", the message and a newline to stderr; exit(2). */
void die(const char *fmt, ...);

/* Map the ELF object at @path; 0, or a negative errno (-ENOEXEC: not one). */
int open_object(struct object *o, const char *path);
void close_object(struct object *o);
int print_build_id(const struct object *o);
/* Copy @o's GNU build ID to @id; its size, 0 or less if it has none. */
int build_id(const struct object *o, uint8_t id[20]);
/* Does @o carry an SFrame section of its own (PT_GNU_SFRAME)? */
bool has_own_sframe(const struct object *o);

/*
 * Run @o's .eh_frame into the table being built, counting into @st:
 * 0, -ENOENT without .eh_frame, -EINVAL if malformed. finish() then sorts
 * the table and counts its rows.
 */
int convert(const struct object *o, struct stats *st);
void finish(struct stats *st);
/* The table built, as an SFrame section (malloc()ed); its size in @len. */
uint8_t *write_sframe(size_t *len);
/* -c: compare the table built with @o's own SFrame; 1 if they differ. */
int compare(const struct object *o);
/* Forget the table built, for the next object. */
void reset(void);
void fprint_stats(FILE *f, const char *path, const struct stats *st);
void print_stats(const char *path, const struct stats *st);

#endif /* CFI2SFRAME_CONVERT_H */
