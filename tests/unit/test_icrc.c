// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RoCEv2 ICRC (drivers/dray/dev/dev_icrc.c) against known answers
 * computed outside this code base (Python's zlib over a pseudo packet it
 * built itself) and against a bit-at-a-time CRC over a pseudo packet this
 * test masks on its own.
 */
#include <stdlib.h>

#include "kshim.h"
#include "dev_wire.c"
#include "dev_icrc.c"

#include "unit.h"

/* CRC-32 one bit at a time, straight from the definition. */
static u32 ref_crc32(const u8 *p, size_t len)
{
	u32 crc = 0xffffffffU;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320U : crc >> 1;
	}
	return ~crc;
}

/*
 * Reference ICRC of a packet from its IP header to just before the ICRC:
 * build the pseudo packet field by field, then CRC it in one go.
 */
static u32 ref_icrc(const u8 *pkt, size_t len, bool ipv6)
{
	u8 buf[2048];
	size_t l3 = ipv6 ? 40 : 20;

	memset(buf, 0xff, 8);
	memcpy(buf + 8, pkt, len);
	if (ipv6) {
		buf[8] = 0x6f;			/* version 6, TC all ones */
		memset(buf + 9, 0xff, 3);	/* TC, flow label */
		buf[8 + 7] = 0xff;		/* hop limit */
	} else {
		buf[8 + 1] = 0xff;		/* TOS */
		buf[8 + 8] = 0xff;		/* TTL */
		buf[8 + 10] = 0xff;		/* checksum */
		buf[8 + 11] = 0xff;
	}
	buf[8 + l3 + 6] = 0xff;			/* UDP checksum */
	buf[8 + l3 + 7] = 0xff;
	buf[8 + l3 + 8 + 4] = 0xff;		/* BTH resv8a */
	return ref_crc32(buf, 8 + len);
}

static u32 dray_icrc(const u8 *pkt, size_t len, bool ipv6, u32 hdr_len)
{
	size_t l3 = ipv6 ? 40 : 20;
	u32 crc;

	crc = dray_icrc_begin(pkt, ipv6, pkt + l3, DRAY_UDP_HLEN + hdr_len);
	crc = dray_icrc_update(crc, pkt + l3 + DRAY_UDP_HLEN + hdr_len,
			       len - l3 - DRAY_UDP_HLEN - hdr_len);
	return dray_icrc_final(crc);
}

static size_t unhex(const char *s, u8 *out)
{
	size_t n = 0;

	while (s[0] && s[1]) {
		unsigned int v;

		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = v;
		s += 2;
	}
	return n;
}

UNIT_TEST(crc_check_value)
{
	u8 ff[8];

	memset(ff, 0xff, sizeof(ff));
	CHECK_EQ(ref_crc32((const u8 *)"123456789", 9), 0xcbf43926U);
	CHECK_EQ(~crc32_le(~0U, (const u8 *)"123456789", 9), 0xcbf43926U);
	/* The CRC state after the pseudo LRH, as rxe_icrc.c states it. */
	CHECK_EQ(crc32_le(~0U, ff, 8), 0xdebb20e3U);
}

/* IPv4 RDMA WRITE Only, 5 bytes of payload, 3 pad bytes (Python zlib). */
UNIT_TEST(known_answer_ipv4)
{
	static const char hex[] =
		"45280044123440004011144b0a0000010a000002c12312b70030000"
		"00a30ffff000000118000000500000000123456780000abcd000000"
		"0568656c6c6f000000";
	u8 pkt[128];
	size_t n = unhex(hex, pkt);
	u32 icrc = dray_icrc(pkt, n, false, 28);
	__le32 wire = cpu_to_le32(icrc);
	static const u8 expect[4] = { 0xce, 0xef, 0xac, 0xc5 };

	CHECK_EQ(n, 64);
	CHECK_EQ(icrc, 0xc5acefceU);
	CHECK_EQ(ref_icrc(pkt, n, false), 0xc5acefceU);
	CHECK(!memcmp(&wire, expect, 4), "ICRC goes out LSB first");
}

/* IPv6 ACK with non-zero variant fields everywhere (Python zlib). */
UNIT_TEST(known_answer_ipv6)
{
	static const char hex[] =
		"65a12345001c1103fe800000000000000000000000000001fe800000"
		"000000000000000000000002d00012b7001cbeef1100ffffc0001234"
		"00abcdef1f000042";
	u8 pkt[128];
	size_t n = unhex(hex, pkt);

	CHECK_EQ(n, 40 + 8 + 16);
	CHECK_EQ(dray_icrc(pkt, n, true, 16), 0xe4fdc4a5U);
	CHECK_EQ(ref_icrc(pkt, n, true), 0xe4fdc4a5U);
}

/*
 * Frames Soft-RoCE (rdma_rxe of Linux 6.1.x) sent to a dray QP (QPN 0x99)
 * in the VM, captured with tcpdump: IP header to ICRC. Parsing them and
 * recomputing their ICRC shows dray reads what a third implementation
 * writes.
 */
static const struct {
	const char	*name;
	const char	*hex;
	u8		opcode;
	u32		psn;
	bool		ackreq;
} rxe_frames[] = {
	{ "RDMA WRITE Only, 8 bytes",
	  "45000044166a40004011103d0a0000010a000002ca2912b7003000000a00ffff"
	  "000000998065444900007f00003000000000005a0000000844"
	  "4f4e45444f4e45ba1736de", DRAY_OP_WRITE_ONLY, 0x654449, true },
	{ "FetchAdd",
	  "4500004816684000401110"
	  "3b0a0000010a000002ca2912b700340000140"
	  "0ffff000000998065444700007f00002ffff80000005a0000"
	  "0000000000030000000000000000" "8a0c8419",
	  DRAY_OP_FETCH_ADD, 0x654447, true },
	{ "RDMA READ Request",
	  "4500003c166640004011104"
	  "90a0000010a000002ca2912b7002800000c00ffff000000"
	  "998065438300007f00000000000000005a00030d4083fba05a",
	  DRAY_OP_READ_REQUEST, 0x654383, true },
	{ "ATOMIC Acknowledge",
	  "45000038156b400040111148"
	  "0a0000010a000002ca2912b700240000120"
	  "0ffff00000099001236"
	  "3f1f0000030000000000"
	  "0003e8e4139822", DRAY_OP_ATOMIC_ACK, 0x12363f, false },
	{ "Acknowledge",
	  "45000030149d40004011121e0a0000010a000002ca2912b7001c00001100ffff"
	  "00000099001234751f0000006f8946b1", DRAY_OP_ACK, 0x123475, false },
};

UNIT_TEST(soft_roce_frames)
{
	unsigned int i;

	for (i = 0; i < sizeof(rxe_frames) / sizeof(rxe_frames[0]); i++) {
		struct dray_wire_l3 l3;
		struct dray_pkt p;
		u8 pkt[128];
		size_t n = unhex(rxe_frames[i].hex, pkt);
		int hlen;
		u32 want;

		CHECK(!dray_wire_parse_l3(pkt, n, n, false, &l3), "%s: IP/UDP",
		      rxe_frames[i].name);
		hlen = dray_wire_parse(pkt + 28, n - 28, &p);
		CHECK(hlen > 0 && p.opcode == rxe_frames[i].opcode &&
		      p.qpn == 0x99 && p.psn == rxe_frames[i].psn &&
		      p.ackreq == rxe_frames[i].ackreq && p.pkey == 0xffff,
		      "%s: BTH", rxe_frames[i].name);
		CHECK_EQ(l3.udp_len, n - 28);
		want = pkt[n - 4] | pkt[n - 3] << 8 | pkt[n - 2] << 16 |
		       (u32)pkt[n - 1] << 24;
		CHECK(hlen > 0 && dray_icrc(pkt, n - 4, false, hlen) == want,
		      "%s: ICRC %08x", rxe_frames[i].name, want);
		CHECK(ref_icrc(pkt, n - 4, false) == want, "%s: reference",
		      rxe_frames[i].name);
	}
	/* Fields of two of them, as rxe put them. */
	{
		struct dray_pkt p;
		u8 pkt[128];
		size_t n = unhex(rxe_frames[0].hex, pkt);

		dray_wire_parse(pkt + 28, n - 28, &p);
		CHECK(p.va == 0x7f0000300000ULL && p.rkey == 0x5a &&
		      p.dma_len == 8 && !memcmp(pkt + 56, "DONEDONE", 8),
		      "WRITE Only RETH");
		n = unhex(rxe_frames[3].hex, pkt);
		dray_wire_parse(pkt + 28, n - 28, &p);
		CHECK(p.syndrome == 0x1f && p.msn == 3 && p.orig == 1000,
		      "ATOMIC Acknowledge AETH/AtomicAckETH");
	}
}

/* Build a random packet with dray_wire_build_l3/build; return its length. */
static size_t random_packet(u8 *frame, bool ipv6, u32 *hdr_len, u32 *l3off)
{
	struct dray_wire_addr a = { .ipv6 = ipv6 };
	struct dray_pkt p = { 0 };
	u32 pay = rand() % 1500, i, off, hl;
	static const u8 ops[] = {
		DRAY_OP_SEND_FIRST, DRAY_OP_WRITE_ONLY_IMM, DRAY_OP_ACK,
		DRAY_OP_CMP_SWAP, DRAY_OP_READ_RESP_LAST, DRAY_OP_ATOMIC_ACK,
	};

	for (i = 0; i < 16; i++) {
		a.sgid[i] = rand();
		a.dgid[i] = rand();
	}
	a.tclass = rand();
	a.hop_limit = rand();
	a.flow_label = rand();
	a.sport = rand();
	p.opcode = ops[rand() % sizeof(ops)];
	if (!(dray_opcodes[p.opcode].flags & DRAY_OPF_PAYLOAD))
		pay = 0;
	p.pad = dray_wire_pad(pay);
	p.qpn = rand();
	p.psn = rand();
	p.ackreq = rand() & 1;
	p.va = ((u64)rand() << 32) | rand();
	p.rkey = rand();
	p.syndrome = rand();
	hl = dray_wire_hdr_len(dray_opcodes[p.opcode].flags);
	off = dray_wire_build_l3(&a, hl + pay + p.pad + 4, frame);
	dray_wire_build(&p, frame + off);
	frame[off - DRAY_UDP_HLEN + 6] = rand();	/* any UDP checksum */
	frame[off + 4] = rand() & 0xc0;			/* FECN, BECN */
	for (i = 0; i < pay; i++)
		frame[off + hl + i] = rand();
	memset(frame + off + hl + pay, 0, p.pad);
	*hdr_len = hl;
	*l3off = DRAY_ETH_HLEN;
	return off + hl + pay + p.pad;
}

UNIT_TEST(matches_bitwise_reference)
{
	u8 frame[2048];
	int i;

	srand(1);
	for (i = 0; i < 400; i++) {
		bool v6 = i & 1;
		u32 hl, l3;
		size_t end = random_packet(frame, v6, &hl, &l3);
		u32 a = dray_icrc(frame + l3, end - l3, v6, hl);
		u32 b = ref_icrc(frame + l3, end - l3, v6);

		CHECK(a == b, "packet %d: %08x != %08x", i, a, b);
	}
}

UNIT_TEST(variant_fields_do_not_count)
{
	u8 frame[2048], copy[2048];
	int i;

	srand(2);
	for (i = 0; i < 100; i++) {
		bool v6 = i & 1;
		u32 hl, l3, a, b;
		size_t end = random_packet(frame, v6, &hl, &l3);
		u8 *ip = frame + l3, *udp = ip + (v6 ? 40 : 20);

		memcpy(copy, frame, end);
		a = dray_icrc(frame + l3, end - l3, v6, hl);
		if (v6) {
			ip[0] ^= 0x0f;
			ip[1] ^= 0xa5;
			ip[3] ^= 0x5a;
			ip[7] ^= 0x33;
		} else {
			ip[1] ^= 0xfc;
			ip[8] ^= 0x01;
			ip[10] ^= 0x77;
		}
		udp[6] ^= 0x12;
		udp[8 + 4] ^= 0xc0;
		b = dray_icrc(frame + l3, end - l3, v6, hl);
		CHECK(a == b, "variant fields changed the ICRC (%d)", i);

		/* An invariant bit anywhere does change it. */
		memcpy(frame, copy, end);
		frame[l3 + (v6 ? 40 : 20) + 8 + 11] ^= 0x01;	/* PSN */
		b = dray_icrc(frame + l3, end - l3, v6, hl);
		CHECK(a != b, "PSN bit did not change the ICRC (%d)", i);
		memcpy(frame, copy, end);
		frame[end - 1 - (rand() % 8)] ^= 0x80;
		b = dray_icrc(frame + l3, end - l3, v6, hl);
		CHECK(a != b, "payload bit did not change the ICRC (%d)", i);
	}
}

/* Any split of the payload into update() calls gives the same ICRC. */
UNIT_TEST(incremental)
{
	u8 frame[2048];
	u32 hl, l3, crc, whole, pos, step;
	size_t end;
	const u8 *p;

	srand(3);
	end = random_packet(frame, false, &hl, &l3);
	whole = dray_icrc(frame + l3, end - l3, false, hl);
	p = frame + l3 + 20 + 8 + hl;
	for (step = 1; step < 64; step += 7) {
		crc = dray_icrc_begin(frame + l3, false, frame + l3 + 20,
				      8 + hl);
		for (pos = 0; pos < end - (p - frame); pos += step) {
			u32 n = step;

			if (pos + n > end - (p - frame))
				n = end - (p - frame) - pos;
			crc = dray_icrc_update(crc, p + pos, n);
		}
		CHECK_EQ(dray_icrc_final(crc), whole);
	}
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "crc_check_value", crc_check_value },
		{ "known_answer_ipv4", known_answer_ipv4 },
		{ "known_answer_ipv6", known_answer_ipv6 },
		{ "soft_roce_frames", soft_roce_frames },
		{ "matches_bitwise_reference", matches_bitwise_reference },
		{ "variant_fields_do_not_count", variant_fields_do_not_count },
		{ "incremental", incremental },
	};

	return unit_run("icrc", tests, sizeof(tests) / sizeof(tests[0]));
}
