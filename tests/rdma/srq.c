// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared receive queues (SRQ) in user space: several RC QPs and a UD QP
 * on one SRQ, every receive completion naming its QP and carrying the
 * data that QP's peer sent; the SRQ limit event; Last WQE Reached when a
 * QP on the SRQ enters ERR (and its flush takes nothing from the SRQ);
 * destroying an SRQ in use; and every bad input to the SRQ verbs (limits,
 * posting past the depth, too many SGEs, a bad lkey, a resize the device
 * does not offer). kselftest harness.
 *
 *   DRAY_TEST_DEV_A (default dray0)    the senders, A
 *   DRAY_TEST_DEV_B (default dray1)    the receivers on the SRQ, B
 *
 * Nothing here is specific to dray but the errno of a resize (EINVAL, as
 * mlx5; rxe resizes).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"

#define NRC		3		/* RC QPs on B's SRQ */
#define SRQ_WR		64
#define SRQ_SGE		4
#define SLOT		4096		/* one receive buffer */
#define BUF_LEN		(SRQ_WR * SLOT)
#define RC_LEN		3000		/* three packets at MTU 1024 */
#define UD_LEN		512
#define GRH_LEN		40
#define QKEY		0x11111111U
#define NWR		32
#define FILL		0xee
#define EVENT_MS	10000

/* One side: a context, a PD, CQs, NRC RC QPs and a UD QP, a buffer. */
struct end {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;		/* B only */
	struct ibv_qp *rc[NRC], *ud;
	struct rc_end rce[NRC];
	uint8_t *buf;
	struct ibv_mr *mr;		/* buf, LOCAL_WRITE */
	struct ibv_ah *ah;		/* A: to B */
};

FIXTURE(srq) {
	struct end a, b;
	struct rc_params p;
	struct ibv_srq *srq2;		/* a test's own SRQ */
};

static struct ibv_srq *make_srq(struct ibv_pd *pd, uint32_t wr, uint32_t sge,
				uint32_t limit)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};

	return ibv_create_srq(pd, &ia);
}

static struct ibv_qp *make_qp(struct end *e, enum ibv_qp_type type,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		.srq = srq,
		.qp_type = type,
		.cap = {
			.max_send_wr = NWR,
			.max_recv_wr = srq ? 0 : NWR,
			.max_send_sge = SRQ_SGE,
			.max_recv_sge = srq ? 0 : SRQ_SGE,
		},
	};

	return ibv_create_qp(e->pd, &a);
}

static int ud_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RC_PORT,
		.qkey = QKEY,
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTR;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void end_setup(struct __test_metadata *_metadata, struct end *e,
		      int which, bool with_srq)
{
	int g, i, flags;

	e->ctx = open_device(dev_name(which));
	ASSERT_NE(NULL, e->ctx) TH_LOG("device %s: %s", dev_name(which),
				       strerror(errno));
	ASSERT_EQ(0, ibv_query_device(e->ctx, &e->attr));
	ASSERT_EQ(0, ibv_query_port(e->ctx, RC_PORT, &e->port));
	g = pick_gid(e->ctx, -1, &e->gid);
	ASSERT_LE(0, g);
	e->gid_index = g;
	/* Async events are waited for with poll(). */
	flags = fcntl(e->ctx->async_fd, F_GETFL);
	ASSERT_EQ(0, fcntl(e->ctx->async_fd, F_SETFL, flags | O_NONBLOCK));
	e->pd = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd);
	e->pd2 = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd2);
	e->scq = ibv_create_cq(e->ctx, 4 * SRQ_WR, NULL, NULL, 0);
	ASSERT_NE(NULL, e->scq);
	e->rcq = ibv_create_cq(e->ctx, 4 * SRQ_WR, NULL, NULL, 0);
	ASSERT_NE(NULL, e->rcq);
	if (with_srq) {
		if (!e->attr.max_srq)
			SETUP_SKIP("%s reports max_srq 0", dev_name(which));
		e->srq = make_srq(e->pd, SRQ_WR, SRQ_SGE, 0);
		ASSERT_NE(NULL, e->srq) TH_LOG("create SRQ: %s",
					       strerror(errno));
	}
	for (i = 0; i < NRC; i++) {
		e->rc[i] = make_qp(e, IBV_QPT_RC, e->srq);
		ASSERT_NE(NULL, e->rc[i]) TH_LOG("create RC QP: %s",
						 strerror(errno));
		e->rce[i].qpn = e->rc[i]->qp_num;
		e->rce[i].psn = 0x100 * (i + 1);
		e->rce[i].gid = e->gid;
		e->rce[i].gid_index = g;
		e->rce[i].mtu = e->port.active_mtu;
		e->rce[i].rd_atomic = 1;
	}
	e->ud = make_qp(e, IBV_QPT_UD, e->srq);
	ASSERT_NE(NULL, e->ud) TH_LOG("create UD QP: %s", strerror(errno));
	ASSERT_EQ(0, ud_to_rts(e->ud));
	e->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, e->buf);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, e->mr);
}

static void end_teardown(struct __test_metadata *_metadata, struct end *e)
{
	int i;

	if (e->ah)
		EXPECT_EQ(0, ibv_destroy_ah(e->ah));
	if (e->ud)
		EXPECT_EQ(0, ibv_destroy_qp(e->ud));
	for (i = 0; i < NRC; i++)
		if (e->rc[i])
			EXPECT_EQ(0, ibv_destroy_qp(e->rc[i]));
	if (e->srq)
		EXPECT_EQ(0, ibv_destroy_srq(e->srq));
	if (e->mr)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr));
	if (e->rcq)
		EXPECT_EQ(0, ibv_destroy_cq(e->rcq));
	if (e->scq)
		EXPECT_EQ(0, ibv_destroy_cq(e->scq));
	if (e->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd2));
	if (e->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd));
	if (e->buf)
		munmap(e->buf, BUF_LEN);
	if (e->ctx)
		EXPECT_EQ(0, ibv_close_device(e->ctx));
}

FIXTURE_SETUP(srq)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.port_num = RC_PORT,
	};
	struct ibv_context *probe;
	const char *step;
	int i, err;

	for (i = 0; i < 2; i++) {
		probe = open_device(dev_name(i));
		if (!probe)
			SETUP_SKIP("device %s: %s", dev_name(i),
				   strerror(errno));
		ibv_close_device(probe);
	}
	rc_params_default(&self->p);
	self->p.rnr_retry = 7;
	self->p.min_rnr_timer = 1;
	end_setup(_metadata, &self->a, 0, false);
	end_setup(_metadata, &self->b, 1, true);
	for (i = 0; i < NRC; i++) {
		err = rc_connect(self->a.rc[i], &self->a.rce[i],
				 &self->b.rce[i], &self->p, &step);
		ASSERT_EQ(0, err) TH_LOG("A %d: %s: %s", i, step,
					 strerror(err));
		err = rc_connect(self->b.rc[i], &self->b.rce[i],
				 &self->a.rce[i], &self->p, &step);
		ASSERT_EQ(0, err) TH_LOG("B %d: %s: %s", i, step,
					 strerror(err));
	}
	aa.grh.dgid = self->b.gid;
	aa.grh.sgid_index = (uint8_t)self->a.gid_index;
	aa.grh.hop_limit = 64;
	self->a.ah = ibv_create_ah(self->a.pd, &aa);
	ASSERT_NE(NULL, self->a.ah) TH_LOG("create AH: %s", strerror(errno));
}

FIXTURE_TEARDOWN(srq)
{
	_metadata->trigger = 0;
	if (self->srq2)
		EXPECT_EQ(0, ibv_destroy_srq(self->srq2));
	end_teardown(_metadata, &self->a);
	end_teardown(_metadata, &self->b);
}

/* Helpers */

#define EXPECT_QP_STATE(_want, _qp) do {				\
	int __s = qp_state(_qp);					\
	EXPECT_EQ((_want), __s)						\
		TH_LOG("QP state %s, expected %s", qp_state_str(__s),	\
		       qp_state_str(_want));				\
} while (0)

/* Post receive @slot of B's buffer (filled with FILL) with wr_id @slot. */
static int srq_recv(struct end *b, struct ibv_srq *srq, unsigned int slot,
		    uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(b->buf + (size_t)slot * SLOT),
		.length = SLOT,
		.lkey = lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(b->buf + (size_t)slot * SLOT, FILL, SLOT);
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/*
 * Send @len bytes from A's buffer at @off on @qp (UD: to B's UD QP); the
 * payload is the stream @seed, its first 4 bytes the seed itself.
 */
static int a_send(struct end *a, struct ibv_qp *qp, uint32_t dqpn,
		  size_t off, uint32_t len, uint32_t seed)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(a->buf + off),
		.length = len,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seed,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	stream_fill(a->buf + off, seed, 0, len);
	memcpy(a->buf + off, &seed, sizeof(seed));
	if (qp->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = a->ah;
		wr.wr.ud.remote_qpn = dqpn;
		wr.wr.ud.remote_qkey = QKEY;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * Does the receive buffer @p hold the message of @seed (@len bytes) at
 * offset @off (after a GRH), and nothing after it?
 */
static bool msg_at(const uint8_t *p, size_t off, uint32_t seed, uint32_t len)
{
	size_t rest = SLOT - off - len;
	uint32_t got;

	memcpy(&got, p + off, sizeof(got));
	return got == seed &&
	       stream_check(p + off + 4, seed, 4, len - 4) == len - 4 &&
	       first_not(p + off + len, rest, FILL) == rest;
}

static bool msg_ok(const uint8_t *p, uint32_t seed, uint32_t len)
{
	return msg_at(p, 0, seed, len);
}

/* Index of the B QP with number @qpn: 0..NRC-1 RC, NRC the UD QP, else -1 */
static int b_qp_index(const struct end *b, uint32_t qpn)
{
	int i;

	for (i = 0; i < NRC; i++)
		if (b->rc[i]->qp_num == qpn)
			return i;
	return b->ud->qp_num == qpn ? NRC : -1;
}

/* Wait up to @ms for async event @type on @ctx; other events are skipped. */
static bool wait_event(struct ibv_context *ctx, enum ibv_event_type type,
		       unsigned int ms, struct ibv_async_event *out)
{
	uint64_t end = now_us() + (uint64_t)ms * 1000;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (now_us() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		if (ev.event_type == type) {
			*out = ev;
			ibv_ack_async_event(&ev);
			return true;
		}
		ibv_ack_async_event(&ev);
	}
	return false;
}

/* Tests */

TEST_F(srq, caps_are_reported)
{
	struct ibv_srq_attr qa;

	EXPECT_LT(0, self->b.attr.max_srq);
	EXPECT_LE(SRQ_WR, self->b.attr.max_srq_wr);
	EXPECT_LE(SRQ_SGE, self->b.attr.max_srq_sge);
	/* The fixture's SRQ: at least what was asked for. */
	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &qa));
	EXPECT_LE(SRQ_WR, qa.max_wr);
	EXPECT_LE(SRQ_SGE, qa.max_sge);
	EXPECT_EQ(0, qa.srq_limit);
	/* Both limits work. */
	self->srq2 = make_srq(self->b.pd, self->b.attr.max_srq_wr,
			      self->b.attr.max_srq_sge, 0);
	ASSERT_NE(NULL, self->srq2) TH_LOG("SRQ at max_srq_wr %d, max_srq_sge %d: %s",
					   self->b.attr.max_srq_wr,
					   self->b.attr.max_srq_sge,
					   strerror(errno));
}

/*
 * Every RC QP and the UD QP receive through the one SRQ: each completion
 * names its QP, its data is what that QP's peer sent, and the wr_id is
 * the receive it landed in.
 */
TEST_F(srq, rc_and_ud_traffic)
{
	const unsigned int per_qp = 8, total = per_qp * (NRC + 1);
	unsigned int seen[NRC + 1] = { 0 }, n, i, q;
	bool used[SRQ_WR] = { false };
	struct ibv_wc wc[SRQ_WR];
	int got;

	for (i = 0; i < total; i++)
		ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, i,
					 self->b.mr->lkey));
	/* Interleave the senders; message (q, k) has seed q << 8 | k. */
	for (i = 0; i < per_qp; i++) {
		for (q = 0; q < NRC; q++)
			ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[q],
					       0, ((q * per_qp) + i) * SLOT,
					       RC_LEN, q << 8 | i));
		ASSERT_ERRNO(0, a_send(&self->a, self->a.ud,
				       self->b.ud->qp_num,
				       ((NRC * per_qp) + i) * SLOT, UD_LEN,
				       NRC << 8 | i));
	}
	got = poll_n(self->a.scq, wc, total, WAIT_MS);
	ASSERT_EQ((int)total, got);
	for (i = 0; i < total; i++)
		EXPECT_STATUS(IBV_WC_SUCCESS, wc[i]);

	for (n = 0; n < total; n += got) {
		got = poll_n(self->b.rcq, wc, 1, WAIT_MS);
		ASSERT_EQ(1, got) TH_LOG("%u of %u receives", n, total);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc[0]);
		EXPECT_EQ(IBV_WC_RECV, wc[0].opcode);
		q = b_qp_index(&self->b, wc[0].qp_num);
		ASSERT_LE(0, (int)q) TH_LOG("qp_num %u is no QP of B",
					    wc[0].qp_num);
		ASSERT_GT(SRQ_WR, wc[0].wr_id);
		EXPECT_FALSE(used[wc[0].wr_id]) TH_LOG("wr_id %llu twice",
						       (unsigned long long)wc[0].wr_id);
		used[wc[0].wr_id] = true;
		if (q < NRC) {
			EXPECT_EQ(RC_LEN, wc[0].byte_len);
			/* In order per QP: the k-th message of QP q. */
			EXPECT_TRUE(msg_ok(self->b.buf + wc[0].wr_id * SLOT,
					   q << 8 | seen[q], RC_LEN))
				TH_LOG("RC QP %u message %u in slot %llu", q,
				       seen[q],
				       (unsigned long long)wc[0].wr_id);
		} else {
			EXPECT_EQ(GRH_LEN + UD_LEN, wc[0].byte_len);
			EXPECT_EQ(self->a.ud->qp_num, wc[0].src_qp);
			EXPECT_TRUE(wc[0].wc_flags & IBV_WC_GRH);
			EXPECT_TRUE(msg_at(self->b.buf + wc[0].wr_id * SLOT,
					   GRH_LEN, NRC << 8 | seen[q],
					   UD_LEN));
		}
		seen[q]++;
	}
	for (q = 0; q <= NRC; q++)
		EXPECT_EQ(per_qp, seen[q]) TH_LOG("QP %u", q);
	expect_no_wc(_metadata, self->b.rcq, 200);
}

/*
 * An SRQ with no WQE: an RC SEND is RNR NAK'd and retried, and lands as
 * soon as a receive is posted (no wake-up call needed).
 */
TEST_F(srq, rnr_then_post)
{
	struct ibv_wc wc;

	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[1], 0, 0, RC_LEN, 0x77));
	expect_no_wc(_metadata, self->b.rcq, 300);
	ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, 5, self->b.mr->lkey));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(self->b.rc[1]->qp_num, wc.qp_num);
	EXPECT_EQ(5, wc.wr_id);
	EXPECT_TRUE(msg_ok(self->b.buf + 5 * SLOT, 0x77, RC_LEN));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
}

/*
 * IBTA SRQ limit: 10 WQEs, limit 7; after the fourth message 6 are left
 * and IBV_EVENT_SRQ_LIMIT_REACHED arrives for this SRQ; the SRQ is then
 * disarmed (srq_limit 0).
 */
TEST_F(srq, limit_event)
{
	struct ibv_srq_attr sa = { .srq_limit = 7 };
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 10; i++)
		ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, i,
					 self->b.mr->lkey));
	ASSERT_ERRNO(0, ibv_modify_srq(self->b.srq, &sa, IBV_SRQ_LIMIT));
	memset(&sa, 0, sizeof(sa));
	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &sa));
	EXPECT_EQ(7, sa.srq_limit);
	for (i = 0; i < 3; i++) {
		ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[0], 0, 0, 64, i));
		wc = wait_wc(_metadata, self->b.rcq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	}
	/* 7 left: not below the limit yet. */
	EXPECT_FALSE(wait_event(self->b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, 300,
				&ev));
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[2], 0, 0, 64, 3));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	ASSERT_TRUE(wait_event(self->b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
			       EVENT_MS, &ev));
	EXPECT_EQ(self->b.srq, ev.element.srq);
	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &sa));
	EXPECT_EQ(0, sa.srq_limit);
	/* Disarmed: no second event. */
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[2], 0, 0, 64, 4));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_FALSE(wait_event(self->b.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, 300,
				&ev));
}

TEST_F(srq, limit_not_below_depth)
{
	struct ibv_srq_attr sa;

	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &sa));
	sa.srq_limit = sa.max_wr;
	ASSERT_ERRNO(EINVAL, ibv_modify_srq(self->b.srq, &sa, IBV_SRQ_LIMIT));
	sa.srq_limit = sa.max_wr - 1;
	ASSERT_ERRNO(0, ibv_modify_srq(self->b.srq, &sa, IBV_SRQ_LIMIT));
	sa.srq_limit = 0;
	ASSERT_ERRNO(0, ibv_modify_srq(self->b.srq, &sa, IBV_SRQ_LIMIT));
}

/* The device reports no IBV_DEVICE_SRQ_RESIZE: IBV_SRQ_MAX_WR fails. */
TEST_F(srq, resize_refused)
{
	struct ibv_srq_attr sa = { .max_wr = 2 * SRQ_WR };

	if (self->b.attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE)
		SKIP(return, "the device resizes SRQs");
	ASSERT_ERRNO(EINVAL, ibv_modify_srq(self->b.srq, &sa, IBV_SRQ_MAX_WR));
}

/*
 * A QP on the SRQ moved to ERR raises IBV_EVENT_QP_LAST_WQE_REACHED; its
 * flush takes nothing from the SRQ: every posted receive is still there
 * for the other QPs.
 */
TEST_F(srq, last_wqe_reached_and_no_srq_flush)
{
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 4; i++)
		ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, i,
					 self->b.mr->lkey));
	ASSERT_EQ(0, qp_to_state(self->b.rc[0], IBV_QPS_ERR));
	ASSERT_TRUE(wait_event(self->b.ctx, IBV_EVENT_QP_LAST_WQE_REACHED,
			       EVENT_MS, &ev));
	EXPECT_EQ(self->b.rc[0], ev.element.qp);
	expect_no_wc(_metadata, self->b.rcq, 300);
	for (i = 0; i < 4; i++)
		ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[1 + i % 2], 0,
				       i * SLOT, 100, i));
	for (i = 0; i < 4; i++) {
		wc = wait_wc(_metadata, self->b.rcq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_NE(self->b.rc[0]->qp_num, wc.qp_num);
	}
}

/* A receive posted with a bad lkey: LOC_PROT_ERR on the QP that took it. */
TEST_F(srq, bad_lkey_error_completion)
{
	struct ibv_async_event ev;
	struct ibv_wc wc;

	ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, 0,
				 self->b.mr->lkey ^ 0x5a5a00));
	ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, 1, self->b.mr->lkey));
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[2], 0, 0, 200, 9));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_LOC_PROT_ERR, wc);
	EXPECT_EQ(self->b.rc[2]->qp_num, wc.qp_num);
	EXPECT_EQ(0, wc.wr_id);
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_REM_OP_ERR, wc);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->b.rc[2]);
	ASSERT_TRUE(wait_event(self->b.ctx, IBV_EVENT_QP_LAST_WQE_REACHED,
			       EVENT_MS, &ev));
	EXPECT_EQ(self->b.rc[2], ev.element.qp);
	/* Nothing was written into the buffer the bad WQE named. */
	EXPECT_EQ(SLOT, first_not(self->b.buf, SLOT, FILL));
	/* The good receive is still there for another QP. */
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[0], 0, SLOT, 200, 10));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_TRUE(msg_ok(self->b.buf + SLOT, 10, 200));
}

/* The SRQ's own PD checks its receives: an MR of another PD is refused. */
TEST_F(srq, receive_mr_of_another_pd)
{
	struct ibv_mr *mr2;
	struct ibv_wc wc;

	mr2 = ibv_reg_mr(self->b.pd2, self->b.buf, SLOT,
			 IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr2);
	ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, 0, mr2->lkey));
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[0], 0, 0, 100, 1));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_LOC_PROT_ERR, wc);
	EXPECT_EQ(SLOT, first_not(self->b.buf, SLOT, FILL));
	EXPECT_EQ(0, ibv_destroy_qp(self->b.rc[0]));
	self->b.rc[0] = NULL;
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
}

TEST_F(srq, destroy_in_use_ebusy)
{
	ASSERT_ERRNO(EBUSY, ibv_destroy_srq(self->b.srq));
	/* Still working. */
	ASSERT_ERRNO(0, srq_recv(&self->b, self->b.srq, 0, self->b.mr->lkey));
}

/* Destroyed with receives posted and QPs gone: nothing completes. */
TEST_F(srq, destroy_with_receives_posted)
{
	int i;

	self->srq2 = make_srq(self->b.pd, 16, 1, 0);
	ASSERT_NE(NULL, self->srq2);
	for (i = 0; i < 8; i++)
		ASSERT_ERRNO(0, srq_recv(&self->b, self->srq2, i,
					 self->b.mr->lkey));
	ASSERT_EQ(0, ibv_destroy_srq(self->srq2));
	self->srq2 = NULL;
	expect_no_wc(_metadata, self->b.rcq, 200);
}

TEST_F(srq, create_over_max_srq_wr)
{
	ASSERT_NULL_ERRNO(EINVAL, make_srq(self->b.pd,
					   self->b.attr.max_srq_wr + 1, 1, 0));
}

TEST_F(srq, create_zero_wr)
{
	ASSERT_NULL_ERRNO(EINVAL, make_srq(self->b.pd, 0, 1, 0));
}

TEST_F(srq, create_over_max_srq_sge)
{
	ASSERT_NULL_ERRNO(EINVAL, make_srq(self->b.pd, 16,
					   self->b.attr.max_srq_sge + 1, 0));
}

/* srq_limit is irrelevant for ibv_create_srq: nothing is armed. */
TEST_F(srq, create_ignores_srq_limit)
{
	struct ibv_srq_attr sa;

	self->srq2 = make_srq(self->b.pd, 16, 1, 1000);
	ASSERT_NE(NULL, self->srq2) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ibv_query_srq(self->srq2, &sa));
	EXPECT_EQ(0, sa.srq_limit);
}

/*
 * create_srq_ex: basic; XRC without its domain and CQ (tests/rdma/xrc
 * makes real ones); tag matching, which dray has not.
 */
TEST_F(srq, create_ex_basic_xrc_needs_domain_tm_refused)
{
	struct ibv_srq_init_attr_ex ia = {
		.attr = { .max_wr = 16, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD,
		.srq_type = IBV_SRQT_BASIC,
		.pd = self->b.pd,
	};

	self->srq2 = ibv_create_srq_ex(self->b.ctx, &ia);
	ASSERT_NE(NULL, self->srq2) TH_LOG("%s", strerror(errno));
	EXPECT_LE(16, ia.attr.max_wr);
	ASSERT_ERRNO(0, srq_recv(&self->b, self->srq2, 0, self->b.mr->lkey));
	ia.srq_type = IBV_SRQT_XRC;
	ASSERT_NULL_ERRNO(EINVAL, ibv_create_srq_ex(self->b.ctx, &ia));
	ia.srq_type = IBV_SRQT_TM;
	ASSERT_NULL_ERRNO(EOPNOTSUPP, ibv_create_srq_ex(self->b.ctx, &ia));
}

/* Posting past the depth: ENOMEM at the first WR that does not fit. */
TEST_F(srq, post_past_depth_enomem)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->b.buf, .length = 64,
		.lkey = self->b.mr->lkey,
	};
	struct ibv_recv_wr wr[SRQ_WR + 1], *bad = NULL;
	struct ibv_srq_attr sa;
	unsigned int i, depth;

	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &sa));
	depth = sa.max_wr;
	ASSERT_GE(SRQ_WR, depth);
	for (i = 0; i <= depth; i++) {
		wr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge,
					      .num_sge = 1,
					      .next = i < depth ? &wr[i + 1] :
								  NULL };
	}
	ASSERT_ERRNO(ENOMEM, ibv_post_srq_recv(self->b.srq, wr, &bad));
	EXPECT_EQ(&wr[depth], bad);
	/* One receive used: room for one more again. */
	ASSERT_ERRNO(0, a_send(&self->a, self->a.rc[0], 0, 0, 32, 1));
	EXPECT_STATUS(IBV_WC_SUCCESS, wait_wc(_metadata, self->b.rcq));
	wr[depth].next = NULL;
	bad = NULL;
	ASSERT_ERRNO(0, ibv_post_srq_recv(self->b.srq, &wr[depth], &bad));
	ASSERT_ERRNO(ENOMEM, ibv_post_srq_recv(self->b.srq, &wr[depth], &bad));
}

TEST_F(srq, post_too_many_sge)
{
	struct ibv_sge sge[64];
	struct ibv_recv_wr wr[2], *bad = NULL;
	struct ibv_srq_attr sa;
	unsigned int i;

	ASSERT_EQ(0, ibv_query_srq(self->b.srq, &sa));
	ASSERT_GT(64, sa.max_sge);
	for (i = 0; i < 64; i++)
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)self->b.buf,
					   .length = 8,
					   .lkey = self->b.mr->lkey };
	wr[0] = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sge,
				      .num_sge = sa.max_sge, .next = &wr[1] };
	wr[1] = (struct ibv_recv_wr){ .wr_id = 2, .sg_list = sge,
				      .num_sge = sa.max_sge + 1 };
	ASSERT_ERRNO(EINVAL, ibv_post_srq_recv(self->b.srq, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
}

/* A QP on an SRQ has no receive queue of its own. */
TEST_F(srq, post_recv_on_srq_qp)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->b.buf, .length = 64,
		.lkey = self->b.mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	EXPECT_NE(0, ibv_post_recv(self->b.rc[0], &wr, &bad));
	EXPECT_NE(0, ibv_post_recv(self->b.ud, &wr, &bad));
}

/* A QP may sit on an SRQ of another PD; the receives use the SRQ's PD. */
TEST_F(srq, qp_on_srq_of_another_pd)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->b.scq,
		.recv_cq = self->b.rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_qp *qp;

	self->srq2 = make_srq(self->b.pd2, 16, 1, 0);
	ASSERT_NE(NULL, self->srq2);
	a.srq = self->srq2;
	qp = ibv_create_qp(self->b.pd, &a);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	ASSERT_ERRNO(EBUSY, ibv_destroy_srq(self->srq2));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_HARNESS_MAIN
