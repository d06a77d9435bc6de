// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile tests of the security model (Documentation/security.rst): what an
 * unprivileged user may count, what crosses a setuid exec, what samples and
 * mapped pages reveal, fake pidfds, and the bounds on counters and clones.
 * Each test runs as uid/gid 65534 where the rule concerns unprivileged
 * users.  The races of the same model are in races_test.c.
 */
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include "hostile.h"
#include "kselftest_harness.h"

/*
 * Storms and races are bounded by their own clocks and counts; the
 * harness's 30 s default is too tight for the debug kernels under TCG.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 180

/* ---- who may count whom ------------------------------------------------ */

static int open_errno(pid_t target, unsigned int flags)
{
	int fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, target, flags);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static void release_child(int release, pid_t pid)
{
	int status;

	write_full(release, "x", 1);
	close(release);
	waitpid(pid, &status, 0);
}

TEST(unprivileged_attach_policy)
{
	int rel, pfd, status, go[2];
	pid_t kid, stranger, tester;

	SELECTED_OR_SKIP();
	/* A stranger of the same uid: not our descendant. */
	ASSERT_EQ(0, pipe(go));
	stranger = fork();
	ASSERT_LE(0, stranger);
	if (!stranger) {
		char c;

		if (become_nobody())
			_exit(1);
		read_full(go[0], &c, 1);
		_exit(0);
	}
	tester = fork();
	ASSERT_LE(0, tester);
	if (!tester) {
		if (become_nobody())
			_exit(100);
		_exit(open_errno(stranger, 0));
	}
	ASSERT_EQ(tester, waitpid(tester, &status, 0));
	EXPECT_EQ(EACCES, WEXITSTATUS(status)) TH_LOG("a same-uid non-descendant");
	write_full(go[1], "x", 1);
	waitpid(stranger, &status, 0);

	ASSERT_EQ(0, become_nobody());
	/* pid 1 belongs to root and is nobody's descendant: by pid and pidfd. */
	EXPECT_EQ(EACCES, open_errno(1, 0));
	pfd = sys_pidfd_open(1);
	ASSERT_LE(0, pfd);
	EXPECT_EQ(EACCES, open_errno(pfd, PMUCTX_OPEN_PIDFD));
	close(pfd);
	/* Our own child: allowed, by pid and by pidfd. */
	kid = blocked_child(&rel);
	ASSERT_LT(0, kid);
	EXPECT_EQ(0, open_errno(kid, 0));
	pfd = sys_pidfd_open(kid);
	ASSERT_LE(0, pfd);
	EXPECT_EQ(0, open_errno(pfd, PMUCTX_OPEN_PIDFD));
	release_child(rel, kid);
	/* The pidfd of a reaped child: its task is gone. */
	EXPECT_EQ(ESRCH, open_errno(pfd, PMUCTX_OPEN_PIDFD));
	close(pfd);
}

TEST(unprivileged_hardware_counters_are_user_only)
{
	struct pmuctx_attr a = { .size = sizeof(a), .type = PMUCTX_TYPE_HARDWARE,
				 .config = PMUCTX_HW_CPU_CYCLES };
	int fd;

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "no hardware PMU (x86_64 TCG)");
	if (pmuctx_module_param("allow_kernel", 0) > 0)
		SKIP(return, "module parameter allow_kernel is set");
	ASSERT_EQ(0, become_nobody());
	fd = pmuctx_open_attr(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
	EXPECT_EQ(-1, fd) TH_LOG("uid 65534 counts kernel-mode cycles");
	EXPECT_EQ(EPERM, errno);
	if (fd >= 0)
		close(fd);
	a.type = PMUCTX_TYPE_RAW;
	a.config = PMU_CPU_CYCLES;
	a.flags = PMUCTX_ATTR_EXCLUDE_USER;	/* kernel only */
	fd = pmuctx_open_attr(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EPERM, errno);
	if (fd >= 0)
		close(fd);
	a.flags = PMUCTX_ATTR_EXCLUDE_KERNEL;
	fd = pmuctx_open_attr(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
	EXPECT_LE(0, fd) TH_LOG("user-only cycles: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* ---- pidfds ------------------------------------------------------------ */

#define EXPECT_NOT_A_PIDFD(fd, what) do {					\
	int __c = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, (fd), PMUCTX_OPEN_PIDFD);	\
	int __e = errno;							\
	EXPECT_EQ(-1, __c) TH_LOG("%s was taken for a pidfd", what);		\
	if (__c < 0) {								\
		EXPECT_EQ(EBADF, __e) TH_LOG("%s: %s, not EBADF", what,	\
					    strerror(__e));			\
	} else {								\
		close(__c);							\
	}									\
} while (0)

/*
 * Only a real pidfd is a pidfd: files that merely carry its name, or any
 * other kind of file, are EBADF.  (Old code compared the dentry name with
 * "[pidfd]" and used the file's private data as a struct pid.)
 */
TEST(fake_pidfds_are_ebadf)
{
	char dir[] = "/tmp/pmuctx-pidfd-XXXXXX", path[64];
	int fd, sk[2], counter;

	SELECTED_OR_SKIP();
	ASSERT_EQ(0, become_nobody());
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/[pidfd]", dir);

	ASSERT_EQ(0, mkfifo(path, 0600));
	fd = open(path, O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, fd);
	EXPECT_NOT_A_PIDFD(fd, "a FIFO named [pidfd]");
	close(fd);
	unlink(path);

	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT_LE(0, fd);
	write_full(fd, "0123456789abcdef", 16);
	EXPECT_NOT_A_PIDFD(fd, "a regular file named [pidfd]");
	close(fd);
	unlink(path);

	ASSERT_EQ(0, mkdir(path, 0700));
	fd = open(path, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, fd);
	EXPECT_NOT_A_PIDFD(fd, "a directory named [pidfd]");
	close(fd);
	rmdir(path);
	rmdir(dir);

	if (!socketpair(AF_UNIX, SOCK_STREAM, 0, sk)) {
		EXPECT_NOT_A_PIDFD(sk[0], "a socket");
		close(sk[0]);
		close(sk[1]);
	} else {
		TH_LOG("no AF_UNIX sockets (%s): socket case not run", strerror(errno));
	}
	EXPECT_NOT_A_PIDFD(pmuctx_dev(), "/dev/pmuctx");
	counter = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, 0, 0);
	ASSERT_LE(0, counter);
	EXPECT_NOT_A_PIDFD(counter, "a counter fd");
	close(counter);
	/* ...and the real thing still works. */
	fd = sys_pidfd_open(getpid());
	ASSERT_LE(0, fd);
	counter = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, fd, PMUCTX_OPEN_PIDFD);
	EXPECT_LE(0, counter) TH_LOG("our own pidfd: %s", strerror(errno));
	if (counter >= 0)
		close(counter);
	close(fd);
}

/* ---- setuid exec ------------------------------------------------------- */

#define HELPER_PAGES	20000		/* faults the setuid helper makes */
#define PRE_EXEC_PAGES	300		/* faults of the child before its exec */
#if defined(__aarch64__) || defined(__x86_64__)
/*
 * 500M user instructions: where QEMU counts no instructions (no -icount)
 * the test counts CPU cycles, which are host time there, and a loaded host
 * stretched what the parent and the child ran at EL0 before the exec to
 * 42M cycles once (1-7M on a quieter one); the setuid program counted
 * would add several times the bound, HELPER_LOOPS / 2.
 */
#define HELPER_LOOPS	250000000UL
#define PRE_EXEC_LOOPS	100000UL
#else
#define HELPER_LOOPS	0UL
#define PRE_EXEC_LOOPS	0UL
#endif

static char helper[PATH_MAX];

/* The setuid-root helper next to this test, checked before we drop root. */
static void find_helper(struct __test_metadata *_metadata)
{
	char exe[PATH_MAX];
	struct stat st;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = 0;
	snprintf(helper, sizeof(helper), "%s/setuid_work", dirname(exe));
	ASSERT_EQ(0, stat(helper, &st)) TH_LOG("%s: %s", helper, strerror(errno));
	ASSERT_TRUE(st.st_uid == 0 && (st.st_mode & S_ISUID))
		TH_LOG("%s must be owned by root, mode 4755 (uid %d mode %o)",
		       helper, st.st_uid, st.st_mode & 07777);
}

/* In a child: wait for @go (if >= 0), do the pre-exec work, exec the helper. */
static void __attribute__((noreturn)) exec_helper(int go, long pages,
						   unsigned long loops,
						   int ready, int wait)
{
	char a[4][32];
	char c;

	if (go >= 0 && read(go, &c, 1) != 1)
		_exit(120);
	if (pages) {
		touch_small_pages(PRE_EXEC_PAGES);
		spin_loop(PRE_EXEC_LOOPS);
	}
	snprintf(a[0], sizeof(a[0]), "%ld", pages);
	snprintf(a[1], sizeof(a[1]), "%lu", loops);
	snprintf(a[2], sizeof(a[2]), "%d", ready);
	snprintf(a[3], sizeof(a[3]), "%d", wait);
	execl(helper, "setuid_work", a[0], a[1], a[2], a[3], (char *)NULL);
	_exit(121);
}

static int open_user_instructions(uint64_t flags)
{
	int fd;

	if (!have_hw_pmu())
		return -1;
	fd = pmuctx_open_raw(PMU_INST_RETIRED, flags | PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
	if (fd < 0 && errno == ENOENT)	/* QEMU has it only under -icount */
		fd = pmuctx_open_raw(PMU_CPU_CYCLES, flags | PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
	return fd;
}

/*
 * An inherited counter must not follow a child into a setuid program: the
 * exec detaches the child as if it exited (its counts so far are folded),
 * and nothing of the privileged program is counted or sampled.
 */
TEST(setuid_exec_detaches_inherited_counters)
{
	struct pmuctx_ctx_stats st;
	int ready[2], wait[2], go[2], fd, hw, status;
	uint64_t v, vhw;
	pid_t kid;
	char c;

	SELECTED_OR_SKIP();
	find_helper(_metadata);
	ASSERT_EQ(0, become_nobody());
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(wait));
	ASSERT_EQ(0, pipe(go));
	fd = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
	ASSERT_LE(0, fd);
	hw = open_user_instructions(PMUCTX_ATTR_INHERIT);
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid)
		exec_helper(go[0], HELPER_PAGES, HELPER_LOOPS, ready[1], wait[0]);
	write_full(go[1], "g", 1);
	read_full(ready[0], &c, 1);	/* the helper did its work and waits */

	ASSERT_EQ(0, ctx_stats(fd, &st));
	EXPECT_EQ(1, st.live_tasks) TH_LOG("the setuid child still holds a clone");
	if (hw >= 0) {
		ASSERT_EQ(0, ctx_stats(hw, &st));
		EXPECT_EQ(1, st.live_tasks);
	}
	/* Direct attach to it is refused, as before. */
	EXPECT_EQ(EACCES, open_errno(kid, 0));

	write_full(wait[1], "w", 1);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("helper status %#x (3: not setuid root)", status);
	v = pmuctx_read1(fd);
	TH_LOG("page faults counted: %llu (child before exec: %d, setuid helper: %d)",
	       (unsigned long long)v, PRE_EXEC_PAGES, HELPER_PAGES);
	EXPECT_LE(PRE_EXEC_PAGES, v) TH_LOG("the child's counts up to exec were lost");
	EXPECT_GT(HELPER_PAGES, v) TH_LOG("the setuid program was counted");
	ASSERT_EQ(0, ctx_stats(fd, &st));
	EXPECT_EQ(1, st.exited_tasks);
	if (hw >= 0) {
		vhw = pmuctx_read1(hw);
		TH_LOG("user-mode hardware count: %llu (setuid helper: %lu instructions)",
		       (unsigned long long)vhw, 2 * HELPER_LOOPS);
		EXPECT_GT(HELPER_LOOPS / 2, vhw) TH_LOG("the setuid program was counted");
		close(hw);
	}
	close(fd);
}

/* The same for a counter attached by pid to the child before its exec. */
TEST(setuid_exec_detaches_attached_counter)
{
	struct pmuctx_ctx_stats st;
	int ready[2], wait[2], go[2], fd, status;
	uint64_t v;
	pid_t kid;
	char c;

	SELECTED_OR_SKIP();
	find_helper(_metadata);
	ASSERT_EQ(0, become_nobody());
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(wait));
	ASSERT_EQ(0, pipe(go));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid)
		exec_helper(go[0], HELPER_PAGES, 0, ready[1], wait[0]);
	ASSERT_EQ(0, wait_for_wchan(kid, "pipe_read"));
	fd = open_sw_on(PMUCTX_SW_PAGE_FAULTS, 0, kid, 0);
	ASSERT_LE(0, fd) TH_LOG("our own dumpable child: %s", strerror(errno));
	write_full(go[1], "g", 1);
	read_full(ready[0], &c, 1);
	ASSERT_EQ(0, ctx_stats(fd, &st));
	EXPECT_EQ(0, st.live_tasks) TH_LOG("still attached to the setuid program");
	write_full(wait[1], "w", 1);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("helper status %#x", status);
	v = pmuctx_read1(fd);
	EXPECT_GT(HELPER_PAGES, v) TH_LOG("counted %llu faults of the setuid program",
					  (unsigned long long)v);
	close(fd);
}

/* A running setuid program cannot be attached by its unprivileged parent. */
TEST(setuid_process_cannot_be_attached)
{
	int ready[2], wait[2], status, pfd;
	pid_t kid;
	char c;

	SELECTED_OR_SKIP();
	find_helper(_metadata);
	ASSERT_EQ(0, become_nobody());
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(wait));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid)
		exec_helper(-1, 0, 0, ready[1], wait[0]);
	read_full(ready[0], &c, 1);
	EXPECT_EQ(EACCES, open_errno(kid, 0));
	pfd = sys_pidfd_open(kid);
	ASSERT_LE(0, pfd);
	EXPECT_EQ(EACCES, open_errno(pfd, PMUCTX_OPEN_PIDFD));
	close(pfd);
	write_full(wait[1], "w", 1);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("helper status %#x (3: not setuid root)", status);
}

/*
 * Nothing of a setuid image reaches a sample of its unprivileged parent's
 * inherited counter: not its registers, not its stack (AT_RANDOM: glibc's
 * canary and pointer guard), not its PC in a call chain.  A period pending
 * when the child execs (the counter throttled, or the perf-events backend,
 * whose folds count the periods) was once recorded by the exec's detach
 * with the new image's registers and a copy of its fresh stack.
 */
#if defined(__x86_64__)
#define EXEC_REG_SP	7
#define EXEC_REG_IP	8
#else
#define EXEC_REG_SP	31
#define EXEC_REG_IP	32
#endif
#define EXEC_REGS	((1ULL << EXEC_REG_SP) | (1ULL << EXEC_REG_IP))
#define EXEC_STACK	4096
#define EXEC_ROUNDS	24
#define EXEC_SAMPLES	256
/* The new image's first instructions: where its first sample would be. */
#define ENTRY_REGION	64

static int open_exec_sampler(uint64_t config)
{
	struct pmuctx_attr a = {
		.size = sizeof(a), .type = PMUCTX_TYPE_RAW, .config = config,
		.flags = PMUCTX_ATTR_INHERIT | PMUCTX_ATTR_EXCLUDE_KERNEL |
			 PMUCTX_ATTR_CALLCHAIN,
		.sample_period = 64,
		.sample_regs_user = EXEC_REGS,
		.sample_stack_user = EXEC_STACK,
	};

	return pmuctx_open_attr(&a, 0, -1, PMUCTX_OPEN_CLOEXEC);
}

static bool in_entry(uint64_t pc, uint64_t entry)
{
	return pc >= entry && pc < entry + ENTRY_REGION;
}

/*
 * EXEC_ROUNDS children of ours exec @path (setuid_work --aux, exiting
 * @status) under the inherited sampler; no sample of theirs may carry
 * the new image's entry PC or AT_RANDOM bytes.
 */
static void exec_rounds_sample_nothing(struct __test_metadata *_metadata,
				       const char *path, int expect)
{
	const size_t user_off = PMUCTX_SAMPLE_SIZE_VER2 + PMUCTX_CALLCHAIN_MAX * 8;
	const size_t stride = PMUCTX_SAMPLE_USER_SIZE(1, 2, EXEC_STACK);
	int fd, p[2], round, status, leaks = 0, leak_rounds = 0;
	unsigned long kid_samples = 0, total = 0;
	unsigned char aux[24], *buf;
	struct pmuctx_samples_read sr;
	uint64_t entry;
	pid_t kid;

	buf = calloc(EXEC_SAMPLES, stride);
	ASSERT_NE(NULL, buf);
	/* Cycles count at EL0 without -icount too; instructions only with it. */
	fd = open_exec_sampler(PMU_CPU_CYCLES);
	if (fd < 0 && errno == ENOENT)
		fd = open_exec_sampler(PMU_INST_RETIRED);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));

	for (round = 0; round < EXEC_ROUNDS; round++) {
		int round_leaks = 0;
		char fdarg[16];

		ASSERT_EQ(0, pipe(p));
		kid = fork();
		ASSERT_LE(0, kid);
		if (!kid) {
			close(p[0]);
			snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
			/* Periods to be pending at the exec. */
			spin_loop(20000);
			execl(path, "setuid_work", "--aux", fdarg, (char *)NULL);
			_exit(121);
		}
		close(p[1]);
		read_full(p[0], aux, sizeof(aux));
		close(p[0]);
		ASSERT_EQ(kid, waitpid(kid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == expect)
			TH_LOG("helper status %#x, expected exit %d (3: not euid 0)",
			       status, expect);
		memcpy(&entry, aux, 8);

		do {
			ASSERT_EQ(0, pmuctx_take_samples(fd, buf, stride, EXEC_SAMPLES, &sr));
			for (uint32_t i = 0; i < sr.nr; i++) {
				const unsigned char *rec = buf + i * stride;
				const struct pmuctx_sample *s = (const void *)rec;
				const uint64_t *chain = (const void *)(rec + PMUCTX_SAMPLE_SIZE_VER2);
				const struct pmuctx_sample_user *u = (const void *)(rec + user_off);
				const uint64_t *regs = (const void *)(u + 1);
				const unsigned char *stack = (const void *)(regs + u->nr_regs);
				bool leak = false;

				total++;
				if (s->tid != (uint32_t)kid)
					continue;
				kid_samples++;
				if (in_entry(s->ip, entry))
					leak = true;
				for (uint32_t k = 0; k < s->nr_callchain && k < PMUCTX_CALLCHAIN_MAX; k++)
					if (in_entry(chain[k], entry))
						leak = true;
				/* regs: SP then IP, the mask's bit order */
				if (u->nr_regs == 2 && in_entry(regs[1], entry))
					leak = true;
				if (u->stack_dyn <= EXEC_STACK && u->stack_dyn >= 16 &&
				    memmem(stack, u->stack_dyn, aux + 8, 16))
					leak = true;
				if (leak && round_leaks++ < 2)
					TH_LOG("round %d: sample ip %#llx, %u chain entries, abi %u, "
					       "pc %#llx, %u stack bytes; the new image's entry %#llx",
					       round, (unsigned long long)s->ip, s->nr_callchain,
					       u->abi, (unsigned long long)(u->nr_regs == 2 ? regs[1] : 0),
					       u->stack_dyn, (unsigned long long)entry);
			}
		} while (sr.nr == EXEC_SAMPLES);
		leaks += round_leaks;
		leak_rounds += round_leaks > 0;
	}
	TH_LOG("%lu samples, %lu of the children; %d of them (in %d of %d rounds) "
	       "carry the new image", total, kid_samples, leaks, leak_rounds, EXEC_ROUNDS);
	EXPECT_LT(0, kid_samples) TH_LOG("no sample of the children: nothing was tested");
	EXPECT_EQ(0, leaks);
	close(fd);
	free(buf);
}

TEST(setuid_exec_samples_nothing_of_the_new_image)
{
	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "needs hardware counters");
	find_helper(_metadata);
	ASSERT_EQ(0, become_nobody());
	exec_rounds_sample_nothing(_metadata, helper, 0);
}

/*
 * The same for an exec that changes no id but leaves the mm undumpable:
 * a binary its user may execute and not read (mode 0111), which
 * detaches when the exec renames the task, before the image exists.
 */
TEST(execute_only_exec_samples_nothing_of_the_new_image)
{
	char copy[] = "/tmp/exec_only_XXXXXX";
	int in, out;
	char buf[4096];
	ssize_t len;

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "needs hardware counters");
	find_helper(_metadata);
	in = open(helper, O_RDONLY);
	out = mkstemp(copy);
	ASSERT_LE(0, in);
	ASSERT_LE(0, out);
	while ((len = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(len, write(out, buf, len));
	close(in);
	/* Nobody's own, so that nobody may remove it from sticky /tmp. */
	ASSERT_EQ(0, fchown(out, NOBODY, NOBODY));
	ASSERT_EQ(0, fchmod(out, 0111));
	close(out);
	ASSERT_EQ(0, become_nobody());
	ASSERT_NE(0, access(copy, R_OK)) TH_LOG("nobody may read %s", copy);
	exec_rounds_sample_nothing(_metadata, copy, 3);
	unlink(copy);
}

/* ---- what samples and mapped pages reveal (arm64) ----------------------- */

/* 64-bit arm64 user addresses are below 2^48 (48-bit VA); the kernel's are not. */
#define USER_ADDR_LIMIT	(1ULL << 48)

/*
 * A user-only sampling counter's samples carry user PCs only: the
 * interrupt often lands in the kernel (QEMU raises it late; here the task
 * lives in getppid()), and that PC must not reach userspace (KASLR).
 */
TEST(user_only_samples_have_no_kernel_addresses)
{
	struct pmuctx_sample buf[256];
	struct pmuctx_samples_read sr;
	struct pmuctx_info info;
	uint64_t total = 0, kernel = 0, foreign = 0, first_kernel = 0, end;
	int fd, i;

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "no hardware PMU (x86_64 TCG)");
	ASSERT_EQ(0, pmu_info(&info));
	if (!(info.features & PMUCTX_FEAT_OVERFLOW))
		SKIP(return, "no overflow interrupt");
	ASSERT_EQ(0, become_nobody());
	fd = pmuctx_open_raw(PMU_INST_RETIRED, PMUCTX_ATTR_EXCLUDE_KERNEL, 10007, 0);
	if (fd < 0 && errno == ENOENT)
		fd = pmuctx_open_raw(PMU_CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, 100003, 0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	end = now_ns() + 600000000ULL;
	do {
		for (i = 0; i < 200; i++)
			syscall(SYS_getppid);
		spin_loop(2000);
		for (;;) {
			ASSERT_EQ(0, pmuctx_take_samples(fd, buf, sizeof(buf[0]), 256, &sr));
			for (i = 0; i < (int)sr.nr; i++) {
				total++;
				if (buf[i].ip >= USER_ADDR_LIMIT) {
					if (!kernel++)
						first_kernel = buf[i].ip;
				}
				if (buf[i].tid != (uint32_t)gettid())
					foreign++;
			}
			if (!sr.nr)
				break;
		}
	} while (now_ns() < end);
	TH_LOG("%llu samples, %llu with a kernel address (first %#llx)",
	       (unsigned long long)total, (unsigned long long)kernel,
	       (unsigned long long)first_kernel);
	EXPECT_LE(20, total);
	EXPECT_EQ(0, kernel);
	EXPECT_EQ(0, foreign);
	close(fd);
}

struct el0_view {
	int32_t status;		/* 0, or what failed in the reader */
	uint32_t nr;		/* registers read */
	uint32_t idx[34];
	uint64_t val[34];
	int32_t trapped[34];
};

/*
 * The reader: a task with one mapped counter (SW_INCR, event counter 0),
 * hence EL0 access to the PMU while its context is loaded.  On each byte
 * from @cmd it reads every other counter register from EL0.
 */
static void __attribute__((noreturn)) el0_reader(unsigned int nr_general,
						 int cmd, int res)
{
	const struct pmuctx_mmap_page *page;
	struct el0_view v;
	unsigned int n;
	int fd;
	char c;

	memset(&v, 0, sizeof(v));
	fd = pmuctx_open_raw(ARM64_SW_INCR, PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
	page = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (fd < 0)
		v.status = 1;
	/*
	 * The perf-events backend maps nothing: then no register may read
	 * anything at EL0 (perf's own user access is off by default).
	 */
	else if (page == MAP_FAILED && !(errno == ENODEV && hw_perf_backed()))
		v.status = 2;
	/* Our own counter is event counter 0 (x86: general counter 0). */
	else if (page != MAP_FAILED && page->index != 1)
		v.status = 3;
	while (read(cmd, &c, 1) == 1 && c != 'q') {
		v.nr = 0;
		for (n = 1; n < nr_general && n < 31; n++) {
			v.idx[v.nr] = n;
			v.trapped[v.nr] = el0_read_counter(n, &v.val[v.nr]);
			v.nr++;
		}
		v.idx[v.nr] = ARM64_CYCLE_IDX;
		v.trapped[v.nr] = el0_read_counter(ARM64_CYCLE_IDX, &v.val[v.nr]);
		v.nr++;
#if defined(__x86_64__)
		/* The other fixed counters: instructions and reference cycles. */
		for (n = X86_FIXED_IDX(0); n <= X86_FIXED_IDX(2); n += 2) {
			v.idx[v.nr] = n;
			v.trapped[v.nr] = el0_read_counter(n, &v.val[v.nr]);
			v.nr++;
		}
#endif
		write_full(res, &v, sizeof(v));
	}
	_exit(0);
}

/* Every register the reader does not own reads 0 (or traps). */
static int check_el0_view(struct __test_metadata *_metadata,
			  const struct el0_view *v, const char *when)
{
	unsigned int i;
	int leaks = 0;

	EXPECT_EQ(0, v->status) TH_LOG("reader setup failed (%d)", v->status);
	for (i = 0; i < v->nr; i++) {
		if (!v->trapped[i] && v->val[i]) {
			leaks++;
			TH_LOG("%s: counter %u reads %llu at EL0", when, v->idx[i],
			       (unsigned long long)v->val[i]);
		}
	}
	EXPECT_EQ(0, leaks);
	if (getenv("PMUCTX_DEBUG"))
		for (i = 0; i < v->nr; i++)
			TH_LOG("%s: counter %u: %s %llu", when, v->idx[i],
			       v->trapped[i] ? "trapped" : "reads",
			       (unsigned long long)v->val[i]);
	return leaks;
}

/*
 * Task A counts on every counter of the PMU and closes them; task B, with
 * a mapped counter of its own on the same CPU, then reads every counter
 * register at EL0: none may show A's counts.
 */
TEST(closed_counters_leave_nothing_at_el0)
{
	int cmd[2], res[2], ready[2], done[2], status, i, opened = 0;
	struct pmuctx_info info;
	struct el0_view v;
	pid_t a, b;
	int fds[33];
	char c;

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "no hardware PMU (x86_64 TCG)");
	ASSERT_EQ(0, pmu_info(&info));
	ASSERT_EQ(0, become_nobody());
	pin_to_cpu(0);
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	b = fork();
	ASSERT_LE(0, b);
	if (!b)
		el0_reader(info.nr_general, cmd[0], res[1]);
	a = fork();
	ASSERT_LE(0, a);
	if (!a) {
		/* The cycle counter first, then every event counter. */
		for (i = 0; i <= (int)info.nr_general && i < 33; i++) {
			fds[i] = pmuctx_open_raw(PMU_CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
			if (fds[i] >= 0)
				opened++;
		}
		spin_loop(3000000);
		for (i = 0; i <= (int)info.nr_general && i < 33; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		/* Wake the reader on this CPU and sleep: it runs next. */
		c = opened;
		write_full(ready[1], &c, 1);
		read_full(done[0], &c, 1);
		_exit(0);
	}
	read_full(ready[0], &c, 1);
	EXPECT_EQ(info.nr_general + 1, (unsigned char)c) TH_LOG("A opened %d counters", c);
	write_full(cmd[1], "r", 1);
	read_full(res[0], &v, sizeof(v));
	check_el0_view(_metadata, &v, "after another task closed its counters");
	write_full(done[1], "d", 1);
	write_full(cmd[1], "q", 1);
	waitpid(a, &status, 0);
	waitpid(b, &status, 0);
}

/* The task holding the context of counter @fd's original instance. */
static pid_t first_holder(int fd)
{
	struct pmuctx_tree_entry ents[4];
	struct pmuctx_tree_read tr = {
		.size = sizeof(tr), .nr_entries = 4, .entries = (uintptr_t)ents,
	};

	if (ioctl(fd, PMUCTX_IOC_TREE_READ, &tr) || !tr.nr_entries)
		return -1;
	return ents[0].tid;
}

/*
 * A family (parent and child with inherited counters on every PMU counter)
 * ping-pongs on CPU 0, swapping contexts; an unrelated task with a mapped
 * counter on the same CPU reads the registers in between, and once more
 * after the parent closed its counters (the child's clones still live).
 */
TEST(family_counts_invisible_at_el0)
{
	int cmd[2], res[2], a[2], bp[2], status, i, r, opened = 0, leaks = 0;
	struct pmuctx_info info;
	struct el0_view v;
	int fds[33];
	pid_t reader, kid;
	char c = 'x';

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "no hardware PMU (x86_64 TCG)");
	ASSERT_EQ(0, pmu_info(&info));
	ASSERT_EQ(0, become_nobody());
	pin_to_cpu(0);
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(res));
	ASSERT_EQ(0, pipe(a));
	ASSERT_EQ(0, pipe(bp));
	reader = fork();	/* before the family exists: unrelated */
	ASSERT_LE(0, reader);
	if (!reader)
		el0_reader(info.nr_general, cmd[0], res[1]);
	for (i = 0; i <= (int)info.nr_general && i < 33; i++) {
		fds[i] = pmuctx_open_raw(PMU_CPU_CYCLES, PMUCTX_ATTR_INHERIT |
				     PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
		if (fds[i] >= 0)
			opened++;
	}
	EXPECT_EQ(info.nr_general + 1, opened);
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		for (;;) {
			read_full(a[0], &c, 1);
			if (c == 'q')
				_exit(0);
			spin_loop(20000);
			write_full(bp[1], &c, 1);
		}
	}
	for (r = 0; r < 600; r++) {
		write_full(a[1], "p", 1);
		spin_loop(20000);
		read_full(bp[0], &c, 1);
		if (r % 100 == 99) {
			write_full(cmd[1], "r", 1);
			read_full(res[0], &v, sizeof(v));
			leaks += check_el0_view(_metadata, &v, "during the ping-pong");
		}
	}
	/*
	 * Swaps move contexts: go on until we hold the originals' context
	 * (the tree read's first entry), then close them while it is loaded
	 * here; the child keeps its clones.
	 */
	for (r = 0; r < 50 && first_holder(fds[0]) != getpid(); r++) {
		write_full(a[1], "p", 1);
		read_full(bp[0], &c, 1);
	}
	if (getenv("PMUCTX_DEBUG"))
		TH_LOG("holder %d after %d more round trips (we are %d)",
		       first_holder(fds[0]), r, getpid());
	spin_loop(1000000);
	for (i = 0; i <= (int)info.nr_general && i < 33; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	write_full(cmd[1], "r", 1);
	read_full(res[0], &v, sizeof(v));
	leaks += check_el0_view(_metadata, &v, "after the parent closed");
	write_full(a[1], "q", 1);
	write_full(cmd[1], "q", 1);
	waitpid(kid, &status, 0);
	waitpid(reader, &status, 0);
	TH_LOG("%d leaked register values", leaks);
}

/* ---- bounds ------------------------------------------------------------ */

static long max_counters(void)
{
	return pmuctx_module_param("max_counters_per_task",
				   PMUCTX_DEFAULT_MAX_COUNTERS);
}

/* Room for more fds than the limit, so EMFILE can only come from pmuctx. */
static void raise_nofile(struct __test_metadata *_metadata, long need)
{
	struct rlimit rl = { need, need };

	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)) TH_LOG("%s", strerror(errno));
}

TEST(counters_per_context_are_bounded)
{
	long limit = max_counters(), n = 0, i;
	struct pmuctx_ctx_stats st;
	int *fds, fd, err = 0;

	SELECTED_OR_SKIP();
	raise_nofile(_metadata, limit + 256);
	ASSERT_EQ(0, become_nobody());
	fds = calloc(limit + 8, sizeof(*fds));
	ASSERT_NE(NULL, fds);
	while (n < limit + 4) {
		fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, 0, 0);
		if (fd < 0) {
			err = errno;
			break;
		}
		fds[n++] = fd;
	}
	TH_LOG("opened %ld counters in one context (limit %ld): %s", n, limit,
	       err ? strerror(err) : "no error");
	EXPECT_EQ(limit, n);
	EXPECT_EQ(EMFILE, err);
	if (n) {
		ASSERT_EQ(0, ctx_stats(fds[0], &st));
		EXPECT_GE(limit, st.nr_counters);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

#define CHAIN_GENS	4
#define CHAIN_PER_GEN	400

struct chain_report {
	int opened;	/* inherited counters this generation opened */
	int err;	/* errno of the open that failed, 0 = none */
	int nr;		/* its context's counters afterwards */
	int stale;	/* clones of closed counters found in it */
	int stale_after_close;	/* ...and after it closed its own */
};

/*
 * Clones left in the caller's context: a probe counter's context holds
 * the probe only, once closed counters are retired (allow a second).
 */
static int stale_in_own_context(void)
{
	struct pmuctx_ctx_stats st;
	int probe, tries;

	probe = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, 0, 0);
	if (probe < 0)
		return -1;
	/*
	 * Up to 5 s: the next generation's 400 closes may be the last ones,
	 * and took 0.98 s on the x86 debug kernel beside a make check.
	 */
	for (tries = 0; tries < 500; tries++) {
		if (ctx_stats(probe, &st)) {
			close(probe);
			return -1;
		}
		if (st.nr_counters == 1)
			break;
		sleep_ms(10);
	}
	close(probe);
	return st.nr_counters - 1;
}

/*
 * Generation @g opens CHAIN_PER_GEN inherited counters, forks the next
 * generation and closes them.  Each generation checks (with a probe
 * counter) how many clones of closed counters its context still holds,
 * when it starts and after its own close: equivalent swaps may have left
 * the originals' context with the child and a clone's with the parent.
 */
static void __attribute__((noreturn)) chain_gen(int g, struct chain_report *rep)
{
	int fds[CHAIN_PER_GEN], closed[2], i, n = 0, status;
	struct pmuctx_ctx_stats st;
	pid_t kid;
	char c;

	if (g)
		rep[g].stale = stale_in_own_context();
	for (i = 0; i < CHAIN_PER_GEN; i++) {
		fds[i] = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
		if (fds[i] < 0) {
			rep[g].err = errno;
			break;
		}
		n++;
	}
	rep[g].opened = n;
	if (n && !ctx_stats(fds[0], &st))
		rep[g].nr = st.nr_counters;
	if (g + 1 == CHAIN_GENS)
		_exit(0);
	if (pipe(closed))
		_exit(12);
	kid = fork();
	if (kid < 0)
		_exit(13);
	if (!kid) {
		for (i = 0; i < n; i++)
			close(fds[i]);
		close(closed[1]);
		if (read(closed[0], &c, 1) != 1)
			_exit(14);
		chain_gen(g + 1, rep);
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	rep[g].stale_after_close = stale_in_own_context();
	write_full(closed[1], "c", 1);
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status))
		_exit(15);
	_exit(WEXITSTATUS(status));
}

TEST(closed_counters_are_not_inherited_down_a_chain)
{
	struct chain_report *rep = shared_area(sizeof(*rep) * CHAIN_GENS);
	long limit = max_counters();
	int g, status;
	pid_t top;

	SELECTED_OR_SKIP();
	ASSERT_NE(NULL, rep);
	ASSERT_EQ(0, become_nobody());
	top = fork();
	ASSERT_LE(0, top);
	if (!top)
		chain_gen(0, rep);
	ASSERT_EQ(top, waitpid(top, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
	for (g = 0; g < CHAIN_GENS; g++) {
		TH_LOG("generation %d: opened %d (%s), context holds %d, stale clones %d, after its close %d",
		       g, rep[g].opened, rep[g].err ? strerror(rep[g].err) : "ok",
		       rep[g].nr, rep[g].stale, rep[g].stale_after_close);
		EXPECT_GE(limit, rep[g].nr);
		EXPECT_EQ(0, rep[g].stale);
		EXPECT_EQ(0, rep[g].stale_after_close);
		if (rep[g].err)
			EXPECT_EQ(EMFILE, rep[g].err);
	}
}

/*
 * Closing a counter retires every clone, wherever its holder is: a child
 * that inherited it and is blocked holds nothing afterwards, and once every
 * fd is closed and the child exited the module is no longer in use.
 */
TEST(close_retires_every_clone)
{
	int status, refs;
	pid_t s;

	SELECTED_OR_SKIP();
	s = fork();
	ASSERT_LE(0, s);
	if (!s) {
		struct pmuctx_ctx_stats st = { 0 };
		int fd, probe, closed[2], rel[2], tries, who;
		unsigned int nr[2];
		pid_t kid;
		char c;

		if (become_nobody() || pipe(closed) || pipe(rel))
			_exit(2);
		fd = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
		if (fd < 0)
			_exit(3);
		kid = fork();
		if (!kid) {
			close(fd);
			write_full(closed[1], "c", 1);
			read_full(rel[0], &c, 1);
			touch_pages(10);
			_exit(0);
		}
		read_full(closed[0], &c, 1);
		close(fd);
		/*
		 * Swaps may have left the original's context with the child
		 * and a clone's with us: neither may hold anything now.
		 */
		for (who = 0; who < 2; who++) {
			probe = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, who ? kid : 0, 0);
			if (probe < 0)
				_exit(4);
			for (tries = 0; tries < 100; tries++) {
				if (ctx_stats(probe, &st))
					_exit(5);
				if (st.nr_counters == 1)
					break;
				sleep_ms(10);
			}
			close(probe);
			nr[who] = st.nr_counters;
		}
		write_full(rel[1], "r", 1);
		waitpid(kid, &status, 0);
		fprintf(stderr, "# after the close, our context holds %u counters, the child's %u\n",
			nr[0], nr[1]);
		_exit(nr[0] == 1 && nr[1] == 1 ? 0 : 1);
	}
	ASSERT_EQ(s, waitpid(s, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("a closed counter's clone survived (%d)",
						 WEXITSTATUS(status));
	/* Nothing of ours is open and every task exited: no module reference. */
	refs = module_refcount_settled();
	EXPECT_EQ(0, refs) TH_LOG("pmuctx still in use by %d", refs);
}

/*
 * A mapped PMU counter closed while its context is loaded: the context
 * keeps running with no hardware counter, and neither its task nor an
 * unrelated one on that CPU may read a counter register at EL0 then.
 */
TEST(closed_mapped_counter_closes_el0)
{
	int go[2], res[2], status, fd;
	uint64_t val = 0;
	void *page;
	pid_t b;
	char c;

	SELECTED_OR_SKIP();
	if (!have_hw_pmu())
		SKIP(return, "no hardware PMU (x86_64 TCG)");
	if (hw_perf_backed())
		SKIP(return, "the perf-events backend maps no counter");
	ASSERT_EQ(0, become_nobody());
	pin_to_cpu(0);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(res));
	b = fork();
	ASSERT_LE(0, b);
	if (!b) {
		/* Unrelated to the counter; runs on CPU 0 after the close. */
		read_full(go[0], &c, 1);
		c = el0_read_counter(ARM64_CYCLE_IDX, &val) ? 't' : 'r';
		write_full(res[1], &c, 1);
		_exit(0);
	}
	fd = pmuctx_open_raw(PMU_CPU_CYCLES, PMUCTX_ATTR_EXCLUDE_KERNEL, 0, 0);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, page);
	spin_loop(10000);
	EXPECT_EQ(0, el0_read_counter(ARM64_CYCLE_IDX, &val))
		TH_LOG("a mapped counter's own task could not read it");
	munmap(page, 4096);
	close(fd);
	/* Still this task's loaded context, now without a PMU counter. */
	EXPECT_EQ(-1, el0_read_counter(ARM64_CYCLE_IDX, &val))
		TH_LOG("EL0 read the cycle counter after the close: %llu",
		       (unsigned long long)val);
	write_full(go[1], "g", 1);
	read_full(res[0], &c, 1);
	EXPECT_EQ('t', c) TH_LOG("an unrelated task read the cycle counter at EL0");
	waitpid(b, &status, 0);
}

/*
 * An open that fails after it hooked its target (a link and an empty
 * context were made for it) leaves nothing: once the target has been back
 * to user space, no module reference is left while it lives on.
 */
static int open_fails_on(pid_t kid, int how)
{
	struct pmuctx_attr a = {
		.size = sizeof(a),
		.type = PMUCTX_TYPE_SOFTWARE,
		.config = PMUCTX_SW_TASK_CLOCK,
	};
	int leader, fd;

	if (how == EINVAL) {
		/* A leader in our own context: the member may not join it. */
		leader = pmuctx_open_sw(PMUCTX_SW_TASK_CLOCK, 0, 0, 0, -1);
		if (leader < 0)
			return -2;
		fd = pmuctx_open_attr(&a, kid, leader, PMUCTX_OPEN_CLOEXEC);
		close(leader);
	} else {
		fd = pmuctx_open_attr(&a, kid, -1, PMUCTX_OPEN_CLOEXEC);
	}
	if (fd >= 0) {
		close(fd);
		return -3;
	}
	return errno;
}

static int set_max_counters(long v)
{
	FILE *f = fopen("/sys/module/pmuctx/parameters/max_counters_per_task", "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) > 0 ? 0 : -1;
	return fclose(f) ? -1 : ret;
}

TEST(failed_open_leaves_target_unhooked)
{
	int cmd[2], ack[2], status, refs, round, err;
	long limit = max_counters();
	pid_t kid, opener;
	char c;

	SELECTED_OR_SKIP();
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(ack));
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		/* Idle in read(); each byte brings it back to user space. */
		while (read(cmd[0], &c, 1) == 1 && c != 'q')
			write_full(ack[1], &c, 1);
		_exit(0);
	}
	for (round = 0; round < 2; round++) {
		if (round == 1 && (geteuid() || set_max_counters(0)))
			break;
		/*
		 * From a child of its own: our /dev/pmuctx fd would hold a
		 * module reference of its own.
		 */
		opener = fork();
		ASSERT_LE(0, opener);
		if (!opener)
			_exit(open_fails_on(kid, round ? EMFILE : EINVAL) & 0xff);
		ASSERT_EQ(opener, waitpid(opener, &status, 0));
		err = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (round == 1)
			ASSERT_EQ(0, set_max_counters(limit));
		EXPECT_EQ(round ? EMFILE : EINVAL, err);
		write_full(cmd[1], "g", 1);
		read_full(ack[0], &c, 1);
		refs = module_refcount_settled();
		EXPECT_EQ(0, refs) TH_LOG("after a failed open (%s), pmuctx is used by %d",
					  round ? "EMFILE" : "EINVAL", refs);
	}
	write_full(cmd[1], "q", 1);
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
}

/*
 * Spare fork kits and memory cgroups.  A kit is charged to the cgroup of
 * the task that made it: a spare left by a task of cgroup A may not serve
 * a fork in cgroup B (B would be charged less than it costs, A for memory
 * it no longer uses), and a spare nobody takes is dropped within seconds,
 * so A's charge goes back when its tasks are gone.
 */
#define CG_ROOT		"/tmp/pmuctx-cg"
/* Kits of megabytes: memory.current moves in batches of 64 pages. */
#define KIT_COUNTERS	8000

static int cg_write(const char *cg, const char *file, const char *val)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), CG_ROOT "%s%s/%s", *cg ? "/" : "", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	close(fd);
	return ret;
}

static long long cg_memory(const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), CG_ROOT "/%s/memory.current", cg);
	return read_long(path);
}

/* cgroup2 with the memory controller for A, B and C, or -1. */
static int cg_setup(void)
{
	static const char *const names[] = { "A", "B", "C" };
	char path[64];
	unsigned int i;

	mkdir(CG_ROOT, 0755);
	if (mount("none", CG_ROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -1;
	if (cg_write("", "cgroup.subtree_control", "+memory"))
		return -1;
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), CG_ROOT "/%s", names[i]);
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
	}
	return 0;
}

/*
 * In cgroup @cg, on CPU 0: open KIT_COUNTERS inherited counters, fork a
 * child, and report what the fork cost @cg (the parent's refill and the
 * child's kit), measured once the child is in user space, while it lives: once it exits, its unused
 * kit becomes CPU 0's spare, and the spare expiry another cgroup's spare
 * queued may free it at any moment, so a measurement after the exit could
 * count it or not.  Then the child exits (a spare for the next fork on
 * CPU 0).
 */
static int kit_fds[KIT_COUNTERS];

static long long kit_fork_in(const char *cg)
{
	int res[2], go[2], ready[2], *fds = kit_fds, i, status;
	long long delta = -1, m0;
	pid_t p, kid;
	char c;

	if (pipe(res))
		return -1;
	p = fork();
	if (p < 0)
		return -1;
	if (!p) {
		pin_to_cpu(0);
		if (cg_write(cg, "cgroup.procs", "0") || pipe(go) || pipe(ready))
			_exit(1);
		for (i = 0; i < KIT_COUNTERS; i++)
			fds[i] = open_sw_on(PMUCTX_SW_PAGE_FAULTS, PMUCTX_ATTR_INHERIT, 0, 0);
		m0 = cg_memory(cg);
		kid = fork();
		if (!kid) {
			write_full(ready[1], "r", 1);
			read_full(go[0], &c, 1);
			_exit(0);
		}
		/*
		 * The child makes its own kit on its way back to user space
		 * (a task work): until it has written, that kit may not exist.
		 */
		read_full(ready[0], &c, 1);
		delta = cg_memory(cg) - m0;
		write_full(go[1], "g", 1);
		waitpid(kid, &status, 0);
		write_full(res[1], &delta, sizeof(delta));
		for (i = 0; i < KIT_COUNTERS; i++)
			close(fds[i]);
		_exit(0);
	}
	read_full(res[0], &delta, sizeof(delta));
	waitpid(p, &status, 0);
	close(res[0]);
	close(res[1]);
	return delta;
}

TEST(spare_kits_stay_in_their_memory_cgroup)
{
	long long in_c, in_b, a_base, a_left;
	long limit = max_counters();

	SELECTED_OR_SKIP();
	if (geteuid() || cg_setup())
		SKIP(return, "no cgroup2 memory controller here (%s)", strerror(errno));
	raise_nofile(_metadata, KIT_COUNTERS + 64);
	ASSERT_EQ(0, set_max_counters(KIT_COUNTERS + 16));
	/*
	 * What a fork costs with no foreign spare about (after a first run:
	 * the first one measured a kit more, in every cgroup, with or without
	 * spare kits).
	 */
	kit_fork_in("C");
	sleep_ms(2500);
	in_c = kit_fork_in("C");
	/* A's spare, left alone: dropped within seconds. */
	sleep_ms(2500);
	a_base = cg_memory("A");
	kit_fork_in("A");
	sleep_ms(2500);
	a_left = cg_memory("A") - a_base;
	/* A's spare, then at once a fork in B: B pays for its own kits. */
	kit_fork_in("A");
	in_b = kit_fork_in("B");
	ASSERT_EQ(0, set_max_counters(limit));
	TH_LOG("a fork with %d inherited counters costs %lld bytes in C, %lld in B right after A's; A keeps %lld",
	       KIT_COUNTERS, in_c, in_b, a_left);
	ASSERT_LT(0, in_c);
	EXPECT_LE(in_c * 3 / 4, in_b) TH_LOG("B's fork used A's spare kit");
	/*
	 * A fork costs two kits (the parent's refill, the child's own); a
	 * spare left in A is one.  What else A keeps (charges still in
	 * per-CPU batches of 64 pages) is far less than half a kit.
	 */
	EXPECT_GE(in_c / 4, a_left) TH_LOG("A stays charged for a kit nobody uses");
}

/*
 * The cookies PMUCTX_IOC_STATS shows say whether two contexts are of one
 * family, and nothing of how many contexts and changes the machine made
 * meanwhile: two changes in a row of one context no longer read as
 * neighbouring values of one sequence (they differed by 4 before).
 */
TEST(stats_cookies_reveal_no_sequence)
{
	struct pmuctx_ctx_stats st1, st2;
	int fd, fd2, close_ones = 0, i;

	SELECTED_OR_SKIP();
	for (i = 0; i < 8; i++) {
		fd = open_sw_on(PMUCTX_SW_TASK_CLOCK, 0, 0, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ctx_stats(fd, &st1));
		fd2 = open_sw_on(PMUCTX_SW_PAGE_FAULTS, 0, 0, 0);
		ASSERT_LE(0, fd2);
		ASSERT_EQ(0, ctx_stats(fd, &st2));
		EXPECT_NE(0, st1.generation);
		EXPECT_NE(st1.generation, st2.generation);
		if (st2.generation > st1.generation &&
		    st2.generation - st1.generation < 4096)
			close_ones++;
		close(fd2);
		close(fd);
	}
	EXPECT_GT(4, close_ones) TH_LOG("%d of 8 changes took the next cookie of a sequence",
					close_ones);
}

TEST_HARNESS_MAIN
