/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the QP state machine (dev_qp_fsm.c), pure logic that
 * tests/unit compiles in user space.
 */
#ifndef DRAY_DEV_QP_FSM_H
#define DRAY_DEV_QP_FSM_H

#include <dray/dray_admin.h>

/**
 * dray_qp_modify_check() - may MODIFY_QP take a QP where it asks?
 * @type: the QP's type (enum dray_qp_type)
 * @cur: its current state (enum dray_qp_state)
 * @mask: the command's attr_mask (DRAY_QP_ATTR_*)
 * @state: the command's state field (used with DRAY_QP_ATTR_STATE)
 * @cur_state: the command's cur_state field (with DRAY_QP_ATTR_CUR_STATE)
 * @next: receives the state the QP will be in (@cur without a new state)
 * @syndrome: receives the DRAY_AQ_SYN_* of a refusal
 *
 * The rules are IBTA's (vol. 1 11.2.5, 10.3.1), as the RDMA core checks
 * them in ib_modify_qp_is_ok(): the transition must exist for the type,
 * every attribute it requires must be in @mask, and no attribute outside
 * those it requires or allows. Attribute values are not checked here.
 *
 * Return: DRAY_AQ_STS_OK, or DRAY_AQ_STS_BAD_PARAM with *syndrome
 * QP_STATE (no such transition, a bad state, cur_state not the state)
 * or QP_ATTR (an unknown, missing or not allowed attribute).
 */
int dray_qp_modify_check(u8 type, u8 cur, u32 mask, u8 state, u8 cur_state,
			 u8 *next, u32 *syndrome);

#endif /* DRAY_DEV_QP_FSM_H */
