// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat without a kernel: event lists (groups, pmu/terms/), counters
 * shared by derived events and metrics, and the three output formats on
 * counts set by hand (what a read would have returned), multiplexed ones
 * with their error among them.
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
	FILE *f = tmpfile();

	fake_run(&st, f, fmt, repeat);
	return slurp(f);
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

typedef unsigned __int128 u128;

/* Slices (c[i], t[i]) * scale as the kernel sums them, added to @s. */
static void add_slices(struct pmuctx_slice_stats *s, const u128 *c, const u128 *t, int n, u128 scale)
{
	u128 cc = s->sum_count_sq[0] | (u128)s->sum_count_sq[1] << 64;
	u128 ct = s->sum_count_time[0] | (u128)s->sum_count_time[1] << 64;
	u128 tt = s->sum_time_sq[0] | (u128)s->sum_time_sq[1] << 64;
	int i;

	for (i = 0; i < n; i++) {
		cc += c[i] * scale * c[i] * scale;
		ct += c[i] * scale * t[i] * scale;
		tt += t[i] * scale * t[i] * scale;
	}
	s->slices += n;
	s->sum_count_sq[0] = cc;
	s->sum_count_sq[1] = cc >> 64;
	s->sum_count_time[0] = ct;
	s->sum_count_time[1] = ct >> 64;
	s->sum_time_sq[0] = tt;
	s->sum_time_sq[1] = tt >> 64;
}

/*
 * Multiplexed: cycles ran 12 of 16 ms in six slices of 2 ms that counted
 * 10, 20, 30, 10, 20, 30 (millions): scaled 160000000, R 10, S 400,
 * Var(R) = 6/5 * 400 / 144, SE 16 * 1.8257 = 29.212 (millions), Student
 * t(5) 2.571, the 95% error 2.571 * 29.212 / 160 = 46.94%.
 * instructions ran as long in one slice: error unknown.  task-clock ran
 * all the time: exact.
 */
static char *capture_mux(enum stat_format fmt, int repeat)
{
	static const u128 c[] = { 10, 20, 30, 10, 20, 30 }, t[] = { 2, 2, 2, 2, 2, 2 };
	static const u128 one_c[] = { 120 }, one_t[] = { 12 };
	static struct stat st;
	FILE *f = tmpfile();
	char err[256];
	int r;

	memset(&st, 0, sizeof(st));
	st.evdb = open_qemu();
	st.o.out = f;
	st.o.format = fmt;
	st.o.sep = ";";
	st.o.repeat = repeat;
	st.error_column = 1;
	if (stat_parse_events(&st, "cycles,instructions,task-clock,BR_RETIRED", err, sizeof(err)))
		diag("parse: %s", err);
	st.c[3].open_errno = ENOENT;
	st.c[3].status = STAT_NOT_SUPPORTED;
	for (r = 0; r < repeat; r++) {
		memset(&st.c[0].slices, 0, sizeof(st.c[0].slices));
		memset(&st.c[1].slices, 0, sizeof(st.c[1].slices));
		st.c[0].value = st.c[1].value = 120000000;
		st.c[0].enabled = st.c[1].enabled = 16000000;
		st.c[0].running = st.c[1].running = 12000000;
		add_slices(&st.c[0].slices, c, t, 6, 1000000);
		add_slices(&st.c[1].slices, one_c, one_t, 1, 1000000);
		st.c[2].value = st.c[2].enabled = st.c[2].running = 16000000;
		st.elapsed = 0.016;
		stat_compute_items(&st, 0);
		stat_accumulate(&st);
	}
	stat_print_items(&st, -1);
	pmuctx_evdb_close(st.evdb);
	return slurp(f);
}

/* A zeroed run printing @fmt to @f with the QEMU tables (one at a time). */
static struct stat *capture_stat(FILE *f, enum stat_format fmt)
{
	static struct stat st;

	memset(&st, 0, sizeof(st));
	st.evdb = open_qemu();
	st.o.out = f;
	st.o.format = fmt;
	return &st;
}

/*
 * -I: the interval is the difference of two reads, slice sums included
 * (in units of 10^9 they pass 2^64, so the low words borrow).  First
 * read: the slice (10, 2) of 2 enabled; second: (20, 3), (60, 4),
 * (30, 3), (40, 4), (20, 2) more in 20 more.  The interval: C 170, T 16,
 * E 20, scaled 212.5, SE 29.928, 4.74 effective slices (t(3) 3.182):
 * error 3.182 * 29.928 / 212.5 = 44.81%.
 */
static char *capture_interval(void)
{
	static const u128 c1[] = { 10 }, t1[] = { 2 };
	static const u128 c2[] = { 20, 60, 30, 40, 20 }, t2[] = { 3, 4, 3, 4, 2 };
	const u128 g = 1000000000;
	FILE *f = tmpfile();
	struct stat *st = capture_stat(f, FMT_STD);
	char err[256];

	st->o.interval_ms = 100;
	st->error_column = 1;
	if (stat_parse_events(st, "cycles", err, sizeof(err)))
		diag("parse: %s", err);
	st->c[0].prev_value = 10 * g;
	st->c[0].prev_enabled = st->c[0].prev_running = 2 * g;
	add_slices(&st->c[0].prev_slices, c1, t1, 1, g);
	st->c[0].slices = st->c[0].prev_slices;
	add_slices(&st->c[0].slices, c2, t2, 5, g);
	st->c[0].value = 180 * g;
	st->c[0].enabled = 22 * g;
	st->c[0].running = 18 * g;
	stat_compute_items(st, 1);
	stat_print_items(st, 0.2);
	pmuctx_evdb_close(st->evdb);
	return slurp(f);
}

static void test_multiplexed(void)
{
	char *out, *line, *save = NULL;
	int errors = 0, nulls = 0;

	out = capture_mux(FMT_STD, 1);
	ok(strstr(out, "160000000      cycles") && strstr(out, "(75.00%)  \u00b1 46.94%\n"),
	   "table: scaled value, perf's running column, the 95%% error:\n%s", out);
	ok(strstr(out, "160000000      instructions") && strstr(out, "(75.00%)  \u00b1 ?\n"),
	   "table: one slice: error unknown, not 0");
	line = strstr(out, "task-clock");
	ok(line && !strchr(line, '(') && !strstr(line, "\u00b1"),
	   "table: a counter that ran all its time has neither column");

	out = capture_mux(FMT_STD, 2);
	ok(strstr(out, "( +-  0.00% )  (75.00%)  \u00b1 33.19%\n") != NULL,
	   "-r 2: the runs' noise, then the error of the mean (46.94 / sqrt 2):\n%s", out);

	out = capture_mux(FMT_CSV, 1);
	ok(strstr(out, "160000000;;cycles;12000000;75.00;") && strstr(out, ";46.94%\n") &&
	   strstr(out, "instructions;12000000;75.00;1.000;insn per cycle;?\n") &&
	   strstr(out, "task-clock;16000000;100.00;") && strstr(out, "CPUs utilized;0.00%\n") &&
	   strstr(out, "<not supported>;;BR_RETIRED;0;0.00;;;\n"),
	   "-x: the error after perf's fields, ? unknown, empty without a value:\n%s", out);

	out = capture_mux(FMT_JSON, 1);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_value *v;
		const struct json_value *e;
		char err[128];

		if (json_parse(line, strlen(line), &v, err, sizeof(err))) {
			diag("bad JSON line: %s (%s)", line, err);
			continue;
		}
		e = json_member(v, "error-95");
		if (e && e->type == JSON_NUMBER && !strcmp(e->text, "46.94"))
			errors++;
		if (e && e->type == JSON_NULL)
			nulls++;
		json_free(v);
	}
	ok(errors == 1 && nulls == 1, "--json: \"error-95\" 46.94 for cycles, null when unknown");

	out = capture_interval();
	ok(strstr(out, "0.200000000") && strstr(out, "212500000000      cycles") &&
	   strstr(out, "(80.00%)  \u00b1 44.81%\n"),
	   "-I: value, running and slice sums differenced, 128-bit borrows:\n%s", out);
}

/* Address ranges in event lists and --data-range, before any kernel. */
static void test_ranges(void)
{
	struct range_request rq = { PMUCTX_RANGE_DATA_WRITE, 0, 0x1000, 0x1000 };
	static struct stat st;
	char err[512] = "";
	int n;

	memset(&st, 0, sizeof(st));
	st.evdb = open_qemu();
	ok(!stat_parse_events(&st, "task-clock,range:data@0x4a9340+32,range:insn@0x401860+1:exact", err,
			      sizeof(err)) && st.n_counters == 3 && st.n_items == 3 &&
	   st.c[1].info.enc.type == PMUCTX_TYPE_RANGE && st.c[1].info.enc.config == PMUCTX_RANGE_DATA &&
	   st.c[1].range.start == 0x4a9340 && st.c[1].range.end == 0x4a9360 &&
	   !strcmp(st.c[1].name, "range:data@0x4a9340+32") &&
	   !strcmp(st.c[1].info.fstr, "range:data@0x4a9340-0x4a9360") &&
	   st.c[2].info.enc.config == (PMUCTX_RANGE_INSN | PMUCTX_RANGE_EXACT),
	   "-e range:KIND@RANGE: a range counter named as typed (%s)", err);
	ok(st.c[1].explicit_mods, "a range never falls back to :u");
	n = st.n_counters;
	ok(stat_parse_events(&st, "{task-clock,range:data@0x1000+8}", err, sizeof(err)) &&
	   strstr(err, "a range counter cannot be a group member") && st.n_counters == n,
	   "a range in a group is refused: %s", err);
	ok(stat_parse_events(&st, "range:data@0x2000-0x1000", err, sizeof(err)) &&
	   strstr(err, "range:data@0x2000-0x1000: empty or inverted range"), "inverted: %s", err);
	ok(stat_parse_events(&st, "range:bogus@0x1000+8", err, sizeof(err)) &&
	   strstr(err, "unknown kind 'bogus'"), "unknown kind: %s", err);
	ok(stat_add_range(&st, &rq, "range:data-write", err, sizeof(err)) &&
	   strstr(err, "empty or inverted range"), "--data-range START+0: %s", err);
	rq.end = 0x1008;
	ok(!stat_add_range(&st, &rq, "range:data-write", err, sizeof(err)) &&
	   !strcmp(st.it[st.n_items - 1].name, "range:data-write") &&
	   st.c[st.n_counters - 1].info.enc.config == PMUCTX_RANGE_DATA_WRITE,
	   "--data-range: a range counter named range:KIND (%s)", err);
	pmuctx_evdb_close(st.evdb);
}

/*
 * A --data-range run as it would print: the plan (widened by a byte at
 * the start) in the table's header, the count on its line.
 */
static char *capture_range(enum stat_format fmt)
{
	struct range_request rq = { PMUCTX_RANGE_DATA, 0, 0x4a9341, 0x4a9360 };
	FILE *f = tmpfile();
	struct stat *st = capture_stat(f, fmt);
	char err[256];

	st->o.sep = ",";
	st->o.repeat = 1;
	st->o.inherit = 1;
	st->child = 1;
	st->cmd_argc = 1;
	st->cmd_argv = (char *[]) { "./range_target", NULL };
	if (stat_parse_events(st, "task-clock", err, sizeof(err)) ||
	    stat_add_range(st, &rq, "range:data", err, sizeof(err)))
		diag("parse: %s", err);
	st->c[1].plan = (struct pmuctx_range) {
		.size = sizeof(st->c[1].plan), .nr_spans = 4, .start = rq.start, .end = rq.end,
		.start_off = 1,
	};
	st->c[1].have_plan = 1;
	st->c[0].value = st->c[0].enabled = st->c[0].running = 1000000;
	st->c[1].value = 6000;
	st->c[1].enabled = st->c[1].running = 1000000;
	st->elapsed = 0.002;
	stat_compute_items(st, 0);
	stat_accumulate(st);
	stat_print_header(st);
	stat_print_items(st, -1);
	pmuctx_evdb_close(st->evdb);
	return slurp(f);
}

static void test_range_output(void)
{
	char *out = capture_range(FMT_STD);

	ok(strstr(out, "\n range:data (range:data@0x4a9341-0x4a9360):\n"
		       "   Requested Start Address: 0x00000000004a9341; Start Offset: 0x1; "
		       "Actual Start Address: 0x00000000004a9340\n"
		       "   Requested End Address  : 0x00000000004a9360; End Offset  : 0x0; "
		       "Actual End Address  : 0x00000000004a9360\n"
		       "   Registers              : 4\n\n") &&
	   strstr(out, "              6000      range:data") && !strstr(out, "range:data  #"),
	   "table: the plan in the header, PAPI's wording; the count on its line, no rate:\n%s", out);
	out = capture_range(FMT_CSV);
	ok(strstr(out, "6000,,range:data,1000000,100.00,,\n") && !strstr(out, "Requested"),
	   "-x: the count's line, and no plan among the fields:\n%s", out);
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
	test_multiplexed();
	test_ranges();
	test_range_output();
	return done_testing();
}
