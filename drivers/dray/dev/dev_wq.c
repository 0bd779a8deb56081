// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the work queues of a QP, the part of the queue engine
 * that reads them (dev_wq.h): doorbell records, fetching and checking
 * WQEs, in-order completion, and moving a QP to an error state with every
 * outstanding WQE flushed.
 *
 * Everything read from a queue buffer or doorbell record is hostile: a
 * WQE is copied out of the ring once and only the copy is checked and
 * used; every index is checked against the ring (the top of dev.h).
 *
 * Context: engine passes and admin commands holding engine.lock.
 */

#include "dev.h"
#include "dev_cq.h"
#include "dev_mem.h"
#include "dev_obj.h"
#include "dev_srq.h"
#include "dev_trace.h"
#include "dev_wq.h"

#define qp_dbg(hw, qp, fmt, ...) \
	pr_debug("dray-nic %s: QP[%u] " fmt, netdev_name((hw)->ndev), \
		 (qp)->qpn, ##__VA_ARGS__)
#define qp_warn_rl(hw, qp, fmt, ...) \
	pr_warn_ratelimited("dray-nic %s: QP[%u] " fmt, \
			    netdev_name((hw)->ndev), (qp)->qpn, ##__VA_ARGS__)

struct dray_hw_qp *dray_hw_qp_find(struct dray_hw *hw, u32 qpn)
{
	lockdep_assert_held(&hw->engine.lock);
	return xa_load(&hw->engine.qps, qpn);
}

void dray_hw_qp_event(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event)
{
	dray_hw_eq_post(hw, 0, event, qp->qpn, 0);
}

void dray_hw_qp_error(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event,
		      u8 vendor_err)
{
	lockdep_assert_held(&hw->engine.lock);

	if (qp->state == DRAY_QPS_RESET || qp->state == DRAY_QPS_ERR)
		return;
	qp_dbg(hw, qp, "to ERR from state %u, event %u, vendor error %#x\n",
	       qp->state, event, vendor_err);
	trace_dray_qp_state(hw->ndev, qp->qpn, qp->state, DRAY_QPS_ERR);
	qp->state = DRAY_QPS_ERR;
	qp->sq_draining = false;
	qp->deadline = 0;
	qp->err_pending = true;
	if (event)
		dray_hw_eq_post(hw, 0, event, qp->qpn, vendor_err);
	dray_hw_engine_kick(hw);
}

/*
 * A UC or UD QP's send queue stopped on an error completion: SQE. The
 * receive queue works on; the transport flushes the send queue until
 * software moves the QP back to RTS. No event: the CQE tells.
 */
static void qp_sq_error(struct dray_hw *hw, struct dray_hw_qp *qp,
			u8 vendor_err)
{
	qp_dbg(hw, qp, "to SQE from state %u, vendor error %#x\n", qp->state,
	       vendor_err);
	trace_dray_qp_state(hw->ndev, qp->qpn, qp->state, DRAY_QPS_SQE);
	qp->state = DRAY_QPS_SQE;
	qp->sq_draining = false;
	dray_hw_engine_kick(hw);
}

bool dray_hw_wq_poll(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_wq *wq)
{
	u32 pi, ahead, inflight;

	lockdep_assert_held(&hw->engine.lock);

	/*
	 * A QP on an SRQ or of an XRC type has no receive doorbell (rq
	 * counts WQEs taken); an XRC target has no send queue.
	 */
	if (!dray_hw_wq_exists(wq) || qp->db_broken)
		return false;
	pi = le32_to_cpu(READ_ONCE(wq->db->producer));
	if (pi == wq->posted)
		return false;

	ahead = pi - wq->completed;
	inflight = wq->fetched - wq->completed;
	if (ahead > wq->depth || ahead < inflight) {
		bool sq = wq == &qp->sq;

		qp_dbg(hw, qp, "%s producer index %u invalid (completed %u, fetched %u, depth %u)\n",
		       sq ? "SQ" : "RQ", pi, wq->completed, wq->fetched,
		       wq->depth);
		/* Stop reading the doorbells; flush what was validly posted. */
		qp->db_broken = true;
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 sq ? DRAY_VERR_SQ_DOORBELL :
				      DRAY_VERR_RQ_DOORBELL);
		return true;
	}
	/* The WQEs are read after the index; pairs with software's wmb. */
	smp_rmb();
	wq->posted = pi;
	return true;
}

u32 dray_hw_sq_pending(struct dray_hw_qp *qp)
{
	if (qp->state != DRAY_QPS_RTS)
		return 0;
	return qp->sq.posted - qp->sq.fetched;
}

static void *wq_slot(const struct dray_hw_wq *wq, u32 index)
{
	return wq->ring + (dray_ring_slot(index, wq->depth) << wq->log_stride);
}

static bool sq_opcode_valid(u8 type, u8 opcode)
{
	switch (type) {
	case DRAY_QPT_RC:
		return opcode < DRAY_WQE_OPCODE_MAX;
	case DRAY_QPT_XRC_INI:
		/* RC's but IBTA 1.5's and the kernel's REG_MR. */
		return opcode < DRAY_WQE_OPCODE_MAX &&
		       opcode != DRAY_WQE_ATOMIC_WRITE &&
		       opcode != DRAY_WQE_FLUSH && opcode != DRAY_WQE_REG_MR;
	case DRAY_QPT_UC:
		/* No READ, atomics or SEND with invalidate on UC. */
		return opcode == DRAY_WQE_SEND || opcode == DRAY_WQE_SEND_IMM ||
		       opcode == DRAY_WQE_RDMA_WRITE ||
		       opcode == DRAY_WQE_RDMA_WRITE_IMM ||
		       dray_hw_wqe_is_local(opcode);
	default:
		return opcode == DRAY_WQE_SEND || opcode == DRAY_WQE_SEND_IMM;
	}
}

static bool sq_opcode_atomic(u8 opcode)
{
	return opcode == DRAY_WQE_ATOMIC_CMP_SWP ||
	       opcode == DRAY_WQE_ATOMIC_FETCH_ADD;
}

static int swqe_fail(struct dray_hw_swqe *wqe, u8 status, u8 vendor_err)
{
	wqe->vendor_err = vendor_err;
	return status;
}

static u8 mr_err_to_verr(enum dray_mr_err err)
{
	switch (err) {
	case DRAY_MR_ERR_PD:
		return DRAY_VERR_LKEY_PD;
	case DRAY_MR_ERR_ACCESS:
		return DRAY_VERR_LKEY_ACCESS;
	case DRAY_MR_ERR_RANGE:
		return DRAY_VERR_LKEY_RANGE;
	case DRAY_MR_ERR_STATE:
		return DRAY_VERR_LKEY_STATE;
	default:
		return DRAY_VERR_LKEY;
	}
}

/* Are reserved bytes of a local operation's fields set? */
static bool swqe_local_reserved(const struct dray_sq_wqe *h)
{
	switch (h->opcode) {
	case DRAY_WQE_LOCAL_INV:
		return memchr_inv(h->u.inv.reserved, 0,
				  sizeof(h->u.inv.reserved));
	case DRAY_WQE_REG_MR:
		return memchr_inv(h->u.reg.reserved, 0,
				  sizeof(h->u.reg.reserved)) ||
		       h->u.reg.reserved2;
	default:
		return memchr_inv(h->u.bind.reserved, 0,
				  sizeof(h->u.bind.reserved));
	}
}

/*
 * A local operation (LOCAL_INV, REG_MR, BIND_MW) moves no data: no SGEs,
 * no inline payload. REG_MR names host memory by bus address: privileged QPs only.
 * What it names is checked when it executes (dray_hw_mr_fast_reg()).
 */
static int swqe_local(struct dray_hw_qp *qp, struct dray_hw_swqe *wqe)
{
	if (wqe->hdr.num_sge)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_SGE_COUNT);
	if (wqe->hdr.flags & DRAY_WQE_F_INLINE)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_INLINE);
	if (wqe->hdr.opcode == DRAY_WQE_REG_MR && !(qp->flags & DRAY_QP_F_PRIV))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_FR_PRIV);
	if (swqe_local_reserved(&wqe->hdr))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_FLAGS);
	return 0;
}

/*
 * ATOMIC_WRITE and FLUSH carry what they need in the header: no SGEs, no
 * inline payload, reserved bytes zero; a FLUSH names one placement type
 * and a known level. The value ATOMIC_WRITE sends is its payload, from
 * the copy of the header.
 */
static int swqe_header_only(struct dray_hw_swqe *wqe)
{
	const struct dray_sq_wqe *h = &wqe->hdr;

	if (h->num_sge)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_SGE_COUNT);
	if (h->flags & DRAY_WQE_F_INLINE)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_INLINE);
	if (h->opcode == DRAY_WQE_ATOMIC_WRITE) {
		if (h->u.atomic_write.reserved)
			return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
					 DRAY_VERR_WQE_FLAGS);
		memcpy(wqe->inline_buf, h->u.atomic_write.value,
		       sizeof(h->u.atomic_write.value));
		wqe->inline_data = wqe->inline_buf;
		wqe->length = sizeof(h->u.atomic_write.value);
		return 0;
	}
	if (!dray_hw_flush_args_ok(h->u.flush.type, h->u.flush.level) ||
	    memchr_inv(h->u.flush.reserved, 0, sizeof(h->u.flush.reserved)) ||
	    h->u.flush.reserved2)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_FLAGS);
	return 0;
}

/* Inline payload: copy it out of the slot (at most the stride). */
static int swqe_inline(struct dray_hw_qp *qp, struct dray_hw_swqe *wqe,
		       const u8 *slot)
{
	u32 room = (1U << qp->sq.log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	u32 len = le32_to_cpu(wqe->hdr.length);
	u8 op = wqe->hdr.opcode;

	if (op == DRAY_WQE_RDMA_READ || sq_opcode_atomic(op))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_INLINE);
	if (len > DRAY_HW_MAX_INLINE || len > room)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_WQE_INLINE);
	memcpy(wqe->inline_buf, slot + DRAY_SQ_WQE_HDR_SIZE, len);
	wqe->inline_data = wqe->inline_buf;
	wqe->length = len;
	return 0;
}

/* Gather list: copy, then check every SGE against its MR. */
static int swqe_sgl(struct dray_hw *hw, struct dray_hw_qp *qp,
		    struct dray_hw_swqe *wqe, const u8 *slot)
{
	u32 room = (1U << qp->sq.log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	u8 op = wqe->hdr.opcode, access = 0;
	u32 n = wqe->hdr.num_sge, i;
	struct dray_hw_mr *mr;
	u64 total = 0;

	if (n > DRAY_HW_MAX_SGE || n * DRAY_SGE_SIZE > room)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_SGE_COUNT);
	memcpy(wqe->sge, slot + DRAY_SQ_WQE_HDR_SIZE, n * DRAY_SGE_SIZE);
	wqe->num_sge = n;
	for (i = 0; i < n; i++)
		total += le32_to_cpu(wqe->sge[i].length);
	if (total > DRAY_HW_MAX_MSG)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_WQE_LENGTH);
	if (sq_opcode_atomic(op) && (n != 1 || total != sizeof(u64)))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_ATOMIC_SGE);
	wqe->length = total;

	/* READ and atomic results are written into the local buffers. */
	if (op == DRAY_WQE_RDMA_READ || sq_opcode_atomic(op))
		access = DRAY_ACCESS_LOCAL_WRITE;
	for (i = 0; i < n; i++) {
		const struct dray_sge *sge = &wqe->sge[i];
		u32 len = le32_to_cpu(sge->length);
		enum dray_mr_err err;

		if (!len)
			continue;
		err = dray_hw_mr_check(hw, le32_to_cpu(sge->lkey), qp->pdn,
				       access, le64_to_cpu(sge->addr), len,
				       &mr);
		if (err)
			return swqe_fail(wqe, DRAY_CQE_ST_LOC_PROT_ERR,
					 mr_err_to_verr(err));
	}
	return 0;
}

int dray_hw_sq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp, u32 index,
		     struct dray_hw_swqe *wqe)
{
	struct dray_hw_wq *sq = &qp->sq;
	const u8 *slot;

	lockdep_assert_held(&hw->engine.lock);

	wqe->index = index;
	wqe->vendor_err = DRAY_VERR_NONE;
	wqe->num_sge = 0;
	wqe->length = 0;
	wqe->inline_data = NULL;

	/* Only a posted, not completed WQE: [completed, posted). */
	if (index - sq->completed >= sq->posted - sq->completed ||
	    qp->state == DRAY_QPS_ERR || qp->state == DRAY_QPS_RESET) {
		memset(&wqe->hdr, 0, sizeof(wqe->hdr));
		qp_warn_rl(hw, qp, "transport fetched SQ WQE %u (completed %u, posted %u)\n",
			   index, sq->completed, sq->posted);
		return swqe_fail(wqe, DRAY_CQE_ST_GENERAL_ERR,
				 DRAY_VERR_WQE_INDEX);
	}

	/* One copy of the header; only the copy is looked at. */
	slot = wq_slot(sq, index);
	memcpy(&wqe->hdr, slot, sizeof(wqe->hdr));

	if (!sq_opcode_valid(qp->type, wqe->hdr.opcode))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_OPCODE);
	if (wqe->hdr.flags & ~(DRAY_WQE_F_SIGNALED | DRAY_WQE_F_SOLICITED |
			       DRAY_WQE_F_FENCE | DRAY_WQE_F_INLINE |
			       (dray_hw_qpt_dg(qp->type) ?
				DRAY_WQE_F_UD_AV : 0)))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_FLAGS);
	if (dray_hw_wqe_is_local(wqe->hdr.opcode))
		return swqe_local(qp, wqe);
	if (wqe->hdr.opcode == DRAY_WQE_ATOMIC_WRITE ||
	    wqe->hdr.opcode == DRAY_WQE_FLUSH)
		return swqe_header_only(wqe);
	if (wqe->hdr.flags & DRAY_WQE_F_INLINE)
		return swqe_inline(qp, wqe, slot);
	return swqe_sgl(hw, qp, wqe, slot);
}

bool dray_hw_sq_publish(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_hw_wq *sq = &qp->sq;

	lockdep_assert_held(&hw->engine.lock);

	if (sq->fetched == sq->db_consumer)
		return false;
	if (sq->fetched - sq->completed > sq->posted - sq->completed) {
		qp_warn_rl(hw, qp, "SQ fetch index %u outside %u..%u\n",
			   sq->fetched, sq->completed, sq->posted);
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 DRAY_VERR_WQE_INDEX);
		return true;
	}
	sq->db_consumer = sq->fetched;
	WRITE_ONCE(sq->db->consumer, cpu_to_le32(sq->fetched));
	return true;
}

/*
 * A QP on an SRQ (or an XRC target, on the XRC SRQ a request names):
 * take the SRQ's next WQE. rq counts the WQEs this QP took (posted =
 * fetched), so completion stays in order per QP; the transport holds at
 * most one taken WQE at a time, whose tag is kept for a flush.
 */
static int rq_fetch_srq(struct dray_hw *hw, struct dray_hw_qp *qp,
			struct dray_hw_srq *srq, struct dray_hw_rwqe *wqe)
{
	struct dray_hw_wq *rq = &qp->rq;
	int ret;

	if (rq->fetched != rq->completed) {
		qp_warn_rl(hw, qp, "SRQ WQE taken with one outstanding\n");
		return -ENOENT;
	}
	ret = dray_hw_srq_take(hw, srq, wqe);
	if (ret == -EIO) {
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 DRAY_VERR_SRQ_DOORBELL);
		return -EIO;
	}
	if (ret == -ENOENT)
		return ret;
	wqe->index = rq->fetched++;
	rq->posted = rq->fetched;
	qp->srq_tag = wqe->tag;
	return ret;
}

int dray_hw_rq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_rwqe *wqe)
{
	struct dray_hw_wq *rq = &qp->rq;
	u32 room = (1U << rq->log_stride) - DRAY_RQ_WQE_HDR_SIZE;
	struct dray_rq_wqe hdr;
	const u8 *slot;
	u32 i;

	lockdep_assert_held(&hw->engine.lock);

	if (qp->state != DRAY_QPS_RTR && qp->state != DRAY_QPS_RTS &&
	    qp->state != DRAY_QPS_SQD && qp->state != DRAY_QPS_SQE)
		return -ENOENT;
	if (qp->srq)
		return rq_fetch_srq(hw, qp, qp->srq, wqe);
	if (!dray_hw_wq_exists(rq))
		return -ENOENT;
	if (rq->fetched == rq->posted) {
		/* Look again: software may have posted since the last pass. */
		dray_hw_wq_poll(hw, qp, rq);
		if (qp->state == DRAY_QPS_ERR || rq->fetched == rq->posted)
			return -ENOENT;
	}

	wqe->index = rq->fetched;
	wqe->num_sge = 0;
	wqe->length = 0;
	wqe->pdn = qp->pdn;
	wqe->tag = 0;
	slot = wq_slot(rq, wqe->index);
	memcpy(&hdr, slot, sizeof(hdr));
	rq->fetched++;
	if (hdr.num_sge > DRAY_HW_MAX_SGE ||
	    hdr.num_sge * DRAY_SGE_SIZE > room) {
		WRITE_ONCE(rq->db->consumer, cpu_to_le32(rq->fetched));
		return -EINVAL;
	}
	memcpy(wqe->sge, slot + DRAY_RQ_WQE_HDR_SIZE,
	       hdr.num_sge * DRAY_SGE_SIZE);
	WRITE_ONCE(rq->db->consumer, cpu_to_le32(rq->fetched));
	wqe->num_sge = hdr.num_sge;
	for (i = 0; i < wqe->num_sge; i++)
		wqe->length += le32_to_cpu(wqe->sge[i].length);
	return 0;
}

/* Count a CQE with an error status in the QP's counters (and trace it). */
static void qp_cqe_count(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_cq *cq, const struct dray_cqe *cqe)
{
	bool sq = cqe->flags & DRAY_CQE_F_SEND_QUEUE;
	struct dray_xp_stats *s = &qp->xp.stats;

	if (cqe->status == DRAY_CQE_ST_SUCCESS)
		return;
	if (cqe->status == DRAY_CQE_ST_WR_FLUSH_ERR) {
		if (sq)
			s->req_cqe_flushes++;
		else
			s->resp_cqe_flushes++;
		return;
	}
	if (sq)
		s->req_cqe_errors++;
	else
		s->resp_cqe_errors++;
	trace_dray_cqe_err(hw->ndev, qp->qpn, cq->cqn, sq,
			   le32_to_cpu(cqe->wqe_index), cqe->status,
			   cqe->vendor_err);
}

/* Write a CQE of @qp; a CQ that cannot take it kills the QP. */
static void qp_cqe_post(struct dray_hw *hw, struct dray_hw_qp *qp,
			struct dray_hw_cq *cq, const struct dray_cqe *cqe)
{
	qp_cqe_count(hw, qp, cq, cqe);
	if (!dray_hw_cq_post(hw, cq, cqe))
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 DRAY_VERR_CQ_ERROR);
}

static u8 sq_cqe_opcode(u8 wqe_opcode)
{
	switch (wqe_opcode) {
	case DRAY_WQE_RDMA_WRITE:
	case DRAY_WQE_RDMA_WRITE_IMM:
		return DRAY_CQE_RDMA_WRITE;
	case DRAY_WQE_RDMA_READ:
		return DRAY_CQE_RDMA_READ;
	case DRAY_WQE_ATOMIC_CMP_SWP:
		return DRAY_CQE_COMP_SWAP;
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		return DRAY_CQE_FETCH_ADD;
	case DRAY_WQE_LOCAL_INV:
		return DRAY_CQE_LOCAL_INV;
	case DRAY_WQE_REG_MR:
		return DRAY_CQE_REG_MR;
	case DRAY_WQE_BIND_MW:
		return DRAY_CQE_BIND_MW;
	case DRAY_WQE_ATOMIC_WRITE:
		return DRAY_CQE_ATOMIC_WRITE;
	case DRAY_WQE_FLUSH:
		return DRAY_CQE_FLUSH;
	default:
		return DRAY_CQE_SEND;
	}
}

void dray_hw_sq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_swqe *wqe, u8 status,
			 u8 vendor_err)
{
	struct dray_hw_wq *sq = &qp->sq;
	struct dray_cqe cqe = {};

	lockdep_assert_held(&hw->engine.lock);

	if (wqe->index != sq->completed || sq->completed == sq->fetched) {
		qp_warn_rl(hw, qp, "SQ WQE %u completed out of order (%u..%u)\n",
			   wqe->index, sq->completed, sq->fetched);
		return;
	}
	sq->completed++;

	if (status == DRAY_CQE_ST_SUCCESS &&
	    !(wqe->hdr.flags & DRAY_WQE_F_SIGNALED) &&
	    !(qp->flags & DRAY_QP_F_SQ_SIG_ALL))
		return;

	cqe.qpn = cpu_to_le32(qp->qpn);
	cqe.wqe_index = cpu_to_le32(wqe->index);
	cqe.opcode = sq_cqe_opcode(wqe->hdr.opcode);
	cqe.byte_len = cpu_to_le32(wqe->length);
	cqe.status = status;
	cqe.vendor_err = vendor_err;
	cqe.flags = DRAY_CQE_F_SEND_QUEUE;
	qp_cqe_post(hw, qp, qp->send_cq, &cqe);

	if (status == DRAY_CQE_ST_SUCCESS || status == DRAY_CQE_ST_WR_FLUSH_ERR)
		return;
	if (qp->type == DRAY_QPT_RC || qp->type == DRAY_QPT_XRC_INI)
		dray_hw_qp_error(hw, qp, 0, vendor_err);
	else if (qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD)
		qp_sq_error(hw, qp, vendor_err);
}

bool dray_hw_sq_flush(struct dray_hw *hw, struct dray_hw_qp *qp,
		      struct dray_hw_swqe *w, u32 budget)
{
	lockdep_assert_held(&hw->engine.lock);

	for (; budget; budget--) {
		u32 index = qp->sq.completed;

		if (qp->state != DRAY_QPS_SQE || index == qp->sq.posted)
			return false;
		/* For the opcode in the CQE; a WQE that fails still flushes. */
		dray_hw_sq_fetch(hw, qp, index, w);
		qp->sq.fetched = index + 1;
		dray_hw_sq_complete(hw, qp, w, DRAY_CQE_ST_WR_FLUSH_ERR, 0);
	}
	return qp->state == DRAY_QPS_SQE && qp->sq.completed != qp->sq.posted;
}

int dray_hw_rq_fetch_xrc(struct dray_hw *hw, struct dray_hw_qp *qp,
			 struct dray_hw_srq *srq, struct dray_hw_rwqe *wqe)
{
	int ret;

	lockdep_assert_held(&hw->engine.lock);

	ret = rq_fetch_srq(hw, qp, srq, wqe);
	if (ret != -ENOENT && ret != -EIO) {
		qp->xrc_srqn = srq->srqn;
		qp->xrc_serial = srq->serial;
	}
	return ret;
}

/*
 * Where a receive CQE of @qp goes: its receive CQ, or an XRC target's the
 * CQ of the XRC SRQ of its WQE (NULL if that SRQ was destroyed: the WQE
 * was nobody's any more). Fills in what names the SRQ WQE.
 */
static struct dray_hw_cq *rq_cqe_target(struct dray_hw *hw,
					struct dray_hw_qp *qp,
					struct dray_cqe *cqe)
{
	struct dray_hw_srq *srq;

	if (qp->srq)
		cqe->flags |= DRAY_CQE_F_SRQ;
	if (qp->type != DRAY_QPT_XRC_TGT)
		return qp->recv_cq;
	cqe->flags |= DRAY_CQE_F_SRQ;
	cqe->flags2 |= DRAY_CQE_F2_XRC;
	cqe->src_qpn = cpu_to_le32(qp->xrc_srqn);
	srq = dray_hw_srq_find(hw, qp->xrc_srqn, qp->xrc_serial);
	return srq ? srq->cq : NULL;
}

void dray_hw_rq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_rwqe *wqe, struct dray_cqe *cqe)
{
	struct dray_hw_wq *rq = &qp->rq;
	struct dray_hw_cq *cq;

	lockdep_assert_held(&hw->engine.lock);

	if (wqe->index != rq->completed || rq->completed == rq->fetched) {
		qp_warn_rl(hw, qp, "RQ WQE %u completed out of order (%u..%u)\n",
			   wqe->index, rq->completed, rq->fetched);
		return;
	}
	rq->completed++;

	cqe->qpn = cpu_to_le32(qp->qpn);
	cqe->flags &= ~DRAY_CQE_F_SEND_QUEUE;
	cq = rq_cqe_target(hw, qp, cqe);
	cqe->wqe_index = cpu_to_le32(cqe->flags & DRAY_CQE_F_SRQ ? wqe->tag :
							      wqe->index);
	if (cq)
		qp_cqe_post(hw, qp, cq, cqe);

	if (cqe->status != DRAY_CQE_ST_SUCCESS &&
	    cqe->status != DRAY_CQE_ST_WR_FLUSH_ERR)
		dray_hw_qp_error(hw, qp, 0, cqe->vendor_err);
}

/* Complete every WQE of @wq from completed to posted with WR_FLUSH_ERR. */
static bool wq_flush(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_wq *wq)
{
	bool sq = wq == &qp->sq;
	bool srq = !sq && (qp->srq || qp->type == DRAY_QPT_XRC_TGT);
	struct dray_cqe cqe = {
		.qpn	= cpu_to_le32(qp->qpn),
		.status	= DRAY_CQE_ST_WR_FLUSH_ERR,
		.flags	= sq ? DRAY_CQE_F_SEND_QUEUE : 0,
		.opcode	= DRAY_CQE_RECV,
	};
	struct dray_hw_cq *cq;
	bool work = false;

	if (srq) {
		/* Only the WQE this QP took; the SRQ's others are not its. */
		if (wq->completed != wq->fetched) {
			cq = rq_cqe_target(hw, qp, &cqe);
			cqe.wqe_index = cpu_to_le32(qp->srq_tag);
			if (cq) {
				qp_cqe_count(hw, qp, cq, &cqe);
				dray_hw_cq_post(hw, cq, &cqe);
			}
			work = true;
		}
		wq->completed = wq->fetched;
		wq->posted = wq->fetched;
		return work;
	}
	if (!dray_hw_wq_exists(wq))
		return false;

	/* The transport gave back what it had fetched. */
	wq->fetched = wq->completed;
	while (wq->completed != wq->posted) {
		if (sq) {
			const struct dray_sq_wqe *w = wq_slot(wq, wq->completed);

			cqe.opcode = sq_cqe_opcode(READ_ONCE(w->opcode));
		}
		cqe.wqe_index = cpu_to_le32(wq->completed);
		qp_cqe_count(hw, qp, sq ? qp->send_cq : qp->recv_cq, &cqe);
		dray_hw_cq_post(hw, sq ? qp->send_cq : qp->recv_cq, &cqe);
		wq->completed++;
		work = true;
	}
	wq->fetched = wq->completed;
	if (work || wq->db_consumer != wq->fetched) {
		wq->db_consumer = wq->fetched;
		WRITE_ONCE(wq->db->consumer, cpu_to_le32(wq->fetched));
	}
	return work;
}

bool dray_hw_qp_flush(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	bool work;

	lockdep_assert_held(&hw->engine.lock);

	work = dray_hw_wq_poll(hw, qp, &qp->sq);
	work |= dray_hw_wq_poll(hw, qp, &qp->rq);
	work |= wq_flush(hw, qp, &qp->sq);
	work |= wq_flush(hw, qp, &qp->rq);
	/* IBTA: Last WQE Reached, once the QP holds no SRQ WQE any more. */
	if (qp->srq && !qp->srq_last_wqe) {
		qp->srq_last_wqe = true;
		dray_hw_qp_event(hw, qp, DRAY_EQE_QP_LAST_WQE);
		work = true;
	}
	return work;
}
