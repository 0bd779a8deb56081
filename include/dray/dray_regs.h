/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * dray NIC register block (BAR0).
 *
 * All registers are 32 bits wide, little endian, and must be accessed with
 * aligned 32-bit reads and writes. Reserved bits read as zero and must be
 * written as zero. See Documentation/hw-interface.md for the programming
 * sequences.
 */
#ifndef DRAY_REGS_H
#define DRAY_REGS_H

#include "dray_common.h"

#define DRAY_BAR0_SIZE			0x1000

/* RO: identification; reads DRAY_ID_MAGIC ("DRAY"). */
#define DRAY_REG_ID			0x000
#define   DRAY_ID_MAGIC			0x44524159u

/* RO: interface version. [31:16] major, [15:0] minor. */
#define DRAY_REG_VERSION		0x004
#define   DRAY_VERSION_MAJOR_MASK	DRAY_GENMASK(31, 16)
#define   DRAY_VERSION_MINOR_MASK	DRAY_GENMASK(15, 0)
#define   DRAY_IF_VERSION_MAJOR		1
#define   DRAY_IF_VERSION_MINOR		1

/*
 * RW: device control.
 * ENABLE: 0->1 starts the admin queue with the configuration in the AQ
 *         registers; 1->0 stops it.
 * RESET:  write 1 to reset the device: every object (EQ, UAR, GID entry, and
 *         later PD, MR, CQ, QP) is destroyed without completion, the admin
 *         queue is stopped and all registers return to their reset values.
 *         Self-clearing; DEV_STS.READY is 0 afterwards.
 */
#define DRAY_REG_DEV_CTRL		0x008
#define   DRAY_DEV_CTRL_ENABLE		0x00000001u
#define   DRAY_DEV_CTRL_RESET		0x00000002u

/*
 * RO: device status.
 * READY: the admin queue is running and accepts commands.
 * FATAL: the device hit an unrecoverable error; DRAY_REG_FATAL_SYNDROME
 *        tells which. Only a reset leaves this state.
 * CFG_ERR: ENABLE was refused because the AQ configuration is invalid.
 */
#define DRAY_REG_DEV_STS		0x00c
#define   DRAY_DEV_STS_READY		0x00000001u
#define   DRAY_DEV_STS_FATAL		0x00000002u
#define   DRAY_DEV_STS_CFG_ERR		0x00000004u

/* RW: bus address of the admin submission ring (64-byte aligned). */
#define DRAY_REG_AQ_SQ_BASE_LO		0x010
#define DRAY_REG_AQ_SQ_BASE_HI		0x014
/* RW: bus address of the admin completion ring (64-byte aligned). */
#define DRAY_REG_AQ_CQ_BASE_LO		0x018
#define DRAY_REG_AQ_CQ_BASE_HI		0x01c

/*
 * RW: admin queue configuration, latched at ENABLE.
 * [3:0]   log2 of the ring depth, for both rings (DRAY_AQ_LOG_DEPTH_MIN..MAX)
 * [15:8]  interrupt vector raised when a completion is written
 */
#define DRAY_REG_AQ_CFG			0x020
#define   DRAY_AQ_CFG_LOG_DEPTH_MASK	DRAY_GENMASK(3, 0)
#define   DRAY_AQ_CFG_VECTOR_MASK	DRAY_GENMASK(15, 8)
#define   DRAY_AQ_LOG_DEPTH_MIN		2
#define   DRAY_AQ_LOG_DEPTH_MAX		10

/*
 * WO: admin submission doorbell. [15:0] is the new producer index
 * (free running, wraps at 2^16). Entries between the device's consumer
 * index and this value are owned by the device.
 */
#define DRAY_REG_AQ_SQ_PI		0x024
#define   DRAY_AQ_SQ_PI_MASK		DRAY_GENMASK(15, 0)

/* RO: [15:0] admin submission consumer index (free running). */
#define DRAY_REG_AQ_SQ_CI		0x028
#define   DRAY_AQ_SQ_CI_MASK		DRAY_GENMASK(15, 0)

/* RO: number of interrupt vectors the device has. */
#define DRAY_REG_NUM_VECTORS		0x030

/* RO: why DEV_STS.FATAL was set (enum dray_fatal_syndrome). */
#define DRAY_REG_FATAL_SYNDROME		0x034

/*
 * WO: event queue doorbell.
 * [15:0]  new consumer index of the EQ (free running)
 * [29:16] EQ number
 * [31]    ARM: raise the EQ's vector once the EQ holds an unconsumed entry
 * Writing the consumer index frees the entries before it; the device never
 * overwrites an unconsumed entry (it counts an overflow instead).
 */
#define DRAY_REG_EQ_DB			0x040
#define   DRAY_EQ_DB_CI_MASK		DRAY_GENMASK(15, 0)
#define   DRAY_EQ_DB_EQN_MASK		DRAY_GENMASK(29, 16)
#define   DRAY_EQ_DB_ARM		DRAY_GENMASK(31, 31)

/*
 * WO: queue engine wake-up. Any write wakes the engine serving the UAR
 * whose index is written ([15:0]); it then clears that UAR's NEED_WAKEUP
 * and polls every doorbell record of its queues again.
 */
#define DRAY_REG_ENGINE_KICK		0x044
#define   DRAY_ENGINE_KICK_UAR_MASK	DRAY_GENMASK(15, 0)

/*
 * RW (interface 1.1): engine polling. [20:0] how long, in microseconds,
 * the queue engine's thread keeps polling the doorbell records after its
 * last work before it sleeps, at most DRAY_ENGINE_POLL_MAX_US (a write of
 * more is ignored). While it polls, NEED_WAKEUP stays clear, so software
 * makes no wake-up call. Reset value DRAY_ENGINE_POLL_DEFAULT_US.
 */
#define DRAY_REG_ENGINE_POLL		0x048
#define   DRAY_ENGINE_POLL_US_MASK	DRAY_GENMASK(20, 0)
#define   DRAY_ENGINE_POLL_DEFAULT_US	5
#define   DRAY_ENGINE_POLL_MAX_US	1000000

/*
 * RW (interface 1.1): the engine thread's CPU. PIN set: the thread runs
 * only on the CPU numbered in [15:0], which must be online (a write naming
 * another is ignored); PIN clear (reset value): on any CPU.
 */
#define DRAY_REG_ENGINE_CPU		0x04c
#define   DRAY_ENGINE_CPU_PIN		DRAY_GENMASK(31, 31)
#define   DRAY_ENGINE_CPU_MASK		DRAY_GENMASK(15, 0)

enum dray_fatal_syndrome {
	DRAY_FATAL_NONE		= 0,
	DRAY_FATAL_AQ_DMA	= 1,	/* admin ring address not accessible */
	DRAY_FATAL_EQ_OVERFLOW	= 2,	/* no longer raised (EQ_OVERRUN) */
	DRAY_FATAL_AQ_DOORBELL	= 3,	/* AQ_SQ_PI more than a ring ahead */
};

#endif /* DRAY_REGS_H */
