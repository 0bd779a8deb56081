// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: device matching, context setup and teardown, the
 * engine wake-up call and the benchmark counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dray.h"

/*
 * The kernel driver has no RDMA_DRIVER_* id of its own (it reports
 * RDMA_DRIVER_UNKNOWN), so the device is found through the ib_device's
 * parent, a platform device named "dray" (device/modalias), and failing
 * that through its name (dray0, dray1, ...).
 */
static const struct verbs_match_ent dray_match_table[] = {
	VERBS_MODALIAS_MATCH("platform:dray", NULL),
	VERBS_NAME_MATCH("dray", NULL),
	{}
};

static void dray_free_context(struct ibv_context *ibctx);

/*
 * Verbs this provider implements. Every op left unset resolves to
 * libibverbs' default: the dummy that fails with EOPNOTSUPP, or for
 * ack_cq_events and async events the generic implementation.
 */
static const struct verbs_context_ops dray_ctx_ops = {
	.alloc_dm = dray_alloc_dm,
	.alloc_pd = dray_alloc_pd,
	.alloc_parent_domain = dray_alloc_parent_domain,
	.create_ah = dray_create_ah,
	.create_cq = dray_create_cq,
	.create_cq_ex = dray_create_cq_ex,
	.create_qp = dray_create_qp,
	.create_qp_ex = dray_create_qp_ex,
	.create_srq = dray_create_srq,
	.create_srq_ex = dray_create_srq_ex,
	.dealloc_pd = dray_dealloc_pd,
	.dereg_mr = dray_dereg_mr,
	.rereg_mr = dray_rereg_mr,
	.alloc_mw = dray_alloc_mw,
	.dealloc_mw = dray_dealloc_mw,
	.bind_mw = dray_bind_mw,
	.close_xrcd = dray_close_xrcd,
	.destroy_ah = dray_destroy_ah,
	.destroy_cq = dray_destroy_cq,
	.resize_cq = dray_resize_cq,
	.attach_mcast = ibv_cmd_attach_mcast,
	.detach_mcast = ibv_cmd_detach_mcast,
	.destroy_qp = dray_destroy_qp,
	.destroy_srq = dray_destroy_srq,
	.free_context = dray_free_context,
	.free_dm = dray_free_dm,
	.get_srq_num = dray_get_srq_num,
	.modify_qp = dray_modify_qp,
	.modify_srq = dray_modify_srq,
	.open_qp = dray_open_qp,
	.open_xrcd = dray_open_xrcd,
	.poll_cq = dray_poll_cq,
	.post_recv = dray_post_recv,
	.post_send = dray_post_send,
	.post_srq_recv = dray_post_srq_recv,
	.query_device_ex = dray_query_device_ex,
	.query_port = dray_query_port,
	.query_qp = dray_query_qp,
	.query_srq = dray_query_srq,
	.reg_dmabuf_mr = dray_reg_dmabuf_mr,
	.reg_dm_mr = dray_reg_dm_mr,
	.reg_mr = dray_reg_mr,
	.req_notify_cq = dray_arm_cq,
};

/*
 * Wake the queue engine after posting work while it reported
 * DRAY_UAR_F_NEED_WAKEUP. The driver-specific method has no attributes:
 * the context (and so the UAR) is implied by the file descriptor.
 *
 * A failure is logged and otherwise ignored: the WQEs are already in the
 * ring and published, so post_send must not report them as not posted;
 * the engine also wakes for frames, timers and admin commands.
 */
void dray_wake_engine(struct dray_context *ctx)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_DEVICE, DRAY_IB_METHOD_KICK,
			       0);
	int err;

	atomic_fetch_add_explicit(&ctx->stats.wakeups, 1,
				  memory_order_relaxed);
	err = execute_ioctl(&ctx->ibv_ctx.context, cmd);
	if (err) {
		atomic_fetch_add_explicit(&ctx->stats.wakeup_errors, 1,
					  memory_order_relaxed);
		verbs_err(&ctx->ibv_ctx, "engine wake-up call failed: %s\n",
			  strerror(err));
	}
}

/*
 * Map the context's doorbell page. The kernel hands out an mmap key (an
 * offset on the uverbs file) that is valid for this context only.
 */
static int dray_map_db_page(struct dray_context *ctx,
			    const struct dray_alloc_ucontext_resp *uresp)
{
	void *page;

	if (uresp->db_page_size < sizeof(struct dray_uar)) {
		verbs_err(&ctx->ibv_ctx,
			  "kernel returned a doorbell page of %u bytes, need %zu\n",
			  uresp->db_page_size, sizeof(struct dray_uar));
		return EINVAL;
	}

	page = mmap(NULL, uresp->db_page_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ctx->ibv_ctx.context.cmd_fd,
		    (off_t)uresp->db_mmap_key);
	if (page == MAP_FAILED) {
		int err = errno;

		verbs_err(&ctx->ibv_ctx,
			  "mmap of doorbell page (key %#llx, size %u) failed: %s\n",
			  (unsigned long long)uresp->db_mmap_key,
			  uresp->db_page_size, strerror(err));
		return err;
	}

	ctx->uar = page;
	ctx->db_page_size = uresp->db_page_size;
	return 0;
}

/* Limits the provider checks before it allocates queue memory. */
static int dray_query_limits(struct dray_context *ctx)
{
	struct ibv_device_attr_ex attr;
	int err;

	err = dray_query_device_ex(&ctx->ibv_ctx.context, NULL, &attr,
				   sizeof(attr));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "QUERY_DEVICE failed: %s\n",
			  strerror(err));
		return err;
	}

	ctx->max_qp_wr = attr.orig_attr.max_qp_wr;
	ctx->max_cqe = attr.orig_attr.max_cqe;
	ctx->max_srq_wr = attr.orig_attr.max_srq_wr;
	ctx->max_srq_sge = attr.orig_attr.max_srq_sge;
	/* SRQ numbers are 1..max_srq. */
	ctx->xsrq_table = calloc((size_t)attr.orig_attr.max_srq + 1,
				 sizeof(*ctx->xsrq_table));
	if (!ctx->xsrq_table)
		return ENOMEM;
	ctx->xsrq_table_len = attr.orig_attr.max_srq + 1;
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE)
		ctx->rc_send_ops_extra |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL)
		ctx->rc_send_ops_extra |= IBV_QP_EX_WITH_FLUSH;
	return 0;
}

/*
 * Context: owns cmd_fd from here on; on failure it is closed and NULL is
 * returned with errno set.
 */
static struct verbs_context *dray_alloc_context(struct ibv_device *ibdev,
						int cmd_fd,
						void *private_data)
{
	struct dray_get_context_resp resp = {};
	struct dray_get_context cmd = {};
	struct dray_context *ctx;
	long page_size;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	page_size = sysconf(_SC_PAGESIZE);
	ctx->page_size = page_size > 0 ? (size_t)page_size : 4096;
	pthread_mutex_init(&ctx->qp_table_mutex, NULL);
	ctx->stats_enabled = check_env("DRAY_STATS");

	err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "GET_CONTEXT failed: %s\n",
			  strerror(err));
		goto err_uninit_ctx;
	}

	ctx->uar_index = resp.uar_index;
	ctx->max_inline_data = resp.max_inline_data;
	ctx->max_sge = resp.max_sge;

	err = dray_query_limits(ctx);
	if (err)
		goto err_uninit_ctx;

	err = dray_map_db_page(ctx, &resp.drv_payload);
	if (err)
		goto err_uninit_ctx;

	verbs_set_ops(&ctx->ibv_ctx, &dray_ctx_ops);

	verbs_debug(&ctx->ibv_ctx,
		    "uar %u, doorbell page %u bytes, max_inline_data %u, max_sge %u, max_qp_wr %u, max_cqe %u\n",
		    ctx->uar_index, resp.db_page_size, ctx->max_inline_data,
		    ctx->max_sge, ctx->max_qp_wr, ctx->max_cqe);
	return &ctx->ibv_ctx;

err_uninit_ctx:
	free(ctx->xsrq_table);
	pthread_mutex_destroy(&ctx->qp_table_mutex);
	/* Closes cmd_fd, which also tears down the kernel's ucontext. */
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
}

/*
 * DRAY_STATS=1: one line on stderr per context, for the benchmark to
 * compute wake-up system calls per posted WR.
 */
static void dray_print_stats(struct dray_context *ctx)
{
	uint64_t send = atomic_load(&ctx->stats.send_wrs);
	uint64_t recv = atomic_load(&ctx->stats.recv_wrs);
	uint64_t wakeups = atomic_load(&ctx->stats.wakeups);
	uint64_t errors = atomic_load(&ctx->stats.wakeup_errors);
	uint64_t posted = send + recv;

	fprintf(stderr,
		"dray stats: device %s uar %u send_wrs %llu recv_wrs %llu posted_wrs %llu wakeups %llu wakeup_errors %llu wakeups_per_wr %.6f\n",
		ctx->ibv_ctx.context.device->name, ctx->uar_index,
		(unsigned long long)send, (unsigned long long)recv,
		(unsigned long long)posted, (unsigned long long)wakeups,
		(unsigned long long)errors,
		posted ? (double)wakeups / (double)posted : 0.0);
}

static void dray_free_context(struct ibv_context *ibctx)
{
	struct dray_context *ctx = to_dray_ctx(ibctx);

	if (ctx->stats_enabled)
		dray_print_stats(ctx);

	munmap(ctx->uar, ctx->db_page_size);
	dray_qp_table_free(ctx);
	free(ctx->xsrq_table);
	pthread_mutex_destroy(&ctx->qp_table_mutex);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *dray_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct dray_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->ibv_dev;
}

static void dray_uninit_device(struct verbs_device *vdev)
{
	struct dray_device *dev = to_dray_dev(&vdev->device);

	free(dev);
}

static const struct verbs_device_ops dray_dev_ops = {
	.name = "dray",
	.match_min_abi_version = DRAY_UVERBS_ABI_VERSION,
	.match_max_abi_version = DRAY_UVERBS_ABI_VERSION,
	.match_table = dray_match_table,
	.alloc_device = dray_alloc_device,
	.uninit_device = dray_uninit_device,
	.alloc_context = dray_alloc_context,
};

PROVIDER_DRIVER(dray, dray_dev_ops);
