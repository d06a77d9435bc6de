/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmuctx stat internals: the counters it opens, the lines it prints, and
 * the output formats.  stat.c runs and attaches, stat_events.c turns -e/-M
 * into counters and reads them, stat_print.c formats.
 */
#ifndef PMUCTX_STAT_H
#define PMUCTX_STAT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli.h"
#include "pmuctx_abi.h"
#include "range_cli.h"

#define STAT_MAX_COUNTERS	64
#define STAT_MAX_ITEMS		64
#define STAT_MAX_TARGETS	256
#define STAT_NAME_MAX		256

/* Why a counter has no value. */
enum stat_status {
	STAT_COUNTED,
	STAT_NOT_SUPPORTED,	/* the PMU or the kernel cannot count it at all */
	STAT_NOT_COUNTED,	/* could be counted, but was not (no free counter, never ran) */
};

/* One event as the kernel sees it: a counter per target task. */
struct stat_counter {
	char name[STAT_NAME_MAX];	/* as typed (":u" appended on fallback) */
	struct pmuctx_event_info info;
	int group_leader;		/* index of the leader, or -1 */
	int user_only;			/* kernel mode refused: counting user mode only */
	int explicit_mods;		/* the user chose u/k: no fallback */
	int fd[STAT_MAX_TARGETS];
	int open_errno;			/* why it could not be opened, 0 if open */
	int noted;			/* the reason was printed */
	enum stat_status status;
	uint64_t read_format;		/* PMUCTX_FORMAT_SLICES unless the module refused it */
	/* this run (or interval) */
	uint64_t value, enabled, running;
	struct pmuctx_slice_stats slices;
	uint64_t prev_value, prev_enabled, prev_running;	/* at the last interval */
	struct pmuctx_slice_stats prev_slices;
	/* PMUCTX_TYPE_RANGE (info.enc.type): the range asked for, and its plan here */
	struct range_request range;
	struct pmuctx_range plan;
	int have_plan;
};

enum stat_item_kind { ITEM_COUNTER, ITEM_DERIVED, ITEM_METRIC };

/* One printed line. */
struct stat_item {
	enum stat_item_kind kind;
	char name[STAT_NAME_MAX];
	int counter;			/* ITEM_COUNTER */
	int derived;			/* ITEM_DERIVED: evdb index */
	char unit[64];			/* ITEM_METRIC: ScaleUnit */
	double value;			/* this run's value */
	enum stat_status status;
	char why[256];			/* derived/metric not computable */
	/* ITEM_COUNTER, this run or interval: times, and the scaled value's error */
	uint64_t enabled, running;
	struct pmuctx_estimate est;
	/* over -r runs */
	int runs;
	double sum, sum_sq;
	double sum_enabled, sum_running;
	double sum_ci_sq;		/* of the runs' scaled values: Σ (95% half-width)² */
	int unknown_runs;		/* runs whose error is unknown */
};

enum stat_format { FMT_STD, FMT_CSV, FMT_JSON };

struct stat_opts {
	int inherit;
	int per_task;
	int repeat;
	int interval_ms;
	enum stat_format format;
	const char *sep;		/* -x */
	FILE *out;			/* stderr or -o FILE */
	pid_t targets[STAT_MAX_TARGETS];/* -p / -t: tasks to attach to */
	int n_targets;
	const char *target_desc;	/* "process 123" for the header */
};

struct stat {
	struct stat_opts o;
	struct pmuctx_evdb *evdb;
	struct stat_counter c[STAT_MAX_COUNTERS];
	int n_counters;
	struct stat_item it[STAT_MAX_ITEMS];
	int n_items;
	int noted_user_only;
	int no_slices;			/* the module refused PMUCTX_FORMAT_SLICES */
	int error_column;		/* some counter has slice statistics: print errors */
	pid_t child;			/* the command we run, 0 when only attached */
	double last_interval_ts;	/* -I: where the previous interval ended */
	int printing_interval;		/* the lines being printed are one interval's */
	int cmd_argc;			/* the command, for the header */
	char **cmd_argv;
	/* this run */
	double elapsed, user_s, sys_s;
	double sum_elapsed, sum_sq_elapsed, sum_user, sum_sys;
	int runs;
};

/* stat_events.c */
int stat_parse_events(struct stat *st, const char *list, char *err, size_t err_len);
int stat_add_metrics(struct stat *st, const char *list, int by_group, char *err, size_t err_len);
int stat_split_list(const char *list, char **out, int max, char *err, size_t err_len);
int stat_add_range(struct stat *st, const struct range_request *rq, const char *name,
		   char *err, size_t err_len);
int stat_plan_ranges(struct stat *st);
int stat_open_counters(struct stat *st, pid_t *targets, int n_targets, int enable_on_exec);
void stat_close_counters(struct stat *st, int n_targets);
void stat_read_counters(struct stat *st, int n_targets);
void stat_compute_items(struct stat *st, int interval);
void stat_accumulate(struct stat *st);

/* stat_print.c */
void stat_group_digits(char *buf, size_t len, uint64_t v, const char *sep);
void stat_print_header(struct stat *st);
/* @ts < 0: the totals; else the interval read @ts seconds after the start */
void stat_print_items(struct stat *st, double ts);
void stat_print_footer(struct stat *st);
void stat_print_per_task(struct stat *st);
/* Each range counter's plan, PAPI's lines, every line after @prefix; how many. */
int stat_print_ranges(struct stat *st, FILE *f, const char *prefix);

#endif
