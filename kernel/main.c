// SPDX-License-Identifier: GPL-2.0
/* Module entry: choose a backend, then open /dev/pmuctx. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/errno.h>
#include "pmuctx.h"

/* NULL when only software counters are offered (x86 for now). */
const struct pmuctx_hw_desc *pmuctx_hw;

static int __init pmuctx_probe_hw(void)
{
#ifdef CONFIG_ARM64
	int err = pmuctx_pmuv3_probe(&pmuctx_hw);

	if (err == -ENODEV) {
		pr_info("no PMUv3 found, software counters only\n");
		return 0;
	}
	return err;
#else
	return 0;
#endif
}

static int __init pmuctx_init(void)
{
	int err;

	err = pmuctx_probe_hw();
	if (err)
		return err;

	err = pmuctx_dev_register();
	if (err)
		goto remove_hw;

	err = pmuctx_plant_bugs();
	if (err)
		goto unregister;

	pr_info("ready, backend %s\n", pmuctx_hw ? pmuctx_hw->name : "software");
	return 0;

unregister:
	pmuctx_dev_unregister();
remove_hw:
	if (pmuctx_hw && pmuctx_hw->remove)
		pmuctx_hw->remove();
	return err;
}

static void __exit pmuctx_exit(void)
{
	pmuctx_dev_unregister();
	if (pmuctx_hw && pmuctx_hw->remove)
		pmuctx_hw->remove();
}

module_init(pmuctx_init);
module_exit(pmuctx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-task performance counter contexts");
MODULE_AUTHOR("pmuctx developers");
