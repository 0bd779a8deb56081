// SPDX-License-Identifier: GPL-2.0-only
/*
 * traffic: a known amount of RC traffic between two devices, driven line
 * by line from stdin, for the counter and tracepoint tests (counters.sh).
 * The QPs live until "quit", so a test can look at, bind and unbind
 * their counters between the steps.
 *
 *   traffic [--rnr-retry N] [--timeout-exp N]
 *
 * Devices: DRAY_TEST_DEV_A (the sender) and DRAY_TEST_DEV_B. One RC QP
 * on each, connected. On start it prints "qpn A B". Commands:
 *
 *   send N SIZE   A sends N SENDs of SIZE bytes (B posted N receives
 *                 first); every one must complete successfully
 *   rnr           A sends one SEND that B has no receive for: it must
 *                 complete with IBV_WC_RNR_RETRY_EXC_ERR (use a small
 *                 --rnr-retry); A's QP is then in ERR
 *   quit          destroy everything and exit 0
 *
 * Each command answers "ok ..." or "fail ...", one line; a failure also
 * makes the exit status 1.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define BATCH		64		/* WRs posted at a time */
#define MAX_SIZE	65536
#define WAIT_MS		120000

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	void *buf;
	struct rc_end rce;
};

static void end_open(struct end *e, int which)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_send_wr = BATCH,
			.max_recv_wr = BATCH,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	struct ibv_port_attr port;
	int g;

	e->ctx = open_device(dev_name(which));
	if (!e->ctx)
		die("open %s: %s", dev_name(which), strerror(errno));
	if (ibv_query_port(e->ctx, RC_PORT, &port))
		die("query port of %s", dev_name(which));
	g = pick_gid(e->ctx, -1, &e->rce.gid);
	if (g < 0)
		die("no GID on %s", dev_name(which));
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 2 * BATCH, NULL, NULL, 0) : NULL;
	if (!e->cq)
		die("PD or CQ on %s: %s", dev_name(which), strerror(errno));
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	if (!e->qp)
		die("QP on %s: %s", dev_name(which), strerror(errno));
	e->buf = page_buf(MAX_SIZE);
	e->mr = e->buf ? ibv_reg_mr(e->pd, e->buf, MAX_SIZE,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!e->mr)
		die("MR on %s: %s", dev_name(which), strerror(errno));
	e->rce.qpn = e->qp->qp_num;
	e->rce.psn = 0x1000 * (which + 1);
	e->rce.gid_index = g;
	e->rce.mtu = port.active_mtu;
	e->rce.rd_atomic = 1;
}

static void end_close(struct end *e)
{
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_destroy_cq(e->cq);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
}

static int post_recvs(struct end *e, int n, uint32_t size)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf,
		.length = size,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		err = ibv_post_recv(e->qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

static int post_sends(struct end *e, int n, uint32_t size)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->buf,
		.length = size,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	}, *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		err = ibv_post_send(e->qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

/* n completions on e's CQ, all of them with status want. */
static int expect_wcs(struct end *e, int n, enum ibv_wc_status want)
{
	struct ibv_wc wc[2 * BATCH];
	int got, i;

	got = poll_n(e->cq, wc, n, WAIT_MS);
	if (got != n) {
		printf("fail %d of %d completions\n", got < 0 ? 0 : got, n);
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != want) {
			printf("fail completion %d: %s, expected %s\n", i,
			       ibv_wc_status_str(wc[i].status),
			       ibv_wc_status_str(want));
			return 1;
		}
	}
	return 0;
}

static int cmd_send(struct end *a, struct end *b, long n, long size)
{
	long done;
	int k;

	if (n < 1 || size < 0 || size > MAX_SIZE) {
		printf("fail bad arguments\n");
		return 1;
	}
	for (done = 0; done < n; done += k) {
		k = n - done < BATCH ? n - done : BATCH;
		if (post_recvs(b, k, size) || post_sends(a, k, size)) {
			printf("fail post: %s\n", strerror(errno));
			return 1;
		}
		/* A: the sends; B: the receives (one CQ each). */
		if (expect_wcs(a, k, IBV_WC_SUCCESS) ||
		    expect_wcs(b, k, IBV_WC_SUCCESS))
			return 1;
	}
	printf("ok sent %ld x %ld\n", n, size);
	return 0;
}

static int cmd_rnr(struct end *a)
{
	if (post_sends(a, 1, 64)) {
		printf("fail post: %s\n", strerror(errno));
		return 1;
	}
	if (expect_wcs(a, 1, IBV_WC_RNR_RETRY_EXC_ERR))
		return 1;
	printf("ok rnr retry exceeded\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rnr-retry", required_argument, NULL, 'r' },
		{ "timeout-exp", required_argument, NULL, 't' },
		{ 0 },
	};
	struct end a = {}, b = {};
	struct rc_params p;
	const char *step;
	char line[128];
	int c, rc = 0;
	long n, size;

	fail_style.die = "fail";
	fail_style.status = 2;
	rc_params_default(&p);
	p.min_rnr_timer = 1;	/* 0.01 ms */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			p.rnr_retry = atoi(optarg);
			break;
		case 't':
			p.timeout = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	end_open(&a, 0);
	end_open(&b, 1);
	if (rc_connect(a.qp, &a.rce, &b.rce, &p, &step) ||
	    rc_connect(b.qp, &b.rce, &a.rce, &p, &step))
		die("connect: %s failed", step);
	printf("qpn %u %u\n", a.qp->qp_num, b.qp->qp_num);

	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "send %ld %ld", &n, &size) == 2)
			rc |= cmd_send(&a, &b, n, size);
		else if (!strncmp(line, "rnr", 3))
			rc |= cmd_rnr(&a);
		else if (!strncmp(line, "quit", 4))
			break;
		else
			printf("fail unknown command\n");
	}
	end_close(&a);
	end_close(&b);
	printf("ok quit\n");
	return rc;
}
