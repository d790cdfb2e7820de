// SPDX-License-Identifier: GPL-2.0
/*
 * x86 part of the frame-pointer user stack walker.
 *
 * 64-bit tasks use 8-byte frames. 32-bit compat tasks use 4-byte frames,
 * and their code and stack addresses are offsets into the CS and SS
 * segments: the segment bases are added, as perf's compat walker does, so
 * that tasks with LDT segments are walked right, and the sum wraps at 4 GiB
 * as the CPU's does.
 *
 * Task context, page faults allowed: the first frame is recognised by
 * reading the instruction bytes at the sampled IP.
 */
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/uprobes.h>
#include <linux/unwind_user.h>
#include <asm/insn.h>
#include <asm/insn-eval.h>
#include <asm/inat.h>
#include <asm/ptrace.h>
#include <asm/sigframe.h>
#include <asm/unwind_user.h>
#include <asm/vdso.h>

/**
 * arch_unwind_user_init - start a walk from the user registers
 * @pos:	the walk
 * @regs:	user registers of the current task
 */
void arch_unwind_user_init(struct unwind_user_pos *pos,
			   struct pt_regs *regs)
{
	long base;

	pos->ip = regs->ip;
	pos->sp = regs->sp;
	pos->fp = regs->bp;
#ifdef CONFIG_UPROBES
	/*
	 * Returning from a uprobe's breakpoint, the task is about to execute
	 * the probed instruction's copy in the XOL area: the stack is that of
	 * the probed address, which is also what the IP must report.
	 */
	if (current->utask && current->utask->state == UTASK_SSTEP &&
	    regs->ip == current->utask->xol_vaddr)
		pos->ip = current->utask->vaddr;
#endif
	pos->ws = 8;
	pos->ip_base = 0;
	pos->sp_base = 0;
	if (user_64bit_mode(regs)) {
		/*
		 * A system call's number; an exception's error code or an
		 * interrupt's vector too. Interrupted user code with -1 is
		 * not at a system call.
		 */
		pos->syscall = (long)regs->orig_ax >= 0;
		return;
	}

	pos->ws = 4;
	pos->ip = (u32)pos->ip;
	pos->sp = (u32)regs->sp;
	pos->fp = (u32)regs->bp;
	/* A segment of the LDT is looked up under a mutex: not here. */
	if (pos->nofault && ((regs->cs | regs->ss) & SEGMENT_TI_MASK)) {
		pos->blocked = true;
		return;
	}
	base = insn_get_seg_base(regs, INAT_SEG_REG_CS);
	pos->ip_base = base == -1L ? 0 : base;
	base = insn_get_seg_base(regs, INAT_SEG_REG_SS);
	pos->sp_base = base == -1L ? 0 : base;
}

/*
 * The instruction bytes at the sampled IP. A uprobe's breakpoint replaced
 * the first byte with int3: while its handlers run, the probe's copy has
 * the original bytes; when the task is about to single-step the probed
 * instruction, its out-of-line slot starts with the original first byte.
 */
static unsigned int unwind_user_insn(struct unwind_user_pos *pos,
				     u8 *buf, unsigned int len)
{
	unsigned long ip = unwind_user_ip(pos);
	unsigned int got;

	/*
	 * One word within a page is one load; a copy costs
	 * more (a call and a copy loop) and is kept for the page's end,
	 * where it returns the bytes before a fault.
	 */
	if (len == sizeof(u64) && offset_in_page(ip) <= PAGE_SIZE - sizeof(u64)) {
		u64 word;

		got = get_user(word, (u64 __user *)ip) ? 0 : len;
		memcpy(buf, &word, len);
	} else {
		got = len - unwind_user_copy(buf, (void __user *)ip, len);
	}
	if (got < len)
		unwind_user_read_failed(pos, ip + got);
#ifdef CONFIG_UPROBES
	if (got && buf[0] == 0xcc && current->utask &&
	    current->utask->vaddr == ip) {
		struct uprobe_task *utask = current->utask;

		if (utask->auprobe) {
			memcpy(buf, utask->auprobe->insn, len);
			got = len;
		} else if (utask->state == UTASK_SSTEP &&
			   get_user(buf[0], (u8 __user *)utask->xol_vaddr)) {
			unwind_user_read_failed(pos, utask->xol_vaddr);
			got = 0;
		}
	}
#endif
	return got;
}

/*
 * A 32-bit task's system calls return into the vDSO's __kernel_vsyscall,
 * right after its int $0x80 (SYSENTER and SYSCALL32 returns are moved
 * there too). That function pushed %ecx, %edx and %ebp and has no frame
 * of its own; the entry code put the caller's %ebp back in the registers.
 */
static bool unwind_user_in_vsyscall(struct unwind_user_pos *pos)
{
#ifdef CONFIG_IA32_EMULATION
	unsigned long vdso = (unsigned long)current->mm->context.vdso;

	return pos->ws == 4 && vdso && !pos->ip_base &&
	       pos->ip == (u32)(vdso + vdso_image_32.sym_int80_landing_pad);
#else
	return false;
#endif
}

/**
 * arch_unwind_user_first_frame - is the sampled function's frame missing?
 * @pos:	the walk, at its first frame
 * @sp_off:	set to where the return address is, relative to the stack
 *		pointer, when the function has no frame at the sampled IP
 *
 * Frame-pointer code builds its frame with "push %rbp; mov %rsp,%rbp"
 * (after an optional endbr) and tears it down before "ret". Sampled on
 * the push (or the endbr before it) or on the ret, the return address is at
 * the stack pointer; sampled on the mov, it is one word above. In all
 * three cases the frame pointer register still holds the caller's frame.
 * So does a 32-bit task back from a system call in the vDSO, with the
 * return address three words up.
 *
 * Return: true if the return address must be read at sp + *@sp_off.
 */
bool arch_unwind_user_first_frame(struct unwind_user_pos *pos,
				  unsigned long *sp_off)
{
	/* endbr64 is f3 0f 1e fa; endbr32 is f3 0f 1e fb. */
	static const u8 endbr[3] = { 0xf3, 0x0f, 0x1e };
	unsigned int n, i = 0;
	u8 insn[8];

	if (unwind_user_in_vsyscall(pos)) {
		*sp_off = 3 * pos->ws;
		return true;
	}
	n = unwind_user_insn(pos, insn, sizeof(insn));
	if (n >= 5 && !memcmp(insn, endbr, 3) &&
	    insn[3] == (pos->ws == 8 ? 0xfa : 0xfb))
		i = 4;
	if (n <= i)
		return false;

	switch (insn[i]) {
	case 0x55:			/* push %rbp */
	case 0xc3:			/* ret */
	case 0xc2:			/* ret $imm16 */
		*sp_off = 0;
		return true;
	}
	if (i)
		return false;
	/* mov %rsp,%rbp: 48 89 e5 or 48 8b ec; compat: 89 e5 or 8b ec. */
	if (pos->ws == 8 && n >= 3 && insn[0] == 0x48)
		i = 1;
	if (n >= i + 2 && ((insn[i] == 0x89 && insn[i + 1] == 0xe5) ||
			   (insn[i] == 0x8b && insn[i + 1] == 0xec)) &&
	    (pos->ws == 4 || i == 1)) {
		*sp_off = pos->ws;
		return true;
	}
	return false;
}

/**
 * arch_unwind_user_after_call - does a call instruction end right at @ra?
 * @pos:	the walk (64-bit tasks only)
 * @ra:		a word from the stack that may be a return address
 * @target:	if not NULL, set to the called address for a direct call,
 *		0 for an indirect one
 *
 * A leaf without a frame leaves no trace but its return address at the
 * stack pointer; the walker takes that word for one only if the bytes
 * before it decode as a call: a direct "call rel32", or an indirect call
 * (opcode ff /2, any addressing form and prefixes) up to 8 bytes long.
 *
 * Return: true if an instruction ending at @ra is a call.
 */
bool arch_unwind_user_after_call(struct unwind_user_pos *pos,
				 unsigned long ra, unsigned long *target)
{
	unsigned int start;
	u8 buf[8];
	s32 rel;

	if (pos->ws != 8 || ra < sizeof(buf))
		return false;
	if (unwind_user_copy(buf, (void __user *)(ra - sizeof(buf)), sizeof(buf))) {
		/* The bytes may span two pages: either may be the missing one. */
		unwind_user_read_failed(pos, ra - sizeof(buf));
		unwind_user_read_failed(pos, ra - 1);
		return false;
	}
	/* The usual call, "call rel32": decoding it would say the same. */
	if (buf[sizeof(buf) - 5] == 0xe8) {
		memcpy(&rel, buf + sizeof(buf) - 4, sizeof(rel));
		if (target)
			*target = ra + rel;
		return true;
	}
	if (target)
		*target = 0;
	for (start = 0; start + 2 <= sizeof(buf); start++) {
		struct insn insn;

		if (insn_decode(&insn, buf + start, sizeof(buf) - start,
				INSN_MODE_64) ||
		    insn.length != sizeof(buf) - start)
			continue;
		/* A prefixed "call rel32" (bnd call, for one). */
		if (insn.opcode.bytes[0] == 0xe8) {
			if (target)
				*target = ra + insn.immediate.value;
			return true;
		}
		if (insn.opcode.bytes[0] == 0xff &&
		    X86_MODRM_REG(insn.modrm.bytes[0]) == 2)
			return true;
	}
	return false;
}

/**
 * arch_unwind_user_after_syscall - is the IP at a system call instruction?
 * @pos:	the walk (64-bit tasks only), at its first frame
 *
 * Back from a system call, the IP follows the "syscall" instruction; a
 * call to be restarted has it moved back onto that instruction.
 *
 * Return: true if "syscall" (0f 05) ends at the IP or starts there.
 */
bool arch_unwind_user_after_syscall(struct unwind_user_pos *pos)
{
	u16 before, at;

	if (pos->ws != 8 || pos->ip < 2 || pos->ip >= TASK_SIZE_MAX - 2)
		return false;
	if (get_user(before, (u16 __user *)(pos->ip - 2))) {
		unwind_user_read_failed(pos, pos->ip - 2);
		return false;
	}
	/* Little-endian: the bytes 0f 05. */
	if (before == 0x050f)
		return true;
	if (get_user(at, (u16 __user *)pos->ip)) {
		unwind_user_read_failed(pos, pos->ip);
		return false;
	}
	return at == 0x050f;
}

/* rt_sigreturn as restorers make it: glibc's, and musl's. */
static const u8 unwind_sigreturn_q[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00,	/* mov $15, %rax */
	0x0f, 0x05,					/* syscall */
};

static const u8 unwind_sigreturn_l[] = {
	0xb8, 0x0f, 0x00, 0x00, 0x00,			/* mov $15, %eax */
	0x0f, 0x05,					/* syscall */
};

/**
 * arch_unwind_user_sigframe - step over a signal frame the kernel wrote
 * @pos:	the walk (64-bit tasks only), at a frame whose IP is a
 *		return address
 *
 * A handler returns into its restorer with the stack pointer at the
 * ucontext of its signal frame (struct rt_sigframe, past pretcode), which
 * holds the registers the signal interrupted. If the code at the IP is
 * rt_sigreturn, take the interrupted IP, stack and frame pointers from
 * there: the kernel wrote them, and rt_sigreturn resumes from them.
 *
 * Return: true if @pos is now the interrupted frame's.
 */
bool arch_unwind_user_sigframe(struct unwind_user_pos *pos)
{
	unsigned long frame = pos->sp - sizeof(long);
	struct rt_sigframe __user *sf = (struct rt_sigframe __user *)frame;
	u8 code[sizeof(unwind_sigreturn_q)];
	u64 ip, sp, bp;

	if (pos->ws != 8 || pos->ip >= TASK_SIZE_MAX - sizeof(code) ||
	    frame >= TASK_SIZE_MAX - sizeof(*sf))
		return false;
	if (unwind_user_copy(code, (void __user *)pos->ip, sizeof(code))) {
		/* The bytes may span two pages: either may be the missing one. */
		unwind_user_read_failed(pos, pos->ip);
		unwind_user_read_failed(pos, pos->ip + sizeof(code) - 1);
		return false;
	}
	if (memcmp(code, unwind_sigreturn_q, sizeof(unwind_sigreturn_q)) &&
	    memcmp(code, unwind_sigreturn_l, sizeof(unwind_sigreturn_l)))
		return false;
	if (get_user(ip, &sf->uc.uc_mcontext.ip) ||
	    get_user(sp, &sf->uc.uc_mcontext.sp) ||
	    get_user(bp, &sf->uc.uc_mcontext.bp)) {
		unwind_user_read_failed(pos, frame);
		return false;
	}
	pos->ip = ip;
	pos->sp = sp;
	pos->fp = bp;
	return true;
}
