// SPDX-License-Identifier: GPL-2.0
/*
 * Multiplexing (arm64 PMUv3 in QEMU: 6 event counters + the cycle counter):
 * more counters than the PMU has rotate, their scaled values match the same
 * events counted alone, the error estimate covers the true error, pinned
 * groups never lose time, and inherited multiplexed contexts still swap and
 * still conserve their counts.  Exact comparisons need -icount on one vCPU.
 * On the shared backend perf multiplexes, over a PMU root over-commits
 * (shared_prepare()), and the cases about pmuctx's own rotation skip.
 */
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <pthread.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include "pmu_test.h"
#include "kselftest_harness.h"
#include "hostile.h"

/* The debug kernels run the exact tests' hundreds of millions of instructions slowly. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
/* The estimator pmuctx stat prints, compiled in: the VM has no libpmuctx. */
#include "../../lib/estimate.c"
/* The workload families of issue 25, shared with make bench's mux block. */
#include "../../bench/mux_families.h"

#define NR_EVENTS	14	/* twice the PMU's 6 + 1 counters */

struct event {
	uint64_t code;
	uint64_t exclude;	/* PMUCTX_ATTR_EXCLUDE_* */
	const char *name;
};

/* Seven distinct events, each opened twice: fourteen counters. */
static struct event events[NR_EVENTS / 2] = {
	{ INST_RETIRED, PMUCTX_ATTR_EXCLUDE_KERNEL, "inst:u" },
	{ CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, "cycles:u" },
	{ INST_RETIRED, PMUCTX_ATTR_EXCLUDE_USER, "inst:k" },
	{ CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_USER, "cycles:k" },
	{ INST_RETIRED, 0, "inst" },
	{ CPU_CYCLES, 0, "cycles" },
	{ INST_RETIRED, PMUCTX_ATTR_EXCLUDE_KERNEL, "inst:u#2" },
};

/*
 * QEMU advertises INST_RETIRED only under -icount: elsewhere the tests
 * that need no exact count use CPU_CYCLES in its place.  Returns the
 * event that stands for instructions.
 */
static uint64_t instructions_event(void)
{
	struct pmuctx_info info = { .size = sizeof(info) };
	unsigned int i;

	if (!ioctl(pmuctx_dev(), PMUCTX_INFO, &info) &&
	    (info.hw_events[0] & (1ULL << INST_RETIRED_INFO_BIT)))
		return INST_RETIRED;
	for (i = 0; i < NR_EVENTS / 2; i++)
		if (events[i].code == INST_RETIRED)
			events[i].code = CPU_CYCLES;
	return CPU_CYCLES;
}

#define FMT	(PMUCTX_FORMAT_TOTAL_TIME_ENABLED | \
		 PMUCTX_FORMAT_TOTAL_TIME_RUNNING | PMUCTX_FORMAT_SLICES)

static int open_event_on(const struct event *ev, uint64_t flags, int group,
			 pid_t target)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_RAW,
		.config = ev->code,
		.flags = ev->exclude | flags,
		.read_format = FMT,
	};

	return pmuctx_open_attr(&attr, target, group, PMUCTX_OPEN_CLOEXEC);
}

static int open_event(const struct event *ev, uint64_t flags, int group)
{
	return open_event_on(ev, flags, group, 0);
}

static int read_counter(int fd, struct pmuctx_value *r)
{
	uint64_t w[3 + sizeof(struct pmuctx_slice_stats) / 8];

	if (read(fd, w, sizeof(w)) != sizeof(w))
		return -1;
	memset(r, 0, sizeof(*r));
	r->value = w[0];
	r->time_enabled = w[1];
	r->time_running = w[2];
	memcpy(&r->slices, &w[3], sizeof(r->slices));
	return 0;
}

static double scaled(const struct pmuctx_value *r)
{
	return r->time_running ?
	       (double)r->value * r->time_enabled / r->time_running : 0;
}

/* Standard error of the scaled value; negative when it is unknown. */
static double std_error(const struct pmuctx_value *r)
{
	struct pmuctx_estimate e;

	switch (pmuctx_estimate(r, &e)) {
	case PMUCTX_EST_ESTIMATED:
		return e.stderr_value;
	case PMUCTX_EST_EXACT:
		return 0;
	default:
		return -1;
	}
}

/* The 95% half-width (Student t); negative when it is unknown. */
static double half_width(const struct pmuctx_value *r)
{
	struct pmuctx_estimate e;

	switch (pmuctx_estimate(r, &e)) {
	case PMUCTX_EST_ESTIMATED:
		return e.ci95;
	case PMUCTX_EST_EXACT:
		return 0;
	default:
		return -1;
	}
}

/* One phased round: @user loop iterations, then @calls system calls. */
static void workload(unsigned long rounds, unsigned long user,
		     unsigned long calls)
{
	unsigned long i, j;

	for (i = 0; i < rounds; i++) {
		run_loop(user);
		for (j = 0; j < calls; j++)
			syscall(SYS_getppid);
	}
}

static void enable_all(int *fd, int n, int on)
{
	int i;

	for (i = 0; i < n; i++)
		ioctl(fd[i], on ? PMUCTX_IOC_ENABLE : PMUCTX_IOC_DISABLE, 0);
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * The shared backend (kernel/perf_shared.c): perf's per-CPU events under
 * the contexts.  There a context's counters take turns only when perf
 * multiplexes the configurations pmuctx borrows from it, and perf chooses
 * the turns: every perf_event_mux_interval_ms of its PMU its rotation
 * moves its list of flexible CPU-wide events (the borrowed ones) on by
 * one, and puts on the PMU as many as then fit, in list order.  The
 * module's slices follow those turns (multiplexing.rst, "On perf's
 * events").  The two copies of an event are one configuration: the
 * fourteen counters borrow six (instructions and cycles, in user, kernel
 * and both modes), which fit the PMU together (arm64 6 + 1 counters, x86
 * 8 + 3 with the watchdog's cycles on one), and are the truth here, read
 * in one run.
 *
 * The over-commit is the one a user of a shared machine meets: perf's
 * users hold most of the PMU.  Root's pinned CPU-wide events (what a
 * site's monitoring daemon, or the watchdog, holds) take every general
 * counter but two (an event that counts nothing: event 0, arm64's
 * SW_INCR, on general counters only), and the six configurations share
 * those two and the counters only they can use (arm64's cycle counter,
 * x86's fixed counters): on about half of their time each, as pmuctx's
 * own rotation has the fourteen on the native backends.  Root's other
 * choices for it, restored after (shared_restore()):
 * - max_borrowed: the six configurations, past arm64's default bound of
 *   the PMU's general counters less two (what make bench's shared boots
 *   choose too);
 * - perf_event_mux_interval_ms 1, as a user who multiplexes short runs
 *   sets it: a configuration gets one turn per rotation of the whole
 *   list, six of perf's intervals, so the slices a run of 100 M
 *   instructions gives a counter are 16 at 1 ms, 4 at perf's default of
 *   a jiffy (too few for an error estimate that means much, multiplexing.rst).
 */
#define PARAMS		"/sys/module/pmuctx/parameters/"
#define SHARED_MUX_MS	1
#define MAX_FILLERS	64

static long saved_max_borrowed = -1, saved_perf_mux_ms = -1;
static int fillers[MAX_FILLERS], nr_fillers;

/* Before any test: what shared_prepare() changes, to be put back. */
static void __attribute__((constructor)) shared_save(void)
{
	if (!perf_shared() || geteuid())
		return;
	saved_max_borrowed = read_long(PARAMS "max_borrowed");
	saved_perf_mux_ms = read_long(perf_mux_interval_path());
}

/* At the end of a test that changed them, and of the whole run. */
static void shared_restore(void)
{
	char buf[32];

	if (saved_max_borrowed >= 0) {
		snprintf(buf, sizeof(buf), "%ld", saved_max_borrowed);
		write_file(PARAMS "max_borrowed", buf);
	}
	if (saved_perf_mux_ms > 0) {
		snprintf(buf, sizeof(buf), "%ld", saved_perf_mux_ms);
		write_file(perf_mux_interval_path(), buf);
	}
}

static void __attribute__((destructor)) shared_restore_at_exit(void)
{
	shared_restore();
}

/*
 * Why this boot cannot over-commit perf's PMU, or NULL once it is ready.
 * It also keeps the six configurations borrowed for the whole test (a
 * disabled counter of each on the test itself), as a long-lived tool's
 * counters would: every run's counters share them.  Otherwise each run
 * would borrow them afresh while the last run's, released by a work once
 * their last counter is gone (design.rst), could still be on perf's list,
 * over-committing the PMU for the truth's run too.
 */
static const char *shared_prepare(void)
{
	static int keepers[NR_EVENTS / 2];
	char buf[16];
	int i;

	if (geteuid())
		return "over-committing perf's PMU takes root (max_borrowed, pinned CPU-wide events)";
	if (saved_max_borrowed < 0 || saved_perf_mux_ms <= 0)
		return "no max_borrowed or perf_event_mux_interval_ms to write";
	snprintf(buf, sizeof(buf), "%d", SHARED_MUX_MS);
	if (write_file(PARAMS "max_borrowed", "16") ||
	    write_file(perf_mux_interval_path(), buf))
		return "max_borrowed or perf_event_mux_interval_ms not writable";
	/*
	 * Nothing else borrowed beside the six: configurations that an
	 * earlier suite's counters, or an earlier case's keepers (each case
	 * runs in a child of its own), held stay on perf's list until their
	 * last counter is gone, a moment after that suite or case exits, and
	 * with the six they over-commit the PMU for the truth's run (seen:
	 * right after shared_test on arm64 two were left, and the truth's
	 * seven events each missed about one of perf's intervals).  Ten
	 * seconds at most: past that the truth run says what is wrong.
	 */
	for (i = 0; i < 100 && read_long(PARAMS "borrowed") > 0; i++)
		usleep(100000);
	if (i)
		printf("# waited %d ms for earlier configurations to go (%ld left)\n",
		       i * 100, read_long(PARAMS "borrowed"));
	for (i = 0; i < NR_EVENTS / 2; i++) {
		keepers[i] = open_event_on(&events[i], PMUCTX_ATTR_DISABLED,
					   -1, 0);
		if (keepers[i] < 0)
			return "the six configurations cannot be borrowed";
	}
	/*
	 * The last of those events go with a work after that, and ours may
	 * not have fit beside them: on the PMU by perf's next rotation at
	 * the latest (overcommit()).
	 */
	usleep(2 * SHARED_MUX_MS * 1000);
	return NULL;
}

/*
 * Root's pinned CPU-wide events on every general counter but two, on
 * every CPU (@on), or gone (!@on): what over-commits the PMU for the
 * six configurations.
 */
static void overcommit(struct __test_metadata *_metadata, bool on)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_RAW,
		.config = 0,
		.pinned = 1,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	struct pmuctx_info info = { .size = sizeof(info) };
	int cpu, i, ncpu = nr_cpus();

	if (!perf_shared())
		return;
	if (!on) {
		while (nr_fillers)
			close(fillers[--nr_fillers]);
		/*
		 * A removed event does not make perf schedule the others
		 * again: the configurations the fillers kept off stay off
		 * until perf's next rotation, one interval at most.  Two,
		 * before the next run counts.
		 */
		usleep(2 * SHARED_MUX_MS * 1000);
		return;
	}
	ASSERT_EQ(0, ioctl(pmuctx_dev(), PMUCTX_INFO, &info));
	ASSERT_LT(2, info.nr_general);
	for (cpu = 0; cpu < ncpu; cpu++) {
		for (i = 0; i < (int)info.nr_general - 2; i++) {
			ASSERT_GT(MAX_FILLERS, nr_fillers);
			fillers[nr_fillers] = syscall(SYS_perf_event_open, &a, -1,
						      cpu, -1, PERF_FLAG_FD_CLOEXEC);
			ASSERT_LE(0, fillers[nr_fillers])
				TH_LOG("root's pinned event 0 on CPU %d: %s",
				       cpu, strerror(errno));
			nr_fillers++;
		}
	}
}

/*
 * The fillers held their counters all along (a pinned event perf could
 * not put on the PMU would be in error, reading nothing): the PMU left to
 * the borrowed configurations was as small as meant.
 */
static void expect_fillers_pinned(struct __test_metadata *_metadata)
{
	uint64_t v[3];
	int i;

	for (i = 0; i < nr_fillers; i++) {
		ASSERT_EQ(sizeof(v), read(fillers[i], v, sizeof(v)));
		EXPECT_LT(0, v[2]);
		EXPECT_EQ(v[1], v[2]);
	}
}

/*
 * Whether the multiplexing suite runs here, or why not: the native
 * backends rotate pmuctx's own units; the shared backend, once the PMU is
 * over-committed (shared_prepare()), follows perf's turns.  perf's
 * task-bound events (backend=perf) are multiplexed by perf per task, out
 * of pmuctx's sight: their counters have one slice, and no error estimate.
 */
static const char *mux_unsupported(void)
{
	if (perf_task_bound())
		return "perf multiplexes the task-bound backend's events out of pmuctx's sight (one slice, no estimate)";
	if (perf_shared())
		return shared_prepare();
	return NULL;
}

/* The tests of pmuctx's own rotation: the native backends only. */
static const char *own_rotation_unsupported(void)
{
	if (perf_task_bound())
		return "perf multiplexes the task-bound backend's events (hw_test)";
	if (perf_shared())
		return "pmuctx's own rotation: on the shared backend perf rotates (phased cases)";
	return NULL;
}

/*
 * On the shared backend, perf's rotations while a context ran for
 * @enabled ns, at most (one per interval): what perturbs the counts
 * there, as pmuctx's rotations do on the native backends.
 */
static uint64_t perf_rotations(uint64_t enabled)
{
	return enabled / (SHARED_MUX_MS * 1000000ULL) + 1;
}

static uint64_t last_rotations;

/*
 * Count @n events (from @first, cyclically) over a child's workload() and
 * nothing else: the parent opens them while the child waits to start, and
 * disables them while it waits to end, so neither the child's fork, exit
 * or counters' set-up (kernel work that grows with the number of counters,
 * seen by only some of the rotating ones) is in the counts.
 * last_rotations says how often the child's context rotated.
 */
static void count_workload(struct __test_metadata *_metadata, int first,
			   int n, struct pmuctx_value *r, unsigned long rounds,
			   unsigned long user, unsigned long calls)
{
	struct pmuctx_ctx_stats st = { .size = sizeof(st) };
	int go[2], done[2], fd[NR_EVENTS], i, status;
	char c = 'g';
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		read_full(go[0], &c, 1);
		workload(rounds, user, calls);
		write_full(done[1], &c, 1);
		read_full(go[0], &c, 1);
		_exit(0);
	}
	for (i = 0; i < n; i++) {
		fd[i] = open_event_on(&events[(first + i) % (NR_EVENTS / 2)], 0,
				      -1, pid);
		ASSERT_LE(0, fd[i]);
	}
	write_full(go[1], &c, 1);
	read_full(done[0], &c, 1);
	/* Blocked again (its sched_out folded the counts): freeze them. */
	ASSERT_EQ(0, wait_for_wchan(pid, "pipe_read"));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, ioctl(fd[i], PMUCTX_IOC_DISABLE, 0));
	write_full(go[1], &c, 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, ioctl(fd[0], PMUCTX_IOC_STATS, &st));
	last_rotations = st.rotations;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, read_counter(fd[i], &r[i]));
		close(fd[i]);
		if (perf_shared())
			last_rotations = perf_rotations(r[i].time_enabled);
	}
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/*
 * Each distinct event alone over the same workload: the truth.  On the
 * shared backend the seven together, which fit the PMU perf lends
 * (shared_prepare()): one run instead of seven.
 */
static void count_alone(struct __test_metadata *_metadata, double *truth,
			unsigned long rounds, unsigned long user,
			unsigned long calls)
{
	struct pmuctx_value r[NR_EVENTS / 2];
	int i;

	if (perf_shared()) {
		count_workload(_metadata, 0, NR_EVENTS / 2, r, rounds, user,
			       calls);
		for (i = 0; i < NR_EVENTS / 2; i++) {
			EXPECT_EQ(r[i].time_enabled, r[i].time_running);
			truth[i] = r[i].value;
		}
		return;
	}
	for (i = 0; i < NR_EVENTS / 2; i++) {
		count_workload(_metadata, i, 1, r, rounds, user, calls);
		EXPECT_EQ(r[0].time_enabled, r[0].time_running);
		truth[i] = r[0].value;
	}
}

/* All fourteen at once over the workload (the PMU over-committed). */
static void count_multiplexed(struct __test_metadata *_metadata,
			      struct pmuctx_value *r, unsigned long rounds,
			      unsigned long user, unsigned long calls)
{
	overcommit(_metadata, true);
	count_workload(_metadata, 0, NR_EVENTS, r, rounds, user, calls);
	expect_fillers_pinned(_metadata);
	overcommit(_metadata, false);
}

/* /proc/lockdep: a kernel built to find bugs (lockdep, KASAN). */
static bool debug_kernel(void)
{
	return !access("/proc/lockdep", F_OK);
}

/*
 * Phased: user loops alternate with system calls, so user-mode and
 * kernel-mode events come in bursts.  Runs of different phase lengths
 * (so phases fall differently against the rotation) pool their events.
 * What Documentation/multiplexing.rst states, checked:
 * - user-only and kernel-only events: the 95% interval (1.96 standard
 *   errors) covers the true value for at least 90% of them;
 * - events of every mode count at a constant rate under -icount (one
 *   instruction, one cycle per ns), so their sampling error is nil and
 *   what is left is multiplexing's own perturbation, which the estimate
 *   does not model: the rotation rides on the tick with the PMU stopped
 *   and its time uncounted, but the hrtimer core's dispatch around the
 *   callback runs with the counters on.  Measured per rotation, with the
 *   reference's own run-to-run noise from where ticks fall: up to ~1,800
 *   events on Debian's 6.1; on its 6.12, whose interrupt entry and hrtimer
 *   core cost more (perf's own switch doubled there, performance.rst),
 *   3,390 (47,463 over 14 rotations, a CI run of 2026-12-01) and 3,904
 *   (-50,757 over 13, cycles, one boot in three on 2026-12-02) on the x86
 *   PMU lane, where the bound of 3,000 had held on 6.1; on the debug
 *   kernel (lockdep, KASAN and
 *   debug objects in the hrtimer core) ~10,000 in the first runs, then up
 *   to 28,000 (726,458 over 26 rotations, cycles, run 4) in three boots
 *   of 2026-11-24, with the module of the last green CI as with this
 *   one: the bound of 24,000 failed both.  Bound: about 1.5 times the
 *   largest seen on either.  A lost slice is off by a slice's share
 *   of the count, millions here: a hundred times the bound.
 * On the shared backend the rotations are perf's, one an interval
 * (perf_rotations()), with its interrupt and the watch's fold: 1,300
 * (x86) and 1,600 (arm64) events each on Debian's 6.1; on the debug
 * kernel ~47,000, over the bound (the shared cases are for stock kernels).
 */
static double mux_perturbation(void)
{
	return debug_kernel() ? 40000 : 6000;
}

/*
 * How far a multiplexed counter's scaled value may be from the truth:
 * K_MUX times the 95% half-width of its estimate (pmuctx_estimate(), from
 * the module's own slice statistics), plus what that estimate leaves out
 * by its definition (multiplexing.rst, "What it assumes"): the rotation's
 * timer dispatch, mux_perturbation() events per rotation for events that
 * count kernel mode; for user-mode events it is time (the dispatch runs
 * on the context's clock with the counters on, ~1 ns an instruction
 * under -icount), which shifts running against enabled time by as much.
 * Measured: the steady loop's user-mode counters were 45,000 and 49,600
 * from the truth after 25 rotations, 0.85 and 5.0 standard errors: the
 * dispatch, not sampling.
 *
 * K_MUX = 3: with a right estimate the 95% interval misses at most one
 * time in twenty, and each run judges several counters, so K_MUX = 1
 * would fail a correct module now and then.  The half-width is already
 * Student's t for the slices' degrees of freedom (2.23 with 11 slices,
 * the normal 1.96 was too narrow with few: 85% covered at 3-4) and has
 * no finite-population correction (multiplexing.rst), so three of them
 * are about 9 standard errors of a half-time counter; they were seen at
 * 4.41 half-widths once with few slices under the old estimate (1.96,
 * with the correction, at half time: 4.41 of those are about 2.7 of
 * these).  Without -icount the cycle counter counts host time, whose
 * stalls under load (a vCPU not scheduled for milliseconds, counted by
 * the slice it falls in) are heavy-tailed: that is what the margin is
 * for.  A mis-scaled count
 * (times that do not match the counts, a lost slice) is off by far more
 * than that.  Measured (2026-11-26, host loaded by kernel builds and
 * other VMs): inherited_multiplexed_ping_pong's counters on arm64 -smp 2
 * (cycles) had half-widths of 7-32% and were 0.07-0.89 half-widths from
 * the pinned count in 10 counters (one run had failed the old fixed 10%
 * at -21.6%); under -icount, half-widths 0.2-0.55% and errors of
 * 0.37-0.75 of them (both with the old estimate).
 */
#define K_MUX	3

/*
 * Whether @r's scaled value is within K_MUX half-widths and the rotations'
 * perturbation of @truth; logs the figures either way.
 */
static bool within_estimate(struct __test_metadata *_metadata,
			    const char *name, const struct pmuctx_value *r,
			    double truth, uint64_t rotations)
{
	struct pmuctx_estimate e;
	double s, bound;

	if (pmuctx_estimate(r, &e) != PMUCTX_EST_ESTIMATED) {
		TH_LOG("%s: no error estimate (state %d, %llu slices)", name,
		       e.state, (unsigned long long)r->slices.slices);
		return false;
	}
	s = e.scaled;
	bound = K_MUX * e.ci95 + mux_perturbation() * rotations;
	TH_LOG("%s: truth %.0f scaled %.0f (%+.3f%%), 95%% half-width %.0f (%.3f%%), %llu slices, %llu rotations: error %.2f half-widths, bound %.0f",
	       name, truth, s, 100 * (s - truth) / truth, e.ci95,
	       100 * e.ci95 / s, (unsigned long long)r->slices.slices,
	       (unsigned long long)rotations,
	       e.ci95 > 0 ? fabs(s - truth) / e.ci95 : 0, bound);
	return fabs(s - truth) <= bound;
}

TEST(fourteen_events_scale_within_one_percent)
{
	const char *why;
	double truth[NR_EVENTS / 2], s, err;
	struct pmuctx_value r[NR_EVENTS];
	int i;

	SELECTED_OR_SKIP();
	if (!exact())
		SKIP(return, "needs the arm64 PMU under -icount on one CPU");
	why = mux_unsupported();
	if (why)
		SKIP(return, "%s", why);
	pin_to_cpu(0);
	/* A steady loop of 100M user instructions: ~25 rotations. */
	count_alone(_metadata, truth, 1, 50000000, 0);
	count_multiplexed(_metadata, r, 1, 50000000, 0);
	for (i = 0; i < NR_EVENTS; i++) {
		const struct event *ev = &events[i % (NR_EVENTS / 2)];
		double t = truth[i % (NR_EVENTS / 2)];

		s = scaled(&r[i]);
		err = std_error(&r[i]);
		TH_LOG("%-9s alone %.0f scaled %.0f (%+.3f%%) running %.1f%% slices %llu se %.0f",
		       ev->name, t, s, t ? 100 * (s - t) / t : 0,
		       100.0 * r[i].time_running / r[i].time_enabled,
		       (unsigned long long)r[i].slices.slices, err);
		/* Every counter shared the PMU: none ran all the time. */
		EXPECT_LT(r[i].time_running, r[i].time_enabled);
		EXPECT_LT(r[i].time_enabled / 5, r[i].time_running);
		EXPECT_LE(2, r[i].slices.slices);
		/*
		 * Kernel-only events see only ticks and the rotations' own
		 * perturbation during a user loop: nothing steady to compare.
		 */
		if (ev->exclude & PMUCTX_ATTR_EXCLUDE_USER)
			continue;
		/*
		 * 1% is what a user is promised; the rotations' own dispatch
		 * (mux_perturbation(), ~1 ns an event under -icount) comes on
		 * top.  On Debian's kernel that is under 0.1% here; on the
		 * debug kernel it is up to 1% by itself (CI, 2026-11-26:
		 * inst:u at +1.056% over 25 rotations, 2.86 of its own
		 * half-widths), which a fixed 1% cannot absorb.
		 */
		EXPECT_GE(0.01 * t + mux_perturbation() * last_rotations,
			  fabs(s - t)) {
			TH_LOG("%s: scaled %.0f is not within 1%% and %llu rotations' dispatch of %.0f",
			       ev->name, s,
			       (unsigned long long)last_rotations, t);
		}
		/* Under -icount the estimate is tighter than 1%: both hold. */
		EXPECT_TRUE(within_estimate(_metadata, ev->name, &r[i], t,
					    last_rotations));
	}
}

/*
 * Share of the 95% intervals that must cover the truth: 90% on Debian's
 * kernel.  On the debug kernel, whose kernel-mode phases cost ten times
 * more and vary more from slice to slice, six boots on 2026-11-24 covered
 * 51, 55, 58, 58, 60 and 60 of 60 (the normal quantile with ~13 slices a
 * counter is narrow, multiplexing.rst): 80% there, still far above what a
 * wrong estimate gives.
 */
static double mux_coverage_floor(void)
{
	return debug_kernel() ? 0.80 : 0.90;
}

/*
 * Whether a coverage test needs a second pass.  The counters of one
 * context share its rotation order (a random start and stride, drawn at
 * each open), so they are not independent draws: the one context in ten
 * or so that beats with its program moves most of its counters out of
 * their intervals at once.  A count over a handful of contexts therefore
 * varies far more than a binomial over its counters would: 59, 59, 60 and
 * 52 of 60 were seen on one correct module.  Below the floor, a second
 * pass of fresh contexts (new random orders) is pooled with the first,
 * which halves that variance; an estimate that really covers less than
 * the floor fails the pooled count as well.  The second pass costs time
 * only when the first misses.
 */
static bool coverage_needs_second_pass(struct __test_metadata *_metadata,
				       const char *what, unsigned int honest,
				       unsigned int judged)
{
	if (honest >= mux_coverage_floor() * judged)
		return false;
	TH_LOG("%s: %u of %u honest on the first pass, under the floor: a second pass of fresh contexts is pooled with it",
	       what, honest, judged);
	return true;
}

static void phased_pass(struct __test_metadata *_metadata, unsigned int *covered,
			unsigned int *judged, unsigned int *all_modes);

TEST(phased_error_estimate_covers)
{
	const char *why;
	unsigned int covered = 0, judged = 0, all_modes = 0;

	SELECTED_OR_SKIP();
	if (!exact())
		SKIP(return, "needs the arm64 PMU under -icount on one CPU");
	why = mux_unsupported();
	if (why)
		SKIP(return, "%s", why);
	pin_to_cpu(0);
	phased_pass(_metadata, &covered, &judged, &all_modes);
	if (coverage_needs_second_pass(_metadata, "phased", covered, judged))
		phased_pass(_metadata, &covered, &judged, &all_modes);
	TH_LOG("95%% intervals covered the true value for %u of %u user- or kernel-only events (%.1f%%); %u all-mode events within the perturbation bound",
	       covered, judged, 100.0 * covered / judged, all_modes);
	EXPECT_LE(mux_coverage_floor() * judged, covered);
}

static void phased_pass(struct __test_metadata *_metadata, unsigned int *covered,
			unsigned int *judged, unsigned int *all_modes)
{
	static const unsigned long phases[][3] = {
		/* rounds, user loop iterations, system calls */
		{ 40, 400000, 1500 },
		{ 25, 700000, 2500 },
		{ 60, 250000, 900 },
		{ 33, 500000, 2000 },
		{ 50, 350000, 1200 },
		{ 20, 900000, 3000 },
	};
	double truth[NR_EVENTS / 2];
	struct pmuctx_value r[NR_EVENTS];
	unsigned int run, i;

	for (run = 0; run < sizeof(phases) / sizeof(phases[0]); run++) {
		const unsigned long *p = phases[run];
		/* A system call costs ~10 times more there: same proportions. */
		unsigned long calls = debug_kernel() ? p[2] / 10 : p[2];

		count_alone(_metadata, truth, p[0], p[1], calls);
		count_multiplexed(_metadata, r, p[0], p[1], calls);
		for (i = 0; i < NR_EVENTS; i++) {
			const struct event *ev = &events[i % (NR_EVENTS / 2)];
			double t = truth[i % (NR_EVENTS / 2)];
			double s = scaled(&r[i]), half = half_width(&r[i]);
			bool ok = half >= 0 && fabs(s - t) <= half;

			TH_LOG("run %u %-9s true %.0f scaled %.0f error %+.3f%% ±%.3f%% (95%%) slices %llu rotations %llu %s",
			       run, ev->name, t, s, 100 * (s - t) / t,
			       100 * half / s,
			       (unsigned long long)r[i].slices.slices,
			       (unsigned long long)last_rotations,
			       ok ? "covered" : "not covered");
			if (!ev->exclude) {
				EXPECT_GE(half + mux_perturbation() * last_rotations,
					  fabs(s - t));
				(*all_modes)++;
				continue;
			}
			(*judged)++;
			*covered += ok;
		}
	}
}

/*
 * Count @n events (from @first, cyclically), inherited, over the tree of
 * a child running workload family @f from its start to its exit: what
 * `pmuctx stat -- CMD` counts.  The child is attached to while it waits to
 * start.
 */
static void count_family(struct __test_metadata *_metadata,
			 const struct mux_family *f, int first, int n,
			 struct pmuctx_value *r)
{
	int go[2], fd[NR_EVENTS], i, status;
	char c = 'g';
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(go[1]);
		read_full(go[0], &c, 1);
		close(go[0]);
		mux_family_run(f);
	}
	close(go[0]);
	for (i = 0; i < n; i++) {
		fd[i] = open_event_on(&events[(first + i) % (NR_EVENTS / 2)],
				      PMUCTX_ATTR_INHERIT, -1, pid);
		ASSERT_LE(0, fd[i]);
	}
	write_full(go[1], &c, 1);
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, read_counter(fd[i], &r[i]));
		close(fd[i]);
	}
}

struct coverage {
	unsigned int judged, covered, unknown;
};

/*
 * One configuration of a family: the seven events together (they fit the
 * PMU's 6 + 1 counters: exact) are the truth, then all fourteen
 * multiplexed.  Every user-only and kernel-only counter is judged: its 95%
 * interval covers the truth, or it says the error is unknown (`± ?`).
 * Every counter is logged.
 */
static void judge_family(struct __test_metadata *_metadata,
			 const struct mux_family *f, struct coverage *cov)
{
	struct pmuctx_value truth[NR_EVENTS / 2], r[NR_EVENTS];
	char name[32];
	int i;

	mux_family_name(f, name, sizeof(name));
	count_family(_metadata, f, 0, NR_EVENTS / 2, truth);
	for (i = 0; i < NR_EVENTS / 2; i++)
		EXPECT_EQ(truth[i].time_enabled, truth[i].time_running);
	overcommit(_metadata, true);
	count_family(_metadata, f, 0, NR_EVENTS, r);
	expect_fillers_pinned(_metadata);
	overcommit(_metadata, false);
	for (i = 0; i < NR_EVENTS; i++) {
		const struct event *ev = &events[i % (NR_EVENTS / 2)];
		double t = truth[i % (NR_EVENTS / 2)].value;
		double s = scaled(&r[i]), half = half_width(&r[i]);
		bool judged = ev->exclude == PMUCTX_ATTR_EXCLUDE_USER ||
			      ev->exclude == PMUCTX_ATTR_EXCLUDE_KERNEL;
		bool ok = half >= 0 && fabs(s - t) <= half;

		TH_LOG("%-12s %-9s true %.0f scaled %.0f error %+.2f%% ±%s%.2f%% running %.1f%% slices %llu%s",
		       name, ev->name, t, s, t ? 100 * (s - t) / t : 0,
		       half < 0 ? "? " : "", half < 0 ? 0 : 100 * half / s,
		       r[i].time_enabled ?
		       100.0 * r[i].time_running / r[i].time_enabled : 0,
		       (unsigned long long)r[i].slices.slices,
		       !judged ? "" : half < 0 ? " unknown" :
		       ok ? " covered" : " NOT COVERED");
		/* Multiplexed: perf kept every counter off for some time. */
		EXPECT_LT(r[i].time_running, r[i].time_enabled);
		if (!judged)
			continue;
		cov->judged++;
		cov->covered += ok;
		cov->unknown += half < 0;
	}
}

/*
 * Issue 25: intervals honest for what they cannot see.  At least 90% of
 * the judged counters' intervals cover the truth, counting an unknown
 * error (`± ?`) as honest, and at most 10% are unknown (an estimate that
 * always said "?" would be honest and useless).
 */
static void expect_coverage(struct __test_metadata *_metadata,
			    const char *what, const struct coverage *cov)
{
	TH_LOG("%s: %u of %u intervals covered the truth, %u unknown (%.1f%% honest)",
	       what, cov->covered, cov->judged, cov->unknown,
	       100.0 * (cov->covered + cov->unknown) / cov->judged);
	EXPECT_LE(mux_coverage_floor() * cov->judged,
		  cov->covered + cov->unknown);
	EXPECT_GE(cov->judged / 10, cov->unknown);
}

/*
 * Commands that fork: shell bursts of 4 to 16 gzip children and make -j
 * like trees, counted with fourteen inherited counters.  Before the fix,
 * every clone started on its parent's units, and the kernel-mode counters
 * on them read +70% (the others -65%), outside their intervals.
 */
TEST(forking_commands_covered)
{
	const char *why;
	struct coverage cov = {};
	int f;

	SELECTED_OR_SKIP();
	if (!exact())
		SKIP(return, "needs the arm64 PMU under -icount on one CPU");
	why = mux_unsupported();
	if (why)
		SKIP(return, "%s", why);
	if (access("/bin/sh", X_OK) || mux_family_prepare())
		SKIP(return, "no /bin/sh or /tmp");
	pin_to_cpu(0);
	for (f = 0; f < MUXF_NR_FORK; f++)
		judge_family(_metadata, &mux_fork_families[f], &cov);
	if (coverage_needs_second_pass(_metadata, "forking commands",
				       cov.covered + cov.unknown, cov.judged))
		for (f = 0; f < MUXF_NR_FORK; f++)
			judge_family(_metadata, &mux_fork_families[f], &cov);
	expect_coverage(_metadata, "forking commands", &cov);
}

/*
 * One task whose user loop and system calls alternate in phases of 1 to
 * 20 ms: some of them beat with the rotation (a round of two intervals is
 * 8 ms at HZ 250), which a fixed rotation order cannot sample.  perf's
 * order on the shared backend is such a fixed order: its cycle there (six
 * configurations on three counters, 1 ms) is 6 ms, the 3 ms program's
 * period, whose judged counters read 22 to 70% off with intervals of 6 to
 * 34% (multiplexing.rst, "On perf's events"): 190 to 196 of 200 covered.
 */
TEST(phased_programs_1_to_20_ms_covered)
{
	const char *why;
	struct mux_family f = { MUXF_PHASED, "phased", 0, 0 };
	struct coverage cov = {};

	SELECTED_OR_SKIP();
	if (!exact())
		SKIP(return, "needs the arm64 PMU under -icount on one CPU");
	why = mux_unsupported();
	if (why)
		SKIP(return, "%s", why);
	if (mux_family_prepare())
		SKIP(return, "no /tmp");
	pin_to_cpu(0);
	for (f.a = 1; f.a <= MUXF_MAX_PHASE; f.a++)
		judge_family(_metadata, &f, &cov);
	if (coverage_needs_second_pass(_metadata, "phased programs",
				       cov.covered + cov.unknown, cov.judged))
		for (f.a = 1; f.a <= MUXF_MAX_PHASE; f.a++)
			judge_family(_metadata, &f, &cov);
	expect_coverage(_metadata, "phased programs", &cov);
}

TEST(pinned_group_never_loses_time)
{
	const char *why;
	struct pmuctx_value r[NR_EVENTS], lead, alone;
	int fd[NR_EVENTS], i, leader, member;

	SELECTED_OR_SKIP();
	if (!exact())
		SKIP(return, "needs the arm64 PMU under -icount on one CPU");
	why = mux_unsupported();
	if (why)
		SKIP(return, "%s", why);
	pin_to_cpu(0);
	leader = open_event(&events[0], PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_PINNED, -1);
	ASSERT_LE(0, leader);
	member = open_event(&events[1], 0, leader);
	ASSERT_LE(0, member);
	for (i = 0; i < NR_EVENTS; i++) {
		fd[i] = open_event(&events[i % (NR_EVENTS / 2)],
				   PMUCTX_ATTR_DISABLED, -1);
		ASSERT_LE(0, fd[i]);
	}
	overcommit(_metadata, true);
	enable_all(fd, NR_EVENTS, 1);
	ioctl(leader, PMUCTX_IOC_ENABLE, PMUCTX_IOC_FLAG_GROUP);
	run_loop(30000000);
	ioctl(leader, PMUCTX_IOC_DISABLE, PMUCTX_IOC_FLAG_GROUP);
	enable_all(fd, NR_EVENTS, 0);
	expect_fillers_pinned(_metadata);
	overcommit(_metadata, false);
	ASSERT_EQ(0, read_counter(leader, &lead));
	for (i = 0; i < NR_EVENTS; i++)
		ASSERT_EQ(0, read_counter(fd[i], &r[i]));
	EXPECT_EQ(lead.time_enabled, lead.time_running);
	EXPECT_EQ(1, lead.slices.slices);
	for (i = 0; i < NR_EVENTS; i++)
		EXPECT_LT(r[i].time_running, r[i].time_enabled);

	/* The pinned inst:u saw what it sees alone. */
	close(member);
	for (i = 0; i < NR_EVENTS; i++)
		close(fd[i]);
	ioctl(leader, PMUCTX_IOC_RESET, 0);
	ioctl(leader, PMUCTX_IOC_ENABLE, PMUCTX_IOC_FLAG_GROUP);
	run_loop(30000000);
	ioctl(leader, PMUCTX_IOC_DISABLE, PMUCTX_IOC_FLAG_GROUP);
	ASSERT_EQ(0, read_counter(leader, &alone));
	TH_LOG("pinned inst:u among 15 counters %llu, alone %llu",
	       (unsigned long long)lead.value, (unsigned long long)alone.value);
	/* Exact but for the user code around the two ioctl call sites. */
	EXPECT_GE(20, llabs((long long)(alone.value - lead.value)));
	close(leader);
}

/* The PMU's general counters (arm64: event counters), at most 16. */
static int general_counters(void)
{
	struct pmuctx_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(pmuctx_dev(), PMUCTX_INFO, &info))
		return -1;
	return info.nr_general < 16 ? (int)info.nr_general : 16;
}

TEST(pinned_and_group_limits)
{
	const char *why;
	/*
	 * Event 0: arm64 SW_INCR, always implemented; on x86 an event code
	 * the CPU takes; on both only a general counter counts it, never the
	 * cycle counter.
	 */
	const struct event inst = { 0x00, PMUCTX_ATTR_EXCLUDE_KERNEL, "sw_incr:u" };
	const struct event cyc = { CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, "cycles:u" };
	int fd[40], n = 0, i, leader, ng = general_counters();

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_LT(0, ng);
	/* ng pinned general counters fit (arm64 6, x86 8); one more never could. */
	for (i = 0; i < ng; i++) {
		fd[n] = open_event(&inst, PMUCTX_ATTR_PINNED, -1);
		ASSERT_LE(0, fd[n]);
		n++;
	}
	EXPECT_EQ(-1, open_event(&inst, PMUCTX_ATTR_PINNED, -1));
	EXPECT_EQ(ENOSPC, errno);
	/* The cycle counter still has room for a pinned cycles counter. */
	fd[n] = open_event(&cyc, PMUCTX_ATTR_PINNED, -1);
	ASSERT_LE(0, fd[n]);
	n++;
	/* Flexible ones beyond the PMU multiplex (they get no time here). */
	fd[n] = open_event(&inst, 0, -1);
	ASSERT_LE(0, fd[n]);
	n++;
	/* Only a group's leader says pinned. */
	EXPECT_EQ(-1, open_event(&inst, PMUCTX_ATTR_PINNED, fd[n - 1]));
	EXPECT_EQ(EINVAL, errno);
	while (n)
		close(fd[--n]);

	/* A group of ng + 1 general-counter events can never be on the PMU. */
	leader = open_event(&inst, 0, -1);
	ASSERT_LE(0, leader);
	for (i = 0; i < ng - 1; i++) {
		fd[n] = open_event(&inst, 0, leader);
		ASSERT_LE(0, fd[n]);
		n++;
	}
	EXPECT_EQ(-1, open_event(&inst, 0, leader));
	EXPECT_EQ(ENOSPC, errno);
	while (n)
		close(fd[--n]);
	close(leader);
}

/*
 * Parent and child ping-pong with the same fourteen inherited counters
 * (one of them pinned): the equivalent contexts still swap, rotations
 * carry on across swaps, and when the child is gone the family's counts
 * add up: the tree read's parts equal read(), and the multiplexed inst:u
 * counters scale to the pinned one.
 */
TEST(inherited_multiplexed_ping_pong)
{
	const char *why;
	struct pmuctx_value r[NR_EVENTS], pinned;
	int a[2], b[2], fd[NR_EVENTS], pin, i, status;
	struct pmuctx_tree_entry ents[4];
	struct pmuctx_tree_read tr;
	struct pmuctx_ctx_stats st;
	char c = 'x';
	pid_t pid;

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	instructions_event();
	pin_to_cpu(0);
	ASSERT_EQ(0, pipe(a));
	ASSERT_EQ(0, pipe(b));
	pin = open_event(&events[0], PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_PINNED, -1);
	ASSERT_LE(0, pin);
	for (i = 0; i < NR_EVENTS; i++) {
		fd[i] = open_event(&events[i % (NR_EVENTS / 2)],
				   PMUCTX_ATTR_INHERIT, -1);
		ASSERT_LE(0, fd[i]);
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (i = 0; i < 1000; i++) {
			read_full(a[0], &c, 1);
			run_loop(20000);
			write_full(b[1], &c, 1);
		}
		syscall(SYS_exit_group, 0);
	}
	for (i = 0; i < 1000; i++) {
		write_full(a[1], &c, 1);
		run_loop(20000);
		read_full(b[0], &c, 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Frozen, so that read() and the tree read see the same counts. */
	for (i = 0; i < NR_EVENTS; i++)
		ASSERT_EQ(0, ioctl(fd[i], PMUCTX_IOC_DISABLE, 0));
	ASSERT_EQ(0, ioctl(pin, PMUCTX_IOC_DISABLE, 0));

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	ASSERT_EQ(0, ioctl(fd[0], PMUCTX_IOC_STATS, &st));
	TH_LOG("swaps %llu loads %llu rotations %llu",
	       (unsigned long long)st.tree_swaps,
	       (unsigned long long)st.tree_loads,
	       (unsigned long long)st.tree_rotations);
	EXPECT_LE(1500, st.tree_swaps);
	EXPECT_GT(st.tree_swaps / 10, st.tree_loads);
	EXPECT_LT(0, st.tree_rotations);

	ASSERT_EQ(0, read_counter(pin, &pinned));
	EXPECT_EQ(pinned.time_enabled, pinned.time_running);
	/* Both tasks' loops, at least (instructions only: cycles vary). */
	if (events[0].code == INST_RETIRED)
		EXPECT_LE(2 * 2 * 1000 * 20000, pinned.value);
	for (i = 0; i < NR_EVENTS; i++) {
		ASSERT_EQ(0, read_counter(fd[i], &r[i]));
		EXPECT_LT(r[i].time_running, r[i].time_enabled);
		memset(&tr, 0, sizeof(tr));
		tr.size = sizeof(tr);
		tr.nr_entries = 4;
		tr.entries = (uintptr_t)ents;
		ASSERT_EQ(0, ioctl(fd[i], PMUCTX_IOC_TREE_READ, &tr));
		/* The parent's instance, wherever swaps left it, and the child's. */
		EXPECT_EQ(1, tr.nr_entries);
		EXPECT_EQ(1, tr.exited_tasks);
		EXPECT_EQ(r[i].value, tr.total);
		EXPECT_EQ(tr.total, ents[0].value + tr.exited_value);
	}
	/*
	 * The multiplexed inst:u counters (cycles:u without -icount) against
	 * the pinned one, which counted the same event all along: within
	 * their own error estimate (family slices, both tasks').
	 */
	for (i = 0; i < NR_EVENTS; i += NR_EVENTS / 2)
		EXPECT_TRUE(within_estimate(_metadata, events[0].name, &r[i],
					    pinned.value, st.tree_rotations));
	for (i = 0; i < NR_EVENTS; i++)
		close(fd[i]);
	close(pin);
}

/*
 * The self-read page of a multiplexed counter says when it is off the PMU
 * (index 0: use read()) and, when on, gives values that only grow and
 * agree with read(), across rotations that move it between slots.
 */
TEST(self_read_page_follows_rotation)
{
	const char *why;
	const struct pmuctx_mmap_page *page;
	uint64_t v, last = 0, r, end;
	struct pmuctx_value rd;
	unsigned int on = 0, off = 0;
	int fd[NR_EVENTS], i;

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	instructions_event();
	pin_to_cpu(0);
	for (i = 0; i < NR_EVENTS; i++) {
		/* User mode only: the rest trap or are not ours to read. */
		struct event ev = events[i % (NR_EVENTS / 2)];

		ev.exclude = PMUCTX_ATTR_EXCLUDE_KERNEL;
		fd[i] = open_event(&ev, 0, -1);
		ASSERT_LE(0, fd[i]);
	}
	page = map_counter(fd[NR_EVENTS - 1]);
	ASSERT_NE(NULL, page) TH_LOG("mmap: %s", strerror(errno));
	end = now_ns() + 200000000ULL;
	while (now_ns() < end && (on < 20 || off < 20)) {
		if (self_read(page, &v)) {
			off++;
		} else {
			on++;
			EXPECT_LE(last, v);
			last = v;
		}
		run_loop(50000);
	}
	ASSERT_EQ(0, read_counter(fd[NR_EVENTS - 1], &rd));
	r = rd.value;
	TH_LOG("on the PMU at %u self-reads, off at %u; last self-read %llu, read() %llu",
	       on, off, (unsigned long long)last, (unsigned long long)r);
	EXPECT_LT(0, on);
	EXPECT_LT(0, off);
	EXPECT_LE(last, r);
	for (i = 0; i < NR_EVENTS; i++)
		close(fd[i]);
}

/*
 * A unit whose counters are all disabled takes no turn: cycles and one
 * event-0 counter per general counter (arm64 6 + 1, x86 8 and fixed
 * counter 1) do not rotate beside three disabled ones, and run all their
 * time; enabling one of those starts the rotation and gets it counted.
 */
TEST(disabled_units_take_no_turn)
{
	const char *why;
	const struct event sw_incr = { 0x00, PMUCTX_ATTR_EXCLUDE_KERNEL, "sw_incr:u" };
	const struct event cyc = { CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, "cycles:u" };
	struct pmuctx_ctx_stats st = { .size = sizeof(st) };
	int on[17], off[3], i, ng = general_counters();
	struct pmuctx_value v;

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_LT(0, ng);
	pin_to_cpu(0);
	on[0] = open_event(&cyc, 0, -1);
	ASSERT_LE(0, on[0]);
	for (i = 1; i < 1 + ng; i++) {
		on[i] = open_event(&sw_incr, 0, -1);
		ASSERT_LE(0, on[i]);
	}
	for (i = 0; i < 3; i++) {
		off[i] = open_event(&sw_incr, PMUCTX_ATTR_DISABLED, -1);
		ASSERT_LE(0, off[i]);
	}
	run_loop(20000000);
	ASSERT_EQ(0, ioctl(on[0], PMUCTX_IOC_STATS, &st));
	EXPECT_EQ(0, st.rotations);
	for (i = 0; i < 1 + ng; i++) {
		ASSERT_EQ(0, read_counter(on[i], &v));
		EXPECT_EQ(v.time_enabled, v.time_running);
	}

	ASSERT_EQ(0, ioctl(off[0], PMUCTX_IOC_ENABLE, 0));
	run_loop(20000000);
	ASSERT_EQ(0, ioctl(on[0], PMUCTX_IOC_STATS, &st));
	ASSERT_EQ(0, read_counter(off[0], &v));
	TH_LOG("after the enable: %llu rotations, the enabled one ran %llu of %llu ns",
	       (unsigned long long)st.rotations,
	       (unsigned long long)v.time_running,
	       (unsigned long long)v.time_enabled);
	EXPECT_LT(0, st.rotations);
	EXPECT_LT(0, v.time_running);
	EXPECT_LT(v.time_running, v.time_enabled);
	for (i = 0; i < 1 + ng; i++)
		close(on[i]);
	for (i = 0; i < 3; i++)
		close(off[i]);
}

/*
 * Hostile: while contexts rotate on two CPUs, fork and exit children,
 * open and close pinned, grouped and flexible counters in another thread,
 * and read everything from a third.  Bounded by time: 3 s, but 1 s under
 * -icount (PMUCTX_VM_ICOUNT), where a guest second is 10^9 instructions
 * of the one vCPU, several times what TCG runs in a second without it
 * (which is what the 3 s were chosen for), and the lane's wall-clock
 * budget pays for every one.  Every call that may succeed does, times
 * stay consistent and family values never go down; the debug lanes check
 * the kernel's side (lockdep, KASAN, KCSAN).
 */
struct race {
	int fd[NR_EVENTS];
	volatile int stop;
	int errors;
	unsigned long forks, opens, reads;
};

static void *race_forker(void *arg)
{
	struct race *rc = arg;
	int status;
	pid_t pid;

	while (!rc->stop) {
		pid = fork();
		if (pid < 0) {
			rc->errors++;
			break;
		}
		if (!pid) {
			if (getpid() & 1 && fork() == 0)
				run_loop(50000);
			run_loop(200000);
			syscall(SYS_exit_group, 0);
		}
		waitpid(pid, &status, 0);
		rc->forks++;
	}
	return NULL;
}

static void *race_opener(void *arg)
{
	const struct event inst = { instructions_event(), PMUCTX_ATTR_EXCLUDE_KERNEL, "inst:u" };
	const struct event cyc = { CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, "cycles:u" };
	struct race *rc = arg;
	struct pmuctx_value v;
	int pin, lead, mem, flex;

	while (!rc->stop) {
		pin = open_event(&inst, PMUCTX_ATTR_PINNED | PMUCTX_ATTR_INHERIT, -1);
		lead = open_event(&cyc, PMUCTX_ATTR_INHERIT, -1);
		mem = lead >= 0 ? open_event(&inst, PMUCTX_ATTR_INHERIT, lead) : -1;
		flex = open_event(&inst, 0, -1);
		if (pin < 0 || lead < 0 || mem < 0 || flex < 0)
			rc->errors++;
		run_loop(100000);
		if (flex >= 0 && read_counter(flex, &v))
			rc->errors++;
		if (pin >= 0 && (read_counter(pin, &v) ||
				 v.time_running != v.time_enabled))
			rc->errors++;
		close(flex);
		close(mem);
		close(lead);
		close(pin);
		rc->opens++;
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	uint64_t last[NR_EVENTS] = { 0 };
	struct race *rc = arg;
	struct pmuctx_value v;
	int i;

	while (!rc->stop) {
		for (i = 0; i < NR_EVENTS; i++) {
			if (read_counter(rc->fd[i], &v) ||
			    v.time_running > v.time_enabled || v.value < last[i])
				rc->errors++;
			last[i] = v.value;
		}
		rc->reads++;
	}
	return NULL;
}

TEST(rotation_races)
{
	const char *why;
	pthread_t forker, opener, reader;
	struct race rc = { .stop = 0 };
	uint64_t end;
	int i;

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	instructions_event();
	for (i = 0; i < NR_EVENTS; i++) {
		rc.fd[i] = open_event(&events[i % (NR_EVENTS / 2)],
				      PMUCTX_ATTR_INHERIT, -1);
		ASSERT_LE(0, rc.fd[i]);
	}
	ASSERT_EQ(0, pthread_create(&forker, NULL, race_forker, &rc));
	ASSERT_EQ(0, pthread_create(&opener, NULL, race_opener, &rc));
	ASSERT_EQ(0, pthread_create(&reader, NULL, race_reader, &rc));
	end = now_ns() + (getenv("PMUCTX_VM_ICOUNT") ? 1 : 3) * 1000000000ULL;
	while (now_ns() < end)
		run_loop(100000);
	rc.stop = 1;
	pthread_join(forker, NULL);
	pthread_join(opener, NULL);
	pthread_join(reader, NULL);
	TH_LOG("%lu forks, %lu open/close rounds, %lu read rounds",
	       rc.forks, rc.opens, rc.reads);
	EXPECT_EQ(0, rc.errors);
	EXPECT_LT(0, rc.forks);
	EXPECT_LT(0, rc.opens);
	for (i = 0; i < NR_EVENTS; i++)
		close(rc.fd[i]);
}

/*
 * CPU hotplug: the rotation timer of a CPU that goes offline migrates to
 * a live CPU and ends there; a context that rotates on the CPU once it is
 * back must rotate again.  A task spins on CPU 1 with 14 counters (opened
 * by us on it), CPU 1 goes down right after a rotation (interval 1 s, the
 * longest allowed) and comes back at once, the task returns to CPU 1 and
 * must see rotations there.  Few other tasks run on CPU 1 (the VM's vmstat work is made
 * rare), so no reload re-arms a lost timer.  Under TCG the CPU comes back
 * too late to catch the migrated timer still queued (the landed module
 * passed too, 2 and 3 rotations): this guards rotation across hotplug,
 * and the cancel at online (design.rst) closes the window by reasoning.
 */
static int move_to_cpu(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

TEST(rotation_resumes_on_a_cpu_back_online)
{
	const char *why;
	const char *online = "/sys/devices/system/cpu/cpu1/online";
	const char *interval = "/sys/module/pmuctx/parameters/mux_interval_ms";
	const char *stat_interval = "/proc/sys/vm/stat_interval";
	long old_interval, old_stat;
	struct pmuctx_ctx_stats st;
	uint64_t before, after;
	int fd[NR_EVENTS], i;
	char buf[32];
	pid_t kid;

	SELECTED_OR_SKIP();
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	why = own_rotation_unsupported();
	if (why)
		SKIP(return, "%s", why);
	if (nr_cpus() < 2 || geteuid() || access(online, W_OK))
		SKIP(return, "needs root and a CPU 1 that can go offline");
	instructions_event();
	old_interval = read_long(interval);
	old_stat = read_long(stat_interval);
	ASSERT_EQ(0, write_file(interval, "1000"));
	write_file(stat_interval, "100");
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		move_to_cpu(0, 1);
		for (;;)
			run_loop(1000000);
	}
	ASSERT_EQ(0, move_to_cpu(kid, 1));
	for (i = 0; i < NR_EVENTS; i++) {
		fd[i] = open_event_on(&events[i % (NR_EVENTS / 2)], 0, -1, kid);
		ASSERT_LE(0, fd[i]) TH_LOG("%s", strerror(errno));
	}
	/* Rotating on CPU 1: its timer is armed there. */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, ctx_stats(fd[0], &st));
		if (st.rotations)
			break;
		sleep_ms(100);
	}
	ASSERT_LT(0, st.rotations);
	/* Just after a rotation: the timer is due in a second. */
	before = st.rotations;
	for (i = 0; i < 150 && st.rotations == before; i++) {
		sleep_ms(10);
		ASSERT_EQ(0, ctx_stats(fd[0], &st));
	}
	ASSERT_EQ(0, write_file(online, "0"));
	sleep_ms(50);
	ASSERT_EQ(0, write_file(online, "1"));
	ASSERT_EQ(0, move_to_cpu(kid, 1));
	ASSERT_EQ(0, ctx_stats(fd[0], &st));
	before = st.rotations;
	/* Four intervals: three rotations at least, once the timer is armed. */
	sleep_ms(4000);
	ASSERT_EQ(0, ctx_stats(fd[0], &st));
	after = st.rotations;
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	for (i = 0; i < NR_EVENTS; i++)
		close(fd[i]);
	snprintf(buf, sizeof(buf), "%ld", old_interval);
	write_file(interval, buf);
	snprintf(buf, sizeof(buf), "%ld", old_stat);
	write_file(stat_interval, buf);
	TH_LOG("rotations on CPU 1 back online: %llu in 4 s (interval 1 s)",
	       (unsigned long long)(after - before));
	EXPECT_LE(2, after - before);
}

TEST_HARNESS_MAIN
