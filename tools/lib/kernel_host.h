/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types and helpers that the module's pure computations
 * (kernel/range_plan.c, kernel/mux_spread.h) use, for building them in
 * userspace (libpmuctx, host tests).  The module build includes the
 * kernel's own headers instead.
 */
#ifndef PMUCTX_KERNEL_HOST_H
#define PMUCTX_KERNEL_HOST_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t u64;
typedef uint32_t u32;

#ifndef BIT
#define BIT(nr) (1UL << (nr))
#endif
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef U32_MAX
#define U32_MAX UINT32_MAX
#endif
#ifndef min
#define min(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Kernel semantics: __ffs64(0) is undefined, fls64(0) is 0. */
static inline unsigned long __ffs64(u64 word)
{
	return __builtin_ctzll(word);
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

#endif
