// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD for a stock program, for a test only (stock-clients.sh): its
 * first read() or write() reads the program's own user stack with
 * prctl(PR_USER_STACK_READ), as a program built to profile itself would,
 * without rebuilding the program. The entries, then the program's
 * /proc/self/maps after a "--" line, go to the file OWN_STACK_OUT names
 * (created exclusively: one program of a pipeline writes it), so the
 * stack can be named outside the program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/prctl.h>

#define OWN_STACK_MAX	512

static void own_stack_dump(void)
{
	static unsigned long long entries[OWN_STACK_MAX];
	const char *out = getenv("OWN_STACK_OUT");
	char buf[4096];
	FILE *f, *maps;
	size_t n;
	int fd, nr;

	if (!out)
		return;
	nr = prctl(PR_USER_STACK_READ, entries, OWN_STACK_MAX, 0, 0);
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return;
	}
	if (nr < 0)
		fprintf(f, "error %m\n");
	for (int i = 0; i < nr; i++)
		fprintf(f, "%#llx%s\n", entries[i] & ~PR_USER_STACK_GUESSED,
			entries[i] & PR_USER_STACK_GUESSED ? " ?" : "");
	fprintf(f, "--\n");
	maps = fopen("/proc/self/maps", "re");
	while (maps && (n = fread(buf, 1, sizeof(buf), maps)))
		fwrite(buf, 1, n, f);
	if (maps)
		fclose(maps);
	fclose(f);
}

/* The first read() or write() of the process reads, whichever thread. */
static void own_stack_once(void)
{
	static int done;

	if (!__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED))
		own_stack_dump();
}

ssize_t read(int fd, void *buf, size_t count)
{
	static ssize_t (*real)(int, void *, size_t);

	if (!real)
		real = dlsym(RTLD_NEXT, "read");
	own_stack_once();
	return real(fd, buf, count);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	static ssize_t (*real)(int, const void *, size_t);

	if (!real)
		real = dlsym(RTLD_NEXT, "write");
	own_stack_once();
	return real(fd, buf, count);
}
