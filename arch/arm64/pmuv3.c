// SPDX-License-Identifier: GPL-2.0
/*
 * ARMv8 PMUv3 backend.  Register layouts from the Arm ARM (D13, "The
 * Performance Monitors Extension").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/errno.h>
#include <linux/of.h>
#include <linux/of_platform.h>
#include <linux/platform_device.h>
#include <asm/sysreg.h>
#include "pmuctx.h"

#define PMUVER_SHIFT		8	/* ID_AA64DFR0_EL1.PMUVer */
#define PMUVER_NONE		0x0
#define PMUVER_IMPDEF		0xf
#define PMUVER_V3P5		0x6
#define PMCR_N			GENMASK(15, 11)

static struct pmuctx_hw_desc pmuv3_desc = {
	.name = "armv8-pmuv3",
	.nr_fixed = 1,			/* PMCCNTR_EL0 */
	.fixed_width = 64,
	.features = PMUCTX_FEAT_HARDWARE,
};

/*
 * The kernel's own arm_pmu driver programs the same registers from perf; two
 * owners would corrupt each other's counts, so refuse when it is bound to the
 * device-tree PMU node.
 */
static int pmuv3_check_owner(void)
{
	struct platform_device *pdev;
	struct device_node *np;
	int err = 0;

	np = of_find_compatible_node(NULL, NULL, "arm,armv8-pmuv3");
	if (!np)
		return 0;
	pdev = of_find_device_by_node(np);
	of_node_put(np);
	if (!pdev)
		return 0;
	if (pdev->dev.driver) {
		pr_err("PMUv3 is owned by the kernel driver '%s'; boot with initcall_blacklist=armv8_pmu_driver_init to give it to pmuctx\n",
		       pdev->dev.driver->name);
		err = -EBUSY;
	}
	put_device(&pdev->dev);
	return err;
}

int pmuctx_pmuv3_probe(const struct pmuctx_hw_desc **desc)
{
	u64 dfr0 = read_sysreg(id_aa64dfr0_el1);
	u32 pmuver = (dfr0 >> PMUVER_SHIFT) & 0xf;
	u64 ceid0, ceid1;
	int err;

	if (pmuver == PMUVER_NONE || pmuver == PMUVER_IMPDEF)
		return -ENODEV;

	err = pmuv3_check_owner();
	if (err)
		return err;

	ceid0 = read_sysreg(pmceid0_el0);
	ceid1 = read_sysreg(pmceid1_el0);
	pmuv3_desc.pmu_version = pmuver;
	pmuv3_desc.nr_general = FIELD_GET(PMCR_N, read_sysreg(pmcr_el0));
	/* PMUv3p5 adds 64-bit event counters (PMCR_EL0.LP). */
	pmuv3_desc.general_width = pmuver >= PMUVER_V3P5 ? 64 : 32;
	/* PMCEIDn[31:0]: common events 0x00-0x3f; [63:32]: 0x4000-0x403f. */
	pmuv3_desc.hw_events[0] = lower_32_bits(ceid0) |
				  ((u64)lower_32_bits(ceid1) << 32);
	pmuv3_desc.hw_events[1] = upper_32_bits(ceid0) |
				  ((u64)upper_32_bits(ceid1) << 32);

	pr_info("PMUv3 version %u, %u event counters + cycle counter\n",
		pmuver, pmuv3_desc.nr_general);
	*desc = &pmuv3_desc;
	return 0;
}
