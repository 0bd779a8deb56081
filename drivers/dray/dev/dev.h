/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the device as a whole (struct dray_hw), and the rules
 * every file of the model follows. Nothing outside drivers/dray/dev/
 * includes a header of this directory; the driver sees the NIC only
 * through ../bus.h.
 *
 * Names (prefix: layer):
 *  - dray_bus_*: the bus interface of ../bus.h, the only names the driver
 *    uses (dev_main.c, dev_irq.c implement it).
 *  - dray_hw_* / DRAY_HW_*: the device's own units and its object layer:
 *    register block, interrupts, admin queue processor, event queues,
 *    port, memory translation, CQs, QPs and their work queues, AHs, the
 *    queue engine. dray_hw_cmd_*() are the admin command handlers.
 *  - dray_xport_*: the RoCEv2 transport's entry points, called by the
 *    engine and the QP objects (dev_xport.h); dray_xp_* / DRAY_XP_*: the
 *    transport's own parts (dev_xport_int.h).
 *  - dray_ud_* / DRAY_UD_*: the UD service, called by the transport's
 *    entry points (dev_ud.h).
 *  - dray_wire_*, dray_icrc_*, dray_psn_*, struct dray_pkt and the
 *    DRAY_OP_* / DRAY_BTH_* / DRAY_AETH_* family: pure wire formats and
 *    arithmetic (dev_wire.h), compiled in user space by tests/unit.
 *  - dray_mtu_from_eth() and friends (dev_logic.h), dray_qp_transition_*
 *    (dev_qp_fsm.h): pure logic, likewise unit tested.
 *  - Hardware formats shared with the driver and the provider are
 *    include/dray/ (dray_* structures, DRAY_* constants without HW/XP/UD).
 *
 * Locking and contexts:
 *  - Admin commands run one at a time on the admin queue's ordered
 *    workqueue (process context). engine.admin_lock (a mutex) serializes
 *    them against device reset; allocations and mappings happen under it.
 *    They take engine.lock only around the steps that publish, change or
 *    unpublish what a pass sees (MRs, AHs and QPs in the object tables,
 *    QP state and attributes), with dray_hw_engine_lock()/_unlock(). So
 *    once an admin command dropped engine.lock after unpublishing an
 *    object, no pass uses it. PDs and CQs are found by passes only
 *    through QPs and MRs, whose references (users) admin commands count
 *    under admin_lock.
 *  - Data-path work is done in engine passes (dev_engine.c), each under
 *    engine.lock, a spinlock taken with bottom halves off. A pass runs on
 *    the engine thread, in the softirq that received a frame, or in the
 *    context that wrote DRAY_REG_ENGINE_KICK, whichever finds the lock
 *    free: everything a pass does must not sleep (GFP_ATOMIC). Everything
 *    in the objects (dev_obj.h) is protected by engine.lock unless a
 *    comment says otherwise; the engine-side functions of dev_wq.h,
 *    dev_mem.h, dev_cq.h and the transport assert it (lockdep).
 *  - reg_lock protects the register file, irq_lock the vector table,
 *    obj_lock (a spinlock: events are raised from softirq context) the
 *    EQs, GIDs and UARs, port_lock the port snapshot. None of them is
 *    held while taking engine.lock; obj_lock and port_lock may be taken
 *    under it.
 *
 * Ring indexes: every SQ and RQ index is free running (u32). For a work
 * queue, completed <= fetched <= posted (mod 2^32) and
 * posted - completed <= depth always hold: posted is the producer index
 * read from the doorbell record and validated by the engine (a value
 * outside [fetched, completed + depth] is a protocol violation that moves
 * the QP to ERR with DRAY_VERR_*_DOORBELL), so the transport never reads
 * the user-writable record itself. The device may read an SQ WQE again
 * until it is completed (dray_queue.h: software does not reuse a slot
 * before that); whatever it reads is validated again.
 *
 * Who moves what: the engine moves posted; the transport moves
 * sq.fetched (when it starts a WQE: dray_hw_sq_fetch() only reads) and
 * completes through dray_hw_sq_complete()/dray_hw_rq_complete(), which
 * move completed; dray_hw_rq_fetch() moves rq.fetched. After the
 * transport ran, the engine checks sq.fetched and publishes it as the
 * doorbell record's consumer index.
 *
 * Engine calls into the transport, per pass: dray_xport_rx() for queued
 * frames; then for each QP not in RESET or INIT: in ERR,
 * dray_xport_error() once and the flush; else dray_xport_timer() if its
 * deadline is due, and dray_xport_send() if the transport wants to run.
 * The engine sleeps only after passes that changed nothing it can see
 * (no frame, no doorbell move, no due deadline, no kick): a transport
 * with work left keeps it awake with a deadline at or before jiffies, or
 * with dray_hw_engine_kick().
 */
#ifndef DRAY_DEV_H
#define DRAY_DEV_H

#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <dray/dray_admin.h>
#include <dray/dray_eq.h>
#include <dray/dray_regs.h>
#include <dray/dray_ring.h>
#include <dray/dray_uar.h>
#include <dray/dray_verr.h>

#include "../bus.h"
#include "dev_engine.h"
#include "dev_limits.h"
#include "dev_mcast.h"
#include "dev_xport.h"

struct dray_aq_entry;

/* What the bus (the PCI function's equivalent) knows of the NIC. */
struct dray_bus_dev {
	struct device		*dma_dev;
	void			(*removed)(void *ctx);
	void			*removed_ctx;
};

struct dray_hw_eq {
	bool		valid;
	u8		vector;
	bool		armed;
	u32		depth;		/* entries, power of two */
	u32		pi;		/* free running producer index */
	u32		ci;		/* consumer index from the doorbell */
	u64		overflows;	/* events dropped, ever */
	u64		lost;		/* ... not yet reported (EQ_OVERRUN) */
	struct dray_eqe	*ring;
};

struct dray_hw_gid {
	bool		valid;
	u8		gid[16];
};

struct dray_hw_uar {
	struct dray_uar	*page;
};

/* Counter sets (QUERY_COUNTERS), set 0 the port's default one. */
#define DRAY_HW_MAX_CSET	64

/*
 * A counter set: what its QPs counted while they were in it and then
 * left it (BIND_COUNTER_SET, DESTROY_QP); the QPs in it add what they
 * counted since they joined (dev_stats.c).
 */
struct dray_hw_cset {
	bool			valid;
	struct dray_xp_stats	acc;
};

struct dray_hw_irq {
	dray_bus_irq_handler_t	handler;
	void			*cookie;
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
	 * context) protects eqs[], gids[], uars[] and mcg[].
	 */
	spinlock_t		obj_lock;
	struct dray_hw_eq	eqs[DRAY_HW_MAX_EQ];
	struct dray_hw_gid	gids[DRAY_HW_GID_TBL_LEN];
	struct dray_hw_mcg	mcg[DRAY_HW_MAX_MCG];
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
	atomic64_t		rx_roce_no_qp;	/* RoCE frames for no QP */
	atomic64_t		rx_malformed;	/* frames no QP could be told of */

	/*
	 * Counter sets: changed by admin commands (admin_lock) under
	 * engine.lock; read under admin_lock.
	 */
	struct dray_hw_cset	csets[DRAY_HW_MAX_CSET];

	/* The object tables and the data path (dev_engine.h, dev_obj.h). */
	struct dray_hw_engine	engine;
};

/* Outcome of one admin command; what its completion entry reports. */
struct dray_aq_result {
	u8	status;		/* enum dray_aq_status */
	u32	syndrome;	/* enum dray_aq_syndrome */
	u64	result;
};

/* The status of a failed table insertion: the table is full, or memory. */
static inline u8 dray_aq_alloc_status(int err)
{
	return err == -ENOMEM ? DRAY_AQ_STS_NO_MEMORY : DRAY_AQ_STS_NO_RESOURCES;
}

static inline void dray_aq_fail(struct dray_aq_result *res, u8 status,
				u32 syndrome)
{
	res->status = status;
	res->syndrome = syndrome;
}

/* Are the reserved fields of a QUERY_COUNTERS or QUERY_STATE zero? */
static inline bool dray_hw_query_id_ok(const struct dray_cmd_query_id *cmd,
				       struct dray_aq_result *res)
{
	if (cmd->reserved[0] || cmd->reserved[1] || cmd->reserved[2] ||
	    cmd->reserved2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return false;
	}
	return true;
}

/* dev_main.c: the register block, device life, fatal errors */
void dray_hw_set_fatal(struct dray_hw *hw, enum dray_fatal_syndrome syn);

/* dev_irq.c: interrupt vectors */
void dray_hw_irq_work(struct work_struct *work);
void dray_hw_raise_irq(struct dray_hw *hw, unsigned int vector);

/* dev_admin.c: the admin queue processor */
void dray_hw_aq_work(struct work_struct *work);

/* dev_mem.c: bus addresses (host memory the device was given) */
void *dray_hw_dma_va(struct dray_hw *hw, u64 addr, size_t len);
/*
 * Copy a command's input mailbox of exactly @size bytes at bus address
 * @addr (@len as the command says) once; false with *res failed if
 * @len is not @size or the range is not host memory.
 */
bool dray_hw_mailbox_in(struct dray_hw *hw, u64 addr, u32 len, void *dst,
			size_t size, struct dray_aq_result *res);

/*
 * Write a command's output of @size bytes to the host buffer at @addr of
 * @len bytes (@len as the command says: at most @size are written, the
 * start); res->result = bytes written. False with *res failed if @len is
 * 0 or the range is not host memory.
 */
bool dray_hw_mailbox_out(struct dray_hw *hw, u64 addr, u32 len,
			 const void *src, size_t size,
			 struct dray_aq_result *res);

/* dev_reset.c: a device reset forgets every object */
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
/* The port's GID at index, false if none. Context: process or softirq. */
bool dray_hw_gid_get(struct dray_hw *hw, u32 index, u8 *gid);
/* The port's current largest usable MTU (enum dray_mtu). */
u8 dray_hw_port_active_mtu(struct dray_hw *hw);

#endif /* DRAY_DEV_H */
