/* SPDX-License-Identifier: GPL-2.0 */
/*
 * user_backtrace(): backtrace()'s interface, answered by the kernel's user
 * stack walker through prctl(PR_USER_STACK_READ).
 *
 *	void *ips[64];
 *	int n = user_backtrace(ips, 64);	// like backtrace(ips, 64)
 *
 * ips[0] is the return address into the caller of user_backtrace(), then
 * one per frame above it, as backtrace() gives them. It is one system call:
 * async-signal-safe, no allocation, no unwind tables read in user space.
 * The kernel walks frame pointers and SFrame tables; code with neither
 * ends the stack early (backtrace() reads .eh_frame there).
 *
 * The system call is made here, not through the C library's prctl(): a
 * library wrapper has no frame of its own, and a frame-pointer walk from
 * inside it would not see which function called it. Here the walk starts
 * in this function's own frame, and its first entry is dropped.
 */
#ifndef UNWIND_USER_BACKTRACE_H
#define UNWIND_USER_BACKTRACE_H

#include <stdint.h>
#include <sys/prctl.h>

/* Most entries the kernel returns (its walk depth). */
#define USER_BACKTRACE_MAX	512

/* Always inline: the caller's own frame must be the walk's first. */
static inline __attribute__((always_inline)) long
user_stack_read(uint64_t *buf, unsigned long size, unsigned long skip)
{
	long ret;
#ifdef __x86_64__
	register long r10 asm("r10") = skip;
	register long r8 asm("r8") = 0;

	asm volatile("syscall"
		     : "=a" (ret)
		     : "0" (157L), "D" ((long)PR_USER_STACK_READ), "S" (buf),
		       "d" (size), "r" (r10), "r" (r8)
		     : "rcx", "r11", "memory");
#elif defined(__i386__)
	asm volatile("push %%ebx\n\t"
		     "mov %2, %%ebx\n\t"
		     "int $0x80\n\t"
		     "pop %%ebx"
		     : "=a" (ret)
		     : "0" (172L), "r" ((long)PR_USER_STACK_READ), "c" (buf),
		       "d" (size), "S" (skip), "D" (0L)
		     : "memory");
#else
#error "user_backtrace.h knows x86 only"
#endif
	return ret;
}

static __attribute__((noinline, unused)) int
user_backtrace(void **buffer, int size)
{
	long n;

	/*
	 * Build a frame even with no locals (GCC omits it in such leaves):
	 * the walk must find this function's return address in it.
	 */
	asm volatile("" : : "r" (__builtin_frame_address(0)));
	if (size <= 0)
		return 0;
	if (size > USER_BACKTRACE_MAX)
		size = USER_BACKTRACE_MAX;
	/* Entry 0 is this function's own IP, after the system call. */
	if (sizeof(void *) == sizeof(uint64_t)) {
		/* A pointer is a __u64 entry: the kernel fills @buffer. */
		n = user_stack_read((uint64_t *)buffer, size, 1);
	} else {
		uint64_t ips[USER_BACKTRACE_MAX];

		n = user_stack_read(ips, size, 1);
		for (long i = 0; i < n; i++)
			buffer[i] = (void *)(uintptr_t)ips[i];
	}
	return n < 0 ? 0 : n;
}

#endif /* UNWIND_USER_BACKTRACE_H */
