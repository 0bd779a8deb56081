// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: XRC domains and XRC target QPs (IBTA annex A14).
 *
 * An XRC domain is a device object (CREATE_XRCD); the RDMA core shares it
 * between processes through the file it was opened with and counts its
 * users. An XRC target QP belongs to a domain and has no PD, CQ or queue
 * of its own: the core creates it with no udata even for user space
 * (ib_create_qp_user()), and the device places what it receives through
 * the XRC SRQ of the domain that each request names (srq.c creates
 * those). XRC initiator QPs are ordinary user QPs without a receive side
 * (qp.c).
 */

#include "dray.h"

int dray_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibxrcd->device);
	struct dray_xrcd *xrcd = to_dxrcd(ibxrcd);
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "alloc_xrcd");
		if (ret)
			return ret;
	}
	ret = dray_admin_create_xrcd(dev, &xrcd->xrcdn);
	if (ret == -ENOSPC)
		ddev_dbg_rl(dev, "alloc_xrcd: no free XRC domain, max_xrcd %u\n",
			    dev->caps.max_xrcd);
	return ret;
}

int dray_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibxrcd->device);
	struct dray_xrcd *xrcd = to_dxrcd(ibxrcd);
	int ret;

	ret = dray_admin_destroy_xrcd(dev, xrcd->xrcdn);
	if (ret == -EBUSY)
		return ret;
	/* Nothing the device reads belongs to a domain: never worth failing. */
	if (ret)
		ddev_err_rl(dev, "destroy XRC domain %u failed: %d\n",
			    xrcd->xrcdn, ret);
	return 0;
}

/**
 * dray_xrc_tgt_create() - create an XRC target QP
 * @dev: the device
 * @qp: the QP, its ib_qp filled in by the core
 * @ia: its attributes: the type and the domain; no CQ or SRQ. Its
 *	capacities are of queues it does not have: ignored, and 0 on return.
 *
 * The QP uses the kernel consumers' UAR (it has no queue to ring).
 * Return: 0 or a negative errno.
 */
int dray_xrc_tgt_create(struct dray_dev *dev, struct dray_qp *qp,
			struct ib_qp_init_attr *ia)
{
	struct dray_qp_params p = {
		.type = DRAY_QPT_XRC_TGT,
		.uar_index = dev->kuar_index,
	};
	int ret;

	if (!ia->xrcd || ia->send_cq || ia->recv_cq || ia->srq) {
		ddev_dbg_rl(dev, "create_qp: an XRC target QP has a domain, no CQ or SRQ\n");
		return -EINVAL;
	}
	if (ia->create_flags) {
		ddev_dbg_rl(dev, "create_qp: create_flags %#x: unsupported\n",
			    ia->create_flags);
		return -EOPNOTSUPP;
	}
	p.xrcdn = to_dxrcd(ia->xrcd)->xrcdn;
	ret = dray_admin_create_qp(dev, &p, &qp->qpn);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "create_qp: no free QP, max_qp %u\n",
				    dev->caps.max_qp);
		return ret;
	}
	memset(&ia->cap, 0, sizeof(ia->cap));
	return 0;
}
