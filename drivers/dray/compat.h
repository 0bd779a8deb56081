/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray: the one place that absorbs kernel API differences between the
 * first target (6.1 LTS) and newer kernels (6.12 and later).
 */
#ifndef DRAY_COMPAT_H
#define DRAY_COMPAT_H

#include <linux/mm.h>

/*
 * 6.3 made vma->vm_flags read-only behind accessors; Kbuild detects them.
 */
static inline void dray_vm_flags_clear(struct vm_area_struct *vma,
				       unsigned long flags)
{
#ifdef DRAY_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

#endif /* DRAY_COMPAT_H */
