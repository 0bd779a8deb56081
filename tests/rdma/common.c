// SPDX-License-Identifier: GPL-2.0-only
/*
 * Helpers shared by the RDMA data-path tests: see common.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static inline uint64_t stream_word(uint64_t seed, uint64_t word)
{
	return mix64(seed ^ (word * 0xd1342543de82ef95ULL));
}

uint8_t stream_byte(uint64_t seed, uint64_t pos)
{
	uint64_t w = stream_word(seed, pos >> 3);

	return (uint8_t)(w >> (8 * (pos & 7)));
}

void stream_fill(void *dst, uint64_t seed, uint64_t pos, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		uint64_t w = stream_word(seed, pos >> 3);
		unsigned int o = pos & 7;
		size_t k = 8 - o < n ? 8 - o : n;

		if (k == 8) {
			memcpy(d, &w, 8);
		} else {
			size_t i;

			for (i = 0; i < k; i++)
				d[i] = (uint8_t)(w >> (8 * (o + i)));
		}
		d += k;
		pos += k;
		n -= k;
	}
}

size_t stream_check(const void *src, uint64_t seed, uint64_t pos, size_t n)
{
	const uint8_t *s = src;
	size_t done = 0;

	while (done < n) {
		uint64_t w = stream_word(seed, pos >> 3);
		unsigned int o = pos & 7;
		size_t k = 8 - o < n - done ? 8 - o : n - done;
		size_t i;

		if (k == 8) {
			if (memcmp(s + done, &w, 8)) {
				for (i = 0; i < 8; i++)
					if (s[done + i] != (uint8_t)(w >> (8 * i)))
						return done + i;
			}
		} else {
			for (i = 0; i < k; i++)
				if (s[done + i] != (uint8_t)(w >> (8 * (o + i))))
					return done + i;
		}
		done += k;
		pos += k;
	}
	return n;
}

size_t first_not(const void *p, size_t n, uint8_t v)
{
	const uint8_t *b = p;
	uint64_t pat = 0x0101010101010101ULL * v;
	size_t i = 0;

	while (i < n && ((uintptr_t)(b + i) & 7)) {
		if (b[i] != v)
			return i;
		i++;
	}
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		if (w != pat)
			break;
	}
	for (; i < n; i++)
		if (b[i] != v)
			return i;
	return n;
}

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct fail_style fail_style = {
	.fail = "FAIL: ",
	.die = "FAIL: ",
	.status = 1,
};
uint64_t fail_count;

static void vreport(const char *start, const char *fmt, va_list ap)
{
	printf("%s", start);
	vprintf(fmt, ap);
	printf("\n");
}

void fail(const char *fmt, ...)
{
	va_list ap;

	fail_count++;
	if (fail_style.shown && fail_count > fail_style.shown) {
		if (fail_count == fail_style.shown + 1 && fail_style.more)
			printf("%s\n", fail_style.more);
		return;
	}
	va_start(ap, fmt);
	vreport(fail_style.fail, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fail_style.die, fmt, ap);
	va_end(ap);
	exit(fail_style.status);
}

const char *dev_name(int which)
{
	const char *v = getenv(which ? "DRAY_TEST_DEV_B" : "DRAY_TEST_DEV_A");

	if (v && *v)
		return v;
	return which ? "dray1" : "dray0";
}

void *page_buf(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!name || !strcmp(ibv_get_device_name(list[i]), name)) {
			dev = list[i];
			break;
		}
	}
	if (!dev)
		errno = ENODEV;
	else
		ctx = ibv_open_device(dev);
	i = errno;
	ibv_free_device_list(list);
	errno = i;	/* ibv_open_device()'s */
	return ctx;
}

bool ipv4_mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

int pick_gid(struct ibv_context *ctx, int want, union ibv_gid *gid)
{
	struct ibv_gid_entry ent[256];
	ssize_t n, i;
	int v2 = -1;

	if (want >= 0) {
		if (ibv_query_gid(ctx, RC_PORT, want, gid))
			return -(errno ? errno : EINVAL);
		return want;
	}
	n = ibv_query_gid_table(ctx, ent, 256, 0);
	if (n < 0)
		return (int)n;
	for (i = 0; i < n; i++) {
		if (ent[i].port_num != RC_PORT ||
		    ent[i].gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		if (ipv4_mapped(&ent[i].gid)) {
			*gid = ent[i].gid;
			return (int)ent[i].gid_index;
		}
		if (v2 < 0)
			v2 = (int)i;
	}
	if (v2 < 0)
		return -ENOENT;
	*gid = ent[v2].gid;
	return (int)ent[v2].gid_index;
}

static bool sysfs_has(const char *dev, const char *file, const char *what)
{
	char path[256], buf[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, file);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strstr(buf, what) != NULL;
}

bool is_rxe(struct ibv_context *ctx)
{
	const char *name = ibv_get_device_name(ctx->device);

	return !strncmp(name, "rxe", 3) || sysfs_has(name, "hca_type", "rxe");
}

bool is_dray(struct ibv_context *ctx)
{
	const char *name = ibv_get_device_name(ctx->device);

	return !strncmp(name, "dray", 4) ||
	       sysfs_has(name, "device/modalias", "platform:dray");
}

/*
 * The local ACK timeout of the tests' RC QPs: 14 (67 ms), or
 * DRAY_RDMA_TIMEOUT_EXP (0 to 31) for a kernel that moves data slowly
 * (the debug kernel under TCG, where a 4 MiB message outlasts 7 retries
 * of 67 ms).
 */
static uint8_t rc_timeout_default(void)
{
	const char *e = getenv("DRAY_RDMA_TIMEOUT_EXP");
	char *end;
	long v;

	if (!e || !*e)
		return 14;
	v = strtol(e, &end, 10);
	return (*end || v < 0 || v > 31) ? 14 : (uint8_t)v;
}

void rc_params_default(struct rc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->timeout = rc_timeout_default();
	p->retry_cnt = 7;
	p->rnr_retry = 7;
	p->min_rnr_timer = 12;
	p->access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
}

int qp_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = RC_PORT,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int qp_to_rtr(struct ibv_qp *qp, const struct rc_end *self,
	      const struct rc_end *peer, const struct rc_params *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = self->mtu < peer->mtu ? self->mtu : peer->mtu,
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = self->rd_atomic,
		.min_rnr_timer = p->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = peer->gid,
				.sgid_index = (uint8_t)self->gid_index,
				.hop_limit = 1,
			},
			.dlid = 0,
			.sl = 0,
			.src_path_bits = 0,
			.port_num = RC_PORT,
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

int qp_to_rts(struct ibv_qp *qp, const struct rc_end *self,
	      const struct rc_params *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.timeout = p->timeout,
		.retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry,
		.sq_psn = self->psn,
		.max_rd_atomic = p->max_rd_atomic ? p->max_rd_atomic :
						    self->rd_atomic,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int rc_connect(struct ibv_qp *qp, const struct rc_end *self,
	       const struct rc_end *peer, const struct rc_params *p,
	       const char **step)
{
	int err;

	*step = "RESET->INIT";
	err = qp_to_init(qp, p->access);
	if (err)
		return err;
	*step = "INIT->RTR";
	err = qp_to_rtr(qp, self, peer, p);
	if (err)
		return err;
	*step = "RTR->RTS";
	return qp_to_rts(qp, self, p);
}

int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state target)
{
	struct ibv_qp_attr a = { .qp_state = target };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int err;

	err = ibv_query_qp(qp, &a, IBV_QP_STATE, &init);
	if (err)
		return -err;
	return a.qp_state;
}

int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned int timeout_ms)
{
	uint64_t deadline = now_us() + (uint64_t)timeout_ms * 1000;
	unsigned int idle = 0;
	int got = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return -EIO;
		if (r > 0) {
			got += r;
			idle = 0;
			continue;
		}
		if (++idle % 64 == 0) {
			if (now_us() > deadline)
				break;
			sched_yield();
		}
	}
	return got;
}

const char *wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "?";
	}
}

const char *qp_state_str(int state)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	if (state >= 0 && state < (int)(sizeof(names) / sizeof(names[0])) &&
	    names[state])
		return names[state];
	return "?";
}
