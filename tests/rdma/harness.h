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
