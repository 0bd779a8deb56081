/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the RoCEv2 reliable-connected transport (requester,
 * responder, completer) as seen by the engine. Implemented in dev_net.c
 * (frames), dev_req.c (requester), dev_comp.c (completer), dev_resp.c
 * (responder); pure formats and arithmetic in dev_wire.h.
 *
 * Contract with the engine (dev_engine.c, dev_qp.c):
 *  - Every function runs in an engine pass (on the engine thread, in the
 *    receive softirq or in a wake-up call's context) with engine.lock, a
 *    spinlock, held: nothing may sleep (GFP_ATOMIC).
 *  - The engine calls dray_xport_send() for a QP whenever
 *    dray_xport_want_run() is true: check it after a doorbell shows new
 *    WQEs and on every pass for the active QPs (it is cheap). False means
 *    the transport waits for a frame or for its deadline; calling
 *    dray_xport_send() anyway is harmless, only wasted work.
 *  - The transport keeps one deadline per QP with
 *    dray_hw_qp_set_deadline(); when it passes the engine calls
 *    dray_xport_timer(). A deadline at or before "now" means "call
 *    dray_xport_timer() on this or the next pass": the transport uses it
 *    to pace READ responses and to send coalesced ACKs after the frames
 *    queued for a pass were processed.
 *  - dray_xport_rx() gets frames with skb->data at the IP header and
 *    skb->protocol ETH_P_IP or ETH_P_IPV6, as an rx_handler sees them. The
 *    skb may be shared or cloned: the transport only reads it. The port
 *    hands over PACKET_HOST frames only; PACKET_LOOPBACK marks the frames
 *    the transport looped back itself (dray_hw_engine_rx()), which carry
 *    no ICRC.
 *  - The engine calls dray_xport_error() once for a QP that went to ERR,
 *    on the pass after dray_hw_qp_error(), before it flushes the QP's work
 *    queues; after dray_hw_qp_error() the transport touches no state of
 *    the QP.
 */
#ifndef DRAY_DEV_XPORT_H
#define DRAY_DEV_XPORT_H

#include <linux/types.h>

#include "dev_logic.h"
#include "dev_wire.h"
#include "dev_wqe.h"

struct dray_hw;
struct dray_hw_qp;
struct sk_buff;

/* Send WQEs fetched and not yet completed, at most (a power of two). */
#define DRAY_XP_MAX_WQE		64
/*
 * Response packets one READ request asks for at most, and such requests
 * of one READ outstanding at most (dev_req.c).
 */
#define DRAY_XP_READ_PKTS	128
#define DRAY_XP_READ_PIECES	2
/* Requester: ask for an ACK at least every this many packets. */
#define DRAY_XP_ACKREQ_EVERY	32
/* Responder: acknowledge at least every this many packets. */
#define DRAY_XP_ACK_EVERY	32
/* Requester: tail probes only for ACK timeouts this long (dev_req.c). */
#define DRAY_XP_PROBE_MIN_RTO_MS	500
/* Responder: READ response packets sent per call before yielding. */
#define DRAY_XP_BURST		64
/* Where a fetched send WQE stands (dray_xp_swqe.state). */
enum dray_xp_swqe_state {
	DRAY_XP_WQE_SENDING,	/* on the wire, not acknowledged or answered */
	DRAY_XP_WQE_DONE,	/* acknowledged; completes in order */
	DRAY_XP_WQE_FAILED,	/* completes with .status, then the QP errs */
};

/* A fetched send WQE, as the requester and the completer track it. */
struct dray_xp_swqe {
	u32	index;		/* free-running SQ index */
	u32	psn;		/* first PSN */
	u32	npkts;		/* PSNs it takes (READ: response packets) */
	u32	length;		/* payload bytes */
	u32	resp_pkts;	/* READ: response packets placed */
	u8	opcode;		/* DRAY_WQE_* */
	u8	flags;		/* DRAY_WQE_F_* */
	u8	state;		/* enum dray_xp_swqe_state */
	u8	status;		/* DRAY_CQE_ST_* when FAILED */
	u8	vendor_err;	/* enum dray_vendor_err when FAILED */
	u8	rd_slots;	/* READ/atomic: initiator depth it holds */
};

/*
 * Requester and completer state. PSNs: una <= psn <= max_psn (24-bit
 * order); WQE indexes: head <= cur <= fetch, fetch - head <=
 * DRAY_XP_MAX_WQE. WQEs [head, fetch) are in wqe[index % DRAY_XP_MAX_WQE].
 */
struct dray_xp_req {
	u32	psn;		/* PSN of the next packet to send */
	u32	max_psn;	/* first PSN never sent */
	u32	una;		/* oldest PSN not acknowledged */
	u32	head;		/* oldest WQE not completed */
	u32	cur;		/* WQE being sent */
	u32	cur_pkt;	/* its next packet */
	u32	fetch;		/* next WQE to fetch */
	u32	rd_atomic;	/* initiator depth held (rd_slots summed) */
	u32	noack;		/* packets sent since the last AckReq */
	struct dray_cwnd win;	/* congestion window (dev_logic.h) */
	u8	retry;		/* transport retries left */
	u8	rnr_retry;	/* RNR retries left; 7: infinite */
	bool	rnr_wait;	/* waiting for rnr_deadline after an RNR NAK */
	bool	ackreq;		/* set AckReq on the next packet */
	bool	cur_valid;	/* cur_wqe holds WQE cur_index */
	bool	comp_valid;	/* comp_wqe holds WQE comp_index */
	bool	stall;		/* out of memory: try again soon */
	bool	gone_back;	/* went back: no more until progress */
	bool	blocked;	/* fence, depth, span: wait for progress */
	u32	cur_index;
	u32	comp_index;
	unsigned long	rto_deadline;	/* retransmit timer, jiffies; 0: off */
	unsigned long	probe_deadline;	/* tail probe, jiffies; 0: off */
	unsigned long	rnr_deadline;
	struct dray_xp_swqe	wqe[DRAY_XP_MAX_WQE];
	struct dray_hw_swqe	cur_wqe;	/* requester: WQE being sent */
	struct dray_hw_swqe	comp_wqe;	/* completer: READ/atomic target */
	struct dray_hw_swqe	done_wqe;	/* completer: what to complete */
};

enum dray_xp_res_type {
	DRAY_XP_RES_FREE,
	DRAY_XP_RES_READ,
	DRAY_XP_RES_ATOMIC,
};

/*
 * A responder resource: an accepted READ or atomic, kept so that a
 * duplicate request is answered again (READ: re-read; atomic: the saved
 * result, not executed twice).
 */
struct dray_xp_res {
	u8	type;		/* enum dray_xp_res_type */
	u8	opcode;		/* the request's opcode */
	bool	pending;	/* (part of) its response is still to send */
	u32	psn;		/* first PSN */
	u32	last_psn;	/* last PSN (READ: of the last response) */
	u64	va;		/* the request as accepted */
	u32	rkey;
	u32	pdn;		/* whose memory the rkey names */
	u32	length;
	u64	swap_add;	/* atomic: to tell a true duplicate */
	u64	compare;
	u64	orig;		/* atomic: the value returned */
	/* The READ request being answered: the original or a duplicate. */
	u32	tx_psn;
	u64	tx_va;
	u32	tx_len;
	u32	tx_pkt;		/* next response packet */
};

/* Responder state. */
struct dray_xp_resp {
	u32	epsn;		/* expected PSN */
	u32	msn;		/* messages completed (24 bits) */
	u32	ack_psn;	/* newest PSN an ACK may name (never a READ's) */
	u32	unacked;	/* packets since the last ACK */
	u8	last_op;	/* opcode of the last packet accepted */
	bool	in_msg;		/* last_op started a message not yet ended */
	bool	nak_sent;	/* sequence or RNR NAK sent: quiet until epsn */
	bool	comm_est;	/* COMM_EST raised */
	bool	ack_due;	/* an ACK is owed (coalesced) */
	bool	ack_urgent;	/* ... and asked for: send it now */
	bool	nak_due;	/* a NAK waits behind READ responses */
	u8	nak_syndrome;
	u32	nak_psn;
	bool	run;		/* responses pending: run again soon */
	/* message in progress */
	u64	va;		/* WRITE: next address */
	u32	rkey;
	u32	resid;		/* WRITE: bytes still expected */
	u32	wr_len;		/* WRITE: RETH length (for WRITE with imm) */
	u32	rcv_off;	/* SEND: bytes placed in rwqe */
	bool	rwqe_valid;	/* rwqe is taken and not completed */
	struct dray_hw_rwqe	rwqe;
	/* READ and atomic resources (qp->rdb), used in ring order */
	u8	res_next;	/* slot for the next accepted request */
	u8	res_tx;		/* first slot to look at for responses */
	u8	res_pending;	/* slots with a response still to send */
};

/*
 * Per-QP counters (QUERY_COUNTERS, dev_stats.c): kept from CREATE_QP to
 * DESTROY_QP, through RESET and ERR. Only u64 fields: counter sets add
 * them up word by word.
 */
struct dray_xp_stats {
	u64	tx_pkts;
	u64	tx_bytes;	/* payload */
	u64	tx_drops;	/* no memory, port down, xmit refused */
	u64	rx_pkts;
	u64	rx_bytes;	/* payload */
	u64	rx_icrc_errors;
	u64	rx_drops;	/* wrong state, source, malformed */
	u64	pkey_violations;
	u64	qkey_violations;	/* UD */
	u64	rx_no_wqe;	/* UD: no receive WQE */
	u64	timeouts;	/* local ACK timeouts that went back */
	u64	late_timers;	/* timeouts that fired a timeout late */
	u64	tail_probes;	/* tail probes that went back */
	u64	retx_pkts;	/* request packets sent again */
	u64	out_of_seq;	/* requests ahead of the ePSN */
	u64	dup_requests;
	u64	bad_responses;	/* unexpected or out-of-order responses */
	u64	seq_naks_tx;
	u64	seq_naks_rx;
	u64	rnr_naks_tx;
	u64	rnr_naks_rx;
	u64	inv_req_naks_tx;
	u64	inv_req_naks_rx;
	u64	access_naks_tx;
	u64	access_naks_rx;
	u64	op_naks_tx;
	u64	op_naks_rx;
	u64	req_cqe_errors;
	u64	resp_cqe_errors;
	u64	req_cqe_flushes;
	u64	resp_cqe_flushes;
};

/* Per-QP transport state, in struct dray_hw_qp. */
struct dray_xport_qp {
	bool			err;	/* sent to ERR: do nothing more */
	struct dray_xp_req	req;
	struct dray_xp_resp	resp;
	struct dray_xp_stats	stats;
};

/* QP created (RESET): initialize transport state. */
void dray_xport_init(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * QP destroyed or reset: drop every transport resource (no CQEs); the
 * counters stay.
 */
void dray_xport_reset(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * MODIFY_QP applied attributes (DRAY_QP_ATTR_* in @mask) and possibly a
 * new state (qp->state already updated; @old_state is the previous one).
 */
void dray_xport_modify(struct dray_hw *hw, struct dray_hw_qp *qp, u32 mask,
		       u8 old_state);
/*
 * MODIFY_QP set max_dest_rd_atomic: make @rdb (that many zeroed entries,
 * NULL for none) the QP's responder resources, keeping the newest of the
 * old ones in ring order, and return the old table to free. engine.lock.
 */
struct dray_xp_res *dray_xport_set_rdb(struct dray_hw *hw,
				       struct dray_hw_qp *qp,
				       struct dray_xp_res *rdb, u8 n);
/* The SQ has new WQEs or a window opened: send what may be sent. */
void dray_xport_send(struct dray_hw *hw, struct dray_hw_qp *qp);
/* The QP's deadline passed: retransmit, RNR retry, paced responses. */
void dray_xport_timer(struct dray_hw *hw, struct dray_hw_qp *qp);
/* A received frame (RoCEv2 for one of our GIDs). Consumes @skb. */
void dray_xport_rx(struct dray_hw *hw, struct sk_buff *skb);
/* Are all fetched send WQEs completed (for SQD drained)? */
bool dray_xport_sq_idle(struct dray_hw_qp *qp);
/* The QP went to ERR: give back outstanding WQEs (engine flushes them). */
void dray_xport_error(struct dray_hw *hw, struct dray_hw_qp *qp);
/*
 * Can dray_xport_send() do something now: responses or an ACK to send,
 * packets the windows allow, or new WQEs it may start? Reads the SQ
 * doorbell record (dray_hw_sq_pending()).
 */
bool dray_xport_want_run(struct dray_hw_qp *qp);
/*
 * Does the requester wait for the peer: requests sent and not yet
 * acknowledged? Then a frame (or the retransmit timer) wakes the engine.
 */
bool dray_xport_awaiting(const struct dray_hw_qp *qp);

#endif /* DRAY_DEV_XPORT_H */
