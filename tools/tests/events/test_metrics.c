// SPDX-License-Identifier: GPL-2.0
/*
 * Every metric of every table (the built-in database: upstream perf's
 * tables with ours underneath) either counts here or is refused with the
 * exact missing piece: each name the metric needs is an event this CPU
 * encodes for a task, or one of perf's constants, or the refusal names
 * it and says why.  Prints the counts per table.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pmu_db.h"
#include "pmuctx_events.h"
#include "tap.h"

extern const struct pmu_db pmuctx_builtin_db;

/* A concrete CPU id that selects the table of map row @m (x86 rows are regexes). */
static int concrete_cpuid(const struct pmu_db *db, const struct pmu_db_map *m, char *buf, size_t len)
{
	const char *pattern = PMU_DB_STR(db, m->cpuid), *table = PMU_DB_STR(db, db->tables[m->table].name);
	const char *arch = PMU_DB_STR(db, m->arch);
	char anchored[256], prefix[64], id[96];
	struct pmuctx_evdb *evdb;
	const char *dash;
	regex_t re;
	int model, step, fields = 0, found = 0, in_class;
	const char *c;

	if (!strcmp(pattern, "default"))
		return 0;
	if (strcmp(arch, "x86")) {
		snprintf(buf, len, "%s:%s", arch, pattern);
		return 1;
	}
	for (c = pattern, in_class = 0; *c; c++) {	/* '-' of [0-9A-F] separates nothing */
		in_class = *c == '[' ? 1 : *c == ']' ? 0 : in_class;
		fields += *c == '-' && !in_class;
	}
	dash = strchr(pattern, '-');
	dash = dash ? strchr(dash + 1, '-') : NULL;
	/* ours: a pattern for every family is the models' base table, checked with them */
	if (!dash || strspn(pattern, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-0123456789") <
	    (size_t)(dash - pattern))
		return 0;
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(dash - pattern), pattern);
	snprintf(anchored, sizeof(anchored), "^(%s)$", pattern);
	if (regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB))
		return 0;
	for (model = 0; model < 256 && !found; model++)
		for (step = 0; step < (fields >= 3 ? 16 : 1) && !found; step++) {
			if (fields >= 3)
				snprintf(id, sizeof(id), "%s-%X-%X", prefix, model, step);
			else
				snprintf(id, sizeof(id), "%s-%X", prefix, model);
			if (regexec(&re, id, 0, NULL, 0))
				continue;
			snprintf(buf, len, "x86:%s", id);
			if (pmuctx_evdb_open(&evdb, db, buf, NULL, 0))
				continue;
			found = pmuctx_evdb_table(evdb) && !strcmp(pmuctx_evdb_table(evdb), table);
			pmuctx_evdb_close(evdb);
		}
	regfree(&re);
	return found;
}

struct leaf_walk {
	struct pmuctx_evdb *evdb;
	char why[600];
	int refused;
};

static int check_leaf(void *ctx, const char *name)
{
	struct leaf_walk *w = ctx;
	struct pmuctx_event_info info;
	char err[512] = "";
	int ret = pmuctx_metric_leaf(w->evdb, name, &info, err, sizeof(err));

	if (ret >= 0)
		return 0;
	snprintf(w->why, sizeof(w->why), "needs %s: %s", name, err);
	/* the exact missing piece: a reason, never a bare code */
	w->refused = err[0] ? 1 : -1;
	return 1;
}

static int ones(void *ctx, const char *name, double *value, char *err, size_t len)
{
	(void)ctx; (void)name; (void)err; (void)len;
	*value = 1;
	return 0;
}

struct table_result {
	char table[64];
	int metrics, count, refused;
};

static void check_table(const char *cpuid, struct table_result *r, int *vague, int *bad_eval)
{
	struct pmuctx_evdb *evdb;
	char err[512];
	int i, n, shown = 0;

	if (pmuctx_evdb_open(&evdb, &pmuctx_builtin_db, cpuid, err, sizeof(err))) {
		(*vague)++;
		return;
	}
	snprintf(r->table, sizeof(r->table), "%s", pmuctx_evdb_table(evdb));
	n = pmuctx_evdb_n_metrics(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_metric_desc md;
		struct leaf_walk w = { .evdb = evdb };
		double v;
		int ret;

		pmuctx_evdb_metric(evdb, i, &md);
		r->metrics++;
		ret = pmuctx_metric_names(evdb, md.name, check_leaf, &w);
		if (ret < 0 || w.refused < 0) {
			(*vague)++;
			diag("%s: %s: refused without a reason (%d)", r->table, md.name, ret);
			continue;
		}
		if (w.refused) {
			r->refused++;
			if (shown++ < 2 || getenv("METRICS_VERBOSE"))
				diag("%s: %s refused: %s", r->table, md.name, w.why);
			continue;
		}
		r->count++;
		ret = pmuctx_metric_eval(evdb, md.name, ones, NULL, &v, err, sizeof(err));
		if (ret && ret != -PMUCTX_EV_EDIV_ZERO) {
			(*bad_eval)++;
			diag("%s: %s resolves but does not evaluate: %s", r->table, md.name, err);
		}
	}
	pmuctx_evdb_close(evdb);
}

static int metric_counts(const char *cpuid, const char *metric)
{
	struct pmuctx_evdb *evdb;
	struct leaf_walk w = { 0 };
	int ret;

	if (pmuctx_evdb_open(&evdb, &pmuctx_builtin_db, cpuid, NULL, 0))
		return 0;
	w.evdb = evdb;
	ret = pmuctx_metric_names(evdb, metric, check_leaf, &w);
	if (ret || w.refused)
		diag("%s on %s: %s", metric, cpuid, w.refused ? w.why : "unknown metric");
	pmuctx_evdb_close(evdb);
	return !ret && !w.refused;
}

static int metric_refused(const char *cpuid, const char *metric, const char *why)
{
	struct pmuctx_evdb *evdb;
	struct leaf_walk w = { 0 };

	if (pmuctx_evdb_open(&evdb, &pmuctx_builtin_db, cpuid, NULL, 0))
		return 0;
	w.evdb = evdb;
	pmuctx_metric_names(evdb, metric, check_leaf, &w);
	pmuctx_evdb_close(evdb);
	if (!w.refused || !strstr(w.why, why))
		diag("%s on %s: %s", metric, cpuid, w.refused ? w.why : "counts");
	return w.refused > 0 && strstr(w.why, why);
}

int main(void)
{
	const struct pmu_db *db = &pmuctx_builtin_db;
	struct table_result *results = calloc(db->n_tables, sizeof(*results));
	int *done = calloc(db->n_tables, sizeof(*done));
	int vague = 0, bad_eval = 0, tables = 0, metrics = 0, count = 0, refused = 0, missing = 0;
	uint32_t i;
	char cpuid[128];

	for (i = 0; i < db->n_maps; i++) {
		const struct pmu_db_map *m = &db->maps[i];

		if (done[m->table] || strcmp(PMU_DB_STR(db, m->type), "core") ||
		    !db->tables[m->table].n_metrics)
			continue;
		if (!concrete_cpuid(db, m, cpuid, sizeof(cpuid))) {
			if (strcmp(PMU_DB_STR(db, m->cpuid), "default") && !strchr(PMU_DB_STR(db, m->cpuid), '[')) {
				diag("no CPU id selects table %s", PMU_DB_STR(db, db->tables[m->table].name));
				missing++;
			}
			continue;
		}
		done[m->table] = 1;
		check_table(cpuid, &results[m->table], &vague, &bad_eval);
		printf("# %-20s %-28s %4d metrics: %4d count, %4d refused\n", results[m->table].table,
		       cpuid, results[m->table].metrics, results[m->table].count, results[m->table].refused);
		tables++;
		metrics += results[m->table].metrics;
		count += results[m->table].count;
		refused += results[m->table].refused;
	}
	printf("# all tables: %d metrics, %d count, %d refused\n", metrics, count, refused);
	ok(tables >= 20 && !missing, "every table with metrics checked (%d, %d without a CPU id)", tables, missing);
	ok(!vague, "every metric counts or is refused naming the missing piece (%d are not)", vague);
	ok(!bad_eval, "every metric that counts evaluates (%d do not)", bad_eval);
	/* measured with Linux 6.1's tables: uncore, cstate and missing upstream events only */
	ok(count >= 2594 && refused <= 335, "no metric that counted is refused now (%d count, %d refused)",
	   count, refused);
	/* the TMA tree and perf's sysfs events, TSC and escaped terms */
	ok(metric_counts("x86:GenuineIntel-6-8F-4", "tma_frontend_bound"), "tma_frontend_bound counts on Sapphire Rapids");
	ok(metric_counts("x86:GenuineIntel-6-7D-1", "tma_backend_bound"), "tma_backend_bound counts on Ice Lake");
	ok(metric_counts("x86:GenuineIntel-6-55-4", "tma_frontend_bound"), "tma_frontend_bound counts on Skylake-X");
	ok(metric_counts("x86:GenuineIntel-6-55-4", "CPU_Utilization"), "msr@tsc@ counts (CPU_Utilization, Skylake-X)");
	ok(metric_counts("x86:GenuineIntel-6-5E-3", "tma_core_bound"), "cpu@EVENT\\,cmask\\=N@ counts (tma_core_bound, Skylake)");
	ok(metric_refused("x86:GenuineIntel-6-55-4", "C6_Core_Residency", "counts a CPU or a package, not a task"),
	   "cstate residencies are refused: they count a CPU, not a task");
	ok(metric_refused("x86:GenuineIntel-6-55-4", "DRAM_BW_Use", "uncore PMU"),
	   "uncore metrics are refused naming the uncore PMU");
	free(results);
	free(done);
	return done_testing();
}
