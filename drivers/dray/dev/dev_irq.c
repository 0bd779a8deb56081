// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: interrupt vectors, as MSI-X would deliver them. A unit
 * raises a vector; a work item calls the driver's handler with bottom
 * halves off, never inside the register write or event that caused it.
 * irq_lock protects the vector table and the pending bits.
 */

#include <linux/bitops.h>
#include <linux/workqueue.h>

#include "dev.h"

void dray_hw_irq_work(struct work_struct *work)
{
	struct dray_hw *hw = container_of(work, struct dray_hw, irq_work);
	unsigned long pending, flags;
	unsigned int vec;

	spin_lock_irqsave(&hw->irq_lock, flags);
	pending = hw->irq_pending;
	hw->irq_pending = 0;
	spin_unlock_irqrestore(&hw->irq_lock, flags);

	for_each_set_bit(vec, &pending, DRAY_HW_NUM_VECTORS) {
		struct dray_hw_irq irq;

		spin_lock_irqsave(&hw->irq_lock, flags);
		irq = hw->irq[vec];
		spin_unlock_irqrestore(&hw->irq_lock, flags);

		/* Handlers run with bottom halves off, as from an interrupt. */
		if (irq.handler) {
			local_bh_disable();
			irq.handler(irq.cookie);
			local_bh_enable();
		}
	}
}

/**
 * dray_hw_raise_irq() - signal an interrupt vector
 * @hw: the device
 * @vector: the vector
 *
 * Delivery is asynchronous, as for a message-signalled interrupt: the
 * handler never runs inside the register access or event that caused it.
 *
 * Context: any.
 */
void dray_hw_raise_irq(struct dray_hw *hw, unsigned int vector)
{
	unsigned long flags;

	if (vector >= DRAY_HW_NUM_VECTORS)
		return;
	spin_lock_irqsave(&hw->irq_lock, flags);
	hw->irq_pending |= BIT(vector);
	spin_unlock_irqrestore(&hw->irq_lock, flags);
	queue_work(system_highpri_wq, &hw->irq_work);
}

int dray_bus_request_irq(struct dray_bus_dev *bdev, unsigned int vector,
			 dray_bus_irq_handler_t handler, void *cookie)
{
	struct dray_hw *hw = container_of(bdev, struct dray_hw, bus);
	unsigned long flags;
	int ret = 0;

	if (vector >= DRAY_HW_NUM_VECTORS || !handler)
		return -EINVAL;
	spin_lock_irqsave(&hw->irq_lock, flags);
	if (hw->irq[vector].handler) {
		ret = -EBUSY;
	} else {
		hw->irq[vector].handler = handler;
		hw->irq[vector].cookie = cookie;
	}
	spin_unlock_irqrestore(&hw->irq_lock, flags);
	return ret;
}

/*
 * After this returns the handler is not running and will not run again.
 * Context: process; not from the handler itself.
 */
void dray_bus_free_irq(struct dray_bus_dev *bdev, unsigned int vector)
{
	struct dray_hw *hw = container_of(bdev, struct dray_hw, bus);
	unsigned long flags;

	if (vector >= DRAY_HW_NUM_VECTORS)
		return;
	spin_lock_irqsave(&hw->irq_lock, flags);
	hw->irq[vector].handler = NULL;
	hw->irq[vector].cookie = NULL;
	spin_unlock_irqrestore(&hw->irq_lock, flags);
	flush_work(&hw->irq_work);
}
