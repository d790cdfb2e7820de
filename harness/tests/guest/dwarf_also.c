// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD for perf record, for a test only: an event that copies the
 * user stack for perf's dwarf unwinding (PERF_SAMPLE_STACK_USER) also
 * asks for the kernel's deferred user callchain, so that one sample
 * carries both and the two unwinders can be compared frame by frame on
 * the same stack (stock-tables.sh). perf itself never asks for both: its
 * dwarf mode sets exclude_callchain_user. The attr is perf's own, so the
 * file's header says what was asked. LD_PRELOAD is taken out of the
 * environment at once, so the profiled program does not load this.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	unsigned long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == __NR_perf_event_open) {
		struct perf_event_attr *attr = (void *)a[0];

		if (attr->sample_type & PERF_SAMPLE_STACK_USER) {
			attr->exclude_callchain_user = 0;
			attr->defer_callchain = 1;
		}
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static void __attribute__((constructor)) dwarf_also_init(void)
{
	unsetenv("LD_PRELOAD");
}
