/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small unit-test runner with TAP output: each test is a function that
 * returns 0 (pass) or not; CHECK() reports the failing expression.
 */
#ifndef XK_UNIT_H
#define XK_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Runs the tests named on the command line (every test when none is),
 * as TAP. */
static inline int unit_main(const char *suite, const struct unit_test *t,
			    int n, int argc, char **argv)
{
	int failed = 0, nr = 0, k = 0;
	bool *run = calloc((size_t)n, sizeof(bool));

	if (!run)
		return 1;
	for (int i = 0; i < n; i++) {
		run[i] = argc < 2;
		for (int a = 1; a < argc; a++)
			run[i] |= !strcmp(argv[a], t[i].name);
		nr += run[i];
	}
	if (!nr) {
		fprintf(stderr, "%s: no test of that name\n", suite);
		free(run);
		return 2;
	}
	printf("TAP version 13\n1..%d\n", nr);
	for (int i = 0; i < n; i++) {
		int r;

		if (!run[i])
			continue;
		r = t[i].fn();
		printf("%sok %d - %s: %s\n", r ? "not " : "", ++k, suite,
		       t[i].name);
		failed += !!r;
	}
	free(run);
	return failed ? 1 : 0;
}

#define UNIT_MAIN(suite, ...)                                               \
	int main(int argc, char **argv)                                     \
	{                                                                   \
		static const struct unit_test tests[] = { __VA_ARGS__ };    \
		return unit_main(suite, tests,                              \
				 sizeof(tests) / sizeof(tests[0]), argc, argv); \
	}
#define T(fn) { #fn, fn }

#endif
