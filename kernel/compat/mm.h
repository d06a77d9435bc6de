/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VMA's flags: written in place up to 6.2; from 6.3 vm_flags is
 * read-only and changes go through vm_flags_set() and vm_flags_clear(),
 * which also take the VMA's write lock (per-VMA locking).
 * Probe: probes/vm_flags_set.c.
 *
 * The page @n after @page of one allocation: nth_page() walked the memory
 * map where it is not contiguous (SPARSEMEM without VMEMMAP); later
 * kernels (7.2) keep every allocation's pages contiguous and have no
 * nth_page().  Probe: probes/nth_page.c.
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

static inline struct page *pmuctx_nth_page(struct page *page,
					   unsigned long n)
{
#ifdef PMUCTX_HAVE_NTH_PAGE
	return nth_page(page, n);
#else
	return page + n;
#endif
}

#endif
