/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray work queue formats: send and receive WQEs, completion entries, and
 * the doorbell records at the head of every queue buffer.
 *
 * Queue buffers (SQ, RQ, CQ) are host memory owned by software (for user
 * queues: memory of the process, pinned by the driver). The device is
 * given the buffer's page list (MTT, see dray_common.h) and never trusts
 * anything it reads there: every index, opcode, length and key is checked.
 *
 * Buffer layout: one 64-byte doorbell record, then 2^log_depth entries of
 * 2^log_stride bytes each. All fields little endian unless noted.
 *
 * Ordering rules (software side):
 *  - SQ/RQ: write the WQE, then a write barrier, then store the new
 *    producer index into the record. Then a full barrier, then read the
 *    UAR's NEED_WAKEUP flag; if set, make one wake-up call.
 *  - SQ/RQ: a WQE slot belongs to the device from the producer index
 *    store until the WQE is completed (its own CQE, or a later signaled
 *    CQE of the same queue); the device may read a send WQE more than
 *    once (retransmission). The doorbell's consumer index only says how
 *    far the device has fetched.
 *  - CQ: a CQE is valid when its phase bit equals dray_ring_phase() of the
 *    consumer index; read barrier after seeing it, before reading the
 *    rest. Store the consumer index after consuming.
 *  - CQ arming: write arm_flags, then a write barrier, then bump
 *    arm_seq; then a full barrier and poll the CQ once more. The device
 *    raises one DRAY_EQE_COMPLETION for the first CQE it writes after
 *    seeing a new arm_seq that matches the arm: any CQE, or with
 *    DRAY_CQ_ARM_SOLICITED a CQE with DRAY_CQE_F_SOLICITED or an error
 *    status.
 * The device writes a CQE's body before its flags byte, and the producer
 * index in the CQ's doorbell record after the CQE.
 */
#ifndef DRAY_QUEUE_H
#define DRAY_QUEUE_H

#include <linux/types.h>

#include "dray_common.h"	/* struct dray_path */

#define DRAY_QUEUE_HDR_SIZE	64

/* Doorbell record of an SQ or RQ (first 64 bytes of its buffer). */
struct dray_wq_db {
	__le32	producer;	/* sw: free-running count of posted WQEs */
	__le32	consumer;	/* hw: free-running count of WQEs fetched */
	__u8	reserved[56];
};

#define DRAY_CQ_ARM_SOLICITED	0x1

/* Doorbell record of a CQ (first 64 bytes of its buffer). */
struct dray_cq_db {
	__le32	consumer;	/* sw: free-running count of CQEs consumed */
	__le32	arm_seq;	/* sw: bumped by each request for an event */
	__le32	arm_flags;	/* sw: DRAY_CQ_ARM_SOLICITED, written first */
	__le32	producer;	/* hw: free-running count of CQEs written */
	__u8	reserved[48];
};

/*
 * Send opcodes (dray_sq_wqe.opcode). RC QPs take all of them, UD and GSI
 * QPs SEND and SEND_IMM only. XRC initiator QPs take those of RC but
 * ATOMIC_WRITE, FLUSH and REG_MR; each of their WQEs names the XRC SRQ of
 * the peer that receives it in xrc_srqn (24 bits), whatever the opcode.
 *
 * SEND_INV is a SEND whose last packet carries u.inv.rkey in an IETH: the
 * responder invalidates that key (an MR of FAST_REG type on its QP's PD)
 * after placing the message, and reports it in the receive CQE
 * (DRAY_CQE_F_INV, inv_rkey).
 *
 * LOCAL_INV and REG_MR are local operations: no SGEs (num_sge 0, no
 * INLINE), no packets. REG_MR makes the FAST_REG MR whose index is in
 * u.reg.key VALID with key u.reg.key (the low byte is software's new
 * variant), rights u.reg.access, the range [iova, iova + length) and the
 * u.reg.n_pages 4 KiB pages whose bus addresses are the le64 entries at
 * u.reg.pbl_addr (entry 0 holds iova, at offset iova % 4096). It runs when
 * the device reaches it in send queue order, so every later WQE of the
 * queue sees the new registration; it needs a QP with DRAY_QP_F_PRIV.
 * LOCAL_INV makes the FAST_REG MR with key u.inv.rkey FREE; it waits until
 * every earlier WQE of the queue completed (IBTA's local invalidate fence,
 * always applied), so no transfer of theirs still uses the MR. Both
 * complete in order like any WQE; one that cannot be done completes with
 * LOC_QP_OP_ERR (vendor_err says why) and the QP goes to ERR.
 *
 * BIND_MW is a local operation too (RC QPs): it binds the window whose
 * index is in u.bind.mw_key, giving it that key, to
 * [u.bind.addr, + u.bind.length) of the MR u.bind.mr_lkey with the remote
 * rights u.bind.access, in send queue order like REG_MR. A type 2 window
 * is bound to the QP that posted the bind (remote accesses must come on
 * it) and must be unbound (FREE); a type 1 window may be rebound any time,
 * and a length of 0 unbinds it. Refused, it completes with MW_BIND_ERR and
 * the QP goes to ERR. LOCAL_INV and a SEND with invalidate make type 2
 * windows FREE as they do FAST_REG MRs.
 */
/*
 * ATOMIC_WRITE (RC, IBTA 1.5) writes the 8 bytes of u.atomic_write.value,
 * in order, to u.atomic_write.remote_addr (8-byte aligned; the R_Key needs
 * remote write) as one store that no other access of the device sees in
 * part. It has no SGEs and no INLINE flag. FLUSH (RC, IBTA 1.5) asks the
 * responder to make what earlier WQEs wrote there visible at the placement
 * type u.flush.type (DRAY_FLUSH_GLOBAL; PERSISTENT is never granted by
 * dray's responder, whose memory is not persistent), over
 * [remote_addr, + length) or, with level DRAY_FLUSH_LEVEL_MR, the whole MR
 * that u.flush.rkey names; no SGEs, no INLINE. Both take an initiator-depth
 * slot like a READ and complete when the responder's empty READ response
 * comes back.
 */
enum dray_wqe_opcode {
	DRAY_WQE_SEND			= 0x00,
	DRAY_WQE_SEND_IMM		= 0x01,
	DRAY_WQE_RDMA_WRITE		= 0x02,
	DRAY_WQE_RDMA_WRITE_IMM		= 0x03,
	DRAY_WQE_RDMA_READ		= 0x04,
	DRAY_WQE_ATOMIC_CMP_SWP		= 0x05,
	DRAY_WQE_ATOMIC_FETCH_ADD	= 0x06,
	DRAY_WQE_SEND_INV		= 0x07,	/* u.inv.rkey for the peer */
	DRAY_WQE_LOCAL_INV		= 0x08,	/* u.inv.rkey, local */
	DRAY_WQE_REG_MR			= 0x09,	/* u.reg; DRAY_QP_F_PRIV only */
	DRAY_WQE_BIND_MW		= 0x0a,	/* u.bind */
	DRAY_WQE_ATOMIC_WRITE		= 0x0b,	/* u.atomic_write */
	DRAY_WQE_FLUSH			= 0x0c,	/* u.flush */
	DRAY_WQE_OPCODE_MAX,
};

/* u.flush.type (IBTA placement type) and u.flush.level (selectivity). */
#define DRAY_FLUSH_GLOBAL	0x1
#define DRAY_FLUSH_PERSISTENT	0x2
#define DRAY_FLUSH_LEVEL_RANGE	0
#define DRAY_FLUSH_LEVEL_MR	1

/* dray_sq_wqe.flags */
#define DRAY_WQE_F_SIGNALED	0x01	/* write a CQE on success */
#define DRAY_WQE_F_SOLICITED	0x02	/* set the solicited event bit */
#define DRAY_WQE_F_FENCE	0x04	/* wait for prior READ/atomics */
#define DRAY_WQE_F_INLINE	0x08	/* payload follows the header */
/*
 * UD and GSI: the destination is the address vector in u.ud_av, not an
 * AH. It is checked as CREATE_AH checks a path, on every send; a bad one
 * completes the WQE with LOC_QP_OP_ERR. (Kernel AHs use it: they must be
 * creatable in atomic context, where no admin command can be waited for.)
 */
#define DRAY_WQE_F_UD_AV	0x10

#define DRAY_SQ_WQE_HDR_SIZE	64
#define DRAY_SGE_SIZE		16

struct dray_sge {
	__le64	addr;
	__le32	length;
	__le32	lkey;
};

/*
 * Send WQE: a 64-byte header, then num_sge SGEs or, with
 * DRAY_WQE_F_INLINE, `length` bytes of payload.
 */
struct dray_sq_wqe {
	__u8	opcode;		/* enum dray_wqe_opcode */
	__u8	flags;		/* DRAY_WQE_F_* */
	__u8	num_sge;
	__u8	reserved0;
	__be32	imm_data;	/* *_IMM: network order, as on the wire */
	__le32	length;		/* inline: payload bytes; else ignored */
	__le32	xrc_srqn;	/* XRC_INI: the peer's XRC SRQ; else 0 */
	union {
		struct {
			__le64	remote_addr;
			__le32	rkey;
			__le32	reserved;
		} rdma;
		struct {
			__le64	remote_addr;
			__le32	rkey;
			__le32	reserved;
			__le64	compare_add;	/* compare, or add for FA */
			__le64	swap;
		} atomic;
		struct {
			__le64	remote_addr;
			__le32	rkey;
			__le32	reserved;
			__u8	value[8];	/* the bytes stored, in order */
		} atomic_write;
		struct {
			__le64	remote_addr;
			__le32	rkey;
			__u8	type;		/* DRAY_FLUSH_GLOBAL/PERSISTENT */
			__u8	level;		/* DRAY_FLUSH_LEVEL_* */
			__u8	reserved[2];
			__le32	length;		/* level RANGE: bytes */
			__le32	reserved2;
		} flush;
		struct {
			__le32	ah;		/* address handle number */
			__le32	remote_qpn;
			__le32	remote_qkey;
			__le32	reserved;
		} ud;
		struct {
			__le32	reserved;	/* where ud.ah is: 0 */
			__le32	remote_qpn;	/* as in ud */
			__le32	remote_qkey;	/* as in ud */
			struct dray_path av;	/* over ud.reserved on */
		} ud_av;
		struct {
			__le32	rkey;		/* the key to invalidate */
			__le32	reserved[3];
		} inv;
		struct {
			__le32	key;		/* the MR's new key */
			__u8	access;		/* DRAY_ACCESS_* */
			__u8	reserved[3];
			__le64	iova;		/* first byte of the MR */
			__le64	length;
			__le64	pbl_addr;	/* bus address of the page list */
			__le32	n_pages;	/* its le64 entries */
			__le32	reserved2;
		} reg;
		struct {
			__le32	mw_key;		/* the window's new key */
			__le32	mr_lkey;	/* the MR it is bound to */
			__le64	addr;		/* in the MR: its first byte */
			__le64	length;		/* 0 (type 1): unbind */
			__u8	access;		/* DRAY_ACCESS_REMOTE_* */
			__u8	flags;		/* DRAY_BIND_F_* */
			__u8	reserved[6];
		} bind;
		__u8	raw[48];
	} u;
};

/* u.bind.flags: remote addresses are offsets into the window (type 2). */
#define DRAY_BIND_F_ZERO_BASED	0x01

/* Receive WQE: a 16-byte header, then num_sge SGEs. */
#define DRAY_RQ_WQE_HDR_SIZE	16

struct dray_rq_wqe {
	__u8	num_sge;
	__u8	reserved[15];
};

/*
 * Shared receive queue (SRQ, CREATE_SRQ): a buffer laid out as an RQ's,
 * the doorbell record (struct dray_wq_db: producer written by software,
 * consumer = WQEs the device took) then 2^log_depth SRQ WQEs of
 * 2^log_stride bytes, each a 16-byte header and num_sge SGEs.
 *
 * Any QP created on the SRQ takes the next WQE when a message needs one,
 * in ring order; the device copies the WQE out of the ring when it takes
 * it and never reads that slot again, so the slot is software's again as
 * soon as the consumer index has passed it. Completions of SRQ WQEs come
 * in any order across QPs: the CQE carries DRAY_CQE_F_SRQ and the WQE's
 * tag in wqe_index (not a ring index), so software names each posted
 * receive by a tag of its own choosing below the SRQ's depth.
 *
 * The device checks the header (num_sge within the limit and the stride,
 * tag below the depth, reserved bytes zero) and every SGE when it places
 * data (lkey, the SRQ's PD, LOCAL_WRITE, range); a WQE that fails
 * completes in error on the QP that took it, which goes to ERR.
 */
#define DRAY_SRQ_WQE_HDR_SIZE	16

struct dray_srq_wqe {
	__u8	num_sge;
	__u8	reserved0[3];
	__le32	tag;		/* < depth; the CQE's wqe_index */
	__u8	reserved[8];
};

/* Completion opcodes (dray_cqe.opcode). */
enum dray_cqe_opcode {
	DRAY_CQE_SEND		= 0x00,
	DRAY_CQE_RDMA_WRITE	= 0x01,
	DRAY_CQE_RDMA_READ	= 0x02,
	DRAY_CQE_COMP_SWAP	= 0x03,
	DRAY_CQE_FETCH_ADD	= 0x04,
	DRAY_CQE_LOCAL_INV	= 0x05,
	DRAY_CQE_REG_MR		= 0x06,
	DRAY_CQE_BIND_MW	= 0x07,
	DRAY_CQE_ATOMIC_WRITE	= 0x08,
	DRAY_CQE_FLUSH		= 0x09,
	DRAY_CQE_RECV		= 0x80,
	DRAY_CQE_RECV_RDMA_IMM	= 0x81,
};

/*
 * Completion status (dray_cqe.status). The values are those of IBTA's
 * completion status as numbered by enum ib_wc_status / ibv_wc_status.
 */
enum dray_cqe_status {
	DRAY_CQE_ST_SUCCESS		= 0,
	DRAY_CQE_ST_LOC_LEN_ERR		= 1,
	DRAY_CQE_ST_LOC_QP_OP_ERR	= 2,
	DRAY_CQE_ST_LOC_PROT_ERR	= 4,
	DRAY_CQE_ST_WR_FLUSH_ERR	= 5,
	DRAY_CQE_ST_MW_BIND_ERR		= 6,
	DRAY_CQE_ST_BAD_RESP_ERR	= 7,
	DRAY_CQE_ST_LOC_ACCESS_ERR	= 8,
	DRAY_CQE_ST_REM_INV_REQ_ERR	= 9,
	DRAY_CQE_ST_REM_ACCESS_ERR	= 10,
	DRAY_CQE_ST_REM_OP_ERR		= 11,
	DRAY_CQE_ST_RETRY_EXC_ERR	= 12,
	DRAY_CQE_ST_RNR_RETRY_EXC_ERR	= 13,
	DRAY_CQE_ST_FATAL_ERR		= 19,
	DRAY_CQE_ST_GENERAL_ERR		= 21,
};

/* dray_cqe.flags */
#define DRAY_CQE_F_PHASE	0x01
#define DRAY_CQE_F_IMM		0x02	/* imm_data is valid */
#define DRAY_CQE_F_GRH		0x04	/* UD: a GRH precedes the payload */
#define DRAY_CQE_F_SEND_QUEUE	0x08	/* completes an SQ WQE (else RQ) */
#define DRAY_CQE_F_SOLICITED	0x10	/* the message asked for an event */
#define DRAY_CQE_F_IPV6		0x20	/* UD: the GRH is an IPv6 header */
#define DRAY_CQE_F_INV		0x40	/* SEND with invalidate: inv_rkey */
#define DRAY_CQE_F_SRQ		0x80	/* an SRQ WQE: wqe_index is its tag */

/*
 * dray_cqe.flags2. XRC: a receive of an XRC target QP (qpn) into a WQE of
 * the XRC SRQ whose number is in src_qpn (with DRAY_CQE_F_SRQ: wqe_index
 * is the WQE's tag). The CQE is on that SRQ's CQ.
 */
#define DRAY_CQE_F2_XRC		0x01

#define DRAY_CQE_SIZE		32

struct dray_cqe {
	__le32	qpn;
	__le32	wqe_index;	/* free-running index of the completed WQE */
	__le32	byte_len;
	__be32	imm_data;	/* network order */
	__le32	src_qpn;	/* UD receive */
	__u8	opcode;		/* enum dray_cqe_opcode */
	__u8	status;		/* enum dray_cqe_status */
	__u8	vendor_err;	/* enum dray_vendor_err (dray_verr.h) */
	__u8	reserved0;
	__le32	inv_rkey;	/* DRAY_CQE_F_INV: the key invalidated */
	__u8	reserved1[2];
	__u8	flags2;		/* DRAY_CQE_F2_* */
	__u8	flags;		/* DRAY_CQE_F_*, written last */
};

static_assert(sizeof(struct dray_wq_db) == DRAY_QUEUE_HDR_SIZE,
	      "dray_wq_db size");
static_assert(sizeof(struct dray_cq_db) == DRAY_QUEUE_HDR_SIZE,
	      "dray_cq_db size");
static_assert(sizeof(struct dray_sge) == DRAY_SGE_SIZE, "dray_sge size");
static_assert(sizeof(struct dray_sq_wqe) == DRAY_SQ_WQE_HDR_SIZE,
	      "dray_sq_wqe size");
static_assert(sizeof(struct dray_rq_wqe) == DRAY_RQ_WQE_HDR_SIZE,
	      "dray_rq_wqe size");
static_assert(sizeof(struct dray_srq_wqe) == DRAY_SRQ_WQE_HDR_SIZE,
	      "dray_srq_wqe size");
static_assert(sizeof(struct dray_cqe) == DRAY_CQE_SIZE, "dray_cqe size");

#endif /* DRAY_QUEUE_H */
