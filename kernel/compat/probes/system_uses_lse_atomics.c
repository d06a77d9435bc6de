// SPDX-License-Identifier: GPL-2.0
/* Probe: arm64's system_uses_lse_atomics() (gone by 6.12). */
#include <linux/atomic.h>
#include <asm/lse.h>

bool pmuctx_probe(void);
bool pmuctx_probe(void)
{
	return system_uses_lse_atomics();
}
