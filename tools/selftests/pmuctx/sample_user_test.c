// SPDX-License-Identifier: GPL-2.0
/*
 * Samples' user part (pmuctx_attr.sample_regs_user, sample_stack_user:
 * what perf record --call-graph dwarf unwinds from): the registers of the
 * sampled task, exactly as it had them, and a copy of its stack from the
 * stack pointer up that a page not present ends; never a kernel register,
 * whatever mode the sample was taken in; the attributes and the strides
 * checked as the ABI says.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include "pmu_test.h"
#include "planted_regs.h"
#include "kselftest_harness.h"

#define STACK_ROOM	4096
#define MAX_SAMPLES	64

/* A planted value for each register: recognisable, none an address. */
static void plant_values(uint64_t *vals)
{
	for (int i = 0; i < PLANT_NR_REGS; i++)
		vals[i] = 0x5a00000000000000ULL | (uint64_t)(i + 1) << 32 | (0x1111u * (i + 1));
}

static bool in_plant_loop(uint64_t ip)
{
	return ip >= (uintptr_t)plant_loop_start && ip < (uintptr_t)plant_loop_end;
}

/* The register @reg of a sample's user part whose counter asked for @mask. */
static uint64_t sample_reg(const struct pmuctx_sample_user *u, uint64_t mask, int reg)
{
	const uint64_t *regs = (const uint64_t *)(u + 1);

	return regs[__builtin_popcountll(mask & ((1ULL << reg) - 1))];
}

struct user_samples {
	size_t stride;
	size_t user_off;
	unsigned char *buf;
	int nr;
	int in_loop;
};

static const struct pmuctx_sample *sample_at(const struct user_samples *us, int i)
{
	return (const void *)(us->buf + i * us->stride);
}

static const struct pmuctx_sample_user *user_at(const struct user_samples *us, int i)
{
	return (const void *)(us->buf + i * us->stride + us->user_off);
}

static int open_user_sampler(uint64_t mask, uint32_t stack, uint64_t flags, uint64_t period)
{
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_RAW,
		.config = CPU_CYCLES,
		.flags = PMUCTX_ATTR_DISABLED | flags,
		.sample_period = period,
		.sample_regs_user = mask,
		.sample_stack_user = stack,
	};

	return pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC);
}

/*
 * Rounds of the planted loop on @sp until 4 samples in it (a busy host's
 * late interrupts make few samples of many periods), at most 8.
 */
static int run_planted(int fd, struct user_samples *us, const uint64_t *vals, unsigned long sp)
{
	struct pmuctx_samples_read sr;
	int rounds;

	us->nr = 0;
	us->in_loop = 0;
	for (rounds = 0; rounds < 8 && us->in_loop < 4 && us->nr < MAX_SAMPLES; rounds++) {
		ioctl(fd, PMUCTX_IOC_ENABLE, 0);
		plant_regs_loop(2UL << 20, vals, sp);
		ioctl(fd, PMUCTX_IOC_DISABLE, 0);
		if (pmuctx_take_samples(fd, us->buf + us->nr * us->stride, us->stride,
					MAX_SAMPLES - us->nr, &sr))
			return -1;
		us->nr += sr.nr;
		us->in_loop = 0;
		for (int i = 0; i < us->nr; i++)
			us->in_loop += in_plant_loop(sample_at(us, i)->ip);
	}
	/* what did not fit is not the next run's */
	while (!pmuctx_take_samples(fd, us->buf + us->nr * us->stride, us->stride, 1, &sr) &&
	       sr.nr)
		;
	return 0;
}

static unsigned char stack_byte(size_t off)
{
	return (unsigned char)(off * 7 + (off >> 8) + 1);
}

FIXTURE(planted) {
	unsigned char *stack;	/* 3 pages of pattern, then one that is not there */
	uint64_t vals[PLANT_NR_REGS];
	struct user_samples us;
	int fd;
	bool ready;	/* set up: this harness runs a test its setup skipped */
};

FIXTURE_SETUP(planted)
{
	if (!have_pmu())
		SKIP(return, "needs a hardware PMU");
	if (!have_overflow())
		SKIP(return, "no overflow samples on this backend (perf events)");
	if (!(pmu_features() & PMUCTX_FEAT_SAMPLE_USER))
		SKIP(return, "this module's samples carry no user part");
	self->stack = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->stack);
	ASSERT_EQ(0, munmap(self->stack + 3 * 4096, 4096));
	for (size_t i = 0; i < 3 * 4096; i++)
		self->stack[i] = stack_byte(i);
	plant_values(self->vals);
	self->us.user_off = PMUCTX_SAMPLE_SIZE_VER2;
	self->us.stride = PMUCTX_SAMPLE_USER_SIZE(0, __builtin_popcountll(PLANT_ALL_REGS),
						   STACK_ROOM);
	self->us.buf = calloc(MAX_SAMPLES + 1, self->us.stride);
	ASSERT_NE(NULL, self->us.buf);
	/* Cycles: the cycle counter overflows on time even in QEMU. */
	self->fd = open_user_sampler(PLANT_ALL_REGS, STACK_ROOM, PMUCTX_ATTR_EXCLUDE_KERNEL,
				     1 << 17);
	ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(errno));
	self->ready = true;
}

FIXTURE_TEARDOWN(planted)
{
	if (self->fd > 0)
		close(self->fd);
	free(self->us.buf);
	if (self->stack && self->stack != MAP_FAILED)
		munmap(self->stack, 3 * 4096);
}

/*
 * Every sample in the loop reports every planted register as planted,
 * its own PC and the planted stack pointer, and the stack bytes there.
 */
TEST_F(planted, samples_carry_the_tasks_registers_and_stack)
{
	unsigned long sp = (unsigned long)self->stack + 4096 + 64;
	int i, r, good = 0;
#if defined(__x86_64__)
	unsigned short cs, ss;

	__asm__("mov %%cs, %0; mov %%ss, %1" : "=r"(cs), "=r"(ss));
#endif

	if (!self->ready)
		return;
	ASSERT_EQ(0, run_planted(self->fd, &self->us, self->vals, sp));
	for (i = 0; i < self->us.nr; i++) {
		const struct pmuctx_sample *s = sample_at(&self->us, i);
		const struct pmuctx_sample_user *u = user_at(&self->us, i);
		bool regs_ok = true;

		if (!in_plant_loop(s->ip))
			continue;
		ASSERT_EQ(PERF_SAMPLE_REGS_ABI_64, u->abi);
		ASSERT_EQ(__builtin_popcountll(PLANT_ALL_REGS), u->nr_regs);
		for (r = 0; r < PLANT_NR_REGS; r++) {
			if (!(PLANT_ALL_REGS & (1ULL << r)) || (PLANT_UNPLANTED & (1ULL << r)))
				continue;
			if (sample_reg(u, PLANT_ALL_REGS, r) != self->vals[r]) {
				TH_LOG("register %d: %#llx, planted %#llx", r,
				       (unsigned long long)sample_reg(u, PLANT_ALL_REGS, r),
				       (unsigned long long)self->vals[r]);
				regs_ok = false;
			}
		}
		EXPECT_TRUE(regs_ok);
		EXPECT_EQ(s->ip, sample_reg(u, PLANT_ALL_REGS, PLANT_REG_IP));
		EXPECT_EQ(sp, sample_reg(u, PLANT_ALL_REGS, PLANT_REG_SP));
#if defined(__x86_64__)
		EXPECT_EQ(cs, sample_reg(u, PLANT_ALL_REGS, 10));
		EXPECT_EQ(ss, sample_reg(u, PLANT_ALL_REGS, 11));
#endif
		EXPECT_EQ(STACK_ROOM, u->stack_size);
		EXPECT_EQ(STACK_ROOM, u->stack_dyn);
		EXPECT_EQ(0, memcmp((const uint64_t *)(u + 1) + u->nr_regs, (void *)sp, STACK_ROOM));
		good++;
	}
	TH_LOG("%d of %d samples in the loop, all as planted", good, self->us.nr);
	EXPECT_LE(4, good);
}

/*
 * The copy ends where the stack's memory does: at a page that is not
 * there (the bytes before it kept), at once in a page that may not be
 * read, and there is none for a stack pointer that is 0 or not a user
 * address; the registers are reported all the same.
 */
TEST_F(planted, a_stack_copy_ends_at_memory_that_is_not_there)
{
	unsigned char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long kernel = 0xffffffff81000000UL;
	struct {
		const char *what;
		unsigned long sp;
		uint32_t size, dyn;
	} cases[4];
	int c, i, n;

	if (!self->ready)
		return;

#if defined(__aarch64__)
	kernel = 0xffff800008000000UL;
#endif
	ASSERT_NE(MAP_FAILED, none);
	cases[0] = (typeof(cases[0])){ "512 bytes before a page that is not there",
					(unsigned long)self->stack + 3 * 4096 - 512, STACK_ROOM, 512 };
	cases[1] = (typeof(cases[0])){ "a page that may not be read", (unsigned long)none,
					STACK_ROOM, 0 };
	cases[2] = (typeof(cases[0])){ "a kernel address", kernel, 0, 0 };
	cases[3] = (typeof(cases[0])){ "0", 0, 0, 0 };
	for (c = 0; c < 4; c++) {
		ASSERT_EQ(0, run_planted(self->fd, &self->us, self->vals, cases[c].sp));
		for (i = 0, n = 0; i < self->us.nr; i++) {
			const struct pmuctx_sample_user *u = user_at(&self->us, i);

			if (!in_plant_loop(sample_at(&self->us, i)->ip))
				continue;
			EXPECT_EQ(PERF_SAMPLE_REGS_ABI_64, u->abi);
			EXPECT_EQ(cases[c].sp, sample_reg(u, PLANT_ALL_REGS, PLANT_REG_SP));
			EXPECT_EQ(cases[c].size, u->stack_size) TH_LOG("%s", cases[c].what);
			EXPECT_EQ(cases[c].dyn, u->stack_dyn) TH_LOG("%s", cases[c].what);
			if (cases[c].dyn)
				EXPECT_EQ(0, memcmp((const uint64_t *)(u + 1) + u->nr_regs,
						    (void *)cases[c].sp, cases[c].dyn));
			n++;
		}
		TH_LOG("%s: %d samples in the loop", cases[c].what, n);
		EXPECT_LE(4, n);
	}
	munmap(none, 4096);
}

/* Only the registers asked for, in the order of their bits; a stack alone. */
TEST_F(planted, registers_come_as_the_mask_asks)
{
	uint64_t mask = (1ULL << PLANT_REG_SP) | (1ULL << PLANT_REG_IP) | (1ULL << 3) | 1;
	struct user_samples us = self->us;
	int i, n = 0, fd;

	if (!self->ready)
		return;

	close(self->fd);
	self->fd = -1;
	us.stride = PMUCTX_SAMPLE_USER_SIZE(0, 4, 0);
	fd = open_user_sampler(mask, 0, PMUCTX_ATTR_EXCLUDE_KERNEL, 1 << 17);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, run_planted(fd, &us, self->vals, 0x1000));
	for (i = 0; i < us.nr; i++) {
		const struct pmuctx_sample_user *u = user_at(&us, i);
		const uint64_t *regs = (const uint64_t *)(u + 1);

		if (!in_plant_loop(sample_at(&us, i)->ip))
			continue;
		EXPECT_EQ(4, u->nr_regs);
		EXPECT_EQ(self->vals[0], regs[0]);
		EXPECT_EQ(self->vals[3], regs[1]);
		EXPECT_EQ(0x1000, regs[2]);
		EXPECT_EQ(sample_at(&us, i)->ip, regs[3]);
		EXPECT_EQ(0, u->stack_size);
		n++;
	}
	EXPECT_LE(4, n);
	close(fd);

	/* a stack and no registers */
	us.stride = PMUCTX_SAMPLE_USER_SIZE(0, 0, 64);
	fd = open_user_sampler(0, 64, PMUCTX_ATTR_EXCLUDE_KERNEL, 1 << 17);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, run_planted(fd, &us, self->vals, (unsigned long)self->stack + 128));
	for (i = 0, n = 0; i < us.nr; i++) {
		const struct pmuctx_sample_user *u = user_at(&us, i);

		if (!in_plant_loop(sample_at(&us, i)->ip))
			continue;
		EXPECT_EQ(PERF_SAMPLE_REGS_ABI_64, u->abi);
		EXPECT_EQ(0, u->nr_regs);
		EXPECT_EQ(64, u->stack_dyn);
		EXPECT_EQ(0, memcmp(u + 1, self->stack + 128, 64));
		n++;
	}
	EXPECT_LE(4, n);
	close(fd);
}

/* The overflows of @fd's family so far, without taking its samples. */
static int ctx_overflows(int fd, size_t stride, uint64_t *overflows)
{
	struct pmuctx_samples_read sr;

	if (pmuctx_take_samples(fd, NULL, stride, 0, &sr))
		return -1;
	*overflows = sr.overflows;
	return 0;
}

static volatile int spin_stop;

static void *spin_syscalls(void *arg)
{
	while (!spin_stop)
		syscall(SYS_getppid);
	return NULL;
}

/*
 * A sample taken in the kernel reports the user registers the task
 * entered it with: user addresses for its PC and stack pointer, never the
 * kernel's (the sample's own PC is the kernel's only for a counter that
 * counts the kernel, root here).
 */
TEST(kernel_mode_samples_carry_the_users_registers)
{
	const uint64_t mask = (1ULL << PLANT_REG_SP) | (1ULL << PLANT_REG_IP);
	const size_t stride = PMUCTX_SAMPLE_USER_SIZE(0, 2, 64);
	unsigned char *buf = calloc(MAX_SAMPLES, stride);
	struct pmuctx_samples_read sr;
	int pass, round, i, kernel_mode, fd;
	uint64_t overflows;

	if (!have_overflow() || !(pmu_features() & PMUCTX_FEAT_SAMPLE_USER))
		SKIP(return, "needs overflow samples with a user part");
	for (pass = 0; pass < 2; pass++) {
		/* pass 0 counts the kernel too (as root), pass 1 the user only */
		fd = open_user_sampler(mask, 64, pass ? PMUCTX_ATTR_EXCLUDE_USER : 0, 1 << 15);
		if (fd < 0 && errno == EACCES)
			continue;
		ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
		/* rounds of 1000 calls until 8 samples (a debug kernel's are slow) */
		for (round = 0; round < 20; round++) {
			ioctl(fd, PMUCTX_IOC_ENABLE, 0);
			for (i = 0; i < 1000; i++)
				syscall(SYS_getppid);
			ioctl(fd, PMUCTX_IOC_DISABLE, 0);
			ASSERT_EQ(0, ctx_overflows(fd, stride, &overflows));
			if (overflows >= 8)
				break;
		}
		ASSERT_EQ(0, pmuctx_take_samples(fd, buf, stride, MAX_SAMPLES, &sr));
		for (i = 0, kernel_mode = 0; i < (int)sr.nr; i++) {
			const struct pmuctx_sample *s = (const void *)(buf + i * stride);
			const struct pmuctx_sample_user *u =
				(const void *)(buf + i * stride + PMUCTX_SAMPLE_SIZE_VER2);
			const uint64_t *regs = (const uint64_t *)(u + 1);

			ASSERT_EQ(PERF_SAMPLE_REGS_ABI_64, u->abi);
			EXPECT_EQ(0, regs[0] >> 63) TH_LOG("a kernel stack pointer");
			EXPECT_EQ(0, regs[1] >> 63) TH_LOG("a kernel PC");
			EXPECT_EQ(64, u->stack_dyn);
			kernel_mode += s->ip >> 63;
		}
		TH_LOG("%s: %u samples, %d of them kernel-mode", pass ? "kernel only" : "both",
		       sr.nr, kernel_mode);
		EXPECT_LE(1, (int)sr.nr);
		close(fd);
	}
	free(buf);
}

/*
 * The attributes perf's kernel refuses are refused (EINVAL); a reader's
 * sample must hold the whole user part (EINVAL), and may be no bigger
 * than it or a page (E2BIG).
 */
TEST(user_part_attributes_and_strides_are_checked)
{
	static const uint64_t bad_masks[] = PLANT_BAD_REG_MASKS;
	struct pmuctx_attr attr = {
		.size = sizeof(attr),
		.type = PMUCTX_TYPE_RAW,
		.config = CPU_CYCLES,
		.flags = PMUCTX_ATTR_DISABLED | PMUCTX_ATTR_EXCLUDE_KERNEL,
		.sample_period = 1 << 20,
	};
	static const uint32_t bad_stacks[] = { 4, 7, PMUCTX_SAMPLE_STACK_MAX + 8, 1U << 31 };
	struct pmuctx_samples_read sr;
	void *buf;
	size_t need;
	int fd;

	if (!have_overflow() || !(pmu_features() & PMUCTX_FEAT_SAMPLE_USER))
		SKIP(return, "needs overflow samples with a user part");
	for (unsigned int i = 0; i < sizeof(bad_masks) / sizeof(bad_masks[0]); i++) {
		attr.sample_regs_user = bad_masks[i] | 1;
		EXPECT_EQ(-1, pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC));
		EXPECT_EQ(EINVAL, errno) TH_LOG("mask %#llx", (unsigned long long)bad_masks[i]);
	}
	attr.sample_regs_user = 1;
	for (unsigned int i = 0; i < sizeof(bad_stacks) / sizeof(bad_stacks[0]); i++) {
		attr.sample_stack_user = bad_stacks[i];
		EXPECT_EQ(-1, pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC));
		EXPECT_EQ(EINVAL, errno) TH_LOG("stack %u", bad_stacks[i]);
	}
	attr.sample_stack_user = 64;
	attr.__reserved_1 = 1;
	EXPECT_EQ(-1, pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC));
	EXPECT_EQ(EINVAL, errno);
	attr.__reserved_1 = 0;
	/* a user part is a sample's */
	attr.sample_period = 0;
	EXPECT_EQ(-1, pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC));
	EXPECT_EQ(EINVAL, errno);
	attr.sample_period = 1 << 20;

	/* the biggest: 16 samples of 64 KiB fit the ring's 2 MiB */
	attr.sample_regs_user = PLANT_ALL_REGS;
	attr.sample_stack_user = PMUCTX_SAMPLE_STACK_MAX;
	attr.flags |= PMUCTX_ATTR_CALLCHAIN;
	fd = pmuctx_open_attr(&attr, 0, -1, PMUCTX_OPEN_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	need = PMUCTX_SAMPLE_USER_SIZE(1, __builtin_popcountll(PLANT_ALL_REGS),
				       PMUCTX_SAMPLE_STACK_MAX);
	buf = calloc(2, need + 8);
	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-1, pmuctx_take_samples(fd, buf, need - 8, 1, &sr));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, pmuctx_take_samples(fd, buf, need + 8, 1, &sr));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0, pmuctx_take_samples(fd, buf, need, 1, &sr));
	EXPECT_EQ(0, sr.nr);
	/* a ring of them: once 16 wait, the rest are lost, and said to be */
	ioctl(fd, PMUCTX_IOC_ENABLE, 0);
	run_loop(40UL << 20);
	ioctl(fd, PMUCTX_IOC_DISABLE, 0);
	EXPECT_EQ(0, pmuctx_take_samples(fd, buf, need, 2, &sr));
	EXPECT_EQ(2, sr.nr);
	TH_LOG("%llu overflows, %llu samples lost", (unsigned long long)sr.overflows,
	       (unsigned long long)sr.lost);
	if (sr.overflows > 16)
		EXPECT_LE(1, sr.lost);
	close(fd);
	free(buf);
}

/*
 * A reader draining on another thread while the loop's samples copy its
 * stack: each sample read is whole (-smp 2: the ring's lock on two CPUs).
 */
TEST(samples_read_while_stacks_are_copied)
{
	const size_t stride = PMUCTX_SAMPLE_USER_SIZE(0, 1, 1024);
	unsigned char *buf = calloc(MAX_SAMPLES, stride);
	struct pmuctx_samples_read sr;
	pthread_t spinner;
	int fd, round, i, seen = 0;

	if (!have_overflow() || !(pmu_features() & PMUCTX_FEAT_SAMPLE_USER))
		SKIP(return, "needs overflow samples with a user part");
	fd = open_user_sampler(1ULL << PLANT_REG_SP, 1024, PMUCTX_ATTR_EXCLUDE_KERNEL |
			       PMUCTX_ATTR_INHERIT, 1 << 14);
	ASSERT_LE(0, fd);
	spin_stop = 0;
	ASSERT_EQ(0, pthread_create(&spinner, NULL, spin_syscalls, NULL));
	ioctl(fd, PMUCTX_IOC_ENABLE, 0);
	for (round = 0; round < 200; round++) {
		run_loop(1 << 14);
		ASSERT_EQ(0, pmuctx_take_samples(fd, buf, stride, MAX_SAMPLES, &sr));
		for (i = 0; i < (int)sr.nr; i++) {
			const struct pmuctx_sample_user *u =
				(const void *)(buf + i * stride + PMUCTX_SAMPLE_SIZE_VER2);

			EXPECT_EQ(PERF_SAMPLE_REGS_ABI_64, u->abi);
			EXPECT_EQ(1, u->nr_regs);
			EXPECT_GE(1024, u->stack_dyn);
			seen++;
		}
	}
	ioctl(fd, PMUCTX_IOC_DISABLE, 0);
	spin_stop = 1;
	pthread_join(spinner, NULL);
	TH_LOG("%d samples read while taken", seen);
	EXPECT_LE(1, seen);
	close(fd);
	free(buf);
}

TEST_HARNESS_MAIN
