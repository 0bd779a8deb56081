// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: QUERY_STATE, the device's own state of a QP, a CQ or
 * an MR for diagnostics (the driver shows it in `rdma resource show`).
 * Read-only: a snapshot under engine.lock, which every pass holds while
 * it changes what is read here.
 *
 * Context: admin command (process context, engine.admin_lock).
 */

#include <linux/string.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_obj.h"
#include "dev_wq.h"

static bool diag_qp(struct dray_hw *hw, u32 qpn, struct dray_qp_state_out *o)
{
	const struct dray_xp_resp *rs;
	const struct dray_xp_req *rq;
	struct dray_hw_qp *qp;

	qp = dray_hw_qp_find(hw, qpn);
	if (!qp)
		return false;
	rq = &qp->xp.req;
	rs = &qp->xp.resp;
	o->state = qp->state;
	o->type = qp->type;
	o->flags = (qp->xp.err ? DRAY_QPST_F_ERR : 0) |
		   (rq->rnr_wait ? DRAY_QPST_F_RNR_WAIT : 0) |
		   (qp->sq_draining ? DRAY_QPST_F_SQ_DRAINING : 0) |
		   (rs->in_msg ? DRAY_QPST_F_IN_MSG : 0) |
		   (rs->nak_sent ? DRAY_QPST_F_NAK_SENT : 0);
	o->retry_left = rq->retry;
	o->rnr_retry_left = rq->rnr_retry;
	o->rd_atomic = rq->rd_atomic;
	o->sq_posted = cpu_to_le32(qp->sq.posted);
	o->sq_fetched = cpu_to_le32(qp->sq.fetched);
	o->sq_completed = cpu_to_le32(qp->sq.completed);
	o->rq_posted = cpu_to_le32(qp->rq.posted);
	o->rq_fetched = cpu_to_le32(qp->rq.fetched);
	o->rq_completed = cpu_to_le32(qp->rq.completed);
	o->next_psn = cpu_to_le32(rq->psn);
	o->una_psn = cpu_to_le32(rq->una);
	o->max_psn = cpu_to_le32(rq->max_psn);
	o->epsn = cpu_to_le32(rs->epsn);
	o->msn = cpu_to_le32(rs->msn);
	o->counter_set = cpu_to_le32(qp->cset);
	o->cwnd = cpu_to_le32(rq->win.cwnd);
	o->ssthresh = cpu_to_le32(rq->win.ssthresh);
	return true;
}

static bool diag_cq(struct dray_hw *hw, u32 cqn, struct dray_cq_state_out *o)
{
	const struct dray_hw_cq *cq = xa_load(&hw->engine.cqs, cqn);

	if (!cq)
		return false;
	o->depth = cpu_to_le32(cq->depth);
	o->pi = cpu_to_le32(cq->pi);
	o->ci = cpu_to_le32(cq->ci_seen);
	o->eqn = cpu_to_le32(cq->eqn);
	o->armed = le32_to_cpu(READ_ONCE(cq->db->arm_seq)) !=
		   cq->arm_seq_seen;
	o->error = cq->error;
	o->users = cpu_to_le32(cq->users);
	return true;
}

static bool diag_mr(struct dray_hw *hw, u32 key, struct dray_mr_state_out *o)
{
	const struct dray_hw_mr *mr;

	mr = xa_load(&hw->engine.mrs, dray_hw_mr_index(key));
	if (!mr)
		return false;
	o->key = cpu_to_le32(mr->key);
	o->pdn = cpu_to_le32(mr->pdn);
	o->state = mr->state == DRAY_HW_MR_VALID ? DRAY_MR_STATE_VALID :
		   DRAY_MR_STATE_FREE;
	o->access = mr->access;
	o->flags = mr->flags;
	o->mw_type = mr->mw_type;
	o->n_pages = cpu_to_le32(mr->n_pages);
	o->iova = cpu_to_le64(mr->iova);
	o->length = cpu_to_le64(mr->length);
	o->windows = cpu_to_le32(mr->windows);
	return true;
}

void dray_hw_cmd_query_state(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res)
{
	const struct dray_cmd_query_id *cmd = &e->u.query_id;
	u32 id = le32_to_cpu(cmd->id);
	struct dray_obj_state out = {};
	u32 syndrome;
	bool found;

	if (!dray_hw_query_id_ok(cmd, res))
		return;
	mutex_lock(&hw->engine.admin_lock);
	dray_hw_engine_lock(hw);
	switch (cmd->kind) {
	case DRAY_STATE_QP:
		found = diag_qp(hw, id, &out.qp);
		syndrome = DRAY_AQ_SYN_QPN;
		break;
	case DRAY_STATE_CQ:
		found = diag_cq(hw, id, &out.cq);
		syndrome = DRAY_AQ_SYN_CQN;
		break;
	case DRAY_STATE_MR:
		found = diag_mr(hw, id, &out.mr);
		syndrome = DRAY_AQ_SYN_MR_KEY;
		break;
	default:
		found = false;
		syndrome = DRAY_AQ_SYN_SCOPE;
		break;
	}
	dray_hw_engine_unlock(hw);
	mutex_unlock(&hw->engine.admin_lock);
	if (!found) {
		dray_aq_fail(res, syndrome == DRAY_AQ_SYN_SCOPE ?
			     DRAY_AQ_STS_BAD_PARAM : DRAY_AQ_STS_NOT_FOUND,
			     syndrome);
		return;
	}
	dray_hw_mailbox_out(hw, le64_to_cpu(cmd->out_addr),
			    le32_to_cpu(cmd->out_len), &out, sizeof(out), res);
}
