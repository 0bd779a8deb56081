// SPDX-License-Identifier: GPL-2.0-only
/*
 * IBTA 1.5's ATOMIC WRITE and FLUSH on RC QPs, through ibv_wr_atomic_write()
 * and ibv_wr_flush(): where the kernel offers them (6.2 and later: the
 * device flags and IBV_ACCESS_FLUSH_GLOBAL), the 8 bytes land whole at the
 * responder, a FLUSH completes after the writes before it are placed, and
 * every bad request fails as IBTA says (misaligned: invalid request; no
 * right, wrong placement type, out of range: remote access error), the
 * responder's memory untouched. Where the kernel lacks them, the device
 * reports neither and the provider refuses QPs asking for them. The report
 * and the behaviour must agree either way (caps_agree). kselftest harness;
 * two variants: between two devices, within one.
 *
 *   DRAY_TEST_DEV_A (default dray0)    A, the requester
 *   DRAY_TEST_DEV_B (default dray1)    B, the responder (two_dev)
 *   DRAY_TEST_TWO_DEV_ONLY=1           skip the one_dev variant (interop)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/ib_user_verbs.h>

#include "harness.h"

#define BUF_LEN		(64 * 1024)
#define FILL		0x5a
#define NWRITES		16
#define OPS		(IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_FLUSH | \
			 IBV_QP_EX_WITH_RDMA_WRITE)
#define RW		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

struct end {
	struct ibv_context *ctx;
	struct rc_end addr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;	/* A: the local buffer; B: RW + FLUSH_GLOBAL */
	struct ibv_mr *mr_nf;	/* B: RW, no flush right (second half) */
	struct ibv_mr *mr_ro;	/* B: REMOTE_READ only (same pages) */
};

FIXTURE(ibta15) {
	struct end a, b;
	bool have;		/* the device reports both operations */
};

FIXTURE_VARIANT(ibta15) {
	bool one_dev;
};

FIXTURE_VARIANT_ADD(ibta15, two_dev) { .one_dev = false };
FIXTURE_VARIANT_ADD(ibta15, one_dev) { .one_dev = true };

static bool device_has(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	const uint64_t both = IB_UVERBS_DEVICE_ATOMIC_WRITE |
			      IB_UVERBS_DEVICE_FLUSH_GLOBAL;

	if (ibv_query_device_ex(ctx, NULL, &attr))
		return false;
	return (attr.device_cap_flags_ex & both) == both;
}

static struct ibv_qp *qp_with(struct end *e, uint64_t ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 0,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->pd,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(e->ctx, &a);
}

static void end_setup(struct __test_metadata *_metadata, struct end *e,
		      const char *name, bool responder, bool have)
{
	struct ibv_port_attr port;

	e->ctx = open_device(name);
	ASSERT_NE(NULL, e->ctx) TH_LOG("device %s: %s", name, strerror(errno));
	ASSERT_EQ(0, ibv_query_port(e->ctx, RC_PORT, &port));
	e->addr.gid_index = pick_gid(e->ctx, -1, &e->addr.gid);
	ASSERT_LE(0, e->addr.gid_index) TH_LOG("no RoCEv2 GID on %s", name);
	e->addr.mtu = port.active_mtu;
	e->addr.psn = responder ? 0x777 : 0xfffffe;
	e->addr.rd_atomic = 16;
	e->pd = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd);
	e->cq = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, e->cq);
	e->qp = qp_with(e, have ? OPS : IBV_QP_EX_WITH_RDMA_WRITE);
	ASSERT_NE(NULL, e->qp) TH_LOG("create QP: %s", strerror(errno));
	e->addr.qpn = e->qp->qp_num;
	e->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, e->buf);
	memset(e->buf, FILL, BUF_LEN);
	if (!responder) {
		e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, RW);
		ASSERT_NE(NULL, e->mr);
		return;
	}
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN / 2,
			   RW | (have ? IBV_ACCESS_FLUSH_GLOBAL : 0));
	ASSERT_NE(NULL, e->mr) TH_LOG("reg_mr: %s", strerror(errno));
	e->mr_nf = ibv_reg_mr(e->pd, e->buf + BUF_LEN / 2, BUF_LEN / 2, RW);
	ASSERT_NE(NULL, e->mr_nf);
	e->mr_ro = ibv_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, e->mr_ro);
}

static void end_teardown(struct __test_metadata *_metadata, struct end *e)
{
	if (e->qp)
		EXPECT_EQ(0, ibv_destroy_qp(e->qp));
	if (e->mr_ro)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr_ro));
	if (e->mr_nf)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr_nf));
	if (e->mr)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr));
	if (e->cq)
		EXPECT_EQ(0, ibv_destroy_cq(e->cq));
	if (e->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd));
	if (e->buf)
		munmap(e->buf, BUF_LEN);
	if (e->ctx)
		EXPECT_EQ(0, ibv_close_device(e->ctx));
}

FIXTURE_SETUP(ibta15)
{
	struct ibv_context *probe;
	struct rc_params p;
	const char *step;
	int i;

	if (variant->one_dev && getenv("DRAY_TEST_TWO_DEV_ONLY"))
		SETUP_SKIP("two-device cases only (DRAY_TEST_TWO_DEV_ONLY)");
	for (i = 0; i < (variant->one_dev ? 1 : 2); i++) {
		probe = open_device(dev_name(i));
		if (!probe)
			SETUP_SKIP("device %s: %s", dev_name(i),
				   strerror(errno));
		if (i == 0)
			self->have = device_has(probe);
		ibv_close_device(probe);
	}
	end_setup(_metadata, &self->a, dev_name(0), false, self->have);
	end_setup(_metadata, &self->b, dev_name(variant->one_dev ? 0 : 1),
		  true, self->have);
	rc_params_default(&p);
	ASSERT_EQ(0, rc_connect(self->b.qp, &self->b.addr, &self->a.addr, &p,
				&step)) TH_LOG("B: %s", step);
	ASSERT_EQ(0, rc_connect(self->a.qp, &self->a.addr, &self->b.addr, &p,
				&step)) TH_LOG("A: %s", step);
	if (!self->have && !strstr(_metadata->name, "caps_agree"))
		SETUP_SKIP("the kernel offers no ATOMIC WRITE and FLUSH");
}

FIXTURE_TEARDOWN(ibta15)
{
	_metadata->trigger = 0;
	end_teardown(_metadata, &self->b);
	end_teardown(_metadata, &self->a);
}

/* Post one signaled ATOMIC WRITE of v to (rkey, addr); its completion. */
static struct ibv_wc atomic_write(struct __test_metadata *_metadata,
				  struct end *a, uint32_t rkey, uint64_t addr,
				  const uint8_t v[8])
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(a->qp);

	ibv_wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(q, rkey, addr, v);
	EXPECT_EQ(0, ibv_wr_complete(q));
	return wait_wc(_metadata, a->cq);
}

static struct ibv_wc flush(struct __test_metadata *_metadata, struct end *a,
			   uint32_t rkey, uint64_t addr, size_t len,
			   uint8_t type, uint8_t level)
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(a->qp);

	ibv_wr_start(q);
	q->wr_id = 2;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(q, rkey, addr, len, type, level);
	EXPECT_EQ(0, ibv_wr_complete(q));
	return wait_wc(_metadata, a->cq);
}

static uint64_t at(const struct end *b, size_t off)
{
	return (uintptr_t)b->buf + off;
}

/*
 * What the device reports is what it does: with both flags, a QP with the
 * two operations and an MR with IBV_ACCESS_FLUSH_GLOBAL can be made
 * (the fixture did); without them neither can. dray never reports
 * persistent placement (no memory of it is persistent).
 */
TEST_F(ibta15, caps_agree)
{
	struct ibv_device_attr_ex attr;
	struct ibv_qp *qp;
	struct ibv_mr *mr;

	ASSERT_EQ(0, ibv_query_device_ex(self->b.ctx, NULL, &attr));
	if (self->have) {
		TH_LOG("the device offers ATOMIC WRITE and FLUSH");
		if (is_dray(self->b.ctx)) {
			EXPECT_EQ(0, attr.device_cap_flags_ex &
				  IB_UVERBS_DEVICE_FLUSH_PERSISTENT);
			ASSERT_NULL_ERRNO(EOPNOTSUPP,
					  ibv_reg_mr(self->b.pd, self->b.buf,
						     4096, RW |
						     IBV_ACCESS_FLUSH_PERSISTENT));
		}
		return;
	}
	TH_LOG("the kernel offers no ATOMIC WRITE and FLUSH");
	errno = 0;
	qp = qp_with(&self->a, OPS);
	EXPECT_EQ(NULL, qp);
	EXPECT_EQ(EOPNOTSUPP, errno);
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	mr = ibv_reg_mr(self->b.pd, self->b.buf, 4096,
			RW | IBV_ACCESS_FLUSH_GLOBAL);
	EXPECT_EQ(NULL, mr);
	EXPECT_NE(0, errno);
	if (mr)
		ibv_dereg_mr(mr);
}

/* Eight words at different offsets land whole; the bytes around stay. */
TEST_F(ibta15, atomic_write_lands)
{
	uint8_t v[8];
	int i, j;

	for (i = 0; i < 8; i++) {
		size_t off = 8 + i * 4000;	/* within mr: BUF_LEN / 2 */
		struct ibv_wc wc;

		for (j = 0; j < 8; j++)
			v[j] = (uint8_t)(0x10 * i + j + 1);
		wc = atomic_write(_metadata, &self->a, self->b.mr->rkey,
				  at(&self->b, off), v);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_EQ(IBV_WC_ATOMIC_WRITE, wc.opcode);
		EXPECT_EQ(0, memcmp(self->b.buf + off, v, 8));
		EXPECT_EQ(FILL, self->b.buf[off - 1]);
		EXPECT_EQ(FILL, self->b.buf[off + 8]);
	}
}

/* A word not 8-byte aligned: an invalid request, nothing written. */
TEST_F(ibta15, atomic_write_misaligned)
{
	static const uint8_t v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_wc wc;

	wc = atomic_write(_metadata, &self->a, self->b.mr->rkey,
			  at(&self->b, 100), v);
	EXPECT_STATUS(IBV_WC_REM_INV_REQ_ERR, wc);
	EXPECT_EQ(BUF_LEN, first_not(self->b.buf, BUF_LEN, FILL));
}

/* An R_Key without remote write: a remote access error. */
TEST_F(ibta15, atomic_write_no_write_right)
{
	static const uint8_t v[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	struct ibv_wc wc;

	wc = atomic_write(_metadata, &self->a, self->b.mr_ro->rkey,
			  at(&self->b, 64), v);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	EXPECT_EQ(BUF_LEN, first_not(self->b.buf, BUF_LEN, FILL));
}

/*
 * Unsignaled WRITEs, then a FLUSH of their range: when the FLUSH
 * completes, every byte they wrote is in B's memory. Then a FLUSH of the
 * whole MR (level MR: the length is ignored).
 */
TEST_F(ibta15, flush_after_writes)
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(self->a.qp);
	const size_t chunk = 1024;
	struct ibv_wc wc;
	int i;

	for (i = 0; i < NWRITES; i++)
		memset(self->a.buf + i * chunk, i + 1, chunk);
	ibv_wr_start(q);
	for (i = 0; i < NWRITES; i++) {
		q->wr_id = 100 + i;
		q->wr_flags = 0;
		ibv_wr_rdma_write(q, self->b.mr->rkey,
				  at(&self->b, i * chunk));
		ibv_wr_set_sge(q, self->a.mr->lkey,
			       (uintptr_t)self->a.buf + i * chunk, chunk);
	}
	ASSERT_EQ(0, ibv_wr_complete(q));
	wc = flush(_metadata, &self->a, self->b.mr->rkey, at(&self->b, 0),
		   NWRITES * chunk, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_FLUSH, wc.opcode);
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(0, memcmp(self->b.buf, self->a.buf, NWRITES * chunk));

	wc = flush(_metadata, &self->a, self->b.mr->rkey, at(&self->b, 0),
		   12345678, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = flush(_metadata, &self->a, self->b.mr->rkey, at(&self->b, 64),
		   0, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
}

/* An MR without IBV_ACCESS_FLUSH_GLOBAL: a remote access error. */
TEST_F(ibta15, flush_without_right)
{
	struct ibv_wc wc;

	wc = flush(_metadata, &self->a, self->b.mr_nf->rkey,
		   at(&self->b, BUF_LEN / 2), 4096, IBV_FLUSH_GLOBAL,
		   IBV_FLUSH_RANGE);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
}

/* Persistent placement: no MR of dray's allows it. */
TEST_F(ibta15, flush_persistent_refused)
{
	struct ibv_wc wc;

	wc = flush(_metadata, &self->a, self->b.mr->rkey, at(&self->b, 0),
		   4096, IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
}

/* A range reaching past the MR: a remote access error. */
TEST_F(ibta15, flush_out_of_range)
{
	struct ibv_wc wc;

	wc = flush(_metadata, &self->a, self->b.mr->rkey,
		   at(&self->b, BUF_LEN / 2 - 4096), 8192, IBV_FLUSH_GLOBAL,
		   IBV_FLUSH_RANGE);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
}

/* Bad arguments fail the batch at ibv_wr_complete(), nothing posted. */
TEST_F(ibta15, flush_bad_arguments)
{
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(self->a.qp);
	struct ibv_wc wc;

	if (!is_dray(self->a.ctx))
		SKIP(return, "what the provider checks is dray's own");
	ibv_wr_start(q);
	ibv_wr_flush(q, self->b.mr->rkey, at(&self->b, 0), 64, 0,
		     IBV_FLUSH_RANGE);
	ASSERT_ERRNO(EINVAL, ibv_wr_complete(q));
	ibv_wr_start(q);
	ibv_wr_flush(q, self->b.mr->rkey, at(&self->b, 0), 64,
		     IBV_FLUSH_GLOBAL, 7);
	EXPECT_EQ(EINVAL, ibv_wr_complete(q));
	EXPECT_EQ(0, poll_n(self->a.cq, &wc, 1, 200));
}

TEST_HARNESS_MAIN
