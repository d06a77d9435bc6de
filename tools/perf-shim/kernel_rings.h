/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's sampling events in the library's rings (kernel_rings.c):
 * perf record's sessions that mix them with pmuctx's events.
 */
#ifndef PMUCTX_SHIM_KERNEL_RINGS_H
#define PMUCTX_SHIM_KERNEL_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

#include "ring.h"

/* @fd is a kernel sampling event the program opened through the library. */
void kernel_ring_opened(int fd, const struct perf_event_attr *pa);
bool kernel_ring_known(int fd);
/* The program mapped @fd's ring from the kernel at @view. */
void kernel_ring_mapped(int fd, void *view, size_t len, int prot);
/*
 * PERF_EVENT_IOC_SET_OUTPUT from kernel event @fd to a library ring
 * (@len bytes): @fd's records go there.  0, or -errno as perf's kernel
 * says it (EBUSY: @fd's own ring is mapped).
 */
int kernel_ring_feed(int fd, struct perf_ring *ring, size_t len);
/*
 * A pmuctx event is sent to kernel event @fd's ring: the program's view
 * of it becomes a library ring, fed by the kernel's.  NULL (errno) when
 * @fd has no mapped ring.
 */
struct perf_ring *kernel_ring_adopt(int fd);
/* @fd's ring if it was adopted, else NULL. */
struct perf_ring *kernel_ring_adopted(int fd);
/* @fd is closed: its records stop, its hold on a library ring goes. */
void kernel_ring_closed(int fd);
/* Copy the kernel's records into every adopted ring (drain_all). */
void kernel_rings_drain(void);

#endif
