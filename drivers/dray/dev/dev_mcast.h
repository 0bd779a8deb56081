/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: UD multicast groups (dev_mcast.c). The admin commands
 * are in dev_cmd.h; these are the hooks of the port, the transport and
 * the QP and reset paths.
 */
#ifndef DRAY_DEV_MCAST_H
#define DRAY_DEV_MCAST_H

#include <linux/if_ether.h>
#include <linux/types.h>

#include "dev_limits.h"

struct dray_hw;
struct in6_addr;

/* A group; nqp 0: the slot is free. In struct dray_hw, under obj_lock. */
struct dray_hw_mcg {
	u8	gid[16];
	u8	mac[ETH_ALEN];
	u32	nqp;
	u32	qpn[DRAY_HW_MAX_MCG_QP];
};

/* Is @gid a RoCEv2 multicast GID (ff00::/8, IPv4-mapped 224.0.0.0/4)? */
bool dray_hw_mgid_valid(const u8 *gid);
/* Does a group of this device have address @dst? Takes obj_lock. */
bool dray_hw_mcast_is_ours(struct dray_hw *hw, const struct in6_addr *dst);
/*
 * The QPNs attached to group @gid, copied into @qpns (room for
 * DRAY_HW_MAX_MCG_QP); returns how many (0: no such group).
 */
u32 dray_hw_mcast_qpns(struct dray_hw *hw, const u8 *gid, u32 *qpns);
/* QP @qpn is destroyed: detach it from every group. admin_lock held. */
void dray_hw_mcast_qp_gone(struct dray_hw *hw, u32 qpn);
/* Device reset: every group goes. admin_lock held. */
void dray_hw_mcast_reset(struct dray_hw *hw);

#endif /* DRAY_DEV_MCAST_H */
