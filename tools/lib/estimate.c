// SPDX-License-Identifier: GPL-2.0
/*
 * libpmuctx: the value a multiplexed counter would have had, and its error.
 *
 * A counter that shared the PMU ran for time_running T of its enabled time
 * E, in slices (c_i counted in t_i ns, Σc = value C, Σt = T).  The scaled
 * value V = C * E / T is a ratio estimator, R = C / T times E, of a
 * population (the whole enabled time) of which the slices are a sample.
 * The kernel spreads each unit's turns evenly from a random start
 * (kernel/mux.c), which the random-sampling variance overstates except
 * for a program in step with the rotation, whose slices agree; leaving
 * out the finite-population correction (1 - f, f = T / E) covers part
 * of those runs, at the price of intervals 1 / sqrt(1 - f) wider for the
 * others:
 *
 *	S = Σc² - 2R Σct + R² Σt²		(= Σ (c_i - R t_i)²)
 *	Var(R) ≈ n / (n - 1) * S / T²
 *	SE(V) = E * sqrt(Var(R)), 95% half-width t * SE(V)
 *
 * t is Student's 97.5% quantile for the slices' degrees of freedom: n - 1,
 * or fewer when a few long slices hold most of the running time (Kish's
 * effective number of slices, T² / Σt²).  Under 3 effective slices the
 * variance of the rates is guessed from too little to be trusted: the
 * error is unknown.  Documentation/multiplexing.rst says what this
 * assumes and how well it covers in simulation and in the VM.
 */
#include <math.h>

#include "pmuctx_abi.h"

/* The normal quantile of a two-sided 95% interval. */
#define Z95	1.959963984540054

/* Fewer effective slices than this: the error is unknown. */
#define MIN_SLICES	3

/*
 * Student's t, 97.5% quantile, for @df >= 1 degrees of freedom: the
 * table to 30, then the Cornish-Fisher expansion around the normal
 * quantile (within 10^-4 of the exact value from 30 on).  A fractional
 * @df takes the table entry below it: the wider interval.
 */
static double t975(double df)
{
	static const double t[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
		2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
		2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
		2.052, 2.048, 2.045, 2.042,
	};
	double z = Z95, z3 = z * z * z, z5 = z3 * z * z;

	if (df < 31)
		return t[df < 1 ? 1 : (int)df];
	return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

/*
 * The kernel's sums are 128-bit, low word first.  S is a small difference
 * of large sums: long double (64 bits of mantissa on x86, 113 on arm64)
 * rounds it by about 10^-19 of Σc², which moves the relative error by
 * less than 10^-9 even when every slice had the same rate and S is 0.
 */
static long double u128(const __u64 w[2])
{
	return (long double)w[1] * 18446744073709551616.0L + (long double)w[0];
}

int pmuctx_estimate(const struct pmuctx_value *v, struct pmuctx_estimate *e)
{
	const struct pmuctx_slice_stats *s = &v->slices;
	long double c = v->value, t = v->time_running, en = v->time_enabled;
	long double r, S, f, n, var, tt, neff;

	e->stderr_value = e->ci95 = 0;
	if (!v->time_running) {
		e->scaled = e->stderr_value = e->ci95 = NAN;
		e->running_fraction = 0;
		e->state = PMUCTX_EST_NOT_COUNTED;
		return e->state;
	}
	/* running > enabled cannot be read from one counter; sums of several can round so */
	if (v->time_running >= v->time_enabled) {
		e->scaled = v->value;
		e->running_fraction = 1;
		e->state = PMUCTX_EST_EXACT;
		return e->state;
	}
	f = t / en;
	e->scaled = (double)(c * en / t);
	e->running_fraction = (double)f;
	n = s->slices;
	/* Kish: slices of unequal length weigh as fewer equal ones */
	tt = u128(s->sum_time_sq);
	neff = tt > 0 ? t * t / tt : 0;
	if (neff > n)
		neff = n;
	if (neff < MIN_SLICES) {
		/* a slice or two tell little of how the rate varies */
		e->stderr_value = e->ci95 = NAN;
		e->state = PMUCTX_EST_UNKNOWN;
		return e->state;
	}
	r = c / t;
	S = u128(s->sum_count_sq) - 2 * r * u128(s->sum_count_time) + r * r * tt;
	if (S < 0)	/* rounding, when every slice had the same rate */
		S = 0;
	var = n / (n - 1) * S / (t * t);
	e->stderr_value = (double)(en * sqrtl(var));
	e->ci95 = t975((double)neff - 1) * e->stderr_value;
	e->state = PMUCTX_EST_ESTIMATED;
	return e->state;
}
