// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray_ktest: fast registration and invalidation, as the NVMe-oF host,
 * the NFS client and rdma_rw use them: ib_alloc_mr(IB_MR_TYPE_MEM_REG),
 * ib_map_mr_sg() of scattered pages, IB_WR_REG_MR, IB_WR_LOCAL_INV,
 * IB_WR_SEND_WITH_INV and remote invalidation; every MR state the device
 * must enforce (FREE, VALID, invalidated, a stale key) with the status
 * IBTA gives it, and the ordering the ULPs rely on (a REG_MR posted
 * unsignaled before a WR that uses the key; LOCAL_INV after a READ into
 * the MR).
 *
 * Each case runs on a fresh pair of connected RC QPs with one CQ per end,
 * since the error cases leave their QPs in ERR.
 */

#include <linux/highmem.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kt.h"

/* Pages of a fast-registration MR, and the bytes of them it covers. */
#define FR_PAGES	3
#define FR_OFF		512		/* the MR starts this far into page 0 */
#define FR_LAST		2048		/* bytes of the last page it covers */
#define FR_LEN		(PAGE_SIZE - FR_OFF + PAGE_SIZE + FR_LAST)

/* A connected QP pair, one CQ for sends and receives on each end. */
struct fr_pair {
	struct ib_cq	*acq, *bcq;
	struct ib_qp	*aqp, *bqp;
};

/* A fast-registration MR over FR_PAGES separate pages of one side. */
struct fr_mr {
	struct ib_device	*dev;
	struct ib_mr		*mr;
	struct page		*pages[FR_PAGES];
	struct scatterlist	sg[FR_PAGES];
	bool			mapped;
};

static struct ib_qp *fr_qp(struct kt_side *s, struct ib_cq *cq)
{
	struct ib_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = KT_WR,
			.max_recv_wr = KT_WR,
			.max_send_sge = KT_SGE,
			.max_recv_sge = KT_SGE,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	return ib_create_qp(s->pd, &ia);
}

static void fr_pair_destroy(struct fr_pair *p)
{
	if (p->aqp && !IS_ERR(p->aqp))
		ib_destroy_qp(p->aqp);
	if (p->bqp && !IS_ERR(p->bqp))
		ib_destroy_qp(p->bqp);
	if (p->acq && !IS_ERR(p->acq))
		ib_destroy_cq(p->acq);
	if (p->bcq && !IS_ERR(p->bcq))
		ib_destroy_cq(p->bcq);
	memset(p, 0, sizeof(*p));
}

static int fr_pair_create(struct kt_side *a, struct kt_side *b,
			  struct fr_pair *p)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };

	memset(p, 0, sizeof(*p));
	p->acq = ib_create_cq(a->dev, NULL, NULL, NULL, &ca);
	p->bcq = ib_create_cq(b->dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(p->acq) || IS_ERR(p->bcq))
		goto fail;
	p->aqp = fr_qp(a, p->acq);
	p->bqp = fr_qp(b, p->bcq);
	if (IS_ERR(p->aqp) || IS_ERR(p->bqp))
		goto fail;
	if (kt_connect(a, p->aqp, b, p->bqp->qp_num) ||
	    kt_connect(b, p->bqp, a, p->aqp->qp_num))
		goto fail;
	return 0;
fail:
	kt_diag("frwr: QP pair setup failed");
	fr_pair_destroy(p);
	return -EIO;
}

static void fr_mr_free(struct fr_mr *f)
{
	int i;

	if (f->mr && !IS_ERR(f->mr))
		ib_dereg_mr(f->mr);
	if (f->mapped)
		ib_dma_unmap_sg(f->dev, f->sg, FR_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < FR_PAGES; i++)
		if (f->pages[i])
			__free_page(f->pages[i]);
	memset(f, 0, sizeof(*f));
}

/*
 * Allocate the MR and its pages (zeroed) and map them: the MR's page
 * list holds FR_PAGES pages, iova is the first byte at FR_OFF of page 0.
 */
static int fr_mr_alloc(struct kt_side *s, struct fr_mr *f)
{
	int i, n;

	memset(f, 0, sizeof(*f));
	f->dev = s->dev;
	for (i = 0; i < FR_PAGES; i++) {
		f->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!f->pages[i])
			goto fail;
	}
	sg_init_table(f->sg, FR_PAGES);
	sg_set_page(&f->sg[0], f->pages[0], PAGE_SIZE - FR_OFF, FR_OFF);
	sg_set_page(&f->sg[1], f->pages[1], PAGE_SIZE, 0);
	sg_set_page(&f->sg[2], f->pages[2], FR_LAST, 0);
	if (ib_dma_map_sg(s->dev, f->sg, FR_PAGES, DMA_BIDIRECTIONAL) !=
	    FR_PAGES)
		goto fail;
	f->mapped = true;
	f->mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, FR_PAGES);
	if (IS_ERR(f->mr)) {
		kt_diag("frwr: ib_alloc_mr %ld", PTR_ERR(f->mr));
		goto fail;
	}
	n = ib_map_mr_sg(f->mr, f->sg, FR_PAGES, NULL, PAGE_SIZE);
	if (n != FR_PAGES || f->mr->length != FR_LEN ||
	    f->mr->iova != sg_dma_address(&f->sg[0])) {
		kt_diag("frwr: ib_map_mr_sg %d, length %llu, iova %#llx", n,
			f->mr->length, f->mr->iova);
		goto fail;
	}
	return 0;
fail:
	fr_mr_free(f);
	return -ENOMEM;
}

/* Byte @off of the MR's range, where the CPU sees it. */
static u8 *fr_byte(struct fr_mr *f, u32 off)
{
	u32 pos = off + FR_OFF;

	return (u8 *)page_address(f->pages[pos / PAGE_SIZE]) + pos % PAGE_SIZE;
}

static bool fr_equal(struct fr_mr *f, u32 off, const u8 *data, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*fr_byte(f, off + i) != data[i]) {
			kt_diag("frwr: MR byte %u is %#x, want %#x", off + i,
				*fr_byte(f, off + i), data[i]);
			return false;
		}
	return true;
}

static int fr_post(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad = NULL;
	int ret = ib_post_send(qp, wr, &bad);

	if (ret)
		kt_diag("frwr: ib_post_send %d", ret);
	return ret;
}

/* Post a REG_MR of @f with a new key and @access (@signaled or not). */
static int fr_reg(struct ib_qp *qp, struct fr_mr *f, int access, u64 wr_id,
		  bool signaled)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_REG_MR,
			.send_flags = signaled ? IB_SEND_SIGNALED : 0,
		},
		.mr = f->mr,
		.access = access,
	};

	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	wr.key = f->mr->rkey;
	return fr_post(qp, &wr.wr);
}

static int fr_local_inv(struct ib_qp *qp, u32 key, u64 wr_id)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = key,
	};

	return fr_post(qp, &wr);
}

/* RDMA WRITE or READ of @len bytes at a->buf + @loff, @rkey at @raddr. */
static int fr_rdma(struct kt_side *a, struct ib_qp *qp, enum ib_wr_opcode op,
		   u32 loff, u32 lkey, u64 raddr, u32 rkey, u32 len, u64 wr_id)
{
	struct ib_sge sge = { a->dma + loff, len, lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return fr_post(qp, &wr.wr);
}

static bool fr_expect(struct ib_cq *cq, enum ib_wc_status status,
		      enum ib_wc_opcode op, u64 wr_id, const char *what)
{
	struct ib_wc wc;

	return kt_poll1(cq, &wc) && kt_wc_is(&wc, status, op, wr_id, what);
}

static int fr_post_recv(struct kt_side *s, struct ib_qp *qp, u64 wr_id)
{
	struct ib_sge sge = { s->dma, 256, s->pd->local_dma_lkey };
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad = NULL;

	return ib_post_recv(qp, &wr, &bad);
}

static int fr_send_inv(struct kt_side *a, struct ib_qp *qp, u32 rkey,
		       u64 wr_id)
{
	struct ib_sge sge = { a->dma, 100, a->pd->local_dma_lkey };
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};

	return fr_post(qp, &wr);
}

/* What the device promises, and the requests it must refuse. */
static bool fr_test_caps(struct kt_side *a)
{
	const struct ib_device_attr *attr = &a->dev->attrs;
	u32 max = attr->max_fast_reg_page_list_len;
	struct ib_mr *mr;
	bool ok = true;

	if (!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    max < 257) {
		kt_diag("frwr: cap flags %#llx, max_fast_reg_page_list_len %u",
			attr->device_cap_flags, max);
		return false;
	}
	mr = ib_alloc_mr(a->pd, IB_MR_TYPE_MEM_REG, max);
	if (IS_ERR(mr)) {
		kt_diag("frwr: ib_alloc_mr(%u) %ld", max, PTR_ERR(mr));
		ok = false;
	} else {
		ib_dereg_mr(mr);
	}
	mr = ib_alloc_mr(a->pd, IB_MR_TYPE_MEM_REG, max + 1);
	if (!IS_ERR(mr) || PTR_ERR(mr) != -EINVAL) {
		kt_diag("frwr: ib_alloc_mr(%u) did not fail -EINVAL", max + 1);
		ok = false;
		if (!IS_ERR(mr))
			ib_dereg_mr(mr);
	}
	mr = ib_alloc_mr(a->pd, IB_MR_TYPE_SG_GAPS, 8);
	if (!IS_ERR(mr) || PTR_ERR(mr) != -EINVAL) {
		kt_diag("frwr: ib_alloc_mr(SG_GAPS) did not fail -EINVAL");
		ok = false;
		if (!IS_ERR(mr))
			ib_dereg_mr(mr);
	}
	return ok;
}

/* ib_map_mr_sg() with a page size the device does not take. */
static bool fr_test_map_page_size(struct kt_side *a)
{
	struct fr_mr f;
	bool ok;
	int n;

	if (fr_mr_alloc(a, &f))
		return false;
	n = ib_map_mr_sg(f.mr, f.sg, FR_PAGES, NULL, 2 * PAGE_SIZE);
	ok = n == -EINVAL;
	if (!ok)
		kt_diag("frwr: map with 8 KiB pages returned %d", n);
	fr_mr_free(&f);
	return ok;
}

/*
 * b registers an MR over three separate pages; a WRITEs into it through
 * the rkey (the bytes land at the right offsets of the right pages) and
 * READs it back. Before the REG_MR the MR is FREE: a WRITE fails with a
 * remote access error.
 */
static bool fr_test_reg_write_read(struct kt_side *a, struct kt_side *b,
				   bool before)
{
	const u32 off = 1000, len = 7000;	/* spans all three pages */
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	struct fr_pair p;
	struct fr_mr f;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	if (before) {
		/* FREE: no access yet. */
		if (!fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0,
			     a->pd->local_dma_lkey, f.mr->iova, f.mr->rkey, 64,
			     1))
			ok = fr_expect(p.acq, IB_WC_REM_ACCESS_ERR,
				       IB_WC_RDMA_WRITE, 1,
				       "WRITE to a FREE MR");
		goto out;
	}
	if (fr_reg(p.bqp, &f, access, 2, true) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_REG_MR, 2, "REG_MR"))
		goto out;
	kt_fill(a->buf, len, 41);
	if (fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0, a->pd->local_dma_lkey,
		    f.mr->iova + off, f.mr->rkey, len, 3) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 3, "WRITE"))
		goto out;
	if (!fr_equal(&f, off, a->buf, len))
		goto out;
	/* The bytes before and after the write stay untouched. */
	if (*fr_byte(&f, off - 1) || *fr_byte(&f, off + len)) {
		kt_diag("frwr: WRITE touched bytes around its range");
		goto out;
	}
	memset(a->buf + 8192, 0, len);
	if (fr_rdma(a, p.aqp, IB_WR_RDMA_READ, 8192, a->pd->local_dma_lkey,
		    f.mr->iova + off, f.mr->rkey, len, 4) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_RDMA_READ, 4, "READ"))
		goto out;
	if (memcmp(a->buf + 8192, a->buf, len)) {
		kt_diag("frwr: READ back differs");
		goto out;
	}
	/* Past the registered length: a remote access error. */
	if (!fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0, a->pd->local_dma_lkey,
		     f.mr->iova + FR_LEN - 8, f.mr->rkey, 16, 5))
		ok = fr_expect(p.acq, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE,
			       5, "WRITE past the MR's end");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/* REG_MR of a VALID MR: IBTA allows only FREE ones. */
static bool fr_test_reg_valid(struct kt_side *a, struct kt_side *b)
{
	struct fr_pair p;
	struct fr_mr f;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	if (fr_reg(p.bqp, &f, IB_ACCESS_LOCAL_WRITE, 1, true) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_REG_MR, 1, "REG_MR"))
		goto out;
	if (!fr_reg(p.bqp, &f, IB_ACCESS_LOCAL_WRITE, 2, true))
		ok = fr_expect(p.bcq, IB_WC_LOC_QP_OP_ERR, IB_WC_REG_MR, 2,
			       "REG_MR of a VALID MR");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/*
 * LOCAL_INV makes the MR FREE: a WRITE through the old key then fails.
 * A LOCAL_INV with a stale key (an earlier registration's) is refused.
 */
static bool fr_test_local_inv(struct kt_side *a, struct kt_side *b,
			      bool stale)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct fr_pair p;
	struct fr_mr f;
	bool ok = false;
	u32 key;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	key = f.mr->rkey;
	if (fr_reg(p.bqp, &f, access, 1, true) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_REG_MR, 1, "REG_MR"))
		goto out;
	if (stale) {
		/* key is the one before REG_MR changed its variant. */
		if (!fr_local_inv(p.bqp, key, 2))
			ok = fr_expect(p.bcq, IB_WC_LOC_QP_OP_ERR,
				       IB_WC_LOCAL_INV, 2,
				       "LOCAL_INV with a stale key");
		goto out;
	}
	if (fr_local_inv(p.bqp, f.mr->rkey, 2) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 2, "LOCAL_INV"))
		goto out;
	if (!fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0, a->pd->local_dma_lkey,
		     f.mr->iova, f.mr->rkey, 64, 3))
		ok = fr_expect(p.acq, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 3,
			       "WRITE after LOCAL_INV");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/* REG_MR with remote read only: a remote WRITE is refused. */
static bool fr_test_access(struct kt_side *a, struct kt_side *b)
{
	struct fr_pair p;
	struct fr_mr f;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	if (fr_reg(p.bqp, &f, IB_ACCESS_REMOTE_READ, 1, true) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_REG_MR, 1, "REG_MR"))
		goto out;
	if (fr_rdma(a, p.aqp, IB_WR_RDMA_READ, 0, a->pd->local_dma_lkey,
		    f.mr->iova, f.mr->rkey, 256, 2) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_RDMA_READ, 2, "READ"))
		goto out;
	if (!fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0, a->pd->local_dma_lkey,
		     f.mr->iova, f.mr->rkey, 256, 3))
		ok = fr_expect(p.acq, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 3,
			       "WRITE to a read-only registration");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/*
 * SEND_WITH_INV naming b's registered MR: b's receive completion says it
 * was invalidated, and which key; the key no longer works afterwards.
 * With a key b may not invalidate (its DMA MR's): b's receive fails with
 * a remote invalid request, a's send with a remote access error.
 */
static bool fr_test_send_inv(struct kt_side *a, struct kt_side *b, bool bad)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct fr_pair p;
	struct fr_mr f;
	struct ib_wc wc;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	if (fr_reg(p.bqp, &f, access, 1, true) ||
	    !fr_expect(p.bcq, IB_WC_SUCCESS, IB_WC_REG_MR, 1, "REG_MR"))
		goto out;
	if (fr_post_recv(b, p.bqp, 2))
		goto out;
	if (bad) {
		if (fr_send_inv(a, p.aqp, b->mr->rkey, 3))
			goto out;
		ok = fr_expect(p.bcq, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV, 2,
			       "receive of SEND_WITH_INV of a DMA MR key") &&
		     fr_expect(p.acq, IB_WC_REM_ACCESS_ERR, IB_WC_SEND, 3,
			       "SEND_WITH_INV of a DMA MR key");
		goto out;
	}
	if (fr_send_inv(a, p.aqp, f.mr->rkey, 3) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_SEND, 3, "SEND_WITH_INV") ||
	    !kt_poll1(p.bcq, &wc) ||
	    !kt_wc_is(&wc, IB_WC_SUCCESS, IB_WC_RECV, 2, "its receive"))
		goto out;
	if (!(wc.wc_flags & IB_WC_WITH_INVALIDATE) ||
	    wc.ex.invalidate_rkey != f.mr->rkey || wc.byte_len != 100) {
		kt_diag("frwr: receive flags %#x rkey %#x len %u, want rkey %#x",
			wc.wc_flags, wc.ex.invalidate_rkey, wc.byte_len,
			f.mr->rkey);
		goto out;
	}
	if (!fr_rdma(a, p.aqp, IB_WR_RDMA_WRITE, 0, a->pd->local_dma_lkey,
		     f.mr->iova, f.mr->rkey, 64, 4))
		ok = fr_expect(p.acq, IB_WC_REM_ACCESS_ERR, IB_WC_RDMA_WRITE, 4,
			       "WRITE after remote invalidation");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/*
 * Ordering, as the ULPs post: a's REG_MR unsignaled, chained before a
 * WRITE whose local SGE uses the new lkey (the WRITE must see the
 * registration); then a READ into the MR followed by a LOCAL_INV of it
 * (the invalidation must wait until the READ's data is placed).
 */
static bool fr_test_order(struct kt_side *a, struct kt_side *b)
{
	const u32 len = 6000;
	struct ib_sge sge;
	struct ib_rdma_wr write = {
		.wr = {
			.wr_id = 2,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = b->dma + 4096,
		.rkey = b->mr->rkey,
	};
	struct ib_reg_wr reg = {
		.wr = {
			.wr_id = 1,
			.opcode = IB_WR_REG_MR,
			.next = &write.wr,
		},
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct ib_rdma_wr read = write;
	struct ib_send_wr inv = {
		.wr_id = 4,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct fr_pair p;
	struct fr_mr f;
	u32 i;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(a, &f))
		goto out;
	for (i = 0; i < len; i++)
		*fr_byte(&f, i) = (u8)(i * 13 + 5);
	ib_update_fast_reg_key(f.mr, ib_inc_rkey(f.mr->rkey));
	reg.mr = f.mr;
	reg.key = f.mr->lkey;
	sge = (struct ib_sge){ f.mr->iova, len, f.mr->lkey };
	memset(b->buf + 4096, 0, len);
	if (fr_post(p.aqp, &reg.wr) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, 2,
		       "WRITE from an MR registered just before"))
		goto out;
	for (i = 0; i < len; i++)
		if (b->buf[4096 + i] != (u8)(i * 13 + 5)) {
			kt_diag("frwr: written byte %u differs", i);
			goto out;
		}
	/* READ b's bytes back into the MR, then invalidate it. */
	kt_fill(b->buf + 4096, len, 77);
	for (i = 0; i < len; i++)
		*fr_byte(&f, i) = 0;
	read.wr.wr_id = 3;
	read.wr.opcode = IB_WR_RDMA_READ;
	read.wr.next = &inv;
	inv.ex.invalidate_rkey = f.mr->lkey;
	if (fr_post(p.aqp, &read.wr) ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_RDMA_READ, 3,
		       "READ into the MR") ||
	    !fr_expect(p.acq, IB_WC_SUCCESS, IB_WC_LOCAL_INV, 4,
		       "LOCAL_INV after it"))
		goto out;
	ok = fr_equal(&f, 0, b->buf + 4096, len);
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

/* A QP in an error state flushes fast-registration WRs too. */
static bool fr_test_flush(struct kt_side *a, struct kt_side *b)
{
	struct fr_pair p;
	struct fr_mr f;
	bool ok = false;

	if (fr_pair_create(a, b, &p))
		return false;
	if (fr_mr_alloc(b, &f))
		goto out;
	if (kt_set_state(p.bqp, IB_QPS_ERR))
		goto out;
	/* Unsignaled: an error completion appears anyway. */
	if (!fr_reg(p.bqp, &f, IB_ACCESS_LOCAL_WRITE, 1, false))
		ok = fr_expect(p.bcq, IB_WC_WR_FLUSH_ERR, IB_WC_REG_MR, 1,
			       "REG_MR flushed in ERR");
out:
	fr_mr_free(&f);
	fr_pair_destroy(&p);
	return ok;
}

void kt_run_frwr(struct kt_side *a, struct kt_side *b)
{
	tap(fr_test_caps(a),
	    "frwr: MEM_MGT_EXTENSIONS, ib_alloc_mr up to max_fast_reg_page_list_len, beyond and SG_GAPS -EINVAL");
	tap(fr_test_map_page_size(a),
	    "frwr: ib_map_mr_sg with 8 KiB pages -EINVAL");
	tap(fr_test_reg_write_read(a, b, true),
	    "frwr: WRITE to a FREE MR: REM_ACCESS_ERR");
	tap(fr_test_reg_write_read(a, b, false),
	    "frwr: REG_MR of 3 scattered pages, remote WRITE and READ byte-exact, past the end REM_ACCESS_ERR");
	tap(fr_test_reg_valid(a, b),
	    "frwr: REG_MR of a VALID MR: LOC_QP_OP_ERR");
	tap(fr_test_local_inv(a, b, false),
	    "frwr: LOCAL_INV, then a WRITE through the key: REM_ACCESS_ERR");
	tap(fr_test_local_inv(a, b, true),
	    "frwr: LOCAL_INV with a stale key: LOC_QP_OP_ERR");
	tap(fr_test_access(a, b),
	    "frwr: REG_MR read-only: READ works, WRITE REM_ACCESS_ERR");
	tap(fr_test_send_inv(a, b, false),
	    "frwr: SEND_WITH_INV: IB_WC_WITH_INVALIDATE and the rkey, then the key is dead");
	tap(fr_test_send_inv(a, b, true),
	    "frwr: SEND_WITH_INV of a key not invalidable: REM_INV_REQ_ERR / REM_ACCESS_ERR");
	tap(fr_test_order(a, b),
	    "frwr: unsignaled REG_MR then a WRITE from it; READ into the MR then LOCAL_INV");
	tap(fr_test_flush(a, b),
	    "frwr: unsignaled REG_MR in ERR completes WR_FLUSH_ERR");
}
