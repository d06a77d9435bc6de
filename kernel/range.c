// SPDX-License-Identifier: GPL-2.0
/*
 * Address-range counters (Documentation/ranges.rst): a PMUCTX_TYPE_RANGE
 * counter counts its task's user-mode accesses (or executed instructions)
 * inside a planned range.  Neither PMU can qualify events by address, so
 * the hits are the CPU's debug watchpoint (breakpoint) exceptions, taken
 * through the kernel's hw_breakpoint layer: it owns the debug registers and
 * shares them between ptrace, perf and us, so a debugger's watchpoint keeps
 * working beside ours, and a task that runs out of registers gets EBUSY
 * instead of a stolen one.
 *
 * Each instance of a range counter (the original, each clone) holds one
 * breakpoint event per span of the plan, bound to the task that holds the
 * instance.  Those events only count: no sample period, the layer's own
 * overflow handler (on arm64 only that one steps over the watched access),
 * so a hit costs the exception and an atomic add, and the instance's clock
 * is the sum of its events' counts, which any CPU may read at any time.
 * The events belong to a task, the instance to a context: when a swap
 * hands two equivalent contexts to each other's tasks, each pair of
 * corresponding instances exchanges its events, so every task keeps its
 * own, and each clock is re-based on the events it now reads
 * (pmuctx_range_swap()), as the fault clocks are.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/processor.h>
#ifdef CONFIG_ARM64
#include <asm/cpufeature.h>
#include <asm/sysreg.h>

/* ID_AA64DFR0_EL1: watchpoints (WRPs) and breakpoints (BRPs), minus one. */
#define DFR0_WRPS_SHIFT		20
#define DFR0_BRPS_SHIFT		12
#endif
#include "pmuctx.h"
#include "compat/hw_breakpoint.h"
#include "range_plan.h"

/*
 * The watchpoint events of one instance.  Written once (before the
 * instance is published, or under ctx->lock for a clone's, which gets them
 * in its new task), freed by a work: releasing a perf event sleeps.
 */
struct pmuctx_range_watch {
	struct work_struct release_work;
	/*
	 * Sampling counters only: the instance that holds this watch now,
	 * which a swap changes (both contexts claimed, neither task running,
	 * so never under the hit handler of the watch's task).  NULL until
	 * the instance is in its context (pmuctx_range_publish(), under
	 * ctx->lock): the breakpoints fire as soon as they are registered
	 * (a sampling one: hooked and enabled, pmuctx_range_hook_hits()),
	 * and a hit must find a whole instance or none.  NULL again once
	 * the instance lets go of it.
	 */
	struct pmuctx_counter *inst;
	unsigned int nr;		/* 0: none could be had (counts 0) */
	struct perf_event *bp[PMUCTX_RANGE_MAX_SPANS];
};

/*
 * What this machine's debug registers can match, as the hw_breakpoint
 * layer lets a module program them.  Set at init, read-only afterwards.
 */
static struct pmuctx_range_hw pmuctx_range_machine = {
	.name = "hw_breakpoint",
};

#if IS_ENABLED(CONFIG_HAVE_HW_BREAKPOINT)
/*
 * x86: DR0-DR3, each 1, 2, 4 or 8 bytes aligned to its length; execute
 * breakpoints are one instruction start; no read-only condition.
 * arm64: the layer programs byte-address-select watchpoints of 1, 2, 4 or
 * 8 aligned bytes and one-instruction breakpoints, never DBGWCR.MASK, so
 * ranges are tiled from doublewords here, not from the architecture's
 * 2 GB masks (Documentation/ranges.rst).
 */
static void pmuctx_range_probe(struct pmuctx_range_hw *hw)
{
	unsigned int wrps, brps;

#ifdef CONFIG_ARM64
	/* The layer's own count: the smallest over the CPUs. */
	u64 dfr0 = read_sanitised_ftr_reg(SYS_ID_AA64DFR0_EL1);

	wrps = cpuid_feature_extract_unsigned_field(dfr0, DFR0_WRPS_SHIFT) + 1;
	brps = cpuid_feature_extract_unsigned_field(dfr0, DFR0_BRPS_SHIFT) + 1;
	hw->insn.min_order = 2;
	hw->insn.max_order = 2;
	hw->kinds = BIT(PMUCTX_RANGE_INSN) | BIT(PMUCTX_RANGE_DATA) |
		    BIT(PMUCTX_RANGE_DATA_WRITE) | BIT(PMUCTX_RANGE_DATA_READ);
#elif defined(CONFIG_X86)
	wrps = HBP_NUM;
	brps = HBP_NUM;
	hw->kinds = BIT(PMUCTX_RANGE_INSN) | BIT(PMUCTX_RANGE_DATA) |
		    BIT(PMUCTX_RANGE_DATA_WRITE);
#else
	wrps = 0;
	brps = 0;
#endif
	hw->data.nr = min_t(unsigned int, wrps, PMUCTX_RANGE_MAX_SPANS);
	hw->data.min_order = 0;
	hw->data.max_order = 3;
	hw->insn.nr = min_t(unsigned int, brps, PMUCTX_RANGE_MAX_SPANS);
	if (!hw->data.nr || !hw->insn.nr)
		hw->kinds = 0;
}
#else
static void pmuctx_range_probe(struct pmuctx_range_hw *hw)
{
}
#endif

void pmuctx_range_init(void)
{
	pmuctx_range_probe(&pmuctx_range_machine);
}

/*
 * Samples need a call per hit; on arm64 the layer steps over a watched
 * access only for its default handler, or for one installed over it the
 * way BPF installs its own (CONFIG_BPF_SYSCALL; Debian's kernels have it,
 * our debug kernels do not): compat/hw_breakpoint.h.
 */
static bool pmuctx_range_can_sample(void)
{
	return pmuctx_bp_handler_keeps_step();
}

void pmuctx_range_fill_info(struct pmuctx_info *info)
{
	const struct pmuctx_range_hw *hw = &pmuctx_range_machine;

	if (!hw->kinds)
		return;
	info->features |= PMUCTX_FEAT_ADDR_RANGE;
	if (pmuctx_range_can_sample())
		info->features |= PMUCTX_FEAT_RANGE_SAMPLES;
	info->range_kinds = hw->kinds;
	info->range_fine_insn_order = hw->fine_insn_order;
	info->range_data = (struct pmuctx_range_caps) {
		.nr = hw->data.nr, .min_order = hw->data.min_order,
		.max_order = hw->data.max_order,
		.byte_select_order = hw->data.byte_select_order,
	};
	info->range_insn = (struct pmuctx_range_caps) {
		.nr = hw->insn.nr, .min_order = hw->insn.min_order,
		.max_order = hw->insn.max_order,
		.byte_select_order = hw->insn.byte_select_order,
	};
}

/* The plan for @config over [start, end) on this machine, or an errno. */
static int pmuctx_range_plan_for(u64 config, u64 start, u64 end,
				 struct pmuctx_range_plan *plan)
{
	unsigned int kind = config & PMUCTX_RANGE_KIND_MASK;
	int err;

	if ((config & ~PMUCTX_RANGE_CONFIG_ALL) || kind >= PMUCTX_RANGE_NR_KINDS)
		return -EINVAL;
	if (start >= end)
		return -EINVAL;
	if (!(pmuctx_range_machine.kinds & BIT(kind)))
		return -EOPNOTSUPP;
	err = pmuctx_range_plan(&pmuctx_range_machine, start, end, kind, plan);
	if (err)
		return err;
	if ((config & PMUCTX_RANGE_EXACT) && (plan->start_off || plan->end_off))
		return -ERANGE;
	return 0;
}

/*
 * Open-time checks of a PMUCTX_TYPE_RANGE attr.  Only user addresses: a
 * range must not become a probe of the kernel's layout or activity.  Only
 * user mode is counted: arm64's layer steps over kernel accesses to a user
 * watchpoint without reporting them, so neither arch counts them.
 */
int pmuctx_range_attr_check(const struct pmuctx_attr *attr)
{
	struct pmuctx_range_plan plan;

	if (attr->flags & PMUCTX_ATTR_EXCLUDE_USER)
		return -EOPNOTSUPP;
	if (attr->sample_period > U32_MAX)
		return -EINVAL;
	if (attr->sample_period && !pmuctx_range_can_sample())
		return -EOPNOTSUPP;
	if (attr->range_end > TASK_SIZE_MAX)
		return -EINVAL;
	return pmuctx_range_plan_for(attr->config, attr->range_start,
				     attr->range_end, &plan);
}

static void pmuctx_range_watch_release(struct work_struct *work)
{
	struct pmuctx_range_watch *w = container_of(work, struct pmuctx_range_watch,
						    release_work);
	unsigned int i;

	for (i = 0; i < w->nr; i++)
		unregister_hw_breakpoint(w->bp[i]);
	kfree(w);
}

/* Process context, no spinlock held: the events are released now. */
void pmuctx_range_free_watch(struct pmuctx_range_watch *w)
{
	if (w)
		pmuctx_range_watch_release(&w->release_work);
}

/*
 * Any context: the events are released by a work.  Only a dead task's
 * watch (or a removed instance's, already released) gets here, so no hit
 * handler can still look at the instance; it would find it gone anyway.
 */
void pmuctx_range_put_watch(struct pmuctx_range_watch *w)
{
	if (w) {
		WRITE_ONCE(w->inst, NULL);
		queue_work(pmuctx_wq, &w->release_work);
	}
}

/*
 * @c is in its context now (ctx->lock held): a sampling instance's hits
 * may sample.  Until this, its watch's hits only count.
 */
void pmuctx_range_publish(struct pmuctx_counter *c)
{
	lockdep_assert_held(&c->ctx->lock);
	if (!c->attr.sample_period || !c->range)
		return;
	/* Pairs with the hit handler's acquire: it finds c->ctx set. */
	smp_store_release(&c->range->inst, c);
}

/*
 * The holder of dead @ctx is gone (exit, or an exec that detaches): every
 * range instance left in it gives its debug registers back now, so that a
 * debugger of the exec'd image (or the next user of the task) gets them,
 * and keeps its count: the snapshot moves by the hits so far, which is
 * what the clock drops to (0, with no watch).  ctx->mutex held, process
 * context.  A setuid exec has exited the events already (no more hits).
 */
void pmuctx_range_release_dead(struct pmuctx_context *ctx)
{
	struct pmuctx_range_watch *w;
	struct pmuctx_counter *c;

	lockdep_assert_held(&ctx->mutex);
	do {
		w = NULL;
		pmuctx_ctx_lock_irq(ctx);
		list_for_each_entry(c, &ctx->counters, ctx_entry) {
			if (c->attr.type != PMUCTX_TYPE_RANGE || !c->range)
				continue;
			if (pmuctx_counter_counting(c))
				c->snap -= pmuctx_range_hits(c);
			w = c->range;
			WRITE_ONCE(c->range, NULL);
			break;
		}
		pmuctx_ctx_unlock_irq(ctx);
		pmuctx_range_free_watch(w);
	} while (w);
}

#if IS_ENABLED(CONFIG_HAVE_HW_BREAKPOINT)
/*
 * Every hit of a sampling range counter, in the watched task (its debug
 * exception, IRQs off, user mode: kernel-mode hits are excluded before
 * this).  The watch's instance holds the period; a sample is recorded as
 * the PMU interrupt records one.
 */
static void pmuctx_range_hit(struct perf_event *bp, struct perf_sample_data *data,
			     struct pt_regs *regs)
{
	struct pmuctx_range_watch *w = READ_ONCE(bp->overflow_handler_context);
	/* Pairs with pmuctx_range_publish(): c->ctx is set. */
	struct pmuctx_counter *c = w ? smp_load_acquire(&w->inst) : NULL;
	struct pmuctx_context *ctx;

	if (!c)
		return;
	ctx = c->ctx;
	pmuctx_ctx_lock(ctx);
	/*
	 * The layer counted this hit before the call, outside ctx->lock: a
	 * slice that began in between (the open's or an enable's snapshot)
	 * took it as already past, and a hit that no count holds must not
	 * sample.  The slice's count is the instance's hits less its
	 * snapshot, a swap included (pmuctx_range_swap() moves both).
	 */
	if (pmuctx_counter_counting(c) &&
	    (s64)(pmuctx_range_hits(c) - c->snap) > 0 && !--c->period_left) {
		c->period_left = c->attr.sample_period;
		pmuctx_counter_overflowed(c, regs, 1);
	}
	pmuctx_ctx_unlock(ctx);
}

/*
 * Sampling needs a call per hit, but on arm64 only the layer's default
 * handler gets the watched access stepped over; the layer also accepts a
 * handler installed over the default one, as BPF does, when the default
 * is kept as the original.  x86 steps nothing and needs no such care.
 *
 * @bp was registered disabled: it has never been on a CPU, so no debug
 * exception can read the handler, its context or the original while
 * they change.  perf_event_enable() then publishes them with the event
 * (ctx->lock and the IPI to the target's CPU order the stores before
 * the first hit), where a handler changed under a live event could be
 * read half changed by a hit on the target's CPU: between the layer's
 * call of the handler and its test for the default one.
 */
static int pmuctx_range_hook_hits(struct perf_event *bp,
				  struct pmuctx_range_watch *w)
{
	int err = pmuctx_bp_keep_step(bp);

	if (err)
		return err;
	bp->overflow_handler_context = w;
	bp->overflow_handler = pmuctx_range_hit;
	perf_event_enable(bp);
	return 0;
}

static int pmuctx_range_bp_type(unsigned int kind)
{
	switch (kind) {
	case PMUCTX_RANGE_INSN:
		return HW_BREAKPOINT_X;
	case PMUCTX_RANGE_DATA_WRITE:
		return HW_BREAKPOINT_W;
	case PMUCTX_RANGE_DATA_READ:
		return HW_BREAKPOINT_R;
	default:
		return HW_BREAKPOINT_RW;
	}
}

/*
 * Watch @plan in @task: one counting breakpoint event per span.  Process
 * context.  The layer refusing for want of registers (ptrace, perf or our
 * own range counters of the task hold them) is EBUSY.
 */
static struct pmuctx_range_watch *
pmuctx_range_watch(const struct pmuctx_range_plan *plan,
		   struct pmuctx_counter *inst, struct task_struct *task)
{
	struct pmuctx_range_watch *w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	unsigned int kind = inst->attr.config & PMUCTX_RANGE_KIND_MASK;
	bool sampling = inst->attr.sample_period;
	struct perf_event_attr pattr;
	unsigned int i;

	if (!w)
		return ERR_PTR(-ENOMEM);
	INIT_WORK(&w->release_work, pmuctx_range_watch_release);
	for (i = 0; i < plan->nr_blocks; i++) {
		const struct pmuctx_range_block *b = &plan->blocks[i];
		struct perf_event *bp;

		ptrace_breakpoint_init(&pattr);	/* user only */
		pattr.bp_addr = b->base;
		pattr.bp_type = pmuctx_range_bp_type(kind);
		/* x86 wants an execute breakpoint's length as a long's. */
		pattr.bp_len = kind == PMUCTX_RANGE_INSN && IS_ENABLED(CONFIG_X86) ?
			       sizeof(long) : b->size;
		/*
		 * Counting only: no overflow, no throttling, no lost hit.  A
		 * sampling counter needs a call per hit: period 1, which perf
		 * never throttles (only a second overflow of one event is).
		 */
		pattr.sample_period = sampling ? 1 : 0;
		/* Hooked before its first hit: pmuctx_range_hook_hits(). */
		pattr.disabled = sampling;
		bp = register_user_hw_breakpoint(&pattr, NULL, NULL, task);
		if (IS_ERR(bp)) {
			int err = PTR_ERR(bp);

			pmuctx_range_free_watch(w);
			return ERR_PTR(err == -ENOSPC ? -EBUSY : err);
		}
		w->bp[w->nr++] = bp;
		if (sampling) {
			int err = pmuctx_range_hook_hits(bp, w);

			if (err) {
				pmuctx_range_free_watch(w);
				return ERR_PTR(err);
			}
		}
	}
	return w;
}
#else
static struct pmuctx_range_watch *
pmuctx_range_watch(const struct pmuctx_range_plan *plan,
		   struct pmuctx_counter *inst, struct task_struct *task)
{
	return ERR_PTR(-EOPNOTSUPP);
}
#endif

/*
 * At open, for an original: its plan (kept in its family, for
 * PMUCTX_IOC_RANGE and for the clones) and its watch on @task.  Called
 * with the target's exec_update_lock held, like the permission check: a
 * setuid exec either ran before (and was checked) or comes after, and
 * then perf's own exit of the task's events at that exec stops ours.
 */
int pmuctx_range_open(struct pmuctx_counter *c, struct task_struct *task)
{
	struct pmuctx_range_plan *plan;
	struct pmuctx_range_watch *w;
	int err;

	plan = kmalloc(sizeof(*plan), GFP_KERNEL_ACCOUNT);
	if (!plan)
		return -ENOMEM;
	err = pmuctx_range_plan_for(c->attr.config, c->attr.range_start,
				    c->attr.range_end, plan);
	if (err) {
		kfree(plan);
		return err;
	}
	c->fam->range_plan = plan;
	w = pmuctx_range_watch(plan, c, task);
	if (IS_ERR(w))
		return PTR_ERR(w);
	c->range = w;
	return 0;
}

/*
 * A clone of a range counter, in the new task on its way to user space
 * (kernel/inherit.c): until now it watched nothing, and the task ran no
 * user code.  A clone that gets no registers counts nothing, and says so
 * in its family's inherit_failed.
 */
static void pmuctx_range_watch_clone(struct pmuctx_counter *clone)
{
	const struct pmuctx_counter *orig = clone->parent;
	struct pmuctx_context *ctx = clone->ctx;
	struct pmuctx_range_watch *w;

	w = pmuctx_range_watch(orig->fam->range_plan, clone, current);
	if (IS_ERR(w)) {
		pr_warn_ratelimited("task %d: no watchpoints for an inherited range counter (%ld): it counts nothing\n",
				    task_pid_nr(current), PTR_ERR(w));
		atomic64_inc(&orig->fam->inherit_failed);
		w = kzalloc(sizeof(*w), GFP_KERNEL | __GFP_NOFAIL);
		INIT_WORK(&w->release_work, pmuctx_range_watch_release);
	}
	pmuctx_ctx_lock_irq(ctx);
	if (!clone->range && !list_empty(&clone->ctx_entry)) {
		/* Counting already: its clock was 0 until now. */
		WRITE_ONCE(clone->range, w);
		pmuctx_range_publish(clone);
		w = NULL;
	}
	pmuctx_ctx_unlock_irq(ctx);
	pmuctx_range_put_watch(w);
}

static bool pmuctx_range_clone_unwatched(const struct pmuctx_counter *c)
{
	return c->attr.type == PMUCTX_TYPE_RANGE && c->parent && !c->range;
}

/* Give every range clone of @ctx (current's) its watch. */
void pmuctx_range_watch_clones(struct pmuctx_context *ctx)
{
	if (READ_ONCE(ctx->nr_range))
		pmuctx_ctx_handle_each(ctx, pmuctx_range_clone_unwatched,
				       pmuctx_range_watch_clone);
}

/*
 * In an equivalent swap (kernel/sched.c), both contexts claimed, IRQs off:
 * @ctx goes to the task that held @nctx and the other way round.  Their
 * counters correspond one to one, in order (clones are made in their
 * parent's order, and any change leaves the family), so each pair of range
 * instances exchanges its watch: every task keeps the events bound to it.
 * Neither task runs now, so no count moves meanwhile; each snapshot is
 * moved by the difference, so no value jumps.
 */
void pmuctx_range_swap(struct pmuctx_context *ctx, struct pmuctx_context *nctx)
{
	struct pmuctx_counter *c, *n;

	n = list_first_entry(&nctx->counters, struct pmuctx_counter, ctx_entry);
	list_for_each_entry(c, &ctx->counters, ctx_entry) {
		if (PMUCTX_CHECK_INVARIANTS &&
		    WARN_ON_ONCE(&n->ctx_entry == &nctx->counters ||
				 n->attr.type != c->attr.type))
			return;
		if (c->attr.type == PMUCTX_TYPE_RANGE) {
			struct pmuctx_range_watch *w = c->range;
			u64 hc = pmuctx_range_hits(c), hn = pmuctx_range_hits(n);

			c->snap += hn - hc;
			n->snap += hc - hn;
			WRITE_ONCE(c->range, n->range);
			WRITE_ONCE(n->range, w);
			if (c->attr.sample_period) {
				/*
				 * The period left goes with the watch, as the
				 * hits do: every task samples each period of
				 * its own hits.  Left with the instance, a
				 * task's part period was dropped when its
				 * hits moved to the other instance's.
				 */
				swap(c->period_left, n->period_left);
				if (c->range)
					WRITE_ONCE(c->range->inst, c);
				if (w)
					WRITE_ONCE(w->inst, n);
			}
		}
		n = list_next_entry(n, ctx_entry);
	}
}

/* The instance's hits so far: its clock (kernel/counter.c).  Any context. */
u64 pmuctx_range_hits(const struct pmuctx_counter *c)
{
	const struct pmuctx_range_watch *w = READ_ONCE(c->range);
	unsigned int i;
	u64 hits = 0;

	if (!w)
		return 0;
	for (i = 0; i < w->nr; i++)
		hits += local64_read(&w->bp[i]->count);
	return hits;
}

static void pmuctx_range_reply(struct pmuctx_range *r,
			       const struct pmuctx_range_plan *plan)
{
	unsigned int i;

	r->nr_spans = plan->nr_blocks;
	r->start_off = plan->start_off;
	r->end_off = plan->end_off;
	for (i = 0; i < plan->nr_blocks; i++) {
		r->spans[i].base = plan->blocks[i].base;
		r->spans[i].size = plan->blocks[i].size;
		r->spans[i].order = plan->blocks[i].order;
		r->spans[i].type = plan->blocks[i].type;
	}
}

static long pmuctx_range_copy_in(struct pmuctx_range *r,
				 struct pmuctx_range __user *ur)
{
	long usize = pmuctx_copy_sized(r, sizeof(*r), ur,
				       offsetofend(struct pmuctx_range, end));

	if (usize < 0)
		return usize;
	r->size = min_t(u32, usize, sizeof(*r));
	return 0;
}

/* PMUCTX_RANGE_PLAN: what a counter of this range would program here. */
long pmuctx_range_ioctl_plan(struct pmuctx_range __user *ur)
{
	struct pmuctx_range_plan plan;
	struct pmuctx_range r;
	long err;

	err = pmuctx_range_copy_in(&r, ur);
	if (err)
		return err;
	/* What a counter would program: it watches user addresses only. */
	if (r.end > TASK_SIZE_MAX)
		return -EINVAL;
	err = pmuctx_range_plan_for(r.config, r.start, r.end, &plan);
	if (err)
		return err;
	memset(&r.spans, 0, sizeof(r.spans));
	pmuctx_range_reply(&r, &plan);
	return copy_to_user(ur, &r, r.size) ? -EFAULT : 0;
}

/* PMUCTX_IOC_RANGE: the range and plan of an original range counter. */
long pmuctx_range_ioctl_counter(struct pmuctx_counter *c,
				struct pmuctx_range __user *ur)
{
	struct pmuctx_range r;
	long err;

	if (c->attr.type != PMUCTX_TYPE_RANGE)
		return -EINVAL;
	err = pmuctx_range_copy_in(&r, ur);
	if (err)
		return err;
	r = (struct pmuctx_range) { .size = r.size };
	r.config = c->attr.config;
	r.start = c->attr.range_start;
	r.end = c->attr.range_end;
	pmuctx_range_reply(&r, c->fam->range_plan);
	return copy_to_user(ur, &r, r.size) ? -EFAULT : 0;
}
