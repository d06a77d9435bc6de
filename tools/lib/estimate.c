// SPDX-License-Identifier: GPL-2.0
/*
 * libpmuctx: the value a multiplexed counter would have had, and its error.
 *
 * A counter that shared the PMU ran for time_running T of its enabled time
 * E, in slices (c_i counted in t_i ns, Σc = value C, Σt = T).  The scaled
 * value V = C * E / T is a ratio estimator, R = C / T times E, of a
 * population (the whole enabled time) of which the slices are a sample.
 * Its variance, with the finite-population correction f = T / E (f = 1:
 * nothing was left out, no error):
 *
 *	S = Σc² - 2R Σct + R² Σt²		(= Σ (c_i - R t_i)²)
 *	Var(R) ≈ (1 - f) * n / (n - 1) * S / T²
 *	SE(V) = E * sqrt(Var(R)), 95% half-width 1.96 * SE(V)
 *
 * Documentation/multiplexing.rst says what this assumes and how well it
 * covers in simulation.
 */
#include <math.h>

#include "pmuctx_abi.h"

/* 1.96: the normal quantile of a two-sided 95% interval. */
#define Z95	1.96

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
	long double r, S, f, n, var;

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
	if (s->slices < 2) {
		/* one slice tells nothing of how the rate varies */
		e->stderr_value = e->ci95 = NAN;
		e->state = PMUCTX_EST_UNKNOWN;
		return e->state;
	}
	r = c / t;
	S = u128(s->sum_count_sq) - 2 * r * u128(s->sum_count_time) +
	    r * r * u128(s->sum_time_sq);
	if (S < 0)	/* rounding, when every slice had the same rate */
		S = 0;
	n = s->slices;
	var = (1 - f) * n / (n - 1) * S / (t * t);
	e->stderr_value = (double)(en * sqrtl(var));
	e->ci95 = Z95 * e->stderr_value;
	e->state = PMUCTX_EST_ESTIMATED;
	return e->state;
}
