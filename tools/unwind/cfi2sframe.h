/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What give.c (giving tables to the kernel) and watch.c (giving them to
 * the objects walks meet without one, -W) offer the command line
 * (main.c) and each other.
 */
#ifndef CFI2SFRAME_H
#define CFI2SFRAME_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * -R, or -U if @remove: the files of @paths, and those under the
 * directories among them; @dry (-n): convert and cache only. The exit
 * status: 0, or 1 if an object failed.
 */
int register_all(char **paths, int count, const char *cache,
		 bool remove, bool dry);

/*
 * Give the kernel the table of the ELF file at @path, named @name in
 * messages (converted, or from @cache by build ID), if the file is device
 * @dev, inode @ino; counted in the summary. 0 if given, or if the object
 * needs none or cannot have one (counted); -ESTALE if @path is another
 * file now; another negative errno if it cannot be opened; 1 if the
 * kernel refused the table.
 */
int cfi2sframe_give(const char *path, const char *name, const char *cache,
		    dev_t dev, ino_t ino);

/* Print the summary line of the tables given (or taken back, @remove). */
void cfi2sframe_summary(bool remove);

/* -W: give tables to the objects walks meet without one, until a signal. */
int watch_run(const char *cache);

#endif /* CFI2SFRAME_H */
