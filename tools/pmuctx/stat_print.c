// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat output, perf stat's layouts: the table for people (digits
 * grouped as the locale says, rates after '#', "( +- x.xx% )" over -r runs,
 * "(xx.xx%)" of the time a multiplexed counter ran), -x SEP fields, and
 * --json one object per line.  Ours on top: the 95% error of a scaled
 * count (Documentation/multiplexing.rst), "± x.xx%" in the table, a last
 * CSV field and "error-95" in JSON.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pmuctx_abi.h"
#include "stat.h"

void stat_group_digits(char *buf, size_t len, uint64_t v, const char *sep)
{
	char digits[32];
	size_t n, i, out = 0, sep_len = sep ? strlen(sep) : 0;

	n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	for (i = 0; i < n && out + sep_len + 2 < len; i++) {
		buf[out++] = digits[i];
		if (sep_len && i + 1 < n && (n - i - 1) % 3 == 0) {
			memcpy(buf + out, sep, sep_len);
			out += sep_len;
		}
	}
	buf[out] = 0;
}

static const char *thousands_sep(void)
{
	const struct lconv *lc = localeconv();

	return lc && lc->thousands_sep && *lc->thousands_sep && lc->grouping &&
	       *lc->grouping ? lc->thousands_sep : "";
}

/* ---------- what a line is ---------- */

static const struct stat_counter *item_counter(const struct stat *st, const struct stat_item *it)
{
	return it->kind == ITEM_COUNTER ? &st->c[it->counter] : NULL;
}

static int is_task_clock(const struct stat_counter *c)
{
	return c && c->info.enc.type == PMUCTX_TYPE_SOFTWARE && c->info.enc.config == PMUCTX_SW_TASK_CLOCK;
}

static int is_cycles(const struct stat_counter *c)
{
	if (!c)
		return 0;
	if (c->info.enc.type == PMUCTX_TYPE_HARDWARE)
		return c->info.enc.config == PMUCTX_HW_CPU_CYCLES;
	return c->info.name && (!strcasecmp(c->info.name, "CPU_CYCLES") ||
				!strcasecmp(c->info.name, "CPU_CLK_UNHALTED"));
}

static int is_instructions(const struct stat_counter *c)
{
	if (!c)
		return 0;
	if (c->info.enc.type == PMUCTX_TYPE_HARDWARE)
		return c->info.enc.config == PMUCTX_HW_INSTRUCTIONS;
	return c->info.name && !strcasecmp(c->info.name, "INST_RETIRED");
}

/* Totals over -r runs are means; an interval is its own value. */
static int over_runs(const struct stat *st)
{
	return st->o.repeat > 1 && !st->printing_interval;
}

static double item_mean(const struct stat *st, const struct stat_item *it)
{
	return over_runs(st) && it->runs ? it->sum / it->runs : it->value;
}

/* Relative standard error of the mean over the runs, as perf prints it. */
static double item_rel_stddev(const struct stat_item *it)
{
	double mean, var;

	if (it->runs < 2)
		return 0;
	mean = it->sum / it->runs;
	var = (it->sum_sq - it->sum * mean) / (it->runs - 1);
	if (var < 0 || mean == 0)
		return 0;
	return 100.0 * sqrt(var / it->runs) / fabs(mean);
}

static const struct stat_item *find_item(const struct stat *st, int (*is)(const struct stat_counter *))
{
	int i;

	for (i = 0; i < st->n_items; i++)
		if (st->it[i].status == STAT_COUNTED && is(item_counter(st, &st->it[i])))
			return &st->it[i];
	return NULL;
}

/* perf's note after '#': CPUs utilized, GHz, insn per cycle, /sec. */
static int shadow_metric(const struct stat *st, const struct stat_item *it, double interval_s,
			 double *value, const char **unit)
{
	const struct stat_counter *c = item_counter(st, it);
	const struct stat_item *clock = find_item(st, is_task_clock);
	const struct stat_item *cycles = find_item(st, is_cycles);
	double v = item_mean(st, it), secs = interval_s > 0 ? interval_s :
		   over_runs(st) && st->runs ? st->sum_elapsed / st->runs : st->elapsed;
	double clock_ns = clock ? item_mean(st, clock) : 0;

	if (it->status != STAT_COUNTED || !c)
		return 0;
	if (is_task_clock(c)) {
		if (secs <= 0)
			return 0;
		*value = v / 1e9 / secs;
		*unit = "CPUs utilized";
		return 1;
	}
	if (is_instructions(c) && cycles && item_mean(st, cycles) > 0) {
		*value = v / item_mean(st, cycles);
		*unit = "insn per cycle";
		return 1;
	}
	if (is_cycles(c) && clock_ns > 0) {
		*value = v / clock_ns;
		*unit = "GHz";
		return 1;
	}
	if (c->info.enc.type == PMUCTX_TYPE_SOFTWARE && clock_ns > 0) {
		double rate = v / (clock_ns / 1e9);

		*unit = rate >= 1e6 ? "M/sec" : rate >= 1e3 ? "K/sec" : "/sec";
		*value = rate >= 1e6 ? rate / 1e6 : rate >= 1e3 ? rate / 1e3 : rate;
		return 1;
	}
	return 0;
}

static const char *status_text(enum stat_status s)
{
	return s == STAT_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
}

/* The value column: msec for task-clock, grouped integers, else decimals. */
static void format_value(const struct stat *st, const struct stat_item *it, char *buf,
			 size_t len, const char **unit, int grouped)
{
	const struct stat_counter *c = item_counter(st, it);
	double v = item_mean(st, it);

	*unit = "";
	if (it->status != STAT_COUNTED) {
		snprintf(buf, len, "%s", status_text(it->status));
		return;
	}
	if (is_task_clock(c)) {
		snprintf(buf, len, "%.2f", v / 1e6);
		*unit = "msec";
	} else if (it->kind == ITEM_METRIC) {
		snprintf(buf, len, "%.2f", v);
		*unit = it->unit;
	} else if (v >= 0 && v < 1.8e19 && (it->kind == ITEM_COUNTER || v == floor(v) ||
					      over_runs(st))) {
		/* counts (and their means over -r runs) are whole numbers, as in perf */
		stat_group_digits(buf, len, (uint64_t)llround(v), grouped ? thousands_sep() : "");
	} else {
		snprintf(buf, len, "%.2f", v);
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/*
 * Time the counter ran, and which part of its enabled time: per interval
 * with -I, the mean over -r runs.  Returns whether it ran part of it only
 * (perf's "(xx.xx%)" column).
 */
static int run_times(const struct stat *st, const struct stat_item *it, uint64_t *runtime,
		     double *pct)
{
	double run = it->running, ena = it->enabled;

	if (it->kind != ITEM_COUNTER) {
		run = ena = 0;
	} else if (over_runs(st)) {
		run = it->runs ? it->sum_running / it->runs : 0;
		ena = it->runs ? it->sum_enabled / it->runs : 0;
	}
	*runtime = (uint64_t)llround(run);
	*pct = ena ? 100.0 * run / ena : it->status == STAT_COUNTED ? 100.0 : 0;
	return ena && run < ena;
}

enum item_error { ERR_NONE, ERR_KNOWN, ERR_UNKNOWN };

/*
 * The 95% half-width relative to the value, in %: 0 for a count that ran
 * all its enabled time.  ERR_NONE: no error to print (the module gave no
 * slice statistics, not a counter, or no value).  Over -r runs, the error
 * of the mean: the runs are independent, so sqrt(Σ half-width²) / runs
 * (each run's half-width with the Student t of its own slices: no wider
 * than the exact one would be with the pooled degrees of freedom).
 */
static enum item_error item_error(const struct stat *st, const struct stat_item *it, double *pct)
{
	double mean, half;

	*pct = 0;
	if (!st->error_column || it->kind != ITEM_COUNTER || it->status != STAT_COUNTED)
		return ERR_NONE;
	if (over_runs(st)) {
		if (!it->runs)
			return ERR_NONE;
		if (it->unknown_runs)
			return ERR_UNKNOWN;
		mean = it->sum / it->runs;
		half = sqrt(it->sum_ci_sq) / it->runs;
		*pct = mean > 0 ? 100.0 * half / mean : 0;
		return ERR_KNOWN;
	}
	switch (it->est.state) {
	case PMUCTX_EST_EXACT:
		return ERR_KNOWN;
	case PMUCTX_EST_ESTIMATED:
		*pct = it->est.scaled > 0 ? 100.0 * it->est.ci95 / it->est.scaled : 0;
		return ERR_KNOWN;
	case PMUCTX_EST_UNKNOWN:
		return ERR_UNKNOWN;
	default:
		return ERR_NONE;
	}
}

static void print_std(struct stat *st, const struct stat_item *it, double ts, double interval_s)
{
	FILE *f = st->o.out;
	char val[64];
	const char *unit, *munit;
	double m, pct, err;
	uint64_t runtime;
	int part_time = run_times(st, it, &runtime, &pct);

	format_value(st, it, val, sizeof(val), &unit, 1);
	if (ts >= 0)
		fprintf(f, "%16.9f ", ts);
	fprintf(f, "%18s %-4s %-25s", val, unit, it->name);
	if (shadow_metric(st, it, interval_s, &m, &munit))
		fprintf(f, " # %8.3f %-20s", m, munit);
	else if (it->status != STAT_COUNTED && it->why[0])
		fprintf(f, " # %s", it->why);
	else if (over_runs(st) || part_time)
		fprintf(f, "   %8s %-20s", "", "");
	if (over_runs(st) && it->status == STAT_COUNTED)
		fprintf(f, "  ( +- %5.2f%% )", item_rel_stddev(it));
	/* as perf: the part of its time it counted, when it had to share the PMU */
	if (part_time) {
		fprintf(f, "  (%.2f%%)", pct);
		switch (item_error(st, it, &err)) {
		case ERR_KNOWN:
			fprintf(f, "  ± %.2f%%", err);
			break;
		case ERR_UNKNOWN:
			fprintf(f, "  ± ?");
			break;
		case ERR_NONE:
			break;
		}
	}
	fputc('\n', f);
}

static void print_csv(struct stat *st, const struct stat_item *it, double ts, double interval_s)
{
	FILE *f = st->o.out;
	const char *sep = st->o.sep, *unit, *munit = "";
	char val[64], metric[32] = "";
	uint64_t runtime;
	double pct, m, err;

	format_value(st, it, val, sizeof(val), &unit, 0);
	run_times(st, it, &runtime, &pct);
	if (shadow_metric(st, it, interval_s, &m, &munit))
		snprintf(metric, sizeof(metric), "%.3f", m);
	if (ts >= 0)
		fprintf(f, "%.9f%s", ts, sep);
	fprintf(f, "%s%s%s%s%s", val, sep, unit, sep, it->name);
	if (over_runs(st))
		fprintf(f, "%s%.2f%%", sep, item_rel_stddev(it));
	fprintf(f, "%s%llu%s%.2f%s%s%s%s", sep, (unsigned long long)runtime, sep, pct, sep,
		metric, sep, munit);
	/* ours, after perf's fields: the 95% error, "?" unknown, empty for no count */
	if (st->error_column) {
		switch (item_error(st, it, &err)) {
		case ERR_KNOWN:
			fprintf(f, "%s%.2f%%", sep, err);
			break;
		case ERR_UNKNOWN:
			fprintf(f, "%s?", sep);
			break;
		case ERR_NONE:
			fputs(sep, f);
			break;
		}
	}
	fputc('\n', f);
}

static void print_json(struct stat *st, const struct stat_item *it, double ts, double interval_s)
{
	FILE *f = st->o.out;
	const char *unit, *munit;
	char val[64];
	uint64_t runtime;
	double pct, m, err;

	format_value(st, it, val, sizeof(val), &unit, 0);
	run_times(st, it, &runtime, &pct);
	fputc('{', f);
	if (ts >= 0)
		fprintf(f, "\"interval\" : %.9f, ", ts);
	fprintf(f, "\"counter-value\" : ");
	json_string(f, val);
	fprintf(f, ", \"unit\" : ");
	json_string(f, unit);
	fprintf(f, ", \"event\" : ");
	json_string(f, it->name);
	if (over_runs(st))
		fprintf(f, ", \"variance\" : %.2f", item_rel_stddev(it));
	fprintf(f, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f",
		(unsigned long long)runtime, pct);
	if (shadow_metric(st, it, interval_s, &m, &munit)) {
		fprintf(f, ", \"metric-value\" : %.3f, \"metric-unit\" : ", m);
		json_string(f, munit);
	}
	/* ours: the 95% error in % of the value, null when unknown */
	switch (item_error(st, it, &err)) {
	case ERR_KNOWN:
		fprintf(f, ", \"error-95\" : %.2f", err);
		break;
	case ERR_UNKNOWN:
		fprintf(f, ", \"error-95\" : null");
		break;
	case ERR_NONE:
		break;
	}
	fprintf(f, "}\n");
}

int stat_print_ranges(struct stat *st, FILE *f, const char *prefix)
{
	char indent[16];
	int i, printed = 0;

	snprintf(indent, sizeof(indent), "%s  ", prefix);
	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];

		if (c->info.enc.type != PMUCTX_TYPE_RANGE || !c->have_plan)
			continue;
		if (strcmp(c->name, c->info.fstr))
			fprintf(f, "%s%s (%s):\n", prefix, c->name, c->info.fstr);
		else
			fprintf(f, "%s%s:\n", prefix, c->name);
		range_print_plan(f, indent, &c->plan, 0);
		printed++;
	}
	return printed;
}

void stat_print_header(struct stat *st)
{
	FILE *f = st->o.out;
	char **argv = st->cmd_argv;
	int i, argc = st->cmd_argc;

	if (st->o.format != FMT_STD)
		return;
	if (st->o.interval_ms) {
		stat_print_ranges(st, f, "# ");
		fprintf(f, "#           time             counts unit events\n");
		return;
	}
	fprintf(f, "\n Performance counter stats for ");
	if (st->o.target_desc && !argc) {
		fprintf(f, "%s", st->o.target_desc);
	} else {
		fputc('\'', f);
		for (i = 0; i < argc; i++)
			fprintf(f, "%s%s", argv[i], i + 1 < argc ? " " : "");
		fputc('\'', f);
		if (st->o.target_desc)
			fprintf(f, " (%s)", st->o.target_desc);
	}
	if (st->o.repeat > 1)
		fprintf(f, " (%d runs)", st->o.repeat);
	fprintf(f, "%s:\n\n", st->o.inherit ? " (inherited)" : "");
	/* what a range counter counted, as PAPI reports it: before its count */
	if (stat_print_ranges(st, f, " "))
		fputc('\n', f);
}

void stat_print_items(struct stat *st, double ts)
{
	/* the last interval of a run ends with the command: it is shorter */
	double interval_s = ts >= 0 ? ts - st->last_interval_ts : 0;
	int i;

	st->printing_interval = ts >= 0;
	if (ts >= 0)
		st->last_interval_ts = ts;
	for (i = 0; i < st->n_items; i++) {
		switch (st->o.format) {
		case FMT_STD:
			print_std(st, &st->it[i], ts, interval_s);
			break;
		case FMT_CSV:
			print_csv(st, &st->it[i], ts, interval_s);
			break;
		case FMT_JSON:
			print_json(st, &st->it[i], ts, interval_s);
			break;
		}
	}
	fflush(st->o.out);
}

static void print_task_line(struct stat *st, const char *task, uint64_t value, const char *event)
{
	FILE *f = st->o.out;
	char val[64];

	switch (st->o.format) {
	case FMT_STD:
		stat_group_digits(val, sizeof(val), value, thousands_sep());
		fprintf(f, "%24s %18s      %s\n", task, val, event);
		break;
	case FMT_CSV:
		fprintf(f, "%s%s%llu%s%s\n", task, st->o.sep, (unsigned long long)value, st->o.sep, event);
		break;
	case FMT_JSON:
		fprintf(f, "{\"task\" : ");
		json_string(f, task);
		fprintf(f, ", \"counter-value\" : \"%llu\", \"event\" : ", (unsigned long long)value);
		json_string(f, event);
		fprintf(f, "}\n");
		break;
	}
}

/*
 * --per-task: the process-tree read of each counter (on the first target).
 * The target's own instance is either a live entry or, once it exited,
 * part of the exited sum: take it out of there, so each task shows once
 * and the exited children are folded together (their clones are gone).
 */
void stat_print_per_task(struct stat *st)
{
	static struct pmuctx_tree_entry ents[1024];
	pid_t target = st->child ? st->child : st->o.targets[0];
	int i;

	if (st->o.format == FMT_STD)
		fprintf(st->o.out, "\n");
	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];
		struct pmuctx_tree_read tr;
		uint32_t nr = 1024, e;
		int target_live = 0;
		char task[64];

		if (c->open_errno || c->fd[0] < 0)
			continue;
		if (pmuctx_counter_tree(c->fd[0], &tr, ents, &nr) && errno != ERANGE) {
			fprintf(stderr, "pmuctx: per-task read of %s: %s\n", c->name, strerror(errno));
			continue;
		}
		if (nr > 1024)
			nr = 1024;	/* more live tasks than we show */
		for (e = 0; e < nr; e++)
			target_live |= ents[e].tid == (uint32_t)target;
		snprintf(task, sizeof(task), "%s %d%s", st->child ? "command" : "task", (int)target,
			 target_live ? "" : " (exited)");
		print_task_line(st, task, tr.own_value, c->name);
		for (e = 0; e < nr; e++) {
			if (ents[e].tid == (uint32_t)target)
				continue;
			snprintf(task, sizeof(task), "tid %u", ents[e].tid);
			print_task_line(st, task, ents[e].value, c->name);
		}
		if (!target_live && tr.exited_tasks) {
			tr.exited_tasks--;
			tr.exited_value -= tr.own_value;
		}
		if (tr.exited_tasks) {
			snprintf(task, sizeof(task), "exited children (%llu)",
				 (unsigned long long)tr.exited_tasks);
			print_task_line(st, task, tr.exited_value, c->name);
		}
	}
	fflush(st->o.out);
}

void stat_print_footer(struct stat *st)
{
	FILE *f = st->o.out;
	double n = st->runs ? st->runs : 1, mean = st->sum_elapsed / n;
	int i;

	if (st->o.format != FMT_STD || st->o.interval_ms)
		return;
	for (i = 0; i < st->n_counters; i++) {
		struct pmuctx_ctx_stats cs;
		unsigned long long tasks;

		if (st->c[i].open_errno || st->c[i].fd[0] < 0 || pmuctx_counter_stats(st->c[i].fd[0], &cs))
			continue;
		tasks = cs.live_tasks + cs.exited_tasks;
		fprintf(f, "\n %llu task%s counted; contexts: %llu full loads, %llu equivalent swaps",
			tasks, tasks == 1 ? "" : "s",
			(unsigned long long)cs.tree_loads, (unsigned long long)cs.tree_swaps);
		if (cs.tree_handoffs)
			fprintf(f, ", %llu handoffs", (unsigned long long)cs.tree_handoffs);
		if (cs.tree_rotations)
			fprintf(f, ", %llu rotations", (unsigned long long)cs.tree_rotations);
		fputc('\n', f);
		if (cs.inherit_failed && st->c[i].info.enc.type != PMUCTX_TYPE_RANGE)
			fprintf(f, " %llu clones could not be allocated: their counts are missing\n",
				(unsigned long long)cs.inherit_failed);
		break;
	}
	/* a clone that found the debug registers taken counts nothing */
	for (i = 0; i < st->n_counters; i++) {
		struct pmuctx_ctx_stats cs;

		if (st->c[i].info.enc.type != PMUCTX_TYPE_RANGE || st->c[i].open_errno ||
		    st->c[i].fd[0] < 0 || pmuctx_counter_stats(st->c[i].fd[0], &cs) || !cs.inherit_failed)
			continue;
		fprintf(f, " %s: %llu inherited copies could not watch the range (debug registers held by a debugger or perf, or no memory): their tasks' accesses are missing\n",
			st->c[i].name, (unsigned long long)cs.inherit_failed);
	}
	fprintf(f, "\n %17.9f seconds time elapsed", mean);
	if (st->runs > 1) {
		double var = (st->sum_sq_elapsed - st->sum_elapsed * mean) / (st->runs - 1);

		fprintf(f, "  ( +- %5.2f%% )", var > 0 && mean > 0 ? 100.0 * sqrt(var / st->runs) / mean : 0.0);
	}
	fprintf(f, "\n\n");
	if (st->child)	/* rusage exists only for a child we waited for */
		fprintf(f, " %17.9f seconds user\n %17.9f seconds sys\n\n", st->sum_user / n, st->sum_sys / n);
	fflush(f);
}
