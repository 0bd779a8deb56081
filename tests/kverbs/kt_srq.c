// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray_ktest: kernel shared receive queues, as nvmet-rdma (use_srq=1)
 * and ib_srpt use them: ib_create_srq on B, two RC QPs of B on it, their
 * peers on A; ib_post_srq_recv, SENDs from both peers, every receive
 * completion naming its QP and its WR with the data it carries; the SRQ
 * limit event; the verbs' errors (too many SGEs, more WRs than the SRQ
 * holds, destroying it while QPs use it); ib_destroy_srq.
 */

#include <linux/delay.h>
#include <linux/slab.h>

#include "kt.h"

#define KT_SRQ_WR	16
#define KT_SRQ_QPS	2
#define KT_SRQ_MSGS	8		/* 4 per QP */
#define KT_SRQ_LEN	300
#define KT_SRQ_SLOT	512
#define KT_SRQ_RBUF	8192		/* B: receive slots */
#define KT_SRQ_SBUF	12288		/* A: send data */
#define KT_SRQ_WRID	100

struct kt_srq_ev {
	atomic_t		limit;
	struct completion	done;
};

static void kt_srq_event(struct ib_event *ev, void *ctx)
{
	struct kt_srq_ev *e = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED) {
		atomic_inc(&e->limit);
		complete(&e->done);
	}
}

static struct ib_qp *kt_srq_qp(struct kt_side *s, struct ib_srq *srq)
{
	struct ib_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = srq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = KT_WR,
			.max_recv_wr = srq ? 0 : KT_WR,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
	};

	return ib_create_qp(s->pd, &ia);
}

static int kt_srq_post(struct kt_side *b, struct ib_srq *srq, u32 slot)
{
	struct ib_sge sge = {
		.addr = b->dma + KT_SRQ_RBUF + slot * KT_SRQ_SLOT,
		.length = KT_SRQ_SLOT,
		.lkey = b->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = KT_SRQ_WRID + slot,
		.sg_list = &sge,
		.num_sge = 1,
	};

	memset(b->buf + KT_SRQ_RBUF + slot * KT_SRQ_SLOT, 0xee, KT_SRQ_SLOT);
	return ib_post_srq_recv(srq, &wr, NULL);
}

static int kt_srq_send(struct kt_side *a, struct ib_qp *qp, u32 n, u8 seed)
{
	u8 *p = a->buf + KT_SRQ_SBUF + n * KT_SRQ_LEN;
	struct ib_sge sge = {
		.addr = a->dma + KT_SRQ_SBUF + n * KT_SRQ_LEN,
		.length = KT_SRQ_LEN,
		.lkey = a->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = seed,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	kt_fill(p, KT_SRQ_LEN, seed);
	return ib_post_send(qp, &wr, NULL);
}

/* Every receive: its QP, a WR of its own, the data its peer sent in order. */
static bool kt_srq_traffic(struct kt_side *a, struct kt_side *b,
			   struct ib_qp **aq, struct ib_qp **bq,
			   struct ib_srq *srq)
{
	u8 want[KT_SRQ_LEN], next[KT_SRQ_QPS] = { 0 };
	bool seen[KT_SRQ_MSGS] = { false };
	struct ib_wc wc;
	u32 i, q, slot;

	for (i = 0; i < KT_SRQ_MSGS; i++)
		if (kt_srq_post(b, srq, i)) {
			kt_diag("ib_post_srq_recv %u failed", i);
			return false;
		}
	for (i = 0; i < KT_SRQ_MSGS; i++) {
		q = i % KT_SRQ_QPS;
		if (kt_srq_send(a, aq[q], i, q * 16 + i / KT_SRQ_QPS)) {
			kt_diag("post_send %u failed", i);
			return false;
		}
	}
	for (i = 0; i < KT_SRQ_MSGS; i++) {
		if (!kt_poll1(a->scq, &wc) ||
		    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_SEND, wc.wr_id, "send"))
			return false;
	}
	for (i = 0; i < KT_SRQ_MSGS; i++) {
		if (!kt_poll1(b->rcq, &wc) ||
		    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV, wc.wr_id, "recv"))
			return false;
		for (q = 0; q < KT_SRQ_QPS && wc.qp != bq[q]; q++)
			;
		slot = wc.wr_id - KT_SRQ_WRID;
		if (q == KT_SRQ_QPS || slot >= KT_SRQ_MSGS || seen[slot] ||
		    wc.byte_len != KT_SRQ_LEN) {
			kt_diag("receive %u: qp %u wr_id %llu byte_len %u", i,
				wc.qp ? wc.qp->qp_num : 0, wc.wr_id,
				wc.byte_len);
			return false;
		}
		seen[slot] = true;
		kt_fill(want, KT_SRQ_LEN, q * 16 + next[q]++);
		if (memcmp(b->buf + KT_SRQ_RBUF + slot * KT_SRQ_SLOT, want,
			   KT_SRQ_LEN)) {
			kt_diag("receive %u (QP %u, slot %u): data differ", i,
				bq[q]->qp_num, slot);
			return false;
		}
	}
	return true;
}

static bool kt_srq_errors(struct ib_srq *srq, struct kt_side *b)
{
	const struct ib_recv_wr *bad = NULL;
	struct ib_sge sge[KT_SGE + 8] = {};
	struct ib_recv_wr wr = { .sg_list = sge };
	struct ib_srq_attr sa;
	int ret, n;

	ret = ib_query_srq(srq, &sa);
	if (ret || sa.max_wr < KT_SRQ_WR || sa.max_sge + 1 > ARRAY_SIZE(sge)) {
		kt_diag("ib_query_srq %d max_wr %u max_sge %u", ret, sa.max_wr,
			sa.max_sge);
		return false;
	}
	wr.num_sge = sa.max_sge + 1;
	ret = ib_post_srq_recv(srq, &wr, &bad);
	if (ret != -EINVAL || bad != &wr) {
		kt_diag("too many SGEs: %d", ret);
		return false;
	}
	/*
	 * Fill it (two receives of the limit test are still posted):
	 * -ENOMEM at the WR after the last that fits.
	 */
	for (n = 0; n < sa.max_wr - 2; n++)
		if (kt_srq_post(b, srq, n % KT_SRQ_MSGS)) {
			kt_diag("post %d of %u failed", n, sa.max_wr - 2);
			return false;
		}
	wr.num_sge = 1;
	sge[0].addr = b->dma;
	sge[0].length = 8;
	sge[0].lkey = b->pd->local_dma_lkey;
	bad = NULL;
	ret = ib_post_srq_recv(srq, &wr, &bad);
	if (ret != -ENOMEM || bad != &wr) {
		kt_diag("full SRQ: %d", ret);
		return false;
	}
	return true;
}

static bool kt_srq_limit(struct kt_side *a, struct ib_qp *aq,
			 struct ib_srq *srq, struct kt_srq_ev *ev,
			 struct kt_side *b)
{
	struct ib_srq_attr sa = { .srq_limit = 3 };
	struct ib_wc wc;
	int i;

	for (i = 0; i < 4; i++)
		if (kt_srq_post(b, srq, i))
			return false;
	if (ib_modify_srq(srq, &sa, IB_SRQ_LIMIT)) {
		kt_diag("ib_modify_srq limit 3 failed");
		return false;
	}
	for (i = 0; i < 2; i++) {
		if (kt_srq_send(a, aq, i, 0x40 + i) || !kt_poll1(a->scq, &wc) ||
		    !kt_poll1(b->rcq, &wc) ||
		    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV, wc.wr_id, "recv"))
			return false;
	}
	if (!wait_for_completion_timeout(&ev->done,
					 msecs_to_jiffies(KT_TIMEOUT_MS))) {
		kt_diag("no SRQ limit event");
		return false;
	}
	return atomic_read(&ev->limit) == 1 && !ib_query_srq(srq, &sa) &&
	       sa.srq_limit == 0;
}

void kt_run_srq(struct kt_side *a, struct kt_side *b)
{
	struct ib_srq_init_attr sia = {
		.event_handler = kt_srq_event,
		.attr = { .max_wr = KT_SRQ_WR, .max_sge = KT_SGE },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp *aq[KT_SRQ_QPS] = {}, *bq[KT_SRQ_QPS] = {};
	struct kt_srq_ev ev;
	struct ib_srq *srq;
	bool ok;
	int i;

	atomic_set(&ev.limit, 0);
	init_completion(&ev.done);
	sia.srq_context = &ev;
	srq = ib_create_srq(b->pd, &sia);
	if (!tap(!IS_ERR(srq), "ib_create_srq (16 WRs, 2 SGEs)"))
		return;
	ok = true;
	for (i = 0; i < KT_SRQ_QPS && ok; i++) {
		aq[i] = kt_srq_qp(a, NULL);
		bq[i] = kt_srq_qp(b, srq);
		ok = !IS_ERR(aq[i]) && !IS_ERR(bq[i]) &&
		     !kt_connect(a, aq[i], b, bq[i]->qp_num) &&
		     !kt_connect(b, bq[i], a, aq[i]->qp_num);
	}
	if (tap(ok, "two RC QPs on the SRQ, connected")) {
		tap(kt_srq_traffic(a, b, aq, bq, srq),
		    "ib_post_srq_recv, SENDs on both QPs: wc.qp, wr_id and data");
		tap(kt_srq_limit(a, aq[1], srq, &ev, b),
		    "SRQ limit: IB_EVENT_SRQ_LIMIT_REACHED once, then disarmed");
		tap(ib_destroy_srq_user(srq, NULL) == -EBUSY,
		    "ib_destroy_srq while QPs use it: -EBUSY");
	}
	for (i = 0; i < KT_SRQ_QPS; i++) {
		if (!IS_ERR_OR_NULL(bq[i]))
			ib_destroy_qp(bq[i]);
		if (!IS_ERR_OR_NULL(aq[i]))
			ib_destroy_qp(aq[i]);
	}
	/* Receives left posted (the limit test's) belong to no QP. */
	if (ok)
		tap(kt_srq_errors(srq, b),
		    "ib_post_srq_recv: too many SGEs -EINVAL, full -ENOMEM, bad_wr");
	tap(!ib_destroy_srq_user(srq, NULL),
	    "ib_destroy_srq with receives posted");
}
