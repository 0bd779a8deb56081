/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dray provider: user space driver for the dray RoCEv2 NIC.
 *
 * Control path through the ibv_cmd_* helpers; the data path (added with the
 * queues) writes WQEs and doorbells and reads CQEs without system calls.
 */
#ifndef __DRAY_H__
#define __DRAY_H__

#include <stddef.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <util/util.h>

#include "dray_abi.h"

struct dray_device {
	struct verbs_device ibv_dev;
};

/*
 * One per ibv_open_device(). Limits come from the kernel's GET_CONTEXT
 * response and are fixed for the context's lifetime.
 */
struct dray_context {
	struct verbs_context ibv_ctx;
	/* This context's own doorbell page (UAR), never shared. */
	void *db_page;
	size_t db_page_size;
	uint32_t uar_index;
	uint32_t max_inline_data;
	uint32_t max_sge;
};

static inline struct dray_device *to_dray_dev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct dray_device, ibv_dev.device);
}

static inline struct dray_context *to_dray_ctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct dray_context, ibv_ctx.context);
}

#endif /* __DRAY_H__ */
