// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object for the SFrame selftest: a chain of SFLIB_DEPTH + 1
 * functions that ends in a callback. Built without frame pointers and with
 * an SFrame table, twice: one copy linked (loaded by ld.so), one dlopen()ed.
 * Each function stores its return address, so the test knows what the
 * kernel must find in the object's frames.
 */
#include "sframe_lib.h"
#include "sframe_room.h"

SFRAME_ROOM();

typedef long (*sflib_step)(long (*cb)(void *), void *arg, unsigned long *ras);

#define SFLIB_FN(n, next)						\
	static long sflib_f##n(long (*cb)(void *), void *arg,		\
			       unsigned long *ras)			\
	{								\
		ras[n] = (unsigned long)__builtin_return_address(0);	\
		return next(cb, arg, ras) + 1;				\
	}

static long sflib_call(long (*cb)(void *), void *arg, unsigned long *ras)
{
	ras[SFLIB_DEPTH] = (unsigned long)__builtin_return_address(0);
	return cb(arg) + 1;
}

SFLIB_FN(7, sflib_call)
SFLIB_FN(6, sflib_f7) SFLIB_FN(5, sflib_f6) SFLIB_FN(4, sflib_f5)
SFLIB_FN(3, sflib_f4) SFLIB_FN(2, sflib_f3) SFLIB_FN(1, sflib_f2)

long SFLIB_ENTRY(long (*cb)(void *), void *arg, unsigned long *ras)
{
	ras[0] = (unsigned long)__builtin_return_address(0);
	return sflib_f1(cb, arg, ras) + 1;
}
