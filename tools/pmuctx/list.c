// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx list [--json] [PATTERN]   events, derived events and metrics
 * pmuctx list --details EVENT      unit masks and modifiers (like showevtinfo)
 */
#define _GNU_SOURCE	/* strcasestr */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

/* PATTERN is a shell glob if it has wildcards, else a case-insensitive substring. */
static int matches(const char *pattern, const char *name)
{
	if (!pattern)
		return 1;
	if (strpbrk(pattern, "*?["))
		return !fnmatch(pattern, name, FNM_CASEFOLD);
	return strcasestr(name, pattern) != NULL;
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

static int list_plain(struct pmuctx_evdb *evdb, const char *pattern, int json)
{
	int i, n = pmuctx_evdb_n_events(evdb), first = 1;
	unsigned u;

	if (json)
		printf("{\"cpuid\": "), json_str(pmuctx_evdb_cpuid(evdb)),
		printf(", \"table\": "), json_str(pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : ""),
		printf(", \"events\": [");
	else
		printf("# CPU %s:%s, table %s\n", pmuctx_evdb_arch(evdb), pmuctx_evdb_cpuid(evdb),
		       pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : "(none: software events only)");
	for (i = 0; i < n; i++) {
		struct pmuctx_event_desc ev;
		char full[256];

		pmuctx_evdb_event(evdb, i, &ev);
		snprintf(full, sizeof(full), "%s::%s", ev.pmu, ev.name);
		if (!matches(pattern, full))
			continue;
		if (json) {
			printf("%s\n  {\"pmu\": ", first ? "" : ","), json_str(ev.pmu);
			printf(", \"name\": "), json_str(ev.name);
			printf(", \"code\": %u, \"desc\": ", ev.code), json_str(ev.desc);
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
			printf("%-40s %s%s\n", full, ev.desc, ev.deprecated ? " [deprecated]" : "");
			for (u = 0; u < ev.n_umasks; u++) {
				struct pmuctx_umask_desc um;

				pmuctx_evdb_umask(evdb, i, u, &um);
				printf("  :%-37s %s\n", um.name, um.desc);
			}
		}
		first = 0;
	}
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
		if (!matches(pattern, d.name))
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
		if (!matches(pattern, m.name))
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
	int i, json = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--details")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "usage: pmuctx list --details EVENT\n");
				return 2;
			}
			details = argv[++i];
		} else if (!pattern && argv[i][0] != '-') {
			pattern = argv[i];
		} else {
			fprintf(stderr, "usage: pmuctx list [--json] [PATTERN] | list --details EVENT\n");
			return 2;
		}
	}
	evdb = cli_evdb(cli);
	if (!evdb)
		return 1;
	if (details)
		return list_details(evdb, details);
	return list_plain(evdb, pattern, json);
}
