// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: counter sets and the counter commands (ALLOC, FREE and
 * BIND_COUNTER_SET, QUERY_COUNTERS; dray_admin.h).
 *
 * The data path counts in each QP's own counters only (qp->xp.stats, one
 * increment per event). A set's value is computed when it is queried:
 * what QPs counted while in the set and then left it (csets[].acc) plus,
 * for every QP in it now, what it counted since it joined (xp.stats -
 * cset_base). So a QP that leaves a set, or is destroyed, leaves its
 * share behind, and the port's default set 0 keeps the traffic of every
 * QP that never was in another set.
 *
 * Context: admin commands (process context, engine.admin_lock), taking
 * engine.lock around what they read or change of the QPs; a pass never
 * looks at the sets.
 */

#include <linux/string.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_obj.h"
#include "dev_wq.h"

/* struct dray_xp_stats is added up word by word. */
#define XP_WORDS	(sizeof(struct dray_xp_stats) / sizeof(u64))
static_assert(sizeof(struct dray_xp_stats) % sizeof(u64) == 0);

/* Where each counter of the interface is kept: word + 1, 0 for none. */
#define W(f)	(offsetof(struct dray_xp_stats, f) / sizeof(u64) + 1)
static const u8 cnt_word[DRAY_CNT_MAX] = {
	[DRAY_CNT_TX_PKTS]		= W(tx_pkts),
	[DRAY_CNT_TX_BYTES]		= W(tx_bytes),
	[DRAY_CNT_RX_PKTS]		= W(rx_pkts),
	[DRAY_CNT_RX_BYTES]		= W(rx_bytes),
	[DRAY_CNT_TX_DROPS]		= W(tx_drops),
	[DRAY_CNT_RX_DROPS]		= W(rx_drops),
	[DRAY_CNT_RX_ICRC_ERRORS]	= W(rx_icrc_errors),
	[DRAY_CNT_PKEY_VIOLATIONS]	= W(pkey_violations),
	[DRAY_CNT_QKEY_VIOLATIONS]	= W(qkey_violations),
	[DRAY_CNT_RX_NO_WQE]		= W(rx_no_wqe),
	[DRAY_CNT_LOCAL_ACK_TIMEOUTS]	= W(timeouts),
	[DRAY_CNT_LATE_TIMERS]		= W(late_timers),
	[DRAY_CNT_RETX_PKTS]		= W(retx_pkts),
	[DRAY_CNT_OUT_OF_SEQUENCE]	= W(out_of_seq),
	[DRAY_CNT_DUP_REQUESTS]		= W(dup_requests),
	[DRAY_CNT_BAD_RESPONSES]	= W(bad_responses),
	[DRAY_CNT_SEQ_NAKS_TX]		= W(seq_naks_tx),
	[DRAY_CNT_SEQ_NAKS_RX]		= W(seq_naks_rx),
	[DRAY_CNT_RNR_NAKS_TX]		= W(rnr_naks_tx),
	[DRAY_CNT_RNR_NAKS_RX]		= W(rnr_naks_rx),
	[DRAY_CNT_INV_REQ_NAKS_TX]	= W(inv_req_naks_tx),
	[DRAY_CNT_INV_REQ_NAKS_RX]	= W(inv_req_naks_rx),
	[DRAY_CNT_ACCESS_NAKS_TX]	= W(access_naks_tx),
	[DRAY_CNT_ACCESS_NAKS_RX]	= W(access_naks_rx),
	[DRAY_CNT_OP_NAKS_TX]		= W(op_naks_tx),
	[DRAY_CNT_OP_NAKS_RX]		= W(op_naks_rx),
	[DRAY_CNT_REQ_CQE_ERRORS]	= W(req_cqe_errors),
	[DRAY_CNT_RESP_CQE_ERRORS]	= W(resp_cqe_errors),
	[DRAY_CNT_REQ_CQE_FLUSHES]	= W(req_cqe_flushes),
	[DRAY_CNT_RESP_CQE_FLUSHES]	= W(resp_cqe_flushes),
	[DRAY_CNT_TAIL_PROBES]		= W(tail_probes),
	/* RX_MALFORMED and RX_NO_QP: the port's own, set 0 only. */
};

#undef W

/* Every word of the QP counters is some counter of the interface. */
static_assert(XP_WORDS + 2 == DRAY_CNT_MAX);

/* @sum += @now - @base, word by word. */
static void stats_add_delta(struct dray_xp_stats *sum,
			    const struct dray_xp_stats *now,
			    const struct dray_xp_stats *base)
{
	const u64 *n = (const u64 *)now, *b = (const u64 *)base;
	u64 *s = (u64 *)sum;
	size_t i;

	for (i = 0; i < XP_WORDS; i++)
		s[i] += n[i] - b[i];
}

static bool cset_valid(const struct dray_hw *hw, u32 set)
{
	return set == 0 || (set < DRAY_HW_MAX_CSET && hw->csets[set].valid);
}

/* Move @qp's share since it joined its set into that set. */
static void cset_leave(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	stats_add_delta(&hw->csets[qp->cset].acc, &qp->xp.stats,
			&qp->cset_base);
	qp->cset_base = qp->xp.stats;
}

void dray_hw_cset_qp_gone(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	lockdep_assert_held(&hw->engine.lock);
	cset_leave(hw, qp);
}

void dray_hw_csets_reset(struct dray_hw *hw)
{
	lockdep_assert_held(&hw->engine.admin_lock);
	memset(hw->csets, 0, sizeof(hw->csets));
}

void dray_hw_cmd_alloc_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	u32 set;

	mutex_lock(&hw->engine.admin_lock);
	for (set = 1; set < DRAY_HW_MAX_CSET; set++)
		if (!hw->csets[set].valid)
			break;
	if (set == DRAY_HW_MAX_CSET) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES,
			     DRAY_AQ_SYN_COUNTER_SET);
	} else {
		memset(&hw->csets[set], 0, sizeof(hw->csets[set]));
		hw->csets[set].valid = true;
		res->result = set;
	}
	mutex_unlock(&hw->engine.admin_lock);
}

/* Is a QP counting in @set? admin_lock held. */
static bool cset_in_use(struct dray_hw *hw, u32 set)
{
	struct dray_hw_qp *qp;
	unsigned long qpn;

	xa_for_each(&hw->engine.qps, qpn, qp)
		if (qp->cset == set)
			return true;
	return false;
}

void dray_hw_cmd_free_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_counter_set *cmd = &e->u.counter_set;
	u32 set = le32_to_cpu(cmd->set);

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (!set || set >= DRAY_HW_MAX_CSET) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM,
			     DRAY_AQ_SYN_COUNTER_SET);
		return;
	}
	mutex_lock(&hw->engine.admin_lock);
	if (!hw->csets[set].valid)
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND,
			     DRAY_AQ_SYN_COUNTER_SET);
	else if (cset_in_use(hw, set))
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_COUNTER_SET);
	else
		hw->csets[set].valid = false;
	mutex_unlock(&hw->engine.admin_lock);
}

void dray_hw_cmd_bind_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_bind_counter_set *cmd = &e->u.bind_counter_set;
	u32 set = le32_to_cpu(cmd->set);
	struct dray_hw_qp *qp;

	mutex_lock(&hw->engine.admin_lock);
	if (!cset_valid(hw, set)) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND,
			     DRAY_AQ_SYN_COUNTER_SET);
		goto unlock;
	}
	dray_hw_engine_lock(hw);
	qp = dray_hw_qp_find(hw, le32_to_cpu(cmd->qpn));
	if (qp && qp->cset != set) {
		cset_leave(hw, qp);
		qp->cset = set;
	}
	dray_hw_engine_unlock(hw);
	if (!qp)
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_QPN);
unlock:
	mutex_unlock(&hw->engine.admin_lock);
}

/* The value of @set; false if there is no such set. admin_lock held. */
static bool cset_sum(struct dray_hw *hw, u32 set, struct dray_xp_stats *sum)
{
	struct dray_hw_qp *qp;
	unsigned long qpn;

	if (!cset_valid(hw, set))
		return false;
	*sum = hw->csets[set].acc;
	dray_hw_engine_lock(hw);
	xa_for_each(&hw->engine.qps, qpn, qp)
		if (qp->cset == set)
			stats_add_delta(sum, &qp->xp.stats, &qp->cset_base);
	dray_hw_engine_unlock(hw);
	return true;
}

/* A QP's own counters; false if there is no such QP. admin_lock held. */
static bool qp_stats(struct dray_hw *hw, u32 qpn, struct dray_xp_stats *out)
{
	struct dray_hw_qp *qp;

	dray_hw_engine_lock(hw);
	qp = dray_hw_qp_find(hw, qpn);
	if (qp)
		*out = qp->xp.stats;
	dray_hw_engine_unlock(hw);
	return qp;
}

static void counters_out(const struct dray_xp_stats *s,
			 struct dray_counters *out)
{
	const u64 *w = (const u64 *)s;
	size_t i;

	for (i = 0; i < DRAY_CNT_MAX; i++)
		out->v[i] = cpu_to_le64(cnt_word[i] ? w[cnt_word[i] - 1] : 0);
}

void dray_hw_cmd_query_counters(struct dray_hw *hw,
				const struct dray_aq_entry *e,
				struct dray_aq_result *res)
{
	const struct dray_cmd_query_id *cmd = &e->u.query_id;
	u32 id = le32_to_cpu(cmd->id);
	struct dray_counters out;
	struct dray_xp_stats s;
	bool found;

	if (!dray_hw_query_id_ok(cmd, res))
		return;
	if (cmd->kind != DRAY_COUNTERS_SET && cmd->kind != DRAY_COUNTERS_QP) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_SCOPE);
		return;
	}

	mutex_lock(&hw->engine.admin_lock);
	if (cmd->kind == DRAY_COUNTERS_SET)
		found = cset_sum(hw, id, &s);
	else
		found = qp_stats(hw, id, &s);
	mutex_unlock(&hw->engine.admin_lock);
	if (!found) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND,
			     cmd->kind == DRAY_COUNTERS_SET ?
			     DRAY_AQ_SYN_COUNTER_SET : DRAY_AQ_SYN_QPN);
		return;
	}
	counters_out(&s, &out);
	if (cmd->kind == DRAY_COUNTERS_SET && !id) {
		out.v[DRAY_CNT_RX_MALFORMED] =
			cpu_to_le64(atomic64_read(&hw->rx_malformed));
		out.v[DRAY_CNT_RX_NO_QP] =
			cpu_to_le64(atomic64_read(&hw->rx_roce_no_qp));
	}
	dray_hw_mailbox_out(hw, le64_to_cpu(cmd->out_addr),
			    le32_to_cpu(cmd->out_len), &out, sizeof(out), res);
}
