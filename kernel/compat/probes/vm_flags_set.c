// SPDX-License-Identifier: GPL-2.0
/* Probe: vm_area_struct::vm_flags changes through vm_flags_set() (6.3). */
#include <linux/mm.h>

void pmuctx_probe(struct vm_area_struct *vma);
void pmuctx_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTDUMP);
}
