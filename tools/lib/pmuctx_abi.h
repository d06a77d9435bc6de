/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libpmuctx: thin wrappers over the /dev/pmuctx ioctls, with messages that
 * say what an errno means for the call that returned it.
 */
#ifndef PMUCTX_ABI_H
#define PMUCTX_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/pmuctx.h>

/* The device, opened once (close-on-exec); -1 with errno set. */
int pmuctx_device(void);
int pmuctx_get_info(struct pmuctx_info *info);

/* Open a counter; -1 with errno set. */
int pmuctx_counter_open(const struct pmuctx_attr *attr, int target,
			int group_fd, unsigned int flags);
int pmuctx_counter_enable(int fd, int group);
int pmuctx_counter_disable(int fd, int group);
int pmuctx_counter_reset(int fd, int group);

/*
 * One read, decoded; the fields read_format does not ask for are zero.
 * @slices (PMUCTX_FORMAT_SLICES) grew the struct in LIBPMUCTX_0.2: the
 * shared library keeps the five-word entry point for programs built
 * before it.
 */
struct pmuctx_value {
	uint64_t value, time_enabled, time_running, id, stamp;
	struct pmuctx_slice_stats slices;
};

/* Read a non-group counter opened with any read_format. */
int pmuctx_counter_read(int fd, uint64_t read_format, struct pmuctx_value *v);

/*
 * What a read says about the count the counter would have had, had it
 * been on the PMU all its enabled time (Documentation/multiplexing.rst).
 */
enum pmuctx_estimate_state {
	PMUCTX_EST_EXACT,	/* it ran all its enabled time: the value is the count */
	PMUCTX_EST_ESTIMATED,	/* scaled, with an error estimate */
	PMUCTX_EST_UNKNOWN,	/* scaled, but too few slices (under 3 effective): error unknown */
	PMUCTX_EST_NOT_COUNTED,	/* it never ran: no value */
};

struct pmuctx_estimate {
	double scaled;		/* value * enabled / running; NaN when not counted */
	double running_fraction;	/* running / enabled, 0..1 */
	double stderr_value;	/* standard error of @scaled; NaN when unknown */
	double ci95;		/* half-width of the 95% interval: Student t * stderr_value */
	int state;		/* enum pmuctx_estimate_state */
};

/*
 * Scale @v (read with TIME_ENABLED and TIME_RUNNING, and SLICES for an
 * error estimate) and estimate its error.  Returns e->state.
 */
int pmuctx_estimate(const struct pmuctx_value *v, struct pmuctx_estimate *e);
int pmuctx_counter_stats(int fd, struct pmuctx_ctx_stats *st);

/*
 * Process-tree read: fills up to *nr entries, sets *nr to the live
 * instances; -1 with errno ERANGE when more room is needed.
 */
int pmuctx_counter_tree(int fd, struct pmuctx_tree_read *tr,
			struct pmuctx_tree_entry *ents, uint32_t *nr);

/*
 * Self-reads (hardware counters: arm64 EL0 reads, x86 RDPMC): map the
 * caller's own instance of the counter, then read it without a system call.  pmuctx_self_read()
 * returns 0, or -1 with errno EAGAIN when the counter is not readable from
 * here right now (disabled, or not loaded): read() the fd instead.
 */
const struct pmuctx_mmap_page *pmuctx_counter_map(int fd);
int pmuctx_self_read(const struct pmuctx_mmap_page *page, uint64_t *value);

/* What @err from pmuctx_counter_open() means, for people. */
const char *pmuctx_open_strerror(int err);

/*
 * Address ranges (LIBPMUCTX_0.3; Documentation/ranges.rst).
 * pmuctx_range_plan_query(): how this machine would cover [start, end) for
 * a PMUCTX_TYPE_RANGE counter of @config (a pmuctx_range_kind, maybe with
 * PMUCTX_RANGE_EXACT), PAPI's offsets included, without opening one.
 * pmuctx_counter_range(): an open range counter's range and plan.  Both
 * fill all of *r; -1 with errno set.
 */
int pmuctx_range_plan_query(uint64_t config, uint64_t start, uint64_t end,
			    struct pmuctx_range *r);
int pmuctx_counter_range(int fd, struct pmuctx_range *r);

/*
 * What @err from either of them, or from pmuctx_counter_open() of a
 * PMUCTX_TYPE_RANGE counter, means.
 */
const char *pmuctx_range_strerror(int err);

#endif
