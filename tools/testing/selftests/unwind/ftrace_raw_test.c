// SPDX-License-Identifier: GPL-2.0
/*
 * The deferred user stack entries of ftrace, read raw from
 * per_cpu/cpuN/trace_pipe_raw (as trace-cmd reads them): every byte of a
 * user_unwind_inode entry is one the event wrote. The instance's buffer is
 * first filled with trace_marker writes of a known byte and cleared, which
 * resets the pages but leaves their old contents; a byte of the entry that
 * nothing wrote would show that pattern.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define INSTANCE	TRACEFS "/instances/unwind_raw"
#define PATTERN		'Z'

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* "ID: N" and the offset of the path field, from the event's format. */
static int inode_format(int *id, int *path_off)
{
	char line[256];
	FILE *f;

	f = fopen(INSTANCE "/events/ftrace/user_unwind_inode/format", "r");
	if (!f)
		return -1;
	*id = *path_off = -1;
	while (fgets(line, sizeof(line), f)) {
		char *field = strstr(line, " path[];");
		char *off = field ? strstr(field, "offset:") : NULL;

		if (!strncmp(line, "ID: ", 4))
			*id = atoi(line + 4);
		if (off)
			*path_off = atoi(off + 7);
	}
	fclose(f);
	return *id < 0 || *path_off < 0 ? -1 : 0;
}

struct raw_tally {
	int	entries;	/* user_unwind_inode entries found */
	int	stale;		/* bytes after the path's NUL that are not 0 */
	int	pattern;	/* of them, bytes of the fill pattern */
};

/* One entry's data: after the NUL that ends the path, only zeroes. */
static void check_inode(const unsigned char *data, int len, int path_off,
			struct raw_tally *t)
{
	int i = path_off;

	while (i < len && data[i])
		i++;
	for (i++; i < len; i++) {
		t->stale += data[i] != 0;
		t->pattern += data[i] == PATTERN;
	}
	t->entries++;
}

/*
 * A sub-buffer: u64 time stamp, u64 commit (bytes of events, flags in the
 * high bits), then events, each a u32 header (type_len: 5 bits, time
 * delta: 27) and its data, 4-byte aligned.
 */
static void parse_page(const unsigned char *page, size_t size, int id,
		       int path_off, struct raw_tally *t)
{
	uint64_t commit;
	size_t off = 16, end;

	memcpy(&commit, page + 8, sizeof(commit));
	end = 16 + (commit & 0xfffff);
	if (end > size)
		end = size;
	while (off + 4 <= end) {
		uint32_t hdr, len32;
		unsigned int type_len;
		const unsigned char *data;
		int len;

		memcpy(&hdr, page + off, 4);
		type_len = hdr & 0x1f;
		if (type_len == 29) {			/* padding */
			if (!(hdr >> 5))
				break;			/* the rest is empty */
			memcpy(&len32, page + off + 4, 4);
			off += 4 + len32;
			continue;
		}
		if (type_len == 30 || type_len == 31) {	/* time extend, stamp */
			off += 8;
			continue;
		}
		if (type_len) {
			len = type_len * 4;
			data = page + off + 4;
			off += 4 + len;
		} else {
			memcpy(&len32, page + off + 4, 4);
			len = len32 - 4;
			data = page + off + 8;
			off += 4 + len32;
		}
		if (off > end || len < 2)
			break;
		if ((data[0] | data[1] << 8) == id)
			check_inode(data, len, path_off, t);
	}
}

static void read_raw(int cpu, int id, int path_off, struct raw_tally *t)
{
	size_t psize = getpagesize();
	unsigned char *page = malloc(psize);
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), INSTANCE "/per_cpu/cpu%d/trace_pipe_raw", cpu);
	fd = open(path, O_RDONLY | O_NONBLOCK);
	while (fd >= 0 && page && (n = read(fd, page, psize)) > 0)
		parse_page(page, n, id, path_off, t);
	if (fd >= 0)
		close(fd);
	free(page);
}

FIXTURE(ftrace_raw) {
	int unused;
};

FIXTURE_SETUP(ftrace_raw)
{
	if (access(TRACEFS "/options/userstacktrace_delay", F_OK))
		SKIP(return, "no userstacktrace_delay option in this kernel");
	rmdir(INSTANCE);
	ASSERT_EQ(0, mkdir(INSTANCE, 0755));
}

FIXTURE_TEARDOWN(ftrace_raw)
{
	write_file(INSTANCE "/options/userstacktrace_delay", "0");
	rmdir(INSTANCE);
}

TEST_F(ftrace_raw, inode_entry_bytes_all_written)
{
	struct raw_tally t = { 0 };
	char fill[1000];
	int id, path_off, fd;
	cpu_set_t cpu0;

	/* Everything on CPU 0: the fill, the event and the return. */
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, inode_format(&id, &path_off));
	ASSERT_EQ(0, write_file(INSTANCE "/buffer_size_kb", "64"));

	memset(fill, PATTERN, sizeof(fill));
	fd = open(INSTANCE "/trace_marker", O_WRONLY);
	ASSERT_GE(fd, 0);
	for (int i = 0; i < 400; i++)
		ASSERT_EQ((ssize_t)sizeof(fill), write(fd, fill, sizeof(fill)));
	close(fd);
	ASSERT_EQ(0, write_file(INSTANCE "/trace", ""));

	ASSERT_EQ(0, write_file(INSTANCE "/events/syscalls/sys_enter_getppid/enable", "1"));
	ASSERT_EQ(0, write_file(INSTANCE "/options/userstacktrace_delay", "1"));
	getppid();
	ASSERT_EQ(0, write_file(INSTANCE "/options/userstacktrace_delay", "0"));
	ASSERT_EQ(0, write_file(INSTANCE "/events/syscalls/sys_enter_getppid/enable", "0"));

	read_raw(0, id, path_off, &t);
	TH_LOG("%d inode entries, %d bytes after a path not written (%d of the fill)",
	       t.entries, t.stale, t.pattern);
	/* This program and the C library. */
	EXPECT_GE(t.entries, 2);
	EXPECT_EQ(0, t.stale);
}

TEST_HARNESS_MAIN
