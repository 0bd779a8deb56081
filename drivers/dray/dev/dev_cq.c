// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: completion queues.
 *
 * A CQ is a buffer in host memory (doorbell record, then 2^log_depth
 * CQEs) given by an MTT and mapped by the model. The device writes CQEs
 * with the phase rule of dray_ring.h, publishes its producer index in the
 * record, and reads the consumer index and the arm request that software
 * writes there. Software can write anything into the record: a consumer
 * index that is not between pi - depth and pi reads as "CQ full".
 */

#include "dev.h"
#include "dev_cmd.h"
#include "dev_cq.h"
#include "dev_mem.h"
#include "dev_obj.h"

#define cq_dbg(hw, cq, fmt, ...) \
	pr_debug("dray-nic %s: CQ[%u] " fmt, netdev_name((hw)->ndev), \
		 (cq)->cqn, ##__VA_ARGS__)

static void cq_free(struct dray_hw_cq *cq)
{
	dray_hw_buf_unmap(&cq->buf);
	kfree(cq);
}

/* Is the EQ valid? Context: admin (EQs change only there). */
static bool cq_eq_valid(struct dray_hw *hw, u32 eqn)
{
	bool valid;

	if (eqn >= DRAY_HW_MAX_EQ)
		return false;
	spin_lock_bh(&hw->obj_lock);
	valid = hw->eqs[eqn].valid;
	spin_unlock_bh(&hw->obj_lock);
	return valid;
}

/*
 * The ring of CREATE_CQ and RESIZE_CQ: reserved bytes zero, a depth the
 * device has, pages enough for it (*need of them). Fails @res if not.
 */
static bool cq_ring_ok(const u8 *reserved, size_t rlen, u8 log_depth,
		       u32 n_pages, u32 *depth, u32 *need,
		       struct dray_aq_result *res)
{
	if (memchr_inv(reserved, 0, rlen)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return false;
	}
	if (log_depth > ilog2(DRAY_HW_MAX_CQE)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_LOG_DEPTH);
		return false;
	}
	*depth = 1U << log_depth;
	*need = DIV_ROUND_UP(DRAY_QUEUE_HDR_SIZE + *depth * DRAY_CQE_SIZE,
			     DRAY_PAGE_SIZE);
	if (n_pages < *need) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM,
			     DRAY_AQ_SYN_PAGE_COUNT);
		return false;
	}
	return true;
}

void dray_hw_cmd_create_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_create_cq *cmd = &e->u.create_cq;
	struct dray_hw_engine *eng = &hw->engine;
	u32 n_pages = le32_to_cpu(cmd->n_pages);
	u32 eqn = le32_to_cpu(cmd->eqn);
	struct dray_hw_cq *cq;
	u32 depth, need, syndrome, cqn;
	int status, ret;

	if (!cq_ring_ok(cmd->reserved, sizeof(cmd->reserved), cmd->log_depth,
			n_pages, &depth, &need, res))
		return;
	if (eqn >= DRAY_HW_MAX_EQ) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_EQN);
		return;
	}
	if (!cq_eq_valid(hw, eqn)) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_EQN);
		return;
	}

	cq = kzalloc(sizeof(*cq), GFP_KERNEL);
	if (!cq) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	/* Only the pages the ring needs are mapped; more are allowed. */
	status = dray_hw_buf_map(hw, le64_to_cpu(cmd->mtt_addr), need,
				 &cq->buf, &syndrome);
	if (status)
		goto free_cq;
	cq->db = cq->buf.vaddr;
	cq->ring = cq->buf.vaddr + DRAY_QUEUE_HDR_SIZE;
	cq->depth = depth;
	cq->eqn = eqn;

	mutex_lock(&eng->admin_lock);
	ret = xa_alloc_cyclic(&eng->cqs, &cqn, cq, XA_LIMIT(1, DRAY_HW_MAX_CQ),
			      &eng->cqn_next, GFP_KERNEL);
	if (ret < 0) {
		mutex_unlock(&eng->admin_lock);
		status = dray_aq_alloc_status(ret);
		syndrome = DRAY_AQ_SYN_NONE;
		goto free_cq;
	}
	cq->cqn = cqn;
	/* Arm requests made before the CQ existed do not count. */
	cq->arm_seq_seen = le32_to_cpu(READ_ONCE(cq->db->arm_seq));
	WRITE_ONCE(cq->db->producer, 0);
	mutex_unlock(&eng->admin_lock);

	res->result = cqn;
	return;

free_cq:
	cq_free(cq);
	dray_aq_fail(res, status, syndrome);
}

/*
 * Move CQ @cq to the new ring @buf of @depth CQEs, under engine.lock so
 * that no CQE is being written. The unconsumed CQEs stay in the old ring
 * for software to copy; the new ring starts after them. Returns their
 * number, or -EINVAL (*syndrome set) and nothing changed.
 */
static int cq_swap_ring(struct dray_hw_cq *cq, struct dray_hw_buf *buf,
			u32 depth, u32 *syndrome)
{
	struct dray_cq_db *db = buf->vaddr;
	u32 ci, left;

	ci = le32_to_cpu(READ_ONCE(cq->db->consumer));
	left = cq->pi - ci;
	if (left > cq->depth) {
		*syndrome = DRAY_AQ_SYN_CONSUMER;
		return -EINVAL;
	}
	if (left >= depth) {
		*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
		return -EINVAL;
	}
	swap(cq->buf, *buf);
	cq->db = db;
	cq->ring = cq->buf.vaddr + DRAY_QUEUE_HDR_SIZE;
	cq->depth = depth;
	cq->pi = left;
	cq->ci_seen = 0;
	/* arm_seq_seen stays: software carried arm_seq over. */
	WRITE_ONCE(cq->db->producer, cpu_to_le32(left));
	return left;
}

void dray_hw_cmd_resize_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_resize_cq *cmd = &e->u.resize_cq;
	struct dray_hw_engine *eng = &hw->engine;
	u32 n_pages = le32_to_cpu(cmd->n_pages);
	u32 depth, need, syndrome = DRAY_AQ_SYN_NONE;
	struct dray_hw_buf buf = {};
	struct dray_hw_cq *cq;
	int status, left;

	if (!cq_ring_ok(cmd->reserved, sizeof(cmd->reserved), cmd->log_depth,
			n_pages, &depth, &need, res))
		return;
	status = dray_hw_buf_map(hw, le64_to_cpu(cmd->mtt_addr), need, &buf,
				 &syndrome);
	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}

	mutex_lock(&eng->admin_lock);
	cq = xa_load(&eng->cqs, le32_to_cpu(cmd->cqn));
	if (!cq) {
		mutex_unlock(&eng->admin_lock);
		dray_hw_buf_unmap(&buf);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_CQN);
		return;
	}
	dray_hw_engine_lock(hw);
	left = cq_swap_ring(cq, &buf, depth, &syndrome);
	dray_hw_engine_unlock(hw);
	if (left < 0)
		cq_dbg(hw, cq, "resize to %u refused, syndrome %u\n", depth,
		       syndrome);
	mutex_unlock(&eng->admin_lock);

	/* The old ring (or, refused, the new one): the device is done. */
	dray_hw_buf_unmap(&buf);
	if (left < 0) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, syndrome);
		return;
	}
	res->result = left;
}

void dray_hw_cmd_destroy_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_cq *cmd = &e->u.destroy_cq;
	struct dray_hw_engine *eng = &hw->engine;
	u32 cqn = le32_to_cpu(cmd->cqn);
	struct dray_hw_cq *cq;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}

	mutex_lock(&eng->admin_lock);
	cq = xa_load(&eng->cqs, cqn);
	if (!cq) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_CQN);
		return;
	}
	if (cq->users) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_CQN);
		return;
	}
	xa_erase(&eng->cqs, cqn);
	mutex_unlock(&eng->admin_lock);

	cq_free(cq);
}

bool dray_hw_eq_in_use(struct dray_hw *hw, u32 eqn)
{
	struct dray_hw_cq *cq;
	unsigned long cqn;
	bool used = false;

	mutex_lock(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.cqs, cqn, cq) {
		if (cq->eqn == eqn) {
			used = true;
			break;
		}
	}
	mutex_unlock(&hw->engine.admin_lock);
	return used;
}

/* Is there room for one more CQE? Reads the consumer index if needed. */
static bool cq_has_room(struct dray_hw_cq *cq)
{
	u32 ci;

	if (cq->pi - cq->ci_seen < cq->depth)
		return true;
	ci = le32_to_cpu(READ_ONCE(cq->db->consumer));
	/* A consumer index ahead of pi or a ring behind it: CQ full. */
	if (cq->pi - ci >= cq->depth)
		return false;
	cq->ci_seen = ci;
	return true;
}

/* Raise a completion event if the CQ is armed and the CQE matches. */
static void cq_notify(struct dray_hw *hw, struct dray_hw_cq *cq,
		      const struct dray_cqe *cqe)
{
	u32 seq, flags;

	/*
	 * The CQE (and producer index) before the arm_seq load; pairs with
	 * the full barrier software has between bumping arm_seq and polling
	 * the CQ again, so a CQE is either seen by that poll or notified.
	 */
	smp_mb();
	seq = le32_to_cpu(READ_ONCE(cq->db->arm_seq));
	if (seq == cq->arm_seq_seen)
		return;
	/* Software writes arm_flags before arm_seq. */
	smp_rmb();
	flags = le32_to_cpu(READ_ONCE(cq->db->arm_flags));
	if ((flags & DRAY_CQ_ARM_SOLICITED) &&
	    !(cqe->flags & DRAY_CQE_F_SOLICITED) &&
	    cqe->status == DRAY_CQE_ST_SUCCESS)
		return;
	cq->arm_seq_seen = seq;
	dray_hw_eq_post(hw, cq->eqn, DRAY_EQE_COMPLETION, cq->cqn, 0);
}

bool dray_hw_cq_post(struct dray_hw *hw, struct dray_hw_cq *cq,
		     const struct dray_cqe *cqe)
{
	struct dray_cqe *dst;
	struct dray_cqe c;

	lockdep_assert_held(&hw->engine.lock);

	if (cq->error)
		return false;
	if (!cq_has_room(cq)) {
		cq->error = true;
		cq_dbg(hw, cq, "overflow at pi %u, CQ in error\n", cq->pi);
		dray_hw_eq_post(hw, 0, DRAY_EQE_CQ_ERROR, cq->cqn, 0);
		return false;
	}

	c = *cqe;
	c.reserved0 = 0;
	memset(c.reserved1, 0, sizeof(c.reserved1));
	c.flags &= ~DRAY_CQE_F_PHASE;
	if (dray_ring_phase(cq->pi, cq->depth))
		c.flags |= DRAY_CQE_F_PHASE;

	dst = &cq->ring[dray_ring_slot(cq->pi, cq->depth)];
	memcpy(dst, &c, offsetof(struct dray_cqe, flags));
	/* The body must be visible before the flags byte hands it over. */
	smp_wmb();
	WRITE_ONCE(dst->flags, c.flags);
	cq->pi++;
	WRITE_ONCE(cq->db->producer, cpu_to_le32(cq->pi));

	cq_notify(hw, cq, &c);
	return true;
}

/* Device reset: every CQ (the QPs on them are gone already). */
void dray_hw_cqs_destroy(struct dray_hw *hw)
{
	struct dray_hw_cq *cq;
	unsigned long index;

	lockdep_assert_held(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.cqs, index, cq) {
		xa_erase(&hw->engine.cqs, index);
		cq_free(cq);
	}
}
