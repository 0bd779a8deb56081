// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: the device's own state of QPs, CQs and MRs in
 * `rdma -dd resource show` (the core's driver attributes, one nested
 * RDMA_NLDEV_ATTR_DRIVER table per object), read with QUERY_STATE. Names
 * are dray's; Documentation/counters.md lists them.
 *
 * An object the device cannot report on (a command failed) gets no
 * details rather than failing the whole dump of its kind.
 *
 * Context: process (netlink), may sleep; the core holds a reference on
 * the object.
 */

#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "dray.h"

struct res_u32 {
	const char	*name;
	u32		value;
};

/* Put every attribute of @a; -EMSGSIZE when the message is full. */
static int res_put_u32s(struct sk_buff *msg, const struct res_u32 *a,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rdma_nl_put_driver_u32(msg, a[i].name, a[i].value))
			return -EMSGSIZE;
	return 0;
}

static const char *res_flag(u8 flags, u8 bit, const char *name)
{
	return flags & bit ? name : "";
}

static int res_qp_numbers(struct sk_buff *msg,
			  const struct dray_qp_state_out *q)
{
	const struct res_u32 a[] = {
		{ "sq_posted", le32_to_cpu(q->sq_posted) },
		{ "sq_fetched", le32_to_cpu(q->sq_fetched) },
		{ "sq_completed", le32_to_cpu(q->sq_completed) },
		{ "rq_posted", le32_to_cpu(q->rq_posted) },
		{ "rq_fetched", le32_to_cpu(q->rq_fetched) },
		{ "rq_completed", le32_to_cpu(q->rq_completed) },
		{ "next_psn", le32_to_cpu(q->next_psn) },
		{ "una_psn", le32_to_cpu(q->una_psn) },
		{ "max_psn", le32_to_cpu(q->max_psn) },
		{ "epsn", le32_to_cpu(q->epsn) },
		{ "msn", le32_to_cpu(q->msn) },
		{ "cwnd", le32_to_cpu(q->cwnd) },
		{ "ssthresh", le32_to_cpu(q->ssthresh) },
		{ "retry_left", q->retry_left },
		{ "rnr_retry_left", q->rnr_retry_left },
		{ "rd_atomic", q->rd_atomic },
		{ "counter_set", le32_to_cpu(q->counter_set) },
	};

	return res_put_u32s(msg, a, ARRAY_SIZE(a));
}

/* The QP's own counters worth seeing next to its state (QUERY_COUNTERS). */
static const u8 res_qp_counters[] = {
	DRAY_CNT_TX_PKTS, DRAY_CNT_RX_PKTS, DRAY_CNT_RETX_PKTS,
	DRAY_CNT_LOCAL_ACK_TIMEOUTS, DRAY_CNT_OUT_OF_SEQUENCE,
	DRAY_CNT_DUP_REQUESTS, DRAY_CNT_SEQ_NAKS_RX, DRAY_CNT_RNR_NAKS_RX,
	DRAY_CNT_RNR_NAKS_TX, DRAY_CNT_REQ_CQE_ERRORS, DRAY_CNT_RESP_CQE_ERRORS,
};

static int res_qp_stats(struct sk_buff *msg, struct ib_qp *ibqp)
{
	u64 v[DRAY_CNT_MAX];
	size_t i;

	if (dray_admin_query_counters(to_ddev(ibqp->device), DRAY_COUNTERS_QP,
				      ibqp->qp_num, v))
		return 0;
	for (i = 0; i < ARRAY_SIZE(res_qp_counters); i++)
		if (rdma_nl_put_driver_u64(msg,
					   dray_counter_name(res_qp_counters[i]),
					   v[res_qp_counters[i]]))
			return -EMSGSIZE;
	return 0;
}

static int res_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct dray_qp_state_out *q;
	struct dray_obj_state st;
	char flags[64];
	int ret;

	if (dray_admin_query_state(to_ddev(ibqp->device), DRAY_STATE_QP,
				   ibqp->qp_num, &st))
		return 0;
	q = &st.qp;
	ret = res_qp_numbers(msg, q);
	if (!ret)
		ret = res_qp_stats(msg, ibqp);
	if (ret)
		return ret;
	snprintf(flags, sizeof(flags), "%s%s%s%s%s",
		 res_flag(q->flags, DRAY_QPST_F_ERR, "err,"),
		 res_flag(q->flags, DRAY_QPST_F_RNR_WAIT, "rnr_wait,"),
		 res_flag(q->flags, DRAY_QPST_F_SQ_DRAINING, "sq_draining,"),
		 res_flag(q->flags, DRAY_QPST_F_IN_MSG, "in_msg,"),
		 res_flag(q->flags, DRAY_QPST_F_NAK_SENT, "nak_sent,"));
	if (flags[0])
		flags[strlen(flags) - 1] = '\0';
	return rdma_nl_put_driver_string(msg, "flags", flags[0] ? flags : "-")
	       ? -EMSGSIZE : 0;
}

static int res_cq(struct sk_buff *msg, struct ib_cq *ibcq)
{
	u32 cqn = to_dcq(ibcq)->cqn;
	struct dray_cq_state_out *c;
	struct dray_obj_state st;

	if (dray_admin_query_state(to_ddev(ibcq->device), DRAY_STATE_CQ,
				   cqn, &st))
		return 0;
	c = &st.cq;
	{
		const struct res_u32 a[] = {
			{ "cqn", cqn },
			{ "depth", le32_to_cpu(c->depth) },
			{ "pi", le32_to_cpu(c->pi) },
			{ "ci", le32_to_cpu(c->ci) },
			{ "eqn", le32_to_cpu(c->eqn) },
			{ "armed", c->armed },
			{ "overflow", c->error },
			{ "qps", le32_to_cpu(c->users) },
		};

		return res_put_u32s(msg, a, ARRAY_SIZE(a));
	}
}

static int res_mr(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct dray_mr_state_out *m;
	struct dray_obj_state st;
	int ret;

	if (dray_admin_query_state(to_ddev(ibmr->device), DRAY_STATE_MR,
				   ibmr->lkey, &st))
		return 0;
	m = &st.mr;
	{
		const struct res_u32 a[] = {
			{ "pdn", le32_to_cpu(m->pdn) },
			{ "n_pages", le32_to_cpu(m->n_pages) },
			{ "windows", le32_to_cpu(m->windows) },
		};

		ret = res_put_u32s(msg, a, ARRAY_SIZE(a));
	}
	if (ret)
		return ret;
	if (rdma_nl_put_driver_u32_hex(msg, "key", le32_to_cpu(m->key)) ||
	    rdma_nl_put_driver_u64_hex(msg, "iova", le64_to_cpu(m->iova)) ||
	    rdma_nl_put_driver_u64(msg, "length", le64_to_cpu(m->length)) ||
	    rdma_nl_put_driver_string(msg, "state",
				      m->state == DRAY_MR_STATE_VALID ?
				      "valid" : "free") ||
	    rdma_nl_put_driver_string(msg, "kind",
				      m->flags & DRAY_MR_F_FAST_REG ?
				      "fast_reg" : m->flags & DRAY_MR_F_PHYSICAL ?
				      "physical" : "mtt"))
		return -EMSGSIZE;
	return 0;
}

/* Close the nested table of driver attributes; a failure drops it. */
static int res_end(struct sk_buff *msg, struct nlattr *table, int ret)
{
	if (ret)
		nla_nest_cancel(msg, table);
	else
		nla_nest_end(msg, table);
	return ret;
}

int dray_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return res_end(msg, table, res_qp(msg, ibqp));
}

int dray_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return res_end(msg, table, res_cq(msg, ibcq));
}

int dray_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct nlattr *table;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	return res_end(msg, table, res_mr(msg, ibmr));
}
