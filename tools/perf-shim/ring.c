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
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmuctx_abi.h"
#include "ring.h"
#include "sideband.h"
#include "tracker.h"

/*
 * A pmuctx sample with room for its whole call chain (PMUCTX_IOC_SAMPLES'
 * stride); a sample with a user part (struct pmuctx_sample_user) has that
 * after the chain's room, if it has a chain.
 */
struct chained_sample {
	struct pmuctx_sample s;
	uint64_t chain[PMUCTX_CALLCHAIN_MAX];
};

#define DRAIN_BATCH 32
/* The most a drain of samples with user stacks holds at once. */
#define DRAIN_USER_BYTES (1U << 20)
/* perf's records are at most 64 KiB (the header's u16 size), 8-byte words. */
#define RECORD_MAX_WORDS (65528 / 8)

struct sample_batch {
	size_t stride;		/* PMUCTX_IOC_SAMPLES' sample_size */
	size_t user_off;	/* the user part's offset in a sample; 0: none */
	unsigned int nr;	/* samples a drain reads at once */
	unsigned char *samples;
	uint64_t *rec;		/* the record being written */
};

struct perf_ring {
	unsigned char *base;	/* our view: the header page, then the data */
	size_t len;
	size_t page;
	uint64_t data_size;	/* a power of two; 0: the header page alone */
	uint64_t head;		/* what we wrote: the program may scribble on data_head */
	uint64_t lost;		/* samples not yet reported in a LOST record */
	bool overwrite;		/* mapped read-only: no data_tail, perf overwrites */
	int refs;		/* events whose records it takes: its own, SET_OUTPUT's */
	int writing;		/* 1 while a drain writes: one at a time */
	struct ring_format fmt;	/* its own event's: side-band and LOST records */
	struct sideband *sb;	/* fmt.sideband: what the reader knows of the tasks */
	struct tracker *tr;	/* fmt.sideband: the kernel's records, when it gave them */
	/*
	 * Kernel events' own rings whose records this one takes (a mixed
	 * session: kernel_rings.c): each mapping's base, NULL when gone.
	 * Set and cleared outside drains (perf_ring_remove_source() waits
	 * for the one under way); read by drains.
	 */
	unsigned char *sources[RING_SOURCES];
};

static bool has_user_part(const struct ring_format *fmt)
{
	return fmt->regs_user || fmt->stack_user;
}

struct sample_batch *sample_batch_new(const struct ring_format *fmt)
{
	struct sample_batch *b = calloc(1, sizeof(*b));
	size_t words = 1 + 16 + 2 * (2 + PMUCTX_CALLCHAIN_MAX) + 2;

	if (!b)
		return NULL;
	b->stride = sizeof(struct chained_sample);
	b->nr = DRAIN_BATCH;
	if (has_user_part(fmt)) {
		bool chain = fmt->module_chain;

		b->user_off = PMUCTX_SAMPLE_SIZE_VER2 + (chain ? sizeof(uint64_t) * PMUCTX_CALLCHAIN_MAX : 0);
		b->stride = PMUCTX_SAMPLE_USER_SIZE(chain ? 1 : 0,
						    __builtin_popcountll(fmt->regs_user),
						    fmt->stack_user);
		b->nr = DRAIN_USER_BYTES / b->stride;
		if (b->nr > DRAIN_BATCH)
			b->nr = DRAIN_BATCH;
		if (!b->nr)
			b->nr = 1;
		words = RECORD_MAX_WORDS;
	}
	b->samples = calloc(b->nr, b->stride);
	b->rec = calloc(words, sizeof(uint64_t));
	if (!b->samples || !b->rec) {
		sample_batch_free(b);
		return NULL;
	}
	return b;
}

void sample_batch_free(struct sample_batch *b)
{
	if (!b)
		return;
	free(b->samples);
	free(b->rec);
	free(b);
}

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

static struct perf_ring *ring_create(const struct ring_format *fmt, struct tracker *tr,
				     size_t len, int prot)
{
	struct perf_event_mmap_page *pg;
	struct perf_ring *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->tr = tr;
	r->page = sysconf(_SC_PAGESIZE);
	r->len = len;
	r->data_size = len - r->page;
	r->overwrite = !(prot & PROT_WRITE);
	r->refs = 1;
	r->fmt = *fmt;
	if (fmt->sideband && !tr) {
		r->sb = sideband_create(fmt->mmap2);
		if (!r->sb) {
			free(r);
			return NULL;	/* @tr stays the caller's */
		}
	}
	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->base == MAP_FAILED) {
		sideband_free(r->sb);
		free(r);
		return NULL;	/* @tr stays the caller's */
	}
	pg = header(r);
	perf_page_init(pg);
	pg->data_offset = r->page;
	pg->data_size = r->data_size;
	return r;
}

void *perf_ring_map(struct perf_ring **ringp, const struct ring_format *fmt,
		    struct tracker *tr, void *addr, size_t len, int prot, int flags)
{
	struct perf_ring *r = *ringp;
	void *view;
	int mflags = MREMAP_MAYMOVE;

	if (!(flags & MAP_SHARED) || !ring_len_ok(len, sysconf(_SC_PAGESIZE))) {
		tracker_close(tr);
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (r && r->len != len) {
		tracker_close(tr);
		errno = EINVAL;		/* perf: one buffer, one size */
		return MAP_FAILED;
	}
	if (r) {
		tracker_close(tr);
	} else {
		r = ring_create(fmt, tr, len, prot);
		if (!r) {
			tracker_close(tr);
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

size_t perf_ring_len(const struct perf_ring *r)
{
	return r->len;
}

void perf_ring_get(struct perf_ring *r)
{
	__atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED);
}

void perf_ring_free(struct perf_ring *r)
{
	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
		return;
	munmap(r->base, r->len);
	sideband_free(r->sb);
	tracker_close(r->tr);
	free(r);
}

/* Add or remove a kernel event's ring as a source of @r. */
int perf_ring_add_source(struct perf_ring *r, void *base)
{
	for (int i = 0; i < RING_SOURCES; i++) {
		unsigned char *none = NULL;

		if (__atomic_compare_exchange_n(&r->sources[i], &none, base, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return 0;
	}
	errno = ENOSPC;
	return -1;
}

void perf_ring_remove_source(struct perf_ring *r, void *base)
{
	/* no drain reads it once this one holds the ring */
	while (__atomic_exchange_n(&r->writing, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < RING_SOURCES; i++)
		if (r->sources[i] == base)
			__atomic_store_n(&r->sources[i], NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&r->writing, 0, __ATOMIC_RELEASE);
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

/* PERF_SAMPLE_CPU's word: { u32 cpu, res; } */
static uint64_t cpu_word(const struct pmuctx_sample *s)
{
	return s->cpu;
}

void perf_ring_copy_out(const unsigned char *data, uint64_t size, uint64_t off, void *out,
			size_t len)
{
	uint64_t at = off & (size - 1);
	size_t first = len < size - at ? len : size - at;

	memcpy(out, data + at, first);
	memcpy((unsigned char *)out + first, data, len - first);
}

/*
 * @len bytes at offset @off of a kernel ring's data (@size, a power of
 * two) onto the end of @r, both wrapping.
 */
static void ring_put_from(struct perf_ring *r, const unsigned char *src, uint64_t size,
			  uint64_t off, size_t len)
{
	unsigned char *data = r->base + r->page;

	while (len) {
		uint64_t s = off & (size - 1), d = r->head & (r->data_size - 1);
		size_t n = len;

		if (n > size - s)
			n = size - s;
		if (n > r->data_size - d)
			n = r->data_size - d;
		memcpy(data + d, src + s, n);
		off += n;
		r->head += n;
		len -= n;
	}
}

/*
 * The records the kernel wrote into each source since the last drain,
 * as it wrote them (they are its events' own, in their own formats), as
 * far as they fit; what does not stays in the source, whose own LOST
 * records the kernel writes when it fills.  Under r->writing.
 */
static void drain_sources(struct perf_ring *r)
{
	for (int i = 0; i < RING_SOURCES; i++) {
		unsigned char *base = __atomic_load_n(&r->sources[i], __ATOMIC_ACQUIRE);
		struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)base;
		const unsigned char *data;
		uint64_t head, tail, size;
		struct perf_event_header h;

		if (!base)
			continue;
		data = base + pg->data_offset;
		size = pg->data_size;
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		tail = pg->data_tail;
		while (size && head - tail >= sizeof(h)) {
			perf_ring_copy_out(data, size, tail, &h, sizeof(h));
			if (h.size < sizeof(h) || h.size % 8 || h.size > head - tail) {
				tail = head;	/* not the kernel's: dropped */
				break;
			}
			if (!ring_room(r, h.size))
				break;
			ring_put_from(r, data, size, tail, h.size);
			tail += h.size;
		}
		__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	}
}

int perf_ring_drain_sources(struct perf_ring *r)
{
	uint64_t head;

	if (__atomic_exchange_n(&r->writing, 1, __ATOMIC_ACQUIRE))
		return 0;
	head = r->head;
	drain_sources(r);
	if (r->data_size)
		__atomic_store_n(&header(r)->data_head, r->head, __ATOMIC_RELEASE);
	head = r->head != head;
	__atomic_store_n(&r->writing, 0, __ATOMIC_RELEASE);
	return head;
}

void *perf_ring_adopt(struct perf_ring **ringp, const struct ring_format *fmt, void *view,
		      size_t len, int prot, void *source)
{
	struct perf_ring *r = ring_create(fmt, NULL, len, prot);
	void *p;

	if (!r)
		return MAP_FAILED;
	/* our pages where the program's view of the kernel's were */
	p = mremap(r->base, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, view);
	if (p == MAP_FAILED || mprotect(p, len, prot & (PROT_READ | PROT_WRITE)) ||
	    perf_ring_add_source(r, source)) {
		int err = errno;

		perf_ring_free(r);
		errno = err;
		return MAP_FAILED;
	}
	*ringp = r;
	return p;
}

/* The sample_id fields perf appends to a non-sample record (sample_id_all). */
static size_t put_sample_id(const struct ring_format *fmt, const struct pmuctx_sample *s,
			    uint64_t *w)
{
	uint64_t t = fmt->sample_type;
	size_t n = 0;

	if (t & PERF_SAMPLE_TID)
		w[n++] = tid_word(s);
	if (t & PERF_SAMPLE_TIME)
		w[n++] = s->time;
	if (t & PERF_SAMPLE_ID)
		w[n++] = s->id;
	if (t & PERF_SAMPLE_STREAM_ID)
		w[n++] = s->id;
	if (t & PERF_SAMPLE_CPU)
		w[n++] = cpu_word(s);
	if (t & PERF_SAMPLE_IDENTIFIER)
		w[n++] = s->id;
	return n;
}

/* The ring's own event reports what it lost, as perf's ring does. */
static bool write_lost(struct perf_ring *r, const struct pmuctx_sample *s)
{
	struct pmuctx_sample own = *s;
	uint64_t rec[16];
	size_t n = 1;

	own.id = r->fmt.id;
	rec[n++] = r->fmt.id;
	rec[n++] = r->lost;
	if (r->fmt.sample_id_all)
		n += put_sample_id(&r->fmt, &own, &rec[n]);
	if (!ring_write(r, PERF_RECORD_LOST, 0, rec, n))
		return false;
	r->lost = 0;
	return true;
}

/* x86_64 and arm64 alike: kernel addresses have the top bit set. */
static uint16_t sample_mode(const struct ring_format *fmt, uint64_t ip)
{
	if (fmt->kernel_excluded || !(ip >> 63))
		return PERF_RECORD_MISC_USER;
	return PERF_RECORD_MISC_KERNEL;
}

/*
 * PERF_SAMPLE_CALLCHAIN: perf's context markers and the module's chain,
 * at most @fmt's max_stack entries of each part.  A kernel-mode sample's
 * chain starts with its kernel part (kernel addresses, the PC first:
 * PMUCTX_FEAT_KERNEL_CALLCHAIN); without one (an older module, the
 * perf-events backend) the kernel part is the PC alone; with
 * exclude_callchain_kernel (perf record --user-callchains) there is none.
 * The user part follows, its PC first, unless exclude_callchain_user
 * (--call-graph dwarf, whose user part perf unwinds from the stack).
 */
static size_t put_callchain(const struct ring_format *fmt, const struct chained_sample *cs,
			    uint64_t *w)
{
	unsigned int nr = cs->s.nr_callchain, max = fmt->max_stack, k = 0, u;
	size_t n = 1;

	if (nr > PMUCTX_CALLCHAIN_MAX)
		nr = PMUCTX_CALLCHAIN_MAX;
	if (sample_mode(fmt, cs->s.ip) == PERF_RECORD_MISC_KERNEL) {
		while (k < nr && cs->chain[k] >> 63)
			k++;
		if (!fmt->kernel_chain_excluded) {
			w[n++] = PERF_CONTEXT_KERNEL;
			if (k) {
				unsigned int shown = max && k > max ? max : k;

				memcpy(&w[n], cs->chain, shown * sizeof(uint64_t));
				n += shown;
			} else {
				w[n++] = cs->s.ip;
			}
		}
	}
	u = fmt->user_chain_excluded ? 0 : nr - k;
	if (max && u > max)
		u = max;
	if (u) {
		w[n++] = PERF_CONTEXT_USER;
		memcpy(&w[n], cs->chain + k, u * sizeof(uint64_t));
		n += u;
	}
	w[0] = n - 1;
	return n;
}

/*
 * PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER from the module's user
 * part, as perf's kernel writes them: the ABI, then the registers unless
 * it is NONE; the stack's size, its bytes and the bytes copied, or a size
 * of 0 alone when there is no stack (no registers, or none asked).  The
 * stack is cut to what fits the record's 64 KiB, as perf cuts it.
 */
static size_t put_user_part(const struct ring_format *fmt, const struct pmuctx_sample_user *u,
			    uint64_t *w, size_t used)
{
	uint64_t t = fmt->sample_type;
	unsigned int nr_regs = u && u->abi != PERF_SAMPLE_REGS_ABI_NONE ? u->nr_regs : 0;
	const uint64_t *regs = (const uint64_t *)(u + 1);
	size_t n = 0, size, dyn, room;

	if (nr_regs > 64)
		nr_regs = 0;
	if (t & PERF_SAMPLE_REGS_USER) {
		w[n++] = u ? u->abi : PERF_SAMPLE_REGS_ABI_NONE;
		memcpy(&w[n], regs, nr_regs * sizeof(uint64_t));
		n += nr_regs;
	}
	if (!(t & PERF_SAMPLE_STACK_USER))
		return n;
	size = u && u->abi != PERF_SAMPLE_REGS_ABI_NONE ? u->stack_size & ~7u : 0;
	if (size > fmt->stack_user)
		size = fmt->stack_user;
	room = (RECORD_MAX_WORDS - used - n - 3) * sizeof(uint64_t);	/* dyn_size, DATA_SRC */
	if (size > room)
		size = room;
	w[n++] = size;
	if (!size)
		return n;
	dyn = u->stack_dyn < size ? u->stack_dyn : size;
	memcpy(&w[n], (const unsigned char *)(regs + u->nr_regs), dyn);
	memset((unsigned char *)&w[n] + dyn, 0, size - dyn);
	n += size / sizeof(uint64_t);
	w[n++] = dyn;
	return n;
}

/* perf's PERF_RECORD_SAMPLE layout, for the bits RING_SAMPLE_TYPES allows. */
static bool write_sample(struct perf_ring *r, const struct ring_format *fmt,
			 const struct sample_batch *b, const unsigned char *sample)
{
	const struct chained_sample *cs = (const void *)sample;
	const struct pmuctx_sample *s = &cs->s;
	uint64_t t = fmt->sample_type, *rec = b->rec;
	size_t n = 1;

	if (t & PERF_SAMPLE_IDENTIFIER)
		rec[n++] = s->id;
	if (t & PERF_SAMPLE_IP)
		rec[n++] = s->ip;
	if (t & PERF_SAMPLE_TID)
		rec[n++] = tid_word(s);
	if (t & PERF_SAMPLE_TIME)
		rec[n++] = s->time;
	if (t & PERF_SAMPLE_ADDR)
		rec[n++] = RING_NO_ADDR;
	if (t & PERF_SAMPLE_ID)
		rec[n++] = s->id;
	if (t & PERF_SAMPLE_STREAM_ID)
		rec[n++] = s->id;
	if (t & PERF_SAMPLE_CPU)
		rec[n++] = cpu_word(s);
	/* the events it stands for: periods a late or throttled one covers */
	if (t & PERF_SAMPLE_PERIOD)
		rec[n++] = s->period ?: fmt->period;
	if (t & PERF_SAMPLE_CALLCHAIN)
		n += put_callchain(fmt, cs, &rec[n]);
	if (t & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER))
		n += put_user_part(fmt, b->user_off ? (const void *)(sample + b->user_off) : NULL,
				   &rec[n], n);
	if (t & PERF_SAMPLE_DATA_SRC)
		rec[n++] = RING_DATA_SRC_NA;
	return ring_write(r, PERF_RECORD_SAMPLE, sample_mode(fmt, s->ip), rec, n);
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
		n += put_sample_id(&c->r->fmt, &c->s, &rec[n]);
	return ring_write(c->r, type, misc, rec, n);
}

/* A record the kernel wrote for the tracker's dummy events, as the ring's own event's. */
static bool write_tracked(void *ctx, uint32_t type, uint16_t misc, const void *body,
			  size_t bytes, const struct tracker_id *id)
{
	struct perf_ring *r = ctx;
	struct pmuctx_sample s = {
		.pid = id->pid, .tid = id->tid, .time = id->time, .id = r->fmt.id, .cpu = id->cpu,
	};
	uint64_t rec[1 + (4096 + 128) / 8 + 8];
	size_t n = 1 + bytes / 8;

	if (bytes % 8 || bytes > 4096 + 128)
		return true;	/* not a record perf's kernel writes: dropped */
	memcpy(&rec[1], body, bytes);
	if (type == PERF_RECORD_LOST && bytes >= 16)
		rec[1] = r->fmt.id;
	if (r->fmt.sample_id_all)
		n += put_sample_id(&r->fmt, &s, &rec[n]);
	return ring_write(r, type, misc, rec, n);
}

int perf_ring_drain(struct perf_ring *r, int fd, const struct ring_format *fmt,
		    struct sample_batch *b, uint64_t *module_lostp)
{
	struct pmuctx_samples_read req;
	uint64_t module_lost = *module_lostp, head;
	unsigned int i;

	if (__atomic_exchange_n(&r->writing, 1, __ATOMIC_ACQUIRE))
		return 0;
	head = r->head;
	/* what the kernel wrote before this drain's samples were taken */
	if (r->tr)
		tracker_drain(r->tr, write_tracked, r);
	drain_sources(r);
	/* a counting event's ring (PAPI maps one) gets no samples: no batch */
	while (b) {
		memset(&req, 0, sizeof(req));
		req.size = sizeof(req);
		req.nr = b->nr;
		req.samples = (uintptr_t)b->samples;
		req.sample_size = b->stride;
		/* the system call itself: this may run in a signal handler */
		if (syscall(SYS_ioctl, fd, PMUCTX_IOC_SAMPLES, &req))
			break;
		module_lost = req.lost;
		for (i = 0; i < req.nr; i++) {
			const unsigned char *sample = b->samples + i * b->stride;
			const struct pmuctx_sample *s = (const void *)sample;

			/* perf reports a loss before the next record it has room for */
			if (r->lost && !write_lost(r, s)) {
				r->lost++;
				continue;
			}
			if (r->sb && sample_mode(fmt, s->ip) == PERF_RECORD_MISC_USER) {
				struct sideband_ctx c = { r, *s };

				/* the ring's own event writes them, as perf's tracking event */
				c.s.id = r->fmt.id;
				c.s.time--;
				sideband_before_sample(r->sb, s->pid, s->tid, s->ip,
						       write_sideband, &c);
			}
			if (!write_sample(r, fmt, b, sample))
				r->lost++;
		}
		if (req.nr < b->nr)
			break;
	}
	/*
	 * The module drops a sample when its own ring is full: after every
	 * sample still in it then, so after every one read here.
	 */
	if (module_lost > *module_lostp) {
		r->lost += module_lost - *module_lostp;
		*module_lostp = module_lost;
	}
	if (r->data_size)
		__atomic_store_n(&header(r)->data_head, r->head, __ATOMIC_RELEASE);
	head = r->head != head;
	__atomic_store_n(&r->writing, 0, __ATOMIC_RELEASE);
	return head;
}
