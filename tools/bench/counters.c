// SPDX-License-Identifier: GPL-2.0
/*
 * The same counters through pmuctx and through perf_event_open: software
 * events (task-clock, context-switches, page-faults, ...) and generic PMU
 * events (cycles, then instructions on every further counter).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pmuctx_abi.h"
#include "bench.h"

/* Software events, in the order a set takes them (then around again). */
static const uint64_t pmuctx_sw[] = {
	PMUCTX_SW_TASK_CLOCK, PMUCTX_SW_CONTEXT_SWITCHES, PMUCTX_SW_PAGE_FAULTS,
	PMUCTX_SW_CPU_MIGRATIONS, PMUCTX_SW_PAGE_FAULTS_MIN, PMUCTX_SW_PAGE_FAULTS_MAJ,
};
static const uint64_t perf_sw[] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
};
#define NR_SW (sizeof(pmuctx_sw) / sizeof(pmuctx_sw[0]))

static int perf_open(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	return syscall(SYS_perf_event_open, a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Counter @i of a set: PMU (cycles first, then instructions) or software. */
static int open_nth(enum api api, int pmu, int i, int inherit, int user_page)
{
	if (api == API_PMUCTX) {
		struct pmuctx_attr a = { .size = sizeof(a) };

		if (pmu) {
			a.type = PMUCTX_TYPE_HARDWARE;
			a.config = i ? PMUCTX_HW_INSTRUCTIONS : PMUCTX_HW_CPU_CYCLES;
			a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
		} else {
			a.type = PMUCTX_TYPE_SOFTWARE;
			a.config = pmuctx_sw[i % NR_SW];
		}
		if (inherit)
			a.flags |= PMUCTX_ATTR_INHERIT;
		if (inherit == INHERIT_PER_TASK)
			a.flags |= PMUCTX_ATTR_INHERIT_STAT;
		return pmuctx_counter_open(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
	}
	if (api == API_PERF) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		if (pmu) {
			a.type = PERF_TYPE_HARDWARE;
			a.config = i ? PERF_COUNT_HW_INSTRUCTIONS : PERF_COUNT_HW_CPU_CYCLES;
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
#if defined(__aarch64__)
			/* arm64 perf: "rdpmc" is config1 bit 1 (user access). */
			if (user_page)
				a.config1 = 2;
#else
			(void)user_page;
#endif
		} else {
			a.type = PERF_TYPE_SOFTWARE;
			a.config = perf_sw[i % NR_SW];
		}
		a.inherit = !!inherit;
		a.inherit_stat = inherit == INHERIT_PER_TASK;
		return perf_open(&a);
	}
	errno = EINVAL;
	return -1;
}

int open_set(enum api api, const struct cset *s, int inherit)
{
	int i, fd, first = -1;

	if (api == API_NONE)
		return 0;
	for (i = 0; i < s->npmu + s->nsw; i++) {
		fd = i < s->npmu ? open_nth(api, 1, i, inherit, 0)
				 : open_nth(api, 0, i - s->npmu, inherit, 0);
		if (fd < 0)
			return -1;
		if (first < 0)
			first = fd;
	}
	return first < 0 ? 0 : first;
}

int open_extra(enum api api)
{
	if (api == API_NONE)
		return 0;
	return open_nth(api, 0, 3 /* cpu-migrations */, 0, 0) < 0 ? -1 : 0;
}

int open_one(enum api api, int pmu, int for_self_read)
{
	/* PMU: instructions (counter 1 of a set); software: task-clock. */
	return open_nth(api, pmu, pmu ? 1 : 0, 0, for_self_read);
}

int ctx_rotations(int fd, uint64_t *rotations)
{
	struct pmuctx_ctx_stats st;

	if (pmuctx_counter_stats(fd, &st))
		return -1;
	*rotations = st.rotations;
	return 0;
}

/* A PMU's own directory first (arm64: armv8_pmuv3*, or a core's name), then "cpu". */
static const char *const mux_interval_globs[] = {
	"/sys/bus/event_source/devices/armv8_pmuv3*/perf_event_mux_interval_ms",
	"/sys/bus/event_source/devices/armv8_*/perf_event_mux_interval_ms",
	"/sys/bus/event_source/devices/cpu/perf_event_mux_interval_ms",
};

int mux_interval_ms(enum api api, char *src, size_t len)
{
	struct pmuctx_info info = { .size = sizeof(info) };
	unsigned int i;
	int v = -1;
	glob_t g;
	FILE *f;

	if (api == API_PMUCTX) {
		snprintf(src, len, "PMUCTX_INFO mux_interval_ms");
		return pmuctx_get_info(&info) ? -1 : (int)info.mux_interval_ms;
	}
	for (i = 0; i < sizeof(mux_interval_globs) / sizeof(mux_interval_globs[0]); i++) {
		if (glob(mux_interval_globs[i], 0, NULL, &g))
			continue;
		f = g.gl_pathc ? fopen(g.gl_pathv[0], "r") : NULL;
		if (f) {
			if (fscanf(f, "%d", &v) != 1)
				v = -1;
			fclose(f);
			snprintf(src, len, "%s", g.gl_pathv[0]);
		}
		globfree(&g);
		if (v > 0)
			return v;
	}
	snprintf(src, len, "no perf_event_mux_interval_ms found");
	return -1;
}

int api_available(enum api api, int want_pmu)
{
	int fd;

	if (api == API_NONE)
		return !want_pmu;
	if (api == API_PMUCTX) {
		struct pmuctx_info info = { .size = sizeof(info) };

		if (pmuctx_get_info(&info))
			return 0;
		if (want_pmu && !(info.features & PMUCTX_FEAT_HARDWARE))
			return 0;
	}
	fd = open_nth(api, want_pmu, want_pmu, 0, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* ---------- self-reads ---------- */

#if defined(__aarch64__)
#define EVCNTR(n) \
	case n: asm volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); break

/* Hardware counter @n; 31 is the cycle counter (both ABIs' index - 1). */
static uint64_t read_pmc(unsigned int n)
{
	uint64_t v = 0;

	switch (n) {
	EVCNTR(0); EVCNTR(1); EVCNTR(2); EVCNTR(3); EVCNTR(4); EVCNTR(5);
	EVCNTR(6); EVCNTR(7); EVCNTR(8); EVCNTR(9); EVCNTR(10); EVCNTR(11);
	EVCNTR(12); EVCNTR(13); EVCNTR(14); EVCNTR(15); EVCNTR(16); EVCNTR(17);
	EVCNTR(18); EVCNTR(19); EVCNTR(20); EVCNTR(21); EVCNTR(22); EVCNTR(23);
	EVCNTR(24); EVCNTR(25); EVCNTR(26); EVCNTR(27); EVCNTR(28); EVCNTR(29);
	EVCNTR(30);
	case 31:
		asm volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#define HAVE_PMC 1
#elif defined(__x86_64__)
static uint64_t read_pmc(unsigned int n)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(n));
	return ((uint64_t)hi << 32) | lo;
}
#define HAVE_PMC 1
#endif

int self_read_setup(enum api api, int fd, const void **page)
{
	long psz = sysconf(_SC_PAGESIZE);
	void *p;

	if (api == API_PMUCTX) {
		*page = pmuctx_counter_map(fd);
		return *page ? 0 : -1;
	}
	p = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	*page = p;
	if (!((const struct perf_event_mmap_page *)p)->cap_user_rdpmc) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

/*
 * perf's user page, as its ABI comment describes: retry while the
 * sequence count moves; a zero index means "use read()".
 */
static int perf_self_read(const struct perf_event_mmap_page *pc, uint64_t *value)
{
#ifdef HAVE_PMC
	const volatile struct perf_event_mmap_page *p = pc;
	uint32_t seq, idx, width;
	int64_t off, raw;

	do {
		seq = p->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		idx = p->index;
		off = p->offset;
		width = p->pmc_width;
		raw = 0;
		if (p->cap_user_rdpmc && idx) {
			raw = read_pmc(idx - 1);
			raw = (int64_t)((uint64_t)raw << (64 - width)) >> (64 - width);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (p->lock != seq);
	if (!idx) {
		errno = EAGAIN;
		return -1;
	}
	*value = off + raw;
	return 0;
#else
	(void)pc;
	(void)value;
	errno = EOPNOTSUPP;
	return -1;
#endif
}

int self_read(enum api api, const void *page, uint64_t *value)
{
	if (api == API_PMUCTX)
		return pmuctx_self_read(page, value);
	return perf_self_read(page, value);
}
