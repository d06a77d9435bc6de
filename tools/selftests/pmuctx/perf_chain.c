// SPDX-License-Identifier: GPL-2.0
/*
 * perf_record_test.sh's workload for call chains: main calls chain_outer,
 * which calls chain_inner, which runs a loop of two user-mode
 * instructions N times (argv[1]).  Built with frame pointers, each
 * function on its own (no inlining, no tail call), so every sample in the
 * loop has the chain chain_inner, chain_outer, main, as perf record -g
 * (frame pointers) reports it.  With a second argument, chain_inner
 * makes N getppid system calls instead: samples in the kernel then carry
 * the kernel's chain before those callers.  Static, as perf_loop.
 */
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "user_loop.h"

#ifndef CHAIN_NO_FRAME_RECORD
/* chain_inner's frame: taking its address gives the leaf a frame record */
void *volatile chain_inner_frame;
#endif

static int in_kernel;

__attribute__((noinline)) static void chain_inner(unsigned long n)
{
#ifndef CHAIN_NO_FRAME_RECORD
	chain_inner_frame = __builtin_frame_address(0);
#endif
	if (!in_kernel) {
		two_instruction_loop(n);
		return;
	}
	while (n--)
		syscall(SYS_getppid);
}

__attribute__((noinline)) static void chain_outer(unsigned long n)
{
	chain_inner(n);
	__asm__ volatile("" : : : "memory");	/* not a tail call */
}

int main(int argc, char **argv)
{
	in_kernel = argc > 2;
	chain_outer(argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000);
	return 0;
}
