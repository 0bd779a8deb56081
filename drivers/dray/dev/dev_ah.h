/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: paths and address handles (dev_ah.c). A struct
 * dray_path from host memory (an AH's, a QP's, a UD WQE's address
 * vector) is resolved against the GID table into what a frame needs.
 */
#ifndef DRAY_DEV_AH_H
#define DRAY_DEV_AH_H

#include <linux/types.h>

struct dray_hw;
struct dray_hw_ah;
struct dray_hw_path;
struct dray_path;

/*
 * Resolve @p for an RC QP (@connected: unicast only) or an AH. The UDP
 * source port is left 0 when the path asks the device to pick one; the
 * caller derives it. Returns a DRAY_AQ_STS_* status and *syndrome.
 * Context: process or an engine pass (takes obj_lock).
 */
int dray_hw_path_resolve(struct dray_hw *hw, const struct dray_path *p,
			 bool connected, struct dray_hw_path *out,
			 u32 *syndrome);
/*
 * A RoCEv2 UDP source port from the range IBTA A17.5 sets aside
 * (0xC000..0xFFFF), from the flow label or else from @a and @b.
 */
u16 dray_hw_path_udp_sport(u32 flow_label, u32 a, u32 b);
/* The AH of @ahn, or NULL. engine.lock held. */
struct dray_hw_ah *dray_hw_ah_find(struct dray_hw *hw, u32 ahn);
/*
 * The path of a UD send WQE's address vector @av (host memory: not
 * trusted), as an AH would hold it; false if CREATE_AH would refuse it.
 */
bool dray_hw_av_resolve(struct dray_hw *hw, const struct dray_path *av,
			struct dray_hw_path *out);

#endif /* DRAY_DEV_AH_H */
