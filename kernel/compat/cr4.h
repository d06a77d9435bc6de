/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CR4.PCE, which lets user space RDPMC.  Only the kernel's
 * cr4_update_irqsoff() and cr4_read_shadow() may change it: the kernel
 * keeps a copy of CR4 per CPU and writes CR4 from it.  Up to 6.x both are
 * exported to every module; later kernels (sid's 7.2) export them to
 * KVM's modules only, and pmuctx's x86 backend then offers no self-reads
 * (pmuctx_hw_desc::no_user_reads: the self-read page's index stays 0 and
 * readers use read(), as perf's readers do with rdpmc off).
 * Probe: the two symbols' lines in the kernel's Module.symvers, without a
 * namespace (probes.mk, PMUCTX_HAVE_CR4_EXPORTS).
 */
#ifndef PMUCTX_COMPAT_CR4_H
#define PMUCTX_COMPAT_CR4_H

#include <asm/tlbflush.h>

#ifdef PMUCTX_HAVE_CR4_EXPORTS
#define PMUCTX_CR4_PCE_REACHABLE true
#else
#define PMUCTX_CR4_PCE_REACHABLE false
#endif

/* IRQs off, on the CPU whose CR4 changes. */
static inline void pmuctx_cr4_pce(bool on)
{
#ifdef PMUCTX_HAVE_CR4_EXPORTS
	if (on)
		cr4_update_irqsoff(X86_CR4_PCE, 0);
	else
		cr4_update_irqsoff(0, X86_CR4_PCE);
#endif
}

static inline bool pmuctx_cr4_pce_on(void)
{
#ifdef PMUCTX_HAVE_CR4_EXPORTS
	return cr4_read_shadow() & X86_CR4_PCE;
#else
	return false;
#endif
}

#endif
