// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: what the kernel verbs share — the kernel consumers' doorbell
 * page (UAR), queue rings in kernel memory, and the engine wake-up.
 *
 * Kernel CQs and QPs use exactly the formats user queues use
 * (dray_queue.h): the driver plays the provider's part. Their rings are
 * DMA-coherent kernel memory described to the device by an MTT of
 * consecutive 4 KiB pages; all kernel QPs of a device share one UAR whose
 * NEED_WAKEUP flag tells a poster when to write DRAY_REG_ENGINE_KICK.
 */

#include <linux/dma-mapping.h>
#include <linux/mm.h>

#include "dray.h"

/*
 * The register is written from a work item when the poster runs with
 * interrupts off or in hard interrupt context: the bus's register access
 * must not be used there.
 */
static void dray_kick_work(struct work_struct *work)
{
	struct dray_dev *dev = container_of(work, struct dray_dev, kick_work);

	dray_engine_kick(dev, dev->kuar_index);
}

/**
 * dray_kick_if_idle() - wake the engine after posting, if it went idle
 * @dev: the device
 *
 * The same protocol as the provider's: the caller stored a producer
 * index; a full barrier orders that store before the NEED_WAKEUP load
 * (the engine sets the flag, issues a full barrier and reads every
 * doorbell record once more before it sleeps), so one side sees the
 * other.
 *
 * Context: any.
 */
void dray_kick_if_idle(struct dray_dev *dev)
{
	/* Producer index store before the NEED_WAKEUP load (see above). */
	mb();
	if (!(le32_to_cpu(READ_ONCE(dev->kuar->dev.flags)) &
	      DRAY_UAR_F_NEED_WAKEUP))
		return;
	if (in_hardirq() || irqs_disabled())
		queue_work(system_highpri_wq, &dev->kick_work);
	else
		dray_engine_kick(dev, dev->kuar_index);
}

/**
 * dray_kuar_create() - give the device the kernel consumers' UAR
 * @dev: the device
 *
 * Context: process (probe).
 * Return: 0 or a negative errno; nothing is left allocated on failure.
 */
int dray_kuar_create(struct dray_dev *dev)
{
	int ret;

	INIT_WORK(&dev->kick_work, dray_kick_work);
	/* Zeroed and page aligned, as CREATE_UAR requires. */
	dev->kuar = dma_alloc_coherent(dray_dma_dev(dev), DRAY_UAR_SIZE,
				       &dev->kuar_dma, GFP_KERNEL);
	if (!dev->kuar)
		return -ENOMEM;
	ret = dray_admin_create_uar(dev, dev->kuar_dma, &dev->kuar_index);
	if (ret) {
		dma_free_coherent(dray_dma_dev(dev), DRAY_UAR_SIZE, dev->kuar,
				  dev->kuar_dma);
		dev->kuar = NULL;
	}
	return ret;
}

/* Take the UAR from the device; its page is freed by dray_kuar_free(). */
void dray_kuar_destroy(struct dray_dev *dev)
{
	int ret;

	cancel_work_sync(&dev->kick_work);
	ret = dray_admin_destroy_uar(dev, dev->kuar_index);
	if (ret)
		ddev_err_rl(dev, "destroy kernel UAR %u failed: %d\n",
			    dev->kuar_index, ret);
}

/* Only once the device no longer writes the page (after its reset). */
void dray_kuar_free(struct dray_dev *dev)
{
	dma_free_coherent(dray_dma_dev(dev), DRAY_UAR_SIZE, dev->kuar,
			  dev->kuar_dma);
	dev->kuar = NULL;
}

/**
 * dray_kring_alloc() - allocate a zeroed queue buffer for a kernel queue
 * @dev: the device
 * @ring: receives the buffer
 * @bytes: doorbell record plus entries
 *
 * The buffer is physically contiguous (one coherent allocation), so very
 * deep kernel queues may fail with -ENOMEM.
 *
 * Context: process, may sleep.
 */
int dray_kring_alloc(struct dray_dev *dev, struct dray_kring *ring, u64 bytes)
{
	ring->size = PAGE_ALIGN(bytes);
	ring->va = dma_alloc_coherent(dray_dma_dev(dev), ring->size, &ring->dma,
				      GFP_KERNEL | __GFP_NOWARN);
	if (!ring->va) {
		ddev_dbg_rl(dev, "kernel ring of %zu bytes: no memory\n",
			    ring->size);
		return -ENOMEM;
	}
	return 0;
}

void dray_kring_free(struct dray_dev *dev, struct dray_kring *ring)
{
	if (ring->va)
		dma_free_coherent(dray_dma_dev(dev), ring->size, ring->va,
				  ring->dma);
	ring->va = NULL;
}

/**
 * dray_kring_mtt() - describe a kernel ring to the device
 * @dev: the device
 * @ring: the ring, from dray_kring_alloc()
 * @mtt: receives the table; free it with dray_mtt_free() after the
 *       create command completed
 *
 * Context: process, may sleep.
 */
int dray_kring_mtt(struct dray_dev *dev, const struct dray_kring *ring,
		   struct dray_mtt *mtt)
{
	return dray_mtt_build_contig(dev, ring->dma,
				     ring->size >> DRAY_PAGE_SHIFT, mtt);
}
