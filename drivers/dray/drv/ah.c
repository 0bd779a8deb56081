// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: address handles and RoCEv2 paths.
 *
 * A user AH is a struct dray_path the device keeps under a number that
 * UD send WQEs name. Creating one takes an admin command, which sleeps.
 * Destroying one may be requested from atomic context; the command then
 * runs from dev->wq. A kernel AH holds the path in the driver only: its
 * WQEs carry it as an address vector (DRAY_WQE_F_UD_AV), so creating
 * and destroying one never sleeps, as the CM needs (it creates AHs
 * under a spinlock, without RDMA_CREATE_AH_SLEEPABLE).
 */

#include <uapi/rdma/dray-abi.h>

#include "dray.h"

/**
 * dray_path_from_ah_attr() - translate a RoCE address vector
 * @dev: the device
 * @ah_attr: the address vector, its destination MAC already resolved by
 *           the core
 * @path: receives the path; udp_sport is derived from the flow label if
 *        there is one, else left 0 (the device derives one)
 *
 * Return: 0 or -EINVAL for anything but a RoCEv2 address vector on port 1.
 */
int dray_path_from_ah_attr(struct dray_dev *dev,
			   const struct rdma_ah_attr *ah_attr,
			   struct dray_path_params *path)
{
	const struct ib_global_route *grh;

	if (ah_attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH)) {
		ddev_dbg_rl(dev, "address vector type %u flags %#x: need RoCE with a GRH\n",
			    ah_attr->type, rdma_ah_get_ah_flags(ah_attr));
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(ah_attr) != 1) {
		ddev_dbg_rl(dev, "address vector port %u, have port 1 only\n",
			    rdma_ah_get_port_num(ah_attr));
		return -EINVAL;
	}
	grh = rdma_ah_read_grh(ah_attr);
	if (grh->sgid_index >= dev->caps.gid_tbl_len) {
		ddev_dbg_rl(dev, "sgid_index %u exceeds gid_tbl_len %u\n",
			    grh->sgid_index, dev->caps.gid_tbl_len);
		return -EINVAL;
	}
	if (grh->sgid_attr &&
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ddev_dbg_rl(dev, "sgid_index %u: GID type %d is not RoCEv2\n",
			    grh->sgid_index, grh->sgid_attr->gid_type);
		return -EINVAL;
	}

	memset(path, 0, sizeof(*path));
	memcpy(path->dmac, ah_attr->roce.dmac, sizeof(path->dmac));
	path->sgid_index = grh->sgid_index;
	path->hop_limit = grh->hop_limit;
	memcpy(path->dgid, grh->dgid.raw, sizeof(path->dgid));
	path->traffic_class = grh->traffic_class;
	/*
	 * The flow label is 20 bits; the rest is ignored, as HCAs do (UCX
	 * asks for 0xffffffff: "any").
	 */
	path->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	if (path->flow_label)
		path->udp_sport = rdma_flow_label_to_udp_sport(path->flow_label);
	return 0;
}

int dray_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibah->device);
	struct dray_create_ah_resp resp = {};
	struct dray_ah *ah = to_dah(ibah);
	struct dray_path_params path;
	int ret;

	ret = dray_path_from_ah_attr(dev, init_attr->ah_attr, &path);
	if (ret)
		return ret;
	if (!udata) {
		/* Any context: nothing to ask the device. */
		ah->ahn = 0;
		dray_path_to_hw(&ah->av, &path);
		return 0;
	}

	/* CREATE_AH is an admin command: it sleeps. */
	if (!(init_attr->flags & RDMA_CREATE_AH_SLEEPABLE))
		return -EOPNOTSUPP;
	ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "create_ah");
	if (ret)
		return ret;

	ret = dray_admin_create_ah(dev, to_dpd(ibah->pd)->pdn, &path, &ah->ahn);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "create_ah: no free AH, max_ah %u\n",
				    dev->caps.max_ah);
		return ret;
	}

	resp.ahn = ah->ahn;
	ret = dray_udata_resp(dev, udata, &resp, sizeof(resp),
			      offsetofend(typeof(resp), ahn), "create_ah");
	if (ret)
		goto destroy_ah;
	return 0;

destroy_ah:
	dray_admin_destroy_ah(dev, ah->ahn);
	return ret;
}

/* A DESTROY_AH that could not be issued where it was requested. */
struct dray_ah_destroy_work {
	struct work_struct	work;
	struct dray_dev		*dev;
	u32			ahn;
};

static void dray_ah_destroy_work(struct work_struct *work)
{
	struct dray_ah_destroy_work *w =
		container_of(work, struct dray_ah_destroy_work, work);
	int ret;

	ret = dray_admin_destroy_ah(w->dev, w->ahn);
	if (ret)
		ddev_err_rl(w->dev, "destroy AH %u failed: %d\n", w->ahn, ret);
	kfree(w);
}

/*
 * An AH holds no memory the device reads, so a destroy that cannot be
 * carried out (no memory for the deferral, a dead admin queue) only
 * leaks the device's AH slot: it is logged and reported as done.
 */
int dray_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct dray_dev *dev = to_ddev(ibah->device);
	struct dray_ah *ah = to_dah(ibah);
	struct dray_ah_destroy_work *w;
	int ret;

	/* A kernel AH: the device never knew it. */
	if (!ah->ahn)
		return 0;
	if (flags & RDMA_DESTROY_AH_SLEEPABLE) {
		ret = dray_admin_destroy_ah(dev, ah->ahn);
		if (ret == -EBUSY)
			return ret;
		if (ret)
			ddev_err_rl(dev, "destroy AH %u failed: %d\n", ah->ahn,
				    ret);
		return 0;
	}

	w = kzalloc(sizeof(*w), GFP_ATOMIC);
	if (!w) {
		ddev_err_rl(dev, "destroy AH %u: out of memory, AH leaked\n",
			    ah->ahn);
		return 0;
	}
	INIT_WORK(&w->work, dray_ah_destroy_work);
	w->dev = dev;
	w->ahn = ah->ahn;
	queue_work(dev->wq, &w->work);
	return 0;
}
