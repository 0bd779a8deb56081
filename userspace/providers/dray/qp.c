// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: work queue data path. Posting writes WQEs straight into
 * the SQ/RQ rings (<dray/dray_queue.h>) and publishes them through the
 * queue's doorbell record; a system call is made only when the device
 * has reported (DRAY_UAR_F_NEED_WAKEUP) that its engine went idle.
 *
 * Every WR is validated before anything is written for it: a bad WR
 * stops the list there, *bad_wr points at it, the WRs before it are
 * posted, and a positive errno is returned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dray.h"

/* QP table (see struct dray_context) */

struct dray_qp *dray_qp_lookup(struct dray_context *ctx, uint32_t qpn)
{
	struct dray_qp **table;

	if (qpn >> DRAY_QPN_BITS)
		return NULL;
	table = atomic_load_explicit(&ctx->qp_table[qpn >> DRAY_QP_TABLE_SHIFT],
				     memory_order_acquire);
	return table ? table[qpn & DRAY_QP_TABLE_MASK] : NULL;
}

int dray_qp_table_insert(struct dray_context *ctx, struct dray_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct dray_qp **table;
	int err = 0;

	if (qpn >> DRAY_QPN_BITS) {
		verbs_err(&ctx->ibv_ctx, "QP number %#x is not 24 bits\n", qpn);
		return EINVAL;
	}

	pthread_mutex_lock(&ctx->qp_table_mutex);
	table = atomic_load_explicit(&ctx->qp_table[qpn >> DRAY_QP_TABLE_SHIFT],
				     memory_order_relaxed);
	if (!table) {
		table = calloc(DRAY_QP_TABLE_SIZE, sizeof(*table));
		if (!table) {
			err = ENOMEM;
			goto out;
		}
		atomic_store_explicit(&ctx->qp_table[qpn >> DRAY_QP_TABLE_SHIFT],
				      table, memory_order_release);
	}
	if (table[qpn & DRAY_QP_TABLE_MASK]) {
		verbs_err(&ctx->ibv_ctx, "QP %u is already in use\n", qpn);
		err = EEXIST;
		goto out;
	}
	table[qpn & DRAY_QP_TABLE_MASK] = qp;
out:
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return err;
}

/* Context: qp_table_mutex and the locks of the QP's CQs held. */
void dray_qp_table_remove(struct dray_context *ctx, struct dray_qp *qp)
{
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct dray_qp **table;

	table = atomic_load_explicit(&ctx->qp_table[qpn >> DRAY_QP_TABLE_SHIFT],
				     memory_order_relaxed);
	if (table && table[qpn & DRAY_QP_TABLE_MASK] == qp)
		table[qpn & DRAY_QP_TABLE_MASK] = NULL;
}

void dray_qp_table_free(struct dray_context *ctx)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ctx->qp_table); i++)
		free(atomic_load(&ctx->qp_table[i]));
}

/* Doorbells */

static inline void *dray_wq_entry(const struct dray_wq *wq, uint32_t index)
{
	return wq->ring +
	       ((size_t)dray_ring_slot(index, wq->depth) << wq->log_stride);
}

static inline bool dray_wq_full(const struct dray_wq *wq)
{
	/* Pairs with the poller's release of tail after it read wrid[]. */
	uint32_t tail = atomic_load_explicit(&wq->tail, memory_order_acquire);

	return wq->head - tail >= wq->depth;
}

/*
 * Hand the WQEs up to wq->head to the device.
 * Context: wq->lock held.
 */
static inline void dray_wq_publish(struct dray_wq *wq)
{
	/*
	 * The WQEs written above must be visible to the device before it
	 * can see a producer index that covers them.
	 */
	udma_to_device_barrier();
	dray_shared_store32(&wq->db->producer, wq->head);
}

/*
 * After publishing: wake the engine if it went idle. Called without the
 * queue lock; posting from several threads may then wake it more than
 * once, which is harmless.
 */
static inline void dray_wake_if_idle(struct dray_context *ctx)
{
	/*
	 * Full barrier, store -> load: the producer index stored above
	 * must be globally visible before NEED_WAKEUP is read. The engine
	 * mirrors this (sets NEED_WAKEUP, full barrier, re-reads every
	 * doorbell record before sleeping), so either it sees our producer
	 * index or we see its flag. udma_to_device_barrier() only orders
	 * stores against stores (a compiler barrier on x86), and would let
	 * this load be satisfied before the store leaves the store buffer:
	 * a lost wake-up.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	if (dray_shared_load32(&ctx->uar->dev.flags) & DRAY_UAR_F_NEED_WAKEUP)
		dray_wake_engine(ctx);
}

static inline void dray_count_posted(struct dray_context *ctx,
				     atomic_uint_fast64_t *counter,
				     uint32_t n)
{
	if (ctx->stats_enabled)
		atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/* Start again at index 0 (the QP went to RESET). */
static void dray_wq_reset(struct dray_wq *wq)
{
	/* The receive queue of a QP on an SRQ does not exist. */
	if (!wq->buf)
		return;
	pthread_spin_lock(&wq->lock);
	wq->head = 0;
	atomic_store_explicit(&wq->tail, 0, memory_order_relaxed);
	dray_shared_store32(&wq->db->producer, 0);
	pthread_spin_unlock(&wq->lock);
}

void dray_qp_reset_indexes(struct dray_qp *qp)
{
	dray_wq_reset(&qp->sq);
	dray_wq_reset(&qp->rq);
}

/* Send WQEs */

#define DRAY_SEND_FLAGS \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

/* Send opcode for an RC QP, or -1. */
static int dray_rc_wqe_opcode(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return DRAY_WQE_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return DRAY_WQE_SEND_IMM;
	case IBV_WR_RDMA_WRITE:
		return DRAY_WQE_RDMA_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return DRAY_WQE_RDMA_WRITE_IMM;
	case IBV_WR_RDMA_READ:
		return DRAY_WQE_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return DRAY_WQE_ATOMIC_CMP_SWP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return DRAY_WQE_ATOMIC_FETCH_ADD;
	case IBV_WR_SEND_WITH_INV:
		return DRAY_WQE_SEND_INV;
	case IBV_WR_LOCAL_INV:
		return DRAY_WQE_LOCAL_INV;
	case IBV_WR_BIND_MW:
		return DRAY_WQE_BIND_MW;
	default:
		return -1;
	}
}

/* Send opcode for a UD QP (SEND with or without immediate), or -1. */
static int dray_ud_wqe_opcode(enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
		return DRAY_WQE_SEND;
	case IBV_WR_SEND_WITH_IMM:
		return DRAY_WQE_SEND_IMM;
	default:
		return -1;
	}
}

static inline bool dray_qp_is_ud(const struct dray_qp *qp)
{
	return qp->vqp.qp.qp_type == IBV_QPT_UD;
}

static inline bool dray_qp_is_xrc_send(const struct dray_qp *qp)
{
	return qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND;
}

/* Send opcode for @qp's type, or -1 (UC: no READ, atomics, SEND_INV). */
static int dray_wqe_opcode(const struct dray_qp *qp, enum ibv_wr_opcode opcode)
{
	switch (qp->vqp.qp.qp_type) {
	case IBV_QPT_UD:
		return dray_ud_wqe_opcode(opcode);
	case IBV_QPT_UC:
		switch (opcode) {
		case IBV_WR_RDMA_READ:
		case IBV_WR_ATOMIC_CMP_AND_SWP:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
		case IBV_WR_SEND_WITH_INV:
			return -1;
		default:
			break;
		}
		return dray_rc_wqe_opcode(opcode);
	default:
		return dray_rc_wqe_opcode(opcode);
	}
}

static const char *dray_qp_type_name(const struct dray_qp *qp)
{
	switch (qp->vqp.qp.qp_type) {
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_XRC_SEND:
		return "XRC";
	default:
		return "RC";
	}
}

/* Operations that carry a payload from local memory may carry it inline. */
static inline bool dray_wqe_op_inline_ok(uint8_t opcode)
{
	return opcode == DRAY_WQE_SEND || opcode == DRAY_WQE_SEND_IMM ||
	       opcode == DRAY_WQE_SEND_INV || opcode == DRAY_WQE_RDMA_WRITE ||
	       opcode == DRAY_WQE_RDMA_WRITE_IMM;
}

static inline bool dray_wqe_op_atomic(uint8_t opcode)
{
	return opcode == DRAY_WQE_ATOMIC_CMP_SWP ||
	       opcode == DRAY_WQE_ATOMIC_FETCH_ADD;
}

/*
 * IBTA: send WRs may be posted from RTS on (in SQD they wait, in SQE and
 * ERR the device completes them with a flush error); not before.
 */
static inline bool dray_qp_can_post_send(const struct dray_qp *qp)
{
	switch (qp->vqp.qp.state) {
	case IBV_QPS_RTS:
	case IBV_QPS_SQD:
	case IBV_QPS_SQE:
	case IBV_QPS_ERR:
		return true;
	default:
		return false;
	}
}

/* Receive WRs may be posted from INIT on; in ERR they are flushed. */
static inline bool dray_qp_can_post_recv(const struct dray_qp *qp)
{
	return qp->vqp.qp.state != IBV_QPS_RESET &&
	       qp->vqp.qp.state != IBV_QPS_UNKNOWN;
}

static inline uint8_t dray_wqe_flags(const struct dray_qp *qp,
				     unsigned int send_flags)
{
	uint8_t flags = 0;

	if ((send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= DRAY_WQE_F_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= DRAY_WQE_F_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		flags |= DRAY_WQE_F_FENCE;
	return flags;
}

static inline struct dray_sge *dray_wqe_sges(struct dray_sq_wqe *wqe)
{
	return (struct dray_sge *)(wqe + 1);
}

static inline void dray_set_sge(struct dray_sge *sge, uint64_t addr,
				uint32_t length, uint32_t lkey)
{
	sge->addr = htole64(addr);
	sge->length = htole32(length);
	sge->lkey = htole32(lkey);
}

static void dray_wqe_set_sge_list(struct dray_sq_wqe *wqe,
				  const struct ibv_sge *sg_list, size_t num_sge)
{
	struct dray_sge *sge = dray_wqe_sges(wqe);
	size_t i;

	for (i = 0; i < num_sge; i++)
		dray_set_sge(&sge[i], sg_list[i].addr, sg_list[i].length,
			     sg_list[i].lkey);
	wqe->flags &= ~DRAY_WQE_F_INLINE;
	wqe->num_sge = num_sge;
	wqe->length = 0;
}

/* Inline payload: right after the header, checked to fit the stride. */
static inline void dray_wqe_set_inline(struct dray_sq_wqe *wqe,
				       uint32_t length)
{
	wqe->flags |= DRAY_WQE_F_INLINE;
	wqe->num_sge = 0;
	wqe->length = htole32(length);
}

static uint64_t dray_sge_bytes(const struct ibv_sge *sg_list, int num_sge)
{
	uint64_t bytes = 0;
	int i;

	for (i = 0; i < num_sge; i++)
		bytes += sg_list[i].length;
	return bytes;
}

static int dray_post_send_check(struct dray_qp *qp,
				const struct ibv_send_wr *wr, int opcode,
				bool type1_ok)
{
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	uint32_t qpn = qp->vqp.qp.qp_num;

	if (unlikely(!dray_qp_can_post_send(qp))) {
		verbs_err(vctx, "QP %u: cannot post sends in state %d\n", qpn,
			  qp->vqp.qp.state);
		return EINVAL;
	}
	if (unlikely(opcode < 0)) {
		verbs_err(vctx, "QP %u: opcode %d not supported on %s\n", qpn,
			  wr->opcode, dray_qp_type_name(qp));
		return EINVAL;
	}
	if (dray_qp_is_xrc_send(qp) &&
	    unlikely(wr->qp_type.xrc.remote_srqn >> DRAY_QPN_BITS)) {
		verbs_err(vctx, "QP %u: remote_srqn %#x is not 24 bits\n", qpn,
			  wr->qp_type.xrc.remote_srqn);
		return EINVAL;
	}
	if (dray_qp_is_ud(qp)) {
		if (unlikely(!wr->wr.ud.ah)) {
			verbs_err(vctx, "QP %u: UD send without an AH\n", qpn);
			return EINVAL;
		}
		if (unlikely(wr->wr.ud.remote_qpn >> DRAY_QPN_BITS)) {
			verbs_err(vctx, "QP %u: remote_qpn %#x is not 24 bits\n",
				  qpn, wr->wr.ud.remote_qpn);
			return EINVAL;
		}
	}
	if (unlikely(wr->send_flags & ~DRAY_SEND_FLAGS)) {
		verbs_err(vctx, "QP %u: send_flags %#x (supported %#x)\n", qpn,
			  wr->send_flags, DRAY_SEND_FLAGS);
		return EINVAL;
	}
	if (unlikely(wr->num_sge < 0)) {
		verbs_err(vctx, "QP %u: num_sge %d\n", qpn, wr->num_sge);
		return EINVAL;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint64_t bytes;

		if (unlikely(!dray_wqe_op_inline_ok(opcode))) {
			verbs_err(vctx, "QP %u: opcode %d cannot be inline\n",
				  qpn, wr->opcode);
			return EINVAL;
		}
		bytes = dray_sge_bytes(wr->sg_list, wr->num_sge);
		if (unlikely(bytes > qp->max_inline_data)) {
			verbs_err(vctx, "QP %u: inline length %llu > %u\n",
				  qpn, (unsigned long long)bytes,
				  qp->max_inline_data);
			return EINVAL;
		}
	} else if (unlikely((uint32_t)wr->num_sge > qp->sq.max_sge)) {
		verbs_err(vctx, "QP %u: num_sge %d > %u\n", qpn, wr->num_sge,
			  qp->sq.max_sge);
		return EINVAL;
	}
	if (unlikely((opcode == DRAY_WQE_LOCAL_INV ||
		      opcode == DRAY_WQE_BIND_MW) &&
		     (wr->num_sge || (wr->send_flags & IBV_SEND_INLINE)))) {
		verbs_err(vctx, "QP %u: opcode %d takes no data\n", qpn,
			  wr->opcode);
		return EINVAL;
	}
	/* A type 1 window is bound with ibv_bind_mw(), not posted. */
	if (unlikely(opcode == DRAY_WQE_BIND_MW &&
		     (!wr->bind_mw.mw ||
		      (wr->bind_mw.mw->type != IBV_MW_TYPE_2 && !type1_ok)))) {
		verbs_err(vctx, "QP %u: BIND_MW of no type 2 window\n", qpn);
		return EINVAL;
	}
	if (unlikely(dray_wqe_op_atomic(opcode) && wr->num_sge != 1)) {
		verbs_err(vctx, "QP %u: atomic with %d SGEs, needs 1\n", qpn,
			  wr->num_sge);
		return EINVAL;
	}
	if (unlikely(dray_wq_full(&qp->sq))) {
		verbs_err(vctx, "QP %u: send queue full (%u WQEs)\n", qpn,
			  qp->sq.depth);
		return ENOMEM;
	}
	return 0;
}

/* The window a BIND_MW binds, its new key and what it is bound to. */
static void dray_wqe_set_bind(struct dray_sq_wqe *wqe, uint32_t rkey,
			      const struct ibv_mw_bind_info *info)
{
	unsigned int a = info->mw_access_flags & ~IBV_ACCESS_ZERO_BASED;

	wqe->u.bind.mw_key = htole32(rkey);
	wqe->u.bind.mr_lkey = htole32(info->mr ? info->mr->lkey : 0);
	wqe->u.bind.addr = htole64(info->addr);
	wqe->u.bind.length = htole64(info->length);
	/*
	 * IBV_ACCESS_* have the device's bit order (IBTA's); rights it does
	 * not grant to windows make it refuse the bind (MW_BIND_ERR).
	 */
	wqe->u.bind.access = a > UINT8_MAX ? UINT8_MAX : a;
	wqe->u.bind.flags =
		(info->mw_access_flags & IBV_ACCESS_ZERO_BASED) ?
		DRAY_BIND_F_ZERO_BASED : 0;
}

/* Write a checked WR at sq.head. Context: sq.lock held. */
static void dray_write_send_wqe(struct dray_qp *qp,
				const struct ibv_send_wr *wr, uint8_t opcode)
{
	struct dray_wq *sq = &qp->sq;
	struct dray_sq_wqe *wqe = dray_wq_entry(sq, sq->head);

	memset(wqe, 0, sizeof(*wqe));
	wqe->opcode = opcode;
	wqe->flags = dray_wqe_flags(qp, wr->send_flags);

	switch (opcode) {
	case DRAY_WQE_SEND_IMM:
		wqe->imm_data = wr->imm_data;
		break;
	case DRAY_WQE_SEND_INV:
	case DRAY_WQE_LOCAL_INV:
		wqe->u.inv.rkey = htole32(wr->invalidate_rkey);
		break;
	case DRAY_WQE_BIND_MW:
		dray_wqe_set_bind(wqe, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
		break;
	case DRAY_WQE_RDMA_WRITE_IMM:
		wqe->imm_data = wr->imm_data;
		wqe->u.rdma.remote_addr = htole64(wr->wr.rdma.remote_addr);
		wqe->u.rdma.rkey = htole32(wr->wr.rdma.rkey);
		break;
	case DRAY_WQE_RDMA_WRITE:
	case DRAY_WQE_RDMA_READ:
		wqe->u.rdma.remote_addr = htole64(wr->wr.rdma.remote_addr);
		wqe->u.rdma.rkey = htole32(wr->wr.rdma.rkey);
		break;
	case DRAY_WQE_ATOMIC_CMP_SWP:
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		wqe->u.atomic.remote_addr =
			htole64(wr->wr.atomic.remote_addr);
		wqe->u.atomic.rkey = htole32(wr->wr.atomic.rkey);
		wqe->u.atomic.compare_add = htole64(wr->wr.atomic.compare_add);
		if (opcode == DRAY_WQE_ATOMIC_CMP_SWP)
			wqe->u.atomic.swap = htole64(wr->wr.atomic.swap);
		break;
	default:
		break;
	}
	if (dray_qp_is_ud(qp)) {
		wqe->u.ud.ah = htole32(to_dray_ah(wr->wr.ud.ah)->ahn);
		wqe->u.ud.remote_qpn = htole32(wr->wr.ud.remote_qpn);
		wqe->u.ud.remote_qkey = htole32(wr->wr.ud.remote_qkey);
	}
	if (dray_qp_is_xrc_send(qp))
		wqe->xrc_srqn = htole32(wr->qp_type.xrc.remote_srqn);

	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *dst = (uint8_t *)(wqe + 1);
		uint32_t length = 0;
		int i;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst + length,
			       (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			length += wr->sg_list[i].length;
		}
		dray_wqe_set_inline(wqe, length);
	} else {
		dray_wqe_set_sge_list(wqe, wr->sg_list, wr->num_sge);
	}

	sq->wrid[dray_ring_slot(sq->head, sq->depth)] = wr->wr_id;
	sq->head++;
}

static int dray_post_send_list(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr, bool type1_ok);

/*
 * ibv_bind_mw(): a type 1 window is bound by a BIND_MW work request with
 * its key's variant advanced, as type 2 windows are; the new key is the
 * window's from here on (a bind that fails later completes in error).
 */
int dray_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	}, *bad = NULL;
	int err;

	if (mw->type != IBV_MW_TYPE_1 ||
	    (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED))
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = dray_post_send_list(ibqp, &wr, &bad, true);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}

int dray_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	return dray_post_send_list(ibqp, wr, bad_wr, false);
}

/* Post @wr and the rest of its list; @type1_ok: from dray_bind_mw(). */
static int dray_post_send_list(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr, bool type1_ok)
{
	struct dray_context *ctx = to_dray_ctx(ibqp->context);
	struct dray_qp *qp = to_dray_qp(ibqp);
	struct dray_wq *sq = &qp->sq;
	uint32_t posted;
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&sq->lock);
	start = sq->head;
	for (; wr; wr = wr->next) {
		int opcode = dray_wqe_opcode(qp, wr->opcode);

		err = dray_post_send_check(qp, wr, opcode, type1_ok);
		if (unlikely(err)) {
			*bad_wr = wr;
			break;
		}
		dray_write_send_wqe(qp, wr, opcode);
	}
	posted = sq->head - start;
	if (posted)
		dray_wq_publish(sq);
	pthread_spin_unlock(&sq->lock);

	if (posted) {
		dray_count_posted(ctx, &ctx->stats.send_wrs, posted);
		dray_wake_if_idle(ctx);
	}
	return err;
}

/* Receive WQEs */

static int dray_post_recv_check(struct dray_qp *qp,
				const struct ibv_recv_wr *wr)
{
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	uint32_t qpn = qp->vqp.qp.qp_num;

	if (unlikely(!dray_qp_can_post_recv(qp))) {
		verbs_err(vctx, "QP %u: cannot post receives in state %d\n",
			  qpn, qp->vqp.qp.state);
		return EINVAL;
	}
	if (unlikely(wr->num_sge < 0 ||
		     (uint32_t)wr->num_sge > qp->rq.max_sge)) {
		verbs_err(vctx, "QP %u: receive num_sge %d > %u\n", qpn,
			  wr->num_sge, qp->rq.max_sge);
		return EINVAL;
	}
	if (unlikely(dray_wq_full(&qp->rq))) {
		verbs_err(vctx, "QP %u: receive queue full (%u WQEs)\n", qpn,
			  qp->rq.depth);
		return ENOMEM;
	}
	return 0;
}

/* Write a checked WR at rq.head. Context: rq.lock held. */
static void dray_write_recv_wqe(struct dray_wq *rq,
				const struct ibv_recv_wr *wr)
{
	struct dray_rq_wqe *wqe = dray_wq_entry(rq, rq->head);
	struct dray_sge *sge = (struct dray_sge *)(wqe + 1);
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++)
		dray_set_sge(&sge[i], wr->sg_list[i].addr,
			     wr->sg_list[i].length, wr->sg_list[i].lkey);

	rq->wrid[dray_ring_slot(rq->head, rq->depth)] = wr->wr_id;
	rq->head++;
}

int dray_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct dray_context *ctx = to_dray_ctx(ibqp->context);
	struct dray_qp *qp = to_dray_qp(ibqp);
	struct dray_wq *rq = &qp->rq;
	uint32_t posted;
	uint32_t start;
	int err = 0;

	if (unlikely(ibqp->srq || !rq->buf)) {
		verbs_err(&ctx->ibv_ctx,
			  "QP %u: no receive queue (on an SRQ, or XRC)\n",
			  ibqp->qp_num);
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&rq->lock);
	start = rq->head;
	for (; wr; wr = wr->next) {
		err = dray_post_recv_check(qp, wr);
		if (unlikely(err)) {
			*bad_wr = wr;
			break;
		}
		dray_write_recv_wqe(rq, wr);
	}
	posted = rq->head - start;
	if (posted)
		dray_wq_publish(rq);
	pthread_spin_unlock(&rq->lock);

	if (posted) {
		dray_count_posted(ctx, &ctx->stats.recv_wrs, posted);
		dray_wake_if_idle(ctx);
	}
	return err;
}

/*
 * Shared receive queues: a free tag per WR, the WQE at the ring's head,
 * then the producer index. No wake-up call: the device reads the SRQ's
 * doorbell record whenever a message needs a WQE. The ring has room
 * whenever a tag is free: WQEs not yet taken by the device each hold a
 * tag.
 */
int dray_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct dray_context *ctx = to_dray_ctx(ibsrq->context);
	struct dray_srq *srq = to_dray_srq(ibsrq);
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	start = srq->head;
	for (; wr; wr = wr->next) {
		struct dray_srq_wqe *wqe;
		struct dray_sge *sge;
		uint32_t tag;
		int i;

		if (unlikely(wr->num_sge < 0 ||
			     (uint32_t)wr->num_sge > srq->max_sge)) {
			verbs_err(&ctx->ibv_ctx, "SRQ %u: num_sge %d > %u\n",
				  srq->srqn, wr->num_sge, srq->max_sge);
			err = EINVAL;
		} else if (unlikely(!srq->n_free)) {
			verbs_err(&ctx->ibv_ctx, "SRQ %u: full (%u WQEs)\n",
				  srq->srqn, srq->depth);
			err = ENOMEM;
		}
		if (err) {
			*bad_wr = wr;
			break;
		}
		tag = srq->free[--srq->n_free];
		wqe = (struct dray_srq_wqe *)(srq->ring +
			((size_t)dray_ring_slot(srq->head, srq->depth) <<
			 srq->log_stride));
		sge = (struct dray_sge *)(wqe + 1);
		memset(wqe, 0, sizeof(*wqe));
		wqe->num_sge = wr->num_sge;
		wqe->tag = htole32(tag);
		for (i = 0; i < wr->num_sge; i++)
			dray_set_sge(&sge[i], wr->sg_list[i].addr,
				     wr->sg_list[i].length,
				     wr->sg_list[i].lkey);
		srq->wrid[tag] = wr->wr_id;
		srq->busy[tag] = 1;
		srq->head++;
	}
	if (srq->head != start) {
		/* The WQEs before the producer index that covers them. */
		udma_to_device_barrier();
		dray_shared_store32(&srq->db->producer, srq->head);
		dray_count_posted(ctx, &ctx->stats.recv_wrs, srq->head - start);
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}

/*
 * The WR of a completed SRQ WQE; its tag becomes free. A tag that is not
 * posted (the device is not trusted) is refused.
 * Context: a CQ's lock held.
 */
bool dray_srq_retire(struct dray_srq *srq, uint32_t tag, uint64_t *wr_id)
{
	bool ok = false;

	pthread_spin_lock(&srq->lock);
	if (tag < srq->depth && srq->busy[tag]) {
		srq->busy[tag] = 0;
		*wr_id = srq->wrid[tag];
		srq->free[srq->n_free++] = tag;
		ok = true;
	}
	pthread_spin_unlock(&srq->lock);
	return ok;
}

/*
 * Extended send API (ibv_wr_*). wr_start takes the SQ lock and
 * wr_complete or wr_abort releases it; each builder call writes its WQE
 * straight into the ring at sq.head (the device does not look past the
 * published producer index). The first error sticks: the remaining calls
 * of the session do nothing and wr_complete discards every WQE of the
 * session and returns the error.
 */

static void dray_wr_fail(struct dray_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

static struct dray_sq_wqe *dray_wr_new(struct ibv_qp_ex *ibqpx,
				       uint8_t opcode)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_wq *sq = &qp->sq;
	struct dray_sq_wqe *wqe;

	if (unlikely(qp->wr_err))
		return NULL;
	if (unlikely(!dray_qp_can_post_send(qp))) {
		verbs_err(vctx, "QP %u: cannot post sends in state %d\n",
			  qp->vqp.qp.qp_num, qp->vqp.qp.state);
		dray_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (unlikely(ibqpx->wr_flags & ~DRAY_SEND_FLAGS)) {
		verbs_err(vctx, "QP %u: wr_flags %#x (supported %#x)\n",
			  qp->vqp.qp.qp_num, ibqpx->wr_flags, DRAY_SEND_FLAGS);
		dray_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (unlikely(dray_wq_full(sq))) {
		verbs_err(vctx, "QP %u: send queue full (%u WQEs)\n",
			  qp->vqp.qp.qp_num, sq->depth);
		dray_wr_fail(qp, ENOMEM);
		return NULL;
	}

	wqe = dray_wq_entry(sq, sq->head);
	memset(wqe, 0, sizeof(*wqe));
	wqe->opcode = opcode;
	/* IBV_SEND_INLINE is implied by wr_set_inline_data*(). */
	wqe->flags = dray_wqe_flags(qp, ibqpx->wr_flags);
	sq->wrid[dray_ring_slot(sq->head, sq->depth)] = ibqpx->wr_id;
	sq->head++;
	qp->wr_cur = wqe;
	return wqe;
}

static void dray_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr_start_head = qp->sq.head;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static int dray_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct dray_context *ctx = to_dray_ctx(qp->vqp.qp.context);
	struct dray_wq *sq = &qp->sq;
	int err = qp->wr_err;
	uint32_t posted;

	if (unlikely(err))
		sq->head = qp->wr_start_head;
	posted = sq->head - qp->wr_start_head;
	if (posted)
		dray_wq_publish(sq);
	qp->wr_cur = NULL;
	pthread_spin_unlock(&sq->lock);

	if (posted) {
		dray_count_posted(ctx, &ctx->stats.send_wrs, posted);
		dray_wake_if_idle(ctx);
	}
	return err;
}

static void dray_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);

	qp->sq.head = qp->wr_start_head;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void dray_wr_send(struct ibv_qp_ex *ibqpx)
{
	dray_wr_new(ibqpx, DRAY_WQE_SEND);
}

static void dray_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_SEND_IMM);

	if (wqe)
		wqe->imm_data = imm_data;
}

static void dray_wr_send_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_SEND_INV);

	if (wqe)
		wqe->u.inv.rkey = htole32(invalidate_rkey);
}

/* SGEs set on it by mistake make the device complete it in error. */
static void dray_wr_local_inv(struct ibv_qp_ex *ibqpx, uint32_t invalidate_rkey)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_LOCAL_INV);

	if (wqe)
		wqe->u.inv.rkey = htole32(invalidate_rkey);
}

static void dray_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct dray_sq_wqe *wqe;

	if (!mw || mw->type != IBV_MW_TYPE_2) {
		dray_wr_fail(to_dray_qp_ex(ibqpx), EINVAL);
		return;
	}
	wqe = dray_wr_new(ibqpx, DRAY_WQE_BIND_MW);
	if (wqe)
		dray_wqe_set_bind(wqe, rkey, bind_info);
}

static void dray_wr_set_rdma(struct dray_sq_wqe *wqe, uint32_t rkey,
			     uint64_t remote_addr)
{
	wqe->u.rdma.remote_addr = htole64(remote_addr);
	wqe->u.rdma.rkey = htole32(rkey);
}

static void dray_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_RDMA_WRITE);

	if (wqe)
		dray_wr_set_rdma(wqe, rkey, remote_addr);
}

static void dray_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_RDMA_WRITE_IMM);

	if (wqe) {
		dray_wr_set_rdma(wqe, rkey, remote_addr);
		wqe->imm_data = imm_data;
	}
}

static void dray_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_RDMA_READ);

	if (wqe)
		dray_wr_set_rdma(wqe, rkey, remote_addr);
}

static void dray_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_ATOMIC_CMP_SWP);

	if (wqe) {
		wqe->u.atomic.remote_addr = htole64(remote_addr);
		wqe->u.atomic.rkey = htole32(rkey);
		wqe->u.atomic.compare_add = htole64(compare);
		wqe->u.atomic.swap = htole64(swap);
	}
}

static void dray_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_ATOMIC_FETCH_ADD);

	if (wqe) {
		wqe->u.atomic.remote_addr = htole64(remote_addr);
		wqe->u.atomic.rkey = htole32(rkey);
		wqe->u.atomic.compare_add = htole64(add);
	}
}

/* The 8 bytes at @atomic_wr are stored at the responder in order. */
static void dray_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct dray_sq_wqe *wqe = dray_wr_new(ibqpx, DRAY_WQE_ATOMIC_WRITE);

	if (wqe) {
		wqe->u.atomic_write.remote_addr = htole64(remote_addr);
		wqe->u.atomic_write.rkey = htole32(rkey);
		memcpy(wqe->u.atomic_write.value, atomic_wr,
		       sizeof(wqe->u.atomic_write.value));
	}
}

static void dray_wr_flush(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_sq_wqe *wqe;

	/* One placement type (the device checks it too), a 32-bit range. */
	if (unlikely((type != IBV_FLUSH_GLOBAL &&
		      type != IBV_FLUSH_PERSISTENT) ||
		     (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR) ||
		     (level == IBV_FLUSH_RANGE && len > UINT32_MAX))) {
		verbs_err(vctx, "QP %u: FLUSH type %u level %u length %zu\n",
			  qp->vqp.qp.qp_num, type, level, len);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	wqe = dray_wr_new(ibqpx, DRAY_WQE_FLUSH);
	if (!wqe)
		return;
	wqe->u.flush.remote_addr = htole64(remote_addr);
	wqe->u.flush.rkey = htole32(rkey);
	wqe->u.flush.type = type == IBV_FLUSH_GLOBAL ? DRAY_FLUSH_GLOBAL :
			    DRAY_FLUSH_PERSISTENT;
	wqe->u.flush.level = level == IBV_FLUSH_MR ? DRAY_FLUSH_LEVEL_MR :
			     DRAY_FLUSH_LEVEL_RANGE;
	wqe->u.flush.length = htole32(level == IBV_FLUSH_MR ? 0 : len);
}

/* UD: where the WQE being built goes (an AH of the QP's PD). */
static void dray_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_sq_wqe *wqe = qp->wr_cur;

	if (unlikely(!wqe))
		return;
	if (unlikely(!ah || remote_qpn >> DRAY_QPN_BITS)) {
		verbs_err(vctx, "QP %u: UD address: AH %p, remote_qpn %#x\n",
			  qp->vqp.qp.qp_num, ah, remote_qpn);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	wqe->u.ud.ah = htole32(to_dray_ah(ah)->ahn);
	wqe->u.ud.remote_qpn = htole32(remote_qpn);
	wqe->u.ud.remote_qkey = htole32(remote_qkey);
}

/* XRC: the peer's XRC SRQ the WR is for (the WQE's XRCETH). */
static void dray_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx, uint32_t remote_srqn)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_sq_wqe *wqe = qp->wr_cur;

	if (unlikely(!wqe))
		return;
	if (unlikely(remote_srqn >> DRAY_QPN_BITS)) {
		verbs_err(vctx, "QP %u: remote_srqn %#x is not 24 bits\n",
			  qp->vqp.qp.qp_num, remote_srqn);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_srqn = htole32(remote_srqn);
}

static void dray_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_sq_wqe *wqe = qp->wr_cur;

	if (unlikely(!wqe))
		return;
	if (unlikely(num_sge > qp->sq.max_sge)) {
		verbs_err(vctx, "QP %u: num_sge %zu > %u\n", qp->vqp.qp.qp_num,
			  num_sge, qp->sq.max_sge);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	if (unlikely(dray_wqe_op_atomic(wqe->opcode) && num_sge != 1)) {
		verbs_err(vctx, "QP %u: atomic with %zu SGEs, needs 1\n",
			  qp->vqp.qp.qp_num, num_sge);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	dray_wqe_set_sge_list(wqe, sg_list, num_sge);
}

static void dray_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	dray_wr_set_sge_list(ibqpx, 1, &sge);
}

/* Copy inline payload pieces into the WQE being built. */
static void dray_wr_inline(struct ibv_qp_ex *ibqpx,
			   const struct ibv_data_buf *bufs, size_t num_buf)
{
	struct dray_qp *qp = to_dray_qp_ex(ibqpx);
	struct verbs_context *vctx = &to_dray_ctx(qp->vqp.qp.context)->ibv_ctx;
	struct dray_sq_wqe *wqe = qp->wr_cur;
	uint64_t bytes = 0;
	uint8_t *dst;
	size_t i;

	if (unlikely(!wqe))
		return;
	if (unlikely(!dray_wqe_op_inline_ok(wqe->opcode))) {
		verbs_err(vctx, "QP %u: WQE opcode %u cannot be inline\n",
			  qp->vqp.qp.qp_num, wqe->opcode);
		dray_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++)
		bytes += bufs[i].length;
	if (unlikely(bytes > qp->max_inline_data)) {
		verbs_err(vctx, "QP %u: inline length %llu > %u\n",
			  qp->vqp.qp.qp_num, (unsigned long long)bytes,
			  qp->max_inline_data);
		dray_wr_fail(qp, EINVAL);
		return;
	}

	dst = (uint8_t *)(wqe + 1);
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, bufs[i].addr, bufs[i].length);
		dst += bufs[i].length;
	}
	dray_wqe_set_inline(wqe, bytes);
}

static void dray_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	dray_wr_inline(ibqpx, &buf, 1);
}

static void dray_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	dray_wr_inline(ibqpx, buf_list, num_buf);
}

void dray_qp_fill_wr_ops(struct dray_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *ibqpx = &qp->vqp.qp_ex;

	ibqpx->wr_start = dray_wr_start;
	ibqpx->wr_complete = dray_wr_complete;
	ibqpx->wr_abort = dray_wr_abort;

	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		ibqpx->wr_send = dray_wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		ibqpx->wr_send_imm = dray_wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		ibqpx->wr_send_inv = dray_wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		ibqpx->wr_local_inv = dray_wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		ibqpx->wr_bind_mw = dray_wr_bind_mw;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		ibqpx->wr_rdma_write = dray_wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		ibqpx->wr_rdma_write_imm = dray_wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		ibqpx->wr_rdma_read = dray_wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		ibqpx->wr_atomic_cmp_swp = dray_wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		ibqpx->wr_atomic_fetch_add = dray_wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		ibqpx->wr_atomic_write = dray_wr_atomic_write;
	if (send_ops_flags & IBV_QP_EX_WITH_FLUSH)
		ibqpx->wr_flush = dray_wr_flush;

	if (dray_qp_is_ud(qp))
		ibqpx->wr_set_ud_addr = dray_wr_set_ud_addr;
	if (dray_qp_is_xrc_send(qp))
		ibqpx->wr_set_xrc_srqn = dray_wr_set_xrc_srqn;
	ibqpx->wr_set_sge = dray_wr_set_sge;
	ibqpx->wr_set_sge_list = dray_wr_set_sge_list;
	ibqpx->wr_set_inline_data = dray_wr_set_inline_data;
	ibqpx->wr_set_inline_data_list = dray_wr_set_inline_data_list;
}
