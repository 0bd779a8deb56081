/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: shared receive queues as the work queues use them
 * (dev_srq.c). A QP created on an SRQ takes its receive WQEs from it
 * (dray_hw_rq_fetch() in dev_wq.c calls dray_hw_srq_take()); the admin
 * commands are in dev_cmd.h.
 */
#ifndef DRAY_DEV_SRQ_H
#define DRAY_DEV_SRQ_H

#include <linux/types.h>

struct dray_hw;
struct dray_hw_rwqe;
struct dray_hw_srq;

/*
 * Take the next WQE of @srq into @wqe: the doorbell record is read and
 * checked first (a producer index more than the depth ahead of the
 * WQEs taken puts the SRQ in error with DRAY_EQE_SRQ_ERR), then the WQE
 * is copied out of the ring once and only the copy is checked.
 * Returns 0 (taken; wqe->tag, num_sge, sge[], length and pdn set),
 * -ENOENT (the SRQ is empty; nothing taken), -EINVAL (taken but
 * malformed: num_sge over the limit or the stride, tag not below the
 * depth, reserved bytes set; wqe->tag is what the WQE said), or -EIO
 * (the SRQ is in error; nothing taken). An armed limit fires here.
 * Context: an engine pass (engine.lock held).
 */
int dray_hw_srq_take(struct dray_hw *hw, struct dray_hw_srq *srq,
		     struct dray_hw_rwqe *wqe);

/*
 * For CREATE_QP (dev_qp.c): a reference on SRQ @srqn for a new QP
 * (NULL: no such SRQ), and its release. admin_lock held.
 */
struct dray_hw_srq *dray_hw_srq_get(struct dray_hw *hw, u32 srqn);
void dray_hw_srq_put(struct dray_hw *hw, struct dray_hw_srq *srq);

/*
 * For passes (engine.lock held): the XRC SRQ @srqn of XRC domain @xrcdn
 * (NULL: none, not an XRC SRQ, or of another domain); the SRQ @srqn if it
 * is still the one made with @serial (NULL: destroyed since).
 */
struct dray_hw_srq *dray_hw_srq_find_xrc(struct dray_hw *hw, u32 srqn,
					 u32 xrcdn);
struct dray_hw_srq *dray_hw_srq_find(struct dray_hw *hw, u32 srqn,
				     u64 serial);

#endif /* DRAY_DEV_SRQ_H */
