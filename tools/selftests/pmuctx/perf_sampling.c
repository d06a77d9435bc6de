// SPDX-License-Identifier: GPL-2.0
/*
 * perf's sampling interface as PAPI and perf's readers use it, run under
 * "pmuctx exec" twice (perf_compat_test.sh): through libpmuctx-perf.so's
 * ring, and with PMUCTX_PERF_ROUTE=kernel on the kernel's own perf (a boot
 * where its driver owns the PMU), so that every check below is one the
 * kernel passes too.  Exact under -icount on one vCPU: an overflow every
 * @period user-mode instructions, zero skid.
 *
 *   signal   PAPI's overflow path: O_ASYNC, F_SETOWN_EX, F_SETSIG with an
 *            RT signal; its handler disables, reads the newest record at
 *            data_head, refreshes.  One signal per overflow, each finding
 *            its record; floor(count / period) records, each with an IP in
 *            the loop (one may fall after it), this pid/tid, a time inside
 *            the run, the period, the event's id.
 *   poll     a reader that polls and then walks the ring.
 *   lost     a ring too small: PERF_RECORD_LOST reports what did not fit,
 *            and records + lost = overflows.
 *   mmap     perf's rules: 1 + 2^n pages, offset 0, MAP_SHARED, one size.
 * TAP output; dynamically linked, so that the shim is preloaded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N 1000000UL		/* loop iterations: 2 * N instructions */

static int n, failed;

static void check(int cond, const char *what, unsigned long long a, unsigned long long b)
{
	printf("%sok %d %s (%llu, %llu)\n", cond ? "" : "not ", ++n, what, a, b);
	failed += !cond;
}

extern const char sample_loop_start[] __attribute__((visibility("hidden")));
extern const char sample_loop_end[] __attribute__((visibility("hidden")));

/* The loop whose addresses the samples must name: two instructions a turn. */
static __attribute__((noinline)) void loop(unsigned long i)
{
#if defined(__x86_64__)
	__asm__ volatile(".hidden sample_loop_start\n.globl sample_loop_start\nsample_loop_start:\n"
			 "1: dec %0\n\tjnz 1b\n"
			 ".hidden sample_loop_end\n.globl sample_loop_end\nsample_loop_end:"
			 : "+r"(i) : : "cc");
#elif defined(__aarch64__)
	__asm__ volatile(".hidden sample_loop_start\n.globl sample_loop_start\nsample_loop_start:\n"
			 "1: subs %0, %0, #1\n\tb.ne 1b\n"
			 ".hidden sample_loop_end\n.globl sample_loop_end\nsample_loop_end:"
			 : "+r"(i) : : "cc");
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * QEMU 7.2's arm PMU raises an event counter's overflow at the next change
 * of exception level; its cycle counter's (one cycle per instruction under
 * -icount shift=0) mostly on time, but now and then one interrupt stands
 * for two periods, and perf's driver, like pmuctx, then writes one sample.
 * There a run has at most one record per period; on our x86 PMU, whose
 * every overflow interrupts before the next instruction, exactly one.
 */
#if defined(__aarch64__)
#define SAMPLED_EVENT PERF_COUNT_HW_CPU_CYCLES
#define ON_TIME 0
#else
#define SAMPLED_EVENT PERF_COUNT_HW_INSTRUCTIONS
#define ON_TIME 1
#endif

/* @records for @periods periods: one each, or (late interrupts) at most one. */
static int per_period(unsigned long records, uint64_t periods)
{
	return ON_TIME ? records == periods : records >= 1 && records <= periods;
}

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		     PERF_SAMPLE_PERIOD)

/* A disabled user-mode sampling event of SAMPLED_EVENT, at @period or at a rate. */
static int open_sampler(uint64_t period, bool freq)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = SAMPLED_EVENT;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	pa.sample_period = period;
	pa.freq = freq;
	pa.sample_type = SAMPLE_TYPE;
	pa.wakeup_events = 1;
	/* times comparable with clock_gettime's (perf's default clock is its own) */
	pa.use_clockid = 1;
	pa.clockid = CLOCK_MONOTONIC;
	return syscall(__NR_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_sampling(uint64_t period)
{
	return open_sampler(period, false);
}

static uint64_t count_of(int fd)
{
	uint64_t v = ~0ULL;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return ~0ULL;
	return v;
}

/*
 * @fd started by @start (ENABLE or REFRESH) for @turns of the loop, then
 * disabled: its count, and the run's start and end times.
 */
static uint64_t sampled_loop(int fd, unsigned long start, unsigned long turns, uint64_t *t0,
			     uint64_t *t1)
{
	*t0 = now_ns();
	ioctl(fd, start, start == PERF_EVENT_IOC_REFRESH ? 1 : 0);
	loop(turns);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	*t1 = now_ns();
	return count_of(fd);
}

/* One SAMPLE_TYPE record: header, ip, pid/tid, time, id, period. */
struct sample_rec {
	struct perf_event_header h;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time, id, period;
};

struct ring_walk {
	unsigned long samples, lost_records, others, outside_loop, bad_fields;
	uint64_t lost;
};

/* Walk the records in [from, to) of a ring of @data_size bytes. */
static void walk(const unsigned char *data, uint64_t data_size, uint64_t from, uint64_t to,
		 uint64_t id, uint64_t period, uint64_t t0, uint64_t t1, struct ring_walk *w)
{
	memset(w, 0, sizeof(*w));
	while (from < to) {
		unsigned char buf[256];
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(from + i) & (data_size - 1)];
		if (h.size < sizeof(h) || h.size > sizeof(buf))
			break;
		for (i = 0; i < h.size; i++)
			buf[i] = data[(from + i) & (data_size - 1)];
		from += h.size;
		if (h.type == PERF_RECORD_SAMPLE && h.size == sizeof(struct sample_rec)) {
			struct sample_rec *r = (struct sample_rec *)buf;

			w->samples++;
			if ((const char *)r->ip < sample_loop_start ||
			    (const char *)r->ip > sample_loop_end)
				w->outside_loop++;
			if (r->pid != (uint32_t)getpid() || r->tid != (uint32_t)gettid() ||
			    r->time < t0 || r->time > t1 || r->id != id || r->period != period ||
			    (r->h.misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
				w->bad_fields++;
		} else if (h.type == PERF_RECORD_LOST) {
			w->lost_records++;
			w->lost += ((uint64_t *)buf)[2];
		} else {
			w->others++;
		}
	}
}

/* ---- signal: PAPI's overflow path ---- */
static int sig_fd = -1;
static struct perf_event_mmap_page *sig_page;
static volatile int signals, signals_with_record, signals_naming_fd;
static uint64_t last_head;

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	uint64_t head;

	(void)sig;
	(void)uc;
	signals++;
	/* perf says POLL_HUP when REFRESH's count runs out, pmuctx POLL_IN */
	if ((si->si_code == POLL_IN || si->si_code == POLL_HUP) && si->si_fd == sig_fd)
		signals_naming_fd++;
	ioctl(sig_fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&sig_page->data_head, __ATOMIC_ACQUIRE);
	if (head != last_head)
		signals_with_record++;
	last_head = head;
	__atomic_store_n(&sig_page->data_tail, head, __ATOMIC_RELEASE);
	ioctl(sig_fd, PERF_EVENT_IOC_REFRESH, 1);
}

static void signal_path(void)
{
	const uint64_t period = 100000;
	const size_t page = sysconf(_SC_PAGESIZE), len = (1 + 8) * page;
	struct f_owner_ex owner = { F_OWNER_TID, gettid() };
	struct sigaction act, seen;
	const int sig = SIGRTMIN + 2;
	struct ring_walk w;
	uint64_t id = 0, count, t0, t1;
	unsigned char *data;

	memset(&act, 0, sizeof(act));
	act.sa_sigaction = on_overflow;
	act.sa_flags = SA_SIGINFO;
	sigemptyset(&act.sa_mask);
	sigaction(sig, &act, NULL);
	sig_fd = open_sampling(period);
	check(sig_fd >= 0, "a user-mode event sampling every 100000 opens", sig_fd, errno);
	if (sig_fd < 0)
		return;
	ioctl(sig_fd, PERF_EVENT_IOC_ID, &id);
	sig_page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, sig_fd, 0);
	check(sig_page != MAP_FAILED, "its ring maps: 1 + 8 pages, read-write", errno, 0);
	if (sig_page == MAP_FAILED)
		return;
	check(sig_page->data_offset == page && sig_page->data_size == 8 * page && !sig_page->data_head,
	      "the header page: data at one page, 8 pages of it, empty", sig_page->data_offset,
	      sig_page->data_size);
	fcntl(sig_fd, F_SETFL, O_ASYNC | O_NONBLOCK);
	fcntl(sig_fd, F_SETOWN_EX, &owner);
	fcntl(sig_fd, F_SETSIG, sig);
	memset(&seen, 0, sizeof(seen));
	sigaction(sig, NULL, &seen);
	check(seen.sa_sigaction == on_overflow && (seen.sa_flags & SA_SIGINFO),
	      "sigaction shows the program's own handler", 0, 0);

	count = sampled_loop(sig_fd, PERF_EVENT_IOC_REFRESH, N, &t0, &t1);
	data = (unsigned char *)sig_page + page;
	walk(data, 8 * page, 0, sig_page->data_head, id, period, t0, t1, &w);
	check(count >= 2 * N && count < 2 * N + period, "the event counted the loop", count, 2 * N);
	check(per_period(w.samples, count / period) && !w.lost_records && !w.others,
	      "one sample record per period counted, nothing else", w.samples, count / period);
	check(w.outside_loop <= 1, "every sample's IP is in the loop (one may follow it)",
	      w.outside_loop, w.samples);
	check(!w.bad_fields, "every sample: user mode, this pid and tid, a time of the run, the period, the id",
	      w.bad_fields, w.samples);
	check(signals == (int)w.samples, "one signal per sample", signals, w.samples);
	check(signals_with_record == signals, "each signal's handler found its record at data_head",
	      signals_with_record, signals);
	check(signals_naming_fd == signals, "each signal names the event (si_fd; POLL_IN or POLL_HUP)",
	      signals_naming_fd, signals);
	errno = 0;
	check(mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, sig_fd, 0) == MAP_FAILED &&
	      errno == EINVAL, "a second mapping of another size: EINVAL", errno, EINVAL);
	munmap(sig_page, len);
	close(sig_fd);
	signal(sig, SIG_DFL);
}

/* A sampling event with its id and a ring of 1 + @data_pages pages, or NULL. */
static struct perf_event_mmap_page *open_mapped(uint64_t period, size_t data_pages, int *fd,
						uint64_t *id)
{
	const size_t page = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg;

	*fd = open_sampling(period);
	if (*fd < 0) {
		check(0, "another sampling event opens", *fd, errno);
		return NULL;
	}
	ioctl(*fd, PERF_EVENT_IOC_ID, id);
	pg = mmap(NULL, (1 + data_pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (pg == MAP_FAILED) {
		check(0, "its ring maps", errno, data_pages);
		close(*fd);
		return NULL;
	}
	return pg;
}

/* ---- poll: wait for the event, then walk the ring ---- */
static void poll_path(void)
{
	const uint64_t period = 50000;
	const size_t page = sysconf(_SC_PAGESIZE), len = (1 + 2) * page;
	struct perf_event_mmap_page *pg;
	struct pollfd pfd;
	struct ring_walk w;
	uint64_t id = 0, count, t0, t1;
	int fd, ready;

	pg = open_mapped(period, 2, &fd, &id);
	if (!pg)
		return;
	count = sampled_loop(fd, PERF_EVENT_IOC_ENABLE, N, &t0, &t1);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	ready = poll(&pfd, 1, 5000);
	check(ready == 1 && (pfd.revents & POLLIN), "poll says the event has records", ready, pfd.revents);
	walk((unsigned char *)pg + page, 2 * page, 0, pg->data_head, id, period, t0, t1, &w);
	check(per_period(w.samples, count / period) && !w.lost_records && !w.bad_fields &&
	      w.outside_loop <= 1,
	      "after poll, the ring holds one good sample per period", w.samples, count / period);
	/* the program's view goes, the event stays: later samples land in no one's way */
	munmap(pg, len);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	loop(N / 10);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ready = poll(&pfd, 1, 0);
	check(ready >= 0, "samples after the ring's unmapping: poll still works", ready, 0);
	close(fd);
}

/*
 * ---- lost: a one-page ring nobody reads during the run ----
 * 280 overflows: more than pmuctx's own ring keeps (256) and far more
 * than one page holds (85), at a period no backend throttles (pmuctx's
 * take 64 interrupts a jiffy, 4 M instructions under -icount, before one
 * interrupt stands for several periods).
 */
static void lost_path(void)
{
	const uint64_t period = 100000;
	const size_t page = sysconf(_SC_PAGESIZE), len = 2 * page;
	struct perf_event_mmap_page *pg;
	struct ring_walk first, second;
	struct pollfd pfd;
	uint64_t id = 0, count, t0, t1, head;
	int fd;

	pg = open_mapped(period, 1, &fd, &id);
	if (!pg)
		return;
	t0 = now_ns();
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	loop(14 * N);
	pfd.fd = fd;
	pfd.events = POLLIN;
	poll(&pfd, 1, 5000);
	head = pg->data_head;
	walk((unsigned char *)pg + page, page, 0, head, id, period, t0, now_ns(), &first);
	check(first.samples > 0 && first.samples <= page / sizeof(struct sample_rec) &&
	      !first.lost_records, "a full ring: as many samples as fit, no loss reported yet",
	      first.samples, page / sizeof(struct sample_rec));
	/* read it all: the next records start with what was lost */
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	loop(4 * period);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	t1 = now_ns();
	count = count_of(fd);
	poll(&pfd, 1, 5000);
	walk((unsigned char *)pg + page, page, head, pg->data_head, id, period, t0, t1, &second);
	printf("# first ring: %lu samples; then %lu samples, %lu lost, %lu other records\n",
	       first.samples, second.samples, (unsigned long)second.lost, second.others);
	check(second.lost_records == 1 && second.lost, "then one PERF_RECORD_LOST",
	      second.lost_records, second.lost);
	check(per_period(first.samples + second.samples + second.lost, count / period),
	      "records and lost samples add up to the overflows",
	      first.samples + second.samples + second.lost, count / period);
	munmap(pg, len);
	close(fd);
}

/* ---- mmap: perf's rules ---- */
static void mmap_rules(void)
{
	const size_t page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr pa;
	int fd, counting;
	void *p;

	fd = open_sampling(100000);
	if (fd < 0) {
		check(0, "a fourth sampling event opens", fd, errno);
		return;
	}
	errno = 0;
	p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, "1 + 3 pages: EINVAL", errno, EINVAL);
	errno = 0;
	p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	check(p == MAP_FAILED && errno == EINVAL, "an offset: EINVAL", errno, EINVAL);
	errno = 0;
	p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, "MAP_PRIVATE: EINVAL", errno, EINVAL);
	close(fd);

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = PERF_COUNT_HW_INSTRUCTIONS;
	pa.exclude_kernel = 1;
	counting = syscall(__NR_perf_event_open, &pa, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	errno = 0;
	check(counting >= 0 && ioctl(counting, PERF_EVENT_IOC_REFRESH, 1) == -1 && errno == EINVAL,
	      "REFRESH on a counting event: EINVAL", errno, EINVAL);
	/* every event has a ring (PAPI maps three pages of one it meant to sample) */
	errno = 0;
	p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, counting, 0);
	check(p != MAP_FAILED && ((struct perf_event_mmap_page *)p)->data_head == 0 &&
	      ((struct perf_event_mmap_page *)p)->data_size == 2 * page,
	      "a counting event's 1 + 2 pages: an empty ring", errno, 0);
	if (p != MAP_FAILED)
		munmap(p, 3 * page);
	close(counting);
}

/*
 * ---- freq: perf record's default, samples a second instead of a period ----
 * 1000 a second over ~60 ms of the loop (virtual time under -icount): at
 * least half that many samples (the kernel's perf starts at a period of
 * 1 and adapts at its ticks, pmuctx from a guess of an event a
 * nanosecond at each sample), each of this task in user mode, their
 * periods varying with the rate and adding up to no more than the count
 * and at least half of it.
 */
static void freq_path(void)
{
	const size_t page = sysconf(_SC_PAGESIZE), data_pages = 16;
	const unsigned long turns = 30000000;
	unsigned long samples = 0, bad = 0;
	struct perf_event_mmap_page *pg;
	uint64_t count, t0, t1, sum = 0, from, to;
	unsigned char *data;
	int fd;

	fd = open_sampler(1000, true);
	check(fd >= 0, "freq: an event sampling 1000 times a second opens", fd, errno);
	if (fd < 0)
		return;
	pg = mmap(NULL, (1 + data_pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(pg != MAP_FAILED, "freq: its ring maps", errno, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return;
	}
	count = sampled_loop(fd, PERF_EVENT_IOC_ENABLE, turns, &t0, &t1);
	poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, 0);
	data = (unsigned char *)pg + page;
	to = pg->data_head;
	__sync_synchronize();
	for (from = pg->data_tail; from < to;) {
		struct sample_rec r;
		size_t i;

		/* a record may wrap at the ring's end */
		for (i = 0; i < sizeof(r.h); i++)
			((unsigned char *)&r)[i] = data[(from + i) & (data_pages * page - 1)];
		if (r.h.size < sizeof(r.h))
			break;
		if (r.h.type == PERF_RECORD_SAMPLE) {
			for (i = 0; i < sizeof(r) && i < r.h.size; i++)
				((unsigned char *)&r)[i] = data[(from + i) & (data_pages * page - 1)];
			samples++;
			sum += r.period;
			if (r.h.size != sizeof(r) || r.pid != (uint32_t)getpid() ||
			    r.tid != (uint32_t)gettid() || !r.period || r.time < t0 || r.time > t1)
				bad++;
		}
		from += r.h.size;
	}
	printf("# freq: %llu events in %llu ns, %lu samples, periods adding up to %llu\n",
	       (unsigned long long)count, (unsigned long long)(t1 - t0), samples,
	       (unsigned long long)sum);
	check(samples >= (t1 - t0) / 2000000 && !bad,
	      "freq: at least half of 1000 good samples a second", samples, (t1 - t0) / 1000000);
	check(sum <= count && sum >= count / 2, "freq: the samples' periods add up to the count",
	      sum, count);
	munmap(pg, (1 + data_pages) * page);
	close(fd);
}

int main(void)
{
	const char *route = getenv("PMUCTX_PERF_ROUTE");

	printf("TAP version 13\n# perf_event_open goes to %s\n",
	       route && !strcmp(route, "kernel") ? "the kernel's perf" : "pmuctx");
	signal_path();
	poll_path();
	lost_path();
	mmap_rules();
	freq_path();
	printf("1..%d\n", n);
	return failed != 0;
}
