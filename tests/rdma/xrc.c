// SPDX-License-Identifier: GPL-2.0-only
/*
 * XRC (IBTA annex A14) in user space: an XRC initiator QP on device A
 * sends through one XRC target QP on device B to several XRC SRQs of B's
 * XRC domain, each with its own PD and CQ; every operation RC has (SEND,
 * WRITE, both with immediate, READ, both atomics), messages of many
 * packets, each receive completing on the named SRQ's CQ with the target
 * QP's number. Then what the responder refuses (an SRQ that is not one
 * of the domain's XRC SRQs, an R_Key of another PD than the named SRQ's,
 * a receive too short), an empty SRQ (RNR), a domain shared with another
 * process through its file (ibv_open_xrcd, ibv_open_qp), and the bad
 * inputs of the XRC verbs. kselftest harness; two variants: between two
 * devices, within one.
 *
 *   DRAY_TEST_DEV_A (default dray0)    A, the initiator
 *   DRAY_TEST_DEV_B (default dray1)    B, the target (two_dev)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define NSRQ		3		/* XRC SRQs of B's domain */
#define NWR		64
#define SLOT		(16 * 1024)	/* one receive buffer, one WRITE area */
#define NSLOT		32
#define BUF_LEN		(NSLOT * SLOT)
#define FILL		0xee
#define QUIET_MS	500
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* One XRC SRQ of B's domain, with its own PD, CQ and memory. */
struct xsrq {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	uint32_t srqn;
	uint8_t *buf;
	struct ibv_mr *mr;
};

FIXTURE(xrc) {
	struct ibv_context *ca, *cb;
	bool dray;
	/* A: the initiator */
	struct ibv_pd *pd;
	struct ibv_cq *scq;
	struct ibv_qp *ini;
	uint8_t *buf;
	struct ibv_mr *mr;
	/* B: the domain, its target QP and SRQs */
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt;
	struct xsrq s[NSRQ];
	struct rc_end ea, eb;
	struct rc_params p;
	char path[64];		/* the domain's file */
	int fd;
};

FIXTURE_VARIANT(xrc) {
	bool one_dev;
};

FIXTURE_VARIANT_ADD(xrc, two_dev) { .one_dev = false };
FIXTURE_VARIANT_ADD(xrc, one_dev) { .one_dev = true };

/* An XRC domain, of the file fd (-1: a private one). */
static struct ibv_xrcd *open_xrcd(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xrc_srq(struct ibv_context *ctx, struct ibv_xrcd *xrcd,
			       struct ibv_pd *pd, struct ibv_cq *cq,
			       uint32_t wr)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = wr, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *xrc_ini(struct ibv_context *ctx, struct ibv_pd *pd,
			      struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
		.send_cq = cq,
		.cap = { .max_send_wr = NWR, .max_send_sge = 2,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *xrc_tgt(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_ah_attr path_to(const struct rc_end *self,
				  const struct rc_end *peer)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.grh = {
			.dgid = peer->gid,
			.sgid_index = (uint8_t)self->gid_index,
			.hop_limit = 1,
		},
		.port_num = RC_PORT,
	};

	return ah;
}

/* The initiator: RC's requester attributes, none of the responder's. */
static int ini_connect(struct ibv_qp *qp, const struct rc_end *self,
		       const struct rc_end *peer, const struct rc_params *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = self->mtu < peer->mtu ? self->mtu : peer->mtu,
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.ah_attr = path_to(self, peer),
	};
	int err;

	err = qp_to_init(qp, 0);
	if (err)
		return err;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.sq_psn = self->psn;
	a.max_rd_atomic = peer->rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The target: RC's responder attributes; to RTS with a timeout only. */
static int tgt_connect(struct ibv_qp *qp, const struct rc_end *self,
		       const struct rc_end *peer, const struct rc_params *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = self->mtu < peer->mtu ? self->mtu : peer->mtu,
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = self->rd_atomic,
		.min_rnr_timer = p->min_rnr_timer,
		.ah_attr = path_to(self, peer),
	};
	int err;

	err = qp_to_init(qp, ACCESS & ~IBV_ACCESS_LOCAL_WRITE);
	if (err)
		return err;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.sq_psn = self->psn;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_SQ_PSN);
}

static void end_addr(struct __test_metadata *_metadata,
		     struct ibv_context *ctx, struct rc_end *e, uint32_t psn)
{
	struct ibv_port_attr port;
	struct ibv_device_attr attr;

	ASSERT_EQ(0, ibv_query_port(ctx, RC_PORT, &port));
	ASSERT_EQ(0, ibv_query_device(ctx, &attr));
	e->gid_index = pick_gid(ctx, -1, &e->gid);
	ASSERT_LE(0, e->gid_index) TH_LOG("no RoCEv2 GID");
	e->mtu = port.active_mtu;
	e->psn = psn;
	e->rd_atomic = attr.max_qp_rd_atom < 16 ? attr.max_qp_rd_atom : 16;
}

static void srq_setup(struct __test_metadata *_metadata,
		      FIXTURE_DATA(xrc) *self, struct xsrq *x)
{
	x->pd = ibv_alloc_pd(self->cb);
	ASSERT_NE(NULL, x->pd);
	x->cq = ibv_create_cq(self->cb, 4 * NWR, NULL, NULL, 0);
	ASSERT_NE(NULL, x->cq);
	x->srq = xrc_srq(self->cb, self->xrcd, x->pd, x->cq, NWR);
	ASSERT_NE(NULL, x->srq) TH_LOG("XRC SRQ: %s", strerror(errno));
	ASSERT_EQ(0, ibv_get_srq_num(x->srq, &x->srqn));
	ASSERT_NE(0, x->srqn);
	x->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, x->buf);
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF_LEN, ACCESS);
	ASSERT_NE(NULL, x->mr);
}

static void srq_teardown(struct __test_metadata *_metadata, struct xsrq *x)
{
	if (x->srq)
		EXPECT_EQ(0, ibv_destroy_srq(x->srq));
	if (x->mr)
		EXPECT_EQ(0, ibv_dereg_mr(x->mr));
	if (x->cq)
		EXPECT_EQ(0, ibv_destroy_cq(x->cq));
	if (x->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(x->pd));
	if (x->buf)
		munmap(x->buf, BUF_LEN);
}

FIXTURE_SETUP(xrc)
{
	struct ibv_device_attr_ex attr = {};
	int i;

	self->fd = -1;
	self->ca = open_device(dev_name(0));
	if (!self->ca)
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	self->cb = variant->one_dev ? self->ca : open_device(dev_name(1));
	if (!self->cb) {
		ibv_close_device(self->ca);
		self->ca = NULL;
		SETUP_SKIP("device %s: %s", dev_name(1), strerror(errno));
	}
	ASSERT_EQ(0, ibv_query_device_ex(self->cb, NULL, &attr));
	if (!(attr.orig_attr.device_cap_flags & IBV_DEVICE_XRC))
		SETUP_SKIP("%s has no XRC", dev_name(1));
	self->dray = is_dray(self->ca);
	rc_params_default(&self->p);

	/* A */
	self->pd = ibv_alloc_pd(self->ca);
	ASSERT_NE(NULL, self->pd);
	self->scq = ibv_create_cq(self->ca, 4 * NWR, NULL, NULL, 0);
	ASSERT_NE(NULL, self->scq);
	self->ini = xrc_ini(self->ca, self->pd, self->scq);
	ASSERT_NE(NULL, self->ini) TH_LOG("XRC_SEND QP: %s", strerror(errno));
	self->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_LEN, ACCESS);
	ASSERT_NE(NULL, self->mr);

	/* B: a domain of its own file, so that another process can share it. */
	snprintf(self->path, sizeof(self->path), "/tmp/dray-xrc-%d", getpid());
	self->fd = open(self->path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, self->fd);
	self->xrcd = open_xrcd(self->cb, self->fd, O_CREAT);
	ASSERT_NE(NULL, self->xrcd) TH_LOG("open_xrcd: %s", strerror(errno));
	self->tgt = xrc_tgt(self->cb, self->xrcd);
	ASSERT_NE(NULL, self->tgt) TH_LOG("XRC_RECV QP: %s", strerror(errno));
	for (i = 0; i < NSRQ; i++)
		srq_setup(_metadata, self, &self->s[i]);

	end_addr(_metadata, self->ca, &self->ea, 0xffff00);
	end_addr(_metadata, self->cb, &self->eb, 0x42);
	self->ea.qpn = self->ini->qp_num;
	self->eb.qpn = self->tgt->qp_num;
	ASSERT_EQ(0, tgt_connect(self->tgt, &self->eb, &self->ea, &self->p));
	ASSERT_EQ(0, ini_connect(self->ini, &self->ea, &self->eb, &self->p));
}

FIXTURE_TEARDOWN(xrc)
{
	int i;

	_metadata->trigger = 0;
	if (self->ini)
		EXPECT_EQ(0, ibv_destroy_qp(self->ini));
	if (self->tgt)
		EXPECT_EQ(0, ibv_destroy_qp(self->tgt));
	for (i = 0; i < NSRQ; i++)
		srq_teardown(_metadata, &self->s[i]);
	if (self->xrcd)
		EXPECT_EQ(0, ibv_close_xrcd(self->xrcd));
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->scq)
		EXPECT_EQ(0, ibv_destroy_cq(self->scq));
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->buf)
		munmap(self->buf, BUF_LEN);
	if (self->cb && self->cb != self->ca)
		EXPECT_EQ(0, ibv_close_device(self->cb));
	if (self->ca)
		EXPECT_EQ(0, ibv_close_device(self->ca));
	if (self->fd >= 0) {
		close(self->fd);
		unlink(self->path);
	}
}

/* Helpers */

/* B: a receive into slot of SRQ x, len bytes (filled with FILL first). */
static int post_srq(struct xsrq *x, uint64_t wr_id, uint32_t slot,
		    uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(x->buf + (size_t)slot * SLOT),
		.length = len,
		.lkey = x->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;

	memset(x->buf + (size_t)slot * SLOT, FILL, len);
	return ibv_post_srq_recv(x->srq, &wr, &bad);
}

/* A's WR: the opcode, len bytes of A's buffer at off, to SRQ srqn. */
struct op {
	enum ibv_wr_opcode opcode;
	uint64_t wr_id;
	uint32_t srqn;
	size_t off;
	uint32_t len;
	uint64_t raddr;		/* WRITE, READ, atomics */
	uint32_t rkey;
	uint32_t imm;
	uint64_t cmp_add, swap;
};

static int post_op(FIXTURE_DATA(xrc) *self, const struct op *o)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(self->buf + o->off),
		.length = o->len,
		.lkey = self->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = o->wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = o->opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(o->imm),
		.qp_type.xrc.remote_srqn = o->srqn,
	};
	struct ibv_send_wr *bad = NULL;

	if (o->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    o->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = o->raddr;
		wr.wr.atomic.rkey = o->rkey;
		wr.wr.atomic.compare_add = o->cmp_add;
		wr.wr.atomic.swap = o->swap;
	} else {
		wr.wr.rdma.remote_addr = o->raddr;
		wr.wr.rdma.rkey = o->rkey;
	}
	return ibv_post_send(self->ini, &wr, &bad);
}

/* B's memory of SRQ x at slot, as a remote address. */
static uint64_t slot_addr(const struct xsrq *x, uint32_t slot)
{
	return (uintptr_t)(x->buf + (size_t)slot * SLOT);
}

/* A's WR wr_id completes with status. */
static void expect_send(struct __test_metadata *_metadata,
			FIXTURE_DATA(xrc) *self, uint64_t wr_id,
			enum ibv_wc_status status)
{
	struct ibv_wc wc = wait_wc(_metadata, self->scq);

	EXPECT_EQ(wr_id, wc.wr_id);
	EXPECT_STATUS(status, wc);
}

/*
 * A receive of SRQ x: on x's CQ, wr_id, byte_len, from the target QP;
 * the data the stream seed wrote from offset 0 (len bytes) at slot.
 */
static void expect_recv(struct __test_metadata *_metadata,
			FIXTURE_DATA(xrc) *self, struct xsrq *x,
			uint64_t wr_id, uint32_t slot, uint32_t len,
			uint64_t seed)
{
	struct ibv_wc wc = wait_wc(_metadata, x->cq);

	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(wr_id, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV, wc.opcode);
	EXPECT_EQ(len, wc.byte_len);
	EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
	EXPECT_EQ(len, stream_check(x->buf + (size_t)slot * SLOT, seed, 0,
				    len));
}

/* The target QP's state as the device reports it. */
static int tgt_state(FIXTURE_DATA(xrc) *self)
{
	return qp_state(self->tgt);
}

/* Tests */

/*
 * SENDs of 1 B to 5 packets to each SRQ, each receive on that SRQ's CQ
 * naming the target QP; the SRQs' CQs see only their own.
 */
TEST_F(xrc, sends_reach_the_named_srq)
{
	static const uint32_t lens[] = { 1, 1000, 1024, 3000, 5000 };
	uint32_t i, k, n = 0;

	for (k = 0; k < NSRQ; k++)
		for (i = 0; i < ARRAY_SIZE(lens); i++)
			ASSERT_EQ(0, post_srq(&self->s[k], 100 * k + i, i,
					      SLOT));
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		for (k = 0; k < NSRQ; k++, n++) {
			struct op o = {
				.opcode = IBV_WR_SEND, .wr_id = n,
				.srqn = self->s[k].srqn,
				.off = (size_t)n * SLOT % BUF_LEN,
				.len = lens[i],
			};

			stream_fill(self->buf + o.off, 10 * k + i, 0, o.len);
			ASSERT_EQ(0, post_op(self, &o));
			expect_send(_metadata, self, o.wr_id, IBV_WC_SUCCESS);
		}
	for (k = 0; k < NSRQ; k++) {
		for (i = 0; i < ARRAY_SIZE(lens); i++)
			expect_recv(_metadata, self, &self->s[k], 100 * k + i,
				    i, lens[i], 10 * k + i);
		expect_no_wc(_metadata, self->s[k].cq, 0);
	}
}

/*
 * WRITE (4 packets) under each SRQ's PD, WRITE with immediate (which
 * takes a WQE of the SRQ), SEND with immediate, READ back, and both
 * atomics on the memory of the named SRQ's PD.
 */
TEST_F(xrc, every_operation)
{
	struct xsrq *x = &self->s[1];
	uint64_t *word = (uint64_t *)(x->buf + 7 * SLOT);
	uint64_t *res = (uint64_t *)(self->buf + 20 * SLOT);
	struct ibv_wc wc;
	struct op o = {
		.opcode = IBV_WR_RDMA_WRITE, .wr_id = 1, .srqn = x->srqn,
		.off = 0, .len = 4000, .raddr = slot_addr(x, 2),
		.rkey = x->mr->rkey,
	};

	stream_fill(self->buf, 77, 0, 4000);
	memset(x->buf + 2 * SLOT, FILL, SLOT);
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(4000, stream_check(x->buf + 2 * SLOT, 77, 0, 4000));
	EXPECT_EQ(FILL, x->buf[2 * SLOT + 4000]);

	/* WRITE with immediate: the data, and a receive on x's CQ. */
	ASSERT_EQ(0, post_srq(x, 0xabc, 5, 16));
	o.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	o.wr_id = 2;
	o.raddr = slot_addr(x, 3);
	o.len = 2500;
	o.imm = 0x1234;
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 2, IBV_WC_SUCCESS);
	wc = wait_wc(_metadata, x->cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0xabc, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(0x1234, ntohl(wc.imm_data));
	EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
	EXPECT_EQ(2500, stream_check(x->buf + 3 * SLOT, 77, 0, 2500));

	/* SEND with immediate */
	ASSERT_EQ(0, post_srq(x, 0xdef, 6, SLOT));
	o.opcode = IBV_WR_SEND_WITH_IMM;
	o.wr_id = 3;
	o.len = 300;
	o.imm = 0x5678;
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 3, IBV_WC_SUCCESS);
	wc = wait_wc(_metadata, x->cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0xdef, wc.wr_id);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(0x5678, ntohl(wc.imm_data));
	EXPECT_EQ(300, wc.byte_len);

	/* READ: 3 response packets into A's buffer. */
	stream_fill(x->buf + 4 * SLOT, 88, 0, 3000);
	memset(self->buf + 10 * SLOT, 0, 3000);
	o.opcode = IBV_WR_RDMA_READ;
	o.wr_id = 4;
	o.off = 10 * SLOT;
	o.len = 3000;
	o.raddr = slot_addr(x, 4);
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 4, IBV_WC_SUCCESS);
	EXPECT_EQ(3000, stream_check(self->buf + 10 * SLOT, 88, 0, 3000));

	/* Atomics: the original value back, the word changed. */
	*word = 40;
	o.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	o.wr_id = 5;
	o.off = 20 * SLOT;
	o.len = 8;
	o.raddr = (uintptr_t)word;
	o.cmp_add = 2;
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 5, IBV_WC_SUCCESS);
	EXPECT_EQ(40, *res);
	EXPECT_EQ(42, *word);
	o.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	o.wr_id = 6;
	o.cmp_add = 42;
	o.swap = 7;
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 6, IBV_WC_SUCCESS);
	EXPECT_EQ(42, *res);
	EXPECT_EQ(7, *word);
	EXPECT_EQ(IBV_QPS_RTS, tgt_state(self));
}

/*
 * A SEND to an empty SRQ is RNR NAK'd until a receive is posted, then
 * delivered: nothing lost, nothing failed (rnr_retry 7: forever).
 */
TEST_F(xrc, empty_srq_rnr_then_delivery)
{
	struct xsrq *x = &self->s[0];
	struct op o = {
		.opcode = IBV_WR_SEND, .wr_id = 9, .srqn = x->srqn,
		.len = 2000,
	};

	stream_fill(self->buf, 5, 0, 2000);
	ASSERT_EQ(0, post_op(self, &o));
	expect_no_wc(_metadata, self->scq, QUIET_MS);
	ASSERT_EQ(0, post_srq(x, 77, 0, SLOT));
	expect_send(_metadata, self, 9, IBV_WC_SUCCESS);
	expect_recv(_metadata, self, x, 77, 0, 2000, 5);
}

/*
 * What the target refuses fails the initiator's WR and moves the target
 * to ERR: a number that is no XRC SRQ of its domain (an SRQ of another
 * domain, an ordinary SRQ, no SRQ), an R_Key of another PD than the
 * named SRQ's, a SEND longer than the SRQ's WQE.
 */
static void expect_refused(struct __test_metadata *_metadata,
			   FIXTURE_DATA(xrc) *self, const struct op *o,
			   enum ibv_wc_status status)
{
	ASSERT_EQ(0, post_op(self, o));
	expect_send(_metadata, self, o->wr_id, status);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(self->ini));
	EXPECT_EQ(IBV_QPS_ERR, tgt_state(self));
}

TEST_F(xrc, srq_of_another_domain_is_refused)
{
	struct ibv_xrcd *other = open_xrcd(self->cb, -1, O_CREAT);
	struct ibv_srq *srq;
	struct op o = { .opcode = IBV_WR_SEND, .wr_id = 1, .len = 10 };

	ASSERT_NE(NULL, other);
	srq = xrc_srq(self->cb, other, self->s[0].pd, self->s[0].cq, 4);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &o.srqn));
	ASSERT_EQ(0, post_srq(&self->s[0], 1, 0, SLOT));
	expect_refused(_metadata, self, &o, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

TEST_F(xrc, ordinary_srq_is_refused)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(self->s[0].pd, &ia);
	struct op o = { .opcode = IBV_WR_SEND, .wr_id = 1, .len = 10 };
	struct ibv_sge sge = { .addr = (uintptr_t)self->s[0].buf,
			       .length = 64, .lkey = self->s[0].mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	ASSERT_NE(NULL, srq);
	/* With a receive posted, as if it could take the SEND. */
	ASSERT_EQ(0, ibv_post_srq_recv(srq, &wr, &bad));
	ASSERT_EQ(0, ibv_get_srq_num(srq, &o.srqn));
	expect_refused(_metadata, self, &o, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(xrc, no_such_srq_is_refused)
{
	struct op o = { .opcode = IBV_WR_RDMA_WRITE, .wr_id = 1, .len = 10,
			.srqn = 0xfffff, .raddr = slot_addr(&self->s[0], 0),
			.rkey = self->s[0].mr->rkey };

	expect_refused(_metadata, self, &o, IBV_WC_REM_INV_REQ_ERR);
}

TEST_F(xrc, rkey_of_another_pd_than_the_srqs)
{
	/* s[1]'s memory, under s[0]'s name: s[0]'s PD checks the key. */
	struct op o = { .opcode = IBV_WR_RDMA_WRITE, .wr_id = 1, .len = 100,
			.srqn = self->s[0].srqn,
			.raddr = slot_addr(&self->s[1], 0),
			.rkey = self->s[1].mr->rkey };

	memset(self->s[1].buf, FILL, 100);
	expect_refused(_metadata, self, &o, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(100, first_not(self->s[1].buf, 100, FILL))
		TH_LOG("the refused WRITE changed memory");
}

TEST_F(xrc, receive_too_short)
{
	struct xsrq *x = &self->s[2];
	struct op o = { .opcode = IBV_WR_SEND, .wr_id = 1, .len = 3000,
			.srqn = x->srqn };
	struct ibv_wc wc;

	ASSERT_EQ(0, post_srq(x, 55, 0, 1000));
	ASSERT_EQ(0, post_srq(x, 56, 1, SLOT));
	expect_refused(_metadata, self, &o, IBV_WC_REM_INV_REQ_ERR);
	/* The WQE it took fails on its SRQ's CQ; the other stays posted. */
	wc = wait_wc(_metadata, x->cq);
	EXPECT_EQ(55, wc.wr_id);
	EXPECT_STATUS(IBV_WC_LOC_LEN_ERR, wc);
	EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
	expect_no_wc(_metadata, x->cq, QUIET_MS);
}

/*
 * One domain, two processes: a child opens the domain through its file
 * in a context of its own, makes an XRC SRQ there and receives through
 * the parent's target QP, which it also opens by number.
 */
TEST_F(xrc, domain_shared_with_another_process)
{
	int to_parent[2], to_child[2], status;
	uint32_t srqn = 0;
	uint8_t done = 0;
	pid_t pid;
	struct op o = { .opcode = IBV_WR_SEND, .wr_id = 3, .len = 4096 };

	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = open_device(dev_name(variant->one_dev ?
								0 : 1));
		struct ibv_qp_open_attr oa = {
			.comp_mask = IBV_QP_OPEN_ATTR_NUM |
				     IBV_QP_OPEN_ATTR_XRCD |
				     IBV_QP_OPEN_ATTR_TYPE,
			.qp_num = self->tgt->qp_num,
			.qp_type = IBV_QPT_XRC_RECV,
		};
		struct ibv_qp_init_attr init;
		struct ibv_qp_attr qa;
		struct ibv_xrcd *xrcd;
		struct ibv_wc wc;
		struct ibv_qp *qp;
		struct xsrq x = {};
		int fd, ok = 0;

		fd = ctx ? open(self->path, O_RDONLY) : -1;
		xrcd = fd >= 0 ? open_xrcd(ctx, fd, 0) : NULL;
		if (xrcd) {
			oa.xrcd = xrcd;
			qp = ibv_open_qp(ctx, &oa);
			x.pd = ibv_alloc_pd(ctx);
			x.cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
			x.buf = page_buf(BUF_LEN);
			x.srq = x.pd && x.cq ?
				xrc_srq(ctx, xrcd, x.pd, x.cq, 4) : NULL;
			x.mr = x.buf && x.pd ?
			       ibv_reg_mr(x.pd, x.buf, BUF_LEN, ACCESS) : NULL;
			if (qp && x.srq && x.mr &&
			    !ibv_query_qp(qp, &qa, IBV_QP_STATE, &init) &&
			    qa.qp_state == IBV_QPS_RTS &&
			    !ibv_get_srq_num(x.srq, &srqn) &&
			    !post_srq(&x, 99, 1, SLOT))
				ok = 1;
		}
		if (write(to_parent[1], &srqn, sizeof(srqn)) != sizeof(srqn))
			_exit(2);
		if (ok && poll_n(x.cq, &wc, 1, WAIT_MS) == 1 &&
		    wc.status == IBV_WC_SUCCESS && wc.wr_id == 99 &&
		    wc.byte_len == 4096 &&
		    stream_check(x.buf + SLOT, 31, 0, 4096) == 4096)
			ok = 2;
		/* The parent closes its side only after this answer. */
		done = ok;
		if (write(to_parent[1], &done, 1) != 1 ||
		    read(to_child[0], &done, 1) != 1)
			_exit(2);
		_exit(ok == 2 ? 0 : 1);
	}
	ASSERT_EQ(sizeof(srqn), read(to_parent[0], &srqn, sizeof(srqn)));
	ASSERT_NE(0, srqn) TH_LOG("the child's domain, QP or SRQ failed");
	o.srqn = srqn;
	stream_fill(self->buf, 31, 0, 4096);
	ASSERT_EQ(0, post_op(self, &o));
	expect_send(_metadata, self, 3, IBV_WC_SUCCESS);
	ASSERT_EQ(1, read(to_parent[0], &done, 1));
	EXPECT_EQ(2, done) TH_LOG("the child received nothing right");
	ASSERT_EQ(1, write(to_child[1], &done, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	/* The child's handles are gone; the parent's QP is not. */
	EXPECT_EQ(IBV_QPS_RTS, tgt_state(self));
}

/* The XRC verbs' bad inputs. */
TEST_F(xrc, bad_inputs)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->pd,
		.send_cq = self->scq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC,
		.pd = self->s[0].pd,
		.xrcd = self->xrcd,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.xrcd = self->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp_init_attr ra = {
		.send_cq = self->s[0].cq,
		.recv_cq = self->s[0].cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)self->buf, .length = 8,
			       .lkey = self->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.qp_type.xrc.remote_srqn = 1U << 24,
	};
	struct ibv_send_wr *sbad;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_256,
		.dest_qp_num = self->ini->qp_num,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = path_to(&self->eb, &self->ea),
	};
	struct ibv_qp *tgt, *rc;

	/* The domain and the CQ of a live XRC SRQ cannot go. */
	ASSERT_ERRNO(EBUSY, ibv_close_xrcd(self->xrcd));
	ASSERT_ERRNO(EBUSY, ibv_destroy_cq(self->s[0].cq));
	/* An XRC SRQ needs its CQ. */
	ASSERT_NULL_ERRNO(EINVAL, ibv_create_srq_ex(self->cb, &sa));
	/* No receive queue on either XRC QP. */
	ASSERT_ERRNO(EINVAL, ibv_post_recv(self->ini, &rwr, &rbad));
	ASSERT_ERRNO(EINVAL, ibv_post_recv(self->tgt, &rwr, &rbad));
	/* A remote SRQ number is 24 bits. */
	ASSERT_ERRNO(EINVAL, ibv_post_send(self->ini, &swr, &sbad));
	EXPECT_EQ(&swr, sbad);
	/* No IBTA 1.5 ATOMIC WRITE on XRC. */
	ASSERT_NULL_ERRNO(EOPNOTSUPP, ibv_create_qp_ex(self->ca, &qa));
	/* Only a target QP of the domain opens: not an RC QP of B. */
	rc = ibv_create_qp(self->s[0].pd, &ra);
	ASSERT_NE(NULL, rc);
	oa.qp_num = rc->qp_num;
	errno = 0;
	EXPECT_EQ(NULL, ibv_open_qp(self->cb, &oa));
	EXPECT_NE(0, errno);
	EXPECT_EQ(0, ibv_destroy_qp(rc));
	/*
	 * A target has no Q_Key. (uverbs drops the requester attributes an
	 * RC-minded caller gives it: RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC.)
	 */
	tgt = xrc_tgt(self->cb, self->xrcd);
	ASSERT_NE(NULL, tgt);
	ASSERT_EQ(0, qp_to_init(tgt, 0));
	ASSERT_EQ(0, ibv_modify_qp(tgt, &a, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.qkey = 0x1234;
	EXPECT_EQ(EINVAL, ibv_modify_qp(tgt, &a, IBV_QP_STATE |
					IBV_QP_TIMEOUT | IBV_QP_SQ_PSN |
					IBV_QP_QKEY));
	EXPECT_EQ(0, ibv_modify_qp(tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				   IBV_QP_SQ_PSN));
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	/* Nothing above went to the device's data path. */
	EXPECT_EQ(IBV_QPS_RTS, tgt_state(self));
}

TEST_HARNESS_MAIN
