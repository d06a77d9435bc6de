// SPDX-License-Identifier: GPL-2.0
/*
 * "Did you mean": the known name nearest to a misspelt one, by edit
 * distance (case-insensitive), over every spelling a user may type.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

#define SUGGEST_MAX_LEN 128

/* Levenshtein distance, giving up (returning limit + 1) past @limit. */
static int edit_distance(const char *a, const char *b, int limit)
{
	int la = strlen(a), lb = strlen(b), i, j;
	int row[SUGGEST_MAX_LEN + 1];

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN || abs(la - lb) > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int diag = row[0], best;

		row[0] = i;
		best = i;
		for (j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int v = diag + cost;

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
	}
	return row[lb];
}

struct suggestion {
	const char *name;
	int limit;
	int best;
	char *buf;
	size_t len;
};

static void consider(struct suggestion *s, const char *prefix, const char *candidate)
{
	char full[SUGGEST_MAX_LEN + 1];
	int d;

	if (prefix)
		snprintf(full, sizeof(full), "%s.%s", prefix, candidate);
	else
		snprintf(full, sizeof(full), "%s", candidate);
	/*
	 * The name typed is never a suggestion: when it exists here but not
	 * as what was asked for (SLOTS is a metric on Sapphire Rapids, not
	 * an event), the caller says so instead.
	 */
	if (!strcasecmp(full, s->name))
		return;
	d = edit_distance(s->name, full, s->best - 1 < s->limit ? s->best - 1 : s->limit);
	if (d < s->best && d <= s->limit) {
		s->best = d;
		snprintf(s->buf, s->len, "%s", full);
	}
}

int pmuctx_evdb_suggest(const struct pmuctx_evdb *evdb, const char *name, char *buf, size_t len)
{
	struct suggestion s = { .buf = buf, .len = len };
	const char *sep = strstr(name, "::"), *gname, *means;
	char cache_name[64];
	int i, n;
	unsigned int u;

	if (sep)
		name = sep + 2;
	s.name = name;
	/* a third of the word, at least one edit, at most four */
	s.limit = strlen(name) / 3;
	s.limit = s.limit < 1 ? 1 : s.limit > 4 ? 4 : s.limit;
	s.best = s.limit + 1;
	n = pmuctx_evdb_n_events(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_event_desc ev;

		pmuctx_evdb_event(evdb, i, &ev);
		consider(&s, NULL, ev.name);
		for (u = 0; u < ev.n_umasks; u++) {
			struct pmuctx_umask_desc um;

			pmuctx_evdb_umask(evdb, i, u, &um);
			consider(&s, ev.name, um.name);
		}
	}
	for (i = 0; !pmuctx_evdb_generic(evdb, i, &gname, &means); i++)
		consider(&s, NULL, gname);
	for (i = 0; evdb_cache_name(i, cache_name, sizeof(cache_name)); i++)
		consider(&s, NULL, cache_name);
	n = pmuctx_evdb_n_derived(evdb);
	for (i = 0; i < n; i++)
		consider(&s, NULL, evdb->derived[i].name);
	n = pmuctx_evdb_n_metrics(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_metric_desc m;

		pmuctx_evdb_metric(evdb, i, &m);
		consider(&s, NULL, m.name);
	}
	return s.best <= s.limit;
}
