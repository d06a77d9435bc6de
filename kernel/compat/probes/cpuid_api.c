// SPDX-License-Identifier: GPL-2.0
/* Probe: x86's cpuid() is declared in <asm/cpuid/api.h> (6.16). */
#include <asm/cpuid/api.h>

void pmuctx_probe(unsigned int *r);
void pmuctx_probe(unsigned int *r)
{
	cpuid(0, &r[0], &r[1], &r[2], &r[3]);
}
