// SPDX-License-Identifier: GPL-2.0
/*
 * perf's generic hardware cache events (L1-dcache-load-misses, LLC-loads,
 * dTLB-load-misses, branch-load-misses, ...).  perf sends them to the
 * kernel as PERF_TYPE_HW_CACHE and the kernel's driver maps them per CPU;
 * pmuctx takes raw codes, so the same per-CPU maps live here (facts from
 * Linux 6.1's drivers, generated into cache_maps.inc by
 * scripts/cache-maps.py).  What the kernel would refuse is refused here,
 * with the reason perf's kernel has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

enum cache_type { C_L1D, C_L1I, C_LL, C_DTLB, C_ITLB, C_BPU, C_NODE, C_END };
enum cache_op { C_READ, C_WRITE, C_PREFETCH };
enum cache_result { C_ACCESS, C_MISS };

/* The kernel's -1: a combination that makes no sense for this cache (EINVAL). */
#define CACHE_INVALID (~0ULL)

struct cache_map_entry {
	uint8_t type, op, result;
	uint64_t config;
	uint64_t config1;	/* offcore response (the driver's hw_cache_extra_regs) */
};

struct intel_cache_models {
	const struct cache_map_entry *map;
	const char *name;		/* the driver's name for the map */
	unsigned models[8];		/* family 6 models, 0-terminated */
};

#include "cache_maps.inc"

/* perf's spellings (tools/perf/util/evsel.c), the first one canonical. */
static const char *const type_names[C_END][6] = {
	[C_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data" },
	[C_L1I] = { "L1-icache", "l1-i", "l1i", "L1-instruction" },
	[C_LL] = { "LLC", "L2" },
	[C_DTLB] = { "dTLB", "d-tlb", "Data-TLB" },
	[C_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB" },
	[C_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
	[C_NODE] = { "node" },
};
static const char *const op_names[3][5] = {
	[C_READ] = { "load", "loads", "read" },
	[C_WRITE] = { "store", "stores", "write" },
	[C_PREFETCH] = { "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const result_names[2][5] = {
	[C_ACCESS] = { "refs", "Reference", "ops", "access" },
	[C_MISS] = { "misses", "miss" },
};

/* Operations perf accepts per cache (perf refuses the others itself). */
static const unsigned valid_ops[C_END] = {
	[C_L1D] = 7, [C_L1I] = 5, [C_LL] = 7, [C_DTLB] = 7, [C_ITLB] = 1, [C_BPU] = 1, [C_NODE] = 7,
};

/* Longest alias of a row that starts @s and ends at '-' or the end. */
static int match_word(const char *s, const char *const *aliases, size_t n_aliases)
{
	size_t i, best = 0;

	for (i = 0; i < n_aliases && aliases[i]; i++) {
		size_t len = strlen(aliases[i]);

		if (len > best && !strncasecmp(s, aliases[i], len) && (!s[len] || s[len] == '-'))
			best = len;
	}
	return best;
}

static int match_row(const char **s, const char *const (*rows)[5], int n_rows, int *which)
{
	int r;

	for (r = 0; r < n_rows; r++) {
		int len = match_word(*s, rows[r], 5);

		if (len) {
			*which = r;
			*s += len;
			if (**s == '-')
				(*s)++;
			return 1;
		}
	}
	return 0;
}

/* TYPE[-OP_OR_RESULT[-OP_OR_RESULT]], as perf's grammar has it. */
static int parse_cache_name(const char *name, int *type, int *op, int *result)
{
	const char *s = name;
	int t, i, len = 0;

	for (t = 0; t < C_END && !len; t++)
		len = match_word(s, type_names[t], 6);
	if (!len)
		return 0;
	*type = t - 1;
	s += len;
	if (*s == '-')
		s++;
	else if (*s)
		return 0;
	*op = -1;
	*result = -1;
	for (i = 0; i < 2 && *s; i++) {
		if (*op < 0 && match_row(&s, op_names, 3, op))
			continue;
		if (*result < 0 && match_row(&s, result_names, 2, result))
			continue;
		return 0;
	}
	if (*s)
		return 0;
	if (*op < 0)
		*op = C_READ;		/* perf falls back to reads ... */
	if (*result < 0)
		*result = C_ACCESS;	/* ... and to accesses */
	return 1;
}

static const struct cache_map_entry *lookup(const struct cache_map_entry *map, int type, int op,
					    int result)
{
	for (; map && map->type != C_END; map++)
		if (map->type == type && map->op == op && map->result == result)
			return map;
	return NULL;
}

static const char *arm64_model_map(const struct pmuctx_evdb *evdb,
				   const struct cache_map_entry **map)
{
	static const struct { const char *table; const struct cache_map_entry *map; const char *pmu; } models[] = {
		{ "arm/cortex-a35", armv8_a53_cache, "armv8_cortex_a35" },
		{ "arm/cortex-a53", armv8_a53_cache, "armv8_cortex_a53" },
		{ "arm/cortex-a57-a72", armv8_a57_cache, "armv8_cortex_a57/a72" },
		{ "arm/cortex-a73", armv8_a73_cache, "armv8_cortex_a73" },
		{ "cavium/thunderx2", armv8_vulcan_cache, "armv8_cavium_thunder2" },
	};
	const char *table = pmuctx_evdb_table(evdb);
	size_t i;

	*map = NULL;
	for (i = 0; table && i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(models[i].table, table)) {
			*map = models[i].map;
			return models[i].pmu;
		}
	return "armv8_pmuv3";
}

/*
 * Does this PMUv3 implement common event @code?  The kernel asks PMCEID;
 * without the PMU at hand, the model's own table says when it lists
 * common events (most upstream tables list those the core implements;
 * the base table's architected list would say yes to all), and a table
 * listing none of them (cortex-a53) says nothing: assume implemented.
 */
static int pmuv3_implements(const struct pmuctx_evdb *evdb, uint64_t code)
{
	const struct pmu_db_table *t;
	uint32_t i;
	int listed = 0;

	if (evdb->hw_events_known && code < 64)
		return !!(evdb->hw_events[0] & (1ULL << code));
	if (evdb->table < 0)
		return 0;
	t = &evdb->db->tables[evdb->table];
	for (i = 0; i < t->n_events; i++) {
		const struct pmu_db_event *ev = &evdb->db->events[t->first_event + i];

		if (ev->n_umasks || *PMU_DB_STR(evdb->db, ev->pmu) || ev->code >= 0x40)
			continue;
		listed = 1;
		if (ev->code == code)
			return 1;
	}
	return !listed;
}

static unsigned x86_family_model(const char *cpuid, const char *vendor, unsigned *model)
{
	size_t n = strlen(vendor);
	char *end;
	unsigned family;

	if (strncmp(cpuid, vendor, n) || cpuid[n] != '-')
		return 0;
	family = strtoul(cpuid + n + 1, &end, 10);
	*model = *end == '-' ? strtoul(end + 1, NULL, 16) : 0;
	return family;
}

/*
 * Returns 1 if @name is not a cache event name, 0 with the encoding set,
 * or a negative error saying why this CPU has no such event.
 */
int evdb_cache_event(const struct pmuctx_evdb *evdb, const char *name, uint64_t *config,
		     uint64_t *config1, char *err, size_t err_len)
{
	const struct cache_map_entry *e = NULL, *map = NULL;
	const char *source = NULL;
	int type, op, result;
	long long unimplemented = -1;
	unsigned family, model, i, j;

	if (!parse_cache_name(name, &type, &op, &result))
		return 1;
	if (!(valid_ops[type] & (1u << op)))
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s: perf has no %s operation for %s", name, op_names[op][0],
				type_names[type][0]);
	if (!strcmp(evdb->arch, "x86")) {
		if ((family = x86_family_model(evdb->cpuid, "GenuineIntel", &model)) == 6) {
			for (i = 0; intel_cache_models[i].map && !map; i++)
				for (j = 0; j < 8 && intel_cache_models[i].models[j]; j++)
					if (intel_cache_models[i].models[j] == model) {
						map = intel_cache_models[i].map;
						source = intel_cache_models[i].name;
					}
		} else if ((family = x86_family_model(evdb->cpuid, "AuthenticAMD", &model)) ||
			   (family = x86_family_model(evdb->cpuid, "HygonGenuine", &model))) {
			map = family >= 0x17 ? amd_f17h_cache : amd_k8_cache;
			source = family >= 0x17 ? "amd family 17h+" : "amd";
		}
		if (!map)
			return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
					"%s: perf's kernel has no cache event map for CPU %s", name, evdb->cpuid);
		e = lookup(map, type, op, result);
	} else if (!strcmp(evdb->arch, "arm64")) {
		/* the architected map first, for the common events the PMU has */
		e = lookup(armv8_pmuv3_cache, type, op, result);
		source = "armv8_pmuv3";
		if (e && !(e->config < 0x40 && pmuv3_implements(evdb, e->config))) {
			unimplemented = e->config;
			e = NULL;
		}
		if (!e) {
			source = arm64_model_map(evdb, &map);
			e = lookup(map, type, op, result);
		}
	} else {
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s: no cache event map for architecture %s", name, evdb->arch);
	}
	if (!e && unimplemented >= 0)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s is not supported on CPU %s: the PMUv3 common event 0x%x it maps to is "
				"not implemented (table %s) and perf's %s map has no other",
				name, evdb->cpuid, (unsigned)unimplemented, pmuctx_evdb_table(evdb), source);
	if (!e)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s is not supported on CPU %s: perf's kernel map (%s) has no event for it",
				name, evdb->cpuid, source);
	if (e->config == CACHE_INVALID)
		return ev_error(err, err_len, PMUCTX_EV_EUNKNOWN_EVENT,
				"%s is not valid on CPU %s: perf's kernel map (%s) refuses it (EINVAL)",
				name, evdb->cpuid, source);
	*config = e->config;
	*config1 = e->config1;
	return 0;
}

/*
 * perf's canonical spelling of cache event (@type, @op, @result) in perf's
 * own numbering (PERF_COUNT_HW_CACHE_*, which these enums follow), e.g.
 * "L1-dcache-load-misses"; -1 for numbers perf does not define.
 */
int evdb_cache_spell(unsigned type, unsigned op, unsigned result, char *buf, size_t len)
{
	if (type >= C_END || op > C_PREFETCH || result > C_MISS)
		return -1;
	snprintf(buf, len, "%s-%s-%s", type_names[type][0], op_names[op][0],
		 result_names[result][0]);
	return 0;
}

/* perf list's spelling of the idx-th combination perf accepts, or NULL. */
const char *evdb_cache_name(int idx, char *buf, size_t len)
{
	int type, op, result;

	for (type = 0; type < C_END; type++)
		for (op = 0; op < 3; op++) {
			if (!(valid_ops[type] & (1u << op)))
				continue;
			for (result = 0; result < 2; result++) {
				if (idx--)
					continue;
				if (result == C_ACCESS)
					snprintf(buf, len, "%s-%s", type_names[type][0], op_names[op][1]);
				else
					snprintf(buf, len, "%s-%s-%s", type_names[type][0], op_names[op][0],
						 result_names[result][0]);
				return buf;
			}
		}
	return NULL;
}
