/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The few kernel types and helpers that the model's pure code
 * (drivers/dray/dev/dev_wire.[ch], dev_icrc.c, dev_qp_fsm.c) uses, for
 * user space.
 * Include before those files.
 */
#ifndef DRAY_KSHIM_H
#define DRAY_KSHIM_H

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef int32_t s32;

#define BIT(n)		(1UL << (n))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __packed	__attribute__((packed))

#define cpu_to_be16(x)	((__be16)htobe16(x))
#define cpu_to_be32(x)	((__be32)htobe32(x))
#define cpu_to_be64(x)	((__be64)htobe64(x))
#define be16_to_cpu(x)	be16toh((uint16_t)(x))
#define be32_to_cpu(x)	be32toh((uint32_t)(x))
#define be64_to_cpu(x)	be64toh((uint64_t)(x))
#define cpu_to_le32(x)	((__le32)htole32(x))
#define le32_to_cpu(x)	le32toh((uint32_t)(x))

/*
 * crc32_le() as lib/crc32.c defines it: CRC-32, polynomial 0xedb88320
 * (reflected), no pre- or post-inversion. Table driven, one byte a step.
 */
static inline u32 crc32_le(u32 crc, const unsigned char *p, size_t len)
{
	static u32 table[256];
	static bool ready;
	size_t i;

	if (!ready) {
		for (i = 0; i < 256; i++) {
			u32 c = i;
			int k;

			for (k = 0; k < 8; k++)
				c = (c >> 1) ^ (c & 1 ? 0xedb88320U : 0);
			table[i] = c;
		}
		ready = true;
	}
	for (i = 0; i < len; i++)
		crc = (crc >> 8) ^ table[(crc ^ p[i]) & 0xff];
	return crc;
}

#endif /* DRAY_KSHIM_H */
