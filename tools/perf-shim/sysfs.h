/* SPDX-License-Identifier: GPL-2.0 */
/* perf's sysfs PMU directory under "pmuctx exec" (sysfs.c). */
#ifndef PMUCTX_SHIM_SYSFS_H
#define PMUCTX_SHIM_SYSFS_H

#include <stddef.h>

/* @path, or its place in $PMUCTX_PERF_SYSFS's copy (written into @buf). */
const char *shim_sysfs_path(const char *path, char *buf, size_t len);

#endif
