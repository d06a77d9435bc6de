// SPDX-License-Identifier: GPL-2.0
/*
 * perf's generic event names (cycles, branch-misses, cs, faults, ...) on top
 * of the tables.  cycles and instructions are the ABI's hardware-generic
 * events, which the kernel backend maps; the others have an architected
 * encoding per architecture (and x86 vendor), tried as the table's named
 * event first (for its description) and else as the raw code.
 */
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

static const struct generic_event generic_events[] = {
	{ "cycles", NULL, NULL, PMUCTX_HW_CPU_CYCLES, { NULL } },
	{ "cpu-cycles", NULL, NULL, PMUCTX_HW_CPU_CYCLES, { NULL } },
	{ "instructions", NULL, NULL, PMUCTX_HW_INSTRUCTIONS, { NULL } },
	/* software: ours count the task, so cpu-clock is its task clock */
	{ "cpu-clock", NULL, NULL, -1, { "task-clock" } },
	{ "cs", NULL, NULL, -1, { "context-switches" } },
	{ "migrations", NULL, NULL, -1, { "cpu-migrations" } },
	{ "faults", NULL, NULL, -1, { "page-faults" } },
	/* ARMv8 PMUv3 common events, as the kernel's armv8 perf driver maps them */
	{ "branches", "arm64", NULL, -1, { "PC_WRITE_RETIRED", "r0c" } },
	{ "branch-instructions", "arm64", NULL, -1, { "PC_WRITE_RETIRED", "r0c" } },
	{ "branch-misses", "arm64", NULL, -1, { "BR_MIS_PRED", "r10" } },
	{ "cache-references", "arm64", NULL, -1, { "L1D_CACHE", "r04" } },
	{ "cache-misses", "arm64", NULL, -1, { "L1D_CACHE_REFILL", "r03" } },
	{ "bus-cycles", "arm64", NULL, -1, { "BUS_CYCLES", "r1d" } },
	{ "stalled-cycles-frontend", "arm64", NULL, -1, { "STALL_FRONTEND", "r23" } },
	{ "stalled-cycles-backend", "arm64", NULL, -1, { "STALL_BACKEND", "r24" } },
	/* Intel architectural performance events */
	{ "branches", "x86", "GenuineIntel", -1, { "r00c4" } },
	{ "branch-instructions", "x86", "GenuineIntel", -1, { "r00c4" } },
	{ "branch-misses", "x86", "GenuineIntel", -1, { "r00c5" } },
	{ "cache-references", "x86", "GenuineIntel", -1, { "r4f2e" } },
	{ "cache-misses", "x86", "GenuineIntel", -1, { "r412e" } },
	{ "bus-cycles", "x86", "GenuineIntel", -1, { "r013c" } },
	{ "ref-cycles", "x86", "GenuineIntel", -1, { "r0300" } },
	/* AMD family 17h and later (the kernel's Zen map) */
	{ "branches", "x86", "AuthenticAMD", -1, { "r00c2" } },
	{ "branch-instructions", "x86", "AuthenticAMD", -1, { "r00c2" } },
	{ "branch-misses", "x86", "AuthenticAMD", -1, { "r00c3" } },
	{ "cache-references", "x86", "AuthenticAMD", -1, { "rff60" } },
	{ "cache-misses", "x86", "AuthenticAMD", -1, { "r0964" } },
	{ "stalled-cycles-frontend", "x86", "AuthenticAMD", -1, { "r0287" } },
	{ "stalled-cycles-backend", "x86", "AuthenticAMD", -1, { "r0187" } },
};

#define N_GENERIC ((int)(sizeof(generic_events) / sizeof(generic_events[0])))

static int generic_applies(const struct pmuctx_evdb *evdb, const struct generic_event *g)
{
	if (g->arch && strcmp(g->arch, evdb->arch))
		return 0;
	return !g->vendor || !strncmp(evdb->cpuid, g->vendor, strlen(g->vendor));
}

const struct generic_event *evdb_find_generic(const struct pmuctx_evdb *evdb, const char *name)
{
	int i;

	for (i = 0; i < N_GENERIC; i++)
		if (!strcasecmp(generic_events[i].name, name) &&
		    generic_applies(evdb, &generic_events[i]))
			return &generic_events[i];
	return NULL;
}

int pmuctx_evdb_generic(const struct pmuctx_evdb *evdb, int idx, const char **name,
			const char **means)
{
	int i;

	for (i = 0; i < N_GENERIC; i++) {
		const struct generic_event *g = &generic_events[i];

		if (!generic_applies(evdb, g) || idx--)
			continue;
		*name = g->name;
		if (g->hw_id == PMUCTX_HW_CPU_CYCLES)
			*means = "hardware: CPU cycles";
		else if (g->hw_id == PMUCTX_HW_INSTRUCTIONS)
			*means = "hardware: instructions retired";
		else if (pmuctx_evdb_find(evdb, g->targets[0]) >= 0 || !g->targets[1])
			*means = g->targets[0];
		else
			*means = g->targets[1];
		return 0;
	}
	return -1;
}
