// SPDX-License-Identifier: GPL-2.0
/*
 * What a perf_event_attr becomes on pmuctx.  The rule: pmuctx counts what
 * it can count exactly as perf's kernel would; what it cannot is refused
 * with the errno perf reads as "not supported" (ENOENT: no such event here,
 * EOPNOTSUPP: an attribute pmuctx cannot honour), never counted differently.
 * Requests outside pmuctx's model that the kernel itself serves (software
 * events on a CPU, tracepoints, breakpoints, dynamic PMUs) go to the kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attr_map.h"
#include "ring.h"
#include "evdb_internal.h"
#include "pmuctx_events.h"

void perf_map_refuse(struct perf_map *m, int err, const char *why)
{
	m->route = PERF_MAP_REFUSED;
	m->err = err;
	m->why = why;
}

/* perf's generic hardware events beyond cycles and instructions, by perf's names. */
static const char *const hw_names[PERF_COUNT_HW_MAX] = {
	[PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
	[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branches",
	[PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
	[PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
	[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
	[PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
	[PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

/* perf's name for a PERF_TYPE_HW_CACHE config, spelled by libpmuctx. */
int perf_map_cache_name(unsigned long long config, char *buf, size_t len)
{
	if (config >> 24)
		return -1;
	return evdb_cache_spell(config & 0xff, (config >> 8) & 0xff, (config >> 16) & 0xff,
				buf, len);
}

/* A named event through libpmuctx's database: the CPU's encoding, or ENOENT. */
static void map_named(const char *name, struct pmuctx_evdb *evdb, struct perf_map *m)
{
	struct pmuctx_event_info info;
	char err[192];

	if (!evdb) {
		perf_map_refuse(m, ENOENT, "no event database for this CPU");
		return;
	}
	if (pmuctx_event_encode(evdb, name, &info, err, sizeof(err))) {
		snprintf(m->why_buf, sizeof(m->why_buf), "%s", err);
		perf_map_refuse(m, ENOENT, m->why_buf);
		return;
	}
	/* An offcore-response (extra register) event: pmuctx programs no config1. */
	if (info.enc.config1) {
		perf_map_refuse(m, EOPNOTSUPP, "the event needs an extra register (config1) pmuctx does not program");
		return;
	}
	m->attr.type = info.enc.type;
	m->attr.config = info.enc.config;
}

static void map_software(unsigned long long config, struct perf_map *m)
{
	switch (config) {
	case PERF_COUNT_SW_CPU_CLOCK:
	case PERF_COUNT_SW_TASK_CLOCK:
		/* on one task both are its time on a CPU (pmuctx stat's cpu-clock too) */
		m->attr.config = PMUCTX_SW_TASK_CLOCK;
		break;
	case PERF_COUNT_SW_PAGE_FAULTS:
		m->attr.config = PMUCTX_SW_PAGE_FAULTS;
		break;
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
		m->attr.config = PMUCTX_SW_CONTEXT_SWITCHES;
		break;
	case PERF_COUNT_SW_CPU_MIGRATIONS:
		m->attr.config = PMUCTX_SW_CPU_MIGRATIONS;
		break;
	case PERF_COUNT_SW_PAGE_FAULTS_MIN:
		m->attr.config = PMUCTX_SW_PAGE_FAULTS_MIN;
		break;
	case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
		m->attr.config = PMUCTX_SW_PAGE_FAULTS_MAJ;
		break;
	default:
		/* alignment/emulation faults, dummy, bpf-output, cgroup-switches */
		m->route = PERF_MAP_KERNEL;
		return;
	}
	m->attr.type = PMUCTX_TYPE_SOFTWARE;
}

/*
 * A sampling event: its overflows become the records of perf's ring
 * (ring.c) for the sample_type bits a pmuctx sample holds.  What perf
 * would add beside them (read values, branch stacks, interrupted
 * registers, data addresses) pmuctx does not record.
 */
static void map_sampling(const struct perf_event_attr *pa, struct perf_map *m)
{
	/*
	 * pmuctx's software counters do not sample; the kernel's do, on
	 * its clock ticks and at its hooks, with no PMU: they are its.
	 */
	if (pa->type == PERF_TYPE_SOFTWARE) {
		m->route = PERF_MAP_KERNEL;
		return;
	}
	/* sample_freq: the module chooses the periods (up to its max_sample_freq) */
	if (pa->freq)
		m->attr.flags |= PMUCTX_ATTR_FREQ;
	if (pa->sample_period > UINT32_MAX) {
		perf_map_refuse(m, EINVAL, "sample_period above 2^32 - 1");
		return;
	}
	if (pa->sample_type & ~(__u64)RING_SAMPLE_TYPES) {
		snprintf(m->why_buf, sizeof(m->why_buf),
			 "sample_type %#llx: bits %#llx beyond IP, TID, TIME, ID, STREAM_ID, CPU, PERIOD, CALLCHAIN, REGS_USER, STACK_USER and IDENTIFIER",
			 (unsigned long long)pa->sample_type,
			 (unsigned long long)(pa->sample_type & ~(__u64)RING_SAMPLE_TYPES));
		perf_map_refuse(m, EOPNOTSUPP, m->why_buf);
		return;
	}
	/*
	 * COMM, MMAP (data mappings too: mmap_data) and task records the
	 * kernel writes for the library's dummy events (tracker.c), or the
	 * library from /proc (sideband.c: executable mappings, no task).
	 * The other side-band records are EINVAL: perf then opens the event
	 * again without them, as on a kernel that lacks them.
	 */
	if (pa->namespaces || pa->ksymbol || pa->bpf_event || pa->cgroup ||
	    pa->text_poke || pa->context_switch || pa->build_id) {
		perf_map_refuse(m, EINVAL, "side-band records beyond COMM and MMAP are not written by pmuctx");
		return;
	}
	/*
	 * The module walks the user stack's frame records and, for a
	 * counter that counts the kernel, the kernel's stack with the
	 * kernel's unwinder.
	 * exclude_callchain_user (--call-graph dwarf: the user part comes
	 * from the stack): the kernel part alone, which only an event that
	 * counts the kernel has; the ring leaves the user part out.
	 */
	if ((pa->sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    !(pa->exclude_callchain_user && pa->exclude_kernel))
		m->attr.flags |= PMUCTX_ATTR_CALLCHAIN;
	/*
	 * User registers and a copy of the user stack (perf record
	 * --call-graph dwarf; -g on arm64 asks for the link register): the
	 * module's sample_regs_user and sample_stack_user, which it checks
	 * as perf's kernel does (EINVAL).  The records hold them as perf's
	 * (ring.c).
	 */
	if (pa->sample_type & PERF_SAMPLE_REGS_USER) {
		if (!pa->sample_regs_user) {
			perf_map_refuse(m, EINVAL, "PERF_SAMPLE_REGS_USER with no register in sample_regs_user");
			return;
		}
		m->attr.sample_regs_user = pa->sample_regs_user;
	}
	if (pa->sample_type & PERF_SAMPLE_STACK_USER)
		m->attr.sample_stack_user = pa->sample_stack_user;
	if (pa->write_backward) {
		perf_map_refuse(m, EOPNOTSUPP, "backward rings are not written by pmuctx");
		return;
	}
	/* pmuctx's sample times are CLOCK_MONOTONIC's; perf's default clock is its own */
	if (pa->use_clockid && pa->clockid != CLOCK_MONOTONIC) {
		perf_map_refuse(m, EOPNOTSUPP, "sample times on a clock other than CLOCK_MONOTONIC");
		return;
	}
	m->attr.sample_period = pa->sample_period;
}

static int is_hardware_type(__u32 type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

void perf_map_attr(const struct perf_event_attr *pa, int pid, int cpu, unsigned long flags,
		   struct pmuctx_evdb *(*evdb_get)(void), struct perf_map *m)
{
	char name[64];

	memset(m, 0, sizeof(*m));
	m->route = PERF_MAP_PMUCTX;
	m->attr.size = sizeof(m->attr);

	if (pa->type != PERF_TYPE_SOFTWARE && !is_hardware_type(pa->type)) {
		m->route = PERF_MAP_KERNEL;	/* tracepoints, breakpoints, sysfs PMUs */
		return;
	}
	if (cpu != -1 || pid == -1 || (flags & PERF_FLAG_PID_CGROUP)) {
		/* pmuctx counts tasks wherever they run; the kernel counts a CPU */
		if (pa->type == PERF_TYPE_SOFTWARE) {
			m->route = PERF_MAP_KERNEL;
			return;
		}
		if (cpu < -1) {
			perf_map_refuse(m, EINVAL, "no such CPU");
			return;
		}
		if (pid == -1 || (flags & PERF_FLAG_PID_CGROUP)) {
			perf_map_refuse(m, EOPNOTSUPP, "pmuctx counts tasks, not CPUs: no -a/-C, no cgroups");
			return;
		}
		/*
		 * A task's sampling event on one CPU: perf record's default
		 * opens one per CPU.  The shim gives the task's samples, which
		 * say where they were taken, to the first CPU's (shim.c).  A
		 * count of the task's time on one CPU (PAPI's CPU attach) is
		 * not pmuctx's to give.
		 */
		if (!pa->sample_period) {
			perf_map_refuse(m, EOPNOTSUPP, "pmuctx counts a task on every CPU, not on one");
			return;
		}
		m->task_on_cpu = true;
	}
	if (flags & ~(unsigned long)PERF_FLAG_FD_CLOEXEC) {
		perf_map_refuse(m, EINVAL, "PERF_FLAG_FD_NO_GROUP and PERF_FLAG_FD_OUTPUT are ring-buffer flags");
		return;
	}
	if (pa->sample_period)
		map_sampling(pa, m);
	if (m->route != PERF_MAP_PMUCTX)
		return;
	if (pa->read_format & ~(__u64)PERF_MAP_READ_FORMATS) {
		perf_map_refuse(m, EINVAL, "unknown read_format bit");
		return;
	}
	if (pa->exclude_host || pa->sigtrap || pa->remove_on_exec || pa->aux_output) {
		perf_map_refuse(m, EOPNOTSUPP, "exclude_host, sigtrap, remove_on_exec and aux_output have no pmuctx counterpart");
		return;
	}
	if (pa->type == PERF_TYPE_SOFTWARE) {
		map_software(pa->config, m);
		if (m->route != PERF_MAP_PMUCTX)
			return;
		/*
		 * pmuctx's software counters count the task in every mode.  So
		 * do the kernel's clocks; its fault and switch counts honour
		 * exclude_*, which pmuctx cannot.
		 */
		if ((pa->exclude_user || pa->exclude_kernel) &&
		    m->attr.config != PMUCTX_SW_TASK_CLOCK) {
			perf_map_refuse(m, EOPNOTSUPP, "pmuctx's software counters count every mode (no :u/:k)");
			return;
		}
	} else {
#if defined(__x86_64__) || defined(__i386__)
		if (pa->precise_ip) {
			perf_map_refuse(m, EOPNOTSUPP, "precise events need PEBS, which the pmuctx x86 backend does not use");
			return;
		}
#endif
		switch (pa->type) {
		case PERF_TYPE_HARDWARE:
			/* bits 63:32: a hybrid PMU's type (perf's extended types) */
			if (pa->config >> 32 || pa->config >= PERF_COUNT_HW_MAX) {
				perf_map_refuse(m, ENOENT, "unknown or hybrid generic hardware event");
				return;
			}
			if (pa->config == PERF_COUNT_HW_CPU_CYCLES) {
				m->attr.type = PMUCTX_TYPE_HARDWARE;
				m->attr.config = PMUCTX_HW_CPU_CYCLES;
			} else if (pa->config == PERF_COUNT_HW_INSTRUCTIONS) {
				m->attr.type = PMUCTX_TYPE_HARDWARE;
				m->attr.config = PMUCTX_HW_INSTRUCTIONS;
			} else {
				map_named(hw_names[pa->config], evdb_get ? evdb_get() : NULL, m);
			}
			break;
		case PERF_TYPE_HW_CACHE:
			if (perf_map_cache_name(pa->config, name, sizeof(name))) {
				perf_map_refuse(m, EINVAL, "malformed cache event config");
				return;
			}
			map_named(name, evdb_get ? evdb_get() : NULL, m);
			break;
		case PERF_TYPE_RAW:
			if (pa->config1 || pa->config2) {
				perf_map_refuse(m, EOPNOTSUPP, "config1/config2 (extra registers) are not programmed by pmuctx");
				return;
			}
			/*
			 * pmuctx takes x86's event | umask << 8 (edge, inv and
			 * cmask are not programmed) and arm64's 16-bit event
			 * numbers: anything else is refused here rather than
			 * with pmuctx's EINVAL, which perf would take for a
			 * missing kernel feature and retry without one.
			 */
			if (pa->config >> 16) {
				perf_map_refuse(m, EOPNOTSUPP, "raw config beyond bits 15:0 (event, umask)");
				return;
			}
			m->attr.type = PMUCTX_TYPE_RAW;
			m->attr.config = pa->config;
			break;
		}
		if (m->route != PERF_MAP_PMUCTX)
			return;
		if (pa->exclude_user)
			m->attr.flags |= PMUCTX_ATTR_EXCLUDE_USER;
		if (pa->exclude_kernel)
			m->attr.flags |= PMUCTX_ATTR_EXCLUDE_KERNEL;
		if (pa->exclude_user && pa->exclude_kernel) {
			perf_map_refuse(m, EOPNOTSUPP, "excluding both user and kernel mode leaves nothing pmuctx counts");
			return;
		}
	}
	if (pa->inherit) {
		m->attr.flags |= PMUCTX_ATTR_INHERIT;
		if (pa->inherit_thread)
			m->attr.flags |= PMUCTX_ATTR_INHERIT_THREAD;
		if (pa->inherit_stat)
			m->attr.flags |= PMUCTX_ATTR_INHERIT_STAT;
	}
	if (pa->pinned)
		m->attr.flags |= PMUCTX_ATTR_PINNED;
	/* perf's bits 0-3 are pmuctx's; LOST is added by the shim's read */
	m->attr.read_format = pa->read_format & (PERF_FORMAT_TOTAL_TIME_ENABLED |
		PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID | PERF_FORMAT_GROUP);
	if (flags & PERF_FLAG_FD_CLOEXEC)
		m->open_flags |= PMUCTX_OPEN_CLOEXEC;
}
