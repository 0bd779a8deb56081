// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer targets fuzz_resp and fuzz_comp: the RC transport of the NIC
 * model (drivers/dray/dev/dev_xport.c, dev_resp.c, dev_comp.c, dev_req.c,
 * dev_net.c, with the memory protection of dev_mem.c/dev_mw.c, the data
 * movement of dev_sge.c and the work queues and CQs of dev_wq.c/dev_cq.c)
 * and the receive side of the UD service (dev_ud.c) compiled unmodified
 * in user space against kinc/ (see fuzz_kernel.h).
 *
 * One RC QP in RTS, as CREATE_QP and MODIFY_QP leave it, with its rings
 * and a CQ in harness memory; five MRs and a type 2 memory window backed
 * by pages of their own. The configuration may put the QP on a shared
 * receive queue (dev_srq.c), with a second RC QP on the same SRQ, PD and
 * CQ if asked (CFG_QP2: another connection to the same host, its own
 * peer QP, PSNs and send queue; with CFG_QP2_PD in the other PD, the one
 * of MR_OTHER) and a third (CFG_QP3, of the SRQ's PD), and a UD QP
 * (CFG_UD: UD_QPN, of the SRQ's PD, on the same CQ, with Q_Key UD_QKEY
 * and no send WQE) taking the SRQ's WQEs for the UD SENDs it receives,
 * or make it an XRC target of a domain
 * with an XRC SRQ (its receives and its PD) beside an XRC SRQ of another
 * domain that nothing may take from, with a second XRC target (QPN2) of
 * the same domain on the same XRC SRQ if asked (CFG_XRC2: its own peer
 * QP and PSNs, like QP2's). The fuzz input is a configuration
 * and a sequence of frames from the peer, each handed to dray_xport_rx()
 * with engine.lock held, followed by one engine pass for each QP in turn
 * (doorbells, the timer, dray_xport_send(), the flush in ERR) as
 * dev_engine.c runs it. fuzz_comp (FUZZ_COMP=1) also posts send WQEs to
 * the first QP that the requester sends first, so that the frames can
 * answer them (the completer), and with CFG_SQ2 to the second QP too
 * (the completer of two QPs on one CQ and SRQ at once; the second QP's
 * READs and atomics land QP2_LOCAL_OFF further into MR_RECV, or with
 * CFG_QP2_PD into MR_OTHER, where its other WQEs also send from).
 *
 * Input (all big endian):
 *   config  CFG_BYTES bytes (struct cfg below)
 *   fuzz_comp only: n (1 byte, at most SQ_WQES), then n WQE descriptors
 *           of WQE_DESC bytes (sq_post()) for the first QP; with CFG_SQ2
 *           and CFG_QP2 the same again for the second
 *   frames  repeated: ctl (1 byte, F_*), len (2 bytes), len bytes: the
 *           transport packet from the BTH to the pad (the harness adds
 *           IP/UDP from the QP's path and the ICRC, and points the BTH at
 *           the first QP unless F_KEEP_QPN, or it names another QP of
 *           the input already), or with F_RAW the IP packet as is; an
 *           F_RAW record of length 0 is a command of software instead
 *           (ctl[7:4], CMD_*: DESTROY_MR, LOCAL_INV of the window,
 *           MODIFY_QP to SQD and back, retry counts, to ERR, of the
 *           UD QP if ctl has C_UD (no retry counts: not its attributes),
 *           else of the third QP if C_QP3, else of the second if C_QP2; a
 *           send WQE rewritten while outstanding; an SRQ WQE
 *           rewritten before the device takes it, an SRQ producer index
 *           out of range, the SRQ limit armed, DESTROY_SRQ of the XRC SRQ)
 *
 * Checked after every frame (abort() on violation, besides ASan/UBSan):
 *  - memory: bytes change only in an MR that may be written, inside its
 *    registered range; in the RDMA target MR only inside the range the
 *    packet's R_Key and address name (through the window if its key and
 *    the QP is the window's), and then to the WRITE's payload or the
 *    atomic's result; a frame for no QP changes nothing; the
 *    read-only and source MRs never change, nor the other-PD MR but
 *    through an R_Key of a QP of its PD; a READ response
 *    carries the bytes at its address, with the original response's
 *    opcode at its PSN (a duplicate asked from the middle starts with
 *    a middle), and never ahead of the furthest response its request
 *    has had (a duplicate asking from one not yet sent is dropped);
 *    an MR destroyed is never touched
 *    again (its pages are freed: AddressSanitizer); a frame for
 *    another QP never invalidates the window bound to the first; a
 *    response (READ response, atomic ACK, ACK) writes only into the
 *    local SGEs of the READs and atomics outstanding on the QP it names,
 *    never another QP's;
 *  - R_Keys: the PD they are checked against is the QP's (an XRC
 *    target's, either of them: its SRQ's, for XRC opcodes and XRC
 *    NAKs alike): a new request whose R_Key does not allow
 *    its access there is never carried out (the QP errs, or the frame
 *    is dropped), and a plain one (nothing else wrong with it) gets a
 *    remote access NAK; a key that allows it never gets one;
 *  - transport state, of each QP: PSNs and MSN within 24 bits,
 *    una <= psn <= max_psn with less than 2^23 in flight,
 *    head <= cur <= fetch with at most DRAY_XP_MAX_WQE outstanding,
 *    SQ/RQ indexes ordered, responder resources in range, initiator
 *    depth within max_rd_atomic;
 *  - every transmitted frame: Ethernet, IP and UDP headers valid for the
 *    path, a known RC opcode for the peer of the QP the transport was
 *    running for (a frame to one QP or a pass over it sends nothing for
 *    the other), payload and pad within the path MTU, a correct ICRC,
 *    requests at that QP's requester PSN and responses never ahead of
 *    its responder's ePSN;
 *  - every CQE: one of the QPs, a known opcode and status, each QP's
 *    send completions in its posting order, once each, the WQEs skipped
 *    unsignaled successes (unless the CQ overflowed), a success of a
 *    signaled WQE (or SIG_ALL) with the opcode of the WQE posted to that
 *    QP at that index; each QP's
 *    receive completions in its order, a RECV never longer than its WQE,
 *    a malformed receive WQE the responder took completing with
 *    LOC_QP_OP_ERR, one whose lkeys are good in its queue's PD (the
 *    SRQ's, whatever the QP's) never with LOC_PROT_ERR; on an SRQ each
 *    receive names the tag the WQE had when its QP took it, and an XRC
 *    one its SRQ;
 *  - one QP at a time: a call into the transport for one QP (a frame
 *    naming it, its pass, a command) completes, acknowledges or flushes
 *    no other QP's WQEs, and every CQE it writes names that QP;
 *  - SRQs: around each call into the transport for one QP (a frame, a
 *    pass, a command) only that QP takes, and what the SRQ gave out it
 *    took, once each, the SRQ's next WQEs in the SRQ's order (the QP's
 *    record of the tag it holds is the last one's); at most the depth
 *    outstanding; the consumer index published is the device's; a WQE
 *    taken below an armed limit fires it (an event); with two XRC
 *    targets the same, each receive CQE on the SRQ's CQ naming the
 *    target that took the WQE and the SRQ; the other domain's
 *    XRC SRQ gives out nothing and its CQ gets nothing;
 *  - the UD QP (CFG_UD): only a UD SEND (DETH) to it with its Q_Key takes
 *    a receive WQE, one, the SRQ's next (the SRQ checks above hold with
 *    it as a taker; a UD SEND to an RC QP takes none and changes
 *    nothing); one whose Q_Key is not the QP's (one off, or with bit 31
 *    set: dev_ud.c compares all 32 bits) takes none, writes nothing and
 *    is counted as a drop, a Q_Key violation if nothing else is wrong
 *    with it; one with nothing wrong takes a WQE if the SRQ has one. The
 *    WQE gets the GRH (40 bytes: 20 zero bytes and the IPv4 header, or
 *    the IPv6 header, as received), then the payload, in its SGEs in
 *    order (the last byte aimed at a place is what it holds), each SGE
 *    judged by its lkey in the SRQ's PD; nothing else in memory changes
 *    (after an error: only bytes of the message, in the places valid SGEs
 *    give them). Its CQE: the UD QP, the tag the WQE had, the status the
 *    WQE calls for (malformed: LOC_QP_OP_ERR, shorter than GRH and
 *    payload: LOC_LEN_ERR, a refused SGE: LOC_PROT_ERR); on success RECV,
 *    byte length 40 + payload, the DETH's source QP, the immediate (SEND
 *    Only with Immediate only), the GRH flag and its kind, the solicited
 *    bit. The QP completes each WQE in the call that took it, never sends
 *    (its engine pass runs as the others'), arms no timer, keeps the PSN
 *    MODIFY_QP gave it, and stays in RTS or SQD (RTR with CFG_RTR) unless
 *    in ERR;
 *  - engine.lock held wherever the transport asserts it; after the input,
 *    no sk_buff or fragment page leaked, the MR pages' references
 *    back to one, and every QP unpublished and reset as DESTROY_QP does.
 */
#include "dev.h"
#include "dev_xport_int.h"

#include "xport_env.h"

#ifndef FUZZ_COMP
#define FUZZ_COMP 0
#endif

#define QPN		0x11
#define PEER_QPN	0x22
#define PDN		1
#define OTHER_PDN	2
#define SQ_DEPTH	16
#define SQ_LOG_STRIDE	7	/* 64-byte header + 4 SGEs */
#define RQ_DEPTH	16
#define RQ_LOG_STRIDE	6	/* 16-byte header + 3 SGEs */
#define CQ_DEPTH	64
#define SQ_WQES		12
#define WQE_DESC	10
#define MAX_PAGES	4
#define SRQN		2	/* the QP's SRQ, or its domain's XRC SRQ */
#define OTHER_SRQN	3	/* XRC: the XRC SRQ of another domain */
#define XRCDN		1
#define OTHER_XRCDN	2
#define SRQ_DEPTH	RQ_DEPTH
#define SRQ_LOG_STRIDE	6	/* 16-byte header + 3 SGEs */
#define NR_QP		4
#define QPN2		0x12	/* CFG_QP2: a second RC QP on the SRQ */
#define PEER_QPN2	0x23
#define QP2_PSN_OFF	0x100	/* its PSNs: the configuration's + this */
#define QPN3		0x13	/* CFG_QP3: a third */
#define PEER_QPN3	0x24
#define QP3_PSN_OFF	0x200
#define UD_QPN		0x14	/* CFG_UD: a UD QP on the SRQ */
#define UD_QKEY		0x1b2c3d4e	/* its Q_Key (not a controlled one) */
#define UD_PSN_OFF	0x300	/* its SQ PSN: the configuration's + this */
#define TAKEN_LOG	(2 * CQ_DEPTH)

/* The MRs: what a process would have registered. */
enum { MR_RW, MR_RO, MR_RECV, MR_SRC, MR_OTHER, NR_MR };

struct mr_layout {
	u32	index;
	u32	pdn;
	u8	access;
	u64	iova;		/* + cfg.iova_off for MR_RW */
	u32	length;
};

static const struct mr_layout mr_layout[NR_MR] = {
	[MR_RW] = { 1, PDN, DRAY_ACCESS_LOCAL_WRITE | DRAY_ACCESS_REMOTE,
		    0x10000, 3 * 4096 },
	[MR_RO] = { 2, PDN, DRAY_ACCESS_REMOTE_READ, 0x40000, 2 * 4096 },
	[MR_RECV] = { 3, PDN, DRAY_ACCESS_LOCAL_WRITE, 0x80000, 4 * 4096 },
	[MR_SRC] = { 4, PDN, 0, 0xc0000, 4 * 4096 },
	[MR_OTHER] = { 5, OTHER_PDN, DRAY_ACCESS_LOCAL_WRITE |
		       DRAY_ACCESS_REMOTE, 0x100000, 2 * 4096 },
};

#define KEY(index, variant)	((index) << 8 | (variant))
#define MW_INDEX	6
#define MW_KEY		KEY(MW_INDEX, 0x5a)
#define MW_IOVA		0x7000000ULL
#define MW_LEN		512
#define MW_OFF		1000	/* the window's first byte in MR_RW */

/* Frame control bits. */
#define F_RAW		0x01	/* bytes are the IP packet, unchanged */
#define F_BAD_ICRC	0x02	/* corrupt the ICRC */
#define F_LOOPBACK	0x04	/* PACKET_LOOPBACK: no ICRC check */
#define F_KEEP_QPN	0x08	/* do not point the BTH at the QP */
#define F_TIMER		0x10	/* then: jiffies to the QP's deadline */
#define F_POST_RQ	0x20	/* before: post one more receive WQE */
#define F_NOMEM		0x40	/* allocations fail during this frame */
#define F_LATE		0x80	/* then: jiffies far past the deadline */
/* A command record's ctl[3:1] (F_RAW, length 0): */
#define C_QP2		0x02	/* CMD_SQD..CMD_ERR: to QP2, if there is one */
#define C_QP3		0x04	/* ... to QP3, if there is one (first) */
#define C_UD		0x08	/* ... to the UD QP, if there is one (first) */

/* The configuration: the QP's attributes and the buffers' layout. */
struct cfg {
	u8	flags;		/* CFG_* */
	u8	mtu;		/* % 5 + 1: enum dray_mtu */
	u8	access;		/* the QP's DRAY_ACCESS_REMOTE_* */
	u8	max_dest_rd_atomic;	/* % 129 */
	u8	max_rd_atomic;	/* % 17 */
	u8	retry;		/* [2:0] retry_cnt, [6:4] rnr_retry */
	u8	timeout;	/* [4:0] local ACK timeout */
	u8	min_rnr_timer;	/* [4:0] */
	u8	rq_wqes;	/* receive WQEs posted at the start, % 17 */
	u8	rq_sge;		/* [1:0] SGEs - 1 of each receive WQE;
				 * [7] CFG_QP2, [6] CFG_QP2_PD,
				 * [5] CFG_QP3, [4] CFG_UD,
				 * [3] CFG_XRC2, [2] CFG_SQ2 */
	u8	rq_len[2];	/* bytes of each receive SGE */
	u8	iova_off[2];	/* MR_RW's iova: its offset in the page */
	u8	rq_psn[4];
	u8	sq_psn[4];
};

#define CFG_BYTES	sizeof(struct cfg)
#define CFG_IPV6	0x01	/* the path is IPv6 */
#define CFG_SIG_ALL	0x02	/* DRAY_QP_F_SQ_SIG_ALL */
#define CFG_LAZY_CQ	0x04	/* consume CQEs every 8 frames only */
#define CFG_BAD_RQ_KEY	0x08	/* every 4th receive WQE has a bad lkey */
#define CFG_BAD_RQ_WQE	0x10	/* every 4th receive WQE is malformed */
#define CFG_RTR		0x20	/* the QP stays in RTR (responder only) */
#define CFG_SRQ		0x40	/* the QP receives through an SRQ */
#define CFG_XRC		0x80	/* the QP is an XRC target (fuzz_resp) */
/*
 * cfg.rq_sge bit 7 (zero in every input older than it): with CFG_SRQ and
 * not CFG_XRC, a second RC QP (QPN2) on the same SRQ, PD and CQ.
 */
#define CFG_QP2		0x80
/*
 * cfg.rq_sge bit 6 (zero in every input older than it): with CFG_QP2,
 * the second QP in OTHER_PDN, the PD of MR_OTHER, not the SRQ's. Its
 * receive WQEs are still the SRQ's, checked against the SRQ's PD; the
 * R_Keys of its requests against its own (hw-interface.md, SRQs).
 */
#define CFG_QP2_PD	0x40
/*
 * cfg.rq_sge bit 5 (zero in every input older than it): with CFG_QP2, a
 * third RC QP (QPN3) on the SRQ, of its PD, on the same CQ.
 */
#define CFG_QP3		0x20
/*
 * cfg.rq_sge bit 4 (zero in every input older than it): with CFG_SRQ and
 * not CFG_XRC, a UD QP (UD_QPN, Q_Key UD_QKEY) on the same SRQ, of its
 * PD, on the same CQ, in RTS (in RTR with CFG_RTR) as CREATE_QP and
 * MODIFY_QP leave it; it has no send WQEs. The last of the QPs.
 */
#define CFG_UD		0x10
/*
 * cfg.rq_sge bit 3 (zero in every fuzz_resp input older than it; CFG_XRC
 * means nothing to fuzz_comp): with CFG_XRC, a second XRC target (QPN2)
 * of the same domain, on the same XRC SRQ, with its own peer QP and PSNs
 * (QP2_PSN_OFF further).
 */
#define CFG_XRC2	0x08
/*
 * cfg.rq_sge bit 2 (zero in every input older than it): fuzz_comp with
 * CFG_QP2, a second list of send WQE descriptors after the first, posted
 * to QP2 (sq_post()).
 */
#define CFG_SQ2		0x04

/* A receive WQE a QP took, as the harness posted it. */
struct taken_wqe {
	u32	tag;		/* what its CQE names: the tag, or RQ index */
	u64	len;		/* its capacity */
	bool	bad;		/* malformed: completes with LOC_QP_OP_ERR */
	bool	bad_key;	/* an lkey not valid in its queue's PD */
	/*
	 * The UD QP's: taken by a UD SEND the harness saw it receive
	 * (check_ud_rx()), and what the CQE must say: the status, and on
	 * success the length (GRH and payload), the DETH's source QP, the
	 * immediate, the GRH's kind.
	 */
	bool	ud;
	u8	ud_status;
	bool	ud_imm, ud_ipv6, ud_se;
	u32	ud_len, ud_src_qpn;
	__be32	ud_imm_data;
};

/*
 * A send WQE the harness posted (sq_post()): its opcode and flags, the
 * local memory its SGEs name (MR and offsets), whether software rewrote
 * it since (CMD_REWRITE_SQ).
 */
struct sent_wqe {
	u8	op, flags;
	bool	rewritten;
	u32	nsge;
	int	mr;
	u64	lo[4], hi[4];
};

/*
 * A QP and what the harness keeps of it: its rings and doorbells, the
 * next CQE expected of each queue, and on an SRQ the WQEs it took, by
 * its own receive index (rq.fetched counts them); the send WQEs posted
 * to it, by SQ index.
 */
struct fuzz_qp {
	struct dray_hw_qp	qp;
	u32			peer_qpn;
	struct dray_wq_db	sq_db, rq_db;
	u8			*sq_ring, *rq_ring;
	u32			sq_cqe_next, rq_cqe_next;
	struct taken_wqe	taken[TAKEN_LOG];
	struct sent_wqe		sent[SQ_DEPTH];
	/*
	 * Per responder resource: its request's PSN, and the PSN after
	 * the furthest response sent for it (seen: it has had one in this
	 * input).
	 */
	struct {
		u32	psn, next;
		bool	seen;
	} read_tx[DRAY_HW_MAX_RD_ATOM];
};

static struct dray_hw hw;
static struct net_device ndev = { .name = "fuzz0" };
/*
 * The QPs: QPN, QPN2 with CFG_QP2, QPN3 with CFG_QP3, then the UD QP
 * with CFG_UD (ud); nr_qp of them.
 */
static struct fuzz_qp fqps[NR_QP];
static u32 nr_qp;
static struct fuzz_qp *ud;
/* The QP the transport runs for (a frame it receives, its pass), or NULL. */
static struct fuzz_qp *cur;
static struct dray_hw_cq cq;
static struct dray_hw_mr mrs[NR_MR], mw;
static struct page mr_pages[NR_MR][MAX_PAGES];
static u8 shadow[NR_MR][MAX_PAGES][PAGE_SIZE];
static struct page *mr_page_ptrs[NR_MR][MAX_PAGES];
static bool mr_gone[NR_MR];	/* destroyed (a command record) */
static struct dray_cq_db cq_db;
static struct dray_cqe *cq_ring;
static struct cfg cfg;
static u32 cq_ci, rq_next_len;
static u64 rq_posted_len[RQ_DEPTH];	/* capacity of each receive WQE */
static bool rq_bad[RQ_DEPTH];		/* posted malformed (CFG_BAD_RQ_WQE) */
static bool rq_bad_taken[RQ_DEPTH];	/* ... and taken by the responder */
static bool rq_bad_key[RQ_DEPTH];	/* an SGE keyed with a bad lkey */

/*
 * The SRQ (CFG_SRQ, CFG_XRC) and, for an XRC target, the other domain's
 * XRC SRQ with a CQ of its own. rq_post() posts to the SRQ then, with
 * the per-index bookkeeping above (SRQ_DEPTH == RQ_DEPTH).
 */
struct fuzz_srq {
	struct dray_hw_srq	*hw;	/* NULL: destroyed */
	struct dray_wq_db	db;
	u8			*ring;
	int			mr;	/* where its WQEs point */
};

static bool xrc, on_srq;	/* CFG_XRC; CFG_SRQ or CFG_XRC */
static struct fuzz_srq srq, other_srq;
static struct dray_hw_cq other_cq;
static struct dray_cq_db other_cq_db;
static struct dray_cqe *other_cq_ring;
static u32 srq_rewrites;
static u32 srq_tags[SRQ_DEPTH];	/* the tag of the WQE at each SRQ index */

/* FUZZ_TRACE=1 in the environment: what each input does, on stderr. */
static bool trace;

#define TRACE(fmt, ...)							\
	do {								\
		if (trace)						\
			fprintf(stderr, fmt, ##__VA_ARGS__);		\
	} while (0)

static const u8 hw_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
static const u8 peer_mac[6] = { 0x02, 0, 0, 0, 0, 2 };

static u32 get16(const u8 *p)
{
	return (u32)p[0] << 8 | p[1];
}

static u32 get32(const u8 *p)
{
	return get16(p) << 16 | get16(p + 2);
}

/* --- the objects, as the admin commands would have left them ------------ */

static void mrs_init(void)
{
	int m, p;

	for (m = 0; m < NR_MR; m++) {
		const struct mr_layout *l = &mr_layout[m];
		struct dray_hw_mr *mr = &mrs[m];
		u64 iova = l->iova;

		if (m == MR_RW)
			iova += get16(cfg.iova_off) % PAGE_SIZE;
		memset(mr, 0, sizeof(*mr));
		mr->key = KEY(l->index, 0x11 * (m + 1));
		mr->pdn = l->pdn;
		mr->access = l->access;
		mr->state = DRAY_HW_MR_VALID;
		mr->iova = iova;
		mr->length = l->length;
		mr->n_pages = DIV_ROUND_UP(offset_in_page(iova) + l->length,
					   PAGE_SIZE);
		FUZZ_ASSERT(mr->n_pages <= MAX_PAGES);
		for (p = 0; p < (int)mr->n_pages; p++) {
			struct page *pg = &mr_pages[m][p];

			if (!pg->addr) {
				/* Each page its own allocation. */
				pg->addr = malloc(PAGE_SIZE);
				FUZZ_ASSERT(pg->addr);
			}
			pg->refs = 1;	/* pinned */
			pg->unpinned = false;
			memset(pg->addr, 0x40 + m, PAGE_SIZE);
			memcpy(shadow[m][p], pg->addr, PAGE_SIZE);
			mr_page_ptrs[m][p] = pg;
		}
		mr->pages = mr_page_ptrs[m];
		mr_gone[m] = false;
		xa_store(&hw.engine.mrs, l->index, mr, 0);
	}

	/* A type 2 window bound to the QP over part of MR_RW (BIND_MW). */
	memset(&mw, 0, sizeof(mw));
	mw.key = MW_KEY;
	mw.pdn = PDN;
	mw.mw_type = DRAY_MW_TYPE_2;
	mw.state = DRAY_HW_MR_VALID;
	mw.access = DRAY_ACCESS_REMOTE;
	mw.iova = MW_IOVA;
	mw.length = MW_LEN;
	mw.mw_qpn = QPN;
	mw.mw_mr = &mrs[MR_RW];
	mw.mw_base = mrs[MR_RW].iova + MW_OFF;
	mrs[MR_RW].windows = 1;
	xa_store(&hw.engine.mrs, MW_INDEX, &mw, 0);
}

static void *wq_slot(u8 *ring, u32 index, u32 depth, u32 log_stride)
{
	return ring + (dray_ring_slot(index, depth) << log_stride);
}

/* The tag of the WQE at SRQ index @index: not the index, below the depth. */
static u32 srq_tag(u32 index)
{
	return (index * 5 + 3) % SRQ_DEPTH;
}

/*
 * Fill receive WQE @index at @slot (of a ring of @log_stride) with SGEs
 * into MR @m; set the bookkeeping of the index when @track.
 */
static void rwqe_fill(u8 *slot, u32 log_stride, u32 hdr_size, u32 index,
		      int m, bool track)
{
	struct dray_sge *sge = (struct dray_sge *)(slot + hdr_size);
	const struct dray_hw_mr *mr = &mrs[m];
	u32 n = (cfg.rq_sge & 3) % 3 + 1, i, len, off;
	u64 total = 0;

	memset(slot, 0, 1U << log_stride);
	for (i = 0; i < n; i++) {
		len = (get16(cfg.rq_len) + rq_next_len * 977) % 5000 + 1;
		len = min_t(u32, len, mr->length);
		off = (index * 1237 + i * 4099) % (mr->length - len + 1);
		sge[i].addr = cpu_to_le64(mr->iova + off);
		sge[i].length = cpu_to_le32(len);
		sge[i].lkey = cpu_to_le32(mr->key);
		total += len;
		rq_next_len++;
	}
	/* num_sge is the first byte of either header. */
	static_assert(offsetof(struct dray_rq_wqe, num_sge) == 0 &&
		      offsetof(struct dray_srq_wqe, num_sge) == 0);
	*slot = n;
	if (!track)
		return;
	rq_bad_key[index % RQ_DEPTH] = (cfg.flags & CFG_BAD_RQ_KEY) &&
				       index % 4 == 3;
	if (rq_bad_key[index % RQ_DEPTH])
		sge[0].lkey = cpu_to_le32(mrs[MR_RO].key);
	/* More SGEs than the stride holds: the device refuses the WQE. */
	rq_bad[index % RQ_DEPTH] = (cfg.flags & CFG_BAD_RQ_WQE) && index % 4 == 2;
	rq_bad_taken[index % RQ_DEPTH] = false;
	if (rq_bad[index % RQ_DEPTH])
		*slot = 4;
	rq_posted_len[index % RQ_DEPTH] = total;
}

/* Post one WQE to @q: its doorbell written, as the provider does. */
static void srq_post(struct fuzz_srq *q, bool track)
{
	u32 index = le32_to_cpu(q->db.producer), tag = srq_tag(index);
	u8 *slot = wq_slot(q->ring, index, SRQ_DEPTH, SRQ_LOG_STRIDE);

	/* Software never posts over a WQE the device has not taken. */
	if (!q->hw || index - le32_to_cpu(q->db.consumer) >= SRQ_DEPTH)
		return;
	rwqe_fill(slot, SRQ_LOG_STRIDE, DRAY_SRQ_WQE_HDR_SIZE, index, q->mr,
		  track);
	((struct dray_srq_wqe *)slot)->tag = cpu_to_le32(tag);
	if (track)
		srq_tags[index % SRQ_DEPTH] = tag;
	q->db.producer = cpu_to_le32(index + 1);
}

/*
 * Post one receive WQE: SGEs into MR_RECV (its doorbell written), to the
 * SRQ or else the first QP's RQ.
 */
static void rq_post(void)
{
	struct fuzz_qp *f = &fqps[0];
	u32 index = le32_to_cpu(f->rq_db.producer);

	if (on_srq) {
		srq_post(&srq, true);
		return;
	}
	/* Software never posts more than the ring holds. */
	if (index - f->qp.rq.completed >= RQ_DEPTH)
		return;
	rwqe_fill(wq_slot(f->rq_ring, index, RQ_DEPTH, RQ_LOG_STRIDE),
		  RQ_LOG_STRIDE, DRAY_RQ_WQE_HDR_SIZE, index, MR_RECV, true);
	f->rq_db.producer = cpu_to_le32(index + 1);
}

/*
 * fuzz_comp: a send WQE of @f from a descriptor of WQE_DESC bytes. The
 * first QP's READs and atomics land in MR_RECV, its other WQEs send from
 * MR_SRC; the second QP's likewise, QP2_LOCAL_OFF further into them, or
 * with CFG_QP2_PD both in MR_OTHER, the MR of its PD. What the SGEs name
 * is kept in @f->sent (check_memory(): a response may write only there).
 */
#define QP2_LOCAL_OFF	2048
static __attribute__((unused)) void sq_post(struct fuzz_qp *f, const u8 *d)
{
	struct dray_wq_db *sq_db = &f->sq_db;
	u32 index = le32_to_cpu(sq_db->producer);
	u8 *slot = wq_slot(f->sq_ring, index, SQ_DEPTH, SQ_LOG_STRIDE);
	struct dray_sq_wqe *w = (struct dray_sq_wqe *)slot;
	struct dray_sge *sge = (struct dray_sge *)(slot + DRAY_SQ_WQE_HDR_SIZE);
	struct sent_wqe *sw = &f->sent[index % SQ_DEPTH];
	u8 op = d[0] % DRAY_WQE_OPCODE_MAX;
	u32 len = get16(d + 2) % (3 * 4096 + 1), n = d[6] % 4 + 1, i;
	u32 shift = f == &fqps[0] ? 0 : QP2_LOCAL_OFF;
	const struct dray_hw_mr *src;
	u64 remote = 0x10000000ULL + get16(d + 4) * 8ULL;
	int m;

	memset(slot, 0, 1U << SQ_LOG_STRIDE);
	memset(sw, 0, sizeof(*sw));
	sw->op = op;
	sw->mr = -1;
	w->opcode = op;
	w->flags = d[1] & (DRAY_WQE_F_SIGNALED | DRAY_WQE_F_SOLICITED |
			   DRAY_WQE_F_FENCE | DRAY_WQE_F_INLINE |
			   DRAY_WQE_F_UD_AV);
	sw->flags = w->flags;
	w->imm_data = cpu_to_be32(0xabc00000 | d[7]);
	switch (op) {
	case DRAY_WQE_ATOMIC_CMP_SWP:
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		w->u.atomic.remote_addr = cpu_to_le64(remote);
		w->u.atomic.rkey = cpu_to_le32(0x4400 | d[7]);
		w->u.atomic.compare_add = cpu_to_le64(get16(d + 8));
		w->u.atomic.swap = cpu_to_le64(get32(d + 6));
		len = 8;
		n = 1;
		break;
	case DRAY_WQE_SEND_INV:
	case DRAY_WQE_LOCAL_INV:
		w->u.inv.rkey = cpu_to_le32(d[8] & 1 ? MW_KEY : 0x4400 | d[7]);
		break;
	case DRAY_WQE_REG_MR:
	case DRAY_WQE_BIND_MW:
		break;		/* refused: not privileged, no such window */
	case DRAY_WQE_ATOMIC_WRITE:
		/* Misaligned now and then: an invalid request. */
		w->u.atomic_write.remote_addr = cpu_to_le64(remote + (d[8] & 4));
		w->u.atomic_write.rkey = cpu_to_le32(0x4400 | d[7]);
		for (i = 0; i < sizeof(w->u.atomic_write.value); i++)
			w->u.atomic_write.value[i] = d[i + 2];
		break;
	case DRAY_WQE_FLUSH:
		/* Type 0 or 3 is refused by the device before the wire. */
		w->u.flush.remote_addr = cpu_to_le64(remote);
		w->u.flush.rkey = cpu_to_le32(0x4400 | d[7]);
		w->u.flush.type = d[8] & 3;
		w->u.flush.level = (d[8] >> 2) & 1;
		w->u.flush.length = cpu_to_le32(len);
		break;
	default:
		w->u.rdma.remote_addr = cpu_to_le64(remote);
		w->u.rdma.rkey = cpu_to_le32(0x4400 | d[7]);
		break;
	}
	/* No SGEs: local operations, ATOMIC_WRITE and FLUSH. */
	if (dray_hw_wqe_is_local(op) || op == DRAY_WQE_ATOMIC_WRITE ||
	    op == DRAY_WQE_FLUSH) {
		sq_db->producer = cpu_to_le32(index + 1);
		return;
	}
	if (w->flags & DRAY_WQE_F_INLINE) {
		len = min_t(u32, len, (1U << SQ_LOG_STRIDE) -
				      DRAY_SQ_WQE_HDR_SIZE);
		w->length = cpu_to_le32(len);
		for (i = 0; i < len; i++)
			slot[DRAY_SQ_WQE_HDR_SIZE + i] = (u8)(i * 7 + d[9]);
		sq_db->producer = cpu_to_le32(index + 1);
		return;
	}
	/* READ and atomics land in MR_RECV; the rest comes from MR_SRC. */
	m = dray_xp_is_rd_atomic(op) ? MR_RECV : MR_SRC;
	if (f->qp.pdn == OTHER_PDN)
		m = MR_OTHER;
	src = &mrs[m];
	w->num_sge = n;
	sw->nsge = n;
	sw->mr = m;
	for (i = 0; i < n; i++) {
		u32 piece = i + 1 < n ? len / n : len - (len / n) * (n - 1);
		/* (MR_OTHER is shorter than a WQE may be: then refused.) */
		u32 room = piece <= src->length ? src->length - piece + 1 : 1;
		u32 off = (d[9] * 16 + i * 4096 + shift) % room;

		sge[i].addr = cpu_to_le64(src->iova + off);
		sge[i].length = cpu_to_le32(piece);
		sge[i].lkey = cpu_to_le32(src->key);
		sw->lo[i] = off;
		sw->hi[i] = off + piece;
	}
	sq_db->producer = cpu_to_le32(index + 1);
}

/* A CQ as CREATE_CQ leaves it, empty. */
static void cq_make(struct dray_hw_cq *c, u32 cqn, struct dray_cqe *ring,
		    struct dray_cq_db *db)
{
	memset(c, 0, sizeof(*c));
	memset(ring, 0, CQ_DEPTH * sizeof(*ring));
	memset(db, 0, sizeof(*db));
	c->cqn = cqn;
	c->depth = CQ_DEPTH;
	c->ring = ring;
	c->db = db;
}

/*
 * An SRQ as CREATE_SRQ leaves it (dev_srq.c): published in the engine's
 * table; an XRC SRQ with its domain and CQ.
 */
static void srq_make(struct fuzz_srq *q, u32 srqn, u32 pdn, u32 xrcdn,
		     struct dray_hw_cq *srq_cq, int m)
{
	struct dray_hw_srq *h = calloc(1, sizeof(*h));

	FUZZ_ASSERT(h);
	h->srqn = srqn;
	h->pdn = pdn;
	h->xrcdn = xrcdn;
	h->cq = srq_cq;
	h->serial = srqn * 1000 + 7;
	h->db = &q->db;
	h->ring = q->ring;
	h->depth = SRQ_DEPTH;
	h->log_stride = SRQ_LOG_STRIDE;
	memset(&q->db, 0, sizeof(q->db));
	memset(q->ring, 0, SRQ_DEPTH << SRQ_LOG_STRIDE);
	q->hw = h;
	q->mr = m;
	xa_store(&hw.engine.srqs, srqn, h, 0);
}

/* DESTROY_SRQ as dev_srq.c does it: unpublished under engine.lock, freed. */
static void srq_destroy(struct fuzz_srq *q)
{
	if (!q->hw)
		return;
	FUZZ_ASSERT(xa_erase(&hw.engine.srqs, q->hw->srqn) == q->hw);
	free(q->hw);
	q->hw = NULL;
}

/*
 * An RC QP as CREATE_QP leaves it, on the SRQ if there is one, sending to
 * and receiving on the CQ; published in the engine's table.
 */
static void qp_make(struct fuzz_qp *f, u32 qpn, u32 peer_qpn, u32 pdn)
{
	struct dray_hw_qp *qp = &f->qp;

	free(qp->rdb);
	memset(qp, 0, sizeof(*qp));
	memset(f->read_tx, 0, sizeof(f->read_tx));
	memset(f->sent, 0, sizeof(f->sent));
	memset(&f->sq_db, 0, sizeof(f->sq_db));
	memset(&f->rq_db, 0, sizeof(f->rq_db));
	f->sq_cqe_next = 0;
	f->rq_cqe_next = 0;
	f->peer_qpn = peer_qpn;
	qp->qpn = qpn;
	qp->type = DRAY_QPT_RC;
	qp->pdn = pdn;
	qp->flags = cfg.flags & CFG_SIG_ALL ? DRAY_QP_F_SQ_SIG_ALL : 0;
	qp->send_cq = &cq;
	qp->recv_cq = &cq;
	qp->sq.db = &f->sq_db;
	qp->sq.ring = f->sq_ring;
	qp->sq.depth = SQ_DEPTH;
	qp->sq.log_stride = SQ_LOG_STRIDE;
	if (on_srq && !xrc) {
		qp->srq = srq.hw;
		qp->flags |= DRAY_QP_F_SRQ;
	} else if (!on_srq) {
		qp->rq.db = &f->rq_db;
		qp->rq.ring = f->rq_ring;
		qp->rq.depth = RQ_DEPTH;
		qp->rq.log_stride = RQ_LOG_STRIDE;
	}
	if (xrc) {
		qp->type = DRAY_QPT_XRC_TGT;
		qp->pdn = 0;
		qp->flags = 0;
		qp->xrcdn = XRCDN;
		qp->send_cq = NULL;
		qp->recv_cq = NULL;
		memset(&qp->sq, 0, sizeof(qp->sq));
	}
	xa_store(&hw.engine.qps, qpn, qp, 0);
}

/*
 * MODIFY_QP: the attributes of INIT, RTR and RTS from the configuration,
 * the PSNs @psn_off further.
 */
static void qp_connect(struct fuzz_qp *f, u32 psn_off, u16 udp_sport)
{
	struct dray_hw_qp *qp = &f->qp;
	struct dray_hw_path *path = &qp->path;
	bool ipv6 = cfg.flags & CFG_IPV6;
	u32 i;

	qp->access = cfg.access & DRAY_ACCESS_REMOTE;
	qp->path_mtu = cfg.mtu % 5 + 1;
	/* responder resources: MODIFY_QP allocates them (dev_qp.c) */
	i = cfg.max_dest_rd_atomic % (DRAY_HW_MAX_RD_ATOM + 1);
	dray_xport_set_rdb(&hw, qp, i ? calloc(i, sizeof(*qp->rdb)) : NULL,
			   (u8)i);
	FUZZ_ASSERT(!i || qp->rdb);
	qp->max_rd_atomic = cfg.max_rd_atomic % (DRAY_HW_MAX_RD_ATOM + 1);
	qp->retry_cnt = cfg.retry & 7;
	qp->rnr_retry = (cfg.retry >> 4) & 7;
	qp->timeout = cfg.timeout & 31;
	qp->min_rnr_timer = cfg.min_rnr_timer & 31;
	qp->dest_qpn = f->peer_qpn;
	qp->rq_psn = (get32(cfg.rq_psn) + psn_off) & DRAY_PSN_MASK;
	qp->sq_psn = (get32(cfg.sq_psn) + psn_off) & DRAY_PSN_MASK;
	memcpy(path->dmac, peer_mac, 6);
	path->ipv4 = !ipv6;
	if (ipv6) {
		path->sgid[0] = 0xfe;
		path->sgid[1] = 0x80;
		memcpy(path->dgid, path->sgid, 16);
		path->sgid[15] = 1;
		path->dgid[15] = 2;
	} else {
		static const u8 v4[12] = { [10] = 0xff, [11] = 0xff };

		memcpy(path->sgid, v4, 12);
		memcpy(path->dgid, v4, 12);
		path->sgid[12] = 10;
		path->sgid[15] = 1;
		path->dgid[12] = 10;
		path->dgid[15] = 2;
	}
	path->hop_limit = 64;
	path->udp_sport = udp_sport;

	dray_xport_init(&hw, qp);
	qp->state = DRAY_QPS_INIT;
	qp->state = DRAY_QPS_RTR;
	dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE | DRAY_QP_ATTR_AV |
			  DRAY_QP_ATTR_PATH_MTU | DRAY_QP_ATTR_DEST_QPN |
			  DRAY_QP_ATTR_RQ_PSN | DRAY_QP_ATTR_MAX_DEST_RD_ATOMIC |
			  DRAY_QP_ATTR_MIN_RNR_TIMER, DRAY_QPS_INIT);
	if (!(cfg.flags & CFG_RTR)) {
		qp->state = DRAY_QPS_RTS;
		dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE |
				  DRAY_QP_ATTR_SQ_PSN | DRAY_QP_ATTR_TIMEOUT |
				  DRAY_QP_ATTR_RETRY_CNT | DRAY_QP_ATTR_RNR_RETRY |
				  DRAY_QP_ATTR_MAX_QP_RD_ATOMIC, DRAY_QPS_RTR);
	}
}

/*
 * CFG_UD: a UD QP on the SRQ, of its PD, as CREATE_QP leaves it
 * (qp_make() but for the type), then MODIFY_QP with what dev_qp_fsm.c
 * asks of a UD QP: to INIT with its Q_Key, to RTR, to RTS with its SQ
 * PSN (unless CFG_RTR). A datagram QP has no path and no peer.
 */
static void ud_qp_make(struct fuzz_qp *f)
{
	struct dray_hw_qp *qp = &f->qp;

	qp_make(f, UD_QPN, 0, PDN);
	qp->type = DRAY_QPT_UD;
	dray_xport_init(&hw, qp);
	qp->qkey = UD_QKEY;
	qp->state = DRAY_QPS_INIT;
	dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE | DRAY_QP_ATTR_PKEY_INDEX |
			  DRAY_QP_ATTR_PORT | DRAY_QP_ATTR_QKEY, DRAY_QPS_RESET);
	qp->state = DRAY_QPS_RTR;
	dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE, DRAY_QPS_INIT);
	if (cfg.flags & CFG_RTR)
		return;
	qp->sq_psn = (get32(cfg.sq_psn) + UD_PSN_OFF) & DRAY_PSN_MASK;
	qp->state = DRAY_QPS_RTS;
	dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE | DRAY_QP_ATTR_SQ_PSN,
			  DRAY_QPS_RTR);
}

static void setup(void)
{
	u32 i;

	memset(&hw, 0, sizeof(hw));
	hw.ndev = &ndev;
	memcpy(hw.mac, hw_mac, 6);
	hw.port_state = DRAY_PORT_ACTIVE;
	hw.engine.lock.held = 1;	/* what a pass holds */
	mrs_init();

	cq_make(&cq, 1, cq_ring, &cq_db);
	cq_ci = 0;

	/* CREATE_QP on an SRQ, or of an XRC target (dev_qp.c). */
	xrc = !FUZZ_COMP && (cfg.flags & CFG_XRC);
	on_srq = xrc || (cfg.flags & CFG_SRQ);
	nr_qp = 1;
	if (on_srq && !xrc && (cfg.rq_sge & CFG_QP2))
		nr_qp = cfg.rq_sge & CFG_QP3 ? 3 : 2;
	if (xrc && (cfg.rq_sge & CFG_XRC2))
		nr_qp = 2;
	cur = NULL;
	srq_rewrites = 0;
	cq_make(&other_cq, 2, other_cq_ring, &other_cq_db);
	if (on_srq)
		srq_make(&srq, SRQN, PDN, xrc ? XRCDN : 0, xrc ? &cq : NULL,
			 MR_RECV);
	if (xrc) {
		srq_make(&other_srq, OTHER_SRQN, OTHER_PDN, OTHER_XRCDN,
			 &other_cq, MR_OTHER);
		/* Receives a request would take if it could: it must not. */
		for (i = 0; i < SRQ_DEPTH; i++)
			srq_post(&other_srq, false);
	}
	qp_make(&fqps[0], QPN, PEER_QPN, PDN);
	qp_connect(&fqps[0], 0, 0xc123);
	if (nr_qp > 1) {
		/*
		 * Another connection between the same hosts (with CFG_XRC2
		 * another XRC target of the domain: qp_make()).
		 */
		qp_make(&fqps[1], QPN2, PEER_QPN2,
			cfg.rq_sge & CFG_QP2_PD ? OTHER_PDN : PDN);
		qp_connect(&fqps[1], QP2_PSN_OFF, 0xc124);
	}
	if (nr_qp > 2) {
		qp_make(&fqps[2], QPN3, PEER_QPN3, PDN);
		qp_connect(&fqps[2], QP3_PSN_OFF, 0xc125);
	}
	ud = NULL;
	if (on_srq && !xrc && (cfg.rq_sge & CFG_UD)) {
		ud = &fqps[nr_qp++];
		ud_qp_make(ud);
	}

	rq_next_len = 0;
	for (i = 0; i < cfg.rq_wqes % (RQ_DEPTH + 1); i++)
		rq_post();
}

/* The QP of number @qpn, if the input has it. */
static struct fuzz_qp *qp_find(u32 qpn)
{
	u32 i;

	for (i = 0; i < nr_qp; i++)
		if (fqps[i].qp.qpn == qpn)
			return &fqps[i];
	return NULL;
}

/* --- checks ---------------------------------------------------------------- */

/* What a frame may change: MR @mr, bytes [lo, hi) of it (MR offsets). */
struct allowed {
	int	mr;		/* -1: none */
	u64	lo, hi;
	bool	recv;		/* MR_RECV may change anywhere in range */
	const u8 *data;		/* WRITE: what [lo, hi) must hold if changed */
	u8	atomic;		/* CmpSwap or FetchAdd at [lo, lo + 8) */
	u64	swap_add, compare;
	/*
	 * A request that names memory by its R_Key (rkey_req()): its PSN,
	 * whether the key allows the access in the QP's PD, and whether
	 * nothing but the key could make the responder refuse it.
	 */
	bool	named, key_ok, plain;
	u32	psn;
	/*
	 * A UD SEND to the UD QP (check_ud_rx()): its IP header, its BTH,
	 * where its payload starts and how long it is.
	 */
	bool	ud;
	bool	ipv6;
	const u8 *ip, *bth, *pay;
	u32	pay_len;
	bool	ud_other;	/* a UD SEND to a QP not UD: dropped */
	/*
	 * A response to @resp (a READ response, an atomic ACK, an ACK): it
	 * may write only into the local SGEs of the READs and atomics of
	 * @resp's send WQEs outstanding before it, [resp_lo, resp_hi).
	 */
	const struct fuzz_qp *resp;
	u32	resp_lo, resp_hi;
};

/* The PD of the memory a request to @f names: an XRC target's SRQ's. */
static u32 req_pdn(const struct fuzz_qp *f)
{
	return xrc ? PDN : f->qp.pdn;
}

/*
 * The MR an RDMA access through @f by R_Key @rkey at @va may reach, and
 * the offset there, or -1: MR_RW or MR_OTHER if of the request's PD
 * (req_pdn()), or MR_RW through the window, which is bound to the first
 * QP (no other may use it).
 */
static int rdma_mr(const struct fuzz_qp *f, u32 rkey, u64 va, u64 *off)
{
	static const int remote[] = { MR_RW, MR_OTHER };
	u32 i;

	for (i = 0; i < ARRAY_SIZE(remote); i++) {
		const struct dray_hw_mr *mr = &mrs[remote[i]];

		if (rkey == mr->key && va >= mr->iova &&
		    mr_layout[remote[i]].pdn == req_pdn(f)) {
			*off = va - mr->iova;
			return remote[i];
		}
	}
	if (rkey == MW_KEY && va >= MW_IOVA && f->qp.qpn == QPN &&
	    mw.pdn == req_pdn(f)) {
		*off = MW_OFF + (va - MW_IOVA);
		return MR_RW;
	}
	return -1;
}

/* [@va, @va + @len) inside [@start, @start + @size); @len not 0. */
static bool range_in(u64 va, u64 len, u64 start, u64 size)
{
	u64 last;

	return !check_add_overflow(va, len - 1, &last) && va >= start &&
	       size && last - start <= size - 1;
}

/*
 * The MR whose key is @key (keys are unique) if it is live, of PD @pdn
 * and allows @access; else -1.
 */
static int key_mr(u32 key, u32 pdn, u8 access)
{
	int m;

	for (m = 0; m < NR_MR; m++)
		if (!mr_gone[m] && key == mrs[m].key)
			return mr_layout[m].pdn == pdn &&
			       (mr_layout[m].access & access) == access ? m : -1;
	return -1;
}

/*
 * Whether R_Key @rkey lets a request to @f at @va of @len bytes (not 0)
 * have @access: an MR or the window of the request's PD, valid, with
 * the right, over the range, the window only through the QP it is
 * bound to (dray_hw_rkey_check() as hw-interface.md describes it).
 */
static bool rkey_ok(const struct fuzz_qp *f, u32 rkey, u64 va, u64 len,
		    u8 access)
{
	int m;

	if (rkey == MW_KEY)
		return mw.pdn == req_pdn(f) && mw.state == DRAY_HW_MR_VALID &&
		       mw.mw_qpn == f->qp.qpn &&
		       (mw.access & access) == access &&
		       range_in(va, len, MW_IOVA, MW_LEN);
	m = key_mr(rkey, req_pdn(f), access);
	return m >= 0 &&
	       range_in(va, len, mrs[m].iova, mr_layout[m].length);
}

/*
 * A request to @f of @pay payload bytes that names memory by R_Key:
 * a WRITE's first packet, a READ, CmpSwap or FetchAdd, of a length the
 * responder checks the key for (not 0); whether the key allows it
 * (rkey_ok()), and whether it is plain: if @f were to take it as new,
 * nothing but the key could fail it (the opcode in sequence and
 * enabled, the lengths right, a responder resource free, an atomic
 * aligned), so that a refusal is a remote access error.
 */
static void rkey_req(struct allowed *a, const struct fuzz_qp *f,
		     const struct dray_pkt *pkt, u32 pay)
{
	const struct dray_hw_qp *qp = &f->qp;
	u32 nres = qp->rdb ? qp->max_dest_rd_atomic : 0;
	bool res_free = nres &&
			!qp->rdb[qp->xp.resp.res_next % nres].pending;
	u64 len = pkt->dma_len;
	u8 op = dray_wire_op(pkt->opcode), access;

	/* The QP's transport: RC, or XRC for an XRC target (an XRC opcode). */
	if (pkt->opcode - op != (xrc ? DRAY_OP_XRC : 0))
		return;
	switch (op) {
	case DRAY_OP_WRITE_FIRST:
	case DRAY_OP_WRITE_ONLY:
	case DRAY_OP_WRITE_ONLY_IMM:
		access = DRAY_ACCESS_REMOTE_WRITE;
		a->plain = op == DRAY_OP_WRITE_ONLY &&
			   pay == pkt->dma_len &&
			   pay <= dray_mtu_bytes(qp->path_mtu);
		break;
	case DRAY_OP_READ_REQUEST:
		access = DRAY_ACCESS_REMOTE_READ;
		a->plain = res_free && !pay && !pkt->pad &&
			   pkt->dma_len <= DRAY_HW_MAX_MSG;
		break;
	case DRAY_OP_CMP_SWAP:
	case DRAY_OP_FETCH_ADD:
		access = DRAY_ACCESS_REMOTE_ATOMIC;
		len = sizeof(u64);
		a->plain = res_free && !pay && !pkt->pad &&
			   !(pkt->va & (sizeof(u64) - 1));
		break;
	default:
		return;
	}
	if (!len)
		return;
	a->named = true;
	a->psn = pkt->psn;
	a->key_ok = rkey_ok(f, pkt->rkey, pkt->va, len, access);
	a->plain = a->plain && !xrc && !qp->xp.resp.in_msg &&
		   (qp->access & access) == access;
}

/*
 * The memory a request or response may change, from the packet as
 * received (@ip: its IP header on) and, for a WRITE's later packets, the
 * address and key its first packet set; *@to: the QP it names, or NULL
 * (then it may change nothing).
 */
static struct allowed frame_allowed(const u8 *ip, u32 len, bool ipv6,
				    struct fuzz_qp **to)
{
	struct allowed a = { .mr = -1 };
	struct dray_wire_l3 l3;
	struct dray_pkt pkt;
	u32 f, l4, pay;
	int hlen;
	u64 off;

	*to = NULL;
	if (dray_wire_parse_l3(ip, len, len, ipv6, &l3))
		return a;
	l4 = l3.ip_hlen + DRAY_UDP_HLEN;
	hlen = dray_wire_parse(ip + l4, len - l4, &pkt);
	if (hlen < 0)
		return a;
	*to = qp_find(pkt.qpn);
	if (!*to || l3.udp_len < hlen + pkt.pad + DRAY_ICRC_BYTES)
		return a;
	pay = l3.udp_len - hlen - pkt.pad - DRAY_ICRC_BYTES;
	f = dray_opcodes[pkt.opcode].flags;
	if (*to == ud) {
		/*
		 * The UD QP takes UD SENDs only; what one may change is
		 * checked apart (check_ud_rx()): nothing here.
		 */
		if (f & DRAY_OPF_UD) {
			a.ud = true;
			a.ipv6 = l3.ipv6;
			a.ip = ip;
			a.bth = ip + l4;
			a.pay = ip + l4 + hlen;
			a.pay_len = pay;
		}
		return a;
	}
	/* A UD SEND to another QP is dropped (dev_ud.c): nothing changes. */
	if (f & DRAY_OPF_UD) {
		a.ud_other = true;
		return a;
	}
	rkey_req(&a, *to, &pkt, pay);
	if ((f & DRAY_OPF_REQ) && (f & DRAY_OPF_SEND)) {
		a.recv = true;
	} else if ((f & DRAY_OPF_REQ) && (f & DRAY_OPF_WRITE)) {
		const struct dray_xp_resp *rs = &(*to)->qp.xp.resp;
		u64 va = f & DRAY_OPF_START ? pkt.va : rs->va;
		u32 rkey = f & DRAY_OPF_START ? pkt.rkey : rs->rkey;

		a.mr = rdma_mr(*to, rkey, va, &off);
		if (a.mr >= 0) {
			a.lo = off;
			a.hi = off + pay;
			a.data = ip + l4 + hlen;
		}
	} else if ((f & DRAY_OPF_REQ) && (f & DRAY_OPF_ATOMIC)) {
		a.mr = rdma_mr(*to, pkt.rkey, pkt.va, &off);
		if (a.mr >= 0) {
			a.lo = off;
			a.hi = off + 8;
			a.atomic = pkt.opcode;
			a.swap_add = pkt.swap_add;
			a.compare = pkt.compare;
		}
	} else if (f & DRAY_OPF_RESP) {
		/* READ response data, atomic result: resp_may_write() */
		a.resp = *to;
		a.resp_lo = (*to)->qp.sq.completed;
		a.resp_hi = (*to)->qp.sq.fetched;
	}
	return a;
}

/* Byte @off of MR @m: as it is now, or (@was) as the shadow had it. */
static u8 mr_byte(int m, u64 off, bool was)
{
	u64 pos = off + offset_in_page(mrs[m].iova);

	return was ? shadow[m][pos / PAGE_SIZE][pos % PAGE_SIZE] :
		     mr_pages[m][pos / PAGE_SIZE].addr[pos % PAGE_SIZE];
}

static u64 mr_u64(int m, u64 off, bool was)
{
	u64 v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | mr_byte(m, off + i, was);
	return v;
}

/*
 * What changed in the RDMA target is what the packet said: a WRITE's
 * payload, all of it; an atomic's result from the value before.
 */
static void check_content(const struct allowed *a)
{
	bool changed = false;
	u64 off, old, now;

	if (a->mr < 0 || mr_gone[a->mr] || a->hi > mrs[a->mr].length)
		return;
	for (off = a->lo; off < a->hi; off++)
		changed |= mr_byte(a->mr, off, false) != mr_byte(a->mr, off, true);
	if (!changed)
		return;
	if (a->data) {
		for (off = a->lo; off < a->hi; off++)
			FUZZ_ASSERT(mr_byte(a->mr, off, false) ==
				    a->data[off - a->lo]);
		return;
	}
	old = mr_u64(a->mr, a->lo, true);
	now = mr_u64(a->mr, a->lo, false);
	if (a->atomic == DRAY_OP_CMP_SWAP)
		FUZZ_ASSERT(old == a->compare && now == a->swap_add);
	else
		FUZZ_ASSERT(now == old + a->swap_add);
}

/*
 * Whether a response (@a->resp) may change byte @off of MR @m: inside a
 * local SGE of a READ or an atomic of its QP that was outstanding when
 * it came (as posted; one software rewrote may have become one).
 */
static bool resp_may_write(const struct allowed *a, int m, u64 off)
{
	u32 j, i;

	for (j = a->resp_lo; j != a->resp_hi; j++) {
		const struct sent_wqe *sw = &a->resp->sent[j % SQ_DEPTH];

		if (sw->mr != m || !(dray_xp_is_rd_atomic(sw->op) ||
				     (sw->rewritten &&
				      dray_xp_is_rd_atomic(sw->op ^ 1))))
			continue;
		for (i = 0; i < sw->nsge; i++)
			if (off >= sw->lo[i] && off < sw->hi[i])
				return true;
	}
	return false;
}

/*
 * Compare every MR page with its shadow, then update the shadow: a byte
 * changed must lie inside its MR's registered range and be one @may
 * allows (@a: what the frame was).
 */
static void shadow_sync(const struct allowed *a,
			bool (*may)(const struct allowed *a, int m, u64 off))
{
	int m, p, b;

	for (m = 0; m < NR_MR; m++) {
		const struct dray_hw_mr *mr = &mrs[m];
		u64 start = offset_in_page(mr->iova);

		if (mr_gone[m])
			continue;

		for (p = 0; p < (int)mr->n_pages; p++) {
			u8 *now = mr_pages[m][p].addr, *was = shadow[m][p];

			/* Frames that held pages are gone: pinned once. */
			FUZZ_ASSERT(mr_pages[m][p].refs == 1);
			if (!memcmp(now, was, PAGE_SIZE))
				continue;
			for (b = 0; b < (int)PAGE_SIZE; b++) {
				u64 off = (u64)p * PAGE_SIZE + b - start;

				if (now[b] == was[b])
					continue;
				/* Inside the MR's registered range. */
				FUZZ_ASSERT((u64)p * PAGE_SIZE + b >= start &&
					    off < mr->length);
				FUZZ_ASSERT(may(a, m, off));
			}
			memcpy(was, now, PAGE_SIZE);
		}
	}
}

/*
 * What a frame (@a) may change: a response, its QP's READ and atomic
 * SGEs; MR_RECV, a receive; elsewhere only inside what the key and
 * address named.
 */
static bool frame_may_write(const struct allowed *a, int m, u64 off)
{
	if (a->resp && resp_may_write(a, m, off))
		return true;
	if (m == MR_RECV)
		return a->recv;
	return m == a->mr && off >= a->lo && off < a->hi;
}

static void check_memory(const struct allowed *a)
{
	check_content(a);
	shadow_sync(a, frame_may_write);
}

/* --- the UD QP ------------------------------------------------------------ */

#define GRH_BYTES	40	/* a UD receive's GRH: RoCEv2's IP header */
#define IPV4_BYTES	20	/* ... for IPv4 at its end, zeros before */
#define UD_MAX_PAY	4096	/* a UD payload never exceeds the largest MTU */

/* The UD QP and the SRQ before a frame for the UD QP (deliver()). */
struct ud_before {
	struct dray_xp_stats	stats;
	u32			fetched;	/* its rq.fetched */
	u32			srq_taken;	/* the SRQ's next WQE */
	u8			state;
	bool			srq_ready;	/* a WQE there, SRQ healthy */
};

static void ud_snapshot(struct ud_before *b)
{
	u32 pi = le32_to_cpu(srq.db.producer);

	b->stats = ud->qp.xp.stats;
	b->fetched = ud->qp.rq.fetched;
	b->state = ud->qp.state;
	b->srq_taken = srq.hw ? srq.hw->taken : 0;
	b->srq_ready = srq.hw && !srq.hw->error &&
		       pi - b->srq_taken - 1 < SRQ_DEPTH;
}

/* The UD QP's counters of frames it dropped. */
static u64 ud_drops(const struct dray_xp_stats *st)
{
	return st->rx_icrc_errors + st->rx_drops + st->pkey_violations +
	       st->qkey_violations + st->rx_no_wqe;
}

/*
 * Byte @p of what a UD SEND places: the GRH (the IPv6 header as received,
 * or 20 zero bytes and the IPv4 header), then the payload.
 */
static u8 ud_byte(const struct allowed *a, u32 p)
{
	if (p >= GRH_BYTES)
		return a->pay[p - GRH_BYTES];
	if (a->ipv6)
		return a->ip[p];
	return p < GRH_BYTES - IPV4_BYTES ? 0 :
	       a->ip[p - (GRH_BYTES - IPV4_BYTES)];
}

/*
 * The MR SGE @sge of an SRQ WQE may write, judged as the device must: by
 * lkey, in the SRQ's PD, with local write; -1 if none. Its bytes must
 * also lie inside the MR (ud_target()).
 */
static int ud_sge_mr(const struct dray_sge *sge)
{
	return key_mr(le32_to_cpu(sge->lkey), srq.hw->pdn,
		      DRAY_ACCESS_LOCAL_WRITE);
}

/* MR @m's byte at @addr: its offset, or false if outside the MR. */
static bool ud_target(int m, u64 addr, u64 *off)
{
	if (m < 0 || !range_in(addr, 1, mrs[m].iova, mr_layout[m].length))
		return false;
	*off = addr - mrs[m].iova;
	return true;
}

/*
 * Per MR byte: 0 no byte of the message goes there, 1 one does, 2 it
 * holds the one that must (or, after an error, may) be there.
 */
static u8 ud_mark[NR_MR][MAX_PAGES * PAGE_SIZE];
static struct {
	s8	m;		/* -1: the SGE is refused */
	u32	off;
} ud_dst[GRH_BYTES + UD_MAX_PAY];

/* A byte a UD SEND placed (ud_mark 2: one it may hold). */
static bool ud_may_write(const struct allowed *a, int m, u64 off)
{
	(void)a;
	return ud_mark[m][off] == 2;
}

/*
 * A frame for the UD QP (@a: what it was, if a UD SEND; @b: before it).
 * Only a UD SEND whose Q_Key is the QP's takes a receive WQE, one, the
 * SRQ's next; a bad Q_Key (however else the frame is) takes nothing and
 * is counted as a drop, as a Q_Key violation if nothing else is wrong
 * with it. A good one takes a WQE if the SRQ has one and nothing else is
 * wrong with the frame; the WQE gets the GRH, then the payload, in its
 * SGEs in order, each judged in the SRQ's PD; nothing else in memory
 * changes. What the CQE must say is recorded for cq_consume().
 */
static void check_ud_rx(const struct allowed *a, u8 ctl,
			const struct ud_before *b)
{
	const struct dray_hw_qp *qp = &ud->qp;
	const struct dray_xp_stats *st = &qp->xp.stats;
	u32 took = qp->rq.fetched - b->fetched, n, i, j, p, len, total;
	struct taken_wqe *w = &ud->taken[b->fetched % TAKEN_LOG];
	bool fine, clean, placed_all = true;
	const struct dray_sge *sge;
	const u8 *slot;
	u64 addr, off = 0;
	int m, k;

	FUZZ_ASSERT(took <= 1);
	if (!a->ud) {
		FUZZ_ASSERT(!took);
		return;
	}
	/*
	 * What else makes the QP drop it (dray_xport_rx(), dev_ud.c): its
	 * state, the P_Key, the length, the ICRC (unknown for F_RAW; none
	 * checked on internal loopback). Clean: nothing.
	 */
	fine = (b->state == DRAY_QPS_RTR || b->state == DRAY_QPS_RTS ||
		b->state == DRAY_QPS_SQD || b->state == DRAY_QPS_SQE) &&
	       (get16(a->bth + 2) | 0x8000) == 0xffff &&
	       a->pay_len <= UD_MAX_PAY &&
	       ((ctl & (F_RAW | F_BAD_ICRC)) != F_BAD_ICRC ||
		(ctl & F_LOOPBACK));
	clean = fine && !(ctl & F_RAW);
	if (get32(a->bth + 12) != UD_QKEY) {
		/* IBTA 10.2.4: a Q_Key violation is dropped, and counted. */
		FUZZ_ASSERT(!took);
		FUZZ_ASSERT(ud_drops(st) == ud_drops(&b->stats) + 1);
		if (clean)
			FUZZ_ASSERT(st->qkey_violations ==
				    b->stats.qkey_violations + 1);
		return;
	}
	if (!took) {
		/* Dropped and counted, or the SRQ broke (the QP errs). */
		FUZZ_ASSERT(!(clean && b->srq_ready));
		FUZZ_ASSERT(ud_drops(st) - ud_drops(&b->stats) <= 1);
		if (srq.hw && !srq.hw->error)
			FUZZ_ASSERT(ud_drops(st) == ud_drops(&b->stats) + 1);
		return;
	}
	FUZZ_ASSERT(fine && ud_drops(st) == ud_drops(&b->stats));

	/*
	 * The WQE taken, as the SRQ ring has it still (nothing posts over
	 * it before the harness is back): where each byte of GRH and
	 * payload goes. Malformed, it places nothing.
	 */
	total = GRH_BYTES + a->pay_len;
	slot = wq_slot(srq.ring, b->srq_taken, SRQ_DEPTH, SRQ_LOG_STRIDE);
	sge = (const struct dray_sge *)(slot + DRAY_SRQ_WQE_HDR_SIZE);
	n = w->bad ? 0 : slot[0];
	FUZZ_ASSERT(n <= 3);
	memset(ud_mark, 0, sizeof(ud_mark));
	for (i = 0, p = 0; i < n && p < total; i++) {
		m = ud_sge_mr(&sge[i]);
		addr = le64_to_cpu(sge[i].addr);
		len = le32_to_cpu(sge[i].length);
		for (j = 0; j < len && p < total; j++, p++) {
			ud_dst[p].m = ud_target(m, addr + j, &off) ? m : -1;
			ud_dst[p].off = off;
			if (ud_dst[p].m < 0)
				placed_all = false;
			else
				ud_mark[m][off] = 1;
		}
	}
	/* What its CQE must say (dev_ud.h). */
	w->ud = true;
	w->ud_len = total;
	w->ud_src_qpn = get32(a->bth + 16) & DRAY_QPN_MASK;
	w->ud_imm = a->bth[0] == DRAY_OP_UD_SEND_ONLY_IMM;
	w->ud_imm_data = w->ud_imm ? cpu_to_be32(get32(a->bth + 20)) : 0;
	w->ud_ipv6 = a->ipv6;
	w->ud_se = a->bth[1] & 0x80;
	if (w->bad)
		w->ud_status = DRAY_CQE_ST_LOC_QP_OP_ERR;
	else if (p < total)
		w->ud_status = DRAY_CQE_ST_LOC_LEN_ERR;	/* too short */
	else if (!placed_all)
		w->ud_status = DRAY_CQE_ST_LOC_PROT_ERR;
	else
		w->ud_status = DRAY_CQE_ST_SUCCESS;

	/*
	 * Placed: each byte holds the message's last byte aimed at it (SGEs
	 * may overlap). After an error the device may have placed part of
	 * it: a byte changed holds one of the bytes aimed at it.
	 */
	if (w->ud_status == DRAY_CQE_ST_SUCCESS) {
		for (k = (int)total - 1; k >= 0; k--) {
			m = ud_dst[k].m;
			if (ud_mark[m][ud_dst[k].off] != 1)
				continue;
			FUZZ_ASSERT(mr_byte(m, ud_dst[k].off, false) ==
				    ud_byte(a, k));
			ud_mark[m][ud_dst[k].off] = 2;
		}
	} else {
		for (k = 0; k < (int)p; k++) {
			m = ud_dst[k].m;
			if (m >= 0 && mr_byte(m, ud_dst[k].off, false) ==
				      ud_byte(a, k))
				ud_mark[m][ud_dst[k].off] = 2;
		}
	}
	/* Nothing changed anywhere else; the shadow catches up. */
	shadow_sync(a, ud_may_write);
}

/*
 * A receive CQE of the UD QP, of WQE @w: as check_ud_rx() recorded when
 * a frame made it take @w (nothing else takes for it), with the byte
 * length of GRH and payload, the DETH's source QP, the immediate.
 */
static void check_ud_cqe(const struct dray_cqe *c, const struct taken_wqe *w)
{
	FUZZ_ASSERT(w->ud);
	FUZZ_ASSERT(c->status == w->ud_status);
	if (c->status != DRAY_CQE_ST_SUCCESS)
		return;
	FUZZ_ASSERT(c->opcode == DRAY_CQE_RECV);
	FUZZ_ASSERT(le32_to_cpu(c->byte_len) == w->ud_len);
	FUZZ_ASSERT(le32_to_cpu(c->src_qpn) == w->ud_src_qpn);
	FUZZ_ASSERT(!(c->flags & DRAY_CQE_F_IMM) == !w->ud_imm);
	if (w->ud_imm)
		FUZZ_ASSERT(c->imm_data == w->ud_imm_data);
	FUZZ_ASSERT(c->flags & DRAY_CQE_F_GRH);
	FUZZ_ASSERT(!(c->flags & DRAY_CQE_F_IPV6) == !w->ud_ipv6);
	FUZZ_ASSERT(!(c->flags & DRAY_CQE_F_SOLICITED) == !w->ud_se);
}

/*
 * The SRQs: the QPs (their only takers) took each WQE the SRQ gave out,
 * at most the depth outstanding; the index published to software is the
 * device's. Nothing is taken from the other domain's XRC SRQ and
 * nothing completes on its CQ.
 */
static void check_srqs(void)
{
	const struct dray_hw_srq *h = srq.hw;
	u32 i, fetched = 0;

	for (i = 0; i < nr_qp; i++)
		fetched += fqps[i].qp.rq.fetched;
	if (h) {
		FUZZ_ASSERT(fetched == h->taken);
		FUZZ_ASSERT(h->posted - h->taken <= SRQ_DEPTH);
		FUZZ_ASSERT(le32_to_cpu(srq.db.consumer) == h->taken);
	}
	if (xrc) {
		FUZZ_ASSERT(other_srq.hw->taken == 0 &&
			    !other_srq.db.consumer && !other_srq.hw->error);
		FUZZ_ASSERT(!other_cq.pi);
	}
}

/*
 * The UD QP: it completes each receive WQE in the call that takes it,
 * has no send WQE, so no timer, nothing stalled and its PSN where
 * MODIFY_QP to RTS set it; in RTS or SQD (RTR with CFG_RTR) unless ERR.
 */
static void check_ud_qp(const struct fuzz_qp *f)
{
	const struct dray_hw_qp *qp = &f->qp;

	FUZZ_ASSERT(qp->rq.fetched == qp->rq.completed);
	FUZZ_ASSERT(!qp->sq.posted && !qp->sq.fetched && !qp->sq.completed);
	FUZZ_ASSERT(!qp->deadline && !qp->ud.stall);
	FUZZ_ASSERT(qp->ud.psn == (cfg.flags & CFG_RTR ? 0 : qp->sq_psn));
	if (qp->state == DRAY_QPS_ERR)
		return;
	FUZZ_ASSERT(qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD ||
		    (qp->state == DRAY_QPS_RTR && (cfg.flags & CFG_RTR)));
}

static void check_qp(const struct fuzz_qp *f)
{
	const struct dray_hw_qp *qp = &f->qp;
	const struct dray_xp_resp *rs = &qp->xp.resp;
	const struct dray_xp_req *rq = &qp->xp.req;
	u32 nres = qp->rdb ? qp->max_dest_rd_atomic : 0, i, pending = 0;

	/* Work queue indexes: completed <= fetched <= posted, within depth. */
	FUZZ_ASSERT(qp->sq.fetched - qp->sq.completed <=
		    qp->sq.posted - qp->sq.completed);
	FUZZ_ASSERT(qp->sq.posted - qp->sq.completed <= SQ_DEPTH);
	FUZZ_ASSERT(qp->rq.fetched - qp->rq.completed <=
		    qp->rq.posted - qp->rq.completed);
	FUZZ_ASSERT(qp->rq.posted - qp->rq.completed <= RQ_DEPTH);
	FUZZ_ASSERT(qp->rq.fetched - qp->rq.completed <= 1);
	if (f == ud) {
		check_ud_qp(f);
		return;
	}

	if (qp->xp.err || qp->state == DRAY_QPS_ERR)
		return;
	FUZZ_ASSERT(qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD ||
		    (qp->state == DRAY_QPS_RTR && (cfg.flags & CFG_RTR)));

	FUZZ_ASSERT(rs->epsn <= DRAY_PSN_MASK && rs->ack_psn <= DRAY_PSN_MASK);
	FUZZ_ASSERT(rs->msn <= DRAY_AETH_MSN_MASK);
	FUZZ_ASSERT(rs->nak_psn <= DRAY_PSN_MASK);
	FUZZ_ASSERT(dray_opcodes[rs->last_op].flags & DRAY_OPF_REQ);
	FUZZ_ASSERT(rs->resid <= DRAY_HW_MAX_MSG);
	if (rs->rwqe_valid)
		FUZZ_ASSERT(rs->rcv_off <= rs->rwqe.length);
	if (nres) {
		FUZZ_ASSERT(rs->res_next < nres && rs->res_tx < nres);
	}
	for (i = 0; i < nres; i++) {
		const struct dray_xp_res *r = &qp->rdb[i];

		pending += r->pending;
		FUZZ_ASSERT(r->type <= DRAY_XP_RES_ATOMIC);
		FUZZ_ASSERT(r->psn <= DRAY_PSN_MASK &&
			    r->last_psn <= DRAY_PSN_MASK);
		if (r->type == DRAY_XP_RES_READ) {
			FUZZ_ASSERT(r->length <= DRAY_HW_MAX_MSG);
			FUZZ_ASSERT(r->tx_len <= r->length);
		}
	}
	/* the count the responder keeps of responses still to send */
	FUZZ_ASSERT(pending == rs->res_pending);

	FUZZ_ASSERT(rq->psn <= DRAY_PSN_MASK && rq->max_psn <= DRAY_PSN_MASK &&
		    rq->una <= DRAY_PSN_MASK);
	FUZZ_ASSERT(dray_xp_span(rq->una, rq->psn) <=
		    dray_xp_span(rq->una, rq->max_psn));
	FUZZ_ASSERT(dray_xp_span(rq->una, rq->max_psn) <= DRAY_XP_MAX_SPAN);
	FUZZ_ASSERT(rq->fetch - rq->head <= DRAY_XP_MAX_WQE);
	FUZZ_ASSERT(rq->cur - rq->head <= rq->fetch - rq->head);
	FUZZ_ASSERT(rq->fetch == qp->sq.fetched);
	FUZZ_ASSERT(rq->head == qp->sq.completed);
	FUZZ_ASSERT(rq->rd_atomic <= qp->max_rd_atomic);
	FUZZ_ASSERT(rq->win.cwnd <= DRAY_CWND_MAX);
	/* The window: none before RTS, else within its bounds (AIMD). */
	if (rq->win.cwnd) {
		FUZZ_ASSERT(rq->win.cwnd >= DRAY_CWND_MIN);
		FUZZ_ASSERT(rq->win.ssthresh >= DRAY_CWND_MIN &&
			    rq->win.ssthresh <= DRAY_CWND_MAX);
		FUZZ_ASSERT(rq->win.acked < rq->win.cwnd);
	} else {
		FUZZ_ASSERT(!rq->win.ssthresh && !rq->win.acked);
	}
}

/* Every QP, and the SRQs they share. */
static void check_state(void)
{
	u32 i;

	for (i = 0; i < nr_qp; i++)
		check_qp(&fqps[i]);
	check_srqs();
}

/*
 * The CQE of receive WQE @index of @f: on an SRQ the WQE as it was when
 * @f took it; else the RQ's own (software reposts a slot only once its
 * CQE is here).
 */
static struct taken_wqe rwqe_of(const struct fuzz_qp *f, u32 index)
{
	if (on_srq)
		return f->taken[index % TAKEN_LOG];
	return (struct taken_wqe){
		.tag = index,
		.len = rq_posted_len[index % RQ_DEPTH],
		.bad = rq_bad_taken[index % RQ_DEPTH],
		.bad_key = rq_bad_key[index % RQ_DEPTH],
	};
}

/*
 * The CQE opcode of each send WQE opcode, as verbs define them (written
 * out here, not taken from dev_wq.c, which is under test); the rest
 * (SENDs) DRAY_CQE_SEND, 0.
 */
static const u8 send_cqe_opcode[DRAY_WQE_OPCODE_MAX] = {
	[DRAY_WQE_RDMA_WRITE] = DRAY_CQE_RDMA_WRITE,
	[DRAY_WQE_RDMA_WRITE_IMM] = DRAY_CQE_RDMA_WRITE,
	[DRAY_WQE_RDMA_READ] = DRAY_CQE_RDMA_READ,
	[DRAY_WQE_ATOMIC_CMP_SWP] = DRAY_CQE_COMP_SWAP,
	[DRAY_WQE_ATOMIC_FETCH_ADD] = DRAY_CQE_FETCH_ADD,
	[DRAY_WQE_LOCAL_INV] = DRAY_CQE_LOCAL_INV,
	[DRAY_WQE_REG_MR] = DRAY_CQE_REG_MR,
	[DRAY_WQE_BIND_MW] = DRAY_CQE_BIND_MW,
	[DRAY_WQE_ATOMIC_WRITE] = DRAY_CQE_ATOMIC_WRITE,
	[DRAY_WQE_FLUSH] = DRAY_CQE_FLUSH,
};
static_assert(DRAY_CQE_SEND == 0);

/*
 * A send CQE of @f for its WQE @idx, the first one of @f's after @f's
 * WQE sq_cqe_next - 1: the WQEs between completed with success and
 * unsignaled (no CQE), unless the CQ overflowed and dropped CQEs; a
 * success is of a WQE signaled (or a QP signaling all) and has the
 * opcode of the WQE @f was posted at @idx, not another QP's (unless
 * software rewrote it).
 */
static void check_send_cqe(const struct fuzz_qp *f, const struct dray_cqe *c,
			   u32 idx)
{
	bool all = f->qp.flags & DRAY_QP_F_SQ_SIG_ALL;
	const struct sent_wqe *sw = &f->sent[idx % SQ_DEPTH];
	u32 j;

	if (!cq.error)
		for (j = f->sq_cqe_next; j != idx; j++)
			FUZZ_ASSERT(!all && !(f->sent[j % SQ_DEPTH].flags &
					      DRAY_WQE_F_SIGNALED));
	if (c->status != DRAY_CQE_ST_SUCCESS)
		return;
	FUZZ_ASSERT(all || (sw->flags & DRAY_WQE_F_SIGNALED));
	if (!sw->rewritten)
		FUZZ_ASSERT(c->opcode == send_cqe_opcode[sw->op]);
}

/*
 * Take the CQEs the device wrote; check each. The CQ is shared: each CQE
 * names one of the QPs, and each QP's completions are in its order.
 */
static void cq_consume(void)
{
	for (;;) {
		struct dray_cqe *c = &cq_ring[dray_ring_slot(cq_ci, CQ_DEPTH)];
		u8 phase = dray_ring_phase(cq_ci, CQ_DEPTH) ?
			   DRAY_CQE_F_PHASE : 0;
		struct taken_wqe w;
		struct fuzz_qp *f;
		u32 idx;

		if ((c->flags & DRAY_CQE_F_PHASE) != phase)
			break;
		f = qp_find(le32_to_cpu(c->qpn));
		FUZZ_ASSERT(f);
		FUZZ_ASSERT(c->status <= DRAY_CQE_ST_GENERAL_ERR);
		idx = le32_to_cpu(c->wqe_index);
		if (c->flags & DRAY_CQE_F_SEND_QUEUE) {
			/* In order; unsignaled successes write none. */
			FUZZ_ASSERT(c->opcode <= DRAY_CQE_FLUSH);
			FUZZ_ASSERT(idx - f->sq_cqe_next <
				    f->qp.sq.completed - f->sq_cqe_next);
			check_send_cqe(f, c, idx);
			f->sq_cqe_next = idx + 1;
		} else {
			/*
			 * Every receive WQE completes, in order; on an SRQ
			 * one the QP took, naming the tag the WQE had when
			 * taken (step_end(): which the SRQ's order gave it),
			 * an XRC one also its SRQ.
			 */
			FUZZ_ASSERT(c->opcode == DRAY_CQE_RECV ||
				    c->opcode == DRAY_CQE_RECV_RDMA_IMM);
			FUZZ_ASSERT(!(c->flags & DRAY_CQE_F_SRQ) == !on_srq);
			FUZZ_ASSERT(!(c->flags2 & DRAY_CQE_F2_XRC) == !xrc);
			if (xrc)
				FUZZ_ASSERT(le32_to_cpu(c->src_qpn) == SRQN);
			if (on_srq)
				FUZZ_ASSERT(f->rq_cqe_next != f->qp.rq.fetched);
			w = rwqe_of(f, f->rq_cqe_next);
			FUZZ_ASSERT(idx == w.tag);
			idx = f->rq_cqe_next++;
			/* A malformed WQE taken completes with the error. */
			if (w.bad)
				FUZZ_ASSERT(c->status == DRAY_CQE_ST_LOC_QP_OP_ERR);
			/*
			 * Its lkeys are checked against its queue's PD (an
			 * SRQ's, whatever the QP's): good ones never fail.
			 */
			if (!w.bad_key && !mr_gone[MR_RECV])
				FUZZ_ASSERT(c->status !=
					    DRAY_CQE_ST_LOC_PROT_ERR);
			if (c->status == DRAY_CQE_ST_SUCCESS &&
			    c->opcode == DRAY_CQE_RECV)
				FUZZ_ASSERT(le32_to_cpu(c->byte_len) <= w.len);
			if (f == ud)
				check_ud_cqe(c, &w);
		}
		TRACE("  cqe qp %#x %s wqe %u opcode %#x status %u verr %#x len %u\n",
		      f->qp.qpn, c->flags & DRAY_CQE_F_SEND_QUEUE ? "SQ" : "RQ",
		      idx, c->opcode, c->status, c->vendor_err,
		      le32_to_cpu(c->byte_len));
		cq_ci++;
	}
	cq_db.consumer = cpu_to_le32(cq_ci);
}

/*
 * A READ response carries the memory its request named: the bytes of the
 * MR (or the window's part of MR_RW) at the address of its packet.
 */
static void check_read_data(struct fuzz_qp *fq, const struct dray_pkt *pkt,
			    u32 f, const u8 *pay, u32 len)
{
	const struct dray_hw_qp *qp = &fq->qp;
	u32 mtu = dray_mtu_bytes(qp->path_mtu), i;
	const struct dray_xp_res *r = NULL;
	u64 va, off;
	int m;

	for (i = 0; qp->rdb && i < qp->max_dest_rd_atomic; i++)
		if (qp->rdb[i].type == DRAY_XP_RES_READ && qp->rdb[i].pending &&
		    dray_psn_add(qp->rdb[i].tx_psn, qp->rdb[i].tx_pkt) ==
		    pkt->psn)
			r = &qp->rdb[i];
	FUZZ_ASSERT(r);
	/*
	 * Never ahead of the furthest response sent for the request: a
	 * duplicate READ asking from a packet not yet sent is dropped (those
	 * come anyway; starting there would skip the ones before it).
	 */
	i = r - qp->rdb;
	FUZZ_ASSERT(i < ARRAY_SIZE(fq->read_tx));
	if (!fq->read_tx[i].seen || fq->read_tx[i].psn != r->psn) {
		fq->read_tx[i].seen = true;
		fq->read_tx[i].psn = r->psn;
		fq->read_tx[i].next = r->psn;
	}
	FUZZ_ASSERT(dray_psn_cmp(pkt->psn, fq->read_tx[i].next) <= 0);
	if (pkt->psn == fq->read_tx[i].next)
		fq->read_tx[i].next = dray_psn_add(pkt->psn, 1);
	/*
	 * The opcodes of the original response at these PSNs, also when a
	 * duplicate asks from the middle: a first only at the request's
	 * first PSN; a last where the range asked for ends.
	 */
	FUZZ_ASSERT(!(f & DRAY_OPF_START) == (pkt->psn != r->psn));
	FUZZ_ASSERT(!(f & DRAY_OPF_END) ==
		    (r->tx_pkt + 1 != dray_wire_npkts(r->tx_len, mtu)));
	if (!len)
		return;		/* a zero-length READ names no memory */
	va = r->tx_va + (u64)r->tx_pkt * mtu;
	if (r->rkey == mrs[MR_RO].key && !mr_gone[MR_RO] &&
	    mr_layout[MR_RO].pdn == req_pdn(fq)) {
		m = MR_RO;
		off = va - mrs[MR_RO].iova;
	} else {
		/* Only an MR of the QP's PD (or its window) is read. */
		m = rdma_mr(fq, r->rkey, va, &off);
		FUZZ_ASSERT(m >= 0 && !mr_gone[m]);
	}
	FUZZ_ASSERT(off + len <= mrs[m].length);
	for (i = 0; i < len; i++)
		FUZZ_ASSERT(pay[i] == mr_byte(m, off + i, false));
}

/*
 * The frame dray_xport_rx() has in hand (deliver()): what it may change,
 * the QP it names, and the remote access NAKs that QP sent for its PSN.
 */
static const struct allowed *rx_req;
static const struct fuzz_qp *rx_to;
static u32 rx_access_naks;

/* Every frame the NIC transmits. */
static void tx_check(struct sk_buff *skb)
{
	static u8 buf[DRAY_ETH_HLEN + 65536];
	const struct dray_hw_qp *qp = &fqps[0].qp;
	bool ipv6 = !qp->path.ipv4;
	struct fuzz_qp *from;
	struct dray_wire_l3 l3;
	struct dray_pkt pkt;
	u32 len = skb->len, l4, pay, crc, f;
	const u8 *ip = buf + DRAY_ETH_HLEN;
	int hlen;

	/* The UD QP has no send WQE: its pass and its frames send nothing. */
	FUZZ_ASSERT(!ud || cur != ud);
	FUZZ_ASSERT(len <= sizeof(buf) && len > DRAY_ETH_HLEN);
	FUZZ_ASSERT(!skb_copy_bits(skb, 0, buf, len));
	FUZZ_ASSERT(skb->dev == &ndev);
	FUZZ_ASSERT(!memcmp(buf, peer_mac, 6) && !memcmp(buf + 6, hw_mac, 6));
	FUZZ_ASSERT(get16(buf + 12) == (ipv6 ? DRAY_ETH_P_IPV6 : DRAY_ETH_P_IPV4));
	FUZZ_ASSERT(skb->protocol == htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP));
	len -= DRAY_ETH_HLEN;
	FUZZ_ASSERT(!dray_wire_parse_l3(ip, len, len, ipv6, &l3));
	FUZZ_ASSERT(l3.ip_hlen + DRAY_UDP_HLEN + l3.udp_len == len);
	l4 = l3.ip_hlen + DRAY_UDP_HLEN;
	hlen = dray_wire_parse(ip + l4, l3.udp_len, &pkt);
	FUZZ_ASSERT(hlen > 0);
	f = dray_opcodes[pkt.opcode].flags;
	/* An XRC target answers with XRC opcodes and sends no request. */
	FUZZ_ASSERT(f & (xrc ? DRAY_OPF_XRC : DRAY_OPF_RC));
	FUZZ_ASSERT(!xrc || (f & DRAY_OPF_RESP));
	/*
	 * To the peer of a QP, and from the QP the transport runs for (a
	 * frame for one QP or a pass over it sends nothing for another).
	 */
	for (from = fqps; from < fqps + nr_qp; from++)
		if (pkt.qpn == from->peer_qpn)
			break;
	FUZZ_ASSERT(from < fqps + nr_qp && (!cur || from == cur));
	FUZZ_ASSERT(pkt.pkey == DRAY_PKEY_DEFAULT);
	qp = &from->qp;
	FUZZ_ASSERT(!memcmp(l3.sgid, qp->path.sgid, 16) &&
		    !memcmp(l3.dgid, qp->path.dgid, 16));
	FUZZ_ASSERT(l3.udp_len >= hlen + pkt.pad + DRAY_ICRC_BYTES);
	pay = l3.udp_len - hlen - pkt.pad - DRAY_ICRC_BYTES;
	FUZZ_ASSERT((pay + pkt.pad) % 4 == 0);
	FUZZ_ASSERT(pay <= dray_mtu_bytes(qp->path_mtu));
	FUZZ_ASSERT((f & DRAY_OPF_PAYLOAD) || (!pay && !pkt.pad));
	if ((f & DRAY_OPF_PAYLOAD) && !(f & DRAY_OPF_END))
		FUZZ_ASSERT(pay == dray_mtu_bytes(qp->path_mtu));

	crc = dray_icrc_begin(ip, ipv6, ip + l3.ip_hlen, DRAY_UDP_HLEN + hlen);
	crc = dray_icrc_update(crc, ip + l4 + hlen, pay + pkt.pad);
	/* The ICRC goes least significant byte first. */
	FUZZ_ASSERT(__builtin_bswap32(get32(ip + len - 4)) ==
		    dray_icrc_final(crc));
	if (ipv6)
		FUZZ_ASSERT(skb->ip_summed == CHECKSUM_PARTIAL &&
			    skb->csum_offset == 6);

	TRACE("  tx qp %#x %s psn %#x len %u syndrome %#x msn %u\n",
	      qp->qpn, dray_opcodes[pkt.opcode].name, pkt.psn, pay,
	      pkt.syndrome, pkt.msn);
	if (f & DRAY_OPF_REQ) {
		/* The requester sends at its cursor. */
		FUZZ_ASSERT(pkt.psn == qp->xp.req.psn);
	} else {
		/* A response never names a request not yet received. */
		FUZZ_ASSERT(dray_psn_cmp(pkt.psn, qp->xp.resp.epsn) <= 0);
		if (f & DRAY_OPF_AETH)
			FUZZ_ASSERT(pkt.msn == qp->xp.resp.msn);
		if (f & (DRAY_OPF_READ | DRAY_OPF_ATOMIC))
			FUZZ_ASSERT(dray_psn_cmp(pkt.psn, qp->xp.resp.epsn) < 0);
		if (f & DRAY_OPF_READ)
			check_read_data(from, &pkt, f, ip + l4 + hlen, pay);
		/*
		 * A key allowing the access in the QP's PD: never refused
		 * (an XRC target's NAK is an XRC Acknowledge).
		 */
		if (dray_wire_op(pkt.opcode) == DRAY_OP_ACK &&
		    pkt.syndrome == (DRAY_AETH_NAK | DRAY_NAK_REM_ACCESS) &&
		    rx_req && rx_req->named && from == rx_to &&
		    pkt.psn == rx_req->psn) {
			FUZZ_ASSERT(!rx_req->key_ok);
			rx_access_naks++;
		}
	}
}

/* --- one engine pass for a QP, as dev_engine.c's engine_qp() ---------- */

static void engine_qp(struct dray_hw_qp *qp, bool timer, bool late)
{
	if (qp->state == DRAY_QPS_ERR) {
		if (qp->err_pending) {
			qp->err_pending = false;
			dray_xport_error(&hw, qp);
		}
		dray_hw_qp_flush(&hw, qp);
		return;
	}
	dray_hw_wq_poll(&hw, qp, &qp->sq);
	dray_hw_wq_poll(&hw, qp, &qp->rq);
	if (qp->state == DRAY_QPS_ERR)
		return;
	if (timer && qp->deadline) {
		if (time_after(qp->deadline, jiffies))
			jiffies = qp->deadline;
		if (late)
			jiffies += 4 * HZ;
	}
	if (qp->deadline && time_after_eq(jiffies, qp->deadline)) {
		qp->deadline = 0;
		dray_xport_timer(&hw, qp);
	}
	if (dray_xport_want_run(qp))
		dray_xport_send(&hw, qp);
	dray_hw_sq_publish(&hw, qp);
	if (qp->state == DRAY_QPS_SQD && qp->sq_draining &&
	    dray_xport_sq_idle(qp)) {
		qp->sq_draining = false;
		dray_hw_qp_event(&hw, qp, DRAY_EQE_SQ_DRAINED);
	}
}

/*
 * Who took the SRQ's WQEs. Around each call into the transport for one
 * QP (a frame it receives, its engine pass, a command), the WQEs the SRQ
 * gave out went to that QP only, one each: the SRQ's next ones, in its
 * order, each recorded as it was when taken for the QP's CQEs to name
 * (cq_consume()). A WQE taken below an armed limit fired it.
 */
static struct {
	bool	on;		/* the SRQ was there */
	bool	armed;
	u32	taken;
	u32	fetched[NR_QP];
	long	events;
	/* each QP's completed indexes and oldest unacknowledged PSN */
	u32	sq_done[NR_QP], rq_done[NR_QP], una[NR_QP];
	u32	cq_pi;		/* the shared CQ's */
} step;

static void step_begin(struct fuzz_qp *f)
{
	u32 i;

	cur = f;
	step.on = srq.hw;
	step.armed = srq.hw && srq.hw->limit;
	step.taken = srq.hw ? srq.hw->taken : 0;
	step.events = fuzz_counts.events;
	for (i = 0; i < nr_qp; i++) {
		step.fetched[i] = fqps[i].qp.rq.fetched;
		step.sq_done[i] = fqps[i].qp.sq.completed;
		step.rq_done[i] = fqps[i].qp.rq.completed;
		step.una[i] = fqps[i].qp.xp.req.una;
	}
	step.cq_pi = cq.pi;
}

/*
 * A call for one QP (a frame it receives, its pass, a command) completes
 * only that QP's WQEs: an ACK or a response for one QP never completes,
 * acknowledges or flushes another's; every CQE it wrote names that QP.
 */
static void step_isolated(void)
{
	u32 i, p;

	if (!cur)
		return;
	for (i = 0; i < nr_qp; i++) {
		if (&fqps[i] == cur)
			continue;
		FUZZ_ASSERT(fqps[i].qp.sq.completed == step.sq_done[i]);
		FUZZ_ASSERT(fqps[i].qp.rq.completed == step.rq_done[i]);
		FUZZ_ASSERT(fqps[i].qp.xp.req.una == step.una[i]);
	}
	for (p = step.cq_pi; p != cq.pi; p++)
		FUZZ_ASSERT(le32_to_cpu(cq_ring[dray_ring_slot(p, CQ_DEPTH)].qpn) ==
			    cur->qp.qpn);
}

static void step_end(void)
{
	const struct dray_hw_srq *h = srq.hw;
	struct fuzz_qp *taker = NULL;
	u32 i, n = 0, s, r;

	step_isolated();
	if (!on_srq)
		goto out;
	for (i = 0; i < nr_qp; i++) {
		u32 d = fqps[i].qp.rq.fetched - step.fetched[i];

		if (!d)
			continue;
		/* One QP took, the one the call was for. */
		FUZZ_ASSERT(!taker && (!cur || cur == &fqps[i]));
		taker = &fqps[i];
		n = d;
	}
	if (!step.on || !h) {
		FUZZ_ASSERT(!n);	/* destroyed, or there was none */
		goto out;
	}
	/* Each WQE given out, taken once: n of them, the SRQ's next n. */
	FUZZ_ASSERT(h->taken - step.taken == n);
	for (i = 0; i < n; i++) {
		s = (step.taken + i) % SRQ_DEPTH;
		r = step.fetched[taker - fqps] + i;
		taker->taken[r % TAKEN_LOG] = (struct taken_wqe){
			.tag = srq_tags[s],
			.len = rq_posted_len[s],
			.bad = rq_bad[s],
			.bad_key = rq_bad_key[s],
		};
	}
	/* The device's record of the WQE it holds: the last one taken. */
	if (n)
		FUZZ_ASSERT(taker->qp.srq_tag == srq_tags[s]);
	/* A WQE taken below an armed limit fired it (and disarmed it). */
	if (step.armed && n && !h->error)
		FUZZ_ASSERT(!h->limit || h->posted - h->taken >= h->limit);
	if (step.armed && !h->limit)
		FUZZ_ASSERT(fuzz_counts.events > step.events);
out:
	cur = NULL;
}

/*
 * One engine pass: each QP in turn (dev_engine.c's active list); @timer
 * and @late for the QP @t only.
 */
static void engine(const struct fuzz_qp *t, bool timer, bool late)
{
	u32 i;

	for (i = 0; i < nr_qp; i++) {
		step_begin(&fqps[i]);
		engine_qp(&fqps[i].qp, t == &fqps[i] && timer,
			  t == &fqps[i] && late);
		step_end();
	}
}

/* --- what software does meanwhile: command records ---------------------- */

/*
 * DESTROY_MR as dev_mem.c does it: refused while windows are bound;
 * unpublished under engine.lock (which the harness holds), then the pages
 * unpinned and the MR freed. Here the MR is poisoned and a page whose last
 * reference goes is freed: whatever still used either would fault.
 */
static void cmd_destroy_mr(int m)
{
	struct dray_hw_mr *mr = &mrs[m];
	u32 p;

	if (mr_gone[m] || mr->windows)
		return;
	FUZZ_ASSERT(xa_erase(&hw.engine.mrs, mr_layout[m].index) == mr);
	for (p = 0; p < mr->n_pages; p++) {
		mr_pages[m][p].unpinned = true;
		put_page(&mr_pages[m][p]);
	}
	mr_gone[m] = true;
	memset(mr, 0xdb, sizeof(*mr));
	mr->n_pages = 0;
}

/* Command records: a zero-length F_RAW record, the command in ctl[7:4]. */
enum {
	CMD_DESTROY_RO,		/* DESTROY_MR of MR_RO */
	CMD_DESTROY_RECV,	/* ... of MR_RECV, the receive buffers */
	CMD_DESTROY_SRC,	/* ... of MR_SRC, the send buffers */
	CMD_INVALIDATE_MW,	/* LOCAL_INV of the window (BUSY no more) */
	CMD_DESTROY_RW,		/* DESTROY_MR of MR_RW (BUSY with a window) */
	CMD_SQD,		/* MODIFY_QP to SQD */
	CMD_RTS,		/* MODIFY_QP back to RTS */
	CMD_RETRY,		/* MODIFY_QP in RTS/SQD: retry counts */
	CMD_REWRITE_SQ,		/* software rewrites the oldest send WQE */
	CMD_ERR,		/* MODIFY_QP to ERR */
	CMD_REWRITE_SRQ,	/* software rewrites the SRQ's next WQE */
	CMD_SRQ_BAD_PI,		/* ... writes a producer index out of range */
	CMD_SRQ_LIMIT,		/* MODIFY_SRQ: the limit armed */
	CMD_DESTROY_SRQ,	/* DESTROY_SRQ (an XRC SRQ: no QP holds it) */
};

/*
 * Software rewrites the SRQ WQE the device takes next, against the rules
 * (a process may); which way depends on its index and the rewrites
 * before: an SGE keyed with another PD's MR, inside it, which must not
 * be written through it; more SGEs than the stride holds; a tag not
 * below the depth. The last two must complete with LOC_QP_OP_ERR
 * naming the tag the WQE has when the device takes it.
 */
static void srq_rewrite(void)
{
	u32 index = le32_to_cpu(srq.db.consumer);
	u8 *slot = wq_slot(srq.ring, index, SRQ_DEPTH, SRQ_LOG_STRIDE);
	struct dray_sge *sge = (struct dray_sge *)(slot + DRAY_SRQ_WQE_HDR_SIZE);

	if (!srq.hw || index == le32_to_cpu(srq.db.producer))
		return;
	switch ((index + srq_rewrites++) % 3) {
	case 0:
		/* Inside MR_OTHER (no SGE is longer): only the PD refuses. */
		sge[0].addr = cpu_to_le64(mrs[MR_OTHER].iova);
		sge[0].lkey = cpu_to_le32(mrs[MR_OTHER].key);
		rq_bad_key[index % RQ_DEPTH] = true;
		break;
	case 1:
		slot[0] = 4;
		rq_bad[index % RQ_DEPTH] = true;
		break;
	case 2:
		srq_tags[index % SRQ_DEPTH] = SRQ_DEPTH + index % 7;
		((struct dray_srq_wqe *)slot)->tag =
			cpu_to_le32(srq_tags[index % SRQ_DEPTH]);
		rq_bad[index % RQ_DEPTH] = true;
		break;
	}
}

/* MODIFY_SRQ (dev_srq.c): a limit below the depth, set under engine.lock. */
static void srq_arm_limit(void)
{
	struct dray_hw_srq *h = srq.hw;

	if (h)
		h->limit = clamp_t(u32, le32_to_cpu(srq.db.producer) - h->taken,
				   1, SRQ_DEPTH - 1);
}

/* Command @cmd; those of a QP (CMD_SQD to CMD_ERR) for @f. */
static void command(struct fuzz_qp *f, u8 cmd)
{
	struct dray_hw_qp *qp = &f->qp;
	u8 state = qp->state;

	TRACE("command %u\n", cmd);
	switch (cmd) {
	case CMD_DESTROY_RO:
	case CMD_DESTROY_RECV:
	case CMD_DESTROY_SRC:
	case CMD_DESTROY_RW:
		cmd_destroy_mr(cmd == CMD_DESTROY_RO ? MR_RO :
			       cmd == CMD_DESTROY_RECV ? MR_RECV :
			       cmd == CMD_DESTROY_SRC ? MR_SRC : MR_RW);
		break;
	case CMD_INVALIDATE_MW:
		/* Software's LOCAL_INV, posted to the first QP. */
		if (!dray_hw_key_invalidate(&hw, fqps[0].qp.pdn, &fqps[0].qp,
					    MW_KEY, false))
			FUZZ_ASSERT(mr_gone[MR_RW] || !mrs[MR_RW].windows);
		break;
	case CMD_SQD:
	case CMD_RTS:
		/* RTS -> SQD starts draining (dev_qp.c); SQD -> RTS resumes. */
		if (state != (cmd == CMD_SQD ? DRAY_QPS_RTS : DRAY_QPS_SQD))
			break;
		qp->state = cmd == CMD_SQD ? DRAY_QPS_SQD : DRAY_QPS_RTS;
		qp->sq_draining = cmd == CMD_SQD;
		dray_xport_modify(&hw, qp, DRAY_QP_ATTR_STATE, state);
		break;
	case CMD_RETRY:
		/* Not an attribute of a UD QP (dev_qp_fsm.c). */
		if ((state != DRAY_QPS_RTS && state != DRAY_QPS_SQD) ||
		    dray_hw_qpt_dg(qp->type))
			break;
		qp->retry_cnt = (qp->retry_cnt + 1) & 7;
		qp->rnr_retry = (qp->rnr_retry + 3) & 7;
		dray_xport_modify(&hw, qp, DRAY_QP_ATTR_RETRY_CNT |
				  DRAY_QP_ATTR_RNR_RETRY, state);
		break;
	case CMD_REWRITE_SQ: {
		/* Against the rules (dray_queue.h), but a process may. */
		struct dray_sq_wqe *w = wq_slot(f->sq_ring, qp->sq.completed,
						SQ_DEPTH, SQ_LOG_STRIDE);

		w->opcode ^= 1;
		w->length = cpu_to_le32(le32_to_cpu(w->length) + 1);
		f->sent[qp->sq.completed % SQ_DEPTH].rewritten = true;
		break;
	}
	case CMD_ERR:
		/* dev_qp.c's qp_set_state(): asked for by software. */
		dray_hw_qp_error(&hw, qp, 0, DRAY_VERR_NONE);
		break;
	case CMD_REWRITE_SRQ:
		srq_rewrite();
		break;
	case CMD_SRQ_BAD_PI:
		if (srq.hw)
			srq.db.producer = cpu_to_le32(srq.hw->taken +
						      SRQ_DEPTH + 1);
		break;
	case CMD_SRQ_LIMIT:
		srq_arm_limit();
		break;
	case CMD_DESTROY_SRQ:
		/* An SRQ with QPs on it is BUSY (dev_srq.c). */
		if (xrc)
			srq_destroy(&srq);
		break;
	}
}

/* --- frames from the peer --------------------------------------------------- */

static u8 frame[DRAY_ETH_HLEN + DRAY_IPV6_HLEN + DRAY_UDP_HLEN + 65536];

/*
 * Put the peer's IP/UDP headers and the ICRC around @body; the BTH
 * pointed at the first QP unless F_KEEP_QPN, or it names another QP of
 * the input.
 */
static u32 frame_build(const u8 *body, u32 len, u8 ctl)
{
	const struct dray_hw_path *path = &fqps[0].qp.path;
	struct dray_wire_addr a = {
		.ipv6 = !path->ipv4,
		.hop_limit = 64,
		.sport = 0xc321,
	};
	u32 l2l4, crc;
	u8 *ip, *bth;

	memcpy(a.smac, peer_mac, 6);
	memcpy(a.dmac, hw_mac, 6);
	memcpy(a.sgid, path->dgid, 16);
	memcpy(a.dgid, path->sgid, 16);
	l2l4 = dray_wire_build_l3(&a, len + DRAY_ICRC_BYTES, frame);
	bth = frame + l2l4;
	memcpy(bth, body, len);
	if (!(ctl & F_KEEP_QPN) && len >= sizeof(struct dray_bth) &&
	    !qp_find(get32(bth + 4) & DRAY_QPN_MASK)) {
		bth[5] = QPN >> 16;
		bth[6] = QPN >> 8;
		bth[7] = QPN & 0xff;
	}
	ip = frame + DRAY_ETH_HLEN;
	if (len + DRAY_UDP_HLEN >= DRAY_UDP_HLEN + sizeof(struct dray_bth)) {
		crc = dray_icrc_begin(ip, a.ipv6, bth - DRAY_UDP_HLEN,
				      DRAY_UDP_HLEN + len);
		crc = dray_icrc_final(crc);
	} else {
		crc = 0;
	}
	if (ctl & F_BAD_ICRC)
		crc ^= 1;
	put_unaligned_le32(crc, bth + len);
	return l2l4 - DRAY_ETH_HLEN + len + DRAY_ICRC_BYTES;
}

static void deliver(const u8 *body, u32 len, u8 ctl)
{
	const struct dray_hw_qp *qp = &fqps[0].qp;
	bool ipv6 = !qp->path.ipv4;
	struct fuzz_qp *to;
	struct allowed a;
	struct sk_buff *skb;
	const u8 *ip;
	u32 iplen, taken, epsn, to_fetched;
	struct ud_before udb;
	bool live, err;
	u8 mw_state;

	if ((ctl & F_RAW) && !len) {
		to = &fqps[0];
		if (ud && (ctl & C_UD))
			to = ud;
		else if ((ctl & C_QP3) && qp_find(QPN3))
			to = qp_find(QPN3);
		else if ((ctl & C_QP2) && qp_find(QPN2))
			to = qp_find(QPN2);
		step_begin(to);
		command(to, ctl >> 4);
		step_end();
		engine(NULL, false, false);
		check_memory(&(struct allowed){ .mr = -1 });
		check_state();
		return;
	}
	if (ctl & F_RAW) {
		ip = body;
		iplen = len;
	} else {
		iplen = frame_build(body, len, ctl);
		ip = frame + DRAY_ETH_HLEN;
	}
	if (ctl & F_POST_RQ)
		rq_post();
	a = frame_allowed(ip, iplen, ipv6, &to);

	skb = fuzz_skb_from(ip, iplen);
	skb->protocol = htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	skb->dev = &ndev;
	skb->pkt_type = ctl & F_LOOPBACK ? PACKET_LOOPBACK : PACKET_HOST;
	fuzz_fail_alloc = ctl & F_NOMEM;
	TRACE("rx ctl %#x len %u qp %#x: %s\n", ctl, iplen,
	      to ? to->qp.qpn : 0,
	      iplen > 28 ? dray_opcodes[ip[ipv6 ? 48 : 28]].name ?: "?" : "-");
	taken = qp->rq.fetched;
	mw_state = mw.state;
	live = to && !to->qp.xp.err && to->qp.state != DRAY_QPS_ERR;
	epsn = to ? to->qp.xp.resp.epsn : 0;
	to_fetched = to ? to->qp.rq.fetched : 0;
	rx_req = &a;
	rx_to = to;
	rx_access_naks = 0;
	if (ud)
		ud_snapshot(&udb);
	step_begin(to);
	dray_xport_rx(&hw, skb);
	step_end();
	rx_req = NULL;
	if (ud && to == ud)
		check_ud_rx(&a, ctl, &udb);
	else if (ud)
		FUZZ_ASSERT(ud->qp.rq.fetched == udb.fetched);
	if (a.ud_other)
		FUZZ_ASSERT(to->qp.rq.fetched == to_fetched);
	/*
	 * A new request whose R_Key does not allow its access in the QP's
	 * PD is never carried out: the QP errs (with a remote access NAK
	 * if nothing else was wrong with it), or the frame was dropped.
	 */
	if (live && a.named && !a.key_ok && a.psn == epsn) {
		err = to->qp.xp.err || to->qp.state == DRAY_QPS_ERR;
		FUZZ_ASSERT(err || to->qp.xp.resp.epsn == epsn);
		if (err && a.plain && !(ctl & (F_RAW | F_BAD_ICRC | F_NOMEM)))
			FUZZ_ASSERT(rx_access_naks == 1);
	}
	if (!on_srq)
		for (; taken != qp->rq.fetched; taken++)
			if (rq_bad[taken % RQ_DEPTH])
				rq_bad_taken[taken % RQ_DEPTH] = true;
	/* The window is bound to the first QP: no other invalidates it. */
	if (to && to != &fqps[0])
		FUZZ_ASSERT(mw.state == mw_state);
	engine(to ?: &fqps[0], ctl & F_TIMER, ctl & F_LATE);
	fuzz_fail_alloc = false;
	check_memory(&a);
	check_state();
	for (to = fqps; to < fqps + nr_qp; to++)
		TRACE("  qp %#x state %u err %d epsn %#x msn %u | una %#x psn %#x max %#x head %u fetch %u\n",
		      to->qp.qpn, to->qp.state, to->qp.xp.err,
		      to->qp.xp.resp.epsn, to->qp.xp.resp.msn,
		      to->qp.xp.req.una, to->qp.xp.req.psn,
		      to->qp.xp.req.max_psn, to->qp.xp.req.head,
		      to->qp.xp.req.fetch);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* fuzz_comp: n (1 byte), then n WQE descriptors, posted to @f. */
static __attribute__((unused)) void sq_post_list(struct fuzz_qp *f,
						 const u8 *data, size_t size,
						 size_t *pos)
{
	u32 n, i;

	if (*pos >= size)
		return;
	n = data[(*pos)++] % (SQ_WQES + 1);
	for (i = 0; i < n && *pos + WQE_DESC <= size; i++) {
		if (le32_to_cpu(f->sq_db.producer) - f->qp.sq.completed <
		    SQ_DEPTH)
			sq_post(f, data + *pos);
		*pos += WQE_DESC;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	u32 i;

	(void)argc;
	(void)argv;
	for (i = 0; i < NR_QP; i++) {
		fqps[i].sq_ring = calloc(SQ_DEPTH, 1U << SQ_LOG_STRIDE);
		fqps[i].rq_ring = calloc(RQ_DEPTH, 1U << RQ_LOG_STRIDE);
		FUZZ_ASSERT(fqps[i].sq_ring && fqps[i].rq_ring);
	}
	cq_ring = calloc(CQ_DEPTH, sizeof(*cq_ring));
	other_cq_ring = calloc(CQ_DEPTH, sizeof(*other_cq_ring));
	srq.ring = calloc(SRQ_DEPTH, 1U << SRQ_LOG_STRIDE);
	other_srq.ring = calloc(SRQ_DEPTH, 1U << SRQ_LOG_STRIDE);
	FUZZ_ASSERT(cq_ring && other_cq_ring && srq.ring && other_srq.ring);
	fuzz_tx_hook = tx_check;
	trace = getenv("FUZZ_TRACE");
	return 0;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct allowed none = { .mr = -1 };
	size_t pos = CFG_BYTES;
	u32 frames = 0, i;

	if (size < CFG_BYTES)
		return 0;
	memcpy(&cfg, data, CFG_BYTES);
	fuzz_env_reset();
	jiffies = 1000;
	setup();

#if FUZZ_COMP
	/* The first QP's send WQEs; with CFG_SQ2, the second's then. */
	sq_post_list(&fqps[0], data, size, &pos);
	if ((cfg.rq_sge & CFG_SQ2) && qp_find(QPN2))
		sq_post_list(qp_find(QPN2), data, size, &pos);
#endif
	/* The first pass: doorbells read, requests sent. */
	engine(NULL, false, false);
	check_memory(&none);
	check_state();
	cq_consume();

	while (pos + 3 <= size) {
		u8 ctl = data[pos];
		u32 len = get16(data + pos + 1);

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		deliver(data + pos, len, ctl);
		pos += len;
		if (!(cfg.flags & CFG_LAZY_CQ) || ++frames % 8 == 0)
			cq_consume();
	}
	/* Let the QPs finish: a pass that sends what is owed, then a flush. */
	for (i = 0; i < nr_qp; i++)
		engine(&fqps[i], true, false);
	check_memory(&none);
	check_srqs();
	cq_consume();

	/* Nothing either QP sent or received is left over. */
	FUZZ_ASSERT(fuzz_counts.skbs == 0 && fuzz_counts.frag_pages == 0);
	/* DESTROY_QP of each (dev_qp.c): unpublished, transport reset. */
	for (i = 0; i < nr_qp; i++) {
		struct dray_hw_qp *qp = &fqps[i].qp;

		FUZZ_ASSERT(xa_erase(&hw.engine.qps, qp->qpn) == qp);
		dray_xport_reset(&hw, qp);
		free(qp->rdb);
		qp->rdb = NULL;
	}
	srq_destroy(&srq);
	srq_destroy(&other_srq);
	hw.engine.lock.held = 0;
	return 0;
}
