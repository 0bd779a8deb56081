/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dray provider: user space driver for the dray RoCEv2 NIC.
 *
 * Control path through the ibv_cmd_* helpers (verbs.c); the data path
 * (qp.c, cq.c) writes WQEs and doorbell records and reads CQEs in queue
 * buffers this library allocates and the kernel pins, without system
 * calls. The formats are those of <dray/dray_queue.h> and <dray/dray_uar.h>.
 */
#ifndef __DRAY_H__
#define __DRAY_H__

#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <ccan/array_size.h>
#include <ccan/minmax.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include <dray/dray_queue.h>
#include <dray/dray_ring.h>
#include <dray/dray_uar.h>

#include "dray_abi.h"

struct dray_device {
	struct verbs_device ibv_dev;
};

/*
 * QP number -> QP, for the pollers: a CQE names its QP by number only.
 * Two levels cover the 24-bit QPN space; a second-level table is
 * allocated when the first QP in its range is created and freed with the
 * context.
 */
#define DRAY_QPN_BITS		24
#define DRAY_QP_TABLE_SHIFT	12
#define DRAY_QP_TABLE_SIZE	(1U << DRAY_QP_TABLE_SHIFT)
#define DRAY_QP_TABLE_MASK	(DRAY_QP_TABLE_SIZE - 1)

struct dray_qp;
struct dray_srq;

/* Counters for benchmarks, printed when the context is freed (DRAY_STATS). */
struct dray_stats {
	atomic_uint_fast64_t send_wrs;	/* WRs written to send queues */
	atomic_uint_fast64_t recv_wrs;	/* WRs written to receive queues */
	atomic_uint_fast64_t wakeups;	/* DRAY_IB_METHOD_KICK calls */
	atomic_uint_fast64_t wakeup_errors;
};

/*
 * One per ibv_open_device(). Limits come from the kernel's GET_CONTEXT
 * response and QUERY_DEVICE and are fixed for the context's lifetime.
 */
struct dray_context {
	struct verbs_context ibv_ctx;
	/* This context's own doorbell page (UAR), never shared. */
	struct dray_uar *uar;
	size_t db_page_size;
	size_t page_size;
	uint32_t uar_index;
	uint32_t max_inline_data;
	uint32_t max_sge;
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint32_t max_srq_wr;
	uint32_t max_srq_sge;
	/*
	 * Send operations of RC QPs that the kernel reports the device has
	 * (IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_QP_EX_WITH_FLUSH; newer kernels
	 * only: their MR rights and device flags are unknown to 6.1).
	 */
	uint64_t rc_send_ops_extra;

	/*
	 * qp_table_mutex serializes inserting and removing QPs. A poller
	 * reads the table under its CQ's lock only: removal also holds the
	 * locks of the QP's CQs, so a QP a poller finds stays alive while
	 * that poller holds its CQ lock.
	 */
	pthread_mutex_t qp_table_mutex;
	_Atomic(struct dray_qp **) qp_table[1U << (DRAY_QPN_BITS -
						  DRAY_QP_TABLE_SHIFT)];

	/*
	 * XRC SRQ number -> XRC SRQ of this context: an XRC receive's CQE
	 * names its SRQ by number only (its QP may be anyone's). Entries
	 * change under qp_table_mutex and the SRQ's CQ lock; pollers read
	 * under their CQ's lock. Sized by the device's max_srq.
	 */
	_Atomic(struct dray_srq *) *xsrq_table;
	uint32_t xsrq_table_len;

	bool stats_enabled;
	struct dray_stats stats;

	/*
	 * The device has let go of this context (hot unplug, `rdma link
	 * delete`, module unload): the kernel destroyed every object, then
	 * replaced the doorbell page with zeros. From then on the pollers
	 * complete every outstanding WQE themselves (dray_cq_gone_flush()).
	 */
	_Atomic(bool) gone;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain()):
 * then protection_domain is the PD it stands for (its handle is that
 * PD's, so every command acts on that PD) and alloc/free, when set, are
 * the application's allocators for the queue buffers of the CQs, QPs and
 * SRQs created on it (resource types DRAY_RES_*).
 */
struct dray_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	/* PD: parent domains on it; parent domain: CQs, QPs, SRQs on it */
	_Atomic(uint32_t) refs;
	struct dray_pd *protection_domain;	/* parent domain: its PD */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

/* What a parent domain's allocator is asked for (resource_type). */
enum dray_res_type {
	DRAY_RES_CQ = 1,	/* a CQ's doorbell record and ring */
	DRAY_RES_SQ = 2,	/* a QP's send queue: doorbell record, ring */
	DRAY_RES_RQ = 3,	/* a QP's receive queue */
	DRAY_RES_SRQ = 4,	/* an SRQ's doorbell record and ring */
};

struct dray_ah {
	struct ibv_ah ibv_ah;
	uint32_t ahn;	/* for UD send WQEs (dray_sq_wqe.u.ud.ah) */
};

/*
 * A send or receive queue: a page-aligned buffer holding a doorbell
 * record then depth WQEs of 2^log_stride bytes, and the wr_id of every
 * slot. Indexes are free running; the slot of index i is i & (depth - 1).
 */
struct dray_wq {
	void *buf;
	size_t buf_size;
	struct dray_pd *buf_pd;	/* the parent domain that allocated buf */
	uint64_t type;		/* DRAY_RES_SQ or DRAY_RES_RQ */
	struct dray_wq_db *db;
	uint8_t *ring;
	uint64_t *wrid;
	uint32_t depth;
	uint8_t log_depth;
	uint8_t log_stride;
	uint32_t max_sge;

	/*
	 * lock serializes posting on this queue: head, the ring slots from
	 * tail to head, wrid[] of those slots and the producer index.
	 */
	pthread_spinlock_t lock;
	uint32_t head;		/* next index to post; under lock */
	/*
	 * Oldest WQE not yet completed. Advanced by the poller of the
	 * queue's CQ (under that CQ's lock) after it has read wrid[];
	 * read by posters to tell whether the queue is full.
	 */
	_Atomic(uint32_t) tail;
};

/*
 * A shared receive queue: the ring (doorbell record, then 2^log_depth
 * WQEs of 2^log_stride bytes) and a tag per posted WR, below the depth,
 * that the device reports back in the completion (dray_queue.h).
 * lock serializes posters and the pollers of its QPs' CQs (taken inside
 * a CQ's lock): head, the ring slots, wrid[], free[], n_free, busy[].
 */
struct dray_srq {
	struct verbs_srq vsrq;
	void *buf;
	size_t buf_size;
	struct dray_pd *buf_pd;	/* the parent domain that allocated buf */
	struct dray_pd *parent;	/* the parent domain it was made on */
	struct dray_wq_db *db;
	uint8_t *ring;
	uint32_t depth;
	uint8_t log_depth;
	uint8_t log_stride;
	uint32_t max_sge;
	uint32_t srqn;

	pthread_spinlock_t lock;
	uint32_t head;		/* next index to post */
	uint64_t *wrid;		/* by tag */
	uint32_t *free;		/* tags not posted: a stack */
	uint32_t n_free;
	uint8_t *busy;		/* by tag: posted and not completed */
};

struct dray_qp {
	struct verbs_qp vqp;
	struct dray_wq sq;
	struct dray_wq rq;
	struct dray_pd *parent;	/* the parent domain it was made on */
	uint32_t max_inline_data;
	bool sq_sig_all;

	/*
	 * ibv_wr_*() session state, between wr_start and wr_complete or
	 * wr_abort, under sq.lock.
	 */
	struct dray_sq_wqe *wr_cur;	/* WQE being built, NULL on error */
	uint32_t wr_start_head;		/* sq.head at wr_start */
	int wr_err;			/* first error of the session */
};

/*
 * A completion queue: a page-aligned buffer holding a doorbell record
 * then depth CQEs.
 */
struct dray_cq {
	struct verbs_cq vcq;
	void *buf;
	size_t buf_size;
	struct dray_pd *buf_pd;	/* the parent domain that allocated buf */
	struct dray_pd *parent;	/* the parent domain it was made on */
	struct dray_cq_db *db;
	struct dray_cqe *ring;
	uint32_t depth;
	uint32_t cqn;

	/* lock protects everything below and polling the ring. */
	pthread_spinlock_t lock;
	uint32_t consumer;		/* next CQE to read */
	uint32_t consumer_published;	/* last value stored in db */
	uint32_t arm_seq;
	/* The CQE the extended poll API is positioned on (start/next_poll). */
	struct dray_cqe *cur_cqe;
	/* Last QP looked up, to skip the table for runs of one QP. */
	struct dray_qp *last_qp;
	/* The flush completion made once the device is gone (cur_cqe). */
	struct dray_cqe gone_cqe;
};

static inline struct dray_device *to_dray_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct dray_device, ibv_dev.device);
}

static inline struct dray_context *to_dray_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct dray_context, ibv_ctx.context);
}

static inline struct dray_pd *to_dray_pd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct dray_pd, ibv_pd);
}

static inline struct dray_ah *to_dray_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct dray_ah, ibv_ah);
}

static inline struct dray_qp *to_dray_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct dray_qp, vqp.qp);
}

static inline struct dray_qp *to_dray_qp_ex(struct ibv_qp_ex *ibqpx)
{
	return container_of(ibqpx, struct dray_qp, vqp.qp_ex);
}

static inline struct dray_srq *to_dray_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct dray_srq, vsrq.srq);
}

/* This context's XRC SRQ @srqn, or NULL. Context: the SRQ's CQ lock. */
static inline struct dray_srq *dray_xsrq_lookup(struct dray_context *ctx,
						uint32_t srqn)
{
	if (srqn >= ctx->xsrq_table_len)
		return NULL;
	return atomic_load_explicit(&ctx->xsrq_table[srqn],
				    memory_order_relaxed);
}

static inline struct dray_cq *to_dray_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct dray_cq, vcq.cq);
}

static inline struct dray_cq *to_dray_cq_ex(struct ibv_cq_ex *ibcqx)
{
	return container_of(ibcqx, struct dray_cq, vcq.cq_ex);
}

/*
 * Fields of queue memory that the device reads or writes concurrently
 * are accessed as single 32-bit (or 8-bit) atomics so that the compiler
 * neither tears, merges nor caches them. Ordering comes from the
 * explicit barriers at the call sites.
 */
static inline void dray_shared_store32(__le32 *field, uint32_t val)
{
	atomic_store_explicit((_Atomic(uint32_t) *)field, htole32(val),
			      memory_order_relaxed);
}

static inline uint32_t dray_shared_load32(__le32 *field)
{
	return le32toh(atomic_load_explicit((_Atomic(uint32_t) *)field,
					    memory_order_relaxed));
}

/* Smallest n with 2^n >= x, for 1 <= x <= 2^31. */
static inline unsigned int dray_order(uint32_t x)
{
	return x <= 1 ? 0 : 32 - __builtin_clz(x - 1);
}

/* dray.c */
void dray_wake_engine(struct dray_context *ctx);

/* verbs.c: control path */
int dray_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int dray_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *dray_alloc_pd(struct ibv_context *ibctx);
int dray_dealloc_pd(struct ibv_pd *ibpd);
struct ibv_pd *dray_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
struct ibv_mr *dray_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access);
struct ibv_mr *dray_reg_dmabuf_mr(struct ibv_pd *ibpd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access);
int dray_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *dray_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int dray_dealloc_mw(struct ibv_mw *mw);
int dray_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
int dray_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
struct ibv_cq *dray_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *dray_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int dray_destroy_cq(struct ibv_cq *ibcq);
int dray_resize_cq(struct ibv_cq *ibcq, int cqe);
struct ibv_qp *dray_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr);
struct ibv_qp *dray_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int dray_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int dray_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int dray_destroy_qp(struct ibv_qp *ibqp);
struct ibv_ah *dray_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
struct ibv_srq *dray_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *dray_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int dray_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int dray_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int dray_destroy_srq(struct ibv_srq *ibsrq);
int dray_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_xrcd *dray_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr);
int dray_close_xrcd(struct ibv_xrcd *ibxrcd);
struct ibv_qp *dray_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);
int dray_destroy_ah(struct ibv_ah *ibah);

/* dm.c: device memory */
struct ibv_dm *dray_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int dray_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *dray_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);

/* qp.c: data path of the work queues */
int dray_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int dray_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int dray_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
bool dray_srq_retire(struct dray_srq *srq, uint32_t tag, uint64_t *wr_id);
void dray_qp_fill_wr_ops(struct dray_qp *qp, uint64_t send_ops_flags);
void dray_qp_reset_indexes(struct dray_qp *qp);
struct dray_qp *dray_qp_lookup(struct dray_context *ctx, uint32_t qpn);
int dray_qp_table_insert(struct dray_context *ctx, struct dray_qp *qp);
void dray_qp_table_remove(struct dray_context *ctx, struct dray_qp *qp);
void dray_qp_table_free(struct dray_context *ctx);

/* Operations of the extended send API this provider implements. */
#define DRAY_SEND_OPS_FLAGS						\
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |				\
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_LOCAL_INV |	\
	 IBV_QP_EX_WITH_BIND_MW)

/* The extended send API of a UC QP: no READ, atomics or SEND_INV. */
#define DRAY_UC_SEND_OPS_FLAGS						\
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)

/* The extended send API of an XRC initiator: RC's but IBTA 1.5's. */
#define DRAY_XRC_SEND_OPS_FLAGS		DRAY_SEND_OPS_FLAGS

/* The extended send API of a UD QP: SENDs only. */
#define DRAY_UD_SEND_OPS_FLAGS						\
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

/* cq.c: data path of the completion queues */
int dray_poll_cq(struct ibv_cq *ibcq, int nwc, struct ibv_wc *wc);
int dray_arm_cq(struct ibv_cq *ibcq, int solicited_only);
void dray_cq_fill_poll_ops(struct dray_cq *cq, uint64_t wc_flags);
void dray_cq_clean(struct dray_cq *cq, uint32_t qpn, struct dray_srq *srq);
void dray_cq_clean_xsrq(struct dray_cq *cq, uint32_t srqn);

/* Completion fields the extended CQ API can return (create_cq_ex). */
#define DRAY_WC_FLAGS	IBV_WC_STANDARD_FLAGS

#endif /* __DRAY_H__ */
