// SPDX-License-Identifier: GPL-2.0
/*
 * The module's users: everything that may run our code after the call
 * that created it returned (a link's notifier, a counter file's
 * operations, a family's pending kill) keeps the module loaded.
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include "pmuctx.h"

/*
 * A module reference per user was a global atomic on every fork, exit,
 * open and close (issue 26); instead users are counted per CPU, and one
 * module reference stands for all of them while pmuctx_users_held is set:
 * - a get counts its user on its CPU inside an RCU read-side section that
 *   saw pmuctx_users_held set, or else, under pmuctx_users_lock, after
 *   setting it (taking the reference if it was clear);
 * - a put uncounts it, on whatever CPU, and unless one is pending,
 *   queues the check PMUCTX_USERS_CHECK_DELAY later;
 * - the check clears pmuctx_users_held under the lock, waits for a grace
 *   period (so every get that saw it set has counted its user), and sums
 *   the CPUs: a user left and the flag still clear, it sets the flag again
 *   and keeps its reference; otherwise it drops it (no user left, or a get
 *   meanwhile took a reference of its own).
 * So rmmod fails with EBUSY until the delay and a grace period after the
 * last user is gone.  The sum is exact once the grace period has passed:
 * a put counted before its get is impossible, and a get the sum misses
 * took its own reference.
 *
 * A put is the last thing its caller does in our code, but the caller
 * still has to return through it.  The VFS's own reference (fops->owner)
 * is dropped only after ->release returned; ours is dropped by the check,
 * after an RCU-tasks grace period: every task has since switched
 * voluntarily or been in user space, so none is still inside our text
 * (the guarantee ftrace's trampolines rely on; plain RCU on kernels
 * without preemption, where a task cannot be preempted on the way out).
 *
 * A get needs a module reference already held: its caller is our own
 * code, run from a file of ours (/dev/pmuctx, a counter) or a user.
 */
static DEFINE_PER_CPU(long, pmuctx_users);
static DEFINE_SPINLOCK(pmuctx_users_lock);	/* setting the flag below */
static bool pmuctx_users_held;
static void pmuctx_users_check(struct work_struct *work);
static DECLARE_DELAYED_WORK(pmuctx_users_check_work, pmuctx_users_check);

/*
 * Each check waits for a grace period, tens of thousands of instructions
 * of RCU machinery: once a second costs a fork storm ~10 instructions a
 * fork (50 ms cost it ~200: make bench).
 */
#define PMUCTX_USERS_CHECK_DELAY	HZ

/* Process context, or preemption off (the fork hook). */
void pmuctx_users_get(void)
{
	rcu_read_lock();
	if (likely(READ_ONCE(pmuctx_users_held))) {
		this_cpu_inc(pmuctx_users);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();
	spin_lock(&pmuctx_users_lock);
	if (!pmuctx_users_held) {
		__module_get(THIS_MODULE);
		WRITE_ONCE(pmuctx_users_held, true);
	}
	this_cpu_inc(pmuctx_users);
	spin_unlock(&pmuctx_users_lock);
}

/* Any context but NMI. */
void pmuctx_users_put(void)
{
	this_cpu_dec(pmuctx_users);
	if (!delayed_work_pending(&pmuctx_users_check_work))
		queue_delayed_work(system_wq, &pmuctx_users_check_work,
				   PMUCTX_USERS_CHECK_DELAY);
}

static void pmuctx_users_check(struct work_struct *work)
{
	long users = 0;
	int cpu;

	spin_lock(&pmuctx_users_lock);
	if (!pmuctx_users_held) {
		spin_unlock(&pmuctx_users_lock);
		return;
	}
	WRITE_ONCE(pmuctx_users_held, false);
	spin_unlock(&pmuctx_users_lock);
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		users += per_cpu(pmuctx_users, cpu);
	spin_lock(&pmuctx_users_lock);
	if (users > 0 && !pmuctx_users_held) {
		WRITE_ONCE(pmuctx_users_held, true);
		spin_unlock(&pmuctx_users_lock);
		return;
	}
	spin_unlock(&pmuctx_users_lock);
	/* The last users' callers have returned out of our code. */
	synchronize_rcu_tasks();
	/* rmmod may now run pmuctx_exit(), which waits for this to return. */
	module_put(THIS_MODULE);
}

/* At module exit: no user is left, so no reference is held. */
void pmuctx_users_exit(void)
{
	cancel_delayed_work_sync(&pmuctx_users_check_work);
}
