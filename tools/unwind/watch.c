// SPDX-License-Identifier: GPL-2.0
/*
 * cfi2sframe -W: give a table to each object the kernel's walks meet
 * without one, as they meet it.
 *
 * A machine set up with `cfi2sframe -R DIR...` still maps objects it was
 * not set up for: packages installed since, plugins, programs run from a
 * build tree. The kernel traces the first walk of each process that
 * meets such an object (unwind_sframe:unwind_sframe_missing: the process,
 * the mapping, the file's device and inode). This watcher enables that
 * event in a tracefs instance of its own, reads it, opens each file
 * through /proc/PID/map_files/START-END (the kernel opens no file by
 * path, and the process may have the file under a name this one cannot
 * see), checks that it is still the file traced, and gives its table as
 * -R does. The process's next walk takes it, and so do the walks of
 * every process that maps the file after.
 *
 * Each file is looked at once (by device, inode and generation): a file
 * that cannot have a table is not read again for every process that maps
 * it. At most WATCH_MAX_FILES are remembered, the kernel's own bound on
 * tables; past it, files are looked at again, never refused. A process
 * that exits before its file is opened loses nothing: the next one to
 * map the file is traced again.
 *
 * Reading /proc/PID/map_files needs CAP_SYS_ADMIN, and giving tables
 * CAP_PERFMON: run it as root. SIGINT or SIGTERM ends it, with the
 * summary line -R prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cfi2sframe.h"
#include "convert.h"

#define WATCH_MAX_FILES	65536
#define WATCH_EVENT	"events/unwind_sframe/unwind_sframe_missing/enable"

static const char *const tracefs_roots[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

static char instance[256];
/* Set by the signal handler, read between reads of the pipe. */
static sig_atomic_t stopping;

/* The files looked at already. */
struct watch_file {
	dev_t		dev;
	ino_t		ino;
	unsigned int	gen;
};

static struct watch_file *seen;
static size_t nseen;

static bool seen_before(dev_t dev, ino_t ino, unsigned int gen)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].dev == dev && seen[i].ino == ino &&
		    seen[i].gen == gen)
			return true;
	if (nseen < WATCH_MAX_FILES) {
		if (!seen) {
			seen = calloc(WATCH_MAX_FILES, sizeof(*seen));
			if (!seen)
				return false;
		}
		seen[nseen++] = (struct watch_file){ dev, ino, gen };
	}
	return false;
}

/* Write @val to the instance's file @name; 0 or a negative errno. */
static int instance_write(const char *name, const char *val)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", instance, name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* A tracefs instance of our own, with the event enabled. */
static int instance_open(void)
{
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(tracefs_roots) / sizeof(*tracefs_roots); i++) {
		snprintf(instance, sizeof(instance), "%s/instances/cfi2sframe-%d",
			 tracefs_roots[i], getpid());
		if (mkdir(instance, 0700)) {
			err = -errno;
			continue;
		}
		err = instance_write(WATCH_EVENT, "1");
		if (!err)
			return 0;
		rmdir(instance);
		break;
	}
	fprintf(stderr, "cfi2sframe: -W: cannot trace unwind_sframe_missing in %s: %s\n",
		instance, strerror(-err));
	return err;
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
}

static bool stopped(void)
{
	return __atomic_load_n(&stopping, __ATOMIC_RELAXED);
}

/* One line of the trace: give the file it names its table. */
static void watch_line(const char *line, const char *cache)
{
	unsigned long start, end, pgoff, ino;
	unsigned int maj, min, gen;
	char path[128], name[4096];
	const char *ev;
	ssize_t len;
	int pid, err;

	/* The event's fields, as its TP_printk() prints them, in two parts. */
	ev = strstr(line, "unwind_sframe_missing: pid=");
	if (!ev || sscanf(ev, "unwind_sframe_missing: pid=%d start=%lx end=%lx pgoff=%lx",
			  &pid, &start, &end, &pgoff) != 4)
		return;
	ev = strstr(ev, " dev=");
	if (!ev || sscanf(ev, " dev=%u:%u ino=%lu gen=%u", &maj, &min, &ino, &gen) != 4)
		return;
	if (seen_before(makedev(maj, min), ino, gen))
		return;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", pid, start, end);
	/* The name the process mapped it by, for messages. */
	len = readlink(path, name, sizeof(name) - 1);
	if (len <= 0)
		snprintf(name, sizeof(name), "%s", path);
	else
		name[len] = 0;
	err = cfi2sframe_give(path, name, cache, makedev(maj, min), ino);
	if (err < 0 && !quiet)
		fprintf(stderr, "cfi2sframe: %s (inode %lu of process %d): %s\n",
			name, ino, pid,
			err == -ESTALE ? "another file is mapped there now" :
			strerror(-err));
}

/* Read the pipe, a line at a time, until a signal; false on an error. */
static bool watch_pipe(int fd, const char *cache)
{
	static char buf[65536];
	size_t have = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (!stopped()) {
		char *nl, *at = buf;
		ssize_t n;

		/* A second at most between looks at @stopping. */
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		have += n;
		buf[have] = 0;
		while ((nl = strchr(at, '\n'))) {
			*nl = 0;
			watch_line(at, cache);
			at = nl + 1;
		}
		have -= at - buf;
		memmove(buf, at, have);
		/* A line longer than the buffer is no event of ours. */
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	return true;
}

int watch_run(const char *cache)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char path[512];
	bool ok = false;
	int fd;

	if (cache && mkdir(cache, 0755) && errno != EEXIST) {
		fprintf(stderr, "cfi2sframe: cannot make %s: %s\n", cache,
			strerror(errno));
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (instance_open())
		return 2;
	snprintf(path, sizeof(path), "%s/trace_pipe", instance);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cfi2sframe: %s: %s\n", path, strerror(errno));
	} else {
		if (!quiet)
			fputs("cfi2sframe: watching for objects walks meet without a table\n",
			      stderr);
		ok = watch_pipe(fd, cache);
		if (!ok)
			fprintf(stderr, "cfi2sframe: %s: %s\n", path, strerror(errno));
		close(fd);
	}
	instance_write(WATCH_EVENT, "0");
	rmdir(instance);
	cfi2sframe_summary(false);
	fflush(stdout);
	return ok ? 0 : 1;
}
