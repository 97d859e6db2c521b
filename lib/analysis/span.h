/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the offline analysis: the analysis of one span (span.c),
 * under the pipeline (spans.c) and the register forms (forms/register.c)
 * that use it: a function aligned with its builds, a span executed
 * symbolically, its locations chosen, its parameters fitted, its program
 * checked against every build by value, its probe placed.
 */
#ifndef XK_ANALYSIS_SPAN_H
#define XK_ANALYSIS_SPAN_H

#include "dataflow.h"
#include "symexec.h"
#include "table.h"

/*
 * A function's stack frame, when it is simple: one allocation of size
 * bytes in its entry block, after the pushes of the prologue (`sub $size,
 * %rsp`, or `add $-size, %rsp`), and no other write of rsp but the
 * matching frees, each followed in its block by the pops of an epilogue
 * (calls and returns aside), but for pushes of the body popped again in
 * their block. canary: the stack protector's slot (the offset from rsp
 * its %gs:0x28 copy is stored at), or -1.
 */
struct frame {
	bool simple;
	int64_t size;
	int64_t canary;
	bool *pushed;	/* instruction i runs with rsp not the body's */
};

/* One function of the baseline and its builds, aligned (span_align_variants). */
struct func_ctx {
	const struct xk_sym *fb;		/* baseline function */
	struct xk_func_code base;
	struct xk_func_code var[GEN_NR_VARIANTS];
	ssize_t *match[GEN_NR_VARIANTS];	/* base insn -> variant insn */
	bool *leader;				/* starts a basic block */
	bool *target;				/* some branch jumps here */
	bool *seed;
	bool *other;				/* changes, but is no seed */
	bool shape[GEN_NR_VARIANTS];		/* by shape: of the baseline's */
	struct frame frame, vframe[GEN_NR_VARIANTS];
	bool frame_moved;			/* a frame_pair was set aside */
	const struct gen_input *in;
	const struct xk_obj *obj;		/* the baseline object */
};

/* One span under analysis: its instructions, its form, its symbolic run. */
struct span_work {
	size_t start, end;		/* instruction indices, inclusive */
	bool inverse;			/* inputs overwritten: inverse form */
	bool emulate;			/* ... or emulated from its start */
	bool mem_inputs;		/* memory read in the span: inputs */
	bool per_value;			/* parameters not affine in N: per value */
	__s64 pv[GEN_NR_VARIANTS][XK_MAX_PARAMS];	/* ... in each variant */
	bool usable[GEN_NR_VARIANTS];	/* ... of the baseline's shape, checked */
	struct sx_state s;
	struct sx *loc_expr[XK_MAX_LOCS];
};

void span_free_ctx(struct func_ctx *c);
int span_mark_blocks(struct func_ctx *c);
int span_align_variants(struct func_ctx *c, struct xk_obj *vobj);
/* The immediate that moves with the constant: first imm, or a lea's disp. */
bool span_insn_value(const struct xk_insn *in, int64_t *v);
/*
 * Whether baseline instruction i is a jump-label site: objtool made it a
 * NOP (or left the jump) in the shipped object, while the variants, never
 * run through objtool, keep the compiler's jump. Never a difference the
 * constant made.
 */
bool span_objtool_site(const struct func_ctx *c, size_t i);
/* Runs [start, end] of code; the seeds' immediates become parameters. */
int span_run_stores(const struct xk_func_code *code, const bool *seed,
		    size_t start, size_t end, bool mem_inputs,
		    bool all_stores, struct sx_state *s);
int span_run(const struct xk_func_code *code, const bool *seed,
	     size_t start, size_t end, bool mem_inputs,
	     struct sx_state *s);
/*
 * Executes the span; while it reads an input that it also overwrites (or
 * flags set before it), grows it backwards inside its basic block.
 */
int span_grow(struct func_ctx *c, struct span_work *w,
	      struct xk_scope_span *sp);
int span_choose_locations(struct func_ctx *c, struct span_work *w,
			  struct xk_scope_span *sp);
/*
 * The emulated form, the last one tried (a span that overwrites its own
 * input, which no other form can correct at the probe point): the rewrite
 * probe sits on the span's first instruction, where every input is still
 * live, and the module writes everything the span leaves that the code
 * after it reads -- each register it writes that a path reads later
 * (df_reg_read: leaving the function counts), the flags when a path tests
 * them (df_flags_live), its one store -- then resumes after the span,
 * which does not run. So the span must be straight-line code no path
 * enters in its middle, whose every effect the model knows.
 */
int span_choose_emulated(struct func_ctx *c, struct span_work *w,
			 struct xk_scope_span *sp);
/* An immediate as a parameter of width bits: signed, like a fit's b. */
__s64 span_param_value(int64_t y, unsigned int width);
/*
 * Whether variant v's function is the baseline's in every instruction but
 * immediates, and those only inside spans (t's supported spans of this
 * function; at analysis, t NULL: the seeds) unless any_imm (the analysis
 * by shape, which makes every moving immediate a seed): a per-value
 * span's parameters from that build mean what the baseline's code would
 * compute with them only then. NULL, or at which instruction it differs
 * (a reason, in buf).
 */
const char *span_same_shape_in(const struct func_ctx *c, int v,
			       const struct xk_scope *t, bool any_imm,
			       char *buf, size_t size);
const char *span_same_shape(const struct func_ctx *c, int v, char *buf,
			    size_t size);
/*
 * After the checks: the default's parameters and those of every variant
 * that passed them, inside the bounds, become the span's points. At
 * least one other build must have passed: the form is then known to
 * describe the code, and any other value is built and checked the same
 * way when it is asked for (gen_point_object).
 */
int span_record_points(const struct func_ctx *c, const struct span_work *w,
		       struct xk_scope_span *sp, const char *why_not);
/*
 * The fit of every parameter (seed immediate) of the span; the per-value
 * form when some is not affine in N but keeps its instruction.
 */
int span_fit_params(struct func_ctx *c, struct span_work *w,
		    struct xk_scope_span *sp);
uint64_t span_rnd(uint64_t *st);
/*
 * The fitted programs against a variant compiled with another value, by
 * value: the variant's own span (between the instructions aligned with the
 * baseline's span start and probe point) is executed symbolically and both
 * are evaluated on the same register inputs.
 */
int span_check_variant(struct func_ctx *c, struct span_work *w,
		       struct xk_scope_span *sp, int v);
/*
 * The emulated form against variant v, by value: from the same registers
 * at the span's start, everything the code after the span reads must be
 * what the variant's own span leaves -- each register a path reads after
 * it (the programs' value where the span writes it, else the register
 * untouched), the flags when tested, the store (same address, value).
 */
int span_check_emulated(struct func_ctx *c, struct span_work *w,
			struct xk_scope_span *sp, int v);
int span_compile_locations(struct func_ctx *c, struct span_work *w,
			   struct xk_scope_span *sp);
/*
 * The probe point is the instruction after the span. When it is also a
 * branch target, a probe there would fire on paths that did not run the
 * span; when it is a jump-label site, kprobes refuses it (the kernel
 * patches those bytes). The rewrite probe then sits on the span's last
 * instruction and rewrites after it (post_len: a kprobe post handler),
 * which needs that instruction to fall through (no branch, call or
 * return) and every path through it to have run the whole span (no branch
 * target after the span's first instruction).
 */
int span_place_post(struct func_ctx *c, const struct span_work *w,
		    struct xk_scope_span *sp);
int span_place_probe(struct func_ctx *c, struct span_work *w,
		     struct xk_scope_span *sp);
/*
 * Where the span's immediates lie, for settling (xk settle rewrites them in
 * the live text): only when every seed of the span is a parameter whose
 * instruction capstone encodes with an immediate field, each field obeys
 * the module's rule, and the default's encoding is the compiled bytes.
 * Otherwise the span has none and always keeps its probe; never a refusal.
 */
int span_locate_imms(const struct func_ctx *c, const struct span_work *w,
		     struct xk_scope_span *sp);
/*
 * The rules the module applies to a span (xk/abi): a span that breaks one
 * is refused here, with the rule, never written into a table.
 */
int span_obey_rules(struct xk_scope_span *sp);

#endif
