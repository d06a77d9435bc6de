// SPDX-License-Identifier: GPL-2.0
/*
 * Task links: the per-task preempt notifier that points at the task's
 * context, and our own index of them (task_struct has no room for us, and
 * another task's notifier list may change under a reader in process
 * context).
 */
#include <linux/hash.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include "pmuctx.h"

/*
 * Index of links by task: 1024 buckets, each with its own lock, so that
 * forks and exits on different CPUs (of different tasks) never share one.
 * Writers of a bucket: attach (process context), fork and exit hooks
 * (preemption disabled), under the bucket's lock; readers walk it under
 * RCU.  A task's link always hashes to the same bucket, so the attach's
 * TASK_NEW check and the fork hook's add are serialised by that bucket's
 * lock.  Never taken in IRQ context, so plain spinlocks; a bucket lock
 * nests inside nothing and takes nothing.
 */
#define PMUCTX_LINK_BITS	10

struct pmuctx_link_bucket {
	spinlock_t lock;		/* writers of @links */
	struct hlist_head links;	/* RCU readers */
};

static struct pmuctx_link_bucket pmuctx_link_index[1 << PMUCTX_LINK_BITS] = {
	[0 ... (1 << PMUCTX_LINK_BITS) - 1] = {
		.lock = __SPIN_LOCK_UNLOCKED(pmuctx_link_index.lock),
	},
};

static struct pmuctx_link_bucket *pmuctx_link_bucket(const struct task_struct *t)
{
	return &pmuctx_link_index[hash_ptr(t, PMUCTX_LINK_BITS)];
}

struct pmuctx_link *pmuctx_link_alloc(struct task_struct *t, gfp_t gfp)
{
	struct pmuctx_link *link = kzalloc(sizeof(*link), gfp);

	if (!link)
		return NULL;
	preempt_notifier_init(&link->notifier, &pmuctx_preempt_ops);
	refcount_set(&link->refs, 1);
	link->task = t;
	pmuctx_users_get();
	return link;
}

static void pmuctx_link_free_rcu(struct rcu_head *head)
{
	kfree(container_of(head, struct pmuctx_link, rcu));
	pmuctx_users_put();
}

/* A link never published (an unused kit's): atomic context is fine. */
void pmuctx_link_free_unused(struct pmuctx_link *link)
{
	kfree(link);
	pmuctx_users_put();
}

void pmuctx_link_put(struct pmuctx_link *link)
{
	if (refcount_dec_and_test(&link->refs))
		call_rcu(&link->rcu, pmuctx_link_free_rcu);
}

void pmuctx_link_index_add(struct pmuctx_link *link)
{
	struct pmuctx_link_bucket *b = pmuctx_link_bucket(link->task);

	spin_lock(&b->lock);
	hlist_add_head_rcu(&link->index_node, &b->links);
	spin_unlock(&b->lock);
}

void pmuctx_link_index_del(struct pmuctx_link *link)
{
	struct pmuctx_link_bucket *b = pmuctx_link_bucket(link->task);

	spin_lock(&b->lock);
	hlist_del_init_rcu(&link->index_node);
	spin_unlock(&b->lock);
}

static struct pmuctx_link *pmuctx_link_find_rcu(struct task_struct *t)
{
	struct pmuctx_link *link;

	hlist_for_each_entry_rcu(link, &pmuctx_link_bucket(t)->links, index_node)
		if (link->task == t && !READ_ONCE(link->exited))
			return link;
	return NULL;
}

/* A referenced link of @t from the index, or NULL. */
struct pmuctx_link *pmuctx_link_lookup(struct task_struct *t)
{
	struct pmuctx_link *link;

	rcu_read_lock();
	link = pmuctx_link_find_rcu(t);
	if (link && !refcount_inc_not_zero(&link->refs))
		link = NULL;
	rcu_read_unlock();
	return link;
}

/*
 * Runs in the target task on its way back to user space: only a task may
 * register its own preempt notifier.  A target already exiting never got
 * its exit hook for this link, so it is retired here instead.
 */
static void pmuctx_link_register_work(struct callback_head *head)
{
	struct pmuctx_link *link = container_of(head, struct pmuctx_link,
						register_work);

	if (link->exited) {
		/* Detached before it ever registered. */
	} else if ((current->flags & PF_EXITING) ||
		   (current->self_exec_id != link->exec_id &&
		    pmuctx_exec_detaches(current))) {
		/* Gone, or exec'd into an image its attacher may not count. */
		pmuctx_task_exited(link);
	} else {
		/* An exec since the attach that kept the counters: its image. */
		WRITE_ONCE(link->image_mm, current->mm);
		preempt_disable();
		preempt_notifier_register(&link->notifier);
		link->registered = true;
		pmuctx_sched_load_current(link);
		preempt_enable();
	}
	pmuctx_link_put(link);	/* the work's reference */
}

/*
 * The link of @t, created with an empty context if it has none.  Returns a
 * referenced link or an ERR_PTR.  Process context.
 */
struct pmuctx_link *pmuctx_link_get_or_create(struct task_struct *t)
{
	struct pmuctx_link_bucket *bucket;
	struct pmuctx_link *link, *raced;
	struct pmuctx_context *ctx;
	int err;

	link = pmuctx_link_lookup(t);
	if (link)
		return link;

	link = pmuctx_link_alloc(t, GFP_KERNEL_ACCOUNT);
	if (!link)
		return ERR_PTR(-ENOMEM);
	ctx = pmuctx_ctx_alloc(GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		pmuctx_link_put(link);
		return ERR_PTR(-ENOMEM);
	}
	pmuctx_ctx_seed_mux(ctx);
	ctx->task = t;
	ctx->link = link;
	RCU_INIT_POINTER(link->ctx, ctx);
	link->migrations_at_out = READ_ONCE(t->se.nr_migrations);
	/* The caller holds the target's exec_update_lock: no exec meanwhile. */
	link->exec_id = t->self_exec_id;
	link->image_mm = READ_ONCE(t->mm);

	bucket = pmuctx_link_bucket(t);
	spin_lock(&bucket->lock);
	rcu_read_lock();
	raced = pmuctx_link_find_rcu(t);
	if (raced && refcount_inc_not_zero(&raced->refs)) {
		rcu_read_unlock();
		spin_unlock(&bucket->lock);
		RCU_INIT_POINTER(link->ctx, NULL);
		pmuctx_ctx_put(ctx);
		pmuctx_link_put(link);
		return raced;
	}
	rcu_read_unlock();
	/*
	 * A child is findable by pid before its parent's fork hook gave it
	 * its link, and stays TASK_NEW until after that hook.  Under the
	 * child's bucket lock, which the hook takes to index the link:
	 * TASK_NEW and no link means the hook may still add one, so refuse
	 * rather than make a second.  Waiting is no option: the parent may
	 * fault (even on a userfaultfd page) before it wakes the child.
	 */
	if (READ_ONCE(t->__state) == TASK_NEW) {
		spin_unlock(&bucket->lock);
		RCU_INIT_POINTER(link->ctx, NULL);
		pmuctx_ctx_put(ctx);
		pmuctx_link_put(link);
		return ERR_PTR(-EAGAIN);
	}
	/*
	 * Every reference the caller and the register work hold is taken
	 * before the link can be found: another attacher may then open and
	 * close a counter on it, and the detach that close queues drops the
	 * link's own reference (found by the arm64 debug lane's fuzzer: freed
	 * here, between the publication and a later increment).
	 */
	refcount_inc(&link->refs);	/* the caller's */
	if (t != current)
		refcount_inc(&link->refs);	/* the register work's */
	hlist_add_head_rcu(&link->index_node, &bucket->links);
	spin_unlock(&bucket->lock);

	if (t == current) {
		preempt_disable();
		preempt_notifier_register(&link->notifier);
		link->registered = true;
		pmuctx_sched_load_current(link);
		preempt_enable();
		return link;
	}

	init_task_work(&link->register_work, pmuctx_link_register_work);
	err = task_work_add(t, &link->register_work, TWA_RESUME);
	if (err) {
		/*
		 * Past exit_task_work(): the task is gone for our purposes,
		 * and every task work it had has run, so a detach that
		 * retired the link meanwhile is over.
		 */
		pmuctx_link_put(link);	/* the work's */
		if (!READ_ONCE(link->exited))
			pmuctx_task_exited(link);
		pmuctx_link_put(link);	/* the caller's */
		return ERR_PTR(-ESRCH);
	}
	return link;
}

/*
 * Pin the context the link currently points to, so no swap moves it to
 * another task while an attach changes it.  Returns a referenced, pinned
 * context, or NULL when the task exited.
 */
struct pmuctx_context *pmuctx_link_pin_ctx(struct pmuctx_link *link)
{
	struct pmuctx_context *ctx;
	unsigned long flags;
	bool dead;

	for (;;) {
		rcu_read_lock();
		ctx = rcu_dereference(link->ctx);
		if (ctx && !refcount_inc_not_zero(&ctx->refs))
			ctx = NULL;
		rcu_read_unlock();
		if (!ctx)
			return NULL;
		pmuctx_ctx_lock_irqsave(ctx, flags);
		if (ctx->link == link && !ctx->dead) {
			ctx->pin_count++;
			pmuctx_ctx_unlock_irqrestore(ctx, flags);
			return ctx;
		}
		dead = ctx->dead;
		pmuctx_ctx_unlock_irqrestore(ctx, flags);
		if (dead || READ_ONCE(link->exited)) {
			pmuctx_ctx_put(ctx);
			return NULL;
		}
		/* Swapped away meanwhile: follow the link again. */
		pmuctx_ctx_put(ctx);
		cpu_relax();
	}
}

void pmuctx_ctx_unpin(struct pmuctx_context *ctx)
{
	unsigned long flags;

	pmuctx_ctx_lock_irqsave(ctx, flags);
	ctx->pin_count--;
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
	pmuctx_ctx_put(ctx);
}

/*
 * An open that pinned @ctx failed: unpin it, and if it is still empty (a
 * link made for that open), let its holder drop the link as it would
 * after a close of its last counter, so a failed open leaves the target
 * unhooked and the module free to go.
 */
void pmuctx_ctx_unpin_failed(struct pmuctx_context *ctx)
{
	unsigned long flags;

	pmuctx_ctx_lock_irqsave(ctx, flags);
	ctx->pin_count--;
	if (!ctx->nr_counters)
		pmuctx_link_queue_detach(ctx);
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
	pmuctx_ctx_put(ctx);
}

/*
 * Runs in the holder on its way back to user space once its context lost
 * its last counter: unregister and free everything, so an idle task pins
 * neither memory nor the module.  A context that got a counter again (or
 * is pinned by an attach) stays.
 */
static void pmuctx_link_detach_work(struct callback_head *head)
{
	struct pmuctx_link *link = container_of(head, struct pmuctx_link,
						detach_work);
	struct pmuctx_context *ctx;
	unsigned long flags;
	bool empty = false;

	ctx = rcu_dereference_protected(link->ctx, link->task == current);
	if (!ctx || link->exited || (current->flags & PF_EXITING))
		goto out;

	mutex_lock(&ctx->mutex);
	preempt_disable();
	pmuctx_ctx_lock_irqsave(ctx, flags);
	link->detach_queued = false;
	if (!ctx->nr_counters && !ctx->pin_count && ctx->link == link &&
	    rcu_access_pointer(link->ctx) == ctx) {
		empty = true;
		pmuctx_ctx_fold_holder(ctx);
		if (ctx->loaded_cpu == smp_processor_id())
			pmuctx_ctx_unload(ctx);
		ctx->dead = true;
		ctx->task = NULL;
		ctx->link = NULL;
	}
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
	if (empty) {
		if (link->registered)
			preempt_notifier_unregister(&link->notifier);
		link->registered = false;
		RCU_INIT_POINTER(link->ctx, NULL);
		WRITE_ONCE(link->exited, true);
		pmuctx_link_index_del(link);
	}
	preempt_enable();
	mutex_unlock(&ctx->mutex);
	if (empty) {
		pmuctx_ctx_put(ctx);	/* the link's */
		pmuctx_link_put(link);	/* alive-with-task */
	}
out:
	pmuctx_link_put(link);	/* the work's */
}

/* ctx->lock held: the context just lost its last counter. */
void pmuctx_link_queue_detach(struct pmuctx_context *ctx)
{
	struct pmuctx_link *link = ctx->link;

	lockdep_assert_held(&ctx->lock);
	if (ctx->dead || !link || !ctx->task || link->detach_queued)
		return;
	refcount_inc(&link->refs);
	init_task_work(&link->detach_work, pmuctx_link_detach_work);
	if (task_work_add(ctx->task, &link->detach_work, TWA_RESUME)) {
		/* Exiting: its exit hook frees everything anyway. */
		refcount_dec(&link->refs);
		return;
	}
	link->detach_queued = true;
}
