// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray_dmabuf_exp: a test exporter of dma-bufs for tests/rdma/dmabuf.c.
 *
 * It hands out memory that no exporter of the test kernel (Debian 6.1:
 * vgem, no udmabuf, no dma-buf heaps, no PCI_P2PDMA) gives an importer:
 *
 *   DRAY_EXP_BAR     the memory BAR of a PCI device of the system, at its
 *                    bus address, without struct pages: what an exporter
 *                    of a peer's memory (a GPU's VRAM) hands an importer
 *                    that allows peer-to-peer. It is never mapped for the
 *                    CPU, and nothing here reads or writes it.
 *   DRAY_EXP_MIXED   host RAM pages, the last page such a BAR page.
 *   DRAY_EXP_CONTIG  one physically contiguous allocation of host RAM
 *                    that is not a compound page, as dma_alloc_coherent()
 *                    makes them without CMA (videobuf2-dma-contig exports
 *                    those): its tail pages have a reference count of 0.
 *                    It can be mapped for the CPU.
 *
 * Each page is one scatterlist entry. A BAR is only used if none of its
 * pages is RAM (pfn_valid()), so the test's premise holds. Like a real
 * peer-to-peer exporter, mapping BAR memory is refused to an importer
 * that does not allow peer-to-peer.
 *
 * /dev/dray_dmabuf_exp: DRAY_EXP_IOC_CREATE makes a dma-buf and returns
 * its fd; DRAY_EXP_IOC_STATS counts live attachments and mappings and
 * names the device that attached last (see dmabuf_exp.h).
 */

#include <linux/atomic.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fcntl.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dmabuf_exp.h"

#define EXP_MAX_SIZE	(4UL << 20)	/* RAM kinds: one allocation */

struct exp_buf {
	u32		kind;
	u32		n_pages;
	u32		n_ram;		/* RAM pages, first */
	struct page	*ram;		/* their allocation (non-compound) */
	unsigned int	order;
	u64		bar;		/* bus address of the BAR pages */
};

static atomic_t exp_attachments = ATOMIC_INIT(0);
static atomic_t exp_mappings = ATOMIC_INIT(0);
static atomic64_t exp_maps = ATOMIC64_INIT(0);
static DEFINE_MUTEX(exp_last_lock);
static char exp_last_dev[32];

static int exp_attach(struct dma_buf *dmabuf,
		      struct dma_buf_attachment *attach)
{
	mutex_lock(&exp_last_lock);
	strscpy(exp_last_dev, dev_name(attach->dev), sizeof(exp_last_dev));
	mutex_unlock(&exp_last_lock);
	atomic_inc(&exp_attachments);
	return 0;
}

static void exp_detach(struct dma_buf *dmabuf,
		       struct dma_buf_attachment *attach)
{
	atomic_dec(&exp_attachments);
}

static void exp_unmap_ram(struct dma_buf_attachment *attach,
			  struct sg_table *sgt, u32 n,
			  enum dma_data_direction dir)
{
	struct scatterlist *sg;
	u32 i;

	for_each_sgtable_sg(sgt, sg, i) {
		if (i == n)
			break;
		dma_unmap_page(attach->dev, sg_dma_address(sg), PAGE_SIZE, dir);
	}
}

static struct sg_table *exp_map(struct dma_buf_attachment *attach,
				enum dma_data_direction dir)
{
	struct exp_buf *buf = attach->dmabuf->priv;
	struct scatterlist *sg;
	struct sg_table *sgt;
	u32 i;

	if (buf->n_ram < buf->n_pages && !attach->peer2peer)
		return ERR_PTR(-EOPNOTSUPP);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	if (sg_alloc_table(sgt, buf->n_pages, GFP_KERNEL)) {
		kfree(sgt);
		return ERR_PTR(-ENOMEM);
	}
	for_each_sgtable_sg(sgt, sg, i) {
		if (i < buf->n_ram) {
			dma_addr_t dma;

			sg_set_page(sg, buf->ram + i, PAGE_SIZE, 0);
			dma = dma_map_page(attach->dev, buf->ram + i, 0,
					   PAGE_SIZE, dir);
			if (dma_mapping_error(attach->dev, dma)) {
				exp_unmap_ram(attach, sgt, i, dir);
				sg_free_table(sgt);
				kfree(sgt);
				return ERR_PTR(-ENOMEM);
			}
			sg_dma_address(sg) = dma;
		} else {
			/* A peer's memory: a bus address, no page. */
			sg_dma_address(sg) = buf->bar +
				(u64)(i - buf->n_ram) * PAGE_SIZE;
		}
		sg_dma_len(sg) = PAGE_SIZE;
	}
	atomic_inc(&exp_mappings);
	atomic64_inc(&exp_maps);
	return sgt;
}

static void exp_unmap(struct dma_buf_attachment *attach,
		      struct sg_table *sgt, enum dma_data_direction dir)
{
	struct exp_buf *buf = attach->dmabuf->priv;

	exp_unmap_ram(attach, sgt, buf->n_ram, dir);
	sg_free_table(sgt);
	kfree(sgt);
	atomic_dec(&exp_mappings);
}

static void exp_release(struct dma_buf *dmabuf)
{
	struct exp_buf *buf = dmabuf->priv;

	if (buf->ram)
		__free_pages(buf->ram, buf->order);
	kfree(buf);
}

/* Only RAM is mapped for the CPU; a BAR never is. */
static int exp_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct exp_buf *buf = dmabuf->priv;

	if (buf->kind != DRAY_EXP_CONTIG)
		return -ENODEV;
	return remap_pfn_range(vma, vma->vm_start,
			       page_to_pfn(buf->ram) + vma->vm_pgoff,
			       vma->vm_end - vma->vm_start, vma->vm_page_prot);
}

static const struct dma_buf_ops exp_ops = {
	.attach = exp_attach,
	.detach = exp_detach,
	.map_dma_buf = exp_map,
	.unmap_dma_buf = exp_unmap,
	.release = exp_release,
	.mmap = exp_mmap,
};

/* No page of [bus, bus + len) is RAM. */
static bool exp_not_ram(u64 bus, u64 len)
{
	u64 pfn;

	for (pfn = PHYS_PFN(bus); pfn < PHYS_PFN(bus + len); pfn++)
		if (pfn_valid(pfn))
			return false;
	return true;
}

/* The bus address of a PCI memory BAR of @len bytes or more, not RAM. */
static int exp_find_bar(u64 len, u64 *bus)
{
	struct pci_dev *pdev = NULL;
	int bar;

	for_each_pci_dev(pdev) {
		for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
			u64 start = pci_bus_address(pdev, bar);

			if (!(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
			    pci_resource_len(pdev, bar) < len ||
			    !PAGE_ALIGNED(start) || !exp_not_ram(start, len))
				continue;
			pr_info("dray_dmabuf_exp: %s BAR %d at bus address %#llx\n",
				pci_name(pdev), bar, start);
			*bus = start;
			pci_dev_put(pdev);
			return 0;
		}
	}
	return -ENODEV;
}

static int exp_create(struct dray_exp_create *c)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dmabuf;
	struct exp_buf *buf;
	int ret, fd;

	if (c->flags || c->reserved || !c->size ||
	    !PAGE_ALIGNED(c->size) || c->size > EXP_MAX_SIZE)
		return -EINVAL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	buf->kind = c->kind;
	buf->n_pages = c->size >> PAGE_SHIFT;
	switch (c->kind) {
	case DRAY_EXP_BAR:
		buf->n_ram = 0;
		break;
	case DRAY_EXP_MIXED:
		if (buf->n_pages < 2) {
			ret = -EINVAL;
			goto free_buf;
		}
		buf->n_ram = buf->n_pages - 1;
		break;
	case DRAY_EXP_CONTIG:
		buf->n_ram = buf->n_pages;
		break;
	default:
		ret = -EINVAL;
		goto free_buf;
	}
	if (buf->n_ram < buf->n_pages) {
		ret = exp_find_bar((u64)(buf->n_pages - buf->n_ram) << PAGE_SHIFT,
				   &buf->bar);
		if (ret)
			goto free_buf;
	}
	if (buf->n_ram) {
		/* No __GFP_COMP: tail pages without a reference count. */
		buf->order = get_order((size_t)buf->n_ram << PAGE_SHIFT);
		buf->ram = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				       buf->order);
		if (!buf->ram) {
			ret = -ENOMEM;
			goto free_buf;
		}
	}

	info.ops = &exp_ops;
	info.size = c->size;
	info.flags = O_RDWR;
	info.priv = buf;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto free_ram;
	}
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);	/* releases buf */
		return fd;
	}
	c->fd = fd;
	c->bar_addr = buf->n_ram < buf->n_pages ? buf->bar : 0;
	return 0;

free_ram:
	if (buf->ram)
		__free_pages(buf->ram, buf->order);
free_buf:
	kfree(buf);
	return ret;
}

static long exp_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case DRAY_EXP_IOC_CREATE: {
		struct dray_exp_create c;
		int ret;

		if (copy_from_user(&c, uarg, sizeof(c)))
			return -EFAULT;
		ret = exp_create(&c);
		if (ret)
			return ret;
		/* On a fault the fd stays open: the process closes it. */
		return copy_to_user(uarg, &c, sizeof(c)) ? -EFAULT : 0;
	}
	case DRAY_EXP_IOC_STATS: {
		struct dray_exp_stats s = {
			.attachments = atomic_read(&exp_attachments),
			.mappings = atomic_read(&exp_mappings),
			.maps = atomic64_read(&exp_maps),
		};

		mutex_lock(&exp_last_lock);
		strscpy(s.last_dev, exp_last_dev, sizeof(s.last_dev));
		mutex_unlock(&exp_last_lock);
		return copy_to_user(uarg, &s, sizeof(s)) ? -EFAULT : 0;
	}
	default:
		return -ENOTTY;
	}
}

static const struct file_operations exp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = exp_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice exp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "dray_dmabuf_exp",
	.fops = &exp_fops,
	.mode = 0600,
};

module_misc_device(exp_misc);

MODULE_DESCRIPTION("dray test exporter of dma-bufs (peer BAR and contiguous RAM)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
