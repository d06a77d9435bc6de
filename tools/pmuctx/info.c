// SPDX-License-Identifier: GPL-2.0
/* pmuctx info: what the loaded module offers. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "pmuctx_abi.h"
#include "range_cli.h"

/* What PMUCTX_TYPE_RANGE counters can watch here (Documentation/ranges.rst). */
static void print_ranges(const struct pmuctx_info *info)
{
	char text[192];

	range_kinds_describe(info->range_kinds, text, sizeof(text));
	printf("address ranges:   %s (user mode; debug registers shared with ptrace and perf)\n", text);
	range_caps_describe(&info->range_data, text, sizeof(text));
	printf("  data:           %s\n", text);
	range_caps_describe(&info->range_insn, text, sizeof(text));
	printf("  instructions:   %s\n", text);
	if (info->range_fine_insn_order)
		printf("  fine mode:      exact instruction ranges within one %llu-byte page\n",
		       1ULL << info->range_fine_insn_order);
}

/* The first line of a sysfs file, without its newline; "" if unreadable. */
static void read_sysfs_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Which module is loaded, and for which kernel it was built: a DKMS tree
 * builds one per kernel, and a module forced onto another kernel says so.
 */
static void print_module(void)
{
	char version[64], built_for[128];
	struct utsname u;

	read_sysfs_line("/sys/module/pmuctx/version", version, sizeof(version));
	read_sysfs_line("/sys/class/misc/pmuctx/built_for", built_for, sizeof(built_for));
	if (uname(&u))
		u.release[0] = 0;
	printf("module:           pmuctx %s, built for %s", version[0] ? version : "(no version)",
	       built_for[0] ? built_for : "(a kernel it does not name: an older module)");
	if (built_for[0] && u.release[0] && strcmp(built_for, u.release))
		printf(" (running %s!)", u.release);
	printf("\n");
}

int cmd_info(struct cli *cli, int argc, char **argv)
{
#if defined(__aarch64__)
	const char *native_how = "boot with initcall_blacklist=armv8_pmu_driver_init";
#else
	const char *native_how = "stop perf's hardware events and the NMI watchdog (nmi_watchdog=0)";
#endif
	struct pmuctx_info info;

	(void)cli;
	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "pmuctx: usage: pmuctx info\n");
		return 2;
	}
	if (pmuctx_get_info(&info)) {
		fprintf(stderr, "pmuctx: %s\n", pmuctx_open_strerror(errno));
		return 1;
	}
	print_module();
	printf("ABI version:      %u\n", info.abi_version);
	printf("backend:          %s\n", info.backend);
	printf("counters:         %u general (%u bits), %u fixed (%u bits)\n",
	       info.nr_general, info.general_width, info.nr_fixed, info.fixed_width);
	if (info.pmu_version)
		printf("PMU version:      %u\n", info.pmu_version);
	printf("features:        %s%s%s%s%s%s%s%s\n",
	       info.features & PMUCTX_FEAT_SOFTWARE ? " software" : "",
	       info.features & PMUCTX_FEAT_HARDWARE ? " hardware" : "",
	       info.features & PMUCTX_FEAT_OVERFLOW ? " overflow" : "",
	       info.features & PMUCTX_FEAT_FREQ ? " frequency-sampling" : "",
	       info.features & PMUCTX_FEAT_MULTIPLEX ? " multiplex" : "",
	       info.features & PMUCTX_FEAT_ADDR_RANGE ? " address-range" : "",
	       info.features & PMUCTX_FEAT_SELF_READ ? " self-read" : "",
	       info.features & PMUCTX_FEAT_PERF_EVENTS ? " perf-events" : "");
	if (info.features & PMUCTX_FEAT_PERF_SHARED) {
		printf("perf events:      the kernel's PMU driver owns the PMU and lends pmuctx one\n"
		       "                  event per CPU for each event in use: perf multiplexes them\n"
		       "                  with its own users' when the PMU is over-committed (time\n"
		       "                  running is what perf gave them), contexts swap, and there\n"
		       "                  are no self-reads.  The PMU to pmuctx alone (no hardware\n"
		       "                  perf events for anyone meanwhile): %s,\n"
		       "                  then reload pmuctx with backend=native.\n",
		       native_how);
	} else if (info.features & PMUCTX_FEAT_PERF_EVENTS) {
		printf("perf events:      the kernel's PMU driver owns the PMU, so hardware counters\n"
		       "                  go through its perf events: perf multiplexes them (time\n"
		       "                  running is what perf gave them), contexts holding them never\n"
		       "                  swap, and there are no self-reads.\n"
		       "                  For pmuctx's own backend: %s,\n"
		       "                  then reload pmuctx (backend=native to insist), or reload it\n"
		       "                  with backend=auto to share the PMU with perf.\n",
		       native_how);
	} else if ((info.features & PMUCTX_FEAT_MULTIPLEX) && info.mux_interval_ms) {
		/* a module from before multiplexing leaves the interval 0 */
		printf("rotation:         every %u ms when a context has more counters than the PMU\n",
		       info.mux_interval_ms);
	}
	if (info.hw_events[0] || info.hw_events[1])
		printf("common events:    0x%016llx 0x%016llx\n",
		       (unsigned long long)info.hw_events[0],
		       (unsigned long long)info.hw_events[1]);
	printf("software events:  %u\n", info.nr_sw_events);
	if (info.features & PMUCTX_FEAT_ADDR_RANGE)
		print_ranges(&info);
	return 0;
}
