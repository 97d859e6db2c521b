/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For unit tests that analyse the fetched stock kernel (test_gen, test_glue):
 * the kernel from the cache, and a constant's scope table made from it.
 */
#ifndef XK_UNIT_KERNEL_H
#define XK_UNIT_KERNEL_H

#include <stdio.h>
#include <stdlib.h>

#include "xk/scope.h"
#include "xk/xk.h"

#define GOLDEN "tests/fixtures/golden/golden.conf"
#define STOCK "catalog/constants.conf"

static struct xk_kernel kernel;

/* xk build + xk gen of a catalog's constant; the cause printed on failure. */
static inline int gen(const char *catalog, const char *name, struct xk_scope *t)
{
	struct xk_build_result *b = calloc(1, sizeof(*b));
	struct xk_constant c;
	int err;

	if (!b)
		return -ENOMEM;
	err = xk_constant_resolve(catalog, name, &c) ?: xk_build(&kernel, &c, NULL, b) ?:
	      xk_gen(&kernel, &c, b, t);
	if (err)
		printf("#   %s: %s\n", name, xk_last_error());
	free(b);
	return err;
}

/* The prepared kernel in the cache (never fetched here), or a TAP bail-out. */
static inline int find_kernel(void)
{
	XK_OPTS(xk_kernel_opts, o, .offline = true);

	if (xk_kernel_find(&o, &kernel) || !kernel.source_prepared) {
		printf("Bail out! no prepared kernel in the cache: %s\n",
		       xk_last_error());
		return -1;
	}
	return 0;
}

#endif
