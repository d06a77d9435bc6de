/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An hrtimer set up with its function in one call: hrtimer_setup() from
 * 6.13, which later kernels (7.2) keep alone, hrtimer_init() and an
 * assignment of ->function before.
 * Probe: probes/hrtimer_setup.c.
 */
#ifndef PMUCTX_COMPAT_HRTIMER_H
#define PMUCTX_COMPAT_HRTIMER_H

#include <linux/hrtimer.h>

static inline void pmuctx_hrtimer_setup(struct hrtimer *t,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock, enum hrtimer_mode mode)
{
#ifdef PMUCTX_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

#endif
