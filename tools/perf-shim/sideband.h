/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf's side-band records for a sampling ring (sideband.c): what the
 * reader needs to name a sample's process and resolve its addresses,
 * taken from /proc when a sample names a process or an address the ring
 * has not described yet.
 */
#ifndef PMUCTX_SHIM_SIDEBAND_H
#define PMUCTX_SHIM_SIDEBAND_H

#include <stdbool.h>
#include <stdint.h>

struct sideband;

/*
 * A record's body, written by @emit(@ctx, type, misc, body, bytes) with
 * the ring's sample_id fields after it; false when it found no room.
 */
typedef bool (*sideband_emit_t)(void *ctx, uint32_t type, uint16_t misc, const void *body,
				size_t bytes);

/* For a ring that asked for mmap (mmap2: MMAP2 records) and comm records. */
struct sideband *sideband_create(bool mmap2);
void sideband_free(struct sideband *sb);

/*
 * Before a sample of @pid/@tid at @ip: COMM and the executable mappings of
 * a process the ring has not described, again when @ip is outside them.
 * Async-signal-safe: system calls and our own parsing only.
 */
void sideband_before_sample(struct sideband *sb, uint32_t pid, uint32_t tid, uint64_t ip,
			    sideband_emit_t emit, void *ctx);

#endif
