// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer code without an SFrame table, linked into the SFrame
 * selftest: a walk must pass from SFrame frames to these and back.
 */
#define SFLIB_ENTRY	sflib_fp
#include "sframe_lib.c"
