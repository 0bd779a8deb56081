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
 * dray_get_context rather than dray_alloc_ucontext, and the dray_ucmd_
 * prefix of the others.
 *
 * GET_CONTEXT: no driver request data, struct dray_alloc_ucontext_resp back.
 */
DECLARE_DRV_CMD(dray_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, dray_alloc_ucontext_resp);

/* ALLOC_PD: struct dray_alloc_pd_resp back (the PD number). */
DECLARE_DRV_CMD(dray_ucmd_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, dray_alloc_pd_resp);

/* CREATE_CQ (extended): the CQ buffer the provider allocated. */
DECLARE_DRV_CMD(dray_ucmd_create_cq, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		dray_create_cq_cmd, dray_create_cq_resp);

/* RESIZE_CQ: the new CQ buffer; how many CQEs to carry over, back. */
DECLARE_DRV_CMD(dray_ucmd_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		dray_resize_cq_cmd, dray_resize_cq_resp);

/* CREATE_QP: the SQ and RQ buffers the provider allocated. */
DECLARE_DRV_CMD(dray_ucmd_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		dray_create_qp_cmd, dray_create_qp_resp);

/* CREATE_SRQ and CREATE_XSRQ: the SRQ ring the provider allocated. */
DECLARE_DRV_CMD(dray_ucmd_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		dray_create_srq_cmd, dray_create_srq_resp);
DECLARE_DRV_CMD(dray_ucmd_create_xsrq, IB_USER_VERBS_CMD_CREATE_XSRQ,
		dray_create_srq_cmd, dray_create_srq_resp);

/* CREATE_AH: struct dray_create_ah_resp back (the AH number). */
DECLARE_DRV_CMD(dray_ucmd_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, dray_create_ah_resp);

#endif /* __DRAY_ABI_H__ */
