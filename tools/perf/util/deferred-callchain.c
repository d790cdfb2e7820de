// SPDX-License-Identifier: GPL-2.0
/*
 * Stitching deferred user callchains to their samples.
 *
 * Matching is by thread and cookie, never by cookie alone. Within one
 * thread, kernel entries follow each other, so once the record of an entry
 * arrives, any sample of that thread still waiting with another cookie
 * belongs to an earlier entry whose record was lost. The last record of
 * each thread is kept as well: a sample taken late in an entry, after the
 * record was written, carries the same cookie and is stitched to it.
 *
 * Without time order (perf report --disable-order, --stats), a sample may
 * come after records of later entries of its thread (its buffer's events
 * read after another CPU's): every record of a thread is kept then, until
 * the end of the session, so that such a sample finds its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "deferred-callchain.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "hashmap.h"
#include "sample.h"
#include "trace-event.h"

/* The event a runtime's report of its own frames comes out as. */
#define UNWIND_REPORT_EVENT	"unwind_report:unwind_user_report"
/* Its flag for entries that are not code addresses (prctl.h). */
#define UNWIND_REPORT_OPAQUE	1

/* A record of a thread before its last one, kept without time order. */
struct deferred_record {
	struct list_head	node;		/* in deferred_thread.earlier */
	u64			cookie;
	u64			nr;
	u64			*ips;
};

struct deferred_thread {
	struct list_head	pending;	/* deferred_sample.thread_node */
	u64			cookie;		/* last record's; 0: none yet */
	u64			nr;
	u64			*ips;
	/* Earlier records, newest first (unordered sessions only). */
	struct list_head	earlier;	/* deferred_record.node */
	/*
	 * Samples of the last record's cookie, complete but for the frames
	 * the runtime may report for it (only if the session has the
	 * report event): they wait for the report, the thread's next record
	 * or the end of the session.
	 */
	struct list_head	held;		/* deferred_sample.thread_node */
	u64			report_cookie;	/* last report's; 0: none */
	u64			report_nr;
	u64			*report_ips;
};

struct deferred_sample {
	struct list_head	thread_node;	/* in deferred_thread.pending */
	struct list_head	session_node;	/* in deferred_callchains.pending */
	u64			cookie;
	u64			event[];	/* a copy of the sample event */
};

struct deferred_callchains {
	struct evlist		*evlist;
	struct hashmap		*threads;	/* tid -> struct deferred_thread */
	struct list_head	pending;	/* every waiting sample, oldest first */
	bool			merge;
	/*
	 * Events come in time order. Without it (perf report --stats, or
	 * unordered processing), a record of a later entry may come before
	 * the one a waiting sample needs: only the end of the session tells
	 * that a record was lost.
	 */
	bool			ordered;
	/* The report event, if recorded: samples wait for reports. */
	struct evsel		*report_evsel;
};

static size_t tid_hash(long key, void *ctx __maybe_unused)
{
	return key;
}

static bool tid_equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

struct deferred_callchains *deferred_callchains__new(struct evlist *evlist,
						     bool merge, bool ordered)
{
	struct deferred_callchains *dc = zalloc(sizeof(*dc));

	if (!dc)
		return NULL;
	dc->threads = hashmap__new(tid_hash, tid_equal, NULL);
	if (IS_ERR(dc->threads)) {
		free(dc);
		return NULL;
	}
	dc->evlist = evlist;
	dc->merge = merge;
	dc->ordered = ordered;
#ifdef HAVE_LIBTRACEEVENT
	if (merge && ordered) {
		struct evsel *report;

		report = evlist__find_tracepoint_by_name(evlist, UNWIND_REPORT_EVENT);
		dc->report_evsel = report;
	}
#endif
	INIT_LIST_HEAD(&dc->pending);
	return dc;
}

/* Free a thread's state: its records and reports, not its samples. */
static void deferred_thread__free(struct deferred_thread *dt)
{
	struct deferred_record *dr, *tmp;

	list_for_each_entry_safe(dr, tmp, &dt->earlier, node) {
		list_del(&dr->node);
		free(dr->ips);
		free(dr);
	}
	free(dt->ips);
	free(dt->report_ips);
	free(dt);
}

/* The addresses of the thread's record @cookie, if it came; NULL if not. */
static const u64 *deferred_thread__record(struct deferred_thread *dt,
					  u64 cookie, u64 *nr)
{
	struct deferred_record *dr;

	if (cookie == dt->cookie) {
		*nr = dt->nr;
		return dt->ips;
	}
	list_for_each_entry(dr, &dt->earlier, node) {
		if (dr->cookie == cookie) {
			*nr = dr->nr;
			return dr->ips;
		}
	}
	return NULL;
}

static void deferred_sample__free(struct deferred_sample *ds)
{
	list_del(&ds->thread_node);
	list_del(&ds->session_node);
	free(ds);
}

void deferred_callchains__delete(struct deferred_callchains *dc)
{
	struct deferred_sample *ds, *tmp;
	struct hashmap_entry *cur;
	size_t bkt;

	if (!dc)
		return;
	pr_debug("deferred callchains: state of %zu threads kept at the end\n",
		 hashmap__size(dc->threads));
	list_for_each_entry_safe(ds, tmp, &dc->pending, session_node)
		deferred_sample__free(ds);
	hashmap__for_each_entry(dc->threads, cur, bkt) {
		deferred_thread__free(cur->pvalue);
	}
	hashmap__free(dc->threads);
	free(dc);
}

/* Index of PERF_CONTEXT_USER_DEFERRED in the callchain, or -1. */
static s64 deferred_marker(const struct ip_callchain *chain)
{
	u64 i;

	if (!chain)
		return -1;
	for (i = 0; i < chain->nr; i++) {
		if (chain->ips[i] == PERF_CONTEXT_USER_DEFERRED)
			return i;
	}
	return -1;
}

/**
 * perf_sample__deferred_cookie - does the sample wait for a deferred record?
 * @sample: a parsed PERF_RECORD_SAMPLE
 * @cookie: where to store the cookie of its kernel entry
 *
 * Return: true if the callchain ends in PERF_CONTEXT_USER_DEFERRED, even if
 * the cookie after it is missing (then @cookie is 0 and nothing matches).
 */
bool perf_sample__deferred_cookie(const struct perf_sample *sample, u64 *cookie)
{
	s64 idx = deferred_marker(sample->callchain);

	if (idx < 0)
		return false;
	*cookie = (u64)idx + 1 < sample->callchain->nr ?
		  sample->callchain->ips[idx + 1] : 0;
	return true;
}

/*
 * Deliver @sample with a callchain of its kernel part followed by the
 * frames its runtime reported (@rnr of @rips) and @nr user addresses (none
 * of either: the kernel part only). The reported frames go first, right
 * under the kernel's: they name what the program was doing when it
 * entered the kernel (an interpreted function that read a file), and the
 * native frames after them (the interpreter's loop, main) keep everything
 * the walk found. How the two interleave only the runtime knows. The event
 * itself is left alone: it may be a read-only file mapping, and perf
 * inject writes it out as is.
 */
static int deliver_stitched_report(union perf_event *event,
				   struct perf_sample *sample,
				   const u64 *rips, u64 rnr,
				   const u64 *ips, u64 nr,
				   deferred_deliver_t deliver, void *arg)
{
	struct ip_callchain *orig = sample->callchain, *chain;
	s64 marker = deferred_marker(orig);
	u64 kernel_nr = marker < 0 ? orig->nr : (u64)marker;
	int ret;

	chain = malloc(sizeof(*chain) +
		       (kernel_nr + 1 + rnr + nr) * sizeof(u64));
	if (!chain)
		return -ENOMEM;
	memcpy(chain->ips, orig->ips, kernel_nr * sizeof(u64));
	chain->nr = kernel_nr;
	if (nr || rnr) {
		chain->ips[chain->nr++] = PERF_CONTEXT_USER;
		/* Either may be NULL, with a count of 0. */
		if (rnr)
			memcpy(&chain->ips[chain->nr], rips, rnr * sizeof(u64));
		chain->nr += rnr;
		if (nr)
			memcpy(&chain->ips[chain->nr], ips, nr * sizeof(u64));
		chain->nr += nr;
	}
	sample->callchain = chain;
	ret = deliver(arg, event, sample);
	sample->callchain = orig;
	free(chain);
	return ret;
}

static int deliver_stitched(union perf_event *event, struct perf_sample *sample,
			    const u64 *ips, u64 nr,
			    deferred_deliver_t deliver, void *arg)
{
	return deliver_stitched_report(event, sample, NULL, 0, ips, nr,
				       deliver, arg);
}

static struct deferred_thread *deferred_thread(struct deferred_callchains *dc,
					       u32 tid)
{
	struct deferred_thread *dt;

	if (hashmap__find(dc->threads, tid, &dt))
		return dt;
	dt = zalloc(sizeof(*dt));
	if (!dt)
		return NULL;
	INIT_LIST_HEAD(&dt->pending);
	INIT_LIST_HEAD(&dt->held);
	INIT_LIST_HEAD(&dt->earlier);
	if (hashmap__add(dc->threads, tid, dt)) {
		free(dt);
		return NULL;
	}
	return dt;
}

/**
 * deferred_callchains__sample - deliver or queue a sample
 * @dc: the session's state
 * @event: a PERF_RECORD_SAMPLE whose callchain has PERF_CONTEXT_USER_DEFERRED
 * @sample: @event, parsed
 * @deliver: called with the sample once its callchain is complete
 * @arg: passed to @deliver
 *
 * Return: 0, an error from @deliver, or -ENOMEM.
 */
int deferred_callchains__sample(struct deferred_callchains *dc,
				union perf_event *event, struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg)
{
	struct deferred_thread *dt;
	struct deferred_sample *ds;
	u64 cookie = 0, nr;

	perf_sample__deferred_cookie(sample, &cookie);
	if (!dc->merge || !cookie)
		return deliver_stitched(event, sample, NULL, 0, deliver, arg);

	dt = deferred_thread(dc, sample->tid);
	if (!dt)
		return -ENOMEM;
	if (dt->cookie == cookie && dt->report_cookie == cookie) {
		dc->evlist->stats.nr_deferred_stitched++;
		return deliver_stitched_report(event, sample, dt->report_ips,
					       dt->report_nr, dt->ips, dt->nr,
					       deliver, arg);
	}
	if (dt->cookie == cookie && !dc->report_evsel) {
		dc->evlist->stats.nr_deferred_stitched++;
		return deliver_stitched(event, sample, dt->ips, dt->nr,
					deliver, arg);
	}
	/* Without time order, its record may have come before the last. */
	if (!dc->ordered) {
		const u64 *ips = deferred_thread__record(dt, cookie, &nr);

		if (ips) {
			dc->evlist->stats.nr_deferred_stitched++;
			return deliver_stitched(event, sample, ips, nr,
						deliver, arg);
		}
	}

	ds = malloc(sizeof(*ds) + event->header.size);
	if (!ds)
		return -ENOMEM;
	ds->cookie = cookie;
	memcpy(ds->event, event, event->header.size);
	/* Its record came: it waits for its runtime's report only. */
	list_add_tail(&ds->thread_node,
		      dt->cookie == cookie ? &dt->held : &dt->pending);
	list_add_tail(&ds->session_node, &dc->pending);
	return 0;
}

/*
 * Deliver a queued sample, with @ips (its record's) or without (lost), and
 * the frames its runtime reported (@rips, @rnr; none if NULL).
 */
static int deliver_queued_report(struct deferred_callchains *dc,
				 struct deferred_sample *ds,
				 const u64 *rips, u64 rnr,
				 const u64 *ips, u64 nr,
				 deferred_deliver_t deliver, void *arg)
{
	union perf_event *event = (union perf_event *)ds->event;
	struct perf_sample sample;
	int ret;

	ret = evlist__parse_sample(dc->evlist, event, &sample);
	if (!ret) {
		if (ips) {
			dc->evlist->stats.nr_deferred_stitched++;
		} else {
			dc->evlist->stats.nr_deferred_lost++;
			pr_debug("deferred callchain of tid %u, time %llu, cookie %#llx never came\n",
				 sample.tid, (unsigned long long)sample.time,
				 (unsigned long long)ds->cookie);
		}
		ret = deliver_stitched_report(event, &sample, rips, rnr,
					      ips, nr, deliver, arg);
	}
	deferred_sample__free(ds);
	return ret;
}

static int deliver_queued(struct deferred_callchains *dc,
			  struct deferred_sample *ds, const u64 *ips, u64 nr,
			  deferred_deliver_t deliver, void *arg)
{
	return deliver_queued_report(dc, ds, NULL, 0, ips, nr, deliver, arg);
}

/* Deliver the samples of @dt's record, with the report if it is theirs. */
static int deliver_held(struct deferred_callchains *dc,
			struct deferred_thread *dt,
			deferred_deliver_t deliver, void *arg)
{
	bool reported = dt->report_cookie && dt->report_cookie == dt->cookie;
	struct deferred_sample *ds, *tmp;
	int ret = 0;

	list_for_each_entry_safe(ds, tmp, &dt->held, thread_node) {
		int err = deliver_queued_report(dc, ds,
						reported ? dt->report_ips : NULL,
						reported ? dt->report_nr : 0,
						dt->ips, dt->nr, deliver, arg);

		if (err && !ret)
			ret = err;
	}
	return ret;
}

/**
 * deferred_callchains__record - deliver the samples a record completes
 * @dc: the session's state
 * @event: a PERF_RECORD_CALLCHAIN_DEFERRED
 * @sample: its sample_id fields, parsed (tid is what matters)
 * @deliver: called for each sample of that thread waiting so far
 * @arg: passed to @deliver
 *
 * Samples of the thread with the record's cookie get its addresses; those
 * with another cookie are from earlier entries whose records were lost.
 *
 * Return: 0, an error from @deliver, or -ENOMEM.
 */
int deferred_callchains__record(struct deferred_callchains *dc,
				union perf_event *event, struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg)
{
	struct perf_record_callchain_deferred *rec = &event->callchain_deferred;
	struct deferred_sample *ds, *tmp;
	struct deferred_thread *dt;
	u64 *ips;
	int ret = 0;

	if (!dc->merge)
		return 0;
	if (!perf_event__callchain_deferred_valid(event, 0)) {
		pr_warning("CALLCHAIN_DEFERRED of tid %u is truncated: ignored\n",
			   sample->tid);
		return 0;
	}
	dt = deferred_thread(dc, sample->tid);
	if (!dt)
		return -ENOMEM;
	/* The last record's samples got no report: deliver them now. */
	ret = deliver_held(dc, dt, deliver, arg);
	ips = malloc(rec->nr * sizeof(u64) ?: 1);
	if (!ips)
		return -ENOMEM;
	memcpy(ips, rec->ips, rec->nr * sizeof(u64));
	if (!dc->ordered && dt->cookie) {
		struct deferred_record *dr = malloc(sizeof(*dr));

		if (!dr) {
			free(ips);
			return -ENOMEM;
		}
		dr->cookie = dt->cookie;
		dr->nr = dt->nr;
		dr->ips = dt->ips;
		list_add(&dr->node, &dt->earlier);
	} else {
		free(dt->ips);
	}
	dt->ips = ips;
	dt->nr = rec->nr;
	dt->cookie = rec->cookie;

	list_for_each_entry_safe(ds, tmp, &dt->pending, thread_node) {
		bool match = ds->cookie == dt->cookie;
		int err;

		if (!match && !dc->ordered)
			continue;
		if (match && dc->report_evsel) {
			list_move_tail(&ds->thread_node, &dt->held);
			continue;
		}
		err = deliver_queued(dc, ds, match ? dt->ips : NULL,
				     match ? dt->nr : 0, deliver, arg);
		if (err && !ret)
			ret = err;
	}
	return ret;
}

/**
 * deferred_callchains__flush - deliver every sample still waiting
 * @dc: the session's state
 * @deliver: called for each, oldest first, with the kernel part only
 * @arg: passed to @deliver
 *
 * Called at the end of the session: their records never came (the session
 * stopped before the threads returned to user space, or they were lost).
 *
 * Return: 0 or the first error from @deliver.
 */
int deferred_callchains__flush(struct deferred_callchains *dc,
			       deferred_deliver_t deliver, void *arg)
{
	struct deferred_sample *ds, *tmp;
	struct hashmap_entry *cur;
	size_t bkt;
	int ret = 0;

	if (!dc)
		return 0;
	hashmap__for_each_entry(dc->threads, cur, bkt) {
		int err = deliver_held(dc, cur->pvalue, deliver, arg);

		if (err && !ret)
			ret = err;
	}
	list_for_each_entry_safe(ds, tmp, &dc->pending, session_node) {
		int err = deliver_queued(dc, ds, NULL, 0, deliver, arg);

		if (err && !ret)
			ret = err;
	}
	return ret;
}

/**
 * deferred_callchains__exit - a thread exited: drop what is kept for it
 * @dc: the session's state (NULL: nothing kept)
 * @tid: the thread
 * @deliver: called for its samples held for a report, which cannot come
 * @arg: passed to @deliver
 *
 * The kernel answers an exiting task's requests before the task exits,
 * so in time order its last records came already. Its state (the last
 * record's addresses, the last report) is freed. Without time order its
 * samples may still come, and it is kept until the end of the session.
 *
 * Return: 0, or an error from @deliver.
 */
int deferred_callchains__exit(struct deferred_callchains *dc, u32 tid,
			      deferred_deliver_t deliver, void *arg)
{
	struct deferred_thread *dt;
	int ret;

	if (!dc || !hashmap__find(dc->threads, tid, &dt))
		return 0;
	ret = deliver_held(dc, dt, deliver, arg);
	if (!dc->ordered || !list_empty(&dt->pending) ||
	    !list_empty(&dt->held))
		return ret;
	hashmap__delete(dc->threads, tid, NULL, NULL);
	deferred_thread__free(dt);
	return ret;
}

/**
 * deferred_callchains__is_report - is @evsel the event of runtime reports?
 * @dc: the session's state
 * @evsel: the event of a sample
 */
bool deferred_callchains__is_report(struct deferred_callchains *dc,
				    struct evsel *evsel)
{
	return dc && dc->report_evsel && evsel == dc->report_evsel;
}

#ifdef HAVE_LIBTRACEEVENT
/* Does the sample's raw data hold the fixed field @name? */
static bool report_field_fits(struct evsel *evsel, struct perf_sample *sample,
			      const char *name)
{
	struct tep_format_field *field = evsel__field(evsel, name);

	return field && field->offset >= 0 && field->size >= 0 &&
	       (u64)field->offset + field->size <= sample->raw_size;
}

/*
 * The report's @nr entries, or NULL if the sample's raw data does not
 * hold them where its dynamic array says: the array's offset and length
 * are read from the file, and a crafted one may put them anywhere.
 */
static const u64 *report_entries(struct evsel *evsel,
				 struct perf_sample *sample, u64 nr)
{
	struct tep_format_field *field = evsel__field(evsel, "entries");
	u32 loc, off, len;

	if (!field || !(field->flags & TEP_FIELD_IS_DYNAMIC) ||
	    field->offset < 0 ||
	    (u64)field->offset + sizeof(loc) > sample->raw_size)
		return NULL;
	memcpy(&loc, sample->raw_data + field->offset, sizeof(loc));
	off = loc & 0xffff;
	len = loc >> 16;
	if (tep_field_is_relative(field->flags))
		off += field->offset + field->size;
	if (off > sample->raw_size || len > sample->raw_size - off ||
	    nr > len / sizeof(u64))
		return NULL;
	return (const u64 *)((const char *)sample->raw_data + off);
}
#endif

/**
 * deferred_callchains__report - frames a runtime reported for a cookie
 * @dc: the session's state
 * @sample: a sample of the event unwind_report:unwind_user_report
 * @deliver: called for the samples of that cookie, now complete
 * @arg: passed to @deliver
 *
 * The runtime reports from its signal handler, after the kernel's record
 * of the same entry: the record's samples wait for it (deliver_held()).
 * Reports of opaque values are not code addresses, and are left to the
 * tools that print the event.
 *
 * Return: 0, an error from @deliver, or -ENOMEM.
 */
int deferred_callchains__report(struct deferred_callchains *dc,
				struct perf_sample *sample,
				deferred_deliver_t deliver, void *arg)
{
#ifdef HAVE_LIBTRACEEVENT
	struct evsel *evsel = dc->report_evsel;
	struct deferred_thread *dt;
	u64 cookie, nr, flags, *ips;
	const u64 *entries;
	int ret;

	if (!report_field_fits(evsel, sample, "cookie") ||
	    !report_field_fits(evsel, sample, "nr") ||
	    !report_field_fits(evsel, sample, "flags"))
		goto bad;
	cookie = evsel__intval(evsel, sample, "cookie");
	nr = evsel__intval(evsel, sample, "nr");
	flags = evsel__intval(evsel, sample, "flags");
	if (!cookie || (flags & UNWIND_REPORT_OPAQUE))
		return 0;
	entries = report_entries(evsel, sample, nr);
	if (!entries)
		goto bad;
	dt = deferred_thread(dc, sample->tid);
	if (!dt)
		return -ENOMEM;
	ips = malloc(nr * sizeof(u64) ?: 1);
	if (!ips)
		return -ENOMEM;
	if (nr)
		memcpy(ips, entries, nr * sizeof(u64));
	free(dt->report_ips);
	dt->report_ips = ips;
	dt->report_nr = nr;
	dt->report_cookie = cookie;
	if (cookie != dt->cookie)
		return 0;
	ret = deliver_held(dc, dt, deliver, arg);
	return ret;
bad:
	pr_warning("unwind_user_report of tid %u holds less than its fields claim: ignored\n",
		   sample->tid);
	return 0;
#else
	return 0;
#endif
}
