// SPDX-License-Identifier: GPL-2.0-only
/*
 * A hostile process: it owns an RC QP on a dray device and writes garbage
 * into its own send queue ring, its doorbell record, its peer's receive
 * ring and its CQ's doorbell record — random WQEs, bogus opcodes, huge
 * num_sge and lengths, producer indexes far ahead of or behind the
 * consumer, random lkeys, rkeys and addresses (including those of memory
 * it must not reach). It also owns a shared receive queue (SRQ) that a
 * second peer QP receives from, and rewrites that ring too: garbage SRQ
 * WQEs (num_sge, tags, reserved bytes, SGEs), WQEs rewritten while
 * messages land in them, and at the end a producer index far ahead. The
 * device must answer with error completions or by putting the QP in
 * error, never anything else: no write outside the MRs
 * the QP's PD allows, no kernel warning, no hang. Afterwards it checks
 * that its read-only MR, a canary MR of another PD, an MR of another
 * context (a "victim") and guard pages around all of them are unchanged,
 * and that the kernel did not taint itself.
 *
 * The test creates its context, PDs, MRs, CQ and QPs itself through the
 * raw uverbs write() ABI with the dray driver structures of
 * <rdma/dray-abi.h>, so it owns every queue buffer it hands the device
 * (the provider's buffers are its own business). The formats are those of
 * <dray/dray_queue.h> and <dray/dray_uar.h>.
 *
 *   hostile [--dev NAME] [--gid-index N] [--rounds N] [--storm N] [--seed S]
 *
 * With --storm N, N random WQEs follow the rounds, posted in batches as
 * fast as the device takes them (storm() says how).
 *
 * The device defaults to $DRAY_TEST_DEV_A, else dray0. Exit status: 0
 * pass, 1 fail, 4 skip (the device is not a dray device).
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/dray-abi.h>
#include <dray/dray_queue.h>
#include <dray/dray_ring.h>
#include <dray/dray_uar.h>

#include "common.h"

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#define PAGE		4096UL
#define SQ_LOG_DEPTH	6
#define SQ_LOG_STRIDE	8	/* 64-byte header + 12 SGEs */
#define SQ_SGE		12
#define RQ_LOG_DEPTH	6
#define RQ_LOG_STRIDE	7	/* 16-byte header + 7 SGEs */
#define RQ_SGE		4
#define CQ_LOG_DEPTH	8
#define SRQ_LOG_DEPTH	5
#define SRQ_LOG_STRIDE	7	/* 16-byte header + 7 SGEs */
#define MR_LEN		(64 * 1024)
#define CANARY_BYTE	0xc5
#define RO_BYTE		0x3a
#define VICTIM_BYTE	0x96
#define GUARD_BYTE	0x6b

static struct {
	const char *dev;
	int gid_index;
	int rounds;
	uint64_t storm;
	uint64_t seed;
} opt = { .gid_index = -1, .rounds = 48 };

static struct rng rng;
/* Raw uverbs: the legacy write() commands */

static int ufd = -1;

/*
 * One write() command: header, the core request, the driver request.
 * The core request points at the response buffer (resp_len bytes): the
 * core response, then the driver response.
 * Returns 0 or -errno.
 */
static int ucmd(uint32_t command, void *core, size_t core_len,
		const void *drv_in, size_t drv_in_len, size_t resp_len)
{
	struct ib_uverbs_cmd_hdr hdr = { .command = command };
	uint8_t buf[512];
	size_t len = sizeof(hdr) + core_len + drv_in_len;
	ssize_t n;

	if (len > sizeof(buf) || len % 4 || resp_len % 4)
		return -EINVAL;
	hdr.in_words = (uint16_t)(len / 4);
	hdr.out_words = (uint16_t)(resp_len / 4);
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), core, core_len);
	if (drv_in_len)
		memcpy(buf + sizeof(hdr) + core_len, drv_in, drv_in_len);
	n = write(ufd, buf, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* DRAY_IB_METHOD_KICK on UVERBS_OBJECT_DEVICE, no attributes */
static int kick(void)
{
	struct ib_uverbs_ioctl_hdr hdr = {
		.length = sizeof(hdr),
		.object_id = UVERBS_OBJECT_DEVICE,
		.method_id = DRAY_IB_METHOD_KICK,
		.num_attrs = 0,
		.driver_id = RDMA_DRIVER_UNKNOWN,
	};

	return ioctl(ufd, RDMA_VERBS_IOCTL, &hdr) ? -errno : 0;
}

static struct dray_alloc_ucontext_resp uctx;
static struct dray_uar *uar;

static void get_context(void)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		struct dray_alloc_ucontext_resp drv;
	} resp;
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)&resp };
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd), NULL, 0,
		   sizeof(resp));
	if (ret)
		die("GET_CONTEXT: %s", strerror(-ret));
	uctx = resp.drv;
	if (uctx.db_page_size < sizeof(struct dray_uar))
		die("doorbell page of %u bytes", uctx.db_page_size);
	uar = mmap(NULL, uctx.db_page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ufd, (off_t)uctx.db_mmap_key);
	if (uar == MAP_FAILED)
		die("mmap of the doorbell page: %s", strerror(errno));
	if (le32toh(uar->dev.magic) != DRAY_UAR_MAGIC)
		die("doorbell page magic %#x", le32toh(uar->dev.magic));
}

static uint32_t alloc_pd(void)
{
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct dray_alloc_pd_resp drv;
	} resp;
	struct ib_uverbs_alloc_pd cmd = { .response = (uintptr_t)&resp };
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), NULL, 0,
		   sizeof(resp));
	if (ret)
		die("ALLOC_PD: %s", strerror(-ret));
	return resp.core.pd_handle;
}

struct rmr {
	uint32_t handle, lkey, rkey;
	uint8_t *addr;
	size_t len;
};

static void reg_mr(uint32_t pd, void *addr, size_t len, int access,
		   struct rmr *mr)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ib_uverbs_reg_mr cmd = {
		.response = (uintptr_t)&resp,
		.start = (uintptr_t)addr,
		.length = len,
		.hca_va = (uintptr_t)addr,
		.pd_handle = pd,
		.access_flags = (uint32_t)access,
	};
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd), NULL, 0,
		   sizeof(resp));
	if (ret)
		die("REG_MR: %s", strerror(-ret));
	mr->handle = resp.mr_handle;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	mr->addr = addr;
	mr->len = len;
}

/* A page-aligned queue buffer of at least len bytes, zeroed */
static void *queue_buf(size_t len, size_t *out)
{
	size_t sz = (len + PAGE - 1) & ~(PAGE - 1);
	void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	*out = sz;
	return p;
}

struct rcq {
	uint32_t handle;
	void *buf;
	size_t buf_size;
	struct dray_cq_db *db;
	struct dray_cqe *ring;
	uint32_t depth, consumer;
};

static void create_cq(struct rcq *cq)
{
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct dray_create_cq_resp drv;
	} resp;
	struct ib_uverbs_create_cq cmd = {
		.response = (uintptr_t)&resp,
		.cqe = (1U << CQ_LOG_DEPTH) - 1,
		.comp_vector = 0,
		.comp_channel = -1,
	};
	struct dray_create_cq_cmd drv = {};
	int ret;

	cq->depth = 1U << CQ_LOG_DEPTH;
	cq->buf = queue_buf(DRAY_QUEUE_HDR_SIZE + cq->depth * DRAY_CQE_SIZE,
			    &cq->buf_size);
	cq->db = cq->buf;
	cq->ring = (struct dray_cqe *)((uint8_t *)cq->buf + DRAY_QUEUE_HDR_SIZE);
	drv.buf_addr = (uintptr_t)cq->buf;
	drv.buf_size = (uint32_t)cq->buf_size;
	drv.log_depth = CQ_LOG_DEPTH;
	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd), &drv,
		   sizeof(drv), sizeof(resp));
	if (ret)
		die("CREATE_CQ: %s", strerror(-ret));
	cq->handle = resp.core.cq_handle;
}

struct rwq {
	void *buf;
	size_t buf_size;
	struct dray_wq_db *db;
	uint8_t *ring;
	uint32_t depth, log_stride, head;
};

struct rqp {
	uint32_t handle, qpn;
	struct rwq sq, rq;
};

static void wq_init(struct rwq *wq, unsigned int log_depth,
		    unsigned int log_stride)
{
	wq->depth = 1U << log_depth;
	wq->log_stride = log_stride;
	wq->buf = queue_buf(DRAY_QUEUE_HDR_SIZE +
			    ((size_t)wq->depth << log_stride), &wq->buf_size);
	wq->db = wq->buf;
	wq->ring = (uint8_t *)wq->buf + DRAY_QUEUE_HDR_SIZE;
}

/* The SRQ: a ring like an RQ's, of struct dray_srq_wqe */
static struct rwq srq;
static uint32_t srq_handle;

static void create_srq(uint32_t pd)
{
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct dray_create_srq_resp drv;
	} resp;
	struct ib_uverbs_create_srq cmd = {
		.response = (uintptr_t)&resp,
		.pd_handle = pd,
		.max_wr = 1U << SRQ_LOG_DEPTH,
		.max_sge = RQ_SGE,
	};
	struct dray_create_srq_cmd drv = {};
	int ret;

	wq_init(&srq, SRQ_LOG_DEPTH, SRQ_LOG_STRIDE);
	drv.buf_addr = (uintptr_t)srq.buf;
	drv.buf_size = (uint32_t)srq.buf_size;
	drv.log_depth = SRQ_LOG_DEPTH;
	drv.log_stride = SRQ_LOG_STRIDE;
	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_CREATE_SRQ, &cmd, sizeof(cmd), &drv,
		   sizeof(drv), sizeof(resp));
	if (ret)
		die("CREATE_SRQ: %s", strerror(-ret));
	srq_handle = resp.core.srq_handle;
}

/*
 * An RC QP on cq, with a receive queue of its own, or (on_srq) receiving
 * from the SRQ with none.
 */
static void create_qp(uint32_t pd, struct rcq *cq, struct rqp *qp,
		      bool on_srq)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct dray_create_qp_resp drv;
	} resp;
	struct ib_uverbs_create_qp cmd = {
		.response = (uintptr_t)&resp,
		.pd_handle = pd,
		.send_cq_handle = cq->handle,
		.recv_cq_handle = cq->handle,
		.max_send_wr = 1U << SQ_LOG_DEPTH,
		.max_send_sge = SQ_SGE,
		.max_inline_data = 128,
		.sq_sig_all = 0,
		.qp_type = IB_UVERBS_QPT_RC,
	};
	struct dray_create_qp_cmd drv = {};
	int ret;

	wq_init(&qp->sq, SQ_LOG_DEPTH, SQ_LOG_STRIDE);
	drv.sq_buf_addr = (uintptr_t)qp->sq.buf;
	drv.sq_buf_size = (uint32_t)qp->sq.buf_size;
	drv.sq_log_depth = SQ_LOG_DEPTH;
	drv.sq_log_stride = SQ_LOG_STRIDE;
	if (on_srq) {
		cmd.srq_handle = srq_handle;
		cmd.is_srq = 1;
		cmd.max_inline_data = 0;
	} else {
		cmd.max_recv_wr = 1U << RQ_LOG_DEPTH;
		cmd.max_recv_sge = RQ_SGE;
		wq_init(&qp->rq, RQ_LOG_DEPTH, RQ_LOG_STRIDE);
		drv.rq_buf_addr = (uintptr_t)qp->rq.buf;
		drv.rq_buf_size = (uint32_t)qp->rq.buf_size;
		drv.rq_log_depth = RQ_LOG_DEPTH;
		drv.rq_log_stride = RQ_LOG_STRIDE;
	}
	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd), &drv,
		   sizeof(drv), sizeof(resp));
	if (ret)
		die("CREATE_QP%s: %s", on_srq ? " on the SRQ" : "",
		    strerror(-ret));
	qp->handle = resp.core.qp_handle;
	qp->qpn = resp.core.qpn;
}

static int destroy_srq(void)
{
	struct ib_uverbs_destroy_srq_resp resp;
	struct ib_uverbs_destroy_srq cmd = {
		.response = (uintptr_t)&resp,
		.srq_handle = srq_handle,
	};

	return ucmd(IB_USER_VERBS_CMD_DESTROY_SRQ, &cmd, sizeof(cmd), NULL, 0,
		    sizeof(resp));
}

static int modify_qp(struct ib_uverbs_modify_qp *cmd)
{
	return ucmd(IB_USER_VERBS_CMD_MODIFY_QP, cmd, sizeof(*cmd), NULL, 0, 0);
}

static int query_qp_state(struct rqp *qp)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.attr_mask = IBV_QP_STATE,
	};
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ucmd(IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd), NULL, 0,
		   sizeof(resp));
	return ret ? ret : resp.qp_state;
}

static int destroy_qp(struct rqp *qp)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
	};

	return ucmd(IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd), NULL, 0,
		    sizeof(resp));
}

/* The topology: hostile QP H -> peer QP P, both on one device, PD 1 */

static union ibv_gid gid;
static int gid_index;
static enum ibv_mtu mtu;
static uint32_t pd1, pd2;
static struct rcq cq;
static struct rqp hq, pq, sq_p;	/* sq_p: the peer on the SRQ */
static struct rmr mr_rw;	/* PD 1, every right: garbage may land here */
static struct rmr mr_ro;	/* PD 1, remote read only: never written */
static struct rmr mr_canary;	/* PD 2, every right: never written */
static uint8_t *region;		/* guard page, MR, guard page, ... */
static size_t region_len;

/* The victim: another context on the same device, through libibverbs */
static struct ibv_context *vctx;
static struct ibv_pd *vpd;
static struct ibv_mr *vmr;
static uint8_t *vbuf;

static int reset_and_connect(struct rqp *qp, struct rqp *peer, uint32_t psn,
			     uint32_t peer_psn)
{
	struct ib_uverbs_modify_qp c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.qp_handle = qp->handle;
	c.attr_mask = IBV_QP_STATE;
	c.qp_state = IBV_QPS_RESET;
	ret = modify_qp(&c);
	if (ret)
		return ret;
	/* like the provider: a reset QP starts again at index 0 */
	memset(qp->sq.buf, 0, qp->sq.buf_size);
	if (qp->rq.buf)
		memset(qp->rq.buf, 0, qp->rq.buf_size);
	qp->sq.head = 0;
	qp->rq.head = 0;

	memset(&c, 0, sizeof(c));
	c.qp_handle = qp->handle;
	c.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      IBV_QP_ACCESS_FLAGS;
	c.qp_state = IBV_QPS_INIT;
	c.port_num = RC_PORT;
	c.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	ret = modify_qp(&c);
	if (ret)
		return ret;

	memset(&c, 0, sizeof(c));
	c.qp_handle = qp->handle;
	c.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	c.qp_state = IBV_QPS_RTR;
	c.path_mtu = mtu;
	c.dest_qp_num = peer->qpn;
	c.rq_psn = peer_psn;
	c.max_dest_rd_atomic = 4;
	c.min_rnr_timer = 1;
	memcpy(c.dest.dgid, gid.raw, 16);
	c.dest.sgid_index = (uint8_t)gid_index;
	c.dest.hop_limit = 1;
	c.dest.is_global = 1;
	c.dest.port_num = RC_PORT;
	ret = modify_qp(&c);
	if (ret)
		return ret;

	memset(&c, 0, sizeof(c));
	c.qp_handle = qp->handle;
	c.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	c.qp_state = IBV_QPS_RTS;
	c.timeout = 10;		/* 4 ms: garbage must not stall a round */
	c.retry_cnt = 2;
	c.rnr_retry = 1;
	c.sq_psn = psn;
	c.max_rd_atomic = 4;
	return modify_qp(&c);
}

/* H to @peer: P (a receive queue of its own) or sq_p (on the SRQ). */
static void connect_to(struct rqp *peer, const char *when)
{
	uint32_t hpsn = (uint32_t)rng_below(&rng, 1U << 24);
	uint32_t ppsn = (uint32_t)rng_below(&rng, 1U << 24);
	int ret;

	ret = reset_and_connect(&hq, peer, hpsn, ppsn);
	if (!ret)
		ret = reset_and_connect(peer, &hq, ppsn, hpsn);
	if (ret)
		die("%s: connecting the QPs: %s", when, strerror(-ret));
	/* skip what earlier rounds left in the CQ, and tell the device */
	cq.consumer = le32toh(__atomic_load_n(&cq.db->producer,
					      __ATOMIC_ACQUIRE));
	__atomic_store_n(&cq.db->consumer, htole32(cq.consumer),
			 __ATOMIC_RELEASE);
}

static void connect_pair(const char *when)
{
	connect_to(&pq, when);
}

/* Posting */

static void *wqe_at(struct rwq *wq, uint32_t idx)
{
	return wq->ring + ((size_t)dray_ring_slot(idx, wq->depth) <<
			   wq->log_stride);
}

static void publish(struct rwq *wq, uint32_t producer)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&wq->db->producer, htole32(producer), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void ring(void)
{
	int ret = kick();

	if (ret)
		fail("KICK ioctl: %s", strerror(-ret));
}

static void put_sge(struct dray_sge *s, uint64_t addr, uint32_t len,
		    uint32_t lkey)
{
	s->addr = htole64(addr);
	s->length = htole32(len);
	s->lkey = htole32(lkey);
}

/* A well-formed, signaled RDMA WRITE of len bytes from H to P (mr_rw) */
static void good_write(uint32_t len)
{
	struct dray_sq_wqe *w = wqe_at(&hq.sq, hq.sq.head);

	memset(w, 0, 1U << hq.sq.log_stride);
	w->opcode = DRAY_WQE_RDMA_WRITE;
	w->flags = DRAY_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->u.rdma.remote_addr = htole64((uintptr_t)mr_rw.addr + MR_LEN / 2);
	w->u.rdma.rkey = htole32(mr_rw.rkey);
	put_sge((struct dray_sge *)(w + 1), (uintptr_t)mr_rw.addr, len,
		mr_rw.lkey);
	publish(&hq.sq, ++hq.sq.head);
}

/* Completions */

struct tally {
	unsigned int success, errors, total;
	unsigned int by_status[32];
};

/*
 * Take the next CQE if the device wrote one (only the phase bit tells a
 * new entry: the ring's contents are the device's), count it in @t and
 * give its slot back. Returns a copy of it, or false if there is none.
 */
static bool take_cqe(struct tally *t, struct dray_cqe *out)
{
	struct dray_cqe *e = &cq.ring[dray_ring_slot(cq.consumer, cq.depth)];
	uint8_t flags = __atomic_load_n(&e->flags, __ATOMIC_ACQUIRE);

	if ((flags & DRAY_CQE_F_PHASE) !=
	    dray_ring_phase(cq.consumer, cq.depth))
		return false;
	*out = *e;
	t->total++;
	if (out->status == DRAY_CQE_ST_SUCCESS)
		t->success++;
	else
		t->errors++;
	t->by_status[out->status < 32 ? out->status : 31]++;
	cq.consumer++;
	__atomic_store_n(&cq.db->consumer, htole32(cq.consumer),
			 __ATOMIC_RELEASE);
	return true;
}

/*
 * Collect CQEs for at most ms milliseconds, or until quiet_ms pass
 * without one once at least want arrived.
 */
static void collect(struct tally *t, unsigned int want, unsigned int ms,
		    unsigned int quiet_ms)
{
	uint64_t end = now_us() + ms * 1000ULL, last = now_us();

	for (;;) {
		struct dray_cqe e;

		if (take_cqe(t, &e)) {
			last = now_us();
			continue;
		}
		if (now_us() > end)
			return;
		if (t->total >= want && now_us() - last > quiet_ms * 1000ULL)
			return;
		usleep(1000);
	}
}

/* Memory that must not change */

static int check_guarded(const char *when)
{
	struct {
		const char *name;
		uint8_t *p;
		size_t len;
		uint8_t v;
	} c[] = {
		{ "read-only MR (PD 1, no LOCAL_WRITE)", mr_ro.addr, MR_LEN, RO_BYTE },
		{ "canary MR (PD 2)", mr_canary.addr, MR_LEN, CANARY_BYTE },
		{ "victim MR (another context)", vbuf, MR_LEN, VICTIM_BYTE },
		{ "guard page before the MRs", region, PAGE, GUARD_BYTE },
		{ "guard page after mr_rw", mr_rw.addr + MR_LEN, PAGE, GUARD_BYTE },
		{ "guard page after mr_ro", mr_ro.addr + MR_LEN, PAGE, GUARD_BYTE },
		{ "guard page after the canary", mr_canary.addr + MR_LEN, PAGE,
		  GUARD_BYTE },
	};
	int bad = 0;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t at = first_not(c[i].p, c[i].len, c[i].v);

		if (at < c[i].len) {
			fail("%s: %s byte %zu is %#04x, expected %#04x", when,
			     c[i].name, at, c[i].p[at], c[i].v);
			bad++;
		}
	}
	return bad;
}

/* Garbage */

static uint64_t any_addr(void)
{
	static const uint64_t bases[] = {
		0, 8, 0xffff888000000000ULL, 0xffffffff81000000ULL,
		0x00007ffffffff000ULL, 0xfffffffffffffff8ULL,
	};

	switch (rng_below(&rng, 8)) {
	case 0:
		return (uintptr_t)mr_rw.addr + rng_below(&rng, MR_LEN + 64);
	case 1:
		return (uintptr_t)mr_ro.addr + rng_below(&rng, MR_LEN);
	case 2:
		return (uintptr_t)mr_canary.addr + rng_below(&rng, MR_LEN);
	case 3:
		return (uintptr_t)vbuf + rng_below(&rng, MR_LEN);
	case 4:
		return (uintptr_t)region + rng_below(&rng, region_len);
	case 5:
		return (uintptr_t)mr_rw.addr - rng_range(&rng, 1, 64);
	case 6:
		return bases[rng_below(&rng, sizeof(bases) / sizeof(bases[0]))];
	default:
		return rng_next(&rng);
	}
}

static uint32_t any_key(void)
{
	switch (rng_below(&rng, 7)) {
	case 0:
		return mr_rw.lkey;
	case 1:
		return mr_ro.lkey;
	case 2:
		return mr_canary.lkey;
	case 3:
		return vmr->lkey;
	case 4:
		return mr_rw.rkey ^ (uint32_t)rng_range(&rng, 1, 255);
	case 5:
		return 0;
	default:
		return (uint32_t)rng_next(&rng);
	}
}

static uint32_t any_len(void)
{
	switch (rng_below(&rng, 5)) {
	case 0:
		return (uint32_t)rng_below(&rng, 64);
	case 1:
		return (uint32_t)rng_below(&rng, MR_LEN + 4096);
	case 2:
		return 0x80000000U;
	case 3:
		return 0xffffffffU;
	default:
		return (uint32_t)rng_next(&rng);
	}
}

/* A WQE that looks like one, with fields chosen to hurt */
static void structured_wqe(struct dray_sq_wqe *w, size_t stride)
{
	struct dray_sge *s = (struct dray_sge *)(w + 1);
	size_t room = (stride - sizeof(*w)) / sizeof(*s), i;

	memset(w, 0, stride);
	w->opcode = rng_one_in(&rng, 3) ? (uint8_t)rng_next(&rng) :
		    (uint8_t)rng_below(&rng, DRAY_WQE_OPCODE_MAX);
	w->flags = (uint8_t)rng_next(&rng);
	w->num_sge = rng_one_in(&rng, 3) ? (uint8_t)rng_next(&rng) :
		     (uint8_t)rng_below(&rng, room + 1);
	w->imm_data = (uint32_t)rng_next(&rng);
	w->length = htole32(any_len());
	w->u.atomic.remote_addr = htole64(any_addr());
	w->u.atomic.rkey = htole32(any_key());
	w->u.atomic.compare_add = rng_next(&rng);
	w->u.atomic.swap = rng_next(&rng);
	for (i = 0; i < room; i++)
		put_sge(&s[i], any_addr(), any_len(), any_key());
}

/* A WQE no device may accept: the opcode does not exist */
static void bogus_wqe(struct dray_sq_wqe *w, size_t stride)
{
	structured_wqe(w, stride);
	w->opcode = (uint8_t)rng_range(&rng, DRAY_WQE_OPCODE_MAX, 255);
	w->flags |= DRAY_WQE_F_SIGNALED;
}

enum garbage {
	G_RANDOM_BYTES,		/* random bytes, then a bogus WQE */
	G_STRUCTURED,		/* plausible WQEs with hurtful fields */
	G_NUM_SGE,		/* num_sge far past the stride */
	G_INLINE,		/* inline lengths past the stride */
	G_PRODUCER_AHEAD,	/* producer index more than a ring ahead */
	G_PRODUCER_BEHIND,	/* producer index behind the consumer */
	G_DB_RECORD,		/* garbage over the whole doorbell record */
	G_REWRITE,		/* WQEs rewritten while the device reads them */
	G_RECV_RING,		/* garbage receive WQEs, then good SENDs */
	G_SRQ_RING,		/* garbage SRQ WQEs, rewritten in flight */
	/* last: the CQ may not survive it (an overflow is fatal) */
	G_CQ_DB,		/* garbage CQ consumer index */
	G_NR
};

static const char *const garbage_name[G_NR] = {
	"random bytes", "structured", "huge num_sge", "huge inline",
	"producer ahead", "producer behind", "doorbell record",
	"rewrite in flight", "receive ring", "SRQ ring", "CQ doorbell",
};

/*
 * An SRQ WQE at index @idx: well formed (one SGE into mr_rw, a tag below
 * the depth) or, with @bad, garbage in the header or the SGEs.
 */
static void srq_wqe(uint32_t idx, bool bad)
{
	struct dray_srq_wqe *r = wqe_at(&srq, idx);
	struct dray_sge *s = (struct dray_sge *)(r + 1);
	size_t k, room = ((1U << srq.log_stride) - 16) / 16;

	memset(r, 0, 1U << srq.log_stride);
	r->num_sge = 1;
	r->tag = htole32(idx % srq.depth);
	put_sge(&s[0], (uintptr_t)mr_rw.addr, MR_LEN / 2, mr_rw.lkey);
	if (!bad)
		return;
	switch (rng_below(&rng, 5)) {
	case 0:
		r->num_sge = (uint8_t)rng_range(&rng, room + 1, 255);
		break;
	case 1:
		r->tag = htole32((uint32_t)rng_next(&rng) | srq.depth);
		break;
	case 2:
		r->reserved[rng_below(&rng, sizeof(r->reserved))] =
			(uint8_t)rng_range(&rng, 1, 255);
		break;
	default:
		r->num_sge = (uint8_t)rng_range(&rng, 1, room);
		for (k = 0; k < room; k++)
			put_sge(&s[k], any_addr(), any_len(), any_key());
		break;
	}
}

/* Room in the SRQ: WQEs the device has not taken count against it. */
static uint32_t srq_room(void)
{
	uint32_t taken = le32toh(__atomic_load_n(&srq.db->consumer,
						 __ATOMIC_ACQUIRE));

	return srq.depth - (srq.head - taken);
}

/* Returns how many completions can be expected at least. */
static unsigned int make_garbage(enum garbage g)
{
	size_t stride = 1U << hq.sq.log_stride;
	unsigned int n = (unsigned int)rng_range(&rng, 1, hq.sq.depth - 1), i;
	struct dray_sq_wqe *w;

	switch (g) {
	case G_RANDOM_BYTES:
		for (i = 0; i < n; i++) {
			uint8_t *p = wqe_at(&hq.sq, hq.sq.head + i);
			size_t k;

			for (k = 0; k < stride; k += 8) {
				uint64_t v = rng_next(&rng);

				memcpy(p + k, &v, 8);
			}
		}
		bogus_wqe(wqe_at(&hq.sq, hq.sq.head + n - 1), stride);
		hq.sq.head += n;
		publish(&hq.sq, hq.sq.head);
		return 1;
	case G_STRUCTURED:
		for (i = 0; i < n; i++)
			structured_wqe(wqe_at(&hq.sq, hq.sq.head + i), stride);
		bogus_wqe(wqe_at(&hq.sq, hq.sq.head + n - 1), stride);
		hq.sq.head += n;
		publish(&hq.sq, hq.sq.head);
		return 1;
	case G_NUM_SGE:
		w = wqe_at(&hq.sq, hq.sq.head);
		structured_wqe(w, stride);
		w->opcode = DRAY_WQE_RDMA_WRITE;
		w->flags = DRAY_WQE_F_SIGNALED;
		w->num_sge = (uint8_t)rng_range(&rng, (stride - 64) / 16 + 1, 255);
		publish(&hq.sq, ++hq.sq.head);
		return 1;
	case G_INLINE:
		w = wqe_at(&hq.sq, hq.sq.head);
		structured_wqe(w, stride);
		w->opcode = rng_one_in(&rng, 2) ? DRAY_WQE_SEND :
						  DRAY_WQE_RDMA_WRITE;
		w->flags = DRAY_WQE_F_SIGNALED | DRAY_WQE_F_INLINE;
		w->num_sge = 0;
		w->length = htole32(rng_one_in(&rng, 2) ? 0xffffffffU :
				    (uint32_t)rng_range(&rng, stride - 63,
							1U << 20));
		publish(&hq.sq, ++hq.sq.head);
		return 1;
	case G_PRODUCER_AHEAD:
		for (i = 0; i < hq.sq.depth; i++)
			structured_wqe(wqe_at(&hq.sq, i), stride);
		publish(&hq.sq, hq.sq.head + hq.sq.depth +
			(uint32_t)rng_range(&rng, 1, 1U << 20));
		return 0;
	case G_PRODUCER_BEHIND:
		good_write(64);
		publish(&hq.sq, hq.sq.head - (uint32_t)rng_range(&rng, 2, 1000));
		return 0;
	case G_DB_RECORD:
		{
		uint8_t *p = (uint8_t *)hq.sq.db;

		for (i = 0; i < DRAY_QUEUE_HDR_SIZE; i++)
			p[i] = (uint8_t)rng_next(&rng);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return 0;
	}
	case G_REWRITE:
		{
		uint64_t end;

		for (i = 0; i < n; i++)
			good_write((uint32_t)rng_range(&rng, 1, 4096));
		ring();
		end = now_us() + 30000;
		while (now_us() < end) {
			uint32_t k = hq.sq.head - 1 - (uint32_t)rng_below(&rng, n);

			structured_wqe(wqe_at(&hq.sq, k), stride);
		}
		return 0;
	}
	case G_RECV_RING:
		for (i = 0; i < 8; i++) {
			struct dray_rq_wqe *r = wqe_at(&pq.rq, pq.rq.head + i);
			struct dray_sge *s = (struct dray_sge *)(r + 1);
			size_t k, room = ((1U << pq.rq.log_stride) - 16) / 16;

			memset(r, 0, 1U << pq.rq.log_stride);
			r->num_sge = rng_one_in(&rng, 3) ? (uint8_t)rng_next(&rng) :
				     (uint8_t)rng_below(&rng, room + 1);
			for (k = 0; k < room; k++)
				put_sge(&s[k], any_addr(), any_len(), any_key());
		}
		pq.rq.head += 8;
		publish(&pq.rq, pq.rq.head);
		for (i = 0; i < 8; i++) {
			w = wqe_at(&hq.sq, hq.sq.head);
			memset(w, 0, stride);
			w->opcode = DRAY_WQE_SEND;
			w->flags = DRAY_WQE_F_SIGNALED;
			w->num_sge = 1;
			put_sge((struct dray_sge *)(w + 1), (uintptr_t)mr_rw.addr,
				(uint32_t)rng_range(&rng, 1, 8192), mr_rw.lkey);
			publish(&hq.sq, ++hq.sq.head);
		}
		return 1;
	case G_SRQ_RING:
		{
		uint32_t m = srq_room() < 8 ? srq_room() : 8, first = srq.head;
		uint64_t end;

		for (i = 0; i < m; i++)
			srq_wqe(srq.head + i, rng_one_in(&rng, 2));
		srq.head += m;
		publish(&srq, srq.head);
		for (i = 0; i < 8; i++) {
			w = wqe_at(&hq.sq, hq.sq.head);
			memset(w, 0, stride);
			w->opcode = DRAY_WQE_SEND;
			w->flags = DRAY_WQE_F_SIGNALED;
			w->num_sge = 1;
			put_sge((struct dray_sge *)(w + 1), (uintptr_t)mr_rw.addr,
				(uint32_t)rng_range(&rng, 1, 8192), mr_rw.lkey);
			publish(&hq.sq, ++hq.sq.head);
		}
		ring();
		/* Rewrite what was posted while the device takes it. */
		end = now_us() + 30000;
		while (m && now_us() < end)
			srq_wqe(first + (uint32_t)rng_below(&rng, m), true);
		return 1;
	}
	case G_CQ_DB:
		__atomic_store_n(&cq.db->consumer, (uint32_t)rng_next(&rng),
				 __ATOMIC_RELEASE);
		for (i = 0; i < 4; i++)
			good_write(64);
		return 0;
	default:
		return 0;
	}
}

/*
 * Garbage whose outcome must be an error: a bogus WQE or an impossible
 * producer index. The others may also just work.
 */
static bool must_fail(enum garbage g)
{
	return g == G_RANDOM_BYTES || g == G_STRUCTURED || g == G_NUM_SGE ||
	       g == G_INLINE || g == G_PRODUCER_AHEAD ||
	       g == G_PRODUCER_BEHIND;
}

/* The storm */

/* One garbage WQE in this many of the storm's */
#define STORM_BAD	256

/*
 * A WQE that parses and must succeed: RDMA WRITE (from 0 to 3 SGEs, or
 * inline), RDMA READ, or an atomic, with random lengths, addresses and
 * flags; its SGEs in the first half of mr_rw, its remote range in the
 * second half (P is on the same PD and device).
 */
static void plausible_wqe(struct dray_sq_wqe *w, size_t stride)
{
	static const uint8_t ops[] = {
		DRAY_WQE_RDMA_WRITE, DRAY_WQE_RDMA_WRITE, DRAY_WQE_RDMA_READ,
		DRAY_WQE_ATOMIC_CMP_SWP, DRAY_WQE_ATOMIC_FETCH_ADD,
	};
	struct dray_sge *s = (struct dray_sge *)(w + 1);
	uintptr_t local = (uintptr_t)mr_rw.addr;
	uintptr_t remote = local + MR_LEN / 2;
	uint32_t total = 0, n, i, len;
	uint8_t op = ops[rng_below(&rng, sizeof(ops))];

	memset(w, 0, DRAY_SQ_WQE_HDR_SIZE);
	w->opcode = op;
	w->flags = (rng_one_in(&rng, 8) ? DRAY_WQE_F_SIGNALED : 0) |
		   (rng_one_in(&rng, 8) ? DRAY_WQE_F_FENCE : 0) |
		   (rng_one_in(&rng, 8) ? DRAY_WQE_F_SOLICITED : 0);
	if (op == DRAY_WQE_ATOMIC_CMP_SWP || op == DRAY_WQE_ATOMIC_FETCH_ADD) {
		w->num_sge = 1;
		put_sge(&s[0], local + (rng_below(&rng, MR_LEN / 2) & ~7ULL), 8,
			mr_rw.lkey);
		w->u.atomic.remote_addr =
			htole64(remote + (rng_below(&rng, MR_LEN / 2) & ~7ULL));
		w->u.atomic.rkey = htole32(mr_rw.rkey);
		w->u.atomic.compare_add = rng_next(&rng);
		w->u.atomic.swap = rng_next(&rng);
		return;
	}
	if (op == DRAY_WQE_RDMA_WRITE && rng_one_in(&rng, 4)) {
		total = (uint32_t)rng_below(&rng,
					    stride - DRAY_SQ_WQE_HDR_SIZE + 1);
		w->flags |= DRAY_WQE_F_INLINE;
		w->length = htole32(total);
		for (i = 0; i < total; i++)
			((uint8_t *)(w + 1))[i] = (uint8_t)rng_next(&rng);
	} else {
		n = (uint32_t)rng_below(&rng, 4);
		w->num_sge = (uint8_t)n;
		for (i = 0; i < n; i++) {
			len = (uint32_t)rng_below(&rng, 2048);
			put_sge(&s[i], local + rng_below(&rng, MR_LEN / 2 - len),
				len, mr_rw.lkey);
			total += len;
		}
	}
	w->u.rdma.remote_addr =
		htole64(remote + rng_below(&rng, MR_LEN / 2 - total));
	w->u.rdma.rkey = htole32(mr_rw.rkey);
}

/*
 * Take H's CQEs until the one of WQE @last (every WQE after an error is
 * flushed with a CQE, so it always comes), at most 10 s. False on the
 * time limit.
 */
static bool storm_collect(struct tally *t, uint32_t last)
{
	uint64_t end = now_us() + 10000000;
	unsigned int idle = 0;

	for (;;) {
		struct dray_cqe e;

		if (take_cqe(t, &e)) {
			idle = 0;
			if (le32toh(e.qpn) == hq.qpn &&
			    le32toh(e.wqe_index) == last)
				return true;
			continue;
		}
		if (now_us() > end)
			return false;
		if (++idle > 64)
			usleep(50);
	}
}

/*
 * The storm: @n random WQEs in batches of 1 to depth - 1, each batch's
 * last WQE signaled, its doorbell record published and (mostly) KICKed.
 * One WQE in STORM_BAD is garbage (structured_wqe()); a batch with one
 * ends in an error and the pair is reset and connected again. A batch
 * without garbage must complete without an error. The guards are checked
 * every 256 batches and at the end.
 */
static void storm(uint64_t n, struct tally *all)
{
	size_t stride = 1U << hq.sq.log_stride;
	uint64_t written = 0, bad = 0, batches = 0, resets = 0;
	uint64_t t0 = now_us();
	struct tally st = { 0 };

	connect_pair("storm");
	while (written < n && !fail_count) {
		uint32_t k = (uint32_t)rng_range(&rng, 1, hq.sq.depth - 1), i;
		struct tally t = { 0 };
		struct dray_sq_wqe *w;
		bool garbage = false;

		for (i = 0; i < k; i++) {
			w = wqe_at(&hq.sq, hq.sq.head + i);
			if (rng_one_in(&rng, STORM_BAD)) {
				structured_wqe(w, stride);
				garbage = true;
				bad++;
			} else {
				plausible_wqe(w, stride);
			}
		}
		w->flags |= DRAY_WQE_F_SIGNALED;
		hq.sq.head += k;
		publish(&hq.sq, hq.sq.head);
		if (!rng_one_in(&rng, 4) ||
		    (le32toh(uar->dev.flags) & DRAY_UAR_F_NEED_WAKEUP))
			ring();
		if (!storm_collect(&t, hq.sq.head - 1))
			fail("storm batch %" PRIu64 " (%u WQEs%s): no completion of its last WQE in 10 s",
			     batches, k, garbage ? ", garbage" : "");
		if (t.errors && !garbage) {
			for (i = 1; i < 31 && !t.by_status[i]; i++)
				;
			fail("storm batch %" PRIu64 ": %u of %u CQEs in error without garbage (status %u among them)",
			     batches, t.errors, t.total, i);
		}
		st.total += t.total;
		st.success += t.success;
		st.errors += t.errors;
		for (i = 0; i < 32; i++)
			st.by_status[i] += t.by_status[i];
		written += k;
		batches++;
		if (t.errors) {
			connect_pair("storm");
			resets++;
		}
		if (!(batches % 256))
			check_guarded("storm");
	}
	check_guarded("after the storm");
	all->total += st.total;
	all->success += st.success;
	all->errors += st.errors;
	printf("hostile: storm: %" PRIu64 " WQEs (%" PRIu64 " garbage) in %" PRIu64
	       " batches, %" PRIu64 " resets, %.1f s; %u CQEs (%u ok, %u flushed, %u other errors)\n",
	       written, bad, batches, resets, (double)(now_us() - t0) / 1e6,
	       st.total, st.success, st.by_status[DRAY_CQE_ST_WR_FLUSH_ERR],
	       st.errors - st.by_status[DRAY_CQE_ST_WR_FLUSH_ERR]);
}

/* Setup */

static bool find_uverbs(const char *ibdev, char *path, size_t len)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char p[512], name[64] = "";

		if (strlen(e->d_name) > 32)
			continue;
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/%s/ibdev",
			 e->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		if (!strcmp(name, ibdev)) {
			snprintf(path, len, "/dev/infiniband/%.32s", e->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

static unsigned long taint(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "r");

	if (f) {
		if (fscanf(f, "%lu", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t;
}

/* BAD_PAGE, DIE, WARN, SOFTLOCKUP */
#define TAINT_PROBLEMS	((1UL << 5) | (1UL << 7) | (1UL << 9) | (1UL << 14))

static void on_alarm(int sig)
{
	static const char msg[] =
		"hostile: FAIL: timed out (a verb or the device hangs)\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(KSFT_FAIL);
	_exit(KSFT_FAIL);
}

static void setup(void)
{
	struct ibv_port_attr port;
	char path[256];
	int g, access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	if (!find_uverbs(opt.dev, path, sizeof(path)))
		die("no uverbs device for %s", opt.dev);
	ufd = open(path, O_RDWR | O_CLOEXEC);
	if (ufd < 0)
		die("open %s: %s", path, strerror(errno));
	get_context();

	pd1 = alloc_pd();
	pd2 = alloc_pd();

	/* guard, mr_rw, guard, mr_ro, guard, canary, guard */
	region_len = 4 * PAGE + 3 * MR_LEN;
	region = mmap(NULL, region_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	memset(region, GUARD_BYTE, region_len);
	reg_mr(pd1, region + PAGE, MR_LEN, access, &mr_rw);
	reg_mr(pd1, region + 2 * PAGE + MR_LEN, MR_LEN, IBV_ACCESS_REMOTE_READ,
	       &mr_ro);
	reg_mr(pd2, region + 3 * PAGE + 2 * MR_LEN, MR_LEN, access, &mr_canary);
	memset(mr_ro.addr, RO_BYTE, MR_LEN);
	memset(mr_canary.addr, CANARY_BYTE, MR_LEN);

	create_cq(&cq);
	create_qp(pd1, &cq, &hq, false);
	create_qp(pd1, &cq, &pq, false);
	create_srq(pd1);
	create_qp(pd1, &cq, &sq_p, true);

	/* the victim, and the port facts, through libibverbs */
	vctx = open_device(opt.dev);
	if (!vctx)
		die("cannot open %s: %s", opt.dev, strerror(errno));
	if (ibv_query_port(vctx, RC_PORT, &port))
		die("ibv_query_port failed");
	mtu = port.active_mtu;
	g = pick_gid(vctx, opt.gid_index, &gid);
	if (g < 0)
		die("no RoCEv2 GID: %s", strerror(-g));
	gid_index = g;
	vpd = ibv_alloc_pd(vctx);
	vbuf = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!vpd || vbuf == MAP_FAILED)
		die("victim setup failed");
	vmr = ibv_reg_mr(vpd, vbuf, MR_LEN, access);
	if (!vmr)
		die("victim ibv_reg_mr: %s", strerror(errno));
	memset(vbuf, VICTIM_BYTE, MR_LEN);
	printf("hostile: %s (%s): H qpn %#x -> P qpn %#x, gid[%d], mtu %d, uar %u\n",
	       opt.dev, path, hq.qpn, pq.qpn, gid_index, 128 << mtu,
	       uctx.uar_index);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "storm", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int rounds_by_kind[G_NR] = { 0 }, err_rounds = 0;
	unsigned long taint0 = taint();
	struct tally all = { 0 };
	bool seeded = false;
	struct ibv_context *probe;
	int c, r, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fail_style = (struct fail_style){
		.fail = "hostile: FAIL: ",
		.die = "hostile: FAIL: ",
		.status = KSFT_FAIL,
	};
	opt.dev = getenv("DRAY_TEST_DEV_A");
	if (!opt.dev || !*opt.dev)
		opt.dev = "dray0";
	if (getenv("DRAY_TEST_GID_INDEX"))
		opt.gid_index = atoi(getenv("DRAY_TEST_GID_INDEX"));
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'g':
			opt.gid_index = atoi(optarg);
			break;
		case 'r':
			opt.rounds = atoi(optarg);
			break;
		case 'w':
			opt.storm = strtoull(optarg, NULL, 0);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		default:
			fprintf(stderr,
				"usage: hostile [--dev NAME] [--gid-index N] [--rounds N] [--storm N] [--seed S]\n");
			return 2;
		}
	}
	if (!seeded)
		opt.seed = now_us();
	rng.s = opt.seed;

	probe = open_device(opt.dev);
	if (!probe) {
		printf("hostile: SKIP: no device %s (%s)\n", opt.dev,
		       strerror(errno));
		return KSFT_SKIP;
	}
	if (!is_dray(probe)) {
		printf("hostile: SKIP: %s is not a dray device: the test writes dray's queue formats\n",
		       opt.dev);
		ibv_close_device(probe);
		return KSFT_SKIP;
	}
	ibv_close_device(probe);

	signal(SIGALRM, on_alarm);
	/* the storm gets 2 ms a WQE on top: the debug kernel takes about 1 */
	alarm(600 + (unsigned int)(opt.storm / 500));
	printf("hostile: seed %#" PRIx64 ", %d rounds\n", opt.seed, opt.rounds);
	setup();

	/* the raw path works: a good WRITE completes */
	connect_pair("setup");
	good_write(256);
	ring();
	{
		struct tally t = { 0 };

		collect(&t, 1, 10000, 0);
		if (t.total != 1 || t.success != 1)
			die("a well-formed RDMA WRITE did not complete (%u CQEs, %u ok): the raw ABI use or the data path is broken",
			    t.total, t.success);
	}

	for (r = 0; r < opt.rounds; r++) {
		enum garbage g = (enum garbage)(r < G_CQ_DB ? (uint64_t)r :
						rng_below(&rng, G_CQ_DB));
		struct tally t = { 0 };
		unsigned int want;
		int st;

		if (g == G_SRQ_RING)
			connect_to(&sq_p, garbage_name[g]);
		else
			connect_pair(garbage_name[g]);
		want = make_garbage(g);
		if (!rng_one_in(&rng, 4))
			ring();	/* else: the engine may be polling anyway */
		else if (le32toh(uar->dev.flags) & DRAY_UAR_F_NEED_WAKEUP)
			ring();
		collect(&t, want, 3000, 300);
		st = query_qp_state(&hq);
		if (st < 0)
			fail("round %d (%s): QUERY_QP: %s", r, garbage_name[g],
			     strerror(-st));
		printf("hostile: round %2d %-18s %3u CQEs (%u ok, %u errors), H %s\n",
		       r, garbage_name[g], t.total, t.success, t.errors,
		       st >= 0 ? qp_state_str(st) : "?");
		if (must_fail(g) && !t.errors && st != IBV_QPS_ERR)
			fail("round %d (%s): neither an error completion nor the QP in error",
			     r, garbage_name[g]);
		if (t.errors || st == IBV_QPS_ERR)
			err_rounds++;
		rounds_by_kind[g]++;
		all.total += t.total;
		all.success += t.success;
		all.errors += t.errors;
		check_guarded(garbage_name[g]);

		/* the device recovered: after a reset a good WRITE works */
		connect_pair("recovery");
		good_write(64);
		ring();
		memset(&t, 0, sizeof(t));
		collect(&t, 1, 10000, 0);
		if (t.success != 1 || t.errors)
			fail("round %d (%s): a good WRITE after RESET gave %u ok, %u errors",
			     r, garbage_name[g], t.success, t.errors);
	}

	if (opt.storm)
		storm(opt.storm, &all);

	/*
	 * The SRQ's producer index far ahead: the SRQ is in error for good,
	 * a SEND to its QP puts that QP in ERR (the sender gets an error).
	 */
	{
		struct tally t = { 0 };
		int st;

		connect_to(&sq_p, "SRQ doorbell");
		publish(&srq, srq.head + srq.depth +
			(uint32_t)rng_range(&rng, 1, 1U << 20));
		good_write(64);
		{
			struct dray_sq_wqe *w = wqe_at(&hq.sq, hq.sq.head);

			memset(w, 0, 1U << hq.sq.log_stride);
			w->opcode = DRAY_WQE_SEND;
			w->flags = DRAY_WQE_F_SIGNALED;
			w->num_sge = 1;
			put_sge((struct dray_sge *)(w + 1),
				(uintptr_t)mr_rw.addr, 100, mr_rw.lkey);
			publish(&hq.sq, ++hq.sq.head);
		}
		ring();
		collect(&t, 2, 3000, 300);
		st = query_qp_state(&sq_p);
		printf("hostile: final    %-18s %3u CQEs (%u ok, %u errors), SRQ QP %s\n",
		       "SRQ doorbell", t.total, t.success, t.errors,
		       st >= 0 ? qp_state_str(st) : "?");
		if (!t.errors || st != IBV_QPS_ERR)
			fail("SRQ producer index ahead: %u errors, SRQ QP %s",
			     t.errors, st >= 0 ? qp_state_str(st) : "?");
		check_guarded("SRQ doorbell");
		ret = destroy_srq();
		if (ret != -EBUSY)
			fail("DESTROY_SRQ in use: %s, expected EBUSY",
			     strerror(-ret));
		ret = destroy_qp(&sq_p);
		if (!ret)
			ret = destroy_srq();
		if (ret)
			fail("DESTROY_QP/SRQ: %s", strerror(-ret));
	}

	/*
	 * A CQ consumer index from nowhere: the device may take the CQ for
	 * overflowed and put it in error for good, so this comes last and
	 * only the memory checks follow.
	 */
	{
		struct tally t = { 0 };

		connect_pair(garbage_name[G_CQ_DB]);
		make_garbage(G_CQ_DB);
		ring();
		collect(&t, 0, 2000, 300);
		printf("hostile: final    %-18s %3u CQEs (%u ok, %u errors)\n",
		       garbage_name[G_CQ_DB], t.total, t.success, t.errors);
		check_guarded(garbage_name[G_CQ_DB]);
	}

	/* the rings go away from under the device while the QP lives */
	connect_pair("unmap");
	for (r = 0; r < 8; r++)
		good_write(4096);
	munmap(hq.sq.buf, hq.sq.buf_size);
	ring();
	usleep(200000);
	ret = destroy_qp(&hq);
	if (ret)
		fail("DESTROY_QP with its ring unmapped: %s", strerror(-ret));
	ret = destroy_qp(&pq);
	if (ret)
		fail("DESTROY_QP of the peer: %s", strerror(-ret));
	check_guarded("end");
	/* everything else goes with the file */
	if (close(ufd))
		fail("close of the uverbs file: %s", strerror(errno));
	ibv_dereg_mr(vmr);
	ibv_dealloc_pd(vpd);
	ibv_close_device(vctx);

	if ((taint() & ~taint0) & TAINT_PROBLEMS)
		fail("the kernel tainted itself: %#lx -> %#lx", taint0, taint());

	printf("hostile: %d rounds, %u in error; %u CQEs (%u ok, %u errors)\n",
	       opt.rounds, err_rounds, all.total, all.success, all.errors);
	printf("hostile: %s (seed %#" PRIx64 ")\n", fail_count ? "FAIL" : "PASS",
	       opt.seed);
	return fail_count ? KSFT_FAIL : KSFT_PASS;
}
