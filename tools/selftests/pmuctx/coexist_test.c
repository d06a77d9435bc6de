// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx and perf's own PMU driver on one x86 machine (the x86_64 PMU lane
 * booted with --kernel-owns-pmu --no-load): the general counters belong to
 * whoever reserved them first, all or nothing, and the other fails cleanly
 * with EBUSY; the module always loads.  pmuctx takes them at its first
 * hardware counter and gives them back a second after its last one is
 * gone, clones included (Documentation/design.rst), with no reload.
 * That is the native backend (backend=native), a monopoly root asks for;
 * loaded with the default (auto) beside perf's driver, pmuctx borrows
 * perf's per-CPU events instead (kernel/perf_shared.c) and both count,
 * whoever came first; backend=perf counts through events bound to tasks.
 * Skips where pmuctx is loaded already or perf has no hardware PMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmuctx.h>
#include "kselftest_harness.h"

#define KO	"/lib/modules/pmuctx.ko"

static int perf_instructions(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Open /dev/pmuctx afresh (a cached fd would keep the module). */
static int dev_open(void)
{
	return open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
}

static void backend(int dev, char *name, uint64_t *features)
{
	struct pmuctx_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	name[0] = 0;
	*features = 0;
	if (ioctl(dev, PMUCTX_INFO, &info))
		return;
	memcpy(name, info.backend, sizeof(info.backend));
	name[sizeof(info.backend) - 1] = 0;
	*features = info.features;
}

/* An instruction counter of the caller: fd, or -errno. */
static int pmuctx_instructions_flags(int dev, uint32_t flags)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_HARDWARE,
		.config = PMUCTX_HW_INSTRUCTIONS,
		.flags = PMUCTX_ATTR_EXCLUDE_KERNEL | flags,
	};
	struct pmuctx_open_args args = {
		.attr = (uintptr_t)&attr,
		.group_fd = -1,
		.flags = PMUCTX_OPEN_CLOEXEC,
	};
	int fd = ioctl(dev, PMUCTX_OPEN, &args);

	return fd < 0 ? -errno : fd;
}

static int pmuctx_instructions(int dev)
{
	return pmuctx_instructions_flags(dev, 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * perf's instruction event, tried every 50 ms for up to @ms: its fd, or
 * -1 with errno.  pmuctx gives the counters back a second after its last
 * counter; the wait allows for a busy host.
 */
static int perf_instructions_within(unsigned int ms, uint64_t *waited)
{
	uint64_t start = now_ms();
	int fd;

	for (;;) {
		fd = perf_instructions();
		*waited = now_ms() - start;
		if (fd >= 0 || errno != EBUSY || *waited > ms)
			return fd;
		usleep(50000);
	}
}

/* Why the tests cannot load the module beside perf here, or NULL. */
static const char *cannot_load_here(void)
{
	struct stat st;

	if (!stat("/dev/pmuctx", &st))
		return "pmuctx is loaded: this test loads it itself";
	if (stat("/sys/bus/event_source/devices/cpu", &st))
		return "perf has no hardware PMU here";
	if (stat(KO, &st))
		return "no " KO;
	return NULL;
}

static int rmmod(void)
{
	int i;

	/* Exit works and RCU callbacks may hold it a moment. */
	for (i = 0; i < 50; i++) {
		if (!system("rmmod pmuctx 2>/dev/null"))
			return 0;
		usleep(100000);
	}
	return -1;
}

TEST(perf_and_pmuctx_take_turns)
{
	char name[PMUCTX_BACKEND_NAME_LEN];
	uint64_t features, v = 0, waited = 0;
	int perf, dev, fd, fd2, go[2], status;
	const char *why;
	pid_t kid;
	char c;

	why = cannot_load_here();
	if (why)
		SKIP(return, "%s", why);

	/* perf first: it holds the counters while its event lives. */
	perf = perf_instructions();
	ASSERT_LE(0, perf) TH_LOG("perf before pmuctx: %s", strerror(errno));
	ASSERT_EQ(0, system("insmod " KO " backend=native"))
		TH_LOG("the module must load beside perf");
	dev = dev_open();
	ASSERT_LE(0, dev);
	backend(dev, name, &features);
	EXPECT_STREQ("intel-perfmon", name);
	EXPECT_TRUE(features & PMUCTX_FEAT_HARDWARE);
	EXPECT_TRUE(features & PMUCTX_FEAT_SOFTWARE);
	EXPECT_EQ(-EBUSY, pmuctx_instructions(dev));

	/* perf's event gone: pmuctx takes the PMU, no reload needed. */
	close(perf);
	fd = pmuctx_instructions(dev);
	ASSERT_LE(0, fd) TH_LOG("pmuctx after perf's event closed: %s", strerror(-fd));
	EXPECT_EQ((ssize_t)sizeof(v), read(fd, &v, sizeof(v)));
	EXPECT_LT(0, v);
	perf = perf_instructions();
	EXPECT_EQ(-1, perf) TH_LOG("perf counted while pmuctx holds the PMU");
	EXPECT_EQ(EBUSY, errno);
	if (perf >= 0)
		close(perf);
	/* Closed and opened again at once: still pmuctx's. */
	close(fd);
	fd = pmuctx_instructions(dev);
	ASSERT_LE(0, fd) TH_LOG("pmuctx reopening at once: %s", strerror(-fd));

	/*
	 * An inherited clone holds the PMU after the original's fd is
	 * closed: its child still counts in hardware.
	 */
	close(fd);
	fd = pmuctx_instructions_flags(dev, PMUCTX_ATTR_INHERIT);
	ASSERT_LE(0, fd) TH_LOG("inherited: %s", strerror(-fd));
	ASSERT_EQ(0, pipe(go));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	close(fd);
	perf = perf_instructions_within(2500, &waited);
	EXPECT_EQ(-1, perf) TH_LOG("perf took the PMU while a clone counted in it");
	EXPECT_EQ(EBUSY, errno);
	if (perf >= 0)
		close(perf);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));

	/* Given back a second after the last counter, module loaded. */
	perf = perf_instructions_within(10000, &waited);
	EXPECT_LE(0, perf) TH_LOG("perf %llu ms after pmuctx's last counter: %s",
				  (unsigned long long)waited, strerror(errno));
	TH_LOG("perf counted again %llu ms after pmuctx's last counter went",
	       (unsigned long long)waited);
	/* And it is perf's now: pmuctx waits its turn. */
	EXPECT_EQ(-EBUSY, pmuctx_instructions(dev));
	if (perf >= 0)
		close(perf);
	fd2 = pmuctx_instructions(dev);
	EXPECT_LE(0, fd2) TH_LOG("pmuctx after perf's second event: %s", strerror(-fd2));
	if (fd2 >= 0)
		close(fd2);
	close(dev);
	ASSERT_EQ(0, rmmod());

	/* Given back at unload too: perf works at once. */
	perf = perf_instructions();
	EXPECT_LE(0, perf) TH_LOG("perf after pmuctx's unload: %s", strerror(errno));
	if (perf >= 0)
		close(perf);
}

/* The backend a load with @params chose: its name and features. */
static void load_as(struct __test_metadata *_metadata, const char *params,
		    char *name, uint64_t *features)
{
	char cmd[128];
	int dev;

	snprintf(cmd, sizeof(cmd), "insmod " KO " %s", params);
	ASSERT_EQ(0, system(cmd)) TH_LOG("%s must load beside perf", cmd);
	dev = dev_open();
	ASSERT_LE(0, dev);
	backend(dev, name, features);
	close(dev);
}

/*
 * The default backend (auto) borrows perf's per-CPU events whenever perf
 * has a hardware PMU, whether perf's events hold the counters at the load
 * or not (the NMI watchdog does for good on most machines): both count,
 * neither gets EBUSY.  The other backends are asked for by name.  A bad
 * name fails the load.
 */
TEST(auto_shares_the_pmu_with_perf)
{
	char name[PMUCTX_BACKEND_NAME_LEN];
	uint64_t features, v = 0, pv = 0;
	int perf, dev, fd, perf2;
	const char *why;

	why = cannot_load_here();
	if (why)
		SKIP(return, "%s", why);

	EXPECT_NE(0, system("insmod " KO " backend=bogus 2>/dev/null"));
	perf = perf_instructions();
	ASSERT_LE(0, perf) TH_LOG("perf: %s", strerror(errno));
	load_as(_metadata, "", name, &features);
	EXPECT_STREQ("perf-shared:cpu", name);
	EXPECT_TRUE(features & PMUCTX_FEAT_PERF_SHARED);
	dev = dev_open();
	ASSERT_LE(0, dev);
	fd = pmuctx_instructions(dev);
	ASSERT_LE(0, fd) TH_LOG("a hardware counter on perf's events: %s", strerror(-fd));
	/* perf's new events too, while pmuctx counts. */
	perf2 = perf_instructions();
	EXPECT_LE(0, perf2) TH_LOG("perf beside pmuctx's counter: %s", strerror(errno));
	EXPECT_EQ((ssize_t)sizeof(v), read(fd, &v, sizeof(v)));
	EXPECT_LT(0, v);
	EXPECT_EQ((ssize_t)sizeof(pv), read(perf, &pv, sizeof(pv)));
	EXPECT_LT(0, pv);
	if (perf2 >= 0) {
		pv = 0;
		EXPECT_EQ((ssize_t)sizeof(pv), read(perf2, &pv, sizeof(pv)));
		EXPECT_LT(0, pv);
		close(perf2);
	}
	close(fd);
	close(perf);
	close(dev);
	ASSERT_EQ(0, rmmod());

	/* Nobody holds the counters now: auto still borrows them. */
	load_as(_metadata, "", name, &features);
	EXPECT_STREQ("perf-shared:cpu", name);
	ASSERT_EQ(0, rmmod());
	load_as(_metadata, "backend=native", name, &features);
	EXPECT_STREQ("intel-perfmon", name);
	EXPECT_FALSE(features & PMUCTX_FEAT_PERF_EVENTS);
	ASSERT_EQ(0, rmmod());
	load_as(_metadata, "backend=perf", name, &features);
	EXPECT_STREQ("perf:cpu", name);
	EXPECT_TRUE(features & PMUCTX_FEAT_PERF_EVENTS);
	EXPECT_FALSE(features & PMUCTX_FEAT_PERF_SHARED);
	ASSERT_EQ(0, rmmod());
}

TEST_HARNESS_MAIN
