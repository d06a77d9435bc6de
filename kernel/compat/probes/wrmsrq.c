// SPDX-License-Identifier: GPL-2.0
/* Probe: x86's 64-bit MSR accessors are named rdmsrq()/wrmsrq() (6.16). */
#include <asm/msr.h>

u64 pmuctx_probe(u32 msr);
u64 pmuctx_probe(u32 msr)
{
	u64 val;

	rdmsrq(msr, val);
	wrmsrq(msr, val);
	return val;
}
