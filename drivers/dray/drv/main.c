// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray: module entry, `rdma link add ... type dray`, and device life cycle.
 *
 * `rdma link add NAME type dray netdev IF` plugs in a new NIC: it creates
 * the NIC model on IF (the "hardware"), a platform device "dray.N" as its
 * bus device (the parent of the ib_device, whose modalias the provider
 * matches), then probes it like a PCI driver would and registers NAME.
 *
 * Removal always goes through ib_unregister_device*(); the core then calls
 * dray_dealloc_driver(), which tears down in reverse. Triggers:
 * `rdma link delete`, the netdev being unregistered (the NIC reports a
 * surprise removal), and module unload. Live user contexts are
 * disassociated (see dray_disassociate_ucontext), so unloading never waits
 * for user space.
 */

#include <linux/dma-mapping.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <rdma/rdma_netlink.h>

#include "dray.h"

MODULE_AUTHOR("dray developers");
MODULE_DESCRIPTION("dray RoCEv2 RDMA NIC");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK("dray");

/* All dray devices, including ones being added. */
/*
 * Read when a link is added. A small async EQ lets a test see events
 * lost to a full EQ (EQ_OVERRUN) without creating thousands of objects.
 */
static uint async_eq_log_depth = DRAY_ASYNC_EQ_LOG_DEPTH;
module_param(async_eq_log_depth, uint, 0644);
MODULE_PARM_DESC(async_eq_log_depth,
		 "log2 of the entries of a new link's async event queue (4..14, default 12)");

static LIST_HEAD(dray_devs);
static DEFINE_MUTEX(dray_devs_lock);
static struct workqueue_struct *dray_wq;

static void dray_unreg_work(struct work_struct *work)
{
	struct dray_dev *dev = container_of(work, struct dray_dev, unreg_work);
	struct ib_event ev = {
		.device = &dev->ibdev,
		.event = IB_EVENT_DEVICE_FATAL,
		.element.port_num = 1,
	};

	/*
	 * The port is gone for good. Say so to every consumer now, as a NIC
	 * reports a fatal error: unregistering calls the clients' remove
	 * callbacks one after the other, newest first, and uverbs, which
	 * tells user contexts, is among the oldest; a kernel ULP slow to
	 * drain would otherwise keep them waiting. The core delivers events
	 * from ib_wq: flushed, so that every handler has had this one before
	 * the first remove callback (unregistering flushes ib_wq too, later).
	 */
	ib_dispatch_event(&ev);
	flush_workqueue(ib_wq);
	ib_unregister_device(&dev->ibdev);
	put_device(&dev->ibdev.dev);
}

/* NIC callback: its netdev is being unregistered. Called under RTNL. */
static void dray_nic_removed(void *ctx)
{
	struct dray_dev *dev = ctx;

	set_bit(DRAY_DEV_REMOVED, &dev->flags);
	get_device(&dev->ibdev.dev);
	if (!queue_work(dray_wq, &dev->unreg_work))
		put_device(&dev->ibdev.dev);
}

/* Completion EQ depth: room for a few events per CQ the device allows. */
static u8 dray_comp_eq_log_depth(const struct dray_caps *caps)
{
	u64 events = (u64)caps->max_cq * DRAY_COMP_EQ_EVENTS_PER_CQ;

	return clamp_t(u64, order_base_2(events), DRAY_EQ_LOG_DEPTH_MIN,
		       DRAY_EQ_LOG_DEPTH_MAX);
}

/* Bring up the device behind dev->nic and learn what it can do. */
static int dray_probe(struct dray_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	int ret;

	/* Taken in the EQ handlers: with bottom halves off everywhere else. */
	xa_init_flags(&dev->cqs, XA_FLAGS_LOCK_BH);
	xa_init_flags(&dev->qps, XA_FLAGS_LOCK_BH);
	xa_init_flags(&dev->srqs, XA_FLAGS_LOCK_BH);
	dev->wq = alloc_ordered_workqueue("dray-%s", 0,
					  netdev_name(dev->ndev));
	if (!dev->wq)
		return -ENOMEM;

	ret = dray_aq_init(dev);
	if (ret)
		goto destroy_wq;
	ret = dray_admin_query_device(dev, &dev->caps);
	if (ret)
		goto destroy_aq;
	dev->dm_total = dray_dm_size();
	atomic64_set(&dev->dm_used, 0);
	ret = dray_eq_create(dev, &dev->async_eq,
			     clamp_t(uint, READ_ONCE(async_eq_log_depth),
				     DRAY_EQ_LOG_DEPTH_MIN,
				     DRAY_EQ_LOG_DEPTH_MAX),
			     DRAY_VEC_ASYNC);
	if (ret)
		goto destroy_aq;
	if (dev->async_eq.eqn != 0) {
		/* Port and QP events go to EQ 0: it must be the first EQ. */
		ibdev_err(ibdev, "async EQ got number %u\n", dev->async_eq.eqn);
		ret = -EIO;
		goto destroy_async_eq;
	}
	ret = dray_eq_create(dev, &dev->comp_eq,
			     dray_comp_eq_log_depth(&dev->caps), DRAY_VEC_COMP);
	if (ret)
		goto destroy_async_eq;
	ret = dray_kuar_create(dev);
	if (ret)
		goto destroy_comp_eq;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->node_guid = dev->caps.node_guid;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->local_dma_lkey = 0;
	ibdev->driver_def = dray_uapi_defs;
	strscpy(ibdev->node_desc, "dray", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &dray_dev_ops);
	ib_set_device_ops(ibdev, &dray_counter_ops);
	return 0;

destroy_comp_eq:
	dray_eq_destroy(dev, &dev->comp_eq);
	dray_eq_destroy(dev, &dev->async_eq);
	dray_aq_destroy(dev);
	dray_eq_free(dev, &dev->comp_eq);
	dray_eq_free(dev, &dev->async_eq);
	destroy_workqueue(dev->wq);
	return ret;
destroy_async_eq:
	dray_eq_destroy(dev, &dev->async_eq);
	dray_aq_destroy(dev);
	/* Only after the reset: until then the device may write the ring. */
	dray_eq_free(dev, &dev->async_eq);
	destroy_workqueue(dev->wq);
	return ret;
destroy_aq:
	dray_aq_destroy(dev);
destroy_wq:
	destroy_workqueue(dev->wq);
	return ret;
}

/*
 * Undo dray_probe(). Every verbs object is gone by now (the core destroys
 * them before dealloc_driver), except deferred destroys still queued.
 */
static void dray_unprobe(struct dray_dev *dev)
{
	destroy_workqueue(dev->wq);
	dray_kuar_destroy(dev);
	dray_eq_destroy(dev, &dev->comp_eq);
	dray_eq_destroy(dev, &dev->async_eq);
	/* The reset makes the device forget every object still left. */
	dray_aq_destroy(dev);
	dray_kuar_free(dev);
	dray_eq_free(dev, &dev->comp_eq);
	dray_eq_free(dev, &dev->async_eq);
	/* Only objects the core failed to destroy; it already complained. */
	if (!xa_empty(&dev->cqs) || !xa_empty(&dev->qps))
		ibdev_err(&dev->ibdev, "CQs or QPs left at removal\n");
	xa_destroy(&dev->cqs);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->srqs);
}

static void dray_unlist(struct dray_dev *dev)
{
	mutex_lock(&dray_devs_lock);
	list_del_init(&dev->list);
	mutex_unlock(&dray_devs_lock);
}

/* Undo everything dray_add() did; called by the core after unregister. */
static void dray_dealloc_driver(struct ib_device *ibdev)
{
	struct dray_dev *dev = to_ddev(ibdev);

	dray_unlist(dev);
	dray_sysfs_remove(dev);
	dray_unprobe(dev);
	dray_bus_destroy(dev->nic);
	platform_device_unregister(dev->pdev);
}

static const struct ib_device_ops dray_dealloc_ops = {
	.dealloc_driver = dray_dealloc_driver,
};

/* Create, probe and register a device that is already on dray_devs. */
static int dray_add(struct dray_dev *dev, const char *name)
{
	struct net_device *ndev = dev->ndev;
	struct dray_bus_plat plat = {};
	struct platform_device *pdev;
	int ret;

	pdev = platform_device_register_simple("dray", PLATFORM_DEVID_AUTO,
					       NULL, 0);
	if (IS_ERR(pdev)) {
		ret = PTR_ERR(pdev);
		goto unlist;
	}
	dev->pdev = pdev;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto unregister_pdev;
	dev->ibdev.dev.parent = &pdev->dev;

	plat.ndev = ndev;
	plat.dma_dev = &pdev->dev;
	plat.removed = dray_nic_removed;
	plat.ctx = dev;
	dev->nic = dray_bus_create(&plat);
	if (IS_ERR(dev->nic)) {
		ret = PTR_ERR(dev->nic);
		if (ret == -EBUSY)
			pr_err_ratelimited("dray: %s already has a receive handler (bridge or bond port?)\n",
					   netdev_name(ndev));
		goto unregister_pdev;
	}

	ret = dray_probe(dev);
	if (ret)
		goto destroy_hw;

	ret = dray_sysfs_add(dev);
	if (ret)
		goto unprobe;

	ret = ib_device_set_netdev(&dev->ibdev, ndev, 1);
	if (ret)
		goto unsysfs;

	/*
	 * From here on dray_dealloc_driver() owns the teardown, also when
	 * registration fails (ib_dealloc_device() calls it).
	 */
	ib_set_device_ops(&dev->ibdev, &dray_dealloc_ops);
	ret = ib_register_device(&dev->ibdev, name, &pdev->dev);
	if (ret) {
		ib_dealloc_device(&dev->ibdev);
		return ret;
	}
	/* The netdev went away while registering: finish the removal. */
	if (test_bit(DRAY_DEV_REMOVED, &dev->flags))
		dray_nic_removed(dev);
	return 0;

unsysfs:
	dray_sysfs_remove(dev);
unprobe:
	dray_unprobe(dev);
destroy_hw:
	dray_bus_destroy(dev->nic);
unregister_pdev:
	platform_device_unregister(pdev);
unlist:
	dray_unlist(dev);
	ib_dealloc_device(&dev->ibdev);
	return ret;
}

static int dray_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct dray_dev *dev, *other;
	struct ib_device *ibdev;

	if (ndev->type != ARPHRD_ETHER) {
		pr_err_ratelimited("dray: %s is not an Ethernet device\n",
				   netdev_name(ndev));
		return -EINVAL;
	}

	ibdev = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (ibdev) {
		ib_device_put(ibdev);
		pr_err_ratelimited("dray: device name %s is taken\n",
				   ibdev_name);
		return -EEXIST;
	}

	dev = ib_alloc_device(dray_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	INIT_WORK(&dev->unreg_work, dray_unreg_work);
	dev->ndev = ndev;

	/* Listed before it exists, so a second add on ndev sees it. */
	mutex_lock(&dray_devs_lock);
	list_for_each_entry(other, &dray_devs, list) {
		if (other->ndev == ndev) {
			mutex_unlock(&dray_devs_lock);
			pr_err_ratelimited("dray: %s already has a dray device\n",
					   netdev_name(ndev));
			ib_dealloc_device(&dev->ibdev);
			return -EEXIST;
		}
	}
	list_add_tail(&dev->list, &dray_devs);
	mutex_unlock(&dray_devs_lock);

	return dray_add(dev, ibdev_name);
}

static struct rdma_link_ops dray_link_ops = {
	.type = "dray",
	.newlink = dray_newlink,
};

static int __init dray_init(void)
{
	/*
	 * Not WQ_MEM_RECLAIM: unregistering flushes ib_core's workqueues,
	 * which are not reclaim-safe either.
	 */
	dray_wq = alloc_workqueue("dray", WQ_UNBOUND, 0);
	if (!dray_wq)
		return -ENOMEM;
	rdma_link_register(&dray_link_ops);
	return 0;
}

static void __exit dray_exit(void)
{
	struct dray_dev *dev;

	/* Waits for any newlink in progress; none can start after this. */
	rdma_link_unregister(&dray_link_ops);

	for (;;) {
		mutex_lock(&dray_devs_lock);
		dev = list_first_entry_or_null(&dray_devs, struct dray_dev,
					       list);
		if (dev)
			get_device(&dev->ibdev.dev);
		mutex_unlock(&dray_devs_lock);
		if (!dev)
			break;
		ib_unregister_device(&dev->ibdev);
		put_device(&dev->ibdev.dev);
	}
	/* Pending surprise-removal work only finds unregistered devices. */
	destroy_workqueue(dray_wq);
}

module_init(dray_init);
module_exit(dray_exit);
