/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of pmuctx.  Documentation/design.rst explains the
 * objects and every locking rule; the rules are repeated next to the data.
 *
 * Lock order (outermost first):
 *   ctx->mutex  ->  a family shard's lock  ->  ctx->lock  ->  other ctx->lock
 *   (fam->enable_mutex outside a shard's lock; one shard's lock at a time)
 *   (two ctx->locks only in a swap, taken in address order)
 *   A link index bucket's lock (link.c) nests inside nothing and takes nothing.
 */
#ifndef _PMUCTX_INTERNAL_H
#define _PMUCTX_INTERNAL_H

#include <linux/bitmap.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/jump_label.h>
#include <linux/math64.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/pmuctx.h>

/*
 * What a hardware backend tells the core about its PMU.  Filled once at
 * probe, read-only afterwards, so readers need no lock.
 */
struct pmuctx_context;
struct pmuctx_counter;
struct pmuctx_range_plan;
struct pmuctx_range_watch;

struct pmuctx_hw_desc {
	const char *name;
	u32 nr_general;
	u32 nr_fixed;
	u32 general_width;
	u32 fixed_width;
	u32 pmu_version;
	u64 hw_events[2];
	u64 features;
	void (*remove)(void);

	/*
	 * Counting in contexts.  event_init runs at open (process context)
	 * and fills c->hw_config; slot_pick returns the PMU slot @c would
	 * take beside the slots in @used (or -ENOSPC), and changes nothing.
	 * The rest run on the CPU whose PMU holds (or gets) the context, with
	 * IRQs off and ctx->lock held: load programs every counter of the
	 * context, unload stops them and folds their counts, fold only folds,
	 * program starts (@on) or stops one counter of a loaded context.
	 */
	int (*event_init)(struct pmuctx_counter *c);
	/*
	 * Optional: the last put of an original that event_init accepted
	 * (all its clones are gone by then, as they hold it).  Any context.
	 */
	void (*event_destroy)(struct pmuctx_counter *c);
	int (*slot_pick)(unsigned long used, const struct pmuctx_counter *c);
	void (*load)(struct pmuctx_context *ctx);
	void (*unload)(struct pmuctx_context *ctx);
	void (*fold)(struct pmuctx_context *ctx);
	/*
	 * Optional: fold @ctx as fold does, and set each counter of @next
	 * (equivalent, counting only) to go on from the same reading, for a
	 * handoff that leaves the PMU running (kernel/sched.c).
	 */
	void (*handoff_fold)(struct pmuctx_context *ctx,
			     struct pmuctx_context *next);
	void (*program)(struct pmuctx_context *ctx, struct pmuctx_counter *c,
			bool on);
	u32 (*counter_width)(int idx);
	/*
	 * Optional, for self-reads.  user_index: what a self-read page's
	 * index (less one) names for the counter in slot @idx, when that is
	 * not @idx itself (x86: RDPMC's ECX, fixed counters at bit 30).
	 * user_reads_again: the task switch itself may close user-space
	 * reads that a load opened (x86: switch_mm() rewrites CR4.PCE); the
	 * sched_in of a task that an equivalent swap gave a mapped context,
	 * loaded here already, opens them again.  IRQs off, on that CPU.
	 */
	u32 (*user_index)(int idx);
	void (*user_reads_again)(struct pmuctx_context *ctx);
	/*
	 * User space cannot read this PMU's counters directly: no self-read
	 * page gets an index (readers use read()) and perf's page says
	 * cap_user_rdpmc 0.  x86 where the kernel exports CR4's accessors to
	 * KVM only (compat/cr4.h).
	 */
	bool no_user_reads;
	/* The raw value of one counter of this CPU's PMU (IRQs off). */
	u64 (*read_counter)(int idx);
	/* Stop and restart the whole PMU of this CPU (IRQs off). */
	void (*pause)(void);
	void (*resume)(void);
	/*
	 * Backends whose counting belongs to tasks, not to contexts (the
	 * perf-events fallback): bind gives instance @c its counting of
	 * @task, the original at open (process context, the target's
	 * exec_update_lock held) and a clone in its new task (@task is
	 * current) before that first returns to user space; release lets
	 * go of a bound instance's at its last put (any context).  A
	 * context holding such counters never swaps: the counting would
	 * stay with the task the context left.  Their time running is the
	 * context's time less what the backend missed (@hw_missed), as
	 * perf multiplexes them.
	 */
	int (*bind)(struct pmuctx_counter *c, struct task_struct *task);
	void (*release)(struct pmuctx_counter *c);
};

#define PMUCTX_MAX_HW_SLOTS	32

/* Overflow samples of an original counter and its clones. */
#define PMUCTX_SAMPLE_RING	256

struct pmuctx_sample_ring {
	raw_spinlock_t lock;	/* taken in the PMU interrupt */
	u32 head, tail;		/* head - tail samples unread */
	u64 lost;
	/*
	 * The samples it holds: PMUCTX_SAMPLE_RING, fewer (a power of two,
	 * so that head % cap stays in step with head % PMUCTX_SAMPLE_RING
	 * as head wraps) when each carries a user stack.
	 */
	u32 cap;
	struct pmuctx_sample buf[PMUCTX_SAMPLE_RING];
	/* PMUCTX_ATTR_CALLCHAIN: buf[i]'s chain, under @lock like buf */
	u64 (*chains)[PMUCTX_CALLCHAIN_MAX];
	/*
	 * sample_regs_user/sample_stack_user: the user part of the sample
	 * numbered head, @user_bytes at user + (head % cap) * user_bytes
	 * (pmuctx_ring_user(): struct pmuctx_sample_user, registers,
	 * stack), under @lock.
	 */
	u64 regs_mask;
	u32 stack_room;
	u32 user_bytes;
	u8 *user;
	/*
	 * The opener's user, charged @charged pages of its locked_vm at
	 * open (pmuctx_ring_charge()) and referenced until the free gives
	 * them back: the ring may outlive the opener's credentials.
	 */
	struct user_struct *charged_user;
	atomic_long_t *charged_to;	/* its locked_vm, or the module's count */
	unsigned long charged;
};

/* The most memory a ring's user stacks take: @cap is cut to fit. */
#define PMUCTX_SAMPLE_USER_RING_BYTES	(2U << 20)

/* The user part of the sample numbered @seq (a head or tail of @ring). */
static inline struct pmuctx_sample_user *
pmuctx_ring_user(const struct pmuctx_sample_ring *ring, u32 seq)
{
	return (void *)(ring->user + (seq & (ring->cap - 1)) * ring->user_bytes);
}

/* The bytes of @u the sample filled: its registers and the stack copied. */
static inline u32 pmuctx_sample_user_len(const struct pmuctx_sample_user *u)
{
	return sizeof(*u) + u->nr_regs * sizeof(u64) + u->stack_dyn;
}

/* Process context of the opener: the ring, or ERR_PTR(-EPERM/-ENOMEM). */
struct pmuctx_sample_ring *pmuctx_sample_ring_alloc(const struct pmuctx_attr *attr);
/* Any context but NMI. */
void pmuctx_sample_ring_free(struct pmuctx_sample_ring *ring);
/* Module exit, after the last ring. */
void pmuctx_rings_exit(void);
/* callchain.c: @regs' user call chain into @ips; the entries written. */
unsigned int pmuctx_user_callchain(struct pt_regs *regs, u64 *ips,
				   unsigned int max);
/* callchain.c: @regs are a 64-bit task's, whose frames the walks know. */
bool pmuctx_user_regs_native(struct pt_regs *regs);
/* sample_user.c: the attr's user registers and stack; their bytes a sample. */
int pmuctx_sample_user_check(const struct pmuctx_attr *attr);
u32 pmuctx_sample_user_bytes(const struct pmuctx_attr *attr);
/* sample_user.c: @uregs' registers in @mask, @stack_room bytes of stack. */
void pmuctx_sample_user_take(struct pt_regs *uregs, u64 mask, u32 stack_room,
			     struct pmuctx_sample_user *out);
/* callchain.c: kernel-mode @regs' kernel call chain into @ips. */
unsigned int pmuctx_kernel_callchain(struct pt_regs *regs, u64 *ips,
				     unsigned int max);
/* A walk of the stack @regs interrupted, taken where they were live. */
void pmuctx_lend_kernel_walk(const struct pt_regs *regs,
			     const unsigned long *walk, unsigned int nr);
/* Entries of a stack walk: the handler's own frames, then the chain's. */
#define PMUCTX_KERNEL_WALK	(PMUCTX_KERNEL_CALLCHAIN_MAX + 24)

extern const struct pmuctx_hw_desc *pmuctx_hw;
/* The native backend's handoff_fold, called directly (no retpoline). */
void pmuctx_native_handoff_fold(struct pmuctx_context *ctx,
				struct pmuctx_context *next);
/* The backend's counting belongs to tasks (pmuctx_hw->bind): set at load. */
DECLARE_STATIC_KEY_FALSE(pmuctx_hw_task_bound);
/*
 * perf lends the backend its counters (the task-bound backend, the
 * shared one): a hardware counter's time running is the context's time
 * less the time perf kept its event off the PMU (@hw_missed).  Set at load.
 */
DECLARE_STATIC_KEY_FALSE(pmuctx_hw_lent);

/*
 * Context clocks: monotonic per-context quantities that advance while a task
 * holding the context runs.  Software counters and enabled/running times are
 * all "this clock, while enabled", so a context switch costs O(1) however
 * many counters there are, and an equivalent swap costs nothing per counter.
 */
enum pmuctx_clock {
	PMUCTX_CLK_TIME,	/* ns on CPU */
	PMUCTX_CLK_SWITCHES,	/* times switched out */
	PMUCTX_CLK_MIGRATIONS,	/* CPU changes */
	PMUCTX_CLK_MINFLT,
	PMUCTX_CLK_MAJFLT,
	PMUCTX_NR_CLOCKS,
};

struct pmuctx_link;

#ifndef __SIZEOF_INT128__
#error "pmuctx needs 128-bit integers for its slice statistics"
#endif

/*
 * Slices of a counter: the intervals in which it counted without a break
 * (Documentation/multiplexing.rst).  Their number and the sums of squares
 * and products of their counts c and lengths t are what a reader needs to
 * estimate the error of a multiplexed count; the sums of c and t are the
 * value and the time running.
 */
struct pmuctx_slices {
	u64 n;
	__uint128_t cc, ct, tt;
};

/* Preallocated child of a fork: its link, its context, its clones. */
struct pmuctx_fork_kit {
	struct pmuctx_link *link;	/* NULL while spare (context.c) */
	struct pmuctx_context *ctx;
	/*
	 * While spare: whose it was.  The uid, not a reference on its
	 * user_struct: that was a line every fork and exit of one user wrote.
	 */
	kuid_t owner;
	/*
	 * The memory cgroup current was in when the kit was made, which its
	 * memory is charged to (a reference, or NULL without memcg): a spare
	 * is reused only in the same one.
	 */
	struct mem_cgroup *memcg;
	unsigned int nr;
	struct pmuctx_counter *clones[];
};

struct pmuctx_context {
	/*
	 * Equivalence, precomputed, and the swap's lock.  The family root
	 * (family, or the generation of an original) while the context may
	 * change holders, else 0; two contexts are equivalent iff their keys
	 * are equal and non-zero.  A swap (sched_out, IRQs off, on the
	 * holder's CPU) owns both contexts while it has set
	 * PMUCTX_SWAP_CLAIMED in both keys with cmpxchg; it never waits.
	 * A reading (read() of a counter, IRQs off, any CPU) claims the
	 * same way, one context, instead of taking ctx->lock
	 * (pmuctx_ctx_claim()), and so do the unload at sched_out and the
	 * load at sched_in (IRQs off, the holder's CPU, pmuctx_hook_own()).
	 * pmuctx_ctx_lock*() waits a claim out and zeroes the key, so no
	 * claim starts while ctx->lock is held; pmuctx_ctx_unlock*()
	 * republishes it (release) from the context's state.  So every
	 * field a swap writes (@task, @link, @clock, @snap, the links' ctx
	 * and migrations_at_out) is stable under ctx->lock, and a claim owns
	 * the context as ctx->lock does.
	 */
	u64 swap_key;	/* first: claims and releases address it directly */

	refcount_t refs;	/* link->ctx, each counter->ctx, temporaries */

	/*
	 * Serializes structural changes (adding or removing counters, group
	 * changes) in process context.  Held across the whole change, with
	 * @lock taken inside for the moment the list is touched.
	 */
	struct mutex mutex;

	/*
	 * Raw because sched_out takes it under the runqueue lock with IRQs
	 * off; everyone else takes it with irqsave.  Protects every field
	 * below and the counters' state (see struct pmuctx_counter).  Always
	 * taken through pmuctx_ctx_lock*(), which also keeps swaps out: an
	 * equivalent swap takes no lock, it claims @swap_key instead.
	 */
	raw_spinlock_t lock;

	struct task_struct *task;	/* holder; NULL once it exited */
	struct pmuctx_link *link;	/* holder's link; swaps exchange it */
	u64 generation;		/* unique cookie, new on every change */
	u64 family;		/* cookie shared by equivalent clones, 0 = none */
	int pin_count;		/* >0: no swap (attach in progress) */
	/*
	 * CPU whose PMU holds it, -1 = none.  With @clocks_running, written
	 * only on the holder's CPU (its sched hooks, its exit and detach, and
	 * mmap by the holder), so sched_in on that CPU may read both without
	 * the lock.  Loaded implies running: only a load sets @loaded_cpu,
	 * after starting the clocks, and whoever stops them (sched_out, exit,
	 * detach, all on the holder's CPU) unloads it there.
	 */
	int loaded_cpu;
	bool clocks_running;	/* holder on CPU, @snap valid */
	bool dead;		/* holder exited: frozen */
	u64 clock[PMUCTX_NR_CLOCKS];
	/*
	 * The holder's time and fault counts when the clocks last started (or
	 * when a swap handed the running context to a new holder: faults are
	 * re-based then, time runs on, since the CPU goes straight from one
	 * holder to the next).
	 */
	u64 snap[PMUCTX_NR_CLOCKS];
	/*
	 * Kernels that check invariants (PMUCTX_CHECK_INVARIANTS): the task
	 * whose fault counts @snap holds, compared, never dereferenced.
	 * While the context has a fault counter, every fold of faults
	 * subtracts @snap from that task's counts (testing.rst, "Thread
	 * families that counted more faults than the process").
	 */
	const struct task_struct *snap_faults_of;
	/*
	 * The largest time any reader was told.  local_clock() of two CPUs
	 * may disagree (a reader elsewhere than the holder, a holder that
	 * migrated): no read may go below an earlier one.
	 */
	u64 time_seen;
	struct list_head counters;	/* every counter, in creation order */
	unsigned int nr_counters;
	unsigned int nr_inherit;	/* counters followed by fork */
	unsigned int nr_inherit_thread;	/* counters followed by threads only */
	/*
	 * Counters of page faults, of migrations: a swap re-bases those
	 * clocks only when something counts them.
	 */
	unsigned int nr_fault_counters;
	/* Sampling counters (a period of their own is on the PMU). */
	unsigned int nr_sampling;
	/*
	 * PMUCTX_ATTR_CALLCHAIN counters that count the kernel: the x86
	 * overflow NMI walks the kernel stack for them (read there without
	 * a lock: a stale value only walks once too often or too few).
	 */
	unsigned int nr_kernel_chains;
	unsigned int nr_migration_counters;
	/* PMUCTX_REBASE_*: what a swap re-bases, one test when nothing. */
	u8 rebase;
	/*
	 * The overflow demux: PMU slot -> counter, for the counters on the
	 * PMU now.  Clones copy their parent's slots, so equivalent contexts
	 * program the PMU the same way and a swap can leave it running.
	 */
	struct pmuctx_counter *slots[PMUCTX_MAX_HW_SLOTS];
	unsigned long used_mask;
	unsigned int nr_hw;	/* hardware counters, on the PMU or not */
	/*
	 * Multiplexing (kernel/mux.c), all under ctx->lock.  @mux_rotate:
	 * some unit (a group, or a counter of its own) is off the PMU, so
	 * while this context is loaded its CPU's rotation timer runs.  The
	 * state belongs to the context, not to the CPU or the task, so an
	 * equivalent swap hands it on with the loaded context and touches
	 * neither the PMU nor the timer.  @mux_dirty: the units on the PMU
	 * must be chosen again before (or while) it is loaded (a counter was
	 * added that did not fit, a fork's clone).  @mux_fresh: that choice
	 * starts at a random place instead of @mux_pos (a clone: its start
	 * must not be its parent's).  @mux_pos: where in the list of units
	 * taking turns the choice starts, a fraction of it (2^-32); a
	 * rotation moves it on by @mux_step, @mux_stride (0.9 to 1 in 2^-32,
	 * drawn for each context) of the units the last choice put on.
	 * @mux_spread_placed, @mux_spread_units: the counts for which that
	 * stride's step was last checked to spread every unit's turns
	 * (mux_spread.h; units 0: not checked).
	 * @mux_rnd: the context's random numbers, seeded when it is made (a
	 * clone's from its parent's, under the parent's lock).
	 */
	bool mux_rotate;
	bool mux_dirty;
	bool mux_fresh;
	u32 mux_pos, mux_stride, mux_step;
	unsigned int mux_spread_placed, mux_spread_units;
	struct rnd_state mux_rnd;
	u64 rotations;
	/*
	 * INHERIT_STAT counters keep per-task values, which a swap would have
	 * to exchange counter by counter: such contexts never swap.  They
	 * switch by handoff (sched.c) instead of unload and load: of software
	 * counters only, with a key of their own (PMUCTX_SWAP_SOLO); of
	 * hardware counters that count on the PMU, with their family's key
	 * and PMUCTX_REBASE_STAYS, between equivalent contexts.
	 */
	unsigned int nr_inherit_stat;
	/*
	 * Range counters: their watchpoints belong to tasks, so a swap hands
	 * them back to their tasks (PMUCTX_REBASE_RANGES, kernel/range.c).
	 */
	unsigned int nr_range;
	/*
	 * Everything the next fork of the holder needs, allocated in process
	 * context beforehand: the fork hook runs atomic and never allocates.
	 * Covers every inheriting counter (NULL when there is none, or right
	 * after a fork took it until the holder refills it on its way back to
	 * user space).  A context missing its kit does not swap, so the task
	 * that refills it is the one that holds it.
	 */
	struct pmuctx_fork_kit *fork_kit;
	/*
	 * Instances with a self-read page (ctx->lock).  A page belongs to the
	 * task that mapped it and is attached to that task's instance of the
	 * counter: a swap between two mapped contexts hands each page to the
	 * corresponding instance of the context its task receives, so pages
	 * always sit on their task's instances (overflow.c).  Mapped contexts
	 * swap only with mapped ones (PMUCTX_SWAP_MAPPED): EL0 access and the
	 * zeroed unused registers come with the load of a mapped context.
	 */
	unsigned int nr_mapped;
	/*
	 * Bumped on every load and unload: equal values around some work
	 * prove the context stayed loaded on one CPU.  Not by a swap, which
	 * leaves the context loaded where it was.
	 */
	u64 seq;
	u64 loads;		/* full loads */
	u64 handoffs;		/* loads by a handoff (sched.c) */
	/*
	 * Switches out that unloaded the context.  The others handed it on,
	 * still loaded, to an equivalent task: pmuctx_ctx_swaps(), so the
	 * swap bumps one count (the switch clock), not two.
	 */
	u64 switch_unloads;

	/*
	 * Folds the clones after the holder exits (or exec'd out of reach).
	 * In the holder itself when it can: a task work, which runs before
	 * its exit completes (so the parent's wait() finds the counts folded,
	 * and no worker thread is woken per exit); a work on pmuctx_wq when
	 * another task retires the context.  @exit_link: the task work's
	 * reference, which keeps the module.
	 */
	union {
		struct work_struct exit_work;
		struct {
			struct callback_head exit_cb;
			struct pmuctx_link *exit_link;
		};
	};
	struct rcu_head rcu;
};

/*
 * Per-task hook, found through the task's preempt notifier list (by the
 * task itself, or for a task that is not running) or through the index
 * (everyone else, under RCU).
 */
struct pmuctx_link {
	struct preempt_notifier notifier;
	refcount_t refs;	/* alive-with-task, pending task work, users */
	struct task_struct *task;
	struct pmuctx_context __rcu *ctx;	/* changed under its ctx->lock */
	struct hlist_node index_node;	/* its index bucket's lock */
	struct callback_head register_work;	/* attach to another task */
	struct callback_head detach_work;	/* context became empty */
	bool detach_queued;	/* under its ctx->lock */
	/*
	 * Refills the fork kit of the task's context.  Queued by the task's
	 * own fork hook (for itself, and once for the child before it ever
	 * ran); runs in the task on its way to user space.
	 */
	struct callback_head kit_work;
	bool kit_queued;
	/* A fork gave this (new) task a clone of an original being closed. */
	bool sweep_closed;
	/* Written only by the task itself (hooks, task works). */
	bool registered;	/* notifier on the task's list */
	bool exited;		/* retired: no context, out of the index */
	/* The task's se.nr_migrations when last credited (ctx->lock). */
	u64 migrations_at_out;
	u64 exec_id;		/* the task's self_exec_id when attached */
	/*
	 * The mm of the image the task's samples may show (its user
	 * registers, stack, call chain): the task's mm when the link was
	 * made or registered, or at the end of an exec that kept the
	 * counters.  An identity, never dereferenced.  An exec installs its
	 * new mm (exec_mmap()) well before it decides, at the credential
	 * commit, whether the opener may see the new image, and before the
	 * image exists; from then until our exec hook the task's mm is not
	 * this one, and its samples carry nothing of user space
	 * (pmuctx_user_state_visible()).  Written by the task itself (fork
	 * hook: before the child runs; attach: under its exec_update_lock),
	 * read in its samples on its own CPU: READ_ONCE/WRITE_ONCE.
	 */
	const struct mm_struct *image_mm;
	struct rcu_head rcu;
};

/*
 * One shard of an inheriting family: the clones that forks on its CPUs
 * published (CPU n publishes on shard n & (pmuctx_nr_shards - 1): a shard
 * a CPU up to 16 CPUs), and the totals of those of them that exited.  A
 * clone stays on its shard (clone->shard) wherever its task runs later.
 * @lock: the publishing fork, the clone's exit fold, and every walk of the
 * family, which takes one shard's lock at a time, so that forks and exits
 * on other shards' CPUs never wait for a reader (issue 26: one family-wide
 * lock made every fork of a `make -j` wait for each read's whole walk).
 * A clone's move from its list to the totals is one step under @lock,
 * so a walk sees it exactly once.
 */
struct pmuctx_family_shard {
	spinlock_t lock;		/* see above */
	/*
	 * The original's lifetime as the clones filled on this shard's CPUs
	 * see it (issue 26: one atomic on the original was a line every fork
	 * and exit of a family wrote).  1 for the original's file, plus 1
	 * per such clone until it is freed; no lock.  The file's 1 is
	 * dropped a grace period after the release that stopped forks from
	 * copying (pmuctx_counter_retire_clones()), and whoever takes a shard
	 * to 0 takes it off @live_shards of the family.
	 */
	atomic_long_t clone_refs;
	struct list_head children;
	u64 child_value, child_enabled, child_running;
	u64 exited_clones, child_loads, child_swaps, child_rotations;
	u64 child_handoffs;
	struct pmuctx_slices child_slices;
} ____cacheline_aligned_in_smp;

/* At most this many shards a family, however many CPUs (counter.c). */
#define PMUCTX_MAX_SHARDS	16
extern unsigned int pmuctx_nr_shards;

/*
 * What only an original counter (the one a file holds) needs: its live
 * clones, the totals of its exited ones, and notification.  Clones, by far
 * the most numerous counters, go without (struct pmuctx_counter.fam).
 */
struct pmuctx_family {
	/*
	 * Inheriting originals only (NULL otherwise): the shards of the live
	 * clones and exited clones' totals, and which of them are in use.
	 */
	struct pmuctx_family_shard *shards;	/* pmuctx_nr_shards of them */
	unsigned long *shard_cpus;		/* which shards forks used */
	/*
	 * Bumped (fully ordered) after each new bit of @shard_cpus: a walk
	 * that must see every clone whose effects it saw (pmuctx_family_walk())
	 * walks again when it changed meanwhile.
	 */
	atomic_t shard_gen;
	/*
	 * Set when the original's file is released: forks clone it no more,
	 * and one that copied it already does not publish the clone (its
	 * child retires it) once this is set.  Read by the fork under its
	 * shard's lock.
	 */
	bool closing;
	/*
	 * Shards whose @clone_refs is not 0 yet: whoever takes it to 0 drops
	 * the reference on @original that the release took for all clones.
	 * The release's @kill_work, a grace period later (no fork copies the
	 * original any more), drops each shard's 1.
	 */
	atomic_t live_shards;
	struct rcu_work kill_work;
	struct pmuctx_counter *original;
	/*
	 * Family enable/disable, one at a time (@enable_mutex): the
	 * original's enable_seq is odd while one is walking the family,
	 * bumped again when done.  A fork that copied an instance's state
	 * while one ran gives its clone @family_on instead.
	 */
	struct mutex enable_mutex;
	bool family_on;
	atomic64_t inherit_failed;

	wait_queue_head_t waitq;	/* poll: exit, overflow */

	/* Overflow notification for the whole family. */
	atomic64_t overflows;
	struct pmuctx_sample_ring *samples;
	struct fasync_struct *fasync;
	/* Wake-ups leave the interrupt through an irq_work: no ctx->lock. */
	struct irq_work wake_work;

	/* PMUCTX_TYPE_RANGE: the plan every instance watches (immutable). */
	struct pmuctx_range_plan *range_plan;
};

/*
 * The next shard after @cpu (a shard index) of @fam that has ever had a
 * clone, or pmuctx_nr_shards: walks go `for (cpu = -1; (cpu =
 * pmuctx_next_shard(fam, cpu)) < pmuctx_nr_shards;)`.  A fork sets its
 * shard's bit, then a full barrier, before it takes the shard lock
 * (pmuctx_fork_publish()); the walks that
 * must not miss a fork running beside them (family enable, close) make
 * their own write, then a full barrier, before they read the bits, so one
 * of the two sees the other.
 */
static inline int pmuctx_next_shard(const struct pmuctx_family *fam, int cpu)
{
	/* Benign: a fork may set a bit meanwhile (see above). */
	return data_race(find_next_bit(fam->shard_cpus, pmuctx_nr_shards, cpu + 1));
}

/*
 * A walk visits the shards in CPU order, reading each bit as it goes, so a
 * fork on a lower CPU's new shard can be missed although the walk then
 * sees, on a higher shard, the exit of that fork's parent: it would count
 * the parent's exit and not the child (a poll would even report the
 * family finished).  Such a fork bumps @shard_gen after its bit; a walk
 * that reads it before (acquire) and after finds it changed and walks
 * again.  That happens at most once per CPU in a family's life.
 */
static inline int pmuctx_shard_gen(const struct pmuctx_family *fam)
{
	return atomic_read_acquire(&fam->shard_gen);
}

/*
 * The walk of the shards of @fam that forks used, for the readers that
 * must count every clone whose effects they count (reads, polls, stats,
 * tree reads): @visit(sh, arg) gathers one shard's totals and clones into
 * @arg under the shard's lock, and returns false when the answer is known
 * and the walk may end there.  A walk that ran to its end while a new
 * shard appeared (pmuctx_shard_gen()) walks again, after @restart(arg)
 * puts @arg back to what the caller had before the walk.  Nothing to do
 * for a family that never inherited (no shards).  Always inline, so that
 * each caller's two functions are inlined into its own loop.
 */
static __always_inline void
pmuctx_family_walk(struct pmuctx_family *fam, void (*restart)(void *arg),
		   bool (*visit)(struct pmuctx_family_shard *sh, void *arg),
		   void *arg)
{
	struct pmuctx_family_shard *sh;
	bool more;
	int cpu, gen;

	if (!fam->shards)
		return;
	do {
		gen = pmuctx_shard_gen(fam);
		restart(arg);
		more = true;
		for (cpu = -1; more &&
		     (cpu = pmuctx_next_shard(fam, cpu)) < pmuctx_nr_shards;) {
			sh = &fam->shards[cpu];
			spin_lock(&sh->lock);
			more = visit(sh, arg);
			spin_unlock(&sh->lock);
		}
	} while (more && gen != pmuctx_shard_gen(fam));
}

/*
 * A counter.  Its value is base + (enabled ? clock_now - snap : 0) on the
 * clocks of its kind, likewise for time enabled/running.
 */
struct pmuctx_counter {
	/*
	 * The file, temporary users, and once the file is released, one for
	 * all of the clones (counted per shard meanwhile: struct
	 * pmuctx_family_shard's @clone_refs).
	 */
	refcount_t refs;
	struct pmuctx_context *ctx;	/* holds a reference */
	struct pmuctx_attr attr;	/* immutable after open */
	u64 id;
	struct file *file;	/* originals only */

	/* ctx->mutex and ctx->lock to change, either to walk */
	struct list_head ctx_entry;
	struct pmuctx_counter *leader;	/* itself when a leader */
	struct list_head siblings;	/* leader: its members */
	struct list_head sibling_entry;

	/*
	 * ctx->lock.  The counter counts while @enabled and not @mux_off
	 * (its unit is off the PMU): value = base + clock - snap then, and
	 * the time running likewise on the time clock (run_base, run_snap;
	 * @ran_seen: the most of this slice a reading returned, on perf's
	 * events, pmuctx_counter_ran_seen()).  Time enabled runs while
	 * @enabled.  Each stretch of counting is a slice, added to @slices
	 * when it ends.
	 */
	bool enabled;
	bool mux_off;
	/* A flexible unit's leader, ctx->lock: scratch of one choice (mux.c). */
	bool mux_pick;
	/*
	 * The shared backend, ctx->lock: perf ran the counter's event in the
	 * slice in progress (perf_shared.c ends the slice when it finds the
	 * event off the PMU after that).  Cleared whenever a slice begins;
	 * what it says while the counter does not count is never read.
	 */
	bool hw_ran;
	/*
	 * The shared backend, ctx->lock (or the claim): perf had the
	 * instance's CPU's event on the PMU at its last snapshot or fold,
	 * the rest of that reading being @hw_prev's, @hw_missed_prev's and
	 * @hw_run_prev's; a counter of the same configuration later in the
	 * same walk takes it all from here (perf_shared_same()).
	 */
	bool hw_on;
	u64 base, snap;
	u64 time_base, time_snap;
	u64 run_base, run_snap, ran_seen;
	struct pmuctx_slices slices;

	/*
	 * Inheritance.  @parent: the original (flattened), held on @shard
	 * (pmuctx_family_hold()).
	 */
	struct pmuctx_counter *parent;
	struct list_head child_entry;	/* its shard's lock */
	unsigned int shard;	/* the shard of parent->fam that lists it */
	/*
	 * Family enable/disable: the original's @enable_seq when this clone
	 * was copied (struct pmuctx_family).
	 */
	u32 enable_seq;
	/* Originals only (NULL in clones): what the whole family shares. */
	struct pmuctx_family *fam;

	/*
	 * Hardware counters, under ctx->lock (the interrupt takes it too).
	 * @hw_idx: the PMU slot while on the PMU, else -1 (always for
	 * software counters).  A removed counter keeps its last slot, so the
	 * removal can stop it there unless another counter took it since.
	 */
	int hw_idx;
	/*
	 * The shared backend: whose share of the borrowed configurations
	 * an original holds (perf_shared.c), set at open, never changed.
	 */
	kuid_t hw_borrower;
	union {
		u64 hw_config;	/* backend's encoding: event and filters */
		/*
		 * PMUCTX_TYPE_RANGE: this instance's watchpoints, set once
		 * (under ctx->lock for a clone), read locklessly.
		 */
		struct pmuctx_range_watch *range;
	};
	u64 hw_count;		/* 64-bit virtual count, all time loaded */
	u64 hw_prev;		/* raw hardware value at the last fold */
	/*
	 * Task-bound backends (pmuctx_hw->bind): the instance's binding, set
	 * once (before publication, or under ctx->lock for a clone), and
	 * the time perf kept its event off the PMU while enabled (perf's
	 * multiplexing), folded with @hw_count: its time running is the
	 * context's time less that.
	 */
	void *hw_binding;
	u64 hw_missed;
	/*
	 * The shared backend (perf_shared.c), ctx->lock (or the claim): the
	 * instance's reading of its CPU's event's time not running, and of
	 * its time running, at its last snapshot or fold, as @hw_prev is of
	 * its count.
	 */
	u64 hw_missed_prev;
	u64 hw_run_prev;
	u64 period_left;	/* events to the next overflow sample */
	/*
	 * PMUCTX_ATTR_FREQ, under ctx->lock: the period now, and when it was
	 * chosen (or the counter started) with @period_left then
	 * (@freq_left), from which the rate for the next is measured
	 * (pmuctx_freq_periods_ended()).  @freq_events: what the last
	 * sample stood for, for its record.
	 */
	u64 freq_period, freq_stamp, freq_left, freq_events;

	/*
	 * Self-read pages of this instance, pmuctx's layout and perf's
	 * (overflow.c; ctx->lock to update): the first of the two.
	 */
	struct page *user_page;
	/*
	 * An original whose event_init succeeded: its last put calls the
	 * backend's event_destroy (set once at open, before publication).
	 */
	bool hw_taken;
};

/* Counted by the PMU backend (not software, not address ranges). */
static inline bool pmuctx_counter_is_hw(const struct pmuctx_counter *c)
{
	return c->attr.type == PMUCTX_TYPE_HARDWARE ||
	       c->attr.type == PMUCTX_TYPE_RAW;
}

/*
 * As perf's: a group member is on only while its leader is enabled too
 * (a group is read with its leader's times, uapi.rst).  @leader changes
 * under ctx->lock, which every caller holds or has claimed.
 */
static inline bool pmuctx_counter_group_enabled(const struct pmuctx_counter *c)
{
	return c->enabled && c->leader->enabled;
}

static inline bool pmuctx_counter_counting(const struct pmuctx_counter *c)
{
	return pmuctx_counter_group_enabled(c) && !c->mux_off;
}

/*
 * A sampling counter counted @delta more events (ctx->lock held): the
 * periods that ended in them, @period_left left of the next.  Every
 * backend's fold counts them so, from counts, never from interrupts.
 */
extern unsigned int pmuctx_max_sample_freq;
void pmuctx_freq_start(struct pmuctx_counter *c, u64 period);
u64 pmuctx_freq_periods_ended(struct pmuctx_counter *c, u64 delta);

/*
 * @delta reached the end of the current period: the periods of @period
 * that ended in it, and @period_left of the next.
 */
static __always_inline u64 pmuctx_count_periods(struct pmuctx_counter *c,
						u64 delta, u64 period)
{
	u64 n;

	delta -= c->period_left;
	n = 1 + div64_u64(delta, period);
	c->period_left = period - (delta - (n - 1) * period);
	return n;
}

static __always_inline u64 pmuctx_periods_ended(struct pmuctx_counter *c,
						u64 delta)
{
	if (delta < c->period_left) {
		c->period_left -= delta;
		return 0;
	}
	if (unlikely(c->attr.flags & PMUCTX_ATTR_FREQ))
		return pmuctx_freq_periods_ended(c, delta);
	return pmuctx_count_periods(c, delta, c->attr.sample_period);
}

/*
 * Kernels built to find bugs (lockdep, KCSAN): the hot path also checks
 * invariants it otherwise relies on, with a warning the VM tests catch.
 */
#define PMUCTX_CHECK_INVARIANTS \
	(IS_ENABLED(CONFIG_PROVE_LOCKING) || IS_ENABLED(CONFIG_KCSAN))

/* @ctx's fault snapshot is @t's from now (PMUCTX_CHECK_INVARIANTS). */
static __always_inline void pmuctx_faults_snapped(struct pmuctx_context *ctx,
						  const struct task_struct *t)
{
	if (PMUCTX_CHECK_INVARIANTS)
		ctx->snap_faults_of = t;
}

/* A fold of @t's faults into @ctx subtracts @t's own snapshot. */
static __always_inline void pmuctx_check_faults_fold(const struct pmuctx_context *ctx,
						     const struct task_struct *t)
{
	if (PMUCTX_CHECK_INVARIANTS && ctx->nr_fault_counters)
		WARN_ONCE(ctx->snap_faults_of != t,
			  "pmuctx: a context folds faults against another task's snapshot\n");
}

/* @t's faults since @ctx's snapshot of them, credited to @ctx. */
static __always_inline void pmuctx_fold_faults(struct pmuctx_context *ctx,
					       struct task_struct *t)
{
	pmuctx_check_faults_fold(ctx, t);
	ctx->clock[PMUCTX_CLK_MINFLT] += READ_ONCE(t->min_flt) -
					 ctx->snap[PMUCTX_CLK_MINFLT];
	ctx->clock[PMUCTX_CLK_MAJFLT] += READ_ONCE(t->maj_flt) -
					 ctx->snap[PMUCTX_CLK_MAJFLT];
}

/* @ctx counts @t's faults from now. */
static __always_inline void pmuctx_snap_faults(struct pmuctx_context *ctx,
					       struct task_struct *t)
{
	ctx->snap[PMUCTX_CLK_MINFLT] = READ_ONCE(t->min_flt);
	ctx->snap[PMUCTX_CLK_MAJFLT] = READ_ONCE(t->maj_flt);
	pmuctx_faults_snapped(ctx, t);
}

/*
 * @ctx counts @t's faults from now, crediting those since its snapshot
 * (maybe an earlier holder's: an offset its clock carried) from one
 * reading, so that a fault in between is neither lost nor counted twice.
 */
static __always_inline void pmuctx_rebase_faults(struct pmuctx_context *ctx,
						 struct task_struct *t)
{
	/* @t may fault on its CPU meanwhile: one reading each. */
	u64 minflt = data_race(READ_ONCE(t->min_flt));
	/* Likewise. */
	u64 majflt = data_race(READ_ONCE(t->maj_flt));

	ctx->clock[PMUCTX_CLK_MINFLT] += minflt - ctx->snap[PMUCTX_CLK_MINFLT];
	ctx->clock[PMUCTX_CLK_MAJFLT] += majflt - ctx->snap[PMUCTX_CLK_MAJFLT];
	ctx->snap[PMUCTX_CLK_MINFLT] = minflt;
	ctx->snap[PMUCTX_CLK_MAJFLT] = majflt;
	pmuctx_faults_snapped(ctx, t);
}

#define PMUCTX_REBASE_FAULTS		BIT(0)
#define PMUCTX_REBASE_MIGRATIONS	BIT(1)
#define PMUCTX_REBASE_RANGES		BIT(2)
#define PMUCTX_REBASE_PAGES		BIT(3)	/* nr_mapped */
/* nr_inherit_stat: equivalent contexts hand off instead of swapping. */
#define PMUCTX_REBASE_STAYS		BIT(4)

/* Set in a claimed swap_key (struct pmuctx_context); cookies never reach it. */
#define PMUCTX_SWAP_CLAIMED	BIT_ULL(63)
/* Set in the key of a context with self-read pages: see nr_mapped. */
#define PMUCTX_SWAP_MAPPED	BIT_ULL(62)
/*
 * Set in the key of a context whose swap re-bases something (@rebase), so
 * the swap tests the key it holds in a register.  Equivalent contexts
 * have the same counters, hence the same bit.
 */
#define PMUCTX_SWAP_REBASE	BIT_ULL(61)
/*
 * Set in the key of a context of software counters only, nothing mapped,
 * no address range: a switch between two such contexts that cannot swap
 * hands the CPU from one to the other in one step under their two claims
 * (pmuctx_handoff() in sched.c), not by an unload and a load.
 */
#define PMUCTX_SWAP_HANDOFF	BIT_ULL(60)
/*
 * The low bits of a key that only its own context holds: cookies are
 * multiples of 4 and families are cookie, cookie | 1 or cookie | 2, so
 * generation | 3 equals no other context's key.
 */
#define PMUCTX_SWAP_SOLO	3

/* ctx->lock held: how often the context was handed on by a swap. */
static inline u64 pmuctx_ctx_swaps(const struct pmuctx_context *ctx)
{
	return ctx->clock[PMUCTX_CLK_SWITCHES] - ctx->switch_unloads;
}

/* Clones a fork of the holder may need: every inheriting counter. */
static inline unsigned int pmuctx_kit_size(const struct pmuctx_context *ctx)
{
	return ctx->nr_inherit + ctx->nr_inherit_thread;
}

/*
 * A context may be claimed (struct pmuctx_context, swap_key): its holder
 * is alive, no attach is in progress, and its hardware counters are not
 * perf's events bound to the holder.  ctx->lock held.
 */
static inline bool pmuctx_ctx_claimable(const struct pmuctx_context *c)
{
	return !(c->pin_count | c->dead) &&
	       !(c->nr_hw && static_branch_unlikely(&pmuctx_hw_task_bound));
}

/*
 * A claimable context may also change holders: its values are not per
 * task (INHERIT_STAT), and a fork kit its holder must refill is there.
 * ctx->lock held.
 */
static inline bool pmuctx_ctx_swappable(const struct pmuctx_context *c)
{
	return !c->nr_inherit_stat && (c->fork_kit || !pmuctx_kit_size(c));
}

/*
 * Right after ctx->lock is taken: wait out a swap that claimed the context
 * (a few instructions on the holder's CPU, IRQs off there) and zero the
 * key, so none starts until pmuctx_ctx_publish_swap_key().  A key of 0 is
 * only ever written under ctx->lock, and a swap needs a non-zero one, so
 * reading 0 is enough.  The acquire pairs with the swap's release: what it
 * wrote is visible to the lock holder.
 */
static inline void pmuctx_ctx_block_swaps(struct pmuctx_context *ctx)
{
	/* Pairs with the swap's release of its claim. */
	u64 key = smp_load_acquire(&ctx->swap_key);

	for (;;) {
		if (key & PMUCTX_SWAP_CLAIMED) {
			cpu_relax();
			/* As above: see what the finished swap wrote. */
			key = smp_load_acquire(&ctx->swap_key);
			continue;
		}
		if (!key || try_cmpxchg(&ctx->swap_key, &key, 0))
			return;
	}
}

/*
 * Claim a swap key seen as @key (non-zero, unclaimed): set the claim bit
 * if the key is still @key.  Acquire: the last lock holder's writes are
 * visible to the claimer.
 */
static __always_inline bool pmuctx_swap_key_claim(u64 *swap_key, u64 key)
{
	return try_cmpxchg_acquire(swap_key, &key, key | PMUCTX_SWAP_CLAIMED);
}

/*
 * The equivalent swap claims two keys seen as @key: @first, then
 * @second.  Returns how many it claimed, in that order.
 */
static __always_inline int pmuctx_swap_keys_claim_generic(u64 *first,
							  u64 *second, u64 key)
{
	if (!pmuctx_swap_key_claim(first, key))
		return 0;
	return pmuctx_swap_key_claim(second, key) ? 2 : 1;
}

#ifdef CONFIG_ARM64
#include "../arch/arm64/swap_claim.h"
#endif
#ifndef pmuctx_swap_keys_claim
#define pmuctx_swap_keys_claim pmuctx_swap_keys_claim_generic
#endif

/*
 * Claim @ctx as a swap claims it (see swap_key): while the claim lasts no
 * swap and no lock holder touches the context, so the claimer may read it
 * and write what a lock holder could.  Fails, without waiting, when the
 * context is claimed already, under ctx->lock, or may not be claimed
 * (key 0: pmuctx_ctx_claimable()).  IRQs off: a lock taker interrupting
 * the claimer on its CPU would wait for the claim forever.
 */
static __always_inline bool pmuctx_ctx_claim(struct pmuctx_context *ctx,
					     u64 *key)
{
	*key = READ_ONCE(ctx->swap_key);
	if (!*key || (*key & PMUCTX_SWAP_CLAIMED))
		return false;
	return pmuctx_swap_key_claim(&ctx->swap_key, *key);
}

static __always_inline void pmuctx_ctx_unclaim(struct pmuctx_context *ctx,
					       u64 key)
{
	/* Pairs with pmuctx_ctx_block_swaps(): a lock holder sees the claim's writes. */
	smp_store_release(&ctx->swap_key, key);
}

/* For the checks of debug kernels: ctx->lock held, or @ctx claimed. */
static __always_inline void pmuctx_ctx_assert_owned(struct pmuctx_context *ctx)
{
	lockdep_assert(lockdep_is_held(&ctx->lock) ||
		       (READ_ONCE(ctx->swap_key) & PMUCTX_SWAP_CLAIMED));
}

/*
 * Two contexts are equivalent when they hold the same counters in the same
 * states: both unmodified clones of one family, or one the unmodified
 * original the other was cloned from.  Clones carry their parent's family,
 * or its generation if it is an original (flattened), so the family root
 * (family, else generation) is equal exactly then.  Precomputed for the
 * scheduler: 0 for contexts that may not be claimed, a key of their own
 * (PMUCTX_SWAP_SOLO) for those that may not change holders; published
 * when ctx->lock is dropped, with release, for the next swap's claim.
 */
static inline u64 pmuctx_ctx_swap_key(const struct pmuctx_context *ctx)
{
	u64 key;

	if (!pmuctx_ctx_claimable(ctx))
		return 0;
	if (pmuctx_ctx_swappable(ctx))
		key = (ctx->family ?: ctx->generation) |
		      (ctx->nr_mapped ? PMUCTX_SWAP_MAPPED : 0) |
		      (ctx->rebase ? PMUCTX_SWAP_REBASE : 0);
	else if (ctx->nr_inherit_stat && ctx->nr_hw &&
		 !(ctx->nr_mapped | ctx->nr_range | ctx->nr_sampling) &&
		 !(ctx->mux_rotate | ctx->mux_dirty) &&
		 pmuctx_hw->handoff_fold)
		/*
		 * Equivalent INHERIT_STAT contexts of hardware counters, all
		 * on the PMU: their "swap" is a handoff that reads the
		 * counters once (PMUCTX_REBASE_STAYS sends it out of line).
		 * The multiplexing flags change only under ctx->lock.
		 */
		key = (ctx->family ?: ctx->generation) | PMUCTX_SWAP_REBASE;
	else
		key = ctx->generation | PMUCTX_SWAP_SOLO;
	if (!(ctx->nr_hw | ctx->nr_mapped | ctx->nr_range))
		key |= PMUCTX_SWAP_HANDOFF;
	return key;
}

static inline void pmuctx_ctx_publish_swap_key(struct pmuctx_context *ctx)
{
	lockdep_assert_held(&ctx->lock);
	/* Pairs with the next swap's acquiring claim. */
	smp_store_release(&ctx->swap_key, pmuctx_ctx_swap_key(ctx));
}

/*
 * ctx->lock, with swaps kept out for as long as it is held (see swap_key).
 * Every taker of ctx->lock goes through these.
 */
static inline unsigned long __pmuctx_ctx_lock_irqsave(struct pmuctx_context *ctx)
	__acquires(&ctx->lock)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	pmuctx_ctx_block_swaps(ctx);
	return flags;
}

#define pmuctx_ctx_lock_irqsave(ctx, flags)	\
	((flags) = __pmuctx_ctx_lock_irqsave(ctx))

static inline void pmuctx_ctx_unlock_irqrestore(struct pmuctx_context *ctx,
						unsigned long flags)
	__releases(&ctx->lock)
{
	pmuctx_ctx_publish_swap_key(ctx);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
}

static inline void pmuctx_ctx_lock_irq(struct pmuctx_context *ctx)
	__acquires(&ctx->lock)
{
	raw_spin_lock_irq(&ctx->lock);
	pmuctx_ctx_block_swaps(ctx);
}

static inline void pmuctx_ctx_unlock_irq(struct pmuctx_context *ctx)
	__releases(&ctx->lock)
{
	pmuctx_ctx_publish_swap_key(ctx);
	raw_spin_unlock_irq(&ctx->lock);
}

/* IRQs already off (the overflow interrupt, sched_out). */
static inline void pmuctx_ctx_lock(struct pmuctx_context *ctx)
	__acquires(&ctx->lock)
{
	raw_spin_lock(&ctx->lock);
	pmuctx_ctx_block_swaps(ctx);
}

static inline void pmuctx_ctx_unlock(struct pmuctx_context *ctx)
	__releases(&ctx->lock)
{
	pmuctx_ctx_publish_swap_key(ctx);
	raw_spin_unlock(&ctx->lock);
}

/* context.c */
struct pmuctx_context *pmuctx_ctx_alloc(gfp_t gfp);
void pmuctx_ctx_seed_mux(struct pmuctx_context *ctx);
void pmuctx_ctx_get(struct pmuctx_context *ctx);
void pmuctx_ctx_put(struct pmuctx_context *ctx);
u64 pmuctx_new_cookie(void);
u64 pmuctx_new_counter_id(void);
u64 pmuctx_cookie_for_user(u64 cookie);
void pmuctx_ctx_changed(struct pmuctx_context *ctx);
void pmuctx_ctx_mapped(struct pmuctx_context *ctx, int delta);
void pmuctx_ctx_queue_exit(struct pmuctx_context *ctx, struct pmuctx_link *link);
void pmuctx_ctx_tally(struct pmuctx_context *ctx,
		      const struct pmuctx_counter *c, int delta);
struct pmuctx_fork_kit *pmuctx_kit_alloc(unsigned int nr);
struct pmuctx_fork_kit *pmuctx_kit_alloc_growth(unsigned int nr);
struct pmuctx_fork_kit *pmuctx_kit_grow(struct pmuctx_context *ctx,
					struct pmuctx_fork_kit *more);
void pmuctx_kit_free(struct pmuctx_fork_kit *kit);
void pmuctx_kit_retire(struct pmuctx_fork_kit *kit);
struct pmuctx_fork_kit *pmuctx_kit_reuse(unsigned int nr);
void pmuctx_kit_drain_spares(void);
extern unsigned int pmuctx_max_counters;
void pmuctx_ctx_clocks_now(struct pmuctx_context *ctx, u64 *clk);
void pmuctx_ctx_fold_holder(struct pmuctx_context *ctx);
void pmuctx_ctx_snapshot(struct pmuctx_context *ctx, struct task_struct *t);
int pmuctx_context_init(void);
int pmuctx_counter_init(void);
void pmuctx_counter_exit(void);
void pmuctx_context_exit(void);
extern struct workqueue_struct *pmuctx_wq;

/* overflow.c */
void pmuctx_counter_wake(struct irq_work *work);
void pmuctx_counter_overflowed(struct pmuctx_counter *c, struct pt_regs *regs,
			       u64 n);
void pmuctx_ctx_sync_hw_counters(struct pmuctx_context *ctx);

/*
 * Fold the live hardware counts of @ctx, wherever it is loaded, so that the
 * caller's read under ctx->lock is current.  Process context; the caller
 * holds a reference.  Inline: most contexts have no hardware counter.
 */
static inline void pmuctx_ctx_sync_hw(struct pmuctx_context *ctx)
{
	if (READ_ONCE(ctx->nr_hw))
		pmuctx_ctx_sync_hw_counters(ctx);
}

void pmuctx_hw_retire_counter(struct pmuctx_context *ctx,
			      struct pmuctx_counter *c);
struct page *pmuctx_user_pages_alloc(void);
void pmuctx_user_pages_free(struct page *page);
bool pmuctx_user_pages_map_perf(struct page *page);
void pmuctx_ctx_write_user_pages(struct pmuctx_context *ctx);

/*
 * ctx->lock held, or @ctx claimed.  Inline: every load and unload asks,
 * and few contexts have a page.
 */
static inline void pmuctx_ctx_update_user_pages(struct pmuctx_context *ctx)
{
	pmuctx_ctx_assert_owned(ctx);
	if (ctx->nr_mapped)
		pmuctx_ctx_write_user_pages(ctx);
}

void pmuctx_swap_user_pages(struct pmuctx_context *ctx,
			    struct pmuctx_context *nctx);

/*
 * local_clock() of @cpu.  Where sched_clock is unstable (x86 with
 * unsynchronised TSCs, as in QEMU TCG) CPUs' clocks differ, and a context's
 * snapshot was taken on its holder's CPU.
 */
static inline u64 pmuctx_clock_of(int cpu)
{
#ifdef CONFIG_HAVE_UNSTABLE_SCHED_CLOCK
	if (cpu >= 0 && cpu != raw_smp_processor_id())
		return sched_clock_cpu(cpu);
#endif
	return local_clock();
}

/*
 * @clk = the context's clocks with the holder's progress since its
 * snapshot (in place when @clk is ctx->clock), never behind a time already
 * handed out.  For a holder running on another CPU the fault counts are
 * read while it may change them: a value one fault old is as good as the
 * read that raced with the fault.  Inline and without a delta array: every
 * read() goes through here.
 */
static __always_inline void pmuctx_ctx_holder_clocks(struct pmuctx_context *ctx,
						     u64 *clk)
{
	struct task_struct *t = ctx->task;
	int i;
	s64 dt;

	/* In place (the fold at switch-out): only the deltas to add. */
	if (clk != ctx->clock)
		for (i = 0; i < PMUCTX_NR_CLOCKS; i++)
			clk[i] = ctx->clock[i];
	if (ctx->clocks_running && t) {
		/*
		 * The snapshot is the holder's CPU's clock: a reader elsewhere
		 * asks that CPU's clock too (they differ where sched_clock is
		 * unstable).
		 */
		dt = pmuctx_clock_of(ctx->loaded_cpu) - ctx->snap[PMUCTX_CLK_TIME];
		if (dt > 0)
			clk[PMUCTX_CLK_TIME] += dt;
		/* Racy by design when the holder runs elsewhere, see above. */
		clk[PMUCTX_CLK_MINFLT] += data_race(READ_ONCE(t->min_flt)) -
					  ctx->snap[PMUCTX_CLK_MINFLT];
		/* Likewise. */
		clk[PMUCTX_CLK_MAJFLT] += data_race(READ_ONCE(t->maj_flt)) -
					  ctx->snap[PMUCTX_CLK_MAJFLT];
	}
	if (clk[PMUCTX_CLK_TIME] < ctx->time_seen)
		clk[PMUCTX_CLK_TIME] = ctx->time_seen;
}

/*
 * ctx->lock held, or @ctx claimed: its hardware counters up to date.
 * Loaded here, the PMU can be read directly (remote: sync_hw first).
 */
static __always_inline void pmuctx_ctx_fold_here(struct pmuctx_context *ctx)
{
	if (ctx->nr_hw && ctx->loaded_cpu == smp_processor_id()) {
		pmuctx_hw->fold(ctx);
		pmuctx_ctx_update_user_pages(ctx);
	}
}

/* ctx->lock held, or @ctx claimed (a reading): the clocks as of now. */
static __always_inline void __pmuctx_ctx_clocks_now(struct pmuctx_context *ctx,
						    u64 *clk)
{
	pmuctx_ctx_assert_owned(ctx);
	pmuctx_ctx_fold_here(ctx);
	pmuctx_ctx_holder_clocks(ctx, clk);
	ctx->time_seen = clk[PMUCTX_CLK_TIME];
}

/* counter.c */
struct pmuctx_counter *pmuctx_counter_alloc(gfp_t gfp);
bool pmuctx_counter_alloc_bulk(gfp_t gfp, unsigned int nr,
			       struct pmuctx_counter **cs);
struct pmuctx_counter *pmuctx_counter_alloc_original(gfp_t gfp, bool inherit);
bool pmuctx_family_has_live_clones(struct pmuctx_counter *c);
void pmuctx_counter_free_unused(struct pmuctx_counter *c);
void pmuctx_counter_get(struct pmuctx_counter *c);
void pmuctx_counter_put(struct pmuctx_counter *c);
u64 pmuctx_counter_value(struct pmuctx_counter *c, const u64 *clk);
void pmuctx_counter_times(struct pmuctx_counter *c, const u64 *clk,
			  u64 *enabled, u64 *running);
void pmuctx_counter_set_enabled(struct pmuctx_counter *c, bool on,
				const u64 *clk);
void pmuctx_counter_set_mux_off(struct pmuctx_counter *c, bool off,
				const u64 *clk);
void pmuctx_counter_split_slice(struct pmuctx_counter *c, const u64 *clk);
void pmuctx_counter_slices(const struct pmuctx_counter *c, const u64 *clk,
			   struct pmuctx_slices *sum);
void pmuctx_slices_add(struct pmuctx_slices *sum,
		       const struct pmuctx_slices *more);

/* What read() and the family reads return for one counter. */
struct pmuctx_reading {
	u64 value, enabled, running;
	/*
	 * Where to add the slices, zeroed by the caller; NULL when the read
	 * format does not ask.  Kept out of this struct: the kernel zeroes
	 * every stack variable (INIT_STACK_ALL_ZERO), and a read that does
	 * not want 128-bit sums should not clear and align room for them.
	 */
	struct pmuctx_slices *slices;
	/*
	 * The read wants the value alone (no times, no slices): a hardware
	 * counter's value is its PMU count, which needs no clock reading.
	 */
	bool value_only;
};

void pmuctx_counter_family_read(struct pmuctx_counter *c,
				struct pmuctx_reading *rd);
int pmuctx_counter_family_enable(struct pmuctx_counter *c, bool on);
void pmuctx_counter_family_reset(struct pmuctx_counter *c);
enum pmuctx_group_op {
	PMUCTX_GROUP_DISABLE,
	PMUCTX_GROUP_ENABLE,
	PMUCTX_GROUP_RESET,
};

void pmuctx_counter_group_apply(struct pmuctx_counter *leader,
				enum pmuctx_group_op op);
bool pmuctx_counter_inherits(const struct pmuctx_counter *c, bool thread);
void pmuctx_counter_fold_into_parent(struct pmuctx_counter *clone,
				     const u64 *clk);
void pmuctx_counter_retire_clones(struct pmuctx_counter *c);
void pmuctx_family_hold(struct pmuctx_counter *clone,
			struct pmuctx_counter *orig);
bool pmuctx_ctx_remove_counter(struct pmuctx_counter *c);

/* users.c: what keeps the module loaded, counted per CPU */
void pmuctx_users_get(void);
void pmuctx_users_put(void);
void pmuctx_users_exit(void);

/* link.c: the task index and notifier registration */
struct pmuctx_link *pmuctx_link_alloc(struct task_struct *t, gfp_t gfp);
struct pmuctx_link *pmuctx_link_lookup(struct task_struct *t);
struct pmuctx_link *pmuctx_link_get_or_create(struct task_struct *t);
void pmuctx_link_put(struct pmuctx_link *link);
void pmuctx_link_free_unused(struct pmuctx_link *link);
void pmuctx_link_index_add(struct pmuctx_link *link);
void pmuctx_link_index_del(struct pmuctx_link *link);
struct pmuctx_context *pmuctx_link_pin_ctx(struct pmuctx_link *link);
void pmuctx_ctx_unpin(struct pmuctx_context *ctx);
void pmuctx_ctx_unpin_failed(struct pmuctx_context *ctx);
void pmuctx_ctx_run_where_loaded(struct pmuctx_context *ctx,
				 void (*fn)(struct pmuctx_context *ctx, void *arg),
				 void *arg);
void pmuctx_link_queue_detach(struct pmuctx_context *ctx);

/* sched.c */
DECLARE_PER_CPU(struct pmuctx_context *, pmuctx_loaded_ctx);
extern struct preempt_ops pmuctx_preempt_ops;

/* Inline: sched_out looks up next's link on every switch. */
static inline struct pmuctx_link *pmuctx_link_on_list(struct task_struct *t)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &t->preempt_notifiers, link)
		if (pn->ops == &pmuctx_preempt_ops)
			return container_of(pn, struct pmuctx_link, notifier);
	return NULL;
}

/* Only the task itself changes its notifier list, so it may walk it. */
static inline struct pmuctx_link *pmuctx_link_of_current(void)
{
	return pmuctx_link_on_list(current);
}

/*
 * A sample of @ctx, taken in its holder (current, ctx->lock held), may
 * record the holder's user state: it has a link and still runs the mm
 * that link vetted.  False in an exec from its mm switch until our exec
 * hook (the new image's registers and stack, before we know whether its
 * opener may see them), and for a context with no holder.
 */
static inline bool pmuctx_user_state_visible(const struct pmuctx_context *ctx)
{
	const struct pmuctx_link *link = ctx->link;

	return link && current->mm && current->mm == READ_ONCE(link->image_mm);
}

/*
 * For a task that cannot run meanwhile (next in sched_out, a child before
 * its first run): nobody changes its list then.
 */
static inline struct pmuctx_link *pmuctx_link_of_stopped(struct task_struct *t)
{
	return pmuctx_link_on_list(t);
}

void pmuctx_sched_load_current(struct pmuctx_link *link);

/* mux.c: multiplexing */
extern unsigned int pmuctx_mux_interval_ms;
int pmuctx_mux_init(void);
void pmuctx_mux_exit(void);
enum { PMUCTX_MUX_ON, PMUCTX_MUX_WAIT, PMUCTX_MUX_RESCHED };
int pmuctx_mux_add(struct pmuctx_context *ctx, struct pmuctx_counter *c,
		   struct pmuctx_counter *leader);
bool pmuctx_mux_added(struct pmuctx_context *ctx);
bool pmuctx_mux_resched(struct pmuctx_context *ctx);
void pmuctx_mux_forget(struct pmuctx_context *ctx, struct pmuctx_counter *c);
/*
 * The context's rotation stride, at random between 0.9 and 1 of the units
 * on the PMU (kernel/mux.c): ctx->lock held, or the context not published.
 */
#define PMUCTX_MUX_STRIDE_MIN	0xe6666666U	/* 0.9 * 2^32 */

static inline void pmuctx_mux_draw_stride(struct pmuctx_context *ctx)
{
	ctx->mux_stride = PMUCTX_MUX_STRIDE_MIN +
			  reciprocal_scale(prandom_u32_state(&ctx->mux_rnd),
					   0U - PMUCTX_MUX_STRIDE_MIN);
	ctx->mux_spread_units = 0;	/* not checked yet */
}

void pmuctx_mux_copy_slot(struct pmuctx_context *cctx,
			  struct pmuctx_counter *clone,
			  const struct pmuctx_counter *c);
void pmuctx_mux_loading(struct pmuctx_context *ctx);
void pmuctx_mux_resched_loaded(struct pmuctx_context *ctx);
void pmuctx_ctx_unload(struct pmuctx_context *ctx);

/* inherit.c: fork, exit, exec */
int pmuctx_inherit_init(void);
void pmuctx_inherit_exit(void);
void pmuctx_task_exited(struct pmuctx_link *link);
void pmuctx_kit_queue(struct pmuctx_link *link, struct task_struct *t);
bool pmuctx_exec_detaches(struct task_struct *t);
void pmuctx_ctx_handle_each(struct pmuctx_context *ctx,
			    bool (*needs)(const struct pmuctx_counter *c),
			    void (*handle)(struct pmuctx_counter *c));

/* attach.c */
struct task_struct *pmuctx_find_target(s32 target, u32 flags);
int pmuctx_may_attach(struct task_struct *task);

/* range.c: address-range counters */
void pmuctx_range_init(void);
void pmuctx_range_fill_info(struct pmuctx_info *info);
int pmuctx_range_attr_check(const struct pmuctx_attr *attr);
int pmuctx_range_open(struct pmuctx_counter *c, struct task_struct *task);
void pmuctx_range_watch_clones(struct pmuctx_context *ctx);
void pmuctx_range_swap(struct pmuctx_context *ctx, struct pmuctx_context *nctx);
void pmuctx_range_put_watch(struct pmuctx_range_watch *w);
void pmuctx_range_free_watch(struct pmuctx_range_watch *w);
void pmuctx_range_publish(struct pmuctx_counter *c);
void pmuctx_range_release_dead(struct pmuctx_context *ctx);
u64 pmuctx_range_hits(const struct pmuctx_counter *c);
long pmuctx_range_ioctl_plan(struct pmuctx_range __user *ur);
long pmuctx_range_ioctl_counter(struct pmuctx_counter *c,
				struct pmuctx_range __user *ur);

/* dev.c */
long pmuctx_copy_sized(void *kbuf, size_t ksize, const void __user *ubuf,
		       size_t min);
int pmuctx_dev_register(void);
void pmuctx_dev_unregister(void);

/*
 * The native backends: probe takes the PMU (-EBUSY when the kernel's
 * driver owns it), describe only reads what the PMU offers (counters,
 * widths, events) for a backend that counts through the kernel's driver.
 */
#ifdef CONFIG_ARM64
int pmuctx_pmuv3_probe(const struct pmuctx_hw_desc **desc);
int pmuctx_pmuv3_describe(struct pmuctx_hw_desc *desc);
int pmuctx_pmuv3_check_raw(const struct pmuctx_hw_desc *desc, u64 config);
#endif
#ifdef CONFIG_X86
int pmuctx_perfmon_probe(const struct pmuctx_hw_desc **desc);
int pmuctx_perfmon_describe(struct pmuctx_hw_desc *desc);
int pmuctx_perfmon_check_raw(const struct pmuctx_hw_desc *desc, u64 config);
#endif

/* perf_fallback.c: hardware counters through the kernel's perf events. */
int pmuctx_perf_probe(const struct pmuctx_hw_desc **desc);
void pmuctx_hw_bind_clones(struct pmuctx_context *ctx);
struct perf_event_attr;
void pmuctx_perf_attr(const struct pmuctx_counter *c,
		      struct perf_event_attr *pattr);
int pmuctx_perf_check_raw(const struct pmuctx_hw_desc *d, u64 config);
int pmuctx_perf_describe(struct pmuctx_hw_desc *d);
int pmuctx_perf_pmu_name(char *name, size_t len);
int pmuctx_perf_slot_pick(unsigned long used, const struct pmuctx_counter *c);
void pmuctx_perf_nothing(void);

/*
 * The period perf's events of a sampling counter interrupt at, on both
 * perf backends: the interrupt only wakes a fold, which counts the
 * periods from the counts.  perf throttles an event past
 * perf_event_max_sample_rate (100,000/s, a jiffy's share of it per tick,
 * lowered when its interrupts take long) by stopping it, counts included.
 * 2^20 events are ~1,000 interrupts a second at 1 GHz: 4 a 4 ms tick,
 * under every rate perf lowers to in practice.  Shorter periods are
 * counted exactly all the same; their samples come at most once a wake,
 * each with every period it ended.  The task-bound backend's events
 * interrupt at the counter's period when it is longer; the shared
 * backend's always at this one (one configuration for every period).
 */
#define PMUCTX_PERF_MIN_WAKE	BIT_ULL(20)
struct perf_sample_data;
bool pmuctx_perf_can_sample(void);
void pmuctx_perf_overflow(struct perf_event *ev, struct perf_sample_data *data,
			  struct pt_regs *regs);
void pmuctx_perf_wake_sync(void);
void pmuctx_perf_periods(struct pmuctx_counter *c, u64 delta);

/* perf_shared.c: contexts on perf's per-CPU events (backend=shared). */
int pmuctx_perf_shared_probe(const struct pmuctx_hw_desc **desc);

#ifdef PMUCTX_PLANT
int pmuctx_plant_bugs(void);
#else
static inline int pmuctx_plant_bugs(void) { return 0; }
#endif

#endif /* _PMUCTX_INTERNAL_H */
