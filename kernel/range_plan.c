// SPDX-License-Identifier: GPL-2.0
/*
 * Address-range planner (Documentation/ranges.rst).
 *
 * A plan tiles one interval [start, end) that contains the request with at
 * most nr register blocks.  Any such cover can be reduced to a tiling of an
 * interval: blocks that miss the request are useless, and aligned blocks are
 * either nested or disjoint, so nested ones can be dropped.  An optimal
 * interval starts at the requested start rounded down to some power of two
 * and ends at the requested end rounded up to some power of two: a block
 * never straddles such a boundary unless the interval starts (or ends) on the
 * next coarser one.  So the planner tries those 65 x 65 candidates, tiles each
 * greedily, and keeps the one with the least over-coverage.  The host tests
 * check this against an exhaustive search.
 */
#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#endif

#include "range_plan.h"

/* A greedy tiling that needs this many blocks is never used. */
#define RANGE_TOO_MANY	(PMUCTX_RANGE_MAX_BLOCKS + 1)

/*
 * The largest order a register can match at addr within len bytes, or -1.
 * Greedy largest-first is optimal because the orders are a contiguous range:
 * any aligned block that fits at addr lies inside the largest one that does.
 */
static int range_largest_order(const struct pmuctx_range_regs *regs,
			       u64 addr, u64 len)
{
	unsigned int order = fls64(len) - 1;

	if (addr && __ffs64(addr) < order)
		order = __ffs64(addr);
	if (order > regs->max_order)
		order = regs->max_order;
	if (order < regs->min_order)
		return -1;
	return order;
}

/*
 * Tiles [start, end) with as few register blocks as possible.  Returns the
 * number of blocks, or RANGE_TOO_MANY when more than regs->nr would be
 * needed or the interval cannot be tiled at all.  blocks may be NULL.
 */
static unsigned int range_tile(const struct pmuctx_range_regs *regs,
			       u64 start, u64 end,
			       struct pmuctx_range_block *blocks)
{
	unsigned int nr = 0;
	u64 addr = start;

	while (addr != end) {
		struct pmuctx_range_block block;
		int order;

		if (nr == regs->nr)
			return RANGE_TOO_MANY;
		order = range_largest_order(regs, addr, end - addr);
		if (order >= 0) {
			block.type = PMUCTX_RANGE_SPAN_MASK;
			block.order = order;
			block.size = 1ULL << order;
		} else if (regs->byte_select_order) {
			/*
			 * Byte select reaches to the end of addr's aligned
			 * granule; stopping short would only leave the rest
			 * of that granule to another byte-select block.
			 */
			u64 granule = 1ULL << regs->byte_select_order;
			u64 room = granule - (addr & (granule - 1));

			block.type = PMUCTX_RANGE_SPAN_BYTES;
			block.order = 0;
			block.size = min(room, end - addr);
		} else {
			return RANGE_TOO_MANY;
		}
		block.base = addr;
		if (blocks)
			blocks[nr] = block;
		nr++;
		addr += block.size;
	}
	return nr;
}

/* addr rounded down to 2^order; order 64 is the whole address space. */
static u64 range_round_down(u64 addr, unsigned int order)
{
	return order >= 64 ? 0 : addr & ~((1ULL << order) - 1);
}

/*
 * The exclusive end rounded up to 2^order, or 0 when that is past the top
 * of the address space (an exclusive end cannot express it).
 */
static u64 range_round_up(u64 end, unsigned int order)
{
	u64 last = end - 1;

	if (order < 64)
		last |= (1ULL << order) - 1;
	else
		last = U64_MAX;
	return last == U64_MAX ? 0 : last + 1;
}

/*
 * Fine mode (Itanium 2's IBR pairs as limits) compares instruction
 * addresses at the granule of the smallest coarse block, regs->min_order
 * (the 16-byte bundle): an unaligned start or end takes in its whole
 * bundle, reported as offsets like a coarse plan's (with EXACT, ERANGE).
 * libpfm refuses such ranges instead (not bundle-aligned).  Rounding stays
 * within the page, which is bundle-aligned.
 */
static int range_plan_fine(const struct pmuctx_range_regs *regs, u64 start,
			   u64 end, struct pmuctx_range_plan *plan)
{
	u64 plan_start = range_round_down(start, regs->min_order);
	u64 plan_end = range_round_up(end, regs->min_order);

	if (!plan_end)
		return -ERANGE;
	memset(plan, 0, sizeof(*plan));
	plan->start = plan_start;
	plan->end = plan_end;
	plan->start_off = start - plan_start;
	plan->end_off = plan_end - end;
	plan->nr_blocks = 1;
	plan->blocks[0].base = plan_start;
	plan->blocks[0].size = plan_end - plan_start;
	plan->blocks[0].type = PMUCTX_RANGE_SPAN_FINE;
	return 0;
}

int pmuctx_range_plan(const struct pmuctx_range_hw *hw, u64 start, u64 end,
		      unsigned int kind, struct pmuctx_range_plan *plan)
{
	const struct pmuctx_range_regs *regs;
	unsigned int best_nr = RANGE_TOO_MANY;
	u64 best_start = 0, best_end = 0;
	u64 best_over = U64_MAX;
	unsigned int low, high;

	if (!hw || !plan || kind >= PMUCTX_RANGE_NR_KINDS || start >= end)
		return -EINVAL;
	regs = kind == PMUCTX_RANGE_INSN ? &hw->insn : &hw->data;
	if (!(hw->kinds & BIT(kind)))
		return -EOPNOTSUPP;

	/* Fine mode compares the page of the last byte, not of the end. */
	if (kind == PMUCTX_RANGE_INSN && hw->fine_insn_order &&
	    hw->fine_insn_order < 64 &&
	    !((start ^ (end - 1)) >> hw->fine_insn_order))
		return range_plan_fine(regs, start, end, plan);

	if (!regs->nr)
		return -EOPNOTSUPP;
	if (regs->nr > PMUCTX_RANGE_MAX_BLOCKS || regs->min_order > 63 ||
	    regs->max_order > 63 || regs->min_order > regs->max_order ||
	    regs->byte_select_order > regs->min_order)
		return -EINVAL;

	for (low = 0; low <= 64; low++) {
		u64 plan_start = range_round_down(start, low);

		/* Coarser roundings only repeat the same start. */
		if (low && plan_start == range_round_down(start, low - 1))
			continue;
		for (high = 0; high <= 64; high++) {
			u64 plan_end = range_round_up(end, high);
			u64 start_off = start - plan_start;
			unsigned int nr;
			u64 over;

			if (!plan_end)
				break;
			if (high && plan_end == range_round_up(end, high - 1))
				continue;
			if (plan_end - end > U64_MAX - start_off)
				break;
			over = start_off + (plan_end - end);
			if (over > best_over)
				break;
			nr = range_tile(regs, plan_start, plan_end, NULL);
			if (nr > regs->nr)
				continue;
			/* Ties: fewer registers, then the smaller start_off. */
			if (over < best_over || nr < best_nr) {
				best_over = over;
				best_nr = nr;
				best_start = plan_start;
				best_end = plan_end;
			}
		}
	}
	if (best_nr == RANGE_TOO_MANY)
		return -ERANGE;

	memset(plan, 0, sizeof(*plan));
	plan->start = best_start;
	plan->end = best_end;
	plan->start_off = start - best_start;
	plan->end_off = best_end - end;
	plan->nr_blocks = range_tile(regs, best_start, best_end, plan->blocks);
	return 0;
}

/*
 * The models below are what the architectures define; the reasons for each
 * number are in Documentation/ranges.rst.
 */
static const struct pmuctx_range_hw range_hw_itanium2 = {
	.name = "itanium2",
	.desc = "Itanium 2 DBR/IBR pairs: 4 masked pairs; fine 4 KB instruction ranges",
	.data = { .nr = 4, .min_order = 0, .max_order = 56 },
	.insn = { .nr = 4, .min_order = 4, .max_order = 56 },
	.kinds = BIT(PMUCTX_RANGE_INSN) | BIT(PMUCTX_RANGE_DATA),
	.fine_insn_order = 12,
};

static const struct pmuctx_range_hw range_hw_arm64 = {
	.name = "arm64-watchpoints",
	.desc = "Armv8 debug: 4 watchpoints (mask 8 B..2 GB, byte select), 6 breakpoints",
	.data = { .nr = 4, .min_order = 3, .max_order = 31,
		  .byte_select_order = 3 },
	.insn = { .nr = 6, .min_order = 2, .max_order = 2 },
	.kinds = BIT(PMUCTX_RANGE_INSN) | BIT(PMUCTX_RANGE_DATA) |
		 BIT(PMUCTX_RANGE_DATA_WRITE) | BIT(PMUCTX_RANGE_DATA_READ),
};

static const struct pmuctx_range_hw range_hw_x86 = {
	.name = "x86-debugregs",
	.desc = "x86 DR0-DR3: 1, 2, 4 or 8 aligned bytes; no read-only match",
	.data = { .nr = 4, .min_order = 0, .max_order = 3 },
	.insn = { .nr = 4, .min_order = 0, .max_order = 0 },
	.kinds = BIT(PMUCTX_RANGE_INSN) | BIT(PMUCTX_RANGE_DATA) |
		 BIT(PMUCTX_RANGE_DATA_WRITE),
};

const struct pmuctx_range_hw *const pmuctx_range_presets[] = {
	&range_hw_itanium2,
	&range_hw_arm64,
	&range_hw_x86,
	NULL,
};

const struct pmuctx_range_hw *pmuctx_range_hw_find(const char *name)
{
	unsigned int i;

	for (i = 0; pmuctx_range_presets[i]; i++)
		if (!strcmp(pmuctx_range_presets[i]->name, name))
			return pmuctx_range_presets[i];
	return NULL;
}

const char *pmuctx_range_kind_name(unsigned int kind)
{
	static const char *const names[PMUCTX_RANGE_NR_KINDS] = {
		[PMUCTX_RANGE_INSN] = "insn",
		[PMUCTX_RANGE_DATA] = "data",
		[PMUCTX_RANGE_DATA_WRITE] = "data-write",
		[PMUCTX_RANGE_DATA_READ] = "data-read",
	};

	return kind < PMUCTX_RANGE_NR_KINDS ? names[kind] : "?";
}
