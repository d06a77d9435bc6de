// SPDX-License-Identifier: GPL-2.0
/*
 * The accuracy half of make bench's mux block (issue 25): the same
 * workload families as mux_test (mux_families.h: shell bursts, make -j
 * like trees, phased programs of 1 to 20 ms) counted by whichever of
 * pmuctx and perf owns the PMU in this boot, fourteen inherited counters
 * on 6 + 1, against the seven events together (they fit: exact).  Every
 * counter of every run is printed; scripts/bench's report puts the arm64
 * boot (pmuctx) and the arm64-perf boot (perf) side by side: each
 * family's median error, and how often pmuctx's 95% interval covered the
 * truth.  Sizes are instructions; nothing is timed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pmuctx_abi.h"
#include "bench.h"
#include "mux_families.h"

#define ACC_COUNTERS	(2 * MUXF_NR_EVENTS)
#define ACC_CONFIGS	(MUXF_NR_FORK + MUXF_MAX_PHASE)
#define ACC_MAX_ROWS	(ACC_CONFIGS * 8 * ACC_COUNTERS)

struct acc_row {
	enum api api;
	char config[24];
	const char *family, *event;
	int rep, judged, state;		/* state: enum pmuctx_estimate_state; -1 for perf */
	double truth, scaled, running, half;	/* running: fraction; half: -1 unknown */
};

static struct acc_row rows[ACC_MAX_ROWS];
static int nr_rows;
static const char *acc_error;

#define PMUCTX_ACC_FMT	(PMUCTX_FORMAT_TOTAL_TIME_ENABLED | \
			 PMUCTX_FORMAT_TOTAL_TIME_RUNNING | PMUCTX_FORMAT_SLICES)

static int open_event(enum api api, const struct mux_event *e, pid_t pid)
{
	if (api == API_PMUCTX) {
		struct pmuctx_attr a = { .size = sizeof(a) };

		a.type = PMUCTX_TYPE_RAW;
		a.config = e->code;
		a.flags = PMUCTX_ATTR_INHERIT |
			  (e->exclude_user ? PMUCTX_ATTR_EXCLUDE_USER : 0) |
			  (e->exclude_kernel ? PMUCTX_ATTR_EXCLUDE_KERNEL : 0);
		a.read_format = PMUCTX_ACC_FMT;
		return pmuctx_counter_open(&a, pid, -1, PMUCTX_OPEN_CLOEXEC);
	} else {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_RAW;
		a.config = e->code;
		a.exclude_user = e->exclude_user;
		a.exclude_kernel = e->exclude_kernel;
		a.exclude_hv = 1;
		a.inherit = 1;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		return syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
}

/* The tree of a child running @f, counted by @n events (cyclically). */
static int count_family(enum api api, const struct mux_family *f, int n,
			struct pmuctx_value *v)
{
	int go[2], fd[ACC_COUNTERS], i, status, ret = 0;
	char c = 'g';
	pid_t pid;

	if (pipe(go))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		close(go[0]);
		mux_family_run(f);
	}
	close(go[0]);
	for (i = 0; i < n; i++) {
		fd[i] = open_event(api, &mux_events[i % MUXF_NR_EVENTS], pid);
		if (fd[i] < 0) {
			acc_error = "open";
			ret = -1;
			n = i;
			break;
		}
	}
	if (write(go[1], &c, 1) != 1)
		ret = -1;
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		ret = -1;
	for (i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		if (api == API_PMUCTX) {
			if (pmuctx_counter_read(fd[i], PMUCTX_ACC_FMT, &v[i]))
				ret = -1;
		} else {
			uint64_t w[3];

			if (read(fd[i], w, sizeof(w)) != sizeof(w))
				ret = -1;
			v[i].value = w[0];
			v[i].time_enabled = w[1];
			v[i].time_running = w[2];
		}
		close(fd[i]);
	}
	return ret;
}

static int judge(enum api api, const struct mux_family *f, int rep)
{
	struct pmuctx_value truth[MUXF_NR_EVENTS], v[ACC_COUNTERS];
	char name[24];
	int i;

	mux_family_name(f, name, sizeof(name));
	if (count_family(api, f, MUXF_NR_EVENTS, truth) ||
	    count_family(api, f, ACC_COUNTERS, v))
		return -1;
	for (i = 0; i < ACC_COUNTERS && nr_rows < ACC_MAX_ROWS; i++) {
		const struct mux_event *e = &mux_events[i % MUXF_NR_EVENTS];
		const struct pmuctx_value *t = &truth[i % MUXF_NR_EVENTS];
		struct acc_row *r = &rows[nr_rows++];
		struct pmuctx_estimate est;

		r->api = api;
		snprintf(r->config, sizeof(r->config), "%s", name);
		r->family = f->family;
		r->event = e->name;
		r->rep = rep;
		r->judged = mux_event_judged(e);
		/* the truth ran all its time (else it is no truth: say so) */
		r->truth = t->time_running == t->time_enabled ? (double)t->value : -1;
		r->running = v[i].time_enabled ? (double)v[i].time_running / v[i].time_enabled : 0;
		r->scaled = v[i].time_running ?
			    (double)v[i].value * v[i].time_enabled / v[i].time_running : 0;
		r->half = -1;
		r->state = -1;
		if (api == API_PMUCTX) {
			r->state = pmuctx_estimate(&v[i], &est);
			if (r->state == PMUCTX_EST_ESTIMATED)
				r->half = est.ci95;
			else if (r->state == PMUCTX_EST_EXACT)
				r->half = 0;
		}
	}
	return 0;
}

int run_accuracy(enum api api, int reps)
{
	struct mux_family ph = { MUXF_PHASED, "phased", 0, 0 };
	int rep, f;

	if (mux_family_prepare())
		return -1;
	for (rep = 1; rep <= reps; rep++) {
		for (f = 0; f < MUXF_NR_FORK; f++)
			if (judge(api, &mux_fork_families[f], rep))
				return -1;
		for (ph.a = 1; ph.a <= MUXF_MAX_PHASE; ph.a++)
			if (judge(api, &ph, rep))
				return -1;
	}
	return 0;
}

static const char *const api_names[NR_APIS] = { "none", "pmuctx", "perf" };

void print_accuracy(FILE *o)
{
	const char *fams[] = { "burst", "make", "phased" };
	int i, k;

	if (!nr_rows)
		return;
	fprintf(o, "\nmultiplexing accuracy (issue 25): 14 inherited counters on 6 + 1, truth = the 7 events together\n");
	fprintf(o, "  %-6s %-13s %3s %-9s %14s %14s %9s %8s %10s %s\n", "api", "config", "rep",
		"event", "truth", "scaled", "error", "running", "95% half", "");
	for (i = 0; i < nr_rows; i++) {
		const struct acc_row *r = &rows[i];
		double err = r->truth > 0 ? 100 * (r->scaled - r->truth) / r->truth : 0;

		fprintf(o, "  %-6s %-13s %3d %-9s %14.0f %14.0f %+8.2f%% %7.1f%% ", api_names[r->api],
			r->config, r->rep, r->event, r->truth, r->scaled, err, 100 * r->running);
		if (r->api != API_PMUCTX)
			fprintf(o, "%10s", "--");
		else if (r->half < 0)
			fprintf(o, "%10s", "?");
		else
			fprintf(o, "%9.2f%%", r->scaled > 0 ? 100 * r->half / r->scaled : 0);
		fprintf(o, " %s\n", !r->judged ? "" : r->api != API_PMUCTX ? "judged" :
			r->half < 0 ? "judged unknown" :
			fabs(r->scaled - r->truth) <= r->half ? "judged covered" : "judged NOT covered");
	}
	for (k = 0; k < 3; k++) {
		int judged = 0, covered = 0, unknown = 0;
		double e[ACC_MAX_ROWS];
		int n = 0, a, b;

		for (i = 0; i < nr_rows; i++) {
			const struct acc_row *r = &rows[i];

			if (!r->judged || strcmp(r->family, fams[k]) || r->truth <= 0)
				continue;
			e[n++] = fabs(r->scaled - r->truth) / r->truth;
			judged++;
			covered += r->half >= 0 && fabs(r->scaled - r->truth) <= r->half;
			unknown += r->half < 0;
		}
		if (!n)
			continue;
		for (a = 1; a < n; a++)
			for (b = a; b > 0 && e[b - 1] > e[b]; b--) {
				double t = e[b];

				e[b] = e[b - 1];
				e[b - 1] = t;
			}
		fprintf(o, "  %s: %s median error %.2f%% over %d judged counters",
			fams[k], api_names[rows[0].api],
			100 * (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2), n);
		if (rows[0].api == API_PMUCTX)
			fprintf(o, "; 95%% intervals covered %d, unknown %d (%.1f%% honest)",
				covered, unknown, 100.0 * (covered + unknown) / judged);
		fprintf(o, "\n");
	}
}

void json_accuracy(FILE *o)
{
	int i;

	fprintf(o, ",\n\"mux_accuracy\": [");
	for (i = 0; i < nr_rows; i++) {
		const struct acc_row *r = &rows[i];

		fprintf(o, "%s\n{\"api\": \"%s\", \"family\": \"%s\", \"config\": \"%s\", \"rep\": %d, \"event\": \"%s\", \"judged\": %s, \"truth\": %.0f, \"scaled\": %.1f, \"running\": %.6f, \"half\": ",
			i ? "," : "", api_names[r->api], r->family, r->config, r->rep, r->event,
			r->judged ? "true" : "false", r->truth, r->scaled, r->running);
		if (r->half < 0)
			fprintf(o, "null}");
		else
			fprintf(o, "%.1f}", r->half);
	}
	fprintf(o, "]");
	if (acc_error)
		fprintf(o, ",\n\"mux_accuracy_error\": \"%s\"", acc_error);
}
