// SPDX-License-Identifier: GPL-2.0-only
/*
 * Port logic of the NIC model (drivers/dray/dev/dev_logic.h): active MTU
 * from the Ethernet MTU and the node GUID from the MAC.
 */
#include <string.h>

#include "dev_logic.h"
#include "unit.h"

UNIT_TEST(mtu_table)
{
	static const struct {
		unsigned int eth;
		unsigned int ib;
	} cases[] = {
		{ 0, DRAY_MTU_256 },
		{ 68, DRAY_MTU_256 },
		{ 96 + 511, DRAY_MTU_256 },
		{ 96 + 512, DRAY_MTU_512 },
		{ 96 + 1023, DRAY_MTU_512 },
		{ 1120, DRAY_MTU_1024 },
		{ 1500, DRAY_MTU_1024 },
		{ 96 + 2047, DRAY_MTU_1024 },
		{ 96 + 2048, DRAY_MTU_2048 },
		{ 4000, DRAY_MTU_2048 },
		{ 96 + 4095, DRAY_MTU_2048 },
		{ 96 + 4096, DRAY_MTU_4096 },
		{ 9000, DRAY_MTU_4096 },
		{ 65535, DRAY_MTU_4096 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(dray_mtu_from_eth(cases[i].eth) == cases[i].ib,
		      "eth mtu %u gave %u, expected %u", cases[i].eth,
		      dray_mtu_from_eth(cases[i].eth), cases[i].ib);
}

UNIT_TEST(guid_is_modified_eui64)
{
	static const __u8 mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	static const __u8 want[8] = { 0x50, 0x54, 0x00, 0xff, 0xfe,
				      0x12, 0x34, 0x56 };
	static const __u8 local[6] = { 0x02, 0, 0, 0, 0, 1 };
	__u8 guid[8];

	dray_guid_from_mac(mac, guid);
	CHECK(!memcmp(guid, want, 8), "guid of 52:54:00:12:34:56");
	dray_guid_from_mac(local, guid);
	CHECK_EQ(guid[0], 0x00);
	CHECK_EQ(guid[7], 0x01);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "mtu_table", mtu_table },
		{ "guid_is_modified_eui64", guid_is_modified_eui64 },
	};

	return unit_run("port", tests, sizeof(tests) / sizeof(tests[0]));
}
