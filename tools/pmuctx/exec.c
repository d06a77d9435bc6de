// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx exec -- CMD...: run CMD with libpmuctx-perf.so preloaded, so that
 * perf_event_open users (perf stat, PAPI) count on pmuctx.  The library is
 * $PMUCTX_PERF_SHIM, else the one beside this executable, else
 * ../lib/pmuctx/ from it (an installed tree).  When pmuctx's backend owns
 * the PMU, perf's sysfs directory for it is missing: CMD then runs as a
 * child, with a private copy of that directory (exec_sysfs.c) that lives
 * as long as CMD; otherwise pmuctx becomes CMD.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "exec_sysfs.h"

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

/*
 * CMD as a child, and the directory removed when it ends.  Like a shell
 * waiting for a command, pmuctx ignores the terminal's SIGINT and SIGQUIT
 * (CMD gets them), and ends as CMD did: its status, or its signal.
 */
static int run_child(const char *sysfs, char **cmd)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	int status, err;
	pid_t pid, w;

	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	pid = fork();
	if (pid < 0) {
		perror("pmuctx: fork");
		exec_sysfs_remove(sysfs);
		return 1;
	}
	if (!pid) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execvp(cmd[0], cmd);
		err = errno;
		fprintf(stderr, "pmuctx: %s: %s\n", cmd[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	exec_sysfs_remove(sysfs);
	if (w < 0) {
		perror("pmuctx: waitpid");
		return 1;
	}
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		raise(WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

int cmd_exec(struct cli *cli, int argc, char **argv)
{
	char shim[PATH_MAX], *preload, sysfs[PATH_MAX], devices[PATH_MAX];
	const char *old;
	size_t n;
	int i = 1;

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
	switch (exec_sysfs_build(cli, sysfs, sizeof(sysfs) - sizeof("/devices"))) {
	case 1:
		strcat(strcpy(devices, sysfs), "/devices");
		if (setenv("PMUCTX_PERF_SYSFS", devices, 1)) {
			perror("pmuctx: PMUCTX_PERF_SYSFS");
			exec_sysfs_remove(sysfs);
			return 1;
		}
		return run_child(sysfs, argv + i);
	case -1:
		fprintf(stderr, "pmuctx: perf's PMU directory could not be made (%s): cpu/.../ events will not parse\n",
			strerror(errno));
		break;
	}
	/*
	 * Set all the same, to dashes as long as a copy's path would be: the
	 * counted program's environment, and so where its stack and strings
	 * lie, is the same with or without a copy, and its start-up counts
	 * the same (x86's differed by 84 instructions for 32 bytes of
	 * environment; perf_parity.sh compares boots with and without).
	 * The library takes only an absolute path.
	 */
	n = exec_sysfs_path_len();
	if (n >= sizeof(devices))
		n = sizeof(devices) - 1;
	memset(devices, '-', n);
	devices[n] = 0;
	if (setenv("PMUCTX_PERF_SYSFS", devices, 1)) {
		perror("pmuctx: PMUCTX_PERF_SYSFS");
		return 1;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "pmuctx: %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
