/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The bus between the dray driver and the dray NIC.
 *
 * This is everything the driver may use to reach the device, the
 * equivalent of a PCI function: 32-bit register access to BAR0, interrupt
 * vectors, and a struct device for the DMA API. Everything else goes
 * through host memory in the formats of include/dray/. A PCI front-end
 * would implement exactly this interface with readl/writel and MSI-X.
 *
 * Names: everything here is dray_bus_*. The NIC model's own names
 * (dray_hw_*, dray_xp_*, dray_xport_*, dray_ud_*, DRAY_HW_*) never appear
 * in the driver; scripts/check.sh enforces it.
 */
#ifndef DRAY_BUS_H
#define DRAY_BUS_H

#include <linux/types.h>

/* One NIC on the bus, as a PCI function would be: opaque to the driver. */
struct dray_bus_dev;
struct device;
struct net_device;

/*
 * Interrupt handler. Called in atomic context (bottom halves disabled),
 * never concurrently with itself for the same vector.
 */
typedef void (*dray_bus_irq_handler_t)(void *cookie);

/*
 * Register access. Context: any, except DRAY_REG_ENGINE_POLL and
 * DRAY_REG_ENGINE_CPU: process context only (moving the engine's thread
 * to another CPU may sleep).
 */
u32 dray_bus_readl(struct dray_bus_dev *bdev, u32 offset);
void dray_bus_writel(struct dray_bus_dev *bdev, u32 offset, u32 value);

int dray_bus_request_irq(struct dray_bus_dev *bdev, unsigned int vector,
			 dray_bus_irq_handler_t handler, void *cookie);
void dray_bus_free_irq(struct dray_bus_dev *bdev, unsigned int vector);

/*
 * Platform side, used only by the code that creates and removes NICs
 * (drv/main.c plays the role of the PCI core here).
 */
struct dray_bus_plat {
	struct net_device *ndev;	/* the Ethernet port */
	struct device *dma_dev;		/* bus addresses are for this device */
	/*
	 * Surprise removal: the port's netdev is going away. Called under
	 * RTNL; the NIC no longer touches the netdev's data path. The
	 * callee must arrange for dray_bus_destroy() soon (not from this
	 * context).
	 */
	void (*removed)(void *ctx);
	void *ctx;
};

struct dray_bus_dev *dray_bus_create(const struct dray_bus_plat *plat);
void dray_bus_destroy(struct dray_bus_dev *bdev);

#endif /* DRAY_BUS_H */
