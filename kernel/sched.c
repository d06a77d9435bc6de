// SPDX-License-Identifier: GPL-2.0
/*
 * The context-switch hot path: preempt notifier sched_in/sched_out, and the
 * equivalent-context swap that leaves the PMU untouched.
 *
 * sched_out(prev, next) runs under the runqueue lock with IRQs off: only
 * raw spinlocks, no allocation.  An equivalent swap takes no lock at all:
 * it claims both contexts' swap keys (struct pmuctx_context).
 * sched_in(task) runs after the runqueue lock is dropped, IRQs on,
 * preemption off: locks shared with sched_out are taken irqsave.  The
 * unload at sched_out and the load at sched_in also claim their one
 * context rather than lock it, and lock it only when the claim fails
 * (pmuctx_hook_own()).
 */
#include <linux/indirect_call_wrapper.h>
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

/* ctx->lock held or @ctx claimed, IRQs off, on the holder's CPU. */
static void pmuctx_ctx_load(struct pmuctx_context *ctx, int cpu)
{
	if (unlikely(ctx->mux_dirty | ctx->mux_rotate))
		pmuctx_mux_loading(ctx);
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
 * A hook's own context, owned as ctx->lock owns it (IRQs off): claimed
 * when it can be, which costs a fraction of the lock with its swap block
 * and key republish, else locked.  Returns the key to republish, or 0
 * when it took the lock.  A claimed context is alive (a dead one's key
 * is 0); one that must choose counters for the PMU first (multiplexing)
 * is locked, as the choice has always been made.
 */
static __always_inline u64 pmuctx_hook_own(struct pmuctx_context *ctx)
	__acquires(&ctx->lock)
{
	u64 key;

	if (likely(pmuctx_ctx_claim(ctx, &key))) {
		if (likely(!(ctx->mux_dirty | ctx->mux_rotate))) {
			/* For sparse: the claim owns what the lock would. */
			__acquire(&ctx->lock);
			return key;
		}
		pmuctx_ctx_unclaim(ctx, key);
	}
	pmuctx_ctx_lock(ctx);
	return 0;
}

static __always_inline void pmuctx_hook_release(struct pmuctx_context *ctx,
						u64 key)
	__releases(&ctx->lock)
{
	if (key) {
		pmuctx_ctx_unclaim(ctx, key);
		__release(&ctx->lock);
	} else {
		pmuctx_ctx_unlock(ctx);
	}
}

/* @t's migrations while it waited (since @link's last switch out), to @ctx. */
static __always_inline void pmuctx_credit_migrations(struct pmuctx_context *ctx,
						     struct pmuctx_link *link,
						     struct task_struct *t)
{
	u64 migr = READ_ONCE(t->se.nr_migrations);

	ctx->clock[PMUCTX_CLK_MIGRATIONS] += migr - link->migrations_at_out;
	link->migrations_at_out = migr;
}

/*
 * The task starts running with its context: credit migrations that
 * happened while it waited, start the clocks, and load the context unless
 * it is loaded here already.
 */
static void pmuctx_sched_in_owned(struct pmuctx_link *link,
				  struct pmuctx_context *ctx, int cpu)
{
	struct task_struct *t = current;

	pmuctx_credit_migrations(ctx, link, t);
	pmuctx_ctx_snapshot(ctx, t);
	ctx->clocks_running = true;
	if (ctx->loaded_cpu != cpu)
		pmuctx_ctx_load(ctx, cpu);
}

static void pmuctx_sched_in_link(struct pmuctx_link *link, int cpu)
{
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);
	unsigned long flags;
	u64 key;

	if (!ctx)
		return;
	local_irq_save(flags);
	key = pmuctx_hook_own(ctx);
	if (!ctx->dead)
		pmuctx_sched_in_owned(link, ctx, cpu);
	pmuctx_hook_release(ctx, key);
	local_irq_restore(flags);
}

/*
 * A mapped context that a swap left loaded here for this task: its self-
 * reads work again whatever the switch did to the CPU's user access.  No
 * lock: only this CPU's load and unload change that access, and IRQs are
 * off.  A stale nonzero @nr_mapped (a mapped counter closing) opens reads
 * of this task's own counters, which its unload closes.
 */
static noinline void pmuctx_sched_in_mapped(struct pmuctx_context *ctx)
{
	unsigned long flags;

	if (!pmuctx_hw || !pmuctx_hw->user_reads_again)
		return;
	local_irq_save(flags);
	pmuctx_hw->user_reads_again(ctx);
	local_irq_restore(flags);
}

/*
 * After an equivalent swap the context is loaded here with its clocks
 * running for this task already (sched_out did the rest): nothing to do,
 * and @loaded_cpu is only ever written on this CPU, so no lock.  Loaded
 * implies running (struct pmuctx_context), so one test.
 */
static notrace void pmuctx_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct pmuctx_link *link = container_of(pn, struct pmuctx_link,
						notifier);
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);

	if (likely(ctx && ctx->loaded_cpu == cpu)) {
		if (PMUCTX_CHECK_INVARIANTS)
			WARN_ON_ONCE(!ctx->clocks_running);
		/* x86: the switch of address spaces cleared CR4.PCE. */
		if (IS_ENABLED(CONFIG_X86) && unlikely(READ_ONCE(ctx->nr_mapped)))
			pmuctx_sched_in_mapped(ctx);
		return;
	}
	pmuctx_sched_in_link(link, cpu);
}

/* For a task that just registered its notifier while running. */
void pmuctx_sched_load_current(struct pmuctx_link *link)
{
	pmuctx_sched_in_link(link, smp_processor_id());
}

/*
 * Hand prev's loaded, running context to next and take next's (unloaded,
 * stopped) one.  The PMU keeps counting into the family, which is summed
 * at the original anyway, and the time clock runs on: the CPU goes
 * straight from prev to next.  O(1) whatever the number of counters:
 * contexts whose values are per task (INHERIT_STAT) never swap (they hand
 * off: pmuctx_handoff()).  Both contexts claimed.
 */
static __always_inline void pmuctx_swap(struct pmuctx_link *link,
					struct pmuctx_context *ctx,
					struct pmuctx_link *nlink,
					struct pmuctx_context *nctx,
					struct task_struct *next)
{
	ctx->clock[PMUCTX_CLK_SWITCHES]++;
	/*
	 * No release needed: both contexts were published long ago, and a
	 * reader that finds one under a link takes its lock or claim,
	 * which waits for this swap's release of the claims.
	 */
	RCU_INIT_POINTER(link->ctx, nctx);
	RCU_INIT_POINTER(nlink->ctx, ctx);
	ctx->task = next;
	ctx->link = nlink;
	nctx->task = current;
	nctx->link = link;
}

/*
 * What changes holder besides the pointers, in counted clocks: prev's
 * faults are credited and next's fault counts become the snapshot; next's
 * migrations while it waited are credited; so next's sched_in has nothing
 * left to do.  No calls: the plain swap stays free of saved registers.
 */
static __always_inline void pmuctx_swap_rebase_clocks(struct pmuctx_link *link,
						      struct pmuctx_context *ctx,
						      struct pmuctx_link *nlink,
						      struct task_struct *next,
						      u8 rebase)
{
	struct task_struct *prev = current;

	if (rebase & PMUCTX_REBASE_FAULTS) {
		pmuctx_fold_faults(ctx, prev);
		pmuctx_snap_faults(ctx, next);
	}
	/* Left stale otherwise: adding a migration counter refreshes it. */
	if (rebase & PMUCTX_REBASE_MIGRATIONS) {
		pmuctx_credit_migrations(ctx, nlink, next);
		link->migrations_at_out = READ_ONCE(prev->se.nr_migrations);
	}
}

#define PMUCTX_REBASE_OUT_OF_LINE	(PMUCTX_REBASE_RANGES | PMUCTX_REBASE_PAGES | \
					 PMUCTX_REBASE_STAYS)

/*
 * The swap of contexts whose range counters hand each task its
 * watchpoints back, or whose self-read pages go with their tasks: calls,
 * so out of line (pmuctx_sched_out_slow()).  It releases the claims.
 */
static void pmuctx_swap_rebased(struct pmuctx_link *link,
				struct pmuctx_context *ctx,
				struct pmuctx_link *nlink,
				struct pmuctx_context *nctx,
				struct task_struct *next, u64 key)
{
	u8 rebase = ctx->rebase;

	pmuctx_swap_rebase_clocks(link, ctx, nlink, next, rebase);
	if (rebase & PMUCTX_REBASE_RANGES)
		pmuctx_range_swap(ctx, nctx);
	/* Both mapped or neither (the key says so). */
	if (rebase & PMUCTX_REBASE_PAGES)
		pmuctx_swap_user_pages(ctx, nctx);
	pmuctx_swap(link, ctx, nlink, nctx, next);
	pmuctx_ctx_unclaim(nctx, key);
	pmuctx_ctx_unclaim(ctx, key);
}

/*
 * next's link, if it has one (next is stopped: nobody changes its list).
 * Its notifier has the ops prev's own link holds: one load, where the
 * ops' address takes two instructions on arm64.
 */
static __always_inline struct pmuctx_link *
pmuctx_link_of_next(struct task_struct *next, const struct pmuctx_link *own)
{
	struct preempt_ops *ops = own->notifier.ops;
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &next->preempt_notifiers, link)
		if (pn->ops == ops)
			return container_of(pn, struct pmuctx_link, notifier);
	return NULL;
}

/*
 * The equivalent swap, if next holds a context equivalent to prev's:
 * claim both keys (equal, non-zero, unclaimed) with cmpxchg, swap, and
 * publish them again.  Never waits: a context under ctx->lock has key 0,
 * and a claim that fails sends prev down the locked path.  Nobody else
 * swaps either context meanwhile: prev's is loaded here and next is
 * stopped, and only their own CPU's sched_out swaps them.
 */
enum {
	PMUCTX_NO_SWAP, PMUCTX_SWAPPED, PMUCTX_SWAP_OUT_OF_LINE,
	PMUCTX_HANDOFF,
};

/*
 * What try_swap saw, for the slow path: next's context and the keys.  For
 * a handoff both keys unclaimed, with PMUCTX_SWAP_HANDOFF: it claims with
 * exactly these, so a context claimed or changed since fails its claim.
 * For an out-of-line swap, the key both contexts are claimed with.
 */
struct pmuctx_switch_seen {
	struct pmuctx_context *nctx;
	u64 key, nkey;
};

static __always_inline int pmuctx_try_swap(struct pmuctx_link *link,
					   struct pmuctx_context *ctx,
					   struct task_struct *next,
					   struct pmuctx_switch_seen *seen)
{
	u64 key = READ_ONCE(ctx->swap_key), nkey;
	struct pmuctx_context *nctx;
	struct pmuctx_link *nlink;
	u8 rebase;

	if (!key || (key & PMUCTX_SWAP_CLAIMED))
		return PMUCTX_NO_SWAP;
	nlink = pmuctx_link_of_next(next, link);
	if (!nlink)
		return PMUCTX_NO_SWAP;
	/*
	 * Only next's own swaps change its link, and next is not running.
	 * (nctx == ctx cannot be: then the second claim would fail.)
	 */
	nctx = rcu_dereference_protected(nlink->ctx, 1);
	if (!nctx)
		return PMUCTX_NO_SWAP;
	nkey = READ_ONCE(nctx->swap_key);
	if (nkey != key) {
		/* key is unclaimed (above), so one sign test covers both. */
		if (!(key & nkey & PMUCTX_SWAP_HANDOFF) ||
		    (nkey & PMUCTX_SWAP_CLAIMED))
			return PMUCTX_NO_SWAP;
		seen->nctx = nctx;
		seen->key = key;
		seen->nkey = nkey;
		return PMUCTX_HANDOFF;
	}
	/* Acquire: the last lock holder's writes are visible to the swap. */
	switch (pmuctx_swap_keys_claim(&ctx->swap_key, &nctx->swap_key, key)) {
	case 0:
		return PMUCTX_NO_SWAP;
	case 1:
		pmuctx_ctx_unclaim(ctx, key);
		return PMUCTX_NO_SWAP;
	}
	/*
	 * A running holder's live context is loaded on its CPU with the
	 * clocks running (only its own exit or detach unloads it, and makes
	 * it dead: key 0), and a stopped holder's is unloaded (its sched_out
	 * unloaded it or swapped it away).  Checked on the debug kernels.
	 */
	if (PMUCTX_CHECK_INVARIANTS &&
	    WARN_ON_ONCE(ctx->loaded_cpu != smp_processor_id() ||
			 !ctx->clocks_running ||
			 nctx->loaded_cpu >= 0)) {
		pmuctx_ctx_unclaim(nctx, key);
		pmuctx_ctx_unclaim(ctx, key);
		return PMUCTX_NO_SWAP;
	}
	if (unlikely(key & PMUCTX_SWAP_REBASE)) {
		rebase = ctx->rebase;
		/* Still claimed: pmuctx_sched_out_slow() finishes. */
		if (unlikely(rebase & PMUCTX_REBASE_OUT_OF_LINE)) {
			seen->nctx = nctx;
			seen->key = key;
			return PMUCTX_SWAP_OUT_OF_LINE;
		}
		pmuctx_swap_rebase_clocks(link, ctx, nlink, next, rebase);
	}
	pmuctx_swap(link, ctx, nlink, nctx, next);
	pmuctx_ctx_unclaim(nctx, key);
	pmuctx_ctx_unclaim(ctx, key);
	return PMUCTX_SWAPPED;
}

/*
 * The time of this switch: the scheduler read its CPU's clock for it
 * (update_rq_clock() in __schedule(), sched_clock_cpu(): local_clock()'s
 * clock) moments before the notifiers, and stamped next's arrival with
 * that reading (sched_info_arrive(), for every task but the idle one).
 * Reusing it spares a handoff a clock reading of its own, which is most of
 * what it would cost, and splits the time between prev and next where the
 * scheduler's own accounting splits it.  Without CONFIG_SCHED_INFO, a
 * reading of our own.
 */
static __always_inline u64 pmuctx_switch_clock(struct task_struct *next)
{
#ifdef CONFIG_SCHED_INFO
	return READ_ONCE(next->sched_info.last_arrival);
#else
	return local_clock();
#endif
}

/*
 * The switch from prev's context to next's when the two cannot swap but
 * hold software counters only (PMUCTX_SWAP_HANDOFF), or are equivalent
 * INHERIT_STAT contexts whose hardware counters the caller handed over
 * (pmuctx_hw->handoff_fold()): each context stays with its task, prev's
 * stops as its unload would stop it and next's starts as its load would,
 * both from one time and under the two claims, so that no reader sees
 * one without the other and next's sched_in finds its context loaded.
 * INHERIT_STAT values are per task: each instance still counts exactly
 * one task.  Both contexts claimed, IRQs off.
 */
static __always_inline void pmuctx_handoff(struct pmuctx_link *link,
					   struct pmuctx_context *ctx,
					   struct pmuctx_context *nctx, u64 now)
{
	struct task_struct *prev = current, *next = nctx->task;
	s64 dt = now - ctx->snap[PMUCTX_CLK_TIME];

	/*
	 * prev's context was loaded here after the clock read for its own
	 * arrival, which this one's cannot precede; were it ever to, the
	 * clock is read again, so that no time runs backwards.
	 */
	if (unlikely(dt < 0)) {
		now = local_clock();
		dt = now - ctx->snap[PMUCTX_CLK_TIME];
	}
	if (dt > 0)
		ctx->clock[PMUCTX_CLK_TIME] += dt;
	if (ctx->clock[PMUCTX_CLK_TIME] < ctx->time_seen)
		ctx->clock[PMUCTX_CLK_TIME] = ctx->time_seen;
	/*
	 * Fault and migration clocks only where something counts them, as
	 * at a swap (pmuctx_swap_rebase_clocks()): a context stays with its
	 * task here, so a skipped fold and snapshot leave an offset that
	 * cancels, and the first migration counter restarts its baseline.
	 */
	if (ctx->rebase & PMUCTX_REBASE_FAULTS)
		pmuctx_fold_faults(ctx, prev);
	if (ctx->rebase & PMUCTX_REBASE_MIGRATIONS)
		link->migrations_at_out = READ_ONCE(prev->se.nr_migrations);
	ctx->clocks_running = false;
	ctx->clock[PMUCTX_CLK_SWITCHES]++;
	ctx->switch_unloads++;
	ctx->loaded_cpu = -1;
	ctx->seq++;

	if (nctx->rebase & PMUCTX_REBASE_MIGRATIONS)
		pmuctx_credit_migrations(nctx, nctx->link, next);
	if (nctx->rebase & PMUCTX_REBASE_FAULTS)
		pmuctx_snap_faults(nctx, next);
	nctx->snap[PMUCTX_CLK_TIME] = now;
	nctx->clocks_running = true;
	__this_cpu_write(pmuctx_loaded_ctx, nctx);
	nctx->loaded_cpu = smp_processor_id();
	nctx->handoffs++;
	nctx->seq++;
}

/*
 * Claim prev's and next's contexts, whose keys differ, for a handoff, with
 * the keys try_swap saw.  False, with nothing claimed, when either is
 * claimed or changed since (a reader has it, or ctx->lock): prev unloads
 * instead.  Never with a key read again here: a claimed one would "claim"
 * it a second time (the cmpxchg finds what it expects) and its release
 * would leave the reader's claim in place for good.
 */
static __always_inline bool pmuctx_handoff_claim(struct pmuctx_context *ctx,
						 u64 key,
						 struct pmuctx_context *nctx,
						 u64 nkey)
{
	if (!pmuctx_swap_key_claim(&ctx->swap_key, key))
		return false;
	if (likely(pmuctx_swap_key_claim(&nctx->swap_key, nkey)))
		return true;
	pmuctx_ctx_unclaim(ctx, key);
	return false;
}

/*
 * The handoff of two equivalent INHERIT_STAT contexts of hardware
 * counters leaves the PMU as it is: they program the same slots with the
 * same events (clones copy their parent's slots, which the swap relies on
 * too), and their key says that nothing sets a counter to a start value
 * of the instance's own (no sampling period, no self-read page) and that
 * no rotation placed them differently (pmuctx_ctx_swap_key()).  Checked
 * on the debug kernels.  Both contexts claimed.
 */
static bool pmuctx_handoff_pmu_fits(const struct pmuctx_context *ctx,
				    const struct pmuctx_context *nctx)
{
	return !PMUCTX_CHECK_INVARIANTS ||
	       !WARN_ON_ONCE(nctx->used_mask != ctx->used_mask ||
			     ctx->nr_sampling || nctx->nr_sampling ||
			     ctx->mux_dirty | ctx->mux_rotate |
			     nctx->mux_dirty | nctx->mux_rotate);
}

/* prev's context unloads: its own or a lock owns it, IRQs off. */
static __always_inline void
pmuctx_sched_out_unload_own(struct pmuctx_link *link, struct pmuctx_context *ctx)
{
	u64 key = pmuctx_hook_own(ctx);

	if (!ctx->dead) {
		pmuctx_ctx_fold_holder(ctx);
		ctx->clock[PMUCTX_CLK_SWITCHES]++;
		ctx->switch_unloads++;
		link->migrations_at_out = READ_ONCE(current->se.nr_migrations);
		pmuctx_ctx_unload(ctx);
	}
	pmuctx_hook_release(ctx, key);
}

/*
 * The swap that re-bases what must go out of line, or the handoff of
 * equivalent INHERIT_STAT contexts of hardware counters: prev's context
 * and next's @nctx both claimed with @key, as try_swap left them.
 */
static noinline notrace void pmuctx_sched_out_rebased(struct preempt_notifier *pn,
						      struct task_struct *next,
						      struct pmuctx_context *nctx,
						      u64 key)
{
	struct pmuctx_link *link = container_of(pn, struct pmuctx_link,
						notifier);
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);
	bool fits;

	if (!(ctx->rebase & PMUCTX_REBASE_STAYS)) {
		pmuctx_swap_rebased(link, ctx, nctx->link, nctx, next, key);
		return;
	}
	/*
	 * INHERIT_STAT: each keeps its context, the PMU counts on: prev's
	 * instances folded where the PMU stands (each register read once),
	 * next's going on from the same readings.  An overflow raised
	 * meanwhile folds next's context, which goes on from there.
	 */
	fits = pmuctx_handoff_pmu_fits(ctx, nctx);
	if (fits) {
		INDIRECT_CALL_1(pmuctx_hw->handoff_fold,
				pmuctx_native_handoff_fold, ctx, nctx);
		pmuctx_handoff(link, ctx, nctx, pmuctx_switch_clock(next));
	}
	pmuctx_ctx_unclaim(nctx, key);
	pmuctx_ctx_unclaim(ctx, key);
	if (!fits)
		pmuctx_sched_out_unload_own(link, ctx);
}

/*
 * The handoff to @nctx (next's context) of two contexts of software
 * counters, with the keys try_swap saw (@key prev's, @nkey next's), else
 * the unload.
 */
static __always_inline void
pmuctx_sched_out_handoff(struct preempt_notifier *pn, struct task_struct *next,
			 struct pmuctx_context *nctx, u64 key, u64 nkey)
{
	struct pmuctx_link *link = container_of(pn, struct pmuctx_link,
						notifier);
	u64 now = pmuctx_switch_clock(next);
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);

	if (likely(pmuctx_handoff_claim(ctx, key, nctx, nkey))) {
		/* As at a swap (try_swap): loaded here, next's not. */
		bool sane = !PMUCTX_CHECK_INVARIANTS ||
			    !WARN_ON_ONCE(ctx->loaded_cpu != smp_processor_id() ||
					  !ctx->clocks_running ||
					  nctx->loaded_cpu >= 0 ||
					  ctx->nr_hw || nctx->nr_hw ||
					  (s64)(local_clock() - now) < 0);

		if (sane)
			pmuctx_handoff(link, ctx, nctx, now);
		pmuctx_ctx_unclaim(nctx, nkey);
		pmuctx_ctx_unclaim(ctx, key);
		if (sane)
			return;
	}
	pmuctx_sched_out_unload_own(link, ctx);
}

/*
 * Everything but the plain swap, out of line and from one call site, so
 * the swap path needs no callee-saved registers (nor, on arm64, where the
 * kernel keeps frame pointers and makes no tail calls, a frame): the
 * handoff, the unload, or the rebased swap of two claimed contexts (or
 * their handoff), with what try_swap saw of next's context @nctx and the
 * keys.
 */
static noinline notrace void pmuctx_sched_out_slow(struct preempt_notifier *pn,
						   struct task_struct *next,
						   int how,
						   struct pmuctx_context *nctx,
						   u64 key, u64 nkey)
{
	struct pmuctx_link *link;

	if (how == PMUCTX_HANDOFF) {
		pmuctx_sched_out_handoff(pn, next, nctx, key, nkey);
		return;
	}
	if (how == PMUCTX_SWAP_OUT_OF_LINE) {
		pmuctx_sched_out_rebased(pn, next, nctx, key);
		return;
	}
	link = container_of(pn, struct pmuctx_link, notifier);
	pmuctx_sched_out_unload_own(link, pmuctx_own_ctx(link));
}

/* notrace: every switch of a counted task runs it (and sched_in). */
static notrace void pmuctx_sched_out(struct preempt_notifier *pn,
				     struct task_struct *next)
{
	struct pmuctx_link *link = container_of(pn, struct pmuctx_link,
						notifier);
	struct pmuctx_context *ctx = pmuctx_own_ctx(link);
	struct pmuctx_switch_seen seen = {};
	int swap;

	if (!ctx)
		return;
	swap = pmuctx_try_swap(link, ctx, next, &seen);
	if (likely(swap == PMUCTX_SWAPPED))
		return;
	/*
	 * The hook's own arguments (the callees find the link and context
	 * again), and what try_swap saw, in registers.
	 */
	pmuctx_sched_out_slow(pn, next, swap, seen.nctx, seen.key, seen.nkey);
}

struct preempt_ops pmuctx_preempt_ops = {
	.sched_in = pmuctx_sched_in,
	.sched_out = pmuctx_sched_out,
};
