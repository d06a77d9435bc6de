// SPDX-License-Identifier: GPL-2.0
/*
 * Helper for stat_test.sh's address-range counts: accesses whose number is
 * known exactly, to an array and a function whose addresses it prints.
 *
 *   range_target where
 *	"words 0x... hit 0x...": range_target_words (4 aligned 8-byte
 *	words) and range_target_hit()
 *   range_target run W R C [fork] [settle]
 *	W rounds of one store to each word, R rounds of one load from each,
 *	C calls of range_target_hit(); with "fork", a child does the same
 *	again, so an inherited counter sees twice as much; with "settle",
 *	each access to a word is followed by a store and a load outside the
 *	words (stat_test.sh says why QEMU's x86 watchpoints need them)
 *
 * Static and not position-independent (-no-pie in the Makefile), so the
 * addresses "where" prints are those of every later run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Alone in its 64 bytes: a range that a plan widens to the whole block
 * sees no other variable's accesses.
 */
struct range_target_block {
	uint64_t words[4];
	uint64_t unused[4];
} __attribute__((aligned(64)));

struct range_target_block range_target_block;
#define range_target_words range_target_block.words

/* Called, never inlined: one execution of its first instruction per call. */
__attribute__((noinline)) void range_target_hit(void)
{
	__asm__ volatile("" ::: "memory");
}

/*
 * volatile: every store and load is one access, none merged or moved away.
 * @settle: a store to unused[0] and a load of unused[1], outside any range
 * the tests watch, after each access to a word.
 */
static void work(unsigned long writes, unsigned long reads, unsigned long calls, int settle)
{
	volatile uint64_t *w = range_target_words;
	volatile uint64_t *outside = range_target_block.unused;
	void (*volatile hit)(void) = range_target_hit;
	unsigned long i, sum = 0;
	int k;

	for (i = 0; i < writes; i++)
		for (k = 0; k < 4; k++) {
			w[k] = i;
			if (settle) {
				outside[0] = i;
				sum += outside[1];
			}
		}
	for (i = 0; i < reads; i++)
		for (k = 0; k < 4; k++) {
			sum += w[k];
			if (settle) {
				outside[0] = i;
				sum += outside[1];
			}
		}
	for (i = 0; i < calls; i++)
		hit();
	/* the sum is used, so the loads stay */
	if (sum == 1)
		fputs("", stderr);
}

int main(int argc, char **argv)
{
	unsigned long writes, reads, calls;
	int do_fork = 0, settle = 0, i;
	pid_t child = -1;

	if (argc == 2 && !strcmp(argv[1], "where")) {
		printf("words 0x%lx hit 0x%lx\n", (unsigned long)range_target_words,
		       (unsigned long)range_target_hit);
		return 0;
	}
	for (i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "fork"))
			do_fork = 1;
		else if (!strcmp(argv[i], "settle"))
			settle = 1;
		else
			break;
	}
	if (argc < 5 || i < argc || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: range_target where | range_target run WRITES READS CALLS [fork] [settle]\n");
		return 2;
	}
	writes = strtoul(argv[2], NULL, 0);
	reads = strtoul(argv[3], NULL, 0);
	calls = strtoul(argv[4], NULL, 0);
	if (do_fork) {
		child = fork();
		if (child < 0) {
			perror("fork");
			return 1;
		}
	}
	work(writes, reads, calls, settle);
	if (child > 0) {
		int status;

		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	return 0;
}
