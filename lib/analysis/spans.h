/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: one baseline object and its variants
 * analysed into spans of a scope table (spans.c), for gen.c.
 */
#ifndef XK_ANALYSIS_SPANS_H
#define XK_ANALYSIS_SPANS_H

#include "table.h"

/*
 * The span of one load of a read-only variable the constant initialises
 * (the variables form's readers, through form_obj.reader_span): see
 * form.h.
 */
int gen_reader_span(const struct gen_input *in, const struct xk_obj *obj,
		    const struct xk_sym *f, uint64_t at, const int64_t fit[2],
		    int64_t y0, const char *object, struct xk_scope *t);
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
