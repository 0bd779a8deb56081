// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dray provider: device memory (ibv_alloc_dm). The kernel hands out a
 * block of whole pages that this library maps (the key and length come
 * back in the driver's attributes of UVERBS_METHOD_DM_ALLOC, see
 * <rdma/dray-abi.h>); ibv_memcpy_to_dm and ibv_memcpy_from_dm copy
 * through the mapping, in aligned 4-byte words as device memory is
 * accessed. MRs on it are zero based (ibv_reg_dm_mr).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dray.h"

/* Device memory is reached in aligned 4-byte words. */
#define DRAY_DM_WORD	4

struct dray_dm {
	struct verbs_dm vdm;
	uint8_t *addr;		/* the mapping: byte 0 of the DM */
	size_t map_len;
	uint64_t length;	/* what was asked for */
};

static struct dray_dm *to_dray_dm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct dray_dm, vdm.dm);
}

/* [offset, + length) in the DM, word aligned. */
static bool dray_dm_range_ok(const struct dray_dm *dm, uint64_t offset,
			     size_t length)
{
	return !(offset % DRAY_DM_WORD) && !(length % DRAY_DM_WORD) &&
	       offset <= dm->length && length <= dm->length - offset;
}

static int dray_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct dray_dm *dm = to_dray_dm(ibdm);
	_Atomic(uint32_t) *dst = (_Atomic(uint32_t) *)(dm->addr + dm_offset);
	const uint8_t *src = host_addr;
	size_t i;

	if (!dray_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	for (i = 0; i < length / DRAY_DM_WORD; i++) {
		uint32_t w;

		memcpy(&w, src + i * DRAY_DM_WORD, sizeof(w));
		atomic_store_explicit(&dst[i], w, memory_order_relaxed);
	}
	return 0;
}

static int dray_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct dray_dm *dm = to_dray_dm(ibdm);
	_Atomic(uint32_t) *src = (_Atomic(uint32_t) *)(dm->addr + dm_offset);
	uint8_t *dst = host_addr;
	size_t i;

	if (!dray_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	for (i = 0; i < length / DRAY_DM_WORD; i++) {
		uint32_t w = atomic_load_explicit(&src[i],
						  memory_order_relaxed);

		memcpy(dst + i * DRAY_DM_WORD, &w, sizeof(w));
	}
	return 0;
}

struct ibv_dm *dray_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	DECLARE_COMMAND_BUFFER(cmd, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			       2);
	uint64_t key = 0, map_len = 0;
	struct dray_dm *dm;
	void *addr;
	int err;

	if (attr->comp_mask) {
		verbs_err(verbs_get_ctx(ibctx), "alloc_dm: comp_mask %#x\n",
			  attr->comp_mask);
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	fill_attr_out_ptr(cmd, DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY, &key);
	fill_attr_out_ptr(cmd, DRAY_IB_ATTR_ALLOC_DM_RESP_MMAP_LEN, &map_len);
	err = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, cmd);
	if (err) {
		verbs_err(verbs_get_ctx(ibctx), "ALLOC_DM of %llu bytes failed: %s\n",
			  (unsigned long long)attr->length, strerror(err));
		goto err_free;
	}
	addr = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    ibctx->cmd_fd, (off_t)key);
	if (addr == MAP_FAILED) {
		err = errno;
		verbs_err(verbs_get_ctx(ibctx), "mmap of device memory (%llu bytes) failed: %s\n",
			  (unsigned long long)map_len, strerror(err));
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	dm->addr = addr;
	dm->map_len = map_len;
	dm->length = attr->length;
	dm->vdm.dm.memcpy_to_dm = dray_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = dray_memcpy_from_dm;
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = err;
	return NULL;
}

int dray_free_dm(struct ibv_dm *ibdm)
{
	struct dray_dm *dm = to_dray_dm(ibdm);
	int err;

	/* EBUSY while an MR is on it: then it stays mapped and usable. */
	err = ibv_cmd_free_dm(&dm->vdm);
	if (err)
		return err;
	munmap(dm->addr, dm->map_len);
	free(dm);
	return 0;
}

struct ibv_mr *dray_reg_dm_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_dm_mr(ibpd, &to_dray_dm(ibdm)->vdm, dm_offset,
				length, access, vmr, NULL);
	if (err) {
		verbs_err(verbs_get_ctx(ibpd->context),
			  "REG_DM_MR of %zu bytes at %llu failed: %s\n", length,
			  (unsigned long long)dm_offset, strerror(err));
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}
