// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: the admin queue processor.
 *
 * The engine runs on the device's ordered workqueue. It consumes
 * submission entries between its consumer index and the producer index
 * written to DRAY_REG_AQ_SQ_PI, executes each command, writes one
 * completion per command and raises the admin vector. Everything in an
 * entry comes from the host and is validated here.
 */

#include <linux/string.h>

#include "dev.h"
#include "dev_cmd.h"

static bool all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* Copy an output structure to the host buffer a query command names. */
static void aq_write_out(struct dray_hw *hw, const struct dray_cmd_query *cmd,
			 const void *out, size_t size,
			 struct dray_aq_result *res)
{
	dray_hw_mailbox_out(hw, le64_to_cpu(cmd->out_addr),
			    le32_to_cpu(cmd->out_len), out, size, res);
}

static void aq_query_device(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_query *cmd = &e->u.query;
	struct dray_device_caps caps = {};

	if (cmd->port || !all_zero(cmd->reserved, sizeof(cmd->reserved)) ||
	    !all_zero(e->u.raw + sizeof(*cmd),
			 DRAY_AQ_PAYLOAD_SIZE - sizeof(*cmd))) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}

	caps.fw_ver = cpu_to_le64(DRAY_HW_FW_VER);
	memcpy(caps.node_guid, hw->node_guid, sizeof(caps.node_guid));
	caps.vendor_id = cpu_to_le32(DRAY_HW_VENDOR_ID);
	caps.vendor_part_id = cpu_to_le32(DRAY_HW_PART_ID);
	caps.hw_ver = cpu_to_le32(DRAY_HW_HW_VER);
	caps.num_ports = cpu_to_le32(1);
	caps.max_mr_size = cpu_to_le64(DRAY_HW_MAX_MR_SIZE);
	caps.page_size_cap = cpu_to_le64(PAGE_SIZE);
	caps.max_uar = cpu_to_le32(DRAY_HW_MAX_UAR);
	caps.max_eq = cpu_to_le32(DRAY_HW_MAX_EQ);
	caps.max_pd = cpu_to_le32(DRAY_HW_MAX_PD);
	caps.max_mr = cpu_to_le32(DRAY_HW_MAX_MR);
	caps.max_qp = cpu_to_le32(DRAY_HW_MAX_QP);
	caps.max_qp_wr = cpu_to_le32(DRAY_HW_MAX_QP_WR);
	caps.max_send_sge = cpu_to_le32(DRAY_HW_MAX_SGE);
	caps.max_recv_sge = cpu_to_le32(DRAY_HW_MAX_SGE);
	caps.max_sge_rd = cpu_to_le32(DRAY_HW_MAX_SGE);
	caps.max_cq = cpu_to_le32(DRAY_HW_MAX_CQ);
	caps.max_cqe = cpu_to_le32(DRAY_HW_MAX_CQE);
	caps.max_ah = cpu_to_le32(DRAY_HW_MAX_AH);
	caps.max_qp_rd_atom = cpu_to_le32(DRAY_HW_MAX_RD_ATOM);
	caps.max_qp_init_rd_atom = cpu_to_le32(DRAY_HW_MAX_RD_ATOM);
	caps.max_inline_data = cpu_to_le32(DRAY_HW_MAX_INLINE);
	caps.max_msg_size = cpu_to_le32(DRAY_HW_MAX_MSG);
	caps.gid_tbl_len = cpu_to_le32(DRAY_HW_GID_TBL_LEN);
	caps.local_ca_ack_delay = cpu_to_le32(DRAY_HW_ACK_DELAY);
	caps.max_fr_pages = cpu_to_le32(DRAY_HW_MAX_FR_PAGES);
	caps.max_mw = cpu_to_le32(DRAY_HW_MAX_MW);
	caps.max_srq = cpu_to_le32(DRAY_HW_MAX_SRQ);
	caps.max_srq_wr = cpu_to_le32(DRAY_HW_MAX_SRQ_WR);
	caps.max_srq_sge = cpu_to_le32(DRAY_HW_MAX_SGE);
	caps.max_counter_sets = cpu_to_le32(DRAY_HW_MAX_CSET);
	caps.max_mcast_grp = cpu_to_le32(DRAY_HW_MAX_MCG);
	caps.max_mcast_qp_attach = cpu_to_le32(DRAY_HW_MAX_MCG_QP);
	caps.max_xrcd = cpu_to_le32(DRAY_HW_MAX_XRCD);

	aq_write_out(hw, cmd, &caps, sizeof(caps), res);
}

static void aq_query_port(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res)
{
	const struct dray_cmd_query *cmd = &e->u.query;
	struct dray_port_attr attr = {};

	if (!all_zero(cmd->reserved, sizeof(cmd->reserved))) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (cmd->port != 1) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_PORT);
		return;
	}
	dray_hw_port_query(hw, &attr);
	aq_write_out(hw, cmd, &attr, sizeof(attr), res);
}

static void aq_set_gid(struct dray_hw *hw, const struct dray_aq_entry *e,
		       struct dray_aq_result *res)
{
	const struct dray_cmd_set_gid *cmd = &e->u.set_gid;
	u32 index = le32_to_cpu(cmd->index);

	if (!all_zero(cmd->reserved, sizeof(cmd->reserved))) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (index >= DRAY_HW_GID_TBL_LEN) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_GID_INDEX);
		return;
	}
	if (cmd->type != DRAY_GID_TYPE_ROCE_V2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_GID_TYPE);
		return;
	}

	spin_lock_bh(&hw->obj_lock);
	memcpy(hw->gids[index].gid, cmd->gid, sizeof(cmd->gid));
	hw->gids[index].valid = true;
	spin_unlock_bh(&hw->obj_lock);
}

static void aq_del_gid(struct dray_hw *hw, const struct dray_aq_entry *e,
		       struct dray_aq_result *res)
{
	const struct dray_cmd_del_gid *cmd = &e->u.del_gid;
	u32 index = le32_to_cpu(cmd->index);

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (index >= DRAY_HW_GID_TBL_LEN) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_GID_INDEX);
		return;
	}

	spin_lock_bh(&hw->obj_lock);
	if (hw->gids[index].valid)
		hw->gids[index].valid = false;
	else
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_GID_INDEX);
	spin_unlock_bh(&hw->obj_lock);
}

static void aq_create_eq(struct dray_hw *hw, const struct dray_aq_entry *e,
			 struct dray_aq_result *res)
{
	u32 eqn, syndrome;
	int status;

	status = dray_hw_eq_create(hw, &e->u.create_eq, &eqn, &syndrome);
	if (status)
		dray_aq_fail(res, status, syndrome);
	else
		res->result = eqn;
}

static void aq_destroy_eq(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_eq *cmd = &e->u.destroy_eq;
	int status;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	/* A CQ still raising its events there keeps the EQ. */
	if (dray_hw_eq_in_use(hw, le32_to_cpu(cmd->eqn))) {
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_EQN);
		return;
	}
	status = dray_hw_eq_destroy(hw, le32_to_cpu(cmd->eqn));
	if (status)
		dray_aq_fail(res, status, DRAY_AQ_SYN_EQN);
}

static void aq_create_uar(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res)
{
	u64 addr = le64_to_cpu(e->u.create_uar.page_addr);
	struct dray_uar *page;
	u32 idx;

	if (!IS_ALIGNED(addr, DRAY_UAR_SIZE)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_PAGE_ADDR);
		return;
	}
	page = dray_hw_dma_va(hw, addr, DRAY_UAR_SIZE);
	if (!page) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_PAGE_ADDR);
		return;
	}

	spin_lock_bh(&hw->obj_lock);
	for (idx = 0; idx < DRAY_HW_MAX_UAR; idx++)
		if (!hw->uars[idx].page)
			break;
	if (idx == DRAY_HW_MAX_UAR) {
		spin_unlock_bh(&hw->obj_lock);
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES, DRAY_AQ_SYN_NONE);
		return;
	}
	/*
	 * Initialize the device area under obj_lock, before the engine can
	 * see the UAR: it sets and clears NEED_WAKEUP under the same lock.
	 */
	memset(&page->dev, 0, sizeof(page->dev));
	WRITE_ONCE(page->dev.index, cpu_to_le32(idx));
	dray_hw_engine_uar_init(hw, page);
	hw->uars[idx].page = page;
	hw->uar_end = max(hw->uar_end, idx + 1);
	spin_unlock_bh(&hw->obj_lock);

	/* The magic tells software the rest of the device area is valid. */
	dma_wmb();
	WRITE_ONCE(page->dev.magic, cpu_to_le32(DRAY_UAR_MAGIC));
	res->result = idx;
}

static void aq_destroy_uar(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_uar *cmd = &e->u.destroy_uar;
	u32 idx = le32_to_cpu(cmd->uar_index);

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (idx >= DRAY_HW_MAX_UAR) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_UAR_INDEX);
		return;
	}
	/* QPs created with this UAR must be destroyed first. */
	if (dray_hw_uar_in_use(hw, idx)) {
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_UAR_INDEX);
		return;
	}
	spin_lock_bh(&hw->obj_lock);
	if (hw->uars[idx].page)
		hw->uars[idx].page = NULL;
	else
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_UAR_INDEX);
	while (hw->uar_end && !hw->uars[hw->uar_end - 1].page)
		hw->uar_end--;
	spin_unlock_bh(&hw->obj_lock);
}

typedef void (*aq_handler_t)(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res);

/*
 * One admin opcode: its handler and how many payload bytes its command
 * structure uses. The bytes after those are reserved and must be zero;
 * each handler checks the reserved fields inside its structure.
 */
struct aq_op {
	aq_handler_t	handler;
	u8		size;
};

#define AQ_OP(fn, cmd)	{ .handler = (fn), .size = sizeof(cmd) }

static const struct aq_op aq_ops[DRAY_CMD_MAX_OPCODE] = {
	[DRAY_CMD_QUERY_DEVICE]	= AQ_OP(aq_query_device, struct dray_cmd_query),
	[DRAY_CMD_QUERY_PORT]	= AQ_OP(aq_query_port, struct dray_cmd_query),
	[DRAY_CMD_SET_GID]	= AQ_OP(aq_set_gid, struct dray_cmd_set_gid),
	[DRAY_CMD_DEL_GID]	= AQ_OP(aq_del_gid, struct dray_cmd_del_gid),
	[DRAY_CMD_CREATE_EQ]	= AQ_OP(aq_create_eq, struct dray_cmd_create_eq),
	[DRAY_CMD_DESTROY_EQ]	= AQ_OP(aq_destroy_eq,
					struct dray_cmd_destroy_eq),
	[DRAY_CMD_CREATE_UAR]	= AQ_OP(aq_create_uar,
					struct dray_cmd_create_uar),
	[DRAY_CMD_DESTROY_UAR]	= AQ_OP(aq_destroy_uar,
					struct dray_cmd_destroy_uar),
	[DRAY_CMD_CREATE_PD]	= { .handler = dray_hw_cmd_create_pd },
	[DRAY_CMD_DESTROY_PD]	= AQ_OP(dray_hw_cmd_destroy_pd,
					struct dray_cmd_destroy_pd),
	[DRAY_CMD_CREATE_MR]	= AQ_OP(dray_hw_cmd_create_mr,
					struct dray_cmd_create_mr),
	[DRAY_CMD_DESTROY_MR]	= AQ_OP(dray_hw_cmd_destroy_mr,
					struct dray_cmd_destroy_mr),
	[DRAY_CMD_CREATE_CQ]	= AQ_OP(dray_hw_cmd_create_cq,
					struct dray_cmd_create_cq),
	[DRAY_CMD_DESTROY_CQ]	= AQ_OP(dray_hw_cmd_destroy_cq,
					struct dray_cmd_destroy_cq),
	[DRAY_CMD_RESIZE_CQ]	= AQ_OP(dray_hw_cmd_resize_cq,
					struct dray_cmd_resize_cq),
	[DRAY_CMD_ATTACH_MCAST]	= AQ_OP(dray_hw_cmd_attach_mcast,
					struct dray_cmd_mcast),
	[DRAY_CMD_DETACH_MCAST]	= AQ_OP(dray_hw_cmd_detach_mcast,
					struct dray_cmd_mcast),
	[DRAY_CMD_CREATE_QP]	= AQ_OP(dray_hw_cmd_create_qp,
					struct dray_cmd_qp),
	[DRAY_CMD_MODIFY_QP]	= AQ_OP(dray_hw_cmd_modify_qp,
					struct dray_cmd_qp),
	[DRAY_CMD_QUERY_QP]	= AQ_OP(dray_hw_cmd_query_qp,
					struct dray_cmd_qp),
	[DRAY_CMD_DESTROY_QP]	= AQ_OP(dray_hw_cmd_destroy_qp,
					struct dray_cmd_qp),
	[DRAY_CMD_CREATE_AH]	= AQ_OP(dray_hw_cmd_create_ah,
					struct dray_cmd_create_ah),
	[DRAY_CMD_DESTROY_AH]	= AQ_OP(dray_hw_cmd_destroy_ah,
					struct dray_cmd_destroy_ah),
	[DRAY_CMD_CREATE_MW]	= AQ_OP(dray_hw_cmd_create_mw,
					struct dray_cmd_create_mw),
	[DRAY_CMD_DESTROY_MW]	= AQ_OP(dray_hw_cmd_destroy_mw,
					struct dray_cmd_destroy_mw),
	[DRAY_CMD_MODIFY_MR]	= AQ_OP(dray_hw_cmd_modify_mr,
					struct dray_cmd_modify_mr),
	[DRAY_CMD_CREATE_SRQ]	= AQ_OP(dray_hw_cmd_create_srq,
					struct dray_cmd_create_srq),
	[DRAY_CMD_MODIFY_SRQ]	= AQ_OP(dray_hw_cmd_modify_srq,
					struct dray_cmd_modify_srq),
	[DRAY_CMD_QUERY_SRQ]	= AQ_OP(dray_hw_cmd_query_srq,
					struct dray_cmd_srq),
	[DRAY_CMD_DESTROY_SRQ]	= AQ_OP(dray_hw_cmd_destroy_srq,
					struct dray_cmd_srq),
	[DRAY_CMD_ALLOC_COUNTER_SET] = { .handler = dray_hw_cmd_alloc_cset },
	[DRAY_CMD_FREE_COUNTER_SET] = AQ_OP(dray_hw_cmd_free_cset,
					    struct dray_cmd_counter_set),
	[DRAY_CMD_BIND_COUNTER_SET] = AQ_OP(dray_hw_cmd_bind_cset,
					    struct dray_cmd_bind_counter_set),
	[DRAY_CMD_QUERY_COUNTERS] = AQ_OP(dray_hw_cmd_query_counters,
					  struct dray_cmd_query_id),
	[DRAY_CMD_QUERY_STATE]	= AQ_OP(dray_hw_cmd_query_state,
					struct dray_cmd_query_id),
	[DRAY_CMD_CREATE_XRCD]	= { .handler = dray_hw_cmd_create_xrcd },
	[DRAY_CMD_DESTROY_XRCD]	= AQ_OP(dray_hw_cmd_destroy_xrcd,
					struct dray_cmd_xrcd),
};

static void aq_execute(struct dray_hw *hw, const struct dray_aq_entry *e,
		       struct dray_aq_result *res)
{
	const struct aq_op *op;

	if (e->hdr.opcode >= DRAY_CMD_MAX_OPCODE ||
	    !aq_ops[e->hdr.opcode].handler) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_OPCODE, DRAY_AQ_SYN_NONE);
		return;
	}
	op = &aq_ops[e->hdr.opcode];
	if (e->hdr.flags || e->hdr.reserved ||
	    !all_zero(e->u.raw + op->size, DRAY_AQ_PAYLOAD_SIZE - op->size)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	op->handler(hw, e, res);
}

static void aq_complete(struct dray_hw *hw, __le16 cmd_id,
			const struct dray_aq_result *res)
{
	struct dray_aq_cqe *cqe =
		&hw->aq_cq[dray_ring_slot(hw->aq_cq_pi, hw->aq_depth)];
	u8 phase = dray_ring_phase(hw->aq_cq_pi, hw->aq_depth) ?
		   DRAY_AQ_CQE_PHASE : 0;

	WRITE_ONCE(cqe->cmd_id, cmd_id);
	WRITE_ONCE(cqe->status, res->status);
	WRITE_ONCE(cqe->syndrome, cpu_to_le32(res->syndrome));
	WRITE_ONCE(cqe->result, cpu_to_le64(res->result));
	/* The body must be visible before the phase bit hands it over. */
	dma_wmb();
	WRITE_ONCE(cqe->flags, phase);
	hw->aq_cq_pi++;
}

void dray_hw_aq_work(struct work_struct *work)
{
	struct dray_hw *hw = container_of(work, struct dray_hw, aq_work);
	bool completed = false;

	for (;;) {
		struct dray_aq_result res = {};
		struct dray_aq_entry entry;
		u16 pi, ci;

		spin_lock_bh(&hw->reg_lock);
		if (!(hw->dev_sts & DRAY_DEV_STS_READY)) {
			spin_unlock_bh(&hw->reg_lock);
			break;
		}
		pi = hw->aq_sq_pi;
		ci = hw->aq_sq_ci;
		spin_unlock_bh(&hw->reg_lock);
		if (pi == ci)
			break;
		if (!dray_ring_valid16(pi, ci, hw->aq_depth)) {
			dray_hw_set_fatal(hw, DRAY_FATAL_AQ_DOORBELL);
			break;
		}

		/* Read the entry once: the host may scribble on it meanwhile. */
		dma_rmb();
		memcpy(&entry, &hw->aq_sq[dray_ring_slot(ci, hw->aq_depth)],
		       sizeof(entry));

		aq_execute(hw, &entry, &res);
		aq_complete(hw, entry.hdr.cmd_id, &res);
		completed = true;

		spin_lock_bh(&hw->reg_lock);
		hw->aq_sq_ci = ci + 1;
		spin_unlock_bh(&hw->reg_lock);
	}

	if (completed)
		dray_hw_raise_irq(hw, hw->aq_vector);
}
