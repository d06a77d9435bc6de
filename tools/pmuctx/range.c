// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx range: show how an address range would be programmed on a model of
 * the address-match hardware, with PAPI's start and end offsets.  The module
 * cannot be asked for its hardware yet, so the model is a named preset.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "range_plan.h"

#define RANGE_USAGE "usage: pmuctx range [--range-hw NAME] [--kind data|data-read|data-write|insn]\n" \
		    "                    START-END | START+SIZE\n" \
		    "       pmuctx range --list-hw\n"

/* The model a plain "pmuctx range" uses: this machine's own debug registers. */
#if defined(__aarch64__)
#define RANGE_DEFAULT_HW "arm64-watchpoints"
#else
#define RANGE_DEFAULT_HW "x86-debugregs"
#endif

static int parse_u64(const char *s, const char *stop_at, uint64_t *value)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*value = strtoull(s, &end, 0);
	if (errno || end == s || (stop_at ? end != stop_at : *end != '\0'))
		return -1;
	return 0;
}

/* "START-END" (END exclusive, as PAPI's start/end) or "START+SIZE". */
static int parse_range(const char *arg, uint64_t *start, uint64_t *end)
{
	const char *sep = strpbrk(arg, "-+");
	uint64_t second;

	if (!sep || parse_u64(arg, sep, start) || parse_u64(sep + 1, NULL, &second))
		return -1;
	if (*sep == '-') {
		*end = second;
		return 0;
	}
	if (second > UINT64_MAX - *start)
		return -1;
	*end = *start + second;
	return 0;
}

static int parse_kind(const char *name, unsigned int *kind)
{
	unsigned int k;

	for (k = 0; k < PMUCTX_RANGE_NR_KINDS; k++) {
		if (!strcmp(name, pmuctx_range_kind_name(k))) {
			*kind = k;
			return 0;
		}
	}
	return -1;
}

static void list_hw(FILE *f)
{
	unsigned int i, k;

	for (i = 0; pmuctx_range_presets[i]; i++) {
		const struct pmuctx_range_hw *hw = pmuctx_range_presets[i];
		const char *sep = "";

		fprintf(f, "%-18s %s\n%-18s kinds: ", hw->name, hw->desc, "");
		for (k = 0; k < PMUCTX_RANGE_NR_KINDS; k++) {
			if (hw->kinds & BIT(k)) {
				fprintf(f, "%s%s", sep, pmuctx_range_kind_name(k));
				sep = ", ";
			}
		}
		fputc('\n', f);
	}
}

static const char *block_type_name(unsigned int type)
{
	switch (type) {
	case PMUCTX_RANGE_SPAN_MASK: return "aligned mask";
	case PMUCTX_RANGE_SPAN_BYTES: return "byte select";
	case PMUCTX_RANGE_SPAN_FINE: return "fine (exact)";
	}
	return "?";
}

/* The errnos the kernel will return for the same request (Documentation/ranges.rst). */
static const char *plan_strerror(int ret, const char **errno_name)
{
	switch (ret) {
	case -EINVAL:
		*errno_name = "EINVAL";
		return "empty or inverted range";
	case -EOPNOTSUPP:
		*errno_name = "EOPNOTSUPP";
		return "this hardware cannot restrict that kind of access";
	case -ERANGE:
		*errno_name = "ERANGE";
		return "no plan within this hardware's registers contains the range";
	}
	*errno_name = "?";
	return strerror(-ret);
}

static void print_plan(const struct pmuctx_range_plan *p, uint64_t start, uint64_t end)
{
	unsigned int i;

	printf("Requested Start Address: 0x%016" PRIx64 "; Start Offset: 0x%" PRIx64
	       "; Actual Start Address: 0x%016" PRIx64 "\n", start, p->start_off, p->start);
	printf("Requested End Address  : 0x%016" PRIx64 "; End Offset  : 0x%" PRIx64
	       "; Actual End Address  : 0x%016" PRIx64 "\n", end, p->end_off, p->end);
	printf("Registers              : %u\n", p->nr_blocks);
	for (i = 0; i < p->nr_blocks; i++) {
		const struct pmuctx_range_block *b = &p->blocks[i];

		printf("  [%u] 0x%016" PRIx64 "-0x%016" PRIx64 " %s", i, b->base,
		       b->base + b->size, block_type_name(b->type));
		if (b->type == PMUCTX_RANGE_SPAN_MASK)
			printf(" 2^%u", b->order);
		else
			printf(" %" PRIu64 " bytes", b->size);
		putchar('\n');
	}
}

int cmd_range(struct cli *cli, int argc, char **argv)
{
	const char *hw_name = NULL, *range = NULL;
	unsigned int kind = PMUCTX_RANGE_DATA;
	const struct pmuctx_range_hw *hw;
	struct pmuctx_range_plan plan;
	uint64_t start, end;
	int i, ret;

	(void)cli;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list-hw")) {
			list_hw(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--range-hw") && i + 1 < argc) {
			hw_name = argv[++i];
		} else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
			if (parse_kind(argv[++i], &kind)) {
				fprintf(stderr, "pmuctx range: unknown kind '%s'\n" RANGE_USAGE,
					argv[i]);
				return 2;
			}
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
	if (parse_range(range, &start, &end)) {
		fprintf(stderr, "pmuctx range: '%s' is not START-END or START+SIZE\n", range);
		return 2;
	}
	hw = pmuctx_range_hw_find(hw_name ? hw_name : RANGE_DEFAULT_HW);
	if (!hw) {
		fprintf(stderr, "pmuctx range: unknown hardware '%s'; these are known:\n", hw_name);
		list_hw(stderr);
		return 2;
	}

	printf("Range hardware         : %s (%s; the module cannot report its own yet)\n",
	       hw->name, hw_name ? "preset chosen by --range-hw" :
	       "default preset for this machine's architecture");
	printf("Range kind             : %s\n", pmuctx_range_kind_name(kind));
	ret = pmuctx_range_plan(hw, start, end, kind, &plan);
	if (ret) {
		const char *errno_name;
		const char *why = plan_strerror(ret, &errno_name);

		printf("Error                  : %s: %s\n", errno_name, why);
		return 1;
	}
	print_plan(&plan, start, end);
	return 0;
}
