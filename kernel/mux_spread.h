/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a rotation step spreads every unit's turns.  Pure computation,
 * shared by the module (kernel/mux.c) and the multiplexing simulation
 * (tools/tests/mux/test_estimate.c), which checks it exhaustively.
 *
 * kernel/mux.c puts on the PMU the m units (of the n taking turns) that
 * follow a position in the list, a fraction of it in 2^-32; each rotation
 * moves the position on by a step, the context's random stride (0.9 to 1)
 * times m / n.  Unit u is then on at a rotation when the position lies in
 * the m / n of the circle before u, and off when it lies in the rest.  A
 * step close to a fraction p / q with a small q keeps the positions in q
 * clusters for many rotations; when the clusters are further apart than
 * the smaller of those two arcs, some units stay on (or off) the PMU the
 * whole time (seen: with 10 of 14 units on and a step near 2/3, one unit
 * on for all 25 rotations of a test).  So a step is kept only if its
 * positions over t = 4 * ceil(n / min(m, n - m)) rotations leave no gap
 * wider than that arc: then every unit is on and off at least once in any
 * t rotations in a row (the positions of rotations j .. j + t - 1 are
 * those of 0 .. t - 1 shifted, so one check covers every window).  The
 * round robin's step (stride 1 - 2^-32) always passes; a random stride
 * fails at worst three draws in ten (17 of 31 units on; the simulation
 * measures it for every list up to 32 units).  Lists where t would exceed
 * PMUCTX_MUX_SPREAD_MAX (n over 16 times min(m, n - m)) are not checked.
 * Documentation/multiplexing.rst, "The order of turns", has the rest.
 */
#ifndef _PMUCTX_MUX_SPREAD_H
#define _PMUCTX_MUX_SPREAD_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kernel_host.h"
#endif

#define PMUCTX_MUX_SPREAD_MAX	64
/* Random strides tried before the round robin's. */
#define PMUCTX_MUX_STRIDE_DRAWS	8

/* The smaller of the on and off arcs, in units. */
static inline unsigned int pmuctx_mux_spread_few(unsigned int m, unsigned int n)
{
	return m < n - m ? m : n - m;
}

/* Rotations within which a spreading step turns every unit on and off. */
static inline unsigned int pmuctx_mux_spread_window(unsigned int m,
						    unsigned int n)
{
	unsigned int few = pmuctx_mux_spread_few(m, n);

	return 4 * ((n + few - 1) / few);
}

/* The step of @stride (2^-32) with @m of @n units on: stride * m / n. */
static inline u32 pmuctx_mux_stride_step(u32 stride, unsigned int m,
					 unsigned int n)
{
	return ((u64)stride * m) / n;
}

/* @m of @n units on at a time, 0 < m < n, moved on by @step a rotation. */
static inline bool pmuctx_mux_step_spreads(u32 step, unsigned int m,
					   unsigned int n)
{
	u32 pos[PMUCTX_MUX_SPREAD_MAX], p;
	unsigned int t, j, k, few;
	u64 widest, arc;

	if (!m || m >= n)
		return true;
	t = pmuctx_mux_spread_window(m, n);
	if (t > PMUCTX_MUX_SPREAD_MAX)
		return true;
	/* Insertion sort: t is small, and this runs with IRQs off. */
	for (j = 0; j < t; j++) {
		p = j * step;
		for (k = j; k && pos[k - 1] > p; k--)
			pos[k] = pos[k - 1];
		pos[k] = p;
	}
	/* pos[0] is 0 (rotation 0): the gap round the end comes back to it. */
	widest = (1ULL << 32) - pos[t - 1];
	for (j = 1; j < t; j++)
		if (pos[j] - pos[j - 1] > widest)
			widest = pos[j] - pos[j - 1];
	few = pmuctx_mux_spread_few(m, n);
	arc = ((u64)few << 32) / n;
	return widest <= arc;
}

/*
 * A stride whose step spreads the turns of @m of @n units: @stride, or
 * one of the next PMUCTX_MUX_STRIDE_DRAWS - 1 that @draw returns, else
 * the round robin's (1 - 2^-32), which always spreads.
 */
static inline u32 pmuctx_mux_spreading_stride(u32 stride, unsigned int m,
					      unsigned int n,
					      u32 (*draw)(void *arg), void *arg)
{
	unsigned int draws = 1;

	while (!pmuctx_mux_step_spreads(pmuctx_mux_stride_step(stride, m, n),
					m, n)) {
		if (draws++ == PMUCTX_MUX_STRIDE_DRAWS)
			return U32_MAX;
		stride = draw(arg);
	}
	return stride;
}

#endif /* _PMUCTX_MUX_SPREAD_H */
