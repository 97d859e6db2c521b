/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: one baseline object and its variants
 * analysed into spans of a scope table (spans.c), for gen.c.
 */
#ifndef XK_ANALYSIS_SPANS_H
#define XK_ANALYSIS_SPANS_H

#include "table.h"

/* Appends the spans found in one object (in->object) to the table. */
int gen_object(const struct gen_input *in, struct xk_scope *t);
/*
 * The parameters of the table's per-value spans in this object at
 * in->variant[0].value, from the build in->variant[0].path: rows[i] for
 * span i. -ENOTSUP naming the span when that build cannot give them.
 */
int gen_point_object(const struct gen_input *in, const struct xk_scope *t,
		     __s64 (*rows)[XK_MAX_PARAMS]);
#endif
