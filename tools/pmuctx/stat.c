// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat: run a command with inherited counters on it and everything
 * it starts, then print the totals and what the scheduler did with the
 * contexts (full loads versus equivalent swaps).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cli.h"
#include "pmuctx_abi.h"

#define STAT_MAX_EVENTS	32

static const char *const stat_default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
};

struct stat_event {
	const char *name;
	struct pmuctx_event_info info;
	int fd;
	struct pmuctx_value v;
};

static int stat_usage(void)
{
	fprintf(stderr, "usage: pmuctx stat [-e EVENT[,EVENT]...]... [--no-inherit] [--] COMMAND [ARGS]\n");
	return 2;
}

static int stat_add_events(struct stat_event *evs, int *n, char *list)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == STAT_MAX_EVENTS) {
			fprintf(stderr, "pmuctx: at most %d events\n", STAT_MAX_EVENTS);
			return -1;
		}
		evs[(*n)++].name = tok;
	}
	return 0;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void stat_print(struct stat_event *evs, int n, double elapsed)
{
	int i;

	for (i = 0; i < n; i++) {
		const struct stat_event *e = &evs[i];

		if (e->info.enc.type == PMUCTX_TYPE_SOFTWARE &&
		    e->info.enc.config == PMUCTX_SW_TASK_CLOCK)
			printf("%18.2f msec %-24s # %6.3f CPUs utilized\n",
			       e->v.value / 1e6, e->name,
			       elapsed > 0 ? e->v.value / 1e9 / elapsed : 0.0);
		else
			printf("%18llu      %-24s\n",
			       (unsigned long long)e->v.value, e->name);
	}
}

int cmd_stat(struct cli *cli, int argc, char **argv)
{
	struct stat_event evs[STAT_MAX_EVENTS];
	struct pmuctx_evdb *evdb;
	struct pmuctx_ctx_stats st;
	int n = 0, i, argi = 1, inherit = 1, go[2], status, ret = 0;
	char err[512], dflt[128];
	double t0, t1;
	pid_t pid;

	memset(evs, 0, sizeof(evs));
	for (; argi < argc; argi++) {
		if (!strcmp(argv[argi], "--")) {
			argi++;
			break;
		} else if (!strcmp(argv[argi], "-e") && argi + 1 < argc) {
			if (stat_add_events(evs, &n, argv[++argi]))
				return 2;
		} else if (!strcmp(argv[argi], "--no-inherit")) {
			inherit = 0;
		} else if (argv[argi][0] == '-') {
			return stat_usage();
		} else {
			break;
		}
	}
	if (argi >= argc)
		return stat_usage();
	if (!n) {
		for (i = 0; i < (int)(sizeof(stat_default_events) / sizeof(stat_default_events[0])); i++)
			evs[n++].name = stat_default_events[i];
	}
	evdb = cli_evdb(cli);
	if (!evdb)
		return 1;
	for (i = 0; i < n; i++) {
		evs[i].fd = -1;
		if (pmuctx_event_encode(evdb, evs[i].name, &evs[i].info, err, sizeof(err))) {
			fprintf(stderr, "pmuctx: event '%s': %s\n", evs[i].name, err);
			return 2;
		}
	}

	if (pipe(go))
		return 1;
	pid = fork();
	if (pid < 0) {
		perror("pmuctx: fork");
		return 1;
	}
	if (!pid) {
		char c;

		close(go[1]);
		/* Counters attach while we wait here; they start at exec. */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[argi], argv + argi);
		fprintf(stderr, "pmuctx: cannot run %s: %s\n", argv[argi], strerror(errno));
		_exit(127);
	}
	close(go[0]);

	for (i = 0; i < n; i++) {
		struct pmuctx_attr attr = {
			.size = sizeof(attr),
			.type = evs[i].info.enc.type,
			.config = evs[i].info.enc.config,
			.read_format = PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
				       PMUCTX_FORMAT_TOTAL_TIME_RUNNING,
			.flags = PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_ENABLE_ON_EXEC |
				 (inherit ? PMUCTX_ATTR_INHERIT : 0),
		};

		if (evs[i].info.enc.exclude_user)
			attr.flags |= PMUCTX_ATTR_EXCLUDE_USER;
		if (evs[i].info.enc.exclude_kernel)
			attr.flags |= PMUCTX_ATTR_EXCLUDE_KERNEL;
		evs[i].fd = pmuctx_counter_open(&attr, pid, -1, PMUCTX_OPEN_CLOEXEC);
		if (evs[i].fd < 0) {
			fprintf(stderr, "pmuctx: cannot count '%s' (%s): %s\n", evs[i].name,
				evs[i].info.fstr, pmuctx_open_strerror(errno));
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return 1;
		}
	}

	t0 = now_seconds();
	if (write(go[1], "g", 1) != 1)
		return 1;
	close(go[1]);
	/* The counted command gets ^C; we wait for it and report. */
	signal(SIGINT, SIG_IGN);
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	t1 = now_seconds();

	for (i = 0; i < n; i++) {
		if (pmuctx_counter_read(evs[i].fd, PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
					PMUCTX_FORMAT_TOTAL_TIME_RUNNING, &evs[i].v)) {
			fprintf(stderr, "pmuctx: read '%s': %s\n", evs[i].name, strerror(errno));
			ret = 1;
		}
	}

	fprintf(stdout, "\n Performance counter stats for '");
	for (i = argi; i < argc; i++)
		fprintf(stdout, "%s%s", argv[i], i + 1 < argc ? " " : "");
	fprintf(stdout, "'%s:\n\n", inherit ? " (inherited)" : "");
	stat_print(evs, n, t1 - t0);
	if (!pmuctx_counter_stats(evs[0].fd, &st)) {
		snprintf(dflt, sizeof(dflt), "%llu tasks",
			 (unsigned long long)(st.live_tasks + st.exited_tasks));
		printf("\n %18s counted; contexts: %llu full loads, %llu equivalent swaps\n",
		       dflt, (unsigned long long)st.tree_loads,
		       (unsigned long long)st.tree_swaps);
		if (st.inherit_failed)
			printf(" %llu clones could not be allocated: their counts are missing\n",
			       (unsigned long long)st.inherit_failed);
	}
	printf("\n %18.6f seconds time elapsed\n\n", t1 - t0);

	for (i = 0; i < n; i++)
		close(evs[i].fd);
	if (ret)
		return ret;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
