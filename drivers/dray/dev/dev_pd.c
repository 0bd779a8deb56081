// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: protection domains. A PD is a number and a count of the
 * MRs, QPs and AHs on it; it cannot be destroyed while it has any.
 *
 * Context: admin commands (process), under engine.admin_lock. Passes
 * never look PDs up: they compare the PD numbers of QPs and MRs.
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_obj.h"

void dray_hw_cmd_create_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_pd *pd;
	u32 pdn;
	int ret;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	mutex_lock(&eng->admin_lock);
	ret = xa_alloc_cyclic(&eng->pds, &pdn, pd, XA_LIMIT(1, DRAY_HW_MAX_PD),
			      &eng->pdn_next, GFP_KERNEL);
	if (ret < 0) {
		mutex_unlock(&eng->admin_lock);
		kfree(pd);
		dray_aq_fail(res, dray_aq_alloc_status(ret), DRAY_AQ_SYN_NONE);
		return;
	}
	pd->pdn = pdn;
	mutex_unlock(&eng->admin_lock);
	res->result = pdn;
}

void dray_hw_cmd_destroy_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_pd *cmd = &e->u.destroy_pd;
	struct dray_hw_engine *eng = &hw->engine;
	u32 pdn = le32_to_cpu(cmd->pdn);
	struct dray_hw_pd *pd;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	pd = xa_load(&eng->pds, pdn);
	if (!pd) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_PDN);
		pd = NULL;
	} else if (pd->users) {
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_PDN);
		pd = NULL;
	} else {
		xa_erase(&eng->pds, pdn);
	}
	mutex_unlock(&eng->admin_lock);
	kfree(pd);
}

struct dray_hw_pd *dray_hw_pd_get(struct dray_hw *hw, u32 pdn)
{
	struct dray_hw_pd *pd;

	lockdep_assert_held(&hw->engine.admin_lock);
	pd = xa_load(&hw->engine.pds, pdn);
	if (pd)
		pd->users++;
	return pd;
}

void dray_hw_pd_put(struct dray_hw *hw, u32 pdn)
{
	struct dray_hw_pd *pd;

	lockdep_assert_held(&hw->engine.admin_lock);
	pd = xa_load(&hw->engine.pds, pdn);
	if (pd)
		pd->users--;
}

/* Device reset: the PDs go last, when nothing is on them any more. */
void dray_hw_pds_destroy(struct dray_hw *hw)
{
	struct dray_hw_pd *pd;
	unsigned long index;

	lockdep_assert_held(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.pds, index, pd) {
		xa_erase(&hw->engine.pds, index);
		kfree(pd);
	}
}
