// SPDX-License-Identifier: GPL-2.0
/* The device node and the info ioctl: the first contact with the ABI. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/pmuctx.h>

#include "kselftest_harness.h"

/*
 * The kernel's own word on CPUID 0AH (arch_perfmon: version 2 or later),
 * independent of pmuctx: which backend the module must have chosen.
 */
static bool __attribute__((unused)) cpu_has_arch_perfmon(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "flags", 5) && strstr(line, " arch_perfmon");
	fclose(f);
	return found;
}

/*
 * Whether this kernel keeps cr4_update_irqsoff() and cr4_read_shadow()
 * from modules (kernel/compat/cr4.h): of the kernels Debian ships, 6.1 and
 * 6.12 export them to every module, sid's 7.2 to KVM's only.  By the
 * release, so that a probe that broke on 6.1 (no self-reads anywhere,
 * every self-read test skipped) fails here.
 */
static bool __attribute__((unused)) kernel_keeps_cr4(void)
{
	struct utsname u;

	return !uname(&u) && atoi(u.release) >= 7;
}

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/pmuctx: %s", strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(device_node_is_a_misc_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat("/dev/pmuctx", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(10, major(st.st_rdev));	/* MISC_MAJOR */
	EXPECT_EQ(0666, st.st_mode & 0777);
}

static void first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * The module says which release it is and which kernel it was built for
 * (sysfs, and pmuctx info's first line), which must be the one running:
 * a DKMS tree holds a build per kernel.
 */
TEST(module_names_its_release_and_the_kernel_it_was_built_for)
{
	char built_for[128], version[64], line[512], want[256];
	unsigned int major, minor, patch;
	struct utsname u;
	bool seen = false;
	FILE *p;

	ASSERT_EQ(0, uname(&u));
	first_line("/sys/class/misc/pmuctx/built_for", built_for, sizeof(built_for));
	EXPECT_STREQ(u.release, built_for);
	first_line("/sys/module/pmuctx/version", version, sizeof(version));
	EXPECT_EQ(3, sscanf(version, "%u.%u.%u", &major, &minor, &patch))
		TH_LOG("version '%s'", version);
	snprintf(want, sizeof(want), "module:           pmuctx %s, built for %s",
		 version, u.release);
	p = popen("pmuctx info", "r");
	ASSERT_NE(NULL, p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "module:", 7)) {
			EXPECT_STREQ(want, line);
			seen = true;
		}
	}
	EXPECT_EQ(0, pclose(p));
	EXPECT_TRUE(seen) TH_LOG("pmuctx info printed no module line");
}

TEST_F(dev, info_reports_abi_and_backend)
{
	struct pmuctx_info info = { .size = sizeof(info) };

	ASSERT_EQ(0, ioctl(self->fd, PMUCTX_INFO, &info));
	EXPECT_EQ(PMUCTX_ABI_VERSION, info.abi_version);
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_TRUE(info.features & PMUCTX_FEAT_SOFTWARE);
#if defined(__aarch64__)
	/*
	 * QEMU -cpu max: PMUv3 with 6 event counters and the cycle counter,
	 * pmuctx's own or, when the kernel's driver holds it, through perf.
	 */
	if (info.features & PMUCTX_FEAT_PERF_SHARED) {
		/* perf's per-CPU events: QEMU's PMU interrupts, they sample. */
		EXPECT_STREQ("perf-shared:armv8_pmuv3", info.backend);
		EXPECT_TRUE(info.features & PMUCTX_FEAT_OVERFLOW);
	} else if (info.features & PMUCTX_FEAT_PERF_EVENTS) {
		EXPECT_STREQ("perf:armv8_pmuv3", info.backend);
		/* QEMU's PMU interrupts, so perf's events sample. */
		EXPECT_TRUE(info.features & PMUCTX_FEAT_OVERFLOW);
	} else {
		EXPECT_STREQ("armv8-pmuv3", info.backend);
		/* EL0 reads are pmuctx's to give on every kernel. */
		EXPECT_TRUE(info.features & PMUCTX_FEAT_SELF_READ);
	}
	EXPECT_EQ(6, info.nr_general);
	EXPECT_EQ(1, info.nr_fixed);
	EXPECT_EQ(64, info.fixed_width);
	EXPECT_LE(1, info.pmu_version);
	EXPECT_TRUE(info.features & PMUCTX_FEAT_HARDWARE);
	/* PMCEID0 bits for SW_INCR (0x00) and CPU_CYCLES (0x11) */
	EXPECT_TRUE(info.hw_events[0] & (1ULL << 0x00));
	EXPECT_TRUE(info.hw_events[0] & (1ULL << 0x11));
	/* QEMU counts INST_RETIRED (0x08) only under -icount. */
	if (getenv("PMUCTX_VM_ICOUNT")) {
		EXPECT_TRUE(info.hw_events[0] & (1ULL << 0x08));
	} else {
		EXPECT_FALSE(info.hw_events[0] & (1ULL << 0x08));
	}
#else
	if (cpu_has_arch_perfmon()) {
		/*
		 * The PMU lane (scripts/qemu): Intel architectural perfmon
		 * v2, 8 general and 3 fixed counters of 48 bits.
		 */
		if (info.features & PMUCTX_FEAT_PERF_SHARED) {
			EXPECT_STREQ("perf-shared:cpu", info.backend);
		} else if (info.features & PMUCTX_FEAT_PERF_EVENTS) {
			EXPECT_STREQ("perf:cpu", info.backend);
		} else {
			EXPECT_STREQ("intel-perfmon", info.backend);
		}
		/* Every backend samples on this PMU (it interrupts). */
		EXPECT_TRUE(info.features & PMUCTX_FEAT_OVERFLOW);
		/* RDPMC at CPL 3 needs CR4.PCE, which 7.2 keeps from modules. */
		if (info.features & PMUCTX_FEAT_PERF_EVENTS) {
			EXPECT_FALSE(info.features & PMUCTX_FEAT_SELF_READ);
		} else {
			EXPECT_EQ(!kernel_keeps_cr4(), !!(info.features & PMUCTX_FEAT_SELF_READ));
		}
		EXPECT_EQ(8, info.nr_general);
		EXPECT_EQ(3, info.nr_fixed);
		EXPECT_EQ(48, info.general_width);
		EXPECT_EQ(48, info.fixed_width);
		EXPECT_LE(2, info.pmu_version);
		EXPECT_TRUE(info.features & PMUCTX_FEAT_HARDWARE);
		/* Architectural events 0 (core cycles) and 1 (instructions). */
		EXPECT_EQ(3, info.hw_events[0] & 3);
	} else {
		/* Stock QEMU's x86 TCG CPU has no PMU: software counters only. */
		EXPECT_STREQ("software", info.backend);
		EXPECT_EQ(0, info.nr_general);
		EXPECT_FALSE(info.features & PMUCTX_FEAT_HARDWARE);
	}
#endif
}

TEST_F(dev, info_accepts_older_smaller_struct)
{
	struct pmuctx_info info;
	const __u32 old_size = offsetof(struct pmuctx_info, nr_general);

	memset(&info, 0xa5, sizeof(info));
	info.size = old_size;
	ASSERT_EQ(0, ioctl(self->fd, PMUCTX_INFO, &info));
	EXPECT_EQ(old_size, info.size);
	EXPECT_EQ(PMUCTX_ABI_VERSION, info.abi_version);
	/* Nothing past the caller's size may be written. */
	EXPECT_EQ(0xa5a5a5a5u, info.nr_general);
}

TEST_F(dev, info_rejects_newer_struct_with_unknown_fields)
{
	struct {
		struct pmuctx_info info;
		__u64 future;
	} big;

	memset(&big, 0, sizeof(big));
	big.info.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->fd, PMUCTX_INFO, &big));
	EXPECT_EQ(sizeof(big.info), big.info.size);

	big.info.size = sizeof(big);
	big.future = 1;
	EXPECT_EQ(-1, ioctl(self->fd, PMUCTX_INFO, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(dev, info_rejects_truncated_size)
{
	struct pmuctx_info info = { .size = 4 };

	EXPECT_EQ(-1, ioctl(self->fd, PMUCTX_INFO, &info));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	EXPECT_EQ(-1, ioctl(self->fd, _IO(PMUCTX_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOR('T', 0x01, int), 0));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, bad_argument_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->fd, PMUCTX_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, PMUCTX_INFO, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_HARNESS_MAIN
