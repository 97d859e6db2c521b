/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small unit-test runner with TAP output: each test is a function that
 * returns 0 (pass) or not; CHECK() reports the failing expression.
 */
#ifndef XK_UNIT_H
#define XK_UNIT_H

#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("#   %s:%d: check failed: %s\n", __FILE__,  \
			       __LINE__, #cond);                           \
			return 1;                                          \
		}                                                          \
	} while (0)

struct unit_test {
	const char *name;
	int (*fn)(void);
};

static inline int unit_main(const char *suite, const struct unit_test *t,
			    int n)
{
	int failed = 0;

	printf("TAP version 13\n1..%d\n", n);
	for (int i = 0; i < n; i++) {
		int r = t[i].fn();

		printf("%sok %d - %s: %s\n", r ? "not " : "", i + 1, suite,
		       t[i].name);
		failed += !!r;
	}
	return failed ? 1 : 0;
}

#define UNIT_MAIN(suite, ...)                                               \
	int main(void)                                                      \
	{                                                                   \
		static const struct unit_test tests[] = { __VA_ARGS__ };    \
		return unit_main(suite, tests,                              \
				 sizeof(tests) / sizeof(tests[0]));          \
	}
#define T(fn) { #fn, fn }

#endif
