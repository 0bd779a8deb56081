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

#endif /* DRAY_ABI_USER_H */
