// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the pipeline, from a baseline object and its builds with
 * other values of a constant to the spans of a scope table.
 *
 *   gen_object()        the object and its builds opened and correlated; the
 *                       forms' object passes (data, relocations); every
 *                       function that differs in some build analysed
 *   analyse_function()  aligned with its builds, its seeds found
 *                       (find_seeds: instructions whose immediate moves with
 *                       the value; the other changed ones; stack slots the
 *                       value moves), the forms asked to claim it in their
 *                       order (forms/forms.c), their finish run on its spans
 *   gen_point_object()  a new value for the per-value spans: asked of the
 *                       form that owns each
 *
 * The pipeline knows no form by name: forms/form.h is the interface, one
 * span's analysis is span.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "forms/form.h"
#include "relocs.h"
#include "span.h"
#include "spans.h"

/* The bytes an instruction allocates on the stack (`sub $n, %rsp`: n;
 * `add $n, %rsp`: -n), or 0 when it is no such instruction. */
static int64_t rsp_alloc(const struct xk_insn *in)
{
	const cs_x86 *x = &in->x86;

	if ((in->id != X86_INS_SUB && in->id != X86_INS_ADD) || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG || x->operands[0].reg != X86_REG_RSP ||
	    x->operands[1].type != X86_OP_IMM || !x->operands[1].imm)
		return 0;
	return in->id == X86_INS_SUB ? x->operands[1].imm : -x->operands[1].imm;
}

static bool writes_rsp(const struct xk_insn *in)
{
	for (int k = 0; k < in->nr_write; k++)
		if (in->regs_write[k] == X86_REG_RSP)
			return true;
	return false;
}

/* The only memory operand of in when its base is rsp (no index), or NULL. */
static const cs_x86_op *rsp_operand(const struct xk_insn *in)
{
	const cs_x86_op *m = NULL;

	for (int k = 0; k < in->x86.op_count; k++) {
		const cs_x86_op *o = &in->x86.operands[k];

		if (o->type != X86_OP_MEM)
			continue;
		if (m || o->mem.base != X86_REG_RSP || o->mem.index != X86_REG_INVALID ||
		    o->mem.segment != X86_REG_INVALID)
			return NULL;
		m = o;
	}
	return m;
}

/* Whether in copies the stack protector's canary, %gs:0x28, to a register. */
static bool loads_canary(const struct xk_insn *in, unsigned int *reg)
{
	const cs_x86 *x = &in->x86;

	if (in->id != X86_INS_MOV || x->op_count != 2 ||
	    x->operands[0].type != X86_OP_REG || x->operands[1].type != X86_OP_MEM ||
	    x->operands[1].mem.segment != X86_REG_GS || x->operands[1].mem.disp != 0x28 ||
	    x->operands[1].mem.base != X86_REG_INVALID)
		return false;
	*reg = x->operands[0].reg;
	return true;
}

/*
 * The frame of a function's code (struct frame). Anything but the simple
 * shape leaves f->simple false: then no difference is set aside as the
 * frame's (frame_pair).
 */
static void find_frame_in(const struct xk_func_code *code, const bool *leader,
			  struct frame *f, size_t *alloc_at)
{
	size_t alloc = SIZE_MAX;
	int64_t depth = 0;	/* bytes pushed in the body, in this block */
	bool freed = false;	/* the frame freed, in this block */

	f->simple = false;
	for (size_t i = 0; i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		int64_t n = rsp_alloc(in);
		unsigned int reg;
		bool ends = leader[i] || (i && (code->insn[i - 1].is_branch ||
						code->insn[i - 1].is_ret));

		if (depth && ends)
			return;		/* pushed across a block's end */
		if (ends)
			freed = false;
		/* rsp is not the body's: in the prologue, after a push of
		 * the body, after the free */
		f->pushed[i] = depth != 0 || freed || alloc == SIZE_MAX;
		if (in->is_call || in->is_ret)
			continue;
		if (depth && in->id == X86_INS_POP) {
			depth -= 8;	/* the push's pop */
			continue;
		}
		if (n > 0) {
			if (alloc != SIZE_MAX)
				return;		/* a second allocation */
			for (size_t k = 1; k <= i; k++)
				if (leader[k] || code->insn[k - 1].is_branch)
					return;	/* not in the entry block */
			alloc = i;
			f->size = n;
		} else if (n < 0) {
			if (alloc == SIZE_MAX || -n != f->size)
				return;		/* frees another size */
			freed = true;
		} else if (in->id == X86_INS_PUSH) {
			/* in the body, a push is popped in its block (what
			 * the rsp accesses between see moved: frame_pair
			 * takes none of them) */
			if (alloc != SIZE_MAX)
				depth += 8;
		} else if (in->id == X86_INS_POP) {
			if (!freed)
				return;		/* an epilogue's: after the free */
		} else if (writes_rsp(in)) {
			return;			/* leave, mov to rsp, and so on */
		}
		if (loads_canary(in, &reg) && i + 1 < code->nr) {
			const struct xk_insn *st = &code->insn[i + 1];
			const cs_x86_op *m = rsp_operand(st);

			if (st->id == X86_INS_MOV && m && st->x86.op_count == 2 &&
			    st->x86.operands[0].type == X86_OP_MEM &&
			    st->x86.operands[1].type == X86_OP_REG &&
			    st->x86.operands[1].reg == reg && m->size == 8) {
				if (f->canary >= 0 && f->canary != m->mem.disp)
					return;
				f->canary = m->mem.disp;
			}
		}
	}
	f->simple = !depth;
	*alloc_at = alloc;
}

static void find_frame(const struct xk_func_code *code, struct frame *f)
{
	size_t alloc = SIZE_MAX;
	bool *leader = calloc(code->nr + 1, sizeof(bool));	/* jumped to */

	free(f->pushed);
	memset(f, 0, sizeof(*f));
	f->canary = -1;
	f->pushed = calloc(code->nr + 1, sizeof(bool));
	if (!leader || !f->pushed) {
		free(leader);
		return;		/* not simple */
	}
	for (size_t i = 0; i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		ssize_t t = in->target >= 0 && !in->is_call ?
			    xk_code_index(code, (uint64_t)in->target) : -1;

		if (t >= 0)
			leader[t] = true;
		if (in->fixup >= 0 && (t = xk_code_index(code, (uint64_t)in->fixup)) >= 0)
			leader[t] = true;
	}
	find_frame_in(code, leader, f, &alloc);
	free(leader);
	f->simple = f->simple && alloc != SIZE_MAX;
}

/* Whether two operands are the same but for a memory operand's disp. */
static bool same_but_disp(const cs_x86_op *a, const cs_x86_op *b)
{
	if (a->type != b->type || a->size != b->size)
		return false;
	switch (a->type) {
	case X86_OP_REG:
		return a->reg == b->reg;
	case X86_OP_IMM:
		return a->imm == b->imm;
	case X86_OP_MEM:
		return a->mem.segment == b->mem.segment && a->mem.base == b->mem.base &&
		       a->mem.index == b->mem.index && a->mem.scale == b->mem.scale;
	default:
		return false;
	}
}

/*
 * Whether baseline instruction i and variant v's instruction j differ only
 * in the frame's layout, which a value that needs no more stack than the
 * compiled-in one leaves as the baseline has it: the allocation or a free
 * of the frame (its size the variant's), or an access to the frame's
 * canary slot or to what lies above the frame (the pushed registers, the
 * return address: `__builtin_return_address(0)`), each at the baseline's
 * displacement plus the difference of the two frames. An access to
 * another slot of the frame that moved is not one: it may be an element
 * of an array sized by the constant (arr[N - 1]) as well as a variable
 * laid out after it, which only the types would tell.
 */
static bool frame_pair(const struct func_ctx *c, int v, size_t i, size_t j)
{
	const struct xk_insn *b = &c->base.insn[i], *w = &c->var[v].insn[j];
	const struct frame *fb = &c->frame, *fv = &c->vframe[v];
	int64_t delta = fv->size - fb->size, nb, nv;
	const cs_x86_op *mb, *mw;
	bool grows;

	if (!fb->simple || !fv->simple || !delta || (fb->canary < 0) != (fv->canary < 0) ||
	    (fb->canary >= 0 && fv->canary != fb->canary + delta))
		return false;
	/* the frame grows with the constant, or shrinks with it, in every build */
	grows = c->in->variant[v].value > c->in->def;
	if ((delta > 0) != grows)
		return false;
	nb = rsp_alloc(b);
	nv = rsp_alloc(w);
	if (nb && nv)
		return (nb == fb->size && nv == fv->size) || (nb == -fb->size && nv == -fv->size);
	/* a lea is an address, not an access: lea of the canary slot is
	 * the end of an array laid out below it (refresh_cpu_vm_stats) */
	if (b->id == X86_INS_LEA || w->id == X86_INS_LEA)
		return false;
	mb = rsp_operand(b);
	mw = rsp_operand(w);
	if (!mb || !mw || fb->pushed[i] || fv->pushed[j] || b->id != w->id ||
	    b->x86.op_count != w->x86.op_count ||
	    b->has_reloc || w->has_reloc)
		return false;
	for (int k = 0; k < b->x86.op_count; k++)
		if (!same_but_disp(&b->x86.operands[k], &w->x86.operands[k]))
			return false;
	if (mw->mem.disp != mb->mem.disp + delta)
		return false;
	return mb->mem.disp == fb->canary || mb->mem.disp >= fb->size;
}

/*
 * Whether two matched instructions differ in more than the value that
 * span_insn_value() reads (the first immediate, a lea's displacement) and the
 * registers they name: another instruction, another immediate, a memory
 * operand at another displacement, scale or width, another prefix. Such
 * a change is no seed: a load or store at another displacement reads
 * other memory (a field after an array the constant sizes:
 * SWAP_CLUSTER_MAX's struct swap_iocb in __swap_writepage), which no
 * immediate rewrite reproduces. Registers allocated otherwise are left to
 * the spans' checks, as before.
 */
static bool differs_beyond_value(const struct xk_insn *a, const struct xk_insn *b)
{
	bool imm_seen = false;

	if (a->id != b->id || a->x86.op_count != b->x86.op_count ||
	    memcmp(a->x86.prefix, b->x86.prefix, sizeof(a->x86.prefix)))
		return true;
	for (int k = 0; k < a->x86.op_count; k++) {
		const cs_x86_op *p = &a->x86.operands[k], *q = &b->x86.operands[k];

		/* a memory operand's width too: movzbl and movzwl of one
		 * field differ (a register's is its allocation's) */
		if (p->type != q->type ||
		    (p->type == X86_OP_MEM && p->size != q->size))
			return true;
		switch (p->type) {
		case X86_OP_REG:
			break;
		case X86_OP_IMM:
			/* the first immediate is the value; another must not move */
			if (imm_seen && p->imm != q->imm)
				return true;
			imm_seen = true;
			break;
		case X86_OP_MEM:
			if (p->mem.segment != q->mem.segment || p->mem.scale != q->mem.scale ||
			    (p->mem.base == X86_REG_INVALID) != (q->mem.base == X86_REG_INVALID) ||
			    (p->mem.index == X86_REG_INVALID) != (q->mem.index == X86_REG_INVALID) ||
			    (a->id != X86_INS_LEA && p->mem.disp != q->mem.disp))
				return true;
			break;
		default:
			return true;
		}
	}
	return false;
}

/*
 * A seed is an instruction whose immediate (or lea displacement) moves with
 * the constant: matched in both fit variants, the value differs. Other
 * differences (instructions scheduled elsewhere, a form that changes) are
 * not seeds; a function that differs without any seed is reported.
 */
static int find_seeds(struct func_ctx *c, bool *other_diff, ssize_t *first_other)
{
	int nr = 0;

	*other_diff = false;
	*first_other = -1;
	find_frame(&c->base, &c->frame);
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		find_frame(&c->var[v], &c->vframe[v]);
	pr_debug("%s: frame %s %lld bytes, canary %lld; builds' %lld %lld %lld\n",
		 c->fb->name, c->frame.simple ? "simple" : "not simple",
		 (long long)c->frame.size, (long long)c->frame.canary,
		 (long long)c->vframe[0].size, (long long)c->vframe[1].size,
		 (long long)c->vframe[2].size);
	for (size_t i = 0; i < c->base.nr; i++) {
		int64_t vb, vv;
		bool matched = true, moved = false, relocated = false, changed = false;
		/* by shape: an immediate that moves in any build of the
		 * baseline's shape (the others give no point) */
		int nr_v = c->in->by_shape ? GEN_NR_VARIANTS : GEN_FIT_VARIANTS;

		for (int v = 0; v < nr_v && !span_objtool_site(c, i); v++) {
			ssize_t j = c->match[v][i];

			if (c->in->by_shape && !c->shape[v])
				continue;
			if (j < 0) {
				matched = false;
				continue;
			}
			if (strcmp(c->base.insn[i].norm, c->var[v].insn[j].norm) &&
			    frame_pair(c, v, i, (size_t)j)) {
				c->frame_moved = true;
				continue;
			}
			/* another address, with the same text (&table[N]) or
			 * besides the value (cmp $N, sym+off(%rip), off moved
			 * too): a change no immediate carries */
			if (c->base.insn[i].has_reloc || c->var[v].insn[j].has_reloc) {
				char why[200];

				if (!gen_same_relocs(c->fb, &c->base.insn[i], c->var[v].sym,
						     &c->var[v].insn[j], why, sizeof(why))) {
					pr_debug("%s: build %d: %s\n", c->fb->name, v, why);
					relocated = true;
				}
			}
			if (!strcmp(c->base.insn[i].norm, c->var[v].insn[j].norm))
				continue;
			if (span_insn_value(&c->base.insn[i], &vb) &&
			    span_insn_value(&c->var[v].insn[j], &vv) && vb != vv)
				moved = true;
			/* more than the value (registers aside) */
			changed |= differs_beyond_value(&c->base.insn[i],
							&c->var[v].insn[j]);
		}
		c->seed[i] = matched && moved && !relocated && !changed;
		c->other[i] = !c->seed[i] && (!matched || moved || relocated || changed);
		if (c->other[i]) {
			*other_diff = true;
			if (*first_other < 0)
				*first_other = (ssize_t)i;
		}

		nr += c->seed[i];
	}
	/* code a build adds (no baseline instruction matches it: a neg and a
	 * sbb before the and that takes the value) changes too: at the
	 * baseline instruction it comes before */
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		size_t i = 0, j = 0;
		bool gap = false;	/* a baseline instruction unmatched since */

		if (v >= (c->in->by_shape ? GEN_NR_VARIANTS : GEN_FIT_VARIANTS) ||
		    (c->in->by_shape && !c->shape[v]))
			continue;
		for (i = 0; i < c->base.nr; i++) {
			ssize_t m = c->match[v][i];

			if (m < 0) {
				gap = true;	/* itself a change, already */
				continue;
			}
			if ((size_t)m > j && !gap && !c->seed[i] &&
			    !span_objtool_site(c, i)) {
				c->other[i] = true;
				*other_diff = true;
				if (*first_other < 0 || (ssize_t)i < *first_other)
					*first_other = (ssize_t)i;
			}
			j = (size_t)m + 1;
			gap = false;
		}
		if (j < c->var[v].nr && c->base.nr) {	/* added at the end */
			c->other[c->base.nr - 1] = true;
			*other_diff = true;
		}
	}
	return nr;
}

/* ---- the pipeline for one function ---- */

/*
 * Function fb of the baseline object obj differs in some build: aligned
 * with its builds, its seeds found, then the forms asked to claim it in
 * their order (forms/forms.c), and every form's finish run on its spans.
 * Runs for gen_object on each such function.
 */
static int analyse_function(const struct gen_input *in, const struct xk_obj *obj,
			    const struct xk_sym *fb, struct xk_scope *t)
{
	struct func_ctx c = { .fb = fb, .in = in, .obj = obj };
	struct form_fn fn = { .in = in, .obj = obj, .fb = fb, .ctx = &c };
	bool other_diff;
	ssize_t other;
	int err, nr_seeds;

	err = xk_disasm_func(fb, &c.base) ?: span_mark_blocks(&c) ?:
	      span_align_variants(&c, NULL);
	if (err)
		goto out;
	fn.first_span = t->nr_spans;
	fn.base = &c.base;
	fn.var = c.var;
	fn.match = c.match;
	fn.leader = c.leader;
	fn.target = c.target;
	fn.seed = c.seed;
	fn.other = c.other;
	for (const struct gen_form *const *f = gen_forms; *f && !fn.analyse_span; f++)
		fn.analyse_span = (*f)->span;
	if (in->by_shape) {
		char why[192] = "";
		bool any = false;

		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			c.shape[v] = !span_same_shape_in(&c, v, NULL, true, why, sizeof(why));
			any |= c.shape[v];
		}
		if (!any) {
			struct xk_scope_span *sp;

			err = gen_add_span(t, in, fb, &sp);
			if (!err)
				span_refuse(sp, "no build has the baseline's "
					    "shape: %s", why);
			goto out;
		}
	}
	nr_seeds = find_seeds(&c, &other_diff, &other);
	fn.nr_seeds = nr_seeds;
	fn.other_diff = other_diff;
	fn.frame_moved = c.frame_moved;
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++) {
		if (!(*f)->claim)
			continue;
		err = (*f)->claim(&fn, t);
		if (err > 0) {
			err = 0;
			break;
		}
	}
out:
	/* every form's spans of it, and the register forms' */
	fn.frame_moved = c.frame_moved;
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->finish)
			err = (*f)->finish(&fn, t);
	span_free_ctx(&c);
	return err;
}

/* By shape: whether function f of in's object has a refused span in redo. */
static bool refused_in(const struct gen_input *in, const struct xk_sym *f)
{
	for (int k = 0; k < in->redo->nr_spans; k++)
		if (in->redo->spans[k].cls == XK_SPAN_UNSUPPORTED &&
		    gen_span_of(&in->redo->spans[k], in->object, f))
			return true;
	return false;
}

int gen_object(const struct gen_input *in, struct xk_scope *t)
{
	struct xk_obj base, var[GEN_NR_VARIANTS];
	int err, opened = 0;

	err = xk_obj_open(&base, in->base_path);
	if (err)
		return err;
	for (; opened < GEN_NR_VARIANTS && !err; opened++)
		err = xk_obj_open(&var[opened], in->variant[opened].path);
	if (err) {
		opened--;
		goto out;
	}
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
		xk_obj_correlate(&base, &var[v]);
		for (size_t i = 0; i < base.nr_syms; i++) {
			struct xk_sym *y = &base.syms[i];

			y->twin_v[v] = y->twin;
			y->twin = NULL;
		}
		for (size_t i = 0; i < var[v].nr_syms; i++)
			var[v].syms[i].twin = NULL;
	}
	/* the forms' passes over the whole object: the uses no instruction
	 * byte shows (data, addresses) */
	struct form_obj fo = { .in = in, .base = &base, .var = var };

	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->object)
			err = (*f)->object(&fo, t);
	for (size_t i = 0; i < base.nr_syms && !err; i++) {
		struct xk_sym *f = &base.syms[i];
		bool same = true;

		/* objtool's padding symbols (modules are objtool'd per object) */
		if (!f->is_func || !strncmp(f->name, "__pfx_", 6))
			continue;
		if (in->by_shape && !refused_in(in, f))
			continue;
		if (in->heap_call && strcmp(f->name, in->heap_call))
			continue;
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			const struct xk_sym *g = f->twin_v[v];

			if (!g || g->sym.st_size != f->sym.st_size ||
			    memcmp(xk_func_bytes(g), xk_func_bytes(f),
				   f->sym.st_size))
				same = false;
		}
		if (!same && (!f->twin_v[0] || !f->twin_v[1] || !f->twin_v[2])) {
			struct xk_scope_span *sp;

			/* inlined or dropped in some build: nothing to align */
			err = gen_add_span(t, in, f, &sp);
			if (!err) {
				span_refuse(sp, "the function does not exist in every build "
					     "(inlined or removed with another value)");
			}
		} else if (!same) {
			err = analyse_function(in, &base, f, t);
		}
	}
out:
	for (int v = 0; v < opened; v++)
		xk_obj_close(&var[v]);
	xk_obj_close(&base);
	return err;
}

/* ---- a new value for the per-value spans (xk set, xk gen --prepare) ---- */

int gen_point_object(const struct gen_input *in, const struct xk_scope *t,
		     __s64 (*rows)[XK_MAX_PARAMS])
{
	struct xk_obj base, var;
	int err;

	err = xk_obj_open(&base, in->base_path);
	if (err)
		return err;
	err = xk_obj_open(&var, in->variant[0].path);
	if (err) {
		xk_obj_close(&base);
		return err;
	}
	xk_obj_correlate(&base, &var);
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		const struct gen_form *const *form;
		char why[600];

		if (sp->cls == XK_SPAN_UNSUPPORTED || sp->nr_points <= 0 ||
		    strcmp(sp->object, in->object))
			continue;
		form = gen_forms;
		while (*form && !((*form)->owns && (*form)->owns(sp)))
			form++;
		if (!*form) {
			err = xk_err(-ENOTSUP, "%s: span %d (%s+%#llx) has points "
				     "but no form owns it", t->constant, i, sp->func,
				     (unsigned long long)sp->start);
			break;
		}
		err = (*form)->point(in, t, &base, &var, sp, rows[i], why,
				     sizeof(why));
		if (err == -ENOTSUP)
			err = xk_err(-ENOTSUP, "%s = %lld cannot be retuned: span %d "
					       "(%s+%#llx, per-value form): %s",
				     t->constant, (long long)in->variant[0].value,
				     i, sp->func, (unsigned long long)sp->start, why);
	}
	xk_obj_close(&var);
	xk_obj_close(&base);
	return err;
}
