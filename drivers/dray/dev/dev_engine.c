// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the queue engine.
 *
 * Data-path work is done in passes, each under engine.lock (a spinlock,
 * bottom halves off): received frames go to the transport; then every QP
 * that is not in RESET gets its doorbell records read and checked, its
 * timer run, its send queue offered to the transport, its SQD drain
 * detected, or, in ERR, its work queues flushed.
 *
 * Who runs a pass: whoever finds engine.lock free when there is work.
 * The port's rx_handler (softirq) queues a received frame and, if it gets
 * the lock, runs passes right there; a write to DRAY_REG_ENGINE_KICK runs
 * them in the writer's context (process or softirq, interrupts on). Such
 * inline runs stop after DRAY_ENGINE_INLINE_PASSES passes that still
 * leave work, and hand the rest to the engine thread. One that finds the
 * lock taken leaves its work to the holder: it sets engine.rerun before
 * trying the lock, and every holder, inline run or thread, looks at rerun
 * after releasing the lock and runs again if it is set (each side issues
 * a full barrier between its store and its load, so one of them sees the
 * other's). So a message and its ACK normally cross no thread, even when
 * both CPUs work on the device at once. A pass never recurses into
 * another: frames it sends to a local port are only queued (the veth
 * delivers through its own softirq, the internal loopback straight to
 * rx_queue) and taken by the next pass.
 *
 * The engine thread (one per device) polls while passes find work, runs
 * QP deadlines (retransmit and RNR timers) and takes whatever the inline
 * runs left. After DRAY_REG_ENGINE_POLL's time without work (5 us unless
 * software asks for longer) it sleeps until a
 * kick (DRAY_REG_ENGINE_KICK that found the lock taken, an admin
 * command, an inline run with work left, the transport) or the nearest
 * QP deadline. Deadlines that inline runs arm while the thread sleeps
 * are kept by engine.timer (set to the nearest one an inline run saw),
 * whose expiry runs passes in the timer softirq or wakes the thread.
 *
 * NEED_WAKEUP (the io_uring SQPOLL pattern): at the end of every run,
 * thread or inline, the flag in every UAR of the device is cleared while
 * a later pass is certain without software's help: the thread is polling,
 * or an RC requester waits for its peer (the response frames run passes,
 * and every pass reads every doorbell record; the retransmit deadline
 * covers loss). Otherwise the flag is set, a full barrier issued and every
 * doorbell record read once more before the run ends (software stores
 * its producer index, issues a full barrier, then reads NEED_WAKEUP: one
 * of the two sides sees the other's store).
 */

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "dev.h"
#include "dev_obj.h"
#include "dev_wq.h"
#include "dev_xport.h"

/*
 * Idle polling of the thread before sleeping, DRAY_REG_ENGINE_POLL: by
 * default brief, as inline passes do most of the work and the host may be
 * QEMU TCG with two vCPUs shared with busy-polling applications; a host
 * with a core to spare can keep the thread polling (no wake-up calls).
 */
/* Frames handed to the transport per pass, so admin commands get in. */
#define DRAY_ENGINE_RX_BUDGET	256
/* Frames waiting for the engine before the port drops them. */
#define DRAY_ENGINE_RX_MAX	4096
/* Passes an inline run makes before it leaves the rest to the thread. */
#define DRAY_ENGINE_INLINE_PASSES	4
/* Runs one inline caller makes for others (engine.rerun), at most. */
#define DRAY_ENGINE_INLINE_RERUNS	4

void dray_hw_engine_kick(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;

	atomic_set(&eng->pending, 1);
	/*
	 * wq_has_sleeper() orders the store above before its check; pairs
	 * with the barrier in prepare_to_wait() before the sleeper tests
	 * pending.
	 */
	if (wq_has_sleeper(&eng->wait))
		wake_up(&eng->wait);
}

/*
 * The two halves of engine.rerun (the top of this file). A caller that
 * wants a pass stores rerun, then tries the lock; a holder releases the
 * lock, then loads rerun. A full barrier sits between the store and the
 * load on both sides, so at least one of them sees the other: the caller
 * gets the lock, or the holder sees rerun and runs again.
 */
static void engine_want_run(struct dray_hw_engine *eng)
{
	/* atomic_xchg() is fully ordered: rerun before the lock word. */
	atomic_xchg(&eng->rerun, 1);
}

static void engine_lock(struct dray_hw_engine *eng)
	__acquires(&eng->lock)
{
	spin_lock_bh(&eng->lock);
}

/* Release engine.lock; true if work was left to the holder meanwhile. */
static bool engine_release(struct dray_hw_engine *eng)
	__releases(&eng->lock)
{
	spin_unlock_bh(&eng->lock);
	/* The lock released before rerun is read. */
	smp_mb();
	return atomic_read(&eng->rerun);
}

void dray_hw_engine_lock(struct dray_hw *hw)
	__acquires(&hw->engine.lock)
{
	engine_lock(&hw->engine);
}

void dray_hw_engine_unlock(struct dray_hw *hw)
	__releases(&hw->engine.lock)
{
	if (engine_release(&hw->engine))
		dray_hw_engine_kick(hw);
}

/* Set or clear NEED_WAKEUP in every UAR of the device. */
static void engine_set_need_wakeup(struct dray_hw *hw, bool on)
{
	__le32 flags = cpu_to_le32(on ? DRAY_UAR_F_NEED_WAKEUP : 0);
	unsigned int i;

	spin_lock_bh(&hw->obj_lock);
	WRITE_ONCE(hw->engine.need_wakeup, on);
	/* The UARs in use, not the whole table: this runs per message. */
	for (i = 0; i < hw->uar_end; i++)
		if (hw->uars[i].page)
			WRITE_ONCE(hw->uars[i].page->dev.flags, flags);
	spin_unlock_bh(&hw->obj_lock);
}

/* Hand up to a budget of received frames to the transport. */
static bool engine_rx(struct dray_hw *hw)
{
	struct sk_buff *skb;
	unsigned int n;

	for (n = 0; n < DRAY_ENGINE_RX_BUDGET; n++) {
		skb = skb_dequeue(&hw->engine.rx_queue);
		if (!skb)
			break;
		dray_xport_rx(hw, skb);
	}
	return n > 0;
}

static bool qp_deadline_due(const struct dray_hw_qp *qp, unsigned long now)
{
	return qp->deadline && time_after_eq(now, qp->deadline);
}

/* One pass over one QP not in RESET. Returns true if it did anything. */
static bool engine_qp(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	bool work;

	if (qp->state == DRAY_QPS_ERR) {
		work = qp->err_pending;
		if (qp->err_pending) {
			/* The transport gives back what it holds, then flush. */
			qp->err_pending = false;
			dray_xport_error(hw, qp);
		}
		return dray_hw_qp_flush(hw, qp) || work;
	}

	work = dray_hw_wq_poll(hw, qp, &qp->sq);
	work |= dray_hw_wq_poll(hw, qp, &qp->rq);
	if (qp->state == DRAY_QPS_ERR)
		return true;

	if (qp->state == DRAY_QPS_INIT)
		return work;

	/*
	 * Received frames not yet looked at may hold the responses the
	 * timer would give up on: frames first. (A timer held off past a
	 * whole timeout fires late, and late timers use no retry.)
	 */
	if (qp_deadline_due(qp, jiffies) &&
	    skb_queue_empty_lockless(&hw->engine.rx_queue)) {
		qp->deadline = 0;
		dray_xport_timer(hw, qp);
		work = true;
	}
	/* RTR too: the responder sends ACKs and READ responses. */
	if (dray_xport_want_run(qp)) {
		dray_xport_send(hw, qp);
		work = true;
	}
	/* The transport may have started WQEs here or on a frame. */
	work |= dray_hw_sq_publish(hw, qp);
	if (qp->state == DRAY_QPS_SQD && qp->sq_draining &&
	    dray_xport_sq_idle(qp)) {
		qp->sq_draining = false;
		dray_hw_qp_event(hw, qp, DRAY_EQE_SQ_DRAINED);
		work = true;
	}
	return work;
}

static bool engine_pass(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_qp *qp;
	bool work;

	lockdep_assert_held(&eng->lock);

	work = engine_rx(hw);
	/* The transport never adds or removes QPs of the active list. */
	list_for_each_entry(qp, &eng->active, active)
		work |= engine_qp(hw, qp);
	return work;
}

/* Has a doorbell record moved where the engine has to act on it? */
static bool qp_doorbell_moved(struct dray_hw_qp *qp)
{
	bool sq = false, rq = false;

	if (qp->db_broken)
		return false;
	if ((qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQE ||
	     qp->state == DRAY_QPS_ERR) && dray_hw_wq_exists(&qp->sq))
		sq = le32_to_cpu(READ_ONCE(qp->sq.db->producer)) !=
		     qp->sq.posted;
	/*
	 * An SRQ's WQEs are taken when messages come, never flushed: a QP
	 * on one (or of an XRC type) has no RQ doorbell.
	 */
	if (qp->state == DRAY_QPS_ERR && dray_hw_wq_exists(&qp->rq))
		rq = le32_to_cpu(READ_ONCE(qp->rq.db->producer)) !=
		     qp->rq.posted;
	return sq || rq;
}

/*
 * Is there work for another pass, and else how long may the engine
 * sleep (*timeout: jiffies to the nearest QP deadline)?
 */
static bool engine_work_waiting(struct dray_hw *hw, long *timeout)
{
	struct dray_hw_engine *eng = &hw->engine;
	unsigned long now = jiffies, next = 0;
	struct dray_hw_qp *qp;

	lockdep_assert_held(&eng->lock);

	if (!skb_queue_empty_lockless(&eng->rx_queue))
		return true;
	list_for_each_entry(qp, &eng->active, active) {
		if (qp->err_pending || qp_doorbell_moved(qp) ||
		    qp_deadline_due(qp, now) || dray_xport_want_run(qp))
			return true;
		if (qp->state == DRAY_QPS_SQD && qp->sq_draining &&
		    dray_xport_sq_idle(qp))
			return true;
		if (qp->deadline &&
		    (!next || time_before(qp->deadline, next)))
			next = qp->deadline;
	}
	*timeout = next ? (long)(next - now) : MAX_SCHEDULE_TIMEOUT;
	return false;
}

/*
 * Does a requester wait for its peer? Then a response frame or the
 * retransmit timer runs a pass soon anyway.
 */
static bool engine_expects_frames(struct dray_hw *hw)
{
	struct dray_hw_qp *qp;

	lockdep_assert_held(&hw->engine.lock);
	list_for_each_entry(qp, &hw->engine.active, active)
		if (dray_xport_awaiting(qp))
			return true;
	return false;
}

/*
 * The end of a run: is there work for another pass? If not, set
 * NEED_WAKEUP as the top of this file says (with the last look at the
 * doorbell records), and return with *timeout the time to the nearest
 * QP deadline.
 */
static bool engine_settle(struct dray_hw *hw, long *timeout)
{
	struct dray_hw_engine *eng = &hw->engine;
	bool flag;

	lockdep_assert_held(&eng->lock);

	if (engine_work_waiting(hw, timeout))
		return true;
	flag = !eng->polling && !engine_expects_frames(hw);
	/*
	 * need_wakeup is changed under obj_lock, also by a wake-up call
	 * that found engine.lock taken; such a call also kicks the thread,
	 * which settles again after its pass.
	 */
	if (flag == READ_ONCE(eng->need_wakeup))
		return false;
	engine_set_need_wakeup(hw, flag);
	if (!flag)
		return false;
	/*
	 * NEED_WAKEUP before the doorbell loads below; pairs with software's
	 * full barrier between its producer store and its NEED_WAKEUP load.
	 */
	smp_mb();
	return engine_work_waiting(hw, timeout);
}

/*
 * Passes outside the engine thread, engine.lock held: until no work is
 * left, or hand the rest to the thread. Wakes the thread too if a QP
 * deadline is now nearer than the thread's wake-up.
 */
static void engine_run_inline(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	long timeout = MAX_SCHEDULE_TIMEOUT;
	unsigned int i;

	lockdep_assert_held(&eng->lock);

	for (i = 0; i < DRAY_ENGINE_INLINE_PASSES; i++) {
		engine_pass(hw);
		if (!engine_settle(hw, &timeout))
			break;
	}
	if (i == DRAY_ENGINE_INLINE_PASSES) {
		dray_hw_engine_kick(hw);
		return;
	}
	/* No thread wake-up per request: a timer covers the deadline. */
	if (timeout != MAX_SCHEDULE_TIMEOUT)
		timer_reduce(&eng->timer, jiffies + timeout);
}

/*
 * Run passes here if engine.lock is free, else leave the work to its
 * holder (engine.rerun, as the top of this file says). Interrupts must be
 * on for spin_unlock_bh(); callers in hard interrupt context or with
 * interrupts off leave the work to the thread (false).
 */
static bool engine_try_inline(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	unsigned int i;

	if (in_hardirq() || irqs_disabled())
		return false;
	engine_want_run(eng);
	for (i = 0; i < DRAY_ENGINE_INLINE_RERUNS; i++) {
		if (!spin_trylock_bh(&eng->lock))
			return true;
		/* Fully ordered: the passes read what rerun announced. */
		atomic_xchg(&eng->rerun, 0);
		/* After dray_hw_engine_stop() frames just wait to be purged. */
		if (!eng->stopped)
			engine_run_inline(hw);
		if (!engine_release(eng))
			return true;
	}
	/* Others keep adding work: the thread takes it from here. */
	dray_hw_engine_kick(hw);
	return true;
}

/* The nearest QP deadline an inline run saw has come: run passes. */
static void engine_timer(struct timer_list *t)
{
	struct dray_hw_engine *eng = from_timer(eng, t, timer);
	struct dray_hw *hw = container_of(eng, struct dray_hw, engine);

	if (!engine_try_inline(hw))
		dray_hw_engine_kick(hw);
}

void dray_hw_engine_rx(struct dray_hw *hw, struct sk_buff *skb)
{
	struct dray_hw_engine *eng = &hw->engine;

	if (skb_queue_len_lockless(&eng->rx_queue) >= DRAY_ENGINE_RX_MAX) {
		atomic64_inc(&eng->rx_dropped);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&eng->rx_queue, skb);
	/*
	 * A pass that holds engine.lock here (loopback from a pass, or a
	 * pass on another CPU past its receive step) would not see the
	 * frame: the kick makes sure one does.
	 */
	if (!engine_try_inline(hw))
		dray_hw_engine_kick(hw);
}

void dray_hw_engine_port_gone(struct dray_hw *hw)
{
	struct dray_hw_qp *qp;

	dray_hw_engine_lock(hw);
	list_for_each_entry(qp, &hw->engine.active, active)
		dray_hw_qp_error(hw, qp, 0, DRAY_VERR_NONE);
	dray_hw_engine_unlock(hw);
}

void dray_hw_engine_uar_kick(struct dray_hw *hw, u32 uar_index)
{
	struct dray_uar *page = NULL;

	if (uar_index >= DRAY_HW_MAX_UAR)
		return;
	spin_lock_bh(&hw->obj_lock);
	page = hw->uars[uar_index].page;
	if (page) {
		u32 n = le32_to_cpu(READ_ONCE(page->dev.wakeups));

		WRITE_ONCE(page->dev.wakeups, cpu_to_le32(n + 1));
		hw->engine.kicks++;
	}
	spin_unlock_bh(&hw->obj_lock);
	if (!page)
		return;
	/*
	 * Passes here, or by the holder of engine.lock, read every doorbell
	 * record and settle NEED_WAKEUP. The method runs in process context.
	 */
	engine_try_inline(hw);
	/*
	 * Set to poll longer than by default: the thread polls from now on
	 * (else inline runs that finish their work would leave it asleep,
	 * and every post of a ping-pong would need a call).
	 */
	if (READ_ONCE(hw->engine.poll_ns) >
	    DRAY_ENGINE_POLL_DEFAULT_US * NSEC_PER_USEC)
		dray_hw_engine_kick(hw);
}

void dray_hw_engine_uar_init(struct dray_hw *hw, struct dray_uar *page)
{
	lockdep_assert_held(&hw->obj_lock);
	WRITE_ONCE(page->dev.flags,
		   cpu_to_le32(hw->engine.need_wakeup ?
			       DRAY_UAR_F_NEED_WAKEUP : 0));
}

static void engine_sleep(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	long timeout = MAX_SCHEDULE_TIMEOUT;
	bool waiting;

	engine_lock(eng);
	eng->polling = false;
	waiting = engine_settle(hw, &timeout);
	/* Work left to the holder while the settle held the lock? */
	if (engine_release(eng))
		waiting = true;
	if (!waiting) {
		eng->sleeps++;
		wait_event_idle_timeout(eng->wait,
					atomic_read(&eng->pending) ||
					kthread_should_stop(),
					timeout);
	}
}

static int engine_thread(void *arg)
{
	struct dray_hw *hw = arg;
	struct dray_hw_engine *eng = &hw->engine;
	u64 idle_since = 0;

	while (!kthread_should_stop()) {
		bool work;

		atomic_set(&eng->pending, 0);
		engine_lock(eng);
		atomic_xchg(&eng->rerun, 0);
		if (!eng->polling) {
			eng->polling = true;
			engine_set_need_wakeup(hw, false);
		}
		work = engine_pass(hw);
		/* Work left to the holder counts as work. */
		if (engine_release(eng))
			work = true;

		if (work || atomic_read(&eng->pending)) {
			idle_since = 0;
		} else if (!idle_since) {
			idle_since = ktime_get_ns();
		} else if (ktime_get_ns() - idle_since > READ_ONCE(eng->poll_ns)) {
			engine_sleep(hw);
			idle_since = 0;
			continue;
		}
		/* Between passes others take engine.lock. */
		cond_resched();
	}
	return 0;
}

u32 dray_hw_engine_poll_read(struct dray_hw *hw, u32 offset)
{
	struct dray_hw_engine *eng = &hw->engine;
	u32 val;

	mutex_lock(&eng->poll_lock);
	val = offset == DRAY_REG_ENGINE_POLL ?
	      div_u64(eng->poll_ns, NSEC_PER_USEC) : eng->cpu_reg;
	mutex_unlock(&eng->poll_lock);
	return val;
}

/* The thread on @cpu only, or (PIN clear) anywhere; eng->poll_lock held. */
static int engine_set_cpu(struct dray_hw_engine *eng, u32 value)
{
	u32 cpu = FIELD_GET(DRAY_ENGINE_CPU_MASK, value);

	lockdep_assert_held(&eng->poll_lock);
	if (!eng->thread)
		return -ENODEV;
	if (!(value & DRAY_ENGINE_CPU_PIN))
		return set_cpus_allowed_ptr(eng->thread, cpu_possible_mask);
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	return set_cpus_allowed_ptr(eng->thread, cpumask_of(cpu));
}

void dray_hw_engine_poll_write(struct dray_hw *hw, u32 offset, u32 value)
{
	struct dray_hw_engine *eng = &hw->engine;
	u32 us = FIELD_GET(DRAY_ENGINE_POLL_US_MASK, value);

	mutex_lock(&eng->poll_lock);
	if (offset == DRAY_REG_ENGINE_POLL) {
		if (us <= DRAY_ENGINE_POLL_MAX_US)
			WRITE_ONCE(eng->poll_ns, (u64)us * NSEC_PER_USEC);
	} else {
		value &= DRAY_ENGINE_CPU_PIN | DRAY_ENGINE_CPU_MASK;
		if (!engine_set_cpu(eng, value))
			eng->cpu_reg = value;
	}
	mutex_unlock(&eng->poll_lock);
}

void dray_hw_engine_poll_reset(struct dray_hw *hw)
{
	dray_hw_engine_poll_write(hw, DRAY_REG_ENGINE_POLL,
				  DRAY_ENGINE_POLL_DEFAULT_US);
	dray_hw_engine_poll_write(hw, DRAY_REG_ENGINE_CPU, 0);
}

int dray_hw_engine_start(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct task_struct *thread;

	spin_lock_init(&eng->lock);
	mutex_init(&eng->admin_lock);
	mutex_init(&eng->poll_lock);
	eng->poll_ns = DRAY_ENGINE_POLL_DEFAULT_US * NSEC_PER_USEC;
	eng->cpu_reg = 0;
	eng->polling = true;
	eng->stopped = false;
	timer_setup(&eng->timer, engine_timer, 0);
	init_waitqueue_head(&eng->wait);
	atomic_set(&eng->pending, 0);
	atomic_set(&eng->rerun, 0);
	skb_queue_head_init(&eng->rx_queue);
	INIT_LIST_HEAD(&eng->active);
	xa_init_flags(&eng->pds, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->mrs, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->cqs, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->ahs, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->srqs, XA_FLAGS_ALLOC);
	xa_init_flags(&eng->xrcds, XA_FLAGS_ALLOC);
	atomic64_set(&eng->rx_dropped, 0);

	eng->mr_variant = kcalloc(DRAY_HW_MAX_MR + 1,
				  sizeof(*eng->mr_variant), GFP_KERNEL);
	if (!eng->mr_variant)
		return -ENOMEM;

	thread = kthread_run(engine_thread, hw, "dray-eng/%s",
			     netdev_name(hw->ndev));
	if (IS_ERR(thread)) {
		kfree(eng->mr_variant);
		eng->mr_variant = NULL;
		return PTR_ERR(thread);
	}
	eng->thread = thread;
	return 0;
}

void dray_hw_engine_stop(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;

	kthread_stop(eng->thread);
	eng->thread = NULL;
	engine_lock(eng);
	eng->stopped = true;
	engine_release(eng);
	/* No run re-arms it now. */
	del_timer_sync(&eng->timer);
	/* The device reset before emptied the object tables. */
	WARN_ON_ONCE(!xa_empty(&eng->qps) || !xa_empty(&eng->mrs));
	skb_queue_purge(&eng->rx_queue);
	xa_destroy(&eng->pds);
	xa_destroy(&eng->mrs);
	xa_destroy(&eng->cqs);
	xa_destroy(&eng->qps);
	xa_destroy(&eng->ahs);
	xa_destroy(&eng->srqs);
	xa_destroy(&eng->xrcds);
	kfree(eng->mr_variant);
	eng->mr_variant = NULL;
}
