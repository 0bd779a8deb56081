/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the RoCEv2 unreliable datagram (UD) service, implemented
 * in dev_ud.c. The RC transport's entry points (dev_xport.h) hand UD QPs
 * and UD frames over to the functions below; the engine does not know the
 * difference.
 *
 * Send: every send WQE becomes one packet, UD SEND Only (with Immediate):
 * BTH, DETH (Q_Key, source QP), the payload copied into the frame, ICRC.
 * The destination comes from the address handle the WQE names (an AH of
 * the QP's PD) or, with DRAY_WQE_F_UD_AV, from the address vector in the
 * WQE itself (checked as CREATE_AH checks one); the payload must fit the
 * port's active MTU. A WQE completes as soon as its frame is handed to
 * the port (UD is unreliable: a frame the port drops still completes
 * successfully). An error completion moves the QP to SQE (IBTA vol. 1
 * 10.3.1: unreliable service types); in SQE every send WQE completes
 * with WR_FLUSH_ERR and the receive side works on.
 *
 * Receive: a frame for a UD QP in RTR, RTS, SQD or SQE whose P_Key and
 * Q_Key match takes the next receive WQE; without one it is dropped and
 * counted (UD is unreliable). The WQE receives a 40-byte GRH, then the
 * payload: the IPv6 header of the packet, or for IPv4 20 zero bytes and
 * the IPv4 header (the layout libibverbs' ibv_init_ah_from_wc() expects
 * for RoCEv2). Errors placing it (receive WQE too short, malformed, or
 * a refused SGE) complete the WQE in error and move the QP to ERR.
 *
 * Locking: everything runs in an engine pass with engine.lock (a spinlock)
 * held and must not sleep; the lock protects struct dray_ud_qp.
 */
#ifndef DRAY_DEV_UD_H
#define DRAY_DEV_UD_H

#include <linux/types.h>

#include "dev_wqe.h"

struct dray_hw;
struct dray_hw_qp;
struct dray_xp_rxpkt;
struct dray_wire_l3;

/* Per-QP UD state, in struct dray_hw_qp; zero in RESET. */
struct dray_ud_qp {
	u32			psn;		/* PSN of the next packet */
	bool			stall;		/* no memory: retry on the timer */
	struct dray_hw_swqe	wqe;		/* the send WQE being sent */
	struct dray_hw_rwqe	rwqe;		/* the receive WQE being filled */
	struct dray_hw_path	av;		/* the WQE's address vector */
};

/*
 * Hooks of dev_xport.c, for QPs of type DRAY_QPT_UD and DRAY_QPT_GSI. The
 * GSI QP is a UD QP with QPN 1 whose Q_Key is always the well-known
 * 0x80010000 (IBTA 13.5.1), whatever MODIFY_QP set.
 */
void dray_ud_modify(struct dray_hw *hw, struct dray_hw_qp *qp, u32 mask,
		    u8 old_state);
bool dray_ud_want_run(struct dray_hw_qp *qp);
void dray_ud_send(struct dray_hw *hw, struct dray_hw_qp *qp);
void dray_ud_timer(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * Hook of dray_xport_rx() for a UD opcode: the frame is validated up to
 * its transport headers and its ICRC, and @qp is its destination QP (of
 * any type). @ip is a copy of its IP header. Consumes rx->skb.
 */
void dray_ud_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		struct dray_xp_rxpkt *rx, const u8 *ip,
		const struct dray_wire_l3 *l3);

#endif /* DRAY_DEV_UD_H */
