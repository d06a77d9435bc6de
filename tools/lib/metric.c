// SPDX-License-Identifier: GPL-2.0
/*
 * Metric evaluation.  A name in a metric expression is another metric of the
 * table if one has that name (evaluated recursively, cycles reported with the
 * whole chain), otherwise it is passed to the caller's lookup (an event).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

#define METRIC_MAX_DEPTH 32

struct metric_ctx {
	const struct pmuctx_evdb *evdb;
	pmuctx_value_fn lookup;
	void *user;
	const char *chain[METRIC_MAX_DEPTH];
	int depth;
};

static int eval_metric(struct metric_ctx *mc, const char *name, const char *text,
		       double *value, char *err, size_t err_len);

/*
 * perf's per-task msr/tsc/ counts TSC ticks while the task runs: its
 * task clock at the TSC rate, since that rate is constant.  pmuctx has no
 * msr PMU, so the metric layer counts it that way.
 */
static int is_msr_tsc(const char *name)
{
	return !strcasecmp(name, "msr@tsc@") || !strcasecmp(name, "msr/tsc/");
}

#define TSC_CLOCK_EVENT "task-clock"
#define TSC_FREQ_CONSTANT "#SYSTEM_TSC_FREQ"

static int metric_lookup(void *ctx, const char *name, double *value, char *err, size_t err_len)
{
	struct metric_ctx *mc = ctx;
	int idx = pmuctx_evdb_find_metric(mc->evdb, name);
	struct pmuctx_metric_desc md;

	if (idx < 0 && is_msr_tsc(name)) {
		double ns, hz;
		int ret = mc->lookup(mc->user, TSC_CLOCK_EVENT, &ns, err, err_len);

		if (!ret)
			ret = mc->lookup(mc->user, TSC_FREQ_CONSTANT, &hz, err, err_len);
		*value = ns * hz / 1e9;
		return ret;
	}
	if (idx < 0)
		return mc->lookup(mc->user, name, value, err, err_len);
	pmuctx_evdb_metric(mc->evdb, idx, &md);
	return eval_metric(mc, md.name, md.expr, value, err, err_len);
}

static int eval_metric(struct metric_ctx *mc, const char *name, const char *text,
		       double *value, char *err, size_t err_len)
{
	struct expr *e;
	int i, ret;

	for (i = 0; name && i < mc->depth; i++) {
		if (!strcasecmp(mc->chain[i], name)) {
			char chain[512] = "";
			int j;

			for (j = i; j < mc->depth; j++) {
				strncat(chain, mc->chain[j], sizeof(chain) - strlen(chain) - 1);
				strncat(chain, " -> ", sizeof(chain) - strlen(chain) - 1);
			}
			strncat(chain, name, sizeof(chain) - strlen(chain) - 1);
			return ev_error(err, err_len, PMUCTX_EV_ERECURSION,
					"metric %s refers to itself: %s", name, chain);
		}
	}
	if (mc->depth == METRIC_MAX_DEPTH)
		return ev_error(err, err_len, PMUCTX_EV_ERECURSION,
				"metrics nested deeper than %d at %s", METRIC_MAX_DEPTH, name);
	ret = expr_parse(text, &e, err, err_len);
	if (ret)
		return ret;
	mc->chain[mc->depth++] = name ? name : "(expression)";
	ret = expr_eval(e, metric_lookup, mc, value, err, err_len);
	mc->depth--;
	expr_free(e);
	return ret;
}

int pmuctx_metric_eval(const struct pmuctx_evdb *evdb, const char *metric,
		       pmuctx_value_fn lookup, void *ctx, double *value,
		       char *err, size_t err_len)
{
	struct metric_ctx mc = { .evdb = evdb, .lookup = lookup, .user = ctx };
	struct pmuctx_metric_desc md;
	int idx = pmuctx_evdb_find_metric(evdb, metric);

	if (idx < 0)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME, "unknown metric '%s'", metric);
	pmuctx_evdb_metric(evdb, idx, &md);
	return eval_metric(&mc, md.name, md.expr, value, err, err_len);
}

int pmuctx_expr_eval_string(const struct pmuctx_evdb *evdb, const char *text,
			    pmuctx_value_fn lookup, void *ctx, double *value,
			    char *err, size_t err_len)
{
	struct metric_ctx mc = { .evdb = evdb, .lookup = lookup, .user = ctx };

	return eval_metric(&mc, NULL, text, value, err, err_len);
}

struct names_ctx {
	const struct pmuctx_evdb *evdb;
	int (*fn)(void *ctx, const char *name);
	void *user;
	int depth;
};

static int metric_names_of(struct names_ctx *nc, const char *expr);

static int name_visit(void *ctx, const char *name)
{
	struct names_ctx *nc = ctx;
	int idx = pmuctx_evdb_find_metric(nc->evdb, name);
	struct pmuctx_metric_desc md;

	if (idx < 0 && is_msr_tsc(name)) {
		int ret = nc->fn(nc->user, TSC_CLOCK_EVENT);

		return ret ? ret : nc->fn(nc->user, TSC_FREQ_CONSTANT);
	}
	if (idx < 0)
		return nc->fn(nc->user, name);
	pmuctx_evdb_metric(nc->evdb, idx, &md);
	return metric_names_of(nc, md.expr);
}

static int metric_names_of(struct names_ctx *nc, const char *text)
{
	struct expr *e;
	int ret;

	/* a cycle is reported by the evaluation; here it only must end */
	if (nc->depth >= METRIC_MAX_DEPTH)
		return 0;
	if (expr_parse(text, &e, NULL, 0))
		return -PMUCTX_EV_ESYNTAX;
	nc->depth++;
	ret = expr_for_each_name(e, name_visit, nc);
	nc->depth--;
	expr_free(e);
	return ret;
}

int pmuctx_metric_names(const struct pmuctx_evdb *evdb, const char *metric,
			int (*fn)(void *ctx, const char *name), void *ctx)
{
	struct names_ctx nc = { .evdb = evdb, .fn = fn, .user = ctx };
	struct pmuctx_metric_desc md;
	int idx = pmuctx_evdb_find_metric(evdb, metric);

	if (idx < 0)
		return -PMUCTX_EV_EUNKNOWN_NAME;
	pmuctx_evdb_metric(evdb, idx, &md);
	return metric_names_of(&nc, md.expr);
}

/* perf's constants in metric expressions; the caller knows their values. */
static const char *const metric_constants[] = {
	"duration_time", "#smt_on", "#core_wide", "#num_packages", "#num_cores", "#num_dies",
	"#num_cpus", "#num_cpus_online", "#system_tsc_freq", NULL
};

/*
 * perf spells an event inside an expression with '@' for '/' and escapes
 * the characters the grammar uses: cpu@UOPS_EXECUTED.CORE\,cmask\=1@ is
 * cpu/UOPS_EXECUTED.CORE,cmask=1/, topdown\-fe\-bound is topdown-fe-bound.
 */
static int metric_event_string(const char *name, char *buf, size_t len)
{
	size_t o = 0;
	const char *p;

	for (p = name; *p; p++) {
		char c = *p;

		if (c == '\\' && p[1])
			c = *++p;
		else if (c == '@')
			c = '/';
		if (o + 1 >= len)
			return -1;
		buf[o++] = c;
	}
	buf[o] = 0;
	return 0;
}

int pmuctx_metric_leaf(const struct pmuctx_evdb *evdb, const char *name,
		       struct pmuctx_event_info *info, char *err, size_t err_len)
{
	char event[PMUCTX_FSTR_MAX], pmu_buf[64];
	const char *pmu;
	int i, ret;

	for (i = 0; metric_constants[i]; i++)
		if (!strcasecmp(name, metric_constants[i]))
			return PMUCTX_LEAF_CONSTANT;
	if (name[0] == '#')
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME,
				"unknown constant '%s' in a metric expression", name);
	if (is_msr_tsc(name))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME,
				"%s is " TSC_CLOCK_EVENT " at " TSC_FREQ_CONSTANT ": the metric walk and "
				"evaluation give those two names instead", name);
	if (metric_event_string(name, event, sizeof(event)))
		return ev_error(err, err_len, PMUCTX_EV_ESYNTAX, "event name too long: %s", name);
	/* an uncore PMU is the missing piece, whatever else the string says */
	pmu = evdb_string_pmu(evdb, event, pmu_buf, sizeof(pmu_buf));
	if (!pmu || evdb_pmu_kind(evdb, pmu) != PMU_KIND_UNCORE) {
		ret = pmuctx_event_encode(evdb, event, info, err, err_len);
		if (ret)
			return ret;
		pmu = info->pmu;
	}
	if (evdb_pmu_kind(evdb, pmu) == PMU_KIND_UNCORE)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_NAME,
				"%s is an event of uncore PMU '%s', which counts a package or a device, "
				"not a task: pmuctx cannot count it", event, pmu);
	return PMUCTX_LEAF_EVENT;
}
