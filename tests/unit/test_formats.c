// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware formats (include/dray/): the layouts Documentation/
 * hw-interface.md promises. Sizes are also static_asserts in the headers;
 * this checks the field offsets a second implementation would rely on.
 */
#include <stddef.h>

#include <dray/dray_admin.h>
#include <dray/dray_eq.h>
#include <dray/dray_regs.h>
#include <dray/dray_uar.h>

#include "unit.h"

UNIT_TEST(admin_entry_layout)
{
	CHECK_EQ(sizeof(struct dray_aq_entry), 64);
	CHECK_EQ(offsetof(struct dray_aq_entry, hdr.cmd_id), 2);
	CHECK_EQ(offsetof(struct dray_aq_entry, u), 8);
	CHECK_EQ(offsetof(struct dray_cmd_query, out_len), 8);
	CHECK_EQ(offsetof(struct dray_cmd_query, port), 12);
	CHECK_EQ(offsetof(struct dray_cmd_set_gid, gid), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_eq, vector), 9);
}

UNIT_TEST(completion_layout)
{
	CHECK_EQ(sizeof(struct dray_aq_cqe), 16);
	CHECK_EQ(offsetof(struct dray_aq_cqe, status), 2);
	CHECK_EQ(offsetof(struct dray_aq_cqe, flags), 3);
	CHECK_EQ(offsetof(struct dray_aq_cqe, result), 8);
	CHECK_EQ(sizeof(struct dray_eqe), 16);
	CHECK_EQ(offsetof(struct dray_eqe, flags), 3);
	CHECK_EQ(offsetof(struct dray_eqe, data1), 8);
}

UNIT_TEST(output_layouts)
{
	CHECK_EQ(sizeof(struct dray_device_caps), 128);
	CHECK_EQ(offsetof(struct dray_device_caps, node_guid), 8);
	CHECK_EQ(offsetof(struct dray_device_caps, max_uar), 48);
	CHECK_EQ(sizeof(struct dray_port_attr), 32);
	CHECK_EQ(offsetof(struct dray_port_attr, eth_mtu), 4);
	CHECK_EQ(offsetof(struct dray_port_attr, mac), 16);
}

UNIT_TEST(uar_layout)
{
	CHECK_EQ(sizeof(struct dray_uar), DRAY_UAR_SIZE);
	CHECK_EQ(offsetof(struct dray_uar, sw), 2048);
	CHECK_EQ(offsetof(struct dray_uar_dev_area, flags), 8);
}

UNIT_TEST(register_map)
{
	CHECK_EQ(DRAY_REG_ID, 0x000);
	CHECK_EQ(DRAY_REG_AQ_SQ_PI, 0x024);
	CHECK_EQ(DRAY_REG_EQ_DB, 0x040);
	CHECK(DRAY_REG_EQ_DB < DRAY_BAR0_SIZE, "registers inside BAR0");
	CHECK_EQ(DRAY_EQ_DB_EQN_MASK & DRAY_EQ_DB_CI_MASK, 0);
	CHECK_EQ(DRAY_EQ_DB_ARM & DRAY_EQ_DB_EQN_MASK, 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "admin_entry_layout", admin_entry_layout },
		{ "completion_layout", completion_layout },
		{ "output_layouts", output_layouts },
		{ "uar_layout", uar_layout },
		{ "register_map", register_map },
	};

	return unit_run("formats", tests, sizeof(tests) / sizeof(tests[0]));
}
