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
	const char *ko;			/* ... its path (net/ipv4/tcp_bbr.ko) */
	const struct xk_kernel *kernel;	/* the target (its shipped modules) */
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
	/*
	 * Only this function of the object (its name in the object), its
	 * allocators' size arguments taken as any call's and every span of
	 * it state of the call (heap_in_one_call in gen.c); no data uses.
	 */
	const char *heap_call;
};

/*
 * The refusals of a span whose check build has other code there: the span
 * not found (another shape), or found but reading other registers or
 * memory than the baseline's (another register allocation). xk gen
 * --verify counts such a span as not compared, not as a disagreement.
 */
#define WHY_CHECK_SHAPE "the span cannot be found in that build"
#define WHY_CHECK_INPUTS "that build's span reads other inputs"

/* The baseline's function of a span, by its name (less module:) and size,
 * or NULL. */
struct xk_sym *gen_span_function(struct xk_obj *o, const struct xk_scope_span *sp);
/* Whether f is code the running kernel does not keep (__init, __exit). */
bool gen_init_code(const struct xk_sym *f);
/* Appends a note to the table (once; -E2BIG past XK_SCOPE_MAX_NOTES). */
int gen_add_note(struct xk_scope *t, const char *text);
/* Appends a span of function f to the table (zeroed, named), in *sp. */
int gen_add_span(struct xk_scope *t, const struct gen_input *in,
		 const struct xk_sym *f, struct xk_scope_span **sp);
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
/* Appends the spans found in one object to the table. */
int gen_reader_span(const struct gen_input *in, const struct xk_obj *obj,
		    const struct xk_sym *f, uint64_t at, const int64_t fit[2],
		    int64_t y0, const char *object, struct xk_scope *t);
int gen_object(const struct gen_input *in, struct xk_scope *t);
/*
 * The uses no instruction byte shows (datadiff.c): a data object whose size
 * or bytes, or a function or object whose relocations, differ in a build
 * of in (var: its GEN_NR_VARIANTS objects, functions correlated) become
 * refused spans of t, each naming what differs.
 */
int gen_data_uses(const struct gen_input *in, const struct xk_obj *base,
		  const struct xk_obj *var, struct xk_scope *t);
/* Whether instructions a of fa and b of fb (the same text) relocate the
 * same fields to the same places; else why (datadiff.c). */
bool gen_same_relocs(const struct xk_sym *fa, const struct xk_insn *a,
		     const struct xk_sym *fb, const struct xk_insn *b,
		     char *why, size_t size);
/* A branch of f that leaves it but for a return or a tail call (a .cold
 * part, an indirect or conditional jump out), or NULL (replay.c). */
const char *gen_unfollowable_branch(const struct xk_sym *f,
				    const struct xk_func_code *code, char *buf,
				    size_t size);
/*
 * The parameters of the table's per-value spans in this object at
 * in->variant[0].value, from the build in->variant[0].path: rows[i] for
 * span i. -ENOTSUP naming the span when that build cannot give them.
 */
int gen_point_object(const struct gen_input *in, const struct xk_scope *t,
		     __s64 (*rows)[XK_MAX_PARAMS]);
/*
 * Appends a span of class data for the w-byte field at off of variable y
 * (datadiff.c): expect its compiled-in bytes, a*N + b its fit (0 and the
 * default's value for one per value, whose points the caller adds).
 */
int gen_add_variable_span(struct xk_scope *t, const struct gen_input *in,
			  const struct xk_sym *y, uint64_t off, uint32_t w,
			  const uint8_t *expect, int64_t a, int64_t b,
			  struct xk_scope_span **out);
/* The named function or object of sec's object that holds byte at of sec,
 * or NULL (datadiff.c). */
const struct xk_sym *gen_holder_in(const struct xk_sec *sec, int64_t at);
/*
 * Whether code of object o but function skip (NULL: none) stores to bytes
 * [from, to) of data object y or takes an address in them, the variable's
 * own interface (a setter, a sysctl handler) aside; why names the first
 * (datadiff.c).
 */
int gen_code_writes(const struct xk_obj *o, const struct xk_sym *y,
		    uint64_t from, uint64_t to, const struct xk_sym *skip,
		    char *why, size_t size, bool *writes);
/*
 * Variables boot code derives from the constant (bootdata.c): function fb
 * (boot-time code of the baseline, its code base; var[v] its code in each
 * build) stores, in the straight-line run it starts with, values that
 * differ between the builds to static variables, and the constant reaches
 * nothing else of it. Each variable becomes a data span with the value
 * each build's run stores (per value: points); 1 with them added, 0 with
 * why when fb is no such code, or -errno.
 */
int gen_boot_data(const struct gen_input *in, const struct xk_sym *fb,
		  const struct xk_func_code *base,
		  const struct xk_func_code *var, struct xk_scope *t,
		  char *why, size_t size);
/*
 * The value a derived variable's span sp (gen_boot_data) holds in the build
 * of object var: the run of its boot code there, checked against the same
 * function of the baseline base as xk gen checks it, every other store of
 * it the baseline's or a per-value variable of t; -ENOTSUP with why.
 */
int gen_boot_data_point(const struct gen_input *in, const struct xk_scope *t,
			struct xk_obj *base, struct xk_obj *var,
			const struct xk_scope_span *sp, __s64 *value, char *why,
			size_t size);

#endif
