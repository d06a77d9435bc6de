// SPDX-License-Identifier: GPL-2.0
/*
 * Multiplexing: a context with more hardware counters than the PMU has
 * lets its units (a group with all its members, or a counter of its own)
 * take turns.  Units whose leader is PMUCTX_ATTR_PINNED are on the PMU
 * whenever the context is loaded; the others rotate, every
 * mux_interval_ms of the holder's time on a CPU.
 *
 * The rotation state lives in the context (struct pmuctx_context, under
 * ctx->lock) and the timer belongs to the CPU: it rotates whatever context
 * is loaded there.  An equivalent swap hands the loaded context, rotation
 * state and all, to the next task, and touches neither the PMU nor the
 * timer.  Documentation/multiplexing.rst has the whole picture.
 */
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include "pmuctx.h"
#include "compat/hrtimer.h"
#include "mux_spread.h"

/* perf's default: one jiffy (its perf_event_mux_interval_ms). */
unsigned int pmuctx_mux_interval_ms = 1000 / HZ ?: 1;

static int pmuctx_mux_interval_set(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 1000);
}

static const struct kernel_param_ops pmuctx_mux_interval_ops = {
	.set = pmuctx_mux_interval_set,
	.get = param_get_uint,
};

module_param_cb(mux_interval_ms, &pmuctx_mux_interval_ops,
		&pmuctx_mux_interval_ms, 0644);
MODULE_PARM_DESC(mux_interval_ms,
		 "Rotation interval of contexts with more counters than the PMU (ms, 1-1000)");

/*
 * One per CPU, pinned to it, callback in hard interrupt context: it takes
 * the loaded context's raw lock like the overflow interrupt does.
 */
static DEFINE_PER_CPU(struct hrtimer, pmuctx_mux_timer);

static bool pmuctx_unit_pinned(const struct pmuctx_counter *leader)
{
	return leader->attr.flags & PMUCTX_ATTR_PINNED;
}

/* The unit's members after @m (the leader first), NULL at the end. */
static struct pmuctx_counter *pmuctx_unit_next(struct pmuctx_counter *leader,
					       struct pmuctx_counter *m)
{
	if (m == leader)
		return list_first_entry_or_null(&leader->siblings,
						struct pmuctx_counter,
						sibling_entry);
	if (list_is_last(&m->sibling_entry, &leader->siblings))
		return NULL;
	return list_next_entry(m, sibling_entry);
}

static bool pmuctx_unit_has_hw(struct pmuctx_counter *leader)
{
	struct pmuctx_counter *m;

	for (m = leader; m; m = pmuctx_unit_next(leader, m))
		if (pmuctx_counter_is_hw(m))
			return true;
	return false;
}

/*
 * Slots for every hardware counter of @leader's unit (and @extra, a
 * counter about to join it) beside *@used.  On success *@used takes them
 * and, with @assign, the counters their hw_idx.  Changes nothing else.
 */
static bool pmuctx_unit_place(struct pmuctx_counter *leader,
			      const struct pmuctx_counter *extra,
			      unsigned long *used, bool assign)
{
	unsigned long mask = *used;
	struct pmuctx_counter *m;
	int idx;

	for (m = leader; m; m = pmuctx_unit_next(leader, m)) {
		if (!pmuctx_counter_is_hw(m))
			continue;
		idx = pmuctx_hw->slot_pick(mask, m);
		if (idx < 0)
			return false;
		__set_bit(idx, &mask);
		if (assign)
			m->hw_idx = idx;
	}
	if (extra && pmuctx_counter_is_hw(extra)) {
		idx = pmuctx_hw->slot_pick(mask, extra);
		if (idx < 0)
			return false;
		__set_bit(idx, &mask);
	}
	*used = mask;
	return true;
}

/* Put a placed unit on the PMU, or take it off: its counters' states. */
static void pmuctx_unit_set(struct pmuctx_context *ctx,
			    struct pmuctx_counter *leader, bool on,
			    const u64 *clk)
{
	bool pinned = pmuctx_unit_pinned(leader);
	struct pmuctx_counter *m;

	for (m = leader; m; m = pmuctx_unit_next(leader, m)) {
		/*
		 * A pinned counter that waited for this choice since it was
		 * added (the context was loaded on another CPU then): its
		 * enabled time starts now, so that pinned means running
		 * whenever enabled.
		 */
		if (on && pinned && m->mux_off && m->enabled &&
		    !m->slices.n && !m->run_base) {
			m->time_base = 0;
			m->time_snap = clk[PMUCTX_CLK_TIME];
		}
		if (pmuctx_counter_is_hw(m)) {
			if (on) {
				ctx->slots[m->hw_idx] = m;
				__set_bit(m->hw_idx, &ctx->used_mask);
			} else {
				m->hw_idx = -1;
			}
		}
		pmuctx_counter_set_mux_off(m, !on, clk);
	}
}

/*
 * A unit that stays on across a rotation: end its counters' slices and
 * start new ones at the same instant (no time is lost).  Each rotation is
 * one draw of the rotation's sample, and the error estimate counts draws
 * (Documentation/multiplexing.rst, "The order of turns").
 */
static void pmuctx_unit_split(struct pmuctx_counter *leader, const u64 *clk)
{
	struct pmuctx_counter *m;

	for (m = leader; m; m = pmuctx_unit_next(leader, m)) {
		pmuctx_counter_set_mux_off(m, true, clk);
		pmuctx_counter_set_mux_off(m, false, clk);
	}
}

static bool pmuctx_unit_is_flexible_hw(struct pmuctx_counter *c)
{
	return c->leader == c && !pmuctx_unit_pinned(c) && pmuctx_unit_has_hw(c);
}

/* A unit wants the PMU while any of its counters is enabled. */
static bool pmuctx_unit_enabled(struct pmuctx_counter *leader)
{
	struct pmuctx_counter *m;

	for (m = leader; m; m = pmuctx_unit_next(leader, m))
		if (m->enabled)
			return true;
	return false;
}

/* Enabled flexible units: the ones that take turns. */
static bool pmuctx_unit_takes_turns(struct pmuctx_counter *c)
{
	return pmuctx_unit_is_flexible_hw(c) && pmuctx_unit_enabled(c);
}

/* A new random stride for @arg, a context (pmuctx_mux_spreading_stride()). */
static u32 pmuctx_mux_redraw_stride(void *arg)
{
	struct pmuctx_context *ctx = arg;

	pmuctx_mux_draw_stride(ctx);
	return ctx->mux_stride;
}

/*
 * The step for @placed of @n units on: the context's stride times
 * placed / n, unless that step would keep some unit on (or off) the PMU
 * for many rotations in a row; then a new stride is drawn, and after
 * PMUCTX_MUX_STRIDE_DRAWS draws the round robin's (mux_spread.h).  A draw
 * fails at worst three times in ten, so the random rate of turns is kept
 * but for the resonant steps.  Checked once per (placed, n) and stride: a
 * rotation with the same counts costs nothing.
 */
static u32 pmuctx_mux_step(struct pmuctx_context *ctx, unsigned int placed,
			   unsigned int n)
{
	if (!n)
		return 0;
	if (placed != ctx->mux_spread_placed || n != ctx->mux_spread_units) {
		ctx->mux_stride = pmuctx_mux_spreading_stride(ctx->mux_stride,
							      placed, n,
							      pmuctx_mux_redraw_stride,
							      ctx);
		ctx->mux_spread_placed = placed;
		ctx->mux_spread_units = n;
	}
	return pmuctx_mux_stride_step(ctx->mux_stride, placed, n);
}

/*
 * Choose the units on the PMU (ctx->lock held, the context's counters
 * stopped: not loaded, or unloaded and folded): every pinned one, then
 * the flexible ones that are enabled, in list order from the one at
 * @mux_pos (a fraction of the list), each that still fits (a big group
 * left out does not keep smaller ones off).  @rotate first moves
 * @mux_pos on by @mux_step: the stride (a fraction of the units the last
 * choice put on, drawn for each context at random between 0.9 and 1)
 * over the list.  With n units of which m fit, unit u is then on at
 * rotation j when frac(pos0 + j * s * m / n - u / n) < m / n: a Kronecker
 * sequence, whose random start (a new context's, a fork's clone's) makes
 * each unit as likely to be on at any instant as at any other, and whose
 * random rate moves the periods a program would need to stay in step
 * with the rotation to a different place in each context, while each
 * unit's turns stay spread as evenly as a fixed order's
 * (Documentation/multiplexing.rst, "The order of turns").  A flexible
 * unit with every counter disabled takes no turn (it counts nothing);
 * enabling one of them asks for a new choice (@mux_dirty,
 * pmuctx_counter_set_enabled()), which starts from the same place.
 * Counters that stay on keep counting, but a rotation ends their slice
 * and starts another: each rotation is one draw for the error estimate.
 */
static void pmuctx_mux_schedule(struct pmuctx_context *ctx, const u64 *clk,
				bool rotate)
{
	unsigned int i, n = 0, placed = 0, start;
	struct pmuctx_counter *c;
	unsigned long used = 0;
	bool left_out = false;
	int pass;

	memset(ctx->slots, 0, sizeof(ctx->slots));
	ctx->used_mask = 0;
	list_for_each_entry(c, &ctx->counters, ctx_entry) {
		if (pmuctx_counter_is_hw(c))
			c->hw_idx = -1;
		c->mux_pick = false;
		n += pmuctx_unit_takes_turns(c);
	}

	/* Pinned units fit together: checked when each joined. */
	list_for_each_entry(c, &ctx->counters, ctx_entry)
		if (c->leader == c && pmuctx_unit_pinned(c) &&
		    pmuctx_unit_has_hw(c))
			pmuctx_unit_set(ctx, c,
					!WARN_ON_ONCE(!pmuctx_unit_place(c, NULL, &used, true)),
					clk);

	if (ctx->mux_fresh) {
		ctx->mux_pos = prandom_u32_state(&ctx->mux_rnd);
		ctx->mux_fresh = false;
	} else if (rotate) {
		ctx->mux_pos += ctx->mux_step;
	}
	start = n ? ((u64)ctx->mux_pos * n) >> 32 : 0;
	for (pass = 0; pass < 2; pass++) {
		i = 0;
		list_for_each_entry(c, &ctx->counters, ctx_entry) {
			if (!pmuctx_unit_takes_turns(c))
				continue;
			if ((i++ >= start) != !pass)
				continue;
			c->mux_pick = pmuctx_unit_place(c, NULL, &used, true);
			placed += c->mux_pick;
			left_out |= !c->mux_pick;
		}
	}

	list_for_each_entry(c, &ctx->counters, ctx_entry) {
		if (!pmuctx_unit_is_flexible_hw(c))
			continue;
		if (rotate && c->mux_pick && !c->mux_off)
			pmuctx_unit_split(c, clk);
		pmuctx_unit_set(ctx, c, c->mux_pick, clk);
	}
	ctx->mux_step = pmuctx_mux_step(ctx, placed, n);
	ctx->mux_rotate = left_out;
	ctx->mux_dirty = false;
}

/*
 * The next rotation: from half a tick before the interval ends to half a
 * tick after, so it rides on the scheduler tick's interrupt (hrtimers run
 * every timer that is due, soft expiry passed, when any of them fires)
 * and multiplexing costs the task no interrupt of its own.
 */
static ktime_t pmuctx_mux_soft_expiry(ktime_t now)
{
	u64 interval = (u64)READ_ONCE(pmuctx_mux_interval_ms) * NSEC_PER_MSEC;

	return ktime_add_ns(now, interval - min_t(u64, interval, TICK_NSEC) / 2);
}

/* This CPU rotates the context loaded on it while one needs it. */
static void pmuctx_mux_arm(void)
{
	struct hrtimer *t = this_cpu_ptr(&pmuctx_mux_timer);

	if (!hrtimer_is_queued(t))
		hrtimer_start_range_ns(t, pmuctx_mux_soft_expiry(ktime_get()),
				       TICK_NSEC, HRTIMER_MODE_ABS_PINNED_HARD);
}

/*
 * Choose again with the context loaded on this CPU (IRQs off, ctx->lock):
 * stop and fold its counters, pick, program.  @rotate moves on to the
 * units that were left out.
 */
static void pmuctx_mux_reprogram(struct pmuctx_context *ctx, bool rotate,
				 u64 start)
{
	u64 clk[PMUCTX_NR_CLOCKS];

	pmuctx_hw->unload(ctx);
	pmuctx_ctx_clocks_now(ctx, clk);
	if (rotate)
		ctx->rotations++;
	pmuctx_mux_schedule(ctx, clk, rotate);
	pmuctx_hw->load(ctx);
	pmuctx_ctx_update_user_pages(ctx);
	if (ctx->mux_rotate)
		pmuctx_mux_arm();
	/*
	 * The PMU was stopped meanwhile: no counter saw this work, so no time
	 * does either, or every scaled count would include the rotation's own
	 * cost (as if the task had been switched out for it).
	 */
	if (ctx->clocks_running)
		ctx->snap[PMUCTX_CLK_TIME] += local_clock() - start;
}

static enum hrtimer_restart pmuctx_mux_tick(struct hrtimer *t)
{
	u64 start = local_clock();
	struct pmuctx_context *ctx;
	bool again = false, paused;

	/* A dead CPU's timers move to a live one: this one is not ours. */
	if (t != this_cpu_ptr(&pmuctx_mux_timer))
		return HRTIMER_NORESTART;
	/* Loaded here: alive until this CPU unloads it, IRQs off meanwhile. */
	ctx = __this_cpu_read(pmuctx_loaded_ctx);
	if (!ctx)
		return HRTIMER_NORESTART;
	/*
	 * Stop the whole PMU before even the lock is taken, so the counters
	 * see as little of the rotation as can be.  A loaded context's
	 * @mux_rotate is written only on its CPU (it is chosen elsewhere
	 * only while not loaded), so this peek is exact.
	 */
	paused = READ_ONCE(ctx->mux_rotate);
	if (paused)
		pmuctx_hw->pause();
	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id() && ctx->mux_rotate &&
	    !ctx->dead) {
		pmuctx_mux_reprogram(ctx, true, start);
		again = ctx->mux_rotate;
	}
	if (paused)
		pmuctx_hw->resume();
	pmuctx_ctx_unlock(ctx);
	if (!again)
		return HRTIMER_NORESTART;
	hrtimer_set_expires_range_ns(t, pmuctx_mux_soft_expiry(hrtimer_cb_get_time(t)),
				     TICK_NSEC);
	return HRTIMER_RESTART;
}

/*
 * A counter joins @ctx (ctx->lock and ctx->mutex held), alone or into
 * @leader's group.  Refused (-ENOSPC) only when it could never count: its
 * unit does not fit an empty PMU, or it is pinned and does not fit beside
 * the other pinned units.  Returns PMUCTX_MUX_ON when it took a free slot
 * beside the counters on the PMU (the caller starts it), PMUCTX_MUX_WAIT
 * when its unit is off the PMU for now (rotations bring it on), and
 * PMUCTX_MUX_RESCHED when the units must be chosen again
 * (pmuctx_mux_added()).
 */
int pmuctx_mux_add(struct pmuctx_context *ctx, struct pmuctx_counter *c,
		   struct pmuctx_counter *leader)
{
	/* The unit @c makes or joins: @leader's plus @c, or @c alone. */
	struct pmuctx_counter *unit = leader ?: c, *extra = leader ? c : NULL;
	struct pmuctx_counter *p;
	unsigned long used = 0;
	int idx;

	c->hw_idx = -1;
	if (!pmuctx_counter_is_hw(c)) {
		/* A software member counts when its unit does. */
		c->mux_off = leader && leader->mux_off;
		return c->mux_off ? PMUCTX_MUX_WAIT : PMUCTX_MUX_ON;
	}
	if (!pmuctx_unit_place(unit, extra, &used, false))
		return -ENOSPC;
	if (pmuctx_unit_pinned(unit)) {
		used = 0;
		list_for_each_entry(p, &ctx->counters, ctx_entry)
			if (p->leader == p && p != unit &&
			    pmuctx_unit_pinned(p) &&
			    !pmuctx_unit_place(p, NULL, &used, false))
				return -ENOSPC;
		if (!pmuctx_unit_place(unit, extra, &used, false))
			return -ENOSPC;
	}

	if (leader && leader->mux_off) {
		c->mux_off = true;
		return PMUCTX_MUX_WAIT;
	}
	idx = ctx->mux_rotate || ctx->mux_dirty ? -ENOSPC :
	      pmuctx_hw->slot_pick(ctx->used_mask, c);
	if (idx >= 0) {
		c->hw_idx = idx;
		c->mux_off = false;
		ctx->slots[idx] = c;
		__set_bit(idx, &ctx->used_mask);
		return PMUCTX_MUX_ON;
	}
	c->mux_off = true;
	return PMUCTX_MUX_RESCHED;
}

/*
 * A change asked for a new choice (ctx->lock held, process context or
 * the holder's CPU with IRQs off): choose now if the context is not
 * loaded, or is loaded on this CPU; else true: the caller, with ctx->lock
 * dropped, calls pmuctx_mux_resched_loaded().  A load in between chooses
 * too.
 */
bool pmuctx_mux_resched(struct pmuctx_context *ctx)
{
	u64 clk[PMUCTX_NR_CLOCKS];

	if (!ctx->mux_dirty || ctx->dead)
		return false;
	if (ctx->loaded_cpu == raw_smp_processor_id() && irqs_disabled()) {
		pmuctx_mux_reprogram(ctx, false, local_clock());
		return false;
	}
	if (ctx->loaded_cpu >= 0)
		return true;
	pmuctx_ctx_clocks_now(ctx, clk);
	pmuctx_mux_schedule(ctx, clk, false);
	return false;
}

/* After pmuctx_mux_add() said PMUCTX_MUX_RESCHED: as pmuctx_mux_resched(). */
bool pmuctx_mux_added(struct pmuctx_context *ctx)
{
	ctx->mux_dirty = true;
	return pmuctx_mux_resched(ctx);
}

/* On the CPU the context was loaded on, IRQs off: as any other chooser. */
static void pmuctx_mux_resched_ipi(void *info)
{
	struct pmuctx_context *ctx = info;

	pmuctx_ctx_lock(ctx);
	pmuctx_mux_resched(ctx);
	pmuctx_ctx_unlock(ctx);
}

/* Process context, a reference held: choose on the CPU it is loaded on. */
void pmuctx_mux_resched_loaded(struct pmuctx_context *ctx)
{
	int cpu = READ_ONCE(ctx->loaded_cpu);

	if (cpu >= 0)
		smp_call_function_single(cpu, pmuctx_mux_resched_ipi, ctx, 1);
}

/*
 * pmuctx_ctx_load() of a context that rotates or must choose, before the
 * PMU is programmed and before loaded_cpu is set (so the clocks do not
 * fold counters not programmed yet): choose if a change asked for it, and
 * keep this CPU's rotation timer going.
 */
void pmuctx_mux_loading(struct pmuctx_context *ctx)
{
	u64 clk[PMUCTX_NR_CLOCKS];

	if (ctx->mux_dirty) {
		pmuctx_ctx_clocks_now(ctx, clk);
		pmuctx_mux_schedule(ctx, clk, false);
	}
	if (ctx->mux_rotate)
		pmuctx_mux_arm();
}

/*
 * A counter leaves its context (ctx->lock held): free its slot.  @nr_hw
 * is the caller's to lower, once the counter is off the PMU: see
 * pmuctx_ctx_remove_counter().
 */
void pmuctx_mux_forget(struct pmuctx_context *ctx, struct pmuctx_counter *c)
{
	if (!pmuctx_counter_is_hw(c))
		return;
	if (c->hw_idx >= 0 && ctx->slots[c->hw_idx] == c) {
		ctx->slots[c->hw_idx] = NULL;
		__clear_bit(c->hw_idx, &ctx->used_mask);
	}
}

/* A fork's clone of @c takes @c's slot: equivalent contexts program alike. */
void pmuctx_mux_copy_slot(struct pmuctx_context *cctx,
			  struct pmuctx_counter *clone,
			  const struct pmuctx_counter *c)
{
	clone->hw_idx = c->hw_idx;
	cctx->nr_hw++;
	if (c->hw_idx >= 0) {
		cctx->slots[c->hw_idx] = clone;
		__set_bit(c->hw_idx, &cctx->used_mask);
	}
}

/*
 * A CPU comes (back) online, before any task runs there.  Its timer may
 * still be queued where it migrated when the CPU went down (it then ends
 * there without a restart: pmuctx_mux_tick()): cancelled here, or
 * pmuctx_mux_arm() would find it queued and never arm it for this CPU, and
 * a context loaded here for good would stop rotating.
 */
static int pmuctx_mux_cpu_online(unsigned int cpu)
{
	hrtimer_cancel(per_cpu_ptr(&pmuctx_mux_timer, cpu));
	return 0;
}

static enum cpuhp_state pmuctx_mux_hp_state = CPUHP_INVALID;

int pmuctx_mux_init(void)
{
	int cpu, state;

	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&pmuctx_mux_timer, cpu);

		pmuctx_hrtimer_setup(t, pmuctx_mux_tick, CLOCK_MONOTONIC,
				     HRTIMER_MODE_ABS_PINNED_HARD);
	}
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "pmuctx/mux:online",
					  pmuctx_mux_cpu_online, NULL);
	if (state < 0)
		return state;
	pmuctx_mux_hp_state = state;
	return 0;
}

/* No context is left to be loaded: a timer still queued has nothing to do. */
void pmuctx_mux_exit(void)
{
	int cpu;

	if (pmuctx_mux_hp_state != CPUHP_INVALID)
		cpuhp_remove_state_nocalls(pmuctx_mux_hp_state);
	pmuctx_mux_hp_state = CPUHP_INVALID;
	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&pmuctx_mux_timer, cpu));
}
