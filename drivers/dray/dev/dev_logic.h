/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: pure functions of the port, free of kernel state so that
 * tests/unit can compile them in user space.
 */
#ifndef DRAY_DEV_LOGIC_H
#define DRAY_DEV_LOGIC_H

#include <linux/types.h>
#include <dray/dray_admin.h>

/* Largest IB MTU whose RoCEv2 packets fit an Ethernet MTU; at least 256. */
static inline __u8 dray_mtu_from_eth(__u32 eth_mtu)
{
	__u32 payload = eth_mtu > DRAY_ROCE_OVERHEAD ?
			eth_mtu - DRAY_ROCE_OVERHEAD : 0;

	if (payload >= 4096)
		return DRAY_MTU_4096;
	if (payload >= 2048)
		return DRAY_MTU_2048;
	if (payload >= 1024)
		return DRAY_MTU_1024;
	if (payload >= 512)
		return DRAY_MTU_512;
	return DRAY_MTU_256;
}

/* Modified EUI-64 of a MAC address (RFC 4291 appendix A), network order. */
static inline void dray_guid_from_mac(const __u8 *mac, __u8 *guid)
{
	guid[0] = mac[0] ^ 0x02;
	guid[1] = mac[1];
	guid[2] = mac[2];
	guid[3] = 0xff;
	guid[4] = 0xfe;
	guid[5] = mac[3];
	guid[6] = mac[4];
	guid[7] = mac[5];
}

#endif /* DRAY_DEV_LOGIC_H */
