// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the transport's entry points for the engine (see
 * dev_xport.h for the contract) and the per-QP deadline.
 */

#include <linux/jiffies.h>

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
	dray_hw_qp_set_deadline(qp, when);
}

void dray_xport_init(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	memset(&qp->xp, 0, sizeof(qp->xp));
}

void dray_xport_reset(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xp_assert_locked(hw);
	dray_hw_qp_set_deadline(qp, 0);
	memset(&qp->xp, 0, sizeof(qp->xp));
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
		if (old_state == DRAY_QPS_RTR)
			dray_xp_req_start(qp);
		else
			dray_xp_req_send(hw, qp);	/* SQD/SQE: resume */
		break;
	case DRAY_QPS_ERR:
		dray_xport_error(hw, qp);
		return;
	default:
		break;
	}
	dray_xp_arm(hw, qp);
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
	case DRAY_QPS_RTR:
	case DRAY_QPS_RTS:
	case DRAY_QPS_SQD:
	case DRAY_QPS_SQE:
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
	struct dray_xp_stats stats = qp->xp.stats;

	dray_xp_assert_locked(hw);
	/*
	 * Fetched WQEs (send and receive) stay uncompleted: the engine
	 * flushes everything from the queues' completed index on.
	 */
	dray_hw_qp_set_deadline(qp, 0);
	memset(&qp->xp, 0, sizeof(qp->xp));
	qp->xp.err = true;
	qp->xp.stats = stats;
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
	if ((qp->state != DRAY_QPS_RTS && qp->state != DRAY_QPS_SQD) ||
	    rq->rnr_wait || rq->stall ||
	    dray_xp_span(rq->una, rq->psn) >= rq->cwnd)
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
	return !qp->xp.err && qp->type == DRAY_QPT_RC &&
	       (qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD) &&
	       qp->xp.req.una != qp->xp.req.max_psn;
}
