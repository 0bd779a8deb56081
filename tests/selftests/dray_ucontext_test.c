// SPDX-License-Identifier: GPL-2.0-only
/*
 * dray user contexts and the doorbell page, through raw uverbs: the
 * legacy write() command GET_CONTEXT on /dev/infiniband/uverbsN and mmap
 * on the same file, as include/uapi/rdma/dray-abi.h describes them. Also
 * the provider's open/close path through libibverbs.
 */
#include <endian.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <dray/dray_uar.h>
#include <rdma/dray-abi.h>

#include "kselftest_harness.h"
#include "dray_test.h"

#define DRAY_MAX_UAR		256	/* the device's UARs */
/* One per user context; the driver keeps one for kernel consumers. */
#define DRAY_USER_UAR		(DRAY_MAX_UAR - 1)
#define DRAY_MAX_SGE		16U
#define DRAY_MAX_INLINE		256U
#define MAX_FDS			(DRAY_MAX_UAR + 8)
#define CANARY			0xa5

/* offsetofend(struct dray_alloc_ucontext_resp, db_page_size) */
#define DRAY_RESP_MIN							\
	(offsetof(struct dray_alloc_ucontext_resp, db_page_size) +	\
	 sizeof(((struct dray_alloc_ucontext_resp *)0)->db_page_size))

/* One uverbs file with (maybe) a context on it. */
struct uctx {
	int fd;
	int async_fd;
	struct ib_uverbs_get_context_resp core;
	struct dray_alloc_ucontext_resp drv;
};

static int _test_cmd_get_context(struct uctx *u)
{
	int ret;

	memset(&u->drv, CANARY, sizeof(u->drv));
	ret = uverbs_get_context(u->fd, &u->core, &u->drv, sizeof(u->drv),
				 NULL, 0);
	if (!ret)
		u->async_fd = (int)u->core.async_fd;
	return ret;
}

#define test_cmd_get_context(u) test_cmd(_test_cmd_get_context(u))
#define test_err_get_context(_errno, u)					\
	test_err(_errno, _test_cmd_get_context(u))

/*
 * mmap on a uverbs file that must fail with _errno and leave no mapping
 * of the file behind.
 */
#define test_err_mmap(_errno, _fd, _len, _prot, _flags, _off) do {	\
	int __before = maps_count("/dev/infiniband/uverbs");		\
	void *__p = mmap(NULL, _len, _prot, _flags, _fd, (off_t)(_off));	\
	int __err = errno;						\
	if (__p != MAP_FAILED)						\
		munmap(__p, _len);					\
	ASSERT_EQ(MAP_FAILED, __p)					\
		TH_LOG("mmap(len %#zx, prot %#x, flags %#x, off %#llx) succeeded", \
		       (size_t)(_len), _prot, _flags,			\
		       (unsigned long long)(_off));			\
	ASSERT_EQ(_errno, __err)					\
		TH_LOG("mmap(len %#zx, prot %#x, flags %#x, off %#llx): %s, want %s", \
		       (size_t)(_len), _prot, _flags,			\
		       (unsigned long long)(_off), strerror(__err),	\
		       strerror(_errno));				\
	ASSERT_EQ(__before, maps_count("/dev/infiniband/uverbs"))	\
		TH_LOG("a failed mmap left a mapping");			\
} while (0)

FIXTURE(ucontext) {
	char path[64];
	long page;
	struct uctx u[MAX_FDS];
	int n;		/* u[0..n-1] are open */
};

static struct uctx *uctx_open(struct __test_metadata *_metadata,
			      FIXTURE_DATA(ucontext) *self)
{
	struct uctx *u;

	ASSERT_GT(MAX_FDS, self->n) TH_LOG("too many uverbs files");
	u = &self->u[self->n];
	u->async_fd = -1;
	u->fd = open(self->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, u->fd) TH_LOG("open %s: %s", self->path, strerror(errno));
	self->n++;
	return u;
}

static void uctx_close(struct uctx *u)
{
	if (u->async_fd >= 0)
		close(u->async_fd);
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	u->async_fd = -1;
}

static void *map_db(struct uctx *u, long page, int *err)
{
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
		       u->fd, (off_t)u->drv.db_mmap_key);

	*err = errno;
	return p;
}

/* The device area of a mapped doorbell page says which UAR it is. */
static void check_db_page(struct __test_metadata *_metadata,
			  const struct uctx *u, const void *p)
{
	const struct dray_uar *uar = p;

	ASSERT_EQ(DRAY_UAR_MAGIC, le32toh(uar->dev.magic))
		TH_LOG("doorbell page magic %#x", le32toh(uar->dev.magic));
	ASSERT_EQ(u->drv.uar_index, le32toh(uar->dev.index))
		TH_LOG("doorbell page index %u, context has UAR %u",
		       le32toh(uar->dev.index), u->drv.uar_index);
}

static int open_fds(void)
{
	char list[4096];
	int n = 0;
	char *c;

	dir_list(list, sizeof(list), "/proc/self/fd", "");
	for (c = list; *c; c++)
		n += *c == ' ';
	return list[0] ? n + 1 : 0;
}

FIXTURE_SETUP(ucontext)
{
	struct rlimit rl;

	dray_topo_setup(_metadata, true);
	self->page = sysconf(_SC_PAGESIZE);
	test_cmd(uverbs_dev_path(IBDEV, self->path, sizeof(self->path)));
	/* Two descriptors per context (uverbs file and async event file). */
	test_cmd(getrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0);
	if (rl.rlim_cur < 4 * MAX_FDS) {
		rl.rlim_cur = 4 * MAX_FDS;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		test_cmd(setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0);
	}
}

FIXTURE_TEARDOWN(ucontext)
{
	int i;

	dray_teardown_begin(_metadata);
	for (i = 0; i < self->n; i++)
		uctx_close(&self->u[i]);
	self->n = 0;
	EXPECT_EQ(0, maps_count("/dev/infiniband/uverbs"))
		TH_LOG("doorbell mappings left");
	dray_topo_teardown(_metadata);
}

TEST_F(ucontext, get_context)
{
	struct uctx *u = uctx_open(_metadata, self);
	unsigned char canary[16], expect[16];

	/* Driver response plus a canary the driver must not write. */
	struct {
		struct dray_alloc_ucontext_resp drv;
		unsigned char canary[16];
	} out;

	memset(&out, CANARY, sizeof(out));
	memset(expect, CANARY, sizeof(expect));
	test_cmd(uverbs_get_context(u->fd, &u->core, &out, sizeof(out), NULL,
				    0));
	u->async_fd = (int)u->core.async_fd;
	u->drv = out.drv;
	memcpy(canary, out.canary, sizeof(canary));

	EXPECT_LE(0, fcntl(u->async_fd, F_GETFD))
		TH_LOG("async_fd %d is not open", u->async_fd);
	EXPECT_EQ(1U, u->core.num_comp_vectors) TH_LOG("num_comp_vectors");
	EXPECT_EQ(0U, u->drv.comp_mask) TH_LOG("comp_mask %#x",
					       u->drv.comp_mask);
	EXPECT_GT(DRAY_MAX_UAR, (int)u->drv.uar_index) TH_LOG("uar_index %u",
							 u->drv.uar_index);
	EXPECT_EQ((unsigned long)self->page, u->drv.db_page_size)
		TH_LOG("db_page_size %u", u->drv.db_page_size);
	EXPECT_NE(0ULL, u->drv.db_mmap_key) TH_LOG("db_mmap_key is 0");
	EXPECT_EQ(0ULL, u->drv.db_mmap_key % (unsigned long long)self->page)
		TH_LOG("db_mmap_key %#llx not page aligned",
		       (unsigned long long)u->drv.db_mmap_key);
	EXPECT_EQ(DRAY_MAX_SGE, u->drv.max_sge) TH_LOG("max_sge");
	EXPECT_EQ(DRAY_MAX_INLINE, u->drv.max_inline_data)
		TH_LOG("max_inline_data");
	EXPECT_EQ(0U, u->drv.reserved) TH_LOG("reserved %#x", u->drv.reserved);
	EXPECT_EQ(0, memcmp(expect, canary, sizeof(canary)))
		TH_LOG("the driver wrote past struct dray_alloc_ucontext_resp");
}

/* One context per file: a second GET_CONTEXT fails, the first lives on. */
TEST_F(ucontext, second_context_same_file)
{
	struct uctx *u = uctx_open(_metadata, self), again;
	void *p;
	int err;

	test_cmd_get_context(u);
	again = *u;
	test_err_get_context(EINVAL, &again);
	p = map_db(u, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(err));
	check_db_page(_metadata, u, p);
	ASSERT_EQ(0, munmap(p, (size_t)self->page)) TH_LOG("munmap");
}

TEST_F(ucontext, mmap_doorbell)
{
	struct uctx *u = uctx_open(_metadata, self);
	volatile uint32_t *sw1, *sw2;
	void *p, *q;
	int err;

	test_cmd_get_context(u);
	p = map_db(u, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap key %#llx size %ld: %s",
					(unsigned long long)u->drv.db_mmap_key,
					self->page, strerror(err));
	check_db_page(_metadata, u, p);
	EXPECT_EQ(1, maps_count("/dev/infiniband/uverbs"))
		TH_LOG("one mapping expected");

	/* A second mapping of the same key is the same page. */
	q = map_db(u, self->page, &err);
	ASSERT_NE(MAP_FAILED, q) TH_LOG("second mmap: %s", strerror(err));
	check_db_page(_metadata, u, q);
	sw1 = (volatile uint32_t *)((char *)p + sizeof(struct dray_uar_dev_area));
	sw2 = (volatile uint32_t *)((char *)q + sizeof(struct dray_uar_dev_area));
	*sw1 = 0x12345678;
	EXPECT_EQ(0x12345678U, *sw2) TH_LOG("mappings do not share the page");

	ASSERT_EQ(0, munmap(p, (size_t)self->page)) TH_LOG("munmap 1");
	check_db_page(_metadata, u, q);
	ASSERT_EQ(0, munmap(q, (size_t)self->page)) TH_LOG("munmap 2");
	EXPECT_EQ(0, maps_count("/dev/infiniband/uverbs"))
		TH_LOG("mapping left after munmap");
}

TEST_F(ucontext, mmap_bad_offset)
{
	struct uctx *u = uctx_open(_metadata, self);
	unsigned long long key;
	size_t len = (size_t)self->page;
	int rw = PROT_READ | PROT_WRITE;

	test_cmd_get_context(u);
	key = u->drv.db_mmap_key;
	test_err_mmap(EINVAL, u->fd, len, rw, MAP_SHARED, 0);
	test_err_mmap(EINVAL, u->fd, len, rw, MAP_SHARED, key + len);
	test_err_mmap(EINVAL, u->fd, len, rw, MAP_SHARED, key - len);
	test_err_mmap(EINVAL, u->fd, len, rw, MAP_SHARED, 1ULL << 40);
}

TEST_F(ucontext, mmap_bad_size)
{
	struct uctx *u = uctx_open(_metadata, self);
	int rw = PROT_READ | PROT_WRITE;

	test_cmd_get_context(u);
	test_err_mmap(EINVAL, u->fd, 2 * (size_t)self->page, rw, MAP_SHARED,
		      u->drv.db_mmap_key);
	test_err_mmap(EINVAL, u->fd, 16 * (size_t)self->page, rw, MAP_SHARED,
		      u->drv.db_mmap_key);
}

/* A key is only valid on the file of the context that got it. */
TEST_F(ucontext, mmap_other_context_key)
{
	struct uctx *a = uctx_open(_metadata, self);
	struct uctx *b = uctx_open(_metadata, self);
	size_t len = (size_t)self->page;
	int rw = PROT_READ | PROT_WRITE;
	void *p;
	int err;

	test_cmd_get_context(a);
	test_cmd_get_context(b);
	ASSERT_NE(a->drv.uar_index, b->drv.uar_index)
		TH_LOG("two contexts share UAR %u", a->drv.uar_index);
	ASSERT_NE(a->drv.db_mmap_key, b->drv.db_mmap_key)
		TH_LOG("two contexts share mmap key %#llx",
		       (unsigned long long)a->drv.db_mmap_key);
	test_err_mmap(EINVAL, a->fd, len, rw, MAP_SHARED, b->drv.db_mmap_key);
	test_err_mmap(EINVAL, b->fd, len, rw, MAP_SHARED, a->drv.db_mmap_key);

	/* Each on its own file works and shows its own UAR. */
	p = map_db(b, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap b: %s", strerror(err));
	check_db_page(_metadata, b, p);
	ASSERT_EQ(0, munmap(p, len)) TH_LOG("munmap b");
	p = map_db(a, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap a: %s", strerror(err));
	check_db_page(_metadata, a, p);
	ASSERT_EQ(0, munmap(p, len)) TH_LOG("munmap a");
}

TEST_F(ucontext, mmap_private)
{
	struct uctx *u = uctx_open(_metadata, self);

	test_cmd_get_context(u);
	test_err_mmap(EINVAL, u->fd, (size_t)self->page, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE, u->drv.db_mmap_key);
	test_err_mmap(EINVAL, u->fd, (size_t)self->page, PROT_READ,
		      MAP_PRIVATE, u->drv.db_mmap_key);
}

TEST_F(ucontext, mmap_exec)
{
	struct uctx *u = uctx_open(_metadata, self);
	void *p;
	int err;

	test_cmd_get_context(u);
	test_err_mmap(EPERM, u->fd, (size_t)self->page,
		      PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED,
		      u->drv.db_mmap_key);
	test_err_mmap(EPERM, u->fd, (size_t)self->page, PROT_READ | PROT_EXEC,
		      MAP_SHARED, u->drv.db_mmap_key);

	/* Nor can a data mapping become executable later. */
	p = map_db(u, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(err));
	EXPECT_EQ(-1, mprotect(p, (size_t)self->page, PROT_READ | PROT_EXEC))
		TH_LOG("mprotect(PROT_EXEC) on the doorbell page succeeded");
	EXPECT_EQ(EACCES, errno) TH_LOG("mprotect: %s", strerror(errno));
	ASSERT_EQ(0, munmap(p, (size_t)self->page)) TH_LOG("munmap");
}

TEST_F(ucontext, mmap_without_context)
{
	struct uctx *u = uctx_open(_metadata, self);

	test_err_mmap(EINVAL, u->fd, (size_t)self->page,
		      PROT_READ | PROT_WRITE, MAP_SHARED, 0);
}

/*
 * The mapping outlives the file: closing it destroys the context (and
 * frees its UAR) but the page stays mapped until munmap. A new context
 * gets a different page, even if it reuses the UAR index.
 */
TEST_F(ucontext, mapping_survives_close)
{
	struct uctx *u = uctx_open(_metadata, self), *v;
	struct uctx old;
	volatile uint32_t *sw;
	void *p, *q;
	int err;

	test_cmd_get_context(u);
	p = map_db(u, self->page, &err);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(err));
	old = *u;
	uctx_close(u);

	check_db_page(_metadata, &old, p);
	sw = (volatile uint32_t *)((char *)p + sizeof(struct dray_uar_dev_area));
	*sw = 0xdeadbeef;
	EXPECT_EQ(0xdeadbeefU, *sw) TH_LOG("page not writable after close");

	v = uctx_open(_metadata, self);
	test_cmd_get_context(v);
	q = map_db(v, self->page, &err);
	ASSERT_NE(MAP_FAILED, q) TH_LOG("mmap of the new context: %s",
					strerror(err));
	check_db_page(_metadata, v, q);
	EXPECT_NE(0xdeadbeefU,
		  *(volatile uint32_t *)((char *)q +
					 sizeof(struct dray_uar_dev_area)))
		TH_LOG("new context (UAR %u, old %u) sees the old page",
		       v->drv.uar_index, old.drv.uar_index);
	ASSERT_EQ(0, munmap(q, (size_t)self->page)) TH_LOG("munmap new");
	ASSERT_EQ(0, munmap(p, (size_t)self->page)) TH_LOG("munmap old");
}

/*
 * The driver needs its response up to db_page_size: anything shorter
 * fails with EINVAL and leaves the file usable; exactly that much works.
 */
TEST_F(ucontext, short_response)
{
	struct uctx *u = uctx_open(_metadata, self);
	struct dray_alloc_ucontext_resp drv;
	size_t len;
	int fds = open_fds();

	for (len = 0; len < DRAY_RESP_MIN; len += 4) {
		memset(&drv, CANARY, sizeof(drv));
		test_err(EINVAL, uverbs_get_context(u->fd, &u->core, &drv, len,
						    NULL, 0));
		EXPECT_EQ(fds, open_fds())
			TH_LOG("failed GET_CONTEXT (response %zu) left a file",
			       len);
	}
	memset(&drv, CANARY, sizeof(drv));
	test_cmd(uverbs_get_context(u->fd, &u->core, &drv, DRAY_RESP_MIN,
				    NULL, 0));
	u->async_fd = (int)u->core.async_fd;
	EXPECT_EQ((unsigned long)self->page, drv.db_page_size)
		TH_LOG("db_page_size %u", drv.db_page_size);
	EXPECT_EQ(0xa5a5a5a5U, drv.max_inline_data)
		TH_LOG("the driver wrote past a %zu byte response",
		       (size_t)DRAY_RESP_MIN);
}

/* Driver request bytes must be zero (reserved for extensions). */
TEST_F(ucontext, nonzero_request)
{
	struct uctx *u = uctx_open(_metadata, self);
	uint64_t req[2] = { 0, 1 };

	test_err(EINVAL, uverbs_get_context(u->fd, &u->core, &u->drv,
					    sizeof(u->drv), req, sizeof(req)));
	req[1] = 0;
	test_cmd(uverbs_get_context(u->fd, &u->core, &u->drv, sizeof(u->drv),
				    req, sizeof(req)));
	u->async_fd = (int)u->core.async_fd;
}

/* Open contexts until one fails; returns how many worked, *err its error. */
static int fill_uars(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ucontext) *self, int *err)
{
	int ok = 0;

	*err = 0;
	while (self->n < MAX_FDS) {
		struct uctx *u = uctx_open(_metadata, self);

		*err = _test_cmd_get_context(u);
		if (*err)
			break;
		ok++;
	}
	return ok;
}

static void close_all(FIXTURE_DATA(ucontext) *self)
{
	while (self->n)
		uctx_close(&self->u[--self->n]);
}

TEST_F_TIMEOUT(ucontext, uar_limit, 120)
{
	bool seen[DRAY_MAX_UAR] = {};
	int i, err, ok, fds, last;
	void *p;

	ok = fill_uars(_metadata, self, &err);
	ASSERT_EQ(DRAY_USER_UAR, ok) TH_LOG("%d contexts, then %s", ok,
					   strerror(-err));
	ASSERT_EQ(-ENOSPC, err) TH_LOG("context %d: %s, want ENOSPC",
				       ok + 1, strerror(-err));
	for (i = 0; i < ok; i++) {
		int idx = (int)self->u[i].drv.uar_index;

		ASSERT_GT(DRAY_MAX_UAR, idx) TH_LOG("uar_index %d", idx);
		ASSERT_FALSE(seen[idx]) TH_LOG("UAR %u given out twice", idx);
		seen[idx] = true;
	}

	/* The failure freed nothing it should not: earlier ones still work. */
	for (i = 0; i < 4; i++) {
		int which = (int[]){ 0, 1, ok / 2, ok - 1 }[i];
		struct uctx *u = &self->u[which];

		p = map_db(u, self->page, &err);
		ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap of context %d: %s",
						which, strerror(err));
		check_db_page(_metadata, u, p);
		ASSERT_EQ(0, munmap(p, (size_t)self->page)) TH_LOG("munmap");
	}

	/* Retrying on the failed file fails the same way, leaking nothing. */
	last = self->n - 1;
	fds = open_fds();
	test_err_get_context(ENOSPC, &self->u[last]);
	EXPECT_EQ(fds, open_fds()) TH_LOG("failed GET_CONTEXT left a file");

	/* Closing one context frees its UAR for the next. */
	uctx_close(&self->u[10]);
	test_cmd_get_context(&self->u[last]);
	EXPECT_EQ(self->u[10].drv.uar_index, self->u[last].drv.uar_index)
		TH_LOG("freed UAR %u, got %u", self->u[10].drv.uar_index,
		       self->u[last].drv.uar_index);
	close_all(self);

	/* And all of them come back. */
	ok = fill_uars(_metadata, self, &err);
	EXPECT_EQ(DRAY_USER_UAR, ok) TH_LOG("after closing all: %d contexts (%s)",
					   ok, strerror(-err));
}

/* ibv_open_device/ibv_close_device through the provider, 100 times. */
TEST_F_TIMEOUT(ucontext, ibv_open_close_100, 120)
{
	struct ibv_device **list, *dev = NULL;
	int i, n, ok, err;

	list = ibv_get_device_list(&n);
	ASSERT_NE(NULL, list) TH_LOG("ibv_get_device_list: %s",
				     strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), IBDEV))
			dev = list[i];
	ASSERT_NE(NULL, dev) TH_LOG("%s not listed", IBDEV);

	for (i = 0; i < 100; i++) {
		struct ibv_context *ctx = ibv_open_device(dev);
		struct ibv_port_attr pa;

		ASSERT_NE(NULL, ctx) TH_LOG("ibv_open_device #%d: %s", i,
					    strerror(errno));
		EXPECT_EQ(1, maps_count("/dev/infiniband/uverbs"))
			TH_LOG("#%d: the provider did not map its doorbell page",
			       i);
		ASSERT_EQ(0, ibv_query_port(ctx, 1, &pa))
			TH_LOG("ibv_query_port #%d", i);
		ASSERT_EQ(0, ibv_close_device(ctx))
			TH_LOG("ibv_close_device #%d: %s", i, strerror(errno));
		ASSERT_EQ(0, maps_count("/dev/infiniband/uverbs"))
			TH_LOG("#%d: doorbell mapping left after close", i);
	}
	ibv_free_device_list(list);

	/* No UAR leaked: all of them can still be had. */
	ok = fill_uars(_metadata, self, &err);
	EXPECT_EQ(DRAY_USER_UAR, ok) TH_LOG("after 100 open/close: %d contexts (%s)",
					   ok, strerror(-err));
}

TEST_HARNESS_MAIN
