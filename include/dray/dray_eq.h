/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray event queue entry format.
 *
 * An EQ is a ring of 16-byte entries written by the device (CREATE_EQ).
 * Validity follows the same phase rule as the admin completion ring: the
 * phase bit is 1 on the first pass and toggles on every wrap; the device
 * writes the rest of the entry before the flags byte. The driver returns
 * entries with DRAY_REG_EQ_DB and re-arms the EQ there.
 */
#ifndef DRAY_EQ_H
#define DRAY_EQ_H

#include <linux/types.h>
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif

#define DRAY_EQE_SIZE		16
#define DRAY_EQ_LOG_DEPTH_MIN	4
#define DRAY_EQ_LOG_DEPTH_MAX	14

enum dray_eqe_type {
	/* data0 = port number, data1[7:0] = new enum dray_port_state */
	DRAY_EQE_PORT_CHANGE	= 1,
	/* data0 = CQ number: the CQ was armed and got a matching CQE */
	DRAY_EQE_COMPLETION	= 2,
	/* data0 = CQ number: CQ overflow or unreadable buffer; CQ is dead */
	DRAY_EQE_CQ_ERROR	= 3,
	/* data0 = QP number, data1 = vendor error: QP went to ERR */
	DRAY_EQE_QP_FATAL	= 4,
	/* data0 = QP number: invalid request (responder) */
	DRAY_EQE_QP_REQ_ERR	= 5,
	/* data0 = QP number: remote access violation (responder) */
	DRAY_EQE_QP_ACCESS_ERR	= 6,
	/* data0 = QP number: first packet received in RTR */
	DRAY_EQE_COMM_EST	= 7,
	/* data0 = QP number: SQD reached, send queue drained */
	DRAY_EQE_SQ_DRAINED	= 8,
	/* data0 = SRQ number: fewer WQEs than the armed limit; disarmed */
	DRAY_EQE_SRQ_LIMIT	= 9,
	/*
	 * data0 = QP number: a QP on an SRQ is in ERR and has completed its
	 * last WQE; it takes no more from the SRQ (IBTA: Last WQE Reached)
	 */
	DRAY_EQE_QP_LAST_WQE	= 10,
	/* data0 = SRQ number: bad producer index; the SRQ gives no more WQEs */
	DRAY_EQE_SRQ_ERR	= 11,
	/*
	 * data0 = EQ number, data1 = events dropped: the EQ was full; the
	 * first entry written once it has room again
	 */
	DRAY_EQE_EQ_OVERRUN	= 12,
};

#define DRAY_EQE_PHASE		0x01

struct dray_eqe {
	__u8	type;		/* enum dray_eqe_type */
	__u8	reserved[2];
	__u8	flags;		/* DRAY_EQE_PHASE */
	__le32	data0;
	__le64	data1;
};

static_assert(sizeof(struct dray_eqe) == DRAY_EQE_SIZE, "dray_eqe size");

#endif /* DRAY_EQ_H */
