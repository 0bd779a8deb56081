// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames from the network (issue 13, part 3): RoCEv2 frames built from
 * live targets and then mutated, each with a valid ICRC (a few without),
 * sent from a raw socket on the peer's netdev straight into the port of
 * DEV_A while another QP pair of the same devices (run.sh starts
 * tests/rdma/integrity beside this program) moves verified data.
 *
 * The targets, all on DEV_A and all this program's own:
 *   rc_a   an RC QP connected to rc_b on DEV_B; requests (every RC, UC,
 *          XRC and IBTA 1.5 request opcode) in and around its PSN window
 *          and responses (ACKs, NAKs, READ responses, atomic ACKs) in and
 *          around the window of the READs it has outstanding at rc_b;
 *   ud_a   a UD QP with receives posted, and the GSI QP (QP1);
 *   xtgt   an XRC target QP of domain D with an XRC SRQ of D receiving
 *          into the receive buffers, and an XRC SRQ of another domain
 *          whose receives point into L: XRC requests name either SRQ (or
 *          none), and the other domain's must never complete or write;
 *   keys   the R_Keys of MRs with every right (W), remote read only (R),
 *          local write only (L, and the receive buffers), of another PD
 *          (P2), of a deregistered MR (X), a few variants of each key, and
 *          random ones;
 *   fields addresses at and around every MR's edges, lengths from 0 to
 *          2^32 - 1, pad counts, AETH syndromes, Q_Keys, P_Keys, and
 *          random QPNs (never one of another program's live QPs: the list
 *          comes from `rdma resource show qp` and is refreshed);
 * then a quarter of those frames get 1 to 3 random bits flipped anywhere from
 * the IP header on (the IPv4 header checksum recomputed unless the flip is
 * meant to break it), some are cut short or lengthened (lengths fixed or
 * not), and the ICRC is computed over the result; 3 % carry a bad ICRC.
 *
 * Every epoch (32 frames) starts with a fence (a UD SEND to ud_a whose
 * receive completion proves every frame before it was handled), then
 * rc_a and rc_b are reset and connected again with new PSNs, rc_a posts
 * receives and two READs from rc_b, and a well-formed RDMA WRITE of a
 * fresh pattern is injected at rc_a's expected PSN: it must land (the
 * positive control: frames do reach the device and are executed). The
 * next 16 frames are well-formed requests at the PSNs rc_a expects next,
 * as a peer would send them (so that most are executed, and the rights
 * of the keys they name are what stands between them and the memory);
 * one in about seven names a region its key may not reach, which ends
 * the run of executed requests until the next epoch. The last 16 are the
 * mutated mix above. The program fails if
 *   - a byte of R, L, P2, X or the unregistered guard pages around every
 *     region changes (memory outside the rights of the keys a frame
 *     names), checked every 64 epochs and at the end;
 *   - a receive of the other domain's XRC SRQ completes;
 *   - a control WRITE does not land, or a fence is not received;
 *   - after the last frame, rc_a and rc_b cannot be connected again and
 *     move checked data with SEND, WRITE and READ (the device still
 *     works).
 * The integrity pair's own checks and the kernel log (run.sh) cover the
 * rest: that pair's data stays exact, and the kernel reports nothing.
 *
 * usage: inject --dev-a NAME --dev-b NAME --if-a NETDEV --if-b NETDEV
 *               [--frames N] [--seed S] [--while-pid PID] [--max-frames M]
 *
 * Frames go out of --if-b (the netdev of DEV_B) towards --if-a (that of
 * DEV_A) from an AF_PACKET socket: root only. With --while-pid, frames
 * keep coming while PID lives, at least N and at most M of them. Exit 0
 * pass, 1 fail, 2 setup error, 4 skip (no raw socket).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "common.h"
/* The model's own frame builders and ICRC, compiled for user space. */
#include "kshim.h"
#include "dev_wire.c"
#include "dev_icrc.c"

#define PAGE		4096u
#define EPOCH		32		/* frames between two fences */
#define WELLFORMED	16		/* of them well-formed requests first */
#define CHECK_EVERY	64		/* epochs between two memory checks */
#define QKEY		0x11ec7ed0u
#define CQE		4096
#define RC_RECVS	16
#define UD_RECVS	32
#define CTRL_LEN	64
#define MAX_FOREIGN	4096
#define XSRQ_WQES	32

/* The regions of A's memory, in this order, a guard page before each. */
enum { R_W, R_R, R_L, R_P2, R_X, R_RB, NREG };

static const struct {
	const char *name;
	unsigned int pages;
	bool may_change;
} reg_def[NREG] = {
	[R_W] = { "W (every right)", 16, true },
	[R_R] = { "R (remote read only)", 4, false },
	[R_L] = { "L (local write only)", 4, false },
	[R_P2] = { "P2 (every right, another PD)", 4, false },
	[R_X] = { "X (deregistered)", 4, false },
	[R_RB] = { "receive and READ buffers", 64, true },
};

/* RB: pages 0..15 rc_a's receives, 16..47 ud_a's, 48..63 READ targets */
#define RB_UD		16
#define RB_RD		48

struct opts {
	const char *dev_a, *dev_b, *if_a, *if_b;
	uint64_t frames, max_frames, seed;
	pid_t while_pid;
};

static struct {
	struct opts o;
	struct rng rng;
	struct ibv_context *ca, *cb;
	struct ibv_pd *pd, *pd2, *pdb;
	struct ibv_cq *cq_rc, *cq_ud, *cqb;
	struct ibv_qp *rc_a, *ud_a, *rc_b;
	struct ibv_mr *mr[NREG], *mrb;
	uint32_t rkey[NREG];
	uint8_t *mem;		/* guard, region, guard, region, ... guard */
	size_t mem_len;
	uint8_t *reg[NREG];
	size_t reg_len[NREG];
	uint8_t *bbuf;		/* B's memory: rc_a's READs read it */
	struct rc_end ea, eb;
	struct rc_params rcp;
	enum ibv_mtu mtu;
	uint32_t mtu_bytes;
	/* the wire */
	int fd;
	uint8_t mac_a[6], mac_b[6];
	uint8_t gid4_a[16], gid4_b[16], gid6_a[16], gid6_b[16];
	bool have_v6;
	/* PSNs of the epoch */
	uint32_t rq_psn;	/* rc_a's expected PSN at the start */
	uint32_t epsn;		/* what it expects next if all went in */
	uint32_t sq_psn;	/* rc_a's first PSN (its READs) */
	/* QPNs of other programs on DEV_A */
	uint32_t foreign[MAX_FOREIGN];
	unsigned int n_foreign;
	/* what happened */
	uint64_t sent, send_err, mutated, bad_icrc, cut, grown, v6;
	uint64_t by_class[8];
	uint64_t epochs, controls, fences, ud_recv, rc_recv, checks;
	uint32_t ud_posted, marker;
	/* XRC: the target, its domain's SRQ and another domain's */
	struct ibv_xrcd *xrcd, *xrcd2;
	struct ibv_cq *cq_x, *cq_x2;	/* of the SRQ of D, of the other */
	struct ibv_srq *xsrq, *xsrq2;
	struct ibv_qp *xtgt;
	uint32_t xsrqn, xsrqn2;
	uint32_t x_psn;		/* what xtgt expects next if all went in */
	uint32_t xsrq_posted;
	uint64_t x_recv;
} t;

static const char *class_name[8] = {
	"rc_a requests", "rc_a responses", "ud_a UD", "GSI QP1",
	"random QPN", "random opcode", "well-formed", "XRC target",
};

/* --- set-up ----------------------------------------------------------- */

static uint64_t region_seed(int r)
{
	return t.o.seed * 31 + (uint64_t)r + 1;
}

/* Fill what must not change (regions and guards) with its stream. */
static void fill_memory(void)
{
	int r;

	stream_fill(t.mem, region_seed(100), 0, t.mem_len);
	for (r = 0; r < NREG; r++)
		if (reg_def[r].may_change)
			memset(t.reg[r], 0, t.reg_len[r]);
}

/*
 * Every byte that must not change: the guards (the whole mapping outside
 * the regions) and the regions no key may write. Returns the failures.
 */
static unsigned int check_memory(const char *when)
{
	unsigned int bad = 0;
	size_t pos = 0, end, n;
	int r;

	t.checks++;
	for (r = 0; r <= NREG; r++) {
		end = r < NREG ? (size_t)(t.reg[r] - t.mem) : t.mem_len;
		n = stream_check(t.mem + pos, region_seed(100), pos, end - pos);
		if (n != end - pos) {
			fail("%s: guard byte %zu before %s changed to %#x",
			     when, pos + n, r < NREG ? reg_def[r].name : "the end",
			     t.mem[pos + n]);
			bad++;
		}
		if (r == NREG)
			break;
		pos = end + t.reg_len[r];
		if (reg_def[r].may_change)
			continue;
		n = stream_check(t.reg[r], region_seed(100), end, t.reg_len[r]);
		if (n != t.reg_len[r]) {
			fail("%s: %s byte %zu changed to %#x", when,
			     reg_def[r].name, n, t.reg[r][n]);
			bad++;
		}
	}
	return bad;
}

static void read_mac(const char *ifname, uint8_t *mac)
{
	char path[128];
	unsigned int m[6];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3],
			 &m[4], &m[5]) != 6)
		die("cannot read %s", path);
	fclose(f);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
}

/* The IPv6 link-local RoCEv2 GID (fe80::/64) of a device, if any. */
static bool gid6(struct ibv_context *ctx, uint8_t *gid)
{
	struct ibv_port_attr port;
	union ibv_gid g;
	int i;

	if (ibv_query_port(ctx, RC_PORT, &port))
		return false;
	for (i = 0; i < port.gid_tbl_len && i < 16; i++) {
		if (ibv_query_gid(ctx, RC_PORT, i, &g))
			continue;
		if (g.raw[0] == 0xfe && g.raw[1] == 0x80) {
			memcpy(gid, g.raw, 16);
			return true;
		}
	}
	return false;
}

static struct ibv_context *must_open(const char *name)
{
	struct ibv_context *c = open_device(name);

	if (!c)
		die("device %s: %s", name, strerror(errno));
	return c;
}

static struct ibv_mr *must_reg(struct ibv_pd *pd, void *p, size_t len,
			       int access, const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr %s: %s", what, strerror(errno));
	return mr;
}

static void setup_memory(void)
{
	const int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	size_t pages = 1;
	uint8_t *p;
	int r;

	for (r = 0; r < NREG; r++)
		pages += reg_def[r].pages + 1;
	t.mem_len = pages * PAGE;
	t.mem = page_buf(t.mem_len);
	if (!t.mem)
		die("%zu bytes of memory", t.mem_len);
	p = t.mem + PAGE;
	for (r = 0; r < NREG; r++) {
		t.reg[r] = p;
		t.reg_len[r] = (size_t)reg_def[r].pages * PAGE;
		p += t.reg_len[r] + PAGE;
	}
	fill_memory();
	t.mr[R_W] = must_reg(t.pd, t.reg[R_W], t.reg_len[R_W], all, "W");
	t.mr[R_R] = must_reg(t.pd, t.reg[R_R], t.reg_len[R_R],
			     IBV_ACCESS_REMOTE_READ, "R");
	t.mr[R_L] = must_reg(t.pd, t.reg[R_L], t.reg_len[R_L],
			     IBV_ACCESS_LOCAL_WRITE, "L");
	t.mr[R_P2] = must_reg(t.pd2, t.reg[R_P2], t.reg_len[R_P2], all, "P2");
	t.mr[R_X] = must_reg(t.pd, t.reg[R_X], t.reg_len[R_X], all, "X");
	t.mr[R_RB] = must_reg(t.pd, t.reg[R_RB], t.reg_len[R_RB],
			      IBV_ACCESS_LOCAL_WRITE, "receive buffers");
	for (r = 0; r < NREG; r++)
		t.rkey[r] = t.mr[r]->rkey;
	/* X: its key stays in the frames, the MR goes */
	if (ibv_dereg_mr(t.mr[R_X]))
		die("ibv_dereg_mr X");
	t.mr[R_X] = NULL;
	t.bbuf = page_buf(16 * PAGE);
	if (!t.bbuf)
		die("B's memory");
	stream_fill(t.bbuf, 77, 0, 16 * PAGE);
	t.mrb = must_reg(t.pdb, t.bbuf, 16 * PAGE, all, "B");
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      enum ibv_qp_type type, uint32_t recvs)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = recvs,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void setup_ud(void)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RC_PORT,
		.qkey = QKEY,
	};

	if (ibv_modify_qp(t.ud_a, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		die("UD QP to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(t.ud_a, &a, IBV_QP_STATE))
		die("UD QP to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(t.ud_a, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD QP to RTS");
}

static struct ibv_srq *make_xsrq(struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = XSRQ_WQES, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = t.pd,
		.xrcd = xrcd,
		.cq = cq,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(t.ca, &a);

	if (!srq)
		die("XRC SRQ: %s", strerror(errno));
	return srq;
}

static void setup_xrc(void)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .length = PAGE, .lkey = t.mr[R_L]->lkey };
	uint32_t i;
	int err;

	t.xrcd = ibv_open_xrcd(t.ca, &xa);
	t.xrcd2 = ibv_open_xrcd(t.ca, &xa);
	t.cq_x = ibv_create_cq(t.ca, CQE, NULL, NULL, 0);
	t.cq_x2 = ibv_create_cq(t.ca, CQE, NULL, NULL, 0);
	if (!t.xrcd || !t.xrcd2 || !t.cq_x || !t.cq_x2)
		die("XRC domains and CQs: %s", strerror(errno));
	t.xsrq = make_xsrq(t.xrcd, t.cq_x);
	t.xsrq2 = make_xsrq(t.xrcd2, t.cq_x2);
	if (ibv_get_srq_num(t.xsrq, &t.xsrqn) ||
	    ibv_get_srq_num(t.xsrq2, &t.xsrqn2))
		die("ibv_get_srq_num");
	qa.xrcd = t.xrcd;
	t.xtgt = ibv_create_qp_ex(t.ca, &qa);
	if (!t.xtgt)
		die("XRC target QP: %s", strerror(errno));
	/* the other domain's receives point into L: nothing may land */
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < XSRQ_WQES; i++) {
		sge.addr = (uintptr_t)(t.reg[R_L] + (size_t)(i % 4) * PAGE);
		err = ibv_post_srq_recv(t.xsrq2, &wr, &bad);
		if (err)
			die("ibv_post_srq_recv (other domain): %s",
			    strerror(err));
	}
}

/* The XRC target from any state to RTS, expecting PSN @psn. */
static void xtgt_connect(uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RC_PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (qp_to_state(t.xtgt, IBV_QPS_RESET) ||
	    ibv_modify_qp(t.xtgt, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("XRC target to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = t.mtu;
	a.dest_qp_num = t.rc_b->qp_num;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = t.eb.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)t.ea.gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = RC_PORT;
	if (ibv_modify_qp(t.xtgt, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("XRC target to RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.sq_psn = 0;
	if (ibv_modify_qp(t.xtgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_SQ_PSN))
		die("XRC target to RTS: %s", strerror(errno));
}

/*
 * Drain the XRC CQs (the other domain's must have nothing: no frame may
 * reach its SRQ through our target); fill our SRQ's receives again.
 */
static void xrc_refill(void)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .length = PAGE, .lkey = t.mr[R_RB]->lkey };
	struct ibv_wc wc[32];
	int n, err;

	while ((n = ibv_poll_cq(t.cq_x2, 1, wc)) > 0)
		fail("a receive of the other domain's XRC SRQ completed: %s, %u bytes",
		     ibv_wc_status_str(wc[0].status), wc[0].byte_len);
	if (n < 0)
		die("ibv_poll_cq (XRC, other domain)");
	while ((n = ibv_poll_cq(t.cq_x, 32, wc)) > 0) {
		t.x_recv += (uint64_t)n;
		t.xsrq_posted -= (uint32_t)n;
	}
	if (n < 0)
		die("ibv_poll_cq (XRC)");
	wr.sg_list = &sge;
	wr.num_sge = 1;
	while (t.xsrq_posted < XSRQ_WQES) {
		sge.addr = (uintptr_t)(t.reg[R_RB] +
				       (size_t)(t.xsrq_posted % 16) * PAGE);
		err = ibv_post_srq_recv(t.xsrq, &wr, &bad);
		if (err)
			die("ibv_post_srq_recv: %s", strerror(err));
		t.xsrq_posted++;
	}
}

static void end_addr(struct ibv_context *ctx, struct rc_end *e, uint8_t *gid)
{
	struct ibv_port_attr port;

	if (ibv_query_port(ctx, RC_PORT, &port))
		die("ibv_query_port");
	e->gid_index = pick_gid(ctx, -1, &e->gid);
	if (e->gid_index < 0 || !ipv4_mapped(&e->gid))
		die("no RoCEv2 IPv4 GID");
	memcpy(gid, e->gid.raw, 16);
	e->mtu = port.active_mtu;
	e->rd_atomic = 16;
}

static void setup(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	cpu_set_t cpus;
	int cpu = sched_getcpu();

	/*
	 * One CPU for every send: veth queues a frame on the sending CPU's
	 * backlog, so frames sent from two CPUs may be handled out of order,
	 * and the fence must come after everything sent before it.
	 */
	CPU_ZERO(&cpus);
	CPU_SET(cpu < 0 ? 0 : cpu, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity: %s", strerror(errno));

	t.fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (t.fd < 0) {
		printf("inject: SKIP: no raw socket: %s\n", strerror(errno));
		exit(4);
	}
	sll.sll_ifindex = (int)if_nametoindex(t.o.if_b);
	if (!sll.sll_ifindex || bind(t.fd, (struct sockaddr *)&sll,
				     sizeof(sll)))
		die("bind to %s: %s", t.o.if_b, strerror(errno));
	read_mac(t.o.if_a, t.mac_a);
	read_mac(t.o.if_b, t.mac_b);

	t.ca = must_open(t.o.dev_a);
	t.cb = must_open(t.o.dev_b);
	t.pd = ibv_alloc_pd(t.ca);
	t.pd2 = ibv_alloc_pd(t.ca);
	t.pdb = ibv_alloc_pd(t.cb);
	t.cq_rc = ibv_create_cq(t.ca, CQE, NULL, NULL, 0);
	t.cq_ud = ibv_create_cq(t.ca, CQE, NULL, NULL, 0);
	t.cqb = ibv_create_cq(t.cb, CQE, NULL, NULL, 0);
	if (!t.pd || !t.pd2 || !t.pdb || !t.cq_rc || !t.cq_ud || !t.cqb)
		die("PDs and CQs: %s", strerror(errno));
	setup_memory();
	t.rc_a = make_qp(t.pd, t.cq_rc, IBV_QPT_RC, RC_RECVS);
	t.ud_a = make_qp(t.pd, t.cq_ud, IBV_QPT_UD, UD_RECVS);
	t.rc_b = make_qp(t.pdb, t.cqb, IBV_QPT_RC, RC_RECVS);
	setup_ud();
	setup_xrc();
	end_addr(t.ca, &t.ea, t.gid4_a);
	end_addr(t.cb, &t.eb, t.gid4_b);
	t.have_v6 = gid6(t.ca, t.gid6_a) && gid6(t.cb, t.gid6_b);
	t.ea.qpn = t.rc_a->qp_num;
	t.eb.qpn = t.rc_b->qp_num;
	t.mtu = t.ea.mtu < t.eb.mtu ? t.ea.mtu : t.eb.mtu;
	t.mtu_bytes = 128u << t.mtu;
	rc_params_default(&t.rcp);
	t.rcp.timeout = 14;
	t.rcp.retry_cnt = 1;
	t.rcp.rnr_retry = 1;
}

/* --- QPNs of other programs -------------------------------------------- */

static void refresh_foreign(void)
{
	char cmd[128], word[64];
	unsigned long q;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show qp link %s/%d 2>/dev/null",
		 t.o.dev_a, RC_PORT);
	f = popen(cmd, "r");
	if (!f)
		die("%s: %s", cmd, strerror(errno));
	t.n_foreign = 0;
	while (fscanf(f, "%63s", word) == 1) {
		if (strcmp(word, "lqpn") || fscanf(f, "%lu", &q) != 1)
			continue;
		if (q == t.rc_a->qp_num || q == t.ud_a->qp_num ||
		    q == t.xtgt->qp_num || q <= 1)
			continue;
		if (t.n_foreign < MAX_FOREIGN)
			t.foreign[t.n_foreign++] = (uint32_t)q;
	}
	if (pclose(f))
		die("%s failed", cmd);
}

static bool is_foreign(uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < t.n_foreign; i++)
		if (t.foreign[i] == qpn)
			return true;
	return false;
}

/* A QPN that is not another program's. */
static uint32_t pick_qpn(uint32_t qpn)
{
	while (is_foreign(qpn & 0xffffff))
		qpn = (uint32_t)rng_next(&t.rng);
	return qpn & 0xffffff;
}

/* --- frames ------------------------------------------------------------- */

struct frame {
	uint8_t b[DRAY_ETH_HLEN + DRAY_IPV6_HLEN + DRAY_UDP_HLEN +
		  DRAY_HDR_MAX + 4096 + 64 + DRAY_ICRC_BYTES + 64];
	uint32_t len;
	bool ipv6;
};

static uint32_t l3_len(const struct frame *f)
{
	return f->ipv6 ? DRAY_IPV6_HLEN : DRAY_IPV4_HLEN;
}

/* IP and UDP lengths for a frame of f->len bytes. */
static void fix_lengths(struct frame *f)
{
	uint8_t *ip = f->b + DRAY_ETH_HLEN, *udp = ip + l3_len(f);
	uint32_t ip_len = f->len - DRAY_ETH_HLEN;
	uint16_t v;

	if (f->len < DRAY_ETH_HLEN + l3_len(f) + DRAY_UDP_HLEN)
		return;
	v = htons((uint16_t)(f->ipv6 ? ip_len - DRAY_IPV6_HLEN : ip_len));
	memcpy(ip + (f->ipv6 ? 4 : 2), &v, 2);
	v = htons((uint16_t)(ip_len - l3_len(f)));
	memcpy(udp + 4, &v, 2);
}

static void fix_ip_csum(struct frame *f)
{
	uint8_t *ip = f->b + DRAY_ETH_HLEN;
	uint16_t c;

	if (f->ipv6)
		return;
	ip[10] = 0;
	ip[11] = 0;
	c = dray_wire_ip_csum(ip, DRAY_IPV4_HLEN);
	memcpy(ip + 10, &c, 2);
}

/* The last 4 bytes: the ICRC of everything from the IP header on. */
static void put_icrc(struct frame *f)
{
	uint32_t hdrs = DRAY_ETH_HLEN + l3_len(f) + DRAY_UDP_HLEN;
	uint8_t *ip = f->b + DRAY_ETH_HLEN, *udp = ip + l3_len(f);
	uint32_t crc, l4_len, i;

	if (f->len < hdrs + sizeof(struct dray_bth) + DRAY_ICRC_BYTES)
		return;
	l4_len = f->len - DRAY_ICRC_BYTES - (uint32_t)(udp - f->b);
	crc = dray_icrc_begin(ip, f->ipv6, udp,
			      DRAY_UDP_HLEN + sizeof(struct dray_bth));
	crc = dray_icrc_update(crc, udp + DRAY_UDP_HLEN +
			       sizeof(struct dray_bth),
			       l4_len - DRAY_UDP_HLEN -
			       (uint32_t)sizeof(struct dray_bth));
	crc = dray_icrc_final(crc);
	for (i = 0; i < DRAY_ICRC_BYTES; i++)
		f->b[f->len - DRAY_ICRC_BYTES + i] = (uint8_t)(crc >> (8 * i));
}

/* A well-formed frame of @p with @pay payload bytes (random unless @data). */
static void build(struct frame *f, struct dray_pkt *p, uint32_t pay,
		  const void *data, bool ipv6)
{
	struct dray_wire_addr a = {
		.ipv6 = ipv6,
		.hop_limit = 64,
		.sport = (uint16_t)(DRAY_SPORT_MIN |
				    (rng_next(&t.rng) & 0x3fff)),
	};
	uint32_t hlen, l2l4, i, pad;
	uint8_t *payload;

	memcpy(a.smac, t.mac_b, 6);
	memcpy(a.dmac, t.mac_a, 6);
	memcpy(a.sgid, ipv6 ? t.gid6_b : t.gid4_b, 16);
	memcpy(a.dgid, ipv6 ? t.gid6_a : t.gid4_a, 16);
	if (!p->pkey)
		p->pkey = DRAY_PKEY_DEFAULT;
	pad = dray_wire_pad(pay);
	if (!p->pad)
		p->pad = (uint8_t)pad;
	hlen = dray_wire_hdr_len(dray_opcodes[p->opcode].flags);
	f->ipv6 = ipv6;
	l2l4 = dray_wire_build_l3(&a, hlen + pay + pad + DRAY_ICRC_BYTES, f->b);
	dray_wire_build(p, f->b + l2l4);
	payload = f->b + l2l4 + hlen;
	if (data)
		memcpy(payload, data, pay);
	else
		for (i = 0; i < pay; i++)
			payload[i] = (uint8_t)rng_next(&t.rng);
	memset(payload + pay, 0, pad);
	f->len = l2l4 + hlen + pay + pad + DRAY_ICRC_BYTES;
	put_icrc(f);
}

static void send_frame(const struct frame *f)
{
	ssize_t n;

	do {
		n = send(t.fd, f->b, f->len, 0);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)f->len)
		t.sent++;
	else
		t.send_err++;
}

/* Opcodes by what they exercise. */
static const uint8_t rc_requests[] = {
	DRAY_OP_SEND_FIRST, DRAY_OP_SEND_MIDDLE, DRAY_OP_SEND_LAST,
	DRAY_OP_SEND_LAST_IMM, DRAY_OP_SEND_ONLY, DRAY_OP_SEND_ONLY_IMM,
	DRAY_OP_WRITE_FIRST, DRAY_OP_WRITE_MIDDLE, DRAY_OP_WRITE_LAST,
	DRAY_OP_WRITE_LAST_IMM, DRAY_OP_WRITE_ONLY, DRAY_OP_WRITE_ONLY_IMM,
	DRAY_OP_READ_REQUEST, DRAY_OP_CMP_SWAP, DRAY_OP_FETCH_ADD,
	DRAY_OP_SEND_LAST_INV, DRAY_OP_SEND_ONLY_INV, DRAY_OP_FLUSH,
	DRAY_OP_ATOMIC_WRITE,
};

static const uint8_t rc_responses[] = {
	DRAY_OP_READ_RESP_FIRST, DRAY_OP_READ_RESP_MIDDLE,
	DRAY_OP_READ_RESP_LAST, DRAY_OP_READ_RESP_ONLY, DRAY_OP_ACK,
	DRAY_OP_ATOMIC_ACK,
};

#define PICK(arr)	((arr)[rng_below(&t.rng, sizeof(arr) / sizeof((arr)[0]))])

/* An R_Key: one of the MRs', a variant of one, or random. */
static uint32_t pick_rkey(int *reg)
{
	uint32_t k;

	*reg = -1;
	switch (rng_below(&t.rng, 10)) {
	case 0:
		return (uint32_t)rng_next(&t.rng);
	case 1:
		k = t.rkey[rng_below(&t.rng, NREG)];
		return k ^ (uint32_t)rng_range(&t.rng, 1, 0xff);
	case 2: case 3: case 4:
		*reg = R_W;
		return t.rkey[R_W];
	default:
		*reg = (int)rng_below(&t.rng, NREG);
		return t.rkey[*reg];
	}
}

/* An address in, at the edges of, or far from region @reg's MR. */
static uint64_t pick_va(int reg, uint32_t len)
{
	uint64_t base, rlen;

	if (reg < 0 || rng_one_in(&t.rng, 10)) {
		if (rng_one_in(&t.rng, 2))
			return rng_next(&t.rng);
		reg = (int)rng_below(&t.rng, NREG);
	}
	base = (uintptr_t)t.reg[reg];
	rlen = t.reg_len[reg];
	switch (rng_below(&t.rng, 6)) {
	case 0:
		return base - rng_range(&t.rng, 1, 64);
	case 1:
		return base + rlen - len + rng_range(&t.rng, 1, 64);
	case 2:
		return base + rlen;
	case 3:
		return base + rlen - len;
	default:
		return base + (rng_below(&t.rng, rlen) & ~7ULL);
	}
}

static uint32_t pick_len(void)
{
	static const uint32_t odd[] = {
		0, 1, 7, 8, 63, 64, 1023, 1024, 1025, 4096, 65536, 65537,
		0x7fffffff, 0x80000000, 0xffffffff,
	};

	if (rng_one_in(&t.rng, 3))
		return PICK(odd);
	return (uint32_t)rng_below(&t.rng, 3 * t.mtu_bytes);
}

/* A PSN in or near a window starting at @base, or anywhere. */
static uint32_t pick_psn(uint32_t base)
{
	switch (rng_below(&t.rng, 8)) {
	case 0:
		return (uint32_t)rng_next(&t.rng) & 0xffffff;
	case 1:
		return dray_psn_add(base, (uint32_t)rng_range(&t.rng, 1, 1 << 23));
	case 2:
		return dray_psn_add(base, 0x1000000 -
				    (uint32_t)rng_range(&t.rng, 1, 300));
	default:
		return dray_psn_add(base, (uint32_t)rng_below(&t.rng, 6));
	}
}

/* The payload a frame of @p carries (any length for a mutated one). */
static uint32_t pick_payload(const struct dray_pkt *p)
{
	u32 f = dray_opcodes[p->opcode].flags;

	if (!(f & DRAY_OPF_PAYLOAD))
		return rng_one_in(&t.rng, 16) ? (uint32_t)rng_range(&t.rng, 1, 64) : 0;
	if (f & DRAY_OPF_ATOMIC_WRITE)
		return rng_one_in(&t.rng, 4) ? (uint32_t)rng_below(&t.rng, 17) : 8;
	if (rng_one_in(&t.rng, 8))
		return t.mtu_bytes + (uint32_t)rng_range(&t.rng, 1, 64);
	if (rng_one_in(&t.rng, 4))
		return t.mtu_bytes;
	return (uint32_t)rng_below(&t.rng, t.mtu_bytes + 1);
}

/* Fill every header field an opcode may carry with something aimed. */
static void aim(struct dray_pkt *p, uint32_t psn_base)
{
	int reg;

	p->psn = pick_psn(psn_base);
	p->se = rng_one_in(&t.rng, 4);
	p->ackreq = rng_one_in(&t.rng, 2);
	p->resv8a = rng_one_in(&t.rng, 8) ? (uint8_t)rng_next(&t.rng) : 0;
	if (rng_one_in(&t.rng, 16))
		p->pkey = (uint16_t)rng_next(&t.rng);
	if (rng_one_in(&t.rng, 16))
		p->pad = (uint8_t)rng_below(&t.rng, 4);
	p->rkey = pick_rkey(&reg);
	p->dma_len = pick_len();
	p->va = pick_va(reg, p->dma_len < PAGE ? p->dma_len : 8);
	p->swap_add = rng_next(&t.rng);
	p->compare = rng_one_in(&t.rng, 2) ? 0 : rng_next(&t.rng);
	p->syndrome = (uint8_t)rng_next(&t.rng);
	if (rng_one_in(&t.rng, 2))
		p->syndrome &= 0x1f;	/* an ACK with a credit count */
	p->msn = (uint32_t)rng_next(&t.rng) & 0xffffff;
	p->orig = rng_next(&t.rng);
	p->imm = (__be32)rng_next(&t.rng);
	p->qkey = rng_one_in(&t.rng, 4) ? (uint32_t)rng_next(&t.rng) : QKEY;
	p->src_qpn = (uint32_t)rng_next(&t.rng) & 0xffffff;
	p->flush_type = (uint8_t)rng_below(&t.rng, 4);
	p->flush_level = (uint8_t)rng_below(&t.rng, 4);
	switch (rng_below(&t.rng, 4)) {
	case 0:
		p->xrc_srqn = t.xsrqn2;
		break;
	case 1:
		p->xrc_srqn = (uint32_t)rng_next(&t.rng) & 0xffffff;
		break;
	default:
		p->xrc_srqn = t.xsrqn;
		break;
	}
}

/* Bits flipped, lengths changed, the ICRC broken: the mutations. */
static void mutate(struct frame *f)
{
	uint32_t start = DRAY_ETH_HLEN, n, i, bit;
	bool lengths = rng_one_in(&t.rng, 2);

	if (rng_one_in(&t.rng, 4) && f->len > start + DRAY_ICRC_BYTES) {
		n = (uint32_t)rng_range(&t.rng, 1, 3);
		for (i = 0; i < n; i++) {
			bit = (uint32_t)rng_below(&t.rng,
					(f->len - DRAY_ICRC_BYTES - start) * 8);
			f->b[start + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		t.mutated++;
		if (!rng_one_in(&t.rng, 10))
			fix_ip_csum(f);
	}
	if (rng_one_in(&t.rng, 20)) {
		f->len = (uint32_t)rng_range(&t.rng, DRAY_ETH_HLEN, f->len - 1);
		t.cut++;
		if (lengths)
			fix_lengths(f);
		fix_ip_csum(f);
	} else if (rng_one_in(&t.rng, 20)) {
		n = (uint32_t)rng_range(&t.rng, 1, 64);
		for (i = 0; i < n; i++)
			f->b[f->len + i] = (uint8_t)rng_next(&t.rng);
		f->len += n;
		t.grown++;
		if (lengths)
			fix_lengths(f);
		fix_ip_csum(f);
	}
	put_icrc(f);
	if (rng_one_in(&t.rng, 33) && f->len > DRAY_ETH_HLEN) {
		f->b[f->len - 1] ^= 0x5a;
		t.bad_icrc++;
	}
}

/*
 * A range of @len bytes for a request: inside W (mostly), or inside one
 * of the regions no key may reach remotely, or across an edge. Sets the
 * R_Key and returns the address.
 */
static uint64_t target(uint32_t len, uint32_t align, uint32_t *rkey)
{
	int r = R_W;
	uint64_t off, room;

	if (rng_one_in(&t.rng, 7))
		r = (int)rng_range(&t.rng, R_R, NREG - 1);
	*rkey = t.rkey[r];
	room = t.reg_len[r] > len ? t.reg_len[r] - len : 0;
	off = rng_below(&t.rng, room + 1) & ~(uint64_t)(align - 1);
	if (r == R_W && rng_one_in(&t.rng, 20))
		off = t.reg_len[r] - len + rng_range(&t.rng, 1, 16);
	return (uintptr_t)t.reg[r] + off;
}

/*
 * A well-formed request to rc_a at the PSN it expects next, as a peer
 * would send it: every RC request kind, messages of one to three
 * packets, lengths that agree. Most are allowed and executed; one in
 * about seven names a key or range it may not use, which fails the
 * request and puts rc_a in ERR until the next epoch.
 */
static void wellformed_request(void)
{
	/* one in four to the XRC target, naming its domain's SRQ */
	bool xrc = rng_one_in(&t.rng, 4);
	uint32_t *epsn = xrc ? &t.x_psn : &t.epsn;
	uint8_t x = xrc ? DRAY_OP_XRC : 0;
	static const uint8_t ops[] = {
		DRAY_OP_WRITE_ONLY, DRAY_OP_WRITE_ONLY_IMM, DRAY_OP_WRITE_FIRST,
		DRAY_OP_SEND_ONLY, DRAY_OP_SEND_ONLY_IMM, DRAY_OP_SEND_ONLY_INV,
		DRAY_OP_SEND_FIRST, DRAY_OP_READ_REQUEST, DRAY_OP_CMP_SWAP,
		DRAY_OP_FETCH_ADD, DRAY_OP_ATOMIC_WRITE,
	};
	struct dray_pkt p = { 0 };
	uint32_t pay, total, i, npkts = 1;
	uint64_t atomic8 = rng_next(&t.rng);
	struct frame f;
	uint8_t first;

	do {
		p.opcode = PICK(ops);
	} while (xrc && !dray_opcodes[p.opcode | x].flags);
	p.qpn = xrc ? t.xtgt->qp_num : t.rc_a->qp_num;
	p.psn = *epsn;
	/* mostly its own SRQ; else the other domain's, or none */
	p.xrc_srqn = !rng_one_in(&t.rng, 7) ? t.xsrqn :
		     rng_one_in(&t.rng, 2) ? t.xsrqn2 :
		     (uint32_t)rng_next(&t.rng) & 0xffffff;
	p.ackreq = rng_one_in(&t.rng, 2);
	p.imm = (__be32)rng_next(&t.rng);
	switch (p.opcode) {
	case DRAY_OP_WRITE_FIRST:
	case DRAY_OP_SEND_FIRST:
		npkts = (uint32_t)rng_range(&t.rng, 2, 3);
		total = (npkts - 1) * t.mtu_bytes +
			(uint32_t)rng_range(&t.rng, 1, t.mtu_bytes);
		p.dma_len = total;
		p.va = target(total, 1, &p.rkey);
		first = p.opcode;
		for (i = 0; i < npkts; i++) {
			pay = i + 1 < npkts ? t.mtu_bytes :
					      total - i * t.mtu_bytes;
			/* FIRST, MIDDLE, LAST follow each other */
			p.opcode = (uint8_t)((first + (i ? (i + 1 < npkts ?
							    1 : 2) : 0)) | x);
			p.psn = dray_psn_add(*epsn, i);
			p.pad = 0;
			build(&f, &p, pay, NULL, false);
			send_frame(&f);
		}
		*epsn = dray_psn_add(*epsn, npkts);
		t.by_class[xrc ? 7 : 6]++;
		return;
	case DRAY_OP_READ_REQUEST:
		p.dma_len = (uint32_t)rng_below(&t.rng, 4 * t.mtu_bytes + 1);
		p.va = target(p.dma_len, 1, &p.rkey);
		npkts = p.dma_len ? (p.dma_len + t.mtu_bytes - 1) / t.mtu_bytes :
				    1;
		pay = 0;
		break;
	case DRAY_OP_CMP_SWAP:
	case DRAY_OP_FETCH_ADD:
		p.va = target(8, 8, &p.rkey);
		p.swap_add = rng_next(&t.rng);
		p.compare = rng_one_in(&t.rng, 2) ? 0 : rng_next(&t.rng);
		pay = 0;
		break;
	case DRAY_OP_ATOMIC_WRITE:
		p.dma_len = 8;
		p.va = target(8, 8, &p.rkey);
		pay = 8;
		break;
	case DRAY_OP_SEND_ONLY_INV:
		p.rkey = rng_one_in(&t.rng, 2) ? (uint32_t)rng_next(&t.rng) :
						 t.rkey[R_X];
		fallthrough;
	case DRAY_OP_SEND_ONLY:
	case DRAY_OP_SEND_ONLY_IMM:
		pay = (uint32_t)rng_below(&t.rng, t.mtu_bytes + 1);
		break;
	default:	/* WRITE Only, with or without immediate */
		pay = (uint32_t)rng_below(&t.rng, t.mtu_bytes + 1);
		p.dma_len = pay;
		p.va = target(pay, 1, &p.rkey);
		break;
	}
	p.opcode |= x;
	build(&f, &p, pay, p.opcode == DRAY_OP_ATOMIC_WRITE ? &atomic8 : NULL,
	      false);
	send_frame(&f);
	*epsn = dray_psn_add(*epsn, npkts);
	t.by_class[xrc ? 7 : 6]++;
}

/* One frame of the mix. */
static void random_frame(void)
{
	struct dray_pkt p = { 0 };
	struct frame f;
	uint32_t c = (uint32_t)rng_below(&t.rng, 100), base = t.epsn;
	bool v6 = t.have_v6 && rng_one_in(&t.rng, 10);
	int k;

	if (c < 8) {
		/* any XRC opcode (or another) to the XRC target */
		k = 7;
		do {
			p.opcode = (uint8_t)(DRAY_OP_XRC |
					     rng_below(&t.rng, 0x20));
		} while (!dray_opcodes[p.opcode].flags &&
			 !rng_one_in(&t.rng, 8));
		p.qpn = t.xtgt->qp_num;
		base = t.x_psn;
	} else if (c < 45) {
		k = 0;
		p.opcode = PICK(rc_requests);
		if (rng_one_in(&t.rng, 8))	/* UC or XRC of the same */
			p.opcode |= rng_one_in(&t.rng, 2) ? DRAY_OP_UC :
							   DRAY_OP_XRC;
		if (!dray_opcodes[p.opcode].flags)
			p.opcode = dray_wire_op(p.opcode);
		p.qpn = t.rc_a->qp_num;
	} else if (c < 62) {
		k = 1;
		p.opcode = PICK(rc_responses);
		p.qpn = t.rc_a->qp_num;
		base = t.sq_psn;
	} else if (c < 77) {
		k = 2;
		p.opcode = rng_one_in(&t.rng, 2) ? DRAY_OP_UD_SEND_ONLY :
						   DRAY_OP_UD_SEND_ONLY_IMM;
		p.qpn = t.ud_a->qp_num;
	} else if (c < 80) {
		k = 3;
		p.opcode = DRAY_OP_UD_SEND_ONLY;
		p.qpn = 1;
	} else if (c < 90) {
		k = 4;
		do {
			p.opcode = (uint8_t)rng_next(&t.rng);
		} while (!dray_opcodes[p.opcode].flags);
		p.qpn = pick_qpn((uint32_t)rng_next(&t.rng));
		if (rng_one_in(&t.rng, 2))
			p.qpn = pick_qpn(t.rc_a->qp_num +
					 (uint32_t)rng_range(&t.rng, 1, 4));
	} else {
		k = 5;
		p.opcode = (uint8_t)rng_next(&t.rng);
		p.qpn = rng_one_in(&t.rng, 2) ? t.rc_a->qp_num :
						t.ud_a->qp_num;
	}
	t.by_class[k]++;
	aim(&p, base);
	if (k == 3)
		p.qkey = 0x80010000;	/* the GSI Q_Key */
	build(&f, &p, pick_payload(&p), NULL, v6);
	if (v6)
		t.v6++;
	mutate(&f);
	send_frame(&f);
}

/* --- epochs ------------------------------------------------------------- */

static void post_ud_recvs(void)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .length = PAGE, .lkey = t.mr[R_RB]->lkey };

	wr.sg_list = &sge;
	wr.num_sge = 1;
	while (t.ud_posted < UD_RECVS) {
		sge.addr = (uintptr_t)(t.reg[R_RB] +
				       (size_t)(RB_UD + t.ud_posted) * PAGE);
		if (ibv_post_recv(t.ud_a, &wr, &bad))
			die("ibv_post_recv (UD): %s", strerror(errno));
		t.ud_posted++;
	}
}

/* Drain ud_a's CQ; true if the fence's receive was among it. */
static bool drain_ud(uint32_t marker)
{
	struct ibv_wc wc[32];
	bool seen = false;
	int n, i;

	while ((n = ibv_poll_cq(t.cq_ud, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			t.ud_posted--;
			t.ud_recv++;
			if (wc[i].status == IBV_WC_SUCCESS &&
			    (wc[i].wc_flags & IBV_WC_WITH_IMM) &&
			    ntohl(wc[i].imm_data) == marker)
				seen = true;
		}
	}
	if (n < 0)
		die("ibv_poll_cq (UD)");
	return seen;
}

static void drain(struct ibv_cq *cq, uint64_t *count)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0)
		*count += (uint64_t)n;
	if (n < 0)
		die("ibv_poll_cq");
}

/*
 * A UD SEND to ud_a whose receive completes only after the device has
 * handled every frame sent before it (all are sent from one CPU, so veth
 * hands them to the port in order, and the port takes them in order).
 * Tried three times.
 */
static void fence(void)
{
	struct dray_pkt p = {
		.opcode = DRAY_OP_UD_SEND_ONLY_IMM,
		.qkey = QKEY,
		.src_qpn = 0x4242,
	};
	struct frame f;
	uint64_t deadline;
	int tries;

	p.qpn = t.ud_a->qp_num;
	for (tries = 0; tries < 3; tries++) {
		drain_ud(0);
		post_ud_recvs();
		p.imm = htonl(++t.marker);
		build(&f, &p, 16, NULL, false);
		send_frame(&f);
		deadline = now_us() + 3000000;
		while (now_us() < deadline) {
			if (drain_ud(t.marker)) {
				t.fences++;
				post_ud_recvs();
				return;
			}
			usleep(200);
		}
	}
	fail("fence %u: the UD SEND to ud_a never arrived", t.marker);
	die("the device stopped taking frames");
}

/* rc_a and rc_b from any state to RTS with new PSNs; rc_a's receives. */
static void reconnect(void)
{
	struct ibv_recv_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .length = PAGE, .lkey = t.mr[R_RB]->lkey };
	const char *step;
	int err, i;

	/* before RESET, which takes a QP's completions off its CQ */
	drain(t.cq_rc, &t.rc_recv);
	drain(t.cqb, &t.rc_recv);
	if (qp_to_state(t.rc_a, IBV_QPS_RESET) ||
	    qp_to_state(t.rc_b, IBV_QPS_RESET))
		die("RC QPs to RESET");
	t.sq_psn = (uint32_t)rng_next(&t.rng) & 0xffffff;
	t.rq_psn = (uint32_t)rng_next(&t.rng) & 0xffffff;
	t.ea.psn = t.sq_psn;
	t.eb.psn = t.rq_psn;
	err = rc_connect(t.rc_a, &t.ea, &t.eb, &t.rcp, &step);
	if (!err)
		err = rc_connect(t.rc_b, &t.eb, &t.ea, &t.rcp, &step);
	if (err)
		die("reconnect: %s: %s", step, strerror(err));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	for (i = 0; i < RC_RECVS; i++) {
		sge.addr = (uintptr_t)(t.reg[R_RB] + (size_t)i * PAGE);
		if (ibv_post_recv(t.rc_a, &wr, &bad))
			die("ibv_post_recv (RC): %s", strerror(errno));
	}
	xrc_refill();
	t.x_psn = (uint32_t)rng_next(&t.rng) & 0xffffff;
	xtgt_connect(t.x_psn);
}

/* Two READs from rc_b's memory: a window for response frames. */
static void post_reads(void)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .lkey = t.mr[R_RB]->lkey };
	int i;

	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.rkey = t.mrb->rkey;
	for (i = 0; i < 2; i++) {
		sge.addr = (uintptr_t)(t.reg[R_RB] +
				       (size_t)(RB_RD + 4 * i) * PAGE);
		sge.length = 3 * t.mtu_bytes;
		wr.wr.rdma.remote_addr = (uintptr_t)t.bbuf + (size_t)i * PAGE;
		if (ibv_post_send(t.rc_a, &wr, &bad))
			die("READ from rc_a: %s", strerror(errno));
	}
}

/*
 * The positive control: a well-formed RDMA WRITE Only at rc_a's expected
 * PSN, a fresh pattern to the start of W; it must land.
 */
static void control(void)
{
	struct dray_pkt p = {
		.opcode = DRAY_OP_WRITE_ONLY,
		.ackreq = true,
		.psn = t.rq_psn,
		.rkey = t.rkey[R_W],
		.va = (uintptr_t)t.reg[R_W],
		.dma_len = CTRL_LEN,
	};
	uint8_t pat[CTRL_LEN];
	uint64_t deadline;
	struct frame f;

	p.qpn = t.rc_a->qp_num;
	stream_fill(pat, t.o.seed ^ 0xc0c0, t.epochs * CTRL_LEN, CTRL_LEN);
	build(&f, &p, CTRL_LEN, pat, false);
	send_frame(&f);
	deadline = now_us() + 5000000;
	while (now_us() < deadline) {
		if (!memcmp((const void *)t.reg[R_W], pat, CTRL_LEN)) {
			t.controls++;
			t.epsn = dray_psn_add(t.rq_psn, 1);
			return;
		}
		usleep(100);
	}
	fail("epoch %" PRIu64 ": the control WRITE at PSN %#x did not land",
	     t.epochs, t.rq_psn);
}

/* rc_a and rc_b after everything: SEND, WRITE and READ, data checked. */
static void final_traffic(void)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge = { .lkey = t.mrb->lkey };
	uint8_t *w = t.reg[R_W] + 4 * PAGE, *rb = t.reg[R_RB];
	struct ibv_wc wc;
	int n;

	reconnect();		/* posts rc_a's receives into RB pages 0.. */
	memset(w, 0, 2 * PAGE);
	memset(rb, 0, PAGE);
	stream_fill(t.bbuf, 91, 0, 2 * PAGE);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	/* B writes 2 pages into W, then reads them back into its page 4 */
	sge.addr = (uintptr_t)t.bbuf;
	sge.length = 2 * PAGE;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)w;
	wr.wr.rdma.rkey = t.rkey[R_W];
	if (ibv_post_send(t.rc_b, &wr, &bad))
		die("final WRITE: %s", strerror(errno));
	n = poll_n(t.cqb, &wc, 1, 20000);
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		fail("after the frames: B's WRITE: %s",
		     n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	if (stream_check(w, 91, 0, 2 * PAGE) != 2 * PAGE)
		fail("after the frames: B's WRITE did not land whole");
	sge.addr = (uintptr_t)t.bbuf + 4 * PAGE;
	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(t.rc_b, &wr, &bad))
		die("final READ: %s", strerror(errno));
	n = poll_n(t.cqb, &wc, 1, 20000);
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		fail("after the frames: B's READ: %s",
		     n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	if (stream_check(t.bbuf + 4 * PAGE, 91, 0, 2 * PAGE) != 2 * PAGE)
		fail("after the frames: B's READ brought other bytes");
	/* and a SEND into rc_a's first receive */
	sge.addr = (uintptr_t)t.bbuf;
	sge.length = 1000;
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_send(t.rc_b, &wr, &bad))
		die("final SEND: %s", strerror(errno));
	n = poll_n(t.cqb, &wc, 1, 20000);
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		fail("after the frames: B's SEND: %s",
		     n == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	n = poll_n(t.cq_rc, &wc, 1, 20000);
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.byte_len != 1000)
		fail("after the frames: rc_a's receive: %s, %u bytes",
		     n == 1 ? ibv_wc_status_str(wc.status) : "no completion",
		     n == 1 ? wc.byte_len : 0);
	else if (stream_check(rb, 91, 0, 1000) != 1000)
		fail("after the frames: rc_a received other bytes");
}

static bool pid_alive(pid_t pid)
{
	return pid > 0 && !kill(pid, 0);
}

static bool more_frames(void)
{
	if (t.o.while_pid && pid_alive(t.o.while_pid))
		return t.sent + t.send_err < t.o.max_frames;
	return t.sent + t.send_err < t.o.frames;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: inject --dev-a NAME --dev-b NAME --if-a NETDEV --if-b NETDEV\n"
		"              [--frames N] [--seed S] [--while-pid PID] [--max-frames M]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev-a", required_argument, NULL, 'a' },
		{ "dev-b", required_argument, NULL, 'b' },
		{ "if-a", required_argument, NULL, 'A' },
		{ "if-b", required_argument, NULL, 'B' },
		{ "frames", required_argument, NULL, 'n' },
		{ "max-frames", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "while-pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool pid_lived = false;
	uint64_t t0;
	int c, k;

	fail_style = (struct fail_style){
		.fail = "inject: FAIL: ",
		.die = "inject: error: ",
		.status = 2,
		.shown = 20,
		.more = "inject: (more failures not shown)",
	};
	t.o.frames = 100000;
	t.o.seed = now_us();
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': t.o.dev_a = optarg; break;
		case 'b': t.o.dev_b = optarg; break;
		case 'A': t.o.if_a = optarg; break;
		case 'B': t.o.if_b = optarg; break;
		case 'n': t.o.frames = strtoull(optarg, NULL, 0); break;
		case 'm': t.o.max_frames = strtoull(optarg, NULL, 0); break;
		case 's': t.o.seed = strtoull(optarg, NULL, 0); break;
		case 'p': t.o.while_pid = (pid_t)atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!t.o.dev_a || !t.o.dev_b || !t.o.if_a || !t.o.if_b) {
		usage(stderr);
		return 2;
	}
	if (t.o.max_frames < t.o.frames)
		t.o.max_frames = 4 * t.o.frames;
	t.rng.s = t.o.seed;
	printf("inject: seed %" PRIu64 ", %s (%s) <- %s, at least %" PRIu64
	       " frames\n", t.o.seed, t.o.dev_a, t.o.if_a, t.o.if_b,
	       t.o.frames);
	setup();
	refresh_foreign();
	printf("inject: rc_a %#x, ud_a %#x, %u QPs of other programs on %s avoided\n",
	       t.rc_a->qp_num, t.ud_a->qp_num, t.n_foreign, t.o.dev_a);
	t0 = now_us();
	while (more_frames()) {
		if (t.o.while_pid && pid_alive(t.o.while_pid))
			pid_lived = true;
		fence();
		reconnect();
		post_reads();
		control();
		for (k = 0; k < EPOCH && more_frames(); k++) {
			if (k < WELLFORMED)
				wellformed_request();
			else
				random_frame();
		}
		t.epochs++;
		if (t.epochs % CHECK_EVERY == 0) {
			check_memory("during");
			refresh_foreign();
		}
		if (fail_count)
			break;
	}
	fence();
	check_memory("at the end");
	final_traffic();
	check_memory("after the final traffic");

	printf("inject: %" PRIu64 " frames in %.1f s (%" PRIu64
	       " not sent), %" PRIu64 " epochs\n", t.sent,
	       (double)(now_us() - t0) / 1e6, t.send_err, t.epochs);
	for (k = 0; k < 8; k++)
		printf("inject:   %-16s %" PRIu64 "\n", class_name[k],
		       t.by_class[k]);
	printf("inject: %" PRIu64 " with flipped bits, %" PRIu64 " cut, %" PRIu64
	       " lengthened, %" PRIu64 " bad ICRC, %" PRIu64 " over IPv6\n",
	       t.mutated, t.cut, t.grown, t.bad_icrc, t.v6);
	printf("inject: %" PRIu64 " of %" PRIu64 " control WRITEs landed, %"
	       PRIu64 " fences, %" PRIu64 " UD receives, %" PRIu64
	       " RC completions, %" PRIu64 " XRC SRQ completions, %" PRIu64
	       " memory checks\n", t.controls, t.epochs, t.fences, t.ud_recv,
	       t.rc_recv, t.x_recv, t.checks);
	if (t.o.while_pid)
		printf("inject: pid %d %s while frames were sent\n",
		       (int)t.o.while_pid, pid_lived ? "ran" : "did not run");
	if (t.controls != t.epochs)
		fail("%" PRIu64 " control WRITEs did not land",
		     t.epochs - t.controls);
	if (fail_count) {
		printf("inject: FAIL (%" PRIu64 " failures)\n", fail_count);
		return 1;
	}
	printf("inject: PASS\n");
	return 0;
}
