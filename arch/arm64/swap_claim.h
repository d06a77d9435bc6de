/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The equivalent swap's two claims as two casa.  The kernel's LSE cmpxchg
 * pins its operands to x0-x2 for its LL/SC fallback's sake, which costs
 * four register moves per claim, and its feature test is repeated at
 * each; here one test covers both claims, and the second reuses the
 * first's register, which holds the key when the first succeeds.  CPUs
 * without LSE atomics take the generic claims.
 */
#ifndef PMUCTX_ARM64_SWAP_CLAIM_H
#define PMUCTX_ARM64_SWAP_CLAIM_H

#include "compat/lse.h"

#ifdef CONFIG_ARM64_LSE_ATOMICS
static __always_inline int pmuctx_swap_keys_claim(u64 *first, u64 *second,
						  u64 key)
{
	u64 claimed = key | PMUCTX_SWAP_CLAIMED, seen = key;

	if (!pmuctx_uses_lse_atomics())
		return pmuctx_swap_keys_claim_generic(first, second, key);
	/* Acquire, as the generic claim. */
	asm volatile(__LSE_PREAMBLE
		     "	casa	%[seen], %[claimed], %[key]\n"
		     : [seen] "+&r" (seen), [key] "+Q" (*first)
		     : [claimed] "r" (claimed)
		     : "memory");
	if (seen != key)
		return 0;
	asm volatile(__LSE_PREAMBLE
		     "	casa	%[seen], %[claimed], %[key]\n"
		     : [seen] "+&r" (seen), [key] "+Q" (*second)
		     : [claimed] "r" (claimed)
		     : "memory");
	return seen == key ? 2 : 1;
}

#define pmuctx_swap_keys_claim pmuctx_swap_keys_claim
#endif

#endif
