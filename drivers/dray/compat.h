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

/*
 * Newer kernels (6.12 among them) hand reg_user_mr_dmabuf the verb's
 * attribute bundle instead of its driver udata; Kbuild detects it. The
 * op's last parameter is a struct dray_dmabuf_mr_arg *, and
 * dray_dmabuf_mr_udata() the udata in it.
 */
#ifdef DRAY_HAVE_DMABUF_MR_ATTRS
#include <rdma/uverbs_ioctl.h>

#define dray_dmabuf_mr_arg	uverbs_attr_bundle

static inline struct ib_udata *
dray_dmabuf_mr_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#include <rdma/ib_verbs.h>

#define dray_dmabuf_mr_arg	ib_udata

static inline struct ib_udata *dray_dmabuf_mr_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

#endif /* DRAY_COMPAT_H */
