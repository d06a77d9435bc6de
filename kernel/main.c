// SPDX-License-Identifier: GPL-2.0
/* Module entry: choose a backend, install the hooks, open /dev/pmuctx. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/errno.h>
#include "pmuctx.h"

/* NULL when only software counters are offered (no usable PMU). */
const struct pmuctx_hw_desc *pmuctx_hw;
DEFINE_STATIC_KEY_FALSE(pmuctx_hw_task_bound);
DEFINE_STATIC_KEY_FALSE(pmuctx_hw_lent);

/*
 * Which backend counts hardware events (Documentation/design.rst, "Choosing
 * a backend"): auto borrows perf's per-CPU events whenever perf has a
 * hardware PMU (shared: nobody's perf events get EBUSY from pmuctx), and
 * takes the PMU itself only where perf has none (its driver kept out);
 * native only takes it, a monopoly for root to ask for (the load fails
 * with EBUSY when the kernel holds it); perf counts through events bound
 * to tasks; shared only borrows; software offers no hardware counters.
 */
static char *backend = "auto";
module_param(backend, charp, 0444);
MODULE_PARM_DESC(backend, "auto (default), native, perf, shared or software");

/*
 * The native backend for this machine.  On x86 the counters are taken at
 * the first hardware counter, not now: -EBUSY then if perf holds them.
 */
static int __init pmuctx_probe_native(void)
{
#ifdef CONFIG_ARM64
	return pmuctx_pmuv3_probe(&pmuctx_hw);
#elif defined(CONFIG_X86)
	return pmuctx_perfmon_probe(&pmuctx_hw);
#else
	return -ENODEV;
#endif
}

static int __init pmuctx_probe_hw(void)
{
	bool is_auto = !strcmp(backend, "auto");
	int err;

	if (!strcmp(backend, "software")) {
		pr_info("backend=software: software counters only\n");
		return 0;
	}
	if (!strcmp(backend, "perf")) {
		err = pmuctx_perf_probe(&pmuctx_hw);
		if (err == -ENODEV)
			pr_err("backend=perf: perf has no hardware PMU here\n");
		return err;
	}
	if (is_auto || !strcmp(backend, "shared")) {
		err = pmuctx_perf_shared_probe(&pmuctx_hw);
		if (err != -ENODEV)
			return err;
		if (!is_auto) {
			pr_err("backend=shared: perf has no hardware PMU here\n");
			return err;
		}
		/*
		 * perf has no hardware PMU (its driver kept out, or one it
		 * does not know): nobody's perf events can lose the PMU to
		 * pmuctx's own backend, if it knows this one.
		 */
		err = pmuctx_probe_native();
	} else if (!strcmp(backend, "native")) {
		err = pmuctx_probe_native();
		if (err == -EBUSY) {
			pr_err("the kernel's PMU driver holds the PMU: load with backend=auto to share it with perf, or %s\n",
			       IS_ENABLED(CONFIG_ARM64) ?
			       "boot with initcall_blacklist=armv8_pmu_driver_init" :
			       "stop its hardware events (nmi_watchdog=0, no perf)");
			return err;
		}
	} else {
		pr_err("backend=%s: choose auto, native, perf, shared or software\n",
		       backend);
		return -EINVAL;
	}
	if (err != -EBUSY && err != -ENODEV)
		return err;
	pr_info("no hardware PMU pmuctx can count on: software counters only\n");
	return 0;
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
 * Counter files, links and pending family kills hold one module reference
 * between them (users.c), so by the time this runs no file or notifier of
 * ours is left anywhere; what is left are exit works and RCU callbacks,
 * drained here.
 */
static void __exit pmuctx_exit(void)
{
	pmuctx_dev_unregister();
	pmuctx_inherit_exit();
	pmuctx_context_exit();
	pmuctx_users_exit();
	pmuctx_mux_exit();
	pmuctx_counter_exit();
	pmuctx_rings_exit();
	pmuctx_remove_hw();
}

module_init(pmuctx_init);
module_exit(pmuctx_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-task performance counter contexts");
MODULE_VERSION(PMUCTX_RELEASE);
MODULE_AUTHOR("pmuctx developers");
