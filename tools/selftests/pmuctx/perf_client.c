// SPDX-License-Identifier: GPL-2.0
/*
 * A perf_event_open program of our own, run by perf_compat_test.sh under
 * "pmuctx exec": the paths of libpmuctx-perf.so that perf stat does not
 * take.  A member counts only while its leader is enabled, group reads
 * carry the ids PERF_EVENT_IOC_ID gives, PERF_FORMAT_LOST reads 0 after
 * each value, RESET zeroes, prctl(PR_TASK_PERF_EVENTS_*) stops and starts
 * what the process opened, frequency sampling opens (perf_sampling
 * checks sampling), and a duplicated
 * descriptor (dup, dup2, fcntl F_DUPFD_CLOEXEC) is the same event, which
 * lives until its last descriptor closes.  Dynamically linked: the
 * shim is preloaded into it.  TAP output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 1000000UL
/* what the shim's ioctl wrapper and the kernel entry add to a loop's count */
#define SLACK 20000UL

static int n, failed;

static void check(int cond, const char *what, unsigned long long a, unsigned long long b)
{
	printf("%sok %d %s (%llu, %llu)\n", cond ? "" : "not ", ++n, what, a, b);
	failed += !cond;
}

static void loop(unsigned long i)
{
#if defined(__x86_64__)
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(i) : : "cc");
#elif defined(__aarch64__)
	__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(i) : : "cc");
#endif
}

static int open_event(__u64 config, int disabled, __u64 read_format, int group_fd)
{
	struct perf_event_attr pa;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = config;
	pa.disabled = disabled;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	pa.read_format = read_format;
	return syscall(__NR_perf_event_open, &pa, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static uint64_t read_one(int fd)
{
	uint64_t v[2] = { 0, 1 };

	/* PERF_FORMAT_LOST: the value, then 0 */
	if (read(fd, v, sizeof(v)) != sizeof(v) || v[1])
		return ~0ULL;
	return v[0];
}

/*
 * A perf event is a file: every descriptor of it reads and controls the
 * same counter, and closing one leaves the others working.
 */
static void dup_checks(void)
{
	const __u64 fmt = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	uint64_t g[1 + 2 * 2], a, b, id0 = 0, id1 = 0;
	int leader, member, copy, copy2, other, ret;
	ssize_t got;

	leader = open_event(PERF_COUNT_HW_INSTRUCTIONS, 1, fmt, -1);
	copy = dup(leader);
	/* a member opened through the duplicate joins the same group */
	member = open_event(PERF_COUNT_HW_INSTRUCTIONS, 1, fmt, copy);
	check(leader >= 0 && copy >= 0 && member >= 0, "dup of a leader; a member opened on the copy",
	      copy, member);
	if (leader < 0 || copy < 0 || member < 0)
		return;
	ioctl(leader, PERF_EVENT_IOC_ID, &id0);
	ioctl(copy, PERF_EVENT_IOC_ID, &id1);
	check(id0 && id0 == id1, "PERF_EVENT_IOC_ID: one event under both descriptors", id0, id1);
	ioctl(member, PERF_EVENT_IOC_ENABLE, 0);
	ret = ioctl(copy, PERF_EVENT_IOC_ENABLE, 0);
	loop(N);
	ioctl(copy, PERF_EVENT_IOC_DISABLE, 0);
	got = read(leader, g, sizeof(g));
	check(!ret && got == (ssize_t)sizeof(g) && g[1] >= 2 * N && g[1] < 2 * N + SLACK && g[3] >= 2 * N,
	      "ENABLE and DISABLE through the copy drive the group", g[1], g[3]);
	a = g[1];
	close(leader);
	got = read(copy, g, sizeof(g));
	check(got == (ssize_t)sizeof(g) && g[1] == a, "closing the first descriptor: the copy reads on", g[1], a);
	ret = ioctl(copy, PERF_EVENT_IOC_ENABLE, 0);
	loop(N);
	ioctl(copy, PERF_EVENT_IOC_DISABLE, 0);
	got = read(copy, g, sizeof(g));
	check(!ret && got == (ssize_t)sizeof(g) && g[1] - a >= 2 * N && g[1] - a < 2 * N + SLACK &&
	      g[3] - a >= 2 * N, "... and still enables its member", g[1] - a, g[3] - a);

	copy2 = fcntl(copy, F_DUPFD_CLOEXEC, 100);
	check(copy2 >= 100 && (fcntl(copy2, F_GETFD) & FD_CLOEXEC), "fcntl F_DUPFD_CLOEXEC", copy2, 100);
	ret = ioctl(copy2, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	got = read(copy, g, sizeof(g));
	check(!ret && got == (ssize_t)sizeof(g) && g[1] == 0 && g[3] == 0,
	      "RESET through that copy zeroes the group", g[1], g[3]);

	/* dup2 onto another event's descriptor: that event ends, the name follows */
	other = open_event(PERF_COUNT_HW_INSTRUCTIONS, 0, 0, -1);
	ret = dup2(copy2, other);
	got = read(other, g, sizeof(g));
	check(ret == other && got == (ssize_t)sizeof(g) && g[0] == 2,
	      "dup2 over an event: the descriptor now reads the group", ret, g[0]);
	close(copy);
	close(copy2);
	ret = ioctl(other, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	loop(N);
	ioctl(other, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	got = read(other, g, sizeof(g));
	b = got == (ssize_t)sizeof(g) ? g[3] : ~0ULL;
	check(!ret && g[1] >= 2 * N && g[1] < 2 * N + SLACK && b >= 2 * N && b < 2 * N + SLACK,
	      "the last descriptor left drives the group", g[1], b);
	close(other);

	/*
	 * close_range forgets descriptors as close does: the duplicate left
	 * becomes the one the shim switches the (now leaderless) event through.
	 */
	copy = fcntl(member, F_DUPFD, 200);	/* above it: member stays the primary */
	ioctl(copy, PERF_EVENT_IOC_DISABLE, 0);
	read(copy, g, sizeof(g));
	a = g[1];
	ret = close_range(member, member, 0);
	ioctl(copy, PERF_EVENT_IOC_ENABLE, 0);
	loop(N);
	ioctl(copy, PERF_EVENT_IOC_DISABLE, 0);
	got = read(copy, g, sizeof(g));
	check(!ret && got == 3 * sizeof(uint64_t) && g[0] == 1 && g[1] - a >= 2 * N &&
	      g[1] - a < 2 * N + SLACK, "close_range of the first descriptor: the duplicate drives it",
	      got, g[1] - a);
	close(copy);
}

int main(void)
{
	const __u64 fmt = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
	uint64_t g[1 + 2 * 3], id_leader = 0, id_member = 0, before, after;
	struct perf_event_attr pa;
	int leader, member, single, ret;
	ssize_t got;

	printf("TAP version 13\n");
	leader = open_event(PERF_COUNT_HW_INSTRUCTIONS, 1, fmt, -1);
	member = open_event(PERF_COUNT_HW_INSTRUCTIONS, 0, fmt, leader);
	single = open_event(PERF_COUNT_HW_INSTRUCTIONS, 0, PERF_FORMAT_LOST, -1);
	check(leader >= 0 && member >= 0 && single >= 0, "a group and a single event open", leader, member);
	if (leader < 0 || member < 0 || single < 0) {
		printf("1..%d\n", n);
		return 1;
	}

	loop(N);
	before = read_one(single);
	/* nr, then per event value, id, lost */
	memset(g, 0xff, sizeof(g));
	got = read(member, g, sizeof(g));
	check(got == (ssize_t)(7 * sizeof(uint64_t)),
	      "a member's group read is the group's: nr and 3 words per event", got / 8, 7);
	check(g[0] == 2 && g[1] == 0 && g[4] == 0,
	      "the enabled member of a disabled leader counted nothing", g[1], g[4]);
	check(g[3] == 0 && g[6] == 0, "PERF_FORMAT_LOST reads 0 after each value", g[3], g[6]);
	ret = ioctl(leader, PERF_EVENT_IOC_ID, &id_leader) | ioctl(member, PERF_EVENT_IOC_ID, &id_member);
	check(!ret && id_leader == g[2] && id_member == g[5] && id_leader != id_member,
	      "the group read's ids are PERF_EVENT_IOC_ID's", id_leader, id_member);
	check(before >= 2 * N && before < 2 * N + SLACK, "a single event counts the loop", before, 2 * N);

	ioctl(leader, PERF_EVENT_IOC_ENABLE, 0);
	loop(N);
	ioctl(leader, PERF_EVENT_IOC_DISABLE, 0);
	got = read(leader, g, sizeof(g));
	check(got > 0 && g[1] >= 2 * N && g[1] < 2 * N + SLACK, "the leader counts while enabled", g[1], 2 * N);
	check(g[4] >= 2 * N && g[4] < 2 * N + SLACK, "its member counts with it (no ioctl of its own)", g[4], 2 * N);
	after = g[4];
	loop(N);
	got = read(leader, g, sizeof(g));
	check(got > 0 && g[4] == after, "disabling the leader stops the member", g[4], after);

	ret = ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	got = read(leader, g, sizeof(g));
	check(!ret && got > 0 && g[1] == 0 && g[4] == 0, "RESET with PERF_IOC_FLAG_GROUP zeroes the group",
	      g[1], g[4]);

	before = read_one(single);
	prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
	loop(N);
	after = read_one(single);
	check(after - before < SLACK, "PR_TASK_PERF_EVENTS_DISABLE stops the process's events", after - before, 0);
	prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
	loop(N);
	before = read_one(single);
	check(before - after >= 2 * N && before - after < 2 * N + SLACK,
	      "PR_TASK_PERF_EVENTS_ENABLE starts them again", before - after, 2 * N);
	got = read(leader, g, sizeof(g));
	check(got > 0 && g[1] >= 2 * N && g[4] >= 2 * N, "... the group too, leader and member", g[1], g[4]);

	ret = ioctl(single, PERF_EVENT_IOC_SET_OUTPUT, -1);
	check(ret == 0, "SET_OUTPUT to -1 is a no-op", ret, 0);
	errno = 0;
	ret = ioctl(single, PERF_EVENT_IOC_PERIOD, &(uint64_t){ 1000 });
	check(ret == -1 && errno == EINVAL, "PERIOD on a counting event: EINVAL", errno, EINVAL);
	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = PERF_TYPE_HARDWARE;
	pa.config = PERF_COUNT_HW_CPU_CYCLES;
	pa.sample_freq = 1000;
	pa.freq = 1;
	errno = 0;
	ret = syscall(__NR_perf_event_open, &pa, 0, -1, -1, 0);
	check(ret >= 0, "frequency sampling opens (perf_sampling samples with it)", ret, errno);
	if (ret >= 0)
		close(ret);
	close(member);
	close(leader);
	close(single);

	dup_checks();
	printf("1..%d\n", n);
	return failed != 0;
}
