// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: what a device reset (DEV_CTRL.RESET, and the device's
 * removal) does to the objects: every one is destroyed without a
 * completion, and the host owns all the memory it gave the device again.
 *
 * Order: QPs first (they point at CQs, PDs and UARs; a QP reset stops
 * every pass from touching its queues), then SRQs, XRC domains, AHs, CQs,
 * MRs, PDs; then the
 * event queues, GIDs and UARs. Each object file sweeps its own table
 * (dray_hw_*s_destroy()), under engine.admin_lock, unpublishing under
 * engine.lock as its DESTROY command does.
 *
 * Context: process (register write, device removal); not under any lock.
 */

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_mcast.h"

void dray_hw_reset_objects(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;

	mutex_lock(&eng->admin_lock);
	dray_hw_qps_destroy(hw);
	dray_hw_mcast_reset(hw);
	dray_hw_srqs_destroy(hw);
	dray_hw_xrcds_destroy(hw);
	dray_hw_ahs_destroy(hw);
	dray_hw_cqs_destroy(hw);
	dray_hw_mrs_destroy(hw);
	dray_hw_pds_destroy(hw);
	dray_hw_csets_reset(hw);
	mutex_unlock(&eng->admin_lock);

	spin_lock_bh(&hw->obj_lock);
	memset(hw->eqs, 0, sizeof(hw->eqs));
	memset(hw->gids, 0, sizeof(hw->gids));
	memset(hw->uars, 0, sizeof(hw->uars));
	hw->uar_end = 0;
	spin_unlock_bh(&hw->obj_lock);
}
