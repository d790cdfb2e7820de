// SPDX-License-Identifier: GPL-2.0
/*
 * Frames read from their code: the format of user stack unwinding for the
 * frames of a system call's wrapper and its callers in the same library,
 * where there are neither tables nor frame pointers.
 *
 * A program built with frame pointers makes its system calls through a C
 * library that most distributions build without them. A walk by frame
 * pointers cannot step the library's frames: it skips the program's own
 * caller, or goes on from whatever the library left in the frame pointer
 * register. The architecture can read a frame from the code after its IP
 * instead (arch_unwind_user_code_frame()): what every way to the function's
 * return pops and adds back. That costs a few hundred instructions
 * decoded, so this format reads only where it pays:
 *
 * - the interrupted frame, when the task is in a system call and the
 *   instruction before the IP is the system call instruction;
 * - then its callers while they lie in the same executable mapping, the
 *   library that made the call, up to UNWIND_CODE_FRAMES of them.
 *
 * The walk leaves the mapping at the program's code, which it steps by
 * frame pointers or SFrame as before. A frame read that turns out to be a
 * frame-pointer record, the frame pointer pointing to it, is stepped by
 * that record. If it is the interrupted frame, so is the rest of the walk:
 * the program made the system call itself. A caller's record steps its
 * own frame only, and the next caller in the mapping is read again: a
 * function that keeps no frame pointer may call one that does for
 * alloca(), or call two that do in a row (ld.so's start-up), and the
 * frame-pointer rules would skip its caller. In a library built with
 * frame pointers throughout that reads each of its frames in the walk, up
 * to UNWIND_CODE_FRAMES, from the task's copies after the first time.
 * Where a reading
 * gives up, the interrupted frame goes to the frame-pointer format and its
 * rules for a first frame; a caller in the mapping is stepped by frame
 * pointer with its return address checked to follow a call, so that a
 * frame pointer the library left behind ends the walk rather than adding
 * wrong frames.
 * Every return address read by a frame read from its code is checked the
 * same way.
 *
 * A frame read is exact when its reading followed every way out; where a
 * step rested on a convention (UNWIND_CODE_INFERRED: the psABI's
 * alignment, how compilers lay out calls that do not return, a function
 * too large to read whole), and where a caller that could not be read is
 * stepped by its frame pointer, the entries from the frame's return
 * address on are marked as guessed ones are (state->marked_from). One
 * walk decodes at most UNWIND_CODE_WALK_INSNS instructions, whatever
 * the number of frames, in scratch the task keeps.
 *
 * A task keeps what its readings found (struct unwind_code_cache): a
 * profiled task makes its system calls from a few call sites, again and
 * again, and a reading costs microseconds. A copy holds for the IP in a
 * mapping of the same file (inode, device and generation), at the same
 * offset and address, with the stack at the same alignment (the reading
 * checks the psABI's); the copy stores all of them, not a hash. Only
 * readings that found the frame are kept: one that gave up may have met
 * a page it could not read then, and is tried again. Nothing is kept for
 * a mapping that is writable or not of a file (a JIT's), nor in an mm
 * with uprobes, whose breakpoints change the code read; the copies are
 * dropped at exec. A process that writes into its own read-only text
 * (after mprotect()) may get its own walks wrong, as it could with any
 * table; no other process's.
 *
 * Finding the mapping is most of what a walk that uses a copy costs. The
 * task also keeps the last mapping it found, with the mm's mmap lock
 * sequence count read before the lookup: every change to the mm's
 * mappings takes the mmap lock for writing, which moves the count, so
 * while it reads the same the mapping is the one found (per-VMA locking
 * kernels only, which have the count).
 */
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>
#include <asm/unwind_user_code.h>
#include "feature.h"
#include "code.h"
#include "format.h"

/* Frames one walk reads from their code, at most. */
#define UNWIND_CODE_FRAMES	16

/*
 * Instructions one walk decodes to read them, at most, however many
 * frames it reads: what user code can make a walk cost (a decoded
 * instruction costs some 550 of the kernel's). Readings of the C
 * library's frames decode 23 instructions (the median of its system
 * calls' frames) to 101 (of its return addresses'); one that needs more
 * than is left takes the ways it followed, and is marked. Copies of the
 * readings make most walks decode nothing.
 */
#define UNWIND_CODE_WALK_INSNS	320

/* The task's copies: 2^UNWIND_CODE_CACHE_BITS of them, by IP. */
#define UNWIND_CODE_CACHE_BITS	6

/**
 * struct unwind_code_copy - what one reading that found the frame found
 * @ip:		the IP read from (0: an empty slot)
 * @ident:	the mapping's identity (state->code.ident)
 * @cfa_off:	the CFA's offset from its base
 * @fp_off:	where the caller's frame pointer is, from the CFA
 * @sp_low:	the stack pointer's low four bits when it was read
 * @syscall:	read as a system call's frame: the instruction before @ip
 *		is a system call instruction
 * @cfa_fp:	the CFA is from the frame pointer, not the stack pointer
 * @fp_saved:	the caller's frame pointer was saved at @fp_off, not kept
 * @inferred:	the frame rests on a convention (UNWIND_CODE_INFERRED)
 */
struct unwind_code_copy {
	unsigned long	ip;
	struct unwind_code_ident ident;
	s32		cfa_off;
	s32		fp_off;
	u8		sp_low;
	bool		syscall;
	bool		cfa_fp;
	bool		fp_saved;
	bool		inferred;
};

/**
 * struct unwind_code_mapping - the mapping the task's last lookup found
 * @mm:		the mm it is in (NULL: none kept)
 * @exec_id:	the task's self_exec_id then: an mm freed by an exec and
 *		allocated again may reach the same @seq
 * @seq:	@mm's mmap lock sequence count, read before the lookup
 * @start:	state->code.start it gave
 * @end:	state->code.end
 * @ident:	state->code.ident
 */
struct unwind_code_mapping {
	struct mm_struct *mm;
	u64		exec_id;
	unsigned int	seq;
	unsigned long	start;
	unsigned long	end;
	struct unwind_code_ident ident;
};

/*
 * Used by its task only: no lock. @exec_id is the task's self_exec_id
 * when @copies were made: an exec empties them. @scratch is what a
 * reading works in (ARCH_UNWIND_CODE_SCRATCH bytes): too large for
 * the walk's stack, and allocated once rather than per frame.
 */
struct unwind_code_cache {
	struct unwind_code_mapping mapping;
	u64		exec_id;
	void		*scratch;
	struct unwind_code_copy copies[1 << UNWIND_CODE_CACHE_BITS];
};

/* Its part of a task's block is a pointer to the task's cache. */
static struct unwind_feature unwind_code_feature;

/* A task that is being freed frees its copies (struct unwind_feature). */
static void unwind_code_task_free(void *state)
{
	struct unwind_code_cache **slot = state;

	if (*slot)
		kfree((*slot)->scratch);
	kfree(*slot);
	*slot = NULL;
}

/*
 * The task's copies and scratch, allocated on first use (and charged to
 * its memory cgroup); NULL if they cannot be. A walk looks them up once
 * and keeps them in its cursor.
 */
static struct unwind_code_cache *
unwind_code_cache(struct unwind_user_state *state)
{
	struct unwind_code_cache **slot, *cache = state->code.cache;

	if (cache)
		return cache;
	slot = unwind_feature_task(&unwind_code_feature, true);
	if (!slot)
		return NULL;
	cache = *slot;
	if (!cache) {
		cache = kzalloc(sizeof(*cache), GFP_KERNEL_ACCOUNT |
						__GFP_NOWARN);
		if (!cache)
			return NULL;
		cache->scratch = kmalloc(ARCH_UNWIND_CODE_SCRATCH,
					 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!cache->scratch) {
			kfree(cache);
			return NULL;
		}
		*slot = cache;
	}
	state->code.cache = cache;
	return cache;
}

/*
 * The slot for state->pos.ip in the task's copies; NULL if there are none or
 * none may be used: the mapping is not one whose frames are kept, or the
 * mm has uprobes (a breakpoint in the text changes what a reading finds,
 * and a copy made before it was set would outlive it).
 */
static struct unwind_code_copy *
unwind_code_slot(struct unwind_user_state *state)
{
	struct unwind_code_cache *cache;

	if (!state->code.ident.ino ||
	    test_bit(MMF_HAS_UPROBES, &current->mm->flags))
		return NULL;
	cache = unwind_code_cache(state);
	if (!cache)
		return NULL;
	if (cache->exec_id != current->self_exec_id) {
		memset(cache->copies, 0, sizeof(cache->copies));
		cache->exec_id = current->self_exec_id;
	}
	return &cache->copies[hash_long(state->pos.ip, UNWIND_CODE_CACHE_BITS)];
}

/* The task's copy of the frame at state->pos.ip, if it has one. */
static struct unwind_code_copy *
unwind_code_copy_of(struct unwind_user_state *state)
{
	struct unwind_code_copy *copy = unwind_code_slot(state);

	if (copy && copy->ip == state->pos.ip &&
	    copy->sp_low == (state->pos.sp & 15) &&
	    !memcmp(&copy->ident, &state->code.ident, sizeof(copy->ident)))
		return copy;
	return NULL;
}

/* Keep the frame a reading found, @frame. */
static void unwind_code_keep(struct unwind_code_copy *copy,
			     struct unwind_user_state *state,
				const struct unwind_user_frame *frame,
				bool topmost, bool inferred)
{
	copy->ip = state->pos.ip;
	copy->ident = state->code.ident;
	copy->sp_low = state->pos.sp & 15;
	copy->syscall = topmost;
	copy->cfa_fp = frame->cfa.rule == UNWIND_USER_RULE_FP;
	copy->cfa_off = frame->cfa.off;
	copy->fp_saved = frame->fp.rule == UNWIND_USER_RULE_CFA;
	copy->fp_off = frame->fp.off;
	copy->inferred = inferred;
}

/* The frame a reading found, from its copy; what the reading said. */
static enum unwind_code_found
unwind_code_copied(const struct unwind_code_copy *copy,
		   struct unwind_user_frame *frame)
{
	frame->cfa = (struct unwind_user_loc){
		copy->cfa_fp ? UNWIND_USER_RULE_FP : UNWIND_USER_RULE_SP,
		false, copy->cfa_off };
	frame->ra = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true, -8 };
	if (copy->fp_saved)
		frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_CFA, true,
						      copy->fp_off };
	else
		frame->fp = (struct unwind_user_loc){ UNWIND_USER_RULE_SAME };
	return copy->inferred ? UNWIND_CODE_INFERRED : UNWIND_CODE_EXACT;
}

/*
 * Read the frame at state->pos.ip, out of the walk's budget, or take the
 * task's copy of a reading of the same code.
 */
static enum unwind_code_found
unwind_code_read(struct unwind_user_state *state,
		 struct unwind_user_frame *frame, bool topmost)
{
	struct unwind_code_copy *copy = unwind_code_copy_of(state);
	struct unwind_code_cache *cache = unwind_code_cache(state);
	enum unwind_code_found found;

	if (copy)
		return unwind_code_copied(copy, frame);
	if (!cache)
		return UNWIND_CODE_NONE;
	found = arch_unwind_user_code_frame(&state->pos, state->code.start,
					    state->code.end, frame,
					    cache->scratch,
					    &state->code.budget);
	if (found != UNWIND_CODE_NONE) {
		copy = unwind_code_slot(state);
		if (copy)
			unwind_code_keep(copy, state, frame, topmost,
					 found == UNWIND_CODE_INFERRED);
	}
	return found;
}

/* The entries from the one the frame gives on rest on a convention. */
static void unwind_code_mark(struct unwind_user_state *state)
{
	state->marked_from = min(state->marked_from, state->frames);
}

/* Note @vma, if executable, as the mapping whose frames the walk reads. */
static bool unwind_code_note(struct unwind_user_state *state,
			     struct vm_area_struct *vma)
{
	struct inode *inode;

	if (!(vma->vm_flags & VM_EXEC))
		return false;
	state->code.start = vma->vm_start;
	state->code.end = vma->vm_end;
	memset(&state->code.ident, 0, sizeof(state->code.ident));
	if (!vma->vm_file || (vma->vm_flags & VM_WRITE))
		return true;
	inode = file_inode(vma->vm_file);
	/* An inode number is never 0; 0 keeps nothing. */
	state->code.ident = (struct unwind_code_ident){
		.ino = inode->i_ino, .pgoff = vma->vm_pgoff,
		.start = vma->vm_start, .dev = inode->i_sb->s_dev,
		.gen = inode->i_generation,
	};
	return true;
}

/*
 * Note the executable mapping of the interrupted IP as the one whose
 * frames the walk reads. False if the IP is in none. The VMA's own lock,
 * where there is one, keeps the walk from taking the mmap lock (walks
 * through known text take none; see sframe/registry.c).
 */
static bool unwind_code_lookup(struct unwind_user_state *state,
			       struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	bool found = false;

#ifdef CONFIG_PER_VMA_LOCK
	vma = lock_vma_under_rcu(mm, state->pos.ip);
	if (vma) {
		found = unwind_code_note(state, vma);
		vma_end_read(vma);
		return found;
	}
#endif
	if (mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, state->pos.ip);
	if (vma)
		found = unwind_code_note(state, vma);
	mmap_read_unlock(mm);
	return found;
}

#ifdef CONFIG_PER_VMA_LOCK
/*
 * As unwind_code_lookup(), from the task's last lookup while the mm's
 * mappings have not changed since it. The count is odd while they are
 * being changed: nothing is kept then.
 */
static bool unwind_code_mapping(struct unwind_user_state *state)
{
	struct unwind_code_cache *cache = unwind_code_cache(state);
	struct unwind_code_mapping *last;
	struct mm_struct *mm = current->mm;
	unsigned int seq;

	if (!mm)
		return false;
	if (!cache)
		return unwind_code_lookup(state, mm);
	last = &cache->mapping;
	/* Orders the lookup after it (seqcount read side). */
	seq = raw_read_seqcount(&mm->mm_lock_seq);
	if (last->mm == mm && last->seq == seq &&
	    last->exec_id == current->self_exec_id &&
	    state->pos.ip - last->start < last->end - last->start) {
		state->code.start = last->start;
		state->code.end = last->end;
		state->code.ident = last->ident;
		return true;
	}
	if (!unwind_code_lookup(state, mm))
		return false;
	if (!(seq & 1)) {
		last->mm = mm;
		last->exec_id = current->self_exec_id;
		last->seq = seq;
		last->start = state->code.start;
		last->end = state->code.end;
		last->ident = state->code.ident;
	}
	return true;
}
#else
static bool unwind_code_mapping(struct unwind_user_state *state)
{
	return current->mm && unwind_code_lookup(state, current->mm);
}
#endif

/*
 * Is the frame read a frame-pointer record that the frame pointer points
 * to: the caller's %rbp saved just below the return address, and %rbp
 * holding where? A function that saved %rbp first and uses it for its
 * own values reads the same, but its %rbp points elsewhere.
 */
static bool unwind_code_fp_record(const struct unwind_user_state *state,
				  const struct unwind_user_frame *frame)
{
	if (frame->cfa.rule == UNWIND_USER_RULE_FP)
		return true;
	return frame->fp.rule == UNWIND_USER_RULE_CFA && frame->fp.off == -16 &&
	       state->pos.fp == state->pos.sp + frame->cfa.off - 16;
}

/*
 * A caller in the mapping stepped by its frame pointer, this frame only
 * (the next one is read again), its return address checked to follow a
 * call.
 */
static enum unwind_user_step
unwind_code_by_fp(struct unwind_user_state *state,
		  const struct unwind_user_frame **framep)
{
	struct unwind_user_frame *frame = &state->frame;

	unwind_user_frame_fp_record(state, frame);
	frame->check_ra = true;
	frame->pc_end = frame->pc_start;
	*framep = frame;
	return UNWIND_USER_FRAME;
}

/**
 * unwind_code_frame - the frame at an IP, read from the code after it
 * @state:	the walk, at the frame
 * @topmost:	the frame is the interrupted one
 * @framep:	set to the walk's description (state->frame), filled in
 *
 * Context: Task context, page faults allowed.
 * Return: UNWIND_USER_FRAME, or UNWIND_USER_UNKNOWN outside the frames
 * this format reads (and for an interrupted frame it could not read).
 */
enum unwind_user_step unwind_code_frame(struct unwind_user_state *state,
					bool topmost,
					   const struct unwind_user_frame **framep)
{
	struct unwind_user_frame *frame = &state->frame;
	enum unwind_code_found found;
	struct unwind_code_copy *copy;

	if (state->pos.ws != 8)
		return UNWIND_USER_UNKNOWN;
	if (topmost) {
		state->code.start = 0;
		state->code.end = 0;
		state->code.frames = 0;
		state->code.budget = UNWIND_CODE_WALK_INSNS;
		state->code.cache = NULL;
		if (!state->pos.syscall)
			return UNWIND_USER_UNKNOWN;
		/*
		 * Finding the mapping, reading and keeping the frames take
		 * locks and allocate. No interrupt of user mode is in a
		 * system call: walks that may not fault do not come here.
		 */
		if (state->pos.nofault) {
			state->pos.blocked = true;
			return UNWIND_USER_STOP;
		}
		if (!unwind_code_mapping(state))
			return UNWIND_USER_UNKNOWN;
		/* A copy read as a system call's frame was at such an IP. */
		copy = unwind_code_copy_of(state);
		if (!(copy && copy->syscall) &&
		    !arch_unwind_user_after_syscall(&state->pos)) {
			state->code.end = state->code.start;
			return UNWIND_USER_UNKNOWN;
		}
	} else if (state->pos.ip - 1 - state->code.start >=
		   state->code.end - state->code.start) {
		return UNWIND_USER_UNKNOWN;
	}

	found = UNWIND_CODE_NONE;
	if (state->code.frames < UNWIND_CODE_FRAMES)
		found = unwind_code_read(state, frame, topmost);
	if (found != UNWIND_CODE_NONE) {
		/*
		 * Code that keeps frame pointers: the frame-pointer format
		 * says the same. The interrupted frame's record is the
		 * program's own: that format walks the rest of the stack as
		 * it always has. A caller's record steps its frame alone,
		 * and the next caller is read again, records in a row too:
		 * the one after them may keep none.
		 */
		if (unwind_code_fp_record(state, frame)) {
			if (topmost) {
				state->code.end = state->code.start;
				return UNWIND_USER_UNKNOWN;
			}
			state->code.frames++;
			return unwind_code_by_fp(state, framep);
		}
		state->code.frames++;
		if (found == UNWIND_CODE_INFERRED)
			unwind_code_mark(state);
		*framep = frame;
		frame->outermost = false;
		frame->records = false;
		/* Frame records after it lie above the stack it found. */
		frame->sets_floor = true;
		frame->check_ra = true;
		/* This frame only: the next one is read again. */
		frame->pc_end = frame->pc_start;
		unwind_user_frame_prepare(frame);
		return UNWIND_USER_FRAME;
	}
	if (topmost) {
		state->code.end = state->code.start;
		return UNWIND_USER_UNKNOWN;
	}
	/*
	 * Code without frame pointers: its %rbp is trusted if the return
	 * address it gives checks, which is no proof: what follows is
	 * marked.
	 */
	unwind_code_mark(state);
	return unwind_code_by_fp(state, framep);
}

static struct unwind_feature unwind_code_feature = {
	.task_size	= sizeof(struct unwind_code_cache *),
	.task_free	= unwind_code_task_free,
};

unwind_feature_initcall(unwind_code_feature);
