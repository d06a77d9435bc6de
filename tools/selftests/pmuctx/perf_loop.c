// SPDX-License-Identifier: GPL-2.0
/*
 * perf_compat_test.sh's workload: a loop of exactly two user-mode
 * instructions per iteration, run N times (argv[1]), so that two runs
 * differ by exactly 2 * (N2 - N1) instructions:u whoever counts them;
 * with argv[2] = C it first forks C children that run the same loop (an
 * inherited count), and waits for them.  Nothing depends on the pids fork
 * returns (a shell formats them), so even an inherited count is the same
 * in every run.  Static, so no loader and no LD_PRELOAD runs in it.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user_loop.h"

static void loop(unsigned long n)
{
	two_instruction_loop(n);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long children = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	unsigned long i;
	int status, ret = 0;

	for (i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			loop(n);
			_exit(0);
		}
	}
	loop(n);
	for (i = 0; i < children; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			ret = 1;
	return ret;
}
