// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generated seeds for the fuzz targets, built with the repo's own header
 * builders (dray_wire_build(), dray_wire_build_l3(), the ICRC of
 * dev_icrc.c), in the input formats of fuzz_wire.c and fuzz_xport.c:
 *
 *   mkseeds DIR      writes DIR/fuzz_wire/gen-*, DIR/fuzz_resp/gen-*,
 *                    DIR/fuzz_comp/gen-*
 *
 * fuzz_wire: one frame of every opcode over IPv4 and a few over IPv6.
 * fuzz_resp: request sequences a requester sends (every RC request
 * opcode, segmented messages, duplicates, a PSN gap, RNR, remote
 * invalidation of the window, bad keys; on an SRQ, with its WQEs
 * rewritten, its producer index broken and its limit armed; two QPs on
 * the SRQ with messages to both interleaved (srq2-*), the second in
 * another PD than the SRQ and the first (srq2pd-*), and a third QP
 * (srq3-*); a UD QP on the SRQ receiving UD SENDs, with a bad Q_Key, into
 * a WQE too short, between messages to the RC QPs (srqud-*); as an XRC
 * target, to its domain's SRQ and another's, the SRQ destroyed inside a
 * message; two XRC targets on the XRC SRQ (xrc2-*)). fuzz_comp: send WQEs
 * and the responses a responder gives them (ACKs, READ responses, atomic
 * ACKs, NAKs of each kind, timeouts), and SENDs to two QPs on an SRQ
 * around them, and UD SENDs to the UD QP on the SRQ; send WQEs on both
 * QPs of the SRQ answered interleaved, with NAKs and a QP moved to ERR
 * (comp2-*). The captured seeds (cap-*) come from pcap2seeds.py; see
 * Documentation/testing.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "kshim.h"
#include "dev_wire.c"
#include "dev_icrc.c"

/* What fuzz_xport.c sets up (keep in step with it). */
#define MTU_CFG		2	/* % 5 + 1 = DRAY_MTU_1024 */
#define MTU		1024
#define KEY_RW		0x111
#define KEY_RO		0x222
#define KEY_MW		0x65a
#define KEY_OTHER	0x555		/* MR_OTHER, of the other PD */
#define IOVA_RW		(0x10000 + 0x123)
#define IOVA_RO		0x40000
#define IOVA_OTHER	0x100000
#define MW_IOVA		0x7000000ULL
#define RQ_PSN		0x00abcd
#define QPN		0x11
#define QPN2		0x12		/* CFG_QP2's QP */
#define RQ_PSN2		(RQ_PSN + 0x100)	/* + QP2_PSN_OFF */
#define QPN3		0x13		/* CFG_QP3's QP */
#define RQ_PSN3		(RQ_PSN + 0x200)	/* + QP3_PSN_OFF */
#define SQ_PSN		0xfffff0	/* wraps during the longer seeds */
#define UD_QPN		0x14		/* CFG_UD's QP */
#define UD_QKEY		0x1b2c3d4e	/* its Q_Key */
#define UD_SRC_QPN	0x2a5		/* the sender's QP, in the DETH */

#define F_RAW		0x01
#define F_BAD_ICRC	0x02
#define F_TIMER		0x10
#define F_POST_RQ	0x20
#define F_NOMEM		0x40
/* fuzz_xport.c's command records (CMD_*). */
#define CMD_DESTROY_RO		0
#define CMD_DESTROY_RECV	1
#define CMD_INVALIDATE_MW	3
#define CMD_DESTROY_RW		4
#define CMD_SQD			5
#define CMD_RTS			6
#define CMD_RETRY		7
#define CMD_REWRITE_SQ		8
#define CMD_ERR			9
#define CMD_REWRITE_SRQ		10
#define CMD_SRQ_BAD_PI		11
#define CMD_SRQ_LIMIT		12
#define CMD_DESTROY_SRQ		13
#define C_QP2			0x02	/* a QP's command: to the second */
#define C_QP3			0x04	/* ... to the third */
#define C_UD			0x08	/* ... to the UD QP */
/* fuzz_xport.c's configuration flags and SRQ numbers. */
#define CFG_SRQ			0x40
#define CFG_XRC			0x80
#define CFG_QP2			0x80	/* rq_sge: a second QP on the SRQ */
#define CFG_QP2_PD		0x40	/* rq_sge: ... in MR_OTHER's PD */
#define CFG_QP3			0x20	/* rq_sge: a third QP on the SRQ */
#define CFG_UD			0x10	/* rq_sge: a UD QP on the SRQ */
#define CFG_XRC2		0x08	/* rq_sge: a second XRC target */
#define CFG_SQ2			0x04	/* rq_sge: send WQEs to the second QP */
#define SQ_PSN2		((SQ_PSN + 0x100) & DRAY_PSN_MASK)	/* QP2's */
#define SRQN			2
#define OTHER_SRQN		3

struct seed {
	u8	buf[16384];
	u32	len;
};

static const char *outdir;

static void put(struct seed *s, const void *p, u32 n)
{
	if (s->len + n > sizeof(s->buf))
		abort();
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void put8(struct seed *s, u8 v)
{
	put(s, &v, 1);
}

static void put16(struct seed *s, u16 v)
{
	put8(s, v >> 8);
	put8(s, v);
}

static void put32(struct seed *s, u32 v)
{
	put16(s, v >> 16);
	put16(s, v);
}

static void save(const char *target, const char *name, const struct seed *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/gen-%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/*
 * The fuzz_xport.c configuration block (struct cfg); @rq_sge: SGEs - 1 of
 * each receive WQE and the QPs (CFG_QP2, CFG_QP2_PD, CFG_QP3, CFG_UD);
 * @rq_len: the receive SGEs' lengths (rwqe_fill()).
 */
static void cfg_all(struct seed *s, u8 flags, u8 max_dest, u8 rq_wqes,
		    u8 timeout, u8 rq_sge, u16 rq_len)
{
	put8(s, flags);
	put8(s, MTU_CFG);
	put8(s, DRAY_ACCESS_REMOTE_WRITE | DRAY_ACCESS_REMOTE_READ |
		DRAY_ACCESS_REMOTE_ATOMIC);
	put8(s, max_dest);		/* max_dest_rd_atomic */
	put8(s, 4);			/* max_rd_atomic */
	put8(s, 0x73);			/* retry_cnt 3, rnr_retry 7 */
	put8(s, timeout);
	put8(s, 12);			/* min_rnr_timer */
	put8(s, rq_wqes);
	put8(s, rq_sge);
	put16(s, rq_len);
	put16(s, 0x123);		/* MR_RW's iova in its page */
	put32(s, RQ_PSN);
	put32(s, SQ_PSN);
}

/*
 * The same with 3 SGEs of 5000, 977 and 1954 bytes first; @qp2: 0,
 * CFG_QP2 (a second QP on the SRQ), CFG_QP2 | CFG_QP2_PD (that QP in
 * another PD), with CFG_QP3 (a third), CFG_UD (a UD QP).
 */
static void cfg_qps(struct seed *s, u8 flags, u8 max_dest, u8 rq_wqes,
		    u8 timeout, u8 qp2)
{
	cfg_all(s, flags, max_dest, rq_wqes, timeout, 2 | qp2, 4999);
}

static void cfg(struct seed *s, u8 flags, u8 max_dest, u8 rq_wqes,
		u8 timeout)
{
	cfg_qps(s, flags, max_dest, rq_wqes, timeout, 0);
}

/* A command record: what software does between two frames. */
static void cmd(struct seed *s, u8 c)
{
	put8(s, F_RAW | c << 4);
	put16(s, 0);
}

/* A QP's command record (CMD_SQD, CMD_RTS, CMD_ERR) for the UD QP. */
static void cmd_ud(struct seed *s, u8 c)
{
	put8(s, F_RAW | C_UD | c << 4);
	put16(s, 0);
}

/* A QP's command record (CMD_SQD to CMD_ERR) for the second QP. */
static void cmd_qp2(struct seed *s, u8 c)
{
	put8(s, F_RAW | C_QP2 | c << 4);
	put16(s, 0);
}

/* ... for the third QP. */
static void cmd_qp3(struct seed *s, u8 c)
{
	put8(s, F_RAW | C_QP3 | c << 4);
	put16(s, 0);
}

/* One frame record: BTH and extended headers, payload, pad. */
static void frame(struct seed *s, u8 ctl, struct dray_pkt *p, u32 paylen,
		  u8 fill)
{
	u8 hdr[DRAY_HDR_MAX];
	u32 hlen, i;

	p->pad = dray_wire_pad(paylen);
	if (!p->pkey)
		p->pkey = DRAY_PKEY_DEFAULT;
	hlen = dray_wire_build(p, hdr);
	put8(s, ctl);
	put16(s, hlen + paylen + p->pad);
	put(s, hdr, hlen);
	for (i = 0; i < paylen; i++)
		put8(s, (u8)(fill + i * 13));
	for (i = 0; i < p->pad; i++)
		put8(s, 0);
}

/* A request to QP @qpn (the harness points other QPNs at QPN). */
static void req_to(struct seed *s, u32 qpn, u8 ctl, u8 op, u32 psn,
		   u32 paylen, bool ackreq)
{
	struct dray_pkt p = { .opcode = op, .psn = psn, .ackreq = ackreq,
			      .qpn = qpn };

	frame(s, ctl, &p, paylen, (u8)psn);
}

static void req(struct seed *s, u8 ctl, u8 op, u32 psn, u32 paylen,
		bool ackreq)
{
	req_to(s, QPN, ctl, op, psn, paylen, ackreq);
}

/*
 * A UD SEND Only (with Immediate if @imm) to QP @qpn: the DETH with
 * @qkey and a source QP of UD_SRC_QPN + @psn; P_Key @pkey (0: the
 * default), solicited if @se.
 */
static void ud_frame(struct seed *s, u8 ctl, u32 qpn, bool imm, u32 psn,
		     u32 qkey, u16 pkey, u32 paylen, bool se)
{
	struct dray_pkt p = {
		.opcode = imm ? DRAY_OP_UD_SEND_ONLY_IMM : DRAY_OP_UD_SEND_ONLY,
		.psn = psn, .qpn = qpn, .qkey = qkey, .pkey = pkey, .se = se,
		.src_qpn = UD_SRC_QPN + psn, .imm = cpu_to_be32(0xabcd00 + psn),
	};

	frame(s, ctl, &p, paylen, (u8)(psn * 29));
}

/* ... to the UD QP, of the default P_Key. */
static void ud_send(struct seed *s, u8 ctl, bool imm, u32 psn, u32 qkey,
		    u32 paylen, bool se)
{
	ud_frame(s, ctl, UD_QPN, imm, psn, qkey, 0, paylen, se);
}

static void rdma_to(struct seed *s, u32 qpn, u8 ctl, u8 op, u32 psn,
		    u32 rkey, u64 va, u32 dma_len, u32 paylen)
{
	struct dray_pkt p = { .opcode = op, .psn = psn, .rkey = rkey,
			      .va = va, .dma_len = dma_len, .ackreq = true,
			      .qpn = qpn, .imm = cpu_to_be32(0x1234) };

	frame(s, ctl, &p, paylen, (u8)psn);
}

static void rdma(struct seed *s, u8 ctl, u8 op, u32 psn, u32 rkey, u64 va,
		 u32 dma_len, u32 paylen)
{
	rdma_to(s, QPN, ctl, op, psn, rkey, va, dma_len, paylen);
}

static void atomic_to(struct seed *s, u32 qpn, u8 op, u32 psn, u32 rkey,
		      u64 va)
{
	struct dray_pkt p = { .opcode = op, .psn = psn, .rkey = rkey,
			      .va = va, .swap_add = 5,
			      .compare = 0x4141414141414141ULL,
			      .ackreq = true, .qpn = qpn };

	frame(s, 0, &p, 0, 0);
}

static void atomic(struct seed *s, u8 op, u32 psn, u32 rkey, u64 va)
{
	atomic_to(s, QPN, op, psn, rkey, va);
}

/*
 * An XRC request (IBTA annex A14) to XRC target @qpn: @op's XRC opcode,
 * naming XRC SRQ @srqn.
 */
static void xrc_to(struct seed *s, u32 qpn, u8 ctl, u8 op, u32 psn,
		   u32 srqn, u32 rkey, u64 va, u32 dma_len, u32 paylen)
{
	struct dray_pkt p = { .opcode = DRAY_OP_XRC | op, .psn = psn,
			      .xrc_srqn = srqn, .rkey = rkey, .va = va,
			      .dma_len = dma_len, .ackreq = true, .qpn = qpn,
			      .swap_add = 3, .compare = 0x4141414141414141ULL };

	frame(s, ctl, &p, paylen, (u8)psn);
}

/* ... to the first. */
static void xrc(struct seed *s, u8 ctl, u8 op, u32 psn, u32 srqn, u32 rkey,
		u64 va, u32 dma_len, u32 paylen)
{
	xrc_to(s, QPN, ctl, op, psn, srqn, rkey, va, dma_len, paylen);
}

/* fuzz_resp on an SRQ and as an XRC target. */
static void resp_srq_seeds(void)
{
	struct seed s;

	s.len = 0;	/* SENDs through the SRQ; empty: RNR, then one posted */
	cfg(&s, CFG_SRQ, 4, 3, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 100, true);
	req(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN + 1, MTU, false);
	req(&s, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN + 2, 9, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 3, 10, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 4, 10, true);
	req(&s, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN + 4, 10, true);
	save("fuzz_resp", "srq-send", &s);

	/*
	 * The next WQE rewritten (fuzz_xport.c's srq_rewrite(): the first
	 * rewrite of index 0 keys an SGE with another PD's MR, of index 1
	 * gives it too many SGEs, of index 2 a tag not below the depth).
	 */
	s.len = 0;
	cfg(&s, CFG_SRQ, 4, 8, 14);
	cmd(&s, CMD_REWRITE_SRQ);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	save("fuzz_resp", "srq-rewrite-key", &s);

	s.len = 0;
	cfg(&s, CFG_SRQ, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	cmd(&s, CMD_REWRITE_SRQ);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	save("fuzz_resp", "srq-rewrite-sge", &s);

	s.len = 0;
	cfg(&s, CFG_SRQ, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	cmd(&s, CMD_REWRITE_SRQ);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, 20, true);
	save("fuzz_resp", "srq-rewrite-tag", &s);

	s.len = 0;	/* a producer index out of range; the limit armed */
	cfg(&s, CFG_SRQ, 4, 8, 14);
	cmd(&s, CMD_SRQ_LIMIT);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	cmd(&s, CMD_SRQ_BAD_PI);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	save("fuzz_resp", "srq-bad-pi", &s);

	s.len = 0;	/* XRC: every operation to the domain's SRQ */
	cfg(&s, CFG_XRC, 4, 8, 14);
	xrc(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, SRQN, 0, 0, 0, 100);
	xrc(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 1, SRQN, KEY_RW, IOVA_RW + 8,
	    16, 16);
	xrc(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 2, SRQN, KEY_RW, IOVA_RW,
	    2 * MTU, 0);
	xrc(&s, 0, DRAY_OP_FETCH_ADD, RQ_PSN + 4, SRQN, KEY_RW, IOVA_RW + 13,
	    8, 0);
	xrc(&s, 0, DRAY_OP_WRITE_ONLY_IMM, RQ_PSN + 5, SRQN, KEY_MW, MW_IOVA,
	    4, 4);
	save("fuzz_resp", "xrc-ops", &s);

	s.len = 0;	/* XRC: another domain's SRQ named, inside a SEND too */
	cfg(&s, CFG_XRC, 4, 8, 14);
	xrc(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN, SRQN, 0, 0, 0, MTU);
	xrc(&s, 0, DRAY_OP_SEND_LAST, RQ_PSN + 1, OTHER_SRQN, 0, 0, 0, 10);
	save("fuzz_resp", "xrc-other-srq", &s);

	s.len = 0;
	cfg(&s, CFG_XRC, 4, 8, 14);
	xrc(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, OTHER_SRQN, 0, 0, 0, 10);
	save("fuzz_resp", "xrc-other-only", &s);

	s.len = 0;	/* XRC: the SRQ destroyed inside a SEND */
	cfg(&s, CFG_XRC, 4, 8, 14);
	xrc(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN, SRQN, 0, 0, 0, MTU);
	cmd(&s, CMD_DESTROY_SRQ);
	xrc(&s, 0, DRAY_OP_SEND_LAST, RQ_PSN + 1, SRQN, 0, 0, 0, 10);
	xrc(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, SRQN, 0, 0, 0, 10);
	save("fuzz_resp", "xrc-destroy-srq", &s);
}

/*
 * fuzz_resp with two XRC targets of one domain on its XRC SRQ (CFG_XRC |
 * CFG_XRC2): messages to both interleaved, each target taking the SRQ's
 * next WQE when a message to it starts; R_Keys of the SRQ's PD, the
 * window (bound to the first) refused to the second.
 */
static void resp_xrc2_seeds(void)
{
	const u8 two = 2 | CFG_XRC2;
	struct seed s;

	/*
	 * SENDs: target 1 takes WQE 0 for a 2-packet SEND, target 2 WQE 1
	 * in the middle of it, then WQE 2; target 1 WQE 3.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 8, 14, two, 4999);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_FIRST, RQ_PSN, SRQN, 0, 0, 0, MTU);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, SRQN, 0, 0, 0, 100);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN + 1, SRQN, 0, 0, 0,
	       9);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN2 + 1, SRQN, 0, 0,
	       0, 7);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, SRQN, 0, 0, 0, 30);
	save("fuzz_resp", "xrc2-send", &s);

	/*
	 * Two WQEs for three SENDs: the third, to target 2, is RNR NAK'd
	 * until one is posted; target 1 then waits for another.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 2, 14, two, 4999);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, SRQN, 0, 0, 0, 10);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, SRQN, 0, 0, 0, 10);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, SRQN, 0, 0, 0,
	       10);
	xrc_to(&s, QPN2, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, SRQN, 0,
	       0, 0, 10);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, SRQN, 0, 0, 0, 10);
	xrc_to(&s, QPN, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN + 1, SRQN, 0, 0,
	       0, 10);
	save("fuzz_resp", "xrc2-rnr", &s);

	/*
	 * RDMA to both under the SRQ's PD: a WRITE, a READ and a FetchAdd
	 * to target 2 between SENDs to target 1; the window through target
	 * 1, then through target 2 (bound to target 1: a remote access NAK,
	 * target 2 to ERR); target 1 goes on.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 8, 14, two, 4999);
	xrc_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, SRQN, KEY_RW,
	       IOVA_RW + 16, 64, 64);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, SRQN, 0, 0, 0, 20);
	xrc_to(&s, QPN2, 0, DRAY_OP_READ_REQUEST, RQ_PSN2 + 1, SRQN, KEY_RW,
	       IOVA_RW, 2 * MTU, 0);
	xrc_to(&s, QPN2, 0, DRAY_OP_FETCH_ADD, RQ_PSN2 + 3, SRQN, KEY_RW,
	       IOVA_RW + 13, 8, 0);
	xrc_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 1, SRQN, KEY_MW,
	       MW_IOVA + 8, 4, 4);
	xrc_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2 + 4, SRQN, KEY_MW,
	       MW_IOVA, 4, 4);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, SRQN, 0, 0, 0, 20);
	save("fuzz_resp", "xrc2-ops", &s);

	/*
	 * The other domain's key (MR_OTHER, of the other PD) to target 2:
	 * refused, a remote access NAK; target 1 reads MR_RO meanwhile.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 8, 14, two, 4999);
	xrc_to(&s, QPN, 0, DRAY_OP_READ_REQUEST, RQ_PSN, SRQN, KEY_RO,
	       IOVA_RO + 100, 300, 0);
	xrc_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, SRQN, KEY_OTHER,
	       IOVA_OTHER, 16, 16);
	xrc_to(&s, QPN, 0, DRAY_OP_CMP_SWAP, RQ_PSN + 1, SRQN, KEY_RW,
	       IOVA_RW + 29, 8, 0);
	save("fuzz_resp", "xrc2-other-pd", &s);

	/*
	 * Target 2 holds a WQE inside a SEND and goes to ERR (flushed with
	 * its tag on the SRQ's CQ); target 1 takes the next; target 2's
	 * last packet is dropped. The other domain's SRQ named to target 1
	 * inside a SEND.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 8, 14, two, 4999);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_FIRST, RQ_PSN2, SRQN, 0, 0, 0, MTU);
	cmd_qp2(&s, CMD_ERR);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, SRQN, 0, 0, 0, 20);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_LAST, RQ_PSN2 + 1, SRQN, 0, 0, 0,
	       20);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_FIRST, RQ_PSN + 1, SRQN, 0, 0, 0,
	       MTU);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_LAST, RQ_PSN + 2, OTHER_SRQN, 0, 0,
	       0, 10);
	save("fuzz_resp", "xrc2-err", &s);

	/*
	 * The limit armed; WQE 1 rewritten with too many SGEs goes to target
	 * 2 (LOC_QP_OP_ERR, target 2 to ERR); target 1 takes WQE 2 for a
	 * SEND inside which the SRQ is destroyed.
	 */
	s.len = 0;
	cfg_all(&s, CFG_XRC, 4, 8, 14, two, 4999);
	cmd(&s, CMD_SRQ_LIMIT);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, SRQN, 0, 0, 0, 20);
	cmd(&s, CMD_REWRITE_SRQ);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, SRQN, 0, 0, 0, 20);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_FIRST, RQ_PSN + 1, SRQN, 0, 0, 0,
	       MTU);
	cmd(&s, CMD_DESTROY_SRQ);
	xrc_to(&s, QPN, 0, DRAY_OP_SEND_LAST, RQ_PSN + 2, SRQN, 0, 0, 0, 10);
	xrc_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, SRQN, 0, 0, 0,
	       10);
	save("fuzz_resp", "xrc2-rewrite-destroy", &s);
}

/*
 * fuzz_resp with a second QP on the SRQ (CFG_QP2): messages to both
 * interleaved, each QP taking the SRQ's next WQE when a message starts.
 */
static void resp_srq2_seeds(void)
{
	struct dray_pkt p;
	struct seed s;

	/*
	 * SENDs to both: QP 1 takes SRQ WQE 0, QP 2 WQE 1; then a 3-packet
	 * SEND to QP 1 (WQE 2) around a 2-packet one and a SEND to QP 2
	 * (WQEs 3 and 4); QP 2 to SQD and back meanwhile.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 100, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 200, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_FIRST, RQ_PSN + 1, MTU, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_FIRST, RQ_PSN2 + 1, MTU, false);
	cmd_qp2(&s, CMD_SQD);
	req_to(&s, QPN, 0, DRAY_OP_SEND_MIDDLE, RQ_PSN + 2, MTU, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN2 + 2, 9, true);
	cmd_qp2(&s, CMD_RTS);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN2 + 3, 7, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_LAST, RQ_PSN + 3, 10, true);
	save("fuzz_resp", "srq2-send", &s);

	/*
	 * Two WQEs for three messages: the third is RNR NAK'd until one is
	 * posted; then QP 2 and QP 1 each get one more.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 2, 14, CFG_QP2);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 10, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, 10, true);
	req_to(&s, QPN2, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, 10, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 10, true);
	req_to(&s, QPN, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 10, true);
	save("fuzz_resp", "srq2-rnr", &s);

	/*
	 * QP 1 takes WQE 0; WQE 1 rewritten with too many SGEs goes to QP 2,
	 * which completes it in error and goes to ERR; QP 1 goes on with
	 * WQE 2.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	cmd(&s, CMD_REWRITE_SRQ);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 20, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, 20, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, 20, true);
	save("fuzz_resp", "srq2-rewrite", &s);

	/*
	 * The limit armed; QP 2 moved to ERR holding a WQE (flushed with
	 * its tag, the last WQE event), QP 1 takes the next; then the
	 * producer index broken.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2);
	cmd(&s, CMD_SRQ_LIMIT);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_FIRST, RQ_PSN2, MTU, false);
	cmd_qp2(&s, CMD_ERR);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_LAST, RQ_PSN2 + 1, 20, true);
	cmd(&s, CMD_SRQ_BAD_PI);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	save("fuzz_resp", "srq2-err-limit", &s);

	/*
	 * RDMA to QP 2 between SENDs to QP 1; the window, bound to QP 1, is
	 * neither invalidated (SEND with Invalidate) nor written through
	 * QP 2, then written through QP 1.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, KEY_RW,
		IOVA_RW + 16, 64, 64);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	rdma_to(&s, QPN2, 0, DRAY_OP_READ_REQUEST, RQ_PSN2 + 1, KEY_RW,
		IOVA_RW, 2 * MTU, 0);
	atomic_to(&s, QPN2, DRAY_OP_FETCH_ADD, RQ_PSN2 + 3, KEY_RW,
		  IOVA_RW + 13);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	p = (struct dray_pkt){ .opcode = DRAY_OP_SEND_ONLY_INV,
			       .psn = RQ_PSN2 + 4, .rkey = KEY_MW,
			       .ackreq = true, .qpn = QPN2 };
	frame(&s, 0, &p, 20, 1);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2 + 5, KEY_MW,
		MW_IOVA, 4, 4);
	rdma_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 2, KEY_MW,
		MW_IOVA + 8, 4, 4);
	save("fuzz_resp", "srq2-ops", &s);
}

/*
 * fuzz_resp with the second QP in another PD (CFG_QP2_PD), the PD of
 * MR_OTHER: SENDs to it land through the SRQ's WQEs, whose lkeys are
 * checked against the SRQ's PD; its RDMA and atomics go to MR_OTHER
 * with MR_OTHER's key; a key of the first QP's PD (MR_RW, MR_RO, the
 * window) is a remote access error to it, and MR_OTHER's to the first.
 * Each seed ends with at most one such error per QP (it goes to ERR).
 */
static void resp_srq2pd_seeds(void)
{
	const u8 qp2 = CFG_QP2 | CFG_QP2_PD;
	struct dray_pkt p;
	struct seed s;

	/*
	 * SENDs to both, QP 2's into the SRQ's WQEs 1 and 3 (MR_RECV, of
	 * the SRQ's PD, not QP 2's); a 2-packet one to QP 2 around one to
	 * QP 1.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 100, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 200, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_FIRST, RQ_PSN2 + 1, MTU, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN + 1, 30, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN2 + 2, 9, true);
	save("fuzz_resp", "srq2pd-send", &s);

	/*
	 * SRQ WQE 0 rewritten with MR_OTHER's key (QP 2's PD, not the
	 * SRQ's): QP 2 takes it, completes it with LOC_PROT_ERR and errs,
	 * MR_OTHER unchanged; QP 1 goes on with WQE 1.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	cmd(&s, CMD_REWRITE_SRQ);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 20, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	save("fuzz_resp", "srq2pd-rewrite-key", &s);

	/*
	 * WRITEs to QP 2 with MR_OTHER's key land there (the last with
	 * immediate takes an SRQ WQE); then one with MR_RW's key, of QP 1's
	 * PD: remote access NAK, QP 2 errs, MR_RW unchanged; QP 1 writes
	 * MR_RW with it.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, KEY_OTHER,
		IOVA_OTHER + 16, 64, 64);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_FIRST, RQ_PSN2 + 1, KEY_OTHER,
		IOVA_OTHER + 200, MTU + 40, MTU);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	p = (struct dray_pkt){ .opcode = DRAY_OP_WRITE_LAST_IMM,
			       .psn = RQ_PSN2 + 2, .ackreq = true,
			       .qpn = QPN2, .imm = cpu_to_be32(5) };
	frame(&s, 0, &p, 40, 3);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2 + 3, KEY_RW,
		IOVA_RW + 16, 64, 64);
	rdma_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 1, KEY_RW,
		IOVA_RW + 16, 64, 64);
	save("fuzz_resp", "srq2pd-write", &s);

	/*
	 * The other way: MR_OTHER's key to QP 1 is a remote access error;
	 * to QP 2 it writes.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	rdma_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_OTHER,
		IOVA_OTHER + 8, 32, 32);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, KEY_OTHER,
		IOVA_OTHER + 8, 32, 32);
	save("fuzz_resp", "srq2pd-write-qp1", &s);

	/*
	 * READs by QP 2: MR_OTHER in two responses, then the read-only MR
	 * of QP 1's PD: remote access NAK.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	rdma_to(&s, QPN2, 0, DRAY_OP_READ_REQUEST, RQ_PSN2, KEY_OTHER,
		IOVA_OTHER + 100, 2 * MTU - 50, 0);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	rdma_to(&s, QPN2, 0, DRAY_OP_READ_REQUEST, RQ_PSN2 + 2, KEY_RO,
		IOVA_RO, 64, 0);
	save("fuzz_resp", "srq2pd-read", &s);

	/* A READ of MR_RW by QP 2: remote access NAK; by QP 1 answered. */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	rdma_to(&s, QPN2, 0, DRAY_OP_READ_REQUEST, RQ_PSN2, KEY_RW, IOVA_RW,
		64, 0);
	rdma_to(&s, QPN, 0, DRAY_OP_READ_REQUEST, RQ_PSN, KEY_RW, IOVA_RW,
		64, 0);
	save("fuzz_resp", "srq2pd-read-rw", &s);

	/*
	 * Atomics by QP 2 on MR_OTHER (a CmpSwap that matches its fill,
	 * a FetchAdd); then a FetchAdd on MR_RW: remote access NAK.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	p = (struct dray_pkt){ .opcode = DRAY_OP_CMP_SWAP, .psn = RQ_PSN2,
			       .rkey = KEY_OTHER, .va = IOVA_OTHER + 16,
			       .swap_add = 0x1122334455667788ULL,
			       .compare = 0x4444444444444444ULL,
			       .ackreq = true, .qpn = QPN2 };
	frame(&s, 0, &p, 0, 0);
	atomic_to(&s, QPN2, DRAY_OP_FETCH_ADD, RQ_PSN2 + 1, KEY_OTHER,
		  IOVA_OTHER + 24);
	atomic_to(&s, QPN2, DRAY_OP_FETCH_ADD, RQ_PSN2 + 2, KEY_RW,
		  IOVA_RW + 13);
	save("fuzz_resp", "srq2pd-atomic", &s);

	/*
	 * The window (QP 1's PD, bound to QP 1) through QP 2: remote
	 * access NAK; QP 1 writes through it.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp2);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, KEY_MW, MW_IOVA,
		4, 4);
	rdma_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_MW, MW_IOVA, 4, 4);
	save("fuzz_resp", "srq2pd-window", &s);
}

/*
 * fuzz_resp with three QPs on the SRQ (CFG_QP3), the second in another
 * PD in the last two seeds: each message takes the SRQ's next WQE.
 */
static void resp_srq3_seeds(void)
{
	const u8 qp3 = CFG_QP2 | CFG_QP3;
	struct seed s;

	/*
	 * SENDs to the three interleaved, a 2-packet one to QP 3 around
	 * the others; QP 3 to SQD and back meanwhile.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp3);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_ONLY, RQ_PSN3, 30, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 40, true);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_FIRST, RQ_PSN3 + 1, MTU, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 50, true);
	cmd_qp3(&s, CMD_SQD);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN3 + 2, 9, true);
	cmd_qp3(&s, CMD_RTS);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN + 1, 7, true);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_ONLY, RQ_PSN3 + 3, 10, true);
	save("fuzz_resp", "srq3-send", &s);

	/*
	 * Three WQEs for four messages: QP 1's is RNR NAK'd until one is
	 * posted; QP 3 moved to ERR inside a SEND (its WQE flushed with its
	 * tag), QP 2 and QP 1 go on.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 3, 14, qp3 | CFG_QP2_PD);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 10, true);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_FIRST, RQ_PSN3, MTU, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, 10, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	cmd_qp3(&s, CMD_ERR);
	req_to(&s, QPN, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	req_to(&s, QPN3, 0, DRAY_OP_SEND_LAST, RQ_PSN3 + 1, 10, true);
	save("fuzz_resp", "srq3-rnr-err", &s);

	/*
	 * RDMA to each: QP 2 writes MR_OTHER (its PD), QP 3 MR_RW (its and
	 * QP 1's); the window, bound to QP 1, refused to QP 3 (remote access
	 * NAK), used by QP 1.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, qp3 | CFG_QP2_PD);
	rdma_to(&s, QPN2, 0, DRAY_OP_WRITE_ONLY, RQ_PSN2, KEY_OTHER,
		IOVA_OTHER + 40, 16, 16);
	rdma_to(&s, QPN3, 0, DRAY_OP_WRITE_ONLY, RQ_PSN3, KEY_RW,
		IOVA_RW + 40, 16, 16);
	rdma_to(&s, QPN3, 0, DRAY_OP_READ_REQUEST, RQ_PSN3 + 1, KEY_RW,
		IOVA_RW + 40, 16, 0);
	rdma_to(&s, QPN3, 0, DRAY_OP_WRITE_ONLY, RQ_PSN3 + 2, KEY_MW,
		MW_IOVA, 4, 4);
	rdma_to(&s, QPN, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_MW, MW_IOVA, 4, 4);
	save("fuzz_resp", "srq3-ops", &s);
}

/*
 * fuzz_resp with a UD QP on the SRQ (CFG_UD): UD SENDs (DETH: Q_Key and
 * source QP) to it take the SRQ's next WQE each, as SENDs to the RC QPs
 * do; the WQE gets a GRH (40 bytes: the IP header) and the payload.
 */
static void resp_srqud_seeds(void)
{
	struct seed s;

	/*
	 * UD SEND Only into WQE 0, with Immediate and solicited into WQE 1,
	 * of no payload (the GRH alone) into WQE 2; a SEND to QP 1 takes
	 * WQE 3; the largest payload (4096 bytes) goes into WQE 4.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_UD);
	ud_send(&s, 0, false, 1, UD_QKEY, 100, false);
	ud_send(&s, 0, true, 2, UD_QKEY, 7, true);
	ud_send(&s, 0, false, 3, UD_QKEY, 0, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	ud_send(&s, 0, false, 4, UD_QKEY, 4096, false);
	save("fuzz_resp", "srqud-send", &s);

	s.len = 0;	/* over IPv6: the GRH is the IPv6 header */
	cfg_qps(&s, CFG_SRQ | 0x01, 4, 8, 14, CFG_UD);
	ud_send(&s, 0, true, 1, UD_QKEY, 33, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	ud_send(&s, 0, false, 2, UD_QKEY, 61, false);
	save("fuzz_resp", "srqud-ipv6", &s);

	/*
	 * Dropped, no WQE taken: a Q_Key one off, the QP's with bit 31 set
	 * (a controlled Q_Key), a P_Key we are not in, more than 4096
	 * bytes, a bad ICRC; UD SENDs to the RC QP (with the UD QP's Q_Key,
	 * and with 0, the RC QP's unused one), an RC SEND to the UD QP. The
	 * good ones between take WQEs 0 and 1.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_UD);
	ud_send(&s, 0, false, 1, UD_QKEY + 1, 10, false);
	ud_send(&s, 0, false, 2, UD_QKEY | 0x80000000, 10, false);
	ud_frame(&s, 0, UD_QPN, false, 3, UD_QKEY, 0x1234, 10, false);
	ud_send(&s, 0, true, 4, UD_QKEY, 30, false);
	ud_send(&s, 0, false, 5, UD_QKEY, 4097, false);
	ud_send(&s, F_BAD_ICRC, false, 6, UD_QKEY, 10, false);
	ud_frame(&s, 0, QPN, false, 7, UD_QKEY, 0, 10, false);
	ud_frame(&s, 0, QPN, false, 8, 0, 0, 10, false);
	req_to(&s, UD_QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	ud_send(&s, 0, false, 9, UD_QKEY, 10, false);
	save("fuzz_resp", "srqud-bad-qkey", &s);

	/*
	 * One SGE a WQE, of 101, 1078, 2055, 3032 bytes: 61 bytes fill
	 * WQE 0 to the last byte; QP 1 takes WQE 1; 2016 bytes are one too
	 * many for WQE 2: LOC_LEN_ERR, the UD QP errs and drops the next;
	 * QP 1 takes WQE 3.
	 */
	s.len = 0;
	cfg_all(&s, CFG_SRQ, 4, 4, 14, 0 | CFG_UD, 100);
	ud_send(&s, 0, false, 1, UD_QKEY, 61, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	ud_send(&s, 0, false, 2, UD_QKEY, 2016, false);
	ud_send(&s, 0, false, 3, UD_QKEY, 10, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 20, true);
	save("fuzz_resp", "srqud-short", &s);

	/*
	 * Interleaved with two RC QPs: QP 1 takes WQE 0 for a 2-packet
	 * SEND, the UD QP WQE 1, QP 2 WQE 2; the UD QP in SQD still
	 * receives (WQE 3); WQE 4 rewritten with too many SGEs goes to the
	 * UD QP (LOC_QP_OP_ERR, it errs); QP 2 takes WQE 5.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2 | CFG_UD);
	req_to(&s, QPN, 0, DRAY_OP_SEND_FIRST, RQ_PSN, MTU, false);
	ud_send(&s, 0, false, 1, UD_QKEY, 50, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 40, true);
	cmd_ud(&s, CMD_SQD);
	ud_send(&s, 0, true, 2, UD_QKEY, 9, true);
	cmd_ud(&s, CMD_RTS);
	req_to(&s, QPN, 0, DRAY_OP_SEND_LAST, RQ_PSN + 1, 30, true);
	cmd(&s, CMD_REWRITE_SRQ);
	ud_send(&s, 0, false, 3, UD_QKEY, 20, false);
	ud_send(&s, 0, false, 4, UD_QKEY, 20, false);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2 + 1, 40, true);
	save("fuzz_resp", "srqud-mixed", &s);

	/*
	 * WQE 0 rewritten with an SGE keyed with MR_OTHER (another PD than
	 * the SRQ's) and inside it: the UD QP's receive is refused
	 * (LOC_PROT_ERR), MR_OTHER unchanged; QP 1 finds no WQE (RNR) until
	 * one is posted.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 1, 14, CFG_UD);
	cmd(&s, CMD_REWRITE_SRQ);
	ud_send(&s, 0, false, 1, UD_QKEY, 64, false);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	req_to(&s, QPN, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN, 20, true);
	save("fuzz_resp", "srqud-rewrite-key", &s);

	/*
	 * The SRQ limit armed at 2 of 2 WQEs: the UD QP's first take fires
	 * it; WQE 1; none left: dropped; one posted and taken; then a
	 * producer index out of range: the SRQ errs, the UD QP with it.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 2, 14, CFG_UD);
	cmd(&s, CMD_SRQ_LIMIT);
	ud_send(&s, 0, false, 1, UD_QKEY, 10, false);
	ud_send(&s, 0, false, 2, UD_QKEY, 10, false);
	ud_send(&s, 0, false, 3, UD_QKEY, 10, false);
	ud_send(&s, F_POST_RQ, false, 4, UD_QKEY, 10, false);
	cmd(&s, CMD_SRQ_BAD_PI);
	ud_send(&s, 0, false, 5, UD_QKEY, 10, false);
	save("fuzz_resp", "srqud-empty", &s);
}

/* --- fuzz_resp --------------------------------------------------------- */

static void resp_seeds(void)
{
	struct seed s;
	struct dray_pkt p;
	u32 psn;

	s.len = 0;	/* SEND Only, SEND Only with Immediate */
	cfg(&s, 0, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 100, true);
	req(&s, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN + 1, 7, false);
	save("fuzz_resp", "send-only", &s);

	s.len = 0;	/* a 3-packet SEND with immediate */
	cfg(&s, 0, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN, MTU, false);
	req(&s, 0, DRAY_OP_SEND_MIDDLE, RQ_PSN + 1, MTU, false);
	req(&s, 0, DRAY_OP_SEND_LAST_IMM, RQ_PSN + 2, 501, true);
	save("fuzz_resp", "send-3pkt", &s);

	s.len = 0;	/* WRITE Only, WRITE Only with Immediate */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_RW, IOVA_RW + 16, 64, 64);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY_IMM, RQ_PSN + 1, KEY_RW, IOVA_RW + 4090,
	     33, 33);
	save("fuzz_resp", "write-only", &s);

	s.len = 0;	/* WRITE First, Middle, Last with Immediate */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_FIRST, RQ_PSN, KEY_RW, IOVA_RW + 100,
	     2 * MTU + 300, MTU);
	req(&s, 0, DRAY_OP_WRITE_MIDDLE, RQ_PSN + 1, MTU, false);
	p = (struct dray_pkt){ .opcode = DRAY_OP_WRITE_LAST_IMM,
			       .psn = RQ_PSN + 2, .ackreq = true,
			       .imm = cpu_to_be32(7) };
	frame(&s, 0, &p, 300, 9);
	save("fuzz_resp", "write-3pkt", &s);

	s.len = 0;	/* READ of MR_RW and of the read-only MR, paced */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN, KEY_RW, IOVA_RW, 3000, 0);
	rdma(&s, F_TIMER, DRAY_OP_READ_REQUEST, RQ_PSN + 3, KEY_RO,
	     IOVA_RO + 8, 100, 0);
	save("fuzz_resp", "read", &s);

	s.len = 0;	/* CmpSwap and FetchAdd, then a duplicate of each */
	cfg(&s, 0, 4, 8, 14);
	atomic(&s, DRAY_OP_CMP_SWAP, RQ_PSN, KEY_RW, IOVA_RW + 5);
	atomic(&s, DRAY_OP_FETCH_ADD, RQ_PSN + 1, KEY_RW, IOVA_RW + 13);
	atomic(&s, DRAY_OP_CMP_SWAP, RQ_PSN, KEY_RW, IOVA_RW + 5);
	atomic(&s, DRAY_OP_FETCH_ADD, RQ_PSN + 1, KEY_RW, IOVA_RW + 13);
	save("fuzz_resp", "atomic-dup", &s);

	s.len = 0;	/* duplicate WRITE and READ: ACK again, answer again */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_RW, IOVA_RW, 8, 8);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 1, KEY_RW, IOVA_RW,
	     2 * MTU, 0);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_RW, IOVA_RW, 8, 8);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 2, KEY_RW, IOVA_RW + MTU,
	     MTU, 0);
	save("fuzz_resp", "dup", &s);

	s.len = 0;	/* a READ of 3 packets asked again from its second */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN, KEY_RW, IOVA_RW, 3 * MTU, 0);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 1, KEY_RW, IOVA_RW + MTU,
	     2 * MTU, 0);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 2, KEY_RW,
	     IOVA_RW + 2 * MTU, MTU, 0);
	save("fuzz_resp", "dup-read-middle", &s);

	/*
	 * A READ of 3 packets whose responses are held up (no memory), asked
	 * again from its second before any was sent: dropped, and the three
	 * go from the first.
	 */
	s.len = 0;
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, F_NOMEM, DRAY_OP_READ_REQUEST, RQ_PSN, KEY_RW, IOVA_RW,
	     3 * MTU, 0);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 1, KEY_RW, IOVA_RW + MTU,
	     2 * MTU, 0);
	save("fuzz_resp", "dup-read-ahead", &s);

	s.len = 0;	/* a PSN gap: sequence NAK, then the missing packet */
	cfg(&s, 0, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 10, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 2, 10, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 1, 10, true);
	save("fuzz_resp", "psn-gap", &s);

	s.len = 0;	/* no receive WQE: RNR NAK; then one is posted */
	cfg(&s, 0, 4, 0, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	req(&s, F_POST_RQ, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	save("fuzz_resp", "rnr", &s);

	s.len = 0;	/* the window: WRITE and READ through it, invalidate it */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_MW, MW_IOVA + 500, 12, 12);
	rdma(&s, 0, DRAY_OP_READ_REQUEST, RQ_PSN + 1, KEY_MW, MW_IOVA + 8, 30, 0);
	p = (struct dray_pkt){ .opcode = DRAY_OP_SEND_ONLY_INV,
			       .psn = RQ_PSN + 2, .rkey = KEY_MW,
			       .ackreq = true };
	frame(&s, 0, &p, 20, 1);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 3, KEY_MW, MW_IOVA, 4, 4);
	save("fuzz_resp", "window", &s);

	s.len = 0;	/* SEND with invalidate in 2 packets */
	cfg(&s, 0, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN, MTU, false);
	p = (struct dray_pkt){ .opcode = DRAY_OP_SEND_LAST_INV,
			       .psn = RQ_PSN + 1, .rkey = KEY_MW,
			       .ackreq = true };
	frame(&s, 0, &p, 3, 1);
	save("fuzz_resp", "send-inv", &s);

	s.len = 0;	/* a key of the read-only MR: remote access error */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN, KEY_RO, IOVA_RO, 8, 8);
	save("fuzz_resp", "bad-rkey", &s);

	s.len = 0;	/* more READs than responder resources */
	cfg(&s, 0, 2, 8, 14);
	for (psn = RQ_PSN; psn < RQ_PSN + 3; psn++)
		rdma(&s, 0, DRAY_OP_READ_REQUEST, psn, KEY_RW, IOVA_RW, 8, 0);
	save("fuzz_resp", "read-depth", &s);

	s.len = 0;	/* READ responses held up, the MR destroyed meanwhile */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, F_NOMEM, DRAY_OP_READ_REQUEST, RQ_PSN, KEY_RO, IOVA_RO, 3000,
	     0);
	cmd(&s, CMD_DESTROY_RO);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN + 3, 10, true);
	save("fuzz_resp", "destroy-read", &s);

	s.len = 0;	/* receive buffers destroyed inside a SEND */
	cfg(&s, 0, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_FIRST, RQ_PSN, MTU, false);
	cmd(&s, CMD_DESTROY_RECV);
	req(&s, 0, DRAY_OP_SEND_LAST, RQ_PSN + 1, 10, true);
	save("fuzz_resp", "destroy-recv", &s);

	s.len = 0;	/* window invalidated, its MR destroyed, then used */
	cfg(&s, 0, 4, 8, 14);
	rdma(&s, 0, DRAY_OP_WRITE_FIRST, RQ_PSN, KEY_RW, IOVA_RW, 2 * MTU, MTU);
	cmd(&s, CMD_INVALIDATE_MW);
	cmd(&s, CMD_DESTROY_RW);
	req(&s, 0, DRAY_OP_WRITE_LAST, RQ_PSN + 1, MTU, true);
	save("fuzz_resp", "destroy-rw", &s);

	s.len = 0;	/* in RTR (COMM_EST); receive WQEs malformed, bad lkey */
	cfg(&s, 0x20 | 0x10 | 0x08, 4, 8, 14);
	for (psn = RQ_PSN; psn < RQ_PSN + 4; psn++)
		req(&s, 0, DRAY_OP_SEND_ONLY, psn, 20, true);
	save("fuzz_resp", "rtr-bad-rwqe", &s);

	s.len = 0;	/* IPv6 path, SEND then WRITE */
	cfg(&s, 0x01, 4, 8, 14);
	req(&s, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 33, false);
	rdma(&s, 0, DRAY_OP_WRITE_ONLY, RQ_PSN + 1, KEY_RW, IOVA_RW, 1, 1);
	save("fuzz_resp", "ipv6", &s);

	resp_srq_seeds();
	resp_srq2_seeds();
	resp_srq2pd_seeds();
	resp_srq3_seeds();
	resp_srqud_seeds();
	resp_xrc2_seeds();
}

/* --- fuzz_comp ----------------------------------------------------------- */

/* A WQE descriptor of fuzz_xport.c's sq_post() (WQE_DESC bytes). */
static void wqe(struct seed *s, u8 op, u8 flags, u16 len, u8 nsge)
{
	put8(s, op);
	put8(s, flags);
	put16(s, len);
	put16(s, 0x40);		/* remote address */
	put8(s, nsge - 1);
	put8(s, 0x11);		/* rkey low byte, immediate */
	put16(s, 0x0102);	/* atomic operands, local offset */
}

/* An ACK or NAK to QP @qpn (0: the first). */
static void ack_to(struct seed *s, u32 qpn, u8 ctl, u8 syndrome, u32 psn,
		   u32 msn)
{
	struct dray_pkt p = { .opcode = DRAY_OP_ACK, .psn = psn,
			      .syndrome = syndrome, .msn = msn, .qpn = qpn };

	frame(s, ctl, &p, 0, 0);
}

static void ack(struct seed *s, u8 ctl, u8 syndrome, u32 psn, u32 msn)
{
	ack_to(s, 0, ctl, syndrome, psn, msn);
}

static void read_resp_to(struct seed *s, u32 qpn, u8 op, u32 psn,
			 u32 paylen)
{
	struct dray_pkt p = { .opcode = op, .psn = psn, .qpn = qpn,
			      .syndrome = DRAY_AETH_CREDITS_INVALID };

	frame(s, 0, &p, paylen, (u8)psn);
}

static void read_resp(struct seed *s, u8 op, u32 psn, u32 paylen)
{
	read_resp_to(s, 0, op, psn, paylen);
}

/* An atomic ACK to QP @qpn with original value @orig. */
static void atomic_ack_to(struct seed *s, u32 qpn, u32 psn, u64 orig)
{
	struct dray_pkt p = { .opcode = DRAY_OP_ATOMIC_ACK, .psn = psn,
			      .syndrome = DRAY_AETH_CREDITS_INVALID,
			      .orig = orig, .qpn = qpn };

	frame(s, 0, &p, 0, 0);
}

/*
 * fuzz_comp with send WQEs on both QPs of the SRQ (CFG_QP2 | CFG_SQ2):
 * the first list is the first QP's, the second the second's (its PSNs
 * from SQ_PSN2); ACKs and responses for each interleaved, each QP's
 * local SGEs in its own place (fuzz_xport.c's sq_post()).
 */
static void comp2_seeds(void)
{
	const u8 two = CFG_QP2 | CFG_SQ2;
	u32 P = SQ_PSN, Q = SQ_PSN2;
	struct seed s;

	/*
	 * Index 0 a WRITE on QP 1, a READ on QP 2; index 1 a READ of 3
	 * packets on QP 1, a SEND on QP 2: their ACKs and READ responses
	 * interleaved; first an ACK to QP 2 with the PSN of QP 1's WRITE
	 * (not one of QP 2's: dropped, the WRITE stays outstanding).
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 100, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2500, 3);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 40, 1);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 30, 1);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_ONLY, Q, 40);
	ack_to(&s, QPN, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_FIRST, dray_psn_add(P, 1),
		     MTU);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(Q, 1), 2);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_MIDDLE, dray_psn_add(P, 2),
		     MTU);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 3),
		     452);
	save("fuzz_comp", "comp2-ack-read", &s);

	/*
	 * Atomics on both at the same index, their ACKs crossed: QP 2's
	 * FetchAdd answered first, then QP 1's CmpSwap; then a READ each.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_ATOMIC_CMP_SWP, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 16, 1);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_ATOMIC_FETCH_ADD, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 24, 1);
	atomic_ack_to(&s, QPN2, Q, 0x2222222222222222ULL);
	atomic_ack_to(&s, QPN, P, 0x1111111111111111ULL);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_ONLY, dray_psn_add(P, 1), 16);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_ONLY, dray_psn_add(Q, 1), 24);
	save("fuzz_comp", "comp2-atomic", &s);

	/*
	 * A remote access NAK to QP 2's WRITE (its WQEs fail and flush, QP
	 * 2 to ERR) while QP 1's SENDs are ACK'd; an ACK to QP 2 after.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 100, 1);
	wqe(&s, DRAY_WQE_SEND, 0, 10, 1);
	put8(&s, 3);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, 0, 8, 1);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 8, 1);
	ack_to(&s, QPN, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	ack_to(&s, QPN2, 0, DRAY_AETH_NAK | DRAY_NAK_REM_ACCESS, Q, 0);
	ack_to(&s, QPN, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 1), 2);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(Q, 2), 3);
	save("fuzz_comp", "comp2-nak-access", &s);

	/*
	 * A PSN sequence NAK to QP 1 (it goes back and resends) and an RNR
	 * NAK to QP 2 (its timer) while the other's ACKs come; then both
	 * complete.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE_IMM, 0, 2048, 1);
	wqe(&s, DRAY_WQE_SEND_IMM, DRAY_WQE_F_SIGNALED, 10, 1);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 10, 1);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 50, 1);
	ack_to(&s, QPN, 0, DRAY_AETH_NAK | DRAY_NAK_PSN_SEQ,
	       dray_psn_add(P, 1), 0);
	ack_to(&s, QPN2, F_TIMER, DRAY_AETH_RNR_NAK | 1, Q, 0);
	ack_to(&s, QPN, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 2);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(Q, 1), 2);
	save("fuzz_comp", "comp2-nak-rnr", &s);

	/*
	 * QP 1 moved to ERR with a READ out (flushed) while QP 2's READ
	 * and WRITE complete; QP 1's late response is dropped.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 1);
	wqe(&s, DRAY_WQE_SEND, 0, 10, 1);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 100, 1);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_FIRST, P, MTU);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_FIRST, Q, MTU);
	cmd(&s, CMD_ERR);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_LAST, dray_psn_add(Q, 1),
		     MTU);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 1),
		     MTU);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(Q, 2), 3);
	save("fuzz_comp", "comp2-err-qp1", &s);

	/* The same the other way: QP 2 to ERR while QP 1 completes. */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 100, 1);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 1);
	wqe(&s, DRAY_WQE_SEND, 0, 10, 1);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_FIRST, Q, MTU);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_FIRST, P, MTU);
	cmd_qp2(&s, CMD_ERR);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 1),
		     MTU);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_LAST, dray_psn_add(Q, 1),
		     MTU);
	ack_to(&s, QPN, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 3);
	save("fuzz_comp", "comp2-err-qp2", &s);

	/*
	 * QP 2 in the other PD (CFG_QP2_PD): its READ and atomic land in
	 * MR_OTHER, its SEND comes from there; QP 1's READ in MR_RECV.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, two | CFG_QP2_PD);
	put8(&s, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 300, 2);
	put8(&s, 3);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 300, 2);
	wqe(&s, DRAY_WQE_ATOMIC_FETCH_ADD, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 64, 1);
	read_resp_to(&s, QPN2, DRAY_OP_READ_RESP_ONLY, Q, 300);
	read_resp_to(&s, QPN, DRAY_OP_READ_RESP_ONLY, P, 300);
	atomic_ack_to(&s, QPN2, dray_psn_add(Q, 1), 0x3333333333333333ULL);
	ack_to(&s, QPN2, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(Q, 2), 3);
	save("fuzz_comp", "comp2-pd", &s);
}

static void comp_seeds(void)
{
	struct seed s;
	struct dray_pkt p;
	u32 P = SQ_PSN;

	comp2_seeds();

	/*
	 * A second QP on the SRQ (CFG_QP2): SENDs of the first QP ACK'd
	 * while both receive SENDs through the SRQ, completions of both
	 * queues of both QPs on the one CQ.
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_QP2);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 100, 1);
	wqe(&s, DRAY_WQE_SEND_IMM, DRAY_WQE_F_SIGNALED, 10, 1);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY, RQ_PSN2, 30, true);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 40, true);
	req_to(&s, QPN2, 0, DRAY_OP_SEND_ONLY_IMM, RQ_PSN2 + 1, 50, true);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 1), 2);
	save("fuzz_comp", "srq2-send-ack", &s);

	/*
	 * The UD QP on the SRQ (CFG_UD): UD SENDs to it between the ACKs of
	 * the first QP's SENDs, the UD QP's own pass driven with its timer
	 * (it has none, and sends nothing); the first QP's SEND to it is
	 * dropped (an RC opcode).
	 */
	s.len = 0;
	cfg_qps(&s, CFG_SRQ, 4, 8, 14, CFG_UD);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 100, 1);
	wqe(&s, DRAY_WQE_SEND_IMM, DRAY_WQE_F_SIGNALED, 10, 1);
	ud_send(&s, F_TIMER, false, 1, UD_QKEY, 80, false);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	ud_send(&s, 0, true, 2, UD_QKEY, 16, true);
	req_to(&s, UD_QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 10, true);
	req_to(&s, QPN, 0, DRAY_OP_SEND_ONLY, RQ_PSN, 40, true);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 1), 2);
	save("fuzz_comp", "srqud-send-ack", &s);

	s.len = 0;	/* WRITE of 3 packets and a SEND, one ACK each */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 3000, 2);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 100, 1);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 1);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 3), 2);
	save("fuzz_comp", "write-send-ack", &s);

	s.len = 0;	/* READ of 3 response packets */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2500, 3);
	read_resp(&s, DRAY_OP_READ_RESP_FIRST, P, MTU);
	read_resp(&s, DRAY_OP_READ_RESP_MIDDLE, dray_psn_add(P, 1), MTU);
	read_resp(&s, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 2), 452);
	save("fuzz_comp", "read-3pkt", &s);

	s.len = 0;	/* CmpSwap, FetchAdd, a small READ */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 3);
	wqe(&s, DRAY_WQE_ATOMIC_CMP_SWP, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_ATOMIC_FETCH_ADD, 0, 8, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 40, 1);
	p = (struct dray_pkt){ .opcode = DRAY_OP_ATOMIC_ACK, .psn = P,
			       .syndrome = DRAY_AETH_CREDITS_INVALID,
			       .orig = 0x1122334455667788ULL };
	frame(&s, 0, &p, 0, 0);
	p.psn = dray_psn_add(P, 1);
	frame(&s, 0, &p, 0, 0);
	read_resp(&s, DRAY_OP_READ_RESP_ONLY, dray_psn_add(P, 2), 40);
	save("fuzz_comp", "atomic-read", &s);

	s.len = 0;	/* PSN sequence NAK: go back, then the ACK */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE_IMM, 0, 2048, 1);
	wqe(&s, DRAY_WQE_SEND_IMM, DRAY_WQE_F_SIGNALED, 10, 1);
	ack(&s, 0, DRAY_AETH_NAK | DRAY_NAK_PSN_SEQ, dray_psn_add(P, 1), 0);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 2);
	save("fuzz_comp", "nak-seq", &s);

	s.len = 0;	/* RNR NAK, the RNR timer, then the ACK */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 1);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 10, 1);
	ack(&s, F_TIMER, DRAY_AETH_RNR_NAK | 1, P, 0);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	save("fuzz_comp", "rnr", &s);

	s.len = 0;	/* no answer: the local ACK timeout, resent, ACK */
	cfg(&s, 0, 4, 8, 10);
	put8(&s, 1);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 100, 1);
	ack(&s, F_TIMER, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 5), 0);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	save("fuzz_comp", "timeout", &s);

	s.len = 0;	/* remote access NAK: the WQE fails, the QP errs */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 8, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, 0, 8, 1);
	ack(&s, 0, DRAY_AETH_NAK | DRAY_NAK_REM_ACCESS, P, 0);
	save("fuzz_comp", "nak-access", &s);

	s.len = 0;	/* a READ response lost: implied NAK by a later one */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 8, 1);
	read_resp(&s, DRAY_OP_READ_RESP_ONLY, dray_psn_add(P, 2), 8);
	read_resp(&s, DRAY_OP_READ_RESP_FIRST, P, MTU);
	read_resp(&s, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 1), MTU);
	read_resp(&s, DRAY_OP_READ_RESP_ONLY, dray_psn_add(P, 2), 8);
	save("fuzz_comp", "read-lost", &s);

	s.len = 0;	/* SQD while a WRITE is out: drained by its ACK */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 2000, 1);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_SIGNALED, 10, 1);
	cmd(&s, CMD_SQD);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 1), 1);
	cmd(&s, CMD_RETRY);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 2);
	cmd(&s, CMD_RTS);
	save("fuzz_comp", "sqd", &s);

	s.len = 0;	/* a WQE rewritten while outstanding, then a NAK */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 2);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 1);
	wqe(&s, DRAY_WQE_RDMA_WRITE, DRAY_WQE_F_SIGNALED, 100, 1);
	cmd(&s, CMD_REWRITE_SQ);
	read_resp(&s, DRAY_OP_READ_RESP_FIRST, P, MTU);
	ack(&s, 0, DRAY_AETH_NAK | DRAY_NAK_PSN_SEQ, dray_psn_add(P, 1), 0);
	save("fuzz_comp", "rewrite-wqe", &s);

	s.len = 0;	/* software moves the QP to ERR with a READ out */
	cfg(&s, 0, 4, 8, 14);
	put8(&s, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_SIGNALED, 2048, 1);
	read_resp(&s, DRAY_OP_READ_RESP_FIRST, P, MTU);
	cmd(&s, CMD_ERR);
	read_resp(&s, DRAY_OP_READ_RESP_LAST, dray_psn_add(P, 1), MTU);
	save("fuzz_comp", "to-err", &s);

	s.len = 0;	/* inline SEND, fenced READ, SEND with invalidate */
	cfg(&s, 0x02, 4, 8, 14);
	put8(&s, 3);
	wqe(&s, DRAY_WQE_SEND, DRAY_WQE_F_INLINE, 50, 1);
	wqe(&s, DRAY_WQE_RDMA_READ, DRAY_WQE_F_FENCE, 16, 1);
	wqe(&s, DRAY_WQE_SEND_INV, 0, 20, 1);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, P, 1);
	read_resp(&s, DRAY_OP_READ_RESP_ONLY, dray_psn_add(P, 1), 16);
	ack(&s, 0, DRAY_AETH_CREDITS_INVALID, dray_psn_add(P, 2), 3);
	save("fuzz_comp", "inline-fence-inv", &s);
}

/* --- fuzz_wire ------------------------------------------------------------ */

static void wire_seed(u8 op, bool ipv6)
{
	struct dray_wire_addr a = {
		.ipv6 = ipv6, .hop_limit = 64, .sport = 0xc001,
		.tclass = 2, .flow_label = ipv6 ? 0x12345 : 0,
	};
	u8 f[DRAY_ETH_HLEN + DRAY_IPV6_HLEN + DRAY_UDP_HLEN + DRAY_HDR_MAX +
	     64 + 8];
	struct dray_pkt p = {
		.opcode = op, .psn = 0x123456, .qpn = 0x11, .rkey = 0x111,
		.va = 0x10000, .dma_len = 61, .syndrome = 0x1f, .msn = 5,
		.qkey = 0x80010000, .src_qpn = 1, .orig = 42,
		.imm = cpu_to_be32(3), .pkey = DRAY_PKEY_DEFAULT,
	};
	u32 pay = dray_opcodes[op].flags & DRAY_OPF_PAYLOAD ? 61 : 0;
	u32 hlen, l2l4, udp_len, crc, i;
	struct seed s = { .len = 0 };
	char name[64];
	u8 *ip;

	p.pad = dray_wire_pad(pay);
	hlen = dray_wire_hdr_len(dray_opcodes[op].flags);
	udp_len = hlen + pay + p.pad + DRAY_ICRC_BYTES;
	memset(a.sgid + 10, 0xff, 2);
	memset(a.dgid + 10, 0xff, 2);
	a.sgid[12] = 10;
	a.sgid[15] = 1;
	a.dgid[12] = 10;
	a.dgid[15] = 2;
	if (ipv6) {
		a.sgid[0] = 0xfe;
		a.sgid[1] = 0x80;
		a.dgid[0] = 0xfe;
		a.dgid[1] = 0x80;
	}
	l2l4 = dray_wire_build_l3(&a, udp_len, f);
	dray_wire_build(&p, f + l2l4);
	for (i = 0; i < pay + p.pad; i++)
		f[l2l4 + hlen + i] = i < pay ? (u8)(i * 7) : 0;
	ip = f + DRAY_ETH_HLEN;
	crc = dray_icrc_begin(ip, ipv6, f + l2l4 - DRAY_UDP_HLEN,
			      DRAY_UDP_HLEN + hlen);
	crc = dray_icrc_update(crc, f + l2l4 + hlen, pay + p.pad);
	crc = dray_icrc_final(crc);
	for (i = 0; i < 4; i++)
		f[l2l4 + hlen + pay + p.pad + i] = (u8)(crc >> (8 * i));
	put8(&s, (u8)(ipv6 | op << 1));		/* control byte */
	put(&s, ip, l2l4 - DRAY_ETH_HLEN + udp_len);
	snprintf(name, sizeof(name), "%s-%02x", ipv6 ? "v6" : "v4", op);
	save("fuzz_wire", name, &s);
}

int main(int argc, char **argv)
{
	u32 op;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds DIR\n");
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0755);
	for (op = 0; op < 256; op++)
		if (dray_opcodes[op].flags)
			wire_seed(op, false);
	wire_seed(DRAY_OP_WRITE_FIRST, true);
	wire_seed(DRAY_OP_ACK, true);
	wire_seed(DRAY_OP_UD_SEND_ONLY_IMM, true);
	wire_seed(DRAY_OP_CMP_SWAP, true);
	resp_seeds();
	comp_seeds();
	return 0;
}
