/* SPDX-License-Identifier: GPL-2.0 */
/* Small wrappers shared by the pmuctx selftests. */
#ifndef PMUCTX_TEST_H
#define PMUCTX_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/pmuctx.h>

/*
 * PMUCTX_STORM_SCALE=N (1 to 16, default 1) divides the volume of the
 * storms (their time bounds, round counts and idle families) by N, never
 * a minimum an assertion needs.  make check's debug lanes set 2: their
 * job is the checkers (lockdep, KASAN, KCSAN) on every path, which a
 * smaller storm still takes; volume, where races show, is the stock
 * lanes' job, at full scale.
 */
static inline unsigned int storm_scale(void)
{
	const char *s = getenv("PMUCTX_STORM_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v >= 1 && v <= 16 ? v : 1;
}

/* @n over the storm scale, but never below @floor (what an assertion needs). */
static inline long storm_scaled(long n, long floor)
{
	n /= storm_scale();
	return n < floor ? floor : n;
}

static inline int pmuctx_dev(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/pmuctx", O_RDWR | O_CLOEXEC);
	return fd;
}

static inline int pmuctx_open_attr(struct pmuctx_attr *attr, int target,
				   int group_fd, unsigned int flags)
{
	struct pmuctx_open_args args = {
		.attr = (uintptr_t)attr,
		.target = target,
		.group_fd = group_fd,
		.flags = flags,
	};

	return ioctl(pmuctx_dev(), PMUCTX_OPEN, &args);
}

/* A raw PMU event (arm64: the event number); -1 with errno on failure. */
static inline int pmuctx_open_raw(uint64_t event, uint64_t flags,
				  uint64_t period, int target)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_RAW,
		.config = event,
		.flags = flags,
		.sample_period = period,
	};

	return pmuctx_open_attr(&attr, target, -1, PMUCTX_OPEN_CLOEXEC);
}

/* A software counter; -1 with errno on failure. */
static inline int pmuctx_open_sw(uint64_t config, uint64_t flags,
				 uint64_t read_format, int target, int group_fd)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_SOFTWARE,
		.config = config,
		.flags = flags,
		.read_format = read_format,
	};

	return pmuctx_open_attr(&attr, target, group_fd, PMUCTX_OPEN_CLOEXEC);
}

/*
 * PMUCTX_IOC_SAMPLES: up to @nr of @fd's samples into @buf, @stride bytes
 * apart; @sr says how many came.  0, or -1 with errno.
 */
static inline int pmuctx_take_samples(int fd, void *buf, uint32_t stride, uint32_t nr,
				      struct pmuctx_samples_read *sr)
{
	memset(sr, 0, sizeof(*sr));
	sr->size = sizeof(*sr);
	sr->sample_size = stride;
	sr->nr = nr;
	sr->samples = (uintptr_t)buf;
	return ioctl(fd, PMUCTX_IOC_SAMPLES, sr);
}

/* PMUCTX_IOC_STATS of the context @fd's counter lives in. */
static inline int ctx_stats(int fd, struct pmuctx_ctx_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, PMUCTX_IOC_STATS, st);
}

/* A process-tree read into @ents (room for @room): the ioctl's result. */
static inline int tree_read(int fd, struct pmuctx_tree_read *tr,
			    struct pmuctx_tree_entry *ents, uint32_t room)
{
	memset(tr, 0, sizeof(*tr));
	tr->size = sizeof(*tr);
	tr->nr_entries = room;
	tr->entries = (uintptr_t)ents;
	return ioctl(fd, PMUCTX_IOC_TREE_READ, tr);
}

static inline uint64_t pmuctx_read1(int fd)
{
	uint64_t v = UINT64_MAX;

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return UINT64_MAX;
	return v;
}

/*
 * getrusage() reads the count before it copies the result out: a first
 * write to a stack page still shared copy-on-write after a fork would fault
 * after the read.  Writing the buffer first takes that fault before it.
 */
static inline long minflt_thread(void)
{
	struct rusage ru;

	memset(&ru, 0, sizeof(ru));
	__asm__ __volatile__("" : : "r"(&ru) : "memory");
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

static inline long minflt_self_and_children(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_minflt + kids.ru_minflt;
}

static inline long switches_thread(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * PMUCTX_TEST=<name> runs only that test of a file (the 6.1 harness has no
 * filter): a race that corrupts the old module's state cannot then hide or
 * fake the next test's result.
 */
#define SELECTED_OR_SKIP() do {						\
	const char *__only = getenv("PMUCTX_TEST");			\
	if (__only && strcmp(__only, _metadata->name))			\
		SKIP(return, "PMUCTX_TEST=%s", __only);			\
} while (0)

/* A number from a sysfs, cgroup or procfs file; -1 where there is none. */
static inline long read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* CLOCK_MONOTONIC in ns. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Fault in @pages fresh anonymous pages: exactly @pages minor faults. */
static inline void touch_pages(int pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int i;

	if (p == MAP_FAILED)
		abort();
	for (i = 0; i < pages; i++)
		p[i * psz] = 1;
	munmap(p, pages * psz);
}

static inline void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		abort();
}

static inline int nr_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* Thread @t on @cpu (the last CPU when there are fewer). */
static inline void pin_thread(pthread_t t, int cpu)
{
	cpu_set_t set;

	if (cpu >= nr_cpus())
		cpu = nr_cpus() - 1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(t, sizeof(set), &set);
}

/* The scheduler's own migration count of a task (CONFIG_SCHED_DEBUG). */
static inline long long sched_migrations(pid_t tid)
{
	char path[64], line[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "se.nr_migrations : %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* voluntary + nonvoluntary context switches of a task, from /proc. */
static inline long long proc_switches(pid_t tid)
{
	char path[64], line[256];
	long long v, sum = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1) {
			sum += v;
			found++;
		}
	}
	fclose(f);
	return found == 2 ? sum : -1;
}

/* Wait until @pid sleeps in the kernel function @fn (e.g. "pipe_read"). */
/*
 * Whether a task's wchan @got is kernel function @fn, or a later kernel's
 * variant of it named with a prefix (7.2's pipes sleep in anon_pipe_read).
 */
static inline bool wchan_is(const char *got, const char *fn)
{
	size_t g = strlen(got), f = strlen(fn);

	return !strcmp(got, fn) ||
	       (g > f && got[g - f - 1] == '_' && !strcmp(got + g - f, fn));
}

static inline int wait_for_wchan(pid_t pid, const char *fn)
{
	char path[64], buf[64];
	int i, fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	for (i = 0; i < 5000; i++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			if (wchan_is(buf, fn))
				return 0;
		}
		usleep(1000);
	}
	return -1;
}

static inline void write_full(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		abort();
}

static inline void read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			abort();
		done += n;
	}
}

#endif
