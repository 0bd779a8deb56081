// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: device and port verbs, user contexts and the doorbell page.
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/dray-abi.h>

#include "dray.h"
#include "../compat.h"

/*
 * mmap keys of a context live in a window derived from its UAR index:
 * keys are unique per device, so another context's key never maps in
 * this one, and the window's first key is never 0.
 */
#define DRAY_MMAP_WINDOW_SHIFT	16

int dray_mmap_entry_insert(struct ib_ucontext *ibuctx,
			   struct rdma_user_mmap_entry *entry, size_t length)
{
	u32 key_min = (to_ductx(ibuctx)->uar_index + 1) <<
		      DRAY_MMAP_WINDOW_SHIFT;

	return rdma_user_mmap_entry_insert_range(ibuctx, entry, length,
						 key_min,
						 key_min +
						 BIT(DRAY_MMAP_WINDOW_SHIFT) - 1);
}

static int dray_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	const struct dray_caps *c = &to_ddev(ibdev)->caps;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = c->fw_ver;
	attr->sys_image_guid = c->node_guid;
	attr->max_mr_size = c->max_mr_size;
	attr->page_size_cap = c->page_size_cap;
	attr->vendor_id = c->vendor_id;
	attr->vendor_part_id = c->vendor_part_id;
	attr->hw_ver = c->hw_ver;
	attr->max_qp = c->max_qp;
	attr->max_qp_wr = c->max_qp_wr;
	attr->max_send_sge = c->max_send_sge;
	attr->max_recv_sge = c->max_recv_sge;
	attr->max_sge_rd = c->max_sge_rd;
	attr->max_cq = c->max_cq;
	attr->max_cqe = dray_max_cqe(c);
	attr->max_mr = c->max_mr;
	attr->max_pd = c->max_pd;
	attr->max_qp_rd_atom = c->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = c->max_qp_init_rd_atom;
	attr->max_res_rd_atom = c->max_qp_rd_atom * c->max_qp;
	attr->max_ah = c->max_ah;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = c->local_ca_ack_delay;
	/*
	 * The responder answers a send with no receive posted with an RNR
	 * NAK; port state changes are reported; sys_image_guid is set.
	 * Atomics are atomic among the device's own accesses only. Memory
	 * management extensions: fast registration (REG_MR), LOCAL_INV and
	 * SEND with invalidate, with page lists of max_fr_pages 4 KiB pages.
	 * Where the kernel knows them (compat.h), ATOMIC WRITE and FLUSH of
	 * placement type global; never persistent (no memory of the device
	 * is).
	 */
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC |
				 DRAY_IB_DEVICE_IBTA15;
	attr->max_fast_reg_page_list_len = c->max_fr_pages;
	attr->max_mw = c->max_mw;
	attr->max_srq = c->max_srq;
	attr->max_srq_wr = c->max_srq_wr;
	attr->max_srq_sge = c->max_srq_sge;
	attr->max_mcast_grp = c->max_mcast_grp;
	attr->max_mcast_qp_attach = c->max_mcast_qp_attach;
	attr->max_dm_size = to_ddev(ibdev)->dm_total;
	attr->max_total_mcast_qp_attach = c->max_mcast_grp *
					  c->max_mcast_qp_attach;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

/**
 * dray_udata_cmd() - read a verb's driver-specific input
 * @dev: the device
 * @udata: the verb's user data
 * @cmd: receives the input, zero-filled past what user space sent
 * @size: sizeof(*@cmd); 0 for a verb without driver input
 * @min_size: the shortest input accepted
 * @verb: the verb's name, for the debug log
 *
 * Input past @size must be zero: a newer provider asking for something
 * this driver does not know gets -EOPNOTSUPP rather than silence.
 *
 * Return: 0, -EINVAL (too short), -EOPNOTSUPP or -EFAULT.
 */
int dray_udata_cmd(struct dray_dev *dev, struct ib_udata *udata, void *cmd,
		   size_t size, size_t min_size, const char *verb)
{
	if (udata->inlen < min_size) {
		ddev_dbg_rl(dev, "%s: command %zu bytes, need %zu\n", verb,
			    udata->inlen, min_size);
		return -EINVAL;
	}
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size)) {
		ddev_dbg_rl(dev, "%s: non-zero command bytes past %zu\n", verb,
			    size);
		return -EOPNOTSUPP;
	}
	if (!size)
		return 0;
	memset(cmd, 0, size);
	return ib_copy_from_udata(cmd, udata, min(size, udata->inlen));
}

/**
 * dray_udata_resp() - write a verb's driver-specific output
 * @dev: the device
 * @udata: the verb's user data
 * @resp: the response
 * @size: sizeof(*@resp); a shorter buffer gets a truncated copy
 * @min_size: the shortest buffer accepted (what user space cannot miss)
 * @verb: the verb's name, for the debug log
 *
 * Return: 0, -EINVAL (buffer too short) or -EFAULT.
 */
int dray_udata_resp(struct dray_dev *dev, struct ib_udata *udata,
		    const void *resp, size_t size, size_t min_size,
		    const char *verb)
{
	if (udata->outlen < min_size) {
		ddev_dbg_rl(dev, "%s: response buffer %zu bytes, need %zu\n",
			    verb, udata->outlen, min_size);
		return -EINVAL;
	}
	/* ib_copy_to_udata() only reads @resp; it is not const-correct. */
	return ib_copy_to_udata(udata, (void *)resp, min(size, udata->outlen));
}

/* Map an Ethernet link speed onto the closest IB speed and width. */
static void dray_eth_speed(u32 mbps, u16 *speed, u8 *width)
{
	static const struct {
		u32	mbps;
		u16	speed;
		u8	width;
	} map[] = {
		{ 400000, IB_SPEED_NDR,   IB_WIDTH_4X },
		{ 200000, IB_SPEED_HDR,   IB_WIDTH_4X },
		{ 100000, IB_SPEED_EDR,   IB_WIDTH_4X },
		{  50000, IB_SPEED_HDR,   IB_WIDTH_1X },
		{  40000, IB_SPEED_FDR10, IB_WIDTH_4X },
		{  25000, IB_SPEED_EDR,   IB_WIDTH_1X },
		{  20000, IB_SPEED_DDR,   IB_WIDTH_4X },
		{  10000, IB_SPEED_FDR10, IB_WIDTH_1X },
		{   5000, IB_SPEED_DDR,   IB_WIDTH_1X },
		{      0, IB_SPEED_SDR,   IB_WIDTH_1X },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(map) - 1; i++)
		if (mbps >= map[i].mbps)
			break;
	*speed = map[i].speed;
	*width = map[i].width;
}

static int dray_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct dray_dev *dev = to_ddev(ibdev);
	struct dray_port_attr pa;
	int ret;

	ret = dray_admin_query_port(dev, port, &pa);
	if (ret)
		return ret;

	/* The device reports IBTA encodings, as enum ib_port_state etc. */
	attr->state = pa.state;
	attr->phys_state = pa.phys_state;
	attr->max_mtu = pa.max_mtu;
	attr->active_mtu = pa.active_mtu;
	attr->gid_tbl_len = le32_to_cpu(pa.gid_tbl_len);
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_msg_sz = dev->caps.max_msg_size;
	attr->max_vl_num = 1;
	dray_eth_speed(le32_to_cpu(pa.speed_mbps), &attr->active_speed,
		       &attr->active_width);
	return 0;
}

static int dray_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int dray_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer dray_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int dray_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct dray_dev *dev = to_ddev(attr->device);

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	return dray_admin_set_gid(dev, attr->index, attr->gid.raw);
}

static int dray_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return dray_admin_del_gid(to_ddev(attr->device), attr->index);
}

static void dray_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u64 fw = to_ddev(ibdev)->caps.fw_ver;

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u",
		 (u32)FIELD_GET(DRAY_FW_VER_MAJOR_MASK, fw),
		 (u32)FIELD_GET(DRAY_FW_VER_MINOR_MASK, fw),
		 (u32)FIELD_GET(DRAY_FW_VER_PATCH_MASK, fw));
}

/*
 * Every context gets one doorbell page (UAR): a zeroed kernel page handed
 * to the device with CREATE_UAR and exposed for mmap through an
 * rdma_user_mmap_entry. The entry owns the page: it is freed in
 * dray_mmap_free() once the context dropped the entry and the last user
 * mapping is gone.
 */
static int dray_alloc_ucontext(struct ib_ucontext *ibuctx,
			       struct ib_udata *udata)
{
	struct dray_ucontext *uctx = to_ductx(ibuctx);
	struct dray_dev *dev = to_ddev(ibuctx->device);
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_alloc_ucontext_resp resp = {};
	struct dray_mmap_entry *entry;
	int ret;

	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (udata->outlen < offsetofend(typeof(resp), db_page_size)) {
		ddev_dbg(dev, "ucontext response buffer %zu bytes, need %zu\n",
			 udata->outlen, offsetofend(typeof(resp), db_page_size));
		return -EINVAL;
	}

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!entry->page) {
		ret = -ENOMEM;
		goto free_entry;
	}
	uctx->uar_dma = dma_map_page(dma_dev, entry->page, 0, PAGE_SIZE,
				     DMA_BIDIRECTIONAL);
	if (dma_mapping_error(dma_dev, uctx->uar_dma)) {
		ret = -ENOMEM;
		goto free_page;
	}
	ret = dray_admin_create_uar(dev, uctx->uar_dma, &uctx->uar_index);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg(dev, "no free UAR: max_uar %u\n",
				 dev->caps.max_uar);
		goto unmap;
	}

	ret = dray_mmap_entry_insert(ibuctx, &entry->rdma_entry, PAGE_SIZE);
	if (ret)
		goto destroy_uar;
	uctx->db_entry = &entry->rdma_entry;

	resp.uar_index = uctx->uar_index;
	resp.db_mmap_key = rdma_user_mmap_get_offset(uctx->db_entry);
	resp.db_page_size = PAGE_SIZE;
	resp.max_inline_data = dev->caps.max_inline_data;
	resp.max_sge = dev->caps.max_send_sge;
	ret = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (ret)
		goto remove_entry;
	return 0;

remove_entry:
	/* The entry now owns the page; dray_mmap_free() releases both. */
	dray_admin_destroy_uar(dev, uctx->uar_index);
	dma_unmap_page(dma_dev, uctx->uar_dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	rdma_user_mmap_entry_remove(uctx->db_entry);
	return ret;
destroy_uar:
	dray_admin_destroy_uar(dev, uctx->uar_index);
unmap:
	dma_unmap_page(dma_dev, uctx->uar_dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
free_page:
	__free_page(entry->page);
free_entry:
	kfree(entry);
	return ret;
}

static void dray_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
	struct dray_ucontext *uctx = to_ductx(ibuctx);
	struct dray_dev *dev = to_ddev(ibuctx->device);
	struct dray_mmap_entry *entry =
		container_of(uctx->db_entry, struct dray_mmap_entry, rdma_entry);
	int ret;

	ret = dray_admin_destroy_uar(dev, uctx->uar_index);
	if (ret) {
		/*
		 * The device may still write the page: never give it back
		 * to the allocator. Only a dead admin queue gets here.
		 */
		ddev_err_rl(dev, "destroy UAR %u failed (%d), page leaked\n",
			    uctx->uar_index, ret);
		get_page(entry->page);
	}
	dma_unmap_page(dray_dma_dev(dev), uctx->uar_dma, PAGE_SIZE,
		       DMA_BIDIRECTIONAL);
	rdma_user_mmap_entry_remove(uctx->db_entry);
}

/* Page tables only: nothing to put in the entry. */
static int dray_mmap_pte_none(pte_t *pte, unsigned long addr, void *data)
{
	return 0;
}

static int dray_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct dray_mmap_entry *entry;
	int ret;

	/* Doorbell pages and device memory hold data only. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	/* Checks the offset belongs to this context and the size matches. */
	rentry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!rentry) {
		ibdev_dbg(ibuctx->device, "mmap: no entry at pgoff %#lx, len %#lx\n",
			  vma->vm_pgoff, vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	entry = container_of(rentry, struct dray_mmap_entry, rdma_entry);

	/*
	 * The page tables come first, where a failed allocation unwinds
	 * cleanly (ENOMEM). Inside remap_pfn_range(), 6.1's x86 PAT code
	 * WARNs as it unwinds a mapping whose page table it could not
	 * allocate, and the core reports that failure as EAGAIN.
	 */
	ret = apply_to_page_range(vma->vm_mm, vma->vm_start,
				  PAGE_SIZE << entry->order,
				  dray_mmap_pte_none, NULL);
	if (!ret) {
		dray_vm_flags_clear(vma, VM_MAYEXEC);
		ret = rdma_user_mmap_io(ibuctx, vma, page_to_pfn(entry->page),
					PAGE_SIZE << entry->order,
					vma->vm_page_prot, rentry);
	}
	rdma_user_mmap_entry_put(rentry);
	return ret;
}

static void dray_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct dray_mmap_entry *entry =
		container_of(rentry, struct dray_mmap_entry, rdma_entry);

	__free_pages(entry->page, entry->order);
	kfree(entry);
}

/*
 * Hot unplug and module unload disassociate live contexts: the core zaps
 * their mappings and destroys their objects; the process sees
 * IBV_EVENT_DEVICE_FATAL. Nothing is left for the driver to do here.
 */
static void dray_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

/*
 * Kernel verbs (get_dma_mr, post_send, post_recv, poll_cq, req_notify_cq)
 * work on kernel CQs and QPs only (kcq.c, kqp.c); user space posts and
 * polls in the provider. resize_cq is not supported: the core answers it
 * with -EOPNOTSUPP.
 */
const struct ib_device_ops dray_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = DRAY_UVERBS_ABI_VERSION,

	.add_gid = dray_add_gid,
	.alloc_dm = dray_alloc_dm,
	.alloc_pd = dray_alloc_pd,
	.alloc_xrcd = dray_alloc_xrcd,
	.alloc_ucontext = dray_alloc_ucontext,
	.create_ah = dray_create_ah,
	.create_cq = dray_create_cq,
	.create_qp = dray_create_qp,
	.create_srq = dray_create_srq,
	.create_user_ah = dray_create_ah,
	.dealloc_dm = dray_dealloc_dm,
	.dealloc_pd = dray_dealloc_pd,
	.dealloc_xrcd = dray_dealloc_xrcd,
	.dealloc_ucontext = dray_dealloc_ucontext,
	.del_gid = dray_del_gid,
	.dereg_mr = dray_dereg_mr,
	.rereg_user_mr = dray_rereg_user_mr,
	.reg_dm_mr = dray_reg_dm_mr,
	.alloc_mr = dray_alloc_mr,
	.alloc_mw = dray_alloc_mw,
	.dealloc_mw = dray_dealloc_mw,
	.map_mr_sg = dray_map_mr_sg,
	.destroy_ah = dray_destroy_ah,
	.destroy_cq = dray_destroy_cq,
	.resize_cq = dray_resize_cq,
	.attach_mcast = dray_attach_mcast,
	.detach_mcast = dray_detach_mcast,
	.destroy_qp = dray_destroy_qp,
	.destroy_srq = dray_destroy_srq,
	.disassociate_ucontext = dray_disassociate_ucontext,
	.fill_res_cq_entry = dray_fill_res_cq_entry,
	.fill_res_mr_entry = dray_fill_res_mr_entry,
	.fill_res_qp_entry = dray_fill_res_qp_entry,
	.get_dev_fw_str = dray_get_dev_fw_str,
	.get_dma_mr = dray_get_dma_mr,
	.get_link_layer = dray_get_link_layer,
	.get_port_immutable = dray_get_port_immutable,
	.mmap = dray_mmap,
	.mmap_free = dray_mmap_free,
	.modify_qp = dray_modify_qp,
	.modify_srq = dray_modify_srq,
	.poll_cq = dray_poll_cq,
	.post_recv = dray_post_recv,
	.post_send = dray_post_send,
	.post_srq_recv = dray_post_srq_recv,
	.query_device = dray_query_device,
	.query_pkey = dray_query_pkey,
	.query_port = dray_query_port,
	.query_qp = dray_query_qp,
	.query_srq = dray_query_srq,
	.reg_user_mr = dray_reg_user_mr,
	.reg_user_mr_dmabuf = dray_reg_user_mr_dmabuf,
	.req_notify_cq = dray_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, dray_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, dray_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, dray_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, dray_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, dray_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, dray_xrcd, ibxrcd),
	INIT_RDMA_OBJ_SIZE(ib_srq, dray_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, dray_ucontext, ibucontext),
};
