/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpmuctx-perf: perf_event_open's requests as pmuctx counters.  This half
 * decides, without touching a file descriptor, what a perf_event_attr
 * becomes (Documentation/tools.rst, "perf's own tools on pmuctx"); shim.c
 * opens it and serves the descriptor's reads and ioctls.
 */
#ifndef PMUCTX_PERF_ATTR_MAP_H
#define PMUCTX_PERF_ATTR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/pmuctx.h>

struct pmuctx_evdb;

enum perf_map_route {
	PERF_MAP_PMUCTX,	/* a pmuctx counter: @attr is filled */
	PERF_MAP_KERNEL,	/* not pmuctx's business: the kernel's perf_event_open */
	PERF_MAP_REFUSED,	/* -1 with @err: what perf expects, @why says why */
};

struct perf_map {
	enum perf_map_route route;
	int err;			/* PERF_MAP_REFUSED: the errno */
	const char *why;		/* PERF_MAP_REFUSED: for PMUCTX_PERF_DEBUG */
	char why_buf[256];		/* libpmuctx's own reason, when it has one */
	struct pmuctx_attr attr;	/* PERF_MAP_PMUCTX: flags get no group gating here */
	unsigned int open_flags;	/* PMUCTX_OPEN_* */
	bool task_on_cpu;		/* a task's event on one CPU (pid >= 0, cpu >= 0) */
};

/* arm64's link register in sample_regs_user (PERF_REG_ARM64_LR), which perf record -g asks for. */
#define PERF_MAP_ARM64_LR_MASK	(1ULL << 30)

/* perf's read_format bits the shim serves (PERF_FORMAT_LOST reads as 0). */
#define PERF_MAP_READ_FORMATS	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | \
				 PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST)

/* @m is refused with @err; @why says why (PMUCTX_PERF_DEBUG). */
void perf_map_refuse(struct perf_map *m, int err, const char *why);

/*
 * Map @pa (already size-checked into a full struct) for target @pid on
 * @cpu with perf_event_open @flags.  @evdb_get opens the event database
 * for generic hardware and cache events when first needed (NULL: none).
 */
void perf_map_attr(const struct perf_event_attr *pa, int pid, int cpu, unsigned long flags,
		   struct pmuctx_evdb *(*evdb_get)(void), struct perf_map *m);

/* The name libpmuctx knows a PERF_TYPE_HW_CACHE config by, or -1. */
int perf_map_cache_name(unsigned long long config, char *buf, size_t len);

#endif
