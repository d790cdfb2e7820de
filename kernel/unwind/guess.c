// SPDX-License-Identifier: GPL-2.0
/*
 * Guessing the rest of a user stack.
 *
 * Code with neither frame pointers nor SFrame tables (most of what a
 * distribution ships) ends the precise walk after a frame or two. A task
 * that opted in (prctl(PR_SET_USER_STACK_GUESS), inherited by its children
 * and kept across exec) gets more: from the last frame the walk reached,
 * the stack is scanned upward and every word that looks like a return
 * address is reported, after the precise frames, counted in
 * unwind_stacktrace::guessed so that every client can mark them.
 *
 * A word looks like a return address when it points into an executable
 * file mapping (not anonymous memory: JIT code is not guessed) right
 * after a call instruction, which arch_unwind_user_after_call() decodes
 * from the bytes before it; and, for a direct call within one object,
 * when the call's target starts the function of the frame below (found
 * last). Stale return addresses left in a caller's frame by earlier calls
 * can pass these tests too: guesses are guesses.
 *
 * Bounds: UNWIND_GUESS_WORDS words of stack (the scan also ends where the
 * stack stops being readable) and the room left in the trace. The scan
 * only moves up, so a hostile stack costs at most that many reads.
 *
 * Task context, page faults allowed. The stack is copied a chunk at a
 * time without mmap_lock; the chunk's words are then checked against the
 * VMAs under mmap_read_lock, which no fault is taken under; the call
 * instructions are read after the lock is dropped.
 */
#include <linux/mm.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>
#include "walk.h"

/* At most this many words of stack are scanned: 64 KiB on 64-bit. */
#define UNWIND_GUESS_WORDS	8192
/* Words copied from the stack and checked against the VMAs at once. */
#define UNWIND_GUESS_CHUNK	32

/*
 * A direct call at a guessed return address must call the function the
 * frame below it is in: its target at or below that frame's IP, at most
 * this far. Larger functions exist; they lose guesses, never gain false
 * ones.
 */
#define UNWIND_GUESS_FUNC_MAX	SZ_256K

/* An object (file) a word points into: its inode and device. */
struct unwind_guess_obj {
	unsigned long	ino;
	dev_t		dev;
};

/* The last VMA a word fell in, so that runs of stack words cost no lookup. */
struct unwind_guess_vma {
	unsigned long		start;
	unsigned long		end;
	bool			code;
	struct unwind_guess_obj	obj;
};

/* A word that points into code, and the object it points into. */
struct unwind_guess_cand {
	unsigned long		addr;
	struct unwind_guess_obj	obj;
};

/* Does @addr point into an executable file mapping? mmap_lock held. */
static bool unwind_guess_in_code(struct mm_struct *mm, unsigned long addr,
				 struct unwind_guess_vma *last)
{
	struct vm_area_struct *vma;

	/* Small numbers and kernel addresses, the most common words. */
	if (addr < PAGE_SIZE || addr >= TASK_SIZE)
		return false;
	if (addr >= last->start && addr < last->end)
		return last->code;
	vma = vma_lookup(mm, addr);
	if (!vma)
		return false;
	last->start = vma->vm_start;
	last->end = vma->vm_end;
	last->code = (vma->vm_flags & VM_EXEC) && vma->vm_file;
	if (last->code) {
		struct inode *inode = file_inode(vma->vm_file);

		last->obj.ino = inode->i_ino;
		last->obj.dev = inode->i_sb->s_dev;
	}
	return last->code;
}

/* Is the code at @addr a PLT entry: "jmp *disp(%rip)", maybe after endbr64? */
static bool unwind_guess_plt(unsigned long addr)
{
	static const u8 endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	u8 b[8];
	int i = 0;

	if (unwind_user_copy(b, (void __user *)addr, sizeof(b)))
		return false;
	if (!memcmp(b, endbr64, sizeof(endbr64)))
		i = 4;
	if (b[i] == 0xf2)		/* bnd jmp */
		i++;
	return i + 1 < sizeof(b) && b[i] == 0xff && b[i + 1] == 0x25;
}

/*
 * Does the call before @ra (to @target, 0 if indirect) fit the frame below
 * it, at @prev_pc? Indirect calls cannot be checked, nor calls into
 * another object (through its PLT); a call through this object's own PLT
 * cannot either.
 */
static bool unwind_guess_fits(const struct unwind_guess_cand *c,
			      unsigned long target, unsigned long prev_pc,
			      const struct unwind_guess_obj *prev_obj)
{
	if (!target || c->obj.ino != prev_obj->ino || c->obj.dev != prev_obj->dev)
		return true;
	if (target <= prev_pc && prev_pc - target < UNWIND_GUESS_FUNC_MAX)
		return true;
	return unwind_guess_plt(target);
}

/*
 * Copy up to @n words of the stack at @addr; fewer where it stops being
 * readable. Returns how many.
 */
static unsigned int unwind_guess_copy(unsigned long addr, u64 *words,
				      unsigned int n)
{
	unsigned int got;

	if (!unwind_user_copy(words, (void __user *)addr, n * sizeof(*words)))
		return n;
	/* The end of the stack mapping: take the words before it. */
	for (got = 0; got < n; got++)
		if (get_user(words[got], (u64 __user *)addr + got))
			break;
	return got;
}

/**
 * unwind_user_guess - add guessed frames where a precise walk stopped
 * @state:	the walk, at the last frame it reached (its stack pointer is
 *		where the scan starts)
 * @trace:	the walk's trace; guesses are appended and counted in
 *		@trace->guessed
 * @max:	most entries @trace may hold
 *
 * Context: Task context, page faults allowed.
 */
void unwind_user_guess(struct unwind_user_state *state,
		       struct unwind_stacktrace *trace, unsigned int max)
{
	struct unwind_guess_cand cand[UNWIND_GUESS_CHUNK];
	struct unwind_guess_obj prev_obj = { };
	struct unwind_guess_vma last = { };
	struct mm_struct *mm = current->mm;
	unsigned long addr = ALIGN(state->pos.sp, sizeof(u64));
	unsigned long prev_pc, target;
	u64 words[UNWIND_GUESS_CHUNK];
	unsigned int scanned = 0;

	/* The call decoder knows 64-bit code only. */
	if (!mm || state->pos.ws != 8 || !trace->nr)
		return;
	/* The frame below the first guess: the last one walked. */
	prev_pc = trace->entries[trace->nr - 1] - (trace->nr > 1);
	while (scanned < UNWIND_GUESS_WORDS && trace->nr < max) {
		unsigned int n, i, nc = 0;

		n = unwind_guess_copy(addr, words, UNWIND_GUESS_CHUNK);
		if (!n || mmap_read_lock_killable(mm))
			return;
		if (!scanned && unwind_guess_in_code(mm, prev_pc, &last))
			prev_obj = last.obj;
		for (i = 0; i < n; i++) {
			if (!unwind_guess_in_code(mm, words[i], &last))
				continue;
			cand[nc].addr = words[i];
			cand[nc++].obj = last.obj;
		}
		mmap_read_unlock(mm);

		for (i = 0; i < nc && trace->nr < max; i++) {
			if (!arch_unwind_user_after_call(&state->pos,
							 cand[i].addr,
							 &target) ||
			    !unwind_guess_fits(&cand[i], target, prev_pc,
					       &prev_obj))
				continue;
			trace->entries[trace->nr++] = cand[i].addr;
			trace->guessed++;
			prev_pc = cand[i].addr - 1;
			prev_obj = cand[i].obj;
		}
		if (n < UNWIND_GUESS_CHUNK || fatal_signal_pending(current))
			return;
		scanned += n;
		addr += n * sizeof(u64);
		cond_resched();
	}
}

/**
 * unwind_user_guess_prctl - prctl(PR_SET/GET_USER_STACK_GUESS)
 * @option:	PR_SET_USER_STACK_GUESS or PR_GET_USER_STACK_GUESS
 * @arg2:	for SET, 1 to guess, 0 not to
 * @arg3:	must be 0
 * @arg4:	must be 0
 * @arg5:	must be 0
 *
 * The setting is the calling thread's: only the task itself writes it,
 * and its walks read it. Children inherit it, exec keeps it, so that a
 * launcher can turn it on for a program it starts.
 *
 * Context: Task context (the prctl system call).
 * Return: 0 for SET, the setting for GET; -EINVAL for other arguments.
 */
int unwind_user_guess_prctl(int option, unsigned long arg2, unsigned long arg3,
			    unsigned long arg4, unsigned long arg5)
{
	struct unwind_task_info *info = &current->unwind_info;

	if (arg3 || arg4 || arg5)
		return -EINVAL;
	if (option == PR_GET_USER_STACK_GUESS)
		return arg2 ? -EINVAL : READ_ONCE(info->guess);
	if (arg2 > 1)
		return -EINVAL;
	WRITE_ONCE(info->guess, arg2);
	return 0;
}
