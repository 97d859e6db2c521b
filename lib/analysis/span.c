// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: one span, from seeds to a checked program.
 *
 *   span_align_variants()   the function's instructions against each build's
 *   span_grow()             symbolic execution; grows the span backwards until
 *                           every input it reads is still live at the probe
 *   span_choose_locations() register, flags or memory that carry the value
 *   span_fit_params()       immediate = a*N + b from the two fit builds, or
 *                           per value (span_record_points)
 *   span_check_variant()    the fitted program against a third build, by value
 *                           (span_check_emulated: an emulated span's)
 *   span_place_probe()      probe point, expected bytes, jump-optimizable?
 *                           (span_place_post(): the span's last instruction,
 *                           when the probe point is a branch target)
 *   span_locate_imms()      where the immediates lie (for settling)
 *   span_obey_rules()       the rules the module applies (xk/abi)
 *
 * Which spans to analyse, and in which form, is the register forms'
 * business (forms/register.c); the safe span is dataflow.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "relocs.h"
#include "span.h"

void span_free_ctx(struct func_ctx *c)
{
	free(c->frame.pushed);
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		free(c->vframe[v].pushed);
	xk_func_code_free(&c->base);
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		xk_func_code_free(&c->var[v]);
		free(c->match[v]);
	}
	free(c->leader);
	free(c->target);
	free(c->seed);
	free(c->other);
}

int span_mark_blocks(struct func_ctx *c)
{
	size_t n = c->base.nr;

	c->leader = calloc(n + 1, sizeof(bool));
	c->target = calloc(n + 1, sizeof(bool));
	c->seed = calloc(n + 1, sizeof(bool));
	c->other = calloc(n + 1, sizeof(bool));
	if (!c->leader || !c->target || !c->seed || !c->other)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	c->leader[0] = true;
	for (size_t i = 0; i < n; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		if (in->target >= 0 && !in->is_call) {
			ssize_t t = xk_code_index(&c->base, in->target);

			if (t >= 0)
				c->leader[t] = c->target[t] = true;
		}
		if (in->fixup >= 0) {	/* a fault resumes there */
			ssize_t t = xk_code_index(&c->base, (uint64_t)in->fixup);

			if (t >= 0)
				c->leader[t] = c->target[t] = true;
		}
		if ((in->is_branch || in->is_ret || in->is_call) && i + 1 < n)
			c->leader[i + 1] = true;
	}
	return 0;
}

int span_align_variants(struct func_ctx *c, struct xk_obj *vobj)
{
	int err = 0;

	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
		const struct xk_sym *fv = c->fb->twin_v[v];

		if (!fv)
			return xk_err(-ENOENT, "%s: no twin in variant %d",
				      c->fb->name, v);
		err = xk_disasm_func(fv, &c->var[v]);
		c->match[v] = calloc(c->base.nr, sizeof(ssize_t));
		if (!err && !c->match[v])
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		err = err ?: xk_align(&c->base, &c->var[v], c->match[v]);
	}
	(void)vobj;
	return err;
}

/* The immediate that moves with the constant: first imm, or a lea's disp. */
bool span_insn_value(const struct xk_insn *in, int64_t *v)
{
	if (in->has_imm) {
		*v = in->imm;
		return true;
	}
	if (in->id == X86_INS_LEA && in->x86.op_count == 2 &&
	    in->x86.operands[1].mem.base != X86_REG_RIP) {
		*v = in->x86.operands[1].mem.disp;
		return true;
	}
	return false;
}

/*
 * Whether baseline instruction i is a jump-label site: objtool made it a
 * NOP (or left the jump) in the shipped object, while the variants, never
 * run through objtool, keep the compiler's jump. Never a difference the
 * constant made.
 */
bool span_objtool_site(const struct func_ctx *c, size_t i)
{
	return xk_jump_label_at(c->obj, c->fb, c->base.insn[i].off);
}

/*
 * The arithmetic flags the function's code can test: parity and the
 * adjust flag only where an instruction reads them (jp, setp, cmovp,
 * lahf, pushf), which compiled C does for floating point alone. A flags
 * location is checked on these; the module writes all six regardless.
 */
static uint64_t flags_tested(const struct func_ctx *c)
{
	for (size_t i = 0; i < c->base.nr; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		switch (in->id) {
		case X86_INS_JP: case X86_INS_JNP: case X86_INS_SETP:
		case X86_INS_SETNP: case X86_INS_CMOVP: case X86_INS_CMOVNP:
		case X86_INS_LAHF: case X86_INS_PUSHF: case X86_INS_PUSHFQ:
			return XK_EFLAGS_ARITH;
		default:
			break;
		}
	}
	return XK_EFLAGS_ARITH & ~(uint64_t)(XK_EFLAGS_PF | XK_EFLAGS_AF);
}

/* Runs [start, end] of code; the seeds' immediates become parameters. */
int span_run_stores(const struct xk_func_code *code, const bool *seed,
		    size_t start, size_t end, bool mem_inputs,
		    bool all_stores, struct sx_state *s)
{
	int err = sx_init(s);

	s->no_mem_inputs = !mem_inputs;
	s->all_stores = all_stores;

	for (size_t i = start; i <= end && !err; i++)
		err = sx_step(s, &code->insn[i], seed && seed[i]);
	return err;
}

int span_run(const struct xk_func_code *code, const bool *seed,
	     size_t start, size_t end, bool mem_inputs,
	     struct sx_state *s)
{
	int err = sx_init(s);

	s->no_mem_inputs = !mem_inputs;

	for (size_t i = start; i <= end && !err; i++)
		err = sx_step(s, &code->insn[i], seed && seed[i]);
	return err;
}

/* Inputs of the span that the span itself overwrites are gone at the probe. */
static bool inputs_live(const struct sx_state *s)
{
	if (s->flags_read_first)
		return false;
	for (int r = 0; r < XK_NR_REGS; r++)
		if (s->reg_read_first[r] && s->reg_written[r])
			return false;
	return true;
}

/*
 * Executes the span; while it reads an input that it also overwrites (or
 * flags set before it), grows it backwards inside its basic block.
 */
int span_grow(struct func_ctx *c, struct span_work *w,
	      struct xk_scope_span *sp)
{
	for (int tries = 0; tries < 16; tries++) {
		int err = span_run(&c->base, c->seed, w->start, w->end,
				   w->mem_inputs, &w->s);

		if (err == -ENOTSUP) {
			span_refuse(sp, "symbolic execution: %s", w->s.why);
			if (!w->s.flags_read_first)
				return -ENOTSUP;
		} else if (err) {
			return err;
		} else if (inputs_live(&w->s)) {
			return 0;
		}
		if (c->leader[w->start] || w->start == 0) {
			if (!sp->why[0])
				span_refuse(sp, "an input of the span is overwritten "
					     "inside it and is set before its "
					     "basic block");
			return -ENOTSUP;
		}
		sx_free(&w->s);
		w->start--;
		sp->why[0] = '\0';
	}
	span_refuse(sp, "the span would grow too long");
	return -ENOTSUP;
}

/*
 * The span's store as its first location (choose_locations and
 * choose_emulated): refused when the store's base changes in the span.
 */
static int add_store_location(struct span_work *w, struct xk_scope_span *sp)
{
	struct sx_state *s = &w->s;
	struct xk_scope_loc *l = &sp->locs[sp->nr_locs];

	if (s->st_base < XK_NR_REGS && s->reg_written[s->st_base]) {
		span_refuse(sp, "the store's base register changes in the span");
		return -ENOTSUP;
	}
	l->kind = XK_LOC_MEM;
	l->base = s->st_base;
	l->disp = s->st_disp;
	l->rip_end = s->st_rip_end;
	l->width = s->st_width;
	w->loc_expr[sp->nr_locs++] = s->st_val;
	return 0;
}

/* A register or the flags as the next location; refused past the limit. */
static int add_location(struct span_work *w, struct xk_scope_span *sp,
			int kind, int width, struct sx *e)
{
	if (sp->nr_locs == XK_MAX_LOCS) {
		if (w->emulate)
			span_refuse(sp, "emulated form: more than %d locations are "
				    "read after the span", XK_MAX_LOCS);
		else
			span_refuse(sp, "more than %d locations carry the value",
				    XK_MAX_LOCS);
		return -ENOTSUP;
	}
	sp->locs[sp->nr_locs].kind = kind;
	sp->locs[sp->nr_locs].width = width;
	w->loc_expr[sp->nr_locs++] = e;
	return 0;
}

/* The span's class from its locations. */
static void classify(struct xk_scope_span *sp)
{
	if (sp->nr_locs == 2)
		sp->cls = XK_SPAN_DUAL;
	else if (sp->locs[0].kind == XK_LOC_MEM)
		sp->cls = XK_SPAN_MEMORY;
	else if (sp->locs[0].kind == XK_LOC_FLAGS)
		sp->cls = XK_SPAN_FLAGS;
	else
		sp->cls = XK_SPAN_REGISTER;
}

int span_choose_locations(struct func_ctx *c, struct span_work *w,
			  struct xk_scope_span *sp)
{
	struct sx_state *s = &w->s;
	size_t next = w->end + 1;
	struct sx *fl = sx_flags(s);

	sp->nr_locs = 0;
	if (s->has_store && add_store_location(w, sp))
		return -ENOTSUP;
	for (int r = 0; r < XK_NR_REGS; r++) {
		if (!s->reg_written[r] || !sx_uses_params(s->reg[r]))
			continue;
		if (r == XK_RSP) {
			span_refuse(sp, "the value moves the stack pointer (an array "
					"on the stack sized by it): the frame cannot be "
					"rewritten");
			return -ENOTSUP;
		}
		if (add_location(w, sp, r, df_used_width(&c->base, w->end + 1, r),
				 s->reg[r]))
			return -ENOTSUP;
	}
	/*
	 * Flags computed from the constant that some path tests before they
	 * are set again (not only the next instruction: a jcc after a mov
	 * tests them as well): rewritten where the model knows them (after a
	 * compare, a subtraction, a logic operation), refused by name where
	 * it does not (an add, a shift, a multiply, inc, dec): a later
	 * branch would otherwise test the compiled-in value's flags.
	 */
	if (sx_flags_derived(s) && df_flags_live(&c->base, next)) {
		if (!fl || !sx_uses_params(fl)) {
			span_refuse(sp, "the flags the span's last flag-setting "
				    "instruction leaves depend on the constant and "
				    "are tested after it, and the model does not "
				    "know them (an add, a shift, a multiply, inc "
				    "or dec)");
			return -ENOTSUP;
		}
		if (add_location(w, sp, XK_LOC_FLAGS, 64, fl))
			return -ENOTSUP;
	}
	if (!sp->nr_locs) {
		span_refuse(sp, "the span leaves no live register, flag or store "
			     "derived from the constant");
		return -ENOTSUP;
	}
	classify(sp);
	return 0;
}

/* Instructions of [start, end] that write memory. */
static int nr_stores(const struct func_ctx *c, size_t start, size_t end)
{
	int nr = 0;

	for (size_t i = start; i <= end; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		for (int o = 0; o < in->x86.op_count; o++)
			if (in->x86.operands[o].type == X86_OP_MEM &&
			    (in->x86.operands[o].access & CS_AC_WRITE)) {
				nr++;
				break;
			}
	}
	return nr;
}

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
			 struct xk_scope_span *sp)
{
	struct sx_state *s = &w->s;
	size_t next = w->end + 1;
	struct sx *fl = sx_flags(s);
	bool derived = false;

	for (size_t i = w->start; i <= w->end; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		if (in->is_branch || in->is_call || in->is_ret) {
			span_refuse(sp, "emulated form: +0x%lx %s leaves the span",
				    (unsigned long)in->off, in->text);
			return -ENOTSUP;
		}
		if (i > w->start && c->target[i]) {
			span_refuse(sp, "emulated form: +0x%lx inside the span is a "
				    "branch target", (unsigned long)in->off);
			return -ENOTSUP;
		}
	}
	if (next >= c->base.nr) {
		span_refuse(sp, "the span ends the function");
		return -ENOTSUP;
	}
	if (s->flags_read_first) {
		span_refuse(sp, "emulated form: the span tests flags set before it");
		return -ENOTSUP;
	}
	if (nr_stores(c, w->start, w->end) > (s->has_store ? 1 : 0)) {
		span_refuse(sp, "emulated form: the span writes memory the model "
			    "does not name");
		return -ENOTSUP;
	}
	sp->nr_locs = 0;
	if (s->has_store && add_store_location(w, sp))
		return -ENOTSUP;
	for (int r = 0; r < XK_NR_REGS; r++) {
		int width;

		if (!s->reg_written[r])
			continue;
		if (r == XK_RSP) {
			span_refuse(sp, "emulated form: the span moves the stack pointer");
			return -ENOTSUP;
		}
		width = df_reg_read(&c->base, next, r);
		if (width && add_location(w, sp, r, width, s->reg[r]))
			return -ENOTSUP;
	}
	if (!s->fl_from_start && df_flags_live(&c->base, next)) {
		if (!fl) {
			span_refuse(sp, "emulated form: the flags the span leaves are "
				    "tested after it, and the model does not know them");
			return -ENOTSUP;
		}
		if (add_location(w, sp, XK_LOC_FLAGS, 64, fl))
			return -ENOTSUP;
	}
	for (int l = 0; l < sp->nr_locs; l++)
		derived |= sx_uses_params(w->loc_expr[l]);
	if (!derived) {
		span_refuse(sp, "the span leaves no live register, flag or store "
			     "derived from the constant");
		return -ENOTSUP;
	}
	classify(sp);
	return 0;
}

/*
 * immediate = a*N + b for baseline instruction i (whose immediate is y0 at
 * the default), from the two fit variants: the first gives a, the second
 * must agree at the immediate's width. The one fit of the analysis.
 * -ENOENT (with the reason) when the instruction changes form in a fit
 * variant, -ENOTSUP when its immediate is not affine in N.
 */
static int fit_immediate(const struct func_ctx *c, size_t i, int64_t y0,
			 unsigned int width, int64_t fit[2],
			 struct xk_scope_span *sp)
{
	const struct gen_input *in = c->in;
	const struct xk_insn *bi = &c->base.insn[i];
	int64_t y[GEN_FIT_VARIANTS], x0 = in->def, dx, dy, a, b;
	uint64_t m = xk_mask(width ? width : 64);

	for (int v = 0; v < GEN_FIT_VARIANTS; v++) {
		ssize_t j = c->match[v][i];

		if (j < 0 || !span_insn_value(&c->var[v].insn[j], &y[v])) {
			span_refuse(sp, "+0x%lx %s: the instruction changes shape with "
				     "N=%lld; no linear fit", (unsigned long)bi->off,
				 bi->text, (long long)in->variant[v].value);
			return -ENOENT;
		}
	}
	dx = in->variant[0].value - x0;
	dy = y[0] - y0;
	if (!dx || dy % dx) {
		span_refuse(sp, "+0x%lx %s: immediate %lld -> %lld for N %lld -> %lld is "
			     "not a*N+b with integer a: not affine in N (e.g. a "
			     "division turned into a multiply)",
			 (unsigned long)bi->off, bi->text, (long long)y0,
			 (long long)y[0], (long long)x0,
			 (long long)in->variant[0].value);
		return -ENOTSUP;
	}
	a = dy / dx;
	b = y0 - a * x0;
	for (int v = 1; v < GEN_FIT_VARIANTS; v++) {
		if (((uint64_t)(a * in->variant[v].value + b) & m) !=
		    ((uint64_t)y[v] & m)) {
			span_refuse(sp, "+0x%lx %s: not affine in N (%lld at N=%lld, the "
				     "fit says %lld): e.g. a division turned into a "
				     "multiply", (unsigned long)bi->off, bi->text,
				 (long long)y[v], (long long)in->variant[v].value,
				 (long long)(a * in->variant[v].value + b));
			return -ENOTSUP;
		}
	}
	/* b as the signed immediate of its width (and eax, -N: b = 0) */
	if (width && width < 64)
		b = xk_signed((uint64_t)b, width);
	fit[0] = a;
	fit[1] = b;
	return 0;
}

/* An immediate as a parameter of width bits: signed, like a fit's b. */
__s64 span_param_value(int64_t y, unsigned int width)
{
	return width && width < 64 ? xk_signed((uint64_t)y, width) : y;
}

/*
 * Whether two instructions are one form: the same operation on the same
 * registers and memory operands, whatever their immediates (and a lea's
 * displacement). What a per-value span allows a build with another value
 * to change, and nothing else.
 */
static bool same_form(const struct xk_insn *a, const struct xk_insn *b)
{
	if (!strcmp(a->norm, b->norm))
		return true;
	if (a->id != b->id || a->x86.op_count != b->x86.op_count)
		return false;
	for (int o = 0; o < a->x86.op_count; o++) {
		const cs_x86_op *x = &a->x86.operands[o], *y = &b->x86.operands[o];

		if (x->type != y->type || x->size != y->size)
			return false;
		if (x->type == X86_OP_REG && x->reg != y->reg)
			return false;
		if (x->type == X86_OP_MEM &&
		    (x->mem.segment != y->mem.segment || x->mem.base != y->mem.base ||
		     x->mem.index != y->mem.index || x->mem.scale != y->mem.scale ||
		     (x->mem.disp != y->mem.disp && a->id != X86_INS_LEA)))
			return false;
	}
	return true;
}

/* Whether instruction i of the baseline lies inside a supported span of t
 * in the function of c (with NULL: whether it is a seed). */
static bool in_some_span(const struct func_ctx *c, const struct xk_scope *t,
			 size_t i)
{
	uint64_t off = c->base.insn[i].off;

	if (!t)
		return c->seed[i];
	for (int k = 0; k < t->nr_spans; k++) {
		const struct xk_scope_span *sp = &t->spans[k];

		if (sp->cls != XK_SPAN_UNSUPPORTED && gen_span_of(sp, c->in->object, c->fb) &&
		    off >= sp->start && off < sp->probe)
			return true;
	}
	return false;
}

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
			       char *buf, size_t size)
{
	const struct xk_func_code *vc = &c->var[v];
	size_t vnr = vc->nr;

	/* the variant, never run through objtool, keeps the next function's
	 * 16-byte prefix of NOPs inside this one */
	while (vnr > c->base.nr && vc->insn[vnr - 1].id == X86_INS_NOP)
		vnr--;
	if (vnr != c->base.nr) {
		snprintf(buf, size, "the build with N=%lld has %zu instructions "
			 "where the baseline has %zu",
			 (long long)c->in->variant[v].value, vc->nr, c->base.nr);
		return buf;
	}
	for (size_t i = 0; i < c->base.nr; i++) {
		ssize_t j = c->match[v][i];
		int64_t yb, yv;

		if (span_objtool_site(c, i))
			continue;
		if (j < 0 || !same_form(&c->base.insn[i], &vc->insn[j])) {
			snprintf(buf, size, "the build with N=%lld has %.60s at "
				 "+0x%lx where the baseline has %.60s",
				 (long long)c->in->variant[v].value,
				 j < 0 ? "no instruction" : vc->insn[j].text,
				 (unsigned long)c->base.insn[i].off,
				 c->base.insn[i].text);
			return buf;
		}
		/* an immediate is a parameter; an address, never */
		if ((c->base.insn[i].has_reloc || vc->insn[j].has_reloc) &&
		    !gen_same_relocs(c->fb, &c->base.insn[i], vc->sym,
				     &vc->insn[j], buf, size))
			return buf;
		/* an immediate that moves outside every span: unmodelled (a
		 * call's target is no immediate: other functions move) */
		if (strcmp(c->base.insn[i].norm, vc->insn[j].norm) &&
		    span_insn_value(&c->base.insn[i], &yb) &&
		    span_insn_value(&vc->insn[j], &yv) && yb != yv && !any_imm &&
		    !in_some_span(c, t, i)) {
			snprintf(buf, size, "the build with N=%lld has %.40s at "
				 "+0x%lx, outside the spans, where the baseline "
				 "has %.40s", (long long)c->in->variant[v].value,
				 vc->insn[j].text, (unsigned long)c->base.insn[i].off,
				 c->base.insn[i].text);
			return buf;
		}
	}
	return NULL;
}

const char *span_same_shape(const struct func_ctx *c, int v, char *buf,
			    size_t size)
{
	return span_same_shape_in(c, v, NULL, false, buf, size);
}

/*
 * The per-value form, for a span whose parameters are not a*N + b (a
 * division by N turned into a multiply and a shift, a shift by log2 N, a
 * jiffies conversion): the parameters at a value are the immediates a
 * build with that value has at the same instructions, taken only from a
 * build whose function has the baseline's shape (same_shape) and whose
 * span the program reproduces by value (check_variant). Here: each
 * variant's immediates; which variants count is decided by the checks.
 */
static int take_params(struct func_ctx *c, struct span_work *w,
		       struct xk_scope_span *sp)
{
	struct sx_state *s = &w->s;

	sp->why[0] = '\0';
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		w->usable[v] = !c->in->by_shape || c->shape[v];
	for (int k = 0; k < s->nr_params; k++) {
		ssize_t i = xk_code_index(&c->base, s->param_off[k]);

		sp->param_insn[k] = s->param_off[k];
		sp->fit[k][0] = 0;	/* the default's immediate */
		sp->fit[k][1] = span_param_value(s->param_imm[k], s->param_width[k]);
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			ssize_t j = i < 0 ? -1 : c->match[v][i];
			int64_t y;

			if (!w->usable[v])
				continue;
			if (j < 0 || !span_insn_value(&c->var[v].insn[j], &y))
				w->usable[v] = false;
			else
				w->pv[v][k] = span_param_value(y, s->param_width[k]);
		}
	}
	w->per_value = true;
	return 0;
}

/*
 * After the checks: the default's parameters and those of every variant
 * that passed them, inside the bounds, become the span's points. At
 * least one other build must have passed: the form is then known to
 * describe the code, and any other value is built and checked the same
 * way when it is asked for (gen_point_object).
 */
int span_record_points(const struct func_ctx *c, const struct span_work *w,
		       struct xk_scope_span *sp, const char *why_not)
{
	const struct gen_input *in = c->in;
	int others = 0;

	sp->nr_points = 1;
	sp->points[0].n = in->def;
	for (int k = 0; k < sp->nr_params; k++)
		sp->points[0].p[k] = sp->fit[k][1];
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		struct xk_point *pt = &sp->points[sp->nr_points];

		/* a build outside the bounds is no value it can take */
		if (!w->usable[v] || in->variant[v].value < in->min ||
		    in->variant[v].value > in->max)
			continue;
		others++;
		pt->n = in->variant[v].value;
		memcpy(pt->p, w->pv[v], sizeof(pt->p));
		sp->nr_points++;
	}
	if (others)
		return 0;
	span_refuse(sp, "per-value form: no build with another value within "
		    "the bounds has the baseline's shape (%s)", why_not);
	return -ENOTSUP;
}

/*
 * The fit of every parameter (seed immediate) of the span; the per-value
 * form when some is not affine in N but keeps its instruction.
 */
int span_fit_params(struct func_ctx *c, struct span_work *w,
		    struct xk_scope_span *sp)
{
	struct sx_state *s = &w->s;
	enum xk_span_class cls = sp->cls;	/* a refused fit resets it */
	bool affine = true;

	sp->nr_params = s->nr_params;
	sp->nr_points = 0;
	/* by shape, the builds are of few values of one kind: an affine
	 * fit through them says nothing of the values between them */
	if (c->in->by_shape)
		return take_params(c, w, sp);
	for (int k = 0; k < s->nr_params; k++) {
		ssize_t i = xk_code_index(&c->base, s->param_off[k]);
		int err;

		if (i < 0) {
			span_refuse(sp, "+0x%lx: a seed is not an instruction of the "
				     "baseline", (unsigned long)s->param_off[k]);
			return -ENOTSUP;
		}
		err = fit_immediate(c, i, s->param_imm[k], s->param_width[k],
				    sp->fit[k], sp);
		if (err == -ENOTSUP)
			affine = false;
		else if (err)
			return -ENOTSUP;
	}
	if (affine)
		return 0;
	sp->cls = cls;
	return take_params(c, w, sp);
}

uint64_t span_rnd(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

/* What state s leaves at location loc: the store, the flags or a register
 * (NULL when the span sets none). */
static struct sx *loc_expr(struct sx_state *s, const struct xk_scope_loc *loc)
{
	if (loc->kind == XK_LOC_MEM)
		return s->has_store ? s->st_val : NULL;
	if (loc->kind == XK_LOC_FLAGS)
		return sx_flags(s);
	return s->reg[loc->kind];
}

/*
 * Whether the variant's expression for loc (ve) reads other inputs than
 * the baseline's at the probe point: io_uring_setup compares rcx at the
 * default and rdx at N=1, the same source operand in another register.
 * Asked once the values differ; names the first input only one reads.
 */
static bool other_inputs(struct span_work *w, const struct xk_scope_loc *loc,
			 const struct sx *ve, char *why, size_t size)
{
	const struct sx *base = loc_expr(&w->s, loc);

	if (!base)
		return false;
	for (int r = 0; r < XK_NR_INPUTS; r++) {
		bool b = sx_reads_reg(base, r);
		char mem[24];

		if (b == sx_reads_reg(ve, r))
			continue;
		snprintf(mem, sizeof(mem), "memory input %d", r - XK_NR_REGS);
		snprintf(why, size, "%s read by %s only",
			 r < XK_NR_REGS ? xk_reg_name(r) : mem,
			 b ? "the baseline" : "that build");
		return true;
	}
	return false;
}

/*
 * The fitted programs against a variant compiled with another value, by
 * value: the variant's own span (between the instructions aligned with the
 * baseline's span start and probe point) is executed symbolically and both
 * are evaluated on the same register inputs.
 */
int span_check_variant(struct func_ctx *c, struct span_work *w,
		       struct xk_scope_span *sp, int v)
{
	char why[96];
	const struct xk_func_code *vc = &c->var[v];
	int64_t n = c->in->variant[v].value;
	ssize_t vs = c->match[v][w->start], ve = c->match[v][w->end + 1];

	/* the span's first instruction may change form: start after the
	 * instruction before it, which does not */
	if (vs < 0 && w->start > 0 && c->match[v][w->start - 1] >= 0)
		vs = c->match[v][w->start - 1] + 1;
	struct sx_prog at_probe_prog[XK_NR_REGS] = { { 0 } };
	struct sx_state vsx;
	uint64_t st = 0x9e3779b97f4a7c15ULL;
	int err;

	if (vs < 0 || ve < 0 || ve <= vs) {
		span_refuse(sp, "check with N=%lld: " WHY_CHECK_SHAPE, (long long)n);
		return -ENOTSUP;
	}
	err = sx_init(&vsx);
	vsx.all_stores = true;
	/* the same memory inputs, by address, as the baseline's */
	vsx.nr_mem_in = w->s.nr_mem_in;
	memcpy(vsx.mem_in, w->s.mem_in, sizeof(vsx.mem_in));
	for (ssize_t i = vs; i < ve && !err; i++)
		err = sx_step(&vsx, &vc->insn[i], false);
	if (err) {
		span_refuse(sp, "check with N=%lld: %s", (long long)n, vsx.why);
		sx_free(&vsx);
		return -ENOTSUP;
	}
	/* the program sees the baseline's registers at the probe point */
	for (int r = 0; r < XK_NR_REGS && !err; r++)
		err = sx_prog_compile(w->s.reg[r], w->s.param_imm, w->s.nr_params,
				      &at_probe_prog[r]);
	if (err) {
		span_refuse(sp, "check with N=%lld: a register at the probe point has "
			     "an expression past the analysis' limit of %d nodes",
			 (long long)n, SX_PROG_MAX_NODES);
		err = -ENOTSUP;
	}
	for (int l = 0; l < sp->nr_locs && !err; l++) {
		const struct xk_scope_loc *loc = &sp->locs[l];
		struct sx_prog want_prog;
		struct sx *ve_expr;

		ve_expr = loc_expr(&vsx, loc);
		if (!ve_expr) {
			span_refuse(sp, "check with N=%lld: %s is not set by that "
				     "build's span", (long long)n,
				 loc->kind == XK_LOC_MEM ? "the memory location" :
				 xk_reg_name(loc->kind));
			err = -ENOTSUP;
			break;
		}
		if (sx_prog_compile(ve_expr, NULL, 0, &want_prog)) {
			span_refuse(sp, "check with N=%lld: that build's %s has an "
				     "expression past the analysis' limit of %d nodes",
				 (long long)n, xk_reg_name(loc->kind),
				 SX_PROG_MAX_NODES);
			err = -ENOTSUP;
			break;
		}
		for (int t = 0; t < 256; t++) {
			__u64 regs[XK_NR_INPUTS], at_probe[XK_NR_INPUTS];
			uint64_t want, got;

			for (int r = 0; r < XK_NR_INPUTS; r++) {
				uint64_t x = span_rnd(&st);

				/* small values and edges matter most */
				if (t < 64)
					regs[r] = (uint64_t)((t % 16) - 4 + r % 3);
				else if (t < 160)
					regs[r] = x % (uint64_t)(4 * (n > 0 ? n : 1) + 8);
				else
					regs[r] = x;
			}
			for (int r = 0; r < XK_NR_REGS; r++)
				at_probe[r] = sx_prog_eval(&at_probe_prog[r], regs);
			/* memory inputs: no store in the span, the same value
			 * at the probe point as where the span read it */
			for (int r = XK_NR_REGS; r < XK_NR_INPUTS; r++)
				at_probe[r] = regs[r] & xk_mask(r - XK_NR_REGS <
								w->s.nr_mem_in ?
								w->s.mem_in[r - XK_NR_REGS].width : 64);
			want = sx_prog_eval(&want_prog, regs);
			got = xk_expr_eval_pv(&loc->expr, at_probe, n,
					      w->per_value ? w->pv[v] : NULL);
			if (loc->kind == XK_LOC_FLAGS) {
				want &= flags_tested(c);
				got &= flags_tested(c);
			}
			if (loc->kind != XK_LOC_FLAGS) {
				want &= xk_mask(loc->width);
				got &= xk_mask(loc->width);
			}
			if (want != got && other_inputs(w, loc, ve_expr, why,
							sizeof(why))) {
				span_refuse(sp, "check with N=%lld: " WHY_CHECK_INPUTS
					     " (%s)", (long long)n, why);
				err = -ENOTSUP;
				break;
			}
			if (want != got) {
				span_refuse(sp, "check with N=%lld: the fitted %s is "
					     "%#llx where that build computes "
					     "%#llx", (long long)n,
					 xk_reg_name(loc->kind),
					 (unsigned long long)got,
					 (unsigned long long)want);
				err = -ENOTSUP;
				break;
			}
		}
		sx_prog_free(&want_prog);
	}
	for (int r = 0; r < XK_NR_REGS; r++)
		sx_prog_free(&at_probe_prog[r]);
	sx_free(&vsx);
	return err;
}

/*
 * The emulated form against variant v, by value: from the same registers
 * at the span's start, everything the code after the span reads must be
 * what the variant's own span leaves -- each register a path reads after
 * it (the programs' value where the span writes it, else the register
 * untouched), the flags when tested, the store (same address, value).
 */
int span_check_emulated(struct func_ctx *c, struct span_work *w,
			struct xk_scope_span *sp, int v)
{
	const struct xk_func_code *vc = &c->var[v];
	int64_t n = c->in->variant[v].value;
	ssize_t vs = c->match[v][w->start], ve = c->match[v][w->end + 1];
	const __s64 *pv = w->per_value ? w->pv[v] : NULL;
	struct sx_prog want[XK_NR_REGS + 2];
	int width[XK_NR_REGS + 2], loc_of[XK_NR_REGS + 2];
	struct sx_state vsx;
	uint64_t st = 0x9e3779b97f4a7c15ULL;
	int err = 0;

	/* from the instruction after the last one both builds have */
	if (w->start > 0 && c->match[v][w->start - 1] >= 0)
		vs = c->match[v][w->start - 1] + 1;
	if (vs < 0 || ve < 0 || ve <= vs) {
		span_refuse(sp, "check with N=%lld: " WHY_CHECK_SHAPE, (long long)n);
		return -ENOTSUP;
	}
	memset(want, 0, sizeof(want));
	err = sx_init(&vsx);
	vsx.all_stores = true;
	vsx.nr_mem_in = w->s.nr_mem_in;
	memcpy(vsx.mem_in, w->s.mem_in, sizeof(vsx.mem_in));
	for (ssize_t i = vs; i < ve && !err; i++)
		err = sx_step(&vsx, &vc->insn[i], false);
	if (err) {
		span_refuse(sp, "check with N=%lld: %s", (long long)n, vsx.why);
		sx_free(&vsx);
		return -ENOTSUP;
	}
	/* what is compared: slot r < 16 a register, 16 the flags, 17 memory */
	for (int r = 0; r < XK_NR_REGS + 2 && !err; r++) {
		struct sx *e = NULL;

		loc_of[r] = -1;
		for (int l = 0; l < sp->nr_locs; l++)
			if (sp->locs[l].kind == (r < XK_NR_REGS ? r :
						 r == XK_NR_REGS ? XK_LOC_FLAGS :
						 XK_LOC_MEM))
				loc_of[r] = l;
		if (r < XK_NR_REGS) {
			width[r] = df_reg_read(&c->base, w->end + 1, r);
			e = vsx.reg_written[r] ? vsx.reg[r] : NULL;
		} else if (r == XK_NR_REGS) {
			width[r] = loc_of[r] >= 0 ? 64 : 0;
			e = sx_flags(&vsx);
		} else {
			width[r] = loc_of[r] >= 0 ? sp->locs[loc_of[r]].width : 0;
			e = vsx.has_store ? vsx.st_val : NULL;
			if (width[r] && (!vsx.has_store || vsx.st_base != w->s.st_base ||
					 (vsx.st_base != XK_BASE_RIP &&
					  vsx.st_disp != w->s.st_disp))) {
				span_refuse(sp, "check with N=%lld: that build stores "
					    "elsewhere", (long long)n);
				err = -ENOTSUP;
			}
		}
		if (!width[r] || err)
			continue;
		if (!e && r >= XK_NR_REGS) {
			span_refuse(sp, "check with N=%lld: that build's span leaves "
				    "no %s", (long long)n, r == XK_NR_REGS ?
				    "flags the model knows" : "store");
			err = -ENOTSUP;
		} else if (e && sx_prog_compile(e, NULL, 0, &want[r])) {
			span_refuse(sp, "check with N=%lld: that build's %s has an "
				    "expression past the analysis' limit of %d nodes",
				    (long long)n, r < XK_NR_REGS ? xk_reg_name(r) :
				    "state", SX_PROG_MAX_NODES);
			err = -ENOTSUP;
		}
	}
	for (int t = 0; t < 256 && !err; t++) {
		__u64 regs[XK_NR_INPUTS];

		for (int r = 0; r < XK_NR_INPUTS; r++) {
			uint64_t x = span_rnd(&st);

			if (t < 64)
				regs[r] = (uint64_t)((t % 16) - 4 + r % 3);
			else if (t < 160)
				regs[r] = x % (uint64_t)(4 * (n > 0 ? n : 1) + 8);
			else
				regs[r] = x;
		}
		for (int r = XK_NR_REGS; r < XK_NR_INPUTS; r++)
			regs[r] &= xk_mask(r - XK_NR_REGS < w->s.nr_mem_in ?
					   w->s.mem_in[r - XK_NR_REGS].width : 64);
		for (int r = 0; r < XK_NR_REGS + 2 && !err; r++) {
			uint64_t m = r == XK_NR_REGS ? flags_tested(c) : xk_mask(width[r]);
			uint64_t got, exp;

			if (!width[r])
				continue;
			exp = want[r].insn ? sx_prog_eval(&want[r], regs) : regs[r];
			got = loc_of[r] >= 0 ?
			      xk_expr_eval_pv(&sp->locs[loc_of[r]].expr, regs, n, pv) :
			      regs[r];
			if ((exp & m) != (got & m)) {
				span_refuse(sp, "check with N=%lld: the emulated %s is "
					    "%#llx where that build leaves %#llx",
					    (long long)n, r < XK_NR_REGS ? xk_reg_name(r) :
					    r == XK_NR_REGS ? "flags" : "store",
					    (unsigned long long)(got & m),
					    (unsigned long long)(exp & m));
				err = -ENOTSUP;
			}
		}
	}
	for (int r = 0; r < XK_NR_REGS + 2; r++)
		sx_prog_free(&want[r]);
	sx_free(&vsx);
	return err;
}

int span_compile_locations(struct func_ctx *c, struct span_work *w,
			   struct xk_scope_span *sp)
{
	for (int l = 0; l < sp->nr_locs; l++) {
		struct xk_scope_loc *loc = &sp->locs[l];
		int err;

		if (w->inverse && loc->kind >= XK_NR_REGS) {
			span_refuse(sp, "the span overwrites its own input and the "
				     "value reaches %s", loc->kind == XK_LOC_MEM ?
				     "memory" : "the flags");
			return -ENOTSUP;
		}
		/*
		 * rsp plus a parameter: the address of an object on the stack
		 * that moves with the constant (an array sized by it). The
		 * frame is the compiled one: another value's address may lie
		 * outside the object, even below rsp.
		 */
		if (sx_uses_params(w->loc_expr[l]) &&
		    sx_reads_reg(w->loc_expr[l], XK_RSP)) {
			span_refuse(sp, "the value of %s is a stack address that "
				    "moves with the constant (an object on the "
				    "stack sized by it)",
				    xk_reg_name(sp->locs[l].kind));
			return -ENOTSUP;
		}
		/* an emulated span reads its memory inputs where it starts,
		 * before any store of its own: only a probe after it cannot */
		if (sx_uses_mem_inputs(w->loc_expr[l]) && w->s.mem_clobbered &&
		    !w->emulate) {
			span_refuse(sp, "the value of %s depends on memory the span "
				     "writes before the probe point",
				 xk_reg_name(sp->locs[l].kind));
			return -ENOTSUP;
		}
		if (sx_uses_reloc(w->loc_expr[l])) {
			span_refuse(sp, "the value of %s depends on an address the "
				    "linker fills in (a relocated immediate)",
				    xk_reg_name(sp->locs[l].kind));
			return -ENOTSUP;
		}
		if (w->inverse)
			err = sx_compile_inverse(w->loc_expr[l], sp->fit, c->in->def,
						 loc->kind, loc->width, &loc->expr);
		else
			err = sx_compile(w->loc_expr[l], sp->fit, &loc->expr);

		if (err == -ENOTSUP) {
			span_refuse(sp, "the value of %s depends on memory read in the span",
				 xk_reg_name(sp->locs[l].kind));
			return err;
		}
		if (err) {
			span_refuse(sp, "the expression of %s is too long for the runtime",
				 xk_reg_name(sp->locs[l].kind));
			return -ENOTSUP;
		}
		sx_print(w->loc_expr[l], loc->text, sizeof(loc->text));
		/* the memory inputs the runtime reads before the programs */
		sp->nr_mem_in = w->s.nr_mem_in;
		for (int k = 0; k < w->s.nr_mem_in; k++) {
			sp->mem_in[k].base = w->s.mem_in[k].base;
			sp->mem_in[k].disp = w->s.mem_in[k].disp;
			sp->mem_in[k].width = w->s.mem_in[k].width;
			sp->mem_in[k].index = w->s.mem_in[k].index;
			sp->mem_in[k].scale = w->s.mem_in[k].scale;
		}
		if (w->inverse) {
			char e[sizeof(loc->text)];

			xk_strlcpy(e, loc->text, sizeof(e));
			snprintf(loc->text, sizeof(loc->text),
				 "%s + (E(N) - E(%lld)), E = %.180s (inverse form)",
				 xk_reg_name(loc->kind), (long long)c->in->def, e);
		}
	}
	return 0;
}

/*
 * The probe point is the instruction after the span. When it is also a
 * branch target, a probe there would fire on paths that did not run the
 * span; when it is a jump-label site, kprobes refuses it (the kernel
 * patches those bytes); when it is an alternative's site, its bytes cannot
 * be checked (the CPU's features chose them). The rewrite probe then sits on the span's last
 * instruction and rewrites after it (post_len: a kprobe post handler),
 * which needs that instruction to fall through (no branch, call or
 * return) and every path through it to have run the whole span (no branch
 * target after the span's first instruction).
 */
int span_place_post(struct func_ctx *c, const struct span_work *w,
		    struct xk_scope_span *sp)
{
	const struct xk_insn *last = &c->base.insn[w->end];

	if (last->is_branch || last->is_call || last->is_ret) {
		span_refuse(sp, "the probe point +0x%lx is %s and the span ends "
			    "in a branch", (unsigned long)c->base.insn[w->end + 1].off,
			    c->base.insn[w->end + 1].unprobeable ?
			    "a site kprobes refuses (a jump label, a BUG)" :
			    c->target[w->end + 1] ? "also a branch target" :
			    "an alternative's site (its bytes the CPU's choice)");
		return -ENOTSUP;
	}
	for (size_t i = w->start + 1; i <= w->end; i++) {
		if (c->target[i]) {
			span_refuse(sp, "the probe point +0x%lx and +0x%lx inside the "
				    "span are branch targets", (unsigned long)
				    c->base.insn[w->end + 1].off,
				    (unsigned long)c->base.insn[i].off);
			return -ENOTSUP;
		}
	}
	sp->post_len = last->len;
	return 0;
}

int span_place_probe(struct func_ctx *c, struct span_work *w,
		     struct xk_scope_span *sp)
{
	size_t p = w->end + 1, i;
	const struct xk_insn *pi;
	uint64_t win_end, site;
	unsigned int alt_len;

	if (p >= c->base.nr) {
		span_refuse(sp, "the span ends the function");
		return -ENOTSUP;
	}
	sp->post_len = 0;
	/* emulated: resumed at p, which the module checks with kprobes'
	 * decoder (insn_boundary), which refuses a jump-label site */
	if (w->emulate && c->base.insn[p].unprobeable) {
		span_refuse(sp, "the emulated span would resume at +0x%lx, a site "
			    "kprobes refuses (a jump label, a BUG)",
			    (unsigned long)c->base.insn[p].off);
		return -ENOTSUP;
	}
	/* emulated: the probe is the span's start; resuming at a join is fine.
	 * An alternative's site at p: its bytes are the CPU's choice, so the
	 * probe sits on the span's last instruction, which is compared */
	if (!w->emulate && (c->target[p] || c->base.insn[p].unprobeable ||
			    xk_alternative_at(c->obj, c->fb, c->base.insn[p].off, NULL)) &&
	    span_place_post(c, w, sp))
		return -ENOTSUP;
	pi = &c->base.insn[p];
	sp->start = c->base.insn[w->start].off;
	sp->probe = pi->off;
	sp->expect_len = pi->off + pi->len - sp->start;
	if (sp->expect_len > XK_MAX_EXPECT) {
		span_refuse(sp, "the span is longer than %d bytes", XK_MAX_EXPECT);
		return -ENOTSUP;
	}
	/* the instructions before the probe are the rewrite's model: none
	 * may be one the kernel replaces by the CPU's features */
	if ((alt_len = xk_alternative_in(c->obj, c->fb, sp->start, sp->probe, &site))) {
		span_refuse(sp, "an alternative's site at +0x%llx (%u bytes) lies "
			    "before the probe point: the kernel may replace it at "
			    "boot or load, by the CPU's features",
			    (unsigned long long)site, alt_len);
		return -ENOTSUP;
	}
	memcpy(sp->expect, xk_func_bytes(c->fb) + sp->start, sp->expect_len);
	xk_func_fixed_bytes(c->obj, c->fb, sp->start, sp->expect_len, sp->expect_mask);
	/* a relocated call or jump may be rewritten whole at boot or load:
	 * return thunks become ret, retpolines indirect calls, __fentry__ a
	 * nop; only the other instructions are compared */
	for (i = w->start; i <= p; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		if ((in->is_call || in->is_branch || in->is_ret) && in->has_reloc)
			memset(sp->expect_mask + (in->off - sp->start), 0, in->len);
	}
	/*
	 * a jump (5 bytes) fits: no branch, call, rip-relative or target in
	 * it; and x86 never optimizes a probe in a function with an exception
	 * table entry (fixup code may jump back into it: can_optimize())
	 */
	sp->optimizable = !xk_func_has_extable(c->obj, c->fb);
	win_end = pi->off + 5;
	for (i = p; i < c->base.nr && c->base.insn[i].off < win_end; i++) {
		const struct xk_insn *in = &c->base.insn[i];

		if (in->is_branch || in->is_call || in->is_ret ||
		    in->rip_relative || in->has_reloc ||
		    (i > p && c->target[i]))
			sp->optimizable = false;
	}
	if (i == c->base.nr && c->base.insn[c->base.nr - 1].off +
				       c->base.insn[c->base.nr - 1].len < win_end)
		sp->optimizable = false;
	if (sp->post_len)
		sp->optimizable = false;	/* a post handler is never jumped to */
	sp->emulate = w->emulate;
	if (w->emulate)
		sp->optimizable = false;	/* it changes ip: int3 only */
	return 0;
}

/*
 * Where the span's immediates lie, for settling (xk settle rewrites them in
 * the live text): only when every seed of the span is a parameter whose
 * instruction capstone encodes with an immediate field, each field obeys
 * the module's rule, and the default's encoding is the compiled bytes.
 * Otherwise the span has none and always keeps its probe; never a refusal.
 */
int span_locate_imms(const struct func_ctx *c, const struct span_work *w,
		     struct xk_scope_span *sp)
{
	const struct sx_state *s = &w->s;
	int nr = 0;

	sp->nr_imms = 0;
	if (sp->post_len)
		return 0;	/* settle guards and rewrites at the probe point */
	if (w->per_value || w->emulate)
		return 0;	/* no a*N + b to write, or the text never runs */
	for (size_t i = w->start; i <= w->end; i++) {
		bool param = false;

		for (int k = 0; k < s->nr_params; k++)
			param |= s->param_off[k] == c->base.insn[i].off;
		if (c->seed[i] && !param)
			return 0;
	}
	for (int k = 0; k < s->nr_params; k++) {
		ssize_t i = xk_code_index(&c->base, s->param_off[k]);
		const struct xk_insn *in = i < 0 ? NULL : &c->base.insn[i];
		struct xk_scope_imm *m = &sp->imm[k];
		uint8_t enc[8];

		if (!in || !in->x86.encoding.imm_offset ||
		    !in->x86.encoding.imm_size)
			return 0;
		for (int j = 0; j < k; j++)
			if (sp->imm[j].insn == in->off)
				return 0;	/* two immediates of one instruction */
		m->insn = in->off;
		m->insn_len = in->len;
		m->field = in->off + in->x86.encoding.imm_offset;
		m->size = in->x86.encoding.imm_size;
		m->width = s->param_width[k];
		if (xk_rule_check_imm(m->insn, m->insn_len, m->field, m->size,
				      m->width, sp->start, sp->probe,
				      sp->expect_len, sp->expect_mask) ||
		    xk_rule_imm_opcode(sp->expect + (m->insn - sp->start),
				       m->insn_len, m->size) || !sp->fit[k][0] ||
		    xk_rule_imm_bytes(sp->fit[k][0], sp->fit[k][1], c->in->def,
				      m->size, m->width, enc) ||
		    memcmp(enc, in->bytes + in->x86.encoding.imm_offset, m->size))
			return 0;
		nr++;
	}
	sp->nr_imms = nr;
	return 0;
}

/*
 * The rules the module applies to a span (xk/abi): a span that breaks one
 * is refused here, with the rule, never written into a table.
 */
int span_obey_rules(struct xk_scope_span *sp)
{
	struct xk_ioc_span d;
	const char *why;

	xk_scope_span_to_ioc(sp, &d);
	why = xk_ioc_span_check(&d);
	if (!why)
		return 0;
	span_refuse(sp, "the module would refuse the span: %s", why);
	return -ENOTSUP;
}
