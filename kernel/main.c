// SPDX-License-Identifier: GPL-2.0
/* Module entry: choose a backend, install the hooks, open /dev/pmuctx. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/errno.h>
#include "pmuctx.h"

/* NULL when only software counters are offered (no usable PMU). */
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
#elif defined(CONFIG_X86)
	int err = pmuctx_perfmon_probe(&pmuctx_hw);

	/* Stock QEMU TCG, AMD, perfmon before version 2: never a failure. */
	if (err == -ENODEV) {
		pr_info("no Intel architectural perfmon v2, software counters only\n");
		return 0;
	}
	return err;
#else
	return 0;
#endif
}

static void pmuctx_remove_hw(void)
{
	if (pmuctx_hw && pmuctx_hw->remove)
		pmuctx_hw->remove();
}

static int __init pmuctx_init(void)
{
	int err;

	err = pmuctx_probe_hw();
	if (err)
		return err;
	err = pmuctx_context_init();
	if (err)
		goto remove_hw;
	err = pmuctx_counter_init();
	if (err)
		goto context_exit;
	err = pmuctx_mux_init();
	if (err)
		goto counters_exit;
	pmuctx_range_init();
	/*
	 * Preempt notifiers sit behind a static key.  It is enabled here and
	 * deliberately never disabled: every enable/disable patches the
	 * scheduler's text, and under QEMU TCG with two vCPUs the patching at
	 * rmmod occasionally left both CPUs in a soft lockup at that site in
	 * finish_task_switch().  With the key on and no notifier registered,
	 * a switch costs one empty list walk, as with KVM loaded; reloads add
	 * to the key's count without patching again.
	 */
	preempt_notifier_inc();
	err = pmuctx_inherit_init();
	if (err)
		goto mux_exit;
	err = pmuctx_dev_register();
	if (err)
		goto inherit_exit;
	err = pmuctx_plant_bugs();
	if (err)
		goto unregister;

	pr_info("ready, backend %s\n", pmuctx_hw ? pmuctx_hw->name : "software");
	return 0;

unregister:
	pmuctx_dev_unregister();
inherit_exit:
	pmuctx_inherit_exit();
mux_exit:
	pmuctx_mux_exit();
counters_exit:
	pmuctx_counter_exit();
context_exit:
	pmuctx_context_exit();
remove_hw:
	pmuctx_remove_hw();
	return err;
}

/*
 * Every counter fd holds a module reference, and the links hold one between
 * them (link.c), so by the time this runs no notifier of ours is
 * registered anywhere; what is left
 * are exit works and RCU callbacks, drained here.
 */
static void __exit pmuctx_exit(void)
{
	pmuctx_dev_unregister();
	pmuctx_inherit_exit();
	pmuctx_context_exit();
	pmuctx_users_exit();
	pmuctx_mux_exit();
	pmuctx_counter_exit();
	pmuctx_remove_hw();
}

module_init(pmuctx_init);
module_exit(pmuctx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-task performance counter contexts");
MODULE_AUTHOR("pmuctx developers");
