/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A perf context's clock, as perf_event_time_now() reads it: perf's clock
 * plus the context's offset while the context is in, its frozen time
 * while out.  Up to 6.x the two are ctx->timeoffset and ctx->time; later
 * kernels (7.2) group them in struct perf_time_ctx (ctx->time.offset,
 * ctx->time.time) beside a guest clock, which the fallback does not read:
 * it counts no guest time.
 * Probe: probes/perf_time_ctx.c.
 */
#ifndef PMUCTX_COMPAT_PERF_CTX_TIME_H
#define PMUCTX_COMPAT_PERF_CTX_TIME_H

#include <linux/perf_event.h>

static inline u64 pmuctx_perf_ctx_offset(struct perf_event_context *ctx)
{
#ifdef PMUCTX_HAVE_PERF_TIME_CTX
	return READ_ONCE(ctx->time.offset);
#else
	return READ_ONCE(ctx->timeoffset);
#endif
}

static inline u64 pmuctx_perf_ctx_frozen(struct perf_event_context *ctx)
{
#ifdef PMUCTX_HAVE_PERF_TIME_CTX
	return READ_ONCE(ctx->time.time);
#else
	return READ_ONCE(ctx->time);
#endif
}

#endif
