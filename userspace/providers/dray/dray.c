// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: device matching, context setup, device and port queries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

static int dray_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
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

static int dray_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static void dray_free_context(struct ibv_context *ibctx);

/*
 * Verbs this provider implements. Every op left unset resolves to
 * libibverbs' dummy, which fails with EOPNOTSUPP.
 */
static const struct verbs_context_ops dray_ctx_ops = {
	.free_context = dray_free_context,
	.query_device_ex = dray_query_device_ex,
	.query_port = dray_query_port,
};

/*
 * Map the context's doorbell page. The kernel hands out an mmap key (an
 * offset on the uverbs file) that is valid for this context only.
 */
static int dray_map_db_page(struct dray_context *ctx,
			    const struct dray_alloc_ucontext_resp *uresp)
{
	void *page;

	if (!uresp->db_page_size) {
		verbs_err(&ctx->ibv_ctx,
			  "kernel returned no doorbell page (db_page_size 0)\n");
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

	ctx->db_page = page;
	ctx->db_page_size = uresp->db_page_size;
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
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->ibv_ctx, "GET_CONTEXT failed: %s\n",
			  strerror(err));
		goto err_uninit_ctx;
	}

	err = dray_map_db_page(ctx, &resp.drv_payload);
	if (err)
		goto err_uninit_ctx;

	ctx->uar_index = resp.uar_index;
	ctx->max_inline_data = resp.max_inline_data;
	ctx->max_sge = resp.max_sge;

	verbs_set_ops(&ctx->ibv_ctx, &dray_ctx_ops);

	verbs_debug(&ctx->ibv_ctx,
		    "uar %u, doorbell page %u bytes, max_inline_data %u, max_sge %u\n",
		    ctx->uar_index, resp.db_page_size, ctx->max_inline_data,
		    ctx->max_sge);
	return &ctx->ibv_ctx;

err_uninit_ctx:
	/* Closes cmd_fd, which also tears down the kernel's ucontext. */
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
}

static void dray_free_context(struct ibv_context *ibctx)
{
	struct dray_context *ctx = to_dray_ctx(ibctx);

	munmap(ctx->db_page, ctx->db_page_size);
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
