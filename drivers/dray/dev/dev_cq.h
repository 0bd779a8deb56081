/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: writing completions (dev_cq.c), for the work queue
 * layer. Context: an engine pass, engine.lock held.
 */
#ifndef DRAY_DEV_CQ_H
#define DRAY_DEV_CQ_H

#include <linux/types.h>

struct dray_cqe;
struct dray_hw;
struct dray_hw_cq;

/*
 * Write one CQE (phase and flags handled here; cqe->flags holds the
 * other DRAY_CQE_F_* bits). Raises a completion event if the CQ is armed
 * and the CQE matches the arm. Overflow puts the CQ in error and raises
 * DRAY_EQE_CQ_ERROR. Returns false if the CQE could not be written.
 */
bool dray_hw_cq_post(struct dray_hw *hw, struct dray_hw_cq *cq,
		     const struct dray_cqe *cqe);

#endif /* DRAY_DEV_CQ_H */
