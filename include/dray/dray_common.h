/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray hardware interface: numbers and sub-formats that several formats
 * share (admin commands, work queue entries, completions, events).
 *
 * All multi-byte fields are little endian unless noted. Bit ranges are
 * given as [high:low] and built with DRAY_GENMASK(), which is the kernel's
 * GENMASK() in the kernel (so FIELD_PREP()/FIELD_GET() take the masks) and
 * an equivalent constant expression in user space.
 */
#ifndef DRAY_COMMON_H
#define DRAY_COMMON_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#define DRAY_GENMASK(h, l)	GENMASK(h, l)
#define DRAY_GENMASK_ULL(h, l)	GENMASK_ULL(h, l)
#else
#include <assert.h>
#define DRAY_GENMASK(h, l)	((~0U >> (31 - (h))) & (~0U << (l)))
#define DRAY_GENMASK_ULL(h, l)	((~0ULL >> (63 - (h))) & (~0ULL << (l)))
#endif

/* QP numbers and PSNs are 24-bit fields (IBTA BTH). */
#define DRAY_QPN_MASK		DRAY_GENMASK(23, 0)
#define DRAY_PSN_MASK		DRAY_GENMASK(23, 0)

/*
 * Memory keys (lkey = rkey): [31:8] the MR table index, [7:0] the variant,
 * which the device changes whenever it reuses an index, so that a stale
 * key of a destroyed MR never matches its successor. Index 0 is never used.
 */
#define DRAY_KEY_INDEX_MASK	DRAY_GENMASK(31, 8)
#define DRAY_KEY_VARIANT_MASK	DRAY_GENMASK(7, 0)

/*
 * Memory translation table (MTT): a chain of 4 KiB pages, each holding 512
 * little-endian 64-bit entries. Entries 0..510 are bus addresses of 4 KiB
 * data pages, in order; entry 511 is the bus address of the next MTT page
 * (unused in the last page). The device copies the table when the object
 * is created; the driver may free the MTT pages once the command completed.
 */
#define DRAY_MTT_ENTRIES	512
#define DRAY_MTT_DATA_ENTRIES	511
#define DRAY_PAGE_SHIFT		12
#define DRAY_PAGE_SIZE		4096U

/*
 * Access rights of an MR or a memory window (and remote rights of a QP);
 * IBTA bit order. MW_BIND: windows may be bound to the MR. FLUSH_GLOBAL
 * (MRs only): a FLUSH of placement type global may name the MR.
 */
#define DRAY_ACCESS_LOCAL_WRITE		0x1
#define DRAY_ACCESS_REMOTE_WRITE	0x2
#define DRAY_ACCESS_REMOTE_READ		0x4
#define DRAY_ACCESS_REMOTE_ATOMIC	0x8
#define DRAY_ACCESS_MW_BIND		0x10
#define DRAY_ACCESS_FLUSH_GLOBAL	0x20
#define DRAY_ACCESS_REMOTE		(DRAY_ACCESS_REMOTE_WRITE | \
					 DRAY_ACCESS_REMOTE_READ | \
					 DRAY_ACCESS_REMOTE_ATOMIC)
#define DRAY_ACCESS_ALL			0x3f

/* Memory window types (IBTA: type 2 is bound to a QP; dray's 2 is 2B). */
enum dray_mw_type {
	DRAY_MW_TYPE_1	= 1,
	DRAY_MW_TYPE_2	= 2,
};

/*
 * QP types; IBTA numbering (as enum ib_qp_type). XRC (IBTA annex A14):
 * an initiator QP (XRC_INI) has a send queue only and sends to XRC SRQs
 * of its peer, named in each send WQE; a target QP (XRC_TGT) has no
 * queue of its own: it belongs to an XRC domain and places what it
 * receives through the XRC SRQ of that domain each request names.
 */
enum dray_qp_type {
	DRAY_QPT_GSI	= 1,
	DRAY_QPT_RC	= 2,
	DRAY_QPT_UC	= 3,
	DRAY_QPT_UD	= 4,
	DRAY_QPT_XRC_INI = 9,
	DRAY_QPT_XRC_TGT = 10,
};

/* QP states; IBTA numbering. */
enum dray_qp_state {
	DRAY_QPS_RESET	= 0,
	DRAY_QPS_INIT	= 1,
	DRAY_QPS_RTR	= 2,
	DRAY_QPS_RTS	= 3,
	DRAY_QPS_SQD	= 4,
	DRAY_QPS_SQE	= 5,
	DRAY_QPS_ERR	= 6,
};

/* IBTA path MTU encoding. */
enum dray_mtu {
	DRAY_MTU_256	= 1,
	DRAY_MTU_512	= 2,
	DRAY_MTU_1024	= 3,
	DRAY_MTU_2048	= 4,
	DRAY_MTU_4096	= 5,
};

/*
 * Where a RoCEv2 packet goes: an address handle's or an RC QP's path
 * (CREATE_AH mailbox, MODIFY_QP/QUERY_QP attributes, the address vector
 * of a UD send WQE).
 */
struct dray_path {
	__u8	dmac[6];
	__u8	sgid_index;	/* the source GID (and so IP) of the port */
	__u8	hop_limit;	/* IPv4 TTL / IPv6 hop limit; 0 means 64 */
	__u8	dgid[16];	/* IPv4 as ::ffff:a.b.c.d */
	__u8	traffic_class;	/* IPv4 TOS / IPv6 traffic class */
	__u8	reserved[3];
	__le32	flow_label;	/* IPv6 flow label, also hashed into sport */
	__le16	udp_sport;	/* 0: the device derives one from the QP */
	__u8	reserved2[2];
};

static_assert(sizeof(struct dray_path) == 36, "dray_path size");

#endif /* DRAY_COMMON_H */
