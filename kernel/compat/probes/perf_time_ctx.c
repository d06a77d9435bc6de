// SPDX-License-Identifier: GPL-2.0
/* Probe: a perf context's time and offset are in struct perf_time_ctx (7.x). */
#include <linux/perf_event.h>

u64 pmuctx_probe(struct perf_event_context *ctx);
u64 pmuctx_probe(struct perf_event_context *ctx)
{
	return ctx->time.time + ctx->time.offset;
}
