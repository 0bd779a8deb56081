// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray_ktest: kernel-verbs tests of two RDMA devices, run at module load
 * (this file: setup, the basic verbs, the runner; kt_frwr.c: fast
 * registration and invalidation; kt_srq.c: shared receive queues). With
 * traffic=1 it runs no tests and keeps checked traffic moving between
 * the devices instead (kt_traffic.c).
 *
 * Finds the devices named by dev_a and dev_b (default dray0 and dray1,
 * one on each end of a veth pair), creates a PD, CQs and an RC QP on each
 * through the ib_* kernel API, connects the QPs with the IPv4 RoCEv2 GIDs
 * and runs SEND, SEND_WITH_IMM, inline SEND, RDMA_WRITE(_WITH_IMM),
 * RDMA_READ and both atomics with the devices' DMA MRs, checking every
 * byte and completion; then the error cases: posting in RESET, too many
 * SGEs, inline data too long, a full queue, a bad lkey, flushing in ERR,
 * and completion events (ib_req_notify_cq and comp_handler).
 *
 * Results are TAP lines in the kernel log ("dray_ktest: ok 1 - ...") and
 * the read-only parameters passed and failed. Loading always succeeds
 * once the tests ran; tests/kverbs/run.sh reads both.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/gfp.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kt.h"

MODULE_DESCRIPTION("dray kernel verbs tests");
MODULE_LICENSE("GPL");

static char *dev_a = "dray0";
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "first RDMA device");
static char *dev_b = "dray1";
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "second RDMA device (its peer on the wire)");

static bool traffic;
module_param(traffic, bool, 0444);
MODULE_PARM_DESC(traffic, "run no tests: keep checked traffic between the devices (kt_traffic.c)");

static int passed;
module_param(passed, int, 0444);
MODULE_PARM_DESC(passed, "tests passed");
static int failed;
module_param(failed, int, 0444);
MODULE_PARM_DESC(failed, "tests failed");

static int tap_n;

/* The ACK timeout exponent kt_connect() gives a QP. */
u8 kt_ack_timeout = 14;

bool tap(bool ok, const char *name)
{
	tap_n++;
	if (ok)
		passed++;
	else
		failed++;
	pr_info("dray_ktest: %s %d - %s\n", ok ? "ok" : "not ok", tap_n, name);
	return ok;
}

static void kt_comp_handler(struct ib_cq *cq, void *ctx)
{
	struct kt_cq_ev *ev = ctx;

	atomic_inc(&ev->events);
	complete(&ev->done);
}

/*
 * The DMA MR with remote rights. The core only creates one with remote
 * read and write (IB_PD_UNSAFE_GLOBAL_RKEY); atomics need the device's
 * get_dma_mr directly, set up the way ib_alloc_pd() does it.
 */
static struct ib_mr *kt_get_dma_mr(struct ib_pd *pd, int access)
{
	struct ib_mr *mr = pd->device->ops.get_dma_mr(pd, access);

	if (IS_ERR(mr))
		return mr;
	mr->device = pd->device;
	mr->pd = pd;
	mr->type = IB_MR_TYPE_DMA;
	mr->uobject = NULL;
	mr->need_inval = false;
	return mr;
}

/* The IPv4 RoCEv2 GID of port 1 and the MAC of its netdev. */
int kt_find_gid(struct kt_side *s)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int i, len = s->dev->port_data[1].immutable.gid_tbl_len;

	for (i = 0; i < len; i++) {
		attr = rdma_get_gid_attr(s->dev, 1, i);
		if (IS_ERR(attr))
			continue;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw)) {
			s->gid_index = i;
			s->gid = attr->gid;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				ether_addr_copy(s->mac, ndev->dev_addr);
			rcu_read_unlock();
			rdma_put_gid_attr(attr);
			return IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static struct ib_qp *kt_create_qp(struct kt_side *s, u32 send_wr, u32 recv_wr)
{
	struct ib_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = KT_SGE,
			.max_recv_sge = KT_SGE,
			.max_inline_data = KT_INLINE,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(s->pd, &ia);
}

int kt_setup_side(struct kt_side *s)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };
	int ret;

	s->dev = ib_device_get_by_name(s->name, RDMA_DRIVER_UNKNOWN);
	if (!s->dev) {
		kt_diag("device %s not found", s->name);
		return -ENODEV;
	}
	ret = kt_find_gid(s);
	if (ret) {
		kt_diag("%s: no IPv4 RoCEv2 GID (%d)", s->name, ret);
		return ret;
	}
	s->pd = ib_alloc_pd(s->dev, 0);
	if (IS_ERR(s->pd)) {
		ret = PTR_ERR(s->pd);
		s->pd = NULL;
		kt_diag("%s: ib_alloc_pd %d", s->name, ret);
		return ret;
	}
	s->mr = kt_get_dma_mr(s->pd, IB_ACCESS_LOCAL_WRITE |
			      IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			      IB_ACCESS_REMOTE_ATOMIC);
	if (IS_ERR(s->mr)) {
		ret = PTR_ERR(s->mr);
		s->mr = NULL;
		kt_diag("%s: get_dma_mr %d", s->name, ret);
		return ret;
	}
	atomic_set(&s->sev.events, 0);
	init_completion(&s->sev.done);
	atomic_set(&s->rev.events, 0);
	init_completion(&s->rev.done);
	s->scq = ib_create_cq(s->dev, kt_comp_handler, NULL, &s->sev, &ca);
	if (IS_ERR(s->scq)) {
		ret = PTR_ERR(s->scq);
		s->scq = NULL;
		kt_diag("%s: ib_create_cq %d", s->name, ret);
		return ret;
	}
	s->rcq = ib_create_cq(s->dev, kt_comp_handler, NULL, &s->rev, &ca);
	if (IS_ERR(s->rcq)) {
		ret = PTR_ERR(s->rcq);
		s->rcq = NULL;
		kt_diag("%s: ib_create_cq %d", s->name, ret);
		return ret;
	}
	s->qp = kt_create_qp(s, KT_WR, KT_WR);
	if (IS_ERR(s->qp)) {
		ret = PTR_ERR(s->qp);
		s->qp = NULL;
		kt_diag("%s: ib_create_qp %d", s->name, ret);
		return ret;
	}
	s->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO, KT_BUF_ORDER);
	if (!s->buf)
		return -ENOMEM;
	s->dma = ib_dma_map_single(s->dev, s->buf, KT_BUF_SIZE,
				   DMA_BIDIRECTIONAL);
	kt_diag("%s: lkey %#x rkey %#x dma %#llx pa %#llx", s->name,
		s->pd->local_dma_lkey, s->mr->rkey, s->dma,
		(u64)virt_to_phys(s->buf));
	if (ib_dma_mapping_error(s->dev, s->dma)) {
		s->dma = 0;
		return -ENOMEM;
	}
	return 0;
}

void kt_teardown_side(struct kt_side *s)
{
	int ret;

	if (s->qp) {
		ret = ib_destroy_qp(s->qp);
		if (ret)
			kt_diag("%s: destroy QP %d", s->name, ret);
	}
	if (s->dma)
		ib_dma_unmap_single(s->dev, s->dma, KT_BUF_SIZE,
				    DMA_BIDIRECTIONAL);
	if (s->buf)
		free_pages((unsigned long)s->buf, KT_BUF_ORDER);
	if (s->scq)
		ib_destroy_cq(s->scq);
	if (s->rcq)
		ib_destroy_cq(s->rcq);
	if (s->mr) {
		ret = s->dev->ops.dereg_mr(s->mr, NULL);
		if (ret)
			kt_diag("%s: dereg DMA MR %d", s->name, ret);
	}
	if (s->pd)
		ib_dealloc_pd(s->pd);
	if (s->dev)
		ib_device_put(s->dev);
}

/* Move @qp through INIT, RTR and RTS towards @peer's QP @dqpn. */
int kt_connect(struct kt_side *s, struct ib_qp *qp, struct kt_side *peer,
	       u32 dqpn)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret) {
		kt_diag("%s: to INIT %d", s->name, ret);
		return ret;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &peer->gid, 0, s->gid_index, 64, 0);
	memcpy(a.ah_attr.roce.dmac, peer->mac, ETH_ALEN);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret) {
		kt_diag("%s: to RTR %d", s->name, ret);
		return ret;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0x1234;
	a.timeout = kt_ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			   IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			   IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		kt_diag("%s: to RTS %d", s->name, ret);
	return ret;
}

int kt_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_INIT, .port_num = 1 };

	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

int kt_set_state(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr a = { .qp_state = state };

	return ib_modify_qp(qp, &a, IB_QP_STATE);
}

/* Poll @cq until one completion arrives or the timeout passes. */
bool kt_poll1(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(KT_TIMEOUT_MS);

	do {
		int n = ib_poll_cq(cq, 1, wc);

		if (n == 1)
			return true;
		if (n < 0) {
			kt_diag("ib_poll_cq %d", n);
			return false;
		}
		usleep_range(200, 1000);
	} while (time_before(jiffies, end));
	kt_diag("no completion within %d ms", KT_TIMEOUT_MS);
	return false;
}

bool kt_wc_is(const struct ib_wc *wc, enum ib_wc_status status,
	      enum ib_wc_opcode opcode, u64 wr_id, const char *what)
{
	if (wc->status == status && wc->wr_id == wr_id &&
	    (status != IB_WC_SUCCESS || wc->opcode == opcode))
		return true;
	kt_diag("%s: status %d (%s) verr %#x op %d wr_id %llu, want %d op %d wr_id %llu",
		what, wc->status, ib_wc_status_msg(wc->status), wc->vendor_err,
		wc->opcode, wc->wr_id, status, opcode, wr_id);
	return false;
}

static int kt_post_recv(struct kt_side *s, u64 wr_id, u32 off, u32 len)
{
	struct ib_sge sge = {
		.addr = s->dma + off,
		.length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad = NULL;

	return ib_post_recv(s->qp, &wr, &bad);
}

void kt_fill(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 7 + (i >> 8));
}

/* Expect one successful send-side completion of @wr_id. */
static bool kt_send_done(struct kt_side *s, enum ib_wc_opcode op, u64 wr_id,
			 const char *what)
{
	struct ib_wc wc;

	return kt_poll1(s->scq, &wc) &&
	       kt_wc_is(&wc, IB_WC_SUCCESS, op, wr_id, what);
}

/* SEND from a to b with two SGEs (and an immediate if @imm). */
static bool kt_test_send(struct kt_side *a, struct kt_side *b, bool imm,
			 bool inl)
{
	const u32 len1 = 300, len2 = inl ? 20 : 1700;
	struct ib_sge sge[2] = {
		{ a->dma + 100, len1, a->pd->local_dma_lkey },
		{ a->dma + 5000, len2, a->pd->local_dma_lkey },
	};
	struct ib_send_wr wr = {
		.wr_id = 11,
		.sg_list = sge,
		.num_sge = 2,
		.opcode = imm ? IB_WR_SEND_WITH_IMM : IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED,
		.ex.imm_data = cpu_to_be32(0xabcd1234),
	};
	const struct ib_send_wr *bad = NULL;
	struct ib_wc wc;
	int ret;

	if (inl) {
		/* Inline SGEs are kernel virtual addresses. */
		sge[0].addr = (uintptr_t)(a->buf + 100);
		sge[0].length = 30;
		sge[1].addr = (uintptr_t)(a->buf + 5000);
		wr.send_flags |= IB_SEND_INLINE;
	}
	kt_fill(a->buf + 100, len1, 1);
	kt_fill(a->buf + 5000, len2, 2);
	memset(b->buf, 0, 4096);
	ret = kt_post_recv(b, 21, 0, 4096);
	if (ret) {
		kt_diag("post_recv %d", ret);
		return false;
	}
	ret = ib_post_send(a->qp, &wr, &bad);
	if (ret) {
		kt_diag("post_send %d", ret);
		return false;
	}
	if (!kt_send_done(a, IB_WC_SEND, 11, "send"))
		return false;
	if (!kt_poll1(b->rcq, &wc) ||
	    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV, 21, "recv"))
		return false;
	if (wc.byte_len != sge[0].length + sge[1].length ||
	    wc.qp != b->qp || !!(wc.wc_flags & IB_WC_WITH_IMM) != imm ||
	    (imm && wc.ex.imm_data != cpu_to_be32(0xabcd1234))) {
		kt_diag("recv: byte_len %u flags %#x imm %#x qp ok %d",
			wc.byte_len, wc.wc_flags, be32_to_cpu(wc.ex.imm_data),
			wc.qp == b->qp);
		return false;
	}
	if (memcmp(b->buf, a->buf + 100, sge[0].length) ||
	    memcmp(b->buf + sge[0].length, a->buf + 5000, sge[1].length)) {
		kt_diag("received data differs");
		return false;
	}
	return true;
}

/* RDMA WRITE of @len bytes from a to b at offset 8192 (with an IMM). */
static bool kt_test_write(struct kt_side *a, struct kt_side *b, u32 len,
			  bool imm)
{
	struct ib_sge sge = { a->dma, len, a->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 12,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = imm ? IB_WR_RDMA_WRITE_WITH_IMM :
					IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(77),
		},
		.remote_addr = b->dma + 8192,
		.rkey = b->mr->rkey,
	};
	const struct ib_send_wr *bad = NULL;
	struct ib_wc wc;

	kt_fill(a->buf, len, 3 + imm);
	memset(b->buf + 8192, 0, len);
	if (imm && kt_post_recv(b, 22, 0, 0))
		return false;
	if (ib_post_send(a->qp, &wr.wr, &bad))
		return false;
	if (!kt_send_done(a, IB_WC_RDMA_WRITE, 12, "write"))
		return false;
	if (imm) {
		if (!kt_poll1(b->rcq, &wc) ||
		    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM, 22,
			      "write imm recv"))
			return false;
		if (!(wc.wc_flags & IB_WC_WITH_IMM) ||
		    wc.ex.imm_data != cpu_to_be32(77))
			return false;
	}
	if (memcmp(b->buf + 8192, a->buf, len)) {
		kt_diag("written data differs");
		return false;
	}
	return true;
}

/* RDMA READ of @len bytes of b (offset 8192) into a (offset 4096). */
static bool kt_test_read(struct kt_side *a, struct kt_side *b, u32 len)
{
	struct ib_sge sge = { a->dma + 4096, len, a->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 13,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = b->dma + 8192,
		.rkey = b->mr->rkey,
	};
	const struct ib_send_wr *bad = NULL;

	kt_fill(b->buf + 8192, len, 9);
	memset(a->buf + 4096, 0, len);
	if (ib_post_send(a->qp, &wr.wr, &bad))
		return false;
	if (!kt_send_done(a, IB_WC_RDMA_READ, 13, "read"))
		return false;
	if (memcmp(a->buf + 4096, b->buf + 8192, len)) {
		kt_diag("read data differs");
		return false;
	}
	return true;
}

/* An atomic on b's word at 12288; the original lands in a at 0. */
static bool kt_test_atomic(struct kt_side *a, struct kt_side *b, bool cas)
{
	u64 *word = (u64 *)(b->buf + 12288), *orig = (u64 *)a->buf;
	struct ib_sge sge = { a->dma, 8, a->pd->local_dma_lkey };
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = 14,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = cas ? IB_WR_ATOMIC_CMP_AND_SWP :
					IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = b->dma + 12288,
		.rkey = b->mr->rkey,
		.compare_add = cas ? 0x1111 : 5,
		.swap = 0x2222,
	};
	const struct ib_send_wr *bad = NULL;

	WRITE_ONCE(*word, 0x1111);
	*orig = 0;
	if (ib_post_send(a->qp, &wr.wr, &bad))
		return false;
	if (!kt_send_done(a, cas ? IB_WC_COMP_SWAP : IB_WC_FETCH_ADD, 14,
			  "atomic"))
		return false;
	if (*orig != 0x1111 || READ_ONCE(*word) != (cas ? 0x2222 : 0x1116)) {
		kt_diag("atomic: original %#llx, word now %#llx", *orig,
			READ_ONCE(*word));
		return false;
	}
	return true;
}

/* Post one signaled SEND of a few bytes (solicited or not). */
static int kt_send_small(struct kt_side *a, u64 wr_id, bool solicited)
{
	struct ib_sge sge = { a->dma, 16, a->pd->local_dma_lkey };
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED |
			      (solicited ? IB_SEND_SOLICITED : 0),
	};
	const struct ib_send_wr *bad = NULL;

	return ib_post_send(a->qp, &wr, &bad);
}

/* Wait for the next completion event of @ev. */
static bool kt_wait_event(struct kt_cq_ev *ev, const char *what)
{
	if (wait_for_completion_timeout(&ev->done,
					msecs_to_jiffies(KT_TIMEOUT_MS)))
		return true;
	kt_diag("no completion event: %s", what);
	return false;
}

/* Expect the receive completion @wr_id on b. */
static bool kt_recv_done(struct kt_side *b, u64 wr_id)
{
	struct ib_wc wc;

	return kt_poll1(b->rcq, &wc) &&
	       kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV, wr_id, "recv");
}

/* ib_req_notify_cq + comp_handler, solicited-only and missed events. */
static bool kt_test_events(struct kt_side *a, struct kt_side *b)
{
	int ev, ret;

	if (kt_post_recv(b, 31, 0, 64) || kt_post_recv(b, 32, 64, 64) ||
	    kt_post_recv(b, 33, 128, 64) || kt_post_recv(b, 34, 192, 64))
		return false;

	/* Next completion: the handler runs for the receive. */
	reinit_completion(&b->rev.done);
	ret = ib_req_notify_cq(b->rcq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS);
	if (ret) {
		kt_diag("arm: %d with an empty CQ", ret);
		return false;
	}
	if (kt_send_small(a, 41, false) ||
	    !kt_send_done(a, IB_WC_SEND, 41, "send 41") ||
	    !kt_wait_event(&b->rev, "next completion"))
		return false;

	/* A CQE is waiting: arming reports it as possibly missed. */
	reinit_completion(&b->rev.done);
	ret = ib_req_notify_cq(b->rcq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS);
	if (ret != 1) {
		kt_diag("arm with a CQE waiting returned %d, want 1", ret);
		return false;
	}
	if (!kt_recv_done(b, 31))
		return false;
	/* That arm stands: the next CQE raises its event. */
	if (kt_send_small(a, 42, false) ||
	    !kt_send_done(a, IB_WC_SEND, 42, "send 42") ||
	    !kt_wait_event(&b->rev, "re-armed") || !kt_recv_done(b, 32))
		return false;

	/* Solicited only: an unsolicited SEND raises no event... */
	reinit_completion(&b->rev.done);
	ev = atomic_read(&b->rev.events);
	ib_req_notify_cq(b->rcq, IB_CQ_SOLICITED);
	if (kt_send_small(a, 43, false) ||
	    !kt_send_done(a, IB_WC_SEND, 43, "send 43") || !kt_recv_done(b, 33))
		return false;
	/* An event would be raised with the CQE; give it time to arrive. */
	msleep(300);
	if (atomic_read(&b->rev.events) != ev) {
		kt_diag("event for an unsolicited message with a solicited arm");
		return false;
	}
	/* ...a solicited one does. */
	return !kt_send_small(a, 44, true) &&
	       kt_send_done(a, IB_WC_SEND, 44, "send 44") &&
	       kt_wait_event(&b->rev, "solicited") && kt_recv_done(b, 34);
}

/*
 * Post and poll with interrupts off and with bottom halves off, as a
 * softirq or an interrupt handler would; after an idle pause, so that
 * the engine is likely asleep and the post must wake it.
 */
static bool kt_test_atomic_context(struct kt_side *a, struct kt_side *b)
{
	unsigned long flags;
	struct ib_wc wc;
	int ret;

	msleep(100);
	local_irq_save(flags);
	ret = kt_post_recv(b, 71, 0, 64);
	if (!ret)
		ret = kt_send_small(a, 72, false);
	local_irq_restore(flags);
	if (ret) {
		kt_diag("post with interrupts off: %d", ret);
		return false;
	}
	if (!kt_send_done(a, IB_WC_SEND, 72, "irqs-off send") ||
	    !kt_recv_done(b, 71))
		return false;

	msleep(100);
	local_bh_disable();
	ret = kt_post_recv(b, 73, 0, 64);
	if (!ret)
		ret = kt_send_small(a, 74, false);
	local_bh_enable();
	if (ret) {
		kt_diag("post with bottom halves off: %d", ret);
		return false;
	}
	/* Poll with bottom halves off too, until the send completes. */
	if (!kt_recv_done(b, 73))
		return false;
	local_bh_disable();
	ret = ib_poll_cq(a->scq, 1, &wc);
	local_bh_enable();
	if (ret == 1)
		return kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_SEND, 74, "bh send");
	return kt_send_done(a, IB_WC_SEND, 74, "bh send");
}

/* Posting errors: -EINVAL/-ENOMEM with bad_wr at the failing WR. */
static bool kt_test_post_errors(struct kt_side *a)
{
	struct ib_sge sge[KT_SGE + 8];
	struct ib_recv_wr rwr[2] = {};
	struct ib_send_wr swr = {};
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *sbad;
	struct ib_qp *qp;
	bool ok = true;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(sge); i++) {
		sge[i].addr = a->dma;
		sge[i].length = 8;
		sge[i].lkey = a->pd->local_dma_lkey;
	}
	qp = kt_create_qp(a, 4, 4);
	if (IS_ERR(qp)) {
		kt_diag("create QP %ld", PTR_ERR(qp));
		return false;
	}

	/* RESET: no posting at all. */
	swr.opcode = IB_WR_SEND;
	swr.sg_list = sge;
	swr.num_sge = 1;
	sbad = NULL;
	ret = ib_post_send(qp, &swr, &sbad);
	if (ret != -EINVAL || sbad != &swr) {
		kt_diag("post_send in RESET: %d, bad_wr ok %d", ret,
			sbad == &swr);
		ok = false;
	}
	rwr[0].sg_list = sge;
	rwr[0].num_sge = 1;
	rbad = NULL;
	ret = ib_post_recv(qp, &rwr[0], &rbad);
	if (ret != -EINVAL || rbad != &rwr[0]) {
		kt_diag("post_recv in RESET: %d", ret);
		ok = false;
	}

	/* INIT: receives; the second WR has too many SGEs. */
	ret = kt_to_init(qp);
	if (ret) {
		kt_diag("to INIT %d", ret);
		ok = false;
		goto destroy;
	}
	rwr[0].next = &rwr[1];
	rwr[1].sg_list = sge;
	rwr[1].num_sge = ARRAY_SIZE(sge);
	rbad = NULL;
	ret = ib_post_recv(qp, &rwr[0], &rbad);
	if (ret != -EINVAL || rbad != &rwr[1]) {
		kt_diag("post_recv with %d SGEs: %d, bad_wr ok %d",
			rwr[1].num_sge, ret, rbad == &rwr[1]);
		ok = false;
	}
	/* The first was posted: 3 more fill the queue of 4, then full. */
	rwr[0].next = NULL;
	for (i = 0; i < 3; i++) {
		ret = ib_post_recv(qp, &rwr[0], &rbad);
		if (ret) {
			kt_diag("post_recv %d: %d", i, ret);
			ok = false;
		}
	}
	rbad = NULL;
	ret = ib_post_recv(qp, &rwr[0], &rbad);
	if (ret != -ENOMEM || rbad != &rwr[0]) {
		kt_diag("post_recv to a full queue: %d", ret);
		ok = false;
	}
	/* Sends need RTS. */
	sbad = NULL;
	ret = ib_post_send(qp, &swr, &sbad);
	if (ret != -EINVAL || sbad != &swr) {
		kt_diag("post_send in INIT: %d", ret);
		ok = false;
	}
	/* Back to RESET and INIT: the queue is empty again. */
	if (kt_set_state(qp, IB_QPS_RESET)) {
		ok = false;
		goto destroy;
	}
	ret = kt_to_init(qp);
	for (i = 0; !ret && i < 4; i++)
		ret = ib_post_recv(qp, &rwr[0], &rbad);
	if (ret) {
		kt_diag("post_recv after RESET: %d", ret);
		ok = false;
	}
destroy:
	ret = ib_destroy_qp(qp);
	if (ret) {
		kt_diag("destroy QP %d", ret);
		ok = false;
	}
	return ok;
}

/* On the connected QP: too many SGEs, inline too long, full SQ. */
static bool kt_test_send_errors(struct kt_side *a)
{
	struct ib_sge sge[KT_SGE + 8];
	struct ib_send_wr wr[2] = {};
	const struct ib_send_wr *bad;
	bool ok = true;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(sge); i++) {
		sge[i].addr = (uintptr_t)a->buf;
		sge[i].length = 100;
		sge[i].lkey = a->pd->local_dma_lkey;
	}
	/* The first WR is invalid: nothing is posted. */
	wr[0].opcode = IB_WR_SEND;
	wr[0].sg_list = sge;
	wr[0].num_sge = ARRAY_SIZE(sge);
	bad = NULL;
	ret = ib_post_send(a->qp, &wr[0], &bad);
	if (ret != -EINVAL || bad != &wr[0]) {
		kt_diag("send with %zu SGEs: %d", ARRAY_SIZE(sge), ret);
		ok = false;
	}
	wr[0].num_sge = 2;		/* 200 bytes inline > 64 */
	wr[0].send_flags = IB_SEND_INLINE;
	bad = NULL;
	ret = ib_post_send(a->qp, &wr[0], &bad);
	if (ret != -EINVAL || bad != &wr[0]) {
		kt_diag("inline send of 200 bytes: %d", ret);
		ok = false;
	}
	wr[0].opcode = IB_WR_BIND_MW;
	wr[0].send_flags = 0;
	bad = NULL;
	ret = ib_post_send(a->qp, &wr[0], &bad);
	if (ret != -EINVAL || bad != &wr[0]) {
		kt_diag("BIND_MW: %d", ret);
		ok = false;
	}
	/* A local operation takes no data. */
	wr[0].opcode = IB_WR_LOCAL_INV;
	bad = NULL;
	ret = ib_post_send(a->qp, &wr[0], &bad);
	if (ret != -EINVAL || bad != &wr[0]) {
		kt_diag("LOCAL_INV with 2 SGEs: %d", ret);
		ok = false;
	}
	return ok;
}

/* A bad lkey: LOC_PROT_ERR, the QP in ERR, then flushes both ways. */
static bool kt_test_bad_lkey_flush(struct kt_side *a, struct kt_side *b)
{
	struct ib_sge sge = { a->dma, 64, a->pd->local_dma_lkey ^ 0x5500 };
	struct ib_send_wr wr = {
		.wr_id = 51,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad = NULL;
	struct ib_wc wc;
	bool ok = true;

	if (kt_post_recv(b, 61, 0, 64) || kt_post_recv(b, 62, 64, 64))
		return false;
	if (ib_post_send(a->qp, &wr, &bad))
		return false;
	if (!kt_poll1(a->scq, &wc) ||
	    !kt_wc_is(&wc, IB_WC_LOC_PROT_ERR, IB_WC_SEND, 51, "bad lkey"))
		ok = false;
	/* The QP is in ERR now: a new WR completes with a flush error. */
	wr.wr_id = 52;
	sge.lkey = a->pd->local_dma_lkey;
	bad = NULL;
	if (ib_post_send(a->qp, &wr, &bad)) {
		kt_diag("post_send in ERR failed");
		ok = false;
	} else if (!kt_poll1(a->scq, &wc) ||
		   !kt_wc_is(&wc, IB_WC_WR_FLUSH_ERR, IB_WC_SEND, 52,
			     "flush send")) {
		ok = false;
	}
	/* b's receives are flushed once b goes to ERR. */
	if (kt_set_state(b->qp, IB_QPS_ERR)) {
		kt_diag("b to ERR failed");
		return false;
	}
	if (!kt_poll1(b->rcq, &wc) ||
	    !kt_wc_is(&wc, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 61, "flush 61") ||
	    !kt_poll1(b->rcq, &wc) ||
	    !kt_wc_is(&wc, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 62, "flush 62"))
		ok = false;
	return ok;
}

static void kt_run(void)
{
	struct kt_side a = { .name = dev_a }, b = { .name = dev_b };
	bool up;

	up = tap(!kt_setup_side(&a) && !kt_setup_side(&b),
		 "PD, DMA MR, CQs and an RC QP on both devices");
	if (up)
		up = tap(!kt_connect(&a, a.qp, &b, b.qp->qp_num) &&
			 !kt_connect(&b, b.qp, &a, a.qp->qp_num),
			 "connect the QPs (INIT, RTR, RTS) with IPv4 RoCEv2 GIDs");
	if (up) {
		tap(kt_test_send(&a, &b, false, false),
		    "SEND with 2 SGEs, data and completions");
		tap(kt_test_send(&b, &a, true, false),
		    "SEND_WITH_IMM the other way, immediate data");
		tap(kt_test_send(&a, &b, false, true),
		    "inline SEND from kernel addresses");
		tap(kt_test_write(&a, &b, 64, false), "RDMA_WRITE 64 B");
		tap(kt_test_write(&a, &b, 6000, false),
		    "RDMA_WRITE 6000 B (several packets, copied from the DMA MR)");
		tap(kt_test_write(&b, &a, 3000, true), "RDMA_WRITE_WITH_IMM");
		tap(kt_test_read(&a, &b, 5000), "RDMA_READ 5000 B");
		tap(kt_test_atomic(&a, &b, false), "ATOMIC_FETCH_AND_ADD");
		tap(kt_test_atomic(&b, &a, true), "ATOMIC_CMP_AND_SWP");
		tap(kt_test_events(&a, &b),
		    "ib_req_notify_cq: comp_handler, solicited only, missed events");
		tap(kt_test_atomic_context(&a, &b),
		    "post and poll with interrupts off and in softirq context");
		tap(kt_test_post_errors(&a),
		    "post in RESET -EINVAL, too many SGEs -EINVAL, full queue -ENOMEM, bad_wr");
		tap(kt_test_send_errors(&a),
		    "post_send: too many SGEs, inline too long, unsupported opcode -EINVAL");
		tap(kt_test_bad_lkey_flush(&a, &b),
		    "bad lkey: LOC_PROT_ERR; flush errors in ERR");
		kt_run_frwr(&a, &b);
		kt_run_srq(&a, &b);
	}
	kt_teardown_side(&a);
	kt_teardown_side(&b);
	tap(true, "teardown");
	pr_info("dray_ktest: 1..%d\n", tap_n);
	pr_info("dray_ktest: done: %d passed, %d failed\n", passed, failed);
}

static int __init dray_ktest_init(void)
{
	if (traffic)
		return kt_traffic_start(dev_a, dev_b);
	kt_run();
	return 0;
}

static void __exit dray_ktest_exit(void)
{
	if (traffic)
		kt_traffic_stop();
}

module_init(dray_ktest_init);
module_exit(dray_ktest_exit);
