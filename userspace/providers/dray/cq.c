// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: completion queue data path. CQEs are read straight from
 * the CQ ring (<dray/dray_queue.h>); a CQE is valid when its phase bit
 * matches the pass of the consumer index. Arming writes the CQ's doorbell
 * record; neither polling nor arming makes a system call.
 */
#include <errno.h>
#include <string.h>

#include <dray/dray_verr.h>

#include "dray.h"

static inline struct dray_cqe *dray_cq_entry(const struct dray_cq *cq,
					     uint32_t index)
{
	return &cq->ring[dray_ring_slot(index, cq->depth)];
}

/* Whether the device has written CQE @index (on this pass of the ring). */
static inline bool dray_cqe_valid(const struct dray_cq *cq, uint32_t index)
{
	struct dray_cqe *cqe = dray_cq_entry(cq, index);
	uint8_t flags = atomic_load_explicit((_Atomic(uint8_t) *)&cqe->flags,
					     memory_order_relaxed);

	return (flags & DRAY_CQE_F_PHASE) == dray_ring_phase(index, cq->depth);
}

/* The CQE at the consumer index, or NULL. Context: cq->lock held. */
static inline struct dray_cqe *dray_cq_peek(struct dray_cq *cq)
{
	if (!dray_cqe_valid(cq, cq->consumer))
		return NULL;
	/*
	 * The device writes the body of a CQE before its flags byte: read
	 * nothing else of it before having seen a valid phase bit.
	 */
	udma_from_device_barrier();
	return dray_cq_entry(cq, cq->consumer);
}

/*
 * Tell the device which CQEs are consumed (their slots may be reused).
 * Context: cq->lock held.
 */
static inline void dray_cq_publish_consumer(struct dray_cq *cq)
{
	if (cq->consumer == cq->consumer_published)
		return;
	/*
	 * Release: every read of the consumed CQEs happens before the device
	 * can see their slots as free and overwrite them.
	 */
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->db->consumer,
			      htole32(cq->consumer), memory_order_release);
	cq->consumer_published = cq->consumer;
}

static enum ibv_wc_status dray_wc_status(uint8_t status)
{
	switch (status) {
	case DRAY_CQE_ST_SUCCESS:
		return IBV_WC_SUCCESS;
	case DRAY_CQE_ST_LOC_LEN_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case DRAY_CQE_ST_LOC_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case DRAY_CQE_ST_LOC_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case DRAY_CQE_ST_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case DRAY_CQE_ST_MW_BIND_ERR:
		return IBV_WC_MW_BIND_ERR;
	case DRAY_CQE_ST_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case DRAY_CQE_ST_LOC_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case DRAY_CQE_ST_REM_INV_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case DRAY_CQE_ST_REM_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case DRAY_CQE_ST_REM_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case DRAY_CQE_ST_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case DRAY_CQE_ST_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case DRAY_CQE_ST_FATAL_ERR:
		return IBV_WC_FATAL_ERR;
	case DRAY_CQE_ST_GENERAL_ERR:
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static enum ibv_wc_opcode dray_wc_opcode(const struct dray_cqe *cqe)
{
	switch (cqe->opcode) {
	case DRAY_CQE_SEND:
		return IBV_WC_SEND;
	case DRAY_CQE_RDMA_WRITE:
		return IBV_WC_RDMA_WRITE;
	case DRAY_CQE_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case DRAY_CQE_COMP_SWAP:
		return IBV_WC_COMP_SWAP;
	case DRAY_CQE_FETCH_ADD:
		return IBV_WC_FETCH_ADD;
	case DRAY_CQE_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case DRAY_CQE_BIND_MW:
		return IBV_WC_BIND_MW;
	case DRAY_CQE_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	case DRAY_CQE_FLUSH:
		return IBV_WC_FLUSH;
	case DRAY_CQE_RECV:
		return IBV_WC_RECV;
	case DRAY_CQE_RECV_RDMA_IMM:
		return IBV_WC_RECV_RDMA_WITH_IMM;
	default:
		/* Not defined for an error completion; keep the queue. */
		return (cqe->flags & DRAY_CQE_F_SEND_QUEUE) ? IBV_WC_SEND :
							      IBV_WC_RECV;
	}
}

static unsigned int dray_wc_flags(const struct dray_cqe *cqe)
{
	unsigned int flags = 0;

	if (cqe->flags & DRAY_CQE_F_IMM)
		flags |= IBV_WC_WITH_IMM;
	else if (cqe->flags & DRAY_CQE_F_INV)
		flags |= IBV_WC_WITH_INV;
	if (cqe->flags & DRAY_CQE_F_GRH)
		flags |= IBV_WC_GRH;
	return flags;
}

/*
 * A receive of an XRC target QP (which may be another process's): the
 * CQE names the XRC SRQ, which must be one of this context's on this CQ,
 * and the WR by its tag. Context: cq->lock held.
 */
static int dray_cq_retire_xrc(struct dray_cq *cq, const struct dray_cqe *cqe,
			      uint64_t *wr_id)
{
	struct dray_context *ctx = to_dray_ctx(cq->vcq.cq.context);
	uint32_t srqn = le32toh(cqe->src_qpn);
	uint32_t tag = le32toh(cqe->wqe_index);
	struct dray_srq *srq = dray_xsrq_lookup(ctx, srqn);

	if (unlikely(!srq || srq->vsrq.cq != &cq->vcq.cq ||
		     (cqe->flags & DRAY_CQE_F_SEND_QUEUE) ||
		     !(cqe->flags & DRAY_CQE_F_SRQ) ||
		     !dray_srq_retire(srq, tag, wr_id))) {
		verbs_err(&ctx->ibv_ctx,
			  "CQ %u: dropped a CQE of XRC SRQ %u tag %u (QP %u), not posted there\n",
			  cq->cqn, srqn, tag, le32toh(cqe->qpn));
		return EINVAL;
	}
	return 0;
}

/*
 * Match a CQE to its QP and WQE and retire the WQE: for the SQ, the WQE
 * at wqe_index and every earlier one (unsignaled WQEs have no CQE of
 * their own); for the RQ, which completes in order, likewise. A CQE that
 * names no QP of this CQ or a WQE that is not outstanding is dropped:
 * the device is not trusted to be right, and a wrong wr_id must never be
 * reported.
 * Context: cq->lock held.
 */
static int dray_cq_retire(struct dray_cq *cq, const struct dray_cqe *cqe,
			  uint64_t *wr_id)
{
	struct dray_context *ctx = to_dray_ctx(cq->vcq.cq.context);
	bool send = cqe->flags & DRAY_CQE_F_SEND_QUEUE;
	uint32_t qpn = le32toh(cqe->qpn);
	uint32_t index = le32toh(cqe->wqe_index);
	uint32_t tail, posted;
	struct dray_qp *qp;
	struct dray_wq *wq;

	if (cqe->flags2 & DRAY_CQE_F2_XRC)
		return dray_cq_retire_xrc(cq, cqe, wr_id);
	qp = cq->last_qp;
	if (!qp || qp->vqp.qp.qp_num != qpn) {
		qp = dray_qp_lookup(ctx, qpn);
		if (unlikely(!qp)) {
			verbs_err(&ctx->ibv_ctx,
				  "CQ %u: dropped a CQE of unknown QP %u\n",
				  cq->cqn, qpn);
			return EINVAL;
		}
		cq->last_qp = qp;
	}
	if (unlikely((send ? qp->vqp.qp.send_cq : qp->vqp.qp.recv_cq) !=
		     &cq->vcq.cq)) {
		verbs_err(&ctx->ibv_ctx,
			  "CQ %u: dropped a CQE of QP %u, whose %s CQ it is not\n",
			  cq->cqn, qpn, send ? "send" : "receive");
		return EINVAL;
	}

	if (!send && qp->vqp.qp.srq) {
		/* Any order: the CQE names the WR by its SRQ tag. */
		if (unlikely(!(cqe->flags & DRAY_CQE_F_SRQ) ||
			     !dray_srq_retire(to_dray_srq(qp->vqp.qp.srq),
					      index, wr_id))) {
			verbs_err(&ctx->ibv_ctx,
				  "CQ %u: dropped a CQE of QP %u SRQ tag %u, not posted\n",
				  cq->cqn, qpn, index);
			return EINVAL;
		}
		return 0;
	}
	wq = send ? &qp->sq : &qp->rq;
	tail = atomic_load_explicit(&wq->tail, memory_order_relaxed);
	posted = dray_shared_load32(&wq->db->producer);
	if (unlikely(index - tail >= posted - tail)) {
		verbs_err(&ctx->ibv_ctx,
			  "CQ %u: dropped a CQE of QP %u %s index %u, outstanding are [%u, %u)\n",
			  cq->cqn, qpn, send ? "SQ" : "RQ", index, tail,
			  posted);
		return EINVAL;
	}

	*wr_id = wq->wrid[dray_ring_slot(index, wq->depth)];
	/* wrid[] is read: from here on a poster may reuse the slots. */
	atomic_store_explicit(&wq->tail, index + 1, memory_order_release);
	return 0;
}

/*
 * Whether the device has let go of the context of @cq. Removal destroys
 * every object of a live context, then the RDMA core replaces the
 * doorbell page with a page of zeros, so its magic is gone: by then the
 * device writes no CQE any more. Looked at when the ring is empty only.
 * Context: cq->lock held.
 */
static bool dray_cq_gone(struct dray_cq *cq)
{
	struct dray_context *ctx = to_dray_ctx(cq->vcq.cq.context);

	if (atomic_load_explicit(&ctx->gone, memory_order_relaxed))
		return true;
	if (likely(dray_shared_load32(&ctx->uar->dev.magic) == DRAY_UAR_MAGIC))
		return false;
	atomic_store_explicit(&ctx->gone, true, memory_order_relaxed);
	/* The CQEs the device wrote before letting go are read after this. */
	udma_from_device_barrier();
	return true;
}

/* Take the oldest outstanding WQE of @wq, if any. Context: its CQ's lock. */
static bool dray_wq_gone_take(struct dray_wq *wq, uint32_t *index,
			      uint64_t *wr_id)
{
	uint32_t tail = atomic_load_explicit(&wq->tail, memory_order_relaxed);
	uint32_t posted = dray_shared_load32(&wq->db->producer);

	/* The record is the process's own memory: never trust it further. */
	if (tail == posted || posted - tail > wq->depth)
		return false;
	*index = tail;
	*wr_id = wq->wrid[dray_ring_slot(tail, wq->depth)];
	atomic_store_explicit(&wq->tail, tail + 1, memory_order_release);
	return true;
}

/*
 * The device is gone and the ring is drained: complete the oldest WQE
 * still outstanding on a send or receive queue of this CQ with
 * IBV_WC_WR_FLUSH_ERR (vendor_err DRAY_VERR_DEVICE_GONE), as the device
 * would have flushed it, so that nothing posted is lost silently; WRs
 * posted from now on are flushed the same way. Receives posted to an
 * SRQ are not: they belong to no QP (neither would an error state of
 * the QP flush them). cq->cur_cqe points at the made-up CQE.
 * Returns ENOENT when nothing is outstanding. Context: cq->lock held
 * (QPs of this CQ stay in the table while it is).
 */
static int dray_cq_gone_flush(struct dray_cq *cq, uint64_t *wr_id)
{
	struct dray_context *ctx = to_dray_ctx(cq->vcq.cq.context);
	struct dray_cqe *cqe = &cq->gone_cqe;
	uint32_t i, j, index;
	struct dray_qp *qp;
	uint8_t flags;

	for (i = 0; i < ARRAY_SIZE(ctx->qp_table); i++) {
		struct dray_qp **table;

		table = atomic_load_explicit(&ctx->qp_table[i],
					     memory_order_acquire);
		for (j = 0; table && j < DRAY_QP_TABLE_SIZE; j++) {
			qp = table[j];
			if (!qp)
				continue;
			flags = DRAY_CQE_F_SEND_QUEUE;
			if (qp->vqp.qp.send_cq == &cq->vcq.cq &&
			    dray_wq_gone_take(&qp->sq, &index, wr_id))
				goto found;
			flags = 0;
			if (qp->vqp.qp.recv_cq == &cq->vcq.cq &&
			    !qp->vqp.qp.srq && qp->rq.buf &&
			    dray_wq_gone_take(&qp->rq, &index, wr_id))
				goto found;
		}
	}
	cq->cur_cqe = NULL;
	return ENOENT;

found:
	memset(cqe, 0, sizeof(*cqe));
	cqe->qpn = htole32(qp->vqp.qp.qp_num);
	cqe->wqe_index = htole32(index);
	cqe->status = DRAY_CQE_ST_WR_FLUSH_ERR;
	cqe->vendor_err = DRAY_VERR_DEVICE_GONE;
	cqe->flags = flags;
	cq->cur_cqe = cqe;
	return 0;
}

/*
 * Advance to the next valid CQE of a live QP; cq->cur_cqe points at it.
 * Returns ENOENT when the CQ is empty. Context: cq->lock held.
 */
static int dray_cq_next(struct dray_cq *cq, uint64_t *wr_id)
{
	struct dray_cqe *cqe;

	for (;;) {
		cqe = dray_cq_peek(cq);
		if (unlikely(!cqe && dray_cq_gone(cq))) {
			/* A CQE may have come before the device let go. */
			cqe = dray_cq_peek(cq);
			if (!cqe)
				return dray_cq_gone_flush(cq, wr_id);
		}
		if (!cqe) {
			cq->cur_cqe = NULL;
			return ENOENT;
		}
		cq->consumer++;
		if (likely(!dray_cq_retire(cq, cqe, wr_id))) {
			cq->cur_cqe = cqe;
			return 0;
		}
	}
}

/*
 * RoCE frames carry no service level. For a UD receive, RoCE NICs of the
 * ConnectX line report the received frame's kind in the SL instead
 * (bit 3: a UDP header, that is RoCEv2; bits 2:0: 1 IPv6, 2 IPv4), and
 * middleware relies on it: UCX's UD transport takes the length of the
 * destination address in the GRH area from it, and with an SL of 0 it
 * compares 16 bytes of an IPv4 header with its GIDs and drops every
 * datagram. dray reports the same; it ignores an address handle's SL.
 */
#define DRAY_WC_SL_ROCE_UDP	0x8
#define DRAY_WC_SL_IPV6		0x1
#define DRAY_WC_SL_IPV4		0x2

static uint8_t dray_wc_sl(const struct dray_cqe *cqe)
{
	if (!(cqe->flags & DRAY_CQE_F_GRH))
		return 0;
	return DRAY_WC_SL_ROCE_UDP | ((cqe->flags & DRAY_CQE_F_IPV6) ?
				      DRAY_WC_SL_IPV6 : DRAY_WC_SL_IPV4);
}

/* A UD receive's sender; nothing for XRC (src_qpn names the SRQ there). */
static uint32_t dray_cqe_src_qp(const struct dray_cqe *cqe)
{
	return (cqe->flags2 & DRAY_CQE_F2_XRC) ? 0 : le32toh(cqe->src_qpn);
}

static void dray_cqe_to_wc(const struct dray_cqe *cqe, uint64_t wr_id,
			   struct ibv_wc *wc)
{
	wc->wr_id = wr_id;
	wc->status = dray_wc_status(cqe->status);
	wc->opcode = dray_wc_opcode(cqe);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32toh(cqe->byte_len);
	/* Network order, as on the wire and as ibv_wc wants it. */
	wc->imm_data = (cqe->flags & DRAY_CQE_F_IMM) ? cqe->imm_data : 0;
	/* The same field: the key a SEND with invalidate named, host order. */
	if (cqe->flags & DRAY_CQE_F_INV)
		wc->invalidated_rkey = le32toh(cqe->inv_rkey);
	wc->qp_num = le32toh(cqe->qpn);
	wc->src_qp = dray_cqe_src_qp(cqe);
	wc->wc_flags = dray_wc_flags(cqe);
	wc->pkey_index = 0;
	wc->slid = 0;
	wc->sl = dray_wc_sl(cqe);
	wc->dlid_path_bits = 0;
}

int dray_poll_cq(struct ibv_cq *ibcq, int nwc, struct ibv_wc *wc)
{
	struct dray_cq *cq = to_dray_cq(ibcq);
	uint64_t wr_id;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < nwc; n++) {
		if (dray_cq_next(cq, &wr_id))
			break;
		dray_cqe_to_wc(cq->cur_cqe, wr_id, &wc[n]);
	}
	cq->cur_cqe = NULL;
	dray_cq_publish_consumer(cq);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Request an event for the next (solicited) completion: the device
 * samples arm_flags when it sees arm_seq change.
 */
int dray_arm_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct dray_cq *cq = to_dray_cq(ibcq);

	pthread_spin_lock(&cq->lock);
	dray_shared_store32(&cq->db->arm_flags,
			    solicited_only ? DRAY_CQ_ARM_SOLICITED : 0);
	/* arm_flags must be visible to the device before the new arm_seq. */
	udma_to_device_barrier();
	cq->arm_seq++;
	dray_shared_store32(&cq->db->arm_seq, cq->arm_seq);
	/*
	 * Full barrier, store -> load: the caller polls the CQ once more
	 * after arming (to catch a CQE written just before the arm). The
	 * new arm_seq must be globally visible before that poll reads any
	 * CQE, else the device may write a CQE, still read the old arm_seq
	 * and raise no event while the poll misses the CQE. The device
	 * mirrors this (writes the CQE, full barrier, reads arm_seq).
	 */
	atomic_thread_fence(memory_order_seq_cst);
	pthread_spin_unlock(&cq->lock);
	return 0;
}

/*
 * Is @cqe one a clean removes: of QP @qpn (an XRC target's receives are
 * their SRQ's, never the QP's), or with @xsrqn set of that XRC SRQ?
 */
static bool dray_cqe_match(const struct dray_cqe *cqe, uint32_t qpn,
			   uint32_t xsrqn)
{
	if (cqe->flags2 & DRAY_CQE_F2_XRC)
		return xsrqn && le32toh(cqe->src_qpn) == xsrqn;
	return !xsrqn && le32toh(cqe->qpn) == qpn;
}

/*
 * Remove the CQEs of QP @qpn (or of XRC SRQ @xsrqn, if not 0) that are
 * in the ring and not yet consumed, by moving the other valid CQEs
 * towards the producer over them and consuming the freed slots. The
 * device does not write into valid, unconsumed slots, so it does not
 * race with this. The SRQ tags of removed receive completions (@srq: the
 * QP's SRQ or NULL) become free again.
 * Context: cq->lock held; the device writes no more CQEs for them.
 */
static void dray_cq_remove(struct dray_cq *cq, uint32_t qpn, uint32_t xsrqn,
			   struct dray_srq *srq)
{
	uint32_t end = cq->consumer;
	uint32_t removed = 0;
	uint32_t i;

	while (end - cq->consumer < cq->depth && dray_cqe_valid(cq, end))
		end++;
	/* As in dray_cq_peek(): bodies only after valid phase bits. */
	udma_from_device_barrier();

	for (i = end; i != cq->consumer;) {
		struct dray_cqe *src, *dst;
		uint8_t phase;

		i--;
		src = dray_cq_entry(cq, i);
		if (dray_cqe_match(src, qpn, xsrqn)) {
			uint64_t wr_id;

			if (srq && (src->flags & DRAY_CQE_F_SRQ))
				dray_srq_retire(srq, le32toh(src->wqe_index),
						&wr_id);
			removed++;
			continue;
		}
		if (!removed)
			continue;
		/* dst is valid too: keep the phase of its own slot. */
		dst = dray_cq_entry(cq, i + removed);
		phase = dst->flags & DRAY_CQE_F_PHASE;
		memcpy(dst, src, offsetof(struct dray_cqe, flags));
		dst->flags = (src->flags & ~DRAY_CQE_F_PHASE) | phase;
	}

	cq->consumer += removed;
	if (!xsrqn && cq->last_qp && cq->last_qp->vqp.qp.qp_num == qpn)
		cq->last_qp = NULL;
	dray_cq_publish_consumer(cq);
}

void dray_cq_clean(struct dray_cq *cq, uint32_t qpn, struct dray_srq *srq)
{
	dray_cq_remove(cq, qpn, 0, srq);
}

void dray_cq_clean_xsrq(struct dray_cq *cq, uint32_t srqn)
{
	dray_cq_remove(cq, 0, srqn, NULL);
}

/* Extended poll API (ibv_start_poll / ibv_next_poll / ibv_end_poll) */

static void dray_cq_set_cur(struct dray_cq *cq, uint64_t wr_id)
{
	cq->vcq.cq_ex.wr_id = wr_id;
	cq->vcq.cq_ex.status = dray_wc_status(cq->cur_cqe->status);
}

static int dray_start_poll(struct ibv_cq_ex *ibcqx,
			   struct ibv_poll_cq_attr *attr)
{
	struct dray_cq *cq = to_dray_cq_ex(ibcqx);
	uint64_t wr_id;
	int err;

	if (unlikely(attr->comp_mask))
		return EINVAL;

	pthread_spin_lock(&cq->lock);
	err = dray_cq_next(cq, &wr_id);
	if (err) {
		/* Dropped CQEs may have been consumed. */
		dray_cq_publish_consumer(cq);
		pthread_spin_unlock(&cq->lock);
		return err;
	}
	dray_cq_set_cur(cq, wr_id);
	return 0;
}

static int dray_next_poll(struct ibv_cq_ex *ibcqx)
{
	struct dray_cq *cq = to_dray_cq_ex(ibcqx);
	uint64_t wr_id;
	int err;

	err = dray_cq_next(cq, &wr_id);
	if (!err)
		dray_cq_set_cur(cq, wr_id);
	return err;
}

static void dray_end_poll(struct ibv_cq_ex *ibcqx)
{
	struct dray_cq *cq = to_dray_cq_ex(ibcqx);

	cq->cur_cqe = NULL;
	dray_cq_publish_consumer(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode dray_read_opcode(struct ibv_cq_ex *ibcqx)
{
	return dray_wc_opcode(to_dray_cq_ex(ibcqx)->cur_cqe);
}

static uint32_t dray_read_vendor_err(struct ibv_cq_ex *ibcqx)
{
	return to_dray_cq_ex(ibcqx)->cur_cqe->vendor_err;
}

static uint32_t dray_read_byte_len(struct ibv_cq_ex *ibcqx)
{
	return le32toh(to_dray_cq_ex(ibcqx)->cur_cqe->byte_len);
}

static __be32 dray_read_imm_data(struct ibv_cq_ex *ibcqx)
{
	const struct dray_cqe *cqe = to_dray_cq_ex(ibcqx)->cur_cqe;

	/* ibv_wc_read_invalidated_rkey() reads the key, in host order, here. */
	if (cqe->flags & DRAY_CQE_F_INV)
		return (__force __be32)le32toh(cqe->inv_rkey);
	return (cqe->flags & DRAY_CQE_F_IMM) ? cqe->imm_data : 0;
}

static uint32_t dray_read_qp_num(struct ibv_cq_ex *ibcqx)
{
	return le32toh(to_dray_cq_ex(ibcqx)->cur_cqe->qpn);
}

static uint32_t dray_read_src_qp(struct ibv_cq_ex *ibcqx)
{
	return dray_cqe_src_qp(to_dray_cq_ex(ibcqx)->cur_cqe);
}

static unsigned int dray_read_wc_flags(struct ibv_cq_ex *ibcqx)
{
	return dray_wc_flags(to_dray_cq_ex(ibcqx)->cur_cqe);
}

/* RoCE has no LIDs. */
static uint32_t dray_read_slid(struct ibv_cq_ex *ibcqx)
{
	return 0;
}

static uint8_t dray_read_sl(struct ibv_cq_ex *ibcqx)
{
	return dray_wc_sl(to_dray_cq_ex(ibcqx)->cur_cqe);
}

static uint8_t dray_read_dlid_path_bits(struct ibv_cq_ex *ibcqx)
{
	return 0;
}

void dray_cq_fill_poll_ops(struct dray_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *ibcqx = &cq->vcq.cq_ex;

	ibcqx->start_poll = dray_start_poll;
	ibcqx->next_poll = dray_next_poll;
	ibcqx->end_poll = dray_end_poll;
	ibcqx->read_opcode = dray_read_opcode;
	ibcqx->read_vendor_err = dray_read_vendor_err;
	ibcqx->read_wc_flags = dray_read_wc_flags;

	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ibcqx->read_byte_len = dray_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ibcqx->read_imm_data = dray_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ibcqx->read_qp_num = dray_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ibcqx->read_src_qp = dray_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ibcqx->read_slid = dray_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ibcqx->read_sl = dray_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ibcqx->read_dlid_path_bits = dray_read_dlid_path_bits;
}
