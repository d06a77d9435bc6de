// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's call chain.  Its user part comes from the frame records the
 * task's code keeps (frame pointers: x86-64's rbp, arm64's x29): the
 * interrupted user PC, then each frame's return address, innermost first,
 * as perf's kernel walks them.  Code built without frame pointers gives a short or a
 * wrong chain, on perf as here.  Called with ctx->lock held in the PMU
 * interrupt (arm64), the overflow NMI's hard irq_work (x86) or a range
 * hit's exception, on the sampled task's own CPU and mm: the reads never
 * fault (copy_from_user_nofault(): a page not present ends the chain).
 */
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>
#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>
#endif
#include "pmuctx.h"
#include "compat/ptrauth.h"

/* What a frame pointer points at, on both architectures. */
struct pmuctx_frame_record {
	unsigned long caller_fp;
	unsigned long ret;	/* the return address into the caller */
};

/* 32-bit tasks keep other frame records: no chain for them. */
bool pmuctx_user_regs_native(struct pt_regs *regs)
{
#if defined(CONFIG_X86_64)
	return user_64bit_mode(regs);
#elif defined(CONFIG_ARM64)
	return !compat_user_mode(regs);
#else
	return false;
#endif
}

static unsigned long pmuctx_strip_ret(unsigned long ret)
{
#ifdef CONFIG_ARM64
	/* return addresses signed by pointer authentication (pac-ret) */
	return pmuctx_strip_user_pac(ret);
#else
	return ret;
#endif
}

unsigned int pmuctx_user_callchain(struct pt_regs *regs, u64 *ips,
				   unsigned int max)
{
	struct pmuctx_frame_record rec;
	unsigned long fp;
	unsigned int n = 0;

	if (!max || !regs || !user_mode(regs) || !pmuctx_user_regs_native(regs))
		return 0;
	ips[n++] = instruction_pointer(regs);
	fp = frame_pointer(regs);
	while (n < max) {
		if (!fp || fp & (sizeof(unsigned long) - 1))
			break;
		if (copy_from_user_nofault(&rec, (const void __user *)fp,
					   sizeof(rec)))
			break;
		rec.ret = pmuctx_strip_ret(rec.ret);
		if (!rec.ret)
			break;
		ips[n++] = rec.ret;
		/* The stack grows down: a caller's frame lies above. */
		if (rec.caller_fp <= fp)
			break;
		fp = rec.caller_fp;
	}
	return n;
}

/*
 * The kernel part, for a kernel-mode sample of a counter that counts the
 * kernel: the kernel's own unwinder (stack_trace_save(), exported where
 * the walk from given registers is not) walks the stack from where it is
 * called, through the interrupt's entry frame, which both architectures'
 * unwinders cross and report as the interrupted PC; the chain is the walk
 * from that PC on.  Where the walk never meets the PC (the registers were
 * not live on this stack) the chain has no kernel part, never a wrong one.
 *
 * The x86 backend records samples in an irq_work after the overflow NMI,
 * on another stack: its NMI walks and lends the walk here for the fold
 * of that NMI's registers (a per-CPU loan, set and cleared by the
 * irq_work with IRQs off, so nothing else on the CPU sees it).
 */
struct pmuctx_kernel_walk_loan {
	const struct pt_regs *regs;
	const unsigned long *walk;
	unsigned int nr;
};

static DEFINE_PER_CPU(struct pmuctx_kernel_walk_loan, pmuctx_kernel_walk_loan);
/* A walk's room, off the interrupt stack; used with IRQs off. */
static DEFINE_PER_CPU(unsigned long [PMUCTX_KERNEL_WALK], pmuctx_kernel_walk);

/* IRQs off.  @regs NULL ends the loan. */
void pmuctx_lend_kernel_walk(const struct pt_regs *regs,
			     const unsigned long *walk, unsigned int nr)
{
	struct pmuctx_kernel_walk_loan *loan = this_cpu_ptr(&pmuctx_kernel_walk_loan);

	loan->regs = regs;
	loan->walk = walk;
	loan->nr = nr;
}

static unsigned int pmuctx_chain_from_walk(struct pt_regs *regs,
					   const unsigned long *walk,
					   unsigned int nr, u64 *ips,
					   unsigned int max)
{
	unsigned long pc = instruction_pointer(regs);
	unsigned int i = 0, n = 0;

	while (i < nr && walk[i] != pc)
		i++;
	while (i < nr && n < max)
		ips[n++] = walk[i++];
	return n;
}

unsigned int pmuctx_kernel_callchain(struct pt_regs *regs, u64 *ips,
				     unsigned int max)
{
	const struct pmuctx_kernel_walk_loan *loan;
	unsigned long *walk, flags;
	unsigned int nr;

	if (!max || !regs || user_mode(regs))
		return 0;
	local_irq_save(flags);
	loan = this_cpu_ptr(&pmuctx_kernel_walk_loan);
	if (loan->regs == regs) {
		nr = pmuctx_chain_from_walk(regs, loan->walk, loan->nr, ips, max);
	} else {
		walk = this_cpu_ptr(&pmuctx_kernel_walk[0]);
		nr = stack_trace_save(walk, PMUCTX_KERNEL_WALK, 0);
		nr = pmuctx_chain_from_walk(regs, walk, nr, ips, max);
	}
	local_irq_restore(flags);
	return nr;
}
