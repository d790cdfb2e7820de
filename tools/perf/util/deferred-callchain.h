/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_CALLCHAIN_H
#define __PERF_DEFERRED_CALLCHAIN_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * Samples recorded with defer_callchain end their callchain with
 * PERF_CONTEXT_USER_DEFERRED and a cookie; the user part comes later, in a
 * PERF_RECORD_CALLCHAIN_DEFERRED of the same thread and cookie, written when
 * the thread returned to user space. This joins the two: a sample whose
 * record was already seen is stitched at once, the others wait (as copies,
 * as the ring buffer or file mapping they came from moves on) for their
 * record, or for the end of the session, where they are delivered with
 * their kernel part only and counted as lost.
 */

struct deferred_callchains;
struct evlist;
struct perf_sample;
union perf_event;

/* Delivers one sample whose callchain has been stitched or trimmed. */
typedef int (*deferred_deliver_t)(void *arg, union perf_event *event,
				  struct perf_sample *sample);

struct deferred_callchains *deferred_callchains__new(struct evlist *evlist,
						     bool merge, bool ordered);
void deferred_callchains__delete(struct deferred_callchains *dc);

bool perf_sample__deferred_cookie(const struct perf_sample *sample, u64 *cookie);

int deferred_callchains__sample(struct deferred_callchains *dc,
				union perf_event *event, struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg);
int deferred_callchains__record(struct deferred_callchains *dc,
				union perf_event *event, struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg);
int deferred_callchains__flush(struct deferred_callchains *dc,
			       deferred_deliver_t deliver, void *arg);
int deferred_callchains__exit(struct deferred_callchains *dc, u32 tid,
			      deferred_deliver_t deliver, void *arg);

struct evsel;
bool deferred_callchains__is_report(struct deferred_callchains *dc,
				    struct evsel *evsel);
int deferred_callchains__report(struct deferred_callchains *dc,
				struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg);

#endif /* __PERF_DEFERRED_CALLCHAIN_H */
