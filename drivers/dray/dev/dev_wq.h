/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the work queues of a QP as the engine and the transport
 * use them (dev_wq.c): reading doorbell records, fetching and validating
 * WQEs (copied out of the ring once, only the copy used), completing them
 * in order, moving a QP to an error state and flushing it. The index
 * rules are at the top of dev.h.
 *
 * Context: an engine pass, or an admin command holding engine.lock; every
 * function here asserts engine.lock.
 */
#ifndef DRAY_DEV_WQ_H
#define DRAY_DEV_WQ_H

#include <linux/types.h>

struct dray_cqe;
struct dray_hw;
struct dray_hw_qp;
struct dray_hw_rwqe;
struct dray_hw_swqe;
struct dray_hw_srq;
struct dray_hw_wq;

/* The QP of @qpn in the QP table, or NULL. */
struct dray_hw_qp *dray_hw_qp_find(struct dray_hw *hw, u32 qpn);

/*
 * Number of posted, not yet fetched WQEs that may be started: 0 unless
 * the QP is in RTS (SQD starts no new WQE).
 */
u32 dray_hw_sq_pending(struct dray_hw_qp *qp);
/*
 * Copy SQ WQE @index out of the ring and validate it for the QP's type.
 * Returns 0 or a DRAY_CQE_ST_* status to complete the WQE with (then
 * wqe->vendor_err tells why; wqe->index and wqe->hdr are always set).
 * @index may be any posted, not completed WQE ([sq.completed, posted));
 * any other index (or a QP in RESET or ERR) is refused with GENERAL_ERR
 * and DRAY_VERR_WQE_INDEX. Nothing moves: the transport advances
 * qp->sq.fetched itself when it starts the WQE, and may read the same
 * WQE again (a WQE that had to wait, a retransmission). The WQE is copied
 * out of the ring once per call and only the copy is used.
 */
int dray_hw_sq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp, u32 index,
		     struct dray_hw_swqe *wqe);
/*
 * Take the next RQ WQE (the doorbell record is read again if the RQ
 * looks empty). -ENOENT: RQ empty (RNR); nothing taken. Else the WQE is
 * taken (rq.fetched advances): 0, or -EINVAL for a malformed WQE, which
 * the transport completes with DRAY_CQE_ST_LOC_QP_OP_ERR. SGE keys are
 * not checked here: the transport checks them when it places data.
 * Also -ENOENT when the QP is not in RTR, RTS, SQD or SQE.
 */
int dray_hw_rq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_rwqe *wqe);
/*
 * An XRC target QP: take the next WQE of XRC SRQ @srq (found by the
 * request's XRCETH, dray_hw_srq_find_xrc()), as dray_hw_rq_fetch() does
 * for a QP on an SRQ; the QP remembers the SRQ, whose CQ gets the WQE's
 * completion (none if the SRQ is destroyed before). -EIO: the SRQ is in
 * error, the QP is moved to ERR.
 */
int dray_hw_rq_fetch_xrc(struct dray_hw *hw, struct dray_hw_qp *qp,
			 struct dray_hw_srq *srq, struct dray_hw_rwqe *wqe);
/*
 * Complete SQ WQEs in order (@wqe->index must be sq.completed, and
 * fetched); @status != SUCCESS always writes a CQE, SUCCESS writes one if
 * the WQE is signaled or the QP is SQ_SIG_ALL. An error status other than
 * WR_FLUSH_ERR moves the QP to ERR (IBTA: RC completion errors are
 * fatal to the QP), a UC or UD QP in RTS or SQD to SQE (IBTA 10.3.1:
 * the unreliable services stop only their send queue); the transport
 * must check qp->state afterwards and
 * stop working on a QP in ERR. A CQE that cannot be written (CQ in error)
 * moves the QP to ERR with DRAY_EQE_QP_FATAL.
 */
void dray_hw_sq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_swqe *wqe, u8 status,
			 u8 vendor_err);
/*
 * SQE: complete up to @budget posted send WQEs with WR_FLUSH_ERR, in
 * order, reading each into @w for its opcode. Returns true if posted
 * WQEs are left to flush (call again on a later pass).
 */
bool dray_hw_sq_flush(struct dray_hw *hw, struct dray_hw_qp *qp,
		      struct dray_hw_swqe *w, u32 budget);
/*
 * Complete the RQ WQE @wqe (in order). The transport fills @cqe's
 * opcode, status, vendor_err, byte_len, imm_data, src_qpn and flags
 * (IMM, SOLICITED, ...); qpn and wqe_index are filled here, and for an
 * XRC target the SRQ's number (src_qpn, DRAY_CQE_F2_XRC). An error
 * status moves the QP to ERR as for dray_hw_sq_complete().
 */
void dray_hw_rq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_rwqe *wqe, struct dray_cqe *cqe);
/*
 * Move the QP to ERR: raise @event (a DRAY_EQE_* QP event, 0 for none;
 * data1 = @vendor_err) and flush every outstanding and future WQE with
 * WR_FLUSH_ERR. Only the state changes here: the engine calls
 * dray_xport_error() and flushes on its next pass, outside any transport
 * call, so the transport may call this from anywhere (and so may an
 * admin command under engine.lock). No-op for a QP in RESET or already
 * in ERR.
 */
void dray_hw_qp_error(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event,
		      u8 vendor_err);
/* Post a QP async event (DRAY_EQE_*) on EQ 0. */
void dray_hw_qp_event(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event);

/*
 * For the engine (dev_engine.c).
 * dray_hw_wq_poll(): read @wq's producer index once and validate it;
 * true if wq->posted changed or the QP went to ERR (a violation).
 * dray_hw_qp_flush(): for a QP in ERR (the transport told already),
 * complete every WQE up to the posted index with WR_FLUSH_ERR; true if
 * it did anything.
 */
bool dray_hw_wq_poll(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_wq *wq);
bool dray_hw_qp_flush(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * dray_hw_sq_publish(): check the sq.fetched the transport set (a value
 * outside [completed, posted] moves the QP to ERR) and write it to the
 * doorbell record's consumer index if it changed; true if it did.
 */
bool dray_hw_sq_publish(struct dray_hw *hw, struct dray_hw_qp *qp);

#endif /* DRAY_DEV_WQ_H */
