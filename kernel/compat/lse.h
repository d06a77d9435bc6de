/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64: whether the system uses LSE atomics, the kernel's own test
 * (a patched branch): system_uses_lse_atomics() until 6.1, the cpucap's
 * alternative_has_cap_likely() test asm/lse.h uses itself in later
 * kernels.  Probe: probes/system_uses_lse_atomics.c.
 */
#ifndef PMUCTX_COMPAT_LSE_H
#define PMUCTX_COMPAT_LSE_H

#include <asm/lse.h>

#ifdef CONFIG_ARM64_LSE_ATOMICS
static __always_inline bool pmuctx_uses_lse_atomics(void)
{
#ifdef PMUCTX_HAVE_SYSTEM_USES_LSE_ATOMICS
	return system_uses_lse_atomics();
#else
	return alternative_has_cap_likely(ARM64_HAS_LSE_ATOMICS);
#endif
}
#endif

#endif
