/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared pieces of the dray selftests that use the kselftest harness:
 * the command helpers (iommufd style: _test_cmd_x() returns 0 or -errno,
 * test_cmd_x() asserts success, test_err_x() asserts one errno), bounded
 * polling, and the standard topology:
 *
 *	veth0 <-> veth1, both up; dray0 on veth0 (optional)
 *
 * Include after kselftest_harness.h. Setups first remove what an earlier
 * test may have left (a failing setup does not get its teardown in the
 * 6.1 harness), teardowns remove everything and check that nothing was
 * left behind. Teardowns use EXPECT only: a failing ASSERT there would
 * jump back into the harness and run the teardown again.
 */
#ifndef DRAY_SELFTEST_DRAY_TEST_H
#define DRAY_SELFTEST_DRAY_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "nl.h"
#include "util.h"

#define IBDEV		"dray0"
#define IBDEV2		"dray1"
#define NDEV0		"veth0"
#define NDEV1		"veth1"
#define BRIDGE		"br0"

/*
 * Upper bound for anything the kernel does asynchronously (GID table
 * updates, async events, removal after a netdev went away). Generous
 * for TCG; a passing test never waits this long.
 */
#define WAIT_MS		10000

/* Poll cond every 10 ms until it holds or ms passed; yields the last value. */
#define wait_until(cond, ms) ({						\
	uint64_t __deadline = now_ms() + (ms);				\
	bool __ok;							\
	for (;;) {							\
		__ok = (cond);						\
		if (__ok || now_ms() > __deadline)			\
			break;						\
		usleep(10000);						\
	}								\
	__ok;								\
})

#define test_cmd(_expr) do {						\
	int __ret = (_expr);						\
	ASSERT_EQ(0, __ret)						\
		TH_LOG("%s failed: %s", #_expr, strerror(-__ret));	\
} while (0)

#define test_err(_errno, _expr) do {					\
	int __ret = (_expr);						\
	ASSERT_EQ(-(_errno), __ret)					\
		TH_LOG("%s: expected %s, got %s", #_expr,		\
		       strerror(_errno),				\
		       __ret ? strerror(-__ret) : "success");		\
} while (0)

static inline int _test_cmd_link_add(const char *ibdev, const char *ndev)
{
	return rdma_nl_link_add(ibdev, "dray", ndev);
}

#define test_cmd_link_add(ibdev, ndev)					\
	test_cmd(_test_cmd_link_add(ibdev, ndev))
#define test_err_link_add(_errno, ibdev, ndev)				\
	test_err(_errno, _test_cmd_link_add(ibdev, ndev))
#define test_cmd_link_del(ibdev) test_cmd(rdma_nl_link_del(ibdev))

static inline bool ibdev_exists(const char *ibdev)
{
	return path_exists(SYSFS_IB "/%s", ibdev);
}

/*
 * Taint flags that mean the kernel complained: BAD_PAGE, DIE, WARN,
 * SOFTLOCKUP. A WARN_ONCE taints only the first time, so the test that
 * triggers it first is the one that fails.
 */
#define TAINT_PROBLEMS	((1UL << 5) | (1UL << 7) | (1UL << 9) | (1UL << 14))

/* Setup and teardown of one test run in the same (forked) process. */
static unsigned long dray_taint_at_setup;

static inline unsigned long kernel_taint(void)
{
	unsigned long t = 0;

	sysfs_read_ul(&t, "/proc/sys/kernel/tainted");
	return t;
}

/*
 * Start of every teardown. A failed ASSERT leaves the harness's
 * "trigger" set, which would print the log message of the next EXPECT
 * even if it holds.
 */
static inline void dray_teardown_begin(struct __test_metadata *_metadata)
{
	_metadata->trigger = 0;
}

/* The kernel did not WARN or oops since the setup. */
static inline void dray_check_taint(struct __test_metadata *_metadata)
{
	unsigned long fresh = kernel_taint() & ~dray_taint_at_setup &
			      TAINT_PROBLEMS;
	char what[512];

	if (fresh)
		kmsg_last_problem(what, sizeof(what));
	EXPECT_EQ(0UL, fresh)
		TH_LOG("the kernel complained during this test (new taint %#lx): %s",
		       fresh, what);
}

/* Names of dray's ib_devices and of its platform (bus) devices. */
static inline void dray_devices(char *ib, size_t iblen, char *plat,
				size_t platlen)
{
	dir_list(ib, iblen, SYSFS_IB, "dray");
	dir_list(plat, platlen, SYSFS_PLAT, "dray.");
}

/*
 * Remove every dray device and the test netdevs, whatever state an
 * earlier test left. Best effort, no assertions.
 */
static inline void dray_clean(void)
{
	char ib[1024], *name, *save = NULL;

	dir_list(ib, sizeof(ib), SYSFS_IB, "dray");
	for (name = strtok_r(ib, " ", &save); name;
	     name = strtok_r(NULL, " ", &save))
		rdma_nl_link_del(name);
	rt_link_del(NDEV0);		/* takes veth1 with it */
	rt_link_del(NDEV1);
	rt_link_del(BRIDGE);
}

/* modprobe dray unless it is loaded. */
static inline void dray_module_load(struct __test_metadata *_metadata)
{
	char out[1024];
	int ret;

	if (path_exists("/sys/module/dray"))
		return;
	ret = run_cmd(out, sizeof(out), "modprobe dray");
	ASSERT_EQ(0, ret) TH_LOG("modprobe dray: exit %d: %s", ret, out);
	ASSERT_TRUE(path_exists("/sys/module/dray"))
		TH_LOG("/sys/module/dray missing after modprobe");
}

/* veth0 <-> veth1, both up; with_dray: dray0 on veth0, port ACTIVE. */
static inline void dray_topo_setup(struct __test_metadata *_metadata,
				   bool with_dray)
{
	dray_taint_at_setup = kernel_taint();
	dray_clean();
	dray_module_load(_metadata);
	test_cmd(rt_veth_add(NDEV0, NDEV1));
	test_cmd(rt_link_set_up(NDEV0, true));
	test_cmd(rt_link_set_up(NDEV1, true));
	if (!with_dray)
		return;
	test_cmd_link_add(IBDEV, NDEV0);
	ASSERT_TRUE(ibdev_exists(IBDEV))
		TH_LOG("%s/%s missing after link add", SYSFS_IB, IBDEV);
}

/*
 * Remove the topology; expect no dray device to be left anywhere and no
 * kernel complaint. Call dray_teardown_begin() first.
 */
static inline void dray_topo_teardown(struct __test_metadata *_metadata)
{
	char ib[1024], plat[1024];

	dray_clean();
	/* Removal after a netdev went away is asynchronous. */
	wait_until((dray_devices(ib, sizeof(ib), plat, sizeof(plat)),
		    !ib[0] && !plat[0]), WAIT_MS);
	EXPECT_STREQ("", ib) TH_LOG("ib_devices left behind: %s", ib);
	EXPECT_STREQ("", plat) TH_LOG("platform devices left behind: %s",
				      plat);
	EXPECT_FALSE(path_exists(SYSFS_NET "/" NDEV0))
		TH_LOG("%s left behind", NDEV0);
	dray_check_taint(_metadata);
}

/*
 * libibverbs loads its providers once per process, which costs a few
 * hundred ms under TCG. Do it in the harness parent, before it forks a
 * child per test; the children only rescan sysfs for devices.
 */
static void __attribute__((constructor)) dray_ibv_warmup(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (list)
		ibv_free_device_list(list);
}

/* Open an ib_device by name through libibverbs and its provider. */
static inline struct ibv_context *
dray_ibv_open(struct __test_metadata *_metadata, const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	bool found = false;
	int i, n = 0, err = 0;

	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list) TH_LOG("ibv_get_device_list: %s",
				     strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		found = true;
		ctx = ibv_open_device(list[i]);
		err = errno;
		break;
	}
	ibv_free_device_list(list);
	ASSERT_TRUE(found) TH_LOG("libibverbs does not list %s (%d devices; is the dray provider found? RDMAV_DRIVERS / rdma-env.sh)",
				  name, n);
	ASSERT_NE(NULL, ctx) TH_LOG("ibv_open_device(%s): %s", name,
				    strerror(err));
	return ctx;
}

/*
 * Wait for the next port or device event on ctx's async fd, skipping
 * others (GID changes). Returns the event type, or -ETIMEDOUT.
 */
static inline int dray_next_port_event(struct ibv_context *ctx, int ms)
{
	uint64_t deadline = now_ms() + (uint64_t)ms;
	int flags = fcntl(ctx->async_fd, F_GETFL);

	fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	for (;;) {
		struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		uint64_t now = now_ms();
		int type;

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		if (type == IBV_EVENT_PORT_ACTIVE || type == IBV_EVENT_PORT_ERR ||
		    type == IBV_EVENT_DEVICE_FATAL)
			return type;
	}
}

#endif /* DRAY_SELFTEST_DRAY_TEST_H */
