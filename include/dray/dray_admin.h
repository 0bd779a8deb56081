/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray admin queue: command and completion formats.
 *
 * The admin queue is a pair of rings in host memory: a submission ring of
 * 64-byte entries written by the driver and a completion ring of 16-byte
 * entries written by the device. Both have 2^log_depth entries (register
 * DRAY_REG_AQ_CFG). All multi-byte fields are little endian. Reserved fields
 * must be zero: the device rejects a command with a non-zero reserved field
 * (status DRAY_AQ_STS_BAD_PARAM, syndrome DRAY_AQ_SYN_RESERVED).
 *
 * Ownership: the driver writes an entry, then writes the producer index to
 * DRAY_REG_AQ_SQ_PI; the entry belongs to the device until its completion
 * appears. A completion is valid when its phase bit equals the pass the
 * driver expects: 1 on the first pass through the ring, toggling on every
 * wrap. The device writes the whole completion before the byte holding the
 * phase bit, so the driver must read the phase bit first and issue a read
 * barrier before reading the rest.
 */
#ifndef DRAY_ADMIN_H
#define DRAY_ADMIN_H

#include <linux/types.h>

#include "dray_common.h"

#define DRAY_AQ_ENTRY_SIZE	64
#define DRAY_AQ_PAYLOAD_SIZE	56
#define DRAY_AQ_CQE_SIZE	16

enum dray_aq_opcode {
	DRAY_CMD_QUERY_DEVICE	= 0x01,
	DRAY_CMD_QUERY_PORT	= 0x02,
	DRAY_CMD_SET_GID	= 0x03,
	DRAY_CMD_DEL_GID	= 0x04,
	DRAY_CMD_CREATE_EQ	= 0x05,
	DRAY_CMD_DESTROY_EQ	= 0x06,
	DRAY_CMD_CREATE_UAR	= 0x07,
	DRAY_CMD_DESTROY_UAR	= 0x08,
	DRAY_CMD_CREATE_PD	= 0x10,
	DRAY_CMD_DESTROY_PD	= 0x11,
	DRAY_CMD_CREATE_MR	= 0x12,
	DRAY_CMD_DESTROY_MR	= 0x13,
	DRAY_CMD_CREATE_CQ	= 0x14,
	DRAY_CMD_DESTROY_CQ	= 0x15,
	DRAY_CMD_CREATE_QP	= 0x16,
	DRAY_CMD_MODIFY_QP	= 0x17,
	DRAY_CMD_QUERY_QP	= 0x18,
	DRAY_CMD_DESTROY_QP	= 0x19,
	DRAY_CMD_CREATE_AH	= 0x1a,
	DRAY_CMD_DESTROY_AH	= 0x1b,
	DRAY_CMD_CREATE_MW	= 0x1c,
	DRAY_CMD_DESTROY_MW	= 0x1d,
	DRAY_CMD_MODIFY_MR	= 0x1e,
	DRAY_CMD_CREATE_SRQ	= 0x1f,
	DRAY_CMD_MODIFY_SRQ	= 0x20,
	DRAY_CMD_QUERY_SRQ	= 0x21,
	DRAY_CMD_DESTROY_SRQ	= 0x22,
	DRAY_CMD_ALLOC_COUNTER_SET = 0x23,
	DRAY_CMD_FREE_COUNTER_SET = 0x24,
	DRAY_CMD_BIND_COUNTER_SET = 0x25,
	DRAY_CMD_QUERY_COUNTERS	= 0x26,
	DRAY_CMD_QUERY_STATE	= 0x27,
	DRAY_CMD_RESIZE_CQ	= 0x28,
	DRAY_CMD_ATTACH_MCAST	= 0x29,
	DRAY_CMD_DETACH_MCAST	= 0x2a,
	DRAY_CMD_CREATE_XRCD	= 0x2b,
	DRAY_CMD_DESTROY_XRCD	= 0x2c,
	DRAY_CMD_MAX_OPCODE,
};

/* Completion status (dray_aq_cqe.status). */
enum dray_aq_status {
	DRAY_AQ_STS_OK			= 0,
	DRAY_AQ_STS_BAD_OPCODE		= 1,	/* unknown opcode */
	DRAY_AQ_STS_BAD_PARAM		= 2,	/* syndrome names the field */
	DRAY_AQ_STS_NO_RESOURCES	= 3,	/* a device limit is reached */
	DRAY_AQ_STS_NOT_FOUND		= 4,	/* the object does not exist */
	DRAY_AQ_STS_BUSY		= 5,	/* the object is still in use */
	DRAY_AQ_STS_DMA_ERROR		= 6,	/* a bus address is unusable */
	DRAY_AQ_STS_NO_MEMORY		= 7,	/* the device's memory ran out */
};

/* Which field a BAD_PARAM, NOT_FOUND or DMA_ERROR status is about. */
enum dray_aq_syndrome {
	DRAY_AQ_SYN_NONE	= 0,
	DRAY_AQ_SYN_RESERVED	= 1,	/* a reserved field is not zero */
	DRAY_AQ_SYN_OUT_ADDR	= 2,
	DRAY_AQ_SYN_OUT_LEN	= 3,
	DRAY_AQ_SYN_PORT	= 4,
	DRAY_AQ_SYN_GID_INDEX	= 5,
	DRAY_AQ_SYN_GID_TYPE	= 6,
	DRAY_AQ_SYN_RING_ADDR	= 7,
	DRAY_AQ_SYN_LOG_DEPTH	= 8,
	DRAY_AQ_SYN_VECTOR	= 9,
	DRAY_AQ_SYN_EQN		= 10,
	DRAY_AQ_SYN_PAGE_ADDR	= 11,
	DRAY_AQ_SYN_UAR_INDEX	= 12,
	DRAY_AQ_SYN_PDN		= 13,
	DRAY_AQ_SYN_MR_KEY	= 14,
	DRAY_AQ_SYN_ACCESS	= 15,
	DRAY_AQ_SYN_LENGTH	= 16,
	DRAY_AQ_SYN_IOVA	= 17,
	DRAY_AQ_SYN_MTT		= 18,	/* MTT address or page entry */
	DRAY_AQ_SYN_PAGE_COUNT	= 19,
	DRAY_AQ_SYN_CQN		= 20,
	DRAY_AQ_SYN_QPN		= 21,
	DRAY_AQ_SYN_QP_TYPE	= 22,
	DRAY_AQ_SYN_QP_STATE	= 23,	/* transition not allowed */
	DRAY_AQ_SYN_QP_ATTR	= 24,	/* attribute missing or invalid */
	DRAY_AQ_SYN_LOG_STRIDE	= 25,
	DRAY_AQ_SYN_AHN		= 26,
	DRAY_AQ_SYN_IN_ADDR	= 27,
	DRAY_AQ_SYN_IN_LEN	= 28,
	DRAY_AQ_SYN_SGID_INDEX	= 29,
	DRAY_AQ_SYN_FLAGS	= 30,
	DRAY_AQ_SYN_SRQN	= 31,
	DRAY_AQ_SYN_SRQ_LIMIT	= 32,
	DRAY_AQ_SYN_COUNTER_SET	= 33,
	DRAY_AQ_SYN_SCOPE	= 34,	/* QUERY_COUNTERS scope, QUERY_STATE kind */
	DRAY_AQ_SYN_CONSUMER	= 35,	/* a doorbell record's consumer index */
	DRAY_AQ_SYN_MGID	= 36,	/* not a multicast GID, or not attached */
	DRAY_AQ_SYN_XRCDN	= 37,
	DRAY_AQ_SYN_MAX,
};

struct dray_aq_hdr {
	__u8	opcode;		/* enum dray_aq_opcode */
	__u8	flags;		/* reserved */
	__le16	cmd_id;		/* echoed in the completion */
	__le32	reserved;
};

/*
 * QUERY_DEVICE and QUERY_PORT: the device writes its output structure to
 * out_addr, at most out_len bytes; result = bytes written.
 */
struct dray_cmd_query {
	__le64	out_addr;
	__le32	out_len;
	__u8	port;		/* QUERY_PORT: 1; QUERY_DEVICE: 0 */
	__u8	reserved[3];
};

/* SET_GID: install a GID; the port then accepts RoCEv2 frames for it. */
enum dray_gid_type {
	DRAY_GID_TYPE_ROCE_V2	= 1,	/* the only type dray speaks */
};

struct dray_cmd_set_gid {
	__le32	index;		/* < gid_tbl_len */
	__u8	type;		/* enum dray_gid_type */
	__u8	reserved[3];
	__u8	gid[16];	/* network order; IPv4 as ::ffff:a.b.c.d */
};

/* DEL_GID: remove a GID installed by SET_GID. */
struct dray_cmd_del_gid {
	__le32	index;
	__le32	reserved;
};

/*
 * CREATE_EQ: an event queue of 2^log_depth 16-byte entries at ring_addr
 * (zeroed by the driver, 64-byte aligned, physically contiguous).
 * result = EQ number. EQ 0 is the first one created and receives the
 * asynchronous (port) events.
 */
struct dray_cmd_create_eq {
	__le64	ring_addr;
	__u8	log_depth;	/* DRAY_EQ_LOG_DEPTH_MIN..MAX */
	__u8	vector;		/* < DRAY_REG_NUM_VECTORS */
	__u8	reserved[6];
};

struct dray_cmd_destroy_eq {
	__le32	eqn;
	__le32	reserved;
};

/*
 * CREATE_UAR: give the device one 4 KiB page of host memory to use as a
 * user access region (doorbell page, see dray_uar.h). The device
 * initializes the page's device area and polls the page while the UAR
 * exists. result = UAR index. The driver must not free the page before
 * DESTROY_UAR completes.
 */
struct dray_cmd_create_uar {
	__le64	page_addr;	/* 4 KiB aligned */
};

struct dray_cmd_destroy_uar {
	__le32	uar_index;
	__le32	reserved;
};

/* CREATE_PD: result = PD number. */
struct dray_cmd_destroy_pd {
	__le32	pdn;
	__le32	reserved;
};

/*
 * MR flags. PHYSICAL: no MTT; an address in the MR is a bus address
 * (kernel DMA MR: iova 0, length, mtt_addr and n_pages 0; the MR covers
 * all host memory, every page is checked to be RAM when it is used). The
 * PD and access checks apply as for any MR; remote rights make every
 * page reachable from the wire (a kernel "unsafe global rkey"). Only the
 * kernel driver issues admin commands: no user ABI reaches this flag.
 */
#define DRAY_MR_F_PHYSICAL		0x1
/*
 * FAST_REG: an MR for fast registration (IBTA's memory management
 * extensions). iova, length, mtt_addr and access are 0; n_pages is the
 * length of the page lists it can take (1..max_fr_pages). It is created
 * FREE: no access goes through it until a REG_MR work request of a QP on
 * its PD makes it VALID (dray_queue.h), and LOCAL_INV or a received SEND
 * with invalidate makes it FREE again. Its pages are any RAM the kernel
 * names, so the device never takes page references on them (no zero
 * copy). Only the kernel driver issues admin commands: no user ABI
 * reaches this flag.
 */
#define DRAY_MR_F_FAST_REG		0x2

/*
 * CREATE_MR: register [iova, iova + length). MTT entry 0 maps the page
 * holding iova; the byte at iova is at offset (iova % 4096) of that page.
 * result = key: lkey and rkey are the same value.
 */
struct dray_cmd_create_mr {
	__le32	pdn;
	__u8	access;		/* DRAY_ACCESS_* */
	__u8	flags;		/* DRAY_MR_F_* */
	__le16	reserved;
	__le64	iova;
	__le64	length;
	__le64	mtt_addr;	/* first MTT page */
	__le32	n_pages;	/* data pages covering the range */
	__le32	reserved2;
};

struct dray_cmd_destroy_mr {
	__le32	key;
	__le32	reserved;
};

/*
 * MODIFY_MR: change an ordinary MR (no DRAY_MR_F_* flags) in place, its key
 * kept (ibv_rereg_mr): with DRAY_MODIFY_MR_PD its PD (pdn), _ACCESS its
 * rights (access), _TRANS its range and pages (iova, length, mtt_addr,
 * n_pages as for CREATE_MR). The fields of what does not change are
 * ignored. An MR with windows bound cannot be modified (BUSY). The change
 * is atomic: once the command completed, no access of the device uses the
 * old PD, rights or pages.
 */
#define DRAY_MODIFY_MR_PD	0x1
#define DRAY_MODIFY_MR_ACCESS	0x2
#define DRAY_MODIFY_MR_TRANS	0x4

struct dray_cmd_modify_mr {
	__le32	key;
	__le32	pdn;
	__u8	access;		/* DRAY_ACCESS_* */
	__u8	what;		/* DRAY_MODIFY_MR_* */
	__le16	reserved;
	__le32	reserved1;
	__le64	iova;
	__le64	length;
	__le64	mtt_addr;
	__le32	n_pages;
	__le32	reserved2;
};

/*
 * CREATE_MW: a memory window of PD pdn, created unbound (FREE): no access
 * goes through its key until a BIND_MW work request binds it to an MR
 * (dray_queue.h). Its key shares the MR table's index space. result =
 * key. DESTROY_MW unbinds it (if bound) and destroys it.
 */
struct dray_cmd_create_mw {
	__le32	pdn;
	__u8	type;		/* enum dray_mw_type */
	__u8	reserved[3];
};

struct dray_cmd_destroy_mw {
	__le32	key;
	__le32	reserved;
};

/*
 * CREATE_CQ: a completion queue in a buffer of n_pages pages (the buffer
 * starts page aligned: doorbell record, then 2^log_depth CQEs). The device
 * raises completion events on EQ eqn. result = CQ number.
 */
struct dray_cmd_create_cq {
	__le64	mtt_addr;
	__le32	n_pages;
	__le32	eqn;
	__u8	log_depth;
	__u8	reserved[7];
};

struct dray_cmd_destroy_cq {
	__le32	cqn;
	__le32	reserved;
};

/*
 * RESIZE_CQ: CQ cqn continues in a new buffer of n_pages pages (doorbell
 * record, then 2^log_depth CQEs). At once, with no CQE lost, the device
 * stops writing the old ring and writes the new one. The CQEs software
 * has not consumed yet (between the consumer index in the old doorbell
 * record and the producer index) stay in the old ring; result = their
 * number n, and the device starts the new ring at index n, so that
 * software copies them into slots 0..n-1 of the new ring (with the new
 * ring's phase) and consumes the new ring from 0. The arm request state
 * carries over: software copies arm_seq and arm_flags into the new
 * doorbell record first. BAD_PARAM with syndrome LOG_DEPTH if the new
 * ring cannot hold n + 1 CQEs or log_depth is too large, PAGE_COUNT if
 * the buffer is too small, CONSUMER if the old record's consumer index is
 * not within the ring (then nothing changes).
 */
/*
 * ATTACH_MCAST, DETACH_MCAST: UD QP qpn joins or leaves the multicast
 * group gid (a RoCEv2 multicast GID: IPv6 ff00::/8, or IPv4-mapped
 * 224.0.0.0/4). The device then takes UD frames sent to that address with
 * BTH destination QP 0xffffff for every QP attached (§8).
 */
struct dray_cmd_mcast {
	__le32	qpn;
	__le32	reserved;
	__u8	gid[16];
};

struct dray_cmd_resize_cq {
	__le64	mtt_addr;
	__le32	n_pages;
	__le32	cqn;
	__u8	log_depth;
	__u8	reserved[7];
};

/*
 * CREATE_SRQ: a shared receive queue of PD pdn in a buffer of n_pages
 * pages (doorbell record, then 2^log_depth WQEs of 2^log_stride bytes,
 * dray_queue.h). result = SRQ number. The SRQ starts unarmed.
 *
 * With DRAY_SRQ_F_XRC it is an XRC SRQ of XRC domain xrcdn: no QP is
 * created on it; XRC target QPs of that domain place the requests that
 * name it (their XRCETH) through it, checking memory keys against its PD,
 * and its completions go to CQ cqn. Without the flag xrcdn and cqn are 0.
 */
#define DRAY_SRQ_F_XRC		0x1

struct dray_cmd_create_srq {
	__le64	mtt_addr;
	__le32	n_pages;
	__le32	pdn;
	__u8	log_depth;	/* 0..log2(max_srq_wr) */
	__u8	log_stride;	/* 4..9 */
	__u8	flags;		/* DRAY_SRQ_F_* */
	__u8	reserved[5];
	__le32	xrcdn;		/* DRAY_SRQ_F_XRC: the XRC domain */
	__le32	cqn;		/* DRAY_SRQ_F_XRC: where it completes */
};

/*
 * CREATE_XRCD: an XRC domain (IBTA annex A14), the scope in which XRC
 * target QPs and XRC SRQs find each other. No payload; result = XRCD
 * number (1..max_xrcd). DESTROY_XRCD: BUSY while an XRC SRQ or an XRC
 * target QP belongs to it.
 */
struct dray_cmd_xrcd {
	__le32	xrcdn;
	__le32	reserved;
};

/*
 * MODIFY_SRQ: arm the limit (IBTA SRQ limit): once the number of WQEs
 * posted and not taken drops below limit after the device took one, it
 * raises DRAY_EQE_SRQ_LIMIT on EQ 0 and disarms. limit 0 disarms; it
 * must be below the depth (BAD_PARAM, syndrome SRQ_LIMIT).
 */
struct dray_cmd_modify_srq {
	__le32	srqn;
	__le32	limit;
};

/*
 * QUERY_SRQ: result bits [31:0] the armed limit (0: unarmed), bit 32
 * set if the SRQ is in error. DESTROY_SRQ: BUSY while a QP uses it; WQEs
 * still posted are no QP's and complete nowhere.
 */
struct dray_cmd_srq {
	__le32	srqn;
	__le32	reserved;
};

#define DRAY_SRQ_QUERY_LIMIT_MASK	DRAY_GENMASK_ULL(31, 0)
#define DRAY_SRQ_QUERY_ERROR		DRAY_GENMASK_ULL(32, 32)

/*
 * Commands with a larger input or output than fits the entry use a
 * mailbox: a host buffer at in_addr (or out_addr) of in_len bytes.
 */
struct dray_cmd_qp {
	__le32	qpn;		/* CREATE_QP: 0 */
	__le32	len;		/* mailbox bytes */
	__le64	addr;		/* mailbox bus address */
};

/* dray_qp_create.flags */
#define DRAY_QP_F_SQ_SIG_ALL	0x1	/* every send WQE is signaled */
/*
 * PRIV: the QP may post REG_MR, whose page list names host memory by bus
 * address. Only the kernel driver sets it, for kernel consumers' QPs.
 */
#define DRAY_QP_F_PRIV		0x2
/*
 * SRQ: receive WQEs come from SRQ srqn (of any PD; its own PD checks
 * them); the QP has no RQ: rq_log_depth, rq_log_stride, rq_mtt and
 * rq_n_pages must be 0. Without the flag srqn must be 0.
 */
#define DRAY_QP_F_SRQ		0x4

/*
 * CREATE_QP mailbox. result = QP number.
 *
 * XRC_INI: pdn, send_cqn, the SQ and uar_index as for RC; no receive side
 * (recv_cqn, the rq_* fields, srqn and xrcdn 0, no DRAY_QP_F_SRQ).
 * XRC_TGT: xrcdn and uar_index only; it has no PD, CQ or queue of its own
 * (pdn, both CQs, every sq_* and rq_* field and srqn 0, flags 0).
 * Other types: xrcdn 0.
 */
struct dray_qp_create {
	__u8	type;		/* enum dray_qp_type */
	__u8	sq_log_depth;
	__u8	sq_log_stride;	/* >= 6: 64-byte header + SGEs/inline */
	__u8	rq_log_depth;
	__u8	rq_log_stride;	/* >= 4: 16-byte header + SGEs */
	__u8	flags;		/* DRAY_QP_F_* */
	__le16	reserved;
	__le32	pdn;
	__le32	send_cqn;
	__le32	recv_cqn;
	__le32	uar_index;	/* the UAR whose NEED_WAKEUP flag applies */
	__le64	sq_mtt;
	__le32	sq_n_pages;
	__le32	rq_n_pages;
	__le64	rq_mtt;
	__le32	srqn;		/* DRAY_QP_F_SRQ */
	__le32	xrcdn;		/* XRC_TGT: its XRC domain */
	__u8	reserved2[8];
};

/*
 * MODIFY_QP / QUERY_QP attr_mask bits; IBTA (ib_qp_attr_mask) order.
 * PKEY_INDEX and PORT have no field: the device has one port (1) and one
 * P_Key (index 0); the bits take part in the state machine's required and
 * optional attribute rules only. Unlisted bits are refused (QP_ATTR).
 */
#define DRAY_QP_ATTR_STATE		0x00000001U
/* MODIFY_QP only: the transition applies only if cur_state is the state. */
#define DRAY_QP_ATTR_CUR_STATE		0x00000002U
/* Accepted on RTS->SQD; the device always raises DRAY_EQE_SQ_DRAINED. */
#define DRAY_QP_ATTR_EN_SQD_ASYNC_NOTIFY 0x00000004U
#define DRAY_QP_ATTR_ACCESS_FLAGS	0x00000008U
#define DRAY_QP_ATTR_PKEY_INDEX		0x00000010U
#define DRAY_QP_ATTR_PORT		0x00000020U
#define DRAY_QP_ATTR_QKEY		0x00000040U
#define DRAY_QP_ATTR_AV			0x00000080U
#define DRAY_QP_ATTR_PATH_MTU		0x00000100U
#define DRAY_QP_ATTR_TIMEOUT		0x00000200U
#define DRAY_QP_ATTR_RETRY_CNT		0x00000400U
#define DRAY_QP_ATTR_RNR_RETRY		0x00000800U
#define DRAY_QP_ATTR_RQ_PSN		0x00001000U
#define DRAY_QP_ATTR_MAX_QP_RD_ATOMIC	0x00002000U
#define DRAY_QP_ATTR_MIN_RNR_TIMER	0x00008000U
#define DRAY_QP_ATTR_SQ_PSN		0x00010000U
#define DRAY_QP_ATTR_MAX_DEST_RD_ATOMIC	0x00020000U
#define DRAY_QP_ATTR_DEST_QPN		0x00100000U

/* MODIFY_QP mailbox (fields not in attr_mask are ignored); QUERY_QP output. */
struct dray_qp_attr {
	__le32	attr_mask;
	__u8	state;		/* enum dray_qp_state */
	__u8	cur_state;	/* QUERY_QP; MODIFY_QP with ATTR_CUR_STATE */
	__u8	path_mtu;	/* enum dray_mtu */
	__u8	timeout;	/* local ACK timeout 4.096 us * 2^timeout; 0 = none */
	__u8	retry_cnt;	/* 0..7 */
	__u8	rnr_retry;	/* 0..7, 7 = infinite */
	__u8	min_rnr_timer;	/* IBTA RNR timer encoding, 0..31 */
	__u8	max_rd_atomic;	/* initiator depth */
	__u8	max_dest_rd_atomic; /* responder resources */
	__u8	access;		/* DRAY_ACCESS_REMOTE_* allowed on this QP */
	__u8	sq_draining;	/* QUERY_QP only */
	__u8	reserved0;
	__le32	dest_qpn;
	__le32	rq_psn;
	__le32	sq_psn;
	__le32	qkey;
	struct dray_path path;
	__u8	reserved[60];
};

/*
 * Counter sets. Every QP counts its traffic and its errors in counters of
 * its own (from CREATE_QP on; MODIFY_QP to RESET does not clear them) and
 * in one counter set: set 0, the port's default set, until
 * BIND_COUNTER_SET moves it to another. A set counts what its QPs did
 * while they were in it, also after they left it or were destroyed; set
 * 0 also counts what the port received for no QP. Sets are numbered
 * 0..max_counter_sets - 1 (dray_device_caps).
 *
 * ALLOC_COUNTER_SET: result = the number of a free set (1..), all its
 * counters zero. No payload. NO_RESOURCES when all are in use.
 * FREE_COUNTER_SET: BUSY while a QP is in it; set 0 cannot be freed
 * (BAD_PARAM, COUNTER_SET).
 */
struct dray_cmd_counter_set {
	__le32	set;
	__le32	reserved;
};

/* BIND_COUNTER_SET: QP qpn counts in set (0: the default set) from now on. */
struct dray_cmd_bind_counter_set {
	__le32	qpn;
	__le32	set;
};

/* QUERY_COUNTERS scopes. */
enum dray_counter_scope {
	DRAY_COUNTERS_SET	= 0,	/* id: a counter set */
	DRAY_COUNTERS_QP	= 1,	/* id: a QP number */
};

/*
 * QUERY_COUNTERS and QUERY_STATE: the device writes the output of object
 * id (of the kind named) to out_addr, at most out_len bytes (a shorter
 * buffer gets the start); result = bytes written. out_addr and out_len
 * sit where they sit in struct dray_cmd_query.
 *
 * QUERY_COUNTERS: struct dray_counters of a counter set or a QP (kind:
 * enum dray_counter_scope).
 */
struct dray_cmd_query_id {
	__le64	out_addr;
	__le32	out_len;
	__u8	kind;		/* enum dray_counter_scope, enum dray_state_kind */
	__u8	reserved[3];
	__le32	id;
	__le32	reserved2;
};

/*
 * The counters (QUERY_COUNTERS output: one le64 each, in this order).
 * Bytes are payload bytes (no headers, pad or ICRC). A QP's counters
 * have RX_MALFORMED and RX_NO_QP zero: those frames reach no QP.
 */
enum dray_counter {
	DRAY_CNT_TX_PKTS,		/* RoCEv2 packets sent */
	DRAY_CNT_TX_BYTES,
	DRAY_CNT_RX_PKTS,		/* packets accepted by a QP */
	DRAY_CNT_RX_BYTES,
	DRAY_CNT_TX_DROPS,		/* not sent: no memory, port down */
	DRAY_CNT_RX_DROPS,		/* wrong state or source, bad header */
	DRAY_CNT_RX_ICRC_ERRORS,
	DRAY_CNT_RX_MALFORMED,		/* not a valid RoCEv2 frame */
	DRAY_CNT_RX_NO_QP,		/* for a QP that does not exist */
	DRAY_CNT_PKEY_VIOLATIONS,	/* P_Key not the port's */
	DRAY_CNT_QKEY_VIOLATIONS,	/* UD: Q_Key not the QP's */
	DRAY_CNT_RX_NO_WQE,		/* UD: dropped, no receive WQE */
	DRAY_CNT_LOCAL_ACK_TIMEOUTS,	/* retransmit timer expired */
	DRAY_CNT_LATE_TIMERS,		/* timer ran late: no retry used */
	DRAY_CNT_RETX_PKTS,		/* request packets sent again */
	DRAY_CNT_OUT_OF_SEQUENCE,	/* requests ahead of the ePSN */
	DRAY_CNT_DUP_REQUESTS,		/* requests behind the ePSN */
	DRAY_CNT_BAD_RESPONSES,		/* unexpected ACKs and responses */
	DRAY_CNT_SEQ_NAKS_TX,		/* NAK PSN sequence error */
	DRAY_CNT_SEQ_NAKS_RX,
	DRAY_CNT_RNR_NAKS_TX,
	DRAY_CNT_RNR_NAKS_RX,
	DRAY_CNT_INV_REQ_NAKS_TX,	/* NAK invalid request */
	DRAY_CNT_INV_REQ_NAKS_RX,
	DRAY_CNT_ACCESS_NAKS_TX,	/* NAK remote access error */
	DRAY_CNT_ACCESS_NAKS_RX,
	DRAY_CNT_OP_NAKS_TX,		/* NAK remote operational error */
	DRAY_CNT_OP_NAKS_RX,
	DRAY_CNT_REQ_CQE_ERRORS,	/* send CQEs with an error */
	DRAY_CNT_RESP_CQE_ERRORS,	/* receive CQEs with an error */
	DRAY_CNT_REQ_CQE_FLUSHES,	/* send CQEs flushed */
	DRAY_CNT_RESP_CQE_FLUSHES,	/* receive CQEs flushed */
	DRAY_CNT_TAIL_PROBES,		/* went back early, no retry used */
	DRAY_CNT_MAX,
};

struct dray_counters {
	__le64	v[DRAY_CNT_MAX];	/* enum dray_counter */
};

/*
 * QUERY_STATE: the device's own state of one object, for diagnostics
 * (`rdma resource show`): struct dray_obj_state. The values are read at
 * one instant; they mean what they say only while nothing changes.
 */
enum dray_state_kind {
	DRAY_STATE_QP	= 1,	/* id: QP number */
	DRAY_STATE_CQ	= 2,	/* id: CQ number */
	DRAY_STATE_MR	= 3,	/* id: key (its MR table index is used) */
};

/* dray_qp_state_out.flags */
#define DRAY_QPST_F_ERR		0x01	/* transport stopped (ERR) */
#define DRAY_QPST_F_RNR_WAIT	0x02	/* waiting after an RNR NAK */
#define DRAY_QPST_F_SQ_DRAINING	0x04
#define DRAY_QPST_F_IN_MSG	0x08	/* responder: inside a message */
#define DRAY_QPST_F_NAK_SENT	0x10	/* responder: quiet until ePSN */

struct dray_qp_state_out {
	__u8	state;		/* enum dray_qp_state */
	__u8	type;		/* enum dray_qp_type */
	__u8	flags;		/* DRAY_QPST_F_* */
	__u8	retry_left;	/* transport retries left */
	__u8	rnr_retry_left;	/* 7: infinite */
	__u8	rd_atomic;	/* initiator depth in use (READs, atomics) */
	__u8	reserved[2];
	__le32	sq_posted;	/* free-running WQE indexes */
	__le32	sq_fetched;
	__le32	sq_completed;
	__le32	rq_posted;
	__le32	rq_fetched;
	__le32	rq_completed;
	__le32	next_psn;	/* requester: next PSN to send */
	__le32	una_psn;	/* oldest PSN not acknowledged */
	__le32	max_psn;	/* first PSN never sent */
	__le32	epsn;		/* responder: expected PSN */
	__le32	msn;
	__le32	counter_set;
	__le32	cwnd;		/* requester window, packets */
	__le32	ssthresh;	/* window growth: per PSN below, per window above */
};

struct dray_cq_state_out {
	__le32	depth;
	__le32	pi;		/* CQEs written, free running */
	__le32	ci;		/* last consumer index read */
	__le32	eqn;
	__u8	armed;		/* an arm request not yet fired */
	__u8	error;		/* overflowed: CQEs dropped */
	__u8	reserved[2];
	__le32	users;		/* QPs on it */
};

/* dray_mr_state_out.state */
enum dray_mr_state {
	DRAY_MR_STATE_FREE	= 0,	/* no access goes through it */
	DRAY_MR_STATE_VALID	= 1,
};

struct dray_mr_state_out {
	__le32	key;		/* the key in the table now */
	__le32	pdn;
	__u8	state;		/* enum dray_mr_state */
	__u8	access;		/* DRAY_ACCESS_* */
	__u8	flags;		/* DRAY_MR_F_* */
	__u8	mw_type;	/* 0: an MR; else a window's enum dray_mw_type */
	__le32	n_pages;	/* pages mapped */
	__le64	iova;
	__le64	length;
	__le32	windows;	/* windows bound to it */
	__le32	reserved;
};

struct dray_obj_state {
	union {
		struct dray_qp_state_out	qp;
		struct dray_cq_state_out	cq;
		struct dray_mr_state_out	mr;
		__u8				raw[64];
	};
};

/* CREATE_AH: result = AH number. */
struct dray_cmd_create_ah {
	__le32	pdn;
	__le32	reserved;
	__le64	addr;		/* mailbox: struct dray_path */
	__le32	len;
	__le32	reserved2;
};

struct dray_cmd_destroy_ah {
	__le32	ahn;
	__le32	reserved;
};

struct dray_aq_entry {
	struct dray_aq_hdr hdr;
	union {
		struct dray_cmd_query		query;
		struct dray_cmd_set_gid		set_gid;
		struct dray_cmd_del_gid		del_gid;
		struct dray_cmd_create_eq	create_eq;
		struct dray_cmd_destroy_eq	destroy_eq;
		struct dray_cmd_create_uar	create_uar;
		struct dray_cmd_destroy_uar	destroy_uar;
		struct dray_cmd_destroy_pd	destroy_pd;
		struct dray_cmd_create_mr	create_mr;
		struct dray_cmd_destroy_mr	destroy_mr;
		struct dray_cmd_create_cq	create_cq;
		struct dray_cmd_destroy_cq	destroy_cq;
		struct dray_cmd_resize_cq	resize_cq;
		struct dray_cmd_mcast		mcast;
		struct dray_cmd_qp		qp;
		struct dray_cmd_create_ah	create_ah;
		struct dray_cmd_destroy_ah	destroy_ah;
		struct dray_cmd_create_mw	create_mw;
		struct dray_cmd_destroy_mw	destroy_mw;
		struct dray_cmd_modify_mr	modify_mr;
		struct dray_cmd_create_srq	create_srq;
		struct dray_cmd_modify_srq	modify_srq;
		struct dray_cmd_srq		srq;
		struct dray_cmd_counter_set	counter_set;
		struct dray_cmd_bind_counter_set bind_counter_set;
		struct dray_cmd_query_id	query_id;
		struct dray_cmd_xrcd		xrcd;
		__u8				raw[DRAY_AQ_PAYLOAD_SIZE];
	} u;
};

#define DRAY_AQ_CQE_PHASE	0x01

struct dray_aq_cqe {
	__le16	cmd_id;
	__u8	status;		/* enum dray_aq_status */
	__u8	flags;		/* DRAY_AQ_CQE_PHASE */
	__le32	syndrome;	/* enum dray_aq_syndrome */
	__le64	result;		/* opcode-specific */
};

/* dray_device_caps.fw_ver */
#define DRAY_FW_VER_MAJOR_MASK	DRAY_GENMASK_ULL(47, 32)
#define DRAY_FW_VER_MINOR_MASK	DRAY_GENMASK_ULL(31, 16)
#define DRAY_FW_VER_PATCH_MASK	DRAY_GENMASK_ULL(15, 0)

/* QUERY_DEVICE output. */
struct dray_device_caps {
	__le64	fw_ver;		/* DRAY_FW_VER_*_MASK */
	__u8	node_guid[8];	/* EUI-64 of the port MAC, network order */
	__le32	vendor_id;
	__le32	vendor_part_id;
	__le32	hw_ver;
	__le32	num_ports;
	__le64	max_mr_size;
	__le64	page_size_cap;
	__le32	max_uar;
	__le32	max_eq;
	__le32	max_pd;
	__le32	max_mr;
	__le32	max_qp;
	__le32	max_qp_wr;
	__le32	max_send_sge;
	__le32	max_recv_sge;
	__le32	max_sge_rd;
	__le32	max_cq;
	__le32	max_cqe;
	__le32	max_ah;
	__le32	max_qp_rd_atom;
	__le32	max_qp_init_rd_atom;
	__le32	max_inline_data;
	__le32	max_msg_size;
	__le32	gid_tbl_len;
	__le32	local_ca_ack_delay;
	__le32	max_fr_pages;	/* page list entries of a FAST_REG MR */
	__le32	max_mw;		/* memory windows */
	__le32	max_srq;
	__le32	max_srq_wr;
	__le32	max_srq_sge;
	__le32	max_counter_sets;	/* QUERY_COUNTERS sets, set 0 included */
	__le32	max_mcast_grp;		/* multicast groups */
	__le32	max_mcast_qp_attach;	/* UD QPs attached to one group */
	__le32	max_xrcd;		/* XRC domains */
	__le32	reserved;
};

/* IBTA encodings used in dray_port_attr. */
enum dray_port_state {
	DRAY_PORT_DOWN		= 1,
	DRAY_PORT_ACTIVE	= 4,
};

enum dray_port_phys_state {
	DRAY_PORT_PHYS_POLLING	= 2,	/* up, no carrier */
	DRAY_PORT_PHYS_DISABLED	= 3,	/* administratively down */
	DRAY_PORT_PHYS_LINK_UP	= 5,
};

/*
 * Bytes a RoCEv2 packet adds around its payload on the Ethernet MTU:
 * IPv6 header (40, covers IPv4's 20), UDP (8), BTH (12), the largest
 * extended header set (28 + 4), ICRC (4).
 */
#define DRAY_ROCE_OVERHEAD	96

/* QUERY_PORT output. */
struct dray_port_attr {
	__u8	state;		/* enum dray_port_state */
	__u8	phys_state;	/* enum dray_port_phys_state */
	__u8	max_mtu;	/* enum dray_mtu */
	__u8	active_mtu;	/* largest MTU <= eth_mtu - DRAY_ROCE_OVERHEAD */
	__le32	eth_mtu;	/* Ethernet MTU of the port, bytes */
	__le32	speed_mbps;	/* link speed, 0 when unknown */
	__le32	gid_tbl_len;
	__u8	mac[6];
	__u8	reserved[10];
};

/*
 * Every format has the size the hardware interface documents; the entry
 * size also proves that every command fits DRAY_AQ_PAYLOAD_SIZE.
 */
static_assert(sizeof(struct dray_aq_hdr) == 8, "dray_aq_hdr size");
static_assert(sizeof(struct dray_cmd_query) == 16, "dray_cmd_query size");
static_assert(sizeof(struct dray_cmd_set_gid) == 24, "dray_cmd_set_gid size");
static_assert(sizeof(struct dray_cmd_del_gid) == 8, "dray_cmd_del_gid size");
static_assert(sizeof(struct dray_cmd_create_eq) == 16,
	      "dray_cmd_create_eq size");
static_assert(sizeof(struct dray_cmd_destroy_eq) == 8,
	      "dray_cmd_destroy_eq size");
static_assert(sizeof(struct dray_cmd_create_uar) == 8,
	      "dray_cmd_create_uar size");
static_assert(sizeof(struct dray_cmd_destroy_uar) == 8,
	      "dray_cmd_destroy_uar size");
static_assert(sizeof(struct dray_cmd_destroy_pd) == 8,
	      "dray_cmd_destroy_pd size");
static_assert(sizeof(struct dray_cmd_create_mr) == 40,
	      "dray_cmd_create_mr size");
static_assert(sizeof(struct dray_cmd_destroy_mr) == 8,
	      "dray_cmd_destroy_mr size");
static_assert(sizeof(struct dray_cmd_create_cq) == 24,
	      "dray_cmd_create_cq size");
static_assert(sizeof(struct dray_cmd_destroy_cq) == 8,
	      "dray_cmd_destroy_cq size");
static_assert(sizeof(struct dray_cmd_resize_cq) == 24,
	      "dray_cmd_resize_cq size");
static_assert(sizeof(struct dray_cmd_mcast) == 24, "dray_cmd_mcast size");
static_assert(sizeof(struct dray_cmd_qp) == 16, "dray_cmd_qp size");
static_assert(sizeof(struct dray_cmd_create_ah) == 24,
	      "dray_cmd_create_ah size");
static_assert(sizeof(struct dray_cmd_destroy_ah) == 8,
	      "dray_cmd_destroy_ah size");
static_assert(sizeof(struct dray_cmd_create_mw) == 8,
	      "dray_cmd_create_mw size");
static_assert(sizeof(struct dray_cmd_destroy_mw) == 8,
	      "dray_cmd_destroy_mw size");
static_assert(sizeof(struct dray_cmd_modify_mr) == 48,
	      "dray_cmd_modify_mr size");
static_assert(sizeof(struct dray_cmd_create_srq) == 32,
	      "dray_cmd_create_srq size");
static_assert(sizeof(struct dray_cmd_modify_srq) == 8,
	      "dray_cmd_modify_srq size");
static_assert(sizeof(struct dray_cmd_srq) == 8, "dray_cmd_srq size");
static_assert(sizeof(struct dray_cmd_xrcd) == 8, "dray_cmd_xrcd size");
static_assert(sizeof(struct dray_cmd_counter_set) == 8,
	      "dray_cmd_counter_set size");
static_assert(sizeof(struct dray_cmd_bind_counter_set) == 8,
	      "dray_cmd_bind_counter_set size");
static_assert(sizeof(struct dray_cmd_query_id) == 24,
	      "dray_cmd_query_id size");
static_assert(sizeof(struct dray_qp_state_out) == 64, "dray_qp_state_out size");
static_assert(sizeof(struct dray_cq_state_out) == 24, "dray_cq_state_out size");
static_assert(sizeof(struct dray_mr_state_out) == 40, "dray_mr_state_out size");
static_assert(sizeof(struct dray_obj_state) == 64, "dray_obj_state size");
static_assert(sizeof(struct dray_counters) == 8 * DRAY_CNT_MAX,
	      "dray_counters size");
static_assert(sizeof(struct dray_aq_entry) == DRAY_AQ_ENTRY_SIZE,
	      "dray_aq_entry size");
static_assert(sizeof(struct dray_aq_cqe) == DRAY_AQ_CQE_SIZE,
	      "dray_aq_cqe size");
static_assert(sizeof(struct dray_qp_create) == 64, "dray_qp_create size");
static_assert(sizeof(struct dray_qp_attr) == 128, "dray_qp_attr size");
static_assert(sizeof(struct dray_device_caps) == 160, "dray_device_caps size");
static_assert(sizeof(struct dray_port_attr) == 32, "dray_port_attr size");

#endif /* DRAY_ADMIN_H */
