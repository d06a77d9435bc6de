/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86: the local APIC's registers (LVTPC) through the APIC driver's own
 * read and write, on every kernel.  apic_read() and apic_write() call them
 * through apic-> in 6.1 but through static calls in later kernels (6.12),
 * whose keys the kernel does not export to modules; the exported (GPL)
 * apic pointer holds the same functions (apic_update_callback() changes
 * both).  No probe: one path serves every kernel.
 */
#ifndef PMUCTX_COMPAT_APIC_H
#define PMUCTX_COMPAT_APIC_H

#include <asm/apic.h>

static inline u32 pmuctx_apic_read(u32 reg)
{
	return apic->read(reg);
}

static inline void pmuctx_apic_write(u32 reg, u32 val)
{
	apic->write(reg, val);
}

#endif
