// SPDX-License-Identifier: GPL-2.0
/*
 * Address ranges in the pmuctx commands: one syntax for "range", "check"
 * and "stat", one printer of PAPI's plan lines, and errors that say which
 * registers a refused range ran into.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmuctx_abi.h"
#include "range_cli.h"
#include "range_plan.h"

uint64_t range_config(const struct range_request *rq)
{
	return rq->kind | (rq->exact ? PMUCTX_RANGE_EXACT : 0);
}

static int parse_u64(const char *s, const char *stop_at, uint64_t *value)
{
	char *end;

	/* strtoull would take "-1" as 2^64 - 1, and "+5" as 5 */
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*value = strtoull(s, &end, 0);
	if (errno || end == s || (stop_at ? end != stop_at : *end != '\0'))
		return -1;
	return 0;
}

int range_parse(const char *arg, uint64_t *start, uint64_t *end)
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

int range_parse_kind(const char *name, unsigned int *kind)
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

/* The planner's names (libpmuctx), for the files that do not include it. */
const char *range_kind_name(unsigned int kind)
{
	return pmuctx_range_kind_name(kind);
}

#define RANGE_EVENT_SYNTAX "expected range:KIND@START-END or range:KIND@START+SIZE, maybe with :exact " \
			   "(KIND: insn, data, data-write, data-read)"

int range_parse_event(const char *s, struct range_request *rq, char *err, size_t err_len)
{
	const char *kind_start = s + strlen(RANGE_EVENT_PREFIX), *at, *colon;
	char kind[32], range[128];

	if (strncmp(s, RANGE_EVENT_PREFIX, strlen(RANGE_EVENT_PREFIX)))
		return 0;
	memset(rq, 0, sizeof(*rq));
	at = strchr(kind_start, '@');
	if (!at || (size_t)(at - kind_start) >= sizeof(kind)) {
		snprintf(err, err_len, "range event '%s': %s", s, RANGE_EVENT_SYNTAX);
		return -1;
	}
	snprintf(kind, sizeof(kind), "%.*s", (int)(at - kind_start), kind_start);
	if (range_parse_kind(kind, &rq->kind)) {
		snprintf(err, err_len, "range event '%s': unknown kind '%s' (insn, data, data-write, data-read)",
			 s, kind);
		return -1;
	}
	colon = strchr(at + 1, ':');
	if (colon && strcmp(colon + 1, "exact")) {
		snprintf(err, err_len, "range event '%s': unknown modifier '%s' (only :exact)", s, colon + 1);
		return -1;
	}
	rq->exact = colon != NULL;
	if (!colon)
		colon = at + 1 + strlen(at + 1);
	if ((size_t)(colon - at - 1) >= sizeof(range)) {
		snprintf(err, err_len, "range event '%s': %s", s, RANGE_EVENT_SYNTAX);
		return -1;
	}
	snprintf(range, sizeof(range), "%.*s", (int)(colon - at - 1), at + 1);
	if (range_parse(range, &rq->start, &rq->end)) {
		snprintf(err, err_len, "range event '%s': '%s' is not START-END or START+SIZE", s, range);
		return -1;
	}
	return 1;
}

void range_event_string(const struct range_request *rq, char *buf, size_t len)
{
	snprintf(buf, len, RANGE_EVENT_PREFIX "%s@0x%llx-0x%llx%s", pmuctx_range_kind_name(rq->kind),
		 (unsigned long long)rq->start, (unsigned long long)rq->end, rq->exact ? ":exact" : "");
}

static const char *span_type_name(unsigned int type)
{
	switch (type) {
	case PMUCTX_RANGE_SPAN_MASK: return "aligned mask";
	case PMUCTX_RANGE_SPAN_BYTES: return "byte select";
	case PMUCTX_RANGE_SPAN_FINE: return "fine (start and end limits)";
	}
	return "?";
}

/* PAPI's wording (papi-data-range.txt), so a PAPI user reads it at once. */
void range_print_plan(FILE *f, const char *prefix, const struct pmuctx_range *r, int spans)
{
	unsigned long long start = r->start, end = r->end;
	unsigned long long start_off = r->start_off, end_off = r->end_off;
	unsigned int i;

	fprintf(f, "%sRequested Start Address: 0x%016llx; Start Offset: 0x%llx; Actual Start Address: 0x%016llx\n",
		prefix, start, start_off, start - start_off);
	fprintf(f, "%sRequested End Address  : 0x%016llx; End Offset  : 0x%llx; Actual End Address  : 0x%016llx\n",
		prefix, end, end_off, end + end_off);
	fprintf(f, "%sRegisters              : %u\n", prefix, r->nr_spans);
	for (i = 0; spans && i < r->nr_spans && i < PMUCTX_RANGE_MAX_SPANS; i++) {
		const struct pmuctx_range_span *s = &r->spans[i];

		fprintf(f, "%s  [%u] 0x%016llx-0x%016llx %s", prefix, i, (unsigned long long)s->base,
			(unsigned long long)(s->base + s->size), span_type_name(s->type));
		if (s->type == PMUCTX_RANGE_SPAN_MASK)
			fprintf(f, " 2^%u\n", s->order);
		else
			fprintf(f, " %llu bytes\n", (unsigned long long)s->size);
	}
}

/* 2^order bytes for people: "8 B", "4 KiB", "2 GiB". */
static void order_size(unsigned int order, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int unit = order / 10;

	if (order >= 64 || unit >= sizeof(units) / sizeof(units[0])) {
		snprintf(buf, len, "2^%u B", order);
		return;
	}
	snprintf(buf, len, "%llu %s", 1ULL << (order - unit * 10), units[unit]);
}

/* What one register of @caps matches: "each 1, 2, 4 or 8 aligned bytes". */
static void caps_each(const struct pmuctx_range_caps *caps, char *buf, size_t len)
{
	unsigned int o;
	size_t off = snprintf(buf, len, "each ");

	if (off >= len)
		return;
	if (caps->min_order > caps->max_order || caps->max_order >= 64) {
		snprintf(buf + off, len - off, "of an unknown size");
	} else if (caps->min_order == 0 && caps->max_order == 0) {
		snprintf(buf + off, len - off, "1 byte");
	} else if (caps->max_order - caps->min_order <= 3) {
		/* few sizes: name them all */
		for (o = caps->min_order; o <= caps->max_order && off < len; o++)
			off += snprintf(buf + off, len - off, "%s%llu",
					o == caps->min_order ? "" : o == caps->max_order ? " or " : ", ",
					1ULL << o);
		if (off < len)
			snprintf(buf + off, len - off, " aligned bytes");
	} else {
		char lo[16], hi[16];

		order_size(caps->min_order, lo, sizeof(lo));
		order_size(caps->max_order, hi, sizeof(hi));
		snprintf(buf + off, len - off, "an aligned power-of-two block of %s to %s", lo, hi);
	}
	off = strlen(buf);
	if (caps->byte_select_order && off < len)
		snprintf(buf + off, len - off, ", or any bytes of one aligned %llu-byte block",
			 1ULL << caps->byte_select_order);
}

void range_caps_describe(const struct pmuctx_range_caps *caps, char *buf, size_t len)
{
	char each[160];

	if (!caps->nr) {
		snprintf(buf, len, "none");
		return;
	}
	caps_each(caps, each, sizeof(each));
	snprintf(buf, len, "%u register%s, %s", caps->nr, caps->nr == 1 ? "" : "s", each);
}

void range_kinds_describe(uint32_t kinds, char *buf, size_t len)
{
	unsigned int k;
	size_t off = 0;

	buf[0] = 0;
	for (k = 0; k < PMUCTX_RANGE_NR_KINDS && off < len; k++)
		if (kinds & (1U << k))
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					pmuctx_range_kind_name(k));
	if (!off)
		snprintf(buf, len, "none");
}

void range_explain_with(int err, const struct range_request *rq, const struct pmuctx_info *info,
			const char *hw, const struct pmuctx_range *closest, char *buf, size_t len)
{
	const int has_ranges = info && (info->features & PMUCTX_FEAT_ADDR_RANGE);
	const struct pmuctx_range_caps *regs = !info ? NULL :
		rq->kind == PMUCTX_RANGE_INSN ? &info->range_insn : &info->range_data;
	unsigned long long start = rq->start, end = rq->end;
	char text[192];

	/* A module from before ranges fails each request its own way (EINVAL, E2BIG, ENOTTY). */
	if (info && !has_ranges && err != ENOENT && err != EACCES && err != EPERM) {
		snprintf(buf, len, "the loaded module cannot count address ranges: it predates them, "
			 "or the kernel has no hw_breakpoint support ('pmuctx info' shows no address ranges)");
		return;
	}
	switch (err) {
	case ERANGE:
		if (rq->exact && closest) {
			snprintf(buf, len, "no exact plan: the closest one also counts 0x%llx byte%s before "
				 "and 0x%llx after the range (0x%llx-0x%llx); without exact, it counts those bytes too",
				 (unsigned long long)closest->start_off, closest->start_off == 1 ? "" : "s",
				 (unsigned long long)closest->end_off,
				 start - (unsigned long long)closest->start_off,
				 end + (unsigned long long)closest->end_off);
			return;
		}
		if (!has_ranges || start >= end)
			break;
		caps_each(regs, text, sizeof(text));
		snprintf(buf, len, "0x%llx-0x%llx (%llu bytes) cannot be covered with the %u debug registers "
			 "%s has for %s (%s)", start, end, end - start, regs->nr, hw,
			 rq->kind == PMUCTX_RANGE_INSN ? "instructions" : "data", text);
		return;
	case EOPNOTSUPP:
		if (!has_ranges || (info->range_kinds & (1U << rq->kind)))
			break;
		range_kinds_describe(info->range_kinds, text, sizeof(text));
		snprintf(buf, len, "the debug registers of %s cannot watch kind %s (they watch: %s)",
			 hw, pmuctx_range_kind_name(rq->kind), text);
		return;
	case EINVAL:
		if (start >= end) {
			snprintf(buf, len, "empty or inverted range 0x%llx-0x%llx", start, end);
			return;
		}
		/* the planner took kind and size: what is left is the address */
		if (has_ranges) {
			snprintf(buf, len, "0x%llx-0x%llx is not a user-space range: range counters watch "
				 "user addresses only", start, end);
			return;
		}
		break;
	}
	snprintf(buf, len, "%s", pmuctx_range_strerror(err));
}

void range_explain(int err, const struct range_request *rq, char *buf, size_t len)
{
	struct pmuctx_range closest;
	struct pmuctx_info info;
	int have_info = !pmuctx_get_info(&info);
	int have_closest = 0;

	if (have_info && err == ERANGE && rq->exact) {
		struct range_request loose = *rq;

		loose.exact = 0;
		have_closest = !pmuctx_range_plan_query(range_config(&loose), rq->start, rq->end,
							&closest);
	}
	range_explain_with(err, rq, have_info ? &info : NULL, "this CPU",
			   have_closest ? &closest : NULL, buf, len);
}
