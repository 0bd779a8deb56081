// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: one typed function per admin opcode. Each builds the
 * command, runs it and converts the output to CPU order.
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include "dray.h"

static void cmd_init(struct dray_aq_entry *e, u8 opcode)
{
	memset(e, 0, sizeof(*e));
	e->hdr.opcode = opcode;
}

/*
 * Run a query command whose output the device writes to host memory.
 * The buffer is mapped for the device only for the command's duration.
 */
static int cmd_query(struct dray_dev *dev, u8 opcode, u8 port, void *out,
		     size_t len)
{
	struct device *dma_dev = dray_dma_dev(dev);
	struct dray_aq_entry e;
	dma_addr_t dma;
	void *buf;
	u64 written;
	int ret;

	buf = kzalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	dma = dma_map_single(dma_dev, buf, len, DMA_FROM_DEVICE);
	if (dma_mapping_error(dma_dev, dma)) {
		ret = -ENOMEM;
		goto free_buf;
	}

	cmd_init(&e, opcode);
	e.u.query.out_addr = cpu_to_le64(dma);
	e.u.query.out_len = cpu_to_le32(len);
	e.u.query.port = port;
	ret = dray_aq_exec(dev, &e, &written);
	dma_unmap_single(dma_dev, dma, len, DMA_FROM_DEVICE);
	if (!ret && written != len) {
		ddev_err_rl(dev, "query %u returned %llu bytes, expected %zu\n",
			    opcode, written, len);
		ret = -EIO;
	}
	if (!ret)
		memcpy(out, buf, len);
free_buf:
	kfree(buf);
	return ret;
}

int dray_cmd_query_device(struct dray_dev *dev, struct dray_caps *caps)
{
	struct dray_device_caps c;
	int ret;

	ret = cmd_query(dev, DRAY_CMD_QUERY_DEVICE, 0, &c, sizeof(c));
	if (ret)
		return ret;

	caps->fw_ver = le64_to_cpu(c.fw_ver);
	memcpy(&caps->node_guid, c.node_guid, sizeof(caps->node_guid));
	caps->vendor_id = le32_to_cpu(c.vendor_id);
	caps->vendor_part_id = le32_to_cpu(c.vendor_part_id);
	caps->hw_ver = le32_to_cpu(c.hw_ver);
	caps->max_mr_size = le64_to_cpu(c.max_mr_size);
	caps->page_size_cap = le64_to_cpu(c.page_size_cap);
	caps->max_uar = le32_to_cpu(c.max_uar);
	caps->max_eq = le32_to_cpu(c.max_eq);
	caps->max_pd = le32_to_cpu(c.max_pd);
	caps->max_mr = le32_to_cpu(c.max_mr);
	caps->max_qp = le32_to_cpu(c.max_qp);
	caps->max_qp_wr = le32_to_cpu(c.max_qp_wr);
	caps->max_send_sge = le32_to_cpu(c.max_send_sge);
	caps->max_recv_sge = le32_to_cpu(c.max_recv_sge);
	caps->max_sge_rd = le32_to_cpu(c.max_sge_rd);
	caps->max_cq = le32_to_cpu(c.max_cq);
	caps->max_cqe = le32_to_cpu(c.max_cqe);
	caps->max_ah = le32_to_cpu(c.max_ah);
	caps->max_qp_rd_atom = le32_to_cpu(c.max_qp_rd_atom);
	caps->max_qp_init_rd_atom = le32_to_cpu(c.max_qp_init_rd_atom);
	caps->max_inline_data = le32_to_cpu(c.max_inline_data);
	caps->max_msg_size = le32_to_cpu(c.max_msg_size);
	caps->gid_tbl_len = le32_to_cpu(c.gid_tbl_len);
	caps->local_ca_ack_delay = le32_to_cpu(c.local_ca_ack_delay);

	if (le32_to_cpu(c.num_ports) != 1) {
		ibdev_err(&dev->ibdev, "device reports %u ports, expected 1\n",
			  le32_to_cpu(c.num_ports));
		return -EIO;
	}
	return 0;
}

int dray_cmd_query_port(struct dray_dev *dev, u8 port,
			struct dray_port_attr *attr)
{
	return cmd_query(dev, DRAY_CMD_QUERY_PORT, port, attr, sizeof(*attr));
}

int dray_cmd_set_gid(struct dray_dev *dev, u32 index, const u8 *gid)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_SET_GID);
	e.u.set_gid.index = cpu_to_le32(index);
	e.u.set_gid.type = DRAY_GID_TYPE_ROCE_V2;
	memcpy(e.u.set_gid.gid, gid, sizeof(e.u.set_gid.gid));
	return dray_aq_exec(dev, &e, NULL);
}

int dray_cmd_del_gid(struct dray_dev *dev, u32 index)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DEL_GID);
	e.u.del_gid.index = cpu_to_le32(index);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_cmd_create_eq(struct dray_dev *dev, dma_addr_t ring, u8 log_depth,
		       u8 vector, u32 *eqn)
{
	struct dray_aq_entry e;
	u64 res;
	int ret;

	cmd_init(&e, DRAY_CMD_CREATE_EQ);
	e.u.create_eq.ring_addr = cpu_to_le64(ring);
	e.u.create_eq.log_depth = log_depth;
	e.u.create_eq.vector = vector;
	ret = dray_aq_exec(dev, &e, &res);
	if (!ret)
		*eqn = res;
	return ret;
}

int dray_cmd_destroy_eq(struct dray_dev *dev, u32 eqn)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DESTROY_EQ);
	e.u.destroy_eq.eqn = cpu_to_le32(eqn);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_cmd_create_uar(struct dray_dev *dev, dma_addr_t page, u32 *index)
{
	struct dray_aq_entry e;
	u64 res;
	int ret;

	cmd_init(&e, DRAY_CMD_CREATE_UAR);
	e.u.create_uar.page_addr = cpu_to_le64(page);
	ret = dray_aq_exec(dev, &e, &res);
	if (!ret)
		*index = res;
	return ret;
}

int dray_cmd_destroy_uar(struct dray_dev *dev, u32 index)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DESTROY_UAR);
	e.u.destroy_uar.uar_index = cpu_to_le32(index);
	return dray_aq_exec(dev, &e, NULL);
}
