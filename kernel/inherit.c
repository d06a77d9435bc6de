// SPDX-License-Identifier: GPL-2.0
/*
 * Fork, exit and exec: inherited counters are cloned into a child before it
 * first runs, fold back into their originals when it exits, and
 * enable_on_exec counters start at exec.  The hooks are the scheduler's
 * tracepoints, which call us with preemption disabled: no sleeping, no
 * mutexes, atomic allocations only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "pmuctx.h"

#define PMUCTX_FORK_RETRIES	4

/* Clones and the objects that hold them, allocated before taking locks. */
struct pmuctx_fork_alloc {
	struct pmuctx_link *link;
	struct pmuctx_context *ctx;
	struct pmuctx_counter **clones;
	unsigned int nr;
};

static void pmuctx_fork_free(struct pmuctx_fork_alloc *fa)
{
	unsigned int i;

	for (i = 0; i < fa->nr; i++)
		if (fa->clones[i])
			pmuctx_counter_put(fa->clones[i]);
	kfree(fa->clones);
	if (fa->ctx)
		pmuctx_ctx_put(fa->ctx);
	if (fa->link)
		pmuctx_link_put(fa->link);
}

static int pmuctx_fork_prealloc(struct pmuctx_fork_alloc *fa,
				struct task_struct *child, unsigned int nr)
{
	const gfp_t gfp = GFP_ATOMIC | __GFP_NOWARN;
	unsigned int i;

	memset(fa, 0, sizeof(*fa));
	fa->clones = kcalloc(nr, sizeof(*fa->clones), gfp);
	if (!fa->clones)
		return -ENOMEM;
	fa->nr = nr;
	for (i = 0; i < nr; i++) {
		fa->clones[i] = pmuctx_counter_alloc(gfp);
		if (!fa->clones[i])
			return -ENOMEM;
	}
	fa->ctx = pmuctx_ctx_alloc(gfp);
	fa->link = pmuctx_link_alloc(child, gfp);
	return fa->ctx && fa->link ? 0 : -ENOMEM;
}

static unsigned int pmuctx_nr_inheriting(struct pmuctx_context *ctx,
					 bool thread)
{
	return thread ? ctx->nr_inherit + ctx->nr_inherit_thread :
			ctx->nr_inherit;
}

/*
 * pctx->lock held.  Fill the preallocated clones from the parent context,
 * in the parent's order (equivalence relies on it), groups included.
 */
static void pmuctx_fork_fill(struct pmuctx_fork_alloc *fa,
			     struct pmuctx_context *pctx, bool thread)
{
	static const u64 zero_clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_context *cctx = fa->ctx;
	struct pmuctx_counter *c, *clone, *orig;
	unsigned int i = 0, j;

	list_for_each_entry(c, &pctx->counters, ctx_entry) {
		if (!pmuctx_counter_inherits(c, thread))
			continue;
		clone = fa->clones[i++];
		orig = c->parent ?: c;
		pmuctx_counter_get(orig);
		clone->parent = orig;
		clone->attr = c->attr;
		clone->id = orig->id;
		clone->ctx = cctx;
		pmuctx_ctx_get(cctx);
		pmuctx_counter_set_enabled(clone, c->enabled, zero_clk);
		if (pmuctx_counter_is_hw(c)) {
			/* Same slots as the parent: a swap leaves the PMU as is. */
			clone->hw_idx = c->hw_idx;
			clone->hw_config = c->hw_config;
			clone->period_left = c->attr.sample_period;
			cctx->slots[c->hw_idx] = clone;
			__set_bit(c->hw_idx, &cctx->used_mask);
			cctx->nr_hw++;
		}
		if (c->leader != c) {
			/* The leader inherits too (checked at open): find it. */
			for (j = 0; j < i - 1; j++)
				if (fa->clones[j]->parent ==
				    (c->leader->parent ?: c->leader))
					break;
			clone->leader = fa->clones[j];
			list_add_tail(&clone->sibling_entry,
				      &clone->leader->siblings);
		}
		list_add_tail(&clone->ctx_entry, &cctx->counters);
		cctx->nr_counters++;
		if (clone->attr.flags & PMUCTX_ATTR_INHERIT_THREAD)
			cctx->nr_inherit_thread++;
		else
			cctx->nr_inherit++;
	}

	/* Clones of a complete context are equivalent to it (flattened). */
	if (i == pctx->nr_counters)
		cctx->family = pctx->family ?: pctx->generation;
	else
		cctx->family = pctx->generation | (thread ? 1 : 2);
}

static void pmuctx_fork_failed(struct pmuctx_context *pctx, bool thread)
{
	struct pmuctx_counter *c;

	list_for_each_entry(c, &pctx->counters, ctx_entry)
		if (pmuctx_counter_inherits(c, thread))
			atomic64_inc(&(c->parent ?: c)->inherit_failed);
}

static void pmuctx_on_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	bool thread = child->tgid == parent->tgid;
	struct pmuctx_fork_alloc fa;
	struct pmuctx_context *pctx;
	struct pmuctx_link *plink;
	unsigned long flags;
	unsigned int nr, i;
	int tries;
	u64 gen;

	if (child->flags & PF_KTHREAD)
		return;
	plink = pmuctx_link_of_current();
	if (!plink)
		return;
	pctx = rcu_dereference_protected(plink->ctx, 1);
	if (!pctx)
		return;

	for (tries = 0; tries < PMUCTX_FORK_RETRIES; tries++) {
		raw_spin_lock_irqsave(&pctx->lock, flags);
		nr = pmuctx_nr_inheriting(pctx, thread);
		gen = pctx->generation;
		raw_spin_unlock_irqrestore(&pctx->lock, flags);
		if (!nr)
			return;

		if (pmuctx_fork_prealloc(&fa, child, nr)) {
			pmuctx_fork_free(&fa);
			break;
		}
		raw_spin_lock_irqsave(&pctx->lock, flags);
		if (pctx->generation == gen) {
			pmuctx_fork_fill(&fa, pctx, thread);
			raw_spin_unlock_irqrestore(&pctx->lock, flags);
			goto publish;
		}
		/* The parent's counters changed meanwhile: start over. */
		raw_spin_unlock_irqrestore(&pctx->lock, flags);
		pmuctx_fork_free(&fa);
	}
	raw_spin_lock_irqsave(&pctx->lock, flags);
	pmuctx_fork_failed(pctx, thread);
	raw_spin_unlock_irqrestore(&pctx->lock, flags);
	pr_warn_ratelimited("could not clone counters into task %d: its counts are not inherited\n",
			    task_pid_nr(child));
	return;

publish:
	for (i = 0; i < fa.nr; i++) {
		struct pmuctx_counter *clone = fa.clones[i];
		struct pmuctx_counter *orig = clone->parent;

		spin_lock(&orig->child_lock);
		list_add_tail(&clone->child_entry, &orig->children);
		spin_unlock(&orig->child_lock);
	}
	kfree(fa.clones);

	fa.ctx->task = child;
	fa.ctx->link = fa.link;
	RCU_INIT_POINTER(fa.link->ctx, fa.ctx);
	fa.link->migrations_at_out = READ_ONCE(child->se.nr_migrations);
	/* The child has not run yet: nobody else touches its list. */
	hlist_add_head(&fa.link->notifier.link, &child->preempt_notifiers);
	fa.link->registered = true;
	pmuctx_link_index_add(fa.link);
}

/*
 * The holder of @link is gone (exit hook, or a registration that came too
 * late): freeze its context and let the exit work fold the clones.
 */
void pmuctx_task_exited(struct pmuctx_link *link)
{
	/* Exit and late registration run once, after every swap of it. */
	struct pmuctx_context *ctx = rcu_dereference_protected(link->ctx, 1);
	struct pmuctx_counter *c;
	unsigned long flags;

	if (ctx) {
		raw_spin_lock_irqsave(&ctx->lock, flags);
		if (ctx->clocks_running)
			pmuctx_ctx_fold_holder(ctx, ctx->task, link);
		if (ctx->loaded_cpu == smp_processor_id())
			pmuctx_ctx_unload(ctx);
		ctx->dead = true;
		ctx->task = NULL;
		ctx->link = NULL;
		ctx->seq++;
		/* poll() may hang up now: woken outside this raw lock. */
		list_for_each_entry(c, &ctx->counters, ctx_entry)
			irq_work_queue(&c->wake_work);
		raw_spin_unlock_irqrestore(&ctx->lock, flags);
		RCU_INIT_POINTER(link->ctx, NULL);
		queue_work(pmuctx_wq, &ctx->exit_work);	/* takes link's ref */
	}
	WRITE_ONCE(link->exited, true);
	pmuctx_link_index_del(link);
	pmuctx_link_put(link);
}

static void pmuctx_on_exit(void *data, struct task_struct *p)
{
	struct pmuctx_link *link = pmuctx_link_of_current();

	if (!link)
		return;
	preempt_notifier_unregister(&link->notifier);
	link->registered = false;
	pmuctx_task_exited(link);
}

/* enable_on_exec counters start; the context leaves its family. */
static void pmuctx_on_exec(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	struct pmuctx_link *link = pmuctx_link_of_current();
	u64 clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_context *ctx;
	struct pmuctx_counter *c;
	unsigned long flags;
	bool changed = false;

	if (!link)
		return;
	ctx = rcu_dereference_protected(link->ctx, 1);
	if (!ctx)
		return;
	raw_spin_lock_irqsave(&ctx->lock, flags);
	pmuctx_ctx_clocks_now(ctx, clk);
	list_for_each_entry(c, &ctx->counters, ctx_entry) {
		if ((c->attr.flags & PMUCTX_ATTR_ENABLE_ON_EXEC) &&
		    !c->enabled) {
			pmuctx_counter_set_enabled(c, true, clk);
			changed = true;
		}
	}
	if (changed) {
		pmuctx_ctx_changed(ctx);
		pmuctx_ctx_update_user_pages(ctx);
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

static struct {
	const char *name;
	void *probe;
	struct tracepoint *tp;
} pmuctx_hooks[] = {
	{ "sched_process_fork", pmuctx_on_fork },
	{ "sched_process_exit", pmuctx_on_exit },
	{ "sched_process_exec", pmuctx_on_exec },
};

static void pmuctx_find_tracepoint(struct tracepoint *tp, void *unused)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmuctx_hooks); i++)
		if (!strcmp(tp->name, pmuctx_hooks[i].name))
			pmuctx_hooks[i].tp = tp;
}

int pmuctx_inherit_init(void)
{
	size_t i;
	int err;

	for_each_kernel_tracepoint(pmuctx_find_tracepoint, NULL);
	for (i = 0; i < ARRAY_SIZE(pmuctx_hooks); i++) {
		if (!pmuctx_hooks[i].tp) {
			pr_err("tracepoint %s not found\n", pmuctx_hooks[i].name);
			err = -ENOENT;
			goto unwind;
		}
		err = tracepoint_probe_register(pmuctx_hooks[i].tp,
						pmuctx_hooks[i].probe, NULL);
		if (err)
			goto unwind;
	}
	return 0;

unwind:
	while (i--)
		tracepoint_probe_unregister(pmuctx_hooks[i].tp,
					    pmuctx_hooks[i].probe, NULL);
	tracepoint_synchronize_unregister();
	return err;
}

void pmuctx_inherit_exit(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmuctx_hooks); i++)
		tracepoint_probe_unregister(pmuctx_hooks[i].tp,
					    pmuctx_hooks[i].probe, NULL);
	tracepoint_synchronize_unregister();
}
