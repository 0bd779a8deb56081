// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the Ethernet port.
 *
 * The NIC owns one netdev as its port. It follows the netdev's state
 * (administrative state, carrier, MTU, MAC, speed) and reports changes as
 * PORT_CHANGE events on EQ 0. Received RoCEv2 frames addressed to one of
 * the port's GIDs are taken from the receive path before the host IP stack
 * sees them (an rx_handler) and queued for the queue engine; all other
 * frames pass untouched.
 */

#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "dev.h"
#include "dev_logic.h"
#include "dev_wire.h"

/* Take a fresh snapshot of the netdev. Returns true if the state changed. */
static bool port_snapshot(struct dray_hw *hw)
{
	struct net_device *ndev = hw->ndev;
	struct ethtool_link_ksettings ks;
	u32 speed = 0;
	u8 state, phys;
	bool changed;

	ASSERT_RTNL();

	if (!netif_running(ndev)) {
		state = DRAY_PORT_DOWN;
		phys = DRAY_PORT_PHYS_DISABLED;
	} else if (!netif_carrier_ok(ndev)) {
		state = DRAY_PORT_DOWN;
		phys = DRAY_PORT_PHYS_POLLING;
	} else {
		state = DRAY_PORT_ACTIVE;
		phys = DRAY_PORT_PHYS_LINK_UP;
	}
	if (!__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN)
		speed = ks.base.speed;

	spin_lock_bh(&hw->port_lock);
	changed = hw->port_state != state;
	hw->port_state = state;
	hw->phys_state = phys;
	hw->eth_mtu = ndev->mtu;
	hw->speed_mbps = speed;
	ether_addr_copy(hw->mac, ndev->dev_addr);
	spin_unlock_bh(&hw->port_lock);
	return changed;
}

void dray_hw_port_query(struct dray_hw *hw, struct dray_port_attr *attr)
{
	spin_lock_bh(&hw->port_lock);
	attr->state = hw->port_state;
	attr->phys_state = hw->phys_state;
	attr->max_mtu = DRAY_MTU_4096;
	attr->active_mtu = dray_mtu_from_eth(hw->eth_mtu);
	attr->eth_mtu = cpu_to_le32(hw->eth_mtu);
	attr->speed_mbps = cpu_to_le32(hw->speed_mbps);
	attr->gid_tbl_len = cpu_to_le32(DRAY_HW_GID_TBL_LEN);
	ether_addr_copy(attr->mac, hw->mac);
	spin_unlock_bh(&hw->port_lock);
}

static void port_state_event(struct dray_hw *hw)
{
	u8 state;

	spin_lock_bh(&hw->port_lock);
	state = hw->port_state;
	spin_unlock_bh(&hw->port_lock);
	dray_hw_eq_post(hw, 0, DRAY_EQE_PORT_CHANGE, 1, state);
}

/* Detach from the receive path. RTNL held. */
static void port_rx_detach(struct dray_hw *hw)
{
	ASSERT_RTNL();
	if (!hw->rx_attached)
		return;
	netdev_rx_handler_unregister(hw->ndev);
	hw->rx_attached = false;
}

static int port_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct dray_hw *hw = container_of(nb, struct dray_hw, nb);

	if (ndev != hw->ndev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		if (!hw->rx_attached)
			break;
		if (port_snapshot(hw))
			port_state_event(hw);
		break;
	case NETDEV_UNREGISTER:
		if (!hw->rx_attached)
			break;
		port_rx_detach(hw);
		spin_lock_bh(&hw->port_lock);
		hw->port_state = DRAY_PORT_DOWN;
		hw->phys_state = DRAY_PORT_PHYS_DISABLED;
		spin_unlock_bh(&hw->port_lock);
		port_state_event(hw);
		dray_hw_engine_port_gone(hw);
		if (hw->bus.removed)
			hw->bus.removed(hw->bus.removed_ctx);
		break;
	}
	return NOTIFY_DONE;
}

/* Is this destination address one of the port's GIDs? */
static bool port_gid_match(struct dray_hw *hw, const struct in6_addr *dst)
{
	bool found = false;
	unsigned int i;

	spin_lock(&hw->obj_lock);
	for (i = 0; i < DRAY_HW_GID_TBL_LEN; i++) {
		if (hw->gids[i].valid &&
		    !memcmp(hw->gids[i].gid, dst, sizeof(*dst))) {
			found = true;
			break;
		}
	}
	spin_unlock(&hw->obj_lock);
	return found;
}

/*
 * Classify a received frame: is it RoCEv2 for this port? Reads headers
 * with skb_header_pointer(), so the frame is never modified.
 */
static bool port_is_roce_for_us(struct dray_hw *hw, struct sk_buff *skb)
{
	struct in6_addr dst;
	struct udphdr _uh;
	const struct udphdr *uh;
	unsigned int l4off;

	if (skb->pkt_type != PACKET_HOST && skb->pkt_type != PACKET_MULTICAST)
		return false;

	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, 0, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5 || iph->protocol != IPPROTO_UDP ||
		    ip_is_fragment(iph))
			return false;
		ipv6_addr_set_v4mapped(iph->daddr, &dst);
		l4off = iph->ihl * 4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;

		ip6h = skb_header_pointer(skb, 0, sizeof(_ip6h), &_ip6h);
		if (!ip6h || ip6h->nexthdr != IPPROTO_UDP)
			return false;
		dst = ip6h->daddr;
		l4off = sizeof(*ip6h);
	} else {
		return false;
	}

	uh = skb_header_pointer(skb, l4off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(DRAY_ROCE_UDP_PORT))
		return false;
	if (skb->pkt_type == PACKET_MULTICAST)
		return dray_hw_mcast_is_ours(hw, &dst);
	return port_gid_match(hw, &dst);
}

static rx_handler_result_t port_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct dray_hw *hw = rcu_dereference(skb->dev->rx_handler_data);

	if (!port_is_roce_for_us(hw, skb))
		return RX_HANDLER_PASS;

	/* The engine owns the frame from here: it must not be shared. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (skb)
		dray_hw_engine_rx(hw, skb);
	return RX_HANDLER_CONSUMED;
}

u8 dray_hw_port_active_mtu(struct dray_hw *hw)
{
	u32 eth_mtu;

	spin_lock_bh(&hw->port_lock);
	eth_mtu = hw->eth_mtu;
	spin_unlock_bh(&hw->port_lock);
	return dray_mtu_from_eth(eth_mtu);
}

bool dray_hw_gid_get(struct dray_hw *hw, u32 index, u8 *gid)
{
	bool valid = false;

	if (index >= DRAY_HW_GID_TBL_LEN)
		return false;
	spin_lock_bh(&hw->obj_lock);
	if (hw->gids[index].valid) {
		memcpy(gid, hw->gids[index].gid, sizeof(hw->gids[index].gid));
		valid = true;
	}
	spin_unlock_bh(&hw->obj_lock);
	return valid;
}

int dray_hw_port_attach(struct dray_hw *hw, struct net_device *ndev)
{
	int ret;

	hw->ndev = ndev;
	netdev_hold(ndev, &hw->ndev_tracker, GFP_KERNEL);
	dray_guid_from_mac(ndev->dev_addr, hw->node_guid);

	hw->nb.notifier_call = port_netdev_event;
	ret = register_netdevice_notifier_dev_net(ndev, &hw->nb, &hw->nn);
	if (ret)
		goto put_ndev;

	rtnl_lock();
	if (ndev->reg_state != NETREG_REGISTERED) {
		ret = -ENODEV;
		goto unlock;
	}
	ret = netdev_rx_handler_register(ndev, port_rx_handler, hw);
	if (ret)
		goto unlock;
	hw->rx_attached = true;
	port_snapshot(hw);
	rtnl_unlock();
	return 0;

unlock:
	rtnl_unlock();
	unregister_netdevice_notifier_dev_net(ndev, &hw->nb, &hw->nn);
put_ndev:
	netdev_put(ndev, &hw->ndev_tracker);
	return ret;
}

void dray_hw_port_detach(struct dray_hw *hw)
{
	rtnl_lock();
	port_rx_detach(hw);
	rtnl_unlock();
	unregister_netdevice_notifier_dev_net(hw->ndev, &hw->nb, &hw->nn);
	netdev_put(hw->ndev, &hw->ndev_tracker);
}
