// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unreliable datagram (UD) QPs in user space: sends and receives through
 * address handles, the GRH a receive gets, Q_Key checks, the completion
 * errors IBTA asks for, and bad input to the UD verbs. kselftest harness;
 * every test runs in four variants: between two devices or within one,
 * over the IPv4 RoCEv2 GID or the IPv6 link-local one.
 *
 *   DRAY_TEST_DEV_A (default dray0)    the sender, A
 *   DRAY_TEST_DEV_B (default dray1)    the receiver, B, of the two_dev
 *                                      variants (one_dev: A's device)
 *
 * Nothing here is specific to dray: the same program runs against
 * Soft-RoCE (rxe0/rxe1) as a reference.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <poll.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "harness.h"

#define QUIET_MS	500	/* how long "nothing arrives" is watched */
#define QKEY		0x11111111U
#define QKEY_OWN	0x80000000U	/* in a WR: use the QP's own Q_Key */
#define GRH_LEN		40
#define BUF_LEN		(64 * 1024)
#define RBUF		0		/* receive area: buf[0..32K) */
#define SBUF		(32 * 1024)	/* send area: buf[32K..64K) */
#define NWR		32
#define NSGE		4
#define INLINE		64
#define HOP_LIMIT	64
#define TCLASS		0x28
#define FILL		0xee		/* receive buffers before a receive */

/* One side: a context, PDs, CQs, a UD QP in RTS, a buffer, an AH. */
struct ud_end {
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	uint32_t mtu;			/* payload bytes: the active MTU */
	struct ibv_pd *pd, *pd2;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;		/* buf[0..BUF_LEN), LOCAL_WRITE */
	struct ibv_ah *ah;		/* to the other end */
};

FIXTURE(ud) {
	struct ud_end a, b;
	struct ibv_qp *qp;	/* a test's own QP, destroyed in teardown */
};

FIXTURE_VARIANT(ud) {
	bool one_dev;	/* B on A's device (a second context) */
	bool ipv6;	/* the IPv6 link-local GID (index 0), else IPv4 */
};

FIXTURE_VARIANT_ADD(ud, two_dev_ipv4) { .one_dev = false, .ipv6 = false };
FIXTURE_VARIANT_ADD(ud, two_dev_ipv6) { .one_dev = false, .ipv6 = true };
FIXTURE_VARIANT_ADD(ud, one_dev_ipv4) { .one_dev = true, .ipv6 = false };
FIXTURE_VARIANT_ADD(ud, one_dev_ipv6) { .one_dev = true, .ipv6 = true };

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *scq,
			    struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.qp_type = IBV_QPT_UD,
		.cap = {
			.max_send_wr = NWR,
			.max_recv_wr = NWR,
			.max_send_sge = NSGE,
			.max_recv_sge = NSGE,
			.max_inline_data = INLINE,
		},
	};

	return ibv_create_qp(pd, &a);
}

static int ud_to_init(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RC_PORT,
		.qkey = qkey,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_QKEY);
}

static int ud_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int err;

	err = ud_to_init(qp, qkey);
	if (err)
		return err;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0xfffffe;		/* wraps after two packets */
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static struct ibv_ah *ud_ah(struct ibv_pd *pd, const struct ud_end *self,
			    const struct ud_end *peer)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = {
			.dgid = peer->gid,
			.sgid_index = (uint8_t)self->gid_index,
			.hop_limit = HOP_LIMIT,
			.traffic_class = TCLASS,
		},
		.port_num = RC_PORT,
	};

	return ibv_create_ah(pd, &aa);
}

static void end_setup(struct __test_metadata *_metadata, struct ud_end *e,
		      const char *name, bool ipv6)
{
	int g;

	e->ctx = open_device(name);
	ASSERT_NE(NULL, e->ctx) TH_LOG("device %s: %s", name, strerror(errno));
	ASSERT_EQ(0, ibv_query_port(e->ctx, RC_PORT, &e->port));
	e->mtu = 128U << e->port.active_mtu;
	g = pick_gid(e->ctx, ipv6 ? 0 : -1, &e->gid);
	ASSERT_LE(0, g) TH_LOG("no RoCEv2 GID on %s", name);
	ASSERT_EQ(ipv6, !ipv4_mapped(&e->gid))
		TH_LOG("%s: GID %d is not %s", name, g, ipv6 ? "IPv6" : "IPv4");
	e->gid_index = g;
	e->pd = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd);
	e->pd2 = ibv_alloc_pd(e->ctx);
	ASSERT_NE(NULL, e->pd2);
	e->ch = ibv_create_comp_channel(e->ctx);
	ASSERT_NE(NULL, e->ch);
	e->scq = ibv_create_cq(e->ctx, 2 * NWR, NULL, NULL, 0);
	ASSERT_NE(NULL, e->scq);
	e->rcq = ibv_create_cq(e->ctx, 2 * NWR, NULL, e->ch, 0);
	ASSERT_NE(NULL, e->rcq);
	e->qp = ud_qp(e->pd, e->scq, e->rcq);
	ASSERT_NE(NULL, e->qp) TH_LOG("create UD QP: %s", strerror(errno));
	ASSERT_EQ(0, ud_to_rts(e->qp, QKEY));
	e->buf = page_buf(BUF_LEN);
	ASSERT_NE(NULL, e->buf);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, e->mr);
}

static void end_teardown(struct __test_metadata *_metadata, struct ud_end *e)
{
	if (e->ah)
		EXPECT_EQ(0, ibv_destroy_ah(e->ah));
	if (e->qp)
		EXPECT_EQ(0, ibv_destroy_qp(e->qp));
	if (e->mr)
		EXPECT_EQ(0, ibv_dereg_mr(e->mr));
	if (e->rcq)
		EXPECT_EQ(0, ibv_destroy_cq(e->rcq));
	if (e->scq)
		EXPECT_EQ(0, ibv_destroy_cq(e->scq));
	if (e->ch)
		EXPECT_EQ(0, ibv_destroy_comp_channel(e->ch));
	if (e->pd2)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd2));
	if (e->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(e->pd));
	if (e->buf)
		munmap(e->buf, BUF_LEN);
	if (e->ctx)
		EXPECT_EQ(0, ibv_close_device(e->ctx));
}

FIXTURE_SETUP(ud)
{
	struct ibv_context *probe;
	int i;

	for (i = 0; i < (variant->one_dev ? 1 : 2); i++) {
		probe = open_device(dev_name(i));
		if (!probe)
			SETUP_SKIP("device %s: %s", dev_name(i),
				   strerror(errno));
		ibv_close_device(probe);
	}
	end_setup(_metadata, &self->a, dev_name(0), variant->ipv6);
	end_setup(_metadata, &self->b, dev_name(variant->one_dev ? 0 : 1),
		  variant->ipv6);
	self->a.ah = ud_ah(self->a.pd, &self->a, &self->b);
	ASSERT_NE(NULL, self->a.ah) TH_LOG("create AH: %s", strerror(errno));
	self->b.ah = ud_ah(self->b.pd, &self->b, &self->a);
	ASSERT_NE(NULL, self->b.ah) TH_LOG("create AH: %s", strerror(errno));
}

FIXTURE_TEARDOWN(ud)
{
	_metadata->trigger = 0;
	if (self->qp)
		EXPECT_EQ(0, ibv_destroy_qp(self->qp));
	end_teardown(_metadata, &self->b);
	end_teardown(_metadata, &self->a);
}

/* Helpers */

/* Post one receive of len bytes at e->buf + off (filled with FILL). */
static int post_recv(struct ud_end *e, uint64_t wr_id, size_t off,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + off),
		.length = len,
		.lkey = lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;

	memset(e->buf + off, FILL, len);
	return ibv_post_recv(e->qp, &wr, &bad);
}

struct send {
	uint64_t wr_id;
	size_t off;		/* in the send area */
	uint32_t len;
	uint32_t lkey;		/* 0: the MR's */
	uint32_t qkey;
	uint32_t qpn;		/* 0: the peer's */
	struct ibv_ah *ah;	/* NULL: the end's */
	enum ibv_wr_opcode opcode;
	uint32_t imm;
	unsigned int flags;
};

/* Post one signaled send of the payload stream seed at SBUF + s->off. */
static int post_send(struct ud_end *e, const struct ud_end *peer,
		     const struct send *s, uint64_t seed)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(e->buf + SBUF + s->off),
		.length = s->len,
		.lkey = s->lkey ? s->lkey : e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = s->wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = s->opcode,
		.send_flags = IBV_SEND_SIGNALED | s->flags,
		.imm_data = htonl(s->imm),
		.wr.ud = {
			.ah = s->ah ? s->ah : e->ah,
			.remote_qpn = s->qpn ? s->qpn : peer->qp->qp_num,
			.remote_qkey = s->qkey,
		},
	};
	struct ibv_send_wr *bad = NULL;

	if (s->off + s->len <= BUF_LEN - SBUF)
		stream_fill(e->buf + SBUF + s->off, seed, 0, s->len);
	return ibv_post_send(e->qp, &wr, &bad);
}

static struct send send_of(uint32_t len)
{
	struct send s = {
		.wr_id = 0x5e0d,
		.len = len,
		.qkey = QKEY,
		.opcode = IBV_WR_SEND,
	};

	return s;
}

/* UDP payload bytes of a UD packet: BTH, DETH, [ImmDt], payload, pad, ICRC. */
static uint32_t udp_payload(uint32_t len, bool imm)
{
	return 12 + 8 + (imm ? 4 : 0) + ((len + 3) & ~3U) + 4;
}

/* The IPv4 header checksum over 20 bytes is valid. */
static bool ip4_csum_ok(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * The GRH at grh is the IP header of a packet from `from` to `to` with
 * len bytes of payload: IPv6, or 20 zero bytes then an IPv4 header.
 */
static void check_grh(struct __test_metadata *_metadata, const uint8_t *grh,
		      const struct ud_end *from, const struct ud_end *to,
		      uint32_t len, bool imm)
{
	uint32_t udp_len = 8 + udp_payload(len, imm);

	if (ipv4_mapped(&from->gid)) {
		const uint8_t *ip = grh + 20;
		struct iphdr h;

		memcpy(&h, ip, sizeof(h));
		EXPECT_EQ(20, first_not(grh, 20, 0))
			TH_LOG("IPv4 GRH: bytes 0..19 are not zero");
		EXPECT_EQ(0x45, ip[0]);		/* version 4, IHL 5 */
		EXPECT_EQ(TCLASS, h.tos);
		EXPECT_EQ(20 + udp_len, ntohs(h.tot_len));
		EXPECT_EQ(IPPROTO_UDP, h.protocol);
		EXPECT_EQ(HOP_LIMIT, h.ttl);
		EXPECT_TRUE(ip4_csum_ok(ip)) TH_LOG("IPv4 header checksum");
		EXPECT_EQ(0, memcmp(&h.saddr, from->gid.raw + 12, 4))
			TH_LOG("source address is not the sender's GID");
		EXPECT_EQ(0, memcmp(&h.daddr, to->gid.raw + 12, 4))
			TH_LOG("destination address is not the receiver's GID");
	} else {
		struct ip6_hdr h;

		memcpy(&h, grh, sizeof(h));
		EXPECT_EQ(6, h.ip6_vfc >> 4);
		EXPECT_EQ(TCLASS, (ntohl(h.ip6_flow) >> 20) & 0xff);
		EXPECT_EQ(udp_len, ntohs(h.ip6_plen));
		EXPECT_EQ(IPPROTO_UDP, h.ip6_nxt);
		EXPECT_EQ(HOP_LIMIT, h.ip6_hlim);
		EXPECT_EQ(0, memcmp(&h.ip6_src, from->gid.raw, 16))
			TH_LOG("source GID is not the sender's");
		EXPECT_EQ(0, memcmp(&h.ip6_dst, to->gid.raw, 16))
			TH_LOG("destination GID is not the receiver's");
	}
}

/* A good receive completion of a len-byte message from `from`. */
static void check_recv(struct __test_metadata *_metadata,
		       const struct ibv_wc *wc, const struct ud_end *from,
		       const struct ud_end *to, uint32_t len)
{
	EXPECT_STATUS(IBV_WC_SUCCESS, *wc);
	EXPECT_EQ(IBV_WC_RECV, wc->opcode);
	EXPECT_EQ(GRH_LEN + len, wc->byte_len);
	EXPECT_EQ(from->qp->qp_num, wc->src_qp);
	EXPECT_EQ(to->qp->qp_num, wc->qp_num);
	EXPECT_TRUE(wc->wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0, wc->pkey_index);
	/*
	 * dray: the SL says what the frame was, as on ConnectX NICs (bit
	 * 3 RoCEv2, bits 2:0 IPv4 2 or IPv6 1); UCX's UD transport needs it.
	 * rxe leaves it 0.
	 */
	if (!is_rxe(to->ctx))
		EXPECT_EQ(ipv4_mapped(&from->gid) ? 0xa : 0x9, wc->sl);
}

/* Send len bytes A -> B and check everything B got. */
static void send_one(struct __test_metadata *_metadata, FIXTURE_DATA(ud) *self,
		     const struct send *s, uint64_t seed)
{
	bool imm = s->opcode == IBV_WR_SEND_WITH_IMM;
	uint32_t rlen = GRH_LEN + self->b.mtu + 64;
	uint8_t *r = self->b.buf + RBUF;
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post_recv(&self->b, 0x7ec, RBUF, rlen,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, s, seed));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(IBV_WC_SEND, wc.opcode);
	EXPECT_EQ(s->wr_id, wc.wr_id);

	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_EQ(0x7ec, wc.wr_id);
	check_recv(_metadata, &wc, &self->a, &self->b, s->len);
	EXPECT_EQ(imm, !!(wc.wc_flags & IBV_WC_WITH_IMM));
	if (imm)
		EXPECT_EQ(htonl(s->imm), wc.imm_data);
	check_grh(_metadata, r, &self->a, &self->b, s->len, imm);
	EXPECT_EQ(s->len, stream_check(r + GRH_LEN, seed, 0, s->len))
		TH_LOG("payload of %u bytes differs", s->len);
	EXPECT_EQ(rlen - GRH_LEN - s->len,
		  first_not(r + GRH_LEN + s->len, rlen - GRH_LEN - s->len,
			    FILL))
		TH_LOG("bytes after the message were written");
}

/* A's QP is in state, as ibv_query_qp() says. */
#define EXPECT_QP_STATE(_want, _qp)					\
	EXPECT_EQ((_want), qp_state(_qp))				\
		TH_LOG("QP state %s, expected %s",			\
		       qp_state_str(qp_state(_qp)), qp_state_str(_want))

/* Data path */

TEST_F(ud, send_recv_sizes)
{
	uint32_t sizes[] = { 0, 1, 3, 64, 100, 1000, self->a.mtu - 1,
			     self->a.mtu };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct send s = send_of(sizes[i]);

		s.off = i * 7;
		send_one(_metadata, self, &s, 100 + i);
	}
}

/* Multicast (ibv_attach_mcast): the group address of a variant. */
static union ibv_gid mgid_of(const struct ud_end *e, uint8_t last)
{
	union ibv_gid g = {};

	if (ipv4_mapped(&e->gid)) {
		g.raw[10] = 0xff;
		g.raw[11] = 0xff;
		g.raw[12] = 239;
		g.raw[13] = 7;
		g.raw[14] = 7;
		g.raw[15] = last;
	} else {
		g.raw[0] = 0xff;
		g.raw[1] = 0x0e;
		g.raw[14] = 7;
		g.raw[15] = last;
	}
	return g;
}

static struct ibv_ah *mcast_ah(const struct ud_end *e,
			       const union ibv_gid *mgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = {
			.dgid = *mgid,
			.sgid_index = (uint8_t)e->gid_index,
			.hop_limit = HOP_LIMIT,
		},
		.port_num = RC_PORT,
	};

	return ibv_create_ah(e->pd, &aa);
}

/* The destination address in a received GRH (IPv6, or mapped IPv4). */
static bool grh_dst_is(const uint8_t *grh, const union ibv_gid *g)
{
	if (ipv4_mapped(g))
		return !memcmp(grh + 20 + 16, g->raw + 12, 4);
	return !memcmp(grh + 24, g->raw, 16);
}

/*
 * A's SEND to a group reaches every QP of B attached to it (over the wire,
 * or within one device by multicast loopback), with the group as the
 * GRH's destination, the sender's QPN as src_qp; after detaching, none.
 */
TEST_F(ud, multicast_send_recv)
{
	union ibv_gid mg = mgid_of(&self->a, 1);
	struct ibv_wc wc;
	struct send s = send_of(200);
	struct ibv_ah *ah;
	int err, i;

	err = ibv_attach_mcast(self->b.qp, &mg, 0);
	if (err == EOPNOTSUPP || err == ENOSYS)
		SKIP(return, "no multicast on %s", dev_name(1));
	ASSERT_EQ(0, err) TH_LOG("attach: %s", strerror(err));
	self->qp = ud_qp(self->b.pd, self->b.scq, self->b.rcq);
	ASSERT_NE(NULL, self->qp);
	ASSERT_EQ(0, ud_to_rts(self->qp, QKEY));
	ASSERT_EQ(0, ibv_attach_mcast(self->qp, &mg, 0));
	ah = mcast_ah(&self->a, &mg);
	ASSERT_NE(NULL, ah) TH_LOG("multicast AH: %s", strerror(errno));

	ASSERT_ERRNO(0, post_recv(&self->b, 0x51, RBUF, 4096,
				  self->b.mr->lkey));
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)(self->b.buf + RBUF + 8192),
			.length = 4096, .lkey = self->b.mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = 0x52, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		memset(self->b.buf + RBUF + 8192, FILL, 4096);
		ASSERT_EQ(0, ibv_post_recv(self->qp, &wr, &bad));
	}
	s.ah = ah;
	s.qpn = 0xffffff;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 77));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	for (i = 0; i < 2; i++) {
		const uint8_t *r;

		wc = wait_wc(_metadata, self->b.rcq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		ASSERT_TRUE(wc.wr_id == 0x51 || wc.wr_id == 0x52);
		EXPECT_EQ(wc.wr_id == 0x51 ? self->b.qp->qp_num :
			  self->qp->qp_num, wc.qp_num);
		EXPECT_EQ(self->a.qp->qp_num, wc.src_qp);
		EXPECT_EQ(GRH_LEN + 200U, wc.byte_len);
		EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
		r = self->b.buf + RBUF + (wc.wr_id == 0x51 ? 0 : 8192);
		EXPECT_TRUE(grh_dst_is(r, &mg)) TH_LOG("GRH: not to the group");
		EXPECT_EQ(200U, stream_check(r + GRH_LEN, 77, 0, 200));
	}
	/* Detached, the QPs get nothing more. */
	ASSERT_EQ(0, ibv_detach_mcast(self->b.qp, &mg, 0));
	ASSERT_EQ(0, ibv_detach_mcast(self->qp, &mg, 0));
	ASSERT_ERRNO(0, post_recv(&self->b, 0x53, RBUF, 4096,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 78));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

/*
 * Attaching needs a UD QP and a multicast GID (EINVAL); attaching twice
 * is one attachment; detaching what is not attached is EINVAL; the
 * device's group limit holds (ENOMEM past it), and detaching frees the
 * groups; a QP still attached cannot be destroyed (EBUSY, uverbs).
 */
TEST_F(ud, multicast_bad_input)
{
	union ibv_gid mg = mgid_of(&self->a, 2), ucast = self->b.gid;
	struct ibv_device_attr da;
	struct ibv_qp_init_attr rc = {
		.send_cq = self->b.scq, .recv_cq = self->b.rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *rcqp;
	int err, n;

	err = ibv_attach_mcast(self->b.qp, &mg, 0);
	if (err == EOPNOTSUPP || err == ENOSYS)
		SKIP(return, "no multicast on %s", dev_name(1));
	ASSERT_EQ(0, err);
	ASSERT_ERRNO(0, ibv_attach_mcast(self->b.qp, &mg, 0));
	ASSERT_ERRNO(0, ibv_detach_mcast(self->b.qp, &mg, 0));
	ASSERT_ERRNO(EINVAL, ibv_detach_mcast(self->b.qp, &mg, 0));
	ASSERT_ERRNO(EINVAL, ibv_attach_mcast(self->b.qp, &ucast, 0));
	rcqp = ibv_create_qp(self->b.pd, &rc);
	ASSERT_NE(NULL, rcqp);
	ASSERT_ERRNO(EINVAL, ibv_attach_mcast(rcqp, &mg, 0));
	EXPECT_EQ(0, ibv_destroy_qp(rcqp));

	ASSERT_EQ(0, ibv_query_device(self->b.ctx, &da));
	EXPECT_LT(0, da.max_mcast_grp);
	EXPECT_LT(0, da.max_mcast_qp_attach);
	if (da.max_mcast_grp > 256)
		return;
	/* Every group a device has, then one more. */
	self->qp = ud_qp(self->b.pd, self->b.scq, self->b.rcq);
	ASSERT_NE(NULL, self->qp);
	for (n = 0; n < da.max_mcast_grp; n++) {
		union ibv_gid g = mgid_of(&self->a, (uint8_t)n);

		g.raw[13] = 8;
		ASSERT_ERRNO(0, ibv_attach_mcast(self->qp, &g, 0));
	}
	mg.raw[13] = 9;
	ASSERT_ERRNO(ENOMEM, ibv_attach_mcast(self->qp, &mg, 0));
	/* uverbs: a QP still attached cannot be destroyed. */
	ASSERT_ERRNO(EBUSY, ibv_destroy_qp(self->qp));
	for (n = 0; n < da.max_mcast_grp; n++) {
		union ibv_gid g = mgid_of(&self->a, (uint8_t)n);

		g.raw[13] = 8;
		ASSERT_ERRNO(0, ibv_detach_mcast(self->qp, &g, 0));
	}
	/* The groups are free again: another QP gets one. */
	ASSERT_ERRNO(0, ibv_attach_mcast(self->b.qp, &mg, 0));
	ASSERT_ERRNO(0, ibv_detach_mcast(self->b.qp, &mg, 0));
}

TEST_F(ud, send_with_imm)
{
	struct send s = send_of(200);

	s.opcode = IBV_WR_SEND_WITH_IMM;
	s.imm = 0x12345678;
	send_one(_metadata, self, &s, 7);
	s.len = 0;
	s.imm = 0xfedcba98;
	send_one(_metadata, self, &s, 8);
}

TEST_F(ud, send_inline)
{
	struct send s = send_of(INLINE);
	uint32_t rlen = GRH_LEN + INLINE;
	struct ibv_wc wc;

	s.flags = IBV_SEND_INLINE;
	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, rlen, self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 11));
	/* The payload was copied at post time. */
	memset(self->a.buf + SBUF, 0, INLINE);
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.rcq);
	check_recv(_metadata, &wc, &self->a, &self->b, INLINE);
	EXPECT_EQ(INLINE, stream_check(self->b.buf + RBUF + GRH_LEN, 11, 0,
				       INLINE));
}

/* The GRH and the payload scattered over several receive SGEs. */
TEST_F(ud, multi_sge)
{
	struct ibv_sge rs[3] = {
		{ (uintptr_t)(self->b.buf + 1000), 10, self->b.mr->lkey },
		{ (uintptr_t)(self->b.buf + 3000), 45, self->b.mr->lkey },
		{ (uintptr_t)(self->b.buf + 5000), 2000, self->b.mr->lkey },
	};
	struct ibv_sge ss[2] = {
		{ (uintptr_t)(self->a.buf + SBUF), 100, self->a.mr->lkey },
		{ (uintptr_t)(self->a.buf + SBUF + 4090), 400,
		  self->a.mr->lkey },
	};
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = rs, .num_sge = 3 };
	struct ibv_send_wr swr = {
		.wr_id = 3, .sg_list = ss, .num_sge = 2,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = self->a.ah,
			   .remote_qpn = self->b.qp->qp_num,
			   .remote_qkey = QKEY },
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	uint8_t grh[GRH_LEN], *b = self->b.buf;
	struct ibv_wc wc;

	memset(b, FILL, RBUF + 16 * 1024);
	stream_fill(self->a.buf + SBUF, 21, 0, 100);
	stream_fill(self->a.buf + SBUF + 4090, 21, 100, 400);
	ASSERT_ERRNO(0, ibv_post_recv(self->b.qp, &rwr, &rbad));
	ASSERT_ERRNO(0, ibv_post_send(self->a.qp, &swr, &sbad));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.rcq);
	check_recv(_metadata, &wc, &self->a, &self->b, 500);

	memcpy(grh, b + 1000, 10);
	memcpy(grh + 10, b + 3000, 30);
	check_grh(_metadata, grh, &self->a, &self->b, 500, false);
	EXPECT_EQ(15, stream_check(b + 3030, 21, 0, 15));
	EXPECT_EQ(485, stream_check(b + 5000, 21, 15, 485));
	EXPECT_EQ(1515, first_not(b + 5485, 1515, FILL));
	EXPECT_EQ(100, first_not(b + 900, 100, FILL));
	EXPECT_EQ(100, first_not(b + 1010, 100, FILL));
}

/* A burst fills every receive WQE, in order. */
TEST_F(ud, burst_in_order)
{
	struct ibv_wc wc[NWR];
	uint32_t len = 256;
	int i, n;

	for (i = 0; i < NWR; i++)
		ASSERT_ERRNO(0, post_recv(&self->b, 100 + i, RBUF + i * 512,
					  GRH_LEN + len, self->b.mr->lkey));
	for (i = 0; i < NWR; i++) {
		struct send s = send_of(len);

		s.wr_id = i;
		s.off = i * len;
		ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 300 + i));
	}
	n = poll_n(self->a.scq, wc, NWR, WAIT_MS);
	ASSERT_EQ(NWR, n);
	for (i = 0; i < NWR; i++) {
		EXPECT_STATUS(IBV_WC_SUCCESS, wc[i]);
		EXPECT_EQ((uint64_t)i, wc[i].wr_id);
	}
	n = poll_n(self->b.rcq, wc, NWR, WAIT_MS);
	ASSERT_EQ(NWR, n) TH_LOG("%d of %d messages arrived", n, NWR);
	for (i = 0; i < NWR; i++) {
		EXPECT_EQ((uint64_t)(100 + i), wc[i].wr_id);
		check_recv(_metadata, &wc[i], &self->a, &self->b, len);
		EXPECT_EQ(len, stream_check(self->b.buf + RBUF + i * 512 +
					    GRH_LEN, 300 + i, 0, len));
	}
}

/* The receiver answers through an AH made from the completion's GRH. */
TEST_F(ud, reply_with_ah_from_wc)
{
	struct send s = send_of(32);
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	send_one(_metadata, self, &s, 31);
	/* send_one's receive completion, again for the verbs below. */
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RECV;
	wc.wc_flags = IBV_WC_GRH;
	wc.src_qp = self->a.qp->qp_num;
	wc.qp_num = self->b.qp->qp_num;
	wc.byte_len = GRH_LEN + 32;

	ASSERT_EQ(0, ibv_init_ah_from_wc(self->b.ctx, RC_PORT, &wc,
					 (struct ibv_grh *)(self->b.buf + RBUF),
					 &aa));
	EXPECT_TRUE(aa.is_global);
	EXPECT_EQ(0, memcmp(aa.grh.dgid.raw, self->a.gid.raw, 16))
		TH_LOG("the AH from the GRH does not lead to the sender");
	EXPECT_EQ(self->b.gid_index, aa.grh.sgid_index);

	ah = ibv_create_ah_from_wc(self->b.pd, &wc,
				   (struct ibv_grh *)(self->b.buf + RBUF),
				   RC_PORT);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah_from_wc: %s",
				   strerror(errno));
	s.ah = ah;
	s.qpn = wc.src_qp;
	ASSERT_ERRNO(0, post_recv(&self->a, 9, RBUF, GRH_LEN + 64,
				  self->a.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->b, &self->a, &s, 32));
	wc = wait_wc(_metadata, self->b.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->a.rcq);
	check_recv(_metadata, &wc, &self->b, &self->a, 32);
	EXPECT_EQ(32, stream_check(self->a.buf + RBUF + GRH_LEN, 32, 0, 32));
	EXPECT_EQ(0, ibv_destroy_ah(ah));
}

/* A message without a receive WQE is lost; the next one is delivered. */
TEST_F(ud, no_receive_wqe_drops)
{
	struct send s = send_of(100);
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 41));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);
	EXPECT_QP_STATE(IBV_QPS_RTS, self->b.qp);
	send_one(_metadata, self, &s, 42);
}

/* Q_Key checks (IBTA 10.2.4): a mismatch is dropped silently. */
TEST_F(ud, qkey_mismatch_drops)
{
	struct send s = send_of(100);
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, GRH_LEN + 200,
				  self->b.mr->lkey));
	s.qkey = QKEY + 1;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 51));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);

	/* The receive WQE is still there for a message with the Q_Key. */
	s.qkey = QKEY;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 52));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_EQ(1, wc.wr_id);
	check_recv(_metadata, &wc, &self->a, &self->b, 100);
	EXPECT_EQ(100, stream_check(self->b.buf + RBUF + GRH_LEN, 52, 0, 100));
}

/* A WR Q_Key with bit 31 set means the sending QP's own Q_Key. */
TEST_F(ud, qkey_of_the_qp)
{
	struct ibv_qp_attr attr = { .qkey = QKEY + 2 };
	struct send s = send_of(10);
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	s.qkey = QKEY_OWN;
	send_one(_metadata, self, &s, 61);

	/* A's own Q_Key changes (allowed in RTS): B no longer matches. */
	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &attr, IBV_QP_QKEY));
	memset(&attr, 0, sizeof(attr));
	ASSERT_EQ(0, ibv_query_qp(self->a.qp, &attr, IBV_QP_QKEY, &init));
	EXPECT_EQ(QKEY + 2, attr.qkey);
	EXPECT_EQ(IBV_QPT_UD, init.qp_type);
	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, GRH_LEN + 64,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 62));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);
}

/* Add (on) or drop CAP_NET_RAW in the effective set; 0 or an errno. */
static int net_raw_effective(bool on)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint32_t bit = 1U << (CAP_NET_RAW % 32);

	if (syscall(SYS_capget, &h, d))
		return errno;
	if (!(d[CAP_NET_RAW / 32].permitted & bit))
		return EPERM;
	if (on)
		d[CAP_NET_RAW / 32].effective |= bit;
	else
		d[CAP_NET_RAW / 32].effective &= ~bit;
	return syscall(SYS_capset, &h, d) ? errno : 0;
}

/*
 * A controlled Q_Key (bit 31 set, IBTA 10.2.4) is for privileged
 * processes only: setting one without CAP_NET_RAW fails with EPERM and
 * changes nothing; with it, the QP takes it and a WR naming "the QP's own
 * Q_Key" sends it. (The RDMA core makes the check for every device.)
 */
TEST_F(ud, controlled_qkey_needs_cap_net_raw)
{
	struct ibv_qp_attr attr = { .qkey = 0x80000123U };
	struct send s = send_of(10);
	struct ibv_qp_init_attr init;

	if (net_raw_effective(false))
		SKIP(return, "cannot change CAP_NET_RAW: %s", strerror(errno));
	verb_ret = ibv_modify_qp(self->a.qp, &attr, IBV_QP_QKEY);
	ASSERT_EQ(0, net_raw_effective(true));
	ASSERT_ERRNO(EPERM, verb_ret);
	ASSERT_EQ(0, ibv_query_qp(self->a.qp, &attr, IBV_QP_QKEY, &init));
	EXPECT_EQ(QKEY, attr.qkey);

	/* privileged: both QPs take it, and it is sent and matched */
	attr.qkey = 0x80000123U;
	ASSERT_ERRNO(0, ibv_modify_qp(self->a.qp, &attr, IBV_QP_QKEY));
	ASSERT_ERRNO(0, ibv_modify_qp(self->b.qp, &attr, IBV_QP_QKEY));
	s.qkey = QKEY_OWN;
	send_one(_metadata, self, &s, 63);
}

/* An unknown destination QP: the send completes, nothing arrives. */
TEST_F(ud, unknown_remote_qpn)
{
	struct send s = send_of(10);
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, GRH_LEN + 64,
				  self->b.mr->lkey));
	s.qpn = 0xabcdef;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 71));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);
}

/* Solicited events: an armed solicited-only CQ wakes for SE only. */
TEST_F(ud, solicited_event)
{
	struct pollfd pfd = { .fd = self->b.ch->fd, .events = POLLIN };
	struct send s = send_of(8);
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	int flags;

	flags = fcntl(pfd.fd, F_GETFL);
	ASSERT_EQ(0, fcntl(pfd.fd, F_SETFL, flags | O_NONBLOCK));
	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, GRH_LEN + 64,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_recv(&self->b, 2, RBUF + 4096, GRH_LEN + 64,
				  self->b.mr->lkey));
	ASSERT_EQ(0, ibv_req_notify_cq(self->b.rcq, 1));

	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 81));
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0, poll(&pfd, 1, QUIET_MS)) TH_LOG("event without SE");

	s.flags = IBV_SEND_SOLICITED;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 82));
	ASSERT_EQ(1, poll(&pfd, 1, WAIT_MS)) TH_LOG("no event for SE");
	ASSERT_EQ(0, ibv_get_cq_event(self->b.ch, &ev_cq, &ev_ctx));
	EXPECT_EQ(self->b.rcq, ev_cq);
	ibv_ack_cq_events(ev_cq, 1);
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(2, wc.wr_id);
	wc = wait_wc(_metadata, self->a.scq);
	wc = wait_wc(_metadata, self->a.scq);
}

/* The QP receives from RTR on, before it may send. */
TEST_F(ud, receive_in_rtr)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct send s = send_of(33);
	struct ibv_qp *qp;
	struct ibv_wc wc;

	self->qp = qp = ud_qp(self->b.pd, self->b.scq, self->b.rcq);
	ASSERT_NE(NULL, qp);
	ASSERT_EQ(0, ud_to_init(qp, QKEY));
	ASSERT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	/* Posted to the new QP via a copy of b's end. */
	{
		struct ud_end b2 = self->b;

		b2.qp = qp;
		ASSERT_ERRNO(0, post_recv(&b2, 5, RBUF, GRH_LEN + 64,
					  self->b.mr->lkey));
		ASSERT_ERRNO(0, post_send(&self->a, &b2, &s, 91));
		wc = wait_wc(_metadata, self->b.rcq);
		check_recv(_metadata, &wc, &self->a, &b2, 33);
	}
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	self->qp = NULL;
}

/* Error completions (IBTA 10.3.1: a UD send error puts the QP in SQE) */

/* The send queue in SQE flushes; back in RTS it sends again. */
static void expect_sqe_then_recover(struct __test_metadata *_metadata,
				    FIXTURE_DATA(ud) *self)
{
	struct send s = send_of(16);
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.cur_qp_state = IBV_QPS_SQE,
	};
	struct ibv_wc wc;

	EXPECT_QP_STATE(IBV_QPS_SQE, self->a.qp);
	s.wr_id = 0xf1;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 99));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
	EXPECT_EQ(0xf1, wc.wr_id);
	expect_no_wc(_metadata, self->b.rcq, 100);

	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &attr,
				   IBV_QP_STATE | IBV_QP_CUR_STATE));
	EXPECT_QP_STATE(IBV_QPS_RTS, self->a.qp);
	send_one(_metadata, self, &s, 98);
}

TEST_F(ud, over_mtu_local_length_error)
{
	struct send s = send_of(self->a.mtu + 1);
	struct ibv_wc wc;

	/* The wr_id send_one() expects: it takes this WQE in the end. */
	ASSERT_ERRNO(0, post_recv(&self->b, 0x7ec, RBUF, GRH_LEN + 8192,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 101));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_LOC_LEN_ERR, wc);
	EXPECT_EQ(s.wr_id, wc.wr_id);
	expect_no_wc(_metadata, self->b.rcq, QUIET_MS);
	expect_sqe_then_recover(_metadata, self);
}

TEST_F(ud, bad_lkey_local_protection_error)
{
	struct send s = send_of(64);
	struct ibv_wc wc;

	s.lkey = self->a.mr->lkey ^ 0x5a;
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 111));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_LOC_PROT_ERR, wc);
	expect_sqe_then_recover(_metadata, self);
}

TEST_F(ud, sge_outside_mr_local_protection_error)
{
	struct send s = send_of(64);
	struct ibv_wc wc;

	s.off = BUF_LEN - SBUF - 32;	/* 32 bytes past the MR */
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 121));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_LOC_PROT_ERR, wc);
	expect_sqe_then_recover(_metadata, self);
}

/* An AH of another PD than the QP's. */
TEST_F(ud, ah_of_another_pd)
{
	struct send s = send_of(64);
	struct ibv_wc wc;

	s.ah = ud_ah(self->a.pd2, &self->a, &self->b);
	ASSERT_NE(NULL, s.ah);
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 131));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_NE(IBV_WC_SUCCESS, wc.status);
	EXPECT_STATUS(IBV_WC_LOC_QP_OP_ERR, wc);
	expect_no_wc(_metadata, self->b.rcq, 100);
	EXPECT_EQ(0, ibv_destroy_ah(s.ah));
	expect_sqe_then_recover(_metadata, self);
}

/* Receive errors end the QP (ERR); the sender does not notice. */
static void expect_recv_error(struct __test_metadata *_metadata,
			      FIXTURE_DATA(ud) *self, uint32_t rlen,
			      uint32_t lkey, uint32_t len,
			      enum ibv_wc_status want)
{
	struct send s = send_of(len);
	struct ibv_wc wc;

	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, rlen, lkey));
	ASSERT_ERRNO(0, post_recv(&self->b, 2, RBUF + 8192, 8192,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_send(&self->a, &self->b, &s, 141));
	wc = wait_wc(_metadata, self->a.scq);
	EXPECT_STATUS(IBV_WC_SUCCESS, wc);
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_STATUS(want, wc);
	wc = wait_wc(_metadata, self->b.rcq);
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_STATUS(IBV_WC_WR_FLUSH_ERR, wc);
	EXPECT_QP_STATE(IBV_QPS_ERR, self->b.qp);
}

TEST_F(ud, receive_too_short_local_length_error)
{
	expect_recv_error(_metadata, self, GRH_LEN + 50, self->b.mr->lkey,
			  51, IBV_WC_LOC_LEN_ERR);
}

TEST_F(ud, receive_without_room_for_grh)
{
	expect_recv_error(_metadata, self, GRH_LEN - 1, self->b.mr->lkey, 0,
			  IBV_WC_LOC_LEN_ERR);
}

TEST_F(ud, receive_bad_lkey_local_protection_error)
{
	expect_recv_error(_metadata, self, GRH_LEN + 64,
			  self->b.mr->lkey ^ 0x5a, 10, IBV_WC_LOC_PROT_ERR);
}

/* Bad input to the verbs */

static void post_send_refused(struct __test_metadata *_metadata,
			      struct ud_end *a, struct ibv_send_wr *wr,
			      int want)
{
	struct ibv_send_wr *bad = NULL;

	ASSERT_ERRNO(want, ibv_post_send(a->qp, wr, &bad));
	EXPECT_EQ(wr, bad);
	expect_no_wc(_metadata, a->scq, 100);
}

TEST_F(ud, post_send_rdma_opcode)
{
	struct ibv_sge sge = { (uintptr_t)self->a.buf, 8, self->a.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = self->a.ah, .remote_qpn = self->b.qp->qp_num,
			   .remote_qkey = QKEY },
	};

	post_send_refused(_metadata, &self->a, &wr, EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	post_send_refused(_metadata, &self->a, &wr, EINVAL);
}

TEST_F(ud, post_send_without_ah)
{
	struct ibv_sge sge = { (uintptr_t)self->a.buf, 8, self->a.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = NULL, .remote_qpn = self->b.qp->qp_num,
			   .remote_qkey = QKEY },
	};

	post_send_refused(_metadata, &self->a, &wr, EINVAL);
}

TEST_F(ud, post_send_in_rtr)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct ibv_sge sge = { (uintptr_t)self->a.buf, 8, self->a.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = self->a.ah, .remote_qpn = self->b.qp->qp_num,
			   .remote_qkey = QKEY },
	};
	struct ud_end a2 = self->a;

	self->qp = a2.qp = ud_qp(self->a.pd, self->a.scq, self->a.rcq);
	ASSERT_NE(NULL, a2.qp);
	ASSERT_EQ(0, ud_to_init(a2.qp, QKEY));
	ASSERT_EQ(0, ibv_modify_qp(a2.qp, &a, IBV_QP_STATE));
	post_send_refused(_metadata, &a2, &wr, EINVAL);
	EXPECT_EQ(0, ibv_destroy_qp(a2.qp));
	self->qp = NULL;
}

/* The IBTA attribute rules of the UD state machine. */
TEST_F(ud, modify_qp_attribute_rules)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = RC_PORT,
		.qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
		.sq_psn = 1,
		.timeout = 14,
		.path_mtu = IBV_MTU_256,
	};
	int base = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	struct ibv_qp *qp;

	self->qp = qp = ud_qp(self->a.pd, self->a.scq, self->a.rcq);
	ASSERT_NE(NULL, qp);
	/* RESET -> INIT needs pkey_index, port and qkey, nothing else. */
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, base));
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, base | IBV_QP_QKEY |
					   IBV_QP_ACCESS_FLAGS));
	a.port_num = 2;
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, base | IBV_QP_QKEY));
	a.port_num = RC_PORT;
	a.pkey_index = 1;
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, base | IBV_QP_QKEY));
	a.pkey_index = 0;
	ASSERT_ERRNO(0, ibv_modify_qp(qp, &a, base | IBV_QP_QKEY));
	/* INIT -> RTR: no address vector, no path MTU. */
	a.qp_state = IBV_QPS_RTR;
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					   IBV_QP_PATH_MTU));
	ASSERT_ERRNO(0, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	/* RTR -> RTS needs sq_psn, and no RC attribute. */
	a.qp_state = IBV_QPS_RTS;
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE));
	ASSERT_ERRNO(EINVAL, ibv_modify_qp(qp, &a, IBV_QP_STATE |
					   IBV_QP_SQ_PSN | IBV_QP_TIMEOUT));
	ASSERT_ERRNO(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
	/* SQD and back, then ERR and RESET. */
	ASSERT_EQ(0, qp_to_state(qp, IBV_QPS_SQD));
	ASSERT_EQ(0, qp_to_state(qp, IBV_QPS_RTS));
	ASSERT_EQ(0, qp_to_state(qp, IBV_QPS_ERR));
	EXPECT_QP_STATE(IBV_QPS_ERR, qp);
	ASSERT_EQ(0, qp_to_state(qp, IBV_QPS_RESET));
	EXPECT_QP_STATE(IBV_QPS_RESET, qp);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	self->qp = NULL;
}

/*
 * A source GID index with no GID: the RDMA core refuses it, with EINVAL
 * past the end of the table and ENODATA for an empty entry inside it.
 */
TEST_F(ud, create_ah_bad_sgid_index)
{
	int idx, n = self->a.port.gid_tbl_len < 256 ?
		     self->a.port.gid_tbl_len : 256;
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = { .dgid = self->b.gid, .hop_limit = 1 },
		.port_num = RC_PORT,
	};
	struct ibv_gid_entry e;

	if (n < 256) {
		aa.grh.sgid_index = (uint8_t)n;
		ASSERT_NULL_ERRNO(EINVAL, ibv_create_ah(self->a.pd, &aa));
	}
	for (idx = 0; idx < n; idx++)
		if (ibv_query_gid_ex(self->a.ctx, RC_PORT, idx, &e, 0))
			break;
	if (idx == n)
		SKIP(return, "no empty GID entry");
	aa.grh.sgid_index = (uint8_t)idx;
	ASSERT_NULL_ERRNO(ENODATA, ibv_create_ah(self->a.pd, &aa));
}

TEST_F(ud, create_ah_without_grh)
{
	struct ibv_ah_attr aa = { .is_global = 0, .port_num = RC_PORT };

	ASSERT_NULL_ERRNO(EINVAL, ibv_create_ah(self->a.pd, &aa));
}

/* Extended send API: ibv_wr_set_ud_addr(). */
TEST_F(ud, extended_send_api)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = self->a.scq,
		.recv_cq = self->a.rcq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = NWR, .max_recv_wr = NWR,
			 .max_send_sge = NSGE, .max_recv_sge = NSGE },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = self->a.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int i;

	self->qp = qp = ibv_create_qp_ex(self->a.ctx, &ia);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	ASSERT_EQ(0, ud_to_rts(qp, QKEY));
	qpx = ibv_qp_to_qp_ex(qp);
	ASSERT_NE(NULL, qpx);

	ASSERT_ERRNO(0, post_recv(&self->b, 1, RBUF, GRH_LEN + 128,
				  self->b.mr->lkey));
	ASSERT_ERRNO(0, post_recv(&self->b, 2, RBUF + 4096, GRH_LEN + 128,
				  self->b.mr->lkey));
	stream_fill(self->a.buf + SBUF, 151, 0, 128);
	ibv_wr_start(qpx);
	for (i = 0; i < 2; i++) {
		qpx->wr_id = 10 + i;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		if (i)
			ibv_wr_send_imm(qpx, htonl(0xabcd0001));
		else
			ibv_wr_send(qpx);
		ibv_wr_set_ud_addr(qpx, self->a.ah, self->b.qp->qp_num,
				   QKEY);
		ibv_wr_set_sge(qpx, self->a.mr->lkey,
			       (uintptr_t)(self->a.buf + SBUF), 128);
	}
	ASSERT_ERRNO(0, ibv_wr_complete(qpx));
	for (i = 0; i < 2; i++) {
		wc = wait_wc(_metadata, self->a.scq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_EQ((uint64_t)(10 + i), wc.wr_id);
		wc = wait_wc(_metadata, self->b.rcq);
		EXPECT_STATUS(IBV_WC_SUCCESS, wc);
		EXPECT_EQ(qp->qp_num, wc.src_qp);
		EXPECT_EQ(GRH_LEN + 128, wc.byte_len);
		EXPECT_EQ(i, !!(wc.wc_flags & IBV_WC_WITH_IMM));
		if (i)
			EXPECT_EQ(htonl(0xabcd0001), wc.imm_data);
		EXPECT_EQ(128, stream_check(self->b.buf + RBUF + i * 4096 +
					    GRH_LEN, 151, 0, 128));
	}
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	self->qp = NULL;

	/* A UD QP has no RDMA operations. */
	ia.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE;
	qp = ibv_create_qp_ex(self->a.ctx, &ia);
	EXPECT_EQ(NULL, qp);
	if (qp)
		ibv_destroy_qp(qp);
}

TEST_HARNESS_MAIN
