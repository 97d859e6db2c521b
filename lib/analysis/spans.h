/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: one baseline object and its variants
 * analysed into spans of a scope table (spans.c), for gen.c.
 */
#ifndef XK_ANALYSIS_SPANS_H
#define XK_ANALYSIS_SPANS_H

#include "object.h"
#include "xk/scope.h"

struct gen_variant {
	int64_t value;
	char path[XK_PATH_MAX];
};

struct gen_input {
	const char *object;		/* e.g. block/blk-mq.o */
	const char *module;		/* its module (tcp_bbr), or NULL: vmlinux */
	char base_path[XK_PATH_MAX];
	int64_t def;			/* the value the baseline was built with */
	int64_t min, max;		/* the bounds (a per-value span's points) */
	struct gen_variant variant[GEN_NR_VARIANTS];	/* fit, fit, check */
	/*
	 * By shape (gen_by_shape): the variants are values of the default's
	 * kind (2N, 4N, N/2); every span is per value, its points taken from
	 * the builds whose function has the baseline's shape. Only the
	 * functions of this object with a refused span in redo are analysed.
	 */
	bool by_shape;
	const struct xk_scope *redo;
};

/* Appends the spans found in one object to the table. */
int gen_object(const struct gen_input *in, struct xk_scope *t);
/*
 * The parameters of the table's per-value spans in this object at
 * in->variant[0].value, from the build in->variant[0].path: rows[i] for
 * span i. -ENOTSUP naming the span when that build cannot give them.
 */
int gen_point_object(const struct gen_input *in, const struct xk_scope *t,
		     __s64 (*rows)[XK_MAX_PARAMS]);

#endif
