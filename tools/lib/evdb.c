// SPDX-License-Identifier: GPL-2.0
/*
 * Opening the event database: pick the table for a CPU identifier (mapfile
 * rules of perf), and read-only accessors over the compiled tables.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "evdb_internal.h"

static const char *const error_names[PMUCTX_EV_NR_ERRORS] = {
	[PMUCTX_EV_OK] = "success",
	[PMUCTX_EV_ENOMEM] = "out of memory",
	[PMUCTX_EV_ENOCPU] = "no event table for this CPU",
	[PMUCTX_EV_ESYNTAX] = "syntax error",
	[PMUCTX_EV_EUNKNOWN_PMU] = "unknown PMU",
	[PMUCTX_EV_EUNKNOWN_EVENT] = "unknown event",
	[PMUCTX_EV_EUNKNOWN_UMASK] = "unknown unit mask",
	[PMUCTX_EV_EMISSING_UMASK] = "missing unit mask",
	[PMUCTX_EV_EEXCLUSIVE] = "unit masks cannot be combined",
	[PMUCTX_EV_EUNKNOWN_MOD] = "unknown modifier",
	[PMUCTX_EV_EBAD_VALUE] = "bad value",
	[PMUCTX_EV_EMOD_CONFLICT] = "conflicting modifier",
	[PMUCTX_EV_EDUPLICATE] = "given twice",
	[PMUCTX_EV_ERECURSION] = "recursive metric",
	[PMUCTX_EV_EDIV_ZERO] = "division by zero",
	[PMUCTX_EV_EIO] = "cannot read file",
	[PMUCTX_EV_EUNKNOWN_NAME] = "unknown name in expression",
};

const char *pmuctx_ev_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= PMUCTX_EV_NR_ERRORS)
		return "unknown error";
	return error_names[err];
}

int ev_error(char *err, size_t err_len, int code, const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return -code;
}

/* ---------- CPU matching ---------- */

static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s)
		return -1;
	*v = strtoull(s, &end, 16);
	return *end ? -1 : 0;
}

/* MIDR variant [23:20] and revision [3:0] do not select a table. */
#define MIDR_IGNORED_BITS 0x00f0000fULL

static int match_arm64(const char *pattern, const char *cpuid)
{
	unsigned long long a, b;

	if (parse_u64(pattern, &a) || parse_u64(cpuid, &b))
		return 0;
	return (a & ~MIDR_IGNORED_BITS) == (b & ~MIDR_IGNORED_BITS);
}

/* Count @c outside bracket expressions ("[0-9A-F]" has no field separator). */
static int count_char(const char *s, char c)
{
	int n = 0, in_bracket = 0;

	for (; *s; s++) {
		if (*s == '[')
			in_bracket = 1;
		else if (*s == ']')
			in_bracket = 0;
		else if (!in_bracket)
			n += *s == c;
	}
	return n;
}

/*
 * x86: the mapfile CPUID is an extended regular expression that must match
 * the whole "vendor-family-model[-stepping]" string.  A pattern without a
 * stepping field matches the identifier with its stepping removed.
 */
static int match_x86(const char *pattern, const char *cpuid)
{
	char id[128];
	regex_t re;
	regmatch_t m;
	char *anchored;
	int ok = 0;

	snprintf(id, sizeof(id), "%s", cpuid);
	if (count_char(pattern, '-') < 3 && count_char(id, '-') >= 3)
		*strrchr(id, '-') = 0;
	anchored = malloc(strlen(pattern) + 5);
	if (!anchored)
		return 0;
	sprintf(anchored, "^(%s)$", pattern);
	if (!regcomp(&re, anchored, REG_EXTENDED)) {
		ok = !regexec(&re, id, 1, &m, 0) && m.rm_so == 0 && (size_t)m.rm_eo == strlen(id);
		regfree(&re);
	}
	free(anchored);
	return ok;
}

static int looks_like_midr(const char *s)
{
	if (!strncasecmp(s, "0x", 2))
		s += 2;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

static const char *default_core_pmu(const char *arch)
{
	if (!strcmp(arch, "x86"))
		return "cpu";
	if (!strcmp(arch, "arm64"))
		return "armv8_pmuv3";
	return "cpu";
}

static int word_in_list(const char *list, const char *word)
{
	size_t n = strlen(word);

	while (*list) {
		size_t len = strcspn(list, " ");

		if (len == n && !strncasecmp(list, word, n))
			return 1;
		list += len;
		while (*list == ' ')
			list++;
	}
	return 0;
}

/* Append PMU aliases not yet known (the base table's, libpfm4's model name). */
static void add_pmu_names(struct pmuctx_evdb *evdb, const char *names)
{
	while (names && *names) {
		size_t n = strcspn(names, " ");
		size_t used = strlen(evdb->pmu_names);
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)n, names);
		if (*word && !word_in_list(evdb->pmu_names, word) &&
		    used + n + 2 < sizeof(evdb->pmu_names))
			snprintf(evdb->pmu_names + used, sizeof(evdb->pmu_names) - used, "%s%s",
				 used ? " " : "", word);
		names += n;
		while (*names == ' ')
			names++;
	}
}

/*
 * libpfm4 names the core PMU of each model ("skx::INST_RETIRED"); accept
 * those prefixes for the matching upstream table.
 */
static const char *model_pmu_name(const char *table)
{
	static const struct { const char *table, *pfm; } names[] = {
		{ "skylakex", "skx" }, { "cascadelakex", "clx" }, { "skylake", "skl kbl" },
		{ "haswell", "hsw" }, { "haswellx", "hsw_ep" }, { "broadwell", "bdw" },
		{ "broadwellx", "bdw_ep" }, { "broadwellde", "bdw_ep" }, { "ivybridge", "ivb" },
		{ "ivytown", "ivb_ep" }, { "sandybridge", "snb" }, { "jaketown", "snb_ep" },
		{ "nehalemep", "nhm" }, { "nehalemex", "nhm_ex" }, { "westmereep-sp", "wsm" },
		{ "westmereep-dp", "wsm_dp" }, { "westmereex", "wsm_ex" }, { "icelake", "icl" },
		{ "icelakex", "icx" }, { "tigerlake", "tgl" }, { "alderlake", "adl_glc adl_grt" },
		{ "sapphirerapids", "spr" }, { "silvermont", "slm" }, { "goldmont", "glm" },
		{ "goldmontplus", "glm" }, { "knightslanding", "knl" }, { "bonnell", "atom" },
		{ "snowridgex", "tmt" }, { "amdzen1", "amd64_fam17h_zen1" },
		{ "amdzen2", "amd64_fam17h_zen2" }, { "amdzen3", "amd64_fam19h_zen3" },
		/* arm64: libpfm4's names, then the PMU names perf shows with device-tree probing */
		{ "arm/cortex-a34", "armv8_cortex_a34" }, { "arm/cortex-a35", "armv8_cortex_a35" },
		{ "arm/cortex-a53", "arm_ac53 armv8_cortex_a53" },
		{ "arm/cortex-a57-a72", "arm_ac57 arm_ac72 armv8_cortex_a57 armv8_cortex_a72" },
		{ "arm/cortex-a55", "arm_ac55 armv8_cortex_a55" },
		{ "arm/cortex-a65-e1", "armv8_cortex_a65 armv8_neoverse_e1" },
		{ "arm/cortex-a73", "armv8_cortex_a73" }, { "arm/cortex-a75", "armv8_cortex_a75" },
		{ "arm/cortex-a76-n1", "arm_n1 arm_ac76 armv8_cortex_a76 armv8_neoverse_n1" },
		{ "arm/cortex-a77", "armv8_cortex_a77" }, { "arm/cortex-a78", "armv8_cortex_a78" },
		{ "arm/cortex-x1", "armv8_cortex_x1" }, { "arm/cortex-x2", "armv9_cortex_x2" },
		{ "arm/cortex-a510", "armv9_cortex_a510" }, { "arm/cortex-a710", "armv9_cortex_a710" },
		{ "arm/neoverse-n2", "arm_n2 armv9_neoverse_n2" }, { "arm/neoverse-v1", "arm_v1 armv8_neoverse_v1" },
		{ "fujitsu/a64fx", "arm_a64fx" }, { "cavium/thunderx2", "arm_thunderx2 armv8_brcm_vulcan" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].table, table))
			return names[i].pfm;
	return NULL;
}

/* Hybrid Intel: the table's core events are cpu_core's, next to cpu_atom's. */
static int table_is_hybrid(const struct pmuctx_evdb *evdb)
{
	const struct pmu_db_table *t = &evdb->db->tables[evdb->table];
	uint32_t i;

	for (i = 0; i < t->n_events; i++)
		if (!strcmp(EVDB_STR(evdb, evdb->db->events[t->first_event + i].pmu), "cpu_atom"))
			return 1;
	return 0;
}

/* Base-table events (and metrics) whose names the model's table lacks. */
static int collect_base(struct pmuctx_evdb *evdb)
{
	const struct pmu_db *db = evdb->db;
	const struct pmu_db_table *model = &db->tables[evdb->table];
	const struct pmu_db_table empty = { 0 };
	const struct pmu_db_table *base = evdb->base_table >= 0 ? &db->tables[evdb->base_table] : &empty;
	uint32_t i, j, n = base->n_events;
	int t;

	for (t = 0; t < evdb->n_name_tables; t++)
		n += db->tables[evdb->name_tables[t]].n_events;
	evdb->base_events = calloc(n + 1, sizeof(*evdb->base_events));
	evdb->base_metrics = calloc(base->n_metrics + 1, sizeof(*evdb->base_metrics));
	if (!evdb->base_events || !evdb->base_metrics)
		return -1;

	for (i = 0; i < base->n_events; i++) {
		const char *name = PMU_DB_STR(db, db->events[base->first_event + i].name);

		/* only a core event shadows: skylakex's LLC_MISSES is the iMC's */
		for (j = 0; j < model->n_events; j++) {
			const struct pmu_db_event *ev = &db->events[model->first_event + j];
			const char *pmu = PMU_DB_STR(db, ev->pmu);

			if (!strcasecmp(PMU_DB_STR(db, ev->name), name) &&
			    (!*pmu || !strcmp(pmu, "cpu_atom")))
				break;
		}
		if (j == model->n_events)
			evdb->base_events[evdb->n_base_events++] = base->first_event + i;
	}
	/* name tables: every event, under its own PMU name, after the base's */
	for (t = 0; t < evdb->n_name_tables; t++) {
		const struct pmu_db_table *names = &db->tables[evdb->name_tables[t]];

		for (i = 0; i < names->n_events; i++)
			evdb->base_events[evdb->n_base_events++] = names->first_event + i;
	}
	for (i = 0; i < base->n_metrics; i++) {
		const char *name = PMU_DB_STR(db, db->metrics[base->first_metric + i].name);

		for (j = 0; j < model->n_metrics; j++)
			if (!strcasecmp(PMU_DB_STR(db, db->metrics[model->first_metric + j].name), name))
				break;
		if (j == model->n_metrics)
			evdb->base_metrics[evdb->n_base_metrics++] = base->first_metric + i;
	}
	return 0;
}

/*
 * A table whose events carry their own PMU name (libpfm4's skx) names the
 * CPU's events its own way: its events are all there, under that name.
 * Our other tables (architectural events) are the core PMU's: a base.
 */
static int table_is_named(const struct pmu_db *db, uint32_t table)
{
	const struct pmu_db_table *t = &db->tables[table];

	return t->n_events && *PMU_DB_STR(db, db->events[t->first_event].pmu);
}

/*
 * libpfm4's tables (pfm2json): named, and named after the PMU their events
 * carry; a hybrid model's table is named too, but its events are
 * cpu_core's and cpu_atom's.
 */
static int table_is_libpfm4(const struct pmu_db *db, uint32_t table)
{
	const struct pmu_db_table *t = &db->tables[table];

	return table_is_named(db, table) &&
	       !strcmp(PMU_DB_STR(db, t->name), PMU_DB_STR(db, db->events[t->first_event].pmu));
}

/* The mapfile's PmuNames column: the first name is the core PMU's. */
static void set_core_pmu(struct pmuctx_evdb *evdb, const char *names)
{
	if (!*names)
		return;
	snprintf(evdb->core_pmu, sizeof(evdb->core_pmu), "%.*s", (int)strcspn(names, " "), names);
	snprintf(evdb->pmu_names, sizeof(evdb->pmu_names), "%s", names);
}

int pmuctx_evdb_open(struct pmuctx_evdb **out, const struct pmu_db *db,
		     const char *cpuid, char *err, size_t err_len)
{
	struct pmuctx_evdb *evdb;
	const char *arch = NULL, *colon;
	char detected[128];
	uint32_t i, base_mapfile = ~0u, name_mapfile = ~0u;
	int ret;

	*out = NULL;
	if (!db)
		db = &pmuctx_builtin_db;
	if (!cpuid || !*cpuid)
		cpuid = getenv("PMUCTX_CPUID");
	if (!cpuid || !*cpuid) {
		ret = pmuctx_detect_cpuid(detected, sizeof(detected), &arch);
		if (ret)
			return ev_error(err, err_len, PMUCTX_EV_ENOCPU,
					"cannot identify the CPU; set PMUCTX_CPUID (e.g. GenuineIntel-6-55-4 or 0x410fd0c0)");
		cpuid = detected;
	}
	evdb = calloc(1, sizeof(*evdb));
	if (!evdb)
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	evdb->db = db;
	evdb->table = -1;
	evdb->base_table = -1;
	evdb->map = -1;
	colon = strchr(cpuid, ':');
	if (colon && colon - cpuid < (int)sizeof(evdb->arch)) {
		memcpy(evdb->arch, cpuid, colon - cpuid);
		cpuid = colon + 1;
	} else if (arch) {
		snprintf(evdb->arch, sizeof(evdb->arch), "%s", arch);
	} else {
		snprintf(evdb->arch, sizeof(evdb->arch), "%s",
			 looks_like_midr(cpuid) ? "arm64" : "x86");
	}
	snprintf(evdb->cpuid, sizeof(evdb->cpuid), "%s", cpuid);
	snprintf(evdb->core_pmu, sizeof(evdb->core_pmu), "%s", default_core_pmu(evdb->arch));
	/*
	 * The first matching mapfile line gives the model's table.  As in
	 * perf, later matches in the same mapfile do not count (upstream's x86
	 * mapfile matches AMD family 23 models 0-2F twice: Zen1's row, then
	 * the Zen2 row for the rest of the family).  A match in a later
	 * mapfile (ours: the Intel architectural events, the PMUv3 common
	 * events) is the model's base, whose events and metrics the model's
	 * table does not define show through.  A CPUID of "default"
	 * matches every CPU of its architecture: every PMUv3 numbers its
	 * common events the same way, and PMCEID0/1 say which it implements.
	 */
	for (i = 0; i < db->n_maps; i++) {
		const struct pmu_db_map *m = &db->maps[i];
		const char *pattern = PMU_DB_STR(db, m->cpuid);
		int hit, is_default = !strcmp(pattern, "default");

		if (strcmp(PMU_DB_STR(db, m->arch), evdb->arch) ||
		    strcmp(PMU_DB_STR(db, m->type), "core"))
			continue;
		if (is_default)
			hit = 1;
		else if (!strcmp(evdb->arch, "arm64"))
			hit = match_arm64(pattern, cpuid);
		else if (!strcmp(evdb->arch, "x86"))
			hit = match_x86(pattern, cpuid);
		else
			hit = !strcasecmp(pattern, cpuid);
		if (!hit)
			continue;
		/*
		 * A name table is never the model's: a CPU only libpfm4
		 * describes (AMD K8, QEMU's default qemu64 among them) keeps
		 * the generic events and built-in presets it had without it.
		 */
		if (evdb->table < 0 && !table_is_libpfm4(db, m->table)) {
			evdb->map = i;
			evdb->table = m->table;
			evdb->fallback = is_default;
			set_core_pmu(evdb, PMU_DB_STR(db, m->pmu_names));
			add_pmu_names(evdb, evdb->core_pmu);
		} else if ((int)m->table == evdb->table ||
			   (evdb->map >= 0 && m->mapfile == db->maps[evdb->map].mapfile)) {
			continue;	/* perf's rule: the first match of a mapfile */
		} else if (!table_is_named(db, m->table)) {
			if (evdb->base_table < 0 && m->mapfile != base_mapfile) {
				evdb->base_table = m->table;
				add_pmu_names(evdb, PMU_DB_STR(db, m->pmu_names));
			}
			base_mapfile = m->mapfile;
		} else if (m->mapfile != name_mapfile &&
			   evdb->n_name_tables < (int)(sizeof(evdb->name_tables) / sizeof(evdb->name_tables[0]))) {
			/*
			 * A further tree names the same CPU's events its own way
			 * (libpfm4's skx::FP_ARITH): all its events are there,
			 * under its own PMU name, first match of its mapfile.
			 */
			evdb->name_tables[evdb->n_name_tables++] = m->table;
			name_mapfile = m->mapfile;
			add_pmu_names(evdb, PMU_DB_STR(db, m->pmu_names));
		}
	}
	if (evdb->table >= 0 && table_is_hybrid(evdb))
		add_pmu_names(evdb, "cpu_core");
	if ((evdb->base_table >= 0 || evdb->n_name_tables) && collect_base(evdb)) {
		pmuctx_evdb_close(evdb);
		return ev_error(err, err_len, PMUCTX_EV_ENOMEM, "out of memory");
	}
	if (evdb->table >= 0)
		add_pmu_names(evdb, model_pmu_name(EVDB_STR(evdb, db->tables[evdb->table].name)));
	if (!evdb->pmu_names[0])
		snprintf(evdb->pmu_names, sizeof(evdb->pmu_names), "%s", evdb->core_pmu);
	*out = evdb;
	return 0;
}

void pmuctx_evdb_close(struct pmuctx_evdb *evdb)
{
	if (!evdb)
		return;
	derived_free_all(evdb);
	free(evdb->base_events);
	free(evdb->base_metrics);
	free(evdb);
}

const char *pmuctx_evdb_arch(const struct pmuctx_evdb *evdb) { return evdb->arch; }
const char *pmuctx_evdb_cpuid(const struct pmuctx_evdb *evdb) { return evdb->cpuid; }
const char *pmuctx_evdb_core_pmu(const struct pmuctx_evdb *evdb) { return evdb->core_pmu; }

int pmuctx_evdb_is_fallback(const struct pmuctx_evdb *evdb) { return evdb->fallback; }

void pmuctx_evdb_set_implemented(struct pmuctx_evdb *evdb, const uint64_t hw_events[2])
{
	evdb->hw_events[0] = hw_events[0];
	evdb->hw_events[1] = hw_events[1];
	evdb->hw_events_known = !strcmp(evdb->arch, "arm64");
	evdb->x86_arch_events_known = !strcmp(evdb->arch, "x86");
}

/*
 * Intel's architectural events, in the order of CPUID 0AH:EBX (the module
 * reports bit n set when event n is available): event | umask << 8.
 */
static const uint16_t x86_arch_events[] = {
	0x003c, 0x00c0, 0x013c, 0x4f2e, 0x412e, 0x00c4, 0x00c5,
};

static int x86_arch_event_implemented(const struct pmuctx_evdb *evdb,
				      const struct pmu_db_event *ev)
{
	unsigned int i;

	if (ev->n_umasks)	/* a choice of unit masks: depends on the choice */
		return -1;
	for (i = 0; i < sizeof(x86_arch_events) / sizeof(x86_arch_events[0]); i++)
		if ((ev->code | ev->umask << 8) == x86_arch_events[i])
			return !!(evdb->hw_events[0] & (1ULL << i));
	return -1;	/* model-specific: CPUID 0AH says nothing */
}

/*
 * PMUv3 common events: 0x00-0x3f and 0x4000-0x403f, as PMCEID0/1 number
 * them; x86: the architectural events, as CPUID 0AH:EBX does.
 */
int pmuctx_evdb_event_implemented(const struct pmuctx_evdb *evdb, int idx)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);

	if (ev && evdb->x86_arch_events_known && evdb_event_kind(evdb, idx) == PMU_KIND_X86)
		return x86_arch_event_implemented(evdb, ev);
	if (!ev || !evdb->hw_events_known || evdb_event_kind(evdb, idx) != PMU_KIND_ARM64)
		return -1;
	if (ev->code < 64)
		return !!(evdb->hw_events[0] & (1ULL << ev->code));
	if (ev->code >= 0x4000 && ev->code < 0x4040)
		return !!(evdb->hw_events[1] & (1ULL << (ev->code - 0x4000)));
	return -1;	/* IMPLEMENTATION DEFINED: PMCEID says nothing */
}

const char *pmuctx_evdb_table(const struct pmuctx_evdb *evdb)
{
	if (evdb->table < 0)
		return NULL;
	return EVDB_STR(evdb, evdb->db->tables[evdb->table].name);
}

/* ---------- events ---------- */

static uint32_t n_common(const struct pmuctx_evdb *evdb)
{
	const struct pmu_db *db = evdb->db;

	return db->common_table >= 0 ? db->tables[db->common_table].n_events : 0;
}

static uint32_t n_model(const struct pmuctx_evdb *evdb)
{
	return evdb->table >= 0 ? evdb->db->tables[evdb->table].n_events : 0;
}

/* Events: the common (software) table, the model's, then the base's extras. */
int pmuctx_evdb_n_events(const struct pmuctx_evdb *evdb)
{
	return n_common(evdb) + n_model(evdb) + evdb->n_base_events;
}

const struct pmu_db_event *evdb_event_ptr(const struct pmuctx_evdb *evdb, int idx)
{
	const struct pmu_db *db = evdb->db;
	uint32_t nc = n_common(evdb), nm = n_model(evdb);

	if (idx < 0 || idx >= pmuctx_evdb_n_events(evdb))
		return NULL;
	if ((uint32_t)idx < nc)
		return &db->events[db->tables[db->common_table].first_event + idx];
	if ((uint32_t)idx < nc + nm)
		return &db->events[db->tables[evdb->table].first_event + idx - nc];
	return &db->events[evdb->base_events[idx - nc - nm]];
}

const char *evdb_event_pmu(const struct pmuctx_evdb *evdb, int idx)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);

	if (*EVDB_STR(evdb, ev->pmu))
		return EVDB_STR(evdb, ev->pmu);
	return (uint32_t)idx < n_common(evdb) ? "sw" : evdb->core_pmu;
}

enum pmu_kind evdb_pmu_kind(const struct pmuctx_evdb *evdb, const char *pmu)
{
	if (!strcasecmp(pmu, "sw") || !strcasecmp(pmu, "software"))
		return PMU_KIND_SW;
	/* Hybrid Intel parts: both cpu_core and cpu_atom are core PMUs. */
	if (!strcmp(evdb->arch, "x86") &&
	    (!strcasecmp(pmu, "cpu_core") || !strcasecmp(pmu, "cpu_atom")))
		return PMU_KIND_X86;
	/* the core PMU's other names (libpfm4's skx, ix86arch) are the core PMU */
	if (strcasecmp(pmu, evdb->core_pmu) && !word_in_list(evdb->pmu_names, pmu))
		return PMU_KIND_UNCORE;
	if (!strcmp(evdb->arch, "x86"))
		return PMU_KIND_X86;
	if (!strcmp(evdb->arch, "arm64"))
		return PMU_KIND_ARM64;
	return PMU_KIND_OTHER_CORE;
}

enum pmu_kind evdb_event_kind(const struct pmuctx_evdb *evdb, int idx)
{
	return evdb_pmu_kind(evdb, evdb_event_pmu(evdb, idx));
}

/* Does @pmu name the event's PMU (directly or through a core alias)? */
int evdb_pmu_matches(const struct pmuctx_evdb *evdb, int idx, const char *pmu)
{
	const char *own = evdb_event_pmu(evdb, idx);

	if (!strcasecmp(own, pmu))
		return 1;
	if (!strcasecmp(own, "sw"))
		return !strcasecmp(pmu, "software");
	if (!strcasecmp(own, evdb->core_pmu))
		return word_in_list(evdb->pmu_names, pmu);
	return 0;
}

int pmuctx_evdb_has_pmu(const struct pmuctx_evdb *evdb, const char *name)
{
	int i, n = pmuctx_evdb_n_events(evdb);

	if (!strcasecmp(name, "sw") || !strcasecmp(name, "software") ||
	    !strcasecmp(name, evdb->core_pmu) || word_in_list(evdb->pmu_names, name))
		return 1;
	for (i = 0; i < n; i++)
		if (!strcasecmp(EVDB_STR(evdb, evdb_event_ptr(evdb, i)->pmu), name))
			return 1;
	return 0;
}

int pmuctx_evdb_event(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_event_desc *out)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);

	if (!ev)
		return -PMUCTX_EV_EUNKNOWN_EVENT;
	out->pmu = evdb_event_pmu(evdb, idx);
	out->name = EVDB_STR(evdb, ev->name);
	out->desc = EVDB_STR(evdb, ev->desc);
	out->long_desc = EVDB_STR(evdb, ev->long_desc);
	out->mods = EVDB_STR(evdb, ev->mods);
	out->code = ev->code;
	out->n_umasks = ev->n_umasks;
	out->n_groups = ev->n_groups;
	out->exclusive_groups = ev->exclusive_groups;
	out->deprecated = !!(ev->flags & PMU_DB_DEPRECATED);
	return 0;
}

int pmuctx_evdb_umask(const struct pmuctx_evdb *evdb, int idx, unsigned umask,
		      struct pmuctx_umask_desc *out)
{
	const struct pmu_db_event *ev = evdb_event_ptr(evdb, idx);
	const struct pmu_db_umask *um;

	if (!ev || umask >= ev->n_umasks)
		return -PMUCTX_EV_EUNKNOWN_UMASK;
	um = &evdb->db->umasks[ev->first_umask + umask];
	out->name = EVDB_STR(evdb, um->name);
	out->desc = EVDB_STR(evdb, um->desc);
	out->mods = EVDB_STR(evdb, um->mods);
	out->code = um->code;
	out->event_code = um->event_code;
	out->group = um->group;
	out->is_default = !!(um->flags & PMU_DB_DEFAULT);
	return 0;
}

int pmuctx_evdb_find(const struct pmuctx_evdb *evdb, const char *name)
{
	const char *sep = strstr(name, "::");
	char pmu[64] = "";

	if (sep) {
		snprintf(pmu, sizeof(pmu), "%.*s", (int)(sep - name), name);
		name = sep + 2;
	}
	return evdb_find_event(evdb, name, pmu, 0);
}

/*
 * A bare name prefers a core (or software) event to an uncore one, as
 * perf does: skylakex has an uncore LLC_MISSES too.  With @with_umasks,
 * only events that have unit masks qualify (EVENT.UMASK spellings).
 */
int evdb_find_event(const struct pmuctx_evdb *evdb, const char *name, const char *pmu,
		    int with_umasks)
{
	int i, n = pmuctx_evdb_n_events(evdb), other_core = -1, uncore = -1;

	/* a PMU named for its own table (libpfm4's skx::) means that table's event */
	for (i = 0; *pmu && i < n; i++) {
		const struct pmu_db_event *ev = evdb_event_ptr(evdb, i);

		if (!strcasecmp(EVDB_STR(evdb, ev->pmu), pmu) && !strcasecmp(EVDB_STR(evdb, ev->name), name) &&
		    (!with_umasks || ev->n_umasks))
			return i;
	}
	for (i = 0; i < n; i++) {
		const struct pmu_db_event *ev = evdb_event_ptr(evdb, i);

		if (strcasecmp(EVDB_STR(evdb, ev->name), name) || (with_umasks && !ev->n_umasks))
			continue;
		if (*pmu && !evdb_pmu_matches(evdb, i, pmu))
			continue;
		/* the table's own core PMU, then a hybrid's other one, then uncore */
		if (*pmu || !*EVDB_STR(evdb, ev->pmu))
			return i;
		if (evdb_event_kind(evdb, i) != PMU_KIND_UNCORE) {
			if (other_core < 0)
				other_core = i;
		} else if (uncore < 0) {
			uncore = i;
		}
	}
	return other_core >= 0 ? other_core : uncore;
}

/* ---------- metrics ---------- */

int pmuctx_evdb_n_metrics(const struct pmuctx_evdb *evdb)
{
	const struct pmu_db *db = evdb->db;
	int n = evdb->n_base_metrics;

	if (db->common_table >= 0)
		n += db->tables[db->common_table].n_metrics;
	if (evdb->table >= 0)
		n += db->tables[evdb->table].n_metrics;
	return n;
}

static const struct pmu_db_metric *metric_ptr(const struct pmuctx_evdb *evdb, int idx)
{
	const struct pmu_db *db = evdb->db;
	int nc = db->common_table >= 0 ? (int)db->tables[db->common_table].n_metrics : 0;
	int nm = evdb->table >= 0 ? (int)db->tables[evdb->table].n_metrics : 0;

	if (idx < 0 || idx >= pmuctx_evdb_n_metrics(evdb))
		return NULL;
	if (idx < nc)
		return &db->metrics[db->tables[db->common_table].first_metric + idx];
	if (idx < nc + nm)
		return &db->metrics[db->tables[evdb->table].first_metric + idx - nc];
	return &db->metrics[evdb->base_metrics[idx - nc - nm]];
}

int pmuctx_evdb_metric(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_metric_desc *out)
{
	const struct pmu_db_metric *m = metric_ptr(evdb, idx);

	if (!m)
		return -PMUCTX_EV_EUNKNOWN_NAME;
	out->name = EVDB_STR(evdb, m->name);
	out->expr = EVDB_STR(evdb, m->expr);
	out->groups = EVDB_STR(evdb, m->groups);
	out->desc = EVDB_STR(evdb, m->desc);
	out->scale_unit = EVDB_STR(evdb, m->scale_unit);
	return 0;
}

int pmuctx_evdb_find_metric(const struct pmuctx_evdb *evdb, const char *name)
{
	int i, n = pmuctx_evdb_n_metrics(evdb);

	for (i = 0; i < n; i++)
		if (!strcasecmp(EVDB_STR(evdb, metric_ptr(evdb, i)->name), name))
			return i;
	return -1;
}
