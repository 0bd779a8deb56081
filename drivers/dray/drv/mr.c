// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: memory regions of user memory and of dma-bufs, the
 * kernel's DMA MR, and kernel fast-registration MRs.
 *
 * The pages are pinned with ib_umem_get() and described to the device in
 * 4 KiB blocks through an MTT; the device enforces PD, range and access
 * rights on every use of the key. The pages stay pinned until the device
 * destroyed the MR: DESTROY_MR completes only once no transfer uses it.
 *
 * A dma-buf MR (reg_user_mr_dmabuf) is the same with the DMA addresses
 * of a pinned dma-buf attachment instead of pinned user pages.
 *
 * Fast registration (ib_alloc_mr, ib_map_mr_sg, IB_WR_REG_MR): the MR is
 * created FREE with room for max_num_sg pages; map_mr_sg writes the 4 KiB
 * pages of a scatterlist into the MR's page list, and the REG_MR work
 * request (kqp.c) hands that list, the iova and length the core set and
 * the new key to the device, which makes the MR VALID when it reaches the
 * request in send queue order. lkey and rkey are one key, as the ULPs
 * expect (nvme-rdma registers with the rkey, rdma_rw with the lkey).
 */

#include <linux/dma-mapping.h>
#include <linux/sizes.h>
#include <rdma/ib_umem.h>

#include "dray.h"

/* Access flags the device enforces. */
#define DRAY_MR_ACCESS_HW	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | \
				 DRAY_IB_ACCESS_FLUSH_GLOBAL)
/*
 * Accepted and without effect: a hint for the page allocation and the
 * optional range, which a device may ignore by definition.
 */
#define DRAY_MR_ACCESS_IGNORED	(IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL)

/*
 * Check what the core does not: flags for features dray lacks (zero-based
 * MRs, on-demand paging) and the device's limits.
 */
static int dray_mr_check(struct dray_dev *dev, u64 start, u64 length,
			 u64 virt_addr, int access)
{
	u64 last;

	if (access & ~(DRAY_MR_ACCESS_HW | DRAY_MR_ACCESS_IGNORED)) {
		ddev_dbg_rl(dev, "reg_mr: access %#x has unsupported flags %#x\n",
			    access,
			    access & ~(DRAY_MR_ACCESS_HW | DRAY_MR_ACCESS_IGNORED));
		return -EOPNOTSUPP;
	}
	/* IBTA: remote write and atomic need local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE)) {
		ddev_dbg_rl(dev, "reg_mr: access %#x: remote write/atomic needs local write\n",
			    access);
		return -EINVAL;
	}
	if (!length || length > dev->caps.max_mr_size) {
		ddev_dbg_rl(dev, "reg_mr: length %llu must be in [1, max_mr_size %llu]\n",
			    length, dev->caps.max_mr_size);
		return -EINVAL;
	}
	if (check_add_overflow(virt_addr, length - 1, &last) ||
	    check_add_overflow(start, length - 1, &last)) {
		ddev_dbg_rl(dev, "reg_mr: range %#llx/%#llx + %llu wraps\n",
			    start, virt_addr, length);
		return -EINVAL;
	}
	if ((start ^ virt_addr) & (DRAY_PAGE_SIZE - 1)) {
		ddev_dbg_rl(dev, "reg_mr: iova %#llx, addr %#llx: offsets in %u B page differ\n",
			    virt_addr, start, DRAY_PAGE_SIZE);
		return -EINVAL;
	}
	return 0;
}

/*
 * Describe @umem (pinned user pages or a pinned dma-buf), an MR at iova
 * @virt_addr, in an MTT of 4 KiB blocks (*mtt, *n_pages); the caller frees
 * the MTT once the device has copied it.
 */
static int dray_mr_describe(struct dray_dev *dev, struct ib_umem *umem,
			    u64 virt_addr, struct dray_mtt *mtt, u32 *n_pages)
{
	size_t blocks;

	/*
	 * Sets umem->iova. The in-page offsets of address and iova match
	 * (checked), so 4 KiB fits unless a scatterlist entry of a dma-buf
	 * starts or ends inside a 4 KiB page.
	 */
	if (!ib_umem_find_best_pgsz(umem, SZ_4K, virt_addr)) {
		ddev_dbg_rl(dev, "reg_mr: memory not in whole %u B pages\n",
			    DRAY_PAGE_SIZE);
		return -EINVAL;
	}
	blocks = ib_umem_num_dma_blocks(umem, SZ_4K);
	if (blocks > U32_MAX)
		return -EINVAL;
	*n_pages = blocks;
	return dray_mtt_build(dev, umem, *n_pages, mtt);
}

/* Pin [start, start + length) of the calling process for an MR. */
static struct ib_umem *dray_mr_umem_get(struct dray_dev *dev, u64 start,
					u64 length, int access)
{
	struct ib_umem *umem = ib_umem_get(&dev->ibdev, start, length, access);

	if (IS_ERR(umem))
		ddev_dbg_rl(dev, "reg_mr: pinning %#llx+%llu failed (%ld)\n",
			    start, length, PTR_ERR(umem));
	return umem;
}

/*
 * Pin the pages of an MR at iova @virt_addr and describe them
 * (dray_mr_describe()); on failure nothing is left pinned.
 */
static int dray_mr_pin(struct dray_dev *dev, u64 start, u64 length,
		       u64 virt_addr, int access, struct ib_umem **umem,
		       struct dray_mtt *mtt, u32 *n_pages)
{
	int ret;

	*umem = dray_mr_umem_get(dev, start, length, access);
	if (IS_ERR(*umem))
		return PTR_ERR(*umem);
	ret = dray_mr_describe(dev, *umem, virt_addr, mtt, n_pages);
	if (ret)
		ib_umem_release(*umem);
	return ret;
}

/*
 * Describe mr->umem (pinned user pages or a pinned dma-buf) in an MTT and
 * create the device MR over [virt_addr, virt_addr + length). On failure
 * the caller still owns the umem.
 */
static int dray_mr_create_umem(struct dray_dev *dev, struct dray_mr *mr,
			       u32 pdn, u64 length, u64 virt_addr, int access)
{
	struct dray_mr_params p = {
		.pdn = pdn,
		.access = dray_access_to_hw(access),
		.iova = virt_addr,
		.length = length,
	};
	struct dray_mtt mtt;
	u32 key;
	int ret;

	ret = dray_mr_describe(dev, mr->umem, virt_addr, &mtt, &p.n_pages);
	if (ret)
		return ret;
	p.mtt_addr = dray_mtt_addr(&mtt);
	ret = dray_admin_create_mr(dev, &p, &key);
	dray_mtt_free(dev, &mtt);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "reg_mr: no free MR, max_mr %u\n",
				    dev->caps.max_mr);
		return ret;
	}

	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->access = access;
	return 0;
}

/* Pin the pages, describe them in an MTT and create the device MR. */
static int dray_mr_create(struct dray_dev *dev, struct dray_mr *mr, u32 pdn,
			  u64 start, u64 length, u64 virt_addr, int access)
{
	int ret;

	mr->umem = dray_mr_umem_get(dev, start, length, access);
	if (IS_ERR(mr->umem))
		return PTR_ERR(mr->umem);
	ret = dray_mr_create_umem(dev, mr, pdn, length, virt_addr, access);
	if (ret)
		ib_umem_release(mr->umem);
	return ret;
}

struct ib_mr *dray_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access_flags,
			       struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_mr *mr;
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "reg_mr");
		if (ret)
			return ERR_PTR(ret);
	}
	ret = dray_mr_check(dev, start, length, virt_addr, access_flags);
	if (ret)
		return ERR_PTR(ret);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = dray_mr_create(dev, mr, to_dpd(ibpd)->pdn, start, length,
			     virt_addr, access_flags);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	return &mr->ibmr;
}

/**
 * dray_rereg_user_mr() - ibv_rereg_mr: change an MR's translation, PD or
 *			  access rights, its keys kept
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: the new user address (IB_MR_REREG_TRANS)
 * @length: the new length (IB_MR_REREG_TRANS)
 * @virt_addr: the new iova (IB_MR_REREG_TRANS)
 * @access_flags: the new rights (IB_MR_REREG_ACCESS)
 * @ibpd: the PD (the new one with IB_MR_REREG_PD)
 * @udata: the driver-specific data (none is taken)
 *
 * The device modifies the MR in place (MODIFY_MR). New pages are pinned
 * first and the old ones released only after the command completed: the
 * device never touches the old pages after the verb returned. Rights that
 * newly allow writing re-pin the pages too (they were pinned read-only).
 *
 * A dma-buf MR can change PD and rights (its pages do not depend on
 * them) but not its translation: the dma-buf's pages are not the
 * process's.
 *
 * Context: process, may sleep.
 * Return: NULL (the MR modified in place), or ERR_PTR(): -EINVAL,
 * -EOPNOTSUPP (unsupported rights, a new translation of a dma-buf MR),
 * -EBUSY (windows are bound to it), -ENOMEM; the MR is unchanged then.
 */
struct ib_mr *dray_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access_flags,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibmr->device);
	struct dray_mr *mr = to_dmr(ibmr);
	struct dray_mr_params p = { .pdn = to_dpd(ibpd)->pdn };
	int access = mr->access, ret;
	struct ib_umem *umem = NULL;
	struct dray_mtt mtt;
	u8 what = 0;

	if (!mr->umem)
		return ERR_PTR(-EINVAL);	/* not a user MR */
	if (mr->umem->is_dmabuf && (flags & IB_MR_REREG_TRANS)) {
		ddev_dbg_rl(dev, "rereg_mr: a dma-buf MR keeps its pages\n");
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "rereg_mr");
		if (ret)
			return ERR_PTR(ret);
	}
	if (!(flags & IB_MR_REREG_TRANS)) {
		start = mr->umem->address;
		length = mr->umem->length;
		virt_addr = ibmr->iova;
	}
	if (flags & IB_MR_REREG_ACCESS) {
		access = access_flags;
		what |= DRAY_MODIFY_MR_ACCESS;
	}
	if (flags & IB_MR_REREG_PD)
		what |= DRAY_MODIFY_MR_PD;
	ret = dray_mr_check(dev, start, length, virt_addr, access);
	if (ret)
		return ERR_PTR(ret);
	if ((flags & IB_MR_REREG_TRANS) ||
	    (!mr->umem->is_dmabuf && ib_access_writable(access) &&
	     !ib_access_writable(mr->access))) {
		ret = dray_mr_pin(dev, start, length, virt_addr, access, &umem,
				  &mtt, &p.n_pages);
		if (ret)
			return ERR_PTR(ret);
		p.mtt_addr = dray_mtt_addr(&mtt);
		p.iova = virt_addr;
		p.length = length;
		what |= DRAY_MODIFY_MR_TRANS;
	}
	p.access = dray_access_to_hw(access);
	ret = dray_admin_modify_mr(dev, ibmr->lkey, what, &p);
	if (umem) {
		dray_mtt_free(dev, &mtt);
		if (ret) {
			ib_umem_release(umem);
		} else {
			ib_umem_release(mr->umem);
			mr->umem = umem;
		}
	}
	if (ret)
		return ERR_PTR(ret);
	mr->access = access;
	return NULL;
}

/**
 * dray_reg_user_mr_dmabuf() - an MR of a dma-buf
 * @ibpd: the PD
 * @offset: where the MR starts in the dma-buf
 * @length: its length
 * @virt_addr: its iova (same offset in a 4 KiB page as @offset, which the
 *	       core checked)
 * @fd: the dma-buf's file descriptor
 * @access_flags: IB_ACCESS_* rights
 * @arg: the verb's driver data (struct ib_udata, or on newer kernels the
 *	 attribute bundle holding it; see compat.h)
 *
 * The dma-buf is attached to dray's DMA device and pinned
 * (ib_umem_dmabuf_get_pinned()): the exporter maps it for that device and
 * keeps it where it is until the MR is deregistered. Its DMA addresses
 * are described to the device in 4 KiB blocks like those of pinned user
 * pages. The device reaches only host RAM: memory behind a bus address
 * that is not (a peer device's BAR, handed out by an exporter allowing
 * peer-to-peer) makes the device refuse the MTT entry at CREATE_MR
 * (DMA_ERROR), before anything is accessed, and the registration fails
 * with -EFAULT.
 *
 * Context: process, may sleep.
 * Return: the MR, or ERR_PTR: what ib_umem_dmabuf_get_pinned() returned
 * (-EBADF for an fd that is not open, checked before anything else so
 * that a probe with fd -1 sees the capability; -EINVAL for a file that is
 * no dma-buf, a range past the dma-buf's end or a zero length), -EINVAL
 * or -EOPNOTSUPP as for dray_reg_user_mr(), -EFAULT for memory the device
 * cannot reach, -ENOSPC (no MR left), -ENOMEM.
 */
struct ib_mr *dray_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 virt_addr, int fd,
				      int access_flags,
				      struct dray_dmabuf_mr_arg *arg)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct ib_udata *udata = dray_dmabuf_mr_udata(arg);
	struct ib_umem_dmabuf *umem_dmabuf;
	struct dray_mr *mr;
	int ret;

	umem_dmabuf = ib_umem_dmabuf_get_pinned(&dev->ibdev, offset, length,
						fd, access_flags);
	if (IS_ERR(umem_dmabuf)) {
		ret = PTR_ERR(umem_dmabuf);
		ddev_dbg_rl(dev, "reg_dmabuf_mr: fd %d, %#llx+%llu: pinning failed (%d)\n",
			    fd, offset, length, ret);
		return ERR_PTR(ret);
	}
	ret = udata ? dray_udata_cmd(dev, udata, NULL, 0, 0, "reg_dmabuf_mr") : 0;
	if (!ret)
		ret = dray_mr_check(dev, offset, length, virt_addr,
				    access_flags);
	if (ret)
		goto release_umem;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		ret = -ENOMEM;
		goto release_umem;
	}
	mr->umem = &umem_dmabuf->umem;
	ret = dray_mr_create_umem(dev, mr, to_dpd(ibpd)->pdn, length,
				  virt_addr, access_flags);
	if (ret == -EFAULT)
		ddev_dbg_rl(dev, "reg_dmabuf_mr: fd %d: memory the device cannot reach\n",
			    fd);
	if (ret) {
		kfree(mr);
		goto release_umem;
	}
	mr->ibmr.iova = virt_addr;
	mr->ibmr.length = length;
	return &mr->ibmr;

release_umem:
	ib_umem_release(&umem_dmabuf->umem);
	return ERR_PTR(ret);
}

/**
 * dray_get_dma_mr() - the DMA MR of a kernel PD
 * @ibpd: the PD
 * @access_flags: IB_ACCESS_* rights
 *
 * A physical MR of the device (DRAY_MR_F_PHYSICAL): addresses in it are
 * bus addresses from the DMA API, the device checks PD and rights on
 * every use as for any MR. The core asks for remote rights only for a
 * PD created with IB_PD_UNSAFE_GLOBAL_RKEY; the wire can then reach all
 * of memory through the rkey, which is what that flag means.
 *
 * Context: process, may sleep.
 */
struct ib_mr *dray_get_dma_mr(struct ib_pd *ibpd, int access_flags)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_mr_params p = {
		.pdn = to_dpd(ibpd)->pdn,
		.access = dray_access_to_hw(access_flags),
		.flags = DRAY_MR_F_PHYSICAL,
	};
	struct dray_mr *mr;
	u32 key;
	int ret;

	if (access_flags & ~(DRAY_MR_ACCESS_HW | DRAY_MR_ACCESS_IGNORED)) {
		ddev_dbg_rl(dev, "get_dma_mr: access %#x has unsupported flags\n",
			    access_flags);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if ((access_flags & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access_flags & IB_ACCESS_LOCAL_WRITE)) {
		ddev_dbg_rl(dev, "get_dma_mr: access %#x: remote write/atomic needs local write\n",
			    access_flags);
		return ERR_PTR(-EINVAL);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = dray_admin_create_mr(dev, &p, &key);
	if (ret) {
		kfree(mr);
		return ERR_PTR(ret);
	}
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return &mr->ibmr;
}

/**
 * dray_alloc_mw() - ibv_alloc_mw: a memory window of type 1 or 2
 * @ibmw: the window (ibmw->type and ibmw->pd set by the core)
 * @udata: the driver-specific data (none is taken)
 *
 * The device creates it unbound; BIND_MW work requests bind it.
 *
 * Context: process, may sleep.
 * Return: 0, -EINVAL (another type), -ENOSPC (no window left), -ENOMEM.
 */
int dray_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibmw->device);
	u8 type;
	u32 key;
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "alloc_mw");
		if (ret)
			return ret;
	}
	switch (ibmw->type) {
	case IB_MW_TYPE_1:
		type = DRAY_MW_TYPE_1;
		break;
	case IB_MW_TYPE_2:
		type = DRAY_MW_TYPE_2;
		break;
	default:
		return -EINVAL;
	}
	ret = dray_admin_create_mw(dev, to_dpd(ibmw->pd)->pdn, type, &key);
	if (ret)
		return ret;
	ibmw->rkey = key;
	return 0;
}

int dray_dealloc_mw(struct ib_mw *ibmw)
{
	struct dray_dev *dev = to_ddev(ibmw->device);
	int ret = dray_admin_destroy_mw(dev, ibmw->rkey);

	/* Gone already (a device reset): nothing left to do. */
	if (ret && ret != -ENOENT)
		ddev_err_rl(dev, "destroy MW %#x failed (%d)\n", ibmw->rkey,
			    ret);
	return 0;
}

/**
 * dray_alloc_mr() - a fast-registration MR of a kernel PD
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG (no other type is supported)
 * @max_num_sg: pages its registrations may have, at most
 *	        max_fast_reg_page_list_len
 *
 * Context: process, may sleep.
 * Return: the MR (FREE: no access until a REG_MR), or ERR_PTR(-EINVAL) for
 * another type or a page count out of range, -ENOMEM, -ENOSPC (no MR left).
 */
struct ib_mr *dray_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_mr_params p = {
		.pdn = to_dpd(ibpd)->pdn,
		.flags = DRAY_MR_F_FAST_REG,
		.n_pages = max_num_sg,
	};
	struct dray_mr *mr;
	u32 key;
	int ret;

	if (type != IB_MR_TYPE_MEM_REG) {
		ddev_dbg_rl(dev, "alloc_mr: type %d not supported\n", type);
		return ERR_PTR(-EINVAL);
	}
	if (!max_num_sg || max_num_sg > dev->caps.max_fr_pages) {
		ddev_dbg_rl(dev, "alloc_mr: max_num_sg %u must be in [1, %u]\n",
			    max_num_sg, dev->caps.max_fr_pages);
		return ERR_PTR(-EINVAL);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pbl_len = max_num_sg;
	mr->pbl = dma_alloc_coherent(dray_dma_dev(dev),
				     max_num_sg * sizeof(*mr->pbl),
				     &mr->pbl_dma, GFP_KERNEL);
	if (!mr->pbl) {
		ret = -ENOMEM;
		goto free_mr;
	}
	ret = dray_admin_create_mr(dev, &p, &key);
	if (ret)
		goto free_pbl;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	return &mr->ibmr;

free_pbl:
	dma_free_coherent(dray_dma_dev(dev), max_num_sg * sizeof(*mr->pbl),
			  mr->pbl, mr->pbl_dma);
free_mr:
	kfree(mr);
	return ERR_PTR(ret);
}

static int dray_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct dray_mr *mr = to_dmr(ibmr);

	if (mr->npages == mr->pbl_len)
		return -ENOMEM;
	mr->pbl[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/**
 * dray_map_mr_sg() - the page list of a fast-registration MR
 * @ibmr: the MR
 * @sg: the scatterlist (DMA mapped for this device)
 * @sg_nents: its entries
 * @sg_offset: the offset into the first entry, or NULL
 *
 * The device's pages are 4 KiB: ib_map_mr_sg() must have been asked for
 * that page size.
 *
 * Context: any.
 * Return: the entries mapped (fewer if the page list is full), or -EINVAL
 * for another page size.
 */
int dray_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct dray_mr *mr = to_dmr(ibmr);

	if (ibmr->page_size != DRAY_PAGE_SIZE)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, dray_set_page);
}

int dray_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibmr->device);
	struct dray_mr *mr = to_dmr(ibmr);
	int ret;

	ret = dray_admin_destroy_mr(dev, ibmr->lkey);
	if (ret == -EBUSY)
		return ret;
	if (ret && ret != -ENOENT) {
		/*
		 * The device may still read and write these pages: keep
		 * them pinned forever. Only a dead admin queue gets here.
		 */
		ddev_err_rl(dev, "destroy MR %#x failed (%d), pages leaked\n",
			    ibmr->lkey, ret);
	} else {
		ib_umem_release(mr->umem);
		if (mr->pbl)
			dma_free_coherent(dray_dma_dev(dev),
					  mr->pbl_len * sizeof(*mr->pbl),
					  mr->pbl, mr->pbl_dma);
	}
	kfree(mr);
	return 0;
}
