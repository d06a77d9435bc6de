// SPDX-License-Identifier: GPL-2.0
/* Probe: a task's dumpable mode is its exec state's, not its mm's (7.2). */
#include <linux/sched.h>
#include <linux/sched/exec_state.h>

int pmuctx_probe(struct task_struct *t);
int pmuctx_probe(struct task_struct *t)
{
	return rcu_dereference_raw(t->exec_state)->dumpable == TASK_DUMPABLE_OWNER;
}
