/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray NIC model: pure functions of the port, free of kernel state so that
 * tests/unit can compile them in user space.
 */
#ifndef DRAY_DEV_LOGIC_H
#define DRAY_DEV_LOGIC_H

#include <linux/types.h>
#include <dray/dray_admin.h>

/* Largest IB MTU whose RoCEv2 packets fit an Ethernet MTU; at least 256. */
static inline __u8 dray_mtu_from_eth(__u32 eth_mtu)
{
	__u32 payload = eth_mtu > DRAY_ROCE_OVERHEAD ?
			eth_mtu - DRAY_ROCE_OVERHEAD : 0;

	if (payload >= 4096)
		return DRAY_MTU_4096;
	if (payload >= 2048)
		return DRAY_MTU_2048;
	if (payload >= 1024)
		return DRAY_MTU_1024;
	if (payload >= 512)
		return DRAY_MTU_512;
	return DRAY_MTU_256;
}

/* Modified EUI-64 of a MAC address (RFC 4291 appendix A), network order. */
static inline void dray_guid_from_mac(const __u8 *mac, __u8 *guid)
{
	guid[0] = mac[0] ^ 0x02;
	guid[1] = mac[1];
	guid[2] = mac[2];
	guid[3] = 0xff;
	guid[4] = 0xfe;
	guid[5] = mac[3];
	guid[6] = mac[4];
	guid[7] = mac[5];
}

/*
 * The requester's congestion window, in PSNs (hw-interface.md, "Flow
 * control"). RoCE has no selective retransmission: every loss costs a
 * go-back of all that was sent after it, so a window larger than the
 * path holds costs twice. A loss sets ssthresh to half the window (at
 * least DRAY_CWND_MIN); after a NAK the window drops to it, after a
 * timeout to DRAY_CWND_MIN. Below ssthresh the window grows by one PSN
 * per PSN acknowledged, above it by one per window acknowledged, up to
 * DRAY_CWND_MAX: additive increase, multiplicative decrease.
 */
#define DRAY_CWND_MIN	8
#define DRAY_CWND_MAX	256

struct dray_cwnd {
	__u32	cwnd;		/* PSNs that may be outstanding */
	__u32	ssthresh;
	__u32	acked;		/* above ssthresh: PSNs towards the next +1 */
};

static inline void dray_cwnd_init(struct dray_cwnd *w)
{
	w->cwnd = DRAY_CWND_MAX;
	w->ssthresh = DRAY_CWND_MAX;
	w->acked = 0;
}

static inline void dray_cwnd_acked(struct dray_cwnd *w, __u32 n)
{
	if (w->cwnd < w->ssthresh) {
		__u32 room = w->ssthresh - w->cwnd;

		if (n < room) {
			w->cwnd += n;
			return;
		}
		w->cwnd = w->ssthresh;
		n -= room;
	}
	w->acked += n;
	/* Ends: the window grows each time, up to DRAY_CWND_MAX. */
	while (w->cwnd < DRAY_CWND_MAX && w->acked >= w->cwnd) {
		w->acked -= w->cwnd;
		w->cwnd++;
	}
	if (w->cwnd >= DRAY_CWND_MAX) {
		w->cwnd = DRAY_CWND_MAX;
		w->acked = 0;
	}
}

static inline void dray_cwnd_loss(struct dray_cwnd *w, int timeout)
{
	w->ssthresh = w->cwnd / 2 > DRAY_CWND_MIN ? w->cwnd / 2 : DRAY_CWND_MIN;
	w->cwnd = timeout ? DRAY_CWND_MIN : w->ssthresh;
	w->acked = 0;
}

#endif /* DRAY_DEV_LOGIC_H */
