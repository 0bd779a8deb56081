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
 * Receive: every header is validated (IP, UDP, BTH, extended headers,
 * lengths), the ICRC is checked, the frame must come from the QP's peer
 * address; only then does the responder or the completer see it. Frames
 * are only read, never modified: the rx path may hand over shared skbs.
 */

#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ip6_checksum.h>
#include <asm/unaligned.h>

#include "dev_xport_int.h"

/* Frames dropped before a QP could be told (malformed, not RC). */
static atomic64_t xp_rx_malformed = ATOMIC64_INIT(0);

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
 * @qp: the QP sending it (for counters)
 * @pkt: its transport header; @pkt->pad is set here from @paylen
 * @paylen: payload bytes the caller will add
 * @zcopy: add the payload as page fragments rather than copies
 *
 * Return: an skb holding the transport headers, or NULL (counted).
 */
struct sk_buff *dray_xp_skb_alloc(struct dray_hw *hw, struct dray_hw_qp *qp,
				  struct dray_pkt *pkt, u32 paylen, bool zcopy)
{
	u32 hlen = dray_wire_hdr_len(dray_opcodes[pkt->opcode].flags);
	u32 head = LL_RESERVED_SPACE(hw->ndev) + XP_L2L4_MAX;
	struct sk_buff *skb;

	skb = alloc_skb(head + hlen + (zcopy ? 0 : paylen) + XP_TRAILER_MAX,
			GFP_ATOMIC | __GFP_NOWARN);
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

/*
 * Zero copy is not allowed from @page (a physical MR's): copy the piece
 * into a fragment of its own instead.
 */
static int xp_skb_add_copy_frag(struct sk_buff *skb, struct page *page,
				u32 off, u32 len)
{
	struct page *fpage;
	void *p, *va;
	int i = skb_shinfo(skb)->nr_frags;

	/* One fragment stays free for the trailer. */
	if (i >= MAX_SKB_FRAGS - 1)
		return -EMSGSIZE;
	p = netdev_alloc_frag(len);
	if (!p)
		return -ENOMEM;
	va = kmap_local_page(page);
	memcpy(p, va + off, len);
	kunmap_local(va);
	fpage = virt_to_head_page(p);
	skb_fill_page_desc(skb, i, fpage, p - page_address(fpage), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/* Attach (zero copy) or copy @len bytes of @mr at @addr (range checked). */
int dray_xp_skb_add_mr(struct sk_buff *skb, struct dray_hw_mr *mr, u64 addr,
		       u32 len)
{
	bool zcopy = xp_cb(skb)->zcopy;

	while (len) {
		struct page *page;
		u32 off, plen;
		int i;

		page = dray_hw_mr_page(mr, addr, &off, &plen);
		if (!page || !plen)
			return -EFAULT;
		plen = min(plen, len);
		if (zcopy && !dray_hw_mr_zcopy_ok(mr)) {
			int ret = xp_skb_add_copy_frag(skb, page, off, plen);

			if (ret)
				return ret;
		} else if (zcopy) {
			i = skb_shinfo(skb)->nr_frags;
			if (i && skb_can_coalesce(skb, i, page, off)) {
				skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1],
						  plen);
			} else {
				/* One fragment stays free for the trailer. */
				if (i >= MAX_SKB_FRAGS - 1)
					return -EMSGSIZE;
				get_page(page);
				skb_fill_page_desc(skb, i, page, off, plen);
			}
			skb->len += plen;
			skb->data_len += plen;
			skb->truesize += plen;
		} else {
			void *va = kmap_local_page(page);

			skb_put_data(skb, va + off, plen);
			kunmap_local(va);
		}
		addr += plen;
		len -= plen;
	}
	return 0;
}

/* Copy @len bytes into a frame allocated without zcopy. */
void dray_xp_skb_add_data(struct sk_buff *skb, const void *data, u32 len)
{
	skb_put_data(skb, data, len);
}

/* Continue @crc over @len bytes of @skb at @off, fragments included. */
static u32 xp_crc_skb(struct sk_buff *skb, u32 off, u32 len, u32 crc)
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
		crc = xp_crc_skb(skb, l2l4 + cb.hdr_len, cb.paylen, crc);
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

	skb = dray_xp_skb_alloc(hw, qp, &pkt, 0, false);
	if (skb)
		dray_xp_xmit(hw, qp, skb);
}

/**
 * dray_xp_copy_to_mr() - write into a checked MR range (the one copy)
 * @mr: the MR, [@addr, @addr + @len) already checked
 * @addr: where
 * @skb: source frame, or NULL to copy from @buf
 * @off: offset of the data in @skb
 * @buf: source buffer when @skb is NULL
 * @len: bytes
 *
 * Return: 0, or -EFAULT if a page is missing or the frame is short.
 */
int dray_xp_copy_to_mr(struct dray_hw_mr *mr, u64 addr,
		       const struct sk_buff *skb, u32 off, const void *buf,
		       u32 len)
{
	while (len) {
		struct page *page;
		u32 poff, plen;
		void *va;
		int ret = 0;

		page = dray_hw_mr_page(mr, addr, &poff, &plen);
		if (!page || !plen)
			return -EFAULT;
		plen = min(plen, len);
		va = kmap_local_page(page);
		if (skb) {
			ret = skb_copy_bits(skb, off, va + poff, plen);
			off += plen;
		} else {
			memcpy(va + poff, buf, plen);
			buf += plen;
		}
		kunmap_local(va);
		flush_dcache_page(page);
		if (ret)
			return -EFAULT;
		addr += plen;
		len -= plen;
	}
	return 0;
}

/**
 * dray_xp_scatter() - place data into a list of local SGEs
 * @hw: the device
 * @qp: the QP (its PD)
 * @sge: the SGEs (from a WQE; little endian)
 * @num_sge: how many
 * @msg_off: offset in the message at which @len bytes go
 * @skb: source frame, or NULL to copy from @buf
 * @skb_off: offset of the data in @skb
 * @buf: source buffer when @skb is NULL
 * @len: bytes
 *
 * Every SGE piece is checked (lkey, PD, LOCAL_WRITE, range).
 *
 * Return: DRAY_CQE_ST_SUCCESS, LOC_PROT_ERR, or LOC_LEN_ERR if the SGEs
 * end before the data.
 */
u8 dray_xp_scatter(struct dray_hw *hw, struct dray_hw_qp *qp,
		   const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		   const struct sk_buff *skb, u32 skb_off, const void *buf,
		   u32 len)
{
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		u32 slen = le32_to_cpu(sge[i].length);
		u64 addr = le64_to_cpu(sge[i].addr);
		struct dray_hw_mr *mr;
		u32 n;

		if (msg_off >= slen) {
			msg_off -= slen;
			continue;
		}
		n = min_t(u64, slen - msg_off, len);
		addr += msg_off;
		if (dray_hw_mr_check(hw, le32_to_cpu(sge[i].lkey), qp->pdn,
				     DRAY_ACCESS_LOCAL_WRITE, addr, n, &mr) ||
		    dray_xp_copy_to_mr(mr, addr, skb, skb_off, buf, n))
			return DRAY_CQE_ST_LOC_PROT_ERR;
		msg_off = 0;
		len -= n;
		skb_off += n;
		if (buf)
			buf += n;
	}
	return len ? DRAY_CQE_ST_LOC_LEN_ERR : DRAY_CQE_ST_SUCCESS;
}

/*
 * Page fragments @len bytes at @msg_off of an SGE list need at most (an
 * MR's pages follow its iova: a page boundary is a multiple of 4 KiB).
 */
u32 dray_xp_sge_frags(const struct dray_sge *sge, u32 num_sge, u64 msg_off,
		      u32 len)
{
	u32 i, frags = 0;

	for (i = 0; i < num_sge && len; i++) {
		u32 slen = le32_to_cpu(sge[i].length);
		u64 addr = le64_to_cpu(sge[i].addr);
		u32 n;

		if (msg_off >= slen) {
			msg_off -= slen;
			continue;
		}
		n = min_t(u64, slen - msg_off, len);
		addr += msg_off;
		frags += (offset_in_page(addr) + n + PAGE_SIZE - 1) >>
			 PAGE_SHIFT;
		msg_off = 0;
		len -= n;
	}
	return frags;
}

/**
 * dray_xp_gather() - add @len bytes at @msg_off of a send WQE's payload
 * @hw: the device
 * @qp: the QP (its PD)
 * @skb: the frame
 * @wqe: the send WQE (inline data or SGEs)
 * @msg_off: offset in the message
 * @len: bytes
 *
 * Return: DRAY_CQE_ST_SUCCESS, LOC_PROT_ERR (an SGE refused),
 * LOC_LEN_ERR (the WQE has less data), LOC_QP_OP_ERR (frame too
 * fragmented).
 */
u8 dray_xp_gather(struct dray_hw *hw, struct dray_hw_qp *qp,
		  struct sk_buff *skb, const struct dray_hw_swqe *wqe,
		  u64 msg_off, u32 len)
{
	u32 i;

	if (wqe->hdr.flags & DRAY_WQE_F_INLINE) {
		if (msg_off + len > wqe->length)
			return DRAY_CQE_ST_LOC_LEN_ERR;
		dray_xp_skb_add_data(skb, wqe->inline_data + msg_off, len);
		return DRAY_CQE_ST_SUCCESS;
	}
	for (i = 0; i < wqe->num_sge && len; i++) {
		const struct dray_sge *sge = &wqe->sge[i];
		u32 slen = le32_to_cpu(sge->length);
		u64 addr = le64_to_cpu(sge->addr);
		struct dray_hw_mr *mr;
		u32 n;
		int ret;

		if (msg_off >= slen) {
			msg_off -= slen;
			continue;
		}
		n = min_t(u64, slen - msg_off, len);
		addr += msg_off;
		if (dray_hw_mr_check(hw, le32_to_cpu(sge->lkey), qp->pdn, 0,
				     addr, n, &mr))
			return DRAY_CQE_ST_LOC_PROT_ERR;
		ret = dray_xp_skb_add_mr(skb, mr, addr, n);
		if (ret == -EMSGSIZE)
			return DRAY_CQE_ST_LOC_QP_OP_ERR;
		if (ret)
			return DRAY_CQE_ST_LOC_PROT_ERR;
		msg_off = 0;
		len -= n;
	}
	return len ? DRAY_CQE_ST_LOC_LEN_ERR : DRAY_CQE_ST_SUCCESS;
}

/* May a QP in its current state take frames? */
static bool xp_rx_state_ok(const struct dray_hw_qp *qp)
{
	return qp->state == DRAY_QPS_RTR || qp->state == DRAY_QPS_RTS ||
	       qp->state == DRAY_QPS_SQD || qp->state == DRAY_QPS_SQE;
}

/* RC: only the connected peer may talk to the QP (by IP addresses). */
static bool xp_rx_from_peer(const struct dray_hw_qp *qp,
			    const struct dray_wire_l3 *l3)
{
	return l3->ipv6 == !qp->path.ipv4 &&
	       !memcmp(l3->sgid, qp->path.dgid, sizeof(l3->sgid)) &&
	       !memcmp(l3->dgid, qp->path.sgid, sizeof(l3->dgid));
}

static bool xp_rx_icrc_ok(struct sk_buff *skb, const u8 *hdrs,
			  const struct dray_wire_l3 *l3, u32 hlen,
			  const struct dray_xp_rxpkt *rx)
{
	u32 end = rx->pay_off + rx->pay_len + rx->hdr.pad;
	__le32 wire;
	u32 crc;

	crc = dray_icrc_begin(hdrs, l3->ipv6, hdrs + l3->ip_hlen,
			      DRAY_UDP_HLEN + hlen);
	crc = xp_crc_skb(skb, rx->pay_off, rx->pay_len + rx->hdr.pad, crc);
	if (skb_copy_bits(skb, end, &wire, sizeof(wire)))
		return false;
	return le32_to_cpu(wire) == dray_icrc_final(crc);
}

/**
 * dray_xport_rx() - take a received RoCEv2 frame
 * @hw: the device
 * @skb: the frame, data at the IP header; consumed
 *
 * Validates the frame completely, then gives it to the responder (a
 * request) or the completer (a response) of its QP, or a UD SEND to
 * dray_ud_rx(). Bad frames are dropped and counted: per QP when the QP
 * is known, else per module.
 *
 * Context: an engine pass, engine.lock held.
 */
void dray_xport_rx(struct dray_hw *hw, struct sk_buff *skb)
{
	u8 hdrs[DRAY_IPV6_HLEN + DRAY_UDP_HLEN + DRAY_HDR_MAX];
	struct dray_xp_rxpkt rx = { .skb = skb };
	struct dray_wire_l3 l3;
	struct dray_hw_qp *qp;
	u32 avail, l4, trail;
	bool ipv6, internal;
	int hlen;

	dray_xp_assert_locked(hw);

	if (skb->protocol == htons(ETH_P_IPV6))
		ipv6 = true;
	else if (skb->protocol == htons(ETH_P_IP))
		ipv6 = false;
	else
		goto malformed;

	avail = min_t(u32, skb->len, sizeof(hdrs));
	if (skb_copy_bits(skb, 0, hdrs, avail) ||
	    dray_wire_parse_l3(hdrs, avail, skb->len, ipv6, &l3))
		goto malformed;
	l4 = l3.ip_hlen + DRAY_UDP_HLEN;
	hlen = dray_wire_parse(hdrs + l4, avail - l4, &rx.hdr);
	if (hlen < 0)
		goto malformed;
	rx.flags = dray_opcodes[rx.hdr.opcode].flags;
	trail = rx.hdr.pad + DRAY_ICRC_BYTES;
	if (!(rx.flags & (DRAY_OPF_RC | DRAY_OPF_UD)) ||
	    l3.udp_len < hlen + trail)
		goto malformed;
	rx.pay_off = l4 + hlen;
	rx.pay_len = l3.udp_len - hlen - trail;
	if (!(rx.flags & DRAY_OPF_PAYLOAD) && (rx.pay_len || rx.hdr.pad))
		goto malformed;

	qp = dray_hw_qp_find(hw, rx.hdr.qpn);
	if (!qp) {
		atomic64_inc(&hw->rx_roce_no_qp);
		goto free;
	}
	/* The port passes on PACKET_HOST frames only: this one is ours. */
	internal = skb->pkt_type == PACKET_LOOPBACK && skb->dev == hw->ndev;
	if (!internal && !xp_rx_icrc_ok(skb, hdrs, &l3, hlen, &rx)) {
		qp->xp.stats.rx_icrc_errors++;
		goto free;
	}
	if (rx.flags & DRAY_OPF_UD) {
		dray_ud_rx(hw, qp, &rx, hdrs, &l3);
		return;
	}
	if (qp->type != DRAY_QPT_RC || !xp_rx_state_ok(qp) ||
	    !xp_rx_from_peer(qp, &l3) ||
	    (rx.hdr.pkey | DRAY_PKEY_MEMBER) != DRAY_PKEY_DEFAULT) {
		qp->xp.stats.rx_drops++;
		goto free;
	}
	qp->xp.stats.rx_pkts++;
	qp->xp.stats.rx_bytes += rx.pay_len;

	if (rx.flags & DRAY_OPF_REQ)
		dray_xp_resp_rx(hw, qp, &rx);
	else
		dray_xp_comp_rx(hw, qp, &rx);
	dray_xp_arm(hw, qp);
	consume_skb(skb);
	return;

malformed:
	atomic64_inc(&xp_rx_malformed);
free:
	kfree_skb(skb);
}
