// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the unreliable datagram service (see dev_ud.h).
 *
 * Send WQEs are taken in order, one packet each, at most DRAY_UD_BURST
 * per call (the engine calls again while dray_ud_want_run() says so).
 * Unlike RC, a UD send completes before anyone acknowledged it, so its
 * payload is copied into the frame rather than attached as page
 * fragments: the application may reuse the buffer as soon as it sees the
 * completion, while the frame may still wait in a queue of the port.
 * A payload is at most one MTU (4 KiB), so the copy is cheap.
 */

#include <linux/jiffies.h>

#include "dev_xport_int.h"
#include "dev_logic.h"

/* Send WQEs handled per call before the engine looks at other QPs. */
#define DRAY_UD_BURST		64
/* Q_Key bit 31 in a send WQE: use the QP's own Q_Key (IBTA 10.2.4). */
#define DRAY_UD_QKEY_OWN	0x80000000U
/* A UD payload never exceeds the largest MTU. */
#define DRAY_UD_MAX_PAYLOAD	4096

/* The Q_Key a datagram QP receives with: QP1 has the well-known one. */
static u32 ud_qkey(const struct dray_hw_qp *qp)
{
	return qp->type == DRAY_QPT_GSI ? DRAY_HW_GSI_QKEY : qp->qkey;
}

/* The payload bytes a UD packet may carry: the port's active MTU. */
static u32 ud_mtu(struct dray_hw *hw)
{
	return dray_mtu_bytes(dray_hw_port_active_mtu(hw));
}

void dray_ud_modify(struct dray_hw *hw, struct dray_hw_qp *qp, u32 mask,
		    u8 old_state)
{
	struct dray_ud_qp *ud = &qp->ud;

	dray_xp_assert_locked(hw);
	switch (qp->state) {
	case DRAY_QPS_RESET:
		dray_hw_qp_set_deadline(qp, 0);
		memset(ud, 0, sizeof(*ud));
		break;
	case DRAY_QPS_RTS:
		if (old_state == DRAY_QPS_RTR)
			ud->psn = qp->sq_psn & DRAY_PSN_MASK;
		break;
	case DRAY_QPS_ERR:
		dray_hw_qp_set_deadline(qp, 0);
		ud->stall = false;
		break;
	default:
		break;
	}
}

bool dray_ud_want_run(struct dray_hw_qp *qp)
{
	/* SQE: flush what was posted. */
	if (qp->state == DRAY_QPS_SQE)
		return qp->sq.completed != qp->sq.posted;
	/* RTS only (dray_hw_sq_pending()), unless out of memory. */
	return !qp->ud.stall && dray_hw_sq_pending(qp);
}

/*
 * Build and send the packet of fetched WQE @w to @ah. Returns 0, -ENOMEM
 * (nothing sent; try again later), or a DRAY_CQE_ST_* status to
 * complete the WQE with (*verr set).
 */
static int ud_xmit(struct dray_hw *hw, struct dray_hw_qp *qp,
		   const struct dray_hw_swqe *w, const struct dray_hw_path *path,
		   u8 *verr)
{
	const struct dray_sq_wqe *h = &w->hdr;
	u32 qkey = le32_to_cpu(h->u.ud.remote_qkey);
	struct dray_pkt pkt = {
		.opcode = h->opcode == DRAY_WQE_SEND_IMM ?
			  DRAY_OP_UD_SEND_ONLY_IMM : DRAY_OP_UD_SEND_ONLY,
		.se = h->flags & DRAY_WQE_F_SOLICITED,
		.pkey = DRAY_PKEY_DEFAULT,
		.qpn = le32_to_cpu(h->u.ud.remote_qpn),
		.psn = qp->ud.psn,
		.imm = h->imm_data,
		.qkey = qkey & DRAY_UD_QKEY_OWN ? ud_qkey(qp) : qkey,
		.src_qpn = qp->qpn,
	};
	struct sk_buff *skb;
	u8 st;

	/* Copied, not mapped: the WQE completes before the frame is gone. */
	skb = dray_xp_skb_alloc(hw, qp, &pkt, w->length, false);
	if (!skb)
		return -ENOMEM;
	if (w->length) {
		st = dray_hw_sge_gather(hw, qp->pdn, skb, w, 0, w->length,
					false);
		if (st) {
			kfree_skb(skb);
			*verr = DRAY_VERR_LOCAL_SGE;
			return st;
		}
	}
	dray_xp_xmit_path(hw, qp, path, skb);
	qp->ud.psn = dray_psn_add(qp->ud.psn, 1);
	return 0;
}

/*
 * Send the WQE at sq.fetched and complete it. Returns false if it could
 * not be sent for want of memory (nothing changed: try again later).
 */
static bool ud_send_one(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_hw_swqe *w = &qp->ud.wqe;
	const struct dray_hw_path *path = NULL;
	const struct dray_hw_ah *ah;
	u32 index = qp->sq.fetched;
	u8 verr = 0;
	int st;

	st = dray_hw_sq_fetch(hw, qp, index, w);
	if (st) {
		verr = w->vendor_err;
		goto complete;
	}
	if (w->hdr.flags & DRAY_WQE_F_UD_AV) {
		/* The destination is in the WQE (no PD: it names no memory). */
		if (dray_hw_av_resolve(hw, &w->hdr.u.ud_av.av, &qp->ud.av))
			path = &qp->ud.av;
	} else {
		ah = dray_hw_ah_find(hw, le32_to_cpu(w->hdr.u.ud.ah));
		if (ah && ah->pdn == qp->pdn)
			path = &ah->path;
	}
	if (!path) {
		st = DRAY_CQE_ST_LOC_QP_OP_ERR;
		verr = DRAY_VERR_UD_AH;
	} else if (le32_to_cpu(w->hdr.u.ud.remote_qpn) & ~DRAY_QPN_MASK) {
		st = DRAY_CQE_ST_LOC_QP_OP_ERR;
		verr = DRAY_VERR_UD_QPN;
	} else if (w->length > ud_mtu(hw)) {
		st = DRAY_CQE_ST_LOC_LEN_ERR;
		verr = DRAY_VERR_UD_MTU;
	} else {
		st = ud_xmit(hw, qp, w, path, &verr);
		if (st == -ENOMEM)
			return false;
	}
	if (st)
		xp_dbg(hw, qp, "UD send WQE %u failed: status %d, detail %#x\n",
		       index, st, verr);

complete:
	/* An error moves the QP to SQE (dray_hw_sq_complete()). */
	qp->sq.fetched = index + 1;
	dray_hw_sq_complete(hw, qp, w, st, verr);
	return true;
}

void dray_ud_send(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	u32 n;

	dray_xp_assert_locked(hw);
	if (qp->state == DRAY_QPS_SQE) {
		/* Flush what was posted; the engine calls again for more. */
		dray_hw_sq_flush(hw, qp, &qp->ud.wqe, DRAY_UD_BURST);
		return;
	}
	if (qp->ud.stall)
		return;
	for (n = 0; n < DRAY_UD_BURST && dray_hw_sq_pending(qp); n++) {
		if (!ud_send_one(hw, qp)) {
			/* Out of memory: the timer tries again next tick. */
			qp->ud.stall = true;
			dray_hw_qp_set_deadline(qp, (jiffies + 1) ?: 1);
			return;
		}
	}
}

void dray_ud_timer(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	qp->ud.stall = false;
	if (qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQE)
		dray_ud_send(hw, qp);
}

/* May a UD QP in its current state take frames? */
static bool ud_rx_state_ok(const struct dray_hw_qp *qp)
{
	return qp->state == DRAY_QPS_RTR || qp->state == DRAY_QPS_RTS ||
	       qp->state == DRAY_QPS_SQD || qp->state == DRAY_QPS_SQE;
}

/*
 * Place GRH and payload of @rx into the receive WQE @w. Returns a
 * DRAY_CQE_ST_* status; *verr tells why it failed.
 */
static u8 ud_place(struct dray_hw *hw, struct dray_hw_qp *qp,
		   const struct dray_hw_rwqe *w, const struct dray_xp_rxpkt *rx,
		   const u8 *ip, bool ipv6, u8 *verr)
{
	u8 grh[DRAY_GRH_BYTES];
	u8 st;

	if (DRAY_GRH_BYTES + rx->pay_len > w->length) {
		*verr = DRAY_VERR_UD_RECV_LEN;
		return DRAY_CQE_ST_LOC_LEN_ERR;
	}
	dray_wire_grh(ip, ipv6, grh);
	st = dray_hw_sge_scatter(hw, w->pdn, w->sge, w->num_sge, 0, NULL, 0,
				 grh, sizeof(grh));
	if (!st)
		st = dray_hw_sge_scatter(hw, w->pdn, w->sge, w->num_sge,
					 sizeof(grh), rx->skb, rx->pay_off,
					 NULL, rx->pay_len);
	if (st)
		*verr = st == DRAY_CQE_ST_LOC_LEN_ERR ? DRAY_VERR_UD_RECV_LEN :
							DRAY_VERR_UD_RECV_SGE;
	return st;
}

void dray_ud_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		struct dray_xp_rxpkt *rx, const u8 *ip,
		const struct dray_wire_l3 *l3)
{
	const struct dray_pkt *h = &rx->hdr;
	struct dray_hw_rwqe *w = &qp->ud.rwqe;
	struct dray_cqe cqe = {};
	u8 verr = 0;
	int ret;

	dray_xp_assert_locked(hw);

	/* Not for a UD QP able to receive, or a P_Key we are not in. */
	if (!dray_hw_qpt_dg(qp->type) || !ud_rx_state_ok(qp) ||
	    rx->pay_len > DRAY_UD_MAX_PAYLOAD) {
		qp->xp.stats.rx_drops++;
		goto drop;
	}
	if ((h->pkey | DRAY_PKEY_MEMBER) != DRAY_PKEY_DEFAULT) {
		qp->xp.stats.pkey_violations++;
		goto drop;
	}
	/* IBTA 10.2.4: a Q_Key violation drops the packet silently. */
	if (h->qkey != ud_qkey(qp)) {
		qp->xp.stats.qkey_violations++;
		goto drop;
	}
	/* Unreliable: without a receive WQE the message is lost. */
	ret = dray_hw_rq_fetch(hw, qp, w);
	if (ret == -ENOENT) {
		qp->xp.stats.rx_no_wqe++;
		goto drop;
	}
	/* The QP's SRQ is in error: the QP went to ERR, nothing taken. */
	if (ret == -EIO)
		goto drop;
	qp->xp.stats.rx_pkts++;
	qp->xp.stats.rx_bytes += rx->pay_len;

	cqe.opcode = DRAY_CQE_RECV;
	cqe.byte_len = cpu_to_le32(DRAY_GRH_BYTES + rx->pay_len);
	cqe.src_qpn = cpu_to_le32(h->src_qpn);
	cqe.flags = DRAY_CQE_F_GRH | (l3->ipv6 ? DRAY_CQE_F_IPV6 : 0) |
		    (h->se ? DRAY_CQE_F_SOLICITED : 0);
	if (rx->flags & DRAY_OPF_IMM) {
		cqe.imm_data = h->imm;
		cqe.flags |= DRAY_CQE_F_IMM;
	}
	if (ret) {
		cqe.status = DRAY_CQE_ST_LOC_QP_OP_ERR;
		verr = DRAY_VERR_UD_RECV_WQE;
	} else {
		cqe.status = ud_place(hw, qp, w, rx, ip, l3->ipv6, &verr);
	}
	if (cqe.status)
		xp_dbg(hw, qp, "UD receive WQE %u failed: status %u, detail %#x\n",
		       w->index, cqe.status, verr);
	cqe.vendor_err = verr;
	/* An error status moves the QP to ERR. */
	dray_hw_rq_complete(hw, qp, w, &cqe);
	consume_skb(rx->skb);
	return;

drop:
	kfree_skb(rx->skb);
}
