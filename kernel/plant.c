// SPDX-License-Identifier: GPL-2.0
/*
 * Planted bugs, compiled only into test builds (PMUCTX_PLANT=1, see
 * Documentation/testing.rst).  Each one must make the VM lane that is meant
 * to catch it fail; a lane that stays green with a planted bug is broken.
 * plant=a,b,... plants several in one boot, in that order.
 *
 *	warn		WARN_ON					every lane
 *	lock-inversion	AB-BA mutex order			lockdep
 *	atomic-sleep	GFP_KERNEL allocation under a spinlock	DEBUG_ATOMIC_SLEEP
 *	oob		read past the end of a kmalloc object	KASAN
 *	uaf		read of a freed kmalloc object		KASAN
 *	leak		kmalloc object nobody points to		kmemleak
 *	race		plain write against plain reads		KCSAN
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include "pmuctx.h"

static char *plant = "";
module_param(plant, charp, 0444);
MODULE_PARM_DESC(plant,
		 "test builds only: bugs to plant at load, comma-separated (warn, lock-inversion, atomic-sleep, oob, uaf, leak, race)");

static void plant_warn(void)
{
	WARN_ON(1);
}

static DEFINE_MUTEX(plant_lock_a);
static DEFINE_MUTEX(plant_lock_b);

/* A then B, later B then A: never deadlocks here, lockdep must still see it. */
static void plant_lock_inversion(void)
{
	mutex_lock(&plant_lock_a);
	mutex_lock(&plant_lock_b);
	mutex_unlock(&plant_lock_b);
	mutex_unlock(&plant_lock_a);

	mutex_lock(&plant_lock_b);
	mutex_lock(&plant_lock_a);
	mutex_unlock(&plant_lock_a);
	mutex_unlock(&plant_lock_b);
}

static DEFINE_SPINLOCK(plant_spin);

static void plant_atomic_sleep(void)
{
	void *p;

	spin_lock(&plant_spin);
	p = kmalloc(16, GFP_KERNEL);	/* may sleep: not under a spinlock */
	spin_unlock(&plant_spin);
	kfree(p);
}

static void plant_oob(void)
{
	size_t size = 13;
	char *p = kmalloc(size, GFP_KERNEL);

	if (!p)
		return;
	OPTIMIZER_HIDE_VAR(size);
	pr_info("out-of-bounds read: %d\n", READ_ONCE(p[size]));
	kfree(p);
}

static void plant_uaf(void)
{
	char *p = kmalloc(32, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("use-after-free read: %d\n", READ_ONCE(p[0]));
}

static void plant_leak(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	memset(p, 0x5a, 64);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("leaking a 64-byte object\n");
}

#define PLANT_RACE_MS	3000

static unsigned long plant_racy;
static unsigned long plant_racy_sink;

static int plant_race_writer(void *unused)
{
	while (!kthread_should_stop()) {
		plant_racy++;			/* plain: the planted race */
		cond_resched();
	}
	return 0;
}

static int plant_race_reader(void *unused)
{
	unsigned long sum = 0;

	while (!kthread_should_stop()) {
		sum += plant_racy;		/* plain: the planted race */
		cond_resched();
	}
	WRITE_ONCE(plant_racy_sink, sum);
	return 0;
}

/* Two kthreads race on plant_racy for PLANT_RACE_MS, then stop. */
static void plant_race(void)
{
	struct task_struct *w, *r;

	w = kthread_run(plant_race_writer, NULL, "pmuctx-plant-w");
	if (IS_ERR(w))
		return;
	r = kthread_run(plant_race_reader, NULL, "pmuctx-plant-r");
	if (!IS_ERR(r)) {
		msleep(PLANT_RACE_MS);
		kthread_stop(r);
	}
	kthread_stop(w);
}

static const struct {
	const char *name;
	void (*fn)(void);
} plants[] = {
	{ "warn", plant_warn },
	{ "lock-inversion", plant_lock_inversion },
	{ "atomic-sleep", plant_atomic_sleep },
	{ "oob", plant_oob },
	{ "uaf", plant_uaf },
	{ "leak", plant_leak },
	{ "race", plant_race },
};

/* plant=a,b,c plants each named bug in turn. */
int pmuctx_plant_bugs(void)
{
	const char *s = plant;
	size_t i, len;

	while (*s) {
		len = strchrnul(s, ',') - s;
		for (i = 0; i < ARRAY_SIZE(plants); i++) {
			if (strlen(plants[i].name) == len &&
			    !strncmp(s, plants[i].name, len))
				break;
		}
		if (i == ARRAY_SIZE(plants)) {
			pr_err("unknown bug to plant '%.*s'\n", (int)len, s);
			return -EINVAL;
		}
		pr_info("planting bug '%s'\n", plants[i].name);
		plants[i].fn();
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}
