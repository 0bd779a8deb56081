// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray device attributes: after `modprobe dray`, a veth pair and
 * `rdma link add dray0 type dray netdev veth0`, dray0 shows up in sysfs,
 * in `rdma link show` and through libibverbs with the documented
 * identity, limits and port attributes.
 */
#include <dirent.h>
#include <endian.h>
#include <libgen.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "dray_test.h"

/* The device's documented limits (Documentation, drivers/dray/dev/dev.h). */
#define DRAY_VENDOR_ID		0x1af4U
#define DRAY_VENDOR_PART_ID	0xd7a1U
#define DRAY_FW_VER		"1.0.0"
#define DRAY_MAX_QP		1024
#define DRAY_MAX_QP_WR		16384
#define DRAY_MAX_SGE		16
#define DRAY_MAX_CQ		2048
/* A 2^22-entry ring keeps one slot free: 4194303 usable CQEs. */
#define DRAY_MAX_CQE		4194303
#define DRAY_MAX_MR		16384
#define DRAY_MAX_PD		4096
#define DRAY_MAX_MR_SIZE	(1ULL << 36)
#define DRAY_MAX_QP_RD_ATOM	128
#define DRAY_GID_TBL_LEN	128U

/* Modified EUI-64 of the MAC, in network order as verbs report GUIDs. */
static __be64 mac_to_guid(const uint8_t mac[6])
{
	uint8_t g[8] = {
		mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4],
		mac[5],
	};
	__be64 guid;

	memcpy(&guid, g, sizeof(guid));
	return guid;
}

FIXTURE(device) {
	struct ibv_context *ctx;
	uint8_t mac[6];
};

FIXTURE_SETUP(device)
{
	dray_topo_setup(_metadata, true);
	test_cmd(netdev_mac(NDEV0, self->mac));
	self->ctx = dray_ibv_open(_metadata, IBDEV);
}

FIXTURE_TEARDOWN(device)
{
	dray_teardown_begin(_metadata);
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx))
			TH_LOG("ibv_close_device: %s", strerror(errno));
	dray_topo_teardown(_metadata);
}

TEST_F(device, sysfs)
{
	char buf[256], link[PATH_MAX], want[64];
	__be64 guid = mac_to_guid(self->mac);
	uint8_t *g = (uint8_t *)&guid;
	ssize_t n;

	ASSERT_TRUE(ibdev_exists(IBDEV)) TH_LOG("%s/%s missing", SYSFS_IB,
						IBDEV);
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/device/modalias",
			    IBDEV));
	EXPECT_STREQ("platform:dray", buf)
		TH_LOG("the provider matches the parent's modalias");

	/* The parent is a platform device dray.N on the platform bus. */
	n = readlink(SYSFS_IB "/" IBDEV "/device", link, sizeof(link) - 1);
	ASSERT_LT(0, n) TH_LOG("readlink device: %s", strerror(errno));
	link[n] = '\0';
	EXPECT_EQ(0, strncmp(basename(link), "dray.", 5))
		TH_LOG("parent device is %s, want dray.N", link);
	EXPECT_TRUE(path_exists(SYSFS_PLAT "/%s", basename(link)))
		TH_LOG("%s not on the platform bus", basename(link));

	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/node_type", IBDEV));
	EXPECT_STREQ("1: CA", buf) TH_LOG("node_type");
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/fw_ver", IBDEV));
	EXPECT_STREQ(DRAY_FW_VER, buf) TH_LOG("fw_ver");
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/node_guid", IBDEV));
	snprintf(want, sizeof(want), "%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
	EXPECT_STREQ(want, buf) TH_LOG("node_guid is the EUI-64 of %s's MAC",
				       NDEV0);
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/link_layer",
			    IBDEV));
	EXPECT_STREQ("Ethernet", buf) TH_LOG("link_layer");
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/state",
			    IBDEV));
	EXPECT_STREQ("4: ACTIVE", buf) TH_LOG("port state");
	test_cmd(sysfs_read(buf, sizeof(buf), SYSFS_IB "/%s/ports/1/phys_state",
			    IBDEV));
	EXPECT_STREQ("5: LinkUp", buf) TH_LOG("port phys_state");
	EXPECT_FALSE(path_exists(SYSFS_IB "/%s/ports/2", IBDEV))
		TH_LOG("one port only");
}

/* Write @val to the attribute @name of dray0's device: 0 or -errno. */
static int attr_write(const char *name, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), SYSFS_IB "/" IBDEV "/device/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Cpus_allowed_list of the engine thread of NDEV0 ("dray-eng/veth0"). */
static int engine_cpus(char *out, size_t len)
{
	char comm[64], status[4096], *p;
	struct dirent *e;
	DIR *d = opendir("/proc");
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while (ret == -ENOENT && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
		    sysfs_read(comm, sizeof(comm), "/proc/%s/comm", e->d_name) ||
		    strcmp(comm, "dray-eng/" NDEV0) ||
		    sysfs_read(status, sizeof(status), "/proc/%s/status",
			       e->d_name))
			continue;
		p = strstr(status, "Cpus_allowed_list:");
		if (!p)
			break;
		p += strlen("Cpus_allowed_list:");
		p += strspn(p, " \t");
		snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
		ret = 0;
	}
	closedir(d);
	return ret;
}

/*
 * The engine's polling settings (DRAY_REG_ENGINE_POLL and _CPU): the
 * defaults, values taken and read back, bad ones refused with EINVAL and
 * leaving the value as it was, the thread pinned and let go.
 */
/* dray0's device attribute @_name reads @_want. */
#define EXPECT_ATTR(_name, _want) do {					\
	char _v[64];							\
									\
	test_cmd(sysfs_read(_v, sizeof(_v),				\
			    SYSFS_IB "/" IBDEV "/device/%s", _name));	\
	EXPECT_STREQ(_want, _v) TH_LOG("%s", _name);			\
} while (0)

TEST_F(device, engine_poll)
{
	const char *bad_us[] = { "1000001", "-1", "abc", "\n" };
	char buf[64], all[64], over[16];
	size_t i;

	/* the defaults: 5 us, the thread on any CPU */
	EXPECT_ATTR("poll_idle_us", "5");
	EXPECT_ATTR("poll_cpu", "-1");
	test_cmd(engine_cpus(all, sizeof(all)));

	EXPECT_EQ(0, attr_write("poll_idle_us", "1000000"));
	for (i = 0; i < sizeof(bad_us) / sizeof(bad_us[0]); i++) {
		const char *v = bad_us[i];

		EXPECT_EQ(-EINVAL, attr_write("poll_idle_us", v))
			TH_LOG("poll_idle_us \"%s\"", v);
	}
	/* kept after the refused writes */
	EXPECT_ATTR("poll_idle_us", "1000000");
	EXPECT_EQ(0, attr_write("poll_idle_us", "0"));
	EXPECT_ATTR("poll_idle_us", "0");

	EXPECT_EQ(0, attr_write("poll_cpu", "0"));
	EXPECT_ATTR("poll_cpu", "0");
	test_cmd(engine_cpus(buf, sizeof(buf)));
	EXPECT_STREQ("0", buf) TH_LOG("the thread pinned to CPU 0");
	snprintf(over, sizeof(over), "%ld", sysconf(_SC_NPROCESSORS_CONF));
	EXPECT_EQ(-EINVAL, attr_write("poll_cpu", over)) TH_LOG("CPU %s", over);
	EXPECT_EQ(-EINVAL, attr_write("poll_cpu", "-2"));
	EXPECT_EQ(-EINVAL, attr_write("poll_cpu", "65536"));
	EXPECT_ATTR("poll_cpu", "0");
	EXPECT_EQ(0, attr_write("poll_cpu", "-1"));
	EXPECT_ATTR("poll_cpu", "-1");
	test_cmd(engine_cpus(buf, sizeof(buf)));
	EXPECT_STREQ(all, buf) TH_LOG("the thread on every CPU again");
	EXPECT_EQ(0, attr_write("poll_idle_us", "5"));
}

TEST_F(device, rdma_link_show)
{
	char out[1024];
	int ret;

	ret = run_cmd(out, sizeof(out), "rdma link show %s/1", IBDEV);
	ASSERT_EQ(0, ret) TH_LOG("rdma link show: exit %d: %s", ret, out);
	EXPECT_NE(NULL, strstr(out, "link " IBDEV "/1 "))
		TH_LOG("rdma link show: %s", out);
	EXPECT_NE(NULL, strstr(out, "netdev " NDEV0))
		TH_LOG("rdma link show: %s", out);
	EXPECT_NE(NULL, strstr(out, "state ACTIVE"))
		TH_LOG("rdma link show: %s", out);
}

TEST_F(device, device_list)
{
	struct ibv_device **list, *dev = NULL;
	int i, n = 0;

	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list) TH_LOG("ibv_get_device_list: %s",
				     strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), IBDEV))
			dev = list[i];
	ASSERT_NE(NULL, dev) TH_LOG("%s not listed", IBDEV);
	EXPECT_EQ(IBV_NODE_CA, dev->node_type)
		TH_LOG("node type %s", ibv_node_type_str(dev->node_type));
	EXPECT_EQ(IBV_TRANSPORT_IB, dev->transport_type)
		TH_LOG("transport %d", dev->transport_type);
	EXPECT_EQ(mac_to_guid(self->mac), ibv_get_device_guid(dev))
		TH_LOG("device GUID %#llx",
		       (unsigned long long)be64toh(ibv_get_device_guid(dev)));
	ibv_free_device_list(list);
}

TEST_F(device, query_device)
{
	struct ibv_device_attr a;
	__be64 guid = mac_to_guid(self->mac);

	memset(&a, 0xa5, sizeof(a));	/* no field may stay uninitialised */
	test_cmd(-ibv_query_device(self->ctx, &a));
	EXPECT_STREQ(DRAY_FW_VER, a.fw_ver) TH_LOG("fw_ver");
	EXPECT_EQ(DRAY_VENDOR_ID, a.vendor_id) TH_LOG("vendor_id %#x",
						      a.vendor_id);
	EXPECT_EQ(DRAY_VENDOR_PART_ID, a.vendor_part_id)
		TH_LOG("vendor_part_id %#x", a.vendor_part_id);
	EXPECT_EQ(guid, a.node_guid)
		TH_LOG("node_guid %#llx, want the EUI-64 of %s's MAC %#llx",
		       (unsigned long long)be64toh(a.node_guid), NDEV0,
		       (unsigned long long)be64toh(guid));
	EXPECT_EQ(guid, a.sys_image_guid) TH_LOG("sys_image_guid %#llx",
		  (unsigned long long)be64toh(a.sys_image_guid));
	EXPECT_EQ(1, a.phys_port_cnt) TH_LOG("phys_port_cnt");

	EXPECT_EQ(DRAY_MAX_QP, a.max_qp) TH_LOG("max_qp");
	EXPECT_EQ(DRAY_MAX_QP_WR, a.max_qp_wr) TH_LOG("max_qp_wr");
	EXPECT_EQ(DRAY_MAX_SGE, a.max_sge) TH_LOG("max_sge");
	EXPECT_EQ(DRAY_MAX_CQ, a.max_cq) TH_LOG("max_cq");
	EXPECT_EQ(DRAY_MAX_CQE, a.max_cqe) TH_LOG("max_cqe");
	EXPECT_EQ(DRAY_MAX_MR, a.max_mr) TH_LOG("max_mr");
	EXPECT_EQ(DRAY_MAX_PD, a.max_pd) TH_LOG("max_pd");
	EXPECT_EQ(DRAY_MAX_MR_SIZE, a.max_mr_size) TH_LOG("max_mr_size %#llx",
		  (unsigned long long)a.max_mr_size);
	EXPECT_EQ(DRAY_MAX_QP_RD_ATOM, a.max_qp_rd_atom)
		TH_LOG("max_qp_rd_atom");
	EXPECT_EQ(DRAY_MAX_QP_RD_ATOM, a.max_qp_init_rd_atom)
		TH_LOG("max_qp_init_rd_atom");
	EXPECT_EQ(1, a.max_pkeys) TH_LOG("max_pkeys");
}

TEST_F(device, query_port)
{
	struct ibv_port_attr p;
	unsigned long mtu;

	test_cmd(sysfs_read_ul(&mtu, SYSFS_NET "/%s/mtu", NDEV0));
	ASSERT_EQ(1500UL, mtu) TH_LOG("%s must start at the default MTU", NDEV0);

	memset(&p, 0xa5, sizeof(p));
	test_cmd(-ibv_query_port(self->ctx, 1, &p));
	EXPECT_EQ(IBV_PORT_ACTIVE, (int)p.state)
		TH_LOG("state %s", ibv_port_state_str(p.state));
	EXPECT_EQ(5, p.phys_state) TH_LOG("phys_state %u (5 = LINK_UP)",
					  p.phys_state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, p.link_layer)
		TH_LOG("link_layer %u", p.link_layer);
	EXPECT_EQ(DRAY_GID_TBL_LEN, p.gid_tbl_len) TH_LOG("gid_tbl_len");
	EXPECT_EQ(IBV_MTU_4096, (int)p.max_mtu) TH_LOG("max_mtu %d", p.max_mtu);
	EXPECT_EQ(IBV_MTU_1024, (int)p.active_mtu)
		TH_LOG("active_mtu %d at netdev MTU 1500", p.active_mtu);
	EXPECT_EQ(1, p.pkey_tbl_len) TH_LOG("pkey_tbl_len");

	/* There is no port 2. */
	EXPECT_NE(0, ibv_query_port(self->ctx, 2, &p))
		TH_LOG("ibv_query_port(2) succeeded");
}

TEST_HARNESS_MAIN
