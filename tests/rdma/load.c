// SPDX-License-Identifier: GPL-2.0-only
/*
 * load: the device at its limits (run.sh's load group), between
 * DRAY_TEST_DEV_A and DRAY_TEST_DEV_B.
 *
 *   load [--qps N] [--mrs N] [--big-mb N]
 *
 * 1. RC QP pairs until the devices refuse one more (or --qps): the count
 *    must reach max_qp less the QPs the devices already have, and the
 *    refusal must be a clean errno. All of them are connected, and each
 *    pair moves verified data at the same time: an RDMA WRITE into B
 *    (checked by B once the SEND after it has arrived), a SEND (checked
 *    at B) and a READ from B (checked at A), every one of 3 x N WRs
 *    completing successfully.
 * 2. MRs on A until the device refuses one more (or --mrs): the count must
 *    reach max_mr less the MRs in use, and each MR is then the local SGE
 *    of a READ from B whose 64 bytes are checked.
 * 3. One MR on B of --big-mb MiB (default: half the available memory,
 *    at most max_mr_size): A writes 4 KiB at its first page, its last
 *    and 14 between, B checks them, and A reads them back.
 *
 * Along the way, the kernel memory each costs: the fall of MemFree less
 * the rise of this process's resident memory (its rings and buffers are
 * its own memory), per QP, per MR (from 1000 MRs on) and per 4 KiB page
 * registered (a CQ's ring is registered the same way). MemFree leaves
 * out the pages in the per-CPU lists: a few hundred KiB of noise. Prints "# memory: ..." lines and one summary line,
 * "load: PASS ..." or "load: FAIL (N errors)"; exit 0 on PASS, 1 on FAIL,
 * 2 on a set-up error.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define MSG		512		/* bytes of each pair's WRITE, SEND, READ */
#define MR_READ		64		/* bytes read into each of the many MRs */
#define MR_BUF		(1 << 16)	/* the memory the many MRs all cover */
#define MR_BATCH	4		/* READs in flight in step 2 (the SQ depth) */
#define BIG_PIECES	16
#define BIG_PIECE	4096
#define WAIT_MS		300000

struct side {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t len;
	struct rc_end base;
};

static struct side A, B;
static struct ibv_qp **qa, **qb;
static unsigned int npairs;

static struct {
	unsigned int qps, mrs;
	uint64_t big_mb;
} opt;

/* Kernel memory in use, in bytes: MemTotal - MemFree - our resident set. */
static int64_t kmem(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long tot = 0, fr = 0, size, res;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "MemTotal: %llu kB", &tot);
		sscanf(line, "MemFree: %llu kB", &fr);
	}
	fclose(f);
	f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%llu %llu", &size, &res) != 2)
		die("/proc/self/statm");
	fclose(f);
	return (int64_t)((tot - fr) * 1024) - (int64_t)(res * (uint64_t)page);
}

static uint64_t mem_available(void)
{
	unsigned long long v = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("/proc/meminfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
			break;
	fclose(f);
	return v * 1024;
}

static void side_open(struct side *s, int which, size_t len, int cqe)
{
	struct ibv_port_attr port;
	int g;

	s->ctx = open_device(dev_name(which));
	if (!s->ctx)
		die("open %s: %s", dev_name(which), strerror(errno));
	if (ibv_query_device(s->ctx, &s->attr) ||
	    ibv_query_port(s->ctx, RC_PORT, &port))
		die("query %s", dev_name(which));
	g = pick_gid(s->ctx, -1, &s->base.gid);
	if (g < 0)
		die("no GID on %s", dev_name(which));
	s->base.gid_index = g;
	s->base.mtu = port.active_mtu;
	s->base.rd_atomic = 1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd ? ibv_create_cq(s->ctx, cqe, NULL, NULL, 0) : NULL;
	s->len = len;
	s->buf = s->cq ? page_buf(len) : NULL;
	s->mr = s->buf ? ibv_reg_mr(s->pd, s->buf, len,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ) : NULL;
	if (!s->mr)
		die("PD, CQ or MR on %s: %s", dev_name(which), strerror(errno));
}

static struct ibv_qp *qp_new(struct side *s)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = {
			.max_send_wr = 4,
			.max_recv_wr = 2,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ibv_create_qp(s->pd, &qa);
}

/* Collect n successful completions on s's CQ; fail on anything else. */
static void collect(struct side *s, const char *what, unsigned int n,
		    void (*check)(const struct ibv_wc *wc))
{
	uint64_t t0 = now_us();
	struct ibv_wc wc[64];
	unsigned int got = 0;
	int k, r;

	while (got < n) {
		r = ibv_poll_cq(s->cq, 64, wc);
		if (r < 0)
			die("poll %s: %d", what, r);
		for (k = 0; k < r; k++) {
			if (wc[k].status != IBV_WC_SUCCESS)
				fail("%s: wr_id %llu: %s (vendor_err %#x)", what,
				     (unsigned long long)wc[k].wr_id,
				     ibv_wc_status_str(wc[k].status),
				     wc[k].vendor_err);
			else if (check)
				check(&wc[k]);
		}
		got += (unsigned int)r;
		if (!r && now_us() - t0 > WAIT_MS * 1000ULL) {
			fail("%s: %u of %u completions in %d s", what, got, n,
			     WAIT_MS / 1000);
			return;
		}
	}
}

/*
 * Pair i's areas: A [i*3*MSG]: WRITE source, SEND source, READ target;
 * B [i*4*MSG]: WRITE target, receive, READ source (and one spare).
 */
static uint8_t *a_at(unsigned int i, int k)
{
	return A.buf + ((size_t)i * 3 + k) * MSG;
}

static uint8_t *b_at(unsigned int i, int k)
{
	return B.buf + ((size_t)i * 4 + k) * MSG;
}

static void check_recv(const struct ibv_wc *wc)
{
	unsigned int i = (unsigned int)wc->wr_id;
	size_t bad;

	if (wc->byte_len != MSG)
		fail("pair %u: SEND of %u bytes, not %d", i, wc->byte_len, MSG);
	bad = stream_check(b_at(i, 1), 2 * i + 1, 0, MSG);
	if (bad != MSG)
		fail("pair %u: SEND byte %zu is wrong", i, bad);
	/* The WRITE before the SEND is placed by now. */
	bad = stream_check(b_at(i, 0), 2 * i, 0, MSG);
	if (bad != MSG)
		fail("pair %u: WRITE byte %zu is wrong", i, bad);
}

static void check_read(const struct ibv_wc *wc)
{
	unsigned int i = (unsigned int)(wc->wr_id >> 1);
	size_t bad;

	if (!(wc->wr_id & 1))
		return;		/* the SEND */
	bad = stream_check(a_at(i, 2), 1000003 + i, 0, MSG);
	if (bad != MSG)
		fail("pair %u: READ byte %zu is wrong", i, bad);
}

static int post1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		 void *laddr, uint32_t lkey, uint32_t len, void *raddr,
		 uint32_t rkey, bool signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* Step 1: every QP pair the devices allow, all moving data at once. */
static void step_qps(void)
{
	/* One more than max_qp: that one must be refused. */
	unsigned int cap = opt.qps ? opt.qps : (unsigned int)A.attr.max_qp + 1;
	int64_t k0, k1;
	const char *step;
	struct rc_params rp;
	uint64_t t0;
	unsigned int i;
	int err = 0;

	qa = calloc(cap, sizeof(*qa));
	qb = calloc(cap, sizeof(*qb));
	if (!qa || !qb)
		die("calloc");
	k0 = kmem();
	for (npairs = 0; npairs < cap; npairs++) {
		qa[npairs] = qp_new(&A);
		if (!qa[npairs]) {
			err = errno;
			break;
		}
		qb[npairs] = qp_new(&B);
		if (!qb[npairs]) {
			err = errno;
			ibv_destroy_qp(qa[npairs]);
			break;
		}
	}
	k1 = kmem();
	printf("# qps: %u pairs created (max_qp %d on A, %d on B)%s%s\n", npairs,
	       A.attr.max_qp, B.attr.max_qp, err ? ", then: " : "",
	       err ? strerror(err) : "");
	if (!opt.qps && (err != ENOMEM && err != ENOSPC && err != EAGAIN))
		fail("the QP after the last: errno %d (%s), not ENOMEM", err,
		     strerror(err));
	/* QP0 and QP1 of each device are the kernel's (GSI) */
	if (!opt.qps && npairs + 2 < (unsigned int)A.attr.max_qp)
		fail("only %u QPs, max_qp is %d", npairs, A.attr.max_qp);
	if (npairs)
		printf("# memory: %lld bytes of kernel memory per QP (%u on each device)\n",
		       (long long)((k1 - k0) / (2 * (int64_t)npairs)), npairs);

	rc_params_default(&rp);
	for (i = 0; i < npairs; i++) {
		struct rc_end ea = A.base, eb = B.base;
		struct ibv_sge sge = {
			.addr = (uintptr_t)b_at(i, 1), .length = MSG,
			.lkey = B.mr->lkey,
		};
		struct ibv_recv_wr rwr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		ea.qpn = qa[i]->qp_num;
		ea.psn = i;
		eb.qpn = qb[i]->qp_num;
		eb.psn = 0x10000 + i;
		err = rc_connect(qa[i], &ea, &eb, &rp, &step);
		if (!err)
			err = rc_connect(qb[i], &eb, &ea, &rp, &step);
		if (!err)
			err = ibv_post_recv(qb[i], &rwr, &bad);
		if (err)
			die("pair %u: connect or post_recv (%s): %s", i,
			    step, strerror(err));
		stream_fill(a_at(i, 0), 2 * i, 0, MSG);
		stream_fill(a_at(i, 1), 2 * i + 1, 0, MSG);
		stream_fill(b_at(i, 2), 1000003 + i, 0, MSG);
	}
	/* Everything in flight at once, then reaped. */
	t0 = now_us();
	for (i = 0; i < npairs; i++) {
		err = post1(qa[i], IBV_WR_RDMA_WRITE, 0, a_at(i, 0), A.mr->lkey,
			    MSG, b_at(i, 0), B.mr->rkey, false);
		if (!err)
			err = post1(qa[i], IBV_WR_SEND, 2ULL * i, a_at(i, 1),
				    A.mr->lkey, MSG, NULL, 0, true);
		if (!err)
			err = post1(qa[i], IBV_WR_RDMA_READ, 2ULL * i + 1,
				    a_at(i, 2), A.mr->lkey, MSG, b_at(i, 2),
				    B.mr->rkey, true);
		if (err)
			die("pair %u: post: %s", i, strerror(err));
	}
	collect(&B, "B receives", npairs, check_recv);
	collect(&A, "A sends and READs", 2 * npairs, check_read);
	printf("# qps: %u pairs, %u WRs, every one completed and checked, in %llu ms\n",
	       npairs, 3 * npairs, (unsigned long long)(now_us() - t0) / 1000);
}

/* Step 2: MRs up to max_mr on A, each the target of a READ. */
static void step_mrs(void)
{
	unsigned int cap = opt.mrs ? opt.mrs : (unsigned int)A.attr.max_mr + 1;
	struct ibv_mr **mrs = calloc(cap, sizeof(*mrs));
	uint8_t *mem = page_buf(MR_BUF);
	unsigned int n, i, done = 0, posted = 0;
	int64_t k0, k1;
	int err = 0;

	if (!mrs || !mem)
		die("MR table");
	memset(mem, 0xa5, MR_BUF);	/* resident before k0 */
	k0 = kmem();
	for (n = 0; n < cap; n++) {
		mrs[n] = ibv_reg_mr(A.pd, mem, MR_BUF, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[n]) {
			err = errno;
			break;
		}
	}
	k1 = kmem();
	printf("# mrs: %u MRs of 64 KiB registered (max_mr %d)%s%s\n", n,
	       A.attr.max_mr, err ? ", then: " : "", err ? strerror(err) : "");
	if (n >= 1000)
		printf("# memory: %lld bytes of kernel memory per MR of 16 pages\n",
		       (long long)((k1 - k0) / n));
	/* A has 2 MRs (buffer, and this test's), B's are B's own */
	if (!opt.mrs && n + 4 < (unsigned int)A.attr.max_mr)
		fail("only %u MRs, max_mr is %d", n, A.attr.max_mr);
	if (!opt.mrs && err != ENOMEM && err != ENOSPC && err != EAGAIN)
		fail("the MR after the last: errno %d (%s), not ENOMEM", err,
		     strerror(err));
	if (!npairs)
		die("no QP for the READs");
	stream_fill(B.buf, 77, 0, B.len);
	while (done < n) {
		while (posted < n && posted - done < MR_BATCH) {
			i = posted;
			err = post1(qa[0], IBV_WR_RDMA_READ, i,
				    mem + (size_t)i * MR_READ % MR_BUF,
				    mrs[i]->lkey, MR_READ,
				    B.buf + (size_t)i * MR_READ % B.len,
				    B.mr->rkey, true);
			if (err)
				die("READ %u: %s", i, strerror(err));
			posted++;
		}
		{
			struct ibv_wc wc[MR_BATCH];
			int r = poll_n(A.cq, wc, 1, WAIT_MS), k;

			if (r < 1)
				die("READ into MR %u: no completion", done);
			for (k = 0; k < r; k++) {
				size_t off = (size_t)wc[k].wr_id * MR_READ;
				size_t bad;

				if (wc[k].status != IBV_WC_SUCCESS) {
					fail("READ into MR %llu: %s",
					     (unsigned long long)wc[k].wr_id,
					     ibv_wc_status_str(wc[k].status));
					continue;
				}
				bad = stream_check(mem + off % MR_BUF, 77,
						   off % B.len, MR_READ);
				if (bad != MR_READ)
					fail("READ into MR %llu: byte %zu",
					     (unsigned long long)wc[k].wr_id,
					     bad);
			}
			done += (unsigned int)r;
		}
	}
	printf("# mrs: a READ into each of the %u MRs, every one checked\n", n);
	for (i = 0; i < n; i++)
		if ((err = ibv_dereg_mr(mrs[i])))
			fail("dereg MR %u: %s", i, strerror(err));
	free(mrs);
	munmap(mem, MR_BUF);
}

/* Step 3: one big MR on B, written and read at 16 places. */
static void step_big(void)
{
	uint64_t len = opt.big_mb << 20, off, step;
	int64_t k0, k1;
	struct ibv_mr *mr;
	uint8_t *mem;
	unsigned int i;
	size_t bad;

	if (!len) {
		len = mem_available() / 2;
		if (len > B.attr.max_mr_size)
			len = B.attr.max_mr_size;
		len &= ~((1ULL << 21) - 1);
	}
	mem = page_buf(len);
	if (!mem)
		die("%llu MiB: %s", (unsigned long long)(len >> 20),
		    strerror(errno));
	memset(mem, 0x5a, len);		/* resident before k0 */
	k0 = kmem();
	mr = ibv_reg_mr(B.pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	k1 = kmem();
	if (!mr) {
		fail("an MR of %llu MiB: %s", (unsigned long long)(len >> 20),
		     strerror(errno));
		return;
	}
	printf("# big: an MR of %llu MiB (%llu pages) on B\n",
	       (unsigned long long)(len >> 20),
	       (unsigned long long)(len / 4096));
	printf("# memory: %.1f bytes of kernel memory per 4 KiB page registered\n",
	       (double)(k1 - k0) / (double)(len / 4096));
	step = (len - BIG_PIECE) / (BIG_PIECES - 1);
	step &= ~(uint64_t)(BIG_PIECE - 1);
	for (i = 0; i < BIG_PIECES; i++) {
		off = i == BIG_PIECES - 1 ? len - BIG_PIECE : i * step;
		stream_fill(A.buf, 900 + i, 0, BIG_PIECE);
		if (post1(qa[0], IBV_WR_RDMA_WRITE, i, A.buf, A.mr->lkey,
			  BIG_PIECE, mem + off, mr->rkey, true))
			die("big WRITE %u", i);
		collect(&A, "big WRITE", 1, NULL);
		bad = stream_check(mem + off, 900 + i, 0, BIG_PIECE);
		if (bad != BIG_PIECE)
			fail("big MR at %llu: byte %zu not written",
			     (unsigned long long)off, bad);
		memset(A.buf, 0, BIG_PIECE);
		if (post1(qa[0], IBV_WR_RDMA_READ, i, A.buf, A.mr->lkey,
			  BIG_PIECE, mem + off, mr->rkey, true))
			die("big READ %u", i);
		collect(&A, "big READ", 1, NULL);
		bad = stream_check(A.buf, 900 + i, 0, BIG_PIECE);
		if (bad != BIG_PIECE)
			fail("big MR at %llu: byte %zu read back wrong",
			     (unsigned long long)off, bad);
	}
	printf("# big: 16 pieces of 4 KiB written and read back, the last page included\n");
	if (ibv_dereg_mr(mr))
		fail("dereg the big MR");
	munmap(mem, len);
}

static void side_close(struct side *s, struct ibv_qp **qps)
{
	unsigned int i;

	for (i = 0; i < npairs; i++)
		if (ibv_destroy_qp(qps[i]))
			fail("destroy QP %u", i);
	if (ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->cq) ||
	    ibv_dealloc_pd(s->pd) || ibv_close_device(s->ctx))
		fail("teardown");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "qps", required_argument, NULL, 'q' },
		{ "mrs", required_argument, NULL, 'm' },
		{ "big-mb", required_argument, NULL, 'b' },
		{ 0 }
	};
	int c, cqe;
	size_t la, lb;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'q':
			opt.qps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			opt.mrs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'b':
			opt.big_mb = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: load [--qps N] [--mrs N] [--big-mb N]\n");
			return 2;
		}
	}
	fail_style = (struct fail_style){
		.fail = "# ERROR: ", .die = "load: SETUP ", .status = 2,
		.shown = 20, .more = "# ERROR: (more not shown)",
	};
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Sized for the most QPs a device of this kind may have. */
	la = (size_t)65536 * 3 * MSG / 16;
	lb = (size_t)65536 * 4 * MSG / 16;
	cqe = 65536 / 16 * 2 + 64;
	side_open(&A, 0, la, cqe);
	side_open(&B, 1, lb, cqe);
	if ((unsigned int)A.attr.max_qp > 4096 && !opt.qps)
		opt.qps = 4096;

	step_qps();
	step_mrs();
	step_big();

	side_close(&A, qa);
	side_close(&B, qb);
	if (fail_count) {
		printf("load: FAIL (%llu errors)\n",
		       (unsigned long long)fail_count);
		return 1;
	}
	printf("load: PASS\n");
	return 0;
}
