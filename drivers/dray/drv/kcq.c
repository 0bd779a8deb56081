// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: completion queues of kernel consumers.
 *
 * The ring is kernel memory in the format of a user CQ (dray_queue.h):
 * the driver does here what the provider does in user space — reads
 * CQEs by their phase bit, matches each to its kernel QP and WR, returns
 * consumed slots through the doorbell record and arms the CQ there. The
 * device raises the completion event on the completion EQ, and
 * dray_cq_event() calls the consumer's comp_handler.
 */

#include "dray.h"

/* enum dray_cqe_status uses IBTA's numbering, as enum ib_wc_status. */
static_assert((int)DRAY_CQE_ST_SUCCESS == IB_WC_SUCCESS);
static_assert((int)DRAY_CQE_ST_LOC_LEN_ERR == IB_WC_LOC_LEN_ERR);
static_assert((int)DRAY_CQE_ST_LOC_QP_OP_ERR == IB_WC_LOC_QP_OP_ERR);
static_assert((int)DRAY_CQE_ST_LOC_PROT_ERR == IB_WC_LOC_PROT_ERR);
static_assert((int)DRAY_CQE_ST_WR_FLUSH_ERR == IB_WC_WR_FLUSH_ERR);
static_assert((int)DRAY_CQE_ST_BAD_RESP_ERR == IB_WC_BAD_RESP_ERR);
static_assert((int)DRAY_CQE_ST_LOC_ACCESS_ERR == IB_WC_LOC_ACCESS_ERR);
static_assert((int)DRAY_CQE_ST_REM_INV_REQ_ERR == IB_WC_REM_INV_REQ_ERR);
static_assert((int)DRAY_CQE_ST_REM_ACCESS_ERR == IB_WC_REM_ACCESS_ERR);
static_assert((int)DRAY_CQE_ST_REM_OP_ERR == IB_WC_REM_OP_ERR);
static_assert((int)DRAY_CQE_ST_RETRY_EXC_ERR == IB_WC_RETRY_EXC_ERR);
static_assert((int)DRAY_CQE_ST_RNR_RETRY_EXC_ERR == IB_WC_RNR_RETRY_EXC_ERR);
static_assert((int)DRAY_CQE_ST_FATAL_ERR == IB_WC_FATAL_ERR);
static_assert((int)DRAY_CQE_ST_GENERAL_ERR == IB_WC_GENERAL_ERR);

/**
 * dray_kcq_create() - create a CQ for a kernel consumer
 * @dev: the device
 * @cq: the CQ being created
 * @attr: the verb's attributes
 *
 * The ring holds the next power of two above @attr->cqe entries (one
 * slot stays free, as for user CQs).
 *
 * Context: process, may sleep.
 */
int dray_kcq_create(struct dray_dev *dev, struct dray_cq *cq,
		    const struct ib_cq_init_attr *attr)
{
	struct dray_cq_params p = { .eqn = dev->comp_eq.eqn };
	struct dray_kcq *kcq;
	struct dray_mtt mtt;
	u32 depth;
	int ret;

	ret = dray_cq_attr_check(dev, attr);
	if (ret)
		return ret;
	depth = roundup_pow_of_two(attr->cqe + 1);

	kcq = kzalloc(sizeof(*kcq), GFP_KERNEL);
	if (!kcq)
		return -ENOMEM;
	spin_lock_init(&kcq->lock);
	kcq->depth = depth;
	ret = dray_kring_alloc(dev, &kcq->ring,
			       DRAY_QUEUE_HDR_SIZE + (u64)depth * DRAY_CQE_SIZE);
	if (ret)
		goto free_kcq;
	kcq->db = kcq->ring.va;
	kcq->cqes = kcq->ring.va + DRAY_QUEUE_HDR_SIZE;

	ret = dray_kring_mtt(dev, &kcq->ring, &mtt);
	if (ret)
		goto free_ring;
	p.mtt_addr = dray_mtt_addr(&mtt);
	p.n_pages = mtt.n_data;
	p.log_depth = ilog2(depth);
	ret = dray_admin_create_cq(dev, &p, &cq->cqn);
	dray_mtt_free(dev, &mtt);
	if (ret)
		goto free_ring;

	cq->kcq = kcq;
	ret = dray_cq_publish(dev, cq);
	if (ret)
		goto destroy_cq;
	cq->ibcq.cqe = depth - 1;
	return 0;

destroy_cq:
	cq->kcq = NULL;
	if (dray_admin_destroy_cq(dev, cq->cqn)) {
		ddev_err_rl(dev, "destroy CQ %u failed, ring leaked\n", cq->cqn);
		return ret;
	}
free_ring:
	dray_kring_free(dev, &kcq->ring);
free_kcq:
	kfree(kcq);
	return ret;
}

/* After the device destroyed the CQ. */
void dray_kcq_free(struct dray_dev *dev, struct dray_cq *cq)
{
	dray_kring_free(dev, &cq->kcq->ring);
	kfree(cq->kcq);
	cq->kcq = NULL;
}

/* The CQE at the consumer index, or NULL. Context: kcq->lock held. */
static struct dray_cqe *kcq_peek(struct dray_kcq *kcq)
{
	struct dray_cqe *cqe =
		&kcq->cqes[dray_ring_slot(kcq->consumer, kcq->depth)];

	lockdep_assert_held(&kcq->lock);

	if ((READ_ONCE(cqe->flags) & DRAY_CQE_F_PHASE) !=
	    dray_ring_phase(kcq->consumer, kcq->depth))
		return NULL;
	/* The device writes the body before the flags byte. */
	dma_rmb();
	return cqe;
}

static enum ib_wc_opcode kcq_wc_opcode(const struct dray_cqe *cqe)
{
	switch (cqe->opcode) {
	case DRAY_CQE_SEND:
		return IB_WC_SEND;
	case DRAY_CQE_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case DRAY_CQE_RDMA_READ:
		return IB_WC_RDMA_READ;
	case DRAY_CQE_COMP_SWAP:
		return IB_WC_COMP_SWAP;
	case DRAY_CQE_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case DRAY_CQE_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case DRAY_CQE_REG_MR:
		return IB_WC_REG_MR;
	case DRAY_CQE_RECV_RDMA_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	case DRAY_CQE_RECV:
		return IB_WC_RECV;
	default:
		/* Not defined for an error completion; keep the queue. */
		return (cqe->flags & DRAY_CQE_F_SEND_QUEUE) ? IB_WC_SEND :
							      IB_WC_RECV;
	}
}

static void kcq_to_wc(const struct dray_cqe *cqe, struct dray_qp *qp,
		      u64 wr_id, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = cqe->status <= IB_WC_GENERAL_ERR ? cqe->status :
							 IB_WC_GENERAL_ERR;
	wc->opcode = kcq_wc_opcode(cqe);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = &qp->ibqp;
	wc->src_qp = le32_to_cpu(cqe->src_qpn);
	wc->port_num = 1;
	if (cqe->flags & DRAY_CQE_F_IMM) {
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (cqe->flags & DRAY_CQE_F_INV) {
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->inv_rkey);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	/*
	 * A UD receive: the GRH and what kind of header it came from, which
	 * ib_init_ah_attr_from_wc() needs for RoCEv2 (P_Key index 0 and no
	 * VLAN: the memset left both so).
	 */
	if (cqe->flags & DRAY_CQE_F_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->flags & DRAY_CQE_F_IPV6 ?
				       RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
	}
}

/*
 * Match a CQE to its kernel QP and WQE and retire the WQE (with every
 * earlier one of its queue: unsignaled send WQEs have no CQE of their
 * own). A CQE of no QP on this CQ, or of a WQE that is not outstanding,
 * is dropped: the device is not trusted, and a wrong wr_id must never be
 * reported.
 * Context: cq->kcq->lock held; it keeps the QP from being destroyed.
 */
static int kcq_retire(struct dray_cq *cq, const struct dray_cqe *cqe,
		      struct ib_wc *wc)
{
	struct dray_dev *dev = to_ddev(cq->ibcq.device);
	bool send = cqe->flags & DRAY_CQE_F_SEND_QUEUE;
	u32 qpn = le32_to_cpu(cqe->qpn);
	u32 index = le32_to_cpu(cqe->wqe_index);
	struct dray_kwq *wq;
	struct dray_qp *qp;
	u32 tail, posted;

	lockdep_assert_held(&cq->kcq->lock);

	qp = xa_load(&dev->qps, qpn);
	if (!qp || !qp->kqp ||
	    (send ? qp->ibqp.send_cq : qp->ibqp.recv_cq) != &cq->ibcq) {
		dcq_dbg(cq, "dropped a CQE of QP %u, not a kernel QP of this CQ\n",
			qpn);
		return -EINVAL;
	}
	if (!send && qp->ibqp.srq) {
		u64 wr_id;

		/* A kernel QP's SRQ is a kernel SRQ (checked at creation). */
		if (!(cqe->flags & DRAY_CQE_F_SRQ) ||
		    !dray_ksrq_retire(to_dsrq(qp->ibqp.srq), index, &wr_id)) {
			dcq_dbg(cq, "dropped a CQE of QP %u SRQ tag %u, not posted\n",
				qpn, index);
			return -EINVAL;
		}
		kcq_to_wc(cqe, qp, wr_id, wc);
		return 0;
	}
	wq = send ? &qp->kqp->sq : &qp->kqp->rq;
	/* tail is written only here, under this CQ's lock. */
	tail = wq->tail;
	posted = le32_to_cpu(READ_ONCE(wq->db->producer));
	if (index - tail >= posted - tail) {
		dcq_dbg(cq, "dropped a CQE of QP %u %s index %u, outstanding [%u, %u)\n",
			qpn, send ? "SQ" : "RQ", index, tail, posted);
		return -EINVAL;
	}
	kcq_to_wc(cqe, qp, wq->wrid[dray_ring_slot(index, wq->depth)], wc);
	/* wrid[] is read: from here on a poster may reuse the slots. */
	smp_store_release(&wq->tail, index + 1);
	return 0;
}

/* Return consumed slots to the device. Context: kcq->lock held. */
static void kcq_publish_consumer(struct dray_kcq *kcq)
{
	/* Every read of the consumed CQEs before the device reuses them. */
	mb();
	WRITE_ONCE(kcq->db->consumer, cpu_to_le32(kcq->consumer));
}

/**
 * dray_poll_cq() - ib_device_ops.poll_cq for kernel CQs
 * @ibcq: the CQ
 * @num_entries: room in @wc
 * @wc: receives the completions
 *
 * Context: any; takes the CQ's lock with interrupts off.
 * Return: the number of completions written.
 */
int dray_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct dray_cq *cq = to_dcq(ibcq);
	struct dray_kcq *kcq = cq->kcq;
	unsigned long flags;
	u32 start;
	int n = 0;

	/* A user CQ is polled in user space (uverbs' POLL_CQ gets here). */
	if (!kcq)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&kcq->lock, flags);
	start = kcq->consumer;
	while (n < num_entries) {
		struct dray_cqe *cqe = kcq_peek(kcq);

		if (!cqe)
			break;
		kcq->consumer++;
		if (!kcq_retire(cq, cqe, &wc[n]))
			n++;
	}
	if (kcq->consumer != start)
		kcq_publish_consumer(kcq);
	spin_unlock_irqrestore(&kcq->lock, flags);
	return n;
}

/**
 * dray_req_notify_cq() - ib_device_ops.req_notify_cq for kernel CQs
 * @ibcq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *         IB_CQ_REPORT_MISSED_EVENTS
 *
 * Arms the CQ in its doorbell record; the device raises one completion
 * event for the next CQE that matches the arm.
 *
 * Context: any.
 * Return: 0, or with IB_CQ_REPORT_MISSED_EVENTS 1 if a CQE is already
 * waiting (an event for it may never come).
 */
int dray_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct dray_kcq *kcq = to_dcq(ibcq)->kcq;
	u32 arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		  DRAY_CQ_ARM_SOLICITED : 0;
	unsigned long irqflags;
	int ret = 0;

	/* A user CQ is armed in user space. */
	if (!kcq)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&kcq->lock, irqflags);
	WRITE_ONCE(kcq->db->arm_flags, cpu_to_le32(arm));
	/* The device samples arm_flags when it sees arm_seq change. */
	dma_wmb();
	kcq->arm_seq++;
	WRITE_ONCE(kcq->db->arm_seq, cpu_to_le32(kcq->arm_seq));
	/*
	 * The new arm_seq before the look at the ring; the device writes a
	 * CQE, then a full barrier, then reads arm_seq: one side sees the
	 * other.
	 */
	mb();
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && kcq_peek(kcq))
		ret = 1;
	spin_unlock_irqrestore(&kcq->lock, irqflags);
	return ret;
}

/**
 * dray_kcq_clean() - remove a QP's CQEs that are not consumed yet
 * @cq: a kernel CQ
 * @qpn: the QP, which the device no longer completes anything for
 * @srq: the QP's kernel SRQ or NULL: the tags of its removed receive
 *       completions become free
 *
 * The other valid CQEs move towards the producer over the removed ones
 * and the freed slots count as consumed. The device writes only into
 * consumed slots, so it does not race with this.
 *
 * Context: cq->kcq->lock held.
 */
void dray_kcq_clean(struct dray_cq *cq, u32 qpn, struct dray_srq *srq)
{
	struct dray_kcq *kcq = cq->kcq;
	u32 end = kcq->consumer, removed = 0, i;

	lockdep_assert_held(&kcq->lock);

	while (end - kcq->consumer < kcq->depth &&
	       (READ_ONCE(kcq->cqes[dray_ring_slot(end, kcq->depth)].flags) &
		DRAY_CQE_F_PHASE) == dray_ring_phase(end, kcq->depth))
		end++;
	/* As in kcq_peek(): bodies only after valid phase bits. */
	dma_rmb();

	for (i = end; i != kcq->consumer;) {
		struct dray_cqe *src, *dst;
		u8 phase;

		i--;
		src = &kcq->cqes[dray_ring_slot(i, kcq->depth)];
		if (le32_to_cpu(src->qpn) == qpn) {
			u64 wr_id;

			if (srq && (src->flags & DRAY_CQE_F_SRQ))
				dray_ksrq_retire(srq, le32_to_cpu(src->wqe_index),
						 &wr_id);
			removed++;
			continue;
		}
		if (!removed)
			continue;
		/* dst is valid too: it keeps the phase of its own slot. */
		dst = &kcq->cqes[dray_ring_slot(i + removed, kcq->depth)];
		phase = dst->flags & DRAY_CQE_F_PHASE;
		memcpy(dst, src, offsetof(struct dray_cqe, flags));
		dst->flags = (src->flags & ~DRAY_CQE_F_PHASE) | phase;
	}
	if (removed) {
		kcq->consumer += removed;
		kcq_publish_consumer(kcq);
	}
}
