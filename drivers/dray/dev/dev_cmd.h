/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: the admin side of the objects. One handler per admin
 * opcode, called by the admin queue processor (dev_admin.c) in process
 * context with the command copied out of the ring; each checks every
 * field (reserved ones included) and reports through @res. Then the
 * sweeps a device reset makes (dev_reset.c), and the object references
 * and lookups that other admin commands need.
 *
 * Context: process; each takes engine.admin_lock itself, and
 * engine.lock around what it publishes or unpublishes (dev.h).
 */
#ifndef DRAY_DEV_CMD_H
#define DRAY_DEV_CMD_H

#include <linux/types.h>

struct dray_aq_entry;
struct dray_aq_result;
struct dray_hw;
struct dray_hw_pd;
struct dray_hw_qp;

/* dev_pd.c */
void dray_hw_cmd_create_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_pd(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
/*
 * A reference on PD @pdn for a new MR, QP or AH (NULL: no such PD), and
 * its release. admin_lock held.
 */
struct dray_hw_pd *dray_hw_pd_get(struct dray_hw *hw, u32 pdn);
void dray_hw_pd_put(struct dray_hw *hw, u32 pdn);
void dray_hw_pds_destroy(struct dray_hw *hw);

/* dev_mem.c */
void dray_hw_cmd_create_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_modify_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_mrs_destroy(struct dray_hw *hw);

/* dev_mw.c */
void dray_hw_cmd_create_mw(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_mw(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);

/* dev_cq.c */
void dray_hw_cmd_create_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_attach_mcast(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res);
void dray_hw_cmd_detach_mcast(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res);
void dray_hw_cmd_resize_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_cq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cqs_destroy(struct dray_hw *hw);
/* Does a CQ raise its events on this EQ? */
bool dray_hw_eq_in_use(struct dray_hw *hw, u32 eqn);

/* dev_qp.c */
void dray_hw_cmd_create_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_modify_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_query_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			  struct dray_aq_result *res);
void dray_hw_cmd_destroy_qp(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_qps_destroy(struct dray_hw *hw);
/* Is a QP using this UAR? */
bool dray_hw_uar_in_use(struct dray_hw *hw, u32 uar_index);

/* dev_stats.c: counter sets */
void dray_hw_cmd_alloc_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_free_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_bind_cset(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_query_counters(struct dray_hw *hw,
				const struct dray_aq_entry *e,
				struct dray_aq_result *res);
/*
 * A QP is being destroyed: what it counted stays in its counter set.
 * engine.lock held.
 */
void dray_hw_cset_qp_gone(struct dray_hw *hw, struct dray_hw_qp *qp);
/* Device reset: every counter set freed, set 0 cleared. admin_lock held. */
void dray_hw_csets_reset(struct dray_hw *hw);

/* dev_diag.c: QUERY_STATE */
void dray_hw_cmd_query_state(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res);

/* dev_srq.c */
void dray_hw_cmd_create_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_modify_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_cmd_query_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_srq(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res);
void dray_hw_srqs_destroy(struct dray_hw *hw);

/* dev_xrcd.c */
void dray_hw_cmd_create_xrcd(struct dray_hw *hw, const struct dray_aq_entry *e,
			     struct dray_aq_result *res);
void dray_hw_cmd_destroy_xrcd(struct dray_hw *hw,
			      const struct dray_aq_entry *e,
			      struct dray_aq_result *res);
/*
 * A reference on XRC domain @xrcdn for a new XRC SRQ or target QP (false:
 * no such domain; 0 is none), and its release. admin_lock held.
 */
bool dray_hw_xrcd_get(struct dray_hw *hw, u32 xrcdn);
void dray_hw_xrcd_put(struct dray_hw *hw, u32 xrcdn);
void dray_hw_xrcds_destroy(struct dray_hw *hw);

/* dev_ah.c */
void dray_hw_cmd_create_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res);
void dray_hw_cmd_destroy_ah(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res);
void dray_hw_ahs_destroy(struct dray_hw *hw);

#endif /* DRAY_DEV_CMD_H */
