/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray user/kernel ABI: the driver-specific parts of the uverbs commands.
 *
 * This header is the single source of truth. It is used by the kernel
 * driver and copied into the rdma-core tree (kernel-headers/rdma/) when the
 * provider is built.
 */
#ifndef DRAY_ABI_USER_H
#define DRAY_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* Bumped on any incompatible change; checked by the provider. */
#define DRAY_UVERBS_ABI_VERSION 1

/*
 * Every context owns one doorbell page (a UAR). Its layout is described in
 * include/dray/dray_uar.h. The page is mapped with mmap(2) on the uverbs file
 * at offset db_mmap_key, length db_page_size, PROT_READ | PROT_WRITE,
 * MAP_SHARED.
 */
struct dray_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 uar_index;
	__aligned_u64 db_mmap_key;
	__u32 db_page_size;
	__u32 max_inline_data;
	__u32 max_sge;
	__u32 reserved;
};

/*
 * Driver-specific uverbs method on UVERBS_OBJECT_DEVICE: wake the queue
 * engine serving this context's UAR. The provider calls it only after it
 * posted work and saw DRAY_UAR_F_NEED_WAKEUP set in its doorbell page.
 * No attributes.
 */
enum dray_ib_device_methods {
	DRAY_IB_METHOD_KICK = (1U << UVERBS_ID_NS_SHIFT),
};

struct dray_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

/*
 * CQ buffer, allocated by the provider, page aligned: a 64-byte doorbell
 * record then 2^log_depth 32-byte CQEs (include/dray/dray_queue.h);
 * buf_size covers at least that. The driver pins it.
 */
struct dray_create_cq_cmd {
	__aligned_u64 buf_addr;
	__u32 buf_size;
	__u8 log_depth;
	__u8 reserved[3];
};

struct dray_create_cq_resp {
	__u32 cqn;
	__u32 reserved;
};

/*
 * ibv_resize_cq: the new CQ buffer (as for create). The response says how
 * many unconsumed CQEs stayed in the old ring (from the consumer index in
 * its doorbell record on): the provider copies them into slots 0 on of
 * the new ring, where the device starts after them.
 */
struct dray_resize_cq_cmd {
	__aligned_u64 buf_addr;
	__u32 buf_size;
	__u8 log_depth;
	__u8 reserved[3];
};

struct dray_resize_cq_resp {
	__u32 carried;
	__u32 reserved;
};

/*
 * SQ and RQ buffers, each page aligned: a 64-byte doorbell record then
 * 2^log_depth WQEs of 2^log_stride bytes. A QP on an SRQ has no receive
 * queue: rq_buf_addr, rq_buf_size, rq_log_depth and rq_log_stride are 0.
 */
struct dray_create_qp_cmd {
	__aligned_u64 sq_buf_addr;
	__aligned_u64 rq_buf_addr;
	__u32 sq_buf_size;
	__u32 rq_buf_size;
	__u8 sq_log_depth;
	__u8 sq_log_stride;
	__u8 rq_log_depth;
	__u8 rq_log_stride;
	__u32 reserved;
};

struct dray_create_qp_resp {
	__u32 qpn;
	__u32 max_inline_data;
};

/*
 * SRQ buffer, allocated by the provider, page aligned: a 64-byte doorbell
 * record then 2^log_depth SRQ WQEs of 2^log_stride bytes
 * (include/dray/dray_queue.h: struct dray_srq_wqe and its tag).
 */
struct dray_create_srq_cmd {
	__aligned_u64 buf_addr;
	__u32 buf_size;
	__u8 log_depth;
	__u8 log_stride;
	__u8 reserved[2];
};

struct dray_create_srq_resp {
	__u32 srqn;
	__u32 reserved;
};

/*
 * ibv_alloc_dm: the driver's attributes of UVERBS_METHOD_DM_ALLOC. The
 * device memory is mapped with mmap(2) on the uverbs file at offset
 * MMAP_KEY, length MMAP_LEN (whole pages, at least the length asked for),
 * PROT_READ | PROT_WRITE, MAP_SHARED; byte 0 of the DM is the first byte
 * of the mapping.
 */
enum dray_ib_dm_alloc_attrs {
	DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY = (1U << UVERBS_ID_NS_SHIFT),
	DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_LEN,
};

/* An AH's number, used in UD send WQEs (dray_sq_wqe.u.ud.ah). */
struct dray_create_ah_resp {
	__u32 ahn;
	__u32 reserved;
};

#endif /* DRAY_ABI_USER_H */
