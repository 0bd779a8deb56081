// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: queue pairs, reliable and unreliable connected (RC, UC),
 * unreliable datagram (UD) and XRC initiators; XRC target QPs are made in
 * xrc.c. UD send WQEs name an address handle by its device number (ah.c,
 * returned to the provider by create_ah).
 *
 * A user QP's SQ and RQ rings live in user memory allocated by the
 * provider (a kernel QP's in kernel memory, see kqp.c): each
 * a 64-byte doorbell record, then 2^log_depth WQEs of 2^log_stride bytes
 * (dray_queue.h). The driver checks the geometry against the verb's caps
 * and the device's limits, pins both rings and hands the device their
 * MTTs. Posting and polling happen in user space.
 *
 * The device owns the QP state machine; the driver checks every
 * transition against IBTA (ib_modify_qp_is_ok()) and every attribute
 * against the device's limits first, so a bad request fails here with a
 * precise debug log rather than as a device syndrome.
 */

#include <rdma/ib_umem.h>
#include <uapi/rdma/dray-abi.h>

#include "dray.h"

/* Bounds on the user's geometry before any shift by it. */
#define DRAY_WQ_LOG_DEPTH_MAX	24
#define DRAY_WQ_LOG_STRIDE_MAX	16

/* The mask bits share IBTA's numbering with enum ib_qp_attr_mask. */
static_assert(DRAY_QP_ATTR_STATE == IB_QP_STATE);
static_assert(DRAY_QP_ATTR_ACCESS_FLAGS == IB_QP_ACCESS_FLAGS);
static_assert(DRAY_QP_ATTR_PKEY_INDEX == IB_QP_PKEY_INDEX);
static_assert(DRAY_QP_ATTR_PORT == IB_QP_PORT);
static_assert(DRAY_QP_ATTR_QKEY == IB_QP_QKEY);
static_assert(DRAY_QP_ATTR_AV == IB_QP_AV);
static_assert(DRAY_QP_ATTR_PATH_MTU == IB_QP_PATH_MTU);
static_assert(DRAY_QP_ATTR_TIMEOUT == IB_QP_TIMEOUT);
static_assert(DRAY_QP_ATTR_RETRY_CNT == IB_QP_RETRY_CNT);
static_assert(DRAY_QP_ATTR_RNR_RETRY == IB_QP_RNR_RETRY);
static_assert(DRAY_QP_ATTR_RQ_PSN == IB_QP_RQ_PSN);
static_assert(DRAY_QP_ATTR_MAX_QP_RD_ATOMIC == IB_QP_MAX_QP_RD_ATOMIC);
static_assert(DRAY_QP_ATTR_MIN_RNR_TIMER == IB_QP_MIN_RNR_TIMER);
static_assert(DRAY_QP_ATTR_SQ_PSN == IB_QP_SQ_PSN);
static_assert(DRAY_QP_ATTR_MAX_DEST_RD_ATOMIC == IB_QP_MAX_DEST_RD_ATOMIC);
static_assert(DRAY_QP_ATTR_DEST_QPN == IB_QP_DEST_QPN);
/* And the states and MTUs share IBTA's encodings. */
static_assert((int)DRAY_QPS_RESET == IB_QPS_RESET);
static_assert((int)DRAY_QPS_INIT == IB_QPS_INIT);
static_assert((int)DRAY_QPS_RTR == IB_QPS_RTR);
static_assert((int)DRAY_QPS_RTS == IB_QPS_RTS);
static_assert((int)DRAY_QPS_SQD == IB_QPS_SQD);
static_assert((int)DRAY_QPS_SQE == IB_QPS_SQE);
static_assert((int)DRAY_QPS_ERR == IB_QPS_ERR);
static_assert((int)DRAY_MTU_256 == IB_MTU_256);
static_assert((int)DRAY_MTU_4096 == IB_MTU_4096);

/*
 * Attributes the device takes, in DRAY_QP_ATTR_* (= IB_QP_*) bits. With
 * CUR_STATE the device applies the transition only from that state; it
 * accepts EN_SQD_ASYNC_NOTIFY where IBTA does (whether the consumer hears
 * of the drained SQ is the driver's business, see sqd_notify).
 */
#define DRAY_QP_ATTR_HW	(DRAY_QP_ATTR_STATE | IB_QP_CUR_STATE | \
			 IB_QP_EN_SQD_ASYNC_NOTIFY | DRAY_QP_ATTR_ACCESS_FLAGS | \
			 DRAY_QP_ATTR_PKEY_INDEX | DRAY_QP_ATTR_PORT | \
			 DRAY_QP_ATTR_QKEY | DRAY_QP_ATTR_AV | \
			 DRAY_QP_ATTR_PATH_MTU | DRAY_QP_ATTR_TIMEOUT | \
			 DRAY_QP_ATTR_RETRY_CNT | DRAY_QP_ATTR_RNR_RETRY | \
			 DRAY_QP_ATTR_RQ_PSN | DRAY_QP_ATTR_MAX_QP_RD_ATOMIC | \
			 DRAY_QP_ATTR_MIN_RNR_TIMER | DRAY_QP_ATTR_SQ_PSN | \
			 DRAY_QP_ATTR_MAX_DEST_RD_ATOMIC | DRAY_QP_ATTR_DEST_QPN)
/* Attributes modify_qp accepts. */
#define DRAY_QP_ATTR_SUPPORTED	DRAY_QP_ATTR_HW

/*
 * The remote FLUSH rights (IB_UVERBS_ACCESS_FLUSH_GLOBAL and
 * IB_UVERBS_ACCESS_FLUSH_PERSISTENT, bits 8 and 9, named from Linux 6.2 on;
 * 6.1 passes them through from user space unnamed). The device has no
 * FLUSH operation: it reports no FLUSH capability and MRs refuse these
 * rights. On a QP they therefore permit nothing; they are accepted and
 * dropped (not handed to the device), as drivers without FLUSH (mlx5) do,
 * so that a consumer that asks for every right a QP may need still gets
 * its QP.
 */
#define DRAY_QP_ACCESS_FLUSH	0x300

#define DRAY_QP_ACCESS_SUPPORTED (IB_ACCESS_LOCAL_WRITE | \
				  IB_ACCESS_REMOTE_WRITE | \
				  IB_ACCESS_REMOTE_READ | \
				  IB_ACCESS_REMOTE_ATOMIC | \
				  DRAY_QP_ACCESS_FLUSH)

/* ---- events ------------------------------------------------------------ */

static void dray_qp_put(struct dray_qp *qp)
{
	if (refcount_dec_and_test(&qp->refs))
		complete(&qp->unused);
}

/* Context: the EQ handler (bottom halves disabled). */
static struct dray_qp *dray_qp_get(struct dray_dev *dev, u32 qpn)
{
	struct dray_qp *qp;

	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->refs))
		qp = NULL;
	xa_unlock(&dev->qps);
	return qp;
}

/* An async QP event on its way to the consumer, holding the QP. */
struct dray_qp_event_work {
	struct work_struct	work;
	struct dray_qp		*qp;
	enum ib_event_type	event;
};

static void dray_qp_event_work(struct work_struct *work)
{
	struct dray_qp_event_work *w =
		container_of(work, struct dray_qp_event_work, work);
	struct ib_qp *ibqp = &w->qp->ibqp;
	struct ib_event ev = {
		.device = ibqp->device,
		.event = w->event,
		.element.qp = ibqp,
	};

	ibqp->event_handler(&ev, ibqp->qp_context);
	dray_qp_put(w->qp);
	kfree(w);
}

static enum ib_event_type dray_qp_event_type(u8 type)
{
	switch (type) {
	case DRAY_EQE_QP_FATAL:
		return IB_EVENT_QP_FATAL;
	case DRAY_EQE_QP_REQ_ERR:
		return IB_EVENT_QP_REQ_ERR;
	case DRAY_EQE_QP_ACCESS_ERR:
		return IB_EVENT_QP_ACCESS_ERR;
	case DRAY_EQE_COMM_EST:
		return IB_EVENT_COMM_EST;
	case DRAY_EQE_QP_LAST_WQE:
		return IB_EVENT_QP_LAST_WQE_REACHED;
	default:
		return IB_EVENT_SQ_DRAINED;
	}
}

/**
 * dray_qp_event() - deliver an async QP event from an EQ
 * @dev: the device
 * @qpn: the QP number from the event
 * @type: one of the DRAY_EQE_QP_*, COMM_EST or SQ_DRAINED event types
 * @data1: the event's data (vendor error for QP_FATAL)
 *
 * QP event handlers run in workqueue context (struct ib_qp_init_attr), so
 * the event is passed on through dev->wq, in order, holding the QP. An
 * event for a QP that is gone is dropped.
 *
 * Context: the EQ handler (atomic, bottom halves disabled).
 */
void dray_qp_event(struct dray_dev *dev, u32 qpn, u8 type, u64 data1)
{
	struct dray_qp_event_work *w;
	struct dray_qp *qp;

	qp = dray_qp_get(dev, qpn);
	if (!qp) {
		ddev_dbg_rl(dev, "event %u for unknown QP %u\n", type, qpn);
		return;
	}
	dqp_dbg(qp, "event %u, data %#llx\n", type, data1);
	if (!qp->ibqp.event_handler)
		goto put_qp;
	/* Drained is reported only if the last move to SQD asked for it. */
	if (type == DRAY_EQE_SQ_DRAINED && !READ_ONCE(qp->sqd_notify))
		goto put_qp;
	w = kzalloc(sizeof(*w), GFP_ATOMIC);
	if (!w) {
		dqp_err(qp, "event %u dropped: out of memory\n", type);
		goto put_qp;
	}
	INIT_WORK(&w->work, dray_qp_event_work);
	w->qp = qp;
	w->event = dray_qp_event_type(type);
	queue_work(dev->wq, &w->work);
	return;

put_qp:
	dray_qp_put(qp);
}

/* ---- create and destroy ------------------------------------------------ */

int dray_qp_check_init_attr(struct dray_dev *dev,
			    const struct ib_qp_init_attr *ia)
{
	const struct ib_qp_cap *cap = &ia->cap;
	const struct dray_caps *c = &dev->caps;

	/*
	 * GSI: kernel only (dray_kqp_create()); the core keeps it so. UC,
	 * XRC initiators: user space only (dray_kqp_create() refuses them).
	 */
	if (ia->qp_type != IB_QPT_RC && ia->qp_type != IB_QPT_UC &&
	    ia->qp_type != IB_QPT_UD && ia->qp_type != IB_QPT_GSI &&
	    ia->qp_type != IB_QPT_XRC_INI) {
		ddev_dbg_rl(dev, "create_qp: type %u not supported (RC, UC, UD, GSI, XRC)\n",
			    ia->qp_type);
		return -EOPNOTSUPP;
	}
	if (ia->rwq_ind_tbl || ia->create_flags) {
		ddev_dbg_rl(dev, "create_qp: RWQ table, create_flags %#x: unsupported\n",
			    ia->create_flags);
		return -EOPNOTSUPP;
	}
	if (ia->srq && ia->srq->srq_type != IB_SRQT_BASIC) {
		ddev_dbg_rl(dev, "create_qp: SRQ type %u not supported\n",
			    ia->srq->srq_type);
		return -EOPNOTSUPP;
	}
	/* An XRC initiator sends only: no receive CQ (the core drops it). */
	if (!ia->send_cq ||
	    (!ia->recv_cq && ia->qp_type != IB_QPT_XRC_INI)) {
		ddev_dbg_rl(dev, "create_qp: a QP needs a send and a receive CQ\n");
		return -EINVAL;
	}
	if (cap->max_send_wr > c->max_qp_wr || cap->max_recv_wr > c->max_qp_wr) {
		ddev_dbg_rl(dev, "create_qp: max_send_wr %u / max_recv_wr %u exceed max_qp_wr %u\n",
			    cap->max_send_wr, cap->max_recv_wr, c->max_qp_wr);
		return -EINVAL;
	}
	if (cap->max_send_sge > c->max_send_sge) {
		ddev_dbg_rl(dev, "create_qp: max_send_sge %u exceeds %u\n",
			    cap->max_send_sge, c->max_send_sge);
		return -EINVAL;
	}
	if (cap->max_recv_sge > c->max_recv_sge) {
		ddev_dbg_rl(dev, "create_qp: max_recv_sge %u exceeds %u\n",
			    cap->max_recv_sge, c->max_recv_sge);
		return -EINVAL;
	}
	if (cap->max_inline_data > c->max_inline_data) {
		ddev_dbg_rl(dev, "create_qp: max_inline_data %u exceeds %u\n",
			    cap->max_inline_data, c->max_inline_data);
		return -EINVAL;
	}
	return 0;
}

/* A receive queue of its own: neither on an SRQ nor an XRC initiator. */
static bool dray_qp_has_rq(const struct ib_qp_init_attr *ia)
{
	return !ia->srq && ia->qp_type != IB_QPT_XRC_INI;
}

/* The shape of one work queue, for checking the provider's geometry. */
struct dray_wq_shape {
	const char	*name;		/* "sq" or "rq" */
	u8		log_depth;	/* from the provider */
	u8		log_stride;
	u32		wr;		/* requested */
	u32		min_stride;	/* holds the requested SGEs/inline */
	u32		max_stride;	/* holds the device's maximum */
};

static int dray_wq_check(struct dray_dev *dev, const struct dray_wq_shape *s)
{
	u32 max_depth = roundup_pow_of_two(dev->caps.max_qp_wr);
	u32 max_stride = roundup_pow_of_two(s->max_stride);

	if (s->log_depth > DRAY_WQ_LOG_DEPTH_MAX ||
	    BIT(s->log_depth) < s->wr || BIT(s->log_depth) > max_depth) {
		ddev_dbg_rl(dev, "create_qp: %s_log_depth %u: depth not in [%u, %u] max_qp_wr %u\n",
			    s->name, s->log_depth, s->wr, max_depth,
			    dev->caps.max_qp_wr);
		return -EINVAL;
	}
	if (s->log_stride > DRAY_WQ_LOG_STRIDE_MAX ||
	    BIT(s->log_stride) < s->min_stride ||
	    BIT(s->log_stride) > max_stride) {
		ddev_dbg_rl(dev, "create_qp: %s_log_stride %u: stride must be in [%u, %u]\n",
			    s->name, s->log_stride, s->min_stride, max_stride);
		return -EINVAL;
	}
	return 0;
}

static int dray_qp_check_cmd(struct dray_dev *dev,
			     const struct ib_qp_init_attr *ia,
			     const struct dray_create_qp_cmd *cmd)
{
	const struct dray_caps *c = &dev->caps;
	struct dray_wq_shape sq = {
		.name = "sq",
		.log_depth = cmd->sq_log_depth,
		.log_stride = cmd->sq_log_stride,
		.wr = ia->cap.max_send_wr,
		.min_stride = DRAY_SQ_WQE_HDR_SIZE +
			      max(ia->cap.max_send_sge * DRAY_SGE_SIZE,
				  ia->cap.max_inline_data),
		.max_stride = DRAY_SQ_WQE_HDR_SIZE +
			      max(c->max_send_sge * DRAY_SGE_SIZE,
				  c->max_inline_data),
	};
	struct dray_wq_shape rq = {
		.name = "rq",
		.log_depth = cmd->rq_log_depth,
		.log_stride = cmd->rq_log_stride,
		.wr = ia->cap.max_recv_wr,
		.min_stride = DRAY_RQ_WQE_HDR_SIZE +
			      ia->cap.max_recv_sge * DRAY_SGE_SIZE,
		.max_stride = DRAY_RQ_WQE_HDR_SIZE +
			      c->max_recv_sge * DRAY_SGE_SIZE,
	};
	int ret;

	if (cmd->reserved) {
		ddev_dbg_rl(dev, "create_qp: reserved command bytes not zero\n");
		return -EINVAL;
	}
	ret = dray_wq_check(dev, &sq);
	if (ret)
		return ret;
	if (dray_qp_has_rq(ia))
		return dray_wq_check(dev, &rq);
	if (cmd->rq_buf_addr || cmd->rq_buf_size || cmd->rq_log_depth ||
	    cmd->rq_log_stride) {
		ddev_dbg_rl(dev, "create_qp: no receive queue on an SRQ or for XRC\n");
		return -EINVAL;
	}
	return 0;
}

static u64 dray_wq_bytes(u8 log_depth, u8 log_stride)
{
	return DRAY_QUEUE_HDR_SIZE + (1ULL << (log_depth + log_stride));
}

/* What the rings really hold, within the device's limits. */
static void dray_qp_actual_caps(struct dray_dev *dev,
				const struct dray_create_qp_cmd *cmd,
				bool has_rq, struct ib_qp_cap *cap)
{
	const struct dray_caps *c = &dev->caps;
	u32 sq_room = BIT(cmd->sq_log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	u32 rq_room = BIT(cmd->rq_log_stride) - DRAY_RQ_WQE_HDR_SIZE;

	cap->max_send_wr = min_t(u32, BIT(cmd->sq_log_depth), c->max_qp_wr);
	cap->max_recv_wr = min_t(u32, BIT(cmd->rq_log_depth), c->max_qp_wr);
	cap->max_send_sge = min(sq_room / DRAY_SGE_SIZE, c->max_send_sge);
	cap->max_recv_sge = min(rq_room / DRAY_SGE_SIZE, c->max_recv_sge);
	cap->max_inline_data = min(sq_room, c->max_inline_data);
	if (!has_rq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
}

/* Pin both rings, hand them to the device and create the QP there. */
static int dray_qp_setup(struct dray_dev *dev, struct dray_qp *qp,
			 const struct ib_qp_init_attr *ia,
			 const struct dray_create_qp_cmd *cmd, u32 uar_index)
{
	struct dray_qp_params p = {
		.type = ia->qp_type == IB_QPT_UD ? DRAY_QPT_UD :
			ia->qp_type == IB_QPT_UC ? DRAY_QPT_UC :
			ia->qp_type == IB_QPT_XRC_INI ? DRAY_QPT_XRC_INI :
							DRAY_QPT_RC,
		.sq_log_depth = cmd->sq_log_depth,
		.sq_log_stride = cmd->sq_log_stride,
		.rq_log_depth = cmd->rq_log_depth,
		.rq_log_stride = cmd->rq_log_stride,
		.flags = ia->sq_sig_type == IB_SIGNAL_ALL_WR ?
			 DRAY_QP_F_SQ_SIG_ALL : 0,
		.pdn = to_dpd(qp->ibqp.pd)->pdn,
		.send_cqn = to_dcq(ia->send_cq)->cqn,
		.recv_cqn = ia->recv_cq ? to_dcq(ia->recv_cq)->cqn : 0,
		.uar_index = uar_index,
	};
	struct dray_mtt sq_mtt, rq_mtt;
	int ret;

	if (ia->srq) {
		p.flags |= DRAY_QP_F_SRQ;
		p.srqn = to_dsrq(ia->srq)->srqn;
		if (to_dsrq(ia->srq)->ksrq) {
			ddev_dbg_rl(dev, "create_qp: a user QP on a kernel SRQ\n");
			return -EINVAL;
		}
	}

	qp->sq_umem = dray_queue_pin(dev, "sq", cmd->sq_buf_addr,
				     cmd->sq_buf_size,
				     dray_wq_bytes(cmd->sq_log_depth,
						   cmd->sq_log_stride),
				     &p.sq_n_pages);
	if (IS_ERR(qp->sq_umem))
		return PTR_ERR(qp->sq_umem);
	if (!dray_qp_has_rq(ia)) {
		qp->rq_umem = NULL;
		ret = dray_mtt_build(dev, qp->sq_umem, p.sq_n_pages, &sq_mtt);
		if (ret)
			goto release_sq_umem;
		p.sq_mtt = dray_mtt_addr(&sq_mtt);
		ret = dray_admin_create_qp(dev, &p, &qp->qpn);
		dray_mtt_free(dev, &sq_mtt);
		if (ret)
			goto release_sq_umem;
		return 0;
	}
	qp->rq_umem = dray_queue_pin(dev, "rq", cmd->rq_buf_addr,
				     cmd->rq_buf_size,
				     dray_wq_bytes(cmd->rq_log_depth,
						   cmd->rq_log_stride),
				     &p.rq_n_pages);
	if (IS_ERR(qp->rq_umem)) {
		ret = PTR_ERR(qp->rq_umem);
		goto release_sq_umem;
	}
	ret = dray_mtt_build(dev, qp->sq_umem, p.sq_n_pages, &sq_mtt);
	if (ret)
		goto release_rq_umem;
	ret = dray_mtt_build(dev, qp->rq_umem, p.rq_n_pages, &rq_mtt);
	if (ret)
		goto free_sq_mtt;
	p.sq_mtt = dray_mtt_addr(&sq_mtt);
	p.rq_mtt = dray_mtt_addr(&rq_mtt);

	ret = dray_admin_create_qp(dev, &p, &qp->qpn);
	dray_mtt_free(dev, &rq_mtt);
	dray_mtt_free(dev, &sq_mtt);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "create_qp: no free QP, max_qp %u\n",
				    dev->caps.max_qp);
		goto release_rq_umem;
	}
	return 0;

free_sq_mtt:
	dray_mtt_free(dev, &sq_mtt);
release_rq_umem:
	ib_umem_release(qp->rq_umem);
release_sq_umem:
	ib_umem_release(qp->sq_umem);
	return ret;
}

/*
 * Destroy the device QP and release what it used. If the device did not
 * let go (a dead admin queue), the rings stay pinned forever rather than
 * being reused under it. Returns -EBUSY if the device refused.
 */
static int dray_qp_teardown(struct dray_dev *dev, struct dray_qp *qp)
{
	int ret;

	ret = dray_admin_destroy_qp(dev, qp->qpn);
	if (ret == -EBUSY) {
		dqp_dbg(qp, "destroy: still in use\n");
		return ret;
	}
	if (ret && ret != -ENOENT) {
		dqp_err(qp, "destroy failed (%d), rings leaked\n", ret);
		return 0;
	}
	if (qp->kqp) {
		/* No CQE of the QP is left for poll_cq to look it up by. */
		dray_kqp_clean_cqs(qp);
		dray_kqp_free(dev, qp);
		return 0;
	}
	ib_umem_release(qp->rq_umem);
	ib_umem_release(qp->sq_umem);
	return 0;
}

/* Make the QP findable by events (and kernel QPs by poll_cq). */
int dray_qp_publish(struct dray_dev *dev, struct dray_qp *qp)
{
	int ret;

	refcount_set(&qp->refs, 1);
	init_completion(&qp->unused);
	ret = xa_insert_bh(&dev->qps, qp->qpn, qp, GFP_KERNEL);
	if (ret)
		ddev_err_rl(dev, "QP number %u from the device is in use (%d)\n",
			    qp->qpn, ret);
	return ret;
}

/* Stop event dispatch to the QP and wait for events in flight. */
void dray_qp_unpublish(struct dray_dev *dev, struct dray_qp *qp)
{
	xa_erase_bh(&dev->qps, qp->qpn);
	dray_qp_put(qp);
	wait_for_completion(&qp->unused);
}

/* A user QP: check the provider's rings, pin them, create the QP. */
static int dray_qp_create_user(struct dray_dev *dev, struct dray_qp *qp,
			       struct ib_qp_init_attr *init_attr,
			       struct ib_udata *udata)
{
	struct dray_create_qp_cmd cmd;
	struct dray_ucontext *uctx;
	int ret;

	uctx = rdma_udata_to_drv_context(udata, struct dray_ucontext,
					 ibucontext);
	ret = dray_qp_check_init_attr(dev, init_attr);
	if (ret)
		return ret;
	if (init_attr->qp_type == IB_QPT_GSI) {
		ddev_dbg_rl(dev, "create_qp: the GSI QP belongs to the kernel\n");
		return -EOPNOTSUPP;
	}
	ret = dray_udata_cmd(dev, udata, &cmd, sizeof(cmd),
			     offsetofend(typeof(cmd), rq_log_stride),
			     "create_qp");
	if (ret)
		return ret;
	ret = dray_qp_check_cmd(dev, init_attr, &cmd);
	if (ret)
		return ret;

	ret = dray_qp_setup(dev, qp, init_attr, &cmd, uctx->uar_index);
	if (ret)
		return ret;
	dray_qp_actual_caps(dev, &cmd, dray_qp_has_rq(init_attr), &qp->cap);
	return 0;
}

/* A kernel QP (no udata) has its rings in kernel memory: see kqp.c. */
int dray_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibqp->device);
	struct dray_qp *qp = to_dqp(ibqp);
	struct dray_create_qp_resp resp = {};
	int ret;

	/* The core makes XRC target QPs without udata, for users too. */
	if (!udata && init_attr->qp_type != IB_QPT_XRC_TGT)
		return dray_kqp_create(dev, qp, init_attr);
	if (udata)
		ret = dray_qp_create_user(dev, qp, init_attr, udata);
	else
		ret = dray_xrc_tgt_create(dev, qp, init_attr);
	if (ret)
		return ret;
	ibqp->qp_num = qp->qpn;
	mutex_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_type = init_attr->sq_sig_type;
	ret = dray_qp_publish(dev, qp);
	if (ret)
		goto teardown;
	init_attr->cap = qp->cap;
	if (!udata)
		return 0;

	resp.qpn = qp->qpn;
	resp.max_inline_data = qp->cap.max_inline_data;
	ret = dray_udata_resp(dev, udata, &resp, sizeof(resp),
			      offsetofend(typeof(resp), qpn), "create_qp");
	if (ret)
		goto destroy_qp;
	return 0;

destroy_qp:
	dray_destroy_qp(ibqp, udata);
	return ret;
teardown:
	dray_qp_teardown(dev, qp);
	mutex_destroy(&qp->lock);
	return ret;
}

int dray_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibqp->device);
	struct dray_qp *qp = to_dqp(ibqp);
	int ret;

	/* The device stops raising events for the QP when it is gone. */
	ret = dray_qp_teardown(dev, qp);
	if (ret)
		return ret;
	dray_qp_unpublish(dev, qp);
	mutex_destroy(&qp->lock);
	return 0;
}

/* ---- modify and query -------------------------------------------------- */

static bool dray_qp_attr_le(struct dray_qp *qp, int mask, int bit,
			    const char *name, u32 val, u32 max)
{
	if (!(mask & bit) || val <= max)
		return true;
	dqp_dbg(qp, "modify: %s %u exceeds %u\n", name, val, max);
	return false;
}

/* Range checks of the scalar attributes, IBTA's and the device's. */
static int dray_qp_check_ranges(struct dray_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	const struct dray_caps *c = &to_ddev(qp->ibqp.device)->caps;

	if (!dray_qp_attr_le(qp, mask, IB_QP_PKEY_INDEX, "pkey_index",
			     attr->pkey_index, 0) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_TIMEOUT, "timeout",
			     attr->timeout, 31) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_RETRY_CNT, "retry_cnt",
			     attr->retry_cnt, 7) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_RNR_RETRY, "rnr_retry",
			     attr->rnr_retry, 7) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_MIN_RNR_TIMER, "min_rnr_timer",
			     attr->min_rnr_timer, 31) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_RQ_PSN, "rq_psn",
			     attr->rq_psn, DRAY_PSN_MASK) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_SQ_PSN, "sq_psn",
			     attr->sq_psn, DRAY_PSN_MASK) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_DEST_QPN, "dest_qp_num",
			     attr->dest_qp_num, DRAY_QPN_MASK) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_MAX_QP_RD_ATOMIC,
			     "max_rd_atomic", attr->max_rd_atomic,
			     c->max_qp_init_rd_atom) ||
	    !dray_qp_attr_le(qp, mask, IB_QP_MAX_DEST_RD_ATOMIC,
			     "max_dest_rd_atomic", attr->max_dest_rd_atomic,
			     c->max_qp_rd_atom))
		return -EINVAL;
	return 0;
}

/* IBTA allows any path MTU up to the port's maximum. */
static int dray_qp_check_mtu(struct dray_qp *qp, enum ib_mtu mtu)
{
	struct dray_dev *dev = to_ddev(qp->ibqp.device);
	struct dray_port_attr pa;
	int ret;

	ret = dray_admin_query_port(dev, 1, &pa);
	if (ret)
		return ret;
	if (mtu < IB_MTU_256 || mtu > pa.max_mtu) {
		dqp_dbg(qp, "modify: path_mtu %d must be in [%d, port max_mtu %u]\n",
			mtu, IB_MTU_256, pa.max_mtu);
		return -EINVAL;
	}
	return 0;
}

static int dray_qp_attr_to_hw(struct dray_qp *qp, const struct ib_qp_attr *attr,
			      int mask, struct dray_qp_attr_params *p)
{
	struct dray_dev *dev = to_ddev(qp->ibqp.device);
	int ret;

	ret = dray_qp_check_ranges(qp, attr, mask);
	if (ret)
		return ret;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~DRAY_QP_ACCESS_SUPPORTED)) {
		dqp_dbg(qp, "modify: qp_access_flags %#x: unsupported %#x\n",
			attr->qp_access_flags,
			attr->qp_access_flags & ~DRAY_QP_ACCESS_SUPPORTED);
		return -EOPNOTSUPP;
	}
	if (mask & IB_QP_PATH_MTU) {
		ret = dray_qp_check_mtu(qp, attr->path_mtu);
		if (ret)
			return ret;
	}

	memset(p, 0, sizeof(*p));
	p->mask = mask & DRAY_QP_ATTR_HW;
	p->state = attr->qp_state;
	p->cur_state = attr->cur_qp_state;
	p->access = dray_access_to_hw(attr->qp_access_flags) &
		    ~DRAY_ACCESS_LOCAL_WRITE;
	p->qkey = attr->qkey;
	p->path_mtu = attr->path_mtu;
	p->timeout = attr->timeout;
	p->retry_cnt = attr->retry_cnt;
	p->rnr_retry = attr->rnr_retry;
	p->min_rnr_timer = attr->min_rnr_timer;
	p->max_rd_atomic = attr->max_rd_atomic;
	p->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	p->rq_psn = attr->rq_psn;
	p->sq_psn = attr->sq_psn;
	p->dest_qpn = attr->dest_qp_num;
	if (!(mask & IB_QP_AV))
		return 0;

	ret = dray_path_from_ah_attr(dev, &attr->ah_attr, &p->path);
	if (ret)
		return ret;
	/* No flow label: derive the port from both QP numbers, as peers do. */
	if (!p->path.flow_label && (mask & IB_QP_DEST_QPN))
		p->path.udp_sport = rdma_get_udp_sport(0, qp->qpn,
						       attr->dest_qp_num);
	else if (!p->path.flow_label && qp->has_dest_qpn)
		p->path.udp_sport = rdma_get_udp_sport(0, qp->qpn,
						       qp->dest_qpn);
	return 0;
}

/* The driver-side state after a successful MODIFY_QP. */
static void dray_qp_modified(struct dray_qp *qp, const struct ib_qp_attr *attr,
			     int mask, enum ib_qp_state new_state)
{
	lockdep_assert_held(&qp->lock);

	qp->state = new_state;
	if (mask & IB_QP_DEST_QPN) {
		qp->dest_qpn = attr->dest_qp_num;
		qp->has_dest_qpn = true;
	}
	if (new_state == IB_QPS_RESET)
		qp->has_dest_qpn = false;
}

/*
 * Refresh the cached state from the device: it may have moved the QP on
 * its own (to ERR after a transport error, to SQE for unreliable types).
 */
static int dray_qp_refresh_state(struct dray_dev *dev, struct dray_qp *qp)
{
	struct dray_qp_attr_params p;
	int ret;

	lockdep_assert_held(&qp->lock);

	ret = dray_admin_query_qp(dev, qp->qpn, &p);
	if (ret)
		return ret;
	if (p.state > IB_QPS_ERR) {
		dqp_err(qp, "device reports state %u\n", p.state);
		return -EIO;
	}
	qp->state = p.state;
	return 0;
}

int dray_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibqp->device);
	struct dray_qp *qp = to_dqp(ibqp);
	enum ib_qp_state cur, next;
	struct dray_qp_attr_params p;
	bool sqd_notify;
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "modify_qp");
		if (ret)
			return ret;
	}

	mutex_lock(&qp->lock);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask) &&
	    !(mask & IB_QP_CUR_STATE) && !dray_qp_refresh_state(dev, qp)) {
		/* Judge by the state the device is really in. */
		cur = qp->state;
		next = mask & IB_QP_STATE ? attr->qp_state : cur;
	}
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		dqp_dbg(qp, "modify: %u -> %u with attr_mask %#x not allowed\n",
			cur, next, mask);
		ret = -EINVAL;
		goto unlock;
	}
	if (mask & ~DRAY_QP_ATTR_SUPPORTED) {
		dqp_dbg(qp, "modify: attr_mask %#x not supported\n",
			mask & ~DRAY_QP_ATTR_SUPPORTED);
		ret = -EOPNOTSUPP;
		goto unlock;
	}
	ret = dray_qp_attr_to_hw(qp, attr, mask, &p);
	if (ret)
		goto unlock;
	/*
	 * The device may report the SQ drained before MODIFY_QP completes:
	 * say whether to pass that on before asking for SQD.
	 */
	sqd_notify = READ_ONCE(qp->sqd_notify);
	if ((mask & IB_QP_STATE) && next == IB_QPS_SQD)
		WRITE_ONCE(qp->sqd_notify,
			   (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
			   attr->en_sqd_async_notify);
	ret = dray_admin_modify_qp(dev, qp->qpn, &p);
	if (ret) {
		WRITE_ONCE(qp->sqd_notify, sqd_notify);
		dqp_dbg(qp, "modify: %u -> %u refused by the device (%d)\n",
			cur, next, ret);
		goto unlock;
	}
	dray_qp_modified(qp, attr, mask, next);
	if (qp->kqp && next == IB_QPS_RESET)
		dray_kqp_reset(qp);
unlock:
	mutex_unlock(&qp->lock);
	return ret;
}

static void dray_qp_ah_attr_from_hw(struct rdma_ah_attr *ah,
				    const struct dray_path_params *path)
{
	u8 dgid[16];

	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, NULL, path->flow_label, path->sgid_index,
			path->hop_limit, path->traffic_class);
	memcpy(dgid, path->dgid, sizeof(dgid));
	rdma_ah_set_dgid_raw(ah, dgid);
	memcpy(ah->roce.dmac, path->dmac, ETH_ALEN);
}

/*
 * UD multicast: the core checked the QP type (UD) and the GID (multicast);
 * the device keeps the groups. User and kernel QPs alike.
 */
int dray_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct dray_qp *qp = to_dqp(ibqp);
	int ret;

	ret = dray_admin_mcast(to_ddev(ibqp->device), qp->qpn, gid->raw, true);
	if (ret)
		dqp_dbg(qp, "attach to %pI6 failed (%d)\n", gid->raw, ret);
	/* The device's table is full: the groups or this group's QPs. */
	return ret == -ENOSPC ? -ENOMEM : ret;
}

int dray_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct dray_qp *qp = to_dqp(ibqp);
	int ret;

	ret = dray_admin_mcast(to_ddev(ibqp->device), qp->qpn, gid->raw, false);
	/* Not attached to that group: -ENOENT from the device, -EINVAL here. */
	return ret == -ENOENT ? -EINVAL : ret;
}

/* Only a connected QP has a path; a UD QP's are in its AHs. */
static bool dray_qp_has_path(const struct dray_qp *qp,
			     const struct dray_qp_attr_params *p)
{
	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_UC &&
	    qp->ibqp.qp_type != IB_QPT_XRC_INI &&
	    qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return false;
	return (p->mask & DRAY_QP_ATTR_AV) ||
	       (p->state >= IB_QPS_RTR && p->state <= IB_QPS_SQE);
}

static int dray_qp_attr_from_hw(struct dray_qp *qp,
				const struct dray_qp_attr_params *p,
				struct ib_qp_attr *attr)
{
	if (p->state > IB_QPS_ERR || p->path_mtu > IB_MTU_4096) {
		dqp_err(qp, "device reports state %u, path_mtu %u\n",
			p->state, p->path_mtu);
		return -EIO;
	}
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = p->state;
	attr->cur_qp_state = p->state;
	attr->path_mtu = p->path_mtu;	/* 0 until one was set */
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = p->qkey;
	attr->rq_psn = p->rq_psn;
	attr->sq_psn = p->sq_psn;
	attr->dest_qp_num = p->dest_qpn;
	if (p->access & DRAY_ACCESS_REMOTE_WRITE)
		attr->qp_access_flags |= IB_ACCESS_REMOTE_WRITE;
	if (p->access & DRAY_ACCESS_REMOTE_READ)
		attr->qp_access_flags |= IB_ACCESS_REMOTE_READ;
	if (p->access & DRAY_ACCESS_REMOTE_ATOMIC)
		attr->qp_access_flags |= IB_ACCESS_REMOTE_ATOMIC;
	attr->cap = qp->cap;
	if (dray_qp_has_path(qp, p))
		dray_qp_ah_attr_from_hw(&attr->ah_attr, &p->path);
	attr->pkey_index = 0;
	attr->en_sqd_async_notify = READ_ONCE(qp->sqd_notify);
	attr->sq_draining = p->sq_draining;
	attr->max_rd_atomic = p->max_rd_atomic;
	attr->max_dest_rd_atomic = p->max_dest_rd_atomic;
	attr->min_rnr_timer = p->min_rnr_timer;
	attr->port_num = 1;
	attr->timeout = p->timeout;
	attr->retry_cnt = p->retry_cnt;
	attr->rnr_retry = p->rnr_retry;
	return 0;
}

int dray_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr)
{
	struct dray_dev *dev = to_ddev(ibqp->device);
	struct dray_qp *qp = to_dqp(ibqp);
	struct dray_qp_attr_params p;
	int ret;

	mutex_lock(&qp->lock);
	ret = dray_admin_query_qp(dev, qp->qpn, &p);
	if (!ret)
		ret = dray_qp_attr_from_hw(qp, &p, attr);
	if (!ret)
		qp->state = p.state;
	mutex_unlock(&qp->lock);
	if (ret)
		return ret;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->event_handler = ibqp->event_handler;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->xrcd = ibqp->xrcd;
	init_attr->cap = qp->cap;
	init_attr->sq_sig_type = qp->sq_sig_type;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->port_num = 1;
	return 0;
}
