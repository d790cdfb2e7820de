/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: of the walk's public header, its types alone. */
#include <linux/unwind_user_types.h>
