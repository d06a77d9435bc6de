// SPDX-License-Identifier: GPL-2.0
/*
 * Context-switch overhead, side by side in one boot: a parent and a child
 * ping-pong through pipes on one CPU, with no counters, with pmuctx
 * inherited counters (equivalent contexts: swaps), with pmuctx counters
 * the child modified (no swaps: full loads), and with the kernel's own
 * perf_events inherited counters.  Same three software events everywhere.
 * Prints ns per switch (median of interleaved runs) and the ratios.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pmuctx_abi.h"

enum mode { NONE, PMUCTX_SWAP, PMUCTX_LOAD, PERF, HW_SWAP, HW_LOAD, NR_MODES };
static const char *const mode_name[NR_MODES] = {
	"no counters", "pmuctx (equivalent: swap)",
	"pmuctx (child modified: load)", "perf_events (inherit)",
	"pmuctx PMU (equivalent: swap)", "pmuctx PMU (modified: load)",
};
static const uint64_t sw_events[3] = {
	PMUCTX_SW_TASK_CLOCK, PMUCTX_SW_CONTEXT_SWITCHES, PMUCTX_SW_PAGE_FAULTS,
};
static const uint64_t perf_events[3] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_PAGE_FAULTS,
};

static int open_pmuctx(void)
{
	int i, fd = -1;

	for (i = 0; i < 3; i++) {
		struct pmuctx_attr a = {
			.size = sizeof(a), .type = PMUCTX_TYPE_SOFTWARE,
			.config = sw_events[i], .flags = PMUCTX_ATTR_INHERIT,
		};

		fd = pmuctx_counter_open(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
		if (fd < 0)
			return -1;
	}
	return 0;
}

/* Hardware: the cycle counter and as many event counters as the PMU has. */
static int open_pmuctx_hw(void)
{
	struct pmuctx_info info;
	unsigned int i;

	if (pmuctx_get_info(&info) || !(info.features & PMUCTX_FEAT_HARDWARE))
		return -1;
	for (i = 0; i <= info.nr_general; i++) {
		struct pmuctx_attr a = {
			.size = sizeof(a), .type = PMUCTX_TYPE_RAW,
			.config = i ? 0x00 /* SW_INCR */ : 0x11 /* CPU_CYCLES */,
			.flags = PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_EXCLUDE_KERNEL,
		};

		if (pmuctx_counter_open(&a, 0, -1, PMUCTX_OPEN_CLOEXEC) < 0)
			return -1;
	}
	return 0;
}

static int open_perf(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		struct perf_event_attr a = {
			.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
			.config = perf_events[i], .inherit = 1,
		};

		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) < 0)
			return -1;
	}
	return 0;
}

static void xfer(int rfd, int wfd, int first)
{
	char c = 0;

	if (first && write(wfd, &c, 1) != 1)
		exit(3);
	if (read(rfd, &c, 1) != 1)
		exit(3);
	if (!first && write(wfd, &c, 1) != 1)
		exit(3);
}

/* One run in a fresh process, so counters never outlive it; ns per switch. */
static void run(enum mode m, int rounds)
{
	int a[2], b[2], i, status;
	double ns;
	pid_t pid = fork();

	if (pid < 0)
		exit(1);
	if (pid) {
		waitpid(pid, &status, 0);
		return;
	}
	if (pipe(a) || pipe(b))
		exit(1);
	if ((m == PMUCTX_SWAP || m == PMUCTX_LOAD) && open_pmuctx())
		exit(2);
	if (m == PERF && open_perf())
		exit(2);
	if ((m == HW_SWAP || m == HW_LOAD) && open_pmuctx_hw())
		exit(2);
	pid = fork();
	if (!pid) {
		if (m == PMUCTX_LOAD || m == HW_LOAD) {
			struct pmuctx_attr x = { .size = sizeof(x),
				.type = PMUCTX_TYPE_SOFTWARE,
				.config = PMUCTX_SW_CPU_MIGRATIONS };

			if (pmuctx_counter_open(&x, 0, -1, 0) < 0)
				exit(2);
		}
		for (i = 0; i < rounds; i++)
			xfer(a[0], b[1], 0);
		exit(0);
	}
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < rounds; i++)
			xfer(b[0], a[1], 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
		     (2.0 * rounds);
	}
	waitpid(pid, &status, 0);
	printf("%d %.1f\n", m, ns);
	fflush(stdout);
	exit(0);
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	double t[NR_MODES][16], med[NR_MODES];
	int pfd[2], r, m, got, n[NR_MODES] = { 0 };
	cpu_set_t one;
	char line[64];
	FILE *in;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return 1;
	if (reps > 16)
		reps = 16;
	if (pipe(pfd))
		return 1;
	/* Runs print "mode ns" into a pipe; interleaved so drift hits all modes. */
	if (dup2(pfd[1], STDOUT_FILENO) < 0)
		return 1;
	for (r = 0; r < reps; r++)
		for (m = 0; m < NR_MODES; m++)
			run(m, rounds);
	close(pfd[1]);
	fclose(stdout);
	in = fdopen(pfd[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		double ns;

		if (sscanf(line, "%d %lf", &m, &ns) == 2 && m >= 0 && m < NR_MODES)
			t[m][n[m]++] = ns;
	}
	for (m = 0; m < NR_MODES; m++) {
		if (!n[m]) {
			fprintf(stderr, "ctxsw: mode '%s' did not run (%s)\n",
				mode_name[m], m == PERF ? "perf_event_open refused" :
				m >= HW_SWAP ? "no hardware PMU" : "pmuctx not loaded?");
			med[m] = -1;
			continue;
		}
		qsort(t[m], n[m], sizeof(double), cmp);
		med[m] = t[m][n[m] / 2];
	}
	fprintf(stderr, "context switches between a parent and its child on one CPU, %d round trips, median of %d runs\n",
		rounds, reps);
	for (m = 0; m < NR_MODES; m++)
		if (med[m] > 0)
			fprintf(stderr, "  %-32s %8.0f ns/switch  (+%.0f ns over none)\n",
				mode_name[m], med[m], med[m] - med[NONE]);
	if (med[HW_SWAP] > 0 && med[HW_LOAD] > 0)
		fprintf(stderr, "  ratio overhead PMU load / PMU swap:            %.3f\n",
			(med[HW_LOAD] - med[NONE]) / (med[HW_SWAP] - med[NONE]));
	got = med[PERF] > 0 && med[PMUCTX_SWAP] > 0;
	if (got) {
		double po = med[PERF] - med[NONE], so = med[PMUCTX_SWAP] - med[NONE];
		double lo = med[PMUCTX_LOAD] - med[NONE];

		fprintf(stderr, "  ratio switch time pmuctx-swap / perf_events:   %.3f\n",
			med[PMUCTX_SWAP] / med[PERF]);
		fprintf(stderr, "  ratio overhead pmuctx-swap / perf_events:      %.3f\n",
			po > 0 ? so / po : 0.0);
		fprintf(stderr, "  ratio overhead pmuctx-load / pmuctx-swap:      %.3f\n",
			so > 0 ? lo / so : 0.0);
	}
	return got || med[HW_SWAP] > 0 ? 0 : 1;
}
