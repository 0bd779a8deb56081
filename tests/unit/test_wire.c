// SPDX-License-Identifier: GPL-2.0-only
/*
 * RoCEv2 formats and transport arithmetic (drivers/dray/dev/dev_wire.[ch]):
 * header layouts against the byte offsets IBTA gives, the opcode table,
 * build/parse, IP/UDP headers, PSN arithmetic across the 2^24 wrap,
 * segmentation of messages up to 2 GiB, and the timer encodings.
 */
#include <stdlib.h>

#include "kshim.h"
#include "dev_wire.c"

#include "unit.h"

UNIT_TEST(header_layouts)
{
	CHECK_EQ(sizeof(struct dray_bth), 12);
	CHECK_EQ(offsetof(struct dray_bth, pkey), 2);
	CHECK_EQ(offsetof(struct dray_bth, qpn), 4);
	CHECK_EQ(offsetof(struct dray_bth, apsn), 8);
	CHECK_EQ(sizeof(struct dray_reth), 16);
	CHECK_EQ(offsetof(struct dray_reth, rkey), 8);
	CHECK_EQ(offsetof(struct dray_reth, dma_len), 12);
	CHECK_EQ(sizeof(struct dray_atmeth), 28);
	CHECK_EQ(offsetof(struct dray_atmeth, rkey), 8);
	CHECK_EQ(offsetof(struct dray_atmeth, swap_add), 12);
	CHECK_EQ(offsetof(struct dray_atmeth, compare), 20);
	CHECK_EQ(sizeof(struct dray_aeth), 4);
	CHECK_EQ(sizeof(struct dray_atmack), 8);
	CHECK_EQ(sizeof(struct dray_immdt), 4);
	CHECK_EQ(sizeof(struct dray_ieth), 4);
	CHECK_EQ(sizeof(struct dray_deth), 8);
	CHECK_EQ(offsetof(struct dray_deth, sqpn), 4);
}

/* Opcode values, and BTH + extended header bytes per IBTA. */
UNIT_TEST(opcode_table)
{
	static const struct { u8 op; u32 len; const char *name; } want[] = {
		{ 0x00, 12, "RC SEND First" },
		{ 0x01, 12, "RC SEND Middle" },
		{ 0x02, 12, "RC SEND Last" },
		{ 0x03, 16, "RC SEND Last with Immediate" },
		{ 0x04, 12, "RC SEND Only" },
		{ 0x05, 16, "RC SEND Only with Immediate" },
		{ 0x06, 28, "RC RDMA WRITE First" },
		{ 0x07, 12, "RC RDMA WRITE Middle" },
		{ 0x08, 12, "RC RDMA WRITE Last" },
		{ 0x09, 16, "RC RDMA WRITE Last with Immediate" },
		{ 0x0a, 28, "RC RDMA WRITE Only" },
		{ 0x0b, 32, "RC RDMA WRITE Only with Immediate" },
		{ 0x0c, 28, "RC RDMA READ Request" },
		{ 0x0d, 16, "RC RDMA READ response First" },
		{ 0x0e, 12, "RC RDMA READ response Middle" },
		{ 0x0f, 16, "RC RDMA READ response Last" },
		{ 0x10, 16, "RC RDMA READ response Only" },
		{ 0x11, 16, "RC Acknowledge" },
		{ 0x12, 24, "RC ATOMIC Acknowledge" },
		{ 0x13, 40, "RC CmpSwap" },
		{ 0x14, 40, "RC FetchAdd" },
		{ 0x16, 16, "RC SEND Last with Invalidate" },
		{ 0x17, 16, "RC SEND Only with Invalidate" },
		{ 0x1c, 32, "RC FLUSH" },
		{ 0x1d, 28, "RC ATOMIC WRITE" },
		{ 0x20, 12, "UC SEND First" },
		{ 0x21, 12, "UC SEND Middle" },
		{ 0x22, 12, "UC SEND Last" },
		{ 0x23, 16, "UC SEND Last with Immediate" },
		{ 0x24, 12, "UC SEND Only" },
		{ 0x25, 16, "UC SEND Only with Immediate" },
		{ 0x26, 28, "UC RDMA WRITE First" },
		{ 0x27, 12, "UC RDMA WRITE Middle" },
		{ 0x28, 12, "UC RDMA WRITE Last" },
		{ 0x29, 16, "UC RDMA WRITE Last with Immediate" },
		{ 0x2a, 28, "UC RDMA WRITE Only" },
		{ 0x2b, 32, "UC RDMA WRITE Only with Immediate" },
		{ 0x64, 20, "UD SEND Only" },
		{ 0x65, 24, "UD SEND Only with Immediate" },
		{ 0xa0, 16, "XRC SEND First" },
		{ 0xa1, 16, "XRC SEND Middle" },
		{ 0xa2, 16, "XRC SEND Last" },
		{ 0xa3, 20, "XRC SEND Last with Immediate" },
		{ 0xa4, 16, "XRC SEND Only" },
		{ 0xa5, 20, "XRC SEND Only with Immediate" },
		{ 0xa6, 32, "XRC RDMA WRITE First" },
		{ 0xa7, 16, "XRC RDMA WRITE Middle" },
		{ 0xa8, 16, "XRC RDMA WRITE Last" },
		{ 0xa9, 20, "XRC RDMA WRITE Last with Immediate" },
		{ 0xaa, 32, "XRC RDMA WRITE Only" },
		{ 0xab, 36, "XRC RDMA WRITE Only with Immediate" },
		{ 0xac, 32, "XRC RDMA READ Request" },
		{ 0xad, 16, "XRC RDMA READ response First" },
		{ 0xae, 12, "XRC RDMA READ response Middle" },
		{ 0xaf, 16, "XRC RDMA READ response Last" },
		{ 0xb0, 16, "XRC RDMA READ response Only" },
		{ 0xb1, 16, "XRC Acknowledge" },
		{ 0xb2, 24, "XRC ATOMIC Acknowledge" },
		{ 0xb3, 44, "XRC CmpSwap" },
		{ 0xb4, 44, "XRC FetchAdd" },
		{ 0xb6, 20, "XRC SEND Last with Invalidate" },
		{ 0xb7, 20, "XRC SEND Only with Invalidate" },
	};
	unsigned int i, valid = 0;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct dray_opcode_info *o = &dray_opcodes[want[i].op];

		CHECK(o->flags, "opcode %#x valid", want[i].op);
		CHECK(o->name && !strcmp(o->name, want[i].name),
		      "opcode %#x name %s", want[i].op, o->name);
		CHECK(dray_wire_hdr_len(o->flags) == want[i].len,
		      "opcode %#x header %u, want %u", want[i].op,
		      dray_wire_hdr_len(o->flags), want[i].len);
		CHECK(!!(o->flags & DRAY_OPF_REQ) != !!(o->flags & DRAY_OPF_RESP),
		      "opcode %#x is request xor response", want[i].op);
		CHECK(!!(o->flags & DRAY_OPF_RC) + !!(o->flags & DRAY_OPF_UC) +
		      !!(o->flags & DRAY_OPF_UD) +
		      !!(o->flags & DRAY_OPF_XRC) == 1,
		      "opcode %#x is one of RC, UC, UD, XRC", want[i].op);
		/*
		 * XRC: RC's operations, opcode plus 0xa0; an XRCETH in
		 * every request and in no response.
		 */
		if (o->flags & DRAY_OPF_XRC)
			CHECK(dray_wire_op(want[i].op) ==
			      (want[i].op & 0x1f) &&
			      (dray_opcodes[dray_wire_op(want[i].op)].flags &
			       ~DRAY_OPF_RC) ==
			      (o->flags & ~(DRAY_OPF_XRC | DRAY_OPF_XRCETH)) &&
			      !!(o->flags & DRAY_OPF_REQ) ==
			      !!(o->flags & DRAY_OPF_XRCETH),
			      "XRC opcode %#x is its RC opcode's twin",
			      want[i].op);
		/* UC has no responses; its opcodes are RC's plus 0x20. */
		if (o->flags & DRAY_OPF_UC)
			CHECK(!(o->flags & DRAY_OPF_RESP) &&
			      (dray_opcodes[want[i].op - DRAY_OP_UC].flags &
			       ~DRAY_OPF_RC) == (o->flags & ~DRAY_OPF_UC),
			      "UC opcode %#x is its RC opcode's twin",
			      want[i].op);
	}
	for (i = 0; i < 256; i++)
		valid += !!dray_opcodes[i].flags;
	CHECK_EQ(valid, sizeof(want) / sizeof(want[0]));
	CHECK_EQ(DRAY_HDR_MAX, 44);
}

/* An XRC SEND Only header by hand: the XRCETH right after the BTH. */
UNIT_TEST(xrc_bytes)
{
	struct dray_pkt p = {
		.opcode = DRAY_OP_XRC | DRAY_OP_SEND_ONLY_IMM, .pkey = 0xffff,
		.qpn = 0x10, .psn = 0x20, .xrc_srqn = 0x00abcdef,
		.imm = 0x44332211,	/* network order as stored */
	};
	static const u8 want[20] = {
		0xa5, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x10,
		0x00, 0x00, 0x00, 0x20,
		0x00, 0xab, 0xcd, 0xef,
		0x11, 0x22, 0x33, 0x44,
	};
	struct dray_pkt q;
	u8 buf[64];

	CHECK_EQ(dray_wire_build(&p, buf), 20);
	CHECK(!memcmp(buf, want, sizeof(want)), "XRC SEND Only Imm bytes");
	/* The XRCETH's reserved byte is not part of the SRQ number. */
	buf[12] = 0xff;
	CHECK_EQ(dray_wire_parse(buf, 20, &q), 20);
	CHECK_EQ(q.xrc_srqn, 0xabcdef);
	CHECK_EQ(dray_wire_op(q.opcode), DRAY_OP_SEND_ONLY_IMM);
}

/* A FLUSH header by hand: FETH (level MR, type global) before the RETH. */
UNIT_TEST(flush_bytes)
{
	struct dray_pkt p = {
		.opcode = DRAY_OP_FLUSH, .pkey = 0xffff, .qpn = 0x12,
		.psn = 0x345, .va = 0x1122334455667788ULL, .rkey = 0xaabbccdd,
		.dma_len = 0x100, .flush_type = 1, .flush_level = 1,
	};
	static const u8 want[32] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12,
		0x00, 0x00, 0x03, 0x45,
		0x00, 0x00, 0x00, 0x11,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x01, 0x00,
	};
	u8 buf[64];

	CHECK_EQ(dray_wire_build(&p, buf), 32);
	CHECK(!memcmp(buf, want, sizeof(want)), "FLUSH header bytes");
}

/* A WRITE First header assembled by hand, byte by byte. */
UNIT_TEST(build_bytes)
{
	struct dray_pkt p = {
		.opcode = DRAY_OP_WRITE_FIRST, .se = true, .pad = 2,
		.pkey = 0xffff, .qpn = 0x123456, .psn = 0xabcdef,
		.ackreq = true, .va = 0x0102030405060708ULL,
		.rkey = 0x11223344, .dma_len = 0x80000000U,
	};
	static const u8 want[28] = {
		0x06, 0xa0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x11, 0x22, 0x33, 0x44, 0x80, 0x00, 0x00, 0x00,
	};
	u8 buf[64];

	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ(dray_wire_build(&p, buf), 28);
	CHECK(!memcmp(buf, want, 28), "WRITE First bytes");
	CHECK_EQ(buf[28], 0xee);
}

UNIT_TEST(build_parse_roundtrip)
{
	u8 buf[64];
	int i, op;

	srand(4);
	for (op = 0; op < 256; op++) {
		u32 f = dray_opcodes[op].flags;

		if (!f)
			continue;
		for (i = 0; i < 20; i++) {
			struct dray_pkt a = { 0 }, b;
			u32 len;

			a.opcode = op;
			a.pad = rand() & 3;
			a.se = rand() & 1;
			a.ackreq = rand() & 1;
			a.pkey = rand();
			a.qpn = rand() & DRAY_QPN_MASK;
			a.psn = rand() & DRAY_PSN_MASK;
			if (f & (DRAY_OPF_RETH | DRAY_OPF_ATMETH))
				a.va = ((u64)rand() << 33) ^ rand();
			if (f & (DRAY_OPF_RETH | DRAY_OPF_ATMETH |
				 DRAY_OPF_IETH))
				a.rkey = rand();
			if (f & DRAY_OPF_RETH)
				a.dma_len = rand();
			if (f & DRAY_OPF_ATMETH) {
				a.swap_add = ((u64)rand() << 32) ^ rand();
				a.compare = ((u64)rand() << 31) ^ rand();
			}
			if (f & DRAY_OPF_AETH) {
				a.syndrome = rand();
				a.msn = rand() & DRAY_AETH_MSN_MASK;
			}
			if (f & DRAY_OPF_ATMACK)
				a.orig = ((u64)rand() << 32) ^ rand();
			if (f & DRAY_OPF_IMM)
				a.imm = rand();
			if (f & DRAY_OPF_DETH) {
				a.qkey = rand();
				a.src_qpn = rand() & DRAY_QPN_MASK;
			}
			if (f & DRAY_OPF_FETH) {
				a.flush_type = rand() & DRAY_FETH_PLT_MASK;
				a.flush_level = rand() & 3;
			}
			if (f & DRAY_OPF_XRCETH)
				a.xrc_srqn = rand() & DRAY_XRC_SRQN_MASK;
			len = dray_wire_build(&a, buf);
			CHECK_EQ(len, dray_wire_hdr_len(f));
			CHECK_EQ(dray_wire_parse(buf, len, &b), (int)len);
			CHECK(!memcmp(&a, &b, sizeof(a)), "opcode %#x", op);
			CHECK_EQ(dray_wire_parse(buf, len - 1, &b), -EBADMSG);
		}
	}
}

UNIT_TEST(parse_rejects)
{
	struct dray_pkt p = { .opcode = DRAY_OP_ACK, .pkey = 0xffff };
	u8 buf[64];
	u32 len = dray_wire_build(&p, buf);

	CHECK_EQ(dray_wire_parse(buf, 11, &p), -EBADMSG);
	buf[0] = 0x15;			/* reserved RC opcode */
	CHECK_EQ(dray_wire_parse(buf, len, &p), -EOPNOTSUPP);
	buf[0] = 0x81;			/* CNP: not a transport opcode here */
	CHECK_EQ(dray_wire_parse(buf, len, &p), -EOPNOTSUPP);
	buf[0] = DRAY_OP_ACK;
	buf[1] = 0x01;			/* TVer 1 */
	CHECK_EQ(dray_wire_parse(buf, len, &p), -EPROTO);
	buf[1] = 0;
	buf[4] = 0xc0;			/* FECN, BECN are reported */
	CHECK_EQ(dray_wire_parse(buf, len, &p), 16);
	CHECK_EQ(p.resv8a, 0xc0);
}

UNIT_TEST(ipv4_udp)
{
	struct dray_wire_addr a = {
		.smac = { 2, 0, 0, 0, 0, 1 }, .dmac = { 2, 0, 0, 0, 0, 2 },
		.sgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
		.tclass = 0x68, .hop_limit = 0, .sport = 0xc001,
	};
	struct dray_wire_l3 l3;
	u8 f[128];
	u32 n = dray_wire_build_l3(&a, 32, f);

	CHECK_EQ(n, 42);
	CHECK(f[12] == 0x08 && f[13] == 0x00, "ethertype IPv4");
	CHECK_EQ(f[14], 0x45);
	CHECK_EQ(f[15], 0x68);
	CHECK_EQ((f[16] << 8) | f[17], 20 + 8 + 32);
	CHECK_EQ(f[14 + 8], 64);		/* TTL 0 means default */
	CHECK_EQ(dray_wire_ip_csum(f + 14, 20), 0);
	CHECK_EQ((f[34 + 2] << 8) | f[34 + 3], 4791);
	CHECK_EQ((f[34 + 4] << 8) | f[34 + 5], 40);
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), 0);
	CHECK_EQ(l3.udp_len, 32);
	CHECK_EQ(l3.ip_hlen, 20);
	CHECK(!memcmp(l3.sgid, a.sgid, 16), "source GID");
	CHECK(!memcmp(l3.dgid, a.dgid, 16), "destination GID");
	/* Ethernet padding after the IP packet is fine. */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 80, false, &l3), 0);
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 59, false, &l3), -EBADMSG);
	CHECK_EQ(dray_wire_parse_l3(f + 14, 27, 60, false, &l3), -EBADMSG);
	f[14 + 6] |= 0x20;			/* MF */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), -EBADMSG);
	f[14 + 6] &= ~0x20;
	f[14 + 8]--;				/* checksum now wrong */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), -EBADMSG);
	f[14 + 8]++;
	f[14] = 0x46;				/* options */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), -EBADMSG);
	f[14] = 0x45;
	f[34 + 3] ^= 1;				/* port 4790 */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), -EBADMSG);
	f[34 + 3] ^= 1;
	f[34 + 5]++;				/* UDP length */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 28, 60, false, &l3), -EBADMSG);
}

UNIT_TEST(ipv6_udp)
{
	struct dray_wire_addr a = {
		.ipv6 = true,
		.sgid = { 0xfe, 0x80, [15] = 1 }, .dgid = { 0xfe, 0x80, [15] = 2 },
		.tclass = 0xb8, .hop_limit = 255, .flow_label = 0xabcde,
		.sport = 0xd123,
	};
	struct dray_wire_l3 l3;
	u8 f[128];
	u32 n = dray_wire_build_l3(&a, 16, f);

	CHECK_EQ(n, 62);
	CHECK(f[12] == 0x86 && f[13] == 0xdd, "ethertype IPv6");
	CHECK_EQ(f[14], 0x6b);
	CHECK_EQ(f[15], 0x8a);
	CHECK_EQ(f[16], 0xbc);
	CHECK_EQ(f[17], 0xde);
	CHECK_EQ((f[18] << 8) | f[19], 24);
	CHECK_EQ(f[20], 17);
	CHECK_EQ(f[21], 255);
	CHECK_EQ(dray_wire_parse_l3(f + 14, 48, 64, true, &l3), 0);
	CHECK_EQ(l3.udp_len, 16);
	CHECK_EQ(l3.ip_hlen, 40);
	CHECK(!memcmp(l3.dgid, a.dgid, 16), "destination GID");
	CHECK_EQ(dray_wire_parse_l3(f + 14, 48, 63, true, &l3), -EBADMSG);
	f[20] = 0;				/* hop-by-hop options */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 48, 64, true, &l3), -EBADMSG);
	f[20] = 17;
	f[14] = 0x4b;				/* version 4 */
	CHECK_EQ(dray_wire_parse_l3(f + 14, 48, 64, true, &l3), -EBADMSG);
}

UNIT_TEST(udp_sport)
{
	u32 fl;

	/* The RDMA core's mapping: low 14 bits xor the top 6, in 0xc000.. */
	CHECK_EQ(dray_wire_sport(0), 0xc000);
	CHECK_EQ(dray_wire_sport(0xfffff), 0xc000 | (0x3fff ^ 0x3f));
	CHECK_EQ(dray_wire_sport(0x4001), 0xc000);
	for (fl = 0; fl < 0x100000; fl += 4099)
		CHECK(dray_wire_sport(fl) >= 0xc000, "fl %#x", fl);
	CHECK(dray_wire_flow_label(1, 2) <= 0xfffff, "20 bits");
	CHECK(dray_wire_flow_label(1, 2) != dray_wire_flow_label(2, 1) ||
	      dray_wire_flow_label(1, 3) != dray_wire_flow_label(3, 1),
	      "flow label depends on the QPNs");
}

UNIT_TEST(psn_wrap)
{
	CHECK_EQ(dray_psn_add(0xffffff, 1), 0);
	CHECK_EQ(dray_psn_add(0xfffff0, 0x20), 0x10);
	CHECK_EQ(dray_psn_add(5, 0x1000000), 5);
	CHECK_EQ(dray_psn_cmp(0, 0xffffff), 1);
	CHECK_EQ(dray_psn_cmp(0xffffff, 0), -1);
	CHECK_EQ(dray_psn_cmp(0x10, 0xfffff0), 0x20);
	CHECK_EQ(dray_psn_cmp(0xfffff0, 0x10), -0x20);
	CHECK_EQ(dray_psn_cmp(7, 7), 0);
	CHECK_EQ(dray_psn_cmp(0x7fffff, 0), 0x7fffff);
	CHECK_EQ(dray_psn_cmp(0x800000, 0), -0x800000);
	CHECK_EQ(dray_psn_cmp(0, 0x800001), 0x7fffff);
	/* Bits above the 24 are ignored. */
	CHECK_EQ(dray_psn_cmp(0x1000005, 3), 2);
}

UNIT_TEST(segmentation)
{
	static const u32 mtus[] = { 256, 512, 1024, 2048, 4096 };
	u32 i, len, n;

	CHECK_EQ(dray_mtu_bytes(1), 256);
	CHECK_EQ(dray_mtu_bytes(5), 4096);
	CHECK_EQ(dray_mtu_bytes(0), 0);
	CHECK_EQ(dray_mtu_bytes(6), 0);
	CHECK_EQ(dray_wire_npkts(0, 1024), 1);
	CHECK_EQ(dray_wire_npkts(1, 1024), 1);
	CHECK_EQ(dray_wire_npkts(1024, 1024), 1);
	CHECK_EQ(dray_wire_npkts(1025, 1024), 2);
	/* 2 GiB: the largest message, and its neighbours. */
	CHECK_EQ(dray_wire_npkts(0x80000000U, 256), 0x800000);
	CHECK_EQ(dray_wire_npkts(0x80000000U, 4096), 0x80000);
	CHECK_EQ(dray_wire_npkts(0x7fffffffU, 4096), 0x80000);
	CHECK_EQ(dray_wire_npkts(0x80000001U, 4096), 0x80001);
	CHECK_EQ(dray_wire_npkts(0xffffffffU, 256), 0x1000000);
	CHECK_EQ(dray_wire_seg_len(0x80000000U, 4096, 0x7ffff), 4096);
	CHECK_EQ(dray_wire_seg_len(0x80000000U - 3, 4096, 0x7ffff), 4093);
	CHECK_EQ(dray_wire_seg_len(0x80000000U, 4096, 0x80000), 0);
	CHECK_EQ(dray_wire_pos(0, 1), DRAY_OPF_START | DRAY_OPF_END);
	CHECK_EQ(dray_wire_pos(0, 0x80000), DRAY_OPF_START);
	CHECK_EQ(dray_wire_pos(0x7ffff, 0x80000), DRAY_OPF_END);
	CHECK_EQ(dray_wire_pos(7, 0x80000), 0);

	/* Every length up to 3 MTUs: packets cover the message exactly. */
	for (i = 0; i < 5; i++) {
		for (len = 0; len <= 3 * mtus[i] + 1; len++) {
			u32 sum = 0, k;

			n = dray_wire_npkts(len, mtus[i]);
			for (k = 0; k < n; k++) {
				u32 s = dray_wire_seg_len(len, mtus[i], k);

				if (k + 1 < n && s != mtus[i])
					break;
				if (len && !s)
					break;
				sum += s;
			}
			CHECK(k == n && sum == len, "len %u mtu %u", len,
			      mtus[i]);
			if (k != n || sum != len)
				return;
		}
	}
	CHECK_EQ(dray_wire_pad(0), 0);
	CHECK_EQ(dray_wire_pad(1), 3);
	CHECK_EQ(dray_wire_pad(6), 2);
	CHECK_EQ(dray_wire_pad(4095), 1);
}

UNIT_TEST(request_opcodes)
{
	const u32 F = DRAY_OPF_START, L = DRAY_OPF_END, M = 0;

	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND, F), DRAY_OP_SEND_FIRST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND, M), DRAY_OP_SEND_MIDDLE);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND, L), DRAY_OP_SEND_LAST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND, F | L), DRAY_OP_SEND_ONLY);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_IMM, L),
		 DRAY_OP_SEND_LAST_IMM);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_IMM, F), DRAY_OP_SEND_FIRST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_RDMA_WRITE, F),
		 DRAY_OP_WRITE_FIRST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_RDMA_WRITE_IMM, F | L),
		 DRAY_OP_WRITE_ONLY_IMM);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_RDMA_WRITE_IMM, M),
		 DRAY_OP_WRITE_MIDDLE);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_RDMA_READ, F | L),
		 DRAY_OP_READ_REQUEST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_ATOMIC_CMP_SWP, F | L),
		 DRAY_OP_CMP_SWAP);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_ATOMIC_FETCH_ADD, F | L),
		 DRAY_OP_FETCH_ADD);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_RDMA_READ, F), -1);
	/* SEND with invalidate: the IETH rides on the last packet only. */
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_INV, F), DRAY_OP_SEND_FIRST);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_INV, M),
		 DRAY_OP_SEND_MIDDLE);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_INV, L),
		 DRAY_OP_SEND_LAST_INV);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_SEND_INV, F | L),
		 DRAY_OP_SEND_ONLY_INV);
	/* Local operations put nothing on the wire. */
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_LOCAL_INV, F | L), -1);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_REG_MR, F | L), -1);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_BIND_MW, F | L), -1);
	/* IBTA 1.5: one packet each. */
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_ATOMIC_WRITE, F | L),
		 DRAY_OP_ATOMIC_WRITE);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_ATOMIC_WRITE, F), -1);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_FLUSH, F | L), DRAY_OP_FLUSH);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_FLUSH, M), -1);
	CHECK_EQ(dray_wire_req_opcode(DRAY_WQE_OPCODE_MAX, F | L), -1);
	CHECK_EQ(dray_wire_req_opcode(0xff, F | L), -1);
	CHECK_EQ(dray_wire_read_resp_opcode(F), DRAY_OP_READ_RESP_FIRST);
	CHECK_EQ(dray_wire_read_resp_opcode(M), DRAY_OP_READ_RESP_MIDDLE);
	CHECK_EQ(dray_wire_read_resp_opcode(L), DRAY_OP_READ_RESP_LAST);
	CHECK_EQ(dray_wire_read_resp_opcode(F | L), DRAY_OP_READ_RESP_ONLY);
}

UNIT_TEST(timers)
{
	u8 c;

	CHECK_EQ(dray_wire_ack_timeout_ns(0), 0);
	CHECK_EQ(dray_wire_ack_timeout_ns(1), 8192);
	CHECK_EQ(dray_wire_ack_timeout_ns(14), 67108864);	/* 67 ms */
	CHECK_EQ(dray_wire_ack_timeout_ns(31), 4096ULL << 31);
	CHECK_EQ(dray_wire_ack_timeout_ns(200), 4096ULL << 31);
	CHECK_EQ(dray_wire_rnr_us(0), 655360);
	CHECK_EQ(dray_wire_rnr_us(1), 10);
	CHECK_EQ(dray_wire_rnr_us(12), 640);
	CHECK_EQ(dray_wire_rnr_us(25), 61440);
	CHECK_EQ(dray_wire_rnr_us(31), 491520);
	for (c = 2; c < 32; c++)
		CHECK(dray_wire_rnr_us(c) > dray_wire_rnr_us(c - 1),
		      "RNR timer %u grows", c);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "header_layouts", header_layouts },
		{ "opcode_table", opcode_table },
		{ "build_bytes", build_bytes },
		{ "flush_bytes", flush_bytes },
		{ "xrc_bytes", xrc_bytes },
		{ "build_parse_roundtrip", build_parse_roundtrip },
		{ "parse_rejects", parse_rejects },
		{ "ipv4_udp", ipv4_udp },
		{ "ipv6_udp", ipv6_udp },
		{ "udp_sport", udp_sport },
		{ "psn_wrap", psn_wrap },
		{ "segmentation", segmentation },
		{ "request_opcodes", request_opcodes },
		{ "timers", timers },
	};

	return unit_run("wire", tests, sizeof(tests) / sizeof(tests[0]));
}
