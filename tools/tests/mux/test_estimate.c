// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx_estimate() and the SLICES read format, without a kernel: the
 * formula on hand-computed cases, its special states, sums past 2^64, and
 * a simulation of multiplexing whose measured coverage of the 95%
 * interval is what Documentation/multiplexing.rst states.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmuctx_abi.h"
#include "mux_spread.h"
#include "tap.h"

typedef unsigned __int128 u128;

static void set128(__u64 w[2], u128 v)
{
	w[0] = (__u64)v;
	w[1] = (__u64)(v >> 64);
}

/* A read whose slices are (c[i], t[i]), enabled for @enabled ns. */
static void make_value(struct pmuctx_value *v, const u128 *c, const u128 *t, int n, u128 scale,
		       uint64_t enabled)
{
	u128 cc = 0, ct = 0, tt = 0, sc = 0, st = 0;
	int i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < n; i++) {
		u128 ci = c[i] * scale, ti = t[i] * scale;

		sc += ci;
		st += ti;
		cc += ci * ci;
		ct += ci * ti;
		tt += ti * ti;
	}
	v->value = (uint64_t)sc;
	v->time_running = (uint64_t)st;
	v->time_enabled = enabled;
	v->slices.slices = n;
	set128(v->slices.sum_count_sq, cc);
	set128(v->slices.sum_count_time, ct);
	set128(v->slices.sum_time_sq, tt);
}

static int close_to(double got, double want)
{
	return fabs(got - want) <= 1e-9 * fabs(want) + 1e-12;
}

/*
 * Slices (10, 2), (20, 3), (60, 4), (30, 3): C = 120, T = 12, R = 10,
 * residuals c - Rt = -10, -10, 20, 0, so S = 600 (Σc² 5000, Σct 410,
 * Σt² 38: 5000 - 8200 + 3800).  E = 16 (f = 3/4, which the variance
 * leaves out: no finite-population correction), n/(n-1) = 4/3,
 * Var(R) = 4/3 * 600 / 144 = 50/9, SE(V) = 16 * sqrt(50) / 3,
 * V = 120 * 16 / 12 = 160.  Effective slices T² / Σt² = 144 / 38 = 3.79:
 * t with 2 degrees of freedom (the table entry below 2.79), 4.303.
 */
static void test_formula(void)
{
	static const u128 c[] = { 10, 20, 60, 30 }, t[] = { 2, 3, 4, 3 };
	const u128 g = 1000000000;	/* 10^9: every sum past 2^64 */
	const double se = 16 * sqrt(50) / 3;
	struct pmuctx_value v;
	struct pmuctx_estimate e;

	make_value(&v, c, t, 4, 1, 16);
	pmuctx_estimate(&v, &e);
	ok(e.state == PMUCTX_EST_ESTIMATED &&
	   close_to(e.scaled, 160) && close_to(e.running_fraction, 0.75) &&
	   close_to(e.stderr_value, se) && close_to(e.ci95, 4.303 * se),
	   "hand-computed case: V 160, SE %g, 95%% +- 4.303 SE (got %g, %g, %g, f %g)",
	   se, e.scaled, e.stderr_value, e.ci95, e.running_fraction);

	/* the same in units 10^9 larger: Σc² = 5e21, Σt² = 3.8e19, both past 2^64 */
	make_value(&v, c, t, 4, g, 16 * (uint64_t)g);
	ok(v.slices.sum_count_sq[1] && v.slices.sum_time_sq[1] && v.slices.sum_count_time[1],
	   "scaled case has high words in all three sums");
	pmuctx_estimate(&v, &e);
	ok(e.state == PMUCTX_EST_ESTIMATED && close_to(e.scaled, 160 * 1e9) &&
	   close_to(e.stderr_value, se * 1e9) && close_to(e.ci95, 4.303 * se * 1e9),
	   "128-bit sums: V 1.6e11, SE %g (got %g, %g)", se * 1e9, e.scaled, e.stderr_value);

	/* Student's t: equal slices, n - 1 degrees of freedom */
	{
		static const u128 c3[] = { 10, 20, 30 }, t3[] = { 2, 2, 2 };
		u128 cn[40], tn[40];
		int i;

		make_value(&v, c3, t3, 3, 1, 12);
		pmuctx_estimate(&v, &e);
		ok(e.state == PMUCTX_EST_ESTIMATED && close_to(e.ci95, 4.303 * e.stderr_value),
		   "three equal slices: t(2) = 4.303 (got %g)", e.ci95 / e.stderr_value);
		for (i = 0; i < 40; i++) {
			cn[i] = 10 + i % 3;
			tn[i] = 2;
		}
		make_value(&v, cn, tn, 11, 1, 44);
		pmuctx_estimate(&v, &e);
		ok(close_to(e.ci95, 2.228 * e.stderr_value),
		   "eleven equal slices: t(10) = 2.228 (got %g)", e.ci95 / e.stderr_value);
		make_value(&v, cn, tn, 40, 1, 160);
		pmuctx_estimate(&v, &e);
		ok(fabs(e.ci95 / e.stderr_value - 2.0227) < 1e-3,
		   "forty equal slices: t(39) = 2.0227 (got %g)", e.ci95 / e.stderr_value);
	}
	/*
	 * Two slices (0, 1) and (30, 2): the variance of the rate from two
	 * slices is guessed from too little: unknown, not a number.  Nor do
	 * five slices do better when one holds nearly all the time.
	 */
	{
		static const u128 c2[] = { 0, 30 }, t2[] = { 1, 2 };
		static const u128 c5[] = { 1, 1, 1, 1, 100 }, t5[] = { 1, 1, 1, 1, 20 };

		make_value(&v, c2, t2, 2, 1, 6);
		pmuctx_estimate(&v, &e);
		ok(e.state == PMUCTX_EST_UNKNOWN && close_to(e.scaled, 60) && isnan(e.ci95),
		   "two slices: V 60, error unknown (got state %d, %g)", e.state, e.ci95);
		make_value(&v, c5, t5, 5, 1, 48);
		pmuctx_estimate(&v, &e);
		ok(e.state == PMUCTX_EST_UNKNOWN && isnan(e.ci95),
		   "five slices, one of 20 of the 24 ns: 1.4 effective, error unknown (state %d)",
		   e.state);
	}
}

/* The same rate in every slice: S is 0 up to rounding of sums near 2^77. */
static void test_steady_precision(void)
{
	struct pmuctx_value v;
	struct pmuctx_estimate e;
	u128 c[1000], t[1000];
	int i;

	for (i = 0; i < 1000; i++) {
		t[i] = 4000000000ULL + i * 997;	/* unequal lengths, rate 3 */
		c[i] = 3 * t[i];
	}
	make_value(&v, c, t, 1000, 1, 0);
	v.time_enabled = v.time_running * 2;
	pmuctx_estimate(&v, &e);
	ok(e.state == PMUCTX_EST_ESTIMATED && e.ci95 >= 0 && e.ci95 < 1e-9 * e.scaled,
	   "steady rate, Σc² = %.3g: error %g of %g, no cancellation noise", (double)v.slices.sum_count_sq[1] * 18446744073709551616.0,
	   e.ci95, e.scaled);

	/* one count less in Σc² than the data allow: S < 0 must clamp to 0, not NaN */
	v.slices.sum_count_sq[0] -= 1 << 20;
	pmuctx_estimate(&v, &e);
	ok(e.state == PMUCTX_EST_ESTIMATED && e.ci95 == 0, "negative S clamps to an error of 0 (got %g)", e.ci95);
}

static void test_states(void)
{
	struct pmuctx_value v;
	struct pmuctx_estimate e;

	memset(&v, 0, sizeof(v));
	v.value = 0;
	v.time_enabled = 5000;
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_NOT_COUNTED && isnan(e.scaled) && isnan(e.ci95) &&
	   e.running_fraction == 0, "running 0: not counted, no value");
	v.time_enabled = 0;
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_NOT_COUNTED, "never enabled: not counted");

	v.value = 777;
	v.time_enabled = v.time_running = 5000;
	v.slices.slices = 1;
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_EXACT && e.scaled == 777 && e.ci95 == 0 &&
	   e.stderr_value == 0 && e.running_fraction == 1, "running == enabled: exact, error 0");
	v.time_running = 5001;
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_EXACT && e.scaled == 777,
	   "running > enabled (summed reads): exact");

	v.time_running = 2500;
	v.slices.slices = 1;
	set128(v.slices.sum_count_sq, (u128)777 * 777);
	set128(v.slices.sum_count_time, (u128)777 * 2500);
	set128(v.slices.sum_time_sq, (u128)2500 * 2500);
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_UNKNOWN && e.scaled == 1554 && isnan(e.ci95) &&
	   isnan(e.stderr_value) && e.running_fraction == 0.5,
	   "one slice, half the time: scaled 1554, error unknown (not 0)");
	v.slices.slices = 0;
	memset(&v.slices, 0, sizeof(v.slices));
	ok(pmuctx_estimate(&v, &e) == PMUCTX_EST_UNKNOWN && e.scaled == 1554,
	   "no slice statistics (a module without SLICES): error unknown");
}

/* pmuctx_counter_read() decodes what a pipe holds as a read() would return it. */
static int read_words(const uint64_t *w, size_t n, uint64_t fmt, struct pmuctx_value *v)
{
	int p[2], ret;

	if (pipe(p))
		return -2;
	if (write(p[1], w, n * sizeof(*w)) != (ssize_t)(n * sizeof(*w)))
		return -2;
	close(p[1]);
	ret = pmuctx_counter_read(p[0], fmt, v);
	close(p[0]);
	return ret;
}

static void test_read(void)
{
	static const uint64_t all[] = { 100, 200, 150, 7, 9, 3, 11, 12, 13, 14, 15, 16 };
	static const uint64_t no_id[] = { 100, 200, 150, 3, 11, 12, 13, 14, 15, 16 };
	uint64_t slices = PMUCTX_FORMAT_TOTAL_TIME_ENABLED | PMUCTX_FORMAT_TOTAL_TIME_RUNNING |
			  PMUCTX_FORMAT_SLICES;
	struct pmuctx_value v;
	int ret;

	ret = read_words(all, 12, slices | PMUCTX_FORMAT_ID | PMUCTX_FORMAT_STAMP, &v);
	ok(!ret && v.value == 100 && v.time_enabled == 200 && v.time_running == 150 && v.id == 7 &&
	   v.stamp == 9 && v.slices.slices == 3 && v.slices.sum_count_sq[0] == 11 &&
	   v.slices.sum_count_sq[1] == 12 && v.slices.sum_count_time[0] == 13 &&
	   v.slices.sum_count_time[1] == 14 && v.slices.sum_time_sq[0] == 15 &&
	   v.slices.sum_time_sq[1] == 16, "every format: the slice words after id and stamp, low word first");
	ret = read_words(no_id, 10, slices, &v);
	ok(!ret && v.time_running == 150 && v.id == 0 && v.slices.slices == 3 &&
	   v.slices.sum_time_sq[1] == 16, "times and slices: ten words");
	errno = 0;
	ret = read_words(no_id, 3, slices, &v);
	ok(ret == -1 && errno == EPROTO && v.value == 0,
	   "SLICES asked, three words read: EPROTO, nothing half-decoded");
	errno = 0;
	ret = read_words(all, 12, PMUCTX_FORMAT_GROUP | PMUCTX_FORMAT_SLICES, &v);
	ok(ret == -1 && errno == EINVAL, "a group read is not decoded here: EINVAL");
}

/* ---------- simulation ---------- */

/* xoshiro256**, seeded by splitmix64: the same numbers on every machine */
static uint64_t rng_s[4];

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(void)
{
	uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;

	rng_s[2] ^= rng_s[0];
	rng_s[3] ^= rng_s[1];
	rng_s[1] ^= rng_s[2];
	rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t;
	rng_s[3] = rotl(rng_s[3], 45);
	return r;
}

static void rng_seed(uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		rng_s[i] = z ^ (z >> 31);
	}
}

static double uniform(void)	/* (0, 1) */
{
	return ((rng_next() >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Events in a stretch with mean @mu: Poisson, normal for large means. */
static uint64_t poisson(double mu)
{
	double x;

	if (mu < 50) {
		double l = exp(-mu), p = uniform();
		uint64_t k = 0;

		while (p > l) {
			p *= uniform();
			k++;
		}
		return k;
	}
	x = floor(mu + sqrt(mu) * normal() + 0.5);
	return x < 0 ? 0 : (uint64_t)x;
}

#define SLICE_NS	4000000ULL	/* the rotation interval */
#define TICK_NS		500000ULL	/* the rate may change every tick */
#define TICKS_PER_SLICE	(SLICE_NS / TICK_NS)
#define MAX_UNITS	32
#define MAX_TICKS	8192

enum population {
	POP_STEADY,	/* one rate; Poisson arrivals */
	POP_RANDOM,	/* a new rate every tick (0.5 ms), uniform 0.5..3.5 per ns */
	POP_PHASED,	/* phases of mean 25 ms (exponential), rates lognormal */
	POP_BEAT,	/* high then low, in step with the rotation cycle */
	POP_SQUARE,	/* high then low, a period of sim.period_ms */
};

static const char *const pop_names[] = { "steady", "random", "phased", "beat", "square" };

/* Rate per ns of each tick of one unit's enabled time. */
static void population(enum population pop, double *rate, int ticks, int cycle_ticks,
		       int period_ticks)
{
	double r = 0;
	int i, left = 0;

	for (i = 0; i < ticks; i++) {
		switch (pop) {
		case POP_STEADY:
			r = 2.0;
			break;
		case POP_RANDOM:
			r = 0.5 + 3.0 * uniform();
			break;
		case POP_PHASED:
			if (left-- <= 0) {
				/* 25 ms mean: 50 ticks, six rotation intervals */
				left = (int)(-50 * log(uniform()));
				r = 2.0 * exp(0.8 * normal());
			}
			break;
		case POP_BEAT:
			r = i % cycle_ticks < cycle_ticks / 2 ? 4.0 : 0.5;
			break;
		case POP_SQUARE:
			r = i % period_ticks < period_ticks / 2 ? 4.0 : 0.5;
			break;
		}
		rate[i] = r;
	}
}

struct sim {
	enum population pop;
	int k, m, step;		/* units, counters, cursor advance per rotation */
	int enabled_ms;
	int runs;
	double period_ms;	/* POP_SQUARE */
	/* out */
	int trials, covered, unknown;
	double sum_z2, mean_f, mean_n;
};

/*
 * kernel/mux.c's order for units of one counter each: a position in the
 * list (a fraction, 2^-32), random at the start, moves on every rotation
 * by the context's stride (0.9 to 1, random) times the m units that fit
 * over the k; the m units from the one at the position are on.  The
 * stride is the kernel's choice (mux_spread.h): redrawn while its step
 * does not spread the turns, up to PMUCTX_MUX_STRIDE_DRAWS, then the
 * round robin's.
 */
struct kron {
	uint32_t pos, stride;
	int draws;	/* strides drawn */
};

static uint32_t kron_draw_stride(void *arg)
{
	struct kron *kr = arg;

	kr->draws++;
	return 0xe6666666U + (uint32_t)(((rng_next() >> 32) * (uint64_t)(0U - 0xe6666666U)) >> 32);
}

static uint32_t kron_step(uint32_t stride, int k, int m)
{
	return pmuctx_mux_stride_step(stride, m, k);
}

static void kron_start(struct kron *kr, int k, int m)
{
	kr->pos = (uint32_t)rng_next();
	kr->draws = 0;
	kr->stride = pmuctx_mux_spreading_stride(kron_draw_stride(kr), m, k,
						 kron_draw_stride, kr);
}

static void kron_choose(struct kron *kr, unsigned char *on, int k, int m)
{
	int start = (int)(((uint64_t)kr->pos * k) >> 32), u;

	for (u = 0; u < m; u++)
		on[(start + u) % k] = 1;
	kr->pos += kron_step(kr->stride, k, m);
}

/*
 * One run of a task whose k units (groups, or counters alone) rotate over
 * m counters: every interval the m units from the cursor are on the PMU,
 * then the cursor moves on by @step.  A unit on the PMU for consecutive
 * intervals counts one slice, as the kernel ends a slice only when the
 * counter stops counting.  Each unit counts its own events; the truth is
 * every event of its enabled time.
 */
static void sim_run(struct sim *s)
{
	static double rate[MAX_TICKS];
	static uint64_t count[MAX_UNITS][MAX_TICKS / TICKS_PER_SLICE + 1];
	uint64_t ticks = s->enabled_ms * 1000000ULL / TICK_NS, enabled = ticks * TICK_NS;
	int intervals = (ticks + TICKS_PER_SLICE - 1) / TICKS_PER_SLICE;
	int cycle_ticks = s->k / (s->step ? s->step : s->m) * TICKS_PER_SLICE;
	int u, j, cursor = 0;
	unsigned char on[MAX_TICKS / TICKS_PER_SLICE + 1][MAX_UNITS];
	struct kron kr;

	for (u = 0; u < s->k; u++) {
		population(s->pop, rate, ticks, cycle_ticks,
			   (int)(s->period_ms * 1000000 / TICK_NS + 0.5));
		for (j = 0; j < intervals; j++) {
			double mu = 0;
			uint64_t i;

			for (i = j * TICKS_PER_SLICE; i < (j + 1) * TICKS_PER_SLICE && i < ticks; i++)
				mu += rate[i] * TICK_NS;
			count[u][j] = poisson(mu);
		}
	}
	kron_start(&kr, s->k, s->m);
	for (j = 0; j < intervals; j++) {
		memset(on[j], 0, sizeof(on[j]));
		if (!s->step) {
			kron_choose(&kr, on[j], s->k, s->m);
			continue;
		}
		for (u = 0; u < s->m; u++)
			on[j][(cursor + u) % s->k] = 1;
		cursor = (cursor + s->step) % s->k;
	}
	for (u = 0; u < s->k; u++) {
		u128 cc = 0, ct = 0, tt = 0, c = 0, t = 0;
		uint64_t truth = 0, value = 0, running = 0, n = 0;
		struct pmuctx_value v;
		struct pmuctx_estimate e;

		for (j = 0; j <= intervals; j++) {
			/* the kernel's order: every turn is a slice, even back to back */
			if (!s->step && t && j < intervals && on[j][u]) {
				n++;
				cc += c * c;
				ct += c * t;
				tt += t * t;
				value += c;
				running += t;
				c = t = 0;
			}
			if (j < intervals && on[j][u]) {
				uint64_t len = j + 1 == intervals ? enabled - j * SLICE_NS : SLICE_NS;

				c += count[u][j];
				t += len;
			} else if (t) {
				/* the slice ends: the unit went off, or the run ended */
				n++;
				cc += c * c;
				ct += c * t;
				tt += t * t;
				value += c;
				running += t;
				c = t = 0;
			}
			if (j < intervals)
				truth += count[u][j];
		}
		memset(&v, 0, sizeof(v));
		v.value = value;
		v.time_enabled = enabled;
		v.time_running = running;
		v.slices.slices = n;
		set128(v.slices.sum_count_sq, cc);
		set128(v.slices.sum_count_time, ct);
		set128(v.slices.sum_time_sq, tt);
		if (pmuctx_estimate(&v, &e) != PMUCTX_EST_ESTIMATED) {
			s->unknown++;
			continue;
		}
		s->trials++;
		s->covered += fabs(e.scaled - (double)truth) <= e.ci95;
		if (e.stderr_value > 0)
			s->sum_z2 += pow((e.scaled - (double)truth) / e.stderr_value, 2);
		s->mean_f += e.running_fraction;
		s->mean_n += n;
	}
}

static double sim_coverage(struct sim *s)
{
	int r;

	for (r = 0; r < s->runs; r++)
		sim_run(s);
	if (s->trials) {
		s->mean_f /= s->trials;
		s->mean_n /= s->trials;
	}
	diag("%-6s k=%-2d m=%d step=%d %5d ms: coverage %5.1f%% of %d (n %.1f, f %.2f, rms z %.2f)%s",
	     pop_names[s->pop], s->k, s->m, s->step, s->enabled_ms,
	     s->trials ? 100.0 * s->covered / s->trials : 0, s->trials, s->mean_n, s->mean_f,
	     s->trials ? sqrt(s->sum_z2 / s->trials) : 0,
	     s->unknown ? " (some runs had under two slices)" : "");
	return s->trials ? 100.0 * s->covered / s->trials : 0;
}

/* Schedules: rotate by one (long slices, f near m/k) and by m (4 ms slices). */
static const struct { int k, m, step, enabled_ms; } schedules[] = {
	{ 8, 6, 1, 2000 },
	{ 12, 4, 1, 4000 },
	{ 12, 6, 6, 1000 },
	{ 16, 4, 4, 1000 },
	{ 10, 6, 6, 1000 },	/* k not a multiple of m: slices of one or two intervals */
	{ 12, 6, 0, 1000 },	/* step 0: the kernel's order (random start and stride) */
	{ 16, 4, 0, 1000 },
	{ 10, 6, 0, 1000 },
	{ 14, 6, 0, 1000 },
};

/*
 * The bands hold the coverage measured (printed above each line) with a
 * margin of about four standard deviations of the sampling noise (0.34
 * points at 95% for 4000 trials, less nearer 100%).  The estimate has no
 * finite-population correction (multiplexing.rst, "The estimator"): the
 * turns are spread evenly, not drawn at random, and the correction's
 * absence is what covers part of the runs in step with the rotation.  So
 * steady and random rates are covered 97 to 100% (the standard error
 * overstated 1.1 to 2 times), long phases 100%; with the correction
 * they were covered 94.5-95.5%, the kernel's beat 87.7% and its worst
 * square wave 85.8% (91.1% and 91.2% without).
 */
static void test_simulation(void)
{
	static const struct { enum population pop; double lo, hi, all_lo, all_hi, max_rms_z; } bands[] = {
		{ POP_STEADY, 96.0, 100.0, 97.5, 100.0, 1.0 },
		{ POP_RANDOM, 96.0, 100.0, 97.5, 100.0, 1.0 },
		{ POP_PHASED, 99.0, 100.0, 99.5, 100.0, 0.6 },
	};
	unsigned int i, b;
	double cov;

	rng_seed(20261124);
	for (b = 0; b < sizeof(bands) / sizeof(bands[0]); b++) {
		struct sim all = { .pop = bands[b].pop };

		for (i = 0; i < sizeof(schedules) / sizeof(schedules[0]); i++) {
			struct sim s = {
				.pop = bands[b].pop, .k = schedules[i].k, .m = schedules[i].m,
				.step = schedules[i].step, .enabled_ms = schedules[i].enabled_ms,
				.runs = 4000 / schedules[i].k,
			};
			double rms_z;

			cov = sim_coverage(&s);
			rms_z = sqrt(s.sum_z2 / s.trials);
			ok(cov >= bands[b].lo && cov <= bands[b].hi && rms_z <= bands[b].max_rms_z,
			   "%s population, k=%d m=%d step %d: 95%% interval covers %.1f%% (%.1f..%.1f), rms z %.2f",
			   pop_names[bands[b].pop], s.k, s.m, s.step, cov, bands[b].lo, bands[b].hi, rms_z);
			all.trials += s.trials;
			all.covered += s.covered;
		}
		cov = 100.0 * all.covered / all.trials;
		ok(cov >= bands[b].all_lo && cov <= bands[b].all_hi,
		   "%s population, every schedule: %.1f%% of %d covered (%.1f..%.1f)",
		   pop_names[bands[b].pop], cov, all.trials, bands[b].all_lo, bands[b].all_hi);
	}

	/* what the documentation warns of: phases in step with the rotation */
	{
		struct sim s = { .pop = POP_BEAT, .k = 8, .m = 4, .step = 4, .enabled_ms = 1000, .runs = 250 };

		cov = sim_coverage(&s);
		ok(cov < 50, "phases that beat with the rotation break the interval: %.1f%% covered", cov);
	}
	/*
	 * The kernel's order: the beat stays in step only with the contexts
	 * whose random stride is within about a line width (1 / rotations)
	 * of it, a tenth of them over 250 rotations: 91% covered, where the
	 * fixed order covers none.  Square waves of 1 to 20 ms (a tick of
	 * 0.5 ms is the finest), 12 units on 6 counters: the same at the one
	 * period in step with it (8 ms), 97 to 100% elsewhere.
	 */
	{
		struct sim s = { .pop = POP_BEAT, .k = 8, .m = 4, .step = 0, .enabled_ms = 1000, .runs = 500 };

		cov = sim_coverage(&s);
		ok(cov >= 88, "the kernel's order: a beat in step with a round is covered %.1f%% (at least 88)", cov);
	}
	{
		double worst_sys = 100, worst_rnd = 100;
		int p;

		for (p = 1; p <= 20; p++) {
			struct sim sys = { .pop = POP_SQUARE, .k = 12, .m = 6, .step = 6,
					   .enabled_ms = 1000, .runs = 100, .period_ms = p };
			struct sim rnd = sys;

			rnd.step = 0;
			cov = sim_coverage(&sys);
			if (cov < worst_sys)
				worst_sys = cov;
			cov = sim_coverage(&rnd);
			if (cov < worst_rnd)
				worst_rnd = cov;
		}
		ok(worst_rnd >= 88, "square waves of 1-20 ms: the kernel's order covers at least %.1f%% at every period (fixed order: %.1f%%)",
		   worst_rnd, worst_sys);
	}
	/*
	 * Few slices: Student's t keeps the interval honest (1.96, the
	 * normal quantile, covered 85% of runs of 3 or 4 slices).
	 */
	{
		struct sim s = { .pop = POP_RANDOM, .k = 8, .m = 6, .step = 1, .enabled_ms = 120, .runs = 500 };

		cov = sim_coverage(&s);
		ok(cov >= 93, "short runs with 3 or 4 slices: %.1f%% covered (at least 93)", cov);
	}
}

/*
 * Whether every one of @k units is both on and off in each window of @t
 * rotations among @rounds of the kernel's order from @kr.
 */
static bool kron_windows_spread(struct kron *kr, int k, int m, int t,
				int rounds)
{
	static unsigned char on[256][MAX_UNITS];
	int j, u, w;

	for (j = 0; j < rounds; j++) {
		memset(on[j], 0, sizeof(on[j]));
		kron_choose(kr, on[j], k, m);
	}
	for (w = 0; w + t <= rounds; w++)
		for (u = 0; u < k; u++) {
			int turns = 0;

			for (j = w; j < w + t; j++)
				turns += on[j][u];
			if (!turns || turns == t)
				return false;
		}
	return true;
}

/*
 * The kernel's stride check (kernel/mux_spread.h), against the rule it
 * states, unit by unit: for every list of up to MAX_UNITS units with a
 * checked window, contexts with random starts and strides (redrawn as the
 * kernel redraws them) turn every unit on and off within every window of
 * pmuctx_mux_spread_window() rotations; the round robin's stride always
 * passes, so the redraws end; and without the check, steps that fail the
 * rule exist (the case that made it: 10 of 14 units, one on all the time).
 */
static void test_stride_spread(void)
{
	int k, m, c, lists = 0, bad = 0, rr_bad = 0, redrawn = 0, contexts = 0;
	double worst_fail = 0;
	int worst_k = 0, worst_m = 0;

	for (k = 2; k <= MAX_UNITS; k++)
		for (m = 1; m < k; m++) {
			int t = (int)pmuctx_mux_spread_window(m, k), fails = 0;

			if (t > PMUCTX_MUX_SPREAD_MAX)
				continue;
			lists++;
			rr_bad += !pmuctx_mux_step_spreads(kron_step(UINT32_MAX, k, m), m, k);
			for (c = 0; c < 40; c++) {
				struct kron kr;

				kron_start(&kr, k, m);
				contexts++;
				fails += kr.draws - 1;
				redrawn += kr.draws > 1;
				bad += !kron_windows_spread(&kr, k, m, t, 3 * t);
			}
			if ((double)fails / (fails + 40) > worst_fail) {
				worst_fail = (double)fails / (fails + 40);
				worst_k = k;
				worst_m = m;
			}
		}
	diag("stride check: %d lists, %d contexts (%d redrew), worst share of failed draws %.2f (%d of %d units on)",
	     lists, contexts, redrawn, worst_fail, worst_m, worst_k);
	ok(rr_bad == 0, "the round robin's step spreads the turns of every list (%d do not)", rr_bad);
	ok(bad == 0, "every context turns every unit on and off within each window (%d do not)", bad);
	ok(worst_fail < 0.5, "a random stride passes the check more often than not (worst %.2f)", worst_fail);
	{
		/* 10 of 14 on, stride 14/15 of the way: a step of 2/3. */
		uint32_t stride = (uint32_t)(((uint64_t)2 << 32) * 14 / 30);
		uint32_t step = kron_step(stride, 14, 10);
		struct kron kr = { .pos = 0, .stride = stride };

		ok(!kron_windows_spread(&kr, 14, 10, 25, 26) &&
		   !pmuctx_mux_step_spreads(step, 10, 14),
		   "a step near 2/3 keeps a unit of 14 on for 25 rotations, and the check refuses it");
	}
}

int main(void)
{
	test_formula();
	test_steady_precision();
	test_states();
	test_read();
	test_simulation();
	test_stride_spread();
	return done_testing();
}
