// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bad input to every verb, with the errno or the completion status that
 * the IBTA and the libibverbs conventions require. Runs against any RoCE
 * device pair:
 *
 *   DRAY_TEST_DEV_A (default dray0)    the device of most tests, the
 *                                      requester of the two-QP tests
 *   DRAY_TEST_DEV_B (default dray1)    the responder (may equal DEV_A)
 *   DRAY_TEST_GID_INDEX (default: the RoCEv2 IPv4 GID of each device)
 *
 * Soft-RoCE (rxe) deviates from the IBTA in a few places; those checks
 * accept rxe's behaviour on rxe only and say so in the log (look for
 * "rxe deviation"). The strict expectation is what dray must produce.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define BUF_LEN		(64 * 1024)
#define MR_LEN		(16 * 1024)	/* the main MR: buf[0..MR_LEN) */
#define CQE		128
#define SQ_WR		64
#define RQ_WR		64
#define NSGE		4
#define INLINE		64

#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static int gid_want(void)
{
	const char *v = getenv("DRAY_TEST_GID_INDEX");

	return v && *v ? atoi(v) : -1;
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *scq,
			      struct ibv_cq *rcq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = SQ_WR,
			.max_recv_wr = RQ_WR,
			.max_send_sge = NSGE,
			.max_recv_sge = NSGE,
			.max_inline_data = INLINE,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp && cap)
		*cap = a.cap;
	return qp;
}

/* One device: a context, a PD, a CQ, a buffer with an MR */

FIXTURE(dev) {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct rc_end end;
	bool rxe;
};

FIXTURE_SETUP(dev)
{
	int g;

	self->ctx = open_device(dev_name(0));
	if (!self->ctx)
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	self->rxe = is_rxe(self->ctx);
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->attr));
	ASSERT_EQ(0, ibv_query_port(self->ctx, RC_PORT, &self->port));
	g = pick_gid(self->ctx, gid_want(), &self->end.gid);
	ASSERT_LE(0, g) TH_LOG("no RoCEv2 GID on %s", dev_name(0));
	self->end.gid_index = g;
	self->end.mtu = self->port.active_mtu;
	self->end.psn = 0x1000;
	self->end.rd_atomic = 1;
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->cq = ibv_create_cq(self->ctx, CQE, NULL, NULL, 0);
	ASSERT_NE(NULL, self->cq);
	self->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, self->buf);
	self->mr = ibv_reg_mr(self->pd, self->buf, MR_LEN, ALL_ACCESS);
	ASSERT_NE(NULL, self->mr);
}

FIXTURE_TEARDOWN(dev)
{
	_metadata->trigger = 0;
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->cq)
		EXPECT_EQ(0, ibv_destroy_cq(self->cq));
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->buf)
		munmap(self->buf, BUF_LEN);
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
}

/* Memory registration */

TEST_F(dev, reg_mr_remote_write_needs_local_write)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_mr(self->pd, self->buf, 4096,
					     IBV_ACCESS_REMOTE_WRITE));
}

TEST_F(dev, reg_mr_remote_atomic_needs_local_write)
{
	ASSERT_NULL_ERRNO(EINVAL,
			  ibv_reg_mr(self->pd, self->buf, 4096,
				     IBV_ACCESS_REMOTE_ATOMIC |
				     IBV_ACCESS_REMOTE_READ));
}

TEST_F(dev, reg_mr_unknown_access_bit)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_mr(self->pd, self->buf, 4096,
					     IBV_ACCESS_LOCAL_WRITE | 0x4000));
}

TEST_F(dev, reg_mr_zero_length)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_mr(self->pd, self->buf, 0,
					     IBV_ACCESS_LOCAL_WRITE));
}

/* addr + length wraps around the address space */
TEST_F(dev, reg_mr_length_wraps)
{
	size_t len = (size_t)0 - (uintptr_t)self->buf + 4096;

	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_mr(self->pd, self->buf, len,
					     IBV_ACCESS_LOCAL_WRITE));
}

/* the range runs into memory that is not mapped: nothing to pin */
TEST_F(dev, reg_mr_unmapped)
{
	uint8_t *p = page_buf(2 * 4096);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p + 4096, 4096));
	ASSERT_NULL_ERRNO(EFAULT, ibv_reg_mr(self->pd, p, 2 * 4096,
					     IBV_ACCESS_LOCAL_WRITE));
	munmap(p, 4096);
}

/*
 * Longer than max_mr_size: refused before anything is pinned. The range
 * is a PROT_NONE reservation, so a device that tried to pin it first
 * would fail with EFAULT instead.
 */
TEST_F(dev, reg_mr_over_max_mr_size)
{
	size_t len;
	void *p;

	if (self->attr.max_mr_size >= (1ULL << 46))
		SKIP(return, "max_mr_size %#llx: no such range to reserve",
		     (unsigned long long)self->attr.max_mr_size);
	len = self->attr.max_mr_size + 4096;
	p = mmap(NULL, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_mr(self->pd, p, len,
					     IBV_ACCESS_LOCAL_WRITE));
	munmap(p, len);
}

TEST_F(dev, reg_mr_iova_page_offset_differs)
{
	ASSERT_NULL_ERRNO(EINVAL,
			  ibv_reg_mr_iova(self->pd, self->buf, 4096,
					  (uintptr_t)self->buf + 8,
					  IBV_ACCESS_LOCAL_WRITE));
}

/* CQs */

TEST_F(dev, create_cq_over_max_cqe)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_create_cq(self->ctx,
						self->attr.max_cqe + 1,
						NULL, NULL, 0));
}

TEST_F(dev, create_cq_negative_cqe)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_create_cq(self->ctx, -1, NULL, NULL, 0));
}

TEST_F(dev, create_cq_bad_comp_vector)
{
	ASSERT_NULL_ERRNO(EINVAL, ibv_create_cq(self->ctx, 16, NULL, NULL,
						self->ctx->num_comp_vectors));
}

TEST_F(dev, create_cq_max_cqe_ok)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, self->attr.max_cqe, NULL,
					  NULL, 0);

	ASSERT_NE(NULL, cq) TH_LOG("cqe = max_cqe %d: %s", self->attr.max_cqe,
				   strerror(errno));
	EXPECT_LE(self->attr.max_cqe, cq->cqe);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* QP creation limits */

static struct ibv_qp *qp_with_cap(FIXTURE_DATA(dev) *self,
				  const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->cq,
		.recv_cq = self->cq,
		.qp_type = IBV_QPT_RC,
		.cap = *cap,
	};

	return ibv_create_qp(self->pd, &a);
}

#define CAP_OK { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, \
		 .max_recv_sge = 1 }

TEST_F(dev, create_qp_over_max_send_wr)
{
	struct ibv_qp_cap c = CAP_OK;

	c.max_send_wr = self->attr.max_qp_wr + 1;
	ASSERT_NULL_ERRNO(EINVAL, qp_with_cap(self, &c));
}

TEST_F(dev, create_qp_over_max_recv_wr)
{
	struct ibv_qp_cap c = CAP_OK;

	c.max_recv_wr = self->attr.max_qp_wr + 1;
	ASSERT_NULL_ERRNO(EINVAL, qp_with_cap(self, &c));
}

TEST_F(dev, create_qp_over_max_send_sge)
{
	struct ibv_qp_cap c = CAP_OK;

	c.max_send_sge = self->attr.max_sge + 1;
	ASSERT_NULL_ERRNO(EINVAL, qp_with_cap(self, &c));
}

TEST_F(dev, create_qp_over_max_recv_sge)
{
	struct ibv_qp_cap c = CAP_OK;

	c.max_recv_sge = self->attr.max_sge + 1;
	ASSERT_NULL_ERRNO(EINVAL, qp_with_cap(self, &c));
}

TEST_F(dev, create_qp_over_max_inline)
{
	struct ibv_qp_cap c = CAP_OK;

	c.max_inline_data = 1U << 20;
	ASSERT_NULL_ERRNO(EINVAL, qp_with_cap(self, &c));
}

/*
 * At the limits is fine. A huge max_qp_wr (rxe: 1M) is capped at 16384
 * WRs: the test VM has no memory for a million-entry queue.
 */
TEST_F(dev, create_qp_at_limits_ok)
{
	struct ibv_qp_cap c = {
		.max_send_wr = self->attr.max_qp_wr < 16384 ?
			       self->attr.max_qp_wr : 16384,
		.max_recv_wr = 1,
		.max_send_sge = self->attr.max_sge,
		.max_recv_sge = self->attr.max_sge,
	};
	struct ibv_qp *qp = qp_with_cap(self, &c);

	ASSERT_NE(NULL, qp) TH_LOG("max_send_wr %u, max_sge %d: %s",
				   c.max_send_wr, self->attr.max_sge,
				   strerror(errno));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* QP state machine */

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	return ibv_modify_qp(qp, a, mask);
}

#define INIT_MASK	(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
			 IBV_QP_ACCESS_FLAGS)
#define RTR_MASK	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK	(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | \
			 IBV_QP_MAX_QP_RD_ATOMIC)

static void init_attr(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->port_num = RC_PORT;
	a->qp_access_flags = ALL_ACCESS;
}

/* RTR attributes towards the QP itself (a loopback connection) */
static void rtr_attr(FIXTURE_DATA(dev) *self, struct ibv_qp *qp,
		     struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = self->end.mtu;
	a->dest_qp_num = qp->qp_num;
	a->rq_psn = self->end.psn;
	a->max_dest_rd_atomic = 1;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = self->end.gid;
	a->ah_attr.grh.sgid_index = (uint8_t)self->end.gid_index;
	a->ah_attr.grh.hop_limit = 1;
	a->ah_attr.port_num = RC_PORT;
}

static void rts_attr(FIXTURE_DATA(dev) *self, struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->sq_psn = self->end.psn;
	a->max_rd_atomic = 1;
}

#define EXPECT_QP_STATE(_want, _qp) do {				\
	int __s = qp_state(_qp);					\
	EXPECT_EQ((_want), __s)						\
		TH_LOG("QP state %s, expected %s", qp_state_str(__s),	\
		       qp_state_str(_want));				\
} while (0)

/* a fresh QP brought to state `to` through the valid transitions */
static struct ibv_qp *qp_in(struct __test_metadata *_metadata,
			    FIXTURE_DATA(dev) *self, enum ibv_qp_state to)
{
	struct ibv_qp *qp = make_qp(self->pd, self->cq, self->cq, NULL);
	struct ibv_qp_attr a;

	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	if (to == IBV_QPS_RESET)
		return qp;
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	if (to == IBV_QPS_INIT)
		return qp;
	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTR_MASK));
	if (to == IBV_QPS_RTR)
		return qp;
	rts_attr(self, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTS_MASK));
	if (to == IBV_QPS_RTS)
		return qp;
	ASSERT_ERRNO(0, qp_to_state(qp, to));
	return qp;
}

TEST_F(dev, qp_valid_state_walk)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	/* INIT -> INIT may change the access flags */
	a.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	ASSERT_ERRNO(0, modify(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTR_MASK));
	EXPECT_QP_STATE(IBV_QPS_RTR, qp);
	rts_attr(self, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTS_MASK));
	EXPECT_QP_STATE(IBV_QPS_RTS, qp);
	/* RTS -> RTS may change the retry and timeout parameters */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.min_rnr_timer = 5;
	ASSERT_ERRNO(0, modify(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
	EXPECT_QP_STATE(IBV_QPS_RTS, qp);
	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_ERR));
	EXPECT_QP_STATE(IBV_QPS_ERR, qp);
	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_RESET));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* RTS -> SQD -> RTS (send queue drain) */
TEST_F(dev, qp_sqd_and_back)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RTS);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	uint64_t end;

	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_SQD));
	EXPECT_QP_STATE(IBV_QPS_SQD, qp);
	/*
	 * Back to RTS only once the drain finished (IBTA: not while
	 * sq_draining); with nothing in the send queue that is at once.
	 */
	end = now_us() + WAIT_MS * 1000ULL;
	do {
		memset(&a, 0, sizeof(a));
		ASSERT_EQ(0, ibv_query_qp(qp, &a, IBV_QP_STATE, &init));
		if (!a.sq_draining)
			break;
		usleep(1000);
	} while (now_us() < end);
	ASSERT_EQ(0, a.sq_draining) TH_LOG("still draining an empty queue");
	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_RTS));
	EXPECT_QP_STATE(IBV_QPS_RTS, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * Every state but RESET can go to ERR; every state can go to RESET. The
 * IBTA state diagram has no RESET -> ERR transition.
 */
TEST_F(dev, qp_any_state_to_err_and_reset)
{
	static const enum ibv_qp_state states[] = {
		IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
		IBV_QPS_SQD, IBV_QPS_ERR,
	};
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		struct ibv_qp *qp = qp_in(_metadata, self, states[i]);
		int want = states[i] == IBV_QPS_RESET ? EINVAL : 0;

		EXPECT_EQ(want, qp_to_state(qp, IBV_QPS_ERR))
			TH_LOG("%s -> ERR", qp_state_str(states[i]));
		EXPECT_QP_STATE(want ? states[i] : IBV_QPS_ERR, qp);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
		qp = qp_in(_metadata, self, states[i]);
		EXPECT_EQ(0, qp_to_state(qp, IBV_QPS_RESET))
			TH_LOG("%s -> RESET", qp_state_str(states[i]));
		EXPECT_QP_STATE(IBV_QPS_RESET, qp);
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	}
}

TEST_F(dev, qp_reset_to_rts)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	rts_attr(self, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_reset_to_rtr)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_reset_to_init_missing_attrs)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	init_attr(&a);
	/* no ACCESS_FLAGS */
	ASSERT_ERRNO(EINVAL, modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT));
	/* state only */
	ASSERT_ERRNO(EINVAL, modify(qp, &a, IBV_QP_STATE));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_reset_to_init_extra_attr)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	init_attr(&a);
	a.sq_psn = 1;
	ASSERT_ERRNO(EINVAL, modify(qp, &a, INIT_MASK | IBV_QP_SQ_PSN));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_reset_to_init_bad_port)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	init_attr(&a);
	a.port_num = 2;
	ASSERT_ERRNO(EINVAL, modify(qp, &a, INIT_MASK));
	a.port_num = 0;
	ASSERT_ERRNO(EINVAL, modify(qp, &a, INIT_MASK));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_reset_to_init_bad_pkey_index)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_qp_attr a;

	init_attr(&a);
	a.pkey_index = (uint16_t)self->port.pkey_tbl_len;
	verb_ret = modify(qp, &a, INIT_MASK);
	if (self->rxe && !verb_ret) {
		TH_LOG("rxe deviation: pkey_index %u (table %d) accepted",
		       a.pkey_index, self->port.pkey_tbl_len);
		goto out;
	}
	ASSERT_ERRNO(EINVAL, verb_ret);
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
out:
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_init_to_rts)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;

	rts_attr(self, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_init_to_rtr_missing_attrs)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;

	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK & ~IBV_QP_AV));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK & ~IBV_QP_DEST_QPN));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK & ~IBV_QP_PATH_MTU));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK & ~IBV_QP_RQ_PSN));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* RoCE needs a GRH: an address without one is refused */
TEST_F(dev, qp_init_to_rtr_no_grh)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;

	rtr_attr(self, qp, &a);
	a.ah_attr.is_global = 0;
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTR_MASK));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * A source GID index with no GID: the RDMA core refuses it, with EINVAL
 * past the end of the table and ENODATA for an empty entry inside it.
 */
static void rtr_with_sgid(struct __test_metadata *_metadata,
			  FIXTURE_DATA(dev) *self, int idx, int want)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;

	rtr_attr(self, qp, &a);
	a.ah_attr.grh.sgid_index = (uint8_t)idx;
	TH_LOG("sgid_index %d", idx);
	ASSERT_ERRNO(want, modify(qp, &a, RTR_MASK));
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_init_to_rtr_sgid_index_past_table)
{
	if (self->port.gid_tbl_len > 255)
		SKIP(return, "gid_tbl_len %d: every u8 index is inside",
		     self->port.gid_tbl_len);
	rtr_with_sgid(_metadata, self, self->port.gid_tbl_len, EINVAL);
}

TEST_F(dev, qp_init_to_rtr_sgid_index_empty)
{
	struct ibv_gid_entry e;
	int idx, n = self->port.gid_tbl_len < 256 ? self->port.gid_tbl_len : 256;

	for (idx = 0; idx < n; idx++)
		if (ibv_query_gid_ex(self->ctx, RC_PORT, idx, &e, 0))
			break;
	if (idx == n)
		SKIP(return, "no empty GID entry");
	rtr_with_sgid(_metadata, self, idx, ENODATA);
}

TEST_F(dev, qp_init_to_rtr_over_max_dest_rd_atomic)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;

	if (self->attr.max_qp_rd_atom >= 255)
		SKIP(goto out, "max_qp_rd_atom %d", self->attr.max_qp_rd_atom);
	rtr_attr(self, qp, &a);
	a.max_dest_rd_atomic = (uint8_t)(self->attr.max_qp_rd_atom + 1);
	verb_ret = modify(qp, &a, RTR_MASK);
	if (self->rxe && !verb_ret) {
		TH_LOG("rxe deviation: max_dest_rd_atomic %u > max_qp_rd_atom %d accepted",
		       a.max_dest_rd_atomic, self->attr.max_qp_rd_atom);
		goto out;
	}
	ASSERT_ERRNO(EINVAL, verb_ret);
	EXPECT_QP_STATE(IBV_QPS_INIT, qp);
out:
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_rtr_to_rts_missing_attrs)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RTR);
	struct ibv_qp_attr a;

	rts_attr(self, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK & ~IBV_QP_SQ_PSN));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK & ~IBV_QP_TIMEOUT));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, IBV_QP_STATE));
	EXPECT_QP_STATE(IBV_QPS_RTR, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_rtr_to_rts_over_max_rd_atomic)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RTR);
	struct ibv_qp_attr a;

	if (self->attr.max_qp_init_rd_atom >= 255)
		SKIP(goto out, "max_qp_init_rd_atom %d",
		     self->attr.max_qp_init_rd_atom);
	rts_attr(self, &a);
	a.max_rd_atomic = (uint8_t)(self->attr.max_qp_init_rd_atom + 1);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK));
	EXPECT_QP_STATE(IBV_QPS_RTR, qp);
out:
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, qp_err_to_rts)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_ERR);
	struct ibv_qp_attr a;

	rts_attr(self, &a);
	ASSERT_ERRNO(EINVAL, modify(qp, &a, RTS_MASK));
	ASSERT_ERRNO(EINVAL, modify(qp, &a, IBV_QP_STATE));
	EXPECT_QP_STATE(IBV_QPS_ERR, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Posting in states that do not allow it */

static void sge_of(FIXTURE_DATA(dev) *self, struct ibv_sge *sge, size_t off,
		   uint32_t len)
{
	sge->addr = (uintptr_t)self->buf + off;
	sge->length = len;
	sge->lkey = self->mr->lkey;
}

/*
 * IBTA: a send WR posted before RTS is an immediate error. libibverbs:
 * the error is returned and *bad_wr points at the WR that failed.
 */
static void post_send_refused(struct __test_metadata *_metadata,
			      FIXTURE_DATA(dev) *self, enum ibv_qp_state st)
{
	struct ibv_qp *qp = qp_in(_metadata, self, st);
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	sge_of(self, &sge, 0, 64);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(qp, &wr, &bad);
	EXPECT_NE(0, ret) TH_LOG("post_send in %s accepted", qp_state_str(st));
	EXPECT_EQ(EINVAL, ret) TH_LOG("post_send in %s: %s", qp_state_str(st),
				      strerror(ret));
	if (self->rxe && !bad)
		TH_LOG("rxe deviation: post_send error leaves bad_wr NULL");
	else
		EXPECT_EQ(&wr, bad) TH_LOG("bad_wr does not point at the WR");
	expect_no_wc(_metadata, self->cq, 200);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, post_send_in_reset)
{
	post_send_refused(_metadata, self, IBV_QPS_RESET);
}

TEST_F(dev, post_send_in_init)
{
	post_send_refused(_metadata, self, IBV_QPS_INIT);
}

TEST_F(dev, post_send_in_rtr)
{
	post_send_refused(_metadata, self, IBV_QPS_RTR);
}

TEST_F(dev, post_recv_in_reset)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RESET);
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	sge_of(self, &sge, 0, 64);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = ibv_post_recv(qp, &wr, &bad);
	EXPECT_EQ(EINVAL, ret) TH_LOG("post_recv in RESET: %s",
				      ret ? strerror(ret) : "accepted");
	if (self->rxe && !bad)
		TH_LOG("rxe deviation: post_recv error leaves bad_wr NULL");
	else
		EXPECT_EQ(&wr, bad) TH_LOG("bad_wr does not point at the WR");
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Receives may be posted from INIT on; they wait there. */
TEST_F(dev, post_recv_in_init_ok)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;

	sge_of(self, &sge, 0, 64);
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ASSERT_ERRNO(0, ibv_post_recv(qp, &wr, &bad));
	expect_no_wc(_metadata, self->cq, 200);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * In ERR, posted WRs complete with a flush error: nothing is lost. rxe
 * 6.1 leaves WRs posted in ERR in the queue (no completion ever): skipped
 * there.
 */
TEST_F(dev, post_send_in_err_flushes)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_ERR);
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	sge_of(self, &sge, 0, 64);
	wr.wr_id = 0x55;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_ERRNO(0, ibv_post_send(qp, &wr, &bad));
	if (self->rxe && !poll_n(self->cq, &wc, 1, 2000)) {
		EXPECT_EQ(0, ibv_destroy_qp(qp));
		SKIP(return, "rxe deviation: a send posted in ERR is not flushed");
	}
	if (!self->rxe)
		wc = wait_wc(_metadata, self->cq);
	EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
	EXPECT_EQ(0x55ULL, wc.wr_id);
	EXPECT_EQ(qp->qp_num, wc.qp_num);
	expect_no_wc(_metadata, self->cq, 200);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, post_recv_in_err_flushes)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_ERR);
	struct ibv_recv_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;

	sge_of(self, &sge, 0, 64);
	wr.wr_id = 0x77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ASSERT_ERRNO(0, ibv_post_recv(qp, &wr, &bad));
	if (self->rxe && !poll_n(self->cq, &wc, 1, 2000)) {
		EXPECT_EQ(0, ibv_destroy_qp(qp));
		SKIP(return, "rxe deviation: a receive posted in ERR is not flushed");
	}
	if (!self->rxe)
		wc = wait_wc(_metadata, self->cq);
	EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
	EXPECT_EQ(0x77ULL, wc.wr_id);
	EXPECT_EQ(qp->qp_num, wc.qp_num);
	expect_no_wc(_metadata, self->cq, 200);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Receives waiting when the QP goes to ERR are flushed. */
TEST_F(dev, recvs_flushed_on_err)
{
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_RTR);
	struct ibv_recv_wr wr[3] = {}, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i;

	sge_of(self, &sge, 0, 64);
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	ASSERT_ERRNO(0, ibv_post_recv(qp, wr, &bad));
	expect_no_wc(_metadata, self->cq, 100);
	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_ERR));
	for (i = 0; i < 3; i++) {
		wc = wait_wc(_metadata, self->cq);
		EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
		EXPECT_EQ((uint64_t)(100 + i), wc.wr_id);
	}
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Bad WRs are refused at post time, *bad_wr at the first bad one */

static void post_send_bad_wr(struct __test_metadata *_metadata,
			     FIXTURE_DATA(dev) *self, struct ibv_qp *qp,
			     struct ibv_send_wr *bad_one, int want)
{
	struct ibv_send_wr good = {}, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int ret;

	/* a good WR first: it is posted, the chain stops at the bad one */
	sge_of(self, &sge, 0, 8);
	good.wr_id = 1;
	good.sg_list = &sge;
	good.num_sge = 1;
	good.opcode = IBV_WR_RDMA_WRITE;
	good.send_flags = IBV_SEND_SIGNALED;
	good.wr.rdma.remote_addr = (uintptr_t)self->buf + 4096;
	good.wr.rdma.rkey = self->mr->rkey;
	good.next = bad_one;
	ret = ibv_post_send(qp, &good, &bad);
	EXPECT_EQ(want, ret) TH_LOG("post_send: %s, expected %s",
				    ret ? strerror(ret) : "success",
				    strerror(want));
	EXPECT_EQ(bad_one, bad) TH_LOG("bad_wr does not point at the bad WR");
	wc = wait_wc(_metadata, self->cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(1ULL, wc.wr_id);
	expect_no_wc(_metadata, self->cq, 200);
}

TEST_F(dev, post_send_too_many_sge)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(self->pd, self->cq, self->cq, &cap);
	struct ibv_sge sge[64];
	struct ibv_send_wr wr = {};
	struct ibv_qp_attr a;
	unsigned int i;

	ASSERT_NE(NULL, qp);
	ASSERT_GT(64U, cap.max_send_sge);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTR_MASK));
	rts_attr(self, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTS_MASK));
	for (i = 0; i < 64; i++)
		sge_of(self, &sge[i], i, 1);
	wr.wr_id = 2;
	wr.sg_list = sge;
	wr.num_sge = (int)cap.max_send_sge + 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf + 8192;
	wr.wr.rdma.rkey = self->mr->rkey;
	post_send_bad_wr(_metadata, self, qp, &wr, EINVAL);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, post_send_inline_too_long)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(self->pd, self->cq, self->cq, &cap);
	struct ibv_send_wr wr = {};
	struct ibv_qp_attr a;
	struct ibv_sge sge;

	ASSERT_NE(NULL, qp);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	rtr_attr(self, qp, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTR_MASK));
	rts_attr(self, &a);
	ASSERT_ERRNO(0, modify(qp, &a, RTS_MASK));
	sge_of(self, &sge, 0, cap.max_inline_data + 1);
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)self->buf + 8192;
	wr.wr.rdma.rkey = self->mr->rkey;
	post_send_bad_wr(_metadata, self, qp, &wr, EINVAL);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

TEST_F(dev, post_recv_too_many_sge)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(self->pd, self->cq, self->cq, &cap);
	struct ibv_recv_wr wr[2] = {}, *bad = NULL;
	struct ibv_sge sge[64];
	struct ibv_qp_attr a;
	unsigned int i;

	ASSERT_NE(NULL, qp);
	ASSERT_GT(64U, cap.max_recv_sge);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	for (i = 0; i < 64; i++)
		sge_of(self, &sge[i], 64 * i, 64);
	wr[0].wr_id = 1;
	wr[0].sg_list = sge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].sg_list = sge;
	wr[1].num_sge = (int)cap.max_recv_sge + 1;
	ASSERT_ERRNO(EINVAL, ibv_post_recv(qp, wr, &bad));
	EXPECT_EQ(&wr[1], bad);
	/* the first one was posted: it is flushed now */
	ASSERT_ERRNO(0, qp_to_state(qp, IBV_QPS_ERR));
	{
		struct ibv_wc wc = wait_wc(_metadata, self->cq);

		EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
		EXPECT_EQ(1ULL, wc.wr_id);
	}
	expect_no_wc(_metadata, self->cq, 200);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* More receives than the queue holds: ENOMEM at the first that does not fit */
TEST_F(dev, post_recv_queue_full)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(self->pd, self->cq, self->cq, &cap);
	struct ibv_recv_wr *wr, *bad = NULL;
	struct ibv_qp_attr a;
	struct ibv_sge sge;
	unsigned int i, n;
	int ret;

	ASSERT_NE(NULL, qp);
	init_attr(&a);
	ASSERT_ERRNO(0, modify(qp, &a, INIT_MASK));
	n = cap.max_recv_wr + 64;
	wr = calloc(n, sizeof(*wr));
	ASSERT_NE(NULL, wr);
	sge_of(self, &sge, 0, 64);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_recv(qp, wr, &bad);
	EXPECT_EQ(ENOMEM, ret) TH_LOG("post_recv of %u (cap %u): %s", n,
				      cap.max_recv_wr,
				      ret ? strerror(ret) : "success");
	ASSERT_NE(NULL, bad);
	EXPECT_LE(cap.max_recv_wr, (unsigned int)(bad - wr))
		TH_LOG("refused at %zd, the queue holds %u", bad - wr,
		       cap.max_recv_wr);
	free(wr);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Objects still in use */

TEST_F(dev, dealloc_pd_with_mr)
{
	ASSERT_ERRNO(EBUSY, ibv_dealloc_pd(self->pd));
	/* still usable */
	{
		struct ibv_mr *mr = ibv_reg_mr(self->pd, self->buf + MR_LEN,
					       4096, IBV_ACCESS_LOCAL_WRITE);

		ASSERT_NE(NULL, mr);
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	}
}

TEST_F(dev, dealloc_pd_with_qp)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_qp *qp;

	ASSERT_NE(NULL, pd);
	qp = make_qp(pd, self->cq, self->cq, NULL);
	ASSERT_NE(NULL, qp);
	ASSERT_ERRNO(EBUSY, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(dev, dealloc_pd_with_ah)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = {
			.dgid = self->end.gid,
			.sgid_index = (uint8_t)self->end.gid_index,
			.hop_limit = 1,
		},
		.port_num = RC_PORT,
	};
	struct ibv_ah *ah;

	ASSERT_NE(NULL, pd);
	ah = ibv_create_ah(pd, &aa);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
	ASSERT_ERRNO(EBUSY, ibv_dealloc_pd(pd));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	EXPECT_EQ(0, ibv_dealloc_pd(pd));
}

TEST_F(dev, destroy_cq_with_qp)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;

	ASSERT_NE(NULL, cq);
	qp = make_qp(self->pd, self->cq, cq, NULL);	/* as receive CQ */
	ASSERT_NE(NULL, qp);
	ASSERT_ERRNO(EBUSY, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/* Parent domains and their allocators (ibv_alloc_parent_domain) */

#define PD_MAX_BUFS	8

/* A recording allocator: what it was asked for, and what it freed. */
struct pd_rec {
	int nalloc, nfree;
	void *ptr[PD_MAX_BUFS];
	uint64_t type[PD_MAX_BUFS];
	size_t size[PD_MAX_BUFS], align[PD_MAX_BUFS];
	bool freed[PD_MAX_BUFS];
	int bad_free;		/* frees of a pointer it never gave */
	int mode;		/* 0 memalign, 1 NULL, 2 misaligned */
};

static void *pd_rec_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			  size_t alignment, uint64_t resource_type)
{
	struct pd_rec *r = pd_context;
	void *p = NULL;

	(void)pd;
	if (r->mode == 1 || r->nalloc == PD_MAX_BUFS)
		return NULL;
	if (posix_memalign(&p, alignment, size + alignment))
		return NULL;
	if (r->mode == 2)
		p = (uint8_t *)p + 64;
	r->ptr[r->nalloc] = p;
	r->type[r->nalloc] = resource_type;
	r->size[r->nalloc] = size;
	r->align[r->nalloc] = alignment;
	r->nalloc++;
	return p;
}

static void pd_rec_free(struct ibv_pd *pd, void *pd_context, void *ptr,
			uint64_t resource_type)
{
	struct pd_rec *r = pd_context;
	int i;

	(void)pd;
	for (i = 0; i < r->nalloc; i++) {
		if (r->ptr[i] != ptr || r->freed[i] ||
		    r->type[i] != resource_type)
			continue;
		r->freed[i] = true;
		r->nfree++;
		free(r->mode == 2 ? (uint8_t *)ptr - 64 : ptr);
		return;
	}
	r->bad_free++;
}

static struct ibv_pd *parent_of(FIXTURE_DATA(dev) *self, struct pd_rec *r)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = self->pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pd_rec_alloc,
		.free = pd_rec_free,
		.pd_context = r,
	};

	return ibv_alloc_parent_domain(self->ctx, &a);
}

static struct ibv_cq_ex *cq_on(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = pd,
	};

	return ibv_create_cq_ex(ctx, &a);
}

/*
 * The rings of a CQ, a QP (send and receive queue) and an SRQ made on a
 * parent domain come from its allocator, page aligned, and go back to
 * its free(); neither the parent domain nor its PD can go while in use.
 */
TEST_F(dev, parent_domain_allocators_make_the_rings)
{
	struct pd_rec r = {};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_qp_cap cap = CAP_OK;
	long page = sysconf(_SC_PAGESIZE);
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_pd *par;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint64_t seen = 0;
	int i;

	par = parent_of(self, &r);
	if (!par && errno == EOPNOTSUPP)
		SKIP(return, "no parent domains on %s", dev_name(0));
	ASSERT_NE(NULL, par) TH_LOG("alloc_parent_domain: %s", strerror(errno));
	EXPECT_EQ(self->ctx, par->context);
	cqx = cq_on(self->ctx, par);
	ASSERT_NE(NULL, cqx) TH_LOG("create_cq_ex: %s", strerror(errno));
	qp = make_qp(par, ibv_cq_ex_to_cq(cqx), ibv_cq_ex_to_cq(cqx), &cap);
	ASSERT_NE(NULL, qp) TH_LOG("create_qp: %s", strerror(errno));
	EXPECT_EQ(par, qp->pd);
	srq = ibv_create_srq(par, &sa);
	ASSERT_NE(NULL, srq) TH_LOG("create_srq: %s", strerror(errno));
	/* Other objects take the parent domain as their PD. */
	mr = ibv_reg_mr(par, self->buf, MR_LEN, ALL_ACCESS);
	ASSERT_NE(NULL, mr) TH_LOG("reg_mr: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, qp_to_init(qp, ALL_ACCESS));

	/* CQ ring, send queue, receive queue, SRQ: four, page aligned. */
	ASSERT_EQ(4, r.nalloc);
	for (i = 0; i < r.nalloc; i++) {
		EXPECT_EQ((size_t)page, r.align[i]);
		EXPECT_EQ(0U, (uintptr_t)r.ptr[i] % (uintptr_t)page);
		EXPECT_EQ(0U, r.size[i] % (size_t)page);
		EXPECT_LT(0U, r.size[i]);
		seen |= 1ULL << (r.type[i] & 63);
	}
	EXPECT_EQ(4, __builtin_popcountll(seen))
		TH_LOG("each ring has its own resource type");

	ASSERT_ERRNO(EBUSY, ibv_dealloc_pd(par));
	ASSERT_ERRNO(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	EXPECT_EQ(4, r.nfree);
	EXPECT_EQ(0, r.bad_free);
	EXPECT_EQ(0, ibv_dealloc_pd(par));
}

/* Bad parent domains, and allocators that fail or misbehave. */
TEST_F(dev, parent_domain_bad_input)
{
	struct ibv_parent_domain_init_attr a = { .pd = self->pd };
	struct ibv_qp_cap cap = CAP_OK;
	struct pd_rec r = {};
	struct ibv_pd *par, *p2;

	par = ibv_alloc_parent_domain(self->ctx, &a);
	if (!par && errno == EOPNOTSUPP)
		SKIP(return, "no parent domains on %s", dev_name(0));
	ASSERT_NE(NULL, par);
	/* Without allocators the default ones make the rings. */
	{
		struct ibv_cq_ex *cqx = cq_on(self->ctx, par);

		ASSERT_NE(NULL, cqx);
		EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	}
	/* A parent domain of a parent domain, an unknown bit, half a pair. */
	a.pd = par;
	ASSERT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->ctx, &a));
	a.pd = self->pd;
	a.comp_mask = 1U << 7;
	ASSERT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->ctx, &a));
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	a.alloc = pd_rec_alloc;
	ASSERT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->ctx, &a));
	a.pd = NULL;
	a.comp_mask = 0;
	ASSERT_NULL_ERRNO(EINVAL, ibv_alloc_parent_domain(self->ctx, &a));
	/* A CQ's MASK_PD must name a parent domain. */
	ASSERT_NULL_ERRNO(EINVAL, cq_on(self->ctx, self->pd));
	ASSERT_NULL_ERRNO(EINVAL, cq_on(self->ctx, NULL));

	/* An allocator that gives nothing: ENOMEM, nothing to free. */
	r.mode = 1;
	p2 = parent_of(self, &r);
	ASSERT_NE(NULL, p2);
	ASSERT_NULL_ERRNO(ENOMEM, cq_on(self->ctx, p2));
	ASSERT_NULL_ERRNO(ENOMEM, make_qp(p2, self->cq, self->cq, &cap));
	EXPECT_EQ(0, r.nfree);
	/* A buffer not page aligned is refused and given back. */
	r.mode = 2;
	ASSERT_NULL_ERRNO(EINVAL, cq_on(self->ctx, p2));
	EXPECT_EQ(1, r.nalloc);
	EXPECT_EQ(1, r.nfree);
	EXPECT_EQ(0, r.bad_free);
	EXPECT_EQ(0, ibv_dealloc_pd(p2));
	EXPECT_EQ(0, ibv_dealloc_pd(par));
}

/* Address handles */

TEST_F(dev, create_ah_no_grh)
{
	struct ibv_ah_attr aa = { .is_global = 0, .port_num = RC_PORT };

	ASSERT_NULL_ERRNO(EINVAL, ibv_create_ah(self->pd, &aa));
}

TEST_F(dev, create_ah_bad_port)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = {
			.dgid = self->end.gid,
			.sgid_index = (uint8_t)self->end.gid_index,
			.hop_limit = 1,
		},
		.port_num = 2,
	};

	ASSERT_NULL_ERRNO(EINVAL, ibv_create_ah(self->pd, &aa));
}

/*
 * A flow label is 20 bits; the rest is ignored, as HCAs do (UCX asks for
 * 0xffffffff). The AH is made; so is an RTR path with one.
 */
TEST_F(dev, flow_label_upper_bits_ignored)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = {
			.dgid = self->end.gid,
			.sgid_index = (uint8_t)self->end.gid_index,
			.hop_limit = 1,
			.flow_label = 0xffffffff,
		},
		.port_num = RC_PORT,
	};
	struct ibv_qp *qp = qp_in(_metadata, self, IBV_QPS_INIT);
	struct ibv_qp_attr a;
	struct ibv_ah *ah;

	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah) TH_LOG("create_ah: %s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
	rtr_attr(self, qp, &a);
	a.ah_attr.grh.flow_label = 0xfff12345;
	ASSERT_ERRNO(0, modify(qp, &a, RTR_MASK));
	EXPECT_QP_STATE(IBV_QPS_RTR, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* Two connected QPs: A (requester) on DEV_A, B (responder) on DEV_B */

struct end {
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
	struct rc_end rc;
	uint8_t *buf;
	struct ibv_mr *mr;	/* all rights, buf[0..MR_LEN) */
	struct ibv_mr *mr2;	/* pd2, all rights, buf[MR_LEN..2*MR_LEN) */
};

FIXTURE(pair) {
	struct end a, b;
	struct rc_params p;
	bool rxe;
};

static void end_setup(struct __test_metadata *_metadata, struct end *e,
		      int which, uint32_t psn)
{
	int g;

	e->ctx = open_device(dev_name(which));
	ASSERT_NE(NULL, e->ctx) TH_LOG("device %s: %s", dev_name(which),
				       strerror(errno));
	ASSERT_EQ(0, ibv_query_device(e->ctx, &e->attr));
	ASSERT_EQ(0, ibv_query_port(e->ctx, RC_PORT, &e->port));
	g = pick_gid(e->ctx, gid_want(), &e->rc.gid);
	ASSERT_LE(0, g);
	e->rc.gid_index = g;
	e->rc.mtu = e->port.active_mtu;
	e->rc.psn = psn;
	e->rc.rd_atomic = 4;
	e->pd = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd);
	e->pd2 = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd2);
	e->ch = ibv_create_comp_channel(e->ctx);
	ASSERT_NE(NULL, e->ch);
	e->cq = ibv_create_cq(e->ctx, CQE, NULL, e->ch, 0);
	ASSERT_NE(NULL, e->cq);
	e->qp = make_qp(e->pd, e->cq, e->cq, &e->cap);
	ASSERT_NE(NULL, e->qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	e->rc.qpn = e->qp->qp_num;
	e->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, e->buf);
	e->mr = ibv_reg_mr(e->pd, e->buf, MR_LEN, ALL_ACCESS);
	ASSERT_NE(NULL, e->mr);
	e->mr2 = ibv_reg_mr(e->pd2, e->buf + MR_LEN, MR_LEN, ALL_ACCESS);
	ASSERT_NE(NULL, e->mr2);
}

static void end_teardown(struct __test_metadata *_metadata, struct end *e)
{
	if (e->qp)
		EXPECT_EQ(0, ibv_destroy_qp(e->qp));
	if (e->mr2)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr2));
	if (e->mr)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr));
	if (e->cq)
		EXPECT_EQ(0, ibv_destroy_cq(e->cq));
	if (e->ch)
		EXPECT_EQ(0, ibv_destroy_comp_channel(e->ch));
	if (e->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd2));
	if (e->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd));
	if (e->buf)
		munmap(e->buf, BUF_LEN);
	if (e->ctx)
		EXPECT_EQ(0, ibv_close_device(e->ctx));
}

/* (Re)connect A and B with the parameters in self->p. */
static void pair_connect(struct __test_metadata *_metadata,
			 FIXTURE_DATA(pair) *self)
{
	const char *step;
	int err;

	ASSERT_EQ(0, qp_to_state(self->a.qp, IBV_QPS_RESET));
	ASSERT_EQ(0, qp_to_state(self->b.qp, IBV_QPS_RESET));
	err = rc_connect(self->a.qp, &self->a.rc, &self->b.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("A: %s: %s", step, strerror(err));
	err = rc_connect(self->b.qp, &self->b.rc, &self->a.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("B: %s: %s", step, strerror(err));
}

FIXTURE_SETUP(pair)
{
	struct ibv_context *probe = open_device(dev_name(0));

	if (!probe)
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	self->rxe = is_rxe(probe);
	ibv_close_device(probe);
	probe = open_device(dev_name(1));
	if (!probe)
		SETUP_SKIP("device %s: %s", dev_name(1), strerror(errno));
	ibv_close_device(probe);

	end_setup(_metadata, &self->a, 0, 0x100);
	end_setup(_metadata, &self->b, 1, 0xfffff0);	/* wraps soon */
	rc_params_default(&self->p);
	pair_connect(_metadata, self);
}

FIXTURE_TEARDOWN(pair)
{
	_metadata->trigger = 0;
	end_teardown(_metadata, &self->a);
	end_teardown(_metadata, &self->b);
}

static int post1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		 uint64_t laddr, uint32_t len, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
		     op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int recv1(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr,
		 uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = {}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

#define A_BUF(off)	((uintptr_t)self->a.buf + (off))
#define B_BUF(off)	((uintptr_t)self->b.buf + (off))

/*
 * After an error completion on A: A's QP is in ERR and a WR posted now
 * is flushed.
 */
static void expect_a_in_error(struct __test_metadata *_metadata,
			      FIXTURE_DATA(pair) *self)
{
	struct ibv_wc wc;

	EXPECT_QP_STATE(IBV_QPS_ERR, self->a.qp);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xf1, A_BUF(0), 8,
			      self->a.mr->lkey, B_BUF(0), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
	EXPECT_EQ(0xf1ULL, wc.wr_id);
}

/* One WR from A completing with status want; B's memory unchanged. */
static void a_op_fails_rxe(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pair) *self, enum ibv_wr_opcode op,
			   uint64_t laddr, uint32_t len, uint32_t lkey,
			   uint64_t raddr, uint32_t rkey,
			   enum ibv_wc_status want, int rxe_alt)
{
	struct ibv_wc wc;

	memset(self->b.buf, 0x5b, BUF_LEN);
	memset(self->a.buf, 0x5a, BUF_LEN);
	ASSERT_ERRNO(0, post1(self->a.qp, op, 0xe1, laddr, len, lkey, raddr,
			      rkey));
	wc = wait_wc(_metadata, self->a.cq);
	if (self->rxe && rxe_alt >= 0 && wc.status == (enum ibv_wc_status)rxe_alt)
		TH_LOG("rxe deviation: status %s, IBTA says %s",
		       ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
	else
		EXPECT_STATUS(want, wc);
	EXPECT_EQ(0xe1ULL, wc.wr_id);
	EXPECT_EQ(self->a.qp->qp_num, wc.qp_num);
	EXPECT_EQ(BUF_LEN, first_not(self->b.buf, BUF_LEN, 0x5b))
		TH_LOG("the responder's memory changed");
	expect_a_in_error(_metadata, self);
}

static void a_op_fails(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pair) *self, enum ibv_wr_opcode op,
		       uint64_t laddr, uint32_t len, uint32_t lkey,
		       uint64_t raddr, uint32_t rkey, enum ibv_wc_status want)
{
	a_op_fails_rxe(_metadata, self, op, laddr, len, lkey, raddr, rkey,
		       want, -1);
}

TEST_F(pair, sanity_send_write_read_atomic)
{
	struct ibv_wc wc;
	uint64_t v;

	memset(self->a.buf, 0x11, MR_LEN);
	memset(self->b.buf, 0x22, MR_LEN);
	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 1, A_BUF(0), 100,
			      self->a.mr->lkey, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(100U, wc.byte_len);
	EXPECT_EQ(7ULL, wc.wr_id);
	EXPECT_EQ(100U, first_not(self->b.buf, 256, 0x11));

	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 2, A_BUF(0), 300,
			      self->a.mr->lkey, B_BUF(1000), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(300U, first_not(self->b.buf + 1000, 400, 0x11));

	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 3, A_BUF(5000), 64,
			      self->a.mr->lkey, B_BUF(3000), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(64U, first_not(self->a.buf + 5000, 80, 0x22));

	v = 1;
	memcpy(self->b.buf + 4096, &v, 8);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_ATOMIC_CMP_AND_SWP, 4,
			      A_BUF(6000), 8, self->a.mr->lkey, B_BUF(4096),
			      self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	memcpy(&v, self->b.buf + 4096, 8);
	EXPECT_EQ(2ULL, v);
	memcpy(&v, self->a.buf + 6000, 8);
	EXPECT_EQ(1ULL, v);
	EXPECT_QP_STATE(IBV_QPS_RTS, self->a.qp);
	EXPECT_QP_STATE(IBV_QPS_RTS, self->b.qp);
}

/*
 * The full initiator depth and responder resources the devices offer,
 * all used at once: SQ_WR READs and fetch-and-adds posted in one call
 * complete in order with the right data, each atomic executed once, in
 * order (its original value counts them).
 */
TEST_F(pair, read_atomic_full_depth)
{
	int depth = self->a.attr.max_qp_init_rd_atom;
	struct ibv_send_wr wr[SQ_WR], *bad = NULL;
	struct ibv_sge sge[SQ_WR];
	uint64_t v, adds = 0;
	int i;

	if (self->b.attr.max_qp_rd_atom < depth)
		depth = self->b.attr.max_qp_rd_atom;
	ASSERT_LE(SQ_WR, depth) TH_LOG("%s: depth %d", dev_name(0), depth);
	self->b.rc.rd_atomic = (uint8_t)depth;
	self->p.max_rd_atomic = (uint8_t)depth;
	pair_connect(_metadata, self);

	for (i = 0; i < 4096; i++)
		self->b.buf[i] = (uint8_t)(i * 7 + i / 64);
	memset(self->b.buf + 8192, 0, 8);
	memset(self->a.buf, 0, 8192);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < SQ_WR; i++) {
		wr[i].wr_id = (uint64_t)i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < SQ_WR ? &wr[i + 1] : NULL;
		sge[i].lkey = self->a.mr->lkey;
		if (i % 2) {
			wr[i].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr[i].wr.atomic.remote_addr = B_BUF(8192);
			wr[i].wr.atomic.rkey = self->b.mr->rkey;
			wr[i].wr.atomic.compare_add = 1;
			sge[i].addr = A_BUF(4096 + i * 8);
			sge[i].length = 8;
		} else {
			wr[i].opcode = IBV_WR_RDMA_READ;
			wr[i].wr.rdma.remote_addr = B_BUF(i * 64);
			wr[i].wr.rdma.rkey = self->b.mr->rkey;
			sge[i].addr = A_BUF(i * 64);
			sge[i].length = 64;
		}
	}
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, wr, &bad));
	for (i = 0; i < SQ_WR; i++) {
		struct ibv_wc wc = wait_wc(_metadata, self->a.cq);

		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_EQ((uint64_t)i, wc.wr_id);
	}
	for (i = 0; i < SQ_WR; i++) {
		if (i % 2) {
			memcpy(&v, self->a.buf + 4096 + i * 8, 8);
			EXPECT_EQ(adds, v) TH_LOG("fetch-and-add %d", i);
			adds++;
		} else {
			EXPECT_EQ(0, memcmp(self->a.buf + i * 64,
					    self->b.buf + i * 64, 64))
				TH_LOG("READ %d", i);
		}
	}
	memcpy(&v, self->b.buf + 8192, 8);
	EXPECT_EQ(adds, v);
	EXPECT_QP_STATE(IBV_QPS_RTS, self->a.qp);
	EXPECT_QP_STATE(IBV_QPS_RTS, self->b.qp);
}

/*
 * SQD -> SQD may change the responder resources (IBTA 11.2.5.2); the QP
 * reports the new count and answers READs with it after SQD -> RTS.
 */
TEST_F(pair, sqd_changes_responder_resources)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_wc wc;

	ASSERT_ERRNO(0, qp_to_state(self->b.qp, IBV_QPS_SQD));
	memset(&a, 0, sizeof(a));
	a.max_dest_rd_atomic = 2;
	ASSERT_ERRNO(0, ibv_modify_qp(self->b.qp, &a,
				      IBV_QP_MAX_DEST_RD_ATOMIC));
	memset(&a, 0, sizeof(a));
	a.max_dest_rd_atomic = (uint8_t)(self->b.attr.max_qp_rd_atom + 1);
	verb_ret = ibv_modify_qp(self->b.qp, &a, IBV_QP_MAX_DEST_RD_ATOMIC);
	if (self->rxe && !verb_ret)
		TH_LOG("rxe deviation: max_dest_rd_atomic %u > max_qp_rd_atom %d accepted",
		       a.max_dest_rd_atomic, self->b.attr.max_qp_rd_atom);
	else
		ASSERT_ERRNO(EINVAL, verb_ret);
	if (verb_ret == 0) {
		/* rxe took it: back to 2 for what follows */
		a.max_dest_rd_atomic = 2;
		ASSERT_ERRNO(0, ibv_modify_qp(self->b.qp, &a,
					      IBV_QP_MAX_DEST_RD_ATOMIC));
	}
	ASSERT_ERRNO(0, qp_to_state(self->b.qp, IBV_QPS_RTS));
	ASSERT_ERRNO(0, ibv_query_qp(self->b.qp, &a, IBV_QP_MAX_DEST_RD_ATOMIC,
				     &init));
	EXPECT_EQ(2, a.max_dest_rd_atomic);

	memset(self->b.buf, 0x5c, 256);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 1, A_BUF(0), 256,
			      self->a.mr->lkey, B_BUF(0), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(256U, first_not(self->a.buf, 512, 0x5c));
}

TEST_F(pair, zero_length_send_and_write)
{
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 64, self->b.mr->lkey));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 1, 0, 0, 0, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0U, wc.byte_len);
	/* a zero-length WRITE needs no valid rkey */
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 2, 0, 0, 0, 0,
			      0x12345));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
}

/*
 * What NCCL's InfiniBand transport asks of a device, without a GPU. Its
 * receiver learns of a finished transfer from a zero-length WRITE with
 * immediate, and it flushes the NIC's writes to GPU memory with a READ on
 * an RC QP connected to itself.
 */
TEST_F(pair, zero_length_write_with_imm)
{
	struct ibv_sge sge = { 0 };
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 64, self->b.mr->lkey));
	wr.wr_id = 3;
	wr.sg_list = &sge;
	wr.num_sge = 0;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(0x6e63636c);
	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0x4242;	/* a zero-length WRITE needs no key */
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(7U, wc.wr_id);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(0U, wc.byte_len);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0x6e63636c), wc.imm_data);
}

TEST_F(pair, read_on_qp_connected_to_itself)
{
	struct ibv_qp_cap cap;
	struct rc_end me = self->a.rc;
	const char *step = "";
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int err;

	qp = make_qp(self->a.pd, self->a.cq, self->a.cq, &cap);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	me.qpn = qp->qp_num;
	err = rc_connect(qp, &me, &me, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("%s: %s", step, strerror(err));

	stream_fill(self->a.buf, 0x5e1f, 0, 4096);
	memset(self->a.buf + 4096, 0, 4096);
	for (uint32_t len = 1; len <= 4096; len *= 64) {
		ASSERT_ERRNO(0, post1(qp, IBV_WR_RDMA_READ, len, A_BUF(4096),
				      len, self->a.mr->lkey, A_BUF(0),
				      self->a.mr->rkey));
		wc = wait_wc(_metadata, self->a.cq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_EQ(len, wc.wr_id);
		EXPECT_EQ(qp->qp_num, wc.qp_num);
		EXPECT_EQ(len, stream_check(self->a.buf + 4096, 0x5e1f, 0, len));
	}
	/* and a WRITE into its own memory, as the flush of some versions */
	ASSERT_ERRNO(0, post1(qp, IBV_WR_RDMA_WRITE, 9, A_BUF(0), 512,
			      self->a.mr->lkey, A_BUF(8192), self->a.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(512U, stream_check(self->a.buf + 8192, 0x5e1f, 0, 512));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* NCCL finds a device's PCI path through this link (ncclIbGetPciPath). */
TEST_F(pair, sysfs_device_link_resolves)
{
	char path[256], *real;
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device",
		 ibv_get_device_name(self->a.ctx->device));
	real = realpath(path, NULL);
	ASSERT_NE(NULL, real) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_EQ(0, stat(real, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode)) TH_LOG("%s is not a directory", real);
	TH_LOG("%s -> %s", path, real);
	free(real);
}

/* Completion events */

/* Whether the channel has an event within ms (it is then taken and acked). */
static bool cq_event(struct end *e, unsigned int ms)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;

	if (poll(&pfd, 1, (int)ms) != 1)
		return false;
	if (ibv_get_cq_event(e->ch, &cq, &ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == e->cq;
}

static int post_send_flags(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr,
			   uint32_t len, uint32_t lkey, unsigned int flags)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	return ibv_post_send(qp, &wr, &bad);
}

/* An armed CQ raises one event for the next completion, then is disarmed. */
TEST_F(pair, cq_event_after_arm)
{
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	ASSERT_ERRNO(0, recv1(self->b.qp, 8, B_BUF(256), 256, self->b.mr->lkey));
	EXPECT_FALSE(cq_event(&self->b, 100)) TH_LOG("event before arming");
	ASSERT_ERRNO(0, ibv_req_notify_cq(self->b.cq, 0));
	ASSERT_ERRNO(0, post_send_flags(self->a.qp, 1, A_BUF(0), 64,
					self->a.mr->lkey, 0));
	EXPECT_TRUE(cq_event(&self->b, WAIT_MS)) TH_LOG("no event");
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	/* not re-armed: the second completion raises nothing */
	ASSERT_ERRNO(0, post_send_flags(self->a.qp, 2, A_BUF(0), 64,
					self->a.mr->lkey, 0));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_FALSE(cq_event(&self->b, 200)) TH_LOG("event without arming");
	wc = wait_wc(_metadata, self->a.cq);
	wc = wait_wc(_metadata, self->a.cq);
}

/*
 * Armed for solicited completions only: an unsolicited SEND raises no
 * event, a SEND with the solicited event bit does.
 */
TEST_F(pair, cq_event_solicited_only)
{
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	ASSERT_ERRNO(0, recv1(self->b.qp, 8, B_BUF(256), 256, self->b.mr->lkey));
	ASSERT_ERRNO(0, ibv_req_notify_cq(self->b.cq, 1));
	ASSERT_ERRNO(0, post_send_flags(self->a.qp, 1, A_BUF(0), 64,
					self->a.mr->lkey, 0));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_FALSE(cq_event(&self->b, 300))
		TH_LOG("event for an unsolicited completion");
	ASSERT_ERRNO(0, post_send_flags(self->a.qp, 2, A_BUF(0), 64,
					self->a.mr->lkey, IBV_SEND_SOLICITED));
	EXPECT_TRUE(cq_event(&self->b, WAIT_MS))
		TH_LOG("no event for a solicited completion");
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(8ULL, wc.wr_id);
	wc = wait_wc(_metadata, self->a.cq);
	wc = wait_wc(_metadata, self->a.cq);
}

/* Resizing a CQ (ibv_resize_cq) */

/* A: n signaled WRITEs of 8 bytes into B, wr_id base.. base + n - 1. */
static void a_writes(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pair) *self, uint64_t base, int n)
{
	int i;

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, base + i,
				   (uintptr_t)self->a.buf, 8, self->a.mr->lkey,
				   (uintptr_t)self->b.buf, self->b.mr->rkey));
}

/* Poll n completions: successes, wr_id *next on, in order. */
static void a_expect(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pair) *self, uint64_t *next, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_wc wc = wait_wc(_metadata, self->a.cq);

		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		ASSERT_EQ(*next, wc.wr_id) TH_LOG("completion lost or reordered");
		(*next)++;
	}
}

/*
 * Completions written before, during and after each resize all arrive,
 * in order, none twice: rings swapped while WRs are in flight and CQEs
 * are waiting unpolled, growing and shrinking.
 */
TEST_F(pair, resize_cq_under_traffic)
{
	static const int sizes[] = { 200, 40, 1000, 33, 64, 500 };
	struct ibv_wc wc;
	uint64_t next = 0, posted = 0;
	unsigned int i;
	int err;

	err = ibv_resize_cq(self->a.cq, 100);
	if (err == EOPNOTSUPP)
		SKIP(return, "ibv_resize_cq: not supported on %s", dev_name(0));
	ASSERT_EQ(0, err);
	EXPECT_LE(100, self->a.cq->cqe);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* 30 in flight, 10 of them polled, then the resize. */
		a_writes(_metadata, self, posted, 30);
		posted += 30;
		a_expect(_metadata, self, &next, 10);
		ASSERT_ERRNO(0, ibv_resize_cq(self->a.cq, sizes[i]));
		EXPECT_LE(sizes[i], self->a.cq->cqe);
		a_writes(_metadata, self, posted, 10);
		posted += 10;
		a_expect(_metadata, self, &next, 30);
	}
	EXPECT_EQ(posted, next);
	EXPECT_EQ(0, poll_n(self->a.cq, &wc, 1, 200)) TH_LOG("a completion twice");
}

/*
 * Too small for the completions not polled yet: EINVAL, and the CQ keeps
 * all of them. The same size again: nothing to do. Bad sizes: EINVAL.
 * 40 WRITEs and one with a bad rkey: its error completion, the last one,
 * raises the solicited-only event, so all 41 are in the CQ by then.
 */
TEST_F(pair, resize_cq_too_small_keeps_everything)
{
	uint64_t next = 0;
	struct ibv_wc wc;
	int cqe, err;

	err = ibv_resize_cq(self->a.cq, CQE);
	if (err == EOPNOTSUPP)
		SKIP(return, "ibv_resize_cq: not supported on %s", dev_name(0));
	ASSERT_EQ(0, err);
	if (self->rxe)
		SKIP(return, "rxe deviation: no solicited-only event for an error completion");
	cqe = self->a.cq->cqe;
	ASSERT_EQ(0, ibv_req_notify_cq(self->a.cq, 1));
	a_writes(_metadata, self, 0, 40);
	ASSERT_EQ(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 40,
			   (uintptr_t)self->a.buf, 8, self->a.mr->lkey,
			   (uintptr_t)self->b.buf, self->b.mr->rkey ^ 0x80));
	ASSERT_TRUE(cq_event(&self->a, WAIT_MS)) TH_LOG("no error completion");

	ASSERT_ERRNO(EINVAL, ibv_resize_cq(self->a.cq, 20));
	EXPECT_EQ(cqe, self->a.cq->cqe);
	ASSERT_ERRNO(EINVAL, ibv_resize_cq(self->a.cq, 0));
	ASSERT_ERRNO(EINVAL, ibv_resize_cq(self->a.cq, -1));
	ASSERT_ERRNO(EINVAL, ibv_resize_cq(self->a.cq,
					   self->a.attr.max_cqe + 1));
	ASSERT_ERRNO(0, ibv_resize_cq(self->a.cq, cqe));
	/* Large enough for the 41: they move to the new ring. */
	ASSERT_ERRNO(0, ibv_resize_cq(self->a.cq, 41));
	a_expect(_metadata, self, &next, 40);
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	EXPECT_EQ(40ULL, wc.wr_id);
	EXPECT_EQ(0, poll_n(self->a.cq, &wc, 1, 200));
}

/* A CQ armed before the resize raises its event after it. */
TEST_F(pair, resize_cq_keeps_the_arm_request)
{
	uint64_t next = 0;
	int err;

	ASSERT_EQ(0, ibv_req_notify_cq(self->a.cq, 0));
	err = ibv_resize_cq(self->a.cq, 1000);
	if (err == EOPNOTSUPP)
		SKIP(return, "ibv_resize_cq: not supported on %s", dev_name(0));
	ASSERT_EQ(0, err);
	EXPECT_FALSE(cq_event(&self->a, 100)) TH_LOG("event before any CQE");
	a_writes(_metadata, self, 0, 1);
	EXPECT_TRUE(cq_event(&self->a, WAIT_MS)) TH_LOG("no event after resize");
	a_expect(_metadata, self, &next, 1);
}

/* Local protection: the requester's own SGEs */

/* rxe reports an lkey it cannot find as LOC_QP_OP_ERR */
TEST_F(pair, send_bad_lkey)
{
	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	a_op_fails_rxe(_metadata, self, IBV_WR_SEND, A_BUF(0), 64,
		       self->a.mr->lkey ^ 0x5a5a00, 0, 0, IBV_WC_LOC_PROT_ERR,
		       IBV_WC_LOC_QP_OP_ERR);
}

TEST_F(pair, write_bad_lkey)
{
	a_op_fails_rxe(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		       self->a.mr->lkey ^ 0x5a5a00, B_BUF(0), self->b.mr->rkey,
		       IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR);
}

TEST_F(pair, write_sge_outside_mr)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(MR_LEN - 32), 64,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey,
		   IBV_WC_LOC_PROT_ERR);
}

TEST_F(pair, write_sge_before_mr)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0) - 8, 64,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey,
		   IBV_WC_LOC_PROT_ERR);
}

TEST_F(pair, send_mr_of_other_pd)
{
	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	a_op_fails_rxe(_metadata, self, IBV_WR_SEND, A_BUF(MR_LEN), 64,
		       self->a.mr2->lkey, 0, 0, IBV_WC_LOC_PROT_ERR,
		       IBV_WC_LOC_QP_OP_ERR);
}

/* READ into a local MR without LOCAL_WRITE */
TEST_F(pair, read_into_readonly_mr)
{
	struct ibv_mr *ro = ibv_reg_mr(self->a.pd, self->a.buf + 2 * MR_LEN,
				       4096, IBV_ACCESS_REMOTE_READ);
	uint8_t *dst = self->a.buf + 2 * MR_LEN;

	ASSERT_NE(NULL, ro);
	a_op_fails(_metadata, self, IBV_WR_RDMA_READ, (uintptr_t)dst, 64,
		   ro->lkey, B_BUF(0), self->b.mr->rkey, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(64U, first_not(dst, 64, 0x5a))
		TH_LOG("the read-only MR was written");
	EXPECT_EQ(0, ibv_dereg_mr(ro));
}

/* Remote access: the responder's keys and rights */

static struct ibv_mr *b_mr_with(struct __test_metadata *_metadata,
				FIXTURE_DATA(pair) *self, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(self->b.pd, self->b.buf + 2 * MR_LEN,
				       4096, access);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

TEST_F(pair, write_without_remote_write)
{
	struct ibv_mr *mr = b_mr_with(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC);

	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		   self->a.mr->lkey, (uintptr_t)self->b.buf + 2 * MR_LEN,
		   mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(pair, read_without_remote_read)
{
	struct ibv_mr *mr = b_mr_with(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE);

	a_op_fails(_metadata, self, IBV_WR_RDMA_READ, A_BUF(0), 64,
		   self->a.mr->lkey, (uintptr_t)self->b.buf + 2 * MR_LEN,
		   mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(pair, atomic_without_remote_atomic)
{
	struct ibv_mr *mr = b_mr_with(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);

	a_op_fails(_metadata, self, IBV_WR_ATOMIC_FETCH_AND_ADD, A_BUF(0), 8,
		   self->a.mr->lkey, (uintptr_t)self->b.buf + 2 * MR_LEN,
		   mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(pair, write_bad_rkey)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey ^ 0x3c3c00,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F(pair, read_bad_rkey)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_READ, A_BUF(0), 64,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey ^ 0x3c3c00,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F(pair, atomic_bad_rkey)
{
	a_op_fails(_metadata, self, IBV_WR_ATOMIC_CMP_AND_SWP, A_BUF(0), 8,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey ^ 0x3c3c00,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F(pair, write_past_remote_mr)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		   self->a.mr->lkey, B_BUF(MR_LEN - 32), self->b.mr->rkey,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F(pair, read_past_remote_mr)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_READ, A_BUF(0), 4096,
		   self->a.mr->lkey, B_BUF(MR_LEN - 2048), self->b.mr->rkey,
		   IBV_WC_REM_ACCESS_ERR);
}

/* An rkey of the responder's other PD is not valid on its QP */
TEST_F(pair, write_rkey_of_other_pd)
{
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		   self->a.mr->lkey, B_BUF(MR_LEN), self->b.mr2->rkey,
		   IBV_WC_REM_ACCESS_ERR);
}

/*
 * The responder QP's own access flags do not enable RDMA WRITE: the
 * request is invalid for that QP (NAK Invalid Request), unlike a missing
 * right on an MR (Remote Access Error).
 */
TEST_F(pair, write_qp_without_remote_write)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_REMOTE_READ,
	};

	ASSERT_ERRNO(0, ibv_modify_qp(self->b.qp, &a, IBV_QP_ACCESS_FLAGS));
	a_op_fails(_metadata, self, IBV_WR_RDMA_WRITE, A_BUF(0), 64,
		   self->a.mr->lkey, B_BUF(0), self->b.mr->rkey,
		   IBV_WC_REM_INV_REQ_ERR);
}

/*
 * An atomic at an address that is not 8-byte aligned. IBTA: the
 * responder answers with an Invalid Request NAK (REM_INV_REQ_ERR). A
 * provider may also refuse the WR when it is posted (EINVAL with
 * *bad_wr), as rxe's does.
 */
TEST_F(pair, atomic_misaligned)
{
	struct ibv_sge sge = { .addr = A_BUF(0), .length = 8,
			       .lkey = self->a.mr->lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_wc wc;
	int ret;

	memset(self->b.buf, 0x5b, BUF_LEN);
	wr.wr_id = 0xe1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = B_BUF(4);
	wr.wr.atomic.rkey = self->b.mr->rkey;
	wr.wr.atomic.compare_add = 1;
	ret = ibv_post_send(self->a.qp, &wr, &bad);
	if (ret) {
		EXPECT_EQ(EINVAL, ret) TH_LOG("post_send: %s", strerror(ret));
		EXPECT_EQ(&wr, bad);
		TH_LOG("refused at post time (%s)", strerror(ret));
	} else {
		wc = wait_wc(_metadata, self->a.cq);
		EXPECT_STATUS(IBV_WC_REM_INV_REQ_ERR, wc);
		expect_a_in_error(_metadata, self);
	}
	EXPECT_EQ(BUF_LEN, first_not(self->b.buf, BUF_LEN, 0x5b));
}

/*
 * SEND longer than the receive buffer. IBTA: the responder completes the
 * receive with a local length error and NAKs with Invalid Request, so
 * the requester sees REM_INV_REQ_ERR.
 */
TEST_F(pair, send_longer_than_recv)
{
	struct ibv_wc wc;

	memset(self->b.buf, 0x5b, BUF_LEN);
	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 64, self->b.mr->lkey));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 0xe1, A_BUF(0), 256,
			      self->a.mr->lkey, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	if (self->rxe && wc.status == IBV_WC_REM_OP_ERR)
		TH_LOG("rxe deviation: requester status REM_OP_ERR, IBTA says REM_INV_REQ_ERR");
	else
		EXPECT_STATUS(IBV_WC_REM_INV_REQ_ERR, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_EQ(7ULL, wc.wr_id);
	if (self->rxe && wc.status == IBV_WC_LOC_QP_OP_ERR)
		TH_LOG("rxe deviation: responder status LOC_QP_OP_ERR, IBTA says LOC_LEN_ERR");
	else
		EXPECT_STATUS(IBV_WC_LOC_LEN_ERR, wc);
	/* nothing past the receive buffer was written */
	EXPECT_EQ(BUF_LEN - 64, first_not(self->b.buf + 64, BUF_LEN - 64, 0x5b));
	expect_a_in_error(_metadata, self);
}

/*
 * A receive whose SGE has a bad lkey. IBTA: the responder completes it
 * with a local protection error and NAKs with Remote Operational Error.
 */
TEST_F(pair, recv_bad_lkey)
{
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256,
			      self->b.mr->lkey ^ 0x5a5a00));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 0xe1, A_BUF(0), 64,
			      self->a.mr->lkey, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_REM_OP_ERR, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_EQ(7ULL, wc.wr_id);
	if (self->rxe && wc.status == IBV_WC_LOC_QP_OP_ERR)
		TH_LOG("rxe deviation: responder status LOC_QP_OP_ERR, IBTA says LOC_PROT_ERR");
	else
		EXPECT_STATUS(IBV_WC_LOC_PROT_ERR, wc);
	expect_a_in_error(_metadata, self);
}

/*
 * SEND_WITH_INV naming a key the responder may not invalidate (B's
 * ordinary MR: only fast-registration MRs and type 2 windows are): B
 * completes the receive with a remote invalid request and its QP errs,
 * A's SEND fails with a remote access error.
 */
TEST_F(pair, send_inv_of_ordinary_mr)
{
	struct ibv_sge sge = { A_BUF(0), 64, self->a.mr->lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_wc wc;

	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 256, self->b.mr->lkey));
	wr.wr_id = 0xe2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = self->b.mr->rkey;
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_EQ(0xe2ULL, wc.wr_id);
	if (self->rxe && wc.status == IBV_WC_SUCCESS)
		TH_LOG("rxe deviation: requester status SUCCESS for a key the responder refused to invalidate");
	else
		EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_EQ(7ULL, wc.wr_id);
	EXPECT_STATUS(IBV_WC_REM_INV_REQ_ERR, wc);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->b.qp);
}

/* LOCAL_INV of an ordinary MR's key: refused, the QP in ERR. */
TEST_F(pair, local_inv_of_ordinary_mr)
{
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_wc wc;

	wr.wr_id = 0xe3;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = self->a.mr->lkey;
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_EQ(0xe3ULL, wc.wr_id);
	EXPECT_STATUS(IBV_WC_LOC_QP_OP_ERR, wc);
	expect_a_in_error(_metadata, self);
}

/* LOCAL_INV takes no data: posting it with an SGE fails with EINVAL. */
TEST_F(pair, post_local_inv_with_sge)
{
	struct ibv_sge sge = { A_BUF(0), 8, self->a.mr->lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;

	if (self->rxe)
		SKIP(return, "rxe posts it and fails it later");
	wr.wr_id = 0xe4;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = self->a.mr->lkey;
	ASSERT_EQ(EINVAL, ibv_post_send(self->a.qp, &wr, &bad));
	EXPECT_EQ(&wr, bad);
	expect_no_wc(_metadata, self->a.cq, 200);
}

/* Memory windows (IBTA 10.6.7) */

#define MW_OFF		(32 * 1024)	/* B's window MR: buf[MW_OFF..+MR_LEN) */

/* B's MR that windows bind to: local write and MW_BIND, no remote right. */
static struct ibv_mr *mw_mr(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pair) *self, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(self->b.pd, self->b.buf + MW_OFF,
				       MR_LEN, access);

	EXPECT_NE(NULL, mr) TH_LOG("reg_mr: %s", strerror(errno));
	return mr;
}

/* Post a type 2 bind of @mw on @qp: @mw's key gets the next variant. */
static int bind2(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mr *mr,
		 uint64_t addr, uint64_t len, unsigned int access,
		 uint64_t wr_id)
{
	struct ibv_send_wr wr = {}, *bad = NULL;
	int err;

	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	err = ibv_post_send(qp, &wr, &bad);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}

/*
 * Type 1: bound with ibv_bind_mw() to 4 KiB of an MR with no remote
 * rights, the window grants remote write and read (the MR's local write
 * suffices, C10-74); outside the window, even inside the MR, access fails.
 */
TEST_F(pair, mw_type1_bind_write_read)
{
	struct ibv_mr *mr = mw_mr(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_MW_BIND);
	uint64_t win = B_BUF(MW_OFF + 4096);
	struct ibv_mw_bind bind = {};
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(self->b.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, mw) TH_LOG("alloc_mw: %s", strerror(errno));
	bind.wr_id = 0xb1;
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = win;
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ;
	ASSERT_ERRNO(0, ibv_bind_mw(self->b.qp, mw, &bind));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);

	memset(self->a.buf, 0x6a, 512);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xb2, A_BUF(0),
			      512, self->a.mr->lkey, win + 1000, mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(512U, first_not(self->b.buf + MW_OFF + 4096 + 1000, 1024,
				  0x6a));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 0xb3, A_BUF(1024),
			      512, self->a.mr->lkey, win + 1000, mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0, memcmp(self->a.buf + 1024, self->a.buf, 512));
	/* Past the window's end: a remote access error. */
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xb4, A_BUF(0),
			      64, self->a.mr->lkey, win + 4096 - 32, mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* A type 1 window cannot be zero based (o10-36.2.2). */
TEST_F(pair, mw_type1_zero_based)
{
	struct ibv_mr *mr = mw_mr(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_MW_BIND);
	struct ibv_mw_bind bind = {};
	struct ibv_mw *mw;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(self->b.pd, IBV_MW_TYPE_1);
	ASSERT_NE(NULL, mw);
	bind.bind_info.mr = mr;
	bind.bind_info.addr = B_BUF(MW_OFF);
	bind.bind_info.length = 4096;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_ZERO_BASED;
	EXPECT_EQ(EINVAL, ibv_bind_mw(self->b.qp, mw, &bind));
	expect_no_wc(_metadata, self->b.cq, 200);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * Type 2 (2B): bound by a BIND_MW work request; A reads through it, B
 * invalidates it with LOCAL_INV, then the key is dead. While bound, B's
 * MR cannot be deregistered (EBUSY).
 */
TEST_F(pair, mw_type2_bind_local_inv)
{
	struct ibv_mr *mr = mw_mr(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_MW_BIND);
	struct ibv_send_wr inv = {}, *bad = NULL;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(self->b.pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw) TH_LOG("alloc_mw: %s", strerror(errno));
	memset(self->b.buf + MW_OFF, 0x2b, 8192);
	ASSERT_ERRNO(0, bind2(self->b.qp, mw, mr, B_BUF(MW_OFF), 8192,
			      IBV_ACCESS_REMOTE_READ, 0xc1));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);
	EXPECT_EQ(EBUSY, ibv_dereg_mr(mr));

	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 0xc2, A_BUF(0),
			      6000, self->a.mr->lkey, B_BUF(MW_OFF + 100),
			      mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(6000U, first_not(self->a.buf, 6000, 0x2b));

	inv.wr_id = 0xc3;
	inv.opcode = IBV_WR_LOCAL_INV;
	inv.send_flags = IBV_SEND_SIGNALED;
	inv.invalidate_rkey = mw->rkey;
	ASSERT_ERRNO(0, ibv_post_send(self->b.qp, &inv, &bad));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
	EXPECT_EQ(0, ibv_dereg_mr(mr)) TH_LOG("dereg after invalidation");

	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 0xc4, A_BUF(0),
			      64, self->a.mr->lkey, B_BUF(MW_OFF + 100),
			      mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/*
 * Type 2, zero based: remote addresses are offsets into the window; a
 * SEND_WITH_INV from A invalidates it, B's receive says so and names the
 * key.
 */
TEST_F(pair, mw_type2_zero_based_send_inv)
{
	struct ibv_mr *mr = mw_mr(_metadata, self, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_MW_BIND);
	struct ibv_sge sge = { A_BUF(0), 32, self->a.mr->lkey };
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(self->b.pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	memset(self->b.buf + MW_OFF, 0, MR_LEN);
	ASSERT_ERRNO(0, bind2(self->b.qp, mw, mr, B_BUF(MW_OFF + 8192),
			      4096, IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_ZERO_BASED, 0xd1));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	memset(self->a.buf, 0x7d, 256);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xd2, A_BUF(0),
			      256, self->a.mr->lkey, 100, mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(8192U + 100, first_not(self->b.buf + MW_OFF, MR_LEN, 0));
	EXPECT_EQ(256U, first_not(self->b.buf + MW_OFF + 8192 + 100, 1024,
				  0x7d));

	ASSERT_ERRNO(0, recv1(self->b.qp, 0xd3, B_BUF(0), 64,
			      self->b.mr->lkey));
	wr.wr_id = 0xd4;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = mw->rkey;
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0xd3ULL, wc.wr_id);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(mw->rkey, wc.invalidated_rkey);
	EXPECT_EQ(32U, wc.byte_len);

	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xd5, A_BUF(0),
			      16, self->a.mr->lkey, 0, mw->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* One bad bind on B: MW_BIND_ERR, B's QP in ERR. */
static void bad_bind(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pair) *self, int mr_access, struct ibv_pd *pd,
		     uint64_t off, uint64_t len, unsigned int access,
		     bool twice)
{
	struct ibv_mr *mr = mw_mr(_metadata, self, mr_access);
	struct ibv_mw *mw;
	struct ibv_wc wc;

	ASSERT_NE(NULL, mr);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	if (twice) {
		ASSERT_ERRNO(0, bind2(self->b.qp, mw, mr,
				      B_BUF(MW_OFF + off), len, access, 0xe0));
		wc = wait_wc(_metadata, self->b.cq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	}
	ASSERT_ERRNO(0, bind2(self->b.qp, mw, mr, B_BUF(MW_OFF + off),
			      len, access, 0xe1));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_EQ(0xe1ULL, wc.wr_id);
	EXPECT_STATUS(IBV_WC_MW_BIND_ERR, wc);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->b.qp);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(pair, mw_bind_outside_mr)
{
	bad_bind(_metadata, self, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
		 self->b.pd, MR_LEN - 100, 4096, IBV_ACCESS_REMOTE_READ, false);
}

TEST_F(pair, mw_bind_mr_without_mw_bind)
{
	bad_bind(_metadata, self, IBV_ACCESS_LOCAL_WRITE, self->b.pd, 0, 4096,
		 IBV_ACCESS_REMOTE_READ, false);
}

/* C10-74: a window with remote write needs the MR's local write. */
TEST_F(pair, mw_bind_write_without_local_write)
{
	bad_bind(_metadata, self, IBV_ACCESS_MW_BIND, self->b.pd, 0, 4096,
		 IBV_ACCESS_REMOTE_WRITE, false);
}

/* C10-72: the window must be of the QP's PD. */
TEST_F(pair, mw_bind_other_pd)
{
	bad_bind(_metadata, self, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
		 self->b.pd2, 0, 4096, IBV_ACCESS_REMOTE_READ, false);
}

/* o10-37.2.30: a type 2 window is bound only when it is unbound. */
TEST_F(pair, mw_type2_bind_twice)
{
	bad_bind(_metadata, self, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND,
		 self->b.pd, 0, 4096, IBV_ACCESS_REMOTE_READ, true);
}

/* ibv_alloc_mw of an unknown type fails, not with EOPNOTSUPP. */
TEST_F(pair, mw_alloc_bad_type)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->b.pd, 3);

	EXPECT_EQ(NULL, mw);
	EXPECT_NE(EOPNOTSUPP, errno);
}

/* Retries */

/* No receive posted and rnr_retry 0: RNR retry exceeded at once. */
TEST_F(pair, rnr_retry_exceeded)
{
	struct ibv_wc wc;

	self->p.rnr_retry = 0;
	self->p.min_rnr_timer = 1;
	pair_connect(_metadata, self);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 0xe1, A_BUF(0), 64,
			      self->a.mr->lkey, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_RNR_RETRY_EXC_ERR, wc);
	expect_a_in_error(_metadata, self);
	/* the responder is fine */
	EXPECT_QP_STATE(IBV_QPS_RTS, self->b.qp);
}

/* RNR NAKs with retries: a receive posted late still gets the message */
TEST_F(pair, rnr_then_recv_posted)
{
	struct ibv_wc wc;

	self->p.rnr_retry = 7;		/* infinite */
	self->p.min_rnr_timer = 1;	/* 0.01 ms */
	pair_connect(_metadata, self);
	memset(self->a.buf, 0x77, 64);
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_SEND, 0xe1, A_BUF(0), 64,
			      self->a.mr->lkey, 0, 0));
	expect_no_wc(_metadata, self->a.cq, 300);
	ASSERT_ERRNO(0, recv1(self->b.qp, 7, B_BUF(0), 64, self->b.mr->lkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(64U, first_not(self->b.buf, 64, 0x77));
}

/* The destination QP is destroyed: transport retries run out. */
TEST_F(pair, retry_exceeded_peer_destroyed)
{
	struct ibv_wc wc;

	self->p.retry_cnt = 1;
	self->p.timeout = 12;		/* 16.8 ms */
	pair_connect(_metadata, self);
	ASSERT_EQ(0, ibv_destroy_qp(self->b.qp));
	self->b.qp = NULL;
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_WRITE, 0xe1, A_BUF(0),
			      64, self->a.mr->lkey, B_BUF(0), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_RETRY_EXC_ERR, wc);
	EXPECT_EQ(0xe1ULL, wc.wr_id);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->a.qp);
}

/* Connected to a QP number nobody has: the frames go nowhere. */
TEST_F(pair, retry_exceeded_no_such_qp)
{
	struct rc_end ghost = self->b.rc;
	const char *step;
	struct ibv_wc wc;
	int err;

	ghost.qpn = 0xfffffe;
	self->p.retry_cnt = 2;
	self->p.timeout = 12;
	ASSERT_EQ(0, qp_to_state(self->a.qp, IBV_QPS_RESET));
	err = rc_connect(self->a.qp, &self->a.rc, &ghost, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("%s: %s", step, strerror(err));
	ASSERT_ERRNO(0, post1(self->a.qp, IBV_WR_RDMA_READ, 0xe1, A_BUF(0),
			      64, self->a.mr->lkey, B_BUF(0), self->b.mr->rkey));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_RETRY_EXC_ERR, wc);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->a.qp);
}

/*
 * More sends than the send queue holds while nothing can complete (the
 * peer does not exist and the timeout is long): ENOMEM at the first WR
 * that does not fit, *bad_wr pointing at it.
 */
TEST_F(pair, post_send_queue_full)
{
	struct rc_end ghost = self->b.rc;
	struct ibv_send_wr *wr, *bad = NULL;
	unsigned int i, n = self->a.cap.max_send_wr + 64;
	struct ibv_sge sge;
	const char *step;
	int err, ret;

	ghost.qpn = 0xfffffe;
	self->p.timeout = 20;		/* 4.3 s */
	ASSERT_EQ(0, qp_to_state(self->a.qp, IBV_QPS_RESET));
	err = rc_connect(self->a.qp, &self->a.rc, &ghost, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("%s: %s", step, strerror(err));
	wr = calloc(n, sizeof(*wr));
	ASSERT_NE(NULL, wr);
	sge.addr = A_BUF(0);
	sge.length = 8;
	sge.lkey = self->a.mr->lkey;
	for (i = 0; i < n; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = B_BUF(0);
		wr[i].wr.rdma.rkey = self->b.mr->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_send(self->a.qp, wr, &bad);
	EXPECT_EQ(ENOMEM, ret) TH_LOG("post_send of %u (cap %u): %s", n,
				      self->a.cap.max_send_wr,
				      ret ? strerror(ret) : "success");
	ASSERT_NE(NULL, bad);
	EXPECT_LE(self->a.cap.max_send_wr, (unsigned int)(bad - wr))
		TH_LOG("refused at %zd, the queue holds %u", bad - wr,
		       self->a.cap.max_send_wr);
	free(wr);
}

/* Memory going away under traffic */

/*
 * The responder deregisters the MR that a stream of WRITEs targets.
 * Every WR completes: successfully before, with a remote access error
 * (then flushes) after. No crash, nothing written after the dereg.
 */
TEST_F_TIMEOUT(pair, dereg_mr_under_remote_traffic, 60)
{
	enum { N = 64, LEN = 4096 };
	struct ibv_mr *mr = ibv_reg_mr(self->b.pd, self->b.buf + 2 * MR_LEN,
				       2 * MR_LEN, ALL_ACCESS);
	uint64_t raddr = (uintptr_t)self->b.buf + 2 * MR_LEN;
	struct ibv_send_wr wr[N] = {}, *bad = NULL;
	struct ibv_sge sge = { .addr = A_BUF(0), .length = LEN,
			       .lkey = self->a.mr->lkey };
	int i;

	ASSERT_NE(NULL, mr);
	for (i = 0; i < N; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = raddr + (i % 8) * LEN;
		wr[i].wr.rdma.rkey = mr->rkey;
	}
	/* post in two halves around the dereg, the first half in flight */
	for (i = 0; i < N; i++)
		wr[i].next = i + 1 < N / 2 ? &wr[i + 1] : NULL;
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr[0], &bad));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	for (i = N / 2; i < N; i++)
		wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &wr[N / 2], &bad));
	memset(self->b.buf + 2 * MR_LEN, 0x5b, 2 * MR_LEN);

	/* WRs posted after the dereg cannot have succeeded */
	EXPECT_GE(N / 2, expect_dereg_race_wcs(_metadata, self->a.cq, N));
	/* nothing landed in the deregistered range after the dereg */
	usleep(100000);
	EXPECT_EQ((size_t)2 * MR_LEN,
		  first_not(self->b.buf + 2 * MR_LEN, 2 * MR_LEN, 0x5b));
}

/*
 * The requester deregisters the MR its own WRs read from while they are
 * in flight: each completes, successfully or with a local protection
 * error (then flushes).
 */
TEST_F_TIMEOUT(pair, dereg_mr_under_local_traffic, 60)
{
	enum { N = 32, LEN = 8192 };
	struct ibv_mr *mr = ibv_reg_mr(self->a.pd, self->a.buf + 2 * MR_LEN,
				       2 * MR_LEN, ALL_ACCESS);
	struct ibv_send_wr wr[N] = {}, *bad = NULL;
	struct ibv_sge sge;
	int i, ok = 0, err = 0, other = 0;

	ASSERT_NE(NULL, mr);
	sge.addr = (uintptr_t)self->a.buf + 2 * MR_LEN;
	sge.length = LEN;
	sge.lkey = mr->lkey;
	for (i = 0; i < N; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = B_BUF(0);
		wr[i].wr.rdma.rkey = self->b.mr->rkey;
		wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
	}
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, wr, &bad));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	for (i = 0; i < N; i++) {
		struct ibv_wc wc = wait_wc(_metadata, self->a.cq);

		if (wc.status == IBV_WC_SUCCESS) {
			ok++;
		} else if (wc.status == IBV_WC_LOC_PROT_ERR ||
			   wc.status == IBV_WC_WR_FLUSH_ERR) {
			err++;
		} else if (self->rxe && wc.status == IBV_WC_LOC_QP_OP_ERR) {
			err++;
			TH_LOG("rxe deviation: LOC_QP_OP_ERR for an lkey that is gone");
		} else {
			other++;
		}
		if (wc.status != IBV_WC_SUCCESS)
			TH_LOG("wr %d: %s", i, ibv_wc_status_str(wc.status));
	}
	TH_LOG("%d ok, %d failed", ok, err);
	EXPECT_EQ(0, other);
}

TEST_HARNESS_MAIN
