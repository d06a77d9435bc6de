// SPDX-License-Identifier: GPL-2.0
/*
 * ARMv8 PMUv3 backend.  Register layouts from the Arm ARM (D13, "The
 * Performance Monitors Extension").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/cpu_pm.h>
#include <linux/cpuhotplug.h>
#include <linux/errno.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/of.h>
#include <linux/of_irq.h>
#include <linux/of_platform.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <asm/irq_regs.h>
#include <asm/sysreg.h>
#include <asm/virt.h>
#include "pmuctx.h"

#define PMUVER_SHIFT		8	/* ID_AA64DFR0_EL1.PMUVer */
#define PMUVER_NONE		0x0
#define PMUVER_IMPDEF		0xf
#define PMUVER_V3P5		0x6
#define PMCR_N			GENMASK(15, 11)
#define PMCR_E			BIT(0)
#define PMCR_LC			BIT(6)	/* cycle counter overflows at 64 bits */
#define PMEVTYPER_P		BIT(31)	/* do not count EL1 */
#define PMEVTYPER_U		BIT(30)	/* do not count EL0 */
#define PMEVTYPER_NSH		BIT(27)	/* count EL2 (the kernel, under VHE) */
#define PMEVTYPER_EVENT		GENMASK(15, 0)
#define PMU_CYCLE_IDX		31
#define PMUSERENR_CR		BIT(2)	/* EL0 may read the cycle counter */
#define PMUSERENR_ER		BIT(3)	/* EL0 may read event counters */
#define PMU_ALL_COUNTERS	0xffffffffUL

#define EVENT_SW_INCR		0x00
#define EVENT_INST_RETIRED	0x08
#define EVENT_CPU_CYCLES	0x11
#define EVENT_COMMON_EXT	0x4000

/* Periods stay below half the 32-bit range so no overflow goes unseen. */
#define PMU_MAX_PERIOD		BIT_ULL(31)

/*
 * Overflow storms (sample_period 1 on a busy event) would keep a CPU in
 * this interrupt.  Past max_irqs_per_tick interrupts in one jiffy, counters
 * are re-armed at least PMU_THROTTLE_EVENTS ahead: the overflow count stays
 * exact (it is computed from the events, not from interrupts), only fewer
 * samples are taken until the next jiffy.
 */
#define PMU_THROTTLE_EVENTS	BIT_ULL(20)
static unsigned int max_irqs_per_tick = 64;
module_param(max_irqs_per_tick, uint, 0644);
MODULE_PARM_DESC(max_irqs_per_tick,
		 "PMU overflow interrupts per CPU and jiffy before samples are throttled");

struct pmuv3_irq_rate {
	unsigned long jiffy;
	unsigned int irqs;
};

static DEFINE_PER_CPU(struct pmuv3_irq_rate, pmuv3_irq_rate);

static int pmuv3_irq = -1;
static DEFINE_PER_CPU(int, pmuv3_irq_cookie);
static enum cpuhp_state pmuv3_hp_state = CPUHP_INVALID;

static struct pmuctx_hw_desc pmuv3_desc;

static __always_inline u64 pmuv3_width_mask(int idx)
{
	return idx == PMU_CYCLE_IDX ? U64_MAX : U32_MAX;
}

/*
 * One counter, any index: through PMSELR_EL0 + PMXEV*, three instructions
 * per access, where the counter's own PMEVCNTR<n>_EL0 would need a switch
 * on n to encode the register.  The load and the fold, which visit every
 * counter, use the counters' own registers (pmuv3_event_counters()).
 */
static __always_inline u64 pmuv3_read_counter(int idx)
{
	if (idx == PMU_CYCLE_IDX)
		return read_sysreg(pmccntr_el0);
	write_sysreg(idx, pmselr_el0);
	isb();
	return read_sysreg(pmxevcntr_el0);
}

static void pmuv3_write_counter(int idx, u64 val)
{
	if (idx == PMU_CYCLE_IDX) {
		write_sysreg(val, pmccntr_el0);
		return;
	}
	write_sysreg(idx, pmselr_el0);
	isb();
	write_sysreg(lower_32_bits(val), pmxevcntr_el0);
}

/*
 * Type and value under one selection: every load programs both, and the
 * loop of a load is where the counters' instructions add up.
 */
static __always_inline void pmuv3_write_type_counter(int idx, u64 config,
						     u64 val)
{
	if (idx == PMU_CYCLE_IDX) {
		/* The cycle counter takes only the filter bits. */
		write_sysreg(config & (PMEVTYPER_P | PMEVTYPER_U | PMEVTYPER_NSH),
			     pmccfiltr_el0);
		write_sysreg(val, pmccntr_el0);
		return;
	}
	write_sysreg(idx, pmselr_el0);
	isb();
	write_sysreg(config, pmxevtyper_el0);
	write_sysreg(lower_32_bits(val), pmxevcntr_el0);
}

/* The raw value that overflows after @left more events. */
static __always_inline u64 pmuv3_start_value(int idx, u64 left)
{
	return left ? (pmuv3_width_mask(idx) - left + 1) & pmuv3_width_mask(idx) : 0;
}

static bool pmuv3_event_supported(const struct pmuctx_hw_desc *d, u32 event)
{
	if (event < 64)
		return d->hw_events[0] & BIT_ULL(event);
	if (event >= EVENT_COMMON_EXT && event < EVENT_COMMON_EXT + 64)
		return d->hw_events[1] & BIT_ULL(event - EVENT_COMMON_EXT);
	return false;
}

/* A raw event code of the PMU @d describes: malformed, missing, or 0. */
int pmuctx_pmuv3_check_raw(const struct pmuctx_hw_desc *d, u64 config)
{
	if (config & ~(u64)PMEVTYPER_EVENT)
		return -EINVAL;
	return pmuv3_event_supported(d, config) ? 0 : -ENOENT;
}

static int pmuv3_event_init(struct pmuctx_counter *c)
{
	const struct pmuctx_attr *attr = &c->attr;
	u64 event;
	int err;

	if (attr->type == PMUCTX_TYPE_HARDWARE)
		event = attr->config == PMUCTX_HW_CPU_CYCLES ?
			EVENT_CPU_CYCLES : EVENT_INST_RETIRED;
	else
		event = attr->config;
	err = pmuctx_pmuv3_check_raw(&pmuv3_desc, event);
	if (err)
		return err;
	if (attr->sample_period > PMU_MAX_PERIOD)
		return -EINVAL;
	/* Without an overflow interrupt a period could never be reported. */
	if (attr->sample_period && !(pmuv3_desc.features & PMUCTX_FEAT_OVERFLOW))
		return -EOPNOTSUPP;
	c->hw_config = event;
	if (attr->flags & PMUCTX_ATTR_EXCLUDE_KERNEL)
		c->hw_config |= PMEVTYPER_P;
	else if (is_kernel_in_hyp_mode())
		c->hw_config |= PMEVTYPER_NSH;	/* VHE: the kernel is EL2 */
	if (attr->flags & PMUCTX_ATTR_EXCLUDE_USER)
		c->hw_config |= PMEVTYPER_U;
	return 0;
}

/* CPU_CYCLES prefers the cycle counter; everything else an event counter. */
static int pmuv3_slot_pick(unsigned long used, const struct pmuctx_counter *c)
{
	unsigned long free = ~used & GENMASK(pmuv3_desc.nr_general - 1, 0);

	if ((c->hw_config & PMEVTYPER_EVENT) == EVENT_CPU_CYCLES &&
	    !test_bit(PMU_CYCLE_IDX, &used))
		return PMU_CYCLE_IDX;
	return free ? __ffs(free) : -ENOSPC;
}

/*
 * Where a load starts @c in register @idx: @period_left from overflowing;
 * a counting event counter at 0, or in a context with self-read pages
 * 2^31, in the upper half of the counter, where perf's page can
 * sign-extend it (kernel/overflow.c, pmuctx_write_perf_page()) until its
 * wrap (the overflow interrupt folds it; perf's page then says "use
 * read()" until the next load).  The 64-bit cycle counter needs neither.
 */
static __always_inline u64 pmuv3_load_value(const struct pmuctx_context *ctx,
					    const struct pmuctx_counter *c,
					    int idx)
{
	if (unlikely(c->attr.sample_period))
		return pmuv3_start_value(idx, c->period_left);
	if (unlikely(ctx->nr_mapped) && idx != PMU_CYCLE_IDX)
		return pmuv3_start_value(idx, PMU_MAX_PERIOD);
	return 0;
}

/* Program the counter's type and start value; the caller enables it. */
static __always_inline void pmuv3_program_one(const struct pmuctx_context *ctx,
					      struct pmuctx_counter *c)
{
	int idx = c->hw_idx;

	c->hw_prev = pmuv3_load_value(ctx, c, idx);
	pmuv3_write_type_counter(idx, c->hw_config, c->hw_prev);
}

static void pmuv3_enable_mask(unsigned long mask)
{
	write_sysreg(mask, pmovsclr_el0);
	write_sysreg(mask, pmintenset_el1);
	write_sysreg(mask, pmcntenset_el0);
}

static void pmuv3_start(const struct pmuctx_context *ctx,
			struct pmuctx_counter *c)
{
	pmuv3_program_one(ctx, c);
	pmuv3_enable_mask(BIT(c->hw_idx));
}

/* @c's register @left events from its overflow (at most PMU_MAX_PERIOD). */
static void pmuv3_arm(struct pmuctx_counter *c, u64 left)
{
	c->hw_prev = pmuv3_start_value(c->hw_idx, min(left, PMU_MAX_PERIOD));
	pmuv3_write_counter(c->hw_idx, c->hw_prev);
}

/*
 * A sampling counter's periods that elapsed in @delta more events: account
 * them and re-arm.  @regs: the interrupted ones, or NULL outside the
 * interrupt, where a sample records where the task was in user space.
 */
static noinline void pmuv3_fold_periods(struct pmuctx_counter *c,
					struct pt_regs *regs, u64 arm_floor,
					u64 delta)
{
	u64 n;

	/*
	 * Events while the counter is off are no period's: re-armed here,
	 * its next overflow comes @period_left counted events after it
	 * counts again, since a fold precedes every change of counting.
	 */
	if (!pmuctx_counter_counting(c)) {
		pmuv3_arm(c, max(c->period_left, arm_floor));
		return;
	}
	if (!regs && current->mm)
		regs = task_pt_regs(current);

	n = pmuctx_periods_ended(c, delta);
	if (!n)
		return;
	/* Armed further ahead when throttled: @period_left stays exact. */
	pmuv3_arm(c, max(c->period_left, arm_floor));
	pmuctx_counter_overflowed(c, regs, n);
}

/*
 * The event counters through their own registers (PMEVTYPER<n>_EL0,
 * PMEVCNTR<n>_EL0): no PMSELR selection and no isb per counter.  A
 * register's number is part of its instruction: @n must be a constant
 * once inlined (the "i" constraint fails the build otherwise).
 */
static __always_inline u32 pmuv3_evcntr_reg(const int n)
{
	/* PMEVCNTR<n>_EL0: op0 3, op1 3, CRn 14, CRm 0b10:n[4:3], op2 n[2:0] */
	return sys_reg(3, 3, 14, 8 | (n >> 3), n & 7);
}

static __always_inline u32 pmuv3_evtyper_reg(const int n)
{
	/* PMEVTYPER<n>_EL0: CRm 0b11:n[4:3] */
	return sys_reg(3, 3, 14, 12 | (n >> 3), n & 7);
}

static __always_inline void pmuv3_write_sysreg_imm(const u32 reg, u64 val)
{
	asm volatile(DEFINE_MSR_S "	msr_s %c0, %x1\n" UNDEFINE_MSR_S
		     : : "i" (reg), "rZ" (val));
}

static __always_inline u64 pmuv3_read_evcntr(const int n)
{
	u64 val;

	asm volatile(DEFINE_MRS_S "	mrs_s %0, %c1\n" UNDEFINE_MRS_S
		     : "=r" (val) : "i" (pmuv3_evcntr_reg(n)));
	return val;
}

/*
 * A slot holds a counter exactly when its bit is in ctx->used_mask (mux.c
 * sets and clears both together), so the walk below the highest used slot
 * tests the slot alone.  Checked on the debug kernels.
 */
static __always_inline void pmuv3_check_slot(unsigned long used, int n,
					     const struct pmuctx_counter *c)
{
	if (PMUCTX_CHECK_INVARIANTS)
		WARN_ON_ONCE(!c != !(used & BIT(n)));
}

/* The highest event counter in @used, or -1. */
static __always_inline int pmuv3_top_event_counter(unsigned long used)
{
	return fls(used & GENMASK(PMU_CYCLE_IDX - 1, 0)) - 1;
}

/*
 * Bring one counter's 64-bit count up to date from @raw, its register.
 * Deltas are taken modulo the counter width, so a wrap between two folds
 * costs nothing as long as the overflow interrupt comes before a second
 * wrap.
 */
static __always_inline void pmuv3_fold_raw(struct pmuctx_counter *c, u64 raw,
					   u64 mask, struct pt_regs *regs,
					   u64 arm_floor)
{
	u64 delta = (raw - c->hw_prev) & mask;

	c->hw_count += delta;
	c->hw_prev = raw;
	if (unlikely(c->attr.sample_period))
		pmuv3_fold_periods(c, regs, arm_floor, delta);
}

/*
 * Event counter @n of a load (program it) or of a fold (read it; and for
 * a handoff, @next's instance counts on from the reading).
 */
static __always_inline void pmuv3_slot(struct pmuctx_context *ctx,
				       unsigned long used, const int n,
				       bool load, struct pt_regs *regs,
				       u64 arm_floor,
				       struct pmuctx_context *next)
{
	struct pmuctx_counter *c = ctx->slots[n];

	pmuv3_check_slot(used, n, c);
	if (!c)
		return;
	if (!load) {
		pmuv3_fold_raw(c, pmuv3_read_evcntr(n), U32_MAX, regs,
			       arm_floor);
		if (next)
			next->slots[n]->hw_prev = c->hw_prev;
		return;
	}
	c->hw_prev = pmuv3_load_value(ctx, c, n);
	pmuv3_write_sysreg_imm(pmuv3_evtyper_reg(n), c->hw_config);
	pmuv3_write_sysreg_imm(pmuv3_evcntr_reg(n), lower_32_bits(c->hw_prev));
}

/*
 * Every used event counter, unrolled: entered at the highest used one, it
 * goes on down to counter 0, one test of its slot per counter and no
 * loop.  Instantiated twice, @load constant: the load and the fold.
 */
static __always_inline void pmuv3_event_counters(struct pmuctx_context *ctx,
						 bool load,
						 struct pt_regs *regs,
						 u64 arm_floor,
						 struct pmuctx_context *next)
{
	unsigned long used = ctx->used_mask;

	switch (pmuv3_top_event_counter(used)) {
	case 30:
		pmuv3_slot(ctx, used, 30, load, regs, arm_floor, next);
		fallthrough;
	case 29:
		pmuv3_slot(ctx, used, 29, load, regs, arm_floor, next);
		fallthrough;
	case 28:
		pmuv3_slot(ctx, used, 28, load, regs, arm_floor, next);
		fallthrough;
	case 27:
		pmuv3_slot(ctx, used, 27, load, regs, arm_floor, next);
		fallthrough;
	case 26:
		pmuv3_slot(ctx, used, 26, load, regs, arm_floor, next);
		fallthrough;
	case 25:
		pmuv3_slot(ctx, used, 25, load, regs, arm_floor, next);
		fallthrough;
	case 24:
		pmuv3_slot(ctx, used, 24, load, regs, arm_floor, next);
		fallthrough;
	case 23:
		pmuv3_slot(ctx, used, 23, load, regs, arm_floor, next);
		fallthrough;
	case 22:
		pmuv3_slot(ctx, used, 22, load, regs, arm_floor, next);
		fallthrough;
	case 21:
		pmuv3_slot(ctx, used, 21, load, regs, arm_floor, next);
		fallthrough;
	case 20:
		pmuv3_slot(ctx, used, 20, load, regs, arm_floor, next);
		fallthrough;
	case 19:
		pmuv3_slot(ctx, used, 19, load, regs, arm_floor, next);
		fallthrough;
	case 18:
		pmuv3_slot(ctx, used, 18, load, regs, arm_floor, next);
		fallthrough;
	case 17:
		pmuv3_slot(ctx, used, 17, load, regs, arm_floor, next);
		fallthrough;
	case 16:
		pmuv3_slot(ctx, used, 16, load, regs, arm_floor, next);
		fallthrough;
	case 15:
		pmuv3_slot(ctx, used, 15, load, regs, arm_floor, next);
		fallthrough;
	case 14:
		pmuv3_slot(ctx, used, 14, load, regs, arm_floor, next);
		fallthrough;
	case 13:
		pmuv3_slot(ctx, used, 13, load, regs, arm_floor, next);
		fallthrough;
	case 12:
		pmuv3_slot(ctx, used, 12, load, regs, arm_floor, next);
		fallthrough;
	case 11:
		pmuv3_slot(ctx, used, 11, load, regs, arm_floor, next);
		fallthrough;
	case 10:
		pmuv3_slot(ctx, used, 10, load, regs, arm_floor, next);
		fallthrough;
	case 9:
		pmuv3_slot(ctx, used, 9, load, regs, arm_floor, next);
		fallthrough;
	case 8:
		pmuv3_slot(ctx, used, 8, load, regs, arm_floor, next);
		fallthrough;
	case 7:
		pmuv3_slot(ctx, used, 7, load, regs, arm_floor, next);
		fallthrough;
	case 6:
		pmuv3_slot(ctx, used, 6, load, regs, arm_floor, next);
		fallthrough;
	case 5:
		pmuv3_slot(ctx, used, 5, load, regs, arm_floor, next);
		fallthrough;
	case 4:
		pmuv3_slot(ctx, used, 4, load, regs, arm_floor, next);
		fallthrough;
	case 3:
		pmuv3_slot(ctx, used, 3, load, regs, arm_floor, next);
		fallthrough;
	case 2:
		pmuv3_slot(ctx, used, 2, load, regs, arm_floor, next);
		fallthrough;
	case 1:
		pmuv3_slot(ctx, used, 1, load, regs, arm_floor, next);
		fallthrough;
	case 0:
		pmuv3_slot(ctx, used, 0, load, regs, arm_floor, next);
		break;
	default:
		break;
	}
}

static __always_inline void pmuv3_fold_slots(struct pmuctx_context *ctx,
					     struct pt_regs *regs,
					     u64 arm_floor,
					     struct pmuctx_context *next)
{
	struct pmuctx_counter *c = ctx->slots[PMU_CYCLE_IDX];

	pmuv3_event_counters(ctx, false, regs, arm_floor, next);
	pmuv3_check_slot(ctx->used_mask, PMU_CYCLE_IDX, c);
	if (c) {
		pmuv3_fold_raw(c, read_sysreg(pmccntr_el0), U64_MAX, regs,
			       arm_floor);
		if (next)
			next->slots[PMU_CYCLE_IDX]->hw_prev = c->hw_prev;
	}
}

static void pmuv3_fold_regs(struct pmuctx_context *ctx, struct pt_regs *regs,
			    u64 arm_floor)
{
	write_sysreg(read_sysreg(pmovsclr_el0) & ctx->used_mask, pmovsclr_el0);
	pmuv3_fold_slots(ctx, regs, arm_floor, NULL);
}

static void pmuv3_fold(struct pmuctx_context *ctx)
{
	pmuv3_fold_regs(ctx, NULL, 0);
}

/*
 * A handoff's fold: the counters run on, and an overflow flag raised
 * before it stays for the interrupt, which folds the next context from
 * the same readings (a delta is taken modulo the width: one wrap).
 */
void pmuctx_native_handoff_fold(struct pmuctx_context *ctx,
				struct pmuctx_context *next)
{
	pmuv3_fold_slots(ctx, NULL, 0, next);
}

/* Every counter register EL0 could read, other than @keep's, reads 0. */
static void pmuv3_zero_others(unsigned long keep)
{
	unsigned int idx;

	for (idx = 0; idx < pmuv3_desc.nr_general; idx++)
		if (!test_bit(idx, &keep))
			pmuv3_write_counter(idx, 0);
	if (!test_bit(PMU_CYCLE_IDX, &keep))
		pmuv3_write_counter(PMU_CYCLE_IDX, 0);
}

/*
 * EL0 may read the counters only while a context with a mapped counter is
 * loaded, and then every register it did not program reads 0 (PMUSERENR
 * opens all of them at once): no task ever reads another's counts, and
 * tasks without self-reads trap.
 */
static void pmuv3_load(struct pmuctx_context *ctx)
{
	unsigned long used = ctx->used_mask;
	struct pmuctx_counter *c;

	/*
	 * Every counter is off: only a loaded context enables any, and its
	 * unload (or the CPU's reset) disabled them all.  Debug kernels
	 * check it; every kernel makes sure, as a counter left on would
	 * count another task (a context that stayed loaded without its
	 * task was one such bug: pmuctx_task_stop()).
	 */
	if (PMUCTX_CHECK_INVARIANTS)
		WARN_ON_ONCE(read_sysreg(pmcntenset_el0));
	write_sysreg(PMU_ALL_COUNTERS, pmcntenclr_el0);
	isb();
	pmuv3_event_counters(ctx, true, NULL, 0, NULL);
	c = ctx->slots[PMU_CYCLE_IDX];
	pmuv3_check_slot(used, PMU_CYCLE_IDX, c);
	if (c)
		pmuv3_program_one(ctx, c);
	/* The used slots are the programmed ones (pmuv3_check_slot()). */
	pmuv3_enable_mask(used);
	if (ctx->nr_mapped)
		pmuv3_zero_others(used);
	write_sysreg(ctx->nr_mapped ? PMUSERENR_ER | PMUSERENR_CR : 0,
		     pmuserenr_el0);
	isb();
}

/*
 * The counts stay in the registers: EL0 may read them only while a mapped
 * context is loaded, and loading one zeroes every register it does not
 * program (pmuv3_zero_others()), so nobody reads what is left here.
 */
static void pmuv3_unload(struct pmuctx_context *ctx)
{
	write_sysreg(0, pmuserenr_el0);
	write_sysreg(PMU_ALL_COUNTERS, pmcntenclr_el0);
	isb();
	/* Stopped: their overflow flags are all cleared below. */
	pmuv3_fold_slots(ctx, NULL, 0, NULL);
	write_sysreg(PMU_ALL_COUNTERS, pmintenclr_el1);
	write_sysreg(PMU_ALL_COUNTERS, pmovsclr_el0);
	isb();
}

/* PMCR.E gates every counter at once: a rotation counts nothing of itself. */
static void pmuv3_pause(void)
{
	write_sysreg(PMCR_LC, pmcr_el0);
	isb();
}

static void pmuv3_resume(void)
{
	write_sysreg(PMCR_E | PMCR_LC, pmcr_el0);
	isb();
}

static u32 pmuv3_counter_width(int idx)
{
	return idx == PMU_CYCLE_IDX ? 64 : 32;
}

static void pmuv3_program(struct pmuctx_context *ctx, struct pmuctx_counter *c,
			  bool on)
{
	int idx = c->hw_idx;

	if (on) {
		if (ctx->slots[idx] == c)
			pmuv3_start(ctx, c);
	} else if (!test_bit(idx, &ctx->used_mask)) {
		write_sysreg(BIT(idx), pmcntenclr_el0);
		write_sysreg(BIT(idx), pmintenclr_el1);
		write_sysreg(BIT(idx), pmovsclr_el0);
		isb();
		/* A released slot keeps no count behind. */
		pmuv3_write_counter(idx, 0);
	}
	isb();
}

/* Re-arm distance while this CPU takes an interrupt storm, else 0. */
static u64 pmuv3_throttle_floor(void)
{
	struct pmuv3_irq_rate *rate = this_cpu_ptr(&pmuv3_irq_rate);
	unsigned long now = jiffies;

	if (rate->jiffy != now) {
		rate->jiffy = now;
		rate->irqs = 0;
	}
	return ++rate->irqs > READ_ONCE(max_irqs_per_tick) ?
	       PMU_THROTTLE_EVENTS : 0;
}

/*
 * The overflow demux: only the context loaded on this CPU can own the
 * overflowed counters, and its slot table says which counter each one is.
 */
static irqreturn_t pmuv3_handle_irq(int irq, void *dev)
{
	struct pmuctx_context *ctx = __this_cpu_read(pmuctx_loaded_ctx);
	u64 ovs = read_sysreg(pmovsclr_el0);

	if (!ctx) {
		write_sysreg(ovs, pmovsclr_el0);
		return ovs ? IRQ_HANDLED : IRQ_NONE;
	}
	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id()) {
		u64 stray = ovs & ~(u64)ctx->used_mask;

		pmuv3_fold_regs(ctx, get_irq_regs(), pmuv3_throttle_floor());
		pmuctx_ctx_update_user_pages(ctx);
		/*
		 * A slot released while its overflow was pending (the stop
		 * IPI is still on its way): silence it, or the level
		 * interrupt fires again at once, for ever, and the IPI that
		 * would stop it never gets in.
		 */
		if (stray) {
			write_sysreg(stray, pmintenclr_el1);
			write_sysreg(stray, pmcntenclr_el0);
			write_sysreg(stray, pmovsclr_el0);
			isb();
		}
	} else {
		write_sysreg(ovs, pmovsclr_el0);
	}
	pmuctx_ctx_unlock(ctx);
	return IRQ_HANDLED;
}

/* Counters off, quiet and zero, EL0 access trapping, PMU enabled. */
static void pmuv3_cpu_reset(void)
{
	write_sysreg(PMU_ALL_COUNTERS, pmcntenclr_el0);
	write_sysreg(PMU_ALL_COUNTERS, pmintenclr_el1);
	write_sysreg(PMU_ALL_COUNTERS, pmovsclr_el0);
	write_sysreg(0, pmuserenr_el0);
	write_sysreg(PMCR_E | PMCR_LC, pmcr_el0);
	isb();
	pmuv3_zero_others(0);
	isb();
}

/* Every CPU as it comes online (and every online one at load). */
static int pmuv3_cpu_online(unsigned int cpu)
{
	pmuv3_cpu_reset();
	if (pmuv3_irq > 0)
		enable_percpu_irq(pmuv3_irq, IRQ_TYPE_NONE);
	return 0;
}

static int pmuv3_cpu_offline(unsigned int cpu)
{
	if (pmuv3_irq > 0)
		disable_percpu_irq(pmuv3_irq);
	write_sysreg(PMU_ALL_COUNTERS, pmcntenclr_el0);
	write_sysreg(PMU_ALL_COUNTERS, pmintenclr_el1);
	write_sysreg(PMU_ALL_COUNTERS, pmovsclr_el0);
	write_sysreg(0, pmcr_el0);
	isb();
	return 0;
}

/*
 * A CPU that powers down loses its PMU state (PMCR.E among it).  The idle
 * task holds no context, so nothing is loaded then: reset on the way up.
 */
static int pmuv3_cpu_pm(struct notifier_block *nb, unsigned long action,
			void *unused)
{
	if (action == CPU_PM_EXIT || action == CPU_PM_ENTER_FAILED)
		pmuv3_cpu_reset();
	return NOTIFY_OK;
}

static struct notifier_block pmuv3_cpu_pm_nb = {
	.notifier_call = pmuv3_cpu_pm,
};

static void pmuv3_remove(void)
{
	cpu_pm_unregister_notifier(&pmuv3_cpu_pm_nb);
	if (pmuv3_hp_state != CPUHP_INVALID) {
		cpuhp_remove_state(pmuv3_hp_state);
		pmuv3_hp_state = CPUHP_INVALID;
	}
	if (pmuv3_irq > 0) {
		free_percpu_irq(pmuv3_irq, &pmuv3_irq_cookie);
		pmuv3_irq = -1;
	}
}

static struct pmuctx_hw_desc pmuv3_desc = {
	.name = "armv8-pmuv3",
	.features = PMUCTX_FEAT_HARDWARE,
	.remove = pmuv3_remove,
	.event_init = pmuv3_event_init,
	.slot_pick = pmuv3_slot_pick,
	.load = pmuv3_load,
	.unload = pmuv3_unload,
	.fold = pmuv3_fold,
	.program = pmuv3_program,
	.counter_width = pmuv3_counter_width,
	.read_counter = pmuv3_read_counter,
	.handoff_fold = pmuctx_native_handoff_fold,
	.pause = pmuv3_pause,
	.resume = pmuv3_resume,
};

/*
 * The kernel's own arm_pmu driver programs the same registers from perf; two
 * owners would corrupt each other's counts, so refuse when it is bound to the
 * device-tree PMU node.
 */
static int pmuv3_check_owner(struct device_node *np)
{
	struct platform_device *pdev = of_find_device_by_node(np);
	int err = 0;

	if (!pdev)
		return 0;
	if (pdev->dev.driver) {
		pr_info("PMUv3 is owned by the kernel driver '%s' (booting with initcall_blacklist=armv8_pmu_driver_init gives it to pmuctx)\n",
			pdev->dev.driver->name);
		err = -EBUSY;
	}
	put_device(&pdev->dev);
	return err;
}

/* The overflow PPI from the device tree's "arm,armv8-pmuv3" node. */
static int pmuv3_request_irq(struct device_node *np)
{
	int irq, err;

	irq = irq_of_parse_and_map(np, 0);
	if (irq <= 0) {
		pr_warn("no PMU interrupt in the device tree: counting without overflow interrupts\n");
		return 0;
	}
	if (!irq_is_percpu_devid(irq)) {
		pr_err("PMU interrupt %d is not a per-CPU interrupt\n", irq);
		return -EINVAL;
	}
	err = request_percpu_irq(irq, pmuv3_handle_irq, "pmuctx", &pmuv3_irq_cookie);
	if (err) {
		pr_err("PMU interrupt %d is taken (%d): is another PMU driver loaded?\n",
		       irq, err);
		return err == -EINVAL ? -EBUSY : err;
	}
	pmuv3_irq = irq;
	pmuv3_desc.features |= PMUCTX_FEAT_OVERFLOW;
	return 0;
}

/*
 * What the PMU offers, read from its ID registers, which the kernel may
 * read whoever owns the counters.  -ENODEV without a PMUv3.
 */
int pmuctx_pmuv3_describe(struct pmuctx_hw_desc *desc)
{
	u64 dfr0 = read_sysreg(id_aa64dfr0_el1);
	u32 pmuver = (dfr0 >> PMUVER_SHIFT) & 0xf;
	u64 ceid0, ceid1;

	if (pmuver == PMUVER_NONE || pmuver == PMUVER_IMPDEF)
		return -ENODEV;
	ceid0 = read_sysreg(pmceid0_el0);
	ceid1 = read_sysreg(pmceid1_el0);
	desc->pmu_version = pmuver;
	desc->nr_general = FIELD_GET(PMCR_N, read_sysreg(pmcr_el0));
	desc->nr_fixed = 1;		/* PMCCNTR_EL0 */
	desc->general_width = 32;
	desc->fixed_width = 64;
	/* PMCEIDn[31:0]: common events 0x00-0x3f; [63:32]: 0x4000-0x403f. */
	desc->hw_events[0] = lower_32_bits(ceid0) |
			     ((u64)lower_32_bits(ceid1) << 32);
	desc->hw_events[1] = upper_32_bits(ceid0) |
			     ((u64)upper_32_bits(ceid1) << 32);
	return 0;
}

int pmuctx_pmuv3_probe(const struct pmuctx_hw_desc **desc)
{
	struct device_node *np;
	int err;

	err = pmuctx_pmuv3_describe(&pmuv3_desc);
	if (err)
		return err;
	np = of_find_compatible_node(NULL, NULL, "arm,armv8-pmuv3");
	if (np) {
		err = pmuv3_check_owner(np);
		if (!err)
			err = pmuv3_request_irq(np);
		of_node_put(np);
		if (err)
			return err;
	}

	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pmuctx/pmuv3:online",
				pmuv3_cpu_online, pmuv3_cpu_offline);
	if (err < 0)
		goto free_irq;
	pmuv3_hp_state = err;
	err = cpu_pm_register_notifier(&pmuv3_cpu_pm_nb);
	if (err) {
		cpuhp_remove_state(pmuv3_hp_state);
		pmuv3_hp_state = CPUHP_INVALID;
		goto free_irq;
	}

	pr_info("PMUv3 version %u, %u event counters + cycle counter, overflow irq %d\n",
		pmuv3_desc.pmu_version, pmuv3_desc.nr_general, pmuv3_irq);
	*desc = &pmuv3_desc;
	return 0;

free_irq:
	if (pmuv3_irq > 0) {
		free_percpu_irq(pmuv3_irq, &pmuv3_irq_cookie);
		pmuv3_irq = -1;
	}
	return err;
}
