// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx range: show how an address range would be programmed, with PAPI's
 * start and end offsets: on this machine's debug registers as the loaded
 * module plans them (PMUCTX_RANGE_PLAN), or on a named preset of the
 * address-match hardware of another CPU (the planner libpmuctx carries).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pmuctx_abi.h"
#include "range_cli.h"
#include "range_plan.h"

#define RANGE_USAGE "usage: pmuctx range [--range-hw NAME] [--kind data|data-read|data-write|insn] [--exact]\n" \
		    "                    START-END | START+SIZE\n" \
		    "       pmuctx range --list-hw\n"

/* The loaded module's planner, as --range-hw names it. */
#define RANGE_MODULE_HW "module"

/* Without the module: the preset of this machine's own architecture. */
#if defined(__aarch64__)
#define RANGE_DEFAULT_HW "arm64-watchpoints"
#else
#define RANGE_DEFAULT_HW "x86-debugregs"
#endif

/* A preset's registers as PMUCTX_INFO would report them, for the shared printers. */
static void preset_info(const struct pmuctx_range_hw *hw, struct pmuctx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->features = PMUCTX_FEAT_ADDR_RANGE;
	info->range_kinds = hw->kinds;
	info->range_fine_insn_order = hw->fine_insn_order;
	info->range_data = (struct pmuctx_range_caps) {
		.nr = hw->data.nr, .min_order = hw->data.min_order,
		.max_order = hw->data.max_order, .byte_select_order = hw->data.byte_select_order,
	};
	info->range_insn = (struct pmuctx_range_caps) {
		.nr = hw->insn.nr, .min_order = hw->insn.min_order,
		.max_order = hw->insn.max_order, .byte_select_order = hw->insn.byte_select_order,
	};
}

/* The module has range counters: PMUCTX_INFO says so, and @info has its registers. */
static int module_ranges(struct pmuctx_info *info)
{
	return !pmuctx_get_info(info) && (info->features & PMUCTX_FEAT_ADDR_RANGE);
}

static void print_hw(FILE *f, const char *name, const char *desc, const struct pmuctx_info *info)
{
	char text[192];

	fprintf(f, "%-18s %s\n", name, desc);
	range_kinds_describe(info->range_kinds, text, sizeof(text));
	fprintf(f, "%-18s kinds: %s\n", "", text);
	range_caps_describe(&info->range_data, text, sizeof(text));
	fprintf(f, "%-18s data: %s\n", "", text);
	range_caps_describe(&info->range_insn, text, sizeof(text));
	fprintf(f, "%-18s insn: %s", "", text);
	if (info->range_fine_insn_order)
		fprintf(f, "; exact ranges within one %llu-byte page",
			1ULL << info->range_fine_insn_order);
	fputc('\n', f);
}

static void list_hw(FILE *f)
{
	struct pmuctx_info info;
	unsigned int i;

	if (module_ranges(&info))
		print_hw(f, RANGE_MODULE_HW, "this machine, as the loaded module programs its debug registers",
			 &info);
	for (i = 0; pmuctx_range_presets[i]; i++) {
		const struct pmuctx_range_hw *hw = pmuctx_range_presets[i];

		preset_info(hw, &info);
		print_hw(f, hw->name, hw->desc, &info);
	}
}

/* A planner plan as PMUCTX_RANGE_PLAN returns one. */
static void plan_to_range(const struct pmuctx_range_plan *p, struct pmuctx_range *r)
{
	unsigned int i;

	r->nr_spans = p->nr_blocks;
	r->start_off = p->start_off;
	r->end_off = p->end_off;
	for (i = 0; i < p->nr_blocks && i < PMUCTX_RANGE_MAX_SPANS; i++) {
		r->spans[i].base = p->blocks[i].base;
		r->spans[i].size = p->blocks[i].size;
		r->spans[i].order = p->blocks[i].order;
		r->spans[i].type = p->blocks[i].type;
	}
}

/* What the module would answer, on a preset: 0 or a negative errno. */
static int preset_plan(const struct pmuctx_range_hw *hw, const struct range_request *rq,
		       struct pmuctx_range *r)
{
	struct pmuctx_range_plan plan;
	int ret = pmuctx_range_plan(hw, rq->start, rq->end, rq->kind, &plan);

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->config = range_config(rq);
	r->start = rq->start;
	r->end = rq->end;
	if (ret)
		return ret;
	plan_to_range(&plan, r);
	if (rq->exact && (plan.start_off || plan.end_off))
		return -ERANGE;
	return 0;
}

static const char *errno_name(int err)
{
	switch (err) {
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ERANGE: return "ERANGE";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case ENOTTY: return "ENOTTY";
	}
	return "error";
}

int range_report(FILE *f, const struct range_request *rq, const char *hw_name)
{
	const struct pmuctx_range_hw *hw = NULL;
	struct pmuctx_range r, closest;
	struct pmuctx_info info;
	const char *why_preset = NULL;
	int use_module = 0, err = 0;
	char why[512];

	if (hw_name && strcmp(hw_name, RANGE_MODULE_HW)) {
		hw = pmuctx_range_hw_find(hw_name);
		if (!hw) {
			fprintf(stderr, "pmuctx: unknown range hardware '%s'; these are known:\n", hw_name);
			list_hw(stderr);
			return 2;
		}
	} else if (module_ranges(&info)) {
		use_module = 1;
	} else if (hw_name) {
		/* asked for the module by name: no quiet fallback to a model */
		fprintf(f, "Range hardware         : %s\n", RANGE_MODULE_HW);
		fprintf(f, "Error                  : %s\n", pmuctx_device() < 0 ?
			pmuctx_range_strerror(errno) : "the loaded module cannot count address ranges");
		return 1;
	} else {
		if (pmuctx_device() >= 0)
			why_preset = "the loaded module cannot count address ranges";
		else if (errno == ENOENT)
			why_preset = "the module is not loaded";
		else
			why_preset = "/dev/pmuctx cannot be opened";
		hw = pmuctx_range_hw_find(RANGE_DEFAULT_HW);
	}

	if (use_module)
		fprintf(f, "Range hardware         : this machine (module)\n");
	else
		fprintf(f, "Range hardware         : %s (%s%s)\n", hw->name,
			why_preset ? "default preset for this machine's architecture: " :
				     "preset chosen by --range-hw",
			why_preset ? why_preset : "");
	fprintf(f, "Range kind             : %s%s\n", pmuctx_range_kind_name(rq->kind),
		rq->exact ? " (exact)" : "");

	if (use_module) {
		if (pmuctx_range_plan_query(range_config(rq), rq->start, rq->end, &r))
			err = errno;
	} else {
		err = -preset_plan(hw, rq, &r);
		preset_info(hw, &info);
	}
	if (err) {
		const struct pmuctx_range *best = NULL;

		if (err == ERANGE && rq->exact) {
			struct range_request loose = *rq;

			loose.exact = 0;
			if (use_module ? !pmuctx_range_plan_query(range_config(&loose), rq->start,
								  rq->end, &closest) :
					 !preset_plan(hw, &loose, &closest))
				best = &closest;
		}
		range_explain_with(err, rq, &info, use_module ? "this CPU" : hw->name, best,
				   why, sizeof(why));
		fprintf(f, "Error                  : %s: %s\n", errno_name(err), why);
		return 1;
	}
	range_print_plan(f, "", &r, 1);
	return 0;
}

int cmd_range(struct cli *cli, int argc, char **argv)
{
	struct range_request rq = { .kind = PMUCTX_RANGE_DATA };
	const char *hw_name = NULL, *range = NULL;
	int i;

	(void)cli;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list-hw")) {
			list_hw(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--range-hw") && i + 1 < argc) {
			hw_name = argv[++i];
		} else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
			if (range_parse_kind(argv[++i], &rq.kind)) {
				fprintf(stderr, "pmuctx range: unknown kind '%s'\n" RANGE_USAGE,
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--exact")) {
			rq.exact = 1;
		} else if (argv[i][0] != '-' && !range) {
			range = argv[i];
		} else {
			fprintf(stderr, "pmuctx range: unexpected '%s'\n" RANGE_USAGE, argv[i]);
			return 2;
		}
	}
	if (!range) {
		fprintf(stderr, RANGE_USAGE);
		return 2;
	}
	if (range_parse(range, &rq.start, &rq.end)) {
		fprintf(stderr, "pmuctx range: '%s' is not START-END or START+SIZE\n", range);
		return 2;
	}
	return range_report(stdout, &rq, hw_name);
}
