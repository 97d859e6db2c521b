// SPDX-License-Identifier: GPL-2.0
/*
 * Form: a function that only the check build compiles differently (at a
 * value past some threshold of the code), refused by name: no seed shows
 * where, and a retune to such a value would run the baseline's code.
 */
#include "relocs.h"
#include "form.h"

/* The function of f's section whose code holds offset off, or NULL. */
static const struct xk_sym *func_holding(const struct xk_sym *f, uint64_t off)
{
	const struct xk_obj *o = f->sec->obj;

	for (size_t k = 0; k < o->nr_syms; k++) {
		const struct xk_sym *g = &o->syms[k];

		if (g->is_func && g->sec == f->sec && off >= g->sym.st_value &&
		    off < g->sym.st_value + g->sym.st_size)
			return g;
	}
	return NULL;
}

/*
 * A call or jump the assembler resolved to a function of the same section
 * (no relocation): a's target in fa and b's in fb name the same function
 * at the same offset, wherever the section's layout put it.
 */
static bool same_function_called(const struct xk_sym *fa, const struct xk_insn *a,
				 const struct xk_sym *fb, const struct xk_insn *b)
{
	const struct xk_sym *ta, *tb;
	uint64_t at, bt;

	if (a->id != b->id || a->has_reloc || b->has_reloc ||
	    !(a->is_call || a->is_branch) || a->x86.op_count != 1 ||
	    b->x86.op_count != 1 || a->x86.operands[0].type != X86_OP_IMM ||
	    b->x86.operands[0].type != X86_OP_IMM)
		return false;
	/* capstone's immediate: the target, with the function at 0 */
	at = fa->sym.st_value + (uint64_t)a->x86.operands[0].imm;
	bt = fb->sym.st_value + (uint64_t)b->x86.operands[0].imm;
	ta = func_holding(fa, at);
	tb = func_holding(fb, bt);
	return ta && tb && !strcmp(ta->name, tb->name) &&
	       at - ta->sym.st_value == bt - tb->sym.st_value;
}

/*
 * Padding: a NOP of any length, or xchg of a register with itself in 16 or
 * 64 bits (xchg %ax,%ax, 66 90), which the assembler puts before an
 * aligned loop head. How much it puts depends on where the section's
 * layout placed the function (a loop aligned to 32 bytes in a function
 * aligned to 16, as gcc-14 emits), so a function that only moved may pad
 * otherwise. A 32-bit xchg of a register with itself (87 c0) is no NOP: it
 * clears the upper half of the 64-bit register.
 */
static bool is_padding(const struct xk_insn *in)
{
	const cs_x86_op *a = &in->x86.operands[0], *b = &in->x86.operands[1];

	/* no site the kernel patches: a jump label's, an alternative's, or
	 * one a relocation covers */
	if (in->jump_label || in->alt_site || in->alt_differs || in->has_reloc)
		return false;
	if (in->id == X86_INS_NOP)
		return true;
	return in->id == X86_INS_XCHG && in->x86.op_count == 2 &&
	       a->type == X86_OP_REG && b->type == X86_OP_REG &&
	       a->reg == b->reg && a->size != 4;
}

/* The index of the first instruction at or after i that is no padding. */
static size_t skip_padding(const struct xk_insn *insn, size_t nr, size_t i)
{
	while (i < nr && is_padding(&insn[i]))
		i++;
	return i;
}

/*
 * The function's code in both fit builds is the baseline's, byte for byte
 * (and no frame slot moved), yet gen_object found it different: when the
 * check build's instructions differ too (beyond branch and call targets,
 * which move with the section's layout, and padding, whose length does
 * too), only the check build changed it, at a value past some threshold
 * of the code (a branch the compiler keeps or drops, another instruction
 * form). No seed can show where, and a retune to such a value would run
 * the baseline's code: refused, never passed over.
 */
static bool only_check_differs(const struct form_fn *fn)
{
	const struct xk_sym *fb = fn->fb;
	const int v = GEN_FIT_VARIANTS;
	const struct xk_insn *bi = fn->base->insn, *vi = fn->var[v].insn;
	size_t bn = fn->base->nr, vn = fn->var[v].nr, i, j;
	char why[200];

	if (fn->frame_moved)
		return false;
	for (int f = 0; f < GEN_FIT_VARIANTS; f++) {
		const struct xk_sym *g = fb->twin_v[f];

		if (!g || g->sym.st_size != fb->sym.st_size ||
		    memcmp(xk_func_bytes(g), xk_func_bytes(fb), fb->sym.st_size))
			return false;
	}
	/* the instructions in order, padding aside */
	for (i = skip_padding(bi, bn, 0), j = skip_padding(vi, vn, 0);
	     i < bn && j < vn;
	     i = skip_padding(bi, bn, i + 1), j = skip_padding(vi, vn, j + 1)) {
		/* a relocated jump's text shows where it sits (its rel32 is
		 * the object's 0): the relocations compare below */
		if (strcmp(bi[i].norm, vi[j].norm) &&
		    !same_function_called(fb, &bi[i], fn->var[v].sym, &vi[j]) &&
		    !(bi[i].id == vi[j].id && bi[i].is_branch && bi[i].has_reloc &&
		      vi[j].has_reloc))
			return true;
		if ((bi[i].has_reloc || vi[j].has_reloc) &&
		    !gen_same_relocs(fb, &bi[i], fn->var[v].sym, &vi[j], why,
				     sizeof(why)))
			return true;
	}
	return i < bn || j < vn;
}

static int claim_check_only(struct form_fn *fn, struct xk_scope *t)
{
	const struct gen_input *in = fn->in;
	struct xk_scope_span *sp;
	int err;

	if (fn->nr_seeds || fn->other_diff || in->by_shape ||
	    !only_check_differs(fn))
		return 0;
	err = gen_add_span(t, in, fn->fb, &sp);
	if (err)
		return err;
	span_refuse(sp, "%s differs from the baseline only in the "
		    "check build (N=%lld): the fit builds (N=%lld, "
		    "N=%lld) compile what the baseline does, so no "
		    "span carries what the value changes there",
		    fn->fb->name, (long long)in->variant[GEN_FIT_VARIANTS].value,
		    (long long)in->variant[0].value,
		    (long long)in->variant[1].value);
	return 1;
}

const struct gen_form form_check_only = {
	.name = "check build only",
	.claim = claim_check_only,
};
