// SPDX-License-Identifier: GPL-2.0
/*
 * bp_storm: pmuctx_fuzz's range storm without pmuctx.  Plain
 * perf_event_open() breakpoints (PERF_TYPE_BREAKPOINT, user only) on
 * threads that store, load and execute in the very bytes they watch, and
 * on a child that forks and may exec itself: the registers filled until
 * the kernel refuses, then opens and closes while the hits land, then
 * exit under the events or close first.  Counting events and sampling
 * ones with perf's own handler (period 1, the one arm64 steps over the
 * hit for), as pmuctx's range counters program them
 * (Documentation/ranges.rst, "A kernel breakpoint hang").
 *
 *   bp_storm [--seconds S] [--workers N] [--seed N] [--gap-ms N]
 *            [--cold-ms N]
 *
 * --cold-ms N: one worker, which waits N ms with no event open after
 * each storm, while four threads of its own keep both CPUs switching
 * (sched_yield()).  perf turns its context-switch hooks off (a static
 * key, perf_sched_events) a second after the last task event of the
 * system is freed, and the next task event turns them on again: past
 * 1000 ms every storm's first open rewrites the hooks' jump sites while
 * the other CPU runs the scheduler.  Under QEMU's multi-threaded TCG that
 * can leave a stale translation of a site (Documentation/testing.rst, "A
 * breakpoint that never armed"): perf's sched-out hook then never runs,
 * and its core warns.  Nothing else in the VM may hold a task event
 * meanwhile (boot it with scripts/vm-run --no-load).
 *
 * Exits 0 when the time is up; kernel splats are vm-run's to judge.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAXFD	16

static volatile uint64_t buf[8] __attribute__((aligned(64)));
static unsigned int opt_seconds = 30, opt_workers = 4, opt_gap_ms, opt_cold_ms;
static uint64_t opt_seed = 1;
static const char *self;
static unsigned long opens, refused;	/* this storm process's */

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The watched instruction: one A64 (or x86) instruction of its own. */
__attribute__((noinline, aligned(16))) static void touch_insn(void)
{
	__asm__ volatile("" ::: "memory");
}

static void touch(void)
{
	int i;

	for (i = 0; i < 8; i++) {
		buf[i]++;
		(void)buf[(i + 3) & 7];
	}
	touch_insn();
}

struct spinner {
	pthread_t th;
	volatile pid_t tid;
	volatile int stop;
};

static void *spin_main(void *arg)
{
	struct spinner *sp = arg;
	unsigned long n = 0;

	sp->tid = syscall(SYS_gettid);
	while (!sp->stop) {
		touch();
		if (++n % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void child_spin(bool forks, bool exec)
{
	unsigned long n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(opt_seconds + 30);
	for (n = 1;; n++) {
		touch();
		if (n % 64)
			continue;
		sched_yield();
		if (forks && n % 1024 == 0 && fork() == 0) {
			int i;

			for (i = 0; i < 512; i++)
				touch();
			_exit(0);
		}
		if (exec && n == 4096)
			execl(self, "bp_storm", "--child", (char *)NULL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

static int bp_open(uint64_t *s, pid_t tid)
{
	struct perf_event_attr a;
	int kind = rng(s) % 5, w = rng(s) % 8;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	/* Counting, or perf's own handler on every hit (arm64 steps it). */
	a.sample_period = rng(s) % 3 ? 1 : 0;
	a.disabled = rng(s) % 10 == 0;
	if (kind == 0) {
		a.bp_type = HW_BREAKPOINT_X;
		a.bp_addr = (uintptr_t)touch_insn;
		a.bp_len = sizeof(long);
	} else {
		static const int types[] = { HW_BREAKPOINT_W, HW_BREAKPOINT_RW,
					     HW_BREAKPOINT_RW, HW_BREAKPOINT_R };

		a.bp_type = types[kind - 1];
#ifdef __x86_64__
		if (a.bp_type == HW_BREAKPOINT_R)
			a.bp_type = HW_BREAKPOINT_RW;
#endif
		a.bp_addr = (uintptr_t)&buf[w];
		a.bp_len = HW_BREAKPOINT_LEN_8;
	}
	kind = syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (kind < 0)
		refused++;
	else
		opens++;
	return kind;
}

/* The watched threads and child (if any) exit. */
static void end_watched(struct spinner sp[2], pid_t child)
{
	int i;

	for (i = 0; i < 2; i++) {
		sp[i].stop = 1;
		pthread_join(sp[i].th, NULL);
	}
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
}

/* One storm: the rangestorm's shape.  Returns its opens. */
static unsigned long storm(uint64_t *s)
{
	struct spinner sp[2] = { 0 };
	int fd[MAXFD], nfd = 0, i, k, rounds;
	pid_t child = 0, tids[3];
	int ntid = 2;

	for (i = 0; i < 2; i++) {
		pthread_create(&sp[i].th, NULL, spin_main, &sp[i]);
		while (!sp[i].tid)
			sched_yield();
		tids[i] = sp[i].tid;
	}
	if (rng(s) % 10 < 4) {
		child = fork();
		if (child == 0)
			child_spin(rng(s) % 10 < 6, rng(s) % 10 < 3);
		if (child > 0)
			tids[ntid++] = child;
	}
	/* Fill the registers of one thread until the kernel refuses. */
	for (i = 0; i < 8 && nfd < MAXFD; i++) {
		int f = bp_open(s, tids[0]);

		if (f < 0)
			break;
		fd[nfd++] = f;
	}
	rounds = 4 + rng(s) % 8;
	for (k = 0; k < rounds; k++) {
		if (nfd && rng(s) % 10 < 4) {
			i = rng(s) % nfd;
			close(fd[i]);
			fd[i] = fd[--nfd];
			continue;
		}
		if (nfd < MAXFD) {
			int f = bp_open(s, tids[rng(s) % ntid]);

			if (f >= 0)
				fd[nfd++] = f;
		}
		if (rng(s) % 4 == 0)
			usleep(rng(s) % 2000);
	}
	if (rng(s) % 10 < 4) {
		/* Exit under the events. */
		end_watched(sp, child);
		while (nfd)
			close(fd[--nfd]);
	} else {
		while (nfd) {
			i = rng(s) % nfd;
			close(fd[i]);
			fd[i] = fd[--nfd];
		}
		end_watched(sp, child);
	}
	return opens;
}

/* Keeps a CPU in and out of the scheduler, for --cold-ms. */
static void *yield_main(void *arg)
{
	for (;;)
		sched_yield();
	return arg;
}

static void worker(unsigned int idx)
{
	uint64_t s = opt_seed * 0x9e3779b97f4a7c15ULL + idx + 1;
	double end = now() + opt_seconds;
	unsigned long n = 0, total = 0;
	int status, i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(opt_seconds + 60);
	for (i = 0; opt_cold_ms && i < 4; i++) {
		pthread_t th;

		pthread_create(&th, NULL, yield_main, NULL);
	}
	while (now() < end) {
		pid_t p = fork();

		/* Each storm in a process of its own, as pmuctx_fuzz's. */
		if (p == 0)
			_exit(storm(&s) ? 1 : 0);
		if (p > 0 && waitpid(p, &status, 0) == p && WIFEXITED(status))
			total += WEXITSTATUS(status);
		rng(&s);
		n++;
		if (opt_cold_ms)
			usleep(1000 * opt_cold_ms);
		else if (opt_gap_ms && rng(&s) % 4 == 0)
			usleep(1000 * (rng(&s) % opt_gap_ms));
	}
	printf("# worker %u: %lu storms, %lu with events\n", idx, n, total);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned int i;

	self = "/proc/self/exe";
	for (i = 1; i < (unsigned int)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (unsigned int)argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--child")) {
			child_spin(true, false);
		} else if (!strcmp(a, "--seconds") && v) {
			opt_seconds = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--workers") && v) {
			opt_workers = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--seed") && v) {
			opt_seed = strtoull(v, NULL, 0); i++;
		} else if (!strcmp(a, "--gap-ms") && v) {
			opt_gap_ms = strtoul(v, NULL, 0); i++;
		} else if (!strcmp(a, "--cold-ms") && v) {
			opt_cold_ms = strtoul(v, NULL, 0); i++;
		} else {
			fprintf(stderr, "usage: bp_storm [--seconds S] [--workers N] [--seed N] [--gap-ms N] [--cold-ms N]\n");
			return 2;
		}
	}
	/* One storm at a time: no other worker's events keep the key on. */
	if (opt_cold_ms)
		opt_workers = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < opt_workers; i++)
		if (fork() == 0)
			worker(i);
	while (wait(NULL) > 0)
		;
	printf("ok - bp_storm seed=%llu: %u s\n", (unsigned long long)opt_seed, opt_seconds);
	return 0;
}
