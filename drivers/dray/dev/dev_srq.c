// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: shared receive queues (IBTA vol. 1 10.2.9). An SRQ is
 * a receive ring that any number of QPs (RC and UD) created on it take
 * their receive WQEs from, in ring order, when a message needs one. Each
 * WQE is copied out of the ring when it is taken and only the copy is
 * checked and used: software may rewrite the ring at any moment and
 * only ever hurts the QP that takes the rewritten WQE (an error
 * completion, that QP in ERR). The completion names the QP that took the
 * WQE and the tag software gave it (dray_queue.h).
 *
 * The limit (MODIFY_SRQ) raises DRAY_EQE_SRQ_LIMIT once when, after a WQE
 * was taken, fewer than limit WQEs are left, and disarms.
 *
 * An XRC SRQ (IBTA annex A14) has no QPs: it belongs to an XRC domain,
 * any XRC target QP of that domain takes its WQEs for the requests that
 * name it, and its completions go to its own CQ. Passes find it by the
 * number a request carries (dray_hw_srq_find_xrc()), so SRQs are
 * published and unpublished under engine.lock.
 *
 * Context: the commands are admin commands (process, under
 * engine.admin_lock, changing what passes see under engine.lock);
 * dray_hw_srq_take() runs in engine passes.
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_mem.h"
#include "dev_obj.h"
#include "dev_srq.h"

#define DRAY_SRQ_LOG_STRIDE_MIN	4
#define DRAY_SRQ_LOG_STRIDE_MAX	9
static_assert(DRAY_SRQ_WQE_HDR_SIZE +
	      DRAY_HW_MAX_SGE * DRAY_SGE_SIZE <= 1 << DRAY_SRQ_LOG_STRIDE_MAX);

#define srq_dbg(hw, srq, fmt, ...) \
	pr_debug("dray-nic %s: SRQ[%u] " fmt, netdev_name((hw)->ndev), \
		 (srq)->srqn, ##__VA_ARGS__)

static u32 srq_pages(u8 log_depth, u8 log_stride)
{
	return DIV_ROUND_UP(DRAY_QUEUE_HDR_SIZE +
			    ((u32)1 << (log_depth + log_stride)),
			    DRAY_PAGE_SIZE);
}

static int srq_create_params(const struct dray_cmd_create_srq *c,
			     u32 *syndrome)
{
	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_FLAGS;
	if (c->flags & ~DRAY_SRQ_F_XRC)
		return DRAY_AQ_STS_BAD_PARAM;
	/* An XRC SRQ has a domain and a CQ; another SRQ neither. */
	*syndrome = DRAY_AQ_SYN_XRCDN;
	if (!(c->flags & DRAY_SRQ_F_XRC) != !c->xrcdn)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_CQN;
	if (!(c->flags & DRAY_SRQ_F_XRC) && c->cqn)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
	if (c->log_depth > ilog2(DRAY_HW_MAX_SRQ_WR))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_STRIDE;
	if (c->log_stride < DRAY_SRQ_LOG_STRIDE_MIN ||
	    c->log_stride > DRAY_SRQ_LOG_STRIDE_MAX)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
	if (le32_to_cpu(c->n_pages) < srq_pages(c->log_depth, c->log_stride))
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

static void srq_free(struct dray_hw_srq *srq)
{
	dray_hw_buf_unmap(&srq->buf);
	kfree(srq);
}

/*
 * Take the PD (and for an XRC SRQ its domain and CQ) a new SRQ uses.
 * admin_lock held.
 */
static int srq_attach(struct dray_hw *hw, struct dray_hw_srq *srq,
		      const struct dray_cmd_create_srq *c, u32 *syndrome)
{
	struct dray_hw_engine *eng = &hw->engine;

	lockdep_assert_held(&eng->admin_lock);

	if (c->flags & DRAY_SRQ_F_XRC) {
		*syndrome = DRAY_AQ_SYN_CQN;
		srq->cq = xa_load(&eng->cqs, le32_to_cpu(c->cqn));
		if (!srq->cq)
			return DRAY_AQ_STS_NOT_FOUND;
	}
	*syndrome = DRAY_AQ_SYN_PDN;
	if (!xa_load(&eng->pds, srq->pdn))
		return DRAY_AQ_STS_NOT_FOUND;
	srq->xrcdn = le32_to_cpu(c->xrcdn);
	*syndrome = DRAY_AQ_SYN_XRCDN;
	if (srq->xrcdn && !dray_hw_xrcd_get(hw, srq->xrcdn))
		return DRAY_AQ_STS_NOT_FOUND;

	dray_hw_pd_get(hw, srq->pdn);
	if (srq->cq)
		srq->cq->users++;
	return DRAY_AQ_STS_OK;
}

static void srq_detach(struct dray_hw *hw, struct dray_hw_srq *srq)
{
	dray_hw_pd_put(hw, srq->pdn);
	if (srq->xrcdn)
		dray_hw_xrcd_put(hw, srq->xrcdn);
	if (srq->cq)
		srq->cq->users--;
}

void dray_hw_cmd_create_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_create_srq *c = &e->u.create_srq;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_srq *srq;
	u32 syndrome, srqn;
	int status, ret;

	status = srq_create_params(c, &syndrome);
	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}
	srq = kzalloc(sizeof(*srq), GFP_KERNEL);
	if (!srq) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	srq->pdn = le32_to_cpu(c->pdn);
	srq->depth = 1U << c->log_depth;
	srq->log_stride = c->log_stride;
	status = dray_hw_buf_map(hw, le64_to_cpu(c->mtt_addr),
				 srq_pages(c->log_depth, c->log_stride),
				 &srq->buf, &syndrome);
	if (status) {
		kfree(srq);
		dray_aq_fail(res, status, syndrome);
		return;
	}
	srq->db = srq->buf.vaddr;
	srq->ring = srq->buf.vaddr + DRAY_QUEUE_HDR_SIZE;
	WRITE_ONCE(srq->db->consumer, 0);

	mutex_lock(&eng->admin_lock);
	status = srq_attach(hw, srq, c, &syndrome);
	if (status)
		goto unlock;
	/* Reserve the number; published below, under engine.lock. */
	ret = xa_alloc_cyclic(&eng->srqs, &srqn, NULL,
			      XA_LIMIT(1, DRAY_HW_MAX_SRQ), &eng->srqn_next,
			      GFP_KERNEL);
	if (ret < 0) {
		srq_detach(hw, srq);
		status = dray_aq_alloc_status(ret);
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	srq->srqn = srqn;
	srq->serial = ++eng->srq_serial;
	dray_hw_engine_lock(hw);
	xa_store(&eng->srqs, srqn, srq, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	res->result = srqn;
	return;

unlock:
	mutex_unlock(&eng->admin_lock);
	srq_free(srq);
	dray_aq_fail(res, status, syndrome);
}

void dray_hw_cmd_modify_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_modify_srq *c = &e->u.modify_srq;
	struct dray_hw_engine *eng = &hw->engine;
	u32 limit = le32_to_cpu(c->limit);
	struct dray_hw_srq *srq;

	mutex_lock(&eng->admin_lock);
	srq = xa_load(&eng->srqs, le32_to_cpu(c->srqn));
	if (!srq) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_SRQN);
		return;
	}
	if (limit >= srq->depth) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_SRQ_LIMIT);
		return;
	}
	dray_hw_engine_lock(hw);
	srq->limit = limit;
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
}

void dray_hw_cmd_query_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_srq *c = &e->u.srq;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_srq *srq;

	if (c->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	srq = xa_load(&eng->srqs, le32_to_cpu(c->srqn));
	if (srq) {
		dray_hw_engine_lock(hw);
		res->result = srq->limit |
			      (srq->error ? DRAY_SRQ_QUERY_ERROR : 0);
		dray_hw_engine_unlock(hw);
	}
	mutex_unlock(&eng->admin_lock);
	if (!srq)
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_SRQN);
}

void dray_hw_cmd_destroy_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res)
{
	const struct dray_cmd_srq *c = &e->u.srq;
	struct dray_hw_engine *eng = &hw->engine;
	u32 srqn = le32_to_cpu(c->srqn);
	struct dray_hw_srq *srq;

	if (c->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	srq = xa_load(&eng->srqs, srqn);
	if (!srq) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_SRQN);
		return;
	}
	/*
	 * No QP is on it. An XRC target QP holding one of its WQEs finds
	 * it gone by its serial (dray_hw_srq_find()) and drops that WQE.
	 */
	if (srq->users) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_SRQN);
		return;
	}
	dray_hw_engine_lock(hw);
	xa_erase(&eng->srqs, srqn);
	dray_hw_engine_unlock(hw);
	srq_detach(hw, srq);
	mutex_unlock(&eng->admin_lock);
	srq_free(srq);
}

/* Device reset: after the QPs, so no SRQ has users. */
void dray_hw_srqs_destroy(struct dray_hw *hw)
{
	struct dray_hw_srq *srq;
	unsigned long index;

	lockdep_assert_held(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.srqs, index, srq) {
		dray_hw_engine_lock(hw);
		xa_erase(&hw->engine.srqs, index);
		dray_hw_engine_unlock(hw);
		srq_detach(hw, srq);
		srq_free(srq);
	}
}

struct dray_hw_srq *dray_hw_srq_get(struct dray_hw *hw, u32 srqn)
{
	struct dray_hw_srq *srq;

	lockdep_assert_held(&hw->engine.admin_lock);
	srq = xa_load(&hw->engine.srqs, srqn);
	/* QPs go on ordinary SRQs; XRC SRQs are named by requests. */
	if (srq && srq->xrcdn)
		return NULL;
	if (srq)
		srq->users++;
	return srq;
}

struct dray_hw_srq *dray_hw_srq_find_xrc(struct dray_hw *hw, u32 srqn,
					 u32 xrcdn)
{
	struct dray_hw_srq *srq;

	lockdep_assert_held(&hw->engine.lock);
	srq = xa_load(&hw->engine.srqs, srqn);
	return srq && xrcdn && srq->xrcdn == xrcdn ? srq : NULL;
}

struct dray_hw_srq *dray_hw_srq_find(struct dray_hw *hw, u32 srqn,
				     u64 serial)
{
	struct dray_hw_srq *srq;

	lockdep_assert_held(&hw->engine.lock);
	srq = xa_load(&hw->engine.srqs, srqn);
	return srq && srq->serial == serial ? srq : NULL;
}

void dray_hw_srq_put(struct dray_hw *hw, struct dray_hw_srq *srq)
{
	lockdep_assert_held(&hw->engine.admin_lock);
	srq->users--;
}

/* Read and check the producer index. False if the SRQ is in error. */
static bool srq_poll(struct dray_hw *hw, struct dray_hw_srq *srq)
{
	u32 pi;

	if (srq->error)
		return false;
	pi = le32_to_cpu(READ_ONCE(srq->db->producer));
	if (pi == srq->posted)
		return true;
	if (pi - srq->taken > srq->depth) {
		srq_dbg(hw, srq, "producer index %u invalid (taken %u, depth %u)\n",
			pi, srq->taken, srq->depth);
		srq->error = true;
		dray_hw_eq_post(hw, 0, DRAY_EQE_SRQ_ERR, srq->srqn, 0);
		return false;
	}
	/* The WQEs are read after the index; pairs with software's wmb. */
	smp_rmb();
	srq->posted = pi;
	return true;
}

int dray_hw_srq_take(struct dray_hw *hw, struct dray_hw_srq *srq,
		     struct dray_hw_rwqe *wqe)
{
	u32 room = (1U << srq->log_stride) - DRAY_SRQ_WQE_HDR_SIZE;
	struct dray_srq_wqe hdr;
	const u8 *slot;
	u32 i;

	lockdep_assert_held(&hw->engine.lock);

	if (!srq_poll(hw, srq))
		return -EIO;
	if (srq->taken == srq->posted)
		return -ENOENT;

	/* One copy of the header and the SGEs; only the copy is used. */
	slot = srq->ring + (dray_ring_slot(srq->taken, srq->depth) <<
			    srq->log_stride);
	memcpy(&hdr, slot, sizeof(hdr));
	srq->taken++;
	WRITE_ONCE(srq->db->consumer, cpu_to_le32(srq->taken));
	wqe->tag = le32_to_cpu(hdr.tag);
	wqe->pdn = srq->pdn;
	wqe->num_sge = 0;
	wqe->length = 0;

	if (srq->limit && srq->posted - srq->taken < srq->limit) {
		srq_dbg(hw, srq, "limit %u reached\n", srq->limit);
		srq->limit = 0;
		dray_hw_eq_post(hw, 0, DRAY_EQE_SRQ_LIMIT, srq->srqn, 0);
	}

	if (hdr.num_sge > DRAY_HW_MAX_SGE ||
	    hdr.num_sge * DRAY_SGE_SIZE > room || wqe->tag >= srq->depth ||
	    memchr_inv(hdr.reserved0, 0, sizeof(hdr.reserved0)) ||
	    memchr_inv(hdr.reserved, 0, sizeof(hdr.reserved)))
		return -EINVAL;
	memcpy(wqe->sge, slot + DRAY_SRQ_WQE_HDR_SIZE,
	       hdr.num_sge * DRAY_SGE_SIZE);
	wqe->num_sge = hdr.num_sge;
	for (i = 0; i < wqe->num_sge; i++)
		wqe->length += le32_to_cpu(wqe->sge[i].length);
	return 0;
}
