// SPDX-License-Identifier: GPL-2.0
/* libpmuctx: ioctl wrappers (Documentation/uapi.rst lists the errnos). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmuctx_abi.h"

/* Once open it stays open: pmuctx_open_strerror() relies on that. */
static int device_fd = -1;

int pmuctx_device(void)
{
	if (device_fd < 0)
		device_fd = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	return device_fd;
}

int pmuctx_get_info(struct pmuctx_info *info)
{
	int dev = pmuctx_device();

	if (dev < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(dev, PMUCTX_INFO, info);
}

int pmuctx_counter_open(const struct pmuctx_attr *attr, int target,
			int group_fd, unsigned int flags)
{
	struct pmuctx_open_args args = {
		.attr = (uintptr_t)attr,
		.target = target,
		.group_fd = group_fd,
		.flags = flags,
	};
	int dev = pmuctx_device();

	if (dev < 0)
		return -1;
	return ioctl(dev, PMUCTX_OPEN, &args);
}

int pmuctx_counter_enable(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_ENABLE, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

int pmuctx_counter_disable(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_DISABLE, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

int pmuctx_counter_reset(int fd, int group)
{
	return ioctl(fd, PMUCTX_IOC_RESET, group ? PMUCTX_IOC_FLAG_GROUP : 0);
}

/* The most one non-group read returns: five words, then the slice statistics. */
#define READ_MAX_WORDS	(5 + sizeof(struct pmuctx_slice_stats) / sizeof(uint64_t))

static int counter_read(int fd, uint64_t fmt, struct pmuctx_value *v)
{
	uint64_t words[READ_MAX_WORDS];
	ssize_t n;
	int i = 0;

	memset(v, 0, sizeof(*v));
	if (fmt & PMUCTX_FORMAT_GROUP) {
		errno = EINVAL;
		return -1;
	}
	n = read(fd, words, sizeof(words));
	if (n < 0)
		return -1;
	v->value = words[i++];
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED)
		v->time_enabled = words[i++];
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING)
		v->time_running = words[i++];
	if (fmt & PMUCTX_FORMAT_ID)
		v->id = words[i++];
	if (fmt & PMUCTX_FORMAT_STAMP)
		v->stamp = words[i++];
	if (fmt & PMUCTX_FORMAT_SLICES) {
		struct pmuctx_slice_stats *s = &v->slices;

		s->slices = words[i++];
		s->sum_count_sq[0] = words[i++];
		s->sum_count_sq[1] = words[i++];
		s->sum_count_time[0] = words[i++];
		s->sum_count_time[1] = words[i++];
		s->sum_time_sq[0] = words[i++];
		s->sum_time_sq[1] = words[i++];
	}
	/* more or fewer words than read_format says: not the format it was opened with */
	if (n != (ssize_t)(i * sizeof(uint64_t))) {
		memset(v, 0, sizeof(*v));
		errno = EPROTO;
		return -1;
	}
	return 0;
}

#ifdef LIBPMUCTX_SHARED
/*
 * libpmuctx.so.0 first exported pmuctx_counter_read() at LIBPMUCTX_0,
 * filling a struct pmuctx_value of five words: programs built then pass
 * one that size, so they keep that version, which writes no more.  Built
 * statically there is no old program to serve: one plain symbol.
 */
struct pmuctx_value_0 {
	uint64_t value, time_enabled, time_running, id, stamp;
};

int libpmuctx_counter_read_0(int fd, uint64_t fmt, struct pmuctx_value_0 *v0);
int libpmuctx_counter_read_0_2(int fd, uint64_t fmt, struct pmuctx_value *v);
__asm__(".symver libpmuctx_counter_read_0, pmuctx_counter_read@LIBPMUCTX_0");
__asm__(".symver libpmuctx_counter_read_0_2, pmuctx_counter_read@@LIBPMUCTX_0.2");

int libpmuctx_counter_read_0(int fd, uint64_t fmt, struct pmuctx_value_0 *v0)
{
	struct pmuctx_value v;
	int ret = counter_read(fd, fmt, &v);

	v0->value = v.value;
	v0->time_enabled = v.time_enabled;
	v0->time_running = v.time_running;
	v0->id = v.id;
	v0->stamp = v.stamp;
	return ret;
}

int libpmuctx_counter_read_0_2(int fd, uint64_t fmt, struct pmuctx_value *v)
#else
int pmuctx_counter_read(int fd, uint64_t fmt, struct pmuctx_value *v)
#endif
{
	return counter_read(fd, fmt, v);
}

int pmuctx_counter_stats(int fd, struct pmuctx_ctx_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, PMUCTX_IOC_STATS, st);
}

int pmuctx_counter_tree(int fd, struct pmuctx_tree_read *tr,
			struct pmuctx_tree_entry *ents, uint32_t *nr)
{
	int ret;

	memset(tr, 0, sizeof(*tr));
	tr->size = sizeof(*tr);
	tr->nr_entries = *nr;
	tr->entries = (uintptr_t)ents;
	ret = ioctl(fd, PMUCTX_IOC_TREE_READ, tr);
	*nr = tr->nr_entries;
	return ret;
}

/*
 * Address ranges (Documentation/ranges.rst).  Both fill the caller's whole
 * struct: the kernel copies out no more than @size says, and a plan with
 * fewer spans leaves the rest of spans[] zero.
 */
int pmuctx_range_plan_query(uint64_t config, uint64_t start, uint64_t end,
			    struct pmuctx_range *r)
{
	int dev = pmuctx_device();

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->config = config;
	r->start = start;
	r->end = end;
	if (dev < 0)
		return -1;
	return ioctl(dev, PMUCTX_RANGE_PLAN, r);
}

int pmuctx_counter_range(int fd, struct pmuctx_range *r)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	return ioctl(fd, PMUCTX_IOC_RANGE, r);
}

const struct pmuctx_mmap_page *pmuctx_counter_map(int fd)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

#if defined(__aarch64__)
#define PMEVCNTR_CASE(n) \
	case n: asm volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); break

/* PMEVCNTR<n>_EL0 takes n as part of the register name. */
static uint64_t pmu_read_raw(unsigned int n)
{
	uint64_t v = 0;

	switch (n) {
	PMEVCNTR_CASE(0); PMEVCNTR_CASE(1); PMEVCNTR_CASE(2);
	PMEVCNTR_CASE(3); PMEVCNTR_CASE(4); PMEVCNTR_CASE(5);
	PMEVCNTR_CASE(6); PMEVCNTR_CASE(7); PMEVCNTR_CASE(8);
	PMEVCNTR_CASE(9); PMEVCNTR_CASE(10); PMEVCNTR_CASE(11);
	PMEVCNTR_CASE(12); PMEVCNTR_CASE(13); PMEVCNTR_CASE(14);
	PMEVCNTR_CASE(15); PMEVCNTR_CASE(16); PMEVCNTR_CASE(17);
	PMEVCNTR_CASE(18); PMEVCNTR_CASE(19); PMEVCNTR_CASE(20);
	PMEVCNTR_CASE(21); PMEVCNTR_CASE(22); PMEVCNTR_CASE(23);
	PMEVCNTR_CASE(24); PMEVCNTR_CASE(25); PMEVCNTR_CASE(26);
	PMEVCNTR_CASE(27); PMEVCNTR_CASE(28); PMEVCNTR_CASE(29);
	PMEVCNTR_CASE(30);
	case 31:
		asm volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#elif defined(__x86_64__)
/* The page's index less one is RDPMC's ECX (fixed counters: bit 30). */
static uint64_t pmu_read_raw(unsigned int n)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(n) : "memory");
	return (uint64_t)hi << 32 | lo;
}
#endif

int pmuctx_self_read(const struct pmuctx_mmap_page *page, uint64_t *value)
{
#if defined(__aarch64__) || defined(__x86_64__)
	const volatile struct pmuctx_mmap_page *p = page;
	uint32_t seq, idx, width;
	uint64_t offset, prev, raw, mask;

	do {
		seq = p->lock;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		idx = p->index;
		width = p->width;
		offset = p->offset;
		prev = p->prev;
		raw = idx ? pmu_read_raw(idx - 1) : 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || p->lock != seq);
	if (!idx) {
		errno = EAGAIN;
		return -1;
	}
	mask = width >= 64 ? UINT64_MAX : (1ULL << width) - 1;
	*value = offset + ((raw - prev) & mask);
	return 0;
#else
	(void)page;
	(void)value;
	errno = EAGAIN;
	return -1;
#endif
}

/*
 * The same errno means different things before and after the device is
 * open: ENOENT from open() is a missing module, from PMUCTX_OPEN an event
 * the PMU does not implement.
 */
static const char *device_strerror(int err)
{
	switch (err) {
	case ENOENT:
		return "/dev/pmuctx does not exist: is the pmuctx module loaded?";
	case EACCES:
	case EPERM:
		return "cannot open /dev/pmuctx: permission denied (check the device node's mode and group)";
	default:
		return strerror(err);
	}
}

const char *pmuctx_open_strerror(int err)
{
	if (device_fd < 0)
		return device_strerror(err);
	switch (err) {
	case ENOENT:
		return "event not implemented by this PMU (arm64: not advertised in PMCEID0/1; x86: unavailable in CPUID 0AH:EBX; 'pmuctx list' marks them)";
	case EACCES:
		return "not allowed to count that task: it must be you, your own descendant with your credentials and dumpable, or your tracee (else CAP_PERFMON or CAP_SYS_PTRACE)";
	case EPERM:
		return "counting kernel mode needs CAP_PERFMON (or the module parameter allow_kernel=1): count user mode only with EVENT:u; "
		       "or, for a sampling counter, your sample rings would pass the memory one user may pin (module parameter max_ring_kb plus 'ulimit -l'; CAP_IPC_LOCK lifts it): close sampling counters, or ask for fewer";
	case ESRCH:
		return "no such task, or it is exiting";
	case EBADF:
		return "the group or pidfd descriptor is not an open file descriptor (or not a pidfd)";
	case E2BIG:
		return "the attr struct is newer than this module and uses fields it does not know";
	case EBUSY:
		return "the hardware counters are held by someone else (x86: perf's hardware events or the NMI watchdog; end them, and boot with nmi_watchdog=0)";
	case EOPNOTSUPP:
		return "not supported: software counters count the task in every mode (no u/k modifier, no sample period), and a sample period needs an overflow interrupt";
	case ENODEV:
		return "no hardware PMU backend is loaded: only software counters are available";
	case ENOSPC:
		return "cannot fit on the PMU: a pinned counter or group beside the other pinned ones, or a group with more hardware members than the PMU has counters (everything else is multiplexed; 'pmuctx info' shows how many counters there are)";
	case EINVAL:
		return "invalid attr, target or group (unknown type, config or flag bit; or a group leader that is a member or differs in inheritance)";
	case EFAULT:
		return "bad pointer passed to the kernel";
	case ENOMEM:
		return "out of memory";
	case EMFILE:
		return "too many open files, or the task already holds max_counters_per_task counters";
	default:
		return strerror(err);
	}
}

/*
 * A range counter fails for reasons of its own: its registers, its kind,
 * its addresses.  The errnos it shares with other counters (EACCES, ESRCH,
 * EMFILE, ...) mean what they mean there.
 */
const char *pmuctx_range_strerror(int err)
{
	if (device_fd < 0)
		return device_strerror(err);
	switch (err) {
	case ERANGE:
		return "the range cannot be covered with this CPU's debug registers (too long or badly aligned for them; with PMUCTX_RANGE_EXACT: only a larger range can be)";
	case EBUSY:
		return "the debug registers are in use: a debugger (ptrace watchpoints), perf breakpoints or other range counters of the task hold them";
	case EOPNOTSUPP:
		return "not supported: this CPU cannot watch that kind of access (x86 has no read-only watchpoints), or the counter excludes user mode or has a sample period (range counters count user-mode accesses, without overflow)";
	case EINVAL:
		return "invalid range: empty or inverted, not in user space (range counters watch user addresses only), or an unknown kind or config bit";
	case E2BIG:
	case ENOTTY:
		return "the loaded module predates address ranges (no PMUCTX_TYPE_RANGE, PMUCTX_RANGE_PLAN or PMUCTX_IOC_RANGE)";
	default:
		return pmuctx_open_strerror(err);
	}
}
