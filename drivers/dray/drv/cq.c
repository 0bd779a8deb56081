// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: completion queues.
 *
 * A CQ's ring lives in user memory allocated by the provider: a 64-byte
 * doorbell record, then 2^log_depth 32-byte CQEs (dray_queue.h). The
 * driver pins it and hands the device its MTT; the provider polls it and
 * arms it in the doorbell record. ibv_resize_cq gives a new ring the same
 * way (dray_resize_cq()). The device raises completion events on
 * the completion EQ and CQ errors on the async EQ; both are dispatched
 * here through dev->cqs.
 */

#include <rdma/ib_umem.h>
#include <uapi/rdma/dray-abi.h>

#include "dray.h"

/* Keep the shift below the width of a u32 and the ring size sane. */
#define DRAY_CQ_LOG_DEPTH_MAX	24

static void dray_cq_put(struct dray_cq *cq)
{
	if (refcount_dec_and_test(&cq->refs))
		complete(&cq->unused);
}

/*
 * Look up a CQ for event dispatch and hold it. Context: the EQ handler
 * (bottom halves disabled).
 */
static struct dray_cq *dray_cq_get(struct dray_dev *dev, u32 cqn)
{
	struct dray_cq *cq;

	xa_lock(&dev->cqs);
	cq = xa_load(&dev->cqs, cqn);
	if (cq && !refcount_inc_not_zero(&cq->refs))
		cq = NULL;
	xa_unlock(&dev->cqs);
	return cq;
}

/**
 * dray_cq_event() - deliver a CQ event from an EQ
 * @dev: the device
 * @cqn: the CQ number from the event
 * @type: DRAY_EQE_COMPLETION or DRAY_EQE_CQ_ERROR
 *
 * An event for a CQ that is gone (or being destroyed) is dropped: the
 * device may have queued it before it destroyed the CQ.
 *
 * Context: the EQ handler (atomic, bottom halves disabled).
 */
void dray_cq_event(struct dray_dev *dev, u32 cqn, u8 type)
{
	struct dray_cq *cq = dray_cq_get(dev, cqn);
	struct ib_cq *ibcq;

	if (!cq) {
		ddev_dbg_rl(dev, "event %u for unknown CQ %u\n", type, cqn);
		return;
	}
	ibcq = &cq->ibcq;
	if (type == DRAY_EQE_COMPLETION) {
		if (ibcq->comp_handler)
			ibcq->comp_handler(ibcq, ibcq->cq_context);
	} else {
		struct ib_event ev = {
			.device = ibcq->device,
			.event = IB_EVENT_CQ_ERR,
			.element.cq = ibcq,
		};

		ibdev_err_ratelimited(ibcq->device,
				      "CQ[%u] error: overflow or bad buffer\n",
				      cqn);
		if (ibcq->event_handler)
			ibcq->event_handler(&ev, ibcq->cq_context);
	}
	dray_cq_put(cq);
}

/**
 * dray_cq_attr_check() - check a create_cq verb's attributes
 * @dev: the device
 * @attr: what the consumer asks for
 *
 * The checks every CQ gets, user or kernel: no flags, a CQE count in
 * [1, max_cqe], a completion vector the device has.
 *
 * Return: 0, -EOPNOTSUPP or -EINVAL.
 */
int dray_cq_attr_check(struct dray_dev *dev, const struct ib_cq_init_attr *attr)
{
	u32 max_cqe = dray_max_cqe(&dev->caps);

	if (attr->flags) {
		ddev_dbg_rl(dev, "create_cq: flags %#x not supported\n",
			    attr->flags);
		return -EOPNOTSUPP;
	}
	if (attr->cqe < 1 || attr->cqe > max_cqe) {
		ddev_dbg_rl(dev, "create_cq: cqe %u must be in [1, max_cqe %u]\n",
			    attr->cqe, max_cqe);
		return -EINVAL;
	}
	if (attr->comp_vector >= dev->ibdev.num_comp_vectors) {
		ddev_dbg_rl(dev, "create_cq: comp_vector %u, have %d\n",
			    attr->comp_vector, dev->ibdev.num_comp_vectors);
		return -EINVAL;
	}
	return 0;
}

/* Validate the provider's ring against the verb's request and limits. */
static int dray_cq_check(struct dray_dev *dev,
			 const struct ib_cq_init_attr *attr,
			 const struct dray_create_cq_cmd *cmd)
{
	u32 max_cqe = dray_max_cqe(&dev->caps);
	u64 max_depth = (u64)max_cqe + 1;
	u64 depth;
	int ret;

	ret = dray_cq_attr_check(dev, attr);
	if (ret)
		return ret;
	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved))) {
		ddev_dbg_rl(dev, "create_cq: reserved command bytes not zero\n");
		return -EINVAL;
	}
	if (cmd->log_depth > DRAY_CQ_LOG_DEPTH_MAX) {
		ddev_dbg_rl(dev, "create_cq: log_depth %u, max %u\n",
			    cmd->log_depth, DRAY_CQ_LOG_DEPTH_MAX);
		return -EINVAL;
	}
	depth = 1ULL << cmd->log_depth;
	if (depth < attr->cqe || depth > max_depth) {
		ddev_dbg_rl(dev, "create_cq: depth %llu must be in [cqe %u, %llu]\n",
			    depth, attr->cqe, max_depth);
		return -EINVAL;
	}
	return 0;
}

/* Pin the ring, hand it to the device, make the CQ findable by events. */
static int dray_cq_setup(struct dray_dev *dev, struct dray_cq *cq,
			 const struct dray_create_cq_cmd *cmd)
{
	u64 needed = DRAY_QUEUE_HDR_SIZE +
		     ((u64)DRAY_CQE_SIZE << cmd->log_depth);
	struct dray_cq_params p = {
		.eqn = dev->comp_eq.eqn,
		.log_depth = cmd->log_depth,
	};
	struct dray_mtt mtt;
	int ret;

	cq->umem = dray_queue_pin(dev, "cq", cmd->buf_addr, cmd->buf_size,
				  needed, &p.n_pages);
	if (IS_ERR(cq->umem))
		return PTR_ERR(cq->umem);
	ret = dray_mtt_build(dev, cq->umem, p.n_pages, &mtt);
	if (ret)
		goto release_umem;
	p.mtt_addr = dray_mtt_addr(&mtt);
	ret = dray_admin_create_cq(dev, &p, &cq->cqn);
	dray_mtt_free(dev, &mtt);
	if (ret) {
		if (ret == -ENOSPC)
			ddev_dbg_rl(dev, "create_cq: no free CQ, max_cq %u\n",
				    dev->caps.max_cq);
		goto release_umem;
	}

	ret = dray_cq_publish(dev, cq);
	if (ret)
		goto destroy_cq;
	return 0;

destroy_cq:
	if (dray_admin_destroy_cq(dev, cq->cqn)) {
		/* The device may still write the ring: leave it pinned. */
		ddev_err_rl(dev, "destroy CQ %u failed, ring leaked\n", cq->cqn);
		return ret;
	}
release_umem:
	ib_umem_release(cq->umem);
	return ret;
}

/* Make the CQ findable by events (user and kernel CQs). */
int dray_cq_publish(struct dray_dev *dev, struct dray_cq *cq)
{
	int ret;

	refcount_set(&cq->refs, 1);
	init_completion(&cq->unused);
	ret = xa_insert_bh(&dev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (ret)
		ddev_err_rl(dev, "CQ number %u from the device is in use (%d)\n",
			    cq->cqn, ret);
	return ret;
}

/* Stop event dispatch to the CQ and wait until no handler runs for it. */
void dray_cq_unpublish(struct dray_dev *dev, struct dray_cq *cq)
{
	xa_erase_bh(&dev->cqs, cq->cqn);
	dray_cq_put(cq);
	wait_for_completion(&cq->unused);
}

/*
 * A kernel CQ (no udata) has its ring in kernel memory: see kcq.c. @arg is
 * the udata, or on newer kernels the attribute bundle holding it (compat.h).
 */
int dray_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct dray_create_cq_arg *arg)
{
	struct dray_dev *dev = to_ddev(ibcq->device);
	struct dray_cq *cq = to_dcq(ibcq);
	struct ib_udata *udata = dray_create_cq_udata(arg);
	struct dray_create_cq_resp resp = {};
	struct dray_create_cq_cmd cmd;
	int ret;

	mutex_init(&cq->resize_lock);
	if (!udata)
		return dray_kcq_create(dev, cq, attr);
	ret = dray_udata_cmd(dev, udata, &cmd, sizeof(cmd),
			     offsetofend(typeof(cmd), log_depth), "create_cq");
	if (ret)
		return ret;
	ret = dray_cq_check(dev, attr, &cmd);
	if (ret)
		return ret;

	ret = dray_cq_setup(dev, cq, &cmd);
	if (ret)
		return ret;
	/* The ring holds depth CQEs; report no more than the device limit. */
	ibcq->cqe = min_t(u32, 1U << cmd.log_depth, dray_max_cqe(&dev->caps));

	resp.cqn = cq->cqn;
	ret = dray_udata_resp(dev, udata, &resp, sizeof(resp),
			      offsetofend(typeof(resp), cqn), "create_cq");
	if (ret)
		goto destroy_cq;
	return 0;

destroy_cq:
	dray_destroy_cq(ibcq, udata);
	return ret;
}

/**
 * dray_resize_cq() - move a user CQ to a new ring the provider allocated
 * @ibcq: the CQ
 * @cqe: the CQEs it must hold at least
 * @udata: struct dray_resize_cq_cmd in, struct dray_resize_cq_resp out
 *
 * The device switches rings at once (RESIZE_CQ): CQEs not consumed yet
 * stay in the old ring for the provider to copy over (resp.carried of
 * them), new ones go to the new ring. The old ring is unpinned after.
 * Kernel CQs cannot be resized (-EOPNOTSUPP).
 *
 * Return: 0, or -EINVAL (a bad ring, or one too small for the CQEs not
 * consumed yet), -EFAULT, -ENOMEM, -EOPNOTSUPP.
 */
int dray_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibcq->device);
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct dray_cq *cq = to_dcq(ibcq);
	struct dray_resize_cq_resp resp = {};
	struct dray_create_cq_cmd ring = {};
	struct dray_resize_cq_cmd cmd;
	struct dray_cq_params p = {};
	struct ib_umem *umem, *old;
	struct dray_mtt mtt;
	u64 needed;
	int ret;

	if (!udata || cq->kcq)
		return -EOPNOTSUPP;
	ret = dray_udata_cmd(dev, udata, &cmd, sizeof(cmd),
			     offsetofend(typeof(cmd), log_depth), "resize_cq");
	if (ret)
		return ret;
	/* The same rules as a new CQ's ring. */
	ring.buf_addr = cmd.buf_addr;
	ring.buf_size = cmd.buf_size;
	ring.log_depth = cmd.log_depth;
	memcpy(ring.reserved, cmd.reserved, sizeof(ring.reserved));
	ret = dray_cq_check(dev, &attr, &ring);
	if (ret)
		return ret;

	needed = DRAY_QUEUE_HDR_SIZE + ((u64)DRAY_CQE_SIZE << cmd.log_depth);
	p.log_depth = cmd.log_depth;
	mutex_lock(&cq->resize_lock);
	umem = dray_queue_pin(dev, "cq", cmd.buf_addr, cmd.buf_size, needed,
			      &p.n_pages);
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto unlock;
	}
	ret = dray_mtt_build(dev, umem, p.n_pages, &mtt);
	if (ret)
		goto release_umem;
	p.mtt_addr = dray_mtt_addr(&mtt);
	ret = dray_admin_resize_cq(dev, cq->cqn, &p, &resp.carried);
	dray_mtt_free(dev, &mtt);
	if (ret) {
		dcq_dbg(cq, "resize to 2^%u refused (%d)\n", cmd.log_depth,
			ret);
		goto release_umem;
	}
	old = cq->umem;
	cq->umem = umem;
	ibcq->cqe = min_t(u32, 1U << cmd.log_depth, dray_max_cqe(&dev->caps));
	mutex_unlock(&cq->resize_lock);
	ib_umem_release(old);

	/*
	 * The CQ uses the new ring now whatever happens to the response; a
	 * provider that cannot read it only harms its own memory, which
	 * stays pinned until the CQ is destroyed.
	 */
	return dray_udata_resp(dev, udata, &resp, sizeof(resp),
			       offsetofend(typeof(resp), carried), "resize_cq");

release_umem:
	ib_umem_release(umem);
unlock:
	mutex_unlock(&cq->resize_lock);
	return ret;
}

int dray_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct dray_dev *dev = to_ddev(ibcq->device);
	struct dray_cq *cq = to_dcq(ibcq);
	int ret;

	ret = dray_admin_destroy_cq(dev, cq->cqn);
	if (ret == -EBUSY) {
		dcq_dbg(cq, "destroy: still in use by a QP\n");
		return ret;
	}
	dray_cq_unpublish(dev, cq);
	if (ret && ret != -ENOENT) {
		/* The device may still write the ring: keep it pinned. */
		ibdev_err_ratelimited(ibcq->device,
				      "CQ[%u] destroy failed (%d), ring leaked\n",
				      cq->cqn, ret);
		return 0;
	}
	if (cq->kcq)
		dray_kcq_free(dev, cq);
	else
		ib_umem_release(cq->umem);
	return 0;
}
