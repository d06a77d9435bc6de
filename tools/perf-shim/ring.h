/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's sample ring buffer for a sampling pmuctx counter (ring.c): the
 * header page and the data pages a perf reader maps, filled with
 * PERF_RECORD_SAMPLE and PERF_RECORD_LOST records from the counter's
 * pmuctx samples (PMUCTX_IOC_SAMPLES) when the program looks (shim.c).
 */
#ifndef PMUCTX_SHIM_RING_H
#define PMUCTX_SHIM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* The sample_type bits a pmuctx sample can fill, in perf's record order. */
#define RING_SAMPLE_TYPES (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | \
			   PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | \
			   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			   PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | \
			   PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC)

/*
 * What perf's kernel writes for ADDR and DATA_SRC of an event that has no
 * data address (every event pmuctx counts: no precise or memory-sampling
 * events): 0, and "not available" in each part of the data source.
 */
#define RING_NO_ADDR		0
#define RING_DATA_SRC_NA	(PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | \
				 PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) | \
				 PERF_MEM_S(TLB, NA))

/* What every record of one event carries: fixed at perf_event_open. */
struct ring_format {
	uint64_t sample_type;
	uint64_t period;
	uint64_t id;		/* the counter's id: PERF_SAMPLE_ID, LOST records */
	bool sample_id_all;	/* LOST records end with the sample's id fields */
	bool kernel_excluded;	/* every sample is a user-mode one */
	bool kernel_chain_excluded;	/* exclude_callchain_kernel: no kernel part */
	bool user_chain_excluded;	/* exclude_callchain_user: no user part */
	bool module_chain;	/* the module's counter has PMUCTX_ATTR_CALLCHAIN */
	bool sideband;		/* COMM and MMAP records (mmap, comm: sideband.c) */
	bool mmap2;		/* ... MMAP2 ones */
	unsigned int max_stack;	/* sample_max_stack: call chain entries (0: all) */
	uint64_t regs_user;	/* REGS_USER: sample_regs_user, the module's too */
	uint32_t stack_user;	/* STACK_USER: sample_stack_user, the module's too */
};

struct perf_ring;
struct tracker;

/*
 * Room for one drain of one event's samples and for the biggest record
 * it writes, sized by its format: a user stack takes up to 64 KiB a
 * sample.  Made when the event is (not in a signal handler); a drain of
 * the event holds it (shim.c: one drain of an event at a time).
 */
struct sample_batch;
struct sample_batch *sample_batch_new(const struct ring_format *fmt);
void sample_batch_free(struct sample_batch *batch);

/*
 * perf's header page with no self-read (index 0, no cap_user_rdpmc): the
 * count is read(), as on a PMU perf cannot read from user mode.
 */
void perf_page_init(struct perf_event_mmap_page *pg);

/*
 * Map the ring for the program: the first call creates it (@len: 1 + 2^n
 * pages; read-only means perf's overwrite mode), later calls map the same
 * buffer and must ask for the same length.  @tr (or NULL): the kernel's
 * side-band records for a new ring, which takes it; otherwise it is
 * closed.  Returns the address, or MAP_FAILED with errno.
 */
void *perf_ring_map(struct perf_ring **ringp, const struct ring_format *fmt,
		    struct tracker *tr, void *addr, size_t len, int prot, int flags);

/*
 * Move @fd's waiting pmuctx samples into @ring as perf records of the
 * event of format @fmt (the ring's own, or one redirected to it with
 * PERF_EVENT_IOC_SET_OUTPUT), through that event's @batch, and publish
 * them in data_head (@batch NULL: an event that never samples); nonzero
 * when it wrote a record.  *@module_lost: the module's lost count of @fd
 * as last read.  Async-signal-safe; a drain that finds another writing
 * the ring leaves its samples in the module for the next.
 */
int perf_ring_drain(struct perf_ring *ring, int fd, const struct ring_format *fmt,
		    struct sample_batch *batch, uint64_t *module_lost);

/*
 * A mixed session (kernel_rings.c): a kernel event's own ring (@base, its
 * mapping) becomes a source of @ring, whose drains copy its records; at
 * most RING_SOURCES of them (ENOSPC).  Removing one waits for a drain
 * under way, so its mapping may go after.
 */
#define RING_SOURCES	64
int perf_ring_add_source(struct perf_ring *ring, void *base);
void perf_ring_remove_source(struct perf_ring *ring, void *base);
/* Copy what the sources have into @ring, as perf_ring_drain() does first. */
int perf_ring_drain_sources(struct perf_ring *ring);
/*
 * A library ring of @fmt's where the program's mapping @view of a kernel
 * event's ring was (@len, @prot): its pages replace the view's, and
 * @source (our own mapping of that kernel ring) feeds it.  *@ringp is
 * set; returns @view, or MAP_FAILED with errno.
 */
void *perf_ring_adopt(struct perf_ring **ringp, const struct ring_format *fmt, void *view,
		      size_t len, int prot, void *source);

/*
 * @len bytes at offset @off of a kernel ring's data (@size bytes, a power
 * of two) into @out, wrapping: the records of a ring the kernel writes.
 */
void perf_ring_copy_out(const unsigned char *data, uint64_t size, uint64_t off, void *out,
			size_t len);

/* The bytes of @ring's mapping. */
size_t perf_ring_len(const struct perf_ring *ring);

/* One more event writes into @ring (SET_OUTPUT). */
void perf_ring_get(struct perf_ring *ring);

/*
 * An event no longer writes into @ring; with the last, the ring's own
 * mapping goes (the program's mappings stay theirs).
 */
void perf_ring_free(struct perf_ring *ring);

#endif
