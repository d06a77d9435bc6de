/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the hardware-counter selftests (hw_test.c, mux_test.c) share: the
 * arm64 PMUv3 events QEMU implements, a loop of a known instruction count,
 * and when counts can be exact.
 */
#ifndef PMUCTX_PMU_TEST_H
#define PMUCTX_PMU_TEST_H

#include <stdbool.h>
#include "pmuctx_test.h"

#define INST_RETIRED	0x08
#define CPU_CYCLES	0x11

#if defined(__aarch64__)
/* Exactly 2 * n user instructions (n >= 1). */
static __attribute__((noinline, unused)) void run_loop(unsigned long n)
{
	asm volatile("1:	subs	%0, %0, #1\n"
		     "	b.ne	1b\n" : "+r"(n) : : "cc");
}
#else
static __attribute__((unused)) void run_loop(unsigned long n)
{
	(void)n;
}
#endif

static inline bool have_pmu(void)
{
	struct pmuctx_info info = { .size = sizeof(info) };

	return !ioctl(pmuctx_dev(), PMUCTX_INFO, &info) &&
	       (info.features & PMUCTX_FEAT_HARDWARE);
}

/* Exact counts need -icount and one vCPU: icount is global to all vCPUs. */
static inline bool exact(void)
{
	return have_pmu() && getenv("PMUCTX_VM_ICOUNT") && nr_cpus() == 1;
}

#endif
