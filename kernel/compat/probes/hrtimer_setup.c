// SPDX-License-Identifier: GPL-2.0
/* Probe: hrtimer_setup() sets a timer up with its function (6.13). */
#include <linux/hrtimer.h>

static enum hrtimer_restart pmuctx_probe_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void pmuctx_probe(struct hrtimer *t);
void pmuctx_probe(struct hrtimer *t)
{
	hrtimer_setup(t, pmuctx_probe_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
