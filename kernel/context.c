// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task contexts: allocation, reference counting, generation cookies,
 * equivalence, and the context clocks.
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/memcontrol.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/sched/user.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include "pmuctx.h"

static struct kmem_cache *pmuctx_ctx_cache;
struct workqueue_struct *pmuctx_wq;

/*
 * Cookies are multiples of 4: a clone that got only part of its parent's
 * counters carries parent cookie | 1 (thread clone) or | 2 (fork clone), a
 * family that no context's own generation can ever equal.  Each CPU hands
 * out its own: (sequence << cpu bits | cpu) << 2, unique without a shared
 * counter (no cache line bounced by every fork and open on the machine).
 * Users see them only through pmuctx_cookie_for_user().
 */
static DEFINE_PER_CPU(u64, pmuctx_cookie_seq);
static DEFINE_PER_CPU(u64, pmuctx_id_seq);
static unsigned int pmuctx_cpu_bits;
static siphash_key_t pmuctx_cookie_key;

/* A number no other call with @seq returns: this CPU's next, and the CPU. */
static u64 pmuctx_percpu_unique(u64 __percpu *seq)
{
	u64 n, cpu;

	preempt_disable();
	n = this_cpu_inc_return(*seq);
	cpu = smp_processor_id();
	preempt_enable();
	return (n << pmuctx_cpu_bits) | cpu;
}

u64 pmuctx_new_cookie(void)
{
	return pmuctx_percpu_unique(&pmuctx_cookie_seq) << 2;
}

/*
 * Counter ids (PMUCTX_IOC_ID, PMUCTX_FORMAT_ID): unique and never 0, handed
 * out per CPU like cookies, so that opens on every CPU share no counter.
 */
u64 pmuctx_new_counter_id(void)
{
	return pmuctx_percpu_unique(&pmuctx_id_seq);
}

/*
 * What PMUCTX_IOC_STATS shows of a cookie: equal for equal cookies, 0 for
 * none, and otherwise a keyed hash, so that a user learns whether two
 * contexts are of one family and nothing of how many cookies other users'
 * activity took (the sequence would tell).
 */
u64 pmuctx_cookie_for_user(u64 cookie)
{
	return cookie ? siphash_1u64(cookie, &pmuctx_cookie_key) | 1 : 0;
}

struct pmuctx_context *pmuctx_ctx_alloc(gfp_t gfp)
{
	struct pmuctx_context *ctx = kmem_cache_zalloc(pmuctx_ctx_cache, gfp);

	if (!ctx)
		return NULL;
	refcount_set(&ctx->refs, 1);
	mutex_init(&ctx->mutex);
	raw_spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->counters);
	ctx->loaded_cpu = -1;
	ctx->generation = pmuctx_new_cookie();
	return ctx;
}

/*
 * A context made for an open (not a fork kit's: a fork seeds its clone's
 * from the parent's stream, pmuctx_fork_fill()) gets its own random
 * rotation start and stride.  Not in pmuctx_ctx_alloc(): get_random_u64()
 * refills its batch with ChaCha blocks, ~250 instructions a call on
 * average, which every fork paid for a kit context it then reseeded.
 */
void pmuctx_ctx_seed_mux(struct pmuctx_context *ctx)
{
	prandom_seed_state(&ctx->mux_rnd, get_random_u64());
	pmuctx_mux_draw_stride(ctx);
}

void pmuctx_ctx_get(struct pmuctx_context *ctx)
{
	refcount_inc(&ctx->refs);
}

static void pmuctx_ctx_free_rcu(struct rcu_head *head)
{
	kmem_cache_free(pmuctx_ctx_cache,
			container_of(head, struct pmuctx_context, rcu));
}

/*
 * RCU-delayed: link->ctx is dereferenced under rcu_read_lock() by readers.
 * Safe in atomic context (a kit holds nothing that needs sleeping to free).
 */
void pmuctx_ctx_put(struct pmuctx_context *ctx)
{
	if (refcount_dec_and_test(&ctx->refs)) {
		WARN_ON_ONCE(!list_empty(&ctx->counters));
		pmuctx_kit_free(ctx->fork_kit);
		ctx->fork_kit = NULL;
		call_rcu(&ctx->rcu, pmuctx_ctx_free_rcu);
	}
}

/*
 * Kits are allocated in process context, charged to the caller's memory
 * cgroup: the kit is made by the task that will fork (or by whoever adds
 * it a counter).
 */
static const gfp_t pmuctx_kit_gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL;

/* current's memory cgroup, referenced (NULL without memcg). */
static struct mem_cgroup *pmuctx_memcg_get_current(void)
{
	struct mem_cgroup *memcg = NULL;

#ifdef CONFIG_MEMCG
	rcu_read_lock();
	memcg = mem_cgroup_from_task(current);
	if (memcg && !css_tryget(&memcg->css))
		memcg = NULL;
	rcu_read_unlock();
#endif
	return memcg;
}

/* Whether @memcg (referenced by the caller) is current's. */
static bool pmuctx_memcg_is_current(struct mem_cgroup *memcg)
{
	bool same = true;

#ifdef CONFIG_MEMCG
	rcu_read_lock();
	same = memcg == mem_cgroup_from_task(current);
	rcu_read_unlock();
#endif
	return same;
}

static void pmuctx_memcg_put(struct mem_cgroup *memcg)
{
#ifdef CONFIG_MEMCG
	if (memcg)
		css_put(&memcg->css);
#endif
}

/* A kit of @nr (> 0) empty slots, charged to current's memory cgroup. */
static struct pmuctx_fork_kit *pmuctx_kit_shell(unsigned int nr)
{
	struct pmuctx_fork_kit *kit;

	kit = kzalloc(struct_size(kit, clones, nr), pmuctx_kit_gfp);
	if (kit) {
		kit->nr = nr;
		kit->memcg = pmuctx_memcg_get_current();
	}
	return kit;
}

/* A whole kit: @nr clones, a context and a link. */
struct pmuctx_fork_kit *pmuctx_kit_alloc(unsigned int nr)
{
	const gfp_t gfp = pmuctx_kit_gfp;
	struct pmuctx_fork_kit *kit;

	if (!nr)
		return NULL;
	kit = pmuctx_kit_shell(nr);
	if (!kit)
		return NULL;
	if (!pmuctx_counter_alloc_bulk(gfp, nr, kit->clones)) {
		kfree(kit);
		return NULL;
	}
	kit->ctx = pmuctx_ctx_alloc(gfp);
	kit->link = pmuctx_link_alloc(NULL, gfp);
	if (kit->ctx && kit->link)
		return kit;
	pmuctx_kit_free(kit);
	return NULL;
}

/*
 * A kit one clone bigger than @ctx's current one (@nr slots), with only
 * its last clone allocated: pmuctx_kit_grow() moves the rest over.
 */
struct pmuctx_fork_kit *pmuctx_kit_alloc_growth(unsigned int nr)
{
	struct pmuctx_fork_kit *kit = pmuctx_kit_shell(nr);

	if (!kit)
		return NULL;
	kit->clones[nr - 1] = pmuctx_counter_alloc(pmuctx_kit_gfp);
	if (kit->clones[nr - 1])
		return kit;
	kfree(kit);
	return NULL;
}

/*
 * ctx->lock held.  Make @more (from pmuctx_kit_alloc_growth()) @ctx's
 * kit, with the current kit's clones, context and link moved into it.
 * Returns what the caller frees: the emptied current kit, or @more when
 * the current kit has room already (a bigger spare was reused), or
 * ERR_PTR(-EAGAIN) when @ctx has no kit to grow (a fork took it): then
 * the caller needs a whole kit.
 */
struct pmuctx_fork_kit *pmuctx_kit_grow(struct pmuctx_context *ctx,
					struct pmuctx_fork_kit *more)
{
	struct pmuctx_fork_kit *kit = ctx->fork_kit;
	unsigned int i;

	if (!kit || kit->nr + 1 < more->nr)
		return ERR_PTR(-EAGAIN);
	if (kit->nr >= more->nr)
		return more;
	for (i = 0; i < kit->nr; i++) {
		more->clones[i] = kit->clones[i];
		kit->clones[i] = NULL;
	}
	more->ctx = kit->ctx;
	more->link = kit->link;
	kit->ctx = NULL;
	kit->link = NULL;
	ctx->fork_kit = more;
	return kit;
}

/*
 * What a fork left unused, or a whole kit nobody will use.  None of it was
 * ever visible to anyone else, so this is safe in atomic context.
 */
void pmuctx_kit_free(struct pmuctx_fork_kit *kit)
{
	unsigned int i;

	if (!kit)
		return;
	for (i = 0; i < kit->nr; i++)
		if (kit->clones[i])
			pmuctx_counter_free_unused(kit->clones[i]);
	if (kit->ctx)
		pmuctx_ctx_put(kit->ctx);
	if (kit->link)
		pmuctx_link_free_unused(kit->link);
	pmuctx_memcg_put(kit->memcg);
	kfree(kit);
}

/*
 * Spare kits.  A task that exits without having forked leaves a whole kit
 * unused, and most children never fork: a fork-and-exit loop would make
 * two kits per fork (the child's own, and the parent's refill) and free
 * one.  Such a kit is kept, one per CPU, for the next refill on that CPU
 * by a task of the same user and the same memory cgroup (the memory stays
 * charged where it was allocated, so it never crosses users or cgroups).
 * A spare holds no link, which would keep the module: one is made when
 * the kit is reused.  Spares are dropped a second after they were kept
 * (a loop that forks keeps refilling them; an idle cgroup must not stay
 * charged for a kit nobody will take), and at unload.
 */
static DEFINE_PER_CPU(struct pmuctx_fork_kit *, pmuctx_spare_kit);

static void pmuctx_kit_expire_spares(struct work_struct *work)
{
	int cpu;

	for_each_possible_cpu(cpu)
		pmuctx_kit_free(xchg(per_cpu_ptr(&pmuctx_spare_kit, cpu), NULL));
}

static DECLARE_DELAYED_WORK(pmuctx_spares_expiry, pmuctx_kit_expire_spares);

/* An unused kit of current's, in any context. */
void pmuctx_kit_retire(struct pmuctx_fork_kit *kit)
{
	if (!kit)
		return;
	if (kit->link) {
		pmuctx_link_free_unused(kit->link);
		kit->link = NULL;
	}
	kit->owner = current_uid();
	pmuctx_kit_free(this_cpu_xchg(pmuctx_spare_kit, kit));
	if (!delayed_work_pending(&pmuctx_spares_expiry))
		queue_delayed_work(pmuctx_wq, &pmuctx_spares_expiry, HZ);
}

/* Process context: this CPU's spare kit, if it fits and is current's. */
struct pmuctx_fork_kit *pmuctx_kit_reuse(unsigned int nr)
{
	struct pmuctx_fork_kit *kit = this_cpu_xchg(pmuctx_spare_kit, NULL);

	if (!kit)
		return NULL;
	if (kit->nr < nr || !uid_eq(kit->owner, current_uid()) ||
	    !pmuctx_memcg_is_current(kit->memcg))
		goto drop;
	kit->link = pmuctx_link_alloc(NULL, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!kit->link)
		goto drop;
	return kit;
drop:
	pmuctx_kit_free(kit);
	return NULL;
}

/* Unload, after the last task of ours is gone. */
void pmuctx_kit_drain_spares(void)
{
	cancel_delayed_work_sync(&pmuctx_spares_expiry);
	pmuctx_kit_expire_spares(NULL);
}

/*
 * A structural change (counter added or removed, state changed in this
 * context alone): a new cookie, and out of the family.  ctx->lock held.
 */
void pmuctx_ctx_changed(struct pmuctx_context *ctx)
{
	lockdep_assert_held(&ctx->lock);
	ctx->generation = pmuctx_new_cookie();
	ctx->family = 0;
}

static bool pmuctx_counter_counts_faults(const struct pmuctx_counter *c)
{
	if (c->attr.type != PMUCTX_TYPE_SOFTWARE)
		return false;
	return c->attr.config == PMUCTX_SW_PAGE_FAULTS ||
	       c->attr.config == PMUCTX_SW_PAGE_FAULTS_MIN ||
	       c->attr.config == PMUCTX_SW_PAGE_FAULTS_MAJ;
}

static bool pmuctx_counter_counts_migrations(const struct pmuctx_counter *c)
{
	return c->attr.type == PMUCTX_TYPE_SOFTWARE &&
	       c->attr.config == PMUCTX_SW_CPU_MIGRATIONS;
}

/*
 * @c joins (@delta 1) or leaves (-1) the context's tallies.  ctx->lock
 * held, or the context is a fork's that nobody else sees yet.
 */
void pmuctx_ctx_tally(struct pmuctx_context *ctx,
		      const struct pmuctx_counter *c, int delta)
{
	ctx->nr_counters += delta;
	if (pmuctx_counter_inherits(c, false))
		ctx->nr_inherit += delta;
	else if (pmuctx_counter_inherits(c, true))
		ctx->nr_inherit_thread += delta;
	if (c->attr.flags & PMUCTX_ATTR_INHERIT_STAT)
		ctx->nr_inherit_stat += delta;
	if (c->attr.type == PMUCTX_TYPE_RANGE)
		ctx->nr_range += delta;
	if (c->attr.sample_period)
		ctx->nr_sampling += delta;
	if ((c->attr.flags & PMUCTX_ATTR_CALLCHAIN) &&
	    !(c->attr.flags & PMUCTX_ATTR_EXCLUDE_KERNEL))
		WRITE_ONCE(ctx->nr_kernel_chains, ctx->nr_kernel_chains + delta);
	if (pmuctx_counter_counts_faults(c)) {
		ctx->nr_fault_counters += delta;
		/*
		 * Swaps re-base the fault snapshot only while something counts
		 * faults: the first fault counter of a running context credits
		 * the holder's faults against the snapshot it has (maybe an
		 * earlier holder's, an offset the clock has carried since) and
		 * takes the holder's own, from one reading.
		 */
		if (delta > 0 && ctx->nr_fault_counters == 1 &&
		    ctx->clocks_running && ctx->task)
			pmuctx_rebase_faults(ctx, ctx->task);
	}
	if (pmuctx_counter_counts_migrations(c)) {
		ctx->nr_migration_counters += delta;
		/*
		 * Swaps leave the holder's migrations_at_out stale while
		 * nothing counts migrations: the first migration counter
		 * restarts it, or the holder's next sched_in would credit
		 * migrations from before the counter existed.  (A fork's
		 * context has no link yet; the fork sets a fresh one.)
		 */
		if (delta > 0 && ctx->nr_migration_counters == 1 &&
		    ctx->task && ctx->link)
			ctx->link->migrations_at_out =
				READ_ONCE(ctx->task->se.nr_migrations);
	}
	ctx->rebase = (ctx->nr_fault_counters ? PMUCTX_REBASE_FAULTS : 0) |
		      (ctx->nr_migration_counters ?
		       PMUCTX_REBASE_MIGRATIONS : 0) |
		      (ctx->nr_range ? PMUCTX_REBASE_RANGES : 0) |
		      (ctx->nr_mapped ? PMUCTX_REBASE_PAGES : 0) |
		      (ctx->nr_inherit_stat ? PMUCTX_REBASE_STAYS : 0);
}

/* A self-read page joined (@delta 1) or left (-1) @ctx.  ctx->lock held. */
void pmuctx_ctx_mapped(struct pmuctx_context *ctx, int delta)
{
	lockdep_assert_held(&ctx->lock);
	ctx->nr_mapped += delta;
	if (ctx->nr_mapped)
		ctx->rebase |= PMUCTX_REBASE_PAGES;
	else
		ctx->rebase &= ~PMUCTX_REBASE_PAGES;
}

void pmuctx_ctx_snapshot(struct pmuctx_context *ctx, struct task_struct *t)
{
	ctx->snap[PMUCTX_CLK_TIME] = local_clock();
	pmuctx_snap_faults(ctx, t);
}

void pmuctx_ctx_clocks_now(struct pmuctx_context *ctx, u64 *clk)
{
	__pmuctx_ctx_clocks_now(ctx, clk);
}

/*
 * ctx->lock held or @ctx claimed: stop the clocks, crediting the
 * holder's progress.
 */
void pmuctx_ctx_fold_holder(struct pmuctx_context *ctx)
{
	pmuctx_ctx_assert_owned(ctx);
	if (!ctx->clocks_running)
		return;
	pmuctx_check_faults_fold(ctx, ctx->task);
	pmuctx_ctx_holder_clocks(ctx, ctx->clock);
	ctx->clocks_running = false;
}

struct pmuctx_where_loaded {
	struct pmuctx_context *ctx;
	void (*fn)(struct pmuctx_context *ctx, void *arg);
	void *arg;
	bool done;
};

static void pmuctx_where_loaded_ipi(void *info)
{
	struct pmuctx_where_loaded *w = info;
	struct pmuctx_context *ctx = w->ctx;

	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu < 0 || ctx->loaded_cpu == smp_processor_id()) {
		w->fn(ctx, w->arg);
		w->done = true;
	}
	pmuctx_ctx_unlock(ctx);
}

/*
 * Run @fn(@ctx, @arg) under ctx->lock with IRQs off, on the CPU @ctx is
 * loaded on (an IPI), or here when it is loaded here or nowhere: a change
 * of a loaded context's hardware counters and the PMU it programs are one
 * step that no fold, overflow or unload on that CPU can come between.
 * Process context; the caller holds ctx->mutex, which keeps every other
 * change out, and a reference: only where the context is loaded moves
 * meanwhile (its holder runs, is preempted, migrates), so this retries
 * until @fn ran.
 */
void pmuctx_ctx_run_where_loaded(struct pmuctx_context *ctx,
				 void (*fn)(struct pmuctx_context *ctx, void *arg),
				 void *arg)
{
	struct pmuctx_where_loaded w = { ctx, fn, arg, false };
	int cpu;

	while (!w.done) {
		cpu = READ_ONCE(ctx->loaded_cpu);
		if (cpu >= 0 && cpu != raw_smp_processor_id()) {
			smp_call_function_single(cpu, pmuctx_where_loaded_ipi, &w, 1);
			continue;
		}
		local_irq_disable();
		pmuctx_where_loaded_ipi(&w);
		local_irq_enable();
	}
}

/*
 * After the holder exited: give each clone's final count to its original,
 * then drop the clones.  Process context, so it may take ctx->mutex and
 * wait for an attach that pinned the context to finish.
 */
static void pmuctx_ctx_fold_exited(struct pmuctx_context *ctx)
{
	u64 clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_counter *c, *tmp;
	LIST_HEAD(clones);

	mutex_lock(&ctx->mutex);
	/* Frozen since the holder died: read once. */
	pmuctx_ctx_lock_irq(ctx);
	pmuctx_ctx_clocks_now(ctx, clk);
	pmuctx_ctx_unlock_irq(ctx);
	list_for_each_entry(c, &ctx->counters, ctx_entry)
		if (c->parent)
			pmuctx_counter_fold_into_parent(c, clk);
	/*
	 * Then out of the context, all under one ctx->lock: folded clones
	 * stay on the list meanwhile, which ctx->mutex keeps to us (the
	 * holder is dead, so no hook walks it).
	 */
	pmuctx_ctx_lock_irq(ctx);
	list_for_each_entry_safe(c, tmp, &ctx->counters, ctx_entry) {
		if (!c->parent)
			continue;
		if (c->user_page)
			pmuctx_ctx_mapped(ctx, -1);
		/* Unloaded since the holder died: nothing of it is on a PMU. */
		pmuctx_mux_forget(ctx, c);
		if (pmuctx_counter_is_hw(c))
			ctx->nr_hw--;
		list_del_init(&c->ctx_entry);
		list_del_init(&c->sibling_entry);
		pmuctx_ctx_tally(ctx, c, -1);
		/*
		 * Dropped only once every clone is out: a clone leader's
		 * members link into it.  The folded clone's child_entry is
		 * free now; ctx_entry must stay empty, since a close retiring
		 * this clone at the same time (it holds a reference) takes an
		 * empty entry as "already removed".
		 */
		list_add_tail(&c->child_entry, &clones);
	}
	pmuctx_ctx_unlock_irq(ctx);
	/* The originals left here free the task's debug registers now. */
	if (ctx->nr_range)
		pmuctx_range_release_dead(ctx);
	mutex_unlock(&ctx->mutex);

	list_for_each_entry_safe(c, tmp, &clones, child_entry) {
		list_del_init(&c->child_entry);
		pmuctx_counter_put(c);	/* the context's */
	}
	pmuctx_ctx_put(ctx);
}

static void pmuctx_ctx_exit_work(struct work_struct *work)
{
	pmuctx_ctx_fold_exited(container_of(work, struct pmuctx_context,
					    exit_work));
}

static void pmuctx_ctx_exit_cb(struct callback_head *head)
{
	struct pmuctx_context *ctx = container_of(head, struct pmuctx_context,
						  exit_cb);
	struct pmuctx_link *link = ctx->exit_link;

	pmuctx_ctx_fold_exited(ctx);
	pmuctx_link_put(link);	/* the task work's */
}

/*
 * The holder of @ctx is gone (ctx->dead, its link's reference to @ctx
 * passed on to the fold).  Any context.
 */
void pmuctx_ctx_queue_exit(struct pmuctx_context *ctx, struct pmuctx_link *link)
{
	if (link->task == current) {
		refcount_inc(&link->refs);	/* the task work's */
		ctx->exit_link = link;
		init_task_work(&ctx->exit_cb, pmuctx_ctx_exit_cb);
		if (!task_work_add(current, &ctx->exit_cb, TWA_RESUME))
			return;
		/* Past exit_task_work(): only the caller's reference is left. */
		refcount_dec(&link->refs);
	}
	INIT_WORK(&ctx->exit_work, pmuctx_ctx_exit_work);
	queue_work(pmuctx_wq, &ctx->exit_work);
}

int pmuctx_context_init(void)
{
	pmuctx_cpu_bits = order_base_2(nr_cpu_ids);
	get_random_bytes(&pmuctx_cookie_key, sizeof(pmuctx_cookie_key));
	pmuctx_ctx_cache = KMEM_CACHE(pmuctx_context, 0);
	if (!pmuctx_ctx_cache)
		return -ENOMEM;
	pmuctx_wq = alloc_workqueue("pmuctx", WQ_UNBOUND, 0);
	if (!pmuctx_wq) {
		kmem_cache_destroy(pmuctx_ctx_cache);
		return -ENOMEM;
	}
	return 0;
}

void pmuctx_context_exit(void)
{
	destroy_workqueue(pmuctx_wq);
	rcu_barrier();
	kmem_cache_destroy(pmuctx_ctx_cache);
}
