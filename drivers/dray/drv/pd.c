// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: protection domains.
 */

#include <uapi/rdma/dray-abi.h>

#include "dray.h"

int dray_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_pd *pd = to_dpd(ibpd);
	struct dray_alloc_pd_resp resp = {};
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "alloc_pd");
		if (ret)
			return ret;
	}

	ret = dray_admin_create_pd(dev, &pd->pdn);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "alloc_pd: no free PD, max_pd %u\n",
				    dev->caps.max_pd);
		return ret;
	}

	if (udata) {
		resp.pdn = pd->pdn;
		ret = dray_udata_resp(dev, udata, &resp, sizeof(resp),
				      offsetofend(typeof(resp), pdn),
				      "alloc_pd");
		if (ret)
			goto destroy_pd;
	}
	return 0;

destroy_pd:
	dray_admin_destroy_pd(dev, pd->pdn);
	return ret;
}

int dray_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibpd->device);
	struct dray_pd *pd = to_dpd(ibpd);
	int ret;

	ret = dray_admin_destroy_pd(dev, pd->pdn);
	if (ret == -EBUSY)
		return ret;
	/* Nothing the device reads belongs to a PD: never worth failing. */
	if (ret)
		ddev_err_rl(dev, "destroy PD %u failed: %d\n", pd->pdn, ret);
	return 0;
}
