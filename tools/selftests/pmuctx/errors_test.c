// SPDX-License-Identifier: GPL-2.0
/*
 * Every invalid attr, target and flag gets its documented errno
 * (Documentation/uapi.rst), and the attach policy denies what it must.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "pmuctx_test.h"
#include "kselftest_harness.h"

static struct pmuctx_attr sw_attr(uint64_t config)
{
	struct pmuctx_attr a = {
		.size = sizeof(a),
		.type = PMUCTX_TYPE_SOFTWARE,
		.config = config,
	};
	return a;
}

#define EXPECT_OPEN_ERRNO(err, attrp, target, group, flags) do {	\
	int __fd = pmuctx_open_attr(attrp, target, group, flags);	\
	EXPECT_EQ(-1, __fd);						\
	EXPECT_EQ(err, errno);						\
	if (__fd >= 0)							\
		close(__fd);						\
} while (0)

TEST(attr_size_versions)
{
	struct {
		struct pmuctx_attr a;
		uint64_t future[2];
	} big;
	struct pmuctx_attr a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	int fd;

	SELECTED_OR_SKIP();

	a.size = PMUCTX_ATTR_SIZE_VER0 - 8;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a.size = 0;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);

	memset(&big, 0, sizeof(big));
	big.a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	big.a.size = sizeof(big);
	fd = pmuctx_open_attr(&big.a, 0, -1, 0);
	EXPECT_LE(0, fd) TH_LOG("newer struct with zero tail: %s", strerror(errno));
	close(fd);
	big.future[1] = 1;
	EXPECT_OPEN_ERRNO(E2BIG, &big.a, 0, -1, 0);
	big.a.size = 1 << 20;
	EXPECT_OPEN_ERRNO(E2BIG, &big.a, 0, -1, 0);
}

TEST(attr_fields)
{
	struct pmuctx_attr a;

	SELECTED_OR_SKIP();

	a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	a.type = PMUCTX_TYPE_MAX;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_MAX);
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	a.flags = PMUCTX_ATTR_ALL + 1;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	a.read_format = PMUCTX_FORMAT_ALL + 1;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	a.flags = PMUCTX_ATTR_INHERIT_THREAD;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a.flags = PMUCTX_ATTR_INHERIT_STAT;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_PAGE_FAULTS);
	a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
	EXPECT_OPEN_ERRNO(EOPNOTSUPP, &a, 0, -1, 0);
	a.flags = PMUCTX_ATTR_EXCLUDE_USER;
	EXPECT_OPEN_ERRNO(EOPNOTSUPP, &a, 0, -1, 0);
	a = sw_attr(PMUCTX_SW_PAGE_FAULTS);
	a.sample_period = 1000;
	EXPECT_OPEN_ERRNO(EOPNOTSUPP, &a, 0, -1, 0);
	a = sw_attr(0);
	a.type = PMUCTX_TYPE_HARDWARE;
	a.config = PMUCTX_HW_MAX;
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, -1, 0);
	a.config = PMUCTX_HW_CPU_CYCLES;
#if defined(__aarch64__)
	{
		int fd = pmuctx_open_attr(&a, 0, -1, 0);

		EXPECT_LE(0, fd) TH_LOG("cycles: %s", strerror(errno));
		close(fd);
	}
#else
	{
		struct pmuctx_info info = { .size = sizeof(info) };
		int fd;

		ASSERT_EQ(0, ioctl(pmuctx_dev(), PMUCTX_INFO, &info));
		if (info.features & PMUCTX_FEAT_HARDWARE) {
			/* The x86 PMU lane: Intel perfmon counts cycles. */
			fd = pmuctx_open_attr(&a, 0, -1, 0);
			EXPECT_LE(0, fd) TH_LOG("cycles: %s", strerror(errno));
			close(fd);
		} else {
			/* Stock QEMU's x86 TCG CPU has no PMU. */
			EXPECT_OPEN_ERRNO(ENODEV, &a, 0, -1, 0);
		}
	}
#endif
}

TEST(open_args)
{
	struct pmuctx_attr a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	struct pmuctx_open_args args = { .attr = (uintptr_t)&a, .group_fd = -1 };

	SELECTED_OR_SKIP();

	args.flags = PMUCTX_OPEN_ALL + 1;
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_OPEN, &args));
	EXPECT_EQ(EINVAL, errno);
	args.flags = 0;
	args.reserved = 1;
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_OPEN, &args));
	EXPECT_EQ(EINVAL, errno);
	args.reserved = 0;
	args.attr = 0;
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_OPEN, &args));
	EXPECT_EQ(EFAULT, errno);
	args.attr = 16;
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_OPEN, &args));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_OPEN, (void *)16));
	EXPECT_EQ(EFAULT, errno);
}

TEST(targets)
{
	struct pmuctx_attr a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	int devnull = open("/dev/null", O_RDONLY);
	int status;
	pid_t pid;

	SELECTED_OR_SKIP();

	EXPECT_OPEN_ERRNO(EINVAL, &a, -5, -1, 0);
	EXPECT_OPEN_ERRNO(ESRCH, &a, 4000000, -1, 0);	/* > pid_max */
	/* Kernel threads have no user return to hook: kthreadd is pid 2. */
	EXPECT_OPEN_ERRNO(EINVAL, &a, 2, -1, 0);
	EXPECT_OPEN_ERRNO(EBADF, &a, devnull, -1, PMUCTX_OPEN_PIDFD);
	EXPECT_OPEN_ERRNO(EBADF, &a, 999, -1, PMUCTX_OPEN_PIDFD);
	EXPECT_OPEN_ERRNO(EBADF, &a, -1, -1, PMUCTX_OPEN_PIDFD);

	/* A reaped child's pid is gone. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_OPEN_ERRNO(ESRCH, &a, pid, -1, 0);
	close(devnull);
}

TEST(group_fds)
{
	struct pmuctx_attr a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	int devnull = open("/dev/null", O_RDONLY);
	int lead, member;

	SELECTED_OR_SKIP();

	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, devnull, 0);
	EXPECT_OPEN_ERRNO(EBADF, &a, 0, 999, 0);
	EXPECT_OPEN_ERRNO(EBADF, &a, 0, -2, 0);

	lead = pmuctx_open_attr(&a, 0, -1, 0);
	ASSERT_LE(0, lead);
	a.flags = PMUCTX_ATTR_INHERIT;	/* members share the leader's inheritance */
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, lead, 0);
	a.flags = 0;
	member = pmuctx_open_attr(&a, 0, lead, 0);
	ASSERT_LE(0, member);
	EXPECT_OPEN_ERRNO(EINVAL, &a, 0, member, 0);
	close(member);
	close(lead);
	close(devnull);
}

/*
 * A plain read stores its words one by one into user memory (dev.c): a
 * buffer whose first words are writable and the rest not, a read-only
 * one, a kernel address, must each fail with EFAULT, and what was
 * writable holds nothing but the read's own words.
 */
TEST(plain_read_words_to_hostile_buffers)
{
	uint64_t fmt = PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
		       PMUCTX_FORMAT_TOTAL_TIME_RUNNING | PMUCTX_FORMAT_ID;
	int fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, fmt, 0, -1);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t words[4], id, *edge;
	char *map;

	SELECTED_OR_SKIP();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_ID, &id));
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + page, page, PROT_NONE));
	/* Two words before the PROT_NONE page, two in it. */
	edge = (uint64_t *)(map + page) - 2;
	edge[0] = edge[1] = 0x5a5a5a5a5a5a5a5aull;
	EXPECT_EQ(-1, read(fd, edge, sizeof(words)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_NE(0x5a5a5a5a5a5a5a5aull, edge[1]);	/* enabled time */
	EXPECT_EQ(-1, read(fd, map + page, sizeof(words)));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, mprotect(map, page, PROT_READ));
	EXPECT_EQ(-1, read(fd, map, sizeof(words)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, read(fd, (void *)(uintptr_t)0xffffffff81000000ull,
			   sizeof(words)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, read(fd, words, sizeof(words) - 1));
	EXPECT_EQ(ENOSPC, errno);
	/* And the good read after all that: value, enabled, running, id. */
	ASSERT_EQ((ssize_t)sizeof(words), read(fd, words, sizeof(words)));
	EXPECT_LE(words[0], words[1]);
	EXPECT_EQ(words[1], words[2]);
	EXPECT_EQ(id, words[3]);
	munmap(map, 2 * page);
	close(fd);
}

TEST(counter_fd_ioctls_and_reads)
{
	int fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, 0, 0, -1);
	struct pmuctx_ctx_stats st = { .size = 8 };
	volatile uintptr_t bad_addr = 16;
	uint64_t v;

	SELECTED_OR_SKIP();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, PMUCTX_IOC_ENABLE, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PMUCTX_IOC_RESET, ~0ul));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, _IO(PMUCTX_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, PMUCTX_IOC_ID, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, PMUCTX_IOC_STATS, &st));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(fd, &v, 4));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(-1, read(fd, (void *)(uintptr_t)bad_addr, 8));
	EXPECT_EQ(EFAULT, errno);
	/* No file position, on 6.1 (no_llseek) as on 6.12 (no .llseek). */
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	/* The device fd is not a counter, a counter fd not the device. */
	EXPECT_EQ(-1, ioctl(fd, PMUCTX_INFO, &st));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(pmuctx_dev(), PMUCTX_IOC_ENABLE, 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

/* Run @fn as an unprivileged user in a child; its exit status is the errno seen. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(200);
		/* Changing ids made us undumpable; a plain user process is not. */
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int open_errno(pid_t target)
{
	struct pmuctx_attr a = sw_attr(PMUCTX_SW_TASK_CLOCK);
	int fd = pmuctx_open_attr(&a, target, -1, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static int try_init(void *unused)
{
	return open_errno(1);
}

/* Counting kernel mode on the PMU needs CAP_PERFMON; user mode does not. */
static int __attribute__((unused)) try_kernel_mode(void *unused)
{
	struct pmuctx_attr a = { .size = sizeof(a), .type = PMUCTX_TYPE_HARDWARE,
				 .config = PMUCTX_HW_CPU_CYCLES };
	int fd = pmuctx_open_attr(&a, 0, -1, 0);

	if (fd >= 0 || errno != EPERM)
		return 210;
	a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
	fd = pmuctx_open_attr(&a, 0, -1, 0);
	if (fd < 0)
		return 211;
	close(fd);
	return 0;
}

static int try_given(void *arg)
{
	return open_errno(*(pid_t *)arg);
}

/* A child of our own: allowed; made undumpable: denied. */
static int try_own_children(void *unused)
{
	int go[2], done[2], res = 0, status;
	pid_t kid;
	char c;

	if (pipe(go) || pipe(done))
		return 201;
	kid = fork();
	if (!kid) {
		read_full(go[0], &c, 1);
		if (c == 'd')
			prctl(PR_SET_DUMPABLE, 0);
		write_full(done[1], &c, 1);
		read_full(go[0], &c, 1);
		_exit(0);
	}
	if (open_errno(kid) != 0)
		res = 202;
	write_full(go[1], "d", 1);
	/* Undumpable now (a 20 ms sleep was too short on a loaded host). */
	read_full(done[0], &c, 1);
	if (!res && open_errno(kid) != EACCES)
		res = 203;
	write_full(go[1], "x", 1);
	waitpid(kid, &status, 0);
	if (!res && open_errno(0) != 0)
		res = 204;
	return res;
}

TEST(attach_policy)
{
	pid_t stranger;
	int go[2], status;

	SELECTED_OR_SKIP();

	/* pid 1 belongs to root and is not our descendant. */
	EXPECT_EQ(EACCES, as_nobody(try_init, NULL));
	EXPECT_EQ(0, as_nobody(try_own_children, NULL));
#if defined(__aarch64__)
	EXPECT_EQ(0, as_nobody(try_kernel_mode, NULL));
#endif

	/* Same uid, but not a descendant: denied (ptrace_scope=1). */
	ASSERT_EQ(0, pipe(go));
	stranger = fork();
	ASSERT_LE(0, stranger);
	if (!stranger) {
		char c;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(1);
		prctl(PR_SET_DUMPABLE, 1);
		read_full(go[0], &c, 1);
		_exit(0);
	}
	EXPECT_EQ(EACCES, as_nobody(try_given, &stranger));
	/* Root (CAP_PERFMON, CAP_SYS_PTRACE) may count anyone. */
	EXPECT_EQ(0, open_errno(stranger));
	EXPECT_EQ(0, open_errno(1));
	write_full(go[1], "x", 1);
	ASSERT_EQ(stranger, waitpid(stranger, &status, 0));
}

TEST_HARNESS_MAIN
