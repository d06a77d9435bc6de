// SPDX-License-Identifier: GPL-2.0
/*
 * ctxsw: what pmuctx costs, against perf_events and against no counters.
 *
 *   ctxsw [-r ROUNDTRIPS] [-n REPS] [-s SETTLE_MS] [-m CHILDREN] [-c CPU]
 *         [-l MINSNS] [-A REPS] [-t TAG] [-j FILE] [-q]
 *
 * Every case runs in a fresh process pinned to one CPU, SCHED_BATCH; REPS
 * rounds each run every case once (interleaved), pmuctx and no-counter
 * cases first, perf_events cases last, with a settle pause before any case
 * that follows a perf_events one (perf keeps its scheduler hooks switched
 * on for about a second after its last event goes).  Times come from
 * CLOCK_MONOTONIC: ns on a real machine, instructions in a VM under
 * "-icount shift=0".  Cases whose counters cannot be opened here are
 * reported as unavailable.  The multiplexing cases run a user loop of
 * MINSNS million instructions (-l, default 200) with 7 PMU counters (all
 * on the PMU) and with 14 (rotating): their difference over the rotations
 * is what one rotation costs.  Then (arm64) the accuracy of multiplexed
 * counts on the workload families of issue 25 (accuracy.c), -A REPS times
 * each (default 3, 0: none).  -j writes the results as JSON; they are also
 * printed between BENCH-JSON-BEGIN and BENCH-JSON-END (one line each, with
 * a "BENCH-JSON: " prefix) for scripts/bench to pick out of a VM console.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "bench.h"

#define MAX_REPS 32
#define MAX_CASES 160

enum kind { K_PINGPONG, K_RING, K_FORK, K_READ, K_MUX };
static const char *const kind_name[] = { "pingpong", "ring", "fork", "read", "mux" };
static const char *const api_name[NR_APIS] = { "none", "pmuctx", "perf" };
static const char *const shape_name[NR_SHAPES] = {
	"swap", "load", "modified", "mapped", "stat",
};
static const char *const shape_label[NR_SHAPES] = {
	"inherited (swap)", "separate (load)", "child +1 (load)", "inherited, mapped",
	"inherited, per-task",
};

/* 14pmu: twice what the arm64 PMU holds (6 + the cycle counter), so it rotates. */
static const struct cset sets[] = {
	{ "1sw", 0, 1, 0 }, { "3sw", 0, 3, 0 }, { "8sw", 0, 8, 0 },
	{ "2pmu", 2, 0, 0 }, { "7pmu", 7, 0, 0 }, { "4pmu+4sw", 4, 4, 0 },
	{ "14pmu", 14, 0, (1U << SHAPE_SWAP) | (1U << SHAPE_LOAD) },
};
#define NR_SETS (int)(sizeof(sets) / sizeof(sets[0]))
static const struct cset *const set_3sw = &sets[1], *const set_8sw = &sets[2];
static const struct cset *const set_7pmu = &sets[4], *const set_14pmu = &sets[6];
static const struct cset set_none = { "none", 0, 0, 0 };
static const int ring_sizes[] = { 2, 8, 32 };

struct bcase {
	char id[64], label[64];
	enum kind kind;
	enum api api;
	const struct cset *set;
	enum shape shape;
	int nfam, ntasks, pmu, self;
	double v[MAX_REPS];
	double rot[MAX_REPS], irq[MAX_REPS], sw[MAX_REPS];	/* K_MUX: rotations, irqs, switches */
	int n, err;
	double min, med, max;
};

static struct bcase cases[MAX_CASES];
static int nr_cases;
static int rounds = 2000, reps = 7, settle_ms = 1300, mem_children = 200;
static int read_iters = 5000, fork_iters = 200, quiet;
static unsigned long mux_insns = 200000000;
static double last_perf_end;
static int acc_reps = 3;

static struct bcase *add_case(enum kind k, enum api api, const struct cset *s)
{
	struct bcase *c = &cases[nr_cases++];

	memset(c, 0, sizeof(*c));
	c->kind = k;
	c->api = api;
	c->set = s;
	return c;
}

static void build_cases(void)
{
	int have[NR_APIS][2], a, i, sh, n, f;
	struct bcase *c;

	for (a = 0; a < NR_APIS; a++)
		for (i = 0; i < 2; i++)
			have[a][i] = api_available(a, i);
	c = add_case(K_PINGPONG, API_NONE, &set_none);
	snprintf(c->id, sizeof(c->id), "pingpong/none");
	snprintf(c->label, sizeof(c->label), "no counters");
	for (i = 0; i < NR_SETS; i++)
		for (a = API_PMUCTX; a < NR_APIS; a++) {
			if (!have[a][sets[i].npmu > 0])
				continue;
			for (sh = 0; sh < NR_SHAPES; sh++) {
				if (sh == SHAPE_MAP && (a != API_PMUCTX || !sets[i].npmu))
					continue;
				if (sets[i].shapes && !(sets[i].shapes & (1U << sh)))
					continue;
				c = add_case(K_PINGPONG, a, &sets[i]);
				c->shape = sh;
				snprintf(c->id, sizeof(c->id), "pingpong/%s/%s/%s",
					 sets[i].name, api_name[a], shape_name[sh]);
				snprintf(c->label, sizeof(c->label), "%s %s %s",
					 api_name[a], sets[i].name, shape_label[sh]);
			}
		}
	for (n = 0; n < 3; n++) {
		c = add_case(K_RING, API_NONE, &set_none);
		c->ntasks = ring_sizes[n];
		c->nfam = 1;
		snprintf(c->id, sizeof(c->id), "ring%d/none", c->ntasks);
		snprintf(c->label, sizeof(c->label), "ring %d, no counters", c->ntasks);
		for (a = API_PMUCTX; a < NR_APIS; a++) {
			if (!have[a][0])
				continue;
			for (f = 1; f <= 2; f++) {
				c = add_case(K_RING, a, set_3sw);
				c->ntasks = ring_sizes[n];
				c->nfam = f;
				snprintf(c->id, sizeof(c->id), "ring%d/3sw/%s/%dfam",
					 c->ntasks, api_name[a], f);
				snprintf(c->label, sizeof(c->label), "ring %d, %s 3sw, %s",
					 c->ntasks, api_name[a],
					 f == 1 ? "1 family (swap)" : "2 families (load)");
			}
		}
	}
	for (a = 0; a < NR_APIS; a++) {
		if (!have[a][0])
			continue;
		c = add_case(K_FORK, a, a ? set_8sw : &set_none);
		snprintf(c->id, sizeof(c->id), "fork/%s/%s", c->set->name, api_name[a]);
		snprintf(c->label, sizeof(c->label), "fork+exit, %s %s",
			 a ? api_name[a] : "no counters", a ? c->set->name : "");
	}
	for (a = API_PMUCTX; a < NR_APIS; a++)
		for (i = 0; i < 3; i++) {	/* sw read, pmu read, pmu self-read */
			int pmu = i > 0, self = i == 2;

			if (!have[a][pmu])
				continue;
			c = add_case(K_READ, a, pmu ? &sets[3] : &sets[0]);
			c->pmu = pmu;
			c->self = self;
			snprintf(c->id, sizeof(c->id), "read/%s/%s/%s", pmu ? "pmu" : "sw",
				 api_name[a], self ? "self" : "read");
			snprintf(c->label, sizeof(c->label), "%s %s, %s", api_name[a],
				 pmu ? "instructions" : "task-clock",
				 self ? (a == API_PERF ? "rdpmc self-read" : "self-read")
				      : "read()");
		}
	if (!have[API_PMUCTX][1] && !have[API_PERF][1])
		return;
	c = add_case(K_MUX, API_NONE, &set_none);
	snprintf(c->id, sizeof(c->id), "mux/none");
	snprintf(c->label, sizeof(c->label), "loop, no counters");
	for (a = API_PMUCTX; a < NR_APIS; a++)
		for (i = 0; i < 2 && have[a][1]; i++) {
			const struct cset *s = i ? set_14pmu : set_7pmu;

			c = add_case(K_MUX, a, s);
			snprintf(c->id, sizeof(c->id), "mux/%s/%s", s->name, api_name[a]);
			snprintf(c->label, sizeof(c->label), "%s %s loop (%s)", api_name[a],
				 s->name, i ? "rotating" : "all on the PMU");
		}
}

/* @extra: K_MUX's rotations, interrupts and switches. */
static double measure_in_child(struct bcase *c, double *extra)
{
	switch (c->kind) {
	case K_PINGPONG:
		return run_pingpong(c->api, c->set, c->shape, rounds);
	case K_RING:
		return run_ring(c->api, c->set, c->nfam, c->ntasks,
				rounds * 2 / c->ntasks);
	case K_FORK:
		return run_fork(c->api, c->set, fork_iters);
	case K_READ:
		return run_read(c->api, c->pmu, c->self, read_iters);
	case K_MUX:
		return run_mux(c->api, c->set, mux_insns, extra);
	}
	return -1;
}

static void sleep_ms(double ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)((ms - (time_t)(ms / 1000) * 1000) * 1e6) };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/*
 * Before each run: 10 ms for deferred work (RCU, exit work) of the last
 * one, and a full settle when perf_events ran recently and this case is
 * not perf's.
 */
static void settle(enum api api)
{
	double since = (now_ns() - last_perf_end) / 1e6;

	if (api != API_PERF && last_perf_end && since < settle_ms)
		sleep_ms(settle_ms - since);
	sleep_ms(10);
}

/*
 * Run @c (or memory mode @mem_mode) in a fresh process: out[0] the value,
 * out[1..3] what else it measured; 0 or -errno.
 */
static int fresh(struct bcase *c, int mem_mode, double out[4])
{
	int p[2], st;
	pid_t pid;

	settle(c->api);
	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		double r[4] = { -1, -1, -1, -1 };

		close(p[0]);
		alarm(1800);
		if (mem_mode < 0)
			r[0] = measure_in_child(c, &r[1]);
		else if (run_memory(c->api, set_8sw, mem_mode, mem_children, &r[0], &r[1]))
			r[0] = -1;
		if (r[0] < 0 && mem_mode < 0)
			r[0] = -(double)(errno ? errno : EIO);
		if (write(p[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	st = read(p[0], out, 4 * sizeof(double)) == 4 * sizeof(double) ? 0 : -EIO;
	close(p[0]);
	waitpid(pid, NULL, 0);
	if (c->api == API_PERF)
		last_perf_end = now_ns();
	if (!st && mem_mode < 0 && out[0] < 0)
		st = (int)out[0];
	if (!st && mem_mode >= 0 && out[0] == -1)
		st = -EIO;
	return st;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double median(const double *v, int n, double *mn, double *mx)
{
	double s[MAX_REPS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	if (mn)
		*mn = s[0];
	if (mx)
		*mx = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * -k a,b: only the cases whose id contains one of the words, and the
 * ping-pong baseline (for quick looks at one path; no memory runs).
 */
static void keep_only(const char *words)
{
	char list[256], *w, *save;
	int i, n = 0, keep;

	for (i = 0; i < nr_cases; i++) {
		keep = !strcmp(cases[i].id, "pingpong/none");
		snprintf(list, sizeof(list), "%s", words);
		for (w = strtok_r(list, ",", &save); w && !keep;
		     w = strtok_r(NULL, ",", &save))
			keep = !!strstr(cases[i].id, w);
		if (keep)
			cases[n++] = cases[i];
	}
	nr_cases = n;
}

static void run_rounds(void)
{
	int r, i, pass;
	double out[4];

	for (r = 0; r < reps; r++) {
		if (!quiet)
			fprintf(stderr, "ctxsw: round %d/%d\n", r + 1, reps);
		/* pmuctx and no counters first, perf_events last. */
		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < nr_cases; i++) {
				struct bcase *c = &cases[i];
				int st;

				if ((c->api == API_PERF) != pass || c->err)
					continue;
				st = fresh(c, -1, out);
				if (st) {
					c->err = -st;
					continue;
				}
				c->rot[c->n] = out[1];
				c->irq[c->n] = out[2];
				c->sw[c->n] = out[3];
				c->v[c->n++] = out[0];
			}
	}
	for (i = 0; i < nr_cases; i++)
		if (cases[i].n)
			cases[i].med = median(cases[i].v, cases[i].n, &cases[i].min,
					      &cases[i].max);
}

/* Memory: per clone and per separate context, 8 SW counters, minus none. */
static struct mem {
	const char *what;
	enum api api;
	int mode, n, err;
	double obj[MAX_REPS], pages[MAX_REPS], obj_med, pages_med;
} mems[] = {
	{ .what = "none", .api = API_NONE, .mode = 0 },
	{ .what = "pmuctx clone", .api = API_PMUCTX, .mode = 1 },
	{ .what = "pmuctx context", .api = API_PMUCTX, .mode = 2 },
	{ .what = "perf clone", .api = API_PERF, .mode = 1 },
	{ .what = "perf context", .api = API_PERF, .mode = 2 },
};
#define NR_MEMS (int)(sizeof(mems) / sizeof(mems[0]))
static int mem_reps = 3;

static void run_mem(void)
{
	struct bcase c;
	double out[4], none_obj[MAX_REPS], none_pages[MAX_REPS];
	int r, i;

	memset(&c, 0, sizeof(c));
	for (i = 1; i < NR_MEMS; i++)
		if (!api_available(mems[i].api, 0))
			mems[i].err = ENODEV;
	for (r = 0; r < mem_reps; r++)
		for (i = 0; i < NR_MEMS; i++) {
			struct mem *m = &mems[i];

			if (m->err)
				continue;
			c.api = m->api;
			if (fresh(&c, m->mode, out)) {
				m->err = EIO;
				continue;
			}
			if (i == 0) {
				none_obj[r] = out[0];
				none_pages[r] = out[1];
			}
			/* Over the no-counter run of the same round. */
			m->obj[m->n] = out[0] - none_obj[r];
			m->pages[m->n++] = out[1] - none_pages[r];
		}
	for (i = 0; i < NR_MEMS; i++)
		if (mems[i].n) {
			mems[i].obj_med = median(mems[i].obj, mems[i].n, NULL, NULL);
			mems[i].pages_med = median(mems[i].pages, mems[i].n, NULL, NULL);
		}
}

static const struct bcase *find(enum kind k, enum api api, const struct bcase *like)
{
	int i;

	for (i = 0; i < nr_cases; i++) {
		const struct bcase *c = &cases[i];

		if (c->kind != k || c->api != api || !c->n)
			continue;
		if (!like)
			return c;
		if (k == K_RING && c->ntasks != like->ntasks)
			continue;
		if (api == API_NONE)
			return c;
		if (c->set == like->set && c->shape == like->shape &&
		    c->nfam == like->nfam && c->ntasks == like->ntasks &&
		    c->pmu == like->pmu && c->self == like->self)
			return c;
	}
	return NULL;
}

static const char *unit;

/*
 * Multiplexing: what one rotation costs, per round, from the 7pmu and 14pmu
 * loops of that round: (t14 - t7) / rotations.  pmuctx counts its
 * rotations; perf does not, so its are the expected number, the 14pmu
 * loop's time over perf's interval (its rotation hrtimer re-arms itself
 * every interval while a context needs rotating).
 */
static struct muxres {
	const struct bcase *c7, *c14;
	int interval_ms, counted, n;
	char src[160];
	double rot[MAX_REPS], per[MAX_REPS], min, med, max;
} muxres[NR_APIS];

static void mux_costs(void)
{
	int a, j;

	for (a = API_PMUCTX; a < NR_APIS; a++) {
		struct muxres *m = &muxres[a];
		struct bcase like = { .kind = K_MUX };

		like.set = set_7pmu;
		m->c7 = find(K_MUX, a, &like);
		like.set = set_14pmu;
		m->c14 = find(K_MUX, a, &like);
		if (!m->c7 || !m->c14)
			continue;
		m->interval_ms = mux_interval_ms(a, m->src, sizeof(m->src));
		m->counted = a == API_PMUCTX;
		for (j = 0; j < m->c7->n && j < m->c14->n; j++) {
			double rot = m->counted ? m->c14->rot[j]
				   : m->c14->v[j] / (m->interval_ms * 1e6);

			if (rot <= 0 || (!m->counted && m->interval_ms <= 0))
				break;
			m->rot[m->n] = rot;
			m->per[m->n++] = (m->c14->v[j] - m->c7->v[j]) / rot;
		}
		if (m->n)
			m->med = median(m->per, m->n, &m->min, &m->max);
	}
}

static void print_mux(FILE *o)
{
	double rot7;
	int a, j;

	for (a = API_PMUCTX; a < NR_APIS; a++) {
		const struct muxres *m = &muxres[a];

		if (!m->c7 || !m->c14)
			continue;
		fprintf(o, "\nmultiplexing, %s: a %lu M-instruction user loop with 7 PMU counters (all on the PMU) and 14 (rotating)\n",
			api_name[a], mux_insns / 1000000);
		fprintf(o, "  interval %d ms (%s); rotations %s\n", m->interval_ms, m->src,
			m->counted ? "counted (PMUCTX_IOC_STATS of the 14pmu context)"
				   : "not counted by perf: expected = 14pmu loop time / interval");
		fprintf(o, "  %5s %12s %12s %9s %9s %12s %11s %13s\n", "round", "7pmu", "14pmu",
			"14 - 7", "rotations", "per rotation", "irqs 7/14", "switches 7/14");
		for (j = 0, rot7 = 0; j < m->c7->n && j < m->c14->n; j++) {
			fprintf(o, "  %5d %12.0f %12.0f %+9.0f", j + 1, m->c7->v[j], m->c14->v[j],
				m->c14->v[j] - m->c7->v[j]);
			if (j < m->n)
				fprintf(o, " %9.1f %12.0f", m->rot[j], m->per[j]);
			else
				fprintf(o, " %9s %12s", "--", "--");
			fprintf(o, " %5.0f/%-5.0f %6.0f/%-6.0f\n", m->c7->irq[j], m->c14->irq[j],
				m->c7->sw[j], m->c14->sw[j]);
			rot7 += m->c7->rot[j];
		}
		if (m->counted)
			fprintf(o, "  (the 7pmu context rotated %.0f times in all)\n", rot7);
		if (!m->n) {
			fprintf(o, "  per rotation: unknown (no rotations, or no interval)\n");
			continue;
		}
		fprintf(o, "  per rotation: median %.0f [%.0f..%.0f] %s, %.3f%% of the %d ms interval%s\n",
			m->med, m->min, m->max, unit, 100 * m->med / (m->interval_ms * 1e6),
			m->interval_ms, m->counted ? "" : " (expected rotations)");
	}
}

static void print_table(FILE *o)
{
	int i, j;

	fprintf(o, "\n%-44s %9s %9s %9s %8s %7s %8s  samples\n", "case", "median",
		"min", "max", "over", "%none", "/perf");
	for (i = 0; i < nr_cases; i++) {
		const struct bcase *c = &cases[i], *base, *perf;
		double over = 0;

		if (!c->n) {
			fprintf(o, "%-44s unavailable (%s)\n", c->label, strerror(c->err));
			continue;
		}
		base = c->kind == K_READ ? NULL : find(c->kind, API_NONE, c);
		perf = c->api == API_PMUCTX ? find(c->kind, API_PERF, c) : NULL;
		fprintf(o, "%-44s %9.0f %9.0f %9.0f", c->label, c->med, c->min, c->max);
		if (base && c->api != API_NONE) {
			over = c->med - base->med;
			fprintf(o, " %+8.0f %6.1f%%", over, 100 * over / base->med);
		} else {
			fprintf(o, " %8s %7s", "", "");
		}
		if (perf && base) {
			double po = perf->med - base->med;

			fprintf(o, " %8.2f", po > 0 ? over / po : 0);
		} else if (perf) {
			fprintf(o, " %8.2f", c->med / perf->med);
		} else {
			fprintf(o, " %8s", "");
		}
		fprintf(o, " ");
		for (j = 0; j < c->n; j++)
			fprintf(o, " %.0f", c->v[j]);
		fprintf(o, "\n");
	}
	fprintf(o, "(%s per switch / per fork+exit / per read / per loop; over = median - no counters of the same kind;\n"
		" /perf = overhead ratio against perf_events' same case, reads: time ratio)\n", unit);
	print_mux(o);
	print_accuracy(o);
	fprintf(o, "\nmemory, slab bytes per task with 8 SW counters over a task without (%d tasks, median of %d):\n",
		mem_children, mem_reps);
	for (i = 1; i < NR_MEMS; i++) {
		if (!mems[i].n) {
			fprintf(o, "  %-16s unavailable\n", mems[i].what);
			continue;
		}
		fprintf(o, "  %-16s %8.0f B objects  %8.0f B slab pages\n", mems[i].what,
			mems[i].obj_med, mems[i].pages_med);
	}
}

static void json_samples(FILE *o, const double *v, int n)
{
	int j;

	fprintf(o, "[");
	for (j = 0; j < n; j++)
		fprintf(o, "%s%.1f", j ? ", " : "", v[j]);
	fprintf(o, "]");
}

static long slab_size(const char *cache)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/object_size", cache);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void write_json(FILE *o, const char *tag)
{
	struct utsname u;
	int i;

	uname(&u);
	fprintf(o, "{\n\"tag\": \"%s\",\n\"machine\": \"%s\",\n\"kernel\": \"%s\",\n", tag,
		u.machine, u.release);
	fprintf(o, "\"unit\": \"%s\",\n\"roundtrips\": %d,\n\"reps\": %d,\n\"settle_ms\": %d,\n",
		unit, rounds, reps, settle_ms);
	fprintf(o, "\"fork_iters\": %d,\n\"read_iters\": %d,\n\"mem_children\": %d,\n",
		fork_iters, read_iters, mem_children);
	fprintf(o, "\"object_size\": {\"pmuctx_context\": %ld, \"pmuctx_counter\": %ld, \"perf_event\": %ld},\n",
		slab_size("pmuctx_context"), slab_size("pmuctx_counter"), slab_size("perf_event"));
	fprintf(o, "\"cases\": [\n");
	for (i = 0; i < nr_cases; i++) {
		const struct bcase *c = &cases[i];

		fprintf(o, "{\"id\": \"%s\", \"label\": \"%s\", \"kind\": \"%s\", \"api\": \"%s\", \"set\": \"%s\", ",
			c->id, c->label, kind_name[c->kind], api_name[c->api], c->set->name);
		fprintf(o, "\"shape\": \"%s\", \"ntasks\": %d, \"nfam\": %d, \"pmu\": %d, \"self\": %d, ",
			c->kind == K_PINGPONG ? shape_name[c->shape] : "", c->ntasks, c->nfam,
			c->pmu, c->self);
		if (c->n) {
			fprintf(o, "\"min\": %.1f, \"median\": %.1f, \"max\": %.1f, \"samples\": ",
				c->min, c->med, c->max);
			json_samples(o, c->v, c->n);
			if (c->kind == K_MUX) {
				fprintf(o, ", \"rotations\": ");
				json_samples(o, c->rot, c->n);
				fprintf(o, ", \"irqs\": ");
				json_samples(o, c->irq, c->n);
				fprintf(o, ", \"switches\": ");
				json_samples(o, c->sw, c->n);
			}
		} else {
			fprintf(o, "\"error\": \"%s\"", strerror(c->err));
		}
		fprintf(o, "}%s\n", i + 1 < nr_cases ? "," : "");
	}
	fprintf(o, "],\n\"memory\": [\n");
	for (i = 1; i < NR_MEMS; i++) {
		const struct mem *m = &mems[i];

		fprintf(o, "{\"id\": \"mem/8sw/%s/%s\", \"api\": \"%s\", \"what\": \"%s\"",
			api_name[m->api], m->mode == 1 ? "clone" : "context", api_name[m->api],
			m->mode == 1 ? "clone" : "context");
		if (m->n) {
			fprintf(o, ", \"objects\": %.0f, \"slab\": %.0f, \"objects_samples\": ",
				m->obj_med, m->pages_med);
			json_samples(o, m->obj, m->n);
			fprintf(o, ", \"slab_samples\": ");
			json_samples(o, m->pages, m->n);
		}
		fprintf(o, "}%s\n", i + 1 < NR_MEMS ? "," : "");
	}
	fprintf(o, "],\n\"mux\": {\"loop_insns\": %lu", mux_insns);
	for (i = API_PMUCTX; i < NR_APIS; i++) {
		const struct muxres *m = &muxres[i];

		if (!m->c7 || !m->c14)
			continue;
		fprintf(o, ",\n \"%s\": {\"interval_ms\": %d, \"interval_source\": \"%s\", ",
			api_name[i], m->interval_ms, m->src);
		fprintf(o, "\"rotations_counted\": %s, \"rotations\": ",
			m->counted ? "true" : "false");
		json_samples(o, m->rot, m->n);
		fprintf(o, ", \"per_rotation\": ");
		json_samples(o, m->per, m->n);
		if (m->n)
			fprintf(o, ", \"min\": %.1f, \"median\": %.1f, \"max\": %.1f, \"percent_of_interval\": %.6f",
				m->min, m->med, m->max, 100 * m->med / (m->interval_ms * 1e6));
		fprintf(o, "}");
	}
	fprintf(o, "}");
	json_accuracy(o);
	fprintf(o, "\n}\n");
}

/* perf's user-space counter access on arm64 needs the sysctl; restored at exit. */
static char old_user_access[16];

static void user_access(int on)
{
	const char *p = "/proc/sys/kernel/perf_user_access";
	FILE *f;

	if (on) {
		f = fopen(p, "r");
		if (!f)
			return;
		if (!fgets(old_user_access, sizeof(old_user_access), f))
			old_user_access[0] = 0;
		fclose(f);
	}
	if (!old_user_access[0])
		return;
	f = fopen(p, "w");
	if (f) {
		fputs(on ? "1\n" : old_user_access, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	const char *json = NULL, *tag = "", *only = NULL;
	char *buf = NULL, *line, *save;
	size_t len = 0;
	int opt, cpu = -1;
	cpu_set_t one;
	FILE *m;

	if (argc > 1 && !strcmp(argv[1], "scale"))
		return scale_main(argc - 1, argv + 1);
	while ((opt = getopt(argc, argv, "r:n:s:m:c:t:j:f:k:l:A:q")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'n': reps = atoi(optarg); break;
		case 's': settle_ms = atoi(optarg); break;
		case 'm': mem_children = atoi(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		case 't': tag = optarg; break;
		case 'j': json = optarg; break;
		case 'f': fork_iters = atoi(optarg); break;
		case 'k': only = optarg; break;
		case 'l': mux_insns = strtoul(optarg, NULL, 10) * 1000000; break;
		case 'A': acc_reps = atoi(optarg); break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: ctxsw [-r ROUNDTRIPS] [-n REPS] [-s SETTLE_MS] [-m CHILDREN] [-f FORKS] [-c CPU] [-l MINSNS] [-A REPS] [-t TAG] [-j FILE] [-k CASE,...] [-q]\n");
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || rounds < 16 || mux_insns < 1000000) {
		fprintf(stderr, "ctxsw: 1 <= REPS <= %d, ROUNDTRIPS >= 16, MINSNS >= 1\n", MAX_REPS);
		return 2;
	}
	unit = getenv("PMUCTX_VM_ICOUNT") ? "instructions" : "ns";
	if (cpu < 0)
		cpu = sched_getcpu() < 0 ? 0 : sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		perror("ctxsw: sched_setaffinity");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	user_access(1);
	build_cases();
	if (only)
		keep_only(only);
	/* The availability probes opened perf events: settle before round 1. */
	last_perf_end = now_ns();
	run_rounds();
	if (!only)
		run_mem();
	user_access(0);
	mux_costs();
#if defined(__aarch64__)
	/* Whichever owns the PMU in this boot: pmuctx, or perf's driver. */
	if (!only && acc_reps > 0) {
		enum api a;

		for (a = API_PMUCTX; a < NR_APIS; a++)
			if (api_available(a, 1) && run_accuracy(a, acc_reps))
				fprintf(stderr, "ctxsw: accuracy runs of %s failed\n", api_name[a]);
	}
#endif

	printf("ctxsw %s: CPU %d, SCHED_BATCH, %d round trips, %d interleaved rounds, settle %d ms\n",
	       tag, cpu, rounds, reps, settle_ms);
	print_table(stdout);
	m = open_memstream(&buf, &len);
	if (!m)
		return 1;
	write_json(m, tag);
	fclose(m);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f || fputs(buf, f) < 0 || fclose(f)) {
			perror(json);
			return 1;
		}
	}
	printf("BENCH-JSON-BEGIN\n");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("BENCH-JSON: %s\n", line);
	printf("BENCH-JSON-END\n");
	free(buf);
	return find(K_PINGPONG, API_NONE, NULL) ? 0 : 1;
}
