// SPDX-License-Identifier: GPL-2.0
/*
 * Probe: none; it must compile on every kernel, or no probe can (wrong
 * flags, a broken header tree), and probes.mk stops the build.
 */
#include <linux/module.h>

int pmuctx_probe(void);
int pmuctx_probe(void)
{
	return 0;
}
