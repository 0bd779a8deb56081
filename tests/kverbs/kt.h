/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray_ktest: what the test files share (kt_main.c: setup, the basic verbs
 * and the runner; kt_frwr.c: fast registration and invalidation;
 * kt_srq.c: shared receive queues; kt_traffic.c: traffic=1, checked
 * traffic for the faults group).
 */
#ifndef DRAY_KT_H
#define DRAY_KT_H

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <rdma/ib_verbs.h>

#define KT_TIMEOUT_MS	20000
#define KT_BUF_ORDER	4		/* 64 KiB per side */
#define KT_BUF_SIZE	(PAGE_SIZE << KT_BUF_ORDER)
#define KT_WR		16
#define KT_SGE		2
#define KT_INLINE	64

#define kt_diag(fmt, ...) pr_info("dray_ktest: # " fmt "\n", ##__VA_ARGS__)

/* Completion events of one CQ. */
struct kt_cq_ev {
	atomic_t		events;
	struct completion	done;
};

/* One end: a device with its PD, CQs, QP, DMA MR and buffer. */
struct kt_side {
	const char		*name;
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_mr		*mr;		/* DMA MR with remote rights */
	struct ib_cq		*scq;
	struct ib_cq		*rcq;
	struct kt_cq_ev		sev;
	struct kt_cq_ev		rev;
	struct ib_qp		*qp;
	u8			*buf;
	u64			dma;
	int			gid_index;
	union ib_gid		gid;
	u8			mac[ETH_ALEN];
};

extern u8 kt_ack_timeout;

bool tap(bool ok, const char *name);
int kt_find_gid(struct kt_side *s);
int kt_setup_side(struct kt_side *s);
void kt_teardown_side(struct kt_side *s);
int kt_connect(struct kt_side *s, struct ib_qp *qp, struct kt_side *peer,
	       u32 dqpn);
int kt_to_init(struct ib_qp *qp);
int kt_set_state(struct ib_qp *qp, enum ib_qp_state state);
bool kt_poll1(struct ib_cq *cq, struct ib_wc *wc);
bool kt_wc_is(const struct ib_wc *wc, enum ib_wc_status status,
	      enum ib_wc_opcode opcode, u64 wr_id, const char *what);
void kt_fill(u8 *p, u32 len, u8 seed);

/* kt_frwr.c */
void kt_run_frwr(struct kt_side *a, struct kt_side *b);
/* kt_srq.c */
void kt_run_srq(struct kt_side *a, struct kt_side *b);
/* kt_traffic.c */
int kt_traffic_start(const char *a, const char *b);
void kt_traffic_stop(void);

#endif /* DRAY_KT_H */
