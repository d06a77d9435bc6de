/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The struct pid of a pidfd, without the kernel's pidfd helpers (none is
 * exported).  In 6.1 a pidfd is an anonymous-inode file named "[pidfd]"
 * whose private data is its pid.  Later kernels (6.12) make pidfds files
 * of their own filesystem, pidfs (PID_FS_MAGIC, whose definition is its
 * probe), whose inode's private data is the pid; only pidfd code creates
 * files there.  A name alone proves nothing (any file can be called
 * "[pidfd]"): the filesystem's magic does.
 */
#ifndef PMUCTX_COMPAT_PIDFD_H
#define PMUCTX_COMPAT_PIDFD_H

#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/string.h>

/* @file's pid, or NULL when @file is no pidfd. */
static inline struct pid *pmuctx_pidfd_pid(struct file *file)
{
	struct inode *inode = file_inode(file);

	if (!inode)
		return NULL;
#ifdef PID_FS_MAGIC
	if (inode->i_sb->s_magic == PID_FS_MAGIC)
		return inode->i_private;
#endif
	if (inode->i_sb->s_magic == ANON_INODE_FS_MAGIC &&
	    !strcmp(file_dentry(file)->d_name.name, "[pidfd]"))
		return file->private_data;
	return NULL;
}

#endif
