/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray ring index arithmetic, shared by the device, the driver and the
 * provider. Producer and consumer indexes are free running counters; a
 * ring has a power-of-two number of entries. Pure functions only: this
 * header is unit tested in user space.
 */
#ifndef DRAY_RING_H
#define DRAY_RING_H

#include <linux/types.h>

/* Slot of a free-running index in a ring of @depth entries. */
static inline __u32 dray_ring_slot(__u32 index, __u32 depth)
{
	return index & (depth - 1);
}

/*
 * Phase bit the producer writes for entry @index: 1 on the first pass
 * through the ring, 0 on the second, and so on. @depth must divide 2^32.
 */
static inline __u8 dray_ring_phase(__u32 index, __u32 depth)
{
	return ((index / depth) & 1) ? 0 : 1;
}

/*
 * Entries between a 16-bit consumer and producer index (doorbell width).
 * Returns how many are outstanding, or a value > @depth if @pi is not a
 * possible producer index for @ci (more than a ring ahead).
 */
static inline __u32 dray_ring_outstanding16(__u16 pi, __u16 ci)
{
	return (__u16)(pi - ci);
}

static inline int dray_ring_valid16(__u16 pi, __u16 ci, __u32 depth)
{
	return dray_ring_outstanding16(pi, ci) <= depth;
}

#endif /* DRAY_RING_H */
