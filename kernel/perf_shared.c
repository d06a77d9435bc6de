// SPDX-License-Identifier: GPL-2.0
/*
 * The shared backend (backend=shared): pmuctx's contexts on counters perf
 * lends, as per-CPU kernel events, instead of on events bound to tasks
 * (perf_fallback.c) or on the whole PMU (the native backends).
 * Documentation/design.rst ("The shared backend") has the model and why.
 *
 * Each distinct configuration in use (event, filters, pinned) is one
 * counting kernel event per online CPU, made at the open of the first
 * counter that needs it and released by a work after the last counter
 * using it (the original's last put, which all its clones hold) is gone.
 * perf schedules those events beside everybody else's and multiplexes
 * them fairly when the PMU is over-committed: nobody gets EBUSY from the
 * other.  A counter's clock (@hw_count) is what its CPU's event counted
 * while the counter's context was loaded there: a load snapshots each of
 * the context's events on this CPU, a fold or an unload adds the delta.
 * The time perf kept the event off the PMU meanwhile (its time enabled
 * less its time running) is the counter's @hw_missed, as for the
 * task-bound backend, and each turn perf gives the event while it
 * multiplexes it is one of the counter's slices (perf_shared_turn(), and
 * the watch timer that folds a running context once per rotation of
 * perf's while it does).
 *
 * The events belong to CPUs, not to tasks, so a switch between equivalent
 * contexts (the swap) reads and writes nothing: the context stays loaded
 * on this CPU, its snapshots stay valid, and it counts its new holder.
 *
 * Samples, as the task-bound backend takes them (perf_fallback.c): the
 * periods are counted by the folds, from the counts, only while the
 * counter counts; perf's overflow only wakes a fold.  A sampling counter
 * borrows its event's *sampling* configuration: the same event with a
 * period of PMUCTX_PERF_MIN_WAKE and pmuctx_perf_overflow() as its
 * handler, whatever the counter's own period (or frequency), so that
 * every sampling counter of one event shares one configuration (one
 * interrupt source per CPU, one of max_borrowed).  Non-sampling counters
 * keep the plain configuration, which never interrupts.  The handler (an
 * NMI on x86, the PMU interrupt on arm64) queues this CPU's irq_work,
 * which folds whatever context is loaded here under its lock: the
 * demux is the context loaded on the CPU, and after a swap within a
 * family that is the swapped-in holder's.  At most one sample a fold (a
 * wake's, an unload's, a read's) a counter, carrying every period it
 * ended, with the user registers of the holder running at the fold.
 *
 * No self-reads (ENODEV at mmap, as the task-bound backend: perf may move
 * an event between counters).
 *
 * CPU hotplug: events are made on the CPUs online at the first open and
 * never later.  A CPU with no event (offline then), or whose event perf
 * turned off as it went offline, counts nothing for the counters loaded
 * there, and their time running says so: all that time is missed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "pmuctx.h"
#include "compat/hrtimer.h"
#include "compat/perf_ctx_time.h"

/*
 * One user's hold on a configuration (perf_shared_lock): the originals
 * of @uid that use it.  A user holds a configuration while one of their
 * originals uses it, whoever made it.
 */
struct perf_shared_holder {
	struct list_head entry;
	kuid_t uid;
	unsigned int users;
};

/*
 * One borrowed configuration.  @attr and @events are set before it is
 * listed and never change; @events[cpu] is NULL where perf gave no event
 * (a CPU offline at the first open).  @users and @holders
 * (perf_shared_lock): the originals whose event_init took it, and per
 * user; at 0 it leaves the list and its @release_work lets the events go
 * (releasing sleeps, and the last put may come in any context).
 *
 * A sampling configuration's events call pmuctx_perf_overflow() from the
 * moment each is made, one CPU after another, until each is released:
 * while the configuration is half built (not listed yet, no counter has
 * it) and while its release work tears it down (no counter has it any
 * more).  So nothing reachable from the NMI or PMU interrupt may look at
 * a configuration: the handler touches only its CPU's irq_work, and the
 * work reaches configurations only through the counters in the slots of
 * the context loaded on its CPU, whose configurations are whole (a
 * counter gets one only once all its events exist) and alive (released
 * only after the original's last put, when no context holds a counter of
 * it).  A CPU whose event exists before the configuration is complete
 * wakes folds of contexts that do not use it; harmless.
 */
struct perf_shared_cfg {
	struct list_head entry;
	unsigned int users;
	struct list_head holders;
	struct work_struct release_work;
	struct perf_event_attr attr;
	struct perf_event *events[];
};

/*
 * perf_shared_mutex: one open at a time makes a configuration's events,
 * so two opens of the same new configuration share one set (it sleeps:
 * taken in process context, outside every pmuctx lock but the target's
 * exec_update_lock, as the task-bound backend makes its events).
 * perf_shared_lock (irqsave, inside the mutex): the list, each entry's
 * @users and perf_shared_nr, the configurations listed.
 */
static DEFINE_MUTEX(perf_shared_mutex);
static DEFINE_SPINLOCK(perf_shared_lock);
static LIST_HEAD(perf_shared_list);
static unsigned int perf_shared_nr;

/*
 * The most configurations borrowed at once, system-wide, and by one user
 * without CAP_PERFMON (Documentation/security.rst, "The shared backend").
 * A borrowed event is a flexible CPU-wide event of perf's, which perf
 * puts on the PMU before any task's flexible events, whether a context
 * of pmuctx's is loaded on that CPU or not: had pmuctx as many as the
 * PMU has counters, perf's users' task events would never count.  So by
 * default (0) pmuctx leaves two of the general counters to perf's users
 * on every CPU (perf_shared_auto_bound, from the PMU's size), and one
 * user may hold half of what pmuctx may borrow.  Past either bound an
 * open of a configuration new to the system, or to that user, is ENOSPC.
 */
static unsigned int max_borrowed;
module_param(max_borrowed, uint, 0644);
MODULE_PARM_DESC(max_borrowed,
		 "backend=shared: most distinct hardware configurations borrowed from perf at once (default 0: the PMU's general counters less two)");
static unsigned int max_borrowed_per_user;
module_param(max_borrowed_per_user, uint, 0644);
MODULE_PARM_DESC(max_borrowed_per_user,
		 "backend=shared: most configurations one user without CAP_PERFMON holds (default 0: half of max_borrowed, rounded up)");
static unsigned int perf_shared_auto_bound = 1;

/* What pmuctx borrows now: the configurations listed (read-only). */
static int perf_shared_borrowed_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(perf_shared_nr));
}

static const struct kernel_param_ops perf_shared_borrowed_ops = {
	.get = perf_shared_borrowed_get,
};
module_param_cb(borrowed, &perf_shared_borrowed_ops, NULL, 0444);
MODULE_PARM_DESC(borrowed,
		 "backend=shared: configurations borrowed from perf now");

static unsigned int perf_shared_bound(void)
{
	return READ_ONCE(max_borrowed) ?: perf_shared_auto_bound;
}

static unsigned int perf_shared_user_bound(void)
{
	return READ_ONCE(max_borrowed_per_user) ?:
	       DIV_ROUND_UP(perf_shared_bound(), 2);
}

static char perf_shared_name[PMUCTX_BACKEND_NAME_LEN] = "perf-shared";
static struct pmuctx_hw_desc perf_shared_desc;
static bool perf_shared_described;

static struct perf_shared_cfg *perf_shared_cfg(const struct pmuctx_counter *c)
{
	return (struct perf_shared_cfg *)(unsigned long)c->hw_config;
}

/*
 * The event's time running so far, on its perf context's clock at @now
 * (perf_event_time_now()'s reading): its total as of its last change of
 * state, and, while active, the time since.
 */
static u64 perf_shared_running(struct perf_event *ev, u64 now)
{
	struct perf_event_context *pctx = ev->ctx;
	u64 run = READ_ONCE(ev->total_time_running), t;

	if (READ_ONCE(ev->state) == PERF_EVENT_STATE_ACTIVE) {
		t = READ_ONCE(pctx->is_active) ?
		    now + pmuctx_perf_ctx_offset(pctx) :
		    pmuctx_perf_ctx_frozen(pctx);
		if (t > READ_ONCE(ev->tstamp))
			run += t - READ_ONCE(ev->tstamp);
	}
	return run;
}

/*
 * @c's reading of its CPU's event at @now (local_clock()), kept as its
 * snapshot: the event's count (@hw_prev), its time running
 * (@hw_run_prev), a reading of the time it did not run (@hw_missed_prev:
 * the clock less its time running, which grows at the clock's rate while
 * the event waits (INACTIVE), is off or absent, and stands still while it
 * runs), and whether perf has it on this CPU's PMU now (@hw_on).  IRQs
 * off, on the CPU the context is loaded on: perf changes nothing of an
 * event of this CPU meanwhile (its rotation, in this CPU's hard
 * interrupt, comes before or after, never between), and an active one's
 * PMU reads its hardware counter first, as perf_event_read_local() (not
 * exported) does.
 */
static void perf_shared_read(struct pmuctx_counter *c, u64 now)
{
	struct perf_event *ev = perf_shared_cfg(c)->events[smp_processor_id()];

	if (!ev) {
		c->hw_prev = 0;
		c->hw_run_prev = 0;
		c->hw_missed_prev = now;
		c->hw_on = false;
		return;
	}
	c->hw_on = READ_ONCE(ev->state) == PERF_EVENT_STATE_ACTIVE &&
		   READ_ONCE(ev->oncpu) == smp_processor_id();
	if (c->hw_on)
		ev->pmu->read(ev);
	c->hw_prev = local64_read(&ev->count);
	c->hw_run_prev = perf_shared_running(ev, now);
	c->hw_missed_prev = now - c->hw_run_prev;
}

/*
 * A walk (a load, a fold) reads the clock once, and each configuration's
 * event once however many of the context's counters use it (perf stat -e
 * a,a; a group that repeats an event; make bench's 14 counters on 7
 * events): the PMU is paused across a walk of two counters or more, so
 * one reading is every such counter's.  @same is a counter of the same
 * configuration this walk already did, whose snapshot is that reading
 * (all of it: the event's place on the PMU too, so that a counter's turn
 * of perf's ends alike whichever counter read the event), or NULL.  (No
 * table of readings on the stack: Debian builds with INIT_STACK_ALL_ZERO,
 * and zeroing one at each switch made a load of two counters dearer.)
 */
static const struct pmuctx_counter *
perf_shared_same(const struct pmuctx_context *ctx, unsigned long done,
		 const struct pmuctx_counter *c)
{
	int i;

	for_each_set_bit(i, &done, PMUCTX_MAX_HW_SLOTS)
		if (ctx->slots[i]->hw_config == c->hw_config)
			return ctx->slots[i];
	return NULL;
}

/* @c's snapshot is the walk's reading of its event (perf_shared_same()). */
static __always_inline void perf_shared_take(struct pmuctx_counter *c,
					     const struct pmuctx_counter *same,
					     u64 now)
{
	if (!same) {
		perf_shared_read(c, now);
		return;
	}
	c->hw_prev = same->hw_prev;
	c->hw_run_prev = same->hw_run_prev;
	c->hw_missed_prev = same->hw_missed_prev;
	c->hw_on = same->hw_on;
}

/* What a counter's reading tells the walk (perf_shared_turn()). */
#define PERF_SHARED_ENDED	BIT(0)	/* a counter's slice in progress ends */
#define PERF_SHARED_MUXED	BIT(1)	/* perf multiplexes this CPU's PMU */
#define PERF_SHARED_SAMPLES	BIT(2)	/* a sampling counter counts: watched */

/*
 * perf's multiplexing, as @c sees it at a reading (@ran: perf ran the
 * event since @c's last reading; @missed: the event missed time since
 * then): PERF_SHARED_ENDED when @c's slice in progress ends here
 * (perf_shared_ended()), PERF_SHARED_MUXED when perf multiplexes this
 * CPU's PMU: the event is off, or missed time since the last reading.
 * perf takes its flexible events off and puts them back at each of its
 * rotations, so an event it keeps on across one misses a few
 * microseconds of time running there: a counter is judged by where its
 * event is at the reading, not by the time it missed.  An event found on
 * runs in the slice in progress (@hw_ran) without @ran being asked: that
 * is only for one found off, which perf may have run and taken off again
 * since the last reading.  Returned, not gathered through a pointer: a
 * walk's frame holds no local whose address is taken (which the stack
 * protector would guard at every switch).
 */
static __always_inline unsigned int perf_shared_turn(struct pmuctx_counter *c,
						     bool ran, bool missed)
{
	/* Set while @c does not count too: a slice's beginning clears it. */
	if (likely(c->hw_on)) {
		c->hw_ran = true;
		/* perf does not multiplex: the common case. */
		if (likely(!missed) || !pmuctx_counter_counting(c))
			return 0;
		return PERF_SHARED_MUXED;
	}
	if (!pmuctx_counter_counting(c))
		return 0;
	c->hw_ran |= ran;
	return PERF_SHARED_MUXED | (c->hw_ran ? PERF_SHARED_ENDED : 0);
}

/*
 * PERF_SHARED_SAMPLES when @c is a sampling counter: the watch (below)
 * folds its context while it is loaded, whether or not the event's
 * overflow wakes a fold.  Disabled too: its enable is a fold's change,
 * and after it nothing may fold again but the wake.
 */
static __always_inline unsigned int perf_shared_samples(const struct pmuctx_counter *c)
{
	return unlikely(c->attr.sample_period) ? PERF_SHARED_SAMPLES : 0;
}

/*
 * Whether @c's slice in progress ends at the reading just taken: perf
 * took the event off the PMU after it ran in that slice
 * (pmuctx_counter_split_slice()).  From @c's state after the reading, as
 * perf_shared_turn() found it.
 */
static bool perf_shared_ended(const struct pmuctx_counter *c)
{
	return !c->hw_on && c->hw_ran && pmuctx_counter_counting(c);
}

/*
 * @c counts from now on this CPU.  ctx->lock held (or claimed), IRQs off.
 * A turn of perf's that ended while the context was not loaded ends the
 * slice in progress here.
 */
static unsigned int perf_shared_snap(struct pmuctx_counter *c,
				     const struct pmuctx_counter *same, u64 now)
{
	perf_shared_take(c, same, now);
	return perf_shared_turn(c, false, false) | perf_shared_samples(c);
}

/*
 * What @c's event counted since its snapshot, and the time it missed;
 * and, for a sampling counter, the periods that ended meanwhile: folds
 * come before every change of counting, so one delta is of one state.
 * Returns what the reading tells (perf_shared_turn()).
 */
static unsigned int perf_shared_fold_one(struct pmuctx_counter *c,
					 const struct pmuctx_counter *same,
					 u64 now)
{
	u64 count = c->hw_prev, missed = c->hw_missed_prev;
	u64 running = c->hw_run_prev;
	bool missing;

	perf_shared_take(c, same, now);
	if (unlikely(c->attr.sample_period) && pmuctx_counter_counting(c))
		pmuctx_perf_periods(c, c->hw_prev - count);
	c->hw_count += c->hw_prev - count;
	/* A reading never runs backwards; clocks of two reads may. */
	missing = (s64)(c->hw_missed_prev - missed) > 0;
	if (missing)
		c->hw_missed += c->hw_missed_prev - missed;
	return perf_shared_turn(c, c->hw_run_prev != running, missing) |
	       perf_shared_samples(c);
}

/*
 * Two or more events are read one after the other, and they count on
 * meanwhile: the kernel's instructions between two reads would be one
 * configuration's and not the other's (inst:u + inst:k would not be
 * inst).  So this CPU's PMU stops while they are read, as perf stops it
 * around its own switches.  Through pmu_disable itself: perf_pmu_disable()
 * is not exported, and its nesting count is not needed, since perf holds
 * the PMU disabled only with IRQs off on this CPU, and every caller here
 * runs with IRQs off, never inside perf (never in NMI).  One PMU: the
 * first event's (a hybrid CPU's other PMU would read unpaused).  Paused
 * from @from counters on: 2 at a switch, 1 for the watch (below), which
 * the counters need not see at all.
 */
static struct pmu *perf_shared_pause(struct pmuctx_context *ctx,
				     unsigned long used, unsigned int from)
{
	struct perf_event *ev;

	if (!used || hweight_long(used) < from)
		return NULL;
	ev = perf_shared_cfg(ctx->slots[__ffs(used)])->events[smp_processor_id()];
	if (!ev)
		return NULL;
	ev->pmu->pmu_disable(ev->pmu);
	return ev->pmu;
}

static void perf_shared_resume(struct pmu *pmu)
{
	if (pmu)
		pmu->pmu_enable(pmu);
}

/*
 * After a walk in which some counter's turn of perf's ended: the slices
 * of those counters end and the next begin, on one reading of the
 * context's clocks.  Out of line, so that the frame of a walk that ends
 * no turn (every switch while perf does not multiplex) holds no table of
 * clocks (perf_shared_same() says why), and the walk keeps no mask of
 * the counters: each one's state after its reading says.
 */
static noinline void perf_shared_split(struct pmuctx_context *ctx)
{
	unsigned long used = ctx->used_mask;
	u64 clk[PMUCTX_NR_CLOCKS];
	int i;

	pmuctx_ctx_holder_clocks(ctx, clk);
	for_each_set_bit(i, &used, PMUCTX_MAX_HW_SLOTS)
		if (perf_shared_ended(ctx->slots[i]))
			pmuctx_counter_split_slice(ctx->slots[i], clk);
}

/*
 * @op on each counter on the (virtual) PMU, the context's slots; then the
 * slices of the counters whose turn of perf's ended are split, on one
 * reading of the context's clocks; the PMU paused across it all from
 * @pause counters on (perf_shared_pause()).  Inlined with @op a constant:
 * no indirect call at a switch.  Returns whether the context is to be
 * watched: perf multiplexes this CPU's PMU (perf_shared_turn()) or a
 * counter samples (perf_shared_samples()).
 */
static __always_inline bool
perf_shared_each(struct pmuctx_context *ctx,
		 unsigned int (*op)(struct pmuctx_counter *c,
				    const struct pmuctx_counter *same, u64 now),
		 unsigned int pause)
{
	unsigned long used = ctx->used_mask;
	struct pmu *paused = perf_shared_pause(ctx, used, pause);
	u64 now = local_clock();
	unsigned int seen = 0;
	int i;

	for_each_set_bit(i, &used, PMUCTX_MAX_HW_SLOTS)
		seen |= op(ctx->slots[i],
			   perf_shared_same(ctx, used & (BIT(i) - 1), ctx->slots[i]),
			   now);
	if (unlikely(seen & PERF_SHARED_ENDED))
		perf_shared_split(ctx);
	perf_shared_resume(paused);
	return seen & (PERF_SHARED_MUXED | PERF_SHARED_SAMPLES);
}

/*
 * The watch: while perf multiplexes the PMU under the context loaded on a
 * CPU, that CPU's timer folds the context about once per rotation of
 * perf's, so that each turn perf gives a counter's event is one slice of
 * the counter (perf_shared_turn()): a fold sees at most one of perf's
 * rotations since the last one.  And while a counter of the context
 * samples: its event's overflow only wakes a fold, and an overflow that
 * never comes (QEMU 7.2's arm64 PMU loses one now and then, and the
 * event, on the 64-bit cycle counter with its upper half set, is then
 * 2^64 events from the next: testing.rst "A borrowed sampling event that
 * stopped interrupting") would leave a task that never switches without
 * samples; with the watch they come at least once per interval.  A
 * sampling context is watched throughout, as perf's tick visits its own
 * sampling events: one timer interrupt per interval on a CPU that runs
 * one, none elsewhere.  perf rotates every
 * perf_event_mux_interval_ms of its PMU (hrtimer_interval_ms, read at
 * each arming); the timer fires at the first interrupt in the second
 * half of that interval, perf's own rotation's as likely as any, or at
 * its end.  It stops after a fold that saw neither, or when nothing is
 * loaded; any later fold that sees either arms it again.  One
 * per CPU, pinned, callback in hard interrupt context, as the rotation
 * timer (mux.c).  A timer that migrated when its CPU went down stops
 * at its next expiry elsewhere, and the CPU's next fold arms it again.
 */
static DEFINE_PER_CPU(struct hrtimer, perf_shared_watch_timer);

static void perf_shared_watch_set(struct pmuctx_context *ctx, struct hrtimer *t,
				  ktime_t now)
{
	u64 ms = 0, interval;
	struct perf_event *ev;

	ev = perf_shared_cfg(ctx->slots[__ffs(ctx->used_mask)])->events[smp_processor_id()];
	if (ev)
		ms = READ_ONCE(ev->pmu->hrtimer_interval_ms);
	interval = (ms ?: 1000 / HZ ?: 1) * NSEC_PER_MSEC;
	hrtimer_set_expires_range_ns(t, ktime_add_ns(now, interval / 2),
				     interval - interval / 2);
}

static noinline void perf_shared_watch_start(struct pmuctx_context *ctx)
{
	struct hrtimer *t = this_cpu_ptr(&perf_shared_watch_timer);

	if (hrtimer_is_queued(t) || !ctx->used_mask)
		return;
	perf_shared_watch_set(ctx, t, ktime_get());
	hrtimer_start_expires(t, HRTIMER_MODE_ABS_PINNED_HARD);
}

/*
 * After a load's or fold's readings: keep watching while perf
 * multiplexes or a counter samples.  Only the test inline: a switch of
 * counting contexts under a PMU perf does not multiplex makes no call
 * for the watch.
 */
static __always_inline void perf_shared_watch(struct pmuctx_context *ctx,
					      bool watch)
{
	if (unlikely(watch))
		perf_shared_watch_start(ctx);
}

static enum hrtimer_restart perf_shared_watch_tick(struct hrtimer *t)
{
	struct pmuctx_context *ctx;
	bool watch = false;

	if (t != this_cpu_ptr(&perf_shared_watch_timer))
		return HRTIMER_NORESTART;
	/* Loaded here: alive until this CPU unloads it, IRQs off meanwhile. */
	ctx = __this_cpu_read(pmuctx_loaded_ctx);
	if (!ctx)
		return HRTIMER_NORESTART;
	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id() && ctx->used_mask &&
	    !ctx->dead) {
		watch = perf_shared_each(ctx, perf_shared_fold_one, 1);
		if (watch)
			perf_shared_watch_set(ctx, t, hrtimer_cb_get_time(t));
	}
	pmuctx_ctx_unlock(ctx);
	return watch ? HRTIMER_RESTART : HRTIMER_NORESTART;
}

static void perf_shared_load(struct pmuctx_context *ctx)
{
	perf_shared_watch(ctx, perf_shared_each(ctx, perf_shared_snap, 2));
}

static void perf_shared_unload(struct pmuctx_context *ctx)
{
	perf_shared_each(ctx, perf_shared_fold_one, 2);
}

static void perf_shared_fold(struct pmuctx_context *ctx)
{
	perf_shared_watch(ctx, perf_shared_each(ctx, perf_shared_fold_one, 2));
}

/*
 * The handoff of two equivalent INHERIT_STAT contexts (kernel/sched.c,
 * pmuctx_handoff()): @ctx folds as at an unload, and each counter of
 * @next, in the same slot on the same configuration (equivalent contexts
 * program the same slots alike), takes the same reading as its snapshot,
 * as its load would have read it again: one reading of each event where
 * an unload and a load took two.  A turn of perf's that ended while
 * @next was not loaded ends its slice here, as at its load; @next's
 * clocks start after this, from the values its split reads.  Counting
 * counters only (no sampling: pmuctx_ctx_swap_key()), so the watch is
 * for perf's multiplexing alone.  Both contexts claimed, IRQs off.
 */
static void perf_shared_handoff_fold(struct pmuctx_context *ctx,
				     struct pmuctx_context *next)
{
	unsigned long used = ctx->used_mask;
	unsigned int seen = 0;
	bool watch;
	int i;

	watch = perf_shared_each(ctx, perf_shared_fold_one, 2);
	for_each_set_bit(i, &used, PMUCTX_MAX_HW_SLOTS)
		seen |= perf_shared_snap(next->slots[i], ctx->slots[i], 0);
	if (unlikely(seen & PERF_SHARED_ENDED))
		perf_shared_split(next);
	perf_shared_watch(next, watch || (seen & PERF_SHARED_MUXED));
}

/* A counter comes onto a loaded context's PMU, or goes off it. */
static void perf_shared_program(struct pmuctx_context *ctx,
				struct pmuctx_counter *c, bool on)
{
	u64 clk[PMUCTX_NR_CLOCKS];
	unsigned int seen = on ? perf_shared_snap(c, NULL, local_clock()) :
				 perf_shared_fold_one(c, NULL, local_clock());

	if (on)
		perf_shared_watch(ctx, seen & PERF_SHARED_SAMPLES);
	if (!(seen & PERF_SHARED_ENDED))
		return;
	pmuctx_ctx_holder_clocks(ctx, clk);
	pmuctx_counter_split_slice(c, clk);
}

static void perf_shared_release_work(struct work_struct *work)
{
	struct perf_shared_cfg *cfg =
		container_of(work, struct perf_shared_cfg, release_work);
	int cpu;

	for_each_possible_cpu(cpu)
		if (cfg->events[cpu])
			perf_event_release_kernel(cfg->events[cpu]);
	kfree(cfg);
}

/*
 * The events of @pattr on every online CPU.  A CPU that goes offline
 * meanwhile (perf: ENODEV) has none; any other error is the open's
 * (ENOENT: an event perf's driver does not know).
 */
static struct perf_shared_cfg *perf_shared_make(const struct perf_event_attr *pattr)
{
	struct perf_shared_cfg *cfg;
	struct perf_event *ev;
	int cpu, err = 0;

	cfg = kzalloc(struct_size(cfg, events, nr_cpu_ids), GFP_KERNEL);
	if (!cfg)
		return ERR_PTR(-ENOMEM);
	INIT_WORK(&cfg->release_work, perf_shared_release_work);
	INIT_LIST_HEAD(&cfg->holders);
	cfg->attr = *pattr;
	cfg->users = 1;
	for_each_online_cpu(cpu) {
		ev = perf_event_create_kernel_counter(&cfg->attr, cpu, NULL,
						      pattr->sample_period ?
						      pmuctx_perf_overflow : NULL,
						      NULL);
		if (IS_ERR(ev)) {
			if (PTR_ERR(ev) == -ENODEV)
				continue;
			err = PTR_ERR(ev);
			break;
		}
		cfg->events[cpu] = ev;
	}
	if (err) {
		perf_shared_release_work(&cfg->release_work);
		return ERR_PTR(err);
	}
	return cfg;
}

/*
 * perf asks for perf_event_paranoid <= 0 or CAP_PERFMON of whoever makes a
 * CPU-bound event (perf_allow_cpu(), EACCES), the kernel's own included:
 * it checks current.  pmuctx borrows them on the opener's behalf, and
 * hands out only what they count while the opener's contexts are loaded
 * (Documentation/security.rst, "The shared backend"), so they are made
 * by a kernel worker, with the kernel's credentials.  On the system's
 * unbound queue, not pmuctx_wq: nothing there waits for an open.
 */
struct perf_shared_maker {
	struct work_struct work;
	const struct perf_event_attr *pattr;
	struct perf_shared_cfg *cfg;
};

static void perf_shared_make_work(struct work_struct *work)
{
	struct perf_shared_maker *m =
		container_of(work, struct perf_shared_maker, work);

	m->cfg = perf_shared_make(m->pattr);
}

static struct perf_shared_cfg *perf_shared_make_as_kernel(const struct perf_event_attr *pattr)
{
	struct perf_shared_maker m = { .pattr = pattr };

	INIT_WORK_ONSTACK(&m.work, perf_shared_make_work);
	queue_work(system_unbound_wq, &m.work);
	flush_work(&m.work);
	destroy_work_on_stack(&m.work);
	return m.cfg;
}

static struct perf_shared_cfg *perf_shared_find(const struct perf_event_attr *pattr)
{
	struct perf_shared_cfg *cfg;

	list_for_each_entry(cfg, &perf_shared_list, entry)
		if (!memcmp(&cfg->attr, pattr, sizeof(*pattr)))
			return cfg;
	return NULL;
}

/* @uid's hold on @cfg, or NULL.  perf_shared_lock held. */
static struct perf_shared_holder *perf_shared_holder(struct perf_shared_cfg *cfg,
						     kuid_t uid)
{
	struct perf_shared_holder *h;

	list_for_each_entry(h, &cfg->holders, entry)
		if (uid_eq(h->uid, uid))
			return h;
	return NULL;
}

/* How many configurations @uid holds.  perf_shared_lock held. */
static unsigned int perf_shared_held_by(kuid_t uid)
{
	struct perf_shared_cfg *cfg;
	unsigned int n = 0;

	list_for_each_entry(cfg, &perf_shared_list, entry)
		n += !!perf_shared_holder(cfg, uid);
	return n;
}

/*
 * @c's original takes its place in @cfg (listed, or about to be) as
 * @uid's: into @uid's hold, or @spare as a new one (then NULL).
 * perf_shared_lock held.
 */
static void perf_shared_hold(struct perf_shared_cfg *cfg, kuid_t uid,
			     struct perf_shared_holder **spare)
{
	struct perf_shared_holder *h = perf_shared_holder(cfg, uid);

	if (!h) {
		h = *spare;
		*spare = NULL;
		h->uid = uid;
		list_add(&h->entry, &cfg->holders);
	}
	h->users++;
}

/* At open (process context): the counter's configuration, borrowed. */
static int perf_shared_event_init(struct pmuctx_counter *c)
{
	struct perf_shared_holder *spare;
	struct perf_shared_cfg *cfg;
	struct perf_event_attr pattr;
	kuid_t uid = current_uid();
	bool capped = !perfmon_capable();
	int err = 0;

	if (c->attr.sample_period &&
	    !(perf_shared_desc.features & PMUCTX_FEAT_OVERFLOW))
		return -EOPNOTSUPP;
	/*
	 * A pinned per-CPU event goes on the PMU before every flexible one,
	 * perf's users' included: as perf asks for CPU-wide events, only a
	 * perf monitor may (Documentation/security.rst).
	 */
	if ((c->attr.flags & PMUCTX_ATTR_PINNED) && capped)
		return -EPERM;
	if (c->attr.type == PMUCTX_TYPE_RAW && perf_shared_described) {
		err = pmuctx_perf_check_raw(&perf_shared_desc, c->attr.config);
		if (err)
			return err;
	}
	pmuctx_perf_attr(c, &pattr);
	/* One configuration for every period and frequency of the event. */
	if (pattr.sample_period)
		pattr.sample_period = PMUCTX_PERF_MIN_WAKE;
	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!spare)
		return -ENOMEM;
	mutex_lock(&perf_shared_mutex);
	spin_lock_irq(&perf_shared_lock);
	cfg = perf_shared_find(&pattr);
	if (capped && !(cfg && perf_shared_holder(cfg, uid)) &&
	    perf_shared_held_by(uid) >= perf_shared_user_bound()) {
		err = -ENOSPC;
	} else if (!cfg && perf_shared_nr >= perf_shared_bound()) {
		err = -ENOSPC;
	} else if (cfg) {
		cfg->users++;
		perf_shared_hold(cfg, uid, &spare);
	}
	spin_unlock_irq(&perf_shared_lock);
	if (!cfg && !err) {
		cfg = perf_shared_make_as_kernel(&pattr);
		if (IS_ERR(cfg)) {
			err = PTR_ERR(cfg);
		} else {
			spin_lock_irq(&perf_shared_lock);
			perf_shared_hold(cfg, uid, &spare);
			list_add(&cfg->entry, &perf_shared_list);
			perf_shared_nr++;
			spin_unlock_irq(&perf_shared_lock);
		}
	}
	mutex_unlock(&perf_shared_mutex);
	kfree(spare);
	if (!err) {
		c->hw_config = (unsigned long)cfg;
		c->hw_borrower = uid;
	}
	return err;
}

/* The original's last put (its clones are gone): any context. */
static void perf_shared_event_destroy(struct pmuctx_counter *c)
{
	struct perf_shared_cfg *cfg = perf_shared_cfg(c);
	struct perf_shared_holder *h;
	unsigned long flags;
	bool last;

	spin_lock_irqsave(&perf_shared_lock, flags);
	h = perf_shared_holder(cfg, c->hw_borrower);
	if (!WARN_ON_ONCE(!h) && !--h->users) {
		list_del(&h->entry);
		kfree(h);
	}
	last = !--cfg->users;
	if (last) {
		list_del(&cfg->entry);
		perf_shared_nr--;
	}
	spin_unlock_irqrestore(&perf_shared_lock, flags);
	if (last)
		queue_work(pmuctx_wq, &cfg->release_work);
}

/*
 * At unload every counter is gone, and the release works ran with
 * pmuctx_wq: no handler runs again; the last folds it queued are waited
 * for.
 */
static void perf_shared_remove(void)
{
	int cpu;

	WARN_ON_ONCE(!list_empty(&perf_shared_list));
	pmuctx_perf_wake_sync();
	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&perf_shared_watch_timer, cpu));
}

static struct pmuctx_hw_desc perf_shared_desc = {
	.name = perf_shared_name,
	.features = PMUCTX_FEAT_HARDWARE | PMUCTX_FEAT_MULTIPLEX |
		    PMUCTX_FEAT_PERF_EVENTS | PMUCTX_FEAT_PERF_SHARED,
	.remove = perf_shared_remove,
	.event_init = perf_shared_event_init,
	.event_destroy = perf_shared_event_destroy,
	.slot_pick = pmuctx_perf_slot_pick,
	.load = perf_shared_load,
	.unload = perf_shared_unload,
	.fold = perf_shared_fold,
	.handoff_fold = perf_shared_handoff_fold,
	.program = perf_shared_program,
	.pause = pmuctx_perf_nothing,
	.resume = pmuctx_perf_nothing,
};

/* -ENODEV when perf has no hardware PMU (pmuctx_perf_pmu_name()). */
int pmuctx_perf_shared_probe(const struct pmuctx_hw_desc **desc)
{
	/* What fits after the prefix in the backend's name. */
	char pmu[PMUCTX_BACKEND_NAME_LEN - sizeof("perf-shared:") + 1];
	int cpu, err;

	err = pmuctx_perf_pmu_name(pmu, sizeof(pmu));
	if (err)
		return err;
	for_each_possible_cpu(cpu)
		pmuctx_hrtimer_setup(per_cpu_ptr(&perf_shared_watch_timer, cpu),
				     perf_shared_watch_tick, CLOCK_MONOTONIC,
				     HRTIMER_MODE_ABS_PINNED_HARD);
	snprintf(perf_shared_name, sizeof(perf_shared_name), "perf-shared:%s",
		 pmu);
	if (pmuctx_perf_can_sample())
		perf_shared_desc.features |= PMUCTX_FEAT_OVERFLOW;
	perf_shared_described = !pmuctx_perf_describe(&perf_shared_desc);
	/*
	 * Two general counters left to perf's users; a PMU the ID registers
	 * do not describe (one no native backend knows) has four at least.
	 */
	if (!perf_shared_described)
		perf_shared_auto_bound = 2;
	else if (perf_shared_desc.nr_general > 3)
		perf_shared_auto_bound = perf_shared_desc.nr_general - 2;
	static_branch_enable(&pmuctx_hw_lent);
	pr_info("hardware counters on perf's per-CPU events on %s, %u general + %u fixed counters, at most %u configurations, %u a user: swaps, no self-reads%s\n",
		pmu, perf_shared_desc.nr_general, perf_shared_desc.nr_fixed,
		perf_shared_bound(), perf_shared_user_bound(),
		perf_shared_desc.features & PMUCTX_FEAT_OVERFLOW ? "" : ", no samples");
	*desc = &perf_shared_desc;
	return 0;
}
