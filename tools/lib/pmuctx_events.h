/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpmuctx event database: named events for the running (or a forced) CPU,
 * libpfm4-style event strings, perf metrics and PAPI derived events.
 *
 * Every fallible call returns 0 or a negative PMUCTX_EV_E* code and writes a
 * human readable explanation into the caller's err buffer.
 */
#ifndef PMUCTX_EVENTS_H
#define PMUCTX_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct pmu_db;
struct pmuctx_evdb;

/* Error codes (returned negated). */
enum pmuctx_ev_error {
	PMUCTX_EV_OK = 0,
	PMUCTX_EV_ENOMEM,		/* out of memory */
	PMUCTX_EV_ENOCPU,		/* no table matches the CPU */
	PMUCTX_EV_ESYNTAX,		/* malformed string, expression or file line */
	PMUCTX_EV_EUNKNOWN_PMU,
	PMUCTX_EV_EUNKNOWN_EVENT,
	PMUCTX_EV_EUNKNOWN_UMASK,
	PMUCTX_EV_EMISSING_UMASK,	/* a group has no unit mask and no default */
	PMUCTX_EV_EEXCLUSIVE,		/* two unit masks of an exclusive group */
	PMUCTX_EV_EUNKNOWN_MOD,
	PMUCTX_EV_EBAD_VALUE,
	PMUCTX_EV_EMOD_CONFLICT,	/* conflicts with a hard-wired modifier */
	PMUCTX_EV_EDUPLICATE,		/* unit mask or modifier given twice */
	PMUCTX_EV_ERECURSION,		/* metric uses itself */
	PMUCTX_EV_EDIV_ZERO,
	PMUCTX_EV_EIO,			/* cannot read a file */
	PMUCTX_EV_EUNKNOWN_NAME,	/* name in an expression not resolvable */
	PMUCTX_EV_NR_ERRORS
};

const char *pmuctx_ev_strerror(int err);

/*
 * Encoding handed to the kernel ABI: type is enum pmuctx_type from
 * <linux/pmuctx.h> (hardware-generic, software, raw).
 */
#include <linux/pmuctx.h>

struct pmuctx_encoding {
	uint32_t type;
	uint64_t config;
	uint64_t config1;
	uint8_t exclude_user;
	uint8_t exclude_kernel;
	uint8_t exclude_hv;
};

#define PMUCTX_FSTR_MAX 512

struct pmuctx_event_info {
	struct pmuctx_encoding enc;
	char fstr[PMUCTX_FSTR_MAX];	/* fully qualified string (round-trips) */
	const char *pmu;		/* PMU name */
	const char *name;		/* event name, or NULL for raw events */
	const char *desc;
	int event_index;		/* for pmuctx_evdb_event(), or -1 for raw */
};

/*
 * Open the event database for a CPU.  @db: NULL for the built-in tables.
 * @cpuid: NULL to use $PMUCTX_CPUID or else the running CPU.  Accepted forms:
 * "GenuineIntel-6-55-4" (x86), "0x410fd0b0" (arm64 MIDR) or "arch:ID".
 */
int pmuctx_evdb_open(struct pmuctx_evdb **out, const struct pmu_db *db,
		     const char *cpuid, char *err, size_t err_len);
void pmuctx_evdb_close(struct pmuctx_evdb *evdb);

const char *pmuctx_evdb_arch(const struct pmuctx_evdb *evdb);
const char *pmuctx_evdb_cpuid(const struct pmuctx_evdb *evdb);
const char *pmuctx_evdb_table(const struct pmuctx_evdb *evdb);
const char *pmuctx_evdb_core_pmu(const struct pmuctx_evdb *evdb);
/* The table is the architecture's fallback: no model-specific table matched. */
int pmuctx_evdb_is_fallback(const struct pmuctx_evdb *evdb);
/*
 * Tell the database which events the running PMU implements (struct
 * pmuctx_info.hw_events: arm64 PMCEID0/1, x86 CPUID 0AH:EBX's architectural
 * events).  Then pmuctx_evdb_event_implemented() returns 1 or 0 for those
 * events, and -1 when it cannot say (other architectures, IMPLEMENTATION
 * DEFINED codes, x86 model-specific events).
 */
void pmuctx_evdb_set_implemented(struct pmuctx_evdb *evdb, const uint64_t hw_events[2]);
int pmuctx_evdb_event_implemented(const struct pmuctx_evdb *evdb, int idx);
/* PMU names for PAPI "CPU," matching: core name, aliases, "sw", units. */
int pmuctx_evdb_has_pmu(const struct pmuctx_evdb *evdb, const char *name);

/* Detect the running CPU's identifier in mapfile format. */
int pmuctx_detect_cpuid(char *buf, size_t len, const char **arch);

/* ---- events ---- */

struct pmuctx_event_desc {
	const char *pmu;
	const char *name;
	const char *desc;
	const char *long_desc;
	const char *mods;		/* hard-wired modifiers of a plain event */
	uint32_t code;
	unsigned n_umasks;
	unsigned n_groups;
	unsigned exclusive_groups;	/* bit g: group g takes one unit mask */
	int deprecated;
};

struct pmuctx_umask_desc {
	const char *name;
	const char *desc;
	const char *mods;		/* hard-wired modifiers, "" if none */
	uint32_t code;
	uint32_t event_code;
	unsigned group;
	int is_default;
};

enum pmuctx_mod_type { PMUCTX_MOD_BOOL, PMUCTX_MOD_INT };

struct pmuctx_mod_desc {
	const char *name;
	const char *desc;
	enum pmuctx_mod_type type;
	unsigned max;			/* largest accepted value */
	unsigned dflt;
};

int pmuctx_evdb_n_events(const struct pmuctx_evdb *evdb);
int pmuctx_evdb_event(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_event_desc *out);
int pmuctx_evdb_umask(const struct pmuctx_evdb *evdb, int idx, unsigned umask,
		      struct pmuctx_umask_desc *out);
/* Modifiers an event accepts; returns how many were written (at most max). */
int pmuctx_evdb_mods(const struct pmuctx_evdb *evdb, int idx,
		     const struct pmuctx_mod_desc **out, int max);
/* Index of an event by name (EVENT or pmu::EVENT), or -1. */
int pmuctx_evdb_find(const struct pmuctx_evdb *evdb, const char *name);

/*
 * perf's generic names this CPU understands (cycles, branch-misses, cs, ...):
 * the idx-th one, and what it counts here.  -1 past the last.
 */
int pmuctx_evdb_generic(const struct pmuctx_evdb *evdb, int idx, const char **name,
			const char **means);

/*
 * The known name (event, EVENT.UMASK, generic name, derived event or
 * metric) closest to a misspelt @name, for "did you mean" hints.  Returns 1
 * with buf filled, or 0 when nothing is close.
 */
int pmuctx_evdb_suggest(const struct pmuctx_evdb *evdb, const char *name, char *buf, size_t len);

/* Parse and encode a libpfm4-style or raw event string. */
int pmuctx_event_encode(const struct pmuctx_evdb *evdb, const char *str,
			struct pmuctx_event_info *info, char *err, size_t err_len);

/* ---- metrics ---- */

struct pmuctx_metric_desc {
	const char *name;
	const char *expr;
	const char *groups;
	const char *desc;
	const char *scale_unit;
};

int pmuctx_evdb_n_metrics(const struct pmuctx_evdb *evdb);
int pmuctx_evdb_metric(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_metric_desc *out);
int pmuctx_evdb_find_metric(const struct pmuctx_evdb *evdb, const char *name);

/*
 * Value of a name used in an expression (an event).  Return 0 and set *value,
 * or a negative error with err filled.
 */
typedef int (*pmuctx_value_fn)(void *ctx, const char *name, double *value,
			       char *err, size_t err_len);

/* Evaluate a metric; names that are metrics are evaluated recursively. */
int pmuctx_metric_eval(const struct pmuctx_evdb *evdb, const char *metric,
		       pmuctx_value_fn lookup, void *ctx, double *value,
		       char *err, size_t err_len);
/*
 * Call fn for every name a metric needs that is not itself a metric (the
 * events to count), through nested metrics; a name may come more than once.
 * fn returning non-zero stops the walk with that value.
 */
int pmuctx_metric_names(const struct pmuctx_evdb *evdb, const char *metric,
			int (*fn)(void *ctx, const char *name), void *ctx);

/*
 * What a name of a metric expression (one pmuctx_metric_names() passes)
 * is here: PMUCTX_LEAF_EVENT with @info filled (perf's pmu@event\,term\=v@
 * spelling and escapes understood), PMUCTX_LEAF_CONSTANT for perf's
 * constants the caller supplies (duration_time in seconds, #smt_on,
 * #core_wide, #num_packages, #num_cores, #num_dies, #num_cpus,
 * #num_cpus_online, #SYSTEM_TSC_FREQ in Hz), or a negative error saying
 * exactly what is missing (an event the CPU lacks, an uncore or
 * system-wide PMU, which count no task).  The walk and the evaluation
 * turn perf's msr@tsc@ into task-clock at #SYSTEM_TSC_FREQ.
 */
enum { PMUCTX_LEAF_EVENT, PMUCTX_LEAF_CONSTANT };
int pmuctx_metric_leaf(const struct pmuctx_evdb *evdb, const char *name,
		       struct pmuctx_event_info *info, char *err, size_t err_len);

/* Evaluate a free-standing expression with the same rules. */
int pmuctx_expr_eval_string(const struct pmuctx_evdb *evdb, const char *expr,
			    pmuctx_value_fn lookup, void *ctx, double *value,
			    char *err, size_t err_len);

/* ---- PAPI derived events ---- */

enum pmuctx_derived_type {
	PMUCTX_NOT_DERIVED,
	PMUCTX_DERIVED_ADD,
	PMUCTX_DERIVED_PS,
	PMUCTX_DERIVED_ADD_PS,
	PMUCTX_DERIVED_CMPD,
	PMUCTX_DERIVED_SUB,
	PMUCTX_DERIVED_POSTFIX,
	PMUCTX_DERIVED_INFIX,
};

const char *pmuctx_derived_type_name(enum pmuctx_derived_type type);

struct pmuctx_derived_desc {
	const char *name;
	enum pmuctx_derived_type type;
	int is_preset;			/* PRESET (vs EVENT) line */
	const char *formula;		/* POSTFIX/INFIX, else "" */
	const char *ldesc, *sdesc, *note;
	unsigned n_bases;
	const char *const *bases;	/* base event strings as written */
	const char *file;
	int line;
};

/* Load a PAPI event definition file; sections not for our PMUs are skipped. */
int pmuctx_derived_load(struct pmuctx_evdb *evdb, const char *path, char *err, size_t err_len);
int pmuctx_derived_load_buffer(struct pmuctx_evdb *evdb, const char *name, const char *text,
			       char *err, size_t err_len);
/* Load the built-in PAPI presets (PAPI_TOT_INS, ...) for this CPU. */
int pmuctx_derived_load_presets(struct pmuctx_evdb *evdb, char *err, size_t err_len);
/* Load every file of $PMUCTX_EVENT_FILE (colon separated); 0 if unset. */
int pmuctx_derived_load_env(struct pmuctx_evdb *evdb, char *err, size_t err_len);

/*
 * Definitions whose base events this CPU lacks are skipped, not fatal:
 * "file:line: NAME: base event 'X': why", one per skipped definition.
 */
int pmuctx_evdb_n_skipped(const struct pmuctx_evdb *evdb);
const char *pmuctx_evdb_skipped(const struct pmuctx_evdb *evdb, int idx);

int pmuctx_evdb_n_derived(const struct pmuctx_evdb *evdb);
int pmuctx_evdb_derived(const struct pmuctx_evdb *evdb, int idx, struct pmuctx_derived_desc *out);
int pmuctx_evdb_find_derived(const struct pmuctx_evdb *evdb, const char *name);

/*
 * Native events the derived events need, de-duplicated across all of them:
 * count them, then evaluate with their values in the same order.
 */
int pmuctx_evdb_n_natives(const struct pmuctx_evdb *evdb);
const struct pmuctx_event_info *pmuctx_evdb_native(const struct pmuctx_evdb *evdb, int idx);
/* Native indexes one derived event needs (flattened); returns the count. */
int pmuctx_derived_natives(const struct pmuctx_evdb *evdb, int idx, int *natives, int max);
int pmuctx_derived_eval(const struct pmuctx_evdb *evdb, int idx, const double *native_values,
			double cpu_max_mhz, double *value, char *err, size_t err_len);

/* Postfix (PAPI "N0|N1|+|") and infix formulas on given base values. */
int pmuctx_postfix_eval(const char *formula, const double *bases, unsigned n_bases,
			double *value, char *err, size_t err_len);
int pmuctx_infix_eval(const char *formula, const double *bases, unsigned n_bases,
		      double *value, char *err, size_t err_len);

#endif
