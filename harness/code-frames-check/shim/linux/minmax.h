/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the tools headers have max() in kernel.h. */
#include <linux/kernel.h>
