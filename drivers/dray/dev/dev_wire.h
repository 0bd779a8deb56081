/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: RoCEv2 wire formats and the pure arithmetic of the
 * reliable-connected transport.
 *
 * A RoCEv2 packet is Ethernet, IPv4 or IPv6, UDP (destination port 4791),
 * then the InfiniBand transport: the base transport header (BTH), the
 * extended transport headers its opcode calls for, the payload padded to a
 * multiple of 4 bytes, and the invariant CRC (IBTA vol. 1 ch. 9; annex A17
 * for the encapsulation).
 *
 * Byte order: every transport header field is big endian (__be types);
 * the ICRC alone is sent least significant byte first, as an Ethernet FCS.
 *
 * Nothing here touches kernel state: tests/unit compiles this header (after
 * its kshim.h), dev_wire.c and dev_icrc.c in user space.
 */
#ifndef DRAY_DEV_WIRE_H
#define DRAY_DEV_WIRE_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#endif

#include <dray/dray_common.h>	/* DRAY_QPN_MASK, DRAY_PSN_MASK */

#define DRAY_ROCE_UDP_PORT	4791

/* --- transport headers -------------------------------------------------- */

/* Base transport header. */
struct dray_bth {
	u8	opcode;
	u8	flags;		/* DRAY_BTH_SE | DRAY_BTH_MIG | PadCnt | TVer */
	__be16	pkey;
	__be32	qpn;		/* [31:24] resv8a (FECN, BECN), [23:0] dest QP (DRAY_QPN_MASK) */
	__be32	apsn;		/* [31] AckReq, [30:24] reserved, [23:0] PSN */
} __packed;

#define DRAY_BTH_SE		0x80	/* solicited event */
#define DRAY_BTH_MIG		0x40	/* migration state */
#define DRAY_BTH_PAD_MASK	0x30	/* pad bytes after the payload */
#define DRAY_BTH_PAD_SHIFT	4
#define DRAY_BTH_TVER_MASK	0x0f	/* transport version: 0 */
#define DRAY_BTH_FECN		0x80000000U	/* in qpn */
#define DRAY_BTH_BECN		0x40000000U	/* in qpn */
#define DRAY_BTH_RESV8A_MASK	0xff000000U	/* in qpn: variant, ICRC'd as 1s */
#define DRAY_BTH_ACKREQ		0x80000000U	/* in apsn */

#define DRAY_PKEY_DEFAULT	0xffff
#define DRAY_PKEY_MEMBER	0x8000	/* full member bit, ignored in checks */

/* RDMA extended transport header (WRITE first/only, READ request). */
struct dray_reth {
	__be64	va;
	__be32	rkey;
	__be32	dma_len;
} __packed;

/* ACK extended transport header. */
struct dray_aeth {
	__be32	smsn;		/* [31:24] syndrome, [23:0] MSN */
} __packed;

#define DRAY_AETH_MSN_MASK	0x00ffffffU
#define DRAY_AETH_TYPE_MASK	0x60	/* syndrome bits 6:5 */
#define DRAY_AETH_ACK		0x00	/* value: credit count */
#define DRAY_AETH_RNR_NAK	0x20	/* value: RNR timer code */
#define DRAY_AETH_NAK		0x60	/* value: enum dray_nak_code */
#define DRAY_AETH_VALUE_MASK	0x1f
#define DRAY_AETH_CREDITS_INVALID 0x1f	/* ACK: no end-to-end credits */

enum dray_nak_code {
	DRAY_NAK_PSN_SEQ	= 0,	/* PSN sequence error */
	DRAY_NAK_INV_REQ	= 1,	/* invalid request */
	DRAY_NAK_REM_ACCESS	= 2,	/* remote access error */
	DRAY_NAK_REM_OP		= 3,	/* remote operational error */
	DRAY_NAK_INV_RD_REQ	= 4,	/* invalid RD request */
};

/* Atomic extended transport header (CmpSwap, FetchAdd). */
struct dray_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;	/* swap data, or the addend of FetchAdd */
	__be64	compare;
} __packed;

/* Atomic acknowledge extended transport header. */
struct dray_atmack {
	__be64	orig;		/* the remote data before the operation */
} __packed;

/* Immediate data extended transport header. */
struct dray_immdt {
	__be32	imm;
} __packed;

/* Invalidate extended transport header (SEND with invalidate). */
struct dray_ieth {
	__be32	rkey;
} __packed;

/* FLUSH extended transport header (IBTA 1.5): before the RETH. */
struct dray_feth {
	__be32	bits;		/* [5:4] selectivity level, [3:0] placement type */
} __packed;

#define DRAY_FETH_PLT_MASK	0x0000000fU
#define DRAY_FETH_SEL_SHIFT	4
#define DRAY_FETH_SEL_MASK	0x00000030U

/* Datagram extended transport header (UD). */
struct dray_deth {
	__be32	qkey;
	__be32	sqpn;		/* [23:0] source QP */
} __packed;

/*
 * XRC extended transport header (IBTA annex A14): in every XRC request,
 * right after the BTH: the responder's XRC SRQ that receives it.
 */
struct dray_xrceth {
	__be32	srqn;		/* [31:24] reserved, [23:0] XRC SRQ number */
} __packed;

#define DRAY_XRC_SRQN_MASK	0x00ffffffU

static_assert(sizeof(struct dray_bth) == 12, "BTH size");
static_assert(sizeof(struct dray_xrceth) == 4, "XRCETH size");
static_assert(sizeof(struct dray_reth) == 16, "RETH size");
static_assert(sizeof(struct dray_aeth) == 4, "AETH size");
static_assert(sizeof(struct dray_atmeth) == 28, "AtomicETH size");
static_assert(sizeof(struct dray_atmack) == 8, "AtomicAckETH size");
static_assert(sizeof(struct dray_immdt) == 4, "ImmDt size");
static_assert(sizeof(struct dray_ieth) == 4, "IETH size");
static_assert(sizeof(struct dray_deth) == 8, "DETH size");
static_assert(sizeof(struct dray_feth) == 4, "FETH size");

#define DRAY_ICRC_BYTES		4
/* Largest BTH plus extended headers of any opcode (XRC CmpSwap: 12 + 4 + 28). */
#define DRAY_HDR_MAX		44

/* --- opcodes ------------------------------------------------------------- */

/*
 * IBTA opcodes: [7:5] transport (000 RC, 001 UC, 011 UD, 101 XRC), [4:0]
 * operation. A UC or XRC opcode is the RC opcode of the same operation
 * plus DRAY_OP_UC or DRAY_OP_XRC (dray_wire_op() takes the operation).
 */
enum dray_opcode {
	DRAY_OP_SEND_FIRST		= 0x00,
	DRAY_OP_SEND_MIDDLE		= 0x01,
	DRAY_OP_SEND_LAST		= 0x02,
	DRAY_OP_SEND_LAST_IMM		= 0x03,
	DRAY_OP_SEND_ONLY		= 0x04,
	DRAY_OP_SEND_ONLY_IMM		= 0x05,
	DRAY_OP_WRITE_FIRST		= 0x06,
	DRAY_OP_WRITE_MIDDLE		= 0x07,
	DRAY_OP_WRITE_LAST		= 0x08,
	DRAY_OP_WRITE_LAST_IMM		= 0x09,
	DRAY_OP_WRITE_ONLY		= 0x0a,
	DRAY_OP_WRITE_ONLY_IMM		= 0x0b,
	DRAY_OP_READ_REQUEST		= 0x0c,
	DRAY_OP_READ_RESP_FIRST		= 0x0d,
	DRAY_OP_READ_RESP_MIDDLE	= 0x0e,
	DRAY_OP_READ_RESP_LAST		= 0x0f,
	DRAY_OP_READ_RESP_ONLY		= 0x10,
	DRAY_OP_ACK			= 0x11,
	DRAY_OP_ATOMIC_ACK		= 0x12,
	DRAY_OP_CMP_SWAP		= 0x13,
	DRAY_OP_FETCH_ADD		= 0x14,
	DRAY_OP_SEND_LAST_INV		= 0x16,
	DRAY_OP_SEND_ONLY_INV		= 0x17,
	DRAY_OP_FLUSH			= 0x1c,
	DRAY_OP_ATOMIC_WRITE		= 0x1d,
	DRAY_OP_UC			= 0x20,
	DRAY_OP_UD_SEND_ONLY		= 0x64,
	DRAY_OP_UD_SEND_ONLY_IMM	= 0x65,
	DRAY_OP_XRC			= 0xa0,
};

#define DRAY_OP_TRANSPORT_MASK	0xe0
#define DRAY_OP_OPERATION_MASK	0x1f

/* The RC opcode of an RC, UC or XRC opcode's operation. */
static inline u8 dray_wire_op(u8 opcode)
{
	return opcode & DRAY_OP_OPERATION_MASK;
}

/* What an opcode is and which headers follow its BTH (dray_opcode_info). */
#define DRAY_OPF_RC		BIT(0)
#define DRAY_OPF_UD		BIT(1)
#define DRAY_OPF_REQ		BIT(2)	/* requester to responder */
#define DRAY_OPF_RESP		BIT(3)	/* responder to requester */
#define DRAY_OPF_START		BIT(4)	/* first or only packet */
#define DRAY_OPF_END		BIT(5)	/* last or only packet */
#define DRAY_OPF_SEND		BIT(6)
#define DRAY_OPF_WRITE		BIT(7)
#define DRAY_OPF_READ		BIT(8)	/* READ request or response */
#define DRAY_OPF_ATOMIC		BIT(9)	/* atomic request or atomic ACK */
#define DRAY_OPF_ACK		BIT(10)	/* ACK/NAK */
#define DRAY_OPF_PAYLOAD	BIT(11)
#define DRAY_OPF_DETH		BIT(12)
#define DRAY_OPF_RETH		BIT(13)
#define DRAY_OPF_ATMETH		BIT(14)
#define DRAY_OPF_AETH		BIT(15)
#define DRAY_OPF_ATMACK		BIT(16)
#define DRAY_OPF_IMM		BIT(17)
#define DRAY_OPF_IETH		BIT(18)
#define DRAY_OPF_UC		BIT(19)
#define DRAY_OPF_FETH		BIT(20)
#define DRAY_OPF_FLUSH		BIT(21)	/* FLUSH request */
#define DRAY_OPF_ATOMIC_WRITE	BIT(22)	/* ATOMIC WRITE request */
#define DRAY_OPF_XRC		BIT(23)
#define DRAY_OPF_XRCETH		BIT(24)

struct dray_opcode_info {
	const char	*name;		/* as IBTA vol. 1 table 38 names it */
	u32		flags;		/* DRAY_OPF_*; 0: not a valid opcode */
};

extern const struct dray_opcode_info dray_opcodes[256];

/* Bytes of BTH and extended headers for opcode flags @f (IBTA order). */
static inline u32 dray_wire_hdr_len(u32 f)
{
	u32 len = sizeof(struct dray_bth);

	if (f & DRAY_OPF_DETH)
		len += sizeof(struct dray_deth);
	if (f & DRAY_OPF_XRCETH)
		len += sizeof(struct dray_xrceth);
	if (f & DRAY_OPF_FETH)
		len += sizeof(struct dray_feth);
	if (f & DRAY_OPF_RETH)
		len += sizeof(struct dray_reth);
	if (f & DRAY_OPF_ATMETH)
		len += sizeof(struct dray_atmeth);
	if (f & DRAY_OPF_AETH)
		len += sizeof(struct dray_aeth);
	if (f & DRAY_OPF_ATMACK)
		len += sizeof(struct dray_atmack);
	if (f & DRAY_OPF_IMM)
		len += sizeof(struct dray_immdt);
	if (f & DRAY_OPF_IETH)
		len += sizeof(struct dray_ieth);
	return len;
}

/*
 * A transport header in host order: what dray_wire_build() writes and
 * dray_wire_parse() reads. Only the fields of the headers the opcode
 * carries are meaningful.
 */
struct dray_pkt {
	u8	opcode;
	u8	pad;		/* PadCnt, 0..3 */
	bool	se;
	bool	ackreq;
	u8	resv8a;		/* FECN/BECN byte as received */
	u16	pkey;
	u32	qpn;
	u32	psn;
	u64	va;		/* RETH or AtomicETH */
	u32	rkey;		/* RETH, AtomicETH or IETH */
	u32	dma_len;	/* RETH */
	u64	swap_add;	/* AtomicETH */
	u64	compare;	/* AtomicETH */
	u8	syndrome;	/* AETH */
	u32	msn;		/* AETH */
	u64	orig;		/* AtomicAckETH */
	__be32	imm;		/* ImmDt, kept in network order */
	u32	qkey;		/* DETH */
	u32	src_qpn;	/* DETH */
	u8	flush_type;	/* FETH: placement type */
	u8	flush_level;	/* FETH: selectivity level */
	u32	xrc_srqn;	/* XRCETH */
};

/* Write BTH and extended headers; returns the bytes written. */
u32 dray_wire_build(const struct dray_pkt *pkt, void *buf);

/*
 * Parse BTH and extended headers from the @len bytes at @buf. Returns the
 * header length, -EBADMSG if @len is too short, -EOPNOTSUPP for an opcode
 * IBTA does not define, -EPROTO for a transport version other than 0.
 */
int dray_wire_parse(const void *buf, u32 len, struct dray_pkt *pkt);

/* --- Ethernet, IP and UDP ---------------------------------------------- */

#define DRAY_ETH_HLEN		14
#define DRAY_IPV4_HLEN		20
#define DRAY_IPV6_HLEN		40
#define DRAY_UDP_HLEN		8
#define DRAY_ETH_P_IPV4		0x0800
#define DRAY_ETH_P_IPV6		0x86dd
#define DRAY_IPPROTO_UDP	17
#define DRAY_SPORT_MIN		0xc000	/* RoCEv2 source port range */

/* Where a packet goes: the resolved path in wire terms. */
struct dray_wire_addr {
	bool	ipv6;
	u8	smac[6];
	u8	dmac[6];
	u8	sgid[16];	/* IPv4 as ::ffff:a.b.c.d */
	u8	dgid[16];
	u8	tclass;		/* IPv4 TOS / IPv6 traffic class */
	u8	hop_limit;	/* IPv4 TTL / IPv6 hop limit */
	u32	flow_label;	/* IPv6 only */
	u16	sport;
};

/*
 * Write the Ethernet, IP and UDP headers of a packet whose UDP payload
 * (BTH to ICRC) is @udp_len bytes. The IPv4 header checksum is filled in;
 * the UDP checksum is 0 (IPv4: none; IPv6: the caller computes or offloads
 * it). Returns the bytes written: DRAY_ETH_HLEN + IP + DRAY_UDP_HLEN.
 */
u32 dray_wire_build_l3(const struct dray_wire_addr *addr, u32 udp_len,
		       void *buf);

/* A received IP/UDP header, validated by dray_wire_parse_l3(). */
struct dray_wire_l3 {
	bool	ipv6;
	u32	ip_hlen;	/* 20 or 40 */
	u32	udp_len;	/* UDP payload bytes: BTH to ICRC */
	u16	udp_csum;	/* as received; 0 = none (IPv4) */
	u8	sgid[16];	/* IPv4 mapped as ::ffff:a.b.c.d */
	u8	dgid[16];
};

/*
 * Validate the IP and UDP headers at @buf (@avail bytes of it readable,
 * @ip_len bytes of packet from the IP header to the end of the frame).
 * IPv4: version 4, no options, not a fragment, protocol UDP, total length
 * within the frame, valid header checksum. IPv6: version 6, next header
 * UDP. UDP: destination port 4791, length consistent with the IP length.
 * Returns 0 or -EBADMSG.
 */
int dray_wire_parse_l3(const void *buf, u32 avail, u32 ip_len, bool ipv6,
		       struct dray_wire_l3 *l3);

/*
 * The 40-byte GRH a UD receive places before the payload, from the IP
 * header of the packet at @ip (already validated): the IPv6 header as
 * received, or for IPv4 20 zero bytes then the IPv4 header as received
 * (the RoCEv2 layout; its valid header checksum tells it from IPv6).
 */
#define DRAY_GRH_BYTES		40
void dray_wire_grh(const void *ip, bool ipv6, u8 *grh);

/*
 * Internet checksum of @len bytes (an IPv4 header): the value to store in
 * its checksum field, big endian; 0 over a header whose checksum is valid.
 */
u16 dray_wire_ip_csum(const void *hdr, u32 len);

/*
 * A RoCEv2 UDP source port from a flow label: the mapping the Linux RDMA
 * core uses (rdma_flow_label_to_udp_sport), so both ends agree.
 */
static inline u16 dray_wire_sport(u32 flow_label)
{
	u32 lo = flow_label & 0x3fff;
	u32 hi = (flow_label >> 14) & 0x3f;

	return DRAY_SPORT_MIN | ((lo ^ hi) & 0x3fff);
}

/* A 20-bit flow label from the two QP numbers of a connection. */
static inline u32 dray_wire_flow_label(u32 lqpn, u32 rqpn)
{
	u64 v = (u64)lqpn * 0x9e3779b1U + rqpn;

	v ^= v >> 29;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 32;
	return (u32)v & 0xfffff;
}

/* --- ICRC (dev_icrc.c) -------------------------------------------------- */

/*
 * Start the ICRC: CRC-32 (the Ethernet polynomial, reflected, initial
 * value all ones) over a pseudo LRH of 8 bytes of 0xff, the IP header @l3
 * (20 bytes IPv4 or 40 IPv6) and @l4_len bytes at @l4 (UDP header, BTH,
 * extended headers), with the variant fields taken as all ones: IPv4 TOS,
 * TTL and header checksum; IPv6 traffic class, flow label and hop limit;
 * the UDP checksum; the BTH resv8a byte. @l4_len must be at least 20.
 * Continue with dray_icrc_update() over payload and pad bytes.
 */
u32 dray_icrc_begin(const void *l3, bool ipv6, const void *l4, u32 l4_len);
u32 dray_icrc_update(u32 crc, const void *data, u32 len);
/* The ICRC value; it goes on the wire as cpu_to_le32(value). */
static inline u32 dray_icrc_final(u32 crc)
{
	return ~crc;
}

/* --- PSNs, segmentation, timers ------------------------------------------ */

static inline u32 dray_psn_add(u32 psn, u32 n)
{
	return (psn + n) & DRAY_PSN_MASK;
}

/*
 * Signed distance from PSN @b to PSN @a in the 24-bit sequence space:
 * negative if @a is before @b, in (-2^23, 2^23).
 */
static inline s32 dray_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/* Bytes of an IB MTU (enum dray_mtu); 0 if invalid. */
static inline u32 dray_mtu_bytes(u8 mtu)
{
	return mtu >= 1 && mtu <= 5 ? 128U << mtu : 0;
}

/* Packets (and so PSNs) a message of @len bytes takes; at least one. */
static inline u32 dray_wire_npkts(u32 len, u32 mtu)
{
	return len ? (len - 1) / mtu + 1 : 1;
}

/* DRAY_OPF_START/END of packet @n of a message of @npkts packets. */
static inline u32 dray_wire_pos(u32 n, u32 npkts)
{
	return (n == 0 ? DRAY_OPF_START : 0) |
	       (n + 1 == npkts ? DRAY_OPF_END : 0);
}

/* Payload bytes of packet @n of a message of @len bytes. */
static inline u32 dray_wire_seg_len(u32 len, u32 mtu, u32 n)
{
	u64 off = (u64)n * mtu;

	if (off >= len)
		return 0;
	return len - off < mtu ? (u32)(len - off) : mtu;
}

/* Pad bytes that round @len up to a multiple of 4. */
static inline u32 dray_wire_pad(u32 len)
{
	return (4 - (len & 3)) & 3;
}

/*
 * Request opcode for a DRAY_WQE_* operation at position @pos
 * (DRAY_OPF_START/END); -1 for an operation the transport does not send.
 */
int dray_wire_req_opcode(u8 wqe_opcode, u32 pos);
/* READ response opcode at position @pos. */
u8 dray_wire_read_resp_opcode(u32 pos);

/* Local ACK timeout 4.096 us * 2^@t in nanoseconds; 0: none (t = 0). */
static inline u64 dray_wire_ack_timeout_ns(u8 t)
{
	return t ? 4096ULL << (t > 31 ? 31 : t) : 0;
}

/* RNR NAK timer code (0..31, IBTA table 45) in microseconds. */
u32 dray_wire_rnr_us(u8 code);

#endif /* DRAY_DEV_WIRE_H */
