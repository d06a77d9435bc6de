// SPDX-License-Identifier: GPL-2.0
/*
 * Software counters on one task: self counting against the kernel's own
 * per-task statistics, enable/disable/reset, read formats and groups.
 */
#include <poll.h>
#include <time.h>
#include <sys/wait.h>
#include "pmuctx_test.h"
#include "kselftest_harness.h"

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < end)
		;
}

TEST(task_clock_matches_thread_cputime)
{
	uint64_t t0, t1, v;
	int fd;

	/*
	 * Interrupts taken while the task runs are in task-clock (as in
	 * perf: the context's clock runs) but not in the thread's CPU time
	 * (IRQ_TIME_ACCOUNTING).  In make check this test follows the fuzzer,
	 * whose exits leave RCU and workqueue work behind (3 ms of it once,
	 * with the host busy): let it drain first.
	 */
	usleep(300 * 1000);
	t0 = thread_cpu_ns();
	fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, 0, 0, -1);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	spin_ns(50 * 1000 * 1000);
	v = pmuctx_read1(fd);
	t1 = thread_cpu_ns();
	/* Our clock runs only between the open and the read. */
	EXPECT_GE(t1 - t0 + 1000000, v);
	EXPECT_LE(45 * 1000 * 1000, v) TH_LOG("task-clock %llu ns for a 50 ms spin",
					      (unsigned long long)v);
	close(fd);
}

TEST(page_faults_are_exact)
{
	long m0, m1;
	uint64_t all, minor, major;
	int fa, fmin, fmaj;

	fa = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_DISABLED, 0, 0, -1);
	fmin = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS_MIN, PMUCTX_ATTR_DISABLED, 0, 0, -1);
	fmaj = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS_MAJ, PMUCTX_ATTR_DISABLED, 0, 0, -1);
	ASSERT_LE(0, fa);
	ASSERT_LE(0, fmin);
	ASSERT_LE(0, fmaj);
	m0 = minflt_thread();
	ASSERT_EQ(0, ioctl(fa, PMUCTX_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(fmin, PMUCTX_IOC_ENABLE, 0));
	ASSERT_EQ(0, ioctl(fmaj, PMUCTX_IOC_ENABLE, 0));
	touch_pages(100);
	ASSERT_EQ(0, ioctl(fa, PMUCTX_IOC_DISABLE, 0));
	ASSERT_EQ(0, ioctl(fmin, PMUCTX_IOC_DISABLE, 0));
	ASSERT_EQ(0, ioctl(fmaj, PMUCTX_IOC_DISABLE, 0));
	m1 = minflt_thread();
	all = pmuctx_read1(fa);
	minor = pmuctx_read1(fmin);
	major = pmuctx_read1(fmaj);
	EXPECT_EQ(m1 - m0, minor);
	EXPECT_LE(100, minor);
	EXPECT_EQ(0, major);
	EXPECT_EQ(minor + major, all);
	close(fa);
	close(fmin);
	close(fmaj);
}

TEST(context_switches_follow_the_scheduler)
{
	struct timespec ms = { 0, 1000000 };
	long s0, s1;
	uint64_t v;
	int fd, i;

	fd = pmuctx_open_sw(PMUCTX_SW_CONTEXT_SWITCHES, PMUCTX_ATTR_DISABLED, 0, 0, -1);
	ASSERT_LE(0, fd);
	s0 = switches_thread();
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_ENABLE, 0));
	for (i = 0; i < 20; i++)
		nanosleep(&ms, NULL);
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_DISABLE, 0));
	s1 = switches_thread();
	v = pmuctx_read1(fd);
	/*
	 * A sleep whose timer fired before schedule() does not switch, so
	 * the kernel's own count is the reference; a preemption just outside
	 * the enabled window may be in it and not in ours.
	 */
	EXPECT_LE(10, v);
	EXPECT_GE(s1 - s0, v);
	EXPECT_LE(s1 - s0 - 2, v);
	close(fd);
}

TEST(cpu_migrations_match_the_scheduler)
{
	long long m0, m1;
	uint64_t v;
	int fd, i;

	if (nr_cpus() < 2)
		SKIP(return, "needs two CPUs");
	pin_to_cpu(0);
	fd = pmuctx_open_sw(PMUCTX_SW_CPU_MIGRATIONS, 0, 0, 0, -1);
	ASSERT_LE(0, fd);
	m0 = sched_migrations(gettid());
	for (i = 0; i < 10; i++)
		pin_to_cpu((i + 1) % 2);
	m1 = sched_migrations(gettid());
	v = pmuctx_read1(fd);
	ASSERT_LE(0, m0);
	EXPECT_EQ(m1 - m0, v);
	EXPECT_LE(10, v);
	close(fd);
}

TEST(disable_freezes_reset_zeroes)
{
	uint64_t a, b;
	int fd;

	fd = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_DISABLED, 0, 0, -1);
	ASSERT_LE(0, fd);
	touch_pages(10);
	EXPECT_EQ(0, pmuctx_read1(fd));
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_ENABLE, 0));
	touch_pages(10);
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_DISABLE, 0));
	a = pmuctx_read1(fd);
	EXPECT_LE(10, a);
	touch_pages(10);
	b = pmuctx_read1(fd);
	EXPECT_EQ(a, b);
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_RESET, 0));
	EXPECT_EQ(0, pmuctx_read1(fd));
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_ENABLE, 0));
	touch_pages(5);
	EXPECT_LE(5, pmuctx_read1(fd));
	close(fd);
}

TEST(read_format_times_id_stamp)
{
	uint64_t buf[5], id = 0, stamp1;
	struct timespec ms = { 0, 2000000 };
	long long sw0;
	int fd, tries;

	fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0,
			    PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
			    PMUCTX_FORMAT_TOTAL_TIME_RUNNING |
			    PMUCTX_FORMAT_ID | PMUCTX_FORMAT_STAMP, 0, -1);
	ASSERT_LE(0, fd);
	spin_ns(5 * 1000 * 1000);
	ASSERT_EQ(sizeof(buf), read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, ioctl(fd, PMUCTX_IOC_ID, &id));
	EXPECT_NE(0, id);
	EXPECT_EQ(id, buf[3]);
	/* task-clock is the enabled time of a task counter. */
	EXPECT_LE(buf[0], buf[1]);
	EXPECT_EQ(buf[1], buf[2]);
	EXPECT_LE(4 * 1000 * 1000, buf[1]);
	stamp1 = buf[4];
	/*
	 * Switched out: unloaded and loaded again.  A sleep only switches
	 * when its timer has not fired before schedule(): a debug kernel
	 * under TCG took longer than 2 ms to get there once (arm64-debug,
	 * 2026-11-29: stamp unchanged), so sleep until the kernel counts a
	 * switch of this thread.
	 */
	sw0 = proc_switches(gettid());
	ASSERT_LE(0, sw0);
	for (tries = 0; tries < 100 && proc_switches(gettid()) == sw0; tries++)
		nanosleep(&ms, NULL);
	ASSERT_LT(sw0, proc_switches(gettid()));
	ASSERT_EQ(sizeof(buf), read(fd, buf, sizeof(buf)));
	EXPECT_LE(stamp1 + 2, buf[4]);
	/* Too small a buffer for the format. */
	EXPECT_EQ(-1, read(fd, buf, 16));
	EXPECT_EQ(ENOSPC, errno);
	close(fd);
}

TEST(group_reads_members_with_one_time)
{
	uint64_t buf[16], ids[3];
	int lead, m1, m2;
	long s0, s1;

	lead = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, PMUCTX_ATTR_DISABLED,
			      PMUCTX_FORMAT_GROUP | PMUCTX_FORMAT_ID |
			      PMUCTX_FORMAT_TOTAL_TIME_ENABLED, 0, -1);
	ASSERT_LE(0, lead);
	m1 = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_DISABLED, 0, 0, lead);
	ASSERT_LE(0, m1) TH_LOG("member: %s", strerror(errno));
	m2 = pmuctx_open_sw(PMUCTX_SW_CONTEXT_SWITCHES, PMUCTX_ATTR_DISABLED, 0, 0, lead);
	ASSERT_LE(0, m2);
	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_ID, &ids[0]));
	ASSERT_EQ(0, ioctl(m1, PMUCTX_IOC_ID, &ids[1]));
	ASSERT_EQ(0, ioctl(m2, PMUCTX_IOC_ID, &ids[2]));

	/* A member cannot lead. */
	EXPECT_EQ(-1, pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, 0, 0, 0, m1));
	EXPECT_EQ(EINVAL, errno);

	s0 = switches_thread();
	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_ENABLE, PMUCTX_IOC_FLAG_GROUP));
	touch_pages(20);
	usleep(1000);
	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_DISABLE, PMUCTX_IOC_FLAG_GROUP));
	s1 = switches_thread();
	/* nr, time_enabled, then value+id per member */
	ASSERT_EQ(8 * sizeof(uint64_t), read(lead, buf, sizeof(buf)));
	EXPECT_EQ(3, buf[0]);
	EXPECT_LT(0, buf[1]);
	EXPECT_EQ(buf[1], buf[2]);	/* the leader's count is its enabled time */
	EXPECT_EQ(ids[0], buf[3]);
	EXPECT_LE(20, buf[4]);
	EXPECT_EQ(ids[1], buf[5]);
	/* A sleep whose timer fired early may not switch: the kernel's count rules. */
	EXPECT_GE(s1 - s0, (long)buf[6]);
	EXPECT_LE(s1 - s0 - 2, (long)buf[6]);
	EXPECT_EQ(ids[2], buf[7]);

	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_RESET, PMUCTX_IOC_FLAG_GROUP));
	ASSERT_EQ(8 * sizeof(uint64_t), read(lead, buf, sizeof(buf)));
	EXPECT_EQ(0, buf[2]);
	EXPECT_EQ(0, buf[4]);
	EXPECT_EQ(0, buf[6]);

	/* Closing the leader leaves its members counting on their own. */
	close(lead);
	ASSERT_EQ(0, ioctl(m1, PMUCTX_IOC_ENABLE, 0));
	touch_pages(3);
	EXPECT_LE(3, pmuctx_read1(m1));
	close(m1);
	close(m2);
}

/*
 * Issue 41 item 5: perf's rule, which libpmuctx keeps for perf's callers: a
 * member counts only while its leader is enabled too, and a group read
 * gives the leader's times.  A disabled leader with an enabled member read
 * nr 2, times 0, leader 0 and the member's count: a count with no time.
 */
TEST(group_member_counts_only_while_its_leader_is_enabled)
{
	const uint64_t fmt = PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
			     PMUCTX_FORMAT_TOTAL_TIME_RUNNING;
	struct pmuctx_tree_entry ents[2];
	struct pmuctx_tree_read tr;
	uint64_t g[5], one[3], before;
	int lead, m;

	lead = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, PMUCTX_ATTR_DISABLED,
			      fmt | PMUCTX_FORMAT_GROUP, 0, -1);
	ASSERT_LE(0, lead);
	m = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, 0, fmt, 0, lead);
	ASSERT_LE(0, m) TH_LOG("member: %s", strerror(errno));
	touch_pages(50);
	spin_ns(2000000);

	/* nr, time_enabled, time_running, leader, member */
	ASSERT_EQ(sizeof(g), read(lead, g, sizeof(g)));
	EXPECT_EQ(2, g[0]);
	EXPECT_EQ(0, g[1]);
	EXPECT_EQ(0, g[2]);
	EXPECT_EQ(0, g[3]);
	EXPECT_EQ(0, g[4]) TH_LOG("the member counted %llu faults while its leader was disabled",
				  (unsigned long long)g[4]);
	/* Its own read: enabled all along, never running, nothing counted. */
	ASSERT_EQ(sizeof(one), read(m, one, sizeof(one)));
	EXPECT_EQ(0, one[0]);
	EXPECT_LT(0, one[1]);
	EXPECT_EQ(0, one[2]);
	ASSERT_EQ(0, tree_read(m, &tr, ents, 2));
	EXPECT_EQ(0, tr.total);
	EXPECT_EQ(0, tr.own_value);

	/*
	 * The leader alone enabled: the member counts from now.  The window
	 * spans a tick: where sched_clock is unstable (x86 under a loaded
	 * TCG host marks its TSC so) local_clock() may stand still until the
	 * next tick, and a shorter window could measure 0 ns.
	 */
	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_ENABLE, 0));
	touch_pages(30);
	spin_ns(20000000);
	ASSERT_EQ(0, ioctl(lead, PMUCTX_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(g), read(lead, g, sizeof(g)));
	EXPECT_LT(0, g[1]);
	EXPECT_EQ(g[1], g[2]);
	EXPECT_EQ(g[1], g[3]);	/* the leader's count is its enabled time */
	EXPECT_LE(30, g[4]);
	EXPECT_GT(50, g[4]) TH_LOG("faults before the leader's enable counted");
	ASSERT_EQ(sizeof(one), read(m, one, sizeof(one)));
	EXPECT_EQ(g[4], one[0]);
	EXPECT_LT(0, one[2]);
	EXPECT_GT(one[1], one[2]);	/* it ran only while its leader did */
	ASSERT_EQ(0, tree_read(m, &tr, ents, 2));
	EXPECT_EQ(g[4], tr.total);

	/* Disabled again, the member stops with it. */
	before = g[4];
	touch_pages(40);
	ASSERT_EQ(sizeof(g), read(lead, g, sizeof(g)));
	EXPECT_EQ(before, g[4]);

	/* Its leader closed, the member counts on its own. */
	close(lead);
	touch_pages(20);
	EXPECT_LE(before + 20, pmuctx_read1(m));
	close(m);
}

TEST(counts_another_task_by_pid_and_pidfd)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr), .type = PMUCTX_TYPE_SOFTWARE,
		.config = PMUCTX_SW_PAGE_FAULTS,
	};
	int go[2], done[2], fd, fd2, pfd, status;
	long delta[2];
	uint64_t v1;
	pid_t pid;
	int round;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		for (round = 0; round < 2; round++) {
			long m[3];

			/*
			 * The first round attaches somewhere on the way back
			 * from read: the count lies between the two deltas.
			 */
			m[0] = minflt_thread();
			read_full(go[0], &c, 1);
			m[1] = minflt_thread();
			touch_pages(30 + round * 10);
			m[2] = minflt_thread();
			delta[0] = m[2] - m[1];
			delta[1] = m[2] - m[0];
			write_full(done[1], delta, sizeof(delta));
		}
		read_full(go[0], &c, 1);
		_exit(0);
	}
	ASSERT_EQ(0, wait_for_wchan(pid, "pipe_read"));
	fd = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, 0, 0, pid, -1);
	ASSERT_LE(0, fd) TH_LOG("open on child: %s", strerror(errno));
	pfd = syscall(SYS_pidfd_open, pid, 0);
	ASSERT_LE(0, pfd);
	/* A pidfd names the same task: a second counter on it. */
	fd2 = pmuctx_open_attr(&attr, pfd, -1, PMUCTX_OPEN_PIDFD);
	ASSERT_LE(0, fd2) TH_LOG("open by pidfd: %s", strerror(errno));
	write_full(go[1], "g", 1);
	read_full(done[0], delta, sizeof(delta));
	v1 = pmuctx_read1(fd);
	EXPECT_LE(delta[0], v1);
	EXPECT_GE(delta[1], v1);
	EXPECT_LE(30, v1);
	EXPECT_EQ(v1, pmuctx_read1(fd2));
	close(fd2);
	/* Attached now: the second round is exact. */
	write_full(go[1], "g", 1);
	read_full(done[0], delta, sizeof(delta));
	EXPECT_EQ(v1 + delta[1], pmuctx_read1(fd));
	write_full(go[1], "g", 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The count outlives the task. */
	EXPECT_EQ(v1 + delta[1], pmuctx_read1(fd));
	close(fd);
	close(pfd);
}

TEST(enable_on_exec_starts_at_exec)
{
	int go[2], fd, status;
	struct rusage ru;
	uint64_t v;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		read_full(go[0], &c, 1);
		touch_pages(200);	/* before exec: not counted */
		execl("/bin/busybox", "true", NULL);
		_exit(127);
	}
	fd = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS,
			    PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_ENABLE_ON_EXEC,
			    0, pid, -1);
	ASSERT_LE(0, fd);
	write_full(go[1], "g", 1);
	ASSERT_EQ(pid, wait4(pid, &status, 0, &ru));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	v = pmuctx_read1(fd);
	EXPECT_LT(0, v);
	EXPECT_GE(ru.ru_minflt - 200, v) TH_LOG("%llu counted, %ld faults in all",
						 (unsigned long long)v, ru.ru_minflt);
	close(fd);
}

TEST(poll_hangs_up_when_the_task_exits)
{
	struct pollfd p;
	int go[2], fd, status;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c;

		read_full(go[0], &c, 1);
		_exit(0);
	}
	fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, 0, pid, -1);
	ASSERT_LE(0, fd);
	p.fd = fd;
	p.events = POLLIN;
	EXPECT_EQ(0, poll(&p, 1, 0));
	write_full(go[1], "g", 1);
	EXPECT_EQ(1, poll(&p, 1, 5000));
	EXPECT_TRUE(p.revents & POLLHUP);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(fd);
}

TEST_HARNESS_MAIN
