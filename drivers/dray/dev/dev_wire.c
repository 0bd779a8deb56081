// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: RoCEv2 header build and parse, the opcode table and the
 * transport's constant tables. Pure code, unit tested in user space.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/string.h>
#endif

#include <dray/dray_queue.h>

#include "dev_wire.h"

#define OP_RC_SEND	(DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_SEND | DRAY_OPF_PAYLOAD)
#define OP_RC_WRITE	(DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_WRITE | DRAY_OPF_PAYLOAD)
#define OP_RC_RRESP	(DRAY_OPF_RC | DRAY_OPF_RESP | DRAY_OPF_READ | DRAY_OPF_PAYLOAD)
#define OP_RC_ATOMIC	(DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_ATOMIC | \
			 DRAY_OPF_ATMETH | DRAY_OPF_START | DRAY_OPF_END)
#define OP_ONLY		(DRAY_OPF_START | DRAY_OPF_END)
#define OP_UC_SEND	(DRAY_OPF_UC | DRAY_OPF_REQ | DRAY_OPF_SEND | DRAY_OPF_PAYLOAD)
#define OP_UC_WRITE	(DRAY_OPF_UC | DRAY_OPF_REQ | DRAY_OPF_WRITE | DRAY_OPF_PAYLOAD)
#define UC(op)		(DRAY_OP_UC | DRAY_OP_##op)
#define OP_XRC_REQ	(DRAY_OPF_XRC | DRAY_OPF_REQ | DRAY_OPF_XRCETH)
#define OP_XRC_SEND	(OP_XRC_REQ | DRAY_OPF_SEND | DRAY_OPF_PAYLOAD)
#define OP_XRC_WRITE	(OP_XRC_REQ | DRAY_OPF_WRITE | DRAY_OPF_PAYLOAD)
#define OP_XRC_RRESP	(DRAY_OPF_XRC | DRAY_OPF_RESP | DRAY_OPF_READ | \
			 DRAY_OPF_PAYLOAD)
#define OP_XRC_ATOMIC	(OP_XRC_REQ | DRAY_OPF_ATOMIC | DRAY_OPF_ATMETH | \
			 DRAY_OPF_START | DRAY_OPF_END)
#define XRC(op)		(DRAY_OP_XRC | DRAY_OP_##op)

const struct dray_opcode_info dray_opcodes[256] = {
	[DRAY_OP_SEND_FIRST] = {
		"RC SEND First", OP_RC_SEND | DRAY_OPF_START },
	[DRAY_OP_SEND_MIDDLE] = {
		"RC SEND Middle", OP_RC_SEND },
	[DRAY_OP_SEND_LAST] = {
		"RC SEND Last", OP_RC_SEND | DRAY_OPF_END },
	[DRAY_OP_SEND_LAST_IMM] = {
		"RC SEND Last with Immediate",
		OP_RC_SEND | DRAY_OPF_END | DRAY_OPF_IMM },
	[DRAY_OP_SEND_ONLY] = {
		"RC SEND Only", OP_RC_SEND | OP_ONLY },
	[DRAY_OP_SEND_ONLY_IMM] = {
		"RC SEND Only with Immediate",
		OP_RC_SEND | OP_ONLY | DRAY_OPF_IMM },
	[DRAY_OP_WRITE_FIRST] = {
		"RC RDMA WRITE First",
		OP_RC_WRITE | DRAY_OPF_START | DRAY_OPF_RETH },
	[DRAY_OP_WRITE_MIDDLE] = {
		"RC RDMA WRITE Middle", OP_RC_WRITE },
	[DRAY_OP_WRITE_LAST] = {
		"RC RDMA WRITE Last", OP_RC_WRITE | DRAY_OPF_END },
	[DRAY_OP_WRITE_LAST_IMM] = {
		"RC RDMA WRITE Last with Immediate",
		OP_RC_WRITE | DRAY_OPF_END | DRAY_OPF_IMM },
	[DRAY_OP_WRITE_ONLY] = {
		"RC RDMA WRITE Only", OP_RC_WRITE | OP_ONLY | DRAY_OPF_RETH },
	[DRAY_OP_WRITE_ONLY_IMM] = {
		"RC RDMA WRITE Only with Immediate",
		OP_RC_WRITE | OP_ONLY | DRAY_OPF_RETH | DRAY_OPF_IMM },
	[DRAY_OP_READ_REQUEST] = {
		"RC RDMA READ Request",
		DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_READ | OP_ONLY |
		DRAY_OPF_RETH },
	[DRAY_OP_READ_RESP_FIRST] = {
		"RC RDMA READ response First",
		OP_RC_RRESP | DRAY_OPF_START | DRAY_OPF_AETH },
	[DRAY_OP_READ_RESP_MIDDLE] = {
		"RC RDMA READ response Middle", OP_RC_RRESP },
	[DRAY_OP_READ_RESP_LAST] = {
		"RC RDMA READ response Last",
		OP_RC_RRESP | DRAY_OPF_END | DRAY_OPF_AETH },
	[DRAY_OP_READ_RESP_ONLY] = {
		"RC RDMA READ response Only",
		OP_RC_RRESP | OP_ONLY | DRAY_OPF_AETH },
	[DRAY_OP_ACK] = {
		"RC Acknowledge",
		DRAY_OPF_RC | DRAY_OPF_RESP | DRAY_OPF_ACK | OP_ONLY |
		DRAY_OPF_AETH },
	[DRAY_OP_ATOMIC_ACK] = {
		"RC ATOMIC Acknowledge",
		DRAY_OPF_RC | DRAY_OPF_RESP | DRAY_OPF_ATOMIC | OP_ONLY |
		DRAY_OPF_AETH | DRAY_OPF_ATMACK },
	[DRAY_OP_CMP_SWAP] = {
		"RC CmpSwap", OP_RC_ATOMIC },
	[DRAY_OP_FETCH_ADD] = {
		"RC FetchAdd", OP_RC_ATOMIC },
	[DRAY_OP_SEND_LAST_INV] = {
		"RC SEND Last with Invalidate",
		OP_RC_SEND | DRAY_OPF_END | DRAY_OPF_IETH },
	[DRAY_OP_SEND_ONLY_INV] = {
		"RC SEND Only with Invalidate",
		OP_RC_SEND | OP_ONLY | DRAY_OPF_IETH },
	/* IBTA 1.5: both are answered by an RDMA READ response Only. */
	[DRAY_OP_FLUSH] = {
		"RC FLUSH",
		DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_FLUSH | OP_ONLY |
		DRAY_OPF_FETH | DRAY_OPF_RETH },
	[DRAY_OP_ATOMIC_WRITE] = {
		"RC ATOMIC WRITE",
		DRAY_OPF_RC | DRAY_OPF_REQ | DRAY_OPF_ATOMIC_WRITE | OP_ONLY |
		DRAY_OPF_RETH | DRAY_OPF_PAYLOAD },
	/* UC: SEND and RDMA WRITE, no responses (IBTA table 35). */
	[UC(SEND_FIRST)] = {
		"UC SEND First", OP_UC_SEND | DRAY_OPF_START },
	[UC(SEND_MIDDLE)] = {
		"UC SEND Middle", OP_UC_SEND },
	[UC(SEND_LAST)] = {
		"UC SEND Last", OP_UC_SEND | DRAY_OPF_END },
	[UC(SEND_LAST_IMM)] = {
		"UC SEND Last with Immediate",
		OP_UC_SEND | DRAY_OPF_END | DRAY_OPF_IMM },
	[UC(SEND_ONLY)] = {
		"UC SEND Only", OP_UC_SEND | OP_ONLY },
	[UC(SEND_ONLY_IMM)] = {
		"UC SEND Only with Immediate",
		OP_UC_SEND | OP_ONLY | DRAY_OPF_IMM },
	[UC(WRITE_FIRST)] = {
		"UC RDMA WRITE First",
		OP_UC_WRITE | DRAY_OPF_START | DRAY_OPF_RETH },
	[UC(WRITE_MIDDLE)] = {
		"UC RDMA WRITE Middle", OP_UC_WRITE },
	[UC(WRITE_LAST)] = {
		"UC RDMA WRITE Last", OP_UC_WRITE | DRAY_OPF_END },
	[UC(WRITE_LAST_IMM)] = {
		"UC RDMA WRITE Last with Immediate",
		OP_UC_WRITE | DRAY_OPF_END | DRAY_OPF_IMM },
	[UC(WRITE_ONLY)] = {
		"UC RDMA WRITE Only", OP_UC_WRITE | OP_ONLY | DRAY_OPF_RETH },
	[UC(WRITE_ONLY_IMM)] = {
		"UC RDMA WRITE Only with Immediate",
		OP_UC_WRITE | OP_ONLY | DRAY_OPF_RETH | DRAY_OPF_IMM },
	/*
	 * XRC (IBTA annex A14): RC's operations, each request with an
	 * XRCETH after the BTH; the responses as RC's, with XRC opcodes.
	 */
	[XRC(SEND_FIRST)] = {
		"XRC SEND First", OP_XRC_SEND | DRAY_OPF_START },
	[XRC(SEND_MIDDLE)] = {
		"XRC SEND Middle", OP_XRC_SEND },
	[XRC(SEND_LAST)] = {
		"XRC SEND Last", OP_XRC_SEND | DRAY_OPF_END },
	[XRC(SEND_LAST_IMM)] = {
		"XRC SEND Last with Immediate",
		OP_XRC_SEND | DRAY_OPF_END | DRAY_OPF_IMM },
	[XRC(SEND_ONLY)] = {
		"XRC SEND Only", OP_XRC_SEND | OP_ONLY },
	[XRC(SEND_ONLY_IMM)] = {
		"XRC SEND Only with Immediate",
		OP_XRC_SEND | OP_ONLY | DRAY_OPF_IMM },
	[XRC(WRITE_FIRST)] = {
		"XRC RDMA WRITE First",
		OP_XRC_WRITE | DRAY_OPF_START | DRAY_OPF_RETH },
	[XRC(WRITE_MIDDLE)] = {
		"XRC RDMA WRITE Middle", OP_XRC_WRITE },
	[XRC(WRITE_LAST)] = {
		"XRC RDMA WRITE Last", OP_XRC_WRITE | DRAY_OPF_END },
	[XRC(WRITE_LAST_IMM)] = {
		"XRC RDMA WRITE Last with Immediate",
		OP_XRC_WRITE | DRAY_OPF_END | DRAY_OPF_IMM },
	[XRC(WRITE_ONLY)] = {
		"XRC RDMA WRITE Only", OP_XRC_WRITE | OP_ONLY | DRAY_OPF_RETH },
	[XRC(WRITE_ONLY_IMM)] = {
		"XRC RDMA WRITE Only with Immediate",
		OP_XRC_WRITE | OP_ONLY | DRAY_OPF_RETH | DRAY_OPF_IMM },
	[XRC(READ_REQUEST)] = {
		"XRC RDMA READ Request",
		OP_XRC_REQ | DRAY_OPF_READ | OP_ONLY | DRAY_OPF_RETH },
	[XRC(READ_RESP_FIRST)] = {
		"XRC RDMA READ response First",
		OP_XRC_RRESP | DRAY_OPF_START | DRAY_OPF_AETH },
	[XRC(READ_RESP_MIDDLE)] = {
		"XRC RDMA READ response Middle", OP_XRC_RRESP },
	[XRC(READ_RESP_LAST)] = {
		"XRC RDMA READ response Last",
		OP_XRC_RRESP | DRAY_OPF_END | DRAY_OPF_AETH },
	[XRC(READ_RESP_ONLY)] = {
		"XRC RDMA READ response Only",
		OP_XRC_RRESP | OP_ONLY | DRAY_OPF_AETH },
	[XRC(ACK)] = {
		"XRC Acknowledge",
		DRAY_OPF_XRC | DRAY_OPF_RESP | DRAY_OPF_ACK | OP_ONLY |
		DRAY_OPF_AETH },
	[XRC(ATOMIC_ACK)] = {
		"XRC ATOMIC Acknowledge",
		DRAY_OPF_XRC | DRAY_OPF_RESP | DRAY_OPF_ATOMIC | OP_ONLY |
		DRAY_OPF_AETH | DRAY_OPF_ATMACK },
	[XRC(CMP_SWAP)] = {
		"XRC CmpSwap", OP_XRC_ATOMIC },
	[XRC(FETCH_ADD)] = {
		"XRC FetchAdd", OP_XRC_ATOMIC },
	[XRC(SEND_LAST_INV)] = {
		"XRC SEND Last with Invalidate",
		OP_XRC_SEND | DRAY_OPF_END | DRAY_OPF_IETH },
	[XRC(SEND_ONLY_INV)] = {
		"XRC SEND Only with Invalidate",
		OP_XRC_SEND | OP_ONLY | DRAY_OPF_IETH },
	[DRAY_OP_UD_SEND_ONLY] = {
		"UD SEND Only",
		DRAY_OPF_UD | DRAY_OPF_REQ | DRAY_OPF_SEND | DRAY_OPF_PAYLOAD |
		OP_ONLY | DRAY_OPF_DETH },
	[DRAY_OP_UD_SEND_ONLY_IMM] = {
		"UD SEND Only with Immediate",
		DRAY_OPF_UD | DRAY_OPF_REQ | DRAY_OPF_SEND | DRAY_OPF_PAYLOAD |
		OP_ONLY | DRAY_OPF_DETH | DRAY_OPF_IMM },
};

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be32(u8 *p, u32 v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static u16 get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

u32 dray_wire_build(const struct dray_pkt *pkt, void *buf)
{
	u32 f = dray_opcodes[pkt->opcode].flags;
	struct dray_bth *bth = buf;
	u8 *p = (u8 *)(bth + 1);

	bth->opcode = pkt->opcode;
	bth->flags = (pkt->se ? DRAY_BTH_SE : 0) |
		     ((pkt->pad << DRAY_BTH_PAD_SHIFT) & DRAY_BTH_PAD_MASK);
	bth->pkey = cpu_to_be16(pkt->pkey);
	bth->qpn = cpu_to_be32(pkt->qpn & DRAY_QPN_MASK);
	bth->apsn = cpu_to_be32((pkt->ackreq ? DRAY_BTH_ACKREQ : 0) |
				(pkt->psn & DRAY_PSN_MASK));

	if (f & DRAY_OPF_DETH) {
		struct dray_deth *h = (struct dray_deth *)p;

		h->qkey = cpu_to_be32(pkt->qkey);
		h->sqpn = cpu_to_be32(pkt->src_qpn & DRAY_QPN_MASK);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_XRCETH) {
		struct dray_xrceth *h = (struct dray_xrceth *)p;

		h->srqn = cpu_to_be32(pkt->xrc_srqn & DRAY_XRC_SRQN_MASK);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_FETH) {
		struct dray_feth *h = (struct dray_feth *)p;

		h->bits = cpu_to_be32(((u32)pkt->flush_level << DRAY_FETH_SEL_SHIFT &
				       DRAY_FETH_SEL_MASK) |
				      (pkt->flush_type & DRAY_FETH_PLT_MASK));
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_RETH) {
		struct dray_reth *h = (struct dray_reth *)p;

		h->va = cpu_to_be64(pkt->va);
		h->rkey = cpu_to_be32(pkt->rkey);
		h->dma_len = cpu_to_be32(pkt->dma_len);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_ATMETH) {
		struct dray_atmeth *h = (struct dray_atmeth *)p;

		h->va = cpu_to_be64(pkt->va);
		h->rkey = cpu_to_be32(pkt->rkey);
		h->swap_add = cpu_to_be64(pkt->swap_add);
		h->compare = cpu_to_be64(pkt->compare);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_AETH) {
		struct dray_aeth *h = (struct dray_aeth *)p;

		h->smsn = cpu_to_be32((u32)pkt->syndrome << 24 |
				      (pkt->msn & DRAY_AETH_MSN_MASK));
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_ATMACK) {
		struct dray_atmack *h = (struct dray_atmack *)p;

		h->orig = cpu_to_be64(pkt->orig);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_IMM) {
		struct dray_immdt *h = (struct dray_immdt *)p;

		h->imm = pkt->imm;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_IETH) {
		struct dray_ieth *h = (struct dray_ieth *)p;

		h->rkey = cpu_to_be32(pkt->rkey);
		p += sizeof(*h);
	}
	return p - (u8 *)buf;
}

int dray_wire_parse(const void *buf, u32 len, struct dray_pkt *pkt)
{
	const struct dray_bth *bth = buf;
	const u8 *p = (const u8 *)(bth + 1);
	u32 f, hlen, qpn, apsn;

	if (len < sizeof(*bth))
		return -EBADMSG;
	f = dray_opcodes[bth->opcode].flags;
	if (!f)
		return -EOPNOTSUPP;
	if (bth->flags & DRAY_BTH_TVER_MASK)
		return -EPROTO;
	hlen = dray_wire_hdr_len(f);
	if (len < hlen)
		return -EBADMSG;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = bth->opcode;
	pkt->se = bth->flags & DRAY_BTH_SE;
	pkt->pad = (bth->flags & DRAY_BTH_PAD_MASK) >> DRAY_BTH_PAD_SHIFT;
	pkt->pkey = be16_to_cpu(bth->pkey);
	qpn = be32_to_cpu(bth->qpn);
	pkt->resv8a = qpn >> 24;
	pkt->qpn = qpn & DRAY_QPN_MASK;
	apsn = be32_to_cpu(bth->apsn);
	pkt->ackreq = apsn & DRAY_BTH_ACKREQ;
	pkt->psn = apsn & DRAY_PSN_MASK;

	if (f & DRAY_OPF_DETH) {
		const struct dray_deth *h = (const struct dray_deth *)p;

		pkt->qkey = be32_to_cpu(h->qkey);
		pkt->src_qpn = be32_to_cpu(h->sqpn) & DRAY_QPN_MASK;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_XRCETH) {
		const struct dray_xrceth *h = (const struct dray_xrceth *)p;

		pkt->xrc_srqn = be32_to_cpu(h->srqn) & DRAY_XRC_SRQN_MASK;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_FETH) {
		const struct dray_feth *h = (const struct dray_feth *)p;
		u32 bits = be32_to_cpu(h->bits);

		pkt->flush_type = bits & DRAY_FETH_PLT_MASK;
		pkt->flush_level = (bits & DRAY_FETH_SEL_MASK) >>
				   DRAY_FETH_SEL_SHIFT;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_RETH) {
		const struct dray_reth *h = (const struct dray_reth *)p;

		pkt->va = be64_to_cpu(h->va);
		pkt->rkey = be32_to_cpu(h->rkey);
		pkt->dma_len = be32_to_cpu(h->dma_len);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_ATMETH) {
		const struct dray_atmeth *h = (const struct dray_atmeth *)p;

		pkt->va = be64_to_cpu(h->va);
		pkt->rkey = be32_to_cpu(h->rkey);
		pkt->swap_add = be64_to_cpu(h->swap_add);
		pkt->compare = be64_to_cpu(h->compare);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_AETH) {
		const struct dray_aeth *h = (const struct dray_aeth *)p;
		u32 smsn = be32_to_cpu(h->smsn);

		pkt->syndrome = smsn >> 24;
		pkt->msn = smsn & DRAY_AETH_MSN_MASK;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_ATMACK) {
		const struct dray_atmack *h = (const struct dray_atmack *)p;

		pkt->orig = be64_to_cpu(h->orig);
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_IMM) {
		const struct dray_immdt *h = (const struct dray_immdt *)p;

		pkt->imm = h->imm;
		p += sizeof(*h);
	}
	if (f & DRAY_OPF_IETH) {
		const struct dray_ieth *h = (const struct dray_ieth *)p;

		pkt->rkey = be32_to_cpu(h->rkey);
	}
	return hlen;
}

u16 dray_wire_ip_csum(const void *hdr, u32 len)
{
	const u8 *p = hdr;
	u32 sum = 0, i;

	for (i = 0; i + 1 < len; i += 2)
		sum += get_be16(p + i);
	if (len & 1)
		sum += (u32)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

u32 dray_wire_build_l3(const struct dray_wire_addr *addr, u32 udp_len,
		       void *buf)
{
	u8 hop = addr->hop_limit ? addr->hop_limit : 64;
	u8 *eth = buf, *ip = eth + DRAY_ETH_HLEN, *udp;

	memcpy(eth, addr->dmac, 6);
	memcpy(eth + 6, addr->smac, 6);
	if (!addr->ipv6) {
		put_be16(eth + 12, DRAY_ETH_P_IPV4);
		ip[0] = 0x45;				/* version 4, IHL 5 */
		ip[1] = addr->tclass;			/* TOS */
		put_be16(ip + 2, DRAY_IPV4_HLEN + DRAY_UDP_HLEN + udp_len);
		put_be16(ip + 4, 0);			/* ID: DF, RFC 6864 */
		put_be16(ip + 6, 0x4000);		/* DF, offset 0 */
		ip[8] = hop;				/* TTL */
		ip[9] = DRAY_IPPROTO_UDP;
		put_be16(ip + 10, 0);
		memcpy(ip + 12, addr->sgid + 12, 4);
		memcpy(ip + 16, addr->dgid + 12, 4);
		put_be16(ip + 10, dray_wire_ip_csum(ip, DRAY_IPV4_HLEN));
		udp = ip + DRAY_IPV4_HLEN;
	} else {
		put_be16(eth + 12, DRAY_ETH_P_IPV6);
		put_be32(ip, 6U << 28 | (u32)addr->tclass << 20 |
			     (addr->flow_label & 0xfffff));
		put_be16(ip + 4, DRAY_UDP_HLEN + udp_len);
		ip[6] = DRAY_IPPROTO_UDP;		/* next header */
		ip[7] = hop;
		memcpy(ip + 8, addr->sgid, 16);
		memcpy(ip + 24, addr->dgid, 16);
		udp = ip + DRAY_IPV6_HLEN;
	}
	put_be16(udp, addr->sport);
	put_be16(udp + 2, DRAY_ROCE_UDP_PORT);
	put_be16(udp + 4, DRAY_UDP_HLEN + udp_len);
	put_be16(udp + 6, 0);
	return udp + DRAY_UDP_HLEN - eth;
}

static const u8 v4_mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

int dray_wire_parse_l3(const void *buf, u32 avail, u32 ip_len, bool ipv6,
		       struct dray_wire_l3 *l3)
{
	const u8 *ip = buf, *udp;
	u32 hlen, tot;

	if (!ipv6) {
		hlen = DRAY_IPV4_HLEN;
		if (avail < hlen + DRAY_UDP_HLEN || ip[0] != 0x45)
			return -EBADMSG;	/* IPv4 without options only */
		tot = get_be16(ip + 2);
		if (tot < hlen + DRAY_UDP_HLEN || tot > ip_len ||
		    (get_be16(ip + 6) & 0x3fff) ||	/* MF or an offset */
		    ip[9] != DRAY_IPPROTO_UDP ||
		    dray_wire_ip_csum(ip, hlen))
			return -EBADMSG;
		memcpy(l3->sgid, v4_mapped_prefix, 12);
		memcpy(l3->sgid + 12, ip + 12, 4);
		memcpy(l3->dgid, v4_mapped_prefix, 12);
		memcpy(l3->dgid + 12, ip + 16, 4);
	} else {
		hlen = DRAY_IPV6_HLEN;
		if (avail < hlen + DRAY_UDP_HLEN || (ip[0] >> 4) != 6 ||
		    ip[6] != DRAY_IPPROTO_UDP)	/* no extension headers */
			return -EBADMSG;
		tot = hlen + get_be16(ip + 4);
		if (tot < hlen + DRAY_UDP_HLEN || tot > ip_len)
			return -EBADMSG;
		memcpy(l3->sgid, ip + 8, 16);
		memcpy(l3->dgid, ip + 24, 16);
	}
	udp = ip + hlen;
	if (get_be16(udp + 2) != DRAY_ROCE_UDP_PORT ||
	    get_be16(udp + 4) != tot - hlen)
		return -EBADMSG;
	l3->ipv6 = ipv6;
	l3->ip_hlen = hlen;
	l3->udp_len = tot - hlen - DRAY_UDP_HLEN;
	l3->udp_csum = get_be16(udp + 6);
	return 0;
}

void dray_wire_grh(const void *ip, bool ipv6, u8 *grh)
{
	if (ipv6) {
		memcpy(grh, ip, DRAY_IPV6_HLEN);
		return;
	}
	memset(grh, 0, DRAY_GRH_BYTES - DRAY_IPV4_HLEN);
	memcpy(grh + DRAY_GRH_BYTES - DRAY_IPV4_HLEN, ip, DRAY_IPV4_HLEN);
}

int dray_wire_req_opcode(u8 wqe_opcode, u32 pos)
{
	/* Indexed by DRAY_WQE_*, then by position: middle, first, last, only. */
	static const s16 ops[DRAY_WQE_OPCODE_MAX][4] = {
		[DRAY_WQE_SEND] = {
			DRAY_OP_SEND_MIDDLE, DRAY_OP_SEND_FIRST,
			DRAY_OP_SEND_LAST, DRAY_OP_SEND_ONLY },
		[DRAY_WQE_SEND_IMM] = {
			DRAY_OP_SEND_MIDDLE, DRAY_OP_SEND_FIRST,
			DRAY_OP_SEND_LAST_IMM, DRAY_OP_SEND_ONLY_IMM },
		[DRAY_WQE_RDMA_WRITE] = {
			DRAY_OP_WRITE_MIDDLE, DRAY_OP_WRITE_FIRST,
			DRAY_OP_WRITE_LAST, DRAY_OP_WRITE_ONLY },
		[DRAY_WQE_RDMA_WRITE_IMM] = {
			DRAY_OP_WRITE_MIDDLE, DRAY_OP_WRITE_FIRST,
			DRAY_OP_WRITE_LAST_IMM, DRAY_OP_WRITE_ONLY_IMM },
		[DRAY_WQE_RDMA_READ] = { -1, -1, -1, DRAY_OP_READ_REQUEST },
		[DRAY_WQE_ATOMIC_CMP_SWP] = { -1, -1, -1, DRAY_OP_CMP_SWAP },
		[DRAY_WQE_ATOMIC_FETCH_ADD] = { -1, -1, -1, DRAY_OP_FETCH_ADD },
		[DRAY_WQE_SEND_INV] = {
			DRAY_OP_SEND_MIDDLE, DRAY_OP_SEND_FIRST,
			DRAY_OP_SEND_LAST_INV, DRAY_OP_SEND_ONLY_INV },
		/* Local operations send nothing. */
		[DRAY_WQE_LOCAL_INV] = { -1, -1, -1, -1 },
		[DRAY_WQE_REG_MR] = { -1, -1, -1, -1 },
		[DRAY_WQE_BIND_MW] = { -1, -1, -1, -1 },
		[DRAY_WQE_ATOMIC_WRITE] = { -1, -1, -1, DRAY_OP_ATOMIC_WRITE },
		[DRAY_WQE_FLUSH] = { -1, -1, -1, DRAY_OP_FLUSH },
	};
	u32 i = (pos & DRAY_OPF_START ? 1 : 0) | (pos & DRAY_OPF_END ? 2 : 0);

	if (wqe_opcode >= DRAY_WQE_OPCODE_MAX)
		return -1;
	return ops[wqe_opcode][i];
}

u8 dray_wire_read_resp_opcode(u32 pos)
{
	static const u8 ops[4] = {
		DRAY_OP_READ_RESP_MIDDLE, DRAY_OP_READ_RESP_FIRST,
		DRAY_OP_READ_RESP_LAST, DRAY_OP_READ_RESP_ONLY,
	};

	return ops[(pos & DRAY_OPF_START ? 1 : 0) | (pos & DRAY_OPF_END ? 2 : 0)];
}

u32 dray_wire_rnr_us(u8 code)
{
	/* IBTA table 45: RNR NAK timer field encoding. */
	static const u32 rnr_us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return rnr_us[code & 31];
}
