// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat without a kernel: event lists (groups, pmu/terms/), counters
 * shared by derived events and metrics, and the three output formats on
 * counts set by hand (what a read would have returned).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "pmuctx_events.h"
#include "tap.h"
#include "../../pmuctx/stat.h"

static void expect_split(const char *list, int n, const char *first, const char *last)
{
	char *out[16], err[256] = "";
	int got = stat_split_list(list, out, 16, err, sizeof(err)), i;

	ok(got == n && (n <= 0 || (!strcmp(out[0], first) && !strcmp(out[n - 1], last))),
	   "split '%s' -> %d (%s .. %s) [%s]", list, n, first, last, got < 0 ? err : "");
	for (i = 0; i < got; i++)
		free(out[i]);
}

static void expect_split_error(const char *list, const char *msg)
{
	char *out[16], err[256] = "";

	ok(stat_split_list(list, out, 16, err, sizeof(err)) < 0 && strstr(err, msg),
	   "split '%s' fails: %s", list, err);
}

static void test_split(void)
{
	expect_split("cycles", 1, "cycles", "cycles");
	expect_split("cycles,instructions:u,BR_RETIRED", 3, "cycles", "BR_RETIRED");
	expect_split("{cycles,instructions},task-clock", 2, "{cycles,instructions}", "task-clock");
	expect_split("cpu/event=0xc0,umask=1/u,cs", 2, "cpu/event=0xc0,umask=1/u", "cs");
	expect_split("{a,b}:u,c", 2, "{a,b}:u", "c");
	expect_split_error("a,,b", "empty event name");
	expect_split_error("{a,b", "unterminated group");
	expect_split_error("{a,{b}}", "nested groups");
	expect_split_error("a}", "'}' without '{'");
}

static void expect_digits(uint64_t v, const char *sep, const char *want)
{
	char buf[64];

	stat_group_digits(buf, sizeof(buf), v, sep);
	ok(!strcmp(buf, want), "%llu grouped with '%s' -> %s (got %s)", (unsigned long long)v, sep,
	   want, buf);
}

static struct pmuctx_evdb *open_qemu(void)
{
	struct pmuctx_evdb *evdb = NULL;
	char err[256];

	if (pmuctx_evdb_open(&evdb, NULL, "0x000f0510", err, sizeof(err)) ||
	    pmuctx_derived_load_presets(evdb, err, sizeof(err)))
		diag("open: %s", err);
	return evdb;
}

static void test_events(void)
{
	static struct stat st;
	char err[512] = "";
	int i, hidden;

	memset(&st, 0, sizeof(st));
	st.evdb = open_qemu();
	ok(!stat_parse_events(&st, "{CPU_CYCLES,INST_RETIRED},BR_RETIRED", err, sizeof(err)) &&
	   st.n_counters == 3 && st.n_items == 3 && st.c[0].group_leader == 0 &&
	   st.c[1].group_leader == 0 && st.c[2].group_leader == -1,
	   "a group shares its leader, a plain event has none (%s)", err);
	ok(!stat_parse_events(&st, "PAPI_BR_PRC,PAPI_TOT_INS", err, sizeof(err)) &&
	   st.n_items == 5 && st.it[3].kind == ITEM_DERIVED,
	   "PAPI presets are events by name (%s)", err);
	/* BR_RETIRED is shared with the -e one; BR_MIS_PRED_RETIRED and instructions are hidden */
	for (i = 0, hidden = 0; i < st.n_counters; i++)
		hidden += !strcmp(st.c[i].info.fstr, "armv8_pmuv3::BR_MIS_PRED_RETIRED:u=1:k=1:h=0");
	ok(st.n_counters == 5 && hidden == 1, "derived events add only the counters not there yet (%d)",
	   st.n_counters);
	ok(!stat_add_metrics(&st, "ipc", 0, err, sizeof(err)) && st.it[st.n_items - 1].kind == ITEM_METRIC,
	   "-M ipc adds a metric (%s)", err);
	ok(stat_add_metrics(&st, "ipcc", 0, err, sizeof(err)) && strstr(err, "did you mean 'ipc'"),
	   "unknown metric suggests: %s", err);
	i = st.n_items;
	ok(!stat_add_metrics(&st, "Summary", 1, err, sizeof(err)) && st.n_items == i + 2 &&
	   !strcmp(st.it[i].name, "ipc") && !strcmp(st.it[i + 1].name, "cpi"),
	   "--metric-group Summary adds ipc and cpi (%s)", err);
	ok(stat_add_metrics(&st, "NoSuchGroup", 1, err, sizeof(err)) && strstr(err, "no metric in group 'NoSuchGroup'"),
	   "unknown metric group: %s", err);
	i = st.n_counters;
	ok(!stat_parse_events(&st, "armv8_pmuv3::CPU_CYCLES,CPU_CYCLES:k,armv8_pmuv3/event=0x11/k", err,
			      sizeof(err)) && !st.c[i].explicit_mods && st.c[i + 1].explicit_mods &&
	   st.c[i + 2].explicit_mods, "pmu::EVENT has no typed modifier, EVENT:k and pmu/.../k do (%s)", err);
	ok(stat_parse_events(&st, "cylces", err, sizeof(err)) && strstr(err, "did you mean 'cycles'"),
	   "unknown event suggests: %s", err);
	ok(stat_parse_events(&st, "task-clock:u", err, sizeof(err)) &&
	   strstr(err, "counts the task in every mode"), "software :u refused before the kernel: %s", err);
	ok(!stat_parse_events(&st, "{cycles,instructions}:u", err, sizeof(err)) &&
	   st.c[st.n_counters - 1].info.enc.exclude_kernel && st.c[st.n_counters - 2].info.enc.exclude_kernel,
	   "{a,b}:u applies to every member (%s)", err);
	pmuctx_evdb_close(st.evdb);
}

/* Counts as a run would have left them: cycles, instructions, task-clock, BR_RETIRED refused. */
static void fake_run(struct stat *st, FILE *out, enum stat_format fmt, int repeat)
{
	static const double runs[3][3] = {
		{ 2000000, 3000000, 1000000 }, { 2200000, 3000000, 1000000 }, { 1800000, 3000000, 1000000 },
	};
	char err[256];
	int r, i;

	memset(st, 0, sizeof(*st));
	st->evdb = open_qemu();
	st->o.out = out;
	st->o.format = fmt;
	st->o.sep = ";";
	st->o.repeat = repeat;
	st->o.inherit = 1;
	st->child = 1;
	if (stat_parse_events(st, "cycles,instructions,task-clock,BR_RETIRED,PAPI_TOT_INS", err, sizeof(err)))
		diag("parse: %s", err);
	st->c[3].open_errno = ENOENT;
	for (r = 0; r < repeat; r++) {
		for (i = 0; i < 3; i++) {
			st->c[i].value = runs[r][i];
			st->c[i].enabled = st->c[i].running = 1000000;
			st->c[i].status = STAT_COUNTED;
		}
		st->c[3].status = STAT_NOT_SUPPORTED;
		st->elapsed = 0.002;
		stat_compute_items(st, 0);
		stat_accumulate(st);
	}
	stat_print_items(st, -1);
	pmuctx_evdb_close(st->evdb);
}

static char *capture(enum stat_format fmt, int repeat)
{
	static struct stat st;
	static char buf[8192];
	FILE *f = tmpfile();
	size_t n;

	fake_run(&st, f, fmt, repeat);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void test_formats(void)
{
	char *out, *line, *save = NULL;
	int lines = 0, valid = 0;

	out = capture(FMT_STD, 1);
	ok(strstr(out, "           2000000      cycles") && strstr(out, "1.500 insn per cycle") &&
	   strstr(out, "2.000 GHz"), "table: counts, GHz and insn per cycle:\n%s", out);
	ok(strstr(out, "   <not supported>      BR_RETIRED") != NULL, "table: <not supported> in the value column");
	ok(strstr(out, "1.00 msec task-clock") && strstr(out, "0.500 CPUs utilized"),
	   "table: task-clock in msec, CPUs utilized");
	ok(strstr(out, "3000000      PAPI_TOT_INS") != NULL, "table: a PAPI preset has its value");

	out = capture(FMT_STD, 3);
	ok(strstr(out, "2000000      cycles") && strstr(out, "( +-  5.77% )") &&
	   strstr(out, "( +-  0.00% )"), "-r 3: mean and relative error of the mean:\n%s", out);

	out = capture(FMT_CSV, 1);
	ok(strstr(out, "2000000;;cycles;1000000;100.00;2.000;GHz\n") &&
	   strstr(out, "1.00;msec;task-clock;1000000;100.00;0.500;CPUs utilized\n") &&
	   strstr(out, "<not supported>;;BR_RETIRED;0;0.00;;\n"), "-x ';' fields:\n%s", out);
	out = capture(FMT_CSV, 3);
	ok(strstr(out, "2000000;;cycles;5.77%;") != NULL, "-x with -r: the variance after the name");

	out = capture(FMT_JSON, 3);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_value *v;
		char err[128];

		lines++;
		if (!json_parse(line, strlen(line), &v, err, sizeof(err)) && v->type == JSON_OBJECT &&
		    json_member(v, "counter-value") && json_member(v, "event"))
			valid++;
		else
			diag("bad JSON line: %s (%s)", line, err);
	}
	ok(lines == 5 && valid == 5, "--json: one valid object per event (%d of %d)", valid, lines);
}

int main(void)
{
	test_split();
	expect_digits(1234567, ",", "1,234,567");
	expect_digits(1000, ",", "1,000");
	expect_digits(999, ",", "999");
	expect_digits(0, ",", "0");
	expect_digits(1234567, "", "1234567");
	expect_digits(12345678901ULL, ".", "12.345.678.901");
	test_events();
	test_formats();
	return done_testing();
}
