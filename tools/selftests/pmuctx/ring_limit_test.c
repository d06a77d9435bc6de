// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile tests of the memory a user may pin through sample rings (issue
 * 41 item 2; Documentation/security.rst, "Sample ring memory"): every
 * sampling counter's ring is kernel memory, ~2 MiB with a user stack,
 * that no task's RSS shows.  An unprivileged user opens sampling counters
 * with a user stack, on itself and on its children, until refused: the
 * refusal must come at max_ring_kb plus its RLIMIT_MEMLOCK, with EPERM; the
 * memory must come back on close; another user must not be affected.
 */
#include "hostile.h"
#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define PARAM		"/sys/module/pmuctx/parameters/max_ring_kb"
/* The documented default, for a module without the parameter. */
#define DEFAULT_KB	16384
/* Set for the test: a few rings' worth keeps it quick. */
#define TEST_KB		8192
/* The old module refused nothing: stop this far past the bound. */
#define PAST_KB		(16 << 10)
/* A user part of 8 KiB a sample: 256 of them, a 2 MiB ring. */
#define USER_BYTES	8192
#define RING_MIN_KB	2048
/* What the ring takes beside its user part (its samples, kmalloc's bucket). */
#define RING_MAX_KB	(RING_MIN_KB + 64)
#define MAX_FDS		256
#define MAX_KIDS	64
#define OTHER_UID	65533

struct fill {
	int opened, on_kids, refused_errno, other_errno;
	long mem_kb;		/* MemAvailable lost while the rings were open */
};

static long mem_available_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long read_param(void)
{
	long v = pmuctx_module_param("max_ring_kb", -1);

	return v;
}

static int write_param(long kb)
{
	char buf[32];
	int fd = open(PARAM, O_WRONLY), n, ok;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", kb);
	ok = write(fd, buf, n) == n;
	close(fd);
	return ok ? 0 : -1;
}

/* Which kind of sampling counter this machine has: 1 hardware, 2 range. */
static int ring_kind(void)
{
	struct pmuctx_info info;

	if (pmu_info(&info))
		return 0;
	if ((info.features & PMUCTX_FEAT_HARDWARE) &&
	    (info.features & PMUCTX_FEAT_OVERFLOW))
		return 1;
	if (info.features & PMUCTX_FEAT_RANGE_SAMPLES)
		return 2;
	return 0;
}

static uint64_t words[8] __attribute__((aligned(64)));

/*
 * A disabled sampling counter with a 2 MiB ring on @target; @nth picks a
 * debug register's word for a range counter.
 */
static int open_ring(int kind, int target, int nth)
{
	struct pmuctx_attr a = {
		.size = sizeof(a),
		.flags = PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_EXCLUDE_KERNEL,
		.sample_period = 1000000,
		.sample_stack_user = USER_BYTES - sizeof(struct pmuctx_sample_user),
	};

	if (kind == 1) {
		a.type = PMUCTX_TYPE_RAW;
		a.config = PMU_CPU_CYCLES;
	} else {
		a.type = PMUCTX_TYPE_RANGE;
		a.config = PMUCTX_RANGE_DATA_WRITE;
		a.range_start = (uintptr_t)&words[nth % 8];
		a.range_end = a.range_start + 8;
	}
	return pmuctx_open_attr(&a, target, -1, PMUCTX_OPEN_CLOEXEC);
}

struct opener {
	int fds[MAX_FDS], nfds;
	pid_t kids[MAX_KIDS];
	int rel[MAX_KIDS], nkids;
};

/* Rings on the filler itself only (its children would not be its own). */
static bool fill_self_only;

/* Move *@kid to the next child, forking it if it is new: 0, or -1. */
static int next_kid(struct opener *o, int *kid)
{
	if (++*kid >= MAX_KIDS)
		return -1;
	if (*kid >= o->nkids) {
		o->kids[*kid] = blocked_child(&o->rel[*kid]);
		if (o->kids[*kid] < 0)
			return -1;
		o->nkids = *kid + 1;
	}
	return 0;
}

/*
 * Open rings, a first on ourselves, then two on each child (the next one
 * when its debug registers are taken), until refused or @stop_kb past
 * what the rings must take at least.  The refusal's errno, or 0.
 */

static int fill(struct opener *o, int kind, long stop_kb, int *on_kids)
{
	int target = 0, nth = 0, kid = -1;

	*on_kids = 0;
	while ((long)o->nfds * RING_MIN_KB <= stop_kb && o->nfds < MAX_FDS) {
		int fd = open_ring(kind, target ? o->kids[kid] : 0, nth);

		if (fd < 0 && !fill_self_only &&
		    (errno == EBUSY || errno == EMFILE || errno == ENOSPC ||
		     (errno == ESRCH && target))) {
			/* This task has no room left: the next child. */
			if (next_kid(o, &kid))
				return -1;
			target = 1;
			nth = 0;
			continue;
		}
		if (fd < 0)
			return errno;
		o->fds[o->nfds++] = fd;
		*on_kids += target;
		nth++;
		/*
		 * One on ourselves, then two on each child: the bound must
		 * count rings on children as it counts the opener's own.
		 */
		if (!target && !fill_self_only)
			nth = 2;
		if (nth >= 2 && !fill_self_only) {
			if (next_kid(o, &kid))
				return -1;
			target = 1;
			nth = 0;
		}
	}
	return 0;
}

static void close_rings(struct opener *o)
{
	while (o->nfds)
		close(o->fds[--o->nfds]);
}

static void end_kids(struct opener *o)
{
	int i, status;

	for (i = 0; i < o->nkids; i++) {
		write_full(o->rel[i], "x", 1);
		close(o->rel[i]);
		waitpid(o->kids[i], &status, 0);
	}
	o->nkids = 0;
}

static int set_memlock(long kb)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return -1;
	rl.rlim_cur = kb * 1024;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &rl);
}

/* As uid @uid with RLIMIT_MEMLOCK 0: whether one ring opens (its errno). */
static int other_user_opens(int kind, uid_t uid)
{
	pid_t pid = fork();
	int status, fd;

	if (!pid) {
		if (set_memlock(0) || setgroups(0, NULL) ||
		    setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(200);
		fd = open_ring(kind, 0, 0);
		_exit(fd < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The bound of the unprivileged, and its release: run by one process of
 * uid 65534 while the test's root process holds the other user's turn.
 */
TEST(ring_memory_is_bounded_per_user)
{
	struct fill *first, *again, *memlock;
	long saved = read_param(), bound_kb, mem0;
	int kind = ring_kind(), go[2], at[2], status, err;
	pid_t opener;
	char c;

	if (!kind)
		SKIP(return, "no sampling counter on this machine");
	if (saved >= 0) {
		ASSERT_EQ(0, write_param(TEST_KB));
		bound_kb = TEST_KB;
	} else {
		bound_kb = DEFAULT_KB;	/* the old module: no parameter */
	}
	first = shared_area(3 * sizeof(*first));
	ASSERT_NE(NULL, first);
	again = first + 1;
	memlock = first + 2;
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(at));

	opener = fork();
	ASSERT_LE(0, opener);
	if (!opener) {
		struct opener o = {};
		long kb;

		close(go[1]);
		close(at[0]);
		if (set_memlock(0) || become_nobody())
			_exit(100);
		mem0 = mem_available_kb();
		first->refused_errno = fill(&o, kind, bound_kb + PAST_KB,
					    &first->on_kids);
		first->opened = o.nfds;
		first->mem_kb = mem0 - mem_available_kb();
		/* At the bound, while root lets another user open. */
		write_full(at[1], "x", 1);
		read_full(go[0], &c, 1);
		/* Closed, the memory is back: the same rings open again. */
		close_rings(&o);
		end_kids(&o);
		for (kb = 0; kb < 100; kb++) {
			again->refused_errno = fill(&o, kind, (long)first->opened *
						    RING_MIN_KB - 1, &again->on_kids);
			again->opened = o.nfds;
			close_rings(&o);
			end_kids(&o);
			if (again->opened >= first->opened)
				break;
			sleep_ms(50);
		}
		/* RLIMIT_MEMLOCK adds to the bound (not above its hard limit). */
		memlock->refused_errno = -2;
		if (!set_memlock(4096)) {
			memlock->refused_errno = fill(&o, kind, bound_kb + 4096 + PAST_KB,
						      &memlock->on_kids);
			memlock->opened = o.nfds;
			close_rings(&o);
			end_kids(&o);
		}
		_exit(0);
	}
	close(go[0]);
	close(at[1]);
	read_full(at[0], &c, 1);
	/* Another user is not affected; nor is root (CAP_IPC_LOCK). */
	first->other_errno = other_user_opens(kind, OTHER_UID);
	err = open_ring(kind, 0, 0);
	EXPECT_LE(0, err) TH_LOG("root refused: %s", strerror(errno));
	if (err >= 0)
		close(err);
	write_full(go[1], "x", 1);
	ASSERT_EQ(opener, waitpid(opener, &status, 0));
	if (saved >= 0)
		write_param(saved);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	TH_LOG("bound %ld KiB: %d rings opened (%d on children), MemAvailable down %ld KiB, then %s",
	       bound_kb, first->opened, first->on_kids, first->mem_kb,
	       first->refused_errno ? strerror(first->refused_errno) : "no refusal");
	EXPECT_GE(bound_kb, (long)first->opened * RING_MIN_KB)
		TH_LOG("pinned at least %d KiB of rings, bound %ld KiB",
		       first->opened * RING_MIN_KB, bound_kb);
	EXPECT_EQ(EPERM, first->refused_errno);
	EXPECT_LE(bound_kb / RING_MAX_KB, first->opened) TH_LOG("refused below the bound");
	EXPECT_LT(0, first->on_kids) TH_LOG("no ring on a child: children not tested");
	EXPECT_EQ(0, first->other_errno) TH_LOG("uid %d refused: %s", OTHER_UID,
						 strerror(first->other_errno));
	EXPECT_LE(first->opened, again->opened)
		TH_LOG("after close, only %d of %d reopened (%s)", again->opened,
		       first->opened, strerror(again->refused_errno));
	if (memlock->refused_errno == -2) {
		TH_LOG("RLIMIT_MEMLOCK's hard limit is below 4 MiB: not tested");
	} else {
		TH_LOG("with RLIMIT_MEMLOCK 4 MiB: %d rings", memlock->opened);
		EXPECT_EQ(EPERM, memlock->refused_errno);
		EXPECT_GE(bound_kb + 4096, (long)memlock->opened * RING_MIN_KB);
		EXPECT_LE((bound_kb + 4096) / RING_MAX_KB, memlock->opened);
	}
}

/* Rings a fresh uid-65534 process opens with RLIMIT_MEMLOCK 0 (-errno). */
static int nobody_fill_count(int kind, long stop_kb)
{
	struct fill *f = shared_area(sizeof(*f));
	pid_t pid;
	int status;

	if (!f)
		return -ENOMEM;
	pid = fork();
	if (!pid) {
		struct opener o = {};

		if (set_memlock(0) || become_nobody())
			_exit(100);
		f->refused_errno = fill(&o, kind, stop_kb, &f->on_kids);
		f->opened = o.nfds;
		close_rings(&o);
		end_kids(&o);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -ECHILD;
	return f->refused_errno == EPERM ? f->opened : -f->refused_errno;
}

/*
 * The charge goes back to the user it was taken from, whoever holds the
 * ring when it is freed: a process that opened its rings as uid 65534 (a
 * real uid it can leave, having kept root as its saved uid) and closes
 * them as root must give uid 65534 its room back, not root.
 */
TEST(ring_charge_returns_to_the_opener_user)
{
	long saved = read_param(), bound_kb;
	int kind = ring_kind(), before, after, status;
	pid_t pid;

	if (!kind)
		SKIP(return, "no sampling counter on this machine");
	if (saved < 0)
		SKIP(return, "no max_ring_kb parameter: the old module has no charge to return");
	ASSERT_EQ(0, write_param(TEST_KB));
	bound_kb = TEST_KB;
	before = nobody_fill_count(kind, bound_kb + PAST_KB);
	ASSERT_LT(0, before) TH_LOG("refusal: %s", strerror(-before));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct opener o = {};
		int on_kids, err;

		/*
		 * Real and effective 65534, saved root: charged to 65534.  Its
		 * children would keep the saved root, which the attach policy
		 * refuses: rings on itself only (a range counter on the 4th
		 * debug register is past the bound already).
		 */
		fill_self_only = true;
		if (set_memlock(0) || setgroups(0, NULL) ||
		    setresgid(NOBODY, NOBODY, 0) || setresuid(NOBODY, NOBODY, 0))
			_exit(100);
		prctl(PR_SET_DUMPABLE, 1);
		err = fill(&o, kind, bound_kb + PAST_KB, &on_kids);
		if (err != EPERM || o.nfds != before)
			_exit(101);
		/* Root again, then the close: the charge must go to 65534. */
		if (setresuid(0, 0, 0) || setresgid(0, 0, 0))
			_exit(102);
		close_rings(&o);
		end_kids(&o);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("101: not the same rings as a plain 65534 (%d)",
						  before);
	for (status = 0; status < 40; status++) {
		after = nobody_fill_count(kind, bound_kb + PAST_KB);
		if (after == before)
			break;
		sleep_ms(50);
	}
	write_param(saved);
	EXPECT_EQ(before, after) TH_LOG("uid 65534 opens %d rings after the root close, %d before",
					after, before);
}

TEST_HARNESS_MAIN
