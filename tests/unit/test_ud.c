// SPDX-License-Identifier: GPL-2.0-only
/*
 * UD formats (drivers/dray/dev/dev_wire.[ch]): UD SEND frames built and
 * parsed back, and the GRH a UD receive gets, judged the way libibverbs'
 * ibv_init_ah_from_wc() tells an IPv4 GRH from an IPv6 one.
 */
#include <stdlib.h>

#include "kshim.h"
#include "dev_wire.c"

#include "unit.h"

static const u8 v4_src[16] = { [10] = 0xff, 0xff, 10, 0, 0, 1 };
static const u8 v4_dst[16] = { [10] = 0xff, 0xff, 10, 0, 0, 2 };
static const u8 v6_src[16] = { 0xfe, 0x80, [8] = 0x02, 0x11, 0x22, 0xff,
			       0xfe, 0x33, 0x44, 0x55 };
static const u8 v6_dst[16] = { 0xfe, 0x80, [8] = 0x02, 0x66, 0x77, 0xff,
			       0xfe, 0x88, 0x99, 0xaa };

/*
 * What libibverbs (verbs.c, get_grh_header_version) decides: 6 if the
 * first nibble says IPv6 and bytes 20..39 are no valid IPv4 header, 4 if
 * they are, -1 if neither.
 */
static int grh_version(const u8 *grh)
{
	const u8 *ip4 = grh + 20;
	u8 copy[20];

	if ((grh[0] >> 4) != 6)
		return (ip4[0] >> 4) == 4 ? 4 : -1;
	if ((ip4[0] & 0xf) != 5)
		return 6;
	memcpy(copy, ip4, sizeof(copy));
	return dray_wire_ip_csum(copy, sizeof(copy)) == 0 ? 4 : 6;
}

/* Build a whole UD frame (Ethernet to ICRC placeholder) into f. */
static u32 build_ud(u8 *f, bool ipv6, bool imm, u32 paylen)
{
	struct dray_wire_addr a = {
		.ipv6 = ipv6,
		.smac = { 2, 0, 0, 0, 0, 1 },
		.dmac = { 2, 0, 0, 0, 0, 2 },
		.tclass = 0x28,
		.hop_limit = 64,
		.flow_label = 0x12345,
		.sport = 0xc123,
	};
	struct dray_pkt p = {
		.opcode = imm ? DRAY_OP_UD_SEND_ONLY_IMM : DRAY_OP_UD_SEND_ONLY,
		.pkey = DRAY_PKEY_DEFAULT,
		.qpn = 0x000345,
		.psn = 0xfffffe,
		.se = true,
		.imm = cpu_to_be32(0xa1b2c3d4),
		.qkey = 0x80010000,
		.src_qpn = 0x00abcd,
	};
	u32 hlen = dray_wire_hdr_len(dray_opcodes[p.opcode].flags);
	u32 l2l4, udp_len;

	memcpy(a.sgid, ipv6 ? v6_src : v4_src, 16);
	memcpy(a.dgid, ipv6 ? v6_dst : v4_dst, 16);
	p.pad = dray_wire_pad(paylen);
	udp_len = hlen + paylen + p.pad + DRAY_ICRC_BYTES;
	l2l4 = dray_wire_build_l3(&a, udp_len, f);
	dray_wire_build(&p, f + l2l4);
	memset(f + l2l4 + hlen, 0x5a, paylen + p.pad + DRAY_ICRC_BYTES);
	return l2l4 + udp_len;
}

UNIT_TEST(ud_frame_roundtrip)
{
	static const u32 lens[] = { 0, 1, 3, 4, 1023, 4096 };
	u8 f[6000];
	unsigned int i, v;

	for (v = 0; v < 4; v++) {
		bool ipv6 = v & 1, imm = v & 2;

		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			u32 n = build_ud(f, ipv6, imm, lens[i]);
			u32 ip_len = n - DRAY_ETH_HLEN;
			struct dray_wire_l3 l3;
			struct dray_pkt p;
			int hlen;

			CHECK(!dray_wire_parse_l3(f + DRAY_ETH_HLEN, ip_len,
						  ip_len, ipv6, &l3),
			      "IP/UDP of a UD frame");
			hlen = dray_wire_parse(f + DRAY_ETH_HLEN + l3.ip_hlen +
					       DRAY_UDP_HLEN,
					       l3.udp_len, &p);
			CHECK_EQ(hlen, imm ? 24 : 20);
			CHECK_EQ(p.opcode, imm ? 0x65 : 0x64);
			CHECK_EQ(p.qpn, 0x345);
			CHECK_EQ(p.psn, 0xfffffe);
			CHECK_EQ(p.qkey, 0x80010000);
			CHECK_EQ(p.src_qpn, 0xabcd);
			CHECK(p.se, "solicited event bit");
			CHECK_EQ(p.pad, dray_wire_pad(lens[i]));
			CHECK_EQ(l3.udp_len - hlen - p.pad - DRAY_ICRC_BYTES,
				 lens[i]);
			if (imm)
				CHECK_EQ(be32_to_cpu(p.imm), 0xa1b2c3d4);
		}
	}
}

UNIT_TEST(grh_ipv4)
{
	u8 f[256], grh[DRAY_GRH_BYTES];
	const u8 *ip = f + DRAY_ETH_HLEN;
	unsigned int i;

	build_ud(f, false, false, 100);
	memset(grh, 0xcc, sizeof(grh));
	dray_wire_grh(ip, false, grh);
	for (i = 0; i < 20; i++)
		CHECK_EQ(grh[i], 0);
	CHECK(!memcmp(grh + 20, ip, DRAY_IPV4_HLEN), "IPv4 header at 20");
	CHECK_EQ(grh[20], 0x45);
	CHECK_EQ(grh[21], 0x28);			/* TOS */
	CHECK(!memcmp(grh + 32, v4_src + 12, 4), "source address");
	CHECK(!memcmp(grh + 36, v4_dst + 12, 4), "destination address");
	CHECK_EQ(grh_version(grh), 4);
}

UNIT_TEST(grh_ipv6)
{
	u8 f[256], grh[DRAY_GRH_BYTES];
	const u8 *ip = f + DRAY_ETH_HLEN;

	build_ud(f, true, true, 7);
	dray_wire_grh(ip, true, grh);
	CHECK(!memcmp(grh, ip, DRAY_IPV6_HLEN), "the IPv6 header as is");
	CHECK_EQ(grh[0] >> 4, 6);
	CHECK_EQ(grh[6], 17);				/* next header UDP */
	CHECK_EQ(grh[7], 64);				/* hop limit */
	CHECK(!memcmp(grh + 8, v6_src, 16), "source GID");
	CHECK(!memcmp(grh + 24, v6_dst, 16), "destination GID");
	CHECK_EQ(grh_version(grh), 6);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "ud_frame_roundtrip", ud_frame_roundtrip },
		{ "grh_ipv4", grh_ipv4 },
		{ "grh_ipv6", grh_ipv6 },
	};

	return unit_run("ud", tests, sizeof(tests) / sizeof(tests[0]));
}
