// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of deferred user stack unwinding: the cookie encoding, the
 * frame-pointer walker stepping over user memory crafted by the test
 * (kunit_vm_mmap() gives the test thread a user address space), frames
 * read from their code, and the walk of an interrupt, without faults.
 */
#include <kunit/test.h>
#include <kunit/visibility.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <linux/unwind_user.h>
#include <asm/unwind_user.h>
#include "../feature.h"
#include "../walk.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void cookie_encoding(struct kunit *test)
{
	u64 c = unwind_cookie_make(0, 1);

	KUNIT_EXPECT_EQ(test, c, (1ULL << 48) | 1);
	KUNIT_EXPECT_EQ(test, unwind_cookie_cpu(c), 0);
	/* Never zero, even for CPU 0 and a zero count. */
	KUNIT_EXPECT_NE(test, unwind_cookie_make(0, 0), 0);

	c = unwind_cookie_make(4095, UNWIND_COOKIE_SEQ_MASK);
	KUNIT_EXPECT_EQ(test, unwind_cookie_cpu(c), 4095);
	KUNIT_EXPECT_EQ(test, c & UNWIND_COOKIE_SEQ_MASK, UNWIND_COOKIE_SEQ_MASK);

	/* A count past 48 bits wraps within them, never into the CPU. */
	c = unwind_cookie_make(3, UNWIND_COOKIE_SEQ_MASK + 2);
	KUNIT_EXPECT_EQ(test, unwind_cookie_cpu(c), 3);
	KUNIT_EXPECT_EQ(test, c & UNWIND_COOKIE_SEQ_MASK, 1);

	/* Two CPUs never give the same cookie for the same count. */
	KUNIT_EXPECT_NE(test, unwind_cookie_make(1, 7), unwind_cookie_make(2, 7));
}

static void state_layout(struct kunit *test)
{
	/* Queued and done halves and the four flags fit without overlap. */
	KUNIT_EXPECT_LE(test, 2 * UNWIND_MAX_CLIENTS, UNWIND_ACTIVE_BIT);
	KUNIT_EXPECT_LT(test, UNWIND_ACTIVE_BIT, UNWIND_PENDING_BIT);
	KUNIT_EXPECT_LT(test, UNWIND_PENDING_BIT, UNWIND_CLOSED_BIT);
	KUNIT_EXPECT_LT(test, UNWIND_CLOSED_BIT, UNWIND_SEALED_BIT);
	KUNIT_EXPECT_LT(test, UNWIND_SEALED_BIT, BITS_PER_LONG);
	KUNIT_EXPECT_GE(test, UNWIND_MAX_CLIENTS, 8);
}

/*
 * Every registered feature's part of a task's block lies inside the
 * block, aligned, and overlaps no other part; the block the current task
 * gets is zeroed and holds a feature's part at the feature's offset.
 */
static void feature_parts(struct kunit *test)
{
	unsigned int built = IS_ENABLED(CONFIG_UNWIND_USER_SFRAME) +
			     IS_ENABLED(CONFIG_UNWIND_USER_REPORT) +
			     IS_ENABLED(CONFIG_UNWIND_USER_CODE_FRAMES);
	const struct unwind_feature *feature, *other, *sized = NULL;
	unsigned int parts = 0;
	void *block, *part;

	list_for_each_entry(feature, &unwind_features, list) {
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(feature->task_off, 8));
		KUNIT_EXPECT_LE(test, feature->task_off + feature->task_size,
				unwind_features_size);
		if (!feature->task_size)
			continue;
		parts++;
		sized = feature;
		list_for_each_entry(other, &unwind_features, list) {
			size_t end = feature->task_off + feature->task_size;
			size_t other_end = other->task_off + other->task_size;

			if (other == feature || !other->task_size)
				continue;
			KUNIT_EXPECT_TRUE(test, end <= other->task_off ||
					  other_end <= feature->task_off);
		}
	}
	/* Each feature this kernel has that keeps state per task. */
	KUNIT_EXPECT_EQ(test, parts, built);
	if (!sized)
		kunit_skip(test, "no feature keeps state per task");

	/* A KUnit case runs in a kernel thread of its own, without a block. */
	KUNIT_ASSERT_NULL(test, current->unwind_info.features);
	KUNIT_EXPECT_NULL(test, unwind_feature_task(sized, false));
	part = unwind_feature_task(sized, true);
	KUNIT_ASSERT_NOT_NULL(test, part);
	block = current->unwind_info.features;
	KUNIT_EXPECT_PTR_EQ(test, part, block + sized->task_off);
	KUNIT_EXPECT_PTR_EQ(test, unwind_feature_task(sized, false), part);
	KUNIT_EXPECT_GE(test, ksize(block), unwind_features_size);
	KUNIT_EXPECT_NULL(test, memchr_inv(block, 0, unwind_features_size));
	/* The thread's exit frees the block (unwind_features_task_free()). */
}

/* A crafted user address space: code at text, frames on stack. */
struct walk_env {
	unsigned long	text;
	unsigned long	stack;
	unsigned int	ws;
	unsigned long	entries[UNWIND_USER_MAX_DEPTH];
	struct unwind_stacktrace trace;
};

#define FRAME(env, n)	((env)->stack + 0x100 + (n) * 0x40)
#define RA(env, n)	((env)->text + 0x10 * ((n) + 1))
#define NOP_IP(env)	((env)->text + 0x800)

static void put_word(struct kunit *test, struct walk_env *env,
		     unsigned long addr, unsigned long val)
{
	u32 v32 = val;

	if (env->ws == 8)
		KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, &val, 8), 0);
	else
		KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, &v32, 4), 0);
}

static void put_frame(struct kunit *test, struct walk_env *env, int n,
		      unsigned long next, unsigned long ra)
{
	put_word(test, env, FRAME(env, n), next);
	put_word(test, env, FRAME(env, n) + env->ws, ra);
}

/* A chain of n frames, each returning to RA(i), the last one ending it. */
static void put_chain(struct kunit *test, struct walk_env *env, int n)
{
	int i;

	for (i = 0; i < n; i++)
		put_frame(test, env, i, i + 1 < n ? FRAME(env, i + 1) : 0,
			  RA(env, i));
}

static void put_code(struct kunit *test, unsigned long addr, const u8 *code,
		     size_t len)
{
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, code, len), 0);
}

static struct walk_env *walk_env(struct kunit *test, unsigned int ws)
{
	/* Compat frames hold 32-bit pointers: map below 4 GiB, fresh each time. */
	static unsigned long compat_slot;
	unsigned long low = ws == 4 ? 0x70000000UL + 0x100000 * compat_slot++ : 0;
	unsigned long flags = MAP_ANONYMOUS | MAP_PRIVATE;
	static const u8 nop = 0x90;
	struct walk_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	env->ws = ws;
	env->trace.entries = env->entries;
	if (low)
		flags |= MAP_FIXED_NOREPLACE;
	env->text = kunit_vm_mmap(test, NULL, low, PAGE_SIZE,
				  PROT_READ | PROT_WRITE | PROT_EXEC, flags, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(env->text));
	env->stack = kunit_vm_mmap(test, NULL, low ? low + 0x10000 : 0,
				   2 * PAGE_SIZE, PROT_READ | PROT_WRITE, flags, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(env->stack));
	put_code(test, NOP_IP(env), &nop, 1);
	return env;
}

static unsigned int walk(struct walk_env *env, unsigned long ip,
			 unsigned long sp, unsigned long fp, unsigned int max)
{
	struct unwind_user_state state = {
		.pos.ip = ip, .pos.sp = sp, .pos.fp = fp, .pos.ws = env->ws,
	};

	return unwind_user_walk(&state, &env->trace, max);
}

static void expect_chain(struct kunit *test, struct walk_env *env,
			 unsigned long first, int ras)
{
	int i;

	KUNIT_ASSERT_EQ(test, env->trace.nr, ras + 1);
	KUNIT_EXPECT_EQ(test, env->entries[0], first);
	for (i = 0; i < ras; i++)
		KUNIT_EXPECT_EQ(test, env->entries[i + 1], RA(env, i));
}

/* Walk from a plain IP with frame 0 current; expect return addresses 0..n-1. */
static void walk_expect(struct kunit *test, struct walk_env *env, int n)
{
	walk(env, NOP_IP(env), FRAME(env, 0) - 0x20, FRAME(env, 0),
	     UNWIND_USER_MAX_DEPTH);
	expect_chain(test, env, NOP_IP(env), n);
}

static void walk_good_chain(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	walk_expect(test, env, 5);
}

static void walk_loop(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	/* Frame 2 points back at frame 1: the walk stops after frame 2. */
	put_frame(test, env, 2, FRAME(env, 1), RA(env, 2));
	walk_expect(test, env, 3);

	/* A frame pointing at itself. */
	put_frame(test, env, 1, FRAME(env, 1), RA(env, 1));
	walk_expect(test, env, 2);
}

static void walk_misaligned(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	put_frame(test, env, 1, FRAME(env, 2) + 3, RA(env, 1));
	walk_expect(test, env, 2);
}

static void walk_kernel_address(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	put_frame(test, env, 1, (unsigned long)env, RA(env, 1));
	walk_expect(test, env, 2);
}

static void walk_unmapped(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	/* The stack's second page goes away: frames there cannot be read. */
	KUNIT_ASSERT_EQ(test, vm_munmap(env->stack + PAGE_SIZE, PAGE_SIZE), 0);
	put_frame(test, env, 1, env->stack + PAGE_SIZE + 0x40, RA(env, 1));
	walk_expect(test, env, 2);
}

static void walk_bad_return_address(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	/* A zero return address ends the stack. */
	put_frame(test, env, 2, FRAME(env, 3), 0);
	walk_expect(test, env, 2);

	/* So does one outside executable memory (here: the stack). */
	put_frame(test, env, 2, FRAME(env, 3), env->stack + 8);
	walk_expect(test, env, 2);
}

static void walk_depth_limit(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 20);
	KUNIT_EXPECT_EQ(test, walk(env, NOP_IP(env), FRAME(env, 0) - 0x20,
				   FRAME(env, 0), 8), 8);
	KUNIT_EXPECT_EQ(test, env->entries[7], RA(env, 6));
	KUNIT_EXPECT_EQ(test, walk(env, NOP_IP(env), FRAME(env, 0) - 0x20,
				   FRAME(env, 0), UNWIND_USER_MAX_DEPTH), 21);
}

/*
 * Sampled on the first instruction(s) of a function or on its return: the
 * return address is on the stack (at sp, or one word above after the push),
 * and the frame pointer still holds the caller's frame.
 */
static void walk_first_frame(struct kunit *test, unsigned int ws,
			     const u8 *code, size_t len, unsigned int sp_words)
{
	struct walk_env *env = walk_env(test, ws);
	unsigned long ip = env->text + 0x400, sp = FRAME(env, 0) - 0x40;
	unsigned long callee_ra = env->text + 0x300;
	int i;

	put_code(test, ip, code, len);
	put_chain(test, env, 3);
	for (i = 0; i < sp_words; i++)
		put_word(test, env, sp + i * ws, 0x1234);
	put_word(test, env, sp + sp_words * ws, callee_ra);
	walk(env, ip, sp, FRAME(env, 0), UNWIND_USER_MAX_DEPTH);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 5);
	KUNIT_EXPECT_EQ(test, env->entries[0], ip);
	KUNIT_EXPECT_EQ(test, env->entries[1], callee_ra);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, env->entries[i + 2], RA(env, i));
}

static void walk_prologue_push(struct kunit *test)
{
	static const u8 push[] = { 0x55, 0x48, 0x89, 0xe5 };

	walk_first_frame(test, 8, push, sizeof(push), 0);
}

static void walk_prologue_endbr(struct kunit *test)
{
	static const u8 endbr_push[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };

	walk_first_frame(test, 8, endbr_push, sizeof(endbr_push), 0);
}

static void walk_prologue_mov(struct kunit *test)
{
	static const u8 mov[] = { 0x48, 0x89, 0xe5, 0x90 };

	walk_first_frame(test, 8, mov, sizeof(mov), 1);
}

static void walk_epilogue_ret(struct kunit *test)
{
	static const u8 ret[] = { 0xc3 };

	walk_first_frame(test, 8, ret, sizeof(ret), 0);
}

static void walk_compat_chain(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 4);

	put_chain(test, env, 5);
	walk_expect(test, env, 5);

	/* 4-byte alignment is enough for compat frames, 2 is not. */
	put_frame(test, env, 1, FRAME(env, 2) + 2, RA(env, 1));
	walk_expect(test, env, 2);
}

/*
 * Compat segments whose bases put the stack and code past 4 GiB when added
 * in 64 bits: the CPU wraps the sum, and so must the walker, for the
 * chain, the first frame's return address and the instruction bytes.
 */
static void walk_compat_wrap(struct kunit *test)
{
	static const u8 push[] = { 0x55, 0x89, 0xe5 };
	const unsigned long ipb = 0xf0000000UL, spb = 0xe0000000UL;
	struct walk_env *env = walk_env(test, 4);
	struct unwind_user_state state = { .pos.ws = 4 };
	unsigned long code = env->text + 0x900;
	int i;

	/* Frames hold segment offsets: FRAME(i) - spb and RA(i) - ipb. */
	for (i = 0; i < 3; i++)
		put_frame(test, env, i, i < 2 ? (u32)(FRAME(env, i + 1) - spb) : 0,
			  (u32)(RA(env, i) - ipb));

	state.pos.ip = (u32)(NOP_IP(env) - ipb);
	state.pos.sp = (u32)(FRAME(env, 0) - 0x20 - spb);
	state.pos.fp = (u32)(FRAME(env, 0) - spb);
	state.pos.ip_base = ipb;
	state.pos.sp_base = spb;
	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	expect_chain(test, env, NOP_IP(env), 3);

	/* On a push: the return address at sp, then frame 1 on. */
	put_code(test, code, push, sizeof(push));
	put_word(test, env, env->stack + 0x80, (u32)(RA(env, 0) - ipb));
	state.pos.ip = (u32)(code - ipb);
	state.pos.sp = (u32)(env->stack + 0x80 - spb);
	state.pos.fp = (u32)(FRAME(env, 1) - spb);
	unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	KUNIT_ASSERT_EQ(test, env->trace.nr, 4);
	KUNIT_EXPECT_EQ(test, env->entries[0], code);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, env->entries[i + 1], RA(env, i));
}

static void walk_compat_prologue(struct kunit *test)
{
	static const u8 push[] = { 0x55, 0x89, 0xe5 };
	static const u8 mov[] = { 0x89, 0xe5, 0x90 };

	walk_first_frame(test, 4, push, sizeof(push), 0);
	walk_first_frame(test, 4, mov, sizeof(mov), 1);
}

#ifdef CONFIG_UNWIND_USER_CODE_FRAMES
/*
 * Frames read from their code: a "library" page of code without frame
 * pointers makes the system call; the program's frames, in env->text,
 * keep frame pointers. The program called the library from PROG_RA.
 */
#define LIB_IP(lib)	((lib) + 0x100)
#define PROG_RA(env)	((env)->text + 0x605)

struct code_env {
	struct walk_env	*env;
	unsigned long	lib;
	unsigned long	sp;
};

static struct code_env code_env(struct kunit *test)
{
	static const u8 call[] = { 0xe8, 0, 0, 0, 0 };
	struct code_env r = { .env = walk_env(test, 8) };
	int i;

	r.lib = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
			      PROT_READ | PROT_WRITE | PROT_EXEC,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(r.lib));
	r.sp = FRAME(r.env, 0) - 0x80;
	/* Return addresses follow calls: the walk checks those it reads. */
	put_code(test, PROG_RA(r.env) - sizeof(call), call, sizeof(call));
	for (i = 0; i < 3; i++)
		put_code(test, RA(r.env, i) - sizeof(call), call, sizeof(call));
	put_chain(test, r.env, 3);
	return r;
}

/*
 * Walk from the IP after the first "syscall" (0f 05) of @code, placed at
 * LIB_IP, with the frame pointer register holding @fp.
 */
static void code_walk(struct kunit *test, struct code_env *r,
		      const u8 *code, size_t len, unsigned long fp)
{
	struct unwind_user_state state = {
		.pos.sp = r->sp, .pos.fp = fp, .pos.ws = 8, .pos.syscall = true,
	};
	size_t i;

	put_code(test, LIB_IP(r->lib), code, len);
	for (i = 0; i + 1 < len; i++) {
		if (code[i] == 0x0f && code[i + 1] == 0x05)
			break;
	}
	KUNIT_ASSERT_LT(test, i + 1, len);
	state.pos.ip = LIB_IP(r->lib) + i + 2;
	unwind_user_walk(&state, &r->env->trace, UNWIND_USER_MAX_DEPTH);
}

/* The wrapper's frame found: its caller, then the program's chain. */
static void code_expect_caller(struct kunit *test, struct code_env *r)
{
	int i;

	KUNIT_ASSERT_EQ(test, r->env->trace.nr, 5);
	KUNIT_EXPECT_EQ(test, r->env->entries[1], PROG_RA(r->env));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, r->env->entries[i + 2], RA(r->env, i));
}

/* Not read: the frame-pointer rules, which skip the wrapper's caller. */
static void code_expect_fp(struct kunit *test, struct code_env *r)
{
	int i;

	KUNIT_ASSERT_EQ(test, r->env->trace.nr, 4);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, r->env->entries[i + 1], RA(r->env, i));
}

/*
 * Walk @code, whose frame holds the caller's return address @ra_off bytes
 * above the stack pointer, with the program's chain in the frame pointer.
 */
static void code_caller_at(struct kunit *test, const u8 *code, size_t len,
			   unsigned long ra_off)
{
	struct code_env r = code_env(test);

	put_word(test, r.env, r.sp + ra_off, PROG_RA(r.env));
	code_walk(test, &r, code, len, FRAME(r.env, 0));
	code_expect_caller(test, &r);
}

/* glibc's cancellable read(): a frame of 0x28 bytes around the call. */
static void code_wrapper(struct kunit *test)
{
	static const u8 code[] = {
		0x48, 0x83, 0xec, 0x28,		/* sub $0x28,%rsp */
		0x0f, 0x05,			/* syscall */
		0x48, 0x83, 0xc4, 0x28,		/* add $0x28,%rsp */
		0xc3,				/* ret */
	};

	code_caller_at(test, code, sizeof(code), 0x28);
}

/* %rbp used for the wrapper's own purpose, the caller's popped at its end. */
static void code_saved_fp(struct kunit *test)
{
	static const u8 code[] = {
		0x55, 0x53,			/* push %rbp; push %rbx */
		0x48, 0x83, 0xec, 0x18,		/* sub $0x18,%rsp */
		0x48, 0x89, 0xfd,		/* mov %rdi,%rbp */
		0x0f, 0x05,			/* syscall */
		0x48, 0x83, 0xc4, 0x18,		/* add $0x18,%rsp */
		0x5b, 0x5d,			/* pop %rbx; pop %rbp */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);

	put_word(test, r.env, r.sp + 0x20, FRAME(r.env, 0));
	put_word(test, r.env, r.sp + 0x28, PROG_RA(r.env));
	code_walk(test, &r, code, sizeof(code), 0x1234);
	code_expect_caller(test, &r);
}

/* Both ways of a branch, a loop, and a call that does not return. */
static void code_ways(struct kunit *test)
{
	static const u8 code[] = {
		0x0f, 0x05,			/* syscall */
		0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff, /* cmp $-4095,%rax */
		0x73, 0x09,			/* jae fail */
		0xff, 0xc9,			/* loop: dec %ecx */
		0x75, 0xfc,			/* jne loop */
		0x48, 0x83, 0xc4, 0x18,		/* add $0x18,%rsp */
		0xc3,				/* ret */
		0xe8, 0, 0, 0, 0,		/* fail: call abort */
		0x0f, 0x1f, 0x00,		/* nopl (%rax): padding */
		0x55,				/* push %rbp: another function */
	};

	code_caller_at(test, code, sizeof(code), 0x18);
}

/* A tail call through memory returns to the caller, as a ret would. */
static void code_tail_call(struct kunit *test)
{
	static const u8 code[] = {
		0x0f, 0x05,			/* syscall */
		0x48, 0x83, 0xc4, 0x08,		/* add $0x8,%rsp */
		0xff, 0x25, 0, 0, 0, 0,		/* jmp *0(%rip) */
	};

	code_caller_at(test, code, sizeof(code), 0x8);
}

/* A wrapper with a frame pointer: "leave" takes the frame from %rbp. */
static void code_leave(struct kunit *test)
{
	static const u8 code[] = {
		0x0f, 0x05,			/* syscall */
		0xc9,				/* leave */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);

	code_walk(test, &r, code, sizeof(code), FRAME(r.env, 0));
	code_expect_fp(test, &r);
}

/*
 * Code the reading cannot follow exactly: ways that disagree, a stack
 * realigned, a way too long. The frame-pointer rules take over.
 */
static void code_gives_up(struct kunit *test)
{
	static const u8 disagree[] = {
		0x0f, 0x05,			/* syscall */
		0x85, 0xc0,			/* test %eax,%eax */
		0x74, 0x05,			/* je 1f */
		0x48, 0x83, 0xc4, 0x08,		/* add $0x8,%rsp */
		0xc3,				/* ret */
		0x48, 0x83, 0xc4, 0x18,		/* 1: add $0x18,%rsp */
		0xc3,				/* ret */
	};
	static const u8 realign[] = {
		0x0f, 0x05,			/* syscall */
		0x48, 0x83, 0xe4, 0xf0,		/* and $-16,%rsp */
		0xc3,				/* ret */
	};
	static const u8 spin[] = {
		0x0f, 0x05,			/* syscall */
		0xeb, 0xfe,			/* jmp . */
	};
	struct code_env r = code_env(test);
	u8 *slide;

	put_word(test, r.env, r.sp, PROG_RA(r.env));
	put_word(test, r.env, r.sp + 8, PROG_RA(r.env));
	code_walk(test, &r, disagree, sizeof(disagree), FRAME(r.env, 0));
	code_expect_fp(test, &r);
	code_walk(test, &r, realign, sizeof(realign), FRAME(r.env, 0));
	code_expect_fp(test, &r);
	code_walk(test, &r, spin, sizeof(spin), FRAME(r.env, 0));
	code_expect_fp(test, &r);

	/* 1000 nops before the ret: past the reading's budget. */
	slide = kunit_kzalloc(test, 1003, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, slide);
	slide[0] = 0x0f;
	slide[1] = 0x05;
	memset(slide + 2, 0x90, 1000);
	slide[1002] = 0xc3;
	code_walk(test, &r, slide, 1003, FRAME(r.env, 0));
	code_expect_fp(test, &r);
}

/*
 * Only at a system call: a wrapper interrupted elsewhere, or a task not
 * in a system call, keeps the frame-pointer rules.
 */
static void code_not_syscall(struct kunit *test)
{
	static const u8 code[] = {
		0x48, 0x83, 0xec, 0x28,		/* sub $0x28,%rsp */
		0x0f, 0x05,			/* syscall */
		0x48, 0x83, 0xc4, 0x28,		/* add $0x28,%rsp */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);
	struct unwind_user_state state = {
		.pos.sp = r.sp, .pos.fp = FRAME(r.env, 0), .pos.ws = 8,
		.pos.syscall = true,
		.pos.ip = LIB_IP(r.lib),
	};

	put_word(test, r.env, r.sp + 0x28, PROG_RA(r.env));
	put_code(test, LIB_IP(r.lib), code, sizeof(code));
	/* On the sub, before the syscall. */
	unwind_user_walk(&state, &r.env->trace, UNWIND_USER_MAX_DEPTH);
	code_expect_fp(test, &r);
	/* After it, but the entry was no system call. */
	state = (struct unwind_user_state){
		.pos.sp = r.sp, .pos.fp = FRAME(r.env, 0), .pos.ws = 8,
		.pos.ip = LIB_IP(r.lib) + 6,
	};
	unwind_user_walk(&state, &r.env->trace, UNWIND_USER_MAX_DEPTH);
	code_expect_fp(test, &r);
}

/*
 * Two ways meet where only one has loaded %rbp from the stack (a local,
 * which the reading cannot tell from a saved %rbp): from there on where
 * the caller's %rbp is, is unknown, until the pop that restores it.
 */
static void code_rbp_loaded(struct kunit *test)
{
	static const u8 code[] = {
		0x0f, 0x05,			/* syscall */
		0x85, 0xc0,			/* test %eax,%eax */
		0x78, 0x0f,			/* js 1f */
		0x48, 0x8b, 0x6c, 0x24, 0x08,	/* mov 0x8(%rsp),%rbp */
		0x83, 0xf8, 0x01,		/* cmp $0x1,%eax */
		0x77, 0x05,			/* ja 1f */
		0xbd, 0x02, 0, 0, 0,		/* mov $0x2,%ebp */
		0xbd, 0x01, 0, 0, 0,		/* 1: mov $0x1,%ebp */
		0x48, 0x83, 0xc4, 0x10,		/* add $0x10,%rsp */
		0x5d,				/* pop %rbp */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);

	put_word(test, r.env, r.sp + 0x10, FRAME(r.env, 0));
	put_word(test, r.env, r.sp + 0x18, PROG_RA(r.env));
	code_walk(test, &r, code, sizeof(code), 0x1234);
	code_expect_caller(test, &r);
}

/* A caller whose return address follows no call ends the walk there. */
static void code_checks_return(struct kunit *test)
{
	static const u8 code[] = {
		0x0f, 0x05,			/* syscall */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);

	r.sp += 8;	/* a leaf wrapper: as at its entry and return */
	put_word(test, r.env, r.sp, NOP_IP(r.env));
	code_walk(test, &r, code, sizeof(code), FRAME(r.env, 0));
	KUNIT_EXPECT_EQ(test, r.env->trace.nr, 1);
}

/*
 * A caller in the library, read at its return address. One way of it
 * calls a function that does not return, last in the function: it runs
 * on into the next function, which returns with the stack one word off
 * the alignment a return address gives. That way is not the frame's.
 */
static void code_library_caller(struct kunit *test)
{
	static const u8 wrapper[] = {
		0x0f, 0x05,			/* syscall */
		0xc3,				/* ret */
	};
	static const u8 caller[] = {
		0xe8, 0xfb, 0xfe, 0xff, 0xff,	/* call wrapper */
		0x85, 0xc0,			/* test %eax,%eax */
		0x75, 0x05,			/* jne 1f */
		0x48, 0x83, 0xc4, 0x18,		/* add $0x18,%rsp */
		0xc3,				/* ret */
		0xe8, 0, 0, 0, 0,		/* 1: call abort */
		0x48, 0x89, 0xf8,		/* next function: mov %rdi,%rax */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);
	unsigned long ra = r.lib + 0x205;
	int i;

	r.sp += 8;	/* a leaf wrapper: as at its entry and return */
	put_code(test, r.lib + 0x200, caller, sizeof(caller));
	put_word(test, r.env, r.sp, ra);
	put_word(test, r.env, r.sp + 0x20, PROG_RA(r.env));
	code_walk(test, &r, wrapper, sizeof(wrapper), FRAME(r.env, 0));
	KUNIT_ASSERT_EQ(test, r.env->trace.nr, 6);
	KUNIT_EXPECT_EQ(test, r.env->entries[1], ra);
	KUNIT_EXPECT_EQ(test, r.env->entries[2], PROG_RA(r.env));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, r.env->entries[i + 3], RA(r.env, i));
}

/*
 * The same after a system call: the wrapper's failure path calls a
 * function that does not return and runs on into the next function. Its
 * stack is one word off where the wrapper's own return has it.
 */
static void code_syscall_run_on(struct kunit *test)
{
	static const u8 code[] = {
		0x48, 0x83, 0xec, 0x18,		/* sub $0x18,%rsp */
		0x0f, 0x05,			/* syscall */
		0x85, 0xc0,			/* test %eax,%eax */
		0x78, 0x05,			/* js 1f */
		0x48, 0x83, 0xc4, 0x18,		/* add $0x18,%rsp */
		0xc3,				/* ret */
		0xe8, 0, 0, 0, 0,		/* 1: call abort */
		0x48, 0x89, 0xf8,		/* next function: mov %rdi,%rax */
		0xc3,				/* ret */
	};

	code_caller_at(test, code, sizeof(code), 0x18);
}

/*
 * Library functions that keep frame pointers, two in a row, called by one
 * that does not: each record steps its own frame only, and the caller
 * without one is read from its code, so that the program's frame that
 * called into the library is not skipped.
 */
static void code_records_in_a_row(struct kunit *test)
{
	static const u8 wrapper[] = {
		0x0f, 0x05,			/* syscall */
		0xc3,				/* ret */
	};
	static const u8 record_a[] = {
		0x55,				/* push %rbp */
		0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
		0xe8, 0xf7, 0xfe, 0xff, 0xff,	/* call wrapper */
		0x5d,				/* pop %rbp */
		0xc3,				/* ret */
	};
	static const u8 record_b[] = {
		0x55,				/* push %rbp */
		0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
		0xe8, 0x77, 0xff, 0xff, 0xff,	/* call record_a */
		0x5d,				/* pop %rbp */
		0xc3,				/* ret */
	};
	static const u8 no_record[] = {
		0x48, 0x83, 0xec, 0x18,		/* sub $0x18,%rsp */
		0xe8, 0x77, 0xff, 0xff, 0xff,	/* call record_b */
		0x48, 0x83, 0xc4, 0x18,		/* add $0x18,%rsp */
		0xc3,				/* ret */
	};
	struct code_env r = code_env(test);
	unsigned long ra_a = r.lib + 0x209, ra_b = r.lib + 0x289;
	unsigned long ra_c = r.lib + 0x309;
	int i;

	r.sp += 8;	/* a leaf wrapper: as at its entry and return */
	put_code(test, r.lib + 0x200, record_a, sizeof(record_a));
	put_code(test, r.lib + 0x280, record_b, sizeof(record_b));
	put_code(test, r.lib + 0x300, no_record, sizeof(no_record));
	/* The records chain through %rbp; no_record leaves it alone. */
	put_word(test, r.env, r.sp, ra_a);
	put_word(test, r.env, r.sp + 0x08, r.sp + 0x18);
	put_word(test, r.env, r.sp + 0x10, ra_b);
	put_word(test, r.env, r.sp + 0x18, FRAME(r.env, 0));
	put_word(test, r.env, r.sp + 0x20, ra_c);
	put_word(test, r.env, r.sp + 0x40, PROG_RA(r.env));
	code_walk(test, &r, wrapper, sizeof(wrapper), r.sp + 0x08);
	KUNIT_ASSERT_EQ(test, r.env->trace.nr, 8);
	KUNIT_EXPECT_EQ(test, r.env->entries[1], ra_a);
	KUNIT_EXPECT_EQ(test, r.env->entries[2], ra_b);
	KUNIT_EXPECT_EQ(test, r.env->entries[3], ra_c);
	KUNIT_EXPECT_EQ(test, r.env->entries[4], PROG_RA(r.env));
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, r.env->entries[i + 5], RA(r.env, i));
}

static struct kunit_case unwind_code_cases[] = {
	KUNIT_CASE(code_wrapper),
	KUNIT_CASE(code_saved_fp),
	KUNIT_CASE(code_ways),
	KUNIT_CASE(code_tail_call),
	KUNIT_CASE(code_leave),
	KUNIT_CASE(code_gives_up),
	KUNIT_CASE(code_not_syscall),
	KUNIT_CASE(code_rbp_loaded),
	KUNIT_CASE(code_checks_return),
	KUNIT_CASE(code_library_caller),
	KUNIT_CASE(code_syscall_run_on),
	KUNIT_CASE(code_records_in_a_row),
	{}
};

static struct kunit_suite unwind_code_suite = {
	.name = "unwind_user_code",
	.test_cases = unwind_code_cases,
};

kunit_test_suite(unwind_code_suite);
#endif

/*
 * The walk an interrupt of user mode makes (unwind_user_nofault()): no
 * fault, no lock. It must give the frames the walk that may fault gives,
 * or say it is blocked.
 */
static unsigned int walk_nofault(struct walk_env *env, bool guess,
				 bool *blocked)
{
	struct unwind_user_state state = {
		.pos.ip = NOP_IP(env), .pos.sp = FRAME(env, 0) - 0x20,
		.pos.fp = FRAME(env, 0), .pos.ws = env->ws, .guess = guess,
		.pos.nofault = true,
	};
	unsigned int nr;

	pagefault_disable();
	nr = unwind_user_walk(&state, &env->trace, UNWIND_USER_MAX_DEPTH);
	pagefault_enable();
	*blocked = state.pos.blocked;
	return nr;
}

/* Walk both ways; expect the same n return addresses, not blocked. */
static void nofault_expect(struct kunit *test, struct walk_env *env, int n)
{
	bool blocked;

	walk_expect(test, env, n);
	memset(env->entries, 0, sizeof(env->entries));
	walk_nofault(env, false, &blocked);
	KUNIT_EXPECT_FALSE(test, blocked);
	expect_chain(test, env, NOP_IP(env), n);
}

static void nofault_same_walk(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	nofault_expect(test, env, 5);
}

static void nofault_compat(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 4);

	put_chain(test, env, 5);
	nofault_expect(test, env, 5);
}

/*
 * A frame in a page of the stack never touched: not present, so the walk
 * without faults is blocked; the walk that may fault reads it (zeros: the
 * stack ends there), after which both agree.
 */
static void nofault_page_not_present(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);
	bool blocked;

	put_chain(test, env, 5);
	put_frame(test, env, 1, env->stack + PAGE_SIZE + 0x40, RA(env, 1));
	walk_nofault(env, false, &blocked);
	KUNIT_EXPECT_TRUE(test, blocked);
	nofault_expect(test, env, 2);
}

/* Nothing mapped where a frame points: both walks end there alike. */
static void nofault_unmapped(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	KUNIT_ASSERT_EQ(test, vm_munmap(env->stack + PAGE_SIZE, PAGE_SIZE), 0);
	put_frame(test, env, 1, env->stack + PAGE_SIZE + 0x40, RA(env, 1));
	nofault_expect(test, env, 2);
}

/* A return address in memory that is not executable ends both walks. */
static void nofault_not_text(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);

	put_chain(test, env, 5);
	put_frame(test, env, 2, FRAME(env, 3), env->stack + 0x10);
	nofault_expect(test, env, 2);
}

/*
 * A task that guesses needs the scan where its walk stops early, and the
 * scan takes the mmap lock. (Here the first return address follows no
 * call, which stops a walk that guesses.)
 */
static void nofault_guess(struct kunit *test)
{
	struct walk_env *env = walk_env(test, 8);
	bool blocked;

	put_chain(test, env, 5);
	walk_expect(test, env, 5);
	walk_nofault(env, false, &blocked);
	KUNIT_EXPECT_FALSE(test, blocked);
	walk_nofault(env, true, &blocked);
	KUNIT_EXPECT_TRUE(test, blocked);
}

/*
 * A walk that may not fault runs in interrupts, NMIs included, so its
 * reads of user memory must not go through copy_from_user(), whose
 * usercopy fault injection (should_fail()) takes locks and is not
 * NMI-safe. With the next injected failure armed for this task
 * (fail_nth, which counts the should_fail() calls the task makes), the
 * read of a call instruction before a return address still succeeds, and
 * no should_fail() ran.
 */
static void nofault_no_fault_injection(struct kunit *test)
{
#ifdef CONFIG_FAULT_INJECTION_USERCOPY
	struct unwind_user_state state = { .pos.ws = 8, .pos.nofault = true };
	static const u8 call[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
	struct walk_env *env = walk_env(test, 8);
	unsigned int left;
	bool after;

	put_code(test, RA(env, 0) - sizeof(call), call, sizeof(call));
	current->fail_nth = 1;
	pagefault_disable();
	after = arch_unwind_user_after_call(&state.pos, RA(env, 0), NULL);
	pagefault_enable();
	left = current->fail_nth;
	current->fail_nth = 0;
	KUNIT_EXPECT_TRUE(test, after);
	KUNIT_EXPECT_EQ(test, left, 1);
#else
	kunit_skip(test, "needs CONFIG_FAULT_INJECTION_USERCOPY");
#endif
}

static struct kunit_case unwind_nofault_cases[] = {
	KUNIT_CASE(nofault_no_fault_injection),
	KUNIT_CASE(nofault_same_walk),
	KUNIT_CASE(nofault_compat),
	KUNIT_CASE(nofault_page_not_present),
	KUNIT_CASE(nofault_unmapped),
	KUNIT_CASE(nofault_not_text),
	KUNIT_CASE(nofault_guess),
	{}
};

static struct kunit_suite unwind_nofault_suite = {
	.name = "unwind_user_nofault",
	.test_cases = unwind_nofault_cases,
};

static struct kunit_case unwind_cookie_cases[] = {
	KUNIT_CASE(cookie_encoding),
	KUNIT_CASE(state_layout),
	KUNIT_CASE(feature_parts),
	{}
};

static struct kunit_suite unwind_cookie_suite = {
	.name = "unwind_deferred",
	.test_cases = unwind_cookie_cases,
};

static struct kunit_case unwind_walker_cases[] = {
	KUNIT_CASE(walk_good_chain),
	KUNIT_CASE(walk_loop),
	KUNIT_CASE(walk_misaligned),
	KUNIT_CASE(walk_kernel_address),
	KUNIT_CASE(walk_unmapped),
	KUNIT_CASE(walk_bad_return_address),
	KUNIT_CASE(walk_depth_limit),
	KUNIT_CASE(walk_prologue_push),
	KUNIT_CASE(walk_prologue_endbr),
	KUNIT_CASE(walk_prologue_mov),
	KUNIT_CASE(walk_epilogue_ret),
	KUNIT_CASE(walk_compat_chain),
	KUNIT_CASE(walk_compat_prologue),
	KUNIT_CASE(walk_compat_wrap),
	{}
};

static struct kunit_suite unwind_walker_suite = {
	.name = "unwind_user_walker",
	.test_cases = unwind_walker_cases,
};

kunit_test_suites(&unwind_cookie_suite, &unwind_walker_suite,
		  &unwind_nofault_suite);

MODULE_DESCRIPTION("KUnit tests of deferred user stack unwinding");
MODULE_LICENSE("GPL");
