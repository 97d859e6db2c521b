/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: what the analysis of one object reads
 * (its baseline, its builds, the bounds) and the table it appends spans and
 * notes to (table.c). The pipeline and every form use these; they call
 * neither.
 */
#ifndef XK_ANALYSIS_TABLE_H
#define XK_ANALYSIS_TABLE_H

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
	 * it state of the call (forms/heap_call.c); no data uses.
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
/* Appends a span of func (size bytes) of object to the table (zeroed,
 * named), in *sp: an object's use that no function of it names (an
 * object the catalog leaves out) or, through gen_add_span, a function's. */
int gen_append_span(struct xk_scope *t, const char *object, const char *func,
		    uint64_t func_size, struct xk_scope_span **sp);
/* Appends a span of function f to the table (zeroed, named), in *sp. */
int gen_add_span(struct xk_scope *t, const struct gen_input *in,
		 const struct xk_sym *f, struct xk_scope_span **sp);
/*
 * Appends a span of class data for the w-byte field at off of variable y:
 * expect its compiled-in bytes, a*N + b its fit (0 and the default's value
 * for one per value, whose points the caller adds).
 */
int gen_add_variable_span(struct xk_scope *t, const struct gen_input *in,
			  const struct xk_sym *y, uint64_t off, uint32_t w,
			  const uint8_t *expect, int64_t a, int64_t b,
			  struct xk_scope_span **out);
/* Whether span sp is one of function f of object (module:name or name). */
bool gen_span_of(const struct xk_scope_span *sp, const char *object,
		 const struct xk_sym *f);
/* Marks a span unsupported with the reason. */
void span_refuse(struct xk_scope_span *sp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
