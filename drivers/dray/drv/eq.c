// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: event queues.
 *
 * Two EQs share this code: the async EQ (EQ 0, the device's destination
 * for port, CQ error and QP events) and the completion EQ (the EQ every CQ
 * raises its completion events on). Each has its own interrupt vector;
 * the handler dispatches whatever event type it finds, so it does not
 * matter on which EQ the device reports an event.
 */

#include <linux/dma-mapping.h>

#include "dray.h"

static void eq_doorbell(struct dray_dev *dev, struct dray_eq *eq, bool arm)
{
	u32 val = FIELD_PREP(DRAY_EQ_DB_CI_MASK, (u16)eq->ci) |
		  FIELD_PREP(DRAY_EQ_DB_EQN_MASK, eq->eqn);

	if (arm)
		val |= DRAY_EQ_DB_ARM;
	dray_bus_writel(dev->nic, DRAY_REG_EQ_DB, val);
}

static void eq_port_change(struct dray_dev *dev, u32 port, u64 data1)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = port,
	};
	u8 state = data1 & 0xff;

	if (port != 1) {
		ddev_err_rl(dev, "port event for unknown port %u\n", port);
		return;
	}
	ev.event = state == DRAY_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					       IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/*
 * The device dropped events while @eq was full. Consumers of a lost event
 * learn of its cause otherwise (an error completion, a QP in ERR); the
 * count is kept and logged.
 */
static void eq_overrun(struct dray_dev *dev, struct dray_eq *eq, u32 eqn,
		       u64 lost)
{
	if (eqn != eq->eqn) {
		ddev_err_rl(dev, "EQ %u: overrun reported for EQ %u\n",
			    eq->eqn, eqn);
		return;
	}
	atomic64_add(lost, &eq->lost);
	ddev_warn_rl(dev, "EQ %u overran: %llu events lost (%lld in all)\n",
		     eqn, lost, (s64)atomic64_read(&eq->lost));
}

static void eq_dispatch(struct dray_dev *dev, struct dray_eq *eq,
			const struct dray_eqe *eqe)
{
	u32 data0 = le32_to_cpu(eqe->data0);
	u64 data1 = le64_to_cpu(eqe->data1);

	switch (eqe->type) {
	case DRAY_EQE_PORT_CHANGE:
		eq_port_change(dev, data0, data1);
		break;
	case DRAY_EQE_COMPLETION:
	case DRAY_EQE_CQ_ERROR:
		dray_cq_event(dev, data0, eqe->type);
		break;
	case DRAY_EQE_QP_FATAL:
	case DRAY_EQE_QP_REQ_ERR:
	case DRAY_EQE_QP_ACCESS_ERR:
	case DRAY_EQE_COMM_EST:
	case DRAY_EQE_SQ_DRAINED:
	case DRAY_EQE_QP_LAST_WQE:
		dray_qp_event(dev, data0, eqe->type, data1);
		break;
	case DRAY_EQE_SRQ_LIMIT:
	case DRAY_EQE_SRQ_ERR:
		dray_srq_event(dev, data0, eqe->type);
		break;
	case DRAY_EQE_EQ_OVERRUN:
		eq_overrun(dev, eq, data0, data1);
		break;
	default:
		ddev_err_rl(dev, "EQ: unknown event type %u\n", eqe->type);
		break;
	}
}

/*
 * EQ vector handler. Atomic context, bottom halves disabled; never runs
 * concurrently with itself for one EQ. The device disarmed the EQ when it
 * raised the vector. At most one ring's worth of events is handled per
 * call; re-arming an EQ that still holds events raises the vector again,
 * so nothing is left behind and a flood cannot keep this CPU here.
 */
static void dray_eq_irq(void *cookie)
{
	struct dray_eq *eq = cookie;
	struct dray_dev *dev = eq->dev;
	u32 n;

	for (n = 0; n < eq->depth; n++) {
		struct dray_eqe *eqe =
			&eq->ring[dray_ring_slot(eq->ci, eq->depth)];
		u8 phase = dray_ring_phase(eq->ci, eq->depth);

		if ((READ_ONCE(eqe->flags) & DRAY_EQE_PHASE) != phase)
			break;
		/* Read the body only after seeing the phase bit. */
		dma_rmb();

		eq_dispatch(dev, eq, eqe);
		eq->ci++;
		/* Give half a ring back early so the device need not wait. */
		if (n == eq->depth / 2)
			eq_doorbell(dev, eq, false);
	}
	eq_doorbell(dev, eq, true);
}

/**
 * dray_eq_create() - allocate, register and arm an event queue
 * @dev: the device
 * @eq: the EQ to set up
 * @log_depth: log2 of its number of entries
 * @vector: its interrupt vector
 *
 * Context: process (probe).
 * Return: 0 or a negative errno; nothing is left allocated on failure.
 */
int dray_eq_create(struct dray_dev *dev, struct dray_eq *eq, u8 log_depth,
		   u8 vector)
{
	struct device *dma_dev = dray_dma_dev(dev);
	size_t size;
	int ret;

	eq->dev = dev;
	eq->depth = 1U << log_depth;
	eq->vector = vector;
	eq->ci = 0;
	atomic64_set(&eq->lost, 0);
	size = eq->depth * sizeof(*eq->ring);
	/* Zeroed: no entry carries the first pass's phase bit yet. */
	eq->ring = dma_alloc_coherent(dma_dev, size, &eq->dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	ret = dray_bus_request_irq(dev->nic, eq->vector, dray_eq_irq, eq);
	if (ret)
		goto free_ring;

	ret = dray_admin_create_eq(dev, eq->dma, log_depth, eq->vector, &eq->eqn);
	if (ret)
		goto free_irq;
	eq_doorbell(dev, eq, true);
	return 0;

free_irq:
	dray_bus_free_irq(dev->nic, eq->vector);
free_ring:
	dma_free_coherent(dma_dev, size, eq->ring, eq->dma);
	return ret;
}

/*
 * Stop an EQ: the device forgets it and its handler will not run again.
 * Its ring is freed by dray_eq_free(), after the device was reset if
 * DESTROY_EQ failed.
 */
void dray_eq_destroy(struct dray_dev *dev, struct dray_eq *eq)
{
	int ret;

	ret = dray_admin_destroy_eq(dev, eq->eqn);
	if (ret)
		ddev_err_rl(dev, "destroy EQ %u failed: %d\n", eq->eqn, ret);
	dray_bus_free_irq(dev->nic, eq->vector);
}

/* Free the ring; only once the device no longer writes it. */
void dray_eq_free(struct dray_dev *dev, struct dray_eq *eq)
{
	dma_free_coherent(dray_dma_dev(dev), eq->depth * sizeof(*eq->ring),
			  eq->ring, eq->dma);
}
