// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: shared receive queues.
 *
 * A user SRQ's ring lives in user memory allocated by the provider (a
 * kernel SRQ's in DMA-coherent kernel memory): a 64-byte doorbell record,
 * then 2^log_depth WQEs of 2^log_stride bytes (dray_queue.h). The driver
 * checks the geometry, pins the ring and hands the device its MTT; the
 * provider posts in user space. For kernel SRQs the driver plays the
 * provider: it names each posted WR by a free tag below the depth, which
 * the device echoes in the completion, so receives may complete in any
 * order across the SRQ's QPs.
 *
 * An XRC SRQ (user space only) is an SRQ of an XRC domain with a CQ of
 * its own: XRC target QPs of the domain place what the requests naming
 * it carry (xrc.c); its number goes back to the core (ext.xrc.srq_num),
 * which hands it to user space for the senders' WQEs.
 *
 * The device raises SRQ_LIMIT (the armed limit was reached, disarmed)
 * and SRQ_ERR (a bad producer index) on the async EQ; they reach the
 * consumer's event handler through dev->wq, holding the SRQ.
 */

#include <rdma/ib_umem.h>
#include <uapi/rdma/dray-abi.h>

#include "dray.h"

#define DRAY_SRQ_LOG_STRIDE_MIN	4
#define DRAY_SRQ_LOG_STRIDE_MAX	9
/* Bound on the user's geometry before any shift by it. */
#define DRAY_SRQ_LOG_DEPTH_MAX	24

#define dsrq_dbg(srq, fmt, ...) do {					\
	const struct dray_srq *__srq = (srq);				\
									\
	ibdev_dbg_ratelimited(__srq->ibsrq.device, "SRQ[%u] " fmt,	\
			      __srq->srqn, ##__VA_ARGS__);		\
} while (0)
#define dsrq_err(srq, fmt, ...) do {					\
	const struct dray_srq *__srq = (srq);				\
									\
	ibdev_err_ratelimited(__srq->ibsrq.device, "SRQ[%u] " fmt,	\
			      __srq->srqn, ##__VA_ARGS__);		\
} while (0)

/* ---- events ------------------------------------------------------------ */

static void dray_srq_put(struct dray_srq *srq)
{
	if (refcount_dec_and_test(&srq->refs))
		complete(&srq->unused);
}

struct dray_srq_event_work {
	struct work_struct	work;
	struct dray_srq		*srq;
	enum ib_event_type	event;
};

static void dray_srq_event_work(struct work_struct *work)
{
	struct dray_srq_event_work *w =
		container_of(work, struct dray_srq_event_work, work);
	struct ib_srq *ibsrq = &w->srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.event = w->event,
		.element.srq = ibsrq,
	};

	ibsrq->event_handler(&ev, ibsrq->srq_context);
	dray_srq_put(w->srq);
	kfree(w);
}

/**
 * dray_srq_event() - deliver an async SRQ event from an EQ
 * @dev: the device
 * @srqn: the SRQ number from the event
 * @type: DRAY_EQE_SRQ_LIMIT or DRAY_EQE_SRQ_ERR
 *
 * Context: the EQ handler (atomic, bottom halves disabled).
 */
void dray_srq_event(struct dray_dev *dev, u32 srqn, u8 type)
{
	struct dray_srq_event_work *w;
	struct dray_srq *srq;

	xa_lock(&dev->srqs);
	srq = xa_load(&dev->srqs, srqn);
	if (srq && !refcount_inc_not_zero(&srq->refs))
		srq = NULL;
	xa_unlock(&dev->srqs);
	if (!srq) {
		ddev_dbg_rl(dev, "event %u for unknown SRQ %u\n", type, srqn);
		return;
	}
	dsrq_dbg(srq, "event %u\n", type);
	if (!srq->ibsrq.event_handler)
		goto put_srq;
	w = kzalloc(sizeof(*w), GFP_ATOMIC);
	if (!w) {
		dsrq_err(srq, "event %u dropped: out of memory\n", type);
		goto put_srq;
	}
	INIT_WORK(&w->work, dray_srq_event_work);
	w->srq = srq;
	w->event = type == DRAY_EQE_SRQ_LIMIT ? IB_EVENT_SRQ_LIMIT_REACHED :
						IB_EVENT_SRQ_ERR;
	queue_work(dev->wq, &w->work);
	return;

put_srq:
	dray_srq_put(srq);
}

static int dray_srq_publish(struct dray_dev *dev, struct dray_srq *srq)
{
	int ret;

	refcount_set(&srq->refs, 1);
	init_completion(&srq->unused);
	ret = xa_insert_bh(&dev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (ret)
		ddev_err_rl(dev, "SRQ number %u from the device is in use (%d)\n",
			    srq->srqn, ret);
	return ret;
}

static void dray_srq_unpublish(struct dray_dev *dev, struct dray_srq *srq)
{
	xa_erase_bh(&dev->srqs, srq->srqn);
	dray_srq_put(srq);
	wait_for_completion(&srq->unused);
}

/* ---- create and destroy ------------------------------------------------ */

static int dray_srq_check_attr(struct dray_dev *dev,
			       const struct ib_srq_init_attr *ia)
{
	const struct ib_srq_attr *a = &ia->attr;
	const struct dray_caps *c = &dev->caps;

	if (ia->srq_type != IB_SRQT_BASIC && ia->srq_type != IB_SRQT_XRC) {
		ddev_dbg_rl(dev, "create_srq: type %u not supported (basic, XRC)\n",
			    ia->srq_type);
		return -EOPNOTSUPP;
	}
	if (ia->srq_type == IB_SRQT_XRC &&
	    (!ia->ext.cq || !ia->ext.xrc.xrcd)) {
		ddev_dbg_rl(dev, "create_srq: an XRC SRQ needs a CQ and an XRC domain\n");
		return -EINVAL;
	}
	if (!a->max_wr || a->max_wr > c->max_srq_wr) {
		ddev_dbg_rl(dev, "create_srq: max_wr %u not in [1, max_srq_wr %u]\n",
			    a->max_wr, c->max_srq_wr);
		return -EINVAL;
	}
	if (a->max_sge > c->max_srq_sge) {
		ddev_dbg_rl(dev, "create_srq: max_sge %u exceeds max_srq_sge %u\n",
			    a->max_sge, c->max_srq_sge);
		return -EINVAL;
	}
	/* srq_limit does not matter here: modify_srq arms the limit. */
	return 0;
}

static u64 dray_srq_bytes(u8 log_depth, u8 log_stride)
{
	return DRAY_QUEUE_HDR_SIZE + (1ULL << (log_depth + log_stride));
}

/* The provider's geometry against the verb's attributes and the limits. */
static int dray_srq_check_cmd(struct dray_dev *dev,
			      const struct ib_srq_attr *a,
			      const struct dray_create_srq_cmd *cmd)
{
	u32 max_depth = rounddown_pow_of_two(dev->caps.max_srq_wr);
	u32 min_stride = DRAY_SRQ_WQE_HDR_SIZE + a->max_sge * DRAY_SGE_SIZE;

	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved))) {
		ddev_dbg_rl(dev, "create_srq: reserved command bytes not zero\n");
		return -EINVAL;
	}
	if (cmd->log_depth > DRAY_SRQ_LOG_DEPTH_MAX ||
	    BIT(cmd->log_depth) < a->max_wr || BIT(cmd->log_depth) > max_depth) {
		ddev_dbg_rl(dev, "create_srq: log_depth %u: depth not in [%u, %u]\n",
			    cmd->log_depth, a->max_wr, max_depth);
		return -EINVAL;
	}
	if (cmd->log_stride < DRAY_SRQ_LOG_STRIDE_MIN ||
	    cmd->log_stride > DRAY_SRQ_LOG_STRIDE_MAX ||
	    BIT(cmd->log_stride) < min_stride) {
		ddev_dbg_rl(dev, "create_srq: log_stride %u: stride must be in [%u, %u]\n",
			    cmd->log_stride, min_stride,
			    1U << DRAY_SRQ_LOG_STRIDE_MAX);
		return -EINVAL;
	}
	return 0;
}

/* Pin the user's ring and create the SRQ (basic or XRC) in the device. */
static int dray_usrq_create(struct dray_dev *dev, struct dray_srq *srq,
			    const struct dray_create_srq_cmd *cmd)
{
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct dray_srq_params p = {
		.pdn = to_dpd(ibsrq->pd)->pdn,
		.log_depth = cmd->log_depth,
		.log_stride = cmd->log_stride,
	};
	struct dray_mtt mtt;
	u32 n_pages;
	int ret;

	if (ibsrq->srq_type == IB_SRQT_XRC) {
		p.xrcdn = to_dxrcd(ibsrq->ext.xrc.xrcd)->xrcdn;
		p.cqn = to_dcq(ibsrq->ext.cq)->cqn;
	}

	srq->umem = dray_queue_pin(dev, "srq", cmd->buf_addr, cmd->buf_size,
				   dray_srq_bytes(cmd->log_depth,
						  cmd->log_stride),
				   &n_pages);
	if (IS_ERR(srq->umem))
		return PTR_ERR(srq->umem);
	ret = dray_mtt_build(dev, srq->umem, n_pages, &mtt);
	if (ret)
		goto release_umem;
	p.mtt_addr = dray_mtt_addr(&mtt);
	p.n_pages = n_pages;
	ret = dray_admin_create_srq(dev, &p, &srq->srqn);
	dray_mtt_free(dev, &mtt);
	if (ret)
		goto release_umem;
	return 0;

release_umem:
	ib_umem_release(srq->umem);
	srq->umem = NULL;
	return ret;
}

static void dray_ksrq_free(struct dray_dev *dev, struct dray_ksrq *ksrq)
{
	dray_kring_free(dev, &ksrq->ring);
	bitmap_free(ksrq->busy);
	kfree(ksrq->free);
	kfree(ksrq->wrid);
	kfree(ksrq);
}

/* A kernel SRQ: the ring in coherent memory, every tag free. */
static int dray_ksrq_create(struct dray_dev *dev, struct dray_srq *srq,
			    u8 log_depth)
{
	struct dray_srq_params p = {
		.pdn = to_dpd(srq->ibsrq.pd)->pdn,
		.log_depth = log_depth,
		.log_stride = srq->log_stride,
	};
	struct dray_ksrq *ksrq;
	struct dray_mtt mtt;
	u32 i;
	int ret;

	ksrq = kzalloc(sizeof(*ksrq), GFP_KERNEL);
	if (!ksrq)
		return -ENOMEM;
	spin_lock_init(&ksrq->lock);
	ksrq->wrid = kcalloc(srq->depth, sizeof(*ksrq->wrid), GFP_KERNEL);
	ksrq->free = kcalloc(srq->depth, sizeof(*ksrq->free), GFP_KERNEL);
	ksrq->busy = bitmap_zalloc(srq->depth, GFP_KERNEL);
	if (!ksrq->wrid || !ksrq->free || !ksrq->busy) {
		ret = -ENOMEM;
		goto free_ksrq;
	}
	/* Tags are handed out from the top of the stack: 0 first. */
	for (i = 0; i < srq->depth; i++)
		ksrq->free[i] = srq->depth - 1 - i;
	ksrq->n_free = srq->depth;
	ret = dray_kring_alloc(dev, &ksrq->ring,
			       dray_srq_bytes(log_depth, srq->log_stride));
	if (ret)
		goto free_ksrq;
	ksrq->db = ksrq->ring.va;
	ksrq->wqes = ksrq->ring.va + DRAY_QUEUE_HDR_SIZE;

	ret = dray_kring_mtt(dev, &ksrq->ring, &mtt);
	if (ret)
		goto free_ksrq;
	p.mtt_addr = dray_mtt_addr(&mtt);
	p.n_pages = mtt.n_data;
	ret = dray_admin_create_srq(dev, &p, &srq->srqn);
	dray_mtt_free(dev, &mtt);
	if (ret)
		goto free_ksrq;
	srq->ksrq = ksrq;
	return 0;

free_ksrq:
	dray_ksrq_free(dev, ksrq);
	return ret;
}

/*
 * Destroy the device SRQ and release its ring. If the device did not let
 * go (a dead admin queue), the ring stays allocated rather than reused
 * under it.
 */
static int dray_srq_teardown(struct dray_dev *dev, struct dray_srq *srq)
{
	int ret;

	ret = dray_admin_destroy_srq(dev, srq->srqn);
	if (ret == -EBUSY) {
		dsrq_dbg(srq, "destroy: still in use by a QP\n");
		return ret;
	}
	if (ret && ret != -ENOENT) {
		dsrq_err(srq, "destroy failed (%d), ring leaked\n", ret);
		return 0;
	}
	if (srq->ksrq)
		dray_ksrq_free(dev, srq->ksrq);
	srq->ksrq = NULL;
	ib_umem_release(srq->umem);
	srq->umem = NULL;
	return 0;
}

static int dray_srq_arm(struct dray_dev *dev, struct dray_srq *srq, u32 limit)
{
	int ret;

	ret = dray_admin_modify_srq(dev, srq->srqn, limit);
	if (ret)
		dsrq_dbg(srq, "limit %u refused by the device (%d)\n", limit,
			 ret);
	return ret;
}

int dray_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibsrq->device);
	struct dray_srq *srq = to_dsrq(ibsrq);
	struct dray_create_srq_resp resp = {};
	struct dray_create_srq_cmd cmd;
	u8 log_depth;
	int ret;

	ret = dray_srq_check_attr(dev, attr);
	if (ret)
		return ret;
	if (!udata && attr->srq_type == IB_SRQT_XRC) {
		ddev_dbg_rl(dev, "create_srq: XRC SRQs are for user space\n");
		return -EOPNOTSUPP;
	}
	if (udata) {
		ret = dray_udata_cmd(dev, udata, &cmd, sizeof(cmd),
				     offsetofend(typeof(cmd), log_stride),
				     "create_srq");
		if (ret)
			return ret;
		ret = dray_srq_check_cmd(dev, &attr->attr, &cmd);
		if (ret)
			return ret;
		log_depth = cmd.log_depth;
		srq->log_stride = cmd.log_stride;
	} else {
		u32 wqe = DRAY_SRQ_WQE_HDR_SIZE +
			  max(attr->attr.max_sge, 1U) * DRAY_SGE_SIZE;

		log_depth = order_base_2(attr->attr.max_wr);
		srq->log_stride = clamp_t(u32, order_base_2(wqe),
					  DRAY_SRQ_LOG_STRIDE_MIN,
					  DRAY_SRQ_LOG_STRIDE_MAX);
	}
	srq->depth = BIT(log_depth);
	srq->max_sge = min_t(u32, (BIT(srq->log_stride) -
				   DRAY_SRQ_WQE_HDR_SIZE) / DRAY_SGE_SIZE,
			     dev->caps.max_srq_sge);

	if (udata)
		ret = dray_usrq_create(dev, srq, &cmd);
	else
		ret = dray_ksrq_create(dev, srq, log_depth);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "create_srq: no free SRQ, max_srq %u\n",
				    dev->caps.max_srq);
		return ret;
	}
	ret = dray_srq_publish(dev, srq);
	if (ret)
		goto teardown;
	if (attr->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = srq->srqn;
	attr->attr.max_wr = srq->depth;
	attr->attr.max_sge = srq->max_sge;
	attr->attr.srq_limit = 0;

	if (udata) {
		resp.srqn = srq->srqn;
		ret = dray_udata_resp(dev, udata, &resp, sizeof(resp),
				      offsetofend(typeof(resp), srqn),
				      "create_srq");
		if (ret)
			goto unpublish;
	}
	return 0;

unpublish:
	dray_srq_unpublish(dev, srq);
teardown:
	dray_srq_teardown(dev, srq);
	return ret;
}

int dray_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibsrq->device);
	struct dray_srq *srq = to_dsrq(ibsrq);
	int ret;

	ret = dray_srq_teardown(dev, srq);
	if (ret)
		return ret;
	dray_srq_unpublish(dev, srq);
	return 0;
}

/* ---- modify and query -------------------------------------------------- */

int dray_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibsrq->device);
	struct dray_srq *srq = to_dsrq(ibsrq);
	int ret;

	if (udata) {
		ret = dray_udata_cmd(dev, udata, NULL, 0, 0, "modify_srq");
		if (ret)
			return ret;
	}
	/* The device cannot resize an SRQ (no IB_DEVICE_SRQ_RESIZE). */
	if (mask & IB_SRQ_MAX_WR) {
		dsrq_dbg(srq, "modify: resizing is not supported\n");
		return -EINVAL;
	}
	if (mask & ~IB_SRQ_LIMIT) {
		dsrq_dbg(srq, "modify: attr_mask %#x not supported\n", mask);
		return -EINVAL;
	}
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit >= srq->depth) {
		dsrq_dbg(srq, "modify: srq_limit %u not below the depth %u\n",
			 attr->srq_limit, srq->depth);
		return -EINVAL;
	}
	return dray_srq_arm(dev, srq, attr->srq_limit);
}

int dray_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct dray_dev *dev = to_ddev(ibsrq->device);
	struct dray_srq *srq = to_dsrq(ibsrq);
	bool error;
	u32 limit;
	int ret;

	ret = dray_admin_query_srq(dev, srq->srqn, &limit, &error);
	if (ret)
		return ret;
	attr->max_wr = srq->depth;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = limit;
	return 0;
}

/* ---- kernel posting and completion -------------------------------------- */

static int dray_ksrq_check(struct dray_srq *srq, const struct ib_recv_wr *wr)
{
	if (wr->num_sge < 0 || (u32)wr->num_sge > srq->max_sge) {
		dsrq_dbg(srq, "post_srq_recv: num_sge %d > %u\n", wr->num_sge,
			 srq->max_sge);
		return -EINVAL;
	}
	if (!srq->ksrq->n_free) {
		dsrq_dbg(srq, "post_srq_recv: SRQ full (%u)\n", srq->depth);
		return -ENOMEM;
	}
	return 0;
}

static void dray_ksrq_write(struct dray_srq *srq, const struct ib_recv_wr *wr)
{
	struct dray_ksrq *ksrq = srq->ksrq;
	struct dray_srq_wqe *wqe = ksrq->wqes +
		(dray_ring_slot(ksrq->head, srq->depth) << srq->log_stride);
	struct dray_sge *sge = (struct dray_sge *)(wqe + 1);
	u32 tag = ksrq->free[--ksrq->n_free];
	int i;

	lockdep_assert_held(&ksrq->lock);

	memset(wqe, 0, sizeof(*wqe));
	wqe->num_sge = wr->num_sge;
	wqe->tag = cpu_to_le32(tag);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	ksrq->wrid[tag] = wr->wr_id;
	__set_bit(tag, ksrq->busy);
	ksrq->head++;
}

/**
 * dray_post_srq_recv() - ib_device_ops.post_srq_recv for kernel SRQs
 * @ibsrq: the SRQ
 * @wr: the list of WRs
 * @bad_wr: set to the first WR not posted, on error
 *
 * No wake-up is needed: the device reads the SRQ's doorbell record
 * whenever a message needs a WQE.
 *
 * Context: any.
 * Return: 0, -EINVAL (too many SGEs), -ENOMEM (every WQE is posted), or
 * -EOPNOTSUPP for a user SRQ.
 */
int dray_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct dray_srq *srq = to_dsrq(ibsrq);
	struct dray_ksrq *ksrq = srq->ksrq;
	unsigned long flags;
	u32 start;
	int ret = 0;

	if (!ksrq) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&ksrq->lock, flags);
	start = ksrq->head;
	for (; wr; wr = wr->next) {
		ret = dray_ksrq_check(srq, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
		dray_ksrq_write(srq, wr);
	}
	if (ksrq->head != start) {
		/* The WQEs before the producer index that publishes them. */
		dma_wmb();
		WRITE_ONCE(ksrq->db->producer, cpu_to_le32(ksrq->head));
	}
	spin_unlock_irqrestore(&ksrq->lock, flags);
	return ret;
}

/**
 * dray_ksrq_retire() - the WR of a completed SRQ WQE
 * @srq: a kernel SRQ
 * @tag: the tag from the CQE
 * @wr_id: receives the WR's wr_id
 *
 * The tag becomes free for a new WR. A tag that is not posted (the
 * device is not trusted) is refused.
 *
 * Context: any (a CQ's lock held).
 * Return: true if @tag named a posted WR.
 */
bool dray_ksrq_retire(struct dray_srq *srq, u32 tag, u64 *wr_id)
{
	struct dray_ksrq *ksrq = srq->ksrq;
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&ksrq->lock, flags);
	if (tag < srq->depth && test_bit(tag, ksrq->busy)) {
		__clear_bit(tag, ksrq->busy);
		*wr_id = ksrq->wrid[tag];
		ksrq->free[ksrq->n_free++] = tag;
		ok = true;
	}
	spin_unlock_irqrestore(&ksrq->lock, flags);
	return ok;
}
