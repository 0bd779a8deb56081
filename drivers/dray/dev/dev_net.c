// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: RoCEv2 frames.
 *
 * Transmit: a frame is an skb whose linear part holds the Ethernet, IP,
 * UDP and transport headers; its payload is either copied into the linear
 * part (small payloads, inline data) or attached as page fragments that
 * reference the registered pages themselves (zero copy: get_page() on
 * each). The ICRC is computed over the finished frame and appended, with
 * the pad bytes, in the linear part or in one more fragment. A frame for
 * the port's own MAC address is looped back into the engine's receive
 * queue (marked PACKET_LOOPBACK, without ICRC: it never leaves the NIC);
 * any other goes out with dev_queue_xmit() on the port's netdev.
 *
 * The payload itself is added by the DMA engine (dev_sge.c); receiving is
 * dray_xport_rx() (dev_xport.c), which checks the ICRC with
 * dray_xp_crc_skb() from here.
 */

#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ip6_checksum.h>

#include "dev_compat.h"
#include "dev_trace.h"
#include "dev_xport_int.h"

/* Per-frame transmit state, in skb->cb until the frame is handed over. */
struct dray_xp_cb {
	u32	hdr_len;	/* BTH and extended headers */
	u32	paylen;		/* payload bytes the caller announced */
	u8	pad;
	bool	zcopy;		/* payload as page fragments */
};

static_assert(sizeof(struct dray_xp_cb) <= sizeof_field(struct sk_buff, cb));

static struct dray_xp_cb *xp_cb(struct sk_buff *skb)
{
	return (struct dray_xp_cb *)skb->cb;
}

#define XP_L2L4_MAX	(DRAY_ETH_HLEN + DRAY_IPV6_HLEN + DRAY_UDP_HLEN)
#define XP_TRAILER_MAX	(3 + DRAY_ICRC_BYTES)

/**
 * dray_xp_skb_alloc() - start a frame
 * @hw: the device
 * @qp: the QP sending it (for counters, and its service's opcodes)
 * @pkt: its transport header, the opcode RC's (a UC or XRC QP's opcode
 *	is made here); @pkt->pad is set here from @paylen
 * @paylen: payload bytes the caller will add
 * @zcopy: add the payload as page fragments rather than copies
 *
 * Return: an skb holding the transport headers, or NULL (counted).
 */
struct sk_buff *dray_xp_skb_alloc(struct dray_hw *hw, struct dray_hw_qp *qp,
				  struct dray_pkt *pkt, u32 paylen, bool zcopy)
{
	u32 head = LL_RESERVED_SPACE(hw->ndev) + XP_L2L4_MAX;
	struct sk_buff *skb = NULL;
	u32 hlen, size, frag;
	void *data;

	/* The transport's opcodes: RC's operation, UC's or XRC's numbers. */
	pkt->opcode |= dray_xp_op_transport(qp);
	hlen = dray_wire_hdr_len(dray_opcodes[pkt->opcode].flags);

	/*
	 * The head from the per-CPU page fragment cache, as a NIC's receive
	 * buffers: kmalloc() memory is cleared (init_on_alloc), and every
	 * header byte sent is written here anyway.
	 */
	size = head + hlen + (zcopy ? 0 : paylen) + XP_TRAILER_MAX;
	frag = SKB_DATA_ALIGN(size) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	if (frag <= PAGE_SIZE) {
		data = netdev_alloc_frag(frag);
		if (data) {
			skb = build_skb(data, frag);
			if (!skb)
				skb_free_frag(data);
		}
	} else {
		skb = alloc_skb(size, GFP_ATOMIC | __GFP_NOWARN);
	}
	if (!skb) {
		qp->xp.stats.tx_drops++;
		return NULL;
	}
	skb_reserve(skb, head);
	pkt->pad = dray_wire_pad(paylen);
	dray_wire_build(pkt, skb_put(skb, hlen));
	xp_cb(skb)->hdr_len = hlen;
	xp_cb(skb)->paylen = paylen;
	xp_cb(skb)->pad = pkt->pad;
	xp_cb(skb)->zcopy = zcopy;
	return skb;
}

/* Copy @len bytes into a frame allocated without zcopy. */
void dray_xp_skb_add_data(struct sk_buff *skb, const void *data, u32 len)
{
	skb_put_data(skb, data, len);
}

/* Continue @crc over @len bytes of @skb at @off, fragments included. */
u32 dray_xp_crc_skb(struct sk_buff *skb, u32 off, u32 len, u32 crc)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 done = 0, n;

	if (!len)
		return crc;
	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len && (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, len - done);
		crc = dray_icrc_update(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/* Append pad and ICRC: in the linear part, or as the last fragment. */
static int xp_put_trailer(struct sk_buff *skb, const u8 *t, u32 len)
{
	struct page *page;
	void *p;

	if (!skb_shinfo(skb)->nr_frags) {
		skb_put_data(skb, t, len);
		return 0;
	}
	p = netdev_alloc_frag(len);
	if (!p)
		return -ENOMEM;
	memcpy(p, t, len);
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   p - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/* The wire address of a path of the QP; false if the port is not up. */
static bool xp_wire_addr(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_path *path,
			 struct dray_wire_addr *a)
{
	u32 fl = path->flow_label;
	bool up;

	spin_lock_bh(&hw->port_lock);
	up = hw->port_state == DRAY_PORT_ACTIVE;
	ether_addr_copy(a->smac, hw->mac);
	spin_unlock_bh(&hw->port_lock);

	a->ipv6 = !path->ipv4;
	ether_addr_copy(a->dmac, path->dmac);
	memcpy(a->sgid, path->sgid, sizeof(a->sgid));
	memcpy(a->dgid, path->dgid, sizeof(a->dgid));
	a->tclass = path->traffic_class;
	a->hop_limit = path->hop_limit;
	a->flow_label = fl;
	if (!fl)
		fl = dray_wire_flow_label(qp->qpn, qp->dest_qpn);
	a->sport = path->udp_sport ? path->udp_sport : dray_wire_sport(fl);
	return up;
}

/* IPv6 requires a UDP checksum: let the stack or the device fill it. */
static void xp_udp6_csum(struct sk_buff *skb, u32 udp_len)
{
	struct ipv6hdr *ip6 = ipv6_hdr(skb);
	struct udphdr *uh = udp_hdr(skb);

	uh->check = ~csum_ipv6_magic(&ip6->saddr, &ip6->daddr, udp_len,
				     IPPROTO_UDP, 0);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
}

/**
 * dray_xp_xmit_path() - finish a frame and send it along a path
 * @hw: the device
 * @qp: the sending QP
 * @path: where to (the QP's own, or a UD WQE's AH)
 * @skb: from dray_xp_skb_alloc(), payload added; consumed
 */
void dray_xp_xmit_path(struct dray_hw *hw, struct dray_hw_qp *qp,
		       const struct dray_hw_path *path, struct sk_buff *skb)
{
	struct dray_xp_cb cb = *xp_cb(skb);
	u32 udp_len = DRAY_UDP_HLEN + cb.hdr_len + cb.paylen + cb.pad +
		      DRAY_ICRC_BYTES;
	u8 trailer[XP_TRAILER_MAX] = {};
	struct dray_wire_addr a;
	u32 l2l4, crc;
	bool loop;
	u8 *h;
	int ret;

	if (skb->len != cb.hdr_len + cb.paylen ||
	    !xp_wire_addr(hw, qp, path, &a))
		goto drop;

	l2l4 = DRAY_ETH_HLEN + (a.ipv6 ? DRAY_IPV6_HLEN : DRAY_IPV4_HLEN) +
	       DRAY_UDP_HLEN;
	h = skb_push(skb, l2l4);
	dray_wire_build_l3(&a, udp_len - DRAY_UDP_HLEN, h);
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, DRAY_ETH_HLEN);
	skb_set_transport_header(skb, l2l4 - DRAY_UDP_HLEN);

	/*
	 * A frame for the port's own MAC never leaves the NIC: like a NIC's
	 * internal loopback it carries no ICRC (zero), and dray_xport_rx()
	 * knows it by PACKET_LOOPBACK.
	 */
	loop = ether_addr_equal(a.dmac, a.smac);
	if (!loop) {
		crc = dray_icrc_begin(h + DRAY_ETH_HLEN, a.ipv6,
				      h + l2l4 - DRAY_UDP_HLEN,
				      DRAY_UDP_HLEN + cb.hdr_len);
		crc = dray_xp_crc_skb(skb, l2l4 + cb.hdr_len, cb.paylen, crc);
		crc = dray_icrc_update(crc, trailer, cb.pad);
		put_unaligned_le32(dray_icrc_final(crc), trailer + cb.pad);
	}
	if (xp_put_trailer(skb, trailer, cb.pad + DRAY_ICRC_BYTES))
		goto drop;

	skb->protocol = htons(a.ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	skb->dev = hw->ndev;
	if (skb_shinfo(skb)->nr_frags)
		skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	if (a.ipv6)
		xp_udp6_csum(skb, udp_len);

	qp->xp.stats.tx_pkts++;
	qp->xp.stats.tx_bytes += cb.paylen;

	if (loop) {
		/* As the port would hand it over: data at the IP header. */
		skb_pull(skb, DRAY_ETH_HLEN);
		skb->pkt_type = PACKET_LOOPBACK;
		local_bh_disable();
		dray_hw_engine_rx(hw, skb);
		local_bh_enable();
		return;
	}
	/*
	 * Multicast: the port's own QPs in the group get it too (multicast
	 * loopback, as RoCE NICs do), from a copy that never left the NIC.
	 */
	if (is_multicast_ether_addr(a.dmac) &&
	    dray_hw_mcast_is_ours(hw, (const struct in6_addr *)a.dgid)) {
		struct sk_buff *lb = skb_copy(skb, GFP_ATOMIC);

		if (lb) {
			skb_pull(lb, DRAY_ETH_HLEN);
			lb->pkt_type = PACKET_LOOPBACK;
			local_bh_disable();
			dray_hw_engine_rx(hw, lb);
			local_bh_enable();
		} else {
			qp->xp.stats.tx_drops++;
		}
	}
	ret = dev_queue_xmit(skb);
	if (net_xmit_eval(ret))
		qp->xp.stats.tx_drops++;
	return;

drop:
	qp->xp.stats.tx_drops++;
	kfree_skb(skb);
}

/* dray_xp_xmit_path() along the QP's own path (RC). */
void dray_xp_xmit(struct dray_hw *hw, struct dray_hw_qp *qp,
		  struct sk_buff *skb)
{
	dray_xp_xmit_path(hw, qp, &qp->path, skb);
}

/**
 * dray_xp_count_nak() - count a NAK by its kind
 * @qp: the QP that sent or received it
 * @syndrome: its AETH syndrome
 * @tx: sent (else received)
 *
 * Return: false if @syndrome is no NAK dray knows (not counted).
 */
bool dray_xp_count_nak(struct dray_hw_qp *qp, u8 syndrome, bool tx)
{
	struct dray_xp_stats *s = &qp->xp.stats;
	u64 *c;

	if ((syndrome & DRAY_AETH_TYPE_MASK) == DRAY_AETH_RNR_NAK)
		c = tx ? &s->rnr_naks_tx : &s->rnr_naks_rx;
	else if ((syndrome & DRAY_AETH_TYPE_MASK) != DRAY_AETH_NAK)
		c = NULL;
	else if ((syndrome & DRAY_AETH_VALUE_MASK) == DRAY_NAK_PSN_SEQ)
		c = tx ? &s->seq_naks_tx : &s->seq_naks_rx;
	else if ((syndrome & DRAY_AETH_VALUE_MASK) == DRAY_NAK_INV_REQ ||
		 (syndrome & DRAY_AETH_VALUE_MASK) == DRAY_NAK_INV_RD_REQ)
		c = tx ? &s->inv_req_naks_tx : &s->inv_req_naks_rx;
	else if ((syndrome & DRAY_AETH_VALUE_MASK) == DRAY_NAK_REM_ACCESS)
		c = tx ? &s->access_naks_tx : &s->access_naks_rx;
	else if ((syndrome & DRAY_AETH_VALUE_MASK) == DRAY_NAK_REM_OP)
		c = tx ? &s->op_naks_tx : &s->op_naks_rx;
	else
		c = NULL;
	if (c)
		(*c)++;
	return c;
}

/* Send an ACK or NAK with @syndrome for @psn (AETH carries the MSN). */
void dray_xp_send_ack(struct dray_hw *hw, struct dray_hw_qp *qp, u8 syndrome,
		      u32 psn)
{
	struct dray_pkt pkt = {
		.opcode = DRAY_OP_ACK,
		.pkey = DRAY_PKEY_DEFAULT,
		.qpn = qp->dest_qpn,
		.psn = psn,
		.syndrome = syndrome,
		.msn = qp->xp.resp.msn,
	};
	struct sk_buff *skb;

	if (dray_xp_count_nak(qp, syndrome, true))
		trace_dray_nak_tx(hw->ndev, qp->qpn, psn, syndrome);
	skb = dray_xp_skb_alloc(hw, qp, &pkt, 0, false);
	if (skb)
		dray_xp_xmit(hw, qp, skb);
}
