/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the RDMA data-path tests (tests/rdma/): open a device
 * by name, pick its RoCEv2 IPv4 GID, connect two RC QPs the way
 * ibv_rc_pingpong does (a global address handle: dgid, sgid_index,
 * hop_limit; no rdma_cm), poll a CQ with a deadline, and a position-
 * addressable pseudo-random byte stream for payloads.
 *
 * Functions return 0 or a positive errno unless said otherwise.
 */
#ifndef DRAY_RDMA_COMMON_H
#define DRAY_RDMA_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#define RC_PORT		1

#ifndef fallthrough
#define fallthrough	__attribute__((__fallthrough__))
#endif

/* Pseudo-random numbers (splitmix64): reproducible from a seed. */
struct rng {
	uint64_t s;
};

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

/* Uniform in [0, n) (n > 0); the bias is irrelevant here. */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return rng_next(r) % n;
}

/* Uniform in [lo, hi] */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* true with probability 1/n */
static inline bool rng_one_in(struct rng *r, uint64_t n)
{
	return rng_below(r, n) == 0;
}

/*
 * Payload stream: byte p of stream `seed` is a pure function of (seed, p),
 * so any piece of a message can be generated or checked on its own.
 */
void stream_fill(void *dst, uint64_t seed, uint64_t pos, size_t n);
/* Index of the first byte that differs from the stream, or n. */
size_t stream_check(const void *src, uint64_t seed, uint64_t pos, size_t n);
uint8_t stream_byte(uint64_t seed, uint64_t pos);
/* Index of the first byte that is not v, or n. */
size_t first_not(const void *p, size_t n, uint8_t v);

uint64_t now_us(void);

/*
 * The error reports of the stand-alone tests (integrity, hostile), one
 * line each on stdout. fail() counts an error in fail_count and prints
 * it after fail_style.fail: the first fail_style.shown of them (0: every
 * one), then the line fail_style.more once. die() prints a fatal error
 * after fail_style.die and exits with fail_style.status. A program sets
 * fail_style before its first report.
 */
struct fail_style {
	const char *fail;	/* the start of a fail() line */
	const char *die;	/* the start of a die() line */
	int status;		/* die()'s exit status */
	uint64_t shown;		/* fail() lines printed at the most, 0: all */
	const char *more;	/* the line after the last one shown */
};

extern struct fail_style fail_style;
extern uint64_t fail_count;

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2),
					     noreturn));

/*
 * The device a test runs on: which 0 is DRAY_TEST_DEV_A (default dray0),
 * 1 DRAY_TEST_DEV_B (default dray1).
 */
const char *dev_name(int which);

/* len bytes of zeroed anonymous memory, page aligned; NULL on failure */
void *page_buf(size_t len);

/* Open the ib_device called name (NULL: the first one); errno on failure. */
struct ibv_context *open_device(const char *name);

/*
 * The GID index to use on port RC_PORT: want >= 0 is taken as given;
 * want < 0 picks the first RoCEv2 GID holding an IPv4-mapped address,
 * else the first RoCEv2 GID. Fills gid. Returns the index or -errno.
 */
int pick_gid(struct ibv_context *ctx, int want, union ibv_gid *gid);
/* Whether g holds an IPv4-mapped address (::ffff:a.b.c.d) */
bool ipv4_mapped(const union ibv_gid *g);

/* Whether a device is Soft-RoCE (for documented rxe deviations). */
bool is_rxe(struct ibv_context *ctx);
bool is_dray(struct ibv_context *ctx);

/* One end of an RC connection, as exchanged out of band. */
struct rc_end {
	uint32_t qpn;
	uint32_t psn;		/* the end's first send PSN */
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;	/* the port's active MTU */
	uint8_t rd_atomic;	/* responder resources it offers */
};

struct rc_params {
	uint8_t timeout;	/* local ACK timeout exponent */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;	/* initiator depth, 0: as the peer offers */
	int access;		/* qp_access_flags */
};

void rc_params_default(struct rc_params *p);

/* RESET -> INIT -> RTR -> RTS towards peer. errno of the failing step. */
int rc_connect(struct ibv_qp *qp, const struct rc_end *self,
	       const struct rc_end *peer, const struct rc_params *p,
	       const char **step);

/* RESET -> INIT only */
int qp_to_init(struct ibv_qp *qp, int access);
/* INIT -> RTR only */
int qp_to_rtr(struct ibv_qp *qp, const struct rc_end *self,
	      const struct rc_end *peer, const struct rc_params *p);
/* RTR -> RTS only */
int qp_to_rts(struct ibv_qp *qp, const struct rc_end *self,
	      const struct rc_params *p);
/* Any state -> target (ERR, RESET, SQD, ...) with only IBV_QP_STATE. */
int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state target);
/* The QP's current state, or -errno */
int qp_state(struct ibv_qp *qp);

/*
 * Poll cq until n completions have been collected into wc or timeout_ms
 * passed. Returns the number collected (< n on timeout), -errno if
 * ibv_poll_cq failed.
 */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned int timeout_ms);

const char *wc_opcode_str(enum ibv_wc_opcode op);
const char *qp_state_str(int state);

#endif /* DRAY_RDMA_COMMON_H */
