// SPDX-License-Identifier: GPL-2.0
/* PAPI derived-event files: every derived type, formulas, errors, real papi_events.csv. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmuctx_events.h"
#include "tap.h"

static const char *fixture_dir = "tests/events/fixtures";

static struct pmuctx_evdb *open_x86(void)
{
	struct pmuctx_evdb *evdb = NULL;
	char err[256];

	if (pmuctx_evdb_open(&evdb, NULL, "GenuineIntel-6-55-4", err, sizeof(err)))
		diag("open: %s", err);
	return evdb;
}

/* Value of a derived event when native event i counts values[i]. */
static double eval_named(struct pmuctx_evdb *evdb, const char *name, const double *natives,
			 int *ret_out)
{
	char err[256] = "";
	double v = -1;
	int ret = pmuctx_derived_eval(evdb, pmuctx_evdb_find_derived(evdb, name), natives, 2000, &v,
				      err, sizeof(err));

	if (ret_out)
		*ret_out = ret;
	else if (ret)
		diag("%s: %s", name, err);
	return v;
}

static int native_index(struct pmuctx_evdb *evdb, unsigned long long config, int excl_kernel)
{
	int i;

	for (i = 0; i < pmuctx_evdb_n_natives(evdb); i++) {
		const struct pmuctx_event_info *n = pmuctx_evdb_native(evdb, i);

		if (n->enc.config == config && n->enc.exclude_kernel == excl_kernel)
			return i;
	}
	return -1;
}

/*
 * A line that cannot be used (bad type, arity, formula, syntax) is refused:
 * the file still loads, the line is reported with the skipped definitions,
 * and the definitions after it are kept.
 */
static void expect_refused(const char *text, const char *msg)
{
	struct pmuctx_evdb *evdb = open_x86();
	char err[512] = "", buf[1024];
	const char *why;
	int ret;

	snprintf(buf, sizeof(buf), "%sCPU,ix86arch\nPRESET,KEPT,NOT_DERIVED,LLC_MISSES\n", text);
	ret = pmuctx_derived_load_buffer(evdb, "t.csv", buf, err, sizeof(err));
	why = pmuctx_evdb_skipped(evdb, 0);
	ok(!ret && pmuctx_evdb_n_skipped(evdb) == 1 && why && strstr(why, msg) &&
	   pmuctx_evdb_find_derived(evdb, "KEPT") >= 0,
	   "refused line reported, file loads: %s", ret ? err : why ? why : "(nothing refused)");
	pmuctx_evdb_close(evdb);
}

static void test_types(void)
{
	struct pmuctx_evdb *evdb = open_x86();
	struct pmuctx_derived_desc d;
	char path[512], err[512] = "";
	double nat[16] = { 0 };
	int cyc, ins, br, msp, ref, miss_u, miss, ret, needed[16];

	snprintf(path, sizeof(path), "%s/derived-all-types.csv", fixture_dir);
	ret = pmuctx_derived_load(evdb, path, err, sizeof(err));
	ok(!ret, "fixture with every derived type loads (%s)", err);
	ok(pmuctx_evdb_find_derived(evdb, "PAPI_IGNORED") < 0 &&
	   pmuctx_evdb_find_derived(evdb, "PAPI_AFTER") < 0,
	   "sections for other PMUs are skipped, a CPU line after events starts a new list");
	ok(pmuctx_evdb_n_derived(evdb) == 14, "14 derived events defined (%d)", pmuctx_evdb_n_derived(evdb));
	pmuctx_evdb_derived(evdb, pmuctx_evdb_find_derived(evdb, "PAPI_TOT_CYC"), &d);
	ok(!strcmp(d.ldesc, "Total cycles, unhalted") && !strcmp(d.sdesc, "Cycles") && d.is_preset,
	   "quoted LDESC with a comma, SDESC");
	pmuctx_evdb_derived(evdb, pmuctx_evdb_find_derived(evdb, "PAPI_PF"), &d);
	ok(d.type == PMUCTX_DERIVED_POSTFIX && !strcmp(d.formula, "N0|N1|3|*|+|") && d.n_bases == 2 &&
	   !strcmp(d.bases[1], "LLC_MISSES:u"), "postfix formula and bases kept");
	pmuctx_evdb_derived(evdb, pmuctx_evdb_find_derived(evdb, "USER_IF"), &d);
	ok(!d.is_preset && !strcmp(d.ldesc, "same value as PAPI_PF"), "EVENT line, single-quoted LDESC");

	cyc = native_index(evdb, 0x3c, 0);
	ins = native_index(evdb, 0xc0, 0);
	br = native_index(evdb, 0xc4, 0);
	msp = native_index(evdb, 0xc5, 0);
	ref = native_index(evdb, 0x4f2e, 0);
	miss_u = native_index(evdb, 0x412e, 1);
	miss = native_index(evdb, 0x412e, 0);
	ok(cyc >= 0 && ins >= 0 && br >= 0 && msp >= 0 && ref >= 0 && miss_u >= 0 && miss >= 0 &&
	   pmuctx_evdb_n_natives(evdb) == 7, "7 distinct native events, each encoded once");
	if (cyc < 0 || ins < 0 || br < 0 || msp < 0 || ref < 0 || miss_u < 0 || miss < 0) {
		pmuctx_evdb_close(evdb);
		return;
	}
	nat[cyc] = 4000; nat[ins] = 1000; nat[br] = 100; nat[msp] = 7;
	nat[ref] = 50; nat[miss_u] = 5; nat[miss] = 9;
	ok(eval_named(evdb, "PAPI_TOT_CYC", nat, NULL) == 4000, "NOT_DERIVED");
	ok(eval_named(evdb, "PAPI_BR_ALL", nat, NULL) == 107, "DERIVED_ADD of a preset and a native");
	ok(eval_named(evdb, "PAPI_BR_PRC", nat, NULL) == 93, "DERIVED_SUB of two presets");
	ok(eval_named(evdb, "PAPI_INS_PS", nat, NULL) == 1000.0 * 2000 * 1e6 / 4000,
	   "DERIVED_PS = events * MHz * 1e6 / cycles");
	ok(eval_named(evdb, "PAPI_BR_PS", nat, NULL) == 107.0 * 2000 * 1e6 / 4000, "DERIVED_ADD_PS");
	ok(eval_named(evdb, "PAPI_CMPD", nat, NULL) == 9, "DERIVED_CMPD returns its first event");
	ok(eval_named(evdb, "PAPI_PF", nat, NULL) == 65, "DERIVED_POSTFIX N0|N1|3|*|+| = 50+5*3");
	ok(eval_named(evdb, "USER_IF", nat, NULL) == 65, "DERIVED_INFIX N0+(N1*3) = same value");
	ok(eval_named(evdb, "USER_PREC", nat, NULL) == 1000 - 107.0 * 2 / 4000,
	   "infix precedence N0-N1*2/N2 on derived bases");
	ok(eval_named(evdb, "USER_ALIAS", nat, NULL) == 65, "NOT_DERIVED alias of a user event");
	ok(eval_named(evdb, "USER_PF2", nat, NULL) == 1000 - (100 - 65), "postfix on preset/user bases");
	ok(pmuctx_derived_natives(evdb, pmuctx_evdb_find_derived(evdb, "USER_PREC"), needed, 16) == 4,
	   "USER_PREC needs 4 native events (flattened, de-duplicated)");
	nat[cyc] = 0;
	eval_named(evdb, "PAPI_INS_PS", nat, &ret);
	ok(ret == -PMUCTX_EV_EDIV_ZERO, "DERIVED_PS with zero cycles: division by zero");
	eval_named(evdb, "USER_PREC", nat, &ret);
	ok(ret == -PMUCTX_EV_EDIV_ZERO, "infix division by zero");
	pmuctx_evdb_close(evdb);
}

static void test_formulas(void)
{
	double b[3] = { 2, 5, 0 }, v = 0;
	char err[256] = "";

	ok(!pmuctx_postfix_eval("N0|N1|3|*|+|", b, 2, &v, err, sizeof(err)) && v == 17,
	   "postfix N0|N1|3|*|+| = 17");
	ok(!pmuctx_postfix_eval("N0|N1|-|3|-", b, 2, &v, err, sizeof(err)) && v == -6,
	   "postfix left-to-right subtraction, no trailing '|'");
	ok(!pmuctx_postfix_eval("N1|N0|/|", b, 2, &v, err, sizeof(err)) && v == 2.5, "postfix division");
	ok(pmuctx_postfix_eval("N0|N2|/|", b, 3, &v, err, sizeof(err)) == -PMUCTX_EV_EDIV_ZERO,
	   "postfix division by zero: %s", err);
	ok(pmuctx_postfix_eval("N0|+|", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_ESYNTAX &&
	   strstr(err, "two operands"), "postfix stack underflow: %s", err);
	ok(pmuctx_postfix_eval("N0|N1|", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_ESYNTAX &&
	   strstr(err, "leaves 2 values"), "postfix leftover operands: %s", err);
	ok(pmuctx_postfix_eval("N0|N7|+|", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_ESYNTAX &&
	   strstr(err, "N7"), "postfix N7 out of range: %s", err);
	ok(pmuctx_postfix_eval("N0|x|+|", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_ESYNTAX,
	   "postfix bad token: %s", err);
	ok(!pmuctx_infix_eval("N0+N1*3", b, 2, &v, err, sizeof(err)) && v == 17,
	   "infix * binds tighter than +");
	ok(!pmuctx_infix_eval("(N0+N1)*3", b, 2, &v, err, sizeof(err)) && v == 21, "infix parentheses");
	ok(!pmuctx_infix_eval("N1-N0-1", b, 2, &v, err, sizeof(err)) && v == 2, "infix left associative");
	ok(!pmuctx_infix_eval("N0-(N1+(N2*5))", b, 3, &v, err, sizeof(err)) && v == -3, "nested parens");
	ok(pmuctx_infix_eval("N0/N2", b, 3, &v, err, sizeof(err)) == -PMUCTX_EV_EDIV_ZERO,
	   "infix division by zero: %s", err);
	ok(pmuctx_infix_eval("N0+", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_ESYNTAX, "infix syntax: %s", err);
	ok(pmuctx_infix_eval("N0+N3", b, 2, &v, err, sizeof(err)) == -PMUCTX_EV_EUNKNOWN_NAME,
	   "infix N3 out of range: %s", err);
}

/* A definition this CPU cannot count is skipped and reported, the rest loads. */
static void expect_skipped(const char *text, const char *name, const char *msg)
{
	struct pmuctx_evdb *evdb = open_x86();
	char err[512] = "";
	const char *why;
	int ret = pmuctx_derived_load_buffer(evdb, "t.csv", text, err, sizeof(err));

	why = pmuctx_evdb_skipped(evdb, 0);
	ok(!ret && pmuctx_evdb_n_skipped(evdb) == 1 && why && strstr(why, msg) &&
	   pmuctx_evdb_find_derived(evdb, name) < 0 && pmuctx_evdb_find_derived(evdb, "KEPT") >= 0,
	   "skipped, file still loads: %s", ret ? err : why ? why : "(nothing skipped)");
	pmuctx_evdb_close(evdb);
}

/* PAPI's DERIVED_ADD and DERIVED_SUB take any number of events. */
static void test_nary(void)
{
	struct pmuctx_evdb *evdb = open_x86();
	const double nat[] = { 10, 100, 1000 };
	char err[512] = "";
	int ret = pmuctx_derived_load_buffer(evdb, "t.csv",
		"CPU,ix86arch\n"
		"PRESET,A3,DERIVED_ADD,LLC_MISSES,LLC_REFERENCES,UNHALTED_CORE_CYCLES\n"
		"PRESET,S3,DERIVED_SUB,UNHALTED_CORE_CYCLES,LLC_REFERENCES,LLC_MISSES\n", err, sizeof(err));

	ok(!ret && pmuctx_evdb_n_natives(evdb) == 3, "three-event ADD and SUB load (%s)", err);
	ok(!ret && eval_named(evdb, "A3", nat, NULL) == 1110, "DERIVED_ADD of three events");
	ok(!ret && eval_named(evdb, "S3", nat, NULL) == 890, "DERIVED_SUB subtracts every later event");
	pmuctx_evdb_close(evdb);
	/* PAPI's sum of one base (Debian's Cortex-A53 PAPI_L1_DCM) */
	evdb = open_x86();
	ret = pmuctx_derived_load_buffer(evdb, "t.csv",
		"CPU,ix86arch\nPRESET,A1,DERIVED_ADD,LLC_MISSES\n", err, sizeof(err));
	ok(!ret && pmuctx_evdb_n_skipped(evdb) == 0 && eval_named(evdb, "A1", nat, NULL) == 10,
	   "DERIVED_ADD of one base is that base (%s)", err);
	pmuctx_evdb_close(evdb);
}

/*
 * PAPI's rule: a file's last definition of a name decides.  A later one
 * this CPU cannot count withdraws the earlier one of the same file, and
 * what is built on it; another file's definition of the name stays.
 */
static void test_last_definition_decides(void)
{
	const double nat[] = { 10, 100, 1000 };
	struct pmuctx_evdb *evdb = open_x86();
	char err[512] = "";
	int ret = pmuctx_derived_load_buffer(evdb, "t.csv",
		"CPU,ix86arch\n"
		"PRESET,TWICE,NOT_DERIVED,LLC_MISSES\n"
		"EVENT,ON_TWICE,DERIVED_ADD,TWICE,LLC_REFERENCES\n"
		"PRESET,TWICE,NOT_DERIVED,NO_SUCH_EVENT\n"
		"PRESET,KEPT,NOT_DERIVED,LLC_MISSES\n", err, sizeof(err));

	ok(!ret && pmuctx_evdb_find_derived(evdb, "TWICE") < 0 &&
	   pmuctx_evdb_find_derived(evdb, "ON_TWICE") < 0 && pmuctx_evdb_find_derived(evdb, "KEPT") >= 0,
	   "a later definition it cannot count withdraws the earlier one and its users (%s)", err);
	ok(!ret && eval_named(evdb, "KEPT", nat, NULL) == 10, "what follows still evaluates");
	ret = pmuctx_derived_load_buffer(evdb, "u.csv",
		"CPU,ix86arch\nPRESET,KEPT,NOT_DERIVED,NO_SUCH_EVENT\n", err, sizeof(err));
	ok(!ret && pmuctx_evdb_find_derived(evdb, "KEPT") >= 0,
	   "another file's failed definition leaves the name defined (%s)", err);
	pmuctx_evdb_close(evdb);
	evdb = open_x86();
	ret = pmuctx_derived_load_buffer(evdb, "t.csv",
		"CPU,ix86arch\n"
		"PRESET,TWICE,NOT_DERIVED,NO_SUCH_EVENT\n"
		"PRESET,TWICE,NOT_DERIVED,LLC_REFERENCES\n", err, sizeof(err));
	/* LLC_REFERENCES is the only native event: index 0 */
	ok(!ret && pmuctx_evdb_n_natives(evdb) == 1 && eval_named(evdb, "TWICE", nat, NULL) == 10,
	   "a failed definition before a good one: the good one (%s)", err);
	pmuctx_evdb_close(evdb);
}

static void test_errors(void)
{
	expect_skipped("CPU,ix86arch\n\nPRESET,P,NOT_DERIVED,NO_SUCH_EVENT\nPRESET,KEPT,NOT_DERIVED,LLC_MISSES\n",
		       "P", "t.csv:3: P: base event 'NO_SUCH_EVENT': unknown event");
	expect_skipped("CPU,ix86arch\nPRESET,P,NOT_DERIVED,LLC_MISSES:bogus\nPRESET,KEPT,NOT_DERIVED,LLC_MISSES\n",
		       "P", "unknown unit mask 'bogus'");
	/* built on a skipped preset: skipped too */
	expect_skipped("CPU,ix86arch\nPRESET,KEPT,NOT_DERIVED,LLC_MISSES\nPRESET,Q,DERIVED_ADD,NOPE,KEPT\n",
		       "Q", "base event 'NOPE'");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_FOO,X\n", "t.csv:2: P: unknown derived type 'DERIVED_FOO'");
	expect_refused("CPU,nothing\nPRESET,P,DERIVED_FOO,X\n", "unknown derived type");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_ADD\n",
		       "DERIVED_ADD takes 1 or more base events, 0 given");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_PS,LLC_MISSES\n", "takes 2");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_ADD_PS,A,B\n", "takes 3");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_POSTFIX,N0|+|,LLC_MISSES\n", "two operands");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_INFIX,N0+N1,LLC_MISSES\n", "N1 does not name");
	expect_refused("CPU,ix86arch\nPRESET,P,DERIVED_POSTFIX\n", "needs a formula");
	expect_refused("CPU,ix86arch\nFOO,bar\n", "unknown command 'FOO'");
	expect_refused("CPU\n", "expected CPU,<pmu name>");
	expect_refused("CPU,ix86arch\nPRESET,P,NOT_DERIVED,LLC_MISSES,LDESC,\"open\n", "unterminated quote");
	expect_refused("CPU,ix86arch\nPRESET,P,NOT_DERIVED,LLC_MISSES,LDESC\n", "expected LDESC, SDESC or NOTE followed by a text");
	expect_refused("CPU,ix86arch\nPRESET,P,NOT_DERIVED,LLC_MISSES,FOO,\"x\"\n", "1 base event, 3 given");
}

static void test_env_and_papi(void)
{
	struct pmuctx_evdb *evdb = open_x86();
	const char *papi = getenv("PAPI_EVENTS_CSV");
	char tmpl[] = "/tmp/pmuctx-derived-XXXXXX", err[512] = "";
	struct pmuctx_derived_desc d;
	int fd = mkstemp(tmpl), ret, idx;
	const char text[] = "CPU,cpu\nEVENT,ENV_EVENT,NOT_DERIVED,LLC_MISSES\n";

	ok(fd >= 0 && write(fd, text, sizeof(text) - 1) == sizeof(text) - 1, "temporary event file");
	close(fd);
	setenv("PMUCTX_EVENT_FILE", tmpl, 1);
	ret = pmuctx_derived_load_env(evdb, err, sizeof(err));
	ok(!ret && pmuctx_evdb_find_derived(evdb, "ENV_EVENT") >= 0, "$PMUCTX_EVENT_FILE is loaded");
	unsetenv("PMUCTX_EVENT_FILE");
	unlink(tmpl);
	ret = pmuctx_derived_load(evdb, "/nonexistent/papi.csv", err, sizeof(err));
	ok(ret == -PMUCTX_EV_EIO && strstr(err, "No such file"), "missing file: %s", err);
	pmuctx_evdb_close(evdb);

	if (!papi || access(papi, R_OK)) {
		ok(0, "papi_events.csv not found (%s): install libpapi7.0 (make deps)", papi ? papi : "unset");
		return;
	}
	/* an Intel model without a section of its own: only ix86arch applies */
	if (pmuctx_evdb_open(&evdb, NULL, "GenuineIntel-6-99-1", err, sizeof(err)))
		diag("open: %s", err);
	ret = pmuctx_derived_load(evdb, papi, err, sizeof(err));
	ok(!ret, "%s loads on x86 (%s)", papi, err);
	idx = pmuctx_evdb_find_derived(evdb, "PAPI_BR_INS");
	ok(idx >= 0 && !pmuctx_evdb_derived(evdb, idx, &d) && !strcmp(d.bases[0], "BRANCH_INSTRUCTIONS_RETIRED"),
	   "ix86arch section resolved: PAPI_BR_INS");
	ok(native_index(evdb, 0xc4, 0) >= 0 && native_index(evdb, 0xc5, 0) >= 0,
	   "PAPI_BR_INS/PAPI_BR_MSP encode to 0xc4/0xc5");
	ok(pmuctx_evdb_find_derived(evdb, "PAPI_L1_DCM") < 0, "sections of other PMUs skipped");
	pmuctx_evdb_close(evdb);

	/* Skylake-X: the upstream table takes libpfm4's spellings of the skx section */
	evdb = open_x86();
	ret = pmuctx_derived_load(evdb, papi, err, sizeof(err));
	idx = pmuctx_evdb_find_derived(evdb, "PAPI_TOT_INS");
	ok(!ret && idx >= 0 && !pmuctx_evdb_derived(evdb, idx, &d) &&
	   !strcmp(d.bases[0], "INST_RETIRED:ANY_P") && native_index(evdb, 0xc0, 0) >= 0,
	   "skx section resolved on the skylakex table: PAPI_TOT_INS = INST_RETIRED:ANY_P (0xc0)");
	ok(!ret && pmuctx_evdb_find_derived(evdb, "PAPI_L1_DCM") >= 0, "skx presets: PAPI_L1_DCM");
	for (idx = 0; idx < pmuctx_evdb_n_skipped(evdb) && idx < 3; idx++)
		diag("skipped: %s", pmuctx_evdb_skipped(evdb, idx));
	pmuctx_evdb_close(evdb);
	if (pmuctx_evdb_open(&evdb, NULL, "0x000f0510", err, sizeof(err)) == 0) {
		ret = pmuctx_derived_load(evdb, papi, err, sizeof(err));
		ok(!ret && pmuctx_evdb_n_derived(evdb) == 0,
		   "%s loads on the QEMU arm64 table (no section for it)", papi);
		pmuctx_evdb_close(evdb);
	}
}

int main(void)
{
	test_types();
	test_formulas();
	test_nary();
	test_last_definition_decides();
	test_errors();
	test_env_and_papi();
	return done_testing();
}
