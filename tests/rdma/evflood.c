// SPDX-License-Identifier: GPL-2.0-only
/*
 * An asynchronous event flood: N RC QP pairs between two devices, the B
 * side left in RTR, and one SEND on every pair at once. Each B QP raises
 * COMM_EST (communication established) on its first packet, N events in a
 * burst. On a device whose async EQ is smaller than N (dray with
 * async_eq_log_depth=4: 16 entries) some are lost to the full EQ; the
 * device must go on: every SEND completes, every B QP moves to RTS and
 * answers, and a new context works. Prints how many events arrived, for
 * the caller to add the losses the driver logged ("EQ 0 overran: K events
 * lost") and compare with N.
 *
 *   evflood [--qps N] [--gid-index-a G] [--gid-index-b G]
 *           [--hold CMD --release CMD]
 *
 * The hold command runs once the QPs are connected (their paths
 * resolved), the release command once every SEND is posted (and 300 ms
 * later): the caller holds A's frames back in between (a plug qdisc on
 * A's netdev), so that they reach B together and B's receive softirq
 * raises every event before the driver's event handler can run.
 *
 * Devices: $DRAY_TEST_DEV_A and $DRAY_TEST_DEV_B (dray0, dray1). Exit 0
 * pass, 1 fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define MAX_QPS		512
#define MSG		64
#define WAIT_MS		20000
#define QUIET_MS	2000	/* no more events after this long */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp *qp[MAX_QPS];
	struct rc_end end[MAX_QPS];
};

static int nqps = 128;

static void side_open(struct side *s, int which, int gid_want)
{
	union ibv_gid gid;
	struct ibv_port_attr port;
	int g, i;

	s->ctx = open_device(dev_name(which));
	if (!s->ctx)
		die("open %s: %s", dev_name(which), strerror(errno));
	if (ibv_query_port(s->ctx, RC_PORT, &port))
		die("query_port");
	g = pick_gid(s->ctx, gid_want, &gid);
	if (g < 0)
		die("%s: no RoCEv2 GID", dev_name(which));
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 2 * nqps + 16, NULL, NULL, 0);
	s->buf = page_buf((size_t)nqps * MSG);
	if (!s->pd || !s->cq || !s->buf)
		die("%s: pd, cq or buffer: %s", dev_name(which), strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, (size_t)nqps * MSG,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		die("reg_mr: %s", strerror(errno));
	for (i = 0; i < nqps; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = s->cq,
			.recv_cq = s->cq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 2, .max_recv_wr = 2,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		s->qp[i] = ibv_create_qp(s->pd, &a);
		if (!s->qp[i])
			die("create_qp %d: %s", i, strerror(errno));
		s->end[i] = (struct rc_end) {
			.qpn = s->qp[i]->qp_num,
			.psn = 0x100 + i,
			.gid = gid,
			.gid_index = g,
			.mtu = port.active_mtu,
		};
	}
}

static void side_close(struct side *s)
{
	int i;

	for (i = 0; i < nqps; i++)
		if (ibv_destroy_qp(s->qp[i]))
			fail("destroy_qp %d", i);
	if (ibv_dereg_mr(s->mr) || ibv_destroy_cq(s->cq) ||
	    ibv_dealloc_pd(s->pd) || ibv_close_device(s->ctx))
		fail("teardown: %s", strerror(errno));
}

static int post(struct side *s, int i, bool recv)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + (size_t)i * MSG,
		.length = MSG,
		.lkey = s->mr->lkey,
	};

	if (recv) {
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		return ibv_post_recv(s->qp[i], &wr, &bad);
	}
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(s->qp[i], &wr, &bad);
}

/* n successful completions on s's CQ, or fail. */
static void reap(struct side *s, int n, const char *what)
{
	struct ibv_wc wc[64];
	int got = 0;

	while (got < n) {
		int k = poll_n(s->cq, wc, n - got < 64 ? n - got : 64, WAIT_MS);
		int j;

		if (k <= 0) {
			fail("%s: %d of %d completions", what, got, n);
			return;
		}
		for (j = 0; j < k; j++)
			if (wc[j].status != IBV_WC_SUCCESS)
				fail("%s: wr %llu: %s", what,
				     (unsigned long long)wc[j].wr_id,
				     ibv_wc_status_str(wc[j].status));
		got += k;
	}
}

/* COMM_EST events for B's QPs until none came for QUIET_MS. */
static int count_comm_est(struct side *s)
{
	struct pollfd pfd = { .fd = s->ctx->async_fd, .events = POLLIN };
	int flags = fcntl(s->ctx->async_fd, F_GETFL);
	struct ibv_async_event ev;
	int n = 0;

	if (flags < 0 || fcntl(s->ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		die("async_fd: %s", strerror(errno));
	while (poll(&pfd, 1, QUIET_MS) == 1) {
		while (!ibv_get_async_event(s->ctx, &ev)) {
			if (ev.event_type == IBV_EVENT_COMM_EST)
				n++;
			else
				printf("# async event %s\n",
				       ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "qps", required_argument, NULL, 'q' },
		{ "gid-index-a", required_argument, NULL, 'a' },
		{ "gid-index-b", required_argument, NULL, 'b' },
		{ "hold", required_argument, NULL, 'h' },
		{ "release", required_argument, NULL, 'r' },
		{}
	};
	static struct side a, b;
	int ga = -1, gb = -1, c, i, got;
	const char *hold = NULL, *release = NULL;
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct rc_params p;
	const char *step;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			nqps = atoi(optarg);
			break;
		case 'a':
			ga = atoi(optarg);
			break;
		case 'b':
			gb = atoi(optarg);
			break;
		case 'h':
			hold = optarg;
			break;
		case 'r':
			release = optarg;
			break;
		default:
			return 2;
		}
	}
	fail_style.fail = "evflood: FAIL: ";
	fail_style.die = "evflood: FAIL: ";
	if (nqps < 1 || nqps > MAX_QPS)
		die("--qps 1..%d", MAX_QPS);
	rc_params_default(&p);
	/* A's frames wait in the caller's plug: no retry may run out there */
	p.timeout = 20;		/* 4.3 s */
	side_open(&a, 0, ga);
	side_open(&b, 1, gb);
	for (i = 0; i < nqps; i++) {
		int err = rc_connect(a.qp[i], &a.end[i], &b.end[i], &p, &step);

		if (!err)
			err = qp_to_init(b.qp[i], p.access);
		if (!err)
			err = post(&b, i, true);
		if (!err)
			err = qp_to_rtr(b.qp[i], &b.end[i], &a.end[i], &p);
		if (err)
			die("connect pair %d: %s", i, strerror(err));
	}

	/* The burst: B's QPs are in RTR, each first packet a COMM_EST. */
	if (hold && system(hold))
		die("hold command failed: %s", hold);
	for (i = 0; i < nqps; i++)
		if (post(&a, i, false))
			die("post_send %d: %s", i, strerror(errno));
	if (release) {
		usleep(300 * 1000);
		if (system(release))
			die("release command failed: %s", release);
	}
	reap(&a, nqps, "A's SENDs");
	reap(&b, nqps, "B's receives");
	got = count_comm_est(&b);
	printf("evflood: %d COMM_EST generated, %d delivered\n", nqps, got);
	if (got > nqps)
		fail("more COMM_EST events than QPs");

	/* The device goes on: B to RTS, every pair answers back. */
	for (i = 0; i < nqps; i++) {
		int err = post(&a, i, true);

		if (!err)
			err = qp_to_rts(b.qp[i], &b.end[i], &p);
		if (!err)
			err = post(&b, i, false);
		if (err)
			die("answer on pair %d: %s", i, strerror(err));
	}
	reap(&b, nqps, "B's SENDs");
	reap(&a, nqps, "A's receives");
	ctx = open_device(dev_name(1));
	if (!ctx || ibv_query_device(ctx, &attr))
		fail("a new context on %s: %s", dev_name(1), strerror(errno));
	if (ctx)
		ibv_close_device(ctx);
	side_close(&a);
	side_close(&b);
	return fail_count ? 1 : 0;
}
