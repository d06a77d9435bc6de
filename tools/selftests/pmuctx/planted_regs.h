/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A loop that runs with every user register it can set planted: values
 * given by the caller (indexed in perf's register numbering for the
 * architecture), the stack pointer one of the caller's choosing (any
 * value: the loop touches no memory, and interrupts from user mode run
 * on the kernel's stack).  The samples taken between plant_loop_start and
 * plant_loop_end must report exactly those registers, and a copy of the
 * memory at the planted stack pointer.
 *
 * plant_regs_loop(n, vals, sp): 2 * n instructions in the loop.  The
 * register that counts (x86-64: CX; arm64: X16) and the flags change;
 * the rest hold vals[] throughout.
 */
#ifndef PMUCTX_PLANTED_REGS_H
#define PMUCTX_PLANTED_REGS_H

#include <stdint.h>

void plant_regs_loop(unsigned long n, const uint64_t *vals, unsigned long sp);
extern const char plant_loop_start[], plant_loop_end[];
/* Where the caller's stack pointer waits for the loop's end. */
unsigned long plant_saved_sp __attribute__((used));

#if defined(__x86_64__)
/* perf's numbering: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15 */
#define PLANT_NR_REGS		24
#define PLANT_REG_SP		7
#define PLANT_REG_IP		8
/* Not planted: the counter, SP and IP (checked apart), FLAGS, CS, SS. */
#define PLANT_UNPLANTED		((1ULL << 2) | (1ULL << 7) | (1ULL << 8) | (1ULL << 9) | \
				 (1ULL << 10) | (1ULL << 11))
/* Every register perf's kernel gives a 64-bit task (no DS, ES, FS, GS). */
#define PLANT_ALL_REGS		(((1ULL << 24) - 1) & ~(0xfULL << 12))
/* Registers perf's kernel refuses: DS, and one past R15. */
#define PLANT_BAD_REG_MASKS	{ 1ULL << 12, 1ULL << 24, 1ULL << 63 }

__asm__(
	"	.text\n"
	"	.globl	plant_regs_loop\n"
	"	.type	plant_regs_loop, @function\n"
	"plant_regs_loop:\n"
	"	push	%rbx\n"
	"	push	%rbp\n"
	"	push	%r12\n"
	"	push	%r13\n"
	"	push	%r14\n"
	"	push	%r15\n"
	"	mov	%rsp, plant_saved_sp(%rip)\n"
	"	mov	%rdi, %rcx\n"
	"	mov	%rdx, %rsp\n"
	"	mov	0*8(%rsi), %rax\n"
	"	mov	1*8(%rsi), %rbx\n"
	"	mov	3*8(%rsi), %rdx\n"
	"	mov	5*8(%rsi), %rdi\n"
	"	mov	6*8(%rsi), %rbp\n"
	"	mov	16*8(%rsi), %r8\n"
	"	mov	17*8(%rsi), %r9\n"
	"	mov	18*8(%rsi), %r10\n"
	"	mov	19*8(%rsi), %r11\n"
	"	mov	20*8(%rsi), %r12\n"
	"	mov	21*8(%rsi), %r13\n"
	"	mov	22*8(%rsi), %r14\n"
	"	mov	23*8(%rsi), %r15\n"
	"	mov	4*8(%rsi), %rsi\n"
	"	.globl	plant_loop_start\n"
	"plant_loop_start:\n"
	"1:	dec	%rcx\n"
	"	jnz	1b\n"
	"	.globl	plant_loop_end\n"
	"plant_loop_end:\n"
	"	mov	plant_saved_sp(%rip), %rsp\n"
	"	pop	%r15\n"
	"	pop	%r14\n"
	"	pop	%r13\n"
	"	pop	%r12\n"
	"	pop	%rbp\n"
	"	pop	%rbx\n"
	"	ret\n"
	"	.size	plant_regs_loop, .-plant_regs_loop\n");
#elif defined(__aarch64__)
/* perf's numbering: X0..X30 (X30 is LR), SP, PC */
#define PLANT_NR_REGS		33
#define PLANT_REG_SP		31
#define PLANT_REG_IP		32
#define PLANT_UNPLANTED		((1ULL << 16) | (1ULL << 31) | (1ULL << 32))
#define PLANT_ALL_REGS		((1ULL << 33) - 1)
/* One past PC, the SVE vector granules (VG, not offered), the top bit. */
#define PLANT_BAD_REG_MASKS	{ 1ULL << 33, 1ULL << 46, 1ULL << 63 }

__asm__(
	"	.text\n"
	"	.globl	plant_regs_loop\n"
	"	.type	plant_regs_loop, %function\n"
	"plant_regs_loop:\n"
	"	stp	x29, x30, [sp, #-112]!\n"
	"	stp	x27, x28, [sp, #16]\n"
	"	stp	x25, x26, [sp, #32]\n"
	"	stp	x23, x24, [sp, #48]\n"
	"	stp	x21, x22, [sp, #64]\n"
	"	stp	x19, x20, [sp, #80]\n"
	"	str	x18, [sp, #96]\n"
	"	mov	x9, sp\n"
	"	adrp	x10, plant_saved_sp\n"
	"	str	x9, [x10, :lo12:plant_saved_sp]\n"
	"	mov	x16, x0\n"
	"	mov	sp, x2\n"
	"	ldp	x2, x3, [x1, #16]\n"
	"	ldp	x4, x5, [x1, #32]\n"
	"	ldp	x6, x7, [x1, #48]\n"
	"	ldp	x8, x9, [x1, #64]\n"
	"	ldp	x10, x11, [x1, #80]\n"
	"	ldp	x12, x13, [x1, #96]\n"
	"	ldp	x14, x15, [x1, #112]\n"
	"	ldp	x17, x18, [x1, #136]\n"
	"	ldp	x19, x20, [x1, #152]\n"
	"	ldp	x21, x22, [x1, #168]\n"
	"	ldp	x23, x24, [x1, #184]\n"
	"	ldp	x25, x26, [x1, #200]\n"
	"	ldp	x27, x28, [x1, #216]\n"
	"	ldp	x29, x30, [x1, #232]\n"
	"	ldr	x0, [x1, #0]\n"
	"	ldr	x1, [x1, #8]\n"
	"	.globl	plant_loop_start\n"
	"plant_loop_start:\n"
	"1:	subs	x16, x16, #1\n"
	"	b.ne	1b\n"
	"	.globl	plant_loop_end\n"
	"plant_loop_end:\n"
	"	adrp	x10, plant_saved_sp\n"
	"	ldr	x9, [x10, :lo12:plant_saved_sp]\n"
	"	mov	sp, x9\n"
	"	ldr	x18, [sp, #96]\n"
	"	ldp	x19, x20, [sp, #80]\n"
	"	ldp	x21, x22, [sp, #64]\n"
	"	ldp	x23, x24, [sp, #48]\n"
	"	ldp	x25, x26, [sp, #32]\n"
	"	ldp	x27, x28, [sp, #16]\n"
	"	ldp	x29, x30, [sp], #112\n"
	"	ret\n"
	"	.size	plant_regs_loop, .-plant_regs_loop\n");
#endif

#endif
