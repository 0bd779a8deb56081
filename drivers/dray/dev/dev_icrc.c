// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the RoCEv2 invariant CRC (ICRC).
 *
 * InfiniBand protects every transport packet end to end with a CRC-32
 * over the fields no switch or router may change (IBTA vol. 1 7.8.1).
 * RoCEv2 (annex A17) keeps it and defines what stands for the link and
 * network headers: a pseudo LRH of 8 bytes of ones, then the IP header
 * with the fields a router may rewrite taken as ones (IPv4: TOS, TTL,
 * header checksum; IPv6: traffic class, flow label, hop limit), then the
 * UDP header with its checksum taken as ones, then the BTH with its resv8a
 * byte (FECN, BECN) taken as ones, then everything that follows up to the
 * ICRC itself, pad bytes included.
 *
 * The CRC is the Ethernet one: polynomial 0x04c11db7 processed least
 * significant bit first, initial value all ones, result inverted, sent
 * least significant byte first. Pure code: the CRC primitive is the
 * kernel's crc32_le() (tests/unit provide one).
 */
#ifdef __KERNEL__
#include <linux/crc32.h>
#include <linux/string.h>
#endif

#include "dev_wire.h"

/* The UDP header and BTH: the part of @l4 with variant fields. */
#define ICRC_L4_FIXED	(DRAY_UDP_HLEN + sizeof(struct dray_bth))
#define ICRC_UDP_CSUM	6			/* offset in the UDP header */
#define ICRC_BTH_RESV8A	(DRAY_UDP_HLEN + 4)	/* offset from the UDP header */

u32 dray_icrc_update(u32 crc, const void *data, u32 len)
{
	return crc32_le(crc, data, len);
}

u32 dray_icrc_begin(const void *l3, bool ipv6, const void *l4, u32 l4_len)
{
	static const u8 pseudo_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u8 buf[DRAY_IPV6_HLEN + ICRC_L4_FIXED];
	u32 l3_len = ipv6 ? DRAY_IPV6_HLEN : DRAY_IPV4_HLEN;
	u8 *udp = buf + l3_len;
	u32 crc;

	memcpy(buf, l3, l3_len);
	if (ipv6) {
		buf[0] |= 0x0f;		/* traffic class [7:4] */
		buf[1] = 0xff;		/* traffic class [3:0], flow label */
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff;		/* hop limit */
	} else {
		buf[1] = 0xff;		/* TOS */
		buf[8] = 0xff;		/* TTL */
		buf[10] = 0xff;		/* header checksum */
		buf[11] = 0xff;
	}
	memcpy(udp, l4, ICRC_L4_FIXED);
	udp[ICRC_UDP_CSUM] = 0xff;
	udp[ICRC_UDP_CSUM + 1] = 0xff;
	udp[ICRC_BTH_RESV8A] = 0xff;

	crc = crc32_le(~0U, pseudo_lrh, sizeof(pseudo_lrh));
	crc = crc32_le(crc, buf, l3_len + ICRC_L4_FIXED);
	return crc32_le(crc, (const u8 *)l4 + ICRC_L4_FIXED,
			l4_len - ICRC_L4_FIXED);
}
