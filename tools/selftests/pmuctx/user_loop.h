/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A loop of exactly two user-mode instructions an iteration, N times:
 * the workloads whose counts and samples the perf tests know in advance
 * (perf_loop, perf_chain, hw_test's call chain).
 */
#ifndef PMUCTX_USER_LOOP_H
#define PMUCTX_USER_LOOP_H

static inline void two_instruction_loop(unsigned long n)
{
	if (!n)
		return;
#if defined(__x86_64__)
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
	__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
#error "two_instruction_loop: x86_64 and arm64 only"
#endif
}

#endif
