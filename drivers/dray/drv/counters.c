// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: hardware counters for `rdma statistic`.
 *
 * The NIC counts in counter sets (dray_admin.h): set 0 is the port's
 * default set, and every QP counts in it until it is bound to another.
 * The port counters (alloc_hw_port_stats/get_hw_stats) are set 0. An
 * rdma_counter of the core (automatic or manual binding) is one more set,
 * allocated when its first QP is bound, its number the counter's id: the
 * core shows a port's counters as set 0 plus every counter bound and the
 * history of the counters freed, so nothing is counted twice and nothing
 * a QP did is lost when it is unbound or destroyed (the NIC keeps its
 * share in the set it was in).
 *
 * Context: process; the core serializes the calls for one counter under
 * counter->lock, and the admin queue serializes the commands.
 */

#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#include "dray.h"

/* Names as `rdma statistic` shows them; Documentation/counters.md. */
static const struct rdma_stat_desc dray_stat_descs[DRAY_CNT_MAX] = {
	[DRAY_CNT_TX_PKTS].name			= "tx_packets",
	[DRAY_CNT_TX_BYTES].name		= "tx_bytes",
	[DRAY_CNT_RX_PKTS].name			= "rx_packets",
	[DRAY_CNT_RX_BYTES].name		= "rx_bytes",
	[DRAY_CNT_TX_DROPS].name		= "tx_drops",
	[DRAY_CNT_RX_DROPS].name		= "rx_drops",
	[DRAY_CNT_RX_ICRC_ERRORS].name		= "rx_icrc_errors",
	[DRAY_CNT_RX_MALFORMED].name		= "rx_malformed",
	[DRAY_CNT_RX_NO_QP].name		= "rx_no_qp",
	[DRAY_CNT_PKEY_VIOLATIONS].name		= "pkey_violations",
	[DRAY_CNT_QKEY_VIOLATIONS].name		= "qkey_violations",
	[DRAY_CNT_RX_NO_WQE].name		= "rx_no_wqe",
	[DRAY_CNT_LOCAL_ACK_TIMEOUTS].name	= "local_ack_timeouts",
	[DRAY_CNT_LATE_TIMERS].name		= "late_timers",
	[DRAY_CNT_RETX_PKTS].name		= "retransmitted_packets",
	[DRAY_CNT_OUT_OF_SEQUENCE].name		= "out_of_sequence",
	[DRAY_CNT_DUP_REQUESTS].name		= "duplicate_requests",
	[DRAY_CNT_BAD_RESPONSES].name		= "bad_responses",
	[DRAY_CNT_SEQ_NAKS_TX].name		= "seq_naks_sent",
	[DRAY_CNT_SEQ_NAKS_RX].name		= "seq_naks_received",
	[DRAY_CNT_RNR_NAKS_TX].name		= "rnr_naks_sent",
	[DRAY_CNT_RNR_NAKS_RX].name		= "rnr_naks_received",
	[DRAY_CNT_INV_REQ_NAKS_TX].name		= "inv_req_naks_sent",
	[DRAY_CNT_INV_REQ_NAKS_RX].name		= "inv_req_naks_received",
	[DRAY_CNT_ACCESS_NAKS_TX].name		= "access_naks_sent",
	[DRAY_CNT_ACCESS_NAKS_RX].name		= "access_naks_received",
	[DRAY_CNT_OP_NAKS_TX].name		= "op_naks_sent",
	[DRAY_CNT_OP_NAKS_RX].name		= "op_naks_received",
	[DRAY_CNT_REQ_CQE_ERRORS].name		= "req_cqe_errors",
	[DRAY_CNT_RESP_CQE_ERRORS].name		= "resp_cqe_errors",
	[DRAY_CNT_REQ_CQE_FLUSHES].name		= "req_cqe_flushes",
	[DRAY_CNT_RESP_CQE_FLUSHES].name	= "resp_cqe_flushes",
	[DRAY_CNT_TAIL_PROBES].name		= "tail_probes",
};

const char *dray_counter_name(enum dray_counter c)
{
	return dray_stat_descs[c].name;
}

static struct rdma_hw_stats *dray_stats_alloc(void)
{
	return rdma_alloc_hw_stats_struct(dray_stat_descs, DRAY_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* Read counter set @set into @stats. */
static int dray_stats_read(struct dray_dev *dev, u32 set,
			   struct rdma_hw_stats *stats)
{
	static_assert(ARRAY_SIZE(dray_stat_descs) == DRAY_CNT_MAX);
	if (stats->num_counters != DRAY_CNT_MAX)
		return -EINVAL;
	return dray_admin_query_counters(dev, DRAY_COUNTERS_SET, set,
					 stats->value);
}

static struct rdma_hw_stats *dray_alloc_hw_port_stats(struct ib_device *ibdev,
						      u32 port)
{
	return dray_stats_alloc();
}

/* The port's default counter set; the core adds the bound counters. */
static int dray_get_hw_stats(struct ib_device *ibdev,
			     struct rdma_hw_stats *stats, u32 port, int index)
{
	int ret;

	if (port != 1)
		return -EINVAL;
	ret = dray_stats_read(to_ddev(ibdev), 0, stats);
	return ret ? ret : DRAY_CNT_MAX;
}

static struct rdma_hw_stats *
dray_counter_alloc_stats(struct rdma_counter *counter)
{
	return dray_stats_alloc();
}

/*
 * Bind @ibqp to @counter: its first QP gets it a counter set of the NIC
 * (counter->id), every QP is moved into that set. The core sets nothing
 * of the QP itself: qp->counter is ours to set.
 */
static int counter_bind(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct dray_dev *dev = to_ddev(counter->device);
	bool new = false;
	u32 set;
	int ret;

	if (!counter->id) {
		ret = dray_admin_alloc_counter_set(dev, &set);
		if (ret)
			return ret;
		counter->id = set;
		new = true;
	}
	ret = dray_admin_bind_counter_set(dev, ibqp->qp_num, counter->id);
	if (ret) {
		if (new) {
			dray_admin_free_counter_set(dev, counter->id);
			counter->id = 0;
		}
		return ret;
	}
	ibqp->counter = counter;
	return 0;
}

/* Back to the port's default set; the QP's share stays in the counter's. */
static int counter_unbind(struct ib_qp *ibqp)
{
	int ret;

	ret = dray_admin_bind_counter_set(to_ddev(ibqp->device), ibqp->qp_num,
					  0);
	/* A QP the NIC no longer has counts nowhere: unbound as well. */
	if (ret && ret != -ENOENT)
		return ret;
	ibqp->counter = NULL;
	return 0;
}

static int dray_counter_dealloc(struct rdma_counter *counter)
{
	if (!counter->id)
		return 0;
	return dray_admin_free_counter_set(to_ddev(counter->device),
					   counter->id);
}

static int dray_counter_update_stats(struct rdma_counter *counter)
{
	/* A counter whose first bind failed has no set and counted nothing. */
	if (!counter->id)
		return 0;
	return dray_stats_read(to_ddev(counter->device), counter->id,
			       counter->stats);
}

/* Newer kernels pass the port (dray has one); Kbuild detects it. */
#ifdef DRAY_HAVE_COUNTER_PORT
static int dray_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp, u32 port)
{
	return counter_bind(counter, ibqp);
}

static int dray_counter_unbind_qp(struct ib_qp *ibqp, u32 port)
{
	return counter_unbind(ibqp);
}
#else
static int dray_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp)
{
	return counter_bind(counter, ibqp);
}

static int dray_counter_unbind_qp(struct ib_qp *ibqp)
{
	return counter_unbind(ibqp);
}
#endif

const struct ib_device_ops dray_counter_ops = {
	.alloc_hw_port_stats = dray_alloc_hw_port_stats,
	.counter_alloc_stats = dray_counter_alloc_stats,
	.counter_bind_qp = dray_counter_bind_qp,
	.counter_dealloc = dray_counter_dealloc,
	.counter_unbind_qp = dray_counter_unbind_qp,
	.counter_update_stats = dray_counter_update_stats,
	.get_hw_stats = dray_get_hw_stats,
};
