// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the RC responder, and the UC responder.
 *
 * Each request packet runs through an explicit state machine (enum
 * resp_state, names in resp_state_name[]): PSN check, opcode sequence,
 * QP access rights, resources (a receive WQE, a responder resource),
 * lengths, memory keys, then execution and acknowledgment, or one of the
 * error exits. The references are to IBTA vol. 1: 9.7 (reliable service),
 * 9.9.3 (responder errors, classes A to D).
 *
 * Responses leave in PSN order. READ responses and atomic ACKs come from
 * the responder resources (max_dest_rd_atomic of them, kept for replay);
 * READ responses are paced, DRAY_XP_BURST packets a call. ACKs are
 * coalesced: one goes out at once when the request asks for it (AckReq)
 * or every DRAY_XP_ACK_EVERY packets, else once per engine pass after the
 * last packet of a message; any ACK or NAK waits for READ responses that
 * precede it.
 *
 * An XRC target QP (annex A14) is an RC responder that belongs to no PD
 * and has no receive queue: every request names, in its XRCETH, an XRC
 * SRQ of the QP's XRC domain (else an invalid request), whose PD checks
 * the request's R_Key and whose WQEs a SEND or WRITE with immediate
 * takes; the completion goes to that SRQ's CQ.
 *
 * UC (9.8) takes the same path without acknowledgments: a PSN other than
 * the ePSN drops the message in progress, and the first packet of a new
 * message is taken whatever its PSN; a request that RC would NAK (invalid
 * request, remote access, no receive WQE) drops its message silently,
 * the ePSN staying put so that the message's later packets are dropped
 * as out of sequence. Errors of the receive WQE itself (its memory, a
 * SEND too long for it) complete it in error and the QP goes to ERR, as
 * on RC but with no NAK.
 */

#include "dev_xport_int.h"

enum resp_state {
	RESP_CHECK_XRC,
	RESP_CHECK_PSN,
	RESP_DUPLICATE,
	RESP_CHECK_OP_SEQ,
	RESP_CHECK_OP_VALID,
	RESP_CHECK_RESOURCE,
	RESP_CHECK_LENGTH,
	RESP_CHECK_RKEY,
	RESP_EXECUTE,
	RESP_INVALIDATE,
	RESP_READ,
	RESP_ATOMIC,
	RESP_ATOMIC_WRITE,
	RESP_FLUSH,
	RESP_COMPLETE,
	RESP_ACKNOWLEDGE,
	RESP_NAK_SEQ,
	RESP_NAK_RNR,
	RESP_ERR_INV_REQ,
	RESP_ERR_ACCESS,
	RESP_ERR_OP,
	RESP_ERR_LENGTH,
	RESP_ERR_INVALIDATE,
	RESP_DROP,
	RESP_DROP_MSG,
	RESP_DONE,
	RESP_NSTATES
};

static const char * const resp_state_name[RESP_NSTATES] = {
	[RESP_CHECK_XRC]	= "CHECK_XRC",
	[RESP_CHECK_PSN]	= "CHECK_PSN",
	[RESP_DUPLICATE]	= "DUPLICATE",
	[RESP_CHECK_OP_SEQ]	= "CHECK_OP_SEQ",
	[RESP_CHECK_OP_VALID]	= "CHECK_OP_VALID",
	[RESP_CHECK_RESOURCE]	= "CHECK_RESOURCE",
	[RESP_CHECK_LENGTH]	= "CHECK_LENGTH",
	[RESP_CHECK_RKEY]	= "CHECK_RKEY",
	[RESP_EXECUTE]		= "EXECUTE",
	[RESP_INVALIDATE]	= "INVALIDATE",
	[RESP_READ]		= "READ",
	[RESP_ATOMIC]		= "ATOMIC",
	[RESP_ATOMIC_WRITE]	= "ATOMIC_WRITE",
	[RESP_FLUSH]		= "FLUSH",
	[RESP_COMPLETE]		= "COMPLETE",
	[RESP_ACKNOWLEDGE]	= "ACKNOWLEDGE",
	[RESP_NAK_SEQ]		= "NAK_SEQ",
	[RESP_NAK_RNR]		= "NAK_RNR",
	[RESP_ERR_INV_REQ]	= "ERR_INV_REQ",
	[RESP_ERR_ACCESS]	= "ERR_ACCESS",
	[RESP_ERR_OP]		= "ERR_OP",
	[RESP_ERR_LENGTH]	= "ERR_LENGTH",
	[RESP_ERR_INVALIDATE]	= "ERR_INVALIDATE",
	[RESP_DROP]		= "DROP",
	[RESP_DROP_MSG]		= "DROP_MSG",
	[RESP_DONE]		= "DONE",
};

/* One request packet on its way through the state machine. */
struct resp_ctx {
	struct dray_hw		*hw;
	struct dray_hw_qp	*qp;
	struct dray_xp_rxpkt	*rx;
	u32			f;	/* DRAY_OPF_* of the opcode */
	u32			pdn;	/* the PD of the memory named */
	struct dray_hw_srq	*srq;	/* XRC: the SRQ the XRCETH names */
	struct dray_xp_res	*res;	/* READ/atomic: its resource */
	struct dray_hw_mr	*mr;	/* WRITE/atomic: the checked MR */
	u64			va;	/* WRITE: where this packet goes */
	u64			mr_va;	/* ... and that address in mr */
	u32			rkey;
	u32			resid;	/* WRITE: bytes expected from here */
	u8			status;	/* ERR_OP: the RQ WQE's status */
	bool			inv;	/* the IETH's rkey was invalidated */
	enum resp_state		state;	/* the state running */
	enum resp_state		from;	/* the state that chose it */
};

typedef enum resp_state (*resp_fn)(struct resp_ctx *c);

/* Requests that take a responder resource and get their answer from it. */
#define RESP_OPF_RES	(DRAY_OPF_READ | DRAY_OPF_ATOMIC | DRAY_OPF_FLUSH | \
			 DRAY_OPF_ATOMIC_WRITE)

/* res_next, res_tx and res_pending are u8. */
static_assert(DRAY_HW_MAX_RD_ATOM <= U8_MAX);

static u32 resp_nres(const struct dray_hw_qp *qp)
{
	return qp->rdb ? qp->max_dest_rd_atomic : 0;
}

/* INIT -> RTR: expect rq_psn, no resource held. */
void dray_xp_resp_start(struct dray_hw_qp *qp)
{
	struct dray_xp_resp *rs = &qp->xp.resp;

	memset(rs, 0, sizeof(*rs));
	if (qp->rdb)
		memset(qp->rdb, 0, resp_nres(qp) * sizeof(*qp->rdb));
	rs->epsn = qp->rq_psn & DRAY_PSN_MASK;
	rs->ack_psn = dray_psn_add(rs->epsn, DRAY_PSN_MASK);
}

/* A NAK to send once the READ responses before it are out. */
static void resp_queue_nak(struct dray_xp_resp *rs, u8 syndrome, u32 psn)
{
	rs->nak_due = true;
	rs->nak_syndrome = syndrome;
	rs->nak_psn = psn;
}

/* UC: forget the message in progress; its receive WQE stays for the next. */
static void resp_uc_abandon(struct dray_xp_resp *rs)
{
	rs->in_msg = false;
	rs->rcv_off = 0;
}

/*
 * Annex A14: an XRC target places a request through the XRC SRQ its
 * XRCETH names, which must be one of the QP's domain (else an invalid
 * request, class C); the PD of that SRQ is the request's. Any other QP:
 * its own PD.
 *
 * The PSN is judged first (9.7.5.1): only the request at ePSN is NAK'd
 * for its XRCETH. One ahead of ePSN gets what any request there gets (a
 * sequence NAK, once); a duplicate naming no SRQ of the domain is
 * dropped (class D), never answered as the original.
 */
static enum resp_state resp_check_xrc(struct resp_ctx *c)
{
	struct dray_hw_qp *qp = c->qp;
	s32 d;

	c->pdn = qp->pdn;
	if (qp->type != DRAY_QPT_XRC_TGT)
		return RESP_CHECK_PSN;
	c->srq = dray_hw_srq_find_xrc(c->hw, c->rx->hdr.xrc_srqn, qp->xrcdn);
	if (c->srq) {
		c->pdn = c->srq->pdn;
		return RESP_CHECK_PSN;
	}
	xp_dbg(c->hw, qp, "XRCETH names SRQ %u, not one of XRC domain %u\n",
	       c->rx->hdr.xrc_srqn, qp->xrcdn);
	d = dray_psn_cmp(c->rx->hdr.psn, qp->xp.resp.epsn);
	if (d < 0)
		return RESP_DROP;
	return d > 0 ? RESP_CHECK_PSN : RESP_ERR_INV_REQ;
}

/*
 * 9.7: PSN == ePSN is new; behind it a duplicate; ahead a sequence error.
 * 9.8 (UC): any other PSN loses the message in progress; a first packet
 * starts the next one there.
 */
static enum resp_state resp_check_psn(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	s32 d = dray_psn_cmp(c->rx->hdr.psn, rs->epsn);

	if (dray_xp_uc(c->qp)) {
		if (!d)
			return RESP_CHECK_OP_SEQ;
		c->qp->xp.stats.out_of_seq++;
		resp_uc_abandon(rs);
		if (!(c->f & DRAY_OPF_START))
			return RESP_DROP;
		rs->epsn = c->rx->hdr.psn;
		return RESP_CHECK_OP_SEQ;
	}
	if (d < 0)
		return RESP_DUPLICATE;
	if (d > 0) {
		c->qp->xp.stats.out_of_seq++;
		/* Once NAK'd, new requests are ignored until ePSN comes. */
		return rs->nak_sent ? RESP_DROP : RESP_NAK_SEQ;
	}
	rs->nak_sent = false;
	return RESP_CHECK_OP_SEQ;
}

/*
 * 9.7: the opcode must continue the message in progress (middle or last
 * of the same kind) or start a new one.
 */
static enum resp_state resp_check_op_seq(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	u32 prev = dray_opcodes[rs->last_op].flags;
	u32 kind = DRAY_OPF_SEND | DRAY_OPF_WRITE;

	/* UC: the message in progress lost its last packet. */
	if (rs->in_msg && (c->f & DRAY_OPF_START) && dray_xp_uc(c->qp))
		resp_uc_abandon(rs);
	if (rs->in_msg) {
		if ((c->f & DRAY_OPF_START) || (c->f & kind) != (prev & kind))
			return RESP_ERR_INV_REQ;
	} else if (!(c->f & DRAY_OPF_START)) {
		return RESP_ERR_INV_REQ;
	}
	return RESP_CHECK_OP_VALID;
}

/*
 * The QP must allow the remote operation (its DRAY_ACCESS_REMOTE_*). An
 * operation the QP is not enabled for is an unsupported opcode to the
 * responder, so an Invalid Request NAK (9.9.3, class C), unlike an R_Key
 * that does not allow it (remote access error, below).
 */
static enum resp_state resp_check_op_valid(struct resp_ctx *c)
{
	u8 access = c->qp->access;

	if (((c->f & (DRAY_OPF_WRITE | DRAY_OPF_ATOMIC_WRITE)) &&
	     !(access & DRAY_ACCESS_REMOTE_WRITE)) ||
	    ((c->f & DRAY_OPF_READ) && !(access & DRAY_ACCESS_REMOTE_READ)) ||
	    ((c->f & DRAY_OPF_ATOMIC) &&
	     !(access & DRAY_ACCESS_REMOTE_ATOMIC)))
		return RESP_ERR_INV_REQ;
	return RESP_CHECK_RESOURCE;
}

/*
 * SEND (first packet) and WRITE with immediate (last packet) consume a
 * receive WQE: none means an RNR NAK. READ and atomics take a
 * responder resource: a requester exceeding max_dest_rd_atomic makes an
 * invalid request.
 */
static enum resp_state resp_check_resource(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	int ret;

	if (c->f & RESP_OPF_RES) {
		u32 n = resp_nres(c->qp);

		if (!n)
			return RESP_ERR_INV_REQ;
		c->res = &c->qp->rdb[rs->res_next % n];
		if (c->res->pending)
			return RESP_ERR_INV_REQ;
		return RESP_CHECK_LENGTH;
	}
	/* XRC: a SEND goes on in the SRQ whose WQE it took. */
	if (rs->rwqe_valid && c->srq &&
	    (c->qp->xrc_srqn != c->srq->srqn ||
	     c->qp->xrc_serial != c->srq->serial))
		return RESP_ERR_INV_REQ;
	if (((c->f & DRAY_OPF_SEND) && (c->f & DRAY_OPF_START)) ||
	    ((c->f & DRAY_OPF_WRITE) && (c->f & DRAY_OPF_IMM))) {
		if (rs->rwqe_valid)
			return RESP_CHECK_LENGTH;
		if (c->srq)
			ret = dray_hw_rq_fetch_xrc(c->hw, c->qp, c->srq,
						   &rs->rwqe);
		else
			ret = dray_hw_rq_fetch(c->hw, c->qp, &rs->rwqe);
		if (ret == -ENOENT)
			return RESP_NAK_RNR;
		if (ret) {
			/*
			 * Class A: a malformed receive WQE (or an SRQ in
			 * error, -EIO: none taken). The malformed WQE was
			 * taken: it completes with the error, naming its
			 * index (its tag on an SRQ), not with a flush.
			 */
			c->status = DRAY_CQE_ST_LOC_QP_OP_ERR;
			if (ret == -EINVAL)
				rs->rwqe_valid = true;
			return RESP_ERR_OP;
		}
		rs->rwqe_valid = true;
		rs->rcv_off = 0;
	}
	return RESP_CHECK_LENGTH;
}

/*
 * Payload lengths: first and middle packets carry exactly the path MTU,
 * last and only packets at most that; a WRITE carries exactly its RETH
 * length, a SEND must fit the receive WQE (else a local length error at
 * the responder). Violations are class C invalid requests.
 */
static enum resp_state resp_check_length(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	const struct dray_pkt *h = &c->rx->hdr;
	u32 mtu = dray_xp_mtu(c->qp);
	u32 len = c->rx->pay_len;

	if ((c->f & DRAY_OPF_PAYLOAD) &&
	    (len > mtu || (!(c->f & DRAY_OPF_END) && len != mtu)))
		return RESP_ERR_INV_REQ;

	if (c->f & DRAY_OPF_WRITE) {
		if (c->f & DRAY_OPF_START) {
			if (h->dma_len > DRAY_HW_MAX_MSG)
				return RESP_ERR_INV_REQ;
			c->va = h->va;
			c->rkey = h->rkey;
			c->resid = h->dma_len;
		} else {
			c->va = rs->va;
			c->rkey = rs->rkey;
			c->resid = rs->resid;
		}
		if (len > c->resid ||
		    ((c->f & DRAY_OPF_END) && len != c->resid))
			return RESP_ERR_INV_REQ;
	} else if (c->f & DRAY_OPF_SEND) {
		if (rs->rcv_off + len > rs->rwqe.length)
			return RESP_ERR_LENGTH;
	} else if (c->f & DRAY_OPF_READ) {
		if (h->dma_len > DRAY_HW_MAX_MSG)
			return RESP_ERR_INV_REQ;
	} else if (c->f & DRAY_OPF_ATOMIC_WRITE) {
		/* Exactly the 8 bytes it writes (IBTA 1.5 oA19-28). */
		if (h->dma_len != sizeof(u64) || len != sizeof(u64) || h->pad)
			return RESP_ERR_INV_REQ;
	} else if (c->f & DRAY_OPF_FLUSH) {
		if (!dray_hw_flush_args_ok(h->flush_type, h->flush_level))
			return RESP_ERR_INV_REQ;
	}
	return RESP_CHECK_RKEY;
}

/*
 * The 8-byte word an atomic or ATOMIC_WRITE names: aligned (an invalid
 * request otherwise), under an R_Key with @access over it.
 */
static enum resp_state resp_check_word(struct resp_ctx *c, u8 access,
				       enum resp_state next)
{
	const struct dray_pkt *h = &c->rx->hdr;
	u64 va = h->va;

	if (va & (sizeof(u64) - 1))
		return RESP_ERR_INV_REQ;
	if (dray_hw_rkey_check(c->hw, h->rkey, c->pdn, c->qp, access, &va,
			       sizeof(u64), &c->mr))
		return RESP_ERR_ACCESS;
	/* A window keeps 8-byte alignment only if its base has it. */
	if (va & (sizeof(u64) - 1))
		return RESP_ERR_INV_REQ;
	c->mr_va = va;
	return next;
}

/*
 * R_Key (an MR's or a memory window's), PD, access right and range
 * (class C remote access error); the whole RDMA range at its first
 * packet, each later packet again (the MR may have gone in between).
 * Atomics must be 8-byte aligned (an invalid request otherwise).
 */
static enum resp_state resp_check_rkey(struct resp_ctx *c)
{
	struct dray_hw_qp *qp = c->qp;
	const struct dray_pkt *h = &c->rx->hdr;
	u64 va = c->va;
	u32 len;

	if (c->f & DRAY_OPF_WRITE) {
		len = (c->f & DRAY_OPF_START) ? c->resid : c->rx->pay_len;
		if (len && dray_hw_rkey_check(c->hw, c->rkey, c->pdn, qp,
					      DRAY_ACCESS_REMOTE_WRITE, &va,
					      len, &c->mr))
			return RESP_ERR_ACCESS;
		c->mr_va = va;
		return RESP_EXECUTE;
	}
	if (c->f & DRAY_OPF_READ) {
		va = h->va;
		if (h->dma_len && dray_hw_rkey_check(c->hw, h->rkey, c->pdn,
						     qp, DRAY_ACCESS_REMOTE_READ,
						     &va, h->dma_len, &c->mr))
			return RESP_ERR_ACCESS;
		return RESP_READ;
	}
	if (c->f & DRAY_OPF_ATOMIC)
		return resp_check_word(c, DRAY_ACCESS_REMOTE_ATOMIC,
				       RESP_ATOMIC);
	if (c->f & DRAY_OPF_ATOMIC_WRITE)
		return resp_check_word(c, DRAY_ACCESS_REMOTE_WRITE,
				       RESP_ATOMIC_WRITE);
	if (c->f & DRAY_OPF_FLUSH) {
		/*
		 * The MR must allow the placement type: no memory of dray's
		 * is persistent, so no MR allows PERSISTENT. Level MR names
		 * the whole MR: no range. Windows carry no flush right.
		 */
		if (h->flush_type != DRAY_FLUSH_GLOBAL)
			return RESP_ERR_ACCESS;
		va = h->va;
		len = h->flush_level == DRAY_FLUSH_LEVEL_MR ? 0 : h->dma_len;
		if (dray_hw_rkey_check(c->hw, h->rkey, c->pdn, qp,
				       DRAY_ACCESS_FLUSH_GLOBAL, &va, len,
				       &c->mr))
			return RESP_ERR_ACCESS;
		return RESP_FLUSH;
	}
	return RESP_EXECUTE;
}

/* Place SEND payload into the receive WQE, WRITE payload into the MR. */
static enum resp_state resp_execute(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	struct dray_xp_rxpkt *rx = c->rx;
	u8 st;

	if (c->f & DRAY_OPF_SEND) {
		st = dray_hw_sge_scatter(c->hw, rs->rwqe.pdn, rs->rwqe.sge,
					 rs->rwqe.num_sge, rs->rcv_off, rx->skb,
					 rx->pay_off, NULL, rx->pay_len);
		if (st == DRAY_CQE_ST_LOC_LEN_ERR)
			return RESP_ERR_LENGTH;
		if (st) {
			/* Class A: the receive WQE's memory is refused. */
			c->status = st;
			return RESP_ERR_OP;
		}
		rs->rcv_off += rx->pay_len;
	} else {
		if (rx->pay_len &&
		    dray_hw_mr_copy_in(c->mr, c->mr_va, rx->skb, rx->pay_off,
				       NULL, rx->pay_len))
			return RESP_ERR_ACCESS;
		if (c->f & DRAY_OPF_START) {
			rs->rkey = c->rkey;
			rs->wr_len = c->resid;
		}
		rs->va = c->va + rx->pay_len;
		rs->resid = c->resid - rx->pay_len;
	}
	if (!(c->f & DRAY_OPF_END))
		return RESP_ACKNOWLEDGE;
	return (c->f & DRAY_OPF_IETH) ? RESP_INVALIDATE : RESP_COMPLETE;
}

/*
 * SEND with invalidate, its message placed: invalidate the IETH's R_Key,
 * which must name a FAST_REG MR on the QP's PD with its current key.
 * Refused, the message fails (ERR_INVALIDATE).
 */
static enum resp_state resp_invalidate(struct resp_ctx *c)
{
	u32 rkey = c->rx->hdr.rkey;
	u8 verr;

	verr = dray_hw_key_invalidate(c->hw, c->pdn, c->qp, rkey, true);
	if (verr) {
		xp_dbg(c->hw, c->qp, "remote invalidation of %#x refused, detail %#x\n",
		       rkey, verr);
		return RESP_ERR_INVALIDATE;
	}
	c->inv = true;
	return RESP_COMPLETE;
}

/*
 * Take the responder resource chosen for a READ, an atomic, an
 * ATOMIC_WRITE or a FLUSH of @npkts PSNs: it holds the request for its
 * responses and their replay; MSN counts the request now (C9-148).
 */
static struct dray_xp_res *resp_res_take(struct resp_ctx *c, u8 type,
					 u32 npkts)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	const struct dray_pkt *h = &c->rx->hdr;
	struct dray_xp_res *r = c->res;

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->opcode = h->opcode;
	r->psn = h->psn;
	r->last_psn = dray_psn_add(h->psn, npkts - 1);
	r->va = h->va;
	r->rkey = h->rkey;
	r->pdn = c->pdn;
	r->tx_psn = h->psn;
	r->pending = true;
	rs->res_pending++;
	rs->res_next = (rs->res_next + 1) % resp_nres(c->qp);
	rs->epsn = dray_psn_add(h->psn, npkts);
	rs->msn = (rs->msn + 1) & DRAY_AETH_MSN_MASK;
	rs->last_op = h->opcode;
	rs->in_msg = false;
	return r;
}

/* A READ is accepted; its responses go paced. */
static enum resp_state resp_read(struct resp_ctx *c)
{
	const struct dray_pkt *h = &c->rx->hdr;
	struct dray_xp_res *r;

	r = resp_res_take(c, DRAY_XP_RES_READ,
			  dray_wire_npkts(h->dma_len, dray_xp_mtu(c->qp)));
	r->length = h->dma_len;
	r->tx_va = h->va;
	r->tx_len = h->dma_len;
	return RESP_DONE;
}

/* Execute an atomic once; its result stays in the resource for replay. */
static enum resp_state resp_atomic(struct resp_ctx *c)
{
	const struct dray_pkt *h = &c->rx->hdr;
	bool cmp_swap = dray_wire_op(h->opcode) == DRAY_OP_CMP_SWAP;
	struct dray_xp_res *r;

	r = resp_res_take(c, DRAY_XP_RES_ATOMIC, 1);
	r->swap_add = h->swap_add;
	r->compare = h->compare;
	r->orig = dray_hw_mr_atomic(c->mr, c->mr_va, cmp_swap,
				    cmp_swap ? h->compare : h->swap_add,
				    h->swap_add);
	return RESP_DONE;
}

/*
 * ATOMIC_WRITE and FLUSH, executed: their answer is an RDMA READ response
 * Only with no payload (IBTA 1.5), kept in a resource of length 0 so that
 * a duplicate gets it again without a second execution.
 */
static enum resp_state resp_empty_read_res(struct resp_ctx *c)
{
	resp_res_take(c, DRAY_XP_RES_READ, 1);
	return RESP_DONE;
}

/* Store the 8 bytes as one access (dray_hw_mr_atomic_write()). */
static enum resp_state resp_atomic_write(struct resp_ctx *c)
{
	u8 value[sizeof(u64)];

	if (skb_copy_bits(c->rx->skb, c->rx->pay_off, value, sizeof(value)))
		return RESP_ERR_INV_REQ;
	dray_hw_mr_atomic_write(c->mr, c->mr_va, value);
	return resp_empty_read_res(c);
}

/*
 * Everything earlier requests wrote is in host memory already (they are
 * placed as they arrive, in PSN order); the barrier orders those stores
 * before the response that tells the requester so.
 */
static enum resp_state resp_flush(struct resp_ctx *c)
{
	/* Earlier placements before the response that reports them. */
	smp_mb();
	return resp_empty_read_res(c);
}

/* The last packet of a message: complete the receive WQE, count it. */
static enum resp_state resp_complete(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	const struct dray_pkt *h = &c->rx->hdr;
	struct dray_cqe cqe = {};

	if (rs->rwqe_valid) {
		if (c->f & DRAY_OPF_SEND) {
			cqe.opcode = DRAY_CQE_RECV;
			cqe.byte_len = cpu_to_le32(rs->rcv_off);
		} else {
			cqe.opcode = DRAY_CQE_RECV_RDMA_IMM;
			cqe.byte_len = cpu_to_le32(rs->wr_len);
		}
		if (c->f & DRAY_OPF_IMM) {
			cqe.imm_data = h->imm;
			cqe.flags |= DRAY_CQE_F_IMM;
		}
		if (h->se)
			cqe.flags |= DRAY_CQE_F_SOLICITED;
		if (c->inv) {
			cqe.flags |= DRAY_CQE_F_INV;
			cqe.inv_rkey = cpu_to_le32(h->rkey);
		}
		cqe.qpn = cpu_to_le32(c->qp->qpn);
		cqe.wqe_index = cpu_to_le32(rs->rwqe.index);
		cqe.status = DRAY_CQE_ST_SUCCESS;
		rs->rwqe_valid = false;
		dray_hw_rq_complete(c->hw, c->qp, &rs->rwqe, &cqe);
	}
	rs->msn = (rs->msn + 1) & DRAY_AETH_MSN_MASK;
	return RESP_ACKNOWLEDGE;
}

/*
 * The packet is done: ePSN moves on. ACK at once if asked (AckReq) or
 * after DRAY_XP_ACK_EVERY packets; at the end of a message, before this
 * engine pass ends.
 */
static enum resp_state resp_acknowledge(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;
	const struct dray_pkt *h = &c->rx->hdr;

	rs->epsn = dray_psn_add(h->psn, 1);
	rs->last_op = h->opcode;
	rs->in_msg = !(c->f & DRAY_OPF_END);
	if (dray_xp_uc(c->qp))
		return RESP_DONE;
	rs->ack_psn = h->psn;
	rs->unacked++;
	if (h->ackreq || rs->unacked >= DRAY_XP_ACK_EVERY) {
		rs->ack_due = true;
		rs->ack_urgent = true;
	} else if (c->f & DRAY_OPF_END) {
		rs->ack_due = true;
		rs->run = true;
	}
	return RESP_DONE;
}

struct dray_xp_res *dray_xp_resp_set_rdb(struct dray_hw_qp *qp,
					 struct dray_xp_res *rdb, u8 n)
{
	struct dray_xp_resp *rs = &qp->xp.resp;
	struct dray_xp_res *old = qp->rdb;
	u32 oldn = resp_nres(qp), keep = min_t(u32, oldn, n);
	u32 i, first = oldn ? (rs->res_next + oldn - keep) % oldn : 0;
	u8 tx = 0;

	/*
	 * The oldest resource is the one res_next would take next: copy the
	 * @keep newest, oldest first. One dropped while its response was
	 * still due (a shrink below the requests in flight) is never
	 * answered: its requester retries and ends in a retry error.
	 */
	rs->res_pending = 0;
	for (i = 0; i < keep; i++) {
		u32 slot = (first + i) % oldn;

		rdb[i] = old[slot];
		if (slot == rs->res_tx)
			tx = i;
		rs->res_pending += rdb[i].pending;
	}
	rs->res_next = n ? keep % n : 0;
	rs->res_tx = tx;
	qp->rdb = n ? rdb : NULL;
	qp->max_dest_rd_atomic = n;
	return old;
}

/* The resource a duplicate READ or atomic with @psn was accepted as. */
static struct dray_xp_res *resp_find_res(struct dray_hw_qp *qp, u32 psn)
{
	u32 i, n = resp_nres(qp);

	for (i = 0; i < n; i++) {
		struct dray_xp_res *r = &qp->rdb[i];

		if (r->type != DRAY_XP_RES_FREE &&
		    dray_psn_cmp(psn, r->psn) >= 0 &&
		    dray_psn_cmp(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/*
 * Answer @r again, and only it: the requester goes back N and asks again
 * for every later READ and atomic it still needs.
 */
static void resp_replay(struct dray_hw_qp *qp, struct dray_xp_res *r)
{
	struct dray_xp_resp *rs = &qp->xp.resp;
	u32 i, n = resp_nres(qp);

	for (i = 0; i < n; i++)
		qp->rdb[i].pending = false;
	r->pending = true;
	rs->res_pending = 1;
	rs->res_tx = r - qp->rdb;
}

/*
 * 9.7: a duplicate SEND or WRITE is ACK'd again (C9-105), naming the
 * newest PSN an ACK may name; a duplicate READ is answered again from
 * memory for the range it asks, if within the original; a duplicate
 * atomic gets the saved result, a duplicate ATOMIC_WRITE or FLUSH its
 * empty response, never a second execution. Anything else is silently
 * dropped (class D).
 */
static enum resp_state resp_duplicate(struct resp_ctx *c)
{
	struct dray_hw_qp *qp = c->qp;
	struct dray_xp_resp *rs = &qp->xp.resp;
	const struct dray_pkt *h = &c->rx->hdr;
	struct dray_xp_res *r;

	qp->xp.stats.dup_requests++;
	if (c->f & (DRAY_OPF_SEND | DRAY_OPF_WRITE)) {
		rs->ack_due = true;
		if (h->ackreq)
			rs->ack_urgent = true;
		else
			rs->run = true;
		return RESP_DONE;
	}

	r = resp_find_res(qp, h->psn);
	if (!r)
		return RESP_DROP;
	if (c->f & DRAY_OPF_READ) {
		/*
		 * A requester asks again from its oldest missing response
		 * on, never from further back: an older request is a stale
		 * copy (reordered or duplicated on the way).
		 */
		if (dray_psn_cmp(h->psn, r->tx_psn) < 0)
			return RESP_DROP;
		/*
		 * Still answering it, and the packet asked from is yet to
		 * be sent (a tail probe asks while the responses are slow):
		 * it comes anyway, and starting there would skip those
		 * before it.
		 */
		if (r->pending &&
		    dray_psn_cmp(h->psn, dray_psn_add(r->tx_psn, r->tx_pkt)) >= 0)
			return RESP_DROP;
		if (r->type != DRAY_XP_RES_READ ||
		    dray_wire_op(r->opcode) != DRAY_OP_READ_REQUEST ||
		    h->rkey != r->rkey || r->pdn != c->pdn ||
		    h->va < r->va || h->va - r->va > r->length ||
		    h->dma_len > r->length - (h->va - r->va))
			return RESP_DROP;
		/*
		 * It asks from one of the original's response packets on:
		 * its address must be that packet's, so that its responses
		 * keep the original's PSNs and end by its last one.
		 */
		if (h->va - r->va != (u64)dray_xp_span(r->psn, h->psn) *
				     dray_xp_mtu(qp))
			return RESP_DROP;
		u64 va = h->va;

		if (h->dma_len && dray_hw_rkey_check(c->hw, h->rkey, c->pdn,
						     qp, DRAY_ACCESS_REMOTE_READ,
						     &va, h->dma_len, &c->mr))
			return RESP_ERR_ACCESS;
		r->tx_psn = h->psn;
		r->tx_va = h->va;
		r->tx_len = h->dma_len;
		r->tx_pkt = 0;
	} else if (c->f & (DRAY_OPF_FLUSH | DRAY_OPF_ATOMIC_WRITE)) {
		/* The same request: its empty response again, no new write. */
		if (r->type != DRAY_XP_RES_READ || r->psn != h->psn ||
		    r->opcode != h->opcode || r->va != h->va ||
		    r->rkey != h->rkey)
			return RESP_DROP;
		r->tx_pkt = 0;
	} else if (r->type != DRAY_XP_RES_ATOMIC || r->psn != h->psn ||
		   r->opcode != h->opcode || r->va != h->va ||
		   r->rkey != h->rkey || r->swap_add != h->swap_add ||
		   r->compare != h->compare) {
		return RESP_DROP;
	}
	resp_replay(qp, r);
	return RESP_DONE;
}

/* Class B: NAK the sequence error, once until ePSN arrives. */
static enum resp_state resp_nak_seq(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;

	rs->nak_sent = true;
	resp_queue_nak(rs, DRAY_AETH_NAK | DRAY_NAK_PSN_SEQ, rs->epsn);
	return RESP_DONE;
}

/* No receive WQE: RNR NAK with the QP's min_rnr_timer; ePSN stays. */
static enum resp_state resp_nak_rnr(struct resp_ctx *c)
{
	struct dray_xp_resp *rs = &c->qp->xp.resp;

	rs->nak_sent = true;
	resp_queue_nak(rs, DRAY_AETH_RNR_NAK |
		       (c->qp->min_rnr_timer & DRAY_AETH_VALUE_MASK),
		       c->rx->hdr.psn);
	return RESP_DONE;
}

/*
 * Classes A and C: NAK the request now, complete a receive WQE in use
 * with @status, raise @event and move the QP to ERR.
 */
static enum resp_state resp_fatal(struct resp_ctx *c, u8 nak, u8 status,
				  u8 event, u8 verr)
{
	struct dray_hw_qp *qp = c->qp;
	struct dray_xp_resp *rs = &qp->xp.resp;

	xp_dbg(c->hw, qp, "responder %s from %s: NAK %u, %s PSN %#x\n",
	       resp_state_name[c->state], resp_state_name[c->from], nak,
	       dray_opcodes[c->rx->hdr.opcode].name, c->rx->hdr.psn);
	if (!dray_xp_uc(qp))
		dray_xp_send_ack(c->hw, qp, DRAY_AETH_NAK | nak,
				 c->rx->hdr.psn);
	if (rs->rwqe_valid) {
		struct dray_cqe cqe = {
			.qpn = cpu_to_le32(qp->qpn),
			.wqe_index = cpu_to_le32(rs->rwqe.index),
			.opcode = DRAY_CQE_RECV,
			.status = status,
			.vendor_err = verr,
		};

		rs->rwqe_valid = false;
		dray_hw_rq_complete(c->hw, qp, &rs->rwqe, &cqe);
	}
	qp->xp.err = true;
	dray_hw_qp_error(c->hw, qp, event, verr);
	return RESP_DONE;
}

/* Class C: invalid request (opcode, sequence, length, resources). */
static enum resp_state resp_err_inv_req(struct resp_ctx *c)
{
	return resp_fatal(c, DRAY_NAK_INV_REQ, DRAY_CQE_ST_REM_INV_REQ_ERR,
			  DRAY_EQE_QP_REQ_ERR, DRAY_VERR_RESP_INV_REQ);
}

/* Class C: remote access error (R_Key, PD, rights, range). */
static enum resp_state resp_err_access(struct resp_ctx *c)
{
	return resp_fatal(c, DRAY_NAK_REM_ACCESS, DRAY_CQE_ST_REM_ACCESS_ERR,
			  DRAY_EQE_QP_ACCESS_ERR, DRAY_VERR_RESP_ACCESS);
}

/* Class A: the receive WQE failed (its memory, or the WQE itself). */
static enum resp_state resp_err_op(struct resp_ctx *c)
{
	return resp_fatal(c, DRAY_NAK_REM_OP, c->status,
			  0, DRAY_VERR_RESP_LOCAL);
}

/* The message does not fit the receive WQE: local length error. */
static enum resp_state resp_err_length(struct resp_ctx *c)
{
	return resp_fatal(c, DRAY_NAK_INV_REQ, DRAY_CQE_ST_LOC_LEN_ERR,
			  0, DRAY_VERR_RESP_LENGTH);
}

/*
 * The R_Key a SEND with invalidate named may not be invalidated (not a
 * FAST_REG MR of the QP's PD, or not its current key): the requester
 * named a key it has no right to, a remote access error to it; the
 * receive WQE completes with Remote Invalid Request and the QP errs.
 */
static enum resp_state resp_err_invalidate(struct resp_ctx *c)
{
	return resp_fatal(c, DRAY_NAK_REM_ACCESS, DRAY_CQE_ST_REM_INV_REQ_ERR,
			  DRAY_EQE_QP_ACCESS_ERR, DRAY_VERR_RESP_INVALIDATE);
}

/* Class D: silently dropped. */
static enum resp_state resp_drop(struct resp_ctx *c)
{
	c->qp->xp.stats.rx_drops++;
	return RESP_DONE;
}

/*
 * UC: what RC would NAK drops the message, silently (ePSN stays: the
 * rest of the message is out of sequence). No receive WQE is counted as
 * such, like a UD frame without one.
 */
static enum resp_state resp_drop_msg(struct resp_ctx *c)
{
	struct dray_hw_qp *qp = c->qp;

	xp_dbg(c->hw, qp, "UC message dropped from %s: %s PSN %#x\n",
	       resp_state_name[c->from], dray_opcodes[c->rx->hdr.opcode].name,
	       c->rx->hdr.psn);
	resp_uc_abandon(&qp->xp.resp);
	if (c->from == RESP_CHECK_RESOURCE)
		qp->xp.stats.rx_no_wqe++;
	else
		qp->xp.stats.rx_drops++;
	return RESP_DONE;
}

/* UC: the states that would NAK drop the message instead. */
static enum resp_state resp_uc_state(enum resp_state s)
{
	switch (s) {
	case RESP_NAK_RNR:
	case RESP_ERR_INV_REQ:
	case RESP_ERR_ACCESS:
		return RESP_DROP_MSG;
	default:
		return s;
	}
}

static const resp_fn resp_handler[RESP_NSTATES] = {
	[RESP_CHECK_XRC]	= resp_check_xrc,
	[RESP_CHECK_PSN]	= resp_check_psn,
	[RESP_DUPLICATE]	= resp_duplicate,
	[RESP_CHECK_OP_SEQ]	= resp_check_op_seq,
	[RESP_CHECK_OP_VALID]	= resp_check_op_valid,
	[RESP_CHECK_RESOURCE]	= resp_check_resource,
	[RESP_CHECK_LENGTH]	= resp_check_length,
	[RESP_CHECK_RKEY]	= resp_check_rkey,
	[RESP_EXECUTE]		= resp_execute,
	[RESP_INVALIDATE]	= resp_invalidate,
	[RESP_READ]		= resp_read,
	[RESP_ATOMIC]		= resp_atomic,
	[RESP_ATOMIC_WRITE]	= resp_atomic_write,
	[RESP_FLUSH]		= resp_flush,
	[RESP_COMPLETE]		= resp_complete,
	[RESP_ACKNOWLEDGE]	= resp_acknowledge,
	[RESP_NAK_SEQ]		= resp_nak_seq,
	[RESP_NAK_RNR]		= resp_nak_rnr,
	[RESP_ERR_INV_REQ]	= resp_err_inv_req,
	[RESP_ERR_ACCESS]	= resp_err_access,
	[RESP_ERR_OP]		= resp_err_op,
	[RESP_ERR_LENGTH]	= resp_err_length,
	[RESP_ERR_INVALIDATE]	= resp_err_invalidate,
	[RESP_DROP]		= resp_drop,
	[RESP_DROP_MSG]		= resp_drop_msg,
};

/* @r's response is out. */
static void resp_res_sent(struct dray_xp_resp *rs, struct dray_xp_res *r)
{
	r->pending = false;
	rs->res_pending--;
}

/* Send the next READ response packet of @r: 0, -ENOMEM or -EACCES. */
static int resp_send_read(struct dray_hw *hw, struct dray_hw_qp *qp,
			  struct dray_xp_res *r)
{
	u32 mtu = dray_xp_mtu(qp);
	u32 npkts = dray_wire_npkts(r->tx_len, mtu);
	u32 pos = dray_wire_pos(r->tx_pkt, npkts);
	u32 len = dray_wire_seg_len(r->tx_len, mtu, r->tx_pkt);
	u32 psn = dray_psn_add(r->tx_psn, r->tx_pkt);
	u64 addr = r->tx_va + (u64)r->tx_pkt * mtu;
	struct dray_pkt pkt = {
		.pkey = DRAY_PKEY_DEFAULT,
		.qpn = qp->dest_qpn,
		.psn = psn,
		.syndrome = DRAY_AETH_ACK | DRAY_AETH_CREDITS_INVALID,
		.msn = qp->xp.resp.msn,
	};
	struct dray_hw_mr *mr = NULL;
	struct sk_buff *skb;
	bool zcopy;

	/*
	 * A duplicate READ asked from one of the original's packets on is
	 * answered with the packets the original sent there, opcodes
	 * included: a middle (or the last) comes first, not a first. IBTA
	 * wants a retried READ's responses identical to the original's in
	 * data and PSN (a requester may see both copies), and rxe's
	 * completer, which asks again from its oldest missing packet,
	 * takes nothing but a middle or last in the middle of a READ (it
	 * puts its QP in the error state otherwise).
	 */
	if (psn != r->psn)
		pos &= ~DRAY_OPF_START;
	pkt.opcode = dray_wire_read_resp_opcode(pos);

	/* The MR may have gone since the request: NAK in the response. */
	if (len && dray_hw_rkey_check(hw, r->rkey, r->pdn, qp,
				      DRAY_ACCESS_REMOTE_READ, &addr, len, &mr))
		return -EACCES;
	zcopy = len > DRAY_XP_COPYBREAK &&
		((offset_in_page(addr) + len + PAGE_SIZE - 1) >> PAGE_SHIFT) <
		MAX_SKB_FRAGS;
	skb = dray_xp_skb_alloc(hw, qp, &pkt, len, zcopy);
	if (!skb)
		return -ENOMEM;
	if (len && dray_hw_mr_to_skb(skb, mr, addr, len, zcopy)) {
		kfree_skb(skb);
		return -EACCES;
	}
	dray_xp_xmit(hw, qp, skb);
	r->tx_pkt++;
	if (pos & DRAY_OPF_END)
		resp_res_sent(&qp->xp.resp, r);
	return 0;
}

static void resp_send_atomic_ack(struct dray_hw *hw, struct dray_hw_qp *qp,
				 struct dray_xp_res *r)
{
	struct dray_pkt pkt = {
		.opcode = DRAY_OP_ATOMIC_ACK,
		.pkey = DRAY_PKEY_DEFAULT,
		.qpn = qp->dest_qpn,
		.psn = r->psn,
		.syndrome = DRAY_AETH_ACK | DRAY_AETH_CREDITS_INVALID,
		.msn = qp->xp.resp.msn,
		.orig = r->orig,
	};
	struct sk_buff *skb;

	skb = dray_xp_skb_alloc(hw, qp, &pkt, 0, false);
	if (skb)
		dray_xp_xmit(hw, qp, skb);
	resp_res_sent(&qp->xp.resp, r);	/* a lost one is asked for again */
}

/* The resource to answer next, in PSN order, or NULL. */
static struct dray_xp_res *resp_next(struct dray_hw_qp *qp)
{
	struct dray_xp_resp *rs = &qp->xp.resp;
	u32 i, n = resp_nres(qp);

	if (!rs->res_pending)
		return NULL;
	for (i = 0; i < n; i++) {
		u32 slot = (rs->res_tx + i) % n;

		if (qp->rdb[slot].pending) {
			rs->res_tx = slot;
			return &qp->rdb[slot];
		}
	}
	return NULL;
}

/**
 * dray_xp_resp_run() - send the responder's pending responses
 * @hw: the device
 * @qp: the QP
 * @final: end of a pass: a coalesced ACK goes too
 *
 * READ responses and atomic ACKs first, at most DRAY_XP_BURST packets;
 * then, once none is left, a queued NAK or the ACK owed.
 */
void dray_xp_resp_run(struct dray_hw *hw, struct dray_hw_qp *qp, bool final)
{
	struct dray_xp_resp *rs = &qp->xp.resp;
	u32 budget = DRAY_XP_BURST;
	struct dray_xp_res *r;
	int ret;

	dray_xp_assert_locked(hw);
	if (qp->xp.err)
		return;
	rs->run = false;
	while ((r = resp_next(qp))) {
		if (!budget--) {
			rs->run = true;
			return;
		}
		if (r->type == DRAY_XP_RES_ATOMIC) {
			resp_send_atomic_ack(hw, qp, r);
			continue;
		}
		ret = resp_send_read(hw, qp, r);
		if (ret == -ENOMEM) {
			rs->run = true;
			return;
		}
		if (ret) {
			/* Class C: a NAK takes the response's place. */
			dray_xp_send_ack(hw, qp,
					 DRAY_AETH_NAK | DRAY_NAK_REM_ACCESS,
					 dray_psn_add(r->tx_psn, r->tx_pkt));
			qp->xp.err = true;
			dray_hw_qp_error(hw, qp, DRAY_EQE_QP_ACCESS_ERR,
					 DRAY_VERR_RESP_ACCESS);
			return;
		}
	}

	if (rs->nak_due) {
		dray_xp_send_ack(hw, qp, rs->nak_syndrome, rs->nak_psn);
		rs->nak_due = false;
		rs->ack_due = false;
		rs->ack_urgent = false;
		rs->unacked = 0;
	} else if (rs->ack_due && (rs->ack_urgent || final)) {
		dray_xp_send_ack(hw, qp,
				 DRAY_AETH_ACK | DRAY_AETH_CREDITS_INVALID,
				 rs->ack_psn);
		rs->ack_due = false;
		rs->ack_urgent = false;
		rs->unacked = 0;
	} else if (rs->ack_due) {
		rs->run = true;
	}
}

/**
 * dray_xp_resp_rx() - a request packet for this QP
 * @hw: the device
 * @qp: the QP (RTR, RTS, SQD or SQE)
 * @rx: the packet (validated by dray_xport_rx())
 */
void dray_xp_resp_rx(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_xp_rxpkt *rx)
{
	struct resp_ctx c = {
		.hw = hw,
		.qp = qp,
		.rx = rx,
		.f = rx->flags,
	};
	enum resp_state s = RESP_CHECK_XRC;
	unsigned int steps = 0;

	if (qp->xp.err)
		return;
	/* Communication established: the first packet received in RTR. */
	if (qp->state == DRAY_QPS_RTR && !qp->xp.resp.comm_est) {
		qp->xp.resp.comm_est = true;
		dray_hw_qp_event(hw, qp, DRAY_EQE_COMM_EST);
	}

	/* Every path ends in DONE in fewer steps than there are states. */
	while (s != RESP_DONE && steps++ < RESP_NSTATES) {
		c.from = c.state;
		c.state = s;
		s = resp_handler[s](&c);
		if (dray_xp_uc(qp))
			s = resp_uc_state(s);
	}
	dray_xp_resp_run(hw, qp, false);
}
