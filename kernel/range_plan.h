/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address-range planner: restrict counting to a data or instruction address
 * range with the few address-match registers a CPU has, and report how far
 * the programmed range overshoots the requested one (PAPI's start_off and
 * end_off).  Pure computation, shared by the module and libpmuctx: see
 * Documentation/ranges.rst for the algorithm and the hardware models.
 *
 * Ranges are half-open: [start, end), like PAPI's "array + size".
 */
#ifndef _PMUCTX_RANGE_PLAN_H
#define _PMUCTX_RANGE_PLAN_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include "kernel_host.h"
#endif
#include <linux/pmuctx.h>

/*
 * One bank of address-match registers.  A register matches one naturally
 * aligned block of 2^order bytes, min_order <= order <= max_order, or, when
 * byte_select_order is non-zero, any run of contiguous bytes inside one
 * aligned 2^byte_select_order block (arm64's byte address select).  Byte
 * select must not be coarser than the smallest mask: the greedy tiling
 * relies on it.
 */
struct pmuctx_range_regs {
	unsigned int nr;		/* registers for one range; 0: none */
	unsigned int min_order;
	unsigned int max_order;
	unsigned int byte_select_order;	/* 0: no byte select */
};

struct pmuctx_range_hw {
	const char *name;
	const char *desc;
	struct pmuctx_range_regs data;
	struct pmuctx_range_regs insn;
	unsigned int kinds;		/* BIT(enum pmuctx_range_kind) mask */
	/* non-zero: an exact instruction range within one 2^n-byte page */
	unsigned int fine_insn_order;
};

/* The kinds and the span types are the ABI's (linux/pmuctx.h). */
#define PMUCTX_RANGE_MAX_BLOCKS	PMUCTX_RANGE_MAX_SPANS

struct pmuctx_range_block {
	u64 base;
	u64 size;
	unsigned int order;		/* MASK only: size == 1 << order */
	unsigned int type;		/* enum pmuctx_range_span_type */
};

struct pmuctx_range_plan {
	u64 start, end;			/* programmed: [start, end) */
	u64 start_off;			/* requested start - start */
	u64 end_off;			/* end - requested end */
	unsigned int nr_blocks;		/* ascending, disjoint, contiguous */
	struct pmuctx_range_block blocks[PMUCTX_RANGE_MAX_BLOCKS];
};

/*
 * Plans [start, end) of the given kind on hw.  Returns 0 with *plan filled,
 * -EINVAL for an empty or inverted range or an unknown kind, -EOPNOTSUPP
 * when hw cannot restrict that kind at all, and -ERANGE when no plan that
 * fits hw's registers contains the range.
 */
int pmuctx_range_plan(const struct pmuctx_range_hw *hw, u64 start, u64 end,
		      unsigned int kind, struct pmuctx_range_plan *plan);

/* The named hardware models (Documentation/ranges.rst), NULL-terminated. */
extern const struct pmuctx_range_hw *const pmuctx_range_presets[];

const struct pmuctx_range_hw *pmuctx_range_hw_find(const char *name);
const char *pmuctx_range_kind_name(unsigned int kind);

#endif
