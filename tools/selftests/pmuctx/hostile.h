/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the hostile selftests (security_test.c, races_test.c): drop to
 * an unprivileged uid, pidfds, statistics, shared memory, the arm64 PMU's
 * EL0 registers.  Documentation/security.rst says which test checks which
 * rule.
 */
#ifndef PMUCTX_HOSTILE_H
#define PMUCTX_HOSTILE_H

#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "pmuctx_test.h"

#define NOBODY		65534

#ifndef __NR_pidfd_open
#define __NR_pidfd_open	434
#endif

#define ARM64_INST_RETIRED	0x08
#define ARM64_CPU_CYCLES	0x11
#define ARM64_SW_INCR		0x00
#define ARM64_CYCLE_IDX		31

/*
 * The events the security tests count, per architecture: x86 takes the
 * PERFEVTSEL encodings of instructions retired and core cycles.
 */
#if defined(__x86_64__)
#define PMU_INST_RETIRED	0x00c0
#define PMU_CPU_CYCLES		0x003c
#else
#define PMU_INST_RETIRED	ARM64_INST_RETIRED
#define PMU_CPU_CYCLES		ARM64_CPU_CYCLES
#endif

/* The documented default of module parameter max_counters_per_task. */
#define PMUCTX_DEFAULT_MAX_COUNTERS	1024

/*
 * Become uid/gid 65534 for good (real, effective, saved).  Changing ids
 * leaves the process undumpable; a plain user process is dumpable.
 */
static inline int become_nobody(void)
{
	if (setgroups(0, NULL))
		return -1;
	if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

static inline int sys_pidfd_open(pid_t pid)
{
	return syscall(__NR_pidfd_open, pid, 0);
}

static inline int open_sw_on(uint64_t config, uint64_t flags, int target,
			     unsigned int open_flags)
{
	struct pmuctx_attr a = {
		.size = sizeof(a),
		.type = PMUCTX_TYPE_SOFTWARE,
		.config = config,
		.flags = flags,
	};

	return pmuctx_open_attr(&a, target, -1, open_flags | PMUCTX_OPEN_CLOEXEC);
}

static inline int pmu_info(struct pmuctx_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(pmuctx_dev(), PMUCTX_INFO, info);
}

static inline bool have_hw_pmu(void)
{
	struct pmuctx_info info;

	return !pmu_info(&info) && (info.features & PMUCTX_FEAT_HARDWARE);
}

/* Hardware counters through the kernel's perf events: no self-reads. */
static inline bool hw_perf_backed(void)
{
	struct pmuctx_info info;

	return !pmu_info(&info) && (info.features & PMUCTX_FEAT_PERF_EVENTS);
}

/*
 * Fault in @pages fresh anonymous pages, one fault each: no transparent
 * huge page may map 512 of them at once.
 */
static inline void touch_small_pages(long pages)
{
	long psz = sysconf(_SC_PAGESIZE), i;
	char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	madvise(p, pages * psz, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		p[i * psz] = 1;
	munmap(p, pages * psz);
}

/*
 * A child of ours blocked in read() until *@release is written or closed
 * (the caller's user: a target it may attach to).
 */
static inline pid_t blocked_child(int *release)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (!pid) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[0]);
	*release = p[1];
	return pid;
}

/* Zeroed memory shared with every later child (fork keeps MAP_SHARED). */
static inline void *shared_area(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Value of an integer module parameter, or @dflt if it does not exist. */
static inline long pmuctx_module_param(const char *name, long dflt)
{
	char path[128];
	long v = dflt;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/pmuctx/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/* The module's use count from /proc/modules, -1 if not loaded. */
static inline int module_refcount(void)
{
	char line[256];
	int refs = -1;
	FILE *f = fopen("/proc/modules", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pmuctx %*u %d", &refs) == 1)
			break;
	fclose(f);
	return refs;
}

/*
 * The module's users hold one reference between them, dropped a second and
 * two grace periods after the last of them (kernel/users.c): poll for 0
 * for up to 10 s, and return the last reference count seen.
 */
static inline int module_refcount_settled(void)
{
	int refs = -1, i;

	for (i = 0; i < 200; i++) {
		refs = module_refcount();
		if (!refs)
			break;
		sleep_ms(50);
	}
	return refs;
}

#if defined(__aarch64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void spin_loop(unsigned long n)
{
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n" : "+r"(n) : : "cc");
}

static sigjmp_buf el0_trap;

static void el0_on_sigill(int sig)
{
	(void)sig;
	siglongjmp(el0_trap, 1);
}

#define EL0_RD(n) case n: asm volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(x)); break

/*
 * Read event counter @n (ARM64_CYCLE_IDX: the cycle counter) from EL0.
 * Returns 0 and the value, or -1 when the read traps (no EL0 access).
 */
static inline int el0_read_counter(unsigned int n, uint64_t *val)
{
	struct sigaction sa = { .sa_handler = el0_on_sigill }, old;
	volatile uint64_t v = 0;
	int ret = 0;

	sigaction(SIGILL, &sa, &old);
	if (sigsetjmp(el0_trap, 1)) {
		ret = -1;
		goto out;
	}
	{
		uint64_t x = 0;

		switch (n) {
		EL0_RD(0); EL0_RD(1); EL0_RD(2); EL0_RD(3); EL0_RD(4);
		EL0_RD(5); EL0_RD(6); EL0_RD(7); EL0_RD(8); EL0_RD(9);
		EL0_RD(10); EL0_RD(11); EL0_RD(12); EL0_RD(13); EL0_RD(14);
		EL0_RD(15); EL0_RD(16); EL0_RD(17); EL0_RD(18); EL0_RD(19);
		EL0_RD(20); EL0_RD(21); EL0_RD(22); EL0_RD(23); EL0_RD(24);
		EL0_RD(25); EL0_RD(26); EL0_RD(27); EL0_RD(28); EL0_RD(29);
		EL0_RD(30);
		case ARM64_CYCLE_IDX:
			asm volatile("mrs %0, pmccntr_el0" : "=r"(x));
			break;
		default:
			ret = -1;
		}
		v = x;
	}
out:
	sigaction(SIGILL, &old, NULL);
	*val = v;
	return ret;
}
#elif defined(__x86_64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void spin_loop(unsigned long n)
{
	asm volatile("1:	dec	%0\n"
		     "	jnz	1b\n" : "+r"(n) : : "cc");
}

static sigjmp_buf el0_trap;

static void el0_on_sigsegv(int sig)
{
	(void)sig;
	siglongjmp(el0_trap, 1);
}

/* el0_read_counter()'s name for fixed counter @k. */
#define X86_FIXED_IDX(k)	(32 + (k))

/*
 * x86: RDPMC at CPL 3 of general counter @n (ARM64_CYCLE_IDX: fixed
 * counter 1, core cycles; X86_FIXED_IDX(k): fixed counter k).  Returns 0
 * and the value, or -1 when it faults (CR4.PCE clear: #GP, SIGSEGV).
 */
static inline int el0_read_counter(unsigned int n, uint64_t *val)
{
	struct sigaction sa = { .sa_handler = el0_on_sigsegv }, old;
	/* Volatile: read after the sigsetjmp() below, which may return twice. */
	volatile unsigned int ecx = n == ARM64_CYCLE_IDX ? 1U << 30 | 1 :
				    n >= X86_FIXED_IDX(0) ? 1U << 30 | (n - X86_FIXED_IDX(0)) : n;
	volatile uint64_t v = 0;
	unsigned int lo, hi;
	int ret = 0;

	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(el0_trap, 1)) {
		ret = -1;
		goto out;
	}
	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(ecx));
	v = (uint64_t)hi << 32 | lo;
out:
	sigaction(SIGSEGV, &old, NULL);
	*val = v;
	return ret;
}
#else
static inline void spin_loop(unsigned long n)
{
	volatile unsigned long i;

	for (i = 0; i < n; i++)
		;
}

static inline int el0_read_counter(unsigned int n, uint64_t *val)
{
	(void)n;
	*val = 0;
	return -1;
}
#endif

#endif
