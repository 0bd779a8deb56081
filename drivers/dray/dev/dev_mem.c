// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray NIC model: memory translation and protection (the NIC's "IOMMU").
 *
 * The device reaches host memory only through bus addresses it was given:
 * MTT pages and the data pages they list (queue buffers and MRs). Every
 * MTT page and every entry is validated before it is used; a range check
 * never overflows. The MR table maps a key to a registered range of pinned
 * pages; every data-path access goes through dray_hw_mr_check() first.
 *
 * MR keys are index << 8 | variant: the variant of an index changes on
 * every registration, so a stale key of a deregistered MR does not match
 * the next MR at that index. Index 0 is never used: key 0 is invalid.
 */

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dev.h"
#include "dev_cmd.h"
#include "dev_mem.h"
#include "dev_obj.h"

/**
 * dray_hw_dma_va() - translate a bus address range the device was given
 * @hw: the device
 * @addr: bus address
 * @len: bytes the device will access from @addr
 *
 * The model sits behind no IOMMU: a bus address is a physical address of
 * host RAM. Memory handed to the device in one piece (rings, output
 * buffers, UAR pages) must be physically contiguous.
 *
 * Return: the kernel virtual address, or NULL if the range is not RAM.
 */
void *dray_hw_dma_va(struct dray_hw *hw, u64 addr, size_t len)
{
	u64 last;

	if (!addr || !len || check_add_overflow(addr, (u64)len - 1, &last))
		return NULL;
	if (!pfn_valid(PHYS_PFN(addr)) || !pfn_valid(PHYS_PFN(last)))
		return NULL;
	return phys_to_virt(addr);
}

bool dray_hw_mailbox_in(struct dray_hw *hw, u64 addr, u32 len, void *dst,
			size_t size, struct dray_aq_result *res)
{
	const void *src;

	if (len != size) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_IN_LEN);
		return false;
	}
	src = dray_hw_dma_va(hw, addr, size);
	if (!src) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_IN_ADDR);
		return false;
	}
	memcpy(dst, src, size);
	return true;
}

bool dray_hw_mailbox_out(struct dray_hw *hw, u64 addr, u32 len,
			 const void *src, size_t size,
			 struct dray_aq_result *res)
{
	void *dst;

	if (!len) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_OUT_LEN);
		return false;
	}
	len = min_t(u32, len, size);
	dst = dray_hw_dma_va(hw, addr, len);
	if (!dst) {
		dray_aq_fail(res, DRAY_AQ_STS_DMA_ERROR, DRAY_AQ_SYN_OUT_ADDR);
		return false;
	}
	memcpy(dst, src, len);
	res->result = len;
	return true;
}

/* The model maps DRAY_PAGE_SIZE pages as kernel pages. */
static_assert(PAGE_SIZE == DRAY_PAGE_SIZE, "dray model needs 4 KiB pages");

/* A data page named by an MTT entry, or NULL if it is not host RAM. */
static struct page *mtt_data_page(u64 addr)
{
	if (!addr || !IS_ALIGNED(addr, DRAY_PAGE_SIZE) ||
	    !pfn_valid(PHYS_PFN(addr)))
		return NULL;
	return pfn_to_page(PHYS_PFN(addr));
}

/*
 * Translate @n_pages MTT entries, starting with the MTT page at
 * @mtt_addr, into @pages. Only the entries needed are read, so a chain
 * that loops back on itself cannot make the walk run forever.
 * Context: process (a big MR takes a while).
 */
static int mtt_walk(struct dray_hw *hw, u64 mtt_addr, u32 n_pages,
		    struct page **pages, u32 *syndrome)
{
	const __le64 *mtt = NULL;
	u64 addr = mtt_addr;
	u32 i;

	for (i = 0; i < n_pages; i++) {
		u32 slot = i % DRAY_MTT_DATA_ENTRIES;

		if (!slot) {
			if (i) {
				addr = le64_to_cpu(READ_ONCE(mtt[DRAY_MTT_DATA_ENTRIES]));
				cond_resched();
			}
			mtt = NULL;
			if (IS_ALIGNED(addr, DRAY_PAGE_SIZE))
				mtt = dray_hw_dma_va(hw, addr, DRAY_PAGE_SIZE);
			if (!mtt)
				goto bad;
		}
		pages[i] = mtt_data_page(le64_to_cpu(READ_ONCE(mtt[slot])));
		if (!pages[i])
			goto bad;
	}
	return DRAY_AQ_STS_OK;

bad:
	*syndrome = DRAY_AQ_SYN_MTT;
	return DRAY_AQ_STS_DMA_ERROR;
}

int dray_hw_buf_map(struct dray_hw *hw, u64 mtt_addr, u32 n_pages,
		    struct dray_hw_buf *buf, u32 *syndrome)
{
	struct page **pages;
	void *vaddr;
	int status;

	if (!n_pages) {
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		return DRAY_AQ_STS_BAD_PARAM;
	}
	pages = kvcalloc(n_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		return DRAY_AQ_STS_NO_MEMORY;
	}
	status = mtt_walk(hw, mtt_addr, n_pages, pages, syndrome);
	if (status)
		goto free_pages;

	vaddr = vmap(pages, n_pages, VM_MAP, PAGE_KERNEL);
	if (!vaddr) {
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		status = DRAY_AQ_STS_NO_MEMORY;
		goto free_pages;
	}
	buf->pages = pages;
	buf->n_pages = n_pages;
	buf->vaddr = vaddr;
	return DRAY_AQ_STS_OK;

free_pages:
	kvfree(pages);
	return status;
}

void dray_hw_buf_unmap(struct dray_hw_buf *buf)
{
	if (buf->vaddr)
		vunmap(buf->vaddr);
	kvfree(buf->pages);
	buf->vaddr = NULL;
	buf->pages = NULL;
	buf->n_pages = 0;
}

static void mr_free(struct dray_hw_mr *mr)
{
	kvfree(mr->pages);
	kfree(mr);
}

/*
 * Check a CREATE_MR command and fill @mr from it (no lookups, no lock).
 * Returns a DRAY_AQ_STS_* status.
 */
static int mr_params(const struct dray_cmd_create_mr *cmd,
		     struct dray_hw_mr *mr, u32 *syndrome)
{
	u64 last;

	mr->pdn = le32_to_cpu(cmd->pdn);
	mr->access = cmd->access;
	mr->flags = cmd->flags;
	mr->iova = le64_to_cpu(cmd->iova);
	mr->length = le64_to_cpu(cmd->length);
	mr->n_pages = le32_to_cpu(cmd->n_pages);

	*syndrome = DRAY_AQ_SYN_RESERVED;
	if (cmd->reserved || cmd->reserved2)
		return DRAY_AQ_STS_BAD_PARAM;

	*syndrome = DRAY_AQ_SYN_ACCESS;
	if (mr->access & ~DRAY_ACCESS_ALL)
		return DRAY_AQ_STS_BAD_PARAM;
	/* IBTA: remote write or atomic access requires local write. */
	if ((mr->access & (DRAY_ACCESS_REMOTE_WRITE |
			   DRAY_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & DRAY_ACCESS_LOCAL_WRITE))
		return DRAY_AQ_STS_BAD_PARAM;

	*syndrome = DRAY_AQ_SYN_FLAGS;
	if ((mr->flags & ~(DRAY_MR_F_PHYSICAL | DRAY_MR_F_FAST_REG)) ||
	    mr->flags == (DRAY_MR_F_PHYSICAL | DRAY_MR_F_FAST_REG))
		return DRAY_AQ_STS_BAD_PARAM;

	if (mr->flags & DRAY_MR_F_FAST_REG) {
		/* Created FREE: REG_MR gives it pages, range and rights. */
		*syndrome = DRAY_AQ_SYN_ACCESS;
		if (mr->access)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_IOVA;
		if (mr->iova)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_LENGTH;
		if (mr->length)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_MTT;
		if (cmd->mtt_addr)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		if (!mr->n_pages || mr->n_pages > DRAY_HW_MAX_FR_PAGES)
			return DRAY_AQ_STS_BAD_PARAM;
		mr->max_pages = mr->n_pages;
		mr->n_pages = 0;
		mr->state = DRAY_HW_MR_FREE;
		return DRAY_AQ_STS_OK;
	}
	mr->state = DRAY_HW_MR_VALID;

	if (mr->flags & DRAY_MR_F_PHYSICAL) {
		/*
		 * Remote rights are allowed: only the kernel driver issues
		 * admin commands, and it grants them only when a kernel
		 * consumer asked for an unsafe global rkey.
		 */
		*syndrome = DRAY_AQ_SYN_IOVA;
		if (mr->iova)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		if (mr->n_pages)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_MTT;
		if (cmd->mtt_addr)
			return DRAY_AQ_STS_BAD_PARAM;
		/* All of memory; each page is checked when it is used. */
		mr->length = U64_MAX;
		return DRAY_AQ_STS_OK;
	}

	*syndrome = DRAY_AQ_SYN_LENGTH;
	if (mr->length > DRAY_HW_MAX_MR_SIZE)
		return DRAY_AQ_STS_BAD_PARAM;
	if (!mr->length) {
		/* Empty: no page, only zero-length accesses go through it. */
		*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
		if (mr->n_pages)
			return DRAY_AQ_STS_BAD_PARAM;
		*syndrome = DRAY_AQ_SYN_MTT;
		if (cmd->mtt_addr)
			return DRAY_AQ_STS_BAD_PARAM;
		return DRAY_AQ_STS_OK;
	}
	*syndrome = DRAY_AQ_SYN_IOVA;
	if (check_add_overflow(mr->iova, mr->length - 1, &last))
		return DRAY_AQ_STS_BAD_PARAM;
	*syndrome = DRAY_AQ_SYN_PAGE_COUNT;
	if (mr->n_pages != DIV_ROUND_UP(offset_in_page(mr->iova) + mr->length,
					DRAY_PAGE_SIZE))
		return DRAY_AQ_STS_BAD_PARAM;
	return DRAY_AQ_STS_OK;
}

void dray_hw_cmd_create_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_create_mr *cmd = &e->u.create_mr;
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_mr *mr;
	u32 syndrome, index;
	int status, ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		dray_aq_fail(res, DRAY_AQ_STS_NO_MEMORY, DRAY_AQ_SYN_NONE);
		return;
	}
	status = mr_params(cmd, mr, &syndrome);
	if (status)
		goto free_mr;

	if (mr->max_pages) {
		mr->pages = kvcalloc(mr->max_pages, sizeof(*mr->pages),
				     GFP_KERNEL | __GFP_NOWARN);
		if (!mr->pages) {
			status = DRAY_AQ_STS_NO_MEMORY;
			syndrome = DRAY_AQ_SYN_PAGE_COUNT;
			goto free_mr;
		}
	}
	/* The table walk can be long: do it before taking admin_lock. */
	if (mr->n_pages) {
		mr->pages = kvcalloc(mr->n_pages, sizeof(*mr->pages),
				     GFP_KERNEL | __GFP_NOWARN);
		if (!mr->pages) {
			status = DRAY_AQ_STS_NO_MEMORY;
			syndrome = DRAY_AQ_SYN_PAGE_COUNT;
			goto free_mr;
		}
		status = mtt_walk(hw, le64_to_cpu(cmd->mtt_addr), mr->n_pages,
				  mr->pages, &syndrome);
		if (status)
			goto free_mr;
	}

	mutex_lock(&eng->admin_lock);
	if (!dray_hw_pd_get(hw, mr->pdn)) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_PDN;
		goto unlock;
	}
	/* Reserve the index (passes find no MR there) ... */
	ret = xa_alloc_cyclic(&eng->mrs, &index, NULL,
			      XA_LIMIT(1, DRAY_HW_MAX_MR), &eng->mr_key_seq,
			      GFP_KERNEL);
	if (ret < 0) {
		dray_hw_pd_put(hw, mr->pdn);
		status = dray_aq_alloc_status(ret);
		syndrome = DRAY_AQ_SYN_NONE;
		goto unlock;
	}
	eng->mr_variant[index]++;
	mr->key = FIELD_PREP(DRAY_KEY_INDEX_MASK, index) |
		  FIELD_PREP(DRAY_KEY_VARIANT_MASK, eng->mr_variant[index]);
	/* ... and publish the MR there: storing in a reserved slot. */
	dray_hw_engine_lock(hw);
	xa_store(&eng->mrs, index, mr, GFP_ATOMIC);
	dray_hw_engine_unlock(hw);
	mutex_unlock(&eng->admin_lock);

	res->result = mr->key;
	return;

unlock:
	mutex_unlock(&eng->admin_lock);
free_mr:
	mr_free(mr);
	dray_aq_fail(res, status, syndrome);
}

void dray_hw_cmd_destroy_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			    struct dray_aq_result *res)
{
	const struct dray_cmd_destroy_mr *cmd = &e->u.destroy_mr;
	struct dray_hw_engine *eng = &hw->engine;
	u32 key = le32_to_cpu(cmd->key);
	struct dray_hw_mr *mr;

	if (cmd->reserved) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}

	mutex_lock(&eng->admin_lock);
	mr = xa_load(&eng->mrs, dray_hw_mr_index(key));
	/*
	 * The whole key names an MR, but a FAST_REG MR its index: software
	 * picks its variant in REG_MR work requests, which may not have run.
	 */
	if (!mr || mr->mw_type ||
	    (mr->key != key && !(mr->flags & DRAY_MR_F_FAST_REG))) {
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_NOT_FOUND, DRAY_AQ_SYN_MR_KEY);
		return;
	}
	/* Taking engine.lock waits for a running pass to finish. */
	dray_hw_engine_lock(hw);
	/* IBTA: an MR with windows bound to it cannot be destroyed. */
	if (mr->windows) {
		dray_hw_engine_unlock(hw);
		mutex_unlock(&eng->admin_lock);
		dray_aq_fail(res, DRAY_AQ_STS_BUSY, DRAY_AQ_SYN_MR_KEY);
		return;
	}
	xa_erase(&eng->mrs, dray_hw_mr_index(key));
	dray_hw_engine_unlock(hw);
	dray_hw_pd_put(hw, mr->pdn);
	mutex_unlock(&eng->admin_lock);

	mr_free(mr);
}

/*
 * MODIFY_MR (ibv_rereg_mr): the new PD, rights or pages checked and
 * prepared outside engine.lock, then swapped in under it, so a pass sees
 * the MR whole before or after. The key stays.
 */
void dray_hw_cmd_modify_mr(struct dray_hw *hw, const struct dray_aq_entry *e,
			   struct dray_aq_result *res)
{
	const struct dray_cmd_modify_mr *cmd = &e->u.modify_mr;
	struct dray_hw_engine *eng = &hw->engine;
	u32 key = le32_to_cpu(cmd->key);
	struct dray_cmd_create_mr c = {};
	struct page **old_pages = NULL;
	struct dray_hw_mr *mr, n = {};
	u32 syndrome = DRAY_AQ_SYN_NONE;
	int status = DRAY_AQ_STS_OK;
	u32 old_pdn;

	if (cmd->reserved || cmd->reserved1 || cmd->reserved2) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_RESERVED);
		return;
	}
	if (!cmd->what || cmd->what & ~(DRAY_MODIFY_MR_PD |
					DRAY_MODIFY_MR_ACCESS |
					DRAY_MODIFY_MR_TRANS)) {
		dray_aq_fail(res, DRAY_AQ_STS_BAD_PARAM, DRAY_AQ_SYN_FLAGS);
		return;
	}

	mutex_lock(&eng->admin_lock);
	mr = xa_load(&eng->mrs, dray_hw_mr_index(key));
	if (!mr || mr->mw_type || mr->flags || mr->key != key) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_MR_KEY;
		goto unlock;
	}
	/* What the MR will be: checked as CREATE_MR checks a new one. */
	c.pdn = cpu_to_le32(cmd->what & DRAY_MODIFY_MR_PD ?
			    le32_to_cpu(cmd->pdn) : mr->pdn);
	c.access = cmd->what & DRAY_MODIFY_MR_ACCESS ? cmd->access :
		   mr->access;
	if (cmd->what & DRAY_MODIFY_MR_TRANS) {
		c.iova = cmd->iova;
		c.length = cmd->length;
		c.mtt_addr = cmd->mtt_addr;
		c.n_pages = cmd->n_pages;
	} else {
		c.iova = cpu_to_le64(mr->iova);
		c.length = cpu_to_le64(mr->length);
		c.n_pages = cpu_to_le32(mr->n_pages);
	}
	status = mr_params(&c, &n, &syndrome);
	if (status)
		goto unlock;
	if (cmd->what & DRAY_MODIFY_MR_TRANS) {
		n.pages = kvcalloc(n.n_pages, sizeof(*n.pages),
				   GFP_KERNEL | __GFP_NOWARN);
		if (!n.pages) {
			status = DRAY_AQ_STS_NO_MEMORY;
			syndrome = DRAY_AQ_SYN_PAGE_COUNT;
			goto unlock;
		}
		status = mtt_walk(hw, le64_to_cpu(c.mtt_addr), n.n_pages,
				  n.pages, &syndrome);
		if (status)
			goto unlock;
	}
	if (n.pdn != mr->pdn && !dray_hw_pd_get(hw, n.pdn)) {
		status = DRAY_AQ_STS_NOT_FOUND;
		syndrome = DRAY_AQ_SYN_PDN;
		goto unlock;
	}

	dray_hw_engine_lock(hw);
	if (mr->windows) {
		dray_hw_engine_unlock(hw);
		if (n.pdn != mr->pdn)
			dray_hw_pd_put(hw, n.pdn);
		status = DRAY_AQ_STS_BUSY;
		syndrome = DRAY_AQ_SYN_MR_KEY;
		goto unlock;
	}
	old_pdn = mr->pdn;
	mr->pdn = n.pdn;
	mr->access = n.access;
	if (cmd->what & DRAY_MODIFY_MR_TRANS) {
		old_pages = mr->pages;
		mr->pages = n.pages;
		mr->iova = n.iova;
		mr->length = n.length;
		mr->n_pages = n.n_pages;
		n.pages = NULL;
	}
	dray_hw_engine_unlock(hw);
	if (old_pdn != mr->pdn)
		dray_hw_pd_put(hw, old_pdn);
	res->result = key;
unlock:
	mutex_unlock(&eng->admin_lock);
	kvfree(n.pages);
	kvfree(old_pages);
	if (status)
		dray_aq_fail(res, status, syndrome);
}

/* Is every page of [addr, last] host RAM (physical MR)? */
static bool phys_range_ok(u64 addr, u64 last)
{
	unsigned long pfn;

	for (pfn = PHYS_PFN(addr); pfn <= PHYS_PFN(last); pfn++)
		if (!pfn_valid(pfn))
			return false;
	return true;
}

enum dray_mr_err dray_hw_mr_check(struct dray_hw *hw, u32 key, u32 pdn,
				  u8 access, u64 addr, u64 len,
				  struct dray_hw_mr **mrp)
{
	struct dray_hw_mr *mr;
	u64 last;

	lockdep_assert_held(&hw->engine.lock);

	mr = xa_load(&hw->engine.mrs, dray_hw_mr_index(key));
	/* A window's key is an rkey only (dray_hw_rkey_check()). */
	if (!mr || mr->key != key || mr->mw_type)
		return DRAY_MR_ERR_KEY;
	if (mr->pdn != pdn)
		return DRAY_MR_ERR_PD;
	if (mr->state != DRAY_HW_MR_VALID)
		return DRAY_MR_ERR_STATE;
	if ((mr->access & access) != access)
		return DRAY_MR_ERR_ACCESS;
	if (len) {
		if (!mr->length || check_add_overflow(addr, len - 1, &last) ||
		    addr < mr->iova || last - mr->iova > mr->length - 1)
			return DRAY_MR_ERR_RANGE;
		if ((mr->flags & DRAY_MR_F_PHYSICAL) &&
		    !phys_range_ok(addr, last))
			return DRAY_MR_ERR_RANGE;
	}
	*mrp = mr;
	return DRAY_MR_OK;
}

/* The FAST_REG MR with the index of @key on PD @pdn, or NULL. */
static struct dray_hw_mr *mr_fast_reg_find(struct dray_hw *hw, u32 pdn,
					   u32 key)
{
	struct dray_hw_mr *mr = xa_load(&hw->engine.mrs,
					dray_hw_mr_index(key));

	if (!mr || mr->mw_type || !(mr->flags & DRAY_MR_F_FAST_REG) ||
	    mr->pdn != pdn)
		return NULL;
	return mr;
}

/*
 * Check a REG_MR's rights, range and page list (host memory: every entry
 * is read once, checked, and only the translated pages are kept) and fill
 * mr->pages. Returns 0 or DRAY_VERR_FR_PARAMS; mr->pages may be partly
 * overwritten then, but the MR stays FREE.
 */
static u8 mr_fast_reg_pages(struct dray_hw *hw, struct dray_hw_mr *mr,
			    u8 access, u64 iova, u64 length, u64 pbl_addr,
			    u32 n_pages)
{
	const __le64 *pbl;
	u64 last;
	u32 i;

	if ((access & ~DRAY_ACCESS_ALL) ||
	    ((access & (DRAY_ACCESS_REMOTE_WRITE |
			DRAY_ACCESS_REMOTE_ATOMIC)) &&
	     !(access & DRAY_ACCESS_LOCAL_WRITE)))
		return DRAY_VERR_FR_PARAMS;
	if (!n_pages || n_pages > mr->max_pages || !length ||
	    length > DRAY_HW_MAX_MR_SIZE ||
	    check_add_overflow(iova, length - 1, &last) ||
	    DIV_ROUND_UP(offset_in_page(iova) + length, DRAY_PAGE_SIZE) >
	    n_pages)
		return DRAY_VERR_FR_PARAMS;
	pbl = dray_hw_dma_va(hw, pbl_addr, (size_t)n_pages * sizeof(*pbl));
	if (!pbl || !IS_ALIGNED(pbl_addr, sizeof(*pbl)))
		return DRAY_VERR_FR_PARAMS;
	for (i = 0; i < n_pages; i++) {
		struct page *page = mtt_data_page(le64_to_cpu(READ_ONCE(pbl[i])));

		if (!page)
			return DRAY_VERR_FR_PARAMS;
		mr->pages[i] = page;
	}
	return 0;
}

u8 dray_hw_mr_fast_reg(struct dray_hw *hw, u32 pdn,
		       const struct dray_sq_wqe *w)
{
	u32 key = le32_to_cpu(w->u.reg.key);
	u64 iova = le64_to_cpu(w->u.reg.iova);
	u64 length = le64_to_cpu(w->u.reg.length);
	u32 n_pages = le32_to_cpu(w->u.reg.n_pages);
	struct dray_hw_mr *mr;
	u8 verr;

	lockdep_assert_held(&hw->engine.lock);

	mr = mr_fast_reg_find(hw, pdn, key);
	if (!mr)
		return DRAY_VERR_FR_KEY;
	/* IBTA: only a FREE MR may be registered. */
	if (mr->state == DRAY_HW_MR_VALID)
		return DRAY_VERR_FR_VALID;
	verr = mr_fast_reg_pages(hw, mr, w->u.reg.access, iova, length,
				 le64_to_cpu(w->u.reg.pbl_addr), n_pages);
	if (verr)
		return verr;
	mr->key = key;
	mr->access = w->u.reg.access;
	mr->iova = iova;
	mr->length = length;
	mr->n_pages = n_pages;
	mr->state = DRAY_HW_MR_VALID;
	return 0;
}

u8 dray_hw_mr_invalidate(struct dray_hw *hw, u32 pdn, u32 key)
{
	struct dray_hw_mr *mr;

	lockdep_assert_held(&hw->engine.lock);

	mr = mr_fast_reg_find(hw, pdn, key);
	if (!mr)
		return DRAY_VERR_FR_KEY;
	/* The whole key: a stale one of an earlier registration is refused. */
	if (mr->key != key)
		return DRAY_VERR_INV_KEY;
	/* Invalidating a FREE MR is harmless and allowed. */
	mr->state = DRAY_HW_MR_FREE;
	return 0;
}

/* The page holding @addr (checked to be in the MR) and the offset in it. */
static struct page *mr_translate(struct dray_hw_mr *mr, u64 addr, u32 *offset)
{
	u64 pos;

	if (mr->flags & DRAY_MR_F_PHYSICAL) {
		*offset = offset_in_page(addr);
		return pfn_to_page(PHYS_PFN(addr));
	}
	/* No overflow: addr - iova < length <= DRAY_HW_MAX_MR_SIZE. */
	pos = addr - mr->iova + offset_in_page(mr->iova);
	*offset = offset_in_page(pos);
	return mr->pages[pos >> DRAY_PAGE_SHIFT];
}

struct page *dray_hw_mr_page(struct dray_hw_mr *mr, u64 addr, u32 *offset,
			     u32 *len)
{
	struct page *page = mr_translate(mr, addr, offset);

	*len = DRAY_PAGE_SIZE - *offset;
	return page;
}

void dray_hw_mr_write(struct dray_hw_mr *mr, u64 addr, const void *src,
		      size_t len)
{
	while (len) {
		u32 offset;
		struct page *page = mr_translate(mr, addr, &offset);
		size_t chunk = min_t(size_t, len, DRAY_PAGE_SIZE - offset);

		memcpy_to_page(page, offset, src, chunk);
		addr += chunk;
		src += chunk;
		len -= chunk;
	}
}

void dray_hw_mr_read(struct dray_hw_mr *mr, u64 addr, void *dst, size_t len)
{
	while (len) {
		u32 offset;
		struct page *page = mr_translate(mr, addr, &offset);
		size_t chunk = min_t(size_t, len, DRAY_PAGE_SIZE - offset);

		memcpy_from_page(dst, page, offset, chunk);
		addr += chunk;
		dst += chunk;
		len -= chunk;
	}
}

/*
 * The operation is atomic with respect to the CPUs too: the owning
 * process may use CPU atomics on the same word.
 */
u64 dray_hw_mr_atomic(struct dray_hw_mr *mr, u64 addr, bool cmp_swap,
		      u64 compare_add, u64 swap)
{
	struct page *page;
	u32 offset;
	u64 orig;
	void *va;
	u64 *p;

	/* The caller checked alignment; never let a word cross a page. */
	if (!IS_ALIGNED(addr, sizeof(u64)))
		return 0;
	page = mr_translate(mr, addr, &offset);
	va = kmap_local_page(page);
	p = va + offset;
	if (cmp_swap) {
		orig = cmpxchg64(p, compare_add, swap);
	} else {
		do {
			orig = READ_ONCE(*p);
		} while (cmpxchg64(p, orig, orig + compare_add) != orig);
	}
	kunmap_local(va);
	return orig;
}

void dray_hw_mr_atomic_write(struct dray_hw_mr *mr, u64 addr,
			     const u8 value[8])
{
	struct page *page;
	u32 offset;
	void *va;
	u64 v;

	/* As for atomics: aligned, so the word never crosses a page. */
	if (!IS_ALIGNED(addr, sizeof(u64)))
		return;
	memcpy(&v, value, sizeof(v));
	page = mr_translate(mr, addr, &offset);
	va = kmap_local_page(page);
	WRITE_ONCE(*(u64 *)(va + offset), v);
	kunmap_local(va);
}

/* Device reset: every MR, unpublished as DESTROY_MR does. */
void dray_hw_mrs_destroy(struct dray_hw *hw)
{
	struct dray_hw_engine *eng = &hw->engine;
	struct dray_hw_mr *mr;
	unsigned long index;

	lockdep_assert_held(&eng->admin_lock);
	xa_for_each(&eng->mrs, index, mr) {
		dray_hw_engine_lock(hw);
		xa_erase(&eng->mrs, index);
		dray_hw_engine_unlock(hw);
		dray_hw_pd_put(hw, mr->pdn);
		mr_free(mr);
	}
}
