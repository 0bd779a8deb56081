// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the transport's entry points for the engine and the QP
 * objects (the contract is dev_xport.h), the per-QP deadline, and the
 * receive demultiplexer: every received RoCEv2 frame is validated here
 * completely (IP, UDP, BTH, extended headers, lengths, the ICRC, the
 * sender: an RC QP's connected peer) before the responder, the completer
 * or the UD service sees it. Frames are only read, never modified: the
 * port may hand over shared skbs.
 */

#include <linux/if_ether.h>
#include <linux/jiffies.h>
#include <linux/skbuff.h>

#include "dev_xport_int.h"

/* The earlier of two deadlines, 0 meaning none. */
static unsigned long xp_earlier(unsigned long a, unsigned long b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return time_before(a, b) ? a : b;
}

/**
 * dray_xp_arm() - set the QP's deadline from what the transport waits for
 * @hw: the device
 * @qp: the QP
 *
 * Responses or an ACK to send: now (the next pass). Out of memory: the
 * next tick. Else the RNR wait or the local ACK timeout, the earlier.
 */
void dray_xp_arm(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_xp_resp *rs = &qp->xp.resp;
	struct dray_xp_req *rq = &qp->xp.req;
	unsigned long now = jiffies, when = 0;

	dray_xp_assert_locked(hw);
	if (qp->xp.err || qp->state == DRAY_QPS_RESET ||
	    qp->state == DRAY_QPS_ERR) {
		dray_hw_qp_set_deadline(qp, 0);
		return;
	}
	if (rs->run || rs->ack_due || rs->nak_due)
		when = now ?: 1;
	if (rq->stall)
		when = xp_earlier(when, (now + 1) ?: 1);
	if (rq->rnr_wait)
		when = xp_earlier(when, rq->rnr_deadline);
	when = xp_earlier(when, rq->rto_deadline);
	when = xp_earlier(when, rq->probe_deadline);
	dray_hw_qp_set_deadline(qp, when);
}

void dray_xport_init(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	memset(&qp->xp, 0, sizeof(qp->xp));
}

/* Forget all transport state but the QP's counters, which outlive it. */
static void xp_clear(struct dray_hw_qp *qp)
{
	struct dray_xp_stats stats = qp->xp.stats;

	dray_hw_qp_set_deadline(qp, 0);
	memset(&qp->xp, 0, sizeof(qp->xp));
	qp->xp.stats = stats;
}

void dray_xport_reset(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	xp_clear(qp);
}

void dray_xport_modify(struct dray_hw *hw, struct dray_hw_qp *qp, u32 mask,
		       u8 old_state)
{
	struct dray_xp_req *rq = &qp->xp.req;

	dray_xp_assert_locked(hw);
	if (dray_hw_qpt_dg(qp->type)) {
		dray_ud_modify(hw, qp, mask, old_state);
		return;
	}
	if (qp->state == old_state) {
		/* Attributes a QP in RTS or SQD may change. */
		if (mask & DRAY_QP_ATTR_RETRY_CNT)
			rq->retry = qp->retry_cnt;
		if (mask & DRAY_QP_ATTR_RNR_RETRY)
			rq->rnr_retry = qp->rnr_retry;
		return;
	}

	switch (qp->state) {
	case DRAY_QPS_RESET:
		dray_xport_reset(hw, qp);
		return;
	case DRAY_QPS_RTR:
		if (old_state == DRAY_QPS_INIT)
			dray_xp_resp_start(qp);
		break;
	case DRAY_QPS_RTS:
		if (old_state == DRAY_QPS_RTR) {
			dray_xp_req_start(qp);
			break;
		}
		if (old_state == DRAY_QPS_SQE)
			dray_xp_req_resume(qp);		/* UC */
		dray_xp_req_send(hw, qp);		/* SQD/SQE: resume */
		break;
	case DRAY_QPS_ERR:
		dray_xport_error(hw, qp);
		return;
	default:
		break;
	}
	dray_xp_arm(hw, qp);
}

struct dray_xp_res *dray_xport_set_rdb(struct dray_hw *hw,
				       struct dray_hw_qp *qp,
				       struct dray_xp_res *rdb, u8 n)
{
	dray_xp_assert_locked(hw);
	return dray_xp_resp_set_rdb(qp, rdb, n);
}

void dray_xport_send(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	if (dray_hw_qpt_dg(qp->type)) {
		dray_ud_send(hw, qp);
		return;
	}
	if (qp->xp.err)
		return;
	switch (qp->state) {
	case DRAY_QPS_SQE:
		/* UC: flush the send queue; the receive side works on. */
		qp->xp.req.cur_valid = false;
		dray_hw_sq_flush(hw, qp, &qp->xp.req.cur_wqe, DRAY_XP_MAX_WQE);
		fallthrough;
	case DRAY_QPS_RTR:
	case DRAY_QPS_RTS:
	case DRAY_QPS_SQD:
		dray_xp_resp_run(hw, qp, true);
		dray_xp_req_send(hw, qp);
		dray_xp_arm(hw, qp);
		break;
	default:
		break;
	}
}

void dray_xport_timer(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	if (dray_hw_qpt_dg(qp->type)) {
		dray_ud_timer(hw, qp);
		return;
	}
	if (!qp->xp.err && qp->state != DRAY_QPS_RESET &&
	    qp->state != DRAY_QPS_INIT && qp->state != DRAY_QPS_ERR) {
		dray_xp_resp_run(hw, qp, true);
		dray_xp_req_timer(hw, qp);
	}
	dray_xp_arm(hw, qp);
}

bool dray_xport_sq_idle(struct dray_hw_qp *qp)
{
	return qp->xp.req.head == qp->xp.req.fetch;
}

void dray_xport_error(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	/*
	 * Fetched WQEs (send and receive) stay uncompleted: the engine
	 * flushes everything from the queues' completed index on.
	 */
	xp_clear(qp);
	qp->xp.err = true;
}

bool dray_xport_want_run(struct dray_hw_qp *qp)
{
	const struct dray_xp_resp *rs = &qp->xp.resp;
	const struct dray_xp_req *rq = &qp->xp.req;

	if (dray_hw_qpt_dg(qp->type))
		return dray_ud_want_run(qp);
	if (qp->xp.err || qp->state < DRAY_QPS_RTR || qp->state > DRAY_QPS_SQE)
		return false;
	if (rs->run || rs->ack_due || rs->nak_due)
		return true;
	if (qp->state == DRAY_QPS_SQE)
		return qp->sq.completed != qp->sq.posted;
	if ((qp->state != DRAY_QPS_RTS && qp->state != DRAY_QPS_SQD) ||
	    rq->rnr_wait || rq->stall ||
	    dray_xp_span(rq->una, rq->psn) >= rq->win.cwnd)
		return false;
	/* Packets of fetched WQEs still to (re)send, if they may go now. */
	if (rq->cur != rq->fetch) {
		const struct dray_xp_swqe *m = dray_xp_wqe(qp, rq->cur);

		return m->state != DRAY_XP_WQE_FAILED &&
		       !dray_xp_req_read_waits(qp, m);
	}
	return !rq->blocked && qp->state == DRAY_QPS_RTS && !qp->sq_draining &&
	       rq->fetch - rq->head < min_t(u32, DRAY_XP_MAX_WQE, qp->sq.depth) &&
	       dray_hw_sq_pending(qp);
}

bool dray_xport_awaiting(const struct dray_hw_qp *qp)
{
	return !qp->xp.err &&
	       (qp->type == DRAY_QPT_RC || qp->type == DRAY_QPT_XRC_INI) &&
	       (qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD) &&
	       qp->xp.req.una != qp->xp.req.max_psn;
}

/* ---- receive: the demultiplexer --------------------------------------- */

/* May a QP in its current state take frames? */
static bool xp_rx_state_ok(const struct dray_hw_qp *qp)
{
	return qp->state == DRAY_QPS_RTR || qp->state == DRAY_QPS_RTS ||
	       qp->state == DRAY_QPS_SQD || qp->state == DRAY_QPS_SQE;
}

/*
 * A request or response of the QP's own service: RC or UC; XRC requests
 * for a target QP, XRC responses for an initiator.
 */
static bool xp_rx_type_ok(const struct dray_hw_qp *qp, u32 flags)
{
	switch (qp->type) {
	case DRAY_QPT_RC:
		return flags & DRAY_OPF_RC;
	case DRAY_QPT_UC:
		return flags & DRAY_OPF_UC;
	case DRAY_QPT_XRC_INI:
		return (flags & DRAY_OPF_XRC) && (flags & DRAY_OPF_RESP);
	case DRAY_QPT_XRC_TGT:
		return (flags & DRAY_OPF_XRC) && (flags & DRAY_OPF_REQ);
	default:
		return false;
	}
}

/* RC, UC: only the connected peer may talk to the QP (by IP addresses). */
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
	crc = dray_xp_crc_skb(skb, rx->pay_off, rx->pay_len + rx->hdr.pad, crc);
	if (skb_copy_bits(skb, end, &wire, sizeof(wire)))
		return false;
	return le32_to_cpu(wire) == dray_icrc_final(crc);
}

/*
 * A UD frame for a multicast group (BTH destination QP 0xffffff): every QP
 * attached gets it, as if sent to it alone; no group, no delivery.
 * Consumes rx->skb.
 */
static void xp_rx_mcast(struct dray_hw *hw, struct dray_xp_rxpkt *rx,
			const u8 *hdrs, const struct dray_wire_l3 *l3,
			u32 hlen, bool internal)
{
	u32 qpns[DRAY_HW_MAX_MCG_QP], n, i;
	struct sk_buff *skb = rx->skb;

	if (!dray_hw_mgid_valid(l3->dgid) ||
	    (!internal && !xp_rx_icrc_ok(skb, hdrs, l3, hlen, rx))) {
		atomic64_inc(&hw->rx_malformed);
		kfree_skb(skb);
		return;
	}
	n = dray_hw_mcast_qpns(hw, l3->dgid, qpns);
	if (!n)
		atomic64_inc(&hw->rx_roce_no_qp);
	for (i = 0; i < n; i++) {
		struct dray_hw_qp *qp = dray_hw_qp_find(hw, qpns[i]);
		struct dray_xp_rxpkt one = *rx;

		if (!qp)
			continue;
		/* dray_ud_rx() only reads the frame and drops its reference. */
		one.skb = skb_get(skb);
		dray_ud_rx(hw, qp, &one, hdrs, l3);
	}
	consume_skb(skb);
}

/**
 * dray_xport_rx() - take a received RoCEv2 frame
 * @hw: the device
 * @skb: the frame, data at the IP header; consumed
 *
 * Validates the frame completely, then gives it to the responder (a
 * request) or the completer (a response) of its QP, or a UD SEND to
 * dray_ud_rx(). Bad frames are dropped and counted: per QP when the QP
 * is known, else per device.
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
	if (!(rx.flags & (DRAY_OPF_RC | DRAY_OPF_UC | DRAY_OPF_UD |
			  DRAY_OPF_XRC)) ||
	    l3.udp_len < hlen + trail)
		goto malformed;
	rx.pay_off = l4 + hlen;
	rx.pay_len = l3.udp_len - hlen - trail;
	if (!(rx.flags & DRAY_OPF_PAYLOAD) && (rx.pay_len || rx.hdr.pad))
		goto malformed;

	/* The port passes on frames for our GIDs and groups only. */
	internal = skb->pkt_type == PACKET_LOOPBACK && skb->dev == hw->ndev;
	if (rx.hdr.qpn == DRAY_HW_QPN_MCAST && (rx.flags & DRAY_OPF_UD)) {
		xp_rx_mcast(hw, &rx, hdrs, &l3, hlen, internal);
		return;
	}
	qp = dray_hw_qp_find(hw, rx.hdr.qpn);
	if (!qp) {
		atomic64_inc(&hw->rx_roce_no_qp);
		goto free;
	}
	if (!internal && !xp_rx_icrc_ok(skb, hdrs, &l3, hlen, &rx)) {
		qp->xp.stats.rx_icrc_errors++;
		goto free;
	}
	if (rx.flags & DRAY_OPF_UD) {
		dray_ud_rx(hw, qp, &rx, hdrs, &l3);
		return;
	}
	if (!xp_rx_type_ok(qp, rx.flags) || !xp_rx_state_ok(qp) ||
	    !xp_rx_from_peer(qp, &l3)) {
		qp->xp.stats.rx_drops++;
		goto free;
	}
	if ((rx.hdr.pkey | DRAY_PKEY_MEMBER) != DRAY_PKEY_DEFAULT) {
		qp->xp.stats.pkey_violations++;
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
	atomic64_inc(&hw->rx_malformed);
free:
	kfree_skb(skb);
}
