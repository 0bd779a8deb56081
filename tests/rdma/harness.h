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

#endif /* DRAY_RDMA_HARNESS_H */
