// SPDX-License-Identifier: GPL-2.0
/*
 * libpmuctx-perf's attr mapping (tools/perf-shim/attr_map.c): what each
 * perf_event_attr becomes, on a forced Skylake-X for the events that
 * libpmuctx's database encodes, and what is refused with which errno.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "attr_map.h"
#include "pmuctx_events.h"
#include "tap.h"

static struct pmuctx_evdb *skx;

static struct pmuctx_evdb *skx_get(void)
{
	return skx;
}

static struct perf_event_attr attr(__u32 type, __u64 config)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = type;
	pa.config = config;
	return pa;
}

static struct perf_map map_task(const struct perf_event_attr *pa)
{
	struct perf_map m;

	perf_map_attr(pa, 0, -1, PERF_FLAG_FD_CLOEXEC, skx_get, &m);
	return m;
}

static int is_pmuctx(const struct perf_map *m, __u32 type, __u64 config)
{
	return m->route == PERF_MAP_PMUCTX && m->attr.type == type && m->attr.config == config;
}

static int is_refused(const struct perf_map *m, int err)
{
	return m->route == PERF_MAP_REFUSED && m->err == err;
}

/* What libpmuctx's own encoder gives for @name on the forced CPU. */
static int encodes_as(const struct perf_map *m, const char *name)
{
	struct pmuctx_event_info info;
	char err[256];

	if (pmuctx_event_encode(skx, name, &info, err, sizeof(err)))
		return 0;
	return is_pmuctx(m, info.enc.type, info.enc.config);
}

static void generic_hardware(void)
{
	struct perf_event_attr pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	struct perf_map m;

	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	pa.inherit = 1;
	pa.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_HARDWARE, PMUCTX_HW_INSTRUCTIONS),
	   "instructions: pmuctx's generic instructions");
	ok(m.attr.flags == (PMUCTX_ATTR_EXCLUDE_KERNEL | PMUCTX_ATTR_INHERIT),
	   "instructions:u, inherit: EXCLUDE_KERNEL|INHERIT (exclude_hv has no pmuctx bit), got %#llx",
	   (unsigned long long)m.attr.flags);
	ok(m.attr.read_format == pa.read_format && m.open_flags == PMUCTX_OPEN_CLOEXEC,
	   "read_format bits 0-3 and CLOEXEC pass through");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_HARDWARE, PMUCTX_HW_CPU_CYCLES), "cycles: pmuctx's generic cycles");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES);
	m = map_task(&pa);
	ok(encodes_as(&m, "branch-misses") && m.attr.config == 0xc5,
	   "branch-misses: the CPU's encoding from libpmuctx (0xc5 on Skylake-X), got %#llx",
	   (unsigned long long)m.attr.config);
	pa = attr(PERF_TYPE_HARDWARE, 1ULL << 32 | PERF_COUNT_HW_CPU_CYCLES);
	m = map_task(&pa);
	ok(is_refused(&m, ENOENT), "a hybrid PMU's cycles (extended type): ENOENT");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX);
	m = map_task(&pa);
	ok(is_refused(&m, ENOENT), "an unknown generic event: ENOENT");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES);
	perf_map_attr(&pa, 0, -1, 0, NULL, &m);
	ok(is_refused(&m, ENOENT), "no event database: ENOENT, never a guess");
}

static void cache_events(void)
{
	char name[64];
	struct perf_event_attr pa;
	struct perf_map m;

	ok(!perf_map_cache_name(PERF_COUNT_HW_CACHE_L1D | PERF_COUNT_HW_CACHE_OP_READ << 8 |
				PERF_COUNT_HW_CACHE_RESULT_MISS << 16, name, sizeof(name)) &&
	   !strcmp(name, "L1-dcache-load-misses"), "cache config 0x10000 is L1-dcache-load-misses (%s)", name);
	ok(perf_map_cache_name(PERF_COUNT_HW_CACHE_MAX, name, sizeof(name)) < 0 &&
	   perf_map_cache_name(1ULL << 24, name, sizeof(name)) < 0, "malformed cache configs have no name");
	pa = attr(PERF_TYPE_HW_CACHE, 0x10000);
	m = map_task(&pa);
	ok(encodes_as(&m, "L1-dcache-load-misses"), "L1-dcache-load-misses: libpmuctx's per-CPU map (%#llx)",
	   (unsigned long long)m.attr.config);
	pa = attr(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | PERF_COUNT_HW_CACHE_OP_READ << 8);
	m = map_task(&pa);
	ok(encodes_as(&m, "dTLB-load-refs"), "dTLB-loads: libpmuctx's per-CPU map (%#llx)",
	   (unsigned long long)m.attr.config);
	pa = attr(PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_LL);
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "LLC-loads on Skylake-X needs offcore response (config1): EOPNOTSUPP");
	pa = attr(PERF_TYPE_HW_CACHE, 0x7);
	m = map_task(&pa);
	ok(is_refused(&m, EINVAL), "a cache type perf does not define: EINVAL");
}

static void raw_events(void)
{
	struct perf_event_attr pa = attr(PERF_TYPE_RAW, 0x01c2);
	struct perf_map m = map_task(&pa);

	ok(is_pmuctx(&m, PMUCTX_TYPE_RAW, 0x01c2), "r01c2: raw event and unit mask");
	pa.config = 0x1001c2;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "raw bits beyond the unit mask (cmask, inv, edge): EOPNOTSUPP");
	pa.config = 0xb7;
	pa.config1 = 0x3fc0010001;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "a raw event with config1: EOPNOTSUPP");
}

static void software_events(void)
{
	struct perf_event_attr pa = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	struct perf_map m = map_task(&pa);

	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_TASK_CLOCK), "task-clock: pmuctx's task clock");
	pa.config = PERF_COUNT_SW_CPU_CLOCK;
	pa.exclude_kernel = 1;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_TASK_CLOCK) && !m.attr.flags,
	   "cpu-clock:u on a task: the task clock, every mode, as the kernel's clocks count");
	pa.config = PERF_COUNT_SW_PAGE_FAULTS;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "page-faults:u: EOPNOTSUPP (pmuctx counts faults in every mode)");
	pa.exclude_kernel = 0;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_PAGE_FAULTS), "page-faults");
	pa.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_CONTEXT_SWITCHES), "context-switches");
	pa.config = PERF_COUNT_SW_CPU_MIGRATIONS;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_CPU_MIGRATIONS), "cpu-migrations");
	pa.config = PERF_COUNT_SW_PAGE_FAULTS_MAJ;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_SOFTWARE, PMUCTX_SW_PAGE_FAULTS_MAJ), "major-faults");
	pa.config = PERF_COUNT_SW_ALIGNMENT_FAULTS;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_KERNEL, "alignment-faults: the kernel's");
	pa.config = PERF_COUNT_SW_DUMMY;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_KERNEL, "dummy: the kernel's");
}

static void targets_and_modes(void)
{
	struct perf_event_attr pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	struct perf_map m;

	perf_map_attr(&pa, -1, 0, 0, skx_get, &m);
	ok(is_refused(&m, EOPNOTSUPP), "a CPU-wide hardware event (pid -1, cpu 0): EOPNOTSUPP");
	perf_map_attr(&pa, 0, 1, 0, skx_get, &m);
	ok(is_refused(&m, EOPNOTSUPP), "counting a task on one CPU (pid 0, cpu 1: PAPI's CPU attach): EOPNOTSUPP");
	pa.sample_period = 100000;
	perf_map_attr(&pa, 0, 1, 0, skx_get, &m);
	ok(m.route == PERF_MAP_PMUCTX && m.task_on_cpu,
	   "sampling a task on one CPU (pid 0, cpu 1, perf record's default): pmuctx's, marked per CPU");
	pa.sample_period = 0;
	perf_map_attr(&pa, 0, -1, 0, skx_get, &m);
	ok(m.route == PERF_MAP_PMUCTX && !m.task_on_cpu, "a task anywhere (pid 0, cpu -1): not per CPU");
	perf_map_attr(&pa, 0, -2, 0, skx_get, &m);
	ok(is_refused(&m, EINVAL), "cpu -2: EINVAL");
	perf_map_attr(&pa, 0, 0, PERF_FLAG_PID_CGROUP, skx_get, &m);
	ok(is_refused(&m, EOPNOTSUPP), "a cgroup on a CPU: EOPNOTSUPP");
	perf_map_attr(&pa, 1234, -1, 0, skx_get, &m);
	ok(m.route == PERF_MAP_PMUCTX, "another task (pid 1234, cpu -1): pmuctx's (its attach policy decides)");
	perf_map_attr(&pa, 0, -1, PERF_FLAG_FD_OUTPUT, skx_get, &m);
	ok(is_refused(&m, EINVAL), "PERF_FLAG_FD_OUTPUT: EINVAL");
	pa = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	perf_map_attr(&pa, -1, 0, PERF_FLAG_FD_CLOEXEC, skx_get, &m);
	ok(m.route == PERF_MAP_KERNEL, "a CPU-wide software event (perf's cloexec probe): the kernel's");
	pa = attr(PERF_TYPE_TRACEPOINT, 42);
	m = map_task(&pa);
	ok(m.route == PERF_MAP_KERNEL, "a tracepoint: the kernel's");
	pa = attr(9, 0x11);
	m = map_task(&pa);
	ok(m.route == PERF_MAP_KERNEL, "a sysfs PMU's type: the kernel's");

	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pa.sample_period = 100000;
	pa.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	pa.wakeup_events = 1;
	m = map_task(&pa);
	ok(is_pmuctx(&m, PMUCTX_TYPE_HARDWARE, PMUCTX_HW_CPU_CYCLES) && m.attr.sample_period == 100000,
	   "sampling every 100000 cycles (IP, TID, TIME, PERIOD): pmuctx's sample_period");
	pa.sample_type |= PERF_SAMPLE_CALLCHAIN;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && (m.attr.flags & PMUCTX_ATTR_CALLCHAIN),
	   "sampling with call chains (perf record -g): PMUCTX_ATTR_CALLCHAIN");
	pa.exclude_callchain_user = 1;
	pa.exclude_kernel = 1;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && !(m.attr.flags & PMUCTX_ATTR_CALLCHAIN),
	   "kernel-only call chains of a user-only event: empty, no walk asked");
	pa.exclude_kernel = 0;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && (m.attr.flags & PMUCTX_ATTR_CALLCHAIN),
	   "kernel-only call chains of an event that counts the kernel: the module's");
	pa.exclude_callchain_user = 0;
	pa.sample_type |= PERF_SAMPLE_REGS_USER;
	pa.sample_regs_user = PERF_MAP_ARM64_LR_MASK;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && m.attr.sample_regs_user == PERF_MAP_ARM64_LR_MASK &&
	   !m.attr.sample_stack_user,
	   "call chains and arm64's link register (perf record -g): the module's registers");
	pa.sample_regs_user = 0;
	m = map_task(&pa);
	ok(is_refused(&m, EINVAL), "REGS_USER with no register: EINVAL, as perf's kernel");
	pa.sample_regs_user = 0xff0fffULL;
	pa.sample_type |= PERF_SAMPLE_STACK_USER;
	pa.sample_stack_user = 8192;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && m.attr.sample_regs_user == 0xff0fffULL &&
	   m.attr.sample_stack_user == 8192,
	   "user registers and stack (--call-graph dwarf): the module's, as asked");
	pa.sample_type &= ~(__u64)PERF_SAMPLE_REGS_USER;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && !m.attr.sample_regs_user && m.attr.sample_stack_user == 8192,
	   "a stack without registers: no registers asked of the module");
	pa.sample_type &= ~(__u64)PERF_SAMPLE_STACK_USER;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && !m.attr.sample_regs_user && !m.attr.sample_stack_user,
	   "sample_regs_user and sample_stack_user without their sample_type bits: ignored");
	pa.sample_stack_user = 0;
	pa.sample_regs_user = 0;
	pa.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CPU;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && !(m.attr.flags & PMUCTX_ATTR_CALLCHAIN),
	   "sampling with the CPU (--sample-cpu): pmuctx's, no call chain");
	pa.sample_type = PERF_SAMPLE_IP;
	pa.mmap = 1;
	pa.comm = 1;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX, "sampling with side-band mmap/comm records: the library's");
	pa.mmap_data = 1;
	pa.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX,
	   "data mappings, ADDR and DATA_SRC (--call-graph dwarf asks): the library's");
	pa.sample_type |= PERF_SAMPLE_WEIGHT;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "WEIGHT: EOPNOTSUPP");
	pa.sample_type = PERF_SAMPLE_IP;
	pa.mmap_data = 0;
	pa.ksymbol = 1;
	m = map_task(&pa);
	ok(is_refused(&m, EINVAL), "sampling with ksymbol records: EINVAL (perf drops them)");
	pa.ksymbol = 0;
	pa.write_backward = 1;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "a backward ring: EOPNOTSUPP");
	pa.write_backward = 0;
	pa.mmap = pa.comm = 0;
	pa.use_clockid = 1;
	pa.clockid = CLOCK_MONOTONIC_RAW;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "sample times on CLOCK_MONOTONIC_RAW: EOPNOTSUPP");
	pa.clockid = CLOCK_MONOTONIC;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX, "sample times on CLOCK_MONOTONIC: pmuctx's own");
	pa.use_clockid = 0;
	pa.sample_period = 1ULL << 32;
	m = map_task(&pa);
	ok(is_refused(&m, EINVAL), "a sample_period above 2^32 - 1: EINVAL");
	pa.sample_period = 4000;
	pa.freq = 1;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && (m.attr.flags & PMUCTX_ATTR_FREQ) &&
	   m.attr.sample_period == 4000, "sampling (freq): pmuctx's FREQ at the same rate");
	pa = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	pa.sample_period = 1000000;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_KERNEL,
	   "a sampling software event: the kernel's (pmuctx's software counters do not sample)");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pa.precise_ip = 2;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "cycles:pp on x86: EOPNOTSUPP (no PEBS)");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pa.exclude_host = 1;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "exclude_host (guest-only counting): EOPNOTSUPP");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pa.exclude_user = 1;
	pa.exclude_kernel = 1;
	m = map_task(&pa);
	ok(is_refused(&m, EOPNOTSUPP), "excluding user and kernel: EOPNOTSUPP");
	pa = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	pa.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	pa.inherit = 1;
	pa.inherit_stat = 1;
	pa.pinned = 1;
	m = map_task(&pa);
	ok(m.route == PERF_MAP_PMUCTX && m.attr.read_format == (PMUCTX_FORMAT_GROUP | PMUCTX_FORMAT_ID),
	   "PERF_FORMAT_LOST is the shim's to add, not pmuctx's STAMP");
	ok(m.attr.flags == (PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_INHERIT_STAT | PMUCTX_ATTR_PINNED),
	   "inherit, inherit_stat, pinned");
	pa.read_format = 1ULL << 5;
	m = map_task(&pa);
	ok(is_refused(&m, EINVAL), "an unknown read_format bit: EINVAL");
}

int main(void)
{
	char err[256];

	if (pmuctx_evdb_open(&skx, NULL, "GenuineIntel-6-55-4", err, sizeof(err))) {
		ok(0, "event database for Skylake-X: %s", err);
		return done_testing();
	}
	diag("CPU GenuineIntel-6-55-4, table %s", pmuctx_evdb_table(skx));
	generic_hardware();
	cache_events();
	raw_events();
	software_events();
	targets_and_modes();
	pmuctx_evdb_close(skx);
	return done_testing();
}
