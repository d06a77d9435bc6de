// SPDX-License-Identifier: GPL-2.0
/*
 * perf's side-band records from the kernel itself.  A perf reader names a
 * sample's process and resolves its addresses from the COMM and MMAP2
 * records its kernel writes at each exec and mapping, and follows
 * children through FORK and EXIT.  pmuctx's samples carry none of that,
 * and /proc (sideband.c) is empty once a process has exited: perf record
 * of a command that ends before perf drains its first sample would name
 * nothing.  So beside a sampling event that asks for side-band records
 * the shim opens software "dummy" perf events on the same task: they
 * count nothing, and the kernel writes those records into their rings as
 * they happen, which the drain copies into the event's ring.  An
 * inherited event needs one per CPU (perf maps no inherited event that
 * is on every CPU).  A kernel whose perf_event_paranoid refuses them
 * leaves sideband.c's /proc records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"
#include "tracker.h"

#define TRACKER_DATA_PAGES	16
/* PERF_SAMPLE_TID | TIME | CPU at the end of each record (sample_id_all) */
#define TRACKER_ID_BYTES	24
#define TRACKER_RECORD_MAX	65536

struct tracker_ring {
	int fd;
	unsigned char *base;
	size_t len;
};

struct tracker {
	int nr;
	struct tracker_ring *rings;
	unsigned char *rec;	/* one record, unwrapped */
};

static int open_dummy(const struct tracker_want *want, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	a.sample_id_all = 1;
	a.mmap = want->mmap || want->mmap2;
	a.mmap2 = want->mmap2;
	a.mmap_data = want->mmap_data;
	a.comm = want->comm;
	a.comm_exec = want->comm_exec;
	a.task = want->task;
	a.inherit = want->inherit;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	/* pmuctx's samples are stamped with CLOCK_MONOTONIC */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	return syscall(__NR_perf_event_open, &a, want->pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

void tracker_close(struct tracker *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nr; i++) {
		munmap(t->rings[i].base, t->rings[i].len);
		close(t->rings[i].fd);
	}
	free(t->rings);
	free(t->rec);
	free(t);
}

static int add_ring(struct tracker *t, int fd)
{
	size_t len = (1 + TRACKER_DATA_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	t->rings[t->nr].fd = fd;
	t->rings[t->nr].base = base;
	t->rings[t->nr].len = len;
	t->nr++;
	return 0;
}

struct tracker *tracker_open(const struct tracker_want *want)
{
	long cpus = want->inherit ? sysconf(_SC_NPROCESSORS_CONF) : 1;
	struct tracker *t = calloc(1, sizeof(*t));
	int err = ENOMEM, fd;

	if (!t || cpus < 1)
		goto fail;
	t->rings = calloc(cpus, sizeof(*t->rings));
	t->rec = malloc(TRACKER_RECORD_MAX);
	if (!t->rings || !t->rec)
		goto fail;
	if (!want->inherit) {
		fd = open_dummy(want, -1);
		if (fd < 0 || add_ring(t, fd))
			goto fail_errno;
		return t;
	}
	for (long cpu = 0; cpu < cpus; cpu++) {
		fd = open_dummy(want, cpu);
		if (fd < 0 && errno == ENODEV)
			continue;	/* an offline CPU */
		if (fd < 0 || add_ring(t, fd))
			goto fail_errno;
	}
	if (t->nr)
		return t;
	err = ENODEV;
	goto fail;
fail_errno:
	err = errno;
fail:
	tracker_close(t);
	errno = err;
	return NULL;
}

static bool forwarded(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
		return true;
	default:
		return false;
	}
}

static void drain_ring(struct tracker *t, struct tracker_ring *tr, tracker_emit_t emit,
		       void *ctx)
{
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)tr->base;
	const unsigned char *data = tr->base + pg->data_offset;
	uint64_t size = pg->data_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	struct perf_event_header h;
	struct tracker_id id;

	while (head - tail >= sizeof(h)) {
		const unsigned char *trailer;
		uint32_t words[2];

		perf_ring_copy_out(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		perf_ring_copy_out(data, size, tail, t->rec, h.size);
		if (forwarded(h.type) && h.size >= sizeof(h) + TRACKER_ID_BYTES) {
			trailer = t->rec + h.size - TRACKER_ID_BYTES;
			memcpy(words, trailer, sizeof(words));
			id.pid = words[0];
			id.tid = words[1];
			memcpy(&id.time, trailer + 8, sizeof(id.time));
			memcpy(words, trailer + 16, sizeof(words));
			id.cpu = words[0];
			if (!emit(ctx, h.type, h.misc, t->rec + sizeof(h),
				  h.size - sizeof(h) - TRACKER_ID_BYTES, &id))
				break;
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

void tracker_drain(struct tracker *t, tracker_emit_t emit, void *ctx)
{
	for (int i = 0; i < t->nr; i++)
		drain_ring(t, &t->rings[i], emit, ctx);
}
