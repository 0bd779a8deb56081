// SPDX-License-Identifier: GPL-2.0-only
/*
 * `rdma link add ... type dray` with bad input fails with the documented
 * errno and leaves nothing behind; `rdma link delete` releases the netdev.
 *
 * Every case runs twice: through raw RDMA netlink (exact errno) and
 * through the iproute2 `rdma` tool (exit status and its error message).
 */
#include "kselftest_harness.h"
#include "dray_test.h"

FIXTURE(link) {
	char ib[1024];		/* snapshot of all ib_devices */
	char plat[1024];	/* snapshot of dray platform devices */
	char uverbs[1024];	/* snapshot of uverbs devices */
};

FIXTURE_VARIANT(link) {
	bool tool;
};

FIXTURE_VARIANT_ADD(link, netlink) {
	.tool = false,
};

FIXTURE_VARIANT_ADD(link, rdma_tool) {
	.tool = true,
};

FIXTURE_SETUP(link)
{
	dray_topo_setup(_metadata, false);
}

FIXTURE_TEARDOWN(link)
{
	dray_teardown_begin(_metadata);
	dray_topo_teardown(_metadata);
}

static void snapshot(FIXTURE_DATA(link) *self)
{
	dir_list(self->ib, sizeof(self->ib), SYSFS_IB, "");
	dir_list(self->plat, sizeof(self->plat), SYSFS_PLAT, "dray.");
	dir_list(self->uverbs, sizeof(self->uverbs),
		 "/sys/class/infiniband_verbs", "uverbs");
}

/* Nothing appeared or disappeared since snapshot(). */
static void check_unchanged(struct __test_metadata *_metadata,
			    FIXTURE_DATA(link) *self, const char *what)
{
	FIXTURE_DATA(link) now;

	snapshot(&now);
	EXPECT_STREQ(self->ib, now.ib)
		TH_LOG("%s: ib_devices were [%s], now [%s]", what, self->ib,
		       now.ib);
	EXPECT_STREQ(self->plat, now.plat)
		TH_LOG("%s: platform devices were [%s], now [%s]", what,
		       self->plat, now.plat);
	EXPECT_STREQ(self->uverbs, now.uverbs)
		TH_LOG("%s: uverbs devices were [%s], now [%s]", what,
		       self->uverbs, now.uverbs);
}

/*
 * `rdma link add ibdev type dray netdev ndev` must fail with _errno:
 * netlink returns it, the tool exits non-zero and prints strerror().
 */
static void link_add_fails(struct __test_metadata *_metadata,
			   const FIXTURE_VARIANT(link) *variant,
			   FIXTURE_DATA(link) *self, int _errno,
			   const char *ibdev, const char *ndev)
{
	char what[128], out[1024];
	int ret;

	snprintf(what, sizeof(what), "link add %s netdev %s", ibdev, ndev);
	snapshot(self);
	if (variant->tool) {
		ret = run_cmd(out, sizeof(out),
			      "rdma link add %s type dray netdev %s", ibdev,
			      ndev);
		EXPECT_NE(0, ret) TH_LOG("rdma %s succeeded: %s", what, out);
		EXPECT_NE(NULL, strstr(out, strerror(_errno)))
			TH_LOG("rdma %s: exit %d, said \"%s\", want \"%s\"",
			       what, ret, out, strerror(_errno));
	} else {
		test_err_link_add(_errno, ibdev, ndev);
	}
	check_unchanged(_metadata, self, what);
}

static void link_add(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(link) *variant,
		     const char *ibdev, const char *ndev)
{
	char out[1024];
	int ret;

	if (variant->tool) {
		ret = run_cmd(out, sizeof(out),
			      "rdma link add %s type dray netdev %s", ibdev,
			      ndev);
		ASSERT_EQ(0, ret) TH_LOG("rdma link add %s netdev %s: exit %d: %s",
					 ibdev, ndev, ret, out);
	} else {
		test_cmd_link_add(ibdev, ndev);
	}
	ASSERT_TRUE(ibdev_exists(ibdev)) TH_LOG("%s missing after link add",
						ibdev);
}

static void link_del(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(link) *variant, const char *ibdev)
{
	char out[1024];
	int ret;

	if (variant->tool) {
		ret = run_cmd(out, sizeof(out), "rdma link delete %s", ibdev);
		ASSERT_EQ(0, ret) TH_LOG("rdma link delete %s: exit %d: %s",
					 ibdev, ret, out);
	} else {
		test_cmd_link_del(ibdev);
	}
	/* Deletion is synchronous: gone when the command returns. */
	ASSERT_FALSE(ibdev_exists(ibdev)) TH_LOG("%s still there after delete",
						 ibdev);
}

TEST_F(link, unknown_netdev)
{
	ASSERT_FALSE(path_exists(SYSFS_NET "/nosuchdev0"))
		TH_LOG("nosuchdev0 exists");
	link_add_fails(_metadata, variant, self, ENODEV, IBDEV, "nosuchdev0");
	/* The name was not kept. */
	link_add(_metadata, variant, IBDEV, NDEV0);
}

TEST_F(link, not_ethernet)
{
	link_add_fails(_metadata, variant, self, EINVAL, IBDEV, "lo");
	link_add(_metadata, variant, IBDEV, NDEV0);
}

TEST_F(link, netdev_taken)
{
	link_add(_metadata, variant, IBDEV, NDEV0);
	link_add_fails(_metadata, variant, self, EEXIST, IBDEV2, NDEV0);
	/* The existing device was not disturbed. */
	EXPECT_TRUE(path_exists(SYSFS_IB "/%s/ports/1", IBDEV))
		TH_LOG("%s damaged", IBDEV);
	/* The rejected name is free for another netdev. */
	link_add(_metadata, variant, IBDEV2, NDEV1);
}

TEST_F(link, name_taken)
{
	link_add(_metadata, variant, IBDEV, NDEV0);
	link_add_fails(_metadata, variant, self, EEXIST, IBDEV, NDEV1);
	/* veth1 was not claimed by the failed attempt. */
	link_add(_metadata, variant, IBDEV2, NDEV1);
}

/* A bridge port already has an rx_handler; dray needs its own. */
TEST_F(link, bridge_port)
{
	test_cmd(rt_bridge_add(BRIDGE));
	test_cmd(rt_link_set_master(NDEV1, BRIDGE));
	link_add_fails(_metadata, variant, self, EBUSY, IBDEV2, NDEV1);
	/* The port is still the bridge's, and dray can have it afterwards. */
	test_cmd(rt_link_set_master(NDEV1, NULL));
	test_cmd(rt_link_set_master(NDEV1, BRIDGE));
	test_cmd(rt_link_set_master(NDEV1, NULL));
	link_add(_metadata, variant, IBDEV2, NDEV1);
}

/*
 * While dray owns veth0 the bridge cannot take it (one rx_handler per
 * netdev); `rdma link delete` gives it back.
 */
TEST_F(link, delete_frees_netdev)
{
	char ib[1024], plat[1024];

	test_cmd(rt_bridge_add(BRIDGE));
	link_add(_metadata, variant, IBDEV, NDEV0);
	test_err(EBUSY, rt_link_set_master(NDEV0, BRIDGE));
	link_del(_metadata, variant, IBDEV);
	dray_devices(ib, sizeof(ib), plat, sizeof(plat));
	EXPECT_STREQ("", ib) TH_LOG("ib_devices left: %s", ib);
	EXPECT_STREQ("", plat) TH_LOG("platform devices left: %s", plat);
	test_cmd(rt_link_set_master(NDEV0, BRIDGE));
	test_cmd(rt_link_set_master(NDEV0, NULL));
	/* And dray can take it again. */
	link_add(_metadata, variant, IBDEV, NDEV0);
}

TEST_HARNESS_MAIN
