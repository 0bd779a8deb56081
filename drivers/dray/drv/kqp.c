// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: queue pairs of kernel consumers (RC, UD and the GSI QP).
 *
 * The SQ and RQ rings are kernel memory in the format of user rings
 * (dray_queue.h), and the device runs them with the same engine, the same
 * WQE validation and the same error completions. Posting does here what
 * the provider does in user space: check each WR, write the WQE, a write
 * barrier, store the producer index in the doorbell record, then wake the
 * engine only if the kernel UAR says it went idle (dray_kick_if_idle()).
 *
 * Errors follow IBTA and the other kernel drivers: a WR that cannot be
 * posted stops the list there, *bad_wr points at it and the WRs before
 * it are posted; -EINVAL for a QP state that allows no posting, an
 * unsupported opcode or flag, too many SGEs or inline data that does not
 * fit; -ENOMEM for a full queue.
 *
 * UD and GSI send WQEs carry the destination as an address vector
 * (DRAY_WQE_F_UD_AV, from the kernel AH: see ah.c). The GSI QP is QP1 of
 * port 1, which the core's MAD layer creates when the device registers.
 *
 * Locking: each work queue's lock serializes its posters (any context,
 * interrupts off while held). poll_cq retires WQEs under the CQ's lock
 * and publishes the new tail with a release store. Order: CQ lock before
 * work queue lock (only reset takes both).
 */

#include <linux/slab.h>

#include "dray.h"

#define DRAY_KQP_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

/* Smallest and largest strides the device takes (dray_qp_create). */
#define DRAY_KSQ_LOG_STRIDE_MIN	6
#define DRAY_KSQ_LOG_STRIDE_MAX	9
#define DRAY_KRQ_LOG_STRIDE_MIN	4
#define DRAY_KRQ_LOG_STRIDE_MAX	9

/* ---- create and destroy ------------------------------------------------ */

static int kwq_alloc(struct dray_dev *dev, struct dray_kwq *wq, u32 depth,
		     u8 log_stride, u32 max_sge)
{
	int ret;

	spin_lock_init(&wq->lock);
	wq->depth = depth;
	wq->log_stride = log_stride;
	wq->max_sge = max_sge;
	wq->wrid = kcalloc(depth, sizeof(*wq->wrid), GFP_KERNEL);
	if (!wq->wrid)
		return -ENOMEM;
	ret = dray_kring_alloc(dev, &wq->ring, DRAY_QUEUE_HDR_SIZE +
			       ((u64)depth << log_stride));
	if (ret) {
		kfree(wq->wrid);
		wq->wrid = NULL;
		return ret;
	}
	wq->db = wq->ring.va;
	wq->wqes = wq->ring.va + DRAY_QUEUE_HDR_SIZE;
	return 0;
}

static void kwq_free(struct dray_dev *dev, struct dray_kwq *wq)
{
	dray_kring_free(dev, &wq->ring);
	kfree(wq->wrid);
	wq->wrid = NULL;
}

/* The rings' shape for the requested caps, and the caps they give. */
static void kqp_geometry(struct dray_dev *dev, struct ib_qp_cap *cap,
			 struct dray_qp_params *p)
{
	const struct dray_caps *c = &dev->caps;
	u32 sq_room, rq_room, sq_wqe, rq_wqe;

	sq_wqe = DRAY_SQ_WQE_HDR_SIZE +
		 max(cap->max_send_sge * DRAY_SGE_SIZE, cap->max_inline_data);
	rq_wqe = DRAY_RQ_WQE_HDR_SIZE +
		 max(cap->max_recv_sge, 1U) * DRAY_SGE_SIZE;
	p->sq_log_depth = order_base_2(max(cap->max_send_wr, 1U));
	p->sq_log_stride = clamp_t(u32, order_base_2(sq_wqe),
				   DRAY_KSQ_LOG_STRIDE_MIN,
				   DRAY_KSQ_LOG_STRIDE_MAX);
	p->rq_log_depth = order_base_2(max(cap->max_recv_wr, 1U));
	p->rq_log_stride = clamp_t(u32, order_base_2(rq_wqe),
				   DRAY_KRQ_LOG_STRIDE_MIN,
				   DRAY_KRQ_LOG_STRIDE_MAX);
	if (p->flags & DRAY_QP_F_SRQ) {
		p->rq_log_depth = 0;
		p->rq_log_stride = 0;
	}

	sq_room = BIT(p->sq_log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	rq_room = BIT(p->rq_log_stride) - DRAY_RQ_WQE_HDR_SIZE;
	cap->max_send_wr = BIT(p->sq_log_depth);
	cap->max_recv_wr = BIT(p->rq_log_depth);
	cap->max_send_sge = min(sq_room / DRAY_SGE_SIZE, c->max_send_sge);
	cap->max_recv_sge = min(rq_room / DRAY_SGE_SIZE, c->max_recv_sge);
	cap->max_inline_data = min(sq_room, c->max_inline_data);
	if (p->flags & DRAY_QP_F_SRQ) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
}

/* Hand both rings to the device and create the QP there. */
static int kqp_hw_create(struct dray_dev *dev, struct dray_qp *qp,
			 struct dray_qp_params *p)
{
	struct dray_kqp *kqp = qp->kqp;
	struct dray_mtt sq_mtt, rq_mtt;
	int ret;

	ret = dray_kring_mtt(dev, &kqp->sq.ring, &sq_mtt);
	if (ret)
		return ret;
	p->sq_mtt = dray_mtt_addr(&sq_mtt);
	p->sq_n_pages = sq_mtt.n_data;
	if (p->flags & DRAY_QP_F_SRQ) {
		ret = dray_admin_create_qp(dev, p, &qp->qpn);
		goto free_sq_mtt;
	}
	ret = dray_kring_mtt(dev, &kqp->rq.ring, &rq_mtt);
	if (ret)
		goto free_sq_mtt;
	p->rq_mtt = dray_mtt_addr(&rq_mtt);
	p->rq_n_pages = rq_mtt.n_data;
	ret = dray_admin_create_qp(dev, p, &qp->qpn);
	dray_mtt_free(dev, &rq_mtt);
free_sq_mtt:
	dray_mtt_free(dev, &sq_mtt);
	return ret;
}

/**
 * dray_kqp_create() - create a QP for a kernel consumer
 * @dev: the device
 * @qp: the QP being created
 * @ia: the verb's attributes; ia->cap receives what the QP really has
 *
 * Context: process, may sleep.
 */
int dray_kqp_create(struct dray_dev *dev, struct dray_qp *qp,
		    struct ib_qp_init_attr *ia)
{
	struct dray_qp_params p = {
		/* Kernel consumers may post REG_MR (fast registration). */
		.flags = DRAY_QP_F_PRIV |
			 (ia->sq_sig_type == IB_SIGNAL_ALL_WR ?
			  DRAY_QP_F_SQ_SIG_ALL : 0),
		.uar_index = dev->kuar_index,
	};
	struct ib_qp_cap cap = ia->cap;
	struct dray_kqp *kqp;
	int ret;

	switch (ia->qp_type) {
	case IB_QPT_RC:
		p.type = DRAY_QPT_RC;
		break;
	case IB_QPT_UD:
		p.type = DRAY_QPT_UD;
		break;
	case IB_QPT_GSI:
		/* QP1 of the one port; the device gives it QPN 1. */
		if (ia->port_num != 1) {
			ddev_dbg_rl(dev, "create_qp: GSI QP on port %u, have port 1 only\n",
				    ia->port_num);
			return -EINVAL;
		}
		p.type = DRAY_QPT_GSI;
		break;
	default:
		ddev_dbg_rl(dev, "create_qp: kernel QP type %u not supported (RC, UD, GSI)\n",
			    ia->qp_type);
		return -EOPNOTSUPP;
	}
	ret = dray_qp_check_init_attr(dev, ia);
	if (ret)
		return ret;
	if (ia->srq) {
		if (p.type == DRAY_QPT_GSI || !to_dsrq(ia->srq)->ksrq) {
			ddev_dbg_rl(dev, "create_qp: a kernel RC or UD QP needs a kernel SRQ\n");
			return -EINVAL;
		}
		p.flags |= DRAY_QP_F_SRQ;
		p.srqn = to_dsrq(ia->srq)->srqn;
	}
	kqp_geometry(dev, &cap, &p);
	p.pdn = to_dpd(qp->ibqp.pd)->pdn;
	p.send_cqn = to_dcq(ia->send_cq)->cqn;
	p.recv_cqn = to_dcq(ia->recv_cq)->cqn;
	if (!to_dcq(ia->send_cq)->kcq || !to_dcq(ia->recv_cq)->kcq) {
		ddev_dbg_rl(dev, "create_qp: a kernel QP needs kernel CQs\n");
		return -EINVAL;
	}

	kqp = kzalloc(sizeof(*kqp), GFP_KERNEL);
	if (!kqp)
		return -ENOMEM;
	kqp->max_inline = cap.max_inline_data;
	kqp->sig_all = ia->sq_sig_type == IB_SIGNAL_ALL_WR;
	ret = kwq_alloc(dev, &kqp->sq, cap.max_send_wr, p.sq_log_stride,
			cap.max_send_sge);
	if (ret)
		goto free_kqp;
	if (!ia->srq) {
		ret = kwq_alloc(dev, &kqp->rq, cap.max_recv_wr,
				p.rq_log_stride, cap.max_recv_sge);
		if (ret)
			goto free_sq;
	}
	qp->kqp = kqp;
	ret = kqp_hw_create(dev, qp, &p);
	if (ret)
		goto free_rq;

	qp->ibqp.qp_num = qp->qpn;
	mutex_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_type = ia->sq_sig_type;
	qp->cap = cap;
	ret = dray_qp_publish(dev, qp);
	if (ret)
		goto destroy_qp;
	ia->cap = cap;
	return 0;

destroy_qp:
	mutex_destroy(&qp->lock);
	if (dray_admin_destroy_qp(dev, qp->qpn)) {
		/* The device may still use the rings: leave them. */
		dqp_err(qp, "destroy failed, rings leaked\n");
		qp->kqp = NULL;
		return ret;
	}
free_rq:
	qp->kqp = NULL;
	kwq_free(dev, &kqp->rq);
free_sq:
	kwq_free(dev, &kqp->sq);
free_kqp:
	kfree(kqp);
	return ret;
}

/* After the device destroyed the QP and its CQEs were cleaned. */
void dray_kqp_free(struct dray_dev *dev, struct dray_qp *qp)
{
	kwq_free(dev, &qp->kqp->rq);
	kwq_free(dev, &qp->kqp->sq);
	kfree(qp->kqp);
	qp->kqp = NULL;
}

/* The kernel CQs of a QP, in address order (lock order). */
static void kqp_cqs(struct dray_qp *qp, struct dray_kcq **a,
		    struct dray_kcq **b)
{
	*a = to_dcq(qp->ibqp.send_cq)->kcq;
	*b = to_dcq(qp->ibqp.recv_cq)->kcq;
	if (*a > *b)
		swap(*a, *b);
}

/*
 * Take the locks of two CQs (one if both are the same CQ); @a first, as
 * kqp_cqs() orders them (another QP may have them the other way round).
 * Context: process; not from a comp_handler of one of these CQs.
 */
static void kqp_lock_cqs(struct dray_kcq *a, struct dray_kcq *b,
			 unsigned long *flags)
	__acquires(&a->lock) __acquires(&b->lock)
{
	spin_lock_irqsave(&a->lock, *flags);
	if (b != a)
		spin_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
	else
		__acquire(&b->lock);
}

static void kqp_unlock_cqs(struct dray_kcq *a, struct dray_kcq *b,
			   unsigned long flags)
	__releases(&a->lock) __releases(&b->lock)
{
	if (b != a)
		spin_unlock(&b->lock);
	else
		__release(&b->lock);
	spin_unlock_irqrestore(&a->lock, flags);
}

static void kqp_clean_cqs_locked(struct dray_qp *qp)
{
	struct dray_cq *scq = to_dcq(qp->ibqp.send_cq);
	struct dray_cq *rcq = to_dcq(qp->ibqp.recv_cq);
	struct dray_srq *srq = qp->ibqp.srq ? to_dsrq(qp->ibqp.srq) : NULL;

	dray_kcq_clean(scq, qp->qpn, srq);
	if (rcq != scq)
		dray_kcq_clean(rcq, qp->qpn, srq);
}

/**
 * dray_kqp_clean_cqs() - drop the QP's unconsumed CQEs
 * @qp: a kernel QP the device no longer completes anything for
 *
 * Afterwards poll_cq never looks for the QP again, so it may be freed.
 */
void dray_kqp_clean_cqs(struct dray_qp *qp)
{
	struct dray_kcq *a, *b;
	unsigned long flags;

	kqp_cqs(qp, &a, &b);
	kqp_lock_cqs(a, b, &flags);
	kqp_clean_cqs_locked(qp);
	kqp_unlock_cqs(a, b, flags);
}

static void kwq_reset(struct dray_kwq *wq)
{
	/* A QP on an SRQ has no receive ring. */
	if (!wq->db)
		return;
	spin_lock(&wq->lock);
	wq->head = 0;
	wq->tail = 0;
	WRITE_ONCE(wq->db->producer, 0);
	spin_unlock(&wq->lock);
}

/**
 * dray_kqp_reset() - start the rings again at index 0
 * @qp: a kernel QP the device just moved to RESET (it forgot all work
 *      and reads the producer indexes again only from INIT on)
 *
 * Context: process, qp->lock held.
 */
void dray_kqp_reset(struct dray_qp *qp)
{
	struct dray_kcq *a, *b;
	unsigned long flags;

	lockdep_assert_held(&qp->lock);

	kqp_cqs(qp, &a, &b);
	kqp_lock_cqs(a, b, &flags);
	kqp_clean_cqs_locked(qp);
	kwq_reset(&qp->kqp->sq);
	kwq_reset(&qp->kqp->rq);
	kqp_unlock_cqs(a, b, flags);
}

/* ---- posting ------------------------------------------------------------ */

static int kqp_wqe_opcode(enum ib_wr_opcode opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
		return DRAY_WQE_SEND;
	case IB_WR_SEND_WITH_IMM:
		return DRAY_WQE_SEND_IMM;
	case IB_WR_RDMA_WRITE:
		return DRAY_WQE_RDMA_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return DRAY_WQE_RDMA_WRITE_IMM;
	case IB_WR_RDMA_READ:
		return DRAY_WQE_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return DRAY_WQE_ATOMIC_CMP_SWP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return DRAY_WQE_ATOMIC_FETCH_ADD;
	case IB_WR_SEND_WITH_INV:
		return DRAY_WQE_SEND_INV;
	case IB_WR_LOCAL_INV:
		return DRAY_WQE_LOCAL_INV;
	case IB_WR_REG_MR:
		return DRAY_WQE_REG_MR;
	default:
		return -1;
	}
}

/* Local operations (fast registration): no SGEs, no packets. */
static bool kqp_op_local(int opcode)
{
	return opcode == DRAY_WQE_LOCAL_INV || opcode == DRAY_WQE_REG_MR;
}

static bool kqp_op_inline_ok(int opcode)
{
	return opcode == DRAY_WQE_SEND || opcode == DRAY_WQE_SEND_IMM ||
	       opcode == DRAY_WQE_SEND_INV || opcode == DRAY_WQE_RDMA_WRITE ||
	       opcode == DRAY_WQE_RDMA_WRITE_IMM;
}

static bool kqp_op_atomic(int opcode)
{
	return opcode == DRAY_WQE_ATOMIC_CMP_SWP ||
	       opcode == DRAY_WQE_ATOMIC_FETCH_ADD;
}

static bool kwq_full(struct dray_kwq *wq)
{
	/* Pairs with poll_cq's release of tail after it read wrid[]. */
	return wq->head - smp_load_acquire(&wq->tail) >= wq->depth;
}

static void *kwq_slot(struct dray_kwq *wq, u32 index)
{
	return wq->wqes + ((size_t)dray_ring_slot(index, wq->depth) <<
			   wq->log_stride);
}

/* IBTA: sends from RTS on (flushed in SQE and ERR, held in SQD). */
static bool kqp_can_post_send(u8 state)
{
	return state == IB_QPS_RTS || state == IB_QPS_SQD ||
	       state == IB_QPS_SQE || state == IB_QPS_ERR;
}

/* UD and GSI QPs send datagrams to AHs. */
static bool kqp_dg(const struct dray_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static int kqp_send_check(struct dray_qp *qp, const struct ib_send_wr *wr,
			  int opcode)
{
	struct dray_kqp *kqp = qp->kqp;
	u8 state = READ_ONCE(qp->state);
	int i;

	if (!kqp_can_post_send(state)) {
		dqp_dbg(qp, "post_send: not in state %u\n", state);
		return -EINVAL;
	}
	if (opcode < 0) {
		dqp_dbg(qp, "post_send: opcode %d not supported\n", wr->opcode);
		return -EINVAL;
	}
	if (wr->send_flags & ~DRAY_KQP_SEND_FLAGS) {
		dqp_dbg(qp, "post_send: send_flags %#x, supported %#x\n",
			wr->send_flags, DRAY_KQP_SEND_FLAGS);
		return -EINVAL;
	}
	if (wr->num_sge < 0) {
		dqp_dbg(qp, "post_send: num_sge %d\n", wr->num_sge);
		return -EINVAL;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		u64 bytes = 0;

		if (!kqp_op_inline_ok(opcode)) {
			dqp_dbg(qp, "post_send: opcode %d cannot be inline\n",
				wr->opcode);
			return -EINVAL;
		}
		for (i = 0; i < wr->num_sge; i++)
			bytes += wr->sg_list[i].length;
		if (bytes > kqp->max_inline) {
			dqp_dbg(qp, "post_send: inline length %llu > %u\n",
				bytes, kqp->max_inline);
			return -EINVAL;
		}
	} else if ((u32)wr->num_sge > kqp->sq.max_sge) {
		dqp_dbg(qp, "post_send: num_sge %d > %u\n", wr->num_sge,
			kqp->sq.max_sge);
		return -EINVAL;
	}
	if (kqp_op_atomic(opcode) && wr->num_sge != 1) {
		dqp_dbg(qp, "post_send: atomic with %d SGEs, needs 1\n",
			wr->num_sge);
		return -EINVAL;
	}
	if (kqp_op_local(opcode)) {
		if (wr->num_sge || (wr->send_flags & IB_SEND_INLINE)) {
			dqp_dbg(qp, "post_send: opcode %d takes no data\n",
				wr->opcode);
			return -EINVAL;
		}
		if (opcode == DRAY_WQE_REG_MR &&
		    (!reg_wr(wr)->mr || reg_wr(wr)->mr->device != qp->ibqp.device ||
		     reg_wr(wr)->mr->type != IB_MR_TYPE_MEM_REG ||
		     !to_dmr(reg_wr(wr)->mr)->pbl)) {
			dqp_dbg(qp, "post_send: REG_MR of no fast-registration MR of this device\n");
			return -EINVAL;
		}
	}
	if (kqp_dg(qp)) {
		if (opcode != DRAY_WQE_SEND && opcode != DRAY_WQE_SEND_IMM) {
			dqp_dbg(qp, "post_send: opcode %d on a datagram QP\n",
				wr->opcode);
			return -EINVAL;
		}
		if (!ud_wr(wr)->ah || to_dah(ud_wr(wr)->ah)->ahn ||
		    ud_wr(wr)->ah->device != qp->ibqp.device) {
			dqp_dbg(qp, "post_send: no kernel AH of this device\n");
			return -EINVAL;
		}
		if (ud_wr(wr)->remote_qpn & ~DRAY_QPN_MASK) {
			dqp_dbg(qp, "post_send: remote_qpn %#x\n",
				ud_wr(wr)->remote_qpn);
			return -EINVAL;
		}
	}
	if (kwq_full(&kqp->sq)) {
		dqp_dbg(qp, "post_send: send queue full (%u)\n",
			kqp->sq.depth);
		return -ENOMEM;
	}
	return 0;
}

static u8 kqp_wqe_flags(const struct dray_qp *qp, int send_flags)
{
	u8 flags = 0;

	if ((send_flags & IB_SEND_SIGNALED) || qp->kqp->sig_all)
		flags |= DRAY_WQE_F_SIGNALED;
	if (send_flags & IB_SEND_SOLICITED)
		flags |= DRAY_WQE_F_SOLICITED;
	if (send_flags & IB_SEND_FENCE)
		flags |= DRAY_WQE_F_FENCE;
	return flags;
}

/* The destination of a UD or GSI send: the kernel AH's address vector. */
static void kqp_wqe_ud(struct dray_sq_wqe *wqe, const struct ib_send_wr *wr)
{
	const struct ib_ud_wr *ud = ud_wr(wr);

	wqe->flags |= DRAY_WQE_F_UD_AV;
	wqe->u.ud_av.remote_qpn = cpu_to_le32(ud->remote_qpn);
	wqe->u.ud_av.remote_qkey = cpu_to_le32(ud->remote_qkey);
	wqe->u.ud_av.av = to_dah(ud->ah)->av;
}

/*
 * IB_WR_REG_MR: the page list map_mr_sg wrote and the iova, length and key
 * the MR has now (a ULP may change the iova after mapping: read at post).
 */
static void kqp_wqe_reg(struct dray_sq_wqe *wqe, const struct ib_reg_wr *reg)
{
	const struct dray_mr *mr = to_dmr(reg->mr);

	wqe->u.reg.key = cpu_to_le32(reg->key);
	wqe->u.reg.access = dray_access_to_hw(reg->access);
	wqe->u.reg.iova = cpu_to_le64(reg->mr->iova);
	wqe->u.reg.length = cpu_to_le64(reg->mr->length);
	wqe->u.reg.pbl_addr = cpu_to_le64(mr->pbl_dma);
	wqe->u.reg.n_pages = cpu_to_le32(mr->npages);
}

static void kqp_wqe_remote(struct dray_sq_wqe *wqe,
			   const struct ib_send_wr *wr, int opcode)
{
	switch (opcode) {
	case DRAY_WQE_SEND_IMM:
		wqe->imm_data = wr->ex.imm_data;
		break;
	case DRAY_WQE_RDMA_WRITE_IMM:
		wqe->imm_data = wr->ex.imm_data;
		fallthrough;
	case DRAY_WQE_RDMA_WRITE:
	case DRAY_WQE_RDMA_READ:
		wqe->u.rdma.remote_addr =
			cpu_to_le64(rdma_wr(wr)->remote_addr);
		wqe->u.rdma.rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case DRAY_WQE_ATOMIC_CMP_SWP:
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		wqe->u.atomic.remote_addr =
			cpu_to_le64(atomic_wr(wr)->remote_addr);
		wqe->u.atomic.rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		wqe->u.atomic.compare_add =
			cpu_to_le64(atomic_wr(wr)->compare_add);
		if (opcode == DRAY_WQE_ATOMIC_CMP_SWP)
			wqe->u.atomic.swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	case DRAY_WQE_SEND_INV:
	case DRAY_WQE_LOCAL_INV:
		wqe->u.inv.rkey = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case DRAY_WQE_REG_MR:
		kqp_wqe_reg(wqe, reg_wr(wr));
		break;
	default:
		break;
	}
}

/* Write a checked WR at sq.head. Context: sq.lock held. */
static void kqp_write_send(struct dray_qp *qp, const struct ib_send_wr *wr,
			   int opcode)
{
	struct dray_kwq *sq = &qp->kqp->sq;
	struct dray_sq_wqe *wqe = kwq_slot(sq, sq->head);
	int i;

	lockdep_assert_held(&sq->lock);

	memset(wqe, 0, sizeof(*wqe));
	wqe->opcode = opcode;
	wqe->flags = kqp_wqe_flags(qp, wr->send_flags);
	kqp_wqe_remote(wqe, wr, opcode);
	if (kqp_dg(qp))
		kqp_wqe_ud(wqe, wr);

	if (wr->send_flags & IB_SEND_INLINE) {
		/* Kernel consumers' inline SGEs hold kernel addresses. */
		u8 *dst = (u8 *)(wqe + 1);
		u32 len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->flags |= DRAY_WQE_F_INLINE;
		wqe->length = cpu_to_le32(len);
	} else {
		struct dray_sge *sge = (struct dray_sge *)(wqe + 1);

		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
			sge[i].length = cpu_to_le32(wr->sg_list[i].length);
			sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
		}
		wqe->num_sge = wr->num_sge;
	}
	sq->wrid[dray_ring_slot(sq->head, sq->depth)] = wr->wr_id;
	sq->head++;
}

/* Hand the WQEs up to wq->head to the device. Context: wq->lock held. */
static void kwq_publish(struct dray_kwq *wq)
{
	/* The WQEs before a producer index that covers them. */
	dma_wmb();
	WRITE_ONCE(wq->db->producer, cpu_to_le32(wq->head));
}

/**
 * dray_post_send() - ib_device_ops.post_send for kernel QPs
 * @ibqp: the QP
 * @wr: the list of WRs
 * @bad_wr: set to the first WR not posted, on error
 *
 * Context: any.
 * Return: 0, -EINVAL, -ENOMEM, or -EOPNOTSUPP for a user QP.
 */
int dray_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct dray_qp *qp = to_dqp(ibqp);
	struct dray_kwq *sq;
	unsigned long flags;
	bool posted;
	u32 start;
	int ret = 0;

	/* A user QP posts in user space (uverbs' POST_SEND gets here). */
	if (!qp->kqp) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	sq = &qp->kqp->sq;
	spin_lock_irqsave(&sq->lock, flags);
	start = sq->head;
	for (; wr; wr = wr->next) {
		int opcode = kqp_wqe_opcode(wr->opcode);

		ret = kqp_send_check(qp, wr, opcode);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		kqp_write_send(qp, wr, opcode);
	}
	posted = sq->head != start;
	if (posted)
		kwq_publish(sq);
	spin_unlock_irqrestore(&sq->lock, flags);

	if (posted)
		dray_kick_if_idle(to_ddev(ibqp->device));
	return ret;
}

static int kqp_recv_check(struct dray_qp *qp, const struct ib_recv_wr *wr)
{
	struct dray_kwq *rq = &qp->kqp->rq;
	u8 state = READ_ONCE(qp->state);

	/* IBTA: receives from INIT on; flushed in ERR. */
	if (state == IB_QPS_RESET) {
		dqp_dbg(qp, "post_recv: QP in RESET\n");
		return -EINVAL;
	}
	if (wr->num_sge < 0 || (u32)wr->num_sge > rq->max_sge) {
		dqp_dbg(qp, "post_recv: num_sge %d > %u\n", wr->num_sge,
			rq->max_sge);
		return -EINVAL;
	}
	if (kwq_full(rq)) {
		dqp_dbg(qp, "post_recv: receive queue full (%u)\n", rq->depth);
		return -ENOMEM;
	}
	return 0;
}

static void kqp_write_recv(struct dray_kwq *rq, const struct ib_recv_wr *wr)
{
	struct dray_rq_wqe *wqe = kwq_slot(rq, rq->head);
	struct dray_sge *sge = (struct dray_sge *)(wqe + 1);
	int i;

	lockdep_assert_held(&rq->lock);

	memset(wqe, 0, sizeof(*wqe));
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	rq->wrid[dray_ring_slot(rq->head, rq->depth)] = wr->wr_id;
	rq->head++;
}

/**
 * dray_post_recv() - ib_device_ops.post_recv for kernel QPs
 * @ibqp: the QP
 * @wr: the list of WRs
 * @bad_wr: set to the first WR not posted, on error
 *
 * Context: any.
 * Return: 0, -EINVAL, -ENOMEM, or -EOPNOTSUPP for a user QP.
 */
int dray_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct dray_qp *qp = to_dqp(ibqp);
	struct dray_kwq *rq;
	unsigned long flags;
	bool posted;
	u32 start;
	int ret = 0;

	if (!qp->kqp) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	if (qp->ibqp.srq) {
		dqp_dbg(qp, "post_recv: the QP receives from its SRQ\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	rq = &qp->kqp->rq;
	spin_lock_irqsave(&rq->lock, flags);
	start = rq->head;
	for (; wr; wr = wr->next) {
		ret = kqp_recv_check(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		kqp_write_recv(rq, wr);
	}
	posted = rq->head != start;
	if (posted)
		kwq_publish(rq);
	spin_unlock_irqrestore(&rq->lock, flags);

	if (posted)
		dray_kick_if_idle(to_ddev(ibqp->device));
	return ret;
}
