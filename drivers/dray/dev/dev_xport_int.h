/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: what the parts of the RoCEv2 transport (dev_xport.c,
 * dev_net.c, dev_req.c, dev_comp.c, dev_resp.c) and the UD service
 * (dev_ud.c) share among themselves. Nothing else includes this file.
 *
 * Locking: every function here runs in an engine pass with engine.lock (a
 * spinlock, bottom halves off) held, and must not sleep; the lock protects
 * all of struct dray_xport_qp.
 */
#ifndef DRAY_DEV_XPORT_INT_H
#define DRAY_DEV_XPORT_INT_H

#include <linux/skbuff.h>

#include "dev.h"
#include "dev_ah.h"
#include "dev_cq.h"
#include "dev_mem.h"
#include "dev_obj.h"
#include "dev_srq.h"
#include "dev_wq.h"
#include "dev_xport.h"

#define dray_xp_assert_locked(hw)	lockdep_assert_held(&(hw)->engine.lock)

/* Data-path diagnostics: a remote peer can provoke them, so rate limited. */
#define xp_dbg(hw, qp, fmt, ...)					\
	pr_debug_ratelimited("dray-nic %s: QP[%u] " fmt,		\
			     netdev_name((hw)->ndev), (qp)->qpn,	\
			     ##__VA_ARGS__)

/* A received packet, parsed and checked up to its transport headers. */
struct dray_xp_rxpkt {
	struct sk_buff	*skb;
	struct dray_pkt	hdr;
	u32		flags;		/* DRAY_OPF_* of hdr.opcode */
	u32		pay_off;	/* payload offset in skb */
	u32		pay_len;	/* payload bytes (no pad, no ICRC) */
};

/* Payload of @len bytes at or below which frames copy instead of map. */
#define DRAY_XP_COPYBREAK	256

/* dev_net.c: frames */
struct sk_buff *dray_xp_skb_alloc(struct dray_hw *hw, struct dray_hw_qp *qp,
				  struct dray_pkt *pkt, u32 paylen, bool zcopy);
void dray_xp_skb_add_data(struct sk_buff *skb, const void *data, u32 len);
u32 dray_xp_crc_skb(struct sk_buff *skb, u32 off, u32 len, u32 crc);
void dray_xp_xmit(struct dray_hw *hw, struct dray_hw_qp *qp,
		  struct sk_buff *skb);
void dray_xp_xmit_path(struct dray_hw *hw, struct dray_hw_qp *qp,
		       const struct dray_hw_path *path, struct sk_buff *skb);
bool dray_xp_count_nak(struct dray_hw_qp *qp, u8 syndrome, bool tx);
void dray_xp_send_ack(struct dray_hw *hw, struct dray_hw_qp *qp, u8 syndrome,
		      u32 psn);

/* dev_xport.c */
void dray_xp_arm(struct dray_hw *hw, struct dray_hw_qp *qp);

/* dev_req.c: requester */
void dray_xp_req_start(struct dray_hw_qp *qp);
void dray_xp_req_resume(struct dray_hw_qp *qp);
void dray_xp_req_send(struct dray_hw *hw, struct dray_hw_qp *qp);
void dray_xp_req_rewind(struct dray_hw_qp *qp, u32 psn);
void dray_xp_req_timer(struct dray_hw *hw, struct dray_hw_qp *qp);
void dray_xp_req_rearm(struct dray_hw_qp *qp);
struct dray_xp_swqe *dray_xp_req_find(struct dray_hw_qp *qp, u32 psn);

static inline struct dray_xp_swqe *dray_xp_wqe(struct dray_hw_qp *qp,
					       u32 index)
{
	return &qp->xp.req.wqe[index & (DRAY_XP_MAX_WQE - 1)];
}

/* The path MTU in bytes (256 should MODIFY_QP ever let a bad one by). */
/*
 * UC runs the RC requester and responder without the reliability: no
 * ACKs, no retransmission, a message with a lost packet is dropped.
 */
static inline bool dray_xp_uc(const struct dray_hw_qp *qp)
{
	return qp->type == DRAY_QPT_UC;
}

/*
 * XRC runs the RC requester (initiator QPs) and the RC responder (target
 * QPs), with XRC opcodes and the XRCETH.
 */
static inline bool dray_xp_xrc(const struct dray_hw_qp *qp)
{
	return qp->type == DRAY_QPT_XRC_INI || qp->type == DRAY_QPT_XRC_TGT;
}

/* What a QP's packets add to the RC opcode of their operation. */
static inline u8 dray_xp_op_transport(const struct dray_hw_qp *qp)
{
	if (dray_xp_uc(qp))
		return DRAY_OP_UC;
	return dray_xp_xrc(qp) ? DRAY_OP_XRC : 0;
}

static inline u32 dray_xp_mtu(const struct dray_hw_qp *qp)
{
	u32 mtu = dray_mtu_bytes(qp->path_mtu);

	return mtu ? mtu : 256;
}

/*
 * PSNs from @from up to @to, in sequence order. Outstanding PSNs never
 * exceed 2^23, so that dray_psn_cmp() orders every PSN in flight.
 */
static inline u32 dray_xp_span(u32 from, u32 to)
{
	return (to - from) & DRAY_PSN_MASK;
}

#define DRAY_XP_MAX_SPAN	BIT(23)

/* WQEs answered by a READ response (empty for ATOMIC_WRITE and FLUSH). */
static inline bool dray_xp_is_read_answered(u8 wqe_opcode)
{
	return wqe_opcode == DRAY_WQE_RDMA_READ ||
	       wqe_opcode == DRAY_WQE_ATOMIC_WRITE ||
	       wqe_opcode == DRAY_WQE_FLUSH;
}

/*
 * WQEs answered by responses, not ACKs, each holding initiator depth:
 * those answered by a READ response, and the atomics.
 */
static inline bool dray_xp_is_rd_atomic(u8 wqe_opcode)
{
	return dray_xp_is_read_answered(wqe_opcode) ||
	       wqe_opcode == DRAY_WQE_ATOMIC_CMP_SWP ||
	       wqe_opcode == DRAY_WQE_ATOMIC_FETCH_ADD;
}

/* dev_req.c: requester */
bool dray_xp_req_read_waits(const struct dray_hw_qp *qp,
			    const struct dray_xp_swqe *m);

/* dev_comp.c: completer */
void dray_xp_comp_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_xp_rxpkt *rx);
void dray_xp_comp_fail(struct dray_xp_swqe *m, u8 status, u8 vendor_err);
void dray_xp_comp_advance(struct dray_hw *hw, struct dray_hw_qp *qp);

/* dev_resp.c: responder */
void dray_xp_resp_start(struct dray_hw_qp *qp);
struct dray_xp_res *dray_xp_resp_set_rdb(struct dray_hw_qp *qp,
					 struct dray_xp_res *rdb, u8 n);
void dray_xp_resp_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_xp_rxpkt *rx);
void dray_xp_resp_run(struct dray_hw *hw, struct dray_hw_qp *qp, bool final);

#endif /* DRAY_DEV_XPORT_INT_H */
