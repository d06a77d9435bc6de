// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's user part (pmuctx_attr.sample_regs_user, sample_stack_user):
 * the sampled task's user registers in perf's numbering, and a copy of
 * its user stack from the stack pointer up, from which a DWARF unwinder
 * builds the call chain afterwards (perf record --call-graph dwarf), for
 * code that keeps no frame pointers.  Taken where call chains are
 * (callchain.c, same rules): ctx->lock held with IRQs off, on the task's
 * own CPU and mm; the copy never faults, a page not present ends it.
 */
#include <linux/bitops.h>
#include <linux/minmax.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <asm/perf_regs.h>
#include "pmuctx.h"

#if defined(CONFIG_X86_64)
/* Where each of perf's x86-64 registers is in pt_regs; -1: none. */
static const short pmuctx_x86_reg_offsets[PERF_REG_X86_64_MAX] = {
	[PERF_REG_X86_AX] = offsetof(struct pt_regs, ax),
	[PERF_REG_X86_BX] = offsetof(struct pt_regs, bx),
	[PERF_REG_X86_CX] = offsetof(struct pt_regs, cx),
	[PERF_REG_X86_DX] = offsetof(struct pt_regs, dx),
	[PERF_REG_X86_SI] = offsetof(struct pt_regs, si),
	[PERF_REG_X86_DI] = offsetof(struct pt_regs, di),
	[PERF_REG_X86_BP] = offsetof(struct pt_regs, bp),
	[PERF_REG_X86_SP] = offsetof(struct pt_regs, sp),
	[PERF_REG_X86_IP] = offsetof(struct pt_regs, ip),
	[PERF_REG_X86_FLAGS] = offsetof(struct pt_regs, flags),
	[PERF_REG_X86_CS] = offsetof(struct pt_regs, cs),
	[PERF_REG_X86_SS] = offsetof(struct pt_regs, ss),
	[PERF_REG_X86_DS] = -1,
	[PERF_REG_X86_ES] = -1,
	[PERF_REG_X86_FS] = -1,
	[PERF_REG_X86_GS] = -1,
	[PERF_REG_X86_R8] = offsetof(struct pt_regs, r8),
	[PERF_REG_X86_R9] = offsetof(struct pt_regs, r9),
	[PERF_REG_X86_R10] = offsetof(struct pt_regs, r10),
	[PERF_REG_X86_R11] = offsetof(struct pt_regs, r11),
	[PERF_REG_X86_R12] = offsetof(struct pt_regs, r12),
	[PERF_REG_X86_R13] = offsetof(struct pt_regs, r13),
	[PERF_REG_X86_R14] = offsetof(struct pt_regs, r14),
	[PERF_REG_X86_R15] = offsetof(struct pt_regs, r15),
};

/* As perf's kernel: the segment registers of a 64-bit task are refused. */
#define PMUCTX_USER_REGS_VALID						\
	(GENMASK_ULL(PERF_REG_X86_64_MAX - 1, 0) &			\
	 ~(BIT_ULL(PERF_REG_X86_DS) | BIT_ULL(PERF_REG_X86_ES) |	\
	   BIT_ULL(PERF_REG_X86_FS) | BIT_ULL(PERF_REG_X86_GS)))

static u64 pmuctx_user_reg(struct pt_regs *regs, unsigned int idx)
{
	return *(unsigned long *)((char *)regs + pmuctx_x86_reg_offsets[idx]);
}
#elif defined(CONFIG_ARM64)
/* X0..X30 (X30 is LR), SP, PC; not the SVE vector granule count (VG). */
#define PMUCTX_USER_REGS_VALID	GENMASK_ULL(PERF_REG_ARM64_MAX - 1, 0)

static u64 pmuctx_user_reg(struct pt_regs *regs, unsigned int idx)
{
	if (idx == PERF_REG_ARM64_SP)
		return regs->sp;
	if (idx == PERF_REG_ARM64_PC)
		return regs->pc;
	return regs->regs[idx];
}
#else
#define PMUCTX_USER_REGS_VALID	0ULL

static u64 pmuctx_user_reg(struct pt_regs *regs, unsigned int idx)
{
	return 0;
}
#endif

int pmuctx_sample_user_check(const struct pmuctx_attr *attr)
{
	if (attr->__reserved_1)
		return -EINVAL;
	if (!attr->sample_regs_user && !attr->sample_stack_user)
		return 0;
	if (!attr->sample_period)
		return -EINVAL;
	if (attr->sample_regs_user & ~PMUCTX_USER_REGS_VALID)
		return -EINVAL;
	if (attr->sample_stack_user > PMUCTX_SAMPLE_STACK_MAX ||
	    !IS_ALIGNED(attr->sample_stack_user, sizeof(u64)))
		return -EINVAL;
	return 0;
}

u32 pmuctx_sample_user_bytes(const struct pmuctx_attr *attr)
{
	if (!attr->sample_regs_user && !attr->sample_stack_user)
		return 0;
	return sizeof(struct pmuctx_sample_user) +
	       hweight64(attr->sample_regs_user) * sizeof(u64) +
	       attr->sample_stack_user;
}

/*
 * Copy [sp, sp + size) a page at a time, so that a page not present ends
 * the copy there and what came before it is kept; the bytes copied.
 */
static u32 pmuctx_copy_user_stack(u8 *dst, unsigned long sp, u32 size)
{
	u32 done = 0, chunk;

	while (done < size) {
		chunk = min_t(u32, size - done,
			      PAGE_SIZE - offset_in_page(sp + done));
		if (copy_from_user_nofault(dst + done,
					   (const void __user *)(sp + done),
					   chunk))
			break;
		done += chunk;
	}
	return done;
}

void pmuctx_sample_user_take(struct pt_regs *uregs, u64 mask, u32 stack_room,
			     struct pmuctx_sample_user *out)
{
	u64 *regs = (u64 *)(out + 1);
	unsigned long sp;
	unsigned int n = 0;
	u64 left = mask;

	memset(out, 0, sizeof(*out));
	if (!uregs || !user_mode(uregs) || !pmuctx_user_regs_native(uregs))
		return;
	out->abi = PERF_SAMPLE_REGS_ABI_64;
	while (left) {
		regs[n++] = pmuctx_user_reg(uregs, __ffs64(left));
		left &= left - 1;
	}
	out->nr_regs = n;

	sp = user_stack_pointer(uregs);
	if (!stack_room || !sp || sp >= TASK_SIZE)
		return;
	out->stack_size = min_t(unsigned long, stack_room, TASK_SIZE - sp);
	out->stack_dyn = pmuctx_copy_user_stack((u8 *)(regs + n), sp,
						out->stack_size);
}
