// SPDX-License-Identifier: GPL-2.0
/*
 * Counter lifecycle and values: enable, disable, reset, reads over a whole
 * inheritance family, and folding an exited clone into its original.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include "pmuctx.h"

static struct kmem_cache *pmuctx_counter_cache;

/* A zeroed counter's fields that are not zero when it starts. */
static void pmuctx_counter_init_fields(struct pmuctx_counter *c)
{
	refcount_set(&c->refs, 1);
	INIT_LIST_HEAD(&c->ctx_entry);
	INIT_LIST_HEAD(&c->siblings);
	INIT_LIST_HEAD(&c->sibling_entry);
	INIT_LIST_HEAD(&c->child_entry);
	c->leader = c;
	c->hw_idx = -1;
}

struct pmuctx_counter *pmuctx_counter_alloc(gfp_t gfp)
{
	struct pmuctx_counter *c = kmem_cache_zalloc(pmuctx_counter_cache, gfp);

	if (c)
		pmuctx_counter_init_fields(c);
	return c;
}

/*
 * @nr counters into @cs in one pass through the allocator (a fork kit's
 * clones: one memcg charge, one trip to the per-CPU slab).  All or none.
 */
bool pmuctx_counter_alloc_bulk(gfp_t gfp, unsigned int nr,
			       struct pmuctx_counter **cs)
{
	unsigned int i;

	if (!kmem_cache_alloc_bulk(pmuctx_counter_cache, gfp | __GFP_ZERO, nr,
				   (void **)cs))
		return false;
	for (i = 0; i < nr; i++)
		pmuctx_counter_init_fields(cs[i]);
	return true;
}

/*
 * Shards per inheriting family: the CPUs rounded up to a power of two, at
 * most PMUCTX_MAX_SHARDS; CPU n publishes on shard n & (pmuctx_nr_shards
 * - 1).  A bounded array from the slab, not a per-CPU allocation: every
 * open of an inherited counter would otherwise take the per-CPU
 * allocator's global mutex, and a 256-CPU machine would spend 40 KB of
 * per-CPU memory on each such counter.  Set once at load.
 */
unsigned int pmuctx_nr_shards __read_mostly = 1;

static void pmuctx_family_free(struct pmuctx_family *fam)
{
	kfree(fam->shards);
	bitmap_free(fam->shard_cpus);
	kfree(fam);
}

/*
 * The clones' hold on their original (struct pmuctx_family_shard): a
 * shard at 0 leaves the family's live shards, and the last one to leave
 * drops the reference the file's release took for all clones.  The
 * original, and with it @fam, may be gone when this returns.
 */
static void pmuctx_family_shard_put(struct pmuctx_counter *orig,
				    struct pmuctx_family_shard *sh)
{
	if (atomic_long_dec_and_test(&sh->clone_refs) &&
	    atomic_dec_and_test(&orig->fam->live_shards))
		pmuctx_counter_put(orig);
}

/*
 * The fork's fill, preemption off: @clone's hold on @orig, on this CPU's
 * shard, which its fork also publishes it on (pmuctx_fork_publish()).
 * @orig's file is not released yet: the fork saw @closing clear, and the
 * release waits a grace period before it drops its 1s.
 */
void pmuctx_family_hold(struct pmuctx_counter *clone,
			struct pmuctx_counter *orig)
{
	clone->shard = smp_processor_id() & (pmuctx_nr_shards - 1);
	atomic_long_inc(&orig->fam->shards[clone->shard].clone_refs);
	clone->parent = orig;
}

/*
 * A grace period after the release set @closing: every fork that copied
 * the original has taken its shard hold.  Drop the file's 1 on each shard.
 * Shard i's reaching 0 can free the original only once every other shard
 * reached 0 too, so nothing of @fam is read after the last shard's drop.
 */
static void pmuctx_family_kill(struct work_struct *work)
{
	struct pmuctx_family *fam = container_of(to_rcu_work(work),
						 struct pmuctx_family,
						 kill_work);
	struct pmuctx_counter *orig = fam->original;
	unsigned int i, nr = pmuctx_nr_shards;

	for (i = 0; i < nr; i++)
		pmuctx_family_shard_put(orig, &fam->shards[i]);
	pmuctx_users_put();	/* the last thing: see users.c */
}

/* The shards of an inheriting original's clones (kernel/pmuctx.h). */
static int pmuctx_family_alloc_shards(struct pmuctx_family *fam, gfp_t gfp)
{
	unsigned int i;

	fam->shards = kcalloc(pmuctx_nr_shards, sizeof(*fam->shards), gfp);
	fam->shard_cpus = bitmap_zalloc(pmuctx_nr_shards, gfp);
	if (!fam->shards || !fam->shard_cpus)
		return -ENOMEM;
	for (i = 0; i < pmuctx_nr_shards; i++) {
		spin_lock_init(&fam->shards[i].lock);
		INIT_LIST_HEAD(&fam->shards[i].children);
		atomic_long_set(&fam->shards[i].clone_refs, 1);
	}
	atomic_set(&fam->live_shards, pmuctx_nr_shards);
	INIT_RCU_WORK(&fam->kill_work, pmuctx_family_kill);
	return 0;
}

/*
 * A counter a file will hold, with its family's shared part, and, when it
 * is to be inherited (@inherit), the shards of its clones.
 */
struct pmuctx_counter *pmuctx_counter_alloc_original(gfp_t gfp, bool inherit)
{
	struct pmuctx_counter *c = pmuctx_counter_alloc(gfp);
	struct pmuctx_family *fam;

	if (!c)
		return NULL;
	fam = kzalloc(sizeof(*fam), gfp);
	if (!fam || (inherit && pmuctx_family_alloc_shards(fam, gfp))) {
		if (fam)
			pmuctx_family_free(fam);
		pmuctx_counter_free_unused(c);
		return NULL;
	}
	mutex_init(&fam->enable_mutex);
	init_waitqueue_head(&fam->waitq);
	init_irq_work(&fam->wake_work, pmuctx_counter_wake);
	fam->original = c;
	c->fam = fam;
	return c;
}

static void pmuctx_no_live_clone(void *live)
{
	*(bool *)live = false;
}

/* A live clone ends the walk. */
static bool pmuctx_shard_live_clone(struct pmuctx_family_shard *sh, void *live)
{
	*(bool *)live = !list_empty(&sh->children);
	return !*(bool *)live;
}

/* Whether any clone of @c's family is still live (on a shard's list). */
bool pmuctx_family_has_live_clones(struct pmuctx_counter *c)
{
	bool live = false;

	pmuctx_family_walk(c->fam, pmuctx_no_live_clone,
			   pmuctx_shard_live_clone, &live);
	return live;
}

/* A counter never published (an unused kit clone): atomic context is fine. */
void pmuctx_counter_free_unused(struct pmuctx_counter *c)
{
	kmem_cache_free(pmuctx_counter_cache, c);
}

void pmuctx_counter_get(struct pmuctx_counter *c)
{
	refcount_inc(&c->refs);
}

void pmuctx_counter_put(struct pmuctx_counter *c)
{
	if (!refcount_dec_and_test(&c->refs))
		return;
	if (c->fam) {
		WARN_ON_ONCE(pmuctx_family_has_live_clones(c));
		irq_work_sync(&c->fam->wake_work);
		pmuctx_sample_ring_free(c->fam->samples);
		kfree(c->fam->range_plan);
		pmuctx_family_free(c->fam);
	}
	if (c->user_page)
		pmuctx_user_pages_free(c->user_page);
	if (c->attr.type == PMUCTX_TYPE_RANGE)
		pmuctx_range_put_watch(c->range);
	if (c->hw_taken && pmuctx_hw->event_destroy)
		pmuctx_hw->event_destroy(c);
	if (c->hw_binding)
		pmuctx_hw->release(c);
	if (c->parent)
		pmuctx_family_shard_put(c->parent,
					&c->parent->fam->shards[c->shard]);
	if (c->ctx)
		pmuctx_ctx_put(c->ctx);
	kmem_cache_free(pmuctx_counter_cache, c);
}

/* The clock reading this counter's kind accumulates. */
static __always_inline u64 pmuctx_counter_clock(const struct pmuctx_counter *c,
						const u64 *clk)
{
	/* A hardware counter is its own clock: the PMU counts only while loaded. */
	if (pmuctx_counter_is_hw(c))
		return c->hw_count;
	/* So is a range counter: its watchpoints count only its task. */
	if (c->attr.type == PMUCTX_TYPE_RANGE)
		return pmuctx_range_hits(c);
	switch (c->attr.config) {
	case PMUCTX_SW_TASK_CLOCK:
		return clk[PMUCTX_CLK_TIME];
	case PMUCTX_SW_CONTEXT_SWITCHES:
		return clk[PMUCTX_CLK_SWITCHES];
	case PMUCTX_SW_CPU_MIGRATIONS:
		return clk[PMUCTX_CLK_MIGRATIONS];
	case PMUCTX_SW_PAGE_FAULTS:
		return clk[PMUCTX_CLK_MINFLT] + clk[PMUCTX_CLK_MAJFLT];
	case PMUCTX_SW_PAGE_FAULTS_MIN:
		return clk[PMUCTX_CLK_MINFLT];
	case PMUCTX_SW_PAGE_FAULTS_MAJ:
		return clk[PMUCTX_CLK_MAJFLT];
	}
	return 0;
}

/*
 * The clock of the counter's time running: the context's time, less, for a
 * hardware counter on perf's events (perf_fallback.c, perf_shared.c), the
 * time perf kept its event off the PMU while it multiplexed it with
 * everybody's.
 */
static __always_inline u64 pmuctx_counter_run_clock(const struct pmuctx_counter *c,
						    const u64 *clk)
{
	if (static_branch_unlikely(&pmuctx_hw_lent) && pmuctx_counter_is_hw(c))
		return clk[PMUCTX_CLK_TIME] - c->hw_missed;
	return clk[PMUCTX_CLK_TIME];
}

/*
 * Time run since @run_snap.  The run clock of a counter on perf's events
 * is the context's time less perf's missed time, which can be "negative"
 * (it wraps: an event perf made wait from its creation has missed more
 * than the context, which starts at the task's first switch, has run),
 * so only differences of it mean anything, taken as signed.
 * Never negative: the time missed comes in at folds, and can come in
 * ahead of the context's clock by what the two clocks differ.
 */
static __always_inline u64 pmuctx_counter_ran(const struct pmuctx_counter *c,
					      const u64 *clk)
{
	s64 ran = pmuctx_counter_run_clock(c, clk) - c->run_snap;

	return ran > 0 ? ran : 0;
}

/*
 * pmuctx_counter_ran(), never less than a reading of the same slice
 * returned before (@ran_seen).  On perf's events the run clock is the
 * context's time less the time the backend missed, two clocks read at
 * slightly different instants (the context's at a switch or a read, the
 * backend's at its reading of the event a moment later).  While perf
 * keeps the event off (a CPU that went offline, over-commit) that
 * difference is all there is, and it jitters by the gap, either way:
 * 192 us back over 13 ms on an arm64 guest (shared_test's hotplug case).
 * Time running must never run backwards.  ctx->lock held or claimed.
 */
static u64 pmuctx_counter_ran_seen(struct pmuctx_counter *c, const u64 *clk)
{
	u64 ran = pmuctx_counter_ran(c, clk);

	if (!static_branch_unlikely(&pmuctx_hw_lent) || !pmuctx_counter_is_hw(c))
		return ran;
	if (ran < c->ran_seen)
		return c->ran_seen;
	c->ran_seen = ran;
	return ran;
}

/* ctx->lock held (or the context claimed); @clk from pmuctx_ctx_clocks_now(). */
static __always_inline u64 __pmuctx_counter_value(struct pmuctx_counter *c,
						  const u64 *clk)
{
	if (!pmuctx_counter_counting(c))
		return c->base;
	return c->base + pmuctx_counter_clock(c, clk) - c->snap;
}

u64 pmuctx_counter_value(struct pmuctx_counter *c, const u64 *clk)
{
	return __pmuctx_counter_value(c, clk);
}

void pmuctx_counter_times(struct pmuctx_counter *c, const u64 *clk,
			  u64 *enabled, u64 *running)
{
	u64 now = clk[PMUCTX_CLK_TIME];

	*enabled = c->time_base + (c->enabled ? now - c->time_snap : 0);
	*running = c->run_base +
		   (pmuctx_counter_counting(c) ? pmuctx_counter_ran_seen(c, clk) : 0);
}

static void pmuctx_slices_add_one(struct pmuctx_slices *sum, u64 count,
				  u64 time)
{
	sum->n++;
	sum->cc += (__uint128_t)count * count;
	sum->ct += (__uint128_t)count * time;
	sum->tt += (__uint128_t)time * time;
}

void pmuctx_slices_add(struct pmuctx_slices *sum,
		       const struct pmuctx_slices *more)
{
	sum->n += more->n;
	sum->cc += more->cc;
	sum->ct += more->ct;
	sum->tt += more->tt;
}

/* The counter's slices so far, the one in progress included. */
void pmuctx_counter_slices(const struct pmuctx_counter *c, const u64 *clk,
			   struct pmuctx_slices *sum)
{
	pmuctx_slices_add(sum, &c->slices);
	if (pmuctx_counter_counting(c))
		pmuctx_slices_add_one(sum, pmuctx_counter_clock(c, clk) - c->snap,
				      max(pmuctx_counter_ran(c, clk), c->ran_seen));
}

/* A slice begins now. */
static void pmuctx_counter_slice_begin(struct pmuctx_counter *c, const u64 *clk)
{
	c->snap = pmuctx_counter_clock(c, clk);
	c->run_snap = pmuctx_counter_run_clock(c, clk);
	c->ran_seen = 0;
	c->hw_ran = false;
}

/* The slice in progress ends now and is recorded. */
static void pmuctx_counter_slice_end(struct pmuctx_counter *c, const u64 *clk)
{
	u64 count = pmuctx_counter_clock(c, clk) - c->snap;
	u64 ran = pmuctx_counter_ran_seen(c, clk);

	c->base += count;
	c->run_base += ran;
	pmuctx_slices_add_one(&c->slices, count, ran);
}

/* Counting starts or stops: a slice begins, or ends and is recorded. */
static void pmuctx_counter_counting_changed(struct pmuctx_counter *c,
					    bool was, const u64 *clk)
{
	if (was == pmuctx_counter_counting(c))
		return;
	if (!was)
		pmuctx_counter_slice_begin(c, clk);
	else
		pmuctx_counter_slice_end(c, clk);
}

void pmuctx_counter_set_enabled(struct pmuctx_counter *c, bool on,
				const u64 *clk)
{
	bool was = pmuctx_counter_counting(c);
	struct pmuctx_counter *m;

	if (on == c->enabled)
		return;
	if (on)
		c->time_snap = clk[PMUCTX_CLK_TIME];
	else
		c->time_base += clk[PMUCTX_CLK_TIME] - c->time_snap;
	c->enabled = on;
	pmuctx_counter_counting_changed(c, was, clk);
	/*
	 * A leader's members start and stop counting with it: each counted
	 * before if it was enabled and on the PMU while the leader was !@on.
	 */
	if (c->leader == c)
		list_for_each_entry(m, &c->siblings, sibling_entry)
			pmuctx_counter_counting_changed(m, m->enabled && !on &&
							!m->mux_off, clk);
	/* Off the PMU, maybe for being disabled: choose again (mux.c). */
	if (on && c->mux_off)
		c->ctx->mux_dirty = true;
}

/* Its unit left the PMU (@off) or came back: kernel/mux.c. */
void pmuctx_counter_set_mux_off(struct pmuctx_counter *c, bool off,
				const u64 *clk)
{
	bool was = pmuctx_counter_counting(c);

	c->mux_off = off;
	pmuctx_counter_counting_changed(c, was, clk);
}

/*
 * The shared backend found a counting counter's event off the PMU after
 * perf ran it in the slice in progress: perf multiplexed it, and its turn
 * is over.  The slice ends here and the next begins (it runs once perf
 * puts the event back), as at a rotation of pmuctx's own: each turn is
 * one draw of the sample the error estimate is made from
 * (Documentation/multiplexing.rst, "On perf's events").
 */
void pmuctx_counter_split_slice(struct pmuctx_counter *c, const u64 *clk)
{
	if (!pmuctx_counter_counting(c))
		return;
	pmuctx_counter_slice_end(c, clk);
	pmuctx_counter_slice_begin(c, clk);
}

/*
 * Zero the count and its slices; the times run on, as perf's do, and a
 * slice in progress restarts now.
 */
static void pmuctx_counter_zero(struct pmuctx_counter *c, const u64 *clk)
{
	c->base = 0;
	if (pmuctx_counter_counting(c)) {
		c->run_base += pmuctx_counter_ran_seen(c, clk);
		pmuctx_counter_slice_begin(c, clk);
	} else {
		c->snap = pmuctx_counter_clock(c, clk);
	}
	memset(&c->slices, 0, sizeof(c->slices));
}

bool pmuctx_counter_inherits(const struct pmuctx_counter *c, bool thread)
{
	u64 f = c->attr.flags;

	if (!(f & PMUCTX_ATTR_INHERIT))
		return false;
	return thread || !(f & PMUCTX_ATTR_INHERIT_THREAD);
}

/* ctx->lock held or the context claimed. */
static __always_inline void pmuctx_counter_read_owned(struct pmuctx_counter *c,
						      struct pmuctx_reading *rd)
{
	u64 clk[PMUCTX_NR_CLOCKS], e, r;

	/*
	 * A hardware counter is its own clock (pmuctx_counter_clock()): for
	 * its value alone, a fold, and no time reading (a tenth of a read()).
	 */
	if (rd->value_only && pmuctx_counter_is_hw(c)) {
		pmuctx_ctx_fold_here(c->ctx);
		rd->value += c->base +
			     (pmuctx_counter_counting(c) ? c->hw_count - c->snap : 0);
		return;
	}
	__pmuctx_ctx_clocks_now(c->ctx, clk);
	rd->value += __pmuctx_counter_value(c, clk);
	pmuctx_counter_times(c, clk, &e, &r);
	rd->enabled += e;
	rd->running += r;
	if (rd->slices)
		pmuctx_counter_slices(c, clk, rd->slices);
}

/*
 * A reading writes nothing but what any reader could (the time already
 * handed out, a fold of the PMU it is on), so the context's claim is as
 * good as ctx->lock and costs a third of it: ctx->lock only when the
 * context cannot be claimed (see pmuctx_ctx_claim()).
 */
static __always_inline void __pmuctx_counter_read_one(struct pmuctx_counter *c,
						      struct pmuctx_reading *rd)
{
	struct pmuctx_context *ctx = c->ctx;
	unsigned long flags;
	u64 key;

	pmuctx_ctx_sync_hw(ctx);
	local_irq_save(flags);
	if (pmuctx_ctx_claim(ctx, &key)) {
		pmuctx_counter_read_owned(c, rd);
		pmuctx_ctx_unclaim(ctx, key);
	} else {
		pmuctx_ctx_lock(ctx);
		pmuctx_counter_read_owned(c, rd);
		pmuctx_ctx_unlock(ctx);
	}
	local_irq_restore(flags);
}

static noinline void pmuctx_counter_read_one(struct pmuctx_counter *c,
					     struct pmuctx_reading *rd)
{
	__pmuctx_counter_read_one(c, rd);
}

/* A family read: the reading, and the original's own part to restart from. */
struct pmuctx_clones_read {
	struct pmuctx_reading *rd;
	struct pmuctx_reading own;
	struct pmuctx_slices own_slices;
};

static void pmuctx_clones_read_restart(void *arg)
{
	struct pmuctx_clones_read *cr = arg;

	*cr->rd = cr->own;
	if (cr->rd->slices)
		*cr->rd->slices = cr->own_slices;
}

static bool pmuctx_clones_read_shard(struct pmuctx_family_shard *sh, void *arg)
{
	struct pmuctx_reading *rd = ((struct pmuctx_clones_read *)arg)->rd;
	struct pmuctx_counter *clone;

	rd->value += sh->child_value;
	rd->enabled += sh->child_enabled;
	rd->running += sh->child_running;
	if (rd->slices)
		pmuctx_slices_add(rd->slices, &sh->child_slices);
	list_for_each_entry(clone, &sh->children, child_entry)
		pmuctx_counter_read_one(clone, rd);
	return true;
}

/*
 * The live and exited clones of an inheriting @c, added to @rd (which
 * holds @c's own part), shard by shard: a clone's move from its shard's
 * list to that shard's totals is atomic under the shard's lock, so it is
 * counted once.  Out of line: a plain read() of a counter that is not
 * inherited zeroes none of this on its stack.
 */
static noinline void pmuctx_family_read_clones(struct pmuctx_counter *c,
					       struct pmuctx_reading *rd)
{
	struct pmuctx_clones_read cr = { .rd = rd, .own = *rd };

	if (rd->slices)
		cr.own_slices = *rd->slices;
	pmuctx_family_walk(c->fam, pmuctx_clones_read_restart,
			   pmuctx_clones_read_shard, &cr);
}

/*
 * The counter, its live clones and its exited clones.  Slices pool: each
 * instance's are a sample of the family's enabled time (summed only when
 * the read format asks: a read stays cheap without).
 */
void pmuctx_counter_family_read(struct pmuctx_counter *c,
				struct pmuctx_reading *rd)
{
	rd->value = 0;
	rd->enabled = 0;
	rd->running = 0;
	/* Inline for the original: the plain read() of a counter is this. */
	__pmuctx_counter_read_one(c, rd);
	/* Only inheriting counters ever have clones or exited totals. */
	if (c->attr.flags & PMUCTX_ATTR_INHERIT)
		pmuctx_family_read_clones(c, rd);
}

static void pmuctx_op_one(struct pmuctx_counter *c, enum pmuctx_group_op op,
			  const u64 *clk)
{
	if (op == PMUCTX_GROUP_RESET)
		pmuctx_counter_zero(c, clk);
	else
		pmuctx_counter_set_enabled(c, op == PMUCTX_GROUP_ENABLE, clk);
}

/*
 * @op on @c and on each counter of @members (a group's siblings, or NULL)
 * at one instant: one hold of the context's lock and one reading of its
 * clocks for them all.  A dead context is still reset, not switched.
 */
static void pmuctx_counters_apply(struct pmuctx_counter *c,
				  struct list_head *members,
				  enum pmuctx_group_op op)
{
	struct pmuctx_context *ctx = c->ctx;
	u64 clk[PMUCTX_NR_CLOCKS];
	struct pmuctx_counter *m;
	unsigned long flags;
	bool resched = false;

	pmuctx_ctx_sync_hw(ctx);
	pmuctx_ctx_lock_irqsave(ctx, flags);
	if (!ctx->dead || op == PMUCTX_GROUP_RESET) {
		pmuctx_ctx_clocks_now(ctx, clk);
		pmuctx_op_one(c, op, clk);
		if (members)
			list_for_each_entry(m, members, sibling_entry)
				pmuctx_op_one(m, op, clk);
		if (op != PMUCTX_GROUP_RESET)
			resched = pmuctx_mux_resched(ctx);
		pmuctx_ctx_update_user_pages(ctx);
	}
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
	if (resched)
		pmuctx_mux_resched_loaded(ctx);
}

static void pmuctx_counter_enable_one(struct pmuctx_counter *c, bool on)
{
	pmuctx_counters_apply(c, NULL, on ? PMUCTX_GROUP_ENABLE :
					    PMUCTX_GROUP_DISABLE);
}

/*
 * Enable, disable or reset a group that is not inherited at one instant.
 * One call per member would count the code between the calls on some
 * members and not on others (a constant on Debian's kernel, any number
 * of instructions where the kernel stalls, as KCSAN's does).  ctx->mutex
 * held (the members stay put).
 */
void pmuctx_counter_group_apply(struct pmuctx_counter *leader,
				enum pmuctx_group_op op)
{
	lockdep_assert_held(&leader->ctx->mutex);
	pmuctx_counters_apply(leader, &leader->siblings, op);
}

/*
 * Enable or disable the counter and every live clone, so that clones stay
 * equivalent to each other and to the original.  @enable_seq is odd for
 * the whole walk: a fork that copies an instance meanwhile (its clone is
 * not on a list yet, or on a shard this walk passed already) sees it, or
 * its change, when it publishes, and takes @family_on instead.  The full
 * barrier pairs with the fork's after it sets its shard's bit: the walk
 * sees the bit, or the fork sees the odd @enable_seq.
 */
int pmuctx_counter_family_enable(struct pmuctx_counter *c, bool on)
{
	struct pmuctx_family_shard *sh;
	struct pmuctx_counter *clone;
	int cpu;

	/* Not inherited: no fork copies it, so no walk and no mutex. */
	if (!c->fam->shards) {
		pmuctx_counter_enable_one(c, on);
		return 0;
	}
	mutex_lock(&c->fam->enable_mutex);
	WRITE_ONCE(c->fam->family_on, on);
	/* A fork that sees the odd count sees @family_on too. */
	smp_store_release(&c->enable_seq, c->enable_seq + 1);
	/* Pairs with the fork's, after its shard bit (pmuctx_next_shard()). */
	smp_mb();
	pmuctx_counter_enable_one(c, on);
	for (cpu = -1; (cpu = pmuctx_next_shard(c->fam, cpu)) < pmuctx_nr_shards;) {
		sh = &c->fam->shards[cpu];
		spin_lock(&sh->lock);
		list_for_each_entry(clone, &sh->children, child_entry)
			pmuctx_counter_enable_one(clone, on);
		spin_unlock(&sh->lock);
	}
	/* A fork that sees the even count sees every clone changed. */
	smp_store_release(&c->enable_seq, c->enable_seq + 1);
	mutex_unlock(&c->fam->enable_mutex);
	return 0;
}

static void pmuctx_counter_reset_one(struct pmuctx_counter *c)
{
	pmuctx_counters_apply(c, NULL, PMUCTX_GROUP_RESET);
}

/*
 * Zero the count everywhere, exited clones included; times keep running.
 * Shard by shard, as perf resets its children one by one: a clone that
 * exits meanwhile is zeroed with its shard's totals, or counted after
 * its shard was reset.
 */
void pmuctx_counter_family_reset(struct pmuctx_counter *c)
{
	struct pmuctx_family_shard *sh;
	struct pmuctx_counter *clone;
	int cpu;

	pmuctx_counter_reset_one(c);
	if (!c->fam->shards)
		return;
	for (cpu = -1; (cpu = pmuctx_next_shard(c->fam, cpu)) < pmuctx_nr_shards;) {
		sh = &c->fam->shards[cpu];
		spin_lock(&sh->lock);
		sh->child_value = 0;
		memset(&sh->child_slices, 0, sizeof(sh->child_slices));
		list_for_each_entry(clone, &sh->children, child_entry)
			pmuctx_counter_reset_one(clone);
		spin_unlock(&sh->lock);
	}
}

/*
 * Called for each clone of a context whose holder exited, with the
 * context's frozen clocks @clk: move its totals to its shard of the
 * original in one step under the shard's lock.  No ctx->lock: the context
 * is dead and the caller holds its ctx->mutex, so nothing else writes the
 * clone or the context (a family reset or enable, the only other writers
 * of a dead context's clone, walk the shard under the lock held here).
 */
void pmuctx_counter_fold_into_parent(struct pmuctx_counter *clone,
				     const u64 *clk)
{
	struct pmuctx_counter *parent = clone->parent;
	struct pmuctx_family_shard *sh = &parent->fam->shards[clone->shard];
	struct pmuctx_context *ctx = clone->ctx;
	struct pmuctx_slices slices = {};
	u64 v, e, r;

	spin_lock(&sh->lock);
	v = pmuctx_counter_value(clone, clk);
	pmuctx_counter_times(clone, clk, &e, &r);
	pmuctx_counter_slices(clone, clk, &slices);
	sh->child_value += v;
	sh->child_enabled += e;
	sh->child_running += r;
	sh->child_loads += ctx->loads;
	sh->child_swaps += pmuctx_ctx_swaps(ctx);
	sh->child_rotations += ctx->rotations;
	sh->child_handoffs += ctx->handoffs;
	pmuctx_slices_add(&sh->child_slices, &slices);
	sh->exited_clones++;
	list_del_init(&clone->child_entry);
	spin_unlock(&sh->lock);
	/*
	 * A poller waits for the last clone to go (EPOLLHUP).  It queues
	 * itself before it looks at the shards under their locks, so either
	 * it saw this clone gone or it is on the queue by now.
	 */
	if (wq_has_sleeper(&parent->fam->waitq))
		wake_up_all(&parent->fam->waitq);
}

/*
 * Take @c out of its context: a structural change, so the context gets a
 * new cookie and leaves its family.  Returns false when the counter was no
 * longer there (an exited holder's exit work took it first).
 */
bool pmuctx_ctx_remove_counter(struct pmuctx_counter *c)
{
	struct pmuctx_context *ctx = c->ctx;
	struct pmuctx_range_watch *watch = NULL;
	struct pmuctx_counter *sib, *tmp;
	u64 clk[PMUCTX_NR_CLOCKS];

	mutex_lock(&ctx->mutex);
	if (list_empty(&c->ctx_entry)) {
		mutex_unlock(&ctx->mutex);
		return false;
	}
	pmuctx_ctx_sync_hw(ctx);
	pmuctx_ctx_lock_irq(ctx);
	pmuctx_ctx_clocks_now(ctx, clk);
	pmuctx_counter_set_enabled(c, false, clk);
	pmuctx_mux_forget(ctx, c);
	if (c->user_page)
		pmuctx_ctx_mapped(ctx, -1);
	/*
	 * Its count is in @base now: the task's debug registers are free for
	 * the next user as soon as this returns (close() included).
	 */
	if (c->attr.type == PMUCTX_TYPE_RANGE) {
		watch = c->range;
		WRITE_ONCE(c->range, NULL);
	}
	list_del_init(&c->ctx_entry);
	pmuctx_ctx_tally(ctx, c, -1);
	/* A removed leader's members carry on as counters of their own. */
	list_for_each_entry_safe(sib, tmp, &c->siblings, sibling_entry) {
		sib->leader = sib;
		list_del_init(&sib->sibling_entry);
		/* Stopped with its disabled leader; on its own, it may count. */
		pmuctx_counter_counting_changed(sib, false, clk);
	}
	list_del_init(&c->sibling_entry);
	if (!ctx->dead)
		pmuctx_ctx_changed(ctx);
	if (!ctx->nr_counters)
		pmuctx_link_queue_detach(ctx);
	pmuctx_ctx_unlock_irq(ctx);
	/*
	 * Its slot is free, but the counter may still be on where the
	 * context is loaded (the stop needs an IPI, so it comes after the
	 * lock).
	 */
	if (pmuctx_counter_is_hw(c))
		pmuctx_hw_retire_counter(ctx, c);
	mutex_unlock(&ctx->mutex);
	pmuctx_range_free_watch(watch);
	return true;
}

/*
 * The original's file is being released: every clone, wherever its holder
 * is, leaves its context now, so nothing keeps counting into a closed
 * counter or is copied into later children.  Process context.
 */
void pmuctx_counter_retire_clones(struct pmuctx_counter *c)
{
	struct pmuctx_family_shard *sh;
	struct pmuctx_counter *clone;
	int cpu;

	/*
	 * A fork that copied @c before this publishes its clone under its
	 * shard's lock after setting the shard's bit and a full barrier, and
	 * @closing is set before a full barrier here: either this walk sees
	 * the bit and the clone is on that list by the time it takes the
	 * lock, or the fork sees @closing and leaves the clone to its child,
	 * which retires it before it first returns to user space
	 * (pmuctx_sweep_closed()).
	 */
	WRITE_ONCE(c->fam->closing, true);
	/* Pairs with the fork's, after its shard bit (pmuctx_next_shard()). */
	smp_mb();
	if (!c->fam->shards)
		return;
	/*
	 * The clones' reference, and the kill that drops the file's hold on
	 * each shard once no fork that saw @closing clear is still copying
	 * (the fill runs with preemption off: an RCU read-side section).
	 * The pending kill keeps the module.
	 */
	pmuctx_counter_get(c);
	pmuctx_users_get();
	queue_rcu_work(pmuctx_wq, &c->fam->kill_work);
	for (cpu = -1; (cpu = pmuctx_next_shard(c->fam, cpu)) < pmuctx_nr_shards;) {
		sh = &c->fam->shards[cpu];
		for (;;) {
			spin_lock(&sh->lock);
			clone = list_first_entry_or_null(&sh->children,
							 struct pmuctx_counter,
							 child_entry);
			if (clone) {
				/* Listed, it is alive: the exit work unlinks first. */
				list_del_init(&clone->child_entry);
				pmuctx_counter_get(clone);
			}
			spin_unlock(&sh->lock);
			if (!clone)
				break;
			/* The context's reference, unless the exit work dropped it. */
			if (pmuctx_ctx_remove_counter(clone))
				pmuctx_counter_put(clone);
			pmuctx_counter_put(clone);
		}
	}
}

int pmuctx_counter_init(void)
{
	pmuctx_nr_shards = min_t(unsigned int, roundup_pow_of_two(nr_cpu_ids),
				 PMUCTX_MAX_SHARDS);
	pmuctx_counter_cache = KMEM_CACHE(pmuctx_counter, 0);
	return pmuctx_counter_cache ? 0 : -ENOMEM;
}

void pmuctx_counter_exit(void)
{
	kmem_cache_destroy(pmuctx_counter_cache);
}
