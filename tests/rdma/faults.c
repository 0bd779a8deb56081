// SPDX-License-Identifier: GPL-2.0-only
/*
 * faults: verified RC traffic between two devices that a fault is done to
 * while it runs (run.sh's faults group), and the account afterwards of
 * every work request that was posted.
 *
 *   faults --mode removal|survive [--qps N] [--depth N] [--max-size B]
 *          [--timeout-exp N] [--expect-port] [--warmup N]
 *
 * Devices: DRAY_TEST_DEV_A (requester) and DRAY_TEST_DEV_B. N RC QP pairs
 * (default 4), each with up to --depth (default 16, a multiple of 4) WRs
 * in flight from A, posted four at a time: an unsignaled WRITE, a SEND, a
 * WRITE_WITH_IMM (both consume one of B's receives) and a READ, of 1 to
 * --max-size (default 8192) bytes.
 * Every SEND, WRITE_WITH_IMM and READ that completes successfully has its
 * data checked byte for byte, and its length, opcode and immediate. When
 * warmup (default 200) WRs of A have completed it prints "running", so
 * the caller can do the fault; A and B poll their async event files.
 *
 * --mode removal: a device goes away (link delete, netdev removal,
 * rmmod). The traffic stops when a context gets IBV_EVENT_DEVICE_FATAL
 * (or every pair has failed); the QPs of a context still alive are moved
 * to ERR; then every WR posted, on both sides, must complete within 30 s,
 * successfully or with an error (a gone device's provider flushes what
 * was outstanding; at a netdev's removal the device flushes its QPs
 * first), in order, each one once. At least one context must hear
 * DEVICE_FATAL within the 30 s.
 *
 * --mode survive: the link is disturbed but not removed (netdev down and
 * up, MTU changes). SIGUSR1 says the disturbance is over: after it,
 * another warmup WRs must complete; then the traffic stops and every WR
 * of A must complete successfully, and so must every receive of B a
 * message consumed; the QPs are then moved to ERR and B's other receives
 * must come back flushed. No DEVICE_FATAL; with --expect-port,
 * A must have heard IBV_EVENT_PORT_ERR and then IBV_EVENT_PORT_ACTIVE.
 *
 * Then everything is destroyed and closed, each call returning 0. One
 * summary line "faults: PASS ..." or "faults: FAIL ..." (after the
 * failures, one line each); exit 0 on PASS, 1 on FAIL, 2 on a set-up
 * error.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dray/dray_verr.h>

#include "common.h"

#define MAX_QPS		64
#define MAX_DEPTH	128
#define WSLOTS		8	/* WRITE_WITH_IMM slots per SQ slot at B */
#define READ_SRC	4	/* READ source: this many max-size pieces */
#define DRAIN_MS	30000
#define RESUME_MS	60000
#define POLL_BATCH	32

enum mode { MODE_REMOVAL, MODE_SURVIVE };

/* One queue's account: WRs are numbered 0, 1, ... in posting order. */
struct account {
	uint64_t posted;
	uint64_t done;		/* WRs 0 .. done-1 have completed */
	uint64_t ok, flushed, errors;
	uint64_t gone;		/* flushed by the provider: device gone */
};

struct pair {
	struct ibv_qp *qa, *qb;
	struct account a_sq, b_rq;
	uint8_t *sbuf, *rdbuf;		/* A: send sources, READ targets */
	uint8_t *rbuf, *wbuf, *src;	/* B: receives, WRITE_WITH_IMM, READ */
	uint8_t *scratch;		/* B: plain WRITEs land here */
	uint64_t b_recv_seq;		/* next receive-consuming message */
	bool broken;			/* an error completion: no more posts */
	uint64_t seed;
};

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t mem_len;
	bool fatal, port_err, port_active_after_err;
	unsigned int events;
};

static struct {
	enum mode mode;
	unsigned int qps, depth, rdepth;
	uint32_t max_size;
	int timeout_exp;
	bool expect_port;
	uint64_t warmup;
} opt = {
	.mode = MODE_REMOVAL,
	.qps = 4,
	.depth = 16,
	.max_size = 8192,
	.timeout_exp = -1,
	.warmup = 200,
};

static struct side A = { .name = "A" }, B = { .name = "B" };
static struct pair pairs[MAX_QPS];
static volatile sig_atomic_t fault_over;
static uint64_t a_done_total;

static void on_usr1(int sig)
{
	(void)sig;
	fault_over = 1;
}

/* The size of A's WR seq of pair p: 1 .. max_size */
static uint32_t wr_size(const struct pair *p, uint64_t seq)
{
	return 1 + (uint32_t)(mix64(p->seed ^ (seq * 0x9e3779b97f4a7c15ULL)) %
			      opt.max_size);
}

/* A's WR seq: 0 WRITE (unsignaled), 1 SEND, 2 WRITE_WITH_IMM, 3 READ */
static unsigned int wr_kind(uint64_t seq)
{
	return seq & 3;
}

static uint64_t read_offset(const struct pair *p, uint64_t seq)
{
	return mix64(p->seed + seq) % ((READ_SRC - 1) * (uint64_t)opt.max_size);
}

static uint8_t *slot(uint8_t *base, uint64_t i, unsigned int n)
{
	return base + (i % n) * opt.max_size;
}

static void side_open(struct side *s, int which)
{
	int cqe = (int)(opt.qps * (opt.depth + opt.rdepth) + 16);

	s->ctx = open_device(dev_name(which));
	if (!s->ctx)
		die("open %s: %s", dev_name(which), strerror(errno));
	if (fcntl(s->ctx->async_fd, F_SETFL,
		  fcntl(s->ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("async fd of %s: %s", dev_name(which), strerror(errno));
	s->pd = ibv_alloc_pd(s->ctx);
	s->scq = s->pd ? ibv_create_cq(s->ctx, cqe, NULL, NULL, 0) : NULL;
	s->rcq = s->scq ? ibv_create_cq(s->ctx, cqe, NULL, NULL, 0) : NULL;
	if (!s->rcq)
		die("PD or CQs on %s: %s", dev_name(which), strerror(errno));
	s->mem = page_buf(s->mem_len);
	s->mr = s->mem ? ibv_reg_mr(s->pd, s->mem, s->mem_len,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ) : NULL;
	if (!s->mr)
		die("MR of %zu bytes on %s: %s", s->mem_len, dev_name(which),
		    strerror(errno));
}

static struct ibv_qp *qp_create(struct side *s)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.cap = {
			.max_send_wr = opt.depth,
			.max_recv_wr = opt.rdepth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &qa);

	if (!qp)
		die("QP on %s: %s", s->name, strerror(errno));
	return qp;
}

static void end_of(struct side *s, struct ibv_qp *qp, struct rc_end *e,
		   uint32_t psn)
{
	struct ibv_port_attr port;
	int g;

	if (ibv_query_port(s->ctx, RC_PORT, &port))
		die("query port of %s", s->name);
	g = pick_gid(s->ctx, -1, &e->gid);
	if (g < 0)
		die("no GID on %s", s->name);
	e->qpn = qp->qp_num;
	e->psn = psn;
	e->gid_index = g;
	e->mtu = port.active_mtu;
	e->rd_atomic = 16;
}

static int post_recv(struct pair *p)
{
	uint64_t seq = p->b_rq.posted;
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(p->rbuf, seq, opt.rdepth),
		.length = opt.max_size,
		.lkey = B.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = seq,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int err = ibv_post_recv(p->qb, &wr, &bad);

	if (!err)
		p->b_rq.posted++;
	return err;
}

static int post_send(struct pair *p)
{
	uint64_t seq = p->a_sq.posted, q = seq >> 2;
	uint32_t len = wr_size(p, seq);
	uint8_t *src = slot(p->sbuf, seq, opt.depth);
	struct ibv_sge sge = {
		.addr = (uintptr_t)src,
		.length = len,
		.lkey = A.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq,
		.sg_list = &sge,
		.num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	switch (wr_kind(seq)) {
	case 0:
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = 0;
		wr.wr.rdma.remote_addr = (uintptr_t)p->scratch;
		wr.wr.rdma.rkey = B.mr->rkey;
		break;
	case 1:
		wr.opcode = IBV_WR_SEND;
		stream_fill(src, p->seed, seq << 20, len);
		break;
	case 2:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32((uint32_t)seq);
		wr.wr.rdma.remote_addr = (uintptr_t)slot(p->wbuf, q,
							 opt.depth * WSLOTS);
		wr.wr.rdma.rkey = B.mr->rkey;
		stream_fill(src, p->seed, seq << 20, len);
		break;
	default:
		wr.opcode = IBV_WR_RDMA_READ;
		sge.addr = (uintptr_t)slot(p->rdbuf, seq, opt.depth);
		wr.wr.rdma.remote_addr = (uintptr_t)(p->src +
						     read_offset(p, seq));
		wr.wr.rdma.rkey = B.mr->rkey;
		break;
	}
	err = ibv_post_send(p->qa, &wr, &bad);
	if (!err)
		p->a_sq.posted++;
	return err;
}

/*
 * Account for the completion of WR seq of a queue: completions come in
 * order, each WR once; on the send queue (sq) a completion also
 * completes the unsignaled WRITEs before it, successfully.
 */
static bool account(struct account *ac, const char *what, int i,
		    const struct ibv_wc *wc, bool sq)
{
	enum ibv_wc_status st = wc->status;
	uint64_t seq = wc->wr_id;
	uint64_t s;

	if (seq >= ac->posted || seq < ac->done) {
		fail("%s %d: completion of WR %llu, outstanding are [%llu, %llu)",
		     what, i, (unsigned long long)seq,
		     (unsigned long long)ac->done,
		     (unsigned long long)ac->posted);
		return false;
	}
	for (s = ac->done; s < seq; s++) {
		if (!sq || wr_kind(s) != 0) {
			fail("%s %d: WR %llu completed before WR %llu",
			     what, i, (unsigned long long)seq,
			     (unsigned long long)s);
			return false;
		}
		ac->ok++;	/* an unsignaled WRITE before it */
	}
	ac->done = seq + 1;
	if (st == IBV_WC_SUCCESS)
		ac->ok++;
	else if (st == IBV_WC_WR_FLUSH_ERR)
		ac->flushed++;
	else
		ac->errors++;
	if (st == IBV_WC_WR_FLUSH_ERR && wc->vendor_err == DRAY_VERR_DEVICE_GONE)
		ac->gone++;
	return true;
}

/* The pair whose QP on A (a) or B has number qpn */
static struct pair *pair_of(bool a, uint32_t qpn, int *idx)
{
	unsigned int i;

	for (i = 0; i < opt.qps; i++) {
		if ((a ? pairs[i].qa : pairs[i].qb)->qp_num == qpn) {
			*idx = (int)i;
			return &pairs[i];
		}
	}
	return NULL;
}

/* The receives that A's first n WRs consume (n a multiple of 4) */
static uint64_t consumed(uint64_t n)
{
	return n / 2;
}

static void check_a(struct pair *p, int i, const struct ibv_wc *wc)
{
	uint64_t seq = wc->wr_id;
	uint32_t len = wr_size(p, seq);
	size_t bad;

	if (wr_kind(seq) != 3)
		return;
	if (wc->opcode != IBV_WC_RDMA_READ)
		fail("pair %d: READ %llu completed as %s", i,
		     (unsigned long long)seq, wc_opcode_str(wc->opcode));
	bad = stream_check(slot(p->rdbuf, seq, opt.depth), p->seed + 1,
			   read_offset(p, seq), len);
	if (bad != len)
		fail("pair %d: READ %llu of %u bytes: byte %zu is wrong", i,
		     (unsigned long long)seq, len, bad);
}

static void check_b(struct pair *p, int i, const struct ibv_wc *wc)
{
	uint64_t r = p->b_recv_seq++;
	/* receive r is the r-th SEND or WRITE_WITH_IMM: 4(r/2) + 1 + r%2 */
	uint64_t seq = (r >> 1) * 4 + 1 + (r & 1);
	uint32_t len = wr_size(p, seq);
	const uint8_t *data;
	size_t bad;

	if (wr_kind(seq) == 1) {
		data = slot(p->rbuf, wc->wr_id, opt.rdepth);
		if (wc->opcode != IBV_WC_RECV)
			fail("pair %d: receive %llu (SEND %llu) completed as %s",
			     i, (unsigned long long)r,
			     (unsigned long long)seq,
			     wc_opcode_str(wc->opcode));
	} else {
		data = slot(p->wbuf, seq >> 2, opt.depth * WSLOTS);
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc->wc_flags & IBV_WC_WITH_IMM) ||
		    be32toh(wc->imm_data) != (uint32_t)seq)
			fail("pair %d: receive %llu (WRITE_WITH_IMM %llu): %s, imm %#x",
			     i, (unsigned long long)r,
			     (unsigned long long)seq,
			     wc_opcode_str(wc->opcode), be32toh(wc->imm_data));
	}
	if (wc->byte_len != len) {
		fail("pair %d: receive %llu of WR %llu: %u bytes, sent %u", i,
		     (unsigned long long)r, (unsigned long long)seq,
		     wc->byte_len, len);
		return;
	}
	bad = stream_check(data, p->seed, seq << 20, len);
	if (bad != len)
		fail("pair %d: receive %llu of WR %llu (%u bytes): byte %zu is wrong",
		     i, (unsigned long long)r, (unsigned long long)seq, len,
		     bad);
}

/* Poll one CQ empty; returns the completions seen. */
static int poll_side(struct side *s, bool send, bool repost)
{
	struct ibv_cq *cq = send ? s->scq : s->rcq;
	struct ibv_wc wc[POLL_BATCH];
	int n, k, total = 0, idx;

	do {
		n = ibv_poll_cq(cq, POLL_BATCH, wc);
		if (n < 0) {
			fail("ibv_poll_cq on %s: %d", s->name, n);
			return total;
		}
		for (k = 0; k < n; k++) {
			struct pair *p;
			bool is_a = s == &A;

			p = pair_of(is_a, wc[k].qp_num, &idx);
			if (!p) {
				fail("%s: completion of unknown QP %u",
				     s->name, wc[k].qp_num);
				continue;
			}
			if (!send && is_a) {
				fail("A: a receive completion (QP %u)",
				     wc[k].qp_num);
				continue;
			}
			if (send && !is_a) {
				fail("B: a send completion (QP %u)",
				     wc[k].qp_num);
				continue;
			}
			if (!account(is_a ? &p->a_sq : &p->b_rq,
				     is_a ? "A SQ" : "B RQ", idx, &wc[k], is_a))
				continue;
			if (wc[k].status != IBV_WC_SUCCESS) {
				p->broken = true;
				continue;
			}
			if (is_a) {
				a_done_total++;
				check_a(p, idx, &wc[k]);
			} else {
				check_b(p, idx, &wc[k]);
				if (repost && !p->broken && post_recv(p))
					p->broken = true;
			}
		}
		total += n;
	} while (n == POLL_BATCH);
	return total;
}

static void read_events(struct side *s)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(s->ctx, &ev)) {
		s->events++;
		switch (ev.event_type) {
		case IBV_EVENT_DEVICE_FATAL:
			s->fatal = true;
			break;
		case IBV_EVENT_PORT_ERR:
			s->port_err = true;
			break;
		case IBV_EVENT_PORT_ACTIVE:
			if (s->port_err)
				s->port_active_after_err = true;
			break;
		default:
			break;
		}
		printf("# %s: async event %s\n", s->name,
		       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

static bool all_broken(void)
{
	unsigned int i;

	for (i = 0; i < opt.qps; i++)
		if (!pairs[i].broken)
			return false;
	return true;
}

static bool all_accounted(void)
{
	unsigned int i;

	for (i = 0; i < opt.qps; i++)
		if (pairs[i].a_sq.done != pairs[i].a_sq.posted ||
		    pairs[i].b_rq.done != pairs[i].b_rq.posted)
			return false;
	return true;
}

static void poll_all(bool repost)
{
	poll_side(&B, false, repost);
	poll_side(&A, true, false);
	read_events(&A);
	read_events(&B);
}

/*
 * Post on every pair that is not broken, up to the depth, four WRs at a
 * time: the last WR posted is always a signaled READ.
 */
static void post_all(void)
{
	unsigned int i, k;

	for (i = 0; i < opt.qps; i++) {
		struct pair *p = &pairs[i];

		while (!p->broken &&
		       p->a_sq.posted - p->a_sq.done + 4 <= opt.depth)
			for (k = 0; k < 4 && !p->broken; k++)
				if (post_send(p))
					p->broken = true;
	}
}

static bool sends_done(void)
{
	unsigned int i;

	for (i = 0; i < opt.qps; i++)
		if (pairs[i].a_sq.done != pairs[i].a_sq.posted)
			return false;
	return true;
}

static void traffic(void)
{
	bool announced = false;
	uint64_t resume_from = 0, t0 = 0;

	for (;;) {
		poll_all(true);
		if (A.fatal || B.fatal || all_broken())
			return;
		if (!announced && a_done_total >= opt.warmup) {
			printf("running\n");
			fflush(stdout);
			announced = true;
		}
		if (opt.mode == MODE_SURVIVE && fault_over) {
			if (!t0) {
				t0 = now_us();
				resume_from = a_done_total;
			}
			if (a_done_total - resume_from >= opt.warmup)
				return;
			if (now_us() - t0 > RESUME_MS * 1000ULL) {
				fail("traffic did not resume: %llu WRs completed in %d s after the fault",
				     (unsigned long long)(a_done_total -
							  resume_from),
				     RESUME_MS / 1000);
				return;
			}
		}
		post_all();
	}
}

static void drain(void)
{
	uint64_t t0 = now_us();
	unsigned int i;

	/* Survival: A's sends complete first, with B still receiving. */
	while (opt.mode == MODE_SURVIVE && !sends_done() &&
	       now_us() - t0 < DRAIN_MS * 1000ULL)
		poll_all(false);
	/* The QPs of a live device to ERR: the receives left flush. */
	for (i = 0; i < opt.qps; i++) {
		if (!A.fatal)
			qp_to_state(pairs[i].qa, IBV_QPS_ERR);
		if (!B.fatal)
			qp_to_state(pairs[i].qb, IBV_QPS_ERR);
	}
	while (!all_accounted() && now_us() - t0 < DRAIN_MS * 1000ULL)
		poll_all(false);
	for (i = 0; i < opt.qps; i++) {
		struct pair *p = &pairs[i];

		if (p->a_sq.done != p->a_sq.posted)
			fail("pair %d: %llu of A's %llu send WRs never completed",
			     i, (unsigned long long)(p->a_sq.posted -
						     p->a_sq.done),
			     (unsigned long long)p->a_sq.posted);
		if (p->b_rq.done != p->b_rq.posted)
			fail("pair %d: %llu of B's %llu receive WRs never completed",
			     i, (unsigned long long)(p->b_rq.posted -
						     p->b_rq.done),
			     (unsigned long long)p->b_rq.posted);
	}
	/*
	 * Whatever arrives late. A removal's DEVICE_FATAL may come after
	 * the QPs it broke are drained: at a netdev's removal the device
	 * flushes them itself, before the driver reports the removal.
	 */
	for (;;) {
		read_events(&A);
		read_events(&B);
		if (opt.mode != MODE_REMOVAL || A.fatal || B.fatal ||
		    now_us() - t0 >= DRAIN_MS * 1000ULL)
			break;
		usleep(10000);
	}
}

static void teardown(struct side *s, bool a)
{
	unsigned int i;
	int err;

	for (i = 0; i < opt.qps; i++) {
		err = ibv_destroy_qp(a ? pairs[i].qa : pairs[i].qb);
		if (err)
			fail("%s: destroy QP: %s", s->name, strerror(err));
	}
	if ((err = ibv_dereg_mr(s->mr)))
		fail("%s: dereg MR: %s", s->name, strerror(err));
	if ((err = ibv_destroy_cq(s->scq)) || (err = ibv_destroy_cq(s->rcq)))
		fail("%s: destroy CQ: %s", s->name, strerror(err));
	if ((err = ibv_dealloc_pd(s->pd)))
		fail("%s: dealloc PD: %s", s->name, strerror(err));
	if ((err = ibv_close_device(s->ctx)))
		fail("%s: close device: %s", s->name, strerror(err));
}

static void sum(struct account *t, const struct account *a)
{
	t->posted += a->posted;
	t->done += a->done;
	t->ok += a->ok;
	t->flushed += a->flushed;
	t->errors += a->errors;
	t->gone += a->gone;
}

static void report(const char *what, const struct account *t)
{
	printf("# %s: %llu posted, %llu completed: %llu ok, %llu flushed (%llu by the provider of a gone device), %llu other errors\n",
	       what, (unsigned long long)t->posted, (unsigned long long)t->done,
	       (unsigned long long)t->ok, (unsigned long long)t->flushed,
	       (unsigned long long)t->gone, (unsigned long long)t->errors);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: faults --mode removal|survive [--qps N] [--depth N] [--max-size B]\n"
		"              [--timeout-exp N] [--expect-port] [--warmup N]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "qps", required_argument, NULL, 'q' },
		{ "depth", required_argument, NULL, 'd' },
		{ "max-size", required_argument, NULL, 's' },
		{ "timeout-exp", required_argument, NULL, 't' },
		{ "expect-port", no_argument, NULL, 'p' },
		{ "warmup", required_argument, NULL, 'w' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "removal"))
				opt.mode = MODE_REMOVAL;
			else if (!strcmp(optarg, "survive"))
				opt.mode = MODE_SURVIVE;
			else
				usage();
			break;
		case 'q':
			opt.qps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			opt.depth = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			opt.max_size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 't':
			opt.timeout_exp = atoi(optarg);
			break;
		case 'p':
			opt.expect_port = true;
			break;
		case 'w':
			opt.warmup = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !opt.qps || opt.qps > MAX_QPS || opt.depth < 4 ||
	    opt.depth % 4 || opt.depth > MAX_DEPTH || !opt.max_size ||
	    opt.max_size > (1U << 20) || opt.timeout_exp > 31)
		usage();
	/* Receives: room for every message in flight, and as many again. */
	opt.rdepth = opt.depth;
}

int main(int argc, char **argv)
{
	struct account ta = { 0 }, tb = { 0 };
	size_t ms, a_per, b_per;
	struct rc_params rp;
	unsigned int i;

	parse(argc, argv);
	fail_style = (struct fail_style){
		.fail = "# ERROR: ", .die = "faults: SETUP ", .status = 2,
		.shown = 20, .more = "# ERROR: (more not shown)",
	};
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ms = opt.max_size;
	a_per = 2 * opt.depth * ms;
	b_per = (opt.rdepth + opt.depth * WSLOTS + READ_SRC + 1) * ms;
	A.mem_len = opt.qps * a_per;
	B.mem_len = opt.qps * b_per;
	side_open(&A, 0);
	side_open(&B, 1);
	rc_params_default(&rp);
	if (opt.timeout_exp >= 0)
		rp.timeout = (uint8_t)opt.timeout_exp;
	rp.max_rd_atomic = 16;

	for (i = 0; i < opt.qps; i++) {
		struct pair *p = &pairs[i];
		struct rc_end ea, eb;
		const char *step;
		int err;

		p->seed = mix64(0xfa17 + i);
		p->sbuf = A.mem + i * a_per;
		p->rdbuf = p->sbuf + opt.depth * ms;
		p->rbuf = B.mem + i * b_per;
		p->wbuf = p->rbuf + opt.rdepth * ms;
		p->src = p->wbuf + opt.depth * WSLOTS * ms;
		p->scratch = p->src + READ_SRC * ms;
		stream_fill(p->src, p->seed + 1, 0, READ_SRC * ms);
		p->qa = qp_create(&A);
		p->qb = qp_create(&B);
		end_of(&A, p->qa, &ea, 0x100 + i);
		end_of(&B, p->qb, &eb, 0x80000 + i);
		err = rc_connect(p->qa, &ea, &eb, &rp, &step);
		if (!err)
			err = rc_connect(p->qb, &eb, &ea, &rp, &step);
		if (err)
			die("pair %u: %s: %s", i, step, strerror(err));
		while (p->b_rq.posted < opt.rdepth)
			if (post_recv(p))
				die("pair %u: post_recv: %s", i, strerror(errno));
	}
	printf("# %u QP pairs, %u WRs in flight each, messages 1 to %u bytes\n",
	       opt.qps, opt.depth, opt.max_size);

	traffic();
	drain();

	for (i = 0; i < opt.qps; i++) {
		sum(&ta, &pairs[i].a_sq);
		sum(&tb, &pairs[i].b_rq);
	}
	report("A sends", &ta);
	report("B receives", &tb);
	printf("# events: A %u%s%s, B %u%s\n", A.events,
	       A.fatal ? " (DEVICE_FATAL)" : "",
	       A.port_active_after_err ? " (PORT_ERR, PORT_ACTIVE)" : "",
	       B.events, B.fatal ? " (DEVICE_FATAL)" : "");

	if (opt.mode == MODE_REMOVAL && !A.fatal && !B.fatal)
		fail("no context heard IBV_EVENT_DEVICE_FATAL");
	if (opt.mode == MODE_SURVIVE) {
		if (A.fatal || B.fatal)
			fail("IBV_EVENT_DEVICE_FATAL, the device should have stayed");
		if (ta.ok != ta.posted || ta.flushed || ta.errors)
			fail("not every send WR of A completed successfully");
		if (tb.ok != consumed(ta.posted) || tb.errors ||
		    tb.ok + tb.flushed != tb.posted)
			fail("B's receives: %llu ok, for %llu messages",
			     (unsigned long long)tb.ok,
			     (unsigned long long)consumed(ta.posted));
		if (opt.expect_port && !A.port_active_after_err)
			fail("A heard no IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE");
	}
	if (ta.ok < opt.warmup)
		fail("only %llu WRs of A completed successfully",
		     (unsigned long long)ta.ok);

	teardown(&A, true);
	teardown(&B, false);

	if (fail_count) {
		printf("faults: FAIL (%llu errors)\n",
		       (unsigned long long)fail_count);
		return 1;
	}
	printf("faults: PASS %s: %llu WRs posted, every one completed\n",
	       opt.mode == MODE_REMOVAL ? "removal" : "survive",
	       (unsigned long long)(ta.posted + tb.posted));
	return 0;
}
