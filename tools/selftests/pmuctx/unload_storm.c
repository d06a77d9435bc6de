// SPDX-License-Identifier: GPL-2.0
/*
 * Helper for module_test.sh: "unload_storm SECONDS [ROUNDS]" tries to
 * unload pmuctx without pause while a tree of tasks forks, counts
 * (inherited counters, attaches by pid, opens and closes) and exits, then
 * while the last users let go.  The module must refuse every unload while anything of it is in
 * use, and go exactly once nothing is: after the counter fds are closed,
 * with idle tasks that once counted still alive, which then exit with the
 * module gone.  Whatever the module leaves running (a work item, an RCU
 * callback, a hook) would then run in freed code, which the VM's splat
 * judge sees.  The storm lasts SECONDS, or ROUNDS rounds of STORM_KIDS
 * forks if that comes first (under -icount a guest second is 10^9
 * instructions, so there the work is bounded by rounds, not time).
 * Prints a summary; exit 0 when every rule held.
 */
#include <signal.h>
#include <sys/wait.h>
#include "pmuctx_test.h"
#include "hostile.h"

#define STORM_KIDS	6
#define IDLE_KIDS	3

struct storm {
	int phase;		/* 1: load, 2: letting go, 3: unloaded */
	int idle_ready;		/* idle tasks that counted and closed everything */
	long refused, other_errno, last_errno;
	long early_unloads;	/* unloads that succeeded in phase 1 */
	long forks, attaches;
};

/* Forked helpers must not keep the counters or the device open. */
static void close_inherited_fds(void)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		close(fd);
}

static int delete_pmuctx(void)
{
	return syscall(SYS_delete_module, "pmuctx", O_NONBLOCK);
}

/* Retries the unload as fast as it can until it succeeds or phase 3. */
static void unloader(struct storm *st)
{
	close_inherited_fds();
	for (;;) {
		int phase = __atomic_load_n(&st->phase, __ATOMIC_SEQ_CST);

		if (!delete_pmuctx()) {
			/* The load closes its fds only after it left phase 1. */
			if (__atomic_load_n(&st->phase, __ATOMIC_SEQ_CST) == 1)
				st->early_unloads++;
			__atomic_store_n(&st->phase, 3, __ATOMIC_SEQ_CST);
			_exit(0);
		}
		if (errno == EAGAIN || errno == EBUSY) {
			st->refused++;
		} else {
			st->other_errno++;
			st->last_errno = errno;
		}
		if (phase == 3)
			_exit(0);
	}
}

/* A leaf of the tree: counts its own faults for a moment, then exits. */
static void __attribute__((noreturn)) storm_leaf(int depth)
{
	int fd;

	if (depth && fork() == 0)
		storm_leaf(depth - 1);
	fd = pmuctx_open_sw(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0, -1);
	touch_small_pages(2);
	if (fd >= 0)
		close(fd);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/*
 * A task that counted (inherited counters and one of its own) and closed
 * everything of pmuctx, so only its exit is left: it waits for the
 * unload and exits after it.
 */
static void __attribute__((noreturn)) idle_after_counting(struct storm *st)
{
	int fd = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, 0, 0, -1);

	touch_small_pages(1);
	if (fd >= 0)
		close(fd);
	close_inherited_fds();
	__atomic_fetch_add(&st->idle_ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&st->phase, __ATOMIC_SEQ_CST) != 3)
		usleep(1000);
	touch_small_pages(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	struct storm *st = shared_area(sizeof(*st));
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	long max_rounds = argc > 2 ? atol(argv[2]) : 0, rounds = 0;
	pid_t unload_pid, kids[STORM_KIDS], idle[IDLE_KIDS];
	uint64_t start, end, storm_ns;
	int fds[4], i, fd, status, waited;

	if (!st || pmuctx_dev() < 0) {
		perror("unload_storm: setup");
		return 2;
	}
	for (i = 0; i < 4; i++) {
		fds[i] = pmuctx_open_sw(i & 1 ? PMUCTX_SW_PAGE_FAULTS :
					PMUCTX_SW_TASK_CLOCK,
					PMUCTX_ATTR_INHERIT, 0, 0, -1);
		if (fds[i] < 0) {
			perror("unload_storm: open");
			return 2;
		}
	}
	st->phase = 1;
	unload_pid = fork();
	if (!unload_pid)
		unloader(st);
	for (i = 0; i < IDLE_KIDS; i++) {
		idle[i] = fork();
		if (!idle[i])
			idle_after_counting(st);
	}

	/* Phase 1: fork, count, attach by pid, exit, all while unloads are tried. */
	start = now_ns();
	end = start + seconds * 1000000000ull;
	while (now_ns() < end && (!max_rounds || rounds < max_rounds)) {
		rounds++;
		for (i = 0; i < STORM_KIDS; i++) {
			kids[i] = fork();
			if (!kids[i])
				storm_leaf(i % 3);
			st->forks++;
			fd = open_sw_on(PMUCTX_SW_CONTEXT_SWITCHES, 0, kids[i], 0);
			if (fd >= 0) {
				st->attaches++;
				close(fd);
			}
		}
		for (i = 0; i < STORM_KIDS; i++)
			waitpid(kids[i], &status, 0);
	}
	storm_ns = now_ns() - start;

	/* Phase 2: let go while children still hold inherited clones. */
	for (i = 0; i < STORM_KIDS; i++) {
		kids[i] = fork();
		if (!kids[i])
			storm_leaf(2);
	}
	while (__atomic_load_n(&st->idle_ready, __ATOMIC_SEQ_CST) < IDLE_KIDS)
		usleep(1000);
	__atomic_store_n(&st->phase, 2, __ATOMIC_SEQ_CST);
	for (i = 0; i < 4; i++)
		close(fds[i]);
	close(pmuctx_dev());
	for (i = 0; i < STORM_KIDS; i++)
		waitpid(kids[i], &status, 0);

	/* Nothing of pmuctx is in use now: the unload must come, soon. */
	for (waited = 0; waited < 10000 &&
	     __atomic_load_n(&st->phase, __ATOMIC_SEQ_CST) != 3; waited++)
		usleep(1000);
	if (__atomic_load_n(&st->phase, __ATOMIC_SEQ_CST) != 3)
		kill(unload_pid, SIGKILL);
	__atomic_store_n(&st->phase, 3, __ATOMIC_SEQ_CST);
	waitpid(unload_pid, &status, 0);
	for (i = 0; i < IDLE_KIDS; i++)
		waitpid(idle[i], &status, 0);

	printf("# unload storm: %ld rounds in %llu ms (at most %ds, %ld rounds), %ld forks, %ld attaches, %ld unloads refused, %ld early, %ld other errnos (last %s), unloaded %d ms after the last user\n",
	       rounds, (unsigned long long)(storm_ns / 1000000), seconds,
	       max_rounds, st->forks, st->attaches, st->refused,
	       st->early_unloads, st->other_errno,
	       st->other_errno ? strerror(st->last_errno) : "none", waited);
	if (access("/dev/pmuctx", F_OK) == 0)
		printf("# /dev/pmuctx still exists\n");
	return st->early_unloads || st->other_errno || waited >= 10000 ||
	       !st->refused || access("/dev/pmuctx", F_OK) == 0;
}
