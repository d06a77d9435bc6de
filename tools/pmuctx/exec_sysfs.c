// SPDX-License-Identifier: GPL-2.0
/*
 * The core PMU perf reads from sysfs, for "pmuctx exec" when perf's own
 * driver is not there to publish it.  perf parses cpu/event=0xc0,umask=0/
 * (x86) and armv8_pmuv3/inst_retired/ (arm64) from
 * /sys/bus/event_source/devices/<pmu>/{type,format/,events/}; with
 * pmuctx's backend owning the PMU that directory does not exist.  This
 * builds a private copy of the devices directory: a symlink to every PMU
 * the kernel has (software, tracepoint, ...) plus the core PMU, whose type
 * is PERF_TYPE_RAW (the shim's raw events, as x86's kernel numbers its cpu
 * PMU), whose formats are the kernel driver's and whose events are the
 * ones the PMU implements (CPUID 0AH:EBX, PMCEID).  The shim redirects
 * perf's reads there (perf-shim/sysfs.c, $PMUCTX_PERF_SYSFS).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "cli.h"
#include "exec_sysfs.h"
#include "pmuctx_abi.h"

#define DEVICES "/sys/bus/event_source/devices"

/* perf's x86 architectural events in CPUID 0AH:EBX bit order, as its driver names them. */
static const struct {
	const char *name, *encoding;
} x86_arch_events[] = {
	{ "cpu-cycles", "event=0x3c" },
	{ "instructions", "event=0xc0" },
	{ "bus-cycles", "event=0x3c,umask=0x01" },
	{ "cache-references", "event=0x2e,umask=0x4f" },
	{ "cache-misses", "event=0x2e,umask=0x41" },
	{ "branch-instructions", "event=0xc4" },
	{ "branch-misses", "event=0xc5" },
};

static const char *const x86_formats[][2] = {
	{ "event", "config:0-7" }, { "umask", "config:8-15" }, { "edge", "config:18" },
	{ "pc", "config:19" }, { "any", "config:21" }, { "inv", "config:23" },
	{ "cmask", "config:24-31" },
};

static const char *const arm64_formats[][2] = {
	{ "event", "config:0-15" }, { "long", "config1:0" },
};

static int write_file(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;
	int ok;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	va_start(ap, fmt);
	ok = vfprintf(f, fmt, ap) >= 0;
	va_end(ap);
	return fclose(f) || !ok ? -1 : 0;
}

static int subdir(char *out, size_t len, const char *dir, const char *name)
{
	if (snprintf(out, len, "%s/%s", dir, name) >= (int)len)
		return -1;
	return mkdir(out, 0755);
}

/* A symlink to every PMU the kernel publishes, so that perf still finds them. */
static int link_kernel_pmus(const char *devices)
{
	char from[PATH_MAX], to[PATH_MAX], real[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(DEVICES);
	int ret = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(from, sizeof(from), DEVICES "/%s", de->d_name) >= (int)sizeof(from) ||
		    snprintf(to, sizeof(to), "%s/%s", devices, de->d_name) >= (int)sizeof(to) ||
		    !realpath(from, real) || symlink(real, to)) {
			ret = -1;
			break;
		}
	}
	closedir(d);
	return ret;
}

static int x86_events(const char *events, const struct pmuctx_info *info)
{
	size_t i;

	for (i = 0; i < sizeof(x86_arch_events) / sizeof(x86_arch_events[0]); i++)
		if ((info->hw_events[0] >> i & 1) &&
		    write_file(events, x86_arch_events[i].name, "%s\n", x86_arch_events[i].encoding))
			return -1;
	/* the fixed counter's pseudo-encoding, as perf's driver spells it */
	if (info->nr_fixed > 2 && write_file(events, "ref-cycles", "event=0x00,umask=0x03\n"))
		return -1;
	return 0;
}

/* PMUv3's common events the PMU implements (PMCEID), by their lower-case names. */
static int arm64_events(const char *events, struct cli *cli)
{
	struct pmuctx_evdb *evdb = cli_evdb(cli);
	struct pmuctx_event_desc ev;
	char name[128];
	int i, n;
	size_t j;

	if (!evdb)
		return 0;
	n = pmuctx_evdb_n_events(evdb);
	for (i = 0; i < n; i++) {
		if (pmuctx_evdb_event(evdb, i, &ev) || pmuctx_evdb_event_implemented(evdb, i) != 1)
			continue;
		if (strlen(ev.name) >= sizeof(name))
			continue;
		for (j = 0; ev.name[j]; j++)
			name[j] = tolower((unsigned char)ev.name[j]);
		name[j] = 0;
		if (write_file(events, name, "event=0x%04x\n", ev.code))
			return -1;
	}
	return 0;
}

/*
 * The name perf's arm64 driver gives the PMU: from the device tree's
 * compatible string ("arm,armv8-pmuv3" -> armv8_pmuv3, "arm,cortex-a72-pmu"
 * -> armv8_cortex_a72), or armv8_pmuv3_0 as ACPI's first PMU is named.
 */
static void arm64_pmu_name(char *out, size_t len)
{
	char path[PATH_MAX], compat[128];
	struct dirent *de;
	DIR *d = opendir("/proc/device-tree");
	FILE *f;
	size_t n, i;

	snprintf(out, len, "armv8_pmuv3_0");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, "pmu") ||
		    snprintf(path, sizeof(path), "/proc/device-tree/%s/compatible",
			     de->d_name) >= (int)sizeof(path))
			continue;
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(compat, 1, sizeof(compat) - 1, f);
		fclose(f);
		compat[n] = 0;	/* the first of its NUL-separated strings */
		if (!strcmp(compat, "arm,armv8-pmuv3")) {
			snprintf(out, len, "armv8_pmuv3");
			break;
		}
		if (!strncmp(compat, "arm,", 4) && strlen(compat) > 8 && !strcmp(compat + strlen(compat) - 4, "-pmu")) {
			snprintf(out, len, "armv8_%.*s", (int)(strlen(compat) - 8), compat + 4);
			for (i = 0; out[i]; i++)
				if (out[i] == '-')
					out[i] = '_';
			break;
		}
	}
	closedir(d);
}

static int build(const char *top, const char *pmu, const struct pmuctx_info *info,
		 struct cli *cli, int x86)
{
	char devices[PATH_MAX], dir[PATH_MAX], sub[PATH_MAX];
	size_t i, n;

	if (subdir(devices, sizeof(devices), top, "devices") || link_kernel_pmus(devices) ||
	    subdir(dir, sizeof(dir), devices, pmu) ||
	    write_file(dir, "type", "%u\n", PERF_TYPE_RAW) ||
	    subdir(sub, sizeof(sub), dir, "format"))
		return -1;
	n = x86 ? sizeof(x86_formats) / sizeof(x86_formats[0]) :
		  sizeof(arm64_formats) / sizeof(arm64_formats[0]);
	for (i = 0; i < n; i++) {
		const char *const *f = x86 ? x86_formats[i] : arm64_formats[i];

		if (write_file(sub, f[0], "%s\n", f[1]))
			return -1;
	}
	/* arm64's core PMUs list their CPUs: perf takes a PMU with "cpus" for a core one */
	if (!x86 && write_file(dir, "cpus", "0-%ld\n", sysconf(_SC_NPROCESSORS_CONF) - 1))
		return -1;
	if (subdir(sub, sizeof(sub), dir, "events"))
		return -1;
	return x86 ? x86_events(sub, info) : arm64_events(sub, cli);
}

static int remove_entry(const char *path)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	char child[PATH_MAX];

	if (lstat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, de->d_name) < (int)sizeof(child))
			remove_entry(child);
	}
	closedir(d);
	return rmdir(path);
}

void exec_sysfs_remove(const char *top)
{
	remove_entry(top);
}

static const char *tmp_dir(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

#define COPY_NAME "/pmuctx-sysfs.XXXXXX"

size_t exec_sysfs_path_len(void)
{
	return strlen(tmp_dir()) + strlen(COPY_NAME "/devices");
}

int exec_sysfs_build(struct cli *cli, char *top, size_t len)
{
	struct pmuctx_info info;
	char real_dir[PATH_MAX], pmu[64];
	int x86;

	if (pmuctx_get_info(&info) || !(info.features & PMUCTX_FEAT_HARDWARE))
		return 0;
	if (!strncmp(info.backend, "intel-perfmon", 13)) {
		x86 = 1;
		snprintf(pmu, sizeof(pmu), "cpu");
	} else if (!strncmp(info.backend, "armv8", 5)) {
		x86 = 0;
		arm64_pmu_name(pmu, sizeof(pmu));
	} else {
		return 0;	/* perf's events: perf's driver publishes its own */
	}
	snprintf(real_dir, sizeof(real_dir), DEVICES "/%s", pmu);
	if (!access(real_dir, F_OK))
		return 0;
	if (snprintf(top, len, "%s" COPY_NAME, tmp_dir()) >= (int)len ||
	    !mkdtemp(top))
		return -1;
	if (build(top, pmu, &info, cli, x86)) {
		int err = errno;

		exec_sysfs_remove(top);
		errno = err;
		return -1;
	}
	return 1;
}
