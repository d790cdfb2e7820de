// SPDX-License-Identifier: GPL-2.0
/*
 * The frame of 64-bit user code that keeps no frame pointer and has no
 * table, found by reading the code from the IP to the function's return.
 *
 * A C library built without frame pointers (most distributions build it
 * so) leaves its system call wrappers and the functions that call them,
 * stdio's among others, with frames that the frame pointer does not
 * describe: a walk by frame pointers skips them, or goes on from whatever
 * %rbp holds. Yet compiled code keeps the stack pointer's distance to the
 * return address fixed at every instruction: every path from an IP to the
 * function's "ret" pops and adds back what the prologue pushed and
 * subtracted. Following those paths forward, decoding each instruction,
 * gives that distance, which is the frame's CFA, and where the caller's
 * %rbp comes back from.
 *
 * The reading follows both ways of a conditional branch, direct jumps and
 * tail calls, and steps over calls, which return with the stack as it was.
 * It is exact or gives up: it gives up at any write to %rsp other than
 * push, pop, add, sub, lea and leave, at an indirect jump other than a
 * tail call through memory, at instructions it does not know, when two
 * paths disagree on the stack at the same instruction or at their
 * returns, and after RETPATH_INSNS instructions. The walk checks that
 * each return address it reads by such a frame follows a call.
 *
 * A call to a function that does not return, as the last instruction of
 * a function, runs on into the next one, whose frame a way would then
 * describe. The x86-64 psABI tells such a way apart: a function is
 * entered with its stack pointer one word off a multiple of 16, so the
 * stack is 16-byte aligned at every call it makes and one word off at
 * its return, whatever it did in between. A way run into another
 * function is one word off at both: it ends there, and is not taken for
 * the frame's. The stack pointer is known, the frame's SP (the interrupted
 * one after a system call, 16-byte aligned at a return address), so the
 * check holds at every frame read. Hence a function too large to read
 * whole is described by one return, and an indirect jump (a switch's
 * table) ends its way, not the reading. A function called with a stack
 * against the psABI is not read, or read wrongly: only its own process
 * makes such calls, and the return addresses read after it are checked
 * as any other.
 *
 * Task context, page faults allowed: the code is read with
 * copy_from_user(). The work is bounded by the instructions decoded, not
 * by what the code holds.
 */
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <asm/insn.h>
#include <asm/unwind_user.h>

/* Instructions one frame's reading decodes, at most. */
#define RETPATH_INSNS		1024
/* Branch targets it keeps: those waiting, and those read. */
#define RETPATH_TODO		32
#define RETPATH_SEEN		48
/* The largest frame it follows (offsets are kept in 16 bits). */
#define RETPATH_FRAME_MAX	0x7000
/* Bytes of code read at once. */
#define RETPATH_WINDOW		64

#define RETPATH_RSP		4
#define RETPATH_RBP		5

/* The stack pointer is the frame's SP, or its FP, plus an offset. */
enum retpath_base {
	RETPATH_BASE_SP,
	RETPATH_BASE_FP,
};

/* Where the caller's %rbp is at an instruction. */
enum retpath_fp {
	RETPATH_FP_SAME,	/* still in %rbp */
	RETPATH_FP_SAVED,	/* popped from the stack at base + fp_off */
	RETPATH_FP_LOST,	/* %rbp was written with something else */
};

/*
 * The stack and %rbp at an instruction, relative to the frame's registers
 * at the IP the reading started from. The words at and above @floor (from
 * the SP base) still hold what they held at that IP; below it, the way
 * may have written them. The last "push %rbp" on the way, at @push_off,
 * saved %rbp as @push_fp and @push_fp_off say.
 */
struct retpath_where {
	unsigned long	ip;
	s16		off;
	s16		fp_off;
	s16		floor;
	s16		push_off;
	s16		push_fp_off;
	u8		base;
	u8		fp;
	u8		push_fp;
	bool		pushed;
	bool		grown;
};

struct retpath {
	unsigned long		lo, hi;		/* the mapping of the code */
	unsigned long		start;		/* code in buf */
	unsigned int		len;
	unsigned int		insns;
	unsigned int		ntodo;
	unsigned int		nseen;
	bool			found;
	u8			sp_low;		/* the frame's SP, mod 16 */
	struct retpath_where	out;		/* at the return */
	u8			todo[RETPATH_TODO]; /* into seen[] */
	struct retpath_where	seen[RETPATH_SEEN];
	u8			buf[RETPATH_WINDOW];
};

/* What an instruction does to the way out. */
enum retpath_insn {
	RETPATH_NEXT,		/* go on after it */
	RETPATH_CALL,		/* go on after it, if the callee returns */
	RETPATH_JUMP,		/* go on at the target */
	RETPATH_BRANCH,		/* both: the target and after it */
	RETPATH_RETURN,		/* the frame ends: ret, or a tail call */
	RETPATH_TRAP,		/* this way never returns (ud2, hlt, int3) */
	RETPATH_INDIRECT,	/* a jump through a register or a table */
	RETPATH_FAIL,		/* not followed: give up */
};

/*
 * Decode the instruction at @ip, reading the code as needed. Code
 * outside the mapping that holds the frame's IP is not read: a branch
 * there may lead into another file's pages (FUSE, userfaultfd) whose
 * read the process could stall, and it is not the function's own code.
 */
static bool retpath_decode(struct retpath *rp, unsigned long ip,
			   struct insn *insn)
{
	unsigned long end = rp->start + rp->len;
	unsigned int want;

	if (ip < rp->lo || ip >= rp->hi)
		return false;
	if (ip < rp->start || ip >= end ||
	    (end - ip < MAX_INSN_SIZE && rp->len == RETPATH_WINDOW)) {
		want = min_t(unsigned long, RETPATH_WINDOW, rp->hi - ip);
		rp->start = ip;
		rp->len = want - copy_from_user(rp->buf, (void __user *)ip,
						want);
		end = ip + rp->len;
	}
	return !insn_decode(insn, rp->buf + (ip - rp->start), end - ip,
			    INSN_MODE_64);
}

/* The registers a ModRM instruction names, with their REX extensions. */
static int retpath_modrm_reg(const struct insn *insn)
{
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;

	return X86_MODRM_REG(insn->modrm.bytes[0]) + (X86_REX_R(rex) ? 8 : 0);
}

/* The r/m register, or -1 for a memory operand. */
static int retpath_modrm_rm(const struct insn *insn)
{
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;

	if (X86_MODRM_MOD(insn->modrm.bytes[0]) != 3)
		return -1;
	return X86_MODRM_RM(insn->modrm.bytes[0]) + (X86_REX_B(rex) ? 8 : 0);
}

/*
 * May the instruction write general register @r (%rsp or %rbp)? The
 * stack's own instructions are handled before this is asked. Unknown
 * forms that name the register are taken as writing it.
 */
static bool retpath_writes(struct insn *insn, int r)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	int embedded = (op & 7) + (X86_REX_B(rex) ? 8 : 0);
	int reg = -1, rm = -1, mreg;

	if (insn->modrm.nbytes) {
		reg = retpath_modrm_reg(insn);
		rm = retpath_modrm_rm(insn);
	}
	if (insn_is_avx(insn) || insn_is_evex(insn)) {
		/* Register numbers may be vector registers: low bits only. */
		/* vvvv, inverted: VEX's last prefix byte, EVEX's third */
		mreg = insn->vex_prefix.bytes[insn_is_evex(insn) ? 2 :
					      insn->vex_prefix.nbytes - 1];
		mreg = ~X86_VEX_V(mreg) & 7;
		return (insn->modrm.nbytes &&
			((reg & 7) == r || (rm >= 0 && (rm & 7) == r))) ||
		       mreg == r;
	}
	if (insn_is_rex2(insn))
		return true;

	if (insn->opcode.nbytes == 1) {
		/* xchg with %rax, mov immediate to a register */
		if ((op & 0xf8) == 0x90 || (op & 0xf0) == 0xb0)
			return embedded == r && op != 0x90;
		if (!insn->modrm.nbytes)
			return false;
		switch (op) {
		case 0x38: case 0x39: case 0x3a: case 0x3b:	/* cmp */
		case 0x84: case 0x85:				/* test */
			return false;
		case 0x80: case 0x81: case 0x83:		/* ALU imm */
			return X86_MODRM_REG(insn->modrm.bytes[0]) != 7 &&
			       rm == r;
		case 0xf6: case 0xf7:		/* test, not, neg, mul, div */
			mreg = X86_MODRM_REG(insn->modrm.bytes[0]);
			return (mreg == 2 || mreg == 3) && rm == r;
		case 0xfe: case 0xff:	/* inc, dec; calls, jumps, push */
			return X86_MODRM_REG(insn->modrm.bytes[0]) <= 1 &&
			       rm == r;
		case 0x00: case 0x01: case 0x08: case 0x09:	/* op r/m, reg */
		case 0x10: case 0x11: case 0x18: case 0x19:
		case 0x20: case 0x21: case 0x28: case 0x29:
		case 0x30: case 0x31: case 0x88: case 0x89:
		case 0xc0: case 0xc1: case 0xd0: case 0xd1:	/* shifts */
		case 0xd2: case 0xd3: case 0xc6: case 0xc7:	/* mov imm */
			return rm == r;
		case 0x02: case 0x03: case 0x0a: case 0x0b:	/* op reg, r/m */
		case 0x12: case 0x13: case 0x1a: case 0x1b:
		case 0x22: case 0x23: case 0x2a: case 0x2b:
		case 0x32: case 0x33: case 0x63: case 0x69:
		case 0x6b: case 0x8a: case 0x8b: case 0x8d:
			return reg == r;
		}
		return reg == r || rm == r;
	}
	if (insn->opcode.nbytes == 2 && op == 0x0f) {
		if (op2 >= 0xc8 && op2 <= 0xcf)			/* bswap */
			return embedded == r;
		if ((op2 >= 0x40 && op2 <= 0x4f) ||		/* cmov */
		    op2 == 0xaf || op2 == 0xb6 || op2 == 0xb7 ||
		    op2 == 0xbe || op2 == 0xbf || op2 == 0xbc ||
		    op2 == 0xbd || op2 == 0xb8 || op2 == 0x02 ||
		    op2 == 0x03 || op2 == 0x50 || op2 == 0xd7 ||
		    op2 == 0x2c || op2 == 0x2d || op2 == 0xc5)
			return reg == r;
		if ((op2 >= 0x90 && op2 <= 0x9f) ||		/* setcc */
		    op2 == 0xa4 || op2 == 0xa5 || op2 == 0xac ||
		    op2 == 0xad || op2 == 0xab || op2 == 0xb3 ||
		    op2 == 0xbb || op2 == 0xba || op2 == 0xb0 ||
		    op2 == 0xb1 || op2 == 0x7e || op2 == 0xc7 ||
		    op2 == 0x00 || op2 == 0x78)
			return rm == r;
		if (op2 == 0xc0 || op2 == 0xc1 || op2 == 0x01)	/* xadd */
			return reg == r || rm == r;
		/* The rest write vector, flag or fixed registers. */
		return false;
	}
	/* Three-byte maps: any named register may be written. */
	return insn->modrm.nbytes && (reg == r || rm == r);
}

/* Is the r/m operand disp(%rsp), with no index? Sets *@disp. */
static bool retpath_rsp_mem(struct insn *insn, s32 *disp)
{
	u8 modrm = insn->modrm.bytes[0], sib = insn->sib.bytes[0];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;

	if (X86_MODRM_MOD(modrm) == 3 || X86_MODRM_RM(modrm) != 4 ||
	    X86_REX_B(rex) || X86_REX_X(rex) || X86_SIB_BASE(sib) != 4 ||
	    X86_SIB_INDEX(sib) != 4)
		return false;
	*disp = insn->displacement.value;
	return true;
}

/*
 * %rsp moves by @delta bytes: a push or a subtraction grows the stack,
 * and the words below are the way's; a pop or an addition shrinks it.
 * False for a move no frame makes.
 */
static bool retpath_move(struct retpath_where *w, s64 delta)
{
	if (delta < -RETPATH_FRAME_MAX || delta > RETPATH_FRAME_MAX)
		return false;
	if (delta < 0) {
		if (w->base == RETPATH_BASE_SP)
			w->floor = max(w->floor, w->off);
		w->grown = true;
	}
	delta += w->off;
	if (delta < -RETPATH_FRAME_MAX || delta > RETPATH_FRAME_MAX)
		return false;
	w->off = delta;
	if (w->pushed && w->off > w->push_off)
		w->pushed = false;
	return true;
}

/*
 * %rsp = %rbp + @off: the frame's own frame pointer, while %rbp still
 * holds the frame's FP and the way has not written the stack (which it
 * could not place against the FP). The words at and above the FP hold
 * the frame's record.
 */
static bool retpath_to_fp(struct retpath_where *w, s64 off)
{
	if (w->fp != RETPATH_FP_SAME || w->grown ||
	    w->base != RETPATH_BASE_SP || off < -RETPATH_FRAME_MAX ||
	    off > RETPATH_FRAME_MAX)
		return false;
	w->base = RETPATH_BASE_FP;
	w->off = off;
	return true;
}

/* %rbp is loaded from the stack, at @slot from the base. */
static void retpath_load_fp(struct retpath_where *w, s64 slot)
{
	if (slot < -RETPATH_FRAME_MAX || slot > RETPATH_FRAME_MAX) {
		w->fp = RETPATH_FP_LOST;
	} else if (w->pushed && slot == w->push_off) {
		/* What the way's own "push %rbp" saved. */
		w->fp = w->push_fp;
		w->fp_off = w->push_fp_off;
	} else if (w->base == RETPATH_BASE_SP ? slot >= w->floor :
						slot >= 0) {
		w->fp = RETPATH_FP_SAVED;
		w->fp_off = slot;
	} else {
		w->fp = RETPATH_FP_LOST;
	}
}

/*
 * Follow one instruction: update @w and say where the way goes on
 * (*@target for a jump or branch).
 */
static enum retpath_insn retpath_insn(struct insn *insn,
				      struct retpath_where *w,
				      unsigned long *target)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	u8 modrm = insn->modrm.bytes[0];
	int reg = -1, rm = -1;
	s32 disp;

	*target = w->ip + insn->length + insn->immediate.value;
	if (insn->modrm.nbytes) {
		reg = retpath_modrm_reg(insn);
		rm = retpath_modrm_rm(insn);
	}
	if (insn_is_avx(insn) || insn_is_evex(insn) || insn_is_rex2(insn))
		goto other;

	if (insn->opcode.nbytes == 2 && op == 0x0f) {
		if (op2 >= 0x80 && op2 <= 0x8f)			/* jcc rel32 */
			return insn->opnd_bytes == 2 ? RETPATH_FAIL :
						       RETPATH_BRANCH;
		if (op2 == 0x0b || op2 == 0xb9 || op2 == 0xff)	/* ud2, ud1, ud0 */
			return RETPATH_TRAP;
		if (op2 == 0x05)				/* syscall */
			return RETPATH_NEXT;
		if (op2 == 0x07 || op2 == 0x34 || op2 == 0x35)	/* sysret... */
			return RETPATH_FAIL;
		goto other;
	}
	if (insn->opcode.nbytes != 1)
		goto other;

	switch (op) {
	case 0xc3: case 0xc2:					/* ret */
		return RETPATH_RETURN;
	case 0xe8:						/* call */
		return RETPATH_CALL;
	case 0xe9: case 0xeb:					/* jmp */
		return RETPATH_JUMP;
	case 0x70 ... 0x7f:					/* jcc */
	case 0xe0 ... 0xe3:				/* loop, jrcxz */
		return RETPATH_BRANCH;
	case 0xcc: case 0xcd: case 0xf4:		/* int3, int, hlt */
		return RETPATH_TRAP;
	case 0xc8: case 0xca: case 0xcb: case 0xcf:	/* enter, lret, iret */
		return RETPATH_FAIL;
	case 0x50 ... 0x57:					/* push reg */
	case 0x68: case 0x6a: case 0x9c:		/* push imm, pushf */
		if (insn->opnd_bytes != 8)
			return RETPATH_FAIL;
		if (!retpath_move(w, -8))
			return RETPATH_FAIL;
		if (op == 0x55 && !X86_REX_B(rex)) {		/* push %rbp */
			w->pushed = true;
			w->push_off = w->off;
			w->push_fp = w->fp;
			w->push_fp_off = w->fp_off;
		}
		return RETPATH_NEXT;
	case 0x58 ... 0x5f:					/* pop reg */
	case 0x9d:						/* popf */
		if (insn->opnd_bytes != 8)
			return RETPATH_FAIL;
		if (op == 0x5c && !X86_REX_B(rex))		/* pop %rsp */
			return RETPATH_FAIL;
		if (op == 0x5d && !X86_REX_B(rex))		/* pop %rbp */
			retpath_load_fp(w, w->off);
		return retpath_move(w, 8) ? RETPATH_NEXT : RETPATH_FAIL;
	case 0x8f:						/* pop r/m */
		if (insn->opnd_bytes != 8 || rm == RETPATH_RSP)
			return RETPATH_FAIL;
		if (rm == RETPATH_RBP)
			retpath_load_fp(w, w->off);
		return retpath_move(w, 8) ? RETPATH_NEXT : RETPATH_FAIL;
	case 0xc9:						/* leave */
		if (!retpath_to_fp(w, 0))
			return RETPATH_FAIL;
		retpath_load_fp(w, 0);
		return retpath_move(w, 8) ? RETPATH_NEXT : RETPATH_FAIL;
	case 0xff:
		switch (X86_MODRM_REG(modrm)) {
		case 2: case 3:					/* call */
			return RETPATH_CALL;
		case 4:						/* jmp */
			/* Through memory at a RIP offset: a tail call. */
			if (X86_MODRM_MOD(modrm) == 0 && X86_MODRM_RM(modrm) == 5)
				return RETPATH_RETURN;
			return RETPATH_INDIRECT;
		case 5:
			return RETPATH_FAIL;
		case 6:						/* push */
			if (insn->opnd_bytes != 8)
				return RETPATH_FAIL;
			return retpath_move(w, -8) ? RETPATH_NEXT :
						     RETPATH_FAIL;
		}
		break;
	case 0x81: case 0x83:				/* add/sub imm, %rsp */
		if (rm != RETPATH_RSP)
			break;
		if (!X86_REX_W(rex))
			return RETPATH_FAIL;
		switch (X86_MODRM_REG(modrm)) {
		case 0:
			return retpath_move(w, insn->immediate.value) ?
			       RETPATH_NEXT : RETPATH_FAIL;
		case 5:
			return retpath_move(w, -(s64)insn->immediate.value) ?
			       RETPATH_NEXT : RETPATH_FAIL;
		case 7:
			return RETPATH_NEXT;
		}
		return RETPATH_FAIL;
	case 0x8d:					/* lea disp(%rsp/%rbp), %rsp */
		if (reg != RETPATH_RSP)
			break;
		if (!X86_REX_W(rex) || insn->addr_bytes != 8)
			return RETPATH_FAIL;
		if (retpath_rsp_mem(insn, &disp))
			return retpath_move(w, disp) ? RETPATH_NEXT :
						       RETPATH_FAIL;
		if (X86_MODRM_MOD(modrm) != 0 && X86_MODRM_MOD(modrm) != 3 &&
		    X86_MODRM_RM(modrm) == 5 && !X86_REX_B(rex) &&
		    retpath_to_fp(w, insn->displacement.value))
			return RETPATH_NEXT;
		return RETPATH_FAIL;
	case 0x89: case 0x8b:				/* mov %rbp, %rsp */
		if ((op == 0x89 && rm == RETPATH_RSP && reg == RETPATH_RBP) ||
		    (op == 0x8b && reg == RETPATH_RSP && rm == RETPATH_RBP)) {
			if (!X86_REX_W(rex) || !retpath_to_fp(w, 0))
				return RETPATH_FAIL;
			return RETPATH_NEXT;
		}
		/* mov disp(%rsp), %rbp: the caller's, from its slot */
		if (op == 0x8b && reg == RETPATH_RBP && X86_REX_W(rex) &&
		    retpath_rsp_mem(insn, &disp)) {
			retpath_load_fp(w, (s64)w->off + disp);
			return RETPATH_NEXT;
		}
		break;
	}
other:
	if (retpath_writes(insn, RETPATH_RSP))
		return RETPATH_FAIL;
	if (retpath_writes(insn, RETPATH_RBP))
		w->fp = RETPATH_FP_LOST;
	return RETPATH_NEXT;
}

/* Do two ways agree on the frame at a return? */
static bool retpath_same(const struct retpath_where *a,
			 const struct retpath_where *b)
{
	return a->off == b->off && a->base == b->base && a->fp == b->fp &&
	       (a->fp != RETPATH_FP_SAVED || a->fp_off == b->fp_off);
}

/*
 * Do two ways agree on the stack where they meet? A function that uses
 * %rbp for its own values saved the caller's first and pops it before
 * every return, so one way may meet another having written %rbp, the
 * other not: the register is popped after, either way. Where the
 * caller's %rbp was popped from must agree.
 */
static bool retpath_meet(const struct retpath_where *a,
			 const struct retpath_where *b)
{
	bool a_saved = a->fp == RETPATH_FP_SAVED;
	bool b_saved = b->fp == RETPATH_FP_SAVED;

	if (a->off != b->off || a->base != b->base || a_saved != b_saved)
		return false;
	return !a_saved || a->fp_off == b->fp_off;
}

/* How a reading, or one way of it, ends. */
enum retpath_end {
	RETPATH_DONE,		/* the way ended: a return, a trap, a meeting */
	RETPATH_FULL,		/* the reading spent its budget or tables */
	RETPATH_GIVE_UP,	/* the code cannot be followed, or ways disagree */
};

/*
 * Note the way at a branch target. Return: 1 if it is new, 0 if a way
 * reached the target before with the same stack, -1 if with another
 * stack, -2 if the reading keeps no more targets, 2 if with the same
 * stack but the caller's %rbp elsewhere: rp->seen[*@idx] is then to be
 * followed again with it lost.
 *
 * A load of %rbp from the frame is taken for the caller's %rbp, restored
 * (retpath_load_fp()); it may be a local that a function using %rbp for
 * its own values loads on one way only. From where the ways meet, the
 * caller's %rbp is known again only where a pop restores it: a return
 * that comes before says nothing, and the reading gives up there.
 */
static int retpath_mark(struct retpath *rp, const struct retpath_where *w,
			unsigned int *idx)
{
	unsigned int i;

	for (i = 0; i < rp->nseen; i++) {
		struct retpath_where *seen = &rp->seen[i];

		if (seen->ip != w->ip)
			continue;
		if (retpath_meet(seen, w))
			return 0;
		if (seen->off != w->off || seen->base != w->base)
			return -1;
		/* Lost is the least a way knows: followed once at most. */
		if (seen->fp == RETPATH_FP_LOST)
			return 0;
		seen->fp = RETPATH_FP_LOST;
		*idx = i;
		return 2;
	}
	if (rp->nseen == RETPATH_SEEN)
		return -2;
	rp->seen[rp->nseen++] = *w;
	return 1;
}

/*
 * Does the instruction start what a call that returns is never followed
 * by: padding (a nop, int3), or a function's first instruction (a push
 * of a register, a subtraction from %rsp, endbr64)? Compilers place a
 * call that does not return last in a function, then padding or the
 * next function; reading on
 * there would describe another frame. A way that meets it ends there, as
 * at a trap: the other ways tell the frame, and if there are none the
 * reading gives up. Calls that do return rarely meet a push or a
 * subtraction next (only with arguments on the stack, or alloca()); then
 * the reading may give up too.
 */
static bool retpath_no_return(const struct insn *insn)
{
	u8 op = insn->opcode.bytes[0], modrm = insn->modrm.bytes[0];

	/* sub $imm, %rsp: a frame made, as a function's first instruction */
	if ((op == 0x83 || op == 0x81) && insn->opcode.nbytes == 1 &&
	    modrm == 0xec && insn->rex_prefix.nbytes &&
	    insn->rex_prefix.bytes[0] == 0x48)
		return true;
	if (insn->opcode.nbytes == 1)
		return op == 0xcc || (op >= 0x50 && op <= 0x57) ||
		       (op == 0x90 && !insn->rex_prefix.nbytes);
	/* nopl, nopw; endbr64 is f3 0f 1e fa */
	return insn->opcode.nbytes == 2 && op == 0x0f &&
	       (insn->opcode.bytes[1] == 0x1f ||
		(insn->opcode.bytes[1] == 0x1e && insn->modrm.bytes[0] == 0xfa));
}

/*
 * Is the stack off the alignment the psABI gives: 16 bytes at a call
 * (@rem 0), one word off at a return (@rem 8)? Then the way ran into
 * another function. Only offsets from the frame's stack pointer tell.
 */
static bool retpath_misaligned(const struct retpath *rp,
			       const struct retpath_where *w, unsigned int rem)
{
	return w->base == RETPATH_BASE_SP &&
	       ((rp->sp_low + w->off) & 15) != rem;
}

/* Follow one way from @w to its end. */
static enum retpath_end retpath_follow(struct retpath *rp,
				       struct retpath_where w)
{
	struct retpath_where next;
	unsigned long target;
	bool after_call = !rp->insns;
	struct insn insn;
	unsigned int idx;
	int mark;

	for (;;) {
		if (++rp->insns > RETPATH_INSNS)
			return RETPATH_FULL;
		if (!retpath_decode(rp, w.ip, &insn))
			return RETPATH_GIVE_UP;
		/*
		 * After a call, or at the IP itself (a return address, or
		 * after a system call): at padding or another function's
		 * start, the call did not return (the reading's first
		 * instruction: nothing can be known).
		 */
		if (after_call && retpath_no_return(&insn))
			return rp->insns > 1 ? RETPATH_DONE : RETPATH_GIVE_UP;
		after_call = false;
		switch (retpath_insn(&insn, &w, &target)) {
		case RETPATH_CALL:
			if (retpath_misaligned(rp, &w, 0))
				return RETPATH_DONE;
			after_call = true;
			fallthrough;
		case RETPATH_NEXT:
			w.ip += insn.length;
			break;
		case RETPATH_JUMP:
			w.ip = target;
			mark = retpath_mark(rp, &w, &idx);
			if (mark == 0)
				return RETPATH_DONE;
			if (mark < 0)
				return mark == -2 ? RETPATH_FULL : RETPATH_GIVE_UP;
			if (mark == 2)
				w = rp->seen[idx];
			break;
		case RETPATH_BRANCH:
			next = w;
			next.ip = target;
			mark = retpath_mark(rp, &next, &idx);
			if (mark == -1)
				return RETPATH_GIVE_UP;
			if (mark == -2 || (mark && rp->ntodo == RETPATH_TODO))
				return RETPATH_FULL;
			if (mark)
				rp->todo[rp->ntodo++] = mark == 2 ? idx :
								rp->nseen - 1;
			w.ip += insn.length;
			break;
		case RETPATH_RETURN:
			if (retpath_misaligned(rp, &w, 8))
				return RETPATH_DONE;
			if (w.fp == RETPATH_FP_LOST ||
			    (rp->found && !retpath_same(&rp->out, &w)))
				return RETPATH_GIVE_UP;
			rp->out = w;
			rp->found = true;
			return RETPATH_DONE;
		case RETPATH_TRAP:
			return RETPATH_DONE;
		case RETPATH_INDIRECT:
			/* Its targets are the function's own: the others tell. */
			return RETPATH_DONE;
		default:
			return RETPATH_GIVE_UP;
		}
	}
}

/*
 * Read the frame at @ip, whose stack pointer is @sp: every way to its
 * return, into rp->out. A large function may hold more ways than the
 * reading follows: then one return is enough, with no way disagreeing
 * (a way run into another function ends at its first call or return).
 */
static bool retpath_read(struct retpath *rp, unsigned long ip,
			 unsigned long sp, unsigned long lo, unsigned long hi)
{
	struct retpath_where w = { .ip = ip };
	enum retpath_end end;

	rp->lo = lo;
	rp->hi = min(hi, TASK_SIZE_MAX);
	rp->start = 0;
	rp->len = 0;
	rp->insns = 0;
	rp->ntodo = 0;
	rp->nseen = 0;
	rp->found = false;
	rp->sp_low = sp & 15;
	end = retpath_follow(rp, w);
	while (end == RETPATH_DONE && rp->ntodo)
		end = retpath_follow(rp, rp->seen[rp->todo[--rp->ntodo]]);
	return rp->found && rp->out.off >= 0 && end != RETPATH_GIVE_UP;
}

/**
 * arch_unwind_user_retpath - the frame at an IP, read from its code
 * @state:	the walk (64-bit tasks), at the frame: state->ip, and the
 *		frame's SP and FP, which the description is relative to;
 *		state->retpath_start and _end, the mapping that holds the
 *		code, which the reading does not leave
 * @frame:	receives the description: CFA, return address and caller's
 *		frame pointer
 *
 * The reading's scratch (about 1.5 KiB) is allocated for it: more than
 * the walk's stack should hold.
 *
 * Context: Task context, page faults allowed.
 * Return: true if the ways from the IP to the function's return agree
 * on the frame (all of them; or, in a function too large to read whole,
 * those the reading followed, one at least); false otherwise.
 */
bool arch_unwind_user_retpath(struct unwind_user_state *state,
			      struct unwind_user_frame *frame)
{
	struct retpath *rp;
	s32 cfa_off;
	bool read;

	rp = kmalloc(sizeof(*rp), GFP_KERNEL | __GFP_NOWARN);
	if (!rp)
		return false;
	read = retpath_read(rp, state->ip, state->sp, state->retpath_start,
			    state->retpath_end);
	cfa_off = rp->out.off + 8;
	if (read) {
		frame->cfa = (struct unwind_user_loc){
			rp->out.base == RETPATH_BASE_FP ? UNWIND_USER_RULE_FP :
							  UNWIND_USER_RULE_SP,
			false, cfa_off };
		frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA,
						      true, -8 };
		if (rp->out.fp == RETPATH_FP_SAVED)
			frame->fp = (struct unwind_user_loc){
				UNWIND_USER_RULE_CFA, true,
				rp->out.fp_off - cfa_off };
		else
			frame->fp = (struct unwind_user_loc){
				UNWIND_USER_RULE_SAME };
	}
	kfree(rp);
	return read;
}
