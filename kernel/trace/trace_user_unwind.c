// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user space stack traces in the trace buffer.
 *
 * The userstacktrace option walks the user stack inside the event, where
 * page faults are not allowed (and not at all from NMI). Instead, an
 * instance that wants user stacks (option userstacktrace_delay, or a
 * userstacktrace_delay event trigger) is a client of deferred unwinding
 * (kernel/unwind/deferred.c):
 *
 *  - an event asks for the user stack of its task and writes a
 *    user_unwind_cookie entry right after itself;
 *  - when the task returns to user space, the instance writes one
 *    user_unwind_stack entry for the whole kernel entry, with the same
 *    cookie, in the buffer of the CPU the task is on by then;
 *  - frames carry their file offset, inode and device, so that they can be
 *    resolved after the process is gone, and the first time the instance
 *    records a frame in a file, a user_unwind_inode entry names the file.
 *
 * Contexts:
 *   trace_user_unwind_request()	any the event fires in, NMI included
 *   trace_user_unwind_get(), _put()	process context, may sleep
 *   trace_user_unwind_buffer_reset()	process context
 *   trace_user_unwind_callback()	task context of the traced task, at
 *					its return to user space; may sleep
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/unwind_deferred.h>

#include "trace.h"
#include "trace_output.h"

#define USER_UNWIND_FRAME_BYTES	(USER_UNWIND_FRAME_WORDS * sizeof(u64))
#define USER_UNWIND_INODE_BITS	8
/* Where the path of a user_unwind_inode entry starts: before its end. */
#define USER_UNWIND_PATH_OFF	offsetof(struct user_unwind_inode_entry, path)

/* A file some recorded frame lies in; inode 0 marks a free slot. */
struct trace_user_unwind_file {
	u64		inode;
	dev_t		dev;
};

/**
 * struct trace_user_unwind - one trace instance as a client of unwinding
 * @work:	the client; its callback writes the stacks
 * @tr:		the instance
 * @users:	the option (when set) and each userstacktrace_delay trigger
 *		of the instance; under trace_user_unwind_lock
 * @files_lock:	protects @files
 * @files:	files already named by a user_unwind_inode entry in the
 *		buffer, a direct-mapped cache: a file whose slot was taken by
 *		another is named again, which readers take in their stride.
 *		Emptied when the buffer is reset.
 *
 * Published in trace_array::user_unwind while @users is nonzero. Requests
 * read it under RCU; _put() unpublishes it and cancels the client, which
 * waits for RCU readers and for running callbacks, before freeing it.
 */
struct trace_user_unwind {
	struct unwind_work		work;
	struct trace_array		*tr;
	unsigned int			users;
	/* Taken by callbacks and by buffer resets, never in interrupts. */
	spinlock_t			files_lock;
	struct trace_user_unwind_file	files[1 << USER_UNWIND_INODE_BITS];
};

static DEFINE_MUTEX(trace_user_unwind_lock);

/**
 * trace_user_unwind_request - ask for the user stack of this event's task
 * @tr:		the instance the event was recorded in
 * @buffer:	the buffer it was recorded in
 * @trace_ctx:	the event's context flags
 *
 * Writes a user_unwind_cookie entry after the event when the stack will be
 * recorded. Kernel threads, and tasks already past the point where their
 * stack could be recorded before they return to user space, get none.
 *
 * Context: Any, NMI included.
 */
void trace_user_unwind_request(struct trace_array *tr,
			       struct trace_buffer *buffer,
			       unsigned int trace_ctx)
{
	struct user_unwind_cookie_entry *entry;
	struct ring_buffer_event *event;
	struct trace_user_unwind *uu;
	u64 cookie;

	guard(rcu)();
	uu = rcu_dereference(tr->user_unwind);
	if (!uu || unwind_deferred_request(&uu->work, &cookie) < 0)
		return;

	event = trace_buffer_lock_reserve(buffer, TRACE_USER_UNWIND_COOKIE,
					  sizeof(*entry), trace_ctx);
	if (!event)
		return;
	entry = ring_buffer_event_data(event);
	entry->cookie = cookie;
	trace_buffer_unlock_commit_nostack(buffer, event);
}

static struct trace_user_unwind_file *
trace_user_unwind_slot(struct trace_user_unwind *uu, u64 inode, dev_t dev)
{
	return &uu->files[hash_64(inode ^ ((u64)dev << 32),
				  USER_UNWIND_INODE_BITS)];
}

static bool trace_user_unwind_named(struct trace_user_unwind *uu, u64 inode,
				    dev_t dev)
{
	struct trace_user_unwind_file *slot = trace_user_unwind_slot(uu, inode, dev);
	bool named;

	spin_lock(&uu->files_lock);
	named = slot->inode == inode && slot->dev == dev;
	spin_unlock(&uu->files_lock);
	return named;
}

static void trace_user_unwind_set_named(struct trace_user_unwind *uu,
					u64 inode, dev_t dev)
{
	struct trace_user_unwind_file *slot = trace_user_unwind_slot(uu, inode, dev);

	spin_lock(&uu->files_lock);
	slot->inode = inode;
	slot->dev = dev;
	spin_unlock(&uu->files_lock);
}

/*
 * Name the file of @vma in a user_unwind_inode entry, unless the buffer
 * already has one. @pathbuf is allocated on first use and freed by the
 * caller. Called with the mmap lock or @vma's own lock held, either of
 * which keeps vm_file alive.
 */
static void trace_user_unwind_name_file(struct trace_user_unwind *uu,
					struct vm_area_struct *vma,
					u64 inode, dev_t dev, char **pathbuf)
{
	struct trace_buffer *buffer = uu->tr->array_buffer.buffer;
	struct user_unwind_inode_entry *entry;
	struct ring_buffer_event *event;
	unsigned long max;
	size_t len, size;
	const char *path;

	if (trace_user_unwind_named(uu, inode, dev))
		return;

	if (!*pathbuf)
		*pathbuf = __getname();
	if (!*pathbuf)
		return;
	path = d_path(&vma->vm_file->f_path, *pathbuf, PATH_MAX);
	if (IS_ERR(path))
		path = "?";

	/*
	 * The path starts inside the struct's tail padding, and the ring
	 * buffer rounds an entry up to 4 bytes: reserve from the path's
	 * offset, rounded up, and zero-fill the rest of the path field, so
	 * that raw readers see no byte this entry did not write. A path
	 * longer than an entry can hold keeps its start.
	 */
	max = round_down(ring_buffer_max_event_size(buffer), sizeof(u32)) -
	      USER_UNWIND_PATH_OFF;
	len = min(strlen(path) + 1, max);
	size = ALIGN(USER_UNWIND_PATH_OFF + len, sizeof(u32));

	event = trace_buffer_lock_reserve(buffer, TRACE_USER_UNWIND_INODE,
					  size, tracing_gen_ctx());
	if (!event)
		return;
	entry = ring_buffer_event_data(event);
	entry->inode = inode;
	entry->dev = dev;
	memset(entry->path, 0, size - USER_UNWIND_PATH_OFF);
	memcpy(entry->path, path, len - 1);
	trace_buffer_unlock_commit_nostack(buffer, event);

	/* Only a name that reached the buffer counts as given. */
	trace_user_unwind_set_named(uu, inode, dev);
}

/* Fill the words of the frame at @ip, in @vma (or none), that say where. */
static void trace_user_unwind_locate(struct trace_user_unwind *uu,
				     struct vm_area_struct *vma,
				     unsigned long ip, u64 *frame,
				     char **pathbuf)
{
	enum user_unwind_kind kind = USER_UNWIND_UNMAPPED;
	const char *name = NULL;
	u64 offset = 0, ino = 0;
	dev_t dev = 0;

	if (vma) {
		offset = ip - vma->vm_start;
		if (vma->vm_ops && vma->vm_ops->name)
			name = vma->vm_ops->name(vma);
		if (vma->vm_file) {
			struct inode *inode = file_inode(vma->vm_file);

			kind = USER_UNWIND_FILE;
			offset += (u64)vma->vm_pgoff << PAGE_SHIFT;
			ino = inode->i_ino;
			dev = inode->i_sb->s_dev;
			trace_user_unwind_name_file(uu, vma, ino, dev, pathbuf);
		} else if (name && !strcmp(name, "[vdso]")) {
			kind = USER_UNWIND_VDSO;
		} else {
			kind = USER_UNWIND_ANON;
		}
	}
	frame[0] = ip;
	frame[1] = offset;
	frame[2] = ino;
	frame[3] = (u64)kind << USER_UNWIND_KIND_SHIFT | dev;
}

/* Frames with their address only, when it cannot be looked up. */
static void trace_user_unwind_unresolved(const unsigned long *ips,
					 unsigned int nr, u64 *frames)
{
	unsigned int i;

	for (i = 0; i < nr; i++, frames += USER_UNWIND_FRAME_WORDS) {
		frames[0] = ips[i];
		frames[1] = 0;
		frames[2] = 0;
		frames[3] = (u64)USER_UNWIND_UNRESOLVED << USER_UNWIND_KIND_SHIFT;
	}
}

/*
 * Locate @ip under the lock of its mapping alone, taken without waiting.
 * Return: false if that lock could not be had (or there is none).
 */
static bool trace_user_unwind_locate_vma_locked(struct trace_user_unwind *uu,
						struct mm_struct *mm,
						unsigned long ip, u64 *frame,
						char **pathbuf)
{
#ifdef CONFIG_PER_VMA_LOCK
	struct vm_area_struct *vma = lock_vma_under_rcu(mm, ip);

	if (!vma)
		return false;
	trace_user_unwind_locate(uu, vma, ip, frame, pathbuf);
	vma_end_read(vma);
	return true;
#else
	return false;
#endif
}

/*
 * Where each of the @nr addresses of @ips lies, into @frames, before the
 * ring buffer entry is reserved (the lookups may sleep).
 *
 * This runs in a callback of deferred unwinding, which
 * unwind_deferred_cancel() waits for while tracing holds event_mutex
 * (clearing userstacktrace_delay, removing an instance). So it never
 * waits for the mmap lock, which the traced process can keep taken for as
 * long as it likes (a writer queued behind a reader it stalls). Each
 * address is looked up under its mapping's own lock, or else under the
 * mmap lock if that is free at once; a frame neither can be had for keeps
 * its address alone (USER_UNWIND_UNRESOLVED), as do the frames of a task
 * being killed.
 */
static void trace_user_unwind_resolve(struct trace_user_unwind *uu,
				      const unsigned long *ips, unsigned int nr,
				      u64 *frames)
{
	struct mm_struct *mm = current->mm;
	bool mm_locked = false;
	char *pathbuf = NULL;
	unsigned int i;

	if (!mm || fatal_signal_pending(current)) {
		trace_user_unwind_unresolved(ips, nr, frames);
		return;
	}
	for (i = 0; i < nr; i++) {
		u64 *frame = &frames[i * USER_UNWIND_FRAME_WORDS];

		if (!mm_locked &&
		    trace_user_unwind_locate_vma_locked(uu, mm, ips[i], frame,
							&pathbuf))
			continue;
		if (!mm_locked && !mmap_read_trylock(mm)) {
			trace_user_unwind_unresolved(&ips[i], 1, frame);
			continue;
		}
		mm_locked = true;
		trace_user_unwind_locate(uu, vma_lookup(mm, ips[i]), ips[i],
					 frame, &pathbuf);
	}
	if (mm_locked)
		mmap_read_unlock(mm);
	if (pathbuf)
		__putname(pathbuf);
}

/* Frames found by scanning the stack get USER_UNWIND_GUESSED in their kind. */
static void trace_user_unwind_mark_guessed(const struct unwind_stacktrace *trace,
					   unsigned int nr, u64 *frames)
{
	unsigned int i;

	for (i = trace->nr - trace->guessed; i < nr; i++)
		frames[i * USER_UNWIND_FRAME_WORDS + 3] |=
			(u64)USER_UNWIND_GUESSED << USER_UNWIND_KIND_SHIFT;
}

static void trace_user_unwind_callback(struct unwind_work *work,
				       struct unwind_stacktrace *trace,
				       u64 cookie)
{
	struct trace_user_unwind *uu = container_of(work, struct trace_user_unwind, work);
	struct trace_buffer *buffer = uu->tr->array_buffer.buffer;
	struct user_unwind_stack_entry *entry;
	struct ring_buffer_event *event;
	unsigned int nr, flags = 0, max;
	u64 *frames;

	might_sleep();

	/* Keep the innermost frames of a stack too deep for one entry. */
	max = (ring_buffer_max_event_size(buffer) - sizeof(*entry)) /
	      USER_UNWIND_FRAME_BYTES;
	nr = trace->nr;
	if (nr > max) {
		nr = max;
		flags |= USER_UNWIND_TRUNCATED;
	}

	/* Lookups sleep: they are done before the entry is reserved. */
	frames = kmalloc_array(nr, USER_UNWIND_FRAME_BYTES, GFP_KERNEL);
	if (frames)
		trace_user_unwind_resolve(uu, trace->entries, nr, frames);

	event = trace_buffer_lock_reserve(buffer, TRACE_USER_UNWIND_STACK,
					  sizeof(*entry) + nr * USER_UNWIND_FRAME_BYTES,
					  tracing_gen_ctx());
	if (event) {
		entry = ring_buffer_event_data(event);
		entry->cookie = cookie;
		entry->nr = nr;
		entry->flags = flags;
		if (frames)
			memcpy(entry->frames, frames, nr * USER_UNWIND_FRAME_BYTES);
		else
			trace_user_unwind_unresolved(trace->entries, nr, entry->frames);
		trace_user_unwind_mark_guessed(trace, nr, entry->frames);
		trace_buffer_unlock_commit_nostack(buffer, event);
	}
	kfree(frames);
}

/**
 * trace_user_unwind_get - start deferred user stacks for an instance
 * @tr:		the instance
 *
 * Called when the userstacktrace_delay option is set and for each
 * userstacktrace_delay trigger registered in @tr. The first user makes
 * the instance a client of deferred unwinding.
 *
 * Context: Process context, may sleep.
 * Return: 0, -ENOMEM, or -EBUSY when every client slot of deferred
 * unwinding is taken.
 */
int trace_user_unwind_get(struct trace_array *tr)
{
	struct trace_user_unwind *uu;
	int ret;

	guard(mutex)(&trace_user_unwind_lock);
	uu = rcu_dereference_protected(tr->user_unwind,
				       lockdep_is_held(&trace_user_unwind_lock));
	if (uu) {
		uu->users++;
		return 0;
	}

	uu = kzalloc(sizeof(*uu), GFP_KERNEL);
	if (!uu)
		return -ENOMEM;
	uu->tr = tr;
	uu->users = 1;
	spin_lock_init(&uu->files_lock);
	ret = unwind_deferred_init(&uu->work, trace_user_unwind_callback);
	if (ret) {
		kfree(uu);
		return ret;
	}
	rcu_assign_pointer(tr->user_unwind, uu);
	return 0;
}

/**
 * trace_user_unwind_put - a user of deferred user stacks is gone
 * @tr:		the instance
 *
 * The last user cancels the client: stacks still pending for the instance
 * are dropped, and when this returns no callback runs for it any more.
 *
 * Context: Process context, may sleep.
 */
void trace_user_unwind_put(struct trace_array *tr)
{
	struct trace_user_unwind *uu;

	guard(mutex)(&trace_user_unwind_lock);
	uu = rcu_dereference_protected(tr->user_unwind,
				       lockdep_is_held(&trace_user_unwind_lock));
	if (WARN_ON_ONCE(!uu) || --uu->users)
		return;

	RCU_INIT_POINTER(tr->user_unwind, NULL);
	/* Waits for requests that still see uu, and for its callbacks. */
	unwind_deferred_cancel(&uu->work);
	kfree(uu);
}

/**
 * trace_user_unwind_buffer_reset - a buffer was emptied
 * @buf:	the buffer
 *
 * The names of files given in @buf are gone: give them again.
 *
 * Context: Process context.
 */
void trace_user_unwind_buffer_reset(struct array_buffer *buf)
{
	struct trace_array *tr = buf->tr;
	struct trace_user_unwind *uu;

	if (!tr || buf != &tr->array_buffer)
		return;

	rcu_read_lock();
	uu = rcu_dereference(tr->user_unwind);
	if (uu) {
		spin_lock(&uu->files_lock);
		memset(uu->files, 0, sizeof(uu->files));
		spin_unlock(&uu->files_lock);
	}
	rcu_read_unlock();
}

/* Output in the trace and trace_pipe files. */

static enum print_line_t
trace_user_unwind_cookie_print(struct trace_iterator *iter, int flags,
			       struct trace_event *event)
{
	struct user_unwind_cookie_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(&iter->seq, "<user stack deferred> cookie=%#llx\n",
			 field->cookie);
	return trace_handle_return(&iter->seq);
}

static enum print_line_t
trace_user_unwind_cookie_raw(struct trace_iterator *iter, int flags,
			     struct trace_event *event)
{
	struct user_unwind_cookie_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(&iter->seq, "%#llx\n", field->cookie);
	return trace_handle_return(&iter->seq);
}

/* Room for the longest frame line, and for the line that ends a cut stack. */
#define USER_UNWIND_LINE_MAX	96

static void trace_user_unwind_print_frame(struct trace_seq *s, const u64 *frame)
{
	u64 ip = frame[0], offset = frame[1], ino = frame[2];
	u32 kind = frame[3] >> USER_UNWIND_KIND_SHIFT;
	dev_t dev = lower_32_bits(frame[3]);
	/* A guessed frame reads " => ? addr", as the kernel's own guesses. */
	const char *mark = kind & USER_UNWIND_GUESSED ? "? " : "";

	switch (kind & ~USER_UNWIND_GUESSED) {
	case USER_UNWIND_FILE:
		trace_seq_printf(s, " => %s%#llx +%#llx inode=%llu dev=%u:%u\n",
				 mark, ip, offset, ino, MAJOR(dev), MINOR(dev));
		break;
	case USER_UNWIND_ANON:
		trace_seq_printf(s, " => %s%#llx +%#llx anon\n", mark, ip, offset);
		break;
	case USER_UNWIND_VDSO:
		trace_seq_printf(s, " => %s%#llx +%#llx vdso\n", mark, ip, offset);
		break;
	case USER_UNWIND_UNMAPPED:
		trace_seq_printf(s, " => %s%#llx unmapped\n", mark, ip);
		break;
	default:
		trace_seq_printf(s, " => %s%#llx\n", mark, ip);
		break;
	}
}

static enum print_line_t
trace_user_unwind_stack_print(struct trace_iterator *iter, int flags,
			      struct trace_event *event)
{
	struct user_unwind_stack_entry *field;
	struct trace_seq *s = &iter->seq;
	unsigned int i, nr;
	void *end;

	trace_assign_type(field, iter->ent);
	/* Trust the entry's size, not its count, for what can be read. */
	end = (void *)iter->ent + iter->ent_size;
	nr = min_t(unsigned long, field->nr,
		   (end - (void *)field->frames) / USER_UNWIND_FRAME_BYTES);

	trace_seq_printf(s, "<user stack> cookie=%#llx nr=%u%s\n", field->cookie,
			 field->nr, field->flags & USER_UNWIND_TRUNCATED ?
			 " truncated" : "");
	for (i = 0; i < nr; i++) {
		/* One event's output must fit in the trace_seq: cut it short. */
		if (seq_buf_buffer_left(&s->seq) < 2 * USER_UNWIND_LINE_MAX) {
			trace_seq_printf(s, " => ... %u more\n", nr - i);
			break;
		}
		trace_user_unwind_print_frame(s, &field->frames[i * USER_UNWIND_FRAME_WORDS]);
	}
	return trace_handle_return(s);
}

static enum print_line_t
trace_user_unwind_stack_raw(struct trace_iterator *iter, int flags,
			    struct trace_event *event)
{
	struct user_unwind_stack_entry *field;

	trace_assign_type(field, iter->ent);
	trace_seq_printf(&iter->seq, "%#llx %u %#x\n", field->cookie, field->nr,
			 field->flags);
	return trace_handle_return(&iter->seq);
}

static enum print_line_t
trace_user_unwind_inode_print(struct trace_iterator *iter, int flags,
			      struct trace_event *event)
{
	struct user_unwind_inode_entry *field;
	int len;

	trace_assign_type(field, iter->ent);
	len = iter->ent_size - offsetof(struct user_unwind_inode_entry, path);
	trace_seq_printf(&iter->seq,
			 "<user unwind inode> inode=%llu dev=%u:%u path=%.*s\n",
			 field->inode, MAJOR(field->dev), MINOR(field->dev),
			 max(len, 0), field->path);
	return trace_handle_return(&iter->seq);
}

static struct trace_event_functions trace_user_unwind_cookie_funcs = {
	.trace		= trace_user_unwind_cookie_print,
	.raw		= trace_user_unwind_cookie_raw,
};

static struct trace_event_functions trace_user_unwind_stack_funcs = {
	.trace		= trace_user_unwind_stack_print,
	.raw		= trace_user_unwind_stack_raw,
};

static struct trace_event_functions trace_user_unwind_inode_funcs = {
	.trace		= trace_user_unwind_inode_print,
	.raw		= trace_user_unwind_inode_print,
};

static struct trace_event trace_user_unwind_events[] = {
	{
		.type	= TRACE_USER_UNWIND_COOKIE,
		.funcs	= &trace_user_unwind_cookie_funcs,
	},
	{
		.type	= TRACE_USER_UNWIND_STACK,
		.funcs	= &trace_user_unwind_stack_funcs,
	},
	{
		.type	= TRACE_USER_UNWIND_INODE,
		.funcs	= &trace_user_unwind_inode_funcs,
	},
};

static __init int trace_user_unwind_init(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(trace_user_unwind_events); i++)
		WARN_ON(!register_trace_event(&trace_user_unwind_events[i]));
	return 0;
}
early_initcall(trace_user_unwind_init);
