// SPDX-License-Identifier: GPL-2.0
/*
 * The address ranges of the pmuctx commands without a kernel
 * (pmuctx/range_cli.c): the START-END and range:KIND@... syntax, PAPI's
 * plan lines, the registers in words, and the reasons given for a refusal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../../pmuctx/range_cli.h"

static void expect_range(const char *arg, uint64_t start, uint64_t end)
{
	uint64_t s = 0, e = 0;
	int ret = range_parse(arg, &s, &e);

	ok(!ret && s == start && e == end, "'%s' -> [0x%llx, 0x%llx) (got %d: 0x%llx, 0x%llx)", arg,
	   (unsigned long long)start, (unsigned long long)end, ret, (unsigned long long)s,
	   (unsigned long long)e);
}

static void expect_bad_range(const char *arg)
{
	uint64_t s, e;

	ok(range_parse(arg, &s, &e) < 0, "'%s' is not a range", arg);
}

static void test_parse(void)
{
	unsigned int kind = 99;

	expect_range("0x1000-0x2000", 0x1000, 0x2000);
	expect_range("0x1000+32", 0x1000, 0x1020);
	expect_range("4096+0x20", 0x1000, 0x1020);
	expect_range("0xfffffffffffffff0+15", 0xfffffffffffffff0ULL, 0xffffffffffffffffULL);
	/* an inverted range parses: the planner (or stat) names what is wrong */
	expect_range("0x2000-0x1000", 0x2000, 0x1000);
	expect_bad_range("0xfffffffffffffff0+16");	/* an exclusive end of 2^64 */
	expect_bad_range("0x1000");
	expect_bad_range("0x1000-");
	expect_bad_range("-0x1000");
	expect_bad_range("0x1000--5");
	expect_bad_range("0x1000+-5");
	expect_bad_range("0x10zz-0x20");
	expect_bad_range("0x10-0x20 ");
	expect_bad_range("0x1-0x100000000000000000");	/* past 2^64 */
	expect_bad_range("");

	ok(!range_parse_kind("data-write", &kind) && kind == PMUCTX_RANGE_DATA_WRITE,
	   "kind data-write");
	ok(!range_parse_kind("insn", &kind) && kind == PMUCTX_RANGE_INSN, "kind insn");
	ok(range_parse_kind("DATA", &kind) < 0 && range_parse_kind("write", &kind) < 0,
	   "kinds are spelt exactly");
	ok(!strcmp(range_kind_name(PMUCTX_RANGE_DATA_READ), "data-read"), "the name of a kind");
}

static void expect_event(const char *s, unsigned int kind, int exact, uint64_t start, uint64_t end,
			 const char *canonical)
{
	struct range_request rq, back;
	char err[256] = "", str[128] = "";
	int ret = range_parse_event(s, &rq, err, sizeof(err));

	if (ret == 1)
		range_event_string(&rq, str, sizeof(str));
	ok(ret == 1 && rq.kind == kind && rq.exact == exact && rq.start == start && rq.end == end &&
	   !strcmp(str, canonical) && range_parse_event(str, &back, err, sizeof(err)) == 1 &&
	   !memcmp(&back, &rq, sizeof(rq)),
	   "event '%s' -> %s, which reads back [%s]", s, canonical, err);
}

static void expect_bad_event(const char *s, const char *msg)
{
	struct range_request rq;
	char err[256] = "";

	ok(range_parse_event(s, &rq, err, sizeof(err)) == -1 && strstr(err, msg),
	   "event '%s' refused: %s", s, err);
}

static void test_events(void)
{
	struct range_request rq;
	char err[64];

	expect_event("range:data@0x1000-0x1020", PMUCTX_RANGE_DATA, 0, 0x1000, 0x1020,
		     "range:data@0x1000-0x1020");
	expect_event("range:data-write@4096+8", PMUCTX_RANGE_DATA_WRITE, 0, 0x1000, 0x1008,
		     "range:data-write@0x1000-0x1008");
	expect_event("range:insn@0x401860+1:exact", PMUCTX_RANGE_INSN, 1, 0x401860, 0x401861,
		     "range:insn@0x401860-0x401861:exact");
	ok(range_parse_event("cycles", &rq, err, sizeof(err)) == 0 &&
	   range_parse_event("rangefinder::X", &rq, err, sizeof(err)) == 0,
	   "other event strings are not ranges");
	expect_bad_event("range:data", "expected range:KIND@START-END");
	expect_bad_event("range:store@0x1000+8", "unknown kind 'store'");
	expect_bad_event("range:data@0x1000", "'0x1000' is not START-END or START+SIZE");
	expect_bad_event("range:data@0x1000+8:u", "unknown modifier 'u' (only :exact)");
	ok(range_config(&(struct range_request) { .kind = PMUCTX_RANGE_DATA_WRITE, .exact = 1 }) ==
	   (PMUCTX_RANGE_DATA_WRITE | PMUCTX_RANGE_EXACT), "config: the kind and PMUCTX_RANGE_EXACT");
}


/* PAPI's static array at ...18cc on Itanium 2, as the planner covers it. */
static void test_print(void)
{
	struct pmuctx_range r = {
		.size = sizeof(r), .nr_spans = 2, .config = PMUCTX_RANGE_DATA,
		.start = 0x60000000000218ccULL, .end = 0x60000000000318ccULL,
		.start_off = 0x18cc, .end_off = 0x734,
		.spans = {
			{ .base = 0x6000000000020000ULL, .size = 0x10000, .order = 16,
			  .type = PMUCTX_RANGE_SPAN_MASK },
			{ .base = 0x6000000000030000ULL, .size = 0x2000, .order = 13,
			  .type = PMUCTX_RANGE_SPAN_MASK },
		},
	};
	struct pmuctx_range bytes = {
		.nr_spans = 1, .start = 0x1003, .end = 0x1006,
		.spans = { { .base = 0x1003, .size = 3, .type = PMUCTX_RANGE_SPAN_BYTES } },
	};
	FILE *f = tmpfile();
	char *out;

	range_print_plan(f, "", &r, 1);
	out = slurp(f);
	ok(strstr(out, "Requested Start Address: 0x60000000000218cc; Start Offset: 0x18cc; "
		       "Actual Start Address: 0x6000000000020000\n") &&
	   strstr(out, "Requested End Address  : 0x60000000000318cc; End Offset  : 0x734; "
		       "Actual End Address  : 0x6000000000032000\n") &&
	   strstr(out, "Registers              : 2\n") &&
	   strstr(out, "  [1] 0x6000000000030000-0x6000000000032000 aligned mask 2^13\n"),
	   "PAPI's lines, then the registers:\n%s", out);

	f = tmpfile();
	range_print_plan(f, "# ", &bytes, 0);
	out = slurp(f);
	ok(strstr(out, "# Requested Start Address: 0x0000000000001003; Start Offset: 0x0;") &&
	   strstr(out, "# Registers              : 1\n") && !strstr(out, "[0]"),
	   "every line after the prefix; no registers unless asked:\n%s", out);

	f = tmpfile();
	range_print_plan(f, "", &bytes, 1);
	out = slurp(f);
	ok(strstr(out, "  [0] 0x0000000000001003-0x0000000000001006 byte select 3 bytes\n") != NULL,
	   "a byte-select register shows its bytes");
}

static void expect_caps(struct pmuctx_range_caps caps, const char *want)
{
	char buf[192];

	range_caps_describe(&caps, buf, sizeof(buf));
	ok(!strcmp(buf, want), "caps %u/%u..%u/%u: '%s' (got '%s')", caps.nr, caps.min_order,
	   caps.max_order, caps.byte_select_order, want, buf);
}

static void test_describe(void)
{
	char buf[64];

	expect_caps((struct pmuctx_range_caps) { 4, 0, 3, 0 }, "4 registers, each 1, 2, 4 or 8 aligned bytes");
	expect_caps((struct pmuctx_range_caps) { 4, 0, 0, 0 }, "4 registers, each 1 byte");
	expect_caps((struct pmuctx_range_caps) { 6, 2, 2, 0 }, "6 registers, each 4 aligned bytes");
	expect_caps((struct pmuctx_range_caps) { 1, 2, 3, 0 }, "1 register, each 4 or 8 aligned bytes");
	expect_caps((struct pmuctx_range_caps) { 4, 3, 31, 3 },
		    "4 registers, each an aligned power-of-two block of 8 B to 2 GiB, "
		    "or any bytes of one aligned 8-byte block");
	expect_caps((struct pmuctx_range_caps) { 0, 0, 3, 0 }, "none");
	range_kinds_describe((1 << PMUCTX_RANGE_INSN) | (1 << PMUCTX_RANGE_DATA) |
			     (1 << PMUCTX_RANGE_DATA_WRITE), buf, sizeof(buf));
	ok(!strcmp(buf, "insn, data, data-write"), "kinds: %s", buf);
	range_kinds_describe(0, buf, sizeof(buf));
	ok(!strcmp(buf, "none"), "no kinds: %s", buf);
}

static void expect_explain(int err, struct range_request rq, const struct pmuctx_info *info,
			   const struct pmuctx_range *closest, const char *want)
{
	char buf[512];

	range_explain_with(err, &rq, info, "this CPU", closest, buf, sizeof(buf));
	ok(strstr(buf, want) != NULL, "errno %d: '%s' in '%s'", err, want, buf);
}

/* x86's debug registers, as the module reports them. */
static void test_explain(void)
{
	const struct pmuctx_info x86 = {
		.features = PMUCTX_FEAT_SOFTWARE | PMUCTX_FEAT_ADDR_RANGE,
		.range_kinds = (1 << PMUCTX_RANGE_INSN) | (1 << PMUCTX_RANGE_DATA) |
			       (1 << PMUCTX_RANGE_DATA_WRITE),
		.range_data = { 4, 0, 3, 0 },
		.range_insn = { 4, 0, 0, 0 },
	};
	const struct pmuctx_info old = { .features = PMUCTX_FEAT_SOFTWARE };
	const struct pmuctx_range closest = { .start_off = 1, .end_off = 0x10 };
	struct range_request data33 = { PMUCTX_RANGE_DATA, 0, 0x1000, 0x1021 };
	struct range_request insn = { PMUCTX_RANGE_INSN, 0, 0x401000, 0x401005 };
	struct range_request exact = { PMUCTX_RANGE_DATA, 1, 0x1001, 0x1010 };
	struct range_request read = { PMUCTX_RANGE_DATA_READ, 0, 0x1000, 0x1008 };
	struct range_request kernel = { PMUCTX_RANGE_DATA, 0, 0xffffffff81000000ULL,
					0xffffffff81000008ULL };
	struct range_request inverted = { PMUCTX_RANGE_DATA, 0, 0x2000, 0x1000 };

	diag("refusals on x86's registers: 4 for data of 1 to 8 bytes, 4 for instructions");
	expect_explain(ERANGE, data33, &x86, NULL,
		       "0x1000-0x1021 (33 bytes) cannot be covered with the 4 debug registers this CPU "
		       "has for data (each 1, 2, 4 or 8 aligned bytes)");
	expect_explain(ERANGE, insn, &x86, NULL, "4 debug registers this CPU has for instructions (each 1 byte)");
	expect_explain(ERANGE, exact, &x86, &closest,
		       "no exact plan: the closest one also counts 0x1 byte before and 0x10 after the "
		       "range (0x1000-0x1020)");
	expect_explain(EOPNOTSUPP, read, &x86, NULL,
		       "cannot watch kind data-read (they watch: insn, data, data-write)");
	expect_explain(EINVAL, kernel, &x86, NULL, "is not a user-space range");
	expect_explain(EINVAL, inverted, &x86, NULL, "empty or inverted range 0x2000-0x1000");
	expect_explain(EINVAL, data33, &old, NULL, "the loaded module cannot count address ranges");
	expect_explain(ENOTTY, data33, &old, NULL, "the loaded module cannot count address ranges");
}

int main(void)
{
	test_parse();
	test_events();
	test_print();
	test_describe();
	test_explain();
	return done_testing();
}
