/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the check is one process, never killed mid-reading. */
#ifndef _SHIM_LINUX_SCHED_SIGNAL_H
#define _SHIM_LINUX_SCHED_SIGNAL_H
#include <stdbool.h>
#define current		NULL
static inline bool fatal_signal_pending(void *task)
{
	return false;
}

static inline void cond_resched(void)
{
}
#endif
