/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctxsw: the pmuctx benchmark (make bench).  Context-switch, fork+exit,
 * read and memory costs of pmuctx against perf_events and against no
 * counters.  See Documentation/performance.rst.
 */
#ifndef PMUCTX_BENCH_H
#define PMUCTX_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Who counts. */
enum api { API_NONE, API_PMUCTX, API_PERF, NR_APIS };

/*
 * How the second task of a pair gets its counters:
 *   SHAPE_SWAP  inherited from the first (equivalent contexts: swaps)
 *   SHAPE_LOAD  it opens its own identical set (separate contexts: loads)
 *   SHAPE_MOD   inherited, then it opens one more counter (modified: loads)
 *   SHAPE_MAP   inherited, and both tasks map their first counter for
 *               self-reads (pmuctx PMU sets only)
 *   SHAPE_STAT  inherited with per-task counts (pmuctx INHERIT_STAT, perf
 *               inherit_stat): swaps that carry each task's count over
 */
enum shape { SHAPE_SWAP, SHAPE_LOAD, SHAPE_MOD, SHAPE_MAP, SHAPE_STAT, NR_SHAPES };

/* open_set()'s @inherit: none, inherited, or inherited with per-task counts. */
enum { INHERIT_NONE, INHERIT_SHARED, INHERIT_PER_TASK };

/*
 * A counter set: the first @npmu are PMU counters, then @nsw software ones.
 * @shapes: the ping-pong shapes it runs (1 << SHAPE_*), 0 for all.
 */
struct cset {
	const char *name;	/* "3sw", "7pmu", "4pmu+4sw", "14pmu" */
	int npmu, nsw;
	unsigned int shapes;
};

/* counters.c */
int api_available(enum api api, int want_pmu);
/*
 * Open @s on the caller, @inherit one of INHERIT_*; the first counter's fd
 * (0 for none), or -1 with errno set.
 */
int open_set(enum api api, const struct cset *s, int inherit);
/* One more software counter (the modified child's). */
int open_extra(enum api api);
/*
 * Read benchmarks: open one counter on the caller (software task-clock, or
 * PMU instructions), returning its fd; map it for self-reads.
 */
int open_one(enum api api, int pmu, int for_self_read);
int self_read_setup(enum api api, int fd, const void **page);
int self_read(enum api api, const void *page, uint64_t *value);
/* Rotations of the pmuctx context @fd's counter lives in (PMUCTX_IOC_STATS). */
int ctx_rotations(int fd, uint64_t *rotations);
/*
 * The rotation interval of multiplexed PMU counters, ms (-1 when unknown):
 * pmuctx's from PMUCTX_INFO, perf's from perf_event_mux_interval_ms in the
 * arm64 PMU's sysfs directory (or "cpu").  @src says where it came from.
 */
int mux_interval_ms(enum api api, char *src, size_t len);

/* scale.c: `ctxsw scale [-s seconds]` (issue 26). */
int scale_main(int argc, char **argv);

/* runs.c: each returns ns per operation (< 0 on failure, errno set). */
double run_pingpong(enum api api, const struct cset *s, enum shape shape, int rounds);
double run_ring(enum api api, const struct cset *s, int nfam, int ntasks, int laps);
double run_fork(enum api api, const struct cset *s, int iters);
double run_read(enum api api, int pmu, int self, int iters);
/*
 * A CPU-bound user loop of @insns instructions with @s open (not
 * inherited): ns of the loop.  Meanwhile: extra[0] the context's
 * rotations (pmuctx; -1 for the others), extra[1] interrupts taken
 * (/proc/stat "intr"; -1 when unreadable), extra[2] times the task was
 * switched out (getrusage).
 */
double run_mux(enum api api, const struct cset *s, unsigned long insns,
	       double extra[3]);
/*
 * Slab bytes per child of @n live children: mode 0 no counters, 1 clones of
 * the parent's inherited set, 2 each child's own set.  *obj from slab
 * objects in use (/proc/slabinfo), *pages from /proc/meminfo Slab.
 */
int run_memory(enum api api, const struct cset *s, int mode, int n,
	       double *obj, double *pages);

/*
 * accuracy.c: the mux block's accuracy half (issue 25), the workload
 * families of mux_families.h counted by @api with 14 inherited counters,
 * @reps times each; printed (every counter of every run) and in the JSON.
 */
int run_accuracy(enum api api, int reps);
void print_accuracy(FILE *o);
void json_accuracy(FILE *o);

double now_ns(void);
void set_batch(void);

#endif
