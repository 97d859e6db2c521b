/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: what the analyses after the first one
 * share (redo.c): which objects they build, and merging their table into
 * the first.
 */
#ifndef XK_ANALYSIS_REDO_H
#define XK_ANALYSIS_REDO_H

#include "build.h"
#include "table.h"

/* Whether word is one of the space-separated words of list. */
bool gen_has_word(const char *list, const char *word);
/* The module of a module's object (net/ipv4/tcp_bbr.ko: tcp_bbr, as
 * kallsyms writes it: - as _), or NULL for vmlinux. */
const char *gen_module_name(const char *ko, char *buf, size_t size);
/* Whether two spans are of one function of one object. */
bool gen_same_function(const struct xk_scope_span *a,
		       const struct xk_scope_span *b);
/* The index of object in build b, or -1. */
int gen_object_index(const struct xk_build_result *b, const char *object);
/* Span i of t and the next ones of the same function: how many. */
int gen_function_spans(const struct xk_scope *t, int i);
/*
 * Merges a later analysis (redo's spans, function by function) into t: a
 * function all of whose spans redo supports takes redo's spans in place
 * of its own; any other keeps its own, the first refusal naming what the
 * later analysis (what) found. The spans not taken are freed.
 */
int gen_merge_redo(struct xk_scope *t, struct xk_scope *redo,
		   const char *what);
/* A later analysis could not run: every function's first refusal says
 * why. */
void gen_annotate_refusals(struct xk_scope *t, const char *what,
			   const char *why);
/*
 * The values of the default's kind the analysis by shape builds: 2N, 4N
 * and N/2 (8N for an odd default) in fam[0..2]. false when there are none
 * (a default below 2 or past 2^40).
 */
bool gen_shape_family(long long def, long long *fam);
/*
 * The objects with a refused span in t, into only->objects (space
 * separated, each once): what a later analysis (who) builds. A list too
 * long for the field is refused, naming who.
 */
int gen_refused_objects(const struct xk_constant *c, const struct xk_scope *t,
			struct xk_constant *only, const char *who);
/*
 * The input of object j of build b (the baseline and its two fit builds)
 * whose check build is the one at path, built with value: what an analysis
 * checked at another value reads (the call-state form's check below the
 * default, xk gen --verify); module holds its module's name.
 */
void gen_input_checked(const struct xk_kernel *k, const struct xk_constant *c,
		       const struct xk_build_result *b, int j, long long value,
		       const char *path, struct gen_input *in, char *module,
		       size_t size);
/* The points and replays of t's spans outside its bounds go. */
void gen_drop_outside_bounds(struct xk_scope *t);

#endif
