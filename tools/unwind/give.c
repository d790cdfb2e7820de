// SPDX-License-Identifier: GPL-2.0
/*
 * cfi2sframe -R and -U, and the gifts of -W (watch.c): give the kernel the
 * tables of files (prctl(PR_SFRAME_FILE_ADD)), converted or from a cache
 * kept by build ID, and take them back.
 */
#define _GNU_SOURCE	/* nftw() */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi2sframe.h"
#include "convert.h"

/* The kernel's interface for tables by file (<linux/prctl.h> of the series). */
#ifndef PR_SFRAME_FILE_ADD
#define PR_SFRAME_FILE_ADD	0x5346462b
#define PR_SFRAME_FILE_REMOVE	0x5346462d
#endif
struct sframe_file_arg {		/* struct prctl_sframe_file */
	int32_t		fd;
	uint32_t	build_id_size;
	uint64_t	table;
	uint64_t	table_size;
	uint8_t		build_id[20];
	uint32_t	flags;
};

/*
 * Cached tables are named by build ID and this tag: a change to what the
 * tables say changes it, so a cache filled by an older converter is not
 * given to the kernel.
 */
#define CACHE_TAG		"v3"

/* What -R did, object by object. */
struct reg_count {
	unsigned long	given, cached, own, none, no_id, failed;
	unsigned long long bytes;	/* of the tables given */
};

/* Read a whole cached table; NULL if there is none. */
static uint8_t *read_cached(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = fstat(fd, &st) || !st.st_size || st.st_size > (256L << 20) ?
	      NULL : malloc(st.st_size);
	if (buf && read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = buf ? st.st_size : 0;
	return buf;
}

/* Write a table to the cache: whole or not at all (rename). */
static void write_cached(const char *path, const uint8_t *buf, size_t len)
{
	char tmp[4096 + 16];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%d", path, getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, len) != (ssize_t)len || close(fd) ||
	    rename(tmp, path))
		unlink(tmp);
}

/*
 * Give the kernel the table of one object: from the cache if it holds
 * the object's build ID, else converted (and cached). @dry: cache only.
 */
static int register_object(struct object *o, const char *cache, bool dry,
			   struct reg_count *n)
{
	struct sframe_file_arg arg = { .fd = o->fd };
	char path[4096];
	uint8_t *buf = NULL;
	size_t len = 0;
	int id, err;

	if (has_own_sframe(o)) {
		n->own++;
		return 0;
	}
	id = build_id(o, arg.build_id);
	if (id <= 0) {
		/* The kernel keys a table by file and checks it by build ID. */
		if (!quiet)
			fprintf(stderr, "cfi2sframe: %s: no build ID\n", o->path);
		n->no_id++;
		return 0;
	}
	arg.build_id_size = id;
	if (cache) {
		int k = snprintf(path, sizeof(path), "%s/", cache);

		for (int i = 0; i < id && k < (int)sizeof(path) - 3; i++)
			k += snprintf(path + k, sizeof(path) - k, "%02x",
				      arg.build_id[i]);
		snprintf(path + k, sizeof(path) - k, "-" CACHE_TAG ".sframe");
		buf = read_cached(path, &len);
		if (buf)
			n->cached++;
	}
	if (!buf) {
		struct stats st = { 0 };

		err = convert(o, &st);
		if (err == -ENOENT) {
			n->none++;
			reset();
			return 0;
		}
		if (err) {
			fprintf(stderr, "cfi2sframe: %s: malformed .eh_frame\n",
				o->path);
			n->failed++;
			reset();
			return 1;
		}
		finish(&st);
		buf = write_sframe(&len);
		reset();
		if (cache)
			write_cached(path, buf, len);
	}
	arg.table = (uintptr_t)buf;
	arg.table_size = len;
	err = dry ? 0 : prctl(PR_SFRAME_FILE_ADD, &arg, sizeof(arg), 0, 0);
	free(buf);
	if (err) {
		fprintf(stderr, "cfi2sframe: %s: the kernel refused the table: %s\n",
			o->path, strerror(errno));
		n->failed++;
		return 1;
	}
	n->given++;
	n->bytes += len;
	if (verbose)
		fprintf(stderr, "cfi2sframe: %s: table given (%zu bytes)\n",
			o->path, len);
	return 0;
}

/* What register_all() is doing, for the directory walk's callback. */
static struct {
	struct reg_count n;
	const char	*cache;
	bool		remove;
	bool		dry;		/* -n: convert and cache only */
	int		ret;
} reg_run;

/* -R or -U on one file. */
static void register_path(const char *path)
{
	struct object o;
	int err = open_object(&o, path);

	if (err) {
		/* Directories' other files: scripts, data. */
		if (!quiet || err != -ENOEXEC)
			fprintf(stderr, "cfi2sframe: %s: %s\n", path,
				err == -ENOEXEC ? "not a linked x86-64 ELF object" :
				strerror(-err));
		if (err != -ENOEXEC) {
			reg_run.n.failed++;
			reg_run.ret = 1;
		}
	} else if (reg_run.remove) {
		if (prctl(PR_SFRAME_FILE_REMOVE, o.fd, 0, 0, 0)) {
			if (errno != ENOENT || !quiet)
				fprintf(stderr, "cfi2sframe: %s: %s\n", path,
					strerror(errno));
			if (errno != ENOENT) {
				reg_run.n.failed++;
				reg_run.ret = 1;
			}
		} else {
			reg_run.n.given++;
		}
	} else {
		reg_run.ret |= register_object(&o, reg_run.cache, reg_run.dry, &reg_run.n);
	}
	close_object(&o);
}

/*
 * A directory's regular files. Symbolic links are not followed: a
 * library's names link to one file, which is given once, by its own name.
 */
static int register_walked(const char *path, const struct stat *st, int type,
			   struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode) && st->st_size > 0)
		register_path(path);
	else if (type == FTW_DNR)
		fprintf(stderr, "cfi2sframe: %s: cannot read the directory\n", path);
	return 0;
}

int cfi2sframe_give(const char *path, const char *name, const char *cache,
		    dev_t dev, ino_t ino)
{
	struct object o;
	struct stat st;
	int err = open_object(&o, path);

	o.path = name;

	if (err == -ENOEXEC) {
		/* A mapping of no ELF object we read: nothing to give. */
		return 0;
	} else if (err) {
		close_object(&o);
		return err;
	}
	if (fstat(o.fd, &st) || st.st_dev != dev || st.st_ino != ino) {
		close_object(&o);
		return -ESTALE;
	}
	reg_run.cache = cache;
	err = register_object(&o, cache, false, &reg_run.n);
	close_object(&o);
	return err;
}

void cfi2sframe_summary(bool remove)
{
	if (remove) {
		printf("cfi2sframe: %lu tables taken back, %lu failed\n",
		       reg_run.n.given, reg_run.n.failed);
		return;
	}
	printf("cfi2sframe: %lu tables %s (%lu from the cache), ",
	       reg_run.n.given, reg_run.dry ? "cached" : "given", reg_run.n.cached);
	printf("%lu objects with their own, %lu without .eh_frame, ",
	       reg_run.n.own, reg_run.n.none);
	printf("%lu without a build ID, %lu failed; %llu bytes of tables\n",
	       reg_run.n.no_id, reg_run.n.failed, reg_run.n.bytes);
}

int register_all(char **paths, int count, const char *cache,
		 bool remove, bool dry)
{
	struct stat st;

	reg_run.cache = cache;
	reg_run.remove = remove;
	reg_run.dry = dry;
	if (cache && mkdir(cache, 0755) && errno != EEXIST)
		die("cannot make %s: %s", cache, strerror(errno));
	for (int i = 0; i < count; i++) {
		if (!stat(paths[i], &st) && S_ISDIR(st.st_mode))
			nftw(paths[i], register_walked, 32, FTW_PHYS);
		else
			register_path(paths[i]);
	}
	cfi2sframe_summary(remove);
	return reg_run.ret;
}

