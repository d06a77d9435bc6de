// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the address-range planner (kernel/range_plan.c).  Every
 * expectation is computed here without the planner's own reasoning: plans
 * are checked block by block against the hardware description, optima come
 * from an exhaustive search, and the Itanium 2 numbers are PAPI's published
 * ones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "range_plan.h"
#include "tap.h"

#define X "0x%" PRIx64

static const struct pmuctx_range_hw *preset(const char *name)
{
	const struct pmuctx_range_hw *hw = pmuctx_range_hw_find(name);

	if (!hw) {
		printf("Bail out! preset %s missing\n", name);
		exit(1);
	}
	return hw;
}

static const struct pmuctx_range_regs *regs_of(const struct pmuctx_range_hw *hw, unsigned int kind)
{
	return kind == PMUCTX_RANGE_INSN ? &hw->insn : &hw->data;
}

/* Why the plan is not a valid answer to [s, e), or NULL when it is. */
static const char *plan_error(const struct pmuctx_range_hw *hw, unsigned int kind,
			      uint64_t s, uint64_t e, const struct pmuctx_range_plan *p)
{
	const struct pmuctx_range_regs *regs = regs_of(hw, kind);
	static char why[160];
	uint64_t next;
	unsigned int i;

	if (p->start > s || p->end < e)
		return "does not contain the request";
	if (p->start_off != s - p->start || p->end_off != p->end - e)
		return "offsets disagree with start/end";
	if (p->nr_blocks < 1 || p->nr_blocks > PMUCTX_RANGE_MAX_BLOCKS)
		return "block count out of bounds";
	next = p->start;
	for (i = 0; i < p->nr_blocks; i++) {
		const struct pmuctx_range_block *b = &p->blocks[i];

		if (b->base != next || !b->size) {
			snprintf(why, sizeof(why), "block %u at " X " leaves a gap or overlap", i, b->base);
			return why;
		}
		switch (b->type) {
		case PMUCTX_RANGE_SPAN_MASK:
			if (b->order > 63 || b->size != (uint64_t)1 << b->order)
				return "mask block size is not 2^order";
			if (b->order < regs->min_order || b->order > regs->max_order)
				return "mask block order outside the hardware's";
			if (b->base % b->size)
				return "mask block not aligned";
			if (p->nr_blocks > regs->nr)
				return "more blocks than registers";
			break;
		case PMUCTX_RANGE_SPAN_BYTES: {
			uint64_t granule;

			if (!regs->byte_select_order)
				return "byte-select block on hardware without byte select";
			granule = (uint64_t)1 << regs->byte_select_order;
			if (b->size > granule || b->base / granule != (b->base + b->size - 1) / granule)
				return "byte-select block crosses its granule";
			if (p->nr_blocks > regs->nr)
				return "more blocks than registers";
			break;
		}
		case PMUCTX_RANGE_SPAN_FINE:
			if (kind != PMUCTX_RANGE_INSN || !hw->fine_insn_order)
				return "fine block on data or without fine mode";
			/* the request, out to whole bundles (the smallest coarse block) */
			if (p->nr_blocks != 1 ||
			    b->base != (s & ~((1ULL << regs->min_order) - 1)) ||
			    b->base + b->size != ((e + (1ULL << regs->min_order) - 1) &
						  ~((1ULL << regs->min_order) - 1)))
				return "fine block is not the request rounded out to bundles";
			if (b->base >> hw->fine_insn_order != (b->base + b->size - 1) >> hw->fine_insn_order)
				return "fine block crosses its page";
			break;
		default:
			return "unknown block type";
		}
		next = b->base + b->size;
	}
	if (next != p->end)
		return "blocks do not end at end";
	return NULL;
}

/*
 * Exhaustive optimum for small addresses: for every start S <= s, a dynamic
 * programme over every end gives the fewest register blocks tiling [S, x).
 * Requests lie below 64, blocks are at most 32 bytes and at most 4 are used,
 * so every plan ends below BRUTE_SPACE.
 */
#define BRUTE_SPACE 256
#define BRUTE_NO_PLAN 1000

struct brute_result {
	int found;
	uint64_t over;		/* least start_off + end_off */
	unsigned int nr;	/* fewest blocks at that over-coverage */
};

static struct brute_result brute_force(const struct pmuctx_range_regs *regs, unsigned int s,
				       unsigned int e)
{
	struct brute_result best = { 0, UINT64_MAX, BRUTE_NO_PLAN };
	unsigned int dp[BRUTE_SPACE + 1];
	unsigned int S, x, o, len;

	for (S = 0; S <= s; S++) {
		for (x = 0; x <= BRUTE_SPACE; x++)
			dp[x] = BRUTE_NO_PLAN;
		dp[S] = 0;
		for (x = S; x < BRUTE_SPACE; x++) {
			if (dp[x] >= regs->nr)
				continue;
			for (o = regs->min_order; o <= regs->max_order; o++) {
				len = 1u << o;
				if (x % len == 0 && x + len <= BRUTE_SPACE && dp[x + len] > dp[x] + 1)
					dp[x + len] = dp[x] + 1;
			}
			if (regs->byte_select_order) {
				unsigned int granule = 1u << regs->byte_select_order;

				for (len = 1; len <= granule - x % granule; len++)
					if (x + len <= BRUTE_SPACE && dp[x + len] > dp[x] + 1)
						dp[x + len] = dp[x] + 1;
			}
		}
		for (x = e; x <= BRUTE_SPACE; x++) {
			uint64_t over = (s - S) + (x - e);

			if (dp[x] > regs->nr)
				continue;
			if (over < best.over || (over == best.over && dp[x] < best.nr)) {
				best.found = 1;
				best.over = over;
				best.nr = dp[x];
			}
		}
	}
	return best;
}

/* Deterministic, seeded: a failure is reproducible from its message. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned int rng_below(unsigned int n)
{
	return rng() % n;
}

static void test_against_brute_force(void)
{
	/* Plans are invariant under translation by a multiple of a large power of two. */
	static const uint64_t bases[] = { 0, 0x6000000004040000ull, 0xffffffffff000000ull };
	unsigned int iter, mismatches = 0, checked = 0, errors = 0, bi;

	for (iter = 0; iter < 4000; iter++) {
		struct pmuctx_range_hw hw = { .name = "random", .kinds = BIT(PMUCTX_RANGE_DATA) };
		struct pmuctx_range_regs *r = &hw.data;
		struct brute_result want;
		unsigned int s, e;

		r->nr = 1 + rng_below(4);
		r->min_order = rng_below(4);
		r->max_order = r->min_order + rng_below(6 - r->min_order);
		/* arm64-like: byte select at or below the smallest mask */
		r->byte_select_order = rng_below(2) ? 1 + rng_below(r->min_order + 1) : 0;
		if (r->byte_select_order > r->min_order)
			r->byte_select_order = 0;
		s = rng_below(63);
		e = s + 1 + rng_below(64 - s);
		want = brute_force(r, s, e);
		for (bi = 0; bi < sizeof(bases) / sizeof(bases[0]); bi++) {
			struct pmuctx_range_plan p;
			const char *why;
			int ret = pmuctx_range_plan(&hw, bases[bi] + s, bases[bi] + e,
						    PMUCTX_RANGE_DATA, &p);

			checked++;
			if (!want.found && ret == -ERANGE)
				continue;
			if (ret || !want.found || p.start_off + p.end_off != want.over ||
			    p.nr_blocks != want.nr) {
				if (mismatches++ < 5)
					diag("iter %u nr %u orders %u..%u bytesel %u [" X ", " X "): "
					     "ret %d over %" PRIu64 " blocks %u; optimum %s over %" PRIu64
					     " blocks %u", iter, r->nr, r->min_order, r->max_order,
					     r->byte_select_order, bases[bi] + s, bases[bi] + e, ret,
					     ret ? 0 : p.start_off + p.end_off, ret ? 0 : p.nr_blocks,
					     want.found ? "found" : "none", want.over, want.nr);
				continue;
			}
			why = plan_error(&hw, PMUCTX_RANGE_DATA, bases[bi] + s, bases[bi] + e, &p);
			if (why && errors++ < 5)
				diag("iter %u [" X ", " X "): %s", iter, bases[bi] + s,
				     bases[bi] + e, why);
		}
	}
	ok(!mismatches, "%u random plans match the exhaustive optimum (over-coverage, then blocks); %u differ",
	   checked, mismatches);
	ok(!errors, "every random plan is valid for its hardware; %u invalid", errors);
}

/*
 * Scaling every address and every order by 2^shift scales the optimum:
 * this carries the exhaustive search up to blocks of 2^55 and addresses
 * near 2^57, where Itanium-sized masks live.
 */
static void test_scaled_brute_force(void)
{
	unsigned int iter, mismatches = 0, errors = 0, largest = 0;

	for (iter = 0; iter < 3000; iter++) {
		struct pmuctx_range_hw hw = { .name = "scaled", .kinds = BIT(PMUCTX_RANGE_DATA) };
		struct pmuctx_range_regs small;
		unsigned int shift = 1 + rng_below(50), s, e;
		struct brute_result want;
		struct pmuctx_range_plan p;
		int ret;

		small.nr = 1 + rng_below(4);
		small.min_order = rng_below(4);
		small.max_order = small.min_order + rng_below(6 - small.min_order);
		small.byte_select_order = rng_below(2) ? small.min_order : 0;
		s = rng_below(63);
		e = s + 1 + rng_below(64 - s);
		want = brute_force(&small, s, e);

		hw.data = small;
		hw.data.min_order += shift;
		hw.data.max_order += shift;
		if (small.byte_select_order)
			hw.data.byte_select_order += shift;
		ret = pmuctx_range_plan(&hw, (uint64_t)s << shift, (uint64_t)e << shift,
					PMUCTX_RANGE_DATA, &p);
		if (!want.found ? ret != -ERANGE :
		    ret || p.start_off + p.end_off != want.over << shift || p.nr_blocks != want.nr) {
			if (mismatches++ < 5)
				diag("scaled iter %u shift %u [%u, %u) nr %u orders %u..%u: ret %d",
				     iter, shift, s, e, small.nr, small.min_order, small.max_order, ret);
			continue;
		}
		if (!ret && plan_error(&hw, PMUCTX_RANGE_DATA, (uint64_t)s << shift,
				       (uint64_t)e << shift, &p))
			errors++;
		if (!ret && hw.data.max_order > largest)
			largest = hw.data.max_order;
	}
	ok(!mismatches && !errors && largest >= 50,
	   "scaled by up to 2^50, random plans still match the exhaustive optimum");
}

/* The same exhaustive search for the presets with small blocks. */
static void test_presets_against_brute_force(const char *name, unsigned int kind)
{
	const struct pmuctx_range_hw *hw = preset(name);
	struct pmuctx_range_regs capped = *regs_of(hw, kind);
	unsigned int s, e, mismatches = 0, checked = 0;

	/* Only plans of blocks up to 32 bytes are comparable; skip others. */
	if (capped.max_order > 5)
		capped.max_order = 5;
	for (s = 0; s < 48; s++) {
		for (e = s + 1; e <= 64; e++) {
			struct brute_result want = brute_force(&capped, s, e);
			uint64_t base = 0x7ffe00001000ull;
			struct pmuctx_range_plan p;
			int ret = pmuctx_range_plan(hw, base + s, base + e, kind, &p);
			int fits = ret == 0 && !plan_error(hw, kind, base + s, base + e, &p);
			unsigned int i, big = 0;

			for (i = 0; ret == 0 && i < p.nr_blocks; i++)
				big |= p.blocks[i].size > 32;
			if (ret == 0 && big)
				continue;
			checked++;
			if (want.found ? !fits || p.start_off + p.end_off != want.over ||
					 p.nr_blocks != want.nr
				       : ret != -ERANGE) {
				if (mismatches++ < 5)
					diag("%s [%u, %u): ret %d over %" PRIu64 "; optimum %s %" PRIu64,
					     name, s, e, ret, ret ? 0 : p.start_off + p.end_off,
					     want.found ? "over" : "none", want.over);
			}
		}
	}
	ok(!mismatches && checked > 500, "%s %s: %u small ranges match the exhaustive optimum",
	   name, pmuctx_range_kind_name(kind), checked);
}

/* The one-register fallback: the smallest aligned 2^k block holding [s, e). */
static int single_block_over(const struct pmuctx_range_regs *regs, uint64_t s, uint64_t e,
			     uint64_t *over)
{
	unsigned int k = regs->min_order;

	while (k < 64 && (s >> k) != ((e - 1) >> k))
		k++;
	if (k > regs->max_order || k >= 64)
		return 0;
	*over = ((uint64_t)1 << k) - (e - s);
	return 1;
}

static void test_never_worse_than_one_block(const char *name)
{
	const struct pmuctx_range_hw *hw = preset(name);
	unsigned int iter, worse = 0, invalid = 0, strictly_better = 0;

	for (iter = 0; iter < 20000; iter++) {
		/* heap- and stack-like addresses, sizes from a byte to a gigabyte */
		uint64_t s = (iter & 1 ? 0x00005555aa000000ull : 0x00007ffc00000000ull) +
			     (rng() & 0xffffff) * (1u << rng_below(4));
		uint64_t e = s + 1 + (rng() & ((1ull << rng_below(31)) - 1));
		struct pmuctx_range_plan p;
		uint64_t fallback;
		int ret = pmuctx_range_plan(hw, s, e, PMUCTX_RANGE_DATA, &p);

		if (!single_block_over(&hw->data, s, e, &fallback))
			continue;
		if (ret || plan_error(hw, PMUCTX_RANGE_DATA, s, e, &p)) {
			if (invalid++ < 3)
				diag("%s [" X ", " X "): ret %d", name, s, e, ret);
			continue;
		}
		if (p.start_off + p.end_off > fallback) {
			if (worse++ < 3)
				diag("%s [" X ", " X "): over %" PRIu64 " > one block's %" PRIu64,
				     name, s, e, p.start_off + p.end_off, fallback);
		} else if (p.start_off + p.end_off < fallback) {
			strictly_better++;
		}
	}
	ok(!worse && !invalid, "%s: never more over-coverage than one covering block", name);
	/* If the planner degenerated to one block, the comparison above proves nothing. */
	ok(strictly_better > 1000, "%s: strictly less over-coverage in %u cases", name,
	   strictly_better);
}

/* Ranges built from register blocks must come back exact. */
static void test_exact_ranges(const char *name)
{
	const struct pmuctx_range_hw *hw = preset(name);
	const struct pmuctx_range_regs *r = &hw->data;
	unsigned int iter, inexact = 0;

	for (iter = 0; iter < 5000; iter++) {
		uint64_t s = 0x0000600000000000ull + ((rng() & 0xffffffff) << r->min_order);
		uint64_t e = s;
		unsigned int n = 1 + rng_below(r->nr), i;
		struct pmuctx_range_plan p;

		for (i = 0; i < n; i++) {
			/* a random block size the end is aligned to */
			unsigned int align = e ? __builtin_ctzll(e) : 63;
			unsigned int top = align < r->max_order ? align : r->max_order;
			unsigned int o = r->min_order + rng_below(top - r->min_order + 1);

			if (o > 20)
				o = r->min_order + rng_below(21 - r->min_order);
			e += (uint64_t)1 << o;
		}
		if (pmuctx_range_plan(hw, s, e, PMUCTX_RANGE_DATA, &p) || p.start_off || p.end_off ||
		    plan_error(hw, PMUCTX_RANGE_DATA, s, e, &p)) {
			if (inexact++ < 3)
				diag("%s [" X ", " X ") of %u blocks not exact", name, s, e, n);
		}
	}
	ok(!inexact, "%s: ranges made of up to %u register blocks have zero offsets", name, r->nr);
}

struct papi_case {
	uint64_t start, end, start_off, end_off;
	int exact_published;	/* the published plan is optimal: expect it exactly */
};

/*
 * PAPI 3.5's data_range test on Itanium 2 ("Data and Instruction Range
 * Restrictions in PAPI"): the pointers and heap arrays, whose published
 * offsets are the least possible, and the static arrays, where perfmon left
 * over-coverage a better plan avoids.
 */
static const struct papi_case papi_cases[] = {
	{ 0x6000000000011640ull, 0x6000000000011648ull, 0, 0, 1 },
	{ 0x6000000000011628ull, 0x6000000000011630ull, 0, 0, 1 },
	{ 0x6000000000011638ull, 0x6000000000011640ull, 0, 0, 1 },
	{ 0x6000000004044010ull, 0x6000000004054010ull, 0x10, 0, 1 },
	{ 0x6000000004054020ull, 0x6000000004064020ull, 0x20, 0, 1 },
	{ 0x6000000004064030ull, 0x6000000004074030ull, 0x30, 0x10, 1 },
	{ 0x60000000000218ccull, 0x60000000000318ccull, 0x18cc, 0x734, 0 },
	{ 0x60000000000118ccull, 0x60000000000218ccull, 0x18cc, 0x734, 0 },
	{ 0x60000000000318ccull, 0x60000000000418ccull, 0x18cc, 0x734, 0 },
};

static void test_papi_itanium2(void)
{
	const struct pmuctx_range_hw *hw = preset("itanium2");
	unsigned int i;

	for (i = 0; i < sizeof(papi_cases) / sizeof(papi_cases[0]); i++) {
		const struct papi_case *c = &papi_cases[i];
		struct pmuctx_range_plan p;
		int ret = pmuctx_range_plan(hw, c->start, c->end, PMUCTX_RANGE_DATA, &p);
		const char *why = ret ? "planner failed" : plan_error(hw, PMUCTX_RANGE_DATA,
								   c->start, c->end, &p);

		if (!ret)
			diag("[" X ", " X "): start_off 0x%" PRIx64 " end_off 0x%" PRIx64
			     " in %u blocks (PAPI: 0x%" PRIx64 ", 0x%" PRIx64 ")", c->start, c->end,
			     p.start_off, p.end_off, p.nr_blocks, c->start_off, c->end_off);
		if (c->exact_published)
			ok(!why && p.start_off == c->start_off && p.end_off == c->end_off,
			   "itanium2 PAPI case %u: offsets 0x%" PRIx64 "/0x%" PRIx64 " as published",
			   i, c->start_off, c->end_off);
		else
			ok(!why && p.start_off + p.end_off < c->start_off + c->end_off,
			   "itanium2 PAPI case %u: less over-coverage than perfmon's 0x%" PRIx64,
			   i, c->start_off + c->end_off);
	}
}

struct errno_case {
	const char *hw;
	unsigned int kind;
	uint64_t start, end;
	int ret;
	unsigned int nr_blocks;	/* when ret == 0 */
	uint64_t over;		/* when ret == 0 */
	const char *what;
};

/* Architectural limits, each with the reason it holds. */
static const struct errno_case errno_cases[] = {
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1000, 0x1000, -EINVAL, 0, 0, "empty range" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1001, 0x1000, -EINVAL, 0, 0, "inverted range" },
	{ "x86-debugregs", PMUCTX_RANGE_NR_KINDS, 0x1000, 0x1008, -EINVAL, 0, 0, "unknown kind" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA_READ, 0x1000, 0x1008, -EOPNOTSUPP, 0, 0,
	  "DR7 has no read-only condition" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA_WRITE, 0x1000, 0x1020, 0, 4, 0,
	  "four 8-byte registers cover 32 aligned bytes" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1000, 0x1021, -ERANGE, 0, 0,
	  "33 bytes need a fifth register" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1001, 0x1003, 0, 2, 0,
	  "two unaligned bytes need two 1-byte registers" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1003, 0x1006, 0, 2, 0,
	  "3 bytes at 0x1003: a 1-byte and a 2-byte register" },
	{ "x86-debugregs", PMUCTX_RANGE_DATA, 0x1001, 0x1020, 0, 4, 1,
	  "31 bytes at 0x1001: four 8-byte registers from 0x1000" },
	{ "x86-debugregs", PMUCTX_RANGE_INSN, 0x401000, 0x401004, 0, 4, 0,
	  "instruction breakpoints are 1 byte each" },
	{ "x86-debugregs", PMUCTX_RANGE_INSN, 0x401000, 0x401005, -ERANGE, 0, 0,
	  "a fifth instruction byte" },
	{ "arm64-watchpoints", PMUCTX_RANGE_DATA_READ, 0x1003, 0x1006, 0, 1, 0,
	  "byte select: 3 bytes inside one doubleword" },
	{ "arm64-watchpoints", PMUCTX_RANGE_DATA, 0x1003, 0x100b, 0, 2, 0,
	  "byte select cannot cross a doubleword" },
	{ "arm64-watchpoints", PMUCTX_RANGE_DATA, 0x80000000, 0x100000000ull, 0, 1, 0,
	  "MASK=31: one aligned 2 GB watchpoint" },
	{ "arm64-watchpoints", PMUCTX_RANGE_DATA, 0, 0x200000000ull, 0, 4, 0,
	  "four 2 GB watchpoints" },
	{ "arm64-watchpoints", PMUCTX_RANGE_DATA, 0, 0x200000001ull, -ERANGE, 0, 0,
	  "past four 2 GB watchpoints" },
	{ "arm64-watchpoints", PMUCTX_RANGE_INSN, 0x400000, 0x400018, 0, 6, 0,
	  "six breakpoints, one A64 instruction each" },
	{ "arm64-watchpoints", PMUCTX_RANGE_INSN, 0x400000, 0x40001c, -ERANGE, 0, 0,
	  "a seventh instruction" },
	{ "arm64-watchpoints", PMUCTX_RANGE_INSN, 0x400001, 0x400004, 0, 1, 1,
	  "instruction addresses are word aligned" },
	{ "itanium2", PMUCTX_RANGE_DATA_WRITE, 0x1000, 0x1008, -EOPNOTSUPP, 0, 0,
	  "the DBR model here counts loads and stores together" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x4000f0, 0x400ff0, 0, 1, 0,
	  "fine mode: exact within one 4 KB page" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x400000, 0x401000, 0, 1, 0,
	  "fine mode: a whole page (its last byte decides)" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x1001, 0x1005, 0, 1, 0xc,
	  "fine mode: unaligned ends take whole 16-byte bundles, 1 before and 0xb after" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x400ff8, 0x401000, 0, 1, 0x8,
	  "fine mode: an unaligned start within the page's last bundle" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x400ff0, 0x401010, 0, 2, 0,
	  "across a page: coarse, two 16-byte bundles" },
	{ "itanium2", PMUCTX_RANGE_INSN, 0x400ff1, 0x401001, 0, 2, 0x10,
	  "coarse instruction ranges are whole bundles" },
	{ "itanium2", PMUCTX_RANGE_DATA, 0xfffffffffffffff0ull, 0xffffffffffffffffull, 0, 4, 0,
	  "the top of the address space, short of the last byte" },
};

static void test_errnos(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(errno_cases) / sizeof(errno_cases[0]); i++) {
		const struct errno_case *c = &errno_cases[i];
		const struct pmuctx_range_hw *hw = preset(c->hw);
		struct pmuctx_range_plan p;
		int ret = pmuctx_range_plan(hw, c->start, c->end, c->kind, &p);
		const char *why = NULL;

		if (ret == 0 && c->ret == 0) {
			why = plan_error(hw, c->kind, c->start, c->end, &p);
			if (!why && p.nr_blocks != c->nr_blocks)
				why = "block count";
			if (!why && p.start_off + p.end_off != c->over)
				why = "over-coverage";
		}
		ok(ret == c->ret && !why, "%s %s [" X ", " X "): %d (%s)%s%s", c->hw,
		   pmuctx_range_kind_name(c->kind), c->start, c->end, c->ret, c->what,
		   why ? ": wrong " : "", why ? why : "");
		if (ret != c->ret)
			diag("got %d", ret);
	}
}

static void test_presets(void)
{
	unsigned int n = 0;

	while (pmuctx_range_presets[n])
		n++;
	ok(n == 3 && pmuctx_range_hw_find("itanium2") && pmuctx_range_hw_find("x86-debugregs") &&
	   pmuctx_range_hw_find("arm64-watchpoints") && !pmuctx_range_hw_find("itanium"),
	   "three presets, found by exact name only");
	ok(pmuctx_range_plan(NULL, 0, 1, PMUCTX_RANGE_DATA, NULL) == -EINVAL,
	   "no hardware description: -EINVAL");
	{
		struct pmuctx_range_hw bad = { .name = "bad", .kinds = BIT(PMUCTX_RANGE_DATA),
			.data = { .nr = 4, .min_order = 2, .max_order = 8, .byte_select_order = 3 } };
		struct pmuctx_range_plan p;
		int coarse_bytes = pmuctx_range_plan(&bad, 0x1000, 0x1003, PMUCTX_RANGE_DATA, &p);
		int too_many, inverted_orders;

		bad.data.byte_select_order = 0;
		bad.data.nr = PMUCTX_RANGE_MAX_BLOCKS + 1;
		too_many = pmuctx_range_plan(&bad, 0x1000, 0x1004, PMUCTX_RANGE_DATA, &p);
		bad.data.nr = 4;
		bad.data.min_order = 9;
		inverted_orders = pmuctx_range_plan(&bad, 0x1000, 0x1004, PMUCTX_RANGE_DATA, &p);
		ok(coarse_bytes == -EINVAL && too_many == -EINVAL && inverted_orders == -EINVAL,
		   "inconsistent hardware descriptions: -EINVAL (%d %d %d)", coarse_bytes, too_many,
		   inverted_orders);
	}
}

int main(void)
{
	test_presets();
	test_errnos();
	test_papi_itanium2();
	test_exact_ranges("itanium2");
	test_exact_ranges("arm64-watchpoints");
	test_exact_ranges("x86-debugregs");
	test_never_worse_than_one_block("itanium2");
	test_never_worse_than_one_block("arm64-watchpoints");
	test_presets_against_brute_force("x86-debugregs", PMUCTX_RANGE_DATA);
	test_presets_against_brute_force("x86-debugregs", PMUCTX_RANGE_INSN);
	test_presets_against_brute_force("arm64-watchpoints", PMUCTX_RANGE_DATA);
	test_presets_against_brute_force("arm64-watchpoints", PMUCTX_RANGE_INSN);
	test_presets_against_brute_force("itanium2", PMUCTX_RANGE_DATA);
	test_against_brute_force();
	test_scaled_brute_force();
	return done_testing();
}
