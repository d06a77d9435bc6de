// SPDX-License-Identifier: GPL-2.0
/*
 * perf's self-read page as PAPI and libperf use it: mmap() a counting
 * event's first page (read-write, as they map it), then read the count in
 * user mode (RDPMC on x86,
 * PMEVCNTR<n>_EL0 or PMCCNTR_EL0 on arm64) while the page's lock is
 * unchanged: count = offset + sign_extend(raw, pmc_width) while index is
 * not 0, else read().  Run under "pmuctx exec" through libpmuctx-perf.so
 * (perf_compat_test.sh), which maps the module's perf-layout page, and
 * with PMUCTX_PERF_ROUTE=kernel on the kernel's own perf (vm-fallback-*),
 * so that every check below is one the kernel passes too.  Exact under
 * -icount on one vCPU.
 *
 * PMUCTX_EXPECT_RDPMC=1: the page must offer user-mode reads (both routes
 * on x86; on arm64 only pmuctx's, as the kernel's needs a sysctl and a
 * config1 bit).  PMUCTX_SELFREAD_HEADROOM=N: instead, self-reads across
 * thousands of wraps, with pmuctx's x86 start_headroom set to N by the
 * caller (counting counters wrap every N events).
 * TAP output; dynamically linked, so that the shim is preloaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 1000000UL		/* loop iterations: 2 * N instructions */

/*
 * User-mode instructions a self-read may add to a measured stretch (the
 * read itself, its retries, the calls around it): a few hundred through
 * either route.  And what one read() adds, through the shim's user-mode
 * translation or the C library's wrapper alone: measured under -icount
 * and printed by the first check; a bound ten times that.
 */
#define SELFREAD_COST	1000
#define READ_COST	20000

static int n, failed, skipped;

static void check(int cond, const char *what, long long a, long long b)
{
	printf("%sok %d %s (%lld, %lld)\n", cond ? "" : "not ", ++n, what, a, b);
	failed += !cond;
}

static void skip(const char *what, const char *why)
{
	printf("ok %d %s # SKIP %s\n", ++n, what, why);
	skipped++;
}

/* Two instructions a turn. */
static __attribute__((noinline)) void loop(unsigned long i)
{
#if defined(__x86_64__)
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(i) : : "cc");
#elif defined(__aarch64__)
	__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(i) : : "cc");
#endif
}

#if defined(__aarch64__)
#define EVCNTR(k) case k: __asm__ volatile("mrs %0, pmevcntr" #k "_el0" : "=r"(v)); break
/* perf's arm64 numbering: n is PMEVCNTR<n>_EL0, 31 the cycle counter. */
static uint64_t read_counter(uint32_t n)
{
	uint64_t v = 0;

	switch (n) {
	EVCNTR(0); EVCNTR(1); EVCNTR(2); EVCNTR(3); EVCNTR(4); EVCNTR(5);
	EVCNTR(6); EVCNTR(7); EVCNTR(8); EVCNTR(9); EVCNTR(10); EVCNTR(11);
	EVCNTR(12); EVCNTR(13); EVCNTR(14); EVCNTR(15); EVCNTR(16); EVCNTR(17);
	EVCNTR(18); EVCNTR(19); EVCNTR(20); EVCNTR(21); EVCNTR(22); EVCNTR(23);
	EVCNTR(24); EVCNTR(25); EVCNTR(26); EVCNTR(27); EVCNTR(28); EVCNTR(29);
	EVCNTR(30);
	case 31:
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}
#else
static uint64_t read_counter(uint32_t n)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(n));
	return lo | (uint64_t)hi << 32;
}
#endif

#define barrier() __asm__ volatile("" ::: "memory")

static unsigned long user_reads;	/* self-reads that used the counter */

/* libperf's and PAPI's algorithm; -1 when the page says "use read()". */
static int64_t self_read(volatile struct perf_event_mmap_page *pc)
{
	uint32_t seq, idx;
	int64_t count, pmc;
	uint16_t width;

	do {
		seq = pc->lock;
		barrier();
		idx = pc->index;
		count = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -1;
		width = pc->pmc_width;
		pmc = read_counter(idx - 1);
		if (width < 64) {
			pmc <<= 64 - width;
			pmc >>= 64 - width;
		}
		count += pmc;
		barrier();
	} while (pc->lock != seq);
	user_reads++;
	return count;
}

static int64_t count_of(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return -2;
	return v;
}

/* A self-read, or read() where the page says so (as PAPI does). */
static int64_t value(volatile struct perf_event_mmap_page *pc, int fd)
{
	int64_t v = self_read(pc);

	return v >= 0 ? v : count_of(fd);
}

static int open_counting(uint64_t config)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = config;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	return syscall(__NR_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void selfread_path(const char *name, uint64_t config, int expect_rdpmc)
{
	volatile struct perf_event_mmap_page *pc;
	int64_t s1, r1, s2, a, b, prev, v, r;
	unsigned long before, i, bad = 0;
	char what[160];
	void *p;
	int fd;

	fd = open_counting(config);
	snprintf(what, sizeof(what), "%s: opened", name);
	check(fd >= 0, what, fd, errno);
	if (fd < 0)
		return;
	p = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	snprintf(what, sizeof(what), "%s: one page maps", name);
	check(p != MAP_FAILED, what, p == MAP_FAILED ? errno : 0, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	pc = p;
	snprintf(what, sizeof(what), "%s: disabled, the page says read() (index 0)", name);
	check(pc->index == 0 && self_read(pc) == -1, what, pc->index, 0);

	/* The kernel's perf grants user reads at the first update after the map. */
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	printf("# %s: cap_user_rdpmc %u, pmc_width %u, index %u\n", name,
	       (unsigned int)pc->cap_user_rdpmc, (unsigned int)pc->pmc_width,
	       (unsigned int)pc->index);
	snprintf(what, sizeof(what), "%s: enabled, the page offers user-mode reads as expected",
		 name);
	check(!expect_rdpmc || (pc->cap_user_rdpmc && pc->index), what, pc->cap_user_rdpmc,
	      pc->index);
	before = user_reads;
	s1 = value(pc, fd);
	r1 = count_of(fd);
	s2 = value(pc, fd);
	snprintf(what, sizeof(what), "%s: self-read, read(), self-read in order, within one read()",
		 name);
	check(s1 >= 0 && s1 <= r1 && r1 <= s2 && s2 - s1 < READ_COST, what, r1 - s1, s2 - r1);

	a = value(pc, fd);
	loop(N);
	b = value(pc, fd);
	snprintf(what, sizeof(what), "%s: a loop of %lu instructions, self-read before and after",
		 name, 2 * N);
	check(b - a >= (int64_t)(2 * N) && b - a < (int64_t)(2 * N + SELFREAD_COST), what, b - a,
	      2 * N);
	if (expect_rdpmc) {
		snprintf(what, sizeof(what), "%s: those reads used the counter, not read()", name);
		check(user_reads - before == 4, what, user_reads - before, 4);
	} else {
		snprintf(what, sizeof(what), "%s: those reads used the counter, not read()", name);
		skip(what, "no user-mode reads on this route");
	}

	/* Across switches: every value in order, each read() between its neighbours. */
	prev = value(pc, fd);
	for (i = 0; i < 2000; i++) {
		loop(1000 + i);
		if (i % 3 == 0)
			sched_yield();
		if (i % 200 == 0)
			usleep(100);
		v = value(pc, fd);
		r = count_of(fd);
		if (v < prev || r < v || r - v > READ_COST)
			bad++;
		prev = value(pc, fd);
		if (prev < r)
			bad++;
	}
	snprintf(what, sizeof(what), "%s: 2000 rounds across yields and sleeps stay in order", name);
	check(bad == 0, what, bad, 0);

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	v = value(pc, fd);
	snprintf(what, sizeof(what), "%s: after a reset the count starts again", name);
	check(v >= 0 && v < READ_COST, what, v, 0);

	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	r = count_of(fd);
	snprintf(what, sizeof(what), "%s: disabled again, index 0 and read() has the count", name);
	check(pc->index == 0 && self_read(pc) == -1 && r >= v, what, r, pc->index);
	munmap(p, sysconf(_SC_PAGESIZE));
	close(fd);
}

/* An instructions counter, mapped read-write as PAPI maps it, enabled. */
static volatile struct perf_event_mmap_page *open_enabled(const char *name, int *fd)
{
	void *p = MAP_FAILED;
	char what[80];

	*fd = open_counting(PERF_COUNT_HW_INSTRUCTIONS);
	if (*fd >= 0)
		p = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	snprintf(what, sizeof(what), "%s: opened and mapped", name);
	check(p != MAP_FAILED, what, *fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	ioctl(*fd, PERF_EVENT_IOC_ENABLE, 0);
	return p;
}

/*
 * Past 2^31 events: perf's kernel programs a counter 2^31 (or 2^47) events
 * before its wrap and re-arms it there; pmuctx's mapped counters start
 * 2^31 before theirs (x86: re-armed so at the wrap; arm64: the page says
 * read() after it until the next load).  Every self-read must stay exact
 * across it, and on x86 keep using the counter.
 */
static void long_path(int expect_counter)
{
	volatile struct perf_event_mmap_page *pc;
	unsigned long i, bad = 0, before;
	int64_t a, prev, v, r;
	int fd;

	pc = open_enabled("long", &fd);
	if (!pc)
		return;
	before = user_reads;
	a = value(pc, fd);
	prev = a;
	for (i = 0; i < 110; i++) {
		loop(10000000);
		v = value(pc, fd);
		if (v - prev < 20000000 || v - prev > 20000000 + SELFREAD_COST)
			bad++;
		prev = v;
	}
	r = count_of(fd);
	check(prev - a > (1LL << 31), "long: the run passed 2^31 events", prev - a, 1LL << 31);
	check(bad == 0, "long: every self-read 20,000,000 after the one before", bad, 0);
	check(r >= prev && r - prev < READ_COST, "long: read() agrees with the last self-read", r,
	      prev);
	if (expect_counter)
		check(user_reads - before == 111, "long: every self-read used the counter",
		      user_reads - before, 111);
	else
		skip("long: every self-read used the counter", "not on this route");
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap((void *)pc, sysconf(_SC_PAGESIZE));
	close(fd);
}

/*
 * Counters that wrap every few thousand events (pmuctx's x86 backend,
 * start_headroom): the sign extension and the overflow NMI's fold must
 * keep every self-read exact across the wraps.
 */
static void wraps_path(unsigned long headroom)
{
	volatile struct perf_event_mmap_page *pc;
	unsigned long i, bad = 0, before;
	int64_t a, b, prev, v;
	int fd;

	pc = open_enabled("wraps", &fd);
	if (!pc)
		return;
	before = user_reads;
	a = value(pc, fd);
	prev = a;
	for (i = 0; i < 3000; i++) {
		loop(headroom / 3 + i % 7);
		v = value(pc, fd);
		if (v < prev || v - prev > (int64_t)(headroom + SELFREAD_COST))
			bad++;
		prev = v;
	}
	b = count_of(fd);
	check(bad == 0, "wraps: 3000 self-reads across the wraps, each in order and close", bad, 0);
	check(user_reads - before == 3001, "wraps: every one of them read the counter",
	      user_reads - before, 3001);
	check(b >= prev && b - prev < READ_COST, "wraps: read() agrees with the last self-read", b,
	      prev);
	check(b - a >= (int64_t)(3000 * (headroom / 3) * 2), "wraps: the whole run counted", b - a,
	      3000 * (headroom / 3) * 2);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap((void *)pc, sysconf(_SC_PAGESIZE));
	close(fd);
}

static int open_on(uint32_t type, uint64_t config, pid_t pid)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = type;
	pa.config = config;
	pa.exclude_kernel = type == PERF_TYPE_HARDWARE;
	pa.exclude_hv = 1;
	return syscall(__NR_perf_event_open, &pa, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * perf maps a page for every counting event, also where nothing can be
 * read in user mode: a software event's, another task's.  Its index is 0
 * there, and the reader reads the count with read() (PAPI's attach
 * tests map such pages).  It must be shared, as for every perf mapping.
 */
static void read_only_pages_path(void)
{
	volatile struct perf_event_mmap_page *pc;
	long page = sysconf(_SC_PAGESIZE);
	int fd, go[2], status;
	int64_t v;
	pid_t kid;
	void *p;

	fd = open_on(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0);
	check(fd >= 0, "task-clock: opened", fd, errno);
	if (fd < 0)
		return;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, "task-clock: a private mapping is EINVAL",
	      p == MAP_FAILED ? errno : 0, EINVAL);
	if (p != MAP_FAILED)
		munmap(p, page);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(p != MAP_FAILED, "task-clock: its page maps", p == MAP_FAILED ? errno : 0, 0);
	if (p != MAP_FAILED) {
		pc = p;
		loop(N);
		v = value(pc, fd);
		check(pc->index == 0 && self_read(pc) == -1 && v > 0,
		      "task-clock: the page says read(), which counts", pc->index, v);
		munmap(p, page);
	}
	close(fd);

	if (pipe(go))
		return;
	kid = fork();
	if (kid < 0)
		return;
	if (!kid) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		loop(N);
		_exit(0);
	}
	close(go[0]);
	fd = open_on(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, kid);
	check(fd >= 0, "another task's instructions: opened", fd, errno);
	if (fd >= 0) {
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		check(p != MAP_FAILED, "another task's instructions: its page maps",
		      p == MAP_FAILED ? errno : 0, 0);
		/* The task waits in read(): nothing of it is on a counter. */
		if (p != MAP_FAILED)
			check(((volatile struct perf_event_mmap_page *)p)->index == 0,
			      "another task's instructions: the page says read()",
			      ((volatile struct perf_event_mmap_page *)p)->index, 0);
	}
	if (write(go[1], "g", 1) != 1 || waitpid(kid, &status, 0) != kid)
		status = -1;
	close(go[1]);
	if (fd >= 0) {
		v = count_of(fd);
		check(status == 0 && v >= (int64_t)(2 * N),
		      "another task's instructions: read() has its loop", v, 2 * N);
		if (p != MAP_FAILED)
			munmap(p, page);
		close(fd);
	}
}

int main(void)
{
	const char *route = getenv("PMUCTX_PERF_ROUTE");
	const char *expect = getenv("PMUCTX_EXPECT_RDPMC");
	const char *headroom = getenv("PMUCTX_SELFREAD_HEADROOM");
	int rdpmc = expect && !strcmp(expect, "1");

	printf("TAP version 13\n# perf_event_open goes to %s\n",
	       route && !strcmp(route, "kernel") ? "the kernel's perf" : "pmuctx");
	if (headroom && atoi(headroom) > 0) {
		wraps_path(strtoul(headroom, NULL, 0));
	} else {
		selfread_path("instructions", PERF_COUNT_HW_INSTRUCTIONS, rdpmc);
#if defined(__aarch64__)
		/* the 64-bit cycle counter: one cycle per instruction under -icount */
		selfread_path("cycles", PERF_COUNT_HW_CPU_CYCLES, rdpmc);
		long_path(0);
#else
		long_path(rdpmc);
#endif
		read_only_pages_path();
	}
	printf("1..%d\n", n);
	return failed != 0;
}
