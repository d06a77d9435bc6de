/* SPDX-License-Identifier: GPL-2.0 */
/* pmuctx exec's copy of the sysfs PMU directory perf reads (exec_sysfs.c). */
#ifndef PMUCTX_EXEC_SYSFS_H
#define PMUCTX_EXEC_SYSFS_H

#include <stddef.h>

struct cli;

/*
 * Build it in a new directory under $TMPDIR (or /tmp), named in @top:
 * 1 when built (@top/devices is what $PMUCTX_PERF_SYSFS names), 0 when
 * perf needs none (no hardware backend, or perf's driver publishes its
 * own), -1 with errno on failure.
 */
int exec_sysfs_build(struct cli *cli, char *top, size_t len);
void exec_sysfs_remove(const char *top);
/* strlen of a copy's devices directory's path */
size_t exec_sysfs_path_len(void);

#endif
