// SPDX-License-Identifier: GPL-2.0
/*
 * The stock-kernel fallback: hardware counters through the kernel's own perf
 * events, for a machine whose PMU the kernel's driver owns (arm64 booted
 * without initcall_blacklist=armv8_pmu_driver_init, x86 with the NMI
 * watchdog or perf's hardware events holding the counter reservation, a
 * PMU no native backend knows).  Everything above the backend (contexts,
 * inheritance and its folds, groups, enable_on_exec, the ioctls) is the
 * same; Documentation/design.rst ("The stock-kernel fallback") has the
 * differences and why.
 *
 * Each instance of a hardware counter (the original, each clone) holds one
 * counting kernel event bound to the task that holds the instance.  perf
 * switches it with that task, multiplexes it with everybody's events and
 * keeps its 64-bit count; the instance's clock (@hw_count) is that count
 * as of its last fold, and the time perf kept the event waiting while its
 * task ran (@hw_missed) comes off the instance's time running.
 * The events belong to tasks, the instances to contexts, so a context
 * holding them never swaps (pmuctx_ctx_claimable(): nor is it claimed).
 *
 * Folds read the event where it stands.  perf's sched_out runs before the
 * preempt notifiers' and its sched_in before theirs, so at an unload the
 * event is stopped and its count final for the slice; a fold while the
 * task runs (a read, an enable, on the CPU the context is loaded on, IRQs
 * off) has the event's PMU read its hardware counter first, as
 * perf_event_read_local() (not exported) does: with IRQs off on the CPU
 * the event is active on, perf changes nothing of it meanwhile.
 *
 * Samples: a sampling instance's event samples at the counter's period,
 * and its overflow handler (in NMI on x86, in the PMU interrupt on arm64)
 * only queues this CPU's irq_work, which folds the context loaded here;
 * the periods are counted by the folds, from the counts (perf's phase is
 * not the counter's: its event counts while the counter is disabled).
 * So a frequency-sampling counter (PMUCTX_ATTR_FREQ) adapts its own
 * periods there, as on the native backends, and its event only wakes the
 * folds, as a fixed period's does: perf's own frequency mode starts at a
 * period of one event and is throttled, counts and all, until it adapts.
 * No self-reads: a mapping is ENODEV.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include "pmuctx.h"
#include "compat/perf_ctx_time.h"

/*
 * One instance's event.  Set once (before the original is published, or
 * under ctx->lock for a clone, which gets it in its new task); released
 * by a work, as releasing an event sleeps.  @missed_prev: the event's
 * time enabled but not running at the instance's last fold (ctx->lock).
 */
struct pmuctx_perf_binding {
	struct work_struct release_work;
	struct perf_event *event;
	u64 missed_prev;
};

static char perf_fb_name[PMUCTX_BACKEND_NAME_LEN] = "perf";
/* The binding of a clone that got no event: it counts nothing. */
static struct pmuctx_perf_binding perf_fb_no_event;
static struct pmuctx_hw_desc perf_fb_desc;
/* What the native backend's ID registers say, when it could read them. */
static bool perf_fb_described;

/*
 * The event's time enabled but not running so far: its totals are as of
 * its last change of state, and a waiting (INACTIVE) one has waited since
 * then, on its perf context's clock: perf's clock plus the context's
 * offset while the context is in, its frozen time while out (as
 * perf_event_time_now() has it).  An active event's two times grow alike.
 */
static u64 perf_fb_missed(struct perf_event *ev)
{
	struct perf_event_context *pctx = ev->ctx;
	u64 missed, now;

	missed = READ_ONCE(ev->total_time_enabled) -
		 READ_ONCE(ev->total_time_running);
	if (READ_ONCE(ev->state) == PERF_EVENT_STATE_INACTIVE) {
		now = READ_ONCE(pctx->is_active) ?
		      local_clock() + pmuctx_perf_ctx_offset(pctx) :
		      pmuctx_perf_ctx_frozen(pctx);
		if (now > READ_ONCE(ev->tstamp))
			missed += now - READ_ONCE(ev->tstamp);
	}
	return missed;
}

/*
 * @delta events of a sampling instance while it counted: the periods
 * that ended in them, as the native backends count them.  The sample is
 * the task's user registers (overflow.c): a fold runs in the task, or in
 * the irq_work right after the overflow's interrupt.  The shared
 * backend's too, and its watch timer's interrupt: its contexts' holder is
 * the task running where they are loaded, the swapped-in one after a
 * swap.
 */
noinline void pmuctx_perf_periods(struct pmuctx_counter *c, u64 delta)
{
	pmuctx_counter_overflowed(c, NULL, pmuctx_periods_ended(c, delta));
}

/* ctx->lock held (or the context claimed), IRQs off. */
static void perf_fb_fold_one(struct pmuctx_counter *c)
{
	struct pmuctx_perf_binding *b = c->hw_binding;
	struct perf_event *ev;
	bool active_here;
	u64 count, missed;

	if (!b || !b->event)
		return;		/* not bound yet, or no event to be had */
	ev = b->event;
	active_here = READ_ONCE(ev->state) == PERF_EVENT_STATE_ACTIVE &&
		      READ_ONCE(ev->oncpu) == smp_processor_id();
	if (active_here)
		ev->pmu->read(ev);
	count = local64_read(&ev->count);
	missed = perf_fb_missed(ev);
	/* Folds come before every change of counting: one state a delta. */
	if (unlikely(c->attr.sample_period) && pmuctx_counter_counting(c))
		pmuctx_perf_periods(c, count - c->hw_prev);
	c->hw_count += count - c->hw_prev;
	c->hw_prev = count;
	/* A waiting event's estimate never runs ahead of its next total. */
	if (missed > b->missed_prev) {
		c->hw_missed += missed - b->missed_prev;
		b->missed_prev = missed;
	}
}

/* Every hardware instance of the context, in a slot or not. */
static void perf_fb_fold(struct pmuctx_context *ctx)
{
	struct pmuctx_counter *c;

	list_for_each_entry(c, &ctx->counters, ctx_entry)
		if (pmuctx_counter_is_hw(c))
			perf_fb_fold_one(c);
}

/* perf starts and stops the events with their tasks. */
static void perf_fb_load(struct pmuctx_context *ctx)
{
}

static void perf_fb_program(struct pmuctx_context *ctx, struct pmuctx_counter *c,
			    bool on)
{
}

/* The PMU's pause and resume where perf owns the PMU (the shared backend's too). */
void pmuctx_perf_nothing(void)
{
}

/* Virtual slots: perf fits the events to its counters (the shared backend's too). */
int pmuctx_perf_slot_pick(unsigned long used, const struct pmuctx_counter *c)
{
	unsigned long free = ~used & GENMASK(PMUCTX_MAX_HW_SLOTS - 1, 0);

	return free ? __ffs(free) : -ENOSPC;
}

/* A raw event @d's PMU counts (@d: what the ID registers said). */
int pmuctx_perf_check_raw(const struct pmuctx_hw_desc *d, u64 config)
{
#ifdef CONFIG_ARM64
	return pmuctx_pmuv3_check_raw(d, config);
#elif defined(CONFIG_X86)
	return pmuctx_perfmon_check_raw(d, config);
#else
	return 0;
#endif
}

static int perf_fb_check_raw(u64 config)
{
	if (!perf_fb_described)
		return 0;	/* perf's driver is the judge */
	return pmuctx_perf_check_raw(&perf_fb_desc, config);
}

static int perf_fb_event_init(struct pmuctx_counter *c)
{
	if (c->attr.sample_period &&
	    !(perf_fb_desc.features & PMUCTX_FEAT_OVERFLOW))
		return -EOPNOTSUPP;
	if (c->attr.type == PMUCTX_TYPE_RAW)
		return perf_fb_check_raw(c->attr.config);
	return 0;
}

/* @c's event as perf's attributes (the shared backend's too). */
void pmuctx_perf_attr(const struct pmuctx_counter *c,
		      struct perf_event_attr *pattr)
{
	memset(pattr, 0, sizeof(*pattr));
	pattr->size = sizeof(*pattr);
	if (c->attr.type == PMUCTX_TYPE_HARDWARE) {
		pattr->type = PERF_TYPE_HARDWARE;
		pattr->config = c->attr.config == PMUCTX_HW_CPU_CYCLES ?
				PERF_COUNT_HW_CPU_CYCLES :
				PERF_COUNT_HW_INSTRUCTIONS;
	} else {
		pattr->type = PERF_TYPE_RAW;
		pattr->config = c->attr.config;
	}
	pattr->exclude_user = !!(c->attr.flags & PMUCTX_ATTR_EXCLUDE_USER);
	pattr->exclude_kernel = !!(c->attr.flags & PMUCTX_ATTR_EXCLUDE_KERNEL);
	pattr->exclude_hv = 1;
	/* perf's pinned: always on when its task runs, or in error. */
	pattr->pinned = !!(c->attr.flags & PMUCTX_ATTR_PINNED);
	/*
	 * perf's interrupt only wakes a fold, which counts the periods:
	 * never more often than every PMUCTX_PERF_MIN_WAKE events, as perf
	 * stops an event it throttles, and its count with it.  A rate
	 * (PMUCTX_ATTR_FREQ, at most max_sample_freq) is below it: its
	 * periods are the folds' to choose.
	 */
	if (c->attr.sample_period)
		pattr->sample_period = max_t(u64, c->attr.sample_period,
					     PMUCTX_PERF_MIN_WAKE);
}

/*
 * Per CPU: the fold an overflow asks for, for both perf backends.  Queued
 * from perf's overflow handler, which may be an NMI and so takes no lock
 * and touches nothing but this CPU's work (initialised at probe, before
 * any event that may call it exists); run in hard IRQ context on the same
 * CPU, where the context loaded here is folded under its lock, as the
 * native x86 backend's irq_work does.  That context is the one loaded
 * when the work runs, not when the overflow came: a fold is correct for
 * whichever it is (each counter folds from its own snapshot), and one
 * unloaded meanwhile was folded by its unload.  The task-bound backend's
 * is its task's (those contexts never swap); the shared backend's, after
 * a swap, the swapped-in holder's.  A CPU with nothing loaded does
 * nothing.
 */
static DEFINE_PER_CPU(struct irq_work, pmuctx_perf_wake);

void pmuctx_perf_overflow(struct perf_event *ev, struct perf_sample_data *data,
			  struct pt_regs *regs)
{
	irq_work_queue(this_cpu_ptr(&pmuctx_perf_wake));
}

static void pmuctx_perf_wake_work(struct irq_work *work)
{
	struct pmuctx_context *ctx = __this_cpu_read(pmuctx_loaded_ctx);

	if (!ctx)
		return;
	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id() && ctx->nr_hw)
		pmuctx_hw->fold(ctx);
	pmuctx_ctx_unlock(ctx);
}

/*
 * At unload every event is gone (the release works ran when the module's
 * work queue was destroyed), so no overflow handler runs again; the
 * last works it queued are waited for.
 */
void pmuctx_perf_wake_sync(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&pmuctx_perf_wake, cpu));
}

static void perf_fb_release_work(struct work_struct *work)
{
	struct pmuctx_perf_binding *b =
		container_of(work, struct pmuctx_perf_binding, release_work);

	perf_event_release_kernel(b->event);
	kfree(b);
}

/*
 * @c's event on @task, counting (sampling too, for a sampling counter).
 * Process context.  Whether it fits the PMU is perf's to find when it
 * schedules it (a pinned one that never fits runs for no time).
 */
static struct pmuctx_perf_binding *perf_fb_binding(const struct pmuctx_counter *c,
						   struct task_struct *task)
{
	struct pmuctx_perf_binding *b;
	struct perf_event_attr pattr;
	struct perf_event *ev;

	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	INIT_WORK(&b->release_work, perf_fb_release_work);
	pmuctx_perf_attr(c, &pattr);
	ev = perf_event_create_kernel_counter(&pattr, -1, task,
					      pattr.sample_period ? pmuctx_perf_overflow : NULL,
					      NULL);
	if (IS_ERR(ev)) {
		kfree(b);
		return ERR_CAST(ev);
	}
	b->event = ev;
	return b;
}

/*
 * An original at open, before it is published: its event counts from
 * now, its count and time running from 0.  perf's own errors are the
 * open's (ENOENT: an event perf's driver does not know).
 */
static int perf_fb_bind(struct pmuctx_counter *c, struct task_struct *task)
{
	struct pmuctx_perf_binding *b = perf_fb_binding(c, task);

	if (IS_ERR(b))
		return PTR_ERR(b);
	c->hw_binding = b;
	return 0;
}

/* The last put of a bound instance: any context. */
static void perf_fb_release(struct pmuctx_counter *c)
{
	struct pmuctx_perf_binding *b = c->hw_binding;

	c->hw_binding = NULL;
	if (b != &perf_fb_no_event)
		queue_work(pmuctx_wq, &b->release_work);
}

/*
 * A clone of a hardware counter, in the new task on its way to user space
 * (kernel/inherit.c): until now it counted nothing.  A clone that gets no
 * event counts nothing, and says so in its family's inherit_failed.
 */
static void perf_fb_bind_clone(struct pmuctx_counter *clone)
{
	struct pmuctx_context *ctx = clone->ctx;
	struct pmuctx_perf_binding *b;

	b = perf_fb_binding(clone, current);
	if (IS_ERR(b)) {
		pr_warn_ratelimited("task %d: no perf event for an inherited counter (%ld): it counts nothing\n",
				    task_pid_nr(current), PTR_ERR(b));
		atomic64_inc(&clone->parent->fam->inherit_failed);
		/* Bound to nothing: the kit work's walk must not retry it. */
		b = &perf_fb_no_event;
	}
	pmuctx_ctx_lock_irq(ctx);
	if (!clone->hw_binding && !list_empty(&clone->ctx_entry)) {
		/* Its clock was 0, and the new event's count is. */
		clone->hw_binding = b;
		clone->hw_prev = 0;
		b = NULL;
	}
	pmuctx_ctx_unlock_irq(ctx);
	if (b && b != &perf_fb_no_event)
		perf_fb_release_work(&b->release_work);
}

static bool perf_fb_clone_unbound(const struct pmuctx_counter *c)
{
	return pmuctx_counter_is_hw(c) && c->parent && !c->hw_binding;
}

/* Give every hardware clone of @ctx (current's) its event. */
void pmuctx_hw_bind_clones(struct pmuctx_context *ctx)
{
	if (pmuctx_hw && pmuctx_hw->bind == perf_fb_bind && READ_ONCE(ctx->nr_hw))
		pmuctx_ctx_handle_each(ctx, perf_fb_clone_unbound,
				       perf_fb_bind_clone);
}

static struct pmuctx_hw_desc perf_fb_desc = {
	.name = perf_fb_name,
	.features = PMUCTX_FEAT_HARDWARE | PMUCTX_FEAT_MULTIPLEX |
		    PMUCTX_FEAT_PERF_EVENTS,
	.remove = pmuctx_perf_wake_sync,
	.event_init = perf_fb_event_init,
	.slot_pick = pmuctx_perf_slot_pick,
	.load = perf_fb_load,
	.unload = perf_fb_fold,
	.fold = perf_fb_fold,
	.program = perf_fb_program,
	.pause = pmuctx_perf_nothing,
	.resume = pmuctx_perf_nothing,
	.bind = perf_fb_bind,
	.release = perf_fb_release,
};

int pmuctx_perf_describe(struct pmuctx_hw_desc *d)
{
#ifdef CONFIG_ARM64
	return pmuctx_pmuv3_describe(d);
#elif defined(CONFIG_X86)
	return pmuctx_perfmon_describe(d);
#else
	return -ENODEV;
#endif
}

/*
 * The event perf's hardware PMU is asked with: cycles, made disabled on the
 * first online CPU (every PMU counts cycles, where QEMU's arm64 PMU counts
 * instructions only under -icount).
 */
static struct perf_event *perf_fb_probe_event(u64 period,
					      perf_overflow_handler_t overflow)
{
	struct perf_event_attr pattr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(pattr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
		.exclude_hv = 1,
		.sample_period = period,
	};

	return perf_event_create_kernel_counter(&pattr, cpumask_first(cpu_online_mask),
						NULL, overflow, NULL);
}

/*
 * The name of perf's hardware PMU into @name: perf has one when it
 * accepts a CPU-bound cycles event (gone at once); -ENODEV when it has
 * none.
 */
int pmuctx_perf_pmu_name(char *name, size_t len)
{
	struct perf_event *ev = perf_fb_probe_event(0, NULL);
	int err;

	if (IS_ERR(ev)) {
		err = PTR_ERR(ev);
		return err == -ENOENT || err == -EOPNOTSUPP ? -ENODEV : err;
	}
	strscpy(name, ev->pmu->name, len);
	perf_event_release_kernel(ev);
	return 0;
}

/*
 * Whether perf's events may sample (both perf backends): perf refuses a
 * period where the PMU has no interrupt.  Readies the overflow's work
 * first: the handler may run as soon as an event with a period exists.
 */
bool pmuctx_perf_can_sample(void)
{
	struct perf_event *ev;
	struct irq_work *work;
	int cpu;

	for_each_possible_cpu(cpu) {
		work = per_cpu_ptr(&pmuctx_perf_wake, cpu);
		*work = IRQ_WORK_INIT_HARD(pmuctx_perf_wake_work);
	}
	ev = perf_fb_probe_event(1ULL << 40, pmuctx_perf_overflow);
	if (IS_ERR(ev))
		return false;
	perf_event_release_kernel(ev);
	return true;
}

/*
 * -ENODEV when perf has no hardware PMU (pmuctx_perf_pmu_name()); whether
 * its events may sample is asked with a period.
 */
int pmuctx_perf_probe(const struct pmuctx_hw_desc **desc)
{
	/* What fits after the prefix in the backend's name. */
	char pmu[PMUCTX_BACKEND_NAME_LEN - sizeof("perf:") + 1];
	int err;

	err = pmuctx_perf_pmu_name(pmu, sizeof(pmu));
	if (err)
		return err;
	snprintf(perf_fb_name, sizeof(perf_fb_name), "perf:%s", pmu);
	if (pmuctx_perf_can_sample())
		perf_fb_desc.features |= PMUCTX_FEAT_OVERFLOW;

	perf_fb_described = !pmuctx_perf_describe(&perf_fb_desc);
	static_branch_enable(&pmuctx_hw_task_bound);
	static_branch_enable(&pmuctx_hw_lent);
	pr_info("hardware counters through perf events on %s, %u general + %u fixed counters: no swaps, no self-reads%s\n",
		perf_fb_name + 5, perf_fb_desc.nr_general, perf_fb_desc.nr_fixed,
		perf_fb_desc.features & PMUCTX_FEAT_OVERFLOW ? "" : ", no samples");
	*desc = &perf_fb_desc;
	return 0;
}
