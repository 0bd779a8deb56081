// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray port attributes follow the netdev: active MTU from the netdev MTU,
 * port and physical state from administrative state and carrier (with
 * PORT_ERR / PORT_ACTIVE async events), and RoCEv2 GIDs for the
 * link-local and every IPv4/IPv6 address.
 *
 * Everything the kernel does asynchronously is polled with a bounded
 * timeout (WAIT_MS); no sleep decides a result.
 */
#include <arpa/inet.h>
#include <net/if.h>

#include "kselftest_harness.h"
#include "dray_test.h"

#define ROCE_OVERHEAD	96	/* Ethernet MTU minus the RoCEv2 headers */

enum {
	PHYS_POLLING	= 2,
	PHYS_DISABLED	= 3,
	PHYS_LINK_UP	= 5,
};

/* Largest IB MTU that fits netdev_mtu - 96, at least 256. */
static enum ibv_mtu expected_ib_mtu(unsigned int eth_mtu)
{
	unsigned int payload = eth_mtu > ROCE_OVERHEAD ?
			       eth_mtu - ROCE_OVERHEAD : 0;

	if (payload >= 4096)
		return IBV_MTU_4096;
	if (payload >= 2048)
		return IBV_MTU_2048;
	if (payload >= 1024)
		return IBV_MTU_1024;
	if (payload >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

static int query_port(struct ibv_context *ctx, struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	return -ibv_query_port(ctx, 1, p);
}

static bool port_is(struct ibv_context *ctx, enum ibv_port_state state,
		    unsigned int phys, struct ibv_port_attr *p)
{
	return !query_port(ctx, p) && p->state == state &&
	       p->phys_state == phys;
}

static bool mtu_is(struct ibv_context *ctx, enum ibv_mtu mtu,
		   struct ibv_port_attr *p)
{
	return !query_port(ctx, p) && p->active_mtu == mtu;
}

FIXTURE(port) {
	struct ibv_context *ctx;
	uint8_t mac[6];
};

FIXTURE_SETUP(port)
{
	dray_topo_setup(_metadata, true);
	test_cmd(netdev_mac(NDEV0, self->mac));
	self->ctx = dray_ibv_open(_metadata, IBDEV);
}

FIXTURE_TEARDOWN(port)
{
	dray_teardown_begin(_metadata);
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx))
			TH_LOG("ibv_close_device: %s", strerror(errno));
	dray_topo_teardown(_metadata);
}

TEST_F(port, mtu)
{
	/* Every boundary of the formula, both sides; veth allows 68..65535. */
	static const unsigned int mtus[] = {
		9000, 4192, 4191, 4000, 2144, 2143, 1500, 1120, 1119, 700,
		608, 607, 300, 68, 65535, 1500,
	};
	struct ibv_port_attr p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mtus); i++) {
		enum ibv_mtu want = expected_ib_mtu(mtus[i]);

		test_cmd(rt_link_set_mtu(NDEV0, mtus[i]));
		ASSERT_TRUE(wait_until(mtu_is(self->ctx, want, &p), WAIT_MS))
			TH_LOG("netdev MTU %u: active_mtu %d, want %d",
			       mtus[i], p.active_mtu, want);
		EXPECT_EQ(IBV_MTU_4096, (int)p.max_mtu)
			TH_LOG("max_mtu %d at netdev MTU %u", p.max_mtu,
			       mtus[i]);
		EXPECT_EQ(IBV_PORT_ACTIVE, (int)p.state)
			TH_LOG("MTU change %u took the port down", mtus[i]);
	}
	ASSERT_EQ(IBV_MTU_1024, (int)p.active_mtu) TH_LOG("back at 1500");
}

/* veth1 down: no carrier on veth0; veth0 down: administratively down. */
TEST_F(port, carrier)
{
	struct ibv_port_attr p;
	char buf[64];
	int ev;

	test_cmd(rt_link_set_up(NDEV1, false));
	ev = dray_next_port_event(self->ctx, WAIT_MS);
	ASSERT_EQ(IBV_EVENT_PORT_ERR, ev)
		TH_LOG("after carrier loss: event %d (%s)", ev,
		       ev < 0 ? strerror(-ev) : ibv_event_type_str(ev));
	ASSERT_TRUE(wait_until(port_is(self->ctx, IBV_PORT_DOWN, PHYS_POLLING,
				       &p), WAIT_MS))
		TH_LOG("no carrier: state %s phys %u, want DOWN/POLLING",
		       ibv_port_state_str(p.state), p.phys_state);
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/state",
			    IBDEV));
	EXPECT_STREQ("1: DOWN", buf) TH_LOG("sysfs state");
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/phys_state",
			    IBDEV));
	EXPECT_STREQ("2: Polling", buf) TH_LOG("sysfs phys_state");

	test_cmd(rt_link_set_up(NDEV0, false));
	ASSERT_TRUE(wait_until(port_is(self->ctx, IBV_PORT_DOWN, PHYS_DISABLED,
				       &p), WAIT_MS))
		TH_LOG("%s down: state %s phys %u, want DOWN/DISABLED", NDEV0,
		       ibv_port_state_str(p.state), p.phys_state);
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/phys_state",
			    IBDEV));
	EXPECT_STREQ("3: Disabled", buf) TH_LOG("sysfs phys_state");

	/* Up again, still no peer: polling, and no PORT_ACTIVE yet. */
	test_cmd(rt_link_set_up(NDEV0, true));
	ASSERT_TRUE(wait_until(port_is(self->ctx, IBV_PORT_DOWN, PHYS_POLLING,
				       &p), WAIT_MS))
		TH_LOG("%s up, peer down: state %s phys %u", NDEV0,
		       ibv_port_state_str(p.state), p.phys_state);

	test_cmd(rt_link_set_up(NDEV1, true));
	ev = dray_next_port_event(self->ctx, WAIT_MS);
	ASSERT_EQ(IBV_EVENT_PORT_ACTIVE, ev)
		TH_LOG("after carrier came back: event %d (%s)", ev,
		       ev < 0 ? strerror(-ev) : ibv_event_type_str(ev));
	ASSERT_TRUE(wait_until(port_is(self->ctx, IBV_PORT_ACTIVE, PHYS_LINK_UP,
				       &p), WAIT_MS))
		TH_LOG("link up: state %s phys %u, want ACTIVE/LINK_UP",
		       ibv_port_state_str(p.state), p.phys_state);
}

/* Port events reach every open context. */
TEST_F(port, events_all_contexts)
{
	struct ibv_context *ctx2 = dray_ibv_open(_metadata, IBDEV);
	int ev;

	test_cmd(rt_link_set_up(NDEV0, false));
	ev = dray_next_port_event(self->ctx, WAIT_MS);
	EXPECT_EQ(IBV_EVENT_PORT_ERR, ev) TH_LOG("context 1: event %d", ev);
	ev = dray_next_port_event(ctx2, WAIT_MS);
	EXPECT_EQ(IBV_EVENT_PORT_ERR, ev) TH_LOG("context 2: event %d", ev);

	test_cmd(rt_link_set_up(NDEV0, true));
	ev = dray_next_port_event(self->ctx, WAIT_MS);
	EXPECT_EQ(IBV_EVENT_PORT_ACTIVE, ev) TH_LOG("context 1: event %d", ev);
	ev = dray_next_port_event(ctx2, WAIT_MS);
	EXPECT_EQ(IBV_EVENT_PORT_ACTIVE, ev) TH_LOG("context 2: event %d", ev);
	EXPECT_EQ(0, ibv_close_device(ctx2)) TH_LOG("close context 2");
}

/*
 * The GID at index idx is gid, of type RoCE v2 on veth0, in sysfs and
 * through verbs.
 */
static void check_gid(struct __test_metadata *_metadata,
		      struct ibv_context *ctx, int idx, const uint8_t gid[16])
{
	struct ibv_gid_entry entry;
	union ibv_gid vgid;
	char buf[64];

	test_cmd(sysfs_read(buf, sizeof(buf),
			    SYSFS_IB "/%s/ports/1/gid_attrs/types/%d", IBDEV,
			    idx));
	EXPECT_STREQ("RoCE v2", buf) TH_LOG("type of GID %d", idx);
	test_cmd(sysfs_read(buf, sizeof(buf),
			    SYSFS_IB "/%s/ports/1/gid_attrs/ndevs/%d", IBDEV,
			    idx));
	EXPECT_STREQ(NDEV0, buf) TH_LOG("netdev of GID %d", idx);

	test_cmd(-ibv_query_gid(ctx, 1, idx, &vgid));
	EXPECT_EQ(0, memcmp(vgid.raw, gid, 16))
		TH_LOG("ibv_query_gid(%d) differs from sysfs", idx);
	test_cmd(-ibv_query_gid_ex(ctx, 1, (uint32_t)idx, &entry, 0));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, (int)entry.gid_type)
		TH_LOG("ibv_query_gid_ex(%d) gid_type %u", idx, entry.gid_type);
	EXPECT_EQ(if_nametoindex(NDEV0), entry.ndev_ifindex)
		TH_LOG("ibv_query_gid_ex(%d) ndev_ifindex %u", idx,
		       entry.ndev_ifindex);
}

static void addr_to_gid(const char *addr, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (inet_pton(AF_INET, addr, gid + 12) == 1) {
		gid[10] = 0xff;
		gid[11] = 0xff;
	} else {
		inet_pton(AF_INET6, addr, gid);
	}
}

TEST_F(port, gid_link_local)
{
	uint8_t gid[16] = { 0xfe, 0x80 };
	char s[64];
	int idx;

	/* fe80::/64 with the modified EUI-64 of the MAC */
	gid[8] = self->mac[0] ^ 0x02;
	gid[9] = self->mac[1];
	gid[10] = self->mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = self->mac[3];
	gid[14] = self->mac[4];
	gid[15] = self->mac[5];
	gid_fmt(gid, s, sizeof(s));

	ASSERT_TRUE(wait_until((idx = gid_find_raw(IBDEV, gid, 128)) >= 0,
			       WAIT_MS))
		TH_LOG("link-local GID %s not in the table", s);
	check_gid(_metadata, self->ctx, idx, gid);
}

/* Add an address: its GID appears; delete it: the GID goes away. */
static void gid_follows_addr(struct __test_metadata *_metadata,
			     struct ibv_context *ctx, const char *addr,
			     unsigned int prefix)
{
	uint8_t gid[16];
	char buf[64];
	int idx;

	addr_to_gid(addr, gid);
	ASSERT_EQ(-ENOENT, gid_find_addr(IBDEV, addr, 128))
		TH_LOG("GID of %s present before the address", addr);
	test_cmd(rt_addr_add(NDEV0, addr, prefix));
	ASSERT_TRUE(wait_until((idx = gid_find_addr(IBDEV, addr, 128)) >= 0,
			       WAIT_MS))
		TH_LOG("no GID for %s/%u after adding it", addr, prefix);
	check_gid(_metadata, ctx, idx, gid);

	test_cmd(rt_addr_del(NDEV0, addr, prefix));
	ASSERT_TRUE(wait_until(gid_find_addr(IBDEV, addr, 128) == -ENOENT,
			       WAIT_MS))
		TH_LOG("GID of %s still present after deleting it", addr);
	/* The freed entry is empty: reading its type fails. */
	EXPECT_NE(0, sysfs_read(buf, sizeof(buf),
				SYSFS_IB "/%s/ports/1/gid_attrs/types/%d",
				IBDEV, idx))
		TH_LOG("GID index %d still has type %s after the delete", idx,
		       buf);
}

TEST_F(port, gid_ipv4)
{
	gid_follows_addr(_metadata, self->ctx, "10.1.2.3", 24);
}

TEST_F(port, gid_ipv6)
{
	gid_follows_addr(_metadata, self->ctx, "2001:db8:1::3", 64);
}

/*
 * Two addresses, two GIDs; deleting one leaves the other. (Different
 * subnets: deleting a primary IPv4 address also deletes its secondaries.)
 */
TEST_F(port, gid_two_addrs)
{
	int a, b;

	test_cmd(rt_addr_add(NDEV0, "10.1.2.3", 24));
	test_cmd(rt_addr_add(NDEV0, "10.1.3.4", 24));
	ASSERT_TRUE(wait_until((a = gid_find_addr(IBDEV, "10.1.2.3", 128)) >= 0 &&
			       (b = gid_find_addr(IBDEV, "10.1.3.4", 128)) >= 0,
			       WAIT_MS))
		TH_LOG("GIDs of 10.1.2.3 and 10.1.3.4 not both present");
	EXPECT_NE(a, b) TH_LOG("two addresses share GID index %d", a);
	test_cmd(rt_addr_del(NDEV0, "10.1.2.3", 24));
	ASSERT_TRUE(wait_until(gid_find_addr(IBDEV, "10.1.2.3", 128) == -ENOENT,
			       WAIT_MS))
		TH_LOG("GID of 10.1.2.3 still present");
	EXPECT_EQ(b, gid_find_addr(IBDEV, "10.1.3.4", 128))
		TH_LOG("GID of 10.1.3.4 moved or vanished");
}

TEST_HARNESS_MAIN
