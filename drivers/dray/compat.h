/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray: the one place where the driver absorbs kernel API differences
 * between the first target (6.1 LTS) and newer kernels (6.12 and later);
 * the device model's are in dev/dev_compat.h. Kbuild detects each
 * difference from the kernel's headers, not from its version number.
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
 * Newer kernels hand some ops the verb's attribute bundle instead of its
 * driver udata: create_cq since 6.11, reg_user_mr_dmabuf since 6.10 (both
 * in 6.12). Kbuild detects each. Such an op's last parameter is a
 * struct dray_create_cq_arg * or struct dray_dmabuf_mr_arg *, and
 * dray_create_cq_udata() or dray_dmabuf_mr_udata() gives the udata in it
 * (NULL for a kernel caller, which passes no bundle).
 */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

static inline struct ib_udata *
dray_bundle_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}

#ifdef DRAY_HAVE_CREATE_CQ_ATTRS
#define dray_create_cq_arg	uverbs_attr_bundle
#define dray_create_cq_udata	dray_bundle_udata
#else
#define dray_create_cq_arg	ib_udata
#define dray_create_cq_udata(udata)	(udata)
#endif

#ifdef DRAY_HAVE_DMABUF_MR_ATTRS
#define dray_dmabuf_mr_arg	uverbs_attr_bundle
#define dray_dmabuf_mr_udata	dray_bundle_udata
#else
#define dray_dmabuf_mr_arg	ib_udata
#define dray_dmabuf_mr_udata(udata)	(udata)
#endif

/*
 * IBTA 1.5's ATOMIC WRITE and FLUSH (6.2 and later: the device flags and
 * the MR right IB_ACCESS_FLUSH_GLOBAL). Where the kernel lacks them, the
 * device reports neither and no MR can be given the right.
 */
#ifdef DRAY_HAVE_ATOMIC_WRITE_FLUSH
#define DRAY_IB_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define DRAY_IB_DEVICE_IBTA15		(IB_DEVICE_FLUSH_GLOBAL | \
					 IB_DEVICE_ATOMIC_WRITE)
#else
#define DRAY_IB_ACCESS_FLUSH_GLOBAL	0
#define DRAY_IB_DEVICE_IBTA15		0
#endif

#endif /* DRAY_COMPAT_H */
