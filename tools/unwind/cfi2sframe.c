// SPDX-License-Identifier: GPL-2.0
/*
 * cfi2sframe: SFrame tables for x86-64 objects built without them, from
 * the DWARF call frame information (.eh_frame) every object of a
 * distribution carries for C++ exceptions and debuggers.
 *
 *   cfi2sframe [-q] [-o OUT] ELF          write the table of ELF to OUT
 *   cfi2sframe -s [-v] ELF...             count what converts, per object;
 *                                         -v: where a row cannot be said
 *   cfi2sframe -c ELF                     compare with ELF's own SFrame
 *   cfi2sframe -B ELF                     print ELF's GNU build ID, in hex
 *   cfi2sframe -R [-q] [-C DIR] PATH...   give the kernel each ELF's table
 *                                         (prctl(PR_SFRAME_FILE_ADD),
 *                                         CAP_PERFMON); a directory: the
 *                                         ELF objects under it; -C: keep
 *                                         tables in DIR by build ID, and
 *                                         take them from there next time
 *   cfi2sframe -R -n -C DIR PATH...       fill the cache only (on another
 *                                         machine, or before the kernel)
 *   cfi2sframe -U PATH...                 take them back
 *   cfi2sframe -W [-q] [-v] [-C DIR]      give one to each object walks
 *                                         meet without a table, as the
 *                                         kernel traces them (watch.c),
 *                                         until SIGINT or SIGTERM
 *
 * The kernel's walker needs, at each instruction, where the canonical
 * frame address (CFA) is (the stack or frame pointer plus an offset),
 * where the return address is (CFA - 8 on x86-64), and where the caller's
 * %rbp was saved, if it was. That is what an SFrame row says. The CFI
 * says it too, as a small program per function (FDE) that the kernel
 * does not run: this tool runs it, here in user space, and writes each
 * state the walker needs as a row.
 *
 * A state SFrame cannot express (a CFA computed by a DWARF expression
 * other than a register plus an offset, dereferenced or not; the return
 * address or %rbp kept in a register or by such an expression; a caller's
 * stack pointer that is not the CFA) is never approximated: the
 * function's descriptor ends before it, and a new one starts after it, so
 * that the walker finds no row there and treats that text as text without
 * a table. Each such state is counted by kind (-s).
 *
 * The table written is an SFrame version 2 section, FDEs sorted, whose
 * function starts are the objects' virtual addresses: the section is read
 * as if it were placed at address 0 of the object, and whoever loads it
 * (the kernel, for a registered file) adds the mapping's load bias. Where
 * a function needs what only version 3 says, the whole table is version
 * 3: a CFA based on a register other than %rsp and %rbp (ld.so's
 * trampolines, which realign the stack through %rbx) takes a flexible
 * row, and a signal frame (the C library's restorer, whose registers are
 * in the ucontext the kernel wrote) a descriptor marked as one. A
 * walker that does not have the register, as the kernel's has not beyond
 * the interrupted frame, treats such a row as it treats text the table
 * leaves out; the table says the CFI exactly all the same.
 *
 * -c reads the object's own SFrame section (PT_GNU_SFRAME, version 1 or 2,
 * as binutils' gas --gsframe writes it from the same CFI) and compares
 * the two at every byte of every function both describe: an independent
 * check of this interpreter against the assembler's. Flexible rows are
 * left out of the comparison: the assembler's versions have none.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME		0x6474e554
#endif

/* SFrame, as binutils' libsframe/doc/sframe-spec.texi describes it. */
#define SFRAME_MAGIC		0xdee2
#define SFRAME_VERSION_2	2
#define SFRAME_VERSION_3	3
#define SFRAME_F_FDE_SORTED	0x1
#define SFRAME_ABI_AMD64	3
#define SFRAME_HDR_SIZE		28
#define SFRAME_FDE_V1_SIZE	17
#define SFRAME_FDE_V2_SIZE	20
#define SFRAME_FDE_V3_SIZE	16	/* the index entry */
#define SFRAME_FDA_V3_SIZE	5	/* attributes, at the head of the rows */
#define SFRAME_FDE_SIGNAL	0x80	/* v3 info byte: a signal frame */
#define SFRAME_FDE_TYPE_FLEX	1	/* v3 info2 byte: flexible rows */
/* A v3 flexible row's control word: register based, dereferenced, number. */
#define SFRAME_FLEX_REG		0x1
#define SFRAME_FLEX_DEREF	0x2
#define SFRAME_FLEX_REGNUM(r)	((r) << 3)
#define SFRAME_FRE_ADDR1	0
#define SFRAME_FRE_ADDR2	1
#define SFRAME_FRE_ADDR4	2

/* DWARF registers of x86-64, and the return address column. */
#define DW_RBP			6
#define DW_RSP			7
#define DW_RA			16
#define DW_REGS			17

/* A pointer encoding's value format, and how it applies. */
#define DW_EH_PE_omit		0xff
#define DW_EH_PE_indirect	0x80

/*
 * One row: what the walker needs at one instruction. A flexible row
 * (version 3) names its registers: the CFA is cfa_reg + cfa, or the word
 * there if cfa_deref; the return address and %rbp are in the words at
 * ra_reg + ra and fp_reg + fp where those are set (DWARF number plus one),
 * else at CFA - 8 and CFA + fp.
 */
struct row {
	uint64_t	pc;		/* object address it starts at */
	uint8_t		cfa_sp;		/* CFA is %rsp + cfa, else %rbp + cfa */
	uint8_t		fp_saved;	/* caller's %rbp at CFA + fp */
	uint8_t		flex;
	uint8_t		cfa_reg, cfa_deref, ra_reg, fp_reg;
	int32_t		cfa;
	int32_t		fp;
	int32_t		ra;
};

static const char * const why_name[WHY_NR] = {
	"cfa-expression", "cfa-register", "outermost", "return-address",
	"rbp-rule", "rsp-rule",
	"signal-frame", "malformed",
};

/* The table being built: descriptors and their rows. */
struct out_fde {
	uint64_t	start, end;
	uint32_t	first, nr;	/* rows */
	uint8_t		rep;		/* PC-mask block size, 0 if none */
	bool		signal;		/* a signal frame (version 3) */
};

static struct row *rows;
static size_t nrows, cap_rows;
static struct out_fde *fdes;
static size_t nfdes, cap_fdes;
bool quiet, verbose;

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cfi2sframe: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need < 64 ? 64 : need * 2;
	p = realloc(p, *cap * size);
	if (!p)
		die("out of memory");
	return p;
}

int open_object(struct object *o, const char *path)
{
	struct stat st;
	void *map;
	int fd;

	memset(o, 0, sizeof(*o));
	o->path = path;
	o->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	o->fd = fd;
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(*o->eh))
		return -ENOEXEC;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	o->image = map;
	o->size = st.st_size;
	o->eh = map;
	if (memcmp(o->eh->e_ident, ELFMAG, SELFMAG) ||
	    o->eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    o->eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    o->eh->e_machine != EM_X86_64 ||
	    (o->eh->e_type != ET_EXEC && o->eh->e_type != ET_DYN) ||
	    o->eh->e_phoff > o->size ||
	    o->eh->e_phnum * sizeof(Elf64_Phdr) > o->size - o->eh->e_phoff)
		return -ENOEXEC;
	o->ph = (const Elf64_Phdr *)(o->image + o->eh->e_phoff);
	if (o->eh->e_shoff && o->eh->e_shoff < o->size &&
	    o->eh->e_shnum * sizeof(Elf64_Shdr) <= o->size - o->eh->e_shoff &&
	    o->eh->e_shstrndx < o->eh->e_shnum) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(o->image + o->eh->e_shoff);
		const Elf64_Shdr *strs = &sh[o->eh->e_shstrndx];

		o->sh = sh;
		for (int i = 0; i < o->eh->e_shnum; i++) {
			if (strs->sh_offset + sh[i].sh_name + 10 > o->size ||
			    sh[i].sh_type != SHT_PROGBITS ||
			    memcmp(o->image + strs->sh_offset + sh[i].sh_name,
				   ".eh_frame", 10))
				continue;
			if (sh[i].sh_offset > o->size ||
			    sh[i].sh_size > o->size - sh[i].sh_offset)
				return -ENOEXEC;
			o->eh_frame = o->image + sh[i].sh_offset;
			o->eh_frame_len = sh[i].sh_size;
			o->eh_frame_addr = sh[i].sh_addr;
		}
	}
	return 0;
}

/*
 * The object's NT_GNU_BUILD_ID, from its PT_NOTE segments, into @id (20
 * bytes at most): its size, or -ENOENT.
 */
int build_id(const struct object *o, uint8_t id[20])
{
	for (int i = 0; i < o->eh->e_phnum; i++) {
		const Elf64_Phdr *p = &o->ph[i];
		size_t off = 0;

		if (p->p_type != PT_NOTE || p->p_offset > o->size ||
		    p->p_filesz > o->size - p->p_offset)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= p->p_filesz) {
			const Elf64_Nhdr *n = (const void *)(o->image + p->p_offset + off);
			size_t name = (n->n_namesz + 3) & ~3UL;
			size_t desc = (n->n_descsz + 3) & ~3UL;
			const uint8_t *d = (const uint8_t *)(n + 1) + name;

			if (name + desc > p->p_filesz - off - sizeof(*n))
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(n + 1, "GNU", 4) && n->n_descsz &&
			    n->n_descsz <= 20) {
				memcpy(id, d, n->n_descsz);
				return n->n_descsz;
			}
			off += sizeof(*n) + name + desc;
		}
	}
	return -ENOENT;
}

int print_build_id(const struct object *o)
{
	uint8_t id[20];
	int n = build_id(o, id);

	for (int k = 0; k < n; k++)
		printf("%02x", id[k]);
	if (n > 0)
		putchar('\n');
	return n > 0 ? 0 : n;
}

/* Has the object an SFrame section of its own (PT_GNU_SFRAME)? */
bool has_own_sframe(const struct object *o)
{
	for (int i = 0; i < o->eh->e_phnum; i++)
		if (o->ph[i].p_type == PT_GNU_SFRAME)
			return true;
	return false;
}

void close_object(struct object *o)
{
	if (o->image)
		munmap((void *)o->image, o->size);
	if (o->fd >= 0)
		close(o->fd);
}

/* A cursor over CFI bytes, which fails (sets bad) rather than overrun. */
struct cur {
	const uint8_t	*p, *end;
	uint64_t	addr;		/* object address of p */
	bool		bad;
};

static uint64_t get(struct cur *c, int n)
{
	uint64_t v = 0;

	if (c->bad || c->end - c->p < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);
	c->p += n;
	c->addr += n;
	return v;
}

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		b = get(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	return v;
}

static int64_t sleb(struct cur *c)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		b = get(c, 1);
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* A pointer in encoding @enc; @pcrel false for ranges (value only). */
static uint64_t pointer(struct cur *c, uint8_t enc, bool apply)
{
	uint64_t where = c->addr, v;

	if (enc == DW_EH_PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case 0x00:			/* absptr */
	case 0x04:			/* udata8 */
	case 0x0c:			/* sdata8 */
		v = get(c, 8);
		break;
	case 0x01:
		v = uleb(c);
		break;
	case 0x02:
		v = get(c, 2);
		break;
	case 0x03:
		v = get(c, 4);
		break;
	case 0x09:
		v = sleb(c);
		break;
	case 0x0a:
		v = (int16_t)get(c, 2);
		break;
	case 0x0b:
		v = (int32_t)get(c, 4);
		break;
	default:
		c->bad = true;
		return 0;
	}
	if (!apply)
		return v;
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:			/* pcrel */
		v += where;
		break;
	default:			/* textrel, datarel...: not on x86-64 */
		c->bad = true;
		break;
	}
	return v;
}

struct cie {
	uint64_t	code_align;
	int64_t		data_align;
	uint64_t	ra_reg;
	uint8_t		fde_enc;
	bool		aug_z, signal;
	const uint8_t	*insns, *insns_end;
	uint64_t	insns_addr;
};

static bool parse_cie(struct cur c, struct cie *cie)
{
	const char *aug;
	uint8_t version;

	memset(cie, 0, sizeof(*cie));
	cie->fde_enc = 0;
	version = get(&c, 1);
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)c.p;
	while (get(&c, 1))
		;
	if (c.bad)
		return false;
	if (strstr(aug, "eh"))
		return false;		/* GCC 2's old layout */
	cie->code_align = uleb(&c);
	cie->data_align = sleb(&c);
	cie->ra_reg = version == 1 ? get(&c, 1) : uleb(&c);
	if (aug[0] == 'z') {
		uint64_t len = uleb(&c);
		struct cur a = c;

		if (len > (uint64_t)(c.end - c.p))
			return false;
		a.end = c.p + len;
		cie->aug_z = true;
		for (const char *s = aug + 1; *s; s++) {
			switch (*s) {
			case 'L':
				get(&a, 1);
				break;
			case 'P': {
				uint8_t enc = get(&a, 1);

				pointer(&a, enc & ~DW_EH_PE_indirect, true);
				break;
			}
			case 'R':
				cie->fde_enc = get(&a, 1);
				break;
			case 'S':
				cie->signal = true;
				break;
			case 'B':
				break;
			default:
				return false;
			}
		}
		if (a.bad)
			return false;
		c.p += len;
		c.addr += len;
	} else if (aug[0]) {
		return false;
	}
	cie->insns = c.p;
	cie->insns_end = c.end;
	cie->insns_addr = c.addr;
	return !c.bad && cie->code_align == 1 && cie->ra_reg == DW_RA;
}

/*
 * The CFI state of the registers the walker needs: unchanged, undefined,
 * saved at CFA + offset, saved at a register + offset (a one-operation
 * DWARF expression), or something else.
 */
enum rule { R_SAME, R_UNDEF, R_OFFSET, R_AT_REG, R_OTHER };

#define CFA_EXPR	-1	/* by an expression SFrame cannot say */
#define CFA_PLT		-2	/* by the expression of lazy PLT entries */

struct state {
	int		cfa_reg;	/* DWARF register, or CFA_EXPR, CFA_PLT */
	int64_t		cfa_off;
	bool		cfa_deref;	/* the CFA is the word at reg + off */
	int		plt_split;	/* CFA_PLT: where %rsp + 16 starts */
	enum rule	rule[3];	/* %rbp, return address, %rsp */
	int64_t		off[3];
	int		reg[3];		/* R_AT_REG: the base register */
};

/* Index into struct state's rules of a register the walker needs, or -1. */
static int rule_index(uint64_t reg)
{
	return reg == DW_RBP ? 0 : reg == DW_RA ? 1 : reg == DW_RSP ? 2 : -1;
}

#define STACK_MAX	16

/*
 * The CFA of x86-64 lazy PLT entries, 16 bytes each: %rsp + 8 up to the
 * push of the entry's index, %rsp + 16 after it, by the address's low four
 * bits: "DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
 * DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus", N the offset
 * of the jump after the push (11; 10 in some linkers' layouts). SFrame
 * says exactly this with a PC-mask descriptor of 16-byte blocks.
 */
static bool plt_expression(const uint8_t *e, uint64_t len, int *split)
{
	static const uint8_t head[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 };

	if (len != sizeof(head) + 1 + sizeof(tail) ||
	    memcmp(e, head, sizeof(head)) ||
	    memcmp(e + sizeof(head) + 1, tail, sizeof(tail)) ||
	    e[sizeof(head)] < 0x30 || e[sizeof(head)] > 0x3f)
		return false;
	*split = e[sizeof(head)] - 0x30;
	return *split > 0;
}

/*
 * A DWARF expression of one register-relative operation, DW_OP_bregN
 * with its offset, then DW_OP_deref if @deref may be set: the only kind
 * an SFrame row says (the signal restorer's CFI is made of these).
 */
static bool breg_expression(const uint8_t *e, uint64_t len, int *reg,
			    int64_t *off, bool *deref)
{
	struct cur c = { .p = e, .end = e + len };

	if (!len || e[0] < 0x70 || e[0] > 0x8f)
		return false;
	*reg = get(&c, 1) - 0x70;
	*off = sleb(&c);
	if (deref)
		*deref = false;
	if (deref && c.p < c.end && *c.p == 0x06) {	/* DW_OP_deref */
		get(&c, 1);
		*deref = true;
	}
	return !c.bad && c.p == c.end;
}

static void set_rule(struct state *s, uint64_t reg, enum rule r, int64_t off)
{
	int i = rule_index(reg);

	if (i >= 0) {
		s->rule[i] = r;
		s->off[i] = off;
	}
}

/* Run CFI instructions up to @stop (object address), from @s. */
struct runner {
	struct state	s, init, stack[STACK_MAX];
	int		depth;
	uint64_t	loc;
	const struct cie *cie;
	bool		bad;
};

/* DW_CFA_restore: the rule the CIE's instructions left. */
static void restore_rule(struct runner *r, uint64_t reg)
{
	int i = rule_index(reg);

	if (i >= 0) {
		r->s.rule[i] = r->init.rule[i];
		r->s.off[i] = r->init.off[i];
		r->s.reg[i] = r->init.reg[i];
	}
}

/*
 * One instruction: returns the new location if it advances (the caller
 * records the state before the advance), else the current one.
 */
static uint64_t step(struct runner *r, struct cur *c, uint8_t fde_enc)
{
	uint8_t op = get(c, 1);
	uint64_t reg, loc = r->loc;
	int64_t da = r->cie->data_align;

	switch (op >> 6) {
	case 1:
		return loc + (op & 0x3f) * r->cie->code_align;
	case 2:
		set_rule(&r->s, op & 0x3f, R_OFFSET, (int64_t)uleb(c) * da);
		return loc;
	case 3:
		restore_rule(r, op & 0x3f);
		return loc;
	}
	switch (op) {
	case 0x00:			/* nop */
		break;
	case 0x01:			/* set_loc */
		return pointer(c, fde_enc, true);
	case 0x02:
		return loc + get(c, 1) * r->cie->code_align;
	case 0x03:
		return loc + get(c, 2) * r->cie->code_align;
	case 0x04:
		return loc + get(c, 4) * r->cie->code_align;
	case 0x05:			/* offset_extended */
		reg = uleb(c);
		set_rule(&r->s, reg, R_OFFSET, (int64_t)uleb(c) * da);
		break;
	case 0x06:			/* restore_extended */
		restore_rule(r, uleb(c));
		break;
	case 0x07:			/* undefined */
		set_rule(&r->s, uleb(c), R_UNDEF, 0);
		break;
	case 0x08:			/* same_value */
		set_rule(&r->s, uleb(c), R_SAME, 0);
		break;
	case 0x09:			/* register */
		reg = uleb(c);
		uleb(c);
		set_rule(&r->s, reg, R_OTHER, 0);
		break;
	case 0x0a:			/* remember_state */
		if (r->depth == STACK_MAX) {
			r->bad = true;
			break;
		}
		r->stack[r->depth++] = r->s;
		break;
	case 0x0b:			/* restore_state, the CFA included */
		if (!r->depth) {
			r->bad = true;
			break;
		}
		r->s = r->stack[--r->depth];
		break;
	case 0x0c:			/* def_cfa */
		r->s.cfa_reg = uleb(c);
		r->s.cfa_off = uleb(c);
		r->s.cfa_deref = false;
		break;
	case 0x0d:			/* def_cfa_register */
		r->s.cfa_reg = uleb(c);
		r->s.cfa_deref = false;
		break;
	case 0x0e:			/* def_cfa_offset */
		r->s.cfa_off = uleb(c);
		/* Only a register-based CFA has an offset to change. */
		if (r->s.cfa_deref)
			r->s.cfa_reg = CFA_EXPR;
		break;
	case 0x0f: {			/* def_cfa_expression */
		uint64_t len = uleb(c);
		int64_t off;
		bool deref;
		int breg;

		if (len > (uint64_t)(c->end - c->p)) {
			r->bad = true;
			break;
		}
		if (plt_expression(c->p, len, &r->s.plt_split)) {
			r->s.cfa_reg = CFA_PLT;
		} else if (breg_expression(c->p, len, &breg, &off, &deref)) {
			r->s.cfa_reg = breg;
			r->s.cfa_off = off;
			r->s.cfa_deref = deref;
		} else {
			r->s.cfa_reg = CFA_EXPR;
		}
		c->p += len;
		c->addr += len;
		break;
	}
	case 0x10:			/* expression */
	case 0x16: {			/* val_expression */
		uint64_t len;
		int64_t off;
		int breg, i;

		reg = uleb(c);
		len = uleb(c);
		if (len > (uint64_t)(c->end - c->p)) {
			r->bad = true;
			break;
		}
		i = rule_index(reg);
		/* Saved at a register plus an offset: a flexible row says it. */
		if (op == 0x10 && i >= 0 &&
		    breg_expression(c->p, len, &breg, &off, NULL)) {
			set_rule(&r->s, reg, R_AT_REG, off);
			r->s.reg[i] = breg;
		} else {
			set_rule(&r->s, reg, R_OTHER, 0);
		}
		c->p += len;
		c->addr += len;
		break;
	}
	case 0x11:			/* offset_extended_sf */
		reg = uleb(c);
		set_rule(&r->s, reg, R_OFFSET, sleb(c) * da);
		break;
	case 0x12:			/* def_cfa_sf */
		r->s.cfa_reg = uleb(c);
		r->s.cfa_off = sleb(c) * da;
		r->s.cfa_deref = false;
		break;
	case 0x13:			/* def_cfa_offset_sf */
		r->s.cfa_off = sleb(c) * da;
		if (r->s.cfa_deref)
			r->s.cfa_reg = CFA_EXPR;
		break;
	case 0x14:			/* val_offset */
		reg = uleb(c);
		uleb(c);
		set_rule(&r->s, reg, R_OTHER, 0);
		break;
	case 0x15:			/* val_offset_sf */
		reg = uleb(c);
		sleb(c);
		set_rule(&r->s, reg, R_OTHER, 0);
		break;
	case 0x2e:			/* GNU_args_size */
		uleb(c);
		break;
	case 0x2f:			/* GNU_negative_offset_extended */
		reg = uleb(c);
		set_rule(&r->s, reg, R_OFFSET, -(int64_t)uleb(c) * da);
		break;
	default:
		r->bad = true;
		break;
	}
	return loc;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * The row the walker needs for state @s, or the reason there is none.
 * Version 2 rows say a CFA of %rsp or %rbp plus an offset, the return
 * address at CFA - 8, %rbp unchanged or at CFA + offset; flexible rows
 * (version 3) say any register's offset, dereferenced or not, and where
 * a signal frame's registers were saved.
 */
static int to_row(const struct state *s, bool signal, struct row *row)
{
	bool ra_default = s->rule[1] == R_OFFSET && s->off[1] == -8;
	int w = -1;

	memset(row, 0, sizeof(*row));
	if (s->cfa_reg == CFA_EXPR)
		w = WHY_CFA_EXPR;
	else if (s->cfa_reg == CFA_PLT)
		w = WHY_PLT;
	else if (s->cfa_reg < 0 || s->cfa_reg >= DW_RA)
		w = WHY_CFA_REG;
	else if (s->rule[1] == R_UNDEF)
		w = WHY_OUTERMOST;
	else if (!ra_default && !(signal && s->rule[1] == R_AT_REG))
		w = WHY_RA;
	else if (s->rule[0] == R_OTHER)
		w = WHY_FP;
	/* Unwound, %rsp is the CFA: unchanged, or restored from it. */
	else if (s->rule[2] != R_SAME && s->rule[2] != R_UNDEF &&
		 !(s->rule[2] == R_AT_REG && s->cfa_deref &&
		   s->reg[2] == s->cfa_reg && s->off[2] == s->cfa_off))
		w = WHY_SP;
	else if (!fits32(s->cfa_off) || !fits32(s->off[0]) || !fits32(s->off[1]))
		w = WHY_BAD;
	if (w >= 0)
		return signal && w != WHY_BAD ? WHY_SIGNAL : w;

	row->cfa_reg = s->cfa_reg;
	row->cfa = s->cfa_off;
	row->fp_saved = s->rule[0] == R_OFFSET || s->rule[0] == R_AT_REG;
	row->fp = row->fp_saved ? s->off[0] : 0;
	row->flex = signal || s->cfa_deref || !ra_default ||
		    s->rule[0] == R_AT_REG ||
		    (s->cfa_reg != DW_RSP && s->cfa_reg != DW_RBP);
	if (!row->flex) {
		row->cfa_sp = s->cfa_reg == DW_RSP;
		return -1;
	}
	row->cfa_deref = s->cfa_deref;
	if (!ra_default) {
		row->ra_reg = s->reg[1] + 1;
		row->ra = s->off[1];
	}
	if (s->rule[0] == R_AT_REG)
		row->fp_reg = s->reg[0] + 1;
	return -1;
}

static bool same_row(const struct row *a, const struct row *b)
{
	return a->cfa_sp == b->cfa_sp && a->cfa == b->cfa &&
	       a->fp_saved == b->fp_saved && a->fp == b->fp &&
	       a->flex == b->flex && a->cfa_reg == b->cfa_reg &&
	       a->cfa_deref == b->cfa_deref && a->ra_reg == b->ra_reg &&
	       a->ra == b->ra && a->fp_reg == b->fp_reg;
}

/* The descriptor being filled, if any: rows go to the last one. */
static bool fde_open, plt_open;
/* The last kind -v printed for this FDE, to print a run of them once. */
static int last_why = -1;

static void close_fde(uint64_t end)
{
	if (!fde_open)
		return;
	fdes[nfdes - 1].end = end;
	fde_open = false;
	plt_open = false;
	/* A descriptor with no row says nothing. */
	if (!fdes[nfdes - 1].nr)
		nfdes--;
}

/* State @s holds from @pc: a row for it, or an end to the descriptor. */
static void emit(uint64_t pc, const struct state *s, bool signal,
		 unsigned long *why, bool *inexact)
{
	struct row row;
	int w = to_row(s, signal, &row);

	if (w == WHY_PLT && plt_open)
		return;
	if (w == WHY_PLT) {
		/* Its own descriptor: two rows that repeat every 16 bytes. */
		struct row lo = { .pc = pc, .cfa_sp = 1, .cfa_reg = DW_RSP,
				  .cfa = 8 };
		struct row hi = { .pc = pc + s->plt_split, .cfa_sp = 1,
				  .cfa_reg = DW_RSP, .cfa = 16 };

		close_fde(pc);
		fdes = grow(fdes, &cap_fdes, nfdes + 1, sizeof(*fdes));
		fdes[nfdes++] = (struct out_fde){ .start = pc, .first = nrows,
						  .nr = 2, .rep = 16 };
		rows = grow(rows, &cap_rows, nrows + 2, sizeof(*rows));
		rows[nrows++] = lo;
		rows[nrows++] = hi;
		fde_open = true;
		plt_open = true;
		return;
	}
	if (plt_open) {
		close_fde(pc);
		plt_open = false;
	}
	if (w >= 0) {
		if (verbose && w != last_why)
			fprintf(stderr, "  %#llx: %s\n", (unsigned long long)pc,
				why_name[w]);
		last_why = w;
		close_fde(pc);
		why[w]++;
		*inexact = true;
		return;
	}
	if (fde_open) {
		struct out_fde *f = &fdes[nfdes - 1];

		if (f->nr && same_row(&rows[f->first + f->nr - 1], &row))
			return;
		/* Two states at one address: the later one holds. */
		if (f->nr && rows[f->first + f->nr - 1].pc == pc) {
			rows[f->first + f->nr - 1] = row;
			rows[f->first + f->nr - 1].pc = pc;
			return;
		}
	} else {
		fdes = grow(fdes, &cap_fdes, nfdes + 1, sizeof(*fdes));
		fdes[nfdes++] = (struct out_fde){ .start = pc, .first = nrows,
						  .signal = signal };
		fde_open = true;
	}
	rows = grow(rows, &cap_rows, nrows + 1, sizeof(*rows));
	row.pc = pc;
	rows[nrows++] = row;
	fdes[nfdes - 1].nr++;
}

/* One FDE: its rows, in descriptors that end where a row cannot be said. */
static void convert_fde(const struct cie *cie, struct cur c, struct stats *st)
{
	struct runner r = { .cie = cie };
	uint64_t start, range, end;
	bool inexact = false;
	size_t before = nfdes;
	struct cur ci;

	start = pointer(&c, cie->fde_enc, true);
	range = pointer(&c, cie->fde_enc & 0x0f, false);
	if (cie->aug_z) {
		uint64_t len = uleb(&c);

		if (len > (uint64_t)(c.end - c.p)) {
			c.bad = true;
		} else {
			c.p += len;
			c.addr += len;
		}
	}
	if (c.bad || !range || start + range < start) {
		st->why[WHY_BAD]++;
		st->none++;
		return;
	}
	st->fdes++;
	end = start + range;
	last_why = -1;

	/* The CIE's initial instructions give the initial state. */
	r.s.cfa_reg = DW_RSP;
	r.s.cfa_off = 8;
	r.loc = start;
	ci = (struct cur){ .p = cie->insns, .end = cie->insns_end,
			   .addr = cie->insns_addr };
	r.init = r.s;
	while (ci.p < ci.end && !ci.bad && !r.bad)
		step(&r, &ci, cie->fde_enc);
	r.init = r.s;
	if (ci.bad || r.bad) {
		st->why[WHY_BAD]++;
		st->none++;
		return;
	}

	while (c.p < c.end && !c.bad && !r.bad && r.loc < end) {
		struct state before_step = r.s;
		uint64_t loc = step(&r, &c, cie->fde_enc);

		if (loc != r.loc) {
			if (loc < r.loc) {
				r.bad = true;
				break;
			}
			emit(r.loc, &before_step, cie->signal, st->why, &inexact);
			r.loc = loc;
		}
	}
	if (c.bad || r.bad) {
		/* Rows up to here are good; nothing after is said. */
		close_fde(r.loc < end ? r.loc : end);
		st->why[WHY_BAD]++;
		inexact = true;
	} else if (r.loc < end) {
		emit(r.loc, &r.s, cie->signal, st->why, &inexact);
	}
	close_fde(end);
	if (!inexact)
		st->exact++;
	else if (nfdes > before)
		st->partial++;
	else
		st->none++;
}

/* The CIE an FDE at @body (its CIE pointer) names, parsed into @cie. */
static bool fde_cie(const struct object *o, const uint8_t *body,
		    uint32_t id, struct cie *cie)
{
	const uint8_t *end = o->eh_frame + o->eh_frame_len;
	const uint8_t *cp = body - id, *cbody = cp + 4;
	uint64_t clen;

	if (cp < o->eh_frame || end - cp < 4)
		return false;
	clen = *(const uint32_t *)cp;
	if (clen == 0xffffffff) {
		if (end - cp < 12)
			return false;
		memcpy(&clen, cp + 4, 8);
		cbody = cp + 12;
	}
	if (clen < 4 || clen > (uint64_t)(end - cbody) || *(const uint32_t *)cbody)
		return false;
	return parse_cie((struct cur){
				.p = cbody + 4, .end = cbody + clen,
				.addr = o->eh_frame_addr + (cbody + 4 - o->eh_frame),
			 }, cie);
}

/* Walk .eh_frame: CIEs as FDEs name them, FDEs in their order. */
int convert(const struct object *o, struct stats *st)
{
	const uint8_t *p = o->eh_frame, *end = p + o->eh_frame_len;

	if (!p)
		return -ENOENT;
	while (end - p >= 4) {
		uint64_t len = *(const uint32_t *)p;
		const uint8_t *body = p + 4;
		struct cie cie;
		uint32_t id;

		if (!len)
			break;			/* the terminator */
		if (len == 0xffffffff) {
			if (end - p < 12)
				return -EINVAL;
			memcpy(&len, p + 4, 8);
			body = p + 12;
		}
		if (len < 4 || len > (uint64_t)(end - body))
			return -EINVAL;
		id = *(const uint32_t *)body;
		if (id && !fde_cie(o, body, id, &cie)) {
			st->why[WHY_BAD]++;
			st->none++;
		} else if (id) {
			convert_fde(&cie, (struct cur){
					.p = body + 4, .end = body + len,
					.addr = o->eh_frame_addr + (body + 4 - o->eh_frame),
				    }, st);
		}
		p = body + len;
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct out_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort the descriptors; drop any that overlaps the one before it. */
void finish(struct stats *st)
{
	fde_open = false;
	size_t n = 0;

	qsort(fdes, nfdes, sizeof(*fdes), cmp_fde);
	for (size_t i = 0; i < nfdes; i++) {
		if (n && fdes[i].start < fdes[n - 1].end) {
			st->why[WHY_BAD]++;
			continue;
		}
		fdes[n++] = fdes[i];
	}
	nfdes = n;
	st->rows = 0;
	for (size_t i = 0; i < nfdes; i++)
		st->rows += fdes[i].nr;
}

static int width(int64_t v)
{
	if (v >= INT8_MIN && v <= INT8_MAX)
		return 0;
	if (v >= INT16_MIN && v <= INT16_MAX)
		return 1;
	return 2;
}

static void put(uint8_t **p, uint64_t v, int n)
{
	memcpy(*p, &v, n);
	*p += n;
}

/* Does descriptor @f need version 3's flexible rows? */
static bool fde_flex(const struct out_fde *f)
{
	for (uint32_t k = 0; k < f->nr; k++)
		if (rows[f->first + k].flex)
			return true;
	return false;
}

/*
 * A row's data words: the CFA's offset, then the saved %rbp's if any; in
 * a flexible row, (control, offset) pairs for the CFA, the return address
 * (one zero word where it is at CFA - 8) and %rbp. Returns their number.
 */
static int row_words(const struct row *r, bool flex, int64_t w[6])
{
	int n = 0;

	if (!flex) {
		w[n++] = r->cfa;
		if (r->fp_saved)
			w[n++] = r->fp;
		return n;
	}
	w[n++] = SFRAME_FLEX_REGNUM(r->cfa_reg) | SFRAME_FLEX_REG |
		 (r->cfa_deref ? SFRAME_FLEX_DEREF : 0);
	w[n++] = r->cfa;
	if (r->ra_reg) {
		w[n++] = SFRAME_FLEX_REGNUM(r->ra_reg - 1) | SFRAME_FLEX_REG |
			 SFRAME_FLEX_DEREF;
		w[n++] = r->ra;
	} else if (r->fp_saved) {
		w[n++] = 0;
	}
	if (r->fp_saved) {
		w[n++] = r->fp_reg ? SFRAME_FLEX_REGNUM(r->fp_reg - 1) |
				     SFRAME_FLEX_REG | SFRAME_FLEX_DEREF :
				     SFRAME_FLEX_DEREF;
		w[n++] = r->fp;
	}
	return n;
}

/*
 * The SFrame section, into a buffer of @*len bytes: version 2, or
 * version 3 if a descriptor needs flexible rows or marks a signal frame.
 * Version 3 splits a descriptor in two: an index entry, and attributes
 * (row count, info bytes, block size) at the head of its rows.
 */
uint8_t *write_sframe(size_t *len)
{
	size_t fre_max = 0, fre_len, fde_size;
	uint8_t *buf, *p, *fre;
	bool v3 = false;

	for (size_t i = 0; i < nfdes; i++) {
		fre_max += SFRAME_FDA_V3_SIZE + fdes[i].nr * (4 + 1 + 6 * 4);
		v3 |= fdes[i].signal || fde_flex(&fdes[i]);
	}
	fde_size = v3 ? SFRAME_FDE_V3_SIZE : SFRAME_FDE_V2_SIZE;
	buf = calloc(1, SFRAME_HDR_SIZE + nfdes * fde_size + fre_max + 1);
	if (!buf)
		die("out of memory");
	fre = buf + SFRAME_HDR_SIZE + nfdes * fde_size;
	p = fre;
	for (size_t i = 0; i < nfdes; i++) {
		struct out_fde *f = &fdes[i];
		uint64_t size = f->end - f->start;
		uint8_t *d = buf + SFRAME_HDR_SIZE + i * fde_size;
		int atype = size <= 0x100 ? SFRAME_FRE_ADDR1 :
			    size <= 0x10000 ? SFRAME_FRE_ADDR2 : SFRAME_FRE_ADDR4;
		uint8_t info = atype | (f->rep ? 0x10 : 0) |
			       (f->signal ? SFRAME_FDE_SIGNAL : 0);
		bool flex = fde_flex(f);
		uint32_t fre_off = p - fre;

		if (f->start > INT32_MAX || size > UINT32_MAX ||
		    (v3 && f->nr > UINT16_MAX))
			die("function at %#llx does not fit SFrame's fields",
			    (unsigned long long)f->start);
		if (v3) {
			put(&p, f->nr, 2);
			put(&p, info, 1);
			put(&p, flex ? SFRAME_FDE_TYPE_FLEX : 0, 1);
			put(&p, f->rep, 1);
		}
		for (uint32_t k = 0; k < f->nr; k++) {
			const struct row *r = &rows[f->first + k];
			int64_t words[6];
			int n = row_words(r, flex, words), w = 0;

			for (int j = 0; j < n; j++)
				if (width(words[j]) > w)
					w = width(words[j]);
			put(&p, r->pc - f->start, 1 << atype);
			put(&p, (flex ? 0 : r->cfa_sp) | n << 1 | w << 5, 1);
			for (int j = 0; j < n; j++)
				put(&p, (uint32_t)words[j], 1 << w);
		}
		put(&d, f->start, v3 ? 8 : 4);
		put(&d, size, 4);
		put(&d, fre_off, 4);
		if (!v3) {
			put(&d, f->nr, 4);
			put(&d, info, 1);
			put(&d, f->rep, 1);
		}
	}
	fre_len = p - fre;
	p = buf;
	put(&p, SFRAME_MAGIC, 2);
	put(&p, v3 ? SFRAME_VERSION_3 : SFRAME_VERSION_2, 1);
	put(&p, SFRAME_F_FDE_SORTED, 1);
	put(&p, SFRAME_ABI_AMD64, 1);
	put(&p, 0, 1);				/* no fixed FP offset */
	put(&p, (uint8_t)-8, 1);		/* RA at CFA - 8 */
	put(&p, 0, 1);				/* no aux header */
	put(&p, nfdes, 4);
	put(&p, nrows, 4);
	put(&p, fre_len, 4);
	put(&p, 0, 4);				/* FDEs right after */
	put(&p, nfdes * fde_size, 4);
	*len = SFRAME_HDR_SIZE + nfdes * fde_size + fre_len;
	return buf;
}

/* The converted row at @pc, or NULL: for -c. */
static const struct row *row_at(uint64_t pc)
{
	size_t lo = 0, hi = nfdes;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (fdes[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= fdes[lo - 1].end)
		return NULL;
	if (fdes[lo - 1].rep)
		pc = fdes[lo - 1].start + (pc - fdes[lo - 1].start) % fdes[lo - 1].rep;
	for (uint32_t k = fdes[lo - 1].nr; k--;) {
		const struct row *r = &rows[fdes[lo - 1].first + k];

		if (r->pc <= pc)
			return r;
	}
	return NULL;
}

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);
	return v;
}

static int64_t rds(const uint8_t *p, int n)
{
	if (n == 1)
		return (int8_t)p[0];
	if (n == 2)
		return (int16_t)rd(p, 2);
	return (int32_t)rd(p, 4);
}

/*
 * -c: the object's own SFrame (PT_GNU_SFRAME, version 1 or 2) against
 * ours, at every byte of every function both describe.
 */
int compare(const struct object *o)
{
	unsigned long same = 0, differ = 0, only_theirs = 0, pcmask = 0;
	const Elf64_Phdr *sf = NULL;
	const uint8_t *s, *fde, *fre;
	uint32_t n, fde_size;
	int version;

	for (int i = 0; i < o->eh->e_phnum; i++)
		if (o->ph[i].p_type == PT_GNU_SFRAME)
			sf = &o->ph[i];
	if (!sf || sf->p_offset > o->size || sf->p_filesz > o->size - sf->p_offset ||
	    sf->p_filesz < SFRAME_HDR_SIZE)
		die("%s: no SFrame section of its own to check against", o->path);
	s = o->image + sf->p_offset;
	version = s[2];
	if (rd(s, 2) != SFRAME_MAGIC || (version != 1 && version != 2) || s[7])
		die("%s: an SFrame section this check does not read", o->path);
	fde_size = version == 1 ? SFRAME_FDE_V1_SIZE : SFRAME_FDE_V2_SIZE;
	n = rd(s + 8, 4);
	fde = s + SFRAME_HDR_SIZE + rd(s + 20, 4);
	fre = s + SFRAME_HDR_SIZE + rd(s + 24, 4);
	if ((uint64_t)(fde - s) + (uint64_t)n * fde_size > sf->p_filesz ||
	    (uint64_t)(fre - s) + rd(s + 16, 4) > sf->p_filesz)
		die("%s: SFrame counts past the section", o->path);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *d = fde + i * fde_size;
		uint64_t start = sf->p_vaddr + (int32_t)rd(d, 4);
		uint32_t size = rd(d + 4, 4), nr = rd(d + 12, 4);
		uint8_t info = d[16], rep = 0;
		int asize = 1 << (info & 0xf);
		const uint8_t *r = fre + rd(d + 8, 4), *s_end = s + sf->p_filesz;
		uint64_t *starts;
		struct row *theirs;

		if (version == 2 && (s[3] & 0x4))
			start = sf->p_vaddr + (d - s) + (int32_t)rd(d, 4);
		if (info & 0x10)
			rep = version == 1 ? 16 : d[17];
		if (info & 0x10 && !rep) {
			pcmask++;
			continue;
		}
		/* The object's own table is input too: bound what it claims. */
		if (nr > sf->p_filesz / 2 || size > (256u << 20) || r < s || r > s_end)
			die("%s: SFrame function %u claims more than its section holds",
			    o->path, i);
		starts = calloc(nr + 1, sizeof(*starts));
		theirs = calloc(nr + 1, sizeof(*theirs));
		if (!starts || !theirs)
			die("out of memory");
		for (uint32_t k = 0; k < nr; k++) {
			uint8_t ri;
			int w, cnt;

			if (s_end - r < asize + 1)
				die("%s: SFrame rows past the section", o->path);
			ri = r[asize];
			w = 1 << ((ri >> 5) & 3);
			cnt = (ri >> 1) & 0xf;
			if (s_end - r < asize + 1 + cnt * w)
				die("%s: SFrame rows past the section", o->path);
			starts[k] = start + rd(r, asize);
			theirs[k].cfa_sp = ri & 1;
			theirs[k].cfa_reg = ri & 1 ? DW_RSP : DW_RBP;
			theirs[k].cfa = rds(r + asize + 1, w);
			theirs[k].fp_saved = cnt > 1;
			theirs[k].fp = cnt > 1 ? rds(r + asize + 1 + w, w) : 0;
			r += asize + 1 + cnt * w;
		}
		for (uint64_t pc = start, k = 0; nr && pc < start + size; pc++) {
			const struct row *mine = row_at(pc);
			uint64_t q = rep ? start + (pc - start) % rep : pc;

			if (rep)
				k = 0;
			while (k + 1 < nr && starts[k + 1] <= q)
				k++;
			if (starts[k] > q)
				continue;
			if (!mine)
				only_theirs++;
			else if (mine->flex)
				continue;	/* said only by version 3 */
			else if (same_row(mine, &theirs[k]))
				same++;
			else if (differ++ < 10)
				fprintf(stderr,
					"%s: at %#llx: theirs cfa=%s%+d fp=%d:%+d, ours cfa=%s%+d fp=%d:%+d\n",
					o->path, (unsigned long long)pc,
					theirs[k].cfa_sp ? "sp" : "fp", theirs[k].cfa,
					theirs[k].fp_saved, theirs[k].fp,
					mine->cfa_sp ? "sp" : "fp", mine->cfa,
					mine->fp_saved, mine->fp);
		}
		free(starts);
		free(theirs);
	}
	printf("%s: %lu bytes agree, %lu differ, %lu only in its own table, ",
	       o->path, same, differ, only_theirs);
	printf("%lu PC-mask functions without a block size\n", pcmask);
	return differ ? 1 : 0;
}

void reset(void)
{
	nrows = 0;
	nfdes = 0;
	fde_open = false;
	plt_open = false;
}

void fprint_stats(FILE *f, const char *path, const struct stats *st)
{
	fprintf(f, "%s: fdes=%lu exact=%lu partial=%lu none=%lu rows=%lu",
		path, st->fdes, st->exact, st->partial, st->none, st->rows);
	for (int w = 0; w < WHY_NR; w++)
		if (st->why[w])
			fprintf(f, " %s=%lu", why_name[w], st->why[w]);
	fputc('\n', f);
}

void print_stats(const char *path, const struct stats *st)
{
	fprint_stats(stdout, path, st);
}

