/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray vendor error codes: the device's detail for an error, besides the
 * IBTA status. They appear in dray_cqe.vendor_err (and so in
 * ibv_wc.vendor_err) and in data1 of a DRAY_EQE_QP_FATAL event.
 *
 * Ranges: 0x01..0x3f the RC transport (requester, completer, responder),
 * 0x40..0x7f the UD service, 0x80..0xff the queue engine (doorbells, WQE
 * fetch and validation, CQ writes). Documentation/hw-interface.md says
 * which condition yields which code.
 */
#ifndef DRAY_VERR_H
#define DRAY_VERR_H

enum dray_vendor_err {
	DRAY_VERR_NONE			= 0x00,

	/* RC transport */
	DRAY_VERR_NAK_INV_REQ		= 0x01,	/* peer NAK'd: invalid request */
	DRAY_VERR_NAK_REM_ACCESS	= 0x02,	/* peer NAK'd: remote access */
	DRAY_VERR_NAK_REM_OP		= 0x03,	/* peer NAK'd: operational */
	DRAY_VERR_RETRY_EXC		= 0x04,	/* local ACK timeouts */
	DRAY_VERR_RNR_EXC		= 0x05,	/* RNR NAKs */
	DRAY_VERR_BAD_WQE		= 0x06,	/* fetch or validation failed */
	DRAY_VERR_LOCAL_SGE		= 0x07,	/* a local SGE was refused */
	DRAY_VERR_WQE_CHANGED		= 0x08,	/* WQE rewritten while posted */
	DRAY_VERR_RESP_INV_REQ		= 0x09,	/* responder: invalid request */
	DRAY_VERR_RESP_ACCESS		= 0x0a,	/* responder: access violation */
	DRAY_VERR_RESP_LOCAL		= 0x0b,	/* responder: RQ WQE fault */
	DRAY_VERR_RESP_LENGTH		= 0x0c,	/* responder: message too long */
	DRAY_VERR_RESP_INVALIDATE	= 0x0d,	/* responder: rkey not invalidable */

	/* UD service */
	DRAY_VERR_UD_AH			= 0x40,	/* AH unknown or of another PD */
	DRAY_VERR_UD_QPN		= 0x41,	/* remote_qpn wider than 24 bits */
	DRAY_VERR_UD_MTU		= 0x42,	/* payload longer than the MTU */
	DRAY_VERR_UD_RECV_LEN		= 0x43,	/* GRH + payload > receive WQE */
	DRAY_VERR_UD_RECV_WQE		= 0x44,	/* malformed receive WQE */
	DRAY_VERR_UD_RECV_SGE		= 0x45,	/* a receive SGE was refused */

	/* queue engine */
	DRAY_VERR_SQ_DOORBELL		= 0x80,	/* SQ producer index invalid */
	DRAY_VERR_RQ_DOORBELL		= 0x81,	/* RQ producer index invalid */
	DRAY_VERR_CQ_ERROR		= 0x82,	/* CQ overflow, CQE lost */
	DRAY_VERR_WQE_OPCODE		= 0x83,	/* opcode invalid for QP */
	DRAY_VERR_WQE_FLAGS		= 0x84,	/* unknown WQE flag */
	DRAY_VERR_WQE_SGE_COUNT		= 0x85,	/* num_sge over max/stride */
	DRAY_VERR_WQE_INLINE		= 0x86,	/* inline misused/too long */
	DRAY_VERR_WQE_LENGTH		= 0x87,	/* message over max size */
	DRAY_VERR_LKEY			= 0x88,	/* lkey unknown */
	DRAY_VERR_LKEY_PD		= 0x89,	/* lkey of another PD */
	DRAY_VERR_LKEY_ACCESS		= 0x8a,	/* MR lacks LOCAL_WRITE */
	DRAY_VERR_LKEY_RANGE		= 0x8b,	/* SGE outside its MR */
	DRAY_VERR_ATOMIC_SGE		= 0x8c,	/* atomic needs one 8 B SGE */
	DRAY_VERR_WQE_INDEX		= 0x8d,	/* transport: bad WQE index */
	DRAY_VERR_LKEY_STATE		= 0x8e,	/* lkey of an MR not VALID */
	DRAY_VERR_FR_KEY		= 0x8f,	/* no FAST_REG MR of the PD */
	DRAY_VERR_FR_VALID		= 0x90,	/* REG_MR of a VALID MR */
	DRAY_VERR_FR_PARAMS		= 0x91,	/* page list, range, access */
	DRAY_VERR_FR_PRIV		= 0x92,	/* REG_MR on a QP not PRIV */
	DRAY_VERR_INV_KEY		= 0x93,	/* LOCAL_INV key variant wrong */
	DRAY_VERR_MW_KEY		= 0x94,	/* no window of the PD there */
	DRAY_VERR_MW_STATE		= 0x95,	/* type 2 bound; type 1 inval. */
	DRAY_VERR_MW_MR			= 0x96,	/* MR unusable, range outside */
	DRAY_VERR_MW_ACCESS		= 0x97,	/* window rights not allowed */
	DRAY_VERR_MW_ZERO_BASED		= 0x98,	/* zero-based type 1 window */
	DRAY_VERR_SRQ_DOORBELL		= 0x99,	/* SRQ producer index invalid */

	/*
	 * Never written by the device: the provider's flush of a WQE still
	 * outstanding when the device let go of its context (removal).
	 */
	DRAY_VERR_DEVICE_GONE		= 0xff,
};

#endif /* DRAY_VERR_H */
