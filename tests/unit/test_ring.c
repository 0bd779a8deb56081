// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ring index arithmetic (include/dray/dray_ring.h): slots, phase bits and
 * doorbell validation, including a producer/consumer simulation that runs
 * the 16-bit indexes through many wraps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dray/dray_ring.h>

#include "unit.h"

UNIT_TEST(slot_masks_index)
{
	CHECK_EQ(dray_ring_slot(0, 8), 0);
	CHECK_EQ(dray_ring_slot(7, 8), 7);
	CHECK_EQ(dray_ring_slot(8, 8), 0);
	CHECK_EQ(dray_ring_slot(0xffffffffu, 1024), 1023);
}

UNIT_TEST(phase_alternates_per_pass)
{
	CHECK_EQ(dray_ring_phase(0, 4), 1);
	CHECK_EQ(dray_ring_phase(3, 4), 1);
	CHECK_EQ(dray_ring_phase(4, 4), 0);
	CHECK_EQ(dray_ring_phase(7, 4), 0);
	CHECK_EQ(dray_ring_phase(8, 4), 1);
	/* Parity is the same whether the counter is 16 or 32 bits wide. */
	CHECK_EQ(dray_ring_phase((uint16_t)(65536 + 5), 32),
		 dray_ring_phase(65536 + 5, 32));
}

UNIT_TEST(doorbell_validation)
{
	CHECK(dray_ring_valid16(0, 0, 32), "empty ring");
	CHECK(dray_ring_valid16(32, 0, 32), "full ring");
	CHECK(!dray_ring_valid16(33, 0, 32), "more than a ring ahead");
	CHECK(dray_ring_valid16(3, 0xfffe, 32), "wrapped: 5 outstanding");
	CHECK_EQ(dray_ring_outstanding16(3, 0xfffe), 5);
	CHECK(!dray_ring_valid16(0xfffe, 3, 32), "producer behind consumer");
}

struct entry {
	uint32_t seq;
	uint8_t phase;
};

/*
 * A producer writes entries with the phase of its free-running index; a
 * consumer with a 16-bit index polls for the phase it expects. The
 * consumer must see every entry exactly once and in order, and never an
 * entry from an earlier pass, across more than one wrap of 2^16.
 */
static void simulate(int *failed, uint32_t depth, unsigned int seed)
{
	struct entry *ring = calloc(depth, sizeof(*ring));
	uint32_t pi = 0, expect = 0;
	uint16_t ci = 0;
	unsigned long steps;

	srand(seed);
	for (steps = 0; steps < 300000 && !*failed; steps++) {
		if (rand() & 1) {
			/* Produce only when there is room. */
			if (dray_ring_outstanding16((uint16_t)pi, ci) < depth) {
				struct entry *e =
					&ring[dray_ring_slot(pi, depth)];

				e->seq = pi;
				e->phase = dray_ring_phase(pi, depth);
				pi++;
			}
		} else {
			struct entry *e = &ring[dray_ring_slot(ci, depth)];

			if (e->phase != dray_ring_phase(ci, depth))
				continue;	/* nothing new */
			CHECK(e->seq == expect,
			      "depth %u: got seq %u, expected %u", depth,
			      e->seq, expect);
			expect++;
			ci++;
		}
	}
	CHECK(pi > 70000, "the simulation wrapped 16 bits (pi %u)", pi);
	CHECK(dray_ring_valid16((uint16_t)pi, ci, depth), "final indexes");
	free(ring);
}

UNIT_TEST(producer_consumer_wraps)
{
	uint32_t depth;

	for (depth = 4; depth <= 1024; depth *= 4)
		simulate(failed, depth, depth);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "slot_masks_index", slot_masks_index },
		{ "phase_alternates_per_pass", phase_alternates_per_pass },
		{ "doorbell_validation", doorbell_validation },
		{ "producer_consumer_wraps", producer_consumer_wraps },
	};

	return unit_run("ring", tests, sizeof(tests) / sizeof(tests[0]));
}
