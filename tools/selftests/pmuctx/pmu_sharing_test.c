// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx and perf on one PMU, as a distribution kernel boots (perf's
 * driver up; on x86 the NMI watchdog holding its cycles counter: vm-run
 * --kernel-owns-pmu --nmi-watchdog), with the module loaded by default
 * (backend=auto): auto borrows perf's per-CPU events (the shared backend),
 * and neither side gets EBUSY from the other.  An unprivileged user's
 * pmuctx counters on every CPU leave root's `perf stat` exact, root's
 * CPU-wide perf events on every CPU leave that user's pmuctx counts exact,
 * and the watchdog keeps interrupting meanwhile.  Exact under icount on
 * one CPU; skips where perf has no hardware PMU or the module was loaded
 * with another backend.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmuctx.h>
#include "kselftest_harness.h"
#include "pmu_test.h"

#define NOBODY	65534

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_file(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = fputs(v, f) < 0 ? -EIO : 0;
	if (fclose(f))
		err = -errno;
	return err;
}

static int perf_open(uint64_t config, bool user_only, pid_t pid, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	return syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Why this boot is not the one these tests are about, or NULL: perf has a
 * hardware PMU (its driver counts this process's instructions) and pmuctx
 * was loaded with the default backend.
 */
static const char *not_shared_by_default(void)
{
	static char why[128];
	char param[32];
	int fd;

	if (read_file("/sys/module/pmuctx/parameters/backend", param, sizeof(param)))
		return "pmuctx is not loaded";
	if (strcmp(param, "auto")) {
		snprintf(why, sizeof(why), "loaded with backend=%s", param);
		return why;
	}
	fd = perf_open(PERF_COUNT_HW_INSTRUCTIONS, true, 0, -1);
	if (fd < 0) {
		snprintf(why, sizeof(why), "perf has no hardware PMU here (%s)",
			 strerror(errno));
		return why;
	}
	close(fd);
	return NULL;
}

#define PARAMS	"/sys/module/pmuctx/parameters/"

/*
 * How many configurations pmuctx borrows at most (max_borrowed, or by
 * default the PMU's general counters less two, which perf's users keep).
 */
static unsigned int borrow_bound(void)
{
	struct pmuctx_info info = { .size = sizeof(info) };
	char v[16] = "";
	int dev = pmuctx_dev();

	if (!read_file(PARAMS "max_borrowed", v, sizeof(v)) && atoi(v) > 0)
		return atoi(v);
	if (dev < 0 || ioctl(dev, PMUCTX_INFO, &info) || !info.nr_general)
		return 2;
	return info.nr_general > 3 ? info.nr_general - 2 : 1;
}

static int become_nobody(void)
{
	return setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ? -1 : 0;
}

/*
 * Auto chooses the shared backend wherever perf has a hardware PMU (its
 * driver up, the watchdog holding a counter or not): the whole-PMU native
 * backend is root's to ask for.
 */
TEST(auto_borrows_from_perf)
{
	struct pmuctx_info info = { .size = sizeof(info) };
	const char *why = not_shared_by_default();
	char wd[8] = "";
	int dev;

	if (why)
		SKIP(return, "%s", why);
	dev = pmuctx_dev();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, ioctl(dev, PMUCTX_INFO, &info));
	read_file("/proc/sys/kernel/nmi_watchdog", wd, sizeof(wd));
	TH_LOG("backend %s, NMI watchdog %s", info.backend, wd[0] ? wd : "absent");
	EXPECT_EQ(0, strncmp(info.backend, "perf-shared:", 12));
	EXPECT_TRUE(info.features & PMUCTX_FEAT_PERF_SHARED);
}

/*
 * One holder per CPU, as uid 65534: pinned there, it counts user-mode
 * instructions and cycles with pmuctx and spins until it reads a byte on
 * @go, then writes both counters' times to @out.
 */
static pid_t hold_on_cpu(int cpu, int go, int out)
{
	struct pmu_times t[2];
	pid_t pid = fork();
	int fd[2];
	char c;

	if (pid)
		return pid;
	pin_to_cpu(cpu);
	if (become_nobody())
		_exit(2);
	fd[0] = pmu_open_timed(INST_RETIRED, PMUCTX_ATTR_EXCLUDE_KERNEL);
	fd[1] = pmu_open_timed(CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL);
	if (fd[0] < 0 || fd[1] < 0)
		_exit(3);
	/* Spin (counting) until root is done. */
	if (fcntl(go, F_SETFL, O_NONBLOCK))
		_exit(4);
	while (read(go, &c, 1) != 1)
		run_loop(10000);
	t[0] = pmu_read_times(fd[0]);
	t[1] = pmu_read_times(fd[1]);
	write_full(out, t, sizeof(t));
	_exit(0);
}

/* `perf stat -e instructions:u,cycles:u perf_loop N`: counts, and % running. */
static int perf_stat_loop(unsigned long n, uint64_t count[2], double running[2])
{
	char cmd[256], line[256], name[64];
	unsigned long long v;
	double pct;
	FILE *f;
	int got = 0;

	snprintf(cmd, sizeof(cmd),
		 "perf stat -x, -e instructions:u,cycles:u /selftests/perf_loop %lu 2>&1 >/dev/null",
		 n);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	/* value,unit,event,time running,percent running,... */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llu,,%63[^,],%*u,%lf", &v, name, &pct) != 3)
			continue;
		if (!strcmp(name, "instructions:u")) {
			count[0] = v, running[0] = pct, got |= 1;
		} else if (!strcmp(name, "cycles:u")) {
			count[1] = v, running[1] = pct, got |= 2;
		}
	}
	return pclose(f) == 0 && got == 3 ? 0 : -1;
}

/*
 * uid 65534 holds pmuctx hardware counters on every CPU, counting, and
 * root's own make pmuctx borrow all it may, while root's perf stat counts
 * a loop: perf's counts of two loops differ by the loops' difference
 * exactly, neither event multiplexed (pmuctx leaves two general counters
 * to perf's users; the watchdog's is pinned), and the holders counted all
 * along too.  perf puts CPU-wide flexible events, pmuctx's, on the PMU
 * before a task's: with as many borrowed as counters, perf's cycles:u
 * here were "<not counted>" (arm64, eight configurations, 2026-12-02).
 */
TEST(root_perf_stat_is_exact_while_pmuctx_borrows_all_it_may)
{
	unsigned long n[2] = { 1000000, 2000000 };	/* as many digits */
	uint64_t count[2][2];
	double running[2][2];
	int cpus = nr_cpus(), go[2], out[2], i, status, mine[4], held;
	const char *why = not_shared_by_default();
	unsigned int bound = borrow_bound();
	struct pmu_times t[2];
	pid_t pid[64];

	if (why)
		SKIP(return, "%s", why);
	if (!exact())
		SKIP(return, "exact counts need -icount on one CPU");
	if (system("perf --version >/dev/null 2>&1"))
		SKIP(return, "no perf here (vm-run --perf)");
	if (getuid())
		SKIP(return, "needs root to become uid 65534");
	ASSERT_GE(64, cpus);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(out));
	for (i = 0; i < cpus; i++) {
		pid[i] = hold_on_cpu(i, go[0], out[1]);
		ASSERT_LE(0, pid[i]);
	}
	close(go[0]);
	close(out[1]);
	/* Let every holder open its counters and spin. */
	usleep(200000);
	/*
	 * Root borrows the rest of what pmuctx may: the holders' two
	 * configurations and root's make the bound, and one more is ENOSPC.
	 */
	for (i = 2, held = 0; i < 6; i++) {
		mine[held] = pmu_open_config(i);
		if (mine[held] < 0)
			break;
		held++;
	}
	TH_LOG("pmuctx borrows %d configurations (bound %u)", 2 + held, bound);
	EXPECT_EQ(bound, 2 + held);
	if (i < 6)
		EXPECT_EQ(ENOSPC, errno);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, perf_stat_loop(n[i], count[i], running[i]));
	for (i = 0; i < held; i++)
		close(mine[i]);
	for (i = 0; i < cpus; i++)
		ASSERT_EQ(1, write(go[1], "g", 1));
	for (i = 0; i < cpus; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("holder %d: status %#x", i, status);
		read_full(out[0], t, sizeof(t));
		TH_LOG("holder: instructions %" PRIu64 ", cycles %" PRIu64
		       " (%" PRIu64 " of %" PRIu64 " ns running)",
		       t[0].value, t[1].value, t[0].running, t[0].enabled);
		EXPECT_LT(0, t[0].value);
		EXPECT_LT(0, t[1].value);
		EXPECT_EQ(t[0].enabled, t[0].running);
		EXPECT_EQ(t[1].enabled, t[1].running);
	}
	TH_LOG("perf stat: instructions %" PRIu64 " / %" PRIu64 ", cycles %"
	       PRIu64 " / %" PRIu64 ", running %.2f%% %.2f%%",
	       count[0][0], count[1][0], count[0][1], count[1][1],
	       running[1][0], running[1][1]);
	EXPECT_EQ(2 * (n[1] - n[0]), count[1][0] - count[0][0]);
	/* Cycles under icount: the loop's instructions, a cycle each. */
	EXPECT_LE(2 * (n[1] - n[0]) - 2 * (n[1] - n[0]) / 100,
		  count[1][1] - count[0][1]);
	EXPECT_GE(2 * (n[1] - n[0]) + 2 * (n[1] - n[0]) / 100,
		  count[1][1] - count[0][1]);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(100.0, running[i][0]);
		EXPECT_EQ(100.0, running[i][1]);
	}
}

/*
 * The reverse: root's CPU-wide perf events (instructions and cycles, every
 * CPU) count while uid 65534's pmuctx counter counts two loops: no EBUSY,
 * the loops' difference exact, never multiplexed; and root's events
 * counted the loops too.
 */
TEST(nobody_counts_exactly_while_root_perf_holds_every_cpu)
{
	int cpus = nr_cpus(), i, p[2], status, fd;
	const char *why = not_shared_by_default();
	int perf[64][2];
	struct pmu_times t[3], pt;
	pid_t pid;

	if (why)
		SKIP(return, "%s", why);
	if (!exact())
		SKIP(return, "exact counts need -icount on one CPU");
	if (getuid())
		SKIP(return, "needs root to become uid 65534");
	ASSERT_GE(64, cpus);
	for (i = 0; i < cpus; i++) {
		perf[i][0] = perf_open(PERF_COUNT_HW_INSTRUCTIONS, false, -1, i);
		perf[i][1] = perf_open(PERF_COUNT_HW_CPU_CYCLES, false, -1, i);
		ASSERT_LE(0, perf[i][0]) TH_LOG("CPU %d: %s", i, strerror(errno));
		ASSERT_LE(0, perf[i][1]) TH_LOG("CPU %d: %s", i, strerror(errno));
	}
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (become_nobody())
			_exit(2);
		fd = pmu_open_timed(INST_RETIRED, PMUCTX_ATTR_EXCLUDE_KERNEL);
		if (fd < 0)
			_exit(errno == EBUSY ? 3 : 4);
		/* The first round warms the child's paths up. */
		for (i = 0; i < 3; i++) {
			ioctl(fd, PMUCTX_IOC_ENABLE, 0);
			run_loop(i == 2 ? 1000001 : 1);
			ioctl(fd, PMUCTX_IOC_DISABLE, 0);
			t[i] = pmu_read_times(fd);
			ioctl(fd, PMUCTX_IOC_RESET, 0);
		}
		write_full(p[1], t, sizeof(t));
		_exit(0);
	}
	close(p[1]);
	read_full(p[0], t, sizeof(t));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("uid %d's counter: exit %d (3: EBUSY)", NOBODY, WEXITSTATUS(status));
	TH_LOG("pmuctx: %" PRIu64 ", %" PRIu64 ", %" PRIu64, t[0].value,
	       t[1].value, t[2].value);
	/*
	 * On arm64 one more now and then, as shared_test's
	 * loop_counts_exactly sees (2,000,001, with the perf driver's own
	 * events beside it here too): not understood; its bound until it is.
	 */
	EXPECT_LE(2000000, t[2].value - t[1].value);
	EXPECT_GE(2000002, t[2].value - t[1].value);
	for (i = 1; i < 3; i++)
		EXPECT_EQ(t[i].enabled, t[i].running);
	for (i = 0; i < cpus; i++) {
		EXPECT_EQ((ssize_t)sizeof(pt), read(perf[i][0], &pt, sizeof(pt)));
		if (!i)
			EXPECT_LE(2000000, pt.value);
		EXPECT_EQ(pt.enabled, pt.running);
		EXPECT_EQ((ssize_t)sizeof(pt), read(perf[i][1], &pt, sizeof(pt)));
		if (!i)
			EXPECT_LE(2000000, pt.value);
		EXPECT_EQ(pt.enabled, pt.running);
		close(perf[i][0]);
		close(perf[i][1]);
	}
}

static long nmis(void)
{
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " NMI: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * The NMI watchdog keeps its counter while pmuctx borrows all it may and
 * counts with all of them: its event is pinned, and pmuctx's are
 * flexible, scheduled after it.  With watchdog_thresh 1 its period is a second
 * of cycles: a loop of 3 * 10^9 cycles under icount takes at least two.
 */
TEST(nmi_watchdog_keeps_interrupting_beside_pmuctx)
{
	const char *why = not_shared_by_default();
	char wd[8] = "", thresh[8] = "";
	long before, after;
	int fd[6], i, n = 0;
	struct pmu_times t;

	if (why)
		SKIP(return, "%s", why);
	if (read_file("/proc/sys/kernel/nmi_watchdog", wd, sizeof(wd)) ||
	    strcmp(wd, "1") || nmis() < 0)
		SKIP(return, "no NMI watchdog here");
	if (!exact())
		SKIP(return, "the watchdog's period in guest cycles needs -icount");
	ASSERT_EQ(0, read_file("/proc/sys/kernel/watchdog_thresh", thresh, sizeof(thresh)));
	ASSERT_EQ(0, write_file("/proc/sys/kernel/watchdog_thresh", "1"));
	/* As many distinct configurations as pmuctx may borrow (both modes first). */
	for (i = 0; i < 6 && n < (int)borrow_bound(); i++) {
		fd[n] = pmu_open_config((i + 4) % 6);
		ASSERT_LE(0, fd[n]) TH_LOG("configuration %d: %s", i, strerror(errno));
		n++;
	}
	ASSERT_LE(2, n);
	before = nmis();
	run_loop(1500000000);
	after = nmis();
	ASSERT_EQ(0, write_file("/proc/sys/kernel/watchdog_thresh", thresh));
	t = pmu_read_times(fd[0]);
	TH_LOG("%d configurations borrowed; NMIs %ld -> %ld; first counter %"
	       PRIu64 " (%" PRIu64 " of %" PRIu64 " ns running)", n, before,
	       after, t.value, t.running, t.enabled);
	EXPECT_LE(before + 2, after);
	EXPECT_LE(3000000000ULL, t.value);
	for (i = 0; i < n; i++)
		close(fd[i]);
}

/* As uid @uid: opens configurations @first.. until one fails; how many opened. */
static int borrow_as(int uid, int first, int n, int *err)
{
	int p[2], r[2] = { 0, 0 }, i;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(2);
		for (i = first; i < first + n; i++, r[0]++)
			if (pmu_open_config(i) < 0)
				break;
		r[1] = i < first + n ? errno : 0;
		write_full(p[1], r, sizeof(r));
		/* Hold them until the parent has looked. */
		pause();
		_exit(0);
	}
	close(p[1]);
	read_full(p[0], r, sizeof(r));
	close(p[0]);
	*err = r[1];
	return pid * 16 + r[0];	/* the child, and its count */
}

/*
 * One user without CAP_PERFMON holds at most max_borrowed_per_user
 * configurations (by default half of what pmuctx may borrow): one more is
 * ENOSPC for them and not for another user.  Root is not bound per
 * user.
 */
TEST(one_user_holds_at_most_their_share)
{
	const char *why = not_shared_by_default();
	int a, b, err, fd[2];

	if (why)
		SKIP(return, "%s", why);
	if (getuid())
		SKIP(return, "needs root to become other users");
	ASSERT_EQ(0, write_file(PARAMS "max_borrowed_per_user", "1"));
	/* uid 65534: instructions:u, then cycles:u (ENOSPC). */
	a = borrow_as(NOBODY, 0, 2, &err);
	EXPECT_EQ(1, a % 16);
	EXPECT_EQ(ENOSPC, err);
	/* uid 65533 still gets one: cycles:u. */
	b = borrow_as(NOBODY - 1, 1, 1, &err);
	EXPECT_EQ(1, b % 16) TH_LOG("another user's share: %s", strerror(err));
	/* Root holds both and more. */
	fd[0] = pmu_open_config(0);
	fd[1] = pmu_open_config(1);
	EXPECT_LE(0, fd[0]);
	EXPECT_LE(0, fd[1]) TH_LOG("root past the per-user bound: %s", strerror(errno));
	close(fd[0]);
	close(fd[1]);
	kill(a / 16, SIGKILL);
	kill(b / 16, SIGKILL);
	waitpid(a / 16, NULL, 0);
	waitpid(b / 16, NULL, 0);
	EXPECT_EQ(0, write_file(PARAMS "max_borrowed_per_user", "0"));
}

TEST_HARNESS_MAIN
