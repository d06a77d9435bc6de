// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx list [--json] [--all] [PATTERN]   events, generic names, derived events, metrics
 * pmuctx list --details EVENT      unit masks and modifiers (like showevtinfo)
 */
#define _GNU_SOURCE	/* strcasestr */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/*
 * PATTERN is a shell glob if it has wildcards, matched against whole names
 * (EVENT, PMU::EVENT or EVENT.UMASK); else a case-insensitive substring of
 * a name or of a description.
 */
static int is_glob(const char *pattern)
{
	return strpbrk(pattern, "*?[") != NULL;
}

static int matches(const char *pattern, const char *name, const char *desc)
{
	if (!pattern)
		return 1;
	if (is_glob(pattern))
		return !fnmatch(pattern, name, FNM_CASEFOLD);
	return strcasestr(name, pattern) || (desc && strcasestr(desc, pattern));
}

static int event_matches(struct pmuctx_evdb *evdb, int idx, const struct pmuctx_event_desc *ev,
			 const char *pattern)
{
	char full[256];
	unsigned u;

	if (!pattern)
		return 1;
	snprintf(full, sizeof(full), "%s::%s", ev->pmu, ev->name);
	if (matches(pattern, ev->name, ev->desc) || matches(pattern, full, NULL))
		return 1;
	for (u = 0; u < ev->n_umasks; u++) {
		struct pmuctx_umask_desc um;

		pmuctx_evdb_umask(evdb, idx, u, &um);
		snprintf(full, sizeof(full), "%s.%s", ev->name, um.name);
		if (matches(pattern, full, um.desc))
			return 1;
	}
	return 0;
}

/* "[not implemented]" and the like, from PMCEID when the PMU is this one. */
static const char *implemented_mark(struct pmuctx_evdb *evdb, int idx)
{
	switch (pmuctx_evdb_event_implemented(evdb, idx)) {
	case 0:
		return " [not implemented by this PMU]";
	default:
		return "";
	}
}

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void list_header(struct pmuctx_evdb *evdb)
{
	int i, n = pmuctx_evdb_n_events(evdb), known = 0, implemented = 0;

	printf("# CPU %s:%s, table %s%s\n", pmuctx_evdb_arch(evdb), pmuctx_evdb_cpuid(evdb),
	       pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : "(none: software events only)",
	       pmuctx_evdb_is_fallback(evdb) ? " (no table for this model: the architecture's common events)" : "");
	for (i = 0; i < n; i++) {
		int impl = pmuctx_evdb_event_implemented(evdb, i);

		known += impl >= 0;
		implemented += impl > 0;
	}
	if (known)
		printf("# this PMU implements %d of the %d %s events listed (%s)%s\n",
		       implemented, known,
		       strcmp(pmuctx_evdb_arch(evdb), "x86") ? "common" : "architectural",
		       strcmp(pmuctx_evdb_arch(evdb), "x86") ? "PMCEID0/1" : "CPUID 0AH:EBX",
		       pmuctx_evdb_is_fallback(evdb) ?
		       "; the others are hidden (list --all shows them)" : "");
	n = pmuctx_evdb_n_skipped(evdb);
	if (n)
		printf("# %d derived event definition%s skipped (list --skipped says why, line by line)\n",
		       n, n > 1 ? "s" : "");
}

static void list_generic(struct pmuctx_evdb *evdb, const char *pattern, int json)
{
	const char *name, *means;
	int i, first = 1;

	for (i = 0; !pmuctx_evdb_generic(evdb, i, &name, &means); i++) {
		if (!matches(pattern, name, means))
			continue;
		if (json) {
			printf("%s\n  {\"name\": ", first ? "" : ","), json_str(name);
			printf(", \"means\": "), json_str(means);
			printf("}");
		} else {
			printf("%-40s = %s\n", name, means);
		}
		first = 0;
	}
}

static int list_plain(struct pmuctx_evdb *evdb, const char *pattern, int json, int all)
{
	int i, n = pmuctx_evdb_n_events(evdb), first = 1;
	unsigned u;

	if (json)
		printf("{\"cpuid\": "), json_str(pmuctx_evdb_cpuid(evdb)),
		printf(", \"table\": "), json_str(pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : ""),
		printf(", \"events\": [");
	else
		list_header(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_event_desc ev;
		char full[256];
		int impl = pmuctx_evdb_event_implemented(evdb, i);

		pmuctx_evdb_event(evdb, i, &ev);
		snprintf(full, sizeof(full), "%s::%s", ev.pmu, ev.name);
		if (!event_matches(evdb, i, &ev, pattern))
			continue;
		/* the PMUv3 fallback lists only what PMCEID says this CPU has */
		if (impl == 0 && pmuctx_evdb_is_fallback(evdb) && !all)
			continue;
		if (json) {
			printf("%s\n  {\"pmu\": ", first ? "" : ","), json_str(ev.pmu);
			printf(", \"name\": "), json_str(ev.name);
			printf(", \"code\": %u, \"desc\": ", ev.code), json_str(ev.desc);
			if (impl >= 0)
				printf(", \"implemented\": %s", impl ? "true" : "false");
			printf(", \"umasks\": [");
			for (u = 0; u < ev.n_umasks; u++) {
				struct pmuctx_umask_desc um;

				pmuctx_evdb_umask(evdb, i, u, &um);
				printf("%s{\"name\": ", u ? ", " : ""), json_str(um.name);
				printf(", \"code\": %u, \"group\": %u, \"default\": %s, \"mods\": ",
				       um.code, um.group, um.is_default ? "true" : "false");
				json_str(um.mods);
				printf(", \"desc\": "), json_str(um.desc);
				printf("}");
			}
			printf("]}");
		} else {
			printf("%-40s %s%s%s\n", full, ev.desc, ev.deprecated ? " [deprecated]" : "",
			       implemented_mark(evdb, i));
			for (u = 0; u < ev.n_umasks; u++) {
				struct pmuctx_umask_desc um;

				pmuctx_evdb_umask(evdb, i, u, &um);
				printf("  :%-37s %s\n", um.name, um.desc);
			}
		}
		first = 0;
	}
	if (json)
		printf("\n ], \"generic\": [");
	else
		printf("\n# perf's generic names\n");
	list_generic(evdb, pattern, json);
	if (json)
		printf("\n ], \"derived\": [");
	else
		printf("\n# Derived events (PAPI)\n");
	first = 1;
	n = pmuctx_evdb_n_derived(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_derived_desc d;
		unsigned b;

		pmuctx_evdb_derived(evdb, i, &d);
		if (!matches(pattern, d.name, *d.ldesc ? d.ldesc : d.sdesc))
			continue;
		if (json) {
			printf("%s\n  {\"name\": ", first ? "" : ","), json_str(d.name);
			printf(", \"type\": "), json_str(pmuctx_derived_type_name(d.type));
			printf(", \"formula\": "), json_str(d.formula);
			printf(", \"desc\": "), json_str(*d.ldesc ? d.ldesc : d.sdesc);
			printf(", \"bases\": [");
			for (b = 0; b < d.n_bases; b++)
				printf("%s", b ? ", " : ""), json_str(d.bases[b]);
			printf("]}");
		} else {
			printf("%-40s %s %s", d.name, pmuctx_derived_type_name(d.type), d.formula);
			for (b = 0; b < d.n_bases; b++)
				printf("%s%s", b || *d.formula ? "," : "", d.bases[b]);
			printf("%s%s\n", *d.ldesc || *d.sdesc ? "  - " : "", *d.ldesc ? d.ldesc : d.sdesc);
		}
		first = 0;
	}
	if (json)
		printf("\n ], \"metrics\": [");
	else
		printf("\n# Metrics\n");
	first = 1;
	n = pmuctx_evdb_n_metrics(evdb);
	for (i = 0; i < n; i++) {
		struct pmuctx_metric_desc m;

		pmuctx_evdb_metric(evdb, i, &m);
		if (!matches(pattern, m.name, m.desc) && !matches(pattern, m.groups, NULL))
			continue;
		if (json) {
			printf("%s\n  {\"name\": ", first ? "" : ","), json_str(m.name);
			printf(", \"expr\": "), json_str(m.expr);
			printf(", \"groups\": "), json_str(m.groups);
			printf(", \"desc\": "), json_str(m.desc);
			printf("}");
		} else {
			printf("%-40s %s\n  = %s\n", m.name, m.desc, m.expr);
		}
		first = 0;
	}
	if (json)
		printf("\n ]}\n");
	return 0;
}

static int list_details(struct pmuctx_evdb *evdb, const char *name)
{
	const struct pmuctx_mod_desc *mods[16];
	struct pmuctx_event_desc ev;
	int idx = pmuctx_evdb_find(evdb, name), n, i;
	unsigned u, g;

	if (idx < 0) {
		char near[128];

		if (pmuctx_evdb_suggest(evdb, name, near, sizeof(near)))
			fprintf(stderr, "pmuctx: unknown event '%s'; did you mean '%s'?\n", name, near);
		else
			fprintf(stderr, "pmuctx: unknown event '%s' (try: pmuctx list %s)\n", name, name);
		return 1;
	}
	pmuctx_evdb_event(evdb, idx, &ev);
	printf("Name     : %s\n", ev.name);
	printf("PMU      : %s\n", ev.pmu);
	printf("Code     : 0x%x\n", ev.code);
	printf("Desc     : %s\n", ev.desc);
	if (*ev.long_desc && strcmp(ev.long_desc, ev.desc))
		printf("Long     : %s\n", ev.long_desc);
	if (*ev.mods)
		printf("Hardwired: %s\n", ev.mods);
	for (g = 0; g < ev.n_groups; g++)
		printf("Group %-3u: %s\n", g, ev.exclusive_groups & (1u << g) ?
		       "exclusive (one unit mask)" : "unit masks may be combined");
	for (u = 0; u < ev.n_umasks; u++) {
		struct pmuctx_umask_desc um;

		pmuctx_evdb_umask(evdb, idx, u, &um);
		printf("Umask-%02u : 0x%02x : group %u : [%s] : %s%s%s%s%s\n", u, um.code, um.group,
		       um.name, um.is_default ? "default : " : "",
		       *um.mods ? "hard-wired " : "", um.mods, *um.mods ? " : " : "", um.desc);
	}
	n = pmuctx_evdb_mods(evdb, idx, mods, 16);
	for (i = 0; i < n; i++)
		printf("Modif-%02d : [%s] : %s, default %u : %s\n", i, mods[i]->name,
		       mods[i]->type == PMUCTX_MOD_BOOL ? "boolean" : "integer", mods[i]->dflt,
		       mods[i]->desc);
	return 0;
}

int cmd_list(struct cli *cli, int argc, char **argv)
{
	struct pmuctx_evdb *evdb;
	const char *pattern = NULL, *details = NULL;
	int i, json = 0, all = 0, skipped = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--all")) {
			all = 1;
		} else if (!strcmp(argv[i], "--skipped")) {
			skipped = 1;
		} else if (!strcmp(argv[i], "--details")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "usage: pmuctx list --details EVENT\n");
				return 2;
			}
			details = argv[++i];
		} else if (!pattern && argv[i][0] != '-') {
			pattern = argv[i];
		} else {
			fprintf(stderr, "usage: pmuctx list [--json] [--all] [PATTERN] | list --details EVENT | list --skipped\n");
			return 2;
		}
	}
	evdb = cli_evdb(cli);
	if (!evdb)
		return 1;
	if (details)
		return list_details(evdb, details);
	if (skipped) {
		for (i = 0; i < pmuctx_evdb_n_skipped(evdb); i++)
			printf("%s\n", pmuctx_evdb_skipped(evdb, i));
		return 0;
	}
	return list_plain(evdb, pattern, json, all);
}
