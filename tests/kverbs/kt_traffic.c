// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray_ktest traffic=1: a kernel ULP that keeps checked traffic moving
 * between dev_a and dev_b for as long as both exist, for the faults group
 * of tests/rdma/run.sh (device removal, module unload, port down and up,
 * MTU changes, all while it runs).
 *
 * It is an ib_client, as nvme-rdma and the NFS client are. When both
 * devices are registered, a thread sets up an RC QP on each (kt_main.c's
 * setup; the ACK timeout 1.07 s, so a port down for half a second costs
 * retransmissions, not the QPs), and every 2 to 4 ms A brings its WRs
 * outstanding back to KT_TR_DEPTH: SEND_WITH_IMM of 1 to 2048 bytes,
 * the immediate naming the pattern B checks the receive against, and
 * RDMA READs of B's pattern into A, checked against it. Completions must
 * come in the order of posting, on both queues.
 *
 * When either device goes, the core calls the client's remove callback
 * before the device stops working; it stops the thread, which moves both
 * QPs to ERR and reaps until every WR it posted has completed (tr_lost
 * counts those that did not within 10 s), then frees everything. A QP
 * that leaves RTS by itself (a device that reports a fatal error before
 * it is removed, as dray does when its netdev goes) is drained and built
 * again the same way, once both ports are ACTIVE. The thread starts again
 * when both devices are back.
 *
 * Read-only parameters count what happened; tests/rdma/run.sh reads them
 * around each fault: tr_running (the QPs are up), tr_starts and tr_stops
 * (QP pairs built and drained), tr_posted, tr_ok, tr_flushed (WRs of
 * both queues), tr_errors (completions in error other than flushes, and
 * completions out of order), tr_lost, tr_bad (data that differs), and
 * tr_post_fail (posts the device refused, which break the pair too),
 * tr_fatal_first (removals of which the client heard IB_EVENT_DEVICE_FATAL
 * before its remove callback came: what a driver says of a surprise
 * removal), and tr_dev_err (drains that found a QP of the pair in ERR
 * before the ULP moved it there: the device did, as dray does for every
 * QP when its port's netdev goes).
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "kt.h"

#define KT_TR_DEPTH	8		/* A's WRs outstanding */
#define KT_TR_RECVS	KT_WR		/* B's receives posted */
#define KT_TR_SLOT	2048		/* one WR's buffer, both sides */
#define KT_TR_SRC	(KT_TR_RECVS * KT_TR_SLOT)	/* B: READ source */
#define KT_TR_SRC_LEN	8192
#define KT_TR_SRC_SEED	0x5a
#define KT_TR_DRAIN_MS	10000
#define KT_TR_GAP_US	2000		/* between two rounds of posts */

static_assert(KT_TR_DEPTH * KT_TR_SLOT <= KT_BUF_SIZE);
static_assert(KT_TR_SRC + KT_TR_SRC_LEN <= KT_BUF_SIZE);
static_assert(KT_TR_DEPTH < KT_WR);

static int tr_running;
module_param(tr_running, int, 0444);
MODULE_PARM_DESC(tr_running, "traffic=1: the QP pair is up");
static ulong tr_starts;
module_param(tr_starts, ulong, 0444);
MODULE_PARM_DESC(tr_starts, "traffic=1: QP pairs built");
static ulong tr_stops;
module_param(tr_stops, ulong, 0444);
MODULE_PARM_DESC(tr_stops, "traffic=1: QP pairs drained and freed");
static ulong tr_posted;
module_param(tr_posted, ulong, 0444);
MODULE_PARM_DESC(tr_posted, "traffic=1: WRs posted (A's sends, B's receives)");
static ulong tr_ok;
module_param(tr_ok, ulong, 0444);
MODULE_PARM_DESC(tr_ok, "traffic=1: WRs completed successfully and checked");
static ulong tr_flushed;
module_param(tr_flushed, ulong, 0444);
MODULE_PARM_DESC(tr_flushed, "traffic=1: WRs flushed");
static ulong tr_errors;
module_param(tr_errors, ulong, 0444);
MODULE_PARM_DESC(tr_errors, "traffic=1: completions in error (not flushes) or out of order");
static ulong tr_lost;
module_param(tr_lost, ulong, 0444);
MODULE_PARM_DESC(tr_lost, "traffic=1: WRs without a completion when drained");
static ulong tr_bad;
module_param(tr_bad, ulong, 0444);
MODULE_PARM_DESC(tr_bad, "traffic=1: completions whose data differs");
static ulong tr_post_fail;
module_param(tr_post_fail, ulong, 0444);
MODULE_PARM_DESC(tr_post_fail, "traffic=1: posts the device refused");
static ulong tr_fatal_first;
module_param(tr_fatal_first, ulong, 0444);
MODULE_PARM_DESC(tr_fatal_first, "traffic=1: removals announced by DEVICE_FATAL before the remove callback");
static ulong tr_dev_err;
module_param(tr_dev_err, ulong, 0444);
MODULE_PARM_DESC(tr_dev_err, "traffic=1: drains that found a QP in ERR already");

/* What one of A's outstanding WRs did, to check its completion. */
struct kt_tr_wr {
	bool	read;
	u32	off;		/* READ: into B's source */
	u32	len;
};

/* The thread's own state: the QP pair and where its queues stand. */
struct kt_tr_run {
	struct kt_side	a, b;
	bool		up;
	bool		broken;		/* drain and build again */
	bool		draining;
	u64		next_seq;	/* A: the next WR posted */
	u64		done_seq;	/* A: the next completion expected */
	u64		recv_seq;	/* B: the SEND the next receive holds */
	u32		rhead;		/* B: the next receive to complete */
	u32		a_out, b_out;	/* WRs without completion */
	struct kt_tr_wr	wr[KT_TR_DEPTH];
};

/* The client: which devices are there, and the thread while both are. */
static struct {
	struct mutex		lock;		/* dev[] and task */
	const char		*name[2];
	struct ib_device	*dev[2];
	struct ib_event_handler	eh[2];
	bool			fatal[2];	/* DEVICE_FATAL heard */
	struct task_struct	*task;
} kt_tr;

static bool kt_tr_is_read(u64 seq)
{
	return seq % 3 == 2;
}

static u32 kt_tr_len(u64 seq)
{
	return 1 + (u32)((seq * 2654435761ULL) >> 7) % KT_TR_SLOT;
}

/* Does @p hold kt_fill()'s pattern of @seed? */
static bool kt_tr_pattern_ok(const u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (p[i] != (u8)(seed + i * 7 + (i >> 8)))
			return false;
	return true;
}

/* Count a post's result in @out; one the device refused breaks the pair. */
static int kt_tr_count_post(struct kt_tr_run *r, int ret, u32 *out)
{
	if (ret) {
		tr_post_fail++;
		r->broken = true;
		return ret;
	}
	tr_posted++;
	(*out)++;
	return 0;
}

static int kt_tr_post_recv(struct kt_tr_run *r, u32 slot)
{
	struct ib_sge sge = {
		.addr = r->b.dma + slot * KT_TR_SLOT,
		.length = KT_TR_SLOT,
		.lkey = r->b.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad = NULL;

	return kt_tr_count_post(r, ib_post_recv(r->b.qp, &wr, &bad), &r->b_out);
}

/* A posts its next WR: a SEND_WITH_IMM or a READ of B's source. */
static int kt_tr_post_send(struct kt_tr_run *r)
{
	u64 seq = r->next_seq;
	struct kt_tr_wr *w = &r->wr[seq % KT_TR_DEPTH];
	u32 slot = (seq % KT_TR_DEPTH) * KT_TR_SLOT;
	struct ib_sge sge = {
		.addr = r->a.dma + slot,
		.lkey = r->a.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = seq,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	const struct ib_send_wr *bad = NULL;
	int ret;

	w->read = kt_tr_is_read(seq);
	w->len = kt_tr_len(seq);
	w->off = (u32)(seq * 40503) % (KT_TR_SRC_LEN - KT_TR_SLOT);
	sge.length = w->len;
	if (w->read) {
		memset(r->a.buf + slot, 0, w->len);
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.remote_addr = r->b.dma + KT_TR_SRC + w->off;
		wr.rkey = r->b.mr->rkey;
	} else {
		kt_fill(r->a.buf + slot, w->len, (u8)seq);
		wr.wr.opcode = IB_WR_SEND_WITH_IMM;
		wr.wr.ex.imm_data = cpu_to_be32((u32)seq);
	}
	ret = kt_tr_count_post(r, ib_post_send(r->a.qp, &wr.wr, &bad),
			       &r->a_out);
	if (!ret)
		r->next_seq++;
	return ret;
}

/*
 * Is @wc the completion of @want, successful? Counts it if not: out of
 * order or in error (a flush, or another error, logged). Either breaks
 * the pair: it is drained and built again.
 */
static bool kt_tr_wc_ok(struct kt_tr_run *r, const struct ib_wc *wc,
			u64 want, const char *side)
{
	if (wc->wr_id == want && wc->status == IB_WC_SUCCESS)
		return true;
	r->broken = true;
	if (wc->wr_id != want) {
		tr_errors++;
		kt_diag("traffic: %s: completion of wr_id %llu, expected %llu",
			side, wc->wr_id, want);
	} else if (wc->status == IB_WC_WR_FLUSH_ERR) {
		tr_flushed++;
	} else {
		tr_errors++;
		kt_diag("traffic: %s: wr_id %llu status %d (%s) verr %#x", side,
			wc->wr_id, wc->status, ib_wc_status_msg(wc->status),
			wc->vendor_err);
	}
	return false;
}

static void kt_tr_send_wc(struct kt_tr_run *r, const struct ib_wc *wc)
{
	u64 seq = r->done_seq++;
	const struct kt_tr_wr *w = &r->wr[seq % KT_TR_DEPTH];
	u32 slot = (seq % KT_TR_DEPTH) * KT_TR_SLOT;

	r->a_out--;
	if (!kt_tr_wc_ok(r, wc, seq, "A"))
		return;
	if (w->read &&
	    memcmp(r->a.buf + slot, r->b.buf + KT_TR_SRC + w->off, w->len)) {
		tr_bad++;
		r->broken = true;
		kt_diag("traffic: READ %llu of %u bytes differs", seq, w->len);
		return;
	}
	tr_ok++;
}

static void kt_tr_recv_wc(struct kt_tr_run *r, const struct ib_wc *wc)
{
	u32 slot = r->rhead++ % KT_TR_RECVS;
	u64 seq = r->recv_seq;
	u32 len = kt_tr_len(seq);

	r->b_out--;
	if (!kt_tr_wc_ok(r, wc, slot, "B"))
		return;
	/* The SEND after this one: the next sequence number not a READ. */
	do {
		r->recv_seq++;
	} while (kt_tr_is_read(r->recv_seq));
	if (!(wc->wc_flags & IB_WC_WITH_IMM) ||
	    be32_to_cpu(wc->ex.imm_data) != (u32)seq || wc->byte_len != len ||
	    !kt_tr_pattern_ok(r->b.buf + slot * KT_TR_SLOT, len, (u8)seq)) {
		tr_bad++;
		r->broken = true;
		kt_diag("traffic: SEND %llu received: flags %#x imm %u len %u/%u or data",
			seq, wc->wc_flags, be32_to_cpu(wc->ex.imm_data),
			wc->byte_len, len);
		return;
	}
	tr_ok++;
	if (!r->draining && !r->broken)
		kt_tr_post_recv(r, slot);
}

/* Reap both queues; true if anything completed. */
static bool kt_tr_reap(struct kt_tr_run *r)
{
	struct ib_wc wc[8];
	bool any = false;
	int i, n;

	n = ib_poll_cq(r->b.rcq, ARRAY_SIZE(wc), wc);
	for (i = 0; i < n; i++)
		kt_tr_recv_wc(r, &wc[i]);
	any |= n > 0;
	n = ib_poll_cq(r->a.scq, ARRAY_SIZE(wc), wc);
	for (i = 0; i < n; i++)
		kt_tr_send_wc(r, &wc[i]);
	return any || n > 0;
}

/*
 * Is @name registered, its port ACTIVE (asked of the device) and an IPv4
 * RoCEv2 GID in its table? (Quietly.) A device whose netdev is gone
 * reports its port DOWN at once, while the core may not have removed its
 * GIDs yet: a pair built there would only wait for its ACK timeouts.
 */
static bool kt_tr_dev_ready(const char *name)
{
	struct ib_port_attr port;
	struct kt_side s = {};
	bool ok;

	s.dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!s.dev)
		return false;
	ok = !ib_query_port(s.dev, 1, &port) &&
	     port.state == IB_PORT_ACTIVE && !kt_find_gid(&s);
	ib_device_put(s.dev);
	return ok;
}

/*
 * Build the pair in @r, all zero (kzalloc, or kt_tr_down()); on an error
 * the caller frees what was made.
 */
static int kt_tr_up(struct kt_tr_run *r)
{
	u32 i;
	int ret;

	r->a.name = kt_tr.name[0];
	r->b.name = kt_tr.name[1];
	r->recv_seq = kt_tr_is_read(0) ? 1 : 0;
	if (!kt_tr_dev_ready(r->a.name) || !kt_tr_dev_ready(r->b.name))
		return -EAGAIN;
	ret = kt_setup_side(&r->a);
	if (!ret)
		ret = kt_setup_side(&r->b);
	if (!ret)
		ret = kt_connect(&r->a, r->a.qp, &r->b, r->b.qp->qp_num);
	if (!ret)
		ret = kt_connect(&r->b, r->b.qp, &r->a, r->a.qp->qp_num);
	if (ret)
		return ret;
	kt_fill(r->b.buf + KT_TR_SRC, KT_TR_SRC_LEN, KT_TR_SRC_SEED);
	for (i = 0; i < KT_TR_RECVS; i++) {
		ret = kt_tr_post_recv(r, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* Is @qp in ERR (asked of the device)? */
static bool kt_tr_in_err(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	return qp && !ib_query_qp(qp, &attr, IB_QP_STATE, &init) &&
	       attr.qp_state == IB_QPS_ERR;
}

/* Both QPs to ERR, then reap until every WR posted has completed. */
static void kt_tr_drain(struct kt_tr_run *r)
{
	unsigned long end = jiffies + msecs_to_jiffies(KT_TR_DRAIN_MS);

	r->draining = true;
	if (kt_tr_in_err(r->a.qp) || kt_tr_in_err(r->b.qp))
		tr_dev_err++;
	if (r->a.qp)
		kt_set_state(r->a.qp, IB_QPS_ERR);
	if (r->b.qp)
		kt_set_state(r->b.qp, IB_QPS_ERR);
	while (r->a_out + r->b_out && time_before(jiffies, end))
		if (!kt_tr_reap(r))
			usleep_range(500, 1000);
	if (r->a_out + r->b_out) {
		tr_lost += r->a_out + r->b_out;
		kt_diag("traffic: %u sends and %u receives without completion %d ms after ERR",
			r->a_out, r->b_out, KT_TR_DRAIN_MS);
	}
}

/* Drain what was posted, free the pair (also one half built). */
static void kt_tr_down(struct kt_tr_run *r)
{
	if (r->up || r->a_out + r->b_out)
		kt_tr_drain(r);
	if (r->up) {
		WRITE_ONCE(tr_running, 0);
		tr_stops++;
	}
	kt_teardown_side(&r->a);
	kt_teardown_side(&r->b);
	memset(r, 0, sizeof(*r));
}

static int kt_tr_thread(void *arg)
{
	struct kt_tr_run *r = arg;

	while (!kthread_should_stop()) {
		if (!r->up) {
			if (kt_tr_up(r)) {
				kt_tr_down(r);
				schedule_timeout_interruptible(HZ / 10);
				continue;
			}
			r->up = true;
			tr_starts++;
			WRITE_ONCE(tr_running, 1);
		}
		while (!r->broken && r->a_out < KT_TR_DEPTH)
			if (kt_tr_post_send(r))
				break;
		kt_tr_reap(r);
		/* A modest pace: the ULP shares the CPUs with the tests. */
		usleep_range(KT_TR_GAP_US, 2 * KT_TR_GAP_US);
		if (r->broken)
			kt_tr_down(r);
	}
	kt_tr_down(r);
	kfree(r);
	return 0;
}

static int kt_tr_index(struct ib_device *dev)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!strcmp(dev_name(&dev->dev), kt_tr.name[i]))
			return i;
	return -1;
}

static void kt_tr_event(struct ib_event_handler *eh, struct ib_event *ev)
{
	if (ev->event == IB_EVENT_DEVICE_FATAL)
		WRITE_ONCE(kt_tr.fatal[eh == &kt_tr.eh[1]], true);
}

static int kt_tr_add(struct ib_device *dev)
{
	struct kt_tr_run *r;
	int i = kt_tr_index(dev);

	/* An error tells the core this client has nothing on @dev. */
	if (i < 0)
		return -EOPNOTSUPP;
	mutex_lock(&kt_tr.lock);
	kt_tr.dev[i] = dev;
	kt_tr.fatal[i] = false;
	INIT_IB_EVENT_HANDLER(&kt_tr.eh[i], dev, kt_tr_event);
	ib_register_event_handler(&kt_tr.eh[i]);
	if (kt_tr.dev[!i] && !kt_tr.task) {
		r = kzalloc(sizeof(*r), GFP_KERNEL);
		if (r) {
			kt_tr.task = kthread_run(kt_tr_thread, r, "dray_kt_traffic");
			if (IS_ERR(kt_tr.task)) {
				kt_diag("traffic: no thread (%ld)",
					PTR_ERR(kt_tr.task));
				kt_tr.task = NULL;
				kfree(r);
			}
		}
	}
	mutex_unlock(&kt_tr.lock);
	return 0;
}

static void kt_tr_remove(struct ib_device *dev, void *client_data)
{
	int i = kt_tr_index(dev);

	if (i < 0)
		return;
	mutex_lock(&kt_tr.lock);
	if (READ_ONCE(kt_tr.fatal[i]))
		tr_fatal_first++;
	ib_unregister_event_handler(&kt_tr.eh[i]);
	/* The thread drains and frees the pair before it exits. */
	if (kt_tr.task) {
		kthread_stop(kt_tr.task);
		kt_tr.task = NULL;
	}
	kt_tr.dev[i] = NULL;
	mutex_unlock(&kt_tr.lock);
}

static struct ib_client kt_tr_client = {
	.name = "dray_ktest_traffic",
	.add = kt_tr_add,
	.remove = kt_tr_remove,
};

int kt_traffic_start(const char *a, const char *b)
{
	mutex_init(&kt_tr.lock);
	kt_tr.name[0] = a;
	kt_tr.name[1] = b;
	kt_ack_timeout = 18;
	return ib_register_client(&kt_tr_client);
}

void kt_traffic_stop(void)
{
	ib_unregister_client(&kt_tr_client);
}
