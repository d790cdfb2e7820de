/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM unwind_user

#if !defined(_TRACE_UNWIND_USER_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UNWIND_USER_H

#include <linux/tracepoint.h>
#include <linux/unwind_user_types.h>

/*
 * unwind_user_stack_tp - the user stack BPF programs asked for
 * @cookie:	the cookie bpf_unwind_deferred_request() returned in this
 *		kernel entry of the current task
 * @trace:	the entry's user stack, innermost frame first; valid for the
 *		duration of the call only
 *
 * Fired once per kernel entry in which a BPF program asked, just before the
 * task returns to user space, in task context. A bare tracepoint: BPF
 * programs attach to it (tp_btf, raw_tp); it has no tracefs event and no
 * ring buffer format, so it adds no ABI beyond its prototype.
 */
DECLARE_TRACE(unwind_user_stack_tp,
	      TP_PROTO(u64 cookie, const struct unwind_stacktrace *trace),
	      TP_ARGS(cookie, trace));

#endif /* _TRACE_UNWIND_USER_H */

#include <trace/define_trace.h>
