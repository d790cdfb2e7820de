/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SFrame selftest's shared objects (sframe_lib.c) and frame-pointer
 * object (sframe_fp.c): chains of SFLIB_DEPTH + 1 functions ending in a
 * callback, each storing its return address in ras[], outermost first.
 */
#ifndef SFRAME_LIB_H
#define SFRAME_LIB_H

#define SFLIB_DEPTH	8

#ifndef SFLIB_ENTRY
#define SFLIB_ENTRY	sflib_linked
#endif

long sflib_linked(long (*cb)(void *), void *arg, unsigned long *ras);
long sflib_fp(long (*cb)(void *), void *arg, unsigned long *ras);
long sflib_dl(long (*cb)(void *), void *arg, unsigned long *ras);

/* sframe_test's frameless system call leaf, and the IP after its syscall. */
long sf_leaf_syscall(long nr, long a, long b, long c);
extern char sf_leaf_ret[];

#endif /* SFRAME_LIB_H */
