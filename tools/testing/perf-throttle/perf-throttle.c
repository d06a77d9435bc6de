// SPDX-License-Identifier: GPL-2.0
/*
 * perf-throttle: does a CPU-wide sampling event of perf's stay alive while
 * another event on its CPU comes and goes, under throttling?  No pmuctx:
 * plain perf_event_open(2), as root.  Written for the shared backend's
 * borrowed sampling events (kernel/perf_shared.c), which only wake folds.
 *
 * A spinner runs in user space pinned to CPU @cpu.  Event A samples its
 * cycles there (CPU-wide, exclude_kernel, period 2^20, a ring); event B
 * only counts cycles on the same CPU.  Phases of @ms milliseconds each:
 * A alone, A with B open, A after B closed (three rounds); or, with
 * @rounds, that many rounds of B opened and closed, each followed by one
 * measured phase.  Each phase prints A's samples, its
 * PERF_RECORD_THROTTLE/UNTHROTTLE records and how far its count moved.
 * Set kernel.perf_event_max_sample_rate first (500 in the case this was
 * written for: max_samples_per_tick 2 at HZ=250, so ~2 samples a tick).
 *
 * A healthy phase of 300 ms under QEMU TCG (cycles at 1 GHz): ~155
 * samples, ~76 throttles and unthrottles, count ~+160M (counting only
 * while unthrottled).  The failure this found: 0 samples, 0 throttles,
 * count +300M, i.e. A counts at full rate and never interrupts (a lost
 * overflow on the biased 64-bit cycle counter; perf reprograms it only
 * at its next schedule-in or start).  About once in 100 rounds on
 * QEMU 7.2's multi-threaded TCG.
 *
 *	perf-throttle [cpu [ms [raw-config [rounds]]]]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES	64

static long page;

static int perf_open(struct perf_event_attr *a, int cpu)
{
	return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

static uint64_t count_of(int fd)
{
	uint64_t v[3] = { 0 };

	if (read(fd, v, sizeof(v)) < 0)
		perror("read");
	return v[0];
}

struct tally {
	unsigned long samples, throttles, unthrottles, lost, other;
};

/* Drain A's ring: the records since the last drain. */
static void drain(struct perf_event_mmap_page *mp, struct tally *t)
{
	char *data = (char *)mp + page;
	uint64_t size = (uint64_t)RING_PAGES * page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size, i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(off + i) % size];
		switch (h.type) {
		case PERF_RECORD_SAMPLE: t->samples++; break;
		case PERF_RECORD_THROTTLE: t->throttles++; break;
		case PERF_RECORD_UNTHROTTLE: t->unthrottles++; break;
		case PERF_RECORD_LOST: t->lost++; break;
		default: t->other++; break;
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One phase: @ms of A, drained every 10 ms so the ring never fills. */
static void phase(const char *name, int fd, struct perf_event_mmap_page *mp, int ms)
{
	struct tally t = { 0 };
	uint64_t c0, c1;
	int i;

	drain(mp, &t);
	memset(&t, 0, sizeof(t));
	c0 = count_of(fd);
	for (i = 0; i < ms / 10; i++) {
		sleep_ms(10);
		drain(mp, &t);
	}
	c1 = count_of(fd);
	printf("%-14s samples %5lu throttle %4lu unthrottle %4lu lost %lu count +%llu\n",
	       name, t.samples, t.throttles, t.unthrottles, t.lost,
	       (unsigned long long)(c1 - c0));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int cpu = argc > 1 ? atoi(argv[1]) : 1;
	int ms = argc > 2 ? atoi(argv[2]) : 300;
	uint64_t raw = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x11;	/* CPU_CYCLES */
	struct perf_event_attr a, b;
	struct perf_event_mmap_page *mp;
	int fa, fb, round;
	pid_t spinner;

	page = sysconf(_SC_PAGESIZE);
	spinner = fork();
	if (!spinner) {
		pin(cpu);
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	pin(!cpu);
	sleep_ms(100);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_RAW;
	a.config = raw;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sample_period = 1ULL << 20;
	a.sample_type = PERF_SAMPLE_IP;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fa = perf_open(&a, cpu);
	if (fa < 0) {
		perror("perf_event_open A");
		return 1;
	}
	mp = mmap(NULL, (RING_PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fa, 0);
	if (mp == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	b = a;
	b.sample_period = 0;
	b.sample_type = 0;
	b.exclude_kernel = 0;

	if (argc > 4) {
		/* Many rounds of B opened and closed; report each after-phase. */
		int rounds = atoi(argv[4]);

		for (round = 0; round < rounds; round++) {
			fb = perf_open(&b, cpu);
			if (fb < 0) {
				perror("perf_event_open B");
				return 1;
			}
			sleep_ms(200 + round % 7);
			close(fb);
			sleep_ms(50 + round % 13);
			phase("A, B closed", fa, mp, ms);
		}
		kill(spinner, SIGKILL);
		waitpid(spinner, NULL, 0);
		return 0;
	}
	for (round = 0; round < 3; round++) {
		phase("A alone", fa, mp, ms);
		fb = perf_open(&b, cpu);
		if (fb < 0) {
			perror("perf_event_open B");
			return 1;
		}
		sleep_ms(100);
		phase("A with B", fa, mp, ms);
		close(fb);
		sleep_ms(100);
		phase("A, B closed", fa, mp, ms);
	}
	kill(spinner, SIGKILL);
	waitpid(spinner, NULL, 0);
	return 0;
}
