// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: queue pairs as objects. The admin commands that create,
 * modify (the IBTA state machine of dev_qp_fsm.c, then the attribute
 * values), query and destroy them, and the QP table.
 *
 * Context: admin commands (process), under engine.admin_lock; they take
 * engine.lock around publishing, changing and unpublishing a QP, so a
 * pass sees a QP whole or not at all. What passes do with a QP's queues
 * is dev_wq.c.
 */

#include <linux/etherdevice.h>
#include <linux/list.h>
#include <linux/slab.h>

#include "dev.h"
#include "dev_ah.h"
#include "dev_cmd.h"
#include "dev_logic.h"
#include "dev_mcast.h"
#include "dev_mem.h"
#include "dev_obj.h"
#include "dev_qp_fsm.h"
#include "dev_srq.h"
#include "dev_trace.h"
#include "dev_wq.h"
#include "dev_xport.h"

#define QPA(x)	DRAY_QP_ATTR_##x

/* Largest WQE strides: header plus every SGE or the largest inline data. */
#define DRAY_SQ_LOG_STRIDE_MIN	6
#define DRAY_SQ_LOG_STRIDE_MAX	9
#define DRAY_RQ_LOG_STRIDE_MIN	4
#define DRAY_RQ_LOG_STRIDE_MAX	9
static_assert(DRAY_SQ_WQE_HDR_SIZE +
	      DRAY_HW_MAX_SGE * DRAY_SGE_SIZE <= 1 << DRAY_SQ_LOG_STRIDE_MAX);
static_assert(DRAY_SQ_WQE_HDR_SIZE + DRAY_HW_MAX_INLINE <=
	      1 << DRAY_SQ_LOG_STRIDE_MAX);
static_assert(DRAY_RQ_WQE_HDR_SIZE +
	      DRAY_HW_MAX_SGE * DRAY_SGE_SIZE <= 1 << DRAY_RQ_LOG_STRIDE_MAX);

/* Copy the mailbox of a QP command (exactly @size bytes) once. */
static bool qp_mailbox_in(struct dray_hw *hw, const struct dray_cmd_qp *cmd,
			  void *dst, size_t size, struct dray_aq_result *res)
{
	return dray_hw_mailbox_in(hw, le64_to_cpu(cmd->addr),
				  le32_to_cpu(cmd->len), dst, size, res);
}

/* Bytes of a work queue buffer: doorbell record and ring. */
static u32 wq_pages(u8 log_depth, u8 log_stride)
{
	return DIV_ROUND_UP(DRAY_QUEUE_HDR_SIZE +
			    ((u32)1 << (log_depth + log_stride)),
			    DRAY_PAGE_SIZE);
}

/* An RQ of its own: not on an SRQ, not XRC (which receives through SRQs). */
static bool qp_has_rq(const struct dray_qp_create *c)
{
	return !(c->flags & DRAY_QP_F_SRQ) && !dray_hw_qpt_xrc(c->type);
}

/*
 * An XRC target QP has nothing but its domain (and the UAR every QP
 * names); an XRC initiator has no receive side. Other QPs no domain.
 */
static int qp_create_xrc_params(const struct dray_qp_create *c, u32 *syndrome)
{
	bool tgt = c->type == DRAY_QPT_XRC_TGT;

	*syndrome = DRAY_AQ_SYN_XRCDN;
	if (tgt != !!c->xrcdn)
		return DRAY_AQ_STS_BAD_PARAM;
	if (c->type == DRAY_QPT_XRC_INI) {
		*syndrome = DRAY_AQ_SYN_CQN;
		if (c->recv_cqn)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_SRQN;
		if (c->flags & DRAY_QP_F_SRQ)
			return DRAY_AQ_STS_BAD_PARAM;
	}
	if (!tgt)
		return DRAY_AQ_STS_OK;
	*syndrome = DRAY_AQ_SYN_FLAGS;
	if (c->flags)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_PDN;
	if (c->pdn)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_CQN;
	if (c->send_cqn || c->recv_cqn)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
	if (c->sq_log_depth || c->sq_log_stride || c->sq_n_pages || c->sq_mtt)
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

/* Check the parts of a CREATE_QP mailbox that need no lookup. */
static int qp_create_params(const struct dray_qp_create *c, u32 *syndrome)
{
	u8 max_log_depth = ilog2(DRAY_HW_MAX_QP_WR);
	int status;

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (c->reserved || memchr_inv(c->reserved2, 0, sizeof(c->reserved2)))
		return DRAY_AQ_STS_BAD_PARAM;
	/* On an SRQ the QP has no receive queue of its own. */
	*syndrome = DRAY_AQ_SYN_SRQN;
	if (!(c->flags & DRAY_QP_F_SRQ) && c->srqn)
		return DRAY_AQ_STS_BAD_PARAM;
	if (!qp_has_rq(c) &&
	    (c->rq_log_depth || c->rq_log_stride || c->rq_n_pages ||
	     c->rq_mtt))
		return DRAY_AQ_STS_BAD_PARAM;
	/* RC, UC, both XRC types, UD and GSI (QP1). */
	*syndrome = DRAY_AQ_SYN_QP_TYPE;
	if (!dray_hw_qpt_conn(c->type) && !dray_hw_qpt_dg(c->type))
		return DRAY_AQ_STS_BAD_PARAM;
	status = qp_create_xrc_params(c, syndrome);
	if (status || c->type == DRAY_QPT_XRC_TGT)
		return status;
	*syndrome = DRAY_AQ_SYN_FLAGS;
	if (c->flags & ~(DRAY_QP_F_SQ_SIG_ALL | DRAY_QP_F_PRIV |
			 DRAY_QP_F_SRQ))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
	if (c->sq_log_depth > max_log_depth || c->rq_log_depth > max_log_depth)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_STRIDE;
	if (c->sq_log_stride < DRAY_SQ_LOG_STRIDE_MIN ||
	    c->sq_log_stride > DRAY_SQ_LOG_STRIDE_MAX)
		return DRAY_AQ_STS_BAD_PARAM;
	if (qp_has_rq(c) &&
	    (c->rq_log_stride < DRAY_RQ_LOG_STRIDE_MIN ||
	     c->rq_log_stride > DRAY_RQ_LOG_STRIDE_MAX))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
	if (le32_to_cpu(c->sq_n_pages) <
		wq_pages(c->sq_log_depth, c->sq_log_stride))
		return DRAY_AQ_STS_BAD_PARAM;
	if (qp_has_rq(c) &&
	    le32_to_cpu(c->rq_n_pages) <
		wq_pages(c->rq_log_depth, c->rq_log_stride))
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

/* Map a work queue's buffer (only the pages its ring needs). */
static int wq_map(struct dray_hw *hw, struct dray_hw_wq *wq, u64 mtt,
		  u8 log_depth, u8 log_stride, u32 *syndrome)
{
	int status;

	status = dray_hw_buf_map(hw, mtt, wq_pages(log_depth, log_stride),
				 &wq->buf, syndrome);
	if (status)
		return status;
	wq->db = wq->buf.vaddr;
	wq->ring = wq->buf.vaddr + DRAY_QUEUE_HDR_SIZE;
	wq->depth = 1U << log_depth;
	wq->log_stride = log_stride;
	return DRAY_AQ_STS_OK;
}

static bool uar_valid(struct dray_hw *hw, u32 uar_index)
{
	bool valid;

	if (uar_index >= DRAY_HW_MAX_UAR)
		return false;
	spin_lock_bh(&hw->obj_lock);
	valid = hw->uars[uar_index].page;
	spin_unlock_bh(&hw->obj_lock);
	return valid;
}

static void qp_free(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_hw_buf_unmap(&qp->sq.buf);
	dray_hw_buf_unmap(&qp->rq.buf);
	kfree(qp->rdb);
	kfree(qp);
}

/*
 * Look up and take the PD, CQs, UAR and SRQ or XRC domain a new QP uses
 * (an XRC target QP has neither PD nor CQs, an XRC initiator no receive
 * CQ). admin_lock held.
 */
static int qp_attach(struct dray_hw *hw, struct dray_hw_qp *qp,
		     const struct dray_qp_create *c, u32 *syndrome)
{
	struct dray_hw_engine *eng = &hw->engine;
	bool tgt = c->type == DRAY_QPT_XRC_TGT;

	lockdep_assert_held(&eng->admin_lock);

	*syndrome = DRAY_AQ_SYN_PDN;
	if (!tgt && !xa_load(&eng->pds, qp->pdn))
		return DRAY_AQ_STS_NOT_FOUND;
	*syndrome = DRAY_AQ_SYN_CQN;
	if (!tgt) {
		qp->send_cq = xa_load(&eng->cqs, le32_to_cpu(c->send_cqn));
		if (!qp->send_cq)
			return DRAY_AQ_STS_NOT_FOUND;
	}
	if (!dray_hw_qpt_xrc(c->type)) {
		qp->recv_cq = xa_load(&eng->cqs, le32_to_cpu(c->recv_cqn));
		if (!qp->recv_cq)
			return DRAY_AQ_STS_NOT_FOUND;
	}
	*syndrome = DRAY_AQ_SYN_UAR_INDEX;
	if (!uar_valid(hw, qp->uar_index))
		return DRAY_AQ_STS_NOT_FOUND;
	if (tgt) {
		*syndrome = DRAY_AQ_SYN_XRCDN;
		qp->xrcdn = le32_to_cpu(c->xrcdn);
		if (!dray_hw_xrcd_get(hw, qp->xrcdn))
			return DRAY_AQ_STS_NOT_FOUND;
		return DRAY_AQ_STS_OK;
	}
	if (c->flags & DRAY_QP_F_SRQ) {
		*syndrome = DRAY_AQ_SYN_SRQN;
		qp->srq = dray_hw_srq_get(hw, le32_to_cpu(c->srqn));
		if (!qp->srq)
			return DRAY_AQ_STS_NOT_FOUND;
	}

	dray_hw_pd_get(hw, qp->pdn);
	qp->send_cq->users++;
	if (qp->recv_cq)
		qp->recv_cq->users++;
	return DRAY_AQ_STS_OK;
}

static void qp_detach(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	if (qp->type == DRAY_QPT_XRC_TGT) {
		dray_hw_xrcd_put(hw, qp->xrcdn);
		return;
	}
	if (qp->srq)
		dray_hw_srq_put(hw, qp->srq);
	dray_hw_pd_put(hw, qp->pdn);
	qp->send_cq->users--;
	if (qp->recv_cq)
		qp->recv_cq->users--;
}

void dray_hw_cmd_create_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_qp_create c;
	struct dray_hw_qp *qp;
	u32 syndrome, qpn;
	int status, ret;

	if (cmd->qpn) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_QPN);
		return;
	}
	if (!qp_mailbox_in(hw, cmd, &c, sizeof(c), res))
		return;
	status = qp_create_params(&c, &syndrome);
	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}

	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	qp->type = c.type;
	qp->state = DRAY_QPS_RESET;
	qp->flags = c.flags;
	qp->pdn = le32_to_cpu(c.pdn);
	qp->uar_index = le32_to_cpu(c.uar_index);
	qp->path_mtu = DRAY_MTU_1024;
	INIT_LIST_HEAD(&qp->active);

	if (c.type != DRAY_QPT_XRC_TGT) {
		status = wq_map(hw, &qp->sq, le64_to_cpu(c.sq_mtt),
				c.sq_log_depth, c.sq_log_stride, &syndrome);
		if (status)
			goto free_qp;
	}
	if (qp_has_rq(&c)) {
		status = wq_map(hw, &qp->rq, le64_to_cpu(c.rq_mtt),
				c.rq_log_depth, c.rq_log_stride, &syndrome);
		if (status)
			goto free_qp;
	}

	mutex_lock(&eng->admin_lock);
	status = qp_attach(hw, qp, &c, &syndrome);
	if (status)
		goto unlock;
	/* Reserve the QPN; the QP is published below, under engine.lock. */
	if (c.type == DRAY_QPT_GSI) {
		/* QP1 exists once per port. */
		qpn = DRAY_HW_QPN_GSI;
		ret = xa_insert(&eng->qps, qpn, NULL, GFP_KERNEL);
	} else {
		ret = xa_alloc_cyclic(&eng->qps, &qpn, NULL,
				      XA_LIMIT(DRAY_HW_QPN_FIRST,
					       DRAY_HW_QPN_FIRST +
					       DRAY_HW_MAX_QP - 1),
				      &eng->qpn_next, GFP_KERNEL);
	}
	if (ret < 0) {
		qp_detach(hw, qp);
		status = dray_aq_alloc_status(ret);
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	qp->qpn = qpn;
	dray_hw_wq_clear_consumer(&qp->sq);
	dray_hw_wq_clear_consumer(&qp->rq);
	dray_hw_engine_lock(hw);
	dray_xport_init(hw, qp);
	xa_store(&eng->qps, qpn, qp, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	res->result = qpn;
	return;

unlock:
	mutex_unlock(&eng->admin_lock);
free_qp:
	qp_free(hw, qp);
	dray_aq_fail(res, status, syndrome);
}

/* Back to RESET: forget all work, no completions. engine.lock held. */
static void qp_reset(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	lockdep_assert_held(&hw->engine.lock);
	dray_xport_reset(hw, qp);
	list_del_init(&qp->active);
	qp->sq.fetched = 0;
	qp->sq.completed = 0;
	qp->sq.posted = 0;
	qp->sq.db_consumer = 0;
	qp->rq.fetched = 0;
	qp->rq.completed = 0;
	qp->rq.posted = 0;
	qp->srq_last_wqe = false;
	qp->xrc_srqn = 0;
	qp->xrc_serial = 0;
	dray_hw_wq_clear_consumer(&qp->sq);
	dray_hw_wq_clear_consumer(&qp->rq);
	qp->deadline = 0;
	qp->sq_draining = false;
	qp->err_pending = false;
	qp->db_broken = false;
}

void dray_hw_cmd_destroy_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	u32 qpn = le32_to_cpu(cmd->qpn);
	struct dray_hw_qp *qp;

	/* No mailbox: len and addr are ignored. */
	mutex_lock(&eng->admin_lock);
	dray_hw_engine_lock(hw);
	qp = xa_erase(&eng->qps, qpn);
	if (qp) {
		qp_reset(hw, qp);
		dray_hw_cset_qp_gone(hw, qp);
	}
	dray_hw_engine_unlock(hw);
	if (qp) {
		qp_detach(hw, qp);
		dray_hw_mcast_qp_gone(hw, qpn);
	}
	mutex_unlock(&eng->admin_lock);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_QPN);
		return;
	}
	qp_free(hw, qp);
}

bool dray_hw_uar_in_use(struct dray_hw *hw, u32 uar_index)
{
	struct dray_hw_qp *qp;
	unsigned long qpn;
	bool used = false;

	mutex_lock(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.qps, qpn, qp) {
		if (qp->uar_index == uar_index) {
			used = true;
			break;
		}
	}
	mutex_unlock(&hw->engine.admin_lock);
	return used;
}

/* Check the values of the attributes in @mask (not their presence). */
static int qp_attr_values(struct dray_hw *hw, const struct dray_qp_attr *a,
			  u32 mask, u32 *syndrome)
{
	*syndrome = DRAY_AQ_SYN_QP_ATTR;
	if ((mask & QPA(ACCESS_FLAGS)) && (a->access & ~DRAY_ACCESS_ALL))
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(PATH_MTU)) &&
	    (a->path_mtu < DRAY_MTU_256 || a->path_mtu > dray_hw_port_active_mtu(hw)))
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(TIMEOUT)) && a->timeout > 31)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(RETRY_CNT)) && a->retry_cnt > 7)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(RNR_RETRY)) && a->rnr_retry > 7)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MAX_QP_RD_ATOMIC)) &&
	    a->max_rd_atomic > DRAY_HW_MAX_RD_ATOM)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MAX_DEST_RD_ATOMIC)) &&
	    a->max_dest_rd_atomic > DRAY_HW_MAX_RD_ATOM)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(DEST_QPN)) &&
	    le32_to_cpu(a->dest_qpn) & ~DRAY_QPN_MASK)
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

/* Store the attributes of @mask (already checked). */
static void qp_attr_apply(struct dray_hw_qp *qp, const struct dray_qp_attr *a,
			  u32 mask, const struct dray_hw_path *path)
{
	if (mask & QPA(ACCESS_FLAGS))
		qp->access = a->access & (DRAY_ACCESS_REMOTE_WRITE |
					  DRAY_ACCESS_REMOTE_READ |
					  DRAY_ACCESS_REMOTE_ATOMIC);
	if (mask & QPA(QKEY))
		qp->qkey = le32_to_cpu(a->qkey);
	if (mask & QPA(PATH_MTU))
		qp->path_mtu = a->path_mtu;
	if (mask & QPA(TIMEOUT))
		qp->timeout = a->timeout;
	if (mask & QPA(RETRY_CNT))
		qp->retry_cnt = a->retry_cnt;
	if (mask & QPA(RNR_RETRY))
		qp->rnr_retry = a->rnr_retry;
	if (mask & QPA(MIN_RNR_TIMER))
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & QPA(MAX_QP_RD_ATOMIC))
		qp->max_rd_atomic = a->max_rd_atomic;
	/* PSNs are 24 bits; the upper bits are ignored, as IBTA HCAs do. */
	if (mask & QPA(RQ_PSN))
		qp->rq_psn = le32_to_cpu(a->rq_psn) & DRAY_PSN_MASK;
	if (mask & QPA(SQ_PSN))
		qp->sq_psn = le32_to_cpu(a->sq_psn) & DRAY_PSN_MASK;
	if (mask & QPA(DEST_QPN))
		qp->dest_qpn = le32_to_cpu(a->dest_qpn);
	if (mask & QPA(AV)) {
		qp->path = *path;
		if (!qp->path.udp_sport)
			qp->path.udp_sport =
				dray_hw_path_udp_sport(path->flow_label,
						       qp->qpn, qp->dest_qpn);
	}
}

/* Enter @next from qp->state (a checked transition). */
static void qp_set_state(struct dray_hw *hw, struct dray_hw_qp *qp, u8 next)
{
	u8 cur = qp->state;

	if (next == DRAY_QPS_ERR) {
		/* Asked for by software: no event. */
		dray_hw_qp_error(hw, qp, 0, DRAY_VERR_NONE);
		return;
	}
	if (next == DRAY_QPS_RESET)
		qp_reset(hw, qp);
	else if (cur == DRAY_QPS_RESET)
		list_add_tail(&qp->active, &hw->engine.active);
	if (next == DRAY_QPS_SQD && cur != DRAY_QPS_SQD)
		qp->sq_draining = true;
	else if (next != DRAY_QPS_SQD)
		qp->sq_draining = false;
	if (next != cur)
		trace_dray_qp_state(hw->ndev, qp->qpn, cur, next);
	qp->state = next;
}

/*
 * @rdb: responder resources for the max_dest_rd_atomic of @a, allocated
 * before engine.lock; on success it holds the table to free instead.
 */
static int qp_modify(struct dray_hw *hw, struct dray_hw_qp *qp,
		     const struct dray_qp_attr *a, struct dray_xp_res **rdb,
		     u32 *syndrome)
{
	u32 mask = le32_to_cpu(a->attr_mask);
	struct dray_hw_path path;
	u8 cur = qp->state, next;
	int status;

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (a->reserved0 || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return DRAY_AQ_STS_BAD_PARAM;
	status = dray_qp_modify_check(qp->type, cur, mask, a->state,
				      a->cur_state, &next, syndrome);
	if (status)
		return status;
	status = qp_attr_values(hw, a, mask, syndrome);
	if (status)
		return status;
	if (mask & QPA(AV)) {
		status = dray_hw_path_resolve(hw, &a->path,
					      dray_hw_qpt_conn(qp->type), &path,
					      syndrome);
		if (status)
			return status;
	}

	/* Nothing can fail from here on. */
	qp_attr_apply(qp, a, mask, &path);
	if (mask & QPA(MAX_DEST_RD_ATOMIC))
		*rdb = dray_xport_set_rdb(hw, qp, *rdb, a->max_dest_rd_atomic);
	if (next != cur || next == DRAY_QPS_RESET)
		qp_set_state(hw, qp, next);
	dray_xport_modify(hw, qp, mask, cur);
	return DRAY_AQ_STS_OK;
}

void dray_hw_cmd_modify_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_xp_res *rdb = NULL;
	struct dray_qp_attr a;
	struct dray_hw_qp *qp;
	u32 syndrome;
	int status;

	if (!qp_mailbox_in(hw, cmd, &a, sizeof(a), res))
		return;
	/*
	 * Responder resources are memory the device allocates per QP, as
	 * many as asked for (an out-of-range count fails below).
	 */
	if ((le32_to_cpu(a.attr_mask) & QPA(MAX_DEST_RD_ATOMIC)) &&
	    a.max_dest_rd_atomic &&
	    a.max_dest_rd_atomic <= DRAY_HW_MAX_RD_ATOM) {
		rdb = kcalloc(a.max_dest_rd_atomic, sizeof(*rdb), GFP_KERNEL);
		if (!rdb) {
			dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY,
				     DRAY_AQ_SYN_NONE);
			return;
		}
	}
	mutex_lock(&eng->admin_lock);
	dray_hw_engine_lock(hw);
	qp = xa_load(&eng->qps, le32_to_cpu(cmd->qpn));
	if (!qp) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_QPN;
	} else {
		status = qp_modify(hw, qp, &a, &rdb, &syndrome);
	}
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	kfree(rdb);

	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}
	/* A new state may have work for the engine (RTS, SQD, ERR). */
	dray_hw_engine_kick(hw);
}

static void qp_query(struct dray_hw_qp *qp, struct dray_qp_attr *a)
{
	const struct dray_hw_path *p = &qp->path;

	memset(a, 0, sizeof(*a));
	a->attr_mask = cpu_to_le32(QPA(STATE) | QPA(ACCESS_FLAGS) |
				   QPA(PKEY_INDEX) | QPA(PORT) | QPA(AV) |
				   QPA(PATH_MTU) | QPA(TIMEOUT) |
				   QPA(RETRY_CNT) | QPA(RNR_RETRY) |
				   QPA(RQ_PSN) | QPA(MAX_QP_RD_ATOMIC) |
				   QPA(MIN_RNR_TIMER) | QPA(SQ_PSN) |
				   QPA(MAX_DEST_RD_ATOMIC) | QPA(DEST_QPN) |
				   (dray_hw_qpt_dg(qp->type) ? QPA(QKEY) : 0));
	a->state = qp->state;
	a->cur_state = qp->state;
	a->path_mtu = qp->path_mtu;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->access = qp->access;
	a->sq_draining = qp->sq_draining;
	a->dest_qpn = cpu_to_le32(qp->dest_qpn);
	a->rq_psn = cpu_to_le32(qp->rq_psn);
	a->sq_psn = cpu_to_le32(qp->sq_psn);
	a->qkey = cpu_to_le32(qp->qkey);
	ether_addr_copy(a->path.dmac, p->dmac);
	a->path.sgid_index = p->sgid_index;
	a->path.hop_limit = p->hop_limit;
	memcpy(a->path.dgid, p->dgid, sizeof(a->path.dgid));
	a->path.traffic_class = p->traffic_class;
	a->path.flow_label = cpu_to_le32(p->flow_label);
	a->path.udp_sport = cpu_to_le16(p->udp_sport);
}

void dray_hw_cmd_query_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	u32 len = le32_to_cpu(cmd->len);
	struct dray_qp_attr a;
	struct dray_hw_qp *qp;
	void *dst;

	if (!len) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_OUT_LEN);
		return;
	}
	len = min_t(u32, len, sizeof(a));
	dst = dray_hw_dma_va(hw, le64_to_cpu(cmd->addr), len);
	if (!dst) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_OUT_ADDR);
		return;
	}
	dray_hw_engine_lock(hw);
	qp = xa_load(&eng->qps, le32_to_cpu(cmd->qpn));
	if (qp)
		qp_query(qp, &a);
	dray_hw_engine_unlock(hw);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_QPN);
		return;
	}
	memcpy(dst, &a, len);
	res->result = len;
}

/* Device reset: every QP, reset (no completions) and unpublished first. */
void dray_hw_qps_destroy(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_qp *qp;
	unsigned long index;

	lockdep_assert_held(&eng->admin_lock);
	xa_for_each(&eng->qps, index, qp) {
		dray_hw_engine_lock(hw);
		xa_erase(&eng->qps, index);
		qp_reset(hw, qp);
		dray_hw_engine_unlock(hw);
		qp_detach(hw, qp);
		qp_free(hw, qp);
	}
}
