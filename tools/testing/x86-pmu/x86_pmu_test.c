// SPDX-License-Identifier: GPL-2.0
/*
 * x86_pmu_test: the x86_64 PMU lane's emulation (scripts/qemu/patches),
 * checked through a client we did not write: Linux's own perf driver
 * (perf_event_open, no pmuctx).  Runs as root in the VM booted by
 * scripts/vm-run --arch x86_64 --pmu --kernel-owns-pmu (-smp 1, -icount
 * shift=0).  TAP on stdout.
 *
 * The measured code is inline assembly, so its instruction count is known:
 * a window opens with the syscall that enables the counters and closes with
 * the one that disables them; user instructions in it are exactly
 * WIN_USER + 2 * n (see window()).  Documentation/testing.rst, "The x86_64
 * PMU lane", says what each check proves.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_GP 8
#define NR_FIXED 3
#define WIDTH 48

static int test_no, failures;

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* ---------- perf_event_open ---------- */

enum { U = 1, K = 2, UK = 3 };

static int perf_open(uint32_t type, uint64_t config, int where, int group,
		     uint64_t period, int pinned)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = group < 0;
	a.exclude_user = !(where & U);
	a.exclude_kernel = !(where & K);
	a.exclude_hv = 1;
	a.pinned = pinned && group < 0;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (period) {
		a.sample_period = period;
		a.sample_type = PERF_SAMPLE_IP;
		a.wakeup_events = 1000000;
	}
	return syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

#define HW(x) PERF_TYPE_HARDWARE, PERF_COUNT_HW_##x
#define RAW(x) PERF_TYPE_RAW, (x)

struct val {
	uint64_t count, enabled, running;
};

static struct val rd(int fd)
{
	struct val v = { 0, 0, 0 };

	if (read(fd, &v, sizeof(v)) != sizeof(v))
		v.count = (uint64_t)-1;
	return v;
}

/* ---------- the measured windows ---------- */

/*
 * ioctl(fd, on, flags); n times { dec; jnz }; ioctl(fd, off, flags).
 * User instructions counted, from the first user instruction after the
 * enabling syscall to the disabling syscall itself: mov rcx; 2n; mov eax,
 * mov edi, mov esi, mov edx; syscall = 2n + 6.  The labels give the loop's
 * addresses for the sampling test.
 */
#define WIN_USER 6
extern const char win_dec[], win_jnz[];

/* noinline: the labels exist once.  Inputs never share a register with
 * what the assembly writes: every register it writes is a clobber. */
static __attribute__((noinline)) void window(int fd, unsigned long on, unsigned long off,
					     unsigned long flags, unsigned long n)
{
	asm volatile("mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[on], %%rsi\n\t"
		     "mov %[fl], %%rdx\n\t"
		     "syscall\n\t"
		     "mov %[n], %%rcx\n\t"
		     ".globl win_dec\n"
		     "win_dec:\n\t"
		     "dec %%rcx\n\t"
		     ".globl win_jnz\n"
		     "win_jnz:\n\t"
		     "jnz win_dec\n\t"
		     "mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[off], %%rsi\n\t"
		     "mov %[fl], %%rdx\n\t"
		     "syscall"
		     :
		     : [n] "r"(n ? n : 1), [nr] "i"(SYS_ioctl), [fd] "r"((long)fd),
		       [on] "r"(on), [off] "r"(off), [fl] "r"(flags)
		     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory", "cc");
}

static void win_ioctl(int fd, unsigned long n)
{
	window(fd, PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP, n);
}

/* The same loop between prctl(PR_TASK_PERF_EVENTS_ENABLE/DISABLE): every
 * counter of the task at once, grouped or not. */
static void win_prctl(unsigned long n)
{
	asm volatile("mov %[nr], %%eax\n\t"
		     "mov %[on], %%edi\n\t"
		     "syscall\n\t"
		     "mov %[n], %%rcx\n\t"
		     "1: dec %%rcx\n\t"
		     "jnz 1b\n\t"
		     "mov %[nr], %%eax\n\t"
		     "mov %[off], %%edi\n\t"
		     "syscall"
		     :
		     : [n] "r"(n), [nr] "i"(SYS_prctl), [on] "i"(PR_TASK_PERF_EVENTS_ENABLE),
		       [off] "i"(PR_TASK_PERF_EVENTS_DISABLE)
		     : "rax", "rdi", "rcx", "r11", "memory", "cc");
}
#define PRCTL_USER 4	/* mov rcx; 2n; mov eax, mov edi; syscall */

/* k getppid system calls in the window: kernel work linear in k. */
static void win_syscalls(int fd, unsigned long k)
{
	asm volatile("mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[on], %%esi\n\t"
		     "mov %[fl], %%edx\n\t"
		     "syscall\n\t"
		     "mov %[k], %%rbx\n\t"
		     "test %%rbx, %%rbx\n\t"
		     "jz 2f\n"
		     "1: mov %[pp], %%eax\n\t"
		     "syscall\n\t"
		     "dec %%rbx\n\t"
		     "jnz 1b\n"
		     "2: mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[off], %%esi\n\t"
		     "mov %[fl], %%edx\n\t"
		     "syscall"
		     :
		     : [k] "r"(k), [pp] "i"(SYS_getppid), [nr] "i"(SYS_ioctl), [fd] "r"((long)fd),
		       [on] "i"(PERF_EVENT_IOC_ENABLE), [off] "i"(PERF_EVENT_IOC_DISABLE),
		       [fl] "i"(PERF_IOC_FLAG_GROUP)
		     : "rax", "rbx", "rdi", "rsi", "rdx", "rcx", "r11", "memory", "cc");
}
/* mov rbx, test, jz; k * (mov, syscall, dec, jnz); 4 movs, syscall */
#define SYSCALLS_USER(k) (3 + 4 * (k) + 5)

/* rep movsb of k bytes in the window: 3 movs, the rep movsb, 4 movs, syscall */
static unsigned long win_rep(int fd, unsigned long k)
{
	static char src[4096], dst[4096];
	struct val { uint64_t c, e, r; } v;

	asm volatile("mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[on], %%esi\n\t"
		     "mov %[fl], %%edx\n\t"
		     "syscall\n\t"
		     "mov %[k], %%rcx\n\t"
		     "mov %[s], %%rsi\n\t"
		     "mov %[d], %%rdi\n\t"
		     "rep movsb\n\t"
		     "mov %[nr], %%eax\n\t"
		     "mov %[fd], %%rdi\n\t"
		     "mov %[off], %%esi\n\t"
		     "mov %[fl], %%edx\n\t"
		     "syscall"
		     :
		     : [k] "r"(k), [s] "r"(src), [d] "r"(dst), [nr] "i"(SYS_ioctl),
		       [fd] "r"((long)fd), [on] "i"(PERF_EVENT_IOC_ENABLE),
		       [off] "i"(PERF_EVENT_IOC_DISABLE), [fl] "i"(PERF_IOC_FLAG_GROUP)
		     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "memory", "cc");
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	return v.c - 8;	/* what the rep movsb counted */
}

/* ---------- signals: an instruction that must fault ---------- */

static sigjmp_buf fault_jb;
static volatile sig_atomic_t faulted;

static void on_segv(int sig)
{
	(void)sig;
	faulted = 1;
	siglongjmp(fault_jb, 1);
}

static uint64_t rdpmc(uint32_t idx)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx));
	return (uint64_t)hi << 32 | lo;
}

/* 1 if rdpmc(idx) faults (SIGSEGV from #GP), 0 if it reads. */
static int rdpmc_faults(uint32_t idx)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, &old);
	faulted = 0;
	if (!sigsetjmp(fault_jb, 1))
		(void)rdpmc(idx);
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

/* ---------- the tests ---------- */

static void test_boot(void)
{
	static char log[1 << 20];
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *p;

	if (n <= 0 || n > (int)sizeof(log))
		n = sizeof(log);
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, n);
	log[n > 0 ? n : 0] = 0;
	p = strstr(log, "Performance Events:");
	ok(p && strstr(p, "generic architected perfmon"),
	   "dmesg: perf's generic architected perfmon path bound");
	ok(strstr(log, "full-width counters") != NULL,
	   "dmesg: full-width counter writes (PERF_CAPABILITIES.FW_WRITE)");
	ok(strstr(log, "version:                2") && strstr(log, "bit width:              48") &&
	   strstr(log, "generic registers:      8") &&
	   strstr(log, "fixed-purpose events:   3"),
	   "dmesg: version 2, 48-bit, 8 general and 3 fixed counters");
	ok(access("/sys/bus/event_source/devices/cpu", F_OK) == 0,
	   "/sys/bus/event_source/devices/cpu exists");
	p = strstr(log, "Performance Events:");
	if (p) {
		char *e = strchr(p, '\n');

		if (e)
			*e = 0;
		diag("%s", p);
	}
}

/* user, kernel, both: exact user count, user + kernel = all */
static void test_exact(void)
{
	static const unsigned long ns[] = { 1, 10, 1000, 123457 };
	unsigned i;
	int good_u = 1, good_sum = 1, good_k = 1;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int g = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
		int k = perf_open(HW(INSTRUCTIONS), K, g, 0, 0);
		int a = perf_open(HW(INSTRUCTIONS), UK, g, 0, 0);
		struct val vu, vk, va;

		if (g < 0 || k < 0 || a < 0) {
			ok(0, "open instructions:u, :k, :uk (%s)", strerror(errno));
			return;
		}
		win_ioctl(g, ns[i]);
		vu = rd(g), vk = rd(k), va = rd(a);
		if (vu.count != WIN_USER + 2 * ns[i]) {
			good_u = 0;
			diag("n=%lu: user %llu, want %lu", ns[i], (unsigned long long)vu.count,
			     WIN_USER + 2 * ns[i]);
		}
		if (vu.count + vk.count != va.count) {
			good_sum = 0;
			diag("n=%lu: user %llu + kernel %llu != all %llu", ns[i],
			     (unsigned long long)vu.count, (unsigned long long)vk.count,
			     (unsigned long long)va.count);
		}
		if (vk.count == 0 || vk.count > 100000)
			good_k = 0;
		close(a), close(k), close(g);
	}
	ok(good_u, "instructions:u of the loop exactly 2n + %d for n = 1, 10, 1000, 123457", WIN_USER);
	ok(good_sum, "instructions: user + kernel == user+kernel counter, same window");
	ok(good_k, "instructions:k counts the kernel side of the enable/disable ioctls");
}

/* kernel count of k system calls: equal across runs, linear in k */
static void test_kernel_linear(void)
{
	uint64_t kc[3], uc[3];
	unsigned long ks[3] = { 0, 50, 100 };
	int i, r, stable = 1, uexact = 1;

	for (i = 0; i < 3; i++) {
		uint64_t seen[5];
		int g = perf_open(HW(INSTRUCTIONS), K, -1, 0, 0);
		int u = perf_open(HW(INSTRUCTIONS), U, g, 0, 0);
		int agree = 0, j;

		for (r = 0; r < 5; r++) {
			ioctl(g, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
			win_syscalls(g, ks[i]);
			seen[r] = rd(g).count;
			uc[i] = rd(u).count;
			if (uc[i] != (uint64_t)SYSCALLS_USER(ks[i]))
				uexact = 0;
		}
		/* A timer interrupt may land in one run: the value most runs agree on. */
		kc[i] = seen[0];
		for (r = 0; r < 5; r++) {
			int same = 0;

			for (j = 0; j < 5; j++)
				same += seen[j] == seen[r];
			if (same > agree)
				agree = same, kc[i] = seen[r];
		}
		if (agree < 3) {
			stable = 0;
			diag("k=%lu: kernel counts %llu %llu %llu %llu %llu", ks[i],
			     (unsigned long long)seen[0], (unsigned long long)seen[1],
			     (unsigned long long)seen[2], (unsigned long long)seen[3],
			     (unsigned long long)seen[4]);
		}
		close(u), close(g);
	}
	ok(uexact, "user instructions around k getppid calls exactly 4k + 8 (k = 0, 50, 100)");
	ok(stable, "instructions:k of k getppid calls: the same count in at least 3 of 5 runs");
	diag("kernel instructions: k=0 %llu, k=50 %llu, k=100 %llu (%.2f per getppid)",
	     (unsigned long long)kc[0], (unsigned long long)kc[1], (unsigned long long)kc[2],
	     (kc[2] - kc[0]) / 100.0);
	ok(kc[1] > kc[0] && kc[2] - kc[1] == kc[1] - kc[0] && (kc[2] - kc[1]) % 50 == 0,
	   "instructions:k linear in k: K(100) - K(50) == K(50) - K(0), a whole number per call");
}

/* A documented difference from hardware: TCG runs a rep string
 * instruction's iterations one by one, and icount counts each. */
static void test_rep(void)
{
	int fd = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	unsigned long r0 = win_rep(fd, 0), r1 = win_rep(fd, 1), r100 = win_rep(fd, 100),
		      r4096 = win_rep(fd, 4096);

	/* k iterations, then the check that finds rcx 0 (TCG's shortcut for
	 * that check is off under icount). */
	ok(r0 == 1 && r1 == 2 && r100 == 101 && r4096 == 4097,
	   "rep movsb of 0, 1, 100, 4096 bytes counts %lu, %lu, %lu, %lu instructions: k + 1 (hardware: 1; documented)",
	   r0, r1, r100, r4096);
	close(fd);
}

/* cycles and ref-cycles: one per instruction at -icount shift=0 */
static void test_cycles(void)
{
	unsigned long n = 100000;
	int g = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	int c = perf_open(HW(CPU_CYCLES), U, g, 0, 0);
	int r = perf_open(HW(REF_CPU_CYCLES), U, g, 0, 0);
	int gc = perf_open(RAW(0x013c), U, g, 0, 0);	/* ref cycles on a general counter */
	int ga = perf_open(HW(INSTRUCTIONS), UK, g, 0, 0);
	int ca = perf_open(HW(CPU_CYCLES), UK, g, 0, 0);
	struct val vi, vc, vr, vg, via, vca;

	if (g < 0 || c < 0 || r < 0 || gc < 0 || ga < 0 || ca < 0) {
		ok(0, "open cycles, ref-cycles, raw 0x013c (%s)", strerror(errno));
		return;
	}
	win_ioctl(g, n);
	vi = rd(g), vc = rd(c), vr = rd(r), vg = rd(gc), via = rd(ga), vca = rd(ca);
	ok(vc.count == vi.count && vr.count == vi.count && vg.count == vi.count,
	   "cycles:u == ref-cycles:u == raw 0x013c:u == instructions:u (%llu; %llu %llu %llu)",
	   (unsigned long long)vi.count, (unsigned long long)vc.count,
	   (unsigned long long)vr.count, (unsigned long long)vg.count);
	ok(vca.count == via.count, "cycles == instructions, user and kernel (%llu, %llu)",
	   (unsigned long long)vca.count, (unsigned long long)via.count);
	close(ca), close(ga), close(gc), close(r), close(c), close(g);
}

/* CPU 0's busy time so far, in USER_HZ ticks (/proc/stat's cpu0 line). */
static long long cpu0_busy_ticks(void)
{
	long long user, nice, sys, idle, iowait, irq, softirq;
	char line[256];
	long long busy = -1;
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu0 %lld %lld %lld %lld %lld %lld %lld", &user, &nice, &sys,
			   &idle, &iowait, &irq, &softirq) == 7) {
			busy = user + nice + sys + irq + softirq;
			break;
		}
	fclose(f);
	return busy;
}

/*
 * Wait (at most 10 guest seconds, which under -icount are instructions,
 * not the host's time) until 100 ms of sleep leave CPU 0 idle: a kernel
 * still at its boot's own work (6.12 runs its crypto self-tests in a
 * kernel thread, cryptomgr_test, some 2 guest seconds after /init) keeps
 * the CPU out of HLT, and the idle check would count that work.
 */
static void settle(void)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	long long b0, b1;
	int i;

	for (i = 0; i < 100; i++) {
		b0 = cpu0_busy_ticks();
		nanosleep(&ts, NULL);
		b1 = cpu0_busy_ticks();
		if (b0 >= 0 && b1 == b0)
			break;
	}
	diag("CPU 0 quiet after %d.%d s of waiting%s", i / 10, i % 10,
	     i == 100 ? " (not quiet: the idle check counts its work)" : "");
}

/* Busy, cycles follow the guest clock; asleep (HLT), nothing counts. */
static void test_idle(void)
{
	struct perf_event_attr a;
	struct timespec t0, t1, ts = { 0, 200 * 1000 * 1000 };
	int fd, busy_ok;
	uint64_t c0, c1, c2;
	double ns;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	settle();
	fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, 0);	/* all of CPU 0 */
	if (fd < 0) {
		ok(0, "open CPU-wide cycles (%s)", strerror(errno));
		return;
	}
	c0 = rd(fd).count;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c1 = rd(fd).count;
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	ok(c1 - c0 < ns / 20, "CPU 0 sleeping 200 ms (HLT): %llu cycles in %.0f ns (unhalted only)",
	   (unsigned long long)(c1 - c0), ns);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	window(-1, 0, 0, 0, 5000000);	/* bad fd: two failing ioctls around the loop */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c2 = rd(fd).count;
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	busy_ok = (c2 - c1) > ns * 0.9 && (c2 - c1) < ns * 1.1 + 200000;
	ok(busy_ok, "CPU 0 busy: %llu cycles in %.0f guest ns (1 GHz within 10%%)",
	   (unsigned long long)(c2 - c1), ns);
	close(fd);
}

/* grouped and separate counters agree (prctl enables every counter at once) */
static void test_grouped_separate(void)
{
	unsigned long n = 5000;
	int g = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	int g2 = perf_open(HW(CPU_CYCLES), U, g, 0, 0);
	int s1 = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	int s2 = perf_open(HW(CPU_CYCLES), U, -1, 0, 0);
	int s3 = perf_open(RAW(0x00c0), U, -1, 0, 0);
	uint64_t want = PRCTL_USER + 2 * n;
	struct val v[5];

	if (g < 0 || g2 < 0 || s1 < 0 || s2 < 0 || s3 < 0) {
		ok(0, "open grouped and separate counters (%s)", strerror(errno));
		return;
	}
	win_prctl(n);
	v[0] = rd(g), v[1] = rd(g2), v[2] = rd(s1), v[3] = rd(s2), v[4] = rd(s3);
	ok(v[0].count == want && v[1].count == want && v[2].count == want &&
	   v[3].count == want && v[4].count == want,
	   "group {instructions, cycles} and separate instructions, cycles, raw 0xc0 all read %llu (%llu %llu %llu %llu %llu)",
	   (unsigned long long)want, (unsigned long long)v[0].count, (unsigned long long)v[1].count,
	   (unsigned long long)v[2].count, (unsigned long long)v[3].count,
	   (unsigned long long)v[4].count);
	close(s3), close(s2), close(s1), close(g2), close(g);
}

/* PERF_EVENT_IOC_ENABLE / DISABLE / RESET */
static void test_ioctls(void)
{
	int fd = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	uint64_t a, b, c;

	win_ioctl(fd, 1000);
	a = rd(fd).count;
	window(fd, 0, 0, 0, 1000);		/* ioctl 0: no-op requests, not counted */
	b = rd(fd).count;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	c = rd(fd).count;
	win_ioctl(fd, 500);
	ok(a == WIN_USER + 2000 && b == a, "disabled: nothing counted (%llu, %llu)",
	   (unsigned long long)a, (unsigned long long)b);
	ok(c == 0 && rd(fd).count == WIN_USER + 1000,
	   "reset reads 0, enabled again counts from 0 (%llu)", (unsigned long long)rd(fd).count);
	close(fd);
}

/* all 8 general and 3 fixed counters at once; a 12th does not fit */
static void test_all_counters(void)
{
	unsigned long n = 20000;
	uint64_t want = WIN_USER + 2 * n;
	int fds[12], i, good = 1, gp = 0, fixed = 0;
	struct perf_event_mmap_page *pg[12];

	fds[0] = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
	for (i = 1; i < 9; i++)
		fds[i] = perf_open(PERF_TYPE_RAW, i < 5 ? 0x00c0 : 0x003c, U, fds[0], 0, 0);
	fds[9] = perf_open(HW(CPU_CYCLES), U, fds[0], 0, 0);
	fds[10] = perf_open(HW(REF_CPU_CYCLES), U, fds[0], 0, 0);
	for (i = 0; i < 11; i++) {
		if (fds[i] < 0) {
			ok(0, "open 11 counters in one group: #%d: %s", i, strerror(errno));
			return;
		}
		pg[i] = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fds[i], 0);
	}
	fds[11] = perf_open(RAW(0x00c0), U, fds[0], 0, 0);
	ok(fds[11] < 0 && errno == EINVAL, "a 12th counter in the group: EINVAL (8 + 3 counters)");
	if (fds[11] >= 0)
		close(fds[11]);
	/* Enable, look at where each counter sits (mmap page index), disable. */
	ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	for (i = 0; i < 11; i++) {
		uint32_t idx = pg[i] != MAP_FAILED ? pg[i]->index : 0;

		if (idx && ((idx - 1) & (1U << 30)))
			fixed |= 1 << ((idx - 1) & 0xff);
		else if (idx)
			gp |= 1 << (idx - 1);
	}
	ioctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ioctl(fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ok(gp == 0xff && fixed == 7, "the group sits on general counters 0-7 (%#x) and fixed 0-2 (%#x)",
	   gp, fixed);
	win_ioctl(fds[0], n);
	for (i = 0; i < 11; i++) {
		struct val v = rd(fds[i]);

		if (v.count != want || v.running != v.enabled) {
			good = 0;
			diag("counter %d: %llu (running %llu of %llu)", i, (unsigned long long)v.count,
			     (unsigned long long)v.running, (unsigned long long)v.enabled);
		}
	}
	ok(good, "11 counters at once (instructions, cycles, ref-cycles) all read exactly %llu",
	   (unsigned long long)want);
	for (i = 10; i >= 0; i--) {
		if (pg[i] != MAP_FAILED)
			munmap(pg[i], getpagesize());
		close(fds[i]);
	}
}

/* more events than counters: perf's rotation, scaled counts */
static void test_multiplex(void)
{
	enum { N = 16 };
	unsigned long n = 25 * 1000 * 1000;
	uint64_t want = PRCTL_USER + 2 * n;
	int fds[N], i, rotated = 0, ran = 1, close_enough = 1, under = 1;

	for (i = 0; i < N; i++) {
		fds[i] = perf_open(PERF_TYPE_HARDWARE,
				   i & 1 ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_HW_INSTRUCTIONS,
				   U, -1, 0, 0);
		if (fds[i] < 0) {
			ok(0, "open %d counters: %s", N, strerror(errno));
			return;
		}
	}
	win_prctl(n);
	for (i = 0; i < N; i++) {
		struct val v = rd(fds[i]);
		double scaled = v.running ? (double)v.count * v.enabled / v.running : 0;

		rotated += v.running < v.enabled;
		ran &= v.running > 0;
		under &= v.count <= want;
		if (scaled < want * 0.85 || scaled > want * 1.15)
			close_enough = 0;
		if (i < 3 || scaled < want * 0.85 || scaled > want * 1.15)
			diag("counter %d: %llu x %llu / %llu = %.0f (exact %llu)", i,
			     (unsigned long long)v.count, (unsigned long long)v.enabled,
			     (unsigned long long)v.running, scaled, (unsigned long long)want);
		close(fds[i]);
	}
	ok(rotated > 0 && ran, "16 counters on 11: %d took turns, all ran", rotated);
	ok(under, "no count above the exact %llu", (unsigned long long)want);
	ok(close_enough, "scaled counts (count x enabled / running) within 15%% of the exact count");
}

/* sampling: floor(count / N) samples, each IP exactly the next instruction */
static int sample_run(uint64_t config, int raw_sibling, unsigned long n, uint64_t period,
		      uint64_t *nsamples, uint64_t *count, int *ip_ok)
{
	size_t pages = 1 + 256, len = pages * getpagesize();
	int lead, fd, good = 1;
	struct perf_event_mmap_page *pg;
	uint64_t head, off, samples = 0;
	char *data;

	if (raw_sibling) {
		/* A non-sampling leader takes fixed counter 0: the sampler goes on a general one. */
		lead = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);
		fd = perf_open(PERF_TYPE_RAW, config, U, lead, period, 0);
	} else {
		lead = fd = perf_open(PERF_TYPE_HARDWARE, config, U, -1, period, 0);
	}
	if (lead < 0 || fd < 0)
		return -1;
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		return -1;
	win_ioctl(lead, n);
	*count = rd(fd).count;
	head = pg->data_head;
	__sync_synchronize();
	data = (char *)pg + getpagesize();
	for (off = pg->data_tail; off < head;) {
		struct perf_event_header *h = (void *)(data + (off % (len - getpagesize())));

		if (h->type == PERF_RECORD_SAMPLE) {
			uint64_t ip = *(uint64_t *)(h + 1);
			/* the p-th instruction overflowed; the next one is 1 + p */
			uint64_t p = (samples + 1) * period + 1;
			uintptr_t want = p == 1 ? 0 : p % 2 == 0 ? (uintptr_t)win_dec : (uintptr_t)win_jnz;

			if (p <= 2 * n + 1 && ip != want) {
				if (good)
					diag("sample %llu: ip %#llx, want %#lx (period %llu)",
					     (unsigned long long)samples, (unsigned long long)ip,
					     (unsigned long)want, (unsigned long long)period);
				good = 0;
			}
			samples++;
		} else if (h->type == PERF_RECORD_LOST || h->type == PERF_RECORD_THROTTLE) {
			good = 0;
			diag("record type %u (lost or throttled)", h->type);
		}
		off += h->size;
	}
	*nsamples = samples;
	*ip_ok = good;
	munmap(pg, len);
	close(fd);
	if (lead != fd)
		close(lead);
	return 0;
}

static void test_sampling(void)
{
	static const struct {
		uint64_t config;
		int raw;
		unsigned long n;
		uint64_t period;
	} runs[] = {
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, 2000, 2 },	/* perf's smallest period */
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, 2000, 3 },
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, 100000, 997 },
		{ PERF_COUNT_HW_INSTRUCTIONS, 0, 3000000, 1000003 },
		{ 0x00c0, 1, 50000, 7 },			/* general counter */
		{ 0x00c0, 1, 1000000, 65536 },
		{ PERF_COUNT_HW_CPU_CYCLES, 0, 50000, 101 },	/* fixed counter 1 */
		{ PERF_COUNT_HW_REF_CPU_CYCLES, 0, 50000, 4096 },	/* fixed counter 2 */
	};
	unsigned i;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		uint64_t ns = 0, count = 0, want;
		int ip_ok = 0;

		if (sample_run(runs[i].config, runs[i].raw, runs[i].n, runs[i].period,
			       &ns, &count, &ip_ok) < 0) {
			ok(0, "sampling %#llx period %llu: open/mmap: %s",
			   (unsigned long long)runs[i].config, (unsigned long long)runs[i].period,
			   strerror(errno));
			continue;
		}
		want = (WIN_USER + 2 * runs[i].n) / runs[i].period;
		ok(count == WIN_USER + 2 * runs[i].n && ns == want && ip_ok,
		   "%s %#llx, period %llu: %llu samples of %llu events (want %llu), each IP the instruction after the overflow",
		   runs[i].raw ? "general counter, raw" : "event", (unsigned long long)runs[i].config,
		   (unsigned long long)runs[i].period, (unsigned long long)ns,
		   (unsigned long long)count, (unsigned long long)want);
	}
}

/* rdpmc self-read through the mmap page; *step: two rdpmc 3 instructions apart */
static int mmap_read(struct perf_event_mmap_page *pc, uint64_t *v, uint64_t *step)
{
	uint32_t seq, idx, lo1, hi1, lo2, hi2;
	uint64_t pmc, pmc2;
	int64_t off;

	do {
		seq = pc->lock;
		__sync_synchronize();
		idx = pc->index;
		off = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -1;
		asm volatile("rdpmc\n\t"
			     "mov %%eax, %0\n\t"
			     "mov %%edx, %1\n\t"
			     "rdpmc"
			     : "=&r"(lo1), "=&r"(hi1), "=a"(lo2), "=d"(hi2)
			     : "c"(idx - 1)
			     : "memory");
		__sync_synchronize();
	} while (pc->lock != seq);
	pmc = (uint64_t)hi1 << 32 | lo1;
	pmc2 = (uint64_t)hi2 << 32 | lo2;
	*step = (pmc2 - pmc) & ((1ULL << WIDTH) - 1);
	pmc <<= 64 - pc->pmc_width;
	pmc = (int64_t)pmc >> (64 - pc->pmc_width);
	*v = off + pmc;
	return 0;
}

static void test_rdpmc(void)
{
	int fds[2] = { perf_open(HW(INSTRUCTIONS), U, -1, 0, 1),
		       perf_open(RAW(0x00c0), U, -1, 0, 1) };
	struct perf_event_mmap_page *pc[2];
	int i;

	for (i = 0; i < 2; i++) {
		pc[i] = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fds[i], 0);
		if (fds[i] < 0 || pc[i] == MAP_FAILED) {
			ok(0, "rdpmc: open/mmap: %s", strerror(errno));
			return;
		}
	}
	/* Both on at once: the raw 0xc0 one cannot have fixed counter 0. */
	ioctl(fds[0], PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fds[1], PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 2; i++) {
		uint64_t self = 0, diff = 0, r;
		int rc;

		window(-1, 0, 0, 0, 10000);
		rc = mmap_read(pc[i], &self, &diff);
		r = rd(fds[i]).count;
		ok(rc == 0 && pc[i]->cap_user_rdpmc && r > self && r - self < 400 && diff == 3,
		   "rdpmc self-read of %s (index %#x): %llu, read() %llu (+%llu for the read's own instructions); rdpmc; mov; mov; rdpmc differ by %llu",
		   i ? "a general counter" : "fixed counter 0", pc[i]->index - 1,
		   (unsigned long long)self, (unsigned long long)r,
		   (unsigned long long)(r - self), (unsigned long long)diff);
	}
	ok(pc[0]->index - 1 == 1U << 30 && pc[1]->index - 1 < NR_GP,
	   "perf reads fixed counter 0 with index 1<<30, the raw event on a general counter (%#x, %#x)",
	   pc[0]->index - 1, pc[1]->index - 1);
	ok(rdpmc_faults(NR_GP) && rdpmc_faults(1U << 30 | NR_FIXED) && rdpmc_faults(1U << 29) &&
	   !rdpmc_faults(NR_GP - 1) && !rdpmc_faults(1U << 30 | (NR_FIXED - 1)),
	   "rdpmc with CR4.PCE set: counters 8 and fixed 3 and reserved index bits #GP; 7 and fixed 2 read");
	for (i = 0; i < 2; i++) {
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
		munmap(pc[i], getpagesize());
		close(fds[i]);
	}
}

/* CR4.PCE clear: rdpmc faults at CPL 3 */
static void test_pce(void)
{
	int rdpmc_attr = open("/sys/bus/event_source/devices/cpu/rdpmc", O_RDWR);
	pid_t pid;
	int st, fd;
	struct perf_event_mmap_page *pc;

	/* A child with no perf mapping: Linux leaves CR4.PCE clear for it. */
	pid = fork();
	if (pid == 0)
		_exit(rdpmc_faults(0) ? 0 : 1);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "rdpmc in a task with no perf mapping (CR4.PCE clear): #GP");

	if (rdpmc_attr < 0 || write(rdpmc_attr, "0", 1) != 1) {
		ok(0, "write 0 to /sys/bus/event_source/devices/cpu/rdpmc: %s", strerror(errno));
		return;
	}
	fd = perf_open(HW(INSTRUCTIONS), U, -1, 0, 1);
	pc = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ok(pc != MAP_FAILED && !pc->cap_user_rdpmc && rdpmc_faults(0) && rdpmc_faults(1U << 30),
	   "cpu/rdpmc = 0: cap_user_rdpmc 0, rdpmc #GP at CPL 3 although the task maps a counter");
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(pc, getpagesize());
	close(fd);
	if (pwrite(rdpmc_attr, "1", 1, 0) != 1)
		diag("cannot restore cpu/rdpmc");
	close(rdpmc_attr);
}

/* ---------- MSRs through /dev/cpu/0/msr ---------- */

static int msr_fd = -1;

static int wrmsr(uint32_t msr, uint64_t v)
{
	return pwrite(msr_fd, &v, 8, msr) == 8 ? 0 : -errno;
}

static int rdmsr(uint32_t msr, uint64_t *v)
{
	return pread(msr_fd, v, 8, msr) == 8 ? 0 : -errno;
}

#define PMC0 0xc1
#define A_PMC0 0x4c1
#define EVTSEL0 0x186
#define FIXED_CTR0 0x309
#define FIXED_CTRL 0x38d
#define GSTATUS 0x38e
#define GCTRL 0x38f
#define OVF_CTRL 0x390
#define PERF_CAP 0x345

static void msr_reset(void)
{
	int i;

	wrmsr(GCTRL, 0);
	wrmsr(FIXED_CTRL, 0);
	for (i = 0; i < NR_GP; i++) {
		wrmsr(EVTSEL0 + i, 0);
		wrmsr(A_PMC0 + i, 0);
	}
	for (i = 0; i < NR_FIXED; i++)
		wrmsr(FIXED_CTR0 + i, 0);
	wrmsr(OVF_CTRL, 0xc0000007000000ffULL);
}

static void test_msrs(void)
{
	static const struct {
		uint32_t msr;
		uint64_t v;
		const char *what;
	} gp[] = {
		{ EVTSEL0, 1ULL << 32, "PERFEVTSEL0 bit 32" },
		{ EVTSEL0, 1ULL << 63, "PERFEVTSEL0 bit 63" },
		{ EVTSEL0, 0xc0 | 1ULL << 18, "PERFEVTSEL0 EDGE" },
		{ EVTSEL0, 0xc0 | 1ULL << 19, "PERFEVTSEL0 PC" },
		{ EVTSEL0, 0xc0 | 1ULL << 21, "PERFEVTSEL0 ANY" },
		{ EVTSEL0, 0xc0 | 1ULL << 23, "PERFEVTSEL0 INV" },
		{ EVTSEL0 + 7, 0xc0 | 1ULL << 24, "PERFEVTSEL7 CMASK" },
		{ FIXED_CTRL, 1ULL << 2, "FIXED_CTR_CTRL AnyThread" },
		{ FIXED_CTRL, 1ULL << 12, "FIXED_CTR_CTRL bit 12" },
		{ GCTRL, 1ULL << NR_GP, "GLOBAL_CTRL bit 8 (no counter 8)" },
		{ GCTRL, 1ULL << 35, "GLOBAL_CTRL bit 35 (no fixed 3)" },
		{ OVF_CTRL, 1ULL << 40, "GLOBAL_OVF_CTRL bit 40" },
		{ GSTATUS, 0, "GLOBAL_STATUS (read-only)" },
		{ PERF_CAP, 0, "PERF_CAPABILITIES (read-only)" },
		{ A_PMC0, 1ULL << 48, "IA32_A_PMC0 bit 48" },
		{ FIXED_CTR0 + 2, 1ULL << 50, "FIXED_CTR2 bit 50" },
	};
	unsigned i;
	int good = 1;
	uint64_t v = 0, v2 = 0, cap = 0;

	msr_fd = open("/dev/cpu/0/msr", O_RDWR);
	if (msr_fd < 0) {
		ok(0, "open /dev/cpu/0/msr: %s (msr.ko loaded?)", strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(gp) / sizeof(gp[0]); i++) {
		int rc = wrmsr(gp[i].msr, gp[i].v);

		if (rc != -EIO) {
			good = 0;
			diag("%s: write returned %d, want -EIO", gp[i].what, rc);
		}
	}
	ok(good, "%u reserved-bit and read-only MSR writes #GP (EIO from /dev/cpu/0/msr)",
	   (unsigned)(sizeof(gp) / sizeof(gp[0])));
	good = rdmsr(PERF_CAP, &cap) == 0 && cap == 1ULL << 13;
	ok(good, "IA32_PERF_CAPABILITIES reads FW_WRITE only (%#llx)", (unsigned long long)cap);
	good = wrmsr(PMC0, 0x80000000ULL) == 0 && rdmsr(PMC0, &v) == 0 && v == 0xffff80000000ULL &&
	       wrmsr(PMC0 + 3, 0xffffffff7fffffffULL) == 0 && rdmsr(A_PMC0 + 3, &v2) == 0 &&
	       v2 == 0x7fffffffULL;
	ok(good, "legacy IA32_PMCx writes: bits 31:0 sign-extended to 48 (%#llx, %#llx)",
	   (unsigned long long)v, (unsigned long long)v2);
	good = wrmsr(A_PMC0 + 7, 0xffffffffffffULL) == 0 && rdmsr(PMC0 + 7, &v) == 0 &&
	       v == 0xffffffffffffULL && wrmsr(EVTSEL0 + 7, 0x1300c0) == 0 &&
	       rdmsr(EVTSEL0 + 7, &v2) == 0 && v2 == 0x1300c0;
	ok(good, "full-width A_PMC7 write of 2^48 - 1 reads back (%#llx); PERFEVTSEL7 INT|OS|USR|0xc0 too (%#llx)",
	   (unsigned long long)v, (unsigned long long)v2);
	/* Overflow without perf: counter 0 at 2^48 - 10, enabled, no INT. */
	msr_reset();
	wrmsr(A_PMC0, (1ULL << 48) - 10);
	wrmsr(EVTSEL0, 0x4300c0 & ~(1ULL << 20));
	wrmsr(GCTRL, 1);
	window(-1, 0, 0, 0, 100);
	wrmsr(GCTRL, 0);
	rdmsr(GSTATUS, &v);
	rdmsr(A_PMC0, &v2);
	ok((v & 1) && v2 > 0 && v2 < 100000,
	   "a counter past 2^48 wraps to a small value (%llu) and sets GLOBAL_STATUS bit 0 (%#llx)",
	   (unsigned long long)v2, (unsigned long long)v);
	wrmsr(OVF_CTRL, 1);
	rdmsr(GSTATUS, &v);
	ok(!(v & 1), "GLOBAL_OVF_CTRL clears the status bit (%#llx)", (unsigned long long)v);
	msr_reset();
}

/* A root program writing whatever it likes into the PMU MSRs. */
static void test_hostile(void)
{
	static const uint32_t ranges[][2] = {
		{ PMC0, NR_GP + 1 }, { EVTSEL0, NR_GP + 1 }, { A_PMC0, NR_GP + 1 },
		{ FIXED_CTR0, NR_FIXED + 1 }, { FIXED_CTRL, 5 }, { PERF_CAP, 1 },
	};
	uint64_t x = 0x9e3779b97f4a7c15ULL, writes = 0, gps = 0;
	int i, after_ok;

	if (msr_fd < 0) {
		ok(0, "hostile: no /dev/cpu/0/msr");
		return;
	}
	for (i = 0; i < 30000; i++) {
		unsigned r;
		uint32_t msr;
		uint64_t v;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		r = x % 6;
		msr = ranges[r][0] + (x >> 8) % ranges[r][1];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v = x;
		switch ((x >> 60) & 3) {
		case 0: v &= 0xffffffffULL; break;
		case 1: v &= 0xffffffffffffULL; break;
		case 2: v &= 0x7000000ffULL | 0x4300ffULL; break;
		}
		/*
		 * No PMI enables: the guest kernel's NMI handler (perf's, not
		 * under test here) would be flooded by overflows of counters
		 * it does not own.
		 */
		if (msr >= EVTSEL0 && msr < EVTSEL0 + NR_GP + 1)
			v &= ~(1ULL << 20);
		if (msr == FIXED_CTRL)
			v &= ~0x888ULL;
		writes++;
		if (wrmsr(msr, v) < 0)
			gps++;
		if (i % 7 == 0)
			(void)rdmsr(msr, &v);
		if (i % 1000 == 0)
			window(-1, 0, 0, 0, 1000 + (x & 0xfff));
		if (i % 5000 == 0)
			(void)rdpmc_faults((uint32_t)x);
	}
	msr_reset();
	{
		int fd = perf_open(HW(INSTRUCTIONS), U, -1, 0, 0);

		win_ioctl(fd, 777);
		after_ok = rd(fd).count == WIN_USER + 2 * 777;
		close(fd);
	}
	ok(after_ok, "hostile: %llu random PMU MSR writes (%llu #GP), QEMU alive, counting exact afterwards",
	   (unsigned long long)writes, (unsigned long long)gps);
}

/* ---------- the emulator's own flags (patch 0003) ---------- */

#define FLAGS_ARITH	0x8d5UL		/* OF SF ZF AF PF CF */
#define FLAGS_ZF	0x40UL

/*
 * The flags a cmp of @a with @b leaves, then those a cmpxchg16b (@wide)
 * or cmpxchg8b that succeeds right after it, in the same translation
 * block, leaves: all but ZF are the cmp's.  The popfq ends the block
 * before, so the block starts with QEMU's lazy flags in their "the flags
 * are CC_SRC" state; the cmp then puts @b in CC_SRC.
 */
static void cmp_then_cmpxchg(uint64_t a, uint64_t b, int wide,
			     unsigned long *after_cmp, unsigned long *after_xchg)
{
	static uint64_t slot[2] __attribute__((aligned(16)));
	uint64_t lo = 0, hi = 0;

	asm volatile("cmp %[b], %[a]\n\tpushfq\n\tpop %[f]"
		     : [f] "=r" (*after_cmp) : [a] "r" (a), [b] "r" (b) : "cc");
	slot[0] = slot[1] = 0;
	if (wide)
		asm volatile("pushfq\n\tpopfq\n\t"
			     "cmp %[b], %[a]\n\t"
			     "lock cmpxchg16b %[m]\n\t"
			     "pushfq\n\tpop %[f]"
			     : [f] "=&r" (*after_xchg), [m] "+m" (slot), "+a" (lo), "+d" (hi)
			     : [a] "r" (a), [b] "r" (b), "b" (1UL), "c" (1UL)
			     : "cc", "memory");
	else
		asm volatile("pushfq\n\tpopfq\n\t"
			     "cmp %[b], %[a]\n\t"
			     "lock cmpxchg8b %[m]\n\t"
			     "pushfq\n\tpop %[f]"
			     : [f] "=&r" (*after_xchg), [m] "+m" (slot[0]), "+a" (lo), "+d" (hi)
			     : [a] "r" (a), [b] "r" (b), "b" (1UL), "c" (1UL)
			     : "cc", "memory");
}

/*
 * QEMU 7.2 computed these two instructions' flags from a stale cc_op:
 * EFLAGS became half of the cmp's operand, trap flag included, and the
 * guest kernel took single-step traps after SLUB's cmpxchg16b.
 */
static void test_cmpxchg_flags(void)
{
	static const uint64_t operands[][2] = {
		{ 0, 0x12345678fffff3ffULL }, { 1, 2 }, { 5, 5 },
		{ 0x8000000000000000ULL, 1 }, { 7, 0xffff888004ccf300ULL },
	};
	unsigned int i, wide, bad = 0;

	for (wide = 0; wide < 2; wide++)
		for (i = 0; i < sizeof(operands) / sizeof(operands[0]); i++) {
			unsigned long cmp, xchg;

			cmp_then_cmpxchg(operands[i][0], operands[i][1], wide, &cmp, &xchg);
			if ((xchg & FLAGS_ARITH) != ((cmp & FLAGS_ARITH) | FLAGS_ZF) ||
			    (xchg & ~FLAGS_ARITH) != (cmp & ~FLAGS_ARITH)) {
				diag("cmpxchg%s after cmp %#llx, %#llx: flags %#lx, the cmp's %#lx",
				     wide ? "16b" : "8b", (unsigned long long)operands[i][0],
				     (unsigned long long)operands[i][1], xchg, cmp);
				bad++;
			}
		}
	ok(!bad, "cmpxchg8b and cmpxchg16b after a cmp keep the cmp's flags but ZF (%u of 10 wrong)",
	   bad);
}

static void sysctl(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		diag("cannot write %s to %s", v, path);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Period-2 sampling is ~2000 PMIs in a few guest ms: no throttling. */
	sysctl("/proc/sys/kernel/perf_event_max_sample_rate", "100000000");
	sysctl("/proc/sys/kernel/perf_cpu_time_max_percent", "0");
	printf("TAP version 13\n");
	test_boot();
	test_exact();
	test_kernel_linear();
	test_cycles();
	test_rep();
	test_idle();
	test_grouped_separate();
	test_ioctls();
	test_all_counters();
	test_multiplex();
	test_sampling();
	test_rdpmc();
	test_pce();
	test_msrs();
	test_hostile();
	test_cmpxchg_flags();
	printf("1..%d\n", test_no);
	printf("# %d of %d failed\n", failures, test_no);
	return failures ? 1 : 0;
}
