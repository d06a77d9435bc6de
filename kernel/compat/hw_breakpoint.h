/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A breakpoint's hits delivered to pmuctx's own overflow handler.  arm64
 * steps over the watched instruction or access only for a breakpoint
 * whose handler is perf's default; it also did for a handler installed
 * over the default while the default was kept as orig_overflow_handler
 * (BPF's way, the field exists with CONFIG_BPF_SYSCALL).  Newer kernels
 * (6.12) call BPF beside the handler and have no such field, so no other
 * handler gets the step: an arm64 breakpoint cannot call pmuctx per hit
 * there, and range sampling is refused (-EOPNOTSUPP, no
 * PMUCTX_FEAT_RANGE_SAMPLES; counting needs no handler).  x86 steps
 * nothing (the resume flag does it).
 * Probe: probes/orig_overflow_handler.c.
 */
#ifndef PMUCTX_COMPAT_HW_BREAKPOINT_H
#define PMUCTX_COMPAT_HW_BREAKPOINT_H

#include <linux/errno.h>
#include <linux/perf_event.h>

/* Whether a breakpoint with pmuctx's handler still gets its step. */
static inline bool pmuctx_bp_handler_keeps_step(void)
{
#if !defined(CONFIG_ARM64) || defined(PMUCTX_HAVE_ORIG_OVERFLOW_HANDLER)
	return true;
#else
	return false;
#endif
}

/* Before @bp->overflow_handler is replaced: 0, or why it cannot be. */
static inline int pmuctx_bp_keep_step(struct perf_event *bp)
{
	if (!pmuctx_bp_handler_keeps_step())
		return -EOPNOTSUPP;
#if defined(CONFIG_ARM64) && defined(PMUCTX_HAVE_ORIG_OVERFLOW_HANDLER)
	bp->orig_overflow_handler = bp->overflow_handler;
#endif
	return 0;
}

#endif
