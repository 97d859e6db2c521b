/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: one baseline object and its variants
 * analysed into spans of a scope table (spans.c), for gen.c.
 */
#ifndef XK_ANALYSIS_SPANS_H
#define XK_ANALYSIS_SPANS_H

#include "table.h"

/* The unit tests turn the replayed form off to see the first analysis's
 * refusals (a cap, a soundness rule) that it would otherwise replay. */
extern bool gen_replay_off;
/*
 * The replayed form of function fb (replay.c): its builds with values[v]
 * (fv[v] in vobj[v], NULL when absent) differ from the baseline only in straight-line
 * regions: one span per region, replayed at every value whose regions all
 * replay (one at least). Appends those spans to t, or one refused span
 * naming why.
 */
int replay_function(const struct gen_input *in, const struct xk_obj *obj,
		    const struct xk_sym *fb, int nr_values,
		    const struct xk_obj *const *vobj,
		    const struct xk_sym *const *fv, const int64_t *values,
		    struct xk_scope *t);
/*
 * The replays at in->variant[0].value of the table's replayed spans in
 * this object: out[i] for span i, got[i] set. -ENOTSUP naming the span
 * when that build differs elsewhere or a region does not replay.
 */
int gen_replay_point_object(const struct gen_input *in, const struct xk_scope *t,
			    struct xk_scope_replay *out, bool *got);
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
