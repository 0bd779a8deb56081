// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray device life cycle: removal by `rdma link delete`, by the netdev
 * going away and by module unload, also while another process holds a
 * context with its doorbell page mapped (the context is disassociated:
 * the holder gets IBV_EVENT_DEVICE_FATAL and can still clean up); and
 * 50 cycles each of link add/delete and of module load/unload that must
 * leave nothing behind (DRAY_LIFECYCLE_CYCLES sets fewer or more).
 */
#include <endian.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <dray/dray_uar.h>
#include <rdma/dray-abi.h>

#include "kselftest_harness.h"
#include "dray_test.h"

/*
 * Cycles of each loop: 50, or DRAY_LIFECYCLE_CYCLES (1 to 1000; the debug
 * kernel's lane asks for fewer: each module load there costs seconds).
 */
static int cycles(void)
{
	const char *s = getenv("DRAY_LIFECYCLE_CYCLES");
	char *end;
	long n;

	if (!s || !*s)
		return 50;
	n = strtol(s, &end, 10);
	return (*end || n < 1 || n > 1000) ? 50 : (int)n;
}

/*
 * A context holder in another process. It opens dray0 through
 * libibverbs (the provider maps its doorbell page) and through raw
 * uverbs (mapping the page itself), says 'R', waits for DEVICE_FATAL on
 * both, waits for the parent's 'G' (removal finished), then checks the
 * old mapping, unmaps and closes everything. It reports "OK" or a
 * failure message on its pipe.
 */
struct holder {
	pid_t pid;
	int go_w;	/* parent -> child */
	int rep_r;	/* child -> parent */
};

/* Child only: report and exit. Never ASSERT in the child. */
static void __attribute__((noreturn, format(printf, 2, 3)))
holder_fail(int wfd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	msg[0] = 'F';
	va_start(ap, fmt);
	n = vsnprintf(msg + 1, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(msg) - 2)
		n = (int)sizeof(msg) - 2;
	if (write(wfd, msg, (size_t)n + 1) < 0)
		_exit(2);
	_exit(1);
}

/* DEVICE_FATAL on a raw async event file, within ms. */
static int raw_wait_fatal(int afd, int ms)
{
	uint64_t deadline = now_ms() + (uint64_t)ms;

	fcntl(afd, F_SETFL, fcntl(afd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct pollfd pfd = { .fd = afd, .events = POLLIN };
		struct ib_uverbs_async_event_desc ev;
		uint64_t now = now_ms();

		if (now >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
			continue;
		if (read(afd, &ev, sizeof(ev)) != sizeof(ev))
			return -errno;
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			return 0;
	}
}

static void __attribute__((noreturn)) holder_main(int rfd, int wfd)
{
	struct ib_uverbs_get_context_resp core;
	struct dray_alloc_ucontext_resp drv;
	struct ibv_context *ctx = NULL;
	long page = sysconf(_SC_PAGESIZE);
	struct ibv_device **list;
	const struct dray_uar *uar;
	char path[64], go;
	int i, n, fd, ret, ev;
	void *p;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), IBDEV))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		holder_fail(wfd, "ibv_open_device(%s): %s", IBDEV,
			    strerror(errno));
	ret = uverbs_dev_path(IBDEV, path, sizeof(path));
	if (ret)
		holder_fail(wfd, "no uverbs device: %s", strerror(-ret));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		holder_fail(wfd, "open %s: %s", path, strerror(errno));
	ret = uverbs_get_context(fd, &core, &drv, sizeof(drv), NULL, 0);
	if (ret)
		holder_fail(wfd, "GET_CONTEXT: %s", strerror(-ret));
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)drv.db_mmap_key);
	if (p == MAP_FAILED)
		holder_fail(wfd, "mmap: %s", strerror(errno));
	uar = p;
	if (le32toh(uar->dev.magic) != DRAY_UAR_MAGIC)
		holder_fail(wfd, "doorbell page magic %#x",
			    le32toh(uar->dev.magic));
	if (write(wfd, "R", 1) != 1)
		_exit(2);

	/* Removal: the provider context and the raw one both hear of it. */
	do {
		ev = dray_next_port_event(ctx, 3 * WAIT_MS);
	} while (ev == IBV_EVENT_PORT_ERR || ev == IBV_EVENT_PORT_ACTIVE);
	if (ev != IBV_EVENT_DEVICE_FATAL)
		holder_fail(wfd, "libibverbs context: no DEVICE_FATAL (%d %s)",
			    ev, ev < 0 ? strerror(-ev) : ibv_event_type_str(ev));
	ret = raw_wait_fatal((int)core.async_fd, WAIT_MS);
	if (ret)
		holder_fail(wfd, "raw context: no DEVICE_FATAL: %s",
			    strerror(-ret));

	if (read(rfd, &go, 1) != 1)
		holder_fail(wfd, "parent went away");
	/* The device's page is no longer mapped: the zapped VMA reads 0. */
	if (le32toh(uar->dev.magic) != 0)
		holder_fail(wfd, "doorbell page still mapped after removal (magic %#x)",
			    le32toh(uar->dev.magic));
	if (munmap(p, (size_t)page))
		holder_fail(wfd, "munmap: %s", strerror(errno));
	if (close((int)core.async_fd))
		holder_fail(wfd, "close async fd: %s", strerror(errno));
	if (close(fd))
		holder_fail(wfd, "close uverbs fd: %s", strerror(errno));
	ret = ibv_close_device(ctx);
	if (ret)
		holder_fail(wfd, "ibv_close_device: %s", strerror(errno));
	ibv_free_device_list(list);
	if (maps_count("/dev/infiniband/uverbs"))
		holder_fail(wfd, "uverbs mappings left");
	if (write(wfd, "OK", 2) != 2)
		_exit(2);
	_exit(0);
}

/* Read up to len - 1 bytes until EOF or ms pass. */
static ssize_t read_timeout(int fd, char *buf, size_t len, int ms)
{
	uint64_t deadline = now_ms() + (uint64_t)ms;
	size_t used = 0;

	while (used + 1 < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ms();
		ssize_t n;

		if (now >= deadline ||
		    poll(&pfd, 1, (int)(deadline - now)) <= 0)
			break;
		n = read(fd, buf + used, len - used - 1);
		if (n <= 0)
			break;
		used += (size_t)n;
		if (buf[0] == 'R')	/* the ready byte comes alone */
			break;
	}
	buf[used] = '\0';
	return (ssize_t)used;
}

static void holder_start(struct __test_metadata *_metadata,
			 struct holder *h)
{
	int go[2], rep[2];
	char buf[512];

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC)) TH_LOG("pipe: %s", strerror(errno));
	ASSERT_EQ(0, pipe2(rep, O_CLOEXEC)) TH_LOG("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	h->pid = fork();
	ASSERT_LE(0, h->pid) TH_LOG("fork: %s", strerror(errno));
	if (!h->pid) {
		close(go[1]);
		close(rep[0]);
		holder_main(go[0], rep[1]);
	}
	close(go[0]);
	close(rep[1]);
	h->go_w = go[1];
	h->rep_r = rep[0];
	read_timeout(h->rep_r, buf, sizeof(buf), 3 * WAIT_MS);
	ASSERT_STREQ("R", buf) TH_LOG("holder did not get ready: %s",
				      buf[0] ? buf + 1 : "(silent)");
}

/* Tell the holder removal is done, collect its verdict. */
static void holder_finish(struct __test_metadata *_metadata,
			  struct holder *h)
{
	char buf[512];
	int status;

	ASSERT_EQ(1, write(h->go_w, "G", 1)) TH_LOG("holder gone");
	read_timeout(h->rep_r, buf, sizeof(buf), 4 * WAIT_MS);
	ASSERT_STREQ("OK", buf) TH_LOG("holder: %s",
				       buf[0] ? buf + 1 : "(silent)");
	ASSERT_EQ(h->pid, waitpid(h->pid, &status, 0)) TH_LOG("waitpid");
	h->pid = 0;
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("holder status %#x", status);
}

static void holder_cleanup(struct holder *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		waitpid(h->pid, NULL, 0);
	}
	if (h->go_w > 0)
		close(h->go_w);
	if (h->rep_r > 0)
		close(h->rep_r);
	memset(h, 0, sizeof(*h));
}

/* No dray device of any kind is left. */
static void check_no_devices(struct __test_metadata *_metadata)
{
	char ib[1024], plat[1024], uv[1024];

	dray_devices(ib, sizeof(ib), plat, sizeof(plat));
	dir_list(uv, sizeof(uv), "/sys/class/infiniband_verbs", "uverbs");
	EXPECT_STREQ("", ib) TH_LOG("ib_devices left: %s", ib);
	EXPECT_STREQ("", plat) TH_LOG("platform devices left: %s", plat);
	EXPECT_STREQ("", uv) TH_LOG("uverbs devices left: %s", uv);
}

/* The netdev is free of dray's rx_handler: a bridge can take it. */
static void check_bridgeable(struct __test_metadata *_metadata,
			     const char *ndev)
{
	if (!path_exists(SYSFS_NET "/" BRIDGE))
		test_cmd(rt_bridge_add(BRIDGE));
	test_cmd(rt_link_set_master(ndev, BRIDGE));
	test_cmd(rt_link_set_master(ndev, NULL));
}

static void module_unload(struct __test_metadata *_metadata, const char *cmd)
{
	char out[1024];
	int ret;

	ret = run_cmd(out, sizeof(out), "%s", cmd);
	ASSERT_EQ(0, ret) TH_LOG("%s: exit %d: %s", cmd, ret, out);
	ASSERT_FALSE(path_exists("/sys/module/dray"))
		TH_LOG("dray still loaded after %s", cmd);
}

FIXTURE(removal) {
	struct holder h;
};

FIXTURE_VARIANT(removal) {
	bool holder;
};

FIXTURE_VARIANT_ADD(removal, idle) {
	.holder = false,
};

FIXTURE_VARIANT_ADD(removal, context_held) {
	.holder = true,
};

FIXTURE_SETUP(removal)
{
	dray_topo_setup(_metadata, true);
	if (variant->holder)
		holder_start(_metadata, &self->h);
}

FIXTURE_TEARDOWN(removal)
{
	dray_teardown_begin(_metadata);
	holder_cleanup(&self->h);
	dray_topo_teardown(_metadata);
}

TEST_F(removal, link_delete)
{
	char out[1024];
	int ret;

	ret = run_cmd(out, sizeof(out), "rdma link delete %s", IBDEV);
	ASSERT_EQ(0, ret) TH_LOG("rdma link delete: exit %d: %s", ret, out);
	ASSERT_FALSE(ibdev_exists(IBDEV)) TH_LOG("%s still there", IBDEV);
	if (variant->holder)
		holder_finish(_metadata, &self->h);
	check_no_devices(_metadata);
	check_bridgeable(_metadata, NDEV0);
}

static void netdev_delete(struct __test_metadata *_metadata,
			  FIXTURE_DATA(removal) *self,
			  const FIXTURE_VARIANT(removal) *variant)
{
	char ib[1024], plat[1024];

	test_cmd(rt_link_del(NDEV0));
	/* The NIC reports a surprise removal; unregistering is deferred. */
	ASSERT_TRUE(wait_until((dray_devices(ib, sizeof(ib), plat,
					     sizeof(plat)),
				!ib[0] && !plat[0]), WAIT_MS))
		TH_LOG("after deleting %s: ib_devices [%s], platform [%s]",
		       NDEV0, ib, plat);
	if (variant->holder)
		holder_finish(_metadata, &self->h);
	check_no_devices(_metadata);
}

TEST_F(removal, netdev_delete)
{
	netdev_delete(_metadata, self, variant);
}

TEST_F(removal, rmmod)
{
	/* A second device, so unload has more than one to remove. */
	test_cmd_link_add(IBDEV2, NDEV1);
	module_unload(_metadata, "rmmod dray");
	if (variant->holder)
		holder_finish(_metadata, &self->h);
	check_no_devices(_metadata);
	check_bridgeable(_metadata, NDEV0);
	check_bridgeable(_metadata, NDEV1);
}

FIXTURE(cycles) {
	unsigned long ib_core_refcnt;
};

FIXTURE_SETUP(cycles)
{
	dray_topo_setup(_metadata, false);
}

FIXTURE_TEARDOWN(cycles)
{
	dray_teardown_begin(_metadata);
	dray_topo_teardown(_metadata);
}

/* What the cycles must leave: the state they started from. */
static void check_clean(struct __test_metadata *_metadata,
			unsigned long ib_core_refcnt)
{
	unsigned long refcnt;

	check_no_devices(_metadata);
	test_cmd(sysfs_read_ul(&refcnt, "/sys/module/ib_core/refcnt"));
	EXPECT_EQ(ib_core_refcnt, refcnt) TH_LOG("ib_core refcnt %lu, was %lu",
						 refcnt, ib_core_refcnt);
	check_bridgeable(_metadata, NDEV0);
}

/*
 * Every other cycle holds a context with its doorbell page mapped in
 * this process across the delete.
 */
TEST_F_TIMEOUT(cycles, link_add_delete, 300)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long refcnt0;
	int n = cycles();
	int i;

	test_cmd(sysfs_read_ul(&refcnt0, "/sys/module/ib_core/refcnt"));
	for (i = 0; i < n; i++) {
		struct ib_uverbs_get_context_resp core;
		struct dray_alloc_ucontext_resp drv;
		void *p = MAP_FAILED;
		char path[64];
		int fd = -1;

		test_cmd_link_add(IBDEV, NDEV0);
		ASSERT_TRUE(ibdev_exists(IBDEV)) TH_LOG("cycle %d: no %s", i,
							IBDEV);
		if (i % 2) {
			test_cmd(uverbs_dev_path(IBDEV, path, sizeof(path)));
			fd = open(path, O_RDWR | O_CLOEXEC);
			ASSERT_LE(0, fd) TH_LOG("cycle %d: open %s: %s", i,
						path, strerror(errno));
			test_cmd(uverbs_get_context(fd, &core, &drv,
						    sizeof(drv), NULL, 0));
			p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, (off_t)drv.db_mmap_key);
			ASSERT_NE(MAP_FAILED, p) TH_LOG("cycle %d: mmap: %s",
							i, strerror(errno));
		}
		test_cmd_link_del(IBDEV);
		ASSERT_FALSE(ibdev_exists(IBDEV))
			TH_LOG("cycle %d: %s still there", i, IBDEV);
		if (i % 2) {
			ASSERT_EQ(0, munmap(p, (size_t)page))
				TH_LOG("cycle %d: munmap", i);
			ASSERT_EQ(0, close((int)core.async_fd))
				TH_LOG("cycle %d: close async fd", i);
			ASSERT_EQ(0, close(fd)) TH_LOG("cycle %d: close", i);
		}
	}
	check_clean(_metadata, refcnt0);
}

/*
 * The netdev goes away while the RDMA core is still busy with it: GID
 * updates for addresses added just before and the port event of the
 * netdev going down are in flight when the device unregisters.
 */
TEST_F_TIMEOUT(cycles, netdev_delete_busy, 200)
{
	char ib[1024], plat[1024];
	unsigned long refcnt0;
	int n = cycles();
	int i;

	test_cmd(sysfs_read_ul(&refcnt0, "/sys/module/ib_core/refcnt"));
	for (i = 0; i < (n + 1) / 2; i++) {
		if (i) {
			test_cmd(rt_veth_add(NDEV0, NDEV1));
			test_cmd(rt_link_set_up(NDEV0, true));
			test_cmd(rt_link_set_up(NDEV1, true));
		}
		test_cmd_link_add(IBDEV, NDEV0);
		test_cmd(rt_addr_add(NDEV0, "10.1.2.3", 24));
		test_cmd(rt_addr_add(NDEV0, "2001:db8:1::3", 64));
		test_cmd(rt_link_del(NDEV0));
		ASSERT_TRUE(wait_until((dray_devices(ib, sizeof(ib), plat,
						     sizeof(plat)),
					!ib[0] && !plat[0]), WAIT_MS))
			TH_LOG("cycle %d: ib_devices [%s], platform [%s]", i,
			       ib, plat);
	}
	test_cmd(rt_veth_add(NDEV0, NDEV1));
	check_clean(_metadata, refcnt0);
}

TEST_F_TIMEOUT(cycles, module_load_unload, 400)
{
	unsigned long refcnt0;
	char out[1024];
	int n = cycles();
	int i, ret;

	if (path_exists("/sys/module/dray"))
		module_unload(_metadata, "modprobe -r dray");
	test_cmd(sysfs_read_ul(&refcnt0, "/sys/module/ib_core/refcnt"));
	for (i = 0; i < n; i++) {
		ret = run_cmd(out, sizeof(out), "modprobe dray");
		ASSERT_EQ(0, ret) TH_LOG("cycle %d: modprobe dray: exit %d: %s",
					 i, ret, out);
		test_cmd_link_add(IBDEV, NDEV0);
		ASSERT_TRUE(ibdev_exists(IBDEV)) TH_LOG("cycle %d: no %s", i,
							IBDEV);
		module_unload(_metadata, "modprobe -r dray");
		ASSERT_FALSE(ibdev_exists(IBDEV))
			TH_LOG("cycle %d: %s outlived the module", i, IBDEV);
	}
	check_clean(_metadata, refcnt0);
}

TEST_HARNESS_MAIN
