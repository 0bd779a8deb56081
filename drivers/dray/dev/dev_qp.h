/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: verbs objects and the queue engine — the contract
 * between the object/engine layer (dev_mem.c, dev_cq.c, dev_qp.c,
 * dev_engine.c) and the RoCEv2 transport (dev_net.c, dev_req.c,
 * dev_resp.c, dev_comp.c, declared in dev_xport.h).
 *
 * Concurrency: data-path work is done in engine passes (dev_engine.c),
 * each under engine.lock, a spinlock taken with bottom halves off. A
 * pass runs on the engine thread, in the softirq that received a frame,
 * or in the context that wrote DRAY_REG_ENGINE_KICK, whichever finds the
 * lock free: everything a pass does must not sleep (GFP_ATOMIC). Admin
 * commands are serialized by engine.admin_lock (a mutex; allocations
 * and mappings happen under it) and take engine.lock only around the
 * steps that publish, change or unpublish what a pass sees: MRs, AHs and
 * QPs in the xarrays, QP state and attributes. So once an admin command
 * dropped engine.lock after unpublishing an object, no pass uses it.
 * PDs and CQs are found by passes only through QPs and MRs, whose
 * references (users) admin commands count under admin_lock.
 * Everything in these structures is protected by engine.lock unless a
 * comment says otherwise; every function here expects it held
 * (lockdep_assert_held) except where noted.
 *
 * Only dev.h includes this header (after the DRAY_HW_* limits it uses);
 * other files include "dev.h".
 *
 * Ring indexes: every SQ and RQ index is free running (u32). For a work
 * queue, completed <= fetched <= posted (mod 2^32) and
 * posted - completed <= depth always hold: posted is the producer index
 * read from the doorbell record and validated by the engine (a value
 * outside [fetched, completed + depth] is a protocol violation that moves
 * the QP to ERR with DRAY_VERR_*_DOORBELL), so the transport never
 * reads the user-writable record itself. The device may read an SQ WQE
 * again until it is completed (dray_queue.h: software does not reuse a
 * slot before that); whatever it reads is validated again.
 *
 * Who moves what: the engine moves posted; the transport moves
 * sq.fetched (when it starts a WQE: dray_hw_sq_fetch() only reads) and
 * completes through dray_hw_sq_complete()/dray_hw_rq_complete(), which
 * move completed; dray_hw_rq_fetch() moves rq.fetched. After the
 * transport ran, the engine checks sq.fetched and publishes it as the
 * doorbell record's consumer index.
 *
 * Engine calls into the transport, per pass: dray_xport_rx() for queued
 * frames; then for each QP not in RESET, ERR or INIT: dray_xport_timer()
 * if its deadline is due, and dray_xport_send() if the QP is in RTR, RTS
 * or SQD (every pass: the transport returns at once if it has nothing to
 * do). The engine sleeps only after passes that changed nothing it can
 * see (no frame, no doorbell move, no due deadline, no kick): a
 * transport with work left keeps it awake with a deadline at or before
 * jiffies, or with dray_hw_engine_kick().
 */
#ifndef DRAY_DEV_QP_H
#define DRAY_DEV_QP_H

#include <linux/if_ether.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <dray/dray_admin.h>
#include <dray/dray_queue.h>

struct dray_hw;
struct dray_aq_entry;
struct dray_aq_result;
struct dray_uar;

/* Object numbering: 0 is never a valid PD, CQ, AH or MR index. */
#define DRAY_HW_QPN_FIRST	2	/* QPN 0 and 1 (GSI) are reserved */
#define DRAY_HW_QPN_GSI		1	/* the one QP of type DRAY_QPT_GSI */
#define DRAY_HW_GSI_QKEY	0x80010000U	/* IBTA 13.5.1: QP1's Q_Key */

/*
 * Datagram QPs: UD and the GSI QP (QP1), which is a UD QP with a fixed
 * QPN and Q_Key; the UD service (dev_ud.c) runs both.
 */
static inline bool dray_hw_qpt_dg(u8 type)
{
	return type == DRAY_QPT_UD || type == DRAY_QPT_GSI;
}

struct dray_hw_pd {
	u32	pdn;
	u32	users;		/* MRs, QPs and AHs on this PD */
};

struct dray_hw_mr {
	u32		key;
	u32		pdn;
	u8		access;		/* DRAY_ACCESS_* */
	u8		flags;		/* DRAY_MR_F_* */
	u64		iova;
	u64		length;
	u32		n_pages;
	struct page	**pages;	/* from the MTT, n_pages entries */
};

/* The MR table index of a key. */
static inline u32 dray_hw_mr_index(u32 key)
{
	return FIELD_GET(DRAY_KEY_INDEX_MASK, key);
}

/* A host buffer given by page list and mapped contiguously by the model. */
struct dray_hw_buf {
	struct page	**pages;
	u32		n_pages;
	void		*vaddr;		/* vmap() of pages */
};

struct dray_hw_cq {
	u32			cqn;
	u32			depth;
	u32			eqn;
	struct dray_hw_buf	buf;
	struct dray_cq_db	*db;
	struct dray_cqe		*ring;
	u32			pi;		/* CQEs written */
	u32			ci_seen;	/* last valid consumer index read */
	u32			arm_seq_seen;
	bool			error;		/* overflowed; writes dropped */
	u32			users;		/* QPs using this CQ */
};

/* A send or receive queue as the device sees it. */
struct dray_hw_wq {
	struct dray_hw_buf	buf;
	struct dray_wq_db	*db;
	void			*ring;
	u32			depth;
	u32			log_stride;
	u32			fetched;	/* next WQE index to fetch */
	u32			completed;	/* next WQE index to complete */
	u32			posted;		/* validated producer index */
	u32			db_consumer;	/* last consumer index published */
};

/* A send WQE copied out of the ring and validated (dray_hw_sq_fetch). */
struct dray_hw_swqe {
	u32			index;		/* free-running WQE index */
	struct dray_sq_wqe	hdr;
	u32			num_sge;
	u32			length;		/* total payload bytes */
	u8			vendor_err;	/* DRAY_VERR_* if fetch failed */
	struct dray_sge		sge[DRAY_HW_MAX_SGE];
	u8			*inline_data;	/* points into inline_buf */
	u8			inline_buf[DRAY_HW_MAX_INLINE];
};

/* A receive WQE copied out of the ring (dray_hw_rq_fetch). */
struct dray_hw_rwqe {
	u32			index;
	u32			num_sge;
	u64			length;		/* total capacity */
	struct dray_sge		sge[DRAY_HW_MAX_SGE];
};

/* Resolved path: what a frame needs (from dray_path and the GID table). */
struct dray_hw_path {
	u8		dmac[ETH_ALEN];
	u8		sgid[16];
	u8		dgid[16];
	bool		ipv4;		/* both GIDs are IPv4-mapped */
	u8		sgid_index;	/* where sgid came from */
	u8		hop_limit;	/* never 0 (0 in dray_path means 64) */
	u8		traffic_class;
	u32		flow_label;
	u16		udp_sport;	/* never 0: derived if dray_path has 0 */
};

struct dray_hw_ah {
	u32			ahn;
	u32			pdn;
	struct dray_hw_path	path;
};

#include "dev_xport.h"
#include "dev_ud.h"

struct dray_hw_qp {
	u32			qpn;
	u8			type;		/* enum dray_qp_type */
	u8			state;		/* enum dray_qp_state */
	u8			flags;		/* DRAY_QP_F_* */
	bool			sq_draining;	/* SQD requested, not drained */
	u32			pdn;
	u32			uar_index;
	struct dray_hw_cq	*send_cq;
	struct dray_hw_cq	*recv_cq;
	struct dray_hw_wq	sq;
	struct dray_hw_wq	rq;

	/* attributes (MODIFY_QP) */
	u8			path_mtu;	/* enum dray_mtu */
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;
	u8			access;		/* DRAY_ACCESS_REMOTE_* */
	u32			dest_qpn;
	u32			qkey;
	u32			sq_psn;		/* as set by MODIFY_QP */
	u32			rq_psn;
	struct dray_hw_path	path;

	/* transport state, owned by the dev_xport layer */
	struct dray_xport_qp	xp;
	struct dray_ud_qp	ud;		/* UD QPs (dev_ud.c) */

	/* engine bookkeeping */
	struct list_head	active;		/* on engine.active */
	unsigned long		deadline;	/* jiffies; 0 = no timer */
	bool			err_pending;	/* ERR: dray_xport_error() due */
	bool			db_broken;	/* doorbells no longer read */
};

struct dray_hw_engine {
	spinlock_t		lock;		/* see the top of this file */
	struct mutex		admin_lock;	/* admin commands; ditto */
	struct task_struct	*thread;
	bool			polling;	/* thread awake, will pass again */
	struct timer_list	timer;		/* QP deadlines while not polling */
	bool			stopped;	/* no more passes */
	wait_queue_head_t	wait;
	atomic_t		pending;	/* wake-up reasons since last pass */
	atomic_t		rerun;		/* work for the lock holder */
	struct sk_buff_head	rx_queue;	/* own lock; filled in softirq */
	struct list_head	active;		/* QPs not in RESET */
	struct xarray		pds, mrs, cqs, qps, ahs;
	/* Entries change under both locks; PDs and CQs under admin_lock. */
	u32			mr_key_seq;	/* next MR index; admin_lock */
	u64			kicks;		/* wake-up calls; under obj_lock */
	u8			*mr_variant;	/* key low byte; admin_lock */
	u32			qpn_next;	/* next QPN; admin_lock */
	u32			pdn_next, cqn_next, ahn_next;	/* admin_lock */
	bool			need_wakeup;	/* UARs flagged; under obj_lock */
	atomic64_t		rx_dropped;	/* rx_queue full (statistics) */
	u64			sleeps;		/* engine thread only: sleeps */
};

/*
 * dev_mem.c: buffers, MRs and memory access with protection checks.
 *
 * dray_hw_buf_map() walks @n_pages MTT entries from @mtt_addr and vmap()s
 * the pages. Returns DRAY_AQ_STS_OK, or a DRAY_AQ_STS_* status with
 * *syndrome set (DMA_ERROR/MTT for an unusable MTT page or entry).
 * Context: process; engine.lock not required.
 */
int dray_hw_buf_map(struct dray_hw *hw, u64 mtt_addr, u32 n_pages,
		    struct dray_hw_buf *buf, u32 *syndrome);
void dray_hw_buf_unmap(struct dray_hw_buf *buf);
/* Admin commands CREATE_MR / DESTROY_MR (take engine.lock). */
void dray_hw_cmd_create_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_mr_free(struct dray_hw *hw, struct dray_hw_mr *mr);

/* Why a memory access was refused; dray_hw_mr_check() result. */
enum dray_mr_err {
	DRAY_MR_OK = 0,
	DRAY_MR_ERR_KEY,	/* no such key */
	DRAY_MR_ERR_PD,		/* MR on another PD */
	DRAY_MR_ERR_ACCESS,	/* right not granted */
	DRAY_MR_ERR_RANGE,	/* outside [iova, iova + length) */
};

/*
 * @access: the DRAY_ACCESS_* rights the access needs (0: local read).
 * A zero @len passes the range check at any @addr. On DRAY_MR_OK, *mr
 * is the MR, valid until engine.lock is released.
 */
enum dray_mr_err dray_hw_mr_check(struct dray_hw *hw, u32 key, u32 pdn,
				  u8 access, u64 addr, u64 len,
				  struct dray_hw_mr **mr);
/* Copy into or out of a checked MR range. */
void dray_hw_mr_write(struct dray_hw_mr *mr, u64 addr, const void *src,
		      size_t len);
void dray_hw_mr_read(struct dray_hw_mr *mr, u64 addr, void *dst, size_t len);
/*
 * May the transport take page references on the MR's pages (zero copy)?
 * Not for a DRAY_MR_F_PHYSICAL MR: its pages are any RAM, e.g. the tail
 * pages of a non-compound allocation, whose refcount is zero.
 */
static inline bool dray_hw_mr_zcopy_ok(const struct dray_hw_mr *mr)
{
	return !(mr->flags & DRAY_MR_F_PHYSICAL);
}

/* The page and in-page offset/length of the piece at addr (zero copy). */

struct page *dray_hw_mr_page(struct dray_hw_mr *mr, u64 addr, u32 *offset,
			     u32 *len);
/*
 * 8-byte atomic at addr (8-byte aligned, checked): compare-and-swap when
 * cmp_swap, else fetch-and-add. Returns the original value. A misaligned
 * addr is refused (returns 0, memory untouched): check it before.
 */
u64 dray_hw_mr_atomic(struct dray_hw_mr *mr, u64 addr, bool cmp_swap,
		      u64 compare_add, u64 swap);

/* dev_cq.c */
void dray_hw_cmd_create_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cq_free(struct dray_hw *hw, struct dray_hw_cq *cq);
/* Does a CQ raise its events on this EQ? Takes engine.lock. */
bool dray_hw_eq_in_use(struct dray_hw *hw, u32 eqn);
/*
 * Write one CQE (phase and flags handled here; cqe->flags holds the
 * other DRAY_CQE_F_* bits). Raises a completion event if the CQ is armed
 * and the CQE matches the arm. Overflow puts the CQ in error and raises
 * DRAY_EQE_CQ_ERROR. Returns false if the CQE could not be written.
 */
bool dray_hw_cq_post(struct dray_hw *hw, struct dray_hw_cq *cq,
		     const struct dray_cqe *cqe);

/* dev_qp.c: admin commands (each takes engine.lock itself) */
void dray_hw_cmd_create_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_create_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_modify_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_query_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res);
void dray_hw_cmd_destroy_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_create_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
/* Is a QP using this UAR? Takes engine.lock. */
bool dray_hw_uar_in_use(struct dray_hw *hw, u32 uar_index);
/* Device reset: destroy every PD, MR, CQ, QP and AH. Takes engine.lock. */
void dray_hw_objects_destroy(struct dray_hw *hw);

struct dray_hw_qp *dray_hw_qp_find(struct dray_hw *hw, u32 qpn);
struct dray_hw_ah *dray_hw_ah_find(struct dray_hw *hw, u32 ahn);
bool dray_hw_av_resolve(struct dray_hw *hw, const struct dray_path *av,
			struct dray_hw_path *out);
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
 * Complete SQ WQEs in order (@wqe->index must be sq.completed, and
 * fetched); @status != SUCCESS always writes a CQE, SUCCESS writes one if
 * the WQE is signaled or the QP is SQ_SIG_ALL. An error status other than
 * WR_FLUSH_ERR moves the QP to ERR (IBTA: RC completion errors are
 * fatal to the QP), a UD QP in RTS or SQD to SQE (IBTA 10.3.1: only its
 * send queue stops); the transport must check qp->state afterwards and
 * stop working on a QP in ERR. A CQE that cannot be written (CQ in error)
 * moves the QP to ERR with DRAY_EQE_QP_FATAL.
 */
void dray_hw_sq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_swqe *wqe, u8 status,
			 u8 vendor_err);
/*
 * Complete the RQ WQE @wqe (in order). The transport fills @cqe's
 * opcode, status, vendor_err, byte_len, imm_data, src_qpn and flags
 * (IMM, SOLICITED, ...); qpn and wqe_index are filled here. An error
 * status moves the QP to ERR as for dray_hw_sq_complete().
 */
void dray_hw_rq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_rwqe *wqe, struct dray_cqe *cqe);
/*
 * Move the QP to ERR: raise @event (a DRAY_EQE_* QP event, 0 for none;
 * data1 = @vendor_err) and flush every outstanding and future WQE with
 * WR_FLUSH_ERR. Only the state changes here: the engine calls
 * dray_xport_error() and flushes on its next pass, outside any transport
 * call, so the transport may call this from anywhere. No-op for a QP in
 * RESET or already in ERR.
 */
void dray_hw_qp_error(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event,
		      u8 vendor_err);
/* Post a QP async event (DRAY_EQE_*) on EQ 0. */
void dray_hw_qp_event(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event);

/*
 * Engine internals (dev_qp.c, used by dev_engine.c).
 * dray_hw_wq_poll(): read @wq's producer index once and validate it;
 * true if wq->posted changed or the QP went to ERR (a violation).
 * dray_hw_qp_flush(): for a QP in ERR, call dray_xport_error() once and
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

/*
 * dev_engine.c
 * dray_hw_engine_start(): initialize the engine and start its thread
 * (before the port can deliver frames). dray_hw_engine_stop(): stop the
 * thread and free every object; rx_queue and dray_hw_engine_rx() stay
 * usable (frames are just queued) until the port is detached.
 */
int dray_hw_engine_start(struct dray_hw *hw);
void dray_hw_engine_stop(struct dray_hw *hw);
/*
 * Wake the engine thread, or make its current pass be followed by another
 * one without sleeping: the transport calls it (in a pass) when it
 * stopped with work left (a send budget, a loopback frame queued).
 * Context: any. engine.lock not required.
 */
void dray_hw_engine_kick(struct dray_hw *hw);
/*
 * Release engine.lock taken outside the engine (admin commands): work that
 * others left to the holder meanwhile goes to the thread.
 */
void dray_hw_engine_unlock(struct dray_hw *hw) __releases(&hw->engine.lock);
/*
 * Queue a received frame for the engine (skb->data at the IP header,
 * skb->protocol set; the skb is not shared) and run passes here if
 * engine.lock is free, else kick the thread. Consumes @skb.
 * Context: any (softirq from the port, a pass for loopback).
 */
void dray_hw_engine_rx(struct dray_hw *hw, struct sk_buff *skb);
/*
 * A write to DRAY_REG_ENGINE_KICK: count a wake-up on UAR @uar_index and
 * run passes here if engine.lock is free, else wake the engine thread.
 * Context: process or softirq.
 */
void dray_hw_engine_uar_kick(struct dray_hw *hw, u32 uar_index);
/*
 * Initialize the device-written flags of a new UAR page (NEED_WAKEUP set
 * if the engine sleeps). Called with obj_lock held.
 */
void dray_hw_engine_uar_init(struct dray_hw *hw, struct dray_uar *page);
/*
 * Arm or cancel (0) the QP's timer; the engine calls dray_xport_timer()
 * once jiffies reach @when (and clears the deadline first).
 */
void dray_hw_qp_set_deadline(struct dray_hw_qp *qp, unsigned long when);
/* The port's GID at index, false if none. Context: process or softirq. */
bool dray_hw_gid_get(struct dray_hw *hw, u32 index, u8 *gid);

#endif /* DRAY_DEV_QP_H */
