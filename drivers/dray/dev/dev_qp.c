// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: protection domains, queue pairs and address handles.
 *
 * The admin commands here create, modify, query and destroy the objects
 * (the IBTA QP state machine lives in qp_transitions[]); the rest is the
 * part of the queue engine that reads work queues: fetching and checking
 * WQEs, in-order completion, and moving a QP to the error state with
 * every outstanding WQE flushed.
 *
 * Everything read from a queue buffer or doorbell record is hostile: a
 * WQE is copied out of the ring once and only the copy is checked and
 * used; every index is checked against the ring (see dev_qp.h).
 */

#include <linux/etherdevice.h>
#include <linux/jhash.h>
#include <net/ipv6.h>

#include "dev.h"
#include "dev_logic.h"

#define qp_dbg(hw, qp, fmt, ...) \
	pr_debug("dray-nic %s: QP[%u] " fmt, netdev_name((hw)->ndev), \
		 (qp)->qpn, ##__VA_ARGS__)
#define qp_warn_rl(hw, qp, fmt, ...) \
	pr_warn_ratelimited("dray-nic %s: QP[%u] " fmt, \
			    netdev_name((hw)->ndev), (qp)->qpn, ##__VA_ARGS__)

#define DRAY_FLOW_LABEL_MASK	0xfffffU
#define DRAY_HOP_LIMIT_DEFAULT	64

/* Largest WQE strides: header plus every SGE or the largest inline data. */
#define DRAY_SQ_LOG_STRIDE_MIN	6
#define DRAY_SQ_LOG_STRIDE_MAX	9
#define DRAY_RQ_LOG_STRIDE_MIN	4
#define DRAY_RQ_LOG_STRIDE_MAX	9
static_assert(DRAY_SQ_WQE_HDR_SIZE +
	      DRAY_HW_MAX_SGE * DRAY_SGE_SIZE <= 1 << DRAY_SQ_LOG_STRIDE_MAX);
static_assert(DRAY_SQ_WQE_HDR_SIZE + DRAY_HW_MAX_INLINE <=
	      1 << DRAY_SQ_LOG_STRIDE_MAX);
static_assert(DRAY_RQ_WQE_HDR_SIZE +
	      DRAY_HW_MAX_SGE * DRAY_SGE_SIZE <= 1 << DRAY_RQ_LOG_STRIDE_MAX);

/* ---- PDs ---------------------------------------------------------------- */

void dray_hw_cmd_create_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_pd *pd;
	u32 pdn;

	pd = kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES, DRAY_AQ_SYN_NONE);
		return;
	}
	mutex_lock(&eng->admin_lock);
	if (xa_alloc_cyclic(&eng->pds, &pdn, pd, XA_LIMIT(1, DRAY_HW_MAX_PD),
			    &eng->pdn_next, GFP_KERNEL) < 0) {
		mutex_unlock(&eng->admin_lock);
		kfree(pd);
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES, DRAY_AQ_SYN_NONE);
		return;
	}
	pd->pdn = pdn;
	mutex_unlock(&eng->admin_lock);
	res->result = pdn;
}

void dray_hw_cmd_destroy_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_pd *cmd = &e->u.destroy_pd;
	struct dray_hw_engine *eng = &hw->engine;
	u32 pdn = le32_to_cpu(cmd->pdn);
	struct dray_hw_pd *pd;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	pd = xa_load(&eng->pds, pdn);
	if (!pd) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_PDN);
		pd = NULL;
	} else if (pd->users) {
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_PDN);
		pd = NULL;
	} else {
		xa_erase(&eng->pds, pdn);
	}
	mutex_unlock(&eng->admin_lock);
	kfree(pd);
}

/* Drop a reference an MR, QP or AH held on its PD. */
static void pd_put(struct dray_hw *hw, u32 pdn)
{
	struct dray_hw_pd *pd = xa_load(&hw->engine.pds, pdn);

	if (pd)
		pd->users--;
}

/* ---- mailboxes ---------------------------------------------------------- */

/* Copy a command's input mailbox (exactly @size bytes) once. */
static bool mailbox_in(struct dray_hw *hw, const struct dray_cmd_qp *cmd,
		       void *dst, size_t size, struct dray_aq_result *res)
{
	const void *src;

	if (le32_to_cpu(cmd->len) != size) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_IN_LEN);
		return false;
	}
	src = dray_hw_dma_va(hw, le64_to_cpu(cmd->addr), size);
	if (!src) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_IN_ADDR);
		return false;
	}
	memcpy(dst, src, size);
	return true;
}

/* ---- paths ------------------------------------------------------------ */

static bool gid_is_v4(const u8 *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid);
}

static bool gid_is_multicast(const u8 *gid)
{
	if (gid_is_v4(gid))
		return ipv4_is_multicast(*(const __be32 *)(gid + 12));
	return ipv6_addr_is_multicast((const struct in6_addr *)gid);
}

/*
 * A RoCEv2 UDP source port from the range IBTA A17.5 sets aside
 * (0xC000..0xFFFF), from the flow label or else from @a and @b.
 */
static u16 path_udp_sport(u32 flow_label, u32 a, u32 b)
{
	u32 fl = flow_label ? flow_label : jhash_2words(a, b, 0);

	return 0xc000 | ((fl ^ (fl >> 14) ^ (fl >> 28)) & 0x3fff);
}

/*
 * Resolve a struct dray_path for a QP (@connected: unicast only) or an AH.
 * The UDP source port is left 0 when the path asks the device to pick
 * one; the caller derives it. Returns a DRAY_AQ_STS_* status.
 */
static int path_resolve(struct dray_hw *hw, const struct dray_path *p,
			bool connected, struct dray_hw_path *out,
			u32 *syndrome)
{
	u32 flow_label = le32_to_cpu(p->flow_label);

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (memchr_inv(p->reserved, 0, sizeof(p->reserved)) ||
	    memchr_inv(p->reserved2, 0, sizeof(p->reserved2)))
		return DRAY_AQ_STS_BAD_PARAM;

	memset(out, 0, sizeof(*out));
	*syndrome = DRAY_AQ_SYN_SGID_INDEX;
	if (!dray_hw_gid_get(hw, p->sgid_index, out->sgid))
		return DRAY_AQ_STS_BAD_PARAM;
	memcpy(out->dgid, p->dgid, sizeof(out->dgid));
	/* The source address must be of the destination's family. */
	if (gid_is_v4(out->sgid) != gid_is_v4(out->dgid))
		return DRAY_AQ_STS_BAD_PARAM;

	*syndrome = DRAY_AQ_SYN_QP_ATTR;
	if (ipv6_addr_any((const struct in6_addr *)out->dgid) ||
	    flow_label & ~DRAY_FLOW_LABEL_MASK ||
	    is_zero_ether_addr(p->dmac))
		return DRAY_AQ_STS_BAD_PARAM;
	if (connected && (gid_is_multicast(out->dgid) ||
			  !is_valid_ether_addr(p->dmac)))
		return DRAY_AQ_STS_BAD_PARAM;

	ether_addr_copy(out->dmac, p->dmac);
	out->ipv4 = gid_is_v4(out->sgid);
	out->sgid_index = p->sgid_index;
	out->hop_limit = p->hop_limit ? p->hop_limit : DRAY_HOP_LIMIT_DEFAULT;
	out->traffic_class = p->traffic_class;
	out->flow_label = flow_label;
	out->udp_sport = le16_to_cpu(p->udp_sport);
	return DRAY_AQ_STS_OK;
}

/* ---- AHs -------------------------------------------------------------- */

/* The UDP source port of an AH whose path leaves it to the device. */
static void ah_udp_sport(struct dray_hw_path *path)
{
	if (!path->udp_sport)
		path->udp_sport = path_udp_sport(path->flow_label,
						 jhash(path->dgid, 16, 0), 0);
}

/**
 * dray_hw_av_resolve() - resolve the address vector of a UD send WQE
 * @hw: the device
 * @av: the WQE's address vector (host memory: not trusted)
 * @out: receives the path, as an AH would hold it
 *
 * Return: true if @av is a path CREATE_AH would take.
 */
bool dray_hw_av_resolve(struct dray_hw *hw, const struct dray_path *av,
			struct dray_hw_path *out)
{
	u32 syndrome;

	if (path_resolve(hw, av, false, out, &syndrome) != DRAY_AQ_STS_OK)
		return false;
	ah_udp_sport(out);
	return true;
}

void dray_hw_cmd_create_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_create_ah *cmd = &e->u.create_ah;
	struct dray_hw_engine *eng = &hw->engine;
	u32 pdn = le32_to_cpu(cmd->pdn);
	struct dray_path path;
	struct dray_hw_ah *ah;
	struct dray_hw_pd *pd;
	u32 syndrome, ahn;
	const void *src;
	int status;

	if (cmd->reserved || cmd->reserved2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (le32_to_cpu(cmd->len) != sizeof(path)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_IN_LEN);
		return;
	}
	src = dray_hw_dma_va(hw, le64_to_cpu(cmd->addr), sizeof(path));
	if (!src) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_IN_ADDR);
		return;
	}
	memcpy(&path, src, sizeof(path));

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES, DRAY_AQ_SYN_NONE);
		return;
	}
	status = path_resolve(hw, &path, false, &ah->path, &syndrome);
	if (status)
		goto free_ah;
	ah_udp_sport(&ah->path);
	ah->pdn = pdn;

	mutex_lock(&eng->admin_lock);
	pd = xa_load(&eng->pds, pdn);
	if (!pd) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_PDN;
		goto unlock;
	}
	/* Reserve the number, then publish the AH in the reserved slot. */
	if (xa_alloc_cyclic(&eng->ahs, &ahn, NULL, XA_LIMIT(1, DRAY_HW_MAX_AH),
			    &eng->ahn_next, GFP_KERNEL) < 0) {
		status = DRAY_AQ_STS_NO_RESOURCES;
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	ah->ahn = ahn;
	pd->users++;
	spin_lock_bh(&eng->lock);
	xa_store(&eng->ahs, ahn, ah, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	res->result = ahn;
	return;

unlock:
	mutex_unlock(&eng->admin_lock);
free_ah:
	kfree(ah);
	dray_aq_fail(res, status, syndrome);
}

void dray_hw_cmd_destroy_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_ah *cmd = &e->u.destroy_ah;
	struct dray_hw_engine *eng = &hw->engine;
	u32 ahn = le32_to_cpu(cmd->ahn);
	struct dray_hw_ah *ah;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	mutex_lock(&eng->admin_lock);
	spin_lock_bh(&eng->lock);
	ah = xa_erase(&eng->ahs, ahn);
	dray_hw_engine_unlock(hw);
	if (ah)
		pd_put(hw, ah->pdn);
	mutex_unlock(&eng->admin_lock);
	if (!ah) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_AHN);
		return;
	}
	kfree(ah);
}

struct dray_hw_ah *dray_hw_ah_find(struct dray_hw *hw, u32 ahn)
{
	lockdep_assert_held(&hw->engine.lock);
	return xa_load(&hw->engine.ahs, ahn);
}

/* ---- QP creation and destruction --------------------------------------- */

struct dray_hw_qp *dray_hw_qp_find(struct dray_hw *hw, u32 qpn)
{
	lockdep_assert_held(&hw->engine.lock);
	return xa_load(&hw->engine.qps, qpn);
}

/* Bytes of a work queue buffer: doorbell record and ring. */
static u32 wq_pages(u8 log_depth, u8 log_stride)
{
	return DIV_ROUND_UP(DRAY_QUEUE_HDR_SIZE +
			    ((u32)1 << (log_depth + log_stride)),
			    DRAY_PAGE_SIZE);
}

/* Check the parts of a CREATE_QP mailbox that need no lookup. */
static int qp_create_params(const struct dray_qp_create *c, u32 *syndrome)
{
	u8 max_log_depth = ilog2(DRAY_HW_MAX_QP_WR);

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (c->reserved || memchr_inv(c->reserved2, 0, sizeof(c->reserved2)))
		return DRAY_AQ_STS_BAD_PARAM;
	/* RC, UD and GSI (QP1). */
	*syndrome = DRAY_AQ_SYN_QP_TYPE;
	if (c->type != DRAY_QPT_RC && !dray_hw_qpt_dg(c->type))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_FLAGS;
	if (c->flags & ~DRAY_QP_F_SQ_SIG_ALL)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_DEPTH;
	if (c->sq_log_depth > max_log_depth || c->rq_log_depth > max_log_depth)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_LOG_STRIDE;
	if (c->sq_log_stride < DRAY_SQ_LOG_STRIDE_MIN ||
	    c->sq_log_stride > DRAY_SQ_LOG_STRIDE_MAX ||
	    c->rq_log_stride < DRAY_RQ_LOG_STRIDE_MIN ||
	    c->rq_log_stride > DRAY_RQ_LOG_STRIDE_MAX)
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
	if (le32_to_cpu(c->sq_n_pages) <
		wq_pages(c->sq_log_depth, c->sq_log_stride) ||
	    le32_to_cpu(c->rq_n_pages) <
		wq_pages(c->rq_log_depth, c->rq_log_stride))
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

/* Map a work queue's buffer (only the pages its ring needs). */
static int wq_map(struct dray_hw *hw, struct dray_hw_wq *wq, u64 mtt,
		  u8 log_depth, u8 log_stride, u32 *syndrome)
{
	int status;

	status = dray_hw_buf_map(hw, mtt, wq_pages(log_depth, log_stride),
				 &wq->buf, syndrome);
	if (status)
		return status;
	wq->db = wq->buf.vaddr;
	wq->ring = wq->buf.vaddr + DRAY_QUEUE_HDR_SIZE;
	wq->depth = 1U << log_depth;
	wq->log_stride = log_stride;
	return DRAY_AQ_STS_OK;
}

static bool uar_valid(struct dray_hw *hw, u32 uar_index)
{
	bool valid;

	if (uar_index >= DRAY_HW_MAX_UAR)
		return false;
	spin_lock_bh(&hw->obj_lock);
	valid = hw->uars[uar_index].page;
	spin_unlock_bh(&hw->obj_lock);
	return valid;
}

static void qp_free(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_hw_buf_unmap(&qp->sq.buf);
	dray_hw_buf_unmap(&qp->rq.buf);
	kfree(qp);
}

/* Look up and take the PD, CQs and UAR a new QP uses. admin_lock held. */
static int qp_attach(struct dray_hw *hw, struct dray_hw_qp *qp,
		     const struct dray_qp_create *c, u32 *syndrome)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_pd *pd;

	lockdep_assert_held(&eng->admin_lock);

	*syndrome = DRAY_AQ_SYN_PDN;
	pd = xa_load(&eng->pds, qp->pdn);
	if (!pd)
		return DRAY_AQ_STS_NOT_FOUND;
	*syndrome = DRAY_AQ_SYN_CQN;
	qp->send_cq = xa_load(&eng->cqs, le32_to_cpu(c->send_cqn));
	qp->recv_cq = xa_load(&eng->cqs, le32_to_cpu(c->recv_cqn));
	if (!qp->send_cq || !qp->recv_cq)
		return DRAY_AQ_STS_NOT_FOUND;
	*syndrome = DRAY_AQ_SYN_UAR_INDEX;
	if (!uar_valid(hw, qp->uar_index))
		return DRAY_AQ_STS_NOT_FOUND;

	pd->users++;
	qp->send_cq->users++;
	qp->recv_cq->users++;
	return DRAY_AQ_STS_OK;
}

static void qp_detach(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	pd_put(hw, qp->pdn);
	qp->send_cq->users--;
	qp->recv_cq->users--;
}

void dray_hw_cmd_create_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_qp_create c;
	struct dray_hw_qp *qp;
	u32 syndrome, qpn;
	int status, ret;

	if (cmd->qpn) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_QPN);
		return;
	}
	if (!mailbox_in(hw, cmd, &c, sizeof(c), res))
		return;
	status = qp_create_params(&c, &syndrome);
	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}

	qp = kzalloc(sizeof(*qp), GFP_KERNEL);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_RESOURCES, DRAY_AQ_SYN_NONE);
		return;
	}
	qp->type = c.type;
	qp->state = DRAY_QPS_RESET;
	qp->flags = c.flags;
	qp->pdn = le32_to_cpu(c.pdn);
	qp->uar_index = le32_to_cpu(c.uar_index);
	qp->path_mtu = DRAY_MTU_1024;
	INIT_LIST_HEAD(&qp->active);

	status = wq_map(hw, &qp->sq, le64_to_cpu(c.sq_mtt), c.sq_log_depth,
			c.sq_log_stride, &syndrome);
	if (status)
		goto free_qp;
	status = wq_map(hw, &qp->rq, le64_to_cpu(c.rq_mtt), c.rq_log_depth,
			c.rq_log_stride, &syndrome);
	if (status)
		goto free_qp;

	mutex_lock(&eng->admin_lock);
	status = qp_attach(hw, qp, &c, &syndrome);
	if (status)
		goto unlock;
	/* Reserve the QPN; the QP is published below, under engine.lock. */
	if (c.type == DRAY_QPT_GSI) {
		/* QP1 exists once per port. */
		qpn = DRAY_HW_QPN_GSI;
		ret = xa_insert(&eng->qps, qpn, NULL, GFP_KERNEL);
	} else {
		ret = xa_alloc_cyclic(&eng->qps, &qpn, NULL,
				      XA_LIMIT(DRAY_HW_QPN_FIRST,
					       DRAY_HW_QPN_FIRST +
					       DRAY_HW_MAX_QP - 1),
				      &eng->qpn_next, GFP_KERNEL);
	}
	if (ret < 0) {
		qp_detach(hw, qp);
		status = DRAY_AQ_STS_NO_RESOURCES;
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	qp->qpn = qpn;
	WRITE_ONCE(qp->sq.db->consumer, 0);
	WRITE_ONCE(qp->rq.db->consumer, 0);
	spin_lock_bh(&eng->lock);
	dray_xport_init(hw, qp);
	xa_store(&eng->qps, qpn, qp, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);
	res->result = qpn;
	return;

unlock:
	mutex_unlock(&eng->admin_lock);
free_qp:
	qp_free(hw, qp);
	dray_aq_fail(res, status, syndrome);
}

/* Back to RESET: forget all work, no completions. engine.lock held. */
static void qp_reset(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	dray_xport_reset(hw, qp);
	list_del_init(&qp->active);
	qp->sq.fetched = 0;
	qp->sq.completed = 0;
	qp->sq.posted = 0;
	qp->sq.db_consumer = 0;
	qp->rq.fetched = 0;
	qp->rq.completed = 0;
	qp->rq.posted = 0;
	WRITE_ONCE(qp->sq.db->consumer, 0);
	WRITE_ONCE(qp->rq.db->consumer, 0);
	qp->deadline = 0;
	qp->sq_draining = false;
	qp->err_pending = false;
	qp->db_broken = false;
}

void dray_hw_cmd_destroy_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	u32 qpn = le32_to_cpu(cmd->qpn);
	struct dray_hw_qp *qp;

	/* No mailbox: len and addr are ignored. */
	mutex_lock(&eng->admin_lock);
	spin_lock_bh(&eng->lock);
	qp = xa_erase(&eng->qps, qpn);
	if (qp)
		qp_reset(hw, qp);
	dray_hw_engine_unlock(hw);
	if (qp)
		qp_detach(hw, qp);
	mutex_unlock(&eng->admin_lock);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_QPN);
		return;
	}
	qp_free(hw, qp);
}

bool dray_hw_uar_in_use(struct dray_hw *hw, u32 uar_index)
{
	struct dray_hw_qp *qp;
	unsigned long qpn;
	bool used = false;

	mutex_lock(&hw->engine.admin_lock);
	xa_for_each(&hw->engine.qps, qpn, qp) {
		if (qp->uar_index == uar_index) {
			used = true;
			break;
		}
	}
	mutex_unlock(&hw->engine.admin_lock);
	return used;
}

void dray_hw_objects_destroy(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	unsigned long index;
	struct dray_hw_qp *qp;
	struct dray_hw_ah *ah;
	struct dray_hw_cq *cq;
	struct dray_hw_mr *mr;
	struct dray_hw_pd *pd;

	mutex_lock(&eng->admin_lock);
	xa_for_each(&eng->qps, index, qp) {
		spin_lock_bh(&eng->lock);
		xa_erase(&eng->qps, index);
		qp_reset(hw, qp);
		dray_hw_engine_unlock(hw);
		qp_free(hw, qp);
	}
	xa_for_each(&eng->ahs, index, ah) {
		spin_lock_bh(&eng->lock);
		xa_erase(&eng->ahs, index);
		dray_hw_engine_unlock(hw);
		kfree(ah);
	}
	xa_for_each(&eng->cqs, index, cq) {
		xa_erase(&eng->cqs, index);
		dray_hw_cq_free(hw, cq);
	}
	xa_for_each(&eng->mrs, index, mr) {
		spin_lock_bh(&eng->lock);
		xa_erase(&eng->mrs, index);
		dray_hw_engine_unlock(hw);
		dray_hw_mr_free(hw, mr);
	}
	xa_for_each(&eng->pds, index, pd) {
		xa_erase(&eng->pds, index);
		kfree(pd);
	}
	mutex_unlock(&eng->admin_lock);
}

/* ---- the QP state machine ----------------------------------------------- */

/* QP type classes of the attribute rules. */
enum { QPC_RC, QPC_UD, QPC_GSI, QPC_NUM };

#define QPA(x)	DRAY_QP_ATTR_##x

/*
 * One allowed state transition (IBTA 11.2.5 / 10.3.1, as the RDMA core
 * checks it in ib_modify_qp_is_ok()): for each type class the attributes
 * a MODIFY_QP must carry and those it may carry. A class with no entry
 * (both masks 0 and not in @classes) cannot take the transition.
 */
struct qp_transition {
	u8	from;
	u8	to;
	u8	classes;		/* BIT(QPC_*) */
	u32	req[QPC_NUM];
	u32	opt[QPC_NUM];
};

#define ALL_CLASSES	(BIT(QPC_RC) | BIT(QPC_UD) | BIT(QPC_GSI))
#define DG_CLASSES	(BIT(QPC_UD) | BIT(QPC_GSI))

/* RC attributes that a send queue in SQD may change. */
#define RC_SQD_OPT	(QPA(PORT) | QPA(AV) | QPA(TIMEOUT) | \
			 QPA(RETRY_CNT) | QPA(RNR_RETRY) | \
			 QPA(MAX_QP_RD_ATOMIC) | QPA(MAX_DEST_RD_ATOMIC) | \
			 QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX) | \
			 QPA(MIN_RNR_TIMER))
#define RC_RTS_OPT	(QPA(CUR_STATE) | QPA(ACCESS_FLAGS) | \
			 QPA(MIN_RNR_TIMER))
#define DG_RTS_OPT	(QPA(CUR_STATE) | QPA(QKEY))

static const struct qp_transition qp_transitions[] = {
	{ DRAY_QPS_RESET, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RESET, DRAY_QPS_INIT, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS),
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
	  } },
	{ DRAY_QPS_INIT, DRAY_QPS_INIT, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS),
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
	  } },
	{ DRAY_QPS_INIT, DRAY_QPS_RTR, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) |
			    QPA(RQ_PSN) | QPA(MAX_DEST_RD_ATOMIC) |
			    QPA(MIN_RNR_TIMER),
	  },
	  .opt = {
		[QPC_RC]  = QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX),
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
	  } },
	{ DRAY_QPS_RTR, DRAY_QPS_RTS, ALL_CLASSES,
	  .req = {
		[QPC_RC]  = QPA(TIMEOUT) | QPA(RETRY_CNT) | QPA(RNR_RETRY) |
			    QPA(SQ_PSN) | QPA(MAX_QP_RD_ATOMIC),
		[QPC_UD]  = QPA(SQ_PSN),
		[QPC_GSI] = QPA(SQ_PSN),
	  },
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
	  } },
	{ DRAY_QPS_RTS, DRAY_QPS_RTS, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
	  } },
	{ DRAY_QPS_RTS, DRAY_QPS_SQD, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_UD]  = QPA(EN_SQD_ASYNC_NOTIFY),
		[QPC_GSI] = QPA(EN_SQD_ASYNC_NOTIFY),
	  } },
	{ DRAY_QPS_SQD, DRAY_QPS_RTS, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_RTS_OPT,
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
	  } },
	{ DRAY_QPS_SQD, DRAY_QPS_SQD, ALL_CLASSES,
	  .opt = {
		[QPC_RC]  = RC_SQD_OPT,
		[QPC_UD]  = QPA(PKEY_INDEX) | QPA(QKEY),
		[QPC_GSI] = QPA(PKEY_INDEX) | QPA(QKEY),
	  } },
	/* Only datagram QPs have a send queue error state. */
	{ DRAY_QPS_SQE, DRAY_QPS_RTS, DG_CLASSES,
	  .opt = {
		[QPC_UD]  = DG_RTS_OPT,
		[QPC_GSI] = DG_RTS_OPT,
	  } },
	/* Every state but RESET may go to ERR; every state to RESET. */
	{ DRAY_QPS_INIT, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_INIT, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_RTR, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RTR, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_RTS, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_RTS, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_SQD, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_SQD, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_SQE, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_SQE, DRAY_QPS_ERR, ALL_CLASSES },
	{ DRAY_QPS_ERR, DRAY_QPS_RESET, ALL_CLASSES },
	{ DRAY_QPS_ERR, DRAY_QPS_ERR, ALL_CLASSES },
};

#define QP_ATTR_KNOWN	(QPA(STATE) | QPA(CUR_STATE) | \
			 QPA(EN_SQD_ASYNC_NOTIFY) | QPA(ACCESS_FLAGS) | \
			 QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY) | QPA(AV) | \
			 QPA(PATH_MTU) | QPA(TIMEOUT) | QPA(RETRY_CNT) | \
			 QPA(RNR_RETRY) | QPA(RQ_PSN) | \
			 QPA(MAX_QP_RD_ATOMIC) | QPA(MIN_RNR_TIMER) | \
			 QPA(SQ_PSN) | QPA(MAX_DEST_RD_ATOMIC) | \
			 QPA(DEST_QPN))

static int qp_class(u8 type)
{
	switch (type) {
	case DRAY_QPT_UD:
		return QPC_UD;
	case DRAY_QPT_GSI:
		return QPC_GSI;
	default:
		return QPC_RC;
	}
}

/*
 * May a QP of @type go from @from to @to with the attributes in @mask?
 * Returns a DRAY_AQ_STS_* status; QP_STATE for a transition IBTA does not
 * allow, QP_ATTR for a missing required or a not allowed attribute.
 */
static int qp_transition_check(u8 type, u8 from, u8 to, u32 mask,
			       u32 *syndrome)
{
	int class = qp_class(type);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(qp_transitions); i++) {
		const struct qp_transition *t = &qp_transitions[i];
		u32 allowed;

		if (t->from != from || t->to != to ||
		    !(t->classes & BIT(class)))
			continue;
		allowed = t->req[class] | t->opt[class] | QPA(STATE);
		*syndrome = DRAY_AQ_SYN_QP_ATTR;
		if ((mask & t->req[class]) != t->req[class] ||
		    (mask & ~allowed))
			return DRAY_AQ_STS_BAD_PARAM;
		return DRAY_AQ_STS_OK;
	}
	*syndrome = DRAY_AQ_SYN_QP_STATE;
	return DRAY_AQ_STS_BAD_PARAM;
}

/* The port's current largest usable MTU. */
static u8 port_active_mtu(struct dray_hw *hw)
{
	u32 eth_mtu;

	spin_lock_bh(&hw->port_lock);
	eth_mtu = hw->eth_mtu;
	spin_unlock_bh(&hw->port_lock);
	return dray_mtu_from_eth(eth_mtu);
}

/* Check the values of the attributes in @mask (not their presence). */
static int qp_attr_values(struct dray_hw *hw, const struct dray_qp_attr *a,
			  u32 mask, u32 *syndrome)
{
	*syndrome = DRAY_AQ_SYN_QP_ATTR;
	if ((mask & QPA(ACCESS_FLAGS)) && (a->access & ~DRAY_ACCESS_ALL))
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(PATH_MTU)) &&
	    (a->path_mtu < DRAY_MTU_256 || a->path_mtu > port_active_mtu(hw)))
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(TIMEOUT)) && a->timeout > 31)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(RETRY_CNT)) && a->retry_cnt > 7)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(RNR_RETRY)) && a->rnr_retry > 7)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MIN_RNR_TIMER)) && a->min_rnr_timer > 31)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MAX_QP_RD_ATOMIC)) &&
	    a->max_rd_atomic > DRAY_HW_MAX_RD_ATOM)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(MAX_DEST_RD_ATOMIC)) &&
	    a->max_dest_rd_atomic > DRAY_HW_MAX_RD_ATOM)
		return DRAY_AQ_STS_BAD_PARAM;
	if ((mask & QPA(DEST_QPN)) &&
	    le32_to_cpu(a->dest_qpn) & ~DRAY_QPN_MASK)
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

/* Store the attributes of @mask (already checked). */
static void qp_attr_apply(struct dray_hw_qp *qp, const struct dray_qp_attr *a,
			  u32 mask, const struct dray_hw_path *path)
{
	if (mask & QPA(ACCESS_FLAGS))
		qp->access = a->access & (DRAY_ACCESS_REMOTE_WRITE |
					  DRAY_ACCESS_REMOTE_READ |
					  DRAY_ACCESS_REMOTE_ATOMIC);
	if (mask & QPA(QKEY))
		qp->qkey = le32_to_cpu(a->qkey);
	if (mask & QPA(PATH_MTU))
		qp->path_mtu = a->path_mtu;
	if (mask & QPA(TIMEOUT))
		qp->timeout = a->timeout;
	if (mask & QPA(RETRY_CNT))
		qp->retry_cnt = a->retry_cnt;
	if (mask & QPA(RNR_RETRY))
		qp->rnr_retry = a->rnr_retry;
	if (mask & QPA(MIN_RNR_TIMER))
		qp->min_rnr_timer = a->min_rnr_timer;
	if (mask & QPA(MAX_QP_RD_ATOMIC))
		qp->max_rd_atomic = a->max_rd_atomic;
	if (mask & QPA(MAX_DEST_RD_ATOMIC))
		qp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	/* PSNs are 24 bits; the upper bits are ignored, as IBTA HCAs do. */
	if (mask & QPA(RQ_PSN))
		qp->rq_psn = le32_to_cpu(a->rq_psn) & DRAY_PSN_MASK;
	if (mask & QPA(SQ_PSN))
		qp->sq_psn = le32_to_cpu(a->sq_psn) & DRAY_PSN_MASK;
	if (mask & QPA(DEST_QPN))
		qp->dest_qpn = le32_to_cpu(a->dest_qpn);
	if (mask & QPA(AV)) {
		qp->path = *path;
		if (!qp->path.udp_sport)
			qp->path.udp_sport =
				path_udp_sport(path->flow_label, qp->qpn,
					       qp->dest_qpn);
	}
}

/* Enter @next from qp->state (a checked transition). */
static void qp_set_state(struct dray_hw *hw, struct dray_hw_qp *qp, u8 next)
{
	u8 cur = qp->state;

	if (next == DRAY_QPS_ERR) {
		/* Asked for by software: no event. */
		dray_hw_qp_error(hw, qp, 0, DRAY_VERR_NONE);
		return;
	}
	if (next == DRAY_QPS_RESET)
		qp_reset(hw, qp);
	else if (cur == DRAY_QPS_RESET)
		list_add_tail(&qp->active, &hw->engine.active);
	if (next == DRAY_QPS_SQD && cur != DRAY_QPS_SQD)
		qp->sq_draining = true;
	else if (next != DRAY_QPS_SQD)
		qp->sq_draining = false;
	qp->state = next;
}

static int qp_modify(struct dray_hw *hw, struct dray_hw_qp *qp,
		     const struct dray_qp_attr *a, u32 *syndrome)
{
	u32 mask = le32_to_cpu(a->attr_mask);
	u8 cur = qp->state, next = cur;
	struct dray_hw_path path;
	int status;

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (a->reserved0 || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_QP_ATTR;
	if (mask & ~QP_ATTR_KNOWN)
		return DRAY_AQ_STS_BAD_PARAM;
	if (mask & QPA(STATE))
		next = a->state;
	*syndrome = DRAY_AQ_SYN_QP_STATE;
	if (next > DRAY_QPS_ERR ||
	    ((mask & QPA(CUR_STATE)) && a->cur_state != cur))
		return DRAY_AQ_STS_BAD_PARAM;

	status = qp_transition_check(qp->type, cur, next, mask, syndrome);
	if (status)
		return status;
	status = qp_attr_values(hw, a, mask, syndrome);
	if (status)
		return status;
	if (mask & QPA(AV)) {
		status = path_resolve(hw, &a->path, qp->type == DRAY_QPT_RC,
				      &path, syndrome);
		if (status)
			return status;
	}

	/* Nothing can fail from here on. */
	qp_attr_apply(qp, a, mask, &path);
	if (next != cur || next == DRAY_QPS_RESET)
		qp_set_state(hw, qp, next);
	dray_xport_modify(hw, qp, mask, cur);
	return DRAY_AQ_STS_OK;
}

void dray_hw_cmd_modify_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_qp_attr a;
	struct dray_hw_qp *qp;
	u32 syndrome;
	int status;

	if (!mailbox_in(hw, cmd, &a, sizeof(a), res))
		return;
	mutex_lock(&eng->admin_lock);
	spin_lock_bh(&eng->lock);
	qp = xa_load(&eng->qps, le32_to_cpu(cmd->qpn));
	if (!qp) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_QPN;
	} else {
		status = qp_modify(hw, qp, &a, &syndrome);
	}
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);

	if (status) {
		dray_aq_fail(res, status, syndrome);
		return;
	}
	/* A new state may have work for the engine (RTS, SQD, ERR). */
	dray_hw_engine_kick(hw);
}

static void qp_query(struct dray_hw_qp *qp, struct dray_qp_attr *a)
{
	const struct dray_hw_path *p = &qp->path;

	memset(a, 0, sizeof(*a));
	a->attr_mask = cpu_to_le32(QPA(STATE) | QPA(ACCESS_FLAGS) |
				   QPA(PKEY_INDEX) | QPA(PORT) | QPA(AV) |
				   QPA(PATH_MTU) | QPA(TIMEOUT) |
				   QPA(RETRY_CNT) | QPA(RNR_RETRY) |
				   QPA(RQ_PSN) | QPA(MAX_QP_RD_ATOMIC) |
				   QPA(MIN_RNR_TIMER) | QPA(SQ_PSN) |
				   QPA(MAX_DEST_RD_ATOMIC) | QPA(DEST_QPN) |
				   (qp->type != DRAY_QPT_RC ? QPA(QKEY) : 0));
	a->state = qp->state;
	a->cur_state = qp->state;
	a->path_mtu = qp->path_mtu;
	a->timeout = qp->timeout;
	a->retry_cnt = qp->retry_cnt;
	a->rnr_retry = qp->rnr_retry;
	a->min_rnr_timer = qp->min_rnr_timer;
	a->max_rd_atomic = qp->max_rd_atomic;
	a->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	a->access = qp->access;
	a->sq_draining = qp->sq_draining;
	a->dest_qpn = cpu_to_le32(qp->dest_qpn);
	a->rq_psn = cpu_to_le32(qp->rq_psn);
	a->sq_psn = cpu_to_le32(qp->sq_psn);
	a->qkey = cpu_to_le32(qp->qkey);
	ether_addr_copy(a->path.dmac, p->dmac);
	a->path.sgid_index = p->sgid_index;
	a->path.hop_limit = p->hop_limit;
	memcpy(a->path.dgid, p->dgid, sizeof(a->path.dgid));
	a->path.traffic_class = p->traffic_class;
	a->path.flow_label = cpu_to_le32(p->flow_label);
	a->path.udp_sport = cpu_to_le16(p->udp_sport);
}

void dray_hw_cmd_query_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res)
{
	const struct dray_cmd_qp *cmd = &e->u.qp;
	struct dray_hw_engine *eng = &hw->engine;
	u32 len = le32_to_cpu(cmd->len);
	struct dray_qp_attr a;
	struct dray_hw_qp *qp;
	void *dst;

	if (!len) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_OUT_LEN);
		return;
	}
	len = min_t(u32, len, sizeof(a));
	dst = dray_hw_dma_va(hw, le64_to_cpu(cmd->addr), len);
	if (!dst) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_OUT_ADDR);
		return;
	}
	spin_lock_bh(&eng->lock);
	qp = xa_load(&eng->qps, le32_to_cpu(cmd->qpn));
	if (qp)
		qp_query(qp, &a);
	dray_hw_engine_unlock(hw);
	if (!qp) {
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_QPN);
		return;
	}
	memcpy(dst, &a, len);
	res->result = len;
}

/* ---- events and errors ---------------------------------------------------- */

void dray_hw_qp_event(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event)
{
	dray_hw_eq_post(hw, 0, event, qp->qpn, 0);
}

void dray_hw_qp_error(struct dray_hw *hw, struct dray_hw_qp *qp, u8 event,
		      u8 vendor_err)
{
	lockdep_assert_held(&hw->engine.lock);

	if (qp->state == DRAY_QPS_RESET || qp->state == DRAY_QPS_ERR)
		return;
	qp_dbg(hw, qp, "to ERR from state %u, event %u, vendor error %#x\n",
	       qp->state, event, vendor_err);
	qp->state = DRAY_QPS_ERR;
	qp->sq_draining = false;
	qp->deadline = 0;
	qp->err_pending = true;
	if (event)
		dray_hw_eq_post(hw, 0, event, qp->qpn, vendor_err);
	dray_hw_engine_kick(hw);
}

/*
 * A datagram QP's send queue stopped on an error completion: SQE. The
 * receive queue works on; the transport flushes the send queue until
 * software moves the QP back to RTS. No event: the CQE tells.
 */
static void qp_sq_error(struct dray_hw *hw, struct dray_hw_qp *qp,
			u8 vendor_err)
{
	qp_dbg(hw, qp, "to SQE from state %u, vendor error %#x\n", qp->state,
	       vendor_err);
	qp->state = DRAY_QPS_SQE;
	qp->sq_draining = false;
	dray_hw_engine_kick(hw);
}

/* ---- work queues ---------------------------------------------------------- */

bool dray_hw_wq_poll(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_wq *wq)
{
	u32 pi, ahead, inflight;

	lockdep_assert_held(&hw->engine.lock);

	if (qp->db_broken)
		return false;
	pi = le32_to_cpu(READ_ONCE(wq->db->producer));
	if (pi == wq->posted)
		return false;

	ahead = pi - wq->completed;
	inflight = wq->fetched - wq->completed;
	if (ahead > wq->depth || ahead < inflight) {
		bool sq = wq == &qp->sq;

		qp_dbg(hw, qp, "%s producer index %u invalid (completed %u, fetched %u, depth %u)\n",
		       sq ? "SQ" : "RQ", pi, wq->completed, wq->fetched,
		       wq->depth);
		/* Stop reading the doorbells; flush what was validly posted. */
		qp->db_broken = true;
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 sq ? DRAY_VERR_SQ_DOORBELL :
				      DRAY_VERR_RQ_DOORBELL);
		return true;
	}
	/* The WQEs are read after the index; pairs with software's wmb. */
	smp_rmb();
	wq->posted = pi;
	return true;
}

u32 dray_hw_sq_pending(struct dray_hw_qp *qp)
{
	if (qp->state != DRAY_QPS_RTS)
		return 0;
	return qp->sq.posted - qp->sq.fetched;
}

static void *wq_slot(const struct dray_hw_wq *wq, u32 index)
{
	return wq->ring + (dray_ring_slot(index, wq->depth) << wq->log_stride);
}

static bool sq_opcode_valid(u8 type, u8 opcode)
{
	if (type == DRAY_QPT_RC)
		return opcode < DRAY_WQE_OPCODE_MAX;
	return opcode == DRAY_WQE_SEND || opcode == DRAY_WQE_SEND_IMM;
}

static bool sq_opcode_atomic(u8 opcode)
{
	return opcode == DRAY_WQE_ATOMIC_CMP_SWP ||
	       opcode == DRAY_WQE_ATOMIC_FETCH_ADD;
}

static int swqe_fail(struct dray_hw_swqe *wqe, u8 status, u8 vendor_err)
{
	wqe->vendor_err = vendor_err;
	return status;
}

static u8 mr_err_to_verr(enum dray_mr_err err)
{
	switch (err) {
	case DRAY_MR_ERR_PD:
		return DRAY_VERR_LKEY_PD;
	case DRAY_MR_ERR_ACCESS:
		return DRAY_VERR_LKEY_ACCESS;
	case DRAY_MR_ERR_RANGE:
		return DRAY_VERR_LKEY_RANGE;
	default:
		return DRAY_VERR_LKEY;
	}
}

/* Inline payload: copy it out of the slot (at most the stride). */
static int swqe_inline(struct dray_hw_qp *qp, struct dray_hw_swqe *wqe,
		       const u8 *slot)
{
	u32 room = (1U << qp->sq.log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	u32 len = le32_to_cpu(wqe->hdr.length);
	u8 op = wqe->hdr.opcode;

	if (op == DRAY_WQE_RDMA_READ || sq_opcode_atomic(op))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_INLINE);
	if (len > DRAY_HW_MAX_INLINE || len > room)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_WQE_INLINE);
	memcpy(wqe->inline_buf, slot + DRAY_SQ_WQE_HDR_SIZE, len);
	wqe->inline_data = wqe->inline_buf;
	wqe->length = len;
	return 0;
}

/* Gather list: copy, then check every SGE against its MR. */
static int swqe_sgl(struct dray_hw *hw, struct dray_hw_qp *qp,
		    struct dray_hw_swqe *wqe, const u8 *slot)
{
	u32 room = (1U << qp->sq.log_stride) - DRAY_SQ_WQE_HDR_SIZE;
	u8 op = wqe->hdr.opcode, access = 0;
	u32 n = wqe->hdr.num_sge, i;
	struct dray_hw_mr *mr;
	u64 total = 0;

	if (n > DRAY_HW_MAX_SGE || n * DRAY_SGE_SIZE > room)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_SGE_COUNT);
	memcpy(wqe->sge, slot + DRAY_SQ_WQE_HDR_SIZE, n * DRAY_SGE_SIZE);
	wqe->num_sge = n;
	for (i = 0; i < n; i++)
		total += le32_to_cpu(wqe->sge[i].length);
	if (total > DRAY_HW_MAX_MSG)
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_WQE_LENGTH);
	if (sq_opcode_atomic(op) && (n != 1 || total != sizeof(u64)))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_LEN_ERR,
				 DRAY_VERR_ATOMIC_SGE);
	wqe->length = total;

	/* READ and atomic results are written into the local buffers. */
	if (op == DRAY_WQE_RDMA_READ || sq_opcode_atomic(op))
		access = DRAY_ACCESS_LOCAL_WRITE;
	for (i = 0; i < n; i++) {
		const struct dray_sge *sge = &wqe->sge[i];
		u32 len = le32_to_cpu(sge->length);
		enum dray_mr_err err;

		if (!len)
			continue;
		err = dray_hw_mr_check(hw, le32_to_cpu(sge->lkey), qp->pdn,
				       access, le64_to_cpu(sge->addr), len,
				       &mr);
		if (err)
			return swqe_fail(wqe, DRAY_CQE_ST_LOC_PROT_ERR,
					 mr_err_to_verr(err));
	}
	return 0;
}

int dray_hw_sq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp, u32 index,
		     struct dray_hw_swqe *wqe)
{
	struct dray_hw_wq *sq = &qp->sq;
	const u8 *slot;

	lockdep_assert_held(&hw->engine.lock);

	wqe->index = index;
	wqe->vendor_err = DRAY_VERR_NONE;
	wqe->num_sge = 0;
	wqe->length = 0;
	wqe->inline_data = NULL;

	/* Only a posted, not completed WQE: [completed, posted). */
	if (index - sq->completed >= sq->posted - sq->completed ||
	    qp->state == DRAY_QPS_ERR || qp->state == DRAY_QPS_RESET) {
		memset(&wqe->hdr, 0, sizeof(wqe->hdr));
		qp_warn_rl(hw, qp, "transport fetched SQ WQE %u (completed %u, posted %u)\n",
			   index, sq->completed, sq->posted);
		return swqe_fail(wqe, DRAY_CQE_ST_GENERAL_ERR,
				 DRAY_VERR_WQE_INDEX);
	}

	/* One copy of the header; only the copy is looked at. */
	slot = wq_slot(sq, index);
	memcpy(&wqe->hdr, slot, sizeof(wqe->hdr));

	if (!sq_opcode_valid(qp->type, wqe->hdr.opcode))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_OPCODE);
	if (wqe->hdr.flags & ~(DRAY_WQE_F_SIGNALED | DRAY_WQE_F_SOLICITED |
			       DRAY_WQE_F_FENCE | DRAY_WQE_F_INLINE |
			       (dray_hw_qpt_dg(qp->type) ?
				DRAY_WQE_F_UD_AV : 0)))
		return swqe_fail(wqe, DRAY_CQE_ST_LOC_QP_OP_ERR,
				 DRAY_VERR_WQE_FLAGS);
	if (wqe->hdr.flags & DRAY_WQE_F_INLINE)
		return swqe_inline(qp, wqe, slot);
	return swqe_sgl(hw, qp, wqe, slot);
}

bool dray_hw_sq_publish(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	struct dray_hw_wq *sq = &qp->sq;

	lockdep_assert_held(&hw->engine.lock);

	if (sq->fetched == sq->db_consumer)
		return false;
	if (sq->fetched - sq->completed > sq->posted - sq->completed) {
		qp_warn_rl(hw, qp, "SQ fetch index %u outside %u..%u\n",
			   sq->fetched, sq->completed, sq->posted);
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 DRAY_VERR_WQE_INDEX);
		return true;
	}
	sq->db_consumer = sq->fetched;
	WRITE_ONCE(sq->db->consumer, cpu_to_le32(sq->fetched));
	return true;
}

int dray_hw_rq_fetch(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_rwqe *wqe)
{
	struct dray_hw_wq *rq = &qp->rq;
	u32 room = (1U << rq->log_stride) - DRAY_RQ_WQE_HDR_SIZE;
	struct dray_rq_wqe hdr;
	const u8 *slot;
	u32 i;

	lockdep_assert_held(&hw->engine.lock);

	if (qp->state != DRAY_QPS_RTR && qp->state != DRAY_QPS_RTS &&
	    qp->state != DRAY_QPS_SQD && qp->state != DRAY_QPS_SQE)
		return -ENOENT;
	if (rq->fetched == rq->posted) {
		/* Look again: software may have posted since the last pass. */
		dray_hw_wq_poll(hw, qp, rq);
		if (qp->state == DRAY_QPS_ERR || rq->fetched == rq->posted)
			return -ENOENT;
	}

	wqe->index = rq->fetched;
	wqe->num_sge = 0;
	wqe->length = 0;
	slot = wq_slot(rq, wqe->index);
	memcpy(&hdr, slot, sizeof(hdr));
	rq->fetched++;
	if (hdr.num_sge > DRAY_HW_MAX_SGE ||
	    hdr.num_sge * DRAY_SGE_SIZE > room) {
		WRITE_ONCE(rq->db->consumer, cpu_to_le32(rq->fetched));
		return -EINVAL;
	}
	memcpy(wqe->sge, slot + DRAY_RQ_WQE_HDR_SIZE,
	       hdr.num_sge * DRAY_SGE_SIZE);
	WRITE_ONCE(rq->db->consumer, cpu_to_le32(rq->fetched));
	wqe->num_sge = hdr.num_sge;
	for (i = 0; i < wqe->num_sge; i++)
		wqe->length += le32_to_cpu(wqe->sge[i].length);
	return 0;
}

/* Write a CQE of @qp; a CQ that cannot take it kills the QP. */
static void qp_cqe_post(struct dray_hw *hw, struct dray_hw_qp *qp,
			struct dray_hw_cq *cq, const struct dray_cqe *cqe)
{
	if (!dray_hw_cq_post(hw, cq, cqe))
		dray_hw_qp_error(hw, qp, DRAY_EQE_QP_FATAL,
				 DRAY_VERR_CQ_ERROR);
}

static u8 sq_cqe_opcode(u8 wqe_opcode)
{
	switch (wqe_opcode) {
	case DRAY_WQE_RDMA_WRITE:
	case DRAY_WQE_RDMA_WRITE_IMM:
		return DRAY_CQE_RDMA_WRITE;
	case DRAY_WQE_RDMA_READ:
		return DRAY_CQE_RDMA_READ;
	case DRAY_WQE_ATOMIC_CMP_SWP:
		return DRAY_CQE_COMP_SWAP;
	case DRAY_WQE_ATOMIC_FETCH_ADD:
		return DRAY_CQE_FETCH_ADD;
	default:
		return DRAY_CQE_SEND;
	}
}

void dray_hw_sq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_swqe *wqe, u8 status,
			 u8 vendor_err)
{
	struct dray_hw_wq *sq = &qp->sq;
	struct dray_cqe cqe = {};

	lockdep_assert_held(&hw->engine.lock);

	if (wqe->index != sq->completed || sq->completed == sq->fetched) {
		qp_warn_rl(hw, qp, "SQ WQE %u completed out of order (%u..%u)\n",
			   wqe->index, sq->completed, sq->fetched);
		return;
	}
	sq->completed++;

	if (status == DRAY_CQE_ST_SUCCESS &&
	    !(wqe->hdr.flags & DRAY_WQE_F_SIGNALED) &&
	    !(qp->flags & DRAY_QP_F_SQ_SIG_ALL))
		return;

	cqe.qpn = cpu_to_le32(qp->qpn);
	cqe.wqe_index = cpu_to_le32(wqe->index);
	cqe.opcode = sq_cqe_opcode(wqe->hdr.opcode);
	cqe.byte_len = cpu_to_le32(wqe->length);
	cqe.status = status;
	cqe.vendor_err = vendor_err;
	cqe.flags = DRAY_CQE_F_SEND_QUEUE;
	qp_cqe_post(hw, qp, qp->send_cq, &cqe);

	if (status == DRAY_CQE_ST_SUCCESS || status == DRAY_CQE_ST_WR_FLUSH_ERR)
		return;
	if (!dray_hw_qpt_dg(qp->type))
		dray_hw_qp_error(hw, qp, 0, vendor_err);
	else if (qp->state == DRAY_QPS_RTS || qp->state == DRAY_QPS_SQD)
		qp_sq_error(hw, qp, vendor_err);
}

void dray_hw_rq_complete(struct dray_hw *hw, struct dray_hw_qp *qp,
			 const struct dray_hw_rwqe *wqe, struct dray_cqe *cqe)
{
	struct dray_hw_wq *rq = &qp->rq;

	lockdep_assert_held(&hw->engine.lock);

	if (wqe->index != rq->completed || rq->completed == rq->fetched) {
		qp_warn_rl(hw, qp, "RQ WQE %u completed out of order (%u..%u)\n",
			   wqe->index, rq->completed, rq->fetched);
		return;
	}
	rq->completed++;

	cqe->qpn = cpu_to_le32(qp->qpn);
	cqe->wqe_index = cpu_to_le32(wqe->index);
	cqe->flags &= ~DRAY_CQE_F_SEND_QUEUE;
	qp_cqe_post(hw, qp, qp->recv_cq, cqe);

	if (cqe->status != DRAY_CQE_ST_SUCCESS &&
	    cqe->status != DRAY_CQE_ST_WR_FLUSH_ERR)
		dray_hw_qp_error(hw, qp, 0, cqe->vendor_err);
}

/* Complete every WQE of @wq from completed to posted with WR_FLUSH_ERR. */
static bool wq_flush(struct dray_hw *hw, struct dray_hw_qp *qp,
		     struct dray_hw_wq *wq)
{
	bool sq = wq == &qp->sq;
	struct dray_cqe cqe = {
		.qpn	= cpu_to_le32(qp->qpn),
		.status	= DRAY_CQE_ST_WR_FLUSH_ERR,
		.flags	= sq ? DRAY_CQE_F_SEND_QUEUE : 0,
		.opcode	= DRAY_CQE_RECV,
	};
	bool work = false;

	/* The transport gave back what it had fetched. */
	wq->fetched = wq->completed;
	while (wq->completed != wq->posted) {
		if (sq) {
			const struct dray_sq_wqe *w = wq_slot(wq, wq->completed);

			cqe.opcode = sq_cqe_opcode(READ_ONCE(w->opcode));
		}
		cqe.wqe_index = cpu_to_le32(wq->completed);
		dray_hw_cq_post(hw, sq ? qp->send_cq : qp->recv_cq, &cqe);
		wq->completed++;
		work = true;
	}
	wq->fetched = wq->completed;
	if (work || wq->db_consumer != wq->fetched) {
		wq->db_consumer = wq->fetched;
		WRITE_ONCE(wq->db->consumer, cpu_to_le32(wq->fetched));
	}
	return work;
}

bool dray_hw_qp_flush(struct dray_hw *hw, struct dray_hw_qp *qp)
{
	bool work = false;

	lockdep_assert_held(&hw->engine.lock);

	if (qp->err_pending) {
		qp->err_pending = false;
		dray_xport_error(hw, qp);
		work = true;
	}
	work |= dray_hw_wq_poll(hw, qp, &qp->sq);
	work |= dray_hw_wq_poll(hw, qp, &qp->rq);
	work |= wq_flush(hw, qp, &qp->sq);
	work |= wq_flush(hw, qp, &qp->rq);
	return work;
}
