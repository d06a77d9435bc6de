/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a task's image lets its owner in: the dumpable mode that lets a
 * tracer with the task's credentials through ptrace_may_access()
 * (SUID_DUMP_USER, TASK_DUMPABLE_OWNER), lost by an exec that changes
 * credentials or runs an unreadable file.  Up to 6.x it is the mm's
 * (get_dumpable()); later kernels (sid's 7.2) keep it in the task's exec
 * state, task_struct::exec_state, whose accessor is not exported: the
 * field is read under RCU from the struct linux/sched/exec_state.h
 * defines.  @mm is the task's mm, held or stable for the caller; only the
 * mm-based kernels read it.
 * Probe: probes/task_exec_state.c.
 */
#ifndef PMUCTX_COMPAT_DUMPABLE_H
#define PMUCTX_COMPAT_DUMPABLE_H

#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#ifdef PMUCTX_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
#endif

static inline bool pmuctx_dumpable_by_owner(struct task_struct *t,
					    struct mm_struct *mm)
{
#ifdef PMUCTX_HAVE_TASK_EXEC_STATE
	const struct task_exec_state *es;
	bool owner;

	rcu_read_lock();
	es = rcu_dereference(t->exec_state);
	owner = es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return owner;
#else
	return get_dumpable(mm) == SUID_DUMP_USER;
#endif
}

#endif
