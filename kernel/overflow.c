// SPDX-License-Identifier: GPL-2.0
/*
 * Overflow handling shared by the hardware backends: counting overflows,
 * recording samples, notifying the owner; and bringing a context's
 * hardware counts up to date from another CPU.
 *
 * The backend's interrupt handler finds the counter through the context
 * loaded on its CPU (ctx->slots[idx]) and calls pmuctx_counter_overflowed()
 * with that context's lock held and IRQs off.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/xarray.h>
#include "pmuctx.h"
#include "compat/mm.h"

/* irq_work: the interrupt may not take the waitqueue lock under ctx->lock. */
void pmuctx_counter_wake(struct irq_work *work)
{
	struct pmuctx_family *fam = container_of(work, struct pmuctx_family,
						 wake_work);

	wake_up_all(&fam->waitq);
	if (fam->samples)
		kill_fasync(&fam->fasync, SIGIO, POLL_IN);
}

/*
 * The task's user registers, for its call chain and user parts: none for
 * a kernel thread, and none while @user_state is false (an exec is
 * replacing the image: pmuctx_user_state_visible()), whatever mode @regs
 * are in.
 */
static struct pt_regs *pmuctx_user_regs(struct pt_regs *regs, bool user_state)
{
	if (!user_state)
		return NULL;
	if (regs && user_mode(regs))
		return regs;
	if (current->mm && !(current->flags & (PF_KTHREAD | PF_EXITING)))
		return task_pt_regs(current);
	return NULL;
}

/*
 * A sampling counter's ring is kernel memory its opener pins for as long
 * as the counter lives, whether it ever samples or not, up to ~2 MiB a
 * counter: bounded per user, as perf bounds its rings.  The rings count in
 * the opener's user_struct locked_vm (where io_uring's buffers count
 * too, and perf's rings did before perf_mlock), which may reach
 * max_ring_kb and the opener's RLIMIT_MEMLOCK beyond it; CAP_IPC_LOCK
 * lifts the bound.  Past it the
 * open is EPERM, perf's answer when its rings exceed the same bound: it
 * is policy, not a shortage (ENOMEM stays "the machine or the memory
 * cgroup is full").  The memory itself is charged to the opener's memory
 * cgroup (GFP_KERNEL_ACCOUNT).
 *
 * Not allocated as it fills: samples are recorded in the PMU interrupt
 * (an NMI on x86) under a raw spinlock, where nothing may be allocated,
 * and a bound must refuse at open, so the charge would be the whole ring
 * anyway.
 */
static unsigned int pmuctx_max_ring_kb = 16384;
module_param_named(max_ring_kb, pmuctx_max_ring_kb, uint, 0644);
MODULE_PARM_DESC(max_ring_kb,
		 "sample ring memory (KiB) one user may pin before its RLIMIT_MEMLOCK (CAP_IPC_LOCK: no bound)");

/*
 * The user's count of pinned pages: user_struct's locked_vm, which
 * sched/user.h has on every kernel built with networking or io_uring (all
 * distributions'); a kernel with neither has no such field, and keeps
 * the count here, per uid, until the module goes.
 */
#if defined(CONFIG_NET) || defined(CONFIG_IO_URING)
static atomic_long_t *pmuctx_user_locked(struct user_struct *user)
{
	return &user->locked_vm;
}

void pmuctx_rings_exit(void)
{
}
#else
static DEFINE_XARRAY(pmuctx_locked_by_uid);

static atomic_long_t *pmuctx_user_locked(struct user_struct *user)
{
	unsigned long uid = __kuid_val(user->uid);
	atomic_long_t *n = xa_load(&pmuctx_locked_by_uid, uid), *old;

	if (n)
		return n;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	old = xa_cmpxchg(&pmuctx_locked_by_uid, uid, NULL, n, GFP_KERNEL);
	if (!old)
		return n;
	kfree(n);
	return xa_is_err(old) ? NULL : old;
}

/* At module exit: every ring, so every charge, is gone. */
void pmuctx_rings_exit(void)
{
	atomic_long_t *n;
	unsigned long uid;

	xa_for_each(&pmuctx_locked_by_uid, uid, n)
		kfree(n);
	xa_destroy(&pmuctx_locked_by_uid);
}
#endif

/* What an allocation of @size takes: kmalloc's bucket or whole pages. */
static unsigned long pmuctx_alloc_pages(size_t size)
{
	return size ? PAGE_ALIGN(kmalloc_size_roundup(size)) >> PAGE_SHIFT : 0;
}

static int pmuctx_ring_charge(struct pmuctx_sample_ring *ring,
			      unsigned long pages)
{
	struct user_struct *user = current_user();
	atomic_long_t *locked = pmuctx_user_locked(user);
	unsigned long limit;
	bool exempt = false;
	long cur;

	if (!locked)
		return -ENOMEM;
	limit = (READ_ONCE(pmuctx_max_ring_kb) >> (PAGE_SHIFT - 10)) +
		(rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT);
	cur = atomic_long_read(locked);
	do {
		/* capable() only past the bound: it marks the task privileged. */
		if ((unsigned long)cur + pages > limit && !exempt) {
			if (!capable(CAP_IPC_LOCK))
				return -EPERM;
			exempt = true;
		}
	} while (!atomic_long_try_cmpxchg(locked, &cur, cur + pages));
	ring->charged_user = get_uid(user);
	ring->charged_to = locked;
	ring->charged = pages;
	return 0;
}

struct pmuctx_sample_ring *pmuctx_sample_ring_alloc(const struct pmuctx_attr *attr)
{
	struct pmuctx_sample_ring *ring;
	u32 user_bytes = pmuctx_sample_user_bytes(attr);
	size_t chain_size = 0, user_size = 0;
	int err;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	raw_spin_lock_init(&ring->lock);
	ring->cap = PMUCTX_SAMPLE_RING;
	if (attr->flags & PMUCTX_ATTR_CALLCHAIN)
		chain_size = PMUCTX_SAMPLE_RING * sizeof(*ring->chains);
	if (user_bytes) {
		ring->cap = min_t(u32, PMUCTX_SAMPLE_RING,
				  rounddown_pow_of_two(PMUCTX_SAMPLE_USER_RING_BYTES /
						       user_bytes));
		ring->regs_mask = attr->sample_regs_user;
		ring->stack_room = attr->sample_stack_user;
		ring->user_bytes = user_bytes;
		user_size = (size_t)ring->cap * user_bytes;
	}
	/* Before the big allocations: a refused open never takes them. */
	err = pmuctx_ring_charge(ring, pmuctx_alloc_pages(sizeof(*ring)) +
				       pmuctx_alloc_pages(chain_size) +
				       pmuctx_alloc_pages(user_size));
	if (err)
		goto fail;
	err = -ENOMEM;
	if (chain_size) {
		ring->chains = kvzalloc(chain_size, GFP_KERNEL_ACCOUNT);
		if (!ring->chains)
			goto fail;
	}
	if (user_size) {
		ring->user = kvzalloc(user_size, GFP_KERNEL_ACCOUNT);
		if (!ring->user)
			goto fail;
	}
	return ring;
fail:
	pmuctx_sample_ring_free(ring);
	return ERR_PTR(err);
}

void pmuctx_sample_ring_free(struct pmuctx_sample_ring *ring)
{
	if (!ring)
		return;
	kvfree(ring->user);
	kvfree(ring->chains);
	if (ring->charged_user) {
		atomic_long_sub(ring->charged, ring->charged_to);
		free_uid(ring->charged_user);
	}
	kfree(ring);
}

static void pmuctx_record_sample(struct pmuctx_counter *orig,
				 struct pt_regs *regs, u64 period,
				 bool user_state)
{
	struct pmuctx_sample_ring *ring = orig->fam->samples;
	struct pt_regs *uregs;
	struct pmuctx_sample *s;
	unsigned int idx;

	if (!ring)
		return;
	uregs = pmuctx_user_regs(regs, user_state);
	/*
	 * Where the sample was taken, as far as the counter may know: a
	 * counter that excludes kernel mode (all an unprivileged user gets)
	 * never learns a kernel address.  An overflow that lands in the
	 * kernel (the interrupt is late, or the count ran out right at a
	 * syscall) is attributed to where the task entered the kernel.  NULL:
	 * no user context to report.
	 */
	if (!regs || user_mode(regs) ||
	    (orig->attr.flags & PMUCTX_ATTR_EXCLUDE_KERNEL))
		regs = uregs;
	raw_spin_lock(&ring->lock);
	if (ring->head - ring->tail >= ring->cap) {
		ring->lost++;
	} else {
		idx = ring->head % PMUCTX_SAMPLE_RING;
		s = &ring->buf[idx];
		s->ip = regs ? instruction_pointer(regs) : 0;
		s->pid = task_tgid_nr(current);
		s->tid = task_pid_nr(current);
		s->time = ktime_get_ns();
		s->id = orig->id;
		s->period = period;
		s->cpu = smp_processor_id();
		s->nr_callchain = 0;
		if (ring->chains) {
			u64 *chain = ring->chains[idx];
			unsigned int k = 0;

			/* Kernel regs only where the counter counts the kernel. */
			if (regs && !user_mode(regs))
				k = pmuctx_kernel_callchain(regs, chain,
							    PMUCTX_KERNEL_CALLCHAIN_MAX);
			s->nr_callchain = k +
				pmuctx_user_callchain(uregs, chain + k,
						      PMUCTX_CALLCHAIN_MAX - k);
		}
		if (ring->user)
			pmuctx_sample_user_take(uregs,
						ring->regs_mask, ring->stack_room,
						pmuctx_ring_user(ring, ring->head));
		ring->head++;
	}
	raw_spin_unlock(&ring->lock);
}

/*
 * PMUCTX_ATTR_FREQ: the most samples a second one counter may ask for
 * (perf's default perf_event_max_sample_rate); EINVAL above it.
 */
unsigned int pmuctx_max_sample_freq = 100000;
module_param_named(max_sample_freq, pmuctx_max_sample_freq, uint, 0644);
MODULE_PARM_DESC(max_sample_freq,
		 "most samples a second a frequency-sampling counter may ask for");

/* The longest period a frequency may choose: every backend's. */
#define PMUCTX_FREQ_MAX_PERIOD	BIT_ULL(31)

/*
 * A frequency-sampling counter starts as if it counted an event a
 * nanosecond (instructions or cycles at 1 GHz), or at its parent's
 * period, from now: the first period that ends adapts it (to a low rate
 * if it was disabled meanwhile, corrected at the next).
 */
void pmuctx_freq_start(struct pmuctx_counter *c, u64 period)
{
	c->freq_period = clamp_t(u64, period, 1, PMUCTX_FREQ_MAX_PERIOD);
	c->freq_stamp = ktime_get_ns();
	c->period_left = c->freq_period;
	c->freq_left = c->period_left;
}

/*
 * pmuctx_periods_ended() for PMUCTX_ATTR_FREQ, the first of @delta's
 * periods ended: count them at the period they had, then choose the next
 * period from the rate since the last choice, the events that would take
 * 1/freq s at that rate.  The rate is of every event counted since then,
 * not of the periods that ended: a fold comes at any point of a period on
 * the perf backends (a wake every 2^20 events, the watch, a switch), and
 * whole periods over the time between folds misjudged it by up to a
 * period a fold.  At most a factor of 8 a step, so that a task that slept
 * (its rate looks low) comes back within a sample or two; no smoothing
 * beyond that, so that a start far off (the first period guesses an event
 * a nanosecond) costs two periods, not a dozen.  The events already into
 * the next period count towards it, and when they are a new, shorter
 * period or more, those periods end here too: every event is in one
 * sample's period or in the one running.  ctx->lock held; not in NMI (the
 * clock is not NMI-safe).
 */
u64 pmuctx_freq_periods_ended(struct pmuctx_counter *c, u64 delta)
{
	u64 period = c->freq_period, n, m, into_next, now, dt, target, seen;

	seen = c->freq_left - c->period_left + delta;
	n = pmuctx_count_periods(c, delta, period);
	into_next = period - c->period_left;
	c->freq_events = n * period;
	now = ktime_get_ns();
	dt = now - c->freq_stamp;
	if ((s64)dt > 0) {
		target = mul_u64_u64_div_u64(seen,
					     NSEC_PER_SEC / c->attr.sample_period,
					     dt);
		period = clamp_t(u64, target, period / 8, period * 8);
		period = clamp_t(u64, period, 1, PMUCTX_FREQ_MAX_PERIOD);
		c->freq_period = period;
	}
	c->freq_stamp = now;
	if (into_next >= period) {
		m = div64_u64(into_next, period);
		n += m;
		c->freq_events += m * period;
		into_next -= m * period;
	}
	c->period_left = period - into_next;
	c->freq_left = c->period_left;
	return n;
}

/*
 * @n periods of @c elapsed (more than one when the interrupt came late).
 * PMU interrupt, ctx->lock held.  A disabled counter's hardware keeps
 * running while its context is loaded; its overflows are not reported.
 */
void pmuctx_counter_overflowed(struct pmuctx_counter *c, struct pt_regs *regs,
			       u64 n)
{
	struct pmuctx_counter *orig = c->parent ?: c;

	if (!pmuctx_counter_group_enabled(c) || !n)
		return;
	atomic64_add(n, &orig->fam->overflows);
	pmuctx_record_sample(orig, regs,
			     unlikely(c->attr.flags & PMUCTX_ATTR_FREQ) ?
			     c->freq_events : n * c->attr.sample_period,
			     pmuctx_user_state_visible(c->ctx));
	irq_work_queue(&orig->fam->wake_work);
}

static void pmuctx_sync_ipi(void *info)
{
	struct pmuctx_context *ctx = info;

	pmuctx_ctx_lock(ctx);
	if (ctx->loaded_cpu == smp_processor_id()) {
		pmuctx_hw->fold(ctx);
		pmuctx_ctx_update_user_pages(ctx);
	}
	pmuctx_ctx_unlock(ctx);
}

/*
 * pmuctx_ctx_sync_hw() for a context with hardware counters: fold them on
 * the CPU the context is loaded on.  A context that moves meanwhile was
 * folded by its unload; a swap keeps it on the same CPU.  Not when that
 * is this CPU: then the caller holds it (only the holder's CPU loads a
 * context), and every caller folds a context loaded on its own CPU under
 * the lock or claim that follows (__pmuctx_ctx_clocks_now()), wherever
 * the caller runs by then.  A local call would cost a read() of a PMU
 * counter a tenth of its instructions.
 */
void pmuctx_ctx_sync_hw_counters(struct pmuctx_context *ctx)
{
	int cpu;

	if (!pmuctx_hw)
		return;
	cpu = READ_ONCE(ctx->loaded_cpu);
	if (cpu >= 0 && cpu != raw_smp_processor_id())
		smp_call_function_single(cpu, pmuctx_sync_ipi, ctx, 1);
}

static void pmuctx_retire_hw_here(struct pmuctx_context *ctx, void *counter)
{
	struct pmuctx_counter *c = counter;

	if (ctx->loaded_cpu == smp_processor_id() && c->hw_idx >= 0)
		pmuctx_hw->program(ctx, c, false);
	/*
	 * The last one: the PMU is left as an unload leaves it (counters
	 * off, EL0 access closed), since the unload of a context without
	 * hardware counters does not touch it.
	 */
	if (!--ctx->nr_hw && ctx->loaded_cpu == smp_processor_id())
		pmuctx_hw->unload(ctx);
}

/*
 * A hardware counter left @ctx (its slot is free already): stop it where
 * the context is loaded and lower @nr_hw there, in one step.  Process
 * context, ctx->mutex held.  @nr_hw stays up until the counter is off (an
 * unload meanwhile must still stop the PMU, or the counter would run on
 * under whichever task that CPU loads next), and drops where the PMU can
 * be reset with it.
 */
void pmuctx_hw_retire_counter(struct pmuctx_context *ctx,
			      struct pmuctx_counter *c)
{
	pmuctx_ctx_run_where_loaded(ctx, pmuctx_retire_hw_here, c);
}

/*
 * Rewrite the self-read pages of a context's mapped counters after any
 * change of what they describe: load, unload, fold, enable, disable,
 * reset.  ctx->lock held.  The reader is the holder itself: the index is
 * valid only while the context is loaded on the CPU it runs on, and a
 * migration or reload in the middle of its read changes @lock.
 */
/*
 * A page shows its task's own count: the instance's value plus the page's
 * adjustment (page_private), which swaps set so that the count goes on
 * where the task left it, whichever instance it holds.  The instance's
 * value as of its last fold:
 */
static u64 pmuctx_page_instance_value(const struct pmuctx_counter *c)
{
	return pmuctx_counter_counting(c) ? c->base + c->hw_count - c->snap :
					     c->base;
}

/* What a self-read names the counter in slot @idx by. */
static u32 pmuctx_user_index(int idx)
{
	return pmuctx_hw->user_index ? pmuctx_hw->user_index(idx) : idx;
}

/*
 * An instance's self-read pages: two, allocated together.  The first is
 * pmuctx's own layout (mmap offset 0, struct pmuctx_mmap_page), the
 * second perf's (offset PAGE_SIZE, struct perf_event_mmap_page), which
 * libpmuctx-perf.so maps for perf_event_open's callers (PAPI, libperf).
 * Split, so each is mapped and freed as a page of its own; the first's
 * page_private is the count's adjustment (below), the second's says that
 * it was ever mapped: until then it is not written, which keeps the swap
 * of contexts mapped in pmuctx's layout alone at its old cost.  The perf
 * page's constant fields are set here; it has no ring (data_size 0) and
 * no user-mode time (cap_user_time 0; see pmuctx_write_perf_page()).
 */
struct page *pmuctx_user_pages_alloc(void)
{
	struct perf_event_mmap_page *pp;
	struct page *page;

	page = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO, 1);
	if (!page)
		return NULL;
	split_page(page, 1);
	set_page_private(page, 0);
	pp = page_address(pmuctx_nth_page(page, 1));
	pp->cap_bit0_is_deprecated = 1;
	pp->cap_user_rdpmc = !pmuctx_hw->no_user_reads;
	pp->size = offsetof(struct perf_event_mmap_page, __reserved);
	return page;
}

void pmuctx_user_pages_free(struct page *page)
{
	set_page_private(page, 0);
	set_page_private(pmuctx_nth_page(page, 1), 0);
	__free_page(pmuctx_nth_page(page, 1));
	__free_page(page);
}

/* The perf page of @page's pair is mapped: written from now on. */
bool pmuctx_user_pages_map_perf(struct page *page)
{
	struct page *perf = pmuctx_nth_page(page, 1);

	if (page_private(perf))
		return false;
	set_page_private(perf, 1);
	return true;
}

/*
 * perf's layout of the same facts: count = offset + sext(raw, pmc_width)
 * while @index is not 0, else use read().  pmuctx's page takes the delta
 * modulo the width from @prev, which is exact wherever the counter stands;
 * perf's sign-extends the raw value, which is exact only while the raw
 * value stays in the upper half of the counter between folds (it may wrap
 * to the lower half: the sign extension absorbs one wrap, which the
 * overflow interrupt folds).  Counters start there in mapped contexts (the
 * x86 backend's counting counters 2^31 before their wrap, and re-armed so
 * at each wrap; every sampling counter; arm64's 64-bit cycle counter needs
 * no half), so @index is given only when @prev is in the upper half, or
 * the counter is 64 bits wide.  Else 0, and the reader falls back to
 * read(), which is exact.  Likewise for a counter that has not run all
 * the time it was enabled (multiplexed): perf's reader would scale it
 * with stale times, as pmuctx gives no user-mode clock; time_enabled and
 * time_running are left 0 (equal: nothing to scale) and read() has them.
 */
static noinline void pmuctx_write_perf_page(struct perf_event_mmap_page *pp,
					    const struct pmuctx_counter *c,
					    u64 value, u32 width, u32 index)
{
	u64 prev = c->hw_prev;
	bool upper = width == 64 || (prev & BIT_ULL(width - 1));
	bool whole = c->time_base - c->time_snap == c->run_base - c->run_snap;

	if (!upper || !whole)
		index = 0;
	WRITE_ONCE(pp->lock, pp->lock + 1);
	/* As for pmuctx's page: odd lock first, fields, then even lock. */
	smp_wmb();
	pp->index = index;
	pp->pmc_width = width;
	pp->offset = index ? value - (width == 64 ? prev : sign_extend64(prev, width - 1)) :
			     value;
	/* The fields before the even lock that says they are whole. */
	smp_wmb();
	WRITE_ONCE(pp->lock, pp->lock + 1);
}

/*
 * One instance's pages, each under its seqcount: the value at @c's last
 * fold is @value, @width the bits of its PMU counter.
 */
static void pmuctx_write_user_page(struct page *page,
				   const struct pmuctx_counter *c, u64 value,
				   u32 width, bool loaded)
{
	struct pmuctx_mmap_page *p = page_address(page);
	u32 index = loaded && !pmuctx_hw->no_user_reads &&
		    pmuctx_counter_group_enabled(c) ?
		    pmuctx_user_index(c->hw_idx) + 1 : 0;

	WRITE_ONCE(p->lock, p->lock + 1);
	/* Odd lock before the fields: pairs with the reader's acquire. */
	smp_wmb();
	p->version = 1;
	p->width = width;
	p->prev = c->hw_prev;
	p->offset = value;
	p->index = index;
	/* The fields before the even lock that says they are whole. */
	smp_wmb();
	WRITE_ONCE(p->lock, p->lock + 1);
	if (page_private(pmuctx_nth_page(page, 1)))
		pmuctx_write_perf_page(page_address(pmuctx_nth_page(page, 1)), c, value,
				       width, index);
}

/* ctx->lock held, or @ctx claimed: pmuctx_ctx_update_user_pages(). */
void pmuctx_ctx_write_user_pages(struct pmuctx_context *ctx)
{
	struct pmuctx_counter *c;
	bool loaded;

	loaded = ctx->loaded_cpu == raw_smp_processor_id() && !ctx->dead;
	list_for_each_entry(c, &ctx->counters, ctx_entry)
		if (c->user_page)
			pmuctx_write_user_page(c->user_page, c,
					       pmuctx_page_instance_value(c) +
					       page_private(c->user_page),
					       pmuctx_hw->counter_width(c->hw_idx),
					       loaded);
}

/*
 * An equivalent swap of two mapped contexts (kernel/sched.c, both
 * claimed, IRQs off): @ctx, loaded here, goes to next, @nctx to prev.
 * Each page belongs to the task that mapped it, so corresponding
 * instances exchange their pages (the counters correspond one to one, in
 * order), and each page's adjustment is set so its task's count goes on
 * from where it was: prev's from the count it has now (the one counter's
 * live value is read, the PMU is not reprogrammed), next's from the count
 * it left with (its instance has not counted since).  Next's pages then
 * describe @ctx as loaded; prev's say "not on the PMU" (index 0) until
 * its context is loaded again, for a thread sharing its address space.
 * For mapped contexts only, and O(position of the last mapped counter),
 * not O(counters): a tool that maps its leader pays for one.
 */
void pmuctx_swap_user_pages(struct pmuctx_context *ctx,
			    struct pmuctx_context *nctx)
{
	/* Pages still to move: the walk ends at the last mapped counter. */
	int pages = ctx->nr_mapped + nctx->nr_mapped;
	struct pmuctx_counter *c, *n;

	n = list_first_entry(&nctx->counters, struct pmuctx_counter, ctx_entry);
	list_for_each_entry(c, &ctx->counters, ctx_entry) {
		struct page *prev_page = c->user_page, *next_page = n->user_page;
		u64 now_c, now_n, live, adj;
		u32 width;

		if (PMUCTX_CHECK_INVARIANTS &&
		    WARN_ON_ONCE(&n->ctx_entry == &nctx->counters))
			return;
		if (pages <= 0) {
			/* Debug kernels walk on: nr_mapped must count every page. */
			if (!PMUCTX_CHECK_INVARIANTS)
				break;
			WARN_ON_ONCE(prev_page || next_page);
		}
		if (prev_page || next_page) {
			pages -= !!prev_page + !!next_page;
			now_c = pmuctx_page_instance_value(c);
			now_n = pmuctx_page_instance_value(n);
			/* Corresponding counters share their PMU slot. */
			width = pmuctx_hw->counter_width(c->hw_idx);
			live = 0;
			if (pmuctx_counter_counting(c) && c->hw_idx >= 0)
				live = (pmuctx_hw->read_counter(c->hw_idx) - c->hw_prev) &
				       (width == 64 ? U64_MAX : BIT_ULL(width) - 1);
			if (prev_page) {
				/* prev's count now, kept while it is off the PMU */
				adj = now_c + live + page_private(prev_page) - now_n;
				set_page_private(prev_page, adj);
				pmuctx_write_user_page(prev_page, n, now_n + adj, width,
						       false);
			}
			if (next_page) {
				/* next's count as it left it, going on here */
				adj = now_n + page_private(next_page) - now_c - live;
				set_page_private(next_page, adj);
				pmuctx_write_user_page(next_page, c, now_c + adj, width,
						       true);
			}
			c->user_page = next_page;
			n->user_page = prev_page;
		}
		n = list_next_entry(n, ctx_entry);
	}
	swap(ctx->nr_mapped, nctx->nr_mapped);
}
