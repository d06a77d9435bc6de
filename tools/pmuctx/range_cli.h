/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Address ranges as the pmuctx commands take and show them (range, check,
 * stat, info): the request syntax, PAPI's plan lines, the registers in
 * words, and why a range was refused.  Documentation/tools.rst.
 */
#ifndef PMUCTX_RANGE_CLI_H
#define PMUCTX_RANGE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/pmuctx.h>

/* One range counter as asked for: [start, end) of one kind. */
struct range_request {
	unsigned int kind;		/* enum pmuctx_range_kind */
	int exact;			/* refuse a plan that covers more */
	uint64_t start, end;
};

/* The event-string form: "range:KIND@START-END" or "range:KIND@START+SIZE", then ":exact". */
#define RANGE_EVENT_PREFIX	"range:"

/* The counter's config: the kind, and PMUCTX_RANGE_EXACT. */
uint64_t range_config(const struct range_request *rq);

/*
 * "START-END" (END exclusive, as PAPI's end) or "START+SIZE", each number
 * as strtoull base 0 reads it.  0, or -1 when malformed or past 2^64.
 * An empty or inverted range parses: the planner says what is wrong.
 */
int range_parse(const char *arg, uint64_t *start, uint64_t *end);

/* "insn", "data", "data-write", "data-read"; -1 for anything else. */
int range_parse_kind(const char *name, unsigned int *kind);
const char *range_kind_name(unsigned int kind);

/*
 * An event string naming a range: 1 with @rq filled, 0 when @s is not one
 * (it does not start with "range:"), -1 with @err when it is a malformed one.
 */
int range_parse_event(const char *s, struct range_request *rq, char *err, size_t err_len);

/* The event string for @rq, which range_parse_event() reads back. */
void range_event_string(const struct range_request *rq, char *buf, size_t len);

/*
 * PAPI's lines for a plan: requested start and end, their offsets and the
 * actual (programmed) addresses, then how many registers; with @spans,
 * one line per register.  Every line starts with @prefix.
 */
void range_print_plan(FILE *f, const char *prefix, const struct pmuctx_range *r, int spans);

/* "4 registers, each 1, 2, 4 or 8 aligned bytes" */
void range_caps_describe(const struct pmuctx_range_caps *caps, char *buf, size_t len);

/* "insn, data, data-write" from a 1 << PMUCTX_RANGE_* mask; "none" for 0. */
void range_kinds_describe(uint32_t kinds, char *buf, size_t len);

/*
 * Why @rq was refused with @err (from PMUCTX_RANGE_PLAN or from opening
 * the counter), in terms of the registers @info describes, which belong
 * to @hw ("this CPU", a preset's name).  @closest: the plan without
 * PMUCTX_RANGE_EXACT, for an exact request's ERANGE, or NULL.
 */
void range_explain_with(int err, const struct range_request *rq, const struct pmuctx_info *info,
			const char *hw, const struct pmuctx_range *closest, char *buf, size_t len);

/* The same, asking the module for its registers and the closest plan. */
void range_explain(int err, const struct range_request *rq, char *buf, size_t len);

/*
 * "pmuctx range" and "pmuctx check" on one request: plan it with the
 * module (@hw_name NULL or "module") or a preset, and print it as PAPI
 * does.  Returns the exit status: 0 planned, 1 refused, 2 unknown preset.
 */
int range_report(FILE *f, const struct range_request *rq, const char *hw_name);

#endif
