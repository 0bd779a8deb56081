/* SPDX-License-Identifier: GPL-2.0-only */
/* The fuzz targets' invariant check: abort(), which libFuzzer reports. */
#ifndef DRAY_FUZZ_ASSERT_H
#define DRAY_FUZZ_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif /* DRAY_FUZZ_ASSERT_H */
