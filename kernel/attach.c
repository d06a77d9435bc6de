// SPDX-License-Identifier: GPL-2.0
/*
 * Who may count whom.  ptrace_may_access() is not exported to modules (nor
 * are the LSM and Yama hooks behind it), so the policy is our own, with
 * Yama's scopes (Documentation/security.rst):
 *   0  any task with matching credentials and a dumpable mm
 *   1  (default) only your descendants (matching, dumpable) and tracees
 *   2  only callers with CAP_PERFMON or CAP_SYS_PTRACE
 *   3  nobody: every task counts itself only
 * Yourself, always.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include "pmuctx.h"
#include "compat/dumpable.h"
#include "compat/pidfd.h"

static struct task_struct *pmuctx_pidfd_task(int fd)
{
	struct task_struct *task = ERR_PTR(-EBADF);
	struct file *file = fget(fd);
	struct pid *pid;

	if (!file)
		return task;
	pid = pmuctx_pidfd_pid(file);
	if (!pid) {
		task = ERR_PTR(-EBADF);
	} else {
		task = get_pid_task(pid, PIDTYPE_PID);
		if (!task)
			task = ERR_PTR(-ESRCH);
	}
	fput(file);
	return task;
}

/* A referenced task for an open target, or an ERR_PTR. */
struct task_struct *pmuctx_find_target(s32 target, u32 flags)
{
	struct task_struct *task;

	if ((flags & PMUCTX_OPEN_PIDFD) && target < 0)
		return ERR_PTR(-EBADF);
	if (target < 0)
		return ERR_PTR(-EINVAL);

	if (flags & PMUCTX_OPEN_PIDFD) {
		task = pmuctx_pidfd_task(target);
	} else if (target == 0) {
		get_task_struct(current);
		task = current;
	} else {
		rcu_read_lock();
		task = pid_task(find_vpid(target), PIDTYPE_PID);
		if (task)
			get_task_struct(task);
		rcu_read_unlock();
		if (!task)
			return ERR_PTR(-ESRCH);
	}
	if (IS_ERR(task))
		return task;
	if (task->flags & PF_KTHREAD) {
		put_task_struct(task);
		return ERR_PTR(-EINVAL);
	}
	if (task->flags & PF_EXITING) {
		put_task_struct(task);
		return ERR_PTR(-ESRCH);
	}
	return task;
}

static bool pmuctx_is_descendant(struct task_struct *task)
{
	struct task_struct *walk;
	bool found = false;

	rcu_read_lock();
	for (walk = task; walk->pid > 0; walk = rcu_dereference(walk->real_parent)) {
		if (same_thread_group(walk, current)) {
			found = true;
			break;
		}
		if (walk == rcu_dereference(walk->real_parent))
			break;
	}
	rcu_read_unlock();
	return found;
}

static bool pmuctx_is_tracee(struct task_struct *task)
{
	bool traced;

	rcu_read_lock();
	traced = task->ptrace && ptrace_parent(task) == current;
	rcu_read_unlock();
	return traced;
}

/* The caller's ids must all match the target's, as ptrace demands. */
static bool pmuctx_creds_match(struct task_struct *task)
{
	const struct cred *me = current_cred(), *tcred;
	bool match;

	rcu_read_lock();
	tcred = __task_cred(task);
	match = uid_eq(me->uid, tcred->euid) && uid_eq(me->uid, tcred->suid) &&
		uid_eq(me->uid, tcred->uid) && gid_eq(me->gid, tcred->egid) &&
		gid_eq(me->gid, tcred->sgid) && gid_eq(me->gid, tcred->gid);
	rcu_read_unlock();
	return match;
}

static bool pmuctx_dumpable(struct task_struct *task)
{
	struct mm_struct *mm = get_task_mm(task);
	bool dumpable;

	if (!mm)
		return false;
	dumpable = pmuctx_dumpable_by_owner(task, mm);
	mmput(mm);
	return dumpable;
}

static unsigned int attach_scope = 1;
module_param(attach_scope, uint, 0644);
MODULE_PARM_DESC(attach_scope,
		 "who may count other tasks, as Yama's ptrace_scope: 0 same credentials, 1 descendants and tracees, 2 CAP_PERFMON/CAP_SYS_PTRACE only, 3 nobody");

/* 0, or -EACCES with the reason left to Documentation/uapi.rst. */
int pmuctx_may_attach(struct task_struct *task)
{
	unsigned int scope = READ_ONCE(attach_scope);

	if (same_thread_group(task, current))
		return 0;
	if (scope >= 3)
		return -EACCES;
	if (capable(CAP_PERFMON) || capable(CAP_SYS_PTRACE))
		return 0;
	if (scope >= 2)
		return -EACCES;
	if (scope == 1 && pmuctx_is_tracee(task))
		return 0;
	if ((scope == 0 || pmuctx_is_descendant(task)) &&
	    pmuctx_creds_match(task) && pmuctx_dumpable(task))
		return 0;
	/*
	 * A task on its way out has dropped its mm (exit_mm() comes after
	 * PF_EXITING is set), so it is not "dumpable": it is gone, not
	 * forbidden.  Its exit fold (a task work now) keeps it findable a
	 * little longer than before, which made the fuzzer see EACCES.
	 */
	if (READ_ONCE(task->flags) & PF_EXITING)
		return -ESRCH;
	return -EACCES;
}
