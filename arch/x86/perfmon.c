// SPDX-License-Identifier: GPL-2.0
/*
 * Intel architectural performance monitoring backend, version 2 and later:
 * general counters (IA32_PMCx, IA32_PERFEVTSELx), fixed counters
 * (IA32_FIXED_CTR0-2, IA32_FIXED_CTR_CTRL) and the global control, status
 * and overflow registers.  Register layouts from the Intel SDM, volume 3B,
 * "Architectural Performance Monitoring".  AMD's PerfCtrCore has no test
 * venue: AMD CPUs (and every CPU without CPUID leaf 0AH version 2) get
 * software counters only.
 *
 * Ownership: the general counters are reserved from the kernel's NMI
 * counter reservation (the one perf's driver and the NMI watchdog use),
 * all or nothing, at the first pmuctx hardware counter, and given back a
 * second after the last one is gone (Documentation/design.rst says why).
 * While pmuctx holds them perf's hardware events fail with EBUSY and perf
 * leaves the fixed counters and IA32_PERF_GLOBAL_CTRL alone; while perf
 * or the watchdog holds them, a pmuctx hardware open fails with EBUSY.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/cpuhotplug.h>
#include <linux/errno.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kcsan-checks.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/stacktrace.h>
#include <linux/workqueue.h>
#include <asm/apic.h>
#include <asm/cpufeature.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>
#include <asm/processor.h>
#include <asm/tlbflush.h>
#include "pmuctx.h"
#include "compat/apic.h"
#include "compat/cr4.h"
#include "compat/msr.h"

/*
 * Slots (ctx->slots, ctx->used_mask): general counter n is slot n, fixed
 * counter n is slot PERFMON_FIXED_SLOT + n.  In IA32_PERF_GLOBAL_CTRL and
 * _STATUS the fixed counters start at bit 32.
 */
#define PERFMON_MAX_GENERAL	16
#define PERFMON_MAX_FIXED	3
#define PERFMON_FIXED_SLOT	16
#define PERFMON_GLOBAL_FIXED	32

/* Event encodings as in IA32_PERFEVTSELx: event | umask << 8. */
#define PERFMON_EVENT_MASK	(ARCH_PERFMON_EVENTSEL_EVENT | \
				 ARCH_PERFMON_EVENTSEL_UMASK)
#define EV_CORE_CYCLES		0x003c
#define EV_INST_RETIRED		0x00c0
#define EV_REF_CYCLES		0x013c
/* Not an event a general counter counts: fixed counter 2's own encoding. */
#define EV_FIXED_REF_CYCLES	0x0300

/* IA32_FIXED_CTR_CTRL: four bits per fixed counter. */
#define FIXED_CTRL_OS		BIT_ULL(0)
#define FIXED_CTRL_USR		BIT_ULL(1)
#define FIXED_CTRL_PMI		BIT_ULL(3)
#define FIXED_CTRL_BITS		4

/* IA32_PERF_CAPABILITIES.FW_WRITE: full-width writes through IA32_A_PMCx. */
#define PERF_CAP_FULL_WIDTH	BIT_ULL(13)

/*
 * Periods below 2^31: a legacy IA32_PMCx write takes bits 31:0 sign
 * extended, which is how a start value of 2^width - period gets there
 * without full-width writes.
 */
#define PERFMON_MAX_PERIOD	BIT_ULL(31)

/*
 * Every counter has its overflow interrupt on, so that the wrap of a
 * counting (not sampling) one is folded by the NMI's irq_work: its count
 * stays exact however long no unload, read or rotation folds it (the
 * fold takes deltas modulo 2^width, exact until a second wrap).  Such a
 * counter starts this many events before its wrap, and again after each
 * wrap; 0 (the default) starts it at 0, the first wrap 2^width events
 * later, and never re-arms it.  The PMU lane's tests set a small one so
 * that their loops cross thousands of wraps.  Read at each load and fold.
 */
static unsigned int perfmon_start_headroom;

static int perfmon_set_headroom(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, PERFMON_MAX_PERIOD);
}

static const struct kernel_param_ops perfmon_headroom_ops = {
	.set = perfmon_set_headroom,
	.get = param_get_uint,
};
module_param_cb(start_headroom, &perfmon_headroom_ops, &perfmon_start_headroom, 0644);
MODULE_PARM_DESC(start_headroom,
		 "x86: events a counting counter starts before its wrap, 0 (from 0) to 2^31; its overflow NMI folds it");

/* As arm64's: past this many PMIs a jiffy, re-arm at least 2^20 ahead. */
#define PERFMON_THROTTLE_EVENTS	BIT_ULL(20)
static unsigned int perfmon_max_pmis_per_tick = 64;
module_param_named(max_pmis_per_tick, perfmon_max_pmis_per_tick, uint, 0644);
MODULE_PARM_DESC(max_pmis_per_tick,
		 "x86: PMU overflow NMIs per CPU and jiffy before samples are throttled");

/* CPUID.0AH:EBX bit n says architectural event n is unavailable. */
static const u16 perfmon_arch_events[] = {
	EV_CORE_CYCLES, EV_INST_RETIRED, EV_REF_CYCLES,
	0x4f2e,		/* LLC references */
	0x412e,		/* LLC misses */
	0x00c4,		/* branch instructions retired */
	0x00c5,		/* branch misses retired */
};

/*
 * This CPU's PMU.  @ctrl: IA32_PERF_GLOBAL_CTRL as the loaded context
 * wants it, written to the register unless @paused; @fixed_ctrl: the
 * value of IA32_FIXED_CTR_CTRL.  Both are written with IRQs off on this
 * CPU only (load, unload, program, pause, resume), never from the NMI.
 * @user_reads: the loaded context is mapped and its task may RDPMC
 * (CR4.PCE set by us); same rules.
 *
 * The rest is the NMI's hand-off to perfmon_pmi_work(): the NMI writes
 * it, the irq_work on the same CPU reads it under @regs_seq (odd while
 * the NMI writes).  @kwalk: a walk of the kernel stack, taken in the NMI
 * when it interrupted the kernel under a context whose counters want
 * kernel call chains (the irq_work runs on another stack); @kwalk_held:
 * the irq_work's copy of it (IRQs off), off the IRQ stack.
 */
struct perfmon_cpu {
	u64 ctrl;
	u64 fixed_ctrl;
	bool paused;
	bool user_reads;
	u32 lvtpc_before;	/* given back as found: perf's driver set it */
	unsigned long jiffy;
	unsigned int pmis;
	unsigned int regs_seq;
	struct pmuctx_context *regs_ctx;
	struct task_struct *regs_task;
	u64 regs_ctx_seq;
	struct pt_regs regs;
	unsigned int nr_kwalk;
	unsigned long kwalk[PMUCTX_KERNEL_WALK];
	unsigned long kwalk_held[PMUCTX_KERNEL_WALK];
	struct irq_work work;
};

static DEFINE_PER_CPU(struct perfmon_cpu, perfmon_cpu);

static struct pmuctx_hw_desc perfmon_desc;
static u64 perfmon_width_mask;		/* both widths are 48 bits on v2 */
static u64 perfmon_fixed_width_mask;
static u64 perfmon_all_global;		/* our bits of GLOBAL_CTRL/STATUS */
static bool perfmon_full_width;
static enum cpuhp_state perfmon_hp_state = CPUHP_INVALID;

/*
 * Ownership of the PMU (perfmon_take(), perfmon_give_back_work()).
 * @perfmon_users: per CPU, the originals event_init accepted there minus
 * those freed there (their clones hold them); no counter of pmuctx can
 * be on any PMU when the sum is 0.  One atomic for all CPUs was a line
 * every hardware open and last close wrote (issue 26).  Counted without
 * the mutex only inside an RCU read-side section that saw @perfmon_held
 * set; otherwise under @perfmon_own_mutex, which then sets it.  The sum
 * is exact once the give-back check has cleared @perfmon_held and waited
 * for a grace period (kernel/users.c makes the same argument).
 * @perfmon_last_put: per CPU, the jiffies of its last put; the PMU goes
 * back PERFMON_GIVE_BACK_DELAY after the latest.
 * @perfmon_owned: the counters are reserved, the NMI handler registered
 * and every online CPU's LVTPC ours; written under the mutex and
 * cpus_read_lock() (so the hotplug callbacks, which run under the
 * hotplug lock, see it stable), read under either.
 */
static DEFINE_MUTEX(perfmon_own_mutex);
static DEFINE_PER_CPU(long, perfmon_users);
static DEFINE_PER_CPU(unsigned long, perfmon_last_put);
static bool perfmon_held;
static bool perfmon_owned;
static int perfmon_take(void);
static void perfmon_give_back_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(perfmon_give_back, perfmon_give_back_work);

/*
 * Given back this long after the last counter: a tool that opens and
 * closes counters in a loop (pmuctx stat -r, a test suite) keeps the PMU
 * instead of paying the reservation, the NMI registration (an RCU grace
 * period) and an IPI to every CPU each time.
 */
#define PERFMON_GIVE_BACK_DELAY	HZ

static __always_inline bool perfmon_is_fixed(int slot)
{
	return slot >= PERFMON_FIXED_SLOT;
}

static __always_inline u64 perfmon_mask(int slot)
{
	return perfmon_is_fixed(slot) ? perfmon_fixed_width_mask :
					perfmon_width_mask;
}

/* The GLOBAL_CTRL/STATUS bits of the slots in @used. */
static __always_inline u64 perfmon_global_bits(unsigned long used)
{
	u64 general = used & GENMASK(PERFMON_FIXED_SLOT - 1, 0);
	u64 fixed = (used >> PERFMON_FIXED_SLOT) &
		    GENMASK(PERFMON_MAX_FIXED - 1, 0);

	return general | fixed << PERFMON_GLOBAL_FIXED;
}

/* Kernel mode may always RDPMC; ECX bit 30 selects the fixed counters. */
static __always_inline u64 perfmon_read_counter(int slot)
{
	return native_read_pmc(perfmon_is_fixed(slot) ?
			       BIT(30) | (slot - PERFMON_FIXED_SLOT) : slot);
}

static void perfmon_write_counter(int slot, u64 val)
{
	if (perfmon_is_fixed(slot))
		pmuctx_wrmsrq(MSR_ARCH_PERFMON_FIXED_CTR0 + slot - PERFMON_FIXED_SLOT,
			      val & perfmon_fixed_width_mask);
	else if (perfmon_full_width)
		pmuctx_wrmsrq(MSR_IA32_PMC0 + slot, val & perfmon_width_mask);
	else	/* bits 31:0, sign-extended by the CPU (PERFMON_MAX_PERIOD) */
		pmuctx_wrmsrq(MSR_ARCH_PERFMON_PERFCTR0 + slot, lower_32_bits(val));
}

static void perfmon_set_ctrl(struct perfmon_cpu *pc, u64 ctrl)
{
	pc->ctrl = ctrl;
	if (!pc->paused)
		pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, ctrl);
}

static void perfmon_set_fixed_ctrl(struct perfmon_cpu *pc, u64 val)
{
	if (val == pc->fixed_ctrl)
		return;
	pc->fixed_ctrl = val;
	pmuctx_wrmsrq(MSR_ARCH_PERFMON_FIXED_CTR_CTRL, val);
}

/* The raw value that overflows after @left more events. */
static __always_inline u64 perfmon_start_value(int slot, u64 left)
{
	return left ? (perfmon_mask(slot) - left + 1) & perfmon_mask(slot) : 0;
}

static bool perfmon_event_supported(const struct pmuctx_hw_desc *d, u64 event)
{
	unsigned int i;

	if (event == EV_FIXED_REF_CYCLES)
		return d->nr_fixed > 2;
	for (i = 0; i < ARRAY_SIZE(perfmon_arch_events); i++)
		if (event == perfmon_arch_events[i])
			return d->hw_events[0] & BIT_ULL(i);
	/* Model-specific: the CPU takes any code (and may count nothing). */
	return true;
}

/* A raw event code of the PMU @d describes: malformed, missing, or 0. */
int pmuctx_perfmon_check_raw(const struct pmuctx_hw_desc *d, u64 config)
{
	/* EDGE, INV, CMASK, ANY and the rest are not offered. */
	if (config & ~PERFMON_EVENT_MASK)
		return -EINVAL;
	return perfmon_event_supported(d, config) ? 0 : -ENOENT;
}

static int perfmon_event_init(struct pmuctx_counter *c)
{
	const struct pmuctx_attr *attr = &c->attr;
	u64 event;
	int err;

	if (attr->type == PMUCTX_TYPE_HARDWARE)
		event = attr->config == PMUCTX_HW_CPU_CYCLES ?
			EV_CORE_CYCLES : EV_INST_RETIRED;
	else
		event = attr->config;
	err = pmuctx_perfmon_check_raw(&perfmon_desc, event);
	if (err)
		return err;
	if (attr->sample_period > PERFMON_MAX_PERIOD)
		return -EINVAL;
	/* Without the overflow NMI a period could never be reported. */
	if (attr->sample_period &&
	    !(perfmon_desc.features & PMUCTX_FEAT_OVERFLOW))
		return -EOPNOTSUPP;
	c->hw_config = event;
	if (!(attr->flags & PMUCTX_ATTR_EXCLUDE_KERNEL))
		c->hw_config |= ARCH_PERFMON_EVENTSEL_OS;
	if (!(attr->flags & PMUCTX_ATTR_EXCLUDE_USER))
		c->hw_config |= ARCH_PERFMON_EVENTSEL_USR;
	/* Every counter: a wrap of a counting one folds it too (below). */
	c->hw_config |= ARCH_PERFMON_EVENTSEL_INT;
	return perfmon_take();
}

/* The last put of an accepted original (any context but NMI). */
static void perfmon_event_destroy(struct pmuctx_counter *c)
{
	this_cpu_write(perfmon_last_put, jiffies);
	this_cpu_dec(perfmon_users);
	if (!delayed_work_pending(&perfmon_give_back))
		queue_delayed_work(system_wq, &perfmon_give_back,
				   PERFMON_GIVE_BACK_DELAY);
}

/*
 * Instructions, core cycles and reference cycles prefer their fixed
 * counter; everything else (and they, when it is taken) the lowest free
 * general counter.  Fixed counter 2's own encoding has no general one.
 */
static int perfmon_slot_pick(unsigned long used, const struct pmuctx_counter *c)
{
	unsigned long free = ~used & GENMASK(perfmon_desc.nr_general - 1, 0);
	u64 event = c->hw_config & PERFMON_EVENT_MASK;
	int fixed = -1;

	if (event == EV_INST_RETIRED)
		fixed = 0;
	else if (event == EV_CORE_CYCLES)
		fixed = 1;
	else if (event == EV_REF_CYCLES || event == EV_FIXED_REF_CYCLES)
		fixed = 2;
	if (fixed >= 0 && fixed < perfmon_desc.nr_fixed &&
	    !test_bit(PERFMON_FIXED_SLOT + fixed, &used))
		return PERFMON_FIXED_SLOT + fixed;
	if (event == EV_FIXED_REF_CYCLES)
		return -ENOSPC;
	return free ? __ffs(free) : -ENOSPC;
}

/* IA32_FIXED_CTR_CTRL's field for @c on fixed counter @n. */
static u64 perfmon_fixed_field(const struct pmuctx_counter *c, int n)
{
	u64 f = 0;

	if (c->hw_config & ARCH_PERFMON_EVENTSEL_OS)
		f |= FIXED_CTRL_OS;
	if (c->hw_config & ARCH_PERFMON_EVENTSEL_USR)
		f |= FIXED_CTRL_USR;
	if (c->hw_config & ARCH_PERFMON_EVENTSEL_INT)
		f |= FIXED_CTRL_PMI;
	return f << (n * FIXED_CTRL_BITS);
}

/*
 * Events a counting counter starts before its wrap (0: from 0, the wrap
 * 2^width events away): the start_headroom, or in a context with
 * self-read pages 2^31, so that between folds the raw value stays in the
 * upper half of the counter, where perf's page can sign-extend it
 * (kernel/overflow.c, pmuctx_write_perf_page()); its wrap is re-armed
 * there.  One NMI every 2^31 events a mapped counter, as perf programs.
 */
static __always_inline u64 perfmon_counting_left(const struct pmuctx_context *ctx,
						 unsigned int headroom)
{
	return headroom ?: (ctx->nr_mapped ? PERFMON_MAX_PERIOD : 0);
}

/*
 * Program @c's start value and, for a general counter, its event select
 * (enabled: IA32_PERF_GLOBAL_CTRL gates it).  Returns its fixed-control
 * field (0 for a general counter).
 */
static u64 perfmon_program_one(const struct pmuctx_context *ctx,
			       struct pmuctx_counter *c)
{
	int slot = c->hw_idx;

	c->hw_prev = perfmon_start_value(slot, unlikely(c->attr.sample_period) ?
					 c->period_left :
					 perfmon_counting_left(ctx,
							       READ_ONCE(perfmon_start_headroom)));
	perfmon_write_counter(slot, c->hw_prev);
	if (perfmon_is_fixed(slot))
		return perfmon_fixed_field(c, slot - PERFMON_FIXED_SLOT);
	pmuctx_wrmsrq(MSR_ARCH_PERFMON_EVENTSEL0 + slot,
		      c->hw_config | ARCH_PERFMON_EVENTSEL_ENABLE);
	return 0;
}

/*
 * @c's register @left events (at most PERFMON_MAX_PERIOD) from its
 * overflow: a sampling counter's next period, or a counting counter that
 * wrapped and starts before its wrap (perfmon_counting_left(): with a
 * start_headroom, the lane's tests cross a wrap every @left events, each
 * folded by the NMI's irq_work; in a mapped context every 2^31; else it
 * runs on from 0).  Kernel-mode events between the fold's read and this
 * write are not counted.
 */
static void perfmon_arm(struct pmuctx_counter *c, u64 left)
{
	c->hw_prev = perfmon_start_value(c->hw_idx, min_t(u64, left, PERFMON_MAX_PERIOD));
	perfmon_write_counter(c->hw_idx, c->hw_prev);
}

/*
 * A sampling counter's periods that elapsed in @delta more events: account
 * them and re-arm, as the arm64 backend does.  @regs: where the overflow
 * NMI found the task, or NULL, when a sample records where the task was in
 * user space.
 */
static noinline void perfmon_fold_periods(struct pmuctx_counter *c,
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
		perfmon_arm(c, max(c->period_left, arm_floor));
		return;
	}
	if (!regs && current->mm)
		regs = task_pt_regs(current);

	n = pmuctx_periods_ended(c, delta);
	if (!n)
		return;
	/* Armed further ahead when throttled: @period_left stays exact. */
	perfmon_arm(c, max(c->period_left, arm_floor));
	pmuctx_counter_overflowed(c, regs, n);
}

/*
 * Bring every counter of @ctx up to date: deltas modulo the counter width
 * (48 bits on version 2), so a wrap between two folds costs nothing as
 * long as a fold comes before a second wrap (2^48 events: 78 hours at
 * 1 GHz; a sampling counter is folded at each of its overflows).
 *
 * The counters run on while they are read, so every register is read
 * first, back to back, and only then accounted: a group's counts are
 * taken a few instructions apart, not a whole accounting apart, and no
 * shared memory lies between two reads.  KCSAN is off for those reads: it
 * stalls at the accesses it watches (tens of thousands of instructions),
 * which would count on some members of a group and not on others; the
 * reads touch only registers and the stack.  The slot loops walk a copy of
 * the mask in a register (find_next_bit() would cost a call a slot, and
 * read the mask from memory).
 */
static __always_inline void perfmon_fold_slots(struct pmuctx_context *ctx,
					       struct pt_regs *regs,
					       u64 arm_floor,
					       struct pmuctx_context *next,
					       bool handoff)
{
	unsigned int headroom = READ_ONCE(perfmon_start_headroom);
	unsigned long used = ctx->used_mask, left;
	/* Written before it is read, slot by slot: not zeroed at each call. */
	u64 raws[PERFMON_FIXED_SLOT + PERFMON_MAX_FIXED] __uninitialized;
	struct pmuctx_counter *c;
	u64 raw, delta;
	bool wrapped;
	int slot;

	kcsan_disable_current();
	for (left = used; left; left &= left - 1) {
		slot = __ffs(left);
		raws[slot] = perfmon_read_counter(slot);
	}
	kcsan_enable_current();
	for (left = used; left; left &= left - 1) {
		slot = __ffs(left);
		c = ctx->slots[slot];
		if (WARN_ON_ONCE(!c))
			continue;
		raw = raws[slot];
		delta = (raw - c->hw_prev) & perfmon_mask(slot);
		wrapped = raw < c->hw_prev;
		c->hw_count += delta;
		c->hw_prev = raw;
		/* A handoff's contexts count only (pmuctx_ctx_swap_key()). */
		if (!handoff && unlikely(c->attr.sample_period))
			perfmon_fold_periods(c, regs, arm_floor, delta);
		else if (unlikely(wrapped && (headroom || ctx->nr_mapped)))
			perfmon_arm(c, max_t(u64, perfmon_counting_left(ctx, headroom),
					     arm_floor));
		/* A handoff: next's instance counts on from this reading. */
		if (handoff)
			next->slots[slot]->hw_prev = c->hw_prev;
	}
}

static void perfmon_fold(struct pmuctx_context *ctx)
{
	perfmon_fold_slots(ctx, NULL, 0, NULL, false);
}

void pmuctx_native_handoff_fold(struct pmuctx_context *ctx,
				struct pmuctx_context *next)
{
	perfmon_fold_slots(ctx, NULL, 0, next, true);
}

/*
 * Self-reads (RDPMC at CPL 3) need CR4.PCE, which lets the task read every
 * counter of this CPU: it is set only while a context with a self-read
 * page is loaded for its task, and every counter that context did not
 * program then reads 0, so no task ever reads another's counts.  The
 * kernel's own switch_mm() clears CR4.PCE for an address space that perf
 * gave no RDPMC right (pmuctx never gives one): an unload clears it here
 * before that, and a swap that leaves a mapped context loaded sets it
 * again at the next task's sched_in (perfmon_user_reads_again()).
 */
static void perfmon_open_user_reads(struct perfmon_cpu *pc, unsigned long used)
{
	unsigned int i;

	for (i = 0; i < perfmon_desc.nr_general; i++)
		if (!test_bit(i, &used))
			perfmon_write_counter(i, 0);
	for (i = 0; i < perfmon_desc.nr_fixed; i++)
		if (!test_bit(PERFMON_FIXED_SLOT + i, &used))
			perfmon_write_counter(PERFMON_FIXED_SLOT + i, 0);
	pc->user_reads = true;
	pmuctx_cr4_pce(true);
}

static void perfmon_close_user_reads(struct perfmon_cpu *pc)
{
	if (!pc->user_reads)
		return;
	pc->user_reads = false;
	pmuctx_cr4_pce(false);
}

static void perfmon_user_reads_again(struct pmuctx_context *ctx)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);

	if (pc->user_reads && !pmuctx_cr4_pce_on())
		pmuctx_cr4_pce(true);
}

/* RDPMC's ECX for a slot: general n is n, fixed n is bit 30 | n. */
static u32 perfmon_user_index(int slot)
{
	return perfmon_is_fixed(slot) ? BIT(30) | (slot - PERFMON_FIXED_SLOT) :
					slot;
}

static u32 perfmon_counter_width(int slot)
{
	return perfmon_is_fixed(slot) ? perfmon_desc.fixed_width :
					perfmon_desc.general_width;
}

/*
 * Every counter of the context programmed, then all of them started by
 * one IA32_PERF_GLOBAL_CTRL write.
 */
static void perfmon_load(struct pmuctx_context *ctx)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);
	unsigned long used = ctx->used_mask, left;
	u64 fixed = 0;
	int slot;

	/* Only a loaded context starts counters; its unload stopped them. */
	if (PMUCTX_CHECK_INVARIANTS)
		WARN_ON_ONCE(pc->ctrl);
	for (left = used; left; left &= left - 1) {
		slot = __ffs(left);
		if (WARN_ON_ONCE(!ctx->slots[slot]))
			continue;
		fixed |= perfmon_program_one(ctx, ctx->slots[slot]);
	}
	perfmon_set_fixed_ctrl(pc, fixed);
	if (ctx->nr_mapped && PMUCTX_CR4_PCE_REACHABLE)
		perfmon_open_user_reads(pc, used);
	perfmon_set_ctrl(pc, perfmon_global_bits(used));
}

/*
 * One IA32_PERF_GLOBAL_CTRL write stops every counter, then the fold.
 * Their overflow bits are acknowledged: the next context starts clean.
 * The counts stay in the registers: RDPMC closes first, and the next
 * load that opens it zeroes what it does not program.
 */
static void perfmon_unload(struct pmuctx_context *ctx)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);

	perfmon_close_user_reads(pc);
	perfmon_set_ctrl(pc, 0);
	perfmon_fold_slots(ctx, NULL, 0, NULL, false);
	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL,
		      perfmon_global_bits(ctx->used_mask));
}

static void perfmon_program(struct pmuctx_context *ctx,
			    struct pmuctx_counter *c, bool on)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);
	int slot = c->hw_idx;
	u64 bit = perfmon_global_bits(BIT(slot)), field;

	if (on) {
		if (ctx->slots[slot] != c)
			return;
		field = perfmon_program_one(ctx, c);
		if (perfmon_is_fixed(slot)) {
			field |= pc->fixed_ctrl &
				 ~(GENMASK_ULL(FIXED_CTRL_BITS - 1, 0) <<
				   ((slot - PERFMON_FIXED_SLOT) * FIXED_CTRL_BITS));
			perfmon_set_fixed_ctrl(pc, field);
		}
		perfmon_set_ctrl(pc, pc->ctrl | bit);
	} else if (!test_bit(slot, &ctx->used_mask)) {
		perfmon_set_ctrl(pc, pc->ctrl & ~bit);
		if (perfmon_is_fixed(slot))
			perfmon_set_fixed_ctrl(pc, pc->fixed_ctrl &
				~(GENMASK_ULL(FIXED_CTRL_BITS - 1, 0) <<
				  ((slot - PERFMON_FIXED_SLOT) * FIXED_CTRL_BITS)));
		else
			pmuctx_wrmsrq(MSR_ARCH_PERFMON_EVENTSEL0 + slot, 0);
		pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL, bit);
		/* A released slot keeps no count behind. */
		perfmon_write_counter(slot, 0);
	}
}

/* IA32_PERF_GLOBAL_CTRL gates every counter: a rotation counts nothing. */
static void perfmon_pause(void)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);

	pc->paused = true;
	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, 0);
}

static void perfmon_resume(void)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);

	pc->paused = false;
	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, pc->ctrl);
}

static u64 perfmon_read_raw(int slot)
{
	return perfmon_read_counter(slot);
}

/* Re-arm distance while this CPU takes a PMI storm, else 0. */
static u64 perfmon_throttle_floor(struct perfmon_cpu *pc)
{
	unsigned long now = jiffies;

	if (pc->jiffy != now) {
		pc->jiffy = now;
		pc->pmis = 0;
	}
	return ++pc->pmis > READ_ONCE(perfmon_max_pmis_per_tick) ?
	       PERFMON_THROTTLE_EVENTS : 0;
}

/*
 * The overflow demux, as the arm64 interrupt handler does it, in the hard
 * irq_work the NMI queued on this CPU: only the context loaded here can own
 * the overflowed counters, and its slot table says which counter each is.
 * The NMI's registers are used when this is still the context, the load
 * and the task the NMI interrupted; otherwise (it was unloaded or swapped
 * meanwhile, and the unload folded it) samples take the task's user
 * registers.
 */
static void perfmon_pmi_work(struct irq_work *work)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);
	struct pmuctx_context *ctx = __this_cpu_read(pmuctx_loaded_ctx);
	struct pmuctx_context *rctx;
	struct task_struct *rtask;
	struct pt_regs regs, *r = NULL;
	unsigned int seq, nr_kwalk;
	u64 rseq;

	if (!ctx)
		return;
	do {
		seq = READ_ONCE(pc->regs_seq);
		barrier();
		regs = pc->regs;
		rctx = pc->regs_ctx;
		rtask = pc->regs_task;
		rseq = pc->regs_ctx_seq;
		nr_kwalk = min_t(unsigned int, pc->nr_kwalk, PMUCTX_KERNEL_WALK);
		memcpy(pc->kwalk_held, pc->kwalk, nr_kwalk * sizeof(pc->kwalk[0]));
		barrier();
	} while ((seq & 1) || seq != READ_ONCE(pc->regs_seq));

	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id()) {
		if (rctx == ctx && rseq == ctx->seq && rtask == current)
			r = &regs;
		if (r && nr_kwalk)
			pmuctx_lend_kernel_walk(r, pc->kwalk_held, nr_kwalk);
		perfmon_fold_slots(ctx, r, perfmon_throttle_floor(pc), NULL,
				   false);
		if (r && nr_kwalk)
			pmuctx_lend_kernel_walk(NULL, NULL, 0);
		pmuctx_ctx_update_user_pages(ctx);
	}
	pmuctx_ctx_unlock(ctx);
}

/*
 * The overflow NMI.  What it may touch: this CPU's PMU MSRs, the local
 * APIC's LVTPC, this CPU's struct perfmon_cpu hand-off fields, and
 * irq_work_queue().  No lock at all: ctx->lock is taken with IRQs off by
 * the scheduler hooks, reads and rotations on this CPU, and the swap
 * claim likewise, so an NMI that spun on either could wait for its own
 * CPU for ever; the sample ring's lock and ktime_get_ns() are not NMI-safe
 * either.  So the NMI acknowledges the overflow, notes where it
 * interrupted the task and hands the fold to a hard irq_work on this CPU,
 * which runs as soon as IRQs are on again (right after the NMI, or at the
 * end of the interrupted IRQs-off section) and takes ctx->lock like the
 * arm64 interrupt handler.  The counts stay exact meanwhile: a counter
 * that wrapped goes on from 0, and the fold takes deltas modulo 2^48.
 * No printk.
 */
static int perfmon_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);
	struct pmuctx_context *ctx;
	u64 status;

	status = pmuctx_rdmsrq(MSR_CORE_PERF_GLOBAL_STATUS);
	status &= perfmon_all_global;
	if (!status)
		return NMI_DONE;
	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL, status);

	ctx = __this_cpu_read(pmuctx_loaded_ctx);
	WRITE_ONCE(pc->regs_seq, pc->regs_seq + 1);
	barrier();
	pc->regs = *regs;
	pc->regs_ctx = ctx;
	pc->regs_task = current;
	/* Written on this CPU only, which this NMI interrupted. */
	pc->regs_ctx_seq = ctx ? data_race(READ_ONCE(ctx->seq)) : 0;
	pc->nr_kwalk = 0;
	/* Written under ctx->lock, which this NMI may have interrupted. */
	if (ctx && !user_mode(regs) && data_race(READ_ONCE(ctx->nr_kernel_chains)))
		pc->nr_kwalk = stack_trace_save(pc->kwalk, PMUCTX_KERNEL_WALK, 0);
	barrier();
	WRITE_ONCE(pc->regs_seq, pc->regs_seq + 1);

	irq_work_queue(&pc->work);
	/* The PMI masked LVTPC; the next overflow may come. */
	pmuctx_apic_write(APIC_LVTPC, APIC_DM_NMI);
	return NMI_HANDLED;
}

/* Every counter off, unprogrammed, zero and acknowledged. */
static void perfmon_cpu_reset(void)
{
	struct perfmon_cpu *pc = this_cpu_ptr(&perfmon_cpu);
	unsigned long flags;
	unsigned int i;

	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_CTRL, 0);
	pmuctx_wrmsrq(MSR_ARCH_PERFMON_FIXED_CTR_CTRL, 0);
	for (i = 0; i < perfmon_desc.nr_general; i++) {
		pmuctx_wrmsrq(MSR_ARCH_PERFMON_EVENTSEL0 + i, 0);
		perfmon_write_counter(i, 0);
	}
	for (i = 0; i < perfmon_desc.nr_fixed; i++)
		perfmon_write_counter(PERFMON_FIXED_SLOT + i, 0);
	pmuctx_wrmsrq(MSR_CORE_PERF_GLOBAL_OVF_CTRL, perfmon_all_global);
	pc->ctrl = 0;
	pc->fixed_ctrl = 0;
	pc->paused = false;
	local_irq_save(flags);
	perfmon_close_user_reads(pc);
	local_irq_restore(flags);
}

/* This CPU's PMU becomes ours: clean, its overflows our NMIs. */
static void perfmon_cpu_take(void *unused)
{
	perfmon_cpu_reset();
	this_cpu_write(perfmon_cpu.lvtpc_before, pmuctx_apic_read(APIC_LVTPC));
	pmuctx_apic_write(APIC_LVTPC, APIC_DM_NMI);
}

/* Given back: every counter off, LVTPC as it was found (perf's). */
static void perfmon_cpu_give_back(void *unused)
{
	perfmon_cpu_reset();
	pmuctx_apic_write(APIC_LVTPC, this_cpu_read(perfmon_cpu.lvtpc_before));
}

/* Under the hotplug lock: @perfmon_owned cannot change meanwhile. */
static int perfmon_cpu_online(unsigned int cpu)
{
	if (perfmon_owned)
		perfmon_cpu_take(NULL);
	return 0;
}

static int perfmon_cpu_offline(unsigned int cpu)
{
	if (perfmon_owned)
		perfmon_cpu_give_back(NULL);
	return 0;
}

static void perfmon_release(unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		release_evntsel_nmi(MSR_ARCH_PERFMON_EVENTSEL0 + i);
		release_perfctr_nmi(MSR_ARCH_PERFMON_PERFCTR0 + i);
	}
}

/* Every general counter, or none (perf reserves them all, or none). */
static bool perfmon_reserve(void)
{
	unsigned int i;

	for (i = 0; i < perfmon_desc.nr_general; i++) {
		if (!reserve_perfctr_nmi(MSR_ARCH_PERFMON_PERFCTR0 + i))
			goto fail;
		if (!reserve_evntsel_nmi(MSR_ARCH_PERFMON_EVENTSEL0 + i)) {
			release_perfctr_nmi(MSR_ARCH_PERFMON_PERFCTR0 + i);
			goto fail;
		}
	}
	return true;
fail:
	perfmon_release(i);
	return false;
}

/*
 * Take the PMU for a new counter: at once while pmuctx owns it (a counter
 * lives, or the give-back is pending), else reserve the counters, register
 * the NMI handler and set up every online CPU.  Process context.
 */
static int perfmon_take(void)
{
	int err = 0;

	rcu_read_lock();
	if (likely(READ_ONCE(perfmon_held))) {
		this_cpu_inc(perfmon_users);
		rcu_read_unlock();
		return 0;
	}
	rcu_read_unlock();
	mutex_lock(&perfmon_own_mutex);
	if (!perfmon_owned) {
		if (!perfmon_reserve()) {
			pr_warn_ratelimited("hardware counters are held by perf or the NMI watchdog: end perf's hardware events (and boot with nmi_watchdog=0), then open again\n");
			err = -EBUSY;
			goto out;
		}
		/* First in the list: perf's handler, if any, has nothing of ours. */
		err = register_nmi_handler(NMI_LOCAL, perfmon_nmi,
					   NMI_FLAG_FIRST, "pmuctx");
		if (err) {
			perfmon_release(perfmon_desc.nr_general);
			goto out;
		}
		cpus_read_lock();
		on_each_cpu(perfmon_cpu_take, NULL, 1);
		perfmon_owned = true;
		cpus_read_unlock();
	}
	this_cpu_inc(perfmon_users);
	WRITE_ONCE(perfmon_held, true);
out:
	mutex_unlock(&perfmon_own_mutex);
	return err;
}

/* Mutex held, no counter left: every CPU clean, then the counters go. */
static void perfmon_disown(void)
{
	int cpu;

	WRITE_ONCE(perfmon_held, false);
	cpus_read_lock();
	on_each_cpu(perfmon_cpu_give_back, NULL, 1);
	perfmon_owned = false;
	cpus_read_unlock();
	/* Waits for NMIs in flight; then no irq_work is queued anew. */
	unregister_nmi_handler(NMI_LOCAL, "pmuctx");
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu(perfmon_cpu, cpu).work);
	perfmon_release(perfmon_desc.nr_general);
}

/*
 * A second after the latest put: clear @perfmon_held, wait until every
 * take that saw it set has counted itself, and give the PMU back if the
 * sum is 0.  A put racing with the sum can make that a little sooner
 * than a second after it; never while a counter lives.
 */
static void perfmon_give_back_work(struct work_struct *work)
{
	unsigned long latest = 0, due;
	long users = 0;
	int cpu;

	mutex_lock(&perfmon_own_mutex);
	if (!perfmon_owned)
		goto out;
	for_each_possible_cpu(cpu) {
		unsigned long t = READ_ONCE(per_cpu(perfmon_last_put, cpu));

		if (time_after(t, latest))
			latest = t;
	}
	due = latest + PERFMON_GIVE_BACK_DELAY;
	if (time_before(jiffies, due)) {
		queue_delayed_work(system_wq, &perfmon_give_back, due - jiffies);
		goto out;
	}
	WRITE_ONCE(perfmon_held, false);
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		users += READ_ONCE(per_cpu(perfmon_users, cpu));
	if (users > 0)
		WRITE_ONCE(perfmon_held, true);
	else
		perfmon_disown();
out:
	mutex_unlock(&perfmon_own_mutex);
}

/* Module unload: every counter is gone. */
static void perfmon_remove(void)
{
	cancel_delayed_work_sync(&perfmon_give_back);
	mutex_lock(&perfmon_own_mutex);
	if (perfmon_owned)
		perfmon_disown();
	mutex_unlock(&perfmon_own_mutex);
	if (perfmon_hp_state != CPUHP_INVALID) {
		cpuhp_remove_state_nocalls(perfmon_hp_state);
		perfmon_hp_state = CPUHP_INVALID;
	}
}

static struct pmuctx_hw_desc perfmon_desc = {
	.name = "intel-perfmon",
	.remove = perfmon_remove,
	.event_init = perfmon_event_init,
	.event_destroy = perfmon_event_destroy,
	.slot_pick = perfmon_slot_pick,
	.load = perfmon_load,
	.unload = perfmon_unload,
	.fold = perfmon_fold,
	.program = perfmon_program,
	.counter_width = perfmon_counter_width,
	.user_index = perfmon_user_index,
	.user_reads_again = perfmon_user_reads_again,
	.no_user_reads = !PMUCTX_CR4_PCE_REACHABLE,
	.read_counter = perfmon_read_raw,
	.handoff_fold = pmuctx_native_handoff_fold,
	.pause = perfmon_pause,
	.resume = perfmon_resume,
};

/*
 * What the PMU offers, from CPUID 0AH, whoever owns the counters: -ENODEV
 * without architectural perfmon v2 or with widths pmuctx cannot use.
 */
int pmuctx_perfmon_describe(struct pmuctx_hw_desc *d)
{
	union cpuid10_eax eax;
	union cpuid10_ebx ebx;
	union cpuid10_edx edx;
	unsigned int unused, i, nevents;

	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL ||
	    boot_cpu_data.cpuid_level < 0xa)
		return -ENODEV;
	cpuid(0xa, &eax.full, &ebx.full, &unused, &edx.full);
	if (eax.split.version_id < 2 || eax.split.num_counters < 1)
		return -ENODEV;

	d->pmu_version = eax.split.version_id;
	d->nr_general = min_t(u32, eax.split.num_counters, PERFMON_MAX_GENERAL);
	d->general_width = eax.split.bit_width;
	d->nr_fixed = min_t(u32, edx.split.num_counters_fixed, PERFMON_MAX_FIXED);
	d->fixed_width = d->nr_fixed ? edx.split.bit_width_fixed : 0;
	if (d->general_width < 32 || d->general_width > 64 ||
	    (d->nr_fixed && (d->fixed_width < 32 || d->fixed_width > 64))) {
		pr_warn("CPUID 0AH reports counter widths %u/%u: software counters only\n",
			d->general_width, d->fixed_width);
		return -ENODEV;
	}
	/* EAX[31:24] bits of EBX are valid: a set one is a missing event. */
	nevents = min_t(unsigned int, eax.split.mask_length,
			ARRAY_SIZE(perfmon_arch_events));
	d->hw_events[0] = 0;
	for (i = 0; i < nevents; i++)
		if (!(ebx.full & BIT(i)))
			d->hw_events[0] |= BIT_ULL(i);
	return 0;
}

int pmuctx_perfmon_probe(const struct pmuctx_hw_desc **desc)
{
	unsigned long slots;
	u64 caps;
	int cpu, err;

	err = pmuctx_perfmon_describe(&perfmon_desc);
	if (err)
		return err;
	perfmon_width_mask = GENMASK_ULL(perfmon_desc.general_width - 1, 0);
	perfmon_fixed_width_mask = perfmon_desc.nr_fixed ?
		GENMASK_ULL(perfmon_desc.fixed_width - 1, 0) : 0;
	slots = GENMASK(perfmon_desc.nr_general - 1, 0);
	if (perfmon_desc.nr_fixed)
		slots |= GENMASK(PERFMON_FIXED_SLOT + perfmon_desc.nr_fixed - 1,
				 PERFMON_FIXED_SLOT);
	perfmon_all_global = perfmon_global_bits(slots);
	if (boot_cpu_has(X86_FEATURE_PDCM) &&
	    !pmuctx_rdmsrq_safe(MSR_IA32_PERF_CAPABILITIES, &caps))
		perfmon_full_width = caps & PERF_CAP_FULL_WIDTH;

	for_each_possible_cpu(cpu)
		per_cpu(perfmon_cpu, cpu).work =
			IRQ_WORK_INIT_HARD(perfmon_pmi_work);
	/* The callbacks do nothing until pmuctx takes the PMU. */
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"pmuctx/perfmon:online",
					perfmon_cpu_online, perfmon_cpu_offline);
	if (err < 0) {
		pr_warn("no CPU hotplug state (%d): software counters only\n",
			err);
		return -ENODEV;
	}
	perfmon_hp_state = err;
	perfmon_desc.features = PMUCTX_FEAT_HARDWARE | PMUCTX_FEAT_OVERFLOW;

	pr_info("Intel perfmon v%u: %u general counters (%u bits), %u fixed (%u bits)%s; taken at the first hardware counter\n",
		perfmon_desc.pmu_version, perfmon_desc.nr_general,
		perfmon_desc.general_width, perfmon_desc.nr_fixed,
		perfmon_desc.fixed_width,
		perfmon_full_width ? ", full-width writes" : "");
	*desc = &perfmon_desc;
	return 0;
}
