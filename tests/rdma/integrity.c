// SPDX-License-Identifier: GPL-2.0-only
/*
 * Data integrity over RC: two QPs in this process (on two devices, or
 * both on one) move random payloads of random sizes between random
 * offsets of registered buffers with every opcode, and every byte is
 * checked on the other side.
 *
 *   integrity [--dev-a NAME] [--dev-b NAME] [--gid-index N] [--iters N]
 *             [--seed S] [--max-size BYTES] [--big] [--big-size BYTES]
 *             [--mr-offset] [--iova] [--ops LIST] [--one-way]
 *             [--max-batch N] [--max-sge N] [--timeout-exp N]
 *             [--wait-ms MS] [--quiet] [--srq]
 *
 * Each batch is a few operations in one or both directions, posted as WR
 * chains or one by one, signaled or not (the last WR of each queue is
 * signaled), inline when small enough; SENDs and WRITE_WITH_IMMs consume
 * receives posted beforehand with several SGEs (with --srq, on each side's
 * shared receive queue). Operations of a batch use
 * disjoint pieces of the buffers. Every buffer byte outside a piece in use
 * holds the buffer's background value; after a batch the pieces are
 * checked (payload, the bytes a receive did not need, guard bytes around
 * each piece), then reset to the background. At the end every buffer is
 * scanned whole. Completions are checked for status, opcode, order,
 * byte_len, immediate data and QP number; atomics for the value returned
 * and the value left behind.
 *
 * Exit status: 0 everything correct, 1 a mismatch or an error completion
 * or a timeout, 2 bad usage or setup failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define MAX_SGE		16
#define MAX_BATCH	32
#define NBUF		3
#define GUARD		512	/* checked bytes around every piece */
#define MAX_PIECES	(MAX_BATCH * 2 * MAX_SGE + 8)
#define MAX_REPORT	10	/* mismatches printed in detail */

enum op_kind {
	OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CMP_SWP,
	OP_FETCH_ADD, OP_NR
};

static const char *const op_name[OP_NR] = {
	"SEND", "SEND_WITH_IMM", "RDMA_WRITE", "RDMA_WRITE_WITH_IMM",
	"RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD",
};

static const char *const op_short[OP_NR] = {
	"send", "send_imm", "write", "write_imm", "read", "cmp_swp",
	"fetch_add",
};

/* A piece of one of a side's buffers: offset from the MR start. */
struct piece {
	int buf;
	size_t off;
	size_t len;
};

struct op {
	enum op_kind kind;
	int req;		/* requester side; the responder is !req */
	uint64_t len;
	uint64_t seed;		/* payload stream */
	int nloc;		/* requester SGEs */
	struct piece loc[MAX_SGE];
	int nrem;		/* WRITE/READ/atomic target, or receive SGEs */
	struct piece rem[MAX_SGE];
	bool has_recv;
	bool inl, signaled, fence, solicited;
	bool cover;		/* placed by --cover */
	uint32_t imm;		/* network order, as in the WR */
	uint64_t old, cmp, swap_add;
	uint64_t send_id, recv_id;
	bool done_send, done_recv;
};

struct buf {
	uint8_t *map;		/* mmap'ed area */
	size_t map_len;
	uint8_t *addr;		/* MR start (maybe not page aligned) */
	size_t len;
	uint64_t iova;		/* the MR's address for the device */
	struct ibv_mr *mr;
	uint8_t bg;		/* background byte */
	/* pieces allocated in the current batch */
	int npieces;
	struct piece pieces[MAX_PIECES];
};

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;	/* the same CQ on side A */
	struct ibv_qp *qp;
	struct ibv_srq *srq;	/* --srq: the QP's receive queue */
	struct rc_end end;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct buf b[NBUF];
	uint32_t max_inline, max_send_sge, max_recv_sge, max_rd_sge;
	/* ops of the batch whose WRs are on this side's SQ / RQ, in order */
	int nsq, nrq;
	int sq[MAX_BATCH], rq[MAX_BATCH];
	int sq_next, rq_next;	/* next expected completion */
};

struct stats {
	uint64_t ops[OP_NR], bytes[OP_NR];
	uint64_t inl, unsignaled, multi_sge, fenced, zero_len, big;
	uint64_t chains, batches;
	uint64_t min_len, max_len;
};

static struct {
	const char *dev[2];
	int gid_index;
	uint64_t iters;
	uint64_t seed;
	uint64_t max_size;
	bool big;
	uint64_t big_size;
	bool mr_offset;
	bool iova;
	unsigned int ops_mask;
	bool one_way;
	int max_batch;
	int max_sge;
	int timeout_exp;
	unsigned int wait_ms;
	bool quiet;
	bool inject;
	bool cover;
	bool srq;
} opt = {
	.gid_index = -1,
	.iters = 1000,
	.max_size = 4 << 20,
	.big_size = 64 << 20,
	.ops_mask = (1U << OP_NR) - 1,
	.max_batch = 8,
	.max_sge = 4,
	.timeout_exp = 14,
	.wait_ms = 60000,
};

static struct side sides[2];
static struct rng rng;
static struct stats st;
static struct op ops[MAX_BATCH];
static int nops;
static uint64_t batch_no;
static bool injected;		/* --inject-error has flipped its byte */
static uint64_t max_len;	/* largest op length (max_msg_sz capped) */
static uint64_t big_len;
static uint32_t path_mtu;	/* bytes */

/*
 * --cover: the run starts with one operation of every kind, from each
 * side, in each packet shape: ONLY (one packet), FIRST + LAST and
 * FIRST + MIDDLE + LAST (atomics: one shape). cover_next counts the ones
 * placed; the random operations follow.
 */
#define COVER_SHAPES 3
static unsigned int cover_next;

static bool is_atomic(enum op_kind k)
{
	return k == OP_CMP_SWP || k == OP_FETCH_ADD;
}

static bool cover_pick(enum op_kind *kind, int *req, int *shape)
{
	unsigned int i = cover_next, k;

	if (!opt.cover)
		return false;
	for (*req = 0; *req < (opt.one_way ? 1 : 2); (*req)++) {
		for (k = 0; k < OP_NR; k++) {
			int shapes = is_atomic((enum op_kind)k) ? 1 : COVER_SHAPES;

			if (!(opt.ops_mask & (1U << k)))
				continue;
			if (i < (unsigned int)shapes) {
				*kind = (enum op_kind)k;
				*shape = (int)i;
				return true;
			}
			i -= (unsigned int)shapes;
		}
	}
	return false;
}

/* A length of SHAPE packets at the path MTU (capped at max_len). */
static uint64_t cover_len(int shape)
{
	uint64_t lo = shape ? (uint64_t)shape * path_mtu + 1 : 1;
	uint64_t hi = (uint64_t)(shape + 1) * path_mtu;

	if (hi > max_len)
		hi = max_len;
	if (lo > hi)
		lo = hi;
	return rng_range(&rng, lo, hi);
}

static void describe(const struct op *o, int idx, char *out, size_t len)
{
	snprintf(out, len,
		 "batch %" PRIu64 " op %d %s %s->%s len %" PRIu64
		 " sges %d/%d%s%s",
		 batch_no, idx, op_name[o->kind], sides[o->req].name,
		 sides[!o->req].name, o->len, o->nloc, o->nrem,
		 o->inl ? " inline" : "", o->signaled ? "" : " unsignaled");
}

/* Setup */

static size_t buf_size(int i)
{
	size_t sz = 2 * opt.max_size + 4 * GUARD + 4096;

	if (i == 0 && opt.big && big_len + 4 * GUARD + 4096 > sz)
		sz = big_len + 4 * GUARD + 4096;
	return sz;
}

static void setup_bufs(struct side *s, int side_idx)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;
	int i;

	if (s->dattr.atomic_cap != IBV_ATOMIC_NONE)
		access |= IBV_ACCESS_REMOTE_ATOMIC;

	for (i = 0; i < NBUF; i++) {
		struct buf *b = &s->b[i];
		size_t off = opt.mr_offset ? rng_below(&rng, 4096) : 0;

		b->len = buf_size(i);
		b->map_len = (b->len + off + 4095) & ~(size_t)4095;
		b->map = mmap(NULL, b->map_len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b->map == MAP_FAILED)
			die("mmap of %zu bytes: %s", b->map_len,
			    strerror(errno));
		b->addr = b->map + off;
		b->bg = (uint8_t)(0x3c + 0x41 * (side_idx * NBUF + i));
		memset(b->map, b->bg, b->map_len);
		if (opt.iova) {
			/* any IOVA with the address's offset in the page */
			b->iova = (rng_range(&rng, 1, 1ULL << 28) << 12) |
				  ((uintptr_t)b->addr & 4095);
			b->mr = ibv_reg_mr_iova(s->pd, b->addr, b->len,
						b->iova, access);
		} else {
			b->iova = (uintptr_t)b->addr;
			b->mr = ibv_reg_mr(s->pd, b->addr, b->len, access);
		}
		if (!b->mr)
			die("%s: ibv_reg_mr of %zu bytes: %s", s->name, b->len,
			    strerror(errno));
	}
}

static struct ibv_qp *create_qp(struct side *s)
{
	static const uint32_t inl_try[] = { 256, 220, 128, 64, 32, 0 };
	struct ibv_qp_init_attr a;
	struct ibv_qp *qp;
	size_t i;

	for (i = 0; i < sizeof(inl_try) / sizeof(inl_try[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.send_cq = s->scq;
		a.recv_cq = s->rcq;
		a.qp_type = IBV_QPT_RC;
		a.sq_sig_all = 0;
		a.cap.max_send_wr = 2 * MAX_BATCH;
		a.cap.max_recv_wr = 2 * MAX_BATCH;
		a.cap.max_send_sge = s->max_send_sge;
		a.cap.max_recv_sge = s->max_recv_sge;
		a.cap.max_inline_data = inl_try[i];
		if (s->srq) {
			a.srq = s->srq;
			a.cap.max_recv_wr = 0;
			a.cap.max_recv_sge = 0;
		}
		qp = ibv_create_qp(s->pd, &a);
		if (qp) {
			s->max_inline = a.cap.max_inline_data;
			return qp;
		}
		if (errno != EINVAL)
			break;
	}
	die("%s: ibv_create_qp: %s", s->name, strerror(errno));
}

/* --srq: the side's receives go through a shared receive queue */
static void create_srq(struct side *s)
{
	struct ibv_srq_init_attr a;

	if (!s->dattr.max_srq)
		die("%s: the device has no SRQ", s->name);
	if (s->max_recv_sge > (uint32_t)s->dattr.max_srq_sge)
		s->max_recv_sge = (uint32_t)s->dattr.max_srq_sge;
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = 2 * MAX_BATCH;
	a.attr.max_sge = s->max_recv_sge;
	s->srq = ibv_create_srq(s->pd, &a);
	if (!s->srq)
		die("%s: ibv_create_srq: %s", s->name, strerror(errno));
}

static void setup_side(struct side *s, int idx)
{
	int cqe = 4 * MAX_BATCH + 8;
	int g;

	s->name = idx ? "B" : "A";
	s->ctx = open_device(opt.dev[idx]);
	if (!s->ctx)
		die("cannot open device %s: %s",
		    opt.dev[idx] ? opt.dev[idx] : "(first)", strerror(errno));
	if (ibv_query_device(s->ctx, &s->dattr))
		die("%s: ibv_query_device failed", s->name);
	if (ibv_query_port(s->ctx, RC_PORT, &s->pattr))
		die("%s: ibv_query_port failed", s->name);
	if (s->pattr.state != IBV_PORT_ACTIVE)
		die("%s: port %d is not ACTIVE", s->name, RC_PORT);
	g = pick_gid(s->ctx, opt.gid_index, &s->end.gid);
	if (g < 0)
		die("%s: no usable GID: %s", s->name, strerror(-g));
	s->end.gid_index = g;
	s->end.mtu = s->pattr.active_mtu;
	s->end.rd_atomic = (uint8_t)(s->dattr.max_qp_rd_atom < 16 ?
				     s->dattr.max_qp_rd_atom : 16);
	if (s->dattr.max_qp_init_rd_atom < s->end.rd_atomic)
		s->end.rd_atomic = (uint8_t)s->dattr.max_qp_init_rd_atom;
	s->end.psn = rng_one_in(&rng, 2) ?
		     (uint32_t)(0xffffff - rng_below(&rng, 2 * MAX_BATCH)) :
		     (uint32_t)rng_below(&rng, 1U << 24);

	s->max_send_sge = (uint32_t)(s->dattr.max_sge < opt.max_sge ?
				     s->dattr.max_sge : opt.max_sge);
	s->max_recv_sge = s->max_send_sge;
	s->max_rd_sge = s->dattr.max_sge_rd ?
			(uint32_t)s->dattr.max_sge_rd : 1;
	if (s->max_rd_sge > s->max_send_sge)
		s->max_rd_sge = s->max_send_sge;

	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("%s: ibv_alloc_pd: %s", s->name, strerror(errno));
	s->scq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!s->scq)
		die("%s: ibv_create_cq: %s", s->name, strerror(errno));
	/* A: one CQ for both queues; B: one CQ each */
	s->rcq = s->scq;
	if (idx) {
		s->rcq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
		if (!s->rcq)
			die("%s: ibv_create_cq: %s", s->name, strerror(errno));
	}
	if (opt.srq)
		create_srq(s);
	s->qp = create_qp(s);
	s->end.qpn = s->qp->qp_num;
}

static void setup(void)
{
	struct rc_params p;
	const char *step;
	uint64_t msg;
	int i, err;

	for (i = 0; i < 2; i++)
		setup_side(&sides[i], i);

	msg = sides[0].pattr.max_msg_sz < sides[1].pattr.max_msg_sz ?
	      sides[0].pattr.max_msg_sz : sides[1].pattr.max_msg_sz;
	max_len = opt.max_size;
	if (msg && max_len > msg) {
		printf("integrity: --max-size %" PRIu64
		       " capped to the ports' max_msg_sz %" PRIu64 "\n",
		       max_len, msg);
		max_len = msg;
		opt.max_size = msg;
	}
	path_mtu = 128U << (sides[0].end.mtu < sides[1].end.mtu ?
			    sides[0].end.mtu : sides[1].end.mtu);
	big_len = opt.big_size;
	if (opt.big && msg && big_len > msg) {
		printf("integrity: --big-size %" PRIu64
		       " capped to the ports' max_msg_sz %" PRIu64 "\n",
		       big_len, msg);
		big_len = msg;
	}
	if (sides[0].dattr.atomic_cap == IBV_ATOMIC_NONE ||
	    sides[1].dattr.atomic_cap == IBV_ATOMIC_NONE) {
		if (opt.ops_mask & ((1U << OP_CMP_SWP) | (1U << OP_FETCH_ADD)))
			printf("integrity: a device has no atomics: atomics off\n");
		opt.ops_mask &= ~((1U << OP_CMP_SWP) | (1U << OP_FETCH_ADD));
	}
	if (!opt.ops_mask)
		die("no operation left to run");

	for (i = 0; i < 2; i++)
		setup_bufs(&sides[i], i);

	rc_params_default(&p);
	p.timeout = (uint8_t)opt.timeout_exp;
	for (i = 0; i < 2; i++) {
		struct side *s = &sides[i], *peer = &sides[!i];

		err = rc_connect(s->qp, &s->end, &peer->end, &p, &step);
		if (err)
			die("%s: %s: %s", s->name, step, strerror(err));
	}

	for (i = 0; i < 2; i++) {
		struct side *s = &sides[i];
		char gid[64];

		inet_ntop(AF_INET6, s->end.gid.raw, gid, sizeof(gid));
		printf("integrity: %s = %s qpn %#x gid[%d] %s mtu %d psn %#x inline %u sge %u/%u/%u rd_atom %u%s\n",
		       s->name, ibv_get_device_name(s->ctx->device),
		       s->end.qpn, s->end.gid_index, gid,
		       128 << s->end.mtu, s->end.psn, s->max_inline,
		       s->max_send_sge, s->max_recv_sge, s->max_rd_sge,
		       s->end.rd_atomic,
		       s->srq ? " srq" : "");
	}
}

/* Allocation of pieces within one batch */

static bool overlaps(const struct buf *b, size_t off, size_t len)
{
	int i;

	for (i = 0; i < b->npieces; i++) {
		const struct piece *p = &b->pieces[i];

		/* keep 2 * GUARD between pieces so guards never overlap one */
		if (off < p->off + p->len + 2 * GUARD &&
		    p->off < off + len + 2 * GUARD)
			return true;
	}
	return false;
}

/* A random free piece of len bytes (aligned to align) on side s. */
static bool alloc_piece(struct side *s, size_t len, size_t align,
			struct piece *out, int only_buf)
{
	int tries;

	for (tries = 0; tries < 24; tries++) {
		int bi = only_buf >= 0 ? only_buf : (int)rng_below(&rng, NBUF);
		struct buf *b = &s->b[bi];
		size_t lo = GUARD, hi, off;

		if (b->npieces >= MAX_PIECES || len + 2 * GUARD > b->len)
			continue;
		hi = b->len - GUARD - len;
		/* prefer places near a page boundary now and then */
		if (rng_one_in(&rng, 4)) {
			size_t page = rng_below(&rng, b->len / 4096 + 1) * 4096;

			off = page + rng_below(&rng, 16) - 8;
		} else {
			off = rng_range(&rng, lo, hi);
		}
		if (align > 1) {
			/* align the device address, not the local pointer */
			uint64_t a = b->iova + off;

			off += (align - (a & (align - 1))) & (align - 1);
		}
		if (off < lo || off > hi)
			continue;
		if (overlaps(b, off, len))
			continue;
		out->buf = bi;
		out->off = off;
		out->len = len;
		b->pieces[b->npieces++] = *out;
		return true;
	}
	return false;
}

/* Split len into n SGE pieces of at least 1 byte each. */
static bool alloc_sges(struct side *s, uint64_t len, int n,
		       struct piece *out, int *nout)
{
	uint64_t left = len;
	int i;

	if (len == 0) {
		*nout = 0;
		return true;
	}
	if ((uint64_t)n > len)
		n = (int)len;
	for (i = 0; i < n; i++) {
		uint64_t part;

		if (i == n - 1)
			part = left;
		else
			part = rng_range(&rng, 1, left - (uint64_t)(n - 1 - i));
		if (!alloc_piece(s, part, 1, &out[i], -1))
			return false;
		left -= part;
	}
	*nout = n;
	return true;
}

static void release_pieces(void)
{
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < NBUF; j++)
			sides[i].b[j].npieces = 0;
}

static uint64_t pick_len(void)
{
	unsigned int bits = 0;
	uint64_t m = max_len;

	/* about one in 32 operations is big, the first one early */
	if (opt.big && big_len > max_len &&
	    (st.big == 0 || rng_one_in(&rng, 32))) {
		st.big++;
		return rng_range(&rng, max_len, big_len);
	}
	while ((1ULL << bits) < m)
		bits++;
	bits = (unsigned int)rng_below(&rng, bits + 1);
	m = 1ULL << bits;
	if (m > max_len)
		m = max_len;
	return rng_range(&rng, 1, m);
}

static enum op_kind pick_kind(void)
{
	for (;;) {
		enum op_kind k = (enum op_kind)rng_below(&rng, OP_NR);

		if (opt.ops_mask & (1U << k))
			return k;
	}
}

/*
 * Make one operation with its memory; false if it does not fit into the
 * buffers any more (the batch is then full).
 */
static bool make_op(struct op *o)
{
	struct side *rq, *rs;
	int n, shape = -1;

	memset(o, 0, sizeof(*o));
	if (cover_pick(&o->kind, &o->req, &shape)) {
		o->cover = true;
	} else {
		o->kind = pick_kind();
		o->req = opt.one_way ? 0 : (int)rng_below(&rng, 2);
	}
	rq = &sides[o->req];
	rs = &sides[!o->req];
	o->seed = rng_next(&rng);
	o->imm = (uint32_t)rng_next(&rng);
	o->fence = rng_one_in(&rng, 8);
	o->solicited = rng_one_in(&rng, 4);
	o->signaled = !rng_one_in(&rng, 3);

	if (is_atomic(o->kind)) {
		o->len = 8;
		o->old = rng_next(&rng);
		o->cmp = rng_one_in(&rng, 2) ? o->old : rng_next(&rng);
		o->swap_add = rng_next(&rng);
		if (!alloc_piece(rq, 8, 1, &o->loc[0], -1))
			return false;
		o->nloc = 1;
		if (!alloc_piece(rs, 8, 8, &o->rem[0], -1))
			return false;
		o->nrem = 1;
		return true;
	}

	if (o->cover)
		o->len = cover_len(shape);
	else
		o->len = rng_one_in(&rng, 32) && o->kind != OP_READ ? 0 :
			 pick_len();
	n = (int)rng_range(&rng, 1, o->kind == OP_READ ? rq->max_rd_sge :
						  rq->max_send_sge);
	if (!alloc_sges(rq, o->len, n, o->loc, &o->nloc))
		return false;
	if (o->kind != OP_READ && o->len <= rq->max_inline &&
	    rng_one_in(&rng, 2))
		o->inl = true;

	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		{
		/* receive buffers: the payload plus some slack */
		uint64_t cap = o->len + (rng_one_in(&rng, 2) ?
					 rng_below(&rng, 300) : 0);

		n = (int)rng_range(&rng, 1, rs->max_recv_sge);
		if (!alloc_sges(rs, cap, n, o->rem, &o->nrem))
			return false;
		o->has_recv = true;
		break;
	}
	case OP_WRITE:
	case OP_WRITE_IMM:
	case OP_READ:
		/* a zero-length WRITE still gets a (1-byte) place */
		if (!alloc_piece(rs, o->len ? o->len : 1, 1, &o->rem[0], -1))
			return false;
		o->rem[0].len = o->len;
		o->nrem = 1;
		if (o->kind != OP_WRITE_IMM)
			break;
		o->has_recv = true;
		/* maybe an SGE on the receive: it must stay untouched */
		if (rng_one_in(&rng, 2)) {
			if (!alloc_piece(rs, rng_range(&rng, 1, 64), 1,
					 &o->rem[1], -1))
				return false;
			o->nrem = 2;
		}
		break;
	default:
		break;
	}
	return true;
}

/* Memory preparation, posting */

static uint8_t *ptr(struct side *s, const struct piece *p)
{
	return s->b[p->buf].addr + p->off;
}

static uint64_t dev_addr(struct side *s, const struct piece *p)
{
	return s->b[p->buf].iova + p->off;
}

static void prepare(struct op *o)
{
	struct side *rq = &sides[o->req], *rs = &sides[!o->req];
	uint64_t pos = 0;
	int i;

	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE:
	case OP_WRITE_IMM:
		for (i = 0; i < o->nloc; i++) {
			stream_fill(ptr(rq, &o->loc[i]), o->seed, pos,
				    o->loc[i].len);
			pos += o->loc[i].len;
		}
		break;
	case OP_READ:
		stream_fill(ptr(rs, &o->rem[0]), o->seed, 0, o->len);
		break;
	case OP_CMP_SWP:
	case OP_FETCH_ADD:
		memcpy(ptr(rs, &o->rem[0]), &o->old, 8);
		break;
	default:
		break;
	}
}

static void fill_sges(struct side *s, const struct piece *p, int n,
		      struct ibv_sge *sge, bool inl)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = inl ? (uintptr_t)ptr(s, &p[i]) : dev_addr(s, &p[i]);
		sge[i].length = (uint32_t)p[i].len;
		sge[i].lkey = s->b[p[i].buf].mr->lkey;
	}
}

static void post_recvs(struct side *s)
{
	static struct ibv_recv_wr wr[MAX_BATCH];
	static struct ibv_sge sge[MAX_BATCH][MAX_SGE];
	struct ibv_recv_wr *bad = NULL;
	bool chain = rng_one_in(&rng, 2);
	int i, err;

	for (i = 0; i < s->nrq; i++) {
		struct op *o = &ops[s->rq[i]];
		/* WRITE_IMM: rem[0] is the target, rem[1] an optional SGE */
		int first = o->kind == OP_WRITE_IMM ? 1 : 0;
		int n = o->nrem - first;

		fill_sges(s, &o->rem[first], n, sge[i], false);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = o->recv_id;
		wr[i].sg_list = sge[i];
		wr[i].num_sge = n;
		wr[i].next = chain && i + 1 < s->nrq ? &wr[i + 1] : NULL;
	}
	for (i = 0; i < s->nrq; i++) {
		if (chain && i > 0)
			break;
		if (s->srq)
			err = ibv_post_srq_recv(s->srq, &wr[i], &bad);
		else
			err = ibv_post_recv(s->qp, &wr[i], &bad);
		if (err)
			die("%s: %s: %s", s->name,
			    s->srq ? "ibv_post_srq_recv" : "ibv_post_recv",
			    strerror(err));
	}
}

static void post_sends(struct side *s)
{
	static struct ibv_send_wr wr[MAX_BATCH];
	static struct ibv_sge sge[MAX_BATCH][MAX_SGE];
	struct side *peer = s == &sides[0] ? &sides[1] : &sides[0];
	struct ibv_send_wr *bad = NULL;
	bool chain = rng_one_in(&rng, 2);
	int i, err;

	if (chain && s->nsq > 1)
		st.chains++;
	for (i = 0; i < s->nsq; i++) {
		struct op *o = &ops[s->sq[i]];
		struct ibv_send_wr *w = &wr[i];

		if (i == s->nsq - 1)
			o->signaled = true;
		memset(w, 0, sizeof(*w));
		fill_sges(s, o->loc, o->nloc, sge[i], o->inl);
		w->wr_id = o->send_id;
		w->sg_list = sge[i];
		w->num_sge = o->nloc;
		w->send_flags = (o->signaled ? IBV_SEND_SIGNALED : 0) |
				(o->inl ? IBV_SEND_INLINE : 0) |
				(o->fence ? IBV_SEND_FENCE : 0);
		switch (o->kind) {
		case OP_SEND:
			w->opcode = IBV_WR_SEND;
			w->send_flags |= o->solicited ? IBV_SEND_SOLICITED : 0;
			break;
		case OP_SEND_IMM:
			w->opcode = IBV_WR_SEND_WITH_IMM;
			w->imm_data = o->imm;
			w->send_flags |= o->solicited ? IBV_SEND_SOLICITED : 0;
			break;
		case OP_WRITE:
			w->opcode = IBV_WR_RDMA_WRITE;
			break;
		case OP_WRITE_IMM:
			w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
			w->imm_data = o->imm;
			break;
		case OP_READ:
			w->opcode = IBV_WR_RDMA_READ;
			break;
		case OP_CMP_SWP:
			w->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			w->wr.atomic.compare_add = o->cmp;
			w->wr.atomic.swap = o->swap_add;
			break;
		case OP_FETCH_ADD:
			w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			w->wr.atomic.compare_add = o->swap_add;
			break;
		default:
			break;
		}
		if (is_atomic(o->kind)) {
			w->wr.atomic.remote_addr = dev_addr(peer, &o->rem[0]);
			w->wr.atomic.rkey = peer->b[o->rem[0].buf].mr->rkey;
		} else if (o->kind != OP_SEND && o->kind != OP_SEND_IMM) {
			w->wr.rdma.remote_addr = dev_addr(peer, &o->rem[0]);
			w->wr.rdma.rkey = peer->b[o->rem[0].buf].mr->rkey;
		}
		w->next = chain && i + 1 < s->nsq ? &wr[i + 1] : NULL;

		st.ops[o->kind]++;
		st.bytes[o->kind] += o->len;
		st.inl += o->inl;
		st.unsignaled += !o->signaled;
		st.fenced += o->fence;
		st.multi_sge += o->nloc > 1 || o->nrem > 1;
		st.zero_len += o->len == 0 && !is_atomic(o->kind);
		if (o->len < st.min_len)
			st.min_len = o->len;
		if (o->len > st.max_len)
			st.max_len = o->len;
	}
	for (i = 0; i < s->nsq; i++) {
		int last = chain ? s->nsq - 1 : i, k, j;

		if (chain && i > 0)
			break;
		err = ibv_post_send(s->qp, &wr[i], &bad);
		if (err) {
			char d[256];
			int at = bad ? (int)(bad - wr) : i;

			describe(&ops[s->sq[at]], s->sq[at], d, sizeof(d));
			die("%s: ibv_post_send: %s (%s)", s->name,
			    strerror(err), d);
		}
		/*
		 * Inline data is copied when the WR is posted: scribble over
		 * the source so that a late read of it would show.
		 */
		for (k = i; k <= last; k++) {
			struct op *p = &ops[s->sq[k]];

			if (!p->inl)
				continue;
			for (j = 0; j < p->nloc; j++)
				memset(ptr(s, &p->loc[j]), 0xee, p->loc[j].len);
		}
	}
}

/* Completions */

static enum ibv_wc_opcode expected_wc_opcode(enum op_kind k)
{
	switch (k) {
	case OP_SEND:
	case OP_SEND_IMM:
		return IBV_WC_SEND;
	case OP_WRITE:
	case OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case OP_READ:
		return IBV_WC_RDMA_READ;
	case OP_CMP_SWP:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_FETCH_ADD;
	}
}

static void check_wc(struct side *s, const struct ibv_wc *wc)
{
	bool recv = wc->wr_id & 1;
	int idx = (int)((wc->wr_id >> 1) & 0xff);
	struct op *o;
	char d[256];

	if ((wc->wr_id >> 16) != batch_no || idx >= nops) {
		fail("%s: completion with unknown wr_id %#" PRIx64
		     " status %s (batch %" PRIu64 ")", s->name, wc->wr_id,
		     ibv_wc_status_str(wc->status), batch_no);
		return;
	}
	o = &ops[idx];
	describe(o, idx, d, sizeof(d));
	if (wc->status != IBV_WC_SUCCESS) {
		fail("%s: %s completion: status %s (%d) vendor_err %#x: %s",
		     s->name, recv ? "receive" : "send",
		     ibv_wc_status_str(wc->status), wc->status,
		     wc->vendor_err, d);
		if (recv)
			o->done_recv = true;
		else
			o->done_send = true;
		return;
	}
	if (wc->qp_num != s->qp->qp_num)
		fail("%s: completion qp_num %#x, expected %#x: %s", s->name,
		     wc->qp_num, s->qp->qp_num, d);

	if (!recv) {
		/* in order among the signaled WRs of this SQ */
		while (s->sq_next < s->nsq && s->sq[s->sq_next] != idx &&
		       !ops[s->sq[s->sq_next]].signaled)
			ops[s->sq[s->sq_next++]].done_send = true;
		if (s->sq_next >= s->nsq || s->sq[s->sq_next] != idx)
			fail("%s: send completion out of order: %s", s->name, d);
		else
			s->sq_next++;
		if (o->done_send)
			fail("%s: second send completion: %s", s->name, d);
		o->done_send = true;
		if (wc->opcode != expected_wc_opcode(o->kind))
			fail("%s: send completion opcode %s, expected %s: %s",
			     s->name, wc_opcode_str(wc->opcode),
			     wc_opcode_str(expected_wc_opcode(o->kind)), d);
		return;
	}

	if (s->rq_next >= s->nrq || s->rq[s->rq_next] != idx)
		fail("%s: receive completion out of order: %s", s->name, d);
	else
		s->rq_next++;
	if (o->done_recv)
		fail("%s: second receive completion: %s", s->name, d);
	o->done_recv = true;
	if (o->kind == OP_WRITE_IMM) {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM)
			fail("%s: receive opcode %s, expected RECV_RDMA_WITH_IMM: %s",
			     s->name, wc_opcode_str(wc->opcode), d);
	} else if (wc->opcode != IBV_WC_RECV) {
		fail("%s: receive opcode %s, expected RECV: %s", s->name,
		     wc_opcode_str(wc->opcode), d);
	}
	if (wc->byte_len != o->len)
		fail("%s: receive byte_len %u, expected %" PRIu64 ": %s",
		     s->name, wc->byte_len, o->len, d);
	if (o->kind == OP_SEND_IMM || o->kind == OP_WRITE_IMM) {
		if (!(wc->wc_flags & IBV_WC_WITH_IMM))
			fail("%s: receive without IBV_WC_WITH_IMM: %s", s->name,
			     d);
		else if (wc->imm_data != o->imm)
			fail("%s: immediate %#x, expected %#x: %s", s->name,
			     ntohl(wc->imm_data), ntohl(o->imm), d);
	} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
		fail("%s: receive has IBV_WC_WITH_IMM for a SEND: %s", s->name,
		     d);
	}
}

static int expected_completions(void)
{
	int i, n = 0;

	for (i = 0; i < nops; i++)
		n += ops[i].signaled + ops[i].has_recv;
	return n;
}

static bool wait_completions(void)
{
	struct ibv_cq *cqs[3] = { sides[0].scq, sides[1].scq, sides[1].rcq };
	struct side *owner[3] = { &sides[0], &sides[1], &sides[1] };
	uint64_t deadline = now_us() + (uint64_t)opt.wait_ms * 1000;
	int want = expected_completions(), got = 0;
	unsigned int idle = 0;
	uint64_t err_before = fail_count;

	while (got < want) {
		int c, progress = 0;

		for (c = 0; c < 3; c++) {
			struct ibv_wc wc[16];
			int n, k;

			n = ibv_poll_cq(cqs[c], 16, wc);
			if (n < 0) {
				fail("%s: ibv_poll_cq failed", owner[c]->name);
				return false;
			}
			for (k = 0; k < n; k++)
				check_wc(owner[c], &wc[k]);
			got += n;
			progress += n;
		}
		/*
		 * After an error completion the rest are flushes, and a
		 * receive may never complete: wait 2 s more at most.
		 */
		if (fail_count != err_before) {
			uint64_t soon = now_us() + 2000000;

			if (got >= want)
				break;
			if (deadline > soon)
				deadline = soon;
		}
		if (progress) {
			idle = 0;
			continue;
		}
		if (++idle % 64 == 0) {
			if (now_us() > deadline) {
				int i;

				if (fail_count != err_before)
					return false;
				fail("timeout after %u ms: %d of %d completions in batch %" PRIu64,
				     opt.wait_ms, got, want, batch_no);
				for (i = 0; i < nops; i++) {
					char d[256];

					if ((ops[i].signaled && !ops[i].done_send) ||
					    (ops[i].has_recv && !ops[i].done_recv)) {
						describe(&ops[i], i, d, sizeof(d));
						printf("integrity:   missing: %s%s%s\n", d,
						       ops[i].signaled && !ops[i].done_send ?
						       " (send)" : "",
						       ops[i].has_recv && !ops[i].done_recv ?
						       " (receive)" : "");
					}
				}
				return false;
			}
			sched_yield();
		}
	}
	return fail_count == err_before;
}

/* Verification */

static void mismatch(struct op *o, int idx, const char *what, size_t at,
		     int expect, int got)
{
	char d[256];

	describe(o, idx, d, sizeof(d));
	fail("%s: %s byte %zu: expected %#04x, got %#04x (seed %#" PRIx64 ")",
	     d, what, at, expect, got, o->seed);
}

/* A piece must hold stream bytes [pos, pos + n) then background. */
static void check_piece(struct op *o, int idx, struct side *s,
			const struct piece *p, uint64_t pos, uint64_t n,
			const char *what)
{
	uint8_t *q = ptr(s, p);
	uint8_t bg = s->b[p->buf].bg;
	size_t at;

	if (n > p->len)
		n = p->len;
	at = stream_check(q, o->seed, pos, n);
	if (at < n) {
		mismatch(o, idx, what, pos + at, stream_byte(o->seed, pos + at),
			 q[at]);
		return;
	}
	at = first_not(q + n, p->len - n, bg);
	if (at < p->len - n)
		mismatch(o, idx, "unused receive buffer", n + at, bg,
			 q[n + at]);
}

static void check_op(struct op *o, int idx)
{
	struct side *rq = &sides[o->req], *rs = &sides[!o->req];
	uint64_t pos = 0;
	uint64_t v;
	int i;

	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		for (i = 0; i < o->nrem; i++) {
			uint64_t n = pos < o->len ? o->len - pos : 0;

			check_piece(o, idx, rs, &o->rem[i], pos, n, "received");
			pos += o->rem[i].len;
		}
		break;
	case OP_WRITE_IMM:
		if (o->nrem > 1)
			check_piece(o, idx, rs, &o->rem[1], 0, 0,
				    "WRITE_WITH_IMM receive SGE");
		fallthrough;
	case OP_WRITE:
		check_piece(o, idx, rs, &o->rem[0], 0, o->len, "written");
		break;
	case OP_READ:
		for (i = 0; i < o->nloc; i++) {
			check_piece(o, idx, rq, &o->loc[i], pos, o->loc[i].len,
				    "read");
			pos += o->loc[i].len;
		}
		break;
	case OP_CMP_SWP:
	case OP_FETCH_ADD:
		memcpy(&v, ptr(rq, &o->loc[0]), 8);
		if (v != o->old) {
			char d[256];

			describe(o, idx, d, sizeof(d));
			fail("%s: returned %#" PRIx64 ", expected original %#" PRIx64,
			     d, v, o->old);
		}
		memcpy(&v, ptr(rs, &o->rem[0]), 8);
		{
			uint64_t want = o->kind == OP_FETCH_ADD ?
					o->old + o->swap_add :
					(o->old == o->cmp ? o->swap_add : o->old);

			if (v != want) {
				char d[256];

				describe(o, idx, d, sizeof(d));
				fail("%s: target holds %#" PRIx64 ", expected %#" PRIx64
				     " (original %#" PRIx64 ", compare/add %#" PRIx64
				     ", swap %#" PRIx64 ")", d, v, want, o->old,
				     o->cmp, o->swap_add);
			}
		}
		break;
	default:
		break;
	}
}

/* Guards around every piece still hold the background; reset pieces. */
static void check_guards_and_reset(void)
{
	int i, j, k;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < NBUF; j++) {
			struct buf *b = &sides[i].b[j];

			for (k = 0; k < b->npieces; k++) {
				struct piece *p = &b->pieces[k];
				size_t lo = p->off - GUARD;
				size_t at;

				at = first_not(b->addr + lo, GUARD, b->bg);
				if (at < GUARD)
					fail("batch %" PRIu64 ": %s buffer %d byte %zu before a piece at %zu (len %zu) changed: %#04x",
					     batch_no, sides[i].name, j,
					     GUARD - at, p->off, p->len,
					     b->addr[lo + at]);
				at = first_not(b->addr + p->off + p->len, GUARD,
					       b->bg);
				if (at < GUARD)
					fail("batch %" PRIu64 ": %s buffer %d byte %zu after a piece at %zu (len %zu) changed: %#04x",
					     batch_no, sides[i].name, j, at,
					     p->off, p->len,
					     b->addr[p->off + p->len + at]);
				memset(b->addr + p->off, b->bg, p->len);
			}
		}
	}
	release_pieces();
}

static void check_whole_buffers(void)
{
	int i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < NBUF; j++) {
			struct buf *b = &sides[i].b[j];
			size_t at = first_not(b->map, b->map_len, b->bg);

			if (at < b->map_len)
				fail("final scan: %s buffer %d byte %zd (MR offset) is %#04x, expected %#04x",
				     sides[i].name, j,
				     (ssize_t)(at - (size_t)(b->addr - b->map)),
				     b->map[at], b->bg);
		}
	}
}

/*
 * --inject-error: flip one byte that an operation delivered, to show that
 * the checks catch it (the run must then fail). From the third batch on, in
 * the first batch that has an operation with a byte to flip (a batch may hold
 * only a zero-length WRITE); false while none has.
 */
static bool inject_error(void)
{
	int i;

	for (i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		struct side *rq = &sides[o->req], *rs = &sides[!o->req];
		uint8_t *p;

		if (!o->len)
			continue;
		p = o->kind == OP_READ ? ptr(rq, &o->loc[0]) :
		    is_atomic(o->kind) ? ptr(rq, &o->loc[0]) :
		    ptr(rs, &o->rem[0]);
		p[0] ^= 0x40;
		printf("integrity: injected an error into batch %" PRIu64
		       " op %d (%s)\n", batch_no, i, op_name[o->kind]);
		return true;
	}
	return false;
}

/* One batch */

static bool run_batch(uint64_t want_ops)
{
	int limit = (int)rng_range(&rng, 1, (uint64_t)opt.max_batch);
	int i, misses = 0;

	if ((uint64_t)limit > want_ops)
		limit = (int)want_ops;
	nops = 0;
	for (i = 0; i < 2; i++) {
		sides[i].nsq = sides[i].nrq = 0;
		sides[i].sq_next = sides[i].rq_next = 0;
	}
	while (nops < limit) {
		struct op *o = &ops[nops];
		int snap[2][NBUF], k, j;

		for (k = 0; k < 2; k++)
			for (j = 0; j < NBUF; j++)
				snap[k][j] = sides[k].b[j].npieces;
		if (!make_op(o)) {
			/* forget this op's pieces */
			for (k = 0; k < 2; k++)
				for (j = 0; j < NBUF; j++)
					sides[k].b[j].npieces = snap[k][j];
			if (nops > 0)
				break;
			if (++misses > 1000)
				die("cannot place an operation in the buffers");
			continue;
		}
		if (o->cover)
			cover_next++;
		o->send_id = (batch_no << 16) | ((uint64_t)nops << 1);
		o->recv_id = o->send_id | 1;
		sides[o->req].sq[sides[o->req].nsq++] = nops;
		if (o->has_recv) {
			struct side *rs = &sides[!o->req];

			rs->rq[rs->nrq++] = nops;
		}
		nops++;
	}

	for (i = 0; i < nops; i++)
		prepare(&ops[i]);
	for (i = 0; i < 2; i++)
		if (sides[i].nrq)
			post_recvs(&sides[i]);
	/* which side goes first is random too */
	if (rng_one_in(&rng, 2)) {
		if (sides[0].nsq)
			post_sends(&sides[0]);
		if (sides[1].nsq)
			post_sends(&sides[1]);
	} else {
		if (sides[1].nsq)
			post_sends(&sides[1]);
		if (sides[0].nsq)
			post_sends(&sides[0]);
	}
	if (!wait_completions())
		return false;
	if (opt.inject && !injected && batch_no >= 2)
		injected = inject_error();
	for (i = 0; i < nops; i++)
		check_op(&ops[i], i);
	check_guards_and_reset();
	st.batches++;
	return true;
}

static void report(uint64_t t0, bool ok)
{
	double secs = (double)(now_us() - t0) / 1e6;
	uint64_t total = 0, n = 0;
	int k;

	printf("integrity: %-22s %10s %14s\n", "opcode", "ops", "bytes");
	for (k = 0; k < OP_NR; k++) {
		printf("integrity: %-22s %10" PRIu64 " %14" PRIu64 "\n",
		       op_name[k], st.ops[k], st.bytes[k]);
		total += st.bytes[k];
		n += st.ops[k];
	}
	printf("integrity: %" PRIu64 " ops in %" PRIu64 " batches (%" PRIu64
	       " chained), %" PRIu64 " bytes, sizes %" PRIu64 "..%" PRIu64
	       ", %" PRIu64 " inline, %" PRIu64 " unsignaled, %" PRIu64
	       " multi-SGE, %" PRIu64 " fenced, %" PRIu64 " zero-length, %"
	       PRIu64 " big; %.1f s, %.2f MB/s\n",
	       n, st.batches, st.chains, total, n ? st.min_len : 0, st.max_len,
	       st.inl, st.unsignaled, st.multi_sge, st.fenced, st.zero_len,
	       st.big, secs, secs > 0 ? (double)total / secs / 1e6 : 0.0);
	if (opt.cover)
		printf("integrity: %u covering operations first (path MTU %u)\n",
		       cover_next, path_mtu);
	printf("integrity: %s (seed %#" PRIx64 ", %" PRIu64 " error%s)\n",
	       ok ? "PASS" : "FAIL", opt.seed, fail_count,
	       fail_count == 1 ? "" : "s");
}

static void teardown(void)
{
	int i, j;

	for (i = 0; i < 2; i++) {
		struct side *s = &sides[i];

		ibv_destroy_qp(s->qp);
		if (s->srq)
			ibv_destroy_srq(s->srq);
		for (j = 0; j < NBUF; j++) {
			ibv_dereg_mr(s->b[j].mr);
			munmap(s->b[j].map, s->b[j].map_len);
		}
		if (s->rcq != s->scq)
			ibv_destroy_cq(s->rcq);
		ibv_destroy_cq(s->scq);
		ibv_dealloc_pd(s->pd);
		ibv_close_device(s->ctx);
	}
}

static unsigned int parse_ops(const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	unsigned int mask = 0;
	int k;

	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		bool found = false;

		if (!strcmp(tok, "all")) {
			mask |= (1U << OP_NR) - 1;
			continue;
		}
		if (!strcmp(tok, "atomic")) {
			mask |= (1U << OP_CMP_SWP) | (1U << OP_FETCH_ADD);
			continue;
		}
		for (k = 0; k < OP_NR; k++) {
			if (!strcmp(tok, op_short[k])) {
				mask |= 1U << k;
				found = true;
			}
		}
		if (!found) {
			fprintf(stderr, "integrity: unknown op '%s'\n", tok);
			exit(2);
		}
	}
	free(copy);
	return mask;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		break;
	case 0:
		break;
	default:
		fprintf(stderr, "integrity: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: integrity [options]\n  --dev-a NAME      device of side A (default: the first)\n  --dev-b NAME      device of side B (default: dev-a)\n  --gid-index N     GID index on both (default: the RoCEv2 IPv4 GID)\n  --iters N         operations (default 1000)\n  --seed S          PRNG seed (default: from the clock; printed)\n  --max-size BYTES  largest message, k/m/g suffixes (default 4m)\n  --big             also ~1/32 messages up to --big-size\n  --big-size BYTES  (default 64m; capped at the port's max_msg_sz)\n  --mr-offset       MRs start at a random offset in their first page\n  --iova            MRs registered at a random IOVA\n  --ops LIST        send,send_imm,write,write_imm,read,cmp_swp,\n                    fetch_add,atomic,all (default all)\n  --one-way         A is always the requester\n  --max-batch N     operations in flight per batch, 1..%d (default 8)\n  --max-sge N       SGEs per WR at most (default 4, max %d)\n  --timeout-exp N   QP local ACK timeout exponent (default 14)\n  --wait-ms MS      completion wait per batch (default 60000)\n  --quiet           no progress lines\n  --inject-error    corrupt one delivered byte (the run must fail)\n  --cover           start with every kind from each side as one packet,\n                    two and three or more (atomics: once)\n  --srq             each side receives through an SRQ\n",
		MAX_BATCH, MAX_SGE);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev-a", required_argument, NULL, 'a' },
		{ "dev-b", required_argument, NULL, 'b' },
		{ "gid-index", required_argument, NULL, 'g' },
		{ "iters", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "big", no_argument, NULL, 'B' },
		{ "big-size", required_argument, NULL, 'S' },
		{ "mr-offset", no_argument, NULL, 'o' },
		{ "iova", no_argument, NULL, 'v' },
		{ "ops", required_argument, NULL, 'O' },
		{ "one-way", no_argument, NULL, '1' },
		{ "max-batch", required_argument, NULL, 'k' },
		{ "max-sge", required_argument, NULL, 'e' },
		{ "timeout-exp", required_argument, NULL, 't' },
		{ "wait-ms", required_argument, NULL, 'w' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "inject-error", no_argument, NULL, 'I' },
		{ "cover", no_argument, NULL, 'C' },
		{ "srq", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t done = 0, t0, last;
	bool seeded = false, ok = true;
	int c;

	fail_style = (struct fail_style){
		.fail = "integrity: ERROR: ",
		.die = "integrity: SETUP FAILED: ",
		.status = 2,
		.shown = MAX_REPORT,
		.more = "integrity: more errors follow, not shown",
	};

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			opt.dev[0] = optarg;
			break;
		case 'b':
			opt.dev[1] = optarg;
			break;
		case 'g':
			opt.gid_index = atoi(optarg);
			break;
		case 'n':
			opt.iters = strtoull(optarg, NULL, 0);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'm':
			opt.max_size = parse_size(optarg);
			break;
		case 'B':
			opt.big = true;
			break;
		case 'S':
			opt.big_size = parse_size(optarg);
			break;
		case 'o':
			opt.mr_offset = true;
			break;
		case 'v':
			opt.iova = true;
			break;
		case 'O':
			opt.ops_mask = parse_ops(optarg);
			break;
		case '1':
			opt.one_way = true;
			break;
		case 'k':
			opt.max_batch = atoi(optarg);
			break;
		case 'e':
			opt.max_sge = atoi(optarg);
			break;
		case 't':
			opt.timeout_exp = atoi(optarg);
			break;
		case 'w':
			opt.wait_ms = (unsigned int)atoi(optarg);
			break;
		case 'q':
			opt.quiet = true;
			break;
		case 'I':
			opt.inject = true;
			break;
		case 'C':
			opt.cover = true;
			break;
		case 'R':
			opt.srq = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || opt.max_batch < 1 || opt.max_batch > MAX_BATCH ||
	    opt.max_sge < 1 || opt.max_sge > MAX_SGE || opt.max_size < 1 ||
	    opt.timeout_exp < 0 || opt.timeout_exp > 31) {
		usage(stderr);
		return 2;
	}
	if (!opt.dev[1])
		opt.dev[1] = opt.dev[0];
	if (!seeded)
		opt.seed = now_us() ^ ((uint64_t)getpid() << 32);
	rng.s = opt.seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("integrity: seed %#" PRIx64 " iters %" PRIu64 " max-size %" PRIu64
	       "%s%s%s%s ops %#x\n", opt.seed, opt.iters, opt.max_size,
	       opt.big ? " big" : "", opt.mr_offset ? " mr-offset" : "",
	       opt.iova ? " iova" : "", opt.cover ? " cover" : "",
	       opt.ops_mask);

	setup();
	st.min_len = UINT64_MAX;
	t0 = last = now_us();
	while (done < opt.iters) {
		if (!run_batch(opt.iters - done)) {
			ok = false;
			break;
		}
		done += (uint64_t)nops;
		batch_no++;
		if (!opt.quiet && now_us() - last > 10 * 1000000ULL) {
			last = now_us();
			printf("integrity: %" PRIu64 "/%" PRIu64 " ops, %" PRIu64
			       " errors\n", done, opt.iters, fail_count);
		}
		if (fail_count)
			ok = false;
	}
	if (opt.inject && !injected)
		die("--inject-error: no batch after the second had a byte to flip; more --iters");
	if (ok) {
		check_whole_buffers();
		ok = fail_count == 0;
	}
	report(t0, ok);
	if (ok)
		teardown();
	return ok ? 0 : 1;
}
