// SPDX-License-Identifier: GPL-2.0-only
/*
 * dma-buf MRs (ibv_reg_dmabuf_mr), kselftest harness. Runs against any
 * RoCE device pair:
 *
 *   DRAY_TEST_DEV_A (default dray0)    holds the dma-buf MRs
 *   DRAY_TEST_DEV_B (default dray1)    the peer, with ordinary MRs
 *   DRAY_TEST_GID_INDEX (default: the RoCEv2 IPv4 GID of each device)
 *
 * The dma-bufs come from two exporters:
 *
 *   vgem      a dumb buffer of the vgem DRM driver (shmem pages), exported
 *             with PRIME (modprobe vgem: /dev/dri/cardN named "vgem");
 *   contig    tests/rdma/dmabuf_exp (insmod dray_dmabuf_exp.ko): one
 *             contiguous allocation of host RAM that is no compound page,
 *             the kind dma_alloc_coherent() makes;
 *
 * and the same module makes memory that is not host RAM at all: the bus
 * addresses of a PCI BAR, as a peer-to-peer exporter (GPU memory) hands
 * them out. Cases whose exporter is missing skip and say which.
 *
 *   probe.*   fd -1 answers EBADF whatever the other arguments (the probe
 *             of UCX, NCCL and libfabric), a file that is no dma-buf
 *             EINVAL;
 *   reg.*     registration rules on a vgem buffer: range within the
 *             dma-buf, offset and iova in the same place of a page, access
 *             flags (EINVAL), what the MR reports, two MRs of one dma-buf;
 *   pair.*    (both exporters) a 4 MiB dma-buf MR on DEV_A, 1024 pages
 *             whose MTT spans three pages: the peer RDMA-WRITEs, READs and
 *             runs atomics on it, DEV_A uses it as the local SGE of SEND,
 *             RDMA WRITE, RDMA READ and receives; every byte is checked
 *             through the CPU's view of the dma-buf (its mmap) and in the
 *             peer's memory, and every byte not written must be unchanged;
 *             rights and range are enforced; the MR outlives the dma-buf's
 *             fd and mapping; deregistration under traffic;
 *   p2p.*     BAR memory is refused with EFAULT at registration and never
 *             touched, also as the last page of RAM; the exporter sees
 *             dray's DMA device attach and everything released again.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm/drm.h>
#include <drm/drm_mode.h>
#include <linux/dma-buf.h>

#include "harness.h"
#include "dmabuf_exp/dmabuf_exp.h"

#define BUF_SIZE	(4u << 20)	/* 1024 pages */
#define GUARD		0x5a
#define CQE		64
#define MR_IOVA		0x7d0000000000ULL	/* where DEV_A's MR appears */

#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static int gid_want(void)
{
	const char *v = getenv("DRAY_TEST_GID_INDEX");

	return v && *v ? atoi(v) : -1;
}

/* A dma-buf and the CPU's view of it. */
struct dbuf {
	int card;		/* vgem: the card it was made on, else -1 */
	uint32_t handle;	/* vgem: the GEM handle */
	int fd;			/* the dma-buf */
	size_t size;
	uint8_t *map;		/* mmap of the dma-buf, or NULL */
};

static void dbuf_init(struct dbuf *b)
{
	memset(b, 0, sizeof(*b));
	b->card = -1;
	b->fd = -1;
}

/* Drop the process's references: the mapping, the fd, the GEM handle. */
static void dbuf_close(struct dbuf *b)
{
	if (b->map)
		munmap(b->map, b->size);
	b->map = NULL;
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	if (b->card >= 0 && b->handle) {
		struct drm_gem_close c = { .handle = b->handle };

		ioctl(b->card, DRM_IOCTL_GEM_CLOSE, &c);
	}
	b->handle = 0;
}

/* CPU access to a dma-buf is bracketed by DMA_BUF_IOCTL_SYNC. */
static void cpu_begin(const struct dbuf *b)
{
	struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };

	ioctl(b->fd, DMA_BUF_IOCTL_SYNC, &s);
	atomic_thread_fence(memory_order_seq_cst);
}

static void cpu_end(const struct dbuf *b)
{
	struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW };

	/* vgem maps write-combined: drain the stores first */
	atomic_thread_fence(memory_order_seq_cst);
	ioctl(b->fd, DMA_BUF_IOCTL_SYNC, &s);
}

/* The vgem card, or -1 with errno (ENODEV: none). */
static int vgem_open(void)
{
	char path[32], name[16];
	int i;

	for (i = 0; i < 16; i++) {
		struct drm_version v = {
			.name = name,
			.name_len = sizeof(name) - 1,
		};
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	errno = ENODEV;
	return -1;
}

/* A vgem dumb buffer of size bytes, exported and mapped. 0 or errno. */
static int vgem_alloc(int card, size_t size, struct dbuf *b)
{
	struct drm_mode_create_dumb c = {
		.width = 1024,
		.height = size / 4096,
		.bpp = 32,
	};
	struct drm_prime_handle p = { 0 };
	int err;

	dbuf_init(b);
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &c))
		return errno;
	b->card = card;
	b->handle = c.handle;
	b->size = size;
	if (c.size < size) {
		dbuf_close(b);
		return ENOSPC;
	}
	p.handle = c.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p)) {
		err = errno;
		dbuf_close(b);
		return err;
	}
	b->fd = p.fd;
	b->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->map == MAP_FAILED) {
		err = errno;
		b->map = NULL;
		dbuf_close(b);
		return err;
	}
	return 0;
}

/* The test exporter, or -1 with errno. */
static int exp_open(void)
{
	return open(DRAY_EXP_DEV, O_RDWR | O_CLOEXEC);
}

/*
 * A dma-buf of the test exporter; mapped for the CPU if it is RAM. 0 or
 * errno; bar receives the bus address of its BAR part (or 0).
 */
static int exp_alloc(int exp, uint32_t kind, size_t size, struct dbuf *b,
		     uint64_t *bar)
{
	struct dray_exp_create c = { .kind = kind, .size = size };
	int err;

	dbuf_init(b);
	if (ioctl(exp, DRAY_EXP_IOC_CREATE, &c))
		return errno;
	b->fd = c.fd;
	b->size = size;
	if (bar)
		*bar = c.bar_addr;
	if (kind != DRAY_EXP_CONTIG)
		return 0;
	b->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (b->map == MAP_FAILED) {
		err = errno;
		b->map = NULL;
		dbuf_close(b);
		return err;
	}
	return 0;
}

static int exp_stats(int exp, struct dray_exp_stats *s)
{
	memset(s, 0, sizeof(*s));
	return ioctl(exp, DRAY_EXP_IOC_STATS, s) ? errno : 0;
}

/*
 * probe: no dma-buf needed. A device without the verb (rxe 6.1) answers
 * EOPNOTSUPP: that skips here, and fails on dray.
 */

FIXTURE(probe) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	bool dray;
};

FIXTURE_SETUP(probe)
{
	self->ctx = open_device(dev_name(0));
	if (!self->ctx)
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	self->dray = is_dray(self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(probe)
{
	_metadata->trigger = 0;
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
}

/* Register fd, expecting NULL and errno want; skip if unsupported. */
static void reg_fails(struct __test_metadata *_metadata,
		      FIXTURE_DATA(probe) *self, uint64_t offset,
		      size_t length, uint64_t iova, int fd, int access,
		      int want)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_dmabuf_mr(self->pd, offset, length, iova, fd, access);
	if (!mr && errno == EOPNOTSUPP && !self->dray)
		SKIP(return, "%s has no dma-buf MRs (EOPNOTSUPP)", dev_name(0));
	ASSERT_EQ(NULL, mr) {
		ibv_dereg_mr(mr);
	}
	ASSERT_EQ(want, errno)
		TH_LOG("offset %#llx length %zu iova %#llx fd %d access %#x: %s (%d), expected %s",
		       (unsigned long long)offset, length,
		       (unsigned long long)iova, fd, access, strerror(errno),
		       errno, strerror(want));
}

/* UCX's probe, exactly: offset 0, one page, iova 0, fd -1, its rights. */
TEST_F(probe, fd_minus_one_ucx)
{
	reg_fails(_metadata, self, 0, sysconf(_SC_PAGESIZE), 0, -1,
		  ALL_ACCESS, EBADF);
}

TEST_F(probe, fd_minus_one_local_write)
{
	reg_fails(_metadata, self, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE,
		  EBADF);
}

TEST_F(probe, fd_minus_one_relaxed_ordering)
{
	reg_fails(_metadata, self, 0, 4096, 0, -1,
		  ALL_ACCESS | IBV_ACCESS_RELAXED_ORDERING, EBADF);
}

/* The fd is looked at before the length: a probe may pass anything. */
TEST_F(probe, fd_minus_one_zero_length)
{
	reg_fails(_metadata, self, 0, 0, 0, -1, ALL_ACCESS, EBADF);
}

TEST_F(probe, fd_minus_one_huge_length)
{
	reg_fails(_metadata, self, 0, (size_t)1 << 62, 0, -1, ALL_ACCESS,
		  EBADF);
}

TEST_F(probe, fd_closed)
{
	int fd = dup(0);

	ASSERT_LE(0, fd);
	close(fd);
	reg_fails(_metadata, self, 0, 4096, 0, fd, ALL_ACCESS, EBADF);
}

TEST_F(probe, fd_not_a_dmabuf)
{
	int p[2];

	ASSERT_EQ(0, pipe(p));
	reg_fails(_metadata, self, 0, 4096, 0, p[0], ALL_ACCESS, EINVAL);
	close(p[0]);
	close(p[1]);
}

/* reg: registration rules, on a vgem buffer of BUF_SIZE */

FIXTURE(reg) {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	int card;
	struct dbuf b;
};

FIXTURE_SETUP(reg)
{
	int err;

	dbuf_init(&self->b);
	self->card = vgem_open();
	if (self->card < 0)
		SETUP_SKIP("no vgem card in /dev/dri (modprobe vgem)");
	self->ctx = open_device(dev_name(0));
	if (!self->ctx) {
		close(self->card);
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	}
	ASSERT_EQ(0, ibv_query_device(self->ctx, &self->attr));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	errno = 0;
	if (!ibv_reg_dmabuf_mr(self->pd, 0, 4096, 0, -1, ALL_ACCESS) &&
	    errno == EOPNOTSUPP && !is_dray(self->ctx))
		SETUP_SKIP("%s has no dma-buf MRs (EOPNOTSUPP)", dev_name(0));
	err = vgem_alloc(self->card, BUF_SIZE, &self->b);
	ASSERT_EQ(0, err) TH_LOG("vgem buffer: %s", strerror(err));
}

FIXTURE_TEARDOWN(reg)
{
	_metadata->trigger = 0;
	dbuf_close(&self->b);
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
	if (self->card >= 0)
		close(self->card);
}

static struct ibv_mr *reg(FIXTURE_DATA(reg) *self, uint64_t offset,
			  size_t length, uint64_t iova, int access)
{
	return ibv_reg_dmabuf_mr(self->pd, offset, length, iova, self->b.fd,
				 access);
}

/* A NULL result with errno want; an MR that should not exist is freed. */
#define REG_FAILS(_want, _expr) do {					\
	struct ibv_mr *__mr;						\
	errno = 0;							\
	__mr = (_expr);							\
	ASSERT_EQ(NULL, __mr) {						\
		TH_LOG("%s succeeded", #_expr);				\
		ibv_dereg_mr(__mr);					\
	}								\
	ASSERT_EQ((_want), errno)					\
		TH_LOG("%s: errno %s (%d), expected %s", #_expr,	\
		       strerror(errno), errno, strerror(_want));	\
} while (0)

TEST_F(reg, whole_buffer)
{
	struct ibv_mr *mr = reg(self, 0, BUF_SIZE, MR_IOVA, ALL_ACCESS);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));
	EXPECT_NE(0U, mr->lkey);
	EXPECT_NE(0U, mr->rkey);
	/* libibverbs reports the offset as addr */
	EXPECT_EQ(NULL, mr->addr);
	EXPECT_EQ((size_t)BUF_SIZE, mr->length);
	EXPECT_EQ(self->pd, mr->pd);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(reg, sub_range_at_odd_offset)
{
	uint64_t off = 3 * 4096 + 100;
	struct ibv_mr *mr = reg(self, off, 70000, MR_IOVA + 100,
				IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_READ);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));
	EXPECT_EQ((void *)(uintptr_t)off, mr->addr);
	EXPECT_EQ(70000U, mr->length);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* The last byte of the dma-buf is in, one more is not. */
TEST_F(reg, up_to_the_end)
{
	struct ibv_mr *mr = reg(self, BUF_SIZE - 4096, 4096, MR_IOVA,
				ALL_ACCESS);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	REG_FAILS(EINVAL, reg(self, BUF_SIZE - 4096, 4097, MR_IOVA,
			      ALL_ACCESS));
}

TEST_F(reg, past_the_end)
{
	REG_FAILS(EINVAL, reg(self, BUF_SIZE, 4096, MR_IOVA, ALL_ACCESS));
	REG_FAILS(EINVAL, reg(self, 0, BUF_SIZE + 1, MR_IOVA, ALL_ACCESS));
}

TEST_F(reg, offset_plus_length_wraps)
{
	REG_FAILS(EINVAL, reg(self, ~0ULL - 4095, 8192, ~0ULL - 4095,
			      ALL_ACCESS));
}

TEST_F(reg, zero_length)
{
	REG_FAILS(EINVAL, reg(self, 0, 0, MR_IOVA, ALL_ACCESS));
}

TEST_F(reg, iova_page_offset_differs)
{
	REG_FAILS(EINVAL, reg(self, 4096 + 8, 4096, MR_IOVA + 16,
			      ALL_ACCESS));
}

TEST_F(reg, iova_plus_length_wraps)
{
	REG_FAILS(EINVAL, reg(self, 0, 8192, ~0ULL - 4095, ALL_ACCESS));
}

TEST_F(reg, remote_write_needs_local_write)
{
	REG_FAILS(EINVAL, reg(self, 0, 4096, MR_IOVA,
			      IBV_ACCESS_REMOTE_WRITE));
}

TEST_F(reg, remote_atomic_needs_local_write)
{
	REG_FAILS(EINVAL, reg(self, 0, 4096, MR_IOVA,
			      IBV_ACCESS_REMOTE_ATOMIC |
			      IBV_ACCESS_REMOTE_READ));
}

/* Rights a dma-buf MR cannot have: memory windows, on-demand paging. */
TEST_F(reg, unsupported_access_bits)
{
	REG_FAILS(EINVAL, reg(self, 0, 4096, MR_IOVA,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND));
	REG_FAILS(EINVAL, reg(self, 0, 4096, MR_IOVA,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND));
	REG_FAILS(EINVAL, reg(self, 0, 4096, MR_IOVA,
			      IBV_ACCESS_LOCAL_WRITE | 0x4000));
}

/* An optional flag (a hint the device may ignore) is accepted. */
TEST_F(reg, relaxed_ordering_accepted)
{
	struct ibv_mr *mr = reg(self, 0, 4096, MR_IOVA,
				ALL_ACCESS | IBV_ACCESS_RELAXED_ORDERING);

	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(reg, two_mrs_of_one_dmabuf)
{
	struct ibv_mr *a = reg(self, 0, BUF_SIZE, MR_IOVA, ALL_ACCESS);
	struct ibv_mr *b = reg(self, 8192, 8192, 8192, IBV_ACCESS_LOCAL_WRITE);

	ASSERT_NE(NULL, a) TH_LOG("first: %s", strerror(errno));
	ASSERT_NE(NULL, b) TH_LOG("second: %s", strerror(errno));
	EXPECT_NE(a->lkey, b->lkey);
	EXPECT_EQ(0, ibv_dereg_mr(b));
	EXPECT_EQ(0, ibv_dereg_mr(a));
}

/*
 * pair: a dma-buf MR on A (all rights over the whole dma-buf, at iova
 * MR_IOVA), an ordinary buffer of 2 * BUF_SIZE on B (all rights); an RC
 * QP on each, connected.
 */

FIXTURE(pair) {
	struct rc_side a, b;
	struct rc_params p;
	int card, exp;		/* the exporter's fd */
	struct dbuf d;		/* A's dma-buf */
	struct ibv_mr *dmr;	/* A's MR of it */
	uint8_t *bbuf;		/* B's buffer */
	struct ibv_mr *bmr;
};

FIXTURE_VARIANT(pair) {
	bool vgem;		/* else the test exporter's contiguous RAM */
};

FIXTURE_VARIANT_ADD(pair, vgem) { .vgem = true };
FIXTURE_VARIANT_ADD(pair, contig) { .vgem = false };

FIXTURE_SETUP(pair)
{
	struct ibv_context *probe;
	const char *step;
	int err;

	dbuf_init(&self->d);
	self->card = -1;
	self->exp = -1;
	if (variant->vgem) {
		self->card = vgem_open();
		if (self->card < 0)
			SETUP_SKIP("no vgem card in /dev/dri (modprobe vgem)");
	} else {
		self->exp = exp_open();
		if (self->exp < 0)
			SETUP_SKIP("no %s (insmod dray_dmabuf_exp.ko): %s",
				   DRAY_EXP_DEV, strerror(errno));
	}
	probe = open_device(dev_name(1));
	if (!probe) {
		if (self->card >= 0)
			close(self->card);
		if (self->exp >= 0)
			close(self->exp);
		SETUP_SKIP("device %s: %s", dev_name(1), strerror(errno));
	}
	ibv_close_device(probe);

	rc_side_setup(_metadata, &self->a, 0, gid_want(), 0x100, CQE, 4);
	rc_side_setup(_metadata, &self->b, 1, gid_want(), 0xfffff0, CQE, 4);
	rc_params_default(&self->p);
	err = rc_connect(self->a.qp, &self->a.rc, &self->b.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("A: %s: %s", step, strerror(err));
	err = rc_connect(self->b.qp, &self->b.rc, &self->a.rc, &self->p, &step);
	ASSERT_EQ(0, err) TH_LOG("B: %s: %s", step, strerror(err));

	if (variant->vgem)
		err = vgem_alloc(self->card, BUF_SIZE, &self->d);
	else
		err = exp_alloc(self->exp, DRAY_EXP_CONTIG, BUF_SIZE, &self->d,
				NULL);
	ASSERT_EQ(0, err) TH_LOG("dma-buf of %u bytes: %s", BUF_SIZE,
				 strerror(err));
	cpu_begin(&self->d);
	memset(self->d.map, GUARD, BUF_SIZE);
	cpu_end(&self->d);
	errno = 0;
	self->dmr = ibv_reg_dmabuf_mr(self->a.pd, 0, BUF_SIZE, MR_IOVA,
				      self->d.fd, ALL_ACCESS);
	if (!self->dmr && errno == EOPNOTSUPP && !is_dray(self->a.ctx))
		SETUP_SKIP("%s has no dma-buf MRs (EOPNOTSUPP)", dev_name(0));
	ASSERT_NE(NULL, self->dmr) TH_LOG("ibv_reg_dmabuf_mr: %s",
					  strerror(errno));

	self->bbuf = page_buf(2 * BUF_SIZE);
	ASSERT_NE(NULL, self->bbuf);
	self->bmr = ibv_reg_mr(self->b.pd, self->bbuf, 2 * BUF_SIZE,
			       ALL_ACCESS);
	ASSERT_NE(NULL, self->bmr);
}

FIXTURE_TEARDOWN(pair)
{
	_metadata->trigger = 0;
	rc_side_destroy_qp(_metadata, &self->a);
	rc_side_destroy_qp(_metadata, &self->b);
	if (self->dmr)
		EXPECT_EQ(0, ibv_dereg_mr(self->dmr));
	if (self->bmr)
		EXPECT_EQ(0, ibv_dereg_mr(self->bmr));
	rc_side_teardown(_metadata, &self->a);
	rc_side_teardown(_metadata, &self->b);
	dbuf_close(&self->d);
	if (self->bbuf)
		munmap(self->bbuf, 2 * BUF_SIZE);
	if (self->card >= 0)
		close(self->card);
	if (self->exp >= 0)
		close(self->exp);
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		struct ibv_sge *sge, int num_sge, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* One WR with one SGE, completed successfully. */
static void op1(struct __test_metadata *_metadata, struct rc_side *e,
		enum ibv_wr_opcode op, uint64_t laddr, uint32_t len,
		uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post(e->qp, op, 0x77, &sge, 1, raddr, rkey));
	wc = wait_wc(_metadata, e->cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0x77ULL, wc.wr_id);
}

static int recv1(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge,
		 int num_sge)
{
	struct ibv_recv_wr wr = { 0 }, *bad = NULL;

	wr.wr_id = wr_id;
	wr.sg_list = sge;
	wr.num_sge = num_sge;
	return ibv_post_recv(qp, &wr, &bad);
}

#define D_IOVA(off)	(MR_IOVA + (off))
#define B_ADDR(off)	((uintptr_t)self->bbuf + (off))

struct piece {
	size_t off, len;
};

/*
 * Pieces of the dma-buf, in order and apart: the first page, a big
 * unaligned one, one across MTT pages 0 and 1 (data page 511 is entry 0
 * of the second MTT page), one across MTT pages 1 and 2, the last bytes.
 */
static const struct piece pieces[] = {
	{ 0, 4096 },
	{ 300000 + 7, (1u << 20) + 13 },
	{ 511 * 4096 - 100, 8192 + 200 },
	{ 1022 * 4096 - 33, 4096 + 66 },
	{ BUF_SIZE - 1000, 1000 },
};

#define N_PIECES	(sizeof(pieces) / sizeof(pieces[0]))

/*
 * The CPU view of the dma-buf: stream seed at every piece, GUARD
 * everywhere else.
 */
static void check_view(struct __test_metadata *_metadata,
		       const struct dbuf *d, uint64_t seed,
		       const struct piece *p, size_t n)
{
	size_t pos = 0, i, bad;

	cpu_begin(d);
	for (i = 0; i <= n; i++) {
		size_t end = i < n ? p[i].off : d->size;

		bad = first_not(d->map + pos, end - pos, GUARD);
		EXPECT_EQ(end - pos, bad)
			TH_LOG("byte %zu not written, yet %#x", pos + bad,
			       d->map[pos + bad]);
		if (i == n)
			break;
		bad = stream_check(d->map + p[i].off, seed, p[i].off,
				   p[i].len);
		EXPECT_EQ(p[i].len, bad)
			TH_LOG("piece %zu (%zu+%zu): byte %zu is %#x, expected %#x",
			       i, p[i].off, p[i].len, p[i].off + bad,
			       d->map[p[i].off + bad],
			       stream_byte(seed, p[i].off + bad));
		pos = p[i].off + p[i].len;
	}
	cpu_end(d);
}

/* The peer writes pieces into the dma-buf; the CPU sees exactly them. */
TEST_F_TIMEOUT(pair, remote_write, 120)
{
	size_t i;

	stream_fill(self->bbuf, 1, 0, BUF_SIZE);
	for (i = 0; i < N_PIECES; i++)
		op1(_metadata, &self->b, IBV_WR_RDMA_WRITE,
		    B_ADDR(pieces[i].off), pieces[i].len, self->bmr->lkey,
		    D_IOVA(pieces[i].off), self->dmr->rkey);
	check_view(_metadata, &self->d, 1, pieces, N_PIECES);
}

/* The CPU fills the dma-buf; the peer reads pieces of it, and all of it. */
TEST_F_TIMEOUT(pair, remote_read, 120)
{
	uint8_t *dst = self->bbuf + BUF_SIZE;
	size_t i, bad;

	cpu_begin(&self->d);
	stream_fill(self->d.map, 2, 0, BUF_SIZE);
	cpu_end(&self->d);
	memset(dst, GUARD, BUF_SIZE);
	for (i = 0; i < N_PIECES; i++) {
		op1(_metadata, &self->b, IBV_WR_RDMA_READ,
		    B_ADDR(BUF_SIZE + pieces[i].off), pieces[i].len,
		    self->bmr->lkey, D_IOVA(pieces[i].off), self->dmr->rkey);
		bad = stream_check(dst + pieces[i].off, 2, pieces[i].off,
				   pieces[i].len);
		EXPECT_EQ(pieces[i].len, bad)
			TH_LOG("piece %zu: byte %zu", i, pieces[i].off + bad);
	}
	/* the whole dma-buf in one READ */
	memset(dst, GUARD, BUF_SIZE);
	op1(_metadata, &self->b, IBV_WR_RDMA_READ, B_ADDR(BUF_SIZE), BUF_SIZE,
	    self->bmr->lkey, D_IOVA(0), self->dmr->rkey);
	bad = stream_check(dst, 2, 0, BUF_SIZE);
	EXPECT_EQ((size_t)BUF_SIZE, bad) TH_LOG("whole READ: byte %zu", bad);
}

/* The whole dma-buf in one WRITE, then read back from another MR. */
TEST_F_TIMEOUT(pair, whole_write_read_back, 120)
{
	static const struct piece all = { 0, BUF_SIZE };
	uint8_t *dst = self->bbuf + BUF_SIZE;
	size_t bad;

	stream_fill(self->bbuf, 3, 0, BUF_SIZE);
	op1(_metadata, &self->b, IBV_WR_RDMA_WRITE, B_ADDR(0), BUF_SIZE,
	    self->bmr->lkey, D_IOVA(0), self->dmr->rkey);
	check_view(_metadata, &self->d, 3, &all, 1);
	memset(dst, 0, BUF_SIZE);
	op1(_metadata, &self->b, IBV_WR_RDMA_READ, B_ADDR(BUF_SIZE), BUF_SIZE,
	    self->bmr->lkey, D_IOVA(0), self->dmr->rkey);
	bad = stream_check(dst, 3, 0, BUF_SIZE);
	EXPECT_EQ((size_t)BUF_SIZE, bad) TH_LOG("byte %zu", bad);
}

/*
 * A uses the dma-buf MR locally: SEND gathering two pieces of it, RDMA
 * WRITE from it, RDMA READ into it, and a receive into it.
 */
TEST_F_TIMEOUT(pair, local_sges, 120)
{
	const struct piece into[] = {
		{ 200000, 300000 },		/* READ lands here */
		{ 3 * 4096 * 100 + 5, 5000 },	/* the receive */
	};
	struct ibv_sge sge[2], rsge;
	struct ibv_wc wc;
	size_t bad;

	/* SEND from two pieces of the dma-buf to B */
	cpu_begin(&self->d);
	stream_fill(self->d.map, 4, 0, BUF_SIZE);
	cpu_end(&self->d);
	memset(self->bbuf, GUARD, 2 * BUF_SIZE);
	rsge.addr = B_ADDR(0);
	rsge.length = 20000;
	rsge.lkey = self->bmr->lkey;
	ASSERT_ERRNO(0, recv1(self->b.qp, 0x51, &rsge, 1));
	sge[0].addr = D_IOVA(100);
	sge[0].length = 10000;
	sge[0].lkey = self->dmr->lkey;
	sge[1].addr = D_IOVA(BUF_SIZE - 5000);
	sge[1].length = 5000;
	sge[1].lkey = self->dmr->lkey;
	ASSERT_ERRNO(0, post(self->a.qp, IBV_WR_SEND, 0x52, sge, 2, 0, 0));
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0x51ULL, wc.wr_id);
	EXPECT_EQ(15000U, wc.byte_len);
	EXPECT_EQ(10000U, stream_check(self->bbuf, 4, 100, 10000));
	EXPECT_EQ(5000U, stream_check(self->bbuf + 10000, 4, BUF_SIZE - 5000,
				      5000));

	/* RDMA WRITE from the dma-buf to B */
	op1(_metadata, &self->a, IBV_WR_RDMA_WRITE, D_IOVA(777), 600000,
	    self->dmr->lkey, B_ADDR(BUF_SIZE), self->bmr->rkey);
	bad = stream_check(self->bbuf + BUF_SIZE, 4, 777, 600000);
	EXPECT_EQ(600000U, bad) TH_LOG("WRITE from the dma-buf: byte %zu", bad);

	/* RDMA READ from B into the dma-buf, then B SENDs into it */
	cpu_begin(&self->d);
	memset(self->d.map, GUARD, BUF_SIZE);
	cpu_end(&self->d);
	stream_fill(self->bbuf, 5, into[0].off, into[0].len);
	op1(_metadata, &self->a, IBV_WR_RDMA_READ, D_IOVA(into[0].off),
	    into[0].len, self->dmr->lkey, B_ADDR(0), self->bmr->rkey);
	rsge.addr = D_IOVA(into[1].off);
	rsge.length = into[1].len;
	rsge.lkey = self->dmr->lkey;
	ASSERT_ERRNO(0, recv1(self->a.qp, 0x53, &rsge, 1));
	stream_fill(self->bbuf + BUF_SIZE, 5, into[1].off, into[1].len);
	op1(_metadata, &self->b, IBV_WR_SEND, B_ADDR(BUF_SIZE), into[1].len,
	    self->bmr->lkey, 0, 0);
	wc = wait_wc(_metadata, self->a.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0x53ULL, wc.wr_id);
	EXPECT_EQ(into[1].len, wc.byte_len);
	check_view(_metadata, &self->d, 5, into, 2);
}

/* The peer's atomics on the dma-buf, seen by the CPU. */
TEST_F_TIMEOUT(pair, remote_atomics, 120)
{
	const size_t off = 2 * 4096 + 64;
	uint64_t v, *res = (uint64_t *)self->bbuf;
	struct ibv_sge sge = { .addr = B_ADDR(0), .length = 8,
			       .lkey = self->bmr->lkey };
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_wc wc;

	cpu_begin(&self->d);
	v = 0x1122334455667788ULL;
	memcpy(self->d.map + off, &v, 8);
	cpu_end(&self->d);

	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = D_IOVA(off);
	wr.wr.atomic.rkey = self->dmr->rkey;
	wr.wr.atomic.compare_add = 0x11;
	ASSERT_ERRNO(0, ibv_post_send(self->b.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0x1122334455667788ULL, *res);

	wr.wr_id = 2;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 0x1122334455667799ULL;
	wr.wr.atomic.swap = 0xcafe;
	ASSERT_ERRNO(0, ibv_post_send(self->b.qp, &wr, &bad));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0x1122334455667799ULL, *res);

	cpu_begin(&self->d);
	memcpy(&v, self->d.map + off, 8);
	cpu_end(&self->d);
	EXPECT_EQ(0xcafeULL, v);
}

/*
 * A second MR of part of the dma-buf, at an offset with an iova of its
 * own and without remote write: the peer reads exactly that part through
 * it; its WRITE is a remote access error and changes nothing.
 */
TEST_F_TIMEOUT(pair, sub_mr_rights_and_range, 120)
{
	const uint64_t off = 5 * 4096 + 300, len = 3 * 4096 + 11;
	const uint64_t iova = 0x123400000000ULL + 300;
	struct ibv_mr *mr;
	size_t bad;

	cpu_begin(&self->d);
	stream_fill(self->d.map, 6, 0, BUF_SIZE);
	cpu_end(&self->d);
	mr = ibv_reg_dmabuf_mr(self->a.pd, off, len, iova, self->d.fd,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));

	/* iova maps to off: the bytes read are the dma-buf's at off */
	op1(_metadata, &self->b, IBV_WR_RDMA_READ, B_ADDR(0), len,
	    self->bmr->lkey, iova, mr->rkey);
	bad = stream_check(self->bbuf, 6, off, len);
	EXPECT_EQ(len, bad) TH_LOG("byte %zu", bad);

	/* no remote write: REM_ACCESS_ERR, the dma-buf unchanged */
	{
		struct ibv_sge sge = { .addr = B_ADDR(0), .length = 64,
				       .lkey = self->bmr->lkey };
		struct ibv_wc wc;

		memset(self->bbuf, 0, 64);
		ASSERT_ERRNO(0, post(self->b.qp, IBV_WR_RDMA_WRITE, 9, &sge, 1,
				     iova, mr->rkey));
		wc = wait_wc(_metadata, self->b.cq);
		EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
	}
	cpu_begin(&self->d);
	bad = stream_check(self->d.map, 6, 0, BUF_SIZE);
	cpu_end(&self->d);
	EXPECT_EQ((size_t)BUF_SIZE, bad) TH_LOG("byte %zu changed", bad);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/* One byte past the MR's end: a remote access error, nothing read. */
TEST_F_TIMEOUT(pair, read_past_the_end, 120)
{
	struct ibv_sge sge = { .addr = B_ADDR(0), .length = 2,
			       .lkey = self->bmr->lkey };
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post(self->b.qp, IBV_WR_RDMA_READ, 7, &sge, 1,
			     D_IOVA(BUF_SIZE - 1), self->dmr->rkey));
	wc = wait_wc(_metadata, self->b.cq);
	EXPECT_STATUS(IBV_WC_REM_ACCESS_ERR, wc);
}

/*
 * The MR holds the dma-buf: with the process's mapping, fd and GEM
 * handle gone, the peer still writes into it and reads it back.
 */
TEST_F_TIMEOUT(pair, mr_outlives_the_fd, 120)
{
	uint8_t *dst = self->bbuf + BUF_SIZE;
	size_t bad;

	dbuf_close(&self->d);
	stream_fill(self->bbuf, 7, 0, BUF_SIZE);
	memset(dst, 0, BUF_SIZE);
	op1(_metadata, &self->b, IBV_WR_RDMA_WRITE, B_ADDR(0), BUF_SIZE,
	    self->bmr->lkey, D_IOVA(0), self->dmr->rkey);
	op1(_metadata, &self->b, IBV_WR_RDMA_READ, B_ADDR(BUF_SIZE), BUF_SIZE,
	    self->bmr->lkey, D_IOVA(0), self->dmr->rkey);
	bad = stream_check(dst, 7, 0, BUF_SIZE);
	EXPECT_EQ((size_t)BUF_SIZE, bad) TH_LOG("byte %zu", bad);
}

/*
 * A deregisters its dma-buf MR while the peer's WRITEs stream into it:
 * every WR completes, successfully before, with one remote access error
 * and then flushes after; nothing lands after the dereg.
 */
TEST_F_TIMEOUT(pair, dereg_under_remote_traffic, 120)
{
	enum { N = 64, LEN = 4096 };
	struct ibv_send_wr wr[N], *bad = NULL;
	struct ibv_sge sge = { .addr = B_ADDR(0), .length = LEN,
			       .lkey = self->bmr->lkey };
	int i;

	memset(wr, 0, sizeof(wr));
	memset(self->bbuf, 0x11, LEN);
	for (i = 0; i < N; i++) {
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = D_IOVA((i % 16) * LEN);
		wr[i].wr.rdma.rkey = self->dmr->rkey;
		wr[i].next = i + 1 < N / 2 ? &wr[i + 1] : NULL;
	}
	ASSERT_ERRNO(0, ibv_post_send(self->b.qp, &wr[0], &bad));
	EXPECT_EQ(0, ibv_dereg_mr(self->dmr));
	self->dmr = NULL;
	for (i = N / 2; i < N; i++)
		wr[i].next = i + 1 < N ? &wr[i + 1] : NULL;
	ASSERT_ERRNO(0, ibv_post_send(self->b.qp, &wr[N / 2], &bad));
	cpu_begin(&self->d);
	memset(self->d.map, GUARD, 16 * LEN);
	cpu_end(&self->d);

	EXPECT_GE(N / 2, expect_dereg_race_wcs(_metadata, self->b.cq, N));
	usleep(100000);
	cpu_begin(&self->d);
	EXPECT_EQ((size_t)16 * LEN, first_not(self->d.map, 16 * LEN, GUARD));
	cpu_end(&self->d);
}

/*
 * p2p: the test exporter's BAR memory. The device reaches only host RAM:
 * registration fails with EFAULT, after the exporter mapped the dma-buf
 * for dray's device, and leaves no attachment or mapping behind.
 */

FIXTURE(p2p) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int exp;
	bool dray;
};

FIXTURE_SETUP(p2p)
{
	self->exp = exp_open();
	if (self->exp < 0)
		SETUP_SKIP("no %s (insmod dray_dmabuf_exp.ko): %s",
			   DRAY_EXP_DEV, strerror(errno));
	self->ctx = open_device(dev_name(0));
	if (!self->ctx) {
		close(self->exp);
		SETUP_SKIP("device %s: %s", dev_name(0), strerror(errno));
	}
	self->dray = is_dray(self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
}

FIXTURE_TEARDOWN(p2p)
{
	_metadata->trigger = 0;
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
	close(self->exp);
}

static void p2p_refused(struct __test_metadata *_metadata,
			FIXTURE_DATA(p2p) *self, uint32_t kind, size_t size)
{
	struct dray_exp_stats s0, s;
	struct ibv_mr *mr;
	struct dbuf b;
	uint64_t bar = 0;
	int err;

	err = exp_alloc(self->exp, kind, size, &b, &bar);
	if (err == ENODEV)
		SKIP(return, "no PCI memory BAR of %zu bytes outside RAM", size);
	ASSERT_EQ(0, err) TH_LOG("dma-buf: %s", strerror(err));
	TH_LOG("BAR memory at bus address %#llx", (unsigned long long)bar);
	ASSERT_EQ(0, exp_stats(self->exp, &s0));
	errno = 0;
	mr = ibv_reg_dmabuf_mr(self->pd, 0, size, MR_IOVA, b.fd, ALL_ACCESS);
	if (!mr && errno == EOPNOTSUPP && !self->dray) {
		dbuf_close(&b);
		SKIP(return, "%s has no dma-buf MRs (EOPNOTSUPP)", dev_name(0));
	}
	ASSERT_EQ(NULL, mr) {
		ibv_dereg_mr(mr);
		dbuf_close(&b);
	}
	EXPECT_EQ(EFAULT, errno) TH_LOG("errno %s (%d), expected EFAULT",
					strerror(errno), errno);
	ASSERT_EQ(0, exp_stats(self->exp, &s));
	/* it was attached to and mapped for the device, then let go */
	EXPECT_EQ(s0.maps + 1, s.maps);
	EXPECT_EQ(0U, s.attachments);
	EXPECT_EQ(0U, s.mappings);
	if (self->dray)
		EXPECT_EQ(0, strncmp(s.last_dev, "dray.", 5))
			TH_LOG("attached by %s", s.last_dev);
	dbuf_close(&b);
}

TEST_F(p2p, bar_refused)
{
	p2p_refused(_metadata, self, DRAY_EXP_BAR, 4 * 4096);
}

/* RAM with one BAR page last: the device checks every page. */
TEST_F(p2p, last_page_bar_refused)
{
	p2p_refused(_metadata, self, DRAY_EXP_MIXED, 64 * 4096);
}

/* RAM of the exporter: attached for dray's device while registered. */
TEST_F(p2p, ram_attached_while_registered)
{
	struct dray_exp_stats s;
	struct ibv_mr *mr;
	struct dbuf b;
	int err;

	err = exp_alloc(self->exp, DRAY_EXP_CONTIG, 16 * 4096, &b, NULL);
	ASSERT_EQ(0, err) TH_LOG("dma-buf: %s", strerror(err));
	errno = 0;
	mr = ibv_reg_dmabuf_mr(self->pd, 0, 16 * 4096, MR_IOVA, b.fd,
			       ALL_ACCESS);
	if (!mr && errno == EOPNOTSUPP && !self->dray) {
		dbuf_close(&b);
		SKIP(return, "%s has no dma-buf MRs (EOPNOTSUPP)", dev_name(0));
	}
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_dmabuf_mr: %s", strerror(errno));
	dbuf_close(&b);
	ASSERT_EQ(0, exp_stats(self->exp, &s));
	EXPECT_EQ(1U, s.attachments);
	EXPECT_EQ(1U, s.mappings);
	TH_LOG("attached by %s", s.last_dev);
	if (self->dray)
		EXPECT_EQ(0, strncmp(s.last_dev, "dray.", 5));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	ASSERT_EQ(0, exp_stats(self->exp, &s));
	EXPECT_EQ(0U, s.attachments);
	EXPECT_EQ(0U, s.mappings);
}

TEST_HARNESS_MAIN
