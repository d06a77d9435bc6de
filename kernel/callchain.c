// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's user call chain, from the frame records the task's code
 * keeps (frame pointers: x86-64's rbp, arm64's x29): the interrupted user
 * PC, then each frame's return address, innermost first, as perf's kernel
 * walks them.  Code built without frame pointers gives a short or a
 * wrong chain, on perf as here.  Called with ctx->lock held in the PMU
 * interrupt (arm64), the overflow NMI's hard irq_work (x86) or a range
 * hit's exception, on the sampled task's own CPU and mm: the reads never
 * fault (copy_from_user_nofault(): a page not present ends the chain).
 */
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>
#endif
#include "pmuctx.h"

/* What a frame pointer points at, on both architectures. */
struct pmuctx_frame_record {
	unsigned long caller_fp;
	unsigned long ret;	/* the return address into the caller */
};

/* 32-bit tasks keep other frame records: no chain for them. */
static bool pmuctx_regs_native(struct pt_regs *regs)
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
	return ptrauth_strip_insn_pac(ret);
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

	if (!max || !regs || !user_mode(regs) || !pmuctx_regs_native(regs))
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
