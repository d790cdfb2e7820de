// SPDX-License-Identifier: GPL-2.0
/*
 * prctl(PR_SFRAME_FILE_ADD, PR_SFRAME_FILE_REMOVE): a privileged process
 * gives the kernel the SFrame table of a file, or takes it back; the
 * kernel holds it for every process that maps the file (sframe/file.c).
 *
 * Privileged (CAP_PERFMON or CAP_SYS_ADMIN): the table decides how every
 * process's stacks are walked. The kernel opens no file by path; the
 * caller passes a file descriptor of the object, and the build ID the
 * table was made from, which must be the file's. The table is checked as
 * any section a process maps (sframe/read.c) before the store takes it.
 */
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/prctl.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_sframe.h>
#include "sframe.h"
#include "elf.h"
#include "file.h"

/* The regular file @fd names, open for reading, with a reference. */
static int sframe_file_of_fd(int fd, struct file **filep)
{
	struct file *file = fget(fd);

	if (!file)
		return -EBADF;
	if (!S_ISREG(file_inode(file)->i_mode) ||
	    !(file->f_mode & FMODE_READ)) {
		fput(file);
		return -EBADF;
	}
	*filep = file;
	return 0;
}

static int sframe_file_add(unsigned long uarg, unsigned long usize)
{
	struct unwind_sframe_sec sec = {};
	struct prctl_sframe_file arg;
	u8 id[SFRAME_BUILD_ID_MAX];
	struct file *file;
	const char *why;
	void *data;
	int ret, size;

	ret = copy_struct_from_user(&arg, sizeof(arg), (void __user *)uarg,
				    usize);
	if (ret)
		return ret;
	if (arg.flags || !arg.build_id_size ||
	    arg.build_id_size > SFRAME_BUILD_ID_MAX || !arg.table_size)
		return -EINVAL;
	if (arg.table_size > SFRAME_MAX_SIZE)
		return -E2BIG;
	ret = sframe_file_of_fd(arg.fd, &file);
	if (ret)
		return ret;

	size = sframe_elf_build_id(file, id);
	if (size <= 0) {
		ret = size ? size : -ENODATA;
		goto out_file;
	}
	if (size != arg.build_id_size || memcmp(id, arg.build_id, size)) {
		ret = -ESTALE;
		goto out_file;
	}

	ret = -ENOMEM;
	data = kvmalloc(arg.table_size, GFP_KERNEL_ACCOUNT);
	if (!data)
		goto out_file;
	ret = -EFAULT;
	if (copy_from_user(data, u64_to_user_ptr(arg.table), arg.table_size))
		goto out_data;
	/* Checked as a section at address 0: the starts are the object's. */
	ret = sframe_sec_init_kernel(&sec, data, 0, arg.table_size, &why);
	if (ret) {
		if (ret == -EINVAL)
			pr_info_ratelimited("unwind: %s[%d]: SFrame table for %pD refused: %s\n",
					    current->comm, task_pid_nr(current),
					    file, why ? why : "unreadable");
		goto out_data;
	}
	ret = sframe_file_store(file_inode(file), id, size, data,
				arg.table_size);
	if (!ret) {
		fput(file);
		return 0;
	}
out_data:
	kvfree(data);
out_file:
	fput(file);
	return ret;
}

static int sframe_file_remove(int fd)
{
	struct file *file;
	int ret;

	ret = sframe_file_of_fd(fd, &file);
	if (ret)
		return ret;
	ret = sframe_file_forget(file_inode(file));
	fput(file);
	return ret;
}

/**
 * unwind_sframe_file_prctl - give or take back the SFrame table of a file
 * @option:	PR_SFRAME_FILE_ADD or PR_SFRAME_FILE_REMOVE
 * @arg2:	ADD: address of a struct prctl_sframe_file; REMOVE: a file
 *		descriptor of the file
 * @arg3:	ADD: the struct's size; REMOVE: 0
 * @arg4:	0
 * @arg5:	0
 *
 * A table given for a file answers for every executable mapping of it
 * that a walk meets from then on, in every process; mappings met before
 * keep what was found then. Given again, it replaces the first.
 *
 * Context: Task context (the prctl() system call).
 * Return: 0; -EPERM without CAP_PERFMON (or CAP_SYS_ADMIN); -EINVAL for
 * bad arguments or a table that fails a check; -E2BIG for a table or
 * struct too large; -EBADF for a descriptor that is not of a regular file
 * open for reading; -ENODATA if the file has no build ID; -ESTALE if its
 * build ID is not the one given; -EFAULT; -ENOMEM; -ENOSPC when the
 * tables' limits are reached; -ENOENT if REMOVE finds no table.
 */
int unwind_sframe_file_prctl(int option, unsigned long arg2, unsigned long arg3,
			     unsigned long arg4, unsigned long arg5)
{
	if (!perfmon_capable())
		return -EPERM;
	if (arg4 || arg5)
		return -EINVAL;
	switch (option) {
	case PR_SFRAME_FILE_ADD:
		return sframe_file_add(arg2, arg3);
	case PR_SFRAME_FILE_REMOVE:
		if (arg3)
			return -EINVAL;
		if (arg2 > INT_MAX)	/* a negative descriptor, say */
			return -EBADF;
		return sframe_file_remove(arg2);
	}
	return -EINVAL;
}
