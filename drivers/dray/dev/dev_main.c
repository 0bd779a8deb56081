// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the register block (the BAR0 side of ../bus.h), device
 * reset and enable, fatal errors, and creating and destroying the NIC.
 * Register writes that are doorbells go straight to their unit: the admin
 * queue processor, the event queues, the queue engine.
 */

#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "dev.h"

static struct dray_hw *bus_to_hw(struct dray_bus_dev *bdev)
{
	return container_of(bdev, struct dray_hw, bus);
}

#define hw_err_ratelimited(hw, fmt, ...) \
	pr_err_ratelimited("dray-nic %s: " fmt, netdev_name((hw)->ndev), \
			   ##__VA_ARGS__)

void dray_hw_set_fatal(struct dray_hw *hw, enum dray_fatal_syndrome syn)
{
	unsigned long flags;

	spin_lock_irqsave(&hw->reg_lock, flags);
	hw->dev_sts |= DRAY_DEV_STS_FATAL;
	hw->dev_sts &= ~DRAY_DEV_STS_READY;
	if (!hw->fatal_syndrome)
		hw->fatal_syndrome = syn;
	spin_unlock_irqrestore(&hw->reg_lock, flags);
	hw_err_ratelimited(hw, "fatal error, syndrome %u\n", syn);
}

/* Stop the admin engine and forget every object. Process context. */
static void dray_hw_reset(struct dray_hw *hw)
{
	spin_lock_bh(&hw->reg_lock);
	hw->dev_ctrl = 0;
	hw->dev_sts = 0;
	spin_unlock_bh(&hw->reg_lock);

	/* The engine checks READY before each command; wait it out. */
	flush_work(&hw->aq_work);

	spin_lock_bh(&hw->reg_lock);
	hw->fatal_syndrome = 0;
	hw->aq_sq_base = 0;
	hw->aq_cq_base = 0;
	hw->aq_cfg = 0;
	hw->aq_sq_pi = 0;
	hw->aq_sq_ci = 0;
	hw->aq_sq = NULL;
	hw->aq_cq = NULL;
	hw->aq_cq_pi = 0;
	spin_unlock_bh(&hw->reg_lock);

	dray_hw_reset_objects(hw);
	dray_hw_engine_poll_reset(hw);
}

/* DEV_CTRL.ENABLE 0->1: validate and latch the admin queue config. */
static void dray_hw_enable(struct dray_hw *hw)
{
	u32 log_depth = FIELD_GET(DRAY_AQ_CFG_LOG_DEPTH_MASK, hw->aq_cfg);
	u32 vector = FIELD_GET(DRAY_AQ_CFG_VECTOR_MASK, hw->aq_cfg);
	u32 depth = 1U << log_depth;

	lockdep_assert_held(&hw->reg_lock);

	if (log_depth < DRAY_AQ_LOG_DEPTH_MIN ||
	    log_depth > DRAY_AQ_LOG_DEPTH_MAX ||
	    vector >= DRAY_HW_NUM_VECTORS ||
	    !IS_ALIGNED(hw->aq_sq_base, 64) || !IS_ALIGNED(hw->aq_cq_base, 64))
		goto cfg_err;

	hw->aq_sq = dray_hw_dma_va(hw, hw->aq_sq_base,
				   depth * DRAY_AQ_ENTRY_SIZE);
	hw->aq_cq = dray_hw_dma_va(hw, hw->aq_cq_base,
				   depth * DRAY_AQ_CQE_SIZE);
	if (!hw->aq_sq || !hw->aq_cq)
		goto cfg_err;

	hw->aq_depth = depth;
	hw->aq_vector = vector;
	hw->aq_sq_pi = 0;
	hw->aq_sq_ci = 0;
	hw->aq_cq_pi = 0;
	hw->dev_sts = DRAY_DEV_STS_READY;
	return;

cfg_err:
	hw->aq_sq = NULL;
	hw->aq_cq = NULL;
	hw->dev_sts = DRAY_DEV_STS_CFG_ERR;
}

u32 dray_bus_readl(struct dray_bus_dev *bdev, u32 offset)
{
	struct dray_hw *hw = bus_to_hw(bdev);
	u32 val;

	/* The engine's registers have a lock of their own (a mutex). */
	if (offset == DRAY_REG_ENGINE_POLL || offset == DRAY_REG_ENGINE_CPU)
		return dray_hw_engine_poll_read(hw, offset);

	spin_lock_bh(&hw->reg_lock);
	switch (offset) {
	case DRAY_REG_ID:
		val = DRAY_ID_MAGIC;
		break;
	case DRAY_REG_VERSION:
		val = FIELD_PREP(DRAY_VERSION_MAJOR_MASK, DRAY_IF_VERSION_MAJOR) |
		      FIELD_PREP(DRAY_VERSION_MINOR_MASK, DRAY_IF_VERSION_MINOR);
		break;
	case DRAY_REG_DEV_CTRL:
		val = hw->dev_ctrl;
		break;
	case DRAY_REG_DEV_STS:
		val = hw->dev_sts;
		break;
	case DRAY_REG_AQ_SQ_BASE_LO:
		val = lower_32_bits(hw->aq_sq_base);
		break;
	case DRAY_REG_AQ_SQ_BASE_HI:
		val = upper_32_bits(hw->aq_sq_base);
		break;
	case DRAY_REG_AQ_CQ_BASE_LO:
		val = lower_32_bits(hw->aq_cq_base);
		break;
	case DRAY_REG_AQ_CQ_BASE_HI:
		val = upper_32_bits(hw->aq_cq_base);
		break;
	case DRAY_REG_AQ_CFG:
		val = hw->aq_cfg;
		break;
	case DRAY_REG_AQ_SQ_CI:
		val = FIELD_PREP(DRAY_AQ_SQ_CI_MASK, hw->aq_sq_ci);
		break;
	case DRAY_REG_NUM_VECTORS:
		val = DRAY_HW_NUM_VECTORS;
		break;
	case DRAY_REG_FATAL_SYNDROME:
		val = hw->fatal_syndrome;
		break;
	default:
		val = 0;	/* reserved and write-only registers read 0 */
		break;
	}
	spin_unlock_bh(&hw->reg_lock);
	return val;
}

static void dray_hw_write_ctrl(struct dray_hw *hw, u32 value)
{
	bool kick = false;

	if (value & DRAY_DEV_CTRL_RESET) {
		dray_hw_reset(hw);
		return;
	}

	spin_lock_bh(&hw->reg_lock);
	if ((value & DRAY_DEV_CTRL_ENABLE) &&
	    !(hw->dev_ctrl & DRAY_DEV_CTRL_ENABLE) &&
	    !(hw->dev_sts & DRAY_DEV_STS_FATAL)) {
		dray_hw_enable(hw);
		kick = hw->dev_sts & DRAY_DEV_STS_READY;
	} else if (!(value & DRAY_DEV_CTRL_ENABLE)) {
		hw->dev_sts &= ~DRAY_DEV_STS_READY;
	}
	hw->dev_ctrl = value & DRAY_DEV_CTRL_ENABLE;
	spin_unlock_bh(&hw->reg_lock);

	if (kick)
		queue_work(hw->wq, &hw->aq_work);
}

void dray_bus_writel(struct dray_bus_dev *bdev, u32 offset, u32 value)
{
	struct dray_hw *hw = bus_to_hw(bdev);
	bool kick = false;

	switch (offset) {
	case DRAY_REG_DEV_CTRL:
		dray_hw_write_ctrl(hw, value);
		return;
	case DRAY_REG_EQ_DB:
		dray_hw_eq_doorbell(hw, value);
		return;
	case DRAY_REG_ENGINE_KICK:
		dray_hw_engine_uar_kick(hw, FIELD_GET(DRAY_ENGINE_KICK_UAR_MASK, value));
		return;
	case DRAY_REG_ENGINE_POLL:
	case DRAY_REG_ENGINE_CPU:
		dray_hw_engine_poll_write(hw, offset, value);
		return;
	}

	spin_lock_bh(&hw->reg_lock);
	switch (offset) {
	case DRAY_REG_AQ_SQ_BASE_LO:
		hw->aq_sq_base = (hw->aq_sq_base & ~(u64)U32_MAX) | value;
		break;
	case DRAY_REG_AQ_SQ_BASE_HI:
		hw->aq_sq_base = lower_32_bits(hw->aq_sq_base) |
				 ((u64)value << 32);
		break;
	case DRAY_REG_AQ_CQ_BASE_LO:
		hw->aq_cq_base = (hw->aq_cq_base & ~(u64)U32_MAX) | value;
		break;
	case DRAY_REG_AQ_CQ_BASE_HI:
		hw->aq_cq_base = lower_32_bits(hw->aq_cq_base) |
				 ((u64)value << 32);
		break;
	case DRAY_REG_AQ_CFG:
		hw->aq_cfg = value & (DRAY_AQ_CFG_LOG_DEPTH_MASK |
				      DRAY_AQ_CFG_VECTOR_MASK);
		break;
	case DRAY_REG_AQ_SQ_PI:
		hw->aq_sq_pi = FIELD_GET(DRAY_AQ_SQ_PI_MASK, value);
		kick = hw->dev_sts & DRAY_DEV_STS_READY;
		break;
	default:
		break;	/* writes to read-only or reserved offsets are ignored */
	}
	spin_unlock_bh(&hw->reg_lock);

	if (kick)
		queue_work(hw->wq, &hw->aq_work);
}

struct dray_bus_dev *dray_bus_create(const struct dray_bus_plat *plat)
{
	struct dray_hw *hw;
	int ret;

	hw = kzalloc(sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return ERR_PTR(-ENOMEM);

	hw->bus.dma_dev = plat->dma_dev;
	hw->bus.removed = plat->removed;
	hw->bus.removed_ctx = plat->ctx;
	spin_lock_init(&hw->reg_lock);
	spin_lock_init(&hw->irq_lock);
	spin_lock_init(&hw->obj_lock);
	spin_lock_init(&hw->port_lock);
	INIT_WORK(&hw->aq_work, dray_hw_aq_work);
	INIT_WORK(&hw->irq_work, dray_hw_irq_work);

	hw->wq = alloc_ordered_workqueue("dray-nic-%s", WQ_MEM_RECLAIM,
					 netdev_name(plat->ndev));
	if (!hw->wq) {
		ret = -ENOMEM;
		goto free_hw;
	}

	/* The engine names itself after the port; it must run before rx. */
	hw->ndev = plat->ndev;
	ret = dray_hw_engine_start(hw);
	if (ret)
		goto destroy_wq;
	ret = dray_hw_port_attach(hw, plat->ndev);
	if (ret)
		goto stop_engine;
	return &hw->bus;

stop_engine:
	dray_hw_engine_stop(hw);
destroy_wq:
	destroy_workqueue(hw->wq);
free_hw:
	kfree(hw);
	return ERR_PTR(ret);
}

void dray_bus_destroy(struct dray_bus_dev *bdev)
{
	struct dray_hw *hw = bus_to_hw(bdev);

	/*
	 * Objects first (no QP sends any more), then the engine thread, then
	 * the port and its netdev reference. Frames the port queued after the
	 * engine stopped are dropped once the rx_handler is gone.
	 */
	dray_hw_reset(hw);
	dray_hw_engine_stop(hw);
	dray_hw_port_detach(hw);
	skb_queue_purge(&hw->engine.rx_queue);
	destroy_workqueue(hw->wq);
	cancel_work_sync(&hw->irq_work);
	kfree(hw);
}
