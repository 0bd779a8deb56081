// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: dray's RoCEv2 frame parser (drivers/dray/dev/dev_wire.c)
 * and the ICRC (dev_icrc.c), compiled in user space as tests/unit does.
 *
 * Input: one control byte, then a frame from its IP header on (what the
 * port hands dray_xport_rx()). Control bit 0 selects IPv6; the other bits
 * pick which byte of the frame the ICRC checks below flip.
 *
 * What each function promises, checked on every input (abort() if not):
 *  - dray_wire_parse_l3(): on success the IP header is 20 (IPv4, valid
 *    checksum, no options, not a fragment) or 40 bytes (IPv6), the UDP
 *    destination port is 4791 and IP header + UDP header + udp_len lie
 *    inside the frame; on failure only -EBADMSG.
 *  - dray_wire_parse(): on success the header length is the opcode's
 *    (dray_wire_hdr_len()), within the bytes given and DRAY_HDR_MAX, the
 *    fields are in range, and dray_wire_build() of the result gives the
 *    same bytes back except the bits the parser drops (MigReq, resv8a,
 *    the reserved bits of the PSN word and of the DETH source QP); on
 *    failure exactly the documented errno for the reason.
 *  - For a frame both accept, with the payload offset and length the
 *    receive path computes (dev_xport.c: headers, pad, 4 ICRC bytes):
 *    payload inside the UDP payload; the ICRC does not change when a
 *    variant field changes (IPv4 TOS, TTL, checksum; IPv6 class, flow
 *    label, hop limit; UDP checksum; BTH resv8a) and does change when any
 *    single other byte does; a frame rebuilt from the parsed headers with
 *    dray_wire_build_l3()/dray_wire_build() parses back the same.
 *  - The segmentation and PSN arithmetic of dev_wire.h on values taken
 *    from the input.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kshim.h"
#include "dev_wire.c"
#include "dev_icrc.c"

#include "fuzz_assert.h"


#define FRAME_MAX	(DRAY_IPV6_HLEN + DRAY_UDP_HLEN + 9000)
#define MSG_MAX		BIT(31)		/* DRAY_HW_MAX_MSG */

static u32 get32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/* Transport headers: parse, the errno contract, and build(parse(x)) == x. */
static int check_bth(const u8 *buf, u32 len, struct dray_pkt *pkt)
{
	u8 out[DRAY_HDR_MAX], want[DRAY_HDR_MAX];
	struct dray_pkt again;
	u32 f, hlen;
	int ret;

	ret = dray_wire_parse(buf, len, pkt);
	if (len < sizeof(struct dray_bth)) {
		FUZZ_ASSERT(ret == -EBADMSG);
		return ret;
	}
	f = dray_opcodes[buf[0]].flags;
	if (!f) {
		FUZZ_ASSERT(ret == -EOPNOTSUPP);
		return ret;
	}
	if (buf[1] & DRAY_BTH_TVER_MASK) {
		FUZZ_ASSERT(ret == -EPROTO);
		return ret;
	}
	hlen = dray_wire_hdr_len(f);
	if (len < hlen) {
		FUZZ_ASSERT(ret == -EBADMSG);
		return ret;
	}
	FUZZ_ASSERT(ret >= 0 && (u32)ret == hlen && hlen <= DRAY_HDR_MAX);
	FUZZ_ASSERT(pkt->opcode == buf[0] && pkt->pad <= 3);
	FUZZ_ASSERT(pkt->qpn <= DRAY_QPN_MASK && pkt->psn <= DRAY_PSN_MASK);
	FUZZ_ASSERT(pkt->msn <= DRAY_AETH_MSN_MASK);
	FUZZ_ASSERT(pkt->src_qpn <= DRAY_QPN_MASK);
	FUZZ_ASSERT(pkt->xrc_srqn <= DRAY_XRC_SRQN_MASK);
	FUZZ_ASSERT(pkt->resv8a == buf[4]);
	FUZZ_ASSERT(pkt->se == !!(buf[1] & DRAY_BTH_SE));
	FUZZ_ASSERT(pkt->ackreq == !!(buf[8] & 0x80));

	/* Build it again: the bytes the parser keeps come back unchanged. */
	FUZZ_ASSERT(dray_wire_build(pkt, out) == hlen);
	memcpy(want, buf, hlen);
	want[1] &= ~DRAY_BTH_MIG;
	want[4] = 0;				/* resv8a */
	want[8] &= 0x80;			/* AckReq; reserved 7 bits */
	if (f & DRAY_OPF_DETH)
		want[sizeof(struct dray_bth) + 4] = 0;	/* DETH: sqpn [31:24] */
	if (f & DRAY_OPF_XRCETH)	/* right after the BTH; [31:24] reserved */
		want[sizeof(struct dray_bth)] = 0;
	if (f & DRAY_OPF_FETH) {
		/* FETH (never with a DETH): only [5:0] are kept. */
		u8 *feth = want + sizeof(struct dray_bth);

		memset(feth, 0, 3);
		feth[3] &= DRAY_FETH_SEL_MASK | DRAY_FETH_PLT_MASK;
	}
	FUZZ_ASSERT(!memcmp(out, want, hlen));

	FUZZ_ASSERT(dray_wire_parse(out, hlen, &again) == (int)hlen);
	again.resv8a = pkt->resv8a;
	FUZZ_ASSERT(!memcmp(&again, pkt, sizeof(again)));
	return ret;
}

/* IP and UDP: the success and failure contract of dray_wire_parse_l3(). */
static int check_l3(const u8 *ip, u32 len, bool ipv6, struct dray_wire_l3 *l3)
{
	u32 avail = len < DRAY_IPV6_HLEN + DRAY_UDP_HLEN + DRAY_HDR_MAX ?
		    len : DRAY_IPV6_HLEN + DRAY_UDP_HLEN + DRAY_HDR_MAX;
	int ret = dray_wire_parse_l3(ip, avail, len, ipv6, l3);

	if (ret) {
		FUZZ_ASSERT(ret == -EBADMSG);
		return ret;
	}
	FUZZ_ASSERT(l3->ipv6 == ipv6);
	FUZZ_ASSERT(l3->ip_hlen == (ipv6 ? DRAY_IPV6_HLEN : DRAY_IPV4_HLEN));
	FUZZ_ASSERT(l3->ip_hlen + DRAY_UDP_HLEN <= avail);
	FUZZ_ASSERT((u64)l3->ip_hlen + DRAY_UDP_HLEN + l3->udp_len <= len);
	FUZZ_ASSERT((ip[l3->ip_hlen + 2] << 8 | ip[l3->ip_hlen + 3]) ==
		    DRAY_ROCE_UDP_PORT);
	if (!ipv6) {
		FUZZ_ASSERT(ip[0] == 0x45 && ip[9] == DRAY_IPPROTO_UDP);
		FUZZ_ASSERT(dray_wire_ip_csum(ip, DRAY_IPV4_HLEN) == 0);
		FUZZ_ASSERT(!memcmp(l3->sgid + 12, ip + 12, 4));
		FUZZ_ASSERT(!memcmp(l3->dgid + 12, ip + 16, 4));
	} else {
		FUZZ_ASSERT((ip[0] >> 4) == 6 && ip[6] == DRAY_IPPROTO_UDP);
		FUZZ_ASSERT(!memcmp(l3->sgid, ip + 8, 16));
	}
	return 0;
}

/* The ICRC of a frame whose UDP payload is @udp_len bytes (ICRC last). */
static u32 frame_icrc(const u8 *ip, bool ipv6, u32 ip_hlen, u32 hlen,
		      u32 udp_len)
{
	const u8 *l4 = ip + ip_hlen;
	u32 crc = dray_icrc_begin(ip, ipv6, l4, DRAY_UDP_HLEN + hlen);

	crc = dray_icrc_update(crc, l4 + DRAY_UDP_HLEN + hlen,
			       udp_len - hlen - DRAY_ICRC_BYTES);
	return dray_icrc_final(crc);
}

/* Is byte @i of the frame one the ICRC treats as all ones? */
static bool icrc_variant(u32 i, bool ipv6, u32 ip_hlen)
{
	u32 udp = ip_hlen;

	if (ipv6 && (i == 0 || i == 1 || i == 2 || i == 3 || i == 7))
		return true;	/* byte 0: only its low nibble, see below */
	if (!ipv6 && (i == 1 || i == 8 || i == 10 || i == 11))
		return true;
	return i == udp + 6 || i == udp + 7 || i == udp + DRAY_UDP_HLEN + 4;
}

static void check_icrc(u8 *f, u32 len, bool ipv6,
		       const struct dray_wire_l3 *l3, u32 hlen, u8 sel)
{
	u32 pay_off, pay_len, udp_len = l3->udp_len, pos, crc, crc2;
	u8 save, pad = (f[l3->ip_hlen + DRAY_UDP_HLEN + 1] &
			DRAY_BTH_PAD_MASK) >> DRAY_BTH_PAD_SHIFT;

	/* The receive path's payload arithmetic (dray_xport_rx()). */
	if (udp_len < hlen + pad + DRAY_ICRC_BYTES)
		return;
	pay_off = l3->ip_hlen + DRAY_UDP_HLEN + hlen;
	pay_len = udp_len - hlen - pad - DRAY_ICRC_BYTES;
	FUZZ_ASSERT((u64)pay_off + pay_len + pad + DRAY_ICRC_BYTES <= len);
	FUZZ_ASSERT(pay_off + pay_len + pad + DRAY_ICRC_BYTES ==
		    l3->ip_hlen + DRAY_UDP_HLEN + udp_len);

	crc = frame_icrc(f, ipv6, l3->ip_hlen, hlen, udp_len);

	/* One byte of the ICRC'd part flipped: the ICRC must see it. */
	pos = sel % (l3->ip_hlen + DRAY_UDP_HLEN + udp_len - DRAY_ICRC_BYTES);
	save = f[pos];
	if (ipv6 && pos == 0) {
		f[pos] ^= 0x0f;		/* traffic class: variant */
		crc2 = frame_icrc(f, ipv6, l3->ip_hlen, hlen, udp_len);
		FUZZ_ASSERT(crc2 == crc);
		f[pos] = save ^ 0xf0;	/* version: invariant */
		crc2 = frame_icrc(f, ipv6, l3->ip_hlen, hlen, udp_len);
		FUZZ_ASSERT(crc2 != crc);
	} else {
		f[pos] ^= 0x5a;
		crc2 = frame_icrc(f, ipv6, l3->ip_hlen, hlen, udp_len);
		if (icrc_variant(pos, ipv6, l3->ip_hlen))
			FUZZ_ASSERT(crc2 == crc);
		else
			FUZZ_ASSERT(crc2 != crc);
	}
	f[pos] = save;
}

/*
 * Rebuild the frame from what was parsed, with the repo's own builders;
 * it must parse back to the same headers and lengths.
 */
static void check_rebuild(const u8 *f, bool ipv6,
			  const struct dray_wire_l3 *l3,
			  const struct dray_pkt *pkt, u32 hlen)
{
	static u8 out[DRAY_ETH_HLEN + FRAME_MAX];
	struct dray_wire_addr a = { .ipv6 = ipv6 };
	struct dray_wire_l3 l3b;
	struct dray_pkt p2;
	u32 l2l4, rest = l3->udp_len - hlen;
	const u8 *ip2;

	memcpy(a.sgid, l3->sgid, 16);
	memcpy(a.dgid, l3->dgid, 16);
	a.sport = (u16)(f[l3->ip_hlen] << 8 | f[l3->ip_hlen + 1]);
	a.tclass = ipv6 ? (u8)(get32(f) >> 20) : f[1];
	a.flow_label = ipv6 ? get32(f) & 0xfffff : 0;
	a.hop_limit = ipv6 ? f[7] : f[8];
	l2l4 = dray_wire_build_l3(&a, l3->udp_len, out);
	FUZZ_ASSERT(l2l4 == DRAY_ETH_HLEN + l3->ip_hlen + DRAY_UDP_HLEN);
	FUZZ_ASSERT(dray_wire_build(pkt, out + l2l4) == hlen);
	memcpy(out + l2l4 + hlen, f + l3->ip_hlen + DRAY_UDP_HLEN + hlen, rest);

	ip2 = out + DRAY_ETH_HLEN;
	FUZZ_ASSERT(dray_wire_parse_l3(ip2, l3->ip_hlen + DRAY_UDP_HLEN + hlen,
				       l3->ip_hlen + DRAY_UDP_HLEN + l3->udp_len,
				       ipv6, &l3b) == 0);
	FUZZ_ASSERT(l3b.udp_len == l3->udp_len);
	FUZZ_ASSERT(!memcmp(l3b.sgid, l3->sgid, 16));
	FUZZ_ASSERT(!memcmp(l3b.dgid, l3->dgid, 16));
	FUZZ_ASSERT(dray_wire_parse(ip2 + l3->ip_hlen + DRAY_UDP_HLEN, hlen,
				    &p2) == (int)hlen);
	p2.resv8a = pkt->resv8a;
	FUZZ_ASSERT(!memcmp(&p2, pkt, sizeof(p2)));
}

/* Segmentation and PSN arithmetic on input-chosen values. */
static void check_arith(const u8 *d, size_t n)
{
	u32 len, a, b, mtu, npkts, i, sum = 0;
	u8 mcode;
	s32 c;

	if (n < 9)
		return;
	len = get32(d) & (MSG_MAX - 1);
	a = get32(d + 4) & DRAY_PSN_MASK;
	mcode = d[8] % 5 + 1;
	mtu = dray_mtu_bytes(mcode);
	FUZZ_ASSERT(mtu >= 256 && mtu <= 4096);
	npkts = dray_wire_npkts(len, mtu);
	FUZZ_ASSERT(npkts >= 1 && (u64)(npkts - 1) * mtu <= len);
	FUZZ_ASSERT((u64)npkts * mtu >= len);
	/* Sum the segments of the first and last few packets only. */
	for (i = 0; i < npkts && i < 4; i++) {
		u32 s = dray_wire_seg_len(len, mtu, i);
		u32 pos = dray_wire_pos(i, npkts);

		FUZZ_ASSERT(s <= mtu && (i + 1 == npkts || s == mtu));
		FUZZ_ASSERT(!!(pos & DRAY_OPF_START) == (i == 0));
		FUZZ_ASSERT(!!(pos & DRAY_OPF_END) == (i + 1 == npkts));
		sum += s;
	}
	if (npkts <= 4)
		FUZZ_ASSERT(sum == len);
	else
		FUZZ_ASSERT(dray_wire_seg_len(len, mtu, npkts - 1) ==
			    len - (npkts - 1) * mtu);
	FUZZ_ASSERT(dray_wire_seg_len(len, mtu, npkts) == 0);

	b = dray_psn_add(a, len);
	FUZZ_ASSERT(b <= DRAY_PSN_MASK);
	c = dray_psn_cmp(b, a);
	FUZZ_ASSERT(c > -(1 << 23) - 1 && c < (1 << 23));
	FUZZ_ASSERT(dray_psn_add(a, (u32)c) == b);
	if (c != -(1 << 23))
		FUZZ_ASSERT(dray_psn_cmp(a, b) == -c);
	FUZZ_ASSERT((dray_wire_sport(a) & 0xc000) == 0xc000);
	FUZZ_ASSERT(dray_wire_flow_label(a, b) <= 0xfffff);
	for (i = 0; i < DRAY_WQE_OPCODE_MAX; i++) {
		u32 pos = d[8] & 1 ? DRAY_OPF_START : 0;
		int op;

		pos |= d[8] & 2 ? DRAY_OPF_END : 0;
		op = dray_wire_req_opcode(i, pos);
		if (op < 0)
			continue;
		FUZZ_ASSERT(dray_opcodes[op].flags & DRAY_OPF_REQ);
		FUZZ_ASSERT((dray_opcodes[op].flags &
			     (DRAY_OPF_START | DRAY_OPF_END)) == pos);
	}
	i = dray_wire_read_resp_opcode(d[8] & 3 ? DRAY_OPF_END : 0);
	FUZZ_ASSERT(dray_opcodes[i].flags & DRAY_OPF_RESP);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static u8 frame[FRAME_MAX];
	struct dray_wire_l3 l3;
	struct dray_pkt pkt;
	u32 len, l4;
	bool ipv6;
	int hlen;

	if (size < 1)
		return 0;
	check_arith(data + 1, size - 1);
	ipv6 = data[0] & 1;
	len = size - 1 < FRAME_MAX ? size - 1 : FRAME_MAX;
	/* A copy: the ICRC checks flip bytes, and ASan sees its bounds. */
	memcpy(frame, data + 1, len);

	/* The transport headers alone, at the start of the input. */
	check_bth(frame, len, &pkt);

	if (check_l3(frame, len, ipv6, &l3))
		return 0;
	l4 = l3.ip_hlen + DRAY_UDP_HLEN;
	hlen = check_bth(frame + l4, l3.udp_len, &pkt);
	if (hlen < 0 || l3.udp_len < (u32)hlen + DRAY_ICRC_BYTES)
		return 0;
	check_icrc(frame, len, ipv6, &l3, hlen, data[0] >> 1);
	check_rebuild(frame, ipv6, &l3, &pkt, hlen);
	return 0;
}
