// SPDX-License-Identifier: GPL-2.0-only
/*
 * The requester's congestion window (drivers/dray/dev/dev_logic.h):
 * halved on a NAK, back to the minimum on a timeout, slow start below
 * ssthresh, one PSN per window above it, never outside its bounds.
 */
#include "dev_logic.h"
#include "unit.h"

UNIT_TEST(starts_full)
{
	struct dray_cwnd w;

	dray_cwnd_init(&w);
	CHECK_EQ(w.cwnd, DRAY_CWND_MAX);
	CHECK_EQ(w.ssthresh, DRAY_CWND_MAX);
	/* Full stays full: acknowledgments add nothing. */
	dray_cwnd_acked(&w, 1000);
	CHECK_EQ(w.cwnd, DRAY_CWND_MAX);
	CHECK_EQ(w.acked, 0);
}

UNIT_TEST(nak_halves_then_grows_by_one_per_window)
{
	struct dray_cwnd w;
	unsigned int i;

	dray_cwnd_init(&w);
	dray_cwnd_loss(&w, 0);
	CHECK_EQ(w.ssthresh, 128);
	CHECK_EQ(w.cwnd, 128);
	/* 127 PSNs acknowledged: not yet a window. */
	dray_cwnd_acked(&w, 127);
	CHECK_EQ(w.cwnd, 128);
	dray_cwnd_acked(&w, 1);
	CHECK_EQ(w.cwnd, 129);
	CHECK_EQ(w.acked, 0);
	/* One at a time, as single ACKs come: 129 more make one more. */
	for (i = 0; i < 129; i++)
		dray_cwnd_acked(&w, 1);
	CHECK_EQ(w.cwnd, 130);
	/* A second loss halves again. */
	dray_cwnd_loss(&w, 0);
	CHECK_EQ(w.ssthresh, 65);
	CHECK_EQ(w.cwnd, 65);
}

UNIT_TEST(timeout_restarts_at_min_and_slow_starts)
{
	struct dray_cwnd w;

	dray_cwnd_init(&w);
	dray_cwnd_loss(&w, 1);
	CHECK_EQ(w.ssthresh, 128);
	CHECK_EQ(w.cwnd, DRAY_CWND_MIN);
	/* Below ssthresh: one PSN per PSN acknowledged. */
	dray_cwnd_acked(&w, 100);
	CHECK_EQ(w.cwnd, DRAY_CWND_MIN + 100);
	/* Crossing ssthresh: the rest counts towards the next window. */
	dray_cwnd_acked(&w, 30);
	CHECK_EQ(w.cwnd, 128);
	CHECK_EQ(w.acked, 10);
}

UNIT_TEST(bounds)
{
	struct dray_cwnd w;
	unsigned int i;

	/* Losses upon losses: never below the minimum. */
	dray_cwnd_init(&w);
	for (i = 0; i < 20; i++)
		dray_cwnd_loss(&w, i & 1);
	CHECK_EQ(w.ssthresh, DRAY_CWND_MIN);
	CHECK_EQ(w.cwnd, DRAY_CWND_MIN);
	/* A huge acknowledgment (2^23 PSNs) ends at the maximum. */
	dray_cwnd_acked(&w, 1u << 23);
	CHECK_EQ(w.cwnd, DRAY_CWND_MAX);
	CHECK_EQ(w.acked, 0);
	/* From the minimum up, acknowledging a window at a time. */
	dray_cwnd_loss(&w, 1);
	for (i = 0; i < 100000 && w.cwnd < DRAY_CWND_MAX; i++) {
		unsigned int before = w.cwnd;

		dray_cwnd_acked(&w, w.cwnd);
		CHECK(w.cwnd > before, "cwnd %u did not grow", before);
		CHECK(w.cwnd <= DRAY_CWND_MAX, "cwnd %u", w.cwnd);
		CHECK(w.acked < w.cwnd, "acked %u >= cwnd %u", w.acked, w.cwnd);
	}
	CHECK_EQ(w.cwnd, DRAY_CWND_MAX);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "starts_full", starts_full },
		{ "nak_halves_then_grows_by_one_per_window",
		  nak_halves_then_grows_by_one_per_window },
		{ "timeout_restarts_at_min_and_slow_starts",
		  timeout_restarts_at_min_and_slow_starts },
		{ "bounds", bounds },
	};

	return unit_run("cwnd", tests, sizeof(tests) / sizeof(tests[0]));
}
