/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM unwind_report

#if !defined(_TRACE_UNWIND_REPORT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UNWIND_REPORT_H

#include <linux/tracepoint.h>
#include <linux/unwind_user_types.h>
#include <uapi/linux/prctl.h>

/*
 * unwind_user_report - a runtime reported its own frames for a cookie
 * @cookie:	the kernel entry they belong to (the signal's si_value)
 * @flags:	PR_USER_STACK_REPORT_* flags of the report
 * @entries:	the frames, innermost first: IPs, or the runtime's own
 *		values with PR_USER_STACK_REPORT_OPAQUE
 * @nr:		how many
 *
 * Fired in the reporting task's context (the prctl). Tools stitch the
 * entries to every sample of that task that carries the cookie.
 */
TRACE_EVENT(unwind_user_report,
	    TP_PROTO(u64 cookie, unsigned int flags, const u64 *entries,
		     unsigned int nr),
	    TP_ARGS(cookie, flags, entries, nr),
	    TP_STRUCT__entry(__field(u64, cookie)
			     __field(unsigned int, flags)
			     __field(unsigned int, nr)
			     __dynamic_array(u64, entries, nr)),
	    TP_fast_assign(__entry->cookie = cookie;
			   __entry->flags = flags;
			   __entry->nr = nr;
			   memcpy(__get_dynamic_array(entries), entries,
				  nr * sizeof(u64));),
	    TP_printk("cookie=%#llx %s nr=%u entries=%s", __entry->cookie,
		      __entry->flags & PR_USER_STACK_REPORT_OPAQUE ? "opaque" : "ips",
		      __entry->nr,
		      __print_array(__get_dynamic_array(entries), __entry->nr,
				    sizeof(u64)))
);

/*
 * unwind_user_report_tp - the same report, for BPF programs
 * @cookie:	the kernel entry the frames belong to
 * @trace:	the reported entries, innermost first, as native stacks
 *		come in unwind_user_stack_tp; valid during the call only
 * @flags:	PR_USER_STACK_REPORT_* flags of the report
 *
 * A bare tracepoint (tp_btf, raw_tp): BPF programs get reports the way
 * they get native stacks, told apart by the tracepoint and marked by
 * @flags.
 */
DECLARE_TRACE(unwind_user_report_tp,
	      TP_PROTO(u64 cookie, const struct unwind_stacktrace *trace,
		       unsigned int flags),
	      TP_ARGS(cookie, trace, flags));

#endif /* _TRACE_UNWIND_REPORT_H */

#include <trace/define_trace.h>
