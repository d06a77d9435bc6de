// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile race tests (Documentation/security.rst): attach in the window
 * between fork and the child's first run, family reads and resets racing
 * equivalent swaps, fork racing enable, fork churn racing structural
 * changes.  Each is bounded in time and meant for -smp 2, where the two
 * sides really run at once; all run as uid/gid 65534.
 */
#include <pthread.h>
#include "hostile.h"
#include "kselftest_harness.h"

static void pin_thread(pthread_t t, int cpu)
{
	cpu_set_t set;

	if (cpu >= nr_cpus())
		cpu = nr_cpus() - 1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

/* ---- attach between fork and first run --------------------------------- */

struct attacher {
	volatile pid_t last;	/* newest child of the forker */
	volatile int stop;
	long ok, eagain, esrch, other, other_errno;
};

/* Attach by pid to the child the forker has not returned yet, again and again. */
static void *attach_next_child(void *arg)
{
	struct attacher *at = arg;
	int fd;

	while (!at->stop) {
		pid_t next = __atomic_load_n(&at->last, __ATOMIC_ACQUIRE) + 1;

		fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, next, 0);
		if (fd >= 0) {
			at->ok++;
			close(fd);
		} else if (errno == EAGAIN) {
			at->eagain++;
		} else if (errno == ESRCH) {
			at->esrch++;
		} else {
			at->other++;
			at->other_errno = errno;
		}
	}
	return NULL;
}

/*
 * A child is findable by pid before the fork hook gave it its clones; an
 * attach then must not give it a second link (at exit only one would be
 * retired: the other keeps the freed task, its clone is never folded and
 * the module reference leaks).  Afterwards every child must have exited
 * from the counter's point of view.
 */
TEST(attach_between_fork_and_first_run)
{
	struct pmuctx_tree_entry ents[8];
	struct pmuctx_tree_read tr;
	struct pmuctx_ctx_stats st;
	struct attacher at = { 0 };
	uint64_t end;
	long forks = 0;
	int fd, status;
	pthread_t th;
	pid_t pid;

	ASSERT_EQ(0, become_nobody());
	at.last = getpid();
	ASSERT_EQ(0, pthread_create(&th, NULL, attach_next_child, &at));
	pin_thread(th, 1);
	pin_to_cpu(0);
	fd = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
	ASSERT_LE(0, fd);
	end = now_ns() + 3000000000ULL;
	while (now_ns() < end && forks < 4000) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			if (getpid() & 1)
				spin_loop(20000);
			syscall(SYS_exit_group, 0);
		}
		__atomic_store_n(&at.last, pid, __ATOMIC_RELEASE);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		forks++;
	}
	at.stop = 1;
	pthread_join(th, NULL);
	TH_LOG("%ld forks; attaches: %ld ok, %ld EAGAIN, %ld ESRCH, %ld other (%s)",
	       forks, at.ok, at.eagain, at.esrch, at.other,
	       at.other ? strerror(at.other_errno) : "-");
	EXPECT_EQ(0, at.other);
	EXPECT_LT(0, at.ok + at.eagain) TH_LOG("the attacker never found a child");

	ASSERT_EQ(0, ctx_stats(fd, &st));
	TH_LOG("live %llu exited %llu inherit_failed %llu",
	       (unsigned long long)st.live_tasks, (unsigned long long)st.exited_tasks,
	       (unsigned long long)st.inherit_failed);
	EXPECT_EQ(1, st.live_tasks) TH_LOG("clones of exited children were never folded");
	EXPECT_EQ(forks, st.exited_tasks);
	EXPECT_EQ(0, st.inherit_failed);
	memset(&tr, 0, sizeof(tr));
	tr.size = sizeof(tr);
	tr.nr_entries = 8;
	tr.entries = (uintptr_t)ents;
	EXPECT_EQ(0, ioctl(fd, PMUCTX_IOC_TREE_READ, &tr));
	EXPECT_EQ(1, tr.nr_entries);
	EXPECT_EQ(forks, tr.exited_tasks);
	close(fd);
}

/* ---- INHERIT_STAT family reads and resets racing swaps ------------------ */

#define IDLE_CLONES	40	/* make the family walk long */
#define BIG_FAULTS	3000	/* the parent's count, the child's is small */

struct stat_race {
	int fd;
	volatile int phase;	/* 1: run, 2: stop */
	volatile int want_faults, faults_done;
	long reads, drops, resets, bad_resets;
	uint64_t first, max, final, worst_reset, drop_from, drop_to;
	bool reset_mode;
};

/* The reader: a thread without a clone of the counter, on the other CPU. */
static void *stat_reader(void *arg)
{
	struct stat_race *sr = arg;
	uint64_t v, prev = 0;

	while (sr->phase < 1)
		;
	while (sr->phase == 1) {
		if (sr->reset_mode) {
			/* Let the parent fault in BIG_FAULTS pages, then reset. */
			int want = sr->want_faults + 1;

			sr->want_faults = want;
			while (sr->faults_done != want && sr->phase == 1)
				;
			if (sr->phase != 1)
				break;
			if (ioctl(sr->fd, PMUCTX_IOC_RESET, 0))
				break;
			v = pmuctx_read1(sr->fd);
			sr->resets++;
			if (v > sr->worst_reset)
				sr->worst_reset = v;
			if (v >= BIG_FAULTS / 2)
				sr->bad_resets++;
			continue;
		}
		v = pmuctx_read1(sr->fd);
		if (!sr->reads++)
			sr->first = v;
		if (v < prev) {
			if (!sr->drops++) {
				sr->drop_from = prev;
				sr->drop_to = v;
			}
		}
		if (v > sr->max)
			sr->max = v;
		prev = v;
	}
	return NULL;
}

/*
 * Parent (BIG_FAULTS page faults) and child (a few) ping-pong on CPU 0 with
 * an INHERIT_STAT counter, so each switch is a swap that exchanges their
 * values; IDLE_CLONES blocked children lengthen the family walk.  A thread
 * on CPU 1 reads the family (or resets it) meanwhile.
 */
static void stat_race_run(struct __test_metadata *_metadata, struct stat_race *sr)
{
	int a[2], b[2], idle[2], i, status;
	pid_t idle_pids[IDLE_CLONES], kid;
	pthread_t th;
	uint64_t end;
	char c = 'x';

	ASSERT_EQ(0, become_nobody());
	ASSERT_EQ(0, pipe(a));
	ASSERT_EQ(0, pipe(b));
	ASSERT_EQ(0, pipe(idle));
	ASSERT_EQ(0, pthread_create(&th, NULL, stat_reader, sr));
	pin_thread(th, 1);
	pin_to_cpu(0);
	sr->fd = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT |
			    PMUCTX_ATTR_INHERIT_STAT, 0, 0);
	ASSERT_LE(0, sr->fd);
	touch_pages(BIG_FAULTS);
	for (i = 0; i < IDLE_CLONES; i++) {
		idle_pids[i] = fork();
		ASSERT_LE(0, idle_pids[i]);
		if (!idle_pids[i]) {
			close(idle[1]);
			if (read(idle[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	close(idle[0]);
	kid = fork();	/* its clone comes last in the family walk */
	ASSERT_LE(0, kid);
	if (!kid) {
		for (;;) {
			read_full(a[0], &c, 1);
			if (c == 'q')
				_exit(0);
			write_full(b[1], &c, 1);
		}
	}
	/* Warm the ping-pong path before anyone reads. */
	for (i = 0; i < 20; i++) {
		write_full(a[1], &c, 1);
		read_full(b[0], &c, 1);
	}
	sr->phase = 1;
	end = now_ns() + 2000000000ULL;
	for (i = 0; now_ns() < end; i++) {
		write_full(a[1], "p", 1);
		read_full(b[0], &c, 1);
		if (sr->reset_mode && sr->want_faults != sr->faults_done) {
			touch_pages(BIG_FAULTS);
			sr->faults_done = sr->want_faults;
		}
	}
	sr->phase = 2;
	pthread_join(th, NULL);
	/* The child is blocked, we are not switching: no swap under this read. */
	sr->final = pmuctx_read1(sr->fd);
	write_full(a[1], "q", 1);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	close(idle[1]);
	for (i = 0; i < IDLE_CLONES; i++)
		waitpid(idle_pids[i], &status, 0);
	TH_LOG("%d round trips", i);
}

TEST(inherit_stat_family_reads_are_monotonic)
{
	struct stat_race sr = { .reset_mode = false };

	stat_race_run(_metadata, &sr);
	TH_LOG("%ld reads from %llu, max %llu, final %llu; %ld drops (first %llu -> %llu)",
	       sr.reads, (unsigned long long)sr.first, (unsigned long long)sr.max,
	       (unsigned long long)sr.final, sr.drops,
	       (unsigned long long)sr.drop_from, (unsigned long long)sr.drop_to);
	EXPECT_LT(100, sr.reads);
	EXPECT_EQ(0, sr.drops);
	EXPECT_GE(sr.final, sr.max) TH_LOG("a read exceeded the final total");
	EXPECT_LE(BIG_FAULTS, sr.first);
}

TEST(inherit_stat_family_reset_is_whole)
{
	struct stat_race sr = { .reset_mode = true };

	stat_race_run(_metadata, &sr);
	TH_LOG("%ld resets, %ld left a task's count (worst read after reset %llu of %d)",
	       sr.resets, sr.bad_resets, (unsigned long long)sr.worst_reset, BIG_FAULTS);
	EXPECT_LT(10, sr.resets);
	EXPECT_EQ(0, sr.bad_resets);
}

/* ---- fork racing enable ------------------------------------------------- */

#define FILLERS		96	/* inherited counters after the toggled one */
#define ROUND_KIDS	12
#define MAX_ROUNDS	80

struct toggler {
	int fd;
	volatile int round, forks, stop_at, done, quit;
	long toggles;
};

/* DISABLE/ENABLE as fast as possible while the forker forks; end enabled. */
static void *toggle_enable(void *arg)
{
	struct toggler *t = arg;
	int seen = 0;

	for (;;) {
		while (t->round == seen && !t->quit)
			;
		if (t->quit)
			return NULL;
		seen = t->round;
		do {
			ioctl(t->fd, PMUCTX_IOC_DISABLE, 0);
			ioctl(t->fd, PMUCTX_IOC_ENABLE, 0);
			t->toggles++;
		} while (t->forks < t->stop_at);
		t->done = seen;
	}
}

static int find_entry(const struct pmuctx_tree_entry *e, int n, uint32_t tid)
{
	int i;

	for (i = 0; i < n; i++)
		if (e[i].tid == tid)
			return i;
	return -1;
}

/*
 * The original is DISABLED, then toggled by a thread while its holder
 * forks; the toggler ends with ENABLE.  Every child's clone must then count:
 * each child (which left the family by opening a counter of its own, so no
 * swap moves contexts between tasks) runs a little, and its entry in the
 * process-tree read must have gained time enabled.
 */
TEST(fork_racing_enable_leaves_no_clone_disabled)
{
	static struct pmuctx_tree_entry t1[256], t2[256];
	int fillers[FILLERS], ack[2], go[2], quit[2], i, j, k, status;
	struct toggler tg = { 0 };
	struct pmuctx_tree_read tr1, tr2;
	pid_t kids[ROUND_KIDS];
	long frozen = 0, checked = 0;
	int rounds = 0, first_bad = -1;
	uint64_t end;
	pthread_t th;
	char c;

	ASSERT_EQ(0, become_nobody());
	ASSERT_EQ(0, pipe(ack));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(quit));
	ASSERT_EQ(0, pthread_create(&th, NULL, toggle_enable, &tg));
	pin_thread(th, 1);
	pin_to_cpu(0);
	/* The toggled counter first: its clone is filled first, published last... */
	tg.fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, PMUCTX_ATTR_INHERIT |
			   PMUCTX_ATTR_DISABLED, 0, 0);
	ASSERT_LE(0, tg.fd);
	/* ...after all these. */
	for (i = 0; i < FILLERS; i++) {
		fillers[i] = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
		ASSERT_LE(0, fillers[i]);
	}
	srandom(getpid());
	end = now_ns() + 6000000000ULL;
	while (rounds < MAX_ROUNDS && now_ns() < end && first_bad < 0) {
		tg.forks = 0;
		tg.stop_at = 2 + random() % (ROUND_KIDS - 4);
		tg.round = ++rounds;
		for (k = 0; k < ROUND_KIDS; k++) {
			kids[k] = fork();
			ASSERT_LE(0, kids[k]);
			if (!kids[k]) {
				int own = open_sw_on(PMUCTX_SW_CONTEXT_SWITCHES, 0, 0, 0);

				write_full(ack[1], own >= 0 ? "r" : "e", 1);
				read_full(go[0], &c, 1);
				spin_loop(200000);
				write_full(ack[1], "a", 1);
				read_full(quit[0], &c, 1);
				_exit(0);
			}
			tg.forks = k + 1;
		}
		while (tg.done != rounds)
			;
		for (k = 0; k < ROUND_KIDS; k++) {
			read_full(ack[0], &c, 1);
			ASSERT_EQ('r', c) TH_LOG("a child could not open its own counter");
		}
		memset(&tr1, 0, sizeof(tr1));
		tr1.size = sizeof(tr1);
		tr1.nr_entries = 256;
		tr1.entries = (uintptr_t)t1;
		tr2 = tr1;
		tr2.entries = (uintptr_t)t2;
		ASSERT_EQ(0, ioctl(tg.fd, PMUCTX_IOC_TREE_READ, &tr1));
		for (k = 0; k < ROUND_KIDS; k++)
			write_full(go[1], "g", 1);
		for (k = 0; k < ROUND_KIDS; k++)
			read_full(ack[0], &c, 1);
		ASSERT_EQ(0, ioctl(tg.fd, PMUCTX_IOC_TREE_READ, &tr2));
		for (k = 0; k < ROUND_KIDS; k++) {
			i = find_entry(t1, tr1.nr_entries, kids[k]);
			j = find_entry(t2, tr2.nr_entries, kids[k]);
			EXPECT_LE(0, i);
			EXPECT_LE(0, j);
			if (i < 0 || j < 0)
				continue;
			checked++;
			if (t2[j].time_enabled == t1[i].time_enabled) {
				if (!frozen++)
					first_bad = rounds;
				TH_LOG("round %d: child %d (fork %d, toggler stopped at %d) counts nothing",
				       rounds, kids[k], k + 1, tg.stop_at);
			}
		}
		for (k = 0; k < ROUND_KIDS; k++)
			write_full(quit[1], "q", 1);
		for (k = 0; k < ROUND_KIDS; k++)
			waitpid(kids[k], &status, 0);
	}
	tg.quit = 1;
	pthread_join(th, NULL);
	TH_LOG("%d rounds, %ld toggles, %ld children checked, %ld left disabled",
	       rounds, tg.toggles, checked, frozen);
	EXPECT_EQ(0, frozen);
	EXPECT_LT(0, checked);
	for (i = 0; i < FILLERS; i++)
		close(fillers[i]);
	close(tg.fd);
}

/* ---- fork churn --------------------------------------------------------- */

#define CHURN_TOP	100
#define CHURN_LEAVES	19	/* 100 + 100 * 19 = 2000 forks */
#define CHURN_COUNTERS	24	/* inherited counters: a long clone allocation */

struct churn {
	uint64_t reported;	/* sum of every descendant's own faults */
	uint64_t reports;
	uint64_t value, inherit_failed, f_lo, f_hi, modifications;
	int status;
};

struct modifier {
	pid_t target;
	volatile int start, stop;
	long n;
};

/* Structural changes of the forker's context while it forks. */
static void *modify_forker(void *arg)
{
	struct modifier *m = arg;

	while (!m->start)
		;
	while (!m->stop) {
		int fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, m->target, 0);

		if (fd >= 0) {
			close(fd);
			m->n++;
		}
	}
	return NULL;
}

static void report_faults(struct churn *ch)
{
	uint64_t mine = minflt_thread();

	__atomic_fetch_add(&ch->reported, mine, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&ch->reports, 1, __ATOMIC_SEQ_CST);
}

/* A new task: warm the shared page (that write faults), then work. */
static void __attribute__((noreturn)) churn_leaf(struct churn *ch, int pages)
{
	__atomic_fetch_add(&ch->reports, 0, __ATOMIC_SEQ_CST);
	touch_pages(pages);
	report_faults(ch);
	syscall(SYS_exit_group, 0);
	_exit(0);
}

static void __attribute__((noreturn)) churn_middle(struct churn *ch, int index)
{
	pid_t leaves[CHURN_LEAVES];
	int i, status;

	__atomic_fetch_add(&ch->reports, 0, __ATOMIC_SEQ_CST);
	for (i = 0; i < CHURN_LEAVES; i++) {
		leaves[i] = fork();
		if (leaves[i] < 0)
			_exit(1);
		if (!leaves[i])
			churn_leaf(ch, 1 + (index + i) % 3);
	}
	touch_pages(2);
	for (i = 0; i < CHURN_LEAVES; i++)
		if (waitpid(leaves[i], &status, 0) != leaves[i])
			_exit(1);
	report_faults(ch);
	syscall(SYS_exit_group, 0);
	_exit(0);
}

/* The forker F: its own counters, a modifier thread, 2000 forks. */
static int churn_forker(struct churn *ch)
{
	struct modifier m = { .target = gettid() };
	struct pmuctx_ctx_stats st;
	int fds[CHURN_COUNTERS], i, status, bad = 0;
	uint64_t fa, fb, fc;
	pthread_t th;
	pid_t kid;

	/* Created before the open: with no clone, its faults are not counted. */
	if (pthread_create(&th, NULL, modify_forker, &m))
		return 3;
	for (i = 0; i < CHURN_COUNTERS; i++) {
		fds[i] = open_sw_on(PMUCTX_SW_PAGE_FAULTS_MIN, PMUCTX_ATTR_INHERIT |
				    PMUCTX_ATTR_DISABLED, 0, 0);
		if (fds[i] < 0)
			return 2;
	}
	m.start = 1;
	__atomic_fetch_add(&ch->reports, 0, __ATOMIC_SEQ_CST);
	minflt_thread();
	fa = minflt_thread();
	ioctl(fds[0], PMUCTX_IOC_ENABLE, 0);
	fb = minflt_thread();
	for (i = 0; i < CHURN_TOP; i++) {
		kid = fork();
		if (kid < 0)
			return 4;
		if (!kid)
			churn_middle(ch, i);
	}
	for (i = 0; i < CHURN_TOP; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	fc = minflt_thread();
	ch->value = pmuctx_read1(fds[0]);
	m.stop = 1;
	pthread_join(th, NULL);
	if (ctx_stats(fds[0], &st))
		return 5;
	ch->inherit_failed = st.inherit_failed;
	ch->f_lo = fc - fb;
	ch->f_hi = fc - fa;
	ch->modifications = m.n;
	return bad ? 6 : 0;
}

/*
 * 2000 forks in a two-level tree whose exits race the forks, while another
 * thread keeps changing the forker's context: every child inherits
 * (inherit_failed 0) and the folded total is exact.
 */
TEST(fork_churn_inherits_exactly)
{
	struct churn *ch = shared_area(sizeof(*ch));
	uint64_t expect_lo, expect_hi;
	int status;
	pid_t f;

	ASSERT_NE(NULL, ch);
	ASSERT_EQ(0, become_nobody());
	f = fork();
	ASSERT_LE(0, f);
	if (!f)
		_exit(churn_forker(ch));
	ASSERT_EQ(f, waitpid(f, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	expect_lo = ch->reported + ch->f_lo;
	expect_hi = ch->reported + ch->f_hi;
	TH_LOG("%llu reports, counted %llu, expected %llu..%llu, inherit_failed %llu, %llu context changes",
	       (unsigned long long)ch->reports, (unsigned long long)ch->value,
	       (unsigned long long)expect_lo, (unsigned long long)expect_hi,
	       (unsigned long long)ch->inherit_failed,
	       (unsigned long long)ch->modifications);
	EXPECT_EQ(CHURN_TOP * (CHURN_LEAVES + 1), ch->reports);
	EXPECT_EQ(0, ch->inherit_failed);
	EXPECT_LE(expect_lo, ch->value);
	EXPECT_GE(expect_hi, ch->value);
}

TEST_HARNESS_MAIN
