/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the code reading's arch header, the kernel's own. */
#include "../../../../arch/x86/include/asm/unwind_user_code.h"
