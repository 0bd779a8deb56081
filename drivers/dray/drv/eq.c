// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: the asynchronous event queue (EQ 0).
 */

#include <linux/dma-mapping.h>

#include "dray.h"

static void eq_doorbell(struct dray_dev *dev, struct dray_eq *eq, bool arm)
{
	u32 val = (eq->ci & DRAY_EQ_DB_CI_MASK) |
		  ((eq->eqn << 16) & DRAY_EQ_DB_EQN_MASK);

	if (arm)
		val |= DRAY_EQ_DB_ARM;
	dray_hw_writel(dev->hw, DRAY_REG_EQ_DB, val);
}

static void async_port_change(struct dray_dev *dev, const struct dray_eqe *eqe)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = le32_to_cpu(eqe->data0),
	};
	u8 state = le64_to_cpu(eqe->data1) & 0xff;

	if (ev.element.port_num != 1) {
		ddev_err_rl(dev, "port event for unknown port %u\n",
			    ev.element.port_num);
		return;
	}
	ev.event = state == DRAY_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					       IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/* Async vector handler. Atomic context; the device disarmed the EQ. */
static void dray_async_irq(void *cookie)
{
	struct dray_dev *dev = cookie;
	struct dray_eq *eq = &dev->async_eq;

	for (;;) {
		struct dray_eqe *eqe = &eq->ring[dray_ring_slot(eq->ci, eq->depth)];
		u8 phase = dray_ring_phase(eq->ci, eq->depth);

		if ((READ_ONCE(eqe->flags) & DRAY_EQE_PHASE) != phase)
			break;
		/* Read the body only after seeing the phase bit. */
		dma_rmb();

		switch (eqe->type) {
		case DRAY_EQE_PORT_CHANGE:
			async_port_change(dev, eqe);
			break;
		default:
			ddev_err_rl(dev, "unknown async event type %u\n",
				    eqe->type);
			break;
		}
		eq->ci++;
	}
	eq_doorbell(dev, eq, true);
}

int dray_async_eq_init(struct dray_dev *dev)
{
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_eq *eq = &dev->async_eq;
	size_t size;
	int ret;

	eq->depth = 1U << DRAY_ASYNC_EQ_LOG_DEPTH;
	eq->vector = DRAY_VEC_ASYNC;
	eq->ci = 0;
	size = eq->depth * sizeof(*eq->ring);
	eq->ring = dma_alloc_coherent(dma_dev, size, &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	ret = dray_hw_request_irq(dev->hw, eq->vector, dray_async_irq, dev);
	if (ret)
		goto free_ring;

	ret = dray_cmd_create_eq(dev, eq->dma, DRAY_ASYNC_EQ_LOG_DEPTH,
				 eq->vector, &eq->eqn);
	if (ret)
		goto free_irq;
	if (eq->eqn != 0) {
		/* Port events go to EQ 0: it must be the first EQ. */
		ibdev_err(&dev->ibdev, "async EQ got number %u\n", eq->eqn);
		ret = -EIO;
		goto destroy_eq;
	}
	eq_doorbell(dev, eq, true);
	return 0;

destroy_eq:
	dray_cmd_destroy_eq(dev, eq->eqn);
free_irq:
	dray_hw_free_irq(dev->hw, eq->vector);
free_ring:
	dma_free_coherent(dma_dev, size, eq->ring, eq->dma);
	return ret;
}

/* Stop the async EQ. Its ring is freed by dray_async_eq_free(). */
void dray_async_eq_destroy(struct dray_dev *dev)
{
	struct dray_eq *eq = &dev->async_eq;
	int ret;

	ret = dray_cmd_destroy_eq(dev, eq->eqn);
	if (ret)
		ddev_err_rl(dev, "destroy async EQ failed: %d\n", ret);
	dray_hw_free_irq(dev->hw, eq->vector);
}

/* Free the ring; only after the device was reset or the EQ destroyed. */
void dray_async_eq_free(struct dray_dev *dev)
{
	struct dray_eq *eq = &dev->async_eq;

	dma_free_coherent(dray_dma_dev(dev), eq->depth * sizeof(*eq->ring),
			  eq->ring, eq->dma);
}
