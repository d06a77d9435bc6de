// SPDX-License-Identifier: GPL-2.0
/*
 * perf's sample ring on pmuctx.  perf's kernel writes each overflow's record
 * into pages the reader maps; pmuctx keeps its samples in the module
 * (PMUCTX_IOC_SAMPLES) and signals the owner (fasync) or wakes its poll.
 * This file keeps a buffer laid out as perf's (header page: data_head,
 * data_tail, data_offset, data_size; then 2^n data pages) and writes the
 * records into it when the shim sees the program look: its overflow
 * signal, a poll that returns, a disable (shim.c).  The records are those
 * perf writes for the sample_type bits a pmuctx sample holds; a sample
 * that finds no room is counted into the next PERF_RECORD_LOST, as perf
 * counts it, and so is each one the module's own ring dropped.
 *
 * The buffer is one shared anonymous mapping, ours; each mmap() of the
 * program gets a second view of the same pages (mremap with old size 0),
 * so the program may unmap its view whenever it likes while a drain
 * writes through ours.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmuctx_abi.h"
#include "ring.h"
#include "sideband.h"

struct perf_ring {
	unsigned char *base;	/* our view: the header page, then the data */
	size_t len;
	size_t page;
	uint64_t data_size;	/* a power of two; 0: the header page alone */
	uint64_t head;		/* what we wrote: the program may scribble on data_head */
	uint64_t module_lost;	/* the module's lost count, as last read */
	uint64_t lost;		/* samples not yet reported in a LOST record */
	bool overwrite;		/* mapped read-only: no data_tail, perf overwrites */
	struct ring_format fmt;
	struct sideband *sb;	/* fmt.sideband: what the reader knows of the tasks */
};

static struct perf_event_mmap_page *header(struct perf_ring *r)
{
	return (struct perf_event_mmap_page *)r->base;
}

/* perf's rule: 1 + 2^n pages (n >= 0), or the header page alone. */
static bool ring_len_ok(size_t len, size_t page)
{
	size_t data;

	if (!len || len % page)
		return false;
	data = len / page - 1;
	return (data & (data - 1)) == 0;
}

void perf_page_init(struct perf_event_mmap_page *pg)
{
	pg->cap_bit0_is_deprecated = 1;
	pg->size = offsetof(struct perf_event_mmap_page, __reserved);
}

static struct perf_ring *ring_create(const struct ring_format *fmt, size_t len, int prot)
{
	struct perf_event_mmap_page *pg;
	struct perf_ring *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->page = sysconf(_SC_PAGESIZE);
	r->len = len;
	r->data_size = len - r->page;
	r->overwrite = !(prot & PROT_WRITE);
	r->fmt = *fmt;
	if (fmt->sideband) {
		r->sb = sideband_create(fmt->mmap2);
		if (!r->sb) {
			free(r);
			return NULL;
		}
	}
	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED) {
		sideband_free(r->sb);
		free(r);
		return NULL;
	}
	pg = header(r);
	perf_page_init(pg);
	pg->data_offset = r->page;
	pg->data_size = r->data_size;
	return r;
}

void *perf_ring_map(struct perf_ring **ringp, const struct ring_format *fmt, void *addr,
		    size_t len, int prot, int flags)
{
	struct perf_ring *r = *ringp;
	void *view;
	int mflags = MREMAP_MAYMOVE;

	if (!(flags & MAP_SHARED) || !ring_len_ok(len, sysconf(_SC_PAGESIZE))) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (r && r->len != len) {
		errno = EINVAL;		/* perf: one buffer, one size */
		return MAP_FAILED;
	}
	if (!r) {
		r = ring_create(fmt, len, prot);
		if (!r) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
	}
	if (flags & MAP_FIXED)
		mflags |= MREMAP_FIXED;
	view = (flags & MAP_FIXED) ? mremap(r->base, 0, len, mflags, addr) :
				     mremap(r->base, 0, len, mflags);
	if (view == MAP_FAILED || mprotect(view, len, prot & (PROT_READ | PROT_WRITE))) {
		int err = errno;

		if (view != MAP_FAILED)
			munmap(view, len);
		if (!*ringp)
			perf_ring_free(r);
		errno = err;
		return MAP_FAILED;
	}
	*ringp = r;
	return view;
}

void perf_ring_free(struct perf_ring *r)
{
	if (!r)
		return;
	munmap(r->base, r->len);
	sideband_free(r->sb);
	free(r);
}

/* Room for @size more bytes: the reader's data_tail bounds a writable ring. */
static bool ring_room(struct perf_ring *r, uint64_t size)
{
	uint64_t tail;

	if (!r->data_size || size > r->data_size)
		return false;
	if (r->overwrite)
		return true;
	tail = __atomic_load_n(&header(r)->data_tail, __ATOMIC_ACQUIRE);
	/* a tail ahead of head, or too far behind, is the reader's garbage: no room */
	return r->head - tail <= r->data_size - size;
}

static void ring_put(struct perf_ring *r, const void *rec, size_t size)
{
	unsigned char *data = r->base + r->page;
	uint64_t off = r->head & (r->data_size - 1);
	size_t first = size < r->data_size - off ? size : r->data_size - off;

	memcpy(data + off, rec, first);
	memcpy(data, (const unsigned char *)rec + first, size - first);
	r->head += size;
}

/*
 * A record of @words words, rec[0] left for its header, if it fits;
 * false when it does not.
 */
static bool ring_write(struct perf_ring *r, uint32_t type, uint16_t misc, uint64_t *rec,
		       size_t words)
{
	struct perf_event_header *h = (struct perf_event_header *)rec;

	if (!ring_room(r, words * 8))
		return false;
	h->type = type;
	h->misc = misc;
	h->size = words * 8;
	ring_put(r, rec, words * 8);
	return true;
}

/* PERF_SAMPLE_TID's word: { u32 pid, tid; } */
static uint64_t tid_word(const struct pmuctx_sample *s)
{
	return (uint64_t)s->tid << 32 | s->pid;
}

/* The sample_id fields perf appends to a non-sample record (sample_id_all). */
static size_t put_sample_id(const struct perf_ring *r, const struct pmuctx_sample *s,
			    uint64_t *w)
{
	uint64_t t = r->fmt.sample_type;
	size_t n = 0;

	if (t & PERF_SAMPLE_TID)
		w[n++] = tid_word(s);
	if (t & PERF_SAMPLE_TIME)
		w[n++] = s->time;
	if (t & PERF_SAMPLE_ID)
		w[n++] = s->id;
	if (t & PERF_SAMPLE_STREAM_ID)
		w[n++] = s->id;
	if (t & PERF_SAMPLE_IDENTIFIER)
		w[n++] = s->id;
	return n;
}

static bool write_lost(struct perf_ring *r, const struct pmuctx_sample *s)
{
	uint64_t rec[16];
	size_t n = 1;

	rec[n++] = r->fmt.id;
	rec[n++] = r->lost;
	if (r->fmt.sample_id_all)
		n += put_sample_id(r, s, &rec[n]);
	if (!ring_write(r, PERF_RECORD_LOST, 0, rec, n))
		return false;
	r->lost = 0;
	return true;
}

/* x86_64 and arm64 alike: kernel addresses have the top bit set. */
static uint16_t sample_mode(const struct perf_ring *r, uint64_t ip)
{
	if (r->fmt.kernel_excluded || !(ip >> 63))
		return PERF_RECORD_MISC_USER;
	return PERF_RECORD_MISC_KERNEL;
}

/* perf's PERF_RECORD_SAMPLE layout, for the bits RING_SAMPLE_TYPES allows. */
static bool write_sample(struct perf_ring *r, const struct pmuctx_sample *s)
{
	uint64_t t = r->fmt.sample_type, rec[16];
	size_t n = 1;

	if (t & PERF_SAMPLE_IDENTIFIER)
		rec[n++] = s->id;
	if (t & PERF_SAMPLE_IP)
		rec[n++] = s->ip;
	if (t & PERF_SAMPLE_TID)
		rec[n++] = tid_word(s);
	if (t & PERF_SAMPLE_TIME)
		rec[n++] = s->time;
	if (t & PERF_SAMPLE_ID)
		rec[n++] = s->id;
	if (t & PERF_SAMPLE_STREAM_ID)
		rec[n++] = s->id;
	/* the events it stands for: periods a late or throttled one covers */
	if (t & PERF_SAMPLE_PERIOD)
		rec[n++] = s->period ?: r->fmt.period;
	return ring_write(r, PERF_RECORD_SAMPLE, sample_mode(r, s->ip), rec, n);
}

/* A side-band record for the sample it precedes (sideband.c). */
struct sideband_ctx {
	struct perf_ring *r;
	struct pmuctx_sample s;	/* its time just before the sample's */
};

static bool write_sideband(void *ctx, uint32_t type, uint16_t misc, const void *body,
			   size_t bytes)
{
	struct sideband_ctx *c = ctx;
	uint64_t rec[1 + (4096 + 64) / 8 + 8];
	size_t n = 1 + bytes / 8;

	if (bytes % 8 || bytes > 4096 + 64)
		return false;
	memcpy(&rec[1], body, bytes);
	if (c->r->fmt.sample_id_all)
		n += put_sample_id(c->r, &c->s, &rec[n]);
	return ring_write(c->r, type, misc, rec, n);
}

#define DRAIN_BATCH 32

int perf_ring_drain(struct perf_ring *r, int fd)
{
	struct pmuctx_sample s[DRAIN_BATCH];
	struct pmuctx_samples_read req;
	uint64_t module_lost = r->module_lost, head = r->head;
	unsigned int i;

	for (;;) {
		memset(s, 0, sizeof(s));
		memset(&req, 0, sizeof(req));
		req.size = sizeof(req);
		req.nr = DRAIN_BATCH;
		req.samples = (uintptr_t)s;
		req.sample_size = sizeof(s[0]);
		/* the system call itself: this may run in a signal handler */
		if (syscall(SYS_ioctl, fd, PMUCTX_IOC_SAMPLES, &req))
			break;
		module_lost = req.lost;
		for (i = 0; i < req.nr; i++) {
			/* perf reports a loss before the next record it has room for */
			if (r->lost && !write_lost(r, &s[i])) {
				r->lost++;
				continue;
			}
			if (r->sb && sample_mode(r, s[i].ip) == PERF_RECORD_MISC_USER) {
				struct sideband_ctx c = { r, s[i] };

				c.s.time--;
				sideband_before_sample(r->sb, s[i].pid, s[i].tid, s[i].ip,
						       write_sideband, &c);
			}
			if (!write_sample(r, &s[i]))
				r->lost++;
		}
		if (req.nr < DRAIN_BATCH)
			break;
	}
	/*
	 * The module drops a sample when its own ring is full: after every
	 * sample still in it then, so after every one read here.
	 */
	if (module_lost > r->module_lost) {
		r->lost += module_lost - r->module_lost;
		r->module_lost = module_lost;
	}
	if (r->data_size)
		__atomic_store_n(&header(r)->data_head, r->head, __ATOMIC_RELEASE);
	return r->head != head;
}
