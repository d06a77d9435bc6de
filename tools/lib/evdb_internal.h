/* SPDX-License-Identifier: GPL-2.0 */
/* Internal state of an opened event database, shared by the library files. */
#ifndef PMUCTX_EVDB_INTERNAL_H
#define PMUCTX_EVDB_INTERNAL_H

#include <stdarg.h>

#include "pmu_db.h"
#include "pmuctx_events.h"

enum pmu_kind {
	PMU_KIND_X86,		/* x86 core PMU */
	PMU_KIND_ARM64,		/* ARMv8 PMUv3 */
	PMU_KIND_OTHER_CORE,
	PMU_KIND_SW,		/* software events */
	PMU_KIND_UNCORE,	/* any "Unit" PMU: encoded raw, no modifiers */
};

struct derived_base {
	int is_derived;		/* index into derived[] or natives[] */
	int index;
};

struct derived_event {
	char *name;
	enum pmuctx_derived_type type;
	int is_preset;
	char *formula, *ldesc, *sdesc, *note;
	unsigned n_bases;
	char **base_text;
	struct derived_base *bases;
	char *file;
	int line;
	int builtin;		/* one of pmuctx's built-in presets */
};

#define BUILTIN_PRESETS_FILE "(built-in presets)"

struct pmuctx_evdb {
	const struct pmu_db *db;
	char arch[16];
	char cpuid[128];
	int table;		/* matched table or -1 */
	int map;
	int base_table;		/* later mapfile match: its extra events show through */
	int name_tables[4];	/* matches in further mapfiles (libpfm4's names): all their events */
	int n_name_tables;
	uint32_t *base_events;	/* db->events indexes the model's table lacks */
	int n_base_events;
	uint32_t *base_metrics;
	int n_base_metrics;
	int fallback;		/* no model matched: the arch's "default" table */
	uint64_t hw_events[2];	/* PMCEID0/1 (x86: CPUID 0AH:EBX) of the running PMU */
	int hw_events_known;	/* arm64 */
	int x86_arch_events_known;
	char core_pmu[64];
	char pmu_names[256];	/* space separated aliases of the core PMU */
	struct derived_event *derived;
	int n_derived;
	struct pmuctx_event_info *natives;
	int n_natives;
	char **skipped;		/* why each skipped derived definition was skipped */
	int n_skipped;
};

extern const struct pmu_db pmuctx_builtin_db;

/* Fill err and return -code. */
int ev_error(char *err, size_t err_len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

const struct pmu_db_event *evdb_event_ptr(const struct pmuctx_evdb *evdb, int idx);
const char *evdb_event_pmu(const struct pmuctx_evdb *evdb, int idx);
int evdb_find_event(const struct pmuctx_evdb *evdb, const char *name, const char *pmu,
		    int with_umasks);
enum pmu_kind evdb_event_kind(const struct pmuctx_evdb *evdb, int idx);
enum pmu_kind evdb_pmu_kind(const struct pmuctx_evdb *evdb, const char *pmu);
int evdb_pmu_matches(const struct pmuctx_evdb *evdb, int idx, const char *pmu);
const struct pmuctx_mod_desc *evdb_kind_mods(enum pmu_kind kind, int *count);

#define EVDB_STR(evdb, off) PMU_DB_STR((evdb)->db, off)

/* The PMU a "pmu/.../" or "pmu::..." string names, as one of ours, or NULL. */
const char *evdb_string_pmu(const struct pmuctx_evdb *evdb, const char *str, char *buf, size_t len);

/* Expression engine shared by metrics and PAPI infix formulas. */
struct expr;
int expr_parse(const char *text, struct expr **out, char *err, size_t err_len);
void expr_free(struct expr *e);
int expr_eval(const struct expr *e, pmuctx_value_fn lookup, void *ctx, double *value,
	      char *err, size_t err_len);
/* Call fn for every name the expression refers to. */
int expr_for_each_name(const struct expr *e, int (*fn)(void *ctx, const char *name), void *ctx);

void derived_free_all(struct pmuctx_evdb *evdb);
/* The PMU of a built-in name table (libpfm4's) called @name, or NULL. */
const char *evdb_name_table_pmu(const struct pmuctx_evdb *evdb, const char *name);

/* perf's generic names: a hardware-generic id, or event strings to try. */
struct generic_event {
	const char *name;
	const char *arch;	/* NULL: every architecture */
	const char *vendor;	/* prefix of the x86 CPU id, NULL: any */
	int hw_id;		/* PMUCTX_HW_*, or -1 */
	const char *targets[3];	/* tried in order: table name, raw code */
	int needs;		/* GENERIC_NEEDS_*: a PMU feature the CPU must have */
};

enum {
	GENERIC_NEEDS_NOTHING,
	GENERIC_NEEDS_PERF_METRICS,	/* Intel's fixed slots counter and PERF_METRICS */
	GENERIC_NEEDS_PERF_METRICS_L2,	/* ... with the level-2 topdown fields */
};

/* 0 if this CPU has what @g needs, else a negative error saying what is missing. */
int evdb_generic_available(const struct pmuctx_evdb *evdb, const struct generic_event *g,
			   char *err, size_t err_len);

const struct generic_event *evdb_find_generic(const struct pmuctx_evdb *evdb, const char *name);

/*
 * perf's generic cache events (lib/cache.c): 1 if @name is not one, 0 with
 * the raw encoding of this CPU, or a negative error with perf's reason.
 */
int evdb_cache_event(const struct pmuctx_evdb *evdb, const char *name, uint64_t *config,
		     uint64_t *config1, char *err, size_t err_len);
/* The idx-th cache event name perf lists, or NULL past the last. */
const char *evdb_cache_name(int idx, char *buf, size_t len);
int evdb_cache_spell(unsigned type, unsigned op, unsigned result, char *buf, size_t len);

#endif
