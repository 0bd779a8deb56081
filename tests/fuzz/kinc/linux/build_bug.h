/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz build: static_assert() with or without a message, as the kernel's. */
#ifndef DRAY_FUZZ_BUILD_BUG_H
#define DRAY_FUZZ_BUILD_BUG_H

#include <assert.h>		/* first: it defines static_assert too */
#undef static_assert
#define static_assert(expr, ...)	_Static_assert(expr, #expr)

#endif
