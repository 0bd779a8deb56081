/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the queue engine (dev_engine.c). It runs the data path
 * in passes under engine.lock: received frames to the transport, then
 * every active QP's doorbell records, timers and send queue (the
 * contract with the layers it runs is at the top of dev.h).
 *
 * Two of its functions are callbacks for the layers it runs, which may
 * call them from inside a pass: dray_hw_engine_kick() (another pass,
 * please) and dray_hw_engine_rx() (a frame for the engine: the port's
 * receive handler, and the transport's internal loopback).
 */
#ifndef DRAY_DEV_ENGINE_H
#define DRAY_DEV_ENGINE_H

#include <linux/atomic.h>
#include <linux/compiler_types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/xarray.h>

struct dray_hw;
struct dray_hw_qp;
struct dray_uar;
struct task_struct;

struct dray_hw_engine {
	spinlock_t		lock;		/* dev.h: "Locking" */
	struct mutex		admin_lock;	/* ditto */
	struct task_struct	*thread;
	bool			polling;	/* thread awake, will pass again */
	struct timer_list	timer;		/* QP deadlines while not polling */
	bool			stopped;	/* no more passes */
	wait_queue_head_t	wait;
	atomic_t		pending;	/* wake-up reasons since last pass */
	atomic_t		rerun;		/* work for the lock holder */
	struct sk_buff_head	rx_queue;	/* own lock; filled in softirq */
	struct list_head	active;		/* QPs not in RESET */
	/* The object tables. Entries change under both locks; PDs, CQs too. */
	struct xarray		pds, mrs, cqs, qps, ahs;
	/*
	 * SRQs: entries change under both locks (passes look XRC SRQs up
	 * by the number a request names); XRC domains under admin_lock.
	 */
	struct xarray		srqs, xrcds;
	u32			srqn_next, xrcdn_next;	/* admin_lock */
	u64			srq_serial;	/* admin_lock: SRQs made */
	u32			mr_key_seq;	/* next MR index; admin_lock */
	u64			kicks;		/* wake-up calls; under obj_lock */
	u8			*mr_variant;	/* key low byte; admin_lock */
	u32			qpn_next;	/* next QPN; admin_lock */
	u32			pdn_next, cqn_next, ahn_next;	/* admin_lock */
	bool			need_wakeup;	/* UARs flagged; under obj_lock */
	atomic64_t		rx_dropped;	/* rx_queue full (statistics) */
	u64			sleeps;		/* engine thread only: sleeps */
	/* DRAY_REG_ENGINE_POLL (in ns) and _CPU; written under poll_lock */
	struct mutex		poll_lock;
	u64			poll_ns;	/* read by the thread unlocked */
	u32			cpu_reg;
};

/*
 * dray_hw_engine_start(): initialize the engine and start its thread
 * (before the port can deliver frames). dray_hw_engine_stop(): stop the
 * thread and the timer and free the object tables, which the device
 * reset emptied; rx_queue and dray_hw_engine_rx() stay usable (frames
 * are just queued) until the port is detached.
 */
int dray_hw_engine_start(struct dray_hw *hw);
void dray_hw_engine_stop(struct dray_hw *hw);
/*
 * Wake the engine thread, or make its current pass be followed by another
 * one without sleeping. Context: any. engine.lock not required.
 */
void dray_hw_engine_kick(struct dray_hw *hw);
/*
 * DRAY_REG_ENGINE_POLL and DRAY_REG_ENGINE_CPU: read, write (invalid
 * values ignored, as the register block says), and back to their reset
 * values. Context: process (a CPU change moves the thread).
 */
u32 dray_hw_engine_poll_read(struct dray_hw *hw, u32 offset);
void dray_hw_engine_poll_write(struct dray_hw *hw, u32 offset, u32 value);
void dray_hw_engine_poll_reset(struct dray_hw *hw);
/*
 * Take and release engine.lock outside the engine (admin commands, around
 * publishing, changing or unpublishing what a pass sees). The release
 * hands work that others left to the holder meanwhile to the thread.
 * Context: process, not under engine.lock.
 */
void dray_hw_engine_lock(struct dray_hw *hw) __acquires(&hw->engine.lock);
void dray_hw_engine_unlock(struct dray_hw *hw) __releases(&hw->engine.lock);
/*
 * Queue a received frame for the engine (skb->data at the IP header,
 * skb->protocol set; the skb is not shared) and run passes here if
 * engine.lock is free, else kick the thread. Consumes @skb.
 * Context: any (softirq from the port, a pass for loopback).
 */
void dray_hw_engine_rx(struct dray_hw *hw, struct sk_buff *skb);
/*
 * The port's netdev is gone (a surprise removal): no QP can reach its
 * peer again. Every QP not in RESET goes to ERR, as on a catastrophic
 * error, and the passes flush what each holds, so that every WQE posted
 * completes before the driver tears the device down. No QP event: the
 * removal is the device's to report.
 * Context: process (the port's netdev notifier), not under engine.lock.
 */
void dray_hw_engine_port_gone(struct dray_hw *hw);
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

#endif /* DRAY_DEV_ENGINE_H */
