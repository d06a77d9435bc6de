/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the hardware-counter selftests (hw_test.c, mux_test.c) share: the
 * events the emulated PMUs implement (arm64 PMUv3 in QEMU, Intel
 * architectural perfmon in our x86 QEMU), a loop of a known instruction
 * count, and when counts can be exact.
 */
#ifndef PMUCTX_PMU_TEST_H
#define PMUCTX_PMU_TEST_H

#include <stdbool.h>
#include <sys/mman.h>
#include "pmuctx_test.h"

#if defined(__x86_64__)
/* PERFEVTSEL encodings, event | umask << 8 (fixed counters 0 and 1). */
#define INST_RETIRED	0x00c0
#define CPU_CYCLES	0x003c
/* Architectural, but CPUID 0AH:EBX says unavailable on the emulation. */
#define UNAVAILABLE_EVENT 0x412e	/* LLC misses */
/* PMUCTX_INFO hw_events[0]: CPUID 0AH:EBX's architectural events, bit 1 */
#define INST_RETIRED_INFO_BIT	1
#else
#define INST_RETIRED	0x08
#define CPU_CYCLES	0x11
#define UNAVAILABLE_EVENT 0x1234	/* not in PMCEID */
#define INST_RETIRED_INFO_BIT	INST_RETIRED	/* PMCEID0 */
#endif

#if defined(__aarch64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void run_loop(unsigned long n)
{
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n" : "+r"(n) : : "cc");
}
#elif defined(__x86_64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void run_loop(unsigned long n)
{
	asm volatile("1:	dec	%0\n"
		     "	jnz	1b\n" : "+r"(n) : : "cc");
}
#else
static __attribute__((unused)) void run_loop(unsigned long n)
{
	(void)n;
}
#endif

/* Raw @event on @target (0: the caller), reading its value with both times. */
static inline int pmu_open_timed_on(int target, uint64_t event, uint64_t flags)
{
	struct pmuctx_attr a = {
		.size = sizeof(a),
		.type = PMUCTX_TYPE_RAW,
		.config = event,
		.flags = flags,
		.read_format = PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
			       PMUCTX_FORMAT_TOTAL_TIME_RUNNING,
	};

	return pmuctx_open_attr(&a, target, -1, PMUCTX_OPEN_CLOEXEC);
}

static inline int pmu_open_timed(uint64_t event, uint64_t flags)
{
	return pmu_open_timed_on(0, event, flags);
}

/*
 * Whether the PMU implements INST_RETIRED: QEMU's arm64 PMU counts
 * instructions only under -icount, so the -smp 2 lanes' perf refuses it
 * (ENOENT) on the backends that go through perf.
 */
static inline bool have_inst_retired(void)
{
	struct pmuctx_info info = { .size = sizeof(info) };

	return !ioctl(pmuctx_dev(), PMUCTX_INFO, &info) &&
	       (info.hw_events[0] & (1ULL << INST_RETIRED_INFO_BIT));
}

/*
 * An event that counts as the loop runs, for tests that need a count but
 * not an exact one: INST_RETIRED, or CPU_CYCLES where it is missing.
 */
static inline uint64_t pmu_instructions_event(void)
{
	return have_inst_retired() ? INST_RETIRED : CPU_CYCLES;
}

/*
 * An event other than CPU_CYCLES, for tests that need distinct
 * configurations: INST_RETIRED, or where it is missing arm64's SW_INCR
 * (0x00: QEMU always implements it, and nothing here writes it).
 */
static inline uint64_t pmu_event_beside_cycles(void)
{
	return have_inst_retired() ? INST_RETIRED : 0x00;
}

/*
 * Configuration @i (mod 6) of a few distinct ones: two events, each
 * counting user mode, kernel mode or both (the last four need
 * CAP_PERFMON), as pmu_open_timed().
 */
static inline int pmu_open_config(int i)
{
	static const uint64_t modes[] = {
		PMUCTX_ATTR_EXCLUDE_KERNEL, PMUCTX_ATTR_EXCLUDE_USER, 0,
	};

	return pmu_open_timed(i & 1 ? CPU_CYCLES : pmu_event_beside_cycles(),
			      modes[(i / 2) % 3]);
}

/* A read with PMUCTX_FORMAT_TOTAL_TIME_ENABLED | _RUNNING. */
struct pmu_times {
	uint64_t value, enabled, running;
};

/* @fd's value and times; value UINT64_MAX when the read fails. */
static inline struct pmu_times pmu_read_times(int fd)
{
	struct pmu_times t = { UINT64_MAX, 0, 0 };

	if (read(fd, &t, sizeof(t)) != sizeof(t))
		t.value = UINT64_MAX;
	return t;
}

static inline uint64_t pmu_features(void)
{
	struct pmuctx_info info = { .size = sizeof(info) };

	return ioctl(pmuctx_dev(), PMUCTX_INFO, &info) ? 0 : info.features;
}

static inline bool have_pmu(void)
{
	return pmu_features() & PMUCTX_FEAT_HARDWARE;
}

/*
 * Hardware counters through the kernel's perf events (the fallback when
 * the kernel's driver owns the PMU, or the shared backend): no
 * self-reads; overflow samples where the PMU interrupts (have_overflow()).
 */
static inline bool perf_backed(void)
{
	return pmu_features() & PMUCTX_FEAT_PERF_EVENTS;
}

/*
 * The shared backend (backend=shared): perf's per-CPU events under the
 * contexts.  perf_backed() too, but contexts swap.
 */
static inline bool perf_shared(void)
{
	return pmu_features() & PMUCTX_FEAT_PERF_SHARED;
}

/* The shared backend's PMU's multiplexing interval (its name from PMUCTX_INFO). */
static inline const char *perf_mux_interval_path(void)
{
	static char path[160];
	struct pmuctx_info info = { .size = sizeof(info) };
	const char *pmu;

	if (!path[0] && !ioctl(pmuctx_dev(), PMUCTX_INFO, &info) &&
	    (pmu = strchr(info.backend, ':')))
		snprintf(path, sizeof(path),
			 "/sys/bus/event_source/devices/%s/perf_event_mux_interval_ms",
			 pmu + 1);
	return path;
}

/* perf's events bound to the counted tasks: no swaps. */
static inline bool perf_task_bound(void)
{
	return perf_backed() && !perf_shared();
}

static inline bool have_overflow(void)
{
	return have_pmu() && (pmu_features() & PMUCTX_FEAT_OVERFLOW);
}

/* Exact counts need -icount and one vCPU: icount is global to all vCPUs. */
static inline bool exact(void)
{
	return have_pmu() && getenv("PMUCTX_VM_ICOUNT") && nr_cpus() == 1;
}

/*
 * Self-reads: the counted task reads its own counter from EL0 (arm64) or
 * with RDPMC at CPL 3 (x86), where the backend says it may.
 */
static inline bool have_self_read(void)
{
#if defined(__aarch64__) || defined(__x86_64__)
	return have_pmu() && (pmu_features() & PMUCTX_FEAT_SELF_READ);
#else
	return false;
#endif
}

static inline const struct pmuctx_mmap_page *map_counter(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

#if defined(__aarch64__)
#define RD(n) case n: asm volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); break
static inline uint64_t raw_counter(unsigned int n)
{
	uint64_t v = 0;

	switch (n) {
	RD(0); RD(1); RD(2); RD(3); RD(4); RD(5);
	case 31:
		asm volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#elif defined(__x86_64__)
/* @n is RDPMC's ECX: fixed counter k is 1 << 30 | k. */
static inline uint64_t raw_counter(unsigned int n)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(n) : "memory");
	return (uint64_t)hi << 32 | lo;
}
#else
static inline uint64_t raw_counter(unsigned int n)
{
	(void)n;
	return 0;
}
#endif

/* The documented protocol of struct pmuctx_mmap_page. */
static inline int self_read(const struct pmuctx_mmap_page *page,
			    uint64_t *value)
{
	const volatile struct pmuctx_mmap_page *p = page;
	uint32_t seq, idx;
	uint64_t raw, mask;

	do {
		seq = p->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		idx = p->index;
		mask = p->width == 64 ? UINT64_MAX : (1ULL << p->width) - 1;
		raw = idx ? raw_counter(idx - 1) : 0;
		*value = p->offset + ((raw - p->prev) & mask);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || p->lock != seq);
	return idx ? 0 : -1;
}

#endif
