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
	{ "cycles", NULL, NULL, PMUCTX_HW_CPU_CYCLES, { NULL }, GENERIC_NEEDS_NOTHING },
	{ "cpu-cycles", NULL, NULL, PMUCTX_HW_CPU_CYCLES, { NULL }, GENERIC_NEEDS_NOTHING },
	{ "instructions", NULL, NULL, PMUCTX_HW_INSTRUCTIONS, { NULL }, GENERIC_NEEDS_NOTHING },
	/* software: ours count the task, so cpu-clock is its task clock */
	{ "cpu-clock", NULL, NULL, -1, { "task-clock" }, GENERIC_NEEDS_NOTHING },
	{ "cs", NULL, NULL, -1, { "context-switches" }, GENERIC_NEEDS_NOTHING },
	{ "migrations", NULL, NULL, -1, { "cpu-migrations" }, GENERIC_NEEDS_NOTHING },
	{ "faults", NULL, NULL, -1, { "page-faults" }, GENERIC_NEEDS_NOTHING },
	/* ARMv8 PMUv3 common events, as the kernel's armv8 perf driver maps them */
	{ "branches", "arm64", NULL, -1, { "PC_WRITE_RETIRED", "r0c" }, GENERIC_NEEDS_NOTHING },
	{ "branch-instructions", "arm64", NULL, -1, { "PC_WRITE_RETIRED", "r0c" }, GENERIC_NEEDS_NOTHING },
	{ "branch-misses", "arm64", NULL, -1, { "BR_MIS_PRED", "r10" }, GENERIC_NEEDS_NOTHING },
	{ "cache-references", "arm64", NULL, -1, { "L1D_CACHE", "r04" }, GENERIC_NEEDS_NOTHING },
	{ "cache-misses", "arm64", NULL, -1, { "L1D_CACHE_REFILL", "r03" }, GENERIC_NEEDS_NOTHING },
	{ "bus-cycles", "arm64", NULL, -1, { "BUS_CYCLES", "r1d" }, GENERIC_NEEDS_NOTHING },
	{ "stalled-cycles-frontend", "arm64", NULL, -1, { "STALL_FRONTEND", "r23" }, GENERIC_NEEDS_NOTHING },
	{ "stalled-cycles-backend", "arm64", NULL, -1, { "STALL_BACKEND", "r24" }, GENERIC_NEEDS_NOTHING },
	/* Intel architectural performance events */
	{ "branches", "x86", "GenuineIntel", -1, { "r00c4" }, GENERIC_NEEDS_NOTHING },
	{ "branch-instructions", "x86", "GenuineIntel", -1, { "r00c4" }, GENERIC_NEEDS_NOTHING },
	{ "branch-misses", "x86", "GenuineIntel", -1, { "r00c5" }, GENERIC_NEEDS_NOTHING },
	{ "cache-references", "x86", "GenuineIntel", -1, { "r4f2e" }, GENERIC_NEEDS_NOTHING },
	{ "cache-misses", "x86", "GenuineIntel", -1, { "r412e" }, GENERIC_NEEDS_NOTHING },
	{ "bus-cycles", "x86", "GenuineIntel", -1, { "r013c" }, GENERIC_NEEDS_NOTHING },
	{ "ref-cycles", "x86", "GenuineIntel", -1, { "r0300" }, GENERIC_NEEDS_NOTHING },
	/*
	 * perf's sysfs events of Intel's core PMU for topdown (the kernel's
	 * events/ directory): the fixed slots counter and the PERF_METRICS
	 * fields, as the kernel encodes them (event 0x00 and a pseudo umask).
	 */
	{ "slots", "x86", "GenuineIntel", -1, { "r0400" }, GENERIC_NEEDS_PERF_METRICS },
	{ "topdown-retiring", "x86", "GenuineIntel", -1, { "r8000" }, GENERIC_NEEDS_PERF_METRICS },
	{ "topdown-bad-spec", "x86", "GenuineIntel", -1, { "r8100" }, GENERIC_NEEDS_PERF_METRICS },
	{ "topdown-fe-bound", "x86", "GenuineIntel", -1, { "r8200" }, GENERIC_NEEDS_PERF_METRICS },
	{ "topdown-be-bound", "x86", "GenuineIntel", -1, { "r8300" }, GENERIC_NEEDS_PERF_METRICS },
	{ "topdown-heavy-ops", "x86", "GenuineIntel", -1, { "r8400" }, GENERIC_NEEDS_PERF_METRICS_L2 },
	{ "topdown-br-mispredict", "x86", "GenuineIntel", -1, { "r8500" }, GENERIC_NEEDS_PERF_METRICS_L2 },
	{ "topdown-fetch-lat", "x86", "GenuineIntel", -1, { "r8600" }, GENERIC_NEEDS_PERF_METRICS_L2 },
	{ "topdown-mem-bound", "x86", "GenuineIntel", -1, { "r8700" }, GENERIC_NEEDS_PERF_METRICS_L2 },
	/* AMD family 17h and later (the kernel's Zen map) */
	{ "branches", "x86", "AuthenticAMD", -1, { "r00c2" }, GENERIC_NEEDS_NOTHING },
	{ "branch-instructions", "x86", "AuthenticAMD", -1, { "r00c2" }, GENERIC_NEEDS_NOTHING },
	{ "branch-misses", "x86", "AuthenticAMD", -1, { "r00c3" }, GENERIC_NEEDS_NOTHING },
	{ "cache-references", "x86", "AuthenticAMD", -1, { "rff60" }, GENERIC_NEEDS_NOTHING },
	{ "cache-misses", "x86", "AuthenticAMD", -1, { "r0964" }, GENERIC_NEEDS_NOTHING },
	{ "stalled-cycles-frontend", "x86", "AuthenticAMD", -1, { "r0287" }, GENERIC_NEEDS_NOTHING },
	{ "stalled-cycles-backend", "x86", "AuthenticAMD", -1, { "r0187" }, GENERIC_NEEDS_NOTHING },
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

/*
 * The kernel shows slots and topdown-* where the CPU has fixed counter 3
 * and PERF_METRICS (Ice Lake and later big cores).  The table says so:
 * it lists that counter as TOPDOWN.SLOTS, event 0x00 umask 0x04; the
 * level-2 fields come with TOPDOWN.MEMORY_BOUND_SLOTS (Sapphire Rapids).
 */
static int table_has_umask(const struct pmuctx_evdb *evdb, const char *event, const char *umask,
			   uint32_t event_code, uint32_t umask_code)
{
	int idx = evdb_find_event(evdb, event, "", 1);
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);
	unsigned i;

	for (i = 0; ev && i < ev->n_umasks; i++) {
		const struct pmu_db_umask *um = &evdb->db->umasks[ev->first_umask + i];

		if (!strcasecmp(EVDB_STR(evdb, um->name), umask))
			return um->event_code == event_code && um->code == umask_code;
	}
	return 0;
}

int evdb_generic_available(const struct pmuctx_evdb *evdb, const struct generic_event *g,
			   char *err, size_t err_len)
{
	if (g->needs == GENERIC_NEEDS_NOTHING)
		return 0;
	if (!table_has_umask(evdb, "TOPDOWN", "SLOTS", 0x00, 0x04))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s needs Intel's PERF_METRICS (fixed counter 3, TOPDOWN.SLOTS as event 0x00 umask 0x04), which CPU %s (table %s) lacks",
				g->name, evdb->cpuid, pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : "(none)");
	if (g->needs == GENERIC_NEEDS_PERF_METRICS_L2 &&
	    !table_has_umask(evdb, "TOPDOWN", "MEMORY_BOUND_SLOTS", 0xa4, 0x10))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s needs the level-2 topdown fields of PERF_METRICS, which CPU %s (table %s) lacks",
				g->name, evdb->cpuid, pmuctx_evdb_table(evdb) ? pmuctx_evdb_table(evdb) : "(none)");
	return 0;
}

int pmuctx_evdb_generic(const struct pmuctx_evdb *evdb, int idx, const char **name,
			const char **means)
{
	int i;

	for (i = 0; i < N_GENERIC; i++) {
		const struct generic_event *g = &generic_events[i];

		if (!generic_applies(evdb, g) || evdb_generic_available(evdb, g, NULL, 0) || idx--)
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
