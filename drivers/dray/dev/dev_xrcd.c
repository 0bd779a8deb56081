// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: XRC domains (IBTA annex A14). An XRC domain is the
 * scope in which XRC target QPs and XRC SRQs find each other: a target QP
 * places a request through the XRC SRQ it names only if both belong to
 * the same domain. A domain is a number and a count of its SRQs and
 * target QPs; it cannot be destroyed while it has any.
 *
 * Context: admin commands (process), under engine.admin_lock. Passes
 * never look domains up: they compare the domain numbers of QPs and SRQs.
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_obj.h"

void dray_hw_cmd_create_xrcd(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_xrcd *xrcd;
	u32 xrcdn;
	int ret;

	xrcd = kzalloc(sizeof(*xrcd), GFP_KERNEL);
	if (!xrcd) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	mutex_lock(&eng->admin_lock);
	ret = xa_alloc_cyclic(&eng->xrcds, &xrcdn, xrcd,
			      XA_LIMIT(1, DRAY_HW_MAX_XRCD), &eng->xrcdn_next,
			      GFP_KERNEL);
	if (ret < 0) {
		mutex_unlock(&eng->admin_lock);
		kfree(xrcd);
		dray_aq_fail(res, dray_aq_alloc_status(ret), DRAY_AQ_SYN_NONE);
		return;
	}
	xrcd->xrcdn = xrcdn;
	mutex_unlock(&eng->admin_lock);
	res->result = xrcdn;
}

void dray_hw_cmd_destroy_xrcd(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res)
{
	const struct dray_cmd_xrcd *cmd = &e->u.xrcd;
	struct dray_hw_engine *eng = &hw->engine;
	u32 xrcdn = le32_to_cpu(cmd->xrcdn);
	struct dray_hw_xrcd *xrcd;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	xrcd = xa_load(&eng->xrcds, xrcdn);
	if (!xrcd) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_XRCDN);
	} else if (xrcd->users) {
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_XRCDN);
		xrcd = NULL;
	} else {
		xa_erase(&eng->xrcds, xrcdn);
	}
	mutex_unlock(&eng->admin_lock);
	kfree(xrcd);
}

bool dray_hw_xrcd_get(struct dray_hw *hw, u32 xrcdn)
{
	struct dray_hw_xrcd *xrcd;

	lockdep_assert_held(&hw->engine.admin_lock);
	xrcd = xrcdn ? xa_load(&hw->engine.xrcds, xrcdn) : NULL;
	if (xrcd)
		xrcd->users++;
	return xrcd;
}

void dray_hw_xrcd_put(struct dray_hw *hw, u32 xrcdn)
{
	struct dray_hw_xrcd *xrcd;

	lockdep_assert_held(&hw->engine.admin_lock);
	xrcd = xa_load(&hw->engine.xrcds, xrcdn);
	if (xrcd)
		xrcd->users--;
}

/* Device reset: after the QPs and SRQs, so no domain has users. */
void dray_hw_xrcds_destroy(struct dray_hw *hw)
{
	struct dray_hw_xrcd *xrcd;
	unsigned long index;

	lockdep_assert_held(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.xrcds, index, xrcd) {
		xa_erase(&hw->engine.xrcds, index);
		kfree(xrcd);
	}
}
