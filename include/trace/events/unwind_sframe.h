/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM unwind_sframe

#if !defined(_TRACE_UNWIND_SFRAME_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UNWIND_SFRAME_H

#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>

/*
 * unwind_sframe_missing - a walk met an object with no SFrame table
 * @file:	the object's file
 * @start:	start of its executable mapping in the current process
 * @end:	end of the mapping (exclusive)
 * @pgoff:	the mapping's offset in the file, in pages
 *
 * Fired the first time the current process's walks meet the mapping of
 * an ELF object that has neither an SFrame section of its own nor a
 * table given for its file (PR_SFRAME_FILE_ADD). A privileged tool
 * (cfi2sframe -W) opens the file through /proc/PID/map_files/START-END,
 * checks the device and inode, and gives the file a table, which the
 * process's next walk takes.
 */
TRACE_EVENT(unwind_sframe_missing,
	    TP_PROTO(struct file *file, unsigned long start, unsigned long end,
		     unsigned long pgoff),
	    TP_ARGS(file, start, end, pgoff),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __field(unsigned long, start)
			     __field(unsigned long, end)
			     __field(unsigned long, pgoff)
			     __field(unsigned long, ino)
			     __field(dev_t, dev)
			     __field(u32, gen)),
	    TP_fast_assign(__entry->pid = current->tgid;
			   __entry->start = start;
			   __entry->end = end;
			   __entry->pgoff = pgoff;
			   __entry->ino = file_inode(file)->i_ino;
			   __entry->dev = file_inode(file)->i_sb->s_dev;
			   __entry->gen = file_inode(file)->i_generation;),
	    TP_printk("pid=%d start=%#lx end=%#lx pgoff=%#lx dev=%u:%u ino=%lu gen=%u",
		      __entry->pid, __entry->start, __entry->end,
		      __entry->pgoff, MAJOR(__entry->dev), MINOR(__entry->dev),
		      __entry->ino, __entry->gen)
);

#endif /* _TRACE_UNWIND_SFRAME_H */

#include <trace/define_trace.h>
