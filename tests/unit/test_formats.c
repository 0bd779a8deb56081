// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware formats (include/dray/): the layouts Documentation/
 * hw-interface.md promises. Sizes are also static_asserts in the headers;
 * this checks the field offsets a second implementation would rely on.
 */
#include <stddef.h>

#include <dray/dray_admin.h>
#include <dray/dray_common.h>
#include <dray/dray_eq.h>
#include <dray/dray_queue.h>
#include <dray/dray_regs.h>
#include <dray/dray_uar.h>
#include <dray/dray_verr.h>

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
	CHECK_EQ(sizeof(struct dray_device_caps), 160);
	CHECK_EQ(offsetof(struct dray_device_caps, node_guid), 8);
	CHECK_EQ(offsetof(struct dray_device_caps, max_uar), 48);
	CHECK_EQ(offsetof(struct dray_device_caps, max_fr_pages), 120);
	CHECK_EQ(offsetof(struct dray_device_caps, max_mw), 124);
	CHECK_EQ(offsetof(struct dray_device_caps, max_srq), 128);
	CHECK_EQ(offsetof(struct dray_device_caps, max_srq_wr), 132);
	CHECK_EQ(offsetof(struct dray_device_caps, max_srq_sge), 136);
	CHECK_EQ(offsetof(struct dray_device_caps, max_counter_sets), 140);
	CHECK_EQ(offsetof(struct dray_device_caps, max_mcast_grp), 144);
	CHECK_EQ(offsetof(struct dray_device_caps, max_mcast_qp_attach), 148);
	CHECK_EQ(offsetof(struct dray_device_caps, max_xrcd), 152);
	CHECK_EQ(sizeof(struct dray_cmd_mcast), 24);
	CHECK_EQ(offsetof(struct dray_cmd_mcast, gid), 8);
	CHECK_EQ(sizeof(struct dray_port_attr), 32);
	CHECK_EQ(offsetof(struct dray_port_attr, eth_mtu), 4);
	CHECK_EQ(offsetof(struct dray_port_attr, mac), 16);
}

UNIT_TEST(srq_layouts)
{
	CHECK_EQ(DRAY_CMD_CREATE_SRQ, 0x1f);
	CHECK_EQ(DRAY_CMD_DESTROY_SRQ, 0x22);
	CHECK_EQ(sizeof(struct dray_cmd_create_srq), 32);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, n_pages), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, pdn), 12);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, log_depth), 16);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, log_stride), 17);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, flags), 18);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, xrcdn), 24);
	CHECK_EQ(offsetof(struct dray_cmd_create_srq, cqn), 28);
	CHECK_EQ(sizeof(struct dray_cmd_modify_srq), 8);
	CHECK_EQ(offsetof(struct dray_cmd_modify_srq, limit), 4);
	CHECK_EQ(sizeof(struct dray_cmd_srq), 8);
	CHECK_EQ(sizeof(struct dray_cmd_counter_set), 8);
	CHECK_EQ(sizeof(struct dray_cmd_bind_counter_set), 8);
	CHECK_EQ(offsetof(struct dray_cmd_bind_counter_set, set), 4);
	CHECK_EQ(sizeof(struct dray_cmd_query_id), 24);
	CHECK_EQ(offsetof(struct dray_cmd_query_id, out_len), 8);
	CHECK_EQ(offsetof(struct dray_cmd_query_id, kind), 12);
	CHECK_EQ(offsetof(struct dray_cmd_query_id, id), 16);
	CHECK_EQ(sizeof(struct dray_obj_state), 64);
	CHECK_EQ(offsetof(struct dray_qp_state_out, sq_posted), 8);
	CHECK_EQ(offsetof(struct dray_qp_state_out, next_psn), 32);
	CHECK_EQ(offsetof(struct dray_qp_state_out, cwnd), 56);
	CHECK_EQ(offsetof(struct dray_qp_state_out, ssthresh), 60);
	CHECK_EQ(offsetof(struct dray_cq_state_out, armed), 16);
	CHECK_EQ(offsetof(struct dray_mr_state_out, iova), 16);
	CHECK_EQ(offsetof(struct dray_mr_state_out, windows), 32);
	CHECK_EQ(sizeof(struct dray_counters), 8 * DRAY_CNT_MAX);
	CHECK_EQ(DRAY_CNT_MAX, 33);
	CHECK_EQ(DRAY_CNT_RESP_CQE_FLUSHES, 31);
	CHECK_EQ(DRAY_CNT_TAIL_PROBES, 32);
	CHECK_EQ(sizeof(struct dray_srq_wqe), DRAY_SRQ_WQE_HDR_SIZE);
	CHECK_EQ(DRAY_SRQ_WQE_HDR_SIZE, 16);
	CHECK_EQ(offsetof(struct dray_srq_wqe, num_sge), 0);
	CHECK_EQ(offsetof(struct dray_srq_wqe, tag), 4);
	CHECK_EQ(offsetof(struct dray_qp_create, srqn), 48);
	CHECK_EQ(offsetof(struct dray_qp_create, xrcdn), 52);
	CHECK_EQ(offsetof(struct dray_qp_create, reserved2), 56);
	CHECK_EQ(DRAY_QP_F_SRQ, 0x4);
	CHECK_EQ(DRAY_CQE_F_SRQ, 0x80);
	CHECK_EQ(DRAY_EQE_SRQ_LIMIT, 9);
	CHECK_EQ(DRAY_EQE_QP_LAST_WQE, 10);
	CHECK_EQ(DRAY_EQE_SRQ_ERR, 11);
	CHECK_EQ(DRAY_SRQ_QUERY_ERROR, 1ULL << 32);
}

UNIT_TEST(xrc_layouts)
{
	CHECK_EQ(DRAY_CMD_CREATE_XRCD, 0x2b);
	CHECK_EQ(DRAY_CMD_DESTROY_XRCD, 0x2c);
	CHECK_EQ(sizeof(struct dray_cmd_xrcd), 8);
	CHECK_EQ(DRAY_QPT_XRC_INI, 9);
	CHECK_EQ(DRAY_QPT_XRC_TGT, 10);
	CHECK_EQ(DRAY_SRQ_F_XRC, 0x1);
	CHECK_EQ(offsetof(struct dray_sq_wqe, xrc_srqn), 12);
	CHECK_EQ(offsetof(struct dray_cqe, flags2), 30);
	CHECK_EQ(DRAY_CQE_F2_XRC, 0x1);
}

UNIT_TEST(object_command_layouts)
{
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, pdn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, access), 4);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, flags), 5);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, iova), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, length), 16);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, mtt_addr), 24);
	CHECK_EQ(offsetof(struct dray_cmd_create_mr, n_pages), 32);
	CHECK_EQ(offsetof(struct dray_cmd_create_cq, mtt_addr), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_cq, n_pages), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_cq, eqn), 12);
	CHECK_EQ(offsetof(struct dray_cmd_create_cq, log_depth), 16);
	CHECK_EQ(sizeof(struct dray_cmd_resize_cq), 24);
	CHECK_EQ(offsetof(struct dray_cmd_resize_cq, mtt_addr), 0);
	CHECK_EQ(offsetof(struct dray_cmd_resize_cq, n_pages), 8);
	CHECK_EQ(offsetof(struct dray_cmd_resize_cq, cqn), 12);
	CHECK_EQ(offsetof(struct dray_cmd_resize_cq, log_depth), 16);
	CHECK_EQ(offsetof(struct dray_cmd_qp, qpn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_qp, len), 4);
	CHECK_EQ(offsetof(struct dray_cmd_qp, addr), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_ah, pdn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_ah, addr), 8);
	CHECK_EQ(offsetof(struct dray_cmd_create_ah, len), 16);
	CHECK_EQ(offsetof(struct dray_cmd_create_uar, page_addr), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_eq, ring_addr), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_eq, log_depth), 8);
	/* Every DESTROY names its object in the first 32-bit word. */
	CHECK_EQ(offsetof(struct dray_cmd_destroy_eq, eqn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_uar, uar_index), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_pd, pdn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_mr, key), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_cq, cqn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_ah, ahn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_destroy_mw, key), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_mw, pdn), 0);
	CHECK_EQ(offsetof(struct dray_cmd_create_mw, type), 4);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, key), 0);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, pdn), 4);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, access), 8);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, what), 9);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, iova), 16);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, mtt_addr), 32);
	CHECK_EQ(offsetof(struct dray_cmd_modify_mr, n_pages), 40);
	CHECK_EQ(offsetof(struct dray_cmd_del_gid, index), 0);
}

UNIT_TEST(qp_mailbox_layouts)
{
	CHECK_EQ(sizeof(struct dray_qp_create), 64);
	CHECK_EQ(offsetof(struct dray_qp_create, type), 0);
	CHECK_EQ(offsetof(struct dray_qp_create, sq_log_depth), 1);
	CHECK_EQ(offsetof(struct dray_qp_create, sq_log_stride), 2);
	CHECK_EQ(offsetof(struct dray_qp_create, rq_log_depth), 3);
	CHECK_EQ(offsetof(struct dray_qp_create, rq_log_stride), 4);
	CHECK_EQ(offsetof(struct dray_qp_create, flags), 5);
	CHECK_EQ(offsetof(struct dray_qp_create, pdn), 8);
	CHECK_EQ(offsetof(struct dray_qp_create, send_cqn), 12);
	CHECK_EQ(offsetof(struct dray_qp_create, recv_cqn), 16);
	CHECK_EQ(offsetof(struct dray_qp_create, uar_index), 20);
	CHECK_EQ(offsetof(struct dray_qp_create, sq_mtt), 24);
	CHECK_EQ(offsetof(struct dray_qp_create, sq_n_pages), 32);
	CHECK_EQ(offsetof(struct dray_qp_create, rq_n_pages), 36);
	CHECK_EQ(offsetof(struct dray_qp_create, rq_mtt), 40);
	CHECK_EQ(offsetof(struct dray_qp_create, srqn), 48);

	CHECK_EQ(sizeof(struct dray_qp_attr), 128);
	CHECK_EQ(offsetof(struct dray_qp_attr, attr_mask), 0);
	CHECK_EQ(offsetof(struct dray_qp_attr, state), 4);
	CHECK_EQ(offsetof(struct dray_qp_attr, cur_state), 5);
	CHECK_EQ(offsetof(struct dray_qp_attr, path_mtu), 6);
	CHECK_EQ(offsetof(struct dray_qp_attr, timeout), 7);
	CHECK_EQ(offsetof(struct dray_qp_attr, retry_cnt), 8);
	CHECK_EQ(offsetof(struct dray_qp_attr, rnr_retry), 9);
	CHECK_EQ(offsetof(struct dray_qp_attr, min_rnr_timer), 10);
	CHECK_EQ(offsetof(struct dray_qp_attr, max_rd_atomic), 11);
	CHECK_EQ(offsetof(struct dray_qp_attr, max_dest_rd_atomic), 12);
	CHECK_EQ(offsetof(struct dray_qp_attr, access), 13);
	CHECK_EQ(offsetof(struct dray_qp_attr, sq_draining), 14);
	CHECK_EQ(offsetof(struct dray_qp_attr, dest_qpn), 16);
	CHECK_EQ(offsetof(struct dray_qp_attr, rq_psn), 20);
	CHECK_EQ(offsetof(struct dray_qp_attr, sq_psn), 24);
	CHECK_EQ(offsetof(struct dray_qp_attr, qkey), 28);
	CHECK_EQ(offsetof(struct dray_qp_attr, path), 32);
	CHECK_EQ(offsetof(struct dray_qp_attr, reserved), 68);

	CHECK_EQ(sizeof(struct dray_path), 36);
	CHECK_EQ(offsetof(struct dray_path, dmac), 0);
	CHECK_EQ(offsetof(struct dray_path, sgid_index), 6);
	CHECK_EQ(offsetof(struct dray_path, hop_limit), 7);
	CHECK_EQ(offsetof(struct dray_path, dgid), 8);
	CHECK_EQ(offsetof(struct dray_path, traffic_class), 24);
	CHECK_EQ(offsetof(struct dray_path, flow_label), 28);
	CHECK_EQ(offsetof(struct dray_path, udp_sport), 32);
}

UNIT_TEST(send_wqe_layout)
{
	CHECK_EQ(sizeof(struct dray_sq_wqe), DRAY_SQ_WQE_HDR_SIZE);
	CHECK_EQ(DRAY_SQ_WQE_HDR_SIZE, 64);
	CHECK_EQ(offsetof(struct dray_sq_wqe, opcode), 0);
	CHECK_EQ(offsetof(struct dray_sq_wqe, flags), 1);
	CHECK_EQ(offsetof(struct dray_sq_wqe, num_sge), 2);
	CHECK_EQ(offsetof(struct dray_sq_wqe, imm_data), 4);
	CHECK_EQ(offsetof(struct dray_sq_wqe, length), 8);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.rdma.remote_addr), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.rdma.rkey), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.atomic.remote_addr), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.atomic.rkey), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.atomic.compare_add), 32);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.atomic.swap), 40);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud.ah), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud.remote_qpn), 20);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud.remote_qkey), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud_av.remote_qpn), 20);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud_av.remote_qkey), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud_av.av), 28);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.ud_av.av) +
		 sizeof(struct dray_path), DRAY_SQ_WQE_HDR_SIZE);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.inv.rkey), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.key), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.access), 20);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.iova), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.length), 32);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.pbl_addr), 40);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.reg.n_pages), 48);
	CHECK_EQ(DRAY_WQE_SEND_INV, 0x07);
	CHECK_EQ(DRAY_WQE_LOCAL_INV, 0x08);
	CHECK_EQ(DRAY_WQE_REG_MR, 0x09);
	CHECK_EQ(DRAY_WQE_BIND_MW, 0x0a);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.mw_key), 16);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.mr_lkey), 20);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.addr), 24);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.length), 32);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.access), 40);
	CHECK_EQ(offsetof(struct dray_sq_wqe, u.bind.flags), 41);

	CHECK_EQ(sizeof(struct dray_sge), DRAY_SGE_SIZE);
	CHECK_EQ(DRAY_SGE_SIZE, 16);
	CHECK_EQ(offsetof(struct dray_sge, addr), 0);
	CHECK_EQ(offsetof(struct dray_sge, length), 8);
	CHECK_EQ(offsetof(struct dray_sge, lkey), 12);

	CHECK_EQ(sizeof(struct dray_rq_wqe), DRAY_RQ_WQE_HDR_SIZE);
	CHECK_EQ(DRAY_RQ_WQE_HDR_SIZE, 16);
	CHECK_EQ(offsetof(struct dray_rq_wqe, num_sge), 0);
}

UNIT_TEST(cqe_and_doorbell_layout)
{
	CHECK_EQ(sizeof(struct dray_cqe), DRAY_CQE_SIZE);
	CHECK_EQ(DRAY_CQE_SIZE, 32);
	CHECK_EQ(offsetof(struct dray_cqe, qpn), 0);
	CHECK_EQ(offsetof(struct dray_cqe, wqe_index), 4);
	CHECK_EQ(offsetof(struct dray_cqe, byte_len), 8);
	CHECK_EQ(offsetof(struct dray_cqe, imm_data), 12);
	CHECK_EQ(offsetof(struct dray_cqe, src_qpn), 16);
	CHECK_EQ(offsetof(struct dray_cqe, opcode), 20);
	CHECK_EQ(offsetof(struct dray_cqe, status), 21);
	CHECK_EQ(offsetof(struct dray_cqe, vendor_err), 22);
	CHECK_EQ(offsetof(struct dray_cqe, inv_rkey), 24);
	/* The flags byte (phase bit) is the last byte: written last. */
	CHECK_EQ(offsetof(struct dray_cqe, flags), DRAY_CQE_SIZE - 1);

	CHECK_EQ(sizeof(struct dray_wq_db), DRAY_QUEUE_HDR_SIZE);
	CHECK_EQ(DRAY_QUEUE_HDR_SIZE, 64);
	CHECK_EQ(offsetof(struct dray_wq_db, producer), 0);
	CHECK_EQ(offsetof(struct dray_wq_db, consumer), 4);
	CHECK_EQ(sizeof(struct dray_cq_db), DRAY_QUEUE_HDR_SIZE);
	CHECK_EQ(offsetof(struct dray_cq_db, consumer), 0);
	CHECK_EQ(offsetof(struct dray_cq_db, arm_seq), 4);
	CHECK_EQ(offsetof(struct dray_cq_db, arm_flags), 8);
	CHECK_EQ(offsetof(struct dray_cq_db, producer), 12);
}

/* The numbers hw-interface.md quotes; software matches on them. */
UNIT_TEST(shared_numbers)
{
	CHECK_EQ(DRAY_QPN_MASK, 0x00ffffffu);
	CHECK_EQ(DRAY_PSN_MASK, 0x00ffffffu);
	CHECK_EQ(DRAY_KEY_INDEX_MASK, 0xffffff00u);
	CHECK_EQ(DRAY_KEY_VARIANT_MASK, 0xffu);
	CHECK_EQ(DRAY_KEY_INDEX_MASK & DRAY_KEY_VARIANT_MASK, 0);
	CHECK_EQ(DRAY_MTT_ENTRIES * 8, DRAY_PAGE_SIZE);
	CHECK_EQ(1u << DRAY_PAGE_SHIFT, DRAY_PAGE_SIZE);
	CHECK_EQ(DRAY_FW_VER_MAJOR_MASK, 0xffff00000000ull);
	CHECK_EQ(DRAY_FW_VER_PATCH_MASK, 0xffffull);
	CHECK_EQ(DRAY_VERR_RETRY_EXC, 4);
	CHECK_EQ(DRAY_VERR_RNR_EXC, 5);
	CHECK_EQ(DRAY_VERR_BAD_WQE, 6);
	CHECK_EQ(DRAY_VERR_LOCAL_SGE, 7);
	CHECK_EQ(DRAY_VERR_WQE_CHANGED, 8);
	CHECK_EQ(DRAY_VERR_RESP_LENGTH, 12);
	CHECK_EQ(DRAY_VERR_UD_AH, 0x40);
	CHECK_EQ(DRAY_VERR_UD_RECV_SGE, 0x45);
	CHECK_EQ(DRAY_VERR_SQ_DOORBELL, 0x80);
	CHECK_EQ(DRAY_VERR_WQE_FLAGS, 0x84);
	CHECK_EQ(DRAY_VERR_LKEY, 0x88);
	CHECK_EQ(DRAY_VERR_LKEY_RANGE, 0x8b);
	CHECK_EQ(DRAY_VERR_WQE_INDEX, 0x8d);
	CHECK_EQ(DRAY_VERR_RESP_INVALIDATE, 0x0d);
	CHECK_EQ(DRAY_VERR_LKEY_STATE, 0x8e);
	CHECK_EQ(DRAY_VERR_FR_KEY, 0x8f);
	CHECK_EQ(DRAY_VERR_FR_VALID, 0x90);
	CHECK_EQ(DRAY_VERR_FR_PARAMS, 0x91);
	CHECK_EQ(DRAY_VERR_FR_PRIV, 0x92);
	CHECK_EQ(DRAY_VERR_INV_KEY, 0x93);
	CHECK_EQ(DRAY_VERR_MW_KEY, 0x94);
	CHECK_EQ(DRAY_VERR_MW_ZERO_BASED, 0x98);
	CHECK_EQ(DRAY_CQE_ST_MW_BIND_ERR, 6);
	CHECK_EQ(DRAY_CQE_BIND_MW, 0x07);
	CHECK_EQ(DRAY_ACCESS_MW_BIND, 0x10);
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
	CHECK_EQ(DRAY_EQ_DB_CI_MASK, 0x0000ffffu);
	CHECK_EQ(DRAY_EQ_DB_EQN_MASK, 0x3fff0000u);
	CHECK_EQ(DRAY_EQ_DB_ARM, 0x80000000u);
	CHECK_EQ(DRAY_AQ_CFG_LOG_DEPTH_MASK, 0x0000000fu);
	CHECK_EQ(DRAY_AQ_CFG_VECTOR_MASK, 0x0000ff00u);
	CHECK_EQ(DRAY_VERSION_MAJOR_MASK, 0xffff0000u);
	CHECK_EQ(DRAY_ENGINE_KICK_UAR_MASK, 0x0000ffffu);
	CHECK_EQ(DRAY_REG_ENGINE_KICK, 0x044);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "admin_entry_layout", admin_entry_layout },
		{ "completion_layout", completion_layout },
		{ "output_layouts", output_layouts },
		{ "srq_layouts", srq_layouts },
		{ "xrc_layouts", xrc_layouts },
		{ "object_command_layouts", object_command_layouts },
		{ "qp_mailbox_layouts", qp_mailbox_layouts },
		{ "send_wqe_layout", send_wqe_layout },
		{ "cqe_and_doorbell_layout", cqe_and_doorbell_layout },
		{ "shared_numbers", shared_numbers },
		{ "uar_layout", uar_layout },
		{ "register_map", register_map },
	};

	return unit_run("formats", tests, sizeof(tests) / sizeof(tests[0]));
}
