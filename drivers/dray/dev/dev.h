/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: internal state. Nothing outside drivers/dray/dev/
 * includes this file; the driver sees the NIC only through ../bus.h.
 */
#ifndef DRAY_DEV_H
#define DRAY_DEV_H

#include <linux/bitfield.h>
#include <linux/netdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/idr.h>

#include <dray/dray_regs.h>
#include <dray/dray_admin.h>
#include <dray/dray_eq.h>
#include <dray/dray_uar.h>
#include <dray/dray_ring.h>
#include <dray/dray_verr.h>

#include "../bus.h"

/* The silicon's fixed limits: what QUERY_DEVICE reports and enforces. */
#define DRAY_HW_NUM_VECTORS	8
#define DRAY_HW_MAX_EQ		8
#define DRAY_HW_MAX_UAR		256
#define DRAY_HW_GID_TBL_LEN	128
#define DRAY_HW_MAX_PD		4096
#define DRAY_HW_MAX_MR		16384
#define DRAY_HW_MAX_MR_SIZE	BIT_ULL(36)
#define DRAY_HW_MAX_QP		1024
#define DRAY_HW_MAX_QP_WR	16384
#define DRAY_HW_MAX_SGE		16
#define DRAY_HW_MAX_CQ		2048
#define DRAY_HW_MAX_CQE		65536
#define DRAY_HW_MAX_AH		65536
#define DRAY_HW_MAX_RD_ATOM	16
#define DRAY_HW_MAX_INLINE	256
#define DRAY_HW_MAX_MSG		BIT(31)
#define DRAY_HW_ACK_DELAY	15
#define DRAY_HW_VENDOR_ID	0x1af4		/* virtual device */
#define DRAY_HW_PART_ID		0xd7a1
#define DRAY_HW_HW_VER		1
#define DRAY_HW_FW_VER		(FIELD_PREP(DRAY_FW_VER_MAJOR_MASK, 1) | \
				 FIELD_PREP(DRAY_FW_VER_MINOR_MASK, 0) | \
				 FIELD_PREP(DRAY_FW_VER_PATCH_MASK, 0))

#define DRAY_ROCE_V2_PORT	4791

/*
 * The object layer and queue engine (dev_qp.h) use the limits above, and
 * struct dray_hw embeds the engine: include it here, after the limits.
 */
#include "dev_qp.h"

struct dray_hw_eq {
	bool		valid;
	u8		vector;
	bool		armed;
	u32		depth;		/* entries, power of two */
	u32		pi;		/* free running producer index */
	u32		ci;		/* consumer index from the doorbell */
	u64		overflows;
	struct dray_eqe	*ring;
};

struct dray_hw_gid {
	bool		valid;
	u8		gid[16];
};

struct dray_hw_uar {
	struct dray_uar	*page;
};

struct dray_hw_irq {
	dray_bus_irq_handler_t	handler;
	void			*cookie;
};

/* What the bus (the PCI function's equivalent) knows of the NIC. */
struct dray_bus_dev {
	struct device		*dma_dev;
	void			(*removed)(void *ctx);
	void			*removed_ctx;
};

struct dray_hw {
	struct dray_bus_dev	bus;

	/* Register file. reg_lock protects everything in this group. */
	spinlock_t		reg_lock;
	u32			dev_ctrl;
	u32			dev_sts;
	u32			fatal_syndrome;
	u64			aq_sq_base;
	u64			aq_cq_base;
	u32			aq_cfg;
	u16			aq_sq_pi;
	u16			aq_sq_ci;

	/* Admin engine state, owned by aq_work (ordered workqueue). */
	struct workqueue_struct	*wq;
	struct work_struct	aq_work;
	struct dray_aq_entry	*aq_sq;
	struct dray_aq_cqe	*aq_cq;
	u32			aq_depth;
	u8			aq_vector;
	u32			aq_cq_pi;

	/* Interrupt delivery. irq_lock protects irq[] and irq_pending. */
	spinlock_t		irq_lock;
	struct dray_hw_irq	irq[DRAY_HW_NUM_VECTORS];
	unsigned long		irq_pending;
	struct work_struct	irq_work;

	/*
	 * Objects. obj_lock (a spinlock: events are raised from softirq
	 * context) protects eqs[], gids[] and uars[].
	 */
	spinlock_t		obj_lock;
	struct dray_hw_eq	eqs[DRAY_HW_MAX_EQ];
	struct dray_hw_gid	gids[DRAY_HW_GID_TBL_LEN];
	struct dray_hw_uar	uars[DRAY_HW_MAX_UAR];
	u32			uar_end;	/* one past the last in use */

	/* The port. port_lock protects the snapshot below. */
	struct net_device	*ndev;
	netdevice_tracker	ndev_tracker;
	struct notifier_block	nb;
	struct netdev_net_notifier nn;
	bool			rx_attached;	/* under RTNL */
	spinlock_t		port_lock;
	u8			port_state;
	u8			phys_state;
	u32			eth_mtu;
	u32			speed_mbps;
	u8			mac[ETH_ALEN];
	u8			node_guid[8];
	atomic64_t		rx_roce_no_qp;

	/* PDs, MRs, CQs, QPs, AHs and the data path (dev_qp.h). */
	struct dray_hw_engine	engine;
};

/* Outcome of one admin command; what its completion entry reports. */
struct dray_aq_result {
	u8	status;		/* enum dray_aq_status */
	u32	syndrome;	/* enum dray_aq_syndrome */
	u64	result;
};

static inline void dray_aq_fail(struct dray_aq_result *res, u8 status,
				u32 syndrome)
{
	res->status = status;
	res->syndrome = syndrome;
}

/* dev_main.c */
void *dray_hw_dma_va(struct dray_hw *hw, u64 addr, size_t len);
void dray_hw_raise_irq(struct dray_hw *hw, unsigned int vector);
void dray_hw_set_fatal(struct dray_hw *hw, enum dray_fatal_syndrome syn);

/* dev_admin.c */
void dray_hw_aq_work(struct work_struct *work);
void dray_hw_reset_objects(struct dray_hw *hw);

/* dev_eq.c */
int dray_hw_eq_create(struct dray_hw *hw, const struct dray_cmd_create_eq *cmd,
		      u32 *eqn, u32 *syndrome);
int dray_hw_eq_destroy(struct dray_hw *hw, u32 eqn);
void dray_hw_eq_doorbell(struct dray_hw *hw, u32 value);
void dray_hw_eq_post(struct dray_hw *hw, u32 eqn, u8 type, u32 data0,
		     u64 data1);

/* dev_port.c */
int dray_hw_port_attach(struct dray_hw *hw, struct net_device *ndev);
void dray_hw_port_detach(struct dray_hw *hw);
void dray_hw_port_query(struct dray_hw *hw, struct dray_port_attr *attr);

#endif /* DRAY_DEV_H */
