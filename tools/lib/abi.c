// SPDX-License-Identifier: GPL-2.0
/* libpmuctx: ioctl wrappers (Documentation/uapi.rst lists the errnos). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "pmuctx_abi.h"

int pmuctx_device(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	return fd;
}

int pmuctx_get_info(struct pmuctx_info *info)
{
	int dev = pmuctx_device();

	if (dev < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(dev, PMUCTX_INFO, info);
}

int pmuctx_counter_open(const struct pmuctx_attr *attr, int target,
			int group_fd, unsigned int flags)
{
	struct pmuctx_open_args args = {
		.attr = (uintptr_t)attr,
		.target = target,
		.group_fd = group_fd,
		.flags = flags,
	};
	int dev = pmuctx_device();

	if (dev < 0)
		return -1;
	return ioctl(dev, PMUCTX_OPEN, &args);
}

int pmuctx_counter_enable(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_ENABLE, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

int pmuctx_counter_disable(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_DISABLE, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

int pmuctx_counter_reset(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_RESET, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

int pmuctx_counter_read(int fd, uint64_t fmt, struct pmuctx_value *v)
{
	uint64_t words[5];
	ssize_t n;
	int i = 0;

	memset(v, 0, sizeof(*v));
	if (fmt & PMUCTX_FORMAT_GROUP) {
		errno = EINVAL;
		return -1;
	}
	n = read(fd, words, sizeof(words));
	if (n < 0)
		return -1;
	v->value = words[i++];
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED)
		v->time_enabled = words[i++];
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING)
		v->time_running = words[i++];
	if (fmt & PMUCTX_FORMAT_ID)
		v->id = words[i++];
	if (fmt & PMUCTX_FORMAT_STAMP)
		v->stamp = words[i++];
	if (n != (ssize_t)(i * sizeof(uint64_t))) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int pmuctx_counter_stats(int fd, struct pmuctx_ctx_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, PMUCTX_IOC_STATS, st);
}

int pmuctx_counter_tree(int fd, struct pmuctx_tree_read *tr,
			struct pmuctx_tree_entry *ents, uint32_t *nr)
{
	int ret;

	memset(tr, 0, sizeof(*tr));
	tr->size = sizeof(*tr);
	tr->nr_entries = *nr;
	tr->entries = (uintptr_t)ents;
	ret = ioctl(fd, PMUCTX_IOC_TREE_READ, tr);
	*nr = tr->nr_entries;
	return ret;
}

const char *pmuctx_open_strerror(int err)
{
	switch (err) {
	case ENOENT:
		return "/dev/pmuctx does not exist: is the pmuctx module loaded?";
	case EACCES:
		return "not allowed to count that task: it must be you, your own descendant with your credentials and dumpable, or your tracee (else CAP_PERFMON or CAP_SYS_PTRACE)";
	case EPERM:
		return "counting kernel mode needs CAP_PERFMON";
	case ESRCH:
		return "no such task, or it is exiting";
	case EBADF:
		return "the group or pidfd descriptor is not an open file descriptor (or not a pidfd)";
	case E2BIG:
		return "the attr struct is newer than this module and uses fields it does not know";
	case EOPNOTSUPP:
		return "not supported: software counters cannot filter by privilege level or sample, and hardware counting in per-task contexts is not available yet";
	case ENODEV:
		return "no hardware PMU backend is loaded: only software counters are available";
	case EINVAL:
		return "invalid attr, target or group (unknown type, config or flag bit; or a group leader that is a member or differs in inheritance)";
	case EFAULT:
		return "bad pointer passed to the kernel";
	case ENOMEM:
		return "out of memory";
	case EMFILE:
		return "too many open files";
	default:
		return strerror(err);
	}
}
