// SPDX-License-Identifier: GPL-2.0
/*
 * perf_event_paranoid as pmuctx's rules set it, for programs that ask the
 * file before they ask the kernel.  PAPI (7.0) reads it with fopen() and
 * disables its perf_event component at level 3, Debian's default, before
 * it opens anything, even as root.  Under the shim its hardware events are
 * pmuctx's, whose rules are perf's level 2 (1 with the module parameter
 * allow_kernel=1; Documentation/security.rst): when the kernel's level is
 * stricter and /dev/pmuctx is usable, fopen() of the file reads that
 * level instead.  Only fopen() and fopen64(), only for reading: perf reads
 * it with open() and copes with any level, and a software event still
 * meets the kernel's own level at perf_event_open().  Other paths go
 * through sysfs.c's redirection (perf's PMU directory), as open()'s do.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

static const char paranoid_path[] = "/proc/sys/kernel/perf_event_paranoid";
static const char allow_kernel_path[] = "/sys/module/pmuctx/parameters/allow_kernel";

typedef FILE *(*fopen_fn)(const char *, const char *);

static int read_first_line(fopen_fn real, const char *path, char *buf, size_t len)
{
	FILE *f = real(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = !!fgets(buf, len, f);
	fclose(f);
	return ok ? 0 : -1;
}

/* The level pmuctx's rules amount to here, or NULL to read the kernel's. */
static FILE *pmuctx_paranoid(fopen_fn real)
{
	static const char level2[] = "2\n", level1[] = "1\n";
	char kernel[32], allow[8];
	const char *ours;

	if (access("/dev/pmuctx", R_OK | W_OK))
		return NULL;
	if (read_first_line(real, paranoid_path, kernel, sizeof(kernel)))
		return NULL;
	ours = !read_first_line(real, allow_kernel_path, allow, sizeof(allow)) &&
	       (allow[0] == 'Y' || allow[0] == '1') ? level1 : level2;
	if (atoi(kernel) <= atoi(ours))
		return NULL;
	/* read-only: fmemopen never writes to the buffer */
	return fmemopen((void *)ours, strlen(ours), "r");
}

static FILE *shim_fopen(fopen_fn *cache, const char *sym, const char *path,
			const char *mode)
{
	fopen_fn real = __atomic_load_n(cache, __ATOMIC_RELAXED);
	char buf[PATH_MAX];
	FILE *f;

	if (!real) {
		real = (fopen_fn)dlsym(RTLD_NEXT, sym);
		__atomic_store_n(cache, real, __ATOMIC_RELAXED);
	}

	if (path && mode && mode[0] == 'r' && !strchr(mode, '+') &&
	    !strcmp(path, paranoid_path)) {
		f = pmuctx_paranoid(real);
		if (f)
			return f;
	}
	return real(shim_sysfs_path(path, buf, sizeof(buf)), mode);
}

static fopen_fn real_fopen, real_fopen64;

SHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return shim_fopen(&real_fopen, "fopen", path, mode);
}

SHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return shim_fopen(&real_fopen64, "fopen64", path, mode);
}
