/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VMA's flags: written in place up to 6.2; from 6.3 vm_flags is
 * read-only and changes go through vm_flags_set() and vm_flags_clear(),
 * which also take the VMA's write lock (per-VMA locking).
 * Probe: probes/vm_flags_set.c.
 */
#ifndef PMUCTX_COMPAT_MM_H
#define PMUCTX_COMPAT_MM_H

#include <linux/mm.h>

static inline void pmuctx_vma_flags_set(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#ifdef PMUCTX_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void pmuctx_vma_flags_clear(struct vm_area_struct *vma,
					  vm_flags_t flags)
{
#ifdef PMUCTX_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif
