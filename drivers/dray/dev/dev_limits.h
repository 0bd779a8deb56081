/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the silicon's fixed limits and numbering, what
 * QUERY_DEVICE reports and what the device enforces.
 */
#ifndef DRAY_DEV_LIMITS_H
#define DRAY_DEV_LIMITS_H

#include <linux/bitfield.h>
#include <linux/bits.h>

#include <dray/dray_admin.h>

#define DRAY_HW_NUM_VECTORS	8
#define DRAY_HW_MAX_EQ		8
#define DRAY_HW_MAX_UAR		256
#define DRAY_HW_GID_TBL_LEN	128
#define DRAY_HW_MAX_PD		4096
#define DRAY_HW_MAX_MR		16384
#define DRAY_HW_MAX_MR_SIZE	BIT_ULL(36)
#define DRAY_HW_MAX_FR_PAGES	512	/* page list of a FAST_REG MR */
#define DRAY_HW_MAX_MW		4096	/* memory windows (in the MR table) */
#define DRAY_HW_MAX_QP		1024
#define DRAY_HW_MAX_QP_WR	16384
#define DRAY_HW_MAX_SGE		16
#define DRAY_HW_MAX_SRQ		1024
#define DRAY_HW_MAX_SRQ_WR	16384
#define DRAY_HW_MAX_XRCD	1024	/* XRC domains */
#define DRAY_HW_MAX_CQ		2048
#define DRAY_HW_MAX_CQE		BIT(22)	/* as ConnectX: libfabric's rxm asks 65536 */
#define DRAY_HW_MAX_AH		65536
#define DRAY_HW_MAX_MCG		64	/* multicast groups */
#define DRAY_HW_MAX_MCG_QP	16	/* QPs attached to one group */
#define DRAY_HW_MAX_RD_ATOM	128	/* each way, per QP (as rxe) */
#define DRAY_HW_MAX_INLINE	256
#define DRAY_HW_MAX_MSG		BIT(31)
#define DRAY_HW_ACK_DELAY	15
#define DRAY_HW_VENDOR_ID	0x1af4		/* virtual device */
#define DRAY_HW_PART_ID		0xd7a1
#define DRAY_HW_HW_VER		1
#define DRAY_HW_FW_VER		(FIELD_PREP(DRAY_FW_VER_MAJOR_MASK, 1) | \
				 FIELD_PREP(DRAY_FW_VER_MINOR_MASK, 0) | \
				 FIELD_PREP(DRAY_FW_VER_PATCH_MASK, 0))

/* Object numbering: 0 is never a valid PD, CQ, AH or MR index. */
#define DRAY_HW_QPN_FIRST	2	/* QPN 0 and 1 (GSI) are reserved */
#define DRAY_HW_QPN_GSI		1	/* the one QP of type DRAY_QPT_GSI */
#define DRAY_HW_GSI_QKEY	0x80010000U	/* IBTA 13.5.1: QP1's Q_Key */
#define DRAY_HW_QPN_MCAST	0xffffff	/* BTH DestQP of multicast */

#endif /* DRAY_DEV_LIMITS_H */
