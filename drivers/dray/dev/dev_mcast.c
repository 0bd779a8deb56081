// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: UD multicast groups (ATTACH_MCAST, DETACH_MCAST).
 *
 * A group is a RoCEv2 multicast GID and the UD QPs attached to it, at most
 * DRAY_HW_MAX_MCG groups of DRAY_HW_MAX_MCG_QP QPs. The port takes frames
 * for a group's address (its multicast MAC is added to the netdev's filter
 * while the group has a QP) and the transport hands each one to every QP
 * attached (dray_hw_mcast_rx()). The table is under obj_lock: the port's
 * receive handler reads it in softirq context, the transport in an engine
 * pass (engine.lock, then obj_lock), admin commands change it.
 */

#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/in6.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_mcast.h"
#include "dev_obj.h"

static bool mgid_is_v4(const u8 *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid);
}

bool dray_hw_mgid_valid(const u8 *gid)
{
	if (mgid_is_v4(gid))
		return ipv4_is_multicast(*(const __be32 *)(gid + 12));
	return ipv6_addr_is_multicast((const struct in6_addr *)gid);
}

/* The Ethernet multicast address of @gid (RFC 1112, RFC 2464). */
static void mgid_mac(const u8 *gid, u8 *mac)
{
	if (mgid_is_v4(gid))
		ip_eth_mc_map(*(const __be32 *)(gid + 12), mac);
	else
		ipv6_eth_mc_map((const struct in6_addr *)gid, mac);
}

/* The group of @gid, or NULL. obj_lock held. */
static struct dray_hw_mcg *mcg_find(struct dray_hw *hw, const u8 *gid)
{
	unsigned int i;

	for (i = 0; i < DRAY_HW_MAX_MCG; i++)
		if (hw->mcg[i].nqp && !memcmp(hw->mcg[i].gid, gid, 16))
			return &hw->mcg[i];
	return NULL;
}

bool dray_hw_mcast_is_ours(struct dray_hw *hw, const struct in6_addr *dst)
{
	bool found;

	spin_lock(&hw->obj_lock);
	found = mcg_find(hw, dst->s6_addr);
	spin_unlock(&hw->obj_lock);
	return found;
}

u32 dray_hw_mcast_qpns(struct dray_hw *hw, const u8 *gid, u32 *qpns)
{
	struct dray_hw_mcg *g;
	u32 n = 0;

	spin_lock(&hw->obj_lock);
	g = mcg_find(hw, gid);
	if (g) {
		n = g->nqp;
		memcpy(qpns, g->qpn, n * sizeof(*qpns));
	}
	spin_unlock(&hw->obj_lock);
	return n;
}

/* Is QPN @qpn attached to @g? Returns its slot or -1. */
static int mcg_slot(const struct dray_hw_mcg *g, u32 qpn)
{
	u32 i;

	for (i = 0; i < g->nqp; i++)
		if (g->qpn[i] == qpn)
			return i;
	return -1;
}

/*
 * Take @qpn out of @g. Returns true if that emptied the group (its MAC is
 * then the caller's to remove from the netdev). obj_lock held.
 */
static bool mcg_remove(struct dray_hw_mcg *g, int slot, u8 *mac)
{
	g->qpn[slot] = g->qpn[--g->nqp];
	if (g->nqp)
		return false;
	ether_addr_copy(mac, g->mac);
	memset(g, 0, sizeof(*g));
	return true;
}

/* A UD QP of this device, by number. Context: admin (admin_lock). */
static int mcast_qp_check(struct dray_hw *hw, u32 qpn, u32 *syndrome)
{
	struct dray_hw_qp *qp = xa_load(&hw->engine.qps, qpn);

	*syndrome = DRAY_AQ_SYN_QPN;
	if (!qp)
		return DRAY_AQ_STS_NOT_FOUND;
	*syndrome = DRAY_AQ_SYN_QP_TYPE;
	if (qp->type != DRAY_QPT_UD)
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

void dray_hw_cmd_attach_mcast(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res)
{
	const struct dray_cmd_mcast *cmd = &e->u.mcast;
	struct dray_hw_engine *eng = &hw->engine;
	u32 qpn = le32_to_cpu(cmd->qpn), syndrome;
	struct dray_hw_mcg *g, *free_g = NULL;
	bool new_group = false;
	u8 mac[ETH_ALEN];
	unsigned int i;
	int status;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (!dray_hw_mgid_valid(cmd->gid)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_MGID);
		return;
	}
	mgid_mac(cmd->gid, mac);

	mutex_lock(&eng->admin_lock);
	status = mcast_qp_check(hw, qpn, &syndrome);
	if (status)
		goto unlock;
	spin_lock_bh(&hw->obj_lock);
	g = mcg_find(hw, cmd->gid);
	if (g && mcg_slot(g, qpn) >= 0) {
		/* Attached already: nothing changes. */
		spin_unlock_bh(&hw->obj_lock);
		goto unlock;
	}
	status = DRAY_AQ_STS_NO_RESOURCES;
	syndrome = DRAY_AQ_SYN_MGID;
	if (g && g->nqp == DRAY_HW_MAX_MCG_QP) {
		spin_unlock_bh(&hw->obj_lock);
		goto unlock;
	}
	if (!g) {
		for (i = 0; i < DRAY_HW_MAX_MCG && !free_g; i++)
			if (!hw->mcg[i].nqp)
				free_g = &hw->mcg[i];
		if (!free_g) {
			spin_unlock_bh(&hw->obj_lock);
			goto unlock;
		}
		new_group = true;
	}
	spin_unlock_bh(&hw->obj_lock);

	/*
	 * A new group: the netdev takes its MAC first (it may sleep for
	 * memory); admin_lock keeps the slot free meanwhile.
	 */
	if (new_group && dev_mc_add(hw->ndev, mac)) {
		status = DRAY_AQ_STS_NO_MEMORY;
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	spin_lock_bh(&hw->obj_lock);
	if (new_group) {
		g = free_g;
		memcpy(g->gid, cmd->gid, sizeof(g->gid));
		ether_addr_copy(g->mac, mac);
	}
	g->qpn[g->nqp++] = qpn;
	spin_unlock_bh(&hw->obj_lock);
	status = DRAY_AQ_STS_OK;

unlock:
	mutex_unlock(&eng->admin_lock);
	if (status)
		dray_aq_fail(res, status, syndrome);
}

void dray_hw_cmd_detach_mcast(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res)
{
	const struct dray_cmd_mcast *cmd = &e->u.mcast;
	struct dray_hw_engine *eng = &hw->engine;
	u32 qpn = le32_to_cpu(cmd->qpn), syndrome;
	bool emptied = false;
	struct dray_hw_mcg *g;
	u8 mac[ETH_ALEN];
	int status, slot = -1;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	status = mcast_qp_check(hw, qpn, &syndrome);
	if (!status) {
		spin_lock_bh(&hw->obj_lock);
		g = mcg_find(hw, cmd->gid);
		if (g)
			slot = mcg_slot(g, qpn);
		if (slot >= 0)
			emptied = mcg_remove(g, slot, mac);
		spin_unlock_bh(&hw->obj_lock);
		if (slot < 0) {
			status = DRAY_AQ_STS_NOT_FOUND;
			syndrome = DRAY_AQ_SYN_MGID;
		}
	}
	if (emptied)
		dev_mc_del(hw->ndev, mac);
	mutex_unlock(&eng->admin_lock);
	if (status)
		dray_aq_fail(res, status, syndrome);
}

void dray_hw_mcast_qp_gone(struct dray_hw *hw, u32 qpn)
{
	u8 macs[DRAY_HW_MAX_MCG][ETH_ALEN];
	unsigned int i, n = 0;
	int slot;

	lockdep_assert_held(&hw->engine.admin_lock);
	spin_lock_bh(&hw->obj_lock);
	for (i = 0; i < DRAY_HW_MAX_MCG; i++) {
		struct dray_hw_mcg *g = &hw->mcg[i];

		if (!g->nqp)
			continue;
		slot = mcg_slot(g, qpn);
		if (slot >= 0 && mcg_remove(g, slot, macs[n]))
			n++;
	}
	spin_unlock_bh(&hw->obj_lock);
	for (i = 0; i < n; i++)
		dev_mc_del(hw->ndev, macs[i]);
}

void dray_hw_mcast_reset(struct dray_hw *hw)
{
	unsigned int i;

	lockdep_assert_held(&hw->engine.admin_lock);
	for (i = 0; i < DRAY_HW_MAX_MCG; i++) {
		u8 mac[ETH_ALEN];
		bool used;

		spin_lock_bh(&hw->obj_lock);
		used = hw->mcg[i].nqp;
		ether_addr_copy(mac, hw->mcg[i].mac);
		memset(&hw->mcg[i], 0, sizeof(hw->mcg[i]));
		spin_unlock_bh(&hw->obj_lock);
		if (used)
			dev_mc_del(hw->ndev, mac);
	}
}
