/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: verbs objects and the queue engine — the contract
 * between the object/engine layer (dev_mem.c, dev_cq.c, dev_qp.c,
 * dev_engine.c) and the RoCEv2 transport (dev_net.c, dev_req.c,
 * dev_resp.c, dev_comp.c, declared in dev_xport.h).
 *
 * Concurrency: one engine thread per device does all data-path work.
 * engine.lock (a mutex) is held by the engine thread while it works and
 * by admin commands that create, modify or destroy PDs, MRs, CQs, QPs and
 * AHs. Everything in these structures is protected by engine.lock unless
 * a comment says otherwise; every function here expects it held
 * (lockdep_assert_held) except where noted.
 */
#ifndef DRAY_DEV_QP_H
#define DRAY_DEV_QP_H

#include <linux/kthread.h>
#include <linux/skbuff.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <dray/dray_admin.h>
#include <dray/dray_queue.h>

struct dray_hw;

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
};

/* A send WQE copied out of the ring and validated (dray_hw_sq_fetch). */
struct dray_hw_swqe {
	u32			index;		/* free-running WQE index */
	struct dray_sq_wqe	hdr;
	u32			num_sge;
	u32			length;		/* total payload bytes */
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
	u8		hop_limit;
	u8		traffic_class;
	u32		flow_label;
	u16		udp_sport;
};

struct dray_hw_ah {
	u32			ahn;
	u32			pdn;
	struct dray_hw_path	path;
};

#include "dev_xport.h"

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

	/* engine bookkeeping */
	struct list_head	active;		/* on engine.active */
	unsigned long		deadline;	/* jiffies; 0 = no timer */
};

struct dray_hw_engine {
	struct mutex		lock;
	struct task_struct	*thread;
	wait_queue_head_t	wait;
	atomic_t		pending;	/* wake-up reasons since last pass */
	struct sk_buff_head	rx_queue;	/* own lock; filled in softirq */
	struct list_head	active;		/* QPs not in RESET */
	struct xarray		pds, mrs, cqs, qps, ahs;
	u32			mr_key_seq;
	u64			kicks;		/* wake-up calls (statistics) */
};

/* dev_mem.c: buffers, MRs and memory access with protection checks */
int dray_hw_buf_map(struct dray_hw *hw, u64 mtt_addr, u32 n_pages,
		    struct dray_hw_buf *buf, u32 *syndrome);
void dray_hw_buf_unmap(struct dray_hw_buf *buf);

/* Why a memory access was refused; dray_hw_mr_check() result. */
enum dray_mr_err {
	DRAY_MR_OK = 0,
	DRAY_MR_ERR_KEY,	/* no such key */
	DRAY_MR_ERR_PD,		/* MR on another PD */
	DRAY_MR_ERR_ACCESS,	/* right not granted */
	DRAY_MR_ERR_RANGE,	/* outside [iova, iova + length) */
};

enum dray_mr_err dray_hw_mr_check(struct dray_hw *hw, u32 key, u32 pdn,
				  u8 access, u64 addr, u64 len,
				  struct dray_hw_mr **mr);
/* Copy into or out of a checked MR range. */
void dray_hw_mr_write(struct dray_hw_mr *mr, u64 addr, const void *src,
		      size_t len);
void dray_hw_mr_read(struct dray_hw_mr *mr, u64 addr, void *dst, size_t len);
/* The page and in-page offset/length of the piece at addr (zero copy). */
struct page *dray_hw_mr_page(struct dray_hw_mr *mr, u64 addr, u32 *offset,
			     u32 *len);
/*
 * 8-byte atomic at addr (8-byte aligned, checked): compare-and-swap when
 * cmp_swap, else fetch-and-add. Returns the original value.
 */
u64 dray_hw_mr_atomic(struct dray_hw_mr *mr, u64 addr, bool cmp_swap,
		      u64 compare_add, u64 swap);

/* dev_cq.c */
/*
 * Write one CQE (phase and flags handled here; cqe->flags holds the
 * other DRAY_CQE_F_* bits). Raises a completion event if the CQ is armed
 * and the CQE matches the arm. Overflow puts the CQ in error and raises
 * DRAY_EQE_CQ_ERROR. Returns false if the CQE could not be written.
 */
bool dray_hw_cq_post(struct dray_hw *hw, struct dray_hw_cq *cq,
		     const struct dray_cqe *cqe);

/* dev_qp.c */
struct dray_hw_qp *dray_hw_qp_find(struct dray_hw *hw, u32 qpn);
struct dray_hw_ah *dray_hw_ah_find(struct dray_hw *hw, u32 ahn);
/* Number of posted, not yet fetched WQEs. */
u32 dray_hw_sq_pending(struct dray_hw_qp *qp);
/*
 * Copy SQ WQE @index out of the ring and validate it for the QP's type.
 * Returns 0 or a DRAY_CQE_ST_* status to complete the WQE with.
 */
int dray_hw_sq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp, u32 index,
		     struct dray_hw_swqe *wqe);
/* Take the next RQ WQE. -ENOENT: RQ empty (RNR). Else 0 or -EINVAL. */
int dray_hw_rq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_rwqe *wqe);
/* Complete SQ WQEs in order; @status != SUCCESS always writes a CQE. */
void dray_hw_sq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_swqe *wqe, u8 status,
			 u8 vendor_err);
void dray_hw_rq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_rwqe *wqe, struct dray_cqe *cqe);
/*
 * Move the QP to ERR: raise @event (a DRAY_EQE_* QP event, 0 for none)
 * and flush every outstanding and future WQE with WR_FLUSH_ERR.
 */
void dray_hw_qp_error(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event,
		      u8 vendor_err);
/* Post a QP async event (DRAY_EQE_*) on EQ 0. */
void dray_hw_qp_event(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event);

/* dev_engine.c */
int dray_hw_engine_start(struct dray_hw *hw);
void dray_hw_engine_stop(struct dray_hw *hw);
/* Wake the engine. Context: any. */
void dray_hw_engine_kick(struct dray_hw *hw);
/* Queue a received frame for the engine. Context: softirq. */
void dray_hw_engine_rx(struct dray_hw *hw, struct sk_buff *skb);
/* Arm or cancel (0) the QP's timer; the engine calls dray_xport_timer(). */
void dray_hw_qp_set_deadline(struct dray_hw_qp *qp, unsigned long when);
/* The port's GID at index, false if none. Context: any. */
bool dray_hw_gid_get(struct dray_hw *hw, u32 index, u8 *gid);

#endif /* DRAY_DEV_QP_H */
