/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: work requests and paths as the device holds them once
 * it has copied them out of host memory and validated them. The work
 * queue layer (dev_wq.c) fills them; the transport (dev_xport.h) and the
 * UD service (dev_ud.h) keep them in their per-QP state.
 */
#ifndef DRAY_DEV_WQE_H
#define DRAY_DEV_WQE_H

#include <linux/if_ether.h>
#include <linux/types.h>

#include <dray/dray_queue.h>

#include "dev_limits.h"

/* A local operation: executed by the device, no packets (dray_queue.h). */
static inline bool dray_hw_wqe_is_local(u8 opcode)
{
	return opcode == DRAY_WQE_LOCAL_INV || opcode == DRAY_WQE_REG_MR ||
	       opcode == DRAY_WQE_BIND_MW;
}

/*
 * A FLUSH's placement type and selectivity level, numbered alike in its
 * WQE (dray_queue.h) and its FETH: exactly one type, a level dray knows.
 */
static inline bool dray_hw_flush_args_ok(u8 type, u8 level)
{
	return (type == DRAY_FLUSH_GLOBAL || type == DRAY_FLUSH_PERSISTENT) &&
	       level <= DRAY_FLUSH_LEVEL_MR;
}

/* A send WQE copied out of the ring and validated (dray_hw_sq_fetch). */
struct dray_hw_swqe {
	u32			index;		/* free-running WQE index */
	struct dray_sq_wqe	hdr;
	u32			num_sge;
	u32			length;		/* total payload bytes */
	u8			vendor_err;	/* DRAY_VERR_* if fetch failed */
	struct dray_sge		sge[DRAY_HW_MAX_SGE];
	u8			*inline_data;	/* NULL or inline_buf: the payload */
	u8			inline_buf[DRAY_HW_MAX_INLINE];
};

/* A receive WQE copied out of the ring (dray_hw_rq_fetch). */
struct dray_hw_rwqe {
	u32			index;
	u32			num_sge;
	u32			pdn;		/* the PD its SGEs belong to */
	u32			tag;		/* an SRQ WQE's tag */
	u64			length;		/* total capacity */
	struct dray_sge		sge[DRAY_HW_MAX_SGE];
};

/* Resolved path: what a frame needs (from dray_path and the GID table). */
struct dray_hw_path {
	u8		dmac[ETH_ALEN];
	u8		sgid[16];
	u8		dgid[16];
	bool		ipv4;		/* both GIDs are IPv4-mapped */
	u8		sgid_index;	/* where sgid came from */
	u8		hop_limit;	/* never 0 (0 in dray_path means 64) */
	u8		traffic_class;
	u32		flow_label;
	u16		udp_sport;	/* never 0: derived if dray_path has 0 */
};

#endif /* DRAY_DEV_WQE_H */
