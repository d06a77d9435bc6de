// SPDX-License-Identifier: GPL-2.0
/*
 * perf's sysfs PMU directory, as "pmuctx exec" built it: when
 * $PMUCTX_PERF_SYSFS names a copy of /sys/bus/event_source/devices (the
 * kernel's PMUs linked, the core PMU pmuctx's backend owns added:
 * tools/pmuctx/exec_sysfs.c), every path under that directory is looked up
 * in the copy instead, and /sys/devices/<pmu>/... too for a PMU the copy
 * adds.  Only the calls perf 6.1 makes on those paths are taken: open,
 * openat (absolute paths), fopen (paranoid.c), access, faccessat, stat,
 * lstat, opendir and scandir; any other path passes through untouched.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfs.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

static const char devices_dir[] = "/sys/bus/event_source/devices";
static const char sys_devices[] = "/sys/devices/";

/* the part of @path after @prefix when it is @prefix itself or below it */
static const char *below(const char *path, const char *prefix, size_t len)
{
	if (strncmp(path, prefix, len) || (path[len] && path[len] != '/'))
		return NULL;
	return path + len;
}

const char *shim_sysfs_path(const char *path, char *buf, size_t len)
{
	const char *copy, *rest;
	struct stat st;
	size_t n;

	/* every open of the program passes here: the cheap test first */
	if (!path || strncmp(path, "/sys/", 5))
		return path;
	copy = getenv("PMUCTX_PERF_SYSFS");
	if (!copy || *copy != '/')
		return path;
	rest = below(path, devices_dir, sizeof(devices_dir) - 1);
	if (rest) {
		if (snprintf(buf, len, "%s%s", copy, rest) >= (int)len)
			return path;
		return buf;
	}
	if (strncmp(path, sys_devices, sizeof(sys_devices) - 1))
		return path;
	/* /sys/devices/NAME[/...]: ours when the copy holds NAME as a directory, not a link */
	rest = path + sizeof(sys_devices) - 1;
	n = strcspn(rest, "/");
	if (!n || snprintf(buf, len, "%s/%.*s", copy, (int)n, rest) >= (int)len ||
	    lstat(buf, &st) || !S_ISDIR(st.st_mode) ||
	    snprintf(buf, len, "%s/%s", copy, rest) >= (int)len)
		return path;
	return buf;
}

#define REAL(type, name, args)							\
	static type(*real_##name) args;						\
	if (!real_##name)							\
		real_##name = (type(*) args)dlsym(RTLD_NEXT, #name)

/* the mode argument of open and openat, read only when the flags say it is there */
#define OPEN_MODE(flags, last, mode)						\
	do {									\
		if ((flags) & (O_CREAT | __O_TMPFILE)) {			\
			va_list ap;						\
			va_start(ap, last);					\
			mode = va_arg(ap, mode_t);				\
			va_end(ap);						\
		}								\
	} while (0)

SHIM_EXPORT int open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	REAL(int, open, (const char *, int, ...));

	OPEN_MODE(flags, flags, mode);
	return real_open(shim_sysfs_path(path, buf, sizeof(buf)), flags, mode);
}

SHIM_EXPORT int open64(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	REAL(int, open64, (const char *, int, ...));

	OPEN_MODE(flags, flags, mode);
	return real_open64(shim_sysfs_path(path, buf, sizeof(buf)), flags, mode);
}

/* _FORTIFY_SOURCE's checked forms of open */
SHIM_EXPORT int __open_2(const char *path, int flags)
{
	char buf[PATH_MAX];
	REAL(int, __open_2, (const char *, int));

	return real___open_2(shim_sysfs_path(path, buf, sizeof(buf)), flags);
}

SHIM_EXPORT int __open64_2(const char *path, int flags)
{
	char buf[PATH_MAX];
	REAL(int, __open64_2, (const char *, int));

	return real___open64_2(shim_sysfs_path(path, buf, sizeof(buf)), flags);
}

SHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	REAL(int, openat, (int, const char *, int, ...));

	OPEN_MODE(flags, flags, mode);
	return real_openat(dirfd, shim_sysfs_path(path, buf, sizeof(buf)), flags, mode);
}

SHIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode = 0;
	REAL(int, openat64, (int, const char *, int, ...));

	OPEN_MODE(flags, flags, mode);
	return real_openat64(dirfd, shim_sysfs_path(path, buf, sizeof(buf)), flags, mode);
}

SHIM_EXPORT int access(const char *path, int how)
{
	char buf[PATH_MAX];
	REAL(int, access, (const char *, int));

	return real_access(shim_sysfs_path(path, buf, sizeof(buf)), how);
}

SHIM_EXPORT int faccessat(int dirfd, const char *path, int how, int flags)
{
	char buf[PATH_MAX];
	REAL(int, faccessat, (int, const char *, int, int));

	return real_faccessat(dirfd, shim_sysfs_path(path, buf, sizeof(buf)), how, flags);
}

SHIM_EXPORT int stat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];
	REAL(int, stat, (const char *, struct stat *));

	return real_stat(shim_sysfs_path(path, buf, sizeof(buf)), st);
}

SHIM_EXPORT int stat64(const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];
	REAL(int, stat64, (const char *, struct stat64 *));

	return real_stat64(shim_sysfs_path(path, buf, sizeof(buf)), st);
}

SHIM_EXPORT int lstat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];
	REAL(int, lstat, (const char *, struct stat *));

	return real_lstat(shim_sysfs_path(path, buf, sizeof(buf)), st);
}

SHIM_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	char buf[PATH_MAX];
	REAL(int, lstat64, (const char *, struct stat64 *));

	return real_lstat64(shim_sysfs_path(path, buf, sizeof(buf)), st);
}

SHIM_EXPORT DIR *opendir(const char *path)
{
	char buf[PATH_MAX];
	REAL(DIR *, opendir, (const char *));

	return real_opendir(shim_sysfs_path(path, buf, sizeof(buf)));
}

typedef int (*dirent_filter)(const struct dirent *);
typedef int (*dirent_compar)(const struct dirent **, const struct dirent **);

SHIM_EXPORT int scandir(const char *path, struct dirent ***list, dirent_filter filter,
			dirent_compar compar)
{
	char buf[PATH_MAX];
	REAL(int, scandir, (const char *, struct dirent ***, dirent_filter, dirent_compar));

	return real_scandir(shim_sysfs_path(path, buf, sizeof(buf)), list, filter, compar);
}

typedef int (*dirent64_filter)(const struct dirent64 *);
typedef int (*dirent64_compar)(const struct dirent64 **, const struct dirent64 **);

SHIM_EXPORT int scandir64(const char *path, struct dirent64 ***list, dirent64_filter filter,
			  dirent64_compar compar)
{
	char buf[PATH_MAX];
	REAL(int, scandir64, (const char *, struct dirent64 ***, dirent64_filter, dirent64_compar));

	return real_scandir64(shim_sysfs_path(path, buf, sizeof(buf)), list, filter, compar);
}
