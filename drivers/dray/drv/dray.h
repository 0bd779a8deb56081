/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray driver: shared definitions. The driver reaches the NIC only
 * through ../bus.h and the formats in include/dray/.
 */
#ifndef DRAY_DRV_H
#define DRAY_DRV_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include <dray/dray_regs.h>
#include <dray/dray_admin.h>
#include <dray/dray_eq.h>
#include <dray/dray_uar.h>
#include <dray/dray_ring.h>

#include "../bus.h"

#define DRAY_AQ_LOG_DEPTH	5
#define DRAY_AQ_TIMEOUT_MS	5000
#define DRAY_ASYNC_EQ_LOG_DEPTH	6

/* Interrupt vector assignment. */
enum {
	DRAY_VEC_ADMIN	= 0,
	DRAY_VEC_ASYNC	= 1,
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

struct dray_eq {
	struct dray_eqe		*ring;
	dma_addr_t		dma;
	u32			depth;
	u32			eqn;
	u32			ci;
	u8			vector;
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
};

enum {
	DRAY_DEV_REMOVED,	/* the NIC reported a surprise removal */
};

struct dray_dev {
	struct ib_device	ibdev;
	struct dray_hw		*hw;
	struct platform_device	*pdev;
	struct net_device	*ndev;	/* identity only; no reference */
	struct list_head	list;	/* on dray_devs, under dray_devs_lock */
	struct work_struct	unreg_work;
	unsigned long		flags;	/* DRAY_DEV_* bits */

	struct dray_aq		aq;
	struct dray_eq		async_eq;
	struct dray_caps	caps;
};

struct dray_ucontext {
	struct ib_ucontext		ibucontext;
	u32				uar_index;
	dma_addr_t			uar_dma;
	struct rdma_user_mmap_entry	*db_entry;
};

/* An mmap-able page owned by a context; freed after its last mapping. */
struct dray_mmap_entry {
	struct rdma_user_mmap_entry	rdma_entry;
	struct page			*page;
};

static inline struct dray_dev *to_ddev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct dray_dev, ibdev);
}

static inline struct dray_ucontext *to_ductx(struct ib_ucontext *uctx)
{
	return container_of(uctx, struct dray_ucontext, ibucontext);
}

static inline struct device *dray_dma_dev(struct dray_dev *dev)
{
	return dev->ibdev.dev.parent;
}

#define ddev_err_rl(dev, fmt, ...) \
	ibdev_err_ratelimited(&(dev)->ibdev, fmt, ##__VA_ARGS__)
#define ddev_dbg(dev, fmt, ...) \
	ibdev_dbg(&(dev)->ibdev, fmt, ##__VA_ARGS__)

/* aq.c */
int dray_aq_init(struct dray_dev *dev);
void dray_aq_destroy(struct dray_dev *dev);
int dray_aq_exec(struct dray_dev *dev, struct dray_aq_entry *entry,
		 u64 *result);

/* cmd.c: one function per admin opcode */
int dray_cmd_query_device(struct dray_dev *dev, struct dray_caps *caps);
int dray_cmd_query_port(struct dray_dev *dev, u8 port,
			struct dray_port_attr *attr);
int dray_cmd_set_gid(struct dray_dev *dev, u32 index, const u8 *gid);
int dray_cmd_del_gid(struct dray_dev *dev, u32 index);
int dray_cmd_create_eq(struct dray_dev *dev, dma_addr_t ring, u8 log_depth,
		       u8 vector, u32 *eqn);
int dray_cmd_destroy_eq(struct dray_dev *dev, u32 eqn);
int dray_cmd_create_uar(struct dray_dev *dev, dma_addr_t page, u32 *index);
int dray_cmd_destroy_uar(struct dray_dev *dev, u32 index);

/* eq.c */
int dray_async_eq_init(struct dray_dev *dev);
void dray_async_eq_destroy(struct dray_dev *dev);
void dray_async_eq_free(struct dray_dev *dev);

/* verbs.c */
extern const struct ib_device_ops dray_dev_ops;

#endif /* DRAY_DRV_H */
