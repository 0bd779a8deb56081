/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray driver: shared definitions. The driver reaches the NIC only
 * through ../bus.h and the formats in include/dray/.
 */
#ifndef DRAY_DRV_H
#define DRAY_DRV_H

#include <linux/bitfield.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include <dray/dray_regs.h>
#include <dray/dray_admin.h>
#include <dray/dray_eq.h>
#include <dray/dray_queue.h>
#include <dray/dray_uar.h>
#include <dray/dray_ring.h>
#include <dray/dray_verr.h>

#include "../bus.h"
#include "../compat.h"

#define DRAY_AQ_LOG_DEPTH	5
#define DRAY_AQ_TIMEOUT_MS	5000
/*
 * EQ sizes. A full EQ loses events (the device counts them and reports
 * the count, EQ_OVERRUN): QP and CQ events are bounded by the number of
 * objects, so the async EQ has room for several events per QP in flight.
 * The completion EQ holds at most a few events per CQ (one per arm); it
 * is sized from max_cq so that it cannot fill.
 */
#define DRAY_ASYNC_EQ_LOG_DEPTH	12
#define DRAY_COMP_EQ_EVENTS_PER_CQ 3

/* Interrupt vector assignment. */
enum {
	DRAY_VEC_ADMIN	= 0,
	DRAY_VEC_ASYNC	= 1,
	DRAY_VEC_COMP	= 2,
};

/* Per-slot state of an admin command in flight. */
struct dray_aq_ctx {
	struct completion	done;
	struct dray_aq_cqe	cqe;
	bool			busy;
};

struct dray_aq {
	struct dray_aq_entry	*sq;
	dma_addr_t		sq_dma;
	struct dray_aq_cqe	*cq;
	dma_addr_t		cq_dma;
	u32			depth;
	/* Bounds commands in flight to the ring depth. */
	struct semaphore	slots;
	/* lock protects sq_pi, cq_ci, ctx[].busy and dead. */
	spinlock_t		lock;
	u16			sq_pi;
	u16			cq_ci;
	bool			dead;	/* a command timed out */
	struct dray_aq_ctx	*ctx;
};

/*
 * An event queue. ci is owned by the EQ's interrupt handler (which never
 * runs concurrently with itself); the rest is fixed after creation.
 */
struct dray_eq {
	struct dray_dev		*dev;
	struct dray_eqe		*ring;
	dma_addr_t		dma;
	u32			depth;
	u32			eqn;
	u32			ci;
	u8			vector;
	atomic64_t		lost;	/* events the device dropped (full) */
};

/* Device limits learned from QUERY_DEVICE, in CPU order. */
struct dray_caps {
	u64	fw_ver;
	__be64	node_guid;
	u32	vendor_id;
	u32	vendor_part_id;
	u32	hw_ver;
	u64	max_mr_size;
	u64	page_size_cap;
	u32	max_uar;
	u32	max_eq;
	u32	max_pd;
	u32	max_mr;
	u32	max_qp;
	u32	max_qp_wr;
	u32	max_send_sge;
	u32	max_recv_sge;
	u32	max_sge_rd;
	u32	max_cq;
	u32	max_cqe;
	u32	max_ah;
	u32	max_qp_rd_atom;
	u32	max_qp_init_rd_atom;
	u32	max_inline_data;
	u32	max_msg_size;
	u32	gid_tbl_len;
	u32	local_ca_ack_delay;
	u32	max_fr_pages;
	u32	max_mw;
	u32	max_srq;
	u32	max_srq_wr;
	u32	max_srq_sge;
	u32	max_counter_sets;
	u32	max_mcast_grp;
	u32	max_mcast_qp_attach;
	u32	max_xrcd;
};

enum {
	DRAY_DEV_REMOVED,	/* the NIC reported a surprise removal */
};

struct dray_dev {
	struct ib_device	ibdev;
	struct dray_bus_dev	*nic;
	struct platform_device	*pdev;
	struct net_device	*ndev;	/* identity only; no reference */
	struct list_head	list;	/* on dray_devs, under dray_devs_lock */
	struct work_struct	unreg_work;
	unsigned long		flags;	/* DRAY_DEV_* bits */

	struct dray_aq		aq;
	struct dray_eq		async_eq;	/* EQ 0: port, CQ and QP events */
	struct dray_eq		comp_eq;	/* completion events */
	struct dray_caps	caps;

	/*
	 * CQs and QPs by number, for event dispatch. Each xarray holds one
	 * reference on its objects; the EQ handler takes another under the
	 * xa_lock while it calls the consumer. Process context uses the _bh
	 * variants: the EQ handler runs with bottom halves disabled.
	 */
	struct xarray		cqs;
	struct xarray		qps;
	struct xarray		srqs;
	/* Runs commands that cannot be issued where they were requested. */
	struct workqueue_struct	*wq;

	/* The kernel consumers' doorbell page (kverbs.c); fixed after probe. */
	struct dray_uar		*kuar;
	dma_addr_t		kuar_dma;
	u32			kuar_index;
	/* Engine wake-up for posters that cannot write the register. */
	struct work_struct	kick_work;

	/* Device memory (dm.c): bytes of it, and in use by live DMs. */
	u64			dm_total;
	atomic64_t		dm_used;
};

struct dray_ucontext {
	struct ib_ucontext		ibucontext;
	u32				uar_index;
	dma_addr_t			uar_dma;
	struct rdma_user_mmap_entry	*db_entry;
};

/*
 * What a context maps: its doorbell page (order 0) or a block of device
 * memory (dm.c), 2^order physically contiguous pages. The entry owns them
 * and frees them after the last mapping is gone (dray_mmap_free()).
 */
struct dray_mmap_entry {
	struct rdma_user_mmap_entry	rdma_entry;
	struct page			*page;
	unsigned int			order;
};

struct dray_pd {
	struct ib_pd	ibpd;
	u32		pdn;
};

/* An XRC domain (xrc.c). */
struct dray_xrcd {
	struct ib_xrcd	ibxrcd;
	u32		xrcdn;
};

/*
 * An MR. User MRs pin their pages (umem); a fast-registration MR has a
 * page list in DMA-coherent memory that map_mr_sg fills and the device
 * reads when it executes the REG_MR work request.
 */
/* A memory window (user space: ibv_alloc_mw); its key is ibmw.rkey. */
struct dray_mw {
	struct ib_mw	ibmw;
};

struct dray_mr {
	struct ib_mr	ibmr;
	struct ib_umem	*umem;	/* pinned until the device let go of it */
	int		access;	/* user MRs: IB_ACCESS_* as registered */
	__le64		*pbl;	/* fast registration: the page list */
	dma_addr_t	pbl_dma;
	u32		pbl_len;	/* entries pbl has room for */
	u32		npages;		/* entries map_mr_sg filled */
};

/* A queue ring in DMA-coherent kernel memory (kernel CQs and QPs). */
struct dray_kring {
	void		*va;
	dma_addr_t	dma;
	size_t		size;	/* bytes, whole pages */
};

/*
 * The driver's side of a kernel CQ. lock protects consumer, arm_seq and
 * the doorbell record's software fields; it also keeps a QP whose CQEs
 * are being polled from being destroyed (see dray_kqp_clean_cq()).
 */
struct dray_kcq {
	spinlock_t		lock;		/* see above */
	struct dray_kring	ring;
	struct dray_cq_db	*db;
	struct dray_cqe		*cqes;
	u32			depth;
	u32			consumer;	/* next CQE to read */
	u32			arm_seq;
};

struct dray_cq {
	struct ib_cq		ibcq;
	struct ib_umem		*umem;	/* the ring, in user memory */
	struct dray_kcq		*kcq;	/* kernel CQ, else NULL */
	u32			cqn;
	refcount_t		refs;	/* dev->cqs' and event dispatch's */
	struct completion	unused;	/* refs dropped to zero */
	struct mutex		resize_lock;	/* umem, against resize_cq */
};

/*
 * A kernel work queue. lock serializes posting: it protects head, the
 * ring slots from tail on and wrid[] slots not yet completed. tail is
 * written by poll_cq under the CQ's lock (release: wrid[] was read) and
 * read by posters (acquire).
 */
struct dray_kwq {
	spinlock_t		lock;		/* see above */
	struct dray_kring	ring;
	struct dray_wq_db	*db;
	void			*wqes;
	u64			*wrid;
	u32			depth;
	u8			log_stride;
	u32			max_sge;
	u32			head;		/* next WQE index to post */
	u32			tail;		/* oldest WQE not completed */
};

/* The driver's side of a kernel QP (kqp.c). */
struct dray_kqp {
	struct dray_kwq		sq;
	struct dray_kwq		rq;
	u32			max_inline;
	bool			sig_all;
};

/*
 * The driver's side of a kernel SRQ (srq.c). lock (taken with interrupts
 * off) serializes posters and the pollers of the CQs of the SRQ's QPs
 * (inside their CQ locks): head, the ring slots, wrid[], free[] and
 * n_free, busy.
 */
struct dray_ksrq {
	spinlock_t		lock;		/* see above */
	struct dray_kring	ring;
	struct dray_wq_db	*db;
	void			*wqes;
	u64			*wrid;		/* by tag */
	u32			*free;		/* tags not posted: a stack */
	u32			n_free;
	unsigned long		*busy;		/* tags posted, not completed */
	u32			head;		/* next WQE index to post */
};

struct dray_srq {
	struct ib_srq		ibsrq;
	struct ib_umem		*umem;	/* the ring, in user memory */
	struct dray_ksrq	*ksrq;	/* kernel SRQ, else NULL */
	u32			srqn;
	u32			depth;	/* WQEs: tags 0..depth - 1 */
	u32			max_sge;
	u8			log_stride;
	refcount_t		refs;	/* dev->srqs' and event dispatch's */
	struct completion	unused;	/* refs dropped to zero */
};

struct dray_qp {
	struct ib_qp		ibqp;
	struct ib_umem		*sq_umem;
	struct ib_umem		*rq_umem;
	struct dray_kqp		*kqp;	/* kernel QP, else NULL */
	u32			qpn;
	refcount_t		refs;	/* dev->qps' and event dispatch's */
	struct completion	unused;	/* refs dropped to zero */
	/*
	 * Report IB_EVENT_SQ_DRAINED: what the last transition to SQD asked
	 * for. Written under lock, read by the EQ handler.
	 */
	bool			sqd_notify;
	/*
	 * lock serializes MODIFY_QP and QUERY_QP of this QP and protects
	 * state (the last state the device reported or accepted), dest_qpn
	 * and has_dest_qpn.
	 */
	struct mutex		lock;
	u8			state;	/* enum ib_qp_state */
	bool			has_dest_qpn;
	u32			dest_qpn;
	/* Fixed at creation. */
	struct ib_qp_cap	cap;
	enum ib_sig_type	sq_sig_type;
};

/*
 * An AH of a user context is a device AH (ahn). A kernel AH is only the
 * address vector its UD send WQEs carry (DRAY_WQE_F_UD_AV): kernel
 * callers create AHs in atomic context (the CM does), where no admin
 * command can be waited for.
 */
struct dray_ah {
	struct ib_ah		ibah;
	u32			ahn;	/* user AH; 0 for a kernel AH */
	struct dray_path	av;	/* kernel AH */
};

/*
 * Memory translation table for one buffer: MTT pages mapped for the
 * device, built from a pinned umem and freed once the create command
 * completed (the device copies the table).
 */
struct dray_mtt {
	u32		n_data;		/* 4 KiB data pages described */
	u32		n_mtt;		/* MTT pages */
	struct page	**pages;
	dma_addr_t	*dma;
};

static inline dma_addr_t dray_mtt_addr(const struct dray_mtt *mtt)
{
	return mtt->dma[0];
}

/*
 * Admin command parameters in CPU order; cmd.c alone converts them to and
 * from the little-endian formats of dray_admin.h.
 */
struct dray_mr_params {
	u32		pdn;
	u8		access;		/* DRAY_ACCESS_* */
	u8		flags;		/* DRAY_MR_F_* */
	u64		iova;
	u64		length;
	dma_addr_t	mtt_addr;
	u32		n_pages;
};

struct dray_cq_params {
	dma_addr_t	mtt_addr;
	u32		n_pages;
	u32		eqn;
	u8		log_depth;
};

struct dray_qp_params {
	u8		type;		/* enum dray_qp_type */
	u8		sq_log_depth;
	u8		sq_log_stride;
	u8		rq_log_depth;
	u8		rq_log_stride;
	u8		flags;		/* DRAY_QP_F_* */
	u32		pdn;
	u32		srqn;		/* DRAY_QP_F_SRQ */
	u32		xrcdn;		/* XRC target */
	u32		send_cqn;
	u32		recv_cqn;
	u32		uar_index;
	dma_addr_t	sq_mtt;
	u32		sq_n_pages;
	dma_addr_t	rq_mtt;
	u32		rq_n_pages;
};

/* struct dray_path in CPU order. */
struct dray_path_params {
	u8	dmac[ETH_ALEN];
	u8	sgid_index;
	u8	hop_limit;
	u8	dgid[16];
	u8	traffic_class;
	u32	flow_label;
	u16	udp_sport;
};

/* struct dray_qp_attr in CPU order. */
struct dray_qp_attr_params {
	u32			mask;		/* DRAY_QP_ATTR_* */
	u8			state;		/* enum dray_qp_state */
	u8			cur_state;
	u8			path_mtu;
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;
	u8			access;
	bool			sq_draining;
	u32			dest_qpn;
	u32			rq_psn;
	u32			sq_psn;
	u32			qkey;
	struct dray_path_params	path;
};

static inline struct dray_dev *to_ddev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct dray_dev, ibdev);
}

static inline struct dray_ucontext *to_ductx(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct dray_ucontext, ibucontext);
}

static inline struct dray_pd *to_dpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct dray_pd, ibpd);
}

static inline struct dray_mw *to_dmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct dray_mw, ibmw);
}

static inline struct dray_mr *to_dmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct dray_mr, ibmr);
}

static inline struct dray_cq *to_dcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct dray_cq, ibcq);
}

static inline struct dray_qp *to_dqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct dray_qp, ibqp);
}

static inline struct dray_xrcd *to_dxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct dray_xrcd, ibxrcd);
}

static inline struct dray_srq *to_dsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct dray_srq, ibsrq);
}

static inline struct dray_ah *to_dah(struct ib_ah *ibah)
{
	return container_of(ibah, struct dray_ah, ibah);
}

/*
 * The most CQEs a CQ can be asked for: the device's largest ring is the
 * largest power of two <= max_cqe, and one ring slot stays free (the
 * provider sizes a ring as the next power of two >= cqe + 1).
 */
static inline u32 dray_max_cqe(const struct dray_caps *caps)
{
	return caps->max_cqe ? rounddown_pow_of_two(caps->max_cqe) - 1 : 0;
}

/* IB access flags to DRAY_ACCESS_* (the same IBTA bits, named apart). */
static inline u8 dray_access_to_hw(int access)
{
	u8 hw = 0;

	if (access & IB_ACCESS_LOCAL_WRITE)
		hw |= DRAY_ACCESS_LOCAL_WRITE;
	if (access & IB_ACCESS_REMOTE_WRITE)
		hw |= DRAY_ACCESS_REMOTE_WRITE;
	if (access & IB_ACCESS_REMOTE_READ)
		hw |= DRAY_ACCESS_REMOTE_READ;
	if (access & IB_ACCESS_REMOTE_ATOMIC)
		hw |= DRAY_ACCESS_REMOTE_ATOMIC;
	if (access & IB_ACCESS_MW_BIND)
		hw |= DRAY_ACCESS_MW_BIND;
	if (access & DRAY_IB_ACCESS_FLUSH_GLOBAL)
		hw |= DRAY_ACCESS_FLUSH_GLOBAL;
	return hw;
}

static inline struct device *dray_dma_dev(struct dray_dev *dev)
{
	return dev->ibdev.dev.parent;
}

#define ddev_err_rl(dev, fmt, ...) \
	ibdev_err_ratelimited(&(dev)->ibdev, fmt, ##__VA_ARGS__)
#define ddev_warn_rl(dev, fmt, ...) \
	ibdev_warn_ratelimited(&(dev)->ibdev, fmt, ##__VA_ARGS__)
#define ddev_dbg(dev, fmt, ...) \
	ibdev_dbg(&(dev)->ibdev, fmt, ##__VA_ARGS__)
/* For input a user can get wrong: name the field, its value and limit. */
#define ddev_dbg_rl(dev, fmt, ...) \
	ibdev_dbg_ratelimited(&(dev)->ibdev, fmt, ##__VA_ARGS__)
#define dcq_dbg(cq, fmt, ...) do {					\
	const struct dray_cq *__cq = (cq);				\
									\
	ibdev_dbg_ratelimited(__cq->ibcq.device, "CQ[%u] " fmt,		\
			      __cq->cqn, ##__VA_ARGS__);		\
} while (0)
#define dqp_dbg(qp, fmt, ...) do {					\
	const struct dray_qp *__qp = (qp);				\
									\
	ibdev_dbg_ratelimited(__qp->ibqp.device, "QP[%u] " fmt,		\
			      __qp->qpn, ##__VA_ARGS__);		\
} while (0)
#define dqp_err(qp, fmt, ...) do {					\
	const struct dray_qp *__qp = (qp);				\
									\
	ibdev_err_ratelimited(__qp->ibqp.device, "QP[%u] " fmt,		\
			      __qp->qpn, ##__VA_ARGS__);		\
} while (0)

/* counters.c: `rdma statistic` (port counters, per-QP counters) */
extern const struct ib_device_ops dray_counter_ops;
/* A counter's name, as `rdma statistic` shows it. */
const char *dray_counter_name(enum dray_counter c);

/* sysfs.c: the engine's polling attributes on the platform device */
int dray_sysfs_add(struct dray_dev *dev);
void dray_sysfs_remove(struct dray_dev *dev);

/* restrack.c: dray's own details in `rdma resource show` */
int dray_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int dray_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int dray_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* aq.c */
int dray_aq_init(struct dray_dev *dev);
void dray_aq_destroy(struct dray_dev *dev);
const char *dray_aq_opcode_name(u8 opcode);
int dray_aq_exec(struct dray_dev *dev, struct dray_aq_entry *entry,
		 u64 *result);

/* cmd.c: one function per admin opcode */
int dray_admin_query_device(struct dray_dev *dev, struct dray_caps *caps);
int dray_admin_query_port(struct dray_dev *dev, u8 port,
			  struct dray_port_attr *attr);
int dray_admin_set_gid(struct dray_dev *dev, u32 index, const u8 *gid);
int dray_admin_del_gid(struct dray_dev *dev, u32 index);
int dray_admin_create_eq(struct dray_dev *dev, dma_addr_t ring, u8 log_depth,
			 u8 vector, u32 *eqn);
int dray_admin_destroy_eq(struct dray_dev *dev, u32 eqn);
int dray_admin_create_uar(struct dray_dev *dev, dma_addr_t page, u32 *index);
int dray_admin_destroy_uar(struct dray_dev *dev, u32 index);
int dray_admin_create_pd(struct dray_dev *dev, u32 *pdn);
int dray_admin_destroy_pd(struct dray_dev *dev, u32 pdn);
int dray_admin_create_mr(struct dray_dev *dev, const struct dray_mr_params *p,
			 u32 *key);
int dray_admin_destroy_mr(struct dray_dev *dev, u32 key);
int dray_admin_modify_mr(struct dray_dev *dev, u32 key, u8 what,
			 const struct dray_mr_params *p);
int dray_admin_create_mw(struct dray_dev *dev, u32 pdn, u8 type, u32 *key);
int dray_admin_destroy_mw(struct dray_dev *dev, u32 key);
int dray_admin_create_cq(struct dray_dev *dev, const struct dray_cq_params *p,
			 u32 *cqn);
int dray_admin_destroy_cq(struct dray_dev *dev, u32 cqn);
int dray_admin_mcast(struct dray_dev *dev, u32 qpn, const u8 *gid,
		     bool attach);
int dray_admin_resize_cq(struct dray_dev *dev, u32 cqn,
			 const struct dray_cq_params *p, u32 *carried);
int dray_admin_create_qp(struct dray_dev *dev, const struct dray_qp_params *p,
			 u32 *qpn);
int dray_admin_modify_qp(struct dray_dev *dev, u32 qpn,
			 const struct dray_qp_attr_params *p);
int dray_admin_query_qp(struct dray_dev *dev, u32 qpn,
			struct dray_qp_attr_params *p);
int dray_admin_destroy_qp(struct dray_dev *dev, u32 qpn);
/* CREATE_SRQ's parameters in CPU order; xrcdn 0: not an XRC SRQ. */
struct dray_srq_params {
	dma_addr_t	mtt_addr;
	u32		n_pages;
	u32		pdn;
	u8		log_depth;
	u8		log_stride;
	u32		xrcdn;
	u32		cqn;		/* XRC: where it completes */
};

int dray_admin_create_srq(struct dray_dev *dev,
			  const struct dray_srq_params *p, u32 *srqn);
int dray_admin_create_xrcd(struct dray_dev *dev, u32 *xrcdn);
int dray_admin_destroy_xrcd(struct dray_dev *dev, u32 xrcdn);
int dray_admin_modify_srq(struct dray_dev *dev, u32 srqn, u32 limit);
int dray_admin_query_srq(struct dray_dev *dev, u32 srqn, u32 *limit,
			 bool *error);
int dray_admin_destroy_srq(struct dray_dev *dev, u32 srqn);
int dray_admin_create_ah(struct dray_dev *dev, u32 pdn,
			 const struct dray_path_params *path, u32 *ahn);
int dray_admin_destroy_ah(struct dray_dev *dev, u32 ahn);
int dray_admin_alloc_counter_set(struct dray_dev *dev, u32 *set);
int dray_admin_free_counter_set(struct dray_dev *dev, u32 set);
int dray_admin_bind_counter_set(struct dray_dev *dev, u32 qpn, u32 set);
/* The device's state of a QP, CQ or MR (enum dray_state_kind), as is. */
int dray_admin_query_state(struct dray_dev *dev, u8 kind, u32 id,
			   struct dray_obj_state *out);
/* @values: DRAY_CNT_MAX counters (enum dray_counter) of a set or a QP. */
int dray_admin_query_counters(struct dray_dev *dev, u8 scope, u32 id,
			      u64 *values);
/* A path in the device's format (commands, and UD WQEs' address vectors). */
void dray_path_to_hw(struct dray_path *hw, const struct dray_path_params *p);

/* eq.c */
int dray_eq_create(struct dray_dev *dev, struct dray_eq *eq, u8 log_depth,
		   u8 vector);
void dray_eq_destroy(struct dray_dev *dev, struct dray_eq *eq);
void dray_eq_free(struct dray_dev *dev, struct dray_eq *eq);

/* mtt.c */
int dray_mtt_build(struct dray_dev *dev, struct ib_umem *umem, u32 n_data,
		   struct dray_mtt *mtt);
int dray_mtt_build_contig(struct dray_dev *dev, dma_addr_t dma, u32 n_data,
			  struct dray_mtt *mtt);
void dray_mtt_free(struct dray_dev *dev, struct dray_mtt *mtt);
struct ib_umem *dray_queue_pin(struct dray_dev *dev, const char *what,
			       u64 addr, u32 size, u64 needed, u32 *n_pages);

/* verbs.c */
extern const struct ib_device_ops dray_dev_ops;
/* Give @entry a key in the context's window (see verbs.c). */
int dray_mmap_entry_insert(struct ib_ucontext *ibuctx,
			   struct rdma_user_mmap_entry *entry, size_t length);
int dray_udata_cmd(struct dray_dev *dev, struct ib_udata *udata, void *cmd,
		   size_t size, size_t min_size, const char *verb);
int dray_udata_resp(struct dray_dev *dev, struct ib_udata *udata,
		    const void *resp, size_t size, size_t min_size,
		    const char *verb);

/* pd.c */
int dray_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int dray_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* dm.c */
u64 dray_dm_size(void);
struct ib_dm *dray_alloc_dm(struct ib_device *ibdev,
			    struct ib_ucontext *ibuctx,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int dray_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *dray_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs);

/* xrc.c */
int dray_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int dray_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int dray_xrc_tgt_create(struct dray_dev *dev, struct dray_qp *qp,
			struct ib_qp_init_attr *ia);

/* mr.c */
struct ib_mr *dray_get_dma_mr(struct ib_pd *ibpd, int access_flags);
struct ib_mr *dray_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access_flags,
			       struct ib_udata *udata);
struct ib_mr *dray_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				      u64 length, u64 virt_addr, int fd,
				      int access_flags,
				      struct dray_dmabuf_mr_arg *arg);
int dray_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *dray_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 virt_addr, int access_flags,
				 struct ib_pd *ibpd, struct ib_udata *udata);
int dray_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int dray_dealloc_mw(struct ib_mw *ibmw);
struct ib_mr *dray_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int dray_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);

/* cq.c */
int dray_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct dray_create_cq_arg *arg);
int dray_cq_attr_check(struct dray_dev *dev, const struct ib_cq_init_attr *attr);
int dray_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int dray_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int dray_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int dray_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void dray_cq_event(struct dray_dev *dev, u32 cqn, u8 type);
int dray_cq_publish(struct dray_dev *dev, struct dray_cq *cq);
void dray_cq_unpublish(struct dray_dev *dev, struct dray_cq *cq);

/* qp.c */
int dray_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata);
int dray_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int dray_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr);
int dray_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void dray_qp_event(struct dray_dev *dev, u32 qpn, u8 type, u64 data1);
int dray_qp_check_init_attr(struct dray_dev *dev,
			    const struct ib_qp_init_attr *ia);
int dray_qp_publish(struct dray_dev *dev, struct dray_qp *qp);
void dray_qp_unpublish(struct dray_dev *dev, struct dray_qp *qp);

/* kverbs.c: the kernel consumers' UAR, rings and doorbells */
int dray_kuar_create(struct dray_dev *dev);
void dray_kuar_destroy(struct dray_dev *dev);
void dray_kuar_free(struct dray_dev *dev);
int dray_kring_alloc(struct dray_dev *dev, struct dray_kring *ring,
		     u64 bytes);
void dray_kring_free(struct dray_dev *dev, struct dray_kring *ring);
int dray_kring_mtt(struct dray_dev *dev, const struct dray_kring *ring,
		   struct dray_mtt *mtt);
void dray_kick_if_idle(struct dray_dev *dev);

/* Wake the queue engine serving UAR @uar_index (process or softirq). */
static inline void dray_engine_kick(struct dray_dev *dev, u32 uar_index)
{
	dray_bus_writel(dev->nic, DRAY_REG_ENGINE_KICK,
			FIELD_PREP(DRAY_ENGINE_KICK_UAR_MASK, uar_index));
}

/* kcq.c: kernel CQs */
int dray_kcq_create(struct dray_dev *dev, struct dray_cq *cq,
		    const struct ib_cq_init_attr *attr);
void dray_kcq_free(struct dray_dev *dev, struct dray_cq *cq);
int dray_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int dray_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void dray_kcq_clean(struct dray_cq *cq, u32 qpn, struct dray_srq *srq);

/* srq.c */
int dray_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata);
int dray_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int dray_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int dray_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int dray_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
void dray_srq_event(struct dray_dev *dev, u32 srqn, u8 type);
bool dray_ksrq_retire(struct dray_srq *srq, u32 tag, u64 *wr_id);

/* kqp.c: kernel QPs */
int dray_kqp_create(struct dray_dev *dev, struct dray_qp *qp,
		    struct ib_qp_init_attr *ia);
void dray_kqp_free(struct dray_dev *dev, struct dray_qp *qp);
void dray_kqp_reset(struct dray_qp *qp);
void dray_kqp_clean_cqs(struct dray_qp *qp);
int dray_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int dray_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* ah.c */
int dray_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int dray_destroy_ah(struct ib_ah *ibah, u32 flags);
int dray_path_from_ah_attr(struct dray_dev *dev,
			   const struct rdma_ah_attr *ah_attr,
			   struct dray_path_params *path);

/* uverbs.c: driver-specific uverbs methods */
extern const struct uapi_definition dray_uapi_defs[];

#endif /* DRAY_DRV_H */
