// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: event queues.
 *
 * An EQ is a ring in host memory the device writes events into. The host
 * returns consumed entries and arms the EQ through DRAY_REG_EQ_DB; an armed
 * EQ holding an unconsumed entry raises its vector once and disarms.
 */

#include "dev.h"

/* Raise the vector if the EQ is armed and not empty. obj_lock held. */
static bool eq_should_fire(struct dray_hw_eq *eq)
{
	if (!eq->armed || eq->pi == eq->ci)
		return false;
	eq->armed = false;
	return true;
}

int dray_hw_eq_create(struct dray_hw *hw, const struct dray_cmd_create_eq *cmd,
		      u32 *eqn, u32 *syndrome)
{
	u64 addr = le64_to_cpu(cmd->ring_addr);
	struct dray_eqe *ring;
	u32 depth, n;

	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved))) {
		*syndrome = DRAY_AQ_SYN_RESERVED;
		return DRAY_AQ_STS_BAD_PARAM;
	}
	if (cmd->log_depth < DRAY_EQ_LOG_DEPTH_MIN ||
	    cmd->log_depth > DRAY_EQ_LOG_DEPTH_MAX) {
		*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
		return DRAY_AQ_STS_BAD_PARAM;
	}
	if (cmd->vector >= DRAY_HW_NUM_VECTORS) {
		*syndrome = DRAY_AQ_SYN_VECTOR;
		return DRAY_AQ_STS_BAD_PARAM;
	}
	depth = 1U << cmd->log_depth;
	if (!IS_ALIGNED(addr, 64)) {
		*syndrome = DRAY_AQ_SYN_RING_ADDR;
		return DRAY_AQ_STS_BAD_PARAM;
	}
	ring = dray_hw_dma_va(hw, addr, (size_t)depth * DRAY_EQE_SIZE);
	if (!ring) {
		*syndrome = DRAY_AQ_SYN_RING_ADDR;
		return DRAY_AQ_STS_DMA_ERROR;
	}

	spin_lock_bh(&hw->obj_lock);
	for (n = 0; n < DRAY_HW_MAX_EQ; n++)
		if (!hw->eqs[n].valid)
			break;
	if (n == DRAY_HW_MAX_EQ) {
		spin_unlock_bh(&hw->obj_lock);
		*syndrome = DRAY_AQ_SYN_NONE;
		return DRAY_AQ_STS_NO_RESOURCES;
	}
	hw->eqs[n] = (struct dray_hw_eq) {
		.valid = true,
		.vector = cmd->vector,
		.depth = depth,
		.ring = ring,
	};
	spin_unlock_bh(&hw->obj_lock);

	*eqn = n;
	return DRAY_AQ_STS_OK;
}

int dray_hw_eq_destroy(struct dray_hw *hw, u32 eqn)
{
	int status = DRAY_AQ_STS_OK;

	if (eqn >= DRAY_HW_MAX_EQ)
		return DRAY_AQ_STS_BAD_PARAM;

	spin_lock_bh(&hw->obj_lock);
	if (hw->eqs[eqn].valid)
		hw->eqs[eqn] = (struct dray_hw_eq) {};
	else
		status = DRAY_AQ_STS_NOT_FOUND;
	spin_unlock_bh(&hw->obj_lock);
	return status;
}

/* Write one entry; the EQ has room. obj_lock held. */
static void eq_write(struct dray_hw_eq *eq, u8 type, u32 data0, u64 data1)
{
	struct dray_eqe *eqe = &eq->ring[dray_ring_slot(eq->pi, eq->depth)];

	WRITE_ONCE(eqe->type, type);
	WRITE_ONCE(eqe->data0, cpu_to_le32(data0));
	WRITE_ONCE(eqe->data1, cpu_to_le64(data1));
	dma_wmb();
	WRITE_ONCE(eqe->flags,
		   dray_ring_phase(eq->pi, eq->depth) ? DRAY_EQE_PHASE : 0);
	eq->pi++;
}

static bool eq_full(const struct dray_hw_eq *eq)
{
	return eq->pi - eq->ci >= eq->depth;
}

/*
 * Events were dropped: the first entry with room says how many, before
 * any later event. obj_lock held.
 */
static void eq_report_lost(struct dray_hw_eq *eq, u32 eqn)
{
	if (!eq->lost || eq_full(eq))
		return;
	eq_write(eq, DRAY_EQE_EQ_OVERRUN, eqn, eq->lost);
	eq->lost = 0;
}

void dray_hw_eq_doorbell(struct dray_hw *hw, u32 value)
{
	u32 eqn = FIELD_GET(DRAY_EQ_DB_EQN_MASK, value);
	u16 ci = FIELD_GET(DRAY_EQ_DB_CI_MASK, value);
	struct dray_hw_eq *eq;
	bool fire = false;
	u8 vector = 0;

	if (eqn >= DRAY_HW_MAX_EQ)
		return;

	spin_lock_bh(&hw->obj_lock);
	eq = &hw->eqs[eqn];
	if (eq->valid) {
		u32 outstanding = dray_ring_outstanding16(eq->pi, ci);

		/* A consumer index beyond what was produced is ignored. */
		if (outstanding <= eq->depth)
			eq->ci = eq->pi - outstanding;
		eq_report_lost(eq, eqn);
		if (value & DRAY_EQ_DB_ARM)
			eq->armed = true;
		fire = eq_should_fire(eq);
		vector = eq->vector;
	}
	spin_unlock_bh(&hw->obj_lock);

	if (fire)
		dray_hw_raise_irq(hw, vector);
}

/**
 * dray_hw_eq_post() - write one event into an EQ
 * @hw: the device
 * @eqn: the EQ
 * @type: enum dray_eqe_type
 * @data0: event data
 * @data1: event data
 *
 * A full EQ drops the event and counts it; once the EQ has room again its
 * next entry is an EQ_OVERRUN with the count. The device goes on: an
 * unprivileged process can cause many events, and must not be able to
 * stop the device for everyone.
 *
 * Context: any; takes obj_lock.
 */
void dray_hw_eq_post(struct dray_hw *hw, u32 eqn, u8 type, u32 data0,
		     u64 data1)
{
	struct dray_hw_eq *eq;
	bool fire = false;
	u8 vector = 0;

	if (eqn >= DRAY_HW_MAX_EQ)
		return;

	spin_lock_bh(&hw->obj_lock);
	eq = &hw->eqs[eqn];
	if (!eq->valid)
		goto unlock;
	eq_report_lost(eq, eqn);
	if (eq_full(eq)) {
		eq->overflows++;
		eq->lost++;
	} else {
		eq_write(eq, type, data0, data1);
	}
	fire = eq_should_fire(eq);
	vector = eq->vector;
unlock:
	spin_unlock_bh(&hw->obj_lock);

	if (fire)
		dray_hw_raise_irq(hw, vector);
}
