// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx stat: from -e and -M to counters, and from counters to values.
 *
 * Every -e name is a native event string, a derived (PAPI) event, an
 * address range (range:KIND@START-END) or a {group}; derived events and
 * metrics add the native counters they need, shared and hidden unless also
 * asked for.  A counter the kernel refuses is marked <not supported> or
 * <not counted> and the others go on; a range the kernel refuses stops
 * the run instead (stat_open_counters()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pmuctx_abi.h"
#include "stat.h"

/*
 * Split an event list on the commas between events: not inside a {group}
 * nor inside pmu/term=v,term=v/.  Returns the count, or -1 with err set.
 */
int stat_split_list(const char *list, char **out, int max, char *err, size_t err_len)
{
	const char *start = list, *p;
	int n = 0, depth = 0, slashes = 0;

	for (p = list;; p++) {
		if (*p == '{') {
			if (depth++) {
				snprintf(err, err_len, "nested groups in '%s'", list);
				return -1;
			}
		} else if (*p == '}') {
			if (!depth--) {
				snprintf(err, err_len, "'}' without '{' in '%s'", list);
				return -1;
			}
		} else if (*p == '/') {
			slashes++;
		}
		if (*p && (*p != ',' || depth || slashes % 2))
			continue;
		if (depth) {
			snprintf(err, err_len, "unterminated group in '%s'", list);
			return -1;
		}
		if (p == start) {
			snprintf(err, err_len, "empty event name in '%s'", list);
			return -1;
		}
		if (n == max) {
			snprintf(err, err_len, "too many events (at most %d)", max);
			return -1;
		}
		out[n] = strndup(start, p - start);
		if (!out[n]) {
			snprintf(err, err_len, "out of memory");
			return -1;
		}
		n++;
		slashes = 0;
		if (!*p)
			return n;
		start = p + 1;
	}
}

static int find_counter(struct stat *st, const char *fstr)
{
	int i;

	for (i = 0; i < st->n_counters; i++)
		if (!strcmp(st->c[i].info.fstr, fstr))
			return i;
	return -1;
}

/* Did the user choose privilege levels ("EVENT:k", "pmu/.../u"), not just "pmu::EVENT"? */
static int typed_modifiers(const char *name)
{
	const char *slash = strrchr(name, '/'), *p;

	if (slash)
		return slash[1] != 0;
	for (p = strchr(name, ':'); p; p = strchr(p + 1, ':')) {
		if (p[1] == ':') {
			p++;
			continue;
		}
		return 1;
	}
	return 0;
}

static int new_counter(struct stat *st, const char *name, const struct pmuctx_event_info *info,
		       int leader, char *err, size_t err_len)
{
	struct stat_counter *c;

	if (st->n_counters == STAT_MAX_COUNTERS) {
		snprintf(err, err_len, "too many counters (at most %d)", STAT_MAX_COUNTERS);
		return -1;
	}
	c = &st->c[st->n_counters];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->info = *info;
	c->group_leader = leader;
	/* "EVENT:u", "pmu/.../k": the user chose the privilege levels */
	c->explicit_mods = typed_modifiers(name);
	return st->n_counters++;
}

static int new_item(struct stat *st, enum stat_item_kind kind, const char *name,
		    char *err, size_t err_len)
{
	struct stat_item *it;

	if (st->n_items == STAT_MAX_ITEMS) {
		snprintf(err, err_len, "too many events (at most %d)", STAT_MAX_ITEMS);
		return -1;
	}
	it = &st->it[st->n_items];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	snprintf(it->name, sizeof(it->name), "%s", name);
	return st->n_items++;
}

/* A native counter for @str, shared with an equal one already there. */
static int native_counter(struct stat *st, const char *str, int leader, int shared,
			  char *err, size_t err_len)
{
	struct pmuctx_event_info info;
	char why[512];
	int i;

	if (pmuctx_event_encode(st->evdb, str, &info, why, sizeof(why))) {
		snprintf(err, err_len, "event '%s': %s", str, why);
		return -1;
	}
	if (shared) {
		i = find_counter(st, info.fstr);
		if (i >= 0)
			return i;
	}
	return new_counter(st, str, &info, leader, err, err_len);
}

static int add_derived(struct stat *st, const char *name, int didx, char *err, size_t err_len)
{
	int natives[64], n, i, item;

	n = pmuctx_derived_natives(st->evdb, didx, natives, 64);
	if (n < 0 || n > 64) {
		snprintf(err, err_len, "derived event %s needs too many events", name);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct pmuctx_event_info *info = pmuctx_evdb_native(st->evdb, natives[i]);

		if (find_counter(st, info->fstr) >= 0)
			continue;
		if (new_counter(st, info->fstr, info, -1, err, err_len) < 0)
			return -1;
		/* a base event counting the kernel may fall back like a typed one */
		st->c[st->n_counters - 1].explicit_mods = 0;
	}
	item = new_item(st, ITEM_DERIVED, name, err, err_len);
	if (item < 0)
		return -1;
	st->it[item].derived = didx;
	return 0;
}

static int is_range(const struct stat_counter *c)
{
	return c->info.enc.type == PMUCTX_TYPE_RANGE;
}

/*
 * A range counter (--data-range, -e range:...), shown as @name.  Its
 * info says what it is for the lines that print every counter: type,
 * config, and the event string that asks for it again.
 */
int stat_add_range(struct stat *st, const struct range_request *rq, const char *name,
		   char *err, size_t err_len)
{
	struct pmuctx_event_info info;
	int idx;

	memset(&info, 0, sizeof(info));
	range_event_string(rq, info.fstr, sizeof(info.fstr));
	if (rq->start >= rq->end) {
		snprintf(err, err_len, "%s: empty or inverted range", info.fstr);
		return -1;
	}
	info.enc.type = PMUCTX_TYPE_RANGE;
	info.enc.config = range_config(rq);
	info.pmu = "range";
	info.name = range_kind_name(rq->kind);
	info.desc = "";
	info.event_index = -1;
	idx = new_counter(st, name, &info, -1, err, err_len);
	if (idx < 0)
		return -1;
	st->c[idx].range = *rq;
	/* the range is the request itself: no privilege level to fall back from */
	st->c[idx].explicit_mods = 1;
	if (new_item(st, ITEM_COUNTER, name, err, err_len) < 0)
		return -1;
	st->it[st->n_items - 1].counter = idx;
	return 0;
}

/*
 * Ask the module for each range's plan before anything runs: a range it
 * cannot cover is known before the command starts, and the plan can head
 * the output (-I prints its header first).  -1 when one is refused.
 */
int stat_plan_ranges(struct stat *st)
{
	int i;

	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];
		char why[512];

		if (!is_range(c) || c->have_plan)
			continue;
		if (pmuctx_range_plan_query(c->info.enc.config, c->range.start, c->range.end,
					    &c->plan)) {
			range_explain(errno, &c->range, why, sizeof(why));
			fprintf(stderr, "pmuctx: %s (%s): %s\n", c->name, c->info.fstr, why);
			return -1;
		}
		c->have_plan = 1;
	}
	return 0;
}

/* One -e entry: a group, a derived event or a native event. */
static int add_event(struct stat *st, char *spec, char *err, size_t err_len)
{
	int didx, i, n, leader = -1, idx;
	char *members[32], *mods = NULL;
	struct range_request rq;

	if (*spec == '{') {
		char *close = strrchr(spec, '}');

		if (!close) {
			snprintf(err, err_len, "unterminated group '%s'", spec);
			return -1;
		}
		*close = 0;
		if (close[1] == ':')
			mods = close + 2;	/* {a,b}:u applies to every member */
		else if (close[1]) {
			snprintf(err, err_len, "text after group: '%s'", close + 1);
			return -1;
		}
		n = stat_split_list(spec + 1, members, 32, err, err_len);
		if (n < 0)
			return -1;
		/* a group shares the PMU's turns; a range counter is not on the PMU */
		for (i = 0; i < n; i++)
			if (!strncmp(members[i], RANGE_EVENT_PREFIX, strlen(RANGE_EVENT_PREFIX)))
				break;
		if (i < n) {
			snprintf(err, err_len, "%s: a range counter cannot be a group member", members[i]);
			for (i = 0; i < n; i++)
				free(members[i]);
			return -1;
		}
		for (i = 0; i < n; i++) {
			char full[STAT_NAME_MAX];

			snprintf(full, sizeof(full), "%s%s%s", members[i], mods ? ":" : "",
				 mods ? mods : "");
			free(members[i]);
			idx = native_counter(st, full, leader, 0, err, err_len);
			if (idx < 0)
				return -1;
			if (leader < 0)
				st->c[idx].group_leader = leader = idx;
			if (new_item(st, ITEM_COUNTER, full, err, err_len) < 0)
				return -1;
			st->it[st->n_items - 1].counter = idx;
		}
		return 0;
	}
	switch (range_parse_event(spec, &rq, err, err_len)) {
	case 1:
		return stat_add_range(st, &rq, spec, err, err_len);
	case -1:
		return -1;
	}
	didx = pmuctx_evdb_find_derived(st->evdb, spec);
	if (didx >= 0)
		return add_derived(st, spec, didx, err, err_len);
	idx = native_counter(st, spec, -1, 0, err, err_len);
	if (idx < 0)
		return -1;
	if (new_item(st, ITEM_COUNTER, spec, err, err_len) < 0)
		return -1;
	st->it[st->n_items - 1].counter = idx;
	return 0;
}

int stat_parse_events(struct stat *st, const char *list, char *err, size_t err_len)
{
	char *specs[STAT_MAX_ITEMS];
	int n, i, ret = 0;

	n = stat_split_list(list, specs, STAT_MAX_ITEMS, err, err_len);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = add_event(st, specs[i], err, err_len);
		free(specs[i]);
	}
	return ret;
}

/* ---------- metrics ---------- */

struct metric_walk {
	struct stat *st;
	char *err;
	size_t err_len;
};

/* Count what a metric needs: its events (constants need no counter). */
static int metric_need(void *ctx, const char *name)
{
	struct metric_walk *mw = ctx;
	struct pmuctx_event_info info;
	char why[256];

	/* an event the CPU lacks makes the metric <not supported>, later */
	if (pmuctx_metric_leaf(mw->st->evdb, name, &info, why, sizeof(why)) != PMUCTX_LEAF_EVENT)
		return 0;
	native_counter(mw->st, info.fstr, -1, 1, mw->err, mw->err_len);
	return 0;
}

static int add_metric(struct stat *st, const char *name, char *err, size_t err_len)
{
	struct metric_walk mw = { st, err, err_len };
	struct pmuctx_metric_desc md;
	int idx = pmuctx_evdb_find_metric(st->evdb, name), item;

	if (idx < 0) {
		char near[128];

		if (pmuctx_evdb_suggest(st->evdb, name, near, sizeof(near)))
			snprintf(err, err_len, "unknown metric '%s'; did you mean '%s'?", name, near);
		else
			snprintf(err, err_len, "unknown metric '%s' (pmuctx list shows the metrics of table %s)",
				 name, pmuctx_evdb_table(st->evdb) ? pmuctx_evdb_table(st->evdb) : "(none)");
		return -1;
	}
	pmuctx_evdb_metric(st->evdb, idx, &md);
	if (pmuctx_metric_names(st->evdb, md.name, metric_need, &mw)) {
		snprintf(err, err_len, "metric %s: cannot parse '%s'", md.name, md.expr);
		return -1;
	}
	item = new_item(st, ITEM_METRIC, md.name, err, err_len);
	if (item < 0)
		return -1;
	snprintf(st->it[item].unit, sizeof(st->it[item].unit), "%s", md.scale_unit);
	return 0;
}

static int in_group_list(const char *groups, const char *group)
{
	size_t n = strlen(group);

	while (*groups) {
		size_t len = strcspn(groups, ";");

		if (len == n && !strncasecmp(groups, group, n))
			return 1;
		groups += len;
		if (*groups)
			groups++;
	}
	return 0;
}

/* -M NAME[,NAME] (metrics) or --metric-group GROUP[,GROUP]. */
int stat_add_metrics(struct stat *st, const char *list, int by_group, char *err, size_t err_len)
{
	char *names[STAT_MAX_ITEMS];
	int n, i, j, ret = 0;

	n = stat_split_list(list, names, STAT_MAX_ITEMS, err, err_len);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (ret)
			goto next;
		if (!by_group) {
			ret = add_metric(st, names[i], err, err_len);
			goto next;
		}
		for (j = 0, ret = 1; j < pmuctx_evdb_n_metrics(st->evdb); j++) {
			struct pmuctx_metric_desc md;

			pmuctx_evdb_metric(st->evdb, j, &md);
			if (!in_group_list(md.groups, names[i]))
				continue;
			ret = add_metric(st, md.name, err, err_len);
			if (ret)
				break;
		}
		if (ret > 0)
			snprintf(err, err_len, "no metric in group '%s'", names[i]);
next:
		free(names[i]);
	}
	return ret ? -1 : 0;
}

/* ---------- opening and reading ---------- */

static int open_one(struct stat_counter *c, int leader_fd, pid_t target, uint64_t flags)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = c->info.enc.type,
		.config = c->info.enc.config,
		.read_format = c->read_format,
		.flags = flags,
		.range_start = is_range(c) ? c->range.start : 0,
		.range_end = is_range(c) ? c->range.end : 0,
	};

	if (c->info.enc.exclude_user)
		attr.flags |= PMUCTX_ATTR_EXCLUDE_USER;
	if (c->info.enc.exclude_kernel || c->user_only)
		attr.flags |= PMUCTX_ATTR_EXCLUDE_KERNEL;
	return pmuctx_counter_open(&attr, target, leader_fd, PMUCTX_OPEN_CLOEXEC);
}

static enum stat_status status_of(int err)
{
	switch (err) {
	case ENOSPC:	/* it exists, there was no room for it */
	case EMFILE:
		return STAT_NOT_COUNTED;
	default:
		return STAT_NOT_SUPPORTED;
	}
}

/* Why, on stderr, once per event however many runs (-r) refuse it. */
static void note_failure(struct stat_counter *c, int err)
{
	if (c->noted++)
		return;
	fprintf(stderr, "pmuctx: %s (%s): %s\n", c->name, c->info.fstr, pmuctx_open_strerror(err));
}

/*
 * The slice statistics make the error estimate; a module from before
 * multiplexing refuses the format with EINVAL: count without them (and
 * print no error), once for all.  Only the first target tries: every
 * target of a counter is read in one format.
 */
static int open_target(struct stat *st, struct stat_counter *c, int leader_fd, pid_t target,
		       uint64_t flags, int first)
{
	int fd = open_one(c, leader_fd, target, flags);

	if (fd < 0 && errno == EINVAL && first && (c->read_format & PMUCTX_FORMAT_SLICES)) {
		c->read_format &= ~PMUCTX_FORMAT_SLICES;
		fd = open_one(c, leader_fd, target, flags);
		if (fd >= 0)
			st->no_slices = 1;
		else
			c->read_format |= PMUCTX_FORMAT_SLICES;
	}
	return fd;
}

/*
 * Open every counter on every target.  -1 only when nothing can work at
 * all (no device); a refused event is marked and skipped.
 */
int stat_open_counters(struct stat *st, pid_t *targets, int n_targets, int enable_on_exec)
{
	uint64_t flags = 0;
	int i, t;

	if (st->o.inherit)
		flags |= PMUCTX_ATTR_INHERIT;
	if (st->o.inherit && st->o.per_task)
		flags |= PMUCTX_ATTR_INHERIT_STAT;	/* entries stay with their tasks */
	if (enable_on_exec)
		flags |= PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_ENABLE_ON_EXEC;
	if (pmuctx_device() < 0) {
		fprintf(stderr, "pmuctx: %s\n", pmuctx_open_strerror(errno));
		return -1;
	}
	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];
		struct stat_counter *leader = c->group_leader >= 0 && c->group_leader != i ?
					      &st->c[c->group_leader] : NULL;

		c->open_errno = 0;
		c->status = STAT_COUNTED;
		c->read_format = PMUCTX_FORMAT_TOTAL_TIME_ENABLED | PMUCTX_FORMAT_TOTAL_TIME_RUNNING;
		if (!st->no_slices)
			c->read_format |= PMUCTX_FORMAT_SLICES;
		for (t = 0; t < n_targets; t++)
			c->fd[t] = -1;
		if (leader && leader->open_errno) {
			c->open_errno = leader->open_errno;
			c->status = STAT_NOT_COUNTED;
			if (!c->noted++)
				fprintf(stderr, "pmuctx: %s: not counted: its group leader %s could not be opened\n",
					c->name, leader->name);
			continue;
		}
		for (t = 0; t < n_targets; t++) {
			c->fd[t] = open_target(st, c, leader ? leader->fd[t] : -1, targets[t], flags, !t);
			if (c->fd[t] < 0 && errno == EPERM && !c->explicit_mods &&
			    c->info.enc.type != PMUCTX_TYPE_SOFTWARE && !c->user_only) {
				/* as perf: without the right to count the kernel, count the user */
				c->user_only = 1;
				strncat(c->name, ":u", sizeof(c->name) - strlen(c->name) - 1);
				if (!st->noted_user_only++)
					fprintf(stderr, "pmuctx: note: counting user mode only: kernel mode needs CAP_PERFMON (or allow_kernel=1)\n");
				c->fd[t] = open_target(st, c, leader ? leader->fd[t] : -1, targets[t],
						       flags, !t);
			}
			if (c->fd[t] < 0 && is_range(c)) {
				/*
				 * A range is about this program: counting on
				 * without it would answer nothing that was asked.
				 */
				char why[512];

				range_explain(errno, &c->range, why, sizeof(why));
				fprintf(stderr, "pmuctx: %s (%s): %s\n", c->name, c->info.fstr, why);
				return -1;
			}
			if (c->fd[t] < 0) {
				c->open_errno = errno;
				c->status = status_of(errno);
				note_failure(c, errno);
				while (t-- > 0) {
					close(c->fd[t]);
					c->fd[t] = -1;
				}
				break;
			}
		}
		/* the counter's own plan: the one its registers hold */
		if (is_range(c) && !c->open_errno && !pmuctx_counter_range(c->fd[0], &c->plan))
			c->have_plan = 1;
	}
	st->error_column = 0;
	for (i = 0; i < st->n_counters; i++)
		if (!st->c[i].open_errno && (st->c[i].read_format & PMUCTX_FORMAT_SLICES))
			st->error_column = 1;
	return 0;
}

void stat_close_counters(struct stat *st, int n_targets)
{
	int i, t;

	for (i = 0; i < st->n_counters; i++)
		for (t = 0; t < n_targets; t++)
			if (st->c[i].fd[t] >= 0) {
				close(st->c[i].fd[t]);
				st->c[i].fd[t] = -1;
			}
}

/* The slice statistics are sums, 128-bit ones two words wide: low first. */
static void add128(__u64 a[2], const __u64 b[2])
{
	__u64 lo = a[0] + b[0];

	a[1] += b[1] + (lo < a[0]);
	a[0] = lo;
}

static void sub128(__u64 a[2], const __u64 b[2])
{
	a[1] -= b[1] + (a[0] < b[0]);
	a[0] -= b[0];
}

static void slices_add(struct pmuctx_slice_stats *a, const struct pmuctx_slice_stats *b)
{
	a->slices += b->slices;
	add128(a->sum_count_sq, b->sum_count_sq);
	add128(a->sum_count_time, b->sum_count_time);
	add128(a->sum_time_sq, b->sum_time_sq);
}

static void slices_sub(struct pmuctx_slice_stats *a, const struct pmuctx_slice_stats *b)
{
	a->slices -= b->slices;
	sub128(a->sum_count_sq, b->sum_count_sq);
	sub128(a->sum_count_time, b->sum_count_time);
	sub128(a->sum_time_sq, b->sum_time_sq);
}

/*
 * Sum over targets: the slices of several tasks pool like those of one
 * family, so the estimate of the sum works on the summed statistics.
 */
void stat_read_counters(struct stat *st, int n_targets)
{
	int i, t;

	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];

		c->prev_value = c->value;
		c->prev_enabled = c->enabled;
		c->prev_running = c->running;
		c->prev_slices = c->slices;
		if (c->open_errno)
			continue;
		c->value = c->enabled = c->running = 0;
		memset(&c->slices, 0, sizeof(c->slices));
		for (t = 0; t < n_targets; t++) {
			struct pmuctx_value v;

			if (pmuctx_counter_read(c->fd[t], c->read_format, &v)) {
				fprintf(stderr, "pmuctx: read %s: %s\n", c->name, strerror(errno));
				continue;
			}
			c->value += v.value;
			c->enabled += v.time_enabled;
			c->running += v.time_running;
			slices_add(&c->slices, &v.slices);
		}
	}
}

/* What the counter read in this run, or in this interval (the difference of two reads). */
static void counter_sample(const struct stat_counter *c, int interval, struct pmuctx_value *v)
{
	memset(v, 0, sizeof(*v));
	v->value = c->value;
	v->time_enabled = c->enabled;
	v->time_running = c->running;
	v->slices = c->slices;
	if (interval) {
		v->value -= c->prev_value;
		v->time_enabled -= c->prev_enabled;
		v->time_running -= c->prev_running;
		slices_sub(&v->slices, &c->prev_slices);
	}
}

/* ---------- values ---------- */

/* The counter's value for this run or interval, scaled if it ran part-time. */
static double counter_value(const struct stat_counter *c, int interval)
{
	struct pmuctx_value v;

	counter_sample(c, interval, &v);
	if (v.time_running && v.time_running < v.time_enabled)
		return (double)v.value * v.time_enabled / v.time_running;
	return v.value;
}

struct eval_ctx {
	struct stat *st;
	int interval;
	enum stat_status missing;	/* why a needed event has no value */
};

/* The TSC rate: CPUID leaf 0x15 (crystal clock and ratio), else the model name's "@ N GHz". */
static double tsc_hz(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	FILE *f;
	char line[256];
	double ghz = 0;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	if (a >= 0x15) {
		__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x15), "c"(0));
		if (a && b && c)
			return (double)c * b / a;
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f) && !ghz) {
		char *at = strrchr(line, '@');

		if (!strncmp(line, "model name", 10) && at)
			ghz = strtod(at + 1, NULL);
	}
	if (f)
		fclose(f);
	return ghz * 1e9;
#else
	return 0;
#endif
}

/*
 * perf's constants.  A task's counters see one hardware thread: #smt_on
 * reads 0 (the safe reading) and #core_wide 0 (perf's value when not
 * counting system-wide); the topology counts are 1 (a task's metrics are
 * per thread); #SYSTEM_TSC_FREQ is the TSC's rate (msr@tsc@ of a task is
 * its task-clock at that rate).
 */
static int metric_constant(struct stat *st, const char *name, double *value, char *err,
			   size_t err_len)
{
	if (!strcasecmp(name, "duration_time")) {
		*value = st->elapsed;
	} else if (!strcasecmp(name, "#smt_on") || !strcasecmp(name, "#core_wide")) {
		*value = 0;
	} else if (!strcasecmp(name, "#SYSTEM_TSC_FREQ")) {
		*value = tsc_hz();
		if (*value <= 0) {
			snprintf(err, err_len, "needs the TSC frequency, which this CPU does not tell");
			return -PMUCTX_EV_EUNKNOWN_NAME;
		}
	} else {
		*value = 1;
	}
	return 0;
}

static int metric_lookup(void *ctx, const char *name, double *value, char *err, size_t err_len)
{
	struct eval_ctx *ec = ctx;
	struct pmuctx_event_info info;
	char why[256];
	int i, ret;

	ret = pmuctx_metric_leaf(ec->st->evdb, name, &info, why, sizeof(why));
	if (ret < 0) {
		snprintf(err, err_len, "%s", why);
		return -PMUCTX_EV_EUNKNOWN_NAME;
	}
	if (ret == PMUCTX_LEAF_CONSTANT)
		return metric_constant(ec->st, name, value, err, err_len);
	i = find_counter(ec->st, info.fstr);
	if (i < 0 || ec->st->c[i].status != STAT_COUNTED) {
		ec->missing = i < 0 ? STAT_NOT_SUPPORTED : ec->st->c[i].status;
		snprintf(err, err_len, "needs %s: %s", name, ec->missing == STAT_NOT_SUPPORTED ?
			 "not supported" : "not counted");
		return -PMUCTX_EV_EUNKNOWN_NAME;
	}
	*value = counter_value(&ec->st->c[i], ec->interval);
	return 0;
}

/* PAPI's *_PS types scale by the CPU's highest clock (cpufreq, in kHz). */
static double cpu_max_mhz(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
	double khz = 0;

	if (f) {
		if (fscanf(f, "%lf", &khz) != 1)
			khz = 0;
		fclose(f);
	}
	return khz / 1000;
}

static void compute_derived(struct stat *st, struct stat_item *it, int interval)
{
	int n = pmuctx_evdb_n_natives(st->evdb), i;
	double *vals = calloc(n ? n : 1, sizeof(double));
	int natives[64], nn;

	it->status = STAT_COUNTED;
	if (!vals) {
		it->status = STAT_NOT_COUNTED;
		return;
	}
	nn = pmuctx_derived_natives(st->evdb, it->derived, natives, 64);
	for (i = 0; i < nn && i < 64; i++) {
		int c = find_counter(st, pmuctx_evdb_native(st->evdb, natives[i])->fstr);

		if (c < 0 || st->c[c].status != STAT_COUNTED) {
			it->status = c >= 0 ? st->c[c].status : STAT_NOT_SUPPORTED;
			snprintf(it->why, sizeof(it->why), "needs %s", c >= 0 ? st->c[c].name : "?");
			free(vals);
			return;
		}
		vals[natives[i]] = counter_value(&st->c[c], interval);
	}
	if (pmuctx_derived_eval(st->evdb, it->derived, vals, cpu_max_mhz(), &it->value,
				it->why, sizeof(it->why)))
		it->status = STAT_NOT_COUNTED;
	free(vals);
}

void stat_compute_items(struct stat *st, int interval)
{
	struct eval_ctx ec = { st, interval, STAT_NOT_SUPPORTED };
	struct pmuctx_value v;
	int i;

	/*
	 * A counter that did not run (in this interval: multiplexed, it may
	 * have waited its turn all of it) is <not counted>, and so is what
	 * needs it.
	 */
	for (i = 0; i < st->n_counters; i++) {
		struct stat_counter *c = &st->c[i];

		if (c->open_errno)
			continue;
		counter_sample(c, interval, &v);
		c->status = v.time_enabled && !v.time_running ? STAT_NOT_COUNTED : STAT_COUNTED;
	}
	for (i = 0; i < st->n_items; i++) {
		struct stat_item *it = &st->it[i];

		it->why[0] = 0;
		switch (it->kind) {
		case ITEM_COUNTER:
			/* the counter's name: ":u" appended when it fell back to user mode */
			snprintf(it->name, sizeof(it->name), "%s", st->c[it->counter].name);
			it->status = st->c[it->counter].status;
			it->value = counter_value(&st->c[it->counter], interval);
			counter_sample(&st->c[it->counter], interval, &v);
			it->enabled = v.time_enabled;
			it->running = v.time_running;
			pmuctx_estimate(&v, &it->est);
			break;
		case ITEM_DERIVED:
			compute_derived(st, it, interval);
			break;
		case ITEM_METRIC:
			it->status = STAT_COUNTED;
			ec.missing = STAT_NOT_SUPPORTED;
			if (pmuctx_metric_eval(st->evdb, it->name, metric_lookup, &ec, &it->value,
					       it->why, sizeof(it->why)))
				it->status = ec.missing;
			break;
		}
	}
}

/* Fold this run into the -r statistics. */
void stat_accumulate(struct stat *st)
{
	int i;

	for (i = 0; i < st->n_items; i++) {
		struct stat_item *it = &st->it[i];

		if (it->status != STAT_COUNTED)
			continue;
		it->runs++;
		it->sum += it->value;
		it->sum_sq += it->value * it->value;
		if (it->kind != ITEM_COUNTER)
			continue;
		/*
		 * the runs are independent: the half-width of their mean is
		 * sqrt(Σ half²) / runs, each run's with its own Student t
		 */
		it->sum_enabled += it->enabled;
		it->sum_running += it->running;
		if (it->est.state == PMUCTX_EST_ESTIMATED)
			it->sum_ci_sq += it->est.ci95 * it->est.ci95;
		else if (it->est.state == PMUCTX_EST_UNKNOWN)
			it->unknown_runs++;
	}
	st->runs++;
	st->sum_elapsed += st->elapsed;
	st->sum_sq_elapsed += st->elapsed * st->elapsed;
	st->sum_user += st->user_s;
	st->sum_sys += st->sys_s;
}
