/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray user access region (UAR): the doorbell page of one user context.
 *
 * The page is host memory handed to the device with CREATE_UAR and mapped
 * into exactly one user context. Its first half is written by the device
 * and only read by software; its second half is written by software and
 * read by the device. The device validates everything it reads here.
 */
#ifndef DRAY_UAR_H
#define DRAY_UAR_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif

#define DRAY_UAR_SIZE		4096
#define DRAY_UAR_MAGIC		0x52415544u	/* "DUAR" */

/*
 * Device area flags.
 * NEED_WAKEUP: the queue engine serving this UAR went idle and stopped
 * polling its doorbell records; software that posts new work must make
 * one wake-up call. Cleared by the device when it resumes polling.
 */
#define DRAY_UAR_F_NEED_WAKEUP	0x00000001u

struct dray_uar_dev_area {
	__le32	magic;		/* DRAY_UAR_MAGIC once CREATE_UAR completed */
	__le32	index;		/* the UAR index */
	__le32	flags;		/* DRAY_UAR_F_* */
	__le32	wakeups;	/* times the engine was woken for this UAR */
	__u8	reserved[2048 - 16];
};

struct dray_uar_sw_area {
	__u8	reserved[2048];	/* doorbell records, defined with the queues */
};

struct dray_uar {
	struct dray_uar_dev_area dev;
	struct dray_uar_sw_area sw;
};

static_assert(sizeof(struct dray_uar) == DRAY_UAR_SIZE, "dray_uar size");

#endif /* DRAY_UAR_H */
