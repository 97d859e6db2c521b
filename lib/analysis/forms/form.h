/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The span forms of the offline analysis: each one way in which code or
 * data that differs between the baseline and its builds becomes spans of
 * the table, notes, or a refusal naming why.
 *
 * The pipeline (spans.c: gen_object) first gives every form's object pass
 * the whole object and its builds (data and relocations that differ).
 * Then, for each function that differs (analyse_function), it disassembles
 * it and its builds, aligns them, finds the seeds (instructions whose
 * immediate moves with the value) and the other changed instructions, and
 * fills a struct form_fn. It asks the forms of gen_forms[], in that order,
 * to claim the function: the first that does gives its spans, and no later
 * one is asked; the register forms (seeds as affine, inverse, memory-input,
 * emulated or per-value spans; other changed regions as multiply spans)
 * claim what no more specific form did. Last, every form's finish runs on
 * the function's spans, whoever made them. Once every object had its first
 * analysis, gen.c runs every form's retry, then every form's check of the
 * finished table; xk set asks the form that owns a per-value span for its
 * parameters at a new value.
 *
 * A form file (forms/NAME.c) includes this header and the analysis's
 * lower layers (table.h, span.h, dataflow.h, relocs.h, redo.h, symexec.h,
 * the object model), never spans.h; what a form needs of the pipeline or
 * of another form comes through a callback of form_fn or form_table.
 * docs/hacking.md, "Adding a form", says how to add one.
 */
#ifndef XK_ANALYSIS_FORM_H
#define XK_ANALYSIS_FORM_H

#include "table.h"
#include "build.h"

struct func_ctx;

/* One function of the object as the forms see it; every array is indexed by
 * baseline instruction. */
struct form_fn {
	const struct gen_input *in;
	const struct xk_obj *obj;		/* the baseline object */
	const struct xk_sym *fb;		/* the baseline's function */
	const struct xk_func_code *base;	/* its code */
	const struct xk_func_code *var;		/* in each build: [GEN_NR_VARIANTS] */
	ssize_t *const *match;			/* [v][i]: var[v]'s insn, or -1 */
	const bool *leader;			/* starts a basic block */
	const bool *target;			/* some branch jumps here */
	const bool *seed;			/* its immediate moves with the value */
	const bool *other;			/* changes, but is no seed */
	int nr_seeds;
	bool other_diff;			/* some instruction is other */
	bool frame_moved;			/* its frame is sized by the value */
	int first_span;				/* its first span in the table */
	/* what a form that did not claim the function found, for the refusal
	 * of a later one to name ("" when nothing) */
	char found[240];
	/*
	 * The register forms on baseline instructions [start, end] as span sp
	 * (emulate: the emulated form as the last resort): 0 with sp
	 * supported or refused, -errno on failure (the span hook of the form
	 * that has one).
	 */
	int (*analyse_span)(struct form_fn *fn, size_t start, size_t end,
			    bool emulate, struct xk_scope_span *sp);
	/* The same function as the analysis of a span sees it (span.h), for
	 * the forms that analyse spans. */
	struct func_ctx *ctx;
};

/* One object and its builds, correlated (each symbol's twin_v[v]), as the
 * forms see it before its functions are analysed. */
struct form_obj {
	const struct gen_input *in;
	const struct xk_obj *base;
	const struct xk_obj *var;		/* [GEN_NR_VARIANTS] */
};

/* The whole constant once every object had its first analysis, as the
 * forms that build more values see it. */
struct form_table {
	const struct xk_kernel *k;
	const struct xk_constant *c;
	const struct xk_build_result *b;	/* the fit and check builds */
	/* The pipeline's analysis of one object (gen_object) into t. */
	int (*analyse_object)(const struct gen_input *in, struct xk_scope *t);
};

struct gen_form {
	const char *name;
	/* Object o, before its functions: appends the spans the form finds in
	 * it (0) or -errno. NULL: the form looks at functions only. */
	int (*object)(const struct form_obj *o, struct xk_scope *t);
	/*
	 * Function fn as this form: 1 when the form claims it, its spans,
	 * notes or refusal appended to t; 0 when fn is not of this form,
	 * nothing appended; -errno on failure. NULL: the form claims nothing.
	 */
	int (*claim)(struct form_fn *fn, struct xk_scope *t);
	/* Runs on every function once its spans are made (those from
	 * fn->first_span on); 0 or -errno. NULL: nothing to do. */
	int (*finish)(struct form_fn *fn, struct xk_scope *t);
	/* The form's analysis of baseline instructions [start, end] of fn as
	 * one span (form_fn.analyse_span); NULL: it has none. */
	int (*span)(struct form_fn *fn, size_t start, size_t end, bool emulate,
		    struct xk_scope_span *sp);
	/*
	 * For xk set and xk gen --prepare: whether span sp of table t is this
	 * form's per-value span, and its parameters at in->variant[0].value
	 * from that build (var, correlated with base): 0, -ENOTSUP with why,
	 * or -errno. NULL: the form has no per-value spans of its own.
	 */
	bool (*owns)(const struct xk_scope_span *sp);
	int (*point)(const struct gen_input *in, const struct xk_scope *t,
		     struct xk_obj *base, struct xk_obj *var,
		     const struct xk_scope_span *sp, __s64 *params, char *why,
		     size_t size);
	/*
	 * For xk set: the replays at in->variant[0].value of this form's
	 * replayed spans (emulate XK_EMULATE_REPLAY) in object in->object:
	 * out[i] for span i, got[i] set. -ENOTSUP naming the span when that
	 * build cannot give them. NULL: the form makes no replayed spans.
	 */
	int (*replays)(const struct gen_input *in, const struct xk_scope *t,
		       struct xk_scope_replay *out, bool *got);
	/*
	 * The table t of the constant once every object had its first
	 * analysis (xk gen): the functions it refused analysed again, from
	 * builds of values of the form's own; a function whose new spans are
	 * all supported takes them (gen_merge_redo), any other keeps its
	 * refusal, naming what the form found. 0 or -errno. NULL: none.
	 */
	int (*retry)(const struct form_table *ft, struct xk_scope *t);
	/*
	 * The finished table t, after every form's retry: the form's checks
	 * across the whole table (its spans' bounds, probes that collide),
	 * refusing spans or narrowing the bounds with a note. 0 or -errno.
	 */
	int (*check)(const struct form_table *ft, struct xk_scope *t);
};

/* The unit tests turn the replayed form off to see the first analysis's
 * refusals (a cap, a soundness rule) that it would otherwise replay. */
extern bool gen_replay_off;

/* The forms, in the order the pipeline asks them; NULL-terminated. */
extern const struct gen_form *const gen_forms[];

#endif
