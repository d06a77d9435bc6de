/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own side-band records of a sampled task (tracker.c): COMM,
 * MMAP or MMAP2, FORK and EXIT, written by the kernel as they happen into
 * the rings of software "dummy" perf events on the task, which count
 * nothing.  Where the kernel lets the program open them; else sideband.c
 * reads /proc at each sample instead.
 */
#ifndef PMUCTX_SHIM_TRACKER_H
#define PMUCTX_SHIM_TRACKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tracker;

/* Which records the sampled event asked for, on which task. */
struct tracker_want {
	pid_t pid;		/* perf_event_open's: 0 is the caller */
	bool inherit;		/* its children too (one dummy event per CPU) */
	bool mmap, mmap2, mmap_data, comm, comm_exec, task;
};

/* NULL (errno set) when the kernel refuses the dummy events. */
struct tracker *tracker_open(const struct tracker_want *want);
void tracker_close(struct tracker *t);

/* One record's sample_id fields, as the kernel wrote them. */
struct tracker_id {
	uint32_t pid, tid, cpu;
	uint64_t time;		/* CLOCK_MONOTONIC, as pmuctx's samples */
};

/*
 * @emit(@ctx, type, misc, body, bytes, id) for each record the kernel has
 * written since the last call, oldest first per CPU; a record @emit
 * returns false for stays for the next call.  Async-signal-safe; one
 * caller at a time.
 */
typedef bool (*tracker_emit_t)(void *ctx, uint32_t type, uint16_t misc, const void *body,
			       size_t bytes, const struct tracker_id *id);
void tracker_drain(struct tracker *t, tracker_emit_t emit, void *ctx);

#endif
