/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interface of dray_dmabuf_exp.ko, the test exporter of dma-bufs
 * that tests/rdma/dmabuf.c uses for memory that no exporter of the test
 * kernel hands out (see dray_dmabuf_exp.c). Shared by the module and the
 * test.
 */
#ifndef DRAY_DMABUF_EXP_H
#define DRAY_DMABUF_EXP_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DRAY_EXP_DEV		"/dev/dray_dmabuf_exp"

/* What a dma-buf's memory is. */
enum dray_exp_kind {
	/* a PCI memory BAR at its bus address, no struct page, no CPU map */
	DRAY_EXP_BAR		= 1,
	/* host RAM pages, then one page of a PCI memory BAR, last */
	DRAY_EXP_MIXED		= 2,
	/* one contiguous allocation of host RAM that is no compound page */
	DRAY_EXP_CONTIG		= 3,
};

struct dray_exp_create {
	__u32	kind;		/* enum dray_exp_kind */
	__u32	flags;		/* 0 */
	__u64	size;		/* bytes, a multiple of 4096 */
	__s32	fd;		/* out: the dma-buf */
	__u32	reserved;	/* 0 */
	__u64	bar_addr;	/* out: bus address of the BAR part, or 0 */
};

/* Attachments and mappings of every dma-buf of the module. */
struct dray_exp_stats {
	__u32	attachments;	/* live */
	__u32	mappings;	/* live */
	__u64	maps;		/* map_dma_buf calls so far */
	char	last_dev[32];	/* dev_name() of the last attacher */
};

#define DRAY_EXP_IOC_CREATE	_IOWR('D', 0x40, struct dray_exp_create)
#define DRAY_EXP_IOC_STATS	_IOR('D', 0x41, struct dray_exp_stats)

#endif /* DRAY_DMABUF_EXP_H */
