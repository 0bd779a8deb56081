/* SPDX-License-Identifier: GPL-2.0-only */
/* A tiny test runner for dray's user-space unit tests. */
#ifndef DRAY_UNIT_H
#define DRAY_UNIT_H

#include <stdio.h>

struct unit_test {
	const char *name;
	void (*fn)(int *failed);
};

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "  %s:%d: check failed: %s: ",	\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			(*failed)++;					\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	CHECK((a) == (b), "%s = %lld, expected %lld", #a,		\
	      (long long)(a), (long long)(b))

#define UNIT_TEST(name) static void name(int *failed)

static inline int unit_run(const char *suite, const struct unit_test *tests,
			   unsigned int n)
{
	unsigned int i, pass = 0, fail = 0;

	for (i = 0; i < n; i++) {
		int failed = 0;

		tests[i].fn(&failed);
		printf("%s %u - %s.%s\n", failed ? "not ok" : "ok", i + 1,
		       suite, tests[i].name);
		if (failed)
			fail++;
		else
			pass++;
	}
	printf("# %s: %u passed, %u failed\n", suite, pass, fail);
	return fail ? 1 : 0;
}

#endif /* DRAY_UNIT_H */
