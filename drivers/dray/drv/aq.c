// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: the admin queue.
 *
 * A generic command ring: callers fill a struct dray_aq_entry, and
 * dray_aq_exec() submits it, sleeps until its completion arrives and
 * translates the device status into an errno. Several commands may be in
 * flight; the completion carries the submission slot as cmd_id.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>

#include "dray.h"

static const char * const aq_opcode_names[DRAY_CMD_MAX_OPCODE] = {
	[DRAY_CMD_QUERY_DEVICE]	= "QUERY_DEVICE",
	[DRAY_CMD_QUERY_PORT]	= "QUERY_PORT",
	[DRAY_CMD_SET_GID]	= "SET_GID",
	[DRAY_CMD_DEL_GID]	= "DEL_GID",
	[DRAY_CMD_CREATE_EQ]	= "CREATE_EQ",
	[DRAY_CMD_DESTROY_EQ]	= "DESTROY_EQ",
	[DRAY_CMD_CREATE_UAR]	= "CREATE_UAR",
	[DRAY_CMD_DESTROY_UAR]	= "DESTROY_UAR",
	[DRAY_CMD_CREATE_PD]	= "CREATE_PD",
	[DRAY_CMD_DESTROY_PD]	= "DESTROY_PD",
	[DRAY_CMD_CREATE_MR]	= "CREATE_MR",
	[DRAY_CMD_DESTROY_MR]	= "DESTROY_MR",
	[DRAY_CMD_CREATE_CQ]	= "CREATE_CQ",
	[DRAY_CMD_DESTROY_CQ]	= "DESTROY_CQ",
	[DRAY_CMD_RESIZE_CQ]	= "RESIZE_CQ",
	[DRAY_CMD_CREATE_QP]	= "CREATE_QP",
	[DRAY_CMD_MODIFY_QP]	= "MODIFY_QP",
	[DRAY_CMD_QUERY_QP]	= "QUERY_QP",
	[DRAY_CMD_DESTROY_QP]	= "DESTROY_QP",
	[DRAY_CMD_CREATE_AH]	= "CREATE_AH",
	[DRAY_CMD_DESTROY_AH]	= "DESTROY_AH",
	[DRAY_CMD_CREATE_MW]	= "CREATE_MW",
	[DRAY_CMD_DESTROY_MW]	= "DESTROY_MW",
	[DRAY_CMD_MODIFY_MR]	= "MODIFY_MR",
	[DRAY_CMD_CREATE_SRQ]	= "CREATE_SRQ",
	[DRAY_CMD_MODIFY_SRQ]	= "MODIFY_SRQ",
	[DRAY_CMD_QUERY_SRQ]	= "QUERY_SRQ",
	[DRAY_CMD_DESTROY_SRQ]	= "DESTROY_SRQ",
	[DRAY_CMD_ALLOC_COUNTER_SET] = "ALLOC_COUNTER_SET",
	[DRAY_CMD_FREE_COUNTER_SET] = "FREE_COUNTER_SET",
	[DRAY_CMD_BIND_COUNTER_SET] = "BIND_COUNTER_SET",
	[DRAY_CMD_QUERY_COUNTERS] = "QUERY_COUNTERS",
	[DRAY_CMD_QUERY_STATE]	= "QUERY_STATE",
};

const char *dray_aq_opcode_name(u8 opcode)
{
	if (opcode < DRAY_CMD_MAX_OPCODE && aq_opcode_names[opcode])
		return aq_opcode_names[opcode];
	return "unknown";
}

/*
 * The object a command is about, for logs: the one it names, or for a
 * create the one the new object belongs to.
 */
static void aq_object(const struct dray_aq_entry *e, char *buf, size_t len)
{
	const struct dray_cmd_qp *qp = &e->u.qp;

	switch (e->hdr.opcode) {
	case DRAY_CMD_QUERY_PORT:
		snprintf(buf, len, "port %u", e->u.query.port);
		break;
	case DRAY_CMD_SET_GID:
		snprintf(buf, len, "GID %u", le32_to_cpu(e->u.set_gid.index));
		break;
	case DRAY_CMD_DEL_GID:
		snprintf(buf, len, "GID %u", le32_to_cpu(e->u.del_gid.index));
		break;
	case DRAY_CMD_CREATE_EQ:
		snprintf(buf, len, "vector %u", e->u.create_eq.vector);
		break;
	case DRAY_CMD_DESTROY_EQ:
		snprintf(buf, len, "EQ %u", le32_to_cpu(e->u.destroy_eq.eqn));
		break;
	case DRAY_CMD_DESTROY_UAR:
		snprintf(buf, len, "UAR %u",
			 le32_to_cpu(e->u.destroy_uar.uar_index));
		break;
	case DRAY_CMD_DESTROY_PD:
		snprintf(buf, len, "PD %u", le32_to_cpu(e->u.destroy_pd.pdn));
		break;
	case DRAY_CMD_CREATE_MR:
		snprintf(buf, len, "PD %u", le32_to_cpu(e->u.create_mr.pdn));
		break;
	case DRAY_CMD_DESTROY_MR:
		snprintf(buf, len, "MR key %#x",
			 le32_to_cpu(e->u.destroy_mr.key));
		break;
	case DRAY_CMD_CREATE_CQ:
		snprintf(buf, len, "EQ %u", le32_to_cpu(e->u.create_cq.eqn));
		break;
	case DRAY_CMD_DESTROY_CQ:
		snprintf(buf, len, "CQ %u", le32_to_cpu(e->u.destroy_cq.cqn));
		break;
	case DRAY_CMD_RESIZE_CQ:
		snprintf(buf, len, "CQ %u, log_depth %u",
			 le32_to_cpu(e->u.resize_cq.cqn), e->u.resize_cq.log_depth);
		break;
	case DRAY_CMD_MODIFY_QP:
	case DRAY_CMD_QUERY_QP:
	case DRAY_CMD_DESTROY_QP:
		snprintf(buf, len, "QP %u", le32_to_cpu(qp->qpn));
		break;
	case DRAY_CMD_CREATE_AH:
		snprintf(buf, len, "PD %u", le32_to_cpu(e->u.create_ah.pdn));
		break;
	case DRAY_CMD_DESTROY_AH:
		snprintf(buf, len, "AH %u", le32_to_cpu(e->u.destroy_ah.ahn));
		break;
	case DRAY_CMD_CREATE_MW:
		snprintf(buf, len, "PD %u", le32_to_cpu(e->u.create_mw.pdn));
		break;
	case DRAY_CMD_MODIFY_MR:
		snprintf(buf, len, "MR key %#x",
			 le32_to_cpu(e->u.modify_mr.key));
		break;
	case DRAY_CMD_DESTROY_MW:
		snprintf(buf, len, "MW key %#x",
			 le32_to_cpu(e->u.destroy_mw.key));
		break;
	default:
		snprintf(buf, len, "device");
		break;
	}
}

static const char * const aq_syndrome_names[DRAY_AQ_SYN_MAX] = {
	[DRAY_AQ_SYN_NONE]	= "none",
	[DRAY_AQ_SYN_RESERVED]	= "reserved field",
	[DRAY_AQ_SYN_OUT_ADDR]	= "out_addr",
	[DRAY_AQ_SYN_OUT_LEN]	= "out_len",
	[DRAY_AQ_SYN_PORT]	= "port",
	[DRAY_AQ_SYN_GID_INDEX]	= "gid index",
	[DRAY_AQ_SYN_GID_TYPE]	= "gid type",
	[DRAY_AQ_SYN_RING_ADDR]	= "ring_addr",
	[DRAY_AQ_SYN_LOG_DEPTH]	= "log_depth",
	[DRAY_AQ_SYN_VECTOR]	= "vector",
	[DRAY_AQ_SYN_EQN]	= "eqn",
	[DRAY_AQ_SYN_PAGE_ADDR]	= "page_addr",
	[DRAY_AQ_SYN_UAR_INDEX]	= "uar index",
	[DRAY_AQ_SYN_PDN]	= "pdn",
	[DRAY_AQ_SYN_MR_KEY]	= "mr key",
	[DRAY_AQ_SYN_ACCESS]	= "access",
	[DRAY_AQ_SYN_LENGTH]	= "length",
	[DRAY_AQ_SYN_IOVA]	= "iova",
	[DRAY_AQ_SYN_MTT]	= "mtt",
	[DRAY_AQ_SYN_PAGE_COUNT] = "page count",
	[DRAY_AQ_SYN_CQN]	= "cqn",
	[DRAY_AQ_SYN_QPN]	= "qpn",
	[DRAY_AQ_SYN_QP_TYPE]	= "qp type",
	[DRAY_AQ_SYN_QP_STATE]	= "qp state transition",
	[DRAY_AQ_SYN_QP_ATTR]	= "qp attribute",
	[DRAY_AQ_SYN_LOG_STRIDE] = "log_stride",
	[DRAY_AQ_SYN_AHN]	= "ahn",
	[DRAY_AQ_SYN_IN_ADDR]	= "in_addr",
	[DRAY_AQ_SYN_IN_LEN]	= "in_len",
	[DRAY_AQ_SYN_SGID_INDEX] = "sgid index",
	[DRAY_AQ_SYN_FLAGS]	= "flags",
	[DRAY_AQ_SYN_SRQN]	= "srqn",
	[DRAY_AQ_SYN_SRQ_LIMIT]	= "srq limit",
	[DRAY_AQ_SYN_COUNTER_SET] = "counter set",
	[DRAY_AQ_SYN_SCOPE]	= "scope",
	[DRAY_AQ_SYN_CONSUMER]	= "consumer index",
};

static const char *aq_syndrome_name(u32 syn)
{
	if (syn < DRAY_AQ_SYN_MAX && aq_syndrome_names[syn])
		return aq_syndrome_names[syn];
	return "unknown";
}

static int aq_status_to_errno(u8 status)
{
	switch (status) {
	case DRAY_AQ_STS_OK:
		return 0;
	case DRAY_AQ_STS_BAD_OPCODE:
		return -EOPNOTSUPP;
	case DRAY_AQ_STS_BAD_PARAM:
		return -EINVAL;
	case DRAY_AQ_STS_NO_RESOURCES:
		return -ENOSPC;
	case DRAY_AQ_STS_NOT_FOUND:
		return -ENOENT;
	case DRAY_AQ_STS_BUSY:
		return -EBUSY;
	case DRAY_AQ_STS_DMA_ERROR:
		return -EFAULT;
	case DRAY_AQ_STS_NO_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* Admin vector handler. Atomic context. */
static void dray_aq_irq(void *cookie)
{
	struct dray_dev *dev = cookie;
	struct dray_aq *aq = &dev->aq;

	spin_lock(&aq->lock);
	for (;;) {
		struct dray_aq_cqe *cqe =
			&aq->cq[dray_ring_slot(aq->cq_ci, aq->depth)];
		u8 phase = dray_ring_phase(aq->cq_ci, aq->depth);
		struct dray_aq_ctx *ctx;
		u16 slot;

		if ((READ_ONCE(cqe->flags) & DRAY_AQ_CQE_PHASE) != phase)
			break;
		/* Read the body only after seeing the phase bit. */
		dma_rmb();

		aq->cq_ci++;

		slot = le16_to_cpu(cqe->cmd_id);
		if (slot >= aq->depth || !aq->ctx[slot].busy) {
			ddev_err_rl(dev, "admin completion for idle slot %u\n",
				    slot);
			continue;
		}
		ctx = &aq->ctx[slot];
		ctx->cqe = *cqe;
		complete(&ctx->done);
	}
	spin_unlock(&aq->lock);
}

/**
 * dray_aq_exec() - run one admin command
 * @dev: the device
 * @entry: the command; hdr.cmd_id is filled in here
 * @result: if not NULL, receives the completion's result field
 *
 * Context: process, may sleep.
 * Return: 0, a negative errno translated from the device status, -ETIMEDOUT
 * if the device did not answer (the admin queue is then unusable), or
 * -EIO once the admin queue is unusable.
 */
int dray_aq_exec(struct dray_dev *dev, struct dray_aq_entry *entry,
		 u64 *result)
{
	struct dray_aq *aq = &dev->aq;
	struct dray_aq_ctx *ctx;
	unsigned long left;
	char obj[24];
	u16 slot;
	u8 status;
	u32 syn;

	might_sleep();
	/*
	 * Not interruptible: destroy commands run when a killed process's
	 * objects are cleaned up, and must not fail then. Every slot comes
	 * back within a command timeout, or the queue is declared dead.
	 */
	while (down_timeout(&aq->slots, msecs_to_jiffies(DRAY_AQ_TIMEOUT_MS)))
		if (READ_ONCE(aq->dead))
			return -EIO;

	spin_lock_bh(&aq->lock);
	if (aq->dead) {
		spin_unlock_bh(&aq->lock);
		up(&aq->slots);
		return -EIO;
	}
	for (slot = 0; slot < aq->depth; slot++)
		if (!aq->ctx[slot].busy)
			break;
	/* The semaphore guarantees a free slot. */
	ctx = &aq->ctx[slot];
	ctx->busy = true;
	reinit_completion(&ctx->done);
	entry->hdr.cmd_id = cpu_to_le16(slot);
	memcpy(&aq->sq[dray_ring_slot(aq->sq_pi, aq->depth)], entry,
	       sizeof(*entry));
	aq->sq_pi++;
	/* The entry must be in memory before the doorbell. */
	dma_wmb();
	dray_bus_writel(dev->nic, DRAY_REG_AQ_SQ_PI, aq->sq_pi);
	spin_unlock_bh(&aq->lock);

	left = wait_for_completion_timeout(&ctx->done,
					   msecs_to_jiffies(DRAY_AQ_TIMEOUT_MS));
	spin_lock_bh(&aq->lock);
	if (!left) {
		/* The slot stays busy: the device may still write it. */
		WRITE_ONCE(aq->dead, true);
		spin_unlock_bh(&aq->lock);
		aq_object(entry, obj, sizeof(obj));
		ddev_err_rl(dev, "admin command %s (%s) timed out, device status %#x\n",
			    dray_aq_opcode_name(entry->hdr.opcode), obj,
			    dray_bus_readl(dev->nic, DRAY_REG_DEV_STS));
		return -ETIMEDOUT;
	}
	status = ctx->cqe.status;
	syn = le32_to_cpu(ctx->cqe.syndrome);
	if (result)
		*result = le64_to_cpu(ctx->cqe.result);
	ctx->busy = false;
	spin_unlock_bh(&aq->lock);
	up(&aq->slots);

	if (status != DRAY_AQ_STS_OK) {
		aq_object(entry, obj, sizeof(obj));
		ddev_dbg(dev, "admin command %s (%s) failed: status %u, field %s\n",
			 dray_aq_opcode_name(entry->hdr.opcode), obj, status,
			 aq_syndrome_name(syn));
	}
	return aq_status_to_errno(status);
}

static int aq_wait_ready(struct dray_dev *dev)
{
	unsigned int i;
	u32 sts;

	for (i = 0; i < 100; i++) {
		sts = dray_bus_readl(dev->nic, DRAY_REG_DEV_STS);
		if (sts & DRAY_DEV_STS_READY)
			return 0;
		if (sts & (DRAY_DEV_STS_CFG_ERR | DRAY_DEV_STS_FATAL))
			break;
		usleep_range(100, 200);
	}
	ibdev_err(&dev->ibdev, "device did not become ready, status %#x\n",
		  sts);
	return -EIO;
}

int dray_aq_init(struct dray_dev *dev)
{
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_aq *aq = &dev->aq;
	u32 id, ver, i;
	int ret;

	id = dray_bus_readl(dev->nic, DRAY_REG_ID);
	ver = dray_bus_readl(dev->nic, DRAY_REG_VERSION);
	if (id != DRAY_ID_MAGIC ||
	    FIELD_GET(DRAY_VERSION_MAJOR_MASK, ver) != DRAY_IF_VERSION_MAJOR) {
		ibdev_err(&dev->ibdev, "unsupported device: id %#x version %#x\n",
			  id, ver);
		return -ENODEV;
	}
	dray_bus_writel(dev->nic, DRAY_REG_DEV_CTRL, DRAY_DEV_CTRL_RESET);

	aq->depth = 1U << DRAY_AQ_LOG_DEPTH;
	aq->sq = dma_alloc_coherent(dma_dev, aq->depth * sizeof(*aq->sq),
				    &aq->sq_dma, GFP_KERNEL);
	if (!aq->sq)
		return -ENOMEM;
	aq->cq = dma_alloc_coherent(dma_dev, aq->depth * sizeof(*aq->cq),
				    &aq->cq_dma, GFP_KERNEL);
	if (!aq->cq) {
		ret = -ENOMEM;
		goto free_sq;
	}
	aq->ctx = kcalloc(aq->depth, sizeof(*aq->ctx), GFP_KERNEL);
	if (!aq->ctx) {
		ret = -ENOMEM;
		goto free_cq;
	}
	for (i = 0; i < aq->depth; i++)
		init_completion(&aq->ctx[i].done);
	sema_init(&aq->slots, aq->depth);
	spin_lock_init(&aq->lock);
	aq->sq_pi = 0;
	aq->cq_ci = 0;
	aq->dead = false;

	ret = dray_bus_request_irq(dev->nic, DRAY_VEC_ADMIN, dray_aq_irq, dev);
	if (ret)
		goto free_ctx;

	dray_bus_writel(dev->nic, DRAY_REG_AQ_SQ_BASE_LO,
			lower_32_bits(aq->sq_dma));
	dray_bus_writel(dev->nic, DRAY_REG_AQ_SQ_BASE_HI,
			upper_32_bits(aq->sq_dma));
	dray_bus_writel(dev->nic, DRAY_REG_AQ_CQ_BASE_LO,
			lower_32_bits(aq->cq_dma));
	dray_bus_writel(dev->nic, DRAY_REG_AQ_CQ_BASE_HI,
			upper_32_bits(aq->cq_dma));
	dray_bus_writel(dev->nic, DRAY_REG_AQ_CFG,
			FIELD_PREP(DRAY_AQ_CFG_LOG_DEPTH_MASK, DRAY_AQ_LOG_DEPTH) |
		       FIELD_PREP(DRAY_AQ_CFG_VECTOR_MASK, DRAY_VEC_ADMIN));
	dray_bus_writel(dev->nic, DRAY_REG_DEV_CTRL, DRAY_DEV_CTRL_ENABLE);
	ret = aq_wait_ready(dev);
	if (ret)
		goto reset;
	return 0;

reset:
	dray_bus_writel(dev->nic, DRAY_REG_DEV_CTRL, DRAY_DEV_CTRL_RESET);
	dray_bus_free_irq(dev->nic, DRAY_VEC_ADMIN);
free_ctx:
	kfree(aq->ctx);
free_cq:
	dma_free_coherent(dma_dev, aq->depth * sizeof(*aq->cq), aq->cq,
			  aq->cq_dma);
free_sq:
	dma_free_coherent(dma_dev, aq->depth * sizeof(*aq->sq), aq->sq,
			  aq->sq_dma);
	return ret;
}

/* Reset the device (it forgets every object) and free the rings. */
void dray_aq_destroy(struct dray_dev *dev)
{
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_aq *aq = &dev->aq;

	dray_bus_writel(dev->nic, DRAY_REG_DEV_CTRL, DRAY_DEV_CTRL_RESET);
	dray_bus_free_irq(dev->nic, DRAY_VEC_ADMIN);
	kfree(aq->ctx);
	dma_free_coherent(dma_dev, aq->depth * sizeof(*aq->cq), aq->cq,
			  aq->cq_dma);
	dma_free_coherent(dma_dev, aq->depth * sizeof(*aq->sq), aq->sq,
			  aq->sq_dma);
}
