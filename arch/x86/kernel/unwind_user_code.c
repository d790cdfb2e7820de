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
 * direct tail calls, and steps over calls, which return with the stack as
 * it was and %rbp kept. It follows what each instruction does to %rsp,
 * %rbp and the frame's words: pushes and pops (of %fs and %gs too), add,
 * sub, lea, leave; loads of %rbp from the frame, and stores into the
 * frame through %rsp (or %rbp while it is the frame pointer), with what
 * they store, so that a caller's %rbp saved by a mov after the IP is
 * found where it was saved. It gives up at any other write to %rsp, at
 * instructions it cannot decode, when two ways disagree on the stack
 * where they meet or at their returns, and at a return with the caller's
 * %rbp unknown. The walk checks that each return address it reads by
 * such a frame follows a call.
 *
 * A frame found so is exact. A frame whose reading rests on a convention
 * is returned as UNWIND_CODE_INFERRED, and the walk marks what follows
 * it:
 *
 * - a call followed by padding or another function's first instruction
 *   is taken not to return (__stack_chk_fail(), abort()), and its way
 *   ends there, as compilers lay such calls out;
 * - the x86-64 psABI: a function is entered with its stack pointer one
 *   word off a multiple of 16, so the stack is 16-byte aligned at every
 *   call it makes and one word off at its return. The frame's SP is known
 *   (the interrupted one after a system call, 16-byte aligned at a return
 *   address), so a way one word off at a call or a return ran on from a
 *   call that does not return into another function, and ends there;
 * - a jump through a register (a switch's table) is taken to stay in the
 *   function, and one through memory at a RIP offset to be a tail call;
 * - a store through %rsp with an index is taken to write an array of the
 *   frame, not a saved register;
 * - a function whose ways take more than the reading may decode is read
 *   by those it followed, one return at least, with none disagreeing.
 *
 * A store through any other register is taken not to write the frame's
 * saved registers, which code names through %rsp or its frame pointer
 * only: as with a frame record, only the process's own code can make it
 * otherwise, and only its own walks wrong.
 *
 * Task context, page faults allowed: the code is read with
 * copy_from_user(). The work is bounded by the instructions decoded, out
 * of a budget per walk, not by what the code holds; the reading gives the
 * CPU up as it goes and stops for a fatal signal.
 */
#include <linux/build_bug.h>
#include <linux/minmax.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <asm/insn.h>
#include <asm/unwind_user_code.h>

/* Instructions one frame's reading decodes, at most. */
#define CODE_INSNS		1024
/* Instructions decoded between chances to reschedule. */
#define CODE_RESCHED		64
/* Branch targets it keeps: those waiting, and those read. */
#define CODE_TODO		32
#define CODE_SEEN		48
/* The largest frame it follows (offsets are kept in 16 bits). */
#define CODE_FRAME_MAX	0x7000
/* Bytes of code read at once. */
#define CODE_WINDOW		64
/* Stores to the frame one way keeps track of. */
#define CODE_STORES		8

#define CODE_RSP		4
#define CODE_RBP		5

/* The stack pointer is the frame's SP, or its FP, plus an offset. */
enum code_base {
	CODE_BASE_SP,
	CODE_BASE_FP,
};

/* Where the caller's %rbp is at an instruction. */
enum code_fp {
	CODE_FP_SAME,	/* still in %rbp */
	CODE_FP_SAVED,	/* popped from the stack at base + fp_off */
	CODE_FP_LOST,	/* %rbp was written with something else */
};

/*
 * Bytes [@lo, @hi) from the base that a way wrote: with %rbp, which then
 * held what @fp and @fp_off say (as in struct code_where), or with
 * anything else (@fp is CODE_FP_LOST).
 */
struct code_store {
	s16		lo;
	s16		hi;
	s16		fp_off;
	u8		fp;
	bool		fp_inferred;
};

/*
 * The stack and %rbp at an instruction, relative to the frame's registers
 * at the IP the reading started from. The words at and above @floor from
 * the base still hold what they held at that IP, but for the @stores the
 * way made (the latest last); below @floor, the way or a callee may have
 * written them. @rec_written: a store through %rbp, while it holds the
 * frame's FP, may have written the words at and above it. @indexed: a
 * store through %rsp with an index wrote words the reading cannot tell;
 * where the caller's %rbp is then rests on a convention (@fp_inferred).
 */
struct code_where {
	unsigned long	ip;
	s16		off;
	s16		fp_off;
	s16		floor;
	u8		base;
	u8		fp;
	u8		nstores;
	bool		grown;
	bool		rec_written;
	bool		indexed;
	bool		fp_inferred;
	struct code_store stores[CODE_STORES];
};

struct code_reading {
	unsigned long		lo, hi;		/* the mapping of the code */
	unsigned long		start;		/* code in buf */
	unsigned int		len;
	unsigned int		insns;		/* decoded */
	unsigned int		budget;		/* to decode, at most */
	unsigned int		ntodo;
	unsigned int		nseen;
	bool			found;
	bool			inferred;	/* rests on a convention */
	u8			sp_low;		/* the frame's SP, mod 16 */
	struct code_where	out;		/* at the return */
	u8			todo[CODE_TODO]; /* into seen[] */
	struct code_where	seen[CODE_SEEN];
	u8			buf[CODE_WINDOW];
};

/* What an instruction does to the way out. */
enum code_insn {
	CODE_NEXT,		/* go on after it */
	CODE_CALL,		/* go on after it, if the callee returns */
	CODE_JUMP,		/* go on at the target */
	CODE_BRANCH,		/* both: the target and after it */
	CODE_RETURN,		/* the frame ends: ret, or a direct tail call */
	CODE_TAIL_CALL,	/* a jump through memory at a RIP offset */
	CODE_TRAP,		/* this way never returns (ud2, hlt, int3) */
	CODE_INDIRECT,	/* a jump through a register or a table */
	CODE_FAIL,		/* not followed: give up */
};

/*
 * Decode the instruction at @ip, reading the code as needed. Code
 * outside the mapping that holds the frame's IP is not read: a branch
 * there may lead into another file's pages (FUSE, userfaultfd) whose
 * read the process could stall, and it is not the function's own code.
 */
static bool code_decode(struct code_reading *rp, unsigned long ip,
			struct insn *insn)
{
	unsigned long end = rp->start + rp->len;
	unsigned int want;

	if (ip < rp->lo || ip >= rp->hi)
		return false;
	if (ip < rp->start || ip >= end ||
	    (end - ip < MAX_INSN_SIZE && rp->len == CODE_WINDOW)) {
		want = min_t(unsigned long, CODE_WINDOW, rp->hi - ip);
		rp->start = ip;
		rp->len = want - copy_from_user(rp->buf, (void __user *)ip,
						want);
		end = ip + rp->len;
	}
	return !insn_decode(insn, rp->buf + (ip - rp->start), end - ip,
			    INSN_MODE_64);
}

/* The registers a ModRM instruction names, with their REX extensions. */
static int code_modrm_reg(const struct insn *insn)
{
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;

	return X86_MODRM_REG(insn->modrm.bytes[0]) + (X86_REX_R(rex) ? 8 : 0);
}

/* The r/m register, or -1 for a memory operand. */
static int code_modrm_rm(const struct insn *insn)
{
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;

	if (X86_MODRM_MOD(insn->modrm.bytes[0]) != 3)
		return -1;
	return X86_MODRM_RM(insn->modrm.bytes[0]) + (X86_REX_B(rex) ? 8 : 0);
}

/*
 * Does the two-byte opcode 0x0f @op2 write no general register, only
 * vector, flag or fixed ones (and memory), whatever its ModRM names?
 * Those that write a general register by ModRM are listed in
 * code_written(); the fixed ones (cpuid, rdtsc, syscall) are not %rsp
 * or %rbp; the stack's own (push and pop of %fs and %gs) are followed in
 * code_insn().
 */
static bool code_no_gpr(u8 op2)
{
	switch (op2) {
	case 0x05: case 0x0b: case 0x0d: case 0x0e:	/* syscall, ud2, prefetch */
	case 0x10 ... 0x1f:		/* SSE moves, unpack; hint nops */
	case 0x28 ... 0x2b: case 0x2e: case 0x2f:	/* SSE moves, compares */
	case 0x31: case 0xa2: case 0xa3:		/* rdtsc, cpuid, bt */
	case 0x51 ... 0x7d:	/* SSE and MMX arithmetic, shuffles, emms */
	case 0x7f: case 0xc2: case 0xc3: case 0xc4: case 0xc6:
	case 0xd0 ... 0xd6: case 0xd8 ... 0xff:
		return true;
	}
	return false;
}

/* Which of %rsp and %rbp register number @r is, as code_written() says. */
#define CODE_W_RSP		1
#define CODE_W_RBP		2
static unsigned int code_bit(int r)
{
	return r == CODE_RSP ? CODE_W_RSP :
	       r == CODE_RBP ? CODE_W_RBP : 0;
}

/*
 * Which of %rsp and %rbp may the instruction write (CODE_W_*)? The
 * stack's own instructions are handled before this is asked. Unknown
 * forms that name the register are taken as writing it.
 */
static unsigned int code_written(struct insn *insn)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	int embedded = (op & 7) + (X86_REX_B(rex) ? 8 : 0);
	int reg = -1, rm = -1, mreg;

	if (insn->modrm.nbytes) {
		reg = code_modrm_reg(insn);
		rm = code_modrm_rm(insn);
	}
	if (insn_is_avx(insn) || insn_is_evex(insn)) {
		/* Register numbers may be vector registers: low bits only. */
		/* vvvv, inverted: VEX's last prefix byte, EVEX's third */
		mreg = insn->vex_prefix.bytes[insn_is_evex(insn) ? 2 :
					      insn->vex_prefix.nbytes - 1];
		mreg = ~X86_VEX_V(mreg) & 7;
		return (insn->modrm.nbytes ?
			code_bit(reg & 7) | code_bit(rm & 7) : 0) |
		       code_bit(mreg);
	}
	if (insn_is_rex2(insn))
		return CODE_W_RSP | CODE_W_RBP;

	if (insn->opcode.nbytes == 1) {
		/* xchg with %rax, mov immediate to a register */
		if ((op & 0xf8) == 0x90 || (op & 0xf0) == 0xb0)
			return op != 0x90 ? code_bit(embedded) : 0;
		if (!insn->modrm.nbytes)
			return 0;
		switch (op) {
		case 0x38: case 0x39: case 0x3a: case 0x3b:	/* cmp */
		case 0x84: case 0x85:				/* test */
			return 0;
		case 0x80: case 0x81: case 0x83:		/* ALU imm */
			return X86_MODRM_REG(insn->modrm.bytes[0]) != 7 ?
			       code_bit(rm) : 0;
		case 0xf6: case 0xf7:		/* test, not, neg, mul, div */
			mreg = X86_MODRM_REG(insn->modrm.bytes[0]);
			return mreg == 2 || mreg == 3 ? code_bit(rm) : 0;
		case 0xfe: case 0xff:	/* inc, dec; calls, jumps, push */
			return X86_MODRM_REG(insn->modrm.bytes[0]) <= 1 ?
			       code_bit(rm) : 0;
		case 0x00: case 0x01: case 0x08: case 0x09:	/* op r/m, reg */
		case 0x10: case 0x11: case 0x18: case 0x19:
		case 0x20: case 0x21: case 0x28: case 0x29:
		case 0x30: case 0x31: case 0x88: case 0x89:
		case 0xc0: case 0xc1: case 0xd0: case 0xd1:	/* shifts */
		case 0xd2: case 0xd3: case 0xc6: case 0xc7:	/* mov imm */
			return code_bit(rm);
		case 0x02: case 0x03: case 0x0a: case 0x0b:	/* op reg, r/m */
		case 0x12: case 0x13: case 0x1a: case 0x1b:
		case 0x22: case 0x23: case 0x2a: case 0x2b:
		case 0x32: case 0x33: case 0x63: case 0x69:
		case 0x6b: case 0x8a: case 0x8b: case 0x8d:
			return code_bit(reg);
		}
		return code_bit(reg) | code_bit(rm);
	}
	if (insn->opcode.nbytes == 2 && op == 0x0f) {
		if (op2 >= 0xc8 && op2 <= 0xcf)			/* bswap */
			return code_bit(embedded);
		if ((op2 >= 0x40 && op2 <= 0x4f) ||		/* cmov */
		    op2 == 0xaf || op2 == 0xb6 || op2 == 0xb7 ||
		    op2 == 0xbe || op2 == 0xbf || op2 == 0xbc ||
		    op2 == 0xbd || op2 == 0xb8 || op2 == 0x02 ||
		    op2 == 0x03 || op2 == 0x50 || op2 == 0xd7 ||
		    op2 == 0x2c || op2 == 0x2d || op2 == 0xc5)
			return code_bit(reg);
		if ((op2 >= 0x90 && op2 <= 0x9f) ||		/* setcc */
		    op2 == 0xa4 || op2 == 0xa5 || op2 == 0xac ||
		    op2 == 0xad || op2 == 0xab || op2 == 0xb3 ||
		    op2 == 0xbb || op2 == 0xba || op2 == 0xb0 ||
		    op2 == 0xb1 || op2 == 0x7e || op2 == 0xc7 ||
		    op2 == 0x00 || op2 == 0x78)
			return code_bit(rm);
		if (op2 == 0xc0 || op2 == 0xc1 || op2 == 0x01)	/* xadd */
			return code_bit(reg) | code_bit(rm);
		if (op2 == 0xb2 || op2 == 0xb4 || op2 == 0xb5)	/* lss, lfs, lgs */
			return code_bit(reg);
		if (op2 == 0xae)	/* rdfsbase, rdgsbase (the rest: memory) */
			return code_bit(rm);
		if (op2 == 0x1e)	/* rdssp; endbr64 and hint nops do not */
			return X86_MODRM_REG(insn->modrm.bytes[0]) == 1 ?
			       code_bit(rm) : 0;
		if (code_no_gpr(op2))
			return 0;
		/* Not known: any register it names may be written. */
		return code_bit(reg) | code_bit(rm);
	}
	/* Three-byte maps: any named register may be written. */
	return code_bit(reg) | code_bit(rm);
}

/* Is the r/m operand disp(%rsp), with no index? Sets *@disp. */
static bool code_rsp_mem(struct insn *insn, s32 *disp)
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

/* Where a memory operand is. */
enum code_mem {
	CODE_MEM_OTHER,	/* through another register, or RIP */
	CODE_MEM_RSP,	/* disp(%rsp) */
	CODE_MEM_RBP,	/* disp(%rbp) */
	CODE_MEM_STACK,	/* %rsp with an index, or not told apart */
};

/*
 * The base of the instruction's memory operand, and its displacement in
 * *@disp. Encodings whose register extensions are not in a REX prefix
 * (VEX, EVEX, REX2) are told apart less: whatever may be %rsp is
 * CODE_MEM_STACK, whatever may be %rbp is CODE_MEM_RBP.
 */
static enum code_mem code_mem_base(struct insn *insn, s32 *disp)
{
	u8 modrm = insn->modrm.bytes[0], sib = insn->sib.bytes[0];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	bool other = insn_is_avx(insn) || insn_is_evex(insn) ||
		     insn_is_rex2(insn);
	u8 mod = X86_MODRM_MOD(modrm), rm = X86_MODRM_RM(modrm);

	*disp = insn->displacement.value;
	if (rm == 4) {
		if (X86_SIB_BASE(sib) == 4 && !X86_REX_B(rex))
			return other || X86_SIB_INDEX(sib) != 4 ||
			       X86_REX_X(rex) ? CODE_MEM_STACK :
						CODE_MEM_RSP;
		if (other)
			return CODE_MEM_STACK;
		if (X86_SIB_BASE(sib) == 5 && mod && !X86_REX_B(rex) &&
		    X86_SIB_INDEX(sib) == 4 && !X86_REX_X(rex))
			return CODE_MEM_RBP;
		/* An index may reach the frame; %rbp as the base is ours. */
		return X86_SIB_BASE(sib) == 5 && mod && !X86_REX_B(rex) ?
		       CODE_MEM_STACK : CODE_MEM_OTHER;
	}
	if (rm == 5 && mod && !X86_REX_B(rex))
		return CODE_MEM_RBP;
	return CODE_MEM_OTHER;
}

/* The bytes an x87 instruction @op, /@sub, writes to memory. */
static int code_x87_written(u8 op, u8 sub)
{
	static const u8 written[4][8] = {
		{ 0, 0, 4, 4, 0, 0, 28, 2 },	/* d9: fst, fnstenv, fnstcw */
		{ 0, 4, 4, 4, 0, 0, 0, 10 },	/* db: fist, fstp m80 */
		{ 0, 8, 8, 8, 0, 0, 108, 2 },	/* dd: fst m64, fnsave */
		{ 0, 2, 2, 2, 0, 0, 10, 8 },	/* df: fist m16, fbstp */
	};

	/* d8, da, dc and de only read memory. */
	return op & 1 ? written[(op - 0xd9) / 2][sub] : 0;
}

/*
 * The bytes the instruction may write at its memory operand: 0 if it
 * only reads it (or takes its address), -1 if more than the bytes at
 * and above it can be told (state saves). Reads are listed; what is not
 * is taken as writing, as much as its kind of register holds.
 */
static int code_mem_written(struct insn *insn)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 sub = X86_MODRM_REG(insn->modrm.bytes[0]);

	if (insn_is_evex(insn))
		return 64;
	if (insn_is_avx(insn))
		return 32;
	if (insn->opcode.nbytes == 1) {
		switch (op) {
		case 0x02: case 0x03: case 0x0a: case 0x0b:	/* op reg, r/m */
		case 0x12: case 0x13: case 0x1a: case 0x1b:
		case 0x22: case 0x23: case 0x2a: case 0x2b:
		case 0x32: case 0x33: case 0x38 ... 0x3b:	/* cmp */
		case 0x63: case 0x69: case 0x6b: case 0x84:	/* movsxd, imul */
		case 0x85: case 0x8a: case 0x8b: case 0x8d:	/* test, mov, lea */
		case 0x8e:
			return 0;
		case 0x80 ... 0x83:				/* cmp imm */
			return sub == 7 ? 0 : 8;
		case 0xf6: case 0xf7:				/* test imm */
			return sub <= 1 ? 0 : 8;
		case 0xff:			/* calls, jumps, push: reads */
			return sub >= 2 ? 0 : 8;
		case 0xd8 ... 0xdf:
			return code_x87_written(op, sub);
		}
		return 8;
	}
	if (insn->opcode.nbytes == 2 && op == 0x0f) {
		switch (op2) {
		case 0x02: case 0x03: case 0x0d: case 0x10:	/* loads */
		case 0x12: case 0x14 ... 0x16: case 0x18 ... 0x1f:
		case 0x28: case 0x2a: case 0x2c ... 0x2f:
		case 0x40 ... 0x76: case 0x7c: case 0x7d: case 0xa3:
		case 0xaf: case 0xb6 ... 0xb8: case 0xbc ... 0xbf:
		case 0xc2: case 0xc4: case 0xc6: case 0xd0 ... 0xd5:
		case 0xd8 ... 0xe6: case 0xe8 ... 0xfe:
			return 0;
		case 0xae: case 0xc7:		/* fxsave, xsave; cmpxchg16b */
			return -1;
		case 0x13: case 0x17: case 0x7e: case 0xc3: case 0xd6:
			return 8;		/* movlps, movhps, movq, movnti */
		}
	}
	return 16;
}

/*
 * The way writes @size bytes (-1: any number) at @lo from the base:
 * with %rbp as @fp and @fp_off say, or with anything else (@fp is
 * CODE_FP_LOST), resting on a convention if @fp_inferred.
 * CODE_FP_SAVED says where a value came from (what a slot held at the
 * IP), which a later store there does not change.
 * False if the reading cannot keep track: too far, or too many stores.
 */
static bool code_store(struct code_where *w, s64 lo, int size, u8 fp,
		       s16 fp_off, bool fp_inferred)
{
	s64 hi = size < 0 ? CODE_FRAME_MAX + 8 : lo + size;
	unsigned int i, n = 0;

	if (lo < -CODE_FRAME_MAX || lo > CODE_FRAME_MAX)
		return false;
	hi = min_t(s64, hi, CODE_FRAME_MAX + 8);
	for (i = 0; i < w->nstores; i++) {
		struct code_store *st = &w->stores[i];

		/* Written over whole: forgotten. */
		if (st->lo >= lo && st->hi <= hi)
			continue;
		/*
		 * Values next to values: one store of both, the latest
		 * (over what was stored between them, which it may hide:
		 * the reading knows less, never wrongly).
		 */
		if (fp == CODE_FP_LOST && st->fp == CODE_FP_LOST &&
		    st->lo <= hi && st->hi >= lo) {
			lo = min_t(s64, lo, st->lo);
			hi = max_t(s64, hi, st->hi);
			continue;
		}
		w->stores[n++] = *st;
	}
	w->nstores = n;
	if (n == CODE_STORES)
		return false;
	w->stores[w->nstores++] = (struct code_store){
		.lo = lo, .hi = hi, .fp = fp, .fp_off = fp_off,
		.fp_inferred = fp_inferred };
	return true;
}

/*
 * A call: the callee may write anything below the stack pointer, and
 * keeps %rbp. What the way stored there is lost.
 */
static void code_call(struct code_where *w)
{
	unsigned int i, n = 0;

	w->floor = max(w->floor, w->off);
	for (i = 0; i < w->nstores; i++) {
		struct code_store *st = &w->stores[i];

		if (st->hi <= w->off)
			continue;
		if (st->lo < w->off)
			st->fp = CODE_FP_LOST;
		w->stores[n++] = *st;
	}
	w->nstores = n;
}

/*
 * Follow the instruction's store to memory, if it makes one. Stores to
 * the frame, through %rsp, or through %rbp while it holds the frame's FP,
 * are kept track of; one through %rsp with an index is taken to write
 * an array of the frame (and what rests on that is marked). A store
 * through any other register is taken not to write the slots where the
 * frame saves registers, which code names through %rsp or its frame
 * pointer, with a constant offset, only (as a frame record is taken to
 * be the code's own). False if the reading cannot follow the store.
 */
static bool code_mem_store(struct insn *insn, struct code_where *w)
{
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	int size = code_mem_written(insn);
	u8 fp = CODE_FP_LOST;
	s32 disp;

	if (!size)
		return true;
	/* mov %rbp, mem: the slot then holds what %rbp held. */
	if (insn->opcode.nbytes == 1 && insn->opcode.bytes[0] == 0x89 &&
	    !insn_is_avx(insn) && !insn_is_evex(insn) && !insn_is_rex2(insn) &&
	    X86_REX_W(rex) && code_modrm_reg(insn) == CODE_RBP)
		fp = w->fp;
	switch (code_mem_base(insn, &disp)) {
	case CODE_MEM_RSP:
		return code_store(w, (s64)w->off + disp, size, fp,
				     w->fp_off, w->fp_inferred);
	case CODE_MEM_RBP:
		if (w->fp != CODE_FP_SAME)
			break;
		if (w->base == CODE_BASE_FP)
			return code_store(w, disp, size, fp, w->fp_off,
					     w->fp_inferred);
		/* Placed against the FP, not the SP: the record's words? */
		if (size < 0 || (s64)disp + size > 0)
			w->rec_written = true;
		break;
	case CODE_MEM_STACK:
		/*
		 * An array of the frame, as compiled code indexes: taken
		 * not to hold a saved register, a convention.
		 */
		w->indexed = true;
		break;
	case CODE_MEM_OTHER:
		break;
	}
	return true;
}

/*
 * %rsp moves by @delta bytes: a push or a subtraction grows the stack,
 * and the words below are the way's; a pop or an addition shrinks it.
 * False for a move no frame makes.
 */
static bool code_move(struct code_where *w, s64 delta)
{
	if (delta < -CODE_FRAME_MAX || delta > CODE_FRAME_MAX)
		return false;
	if (delta < 0) {
		w->floor = max(w->floor, w->off);
		w->grown = true;
	}
	delta += w->off;
	if (delta < -CODE_FRAME_MAX || delta > CODE_FRAME_MAX)
		return false;
	w->off = delta;
	return true;
}

/*
 * %rsp = %rbp + @off: the frame's own frame pointer, while %rbp still
 * holds the frame's FP and the way has not written the stack (which it
 * could not place against the FP). The words at and above the FP hold
 * the frame's record.
 */
static bool code_to_fp(struct code_where *w, s64 off)
{
	if (w->fp != CODE_FP_SAME || w->grown || w->nstores ||
	    w->rec_written || w->base != CODE_BASE_SP ||
	    off < -CODE_FRAME_MAX || off > CODE_FRAME_MAX)
		return false;
	w->base = CODE_BASE_FP;
	w->off = off;
	w->floor = 0;
	return true;
}

/*
 * %rbp is loaded from the stack, at @slot from the base: from what the
 * way stored there last, if it did, else from what the slot held at the
 * IP, if the way and its callees cannot have written it.
 */
static void code_load_fp(struct code_where *w, s64 slot)
{
	int i;

	w->fp = CODE_FP_LOST;
	/* An indexed store may have written the slot. */
	w->fp_inferred = w->indexed;
	if (slot < -CODE_FRAME_MAX || slot > CODE_FRAME_MAX)
		return;
	for (i = w->nstores - 1; i >= 0; i--) {
		const struct code_store *st = &w->stores[i];

		if (slot + 8 <= st->lo || slot >= st->hi)
			continue;
		/* All of the word, with %rbp; not a part, not a value. */
		if (st->lo == slot && st->hi == slot + 8) {
			w->fp = st->fp;
			w->fp_off = st->fp_off;
			w->fp_inferred |= st->fp_inferred;
		}
		return;
	}
	if (slot >= w->floor) {
		w->fp = CODE_FP_SAVED;
		w->fp_off = slot;
	}
}

/*
 * Follow one instruction: update @w and say where the way goes on
 * (*@target for a jump or branch).
 */
static enum code_insn code_insn(struct insn *insn,
				struct code_where *w,
				      unsigned long *target)
{
	u8 op = insn->opcode.bytes[0], op2 = insn->opcode.bytes[1];
	u8 rex = insn->rex_prefix.nbytes ? insn->rex_prefix.bytes[0] : 0;
	u8 modrm = insn->modrm.bytes[0];
	int reg = -1, rm = -1;
	unsigned int written;
	s32 disp;

	*target = w->ip + insn->length + insn->immediate.value;
	if (insn->modrm.nbytes) {
		reg = code_modrm_reg(insn);
		rm = code_modrm_rm(insn);
		if (rm < 0 && !code_mem_store(insn, w))
			return CODE_FAIL;
	}
	if (insn_is_avx(insn) || insn_is_evex(insn) || insn_is_rex2(insn))
		goto other;

	if (insn->opcode.nbytes == 2 && op == 0x0f) {
		/* push and pop of %fs and %gs: the stack's, if a word */
		if (op2 == 0xa0 || op2 == 0xa8) {
			if (insn->opnd_bytes != 8 || !code_move(w, -8) ||
			    !code_store(w, w->off, 8, CODE_FP_LOST, 0, false))
				return CODE_FAIL;
			return CODE_NEXT;
		}
		if (op2 == 0xa1 || op2 == 0xa9)
			return insn->opnd_bytes == 8 && code_move(w, 8) ?
			       CODE_NEXT : CODE_FAIL;
		if (op2 >= 0x80 && op2 <= 0x8f)			/* jcc rel32 */
			return insn->opnd_bytes == 2 ? CODE_FAIL :
						       CODE_BRANCH;
		if (op2 == 0x0b || op2 == 0xb9 || op2 == 0xff)	/* ud2, ud1, ud0 */
			return CODE_TRAP;
		if (op2 == 0x05)				/* syscall */
			return CODE_NEXT;
		if (op2 == 0x07 || op2 == 0x34 || op2 == 0x35)	/* sysret... */
			return CODE_FAIL;
		goto other;
	}
	if (insn->opcode.nbytes != 1)
		goto other;

	switch (op) {
	case 0xc3: case 0xc2:					/* ret */
		return CODE_RETURN;
	case 0xe8:						/* call */
		code_call(w);
		return CODE_CALL;
	case 0xe9: case 0xeb:					/* jmp */
		return CODE_JUMP;
	case 0x70 ... 0x7f:					/* jcc */
	case 0xe0 ... 0xe3:				/* loop, jrcxz */
		return CODE_BRANCH;
	case 0xcc: case 0xcd: case 0xf4:		/* int3, int, hlt */
		return CODE_TRAP;
	case 0xc8: case 0xca: case 0xcb: case 0xcf:	/* enter, lret, iret */
		return CODE_FAIL;
	case 0x50 ... 0x57:					/* push reg */
	case 0x68: case 0x6a: case 0x9c:		/* push imm, pushf */
		if (insn->opnd_bytes != 8 || !code_move(w, -8))
			return CODE_FAIL;
		/* push %rbp: the slot holds what %rbp holds */
		if (op == 0x55 && !X86_REX_B(rex))
			return code_store(w, w->off, 8, w->fp, w->fp_off,
					     w->fp_inferred) ?
			       CODE_NEXT : CODE_FAIL;
		return code_store(w, w->off, 8, CODE_FP_LOST, 0, false) ?
		       CODE_NEXT : CODE_FAIL;
	case 0x58 ... 0x5f:					/* pop reg */
	case 0x9d:						/* popf */
		if (insn->opnd_bytes != 8)
			return CODE_FAIL;
		if (op == 0x5c && !X86_REX_B(rex))		/* pop %rsp */
			return CODE_FAIL;
		if (op == 0x5d && !X86_REX_B(rex))		/* pop %rbp */
			code_load_fp(w, w->off);
		return code_move(w, 8) ? CODE_NEXT : CODE_FAIL;
	case 0x8f:				/* pop r/m, a register only */
		if (insn->opnd_bytes != 8 || rm < 0 || rm == CODE_RSP)
			return CODE_FAIL;
		if (rm == CODE_RBP)
			code_load_fp(w, w->off);
		return code_move(w, 8) ? CODE_NEXT : CODE_FAIL;
	case 0xc9:						/* leave */
		if (!code_to_fp(w, 0))
			return CODE_FAIL;
		code_load_fp(w, 0);
		return code_move(w, 8) ? CODE_NEXT : CODE_FAIL;
	case 0xff:
		switch (X86_MODRM_REG(modrm)) {
		case 2: case 3:					/* call */
			code_call(w);
			return CODE_CALL;
		case 4:						/* jmp */
			/* Through memory at a RIP offset: a tail call. */
			if (X86_MODRM_MOD(modrm) == 0 && X86_MODRM_RM(modrm) == 5)
				return CODE_TAIL_CALL;
			return CODE_INDIRECT;
		case 5:
			return CODE_FAIL;
		case 6:						/* push */
			if (insn->opnd_bytes != 8 || !code_move(w, -8) ||
			    !code_store(w, w->off, 8, CODE_FP_LOST, 0, false))
				return CODE_FAIL;
			return CODE_NEXT;
		}
		break;
	case 0x81: case 0x83:				/* add/sub imm, %rsp */
		if (rm != CODE_RSP)
			break;
		if (!X86_REX_W(rex))
			return CODE_FAIL;
		switch (X86_MODRM_REG(modrm)) {
		case 0:
			return code_move(w, insn->immediate.value) ?
			       CODE_NEXT : CODE_FAIL;
		case 5:
			return code_move(w, -(s64)insn->immediate.value) ?
			       CODE_NEXT : CODE_FAIL;
		case 7:
			return CODE_NEXT;
		}
		return CODE_FAIL;
	case 0x8d:					/* lea disp(%rsp/%rbp), %rsp */
		if (reg != CODE_RSP)
			break;
		if (!X86_REX_W(rex) || insn->addr_bytes != 8)
			return CODE_FAIL;
		if (code_rsp_mem(insn, &disp))
			return code_move(w, disp) ? CODE_NEXT :
						       CODE_FAIL;
		if (X86_MODRM_MOD(modrm) != 0 && X86_MODRM_MOD(modrm) != 3 &&
		    X86_MODRM_RM(modrm) == 5 && !X86_REX_B(rex) &&
		    code_to_fp(w, insn->displacement.value))
			return CODE_NEXT;
		return CODE_FAIL;
	case 0x89: case 0x8b:				/* mov %rbp, %rsp */
		if ((op == 0x89 && rm == CODE_RSP && reg == CODE_RBP) ||
		    (op == 0x8b && reg == CODE_RSP && rm == CODE_RBP)) {
			if (!X86_REX_W(rex) || !code_to_fp(w, 0))
				return CODE_FAIL;
			return CODE_NEXT;
		}
		/* mov disp(%rsp), %rbp: the caller's, from its slot */
		if (op == 0x8b && reg == CODE_RBP && X86_REX_W(rex) &&
		    code_rsp_mem(insn, &disp)) {
			code_load_fp(w, (s64)w->off + disp);
			return CODE_NEXT;
		}
		break;
	}
other:
	written = code_written(insn);
	if (written & CODE_W_RSP)
		return CODE_FAIL;
	if (written & CODE_W_RBP)
		w->fp = CODE_FP_LOST;
	return CODE_NEXT;
}

/* Do two ways agree on the frame at a return? */
static bool code_same(const struct code_where *a,
		      const struct code_where *b)
{
	return a->off == b->off && a->base == b->base && a->fp == b->fp &&
	       (a->fp != CODE_FP_SAVED || a->fp_off == b->fp_off);
}

/*
 * Do two ways agree on the stack where they meet? A function that uses
 * %rbp for its own values saved the caller's first and pops it before
 * every return, so one way may meet another having written %rbp, the
 * other not: the register is popped after, either way. Where the
 * caller's %rbp was popped from must agree.
 */
static bool code_meet(const struct code_where *a,
		      const struct code_where *b)
{
	bool a_saved = a->fp == CODE_FP_SAVED;
	bool b_saved = b->fp == CODE_FP_SAVED;

	if (a->off != b->off || a->base != b->base || a_saved != b_saved)
		return false;
	return !a_saved || a->fp_off == b->fp_off;
}

/* Did two stores write the same bytes alike? */
static bool code_same_store(const struct code_store *x,
			    const struct code_store *y)
{
	return x->lo == y->lo && x->hi == y->hi && x->fp == y->fp &&
	       x->fp_inferred == y->fp_inferred &&
	       (x->fp != CODE_FP_SAVED || x->fp_off == y->fp_off);
}

/* Does @w know what @y stored, or know it holds a value? */
static bool code_knows_store(const struct code_where *w,
			     const struct code_store *y)
{
	unsigned int i;

	for (i = 0; i < w->nstores; i++) {
		const struct code_store *x = &w->stores[i];

		if (code_same_store(x, y) ||
		    (x->fp == CODE_FP_LOST && x->lo <= y->lo &&
		     x->hi >= y->hi))
			return true;
	}
	return false;
}

/*
 * Two ways meet: make @a's stores what holds on both. A store the other
 * way did not make alike becomes a store of a value. Return: 1 if @a
 * changed, 0 if not, -1 if the stores do not fit.
 */
static int code_merge_stores(struct code_where *a,
			     const struct code_where *b)
{
	unsigned int i, j;
	int changed = 0;

	for (i = 0; i < a->nstores; i++) {
		struct code_store *x = &a->stores[i];

		if (x->fp == CODE_FP_LOST)
			continue;
		for (j = 0; j < b->nstores; j++)
			if (code_same_store(x, &b->stores[j]))
				break;
		if (j == b->nstores) {
			x->fp = CODE_FP_LOST;
			changed = 1;
		}
	}
	for (j = 0; j < b->nstores; j++) {
		const struct code_store *y = &b->stores[j];

		if (code_knows_store(a, y))
			continue;
		if (a->nstores == CODE_STORES)
			return -1;
		a->stores[a->nstores++] = (struct code_store){
			.lo = y->lo, .hi = y->hi, .fp = CODE_FP_LOST };
		changed = 1;
	}
	return changed;
}

/*
 * Does @a assume no more about the frame's words than @b: as many may
 * have been written?
 */
static bool code_covers(const struct code_where *a,
			const struct code_where *b)
{
	return a->floor >= b->floor && (a->grown || !b->grown) &&
	       (a->rec_written || !b->rec_written) &&
	       (a->indexed || !b->indexed) &&
	       (a->fp_inferred || !b->fp_inferred);
}

/* How a reading, or one way of it, ends. */
enum code_end {
	CODE_DONE,		/* the way ended: a return, a trap, a meeting */
	CODE_FULL,		/* the reading spent its budget or tables */
	CODE_GIVE_UP,	/* the code cannot be followed, or ways disagree */
};

/*
 * Note the way at a branch target. Return: 1 if it is new, 0 if a way
 * reached the target before with the same stack, -1 if with another
 * stack or more stores than kept, -2 if the reading keeps no more targets, 2 if
 * with the same stack but the caller's %rbp elsewhere, or fewer of the
 * frame's words known: rp->seen[*@idx] is then to be followed again,
 * knowing what both ways know.
 *
 * A load of %rbp from the frame is taken for the caller's %rbp, restored
 * (code_load_fp()); it may be a local that a function using %rbp for
 * its own values loads on one way only. From where the ways meet, the
 * caller's %rbp is known again only where a pop restores it: a return
 * that comes before says nothing, and the reading gives up there.
 */
static int code_mark(struct code_reading *rp, const struct code_where *w,
		     unsigned int *idx)
{
	unsigned int i;
	int merged;
	bool meet;

	for (i = 0; i < rp->nseen; i++) {
		struct code_where *seen = &rp->seen[i];

		if (seen->ip != w->ip)
			continue;
		if (seen->off != w->off || seen->base != w->base)
			return -1;
		merged = code_merge_stores(seen, w);
		if (merged < 0)
			return -1;
		meet = code_meet(seen, w);
		/* Lost is the least a way knows. */
		if (!merged && (meet || seen->fp == CODE_FP_LOST) &&
		    code_covers(seen, w))
			return 0;
		/* Each time, less is known: followed a few times at most. */
		if (!meet)
			seen->fp = CODE_FP_LOST;
		seen->floor = max(seen->floor, w->floor);
		seen->grown |= w->grown;
		seen->rec_written |= w->rec_written;
		seen->indexed |= w->indexed;
		seen->fp_inferred |= w->fp_inferred;
		*idx = i;
		return 2;
	}
	if (rp->nseen == CODE_SEEN)
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
static bool code_no_return(const struct insn *insn)
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
static bool code_misaligned(const struct code_reading *rp,
			    const struct code_where *w, unsigned int rem)
{
	return w->base == CODE_BASE_SP &&
	       ((rp->sp_low + w->off) & 15) != rem;
}

/* Follow one way from @w to its end. */
static enum code_end code_follow(struct code_reading *rp,
				 struct code_where w)
{
	struct code_where next;
	unsigned long target;
	bool after_call = !rp->insns;
	struct insn insn;
	unsigned int idx;
	int mark;

	for (;;) {
		if (++rp->insns > rp->budget)
			return CODE_FULL;
		/* What user code makes long is preemptible and killable. */
		if (!(rp->insns % CODE_RESCHED)) {
			if (fatal_signal_pending(current))
				return CODE_GIVE_UP;
			cond_resched();
		}
		if (!code_decode(rp, w.ip, &insn))
			return CODE_GIVE_UP;
		/*
		 * After a call, or at the IP itself (a return address, or
		 * after a system call): at padding or another function's
		 * start, the call did not return (the reading's first
		 * instruction: nothing can be known). What compilers emit
		 * says so: a convention, which marks the frame.
		 */
		if (after_call && code_no_return(&insn)) {
			if (rp->insns == 1)
				return CODE_GIVE_UP;
			rp->inferred = true;
			return CODE_DONE;
		}
		after_call = false;
		switch (code_insn(&insn, &w, &target)) {
		case CODE_CALL:
			/* The psABI's alignment, a convention, tells. */
			if (code_misaligned(rp, &w, 0)) {
				rp->inferred = true;
				return CODE_DONE;
			}
			after_call = true;
			fallthrough;
		case CODE_NEXT:
			w.ip += insn.length;
			break;
		case CODE_JUMP:
			w.ip = target;
			mark = code_mark(rp, &w, &idx);
			if (mark == 0)
				return CODE_DONE;
			if (mark < 0)
				return mark == -2 ? CODE_FULL : CODE_GIVE_UP;
			if (mark == 2)
				w = rp->seen[idx];
			break;
		case CODE_BRANCH:
			next = w;
			next.ip = target;
			mark = code_mark(rp, &next, &idx);
			if (mark == -1)
				return CODE_GIVE_UP;
			if (mark == -2 || (mark && rp->ntodo == CODE_TODO))
				return CODE_FULL;
			if (mark)
				rp->todo[rp->ntodo++] = mark == 2 ? idx :
								rp->nseen - 1;
			w.ip += insn.length;
			break;
		case CODE_TAIL_CALL:
			/* Through a pointer the code keeps: a convention. */
			rp->inferred = true;
			fallthrough;
		case CODE_RETURN:
			if (code_misaligned(rp, &w, 8)) {
				rp->inferred = true;
				return CODE_DONE;
			}
			if (w.fp == CODE_FP_LOST ||
			    (rp->found && !code_same(&rp->out, &w)))
				return CODE_GIVE_UP;
			rp->inferred |= w.fp_inferred;
			rp->out = w;
			rp->found = true;
			return CODE_DONE;
		case CODE_TRAP:
			return CODE_DONE;
		case CODE_INDIRECT:
			/*
			 * Its targets are taken to be the function's own,
			 * which other ways tell: a convention.
			 */
			rp->inferred = true;
			return CODE_DONE;
		default:
			return CODE_GIVE_UP;
		}
	}
}

/*
 * Read the frame at @ip, whose stack pointer is @sp: every way to its
 * return, into rp->out. A large function may hold more ways than the
 * reading follows: then one return is enough, with no way disagreeing,
 * and the frame rests on the convention that the ways not followed
 * agree (a way run into another function ends at its first call or
 * return).
 */
static enum unwind_code_found code_read(struct code_reading *rp,
					unsigned long ip,
					      unsigned long sp,
					      unsigned long lo,
					      unsigned long hi)
{
	struct code_where w = { .ip = ip };
	enum code_end end;

	rp->lo = lo;
	rp->hi = min(hi, TASK_SIZE_MAX);
	rp->start = 0;
	rp->len = 0;
	rp->insns = 0;
	rp->ntodo = 0;
	rp->nseen = 0;
	rp->found = false;
	rp->inferred = false;
	rp->sp_low = sp & 15;
	end = code_follow(rp, w);
	while (end == CODE_DONE && rp->ntodo)
		end = code_follow(rp, rp->seen[rp->todo[--rp->ntodo]]);
	if (!rp->found || rp->out.off < 0 || end == CODE_GIVE_UP)
		return UNWIND_CODE_NONE;
	if (end == CODE_FULL || rp->inferred)
		return UNWIND_CODE_INFERRED;
	return UNWIND_CODE_EXACT;
}

/**
 * arch_unwind_user_code_frame - the frame at an IP, read from its code
 * @pos:	the frame (64-bit tasks): its IP, and its SP and FP, which
 *		the description is relative to
 * @start:	start of the executable mapping that holds the code, which
 *		the reading does not leave
 * @end:	end of that mapping (exclusive)
 * @frame:	receives the description: CFA, return address and caller's
 *		frame pointer
 * @scratch:	ARCH_UNWIND_CODE_SCRATCH bytes for the reading, which
 *		its caller keeps with the task: more than the walk's stack
 *		should hold, and not worth an allocation per frame
 * @budget:	instructions the walk may still decode; the reading takes
 *		what it decodes from it, so that one walk decodes no more
 *		than the budget it started with, however many frames
 *
 * Context: Task context, page faults allowed. The reading gives the CPU
 * up as it goes, and gives up for a fatal signal.
 * Return: UNWIND_CODE_EXACT if every way from the IP to the
 * function's return was followed and they agree on the frame;
 * UNWIND_CODE_INFERRED if they agree but a step rests on a convention
 * (a way ended by the psABI's alignment, by what follows a call that does
 * not return, at an indirect jump or tail call, by an indexed store, or
 * ways not followed in a function too large to read whole);
 * UNWIND_CODE_NONE if the reading gave up.
 */
enum unwind_code_found
arch_unwind_user_code_frame(const struct unwind_user_pos *pos,
			    unsigned long start, unsigned long end,
			    struct unwind_user_frame *frame, void *scratch,
			    unsigned int *budget)
{
	struct code_reading *rp = scratch;
	enum unwind_code_found found;
	s32 cfa_off;

	BUILD_BUG_ON(sizeof(*rp) > ARCH_UNWIND_CODE_SCRATCH);
	rp->budget = min_t(unsigned int, *budget, CODE_INSNS);
	found = code_read(rp, pos->ip, pos->sp, start, end);
	*budget -= min(rp->insns, *budget);
	if (found == UNWIND_CODE_NONE)
		return found;
	cfa_off = rp->out.off + 8;
	frame->cfa = (struct unwind_user_loc){
		rp->out.base == CODE_BASE_FP ? UNWIND_USER_RULE_FP :
						  UNWIND_USER_RULE_SP,
		false, cfa_off };
	frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true, -8 };
	if (rp->out.fp == CODE_FP_SAVED)
		frame->fp = (struct unwind_user_loc){
			UNWIND_USER_RULE_CFA, true, rp->out.fp_off - cfa_off };
	else
		frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_SAME };
	return found;
}
