// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: control path. Device and port queries, PDs, MRs, AHs,
 * and the creation of CQs and QPs with the queue buffers this library
 * allocates (page aligned, zeroed) and the kernel pins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dray.h"

/*
 * The kernel reports fw_ver as major (bits 47:32), minor (31:16) and patch
 * (15:0), as in struct dray_device_caps of <dray/dray_admin.h>; format it
 * the way the kernel's own fw_ver sysfs file does.
 */
static void dray_format_fw_ver(char *buf, size_t len, uint64_t fw_ver)
{
	snprintf(buf, len, "%u.%u.%u",
		 (unsigned int)((fw_ver >> 32) & 0xffff),
		 (unsigned int)((fw_ver >> 16) & 0xffff),
		 (unsigned int)(fw_ver & 0xffff));
}

int dray_query_device_ex(struct ibv_context *ibctx,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	dray_format_fw_ver(attr->orig_attr.fw_ver,
			   sizeof(attr->orig_attr.fw_ver), resp.base.fw_ver);
	return 0;
}

int dray_query_port(struct ibv_context *ibctx, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *dray_alloc_pd(struct ibv_context *ibctx)
{
	struct dray_ucmd_alloc_pd_resp resp = {};
	struct dray_ucmd_alloc_pd cmd = {};
	struct dray_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "ALLOC_PD failed: %s\n",
			  strerror(err));
		free(pd);
		errno = err;
		return NULL;
	}

	pd->pdn = resp.pdn;
	return &pd->ibv_pd;
}

#define DRAY_PARENT_DOMAIN_COMP_MASK \
	(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
	 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

struct ibv_pd *dray_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	struct verbs_context *vctx = verbs_get_ctx(ibctx);
	struct dray_pd *pd, *parent;

	if (ibv_check_alloc_parent_domain(attr))
		return NULL;
	if (!check_comp_mask(attr->comp_mask, DRAY_PARENT_DOMAIN_COMP_MASK)) {
		verbs_err(vctx, "unsupported parent domain comp_mask %#x\n",
			  attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	pd = to_dray_pd(attr->pd);
	if (attr->pd->context != ibctx || pd->protection_domain) {
		verbs_err(vctx, "a parent domain needs a PD of this context\n");
		errno = EINVAL;
		return NULL;
	}
	/* Thread domains: this provider has none (alloc_td unsupported). */
	if (attr->td) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		verbs_err(vctx, "parent domain allocators: alloc and free both\n");
		errno = EINVAL;
		return NULL;
	}

	parent = calloc(1, sizeof(*parent));
	if (!parent) {
		errno = ENOMEM;
		return NULL;
	}
	ibv_initialize_parent_domain(&parent->ibv_pd, attr->pd);
	parent->pdn = pd->pdn;
	parent->protection_domain = pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		parent->alloc = attr->alloc;
		parent->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	atomic_fetch_add(&pd->refs, 1);
	return &parent->ibv_pd;
}

/* A CQ, QP or SRQ made on @ibpd holds it if it is a parent domain. */
static struct dray_pd *dray_parent_get(struct ibv_pd *ibpd)
{
	struct dray_pd *pd = ibpd ? to_dray_pd(ibpd) : NULL;

	if (!pd || !pd->protection_domain)
		return NULL;
	atomic_fetch_add(&pd->refs, 1);
	return pd;
}

static void dray_parent_put(struct dray_pd *pd)
{
	if (pd)
		atomic_fetch_sub(&pd->refs, 1);
}

int dray_dealloc_pd(struct ibv_pd *ibpd)
{
	struct dray_pd *pd = to_dray_pd(ibpd);
	int err;

	/*
	 * A parent domain holds no kernel object of its own. It cannot go
	 * while CQs, QPs or SRQs made on it live (their buffers may be its
	 * allocator's), and the PD it stands for cannot go before it.
	 */
	if (atomic_load(&pd->refs))
		return EBUSY;
	if (pd->protection_domain) {
		atomic_fetch_sub(&pd->protection_domain->refs, 1);
		free(pd);
		return 0;
	}

	err = ibv_cmd_dealloc_pd(ibpd);
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "DEALLOC_PD of PD %u failed: %s\n", pd->pdn,
			  strerror(err));
		return err;
	}

	free(pd);
	return 0;
}

struct ibv_mr *dray_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_reg_mr(ibpd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "REG_MR of %zu bytes failed: %s\n", length,
			  strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}

	return &vmr->ibv_mr;
}

/* A memory window; BIND_MW work requests (or ibv_bind_mw) bind it. */
struct ibv_mw *dray_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(pd->context),
			  "ALLOC_MW of type %d failed: %s\n", type,
			  strerror(err));
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int dray_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (err)
		return err;
	free(mw);
	return 0;
}

/*
 * The kernel changes the MR in place (the device's MODIFY_MR): its keys
 * stay what they were.
 */
int dray_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err)
		verbs_err(verbs_get_ctx(vmr->ibv_mr.context),
			  "REREG_MR of key %#x (flags %#x) failed: %s\n",
			  vmr->ibv_mr.lkey, flags, strerror(err));
	return err;
}

/*
 * An MR of a dma-buf. The kernel attaches the dma-buf to the device,
 * pins it and checks everything; fd -1 fails with EBADF, which is how
 * UCX, NCCL and libfabric probe for the capability. No driver data.
 */
struct ibv_mr *dray_reg_dmabuf_mr(struct ibv_pd *ibpd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_reg_dmabuf_mr(ibpd, offset, length, iova, fd, access,
				    vmr, NULL);
	if (err) {
		/* A probe's fd -1 is expected: no message for EBADF. */
		if (err != EBADF)
			verbs_err(verbs_get_ctx(ibpd->context),
				  "REG_DMABUF_MR of %zu bytes at %#llx of fd %d failed: %s\n",
				  length, (unsigned long long)offset, fd,
				  strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}

	return &vmr->ibv_mr;
}

int dray_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err) {
		verbs_err(verbs_get_ctx(vmr->ibv_mr.context),
			  "DEREG_MR of key %#x failed: %s\n", vmr->ibv_mr.lkey,
			  strerror(err));
		return err;
	}

	free(vmr);
	return 0;
}

/*
 * A queue buffer: page aligned, a whole number of pages (the kernel pins
 * pages), zeroed (a zero phase bit marks every CQE invalid for the first
 * pass, and doorbell records start at 0), and kept out of fork() children
 * so the pinned pages stay the ones the device uses.
 */
/*
 * With @pd a parent domain that has allocators, the buffer comes from its
 * alloc() (page aligned, as asked), unless that answers
 * IBV_ALLOCATOR_USE_DEFAULT; *buf_pd tells dray_queue_buf_free() which.
 */
static int dray_queue_buf_alloc(struct dray_context *ctx,
				struct ibv_pd *ibpd, uint64_t type,
				size_t bytes, void **buf, size_t *buf_size,
				struct dray_pd **buf_pd)
{
	struct dray_pd *pd = ibpd ? to_dray_pd(ibpd) : NULL;
	size_t size = align(bytes, ctx->page_size);
	void *p = IBV_ALLOCATOR_USE_DEFAULT;
	int err;

	*buf_pd = NULL;
	if (pd && pd->alloc)
		p = pd->alloc(&pd->ibv_pd, pd->pd_context, size,
			      ctx->page_size, type);
	if (p == IBV_ALLOCATOR_USE_DEFAULT) {
		err = posix_memalign(&p, ctx->page_size, size);
		if (err)
			return err;
	} else if (!p) {
		return ENOMEM;
	} else {
		*buf_pd = pd;
		if ((uintptr_t)p & (ctx->page_size - 1)) {
			verbs_err(&ctx->ibv_ctx,
				  "parent domain allocator: %p is not aligned to %u\n",
				  p, ctx->page_size);
			pd->free(&pd->ibv_pd, pd->pd_context, p, type);
			return EINVAL;
		}
	}
	memset(p, 0, size);

	if (ibv_dontfork_range(p, size)) {
		err = errno ? errno : ENOMEM;
		if (*buf_pd)
			pd->free(&pd->ibv_pd, pd->pd_context, p, type);
		else
			free(p);
		return err;
	}

	*buf = p;
	*buf_size = size;
	return 0;
}

static void dray_queue_buf_free(struct dray_pd *buf_pd, uint64_t type,
				void *buf, size_t buf_size)
{
	ibv_dofork_range(buf, buf_size);
	if (buf_pd)
		buf_pd->free(&buf_pd->ibv_pd, buf_pd->pd_context, buf, type);
	else
		free(buf);
}

#define DRAY_CREATE_CQ_COMP_MASK \
	(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)

static struct ibv_cq_ex *dray_create_cq_common(struct ibv_context *ibctx,
					       struct ibv_cq_init_attr_ex *attr)
{
	struct dray_context *ctx = to_dray_ctx(ibctx);
	struct dray_ucmd_create_cq_resp resp = {};
	struct dray_ucmd_create_cq cmd = {};
	unsigned int log_depth;
	struct dray_cq *cq;
	int err;

	if (!check_comp_mask(attr->comp_mask, DRAY_CREATE_CQ_COMP_MASK)) {
		verbs_err(&ctx->ibv_ctx,
			  "unsupported CQ comp_mask %#x (supported %#x)\n",
			  attr->comp_mask, DRAY_CREATE_CQ_COMP_MASK);
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* MASK_PD names a parent domain (its allocators make the ring). */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_dray_pd(attr->parent_domain)->protection_domain)) {
		verbs_err(&ctx->ibv_ctx, "CQ: parent_domain is not one\n");
		errno = EINVAL;
		return NULL;
	}
	/* Single-threaded use is allowed; the CQ keeps its lock anyway. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    !check_comp_mask(attr->flags, IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		verbs_err(&ctx->ibv_ctx,
			  "unsupported CQ flags %#x (supported %#x)\n",
			  attr->flags, IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!check_comp_mask(attr->wc_flags, DRAY_WC_FLAGS)) {
		verbs_err(&ctx->ibv_ctx,
			  "unsupported wc_flags %#llx (supported %#llx)\n",
			  (unsigned long long)attr->wc_flags,
			  (unsigned long long)DRAY_WC_FLAGS);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe < 1 || attr->cqe > ctx->max_cqe ||
	    attr->cqe >= (1U << 30)) {
		verbs_err(&ctx->ibv_ctx, "cqe %u out of range 1..%u\n",
			  attr->cqe, ctx->max_cqe);
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}

	/*
	 * Depth: the next power of two >= cqe + 1, so the ring always holds
	 * the cqe entries asked for with one to spare.
	 */
	log_depth = dray_order(attr->cqe + 1);
	cq->depth = 1U << log_depth;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent = dray_parent_get(attr->parent_domain);
	err = dray_queue_buf_alloc(ctx, attr->comp_mask &
				   IBV_CQ_INIT_ATTR_MASK_PD ?
				   attr->parent_domain : NULL, DRAY_RES_CQ,
				   DRAY_QUEUE_HDR_SIZE +
				   (size_t)cq->depth * DRAY_CQE_SIZE,
				   &cq->buf, &cq->buf_size, &cq->buf_pd);
	if (err)
		goto err_free_cq;
	cq->db = cq->buf;
	cq->ring = (struct dray_cqe *)((uint8_t *)cq->buf +
				       DRAY_QUEUE_HDR_SIZE);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);

	cmd.buf_addr = (uintptr_t)cq->buf;
	cmd.buf_size = cq->buf_size;
	cmd.log_depth = log_depth;
	err = ibv_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (err) {
		verbs_err(&ctx->ibv_ctx,
			  "CREATE_CQ (cqe %u, log_depth %u) failed: %s\n",
			  attr->cqe, log_depth, strerror(err));
		goto err_free_buf;
	}

	cq->cqn = resp.cqn;
	/* Report the real capacity. */
	cq->vcq.cq.cqe = cq->depth - 1;
	dray_cq_fill_poll_ops(cq, attr->wc_flags);

	verbs_debug(&ctx->ibv_ctx, "CQ %u: depth %u, buffer %zu bytes\n",
		    cq->cqn, cq->depth, cq->buf_size);
	return &cq->vcq.cq_ex;

err_free_buf:
	pthread_spin_destroy(&cq->lock);
	dray_queue_buf_free(cq->buf_pd, DRAY_RES_CQ, cq->buf, cq->buf_size);
err_free_cq:
	dray_parent_put(cq->parent);
	free(cq);
	errno = err;
	return NULL;
}

struct ibv_cq *dray_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.channel = channel,
		.comp_vector = comp_vector,
		.wc_flags = DRAY_WC_FLAGS,
	};
	struct ibv_cq_ex *cqx;

	if (cqe < 1) {
		verbs_err(verbs_get_ctx(ibctx), "cqe %d out of range\n", cqe);
		errno = EINVAL;
		return NULL;
	}

	cqx = dray_create_cq_common(ibctx, &attr);
	return cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
}

struct ibv_cq_ex *dray_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	return dray_create_cq_common(ibctx, attr);
}

int dray_destroy_cq(struct ibv_cq *ibcq)
{
	struct dray_cq *cq = to_dray_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err) {
		verbs_err(verbs_get_ctx(ibcq->context),
			  "DESTROY_CQ of CQ %u failed: %s\n", cq->cqn,
			  strerror(err));
		return err;
	}

	pthread_spin_destroy(&cq->lock);
	dray_queue_buf_free(cq->buf_pd, DRAY_RES_CQ, cq->buf, cq->buf_size);
	dray_parent_put(cq->parent);
	free(cq);
	return 0;
}

/*
 * ibv_resize_cq: a new ring of the next power of two >= cqe + 1 (the CQ's
 * parent domain allocates it, if it has one). Under the CQ's lock, so no
 * poller runs: the consumer index is published to the old record, the arm
 * state copied into the new one, then the device switches (RESIZE_CQ) and
 * says how many CQEs were left unconsumed; those are copied from the old
 * ring into slots 0 on of the new one, where the device starts after
 * them, and polling goes on from slot 0.
 */
int dray_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct dray_context *ctx = to_dray_ctx(ibcq->context);
	struct dray_cq *cq = to_dray_cq(ibcq);
	struct dray_ucmd_resize_cq_resp resp = {};
	struct dray_ucmd_resize_cq cmd = {};
	struct dray_pd *buf_pd;
	struct dray_cq_db *db;
	struct dray_cqe *ring;
	unsigned int log_depth;
	uint32_t depth, pending, i;
	size_t buf_size;
	void *buf;
	int err;

	if (cqe < 1 || (uint32_t)cqe > ctx->max_cqe || cqe >= (1 << 30)) {
		verbs_err(&ctx->ibv_ctx, "resize_cq: cqe %d out of range 1..%u\n",
			  cqe, ctx->max_cqe);
		return EINVAL;
	}
	log_depth = dray_order((uint32_t)cqe + 1);
	depth = 1U << log_depth;

	pthread_spin_lock(&cq->lock);
	if (depth == cq->depth) {
		pthread_spin_unlock(&cq->lock);
		return 0;
	}
	/* The CQEs not polled yet must fit (the device checks again). */
	pending = le32toh(atomic_load_explicit(
			(_Atomic(uint32_t) *)&cq->db->producer,
			memory_order_acquire)) - cq->consumer;
	if (pending >= depth) {
		verbs_err(&ctx->ibv_ctx,
			  "resize_cq: %u completions not polled, %u do not hold them\n",
			  pending, depth - 1);
		err = EINVAL;
		goto out;
	}
	err = dray_queue_buf_alloc(ctx, cq->parent ? &cq->parent->ibv_pd :
				   NULL, DRAY_RES_CQ, DRAY_QUEUE_HDR_SIZE +
				   (size_t)depth * DRAY_CQE_SIZE, &buf,
				   &buf_size, &buf_pd);
	if (err)
		goto out;
	db = buf;
	ring = (struct dray_cqe *)((uint8_t *)buf + DRAY_QUEUE_HDR_SIZE);
	db->arm_seq = cq->db->arm_seq;
	db->arm_flags = cq->db->arm_flags;
	atomic_store_explicit((_Atomic(uint32_t) *)&cq->db->consumer,
			      htole32(cq->consumer), memory_order_release);
	cq->consumer_published = cq->consumer;

	cmd.buf_addr = (uintptr_t)buf;
	cmd.buf_size = buf_size;
	cmd.log_depth = log_depth;
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "RESIZE_CQ of CQ %u to %u failed: %s\n",
			  cq->cqn, depth, strerror(err));
		dray_queue_buf_free(buf_pd, DRAY_RES_CQ, buf, buf_size);
		goto out;
	}
	if (resp.carried >= depth) {
		/* Cannot happen with a sane device; keep going, lose none. */
		verbs_err(&ctx->ibv_ctx, "RESIZE_CQ: %u CQEs to carry into %u\n",
			  resp.carried, depth);
		resp.carried = depth - 1;
	}
	udma_from_device_barrier();
	for (i = 0; i < resp.carried; i++) {
		const struct dray_cqe *src =
			&cq->ring[dray_ring_slot(cq->consumer + i, cq->depth)];
		struct dray_cqe *dst = &ring[dray_ring_slot(i, depth)];

		*dst = *src;
		dst->flags = (uint8_t)((src->flags & ~DRAY_CQE_F_PHASE) |
				       dray_ring_phase(i, depth));
	}
	dray_queue_buf_free(cq->buf_pd, DRAY_RES_CQ, cq->buf, cq->buf_size);
	cq->buf = buf;
	cq->buf_size = buf_size;
	cq->buf_pd = buf_pd;
	cq->db = db;
	cq->ring = ring;
	cq->depth = depth;
	cq->consumer = 0;
	cq->consumer_published = 0;
	cq->cur_cqe = NULL;
	cq->vcq.cq.cqe = depth - 1;
out:
	pthread_spin_unlock(&cq->lock);
	return err;
}

/*
 * Send or receive queue of 2^log_depth WQEs of 2^log_stride bytes after
 * the 64-byte doorbell record, with a wr_id per slot.
 */
static int dray_wq_init(struct dray_context *ctx, struct ibv_pd *pd,
			uint64_t type, struct dray_wq *wq,
			unsigned int log_depth, unsigned int log_stride)
{
	int err;

	wq->log_depth = log_depth;
	wq->log_stride = log_stride;
	wq->depth = 1U << log_depth;

	wq->wrid = calloc(wq->depth, sizeof(*wq->wrid));
	if (!wq->wrid)
		return ENOMEM;

	wq->type = type;
	err = dray_queue_buf_alloc(ctx, pd, type, DRAY_QUEUE_HDR_SIZE +
				   ((size_t)wq->depth << log_stride),
				   &wq->buf, &wq->buf_size, &wq->buf_pd);
	if (err) {
		free(wq->wrid);
		return err;
	}
	wq->db = wq->buf;
	wq->ring = (uint8_t *)wq->buf + DRAY_QUEUE_HDR_SIZE;
	pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	return 0;
}

static void dray_wq_destroy(struct dray_wq *wq)
{
	pthread_spin_destroy(&wq->lock);
	dray_queue_buf_free(wq->buf_pd, wq->type, wq->buf, wq->buf_size);
	free(wq->wrid);
}

/*
 * CREATE_FLAGS is accepted with no flag set (nothing asked for): the
 * device supports none of the ibv_qp_create_flags.
 */
#define DRAY_CREATE_QP_COMP_MASK \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
	 IBV_QP_INIT_ATTR_CREATE_FLAGS)

/* The operations of the extended send API a QP of @type may have. */
static uint64_t dray_qp_send_ops(const struct dray_context *ctx,
				 enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_UD:
		return DRAY_UD_SEND_OPS_FLAGS;
	case IBV_QPT_UC:
		return DRAY_UC_SEND_OPS_FLAGS;
	case IBV_QPT_XRC_SEND:
		return DRAY_XRC_SEND_OPS_FLAGS;
	default:
		return DRAY_SEND_OPS_FLAGS | ctx->rc_send_ops_extra;
	}
}

/* A receive queue of its own: neither on an SRQ nor an XRC initiator. */
static bool dray_qp_attr_has_rq(const struct ibv_qp_init_attr_ex *attr)
{
	return !attr->srq && attr->qp_type != IBV_QPT_XRC_SEND;
}

static int dray_check_qp_init_attr(struct dray_context *ctx,
				   const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_qp_cap *cap = &attr->cap;
	uint64_t send_ops = dray_qp_send_ops(ctx, attr->qp_type);

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	    attr->qp_type != IBV_QPT_UD && attr->qp_type != IBV_QPT_XRC_SEND) {
		verbs_err(&ctx->ibv_ctx, "unsupported QP type %d\n",
			  attr->qp_type);
		return EOPNOTSUPP;
	}
	if (!check_comp_mask(attr->comp_mask, DRAY_CREATE_QP_COMP_MASK)) {
		verbs_err(&ctx->ibv_ctx,
			  "unsupported QP comp_mask %#x (supported %#x)\n",
			  attr->comp_mask, DRAY_CREATE_QP_COMP_MASK);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		verbs_err(&ctx->ibv_ctx, "unsupported QP create_flags %#x\n",
			  attr->create_flags);
		return EOPNOTSUPP;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		verbs_err(&ctx->ibv_ctx, "QP without a PD\n");
		return EINVAL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    !check_comp_mask(attr->send_ops_flags, send_ops)) {
		verbs_err(&ctx->ibv_ctx,
			  "unsupported send_ops_flags %#llx (supported %#llx)\n",
			  (unsigned long long)attr->send_ops_flags,
			  (unsigned long long)send_ops);
		return EOPNOTSUPP;
	}
	/* An XRC initiator only sends: its receive CQ is not used. */
	if (!attr->send_cq ||
	    (!attr->recv_cq && attr->qp_type != IBV_QPT_XRC_SEND)) {
		verbs_err(&ctx->ibv_ctx, "QP without a send or receive CQ\n");
		return EINVAL;
	}
	if (attr->qp_type == IBV_QPT_XRC_SEND && attr->srq) {
		verbs_err(&ctx->ibv_ctx, "an XRC initiator QP on an SRQ\n");
		return EINVAL;
	}
	if (cap->max_send_wr > ctx->max_qp_wr) {
		verbs_err(&ctx->ibv_ctx, "max_send_wr %u > %u\n",
			  cap->max_send_wr, ctx->max_qp_wr);
		return EINVAL;
	}
	if (dray_qp_attr_has_rq(attr) && cap->max_recv_wr > ctx->max_qp_wr) {
		verbs_err(&ctx->ibv_ctx, "max_recv_wr %u > %u\n",
			  cap->max_recv_wr, ctx->max_qp_wr);
		return EINVAL;
	}
	if (cap->max_send_sge > ctx->max_sge) {
		verbs_err(&ctx->ibv_ctx, "max_send_sge %u > %u\n",
			  cap->max_send_sge, ctx->max_sge);
		return EINVAL;
	}
	if (dray_qp_attr_has_rq(attr) && cap->max_recv_sge > ctx->max_sge) {
		verbs_err(&ctx->ibv_ctx, "max_recv_sge %u > %u\n",
			  cap->max_recv_sge, ctx->max_sge);
		return EINVAL;
	}
	if (cap->max_inline_data > ctx->max_inline_data) {
		verbs_err(&ctx->ibv_ctx, "max_inline_data %u > %u\n",
			  cap->max_inline_data, ctx->max_inline_data);
		return EINVAL;
	}
	return 0;
}

/*
 * Queue geometry from the requested capabilities (already checked
 * against the device limits, so every value below is small):
 *  SQ stride: power of two >= 64 + max(16 * max_send_sge, max_inline_data)
 *  RQ stride: power of two >= 16 + 16 * max_recv_sge
 *  depths:    power of two >= max_wr (at least 1)
 */
static void dray_qp_geometry(const struct ibv_qp_cap *cap,
			     unsigned int *sq_log_depth,
			     unsigned int *sq_log_stride,
			     unsigned int *rq_log_depth,
			     unsigned int *rq_log_stride)
{
	uint32_t sq_payload = max_t(uint32_t, DRAY_SGE_SIZE * cap->max_send_sge,
				    cap->max_inline_data);

	*sq_log_depth = dray_order(max_t(uint32_t, cap->max_send_wr, 1));
	*sq_log_stride = dray_order(DRAY_SQ_WQE_HDR_SIZE + sq_payload);
	*rq_log_depth = dray_order(max_t(uint32_t, cap->max_recv_wr, 1));
	*rq_log_stride = dray_order(DRAY_RQ_WQE_HDR_SIZE +
				    DRAY_SGE_SIZE * cap->max_recv_sge);
}

/* What the queues really hold, reported back in ibv_qp_cap. */
static void dray_qp_real_cap(const struct dray_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.depth;
	cap->max_recv_wr = qp->rq.depth;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline_data;
}

static void dray_lock_cqs(struct dray_cq *a, struct dray_cq *b)
{
	if (a == b) {
		pthread_spin_lock(&a->lock);
		return;
	}
	/* Address order: two callers locking one pair cannot deadlock. */
	if ((uintptr_t)a > (uintptr_t)b) {
		struct dray_cq *t = a;

		a = b;
		b = t;
	}
	pthread_spin_lock(&a->lock);
	pthread_spin_lock(&b->lock);
}

static void dray_unlock_cqs(struct dray_cq *a, struct dray_cq *b)
{
	if (a != b)
		pthread_spin_unlock(&b->lock);
	pthread_spin_unlock(&a->lock);
}

/*
 * An XRC target QP (IBV_QPT_XRC_RECV): a QP of an XRC domain with no PD,
 * CQ or queue; the device places what it receives through the XRC SRQs
 * the requests name. Nothing of it is in this library but the handle:
 * its completions are those SRQs'.
 */
static struct ibv_qp *dray_create_xrc_recv_qp(struct dray_context *ctx,
					      struct ibv_qp_init_attr_ex *attr)
{
	struct ib_uverbs_ex_create_qp_resp resp = {};
	struct ibv_create_qp_ex cmd = {};
	struct dray_qp *qp;
	int err;

	if (!check_comp_mask(attr->comp_mask, IBV_QP_INIT_ATTR_XRCD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		verbs_err(&ctx->ibv_ctx,
			  "XRC target QP: unsupported comp_mask %#x\n",
			  attr->comp_mask);
		err = EOPNOTSUPP;
		goto err_out;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd) {
		verbs_err(&ctx->ibv_ctx, "XRC target QP without an XRC domain\n");
		err = EINVAL;
		goto err_out;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		err = ENOMEM;
		goto err_out;
	}
	err = ibv_cmd_create_qp_ex2(&ctx->ibv_ctx.context, &qp->vqp, attr,
				    &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_QP (XRC target) failed: %s\n",
			  strerror(err));
		free(qp);
		goto err_out;
	}
	qp->vqp.qp.state = IBV_QPS_RESET;
	memset(&attr->cap, 0, sizeof(attr->cap));
	return &qp->vqp.qp;

err_out:
	errno = err;
	return NULL;
}

static struct ibv_qp *dray_create_qp_common(struct ibv_context *ibctx,
					    struct ibv_qp_init_attr_ex *attr)
{
	struct dray_context *ctx = to_dray_ctx(ibctx);
	struct dray_ucmd_create_qp_resp resp = {};
	struct dray_ucmd_create_qp cmd = {};
	unsigned int sq_log_depth, sq_log_stride;
	unsigned int rq_log_depth, rq_log_stride;
	struct ibv_qp_init_attr_ex cmd_attr;
	struct dray_qp *qp;
	uint32_t stride;
	int err;

	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return dray_create_xrc_recv_qp(ctx, attr);
	err = dray_check_qp_init_attr(ctx, attr);
	if (err)
		goto err_out;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		err = ENOMEM;
		goto err_out;
	}

	dray_qp_geometry(&attr->cap, &sq_log_depth, &sq_log_stride,
			 &rq_log_depth, &rq_log_stride);

	qp->parent = dray_parent_get(attr->pd);
	err = dray_wq_init(ctx, attr->pd, DRAY_RES_SQ, &qp->sq, sq_log_depth,
			   sq_log_stride);
	if (err)
		goto err_free_qp;
	/*
	 * On an SRQ, or an XRC initiator, the QP has no receive queue (the
	 * command says 0s).
	 */
	if (!dray_qp_attr_has_rq(attr)) {
		rq_log_depth = 0;
		rq_log_stride = 0;
	} else {
		err = dray_wq_init(ctx, attr->pd, DRAY_RES_RQ, &qp->rq,
				   rq_log_depth, rq_log_stride);
		if (err)
			goto err_destroy_sq;
	}

	stride = 1U << sq_log_stride;
	qp->sq.max_sge = min_t(uint32_t, ctx->max_sge,
			       (stride - DRAY_SQ_WQE_HDR_SIZE) / DRAY_SGE_SIZE);
	qp->max_inline_data = min_t(uint32_t, ctx->max_inline_data,
				    stride - DRAY_SQ_WQE_HDR_SIZE);
	stride = 1U << rq_log_stride;
	if (dray_qp_attr_has_rq(attr))
		qp->rq.max_sge = min_t(uint32_t, ctx->max_sge,
				       (stride - DRAY_RQ_WQE_HDR_SIZE) /
				       DRAY_SGE_SIZE);
	qp->sq_sig_all = attr->sq_sig_all;

	cmd.sq_buf_addr = (uintptr_t)qp->sq.buf;
	cmd.rq_buf_addr = (uintptr_t)qp->rq.buf;
	cmd.sq_buf_size = qp->sq.buf_size;
	cmd.rq_buf_size = qp->rq.buf_size;
	cmd.sq_log_depth = sq_log_depth;
	cmd.sq_log_stride = sq_log_stride;
	cmd.rq_log_depth = rq_log_depth;
	cmd.rq_log_stride = rq_log_stride;

	/*
	 * The kernel sees the capabilities as asked for (and checks them
	 * against the device); the geometry is in the driver command.
	 * ibv_cmd_create_qp_ex() takes no CREATE_FLAGS, and none is set
	 * (dray_check_qp_init_attr): the command gets a copy without it.
	 */
	cmd_attr = *attr;
	cmd_attr.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &cmd_attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx,
			  "CREATE_QP (SQ 2^%u x %u, RQ 2^%u x %u) failed: %s\n",
			  sq_log_depth, 1U << sq_log_stride, rq_log_depth,
			  1U << rq_log_stride, strerror(err));
		goto err_destroy_rq;
	}

	if (resp.max_inline_data && resp.max_inline_data < qp->max_inline_data)
		qp->max_inline_data = resp.max_inline_data;
	qp->vqp.qp.state = IBV_QPS_RESET;

	err = dray_qp_table_insert(ctx, qp);
	if (err)
		goto err_destroy_qp;

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		dray_qp_fill_wr_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}

	dray_qp_real_cap(qp, &attr->cap);

	verbs_debug(&ctx->ibv_ctx,
		    "QP %u: SQ %u x %u bytes (%u SGEs, %u inline), RQ %u x %u bytes (%u SGEs)\n",
		    qp->vqp.qp.qp_num, qp->sq.depth, 1U << sq_log_stride,
		    qp->sq.max_sge, qp->max_inline_data, qp->rq.depth,
		    1U << rq_log_stride, qp->rq.max_sge);
	return &qp->vqp.qp;

err_destroy_qp:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_destroy_rq:
	if (qp->rq.buf)
		dray_wq_destroy(&qp->rq);
err_destroy_sq:
	dray_wq_destroy(&qp->sq);
err_free_qp:
	dray_parent_put(qp->parent);
	free(qp);
err_out:
	errno = err;
	return NULL;
}

struct ibv_qp *dray_create_qp(struct ibv_pd *ibpd,
			      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_qp *ibqp;

	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = ibpd;

	ibqp = dray_create_qp_common(ibpd->context, &attr_ex);
	if (ibqp)
		memcpy(attr, &attr_ex, sizeof(*attr));
	return ibqp;
}

struct ibv_qp *dray_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	return dray_create_qp_common(ibctx, attr);
}

/*
 * Drop the CQEs of a QP that the device will not complete any more (after
 * RESET or destroy), so that a later QP with the same number does not
 * receive them.
 */
static struct dray_srq *dray_qp_srq(struct dray_qp *qp)
{
	return qp->vqp.qp.srq ? to_dray_srq(qp->vqp.qp.srq) : NULL;
}

/*
 * An XRC target QP has no queue or CQ of its own (nor has a QP it opened
 * with ibv_open_qp()): its receives complete on its SRQs' CQs.
 */
static bool dray_qp_is_xrc_recv(const struct dray_qp *qp)
{
	return qp->vqp.qp.qp_type == IBV_QPT_XRC_RECV;
}

/* A QP's CQs; an XRC initiator's receive CQ is its send CQ (it has none). */
static struct dray_cq *dray_qp_send_cq(const struct dray_qp *qp)
{
	return to_dray_cq(qp->vqp.qp.send_cq);
}

static struct dray_cq *dray_qp_recv_cq(const struct dray_qp *qp)
{
	return qp->vqp.qp.recv_cq ? to_dray_cq(qp->vqp.qp.recv_cq) :
				    dray_qp_send_cq(qp);
}

static void dray_qp_clean_cqs(struct dray_qp *qp)
{
	struct dray_cq *send_cq = dray_qp_send_cq(qp);
	struct dray_cq *recv_cq = dray_qp_recv_cq(qp);
	struct dray_srq *srq = dray_qp_srq(qp);

	dray_lock_cqs(send_cq, recv_cq);
	dray_cq_clean(send_cq, qp->vqp.qp.qp_num, srq);
	if (recv_cq != send_cq)
		dray_cq_clean(recv_cq, qp->vqp.qp.qp_num, srq);
	dray_unlock_cqs(send_cq, recv_cq);
}

int dray_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct dray_qp *qp = to_dray_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err) {
		verbs_err(verbs_get_ctx(ibqp->context),
			  "MODIFY_QP of QP %u (mask %#x) failed: %s\n",
			  ibqp->qp_num, attr_mask, strerror(err));
		return err;
	}

	/*
	 * In RESET the device has forgotten the queues' contents and
	 * starts again at index 0: so does the provider.
	 */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET &&
	    !dray_qp_is_xrc_recv(qp)) {
		dray_qp_clean_cqs(qp);
		dray_qp_reset_indexes(qp);
	}
	return 0;
}

int dray_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct dray_qp *qp = to_dray_qp(ibqp);
	struct ibv_query_qp cmd = {};
	int err;

	err = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (err)
		return err;

	dray_qp_real_cap(qp, &attr->cap);
	dray_qp_real_cap(qp, &init_attr->cap);
	return 0;
}

int dray_destroy_qp(struct ibv_qp *ibqp)
{
	struct dray_context *ctx = to_dray_ctx(ibqp->context);
	struct dray_qp *qp = to_dray_qp(ibqp);
	struct dray_cq *send_cq, *recv_cq;
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		verbs_err(&ctx->ibv_ctx, "DESTROY_QP of QP %u failed: %s\n",
			  ibqp->qp_num, strerror(err));
		return err;
	}
	/* Made or opened: its SRQs' CQEs are theirs, not the QP's. */
	if (dray_qp_is_xrc_recv(qp)) {
		free(qp);
		return 0;
	}
	send_cq = dray_qp_send_cq(qp);
	recv_cq = dray_qp_recv_cq(qp);

	/*
	 * The device writes no more CQEs for the QP. Unlink it and drop
	 * its CQEs under the CQ locks, so no poller holds it any more.
	 */
	pthread_mutex_lock(&ctx->qp_table_mutex);
	dray_lock_cqs(send_cq, recv_cq);
	dray_qp_table_remove(ctx, qp);
	dray_cq_clean(send_cq, ibqp->qp_num, dray_qp_srq(qp));
	if (recv_cq != send_cq)
		dray_cq_clean(recv_cq, ibqp->qp_num, dray_qp_srq(qp));
	dray_unlock_cqs(send_cq, recv_cq);
	pthread_mutex_unlock(&ctx->qp_table_mutex);

	if (qp->rq.buf)
		dray_wq_destroy(&qp->rq);
	dray_wq_destroy(&qp->sq);
	dray_parent_put(qp->parent);
	free(qp);
	return 0;
}

/*
 * ibv_open_qp(): an XRC target QP of a domain this process shares (made
 * by another process, or another handle of this one). Like one it made,
 * it is a handle and nothing else here.
 */
struct ibv_qp *dray_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct dray_qp *qp;
	int err;

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "OPEN_QP of QP %u failed: %s\n",
			  attr->qp_num, strerror(err));
		free(qp);
		errno = err;
		return NULL;
	}
	return &qp->vqp.qp;
}

/*
 * XRC domains: the kernel's object, shared between processes through the
 * file they open it with; the device's number stays in the kernel.
 */
struct ibv_xrcd *dray_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "OPEN_XRCD failed: %s\n",
			  strerror(err));
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int dray_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd,
					       xrcd);
	int err;

	/* EBUSY while its SRQs or target QPs live. */
	err = ibv_cmd_close_xrcd(xrcd);
	if (err)
		return err;
	free(xrcd);
	return 0;
}

struct ibv_ah *dray_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
	struct dray_ucmd_create_ah_resp resp = {};
	struct dray_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}

	err = ibv_cmd_create_ah(ibpd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "CREATE_AH failed: %s\n", strerror(err));
		free(ah);
		errno = err;
		return NULL;
	}

	ah->ahn = resp.ahn;
	return &ah->ibv_ah;
}

int dray_destroy_ah(struct ibv_ah *ibah)
{
	struct dray_ah *ah = to_dray_ah(ibah);
	int err;

	err = ibv_cmd_destroy_ah(ibah);
	if (err) {
		verbs_err(verbs_get_ctx(ibah->context),
			  "DESTROY_AH of AH %u failed: %s\n", ah->ahn,
			  strerror(err));
		return err;
	}

	free(ah);
	return 0;
}

/*
 * Shared receive queues. The ring holds 2^log_depth >= max_wr WQEs of a
 * 16-byte header and max_sge SGEs; every WR is named by a tag below the
 * depth (dray_queue.h), so max_wr reported back is the depth.
 */
static int dray_srq_check_attr(struct dray_context *ctx,
			       const struct ibv_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > ctx->max_srq_wr) {
		verbs_err(&ctx->ibv_ctx, "SRQ max_wr %u not in [1, %u]\n",
			  attr->max_wr, ctx->max_srq_wr);
		return EINVAL;
	}
	if (attr->max_sge > ctx->max_srq_sge) {
		verbs_err(&ctx->ibv_ctx, "SRQ max_sge %u > %u\n",
			  attr->max_sge, ctx->max_srq_sge);
		return EINVAL;
	}
	/* srq_limit is irrelevant for ibv_create_srq (ibv_modify_srq arms). */
	return 0;
}

static void dray_srq_free(struct dray_srq *srq)
{
	if (srq->buf)
		dray_queue_buf_free(srq->buf_pd, DRAY_RES_SRQ, srq->buf,
				    srq->buf_size);
	dray_parent_put(srq->parent);
	pthread_spin_destroy(&srq->lock);
	free(srq->busy);
	free(srq->free);
	free(srq->wrid);
	free(srq);
}

static struct dray_srq *dray_srq_alloc(struct dray_context *ctx,
				       struct ibv_pd *pd,
				       const struct ibv_srq_attr *attr)
{
	struct dray_srq *srq;
	uint32_t i, stride;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->parent = dray_parent_get(pd);
	srq->log_depth = dray_order(attr->max_wr);
	srq->depth = 1U << srq->log_depth;
	stride = DRAY_SRQ_WQE_HDR_SIZE +
		 DRAY_SGE_SIZE * (attr->max_sge ? attr->max_sge : 1);
	srq->log_stride = dray_order(stride);
	stride = 1U << srq->log_stride;
	srq->max_sge = min_t(uint32_t, ctx->max_srq_sge,
			     (stride - DRAY_SRQ_WQE_HDR_SIZE) / DRAY_SGE_SIZE);
	srq->wrid = calloc(srq->depth, sizeof(*srq->wrid));
	srq->free = calloc(srq->depth, sizeof(*srq->free));
	srq->busy = calloc(srq->depth, sizeof(*srq->busy));
	if (!srq->wrid || !srq->free || !srq->busy)
		goto err;
	/* Tags come off the top of the stack: 0 first. */
	for (i = 0; i < srq->depth; i++)
		srq->free[i] = srq->depth - 1 - i;
	srq->n_free = srq->depth;
	if (dray_queue_buf_alloc(ctx, pd, DRAY_RES_SRQ, DRAY_QUEUE_HDR_SIZE +
				 ((size_t)srq->depth << srq->log_stride),
				 &srq->buf, &srq->buf_size, &srq->buf_pd))
		goto err;
	srq->db = srq->buf;
	srq->ring = (uint8_t *)srq->buf + DRAY_QUEUE_HDR_SIZE;
	return srq;

err:
	dray_srq_free(srq);
	return NULL;
}

/* The ring, for CREATE_SRQ and CREATE_XSRQ (one driver request). */
#define dray_srq_fill_cmd(srq, cmd) do {				\
	(cmd)->buf_addr = (uintptr_t)(srq)->buf;			\
	(cmd)->buf_size = (srq)->buf_size;				\
	(cmd)->log_depth = (srq)->log_depth;				\
	(cmd)->log_stride = (srq)->log_stride;				\
} while (0)

struct ibv_srq *dray_create_srq(struct ibv_pd *ibpd,
				struct ibv_srq_init_attr *attr)
{
	struct dray_context *ctx = to_dray_ctx(ibpd->context);
	struct dray_ucmd_create_srq_resp resp = {};
	struct dray_ucmd_create_srq cmd = {};
	struct dray_srq *srq;
	int err;

	err = dray_srq_check_attr(ctx, &attr->attr);
	if (err)
		goto err_out;
	srq = dray_srq_alloc(ctx, ibpd, &attr->attr);
	if (!srq) {
		err = ENOMEM;
		goto err_out;
	}
	dray_srq_fill_cmd(srq, &cmd);
	err = ibv_cmd_create_srq(ibpd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_SRQ (2^%u x %u) failed: %s\n",
			  srq->log_depth, 1U << srq->log_stride,
			  strerror(err));
		dray_srq_free(srq);
		goto err_out;
	}
	srq->srqn = resp.srqn;
	attr->attr.max_wr = srq->depth;
	attr->attr.max_sge = srq->max_sge;
	return &srq->vsrq.srq;

err_out:
	errno = err;
	return NULL;
}

#define DRAY_CREATE_SRQ_COMP_MASK \
	(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
	 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/* An SRQ of create_srq_ex: basic, or XRC with a domain and a CQ. */
static int dray_srq_check_attr_ex(struct dray_context *ctx,
				  const struct ibv_srq_init_attr_ex *attr)
{
	bool xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
		   attr->srq_type == IBV_SRQT_XRC;

	if (!check_comp_mask(attr->comp_mask, DRAY_CREATE_SRQ_COMP_MASK) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	     attr->srq_type != IBV_SRQT_BASIC && !xrc)) {
		verbs_err(&ctx->ibv_ctx,
			  "SRQ comp_mask %#x / type %d: basic and XRC SRQs only\n",
			  attr->comp_mask, attr->srq_type);
		return EOPNOTSUPP;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd) {
		verbs_err(&ctx->ibv_ctx, "SRQ without a PD\n");
		return EINVAL;
	}
	if (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		    !attr->xrcd || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		    !attr->cq)) {
		verbs_err(&ctx->ibv_ctx, "XRC SRQ without a domain or a CQ\n");
		return EINVAL;
	}
	return dray_srq_check_attr(ctx, &attr->attr);
}

/*
 * An XRC SRQ's completions name it by number: the pollers of its CQ find
 * it in the context's table.
 */
static int dray_xsrq_insert(struct dray_context *ctx, struct dray_srq *srq)
{
	struct dray_cq *cq = to_dray_cq(srq->vsrq.cq);

	if (srq->srqn >= ctx->xsrq_table_len) {
		verbs_err(&ctx->ibv_ctx, "XRC SRQ number %u beyond max_srq\n",
			  srq->srqn);
		return EINVAL;
	}
	pthread_mutex_lock(&ctx->qp_table_mutex);
	pthread_spin_lock(&cq->lock);
	atomic_store_explicit(&ctx->xsrq_table[srq->srqn], srq,
			      memory_order_relaxed);
	pthread_spin_unlock(&cq->lock);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
	return 0;
}

/* Unlink it, and drop its CQEs not polled yet (no WR is left to name). */
static void dray_xsrq_remove(struct dray_context *ctx, struct dray_srq *srq)
{
	struct dray_cq *cq = to_dray_cq(srq->vsrq.cq);

	pthread_mutex_lock(&ctx->qp_table_mutex);
	pthread_spin_lock(&cq->lock);
	atomic_store_explicit(&ctx->xsrq_table[srq->srqn], NULL,
			      memory_order_relaxed);
	dray_cq_clean_xsrq(cq, srq->srqn);
	pthread_spin_unlock(&cq->lock);
	pthread_mutex_unlock(&ctx->qp_table_mutex);
}

static bool dray_srq_is_xrc(const struct dray_srq *srq)
{
	return srq->vsrq.srq_type == IBV_SRQT_XRC;
}

struct ibv_srq *dray_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct dray_context *ctx = to_dray_ctx(ibctx);
	struct dray_ucmd_create_xsrq_resp resp = {};
	struct dray_ucmd_create_xsrq cmd = {};
	struct dray_srq *srq;
	int err;

	err = dray_srq_check_attr_ex(ctx, attr);
	if (err)
		goto err_out;
	srq = dray_srq_alloc(ctx, attr->pd, &attr->attr);
	if (!srq) {
		err = ENOMEM;
		goto err_out;
	}
	dray_srq_fill_cmd(srq, &cmd);
	err = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "CREATE_XSRQ (2^%u x %u) failed: %s\n",
			  srq->log_depth, 1U << srq->log_stride,
			  strerror(err));
		dray_srq_free(srq);
		goto err_out;
	}
	srq->srqn = resp.srqn;
	if (dray_srq_is_xrc(srq)) {
		err = dray_xsrq_insert(ctx, srq);
		if (err) {
			ibv_cmd_destroy_srq(&srq->vsrq.srq);
			dray_srq_free(srq);
			goto err_out;
		}
	}
	attr->attr.max_wr = srq->depth;
	attr->attr.max_sge = srq->max_sge;
	return &srq->vsrq.srq;

err_out:
	errno = err;
	return NULL;
}

int dray_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int dray_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct dray_srq *srq = to_dray_srq(ibsrq);
	struct ibv_query_srq cmd = {};
	int err;

	err = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (err)
		return err;
	attr->max_wr = srq->depth;
	attr->max_sge = srq->max_sge;
	return 0;
}

int dray_destroy_srq(struct ibv_srq *ibsrq)
{
	struct dray_srq *srq = to_dray_srq(ibsrq);
	int err;

	/* EBUSY while a QP uses it (the kernel keeps the count). */
	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	if (dray_srq_is_xrc(srq))
		dray_xsrq_remove(to_dray_ctx(ibsrq->context), srq);
	dray_srq_free(srq);
	return 0;
}

/* The number senders name an XRC SRQ by (their WRs' remote_srqn). */
int dray_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_dray_srq(ibsrq)->srqn;
	return 0;
}
