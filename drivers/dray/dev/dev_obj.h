/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the device's objects (PDs, MRs, CQs, QPs and their work
 * queues, AHs) as it keeps them after the admin commands that created
 * them. Who may touch what, and under which lock, is the top of dev.h.
 */
#ifndef DRAY_DEV_OBJ_H
#define DRAY_DEV_OBJ_H

#include <linux/bitfield.h>
#include <linux/compiler.h>
#include <linux/list.h>
#include <linux/types.h>

#include <dray/dray_common.h>
#include <dray/dray_queue.h>

#include "dev_limits.h"
#include "dev_ud.h"
#include "dev_wqe.h"
#include "dev_xport.h"

struct page;

/*
 * Datagram QPs: UD and the GSI QP (QP1), which is a UD QP with a fixed
 * QPN and Q_Key; the UD service (dev_ud.c) runs both.
 */
static inline bool dray_hw_qpt_dg(u8 type)
{
	return type == DRAY_QPT_UD || type == DRAY_QPT_GSI;
}

/* XRC initiator and target QPs (IBTA annex A14). */
static inline bool dray_hw_qpt_xrc(u8 type)
{
	return type == DRAY_QPT_XRC_INI || type == DRAY_QPT_XRC_TGT;
}

/*
 * Connected QPs, RC, UC and both XRC types: one peer, set by MODIFY_QP
 * (the path).
 */
static inline bool dray_hw_qpt_conn(u8 type)
{
	return type == DRAY_QPT_RC || type == DRAY_QPT_UC ||
	       dray_hw_qpt_xrc(type);
}

struct dray_hw_pd {
	u32	pdn;
	u32	users;		/* MRs, QPs and AHs on this PD */
};

/* An XRC domain: a number and its XRC SRQs and target QPs. */
struct dray_hw_xrcd {
	u32	xrcdn;
	u32	users;		/* XRC SRQs and XRC target QPs in it */
};

/* An MR's state (IBTA: a FAST_REG MR is FREE until registered). */
enum dray_hw_mr_state {
	DRAY_HW_MR_FREE,	/* no access goes through it */
	DRAY_HW_MR_VALID,
};

/*
 * An entry of the MR table: an MR, or a memory window (mw_type set),
 * whose iova, length and access are the window's and which translates
 * through the MR it is bound to.
 */
struct dray_hw_mr {
	u32		key;
	u32		pdn;
	u8		access;		/* DRAY_ACCESS_* */
	u8		flags;		/* DRAY_MR_F_* */
	u8		state;		/* enum dray_hw_mr_state */
	u8		mw_type;	/* 0: an MR; else enum dray_mw_type */
	u64		iova;
	u64		length;
	u32		n_pages;
	u32		max_pages;	/* FAST_REG: room in pages[] */
	struct page	**pages;	/* from the MTT or REG_MR, n_pages */
	u32		windows;	/* MR: windows bound to it */
	/* A window: */
	bool		zero_based;	/* remote addresses are offsets */
	u32		mw_qpn;		/* type 2: the QP it is bound to */
	struct dray_hw_mr *mw_mr;	/* VALID: the MR it is bound to */
	u64		mw_base;	/* the MR address of its iova */
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

/*
 * A send or receive queue as the device sees it. A QP without one (an
 * XRC target's SQ, the RQ of a QP on an SRQ or of an XRC QP) has db NULL.
 */
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

/* Has the QP this queue? */
static inline bool dray_hw_wq_exists(const struct dray_hw_wq *wq)
{
	return wq->db;
}

/* Tell software the device has fetched nothing (creation, reset). */
static inline void dray_hw_wq_clear_consumer(struct dray_hw_wq *wq)
{
	if (dray_hw_wq_exists(wq))
		WRITE_ONCE(wq->db->consumer, 0);
}

/*
 * A shared receive queue. Fields below the buffer change in engine
 * passes or under engine.lock (MODIFY_SRQ); users under admin_lock.
 * An XRC SRQ (xrcdn not 0) belongs to an XRC domain and has its own CQ;
 * serial tells it from a later SRQ that gets the same number.
 */
struct dray_hw_srq {
	u32			srqn;
	u32			pdn;		/* checks its WQEs' SGEs */
	u32			xrcdn;		/* XRC: its domain; else 0 */
	struct dray_hw_cq	*cq;		/* XRC: where it completes */
	u64			serial;		/* unique per device */
	struct dray_hw_buf	buf;
	struct dray_wq_db	*db;
	void			*ring;
	u32			depth;
	u32			log_stride;
	u32			taken;		/* next WQE index to take */
	u32			posted;		/* validated producer index */
	u32			limit;		/* armed limit; 0: unarmed */
	bool			error;		/* bad doorbell: no more WQEs */
	u32			users;		/* QPs on this SRQ */
};

struct dray_hw_ah {
	u32			ahn;
	u32			pdn;
	struct dray_hw_path	path;
};

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
	struct dray_hw_wq	rq;		/* with srq: counts WQEs taken */
	struct dray_hw_srq	*srq;		/* receive WQEs from here */
	u32			srq_tag;	/* of the SRQ WQE in rq */
	bool			srq_last_wqe;	/* LAST_WQE event raised */
	/*
	 * XRC target: its domain, and the XRC SRQ of the WQE in rq (by
	 * number and serial: the SRQ may be destroyed meanwhile).
	 */
	u32			xrcdn;
	u32			xrc_srqn;
	u64			xrc_serial;

	/* attributes (MODIFY_QP) */
	u8			path_mtu;	/* enum dray_mtu */
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;	/* entries of rdb */
	u8			access;		/* DRAY_ACCESS_REMOTE_* */
	u32			dest_qpn;
	u32			qkey;
	u32			sq_psn;		/* as set by MODIFY_QP */
	u32			rq_psn;
	struct dray_hw_path	path;

	/* counter set (dev_stats.c); xp.stats when it joined that set */
	u32			cset;
	struct dray_xp_stats	cset_base;

	/* transport state, owned by the dev_xport layer */
	struct dray_xport_qp	xp;
	struct dray_xp_res	*rdb;		/* responder resources (RC) */
	struct dray_ud_qp	ud;		/* UD QPs (dev_ud.c) */

	/* engine bookkeeping */
	struct list_head	active;		/* on engine.active */
	unsigned long		deadline;	/* jiffies; 0 = no timer */
	bool			err_pending;	/* ERR: dray_xport_error() due */
	bool			db_broken;	/* doorbells no longer read */
};

/*
 * Arm or cancel (0) the QP's timer; the engine calls dray_xport_timer()
 * once jiffies reach @when (and clears the deadline first).
 */
static inline void dray_hw_qp_set_deadline(struct dray_hw_qp *qp,
					   unsigned long when)
{
	qp->deadline = when;
}

#endif /* DRAY_DEV_OBJ_H */
