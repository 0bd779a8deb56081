// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: memory windows (IBTA vol. 1 10.6.7). A window is an
 * entry of the MR table whose key is an rkey only: bound to a range of
 * an MR with the MW_BIND right, it grants remote access to that range
 * alone, with its own remote rights (which may exceed the MR's: the MR
 * needs local write for a window that grants remote write or atomics).
 * Type 1 windows are bound by a bind verb (a BIND_MW work request the
 * provider posts), may be rebound any time, and cannot be invalidated;
 * type 2 windows are bound to the QP that posted the BIND_MW, only when
 * unbound, and are invalidated by LOCAL_INV or a SEND with invalidate.
 * An MR with windows bound cannot be destroyed (DESTROY_MR: BUSY).
 *
 * Context: CREATE_MW/DESTROY_MW are admin commands (process, under
 * engine.admin_lock, publishing under engine.lock); the rest runs in
 * engine passes, under engine.lock.
 */

#include <linux/slab.h>
#include <linux/xarray.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_mem.h"
#include "dev_obj.h"

void dray_hw_cmd_create_mw(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_create_mw *cmd = &e->u.create_mw;
	struct dray_hw_engine *eng = &hw->engine;
	u32 pdn = le32_to_cpu(cmd->pdn);
	struct dray_hw_mr *mw;
	u32 index;
	int ret;

	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved))) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (cmd->type != DRAY_MW_TYPE_1 && cmd->type != DRAY_MW_TYPE_2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_FLAGS);
		return;
	}
	mw = kzalloc(sizeof(*mw), GFP_KERNEL);
	if (!mw) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	mw->pdn = pdn;
	mw->mw_type = cmd->type;
	mw->state = DRAY_HW_MR_FREE;

	mutex_lock(&eng->admin_lock);
	if (!dray_hw_pd_get(hw, pdn)) {
		mutex_unlock(&eng->admin_lock);
		kfree(mw);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_PDN);
		return;
	}
	/* Windows take indexes of the MR table, keys like MRs'. */
	ret = xa_alloc_cyclic(&eng->mrs, &index, NULL,
			      XA_LIMIT(1, DRAY_HW_MAX_MR), &eng->mr_key_seq,
			      GFP_KERNEL);
	if (ret < 0) {
		dray_hw_pd_put(hw, pdn);
		mutex_unlock(&eng->admin_lock);
		kfree(mw);
		dray_aq_fail(res, dray_aq_alloc_status(ret), DRAY_AQ_SYN_NONE);
		return;
	}
	eng->mr_variant[index]++;
	mw->key = FIELD_PREP(DRAY_KEY_INDEX_MASK, index) |
		  FIELD_PREP(DRAY_KEY_VARIANT_MASK, eng->mr_variant[index]);
	dray_hw_engine_lock(hw);
	xa_store(&eng->mrs, index, mw, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	res->result = mw->key;
}

/* Forget what @mw is bound to. engine.lock held. */
static void mw_unbind(struct dray_hw_mr *mw)
{
	if (mw->state == DRAY_HW_MR_VALID && mw->mw_mr)
		mw->mw_mr->windows--;
	mw->mw_mr = NULL;
	mw->length = 0;
	mw->state = DRAY_HW_MR_FREE;
}

void dray_hw_cmd_destroy_mw(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_mw *cmd = &e->u.destroy_mw;
	struct dray_hw_engine *eng = &hw->engine;
	u32 key = le32_to_cpu(cmd->key);
	u32 index = dray_hw_mr_index(key);
	struct dray_hw_mr *mw;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	dray_hw_engine_lock(hw);
	/* By index: the key changes with every bind. */
	mw = xa_load(&eng->mrs, index);
	if (mw && mw->mw_type) {
		mw_unbind(mw);
		xa_erase(&eng->mrs, index);
	} else {
		mw = NULL;
	}
	dray_hw_engine_unlock(hw);
	if (mw)
		dray_hw_pd_put(hw, mw->pdn);
	mutex_unlock(&eng->admin_lock);
	if (!mw) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_MR_KEY);
		return;
	}
	kfree(mw);
}

/* The MR a bind names, if windows may be bound to it; else NULL. */
static struct dray_hw_mr *mw_bind_mr(struct dray_hw *hw, u32 lkey, u32 pdn)
{
	struct dray_hw_mr *mr = xa_load(&hw->engine.mrs,
					dray_hw_mr_index(lkey));

	/* IBTA C10-73: the MR must allow binding; FAST_REG MRs do not. */
	if (!mr || mr->mw_type || mr->key != lkey || mr->pdn != pdn ||
	    mr->state != DRAY_HW_MR_VALID ||
	    !(mr->access & DRAY_ACCESS_MW_BIND) ||
	    (mr->flags & (DRAY_MR_F_FAST_REG | DRAY_MR_F_PHYSICAL)))
		return NULL;
	return mr;
}

u8 dray_hw_mw_bind(struct dray_hw *hw, const struct dray_hw_qp *qp,
		   const struct dray_sq_wqe *w)
{
	u32 key = le32_to_cpu(w->u.bind.mw_key);
	u64 addr = le64_to_cpu(w->u.bind.addr);
	u64 length = le64_to_cpu(w->u.bind.length);
	bool zero_based = w->u.bind.flags & DRAY_BIND_F_ZERO_BASED;
	u8 access = w->u.bind.access;
	struct dray_hw_mr *mw, *mr;
	u64 last;

	lockdep_assert_held(&hw->engine.lock);

	mw = xa_load(&hw->engine.mrs, dray_hw_mr_index(key));
	if (!mw || !mw->mw_type || mw->pdn != qp->pdn)
		return DRAY_VERR_MW_KEY;
	if (w->u.bind.flags & ~DRAY_BIND_F_ZERO_BASED ||
	    access & ~(DRAY_ACCESS_REMOTE | DRAY_ACCESS_LOCAL_WRITE))
		return DRAY_VERR_MW_ACCESS;
	if (mw->mw_type == DRAY_MW_TYPE_1) {
		/* o10-36.2.2: type 1 windows are not zero based. */
		if (zero_based)
			return DRAY_VERR_MW_ZERO_BASED;
		if (!length) {
			/* Unbind. */
			mw_unbind(mw);
			mw->key = key;
			return 0;
		}
	} else {
		/* o10-37.2.30, o10-37.2.40: a FREE window, a real range. */
		if (mw->state != DRAY_HW_MR_FREE)
			return DRAY_VERR_MW_STATE;
		if (!length)
			return DRAY_VERR_MW_MR;
	}
	mr = mw_bind_mr(hw, le32_to_cpu(w->u.bind.mr_lkey), qp->pdn);
	if (!mr)
		return DRAY_VERR_MW_MR;
	/* C10-74: remote write or atomics need the MR's local write. */
	if ((access & (DRAY_ACCESS_REMOTE_WRITE | DRAY_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & DRAY_ACCESS_LOCAL_WRITE))
		return DRAY_VERR_MW_ACCESS;
	/* C10-75: the window lies inside the MR. */
	if (!mr->length || check_add_overflow(addr, length - 1, &last) ||
	    addr < mr->iova || last - mr->iova > mr->length - 1)
		return DRAY_VERR_MW_MR;

	mw_unbind(mw);
	mr->windows++;
	mw->mw_mr = mr;
	mw->mw_base = addr;
	mw->iova = zero_based ? 0 : addr;
	mw->length = length;
	mw->zero_based = zero_based;
	mw->access = access & DRAY_ACCESS_REMOTE;
	mw->mw_qpn = mw->mw_type == DRAY_MW_TYPE_2 ? qp->qpn : 0;
	mw->key = key;
	mw->state = DRAY_HW_MR_VALID;
	return 0;
}

static u8 mw_invalidate(u32 pdn, const struct dray_hw_qp *qp,
			struct dray_hw_mr *mw, u32 key, bool remote)
{
	if (mw->pdn != pdn)
		return DRAY_VERR_FR_KEY;
	/* o10-37.2.26: type 1 windows cannot be invalidated. */
	if (mw->mw_type == DRAY_MW_TYPE_1)
		return DRAY_VERR_MW_STATE;
	if (mw->key != key)
		return DRAY_VERR_INV_KEY;
	/* From the wire: only the QP the window is bound to may. */
	if (remote && mw->state == DRAY_HW_MR_VALID && mw->mw_qpn != qp->qpn)
		return DRAY_VERR_MW_STATE;
	mw_unbind(mw);
	return 0;
}

u8 dray_hw_key_invalidate(struct dray_hw *hw, u32 pdn,
			  const struct dray_hw_qp *qp, u32 key, bool remote)
{
	struct dray_hw_mr *mw;

	lockdep_assert_held(&hw->engine.lock);

	mw = xa_load(&hw->engine.mrs, dray_hw_mr_index(key));
	if (mw && mw->mw_type)
		return mw_invalidate(pdn, qp, mw, key, remote);
	return dray_hw_mr_invalidate(hw, pdn, key);
}

enum dray_mr_err dray_hw_rkey_check(struct dray_hw *hw, u32 key, u32 pdn,
				    const struct dray_hw_qp *qp, u8 access,
				    u64 *addr, u64 len,
				    struct dray_hw_mr **mrp)
{
	struct dray_hw_mr *mw;
	u64 last;

	lockdep_assert_held(&hw->engine.lock);

	mw = xa_load(&hw->engine.mrs, dray_hw_mr_index(key));
	if (!mw || !mw->mw_type)
		return dray_hw_mr_check(hw, key, pdn, access, *addr, len, mrp);
	if (mw->key != key)
		return DRAY_MR_ERR_KEY;
	if (mw->pdn != pdn)
		return DRAY_MR_ERR_PD;
	if (mw->state != DRAY_HW_MR_VALID)
		return DRAY_MR_ERR_STATE;
	if (mw->mw_type == DRAY_MW_TYPE_2 && mw->mw_qpn != qp->qpn)
		return DRAY_MR_ERR_QP;
	if ((mw->access & access) != access)
		return DRAY_MR_ERR_ACCESS;
	if (len && (check_add_overflow(*addr, len - 1, &last) ||
		    *addr < mw->iova || last - mw->iova > mw->length - 1))
		return DRAY_MR_ERR_RANGE;
	/* The bind checked that the window lies inside the MR. */
	*addr = mw->mw_base + (*addr - mw->iova);
	*mrp = mw->mw_mr;
	return DRAY_MR_OK;
}
