// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of security_test: installed setuid root (mode 4755).  Started by
 * an unprivileged test process, it does a large known amount of work as
 * euid 0 that no counter of that user may see:
 *
 *   setuid_work PAGES LOOPS READY_FD WAIT_FD
 *
 * faults in PAGES fresh pages (exactly PAGES minor faults), runs a loop of
 * LOOPS iterations (2 * LOOPS user instructions on arm64), writes one byte
 * to READY_FD, waits for one byte on WAIT_FD and exits 0.  Exits 3 when it
 * does not run as euid 0 (not installed setuid root), 2 on bad arguments.
 *
 * For range_test, whose range counters watch addresses of the image a task
 * runs (a static, non-PIE binary: the same in every run):
 *
 *   setuid_work --where     prints the address of hot_word and exits 0
 *   setuid_work --hot N     stores to hot_word N times; exits 0 as euid 0,
 *                           4 otherwise (a copy without the setuid bit)
 *
 * For security_test's sampling case, what the new image has that its
 * unprivileged parent must never see in a sample:
 *
 *   setuid_work --aux FD    writes its AT_ENTRY (8 bytes) and its 16
 *                           AT_RANDOM bytes (glibc's stack canary and
 *                           pointer guard) to FD; exits 0 as euid 0, 3
 *                           otherwise
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

static __attribute__((noinline)) void loop(unsigned long n)
{
#if defined(__aarch64__)
	if (n)
		asm volatile("1:	subs	%0, %0, #1\n"
			     "	b.ne	1b\n" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
	if (n)
		asm volatile("1:	dec	%0\n"
			     "	jnz	1b\n" : "+r"(n) : : "cc");
#else
	volatile unsigned long i;

	for (i = 0; i < n; i++)
		;
#endif
}

static volatile unsigned long hot_word __attribute__((aligned(64)));

static int hot(int argc, char **argv)
{
	unsigned long n, i;

	if (!strcmp(argv[1], "--aux")) {
		unsigned char out[24];
		uint64_t entry = getauxval(AT_ENTRY);
		const void *rnd = (const void *)getauxval(AT_RANDOM);

		if (argc != 3 || !rnd)
			return 2;
		memcpy(out, &entry, 8);
		memcpy(out + 8, rnd, 16);
		if (write(atoi(argv[2]), out, sizeof(out)) != sizeof(out))
			return 5;
		return geteuid() == 0 ? 0 : 3;
	}
	if (!strcmp(argv[1], "--where")) {
		printf("%p\n", (void *)&hot_word);
		return 0;
	}
	if (argc != 3)
		return 2;
	n = strtoul(argv[2], NULL, 0);
	for (i = 0; i < n; i++)
		hot_word = i;
	return geteuid() == 0 ? 0 : 4;
}

int main(int argc, char **argv)
{
	long pages, psz = sysconf(_SC_PAGESIZE), chunk = 1024, done = 0, i, n;
	unsigned long loops;
	int ready, wait;
	char c = 'r';

	if (argc >= 2 && !strncmp(argv[1], "--", 2))
		return hot(argc, argv);
	if (argc != 5)
		return 2;
	pages = atol(argv[1]);
	loops = strtoul(argv[2], NULL, 0);
	ready = atoi(argv[3]);
	wait = atoi(argv[4]);
	if (geteuid() != 0)
		return 3;
	while (done < pages) {
		char *p;

		n = pages - done < chunk ? pages - done : chunk;
		p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 4;
		/* One fault per page: no transparent huge page. */
		madvise(p, n * psz, MADV_NOHUGEPAGE);
		for (i = 0; i < n; i++)
			p[i * psz] = 1;
		munmap(p, n * psz);
		done += n;
	}
	loop(loops);
	if (write(ready, &c, 1) != 1)
		return 5;
	if (read(wait, &c, 1) < 0)
		return 6;
	return 0;
}
