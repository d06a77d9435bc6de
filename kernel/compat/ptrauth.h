/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64: a user return address without its pointer-authentication code.
 * ptrauth_strip_insn_pac() until 6.1; later kernels split it into
 * ptrauth_strip_user_insn_pac() and ptrauth_strip_kernel_insn_pac().  The
 * new name is a macro (asm/compiler.h, included by every compile): its
 * definition is its own probe.
 */
#ifndef PMUCTX_COMPAT_PTRAUTH_H
#define PMUCTX_COMPAT_PTRAUTH_H

#ifdef CONFIG_ARM64
#include <asm/pointer_auth.h>

static inline unsigned long pmuctx_strip_user_pac(unsigned long ret)
{
#ifdef ptrauth_strip_user_insn_pac
	return ptrauth_strip_user_insn_pac(ret);
#else
	return ptrauth_strip_insn_pac(ret);
#endif
}
#endif

#endif
