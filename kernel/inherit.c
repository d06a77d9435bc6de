// SPDX-License-Identifier: GPL-2.0
/*
 * Fork, exit and exec: inherited counters are cloned into a child before it
 * first runs, fold back into their originals when it exits, enable_on_exec
 * counters start at exec, and an exec that makes the task non-dumpable
 * (setuid, file capabilities) ends counting as an exit would.  The hooks
 * are the scheduler's tracepoints, which call us with preemption disabled:
 * no sleeping, no mutexes, no allocation (fork uses a prepared kit).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/prandom.h>
#include <linux/sched/coredump.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "pmuctx.h"
#include "compat/dumpable.h"

static unsigned int pmuctx_nr_inheriting(struct pmuctx_context *ctx,
					 bool thread)
{
	return thread ? ctx->nr_inherit + ctx->nr_inherit_thread :
			ctx->nr_inherit;
}

/*
 * pctx->lock held.  Fill the kit's clones from the parent context, in the
 * parent's order (equivalence relies on it), groups included.  Counters
 * whose original is being closed are not copied.  Returns the clones used.
 */
static unsigned int pmuctx_fork_fill(struct pmuctx_fork_kit *kit,
				     struct pmuctx_context *pctx, bool thread)
{
	static const u64 zero_clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_context *cctx = kit->ctx;
	struct pmuctx_counter *c, *clone, *orig, *lorig;
	unsigned int i = 0, j;

	list_for_each_entry(c, &pctx->counters, ctx_entry) {
		if (!pmuctx_counter_inherits(c, thread))
			continue;
		orig = c->parent ?: c;
		if (READ_ONCE(orig->fam->closing))
			continue;
		clone = kit->clones[i++];
		pmuctx_family_hold(clone, orig);
		clone->attr = c->attr;
		clone->id = orig->id;
		clone->ctx = cctx;
		clone->enable_seq = READ_ONCE(orig->enable_seq);
		pmuctx_ctx_get(cctx);
		clone->mux_off = c->mux_off;
		pmuctx_counter_set_enabled(clone, c->enabled, zero_clk);
		if (pmuctx_counter_is_hw(c)) {
			/* Same slots as the parent: a swap leaves the PMU as is. */
			clone->hw_config = c->hw_config;
			/* A rate: the child starts at the parent's period. */
			if (c->attr.flags & PMUCTX_ATTR_FREQ)
				pmuctx_freq_start(clone, c->freq_period);
			else
				clone->period_left = c->attr.sample_period;
			pmuctx_mux_copy_slot(cctx, clone, c);
		} else if (c->attr.type == PMUCTX_TYPE_RANGE) {
			clone->period_left = c->attr.sample_period;
		}
		if (c->leader != c) {
			/* The leader inherits too (checked at open) unless closing. */
			lorig = c->leader->parent ?: c->leader;
			for (j = 0; j < i - 1; j++)
				if (kit->clones[j]->parent == lorig)
					break;
			if (j < i - 1) {
				clone->leader = kit->clones[j];
				list_add_tail(&clone->sibling_entry,
					      &clone->leader->siblings);
			}
		}
		list_add_tail(&clone->ctx_entry, &cctx->counters);
		pmuctx_ctx_tally(cctx, clone, 1);
	}

	/*
	 * Clones of a complete context are equivalent to it (flattened).  The
	 * swap key stays 0 until the child has its own fork kit.
	 */
	if (i == pctx->nr_counters)
		cctx->family = pctx->family ?: pctx->generation;
	else
		cctx->family = pctx->generation | (thread ? 1 : 2);
	/*
	 * The clone has the parent's units on the PMU (its slots), but it
	 * chooses afresh, from a random place and at a rate of its own,
	 * before it first counts: clones that all started on the parent's
	 * units would count their own start (fork's return, exec: kernel work
	 * every child does first) only on those, and that start is the whole
	 * life of a clone that never rotates (Documentation/multiplexing.rst, "Clones").  A
	 * partial copy (a group split by a closing leader, counters left out)
	 * must choose again anyway.
	 */
	cctx->mux_rotate = pctx->mux_rotate;
	cctx->mux_dirty = pctx->mux_dirty || pctx->mux_rotate ||
			  (i != pctx->nr_counters && cctx->nr_hw);
	cctx->mux_fresh = cctx->mux_dirty;
	prandom_seed_state(&cctx->mux_rnd,
			   (u64)prandom_u32_state(&pctx->mux_rnd) << 32 |
			   prandom_u32_state(&pctx->mux_rnd));
	pmuctx_mux_draw_stride(cctx);
	return i;
}

static void pmuctx_fork_failed(struct pmuctx_context *pctx, bool thread)
{
	struct pmuctx_counter *c;

	list_for_each_entry(c, &pctx->counters, ctx_entry)
		if (pmuctx_counter_inherits(c, thread))
			atomic64_inc(&(c->parent ?: c)->fam->inherit_failed);
}

/*
 * Make the clones visible to their originals (family reads, enable,
 * close).  A family enable/disable that ran while the parent's instance
 * was copied did not see this clone: give it the family's new state.
 */
static bool pmuctx_fork_publish(struct pmuctx_counter *clone)
{
	static const u64 zero_clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_counter *orig = clone->parent;
	struct pmuctx_family *fam = orig->fam;
	struct pmuctx_family_shard *sh;
	bool published = false;
	u32 seq;

	/* The fill's CPU's shard: preemption has been off since. */
	sh = &fam->shards[clone->shard];
	if (!test_bit(clone->shard, fam->shard_cpus)) {
		set_bit(clone->shard, fam->shard_cpus);
		/*
		 * Fully ordered: pairs with family enable's and close's
		 * barriers (pmuctx_next_shard()) and with walks' second
		 * reading of the generation (pmuctx_shard_gen()).
		 */
		atomic_inc_return(&fam->shard_gen);
	}
	spin_lock(&sh->lock);
	/* Pairs with family enable's releases: @family_on is current. */
	seq = smp_load_acquire(&orig->enable_seq);
	if (clone->enable_seq != seq || (seq & 1))
		pmuctx_counter_set_enabled(clone, READ_ONCE(fam->family_on),
					   zero_clk);
	/* Closed meanwhile: release's walk will not see it, the child sweeps. */
	if (!READ_ONCE(fam->closing)) {
		list_add_tail(&clone->child_entry, &sh->children);
		published = true;
	}
	spin_unlock(&sh->lock);
	return published;
}

/*
 * Hand each counter of @ctx that @needs something to @handle, one at a
 * time: ctx->mutex is held only to find the next (the list changes while
 * @handle sleeps), the counter referenced while it is handled.  @handle
 * must leave it no longer in need, or out of the context, or the walk
 * never ends.  Process context, the kit work of @ctx's holder.
 */
void pmuctx_ctx_handle_each(struct pmuctx_context *ctx,
			    bool (*needs)(const struct pmuctx_counter *c),
			    void (*handle)(struct pmuctx_counter *c))
{
	struct pmuctx_counter *c, *found;

	do {
		found = NULL;
		mutex_lock(&ctx->mutex);
		list_for_each_entry(c, &ctx->counters, ctx_entry) {
			if (needs(c)) {
				found = c;
				pmuctx_counter_get(found);
				break;
			}
		}
		mutex_unlock(&ctx->mutex);
		if (found) {
			handle(found);
			pmuctx_counter_put(found);
		}
	} while (found);
}

/* A clone whose original was closed while its fork was publishing it. */
static bool pmuctx_clone_orphaned(const struct pmuctx_counter *c)
{
	return c->parent && READ_ONCE(c->parent->fam->closing) &&
	       list_empty(&c->child_entry);
}

static void pmuctx_clone_retire(struct pmuctx_counter *c)
{
	if (pmuctx_ctx_remove_counter(c))
		pmuctx_counter_put(c);	/* the context's */
}

/*
 * In the new task, before it first returns to user space: retire the
 * clones whose original was closed while its fork was publishing them.
 */
static void pmuctx_sweep_closed(struct pmuctx_context *ctx)
{
	pmuctx_ctx_handle_each(ctx, pmuctx_clone_orphaned, pmuctx_clone_retire);
}

/* Runs in the task on its way to user space: see pmuctx_kit_queue(). */
static void pmuctx_kit_refill(struct pmuctx_context *ctx)
{
	struct pmuctx_fork_kit *kit = NULL;
	unsigned int nr = 0;

	/* A context without its kit does not swap: it stays ours meanwhile. */
	pmuctx_ctx_lock_irq(ctx);
	if (!ctx->fork_kit && !ctx->dead)
		nr = pmuctx_kit_size(ctx);
	pmuctx_ctx_unlock_irq(ctx);
	if (nr) {
		kit = pmuctx_kit_reuse(nr) ?: pmuctx_kit_alloc(nr);
		if (!kit)
			pr_warn_ratelimited("task %d: no memory for its next fork's clones\n",
					    task_pid_nr(current));
	}
	if (kit) {
		pmuctx_ctx_lock_irq(ctx);
		/* An open that added a counter meanwhile brought its own. */
		if (!ctx->fork_kit && !ctx->dead &&
		    kit->nr >= pmuctx_kit_size(ctx)) {
			ctx->fork_kit = kit;
			kit = NULL;
		}
		pmuctx_ctx_unlock_irq(ctx);
		pmuctx_kit_free(kit);
	}
}

static void pmuctx_kit_work(struct callback_head *head)
{
	struct pmuctx_link *link = container_of(head, struct pmuctx_link,
						kit_work);
	struct pmuctx_context *ctx = NULL;

	link->kit_queued = false;
	/*
	 * The task's context, referenced: no swap can move it while
	 * preemption is off, and one without its kit (the case here) does not
	 * swap at all, so it stays this task's for the sweep and the refill.
	 */
	preempt_disable();
	if (!READ_ONCE(link->exited))
		ctx = rcu_dereference_protected(link->ctx, link->task == current);
	if (ctx)
		pmuctx_ctx_get(ctx);
	preempt_enable();
	if (ctx) {
		if (link->sweep_closed) {
			link->sweep_closed = false;
			pmuctx_sweep_closed(ctx);
		}
		if (!(current->flags & PF_EXITING)) {
			pmuctx_range_watch_clones(ctx);
			pmuctx_hw_bind_clones(ctx);
			pmuctx_kit_refill(ctx);
		}
		pmuctx_ctx_put(ctx);
	}
	pmuctx_link_put(link);	/* the work's */
}

/*
 * Have @t (current, or a child that has not run yet) refill its context's
 * fork kit before it next returns to user space, which is before it can
 * fork again.
 */
void pmuctx_kit_queue(struct pmuctx_link *link, struct task_struct *t)
{
	if (link->kit_queued)
		return;
	refcount_inc(&link->refs);
	init_task_work(&link->kit_work, pmuctx_kit_work);
	if (task_work_add(t, &link->kit_work, TWA_RESUME)) {
		refcount_dec(&link->refs);	/* exiting: nothing to refill */
		return;
	}
	link->kit_queued = true;
}

/*
 * The scheduler's fork tracepoint: preemption off, so nothing here may
 * sleep or allocate.  Everything the child needs was allocated in process
 * context beforehand (the context's fork kit); the parent and the child
 * each refill theirs before they next return to user space.
 */
static void pmuctx_on_fork(void *data, struct task_struct *parent,
			   struct task_struct *child)
{
	bool thread = child->tgid == parent->tgid;
	struct pmuctx_context *pctx, *cctx;
	struct pmuctx_fork_kit *kit;
	struct pmuctx_link *plink, *link;
	unsigned int need, used, i;
	unsigned long flags;

	/* Kernel and io_uring workers never run user code: nothing to count. */
	if (child->flags & (PF_KTHREAD | PF_IO_WORKER))
		return;
	plink = pmuctx_link_of_current();
	if (!plink)
		return;
	pctx = rcu_dereference_protected(plink->ctx, 1);
	if (!pctx)
		return;

	pmuctx_ctx_lock_irqsave(pctx, flags);
	need = pmuctx_nr_inheriting(pctx, thread);
	if (!need || pctx->dead) {
		pmuctx_ctx_unlock_irqrestore(pctx, flags);
		return;
	}
	kit = pctx->fork_kit;
	if (!kit || kit->nr < need) {
		/* Only when refilling it found no memory. */
		pmuctx_fork_failed(pctx, thread);
		pmuctx_ctx_unlock_irqrestore(pctx, flags);
		pr_warn_ratelimited("no clones ready for task %d: its counts are not inherited\n",
				    task_pid_nr(child));
		return;
	}
	pctx->fork_kit = NULL;
	used = pmuctx_fork_fill(kit, pctx, thread);
	pmuctx_ctx_unlock_irqrestore(pctx, flags);
	pmuctx_kit_queue(plink, current);

	for (i = used; i < kit->nr; i++)
		pmuctx_counter_free_unused(kit->clones[i]);
	link = kit->link;
	cctx = kit->ctx;
	if (!used) {
		/* Every inheriting counter is being closed. */
		pmuctx_ctx_put(cctx);
		pmuctx_link_free_unused(link);
		kfree(kit);
		return;
	}

	link->task = child;
	link->image_mm = child->mm;
	cctx->task = child;
	cctx->link = link;
	RCU_INIT_POINTER(link->ctx, cctx);
	link->migrations_at_out = READ_ONCE(child->se.nr_migrations);
	for (i = 0; i < used; i++)
		if (!pmuctx_fork_publish(kit->clones[i]))
			link->sweep_closed = true;
	kfree(kit);

	/* The child has not run yet: nobody else touches its list. */
	hlist_add_head(&link->notifier.link, &child->preempt_notifiers);
	link->registered = true;
	pmuctx_link_index_add(link);
	pmuctx_kit_queue(link, child);
}

/*
 * The holder of @link is gone (exit hook, or a registration that came too
 * late): freeze its context and let the exit work fold the clones.
 */
void pmuctx_task_exited(struct pmuctx_link *link)
{
	/* Exit and late registration run once, after every swap of it. */
	struct pmuctx_context *ctx = rcu_dereference_protected(link->ctx, 1);
	struct pmuctx_fork_kit *kit;
	struct pmuctx_counter *c;
	unsigned long flags;

	if (ctx) {
		pmuctx_ctx_lock_irqsave(ctx, flags);
		pmuctx_ctx_fold_holder(ctx);
		if (ctx->loaded_cpu == smp_processor_id())
			pmuctx_ctx_unload(ctx);
		/* Loaded elsewhere, it would count that CPU's tasks. */
		if (PMUCTX_CHECK_INVARIANTS)
			WARN_ON_ONCE(ctx->loaded_cpu >= 0);
		kit = ctx->fork_kit;
		ctx->fork_kit = NULL;
		ctx->dead = true;
		ctx->task = NULL;
		ctx->link = NULL;
		ctx->seq++;
		/* poll() may hang up now: woken outside this raw lock. */
		list_for_each_entry(c, &ctx->counters, ctx_entry)
			if (c->fam)
				irq_work_queue(&c->fam->wake_work);
		pmuctx_ctx_unlock_irqrestore(ctx, flags);
		pmuctx_kit_retire(kit);
		RCU_INIT_POINTER(link->ctx, NULL);
		pmuctx_ctx_queue_exit(ctx, link);	/* takes link's ref */
	}
	WRITE_ONCE(link->exited, true);
	pmuctx_link_index_del(link);
	pmuctx_link_put(link);
}

/*
 * The task stops counting for good (exit, or an exec that detaches).  No
 * switch may come between the unregister and the unload in
 * pmuctx_task_exited(): without its notifier the task would leave its
 * context loaded, the PMU counting whoever runs on that CPU next, the
 * setuid image included, and a read of the context would fold it.
 */
static void pmuctx_task_stop(struct pmuctx_link *link)
{
	preempt_disable();
	preempt_notifier_unregister(&link->notifier);
	link->registered = false;
	pmuctx_task_exited(link);
	preempt_enable();
}

static void pmuctx_on_exit(void *data, struct task_struct *p)
{
	struct pmuctx_link *link = pmuctx_link_of_current();

	if (link)
		pmuctx_task_stop(link);
}

/*
 * After an exec that changed credentials the new image must not be
 * counted by whoever counted the old one (as perf does): the mm is no
 * longer dumpable then, and direct attach would be refused too.
 */
bool pmuctx_exec_detaches(struct task_struct *t)
{
	return t->mm && !pmuctx_dumpable_by_owner(t, t->mm);
}

/*
 * The exec's name change (begin_new_exec(), the task_rename tracepoint,
 * task_lock held): the new mm is installed, with only the arguments and
 * the environment on its stack; no image is mapped and the registers are
 * still those the task entered execve() with.  An exec whose mm is
 * already undumpable here (a binary the task may not read, or a task
 * whose effective ids differ from its real ones) detaches now, before
 * the new image exists, as perf does at the credential commit.  A setuid,
 * setgid or file-capability exec becomes undumpable only at that commit,
 * which comes after this and has no hook: it detaches at the exec hook,
 * and until then its samples carry nothing of user space (the task no
 * longer runs its link's @image_mm: pmuctx_user_state_visible()).  A
 * rename without an exec (prctl(PR_SET_NAME), /proc/<pid>/comm) keeps
 * the mm and changes nothing: a task that makes itself undumpable stays
 * counted by the counters it had, as on perf; only new attaches are
 * refused.
 */
static void pmuctx_on_rename(void *data, struct task_struct *task,
			     const char *comm)
{
	struct pmuctx_link *link;

	if (task != current || !current->mm)
		return;
	link = pmuctx_link_of_current();
	if (!link || current->mm == READ_ONCE(link->image_mm))
		return;
	if (pmuctx_exec_detaches(current))
		pmuctx_task_stop(link);
}

/*
 * enable_on_exec counters start; the context leaves its family.  A
 * non-dumpable exec ends counting as an exit would: clones fold into their
 * originals, originals on this task stop and report hang-up; the samples
 * that fold records carry nothing of the new image (see above).  Another
 * exec's samples show the new image from here on.
 */
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
	if (pmuctx_exec_detaches(current)) {
		pmuctx_task_stop(link);
		return;
	}
	WRITE_ONCE(link->image_mm, current->mm);
	ctx = rcu_dereference_protected(link->ctx, 1);
	if (!ctx)
		return;
	pmuctx_ctx_lock_irqsave(ctx, flags);
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
		/* Loaded here, IRQs off: counters off the PMU get on now. */
		pmuctx_mux_resched(ctx);
		pmuctx_ctx_update_user_pages(ctx);
	}
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
}

static struct {
	const char *name;
	void *probe;
	struct tracepoint *tp;
} pmuctx_hooks[] = {
	{ "sched_process_fork", pmuctx_on_fork },
	{ "sched_process_exit", pmuctx_on_exit },
	{ "sched_process_exec", pmuctx_on_exec },
	{ "task_rename", pmuctx_on_rename },
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
	pmuctx_kit_drain_spares();
}
