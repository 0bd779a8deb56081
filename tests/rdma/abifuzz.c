// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uverbs ABI, fuzzed (issue 13, part 3): random sequences of create,
 * modify, query and destroy commands through the write() ABI of a dray
 * context, with random attributes, handles that are live, stale or made
 * up, random driver-specific request bytes (plausible structures with
 * random fields, or random bytes of a random length), short and long
 * command buffers, random mmap offsets and the KICK method. The kernel
 * must answer each with a result or an errno, never anything else; after
 * every round the context is closed with whatever it holds, and the
 * kernel frees it all. The caller checks that the kernel is not tainted,
 * that kmemleak found nothing (debug kernel) and that the device's object
 * counts are back where they were.
 *
 *   abifuzz [--rounds N] [--ops N] [--seed S]
 *
 * Device $DRAY_TEST_DEV_A (dray0). Memory the device may write (queue
 * buffers, MRs) always lies in the fuzzer's own arena, and responses go
 * to its response buffer or to an unmapped page: the fuzzer never hands
 * the kernel a pointer into its own state. Exit 0 pass, 1 fail, 4 skip.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/dray-abi.h>

#include "common.h"

#define PAGE		4096UL
#define ARENA_LEN	(4UL << 20)
#define POOL		32		/* handles kept per object type */
#define MAX_ERRNO	134

enum { O_PD, O_CQ, O_QP, O_MR, O_SRQ, O_AH, O_MW, O_XRCD, O_NUM };

static struct rng rng;
static int ufd = -1;
static uint8_t *arena;		/* memory the device may write */
static uint8_t *hole;		/* a PROT_NONE page */
static uint8_t resp[1024];	/* the response buffer */
static uint32_t handles[O_NUM][POOL];
static unsigned int nhandles[O_NUM];
static uint64_t ops, oks, errnos[MAX_ERRNO + 1];

/* A handle of type t: mostly a live one, else a stale or made-up one. */
static uint32_t pick(int t)
{
	if (nhandles[t] && !rng_one_in(&rng, 8))
		return handles[t][rng_below(&rng, nhandles[t])];
	return rng_one_in(&rng, 2) ? (uint32_t)rng_below(&rng, 64) :
				     (uint32_t)rng_next(&rng);
}

static void keep(int t, uint32_t h)
{
	if (nhandles[t] < POOL)
		handles[t][nhandles[t]++] = h;
	else
		handles[t][rng_below(&rng, POOL)] = h;
}

static void forget(int t, uint32_t h)
{
	unsigned int i;

	for (i = 0; i < nhandles[t]; i++)
		if (handles[t][i] == h) {
			handles[t][i] = handles[t][--nhandles[t]];
			return;
		}
}

/* An address the device may be told to use: in the arena, or not mapped. */
static uint64_t some_addr(size_t len)
{
	if (rng_one_in(&rng, 6))
		return rng_one_in(&rng, 2) ? (uintptr_t)hole :
					     (rng_next(&rng) | 1ULL << 63);
	if (len >= ARENA_LEN)
		return (uintptr_t)arena;
	return (uintptr_t)arena +
	       (rng_below(&rng, ARENA_LEN - len) & ~(rng_one_in(&rng, 4) ?
						     0UL : PAGE - 1));
}

static uint64_t some_resp(void)
{
	return rng_one_in(&rng, 16) ? (uintptr_t)hole : (uintptr_t)resp;
}

static uint32_t some_u32(void)
{
	switch (rng_below(&rng, 4)) {
	case 0:
		return (uint32_t)rng_below(&rng, 8);
	case 1:
		return (uint32_t)rng_below(&rng, 70000);
	case 2:
		return 1U << rng_below(&rng, 32);
	default:
		return (uint32_t)rng_next(&rng);
	}
}

/*
 * Send one command: header, core request, driver bytes. The driver part
 * is the plausible structure @drv, or random bytes of a random length;
 * now and then the command is cut short or has words to spare.
 */
static bool send_cmd(uint32_t command, const void *core, size_t core_len,
		     const void *drv, size_t drv_len, size_t resp_len)
{
	uint8_t buf[512];
	struct ib_uverbs_cmd_hdr hdr = { .command = command };
	size_t len;
	ssize_t n;

	if (drv_len && rng_one_in(&rng, 5)) {
		drv_len = rng_below(&rng, 17) * 4;
		for (size_t i = 0; i < drv_len; i++)
			buf[sizeof(hdr) + core_len + i] = (uint8_t)rng_next(&rng);
	} else if (drv_len) {
		memcpy(buf + sizeof(hdr) + core_len, drv, drv_len);
	}
	memcpy(buf + sizeof(hdr), core, core_len);
	len = sizeof(hdr) + core_len + drv_len;
	if (rng_one_in(&rng, 20))
		len = rng_below(&rng, len / 4 + 1) * 4;	/* short */
	else if (rng_one_in(&rng, 20))
		len += rng_below(&rng, 8) * 4;		/* long, zeroes */
	if (len < sizeof(hdr))
		len = sizeof(hdr);
	memset(buf + sizeof(hdr) + core_len + drv_len, 0,
	       sizeof(buf) - sizeof(hdr) - core_len - drv_len);
	hdr.in_words = (uint16_t)(len / 4);
	hdr.out_words = (uint16_t)(resp_len / 4);
	if (rng_one_in(&rng, 20))
		hdr.out_words = (uint16_t)rng_below(&rng, 64);
	memcpy(buf, &hdr, sizeof(hdr));
	memset(resp, 0, sizeof(resp));
	ops++;
	n = write(ufd, buf, len);
	if (n >= 0) {
		oks++;
		return true;
	}
	errnos[errno <= MAX_ERRNO ? errno : 0]++;
	return false;
}

/*
 * After a create command: if it succeeded with its response in the
 * response buffer, keep the handle the response starts with (every core
 * create response does), 0 included.
 */
static void keep_created(int t, bool ok, uint64_t response)
{
	uint32_t h;

	if (!ok || response != (uintptr_t)resp)
		return;
	memcpy(&h, resp, sizeof(h));
	keep(t, h);
}

static void op_pd(void)
{
	bool ok;
	struct ib_uverbs_alloc_pd c = { .response = some_resp() };
	struct ib_uverbs_dealloc_pd d = { .pd_handle = pick(O_PD) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_DEALLOC_PD, &d, sizeof(d), NULL, 0, 0);
		forget(O_PD, d.pd_handle);
		return;
	}
	ok = send_cmd(IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_alloc_pd_resp) +
		      sizeof(struct dray_alloc_pd_resp));
	keep_created(O_PD, ok, c.response);
}

static void op_mr(void)
{
	bool ok;
	size_t len = rng_one_in(&rng, 8) ? some_u32() :
					   rng_range(&rng, 1, 64 * 1024);
	uint64_t start = some_addr(len);
	struct ib_uverbs_reg_mr c = {
		.response = some_resp(),
		.start = start,
		.length = len,
		.hca_va = rng_one_in(&rng, 2) ? start : rng_next(&rng),
		.pd_handle = pick(O_PD),
		.access_flags = (uint32_t)rng_below(&rng, 1U << 12),
	};
	struct ib_uverbs_dereg_mr d = { .mr_handle = pick(O_MR) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_DEREG_MR, &d, sizeof(d), NULL, 0, 0);
		forget(O_MR, d.mr_handle);
		return;
	}
	ok = send_cmd(IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_reg_mr_resp));
	keep_created(O_MR, ok, c.response);
}

static uint8_t some_log(void)
{
	return (uint8_t)(rng_one_in(&rng, 8) ? rng_below(&rng, 256) :
					       rng_below(&rng, 12));
}

static void op_cq(void)
{
	bool ok;
	struct dray_create_cq_cmd drv = {
		.log_depth = some_log(),
		.buf_size = (uint32_t)rng_range(&rng, 0, 256 * 1024),
	};
	struct ib_uverbs_create_cq c = {
		.response = some_resp(),
		.cqe = some_u32(),
		.comp_vector = (uint32_t)rng_below(&rng, 4),
		.comp_channel = -1,
	};
	struct ib_uverbs_destroy_cq d = { .response = some_resp(),
					  .cq_handle = pick(O_CQ) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_DESTROY_CQ, &d, sizeof(d), NULL, 0,
			 sizeof(struct ib_uverbs_destroy_cq_resp));
		forget(O_CQ, d.cq_handle);
		return;
	}
	drv.buf_addr = some_addr(drv.buf_size);
	if (rng_one_in(&rng, 3)) {
		/* A new ring, of any size, anywhere, for a live or made-up CQ. */
		struct dray_resize_cq_cmd rdrv = {
			.buf_addr = drv.buf_addr,
			.buf_size = drv.buf_size,
			.log_depth = drv.log_depth,
		};
		struct ib_uverbs_resize_cq r = {
			.response = some_resp(),
			.cq_handle = pick(O_CQ),
			.cqe = some_u32(),
		};

		if (rng_one_in(&rng, 16))
			rdrv.reserved[rng_below(&rng, 3)] = 1;
		send_cmd(IB_USER_VERBS_CMD_RESIZE_CQ, &r, sizeof(r), &rdrv,
			 sizeof(rdrv), sizeof(struct ib_uverbs_resize_cq_resp) +
			 sizeof(struct dray_resize_cq_resp));
		return;
	}
	if (rng_one_in(&rng, 16))
		drv.reserved[rng_below(&rng, 3)] = 1;
	ok = send_cmd(IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c), &drv, sizeof(drv),
		      sizeof(struct ib_uverbs_create_cq_resp) +
		      sizeof(struct dray_create_cq_resp));
	keep_created(O_CQ, ok, c.response);
}

/*
 * XRC domains: a private one (fd -1, O_CREAT), or a random fd and flags;
 * closed while their SRQs and target QPs may live.
 */
static void op_xrcd(void)
{
	bool ok;
	struct ib_uverbs_open_xrcd c = {
		.response = some_resp(),
		.fd = rng_one_in(&rng, 4) ? (uint32_t)rng_below(&rng, 8) :
					    (uint32_t)-1,
		.oflags = rng_one_in(&rng, 4) ? some_u32() : O_CREAT,
	};
	struct ib_uverbs_close_xrcd d = { .xrcd_handle = pick(O_XRCD) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_CLOSE_XRCD, &d, sizeof(d), NULL, 0, 0);
		forget(O_XRCD, d.xrcd_handle);
		return;
	}
	ok = send_cmd(IB_USER_VERBS_CMD_OPEN_XRCD, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_open_xrcd_resp));
	keep_created(O_XRCD, ok, c.response);
}

/* An XRC SRQ (CREATE_XSRQ) of a domain, with its CQ and PD. */
static void op_xsrq(const struct dray_create_srq_cmd *drv)
{
	bool ok;
	struct ib_uverbs_create_xsrq c = {
		.response = some_resp(),
		.srq_type = (uint8_t)(rng_one_in(&rng, 8) ? rng_below(&rng, 4) :
					      IBV_SRQT_XRC),
		.pd_handle = pick(O_PD),
		.max_wr = some_u32(),
		.max_sge = (uint32_t)rng_below(&rng, 40),
		.srq_limit = some_u32(),
		.xrcd_handle = pick(O_XRCD),
		.cq_handle = pick(O_CQ),
	};

	ok = send_cmd(IB_USER_VERBS_CMD_CREATE_XSRQ, &c, sizeof(c), drv,
		      sizeof(*drv), sizeof(struct ib_uverbs_create_srq_resp) +
		      sizeof(struct dray_create_srq_resp));
	keep_created(O_SRQ, ok, c.response);
}

static void op_srq(void)
{
	bool ok;
	struct dray_create_srq_cmd drv = {
		.log_depth = some_log(),
		.log_stride = some_log(),
		.buf_size = (uint32_t)rng_range(&rng, 0, 256 * 1024),
	};
	struct ib_uverbs_create_srq c = {
		.response = some_resp(),
		.pd_handle = pick(O_PD),
		.max_wr = some_u32(),
		.max_sge = (uint32_t)rng_below(&rng, 40),
		.srq_limit = some_u32(),
	};
	struct ib_uverbs_modify_srq m = {
		.srq_handle = pick(O_SRQ),
		.attr_mask = (uint32_t)rng_below(&rng, 8),
		.max_wr = some_u32(),
		.srq_limit = some_u32(),
	};
	struct ib_uverbs_destroy_srq d = { .response = some_resp(),
					   .srq_handle = pick(O_SRQ) };

	switch (rng_below(&rng, 4)) {
	case 0:
		send_cmd(IB_USER_VERBS_CMD_DESTROY_SRQ, &d, sizeof(d), NULL, 0,
			 sizeof(struct ib_uverbs_destroy_srq_resp));
		forget(O_SRQ, d.srq_handle);
		return;
	case 1:
		send_cmd(IB_USER_VERBS_CMD_MODIFY_SRQ, &m, sizeof(m), NULL, 0, 0);
		return;
	default:
		break;
	}
	drv.buf_addr = some_addr(drv.buf_size);
	if (rng_one_in(&rng, 3)) {
		op_xsrq(&drv);
		return;
	}
	ok = send_cmd(IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c), &drv, sizeof(drv),
		      sizeof(struct ib_uverbs_create_srq_resp) +
		      sizeof(struct dray_create_srq_resp));
	keep_created(O_SRQ, ok, c.response);
}

/*
 * RC twice, UD, UC, GSI (1), raw packet, XRC initiator and target (whose
 * pd_handle is a domain's), none, nonsense
 */
static const uint8_t qp_types[] = {
	IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UD, IBV_QPT_UC, 1,
	IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, 0, 77,
};

static void op_qp_create(void)
{
	bool ok;
	struct dray_create_qp_cmd drv = {
		.sq_log_depth = some_log(), .sq_log_stride = some_log(),
		.rq_log_depth = some_log(), .rq_log_stride = some_log(),
		.sq_buf_size = (uint32_t)rng_range(&rng, 0, 512 * 1024),
		.rq_buf_size = (uint32_t)rng_range(&rng, 0, 512 * 1024),
	};
	bool srq = rng_one_in(&rng, 4);
	struct ib_uverbs_create_qp c = {
		.response = some_resp(),
		.pd_handle = pick(O_PD),
		.send_cq_handle = pick(O_CQ),
		.recv_cq_handle = pick(O_CQ),
		.srq_handle = srq ? pick(O_SRQ) : 0,
		.max_send_wr = some_u32(),
		.max_recv_wr = some_u32(),
		.max_send_sge = (uint32_t)rng_below(&rng, 40),
		.max_recv_sge = (uint32_t)rng_below(&rng, 40),
		.max_inline_data = some_u32(),
		.sq_sig_all = (uint8_t)rng_below(&rng, 2),
		.qp_type = qp_types[rng_below(&rng, sizeof(qp_types))],
		.is_srq = srq,
	};

	drv.sq_buf_addr = some_addr(drv.sq_buf_size);
	drv.rq_buf_addr = some_addr(drv.rq_buf_size);
	if (rng_one_in(&rng, 16))
		drv.reserved = 1;
	if (c.qp_type == IBV_QPT_XRC_RECV && !rng_one_in(&rng, 8))
		c.pd_handle = pick(O_XRCD);
	ok = send_cmd(IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c), &drv, sizeof(drv),
		      sizeof(struct ib_uverbs_create_qp_resp) +
		      sizeof(struct dray_create_qp_resp));
	keep_created(O_QP, ok, c.response);
}

/* Attach or detach a QP to a multicast GID, or to a GID that is none. */
static void op_mcast(void)
{
	struct ib_uverbs_attach_mcast m = {
		.qp_handle = pick(O_QP),
		.mlid = (uint16_t)rng_below(&rng, 3),
	};
	unsigned int i;

	for (i = 0; i < sizeof(m.gid); i++)
		m.gid[i] = (uint8_t)rng_next(&rng);
	switch (rng_below(&rng, 3)) {
	case 0:		/* IPv4-mapped 239.1.1.x */
		memset(m.gid, 0, 10);
		m.gid[10] = m.gid[11] = 0xff;
		m.gid[12] = 239;
		m.gid[13] = m.gid[14] = 1;
		m.gid[15] = (uint8_t)rng_below(&rng, 80);
		break;
	case 1:		/* IPv6 ff0e::x */
		memset(m.gid, 0, sizeof(m.gid));
		m.gid[0] = 0xff;
		m.gid[1] = 0x0e;
		m.gid[15] = (uint8_t)rng_below(&rng, 80);
		break;
	default:	/* random bytes */
		break;
	}
	send_cmd(rng_one_in(&rng, 2) ? IB_USER_VERBS_CMD_ATTACH_MCAST :
				       IB_USER_VERBS_CMD_DETACH_MCAST,
		 &m, sizeof(m), NULL, 0, 0);
}

static void op_qp(void)
{
	struct ib_uverbs_modify_qp m = {
		.qp_handle = pick(O_QP),
		.attr_mask = (uint32_t)rng_next(&rng) &
			     (rng_one_in(&rng, 2) ? 0x1fffff : 0xffffffff),
		.qkey = (uint32_t)rng_next(&rng) & 0x7fffffff,
		.rq_psn = (uint32_t)rng_next(&rng),
		.sq_psn = (uint32_t)rng_next(&rng),
		.dest_qp_num = (uint32_t)rng_below(&rng, 2048),
		.qp_access_flags = (uint32_t)rng_below(&rng, 64),
		.pkey_index = (uint16_t)rng_below(&rng, 3),
		.qp_state = (uint8_t)rng_below(&rng, 8),
		.cur_qp_state = (uint8_t)rng_below(&rng, 8),
		.path_mtu = (uint8_t)rng_below(&rng, 7),
		.max_rd_atomic = (uint8_t)rng_next(&rng),
		.max_dest_rd_atomic = (uint8_t)rng_next(&rng),
		.min_rnr_timer = (uint8_t)rng_below(&rng, 40),
		.port_num = (uint8_t)rng_below(&rng, 3),
		.timeout = (uint8_t)rng_below(&rng, 40),
		.retry_cnt = (uint8_t)rng_below(&rng, 9),
		.rnr_retry = (uint8_t)rng_below(&rng, 9),
		.dest = {
			.sgid_index = (uint8_t)rng_below(&rng, 8),
			.hop_limit = (uint8_t)rng_next(&rng),
			.is_global = (uint8_t)!rng_one_in(&rng, 8),
			.port_num = (uint8_t)rng_below(&rng, 3),
		},
	};
	struct ib_uverbs_query_qp q = { .response = some_resp(),
					.qp_handle = pick(O_QP),
					.attr_mask = (uint32_t)rng_next(&rng) };
	struct ib_uverbs_destroy_qp d = { .response = some_resp(),
					  .qp_handle = pick(O_QP) };
	unsigned int i;

	for (i = 0; i < sizeof(m.dest.dgid); i++)
		m.dest.dgid[i] = (uint8_t)(rng_one_in(&rng, 2) ? 0 :
					   rng_next(&rng));
	if (rng_one_in(&rng, 2)) {	/* an IPv4-mapped GID: 10.0.0.x */
		memset(m.dest.dgid, 0, 10);
		m.dest.dgid[10] = m.dest.dgid[11] = 0xff;
		m.dest.dgid[12] = 10;
		m.dest.dgid[15] = (uint8_t)rng_range(&rng, 1, 2);
	}
	switch (rng_below(&rng, 7)) {
	case 0:
		op_qp_create();
		return;
	case 6:
		op_mcast();
		return;
	case 1:
		send_cmd(IB_USER_VERBS_CMD_QUERY_QP, &q, sizeof(q), NULL, 0,
			 sizeof(struct ib_uverbs_query_qp_resp));
		return;
	case 2:
		send_cmd(IB_USER_VERBS_CMD_DESTROY_QP, &d, sizeof(d), NULL, 0,
			 sizeof(struct ib_uverbs_destroy_qp_resp));
		forget(O_QP, d.qp_handle);
		return;
	default:
		send_cmd(IB_USER_VERBS_CMD_MODIFY_QP, &m, sizeof(m), NULL, 0, 0);
		return;
	}
}

static void op_ah(void)
{
	bool ok;
	struct ib_uverbs_create_ah c = {
		.response = some_resp(),
		.pd_handle = pick(O_PD),
		.attr = {
			.dlid = (uint16_t)rng_next(&rng),
			.sl = (uint8_t)rng_below(&rng, 16),
			.is_global = (uint8_t)!rng_one_in(&rng, 8),
			.port_num = (uint8_t)rng_below(&rng, 3),
			.grh = {
				.sgid_index = (uint8_t)rng_below(&rng, 8),
				.hop_limit = (uint8_t)rng_next(&rng),
				.flow_label = (uint32_t)rng_next(&rng),
				.traffic_class = (uint8_t)rng_next(&rng),
			},
		},
	};
	struct ib_uverbs_destroy_ah d = { .ah_handle = pick(O_AH) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_DESTROY_AH, &d, sizeof(d), NULL, 0, 0);
		forget(O_AH, d.ah_handle);
		return;
	}
	c.attr.grh.dgid[10] = c.attr.grh.dgid[11] = 0xff;
	c.attr.grh.dgid[12] = 10;
	c.attr.grh.dgid[15] = (uint8_t)rng_below(&rng, 4);
	if (rng_one_in(&rng, 4))
		c.attr.grh.dgid[rng_below(&rng, 16)] = (uint8_t)rng_next(&rng);
	ok = send_cmd(IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_create_ah_resp) +
		      sizeof(struct dray_create_ah_resp));
	keep_created(O_AH, ok, c.response);
}

static void op_mw(void)
{
	bool ok;
	struct ib_uverbs_alloc_mw c = {
		.response = some_resp(),
		.pd_handle = pick(O_PD),
		.mw_type = (uint8_t)rng_below(&rng, 4),
	};
	struct ib_uverbs_dealloc_mw d = { .mw_handle = pick(O_MW) };

	if (rng_one_in(&rng, 3)) {
		send_cmd(IB_USER_VERBS_CMD_DEALLOC_MW, &d, sizeof(d), NULL, 0, 0);
		forget(O_MW, d.mw_handle);
		return;
	}
	ok = send_cmd(IB_USER_VERBS_CMD_ALLOC_MW, &c, sizeof(c), NULL, 0,
		      sizeof(struct ib_uverbs_alloc_mw_resp));
	keep_created(O_MW, ok, c.response);
}

/* mmap of a random offset and length (never touched), and KICK */
static void op_misc(void)
{
	if (rng_one_in(&rng, 2)) {
		struct ib_uverbs_ioctl_hdr hdr = {
			.length = sizeof(hdr),
			.object_id = UVERBS_OBJECT_DEVICE,
			.method_id = DRAY_IB_METHOD_KICK,
			.driver_id = RDMA_DRIVER_UNKNOWN,
		};

		ops++;
		if (ioctl(ufd, RDMA_VERBS_IOCTL, &hdr))
			errnos[errno <= MAX_ERRNO ? errno : 0]++;
		else
			oks++;
	} else {
		size_t len = PAGE * rng_range(&rng, 1, 4);
		off_t off = (off_t)(rng_one_in(&rng, 2) ?
				    rng_below(&rng, 16) * PAGE :
				    rng_next(&rng) & 0x7ffffffffffff000ULL);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       ufd, off);

		ops++;
		if (p == MAP_FAILED) {
			errnos[errno <= MAX_ERRNO ? errno : 0]++;
		} else {
			oks++;
			munmap(p, len);
		}
	}
}

static void (*const op_fns[])(void) = {
	op_pd, op_pd, op_mr, op_mr, op_cq, op_cq, op_srq, op_qp, op_qp,
	op_qp, op_qp, op_ah, op_mw, op_xrcd, op_misc,
};

static void open_context(const char *name)
{
	struct ib_uverbs_get_context c = { .response = (uintptr_t)resp };
	char path[128];
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	if (!list)
		die("no devices: %s", strerror(errno));
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (!list[i])
		die("no device %s", name);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", list[i]->dev_name);
	ibv_free_device_list(list);
	ufd = open(path, O_RDWR | O_CLOEXEC);
	if (ufd < 0)
		die("open %s: %s", path, strerror(errno));
	{
		struct ib_uverbs_cmd_hdr hdr = {
			.command = IB_USER_VERBS_CMD_GET_CONTEXT,
			.in_words = (sizeof(hdr) + sizeof(c)) / 4,
			.out_words = (sizeof(struct ib_uverbs_get_context_resp) +
				      sizeof(struct dray_alloc_ucontext_resp)) / 4,
		};
		uint8_t buf[sizeof(hdr) + sizeof(c)];

		memcpy(buf, &hdr, sizeof(hdr));
		memcpy(buf + sizeof(hdr), &c, sizeof(c));
		if (write(ufd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			die("GET_CONTEXT: %s", strerror(errno));
	}
	memset(nhandles, 0, sizeof(nhandles));
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{}
	};
	uint64_t seed = (uint64_t)getpid() << 32 ^ (uint64_t)now_us();
	unsigned long rounds = 8, nops = 2000, r, i;
	int c, e;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			nops = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	fail_style.fail = "abifuzz: FAIL: ";
	fail_style.die = "abifuzz: FAIL: ";
	printf("abifuzz: seed %#" PRIx64 ", %lu rounds of %lu commands on %s\n",
	       seed, rounds, nops, dev_name(0));
	rng.s = seed;
	arena = mmap(NULL, ARENA_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || hole == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	for (r = 0; r < rounds; r++) {
		open_context(dev_name(0));
		for (i = 0; i < nops; i++)
			op_fns[rng_below(&rng, sizeof(op_fns) /
					       sizeof(op_fns[0]))]();
		/* everything left goes with the context */
		if (close(ufd))
			fail("close of the uverbs file: %s", strerror(errno));
	}
	printf("abifuzz: %" PRIu64 " commands, %" PRIu64 " accepted; errnos:",
	       ops, oks);
	for (e = 0; e <= MAX_ERRNO; e++)
		if (errnos[e])
			printf(" %s %" PRIu64, e ? strerrorname_np(e) : "other",
			       errnos[e]);
	printf("\n");
	return fail_count ? 1 : 0;
}
