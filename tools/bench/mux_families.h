/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workloads that judge multiplexed counts (issue 25), shared by mux_test
 * (coverage of pmuctx's 95% intervals) and make bench's mux block (the
 * error of pmuctx's and perf's scaled counts, side by side):
 *
 *   burst N     a shell starts N gzip children at once and waits: what
 *               `pmuctx stat -- sh -c '...'` counts (the fork, exec and
 *               exit of every child are kernel work each does first)
 *   make DxJ    a make -j like tree: D sub-shells ("directories") each
 *               running J jobs at once, each job a gzip | cat pipeline
 *   phased P    one task whose user loop and system calls alternate in
 *               phases of about P ms (P = 1..20 ms, so that some of them
 *               beat with any rotation of 1 to 8 intervals)
 *
 * The counted task waits on a pipe, is attached to (inheriting) while it
 * waits, then runs the workload and exits; its tree is counted.  Sizes are
 * in instructions (under -icount a ns of guest time is one instruction):
 * nothing here is timed.
 */
#ifndef PMUCTX_MUX_FAMILIES_H
#define PMUCTX_MUX_FAMILIES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

enum mux_family_kind { MUXF_BURST, MUXF_MAKE, MUXF_PHASED };

struct mux_family {
	enum mux_family_kind kind;
	const char *family;	/* "burst", "make", "phased" */
	int a, b;		/* children; dirs, jobs; phase ms */
};

/* Each a workload family; the phased configurations follow (1..20 ms). */
static const struct mux_family mux_fork_families[] = {
	{ MUXF_BURST, "burst", 4, 0 },
	{ MUXF_BURST, "burst", 8, 0 },
	{ MUXF_BURST, "burst", 12, 0 },
	{ MUXF_BURST, "burst", 16, 0 },
	{ MUXF_MAKE, "make", 3, 4 },
	{ MUXF_MAKE, "make", 2, 6 },
};

#define MUXF_NR_FORK	(int)(sizeof(mux_fork_families) / sizeof(mux_fork_families[0]))
#define MUXF_MAX_PHASE	20

/* Seven events, user-only, kernel-only and both, as mux_test counts them. */
struct mux_event {
	uint64_t code;
	int exclude_user, exclude_kernel;
	const char *name;
};

#if defined(__x86_64__)
#define MUXF_INST	0x00c0
#define MUXF_CYCLES	0x003c
#else
#define MUXF_INST	0x08
#define MUXF_CYCLES	0x11
#endif

static const struct mux_event mux_events[] = {
	{ MUXF_INST, 0, 1, "inst:u" },
	{ MUXF_CYCLES, 0, 1, "cycles:u" },
	{ MUXF_INST, 1, 0, "inst:k" },
	{ MUXF_CYCLES, 1, 0, "cycles:k" },
	{ MUXF_INST, 0, 0, "inst" },
	{ MUXF_CYCLES, 0, 0, "cycles" },
	{ MUXF_INST, 0, 1, "inst:u#2" },
};

#define MUXF_NR_EVENTS	(int)(sizeof(mux_events) / sizeof(mux_events[0]))

/* User-only or kernel-only: phases make their rates vary, so they are judged. */
static inline int mux_event_judged(const struct mux_event *e)
{
	return e->exclude_user != e->exclude_kernel;
}

static inline void mux_family_name(const struct mux_family *f, char *buf, size_t len)
{
	if (f->kind == MUXF_BURST)
		snprintf(buf, len, "burst %d", f->a);
	else if (f->kind == MUXF_MAKE)
		snprintf(buf, len, "make %dx%d", f->a, f->b);
	else
		snprintf(buf, len, "phased %d ms", f->a);
}

#if defined(__aarch64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void muxf_spin(unsigned long n)
{
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n" : "+r"(n) : : "cc");
}
#elif defined(__x86_64__)
static __attribute__((noinline, unused)) void muxf_spin(unsigned long n)
{
	asm volatile("1:	dec	%0\n"
		     "	jnz	1b\n" : "+r"(n) : : "cc");
}
#else
static __attribute__((noinline, unused)) void muxf_spin(unsigned long n)
{
	while (n--)
		asm volatile("" : : : "memory");
}
#endif

/* System calls in a kernel phase of 1 ms (mux_family_prepare()). */
static unsigned long muxf_calls_per_ms = 2000;

static inline double muxf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The gzip inputs, and the system calls a millisecond of kernel phase
 * makes: under -icount a guest ns is an instruction, so this sizes the
 * phase in instructions once (the workloads themselves are fixed counts).
 * Returns 0, or -1 when a file cannot be written.
 */
static inline int mux_family_prepare(void)
{
	FILE *s = fopen("/tmp/muxf_s.txt", "w"), *m = fopen("/tmp/muxf_m.txt", "w");
	double t0, t1;
	int i;

	if (!s || !m) {
		if (s)
			fclose(s);
		if (m)
			fclose(m);
		return -1;
	}
	for (i = 1; i <= 40000; i++)
		fprintf(s, "%d\n", i);
	for (i = 1; i <= 10000; i++)
		fprintf(m, "%d\n", i);
	fclose(s);
	fclose(m);
	for (i = 0; i < 2000; i++)	/* warm */
		syscall(SYS_getppid);
	t0 = muxf_now();
	for (i = 0; i < 20000; i++)
		syscall(SYS_getppid);
	t1 = muxf_now();
	if (t1 > t0)
		muxf_calls_per_ms = (unsigned long)(20000 * 1e6 / (t1 - t0)) ?: 1;
	return 0;
}

/*
 * In the counted task, after it was attached to: run @f and exit (a shell
 * family execs the shell).  Never returns.
 */
static inline void __attribute__((noreturn)) mux_family_run(const struct mux_family *f)
{
	char cmd[512];
	size_t len = 0;
	int i, j, rounds;

	switch (f->kind) {
	case MUXF_BURST:
		len += snprintf(cmd + len, sizeof(cmd) - len, "for i in");
		for (i = 1; i <= f->a; i++)
			len += snprintf(cmd + len, sizeof(cmd) - len, " %d", i);
		snprintf(cmd + len, sizeof(cmd) - len,
			 "; do gzip -c /tmp/muxf_s.txt > /tmp/muxf_o$i & done; wait");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		break;
	case MUXF_MAKE:
		len += snprintf(cmd + len, sizeof(cmd) - len, "for d in");
		for (i = 1; i <= f->a; i++)
			len += snprintf(cmd + len, sizeof(cmd) - len, " %d", i);
		len += snprintf(cmd + len, sizeof(cmd) - len, "; do (for j in");
		for (i = 1; i <= f->b; i++)
			len += snprintf(cmd + len, sizeof(cmd) - len, " %d", i);
		snprintf(cmd + len, sizeof(cmd) - len,
			 "; do gzip -c /tmp/muxf_m.txt | cat > /dev/null & done; wait) & done; wait");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		break;
	case MUXF_PHASED:
		/* about 120 ms of phases, at least four rounds of both */
		rounds = 60 / f->a < 4 ? 4 : 60 / f->a;
		for (i = 0; i < rounds; i++) {
			muxf_spin(f->a * 500000UL);
			for (j = 0; j < (int)(f->a * muxf_calls_per_ms); j++)
				syscall(SYS_getppid);
		}
		_exit(0);
	}
	_exit(127);
}

#endif
