/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the pmuctx core, its device and its backends. */
#ifndef _PMUCTX_INTERNAL_H
#define _PMUCTX_INTERNAL_H

#include <linux/types.h>
#include <linux/pmuctx.h>

/*
 * What a hardware backend tells the core about its PMU.  Filled once at
 * probe, read-only afterwards, so readers need no lock.
 */
struct pmuctx_hw_desc {
	const char *name;
	u32 nr_general;
	u32 nr_fixed;
	u32 general_width;
	u32 fixed_width;
	u32 pmu_version;
	u64 hw_events[2];
	u64 features;
	void (*remove)(void);
};

extern const struct pmuctx_hw_desc *pmuctx_hw;

#ifdef CONFIG_ARM64
int pmuctx_pmuv3_probe(const struct pmuctx_hw_desc **desc);
#endif

int pmuctx_dev_register(void);
void pmuctx_dev_unregister(void);

#ifdef PMUCTX_PLANT
int pmuctx_plant_bugs(void);
#else
static inline int pmuctx_plant_bugs(void) { return 0; }
#endif

#endif /* _PMUCTX_INTERNAL_H */
