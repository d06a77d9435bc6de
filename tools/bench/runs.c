// SPDX-License-Identifier: GPL-2.0
/*
 * One measurement each, run in a fresh process so no counter outlives it:
 * ping-pong and ring context switches, fork+exit, read, multiplexing
 * (a user loop with rotating counters), memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench.h"

#define WARM 20		/* round trips / laps before the clock starts */
#define MAX_RING 64

double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* No wakeup preemption: a write never switches; the writer's read() does. */
void set_batch(void)
{
	struct sched_param p = { .sched_priority = 0 };

	sched_setscheduler(0, SCHED_BATCH, &p);
}

static void xread(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(3);
}

static void xwrite(int fd)
{
	char c = 0;

	if (write(fd, &c, 1) != 1)
		_exit(3);
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

double run_pingpong(enum api api, const struct cset *s, enum shape shape, int rounds)
{
	int a[2], b[2], i, fd;
	const void *page;
	double t0, t1;
	pid_t pid;

	set_batch();
	if (pipe(a) || pipe(b))
		return -1;
	fd = open_set(api, s, shape == SHAPE_LOAD ? INHERIT_NONE :
			      shape == SHAPE_STAT ? INHERIT_PER_TASK : INHERIT_SHARED);
	if (fd < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		alarm(600);
		close(a[1]);
		close(b[0]);
		if (shape == SHAPE_LOAD && open_set(api, s, 0) < 0)
			_exit(2);
		if (shape == SHAPE_MOD && open_extra(api))
			_exit(2);
		if (shape == SHAPE_MAP && self_read_setup(api, fd, &page))
			_exit(2);
		for (i = 0; i < WARM + rounds; i++) {
			xread(a[0]);
			xwrite(b[1]);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	if (shape == SHAPE_MAP && self_read_setup(api, fd, &page)) {
		kill(pid, SIGKILL);
		reap(pid);
		return -1;
	}
	for (i = 0; i < WARM; i++) {
		xwrite(a[1]);
		xread(b[0]);
	}
	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		xwrite(a[1]);
		xread(b[0]);
	}
	t1 = now_ns();
	if (reap(pid))
		return -1;
	return (t1 - t0) / (2.0 * rounds);
}

/*
 * lat_ctx-style ring: position i reads pipe i and writes pipe i+1.  Family
 * f holds the positions f, f + nfam, ...: its leader opens the inherited
 * set and forks the others, so nfam = 2 alternates two families around the
 * ring (every switch crosses families) and nfam = 1 is one family.
 * Position 0 keeps the clock and reports through @res.
 */
static void ring_member(int (*p)[2], int n, int pos, int laps, int res)
{
	int in = p[pos][0], out = p[(pos + 1) % n][1], i;
	double t0 = 0, v;

	for (i = 0; i < WARM + laps; i++) {
		if (i == WARM)
			t0 = now_ns();
		if (pos == 0) {
			xwrite(out);
			xread(in);
		} else {
			xread(in);
			xwrite(out);
		}
	}
	if (pos == 0) {
		v = (now_ns() - t0) / ((double)laps * n);
		if (write(res, &v, sizeof(v)) != sizeof(v))
			_exit(3);
	}
}

double run_ring(enum api api, const struct cset *s, int nfam, int n, int laps)
{
	int p[MAX_RING][2], res[2], i, f, pos, bad = 0;
	pid_t leader[2], pid;
	double v;

	if (n > MAX_RING || nfam < 1 || nfam > 2 || pipe(res))
		return -1;
	set_batch();
	for (i = 0; i < n; i++)
		if (pipe(p[i]))
			return -1;
	for (f = 0; f < nfam; f++) {
		leader[f] = fork();
		if (leader[f] < 0)
			return -1;
		if (leader[f])
			continue;
		alarm(600);
		if (open_set(api, s, 1) < 0)
			_exit(2);
		pos = f;
		for (i = f + nfam; i < n; i += nfam) {
			pid = fork();
			if (pid < 0)
				_exit(2);
			if (!pid) {
				alarm(600);
				pos = i;
				break;
			}
		}
		ring_member(p, n, pos, laps, res[1]);
		if (pos == f)
			while (wait(NULL) > 0)
				;
		_exit(0);
	}
	for (i = 0; i < n; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	close(res[1]);
	for (f = 0; f < nfam; f++)
		bad |= reap(leader[f]);
	if (bad || read(res[0], &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

double run_fork(enum api api, const struct cset *s, int iters)
{
	double t0 = 0;
	pid_t pid;
	int i;

	set_batch();
	if (open_set(api, s, 1) < 0)
		return -1;
	for (i = 0; i < WARM + iters; i++) {
		if (i == WARM)
			t0 = now_ns();
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid)
			_exit(0);
		if (reap(pid))
			return -1;
	}
	return (now_ns() - t0) / iters;
}

double run_read(enum api api, int pmu, int self, int iters)
{
	const void *page = NULL;
	uint64_t buf[8], v;
	double t0 = 0;
	int fd, i, again = 0;

	fd = open_one(api, pmu, self);
	if (fd < 0)
		return -1;
	if (self && self_read_setup(api, fd, &page))
		return -1;
	for (i = 0; i < WARM + iters; i++) {
		if (i == WARM)
			t0 = now_ns();
		if (!self) {
			if (read(fd, buf, sizeof(buf)) < 8)
				return -1;
			continue;
		}
		/* Not loaded here right now: let it be scheduled in once. */
		while (self_read(api, page, &v)) {
			if (errno != EAGAIN || ++again > 100)
				return -1;
			sched_yield();
		}
	}
	return (now_ns() - t0) / iters;
}

/* ---------- multiplexing ---------- */

#if defined(__aarch64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline)) void spin(unsigned long n)
{
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n" : "+r"(n) : : "cc");
}
#elif defined(__x86_64__)
static __attribute__((noinline)) void spin(unsigned long n)
{
	asm volatile("1:	dec	%0\n"
		     "	jnz	1b\n" : "+r"(n) : : "cc");
}
#else
static __attribute__((noinline)) void spin(unsigned long n)
{
	while (n--)
		asm volatile("" : : : "memory");
}
#endif

/* Interrupts taken since boot, every CPU (/proc/stat "intr" total). */
static double irq_total(void)
{
	char line[256];
	double v = -1;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "intr %lf", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * One task alone on its CPU runs a fixed user loop with @s open: with
 * every counter on the PMU the loop costs what it costs without counters
 * (they count user mode, the tick is the same); with more counters than
 * the PMU has, every rotation adds its cost to the loop's time.
 */
static double switches(void)
{
	struct rusage u;

	if (getrusage(RUSAGE_SELF, &u))
		return -1;
	return (double)u.ru_nvcsw + u.ru_nivcsw;
}

double run_mux(enum api api, const struct cset *s, unsigned long insns,
	       double extra[3])
{
	double t0, t1, i0, i1, s0, s1;
	uint64_t r0 = 0, r1 = 0;
	int fd;

	set_batch();
	fd = open_set(api, s, 0);
	if (fd < 0)
		return -1;
	if (api == API_PMUCTX && ctx_rotations(fd, &r0))
		return -1;
	spin(1000);	/* fault the code in */
	s0 = switches();
	i0 = irq_total();
	t0 = now_ns();
	spin(insns / 2);
	t1 = now_ns();
	i1 = irq_total();
	s1 = switches();
	if (api == API_PMUCTX && ctx_rotations(fd, &r1))
		return -1;
	extra[0] = api == API_PMUCTX ? (double)(r1 - r0) : -1;
	extra[1] = i0 < 0 || i1 < 0 ? -1 : i1 - i0;
	extra[2] = s0 < 0 || s1 < 0 ? -1 : s1 - s0;
	return t1 - t0;
}

/* ---------- memory ---------- */

/* Bytes of slab objects in use, over every cache (/proc/slabinfo). */
static double slab_object_bytes(void)
{
	char line[512], name[128];
	unsigned long active, total, size;
	double sum = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lu %lu %lu", name, &active, &total, &size) == 4)
			sum += (double)active * size;
	fclose(f);
	return sum;
}

/* The Slab: line of /proc/meminfo, after folding per-CPU statistics. */
static double slab_meminfo_bytes(void)
{
	char line[256];
	unsigned long kb;
	double v = -1;
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lu kB", &kb) == 1)
			v = kb * 1024.0;
	fclose(f);
	return v;
}

/*
 * @n children that stay alive while slab use is measured.  mode 0: no
 * counters; 1: each child inherits the parent's set (clones); 2: each
 * child opens its own set (separate contexts).  Bytes per child, from
 * slab objects (*obj) and from /proc/meminfo's Slab (*pages).
 */
int run_memory(enum api api, const struct cset *s, int mode, int n,
	       double *obj, double *pages)
{
	int rd[2], hold[2], i, bad = 0;
	double o0, p0, o1, p1;
	pid_t *pids = calloc(n, sizeof(*pids));
	char c;

	if (!pids || pipe(rd) || pipe(hold))
		return -1;
	if (mode == 1 && open_set(api, s, 1) < 0)
		return -1;
	o0 = slab_object_bytes();
	p0 = slab_meminfo_bytes();
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return -1;
		if (!pids[i]) {
			alarm(600);
			close(hold[1]);
			close(rd[0]);
			if (mode == 2 && open_set(api, s, 0) < 0)
				_exit(2);
			xwrite(rd[1]);
			if (read(hold[0], &c, 1) < 0)
				_exit(3);
			_exit(0);
		}
	}
	close(rd[1]);
	close(hold[0]);
	for (i = 0; i < n; i++)
		if (read(rd[0], &c, 1) != 1)
			bad = 1;
	o1 = slab_object_bytes();
	p1 = slab_meminfo_bytes();
	close(hold[1]);
	for (i = 0; i < n; i++)
		bad |= reap(pids[i]);
	free(pids);
	if (bad || o0 < 0 || p0 < 0)
		return -1;
	*obj = (o1 - o0) / n;
	*pages = (p1 - p0) / n;
	return 0;
}
