// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: paths and address handles. A path names the port's
 * source GID by index and the destination by MAC and GID; resolving it
 * checks it against the GID table (families must match, no multicast or
 * zero address where the use forbids it) and derives the UDP source port
 * when software leaves it to the device.
 *
 * Context: CREATE_AH/DESTROY_AH are admin commands (process, under
 * engine.admin_lock, publishing under engine.lock); dray_hw_ah_find() and
 * dray_hw_av_resolve() run in engine passes.
 */

#include <linux/etherdevice.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "dev.h"
#include "dev_ah.h"
#include "dev_cmd.h"
#include "dev_obj.h"

#define DRAY_FLOW_LABEL_MASK	0xfffffU
#define DRAY_HOP_LIMIT_DEFAULT	64

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

u16 dray_hw_path_udp_sport(u32 flow_label, u32 a, u32 b)
{
	u32 fl = flow_label ? flow_label : jhash_2words(a, b, 0);

	return 0xc000 | ((fl ^ (fl >> 14) ^ (fl >> 28)) & 0x3fff);
}

int dray_hw_path_resolve(struct dray_hw *hw, const struct dray_path *p,
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

/* The UDP source port of an AH whose path leaves it to the device. */
static void ah_udp_sport(struct dray_hw_path *path)
{
	if (!path->udp_sport)
		path->udp_sport =
			dray_hw_path_udp_sport(path->flow_label,
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

	if (dray_hw_path_resolve(hw, av, false, out, &syndrome))
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
	u32 syndrome, ahn;
	int status, ret;

	if (cmd->reserved || cmd->reserved2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (!dray_hw_mailbox_in(hw, le64_to_cpu(cmd->addr),
				le32_to_cpu(cmd->len), &path, sizeof(path), res))
		return;

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	status = dray_hw_path_resolve(hw, &path, false, &ah->path, &syndrome);
	if (status)
		goto free_ah;
	ah_udp_sport(&ah->path);
	ah->pdn = pdn;

	mutex_lock(&eng->admin_lock);
	if (!dray_hw_pd_get(hw, pdn)) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_PDN;
		goto unlock;
	}
	/* Reserve the number, then publish the AH in the reserved slot. */
	ret = xa_alloc_cyclic(&eng->ahs, &ahn, NULL, XA_LIMIT(1, DRAY_HW_MAX_AH),
			      &eng->ahn_next, GFP_KERNEL);
	if (ret < 0) {
		dray_hw_pd_put(hw, pdn);
		status = dray_aq_alloc_status(ret);
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	ah->ahn = ahn;
	dray_hw_engine_lock(hw);
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
	dray_hw_engine_lock(hw);
	ah = xa_erase(&eng->ahs, ahn);
	dray_hw_engine_unlock(hw);
	if (ah)
		dray_hw_pd_put(hw, ah->pdn);
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

/* Device reset: every AH, before the PDs. */
void dray_hw_ahs_destroy(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_ah *ah;
	unsigned long index;

	lockdep_assert_held(&eng->admin_lock);
	xa_for_each(&eng->ahs, index, ah) {
		dray_hw_engine_lock(hw);
		xa_erase(&eng->ahs, index);
		dray_hw_engine_unlock(hw);
		dray_hw_pd_put(hw, ah->pdn);
		kfree(ah);
	}
}
