/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dray provider: uverbs command wrappers around the driver-specific
 * structures of <rdma/dray-abi.h>.
 */
#ifndef __DRAY_ABI_H__
#define __DRAY_ABI_H__

#include <infiniband/kern-abi.h>
#include <kernel-abi/dray-abi.h>
#include <rdma/dray-abi.h>

/*
 * DECLARE_DRV_CMD(name, ...) defines struct name and struct name_resp; the
 * wrapper names must not collide with the kernel's struct names, hence
 * dray_get_context rather than dray_alloc_ucontext.
 *
 * GET_CONTEXT: no driver request data, struct dray_alloc_ucontext_resp back.
 */
DECLARE_DRV_CMD(dray_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, dray_alloc_ucontext_resp);

#endif /* __DRAY_ABI_H__ */
