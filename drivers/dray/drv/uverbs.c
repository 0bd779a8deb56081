// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: driver-specific uverbs methods and attributes.
 *
 * DRAY_IB_METHOD_KICK on UVERBS_OBJECT_DEVICE wakes the queue engine for
 * the caller's context. The provider calls it only after posting work
 * and finding DRAY_UAR_F_NEED_WAKEUP set in its doorbell page, so in
 * steady state it is never called.
 *
 * UVERBS_METHOD_DM_ALLOC returns where to map the device memory (dm.c).
 */

#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/dray-abi.h>

#define UVERBS_MODULE_NAME dray_ib
#include <rdma/uverbs_named_ioctl.h>

#include "dray.h"

/*
 * Context: process; the core holds the context alive (and the device
 * registered) for the duration of the method.
 */
static int UVERBS_HANDLER(DRAY_IB_METHOD_KICK)(struct uverbs_attr_bundle *attrs)
{
	struct ib_ucontext *ibuctx = ib_uverbs_get_ucontext(attrs);
	struct dray_ucontext *uctx;

	if (IS_ERR(ibuctx))
		return PTR_ERR(ibuctx);
	uctx = to_ductx(ibuctx);
	dray_engine_kick(to_ddev(ibuctx->device), uctx->uar_index);
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(DRAY_IB_METHOD_KICK);

ADD_UVERBS_METHODS(dray_ib_device, UVERBS_OBJECT_DEVICE,
		   &UVERBS_METHOD(DRAY_IB_METHOD_KICK));

/* ALLOC_DM answers with where the block is mapped (dm.c). */
ADD_UVERBS_ATTRIBUTES_SIMPLE(dray_ib_dm, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY),
			     UVERBS_ATTR_PTR_OUT(DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_LEN,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

const struct uapi_definition dray_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &dray_ib_device),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &dray_ib_dm),
	{}
};
