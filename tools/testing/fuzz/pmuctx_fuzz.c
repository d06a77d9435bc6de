// SPDX-License-Identifier: GPL-2.0
/*
 * pmuctx_fuzz: a seeded, time-bounded fuzzer of the pmuctx ABI.
 *
 * Several worker processes (half of them as uid 65534 when started as root),
 * each with several threads, run random but mostly valid operations on
 * /dev/pmuctx and on shared counter fds: opens with every attr field and
 * target kind, reads and ioctls with good and bad sizes and pointers, poll,
 * mmap, fcntl, dup/close, fork, threads, exec, kill, CPU hopping; and
 * storms: threads and children that make watchpoint hits, PMU overflows,
 * rotations and swaps while counters are opened, failed, closed, mapped
 * and unmapped on them, and while they fork, exec and exit.
 *
 * Every operation and its arguments come from a per-stream PRNG seeded from
 * --seed, the worker and the thread, never from results, so a seed replays
 * the same operation stream (--verbose prints it).  Results are checked
 * against Documentation/uapi.rst; a violation of the ABI fails the run
 * (exit 1), errnos are counted per operation and printed at the end.
 *
 * Bounded by --ops and --seconds, whichever comes first; each worker has an
 * alarm() watchdog and the supervisor kills stragglers, so it never hangs.
 * Kernel splats are judged by scripts/vm-run, not here.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <linux/pmuctx.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define NSLOTS		32	/* counter fds a worker shares among threads */
#define NKIDS		6	/* sleeping children used as targets */
#define NDEAD		16	/* reaped pids remembered as dead targets */
#define NMAPS		8
#define NERR		134	/* errno values counted; 0 = success */
#define BIGBUF		(64 * 1024)
#define TREE_ROOM	65536
#define MAX_WORKERS	16
#define EXEC_VIOLATION	3	/* exit status of a child that saw a violation */

/* ---- operations ---- */

enum op {
	OP_OPEN, OP_READ, OP_CTL, OP_ID, OP_STATS, OP_TREE, OP_SAMPLES,
	OP_BADIOCTL, OP_INFO, OP_POLL, OP_MMAP, OP_MUNMAP, OP_FCNTL, OP_DUP,
	OP_CLOSE, OP_FORK, OP_SLEEPER, OP_KILL, OP_REAP, OP_THREAD, OP_EXEC,
	OP_AFFINITY, OP_WORK, OP_RANGESTORM, OP_PMUSTORM, OP_SWAPSTORM, NR_OPS
};

static const struct {
	const char *name;
	int weight;
	bool child_ok;	/* may run in a forked or exec'd child */
} ops[NR_OPS] = {
	[OP_OPEN]	= { "open",	 72, true },
	[OP_READ]	= { "read",	 54, true },
	[OP_CTL]	= { "ctl",	 30, true },
	[OP_ID]		= { "id",	  9, true },
	[OP_STATS]	= { "stats",	 12, true },
	[OP_TREE]	= { "tree",	 15, true },
	[OP_SAMPLES]	= { "samples",	  9, true },
	[OP_BADIOCTL]	= { "badioctl",	  9, true },
	[OP_INFO]	= { "info",	  6, true },
	[OP_POLL]	= { "poll",	  9, true },
	[OP_MMAP]	= { "mmap",	  9, true },
	[OP_MUNMAP]	= { "munmap",	  6, false },
	[OP_FCNTL]	= { "fcntl",	  9, true },
	[OP_DUP]	= { "dup",	 12, true },
	[OP_CLOSE]	= { "close",	 24, true },
	[OP_FORK]	= { "fork",	  2, false },
	[OP_SLEEPER]	= { "sleeper",	  1, false },
	[OP_KILL]	= { "kill",	  1, false },
	[OP_REAP]	= { "reap",	  6, false },
	[OP_THREAD]	= { "thread",	  1, false },
	[OP_EXEC]	= { "exec",	  1, false },
	[OP_AFFINITY]	= { "affinity",	  6, true },
	[OP_WORK]	= { "work",	  9, true },
	/* events driven into objects being built and torn down: each a storm */
	[OP_RANGESTORM]	= { "rangestorm", 1, false },
	[OP_PMUSTORM]	= { "pmustorm",	  1, false },
	[OP_SWAPSTORM]	= { "swapstorm",  1, false },
};

/*
 * Classes --exclude (or --no-NAME) takes: every operation name, and these
 * argument classes.
 */
enum cls {
	CL_FAKE_PIDFD = NR_OPS,	/* FIFO / regular file named "[pidfd]" */
	CL_UNPRIV,		/* workers as uid 65534 */
	CL_PID1,		/* pid 1 as a target */
	CL_TINY_PERIOD,		/* sample_period below 1000 */
	CL_INHERIT_STAT,	/* PMUCTX_ATTR_INHERIT_STAT */
	CL_MONOTONIC,		/* the "counter never decreases" check */
	CL_SAMPLING,		/* any sample_period */
	CL_COUNTER_LIMIT,	/* lowering max_counters_per_task for EMFILE */
	NR_CLASSES
};

static const char *const class_names[NR_CLASSES - NR_OPS] = {
	"fake-pidfd", "unpriv", "pid1", "tiny-period", "inherit-stat",
	"monotonic", "sampling", "counter-limit",
};

/* What the storms made happen, counted over the run (printed at the end). */
enum ev {
	EV_RANGE_OPENS, EV_RANGE_OPENS_TOUCHED, EV_TOUCHES_IN_OPENS, EV_RANGE_HITS,
	EV_RANGE_OVERFLOWS, EV_HITS_CHECKED, EV_PMU_OPENS, EV_PMU_OVERFLOWS, EV_MMAPS,
	EV_ROTATIONS, EV_SWAPS, EV_EBUSY, EV_EMFILE, EV_BAD_LEADER, EV_EXITS,
	EV_CHILD_OPENS, EV_MAPPED_SWAPS, NR_EV
};

static const char *const ev_names[NR_EV] = {
	"range-opens", "range-opens-target-touched", "target-touches-during-opens",
	"range-hits-counted", "range-samples", "range-counts-checked",
	"pmu-sampling-opens", "pmu-overflows", "self-mmaps", "rotations", "swaps",
	"ebusy", "emfile", "foreign-leader-einval", "exits-under-counters",
	"opens-on-spinning-child", "mapped-family-swaps",
};

/* ---- shared state (MAP_SHARED, survives fork) ---- */

struct shared {
	unsigned long errs[NR_OPS][NERR];
	unsigned long ops;		/* every operation, children included */
	unsigned long violations;
	unsigned long ev[NR_EV];
	int stop;
	pid_t workers[MAX_WORKERS];
	pid_t top;
};

static struct shared *sh;

/* ---- configuration ---- */

static uint64_t opt_seed = 1;
static unsigned long opt_ops = 100000;
static unsigned int opt_seconds = 60;
static unsigned int opt_stuck_after = 45;	/* past the deadline: dump tasks */
static int opt_workers = 4;
static int opt_threads = 2;
static int opt_verbose;
static bool excluded[NR_CLASSES];
static struct timespec t_start;
static double deadline;		/* seconds since t_start */
static bool have_hw;		/* PMUCTX_FEAT_HARDWARE */
/* Hardware counters sample (PMUCTX_FEAT_OVERFLOW) and map (not PERF_EVENTS). */
static bool pmu_samples, pmu_freq, self_reads;
/*
 * The shared backend (PMUCTX_FEAT_PERF_SHARED): every hardware open may
 * meet the system-wide max_borrowed (ENOSPC, whatever other workers
 * borrowed), and PINNED needs CAP_PERFMON (EPERM).
 */
static bool pmu_shared;
static unsigned int range_kinds;	/* PMUCTX_INFO: kinds range counters take */
static bool range_samples;		/* PMUCTX_FEAT_RANGE_SAMPLES */
static unsigned int info_range_data_nr;	/* data watchpoints */
static unsigned int info_nr_hw;		/* PMU counters: general and fixed */
/* max_counters_per_task as set for the run (0: not ours to rely on) */
static unsigned int counter_limit;
#define COUNTER_LIMIT	48
/* What range counters watch: the streams' own accesses land here. */
static volatile uint64_t watched[512] __attribute__((aligned(4096)));
static bool allow_kernel;
static bool in_vm;		/* pid 1 is the test VM's busybox init */
static int ncpus;
static const char *self_exe = "/proc/self/exe";

/* ---- per worker ---- */

enum slot_kind { SK_EMPTY, SK_COUNTER };

struct slot {
	pthread_mutex_t lock;
	unsigned int gen;	/* bumped by every close and replace */
	int fd;
	int kind;
	bool attr_known;	/* false for fds inherited across exec */
	bool member;		/* opened with a group leader */
	struct pmuctx_attr attr;
};

/*
 * The highest value seen of one counter, and the ticket taken after that
 * read returned: only a read that started after it must not see less.
 */
struct mono {
	uint64_t id, epoch, value, done;
};

struct worker {
	int idx;
	bool unpriv;
	int dev;
	int fifo, regf, procf;	/* fake pidfds and other non-counter fds */
	char dir[64];
	char *bad;		/* three pages: read-write, read-only, none */
	struct pmuctx_tree_entry *ents;	/* TREE_ROOM entries + one */
	struct slot slots[NSLOTS];
	pthread_mutex_t lock;	/* kids, dead, pidfds, maps, mono */
	pid_t kids[NKIDS];
	int kid_pidfd[NKIDS];
	pid_t dead[NDEAD];
	int dead_pidfd[NDEAD];
	unsigned int ndead;
	void *maps[NMAPS];
	size_t maplen[NMAPS];
	struct mono mono[512];
	unsigned long reset_started, reset_done;
	uint64_t mono_ticket;
	int transient;		/* live transient threads */
	pid_t tids[8];		/* persistent threads' tids */
	unsigned long closes;	/* pidfds closed: their numbers may be reused */
};

static struct worker W;

/*
 * fork() copies the fd table before the memory: a slot changed in between
 * would name an fd the child does not have.  Slot changes hold this for
 * reading, fork for writing.
 */
static pthread_rwlock_t fork_lock;

struct stream {
	uint64_t rng;
	int w, t;
	unsigned long opno;
	bool child;	/* a forked or exec'd child: no locks, no resets */
	bool exec_child;
	char tag[48];
};

/* ---- small helpers ---- */

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct stream *s)
{
	return splitmix(&s->rng);
}

static uint64_t below(struct stream *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static bool chance(struct stream *s, int percent)
{
	return below(s, 100) < (uint64_t)percent;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec - t_start.tv_sec) + (ts.tv_nsec - t_start.tv_nsec) / 1e9;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

static void viol(struct stream *s, const char *fmt, ...)
{
	char buf[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	say("VIOLATION [%s #%lu] seed=%llu: %s", s->tag, s->opno,
	    (unsigned long long)opt_seed, buf);
	if (sh)
		__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
	else
		s->exec_child = true;	/* exec'd child: report by exit status */
	if (s->exec_child)
		_exit(EXEC_VIOLATION);
}

static void record(enum op op, long ret, int err)
{
	int e = ret < 0 ? err : 0;

	if (!sh)
		return;
	if (e < 0 || e >= NERR)
		e = NERR - 1;
	__atomic_add_fetch(&sh->errs[op][e], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sh->ops, 1, __ATOMIC_RELAXED);
}

static void lock(struct stream *s, pthread_mutex_t *m)
{
	if (!s->child)
		pthread_mutex_lock(m);
}

static void unlock(struct stream *s, pthread_mutex_t *m)
{
	if (!s->child)
		pthread_mutex_unlock(m);
}

/* ---- expectations ---- */

struct expect {
	uint64_t ok[3];		/* allowed errnos, a bitmap */
	bool must_fail;
	bool strict;		/* errno must be in ok[] */
};

static void allow(struct expect *e, int err)
{
	e->ok[err / 64] |= 1ULL << (err % 64);
}

static bool allowed(const struct expect *e, int err)
{
	return err >= 0 && err < 192 && (e->ok[err / 64] >> (err % 64)) & 1;
}

static void need(struct expect *e, int err)	/* an error that must happen */
{
	allow(e, err);
	e->must_fail = true;
}

static void expect_init(struct expect *e)
{
	memset(e, 0, sizeof(*e));
	e->strict = true;
	allow(e, ENOMEM);
}

static const char *ename(int e)
{
	static const char *const n[] = {
		[0] = "ok", [EPERM] = "EPERM", [ENOENT] = "ENOENT",
		[ESRCH] = "ESRCH", [EINTR] = "EINTR", [EBADF] = "EBADF",
		[ECHILD] = "ECHILD", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM",
		[EACCES] = "EACCES", [EFAULT] = "EFAULT", [EBUSY] = "EBUSY",
		[EEXIST] = "EEXIST", [ENODEV] = "ENODEV", [EINVAL] = "EINVAL",
		[ENFILE] = "ENFILE", [EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY",
		[ENOSPC] = "ENOSPC", [ESPIPE] = "ESPIPE", [ERANGE] = "ERANGE",
		[E2BIG] = "E2BIG", [EOPNOTSUPP] = "EOPNOTSUPP",
		[EOVERFLOW] = "EOVERFLOW", [ENOSYS] = "ENOSYS",
	};
	static __thread char buf[16];

	if (e >= 0 && e < (int)(sizeof(n) / sizeof(n[0])) && n[e])
		return n[e];
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

static void judge(struct stream *s, const char *what, long ret, int err,
		  const struct expect *e)
{
	char set[256] = "";
	int i, n = 0;

	if (ret >= 0 && e->must_fail) {
		viol(s, "%s succeeded (%ld) where it must fail", what, ret);
		return;
	}
	if (ret < 0 && e->strict && !allowed(e, err)) {
		for (i = 0; i < 192 && n < (int)sizeof(set) - 16; i++)
			if (allowed(e, i))
				n += snprintf(set + n, sizeof(set) - n, " %s", ename(i));
		viol(s, "%s failed with %s, documented here:%s", what, ename(err), set);
	}
}

/* ---- bad pointers ---- */

enum ptr_kind { P_GOOD, P_NULL, P_NONE, P_RO, P_KERNEL, P_STRADDLE, NR_PTR };

/*
 * The ioctl's struct itself is at a bad address: that alone decides.  A
 * read-only page holds zeros (size 0: EINVAL) or faults; anything else
 * faults.
 */
static void expect_bad_struct(struct expect *e, enum ptr_kind pk)
{
	*e = (struct expect){ 0 };
	e->strict = true;
	if (pk == P_RO) {
		allow(e, EINVAL);
		allow(e, EFAULT);
		e->must_fail = true;
	} else {
		need(e, EFAULT);
	}
}

static const char *const ptr_names[NR_PTR] = {
	"good", "NULL", "unmapped", "readonly", "kernel", "straddle",
};

static enum ptr_kind pick_ptr(struct stream *s)
{
	if (chance(s, 85))
		return P_GOOD;
	return 1 + below(s, NR_PTR - 1);
}

/* A pointer for @len bytes of kind @k; @good is used for P_GOOD. */
static void *ptr_of(enum ptr_kind k, void *good, size_t len)
{
	long pg = 4096;

	switch (k) {
	case P_GOOD:
		return good;
	case P_NULL:
		return NULL;
	case P_NONE:
		return W.bad + 2 * pg;
	case P_RO:
		return W.bad + pg;
	case P_KERNEL:
		return (void *)(uintptr_t)0xffff800000001000ULL;
	case P_STRADDLE:	/* runs from the writable page into the readonly one */
		return W.bad + pg - (len > 8 ? len / 2 : 4);
	default:
		return NULL;
	}
}

static bool ptr_faults(enum ptr_kind k)	/* no byte readable or writable */
{
	return k == P_NULL || k == P_NONE || k == P_KERNEL;
}

/* ---- slots ---- */

struct snap {
	int idx;
	int fd;
	unsigned int gen;
	int kind;
	bool attr_known, member;
	struct pmuctx_attr attr;
};

static void snap_slot(struct stream *s, int idx, struct snap *sn)
{
	struct slot *sl = &W.slots[idx];

	lock(s, &sl->lock);
	sn->idx = idx;
	sn->fd = sl->fd;
	sn->gen = sl->gen;
	sn->kind = sl->kind;
	sn->attr_known = sl->attr_known;
	sn->member = sl->member;
	sn->attr = sl->attr;
	unlock(s, &sl->lock);
}

/* The slot still holds the counter the snapshot saw. */
static bool snap_stable(struct stream *s, const struct snap *sn)
{
	struct slot *sl = &W.slots[sn->idx];
	bool same;

	lock(s, &sl->lock);
	same = sl->gen == sn->gen && sn->kind == SK_COUNTER && sn->attr_known;
	unlock(s, &sl->lock);
	return same;
}

static void slot_put(struct stream *s, int idx, int fd, const struct pmuctx_attr *a,
		     bool known, bool member)
{
	struct slot *sl = &W.slots[idx];

	if (!s->child)
		pthread_rwlock_rdlock(&fork_lock);
	lock(s, &sl->lock);
	if (sl->kind != SK_EMPTY) {
		close(sl->fd);
		__atomic_add_fetch(&W.closes, 1, __ATOMIC_ACQ_REL);
	}
	sl->fd = fd;
	sl->kind = SK_COUNTER;
	sl->attr_known = known;
	sl->member = member;
	if (a)
		sl->attr = *a;
	sl->gen++;
	unlock(s, &sl->lock);
	if (!s->child)
		pthread_rwlock_unlock(&fork_lock);
}

/*
 * A file descriptor for a counter operation: mostly a counter slot's, else
 * /dev/pmuctx, a FIFO, a closed number or garbage.  *sn describes it.
 */
static int pick_fd(struct stream *s, struct snap *sn, const char **desc)
{
	int r = below(s, 100), i, idx[3];

	for (i = 0; i < 3; i++)
		idx[i] = below(s, NSLOTS);
	for (i = 0; i < 3; i++) {
		snap_slot(s, idx[i], sn);
		if (sn->kind == SK_COUNTER)
			break;
	}
	*desc = "slot";
	if (r < 88) {
		if (sn->kind == SK_COUNTER)
			return sn->fd;
		*desc = "empty-slot";
		sn->kind = SK_EMPTY;
		return 1000 + sn->idx;	/* never open */
	}
	sn->kind = SK_EMPTY;
	if (r < 92) {
		*desc = "dev";
		return W.dev;
	}
	if (r < 95) {
		*desc = "fifo";
		return W.fifo;
	}
	if (r < 97) {
		*desc = "closed";
		return 999;
	}
	*desc = "negative";
	return -1 - (int)below(s, 1000);
}

/* ---- the monotonic check: a counter's value never drops without reset ---- */

/*
 * Threads read the same counter concurrently, and a reader may be
 * preempted between its read and its check: two reads are ordered only
 * when one returned before the other started.  Tickets from one counter
 * order them (a start ticket is taken before the read, a done ticket after
 * it returned, so both err on the safe side).
 */
static void mono_begin(uint64_t *s0, uint64_t *d0, uint64_t *start)
{
	*s0 = __atomic_load_n(&W.reset_started, __ATOMIC_ACQUIRE);
	*d0 = __atomic_load_n(&W.reset_done, __ATOMIC_ACQUIRE);
	*start = __atomic_add_fetch(&W.mono_ticket, 1, __ATOMIC_SEQ_CST);
}

static bool mono_valid(uint64_t s0, uint64_t d0)
{
	return s0 == d0 &&
	       __atomic_load_n(&W.reset_started, __ATOMIC_ACQUIRE) == s0 &&
	       __atomic_load_n(&W.reset_done, __ATOMIC_ACQUIRE) == d0;
}

static void mono_check(struct stream *s, uint64_t id, uint64_t value, uint64_t epoch,
		       uint64_t start, const struct pmuctx_attr *a)
{
	struct mono *m = &W.mono[id % 512];
	uint64_t old = 0, done;
	bool bad = false;

	if (s->child || excluded[CL_MONOTONIC])
		return;
	done = __atomic_add_fetch(&W.mono_ticket, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&W.lock);
	if (m->id == id && m->epoch == epoch) {
		if (value < m->value && m->done < start) {
			bad = true;
			old = m->value;
		} else if (value >= m->value) {
			m->value = value;
			m->done = done;
		}
	} else {
		m->id = id;
		m->epoch = epoch;
		m->value = value;
		m->done = done;
	}
	pthread_mutex_unlock(&W.lock);
	if (bad)
		viol(s, "counter id %llu (config %llu flags %#llx fmt %#llx) went down from %llu to %llu without a reset",
		     (unsigned long long)id, (unsigned long long)a->config,
		     (unsigned long long)a->flags, (unsigned long long)a->read_format,
		     (unsigned long long)old, (unsigned long long)value);
}

/* ---- targets ---- */

enum tgt {
	T_SELF, T_SELF_PID, T_THREAD, T_KID, T_PARENT, T_SIBLING, T_PID1,
	T_DEAD, T_NEG, T_HUGE, T_KTHREAD,
	/* with PMUCTX_OPEN_PIDFD */
	T_PIDFD_SELF, T_PIDFD_KID, T_PIDFD_DEAD, T_PIDFD_FIFO, T_PIDFD_REG,
	T_PIDFD_DEV, T_PIDFD_COUNTER, T_PIDFD_PROC, T_PIDFD_CLOSED, T_PIDFD_NEG,
	NR_TGT
};

static const char *const tgt_names[NR_TGT] = {
	"self", "self-pid", "thread", "kid", "parent", "sibling", "pid1",
	"dead", "negative", "huge", "kthread", "pidfd-self", "pidfd-kid",
	"pidfd-dead", "pidfd-fifo", "pidfd-regfile", "pidfd-dev",
	"pidfd-counter", "pidfd-proc", "pidfd-closed", "pidfd-negative",
};

static const int tgt_weight[NR_TGT] = {
	40, 5, 5, 12, 2, 3, 2, 3, 1, 1, 1,
	4, 4, 2, 2, 2, 1, 1, 1, 1, 1,
};

static enum tgt pick_target(struct stream *s)
{
	int total = 0, i, r;

	for (i = 0; i < NR_TGT; i++)
		total += tgt_weight[i];
	for (;;) {
		r = below(s, total);
		for (i = 0; i < NR_TGT; i++) {
			r -= tgt_weight[i];
			if (r < 0)
				break;
		}
		if ((i == T_PIDFD_FIFO || i == T_PIDFD_REG) && excluded[CL_FAKE_PIDFD])
			continue;
		if (i == T_PID1 && excluded[CL_PID1])
			continue;
		if (s->child && (i == T_KID || i == T_PIDFD_KID || i == T_DEAD ||
				 i == T_PIDFD_DEAD))
			continue;
		return i;
	}
}

/*
 * Resolve a target kind into (target, open flags); add its errnos to @e.
 * *dead_pid is set for T_DEAD so the caller can confirm the pid stayed free.
 */
static int target_of(struct stream *s, enum tgt t, unsigned int *oflags,
		     struct expect *e, pid_t *dead_pid, int *pick)
{
	bool priv = !W.unpriv && geteuid() == 0;
	int k = *pick;
	pid_t p;

	*dead_pid = 0;
	switch (t) {
	case T_SELF:
		return 0;
	case T_SELF_PID:
		return getpid();
	case T_THREAD:
		p = W.tids[k % 8];
		if (!p || s->child)
			return 0;
		allow(e, ESRCH);
		return p;
	case T_KID:
		lock(s, &W.lock);
		p = W.kids[k % NKIDS];
		unlock(s, &W.lock);
		if (!p)
			return 0;
		allow(e, ESRCH);
		return p;
	case T_PARENT:
		p = sh ? sh->top : getppid();
		allow(e, ESRCH);
		if (!priv && !s->exec_child)
			need(e, EACCES);
		else
			allow(e, EACCES);
		return p;
	case T_SIBLING:
		p = sh ? sh->workers[k % opt_workers] : 0;
		if (!p || p == getpid())
			return 0;
		allow(e, ESRCH);
		if (!priv && !s->child)
			need(e, EACCES);
		else
			allow(e, EACCES);
		return p;
	case T_PID1:
		if (priv && !in_vm)	/* never count the host's init */
			return 0;
		if (!priv)
			need(e, EACCES);
		return 1;
	case T_DEAD:
		lock(s, &W.lock);
		p = W.dead[k % NDEAD];
		unlock(s, &W.lock);
		if (!p)
			return 0;
		*dead_pid = p;
		need(e, ESRCH);
		return p;
	case T_NEG:
		need(e, EINVAL);
		return -1 - k % 100000;
	case T_HUGE:
		need(e, ESRCH);
		return 4194304 + k % 1000000;	/* above PID_MAX_LIMIT */
	case T_KTHREAD:
		need(e, EINVAL);	/* pid 2 is kthreadd */
		return 2;
	default:
		break;
	}

	*oflags |= PMUCTX_OPEN_PIDFD;
	switch (t) {
	case T_PIDFD_SELF:
		p = syscall(SYS_pidfd_open, getpid(), 0);
		*pick = p;	/* the caller closes it */
		if (p < 0)
			return 0;
		return p;
	case T_PIDFD_KID:
		lock(s, &W.lock);
		p = W.kid_pidfd[k % NKIDS];
		unlock(s, &W.lock);
		if (p <= 0) {
			*oflags &= ~PMUCTX_OPEN_PIDFD;
			return 0;
		}
		/* A kid can exit and be replaced meanwhile: the fd too. */
		allow(e, ESRCH);
		allow(e, EBADF);
		e->strict = false;
		return p;
	case T_PIDFD_DEAD:
		lock(s, &W.lock);
		p = W.dead_pidfd[k % NDEAD];
		unlock(s, &W.lock);
		if (p <= 0) {
			*oflags &= ~PMUCTX_OPEN_PIDFD;
			return 0;
		}
		need(e, ESRCH);
		return p;
	case T_PIDFD_FIFO:
		need(e, EBADF);
		return W.fifo;
	case T_PIDFD_REG:
		need(e, EBADF);
		return W.regf;
	case T_PIDFD_DEV:
		need(e, EBADF);
		return W.dev;
	case T_PIDFD_COUNTER: {
		struct snap sn;

		snap_slot(s, k % NSLOTS, &sn);
		need(e, EBADF);
		return sn.kind == SK_COUNTER ? sn.fd : 998;
	}
	case T_PIDFD_PROC:
		need(e, EBADF);
		return W.procf;
	case T_PIDFD_CLOSED:
		need(e, EBADF);
		return 997;
	case T_PIDFD_NEG:
		need(e, EBADF);
		return -1 - k % 100;
	default:
		return 0;
	}
}

/* ---- OPEN ---- */

/* The user registers a sample may hold (perf's numbering, as the module checks). */
#if defined(__x86_64__)
#define FUZZ_USER_REGS	(((1ULL << 24) - 1) & ~(0xfULL << 12))
#else
#define FUZZ_USER_REGS	((1ULL << 33) - 1)
#endif

/* The bytes of a sample of a counter with a user part: the module's rule. */
static uint32_t user_sample_size(const struct pmuctx_attr *a)
{
	if (!a->sample_regs_user && !a->sample_stack_user)
		return 0;
	return PMUCTX_SAMPLE_USER_SIZE(!!(a->flags & PMUCTX_ATTR_CALLCHAIN),
				       __builtin_popcountll(a->sample_regs_user),
				       a->sample_stack_user);
}

static const uint64_t periods[] = {
	0, 1, 2, 7, 1000, 4096, 100000, 1000000, 1ULL << 31, (1ULL << 31) + 1,
	1ULL << 32, UINT64_MAX,
};

static bool pmuctx_counter_type_is_hw(uint32_t type)
{
	return type == PMUCTX_TYPE_HARDWARE || type == PMUCTX_TYPE_RAW;
}

/* Ioctl numbers equal but for the size field. */
static bool same_but_size(unsigned int cmd, unsigned int sized)
{
	const unsigned int size_field = _IOC_SIZEMASK << _IOC_SIZESHIFT;

	return (cmd & ~size_field) == (sized & ~size_field);
}

#define SLICE_WORDS	(int)(sizeof(struct pmuctx_slice_stats) / 8)

/* Words per value in a group read: value, id, slice statistics. */
static int value_words(uint64_t fmt)
{
	return 1 + !!(fmt & PMUCTX_FORMAT_ID) +
	       (fmt & PMUCTX_FORMAT_SLICES ? SLICE_WORDS : 0);
}

static int fmt_words(uint64_t fmt)
{
	return !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED) +
	       !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING) +
	       !!(fmt & PMUCTX_FORMAT_STAMP) + value_words(fmt);
}

/* Expectations of an attr's own fields, as pmuctx_attr_check documents. */
static void expect_attr(const struct pmuctx_attr *a, bool priv, struct expect *e)
{
	uint64_t f = a->flags;

	if (f & ~PMUCTX_ATTR_ALL)
		need(e, EINVAL);
	if (a->read_format & ~PMUCTX_FORMAT_ALL)
		need(e, EINVAL);
	if ((f & (PMUCTX_ATTR_INHERIT_THREAD | PMUCTX_ATTR_INHERIT_STAT)) &&
	    !(f & PMUCTX_ATTR_INHERIT))
		need(e, EINVAL);
	/* A call chain is a sample's. */
	if ((f & PMUCTX_ATTR_CALLCHAIN) && !a->sample_period)
		need(e, EINVAL);
	/* So are user registers and stack: perf's registers, a stack of 8-byte words. */
	if (a->__reserved_1)
		need(e, EINVAL);
	if ((a->sample_regs_user || a->sample_stack_user) &&
	    (!a->sample_period || (a->sample_regs_user & ~FUZZ_USER_REGS) ||
	     a->sample_stack_user > PMUCTX_SAMPLE_STACK_MAX || a->sample_stack_user % 8))
		need(e, EINVAL);
	/* A rate: not 0, up to max_sample_freq (its default), no range counter. */
	if ((f & PMUCTX_ATTR_FREQ) &&
	    (!a->sample_period || a->sample_period > 100000 || a->type == PMUCTX_TYPE_RANGE))
		need(e, EINVAL);
	switch (a->type) {
	case PMUCTX_TYPE_SOFTWARE:
		if (a->config >= PMUCTX_SW_MAX)
			need(e, EINVAL);
		if (f & (PMUCTX_ATTR_EXCLUDE_USER | PMUCTX_ATTR_EXCLUDE_KERNEL))
			need(e, EOPNOTSUPP);
		if (a->sample_period)
			need(e, EOPNOTSUPP);
		break;
	case PMUCTX_TYPE_HARDWARE:
	case PMUCTX_TYPE_RAW:
		if (a->type == PMUCTX_TYPE_HARDWARE && a->config >= PMUCTX_HW_MAX)
			need(e, EINVAL);
		if (!have_hw) {
			need(e, ENODEV);
			break;
		}
		if (!(f & PMUCTX_ATTR_EXCLUDE_KERNEL) && !allow_kernel && !priv)
			need(e, EPERM);
		if ((f & PMUCTX_ATTR_PINNED) && pmu_shared && !priv)
			need(e, EPERM);
		/* The perf-events backend: no overflow samples. */
		if (a->sample_period && !pmu_samples)
			need(e, EOPNOTSUPP);
		/* ... and no periods of its own choosing. */
		if ((f & PMUCTX_ATTR_FREQ) && !pmu_freq)
			need(e, EOPNOTSUPP);
		/* raw above 16 bits, period above 2^31 */
		allow(e, EINVAL);
		allow(e, ENOENT);
		allow(e, ENOSPC);
		break;
	case PMUCTX_TYPE_RANGE: {
		unsigned int kind = a->config & PMUCTX_RANGE_KIND_MASK;

		if (f & PMUCTX_ATTR_EXCLUDE_USER)
			need(e, EOPNOTSUPP);
		if (a->sample_period > 0xffffffffULL)
			need(e, EINVAL);
		else if (a->sample_period && !range_samples)
			need(e, EOPNOTSUPP);
		/* The user address space ends at 2^47 (x86_64) or 2^48. */
		if (a->range_end >= 1ULL << 48)
			need(e, EINVAL);
		else if (a->range_end > (1ULL << 47) - 4096)
			allow(e, EINVAL);
		if ((a->config & ~PMUCTX_RANGE_CONFIG_ALL) ||
		    kind >= PMUCTX_RANGE_NR_KINDS || a->range_start >= a->range_end)
			need(e, EINVAL);
		else if (!(range_kinds & (1U << kind)))
			need(e, EOPNOTSUPP);
		/* too long for the registers; registers all taken */
		allow(e, ERANGE);
		allow(e, EBUSY);
		break;
	}
	default:
		need(e, EINVAL);
	}
	if (a->type != PMUCTX_TYPE_RANGE && (a->range_start || a->range_end))
		need(e, EINVAL);
	/*
	 * A sampling counter's ring past what one user may pin (max_ring_kb
	 * and RLIMIT_MEMLOCK; root's CAP_IPC_LOCK lifts the bound): uapi.rst.
	 */
	if (a->sample_period && !priv)
		allow(e, EPERM);
}

/* A range for a range counter: mostly good, sometimes hostile. */
static void pick_range(struct stream *s, struct pmuctx_attr *a)
{
	uintptr_t base = (uintptr_t)watched;
	int r = below(s, 100);

	a->range_start = base + below(s, 64);
	a->range_end = a->range_start + 1 + below(s, 40);
	if (r < 80)
		return;
	if (r < 85) {		/* kernel addresses */
		a->range_start = 0xffff800000000000ULL + below(s, 1 << 20);
		a->range_end = a->range_start + 8;
	} else if (r < 90) {	/* empty or inverted */
		a->range_end = a->range_start - below(s, 2);
	} else if (r < 95) {	/* too long */
		a->range_end = a->range_start + 4096 + below(s, 1 << 20);
	} else {
		a->range_start = rnd(s);
		a->range_end = chance(s, 50) ? rnd(s) : a->range_start + 1 + below(s, 64);
	}
}

/* A range counter's type, config (any kind, sometimes junk) and range. */
static void pick_range_attr(struct stream *s, struct pmuctx_attr *a)
{
	a->type = PMUCTX_TYPE_RANGE;
	a->config = below(s, PMUCTX_RANGE_NR_KINDS + 1);
	if (chance(s, 20))
		a->config |= PMUCTX_RANGE_EXACT;
	if (chance(s, 3))
		a->config |= 1ULL << (9 + below(s, 55));
	pick_range(s, a);
}

/* Is @fd one of ours?  Checked on every fd PMUCTX_OPEN returns. */
static void check_new_fd(struct stream *s, int fd, unsigned int oflags)
{
	char path[64], link[128];
	ssize_t n;
	int fl;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		viol(s, "PMUCTX_OPEN returned fd %d that is not open", fd);
		return;
	}
	link[n] = 0;
	if (strcmp(link, "anon_inode:[pmuctx]"))
		viol(s, "PMUCTX_OPEN returned fd %d which is \"%s\"", fd, link);
	fl = fcntl(fd, F_GETFD);
	if (fl >= 0 && !!(fl & FD_CLOEXEC) != !!(oflags & PMUCTX_OPEN_CLOEXEC))
		viol(s, "fd %d: FD_CLOEXEC %d, PMUCTX_OPEN_CLOEXEC %d", fd,
		     !!(fl & FD_CLOEXEC), !!(oflags & PMUCTX_OPEN_CLOEXEC));
}

static void op_open(struct stream *s, char *attrbuf)
{
	bool priv = !W.unpriv && geteuid() == 0;
	struct pmuctx_open_args args, *argp;
	struct pmuctx_attr a = { 0 }, *ap;
	enum ptr_kind attr_pk, args_pk;
	unsigned int oflags = 0, size;
	int tail = 0, group = -1, slot, pick, ret, err, pidfd_tmp = -1;
	const char *gdesc = "none";
	struct snap gsn = { .kind = SK_EMPTY };
	unsigned long closes0;
	pid_t dead_pid;
	struct expect e;
	enum tgt t;
	char what[400];
	int r;

	expect_init(&e);
	allow(&e, EMFILE);
	allow(&e, ENFILE);

	/* type and config */
	r = below(s, 100);
	if (r < 64) {
		a.type = PMUCTX_TYPE_SOFTWARE;
		a.config = below(s, PMUCTX_SW_MAX);
	} else if (r < 70) {
		pick_range_attr(s, &a);
	} else if (r < 85) {
		a.type = below(s, 2) ? PMUCTX_TYPE_HARDWARE : PMUCTX_TYPE_RAW;
		a.config = a.type == PMUCTX_TYPE_HARDWARE ? below(s, PMUCTX_HW_MAX) :
			   (chance(s, 50) ? 0x08 : 0x11);	/* INST_RETIRED, CPU_CYCLES */
	} else if (r < 93) {
		a.type = below(s, PMUCTX_TYPE_MAX);
		a.config = chance(s, 50) ? PMUCTX_SW_MAX + below(s, 4) :
			   (chance(s, 50) ? rnd(s) : below(s, 1 << 17));
	} else {
		a.type = chance(s, 50) ? PMUCTX_TYPE_MAX + below(s, 3) : (uint32_t)rnd(s);
		a.config = below(s, 8);
	}
	/* flags */
	a.flags = rnd(s) & PMUCTX_ATTR_ALL & ~PMUCTX_ATTR_FREQ;
	if (a.type == PMUCTX_TYPE_SOFTWARE && chance(s, 92))
		a.flags &= ~(PMUCTX_ATTR_EXCLUDE_USER | PMUCTX_ATTR_EXCLUDE_KERNEL);
	if (a.type == PMUCTX_TYPE_RANGE && chance(s, 92))
		a.flags &= ~PMUCTX_ATTR_EXCLUDE_USER;
	if (a.type != PMUCTX_TYPE_RANGE && chance(s, 2))
		pick_range(s, &a);
	if ((a.flags & (PMUCTX_ATTR_INHERIT_THREAD | PMUCTX_ATTR_INHERIT_STAT)) &&
	    chance(s, 85))
		a.flags |= PMUCTX_ATTR_INHERIT;
	if (chance(s, 40))
		a.flags &= ~PMUCTX_ATTR_ENABLE_ON_EXEC;
	if (a.type != PMUCTX_TYPE_SOFTWARE && chance(s, 70))
		a.flags |= PMUCTX_ATTR_EXCLUDE_KERNEL;
	if (excluded[CL_INHERIT_STAT])
		a.flags &= ~PMUCTX_ATTR_INHERIT_STAT;
	if (chance(s, 3))
		a.flags |= 1ULL << (9 + below(s, 55));
	a.read_format = rnd(s) & PMUCTX_FORMAT_ALL;
	if (chance(s, 3))
		a.read_format |= 1ULL << (5 + below(s, 59));
	/* sample_period */
	if (pmuctx_counter_type_is_hw(a.type) ? chance(s, 50) : chance(s, 4)) {
		a.sample_period = periods[below(s, sizeof(periods) / sizeof(periods[0]))];
		if (excluded[CL_TINY_PERIOD] && a.sample_period && a.sample_period < 1000)
			a.sample_period = 1000;
		if (excluded[CL_SAMPLING])
			a.sample_period = 0;
	}
	/* A rate instead: good ones, 0, and one over the maximum. */
	if (chance(s, 8)) {
		static const uint64_t freqs[] = { 1, 100, 4000, 100000, 0, 100001 };

		a.flags |= PMUCTX_ATTR_FREQ;
		if (a.sample_period || chance(s, 50))
			a.sample_period = freqs[below(s, sizeof(freqs) / sizeof(freqs[0]))];
		if (excluded[CL_SAMPLING])
			a.sample_period = 0;
	}
	/* A user part: registers and stacks, good and bad. */
	if (chance(s, 10)) {
		static const uint32_t stacks[] = { 0, 8, 64, 1024, 8192, 7, 65536,
						   PMUCTX_SAMPLE_STACK_MAX };

		a.sample_regs_user = chance(s, 85) ? rnd(s) & FUZZ_USER_REGS : rnd(s);
		a.sample_stack_user = stacks[below(s, sizeof(stacks) / sizeof(stacks[0]))];
		if (chance(s, 3))
			a.__reserved_1 = rnd(s);
	}
	expect_attr(&a, priv, &e);

	/* size: exact, older, newer with zero or garbage tail, garbage */
	r = below(s, 100);
	size = sizeof(a);
	if (r < 85) {
		size = sizeof(a);
	} else if (r < 88) {
		size = below(s, PMUCTX_ATTR_SIZE_VER0);
		need(&e, EINVAL);
	} else if (r < 94) {
		size = sizeof(a) + 8 * (1 + below(s, 6));
		tail = chance(s, 50);
	} else if (r < 97) {
		size = 4096 - below(s, 2) * 8;
		tail = chance(s, 30);
	} else {
		size = chance(s, 50) ? 4097 + below(s, 8192) : (uint32_t)rnd(s) | 0x10000;
		need(&e, E2BIG);
	}
	if (size > sizeof(a) && size <= 4096 && tail)
		need(&e, E2BIG);
	a.size = size;
	memset(attrbuf, 0, 8192);
	memcpy(attrbuf, &a, sizeof(a));
	if (tail && size > sizeof(a))
		attrbuf[sizeof(a) + below(s, (size < 4096 ? size : 4096) - sizeof(a))] = 1;
	ap = (struct pmuctx_attr *)attrbuf;
	attr_pk = chance(s, 98) ? P_GOOD : 1 + below(s, NR_PTR - 1);
	if (attr_pk == P_RO || attr_pk == P_STRADDLE)
		attr_pk = P_NONE;	/* (RO holds zeros: size 0, covered above) */
	if (attr_pk != P_GOOD) {
		ap = ptr_of(attr_pk, ap, size);
		e = (struct expect){ 0 };
		e.strict = true;
		need(&e, EFAULT);
	}

	/* target */
	t = pick_target(s);
	pick = below(s, 1 << 20);
	{
		struct expect te;
		int target;

		expect_init(&te);
		target = target_of(s, t, &oflags, &te, &dead_pid, &pick);
		if (t == T_PIDFD_SELF)
			pidfd_tmp = pick;
		args.target = target;
		/* attr faults come first; the target's errors join the set */
		if (attr_pk == P_GOOD) {
			e.ok[0] |= te.ok[0];
			e.ok[1] |= te.ok[1];
			e.ok[2] |= te.ok[2];
			e.must_fail |= te.must_fail;
			e.strict &= te.strict;
		}
	}

	/* group */
	r = below(s, 100);
	if (r < 65) {
		group = -1;
	} else if (r < 90) {
		snap_slot(s, below(s, NSLOTS), &gsn);
		if (gsn.kind == SK_COUNTER) {
			group = gsn.fd;
			gdesc = "slot";
			allow(&e, EINVAL);	/* it may have become a member */
			allow(&e, ESRCH);	/* its context may be dead */
			allow(&e, ENOSPC);
			if (gsn.attr_known &&
			    ((gsn.attr.flags ^ a.flags) &
			     (PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_INHERIT_THREAD)))
				need(&e, EINVAL);
			/* Only a leader says pinned. */
			if (a.flags & PMUCTX_ATTR_PINNED)
				need(&e, EINVAL);
		}
	} else if (r < 93) {
		group = chance(s, 50) ? W.dev : W.fifo;
		gdesc = "not-a-counter";
		need(&e, EINVAL);
	} else if (r < 97) {
		group = 996;
		gdesc = "closed";
		need(&e, EBADF);
	} else {
		group = -2 - (int)below(s, 1000);
		gdesc = "negative";
		need(&e, EBADF);
	}
	args.group_fd = group;

	args.attr = (uintptr_t)ap;
	args.flags = oflags;
	if (chance(s, 50))
		args.flags |= PMUCTX_OPEN_CLOEXEC;
	args.reserved = 0;
	if (chance(s, 2)) {
		args.flags |= 1U << (2 + below(s, 30));
		need(&e, EINVAL);
	}
	if (chance(s, 2)) {
		args.reserved = 1 + below(s, 1000);
		need(&e, EINVAL);
	}
	argp = &args;
	args_pk = chance(s, 99) ? P_GOOD : 1 + below(s, NR_PTR - 1);
	if (args_pk == P_STRADDLE)
		args_pk = P_NONE;
	if (args_pk != P_GOOD) {
		argp = ptr_of(args_pk, argp, sizeof(args));
		e = (struct expect){ 0 };
		e.strict = true;
		need(&e, EFAULT);
	}

	slot = below(s, NSLOTS);
	snprintf(what, sizeof(what),
		 "open type=%u config=%#llx flags=%#llx fmt=%#llx period=%llu size=%u tail=%d attr=%s args=%s target=%s(%d) group=%s(%d) oflags=%#x",
		 a.type, (unsigned long long)a.config, (unsigned long long)a.flags,
		 (unsigned long long)a.read_format, (unsigned long long)a.sample_period,
		 size, tail, ptr_names[attr_pk], ptr_names[args_pk], tgt_names[t],
		 args.target, gdesc, group, args.flags);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);

	closes0 = __atomic_load_n(&W.closes, __ATOMIC_ACQUIRE);
	ret = ioctl(W.dev, PMUCTX_OPEN, argp);
	err = errno;
	record(OP_OPEN, ret, err);
	if (opt_verbose)
		say("[%s #%lu] < %d %s", s->tag, s->opno, ret, ret < 0 ? ename(err) : "");

	if (group >= 0 && gsn.kind == SK_COUNTER && !snap_stable(s, &gsn))
		e.strict = e.must_fail = false;	/* the group fd changed under us */
	/* A target fd from a shared table may have been closed and reused. */
	if ((t == T_PIDFD_DEAD || t == T_PIDFD_KID || t == T_PIDFD_COUNTER) &&
	    __atomic_load_n(&W.closes, __ATOMIC_ACQUIRE) != closes0)
		e.strict = e.must_fail = false;
	if (dead_pid && (kill(dead_pid, 0) == 0 || errno == EPERM))
		e.strict = e.must_fail = false;	/* the pid was reused */
	if (s->exec_child && group >= 0)
		e.strict = false;
	judge(s, what, ret, err, &e);
	if (pidfd_tmp >= 0)
		close(pidfd_tmp);
	if (ret < 0)
		return;
	check_new_fd(s, ret, args.flags);
	a.size = sizeof(a);
	slot_put(s, slot, ret, &a, true, group >= 0);
}

/* ---- read ---- */

static void op_read(struct stream *s, uint64_t *buf)
{
	static const size_t counts[] = { 0, 1, 7, 8, 16, 24, 32, 40, 48, 64, 4096, BIGBUF };
	uint64_t s0, d0, t0;
	struct snap sn;
	enum ptr_kind pk;
	const char *desc;
	size_t count, need_sz;
	struct expect e;
	char what[200];
	void *p;
	long ret;
	int fd, err, words;

	fd = pick_fd(s, &sn, &desc);
	pk = pick_ptr(s);
	if (sn.kind == SK_COUNTER && sn.attr_known && chance(s, 50))
		count = chance(s, 80) ? (sn.attr.read_format & PMUCTX_FORMAT_GROUP ?
			BIGBUF : 8 * fmt_words(sn.attr.read_format)) :
			8 * fmt_words(sn.attr.read_format) - 8;
	else
		count = counts[below(s, sizeof(counts) / sizeof(counts[0]))];
	if (pk == P_RO || pk == P_STRADDLE)
		count = count > 4096 ? 4096 : count;
	p = ptr_of(pk, buf, count);
	snprintf(what, sizeof(what), "read %s(fd %d) count=%zu buf=%s", desc, fd,
		 count, ptr_names[pk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	mono_begin(&s0, &d0, &t0);
	ret = read(fd, p, count);
	err = errno;
	record(OP_READ, ret, err);
	if (opt_verbose)
		say("[%s #%lu] < %ld %s", s->tag, s->opno, ret, ret < 0 ? ename(err) : "");

	if (ret > (long)count) {
		viol(s, "%s returned %ld, more than asked", what, ret);
		return;
	}
	if (!snap_stable(s, &sn))
		return;
	expect_init(&e);
	words = fmt_words(sn.attr.read_format);
	need_sz = 8 * words;
	if (ptr_faults(pk) || pk == P_RO) {
		allow(&e, ENOSPC);
		allow(&e, EFAULT);
		if (count >= BIGBUF)
			need(&e, EFAULT);
		else
			e.must_fail = true;
		judge(s, what, ret, err, &e);
		return;
	}
	if (pk == P_STRADDLE)
		return;
	if (sn.attr.read_format & PMUCTX_FORMAT_GROUP) {
		uint64_t fmt = sn.attr.read_format, nr, hdr;
		int i;

		allow(&e, ENOSPC);
		judge(s, what, ret, err, &e);
		if (ret <= 0)
			return;
		hdr = 1 + !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED) +
		      !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING) +
		      !!(fmt & PMUCTX_FORMAT_STAMP);
		nr = buf[0];
		if (nr < 1 || nr > 4096 ||
		    (uint64_t)ret != 8 * (hdr + nr * value_words(fmt))) {
			viol(s, "%s: %ld bytes for nr=%llu, format %#llx", what, ret,
			     (unsigned long long)nr, (unsigned long long)fmt);
			return;
		}
		if ((fmt & PMUCTX_FORMAT_ID) && mono_valid(s0, d0))
			for (i = 0; i < (int)nr; i++)
				mono_check(s, buf[hdr + value_words(fmt) * i + 1],
					   buf[hdr + value_words(fmt) * i], s0, t0,
					   &sn.attr);
		return;
	}
	if (count < need_sz) {
		need(&e, ENOSPC);
		judge(s, what, ret, err, &e);
		return;
	}
	judge(s, what, ret, err, &e);
	if (ret >= 0 && (size_t)ret != need_sz)
		viol(s, "%s returned %ld, format %#llx is %zu bytes", what, ret,
		     (unsigned long long)sn.attr.read_format, need_sz);
	if (ret == (long)need_sz && (sn.attr.read_format & PMUCTX_FORMAT_ID) &&
	    mono_valid(s0, d0)) {
		int idw = 1 + !!(sn.attr.read_format & PMUCTX_FORMAT_TOTAL_TIME_ENABLED) +
			  !!(sn.attr.read_format & PMUCTX_FORMAT_TOTAL_TIME_RUNNING);

		mono_check(s, buf[idw], buf[0], s0, t0, &sn.attr);
	}
}

/* ---- counter ioctls ---- */

static void op_ctl(struct stream *s)
{
	static const unsigned long cmds[] = {
		PMUCTX_IOC_ENABLE, PMUCTX_IOC_DISABLE, PMUCTX_IOC_RESET,
	};
	static const char *const names[] = { "ENABLE", "DISABLE", "RESET" };
	unsigned long arg;
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[160];
	int fd, c, ret, err, r;
	bool reset;

	fd = pick_fd(s, &sn, &desc);
	c = below(s, 3);
	if (s->child && c == 2)
		c = below(s, 2);	/* children never reset: see mono_check */
	reset = c == 2;
	r = below(s, 100);
	arg = r < 50 ? 0 : r < 90 ? PMUCTX_IOC_FLAG_GROUP :
	      (rnd(s) | (1UL << (1 + below(s, 63))));
	snprintf(what, sizeof(what), "ioctl %s %s(fd %d) arg=%#lx", names[c], desc, fd, arg);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	if (reset)
		__atomic_add_fetch(&W.reset_started, 1, __ATOMIC_ACQ_REL);
	ret = ioctl(fd, cmds[c], arg);
	err = errno;
	if (reset)
		__atomic_add_fetch(&W.reset_done, 1, __ATOMIC_ACQ_REL);
	record(OP_CTL, ret, err);
	if (opt_verbose)
		say("[%s #%lu] < %d %s", s->tag, s->opno, ret, ret < 0 ? ename(err) : "");
	expect_init(&e);
	if (fd == W.dev || fd == W.fifo) {
		need(&e, ENOTTY);
	} else if (fd < 0 || fd >= 999) {
		need(&e, EBADF);
	} else {
		if (!snap_stable(s, &sn))
			return;
		if (arg & ~(unsigned long)PMUCTX_IOC_FLAG_GROUP)
			need(&e, EINVAL);
		else
			e.ok[0] = e.ok[1] = e.ok[2] = 0;	/* must succeed */
	}
	judge(s, what, ret, err, &e);
}

static void op_id(struct stream *s, uint64_t *buf)
{
	enum ptr_kind pk = pick_ptr(s);
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[160];
	int fd, ret, err;

	fd = pick_fd(s, &sn, &desc);
	if (pk == P_STRADDLE)
		pk = P_RO;
	snprintf(what, sizeof(what), "ioctl ID %s(fd %d) ptr=%s", desc, fd, ptr_names[pk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, PMUCTX_IOC_ID, ptr_of(pk, buf, 8));
	err = errno;
	record(OP_ID, ret, err);
	if (!snap_stable(s, &sn))
		return;
	expect_init(&e);
	if (pk != P_GOOD)
		need(&e, EFAULT);
	else
		e.ok[0] = 0;
	judge(s, what, ret, err, &e);
}

/* A size for a size-versioned struct of @ksize bytes whose minimum is @min. */
static uint32_t pick_size(struct stream *s, uint32_t ksize, uint32_t min,
			  int *tail, struct expect *e)
{
	int r = below(s, 100);
	uint32_t size;

	*tail = 0;
	if (r < 70)
		return ksize;
	if (r < 80) {
		size = below(s, min);
		need(e, EINVAL);
		return size;
	}
	if (r < 85 && min < ksize)
		return min + below(s, ksize - min);
	if (r < 95) {
		size = ksize + 4 * (1 + below(s, 1000));
		*tail = chance(s, 50);
		/* Beyond a page is no newer struct, whatever its tail. */
		if (*tail || size > 4096)
			need(e, E2BIG);
		return size;
	}
	/* huge: the zero-tail check runs off the buffer's mapping */
	allow(e, EFAULT);
	allow(e, E2BIG);
	e->must_fail = true;
	return 0x10000000 + (uint32_t)below(s, 0x7fffffff);
}

/*
 * Fill a size-versioned struct buffer: the struct, then canary bytes past
 * the caller's size (bytes the kernel must not write), or the tail.
 */
static void sized_prepare(unsigned char *b, uint32_t size, uint32_t ksize, int tail,
			  struct stream *s)
{
	uint32_t lim = 4096 + 8;

	memset(b, 0, lim);
	if (size < ksize)
		memset(b + size, 0xa5, ksize + 64 - size);
	else if (tail && size <= 4096)
		b[ksize + below(s, size - ksize)] = 0x5a;
	memcpy(b, &size, 4);
}

static bool sized_canary_ok(const unsigned char *b, uint32_t size, uint32_t ksize)
{
	uint32_t i;

	if (size >= ksize)
		return true;
	for (i = size < 4 ? 4 : size; i < ksize + 64; i++)
		if (b[i] != 0xa5)
			return false;
	return true;
}

static void op_stats(struct stream *s, unsigned char *b)
{
	const uint32_t min = offsetof(struct pmuctx_ctx_stats, swaps) + 8;
	enum ptr_kind pk = pick_ptr(s);
	struct snap sn;
	const char *desc;
	struct expect e;
	uint32_t size;
	char what[160];
	int fd, ret, err, tail;

	fd = pick_fd(s, &sn, &desc);
	expect_init(&e);
	size = pick_size(s, sizeof(struct pmuctx_ctx_stats), min, &tail, &e);
	sized_prepare(b, size, sizeof(struct pmuctx_ctx_stats), tail, s);
	if (pk == P_STRADDLE)
		pk = P_NONE;
	if (pk != P_GOOD)
		expect_bad_struct(&e, pk);
	snprintf(what, sizeof(what), "ioctl STATS %s(fd %d) size=%u tail=%d ptr=%s",
		 desc, fd, size, tail, ptr_names[pk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, PMUCTX_IOC_STATS, ptr_of(pk, b, size));
	err = errno;
	record(OP_STATS, ret, err);
	if (!snap_stable(s, &sn))
		return;
	judge(s, what, ret, err, &e);
	if (pk == P_GOOD && ret == 0 && !sized_canary_ok(b, size, sizeof(struct pmuctx_ctx_stats)))
		viol(s, "%s wrote past the caller's size", what);
}

static void op_tree(struct stream *s, unsigned char *b)
{
	static __thread struct pmuctx_tree_entry mine[65];
	struct pmuctx_tree_entry *ents;
	static const uint32_t rooms[] = { 0, 1, 2, 3, 16, 64, 65535, 65536, 65537, UINT32_MAX };
	struct pmuctx_tree_read *tr = (struct pmuctx_tree_read *)b;
	enum ptr_kind pk = pick_ptr(s), epk = pick_ptr(s);
	uint32_t size, room, nr_in, i;
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[200];
	int fd, ret, err, tail;

	fd = pick_fd(s, &sn, &desc);
	expect_init(&e);
	size = pick_size(s, sizeof(*tr), sizeof(*tr), &tail, &e);
	sized_prepare(b, size, sizeof(*tr), tail, s);
	nr_in = rooms[below(s, sizeof(rooms) / sizeof(rooms[0]))];
	tr->nr_entries = nr_in;
	room = nr_in < TREE_ROOM ? nr_in : TREE_ROOM;
	if (epk == P_STRADDLE)
		epk = P_RO;
	/*
	 * W.ents is shared by the worker's threads: the canary check needs a
	 * buffer of this thread's own.
	 */
	ents = room <= 64 ? mine : W.ents;
	tr->entries = (uintptr_t)ptr_of(epk, ents, room * sizeof(*ents));
	if (epk == P_GOOD && room <= 64)
		memset(ents, 0xa5, (room + 1) * sizeof(*ents));
	if (pk == P_STRADDLE)
		pk = P_NONE;
	if (pk != P_GOOD)
		expect_bad_struct(&e, pk);
	allow(&e, ERANGE);
	if (epk != P_GOOD && room)
		allow(&e, EFAULT);
	snprintf(what, sizeof(what),
		 "ioctl TREE_READ %s(fd %d) size=%u tail=%d nr_entries=%u ptr=%s entries=%s",
		 desc, fd, size, tail, nr_in, ptr_names[pk], ptr_names[epk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, PMUCTX_IOC_TREE_READ, ptr_of(pk, b, size));
	err = errno;
	record(OP_TREE, ret, err);
	if (!snap_stable(s, &sn))
		return;
	judge(s, what, ret, err, &e);
	if (pk != P_GOOD)
		return;
	if (ret == 0 && tr->nr_entries > room)
		viol(s, "%s: success with %u entries for room %u", what, tr->nr_entries, room);
	if (ret < 0 && err == ERANGE && tr->nr_entries <= room)
		viol(s, "%s: ERANGE but needs only %u of %u", what, tr->nr_entries, room);
	if (ret == 0 && epk != P_GOOD && room && tr->nr_entries)
		viol(s, "%s: success copying %u entries to a bad pointer", what, tr->nr_entries);
	if (ret == 0 && epk == P_GOOD && room <= 64) {
		const unsigned char *c = (const unsigned char *)&ents[room];

		for (i = 0; i < sizeof(*ents); i++)
			if (c[i] != 0xa5) {
				viol(s, "%s wrote past nr_entries", what);
				break;
			}
		for (i = 0; i < tr->nr_entries && i < room; i++)
			if (!ents[i].tid)
				viol(s, "%s: entry %u has tid 0", what, i);
	}
}

static void op_samples(struct stream *s, unsigned char *b, uint64_t *big)
{
	static const uint32_t nrs[] = { 0, 1, 2, 255, 256, 257, UINT32_MAX };
	/* The callers' sample sizes: 0 is the first ABI's 32 bytes. */
	/* up to a whole call chain after the struct, and room for a few entries */
	static const uint32_t strides[] = { 0, sizeof(struct pmuctx_sample), 40, 64,
		sizeof(struct pmuctx_sample) + 8 * PMUCTX_CALLCHAIN_MAX };
	struct pmuctx_samples_read *rq = (struct pmuctx_samples_read *)b;
	enum ptr_kind pk = pick_ptr(s), spk = pick_ptr(s);
	unsigned char *smp = (unsigned char *)big;
	uint32_t size, nr_in, lim, stride = PMUCTX_SAMPLE_SIZE_VER0, user = 0;
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[200];
	int fd, ret, err, tail;

	fd = pick_fd(s, &sn, &desc);
	expect_init(&e);
	size = pick_size(s, sizeof(*rq), offsetof(struct pmuctx_samples_read, sample_size),
			 &tail, &e);
	sized_prepare(b, size, sizeof(*rq), tail, s);
	nr_in = nrs[below(s, sizeof(nrs) / sizeof(nrs[0]))];
	rq->nr = nr_in;
	/* a counter with a user part: its record's size, one word less or more */
	user = sn.attr_known ? user_sample_size(&sn.attr) : 0;
	if (size >= offsetof(struct pmuctx_samples_read, __reserved)) {
		rq->sample_size = strides[below(s, sizeof(strides) / sizeof(strides[0]))];
		if (user && 2 * (user + 8) <= BIGBUF && chance(s, 60))
			rq->sample_size = user + 8 * ((int)below(s, 3) - 1);
		if (rq->sample_size)
			stride = rq->sample_size;
	}
	/* the samples and one more stride (checked untouched) fit in BIGBUF */
	if ((uint64_t)(nr_in < 256 ? nr_in : 256) * stride + stride > BIGBUF) {
		nr_in = BIGBUF / stride - 1;
		rq->nr = nr_in;
	}
	lim = nr_in < 256 ? nr_in : 256;
	if (spk == P_STRADDLE)
		spk = P_RO;
	rq->samples = (uintptr_t)ptr_of(spk, smp, lim * stride);
	if (spk == P_GOOD)
		memset(smp, 0xa5, (lim + 1) * stride);
	if (pk == P_STRADDLE)
		pk = P_NONE;
	if (pk != P_GOOD)
		expect_bad_struct(&e, pk);
	/* Only hardware counters with a sample_period have a ring. */
	if (sn.attr_known && !sn.attr.sample_period)
		need(&e, EINVAL);
	/* A user part must fit the caller's sample; a bigger one than that and a page is E2BIG. */
	if (user && stride < user)
		need(&e, EINVAL);
	if (user && stride > user && stride > 4096)
		need(&e, E2BIG);
	if (spk != P_GOOD)
		allow(&e, EFAULT);
	snprintf(what, sizeof(what),
		 "ioctl SAMPLES %s(fd %d) size=%u tail=%d nr=%u ptr=%s samples=%s",
		 desc, fd, size, tail, nr_in, ptr_names[pk], ptr_names[spk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, PMUCTX_IOC_SAMPLES, ptr_of(pk, b, size));
	err = errno;
	record(OP_SAMPLES, ret, err);
	if (!snap_stable(s, &sn))
		return;
	judge(s, what, ret, err, &e);
	if (pk != P_GOOD || ret)
		return;
	if (rq->nr > lim)
		viol(s, "%s: %u samples for room %u", what, rq->nr, lim);
	if (spk == P_GOOD && rq->nr <= lim) {
		const unsigned char *c = smp + rq->nr * stride;
		uint32_t i;

		for (i = 0; i < stride; i++)
			if (c[i] != 0xa5) {
				viol(s, "%s wrote past the %u samples it reported", what, rq->nr);
				break;
			}
		/* a call chain within the caller's room */
		for (i = 0; stride >= sizeof(struct pmuctx_sample) && i < rq->nr; i++) {
			const struct pmuctx_sample *one =
				(const void *)(smp + i * stride);

			if (one->nr_callchain > (stride - sizeof(*one)) / 8 ||
			    one->nr_callchain > PMUCTX_CALLCHAIN_MAX)
				viol(s, "%s: sample %u has %u chain entries in a %u-byte sample",
				     what, i, one->nr_callchain, stride);
		}
		/* a user part as the counter asked, its stack within its room */
		for (i = 0; user && i < rq->nr; i++) {
			const struct pmuctx_sample_user *u = (const void *)
				(smp + i * stride + PMUCTX_SAMPLE_SIZE_VER2 +
				 (sn.attr.flags & PMUCTX_ATTR_CALLCHAIN ? 8 * PMUCTX_CALLCHAIN_MAX : 0));

			if ((u->abi && u->nr_regs != __builtin_popcountll(sn.attr.sample_regs_user)) ||
			    (!u->abi && (u->nr_regs || u->stack_size)) ||
			    u->stack_dyn > u->stack_size ||
			    u->stack_size > sn.attr.sample_stack_user)
				viol(s, "%s: sample %u's user part: abi %u, %u registers, stack %u/%u",
				     what, i, u->abi, u->nr_regs, u->stack_dyn, u->stack_size);
		}
	}
}

static void op_badioctl(struct stream *s)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	unsigned int nr, dir, sz, cmd;
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[160];
	int fd, ret, err;

	fd = pick_fd(s, &sn, &desc);
	if (chance(s, 20))
		fd = W.dev;
	/* Our magic with an unknown number, or a known number with a wrong size. */
	if (chance(s, 50)) {
		nr = 0x17 + below(s, 0xe9);
		if (chance(s, 30))
			nr = 0x02 + below(s, 0x0e);
		sz = below(s, 256);
	} else {
		nr = 0x10 + below(s, 7);
		sz = chance(s, 50) ? 4 : 1000 + below(s, 2000);
	}
	dir = dirs[below(s, 4)];
	cmd = _IOC(dir, PMUCTX_IOC_MAGIC, nr, sz);
	snprintf(what, sizeof(what), "ioctl %#x on %s(fd %d)", cmd,
		 fd == W.dev ? "dev" : desc, fd);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, cmd, (unsigned long)rnd(s));
	err = errno;
	record(OP_BADIOCTL, ret, err);
	if (fd != W.dev && !snap_stable(s, &sn))
		return;
	expect_init(&e);
	if (fd == W.dev && (cmd == PMUCTX_INFO || cmd == PMUCTX_OPEN))
		return;
	/*
	 * INFO and STATS take their struct's size from the struct: the size
	 * field of the number is not theirs to refuse (Documentation/uapi.rst).
	 */
	if (same_but_size(cmd, fd == W.dev ? PMUCTX_INFO : PMUCTX_IOC_STATS) ||
	    same_but_size(cmd, fd == W.dev ? PMUCTX_RANGE_PLAN : PMUCTX_IOC_RANGE))
		return;
	if (fd != W.dev && (cmd == PMUCTX_IOC_ENABLE || cmd == PMUCTX_IOC_DISABLE ||
			    cmd == PMUCTX_IOC_RESET || cmd == PMUCTX_IOC_ID ||
			    cmd == PMUCTX_IOC_STATS || cmd == PMUCTX_IOC_TREE_READ ||
			    cmd == PMUCTX_IOC_SAMPLES))
		return;
	need(&e, ENOTTY);
	judge(s, what, ret, err, &e);
}

/*
 * PMUCTX_RANGE_PLAN on the device, PMUCTX_IOC_RANGE on any fd: sized
 * structs, hostile pointers, any config and range.
 */
static void op_range(struct stream *s, unsigned char *b)
{
	const uint32_t min = offsetof(struct pmuctx_range, end) + 8;
	struct pmuctx_range *rq = (struct pmuctx_range *)b;
	enum ptr_kind pk = pick_ptr(s);
	struct pmuctx_attr a = { 0 };
	const char *desc = "dev";
	bool plan = chance(s, 60);
	int ret, err, tail, fd = W.dev;
	struct snap sn = { .kind = SK_EMPTY };
	struct expect e;
	uint32_t size;
	char what[200];

	expect_init(&e);
	size = pick_size(s, sizeof(*rq), min, &tail, &e);
	sized_prepare(b, size, sizeof(*rq), tail, s);
	if (plan) {
		pick_range_attr(s, &a);
		if (size >= min) {
			rq->config = a.config;
			rq->start = a.range_start;
			rq->end = a.range_end;
		}
		/* Planned as a counter would be: user addresses only. */
		if (size >= min) {
			unsigned int kind = a.config & PMUCTX_RANGE_KIND_MASK;

			if (a.range_end >= 1ULL << 48)
				need(&e, EINVAL);
			else if (a.range_end > (1ULL << 47) - 4096)
				allow(&e, EINVAL);
			if ((a.config & ~PMUCTX_RANGE_CONFIG_ALL) ||
			    kind >= PMUCTX_RANGE_NR_KINDS || a.range_start >= a.range_end)
				need(&e, EINVAL);
			else if (!(range_kinds & (1U << kind)))
				need(&e, EOPNOTSUPP);
			allow(&e, ERANGE);
		}
	} else {
		fd = pick_fd(s, &sn, &desc);
	}
	if (pk == P_STRADDLE)
		pk = P_NONE;
	if (pk != P_GOOD)
		expect_bad_struct(&e, pk);
	snprintf(what, sizeof(what), "ioctl %s %s(fd %d) size=%u tail=%d ptr=%s",
		 plan ? "RANGE_PLAN" : "IOC_RANGE", desc, fd, size, tail, ptr_names[pk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(fd, plan ? PMUCTX_RANGE_PLAN : PMUCTX_IOC_RANGE, ptr_of(pk, b, size));
	err = errno;
	record(OP_INFO, ret, err);
	if (!plan) {
		/* Which fd it was, and what it holds, is not tracked here. */
		if (!ret && pk == P_GOOD && !sized_canary_ok(b, size, sizeof(*rq)))
			viol(s, "%s wrote past the caller's size", what);
		return;
	}
	judge(s, what, ret, err, &e);
	if (pk != P_GOOD || ret)
		return;
	if (!sized_canary_ok(b, size, sizeof(*rq)))
		viol(s, "%s wrote past the caller's size", what);
	if (size >= sizeof(*rq) &&
	    (rq->nr_spans < 1 || rq->nr_spans > PMUCTX_RANGE_MAX_SPANS ||
	     rq->start_off > rq->start || rq->spans[0].base != rq->start - rq->start_off))
		viol(s, "%s: inconsistent plan (%u spans, start_off %#llx)", what,
		     rq->nr_spans, (unsigned long long)rq->start_off);
}

static void op_info(struct stream *s, unsigned char *b)
{
	const uint32_t min = 8;
	enum ptr_kind pk = pick_ptr(s);
	struct pmuctx_info *in = (struct pmuctx_info *)b;
	struct expect e;
	uint32_t size;
	char what[120];
	int ret, err, tail;

	expect_init(&e);
	size = pick_size(s, sizeof(*in), min, &tail, &e);
	sized_prepare(b, size, sizeof(*in), tail, s);
	if (pk == P_STRADDLE)
		pk = P_NONE;
	if (pk != P_GOOD)
		expect_bad_struct(&e, pk);
	snprintf(what, sizeof(what), "ioctl INFO size=%u tail=%d ptr=%s", size, tail,
		 ptr_names[pk]);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	ret = ioctl(W.dev, PMUCTX_INFO, ptr_of(pk, b, size));
	err = errno;
	record(OP_INFO, ret, err);
	judge(s, what, ret, err, &e);
	if (pk != P_GOOD || ret)
		return;
	if (in->abi_version != PMUCTX_ABI_VERSION)
		viol(s, "%s: abi_version %u", what, in->abi_version);
	if (!sized_canary_ok(b, size, sizeof(*in)))
		viol(s, "%s wrote past the caller's size", what);
}

static void op_poll(struct stream *s)
{
	struct pollfd pfd[4];
	struct snap sn[4];
	const char *desc;
	int n = 1 + below(s, 4), i, ret, err, tmo;

	for (i = 0; i < n; i++) {
		pfd[i].fd = pick_fd(s, &sn[i], &desc);
		pfd[i].events = POLLIN | POLLOUT | POLLPRI | POLLHUP;
		pfd[i].revents = 0;
	}
	tmo = chance(s, 70) ? 0 : (int)below(s, 5);
	if (opt_verbose)
		say("[%s #%lu] > poll n=%d fd0=%d timeout=%d", s->tag, s->opno, n,
		    pfd[0].fd, tmo);
	ret = poll(pfd, n, tmo);
	err = errno;
	record(OP_POLL, ret, err);
	if (ret <= 0)
		return;
	for (i = 0; i < n; i++) {
		short bad = pfd[i].revents & ~(POLLIN | POLLRDNORM | POLLHUP);

		if (pfd[i].fd < 0 || sn[i].kind != SK_COUNTER || !snap_stable(s, &sn[i]))
			continue;
		if (bad)
			viol(s, "poll on a counter (fd %d) returned events %#x", pfd[i].fd,
			     pfd[i].revents);
		if ((pfd[i].revents & POLLIN) && !sn[i].attr.sample_period)
			viol(s, "poll: POLLIN on fd %d, a counter without a sample ring",
			     pfd[i].fd);
	}
}

static void op_mmap(struct stream *s)
{
	static const size_t lens[] = { 4096, 4096, 4096, 0, 1, 4095, 8192, 1 << 20 };
	static const int prots[] = { PROT_READ, PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_WRITE, PROT_NONE, PROT_READ | PROT_EXEC };
	struct snap sn;
	const char *desc;
	struct expect e;
	char what[160];
	size_t len;
	off_t off;
	int fd, prot, flags, err, i;
	void *p;

	fd = pick_fd(s, &sn, &desc);
	len = lens[below(s, sizeof(lens) / sizeof(lens[0]))];
	prot = prots[below(s, sizeof(prots) / sizeof(prots[0]))];
	flags = chance(s, 85) ? MAP_SHARED : MAP_PRIVATE;
	off = chance(s, 85) ? 0 : chance(s, 50) ? 4096 : (off_t)(below(s, 1 << 20) * 4096 + below(s, 2));
	snprintf(what, sizeof(what), "mmap %s(fd %d) len=%zu prot=%#x flags=%#x off=%lld",
		 desc, fd, len, prot, flags, (long long)off);
	if (opt_verbose)
		say("[%s #%lu] > %s", s->tag, s->opno, what);
	p = mmap(NULL, len, prot, flags, fd, off);
	err = errno;
	record(OP_MMAP, p == MAP_FAILED ? -1 : 0, err);
	if (p != MAP_FAILED) {
		volatile uint32_t *pg = p;

		if (sn.kind == SK_COUNTER && snap_stable(s, &sn)) {
			if (sn.attr.type == PMUCTX_TYPE_SOFTWARE)
				viol(s, "%s: mapped a software counter", what);
			if (!self_reads)
				viol(s, "%s: mapped a counter of the perf-events backend", what);
			/* pmuctx's page at 0, read-only; perf's at 4096 (uapi.rst) */
			if ((len + 4095) / 4096 != 1 || (off && off != 4096))
				viol(s, "%s: mapped with a bad length or offset", what);
			if ((prot & PROT_WRITE) && !off)
				viol(s, "%s: writable mapping of pmuctx's page", what);
		}
		if ((prot & PROT_READ) && len == 4096 && !off && sn.kind == SK_COUNTER &&
		    snap_stable(s, &sn) && pg[0] != 1)
			viol(s, "%s: page version %u", what, pg[0]);
		if (s->child) {
			munmap(p, len);
			return;
		}
		pthread_mutex_lock(&W.lock);
		i = below(s, NMAPS);
		if (W.maps[i])
			munmap(W.maps[i], W.maplen[i]);
		W.maps[i] = p;
		W.maplen[i] = len;
		pthread_mutex_unlock(&W.lock);
		return;
	}
	if (sn.kind != SK_COUNTER || !snap_stable(s, &sn))
		return;
	expect_init(&e);
	allow(&e, EINVAL);
	allow(&e, EPERM);
	allow(&e, ENODEV);
	allow(&e, ESRCH);
	allow(&e, EACCES);	/* VFS: PROT_EXEC, noexec */
	if ((len + 4095) / 4096 == 1 && off == 0 && !(prot & PROT_WRITE) && !(prot & PROT_EXEC) &&
	    (sn.attr.type == PMUCTX_TYPE_SOFTWARE || !self_reads)) {
		expect_init(&e);
		need(&e, ENODEV);
	}
	judge(s, what, -1, err, &e);
}

static void op_munmap(struct stream *s)
{
	int i = below(s, NMAPS), ret;

	if (chance(s, 10)) {
		ret = munmap(W.bad + 1 + below(s, 100), 4096);	/* unaligned: EINVAL */
		record(OP_MUNMAP, ret, errno);
		return;
	}
	pthread_mutex_lock(&W.lock);
	ret = 0;
	if (W.maps[i]) {
		ret = munmap(W.maps[i], W.maplen[i]);
		W.maps[i] = NULL;
	}
	pthread_mutex_unlock(&W.lock);
	record(OP_MUNMAP, ret, errno);
}

static void op_fcntl(struct stream *s)
{
	struct snap sn;
	const char *desc;
	int fd = pick_fd(s, &sn, &desc), r = below(s, 6), ret, fl;
	long arg = 0;

	switch (r) {
	case 0:
	case 1:
		fl = fcntl(fd, F_GETFL);
		if (fl < 0)
			fl = 0;
		arg = r ? fl | O_ASYNC : fl & ~O_ASYNC;
		ret = fcntl(fd, F_SETFL, arg);
		break;
	case 2:
		arg = chance(s, 50) ? getpid() : chance(s, 50) ? gettid_() : -getpgrp();
		ret = fcntl(fd, F_SETOWN, arg);
		break;
	case 3:
		arg = chance(s, 30) ? 0 : chance(s, 50) ? SIGIO : SIGRTMIN + (int)below(s, 4);
		if (chance(s, 5))
			arg = 1000 + below(s, 100);	/* EINVAL */
		ret = fcntl(fd, F_SETSIG, arg);
		break;
	case 4:
		ret = fcntl(fd, F_SETFD, chance(s, 50) ? FD_CLOEXEC : 0);
		break;
	default:
		ret = fcntl(fd, F_GETFL);
		break;
	}
	if (opt_verbose)
		say("[%s #%lu] fcntl %s(fd %d) kind=%d arg=%ld -> %d", s->tag, s->opno, desc,
		    fd, r, arg, ret);
	record(OP_FCNTL, ret, errno);
}

static void op_dup(struct stream *s)
{
	struct snap sn, dst;
	const char *desc;
	int fd = pick_fd(s, &sn, &desc), nfd, r = below(s, 4), slot = below(s, NSLOTS);

	if (sn.kind != SK_COUNTER) {
		nfd = dup(fd);
		record(OP_DUP, nfd, errno);
		if (nfd >= 0)
			close(nfd);
		return;
	}
	if (r == 3) {	/* dup2 onto another slot's fd, replacing it */
		snap_slot(s, slot, &dst);
		if (dst.kind != SK_COUNTER || dst.fd == sn.fd)
			r = 0;
		else {
			struct slot *sl = &W.slots[slot];

			if (!s->child)
				pthread_rwlock_rdlock(&fork_lock);
			lock(s, &sl->lock);
			if (sl->gen == dst.gen) {
				nfd = dup2(sn.fd, sl->fd);
				__atomic_add_fetch(&W.closes, 1, __ATOMIC_ACQ_REL);
				record(OP_DUP, nfd, errno);
				if (nfd >= 0) {
					/* (the source cannot be re-checked under this lock) */
					sl->attr_known = false;
				}
				sl->gen++;
			}
			unlock(s, &sl->lock);
			if (!s->child)
				pthread_rwlock_unlock(&fork_lock);
			return;
		}
	}
	nfd = r == 1 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : r == 2 ?
	      fcntl(fd, F_DUPFD, 100 + below(s, 100)) : dup(fd);
	record(OP_DUP, nfd, errno);
	if (opt_verbose)
		say("[%s #%lu] dup fd %d kind=%d -> %d slot %d", s->tag, s->opno, fd, r, nfd, slot);
	if (nfd < 0)
		return;
	slot_put(s, slot, nfd, &sn.attr, sn.attr_known && snap_stable(s, &sn), sn.member);
}

static void op_close(struct stream *s)
{
	int i = below(s, NSLOTS), ret = 0;
	struct slot *sl = &W.slots[i];

	if (!s->child)
		pthread_rwlock_rdlock(&fork_lock);
	lock(s, &sl->lock);
	if (opt_verbose)
		say("[%s #%lu] close slot %d fd %d", s->tag, s->opno, i,
		    sl->kind == SK_COUNTER ? sl->fd : -1);
	if (sl->kind == SK_COUNTER) {
		ret = close(sl->fd);
		__atomic_add_fetch(&W.closes, 1, __ATOMIC_ACQ_REL);
		sl->kind = SK_EMPTY;
		sl->gen++;
	}
	unlock(s, &sl->lock);
	if (!s->child)
		pthread_rwlock_unlock(&fork_lock);
	record(OP_CLOSE, ret, errno);
	if (ret)
		viol(s, "close of slot %d failed: %s", i, ename(errno));
}

static void op_affinity(struct stream *s)
{
	cpu_set_t set;
	pid_t who = 0;
	int i, ret;

	CPU_ZERO(&set);
	for (i = 0; i < ncpus && i < CPU_SETSIZE; i++)
		if (chance(s, 60))
			CPU_SET(i, &set);
	if (!s->child && chance(s, 30)) {
		lock(s, &W.lock);
		who = W.kids[below(s, NKIDS)];
		unlock(s, &W.lock);
	}
	ret = sched_setaffinity(who, sizeof(set), &set);
	record(OP_AFFINITY, ret, errno);
	if (opt_verbose)
		say("[%s #%lu] affinity pid %d -> %d", s->tag, s->opno, who, ret);
}

static void op_work(struct stream *s)
{
	volatile unsigned long x = 0;
	unsigned long i, n;
	char *p;
	int r = below(s, 5);

	switch (r) {
	case 0:
		n = 1000 + below(s, 50000);
		for (i = 0; i < n; i++)
			x += i;
		break;
	case 4:		/* hits for the range counters */
		n = 100 + below(s, 5000);
		for (i = 0; i < n; i++)
			watched[i & 15] += i;
		break;
	case 1:
		p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			for (i = 0; i < 4; i++)
				p[i * 4096] = 1;
			munmap(p, 4 * 4096);
		}
		break;
	case 2:
		sched_yield();
		break;
	default: {
		struct timespec ts = { 0, 1000 * (long)below(s, 200) };

		nanosleep(&ts, NULL);
	}
	}
	record(OP_WORK, 0, 0);
}

/* ---- processes and threads ---- */

static void run_ops(struct stream *s, unsigned long n, bool budget);

/* A reaped pid: remember it (and its pidfd) as a dead target. */
static void note_dead(pid_t p, int status)
{
	int i, pfd = -1;

	pthread_mutex_lock(&W.lock);
	for (i = 0; i < NKIDS; i++)
		if (W.kids[i] == p) {
			W.kids[i] = 0;
			pfd = W.kid_pidfd[i];
			W.kid_pidfd[i] = -1;
		}
	i = W.ndead++ % NDEAD;
	if (W.dead_pidfd[i] > 0) {
		close(W.dead_pidfd[i]);
		__atomic_add_fetch(&W.closes, 1, __ATOMIC_ACQ_REL);
	}
	W.dead[i] = p;
	W.dead_pidfd[i] = pfd;
	pthread_mutex_unlock(&W.lock);
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXEC_VIOLATION)
		__atomic_add_fetch(&sh->violations, 1, __ATOMIC_RELAXED);
}

static void op_reap(struct stream *s)
{
	int status, n = 0;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		note_dead(p, status);
		n++;
	}
	record(OP_REAP, n, 0);
	if (opt_verbose)
		say("[%s #%lu] reaped %d", s->tag, s->opno, n);
}

static void child_setup(void)
{
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * A slot another thread was changing when we forked is inconsistent
	 * (its lock is held in our copy): forget it.
	 */
	for (i = 0; i < NSLOTS; i++) {
		if (pthread_mutex_trylock(&W.slots[i].lock)) {
			W.slots[i].kind = SK_EMPTY;
			continue;
		}
		pthread_mutex_unlock(&W.slots[i].lock);
	}
}

static void op_fork(struct stream *s)
{
	uint64_t seed = rnd(s);
	unsigned long n = 2 + below(s, 12);
	int how = below(s, 4);
	pid_t p;

	if (opt_verbose)
		say("[%s #%lu] fork seed=%#llx ops=%lu how=%d", s->tag, s->opno,
		    (unsigned long long)seed, n, how);
	pthread_rwlock_wrlock(&fork_lock);
	p = fork();
	if (p)
		pthread_rwlock_unlock(&fork_lock);
	if (p == 0) {
		struct stream c = *s;

		child_setup();
		c.rng = seed;
		c.child = true;
		c.opno = 0;
		snprintf(c.tag, sizeof(c.tag), "%.30s.f%d", s->tag, getpid());
		run_ops(&c, n, false);
		if (how == 0)
			raise(SIGKILL);
		_exit(0);
	}
	record(OP_FORK, p, errno);
}

static void op_sleeper(struct stream *s)
{
	int i = below(s, NKIDS), pfd;
	bool exec = chance(s, 30);
	pid_t p, old;

	pthread_rwlock_wrlock(&fork_lock);
	p = fork();
	if (p)
		pthread_rwlock_unlock(&fork_lock);
	if (p == 0) {
		child_setup();
		if (exec)
			execl(self_exe, "pmuctx_fuzz", "--child-sleep", (char *)NULL);
		for (;;)
			pause();
	}
	record(OP_SLEEPER, p, errno);
	if (p < 0)
		return;
	pfd = syscall(SYS_pidfd_open, p, 0);
	pthread_mutex_lock(&W.lock);
	old = W.kids[i];
	if (old)
		kill(old, SIGKILL);	/* reaped later, then it is a dead target */
	W.kids[i] = p;
	if (W.kid_pidfd[i] > 0) {
		close(W.kid_pidfd[i]);
		__atomic_add_fetch(&W.closes, 1, __ATOMIC_ACQ_REL);
	}
	W.kid_pidfd[i] = pfd;
	pthread_mutex_unlock(&W.lock);
	if (opt_verbose)
		say("[%s #%lu] sleeper %d in %d (exec %d)", s->tag, s->opno, p, i, exec);
}

static void op_kill(struct stream *s)
{
	static const int sigs[] = { SIGKILL, SIGSTOP, SIGCONT, SIGCONT, SIGTERM, SIGUSR1 };
	int sig = sigs[below(s, sizeof(sigs) / sizeof(sigs[0]))], ret = 0;
	pid_t p;

	pthread_mutex_lock(&W.lock);
	p = W.kids[below(s, NKIDS)];
	if (p)
		ret = kill(p, sig);
	pthread_mutex_unlock(&W.lock);
	record(OP_KILL, ret, errno);
	if (opt_verbose)
		say("[%s #%lu] kill %d sig %d", s->tag, s->opno, p, sig);
}

struct tstart {
	struct stream s;
	unsigned long n;
};

static void *transient_main(void *arg)
{
	struct tstart *ts = arg;

	run_ops(&ts->s, ts->n, false);
	free(ts);
	__atomic_sub_fetch(&W.transient, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static void op_thread(struct stream *s)
{
	struct tstart *ts = malloc(sizeof(*ts));
	pthread_attr_t at;
	pthread_t th;
	int ret;

	if (!ts)
		return;
	ts->s = *s;
	ts->s.rng = rnd(s);
	ts->s.opno = 0;
	ts->n = 2 + below(s, 16);
	snprintf(ts->s.tag, sizeof(ts->s.tag), "%.30s.x%lu", s->tag, s->opno);
	if (__atomic_add_fetch(&W.transient, 1, __ATOMIC_ACQ_REL) > 4) {
		__atomic_sub_fetch(&W.transient, 1, __ATOMIC_ACQ_REL);
		free(ts);
		record(OP_THREAD, -1, EAGAIN);
		return;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	ret = pthread_create(&th, &at, transient_main, ts);
	pthread_attr_destroy(&at);
	if (ret) {
		__atomic_sub_fetch(&W.transient, 1, __ATOMIC_ACQ_REL);
		free(ts);
	}
	record(OP_THREAD, ret ? -1 : 0, ret);
}

static void op_exec(struct stream *s)
{
	uint64_t seed = rnd(s), mask = 0;
	char arg[32], marg[32];
	pid_t p;
	int i;

	for (i = 0; i < NR_CLASSES; i++)
		mask |= (uint64_t)excluded[i] << i;
	snprintf(arg, sizeof(arg), "%llu", (unsigned long long)seed);
	snprintf(marg, sizeof(marg), "%#llx", (unsigned long long)mask);
	if (opt_verbose)
		say("[%s #%lu] exec child seed=%s", s->tag, s->opno, arg);
	pthread_rwlock_wrlock(&fork_lock);
	p = fork();
	if (p)
		pthread_rwlock_unlock(&fork_lock);
	if (p == 0) {
		child_setup();
		execl(self_exe, "pmuctx_fuzz", "--child-exec", arg, marg, (char *)NULL);
		_exit(127);
	}
	record(OP_EXEC, p, errno);
}

/* ---- storms: events driven into objects while they are built and torn down ---- */

/*
 * Every object an interrupt, an exception or another CPU reaches (a range
 * counter's watchpoints, a sampling PMU counter's overflows, a multiplexed
 * context's rotations, a family's swaps, a mapped self-read page) must
 * take those events while it is opened, failed, closed, exec'd, exited
 * and unmapped.  The storm operations start threads (or children) that
 * make the events, and open and close counters on them meanwhile;
 * Documentation/testing.rst lists which op covers which window.  Their
 * arguments come from the stream as every op's; what the spinners do
 * comes from nothing.  sh->ev counts what happened, printed at the end.
 */

#ifdef __aarch64__
#define ARM64	1
#else
#define ARM64	0
#endif

/* The storm spinners' accesses land here; range counters watch it. */
static volatile uint64_t storm_buf[8] __attribute__((aligned(64)));

/* Executed by the spinners: instruction range counters watch its start. */
static __attribute__((noinline, aligned(16))) void storm_insn(void)
{
	__asm__ volatile("" ::: "memory");
}

static void storm_touch(void)
{
	int i;

	for (i = 0; i < 8; i++)
		storm_buf[i] += i;	/* a load and a store each */
	storm_insn();
}

static void ev_add(enum ev e, unsigned long n)
{
	if (sh)
		__atomic_add_fetch(&sh->ev[e], n, __ATOMIC_RELAXED);
}

enum spin_mode { SPIN_TOUCH, SPIN_SELFMAP, SPIN_PINGPONG };

struct spinner {
	pthread_t th;
	struct stream s;	/* for its violations' tag; draws nothing */
	int mode;
	int cpu;		/* -1: where it runs */
	int stop;
	pid_t tid;
	unsigned long touches;	/* storm_touch() calls */
	unsigned long yields;	/* sched_yield() returns */
	unsigned long period;	/* SPIN_SELFMAP: its own counter's */
	int map_fd;		/* a family counter it maps and reads, or -1 */
};

static unsigned long spin_load(const unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * SPIN_SELFMAP: a sampling cycle counter of its own, opened, mapped, its
 * page read, unmapped and closed over and over, while the storm opens and
 * closes others on it: its page and its slot come and go under overflows.
 */
static void spin_selfmap(struct spinner *sp)
{
	struct pmuctx_attr a = { .size = sizeof(a), .type = PMUCTX_TYPE_HARDWARE,
				 .config = PMUCTX_HW_CPU_CYCLES,
				 .flags = PMUCTX_ATTR_EXCLUDE_KERNEL,
				 .sample_period = sp->period };
	struct pmuctx_open_args args = { .attr = (uintptr_t)&a, .group_fd = -1,
					 .flags = PMUCTX_OPEN_CLOEXEC };
	volatile struct pmuctx_mmap_page *pg;
	struct expect e;
	int fd, err;
	void *p;

	fd = ioctl(W.dev, PMUCTX_OPEN, &args);
	err = errno;
	record(OP_PMUSTORM, fd, err);
	expect_init(&e);
	if (counter_limit)
		allow(&e, EMFILE);
	if (pmu_shared)
		allow(&e, ENOSPC);
	judge(&sp->s, "selfmap: open a sampling cycle counter on itself", fd, err, &e);
	if (fd < 0)
		return;
	/* Self-read pages are arm64's (uapi.rst): elsewhere open and close. */
	p = ARM64 && self_reads ? mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	err = errno;
	if (!p) {
		storm_touch();
	} else if (p == MAP_FAILED) {
		record(OP_PMUSTORM, -1, err);
		/* It holds the original: only a want of memory may refuse. */
		expect_init(&e);
		judge(&sp->s, "selfmap: mmap of its own counter", -1, err, &e);
	} else {
		record(OP_PMUSTORM, 0, 0);
		pg = p;
		ev_add(EV_MMAPS, 1);
		if (pg->version != 1)
			viol(&sp->s, "selfmap: page version %u", pg->version);
		storm_touch();
		if (pg->index > 32)
			viol(&sp->s, "selfmap: page index %u", pg->index);
		munmap(p, 4096);
	}
	if (close(fd))
		viol(&sp->s, "selfmap: close: %s", ename(errno));
}

static void *spinner_main(void *arg)
{
	volatile struct pmuctx_mmap_page *pg = NULL;
	struct spinner *sp = arg;
	unsigned long n = 0;
	struct expect e;
	void *p;

	if (sp->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(sp->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	/*
	 * A clone maps the family's counter (its own instance) before anyone
	 * knows its tid: each swap re-bases the page under the reads below.
	 */
	if (sp->map_fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sp->map_fd, 0);
		record(OP_SWAPSTORM, p == MAP_FAILED ? -1 : 0, errno);
		if (p == MAP_FAILED) {
			expect_init(&e);
			judge(&sp->s, "a clone maps the family's counter", -1, errno, &e);
		} else {
			pg = p;
			ev_add(EV_MMAPS, 1);
		}
	}
	__atomic_store_n(&sp->tid, gettid_(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sp->stop, __ATOMIC_ACQUIRE)) {
		if (pg && (pg->version != 1 || pg->index > 32)) {
			viol(&sp->s, "a clone's mapped family counter: version %u index %u",
			     pg->version, pg->index);
			break;
		}
		storm_touch();
		__atomic_store_n(&sp->touches, ++n, __ATOMIC_RELEASE);
		/* Back to user space often: counters on another task start there. */
		if (sp->mode == SPIN_PINGPONG || n % 64 == 0) {
			sched_yield();
			__atomic_add_fetch(&sp->yields, 1, __ATOMIC_ACQ_REL);
		}
		if (sp->mode == SPIN_SELFMAP && n % 256 == 0)
			spin_selfmap(sp);
	}
	if (pg)
		munmap((void *)pg, 4096);
	return NULL;
}

static int create_thread(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t at;
	int ret;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	ret = pthread_create(th, &at, fn, arg);
	pthread_attr_destroy(&at);
	return ret;
}

/*
 * A storm runs in a process of its own, forked by the spawner, a thread no
 * counter is ever opened on: threads inherit their creator's INHERIT
 * counters, so the storm's start with empty contexts; and no fork of the
 * worker's copies the storm's counter fds (a sleeper holding a counter
 * the storm closed would keep it in its context, and its registers).
 */
struct storm_req {
	void (*fn)(struct stream *s);
	struct stream s;
};

static int spawn_rq[2] = { -1, -1 }, spawn_ack[2] = { -1, -1 };
static pthread_mutex_t spawn_lock = PTHREAD_MUTEX_INITIALIZER;

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/*
 * The storm process: only the spawner's thread was copied, and locks other
 * threads held may be copied held: it takes none of the worker's.
 */
static void __attribute__((noreturn)) storm_process(struct storm_req *rq)
{
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(opt_seconds + 60);
	/* Nothing of the worker's counters but /dev/pmuctx. */
	for (i = 0; i < NMAPS; i++)
		if (W.maps[i])
			munmap(W.maps[i], W.maplen[i]);
	if (W.dev > 3)
		syscall(SYS_close_range, 3, W.dev - 1, 0);
	syscall(SYS_close_range, W.dev + 1, ~0U, 0);
	rq->fn(&rq->s);
	_exit(0);
}

static void *spawner_main(void *unused)
{
	struct storm_req *rq;
	int status;
	pid_t p;

	(void)unused;
	while (read(spawn_rq[0], &rq, sizeof(rq)) == sizeof(rq)) {
		p = fork();
		if (p == 0)
			storm_process(rq);
		/* A reap op of another thread may take it first: then it is noted. */
		while (p > 0 && waitpid(p, &status, __WALL) < 0 && errno == EINTR)
			;
		if (write(spawn_ack[1], &rq, sizeof(rq)) != sizeof(rq))
			break;
	}
	return NULL;
}

/* Before any counter exists: the spawner's context stays empty. */
static void spawner_setup(void)
{
	pthread_t th;

	if (pipe2(spawn_rq, O_CLOEXEC) || pipe2(spawn_ack, O_CLOEXEC) ||
	    create_thread(&th, spawner_main, NULL)) {
		spawn_rq[1] = -1;
		return;
	}
	pthread_detach(th);
}

/* Past the deadline a storm winds down: its rounds stop, its counters close. */
static bool storm_late(void)
{
	return now() > deadline || (sh && sh->stop);
}

/* Run storm @fn in a storm process, on a stream drawn from @s; wait for it. */
static void run_storm(struct stream *s, void (*fn)(struct stream *s))
{
	struct storm_req r = { .fn = fn, .s = *s }, *rp = &r;

	r.s.rng = rnd(s);
	r.s.opno = 0;
	snprintf(r.s.tag, sizeof(r.s.tag), "%.30s.S%lu", s->tag, s->opno);
	if (spawn_rq[1] < 0 || storm_late())
		return;
	if (opt_verbose)
		say("[%s #%lu] storm %s", s->tag, s->opno, r.s.tag);
	pthread_mutex_lock(&spawn_lock);
	if (write(spawn_rq[1], &rp, sizeof(rp)) != sizeof(rp) ||
	    read(spawn_ack[0], &rp, sizeof(rp)) != sizeof(rp))
		spawn_rq[1] = -1;	/* the spawner is gone: no more storms */
	pthread_mutex_unlock(&spawn_lock);
}

/*
 * Start @sp; false if no thread (then it is not running).  Pinned to @cpu
 * unless it is -1.  It inherits what its creator's INHERIT counters.
 */
static bool spinner_start(struct stream *s, struct spinner *sp, int mode, int cpu,
			  unsigned long period, int idx, int map_fd)
{
	int ret;

	memset(sp, 0, sizeof(*sp));
	sp->s = *s;
	snprintf(sp->s.tag, sizeof(sp->s.tag), "%.30s.s%d", s->tag, idx);
	sp->mode = mode;
	sp->cpu = cpu;
	sp->period = period;
	sp->map_fd = map_fd;
	ret = create_thread(&sp->th, spinner_main, sp);
	if (ret) {
		sp->tid = 0;
		return false;
	}
	while (!__atomic_load_n(&sp->tid, __ATOMIC_ACQUIRE))
		sched_yield();
	return true;
}

static void spinner_stop(struct spinner *sp)
{
	if (!sp->tid)
		return;
	__atomic_store_n(&sp->stop, 1, __ATOMIC_RELEASE);
	pthread_join(sp->th, NULL);
	sp->tid = 0;
}

/*
 * Has @sp been back to user space twice since @yields0?  Waits up to
 * @wait seconds for it.
 */
static bool spinner_ran(struct spinner *sp, unsigned long yields0, double wait)
{
	double t_end = now() + wait;

	while (spin_load(&sp->yields) < yields0 + 2) {
		if (now() > t_end || !sp->tid)
			return false;
		sched_yield();
	}
	return true;
}

/*
 * A spinning child (a pid target): touches storm_buf with a yield every 64
 * touches, forks short-lived grandchildren now and then (clones of
 * inherited counters, their own watchpoints), may exec itself into
 * --child-spin (watchpoints and counters across exec); it reports its
 * touches in *@touches (shared memory) until the exec.
 */
static pid_t storm_child(unsigned long *touches, bool exec, bool forks)
{
	unsigned long n = 0;
	pid_t p;

	p = fork();
	if (p)
		return p;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(30);
	for (;;) {
		storm_touch();
		__atomic_store_n(touches, ++n, __ATOMIC_RELEASE);
		if (n % 64)
			continue;
		sched_yield();
		if (forks && n % 1024 == 0 && fork() == 0) {
			int i;

			for (i = 0; i < 512; i++)
				storm_touch();
			_exit(0);
		}
		if (exec && n == 4096)
			execl(self_exe, "pmuctx_fuzz", "--child-spin", (char *)NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* --child-spin: an exec'd storm child, until its parent kills it. */
static int child_spin_main(void)
{
	unsigned long n;

	alarm(30);
	for (n = 1;; n++) {
		storm_touch();
		if (n % 64 == 0)
			sched_yield();
		if (n % 2048 == 0 && fork() == 0) {
			int i;

			for (i = 0; i < 256; i++)
				storm_touch();
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	return 0;
}

static void storm_kill_child(pid_t p)
{
	int status;

	if (p <= 0)
		return;
	kill(p, SIGKILL);
	waitpid(p, &status, __WALL);
}

#define STORM_FDS	96

/* The counters a storm holds: fd, what it is, and what it was opened on. */
struct storm_fd {
	int fd;
	uint64_t config;
	bool range, hw, enabled;
	bool fam;		/* the swap storm's family counter */
	bool shadowed;		/* x86: another watch of its thread overlaps */
	uint64_t start, end;	/* a range counter's range */
	int on;			/* spinner index, or -1 for the child */
	uint64_t period;
	unsigned long yields0;	/* the spinner's yields when it was opened */
};

struct storm {
	struct stream *s;
	enum op op;		/* whose errno counts these are */
	struct storm_fd f[STORM_FDS];
	int n;
	unsigned long rotations[3];	/* the most each spinner's context saw */
	struct spinner sp[3];
	int nsp;
	pid_t child;
	unsigned long *child_touches;	/* shared with the child */
	int in_ctx[3];		/* counters we put in each spinner's context */
};

static int storm_open(struct storm *st, struct pmuctx_attr *a, pid_t target, int group,
		      int on, struct expect *e, const char *what)
{
	struct pmuctx_open_args args = { .attr = (uintptr_t)a, .target = target,
					 .group_fd = group, .flags = PMUCTX_OPEN_CLOEXEC };
	unsigned long t0 = 0, t1 = 0;
	char desc[300];
	int fd, err;

	a->size = sizeof(*a);
	if (pmu_shared && pmuctx_counter_type_is_hw(a->type))
		allow(e, ENOSPC);
	if (on >= 0)
		t0 = spin_load(&st->sp[on].touches);
	else if (st->child_touches)
		t0 = spin_load(st->child_touches);
	fd = ioctl(W.dev, PMUCTX_OPEN, &args);
	err = errno;
	if (on >= 0)
		t1 = spin_load(&st->sp[on].touches);
	else if (st->child_touches)
		t1 = spin_load(st->child_touches);
	record(st->op, fd, err);
	if (a->type == PMUCTX_TYPE_RANGE) {
		ev_add(EV_RANGE_OPENS, 1);
		if (t1 > t0) {
			ev_add(EV_RANGE_OPENS_TOUCHED, 1);
			ev_add(EV_TOUCHES_IN_OPENS, t1 - t0);
		}
	} else if (a->sample_period) {
		ev_add(EV_PMU_OPENS, 1);
	}
	if (fd < 0 && err == EBUSY)
		ev_add(EV_EBUSY, 1);
	if (fd < 0 && err == EMFILE)
		ev_add(EV_EMFILE, 1);
	snprintf(desc, sizeof(desc),
		 "%s: open type=%u config=%#llx flags=%#llx period=%llu range=%#llx-%#llx target=%d group=%d",
		 what, a->type, (unsigned long long)a->config, (unsigned long long)a->flags,
		 (unsigned long long)a->sample_period, (unsigned long long)a->range_start,
		 (unsigned long long)a->range_end, target, group);
	if (opt_verbose)
		say("[%s #%lu] %s -> %d %s", st->s->tag, st->s->opno, desc, fd,
		    fd < 0 ? ename(err) : "");
	judge(st->s, desc, fd, err, e);
	if (fd < 0) {
		errno = err;
		return -1;
	}
	if (st->n == STORM_FDS) {
		close(fd);
		return -1;
	}
	st->f[st->n] = (struct storm_fd){
		.fd = fd, .config = a->config, .range = a->type == PMUCTX_TYPE_RANGE,
		.hw = pmuctx_counter_type_is_hw(a->type),
		.enabled = !(a->flags & (PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_ENABLE_ON_EXEC)),
		.on = on, .period = a->sample_period,
		.yields0 = on >= 0 ? spin_load(&st->sp[on].yields) : 0,
		.start = a->range_start, .end = a->range_end,
	};
	/*
	 * QEMU's x86 watchpoints stop at the first match: of two registers
	 * of one thread on the same bytes only one sees the access (hardware
	 * sets both DR6 bits).  Such counters are not held to counting.
	 */
	if (!ARM64 && a->type == PMUCTX_TYPE_RANGE) {
		struct storm_fd *f = &st->f[st->n], *o;
		int j;

		for (j = 0; j < st->n; j++) {
			o = &st->f[j];
			if (!o->range || (o->on != on && !o->fam) ||
			    o->end <= f->start || f->end <= o->start)
				continue;
			f->shadowed = true;
			o->shadowed = true;
		}
	}
	if (on >= 0)
		st->in_ctx[on]++;
	else if (target)
		ev_add(EV_CHILD_OPENS, 1);
	return st->n++;
}

/*
 * Close storm counter @i.  A range counter on a spinner that has been back
 * to user space twice since its open must have counted its hits; a
 * sampling counter's overflows are counted first.
 */
static void storm_close(struct storm *st, int i)
{
	struct storm_fd *f = &st->f[i];
	struct pmuctx_samples_read rq = { .size = sizeof(rq) };
	struct pmuctx_ctx_stats cs = { .size = sizeof(cs) };
	bool sampled = false;
	uint64_t v = 0;

	/* The samples first: the hits read after include theirs. */
	if (f->period) {
		sampled = !ioctl(f->fd, PMUCTX_IOC_SAMPLES, &rq);
		if (sampled)
			ev_add(f->range ? EV_RANGE_OVERFLOWS : EV_PMU_OVERFLOWS, rq.overflows);
		else
			viol(st->s, "storm: SAMPLES on a sampling counter: %s", ename(errno));
	}
	if (f->hw && f->on >= 0 && !ioctl(f->fd, PMUCTX_IOC_STATS, &cs) &&
	    cs.rotations > st->rotations[f->on])
		st->rotations[f->on] = cs.rotations;
	if (f->fam && !ioctl(f->fd, PMUCTX_IOC_STATS, &cs))
		ev_add(f->hw ? EV_MAPPED_SWAPS : EV_SWAPS, cs.tree_swaps);
	if (f->range && f->enabled && f->on >= 0 && !f->shadowed &&
	    spinner_ran(&st->sp[f->on], f->yields0, 0)) {
		if (read(f->fd, &v, 8) != 8)
			viol(st->s, "storm: read of a range counter: %s", ename(errno));
		else if (!v)
			viol(st->s, "storm: range counter (fd %d, config %#llx) on a thread that touched its range twice since the open counted 0",
			     f->fd, (unsigned long long)f->config);
		ev_add(EV_RANGE_HITS, v);
		ev_add(EV_HITS_CHECKED, 1);
	} else if (f->range && read(f->fd, &v, 8) == 8) {
		ev_add(EV_RANGE_HITS, v);
	}
	/* Every period-th hit a sample, over the family (uapi.rst, ranges.rst). */
	if (f->range && sampled && rq.overflows > v / f->period)
		viol(st->s, "storm: range counter (fd %d, config %#llx, period %llu): %llu samples of %llu hits",
		     f->fd, (unsigned long long)f->config, (unsigned long long)f->period,
		     (unsigned long long)rq.overflows, (unsigned long long)v);
	if (close(f->fd))
		viol(st->s, "storm: close: %s", ename(errno));
	if (f->on >= 0)
		st->in_ctx[f->on]--;
	st->f[i] = st->f[--st->n];
}

static void storm_close_all(struct storm *st)
{
	while (st->n)
		storm_close(st, below(st->s, st->n));
}

static void storm_end(struct storm *st, bool exit_first)
{
	int i;

	/* Exit (threads and the child) under counters, or close them first. */
	if (!exit_first && st->nsp && st->sp[0].tid)
		spinner_ran(&st->sp[0], spin_load(&st->sp[0].yields), 0.1);
	if (exit_first) {
		if (st->n)
			ev_add(EV_EXITS, 1);
		for (i = 0; i < st->nsp; i++)
			spinner_stop(&st->sp[i]);
		storm_kill_child(st->child);
		st->child = 0;
	}
	storm_close_all(st);
	for (i = 0; i < st->nsp; i++) {
		spinner_stop(&st->sp[i]);
		ev_add(EV_ROTATIONS, st->rotations[i]);
	}
	storm_kill_child(st->child);
	if (st->child_touches)
		munmap(st->child_touches, 4096);
}

/* A one-register range on storm_buf, or storm_insn, of a kind we make hits of. */
static int storm_range(struct stream *s, struct pmuctx_attr *a, int word, bool two)
{
	static const unsigned int data_kinds[] = { PMUCTX_RANGE_DATA,
		PMUCTX_RANGE_DATA_WRITE, PMUCTX_RANGE_DATA_READ };
	unsigned int kind;
	int tries;

	a->type = PMUCTX_TYPE_RANGE;
	for (tries = 0; tries < 8; tries++) {
		kind = chance(s, 20) ? PMUCTX_RANGE_INSN : data_kinds[below(s, 3)];
		if (range_kinds & (1U << kind))
			break;
	}
	if (!(range_kinds & (1U << kind)))
		return -1;
	a->config = kind;
	if (kind == PMUCTX_RANGE_INSN) {
		a->range_start = (uintptr_t)storm_insn;
		/* one instruction: A64's are 4 bytes */
		a->range_end = a->range_start + (ARM64 ? 4 : 1);
		return 1;	/* one breakpoint */
	}
	a->range_start = (uintptr_t)&storm_buf[word & 7];
	a->range_end = a->range_start + (two && (word & 7) < 7 ? 16 : 8);
	return two && (word & 7) < 7 ? 2 : 1;
}

static const uint64_t storm_periods[] = { 0, 1, 1, 2, 3, 7, 64, 1000 };

/* A period from the stream (@nonzero: never 0), as --no-sampling etc. allow. */
static uint64_t storm_period(struct stream *s, bool nonzero, bool range)
{
	uint64_t p = storm_periods[nonzero ? 1 + below(s, 7) : below(s, 8)];

	if ((range ? !range_samples : !pmu_samples) || excluded[CL_SAMPLING])
		return 0;
	if (excluded[CL_TINY_PERIOD] && p && p < 1000)
		p = 1000;
	return p;
}

/*
 * Fill @on's context with software counters up to the limit; true if it
 * got there (the next open must then be EMFILE).  EMFILE before it is
 * right when the context holds counters this storm did not open: another
 * worker's inherited counters on our worker, which its spinner threads
 * inherited when they were made (more likely the more workers: seen with
 * --workers 8).
 */
static bool storm_fill(struct storm *st, int on, pid_t tid)
{
	struct pmuctx_attr a = { .type = PMUCTX_TYPE_SOFTWARE,
				 .config = PMUCTX_SW_TASK_CLOCK };
	struct expect e;

	while (st->in_ctx[on] < (int)counter_limit && st->n < STORM_FDS) {
		expect_init(&e);
		allow(&e, EMFILE);
		if (storm_open(st, &a, tid, -1, on, &e, "fill to the counter limit") < 0)
			return false;
	}
	return st->in_ctx[on] == (int)counter_limit;
}

static void storm_close_sw(struct storm *st, int on)
{
	int i;

	for (i = st->n - 1; i >= 0; i--)
		if (st->f[i].on == on && !st->f[i].range && !st->f[i].hw)
			storm_close(st, i);
}

/*
 * rangestorm: range counters (sampling or not, inherited or not, each
 * kind) opened on threads of ours that store, load and execute in the
 * very bytes they watch, and on a spinning child that forks and execs:
 * the registers filled to EBUSY, the context to EMFILE, a group leader in
 * another context (EINVAL after the watch is up), then churn, then exit
 * or close first.
 */
static void op_rangestorm(struct stream *s)
{
	struct storm st = { .s = s, .op = OP_RANGESTORM };
	struct pmuctx_attr a;
	struct expect e;
	int i, k, nregs, rounds, regs, on, leader = -1, failed = 0;
	bool strict = true;

	if (!range_kinds) {
		record(OP_RANGESTORM, -1, EOPNOTSUPP);
		return;
	}
	nregs = info_range_data_nr ? info_range_data_nr : 4;
	st.nsp = 2;
	for (i = 0; i < st.nsp; i++)
		if (!spinner_start(s, &st.sp[i], SPIN_TOUCH, -1, 0, i, -1))
			st.nsp = i;
	if (st.nsp < 2) {
		storm_end(&st, false);
		return;
	}
	if (chance(s, 40)) {
		st.child_touches = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (st.child_touches == MAP_FAILED)
			st.child_touches = NULL;
		else
			st.child = storm_child(st.child_touches, chance(s, 30), chance(s, 60));
		if (st.child < 0)
			st.child = 0;
	}

	/* The data registers, filled: each open succeeds until none is left. */
	regs = 0;
	for (i = 0; i <= nregs; i++) {
		memset(&a, 0, sizeof(a));
		a.type = PMUCTX_TYPE_RANGE;
		a.config = range_kinds & (1U << PMUCTX_RANGE_DATA) ? PMUCTX_RANGE_DATA :
			   PMUCTX_RANGE_DATA_WRITE;
		a.range_start = (uintptr_t)&storm_buf[i & 7];
		a.range_end = a.range_start + 8;
		a.sample_period = storm_period(s, false, true);
		if (chance(s, 40))
			a.flags |= PMUCTX_ATTR_INHERIT |
				   (chance(s, 50) ? PMUCTX_ATTR_INHERIT_THREAD : 0);
		expect_init(&e);
		if (i == nregs)
			need(&e, EBUSY);
		/* The EMFILE check below needs room: stop one short of it. */
		if (counter_limit && regs + 1 >= (int)counter_limit)
			break;
		if (storm_open(&st, &a, st.sp[0].tid, -1, 0, &e, "fill the registers") < 0) {
			strict = false;
			break;
		}
		regs++;
		if (i == 1 && chance(s, 50))
			break;	/* leave some free: the churn opens */
	}
	/* Leader in another context: EINVAL, after the watch is up and hit. */
	memset(&a, 0, sizeof(a));
	a.type = PMUCTX_TYPE_SOFTWARE;
	a.config = PMUCTX_SW_TASK_CLOCK;
	expect_init(&e);
	leader = storm_open(&st, &a, st.sp[1].tid, -1, 1, &e, "a leader on the other spinner");
	if (leader >= 0 && strict && regs < nregs) {
		memset(&a, 0, sizeof(a));
		if (storm_range(s, &a, below(s, 8), false) > 0) {
			a.sample_period = storm_period(s, true, true);
			expect_init(&e);
			need(&e, EINVAL);
			if (storm_open(&st, &a, st.sp[0].tid, st.f[leader].fd, 0, &e,
				       "a member whose leader is in another context") < 0 &&
			    errno == EINVAL)
				ev_add(EV_BAD_LEADER, 1);
			failed++;
		}
	}
	/* The counter limit: EMFILE after the watch is up and hit. */
	if (counter_limit && strict && regs < nregs && chance(s, 30)) {
		if (storm_fill(&st, 0, st.sp[0].tid)) {
			memset(&a, 0, sizeof(a));
			storm_range(s, &a, below(s, 8), false);
			a.sample_period = storm_period(s, false, true);
			expect_init(&e);
			need(&e, EMFILE);
			/* A failed open's registers go back by a work, later. */
			if (regs + failed >= nregs)
				allow(&e, EBUSY);
			storm_open(&st, &a, st.sp[0].tid, -1, 0, &e, "a range counter past the limit");
		}
		storm_close_sw(&st, 0);
	}

	/* Churn: opens and closes land while the hits do. */
	rounds = 4 + below(s, 8);
	for (k = 0; k < rounds && !storm_late(); k++) {
		int two = chance(s, 25);

		if (st.n && chance(s, 40)) {
			storm_close(&st, below(s, st.n));
			continue;
		}
		memset(&a, 0, sizeof(a));
		if (storm_range(s, &a, below(s, 8), two) < 0)
			break;
		if (chance(s, 70))
			a.sample_period = storm_period(s, false, true);
		if (chance(s, 40))
			a.flags |= PMUCTX_ATTR_INHERIT |
				   (chance(s, 50) ? PMUCTX_ATTR_INHERIT_THREAD : 0);
		if (chance(s, 10))
			a.flags |= PMUCTX_ATTR_DISABLED;
		if (chance(s, 15))
			a.config |= PMUCTX_RANGE_EXACT;
		on = st.child && chance(s, 35) ? -1 : (int)below(s, st.nsp);
		expect_init(&e);
		allow(&e, EBUSY);
		if (counter_limit)
			allow(&e, EMFILE);
		if (on < 0) {
			allow(&e, ESRCH);	/* the child may have died (alarm) */
			allow(&e, EAGAIN);	/* not run yet since its fork */
		}
		storm_open(&st, &a, on < 0 ? st.child : st.sp[on].tid, -1, on, &e, "churn");
	}
	storm_end(&st, chance(s, 40));
}

/*
 * pmustorm (arm64's PMU): sampling cycle counters with tiny periods on
 * threads that run, one of which opens, maps, reads, unmaps and closes a
 * counter of its own in its loop; more counters than the PMU has, so the
 * context rotates while counters come and go; a spinning child that forks
 * and execs; the limit and a foreign leader as failure paths.
 */
static void op_pmustorm(struct stream *s)
{
	struct storm st = { .s = s, .op = OP_PMUSTORM };
	struct pmuctx_attr a;
	struct expect e;
	int i, k, rounds, on, nmax, leader;
	void *p;

	if (!have_hw) {
		record(OP_PMUSTORM, -1, ENODEV);
		return;
	}
	st.nsp = 2;
	if (!spinner_start(s, &st.sp[0], chance(s, 70) ? SPIN_SELFMAP : SPIN_TOUCH, -1,
			   storm_period(s, true, false), 0, -1) ||
	    !spinner_start(s, &st.sp[1], SPIN_TOUCH, -1, 0, 1, -1)) {
		st.nsp = st.sp[0].tid ? 1 : 0;
		storm_end(&st, false);
		return;
	}
	if (chance(s, 40)) {
		st.child_touches = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (st.child_touches == MAP_FAILED)
			st.child_touches = NULL;
		else
			st.child = storm_child(st.child_touches, chance(s, 30), chance(s, 70));
		if (st.child < 0)
			st.child = 0;
	}
	/* More than the PMU holds: rotations while they come and go. */
	nmax = info_nr_hw * 3 / 2 + 2 + below(s, 4);
	rounds = nmax + 2 + below(s, 8);
	for (k = 0; k < rounds && !storm_late(); k++) {
		if (st.n >= nmax || (k > (int)info_nr_hw && st.n && chance(s, 25))) {
			/* An overfull context: let it rotate a few times first. */
			if (st.in_ctx[0] > (int)info_nr_hw && chance(s, 30)) {
				struct timespec ts = { 0, 5000000 };	/* > a jiffy */

				nanosleep(&ts, NULL);
			}
			i = below(s, st.n);
			if (ARM64 && st.f[i].on >= 0 && st.f[i].hw && chance(s, 20)) {
				/*
				 * Not the caller's instance: EINVAL, whatever it
				 * does; ENODEV where no counter maps (the shared
				 * and perf-events backends).
				 */
				int want = self_reads ? EINVAL : ENODEV;

				p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, st.f[i].fd, 0);
				if (p != MAP_FAILED) {
					viol(s, "pmustorm: mapped a counter of another thread");
					munmap(p, 4096);
				} else if (errno != want) {
					viol(s, "pmustorm: mmap of another thread's counter: %s, not %s",
					     ename(errno), ename(want));
				}
			}
			storm_close(&st, i);
			continue;
		}
		memset(&a, 0, sizeof(a));
		/* generic events: whatever the backend */
		a.type = PMUCTX_TYPE_HARDWARE;
		a.config = chance(s, 80) ? PMUCTX_HW_CPU_CYCLES : PMUCTX_HW_INSTRUCTIONS;
		a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
		if (chance(s, 80))
			a.sample_period = storm_period(s, true, false);
		if (chance(s, 40))
			a.flags |= PMUCTX_ATTR_INHERIT |
				   (chance(s, 50) ? PMUCTX_ATTR_INHERIT_THREAD : 0);
		if (chance(s, 10))
			a.flags |= PMUCTX_ATTR_DISABLED;
		on = st.child && chance(s, 25) ? -1 : chance(s, 75) ? 0 : 1;
		/* First more than the PMU holds on one thread: it rotates. */
		if (k <= (int)info_nr_hw)
			on = 0;
		expect_init(&e);
		if (a.config == PMUCTX_HW_INSTRUCTIONS)
			allow(&e, ENOENT);	/* arm64: only under -icount */
		if (counter_limit)
			allow(&e, EMFILE);
		if (on < 0) {
			allow(&e, ESRCH);
			allow(&e, EAGAIN);
		}
		storm_open(&st, &a, on < 0 ? st.child : st.sp[on].tid, -1, on, &e, "pmustorm");
	}
	/* A foreign leader, then the limit: failures with overflows coming. */
	memset(&a, 0, sizeof(a));
	a.type = PMUCTX_TYPE_SOFTWARE;
	a.config = PMUCTX_SW_TASK_CLOCK;
	expect_init(&e);
	if (counter_limit)
		allow(&e, EMFILE);
	leader = storm_open(&st, &a, st.sp[1].tid, -1, 1, &e, "a leader on the other thread");
	if (leader >= 0) {
		memset(&a, 0, sizeof(a));
		a.type = PMUCTX_TYPE_HARDWARE;
		a.config = PMUCTX_HW_CPU_CYCLES;
		a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
		a.sample_period = storm_period(s, true, false);
		expect_init(&e);
		need(&e, EINVAL);
		if (storm_open(&st, &a, st.sp[0].tid, st.f[leader].fd, 0, &e,
			       "a member whose leader is in another context") < 0 &&
		    errno == EINVAL)
			ev_add(EV_BAD_LEADER, 1);
	}
	/*
	 * The limit counts sp[0]'s own selfmap counter when it is open: fill
	 * only a thread without one.
	 */
	if (counter_limit && chance(s, 50) && storm_fill(&st, 1, st.sp[1].tid)) {
		memset(&a, 0, sizeof(a));
		a.type = PMUCTX_TYPE_HARDWARE;
		a.config = PMUCTX_HW_CPU_CYCLES;
		a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
		a.sample_period = storm_period(s, true, false);
		expect_init(&e);
		need(&e, EMFILE);
		storm_open(&st, &a, st.sp[1].tid, -1, 1, &e, "a sampling counter past the limit");
		storm_close_sw(&st, 1);
	}
	storm_end(&st, chance(s, 40));
}

/*
 * swapstorm: a family (a counter with INHERIT|INHERIT_THREAD on this
 * thread: a software one, or a sampling range counter on storm_buf) whose
 * clones ping-pong on one CPU, swapping contexts, while counters are
 * opened on them (leaving the family), members of the family's leader are
 * tried on them (EINVAL unless a swap moved the leader's context there),
 * and the family's counter is closed under the swaps.
 */
static int storm_find(struct storm *st, int fd)
{
	int i;

	for (i = 0; i < st->n; i++)
		if (st->f[i].fd == fd)
			return i;
	return -1;
}

/*
 * The root of a swap storm's family: a thread created empty, so its
 * clones inherit the family's counter and nothing else, whatever this
 * worker's thread holds.  It opens the counter on itself, starts the two
 * ping-pong clones and waits to be told to exit.
 */
struct family_run {
	struct storm *st;
	struct stream *s;
	struct pmuctx_attr fa;
	int cpu, fam_fd, ready, stop;
	bool mapped;		/* a PMU family: the clones map it */
};

static void *family_main(void *arg)
{
	struct family_run *fr = arg;
	struct storm *st = fr->st;
	struct expect e;
	int i;

	expect_init(&e);	/* an empty thread: nothing may refuse */
	i = storm_open(st, &fr->fa, 0, -1, -1, &e, "the family's counter, on its own thread");
	if (i >= 0) {
		st->f[i].fam = true;
		fr->fam_fd = st->f[i].fd;
		/* Two clones of the family on one CPU: each switch a swap. */
		i = fr->mapped ? fr->fam_fd : -1;
		spinner_start(fr->s, &st->sp[0], SPIN_PINGPONG, fr->cpu, 0, 0, i);
		spinner_start(fr->s, &st->sp[1], SPIN_PINGPONG, fr->cpu, 0, 1, i);
	}
	__atomic_store_n(&fr->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&fr->stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

/*
 * swapstorm: a family (a counter with INHERIT|INHERIT_THREAD: a software
 * one, or a sampling range counter on storm_buf) whose two clones
 * ping-pong on one CPU, swapping contexts, while counters are opened on
 * them (each open takes its clone out of the family), members of the
 * family's leader are tried on them (EINVAL unless a swap just moved the
 * leader's context there), the family's counter is closed under the
 * swaps, and its first holder and the clones exit.
 */
static void op_swapstorm(struct stream *s)
{
	struct storm st = { .s = s, .op = OP_SWAPSTORM, .nsp = 2 };
	struct family_run fr;
	struct pmuctx_attr a;
	struct expect e;
	int round, rounds, k, i, on;
	bool root_first;
	pthread_t root;

	rounds = 1 + below(s, 2);
	for (round = 0; round < rounds && !storm_late(); round++) {
		memset(&fr, 0, sizeof(fr));
		fr.st = &st;
		fr.s = s;
		fr.fam_fd = -1;
		fr.cpu = below(s, ncpus);
		if (ARM64 && self_reads && chance(s, 35)) {
			/* Mapped contexts swap with mapped ones: the pages go along. */
			fr.fa.type = PMUCTX_TYPE_HARDWARE;
			fr.fa.config = PMUCTX_HW_CPU_CYCLES;
			fr.fa.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
			if (chance(s, 40))
				fr.fa.sample_period = storm_period(s, true, false);
			fr.mapped = true;
		} else if (range_kinds && chance(s, 50) &&
			   storm_range(s, &fr.fa, 0, false) > 0) {
			fr.fa.sample_period = storm_period(s, false, true);
		} else {
			fr.fa.type = PMUCTX_TYPE_SOFTWARE;
			fr.fa.config = PMUCTX_SW_CONTEXT_SWITCHES;
		}
		fr.fa.flags |= PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_INHERIT_THREAD;
		root_first = chance(s, 50);
		if (create_thread(&root, family_main, &fr))
			break;
		while (!__atomic_load_n(&fr.ready, __ATOMIC_ACQUIRE))
			sched_yield();
		if (st.sp[0].tid && st.sp[1].tid)
			spinner_ran(&st.sp[0], 4, 0.1);
		for (k = 0; st.sp[0].tid && st.sp[1].tid && k < 2 + (int)below(s, 6); k++) {
			on = below(s, 2);
			memset(&a, 0, sizeof(a));
			expect_init(&e);
			if (counter_limit)
				allow(&e, EMFILE);
			if (fr.fam_fd >= 0 && chance(s, 30)) {
				a = fr.fa;
				allow(&e, EINVAL);
				allow(&e, EBUSY);
				if (storm_open(&st, &a, st.sp[on].tid, fr.fam_fd, on, &e,
					       "a member of the family's leader on a clone") < 0 &&
				    errno == EINVAL)
					ev_add(EV_BAD_LEADER, 1);
				continue;
			}
			if (fr.fam_fd >= 0 && chance(s, 15)) {
				/* The family goes while its clones swap. */
				storm_close(&st, storm_find(&st, fr.fam_fd));
				fr.fam_fd = -1;
				continue;
			}
			if (range_kinds && chance(s, 60)) {
				if (storm_range(s, &a, 1 + below(s, 7), false) < 0)
					continue;
				if (chance(s, 70))
					a.sample_period = storm_period(s, false, true);
				allow(&e, EBUSY);
			} else {
				a.type = PMUCTX_TYPE_SOFTWARE;
				a.config = below(s, PMUCTX_SW_MAX);
			}
			storm_open(&st, &a, st.sp[on].tid, -1, on, &e, "an open on a swapping clone");
		}
		/* Some closes land on the swapping clones, the rest see them exit. */
		for (k = st.n - 1; k >= 0; k--)
			if (st.f[k].on >= 0 && chance(s, 50))
				storm_close(&st, k);
		if (root_first) {
			__atomic_store_n(&fr.stop, 1, __ATOMIC_RELEASE);
			pthread_join(root, NULL);
		}
		spinner_stop(&st.sp[0]);
		spinner_stop(&st.sp[1]);
		if (!root_first) {
			__atomic_store_n(&fr.stop, 1, __ATOMIC_RELEASE);
			pthread_join(root, NULL);
		}
		for (k = st.n - 1; k >= 0; k--)
			if (st.f[k].on >= 0)
				storm_close(&st, k);
		i = fr.fam_fd >= 0 ? storm_find(&st, fr.fam_fd) : -1;
		if (i >= 0)
			storm_close(&st, i);
	}
	storm_end(&st, false);
}

/* ---- the operation loop ---- */

struct tbuf {
	uint64_t big[BIGBUF / 8];
	unsigned char sized[4096 + 4096];
	char attr[8192];
};

static enum op pick_op(struct stream *s)
{
	int total = 0, i, r;

	for (i = 0; i < NR_OPS; i++)
		if (!excluded[i] && (!s->child || ops[i].child_ok))
			total += ops[i].weight;
	r = below(s, total);
	for (i = 0; i < NR_OPS; i++) {
		if (excluded[i] || (s->child && !ops[i].child_ok))
			continue;
		r -= ops[i].weight;
		if (r < 0)
			return i;
	}
	return OP_WORK;
}

static void run_ops(struct stream *s, unsigned long n, bool budget)
{
	struct tbuf *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long i;

	if (b == MAP_FAILED)
		return;
	for (i = 0; i < n; i++) {
		enum op op = pick_op(s);

		s->opno++;
		if (budget && ((i & 15) == 0) && (now() > deadline || (sh && sh->stop)))
			break;
		switch (op) {
		case OP_OPEN: op_open(s, b->attr); break;
		case OP_READ: op_read(s, b->big); break;
		case OP_CTL: op_ctl(s); break;
		case OP_ID: op_id(s, b->big); break;
		case OP_STATS: op_stats(s, b->sized); break;
		case OP_TREE: op_tree(s, b->sized); break;
		case OP_SAMPLES: op_samples(s, b->sized, b->big); break;
		case OP_BADIOCTL: op_badioctl(s); break;
		case OP_INFO:
			if (chance(s, 50))
				op_range(s, b->sized);
			else
				op_info(s, b->sized);
			break;
		case OP_POLL: op_poll(s); break;
		case OP_MMAP: op_mmap(s); break;
		case OP_MUNMAP: op_munmap(s); break;
		case OP_FCNTL: op_fcntl(s); break;
		case OP_DUP: op_dup(s); break;
		case OP_CLOSE: op_close(s); break;
		case OP_FORK: op_fork(s); break;
		case OP_SLEEPER: op_sleeper(s); break;
		case OP_KILL: op_kill(s); break;
		case OP_REAP: op_reap(s); break;
		case OP_THREAD: op_thread(s); break;
		case OP_EXEC: op_exec(s); break;
		case OP_AFFINITY: op_affinity(s); break;
		/* storms take long: none starts past the deadline */
		case OP_RANGESTORM: run_storm(s, op_rangestorm); break;
		case OP_PMUSTORM: run_storm(s, op_pmustorm); break;
		case OP_SWAPSTORM: run_storm(s, op_swapstorm); break;
		default: op_work(s); break;
		}
	}
	munmap(b, sizeof(*b));
}

/* ---- worker process ---- */

struct pstart {
	struct stream s;
	unsigned long n;
	int t;
};

static void *persistent_main(void *arg)
{
	struct pstart *ps = arg;

	W.tids[ps->t % 8] = gettid_();
	run_ops(&ps->s, ps->n, true);
	return NULL;
}

static void sig_count(int sig)
{
	(void)sig;
}

static void worker_setup_common(void)
{
	struct sigaction sa = { .sa_handler = sig_count };
	int i;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	for (i = SIGRTMIN; i < SIGRTMIN + 4; i++)
		sigaction(i, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&W.lock, NULL);
	{
		pthread_rwlockattr_t ra;

		pthread_rwlockattr_init(&ra);
		pthread_rwlockattr_setkind_np(&ra,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&fork_lock, &ra);
		pthread_rwlockattr_destroy(&ra);
	}
	for (i = 0; i < NSLOTS; i++) {
		pthread_mutex_init(&W.slots[i].lock, NULL);
		W.slots[i].kind = SK_EMPTY;
		W.slots[i].fd = -1;
	}
	for (i = 0; i < NKIDS; i++)
		W.kid_pidfd[i] = -1;
	for (i = 0; i < NDEAD; i++)
		W.dead_pidfd[i] = -1;
	W.bad = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (W.bad == MAP_FAILED) {
		perror("mmap");
		_exit(2);
	}
	memset(W.bad, 0, 3 * 4096);
	mprotect(W.bad + 4096, 4096, PROT_READ);
	mprotect(W.bad + 2 * 4096, 4096, PROT_NONE);
	W.ents = mmap(NULL, (TREE_ROOM + 1) * sizeof(*W.ents), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (W.ents == MAP_FAILED) {
		perror("mmap");
		_exit(2);
	}
	W.dev = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	if (W.dev < 0) {
		perror("/dev/pmuctx");
		_exit(2);
	}
	W.procf = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
}

/* A FIFO and a regular file, both named "[pidfd]": only real pidfds count. */
static void make_fake_pidfds(void)
{
	char path[128];

	snprintf(W.dir, sizeof(W.dir), "/tmp/pmuctx-fuzz.%d", getpid());
	mkdir(W.dir, 0700);
	snprintf(path, sizeof(path), "%s/f", W.dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/f/[pidfd]", W.dir);
	mkfifo(path, 0600);
	W.fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/r", W.dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/r/[pidfd]", W.dir);
	W.regf = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (W.fifo < 0 || W.regf < 0) {
		say("fake pidfds: %s", strerror(errno));
		_exit(2);
	}
}

static void remove_fake_pidfds(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/f/[pidfd]", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/r/[pidfd]", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/f", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/r", dir);
	rmdir(path);
	rmdir(dir);
}

/* Why the run failed, for the last line: where CI's tail keeps it. */
static char why[400];

static void add_why(const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;

	if (n + 4 >= sizeof(why))
		return;
	if (n)
		why[n++] = ';', why[n++] = ' ', why[n] = 0;
	va_start(ap, fmt);
	vsnprintf(why + n, sizeof(why) - n, fmt, ap);
	va_end(ap);
}

static void print_file_lines(const char *path, const char *prefix)
{
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", prefix, line);
	fclose(f);
}

struct our_task {
	int pid, tid, ppid, pgrp;
	char comm[64], state;
};

static int parent_of(int pid)
{
	char path[64], stat[512], *p;
	int ppid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
	fclose(f);
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

/* Ours: a worker, its children, and orphans re-parented to us (subreaper). */
static bool is_descendant(int pid)
{
	int self = getpid(), depth;

	for (depth = 0; pid > 1 && depth < 64; depth++) {
		pid = parent_of(pid);
		if (pid == self)
			return true;
	}
	return false;
}

/* Call @fn for every task (thread) of every process below us. */
static void for_each_our_task(void (*fn)(const struct our_task *))
{
	struct our_task t;
	struct dirent *pe, *te;
	DIR *procs, *tasks;
	char path[300], stat[512];
	FILE *f;

	procs = opendir("/proc");
	if (!procs)
		return;
	while ((pe = readdir(procs))) {
		t.pid = atoi(pe->d_name);
		if (t.pid <= 0 || !is_descendant(t.pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", t.pid);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while ((te = readdir(tasks))) {
			t.tid = atoi(te->d_name);
			if (t.tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", t.pid, t.tid);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(stat, sizeof(stat), f) &&
			    sscanf(stat, "%*d (%63[^)]) %c %d %d", t.comm, &t.state,
				   &t.ppid, &t.pgrp) == 4)
				fn(&t);
			fclose(f);
		}
		closedir(tasks);
	}
	closedir(procs);
}

static void print_our_task(const struct our_task *t)
{
	char path[300], wchan[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", t->pid, t->tid);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(wchan, sizeof(wchan), f))
			wchan[0] = 0;
		fclose(f);
	}
	printf("# straggler %d/%d %s state %c ppid %d pgrp %d wchan %s\n",
	       t->pid, t->tid, t->comm, t->state, t->ppid, t->pgrp,
	       wchan[0] ? wchan : "-");
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", t->pid, t->tid);
	print_file_lines(path, "#   ");
	/* A task asleep in user space (pause, waitpid) is no news. */
	if (t->state == 'D' || t->state == 'R')
		add_why("task %d state %c in %s", t->tid, t->state,
			wchan[0] ? wchan : "?");
}

static void kill_our_task(const struct our_task *t)
{
	if (t->pid == t->tid)
		kill(t->pid, SIGKILL);
}

/*
 * A worker still running long past the deadline is stuck, most likely in
 * the kernel: SIGKILL will not end a task in D state, so say where every
 * task below us is before the watchdog and the kills blur it.
 */
static void dump_stragglers(void)
{
	FILE *f;

	for_each_our_task(print_our_task);
	/*
	 * Every D-state task's stack on the console, kernel threads too
	 * (stock kernels: the debug ones are built without sysrq).
	 */
	if (in_vm && geteuid() == 0) {
		f = fopen("/proc/sysrq-trigger", "w");
		if (f) {
			fputs("w", f);
			fclose(f);
		}
	}
}

static uint64_t stream_seed(int w, int t)
{
	uint64_t x = opt_seed * 0x100000001b3ULL + (uint64_t)w * 1000003 + t;

	splitmix(&x);
	return splitmix(&x);
}

static void worker_main(int idx, bool unpriv, unsigned long budget)
{
	pthread_t th[16];
	struct pstart ps[16];
	double t_end;
	int t, status, i;
	pid_t p;

	setpgid(0, 0);
	alarm(opt_seconds + 60);	/* watchdog: SIGALRM ends a hung worker */
	W.idx = idx;
	W.unpriv = unpriv;
	if (unpriv) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534)) {
			perror("drop privileges");
			_exit(2);
		}
		/* setuid cleared it: our own children must stay attachable */
		prctl(PR_SET_DUMPABLE, 1);
	}
	worker_setup_common();
	make_fake_pidfds();
	spawner_setup();

	for (t = 0; t < opt_threads; t++) {
		ps[t].s.rng = stream_seed(idx, t);
		ps[t].s.w = idx;
		ps[t].s.t = t;
		ps[t].s.opno = 0;
		ps[t].s.child = false;
		ps[t].s.exec_child = false;
		snprintf(ps[t].s.tag, sizeof(ps[t].s.tag), "w%d%s.t%d", idx,
			 unpriv ? "u" : "", t);
		ps[t].n = budget / opt_threads + (t == 0 ? budget % opt_threads : 0);
		ps[t].t = t;
	}
	for (t = 1; t < opt_threads; t++)
		if (pthread_create(&th[t], NULL, persistent_main, &ps[t])) {
			perror("pthread_create");
			_exit(2);
		}
	persistent_main(&ps[0]);
	for (t = 1; t < opt_threads; t++)
		pthread_join(th[t], NULL);

	/* Transient threads finish their few ops; then no child may outlive us. */
	t_end = now() + 10;
	while (__atomic_load_n(&W.transient, __ATOMIC_ACQUIRE) && now() < t_end)
		usleep(1000);
	kill(0, SIGCONT);
	for (i = 0; i < NKIDS; i++)
		if (W.kids[i])
			kill(W.kids[i], SIGKILL);
	while ((p = waitpid(-1, &status, __WALL)) > 0 || errno == EINTR)
		if (p > 0)
			note_dead(p, status);
	remove_fake_pidfds(W.dir);
	_exit(0);
}

/* ---- exec'd child modes ---- */

/* What the loaded module offers: the hardware backend, allow_kernel. */
static int probe(struct pmuctx_info *info)
{
	FILE *f = fopen("/sys/module/pmuctx/parameters/allow_kernel", "r");
	int dev;

	if (f) {
		allow_kernel = fgetc(f) == 'Y';
		fclose(f);
	}
	info->size = sizeof(*info);
	dev = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	if (dev < 0 || ioctl(dev, PMUCTX_INFO, info))
		return -1;
	have_hw = info->features & PMUCTX_FEAT_HARDWARE;
	pmu_samples = have_hw && (info->features & PMUCTX_FEAT_OVERFLOW);
	pmu_freq = have_hw && (info->features & PMUCTX_FEAT_FREQ);
	pmu_shared = have_hw && (info->features & PMUCTX_FEAT_PERF_SHARED);
	self_reads = have_hw && !(info->features & PMUCTX_FEAT_PERF_EVENTS);
	if (info->features & PMUCTX_FEAT_ADDR_RANGE)
		range_kinds = info->range_kinds;
	range_samples = info->features & PMUCTX_FEAT_RANGE_SAMPLES;
	info_range_data_nr = info->range_data.nr;
	info_nr_hw = info->nr_general + info->nr_fixed;
	close(dev);
	return 0;
}

static int child_exec_main(uint64_t seed, uint64_t mask)
{
	struct stream s = { .rng = seed, .child = true, .exec_child = true };
	char path[64], link[64];
	ssize_t n;
	int fd, i = 0;

	struct pmuctx_info info;

	if (probe(&info))
		return 2;
	snprintf(s.tag, sizeof(s.tag), "exec%d", getpid());
	for (i = 0; i < NR_CLASSES && i < 64; i++)
		excluded[i] = (mask >> i) & 1;
	i = 0;
	worker_setup_common();
	W.fifo = W.regf = W.procf;
	for (fd = 3; fd < 256 && i < NSLOTS; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (!strcmp(link, "anon_inode:[pmuctx]"))
			slot_put(&s, i++, fd, NULL, false, false);
	}
	/* also: a few opens with ENABLE_ON_EXEC already past, and exit */
	run_ops(&s, below(&s, 24), false);
	return 0;
}

/* ---- supervisor ---- */

static const char limit_param[] = "/sys/module/pmuctx/parameters/max_counters_per_task";
static long limit_saved = -1;

/*
 * The storms reach EMFILE at the counter limit with a few dozen counters:
 * lower it for the run when we may (root in the test VM), put it back at
 * the end.  Other ops already accept EMFILE from any open.
 */
static void limit_lower(void)
{
	FILE *f;

	if (excluded[CL_COUNTER_LIMIT] || !in_vm || geteuid() != 0)
		return;
	f = fopen(limit_param, "r");
	if (!f)
		return;
	if (fscanf(f, "%ld", &limit_saved) != 1)
		limit_saved = -1;
	fclose(f);
	if (limit_saved < COUNTER_LIMIT)
		return;
	f = fopen(limit_param, "w");
	if (!f)
		return;
	fprintf(f, "%d\n", COUNTER_LIMIT);
	if (!fclose(f))
		counter_limit = COUNTER_LIMIT;
	printf("# max_counters_per_task %u for the run (was %ld)\n", counter_limit,
	       limit_saved);
}

static void limit_restore(void)
{
	FILE *f;

	if (!counter_limit)
		return;
	f = fopen(limit_param, "w");
	if (f) {
		fprintf(f, "%ld\n", limit_saved);
		fclose(f);
	}
}

static void print_summary(double elapsed)
{
	int op, e;

	say("# op        total   errnos");
	for (op = 0; op < NR_OPS; op++) {
		char line[1024];
		unsigned long tot = 0;
		int n;

		for (e = 0; e < NERR; e++)
			tot += sh->errs[op][e];
		if (!tot)
			continue;
		n = snprintf(line, sizeof(line), "# %-9s %7lu  ", ops[op].name, tot);
		for (e = 0; e < NERR && n < (int)sizeof(line) - 40; e++)
			if (sh->errs[op][e])
				n += snprintf(line + n, sizeof(line) - n, " %s:%lu",
					      ename(e), sh->errs[op][e]);
		say("%s", line);
	}
	{
		char line[1024];
		int n = snprintf(line, sizeof(line), "# events:");

		for (e = 0; e < NR_EV; e++) {
			if (n > 60 && e < NR_EV) {
				say("%s", line);
				n = snprintf(line, sizeof(line), "#        ");
			}
			n += snprintf(line + n, sizeof(line) - n, " %s=%lu", ev_names[e],
				      sh->ev[e]);
		}
		say("%s", line);
	}
	say("# %lu ops in %.1fs: %.0f ops/s, %lu violations", sh->ops, elapsed,
	    elapsed > 0 ? sh->ops / elapsed : 0.0, sh->violations);
}

static void usage(void)
{
	say("usage: pmuctx_fuzz [--seed N] [--ops N] [--seconds S] [--workers N]\n"
	    "                   [--threads N] [--stuck-after S] [--verbose]\n"
	    "                   [--exclude CLASS,...] [--no-CLASS]\n"
	    "classes: every op (open read ctl id stats tree samples badioctl info poll\n"
	    "  mmap munmap fcntl dup close fork sleeper kill reap thread exec affinity\n"
	    "  work rangestorm pmustorm swapstorm) and fake-pidfd unpriv pid1\n"
	    "  tiny-period inherit-stat monotonic sampling counter-limit");
	exit(2);
}

static void exclude(const char *list)
{
	char buf[256], *tok, *save;
	int i;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_CLASSES; i++)
			if (!strcmp(tok, i < NR_OPS ? ops[i].name : class_names[i - NR_OPS]))
				break;
		if (i == NR_CLASSES) {
			say("unknown class %s", tok);
			usage();
		}
		excluded[i] = true;
	}
}

int main(int argc, char **argv)
{
	struct pmuctx_info info = { .size = sizeof(info) };
	int i, status, nprivfail = 0, hung = 0, unpriv_workers = 0;
	double elapsed, last = 0, kill_at;
	pid_t wpids[MAX_WORKERS] = { 0 };
	bool whung[MAX_WORKERS] = { false };
	bool dumped = false;
	char link[64];
	ssize_t n;
	pid_t p;

	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--child-sleep")) {
			for (;;)
				pause();
		} else if (!strcmp(a, "--child-spin")) {
			return child_spin_main();
		} else if (!strcmp(a, "--child-exec") && v && i + 2 < argc) {
			ncpus = sysconf(_SC_NPROCESSORS_ONLN);
			return child_exec_main(strtoull(v, NULL, 0),
					       strtoull(argv[i + 2], NULL, 0));
		} else if (!strcmp(a, "--seed") && v) {
			opt_seed = strtoull(v, NULL, 0); i++;
		} else if (!strcmp(a, "--ops") && v) {
			opt_ops = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--seconds") && v) {
			opt_seconds = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--stuck-after") && v) {
			opt_stuck_after = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--workers") && v) {
			opt_workers = atoi(v); i++;
		} else if (!strcmp(a, "--threads") && v) {
			opt_threads = atoi(v); i++;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			opt_verbose++;
		} else if (!strcmp(a, "--exclude") && v) {
			exclude(v); i++;
		} else if (!strncmp(a, "--no-", 5)) {
			exclude(a + 5);
		} else {
			usage();
		}
	}
	if (opt_workers < 1 || opt_workers > MAX_WORKERS || opt_threads < 1 ||
	    opt_threads > 8 || !opt_seconds)
		usage();
	deadline = opt_seconds;
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	n = readlink("/proc/1/exe", link, sizeof(link) - 1);
	in_vm = n > 0 && !strncmp(link, "/bin/busybox", n);
	if (probe(&info)) {
		printf("not ok 1 - pmuctx_fuzz: /dev/pmuctx: %s\n", strerror(errno));
		return 1;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	sh->top = getpid();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..1\n");
	printf("# pmuctx_fuzz seed=%llu ops=%lu seconds=%u workers=%d threads=%d backend=%s cpus=%d%s\n",
	       (unsigned long long)opt_seed, opt_ops, opt_seconds, opt_workers, opt_threads,
	       info.backend, ncpus, in_vm ? " vm" : "");
	for (i = 0; i < NR_CLASSES; i++)
		if (excluded[i])
			printf("# excluded: %s\n", i < NR_OPS ? ops[i].name : class_names[i - NR_OPS]);
	limit_lower();

	for (i = 0; i < opt_workers; i++) {
		bool unpriv = geteuid() != 0 ||
			      (!excluded[CL_UNPRIV] && (i % 2) == 1);
		unsigned long budget = opt_ops / opt_workers +
				       (i == 0 ? opt_ops % opt_workers : 0);

		unpriv_workers += unpriv;
		p = fork();
		if (p == 0)
			worker_main(i, unpriv, budget);
		if (p < 0) {
			perror("fork");
			limit_restore();
			return 1;
		}
		sh->workers[i] = p;
		wpids[i] = p;
		setpgid(p, p);
	}

	/* Reap; past the deadline plus grace, kill what is left. */
	kill_at = opt_seconds + 75;
	for (;;) {
		p = waitpid(-1, &status, WNOHANG | __WALL);
		if (p < 0 && errno == ECHILD)
			break;
		if (p > 0) {
			for (i = 0; i < opt_workers; i++)
				if (sh->workers[i] == p) {
					if (WIFSIGNALED(status)) {
						say("worker %d died by signal %d%s", i,
						    WTERMSIG(status),
						    WTERMSIG(status) == SIGALRM ?
						    " (watchdog: hung)" : "");
						add_why("worker %d died by signal %d at %.0fs", i,
							WTERMSIG(status), now());
						nprivfail++;
					} else if (WEXITSTATUS(status)) {
						say("worker %d exited %d", i, WEXITSTATUS(status));
						add_why("worker %d exited %d at %.0fs", i,
							WEXITSTATUS(status), now());
						nprivfail++;
					}
					sh->workers[i] = 0;
				}
			continue;
		}
		elapsed = now();
		if (elapsed - last >= 10) {
			last = elapsed;
			printf("# %.0fs: %lu ops, %.0f ops/s, %lu violations\n", elapsed,
			       sh->ops, sh->ops / elapsed, sh->violations);
		}
		if (elapsed > deadline)
			sh->stop = 1;
		if (!dumped && elapsed > deadline + opt_stuck_after) {
			for (i = 0; i < opt_workers; i++)
				if (sh->workers[i])
					break;
			if (i < opt_workers) {
				say("worker %d still running %.0fs after the deadline: where our tasks are",
				    i, elapsed - deadline);
				dump_stragglers();
			}
			dumped = true;
		}
		if (elapsed > kill_at) {
			for (i = 0; i < opt_workers; i++)
				if (sh->workers[i]) {
					say("worker %d (pid %d) still running %.0fs after the deadline: killing it",
					    i, sh->workers[i], elapsed - deadline);
					kill(-sh->workers[i], SIGKILL);
					kill(sh->workers[i], SIGKILL);
					if (!whung[i])
						hung++;
					whung[i] = true;
				}
			/*
			 * And whatever else is left: children of dead workers
			 * were re-parented to us (subreaper).
			 */
			for_each_our_task(kill_our_task);
			kill_at = elapsed + 5;
			if (elapsed > opt_seconds + 100) {
				say("children that SIGKILL does not end: giving up on them");
				dump_stragglers();
				add_why("tasks SIGKILL does not end");
				break;
			}
		}
		usleep(20000);
	}
	elapsed = now();
	limit_restore();
	for (i = 0; i < opt_workers; i++) {
		char dir[64];

		snprintf(dir, sizeof(dir), "/tmp/pmuctx-fuzz.%d", wpids[i]);
		remove_fake_pidfds(dir);
	}
	print_summary(elapsed);
	(void)unpriv_workers;
	if (sh->violations || nprivfail || hung) {
		printf("not ok 1 - pmuctx_fuzz seed=%llu: %lu violations, %d workers failed, %d hung%s%s%s\n",
		       (unsigned long long)opt_seed, sh->violations, nprivfail, hung,
		       why[0] ? " (" : "", why, why[0] ? ")" : "");
		return 1;
	}
	printf("ok 1 - pmuctx_fuzz seed=%llu: %lu ops in %.1fs, %.0f ops/s\n",
	       (unsigned long long)opt_seed, sh->ops, elapsed, sh->ops / elapsed);
	return 0;
}
