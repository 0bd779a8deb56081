/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the kselftest-harness tests (verbs_err.c, ud.c) share on top of
 * common.h: a skip from a fixture setup, assertions on a verb's errno and
 * on a completion status, and waiting for a completion or for none. A
 * test includes this instead of kselftest_harness.h and common.h.
 */
#ifndef DRAY_RDMA_HARNESS_H
#define DRAY_RDMA_HARNESS_H

#include <errno.h>
#include <setjmp.h>
#include <string.h>

#include "kselftest_harness.h"
#include "common.h"

#define WAIT_MS		20000	/* generous for TCG; passing tests never wait */

/*
 * Skip from a fixture setup: the 6.1 harness would run the test body
 * after a plain SKIP() there, so leave through the harness's jump buffer
 * (no teardown runs: the setup cleans up what it made).
 */
#define SETUP_SKIP(fmt, ...) do {					\
	SKIP((void)0, fmt, ##__VA_ARGS__);				\
	longjmp(_metadata->env, 1);					\
} while (0)

#define EXPECT_STATUS(_want, _wc) do {					\
	EXPECT_EQ((_want), (_wc).status)				\
		TH_LOG("completion status %s (%d), expected %s",	\
		       ibv_wc_status_str((_wc).status), (_wc).status,	\
		       ibv_wc_status_str(_want));			\
} while (0)

/* The verb's return value (0 or a positive errno) is _want. */
static int verb_ret;
#define ASSERT_ERRNO(_want, _ret)					\
	ASSERT_EQ((_want), (verb_ret = (_ret)))				\
		TH_LOG("%s: got %s (%d), expected %s", #_ret,		\
		       verb_ret ? strerror(verb_ret) : "success",	\
		       verb_ret, strerror(_want))

/* A NULL result with errno _want */
#define ASSERT_NULL_ERRNO(_want, _expr) do {				\
	void *__p;							\
	errno = 0;							\
	__p = (void *)(_expr);						\
	ASSERT_EQ(NULL, __p) TH_LOG("%s succeeded", #_expr);		\
	ASSERT_EQ((_want), errno)					\
		TH_LOG("%s: errno %s (%d), expected %s", #_expr,	\
		       strerror(errno), errno, strerror(_want));	\
} while (0)

/* Poll one completion from cq, failing the test after WAIT_MS. */
static inline struct ibv_wc wait_wc(struct __test_metadata *_metadata,
				    struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	memset(&wc, 0, sizeof(wc));
	n = poll_n(cq, &wc, 1, WAIT_MS);
	ASSERT_EQ(1, n) TH_LOG("no completion within %d ms", WAIT_MS);
	return wc;
}

/*
 * Poll n completions of WRs with wr_id 0..n-1 from cq, in order, that
 * raced with the deregistration of their target MR: successes, then one
 * remote access error, then flushes, and nothing else. Returns the
 * number of successes (at most the WRs posted before the dereg, which
 * the caller checks).
 */
static inline int expect_dereg_race_wcs(struct __test_metadata *_metadata,
					struct ibv_cq *cq, int n)
{
	int i, ok = 0, acc = 0, flush = 0, other = 0;
	bool failed = false;

	for (i = 0; i < n; i++) {
		struct ibv_wc wc = wait_wc(_metadata, cq);

		EXPECT_EQ((uint64_t)i, wc.wr_id) TH_LOG("completions out of order");
		switch (wc.status) {
		case IBV_WC_SUCCESS:
			ok++;
			EXPECT_FALSE(failed) TH_LOG("success after an error");
			break;
		case IBV_WC_REM_ACCESS_ERR:
			acc++;
			EXPECT_FALSE(failed) TH_LOG("second error completion");
			failed = true;
			break;
		case IBV_WC_WR_FLUSH_ERR:
			flush++;
			EXPECT_TRUE(failed) TH_LOG("flush before an error");
			break;
		default:
			other++;
			TH_LOG("status %s", ibv_wc_status_str(wc.status));
		}
	}
	TH_LOG("%d ok, %d remote access errors, %d flushed", ok, acc, flush);
	EXPECT_EQ(0, other);
	EXPECT_EQ(1, acc);
	return ok;
}

/* No completion shows up on cq for ms milliseconds. */
static inline void expect_no_wc(struct __test_metadata *_metadata,
				struct ibv_cq *cq, unsigned int ms)
{
	struct ibv_wc wc;
	int n = poll_n(cq, &wc, 1, ms);

	EXPECT_EQ(0, n)
		TH_LOG("unexpected completion: wr_id %#llx status %s",
		       (unsigned long long)wc.wr_id,
		       ibv_wc_status_str(wc.status));
}

/* One side of an RC pair in a test: its device, PD, CQ and RC QP. */
struct rc_side {
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rc_end rc;
};

/*
 * Open device @which (dev_name()), take its GID (@gid_want as pick_gid()
 * takes it), make a PD, a CQ of @cqe entries and an RC QP on it (64 WRs
 * and @sge SGEs each way) whose first PSN is @psn, offering 4 responder
 * resources. rc_connect() the two sides' QPs next.
 */
static inline void rc_side_setup(struct __test_metadata *_metadata,
				 struct rc_side *e, int which, int gid_want,
				 uint32_t psn, int cqe, uint32_t sge)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = sge,
			.max_recv_sge = sge,
		},
	};
	int g;

	e->ctx = open_device(dev_name(which));
	ASSERT_NE(NULL, e->ctx) TH_LOG("device %s: %s", dev_name(which),
				       strerror(errno));
	ASSERT_EQ(0, ibv_query_port(e->ctx, RC_PORT, &e->port));
	g = pick_gid(e->ctx, gid_want, &e->rc.gid);
	ASSERT_LE(0, g);
	e->rc.gid_index = g;
	e->rc.mtu = e->port.active_mtu;
	e->rc.psn = psn;
	e->rc.rd_atomic = 4;
	e->pd = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd);
	e->cq = ibv_create_cq(e->ctx, cqe, NULL, NULL, 0);
	ASSERT_NE(NULL, e->cq);
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	ASSERT_NE(NULL, e->qp) TH_LOG("ibv_create_qp: %s", strerror(errno));
	e->rc.qpn = e->qp->qp_num;
}

/* The QP first, so that nothing uses the side's MRs any more. */
static inline void rc_side_destroy_qp(struct __test_metadata *_metadata,
				      struct rc_side *e)
{
	if (e->qp)
		EXPECT_EQ(0, ibv_destroy_qp(e->qp));
	e->qp = NULL;
}

/* The rest of the side, once its MRs are gone. */
static inline void rc_side_teardown(struct __test_metadata *_metadata,
				    struct rc_side *e)
{
	rc_side_destroy_qp(_metadata, e);
	if (e->cq)
		EXPECT_EQ(0, ibv_destroy_cq(e->cq));
	if (e->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd));
	if (e->ctx)
		EXPECT_EQ(0, ibv_close_device(e->ctx));
}

#endif /* DRAY_RDMA_HARNESS_H */
