// SPDX-License-Identifier: GPL-2.0
/*
 * The context-switch hot path: preempt notifier sched_in/sched_out, and the
 * equivalent-context swap that leaves the PMU untouched.
 *
 * sched_out(prev, next) runs under the runqueue lock with IRQs off: only
 * raw spinlocks, no allocation.  sched_in(task) runs after the runqueue
 * lock is dropped, IRQs on, preemption off: locks shared with sched_out are
 * taken irqsave.
 */
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include "pmuctx.h"

/*
 * The context whose counters this CPU's PMU holds; the overflow interrupt
 * finds counters only through it.  Written by this CPU's sched hooks with
 * IRQs off.
 */
DEFINE_PER_CPU(struct pmuctx_context *, pmuctx_loaded_ctx);

static struct pmuctx_context *pmuctx_own_ctx(struct pmuctx_link *link)
{
	/* Only the task itself changes its link's context (swaps, exit). */
	return rcu_dereference_protected(link->ctx, link->task == current);
}

/* ctx->lock held, IRQs off, on the holder's CPU: load and unload. */
static void pmuctx_ctx_load(struct pmuctx_context *ctx, int cpu)
{
	/* The PMU stays stopped until the demux pointer is right. */
	__this_cpu_write(pmuctx_loaded_ctx, ctx);
	ctx->loaded_cpu = cpu;
	if (ctx->nr_hw)
		pmuctx_hw->load(ctx);
	pmuctx_ctx_update_user_pages(ctx);
	ctx->loads++;
	ctx->seq++;
}

void pmuctx_ctx_unload(struct pmuctx_context *ctx)
{
	if (ctx->loaded_cpu < 0)
		return;
	if (ctx->nr_hw)
		pmuctx_hw->unload(ctx);
	ctx->loaded_cpu = -1;
	__this_cpu_write(pmuctx_loaded_ctx, NULL);
	pmuctx_ctx_update_user_pages(ctx);
	ctx->seq++;
}

/*
 * The task starts running with its context: credit migrations that
 * happened while it waited, start the clocks, and load the context unless
 * an equivalent swap already left it loaded here.
 */
static void pmuctx_sched_in_locked(struct pmuctx_link *link,
				   struct pmuctx_context *ctx, int cpu)
{
	struct task_struct *t = current;
	u64 migr = READ_ONCE(t->se.nr_migrations);

	ctx->clock[PMUCTX_CLK_MIGRATIONS] += migr - link->migrations_at_out;
	link->migrations_at_out = migr;
	pmuctx_link_snapshot(link, t);
	ctx->clocks_running = true;
	if (ctx->loaded_cpu != cpu)
		pmuctx_ctx_load(ctx, cpu);
}

static void pmuctx_sched_in_link(struct pmuctx_link *link, int cpu)
{
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);
	unsigned long flags;

	if (!ctx)
		return;
	raw_spin_lock_irqsave(&ctx->lock, flags);
	if (!ctx->dead)
		pmuctx_sched_in_locked(link, ctx, cpu);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

static void pmuctx_sched_in(struct preempt_notifier *pn, int cpu)
{
	pmuctx_sched_in_link(container_of(pn, struct pmuctx_link, notifier),
			     cpu);
}

/* For a task that just registered its notifier while running. */
void pmuctx_sched_load_current(struct pmuctx_link *link)
{
	pmuctx_sched_in_link(link, smp_processor_id());
}

/*
 * Hand prev's loaded context to next and take next's (unloaded) one: the
 * PMU keeps counting into the family, which is summed at the original
 * anyway.  O(1) whatever the number of counters: contexts whose values
 * are per task (INHERIT_STAT) are never equivalent.  Both locks held.
 */
static void pmuctx_swap(struct pmuctx_link *link, struct pmuctx_context *ctx,
			struct pmuctx_link *nlink, struct pmuctx_context *nctx,
			struct task_struct *next)
{
	rcu_assign_pointer(link->ctx, nctx);
	rcu_assign_pointer(nlink->ctx, ctx);
	ctx->task = next;
	ctx->link = nlink;
	nctx->task = current;
	nctx->link = link;
	ctx->swaps++;
	ctx->seq++;
	nctx->seq++;
}

/*
 * Lock a context and, if there is one, next's: in address order, so two
 * CPUs (or a reader) locking the same pair cannot deadlock.  IRQs are off.
 */
static void pmuctx_lock_pair(struct pmuctx_context *a, struct pmuctx_context *b)
	__acquires(&a->lock) __acquires(&b->lock)
{
	if (!b) {
		raw_spin_lock(&a->lock);
		__acquire(&b->lock);
	} else if (a < b) {
		raw_spin_lock(&a->lock);
		raw_spin_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
	} else {
		raw_spin_lock(&b->lock);
		raw_spin_lock_nested(&a->lock, SINGLE_DEPTH_NESTING);
	}
}

static void pmuctx_unlock_pair(struct pmuctx_context *a,
			       struct pmuctx_context *b)
	__releases(&a->lock) __releases(&b->lock)
{
	if (b)
		raw_spin_unlock(&b->lock);
	else
		__release(&b->lock);
	raw_spin_unlock(&a->lock);
}

static void pmuctx_sched_out(struct preempt_notifier *pn,
			     struct task_struct *next)
{
	struct pmuctx_link *link = container_of(pn, struct pmuctx_link,
						notifier);
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);
	struct pmuctx_context *nctx = NULL;
	struct pmuctx_link *nlink;
	bool swapped = false;

	if (!ctx)
		return;

	nlink = pmuctx_link_of_stopped(next);
	if (nlink)
		nctx = rcu_dereference_protected(nlink->ctx, 1);
	if (nctx == ctx)
		nctx = NULL;

	pmuctx_lock_pair(ctx, nctx);

	if (!ctx->dead) {
		pmuctx_ctx_fold_holder(ctx, current, link);
		ctx->clock[PMUCTX_CLK_SWITCHES]++;
		link->migrations_at_out = READ_ONCE(current->se.nr_migrations);
		if (nctx && nctx->loaded_cpu < 0 &&
		    ctx->loaded_cpu == smp_processor_id() &&
		    pmuctx_ctx_equivalent(ctx, nctx)) {
			pmuctx_swap(link, ctx, nlink, nctx, next);
			swapped = true;
		}
		if (!swapped)
			pmuctx_ctx_unload(ctx);
	}

	pmuctx_unlock_pair(ctx, nctx);
}

struct preempt_ops pmuctx_preempt_ops = {
	.sched_in = pmuctx_sched_in,
	.sched_out = pmuctx_sched_out,
};
