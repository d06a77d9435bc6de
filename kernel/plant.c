// SPDX-License-Identifier: GPL-2.0
/*
 * Planted bugs, compiled only into test builds (PMUCTX_PLANT=1, see
 * Documentation/testing.rst).  Each one must make the VM lane that is meant
 * to catch it fail; a lane that stays green with a planted bug is broken.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/module.h>
#include <linux/string.h>
#include "pmuctx.h"

static char *plant = "";
module_param(plant, charp, 0444);
MODULE_PARM_DESC(plant, "test builds only: bug to plant at load (warn)");

static void plant_warn(void)
{
	WARN_ON(1);
}

static const struct {
	const char *name;
	void (*fn)(void);
} plants[] = {
	{ "warn", plant_warn },
};

int pmuctx_plant_bugs(void)
{
	size_t i;

	if (!plant[0])
		return 0;
	for (i = 0; i < ARRAY_SIZE(plants); i++) {
		if (!strcmp(plant, plants[i].name)) {
			pr_info("planting bug '%s'\n", plant);
			plants[i].fn();
			return 0;
		}
	}
	pr_err("unknown bug to plant '%s'\n", plant);
	return -EINVAL;
}
