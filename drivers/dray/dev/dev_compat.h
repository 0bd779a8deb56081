/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dray: kernel API differences that the device model absorbs, between the
 * first target (6.1 LTS) and newer kernels (6.12 and later). The model uses
 * only core, networking and memory APIs; the driver's differences are in
 * ../compat.h. Kbuild detects each feature by symbol, not by version.
 */
#ifndef DRAY_DEV_COMPAT_H
#define DRAY_DEV_COMPAT_H

/* 6.12 moved the unaligned accessors from <asm/> to <linux/unaligned.h>. */
#ifdef DRAY_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#endif /* DRAY_DEV_COMPAT_H */
