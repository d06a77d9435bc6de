// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/pmuctx and counter fds: the ioctl ABI (Documentation/uapi.rst).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <generated/utsrelease.h>
#include "pmuctx.h"
#include "compat/mm.h"

#define PMUCTX_TREE_MAX_ENTRIES	65536

static bool allow_kernel;
module_param(allow_kernel, bool, 0644);
MODULE_PARM_DESC(allow_kernel,
		 "let users without CAP_PERFMON count kernel mode on hardware counters");

unsigned int pmuctx_max_counters = 1024;
module_param_named(max_counters_per_task, pmuctx_max_counters, uint, 0644);
MODULE_PARM_DESC(max_counters_per_task,
		 "counters one task's context may hold, clones included (EMFILE beyond)");

static const struct file_operations pmuctx_counter_fops;

/*
 * Copy in a size-versioned struct whose first field is its __u32 size: at
 * least @min bytes; a newer caller's larger struct only with a zero tail
 * (E2BIG), an older smaller one zero-extended.  Returns the caller's size
 * or a negative errno.
 */
long pmuctx_copy_sized(void *kbuf, size_t ksize, const void __user *ubuf,
		       size_t min)
{
	u32 usize;
	int err;

	if (get_user(usize, (const u32 __user *)ubuf))
		return -EFAULT;
	if (usize < min)
		return -EINVAL;
	/* A tail that big is not a newer struct: do not scan it. */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	err = copy_struct_from_user(kbuf, ksize, ubuf, usize);
	if (err)
		return err;
	return usize;
}

static long pmuctx_ioctl_info(struct pmuctx_info __user *uinfo)
{
	const struct pmuctx_hw_desc *hw = pmuctx_hw;
	struct pmuctx_info info;
	long usize;

	/* The copy only refuses a newer caller's fields we cannot honour. */
	usize = pmuctx_copy_sized(&info, sizeof(info), uinfo,
				  offsetofend(struct pmuctx_info, abi_version));
	if (usize < 0)
		return usize;

	memset(&info, 0, sizeof(info));
	info.size = min_t(u32, usize, sizeof(info));
	info.abi_version = PMUCTX_ABI_VERSION;
	info.features = PMUCTX_FEAT_SOFTWARE | PMUCTX_FEAT_SAMPLE_PERIOD |
			PMUCTX_FEAT_SAMPLE_CPU | PMUCTX_FEAT_CALLCHAIN |
			PMUCTX_FEAT_SAMPLE_USER;
	info.nr_sw_events = PMUCTX_SW_MAX;
	info.mux_interval_ms = READ_ONCE(pmuctx_mux_interval_ms);
	if (hw) {
		strscpy(info.backend, hw->name, sizeof(info.backend));
		info.nr_general = hw->nr_general;
		info.nr_fixed = hw->nr_fixed;
		info.general_width = hw->general_width;
		info.fixed_width = hw->fixed_width;
		info.pmu_version = hw->pmu_version;
		info.hw_events[0] = hw->hw_events[0];
		info.hw_events[1] = hw->hw_events[1];
		info.features |= hw->features | PMUCTX_FEAT_MULTIPLEX;
		/* The periods are the folds' on every backend (perf_fallback.c). */
		if (hw->features & PMUCTX_FEAT_OVERFLOW)
			info.features |= PMUCTX_FEAT_FREQ;
		if ((hw->features & PMUCTX_FEAT_OVERFLOW) &&
		    !(hw->features & PMUCTX_FEAT_PERF_EVENTS))
			info.features |= PMUCTX_FEAT_KERNEL_CALLCHAIN;
		/* compat/cr4.h: a kernel may keep CR4.PCE from modules. */
		if (!(hw->features & PMUCTX_FEAT_PERF_EVENTS) &&
		    !hw->no_user_reads)
			info.features |= PMUCTX_FEAT_SELF_READ;
	} else {
		strscpy(info.backend, "software", sizeof(info.backend));
	}

	pmuctx_range_fill_info(&info);
	if (copy_to_user(uinfo, &info, info.size))
		return -EFAULT;
	return 0;
}

static int pmuctx_attr_copy(struct pmuctx_attr *attr,
			    const struct pmuctx_attr __user *uattr)
{
	u32 size;

	if (get_user(size, &uattr->size))
		return -EFAULT;
	if (size < PMUCTX_ATTR_SIZE_VER0)
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(attr, sizeof(*attr), uattr, size);
}

static int pmuctx_attr_check(const struct pmuctx_attr *attr)
{
	u64 f = attr->flags;
	int err;

	if (f & ~PMUCTX_ATTR_ALL)
		return -EINVAL;
	if (attr->read_format & ~PMUCTX_FORMAT_ALL)
		return -EINVAL;
	/* A rate of samples, up to max_sample_freq: hardware counters only. */
	if ((f & PMUCTX_ATTR_FREQ) &&
	    (!attr->sample_period ||
	     attr->sample_period > READ_ONCE(pmuctx_max_sample_freq) ||
	     attr->type == PMUCTX_TYPE_RANGE))
		return -EINVAL;
	if ((f & (PMUCTX_ATTR_INHERIT_THREAD | PMUCTX_ATTR_INHERIT_STAT)) &&
	    !(f & PMUCTX_ATTR_INHERIT))
		return -EINVAL;
	/* A call chain is a sample's, and so are user registers and stack. */
	if ((f & PMUCTX_ATTR_CALLCHAIN) && !attr->sample_period)
		return -EINVAL;
	err = pmuctx_sample_user_check(attr);
	if (err)
		return err;
	if (attr->type == PMUCTX_TYPE_RANGE)
		return pmuctx_range_attr_check(attr);
	if (attr->range_start || attr->range_end)
		return -EINVAL;
	switch (attr->type) {
	case PMUCTX_TYPE_SOFTWARE:
		if (attr->config >= PMUCTX_SW_MAX)
			return -EINVAL;
		/* They count the task's activity, whatever the mode. */
		if (f & (PMUCTX_ATTR_EXCLUDE_USER | PMUCTX_ATTR_EXCLUDE_KERNEL))
			return -EOPNOTSUPP;
		if (attr->sample_period)
			return -EOPNOTSUPP;
		return 0;
	case PMUCTX_TYPE_HARDWARE:
		if (attr->config >= PMUCTX_HW_MAX)
			return -EINVAL;
		fallthrough;
	case PMUCTX_TYPE_RAW:
		if (!pmuctx_hw)
			return -ENODEV;
		if (!(f & PMUCTX_ATTR_EXCLUDE_KERNEL) && !allow_kernel &&
		    !capable(CAP_PERFMON) && !capable(CAP_SYS_ADMIN))
			return -EPERM;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Members share the leader's inheritance so a clone's group is complete. */
static struct pmuctx_counter *pmuctx_group_leader(struct file *file,
						  const struct pmuctx_attr *attr)
{
	const u64 inherit = PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_INHERIT_THREAD;
	struct pmuctx_counter *leader;

	if (file->f_op != &pmuctx_counter_fops)
		return ERR_PTR(-EINVAL);
	leader = file->private_data;
	if (leader->leader != leader)
		return ERR_PTR(-EINVAL);
	if ((leader->attr.flags & inherit) != (attr->flags & inherit))
		return ERR_PTR(-EINVAL);
	/* A group goes on the PMU as a unit: only its leader says pinned. */
	if (attr->flags & PMUCTX_ATTR_PINNED)
		return ERR_PTR(-EINVAL);
	return leader;
}

/* One counter joining a context: the part done under ctx->lock. */
struct pmuctx_add_req {
	struct pmuctx_counter *c, *leader;
	struct pmuctx_fork_kit *kit;	/* in: a new or grown kit; out: to free */
	bool grow;
	int err;
};

/*
 * ctx->lock held, IRQs off, on the CPU @ctx is loaded on (or anywhere when
 * it is loaded nowhere).  A hardware counter that gets a slot is programmed
 * here, before anything can fold that slot: a fold of an unprogrammed slot
 * (the clocks read just below, another counter's overflow, a preemption
 * that unloads) would read whatever count the last context left in the
 * register and take it as the new counter's progress (an early overflow).
 */
static void pmuctx_ctx_add_locked(struct pmuctx_context *ctx, void *req)
{
	struct pmuctx_add_req *r = req;
	struct pmuctx_counter *c = r->c, *leader = r->leader;
	struct pmuctx_fork_kit *spent;
	u64 clk[PMUCTX_NR_CLOCKS];
	int placed;

	if (ctx->dead) {
		r->err = -ESRCH;
		return;
	}
	if (leader && leader->ctx != ctx) {
		r->err = -EINVAL;
		return;
	}
	if (ctx->nr_counters >= READ_ONCE(pmuctx_max_counters)) {
		r->err = -EMFILE;
		return;
	}
	if (r->grow) {
		spent = pmuctx_kit_grow(ctx, r->kit);
		if (IS_ERR(spent)) {
			/* A fork took the kit since: the caller makes a whole one. */
			r->err = -EAGAIN;
			return;
		}
		r->kit = spent;
	}
	placed = pmuctx_mux_add(ctx, c, leader);
	if (placed < 0) {
		r->err = placed;
		return;
	}
	if (pmuctx_counter_is_hw(c)) {
		ctx->nr_hw++;
		if (placed == PMUCTX_MUX_ON &&
		    ctx->loaded_cpu == smp_processor_id())
			pmuctx_hw->program(ctx, c, true);
	}
	pmuctx_ctx_get(ctx);
	c->ctx = ctx;
	list_add_tail(&c->ctx_entry, &ctx->counters);
	pmuctx_ctx_tally(ctx, c, 1);
	if (r->kit && !r->grow)
		swap(r->kit, ctx->fork_kit);	/* the old one is freed after */
	if (leader) {
		c->leader = leader;
		list_add_tail(&c->sibling_entry, &leader->siblings);
	}
	/* In its context: a sampling range counter's hits may sample now. */
	if (c->attr.type == PMUCTX_TYPE_RANGE)
		pmuctx_range_publish(c);
	if (!(c->attr.flags & PMUCTX_ATTR_DISABLED)) {
		pmuctx_ctx_clocks_now(ctx, clk);
		pmuctx_counter_set_enabled(c, true, clk);
	}
	/* Loaded here or nowhere: the new choice is made now. */
	if (placed == PMUCTX_MUX_RESCHED)
		pmuctx_mux_added(ctx);
	pmuctx_ctx_changed(ctx);
}

/*
 * Put @c into @ctx (pinned by the caller): a structural change, so the
 * context gets a new cookie and leaves its family.  The change is made on
 * the CPU the context is loaded on (here for a self-open), so that a
 * hardware counter is on the PMU the moment it is in the slot table.
 */
static int pmuctx_ctx_add(struct pmuctx_context *ctx, struct pmuctx_counter *c,
			  struct pmuctx_counter *leader)
{
	struct pmuctx_add_req r = { .c = c, .leader = leader };

	mutex_lock(&ctx->mutex);
again:
	/*
	 * An inheriting counter needs room in the fork kit: the next fork
	 * must find a clone for it ready.  ctx->mutex keeps the count stable.
	 * Only that one clone is allocated when the context has its kit
	 * (opening n inherited counters allocates n clones, not n^2/2); a
	 * whole kit when it has none (new, or a fork took it).
	 */
	if (pmuctx_counter_inherits(c, true)) {
		unsigned int size = pmuctx_kit_size(ctx);

		pmuctx_ctx_lock_irq(ctx);
		r.grow = ctx->fork_kit && ctx->fork_kit->nr >= size;
		pmuctx_ctx_unlock_irq(ctx);
		r.kit = r.grow ? pmuctx_kit_alloc_growth(size + 1) :
				 pmuctx_kit_alloc(size + 1);
		if (!r.kit) {
			mutex_unlock(&ctx->mutex);
			return -ENOMEM;
		}
	}
	r.err = 0;
	pmuctx_ctx_run_where_loaded(ctx, pmuctx_ctx_add_locked, &r);
	if (r.err == -EAGAIN) {
		pmuctx_kit_free(r.kit);
		r.kit = NULL;
		goto again;
	}
	mutex_unlock(&ctx->mutex);
	pmuctx_kit_free(r.kit);
	return r.err;
}

static long pmuctx_ioctl_open(struct pmuctx_open_args __user *uargs)
{
	struct pmuctx_counter *c, *leader = NULL;
	struct task_struct *task = NULL;
	struct pmuctx_link *link = NULL;
	struct pmuctx_context *ctx = NULL;
	struct pmuctx_open_args args;
	struct file *group = NULL;
	struct pmuctx_attr attr;
	bool exec_locked = false;
	struct file *file;
	int err, fd;

	if (copy_from_user(&args, uargs, sizeof(args)))
		return -EFAULT;
	if ((args.flags & ~PMUCTX_OPEN_ALL) || args.reserved)
		return -EINVAL;
	err = pmuctx_attr_copy(&attr, u64_to_user_ptr(args.attr));
	if (err)
		return err;
	err = pmuctx_attr_check(&attr);
	if (err)
		return err;

	if (args.group_fd >= 0) {
		group = fget(args.group_fd);
		if (!group)
			return -EBADF;
		leader = pmuctx_group_leader(group, &attr);
		if (IS_ERR(leader)) {
			err = PTR_ERR(leader);
			leader = NULL;
			goto out;
		}
	} else if (args.group_fd != -1) {
		return -EBADF;
	}

	task = pmuctx_find_target(args.target, args.flags);
	if (IS_ERR(task)) {
		err = PTR_ERR(task);
		task = NULL;
		goto out;
	}
	/*
	 * Held until the counter is in the task's context, as perf does: an
	 * exec that changes the target's credentials either completes before
	 * the check (which then sees them) or starts after the counter is
	 * there (and its exec hook detaches it).
	 */
	if (down_read_interruptible(&task->signal->exec_update_lock)) {
		/* Restarted unless the handler lacks SA_RESTART (EINTR). */
		err = -ERESTARTSYS;
		goto out;
	}
	exec_locked = true;
	err = pmuctx_may_attach(task);
	if (err)
		goto out;

	c = pmuctx_counter_alloc_original(GFP_KERNEL_ACCOUNT,
					  attr.flags & PMUCTX_ATTR_INHERIT);
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	c->attr = attr;
	c->attr.size = sizeof(attr);
	c->id = pmuctx_new_counter_id();
	if (pmuctx_counter_is_hw(c)) {
		err = pmuctx_hw->event_init(c);
		if (err)
			goto free_counter;
		c->hw_taken = true;
		/* Under exec_update_lock, as a range counter's watch. */
		if (pmuctx_hw->bind) {
			err = pmuctx_hw->bind(c, task);
			if (err)
				goto free_counter;
		}
	}
	if (attr.flags & PMUCTX_ATTR_FREQ)
		pmuctx_freq_start(c, NSEC_PER_SEC / attr.sample_period);
	else
		c->period_left = attr.sample_period;
	if (attr.sample_period) {
		struct pmuctx_sample_ring *ring = pmuctx_sample_ring_alloc(&attr);

		/* EPERM: the opener's user is at its bound (overflow.c). */
		if (IS_ERR(ring)) {
			err = PTR_ERR(ring);
			goto free_counter;
		}
		c->fam->samples = ring;
	}
	/* After the ring: a sampling range counter's hits may come at once. */
	if (attr.type == PMUCTX_TYPE_RANGE) {
		err = pmuctx_range_open(c, task);
		if (err)
			goto free_counter;
	}

	/*
	 * A link being retired (its context just became empty, or an exec
	 * detached it) is still in the index for a few instructions after
	 * its context died, which the holder runs without waiting for
	 * anything (with preemption off, but for a registration that came
	 * too late): wait for it to go, then make a fresh one.  Only an
	 * exiting target has none to give.  The wait sleeps: a spin, even
	 * with cond_resched(), would starve a holder of lower priority on
	 * this CPU (a SCHED_FIFO attacher), which must run to finish.
	 */
	for (;;) {
		link = pmuctx_link_get_or_create(task);
		if (IS_ERR(link)) {
			err = PTR_ERR(link);
			link = NULL;
			goto free_counter;
		}
		ctx = pmuctx_link_pin_ctx(link);
		if (ctx)
			break;
		pmuctx_link_put(link);
		link = NULL;
		if (READ_ONCE(task->flags) & PF_EXITING) {
			err = -ESRCH;
			goto free_counter;
		}
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto free_counter;
		}
		usleep_range(20, 100);
	}
	/*
	 * A member joins its leader's context, which must be the one the
	 * target holds (EINVAL from pmuctx_ctx_add otherwise): a member never
	 * counts a task the caller did not name.
	 */

	fd = get_unused_fd_flags((args.flags & PMUCTX_OPEN_CLOEXEC) ? O_CLOEXEC : 0);
	if (fd < 0) {
		err = fd;
		goto unpin;
	}
	/* The file's: its release runs our code (pmuctx_counter_fops). */
	pmuctx_users_get();
	file = anon_inode_getfile("[pmuctx]", &pmuctx_counter_fops, c, O_RDWR);
	if (IS_ERR(file)) {
		pmuctx_users_put();
		put_unused_fd(fd);
		err = PTR_ERR(file);
		goto unpin;
	}
	c->file = file;
	err = pmuctx_ctx_add(ctx, c, leader);
	if (err) {
		/* fput() would release a counter that is in no context. */
		c->file = NULL;
		file->private_data = NULL;
		fput(file);
		put_unused_fd(fd);
		goto unpin;
	}
	pmuctx_ctx_unpin(ctx);
	fd_install(fd, file);
	err = fd;
	goto out;

unpin:
	/* Nothing may stay hooked for an open that failed. */
	pmuctx_ctx_unpin_failed(ctx);
free_counter:
	/*
	 * A watch never published: its hits only counted.  Released now, so
	 * the target's debug registers are free when the open returns.
	 */
	if (attr.type == PMUCTX_TYPE_RANGE) {
		pmuctx_range_free_watch(c->range);
		c->range = NULL;
	}
	pmuctx_counter_put(c);
out:
	if (exec_locked)
		up_read(&task->signal->exec_update_lock);
	if (link)
		pmuctx_link_put(link);
	if (task)
		put_task_struct(task);
	if (group)
		fput(group);
	return err;
}

/*
 * The ioctl number of a size-versioned struct encodes the size the caller
 * was built with; the struct's own @size field is what counts, so every
 * size field is accepted (an older or newer caller's).
 */
static unsigned int pmuctx_ioc_sized(unsigned int cmd, unsigned int sized)
{
	const unsigned int size_field = _IOC_SIZEMASK << _IOC_SIZESHIFT;

	return (cmd & ~size_field) == (sized & ~size_field) ? sized : cmd;
}

static long pmuctx_dev_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	cmd = pmuctx_ioc_sized(cmd, PMUCTX_INFO);
	switch (pmuctx_ioc_sized(cmd, PMUCTX_RANGE_PLAN)) {
	case PMUCTX_INFO:
		return pmuctx_ioctl_info(uarg);
	case PMUCTX_OPEN:
		return pmuctx_ioctl_open(uarg);
	case PMUCTX_RANGE_PLAN:
		return pmuctx_range_ioctl_plan(uarg);
	default:
		return -ENOTTY;
	}
}

/* ---- counter fds ---- */

static int pmuctx_counter_release(struct inode *inode, struct file *file)
{
	struct pmuctx_counter *c = file->private_data;

	if (c) {
		pmuctx_ctx_remove_counter(c);
		if (c->attr.flags & PMUCTX_ATTR_INHERIT)
			pmuctx_counter_retire_clones(c);
		c->file = NULL;
		pmuctx_counter_put(c);
	}
	pmuctx_users_put();	/* the last thing: see users.c */
	return 0;
}

static u64 pmuctx_ctx_stamp(struct pmuctx_context *ctx)
{
	unsigned long flags;
	u64 seq;

	pmuctx_ctx_lock_irqsave(ctx, flags);
	seq = ctx->seq;
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
	return seq;
}

#define PMUCTX_SLICE_WORDS	(sizeof(struct pmuctx_slice_stats) / sizeof(u64))

/* Size of a read: nr, times and stamp, then per value its id and slices. */
static __always_inline size_t pmuctx_read_size(struct pmuctx_counter *c,
					       unsigned int members)
{
	u64 fmt = c->attr.read_format;
	size_t words = 1, per_value = 1;

	words += !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED);
	words += !!(fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING);
	words += !!(fmt & PMUCTX_FORMAT_STAMP);
	per_value += !!(fmt & PMUCTX_FORMAT_ID);
	if (fmt & PMUCTX_FORMAT_SLICES)
		per_value += PMUCTX_SLICE_WORDS;
	if (fmt & PMUCTX_FORMAT_GROUP)
		words += members * per_value;
	else
		words += per_value - 1;
	return words * sizeof(u64);
}

/* struct pmuctx_slice_stats, word by word. */
static unsigned int pmuctx_put_slices(u64 *out, const struct pmuctx_slices *s)
{
	out[0] = s->n;
	out[1] = (u64)s->cc;
	out[2] = (u64)(s->cc >> 64);
	out[3] = (u64)s->ct;
	out[4] = (u64)(s->ct >> 64);
	out[5] = (u64)s->tt;
	out[6] = (u64)(s->tt >> 64);
	return PMUCTX_SLICE_WORDS;
}

/*
 * A read format that asks for the value alone: no times, no slices (struct
 * pmuctx_reading.value_only).
 */
static bool pmuctx_format_value_only(u64 fmt)
{
	return !(fmt & (PMUCTX_FORMAT_TOTAL_TIME_ENABLED |
			PMUCTX_FORMAT_TOTAL_TIME_RUNNING | PMUCTX_FORMAT_SLICES));
}

/*
 * A sliced read's words: the plain read's (pmuctx_read_plain(), the same
 * order, uapi.rst), then the slice statistics.  @sl zeroed.
 */
static unsigned int pmuctx_read_words(struct pmuctx_counter *c, u64 *words,
				      struct pmuctx_slices *sl)
{
	struct pmuctx_reading rd = { .slices = sl };
	u64 fmt = c->attr.read_format;
	unsigned int n = 0;

	pmuctx_counter_family_read(c, &rd);
	words[n++] = rd.value;
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED)
		words[n++] = rd.enabled;
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING)
		words[n++] = rd.running;
	if (fmt & PMUCTX_FORMAT_ID)
		words[n++] = c->id;
	if (fmt & PMUCTX_FORMAT_STAMP)
		words[n++] = pmuctx_ctx_stamp(c->ctx);
	return n + pmuctx_put_slices(&words[n], sl);
}

/*
 * A read's few words, stored one by one: for a handful of words
 * copy_to_user() costs more than all of the read's own work.
 */
static ssize_t pmuctx_copy_words(char __user *buf, size_t count,
				 const u64 *words, unsigned int n)
{
	u64 __user *out = (u64 __user *)buf;
	size_t size = n * sizeof(u64);
	unsigned int i;

	if (count < size)
		return -ENOSPC;
	if (!user_write_access_begin(out, size))
		return -EFAULT;
	for (i = 0; i < n; i++)
		unsafe_put_user(words[i], &out[i], fault);
	user_write_access_end();
	return size;
fault:
	user_write_access_end();
	return -EFAULT;
}

/*
 * Out of line, as the group read: their buffers and 128-bit sums would
 * otherwise be in the plain read's frame, which the kernel zeroes on
 * every call (INIT_STACK_ALL_ZERO).
 */
static noinline ssize_t pmuctx_read_sliced(struct pmuctx_counter *c,
					   char __user *buf, size_t count)
{
	u64 words[5 + PMUCTX_SLICE_WORDS];
	struct pmuctx_slices sl = {};

	return pmuctx_copy_words(buf, count, words,
				 pmuctx_read_words(c, words, &sl));
}

static noinline ssize_t pmuctx_read_group(struct pmuctx_counter *c,
					  char __user *buf, size_t count)
{
	u64 fmt = c->attr.read_format, *out;
	struct pmuctx_context *ctx = c->ctx;
	unsigned int members = 1, n = 0;
	struct pmuctx_counter *leader, *m;
	struct pmuctx_slices sl = {};
	struct pmuctx_reading rd = {
		.slices = fmt & PMUCTX_FORMAT_SLICES ? &sl : NULL,
		.value_only = pmuctx_format_value_only(fmt),
	};
	ssize_t ret;
	size_t size;

	/* The group cannot change while ctx->mutex is held. */
	mutex_lock(&ctx->mutex);
	leader = c->leader;
	list_for_each_entry(m, &leader->siblings, sibling_entry)
		members++;
	size = pmuctx_read_size(c, members);
	ret = -ENOSPC;
	if (count < size)
		goto unlock;
	ret = -ENOMEM;
	out = kmalloc(size, GFP_KERNEL);
	if (!out)
		goto unlock;

	/* A group is on the PMU as a unit: the leader's times are its. */
	pmuctx_counter_family_read(leader, &rd);
	out[n++] = members;
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED)
		out[n++] = rd.enabled;
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING)
		out[n++] = rd.running;
	if (fmt & PMUCTX_FORMAT_STAMP)
		out[n++] = pmuctx_ctx_stamp(ctx);
	out[n++] = rd.value;
	if (fmt & PMUCTX_FORMAT_ID)
		out[n++] = leader->id;
	if (rd.slices)
		n += pmuctx_put_slices(&out[n], &sl);
	list_for_each_entry(m, &leader->siblings, sibling_entry) {
		memset(&sl, 0, sizeof(sl));
		pmuctx_counter_family_read(m, &rd);
		out[n++] = rd.value;
		if (fmt & PMUCTX_FORMAT_ID)
			out[n++] = m->id;
		if (rd.slices)
			n += pmuctx_put_slices(&out[n], &sl);
	}
	mutex_unlock(&ctx->mutex);
	/* Not under ctx->mutex: a fault takes mmap_lock, which mmap() holds. */
	ret = copy_to_user(buf, out, size) ? -EFAULT : size;
	kfree(out);
	return ret;
unlock:
	mutex_unlock(&ctx->mutex);
	return ret;
}

/*
 * The plain read (no GROUP, no SLICES): value, then the words its format
 * asks for (in the order of pmuctx_read_words()), stored one by one.  For
 * these few words copy_to_user() costs more than the whole reading
 * (x86_64: ~130 guest instructions of the ~950 of a read()).
 */
static ssize_t pmuctx_read_plain(struct pmuctx_counter *c,
				 char __user *buf, size_t count)
{
	u64 fmt = c->attr.read_format, stamp = 0;
	u64 __user *out = (u64 __user *)buf;
	size_t size = pmuctx_read_size(c, 1);
	struct pmuctx_reading rd;

	if (count < size)
		return -ENOSPC;
	rd.slices = NULL;
	rd.value_only = pmuctx_format_value_only(fmt);
	pmuctx_counter_family_read(c, &rd);
	if (fmt & PMUCTX_FORMAT_STAMP)
		stamp = pmuctx_ctx_stamp(c->ctx);
	if (!user_write_access_begin(out, size))
		return -EFAULT;
	unsafe_put_user(rd.value, out++, fault);
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_ENABLED)
		unsafe_put_user(rd.enabled, out++, fault);
	if (fmt & PMUCTX_FORMAT_TOTAL_TIME_RUNNING)
		unsafe_put_user(rd.running, out++, fault);
	if (fmt & PMUCTX_FORMAT_ID)
		unsafe_put_user(c->id, out++, fault);
	if (fmt & PMUCTX_FORMAT_STAMP)
		unsafe_put_user(stamp, out, fault);
	user_write_access_end();
	return size;
fault:
	user_write_access_end();
	return -EFAULT;
}

static ssize_t pmuctx_counter_read(struct file *file, char __user *buf,
				   size_t count, loff_t *ppos)
{
	struct pmuctx_counter *c = file->private_data;
	u64 fmt = c->attr.read_format;

	if (fmt & PMUCTX_FORMAT_GROUP)
		return pmuctx_read_group(c, buf, count);
	if (fmt & PMUCTX_FORMAT_SLICES)
		return pmuctx_read_sliced(c, buf, count);
	return pmuctx_read_plain(c, buf, count);
}

static void pmuctx_family_apply(struct pmuctx_counter *c, enum pmuctx_group_op op)
{
	if (op == PMUCTX_GROUP_RESET)
		pmuctx_counter_family_reset(c);
	else
		pmuctx_counter_family_enable(c, op == PMUCTX_GROUP_ENABLE);
}

/*
 * Apply @op to the counter, or with PMUCTX_IOC_FLAG_GROUP to its group: at
 * one instant when the group is not inherited, member by member (each
 * with its clones) when it is.
 */
static long pmuctx_counter_for_group(struct pmuctx_counter *c,
				     unsigned long arg, enum pmuctx_group_op op)
{
	struct pmuctx_context *ctx = c->ctx;
	struct pmuctx_counter *m;

	if (arg & ~(unsigned long)PMUCTX_IOC_FLAG_GROUP)
		return -EINVAL;
	if (!(arg & PMUCTX_IOC_FLAG_GROUP)) {
		pmuctx_family_apply(c, op);
		return 0;
	}
	mutex_lock(&ctx->mutex);
	/* Members share their leader's inheritance (pmuctx_group_leader()). */
	if (!c->leader->fam->shards) {
		pmuctx_counter_group_apply(c->leader, op);
	} else {
		pmuctx_family_apply(c->leader, op);
		list_for_each_entry(m, &c->leader->siblings, sibling_entry)
			pmuctx_family_apply(m, op);
	}
	mutex_unlock(&ctx->mutex);
	return 0;
}

static void pmuctx_ctx_stats_add(struct pmuctx_context *ctx,
				 struct pmuctx_ctx_stats *st, bool *dead)
{
	unsigned long flags;

	pmuctx_ctx_lock_irqsave(ctx, flags);
	st->tree_loads += ctx->loads;
	st->tree_swaps += pmuctx_ctx_swaps(ctx);
	st->tree_rotations += ctx->rotations;
	st->tree_handoffs += ctx->handoffs;
	if (dead)
		*dead = ctx->dead;
	pmuctx_ctx_unlock_irqrestore(ctx, flags);
}

/* A stats walk: the statistics, and the original's own to restart from. */
struct pmuctx_stats_walk {
	struct pmuctx_ctx_stats st, own;
};

static void pmuctx_stats_restart(void *arg)
{
	struct pmuctx_stats_walk *w = arg;

	w->st = w->own;
}

static bool pmuctx_stats_shard(struct pmuctx_family_shard *sh, void *arg)
{
	struct pmuctx_ctx_stats *st = &((struct pmuctx_stats_walk *)arg)->st;
	struct pmuctx_counter *clone;
	bool dead;

	st->tree_loads += sh->child_loads;
	st->tree_swaps += sh->child_swaps;
	st->tree_rotations += sh->child_rotations;
	st->tree_handoffs += sh->child_handoffs;
	st->exited_tasks += sh->exited_clones;
	list_for_each_entry(clone, &sh->children, child_entry) {
		pmuctx_ctx_stats_add(clone->ctx, st, &dead);
		if (dead)
			st->exited_tasks++;
		else
			st->live_tasks++;
	}
	return true;
}

static long pmuctx_ioctl_stats(struct pmuctx_counter *c,
			       struct pmuctx_ctx_stats __user *ustats)
{
	struct pmuctx_context *ctx = c->ctx;
	struct pmuctx_stats_walk w;
	struct pmuctx_ctx_stats st;
	long usize;
	bool dead;

	usize = pmuctx_copy_sized(&st, sizeof(st), ustats,
				  offsetofend(struct pmuctx_ctx_stats, swaps));
	if (usize < 0)
		return usize;
	memset(&st, 0, sizeof(st));
	st.size = min_t(u32, usize, sizeof(st));

	pmuctx_ctx_lock_irq(ctx);
	st.nr_counters = ctx->nr_counters;
	st.generation = pmuctx_cookie_for_user(ctx->generation);
	st.family = pmuctx_cookie_for_user(ctx->family);
	st.loads = ctx->loads;
	st.swaps = pmuctx_ctx_swaps(ctx);
	st.rotations = ctx->rotations;
	st.handoffs = ctx->handoffs;
	dead = ctx->dead;
	pmuctx_ctx_unlock_irq(ctx);
	st.tree_loads = st.loads;
	st.tree_swaps = st.swaps;
	st.tree_rotations = st.rotations;
	st.tree_handoffs = st.handoffs;
	if (dead)
		st.exited_tasks++;
	else
		st.live_tasks++;

	w.st = st;
	w.own = st;
	pmuctx_family_walk(c->fam, pmuctx_stats_restart, pmuctx_stats_shard, &w);
	st = w.st;
	st.inherit_failed = atomic64_read(&c->fam->inherit_failed);

	return copy_to_user(ustats, &st, st.size) ? -EFAULT : 0;
}

/* One entry per live instance; holders that exited count as exited. */
static void pmuctx_tree_visit(struct pmuctx_counter *c,
			      struct pmuctx_tree_read *tr,
			      struct pmuctx_tree_entry *ents, u32 room)
{
	struct pmuctx_context *ctx = c->ctx;
	u64 clk[PMUCTX_NR_CLOCKS], v, e, r;
	unsigned long flags;
	u32 tid = 0;
	bool dead;

	pmuctx_ctx_lock_irqsave(ctx, flags);
	pmuctx_ctx_clocks_now(ctx, clk);
	v = pmuctx_counter_value(c, clk);
	pmuctx_counter_times(c, clk, &e, &r);
	dead = ctx->dead || !ctx->task;
	if (!dead)
		tid = task_pid_vnr(ctx->task);
	pmuctx_ctx_unlock_irqrestore(ctx, flags);

	tr->total += v;
	if (dead) {
		tr->exited_value += v;
		tr->exited_tasks++;
		return;
	}
	if (tr->nr_entries < room) {
		ents[tr->nr_entries].tid = tid;
		ents[tr->nr_entries].value = v;
		ents[tr->nr_entries].time_enabled = e;
		ents[tr->nr_entries].time_running = r;
	}
	tr->nr_entries++;
}

/* A tree read: the entries so far, and the original's own to restart from. */
struct pmuctx_tree_walk {
	struct pmuctx_tree_read tr, own;
	struct pmuctx_tree_entry *ents;
	u32 room;
};

static void pmuctx_tree_restart(void *arg)
{
	struct pmuctx_tree_walk *w = arg;

	w->tr = w->own;
}

static bool pmuctx_tree_shard(struct pmuctx_family_shard *sh, void *arg)
{
	struct pmuctx_tree_walk *w = arg;
	struct pmuctx_counter *clone;

	w->tr.total += sh->child_value;
	w->tr.exited_value += sh->child_value;
	w->tr.exited_tasks += sh->exited_clones;
	list_for_each_entry(clone, &sh->children, child_entry)
		pmuctx_tree_visit(clone, &w->tr, w->ents, w->room);
	return true;
}

static long pmuctx_ioctl_tree_read(struct pmuctx_counter *c,
				   struct pmuctx_tree_read __user *utr)
{
	struct pmuctx_tree_entry *ents = NULL;
	struct pmuctx_tree_walk w;
	struct pmuctx_tree_read tr;
	long ret;
	u32 room;

	ret = pmuctx_copy_sized(&tr, sizeof(tr), utr, sizeof(tr));
	if (ret < 0)
		return ret;
	ret = 0;
	room = min_t(u32, tr.nr_entries, PMUCTX_TREE_MAX_ENTRIES);
	if (room) {
		ents = kvcalloc(room, sizeof(*ents), GFP_KERNEL);
		if (!ents)
			return -ENOMEM;
	}
	tr.nr_entries = 0;
	tr.total = 0;
	tr.exited_value = 0;
	tr.exited_tasks = 0;

	/*
	 * The original's value is read once, for its own field and for the
	 * total: the reader is often its holder, and a switch of the reader
	 * between two readings (an inherited context-switch counter) made
	 * the total one more than its parts.
	 */
	pmuctx_tree_visit(c, &tr, ents, room);
	tr.own_value = tr.total;
	w.tr = tr;
	w.own = tr;
	w.ents = ents;
	w.room = room;
	pmuctx_family_walk(c->fam, pmuctx_tree_restart, pmuctx_tree_shard, &w);
	tr = w.tr;

	if (tr.nr_entries > room)
		ret = -ERANGE;
	else if (room && copy_to_user(u64_to_user_ptr(tr.entries), ents,
				      tr.nr_entries * sizeof(*ents)))
		ret = -EFAULT;
	tr.size = sizeof(tr);
	if (!ret || ret == -ERANGE)
		if (copy_to_user(utr, &tr, sizeof(tr)))
			ret = -EFAULT;
	kvfree(ents);
	return ret;
}

/*
 * Take the oldest samples out of the ring: each in @stride bytes of the
 * caller's, a call chain's entries (PMUCTX_ATTR_CALLCHAIN) after the
 * struct as far as they fit; a counter with a user part
 * (struct pmuctx_sample_user) has room for a whole chain, then that part,
 * and the stride must hold it all.
 */
static long pmuctx_ioctl_samples(struct pmuctx_counter *c,
				 struct pmuctx_samples_read __user *ureq)
{
	struct pmuctx_sample_ring *ring = c->fam->samples;
	struct pmuctx_samples_read req;
	u64 (*chains)[PMUCTX_CALLCHAIN_MAX] = NULL;
	u8 __user *out;
	struct pmuctx_sample *buf;
	u8 *users = NULL;
	unsigned long flags;
	u32 n = 0, i, stride, fill, room = 0, idx, user_off = 0;
	long usize, ret;

	usize = pmuctx_copy_sized(&req, sizeof(req), ureq,
				  offsetofend(struct pmuctx_samples_read, overflows));
	if (usize < 0)
		return usize;
	if (!ring || req.__reserved)
		return -EINVAL;
	/* A caller's sample as big as it says, up to a page: E2BIG beyond. */
	stride = req.sample_size ?: PMUCTX_SAMPLE_SIZE_VER0;
	if (stride < PMUCTX_SAMPLE_SIZE_VER0 || stride % sizeof(u64))
		return -EINVAL;
	if (ring->user) {
		user_off = PMUCTX_SAMPLE_SIZE_VER2 +
			   (ring->chains ? sizeof(*chains) : 0);
		if (stride < user_off + ring->user_bytes)
			return -EINVAL;
	}
	if (stride > max_t(u32, PAGE_SIZE, user_off + ring->user_bytes))
		return -E2BIG;
	fill = min_t(u32, stride, sizeof(*buf));
	req.nr = min_t(u32, req.nr, ring->cap);
	buf = kcalloc(max_t(u32, req.nr, 1), sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (ring->chains && stride > sizeof(*buf)) {
		room = min_t(u32, (stride - sizeof(*buf)) / sizeof(u64),
			     PMUCTX_CALLCHAIN_MAX);
		chains = kvcalloc(max_t(u32, req.nr, 1), sizeof(*chains),
				  GFP_KERNEL);
		if (!chains) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (ring->user) {
		/* At most the ring's PMUCTX_SAMPLE_USER_RING_BYTES. */
		users = kvmalloc_array(max_t(u32, req.nr, 1), ring->user_bytes,
				       GFP_KERNEL);
		if (!users) {
			ret = -ENOMEM;
			goto out;
		}
	}
	raw_spin_lock_irqsave(&ring->lock, flags);
	while (n < req.nr && ring->tail != ring->head) {
		idx = ring->tail % PMUCTX_SAMPLE_RING;
		buf[n] = ring->buf[idx];
		buf[n].nr_callchain = min(buf[n].nr_callchain, room);
		if (chains)
			memcpy(chains[n], ring->chains[idx],
			       buf[n].nr_callchain * sizeof(u64));
		if (users) {
			const struct pmuctx_sample_user *u =
				pmuctx_ring_user(ring, ring->tail);

			/* The stack bytes not copied are stale: not given out. */
			memcpy(users + n * ring->user_bytes, u,
			       pmuctx_sample_user_len(u));
		}
		n++;
		ring->tail++;
	}
	req.lost = ring->lost;
	raw_spin_unlock_irqrestore(&ring->lock, flags);
	req.overflows = atomic64_read(&c->fam->overflows);
	req.size = min_t(u32, usize, sizeof(req));
	req.sample_size = fill;
	ret = 0;
	out = u64_to_user_ptr(req.samples);
	for (i = 0; i < n && !ret; i++, out += stride) {
		u32 end = fill + (chains ? buf[i].nr_callchain * sizeof(u64) : 0);

		if (copy_to_user(out, &buf[i], fill) ||
		    (end > fill &&
		     copy_to_user(out + fill, chains[i], end - fill)))
			ret = -EFAULT;
		if (!ret && users) {
			const struct pmuctx_sample_user *u =
				(const void *)(users + i * ring->user_bytes);
			u32 bytes = pmuctx_sample_user_len(u);

			if (clear_user(out + end, user_off - end) ||
			    copy_to_user(out + user_off, u, bytes))
				ret = -EFAULT;
			end = user_off + bytes;
		}
		if (!ret && stride > end && clear_user(out + end, stride - end))
			ret = -EFAULT;
	}
	req.nr = n;
	if (!ret && copy_to_user(ureq, &req, req.size))
		ret = -EFAULT;
out:
	kvfree(users);
	kvfree(chains);
	kfree(buf);
	return ret;
}

static long pmuctx_counter_ioctl(struct file *file, unsigned int cmd,
				 unsigned long arg)
{
	struct pmuctx_counter *c = file->private_data;
	void __user *uarg = (void __user *)arg;

	cmd = pmuctx_ioc_sized(cmd, PMUCTX_IOC_STATS);
	switch (pmuctx_ioc_sized(cmd, PMUCTX_IOC_RANGE)) {
	case PMUCTX_IOC_ENABLE:
		return pmuctx_counter_for_group(c, arg, PMUCTX_GROUP_ENABLE);
	case PMUCTX_IOC_DISABLE:
		return pmuctx_counter_for_group(c, arg, PMUCTX_GROUP_DISABLE);
	case PMUCTX_IOC_RESET:
		return pmuctx_counter_for_group(c, arg, PMUCTX_GROUP_RESET);
	case PMUCTX_IOC_ID:
		return put_user(c->id, (u64 __user *)uarg);
	case PMUCTX_IOC_STATS:
		return pmuctx_ioctl_stats(c, uarg);
	case PMUCTX_IOC_TREE_READ:
		return pmuctx_ioctl_tree_read(c, uarg);
	case PMUCTX_IOC_SAMPLES:
		return pmuctx_ioctl_samples(c, uarg);
	case PMUCTX_IOC_RANGE:
		return pmuctx_range_ioctl_counter(c, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * Readable while overflow samples wait in the ring; hang-up once the
 * counted task and every clone's task are gone.
 */
static __poll_t pmuctx_counter_poll(struct file *file, poll_table *wait)
{
	struct pmuctx_counter *c = file->private_data;
	__poll_t events = 0;
	unsigned long flags;
	bool dead, live;

	poll_wait(file, &c->fam->waitq, wait);
	if (c->fam->samples) {
		raw_spin_lock_irqsave(&c->fam->samples->lock, flags);
		if (c->fam->samples->head != c->fam->samples->tail)
			events |= EPOLLIN | EPOLLRDNORM;
		raw_spin_unlock_irqrestore(&c->fam->samples->lock, flags);
	}
	pmuctx_ctx_lock_irq(c->ctx);
	dead = c->ctx->dead;
	pmuctx_ctx_unlock_irq(c->ctx);
	live = pmuctx_family_has_live_clones(c);
	if (dead && !live)
		events |= EPOLLHUP;
	return events;
}

/* The instance of @c that counts in @ctx: the counter or one of its clones. */
static struct pmuctx_counter *pmuctx_instance_in(struct pmuctx_context *ctx,
						 struct pmuctx_counter *c)
{
	struct pmuctx_counter *x;

	list_for_each_entry(x, &ctx->counters, ctx_entry)
		if (x == c || x->parent == c)
			return x;
	return NULL;
}

/*
 * Map a self-read page of the caller's own instance of this counter (its
 * clone, in an inherited child): pmuctx's layout at offset 0, perf's at
 * PAGE_SIZE (overflow.c), one page each.  Mapped contexts swap only with
 * mapped ones, and the pages go with their tasks (pmuctx_swap_user_pages()).
 */
static int pmuctx_counter_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pmuctx_counter *c = file->private_data, *inst;
	struct page *page, *spare;
	struct pmuctx_context *ctx;
	struct pmuctx_link *link;
	int err = 0;

	if (vma->vm_pgoff > 1 || vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	/*
	 * pmuctx's page is read-only.  perf's may be mapped writable, as
	 * perf's own is (PAPI and libperf map it PROT_READ | PROT_WRITE):
	 * the kernel only writes it and never reads a decision from it, and
	 * it belongs to the task that maps it (security.rst).
	 */
	if ((vma->vm_flags & VM_WRITE) && !vma->vm_pgoff)
		return -EPERM;
	if (!pmuctx_counter_is_hw(c) || !pmuctx_hw->counter_width)
		return -ENODEV;
	link = pmuctx_link_lookup(current);
	if (!link)
		return -EINVAL;
	ctx = pmuctx_link_pin_ctx(link);
	if (!ctx) {
		pmuctx_link_put(link);
		return -ESRCH;
	}
	spare = pmuctx_user_pages_alloc();
	if (!spare) {
		err = -ENOMEM;
		goto unpin;
	}

	/*
	 * mmap_lock is held here, and read() may fault under ctx->mutex:
	 * ctx->lock alone (enough to walk the counters) keeps them apart.
	 */
	pmuctx_ctx_lock_irq(ctx);
	inst = pmuctx_instance_in(ctx, c);
	if (!inst) {
		err = -EINVAL;
	} else if (!inst->user_page) {
		inst->user_page = spare;
		spare = NULL;
		pmuctx_ctx_mapped(ctx, 1);
		/* Reload to grant EL0 access, which only mapped contexts get. */
		if (ctx->loaded_cpu == smp_processor_id()) {
			pmuctx_hw->unload(ctx);
			pmuctx_hw->load(ctx);
		}
		pmuctx_ctx_update_user_pages(ctx);
	}
	page = inst ? inst->user_page : NULL;
	if (page && vma->vm_pgoff) {
		/* Written from its first map on: write it now. */
		if (pmuctx_user_pages_map_perf(page))
			pmuctx_ctx_update_user_pages(ctx);
		page = pmuctx_nth_page(page, 1);
	}
	if (page)
		get_page(page);
	pmuctx_ctx_unlock_irq(ctx);

	if (page) {
		pmuctx_vma_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
		if (!vma->vm_pgoff)
			pmuctx_vma_flags_clear(vma, VM_MAYWRITE);
		err = vm_insert_page(vma, vma->vm_start, page);
		put_page(page);
	}
	if (spare)
		pmuctx_user_pages_free(spare);
unpin:
	pmuctx_ctx_unpin(ctx);
	pmuctx_link_put(link);
	return err;
}

/* fcntl(F_SETFL, O_ASYNC): SIGIO (or F_SETSIG's signal) on overflow. */
static int pmuctx_counter_fasync(int fd, struct file *file, int on)
{
	struct pmuctx_counter *c = file->private_data;

	return fasync_helper(fd, file, on, &c->fam->fasync);
}

/*
 * No .owner: the VFS would take a module reference per file, a global
 * atomic on every open and close (issue 26).  The file counts itself as
 * one of the module's users instead (users.c), from its creation to the
 * end of its release.
 */
static const struct file_operations pmuctx_counter_fops = {
	.release = pmuctx_counter_release,
	.read = pmuctx_counter_read,
	.poll = pmuctx_counter_poll,
	.fasync = pmuctx_counter_fasync,
	.mmap = pmuctx_counter_mmap,
	.unlocked_ioctl = pmuctx_counter_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/* No .llseek: -ESPIPE on every kernel (6.12 removed no_llseek). */
};

static const struct file_operations pmuctx_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = pmuctx_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * The kernel release the module was built against (its vermagic's), for
 * pmuctx info: a DKMS tree built for several kernels says which this is.
 */
static ssize_t built_for_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%s\n", UTS_RELEASE);
}
static DEVICE_ATTR_RO(built_for);

static struct attribute *pmuctx_dev_attrs[] = {
	&dev_attr_built_for.attr,
	NULL,
};
ATTRIBUTE_GROUPS(pmuctx_dev);

static struct miscdevice pmuctx_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "pmuctx",
	.fops = &pmuctx_dev_fops,
	.mode = 0666,
	.groups = pmuctx_dev_groups,
};

int pmuctx_dev_register(void)
{
	return misc_register(&pmuctx_miscdev);
}

void pmuctx_dev_unregister(void)
{
	misc_deregister(&pmuctx_miscdev);
}
