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

static int metric_lookup(void *ctx, const char *name, double *value, char *err, size_t err_len)
{
	struct metric_ctx *mc = ctx;
	int idx = pmuctx_evdb_find_metric(mc->evdb, name);
	struct pmuctx_metric_desc md;

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
