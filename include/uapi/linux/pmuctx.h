/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pmuctx: per-task performance counter contexts, driven through ioctls on
 * /dev/pmuctx.  Every structure that crosses the boundary starts with its
 * size so old and new userspace keep working (Documentation/uapi.rst).
 */
#ifndef _UAPI_LINUX_PMUCTX_H
#define _UAPI_LINUX_PMUCTX_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PMUCTX_ABI_VERSION	1

#define PMUCTX_IOC_MAGIC	0xB4

/* Features the loaded module offers, in pmuctx_info.features. */
#define PMUCTX_FEAT_SOFTWARE	(1ULL << 0)	/* software counters */
#define PMUCTX_FEAT_HARDWARE	(1ULL << 1)	/* a hardware PMU backend */
#define PMUCTX_FEAT_OVERFLOW	(1ULL << 2)	/* overflow interrupts */

#define PMUCTX_BACKEND_NAME_LEN	32

struct pmuctx_info {
	__u32 size;		/* in: sizeof the caller's struct */
	__u32 abi_version;	/* out: PMUCTX_ABI_VERSION */
	char backend[PMUCTX_BACKEND_NAME_LEN];	/* "software", "armv8-pmuv3" */
	__u32 nr_general;	/* programmable hardware counters */
	__u32 nr_fixed;		/* fixed-function counters (arm64: cycles) */
	__u32 general_width;	/* bits of a programmable counter */
	__u32 fixed_width;	/* bits of a fixed counter */
	__u64 features;		/* PMUCTX_FEAT_* */
	__u64 hw_events[2];	/* arm64: PMCEID0/1, common events 0..63 */
	__u32 pmu_version;	/* arm64: ID_AA64DFR0_EL1.PMUVer */
	__u32 nr_sw_events;	/* software counter configs available */
};

#define PMUCTX_INFO		_IOWR(PMUCTX_IOC_MAGIC, 0x00, struct pmuctx_info)

#endif /* _UAPI_LINUX_PMUCTX_H */
