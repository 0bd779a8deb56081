/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The environment the fuzz build of the transport runs in (xport_env.c):
 * the kernel functions of kinc/fuzz_kernel.h that need state (sk_buff
 * and page allocation, the netdev's transmit), the parts of the NIC
 * model outside the transport that are not compiled (engine, event
 * queues, PDs, address handles, the port), and the bookkeeping the fuzz
 * targets check.
 */
#ifndef DRAY_FUZZ_XPORT_ENV_H
#define DRAY_FUZZ_XPORT_ENV_H

#include "fuzz_kernel.h"
#include "fuzz_assert.h"

struct dray_hw;

/* Set by the target: make alloc_skb() and netdev_alloc_frag() fail. */
extern bool fuzz_fail_alloc;
/* Called for every frame dev_queue_xmit() gets, before it is freed. */
extern void (*fuzz_tx_hook)(struct sk_buff *skb);

/* Live objects of the shim, checked to be 0 between inputs. */
struct fuzz_counts {
	long	skbs;		/* allocated, not freed */
	long	frag_pages;	/* netdev_alloc_frag() pages not freed */
	long	events;		/* dray_hw_eq_post() calls */
	long	kicks;		/* dray_hw_engine_kick() calls */
	long	tx;		/* frames handed to dev_queue_xmit() */
	long	mcast_rx;	/* frames to a multicast group */
};

extern struct fuzz_counts fuzz_counts;

/* A linear frame of @len bytes as the port would hand it over. */
struct sk_buff *fuzz_skb_from(const void *data, u32 len);
/* Free every page fragment still allocated (after a failed input). */
void fuzz_env_reset(void);

#endif /* DRAY_FUZZ_XPORT_ENV_H */
