// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the RC completer.
 *
 * It takes the responses to the QP's requests: ACKs and NAKs (AETH), READ
 * responses and atomic ACKs. An ACK acknowledges every request up to its
 * PSN (the responder coalesces); a READ response or an atomic ACK
 * acknowledges every earlier request implicitly. READ response payload is
 * copied straight into the READ's local SGEs (the one copy), the original
 * value of an atomic into its SGE. WQEs complete strictly in order with
 * dray_hw_sq_complete(); the first one that failed completes with its
 * status and takes the QP to ERR.
 *
 * Responses that do not fit (old duplicates, PSNs never sent, a wrong
 * opcode sequence or length) are dropped and counted: the requester's
 * go-back-N and its timer recover whatever they should have said.
 */

#include "dev_trace.h"
#include "dev_xport_int.h"

void dray_xp_comp_fail(struct dray_xp_swqe *m, u8 status, u8 vendor_err)
{
	m->state = DRAY_XP_WQE_FAILED;
	m->status = status;
	m->vendor_err = vendor_err;
}

/**
 * dray_xp_comp_advance() - complete finished WQEs in order
 * @hw: the device
 * @qp: the QP
 *
 * Stops at the first WQE still on the wire. A failed WQE completes with
 * its status and moves the QP to ERR: a send queue completes in order
 * and an error ends it (IBTA vol. 1 10.8).
 */
void dray_xp_comp_advance(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_hw_swqe *d = &rq->done_wqe;

	while (!qp->xp.err && rq->head != rq->fetch) {
		struct dray_xp_swqe *m = dray_xp_wqe(qp, rq->head);

		if (m->state == DRAY_XP_WQE_SENDING)
			return;
		memset(&d->hdr, 0, sizeof(d->hdr));
		d->index = m->index;
		d->hdr.opcode = m->opcode;
		d->hdr.flags = m->flags;
		d->length = m->length;
		d->num_sge = 0;
		if (m->state == DRAY_XP_WQE_FAILED) {
			u8 verr = m->vendor_err;

			xp_dbg(hw, qp, "WQE %u failed: status %u, detail %u\n",
			       m->index, m->status, verr);
			dray_hw_sq_complete(hw, qp, d, m->status, verr);
			if (dray_xp_uc(qp)) {
				/*
				 * The QP is in SQE now (ERR if the CQE could
				 * not be written). The failed WQE was the last
				 * one fetched: the send queue goes on after it.
				 */
				rq->head = rq->fetch;
				rq->cur = rq->fetch;
				rq->cur_pkt = 0;
				rq->cur_valid = false;
				return;
			}
			qp->xp.err = true;
			dray_hw_qp_error(hw, qp, 0, verr);
			return;
		}
		dray_hw_sq_complete(hw, qp, d, DRAY_CQE_ST_SUCCESS, 0);
		rq->rd_atomic -= m->rd_slots;
		rq->head++;
		rq->blocked = false;
	}
}

/* The oldest acknowledged-to PSN moved to @una: progress. */
static void comp_progress(struct dray_hw_qp *qp, u32 una)
{
	struct dray_xp_req *rq = &qp->xp.req;

	if (dray_psn_cmp(una, rq->una) <= 0)
		return;
	dray_cwnd_acked(&rq->win, dray_xp_span(rq->una, una));
	rq->una = una;
	rq->gone_back = false;
	rq->blocked = false;
	/* Acknowledged past the cursor: answers to packets sent earlier. */
	if (dray_psn_cmp(rq->psn, una) < 0)
		dray_xp_req_rewind(qp, una);
	dray_xp_req_rearm(qp);
}

/*
 * The responder processed every request up to and including @psn: mark
 * the WQEs entirely at or before it done. A READ or an atomic is done only
 * by its response; if @psn reaches the part of it still expected, that
 * response was lost (*lost). Returns the new oldest unacknowledged PSN.
 */
static u32 comp_ack_upto(struct dray_hw_qp *qp, u32 psn, bool *lost)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 una = rq->una, i;

	*lost = false;
	for (i = rq->head; i != rq->fetch; i++) {
		struct dray_xp_swqe *m = dray_xp_wqe(qp, i);
		u32 last;

		if (m->state == DRAY_XP_WQE_DONE)
			continue;
		if (m->state == DRAY_XP_WQE_FAILED)
			break;
		if (dray_xp_is_rd_atomic(m->opcode)) {
			*lost = dray_psn_cmp(psn, dray_psn_add(m->psn,
							       m->resp_pkts)) >= 0;
			break;
		}
		last = dray_psn_add(m->psn, m->npkts - 1);
		if (dray_psn_cmp(psn, last) < 0) {
			if (dray_psn_cmp(psn, m->psn) >= 0)
				una = dray_psn_add(psn, 1);
			break;
		}
		m->state = DRAY_XP_WQE_DONE;
		una = dray_psn_add(last, 1);
	}
	return una;
}

/*
 * Go back to the oldest unacknowledged PSN, counting a transport retry.
 * Once gone back, responses still in flight from before say the same
 * again (a READ response stream cut short, NAKs for gaps they left):
 * only progress, or the timer, allows the next retry.
 */
static void comp_go_back(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_xp_swqe *m = dray_xp_req_find(qp, rq->una);

	if (!m || rq->gone_back)
		return;
	if (!rq->retry) {
		xp_dbg(hw, qp, "retries exhausted going back to PSN %#x\n",
		       rq->una);
		dray_xp_comp_fail(m, DRAY_CQE_ST_RETRY_EXC_ERR,
				  DRAY_VERR_RETRY_EXC);
		return;
	}
	rq->retry--;
	rq->gone_back = true;
	dray_cwnd_loss(&rq->win, false);
	trace_dray_retransmit(hw->ndev, qp->qpn, rq->una, DRAY_TRACE_RETX_SEQ,
			      rq->retry);
	dray_xp_req_rewind(qp, rq->una);
}

/* RNR NAK for @psn: wait as asked, then send again from there. */
static void comp_rnr(struct dray_hw *hw, struct dray_hw_qp *qp, u32 psn,
		     u8 timer)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_xp_swqe *m = dray_xp_req_find(qp, psn);
	unsigned long wait;

	if (!m)
		return;
	/* An RNR retry count of 7 means retry for ever (IBTA). */
	if (rq->rnr_retry != 7) {
		if (!rq->rnr_retry) {
			dray_xp_comp_fail(m, DRAY_CQE_ST_RNR_RETRY_EXC_ERR,
					  DRAY_VERR_RNR_EXC);
			return;
		}
		rq->rnr_retry--;
	}
	dray_xp_req_rewind(qp, psn);
	wait = max(usecs_to_jiffies(dray_wire_rnr_us(timer)), 1UL);
	trace_dray_rnr_wait(hw->ndev, qp->qpn, psn, dray_wire_rnr_us(timer),
			    rq->rnr_retry);
	rq->rnr_wait = true;
	rq->rnr_deadline = (jiffies + wait) ?: 1;
	rq->rto_deadline = 0;
	rq->probe_deadline = 0;
}

/* A NAK that ends the WQE holding @psn with @status. */
static void comp_nak_fatal(struct dray_hw_qp *qp, u32 psn, u8 status,
			   u8 verr)
{
	struct dray_xp_swqe *m = dray_xp_req_find(qp, psn);

	if (!m) {
		qp->xp.stats.bad_responses++;
		return;
	}
	dray_xp_comp_fail(m, status, verr);
}

/* An ACK or NAK: the requester's side of IBTA vol. 1 9.7.5. */
static void comp_aeth(struct dray_hw *hw, struct dray_hw_qp *qp,
		      const struct dray_xp_rxpkt *rx)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 psn = rx->hdr.psn;
	u8 syn = rx->hdr.syndrome;
	bool lost;
	u32 una;

	/* Older than una: a duplicate or late ACK, nothing new in it. */
	if (dray_psn_cmp(psn, rq->una) < 0)
		return;
	/* It must name a PSN that was sent. */
	if (dray_psn_cmp(psn, rq->max_psn) >= 0) {
		qp->xp.stats.bad_responses++;
		return;
	}

	if ((syn & DRAY_AETH_TYPE_MASK) == DRAY_AETH_ACK) {
		una = comp_ack_upto(qp, psn, &lost);
		comp_progress(qp, una);
		if (lost)
			comp_go_back(hw, qp);
		return;
	}
	if ((syn & DRAY_AETH_TYPE_MASK) != DRAY_AETH_RNR_NAK &&
	    (syn & DRAY_AETH_TYPE_MASK) != DRAY_AETH_NAK) {
		qp->xp.stats.bad_responses++;
		return;
	}

	if (dray_xp_count_nak(qp, syn, false))
		trace_dray_nak_rx(hw->ndev, qp->qpn, psn, syn);
	/* A NAK acknowledges every request before its PSN. */
	una = comp_ack_upto(qp, dray_psn_add(psn, DRAY_PSN_MASK), &lost);
	comp_progress(qp, una);
	if (lost) {
		comp_go_back(hw, qp);
		return;
	}
	if ((syn & DRAY_AETH_TYPE_MASK) == DRAY_AETH_RNR_NAK) {
		comp_rnr(hw, qp, psn, syn & DRAY_AETH_VALUE_MASK);
		return;
	}
	switch (syn & DRAY_AETH_VALUE_MASK) {
	case DRAY_NAK_PSN_SEQ:
		comp_go_back(hw, qp);
		break;
	case DRAY_NAK_INV_REQ:
	case DRAY_NAK_INV_RD_REQ:
		comp_nak_fatal(qp, psn, DRAY_CQE_ST_REM_INV_REQ_ERR,
			       DRAY_VERR_NAK_INV_REQ);
		break;
	case DRAY_NAK_REM_ACCESS:
		comp_nak_fatal(qp, psn, DRAY_CQE_ST_REM_ACCESS_ERR,
			       DRAY_VERR_NAK_REM_ACCESS);
		break;
	case DRAY_NAK_REM_OP:
		comp_nak_fatal(qp, psn, DRAY_CQE_ST_REM_OP_ERR,
			       DRAY_VERR_NAK_REM_OP);
		break;
	default:
		qp->xp.stats.bad_responses++;
		break;
	}
}

/* The oldest READ or atomic not done; NULL if a failed WQE comes first. */
static struct dray_xp_swqe *comp_first_rd_atomic(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 i;

	for (i = rq->head; i != rq->fetch; i++) {
		struct dray_xp_swqe *m = dray_xp_wqe(qp, i);

		if (m->state == DRAY_XP_WQE_FAILED)
			return NULL;
		if (m->state == DRAY_XP_WQE_SENDING &&
		    dray_xp_is_rd_atomic(m->opcode))
			return m;
	}
	return NULL;
}

/* A response for @m came: every earlier request is done (implied ACK). */
static void comp_done_before(struct dray_hw_qp *qp,
			     const struct dray_xp_swqe *m)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 i;

	for (i = rq->head; i != m->index; i++) {
		struct dray_xp_swqe *t = dray_xp_wqe(qp, i);

		if (t->state == DRAY_XP_WQE_SENDING)
			t->state = DRAY_XP_WQE_DONE;
	}
}

/* Make comp_wqe hold @m's WQE, to place its response. */
static u8 comp_load(struct dray_hw *hw, struct dray_hw_qp *qp,
		    const struct dray_xp_swqe *m, u8 *verr)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_hw_swqe *w = &rq->comp_wqe;
	int st;

	if (rq->comp_valid && rq->comp_index == m->index)
		return DRAY_CQE_ST_SUCCESS;
	rq->comp_valid = false;
	st = dray_hw_sq_fetch(hw, qp, m->index, w);
	if (st) {
		*verr = DRAY_VERR_BAD_WQE;
		return st;
	}
	if (w->hdr.opcode != m->opcode || w->length != m->length) {
		*verr = DRAY_VERR_WQE_CHANGED;
		return DRAY_CQE_ST_LOC_QP_OP_ERR;
	}
	rq->comp_valid = true;
	rq->comp_index = m->index;
	return DRAY_CQE_ST_SUCCESS;
}

/*
 * Find the READ or atomic a response with @psn is for. Returns it when
 * @psn is the PSN it expects next; NULL when the response is a duplicate
 * (dropped) or shows earlier responses lost (go-back-N started).
 */
static struct dray_xp_swqe *comp_match(struct dray_hw *hw,
				       struct dray_hw_qp *qp, u32 psn,
				       bool is_read)
{
	struct dray_xp_swqe *m = comp_first_rd_atomic(qp);
	u32 expect;
	s32 d;

	if (!m) {
		qp->xp.stats.bad_responses++;
		return NULL;
	}
	expect = dray_psn_add(m->psn, m->resp_pkts);
	d = dray_psn_cmp(psn, expect);
	if (d < 0)
		return NULL;
	/*
	 * It must answer a request that was sent: a READ asks piece by
	 * piece, and a response for a piece not asked for yet would move
	 * the oldest unacknowledged PSN past the newest one sent.
	 */
	if (dray_psn_cmp(psn, qp->xp.req.max_psn) >= 0) {
		qp->xp.stats.bad_responses++;
		return NULL;
	}
	if (d > 0) {
		/* The responder answered past @m: its response was lost. */
		comp_done_before(qp, m);
		comp_progress(qp, expect);
		comp_go_back(hw, qp);
		return NULL;
	}
	/* A READ response for an atomic or the other way round. */
	if (dray_xp_is_read_answered(m->opcode) ? !is_read : is_read) {
		qp->xp.stats.bad_responses++;
		return NULL;
	}
	return m;
}

/* An RDMA READ response packet: placed in PSN order only. */
static void comp_read_resp(struct dray_hw *hw, struct dray_hw_qp *qp,
			   const struct dray_xp_rxpkt *rx)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 mtu = dray_xp_mtu(qp);
	u32 psn = rx->hdr.psn, want, end;
	struct dray_xp_swqe *m;
	u8 st, verr = 0;

	m = comp_match(hw, qp, psn, true);
	if (!m)
		return;
	/*
	 * The last response packet ends the READ (last or only). Any other
	 * is first or middle, or last or only where a request for part of
	 * the READ ends (the requester asks piece by piece; after
	 * retransmissions the request answered need not be the one sent
	 * last). PSN and length fix the data, whichever request the packet
	 * answers.
	 */
	end = m->resp_pkts + 1 == m->npkts ? DRAY_OPF_END : 0;
	/* ATOMIC_WRITE and FLUSH: one READ response Only, no payload. */
	want = m->opcode == DRAY_WQE_RDMA_READ ?
	       dray_wire_seg_len(m->length, mtu, m->resp_pkts) : 0;
	if ((end && !(rx->flags & DRAY_OPF_END)) ||
	    ((rx->flags & DRAY_OPF_AETH) &&
	     (rx->hdr.syndrome & DRAY_AETH_TYPE_MASK) != DRAY_AETH_ACK) ||
	    rx->pay_len != want) {
		qp->xp.stats.bad_responses++;
		return;
	}

	st = comp_load(hw, qp, m, &verr);
	if (!st && want) {
		st = dray_hw_sge_scatter(hw, qp->pdn, rq->comp_wqe.sge,
					 rq->comp_wqe.num_sge,
					 (u64)m->resp_pkts * mtu, rx->skb,
					 rx->pay_off, NULL, want);
		verr = DRAY_VERR_LOCAL_SGE;
	}
	comp_done_before(qp, m);
	if (st) {
		dray_xp_comp_fail(m, st, verr);
		return;
	}
	m->resp_pkts++;
	if (end)
		m->state = DRAY_XP_WQE_DONE;
	comp_progress(qp, dray_psn_add(psn, 1));
}

/* An atomic ACK: the original value goes into the atomic's SGE. */
static void comp_atomic_ack(struct dray_hw *hw, struct dray_hw_qp *qp,
			    const struct dray_xp_rxpkt *rx)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u64 orig = rx->hdr.orig;	/* host order, as the application reads */
	struct dray_xp_swqe *m;
	u8 st, verr = 0;

	m = comp_match(hw, qp, rx->hdr.psn, false);
	if (!m)
		return;
	if ((rx->hdr.syndrome & DRAY_AETH_TYPE_MASK) != DRAY_AETH_ACK) {
		qp->xp.stats.bad_responses++;
		return;
	}
	st = comp_load(hw, qp, m, &verr);
	if (!st) {
		st = dray_hw_sge_scatter(hw, qp->pdn, rq->comp_wqe.sge,
					 rq->comp_wqe.num_sge, 0, NULL, 0,
					 &orig, sizeof(orig));
		verr = DRAY_VERR_LOCAL_SGE;
	}
	comp_done_before(qp, m);
	if (st) {
		dray_xp_comp_fail(m, st, verr);
		return;
	}
	m->resp_pkts = 1;
	m->state = DRAY_XP_WQE_DONE;
	comp_progress(qp, dray_psn_add(rx->hdr.psn, 1));
}

/**
 * dray_xp_comp_rx() - a response for this QP's requests
 * @hw: the device
 * @qp: the QP
 * @rx: the packet (validated by dray_xport_rx())
 *
 * Completes what it finishes, then lets the requester use the window
 * that opened or resend from where the response said.
 */
void dray_xp_comp_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_xp_rxpkt *rx)
{
	if ((qp->state != DRAY_QPS_RTS && qp->state != DRAY_QPS_SQD &&
	     qp->state != DRAY_QPS_SQE) || qp->xp.err) {
		qp->xp.stats.rx_drops++;
		return;
	}

	switch (dray_wire_op(rx->hdr.opcode)) {
	case DRAY_OP_ACK:
		comp_aeth(hw, qp, rx);
		break;
	case DRAY_OP_ATOMIC_ACK:
		comp_atomic_ack(hw, qp, rx);
		break;
	default:
		comp_read_resp(hw, qp, rx);
		break;
	}
	dray_xp_comp_advance(hw, qp);
	dray_xp_req_send(hw, qp);
}
