// SPDX-License-Identifier: GPL-2.0
/*
 * libpmuctx-perf.so: perf_event_open for unmodified programs (perf stat,
 * PAPI) on pmuctx, through LD_PRELOAD ("pmuctx exec -- CMD").  It takes
 * glibc's syscall(__NR_perf_event_open, ...) and a perf_event_open symbol,
 * opens a pmuctx counter (attr_map.c decides what it becomes) and returns
 * the counter's own descriptor, so poll works unchanged; read, ioctl and
 * prctl are translated for the descriptors it opened, and for their
 * duplicates (dup, dup2, dup3, fcntl F_DUPFD): an event is one pmuctx
 * counter however many descriptors name it, and lives until the last
 * is closed, as a perf event lives with its file.
 *
 * A sampling event's mmap() gets perf's ring (ring.c), which the shim
 * fills from pmuctx's samples when the program looks for them: in its
 * overflow signal's handler (signals.c), after a poll, select or
 * epoll_wait returns, and before a disable.
 *
 * A perf group counts only while its leader is enabled; so does a pmuctx
 * group since issue 41 (a module before it counted a member whenever the
 * member was enabled).  The shim keeps perf's own enable state per event
 * and enables a pmuctx member only while its leader is on, which gives
 * perf's counts on either module; before an exec that enable_on_exec
 * awaits, members ride on pmuctx's ENABLE_ON_EXEC with it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attr_map.h"
#include "kernel_rings.h"
#include "pmuctx_abi.h"
#include "pmuctx_events.h"
#include "ring.h"
#include "signals.h"
#include "tracker.h"

_Static_assert(PERF_FORMAT_TOTAL_TIME_ENABLED == PMUCTX_FORMAT_TOTAL_TIME_ENABLED &&
	       PERF_FORMAT_TOTAL_TIME_RUNNING == PMUCTX_FORMAT_TOTAL_TIME_RUNNING &&
	       PERF_FORMAT_ID == PMUCTX_FORMAT_ID && PERF_FORMAT_GROUP == PMUCTX_FORMAT_GROUP,
	       "perf's and pmuctx's read_format bits 0-3 must agree: reads pass through");

#define SHIM_EXPORT __attribute__((visibility("default")))

struct shim_event {
	int fd;			/* its primary descriptor: the lowest-opened that is open */
	int refs;		/* descriptors that name it (table slots) */
	int leader;		/* the group leader's primary fd (its own for a leader) */
	uint64_t read_format;	/* perf's, as asked */
	bool own_on;		/* perf's enable state of the event itself */
	bool on_exec;		/* disabled until exec: pmuctx's ENABLE_ON_EXEC holds it */
	bool inherit;
	/*
	 * A task's event on a CPU other than the first (perf record's
	 * default opens one per CPU): pmuctx counts the task wherever it
	 * runs, on the first CPU's event; this one stays disabled in pmuctx
	 * and reads 0.
	 */
	bool idle;
	/* sampling events (sample_period): perf's ring once mapped */
	bool sampling;
	struct ring_format fmt;
	struct sample_batch *batch;	/* sampling: its drains' room (ring.h) */
	/* its own ring, or the one SET_OUTPUT sent its records to */
	struct perf_ring *ring;	/* set under table_lock, read by drains without it */
	int ring_busy;		/* 1 while a drain or the event's end holds the ring */
	int poll_pending;	/* records written since the last poll said so */
	bool ring_is_output;	/* @ring is another event's (SET_OUTPUT) */
	struct tracker_want want;	/* fmt.sideband: the kernel's records (tracker.c) */
	uint64_t module_lost;	/* the module's lost count, as the last drain read it */
};

/* Taken with shim_lock(): every signal blocked (signals.h). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_event **table;	/* by fd */
static int table_len;
static int rings;		/* events with a ring: 0 spares every poll a table walk */

static long (*real_syscall)(long, ...);
static int (*real_ioctl)(int, unsigned long, ...);
static ssize_t (*real_read)(int, void *, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
			   const sigset_t *);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static int (*real_epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*real_close)(int);
static int (*real_prctl)(int, ...);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_close_range)(unsigned int, unsigned int, int);
static void (*real_closefrom)(int);
static int debug;
/*
 * PMUCTX_PERF_ROUTE=kernel: every perf_event_open goes to the kernel, the
 * shim still loaded.  A/B runs (perf_parity.sh) set it to "kernel" or
 * "pmuctx", two words of one length: the counted program's environment is
 * then the same size in both, and so are its startup's counts.
 */
static bool route_kernel;
/* PMUCTX_PERF_SIDEBAND=proc: side-band records from /proc, never the kernel's */
static bool sideband_proc;

/*
 * Other libraries' constructors may read() before ours runs: every
 * interposer makes sure the real functions are known.
 */
static void shim_init(void) __attribute__((constructor));
static void shim_init(void)
{
	if (real_read)
		return;
	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_prctl = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
	real_dup = (int (*)(int))dlsym(RTLD_NEXT, "dup");
	real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
	real_fcntl = (int (*)(int, int, ...))dlsym(RTLD_NEXT, "fcntl");
	real_close_range = (int (*)(unsigned int, unsigned int, int))dlsym(RTLD_NEXT, "close_range");
	real_closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
	real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	real_poll = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	real_ppoll = (int (*)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))
		dlsym(RTLD_NEXT, "ppoll");
	real_select = (int (*)(int, fd_set *, fd_set *, fd_set *, struct timeval *))
		dlsym(RTLD_NEXT, "select");
	real_pselect = (int (*)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
				const sigset_t *))dlsym(RTLD_NEXT, "pselect");
	real_epoll_wait = (int (*)(int, struct epoll_event *, int, int))dlsym(RTLD_NEXT, "epoll_wait");
	real_epoll_pwait = (int (*)(int, struct epoll_event *, int, int, const sigset_t *))
		dlsym(RTLD_NEXT, "epoll_pwait");
	debug = getenv("PMUCTX_PERF_DEBUG") != NULL;
	sideband_proc = getenv("PMUCTX_PERF_SIDEBAND") &&
			!strcmp(getenv("PMUCTX_PERF_SIDEBAND"), "proc");
	route_kernel = getenv("PMUCTX_PERF_ROUTE") && !strcmp(getenv("PMUCTX_PERF_ROUTE"), "kernel");
	__atomic_store_n(&real_read, (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read"),
			 __ATOMIC_RELEASE);
}

#define shim_debug(...) do { if (debug) fprintf(stderr, "pmuctx-perf: " __VA_ARGS__); } while (0)

/* Lookups run on every read() of the program: no lock, a stale miss is a plain fd. */
static struct shim_event *lookup(int fd)
{
	if (fd < 0 || fd >= __atomic_load_n(&table_len, __ATOMIC_ACQUIRE))
		return NULL;
	return __atomic_load_n(&table[fd], __ATOMIC_ACQUIRE);
}

/* Under table_lock. */
static int table_put_locked(int fd, struct shim_event *ev)
{
	if (fd >= table_len) {
		int len = fd < 64 ? 128 : 2 * fd;
		struct shim_event **t = calloc(len, sizeof(*t));

		if (!t)
			return -1;
		/* the old array stays: a lock-free lookup may still be reading it */
		if (table)
			memcpy(t, table, table_len * sizeof(*t));
		__atomic_store_n(&table, t, __ATOMIC_RELEASE);
		__atomic_store_n(&table_len, len, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&table[fd], ev, __ATOMIC_RELEASE);
	return 0;
}

static int table_put(int fd, struct shim_event *ev)
{
	sigset_t saved;
	int ret;

	shim_lock(&table_lock, &saved);
	ret = table_put_locked(fd, ev);
	shim_unlock(&table_lock, &saved);
	return ret;
}

/*
 * Write @ev's waiting samples into its ring.  Any thread, and signal
 * handlers: one drain at a time per event (a drain that finds another
 * under way leaves the samples to it), and none once the event's end
 * took the ring (release_ring).
 */
static void drain_event(struct shim_event *ev)
{
	struct perf_ring *r;

	if (__atomic_exchange_n(&ev->ring_busy, 1, __ATOMIC_ACQUIRE))
		return;
	r = __atomic_load_n(&ev->ring, __ATOMIC_ACQUIRE);
	if (r && perf_ring_drain(r, ev->fd, &ev->fmt, ev->batch, &ev->module_lost))
		__atomic_store_n(&ev->poll_pending, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&ev->ring_busy, 0, __ATOMIC_RELEASE);
}

static void drain_all(void)
{
	int fd, len;

	kernel_rings_drain();
	if (!__atomic_load_n(&rings, __ATOMIC_ACQUIRE))
		return;
	len = __atomic_load_n(&table_len, __ATOMIC_ACQUIRE);
	for (fd = 0; fd < len; fd++) {
		struct shim_event *ev = lookup(fd);

		if (ev && ev->fd == fd && __atomic_load_n(&ev->ring, __ATOMIC_ACQUIRE))
			drain_event(ev);
	}
}

/*
 * F_SETSIG's signals name their descriptor (si_fd, si_code POLL_IN ..
 * POLL_HUP); plain SIGIO and signals from elsewhere do not: every ring.
 */
void shim_drain_signalled(const siginfo_t *info)
{
	struct shim_event *ev = NULL;

	if (info && info->si_code >= POLL_IN && info->si_code <= POLL_HUP)
		ev = lookup(info->si_fd);
	if (ev && __atomic_load_n(&ev->ring, __ATOMIC_ACQUIRE))
		drain_event(ev);
	else
		drain_all();
}

/*
 * @r, just taken out of @ev->ring: @ev's hold on it goes once no drain of
 * @ev runs.  Returns with @ev's ring_busy held.
 */
static void drop_ring_hold(struct shim_event *ev, struct perf_ring *r)
{
	while (__atomic_exchange_n(&ev->ring_busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	perf_ring_free(r);
}

/* The event ends: its hold on its ring goes once no drain of it runs. */
static void release_ring(struct shim_event *ev)
{
	struct perf_ring *r = __atomic_exchange_n(&ev->ring, NULL, __ATOMIC_ACQ_REL);

	if (!r)
		return;
	__atomic_sub_fetch(&rings, 1, __ATOMIC_RELEASE);
	drop_ring_hold(ev, r);
}

static struct pmuctx_evdb *shim_evdb;
static bool shim_evdb_tried;

static struct pmuctx_evdb *evdb_get(void)
{
	char err[256];

	if (!shim_evdb_tried) {
		shim_evdb_tried = true;
		if (pmuctx_evdb_open(&shim_evdb, NULL, NULL, err, sizeof(err)))
			shim_debug("event database: %s\n", err);
	}
	return shim_evdb;
}

/* pmuctx's errnos that perf would misread, as perf's kernel says the same thing. */
static int perf_errno(int err)
{
	switch (err) {
	case ENODEV:	/* no hardware backend: the event does not exist here */
		return ENOENT;
	case ENOSPC:	/* a group that can never fit: x86's validate_group says EINVAL */
		return EINVAL;
	default:
		return err;
	}
}

static void set_counting(int fd, bool on)
{
	if (lookup(fd) && lookup(fd)->idle)
		return;
	real_ioctl(fd, on ? PMUCTX_IOC_ENABLE : PMUCTX_IOC_DISABLE, 0);
}

/*
 * Give pmuctx the state perf's rules give the group of @leader: a member
 * counts when it and its leader are on.  Events still waiting for their
 * exec keep pmuctx's ENABLE_ON_EXEC state.  When every event of the group
 * is to count, or none, one group ioctl switches them all at one instant,
 * as perf's leader does: one ioctl per member would count the shim's own
 * instructions between them on some members and not on others.  Under
 * table_lock.
 */
static void apply_group(int leader)
{
	struct shim_event *l = table[leader];
	bool on_seen = false, off_seen = false;
	int fd;

	/* an idle event's group is idle: it shares the leader's CPU */
	if (!l || l->on_exec || l->idle)
		return;
	for (fd = 0; fd < table_len; fd++) {
		struct shim_event *ev = table[fd];

		if (!ev || ev->fd != fd || ev->leader != leader)
			continue;
		if (ev->on_exec)
			on_seen = off_seen = true;	/* not ours to switch */
		else if (ev->own_on && l->own_on)
			on_seen = true;
		else
			off_seen = true;
	}
	if (on_seen != off_seen) {
		real_ioctl(leader, on_seen ? PMUCTX_IOC_ENABLE : PMUCTX_IOC_DISABLE,
			   PMUCTX_IOC_FLAG_GROUP);
		return;
	}
	for (fd = 0; fd < table_len; fd++) {
		struct shim_event *ev = table[fd];

		if (!ev || ev->fd != fd || ev->leader != leader || ev->on_exec)
			continue;
		set_counting(fd, ev->own_on && l->own_on);
	}
}

/*
 * The CPU whose event carries a task's count when a program opens the
 * task's event once per CPU: the first online one, which every such
 * program (perf record, perf top -p) opens.
 */
static int first_cpu(void)
{
	static int first = -1;
	int cpu = __atomic_load_n(&first, __ATOMIC_RELAXED);
	char buf[64];
	ssize_t n;
	int fd;

	if (cpu >= 0)
		return cpu;
	cpu = 0;
	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = real_read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			cpu = atoi(buf);
		}
		real_close(fd);
	}
	__atomic_store_n(&first, cpu, __ATOMIC_RELAXED);
	return cpu;
}

/* The loaded module's PMUCTX_FEAT_* (0 when there is none). */
static uint64_t module_features(void)
{
	static uint64_t features;
	static bool known;
	struct pmuctx_info info;

	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
		if (!pmuctx_get_info(&info))
			__atomic_store_n(&features, info.features, __ATOMIC_RELAXED);
		__atomic_store_n(&known, true, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&features, __ATOMIC_RELAXED);
}

/*
 * The clock of every kernel event's attr the library passes on, at its
 * open and at each PERF_EVENT_IOC_MODIFY_ATTRIBUTES: CLOCK_MONOTONIC when
 * the program names none, as pmuctx's samples are, so that a session of
 * both sorts its records as they happened (every event: perf's kernel
 * wants one clock in a group, and a modified attr equal to the event's).
 * False when @a names its own, and is left as it is.
 */
static bool kernel_event_clock(struct perf_event_attr *a)
{
	if (a->use_clockid)
		return false;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->size = sizeof(*a);
	return true;
}

/*
 * An event the kernel keeps (software, tracepoints), on the library's
 * clock (kernel_event_clock()); a sampling one is known to
 * kernel_rings.c, whose rings may take its records.
 */
static long open_kernel_event(const struct perf_event_attr *uattr,
			      const struct perf_event_attr *pa, pid_t pid, int cpu,
			      int group_fd, unsigned long flags)
{
	struct perf_event_attr a = *pa;
	long fd;

	if (kernel_event_clock(&a))
		uattr = &a;
	fd = real_syscall(__NR_perf_event_open, uattr, pid, cpu, group_fd, flags);
	if (fd >= 0 && pa->sample_period)
		kernel_ring_opened(fd, pa);
	return fd;
}

static long shim_open(struct perf_event_attr *uattr, pid_t pid, int cpu, int group_fd,
		      unsigned long flags)
{
	struct perf_event_attr pa;
	struct shim_event *ev, *leader = NULL;
	struct perf_map m;
	bool idle;
	__u32 size;
	int fd, err;

	if (route_kernel)
		return real_syscall(__NR_perf_event_open, uattr, pid, cpu, group_fd, flags);
	if (!uattr) {
		errno = EFAULT;
		return -1;
	}
	size = uattr->size ? uattr->size : PERF_ATTR_SIZE_VER0;
	memset(&pa, 0, sizeof(pa));
	if (size > sizeof(pa)) {
		/* a newer perf: what this shim does not know must be zero, as the kernel says */
		for (const unsigned char *p = (const unsigned char *)uattr + sizeof(pa);
		     p < (const unsigned char *)uattr + size; p++) {
			if (*p) {
				uattr->size = sizeof(pa);
				errno = E2BIG;
				return -1;
			}
		}
		size = sizeof(pa);
	}
	memcpy(&pa, uattr, size);
	perf_map_attr(&pa, pid, cpu, flags, evdb_get, &m);
	if (m.route == PERF_MAP_PMUCTX && m.task_on_cpu && cpu >= sysconf(_SC_NPROCESSORS_CONF)) {
		perf_map_refuse(&m, EINVAL, "no such CPU");
	}
	idle = m.route == PERF_MAP_PMUCTX && m.task_on_cpu && cpu != first_cpu();
	if (m.route == PERF_MAP_PMUCTX && (pa.sample_type & PERF_SAMPLE_CPU) &&
	    !(module_features() & PMUCTX_FEAT_SAMPLE_CPU)) {
		perf_map_refuse(&m, EOPNOTSUPP, "this pmuctx module's samples do not name their CPU");
	}
	if (m.route == PERF_MAP_PMUCTX && (pa.sample_type & PERF_SAMPLE_CALLCHAIN) &&
	    !(module_features() & PMUCTX_FEAT_CALLCHAIN)) {
		perf_map_refuse(&m, EOPNOTSUPP, "this pmuctx module's samples carry no call chain");
	}
	if (m.route == PERF_MAP_PMUCTX &&
	    (pa.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) &&
	    !(module_features() & PMUCTX_FEAT_SAMPLE_USER)) {
		perf_map_refuse(&m, EOPNOTSUPP, "this pmuctx module's samples carry no user registers or stack");
	}

	if (group_fd != -1) {
		leader = lookup(group_fd);
		if ((m.route == PERF_MAP_PMUCTX) != (leader != NULL)) {
			/* a pmuctx counter and a kernel event cannot share a group */
			perf_map_refuse(&m, EINVAL, "group mixes a pmuctx counter with a kernel perf event");
		} else if (leader && leader->idle != idle) {
			perf_map_refuse(&m, EINVAL, "a group's events are on one CPU");
		}
	}
	if (m.route == PERF_MAP_KERNEL) {
		shim_debug("type %u config %#llx pid %d cpu %d: to the kernel\n", pa.type,
			   (unsigned long long)pa.config, pid, cpu);
		return open_kernel_event(uattr, &pa, pid, cpu, group_fd, flags);
	}
	if (m.route == PERF_MAP_REFUSED) {
		shim_debug("type %u config %#llx pid %d cpu %d: refused (%s): %s\n", pa.type,
			   (unsigned long long)pa.config, pid, cpu, strerror(m.err), m.why);
		errno = m.err;
		return -1;
	}

	ev = calloc(1, sizeof(*ev));
	if (!ev) {
		errno = ENOMEM;
		return -1;
	}
	ev->read_format = pa.read_format;
	ev->own_on = !pa.disabled;
	ev->inherit = pa.inherit;
	ev->sampling = pa.sample_period != 0;
	ev->fmt.sample_type = pa.sample_type;
	ev->fmt.period = pa.sample_period;
	ev->fmt.sample_id_all = pa.sample_id_all;
	ev->fmt.kernel_excluded = pa.exclude_kernel;
	ev->fmt.kernel_chain_excluded = pa.exclude_callchain_kernel;
	ev->fmt.user_chain_excluded = pa.exclude_callchain_user;
	ev->fmt.module_chain = m.attr.flags & PMUCTX_ATTR_CALLCHAIN;
	ev->fmt.sideband = pa.mmap || pa.mmap2 || pa.comm;
	ev->fmt.mmap2 = pa.mmap2;
	ev->fmt.max_stack = pa.sample_max_stack;
	ev->fmt.regs_user = m.attr.sample_regs_user;
	ev->fmt.stack_user = m.attr.sample_stack_user;
	if (ev->sampling) {
		ev->batch = sample_batch_new(&ev->fmt);
		if (!ev->batch) {
			free(ev);
			errno = ENOMEM;
			return -1;
		}
	}
	ev->want.pid = pid;
	ev->want.inherit = pa.inherit;
	ev->want.mmap = pa.mmap;
	ev->want.mmap2 = pa.mmap2;
	ev->want.mmap_data = pa.mmap_data;
	ev->want.comm = pa.comm;
	ev->want.comm_exec = pa.comm_exec;
	ev->want.task = pa.task;
	ev->on_exec = pa.disabled && pa.enable_on_exec;
	/*
	 * pmuctx's own state: a leader's is perf's; a member counts only
	 * while its leader does, and starts with it at exec.
	 */
	if (!leader) {
		if (pa.disabled)
			m.attr.flags |= PMUCTX_ATTR_DISABLED;
		if (ev->on_exec)
			m.attr.flags |= PMUCTX_ATTR_ENABLE_ON_EXEC;
	} else if (leader->on_exec) {
		m.attr.flags |= PMUCTX_ATTR_DISABLED;
		if (ev->own_on || ev->on_exec) {
			m.attr.flags |= PMUCTX_ATTR_ENABLE_ON_EXEC;
			ev->on_exec = true;
		}
	} else if (!(ev->own_on && leader->own_on)) {
		m.attr.flags |= PMUCTX_ATTR_DISABLED;
		if (ev->on_exec && leader->own_on)
			m.attr.flags |= PMUCTX_ATTR_ENABLE_ON_EXEC;
	}
	if (idle) {
		/* the first CPU's event counts the task; pmuctx never enables this one */
		m.attr.flags |= PMUCTX_ATTR_DISABLED;
		m.attr.flags &= ~(__u64)PMUCTX_ATTR_ENABLE_ON_EXEC;
		ev->idle = true;
		ev->on_exec = false;
	}

	fd = pmuctx_counter_open(&m.attr, pid, leader ? group_fd : -1, m.open_flags);
	if (fd < 0) {
		err = errno;
		shim_debug("type %u config %#llx pid %d: pmuctx refused: %s\n", pa.type,
			   (unsigned long long)pa.config, pid, pmuctx_open_strerror(err));
		free(ev);
		errno = perf_errno(err);
		return -1;
	}
	ev->fd = fd;
	ev->refs = 1;
	ev->leader = leader ? leader->leader : fd;
	if (ev->sampling)
		real_ioctl(fd, PMUCTX_IOC_ID, &ev->fmt.id);
	if (table_put(fd, ev)) {
		real_close(fd);
		sample_batch_free(ev->batch);
		free(ev);
		errno = ENOMEM;
		return -1;
	}
	shim_debug("type %u config %#llx pid %d: pmuctx fd %d (type %u config %#llx flags %#llx)\n",
		   pa.type, (unsigned long long)pa.config, pid, fd, m.attr.type,
		   (unsigned long long)m.attr.config, (unsigned long long)m.attr.flags);
	return fd;
}

SHIM_EXPORT long syscall(long number, ...)
{
	long a[6];
	va_list ap;
	int i;

	shim_init();

	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == __NR_perf_event_open)
		return shim_open((struct perf_event_attr *)a[0], (pid_t)a[1], (int)a[2], (int)a[3],
				 (unsigned long)a[4]);
	return real_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Programs that call a perf_event_open of their own making find this one first. */
SHIM_EXPORT int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
				unsigned long flags)
{
	shim_init();
	return shim_open(attr, pid, cpu, group_fd, flags);
}

/*
 * perf's layout with PERF_FORMAT_LOST: a zero after each value (and its
 * id); pmuctx loses nothing, having no ring buffer.  @raw is pmuctx's
 * read of @n bytes in the same layout without them.
 */
static ssize_t add_lost(uint64_t fmt, const uint64_t *raw, size_t n, uint64_t *out, size_t count)
{
	size_t in = 0, o = 0, words = n / sizeof(uint64_t), nr = 1, i, need;
	size_t per_value = 1 + !!(fmt & PERF_FORMAT_ID);

	if (fmt & PERF_FORMAT_GROUP) {
		nr = raw[in];
		out[o++] = raw[in++];
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			out[o++] = raw[in++];
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			out[o++] = raw[in++];
		need = (o + nr * (per_value + 1)) * sizeof(uint64_t);
		if (need > count) {
			errno = ENOSPC;
			return -1;
		}
		for (i = 0; i < nr && in + per_value <= words; i++) {
			memcpy(&out[o], &raw[in], per_value * sizeof(uint64_t));
			o += per_value;
			in += per_value;
			out[o++] = 0;
		}
		return o * sizeof(uint64_t);
	}
	if ((words + 1) * sizeof(uint64_t) > count) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(out, raw, n);
	out[words] = 0;
	return (words + 1) * sizeof(uint64_t);
}

static ssize_t shim_read(int fd, struct shim_event *ev, void *buf, size_t count)
{
	uint64_t *raw;
	ssize_t n;

	if (!(ev->read_format & PERF_FORMAT_LOST))
		return real_read(fd, buf, count);
	raw = malloc(count ? count : 1);
	if (!raw) {
		errno = ENOMEM;
		return -1;
	}
	n = real_read(fd, raw, count);
	if (n > 0)
		n = add_lost(ev->read_format, raw, n, buf, count);
	free(raw);
	return n;
}

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t count)
{
	struct shim_event *ev = lookup(fd);

	shim_init();

	if (!ev)
		return real_read(fd, buf, count);
	return shim_read(fd, ev, buf, count);
}

/* _FORTIFY_SOURCE's read (Debian builds perf with it). */
SHIM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t count, size_t buflen)
{
	if (count > buflen)
		abort();	/* glibc's __chk_fail, whose symbol is private */
	return read(fd, buf, count);
}

/* PERF_EVENT_IOC_ENABLE/DISABLE of @ev (with PERF_IOC_FLAG_GROUP: its group). */
static int shim_enable(struct shim_event *ev, bool on, unsigned long arg)
{
	sigset_t saved;
	int i;

	if (arg & ~(unsigned long)PERF_IOC_FLAG_GROUP) {
		errno = EINVAL;
		return -1;
	}
	shim_lock(&table_lock, &saved);
	if (arg & PERF_IOC_FLAG_GROUP) {
		for (i = 0; i < table_len; i++) {
			if (table[i] && table[i]->leader == ev->leader) {
				table[i]->own_on = on;
				table[i]->on_exec = false;
			}
		}
	} else {
		ev->own_on = on;
		ev->on_exec = false;
		/* a member whose leader still waits for exec: the leader decides then */
		if (ev->leader == ev->fd) {
			for (i = 0; i < table_len; i++)
				if (table[i] && table[i]->leader == ev->fd)
					table[i]->on_exec = false;
		}
	}
	apply_group(ev->leader);
	shim_unlock(&table_lock, &saved);
	return 0;
}

/*
 * PERF_EVENT_IOC_SET_OUTPUT: @ev's records go to @out_fd's ring (-1: to
 * none), perf's rules: the event has no mapping of its own, @out_fd is a
 * sampling event of the same CPU with a ring.  perf record sends every
 * event of a CPU (or of a thread, --per-thread) to one ring.
 */
static int shim_set_output(struct shim_event *ev, int out_fd)
{
	struct shim_event *out = out_fd == -1 ? NULL : lookup(out_fd);
	struct perf_ring *r = NULL, *target = NULL;
	sigset_t saved;
	int err = 0;

	if (out_fd != -1 && !out) {
		/*
		 * A kernel event's ring the program mapped: a library ring
		 * from now on (kernel_rings.c); else no ring or no event.
		 */
		target = ev->sampling && kernel_ring_known(out_fd) ?
			 kernel_ring_adopt(out_fd) : NULL;
		if (!target) {
			errno = EINVAL;
			return -1;
		}
		shim_signals_end_reading();
	}
	shim_lock(&table_lock, &saved);
	if (out)
		target = out->ring;
	if (out == ev) {
		err = EINVAL;		/* perf: no circle */
	} else if (ev->ring && !ev->ring_is_output) {
		err = EBUSY;		/* perf: the event's own ring is mapped */
	} else if (out_fd != -1 && (!ev->sampling || !target || (out && out->idle != ev->idle))) {
		err = EINVAL;
	} else {
		r = __atomic_exchange_n(&ev->ring, NULL, __ATOMIC_ACQ_REL);
		if (r)
			__atomic_sub_fetch(&rings, 1, __ATOMIC_RELEASE);
		ev->ring_is_output = false;
		if (target) {
			perf_ring_get(target);
			ev->ring_is_output = true;
			__atomic_store_n(&ev->ring, target, __ATOMIC_RELEASE);
			__atomic_add_fetch(&rings, 1, __ATOMIC_RELEASE);
		}
	}
	shim_unlock(&table_lock, &saved);
	if (r) {
		drop_ring_hold(ev, r);
		__atomic_store_n(&ev->ring_busy, 0, __ATOMIC_RELEASE);
	}
	/* what it sampled before is the new ring's too */
	if (target && !err)
		drain_event(ev);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static int shim_ioctl(int fd, struct shim_event *ev, unsigned long request, unsigned long arg)
{
	switch (request) {
	case PERF_EVENT_IOC_ENABLE:
		return shim_enable(ev, true, arg);
	case PERF_EVENT_IOC_DISABLE:
		/* what was sampled before the disable is in the ring after it */
		if (ev->sampling)
			drain_event(ev);
		return shim_enable(ev, false, arg);
	case PERF_EVENT_IOC_REFRESH:
		/*
		 * perf enables the event for @arg more overflows, then disables
		 * it; pmuctx does not stop at a count, so the event stays on
		 * until the program disables it (PAPI's handler does first).
		 */
		if (!ev->sampling || ev->inherit) {
			errno = EINVAL;
			return -1;
		}
		return shim_enable(ev, true, 0);
	case PERF_EVENT_IOC_RESET:
		if (arg & ~(unsigned long)PERF_IOC_FLAG_GROUP) {
			errno = EINVAL;
			return -1;
		}
		return real_ioctl(fd, PMUCTX_IOC_RESET, arg ? PMUCTX_IOC_FLAG_GROUP : 0);
	case PERF_EVENT_IOC_ID:
		return real_ioctl(fd, PMUCTX_IOC_ID, arg);
	case PERF_EVENT_IOC_SET_OUTPUT:
		return shim_set_output(ev, (int)arg);
	case PERF_EVENT_IOC_PERIOD:
	case PERF_EVENT_IOC_SET_FILTER:
	case PERF_EVENT_IOC_PAUSE_OUTPUT:
	case PERF_EVENT_IOC_MODIFY_ATTRIBUTES:
		/* a pmuctx counter's period is fixed at its open; tracepoint requests */
		errno = EINVAL;
		return -1;
	case PERF_EVENT_IOC_SET_BPF:
	case PERF_EVENT_IOC_QUERY_BPF:
		errno = EOPNOTSUPP;
		return -1;
	default:
		/* pmuctx's own ioctls stay usable on the descriptor */
		return real_ioctl(fd, request, arg);
	}
}

/*
 * A kernel event sent to a library ring (a pmuctx event's, or a kernel
 * event's the library adopted): its records go there (kernel_rings.c).
 * To a kernel ring, or nowhere: the kernel's business.
 */
static int kernel_set_output(int fd, int out_fd)
{
	struct shim_event *out = lookup(out_fd);
	struct perf_ring *r = out ? __atomic_load_n(&out->ring, __ATOMIC_ACQUIRE) :
				    kernel_ring_adopted(out_fd);
	int err;

	if (out && !r) {
		errno = EINVAL;		/* perf: no ring to send to */
		return -1;
	}
	if (!r)
		return real_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, out_fd);
	err = kernel_ring_feed(fd, r, perf_ring_len(r));
	if (err) {
		errno = -err;
		return -1;
	}
	shim_debug("fd %d (the kernel's) writes into fd %d's ring\n", fd, out_fd);
	return 0;
}

/*
 * PERF_EVENT_IOC_MODIFY_ATTRIBUTES of a kernel event (perf's watchpoint
 * tests move a breakpoint): the kernel wants the new attr equal to the
 * event's but for what may change, so it gets the clock the event got
 * at its open (kernel_event_clock()).
 */
static int modify_kernel_event(int fd, const struct perf_event_attr *uattr)
{
	struct perf_event_attr a;

	if (!uattr || !uattr->size || uattr->size > sizeof(a))
		return real_ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, uattr);
	memset(&a, 0, sizeof(a));
	memcpy(&a, uattr, uattr->size);
	if (!kernel_event_clock(&a))
		return real_ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, uattr);
	return real_ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
}

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	struct shim_event *ev = lookup(fd);
	unsigned long arg;
	va_list ap;

	shim_init();

	va_start(ap, request);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (!ev && request == PERF_EVENT_IOC_SET_OUTPUT && kernel_ring_known(fd))
		return kernel_set_output(fd, (int)arg);
	if (!ev && request == PERF_EVENT_IOC_MODIFY_ATTRIBUTES && !route_kernel)
		return modify_kernel_event(fd, (const struct perf_event_attr *)arg);
	if (!ev)
		return real_ioctl(fd, request, arg);
	return shim_ioctl(fd, ev, request, arg);
}

/*
 * @ev's primary descriptor becomes @fd: for the event, and for its members
 * if it leads a group.  Under table_lock.
 */
static void set_primary(struct shim_event *ev, int fd)
{
	for (int i = 0; i < table_len; i++)
		if (table[i] && table[i]->leader == ev->fd)
			table[i]->leader = fd;
	ev->fd = fd;
}

/*
 * @fd no longer names its event (closed, or about to be replaced by
 * dup2/dup3).  The event ends with its last descriptor; a closed
 * leader's members then count on their own, as in perf and pmuctx.  When
 * the primary goes and a duplicate stays, the duplicate becomes the
 * primary, for the event and for its members.
 */
static void forget(int fd)
{
	sigset_t saved;
	struct shim_event *ev = lookup(fd), *gone = NULL;
	int i, next = -1;

	kernel_ring_closed(fd);
	if (!ev)
		return;
	shim_lock(&table_lock, &saved);
	if (table[fd] != ev)
		goto out;		/* another thread forgot it first */
	__atomic_store_n(&table[fd], NULL, __ATOMIC_RELEASE);
	if (--ev->refs == 0) {
		if (ev->leader == fd) {
			for (i = 0; i < table_len; i++)
				if (table[i] && table[i]->leader == fd)
					table[i]->leader = table[i]->fd;
		}
		gone = ev;
	} else if (ev->fd == fd) {
		for (i = 0; i < table_len && next < 0; i++)
			if (table[i] == ev)
				next = i;
		set_primary(ev, next);
	}
out:
	shim_unlock(&table_lock, &saved);
	if (gone) {
		release_ring(gone);
		sample_batch_free(gone->batch);
	}
	free(gone);
}

/* @newfd, just made a duplicate of @oldfd, names @oldfd's event too. */
static int dup_done(int oldfd, int newfd)
{
	sigset_t saved;
	struct shim_event *ev = lookup(oldfd);

	if (!ev || newfd < 0 || newfd == oldfd)
		return newfd;
	shim_lock(&table_lock, &saved);
	if (table[oldfd] == ev && !table_put_locked(newfd, ev)) {
		ev->refs++;
		/* the lowest descriptor is the primary: one rule, whatever the order */
		if (newfd < ev->fd)
			set_primary(ev, newfd);
		shim_unlock(&table_lock, &saved);
		return newfd;
	}
	shim_unlock(&table_lock, &saved);
	/* no room to remember it: a duplicate the shim cannot translate is not returned */
	real_close(newfd);
	errno = ENOMEM;
	return -1;
}

SHIM_EXPORT int close(int fd)
{
	shim_init();

	forget(fd);
	return real_close(fd);
}

/* glibc 2.34's close_range and closefrom: the events among them end too. */
SHIM_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int ret, i, len;

	shim_init();

	ret = real_close_range ? real_close_range(first, last, flags) :
				 (int)real_syscall(__NR_close_range, first, last, flags);
	if (ret || (flags & CLOSE_RANGE_CLOEXEC))
		return ret;
	len = __atomic_load_n(&table_len, __ATOMIC_ACQUIRE);
	for (i = first; i < len && (unsigned int)i <= last; i++)
		forget(i);
	return 0;
}

SHIM_EXPORT void closefrom(int lowfd)
{
	shim_init();

	if (lowfd < 0)
		lowfd = 0;
	if (real_closefrom)
		real_closefrom(lowfd);
	else
		real_syscall(__NR_close_range, lowfd, ~0U, 0);
	for (int i = lowfd; i < __atomic_load_n(&table_len, __ATOMIC_ACQUIRE); i++)
		forget(i);
}

SHIM_EXPORT int dup(int oldfd)
{
	shim_init();

	return dup_done(oldfd, real_dup(oldfd));
}

SHIM_EXPORT int dup2(int oldfd, int newfd)
{
	int ret;

	shim_init();

	ret = real_dup2(oldfd, newfd);
	if (ret < 0 || oldfd == newfd)
		return ret;
	forget(newfd);		/* the kernel closed what it named */
	return dup_done(oldfd, ret);
}

SHIM_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int ret;

	shim_init();

	ret = real_dup3(oldfd, newfd, flags);
	if (ret < 0)
		return ret;
	forget(newfd);
	return dup_done(oldfd, ret);
}

SHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
	unsigned long arg;
	va_list ap;
	int ret;

	shim_init();

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	ret = real_fcntl(fd, cmd, arg);
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && ret >= 0)
		return dup_done(fd, ret);
	if (ret == 0 && (cmd == F_SETSIG || (cmd == F_SETFL && (arg & O_ASYNC)))) {
		struct shim_event *ev = lookup(fd);

		if (ev && ev->sampling)
			shim_signal_announces_samples(cmd == F_SETSIG ? (int)arg : SIGIO);
	}
	return ret;
}

/*
 * glibc 2.28's name for it, which programs built with large-file support
 * call: on a 64-bit ABI the same function.
 */
SHIM_EXPORT __typeof__(fcntl) fcntl64 __attribute__((alias("fcntl")));

/*
 * PR_TASK_PERF_EVENTS_DISABLE/ENABLE: the events this process opened, as
 * the kernel does for the events a task owns; and the kernel's own.
 */
SHIM_EXPORT int prctl(int option, ...)
{
	sigset_t saved;
	unsigned long a[4];
	va_list ap;
	int i;

	shim_init();

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_TASK_PERF_EVENTS_DISABLE || option == PR_TASK_PERF_EVENTS_ENABLE) {
		bool on = option == PR_TASK_PERF_EVENTS_ENABLE;

		shim_lock(&table_lock, &saved);
		for (i = 0; i < table_len; i++) {
			if (table[i]) {
				table[i]->own_on = on;
				table[i]->on_exec = false;
			}
		}
		for (i = 0; i < table_len; i++)
			if (table[i] && table[i]->leader == i)
				apply_group(i);
		shim_unlock(&table_lock, &saved);
	}
	return real_prctl(option, a[0], a[1], a[2], a[3]);
}

/*
 * perf maps a page for every counting event, also one nothing can be read
 * from in user mode (a software event, another task's): its index is 0,
 * and the reader uses read().  The module maps its page only for the task
 * that holds a hardware instance (uapi.rst: ENODEV, EINVAL, ESRCH), so
 * for the others the program gets such a page of the library's own.
 */
static void *read_only_page(void *addr, size_t len, int prot, int flags)
{
	void *p;

	p = real_mmap(addr, len, prot | PROT_READ | PROT_WRITE,
		      flags | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	perf_page_init(p);
	if ((prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE) &&
	    mprotect(p, len, prot)) {
		munmap(p, len);
		return MAP_FAILED;
	}
	return p;
}

/*
 * A sampling event's mapping is perf's ring (ring.c); a counting event's
 * one page is the module's self-read page in perf's layout (the counter's
 * second page, uapi.rst), or else one that says read(); every other
 * mapping is the program's business.
 */
SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	sigset_t saved;
	struct shim_event *ev = (flags & MAP_ANONYMOUS) ? NULL : lookup(fd);
	struct perf_ring *had, *r;
	struct tracker *tr = NULL;
	void *p;

	shim_init();

	if (!ev) {
		p = real_mmap(addr, len, prot, flags, fd, off);
		/* a kernel event's ring: a pmuctx event sent to it adopts it */
		if (!off && !(flags & MAP_ANONYMOUS) && kernel_ring_known(fd))
			kernel_ring_mapped(fd, p, len, prot);
		return p;
	}
	if (off) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	/*
	 * A counting event's one page is its self-read page; more pages
	 * (1 + 2^n: PAPI maps three when it meant to sample) are a ring, as
	 * on perf, where every event has one: its header page says read()
	 * and no sample ever comes.
	 */
	if (!ev->sampling && len == (size_t)sysconf(_SC_PAGESIZE)) {
		/* perf's rule for every mapping of an event */
		if ((flags & MAP_TYPE) != MAP_SHARED &&
		    (flags & MAP_TYPE) != MAP_SHARED_VALIDATE) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		p = real_mmap(addr, len, prot, flags, fd, sysconf(_SC_PAGESIZE));
		if (p == MAP_FAILED && (errno == ENODEV || errno == EINVAL || errno == ESRCH))
			p = read_only_page(addr, len, prot, flags);
		if (p == MAP_FAILED)
			shim_debug("fd %d: mmap of %zu bytes of a counting event: %s\n", fd, len,
				   strerror(errno));
		return p;
	}
	/* an idle event has no samples to describe */
	if (!__atomic_load_n(&ev->ring, __ATOMIC_ACQUIRE) && ev->fmt.sideband && !ev->idle &&
	    !sideband_proc) {
		tr = tracker_open(&ev->want);
		if (!tr)
			shim_debug("fd %d: no dummy events for side-band records (%s): /proc\n", fd,
				   strerror(errno));
	}
	shim_lock(&table_lock, &saved);
	had = r = ev->ring;
	p = perf_ring_map(&r, &ev->fmt, tr, addr, len, prot, flags);
	if (p != MAP_FAILED && !had) {
		__atomic_store_n(&ev->ring, r, __ATOMIC_RELEASE);
		__atomic_add_fetch(&rings, 1, __ATOMIC_RELEASE);
	}
	shim_unlock(&table_lock, &saved);
	/* samples taken before the mapping are perf's too: they wait in the module */
	if (p != MAP_FAILED && !had) {
		shim_signals_end_reading();
		drain_event(ev);
	}
	if (p == MAP_FAILED)
		shim_debug("fd %d: mmap of a %zu-byte ring: %s\n", fd, len,
			   strerror(errno));
	return p;
}

/* On 64-bit ABIs one function under two names, as in glibc. */
SHIM_EXPORT __typeof__(mmap) mmap64 __attribute__((alias("mmap")));

/*
 * A perf reader polls its event and then reads the ring.  perf's poll says
 * POLLIN once for the records written since the last poll; the module's
 * says it while samples wait in the module.  So the samples a poll wakes
 * for are written to the ring before it returns, and an event whose
 * records another path wrote (its signal, a disable) reads ready once.
 */
static int poll_pending_events(struct pollfd *fds, nfds_t nfds)
{
	int marked = 0;

	if (!__atomic_load_n(&rings, __ATOMIC_ACQUIRE))
		return 0;
	for (nfds_t i = 0; i < nfds; i++) {
		struct shim_event *ev = (fds[i].events & POLLIN) ? lookup(fds[i].fd) : NULL;

		if (ev && __atomic_exchange_n(&ev->poll_pending, 0, __ATOMIC_ACQ_REL)) {
			fds[i].revents |= POLLIN;
			marked++;
		}
	}
	return marked;
}

static int poll_done(struct pollfd *fds, nfds_t nfds, int ret, const struct pollfd *pending)
{
	bool had_news = false;
	int ready = 0;

	for (nfds_t i = 0; pending && i < nfds; i++)
		had_news |= pending[i].revents != 0;
	if (ret < 0) {
		/* the news poll_begin took from the events are still the caller's */
		if (!had_news)
			return ret;
		for (nfds_t i = 0; i < nfds; i++)
			fds[i].revents = 0;
	}
	if (ret > 0)
		drain_all();
	poll_pending_events(fds, nfds);
	for (nfds_t i = 0; i < nfds; i++) {
		if (pending && (pending[i].revents & POLLIN))
			fds[i].revents |= POLLIN;
		ready += fds[i].revents != 0;
	}
	return ready;
}

/*
 * Before poll and ppoll: the events whose rings have news for the caller,
 * marked in a copy of @fds (*@pending); when there are any, the real
 * call only looks (timeout 0).
 */
static int poll_begin(struct pollfd *fds, nfds_t nfds, struct pollfd **pending)
{
	*pending = NULL;
	if (!__atomic_load_n(&rings, __ATOMIC_ACQUIRE) || !nfds)
		return 0;
	*pending = malloc(nfds * sizeof(**pending));
	if (!*pending)
		return 0;
	for (nfds_t i = 0; i < nfds; i++) {
		(*pending)[i] = fds[i];
		(*pending)[i].revents = 0;
	}
	return poll_pending_events(*pending, nfds);
}

SHIM_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	struct pollfd *pending;
	int ret;

	shim_init();

	ret = real_poll(fds, nfds, poll_begin(fds, nfds, &pending) ? 0 : timeout);
	ret = poll_done(fds, nfds, ret, pending);
	free(pending);
	return ret;
}

SHIM_EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		abort();
	return poll(fds, nfds, timeout);
}

SHIM_EXPORT int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
		      const sigset_t *sigmask)
{
	static const struct timespec zero;
	struct pollfd *pending;
	int ret;

	shim_init();

	ret = real_ppoll(fds, nfds, poll_begin(fds, nfds, &pending) ? &zero : timeout, sigmask);
	ret = poll_done(fds, nfds, ret, pending);
	free(pending);
	return ret;
}

SHIM_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
			    const sigset_t *sigmask, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		abort();
	return ppoll(fds, nfds, timeout, sigmask);
}

/* select, pselect, epoll_wait: descriptors unknown, so every ring is written. */
static int waited(int ret)
{
	if (ret > 0)
		drain_all();
	return ret;
}

SHIM_EXPORT int select(int nfds, fd_set *rfds, fd_set *wfds, fd_set *efds, struct timeval *timeout)
{
	shim_init();

	return waited(real_select(nfds, rfds, wfds, efds, timeout));
}

SHIM_EXPORT int pselect(int nfds, fd_set *rfds, fd_set *wfds, fd_set *efds,
			const struct timespec *timeout, const sigset_t *sigmask)
{
	shim_init();

	return waited(real_pselect(nfds, rfds, wfds, efds, timeout, sigmask));
}

SHIM_EXPORT int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	shim_init();

	return waited(real_epoll_wait(epfd, events, maxevents, timeout));
}

SHIM_EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
			    const sigset_t *sigmask)
{
	shim_init();

	return waited(real_epoll_pwait(epfd, events, maxevents, timeout, sigmask));
}
