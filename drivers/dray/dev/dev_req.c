// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the RC requester, and the UC requester (the same without
 * acknowledgments: a UC WQE is done when its last packet is sent).
 *
 * Send WQEs are fetched in order and each is turned into request packets:
 * SEND and RDMA WRITE segmented by the path MTU (first/middle/last/only),
 * atomics as one request each, RDMA READ as one request per
 * DRAY_XP_READ_PKTS response packets. PSNs are assigned in order; a READ
 * takes one PSN per response packet it asks for.
 *
 * Flow control: at most DRAY_CWND_MAX PSNs (the congestion window,
 * dev_logic.h, keeps it smaller after a loss) and DRAY_XP_MAX_WQE WQEs are
 * outstanding; at most max_rd_atomic READ requests and atomics (the
 * initiator depth: a READ of more than one piece holds up to
 * DRAY_XP_READ_PIECES of it, one per request it may have outstanding);
 * a fenced WQE waits until every earlier READ and atomic completed.
 *
 * Retransmission is go-back-N: the completer names a PSN (a NAK, an
 * implied NAK, the local ACK timeout) and the requester sends everything
 * again from there, re-reading the WQEs from the ring. A READ that got
 * part of its response is asked again for the rest only. After an RNR NAK
 * the requester waits for the timer the responder asked for.
 */

#include <linux/jiffies.h>

#include "dev_trace.h"
#include "dev_xport_int.h"

static_assert(DRAY_XP_MAX_WQE && !(DRAY_XP_MAX_WQE & (DRAY_XP_MAX_WQE - 1)));

/* The local ACK timeout in jiffies; 0 when the QP has none. */
static unsigned long req_rto(const struct dray_hw_qp *qp)
{
	u64 ns = dray_wire_ack_timeout_ns(qp->timeout);

	if (!ns)
		return 0;
	/* Two ticks at least: one could expire at once. */
	return max(nsecs_to_jiffies(ns), 2UL);
}

/*
 * The tail probe's delay (req_probe()), for ACK timeouts of half a second
 * and more (rdma_cm gives RoCE QPs 2.1 s; a shorter timeout costs little
 * to wait for, and the shorter the delay the more often a probe fires
 * while the answers are only slow): an eighth of the timeout, plus up to
 * seven sixty-fourths more by QP number, so that QPs that lost frames
 * together do not all probe at once.
 */
static unsigned long req_probe_delay(const struct dray_hw_qp *qp)
{
	unsigned long rto = req_rto(qp);

	if (rto < msecs_to_jiffies(DRAY_XP_PROBE_MIN_RTO_MS))
		return 0;
	return rto / 8 + (qp->qpn % 8) * rto / 64;
}

/* The ACK timer and the tail probe, from now. */
static void req_arm_timers(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	unsigned long probe = req_probe_delay(qp);

	rq->rto_deadline = (jiffies + req_rto(qp)) ?: 1;
	rq->probe_deadline = probe ? (jiffies + probe) ?: 1 : 0;
}

/* RTR -> RTS: start sending at sq_psn. */
void dray_xp_req_start(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 psn = qp->sq_psn & DRAY_PSN_MASK;

	memset(rq, 0, offsetof(struct dray_xp_req, wqe));
	rq->psn = psn;
	rq->max_psn = psn;
	rq->una = psn;
	rq->head = qp->sq.fetched;
	rq->cur = qp->sq.fetched;
	rq->fetch = qp->sq.fetched;
	rq->retry = qp->retry_cnt;
	rq->rnr_retry = qp->rnr_retry;
	dray_cwnd_init(&rq->win);
}

/*
 * UC, SQE -> RTS: the send queue was flushed up to sq.fetched; go on from
 * there, the PSNs continuing (the responder drops a message left half
 * sent and starts again at the next first packet).
 */
void dray_xp_req_resume(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;

	rq->head = qp->sq.fetched;
	rq->cur = qp->sq.fetched;
	rq->fetch = qp->sq.fetched;
	rq->cur_pkt = 0;
	rq->cur_valid = false;
	rq->blocked = false;
	rq->stall = false;
}

/* The outstanding WQE whose PSNs include @psn, or NULL. */
struct dray_xp_swqe *dray_xp_req_find(struct dray_hw_qp *qp, u32 psn)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 i;

	for (i = rq->head; i != rq->fetch; i++) {
		struct dray_xp_swqe *m = dray_xp_wqe(qp, i);

		if (m->state == DRAY_XP_WQE_FAILED)
			return NULL;
		if (dray_psn_cmp(psn, m->psn) >= 0 &&
		    dray_psn_cmp(psn, dray_psn_add(m->psn, m->npkts)) < 0)
			return m;
	}
	return NULL;
}

/*
 * Send again from @psn (go-back-N), or skip ahead to it after an ACK
 * for packets sent before a rewind: point the cursor at the packet with
 * that PSN, at a failed WQE in the way, or after the last packet sent.
 */
void dray_xp_req_rewind(struct dray_hw_qp *qp, u32 psn)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 i;

	rq->ackreq = true;
	rq->psn = psn;
	for (i = rq->head; i != rq->fetch; i++) {
		struct dray_xp_swqe *m = dray_xp_wqe(qp, i);

		if (m->state == DRAY_XP_WQE_FAILED) {
			rq->cur = i;
			rq->cur_pkt = 0;
			return;
		}
		if (dray_psn_cmp(psn, dray_psn_add(m->psn, m->npkts)) < 0) {
			rq->cur = i;
			rq->cur_pkt = max(dray_psn_cmp(psn, m->psn), 0);
			return;
		}
	}
	rq->cur = rq->fetch;
	rq->cur_pkt = 0;
}

/* Progress was made: a fresh timeout, fresh retry counters. */
void dray_xp_req_rearm(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	unsigned long rto = req_rto(qp);

	rq->retry = qp->retry_cnt;
	rq->rnr_retry = qp->rnr_retry;
	if (rq->una != rq->max_psn && rto && !rq->rnr_wait) {
		req_arm_timers(qp);
	} else {
		rq->rto_deadline = 0;
		rq->probe_deadline = 0;
	}
}

/*
 * The transport's own checks of a fetched WQE (dray_hw_sq_fetch() did
 * the generic ones). Returns 0 or a DRAY_CQE_ST_* status.
 */
static u8 req_validate(struct dray_hw *hw, struct dray_hw_qp *qp,
		       const struct dray_hw_swqe *w)
{
	u8 access = 0;
	u32 i;

	switch (w->hdr.opcode) {
	case DRAY_WQE_SEND:
	case DRAY_WQE_SEND_IMM:
	case DRAY_WQE_SEND_INV:
	case DRAY_WQE_RDMA_WRITE:
	case DRAY_WQE_RDMA_WRITE_IMM:
		break;
	case DRAY_WQE_LOCAL_INV:
	case DRAY_WQE_REG_MR:
	case DRAY_WQE_BIND_MW:
		/* No data (dray_hw_sq_fetch() checked); done at execution. */
		return DRAY_CQE_ST_SUCCESS;
	case DRAY_WQE_ATOMIC_WRITE:
	case DRAY_WQE_FLUSH:
		/* The header holds all (dray_hw_sq_fetch() checked it). */
		if (!qp->max_rd_atomic)
			return DRAY_CQE_ST_LOC_QP_OP_ERR;
		return DRAY_CQE_ST_SUCCESS;
	case DRAY_WQE_ATOMIC_CMP_SWP:
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		if (w->length < sizeof(u64))
			return DRAY_CQE_ST_LOC_LEN_ERR;
		fallthrough;
	case DRAY_WQE_RDMA_READ:
		/* An initiator depth of 0 forbids READ and atomics. */
		if (!qp->max_rd_atomic || (w->hdr.flags & DRAY_WQE_F_INLINE))
			return DRAY_CQE_ST_LOC_QP_OP_ERR;
		access = DRAY_ACCESS_LOCAL_WRITE;
		break;
	default:
		return DRAY_CQE_ST_LOC_QP_OP_ERR;
	}
	if (w->length > DRAY_HW_MAX_MSG)
		return DRAY_CQE_ST_LOC_LEN_ERR;
	if (w->hdr.flags & DRAY_WQE_F_INLINE)
		return DRAY_CQE_ST_SUCCESS;

	for (i = 0; i < w->num_sge; i++) {
		const struct dray_sge *sge = &w->sge[i];
		u32 len = le32_to_cpu(sge->length);
		struct dray_hw_mr *mr;

		if (len && dray_hw_mr_check(hw, le32_to_cpu(sge->lkey),
					    qp->pdn, access,
					    le64_to_cpu(sge->addr), len, &mr))
			return DRAY_CQE_ST_LOC_PROT_ERR;
	}
	return DRAY_CQE_ST_SUCCESS;
}

/* May the requester take a new WQE from the SQ now? */
static bool req_may_fetch(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 limit = min_t(u32, DRAY_XP_MAX_WQE, qp->sq.depth);

	return qp->state == DRAY_QPS_RTS && !qp->sq_draining &&
	       rq->fetch - rq->head < limit && dray_hw_sq_pending(qp);
}

/*
 * Read WQE @rq->fetch into cur_wqe (once) and decide whether it may start.
 * Returns 0 (start it), -EAGAIN (fence or initiator depth: wait), or a
 * DRAY_CQE_ST_* status to fail it with.
 */
static int req_peek(struct dray_hw *hw, struct dray_hw_qp *qp, u8 *verr)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_hw_swqe *w = &rq->cur_wqe;
	int st;

	if (!rq->cur_valid || rq->cur_index != rq->fetch) {
		rq->cur_valid = false;
		/* What the error CQE reports if the WQE cannot be read. */
		memset(&w->hdr, 0, sizeof(w->hdr));
		w->length = 0;
		st = dray_hw_sq_fetch(hw, qp, rq->fetch, w);
		if (st) {
			*verr = DRAY_VERR_BAD_WQE;
			return st;
		}
		rq->cur_valid = true;
		rq->cur_index = rq->fetch;
		st = req_validate(hw, qp, w);
		if (st) {
			*verr = st == DRAY_CQE_ST_LOC_PROT_ERR ?
				DRAY_VERR_LOCAL_SGE : DRAY_VERR_BAD_WQE;
			return st;
		}
	}
	/* The PSNs in flight must stay within half the sequence space. */
	if (dray_xp_span(rq->una, rq->max_psn) +
	    dray_wire_npkts(w->length, dray_xp_mtu(qp)) > DRAY_XP_MAX_SPAN &&
	    rq->una != rq->max_psn)
		return -EAGAIN;
	/* IBTA 10.8.3.3: a fenced WQE waits for earlier READ and atomics. */
	if ((w->hdr.flags & DRAY_WQE_F_FENCE) && rq->rd_atomic)
		return -EAGAIN;
	/*
	 * Local invalidate fence, always on: LOCAL_INV waits until every
	 * earlier WQE completed, so none of them still uses the MR.
	 */
	if (w->hdr.opcode == DRAY_WQE_LOCAL_INV && rq->head != rq->fetch)
		return -EAGAIN;
	if (dray_xp_is_rd_atomic(w->hdr.opcode) &&
	    rq->rd_atomic >= qp->max_rd_atomic)
		return -EAGAIN;
	return 0;
}

/*
 * The initiator depth a READ of @npkts response packets takes: one per
 * piece it may have asked for at once, as far as the depth left allows
 * (req_peek() made sure of one).
 */
static u8 req_read_slots(const struct dray_hw_qp *qp, u32 npkts)
{
	u32 pieces = DIV_ROUND_UP(npkts, DRAY_XP_READ_PKTS);
	u32 left = qp->max_rd_atomic - qp->xp.req.rd_atomic;

	return (u8)clamp_t(u32, min(pieces, left), 1, DRAY_XP_READ_PIECES);
}

/*
 * Execute the local operation in cur_wqe, in send queue order: every
 * earlier WQE has been started (and for LOCAL_INV completed, req_peek()),
 * no later one yet. Returns 0 or LOC_QP_OP_ERR with *verr.
 */
static u8 req_local(struct dray_hw *hw, struct dray_hw_qp *qp, u8 *verr)
{
	const struct dray_sq_wqe *h = &qp->xp.req.cur_wqe.hdr;

	switch (h->opcode) {
	case DRAY_WQE_REG_MR:
		*verr = dray_hw_mr_fast_reg(hw, qp->pdn, h);
		break;
	case DRAY_WQE_BIND_MW:
		/* IBTA: a bind that fails completes with MW_BIND_ERR. */
		*verr = dray_hw_mw_bind(hw, qp, h);
		if (*verr)
			xp_dbg(hw, qp, "BIND_MW of %#x refused, detail %#x\n",
			       le32_to_cpu(h->u.bind.mw_key), *verr);
		return *verr ? DRAY_CQE_ST_MW_BIND_ERR : DRAY_CQE_ST_SUCCESS;
	default:
		*verr = dray_hw_key_invalidate(hw, qp->pdn, qp,
					       le32_to_cpu(h->u.inv.rkey),
					       false);
		break;
	}
	if (*verr)
		xp_dbg(hw, qp, "%s of key %#x refused, detail %#x\n",
		       h->opcode == DRAY_WQE_REG_MR ? "REG_MR" : "LOCAL_INV",
		       le32_to_cpu(h->opcode == DRAY_WQE_REG_MR ?
				   h->u.reg.key : h->u.inv.rkey),
		       *verr);
	return *verr ? DRAY_CQE_ST_LOC_QP_OP_ERR : DRAY_CQE_ST_SUCCESS;
}

/*
 * Take WQE @rq->fetch (in cur_wqe) as outstanding, or failed (@status).
 * A local operation that succeeded is done at once: it takes no PSN.
 */
static void req_commit(struct dray_hw_qp *qp, u8 status, u8 verr)
{
	struct dray_xp_req *rq = &qp->xp.req;
	const struct dray_hw_swqe *w = &rq->cur_wqe;
	struct dray_xp_swqe *m = dray_xp_wqe(qp, rq->fetch);
	u32 mtu = dray_xp_mtu(qp);

	memset(m, 0, sizeof(*m));
	m->index = rq->fetch;
	m->psn = rq->psn;
	m->opcode = w->hdr.opcode;
	m->flags = w->hdr.flags;
	m->length = w->length;
	if (status) {
		dray_xp_comp_fail(m, status, verr);
	} else if (dray_hw_wqe_is_local(w->hdr.opcode)) {
		m->state = DRAY_XP_WQE_DONE;
	} else if (w->hdr.opcode != DRAY_WQE_RDMA_READ &&
		   dray_xp_is_rd_atomic(w->hdr.opcode)) {
		/* Atomics, ATOMIC_WRITE and FLUSH: one packet, one slot. */
		m->npkts = 1;
		m->rd_slots = 1;
	} else {
		m->npkts = dray_wire_npkts(w->length, mtu);
		if (w->hdr.opcode == DRAY_WQE_RDMA_READ)
			m->rd_slots = req_read_slots(qp, m->npkts);
	}
	rq->rd_atomic += m->rd_slots;
	rq->fetch++;
	qp->sq.fetched = rq->fetch;
	rq->cur_pkt = 0;
}

/* Make cur_wqe hold WQE @m again (retransmission): it must not change. */
static int req_load(struct dray_hw *hw, struct dray_hw_qp *qp,
		    const struct dray_xp_swqe *m, u8 *verr)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_hw_swqe *w = &rq->cur_wqe;
	int st;

	if (rq->cur_valid && rq->cur_index == m->index)
		return 0;
	rq->cur_valid = false;
	st = dray_hw_sq_fetch(hw, qp, m->index, w);
	if (st) {
		*verr = DRAY_VERR_BAD_WQE;
		return st;
	}
	if (w->hdr.opcode != m->opcode || w->length != m->length ||
	    (w->hdr.flags ^ m->flags) & DRAY_WQE_F_INLINE) {
		*verr = DRAY_VERR_WQE_CHANGED;
		return DRAY_CQE_ST_LOC_QP_OP_ERR;
	}
	rq->cur_valid = true;
	rq->cur_index = m->index;
	return 0;
}

/*
 * Does the packet about to fill the window ask for an ACK? Only if none
 * of the last quarter window's packets did: one that did is still
 * unacknowledged (it is inside the full window), and its ACK opens the
 * window again. Asking on every packet that fills it would make the
 * responder acknowledge every packet while the window is the limit, and
 * each ACK would let one more packet go.
 */
static bool req_window_ack(const struct dray_xp_req *rq)
{
	return dray_xp_span(rq->una, rq->psn) + 1 >= rq->win.cwnd &&
	       rq->noack + 1 >= max_t(u32, rq->win.cwnd / 4, 1);
}

/* Should the packet ending at the cursor ask for an ACK? */
static bool req_want_ack(struct dray_hw_qp *qp, const struct dray_xp_swqe *m,
			 bool last)
{
	struct dray_xp_req *rq = &qp->xp.req;

	if (dray_xp_uc(qp))
		return false;
	if (rq->ackreq || rq->noack + 1 >= DRAY_XP_ACKREQ_EVERY ||
	    req_window_ack(rq))
		return true;
	if (!last)
		return false;
	return (m->flags & DRAY_WQE_F_SIGNALED) ||
	       (qp->flags & DRAY_QP_F_SQ_SIG_ALL) ||
	       rq->fetch - rq->head >= DRAY_XP_MAX_WQE / 2 ||
	       qp->state != DRAY_QPS_RTS || qp->sq_draining ||
	       (rq->cur + 1 == rq->fetch && !dray_hw_sq_pending(qp));
}

/*
 * The response packets one READ request starting at packet @n of @m asks
 * for: up to the end of @n's piece of DRAY_XP_READ_PKTS packets. A READ
 * longer than that is asked for piece by piece, one request outstanding
 * per WQE (req_read_waits()), so that the responder's burst fits what
 * the port can take (a responder such as rxe answers a request of
 * thousands of packets back to back) and a READ occupies one responder
 * resource however long it is. The pieces are fixed, so that a request
 * sent again after a loss never reaches past the one it repeats: a
 * responder answers a duplicate READ only within the original.
 */
static u32 req_read_pkts(const struct dray_xp_swqe *m, u32 n)
{
	u32 end = (n / DRAY_XP_READ_PKTS + 1) * DRAY_XP_READ_PKTS;

	return min(m->npkts, end) - n;
}

/**
 * dray_xp_req_read_waits() - must the next request of READ @m wait?
 * @qp: the QP, its cursor in @m
 * @m: the WQE at the cursor
 *
 * It waits while the READ has as many pieces in flight as the initiator
 * depth it holds: pieces with packets asked for (before the cursor) and
 * not placed yet. After a go-back the cursor may sit at or before the
 * packets placed: nothing is in flight then.
 */
bool dray_xp_req_read_waits(const struct dray_hw_qp *qp,
			    const struct dray_xp_swqe *m)
{
	u32 cur = qp->xp.req.cur_pkt, placed = m->resp_pkts;

	return m->opcode == DRAY_WQE_RDMA_READ && cur > placed &&
	       DIV_ROUND_UP(cur, DRAY_XP_READ_PKTS) -
	       placed / DRAY_XP_READ_PKTS >= m->rd_slots;
}

/* Build the header of packet @n of @m; returns its payload length. */
static u32 req_build(struct dray_hw_qp *qp, struct dray_xp_swqe *m, u32 n,
		     struct dray_pkt *pkt, bool *last)
{
	struct dray_xp_req *rq = &qp->xp.req;
	const struct dray_sq_wqe *h = &rq->cur_wqe.hdr;
	u32 mtu = dray_xp_mtu(qp);
	u64 off = (u64)n * mtu;
	u32 pos, pkts;

	pkt->pkey = DRAY_PKEY_DEFAULT;
	pkt->qpn = qp->dest_qpn;
	pkt->psn = rq->psn;
	/* XRC: every request names the peer's XRC SRQ (its XRCETH). */
	pkt->xrc_srqn = le32_to_cpu(h->xrc_srqn) & DRAY_XRC_SRQN_MASK;
	*last = true;

	switch (m->opcode) {
	case DRAY_WQE_RDMA_READ:
		/*
		 * One request asks for one piece (req_read_pkts()); a
		 * retransmission for the part of it not received yet.
		 */
		pkts = req_read_pkts(m, n);
		pkt->opcode = DRAY_OP_READ_REQUEST;
		pkt->va = le64_to_cpu(h->u.rdma.remote_addr) + off;
		pkt->rkey = le32_to_cpu(h->u.rdma.rkey);
		pkt->dma_len = m->length > off ?
			       min_t(u64, m->length - off, (u64)pkts * mtu) :
			       0;
		*last = n + pkts >= m->npkts;
		return 0;
	case DRAY_WQE_ATOMIC_CMP_SWP:
		pkt->opcode = DRAY_OP_CMP_SWAP;
		pkt->compare = le64_to_cpu(h->u.atomic.compare_add);
		pkt->swap_add = le64_to_cpu(h->u.atomic.swap);
		break;
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		pkt->opcode = DRAY_OP_FETCH_ADD;
		pkt->swap_add = le64_to_cpu(h->u.atomic.compare_add);
		break;
	case DRAY_WQE_ATOMIC_WRITE:
		/* The 8 bytes are the payload (dray_hw_sq_fetch()). */
		pkt->opcode = DRAY_OP_ATOMIC_WRITE;
		pkt->va = le64_to_cpu(h->u.atomic_write.remote_addr);
		pkt->rkey = le32_to_cpu(h->u.atomic_write.rkey);
		pkt->dma_len = sizeof(u64);
		return sizeof(u64);
	case DRAY_WQE_FLUSH:
		pkt->opcode = DRAY_OP_FLUSH;
		pkt->va = le64_to_cpu(h->u.flush.remote_addr);
		pkt->rkey = le32_to_cpu(h->u.flush.rkey);
		pkt->dma_len = le32_to_cpu(h->u.flush.length);
		pkt->flush_type = h->u.flush.type;
		pkt->flush_level = h->u.flush.level;
		return 0;
	default:
		pos = dray_wire_pos(n, m->npkts);
		pkt->opcode = dray_wire_req_opcode(m->opcode, pos);
		*last = pos & DRAY_OPF_END;
		if ((pos & DRAY_OPF_START) &&
		    (dray_opcodes[pkt->opcode].flags & DRAY_OPF_RETH)) {
			pkt->va = le64_to_cpu(h->u.rdma.remote_addr);
			pkt->rkey = le32_to_cpu(h->u.rdma.rkey);
			pkt->dma_len = m->length;
		}
		if (*last) {
			pkt->imm = h->imm_data;
			pkt->se = m->flags & DRAY_WQE_F_SOLICITED;
			/* SEND with invalidate: the IETH of the last packet. */
			if (dray_opcodes[pkt->opcode].flags & DRAY_OPF_IETH)
				pkt->rkey = le32_to_cpu(h->u.inv.rkey);
		}
		pkt->ackreq = req_want_ack(qp, m, *last);
		return dray_wire_seg_len(m->length, mtu, n);
	}
	pkt->va = le64_to_cpu(h->u.atomic.remote_addr);
	pkt->rkey = le32_to_cpu(h->u.atomic.rkey);
	return 0;
}

/*
 * Send the packet at the cursor and advance it. Returns 0, -ENOMEM (try
 * again later), or a DRAY_CQE_ST_* status to fail the WQE with.
 */
static int req_send_pkt(struct dray_hw *hw, struct dray_hw_qp *qp,
			struct dray_xp_swqe *m, u8 *verr)
{
	struct dray_xp_req *rq = &qp->xp.req;
	const struct dray_hw_swqe *w = &rq->cur_wqe;
	u32 mtu = dray_xp_mtu(qp);
	u32 n = rq->cur_pkt, len;
	u64 off = (u64)n * mtu;
	struct dray_pkt pkt = {};
	struct sk_buff *skb;
	bool last, zcopy;
	u8 st;

	len = req_build(qp, m, n, &pkt, &last);
	/*
	 * A UC WQE completes when its last packet is handed to the port:
	 * copy, so that the buffer may be reused at once.
	 */
	zcopy = len > DRAY_XP_COPYBREAK && !dray_xp_uc(qp) &&
		!(w->hdr.flags & DRAY_WQE_F_INLINE) &&
		dray_hw_sge_frags(w->sge, w->num_sge, off, len) <
		MAX_SKB_FRAGS;
	skb = dray_xp_skb_alloc(hw, qp, &pkt, len, zcopy);
	if (!skb)
		return -ENOMEM;
	if (len) {
		st = dray_hw_sge_gather(hw, qp->pdn, skb, w, off, len, zcopy);
		if (st) {
			kfree_skb(skb);
			*verr = DRAY_VERR_LOCAL_SGE;
			return st;
		}
	}
	dray_xp_xmit(hw, qp, skb);
	if (dray_psn_cmp(rq->psn, rq->max_psn) < 0)
		qp->xp.stats.retx_pkts++;

	if (m->opcode == DRAY_WQE_RDMA_READ) {
		u32 pkts = req_read_pkts(m, n);

		rq->psn = dray_psn_add(rq->psn, pkts);
		rq->cur_pkt = n + pkts;
	} else {
		rq->psn = dray_psn_add(rq->psn, 1);
		rq->cur_pkt++;
	}
	if (last) {
		rq->cur++;
		rq->cur_pkt = 0;
	}
	if (dray_psn_cmp(rq->psn, rq->max_psn) > 0)
		rq->max_psn = rq->psn;
	if (dray_xp_uc(qp)) {
		/* Nothing is acknowledged: sent is done. */
		rq->una = rq->psn;
		if (last)
			m->state = DRAY_XP_WQE_DONE;
		return 0;
	}
	if (pkt.ackreq) {
		rq->noack = 0;
		rq->ackreq = false;
	} else {
		rq->noack++;
	}
	if (!rq->rto_deadline && req_rto(qp))
		req_arm_timers(qp);
	return 0;
}

/**
 * dray_xp_req_send() - send what the windows allow
 * @hw: the device
 * @qp: the QP
 *
 * Resends from the cursor after a rewind, then starts new WQEs while the
 * PSN window, the WQE window, fences and the initiator depth allow.
 */
void dray_xp_req_send(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;

	dray_xp_assert_locked(hw);
	if ((qp->state != DRAY_QPS_RTS && qp->state != DRAY_QPS_SQD) ||
	    qp->xp.err || rq->rnr_wait)
		return;

	rq->stall = false;
	for (;;) {
		struct dray_xp_swqe *m;
		u8 verr = 0;
		int st;

		if (dray_xp_span(rq->una, rq->psn) >= rq->win.cwnd)
			break;
		if (rq->cur == rq->fetch) {
			if (!req_may_fetch(qp))
				break;
			st = req_peek(hw, qp, &verr);
			if (st == -EAGAIN) {
				rq->blocked = true;
				break;
			}
			if (!st && dray_hw_wqe_is_local(rq->cur_wqe.hdr.opcode))
				st = req_local(hw, qp, &verr);
			req_commit(qp, st, verr);
			if (st)
				break;
		}
		m = dray_xp_wqe(qp, rq->cur);
		if (m->state == DRAY_XP_WQE_FAILED)
			break;
		if (m->state == DRAY_XP_WQE_DONE) {
			/* Cannot be after a rewind to una; skip defensively. */
			rq->psn = dray_psn_add(m->psn, m->npkts);
			rq->cur++;
			rq->cur_pkt = 0;
			continue;
		}
		if (dray_xp_req_read_waits(qp, m))
			break;
		st = req_load(hw, qp, m, &verr);
		if (!st)
			st = req_send_pkt(hw, qp, m, &verr);
		if (st == -ENOMEM) {
			rq->stall = true;
			break;
		}
		if (st) {
			dray_xp_comp_fail(m, st, verr);
			break;
		}
	}
	dray_xp_comp_advance(hw, qp);
}

/* The newest packet sent, as a probe asks for it again. */
static u32 req_probe_psn(struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	u32 probe = dray_psn_add(rq->psn, DRAY_PSN_MASK), piece;
	struct dray_xp_swqe *m = dray_xp_req_find(qp, probe);

	if (!m || m->opcode != DRAY_WQE_RDMA_READ)
		return probe;
	/*
	 * A READ: its piece again, from the first response missing. A
	 * responder takes a READ asked again from further back than the
	 * last time as a stale copy, so the probe must not ask from its
	 * last packet when a go-back may have to ask from una next.
	 */
	piece = dray_psn_add(m->psn, dray_xp_span(m->psn, probe) /
				     DRAY_XP_READ_PKTS * DRAY_XP_READ_PKTS);
	return dray_psn_cmp(rq->una, piece) > 0 ? rq->una : piece;
}

/* Send the packet at @psn again (the cursor moves: the caller saved it). */
static bool req_probe_one(struct dray_hw *hw, struct dray_hw_qp *qp, u32 psn)
{
	struct dray_xp_req *rq = &qp->xp.req;
	struct dray_xp_swqe *m;
	u8 verr = 0;

	dray_xp_req_rewind(qp, psn);
	if (rq->cur == rq->fetch)
		return false;
	m = dray_xp_wqe(qp, rq->cur);
	/* A failure is left to the ACK timer, whose resend meets it again. */
	return m->state == DRAY_XP_WQE_SENDING &&
	       !req_load(hw, qp, m, &verr) && !req_send_pkt(hw, qp, m, &verr);
}

/*
 * The tail probe: no packet was acknowledged for an eighth of the ACK
 * timeout. A lost last packet, lost READ responses at the end of a READ
 * or a lost ACK leave the requester nothing to learn it from but its ACK
 * timer, which for rdma_cm's QPs (the kernel's storage ULPs) is 2.1 s on
 * RoCE. Send two packets again now, with AckReq: the oldest one not
 * acknowledged and the newest one sent (one if they are the same), and
 * leave the cursor and the window where they are. The probe reaches the
 * responder after every packet sent before it, so the answers say what
 * was lost:
 *  - nothing: both are duplicates, ACK'd up to the newest PSN;
 *  - the oldest: it arrives now (a responder that NAK'd it before, when
 *    the NAK or the go-back it started was lost too, takes nothing else
 *    until it comes);
 *  - the newest only: it arrives now;
 *  - a hole between them: a sequence NAK (or a READ response past the one
 *    expected, or an ACK past a READ) for the newest, and go-back-N from
 *    the hole, which the probe allows once more.
 * A probe that finds nothing lost costs two packets and their ACKs; it
 * never makes the requester resend what is still in flight. A READ is
 * asked again for its piece from the first response missing
 * (req_probe_psn()). No retry is counted: the ACK timer runs on and alone
 * uses up retry_cnt, as IBTA has it. In the middle of a go-back too,
 * whose own packets may be the ones lost. One probe per timer period;
 * none during an RNR wait, none while nothing was sent since the last
 * go-back, and none that fires a whole delay late (the engine did not
 * run, so the answer may be waiting in the port: as for late ACK timers).
 */
static void req_probe(struct dray_hw *hw, struct dray_hw_qp *qp,
		      unsigned long now)
{
	struct dray_xp_req *rq = &qp->xp.req;
	unsigned long deadline = rq->probe_deadline;
	u32 psn = rq->psn, cur = rq->cur, cur_pkt = rq->cur_pkt;
	u32 noack = rq->noack, una = rq->una, newest;
	bool ackreq = rq->ackreq, sent;

	rq->probe_deadline = 0;
	if (una == rq->max_psn || una == psn || rq->rnr_wait ||
	    time_after_eq(now, deadline + req_probe_delay(qp)))
		return;
	newest = req_probe_psn(qp);
	sent = req_probe_one(hw, qp, una);
	if (newest != una)
		sent |= req_probe_one(hw, qp, newest);
	if (sent) {
		/* Its answer may start a go-back: allow one. */
		rq->gone_back = false;
		qp->xp.stats.tail_probes++;
		trace_dray_retransmit(hw->ndev, qp->qpn, una,
				      DRAY_TRACE_RETX_PROBE, rq->retry);
	}
	/* Back to where sending was. */
	rq->psn = psn;
	rq->cur = cur;
	rq->cur_pkt = cur_pkt;
	rq->noack = noack;
	rq->ackreq = ackreq;
}

/* The requester's timers: RNR wait over, tail probe, local ACK timeout. */
void dray_xp_req_timer(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_xp_req *rq = &qp->xp.req;
	unsigned long now = jiffies, deadline;
	struct dray_xp_swqe *m;

	if ((qp->state != DRAY_QPS_RTS && qp->state != DRAY_QPS_SQD) ||
	    qp->xp.err)
		return;

	if (rq->rnr_wait && time_after_eq(now, rq->rnr_deadline)) {
		rq->rnr_wait = false;
		rq->rnr_deadline = 0;
		dray_xp_req_send(hw, qp);
		if (qp->xp.err)
			return;
	}
	if (rq->probe_deadline && time_after_eq(now, rq->probe_deadline)) {
		req_probe(hw, qp, now);
		if (qp->xp.err)
			return;
	}
	if (!rq->rto_deadline || time_before(now, rq->rto_deadline)) {
		if (rq->stall)
			dray_xp_req_send(hw, qp);
		return;
	}
	deadline = rq->rto_deadline;

	rq->rto_deadline = 0;
	if (rq->una == rq->max_psn || rq->rnr_wait)
		return;
	m = dray_xp_req_find(qp, rq->una);
	if (!m)
		return;
	/*
	 * A timer that fires a whole timeout late means the engine itself
	 * did not run (the host starved it; a NIC's timers are never late):
	 * the ACK may be waiting in the port, and the peer, on the same
	 * host, was likely starved too. That is no loss: give the peer a
	 * fresh timeout and count no retry. Only timers that fire on time
	 * use up retry_cnt.
	 */
	if (time_after_eq(now, deadline + req_rto(qp))) {
		rq->rto_deadline = (now + req_rto(qp)) ?: 1;
		qp->xp.stats.late_timers++;
		return;
	}
	if (!rq->retry) {
		xp_dbg(hw, qp, "transport retries exhausted at PSN %#x\n",
		       rq->una);
		dray_xp_comp_fail(m, DRAY_CQE_ST_RETRY_EXC_ERR,
				  DRAY_VERR_RETRY_EXC);
		dray_xp_comp_advance(hw, qp);
		return;
	}
	rq->retry--;
	rq->gone_back = true;
	dray_cwnd_loss(&rq->win, true);
	qp->xp.stats.timeouts++;
	trace_dray_retransmit(hw->ndev, qp->qpn, rq->una,
			      DRAY_TRACE_RETX_TIMEOUT, rq->retry);
	dray_xp_req_rewind(qp, rq->una);
	dray_xp_req_send(hw, qp);
}
