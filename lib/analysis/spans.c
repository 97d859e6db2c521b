// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: from a baseline object and variants built with other values of a
 * constant to the spans of a scope table.
 *
 * For each function that differs between the baseline and the variants:
 *   align_variants()     instruction diff against every variant
 *   find_seeds()         baseline instructions whose immediate moved
 *   group_seeds()        seeds of one basic block form one critical span
 *   execute_span()       symbolic execution; grows the span backwards until
 *                        every input it reads is still live at the probe
 *   choose_locations()   register, flags or memory that carry the value
 *   fit_params()         immediate = a*N + b from the two fit variants
 *   locate_imms()        where those immediates lie (for settling)
 *   check_variant()      the fitted program against a third build, by value
 *   place_probe()        probe point, expected bytes, jump-optimizable?
 *                        (place_post(): the span's last instruction, when
 *                        the probe point is a branch target)
 *   slice_forward()      the safe span: every instruction that consumes the
 *                        derived value, and where it ends or escapes
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "dataflow.h"
#include "forms/form.h"
#include "relocs.h"
#include "spans.h"
#include "symexec.h"

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
	struct form_fn fn;			/* what the forms see of it */
};

static void free_ctx(struct func_ctx *c)
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

static int mark_blocks(struct func_ctx *c)
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

static int align_variants(struct func_ctx *c, struct xk_obj *vobj)
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
static bool insn_value(const struct xk_insn *in, int64_t *v)
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
static bool objtool_site(const struct func_ctx *c, size_t i)
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
 * insn_value() reads (the first immediate, a lea's displacement) and the
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

		for (int v = 0; v < nr_v && !objtool_site(c, i); v++) {
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
			if (insn_value(&c->base.insn[i], &vb) &&
			    insn_value(&c->var[v].insn[j], &vv) && vb != vv)
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
			    !objtool_site(c, i)) {
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

/* Runs [start, end] of code; the seeds' immediates become parameters. */
static int run_span_stores(const struct xk_func_code *code, const bool *seed,
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

static int run_span(const struct xk_func_code *code, const bool *seed,
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

/*
 * Executes the span; while it reads an input that it also overwrites (or
 * flags set before it), grows it backwards inside its basic block.
 */
static int grow_span(struct func_ctx *c, struct span_work *w,
		     struct xk_scope_span *sp)
{
	for (int tries = 0; tries < 16; tries++) {
		int err = run_span(&c->base, c->seed, w->start, w->end,
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

static int choose_locations(struct func_ctx *c, struct span_work *w,
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
static int choose_emulated(struct func_ctx *c, struct span_work *w,
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

		if (j < 0 || !insn_value(&c->var[v].insn[j], &y[v])) {
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
static __s64 param_value(int64_t y, unsigned int width)
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
static const char *same_shape_in(const struct func_ctx *c, int v,
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

		if (objtool_site(c, i))
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
		    insn_value(&c->base.insn[i], &yb) &&
		    insn_value(&vc->insn[j], &yv) && yb != yv && !any_imm &&
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

static const char *same_shape(const struct func_ctx *c, int v, char *buf,
			      size_t size)
{
	return same_shape_in(c, v, NULL, false, buf, size);
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
		sp->fit[k][1] = param_value(s->param_imm[k], s->param_width[k]);
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			ssize_t j = i < 0 ? -1 : c->match[v][i];
			int64_t y;

			if (!w->usable[v])
				continue;
			if (j < 0 || !insn_value(&c->var[v].insn[j], &y))
				w->usable[v] = false;
			else
				w->pv[v][k] = param_value(y, s->param_width[k]);
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
static int record_points(const struct func_ctx *c, const struct span_work *w,
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
static int fit_params(struct func_ctx *c, struct span_work *w,
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

static uint64_t rnd(uint64_t *st)
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
static int check_variant(struct func_ctx *c, struct span_work *w,
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
				uint64_t x = rnd(&st);

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
static int check_emulated(struct func_ctx *c, struct span_work *w,
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
			uint64_t x = rnd(&st);

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

static int compile_locations(struct func_ctx *c, struct span_work *w,
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
 * patches those bytes). The rewrite probe then sits on the span's last
 * instruction and rewrites after it (post_len: a kprobe post handler),
 * which needs that instruction to fall through (no branch, call or
 * return) and every path through it to have run the whole span (no branch
 * target after the span's first instruction).
 */
static int place_post(struct func_ctx *c, const struct span_work *w,
		      struct xk_scope_span *sp)
{
	const struct xk_insn *last = &c->base.insn[w->end];

	if (last->is_branch || last->is_call || last->is_ret) {
		span_refuse(sp, "the probe point +0x%lx is %s and the span ends "
			    "in a branch", (unsigned long)c->base.insn[w->end + 1].off,
			    c->base.insn[w->end + 1].unprobeable ?
			    "a site kprobes refuses (a jump label, a BUG)" :
			    "also a branch target");
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

static int place_probe(struct func_ctx *c, struct span_work *w,
		       struct xk_scope_span *sp)
{
	size_t p = w->end + 1, i;
	const struct xk_insn *pi;
	uint64_t win_end;

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
	/* emulated: the probe is the span's start; resuming at a join is fine */
	if (!w->emulate && (c->target[p] || c->base.insn[p].unprobeable) &&
	    place_post(c, w, sp))
		return -ENOTSUP;
	pi = &c->base.insn[p];
	sp->start = c->base.insn[w->start].off;
	sp->probe = pi->off;
	sp->expect_len = pi->off + pi->len - sp->start;
	if (sp->expect_len > XK_MAX_EXPECT) {
		span_refuse(sp, "the span is longer than %d bytes", XK_MAX_EXPECT);
		return -ENOTSUP;
	}
	memcpy(sp->expect, xk_func_bytes(c->fb) + sp->start, sp->expect_len);
	for (uint32_t b = 0; b < sp->expect_len; b++) {
		bool masked = xk_func_reloc_at(c->fb, sp->start + b, 1) ||
			      xk_jump_label_at(c->obj, c->fb, sp->start + b);

		sp->expect_mask[b] = masked ? 0 : 0xff;
	}
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
static int locate_imms(const struct func_ctx *c, const struct span_work *w,
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

/* ---- the pipeline for one function ---- */

/*
 * The rules the module applies to a span (xk/abi): a span that breaks one
 * is refused here, with the rule, never written into a table.
 */
static int obey_rules(struct xk_scope_span *sp)
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

/*
 * One form of a span through the whole pipeline: the exact form (grown
 * until its inputs are live at the probe), or the inverse form (the seeds
 * alone, the result corrected by what the parameters add).
 */
static int analyse_form(struct func_ctx *c, size_t start, size_t end,
			bool inverse, bool mem_inputs, bool emulate,
			struct xk_scope_span *sp)
{
	struct span_work w = { .start = start, .end = end, .inverse = inverse,
			       .mem_inputs = mem_inputs, .emulate = emulate };
	char why_not[200] = "no other build";
	enum xk_span_class cls;
	int err;

	if (emulate) {
		err = run_span_stores(&c->base, c->seed, start, end, true, true,
				      &w.s);
		if (err == -ENOTSUP)
			span_refuse(sp, "symbolic execution: %s", w.s.why);
		err = err ?: choose_emulated(c, &w, sp);
	} else if (inverse) {
		err = run_span(&c->base, c->seed, start, end, false, &w.s);
		if (err == -ENOTSUP)
			span_refuse(sp, "symbolic execution: %s", w.s.why);
		else if (!err && w.s.flags_read_first)
			err = -ENOTSUP;
	} else {
		err = grow_span(c, &w, sp);
	}
	err = err ?: emulate ? 0 : choose_locations(c, &w, sp);
	err = err ?: fit_params(c, &w, sp);
	err = err ?: compile_locations(c, &w, sp);
	err = err ?: place_probe(c, &w, sp);
	cls = sp->cls;
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
		if (w.per_value && !w.usable[v])
			continue;
		err = emulate ? check_emulated(c, &w, sp, v) :
				check_variant(c, &w, sp, v);
		/* per value: a build of another shape gives no point; one of
		 * the baseline's shape that the program misses refuses it */
		if (err == -ENOTSUP && w.per_value &&
		    same_shape(c, v, why_not, sizeof(why_not))) {
			w.usable[v] = false;
			sp->why[0] = '\0';
			sp->cls = cls;
			err = 0;
		}
	}
	for (int v = 0; v < GEN_NR_VARIANTS && !err && w.per_value; v++)
		if (w.usable[v] && same_shape(c, v, why_not, sizeof(why_not)))
			w.usable[v] = false;
	if (!err && w.per_value)
		err = record_points(c, &w, sp, why_not);
	err = err ?: df_slice_forward(&c->base, c->fb->sym.st_size, sp, w.end + 1);
	err = err ?: locate_imms(c, &w, sp);
	err = err ?: obey_rules(sp);
	err = err ?: df_locate_args(&c->base, sp, w.end + 1);
	if (err == -ENOTSUP)
		sp->start = c->base.insn[w.start].off;
	sx_free(&w.s);
	return err;
}

static int analyse_span(struct func_ctx *c, size_t start, size_t end,
			bool emulate, struct xk_scope_span *sp)
{
	struct xk_scope_span first = *sp;
	char inv[sizeof(sp->why)];
	char emu[sizeof(sp->why)];
	int err = analyse_form(c, start, end, false, false, false, sp);

	if (err != -ENOTSUP)
		return err;
	first = *sp;
	sp->why[0] = '\0';
	err = analyse_form(c, start, end, true, false, false, sp);
	if (err != -ENOTSUP)
		return err;
	xk_strlcpy(inv, sp->why, sizeof(inv));
	/*
	 * The exact form again, values read from memory in the span taken as
	 * inputs that the runtime reads at the probe point: so that every
	 * span the other forms support keeps its form (no read per hit)
	 */
	*sp = first;
	sp->why[0] = '\0';
	err = analyse_form(c, start, end, false, true, false, sp);
	if (err != -ENOTSUP)
		return err;
	/* last, the emulated form: its int3 skips the span (never optimized,
	 * never settled, no policy) */
	emu[0] = '\0';
	if (emulate) {
		*sp = first;
		sp->why[0] = '\0';
		err = analyse_form(c, start, end, false, true, true, sp);
		if (err != -ENOTSUP)
			return err;
		xk_strlcpy(emu, sp->why, sizeof(emu));
	}
	/* the reasons of the forms without memory inputs: the exact one first */
	*sp = first;
	snprintf(sp->why + strlen(sp->why), sizeof(sp->why) - strlen(sp->why),
		 "; inverse form: %s; %s", inv, emu);
	return 0;
}

/* ---- readers of a read-only variable the constant initialises ---- */

/* Whether more bytes of span w are filled in by relocations (never
 * compared) than not. */
static bool too_masked(const struct func_ctx *c, const struct span_work *w)
{
	uint64_t from = c->base.insn[w->start].off;
	uint64_t to = c->base.insn[w->end].off + c->base.insn[w->end].len;
	uint64_t masked = 0;

	for (uint64_t b = from; b < to; b++)
		masked += xk_func_reloc_at(c->fb, b, 1);
	return 2 * masked > to - from;
}

/*
 * Runs for the variables form (form_obj.reader_span) on each instruction
 * of function f (of object obj: the shipped module, or the baseline
 * object) that loads a field of a read-only variable the constant
 * initialises: `mov bfq_timeout(%rip), %eax` in bfq_bfqq_served, where
 * another object than the variable's own reads `const int bfq_timeout =
 * HZ / 8`. Its code is the same at every value, so no diff shows it; the
 * loaded value is y0 at the default and fit[0] * N + fit[1] at N (the
 * data's own fit, checked against every build). The span is that one
 * load, its location the register it writes, rewritten at the probe after
 * it as for an immediate (the read-only data itself is never written). 0 with the span added,
 * supported or refused with the reason; -errno on failure.
 */
int gen_reader_span(const struct gen_input *in, const struct xk_obj *obj,
		    const struct xk_sym *f, uint64_t at, const int64_t fit[2],
		    int64_t y0, const char *object, struct xk_scope *t)
{
	struct func_ctx c = { .fb = f, .in = in, .obj = obj };
	struct span_work w = { 0 };
	struct xk_scope_span *sp;
	ssize_t i;
	int err;

	err = xk_disasm_func(f, &c.base) ?: mark_blocks(&c) ?:
	      gen_add_span(t, in, f, &sp);
	if (err)
		goto out;
	xk_strlcpy(sp->object, object, sizeof(sp->object));
	sp->start = at;
	i = xk_code_index(&c.base, at);
	if (i < 0) {
		span_refuse(sp, "+0x%lx: a reader's relocation is inside an "
			    "instruction the disassembly does not start there",
			    (unsigned long)at);
		goto out;
	}
	c.seed[i] = true;
	w.start = w.end = (size_t)i;
	/* the load alone compares fewer bytes than its relocated rel32: the
	 * span takes the instructions before it in its block (which run as
	 * they are), then those after it (the derived value rewritten where
	 * they leave it), until the module's rule (xk_rule_check_expect)
	 * holds */
	while (w.start > 0 && !c.leader[w.start] && too_masked(&c, &w))
		w.start--;
	while (w.end + 2 < c.base.nr && !c.leader[w.end + 1] &&
	       !c.base.insn[w.end + 1].is_branch &&
	       !c.base.insn[w.end + 1].is_call &&
	       !c.base.insn[w.end + 1].is_ret && too_masked(&c, &w))
		w.end++;
	err = sx_init(&w.s);
	if (err)
		goto out;
	w.s.no_mem_inputs = true;
	w.s.seed_is_load = true;
	w.s.seed_load_value = y0;
	for (size_t j = w.start; j <= w.end && !err; j++)
		err = sx_step(&w.s, &c.base.insn[j], c.seed[j]);
	if (err == -ENOTSUP)
		span_refuse(sp, "symbolic execution: %s", w.s.why);
	err = err ?: choose_locations(&c, &w, sp);
	/* the locations' programs read the registers at the probe point:
	 * none the span overwrote */
	for (int l = 0; !err && l < sp->nr_locs; l++)
		for (int r = 0; r < XK_NR_REGS; r++)
			if (w.s.reg_written[r] && sx_reads_reg(w.loc_expr[l], r)) {
				span_refuse(sp, "an input of the span is "
					    "overwritten inside it");
				err = -ENOTSUP;
				break;
			}
	if (!err) {
		sp->nr_params = w.s.nr_params;
		sp->fit[0][0] = fit[0];
		sp->fit[0][1] = fit[1];
	}
	err = err ?: compile_locations(&c, &w, sp);
	err = err ?: place_probe(&c, &w, sp);
	err = err ?: df_slice_forward(&c.base, f->sym.st_size, sp, w.end + 1);
	err = err ?: locate_imms(&c, &w, sp);
	err = err ?: obey_rules(sp);
	err = err ?: df_locate_args(&c.base, sp, w.end + 1);
	if (err == -ENOTSUP) {
		sp->start = c.base.insn[w.start].off;
		err = 0;
	}
	sx_free(&w.s);
out:
	free_ctx(&c);
	return err;
}

/* ---- the multiply form: code that changes with no immediate ---- */

/*
 * The factor k of a region of code whose only result read after it is
 * reg = src * k (the compiler's shifts, lea and add for a multiply by a
 * constant, whose forms change with N): the region run symbolically,
 * every input 0 but src = 1, gives k; the product is then checked on 64
 * random inputs (any dependence on another register, or no product, is
 * refused). -ENOTSUP when it is no such product.
 */
static int region_factor(const struct xk_func_code *code, size_t from,
			 size_t to, int reg, int *src, uint64_t *k, int width,
			 int *pw)
{
	struct sx_state s;
	struct sx_prog p;
	uint64_t st = 0x2545f4914f6cdd1dULL, m = xk_mask(width);
	int err = run_span_stores(code, NULL, from, to, false, true, &s);

	if (err) {
		sx_free(&s);
		return err == -ENOTSUP ? -ENOTSUP : err;
	}
	if (!s.reg_written[reg]) {
		sx_free(&s);
		*src = reg;
		*k = 1;
		*pw = 64;
		return 0;
	}
	err = sx_prog_compile(s.reg[reg], NULL, 0, &p) ? -ENOTSUP : 0;
	/* the product at 64 bits, or at 32 and zero-extended */
	for (int r = 0; r < XK_NR_REGS * 2 && !err; r++) {
		__u64 in[XK_NR_INPUTS] = { 0 };
		uint64_t pm = r < XK_NR_REGS ? ~0ULL : 0xffffffffULL;
		int g = r % XK_NR_REGS;
		bool ok = true;

		if (!s.reg_read_first[g])
			continue;
		in[g] = 1;
		*k = sx_prog_eval(&p, in) & m & pm;
		for (int t = 0; t < 64 && ok; t++) {
			for (int q = 0; q < XK_NR_INPUTS; q++)
				in[q] = rnd(&st);
			ok = (sx_prog_eval(&p, in) & m) == ((in[g] * *k) & pm & m);
		}
		if (ok) {
			*src = g;
			*pw = r < XK_NR_REGS ? 64 : 32;
			sx_prog_free(&p);
			sx_free(&s);
			return 0;
		}
	}
	if (!err)
		sx_prog_free(&p);
	sx_free(&s);
	return -ENOTSUP;
}

/*
 * A region [from, to] of the baseline that changes with N but carries no
 * immediate: when all it leaves that is read after it is one register
 * holding src * k, with k = a*N + b across the builds, it becomes an
 * emulated span whose program is src * (a*N + b): probed at from, the
 * product written, resumed at to + 1. The check against every build is
 * check_emulated's, by value. -ENOTSUP (the span refused) otherwise.
 */
static int multiply_span(struct func_ctx *c, size_t from, size_t to,
			 struct xk_scope_span *sp)
{
	struct span_work w = { .start = from, .end = to, .emulate = true };
	const struct gen_input *in = c->in;
	int reg = -1, src = -1, width = 0, pw = 64, vpw, err;
	uint64_t k[1 + GEN_NR_VARIANTS];
	struct xk_expr *e;

	err = run_span_stores(&c->base, NULL, from, to, false, true, &w.s);
	if (err == -ENOTSUP || (!err && (w.s.has_store || w.s.stored ||
					 w.s.flags_read_first))) {
		span_refuse(sp, "the code changes with the constant but no "
			    "immediate carries it (a different instruction form "
			    "or schedule)");
		err = -ENOTSUP;
		goto out;
	}
	if (err)
		goto out;
	for (int r = 0; r < XK_NR_REGS; r++) {
		int wr;

		if (!w.s.reg_written[r] || !(wr = df_reg_read(&c->base, to + 1, r)))
			continue;
		if (reg >= 0 || r == XK_RSP) {
			reg = -1;
			break;
		}
		reg = r;
		width = wr;
	}
	if (reg < 0 || (!w.s.fl_from_start && df_flags_live(&c->base, to + 1)) ||
	    region_factor(&c->base, from, to, reg, &src, &k[0], width, &pw)) {
		span_refuse(sp, "the code changes with the constant but no "
			    "immediate carries it (a different instruction form "
			    "or schedule; not one product of a register)");
		err = -ENOTSUP;
		goto out;
	}
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		ssize_t vs = c->match[v][from], ve = c->match[v][to + 1];
		int vsrc;

		/* from the instruction after the last one both have: the
		 * variant's form of the multiply may be longer */
		if (from > 0 && c->match[v][from - 1] >= 0)
			vs = c->match[v][from - 1] + 1;
		if (vs < 0 || ve <= vs ||
		    region_factor(&c->var[v], (size_t)vs, (size_t)ve - 1, reg, &vsrc,
				  &k[1 + v], width, &vpw) || vsrc != src) {
			span_refuse(sp, "the code changes with the constant but no "
				    "immediate carries it (with N=%lld not the same "
				    "product)", (long long)in->variant[v].value);
			err = -ENOTSUP;
			goto out;
		}
	}
	/* k = a*N + b at the width read, from the fit builds, then all */
	{
		int64_t dx = in->variant[0].value - in->def;
		int64_t dy = (int64_t)(k[1] - k[0]);

		if (!dx || dy % dx) {
			err = -ENOTSUP;
		} else {
			int64_t a = dy / dx, b = (int64_t)k[0] - a * in->def;

			for (int v = 0; v < GEN_NR_VARIANTS && !err; v++)
				if ((((uint64_t)(a * in->variant[v].value + b)) ^ k[1 + v]) &
				    xk_mask(width) & xk_mask(pw))
					err = -ENOTSUP;
			sp->fit[0][0] = a;
			sp->fit[0][1] = b;
		}
		if (err) {
			span_refuse(sp, "the code changes with the constant but no "
				    "immediate carries it (a multiply by %llu at N=%lld "
				    "that is no a*N+b)", (unsigned long long)k[0],
				    (long long)in->def);
			goto out;
		}
	}
	sp->nr_params = 1;
	sp->nr_locs = 1;
	sp->cls = XK_SPAN_REGISTER;
	sp->locs[0].kind = reg;
	sp->locs[0].width = width;
	e = &sp->locs[0].expr;
	memset(e, 0, sizeof(*e));
	e->len = 3;
	e->insn[0] = (struct xk_expr_insn){ .op = XK_OP_REG, .width = 64, .reg = (__u8)src };
	e->insn[1] = (struct xk_expr_insn){ .op = XK_OP_PARAM, .width = 64,
					    .imm = sp->fit[0][0], .imm2 = sp->fit[0][1] };
	e->insn[2] = (struct xk_expr_insn){ .op = XK_OP_MUL, .width = (__u8)pw };
	snprintf(sp->locs[0].text, sizeof(sp->locs[0].text), "%s * P0 (a multiply "
		 "the compiler emitted as shifts and adds)", xk_reg_name(src));
	err = place_probe(c, &w, sp);
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++)
		err = check_emulated(c, &w, sp, v);
	err = err ?: df_slice_forward(&c->base, c->fb->sym.st_size, sp, w.end + 1);
	err = err ?: obey_rules(sp);
	err = err ?: df_locate_args(&c->base, sp, w.end + 1);
out:
	if (err == -ENOTSUP)
		sp->start = c->base.insn[from].off;
	sx_free(&w.s);
	return err;
}

/* Whether baseline instruction i lies in a supported span added since first. */
static bool covered_by(const struct func_ctx *c, const struct xk_scope *t,
		       int first, size_t i)
{
	uint64_t off = c->base.insn[i].off;

	for (int k = first; k < t->nr_spans; k++)
		if (t->spans[k].cls != XK_SPAN_UNSUPPORTED &&
		    off >= t->spans[k].start && off < t->spans[k].probe)
			return true;
	return false;
}

/*
 * Instructions that change with the constant outside every span (another
 * form or schedule, no immediate that moves): the spans alone would run a
 * kernel built with neither value. Each region of them (a basic block's,
 * a few instructions apart) is a span of the multiply form if it is one,
 * else refused by name. Instructions inside a supported span are its
 * check's business.
 */
static int analyse_regions(struct func_ctx *c, struct xk_scope *t, int first)
{
	int err = 0;

	for (size_t i = 0; i < c->base.nr && !err; i++) {
		struct xk_scope_span *sp;
		size_t end = i;

		if (!c->other[i] || covered_by(c, t, first, i))
			continue;
		for (size_t j = i + 1; j < c->base.nr && j <= end + 3; j++) {
			if (c->leader[j] || covered_by(c, t, first, j))
				break;
			if (c->other[j])
				end = j;
		}
		err = gen_add_span(t, c->in, c->fb, &sp);
		if (err)
			break;
		if (c->base.insn[end].is_branch || c->base.insn[end].is_call ||
		    c->base.insn[end].is_ret || end + 1 >= c->base.nr ||
		    multiply_span(c, i, end, sp) == -ENOTSUP) {
			if (sp->cls != XK_SPAN_UNSUPPORTED || !sp->why[0])
				span_refuse(sp, "the code changes with the constant "
					    "but no immediate carries it (a "
					    "different instruction form or schedule)");
			snprintf(sp->why + strlen(sp->why), sizeof(sp->why) -
				 strlen(sp->why), ": +0x%lx %s", (unsigned long)
				 c->base.insn[i].off, c->base.insn[i].text);
			sp->start = c->base.insn[i].off;
			/* one refusal names the function; no more is needed */
			break;
		}
		i = end;
	}
	return err;
}

/* The register forms for a form (form_fn.analyse_span): runs when a form
 * asks, inside analyse_function's claim loop. */
static int form_analyse_span(struct form_fn *fn, size_t start, size_t end,
			     bool emulate, struct xk_scope_span *sp)
{
	struct func_ctx *c = (struct func_ctx *)((char *)fn -
						 offsetof(struct func_ctx, fn));

	return analyse_span(c, start, end, emulate, sp);
}

static int analyse_function(const struct gen_input *in, const struct xk_obj *obj,
			    const struct xk_sym *fb, struct xk_scope *t)
{
	struct func_ctx c = { .fb = fb, .in = in, .obj = obj };
	bool other_diff;
	ssize_t other;
	int err, first_span = t->nr_spans, nr_seeds;

	err = xk_disasm_func(fb, &c.base) ?: mark_blocks(&c) ?:
	      align_variants(&c, NULL);
	if (err)
		goto out;
	first_span = t->nr_spans;
	c.fn = (struct form_fn){
		.in = in, .obj = obj, .fb = fb, .base = &c.base, .var = c.var,
		.match = c.match, .leader = c.leader, .target = c.target,
		.seed = c.seed, .other = c.other, .first_span = first_span,
		.analyse_span = form_analyse_span,
	};
	if (in->by_shape) {
		char why[192] = "";
		bool any = false;

		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			c.shape[v] = !same_shape_in(&c, v, NULL, true, why, sizeof(why));
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
	c.fn.nr_seeds = nr_seeds;
	c.fn.other_diff = other_diff;
	c.fn.frame_moved = c.frame_moved;
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++) {
		if (!(*f)->claim)
			continue;
		err = (*f)->claim(&c.fn, t);
		if (err > 0) {
			err = 0;
			goto out;
		}
	}
	if (err)
		goto out;
	if (!nr_seeds) {
		/* the code moved, but no immediate carries the constant */
		if (other_diff)
			err = analyse_regions(&c, t, first_span);
		goto out;
	}
	/* seeds of one basic block, a few instructions apart, form one span */
	for (size_t i = 0; i < c.base.nr && !err; i++) {
		struct xk_scope_span *sp;
		size_t end = i;

		if (!c.seed[i])
			continue;
		for (size_t j = i + 1; j < c.base.nr && j <= end + 4; j++) {
			if (c.leader[j])
				break;
			if (c.seed[j])
				end = j;
		}
		err = gen_add_span(t, in, fb, &sp);
		if (err)
			break;
		/* a group is emulated only when no split works: an emulated
		 * probe is int3 and never optimized */
		err = analyse_span(&c, i, end, end == i, sp);
		/*
		 * A group that fails as one span may work as one span per seed:
		 * each probe then rewrites its own seed's result, and the code
		 * between them computes with the rewritten values.
		 */
		if (!err && sp->cls == XK_SPAN_UNSUPPORTED && end > i) {
			struct xk_scope_span group = *sp;
			int first = t->nr_spans - 1, bad = 0;

			t->nr_spans--;
			for (size_t j = i; j <= end && !err; j++) {
				if (!c.seed[j])
					continue;
				err = gen_add_span(t, in, fb, &sp);
				if (err)
					break;
				err = analyse_span(&c, j, j, true, sp);
				bad += sp->cls == XK_SPAN_UNSUPPORTED;
			}
			if (!err && bad) {
				/* the group emulated, else as it was */
				t->nr_spans = first + 1;
				sp = &t->spans[first];
				memset(sp, 0, sizeof(*sp));
				memcpy(sp->object, group.object, sizeof(sp->object));
				memcpy(sp->func, group.func, sizeof(sp->func));
				sp->func_size = group.func_size;
				memset(sp->arg_reg, -1, sizeof(sp->arg_reg));
				err = analyse_span(&c, i, end, true, sp);
				if (!err && sp->cls == XK_SPAN_UNSUPPORTED)
					*sp = group;
			}
		}
		i = end;
	}
	if (!err && other_diff)
		err = analyse_regions(&c, t, first_span);
out:
	/* every path's spans: seeds, regions, emulated, by shape, a form's */
	c.fn.frame_moved = c.frame_moved;
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->finish)
			err = (*f)->finish(&c.fn, t);
	free_ctx(&c);
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
	struct form_obj fo = { .in = in, .base = &base, .var = var,
			       .reader_span = gen_reader_span };

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

/*
 * Span sp's parameters in the build of in->variant[0]: its function must
 * have the baseline's shape, the span's symbolic execution must find the
 * parameters the table names, and the program with that build's
 * immediates must compute what that build's own span computes, on the
 * same 256 inputs as xk gen's checks. -ENOTSUP with the reason in why.
 */
static int point_of_span(const struct gen_input *in, const struct xk_obj *base,
			 const struct xk_scope *t, const struct xk_scope_span *sp,
			 __s64 *params, char *why, size_t why_size)
{
	struct xk_obj *bo = (struct xk_obj *)base;
	struct xk_sym *f = gen_span_function(bo, sp);
	struct func_ctx c = { .fb = f, .in = in, .obj = base };
	struct span_work w = { .per_value = true };
	struct xk_scope_span check = *sp;
	char shape[192];
	bool *seed = NULL;
	ssize_t start, probe;
	int err;

	if (!f || !f->twin) {
		snprintf(why, why_size, "%s is not in both builds", sp->func);
		return -ENOTSUP;
	}
	err = xk_disasm_func(f, &c.base) ?: xk_disasm_func(f->twin, &c.var[0]);
	if (err)
		goto out;
	c.match[0] = calloc(c.base.nr ? c.base.nr : 1, sizeof(ssize_t));
	seed = calloc(c.base.nr + 1, sizeof(bool));
	if (!c.match[0] || !seed) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	err = xk_align(&c.base, &c.var[0], c.match[0]);
	if (err)
		goto out;
	if (same_shape_in(&c, 0, t, false, shape, sizeof(shape))) {
		snprintf(why, why_size, "%s", shape);
		err = -ENOTSUP;
		goto out;
	}
	start = xk_code_index(&c.base, sp->start);
	probe = xk_code_index(&c.base, sp->probe);
	for (int k = 0; k < sp->nr_params; k++) {
		ssize_t i = xk_code_index(&c.base, sp->param_insn[k]);

		if (i >= 0)
			seed[i] = true;
	}
	if (start < 0 || probe <= start) {
		snprintf(why, why_size, "the span is not on instruction boundaries "
			 "of the baseline");
		err = -ENOTSUP;
		goto out;
	}
	w.start = (size_t)start;
	w.end = (size_t)probe - 1;
	err = run_span(&c.base, seed, w.start, w.end, sp->nr_mem_in > 0, &w.s);
	if (err == -ENOTSUP || (!err && w.s.nr_params != sp->nr_params)) {
		snprintf(why, why_size, "the span's symbolic execution no longer "
			 "finds its %d parameters", sp->nr_params);
		err = -ENOTSUP;
		goto out;
	}
	if (err)
		goto out;
	w.usable[0] = true;
	for (int k = 0; k < sp->nr_params; k++) {
		ssize_t i = xk_code_index(&c.base, w.s.param_off[k]);
		ssize_t j = i < 0 ? -1 : c.match[0][i];
		int64_t y;

		if (w.s.param_off[k] != sp->param_insn[k] || j < 0 ||
		    !insn_value(&c.var[0].insn[j], &y)) {
			snprintf(why, why_size, "parameter %d (+0x%llx) has no "
				 "immediate in that build", k,
				 (unsigned long long)sp->param_insn[k]);
			err = -ENOTSUP;
			goto out;
		}
		w.pv[0][k] = param_value(y, w.s.param_width[k]);
	}
	err = check_variant(&c, &w, &check, 0);
	if (err == -ENOTSUP) {
		snprintf(why, why_size, "%s", check.why);
		goto out;
	}
	if (!err)
		memcpy(params, w.pv[0], sizeof(w.pv[0]));
out:
	sx_free(&w.s);
	free(seed);
	free_ctx(&c);
	return err;
}

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
		if (*form)
			err = (*form)->point(in, t, &base, &var, sp, rows[i], why,
					     sizeof(why));
		else	/* the register forms' */
			err = point_of_span(in, &base, t, sp, rows[i], why,
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
