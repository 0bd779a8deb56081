/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the RoCEv2 transport (requester, responder, completer)
 * as seen by the engine. Implemented in dev_net.c, dev_req.c, dev_resp.c
 * and dev_comp.c. All functions run on the engine thread with
 * engine.lock held.
 */
#ifndef DRAY_DEV_XPORT_H
#define DRAY_DEV_XPORT_H

struct dray_hw;
struct dray_hw_qp;

/*
 * Per-QP transport state: requester (PSNs, outstanding WQEs, retry
 * counters), responder (expected PSN, MSN, resources for READ/atomic
 * replay) and completer. Defined by the transport layer.
 */
struct dray_xport_qp {
	u32	placeholder;	/* replaced by the transport implementation */
};

/* QP created (RESET): initialize transport state. */
void dray_xport_init(struct dray_hw *hw, struct dray_hw_qp *qp);
/* QP destroyed or reset: drop every transport resource (no CQEs). */
void dray_xport_reset(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * MODIFY_QP applied attributes (DRAY_QP_ATTR_* in @mask) and possibly a
 * new state (qp->state already updated; @old_state is the previous one).
 */
void dray_xport_modify(struct dray_hw *hw, struct dray_hw_qp *qp, u32 mask,
		       u8 old_state);
/* The SQ has new WQEs or a window opened: send what may be sent. */
void dray_xport_send(struct dray_hw *hw, struct dray_hw_qp *qp);
/* The QP's deadline passed: retransmit, RNR retry or give up. */
void dray_xport_timer(struct dray_hw *hw, struct dray_hw_qp *qp);
/* A received frame (RoCEv2 for one of our GIDs). Consumes @skb. */
void dray_xport_rx(struct dray_hw *hw, struct sk_buff *skb);
/* Are all fetched send WQEs completed (for SQD drained)? */
bool dray_xport_sq_idle(struct dray_hw_qp *qp);
/* The QP went to ERR: give back outstanding WQEs (engine flushes them). */
void dray_xport_error(struct dray_hw *hw, struct dray_hw_qp *qp);

#endif /* DRAY_DEV_XPORT_H */
