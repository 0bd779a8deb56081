/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bus between the dray driver and the dray NIC.
 *
 * This is everything the driver may use to reach the device, the
 * equivalent of a PCI function: 32-bit register access to BAR0, interrupt
 * vectors, and a struct device for the DMA API. Everything else goes
 * through host memory in the formats of include/dray/. A PCI front-end
 * would implement exactly this interface with readl/writel and MSI-X.
 */
#ifndef DRAY_BUS_H
#define DRAY_BUS_H

#include <linux/types.h>

struct dray_hw;
struct net_device;

/*
 * Interrupt handler. Called in atomic context (bottom halves disabled),
 * never concurrently with itself for the same vector.
 */
typedef void (*dray_irq_handler_t)(void *cookie);

u32 dray_hw_readl(struct dray_hw *hw, u32 offset);
void dray_hw_writel(struct dray_hw *hw, u32 offset, u32 value);

int dray_hw_request_irq(struct dray_hw *hw, unsigned int vector,
			dray_irq_handler_t handler, void *cookie);
void dray_hw_free_irq(struct dray_hw *hw, unsigned int vector);

/*
 * Platform side, used only by the code that creates and removes NICs
 * (drv/main.c plays the role of the PCI core here).
 */
struct dray_hw_plat {
	struct net_device *ndev;	/* the Ethernet port */
	struct device *dma_dev;		/* bus addresses are for this device */
	/*
	 * Surprise removal: the port's netdev is going away. Called under
	 * RTNL; the NIC no longer touches the netdev's data path. The
	 * callee must arrange for dray_hw_destroy() soon (not from this
	 * context).
	 */
	void (*removed)(void *ctx);
	void *ctx;
};

struct dray_hw *dray_hw_create(const struct dray_hw_plat *plat);
void dray_hw_destroy(struct dray_hw *hw);

#endif /* DRAY_BUS_H */
