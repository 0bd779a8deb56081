// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: one typed function per admin opcode (dray_admin_*), with
 * CPU-order parameters (struct dray_*_params) where a command has more
 * than a few. Each builds the wire format (struct dray_cmd_*), runs it
 * and converts the output to CPU order.
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
 * Every query command whose output the device writes to host memory has
 * out_addr and out_len where struct dray_cmd_query has them.
 */
static_assert(offsetof(struct dray_cmd_query_id, out_addr) ==
	      offsetof(struct dray_cmd_query, out_addr));
static_assert(offsetof(struct dray_cmd_query_id, out_len) ==
	      offsetof(struct dray_cmd_query, out_len));

/*
 * Run query command @e (its other fields set) whose output the device
 * writes to host memory: exactly @len bytes to @out. The buffer is
 * mapped for the device only for the command's duration.
 */
static int cmd_query_out(struct dray_dev *dev, struct dray_aq_entry *e,
			 void *out, size_t len)
{
	struct device *dma_dev = dray_dma_dev(dev);
	u8 opcode = e->hdr.opcode;
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

	e->u.query.out_addr = cpu_to_le64(dma);
	e->u.query.out_len = cpu_to_le32(len);
	ret = dray_aq_exec(dev, e, &written);
	dma_unmap_single(dma_dev, dma, len, DMA_FROM_DEVICE);
	if (!ret && written != len) {
		ddev_err_rl(dev, "%s returned %llu bytes, expected %zu\n",
			    dray_aq_opcode_name(opcode), written, len);
		ret = -EIO;
	}
	if (!ret)
		memcpy(out, buf, len);
free_buf:
	kfree(buf);
	return ret;
}

static int cmd_query(struct dray_dev *dev, u8 opcode, u8 port, void *out,
		     size_t len)
{
	struct dray_aq_entry e;

	cmd_init(&e, opcode);
	e.u.query.port = port;
	return cmd_query_out(dev, &e, out, len);
}

int dray_admin_query_device(struct dray_dev *dev, struct dray_caps *caps)
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
	caps->max_fr_pages = le32_to_cpu(c.max_fr_pages);
	caps->max_mw = le32_to_cpu(c.max_mw);
	caps->max_srq = le32_to_cpu(c.max_srq);
	caps->max_srq_wr = le32_to_cpu(c.max_srq_wr);
	caps->max_srq_sge = le32_to_cpu(c.max_srq_sge);
	caps->max_counter_sets = le32_to_cpu(c.max_counter_sets);
	caps->max_mcast_grp = le32_to_cpu(c.max_mcast_grp);
	caps->max_mcast_qp_attach = le32_to_cpu(c.max_mcast_qp_attach);
	caps->max_xrcd = le32_to_cpu(c.max_xrcd);

	if (le32_to_cpu(c.num_ports) != 1) {
		ibdev_err(&dev->ibdev, "device reports %u ports, expected 1\n",
			  le32_to_cpu(c.num_ports));
		return -EIO;
	}
	return 0;
}

int dray_admin_query_port(struct dray_dev *dev, u8 port,
			  struct dray_port_attr *attr)
{
	return cmd_query(dev, DRAY_CMD_QUERY_PORT, port, attr, sizeof(*attr));
}

int dray_admin_set_gid(struct dray_dev *dev, u32 index, const u8 *gid)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_SET_GID);
	e.u.set_gid.index = cpu_to_le32(index);
	e.u.set_gid.type = DRAY_GID_TYPE_ROCE_V2;
	memcpy(e.u.set_gid.gid, gid, sizeof(e.u.set_gid.gid));
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_del_gid(struct dray_dev *dev, u32 index)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DEL_GID);
	e.u.del_gid.index = cpu_to_le32(index);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_create_eq(struct dray_dev *dev, dma_addr_t ring, u8 log_depth,
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

int dray_admin_destroy_eq(struct dray_dev *dev, u32 eqn)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DESTROY_EQ);
	e.u.destroy_eq.eqn = cpu_to_le32(eqn);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_create_uar(struct dray_dev *dev, dma_addr_t page, u32 *index)
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

int dray_admin_destroy_uar(struct dray_dev *dev, u32 index)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DESTROY_UAR);
	e.u.destroy_uar.uar_index = cpu_to_le32(index);
	return dray_aq_exec(dev, &e, NULL);
}

/*
 * A mailbox: a host buffer the device reads a command's input from or
 * writes its output to, mapped for the command's duration only.
 */
struct cmd_mbox {
	void			*buf;
	dma_addr_t		dma;
	size_t			len;
	enum dma_data_direction	dir;
};

/* Input mailboxes are filled by the caller before mbox_map(). */
static int mbox_alloc(struct cmd_mbox *mb, size_t len,
		      enum dma_data_direction dir)
{
	mb->buf = kzalloc(len, GFP_KERNEL);
	if (!mb->buf)
		return -ENOMEM;
	mb->len = len;
	mb->dir = dir;
	return 0;
}

static int mbox_map(struct dray_dev *dev, struct cmd_mbox *mb)
{
	struct device *dma_dev = dray_dma_dev(dev);

	mb->dma = dma_map_single(dma_dev, mb->buf, mb->len, mb->dir);
	if (dma_mapping_error(dma_dev, mb->dma))
		return -ENOMEM;
	return 0;
}

static void mbox_unmap(struct dray_dev *dev, struct cmd_mbox *mb)
{
	dma_unmap_single(dray_dma_dev(dev), mb->dma, mb->len, mb->dir);
}

static void mbox_free(struct cmd_mbox *mb)
{
	kfree(mb->buf);
}

/* Run a command whose only argument is the object number @num. */
static int cmd_destroy(struct dray_dev *dev, u8 opcode, u32 num)
{
	struct dray_aq_entry e;

	cmd_init(&e, opcode);
	/* Every DESTROY_* command starts with the object number. */
	e.u.destroy_pd.pdn = cpu_to_le32(num);
	return dray_aq_exec(dev, &e, NULL);
}

/* The result of a CREATE_* command is a 32-bit object number or key. */
static int cmd_create_result(struct dray_dev *dev, struct dray_aq_entry *e,
			     u32 *num)
{
	u64 res;
	int ret;

	ret = dray_aq_exec(dev, e, &res);
	if (ret)
		return ret;
	if (res > U32_MAX) {
		/* A device bug: the object cannot be named, so it leaks. */
		ddev_err_rl(dev, "command %u returned object %#llx\n",
			    e->hdr.opcode, res);
		return -EIO;
	}
	*num = res;
	return 0;
}

static_assert(offsetof(struct dray_cmd_destroy_pd, pdn) == 0);
static_assert(offsetof(struct dray_cmd_destroy_mr, key) == 0);
static_assert(offsetof(struct dray_cmd_destroy_cq, cqn) == 0);
static_assert(offsetof(struct dray_cmd_destroy_ah, ahn) == 0);
static_assert(offsetof(struct dray_cmd_destroy_mw, key) == 0);
static_assert(offsetof(struct dray_cmd_counter_set, set) == 0);

/* A command without parameters whose result is an object number. */
static int cmd_create_bare(struct dray_dev *dev, u8 opcode, u32 *num)
{
	struct dray_aq_entry e;

	cmd_init(&e, opcode);
	return cmd_create_result(dev, &e, num);
}

int dray_admin_create_pd(struct dray_dev *dev, u32 *pdn)
{
	return cmd_create_bare(dev, DRAY_CMD_CREATE_PD, pdn);
}

int dray_admin_destroy_pd(struct dray_dev *dev, u32 pdn)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_PD, pdn);
}

int dray_admin_create_xrcd(struct dray_dev *dev, u32 *xrcdn)
{
	return cmd_create_bare(dev, DRAY_CMD_CREATE_XRCD, xrcdn);
}

int dray_admin_destroy_xrcd(struct dray_dev *dev, u32 xrcdn)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_XRCD, xrcdn);
}

int dray_admin_create_mr(struct dray_dev *dev, const struct dray_mr_params *p,
			 u32 *key)
{
	struct dray_cmd_create_mr *c;
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_CREATE_MR);
	c = &e.u.create_mr;
	c->pdn = cpu_to_le32(p->pdn);
	c->access = p->access;
	c->flags = p->flags;
	c->iova = cpu_to_le64(p->iova);
	c->length = cpu_to_le64(p->length);
	c->mtt_addr = cpu_to_le64(p->mtt_addr);
	c->n_pages = cpu_to_le32(p->n_pages);
	return cmd_create_result(dev, &e, key);
}

int dray_admin_destroy_mr(struct dray_dev *dev, u32 key)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_MR, key);
}

int dray_admin_modify_mr(struct dray_dev *dev, u32 key, u8 what,
			 const struct dray_mr_params *p)
{
	struct dray_cmd_modify_mr *c;
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_MODIFY_MR);
	c = &e.u.modify_mr;
	c->key = cpu_to_le32(key);
	c->what = what;
	c->pdn = cpu_to_le32(p->pdn);
	c->access = p->access;
	c->iova = cpu_to_le64(p->iova);
	c->length = cpu_to_le64(p->length);
	c->mtt_addr = cpu_to_le64(p->mtt_addr);
	c->n_pages = cpu_to_le32(p->n_pages);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_create_mw(struct dray_dev *dev, u32 pdn, u8 type, u32 *key)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_CREATE_MW);
	e.u.create_mw.pdn = cpu_to_le32(pdn);
	e.u.create_mw.type = type;
	return cmd_create_result(dev, &e, key);
}

int dray_admin_destroy_mw(struct dray_dev *dev, u32 key)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_MW, key);
}

int dray_admin_create_cq(struct dray_dev *dev, const struct dray_cq_params *p,
			 u32 *cqn)
{
	struct dray_cmd_create_cq *c;
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_CREATE_CQ);
	c = &e.u.create_cq;
	c->mtt_addr = cpu_to_le64(p->mtt_addr);
	c->n_pages = cpu_to_le32(p->n_pages);
	c->eqn = cpu_to_le32(p->eqn);
	c->log_depth = p->log_depth;
	return cmd_create_result(dev, &e, cqn);
}

int dray_admin_destroy_cq(struct dray_dev *dev, u32 cqn)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_CQ, cqn);
}

int dray_admin_mcast(struct dray_dev *dev, u32 qpn, const u8 *gid,
		     bool attach)
{
	struct dray_aq_entry e;

	cmd_init(&e, attach ? DRAY_CMD_ATTACH_MCAST : DRAY_CMD_DETACH_MCAST);
	e.u.mcast.qpn = cpu_to_le32(qpn);
	memcpy(e.u.mcast.gid, gid, sizeof(e.u.mcast.gid));
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_resize_cq(struct dray_dev *dev, u32 cqn,
			 const struct dray_cq_params *p, u32 *carried)
{
	struct dray_cmd_resize_cq *c;
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_RESIZE_CQ);
	c = &e.u.resize_cq;
	c->mtt_addr = cpu_to_le64(p->mtt_addr);
	c->n_pages = cpu_to_le32(p->n_pages);
	c->cqn = cpu_to_le32(cqn);
	c->log_depth = p->log_depth;
	return cmd_create_result(dev, &e, carried);
}

static_assert(offsetof(struct dray_cmd_srq, srqn) == 0);

int dray_admin_create_srq(struct dray_dev *dev,
			  const struct dray_srq_params *p, u32 *srqn)
{
	struct dray_cmd_create_srq *c;
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_CREATE_SRQ);
	c = &e.u.create_srq;
	c->mtt_addr = cpu_to_le64(p->mtt_addr);
	c->n_pages = cpu_to_le32(p->n_pages);
	c->pdn = cpu_to_le32(p->pdn);
	c->log_depth = p->log_depth;
	c->log_stride = p->log_stride;
	if (p->xrcdn) {
		c->flags = DRAY_SRQ_F_XRC;
		c->xrcdn = cpu_to_le32(p->xrcdn);
		c->cqn = cpu_to_le32(p->cqn);
	}
	return cmd_create_result(dev, &e, srqn);
}

int dray_admin_modify_srq(struct dray_dev *dev, u32 srqn, u32 limit)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_MODIFY_SRQ);
	e.u.modify_srq.srqn = cpu_to_le32(srqn);
	e.u.modify_srq.limit = cpu_to_le32(limit);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_query_srq(struct dray_dev *dev, u32 srqn, u32 *limit,
			 bool *error)
{
	struct dray_aq_entry e;
	u64 res;
	int ret;

	cmd_init(&e, DRAY_CMD_QUERY_SRQ);
	e.u.srq.srqn = cpu_to_le32(srqn);
	ret = dray_aq_exec(dev, &e, &res);
	if (ret)
		return ret;
	*limit = FIELD_GET(DRAY_SRQ_QUERY_LIMIT_MASK, res);
	*error = res & DRAY_SRQ_QUERY_ERROR;
	return 0;
}

int dray_admin_destroy_srq(struct dray_dev *dev, u32 srqn)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_SRQ, srqn);
}

/* Run a QP command with a mailbox (struct dray_cmd_qp). */
static int cmd_qp(struct dray_dev *dev, u8 opcode, u32 qpn,
		  struct cmd_mbox *mb, u64 *result)
{
	struct dray_aq_entry e;
	int ret;

	ret = mbox_map(dev, mb);
	if (ret)
		return ret;
	cmd_init(&e, opcode);
	e.u.qp.qpn = cpu_to_le32(qpn);
	e.u.qp.len = cpu_to_le32(mb->len);
	e.u.qp.addr = cpu_to_le64(mb->dma);
	ret = dray_aq_exec(dev, &e, result);
	mbox_unmap(dev, mb);
	return ret;
}

int dray_admin_create_qp(struct dray_dev *dev, const struct dray_qp_params *p,
			 u32 *qpn)
{
	struct dray_qp_create *c;
	struct cmd_mbox mb;
	u64 res;
	int ret;

	ret = mbox_alloc(&mb, sizeof(*c), DMA_TO_DEVICE);
	if (ret)
		return ret;
	c = mb.buf;
	c->type = p->type;
	c->sq_log_depth = p->sq_log_depth;
	c->sq_log_stride = p->sq_log_stride;
	c->rq_log_depth = p->rq_log_depth;
	c->rq_log_stride = p->rq_log_stride;
	c->flags = p->flags;
	c->pdn = cpu_to_le32(p->pdn);
	c->send_cqn = cpu_to_le32(p->send_cqn);
	c->recv_cqn = cpu_to_le32(p->recv_cqn);
	c->uar_index = cpu_to_le32(p->uar_index);
	c->sq_mtt = cpu_to_le64(p->sq_mtt);
	c->sq_n_pages = cpu_to_le32(p->sq_n_pages);
	c->rq_mtt = cpu_to_le64(p->rq_mtt);
	c->rq_n_pages = cpu_to_le32(p->rq_n_pages);
	c->srqn = cpu_to_le32(p->srqn);
	c->xrcdn = cpu_to_le32(p->xrcdn);

	ret = cmd_qp(dev, DRAY_CMD_CREATE_QP, 0, &mb, &res);
	mbox_free(&mb);
	if (ret)
		return ret;
	if (res > DRAY_QPN_MASK) {
		/* A device bug: not a QP number the wire can carry; leaks. */
		ddev_err_rl(dev, "CREATE_QP returned QP number %#llx\n", res);
		return -EIO;
	}
	*qpn = res;
	return 0;
}

/* A path in the device's format (commands, and UD WQEs' address vectors). */
void dray_path_to_hw(struct dray_path *hw, const struct dray_path_params *p)
{
	memset(hw, 0, sizeof(*hw));
	memcpy(hw->dmac, p->dmac, sizeof(hw->dmac));
	hw->sgid_index = p->sgid_index;
	hw->hop_limit = p->hop_limit;
	memcpy(hw->dgid, p->dgid, sizeof(hw->dgid));
	hw->traffic_class = p->traffic_class;
	hw->flow_label = cpu_to_le32(p->flow_label);
	hw->udp_sport = cpu_to_le16(p->udp_sport);
}

static void path_from_hw(struct dray_path_params *p, const struct dray_path *hw)
{
	memcpy(p->dmac, hw->dmac, sizeof(p->dmac));
	p->sgid_index = hw->sgid_index;
	p->hop_limit = hw->hop_limit;
	memcpy(p->dgid, hw->dgid, sizeof(p->dgid));
	p->traffic_class = hw->traffic_class;
	p->flow_label = le32_to_cpu(hw->flow_label);
	p->udp_sport = le16_to_cpu(hw->udp_sport);
}

int dray_admin_modify_qp(struct dray_dev *dev, u32 qpn,
			 const struct dray_qp_attr_params *p)
{
	struct dray_qp_attr *a;
	struct cmd_mbox mb;
	int ret;

	ret = mbox_alloc(&mb, sizeof(*a), DMA_TO_DEVICE);
	if (ret)
		return ret;
	a = mb.buf;
	a->attr_mask = cpu_to_le32(p->mask);
	a->state = p->state;
	a->cur_state = p->cur_state;
	a->path_mtu = p->path_mtu;
	a->timeout = p->timeout;
	a->retry_cnt = p->retry_cnt;
	a->rnr_retry = p->rnr_retry;
	a->min_rnr_timer = p->min_rnr_timer;
	a->max_rd_atomic = p->max_rd_atomic;
	a->max_dest_rd_atomic = p->max_dest_rd_atomic;
	a->access = p->access;
	a->dest_qpn = cpu_to_le32(p->dest_qpn);
	a->rq_psn = cpu_to_le32(p->rq_psn);
	a->sq_psn = cpu_to_le32(p->sq_psn);
	a->qkey = cpu_to_le32(p->qkey);
	dray_path_to_hw(&a->path, &p->path);

	ret = cmd_qp(dev, DRAY_CMD_MODIFY_QP, qpn, &mb, NULL);
	mbox_free(&mb);
	return ret;
}

int dray_admin_query_qp(struct dray_dev *dev, u32 qpn,
			struct dray_qp_attr_params *p)
{
	const struct dray_qp_attr *a;
	struct cmd_mbox mb;
	int ret;

	ret = mbox_alloc(&mb, sizeof(*a), DMA_FROM_DEVICE);
	if (ret)
		return ret;
	ret = cmd_qp(dev, DRAY_CMD_QUERY_QP, qpn, &mb, NULL);
	if (ret)
		goto free_mbox;

	a = mb.buf;
	p->mask = le32_to_cpu(a->attr_mask);
	p->state = a->state;
	p->cur_state = a->cur_state;
	p->path_mtu = a->path_mtu;
	p->timeout = a->timeout;
	p->retry_cnt = a->retry_cnt;
	p->rnr_retry = a->rnr_retry;
	p->min_rnr_timer = a->min_rnr_timer;
	p->max_rd_atomic = a->max_rd_atomic;
	p->max_dest_rd_atomic = a->max_dest_rd_atomic;
	p->access = a->access;
	p->sq_draining = a->sq_draining;
	p->dest_qpn = le32_to_cpu(a->dest_qpn);
	p->rq_psn = le32_to_cpu(a->rq_psn);
	p->sq_psn = le32_to_cpu(a->sq_psn);
	p->qkey = le32_to_cpu(a->qkey);
	path_from_hw(&p->path, &a->path);
free_mbox:
	mbox_free(&mb);
	return ret;
}

int dray_admin_destroy_qp(struct dray_dev *dev, u32 qpn)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_DESTROY_QP);
	e.u.qp.qpn = cpu_to_le32(qpn);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_create_ah(struct dray_dev *dev, u32 pdn,
			 const struct dray_path_params *path, u32 *ahn)
{
	struct dray_aq_entry e;
	struct cmd_mbox mb;
	int ret;

	ret = mbox_alloc(&mb, sizeof(struct dray_path), DMA_TO_DEVICE);
	if (ret)
		return ret;
	dray_path_to_hw(mb.buf, path);
	ret = mbox_map(dev, &mb);
	if (ret)
		goto free_mbox;

	cmd_init(&e, DRAY_CMD_CREATE_AH);
	e.u.create_ah.pdn = cpu_to_le32(pdn);
	e.u.create_ah.addr = cpu_to_le64(mb.dma);
	e.u.create_ah.len = cpu_to_le32(mb.len);
	ret = cmd_create_result(dev, &e, ahn);
	mbox_unmap(dev, &mb);
free_mbox:
	mbox_free(&mb);
	return ret;
}

int dray_admin_destroy_ah(struct dray_dev *dev, u32 ahn)
{
	return cmd_destroy(dev, DRAY_CMD_DESTROY_AH, ahn);
}

int dray_admin_alloc_counter_set(struct dray_dev *dev, u32 *set)
{
	return cmd_create_bare(dev, DRAY_CMD_ALLOC_COUNTER_SET, set);
}

int dray_admin_free_counter_set(struct dray_dev *dev, u32 set)
{
	return cmd_destroy(dev, DRAY_CMD_FREE_COUNTER_SET, set);
}

int dray_admin_bind_counter_set(struct dray_dev *dev, u32 qpn, u32 set)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_BIND_COUNTER_SET);
	e.u.bind_counter_set.qpn = cpu_to_le32(qpn);
	e.u.bind_counter_set.set = cpu_to_le32(set);
	return dray_aq_exec(dev, &e, NULL);
}

int dray_admin_query_counters(struct dray_dev *dev, u8 scope, u32 id,
			      u64 *values)
{
	struct dray_counters c;
	struct dray_aq_entry e;
	int ret, i;

	cmd_init(&e, DRAY_CMD_QUERY_COUNTERS);
	e.u.query_id.kind = scope;
	e.u.query_id.id = cpu_to_le32(id);
	ret = cmd_query_out(dev, &e, &c, sizeof(c));
	if (ret)
		return ret;
	for (i = 0; i < DRAY_CNT_MAX; i++)
		values[i] = le64_to_cpu(c.v[i]);
	return 0;
}

int dray_admin_query_state(struct dray_dev *dev, u8 kind, u32 id,
			   struct dray_obj_state *out)
{
	struct dray_aq_entry e;

	cmd_init(&e, DRAY_CMD_QUERY_STATE);
	e.u.query_id.kind = kind;
	e.u.query_id.id = cpu_to_le32(id);
	return cmd_query_out(dev, &e, out, sizeof(*out));
}
