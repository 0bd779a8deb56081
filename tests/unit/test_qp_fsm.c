// SPDX-License-Identifier: GPL-2.0-only
/*
 * The QP state machine (drivers/dray/dev/dev_qp_fsm.c) against IBTA vol. 1
 * 11.2.5 (RC, UC, UD, GSI) and annex A14 (XRC): which transitions exist for each type, which
 * attributes each requires and allows, and how a MODIFY_QP with a bad
 * state, cur_state or attribute is refused.
 */
#include <stdlib.h>

#include "kshim.h"
#include "dev_qp_fsm.c"

#include "unit.h"

#define A(x)	DRAY_QP_ATTR_##x
#define NSTATES	(DRAY_QPS_ERR + 1)

static const u8 types[] = { DRAY_QPT_RC, DRAY_QPT_UC, DRAY_QPT_UD,
			     DRAY_QPT_GSI, DRAY_QPT_XRC_INI, DRAY_QPT_XRC_TGT };

/* IBTA's transitions, written out independently of the device's table. */
static bool ibta_allows(u8 type, u8 from, u8 to)
{
	/* SQE: the unreliable services (UC, UD, GSI). */
	bool unreliable = type == DRAY_QPT_UC || type == DRAY_QPT_UD ||
			  type == DRAY_QPT_GSI;

	if (to == DRAY_QPS_RESET)
		return true;
	if (to == DRAY_QPS_ERR)
		return from != DRAY_QPS_RESET;
	switch (from) {
	case DRAY_QPS_RESET:
		return to == DRAY_QPS_INIT;
	case DRAY_QPS_INIT:
		return to == DRAY_QPS_INIT || to == DRAY_QPS_RTR;
	case DRAY_QPS_RTR:
		return to == DRAY_QPS_RTS;
	case DRAY_QPS_RTS:
		return to == DRAY_QPS_RTS || to == DRAY_QPS_SQD;
	case DRAY_QPS_SQD:
		return to == DRAY_QPS_SQD || to == DRAY_QPS_RTS;
	case DRAY_QPS_SQE:
		return unreliable && to == DRAY_QPS_RTS;
	default:
		return false;
	}
}

static int check(u8 type, u8 cur, u32 mask, u8 state, u32 *syn, u8 *next)
{
	return dray_qp_modify_check(type, cur, mask, state, 0, next, syn);
}

/* Attributes each transition requires (IBTA 11.2.5.4, table 91 on). */
static u32 ibta_required(u8 type, u8 from, u8 to)
{
	bool xrc = type == DRAY_QPT_XRC_INI || type == DRAY_QPT_XRC_TGT;

	if (from == DRAY_QPS_RESET && to == DRAY_QPS_INIT) {
		if (type == DRAY_QPT_RC || type == DRAY_QPT_UC || xrc)
			return A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS);
		if (type == DRAY_QPT_UD)
			return A(PKEY_INDEX) | A(PORT) | A(QKEY);
		return A(PKEY_INDEX) | A(QKEY);
	}
	if (from == DRAY_QPS_INIT && to == DRAY_QPS_RTR &&
	    type == DRAY_QPT_RC)
		return A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
		       A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER);
	if (from == DRAY_QPS_INIT && to == DRAY_QPS_RTR &&
	    (type == DRAY_QPT_UC || type == DRAY_QPT_XRC_INI))
		return A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN);
	/* The target, a responder only, also needs what RC's does. */
	if (from == DRAY_QPS_INIT && to == DRAY_QPS_RTR &&
	    type == DRAY_QPT_XRC_TGT)
		return A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
		       A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER);
	if (from == DRAY_QPS_RTR && to == DRAY_QPS_RTS) {
		if (type == DRAY_QPT_RC || type == DRAY_QPT_XRC_INI)
			return A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
			       A(SQ_PSN) | A(MAX_QP_RD_ATOMIC);
		if (type == DRAY_QPT_XRC_TGT)
			return A(TIMEOUT) | A(SQ_PSN);
		return A(SQ_PSN);
	}
	return 0;
}

UNIT_TEST(transitions_exist_as_ibta_says)
{
	unsigned int t, from, to;

	for (t = 0; t < ARRAY_SIZE(types); t++)
		for (from = 0; from < NSTATES; from++)
			for (to = 0; to < NSTATES; to++) {
				u32 mask = A(STATE) |
					   ibta_required(types[t], from, to);
				u32 syn = 0;
				u8 next = 0xff;
				int st = check(types[t], from, mask, to, &syn,
					       &next);
				bool ok = ibta_allows(types[t], from, to);

				CHECK(ok ? st == DRAY_AQ_STS_OK :
				      st == DRAY_AQ_STS_BAD_PARAM &&
				      syn == DRAY_AQ_SYN_QP_STATE,
				      "type %u %u -> %u: status %d syndrome %u",
				      types[t], from, to, st, syn);
				if (ok)
					CHECK_EQ(next, to);
			}
}

/* Leaving out any one required attribute is refused (QP_ATTR). */
UNIT_TEST(every_required_attribute_is_required)
{
	unsigned int t, from, to, bit;

	for (t = 0; t < ARRAY_SIZE(types); t++)
		for (from = 0; from < NSTATES; from++)
			for (to = 0; to < NSTATES; to++) {
				u32 req = ibta_required(types[t], from, to);

				if (!ibta_allows(types[t], from, to))
					continue;
				for (bit = 0; bit < 32; bit++) {
					u32 syn = 0;
					u8 next;
					int st;

					if (!(req & BIT(bit)))
						continue;
					st = check(types[t], from,
						   (A(STATE) | req) & ~BIT(bit),
						   to, &syn, &next);
					CHECK(st == DRAY_AQ_STS_BAD_PARAM &&
					      syn == DRAY_AQ_SYN_QP_ATTR,
					      "type %u %u -> %u without bit %u",
					      types[t], from, to, bit);
				}
			}
}

UNIT_TEST(attributes_not_allowed)
{
	u32 syn;
	u8 next;

	/* UD has no remote access rights; RC has no Q_Key. */
	CHECK_EQ(check(DRAY_QPT_UD, DRAY_QPS_RESET,
		       A(STATE) | A(PKEY_INDEX) | A(PORT) | A(QKEY) |
		       A(ACCESS_FLAGS), DRAY_QPS_INIT, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RESET,
		       A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) |
		       A(QKEY), DRAY_QPS_INIT, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	/* A path in RTR -> RTS, a PSN on the way to RESET or ERR. */
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RTR,
		       A(STATE) | ibta_required(DRAY_QPT_RC, DRAY_QPS_RTR,
						DRAY_QPS_RTS) | A(AV),
		       DRAY_QPS_RTS, &syn, &next), DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RTS, A(STATE) | A(SQ_PSN),
		       DRAY_QPS_ERR, &syn, &next), DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	CHECK_EQ(check(DRAY_QPT_UD, DRAY_QPS_SQE, A(STATE) | A(QKEY),
		       DRAY_QPS_RESET, &syn, &next), DRAY_AQ_STS_BAD_PARAM);
	/* UC: no Q_Key, no RNR timer, no read/atomic depth, no timeouts. */
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_RESET,
		       A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) |
		       A(QKEY), DRAY_QPS_INIT, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_INIT,
		       A(STATE) | ibta_required(DRAY_QPT_UC, DRAY_QPS_INIT,
						DRAY_QPS_RTR) |
		       A(MAX_DEST_RD_ATOMIC), DRAY_QPS_RTR, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_RTR,
		       A(STATE) | A(SQ_PSN) | A(TIMEOUT), DRAY_QPS_RTS, &syn,
		       &next), DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_RTS,
		       A(STATE) | A(MIN_RNR_TIMER), DRAY_QPS_RTS, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	/*
	 * XRC: the initiator has no responder attributes, the target no
	 * requester ones (and neither a Q_Key).
	 */
	CHECK_EQ(check(DRAY_QPT_XRC_INI, DRAY_QPS_INIT,
		       A(STATE) | ibta_required(DRAY_QPT_XRC_INI, DRAY_QPS_INIT,
						DRAY_QPS_RTR) |
		       A(MAX_DEST_RD_ATOMIC), DRAY_QPS_RTR, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_XRC_TGT, DRAY_QPS_RTR,
		       A(STATE) | ibta_required(DRAY_QPT_XRC_TGT, DRAY_QPS_RTR,
						DRAY_QPS_RTS) |
		       A(RETRY_CNT), DRAY_QPS_RTS, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_XRC_TGT, DRAY_QPS_RESET,
		       A(STATE) | A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS) |
		       A(QKEY), DRAY_QPS_INIT, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(check(DRAY_QPT_XRC_INI, DRAY_QPS_RTS,
		       A(STATE) | A(MIN_RNR_TIMER), DRAY_QPS_RTS, &syn, &next),
		 DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	CHECK_EQ(check(DRAY_QPT_XRC_TGT, DRAY_QPS_RTS,
		       A(STATE) | A(MIN_RNR_TIMER), DRAY_QPS_RTS, &syn, &next),
		 DRAY_AQ_STS_OK);
	/* Allowed optional ones pass. */
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RTS,
		       A(STATE) | A(MIN_RNR_TIMER) | A(ACCESS_FLAGS),
		       DRAY_QPS_RTS, &syn, &next), DRAY_AQ_STS_OK);
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_SQD,
		       A(STATE) | A(AV) | A(TIMEOUT) | A(MAX_QP_RD_ATOMIC),
		       DRAY_QPS_SQD, &syn, &next), DRAY_AQ_STS_OK);
	CHECK_EQ(check(DRAY_QPT_UD, DRAY_QPS_SQE, A(STATE) | A(QKEY),
		       DRAY_QPS_RTS, &syn, &next), DRAY_AQ_STS_OK);
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_SQE,
		       A(STATE) | A(ACCESS_FLAGS), DRAY_QPS_RTS,
		       &syn, &next), DRAY_AQ_STS_OK);
	CHECK_EQ(check(DRAY_QPT_UC, DRAY_QPS_SQD,
		       A(STATE) | A(AV) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
		       DRAY_QPS_SQD, &syn, &next), DRAY_AQ_STS_OK);
	CHECK_EQ(check(DRAY_QPT_GSI, DRAY_QPS_RTS,
		       A(STATE) | A(EN_SQD_ASYNC_NOTIFY), DRAY_QPS_SQD, &syn,
		       &next), DRAY_AQ_STS_OK);
}

UNIT_TEST(bad_state_fields)
{
	u32 syn;
	u8 next;
	int st;

	/* A state past ERR. */
	st = check(DRAY_QPT_RC, DRAY_QPS_INIT, A(STATE), DRAY_QPS_ERR + 1,
		   &syn, &next);
	CHECK_EQ(st, DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_STATE);
	st = check(DRAY_QPT_RC, DRAY_QPS_INIT, A(STATE), 0xff, &syn, &next);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_STATE);
	/* cur_state must be the state, when given. */
	st = dray_qp_modify_check(DRAY_QPT_RC, DRAY_QPS_RTS,
				  A(STATE) | A(CUR_STATE), DRAY_QPS_RTS,
				  DRAY_QPS_RTR, &next, &syn);
	CHECK_EQ(st, DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_STATE);
	st = dray_qp_modify_check(DRAY_QPT_RC, DRAY_QPS_RTS,
				  A(STATE) | A(CUR_STATE), DRAY_QPS_RTS,
				  DRAY_QPS_RTS, &next, &syn);
	CHECK_EQ(st, DRAY_AQ_STS_OK);
	/* Without the CUR_STATE bit the field is ignored. */
	st = dray_qp_modify_check(DRAY_QPT_RC, DRAY_QPS_INIT, A(STATE),
				  DRAY_QPS_ERR, DRAY_QPS_SQD, &next, &syn);
	CHECK_EQ(st, DRAY_AQ_STS_OK);
	CHECK_EQ(next, DRAY_QPS_ERR);
}

UNIT_TEST(unknown_attribute_bits)
{
	static const u32 unknown[] = { 0x00004000, 0x00040000, 0x00080000,
				       0x00200000, 0x80000000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		u32 syn = 0;
		u8 next;

		CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RESET,
			       A(STATE) | unknown[i], DRAY_QPS_RESET, &syn,
			       &next), DRAY_AQ_STS_BAD_PARAM);
		CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	}
}

/* No STATE bit: the QP stays where it is, with that state's options. */
UNIT_TEST(attributes_without_a_state_change)
{
	u32 syn;
	u8 next = 0xff;

	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RTS, A(MIN_RNR_TIMER), 0, &syn,
		       &next), DRAY_AQ_STS_OK);
	CHECK_EQ(next, DRAY_QPS_RTS);
	CHECK_EQ(check(DRAY_QPT_UD, DRAY_QPS_INIT, A(QKEY), 0, &syn, &next),
		 DRAY_AQ_STS_OK);
	CHECK_EQ(next, DRAY_QPS_INIT);
	/* RESET -> RESET takes no attribute; RTR -> RTR does not exist. */
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RESET, A(PKEY_INDEX), 0, &syn,
		       &next), DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_ATTR);
	CHECK_EQ(check(DRAY_QPT_RC, DRAY_QPS_RTR, A(MIN_RNR_TIMER), 0, &syn,
		       &next), DRAY_AQ_STS_BAD_PARAM);
	CHECK_EQ(syn, DRAY_AQ_SYN_QP_STATE);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "transitions_exist_as_ibta_says",
		  transitions_exist_as_ibta_says },
		{ "every_required_attribute_is_required",
		  every_required_attribute_is_required },
		{ "attributes_not_allowed", attributes_not_allowed },
		{ "bad_state_fields", bad_state_fields },
		{ "unknown_attribute_bits", unknown_attribute_bits },
		{ "attributes_without_a_state_change",
		  attributes_without_a_state_change },
	};

	return unit_run("qp_fsm", tests, sizeof(tests) / sizeof(tests[0]));
}
