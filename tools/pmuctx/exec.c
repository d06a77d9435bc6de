// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx exec -- CMD...: run CMD with libpmuctx-perf.so preloaded, so that
 * perf_event_open users (perf stat, PAPI) count on pmuctx.  The library is
 * $PMUCTX_PERF_SHIM, else the one beside this executable, else
 * ../lib/pmuctx/ from it (an installed tree).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define SHIM_NAME "libpmuctx-perf.so"

/* @dir/@rel if it is readable; 0 or -1 */
static int try_path(char *path, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(path, len, "%s%s", dir, rel);

	return n < 0 || (size_t)n >= len ? -1 : access(path, R_OK);
}

static int find_shim(char *path, size_t len)
{
	const char *env = getenv("PMUCTX_PERF_SHIM");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env) {
		return try_path(path, len, env, "");
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (!try_path(path, len, exe, "/" SHIM_NAME))
		return 0;
	/* PREFIX/bin/pmuctx: PREFIX/lib/pmuctx/, named without "..". */
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return try_path(path, len, exe, "/lib/pmuctx/" SHIM_NAME);
}

int cmd_exec(struct cli *cli, int argc, char **argv)
{
	char shim[PATH_MAX], *preload;
	const char *old;
	int i = 1;

	(void)cli;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "pmuctx: usage: pmuctx exec -- CMD [ARG...]\n");
		return 2;
	}
	if (find_shim(shim, sizeof(shim))) {
		fprintf(stderr, "pmuctx: %s not found (beside pmuctx, in ../lib/pmuctx/, or $PMUCTX_PERF_SHIM)\n",
			SHIM_NAME);
		return 1;
	}
	/* the shim first: its perf_event_open must win over any other preload's */
	old = getenv("LD_PRELOAD");
	if (asprintf(&preload, "%s%s%s", shim, old && *old ? ":" : "", old ? old : "") < 0 ||
	    setenv("LD_PRELOAD", preload, 1)) {
		perror("pmuctx: LD_PRELOAD");
		return 1;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "pmuctx: %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
