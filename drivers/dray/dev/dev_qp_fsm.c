// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the IBTA QP state machine as MODIFY_QP applies it
 * (dev_qp_fsm.h). Pure: no kernel state, so tests/unit compiles this file
 * in user space (after its kshim.h) and walks every transition.
 */

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/kernel.h>
#endif

#include "dev_qp_fsm.h"

/* QP type classes of the attribute rules. */
enum { QPC_RC, QPC_UC, QPC_UD, QPC_GSI, QPC_XI, QPC_XT, QPC_NUM };

#define QPA(x)	DRAY_QP_ATTR_##x

/*
 * One allowed state transition (IBTA 11.2.5 / 10.3.1, as the RDMA core
 * checks it in ib_modify_qp_is_ok()): for each type class the attributes
 * a MODIFY_QP must carry and those it may carry. A class with no entry
 * (both masks 0 and not in @classes) cannot take the transition.
 */
struct qp_transition {
	u8	from;
	u8	to;
	u8	classes;		/* BIT(QPC_*) */
	u32	req[QPC_NUM];
	u32	opt[QPC_NUM];
};

#define ALL_CLASSES	(BIT(QPC_RC) | BIT(QPC_UC) | BIT(QPC_UD) | \
			 BIT(QPC_GSI) | BIT(QPC_XI) | BIT(QPC_XT))
/* The unreliable services have a send queue error state. */
#define SQE_CLASSES	(BIT(QPC_UC) | BIT(QPC_UD) | BIT(QPC_GSI))

/* RC attributes that a send queue in SQD may change. */
#define RC_SQD_OPT	(QPA(PORT) | QPA(AV) | QPA(TIMEOUT) | \
			 QPA(RETRY_CNT) | QPA(RNR_RETRY) | \
			 QPA(MAX_QP_RD_ATOMIC) | QPA(MAX_DEST_RD_ATOMIC) | \
			 QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX) | \
			 QPA(MIN_RNR_TIMER))
#define RC_RTS_OPT	(QPA(CUR_STATE) | QPA(ACCESS_FLAGS) | \
			 QPA(MIN_RNR_TIMER))
#define UC_RTS_OPT	(QPA(CUR_STATE) | QPA(ACCESS_FLAGS))
#define UC_INIT_ATTRS	(QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS))
#define DG_RTS_OPT	(QPA(CUR_STATE) | QPA(QKEY))
/* XRC initiator (XI) and target (XT), as the RDMA core has them. */
#define XI_RTS_OPT	(QPA(CUR_STATE) | QPA(ACCESS_FLAGS))
#define XT_RTS_OPT	(QPA(CUR_STATE) | QPA(ACCESS_FLAGS) | \
			 QPA(MIN_RNR_TIMER))
#define XRC_RTR_REQ	(QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) | \
			 QPA(RQ_PSN))

static const struct qp_transition qp_transitions[] = {
	{ DRAY_QPS_RESET, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RESET, DRAY_QPS_INIT, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS),
		[QPC_UC]  = UC_INIT_ATTRS,
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_XI]  = UC_INIT_ATTRS,
		[QPC_XT]  = UC_INIT_ATTRS,
	  } },
	{ DRAY_QPS_INIT, DRAY_QPS_INIT, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS),
		[QPC_UC]  = UC_INIT_ATTRS,
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_XI]  = UC_INIT_ATTRS,
		[QPC_XT]  = UC_INIT_ATTRS,
	  } },
	{ DRAY_QPS_INIT, DRAY_QPS_RTR, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) |
			    QPA(RQ_PSN) | QPA(MAX_DEST_RD_ATOMIC) |
			    QPA(MIN_RNR_TIMER),
		[QPC_UC]  = QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) |
			    QPA(RQ_PSN),
		[QPC_XI]  = XRC_RTR_REQ,
		[QPC_XT]  = XRC_RTR_REQ | QPA(MAX_DEST_RD_ATOMIC) |
			    QPA(MIN_RNR_TIMER),
	  },
	  .opt = {
		[QPC_RC]  = QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
		[QPC_UC]  = QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_XI]  = QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
		[QPC_XT]  = QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
	  } },
	{ DRAY_QPS_RTR, DRAY_QPS_RTS, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(TIMEOUT) | QPA(RETRY_CNT) | QPA(RNR_RETRY) |
			    QPA(SQ_PSN) | QPA(MAX_QP_RD_ATOMIC),
		[QPC_UC]  = QPA(SQ_PSN),
		[QPC_UD]  = QPA(SQ_PSN),
		[QPC_GSI] = QPA(SQ_PSN),
		[QPC_XI]  = QPA(TIMEOUT) | QPA(RETRY_CNT) | QPA(RNR_RETRY) |
			    QPA(SQ_PSN) | QPA(MAX_QP_RD_ATOMIC),
		[QPC_XT]  = QPA(TIMEOUT) | QPA(SQ_PSN),
	  },
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UC]  = UC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
		[QPC_XI]  = XI_RTS_OPT,
		[QPC_XT]  = XT_RTS_OPT,
	  } },
	{ DRAY_QPS_RTS, DRAY_QPS_RTS, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UC]  = UC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
		[QPC_XI]  = XI_RTS_OPT,
		[QPC_XT]  = XT_RTS_OPT,
	  } },
	{ DRAY_QPS_RTS, DRAY_QPS_SQD, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_UC]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_UD]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_GSI] = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_XI]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_XT]  = QPA(EN_SQD_ASYNC_NOTIFY),
	  } },
	{ DRAY_QPS_SQD, DRAY_QPS_RTS, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UC]  = UC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
		[QPC_XI]  = XI_RTS_OPT,
		[QPC_XT]  = XT_RTS_OPT,
	  } },
	{ DRAY_QPS_SQD, DRAY_QPS_SQD, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_SQD_OPT,
		[QPC_UC]  = QPA(AV) | QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_XI]  = QPA(PORT) | QPA(AV) | QPA(TIMEOUT) |
			    QPA(RETRY_CNT) | QPA(RNR_RETRY) |
			    QPA(MAX_QP_RD_ATOMIC) | QPA(ACCESS_FLAGS) |
			    QPA(PKEY_INDEX),
		[QPC_XT]  = QPA(PORT) | QPA(AV) | QPA(TIMEOUT) |
			    QPA(MAX_DEST_RD_ATOMIC) | QPA(ACCESS_FLAGS) |
			    QPA(PKEY_INDEX) | QPA(MIN_RNR_TIMER),
	  } },
	/* Only the unreliable services have a send queue error state. */
	{ DRAY_QPS_SQE, DRAY_QPS_RTS, SQE_CLASSES,
	  .opt = {
		[QPC_UC]  = UC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
	  } },
	/* Every state but RESET may go to ERR; every state to RESET. */
	{ DRAY_QPS_INIT, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_INIT, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_RTR, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RTR, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_RTS, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RTS, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_SQD, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_SQD, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_SQE, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_SQE, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_ERR, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_ERR, DRAY_QPS_ERR, ALL_CLASSES },
};

#define QP_ATTR_KNOWN	(QPA(STATE) | QPA(CUR_STATE) | \
			 QPA(EN_SQD_ASYNC_NOTIFY) | QPA(ACCESS_FLAGS) | \
			 QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY) | QPA(AV) | \
			 QPA(PATH_MTU) | QPA(TIMEOUT) | QPA(RETRY_CNT) | \
			 QPA(RNR_RETRY) | QPA(RQ_PSN) | \
			 QPA(MAX_QP_RD_ATOMIC) | QPA(MIN_RNR_TIMER) | \
			 QPA(SQ_PSN) | QPA(MAX_DEST_RD_ATOMIC) | \
			 QPA(DEST_QPN))

static int qp_class(u8 type)
{
	switch (type) {
	case DRAY_QPT_UC:
		return QPC_UC;
	case DRAY_QPT_UD:
		return QPC_UD;
	case DRAY_QPT_GSI:
		return QPC_GSI;
	case DRAY_QPT_XRC_INI:
		return QPC_XI;
	case DRAY_QPT_XRC_TGT:
		return QPC_XT;
	default:
		return QPC_RC;
	}
}

static int qp_transition_check(u8 type, u8 from, u8 to, u32 mask,
			       u32 *syndrome)
{
	int class = qp_class(type);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(qp_transitions); i++) {
		const struct qp_transition *t = &qp_transitions[i];
		u32 allowed;

		if (t->from != from || t->to != to ||
		    !(t->classes & BIT(class)))
			continue;
		allowed = t->req[class] | t->opt[class] | QPA(STATE);
		*syndrome = DRAY_AQ_SYN_QP_ATTR;
		if ((mask & t->req[class]) != t->req[class] ||
		    (mask & ~allowed))
			return DRAY_AQ_STS_BAD_PARAM;
		return DRAY_AQ_STS_OK;
	}
	*syndrome = DRAY_AQ_SYN_QP_STATE;
	return DRAY_AQ_STS_BAD_PARAM;
}

int dray_qp_modify_check(u8 type, u8 cur, u32 mask, u8 state, u8 cur_state,
			 u8 *next, u32 *syndrome)
{
	*next = cur;
	*syndrome = DRAY_AQ_SYN_QP_ATTR;
	if (mask & ~QP_ATTR_KNOWN)
		return DRAY_AQ_STS_BAD_PARAM;
	if (mask & QPA(STATE))
		*next = state;
	*syndrome = DRAY_AQ_SYN_QP_STATE;
	if (*next > DRAY_QPS_ERR ||
	    ((mask & QPA(CUR_STATE)) && cur_state != cur))
		return DRAY_AQ_STS_BAD_PARAM;
	return qp_transition_check(type, cur, *next, mask, syndrome);
}
