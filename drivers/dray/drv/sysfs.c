// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray driver: the engine's polling settings as attributes of the
 * device's platform device, /sys/class/infiniband/<dev>/device/:
 *
 *   poll_idle_us  how long the NIC's engine thread keeps polling the
 *                 queues after its last work before it sleeps (0 to
 *                 1000000; the device's default is 5)
 *   poll_cpu      the CPU it runs on, or -1 for any (the default)
 *
 * Both are DRAY_REG_ENGINE_POLL and DRAY_REG_ENGINE_CPU
 * (Documentation/hw-interface.md); the device keeps them, so a read shows
 * what it took. Writable by root only.
 */

#include <linux/bitfield.h>
#include <linux/cpumask.h>
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/platform_device.h>
#include <linux/sysfs.h>

#include "dray.h"

static struct dray_dev *attr_to_ddev(struct device *d)
{
	return dev_get_drvdata(d);
}

static ssize_t poll_idle_us_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	u32 v = dray_bus_readl(attr_to_ddev(d)->nic, DRAY_REG_ENGINE_POLL);

	return sysfs_emit(buf, "%lu\n", FIELD_GET(DRAY_ENGINE_POLL_US_MASK, v));
}

static ssize_t poll_idle_us_store(struct device *d,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	u32 us;
	int ret;

	ret = kstrtou32(buf, 0, &us);
	if (ret)
		return ret;
	if (us > DRAY_ENGINE_POLL_MAX_US)
		return -EINVAL;
	dray_bus_writel(attr_to_ddev(d)->nic, DRAY_REG_ENGINE_POLL, us);
	return count;
}
static DEVICE_ATTR_RW(poll_idle_us);

static ssize_t poll_cpu_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	u32 v = dray_bus_readl(attr_to_ddev(d)->nic, DRAY_REG_ENGINE_CPU);

	if (!(v & DRAY_ENGINE_CPU_PIN))
		return sysfs_emit(buf, "-1\n");
	return sysfs_emit(buf, "%lu\n", FIELD_GET(DRAY_ENGINE_CPU_MASK, v));
}

static ssize_t poll_cpu_store(struct device *d, struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct dray_dev *dev = attr_to_ddev(d);
	u32 want;
	int cpu, ret;

	ret = kstrtoint(buf, 0, &cpu);
	if (ret)
		return ret;
	if (cpu == -1) {
		dray_bus_writel(dev->nic, DRAY_REG_ENGINE_CPU, 0);
		return count;
	}
	if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_online(cpu) ||
	    cpu > FIELD_MAX(DRAY_ENGINE_CPU_MASK))
		return -EINVAL;
	want = DRAY_ENGINE_CPU_PIN | FIELD_PREP(DRAY_ENGINE_CPU_MASK, cpu);
	dray_bus_writel(dev->nic, DRAY_REG_ENGINE_CPU, want);
	/* The CPU went offline meanwhile: the device kept what it had. */
	if (dray_bus_readl(dev->nic, DRAY_REG_ENGINE_CPU) != want)
		return -EINVAL;
	return count;
}
static DEVICE_ATTR_RW(poll_cpu);

static struct attribute *dray_attrs[] = {
	&dev_attr_poll_idle_us.attr,
	&dev_attr_poll_cpu.attr,
	NULL,
};

static const struct attribute_group dray_attr_group = {
	.attrs = dray_attrs,
};

int dray_sysfs_add(struct dray_dev *dev)
{
	dev_set_drvdata(&dev->pdev->dev, dev);
	return sysfs_create_group(&dev->pdev->dev.kobj, &dray_attr_group);
}

void dray_sysfs_remove(struct dray_dev *dev)
{
	/* Waits for readers and writers still in the attributes. */
	sysfs_remove_group(&dev->pdev->dev.kobj, &dray_attr_group);
}
