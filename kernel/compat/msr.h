/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's MSRs and CPUID.  The 64-bit MSR accessors are rdmsrl(),
 * rdmsrl_safe() and wrmsrl() up to 6.15 and rdmsrq(), rdmsrq_safe() and
 * wrmsrq() from 6.16 (probe: probes/wrmsrq.c); cpuid() moved from
 * <asm/processor.h> to <asm/cpuid/api.h> (probe: probes/cpuid_api.c).
 * All inline: the PMU's NMI handler calls them.
 */
#ifndef PMUCTX_COMPAT_MSR_H
#define PMUCTX_COMPAT_MSR_H

#include <asm/msr.h>
#include <asm/processor.h>
#ifdef PMUCTX_HAVE_CPUID_API
#include <asm/cpuid/api.h>
#endif

static __always_inline void pmuctx_wrmsrq(u32 msr, u64 val)
{
#ifdef PMUCTX_HAVE_WRMSRQ
	wrmsrq(msr, val);
#else
	wrmsrl(msr, val);
#endif
}

static __always_inline u64 pmuctx_rdmsrq(u32 msr)
{
	u64 val;

#ifdef PMUCTX_HAVE_WRMSRQ
	rdmsrq(msr, val);
#else
	rdmsrl(msr, val);
#endif
	return val;
}

static inline int pmuctx_rdmsrq_safe(u32 msr, u64 *val)
{
#ifdef PMUCTX_HAVE_WRMSRQ
	return rdmsrq_safe(msr, val);
#else
	return rdmsrl_safe(msr, val);
#endif
}

#endif
