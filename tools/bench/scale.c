// SPDX-License-Identifier: GPL-2.0
/*
 * ctxsw scale: how fork+exit and open+close scale with the CPUs (issue 26).
 * W workers, each pinned to its own CPU, repeat one operation for a fixed
 * time, for W = 1, 2, 4, ... and the number of online CPUs, with no
 * counters, with pmuctx and with perf_events:
 *
 *   fork   fork + _exit + waitpid, under 8 software counters opened with
 *          inherit by one holder before it forks the workers: every worker
 *          and every child of theirs is in one family (`make -j`'s shape).
 *   open   open + close of one task-clock counter on the worker itself.
 *
 * Every point is printed (ops/s in all, per worker, efficiency against W
 * times the one-worker rate) with its ratio to no counters and to perf.
 * On a machine with few cores the vCPUs share them and the figures show
 * only the mechanism (Documentation/performance.rst).
 *
 * perf's static keys: one perf task-clock event stays open on this process
 * for the whole run, so the keys flip once (under multi-threaded TCG at 16
 * vCPUs, flipping them patched kernel text in a way that wedged guests).
 * Every column pays the same for it: a check in each context switch.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bench.h"

#define SCALE_MAX_WORKERS	256

enum scale_op { OP_FORK, OP_OPEN, NR_OPS };

static const char *const op_names[NR_OPS] = { "fork+exit", "open+close" };
static const char *const api_names[NR_APIS] = { "none", "pmuctx", "perf" };

/* Shared with the workers: a start and a stop flag, and their counts. */
struct scale_board {
	volatile int go, stop;
	volatile unsigned long done[SCALE_MAX_WORKERS];
	volatile int ready[SCALE_MAX_WORKERS];
};

static struct scale_board *board;

static const struct cset eight_sw = { "8sw", 0, 8, 0 };

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static unsigned long one_op(enum scale_op op, enum api api)
{
	pid_t pid;
	int fd;

	if (op == OP_FORK) {
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 0;
		return 1;
	}
	fd = open_one(api, 0, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static void worker(int i, int cpu, enum scale_op op, enum api api)
{
	unsigned long n = 0;

	pin(cpu);
	board->ready[i] = 1;
	while (!board->go)
		sched_yield();
	while (!board->stop) {
		if (!one_op(op, api)) {
			n = 0;
			break;
		}
		n++;
	}
	board->done[i] = n;
	_exit(n ? 0 : 1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * One point, run by a holder process (so that its counters close when it
 * exits): ops per second of @nw workers on CPUs cpus[0..nw-1], or -1.
 */
static double run_point(enum scale_op op, enum api api, const int *cpus,
			int nw, int seconds)
{
	pid_t holder, pids[SCALE_MAX_WORKERS];
	unsigned long total = 0;
	int i, status, ok = 1;

	memset((void *)board, 0, sizeof(*board));
	holder = fork();
	if (holder < 0)
		return -1;
	if (!holder) {
		if (op == OP_FORK && api != API_NONE && open_set(api, &eight_sw, 1) < 0)
			_exit(2);
		for (i = 0; i < nw; i++) {
			pids[i] = fork();
			if (pids[i] < 0)
				_exit(3);
			if (!pids[i])
				worker(i, cpus[i], op, api);
		}
		for (i = 0; i < nw; i++)
			while (!board->ready[i])
				sleep_ms(1);
		board->go = 1;
		sleep_ms(seconds * 1000L);
		board->stop = 1;
		for (i = 0; i < nw; i++)
			if (waitpid(pids[i], &status, 0) != pids[i] ||
			    !WIFEXITED(status) || WEXITSTATUS(status))
				ok = 0;
		_exit(ok ? 0 : 4);
	}
	if (waitpid(holder, &status, 0) != holder || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	for (i = 0; i < nw; i++)
		total += board->done[i];
	return (double)total / seconds;
}

/* @a / @b when both were measured, else -1. */
static double ratio(double a, double b)
{
	return a > 0 && b > 0 ? a / b : -1;
}

/* A ratio for the table ("-": not measured); a few at once per printf. */
static const char *fmt(double v)
{
	static char bufs[8][16];
	static int next;
	char *b = bufs[next++ % 8];

	if (v < 0)
		return "-";
	snprintf(b, sizeof(bufs[0]), "%.2f", v);
	return b;
}

int scale_main(int argc, char **argv)
{
	static double rate[NR_OPS][NR_APIS][SCALE_MAX_WORKERS + 1];
	int cpus[SCALE_MAX_WORKERS], ncpu = 0, seconds = 3, opt, i, w;
	int points[32], npoints = 0, holder_fd;
	cpu_set_t online;
	enum scale_op op;
	enum api api;

	while ((opt = getopt(argc, argv, "s:")) != -1) {
		switch (opt) {
		case 's':
			seconds = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: ctxsw scale [-s seconds]\n");
			return 2;
		}
	}
	if (seconds < 1)
		seconds = 1;
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (board == MAP_FAILED)
		return 1;
	if (sched_getaffinity(0, sizeof(online), &online))
		return 1;
	for (i = 0; i < CPU_SETSIZE && ncpu < SCALE_MAX_WORKERS; i++)
		if (CPU_ISSET(i, &online))
			cpus[ncpu++] = i;
	for (w = 1; w < ncpu; w *= 2)
		points[npoints++] = w;
	points[npoints++] = ncpu;

	/* perf's static keys on for the whole run (see above). */
	holder_fd = api_available(API_PERF, 0) ? open_one(API_PERF, 0, 0) : -1;
	printf("scale: %d CPUs, %d s a point, perf %s\n", ncpu, seconds,
	       holder_fd >= 0 ? "available (its keys held on)" : "unavailable");
	for (op = 0; op < NR_OPS; op++) {
		for (api = 0; api < NR_APIS; api++) {
			/* open+close has nothing to do without counters. */
			if ((api == API_NONE && op == OP_OPEN) ||
			    (api != API_NONE && !api_available(api, 0))) {
				for (i = 0; i < npoints; i++)
					rate[op][api][points[i]] = -1;
				continue;
			}
			for (i = 0; i < npoints; i++) {
				w = points[i];
				rate[op][api][w] = run_point(op, api, cpus, w, seconds);
				printf("scale %-10s %-6s W=%-3d %12.0f ops/s  %10.0f per worker\n",
				       op_names[op], api_names[api], w,
				       rate[op][api][w], rate[op][api][w] / w);
				fflush(stdout);
			}
		}
	}
	printf("\nscale: efficiency (W workers / W x one) and ratios at each W\n");
	for (op = 0; op < NR_OPS; op++) {
		printf("%s\n  %-4s %-10s %-10s %-10s %-11s %-11s %s\n", op_names[op],
		       "W", "eff none", "eff pmuctx", "eff perf",
		       "pmuctx/none", "perf/none", "pmuctx/perf");
		for (i = 0; i < npoints; i++) {
			double e[NR_APIS];

			w = points[i];
			for (api = 0; api < NR_APIS; api++)
				e[api] = ratio(rate[op][api][w], w * rate[op][api][1]);
			printf("  %-4d %-10s %-10s %-10s %-11s %-11s %s\n", w,
			       fmt(e[API_NONE]), fmt(e[API_PMUCTX]), fmt(e[API_PERF]),
			       fmt(ratio(rate[op][API_PMUCTX][w], rate[op][API_NONE][w])),
			       fmt(ratio(rate[op][API_PERF][w], rate[op][API_NONE][w])),
			       fmt(ratio(rate[op][API_PMUCTX][w], rate[op][API_PERF][w])));
		}
	}
	if (holder_fd >= 0)
		close(holder_fd);
	return 0;
}
