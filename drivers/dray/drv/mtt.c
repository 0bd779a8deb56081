// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: pinned user buffers and their memory translation tables.
 *
 * The device addresses memory in 4 KiB pages. A buffer it is given (an
 * MR, a CQ ring, an SQ or RQ ring) is described by an MTT: a chain of
 * 4 KiB pages of little-endian bus addresses, entry 511 of each linking
 * the next (see dray_admin.h). The device copies the table when the
 * object is created, so an MTT lives only around that command; the
 * pinned pages it describes live as long as the object.
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>

#include "dray.h"

static_assert(DRAY_PAGE_SIZE == SZ_4K);
static_assert(DRAY_MTT_ENTRIES * sizeof(__le64) == DRAY_PAGE_SIZE);

/* Allocate and map the MTT pages, zeroed, in @mtt->dma order. */
static int mtt_alloc_pages(struct dray_dev *dev, struct dray_mtt *mtt)
{
	struct device *dma_dev = dray_dma_dev(dev);
	u32 i;

	for (i = 0; i < mtt->n_mtt; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		dma_addr_t dma;

		if (!page)
			goto unwind;
		dma = dma_map_page(dma_dev, page, 0, DRAY_PAGE_SIZE,
				   DMA_TO_DEVICE);
		if (dma_mapping_error(dma_dev, dma)) {
			__free_page(page);
			goto unwind;
		}
		mtt->pages[i] = page;
		mtt->dma[i] = dma;
	}
	return 0;

unwind:
	while (i--) {
		dma_unmap_page(dma_dev, mtt->dma[i], DRAY_PAGE_SIZE,
			       DMA_TO_DEVICE);
		__free_page(mtt->pages[i]);
	}
	return -ENOMEM;
}

/*
 * Write the data page addresses and the links. The pages are already
 * mapped (a link needs the next page's bus address), so hand each one
 * back to the device once it is written.
 */
static int mtt_fill(struct dray_dev *dev, struct ib_umem *umem,
		    struct dray_mtt *mtt)
{
	struct device *dma_dev = dray_dma_dev(dev);
	struct ib_block_iter biter;
	__le64 *tbl = NULL;
	u32 i = 0, p;

	rdma_umem_for_each_dma_block(umem, &biter, DRAY_PAGE_SIZE) {
		u32 slot = i % DRAY_MTT_DATA_ENTRIES;

		if (i == mtt->n_data)
			break;
		if (!slot) {
			tbl = page_address(mtt->pages[i / DRAY_MTT_DATA_ENTRIES]);
			cond_resched();
		}
		tbl[slot] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
		i++;
	}
	if (i != mtt->n_data) {
		ddev_err_rl(dev, "umem has %u 4 KiB blocks, expected %u\n", i,
			    mtt->n_data);
		return -EIO;
	}

	for (p = 0; p < mtt->n_mtt; p++) {
		tbl = page_address(mtt->pages[p]);
		if (p + 1 < mtt->n_mtt)
			tbl[DRAY_MTT_DATA_ENTRIES] = cpu_to_le64(mtt->dma[p + 1]);
		dma_sync_single_for_device(dma_dev, mtt->dma[p], DRAY_PAGE_SIZE,
					   DMA_TO_DEVICE);
	}
	return 0;
}

/**
 * dray_mtt_build() - describe a pinned buffer to the device
 * @dev: the device
 * @umem: the pinned buffer (user pages or a dma-buf); umem->iova must be
 *        set (ib_umem_get() sets it to the user address,
 *        ib_umem_find_best_pgsz() to the MR's iova)
 * @n_data: its number of 4 KiB blocks, ib_umem_num_dma_blocks(umem, 4K)
 * @mtt: receives the table; release with dray_mtt_free()
 *
 * Context: process, may sleep.
 * Return: 0, -ENOMEM, or -EIO if the umem does not hold @n_data blocks.
 */
int dray_mtt_build(struct dray_dev *dev, struct ib_umem *umem, u32 n_data,
		   struct dray_mtt *mtt)
{
	int ret;

	if (!n_data)
		return -EINVAL;
	mtt->n_data = n_data;
	mtt->n_mtt = DIV_ROUND_UP(n_data, DRAY_MTT_DATA_ENTRIES);
	mtt->pages = kvcalloc(mtt->n_mtt, sizeof(*mtt->pages), GFP_KERNEL);
	mtt->dma = kvcalloc(mtt->n_mtt, sizeof(*mtt->dma), GFP_KERNEL);
	if (!mtt->pages || !mtt->dma) {
		ret = -ENOMEM;
		goto free_arrays;
	}
	ret = mtt_alloc_pages(dev, mtt);
	if (ret)
		goto free_arrays;
	ret = mtt_fill(dev, umem, mtt);
	if (ret)
		goto free_pages;
	return 0;

free_pages:
	dray_mtt_free(dev, mtt);
	return ret;
free_arrays:
	kvfree(mtt->dma);
	kvfree(mtt->pages);
	return ret;
}

/**
 * dray_mtt_build_contig() - describe a bus-contiguous buffer to the device
 * @dev: the device
 * @dma: bus address of the buffer, 4 KiB aligned
 * @n_data: its number of 4 KiB pages
 * @mtt: receives the table; release with dray_mtt_free()
 *
 * Context: process, may sleep.
 * Return: 0, -EINVAL or -ENOMEM.
 */
int dray_mtt_build_contig(struct dray_dev *dev, dma_addr_t dma, u32 n_data,
			  struct dray_mtt *mtt)
{
	struct device *dma_dev = dray_dma_dev(dev);
	u32 i, p;
	int ret;

	if (!n_data || !IS_ALIGNED(dma, DRAY_PAGE_SIZE))
		return -EINVAL;
	mtt->n_data = n_data;
	mtt->n_mtt = DIV_ROUND_UP(n_data, DRAY_MTT_DATA_ENTRIES);
	mtt->pages = kvcalloc(mtt->n_mtt, sizeof(*mtt->pages), GFP_KERNEL);
	mtt->dma = kvcalloc(mtt->n_mtt, sizeof(*mtt->dma), GFP_KERNEL);
	if (!mtt->pages || !mtt->dma) {
		ret = -ENOMEM;
		goto free_arrays;
	}
	ret = mtt_alloc_pages(dev, mtt);
	if (ret)
		goto free_arrays;

	for (p = 0; p < mtt->n_mtt; p++) {
		__le64 *tbl = page_address(mtt->pages[p]);

		for (i = 0; i < DRAY_MTT_DATA_ENTRIES; i++) {
			u32 n = p * DRAY_MTT_DATA_ENTRIES + i;

			if (n == n_data)
				break;
			tbl[i] = cpu_to_le64(dma + ((u64)n << DRAY_PAGE_SHIFT));
		}
		if (p + 1 < mtt->n_mtt)
			tbl[DRAY_MTT_DATA_ENTRIES] = cpu_to_le64(mtt->dma[p + 1]);
		dma_sync_single_for_device(dma_dev, mtt->dma[p], DRAY_PAGE_SIZE,
					   DMA_TO_DEVICE);
	}
	return 0;

free_arrays:
	kvfree(mtt->dma);
	kvfree(mtt->pages);
	return ret;
}

/* Only after the command that handed the MTT to the device completed. */
void dray_mtt_free(struct dray_dev *dev, struct dray_mtt *mtt)
{
	struct device *dma_dev = dray_dma_dev(dev);
	u32 i;

	for (i = 0; i < mtt->n_mtt; i++) {
		dma_unmap_page(dma_dev, mtt->dma[i], DRAY_PAGE_SIZE,
			       DMA_TO_DEVICE);
		__free_page(mtt->pages[i]);
	}
	kvfree(mtt->dma);
	kvfree(mtt->pages);
}

/**
 * dray_queue_pin() - validate and pin a queue buffer from user space
 * @dev: the device
 * @what: the buffer's name for the debug log ("cq", "sq", "rq")
 * @addr: user address, 4 KiB aligned
 * @size: bytes the user says it allocated
 * @needed: bytes the queue uses: doorbell record plus entries
 * @n_pages: receives the number of 4 KiB pages to describe
 *
 * The buffer must cover @needed bytes and not more than the host pages
 * that holds them: pinning more than the queue can use is refused.
 *
 * Context: process, may sleep.
 * Return: the pinned umem, or an ERR_PTR: -EINVAL for a bad address or
 * size, or what ib_umem_get() returned (-ENOMEM over RLIMIT_MEMLOCK,
 * -EFAULT for an unmapped range, ...).
 */
struct ib_umem *dray_queue_pin(struct dray_dev *dev, const char *what,
			       u64 addr, u32 size, u64 needed, u32 *n_pages)
{
	struct ib_umem *umem;
	size_t blocks;

	if (!addr || !IS_ALIGNED(addr, DRAY_PAGE_SIZE)) {
		ddev_dbg_rl(dev, "%s buf_addr %#llx is not %u-byte aligned\n",
			    what, addr, DRAY_PAGE_SIZE);
		return ERR_PTR(-EINVAL);
	}
	if (size < needed || size > PAGE_ALIGN(needed)) {
		ddev_dbg_rl(dev, "%s buf_size %u must be in [%llu, %llu]\n",
			    what, size, needed, (u64)PAGE_ALIGN(needed));
		return ERR_PTR(-EINVAL);
	}

	/* The device writes consumer indexes and CQEs into queue buffers. */
	umem = ib_umem_get(&dev->ibdev, addr, size, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(umem)) {
		ddev_dbg_rl(dev, "%s buffer %#llx+%u: pinning failed (%ld)\n",
			    what, addr, size, PTR_ERR(umem));
		return umem;
	}
	blocks = ib_umem_num_dma_blocks(umem, DRAY_PAGE_SIZE);
	*n_pages = blocks;
	return umem;
}
