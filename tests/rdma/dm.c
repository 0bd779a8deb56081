// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory (ibv_alloc_dm, ibv_memcpy_to_dm / _from_dm,
 * ibv_reg_dm_mr), kselftest harness.
 *
 *   api.*     one device: the budget max_dm_size announces (all of it can
 *             be had at once, not a byte more, in whole pages per DM, and
 *             it comes back when a DM is freed or its process dies), a
 *             new DM holds zeros whatever the last one held, the copy
 *             rules (4-byte words inside the DM: EINVAL otherwise),
 *             alignment requests, and the registration rules (zero based
 *             only, page-aligned offset, inside the DM, rights an MR on
 *             device memory can have; a DM with an MR on it is not freed:
 *             EBUSY);
 *   pair.*    a DM on DEV_A with MRs over it, DEV_B an ordinary peer on
 *             an RC connection: B writes, reads and runs atomics on the DM
 *             through its MRs (address 0 of an MR is its offset in the
 *             DM), A uses the DM as the local memory of SEND, receive,
 *             RDMA WRITE and READ; every byte is checked through
 *             ibv_memcpy_from_dm and every byte not written must still be
 *             zero; an MR's range and a deregistered MR's key are
 *             enforced, an MR of length 0 takes only zero-length access.
 *
 *   DRAY_TEST_DEV_A (default dray0)    holds the DM
 *   DRAY_TEST_DEV_B (default dray1)    the peer
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define PAGE		4096u
#define DM_LEN		(16 * PAGE)	/* the pair's DM */
#define CQE		64
#define DM_ACCESS	(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define ALL_ACCESS	(DM_ACCESS & ~IBV_ACCESS_ZERO_BASED)

static struct ibv_dm *dm_alloc(struct ibv_context *ctx, size_t len,
			       uint32_t log_align)
{
	struct ibv_alloc_dm_attr a = {
		.length = len,
		.log_align_req = log_align,
	};

	return ibv_alloc_dm(ctx, &a);
}

/* The whole DM, through ibv_memcpy_from_dm; NULL if that failed. */
static uint8_t *dm_read(struct ibv_dm *dm, size_t len)
{
	uint8_t *p = malloc(len);

	if (p && ibv_memcpy_from_dm(p, dm, 0, len)) {
		free(p);
		return NULL;
	}
	return p;
}

/* api: one device and its budget */

FIXTURE(api) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint64_t max;		/* max_dm_size */
};

FIXTURE_SETUP(api)
{
	struct ibv_device_attr_ex attr = {};

	self->ctx = open_device(dev_name(0));
	if (!self->ctx)
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &attr));
	self->max = attr.max_dm_size;
	if (!self->max && !is_dray(self->ctx)) {
		ibv_close_device(self->ctx);
		self->ctx = NULL;
		SETUP_SKIP("%s has no device memory", dev_name(0));
	}
	/* dray: dm_kib, 256 KiB unless the module was told otherwise */
	ASSERT_LE(PAGE, self->max);
	ASSERT_EQ(0, self->max % PAGE);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(api)
{
	_metadata->trigger = 0;
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
}

/* All of max_dm_size at once, then not a word more; freed, it is back. */
TEST_F(api, whole_budget_then_enomem)
{
	struct ibv_dm *dm;
	int round;

	for (round = 0; round < 2; round++) {
		dm = dm_alloc(self->ctx, self->max, 0);
		ASSERT_NE(NULL, dm) TH_LOG("round %d: %llu bytes: %s", round,
					   (unsigned long long)self->max,
					   strerror(errno));
		ASSERT_NULL_ERRNO(ENOMEM, dm_alloc(self->ctx, 4, 0));
		ASSERT_ERRNO(0, ibv_free_dm(dm));
	}
}

TEST_F(api, beyond_max_dm_size_enomem)
{
	ASSERT_NULL_ERRNO(ENOMEM, dm_alloc(self->ctx, self->max + 4, 0));
	ASSERT_NULL_ERRNO(ENOMEM, dm_alloc(self->ctx, UINT64_MAX, 0));
}

TEST_F(api, zero_length_einval)
{
	ASSERT_NULL_ERRNO(EINVAL, dm_alloc(self->ctx, 0, 0));
}

TEST_F(api, unknown_comp_mask_einval)
{
	struct ibv_alloc_dm_attr a = { .length = PAGE, .comp_mask = 1 };

	ASSERT_NULL_ERRNO(EINVAL, ibv_alloc_dm(self->ctx, &a));
}

/*
 * A DM takes whole pages of the budget: max / PAGE DMs of 100 bytes fit,
 * and one more does not.
 */
TEST_F(api, small_dms_take_a_page_each)
{
	size_t n = self->max / PAGE, i, got = 0;
	struct ibv_dm **dms = calloc(n + 1, sizeof(*dms));

	ASSERT_NE(NULL, dms);
	for (i = 0; i <= n; i++) {
		dms[i] = dm_alloc(self->ctx, 100, 0);
		if (!dms[i]) {
			EXPECT_EQ(ENOMEM, errno);
			break;
		}
		got++;
	}
	EXPECT_EQ(n, got);
	for (i = 0; i < got; i++)
		EXPECT_EQ(0, ibv_free_dm(dms[i]));
	free(dms);
}

/* Alignment up to the block a DM is made of; beyond it EINVAL. */
TEST_F(api, alignment)
{
	struct ibv_dm *dm;

	dm = dm_alloc(self->ctx, PAGE, 12);
	ASSERT_NE(NULL, dm) TH_LOG("4 KiB aligned to 4 KiB: %s",
				   strerror(errno));
	ASSERT_EQ(0, ibv_free_dm(dm));
	dm = dm_alloc(self->ctx, 4 * PAGE, 14);
	ASSERT_NE(NULL, dm) TH_LOG("16 KiB aligned to 16 KiB: %s",
				   strerror(errno));
	ASSERT_EQ(0, ibv_free_dm(dm));
	ASSERT_NULL_ERRNO(EINVAL, dm_alloc(self->ctx, PAGE, 13));
	ASSERT_NULL_ERRNO(EINVAL, dm_alloc(self->ctx, 100, 40));
}

/* What a freed DM held never shows up in a new one. */
TEST_F(api, new_dm_is_zeroed)
{
	size_t len = self->max < 8 * PAGE ? self->max : 8 * PAGE;
	uint8_t *pat = malloc(len), *got;
	struct ibv_dm *dm;
	int round;

	ASSERT_NE(NULL, pat);
	stream_fill(pat, 7, 0, len);
	for (round = 0; round < 4; round++) {
		dm = dm_alloc(self->ctx, len, 0);
		ASSERT_NE(NULL, dm);
		got = dm_read(dm, len);
		ASSERT_NE(NULL, got);
		EXPECT_EQ(len, first_not(got, len, 0))
			TH_LOG("round %d: byte %zu of a new DM is %#x", round,
			       first_not(got, len, 0),
			       got[first_not(got, len, 0)]);
		free(got);
		ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, pat, len));
		ASSERT_EQ(0, ibv_free_dm(dm));
	}
	free(pat);
}

TEST_F(api, copy_round_trip)
{
	static const struct { uint64_t off; size_t len; } c[] = {
		{ 0, 4 }, { 4, PAGE - 8 }, { PAGE - 4, 8 },
		{ 3 * PAGE + 12, 2 * PAGE + 4 }, { 8 * PAGE - 4, 4 },
	};
	uint8_t *src = malloc(8 * PAGE), *dst = malloc(8 * PAGE);
	struct ibv_dm *dm;
	size_t i;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	if (self->max < 8 * PAGE)
		SKIP(return, "max_dm_size %llu", (unsigned long long)self->max);
	dm = dm_alloc(self->ctx, 8 * PAGE, 0);
	ASSERT_NE(NULL, dm);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		stream_fill(src, i + 1, c[i].off, c[i].len);
		ASSERT_EQ(0, ibv_memcpy_to_dm(dm, c[i].off, src, c[i].len));
		memset(dst, 0, c[i].len);
		ASSERT_EQ(0, ibv_memcpy_from_dm(dst, dm, c[i].off, c[i].len));
		EXPECT_EQ(c[i].len, stream_check(dst, i + 1, c[i].off,
						 c[i].len))
			TH_LOG("copy %zu: %zu bytes at %llu", i, c[i].len,
			       (unsigned long long)c[i].off);
	}
	ASSERT_EQ(0, ibv_free_dm(dm));
	free(src);
	free(dst);
}

/* Words inside the DM asked for (100 bytes, though a page backs it). */
TEST_F(api, copy_rules_einval)
{
	static const struct { uint64_t off; size_t len; } bad[] = {
		{ 2, 4 }, { 0, 6 }, { 1, 1 },		/* not words */
		{ 100, 4 }, { 0, 104 }, { 96, 8 },	/* past the DM */
		{ 4096, 4 }, { UINT64_MAX - 3, 8 },	/* the page, a wrap */
	};
	uint8_t buf[128] = { 0 };
	struct ibv_dm *dm;
	size_t i;

	dm = dm_alloc(self->ctx, 100, 0);
	ASSERT_NE(NULL, dm);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(dm, bad[i].off, buf,
						   bad[i].len))
			TH_LOG("to_dm %zu bytes at %llu", bad[i].len,
			       (unsigned long long)bad[i].off);
		EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(buf, dm, bad[i].off,
						     bad[i].len))
			TH_LOG("from_dm %zu bytes at %llu", bad[i].len,
			       (unsigned long long)bad[i].off);
	}
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 96, buf, 4));
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 100, buf, 0));
	EXPECT_EQ(0, ibv_memcpy_from_dm(buf, dm, 0, 100));
	ASSERT_EQ(0, ibv_free_dm(dm));
}

TEST_F(api, reg_rules)
{
	struct ibv_dm *dm = dm_alloc(self->ctx, 4 * PAGE, 0);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	/* only zero based */
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->pd, dm, 0, PAGE,
						ALL_ACCESS));
	/* inside the DM */
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->pd, dm, 0,
						4 * PAGE + 1, DM_ACCESS));
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->pd, dm, 3 * PAGE,
						PAGE + 4, DM_ACCESS));
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->pd, dm, 5 * PAGE, 0,
						DM_ACCESS));
	/* the offset page aligned */
	ASSERT_NULL_ERRNO(EINVAL, ibv_reg_dm_mr(self->pd, dm, 64, PAGE,
						DM_ACCESS));
	/* rights an MR on device memory has not */
	ASSERT_NULL_ERRNO(EOPNOTSUPP,
			  ibv_reg_dm_mr(self->pd, dm, 0, PAGE,
					DM_ACCESS | IBV_ACCESS_MW_BIND));
	/* remote write needs local write (the core's rule) */
	ASSERT_NULL_ERRNO(EINVAL,
			  ibv_reg_dm_mr(self->pd, dm, 0, PAGE,
					IBV_ACCESS_ZERO_BASED |
					IBV_ACCESS_REMOTE_WRITE));

	mr = ibv_reg_dm_mr(self->pd, dm, PAGE, 3 * PAGE, DM_ACCESS);
	ASSERT_NE(NULL, mr) TH_LOG("reg_dm_mr: %s", strerror(errno));
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(3 * PAGE, mr->length);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(self->pd, dm, 4 * PAGE, 0, DM_ACCESS);
	ASSERT_NE(NULL, mr) TH_LOG("length 0 at the end: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, ibv_free_dm(dm));
}

/* A DM with an MR on it stays, mapped and usable, until the MR goes. */
TEST_F(api, free_with_mr_ebusy)
{
	struct ibv_dm *dm = dm_alloc(self->ctx, PAGE, 0);
	uint32_t w = 0x5eed, r = 0;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	mr = ibv_reg_dm_mr(self->pd, dm, 0, PAGE, DM_ACCESS);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(EBUSY, ibv_free_dm(dm));
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 8, &w, sizeof(w)));
	EXPECT_EQ(0, ibv_memcpy_from_dm(&r, dm, 8, sizeof(r)));
	EXPECT_EQ(w, r);
	/* the PD is busy too */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, ibv_free_dm(dm));
}

/*
 * A process that dies with its DMs (and an MR on one) gives the budget
 * back: afterwards all of it can be had again.
 */
TEST_F(api, budget_back_after_exit)
{
	int pipefd[2], status;
	char c = 0;
	pid_t pid;
	struct ibv_dm *dm;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = open_device(dev_name(0));
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		struct ibv_dm *d = pd ? dm_alloc(ctx, self->max, 0) : NULL;

		c = d && ibv_reg_dm_mr(pd, d, 0, PAGE, DM_ACCESS) ? 1 : 2;
		if (write(pipefd[1], &c, 1) != 1)
			_exit(3);
		alarm(120);	/* should the parent not kill it */
		pause();	/* killed holding them */
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	EXPECT_EQ(1, c) TH_LOG("the child's DM or MR failed");
	/* while the child holds all of it, there is none */
	dm = c == 1 ? dm_alloc(self->ctx, PAGE, 0) : NULL;
	EXPECT_EQ(NULL, dm);
	if (dm)
		ibv_free_dm(dm);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	dm = dm_alloc(self->ctx, self->max, 0);
	ASSERT_NE(NULL, dm) TH_LOG("after the child: %s", strerror(errno));
	ASSERT_EQ(0, ibv_free_dm(dm));
}

/* pair: a DM on A, B the peer */

FIXTURE(pair) {
	struct rc_side a, b;
	struct rc_params p;
	struct ibv_dm *dm;	/* A's */
	struct ibv_mr *dmr;	/* all of it */
	struct ibv_mr *sub;	/* pages 1..3 of it */
	uint8_t *bbuf;		/* B's */
	struct ibv_mr *bmr;
};

FIXTURE_SETUP(pair)
{
	struct ibv_context *probe;
	const char *step;
	int err;

	probe = open_device(dev_name(1));
	if (!probe)
		SETUP_SKIP("device %s: %s", dev_name(1), strerror(errno));
	ibv_close_device(probe);
	rc_side_setup(_metadata, &self->a, 0, -1, 0x1234, CQE, 2);
	rc_side_setup(_metadata, &self->b, 1, -1, 0xfffffe, CQE, 2);
	rc_params_default(&self->p);
	err = rc_connect(self->a.qp, &self->a.rc, &self->b.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("A: %s: %s", step, strerror(err));
	err = rc_connect(self->b.qp, &self->b.rc, &self->a.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("B: %s: %s", step, strerror(err));

	self->dm = dm_alloc(self->a.ctx, DM_LEN, 0);
	ASSERT_NE(NULL, self->dm) TH_LOG("alloc_dm: %s", strerror(errno));
	self->dmr = ibv_reg_dm_mr(self->a.pd, self->dm, 0, DM_LEN, DM_ACCESS);
	ASSERT_NE(NULL, self->dmr) TH_LOG("reg_dm_mr: %s", strerror(errno));
	self->sub = ibv_reg_dm_mr(self->a.pd, self->dm, PAGE, 3 * PAGE,
				  DM_ACCESS);
	ASSERT_NE(NULL, self->sub) TH_LOG("reg_dm_mr: %s", strerror(errno));
	self->bbuf = page_buf(2 * DM_LEN);
	ASSERT_NE(NULL, self->bbuf);
	self->bmr = ibv_reg_mr(self->b.pd, self->bbuf, 2 * DM_LEN,
			       ALL_ACCESS);
	ASSERT_NE(NULL, self->bmr);
}

FIXTURE_TEARDOWN(pair)
{
	_metadata->trigger = 0;
	rc_side_destroy_qp(_metadata, &self->a);
	rc_side_destroy_qp(_metadata, &self->b);
	if (self->sub)
		EXPECT_EQ(0, ibv_dereg_mr(self->sub));
	if (self->dmr)
		EXPECT_EQ(0, ibv_dereg_mr(self->dmr));
	if (self->dm)
		EXPECT_EQ(0, ibv_free_dm(self->dm));
	if (self->bmr)
		EXPECT_EQ(0, ibv_dereg_mr(self->bmr));
	if (self->bbuf)
		munmap(self->bbuf, 2 * DM_LEN);
	rc_side_teardown(_metadata, &self->a);
	rc_side_teardown(_metadata, &self->b);
}

struct wr1 {
	enum ibv_wr_opcode op;
	uint64_t laddr;
	uint32_t len, lkey;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t cmp_add, swap;
};

static int post1(struct ibv_qp *qp, const struct wr1 *w)
{
	struct ibv_sge sge = { .addr = w->laddr, .length = w->len,
			       .lkey = w->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x77,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = w->op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad = NULL;

	if (w->op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    w->op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = w->raddr;
		wr.wr.atomic.rkey = w->rkey;
		wr.wr.atomic.compare_add = w->cmp_add;
		wr.wr.atomic.swap = w->swap;
	} else {
		wr.wr.rdma.remote_addr = w->raddr;
		wr.wr.rdma.rkey = w->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* One WR on e's QP; its completion's status. */
static enum ibv_wc_status op1(struct __test_metadata *_metadata,
			      struct rc_side *e, const struct wr1 *w)
{
	struct ibv_wc wc;

	if (post1(e->qp, w))
		return IBV_WC_GENERAL_ERR;
	wc = wait_wc(_metadata, e->cq);
	EXPECT_EQ(0x77ULL, wc.wr_id);
	return wc.status;
}

static int recv1(struct ibv_qp *qp, uint64_t addr, uint32_t len,
		 uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = 0x99, .sg_list = &sge,
				  .num_sge = 1 }, *bad = NULL;

	return ibv_post_recv(qp, &wr, &bad);
}

#define B_ADDR(off)	((uintptr_t)self->bbuf + (off))

struct piece {
	size_t off, len;
};

/* Pieces of the DM, in order and apart: page 0, across pages, the end. */
static const struct piece pieces[] = {
	{ 0, PAGE },
	{ PAGE + 1000 + 3, 3 * PAGE + 17 },
	{ 9 * PAGE - 5, 10 },
	{ DM_LEN - 300, 300 },
};

#define N_PIECES	(sizeof(pieces) / sizeof(pieces[0]))

/* The DM: stream seed at every piece, zero everywhere else. */
static void check_dm(struct __test_metadata *_metadata, struct ibv_dm *dm,
		     uint64_t seed, const struct piece *p, size_t n)
{
	uint8_t *v = dm_read(dm, DM_LEN);
	size_t pos = 0, i, bad;

	ASSERT_NE(NULL, v);
	for (i = 0; i <= n; i++) {
		size_t end = i < n ? p[i].off : DM_LEN;

		bad = first_not(v + pos, end - pos, 0);
		EXPECT_EQ(end - pos, bad)
			TH_LOG("byte %zu not written, yet %#x", pos + bad,
			       v[pos + bad]);
		if (i == n)
			break;
		bad = stream_check(v + p[i].off, seed, p[i].off, p[i].len);
		EXPECT_EQ(p[i].len, bad)
			TH_LOG("piece %zu (%zu+%zu): byte %zu is %#x", i,
			       p[i].off, p[i].len, p[i].off + bad,
			       v[p[i].off + bad]);
		pos = p[i].off + p[i].len;
	}
	free(v);
}

/* B writes pieces into the DM at their offsets (the MR's addresses). */
TEST_F_TIMEOUT(pair, remote_write, 120)
{
	size_t i;

	stream_fill(self->bbuf, 1, 0, DM_LEN);
	for (i = 0; i < N_PIECES; i++) {
		struct wr1 w = {
			.op = IBV_WR_RDMA_WRITE,
			.laddr = B_ADDR(pieces[i].off),
			.len = pieces[i].len, .lkey = self->bmr->lkey,
			.raddr = pieces[i].off, .rkey = self->dmr->rkey,
		};

		ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	}
	check_dm(_metadata, self->dm, 1, pieces, N_PIECES);
}

/* What the DM holds, B reads back through both MRs. */
TEST_F_TIMEOUT(pair, remote_read, 120)
{
	uint8_t *pat = malloc(DM_LEN);
	size_t i;

	ASSERT_NE(NULL, pat);
	stream_fill(pat, 2, 0, DM_LEN);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, pat, DM_LEN));
	for (i = 0; i < N_PIECES; i++) {
		struct wr1 w = {
			.op = IBV_WR_RDMA_READ,
			.laddr = B_ADDR(pieces[i].off),
			.len = pieces[i].len, .lkey = self->bmr->lkey,
			.raddr = pieces[i].off, .rkey = self->dmr->rkey,
		};

		ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
		EXPECT_EQ(pieces[i].len,
			  stream_check(self->bbuf + pieces[i].off, 2,
				       pieces[i].off, pieces[i].len));
	}
	/* the sub MR: its address 0 is byte PAGE of the DM */
	{
		struct wr1 w = {
			.op = IBV_WR_RDMA_READ,
			.laddr = B_ADDR(DM_LEN), .len = 3 * PAGE,
			.lkey = self->bmr->lkey,
			.raddr = 0, .rkey = self->sub->rkey,
		};

		ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
		EXPECT_EQ(3 * PAGE, stream_check(self->bbuf + DM_LEN, 2, PAGE,
						 3 * PAGE));
	}
	free(pat);
}

/* Both atomics on words of the DM; the originals come back. */
TEST_F_TIMEOUT(pair, remote_atomics, 120)
{
	uint64_t words[4] = { 10, 0x1111, UINT64_MAX, 5 }, got[4];
	uint64_t *ret = (uint64_t *)self->bbuf;
	struct wr1 w = { .len = 8, .lkey = self->bmr->lkey,
			 .rkey = self->dmr->rkey };

	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 2 * PAGE - 16, words,
				      sizeof(words)));
	w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.laddr = B_ADDR(0);
	w.raddr = 2 * PAGE - 16;
	w.cmp_add = 32;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	EXPECT_EQ(10ULL, ret[0]);
	w.op = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.laddr = B_ADDR(8);
	w.raddr = 2 * PAGE - 8;
	w.cmp_add = 0x1111;
	w.swap = 0xabcdef;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	EXPECT_EQ(0x1111ULL, ret[1]);
	/* a compare that fails leaves the word */
	w.laddr = B_ADDR(16);
	w.raddr = 2 * PAGE;
	w.cmp_add = 0;
	w.swap = 1;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	EXPECT_EQ(UINT64_MAX, ret[2]);
	/* through the sub MR: DM byte 2 * PAGE + 8 is its PAGE + 8 */
	w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.laddr = B_ADDR(24);
	w.raddr = PAGE + 8;
	w.rkey = self->sub->rkey;
	w.cmp_add = 1;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	EXPECT_EQ(5ULL, ret[3]);

	ASSERT_EQ(0, ibv_memcpy_from_dm(got, self->dm, 2 * PAGE - 16,
					sizeof(got)));
	EXPECT_EQ(42ULL, got[0]);
	EXPECT_EQ(0xabcdefULL, got[1]);
	EXPECT_EQ(UINT64_MAX, got[2]);
	EXPECT_EQ(6ULL, got[3]);
}

/*
 * The DM as A's own memory: SEND from it, receive into it, RDMA WRITE
 * from it, RDMA READ into it.
 */
TEST_F_TIMEOUT(pair, local_sges, 120)
{
	uint8_t *pat = malloc(DM_LEN), *v;
	struct ibv_wc wc;
	struct wr1 w = { .lkey = self->dmr->lkey, .rkey = self->bmr->rkey };

	ASSERT_NE(NULL, pat);
	stream_fill(pat, 3, 0, 4 * PAGE);
	ASSERT_EQ(0, ibv_memcpy_to_dm(self->dm, 0, pat, 4 * PAGE));

	/* SEND of DM bytes 100.. to B */
	ASSERT_EQ(0, recv1(self->b.qp, B_ADDR(0), DM_LEN, self->bmr->lkey));
	w.op = IBV_WR_SEND;
	w.laddr = 100;
	w.len = 2 * PAGE + 1;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->a, &w));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(2 * PAGE + 1, wc.byte_len);
	EXPECT_EQ(2 * PAGE + 1, stream_check(self->bbuf, 3, 100, 2 * PAGE + 1));

	/* RDMA WRITE of DM bytes 3 * PAGE.. into B */
	w.op = IBV_WR_RDMA_WRITE;
	w.laddr = 3 * PAGE;
	w.len = PAGE;
	w.raddr = B_ADDR(DM_LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->a, &w));
	EXPECT_EQ(PAGE, stream_check(self->bbuf + DM_LEN, 3, 3 * PAGE, PAGE));

	/* B SENDs into a receive in the DM at 8 * PAGE */
	stream_fill(self->bbuf, 4, 8 * PAGE, 2 * PAGE);
	ASSERT_EQ(0, recv1(self->a.qp, 8 * PAGE, 2 * PAGE, self->dmr->lkey));
	w.op = IBV_WR_SEND;
	w.laddr = B_ADDR(0);
	w.len = 2 * PAGE;
	w.lkey = self->bmr->lkey;
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(2 * PAGE, wc.byte_len);

	/* A READs B's bytes into the DM at 12 * PAGE */
	stream_fill(self->bbuf + DM_LEN, 5, 12 * PAGE, 3 * PAGE);
	w.op = IBV_WR_RDMA_READ;
	w.laddr = 12 * PAGE;
	w.len = 3 * PAGE;
	w.lkey = self->dmr->lkey;
	w.raddr = B_ADDR(DM_LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->a, &w));

	v = dm_read(self->dm, DM_LEN);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(4 * PAGE, stream_check(v, 3, 0, 4 * PAGE));
	EXPECT_EQ(4 * PAGE, first_not(v + 4 * PAGE, 4 * PAGE, 0));
	EXPECT_EQ(2 * PAGE, stream_check(v + 8 * PAGE, 4, 8 * PAGE,
					 2 * PAGE));
	EXPECT_EQ(2 * PAGE, first_not(v + 10 * PAGE, 2 * PAGE, 0));
	EXPECT_EQ(3 * PAGE, stream_check(v + 12 * PAGE, 5, 12 * PAGE,
					 3 * PAGE));
	EXPECT_EQ(PAGE, first_not(v + 15 * PAGE, PAGE, 0));
	free(v);
	free(pat);
}

/*
 * The sub MR reaches its 3 pages and no byte beyond: a WRITE one byte
 * past its end fails with a remote access error and writes nothing.
 */
TEST_F_TIMEOUT(pair, sub_mr_range, 120)
{
	static const struct piece at[] = { { PAGE, 3 * PAGE } };
	struct wr1 w = {
		.op = IBV_WR_RDMA_WRITE,
		.laddr = B_ADDR(PAGE), .len = 3 * PAGE,
		.lkey = self->bmr->lkey,
		.raddr = 0, .rkey = self->sub->rkey,
	};

	stream_fill(self->bbuf, 6, 0, DM_LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	check_dm(_metadata, self->dm, 6, at, 1);
	w.laddr = B_ADDR(0);
	w.len = 2;
	w.raddr = 3 * PAGE - 1;
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, op1(_metadata, &self->b, &w));
	check_dm(_metadata, self->dm, 6, at, 1);
}

/* An MR of length 0 takes a zero-length WRITE, and not one byte. */
TEST_F_TIMEOUT(pair, zero_length_mr, 120)
{
	struct ibv_mr *z = ibv_reg_dm_mr(self->a.pd, self->dm, 4 * PAGE, 0,
					 DM_ACCESS);
	struct wr1 w = {
		.op = IBV_WR_RDMA_WRITE,
		.laddr = B_ADDR(0), .len = 0, .lkey = self->bmr->lkey,
		.raddr = 0,
	};

	ASSERT_NE(NULL, z) TH_LOG("reg_dm_mr, length 0: %s", strerror(errno));
	w.rkey = z->rkey;
	memset(self->bbuf, 0xab, PAGE);
	EXPECT_EQ(IBV_WC_SUCCESS, op1(_metadata, &self->b, &w));
	w.len = 1;
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, op1(_metadata, &self->b, &w));
	check_dm(_metadata, self->dm, 0, NULL, 0);
	EXPECT_EQ(0, ibv_dereg_mr(z));
}

/* A deregistered MR's key reaches nothing. */
TEST_F_TIMEOUT(pair, deregistered_key, 120)
{
	uint32_t rkey = self->sub->rkey;
	struct wr1 w = {
		.op = IBV_WR_RDMA_WRITE,
		.laddr = B_ADDR(0), .len = 64, .lkey = self->bmr->lkey,
		.raddr = 0, .rkey = rkey,
	};

	ASSERT_EQ(0, ibv_dereg_mr(self->sub));
	self->sub = NULL;
	memset(self->bbuf, 0xcd, 64);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, op1(_metadata, &self->b, &w));
	check_dm(_metadata, self->dm, 0, NULL, 0);
}

TEST_HARNESS_MAIN
