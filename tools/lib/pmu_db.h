/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layout of the compiled event tables.  The generator (tools/pmu-events/
 * jevents.c) emits C initialisers for these structures; the library only reads
 * them.  All text lives in one string table and is referenced by byte offset,
 * so start-up needs no allocation and identical strings are stored once.
 */
#ifndef PMUCTX_PMU_DB_H
#define PMUCTX_PMU_DB_H

#include <stdint.h>

/* Offset 0 of every string table is the empty string. */
#define PMU_DB_NOSTR 0

enum pmu_db_flags {
	PMU_DB_DEFAULT    = 1 << 0,	/* unit mask: default of its group */
	PMU_DB_DEPRECATED = 1 << 1,
	PMU_DB_PERPKG     = 1 << 2,
	PMU_DB_SOFTWARE   = 1 << 3,	/* event: perf software event */
	PMU_DB_ALONE      = 1 << 4,	/* unit mask: combines with no other of its group */
};

struct pmu_db_umask {
	uint32_t name;
	uint32_t desc;
	uint32_t long_desc;
	uint32_t mods;		/* hard-wired modifiers, "c=1:i=1" */
	uint32_t event_code;	/* usually the event's code; upstream may differ */
	uint32_t code;		/* unit mask value */
	uint32_t sample_after;
	uint64_t config1;	/* MSRValue (offcore response) */
	uint16_t msr_index;
	uint8_t group;
	uint8_t flags;
};

struct pmu_db_event {
	uint32_t name;
	uint32_t pmu;		/* empty string: the table's core PMU */
	uint32_t desc;
	uint32_t long_desc;
	uint32_t mods;		/* hard-wired modifiers of an event without unit masks */
	uint32_t code;
	uint32_t umask;		/* unit mask of an event without named unit masks */
	uint32_t sample_after;
	uint64_t config1;
	uint32_t first_umask;
	uint16_t n_umasks;
	uint16_t msr_index;
	uint8_t n_groups;
	uint8_t flags;
	uint16_t exclusive_groups;	/* bit g: group g allows one unit mask only */
};

struct pmu_db_metric {
	uint32_t name;
	uint32_t expr;
	uint32_t groups;
	uint32_t desc;
	uint32_t long_desc;
	uint32_t scale_unit;
};

struct pmu_db_table {
	uint32_t name;		/* directory relative to the arch root */
	uint32_t arch;
	uint32_t first_event;
	uint32_t n_events;
	uint32_t first_metric;
	uint32_t n_metrics;
};

struct pmu_db_map {
	uint32_t arch;		/* "x86", "arm64" */
	uint32_t cpuid;		/* mapfile CPUID column */
	uint32_t version;
	uint32_t type;		/* "core", "uncore" */
	uint32_t pmu_names;	/* extension column: space separated PMU aliases */
	uint32_t table;
	uint32_t mapfile;	/* rows of one mapfile share it (perf: first match wins) */
};

struct pmu_db {
	const char *strtab;
	const struct pmu_db_event *events;
	const struct pmu_db_umask *umasks;
	const struct pmu_db_metric *metrics;
	const struct pmu_db_table *tables;
	const struct pmu_db_map *maps;
	uint32_t n_events, n_umasks, n_metrics, n_tables, n_maps;
	int32_t common_table;	/* table always present ("common" dir), or -1 */
};

#define PMU_DB_STR(db, off) ((db)->strtab + (off))

#endif
