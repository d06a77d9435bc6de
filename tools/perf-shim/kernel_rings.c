// SPDX-License-Identifier: GPL-2.0
/*
 * Mixed sessions: the kernel's sampling events (software events,
 * tracepoints: shim.c routes them to the kernel) beside pmuctx's in one
 * perf ring.  perf record maps the first event of each CPU (or thread)
 * and sends the others' records to it with PERF_EVENT_IOC_SET_OUTPUT,
 * which the kernel refuses between its events and the library's rings.
 * So the library takes the kernel events' records itself:
 *
 * - a kernel event sent to a library ring gets a ring of its own, mapped
 *   here, which becomes a source of that ring (ring.c): each drain copies
 *   the records the kernel wrote, as it wrote them;
 * - a pmuctx event sent to a kernel event's ring, which the program
 *   mapped from the kernel, makes that a library ring (perf_ring_adopt():
 *   the program's view gets the library's pages, and our own mapping of
 *   the kernel's ring feeds it).
 *
 * A session of kernel events only is left to the kernel, untouched.  The
 * kernel's sampling events opened through the library are timed on
 * CLOCK_MONOTONIC, as pmuctx's samples are (shim.c), so that one session's
 * records sort as they happened.
 *
 * The table has its own lock, taken with signals blocked; drains read
 * it without, so an entry is never freed: a descriptor's entry is used
 * again when its number is (@busy keeps a drain and a close apart).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kernel_rings.h"
#include "signals.h"

struct kernel_ring {
	bool live;		/* the descriptor names a kernel sampling event */
	int busy;		/* 1 while a drain or the close holds @ring */
	struct ring_format fmt;	/* its records' format: an adopted ring's LOST records */
	void *view;		/* the program's mapping of its ring, if any */
	size_t view_len;
	int view_prot;
	struct perf_ring *ring;	/* the library ring it feeds, held */
	bool owns;		/* @ring is the one adopted in its view */
	void *source;		/* our mapping of its ring, a source of @ring */
	size_t source_len;
};

static pthread_mutex_t kernel_rings_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kernel_ring **krings;	/* by fd */
static int krings_len;
static int krings_adopted;		/* rings drain_all must drain */

static struct kernel_ring *kring_of(int fd)
{
	struct kernel_ring *k;

	if (fd < 0 || fd >= __atomic_load_n(&krings_len, __ATOMIC_ACQUIRE))
		return NULL;
	k = __atomic_load_n(&krings[fd], __ATOMIC_ACQUIRE);
	return k && __atomic_load_n(&k->live, __ATOMIC_ACQUIRE) ? k : NULL;
}

static void hold(struct kernel_ring *k)
{
	while (__atomic_exchange_n(&k->busy, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unhold(struct kernel_ring *k)
{
	__atomic_store_n(&k->busy, 0, __ATOMIC_RELEASE);
}

void kernel_ring_opened(int fd, const struct perf_event_attr *pa)
{
	struct kernel_ring *k;
	sigset_t saved;
	uint64_t id;

	if (fd < 0)
		return;
	if (syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id))
		id = 0;
	shim_lock(&kernel_rings_lock, &saved);
	if (fd >= krings_len) {
		int len = fd < 64 ? 128 : 2 * fd;
		struct kernel_ring **t = calloc(len, sizeof(*t));

		if (!t)
			goto out;	/* no mixing for it: the kernel refuses as before */
		/* the old array stays: a lock-free lookup may still read it */
		if (krings)
			memcpy(t, krings, krings_len * sizeof(*t));
		__atomic_store_n(&krings, t, __ATOMIC_RELEASE);
		__atomic_store_n(&krings_len, len, __ATOMIC_RELEASE);
	}
	k = krings[fd];
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			goto out;
		__atomic_store_n(&krings[fd], k, __ATOMIC_RELEASE);
	}
	/* a number used again: the last event's entry, which no drain holds */
	hold(k);
	memset(&k->fmt, 0, sizeof(*k) - offsetof(struct kernel_ring, fmt));
	k->fmt.sample_type = pa->sample_type;
	k->fmt.period = pa->sample_period;
	k->fmt.sample_id_all = pa->sample_id_all;
	k->fmt.id = id;
	__atomic_store_n(&k->live, true, __ATOMIC_RELEASE);
	unhold(k);
out:
	shim_unlock(&kernel_rings_lock, &saved);
}

bool kernel_ring_known(int fd)
{
	return kring_of(fd) != NULL;
}

void kernel_ring_mapped(int fd, void *view, size_t len, int prot)
{
	struct kernel_ring *k = kring_of(fd);
	sigset_t saved;

	if (!k || view == MAP_FAILED)
		return;
	shim_lock(&kernel_rings_lock, &saved);
	if (!k->view) {
		k->view = view;
		k->view_len = len;
		k->view_prot = prot;
	}
	shim_unlock(&kernel_rings_lock, &saved);
}

/* Our own mapping of @fd's ring, @len bytes: the kernel makes it if none. */
static void *map_source(int fd, size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

int kernel_ring_feed(int fd, struct perf_ring *ring, size_t len)
{
	struct kernel_ring *k = kring_of(fd);
	void *source;
	sigset_t saved;
	int err = 0;

	if (!k)
		return -ENOENT;
	if (k->view)
		return -EBUSY;		/* perf: its own ring is mapped */
	if (k->ring)
		return -EINVAL;		/* already sent elsewhere */
	source = map_source(fd, len);
	if (source == MAP_FAILED)
		return -errno;
	shim_lock(&kernel_rings_lock, &saved);
	if (k->ring || perf_ring_add_source(ring, source)) {
		err = k->ring ? -EINVAL : -errno;
	} else {
		perf_ring_get(ring);
		k->ring = ring;
		k->source = source;
		k->source_len = len;
	}
	shim_unlock(&kernel_rings_lock, &saved);
	if (err)
		munmap(source, len);
	return err;
}

struct perf_ring *kernel_ring_adopt(int fd)
{
	struct kernel_ring *k = kring_of(fd);
	struct perf_ring *r = NULL;
	void *source;
	sigset_t saved;

	if (!k || !k->view) {
		errno = EINVAL;
		return NULL;
	}
	if (k->owns)
		return k->ring;
	/* before the view goes: this mapping keeps the kernel's ring */
	source = map_source(fd, k->view_len);
	if (source == MAP_FAILED)
		return NULL;
	shim_lock(&kernel_rings_lock, &saved);
	if (k->owns) {
		r = k->ring;
	} else if (perf_ring_adopt(&r, &k->fmt, k->view, k->view_len, k->view_prot,
				   source) != MAP_FAILED) {
		k->ring = r;
		__atomic_store_n(&k->owns, true, __ATOMIC_RELEASE);
		k->source = source;
		k->source_len = k->view_len;
		source = NULL;
		__atomic_add_fetch(&krings_adopted, 1, __ATOMIC_RELEASE);
	}
	shim_unlock(&kernel_rings_lock, &saved);
	if (source)
		munmap(source, k->view_len);
	return r;
}

struct perf_ring *kernel_ring_adopted(int fd)
{
	struct kernel_ring *k = kring_of(fd);

	return k && __atomic_load_n(&k->owns, __ATOMIC_ACQUIRE) ? k->ring : NULL;
}

void kernel_ring_closed(int fd)
{
	struct kernel_ring *k = kring_of(fd);
	sigset_t saved;

	if (!k)
		return;
	shim_lock(&kernel_rings_lock, &saved);
	__atomic_store_n(&k->live, false, __ATOMIC_RELEASE);
	if (k->owns)
		__atomic_sub_fetch(&krings_adopted, 1, __ATOMIC_RELEASE);
	hold(k);
	__atomic_store_n(&k->owns, false, __ATOMIC_RELEASE);
	if (k->ring) {
		perf_ring_remove_source(k->ring, k->source);
		munmap(k->source, k->source_len);
		perf_ring_free(k->ring);
		k->ring = NULL;
	}
	unhold(k);
	shim_unlock(&kernel_rings_lock, &saved);
}

void kernel_rings_drain(void)
{
	int len;

	if (!__atomic_load_n(&krings_adopted, __ATOMIC_ACQUIRE))
		return;
	len = __atomic_load_n(&krings_len, __ATOMIC_ACQUIRE);
	for (int fd = 0; fd < len; fd++) {
		struct kernel_ring *k = kring_of(fd);

		if (!k || !__atomic_load_n(&k->owns, __ATOMIC_ACQUIRE))
			continue;
		/* a close under way has it (a signal handler does not wait) */
		if (__atomic_exchange_n(&k->busy, 1, __ATOMIC_ACQUIRE))
			continue;
		if (__atomic_load_n(&k->owns, __ATOMIC_ACQUIRE))
			perf_ring_drain_sources(k->ring);
		unhold(k);
	}
}
