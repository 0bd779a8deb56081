// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: device memory (ibv_alloc_dm, ibv_reg_dm_mr).
 *
 * The NIC has no memory of its own: all of it, the model included, lives
 * in the host. Its device memory is host memory the driver sets aside for
 * it, at most dm_kib KiB per device at a time: each allocation is one
 * physically contiguous, zeroed block of whole pages that the process
 * maps (as it maps its doorbell page: an rdma_user_mmap_entry owns the
 * block and frees it once the last mapping is gone, so a block is never
 * handed to anyone else while a process still has it mapped) and that MRs
 * registered on it describe to the device like any other pages. What a
 * process gets is what ibv_alloc_dm promises: memory outside its own
 * address space allocations, not swapped or moved, reachable by RDMA
 * through zero-based MRs, freed with the allocation; not memory that is
 * closer to the wire than the host's, which a device model cannot have.
 */

#include <linux/mm.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/dray-abi.h>

#include "dray.h"

static uint dm_kib = 256;
module_param(dm_kib, uint, 0444);
MODULE_PARM_DESC(dm_kib,
		 "device memory per device (ibv_alloc_dm), KiB; 0 disables it (default 256)");

/* The budget of a device being added. */
u64 dray_dm_size(void)
{
	return (u64)READ_ONCE(dm_kib) * SZ_1K;
}

struct dray_dm {
	struct ib_dm			ibdm;
	struct rdma_user_mmap_entry	*entry;	/* owns the block */
	struct page			*page;	/* first page of the block */
	dma_addr_t			dma;
	u64				size;	/* the block: whole pages */
};

static struct dray_dm *to_ddm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct dray_dm, ibdm);
}

/* Take @size bytes of the device's budget; false if it has not that much. */
static bool dray_dm_charge(struct dray_dev *dev, u64 size)
{
	if (atomic64_add_return(size, &dev->dm_used) <= dev->dm_total)
		return true;
	atomic64_sub(size, &dev->dm_used);
	return false;
}

/**
 * dray_alloc_dm() - ibv_alloc_dm
 * @ibdev: the device
 * @ibuctx: the caller's context
 * @attr: length (bytes), alignment (log2), flags (none known)
 * @attrs: the method's attributes: the mmap key and length of the block
 *	   go back in DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY and _MMAP_LEN
 *
 * The block is page aligned, so any alignment up to its own size holds.
 *
 * Context: process, may sleep.
 * Return: the DM, or ERR_PTR(): -EINVAL (length 0, an alignment beyond
 * the block, flags), -ENOMEM (the budget is spent, or no contiguous
 * block), -EFAULT.
 */
struct ib_dm *dray_alloc_dm(struct ib_device *ibdev,
			    struct ib_ucontext *ibuctx,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct dray_dev *dev = to_ddev(ibdev);
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_mmap_entry *entry;
	struct dray_dm *dm;
	unsigned int order;
	u64 key;
	int ret;

	if (!attr->length || attr->length > dev->dm_total || attr->flags) {
		ddev_dbg_rl(dev, "alloc_dm: length %llu (max_dm_size %llu), flags %#x\n",
			    attr->length, dev->dm_total, attr->flags);
		return ERR_PTR(attr->length > dev->dm_total ? -ENOMEM :
							      -EINVAL);
	}
	order = get_order(attr->length);
	if (attr->alignment > PAGE_SHIFT + order) {
		ddev_dbg_rl(dev, "alloc_dm: alignment 2^%u beyond the block of 2^%u\n",
			    attr->alignment, PAGE_SHIFT + order);
		return ERR_PTR(-EINVAL);
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	dm->size = PAGE_SIZE << order;
	if (!dray_dm_charge(dev, dm->size)) {
		ddev_dbg_rl(dev, "alloc_dm: %llu bytes, %lld of %llu in use\n",
			    dm->size, atomic64_read(&dev->dm_used),
			    dev->dm_total);
		ret = -ENOMEM;
		goto free_dm;
	}
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		ret = -ENOMEM;
		goto uncharge;
	}
	entry->order = order;
	entry->page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				  order);
	if (!entry->page) {
		ret = -ENOMEM;
		goto free_entry;
	}
	dm->page = entry->page;
	dm->dma = dma_map_page(dma_dev, dm->page, 0, dm->size,
			       DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dma_dev, dm->dma)) {
		ret = -ENOMEM;
		goto free_pages;
	}
	ret = dray_mmap_entry_insert(ibuctx, &entry->rdma_entry, dm->size);
	if (ret)
		goto unmap;
	dm->entry = &entry->rdma_entry;
	key = rdma_user_mmap_get_offset(dm->entry);
	ret = uverbs_copy_to(attrs, DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY, &key,
			     sizeof(key));
	if (!ret)
		ret = uverbs_copy_to(attrs, DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_LEN,
				     &dm->size, sizeof(dm->size));
	if (ret)
		goto remove_entry;
	return &dm->ibdm;

remove_entry:
	/* The entry owns the block now: dray_mmap_free() frees it. */
	dma_unmap_page(dma_dev, dm->dma, dm->size, DMA_BIDIRECTIONAL);
	rdma_user_mmap_entry_remove(dm->entry);
	atomic64_sub(dm->size, &dev->dm_used);
	kfree(dm);
	return ERR_PTR(ret);
unmap:
	dma_unmap_page(dma_dev, dm->dma, dm->size, DMA_BIDIRECTIONAL);
free_pages:
	__free_pages(entry->page, order);
free_entry:
	kfree(entry);
uncharge:
	atomic64_sub(dm->size, &dev->dm_used);
free_dm:
	kfree(dm);
	return ERR_PTR(ret);
}

/*
 * The core calls this only when no MR is on the DM any more, so the
 * device reaches none of its pages: they go back to the budget now, and
 * to the allocator with the last mapping (dray_mmap_free()).
 */
int dray_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct dray_dev *dev = to_ddev(ibdm->device);
	struct dray_dm *dm = to_ddm(ibdm);

	dma_unmap_page(dray_dma_dev(dev), dm->dma, dm->size,
		       DMA_BIDIRECTIONAL);
	rdma_user_mmap_entry_remove(dm->entry);
	atomic64_sub(dm->size, &dev->dm_used);
	kfree(dm);
	return 0;
}

#define DRAY_DM_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)

/**
 * dray_reg_dm_mr() - ibv_reg_dm_mr: a zero-based MR over part of a DM
 * @ibpd: its PD
 * @ibdm: the DM
 * @attr: offset and length in the DM (the core checked they lie in it),
 *	  rights (IB_ZERO_BASED among them: the core requires it)
 * @attrs: the method's attributes
 *
 * Address 0 of the MR is byte @attr->offset of the DM; an MR of length 0
 * takes only zero-length accesses. The device keeps an MR's first byte
 * at the offset in its first page that its iova (0) has, so the offset
 * must be page aligned.
 *
 * Context: process, may sleep.
 * Return: the MR, or ERR_PTR(): -EINVAL (an offset not page aligned),
 * -EOPNOTSUPP (rights a DM MR has not), -ENOSPC, -ENOMEM.
 */
struct ib_mr *dray_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_dm *dm = to_ddm(ibdm);
	struct dray_mr_params p = {
		.pdn = to_dpd(ibpd)->pdn,
		.access = dray_access_to_hw(attr->access_flags),
		.length = attr->length,
	};
	struct dray_mtt mtt;
	struct dray_mr *mr;
	u32 key;
	int ret;

	if (attr->access_flags & ~DRAY_DM_MR_ACCESS) {
		ddev_dbg_rl(dev, "reg_dm_mr: access %#x: unsupported %#x\n",
			    attr->access_flags,
			    attr->access_flags & ~DRAY_DM_MR_ACCESS);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!PAGE_ALIGNED(attr->offset)) {
		ddev_dbg_rl(dev, "reg_dm_mr: offset %llu is not page aligned\n",
			    attr->offset);
		return ERR_PTR(-EINVAL);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	if (attr->length) {
		p.n_pages = DIV_ROUND_UP(attr->length, DRAY_PAGE_SIZE);
		ret = dray_mtt_build_contig(dev, dm->dma + attr->offset,
					    p.n_pages, &mtt);
		if (ret)
			goto free_mr;
		p.mtt_addr = dray_mtt_addr(&mtt);
	}
	ret = dray_admin_create_mr(dev, &p, &key);
	if (attr->length)
		dray_mtt_free(dev, &mtt);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "reg_dm_mr: no free MR, max_mr %u\n",
				    dev->caps.max_mr);
		goto free_mr;
	}
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->access = attr->access_flags;
	return &mr->ibmr;

free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}
