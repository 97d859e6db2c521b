// SPDX-License-Identifier: GPL-2.0
/*
 * Form: replayed. A function whose code changes with the
 * constant in another schedule or register allocation at every value (a
 * multiply by 10 is lea and add, by 11 two leas with other registers, the
 * compare that follows reads another register) has no immediate to rewrite
 * and no affine or per-value program of the baseline's registers. But its
 * builds differ only in short straight-line regions, the code around them
 * identical. Running the baseline's code outside them and, in each, what
 * the build with the value in force computes there, from the same
 * registers, is running that build: the state after each region is the
 * variant's, and so is all the code that follows.
 *
 *   diff_regions()     the variant against the baseline: regions where they
 *                      differ, the rest identical (relocations and branch
 *                      targets alike), no branch into a region
 *   replay_function()  the regions of every value merged, one span each;
 *   replay_region()    a value's code of a region, symbolically executed:
 *                      every register (and the flags, when read after)
 *                      as a program of the registers at the region's start
 *   region_span()      the spans: probed at each region's start, the
 *                      module writes the value's replay and resumes at the
 *                      region's end; the safe span is the whole function
 *                      (between two regions the registers are the
 *                      variant's: a thread runs all of them at one value)
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "dataflow.h"
#include "form.h"
#include "redo.h"
#include "symexec.h"

bool gen_replay_off;

/* A region: baseline instructions [b0, b1) replaced by variant [v0, v1). */
struct region {
	size_t b0, b1, v0, v1;
};

/* Whether two instructions are the same but for a branch target in f. */
static bool same_insn(const struct xk_sym *fb, const struct xk_insn *a,
		      const struct xk_sym *fv, const struct xk_insn *b)
{
	const struct xk_rela *ra = xk_insn_rela(fb, a), *rb = xk_insn_rela(fv, b);
	/* a relocated branch (a tail call, the return thunk): its text shows
	 * where the placeholder points, the relocation says where it goes */
	bool far = ra && rb && a->is_branch == b->is_branch &&
		   (a->is_branch || a->is_ret) && a->id == b->id && a->len == b->len;

	if ((!far && strcmp(a->norm, b->norm)) || !ra != !rb)
		return false;
	if (!ra)
		return true;
	return ra->type == rb->type && ra->addend == rb->addend &&
	       ra->offset - fb->sym.st_value - a->off ==
		       rb->offset - fv->sym.st_value - b->off &&
	       ra->sym && rb->sym && !strcmp(ra->sym->name, rb->sym->name);
}

/*
 * The function an unrelocated call or jump of f into another function
 * lands in (the assembler resolves those to a static function of the same
 * section), and the offset there; NULL when none is found.
 */
static const char *dest_name(const struct xk_obj *o, const struct xk_sym *f,
			     const struct xk_insn *in, uint64_t *at)
{
	uint64_t abs = f->sym.st_value + (uint64_t)in->target;

	for (size_t i = 0; i < o->nr_syms; i++) {
		const struct xk_sym *g = &o->syms[i];

		if (g->is_func && g->sec == f->sec && abs >= g->sym.st_value &&
		    abs < g->sym.st_value + (g->sym.st_size ? g->sym.st_size : 1)) {
			*at = abs - g->sym.st_value;
			return g->name;
		}
	}
	return NULL;
}

/*
 * What the replayed form cannot follow in a function of object o: an
 * exception-table entry (a fixup may land inside a region, and is not
 * compared), an indirect jump (a table's targets are not known), a
 * relocated branch to anything but a function's start, an external
 * symbol or a static_cpu_has() site (a branch inside the function, see
 * disasm.c) (a .cold part runs on the variant's registers but is not
 * diffed, and the thread comes back into the function), a conditional
 * jump into another function. NULL, or why.
 */
static const char *unfollowable(const struct xk_obj *o, const struct xk_sym *f,
				const struct xk_func_code *code, char *buf,
				size_t size)
{
	if (xk_func_has_extable(o, f))
		return "the function has exception-table entries";
	if (gen_init_code(f))
		return "the function is boot-time code (freed after boot)";
	return df_unfollowable_branch(f, code, buf, size);
}

/* Whether an instruction reads and whether it writes the flags. */
static void flags_access(const struct xk_insn *in, bool *reads, bool *writes)
{
	*reads = *writes = false;
	for (int k = 0; k < in->nr_read; k++)
		*reads |= in->regs_read[k] == X86_REG_EFLAGS;
	for (int k = 0; k < in->nr_write; k++)
		*writes |= in->regs_write[k] == X86_REG_EFLAGS;
}

/* Whether instructions [from, to) of code read flags before they set them. */
static bool flags_live_in(const struct xk_func_code *code, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		bool reads, writes;

		flags_access(&code->insn[i], &reads, &writes);
		if (reads)
			return true;
		if (writes)
			return false;
	}
	return false;
}

/* Whether insn i of code is the target of a branch of code. */
static bool *branch_targets(const struct xk_func_code *code)
{
	bool *t = calloc(code->nr + 1, sizeof(bool));

	for (size_t i = 0; t && i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		ssize_t k = in->target >= 0 && !in->is_call ?
			    xk_code_index(code, in->target) : -1;

		if (k >= 0)
			t[k] = true;
	}
	return t;
}

/*
 * The regions where variant V differs from baseline B (fb, fv their
 * symbols): -ENOTSUP with why when the rest is not identical (a branch
 * whose targets do not correspond, one into a region) or a region is not
 * straight-line code. *nr regions in *out (malloc'd).
 */
static int diff_regions(const struct xk_obj *ob, const struct xk_func_code *B,
			const struct xk_sym *fb, const struct xk_obj *ov,
			const struct xk_func_code *V, const struct xk_sym *fv,
			struct region **out, size_t *nr, char *why, size_t size)
{
	ssize_t *match = calloc(B->nr + 1, sizeof(ssize_t));
	ssize_t *eq = calloc(B->nr + 1, sizeof(ssize_t));	/* B -> V, equal */
	ssize_t *veq = calloc(V->nr + 1, sizeof(ssize_t));	/* V -> B */
	bool *bt = branch_targets(B), *vt = branch_targets(V);
	struct region *r = NULL;
	size_t n = 0, i, j, pi = 0, pj = 0;
	int err = 0;

	*out = NULL;
	*nr = 0;
	if (!match || !eq || !veq || !bt || !vt) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	{
		char buf[320];
		const char *bad = unfollowable(ob, fb, B, buf, sizeof(buf));

		if (!bad)
			bad = unfollowable(ov, fv, V, buf, sizeof(buf));
		if (bad) {
			snprintf(why, size, "%s", bad);
			err = -ENOTSUP;
			goto out;
		}
	}
	err = xk_align(B, V, match);
	if (err)
		goto out;
	for (j = 0; j <= V->nr; j++)
		veq[j] = -1;
	for (i = 0; i < B->nr; i++) {
		const struct xk_insn *a = &B->insn[i], *b;
		uint64_t at_a = 0, at_b = 0;
		const char *na, *nb;

		eq[i] = -1;
		if (match[i] < 0)
			continue;
		b = &V->insn[match[i]];
		if (!same_insn(fb, a, fv, b) ||
		    df_leaves_function(fb, a) != df_leaves_function(fv, b))
			continue;
		/* a call or jump to another function: the same one */
		if (df_leaves_function(fb, a)) {
			na = dest_name(ob, fb, a, &at_a);
			nb = dest_name(ov, fv, b, &at_b);
			if (!na || !nb || strcmp(na, nb) || at_a != at_b)
				continue;
		}
		eq[i] = match[i];
		veq[match[i]] = (ssize_t)i;
	}
	eq[B->nr] = (ssize_t)V->nr;	/* both ends correspond */
	veq[V->nr] = (ssize_t)B->nr;
	r = calloc(B->nr + 1, sizeof(*r));
	if (!r) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	/* the gaps between corresponding instructions */
	for (i = 0; i <= B->nr; i++) {
		if (eq[i] < 0)
			continue;
		if (i > pi || (size_t)eq[i] > pj)
			r[n++] = (struct region){ pi, i, pj, (size_t)eq[i] };
		pi = i + 1;
		pj = (size_t)eq[i] + 1;
	}
	/* a region with no baseline instruction takes the next one along */
	for (size_t k = 0; k < n; k++) {
		if (r[k].b0 < r[k].b1)
			continue;
		if (r[k].b1 >= B->nr) {
			snprintf(why, size, "the build adds code at the function's end");
			err = -ENOTSUP;
			goto out;
		}
		r[k].b1++;	/* a corresponding one: no other region's */
		r[k].v1++;
	}
	/* a region that reads flags set before it (a cmov after the compare)
	 * starts at the compare: the common instructions before it join */
	for (size_t k = 0; k < n; k++) {
		while (flags_live_in(B, r[k].b0, r[k].b1) ||
		       flags_live_in(V, r[k].v0, r[k].v1)) {
			size_t b = r[k].b0 - 1;

			if (!r[k].b0 || !r[k].v0 || bt[r[k].b0] || vt[r[k].v0] ||
			    (k && b < r[k - 1].b1) || eq[b] != (ssize_t)r[k].v0 - 1 ||
			    B->insn[b].is_branch || B->insn[b].is_call ||
			    B->insn[b].is_ret) {
				snprintf(why, size, "+0x%llx: a region reads flags "
					 "set before it",
					 (unsigned long long)B->insn[r[k].b0].off);
				err = -ENOTSUP;
				goto out;
			}
			r[k].b0--;
			r[k].v0--;
		}
	}
	/* the code around the regions corresponds, branches included */
	for (i = 0; i < B->nr; i++) {
		const struct xk_insn *a = &B->insn[i], *b;
		ssize_t ta, tb;

		if (eq[i] < 0 || a->target < 0 || a->is_call || df_leaves_function(fb, a))
			continue;
		b = &V->insn[eq[i]];
		ta = xk_code_index(B, a->target);
		tb = b->target < 0 ? -1 : xk_code_index(V, b->target);
		if (ta < 0 && tb < 0)
			continue;
		if (ta >= 0 && tb >= 0 && eq[ta] == tb)
			continue;
		for (size_t k = 0; k < n; k++)
			if (ta >= 0 && tb >= 0 && (size_t)ta == r[k].b0 &&
			    (size_t)tb == r[k].v0)
				goto next;
		snprintf(why, size, "+0x%llx %s branches elsewhere in the build",
			 (unsigned long long)a->off, a->text);
		err = -ENOTSUP;
		goto out;
next:;
	}
	for (size_t k = 0; k < n; k++) {
		for (i = r[k].b0; i < r[k].b1; i++) {
			const struct xk_insn *a = &B->insn[i];

			if ((i > r[k].b0 && bt[i]) || a->is_branch || a->is_call ||
			    a->is_ret) {
				snprintf(why, size, "+0x%llx %s: a region of the "
					 "build %s", (unsigned long long)a->off,
					 a->text, bt[i] ? "is entered in its middle" :
					 "branches");
				err = -ENOTSUP;
				goto out;
			}
		}
		for (j = r[k].v0; j < r[k].v1; j++) {
			const struct xk_insn *b = &V->insn[j];

			if ((j > r[k].v0 && vt[j]) || b->is_branch || b->is_call ||
			    b->is_ret) {
				snprintf(why, size, "%s in a region of the build %s",
					 b->text, vt[j] ? "is a branch target" :
					 "branches");
				err = -ENOTSUP;
				goto out;
			}
		}
	}
	*out = r;
	*nr = n;
	r = NULL;
out:
	free(r);
	free(match);
	free(eq);
	free(veq);
	free(bt);
	free(vt);
	return err;
}

/*
 * Whether the flags are dead after baseline instruction index at: some
 * instruction sets them all before any reads them on the path from there
 * (unconditional jumps followed, at most 256 instructions), or a call or
 * return comes first (the compiler keeps no flags live across either).
 */
static bool flags_dead(const struct xk_func_code *B, size_t at)
{
	int steps = 0;

	for (size_t i = at; i < B->nr && steps++ < 256; i++) {
		const struct xk_insn *in = &B->insn[i];
		bool reads, writes;

		flags_access(in, &reads, &writes);
		if (reads)
			return false;
		/* only these set every flag a later test may read (inc and
		 * dec keep CF, bt sets CF alone, a shift by cl may set none) */
		if (writes && (in->id == X86_INS_CMP || in->id == X86_INS_TEST ||
			       in->id == X86_INS_ADD || in->id == X86_INS_SUB ||
			       in->id == X86_INS_AND || in->id == X86_INS_OR ||
			       in->id == X86_INS_XOR || in->id == X86_INS_NEG))
			return true;
		if (in->is_call || in->is_ret)
			return true;
		/* an unconditional jump in the function: on at its target
		 * (a conditional one reads the flags: above) */
		if (in->is_branch && !in->is_cond && in->target >= 0 &&
		    xk_code_index(B, in->target) >= 0) {
			i = (size_t)xk_code_index(B, in->target) - 1;
			continue;
		}
		if (in->is_branch)
			return false;
	}
	return false;	/* the function's end, or a long way: live */
}

/*
 * The replay of variant instructions [v0, v1) of V, to resume at baseline
 * instruction b1 of B: every general register it changes and, when read
 * after, the flags, each a program of the registers at its start and of
 * at most XK_MAX_MEM_INPUTS values it loads. -ENOTSUP with why.
 */
static int replay_region(const struct xk_func_code *B, size_t b1,
			 const struct xk_func_code *V, size_t v0, size_t v1,
			 struct xk_scope_replay *rp, char *why, size_t size)
{
	static const int64_t no_fit[XK_MAX_PARAMS][2];
	struct sx_state s;
	int err;

	uint32_t written = 0;		/* registers written so far */
	int stores = 0, base = -1;
	const char *store_text = "";

	err = sx_init(&s);
	if (err)
		return err;
	s.all_stores = true;	/* a constant stored is the store too */
	for (size_t j = v0; j < v1 && !err; j++) {
		const struct xk_insn *in = &V->insn[j];

		/* stores, each through a register unchanged since the start:
		 * the module writes them there, in this order, where the
		 * baseline's span stores (xk_rule_replay_stores) */
		for (int k = 0; k < in->x86.op_count; k++) {
			const cs_x86_op *op = &in->x86.operands[k];

			/* capstone marks test's and cmp's operand written */
			if (op->type != X86_OP_MEM || !(op->access & CS_AC_WRITE) ||
			    in->id == X86_INS_TEST || in->id == X86_INS_CMP ||
			    in->id == X86_INS_BT)
				continue;
			base = xk_gpr(op->mem.base, NULL, NULL);
			store_text = in->text;
			if (++stores > XK_REPLAY_MAX_STORES || base < 0 ||
			    (written >> base) & 1 ||
			    op->mem.index != X86_REG_INVALID ||
			    op->mem.segment != X86_REG_INVALID) {
				snprintf(why, size, "%s: the build's region writes "
					 "memory other than up to %d [register + "
					 "disp] whose register it has not changed",
					 in->text, XK_REPLAY_MAX_STORES);
				err = -ENOTSUP;
			}
		}
		for (int k = 0; k < in->nr_write && !err; k++) {
			int g = xk_gpr(in->regs_write[k], NULL, NULL);

			if (g >= 0)
				written |= 1u << g;
		}
		if (err)
			break;

		/* a NOP of more than a byte may be a site the kernel patches */
		if (in->has_reloc || in->rip_relative ||
		    (in->id == X86_INS_NOP && in->len > 1)) {
			snprintf(why, size, "%s: relocated, rip-relative or a "
				 "patchable site", in->text);
			err = -ENOTSUP;
			break;
		}
		err = sx_step(&s, in, false);
		if (err == -ENOTSUP)
			snprintf(why, size, "%s", s.why);
	}
	/* every store the instructions make is one the model recorded, by
	 * the register the instruction names */
	if (!err && stores && (s.nr_stores != stores || s.st_base != base)) {
		snprintf(why, size, "%s: the build's region writes memory the "
			 "model does not name", store_text);
		err = -ENOTSUP;
	}
	for (int k = 0; !err && k < stores; k++) {
		struct xk_scope_loc *l = &rp->locs[rp->nr_locs];

		l->kind = XK_LOC_MEM;
		l->base = s.stores[k].base;
		l->disp = s.stores[k].disp;
		l->width = s.stores[k].width;
		if (l->base < 0 || l->base >= XK_NR_REGS ||
		    sx_compile(s.stores[k].val, no_fit, &l->expr)) {
			snprintf(why, size, "the value the build's region stores is "
				 "no program the module runs");
			err = -ENOTSUP;
		} else {
			sx_print(s.stores[k].val, l->text, sizeof(l->text));
			rp->nr_locs++;
		}
	}
	if (!err && s.reg_written[XK_RSP]) {
		snprintf(why, size, "the build's region moves the stack pointer");
		err = -ENOTSUP;
	}
	for (int g = 0; g < XK_NR_REGS && !err; g++) {
		const struct sx *e = s.reg[g];
		struct xk_scope_loc *l;

		if (!s.reg_written[g] || (e->kind == SX_REG && e->reg == g &&
					  e->width == 64))
			continue;
		if (rp->nr_locs == XK_REPLAY_MAX_LOCS) {
			snprintf(why, size, "the build's region changes more than "
				 "%d registers", XK_REPLAY_MAX_LOCS);
			err = -ENOTSUP;
			break;
		}
		l = &rp->locs[rp->nr_locs];
		l->kind = g;
		l->width = 64;
		err = sx_compile(e, no_fit, &l->expr);
		if (err) {
			snprintf(why, size, "%s in the build's region is no program "
				 "the module runs (%s)", xk_reg_name(g),
				 err == -E2BIG ? "too long" : "an unknown input");
			err = -ENOTSUP;
			break;
		}
		sx_print(e, l->text, sizeof(l->text));
		rp->nr_locs++;
	}
	if (!err && !s.fl_from_start && !flags_dead(B, b1)) {
		struct sx *e = sx_flags(&s);
		struct xk_scope_loc *l = &rp->locs[rp->nr_locs];

		if (!e || rp->nr_locs == XK_REPLAY_MAX_LOCS ||
		    sx_compile(e, no_fit, &l->expr)) {
			snprintf(why, size, "the flags the build's region leaves "
				 "are read after it, and not modelled");
			err = -ENOTSUP;
		} else {
			l->kind = XK_LOC_FLAGS;
			l->width = 64;
			sx_print(e, l->text, sizeof(l->text));
			rp->nr_locs++;
		}
	}
	rp->nr_mem_in = 0;
	for (int k = 0; !err && k < s.nr_mem_in; k++) {
		rp->mem_in[k].base = s.mem_in[k].base;
		rp->mem_in[k].disp = s.mem_in[k].disp;
		rp->mem_in[k].width = s.mem_in[k].width;
		rp->mem_in[k].index = s.mem_in[k].index;
		rp->mem_in[k].scale = s.mem_in[k].scale;
		rp->nr_mem_in++;
	}
	sx_free(&s);
	return err;
}

/* The variant index that corresponds to baseline index x (regions r of one
 * value), given x starts a region of them or corresponds itself. */
static ssize_t variant_index(const struct region *r, size_t nr,
			     const ssize_t *eq, size_t x)
{
	for (size_t k = 0; k < nr; k++)
		if (r[k].b0 == x)
			return (ssize_t)r[k].v0;
	return eq[x];
}

/* Baseline index -> variant index of the instructions that correspond
 * (outside the regions), -1 elsewhere; [B->nr] the end. */
static ssize_t *correspondence(const struct xk_func_code *B,
			       const struct region *r, size_t nr, size_t vnr)
{
	ssize_t *eq = malloc((B->nr + 1) * sizeof(ssize_t));
	size_t i, k = 0;
	ssize_t d = 0;

	if (!eq)
		return NULL;
	for (i = 0; i <= B->nr; i++) {
		while (k < nr && r[k].b1 <= i) {
			d = (ssize_t)r[k].v1 - (ssize_t)r[k].b1;
			k++;
		}
		eq[i] = k < nr && i >= r[k].b0 ? -1 : (ssize_t)i + d;
	}
	eq[B->nr] = (ssize_t)vnr;
	return eq;
}

struct replay_value {
	int64_t n;
	struct xk_func_code code;
	struct region *r;
	size_t nr;
	ssize_t *eq;
	bool ok;
	bool diffed;	/* its code differs in straight-line regions only */
	char why[256];
	char why_merged[256];	/* ... before the second merge was tried */
};

/* One span per merged region, its expected bytes as place_probe's. */
static int region_span(const struct xk_obj *obj, const struct xk_sym *fb,
		       const struct xk_func_code *B, size_t b0, size_t b1,
		       struct xk_scope_span *sp, char *why, size_t size)
{
	const struct xk_insn *pi = &B->insn[b1];
	unsigned int alt_len;
	int nr_exits = 0;
	uint64_t site;

	/* kprobes refuses a jump-label or BUG site: the module could not
	 * check the resume point (insn_boundary) */
	if (pi->unprobeable) {
		snprintf(why, size, "the region of +0x%llx resumes at %s",
			 (unsigned long long)B->insn[b0].off, pi->jump_label ?
			 "a jump-label site" : "a BUG or WARN site");
		return -ENOTSUP;
	}
	sp->cls = XK_SPAN_REGISTER;
	sp->emulate = XK_EMULATE_REPLAY;
	sp->start = B->insn[b0].off;
	sp->probe = pi->off;
	sp->expect_len = (uint32_t)(pi->off + pi->len - sp->start);
	if (sp->expect_len > XK_MAX_EXPECT) {
		snprintf(why, size, "a region of +0x%llx is longer than %d bytes",
			 (unsigned long long)sp->start, XK_MAX_EXPECT);
		return -ENOTSUP;
	}
	if ((alt_len = xk_alternative_in(obj, fb, sp->start, sp->probe, &site))) {
		snprintf(why, size, "an alternative's site at +0x%llx (%u bytes) lies "
			 "in the region of +0x%llx: the kernel may replace it at "
			 "boot or load, by the CPU's features",
			 (unsigned long long)site, alt_len, (unsigned long long)sp->start);
		return -ENOTSUP;
	}
	memcpy(sp->expect, xk_func_bytes(fb) + sp->start, sp->expect_len);
	xk_func_fixed_bytes(obj, fb, sp->start, sp->expect_len, sp->expect_mask);
	if (pi->has_reloc && (pi->is_call || pi->is_branch || pi->is_ret))
		memset(sp->expect_mask + (pi->off - sp->start), 0, pi->len);
	sp->optimizable = false;
	/* the safe span: the whole function, left at its returns */
	sp->nr_ranges = 1;
	sp->ranges[0][0] = 0;
	sp->ranges[0][1] = sp->func_size;
	for (size_t i = 0; i < B->nr; i++) {
		/* a return, a tail call (relocated jumps are marked returns),
		 * an unconditional jump into a static function */
		if (!B->insn[i].is_ret &&
		    !(B->insn[i].is_branch && !B->insn[i].is_cond &&
		      df_leaves_function(fb, &B->insn[i])))
			continue;
		if (nr_exits == df_limits.exits) {
			snprintf(why, size, "the safe span (the function) has more "
				 "exits than the %d a table may hold", df_limits.exits);
			return -ENOTSUP;
		}
		sp->exits[nr_exits++] = B->insn[i].off;
	}
	sp->nr_exits = nr_exits;
	sp->escapes = XK_ESCAPE_STORE | XK_ESCAPE_CALL | XK_ESCAPE_RET;
	sp->slice_len = (uint32_t)B->nr;
	return 0;
}

/*
 * -ENOTSUP with why when what replayed span s writes reaches an
 * allocator's argument (df_slice_forward's heap check, XK_WHY_HEAP): the
 * registers any of its replays writes, followed from its resume point as
 * a span of the first form's would be. The slice is only that check: the
 * safe span stays the whole function.
 */
static int sizes_no_heap_object(const struct xk_func_code *B,
				const struct xk_sym *fb,
				const struct xk_scope_span *s, char *why, size_t size)
{
	struct xk_scope_span *tmp = calloc(1, sizeof(*tmp));
	ssize_t probe = xk_code_index(B, s->probe);
	int err = 0;

	if (!tmp)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	/* one location at a time: the slice of a union is the union of
	 * the slices (taint only joins) */
	for (int j = 0; j < s->nr_replays && !err && probe >= 0; j++) {
		for (int l = 0; l < s->replays[j].nr_locs && !err; l++) {
			const struct xk_scope_loc *loc = &s->replays[j].locs[l];

			if (loc->kind == XK_LOC_MEM)
				continue;
			memset(tmp, 0, sizeof(*tmp));
			memcpy(tmp->func, s->func, sizeof(tmp->func));
			tmp->locs[0] = *loc;
			tmp->nr_locs = 1;
			err = df_slice_forward(B, fb->sym.st_size, tmp, (size_t)probe);
			if (err == -ENOTSUP && strstr(tmp->why, XK_WHY_HEAP))
				xk_strlcpy(why, tmp->why, size);
			else if (err == -ENOTSUP)
				err = 0;	/* a limit of the slice: no finding */
		}
	}
	free(tmp);
	return err;
}

/* Whether some branch of B lands on instruction i. */
static bool branch_target_of(const struct xk_func_code *B, size_t i)
{
	for (size_t k = 0; k < B->nr; k++)
		if (B->insn[k].target == (int64_t)B->insn[i].off && !B->insn[k].is_call)
			return true;
	return false;
}

/*
 * Whether replay r passes the module's checks at baseline instructions
 * [a, b): its shape (xk_ioc_replay_check), and each store one those
 * instructions make (xk_rule_replay_stores). The bytes of an instruction
 * that is relocated or a jump-label site are all uncompared here, more
 * than the span's own mask leaves (region_span), so what passes here
 * passes there too; [a, b) fits a span's compared bytes.
 */
static bool stores_where_baseline_does(const struct xk_func_code *B, size_t a,
				       size_t b, const struct xk_scope_replay *r)
{
	uint8_t bytes[XK_MAX_EXPECT], mask[XK_MAX_EXPECT];
	struct xk_ioc_replay *d;
	uint32_t n = 0;
	bool ok;

	for (size_t i = a; i < b; i++) {
		const struct xk_insn *in = &B->insn[i];

		if (n + in->len > XK_MAX_EXPECT)
			return false;
		memcpy(bytes + n, in->bytes, in->len);
		memset(mask + n, in->has_reloc || in->jump_label ? 0 : 0xff,
		       in->len);
		n += in->len;
	}
	d = malloc(sizeof(*d));
	if (!d)
		return false;
	xk_scope_replay_to_ioc(r, d);
	ok = !xk_ioc_replay_check(d) &&
	     !xk_rule_replay_stores(bytes, mask, B->insn[a].off,
				    B->insn[a].off + n, d);
	free(d);
	return ok;
}

/* How many of the values replay baseline instructions [a, b) (each value's
 * build there: the instructions that correspond, its regions inside), each
 * storing only where [a, b) stores. */
static int replaying(const struct xk_func_code *B, struct replay_value *rv,
		     int nr_values, size_t a, size_t b)
{
	int n = 0;

	for (int v = 0; v < nr_values; v++) {
		struct xk_scope_replay r = { .n = rv[v].n };
		char why[256];
		ssize_t v0, v1;

		if (!rv[v].ok)
			continue;
		v0 = variant_index(rv[v].r, rv[v].nr, rv[v].eq, a);
		v1 = variant_index(rv[v].r, rv[v].nr, rv[v].eq, b);
		if (v0 >= 0 && v1 >= v0 &&
		    !replay_region(B, b, &rv[v].code, (size_t)v0, (size_t)v1, &r,
				   why, sizeof(why)) &&
		    stores_where_baseline_does(B, a, b, &r))
			n++;
	}
	return n;
}

/*
 * The replayed form of function fb: its builds with values[v] (fv[v] in
 * vobj[v], NULL when absent) differ from the baseline only in
 * straight-line regions: one span per region, replayed at every value
 * whose regions all replay (one at least). Appends those spans to t, or
 * one refused span naming why.
 */
static int replay_function(const struct gen_input *in, const struct xk_obj *obj,
			   const struct xk_sym *fb, int nr_values,
			   const struct xk_obj *const *vobj,
			   const struct xk_sym *const *fv, const int64_t *values,
			   struct xk_scope *t)
{
	struct replay_value *rv = calloc(nr_values ? nr_values : 1, sizeof(*rv));
	struct xk_func_code B = { 0 };
	size_t *lo = NULL, *hi = NULL, nr = 0;
	struct xk_scope_span *sp;
	char why[320] = "";
	int err, first = t->nr_spans, good = 0;
	bool retried = false;

	if (!rv)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = xk_disasm_func(fb, &B);
	if (err)
		goto out;
	lo = calloc(B.nr + 1, sizeof(size_t));
	hi = calloc(B.nr + 1, sizeof(size_t));
	if (!lo || !hi) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	/* each value's regions; a value whose code differs otherwise is not
	 * prepared (its build is refused by name when it is set) */
	for (int v = 0; v < nr_values && !err; v++) {
		rv[v].n = values[v];
		if (!fv[v]) {
			snprintf(rv[v].why, sizeof(rv[v].why), "%s is not in the "
				 "build", fb->name);
			continue;
		}
		err = xk_disasm_func(fv[v], &rv[v].code);
		if (err)
			break;
		err = diff_regions(obj, &B, fb, vobj[v], &rv[v].code, fv[v],
				   &rv[v].r, &rv[v].nr, rv[v].why, sizeof(rv[v].why));
		if (err == -ENOTSUP) {
			err = 0;
			continue;
		}
		/* no region: the same code, replayed as it is */
		rv[v].eq = err ? NULL : correspondence(&B, rv[v].r, rv[v].nr,
							rv[v].code.nr);
		if (!err && !rv[v].eq)
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		rv[v].ok = rv[v].diffed = !err;
	}
	if (err)
		goto out;
merge:
	/* the regions of every value merged: [lo, hi) of the baseline */
	for (int v = 0; v < nr_values; v++)
		for (size_t k = 0; rv[v].ok && k < rv[v].nr; k++) {
			size_t a = rv[v].r[k].b0, b = rv[v].r[k].b1;
			size_t m;

			for (m = 0; m < nr && !(a < hi[m] && b > lo[m]); m++)
				;
			if (m == nr) {
				lo[nr] = a;
				hi[nr++] = b;
			} else {
				lo[m] = a < lo[m] ? a : lo[m];
				hi[m] = b > hi[m] ? b : hi[m];
			}
		}
	for (int again = 1; again;) {	/* merging may make overlaps */
		again = 0;
		for (size_t m = 0; m < nr && !again; m++)
			for (size_t q = m + 1; q < nr && !again; q++)
				if (lo[q] < hi[m] && hi[q] > lo[m]) {
					lo[m] = lo[q] < lo[m] ? lo[q] : lo[m];
					hi[m] = hi[q] > hi[m] ? hi[q] : hi[m];
					lo[q] = lo[--nr];
					hi[q] = hi[nr];
					again = 1;
				}
	}
	if (!nr) {
		err = gen_add_span(t, in, fb, &sp);
		pr_debug("%s: no regions: %s\n", fb->name, rv[0].why);
		if (!err)
			span_refuse(sp, "no build differs only in straight-line "
				    "regions: %s", rv[0].why[0] ? rv[0].why :
				    nr_values > 1 ? rv[1].why : "");
		goto out;
	}
	/* in order; regions that touch merge when that makes more values
	 * replay (one may need what the other computes: the xor before a
	 * division), not otherwise */
	for (size_t m = 1; m < nr; m++)
		for (size_t q = m; q > 0 && lo[q - 1] > lo[q]; q--) {
			size_t x = lo[q]; lo[q] = lo[q - 1]; lo[q - 1] = x;
			x = hi[q]; hi[q] = hi[q - 1]; hi[q - 1] = x;
		}
	for (size_t m = 0; m + 1 < nr;) {
		int a = replaying(&B, rv, nr_values, lo[m], hi[m]);
		int b = replaying(&B, rv, nr_values, lo[m + 1], hi[m + 1]);

		if (hi[m] == lo[m + 1] &&
		    replaying(&B, rv, nr_values, lo[m], hi[m + 1]) > (a < b ? a : b)) {
			hi[m] = hi[m + 1];
			memmove(&lo[m + 1], &lo[m + 2], (nr - m - 2) * sizeof(*lo));
			memmove(&hi[m + 1], &hi[m + 2], (nr - m - 2) * sizeof(*hi));
			nr--;
			continue;	/* the merged one against the next */
		}
		m++;
	}
	/* a region that needs what common code before it computes (the xor
	 * that zeroes a division's high half) starts earlier: up to 8
	 * instructions, straight-line, entered nowhere but at the new start */
	for (size_t m = 0; m < nr; m++) {
		size_t floor = 0, best = lo[m];
		int most = replaying(&B, rv, nr_values, lo[m], hi[m]);

		for (size_t q = 0; q < nr; q++)
			if (hi[q] <= lo[m] && hi[q] > floor)
				floor = hi[q];
		for (size_t a = lo[m]; a > floor && lo[m] - a < 8 && most < nr_values;) {
			const struct xk_insn *x = &B.insn[--a];
			int n;

			if (x->is_branch || x->is_call || x->is_ret ||
			    branch_target_of(&B, a + 1))
				break;
			n = replaying(&B, rv, nr_values, a, hi[m]);
			if (n > most) {
				most = n;
				best = a;
			}
		}
		pr_debug("%s: region +0x%llx..+0x%llx starts at +0x%llx (%d values)\n",
			 fb->name, (unsigned long long)B.insn[lo[m]].off,
			 (unsigned long long)B.insn[hi[m]].off,
			 (unsigned long long)B.insn[best].off, most);
		lo[m] = best;
	}
	for (size_t m = 0; m < nr && !err; m++) {
		err = gen_add_span(t, in, fb, &sp);
		if (err)
			break;
		for (size_t i = lo[m] + 1; i < hi[m]; i++) {
			bool into = false;

			for (size_t k = 0; k < B.nr; k++)
				into |= B.insn[k].target == (int64_t)B.insn[i].off &&
					!B.insn[k].is_call;
			if (into) {
				snprintf(why, sizeof(why), "+0x%llx is a branch "
					 "target inside a region",
					 (unsigned long long)B.insn[i].off);
				err = -ENOTSUP;
				break;
			}
		}
		if (!err && hi[m] >= B.nr) {
			snprintf(why, sizeof(why), "a region ends the function");
			err = -ENOTSUP;
		}
		err = err ?: region_span(obj, fb, &B, lo[m], hi[m], sp, why,
					 sizeof(why));
		for (int v = 0; v < nr_values && !err; v++) {
			struct xk_scope_replay r = { .n = rv[v].n };
			ssize_t v0, v1;

			if (!rv[v].ok)
				continue;
			v0 = variant_index(rv[v].r, rv[v].nr, rv[v].eq, lo[m]);
			v1 = variant_index(rv[v].r, rv[v].nr, rv[v].eq, hi[m]);
			if (v0 < 0 || v1 < v0) {
				rv[v].ok = false;
				snprintf(rv[v].why, sizeof(rv[v].why), "the regions of "
					 "the build do not correspond");
				continue;
			}
			if (replay_region(&B, hi[m], &rv[v].code, (size_t)v0,
					  (size_t)v1, &r, rv[v].why,
					  sizeof(rv[v].why)) == -ENOTSUP) {
				rv[v].ok = false;
				continue;
			}
			/* a store the region of the baseline does not make:
			 * this value is refused, not the span */
			if (!stores_where_baseline_does(&B, lo[m], hi[m], &r)) {
				rv[v].ok = false;
				snprintf(rv[v].why, sizeof(rv[v].why), "its region at "
					 "+0x%llx stores where the baseline's does "
					 "not", (unsigned long long)B.insn[lo[m]].off);
				continue;
			}
			err = xk_scope_add_replay(sp, &r);
		}
	}
	/* a merged region that cannot be a span (it resumes at a jump-label
	 * site, say) may be another value's, merged in: the values that do
	 * not need it are tried on their own, below, as when none replays */
	if (err == -ENOTSUP && !retried) {
		for (int v = 0; v < nr_values; v++) {
			rv[v].ok = false;
			snprintf(rv[v].why, sizeof(rv[v].why), "%s", why);
		}
		err = 0;
	}
	/* the spans take the values every region of which replays */
	for (int v = 0; v < nr_values && !err; v++) {
		good += rv[v].ok;
		pr_debug("%s: N=%lld %s %s\n", fb->name, (long long)rv[v].n,
			 rv[v].ok ? "replays" : "does not replay:", rv[v].why);
	}
	/* none: again with only the values each region of which replays on
	 * its own (another value's region, merged in, may hold what none can
	 * replay: a read-modify-write where the build with N=1 differs) */
	if (!err && !good && !retried) {
		int solo = 0;

		for (int v = 0; v < nr_values; v++) {
			memcpy(rv[v].why_merged, rv[v].why, sizeof(rv[v].why));
			rv[v].ok = rv[v].diffed;
			for (size_t k = 0; rv[v].ok && k < rv[v].nr; k++) {
				struct xk_scope_replay r = { .n = rv[v].n };

				rv[v].ok = !replay_region(&B, rv[v].r[k].b1, &rv[v].code,
							  rv[v].r[k].v0, rv[v].r[k].v1,
							  &r, rv[v].why, sizeof(rv[v].why));
			}
			if (rv[v].ok)
				rv[v].why[0] = '\0';
			solo += rv[v].ok;
		}
		retried = true;
		if (solo && solo < nr_values) {
			for (int i = first; i < t->nr_spans; i++)
				free(t->spans[i].replays);
			t->nr_spans = first;
			nr = 0;
			goto merge;
		}
		for (int v = 0; v < nr_values; v++) {	/* as merged first */
			rv[v].ok = false;
			memcpy(rv[v].why, rv[v].why_merged, sizeof(rv[v].why));
		}
	}
	if (!err && !good) {
		int v = 0;

		while (v + 1 < nr_values && (rv[v].ok || !rv[v].why[0]))
			v++;	/* the first that says why not */
		snprintf(why, sizeof(why), "no build replays (N=%lld: %s)",
			 (long long)rv[v].n, rv[v].why);
		err = -ENOTSUP;
	}
	for (int i = first; !err && i < t->nr_spans; i++) {
		struct xk_scope_span *s = &t->spans[i];
		int keep = 0;

		for (int j = 0; j < s->nr_replays; j++) {
			bool ok = false;

			for (int v = 0; v < nr_values; v++)
				ok |= rv[v].ok && rv[v].n == s->replays[j].n;
			if (ok)
				s->replays[keep++] = s->replays[j];
		}
		s->nr_replays = keep;
		if (!keep) {	/* a region no value needs: the baseline's */
			snprintf(why, sizeof(why), "a region no build changes");
			err = -ENOTSUP;
		}
		if (!err) {	/* the module's rules, as every span obeys them */
			struct xk_ioc_span d;
			struct xk_ioc_replay r;
			const char *bad;

			xk_scope_span_to_ioc(s, &d);
			bad = xk_ioc_span_check(&d);
			for (int j = 0; !bad && j < s->nr_replays; j++) {
				xk_scope_replay_to_ioc(&s->replays[j], &r);
				bad = xk_ioc_replay_check(&r) ?:
				      xk_rule_replay_stores(s->expect,
						s->expect_mask, s->start, s->probe,
						&r);
			}
			if (bad) {
				snprintf(why, sizeof(why), "the module would refuse "
					 "+0x%llx: %s", (unsigned long long)s->start, bad);
				err = -ENOTSUP;
			}
		}
		if (!err)
			err = sizes_no_heap_object(&B, fb, s, why, sizeof(why));
	}
	if (err == -ENOTSUP) {
		for (int i = first; i < t->nr_spans; i++)
			free(t->spans[i].replays);
		t->nr_spans = first;
		err = gen_add_span(t, in, fb, &sp);
		if (!err)
			span_refuse(sp, "replayed form: %s", why);
		pr_debug("%s: replayed form: %s\n", fb->name, why);
	}
out:
	for (int v = 0; v < nr_values; v++) {
		xk_func_code_free(&rv[v].code);
		free(rv[v].r);
		free(rv[v].eq);
	}
	free(rv);
	free(lo);
	free(hi);
	xk_func_code_free(&B);
	return err;
}

/* ---- a new value for the replayed spans (xk set, xk gen --prepare) ---- */

/*
 * The replays at in->variant[0] of the replayed spans of one function
 * (span indices idx[0..n) of t): its build must differ from the baseline
 * only inside those spans' regions, each region replaying. -ENOTSUP with
 * why otherwise.
 */
static int replay_point_function(const struct xk_obj *ob, const struct xk_sym *fb,
				 const struct xk_obj *ov, const struct xk_sym *fv,
				 const struct xk_scope *t, const int *idx, int n,
				 struct xk_scope_replay *out, char *why,
				 size_t size)
{
	struct xk_func_code B = { 0 }, V = { 0 };
	struct region *r = NULL;
	ssize_t *eq = NULL;
	size_t nr = 0;
	int err;

	err = xk_disasm_func(fb, &B) ?: xk_disasm_func(fv, &V);
	err = err ?: diff_regions(ob, &B, fb, ov, &V, fv, &r, &nr, why, size);
	if (err)
		goto out;
	eq = correspondence(&B, r, nr, V.nr);
	if (!eq) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	for (size_t k = 0; k < nr && !err; k++) {
		bool inside = false;

		for (int m = 0; m < n; m++) {
			const struct xk_scope_span *sp = &t->spans[idx[m]];

			inside |= B.insn[r[k].b0].off >= sp->start &&
				  (r[k].b1 < B.nr ? B.insn[r[k].b1].off : sp->func_size) <=
					  sp->probe;
		}
		if (!inside) {
			snprintf(why, size, "the build changes +0x%llx %s, outside "
				 "the replayed regions",
				 (unsigned long long)B.insn[r[k].b0].off,
				 B.insn[r[k].b0].text);
			err = -ENOTSUP;
		}
	}
	for (int m = 0; m < n && !err; m++) {
		const struct xk_scope_span *sp = &t->spans[idx[m]];
		ssize_t b0 = xk_code_index(&B, sp->start), b1 = xk_code_index(&B, sp->probe);
		ssize_t v0 = b0 < 0 ? -1 : variant_index(r, nr, eq, (size_t)b0);
		ssize_t v1 = b1 < 0 ? -1 : variant_index(r, nr, eq, (size_t)b1);

		if (v0 < 0 || v1 < v0) {
			snprintf(why, size, "the span at +0x%llx does not correspond "
				 "in the build", (unsigned long long)sp->start);
			err = -ENOTSUP;
			break;
		}
		memset(&out[idx[m]], 0, sizeof(out[0]));
		err = replay_region(&B, (size_t)b1, &V, (size_t)v0, (size_t)v1,
				    &out[idx[m]], why, size);
		if (!err && !stores_where_baseline_does(&B, (size_t)b0, (size_t)b1,
							&out[idx[m]])) {
			snprintf(why, size, "the build's region at +0x%llx stores "
				 "where the baseline's does not",
				 (unsigned long long)sp->start);
			err = -ENOTSUP;
		}
	}
out:
	free(r);
	free(eq);
	xk_func_code_free(&B);
	xk_func_code_free(&V);
	return err;
}

/*
 * The replays at in->variant[0].value of the table's replayed spans in
 * this object: out[i] for span i, got[i] set. -ENOTSUP naming the span
 * when that build differs elsewhere or a region does not replay.
 */
static int replays_at(const struct gen_input *in, const struct xk_scope *t,
		      struct xk_scope_replay *out, bool *got)
{
	struct xk_obj base, var;
	int *idx = calloc(t->nr_spans ? t->nr_spans : 1, sizeof(int));
	int err;

	if (!idx)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = xk_obj_open(&base, in->base_path);
	if (err) {
		free(idx);
		return err;
	}
	err = xk_obj_open(&var, in->variant[0].path);
	if (err) {
		xk_obj_close(&base);
		free(idx);
		return err;
	}
	xk_obj_correlate(&base, &var);
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		struct xk_sym *f;
		char why[320] = "";
		int n = 0;

		if (sp->cls == XK_SPAN_UNSUPPORTED || sp->emulate != XK_EMULATE_REPLAY ||
		    strcmp(sp->object, in->object) || got[i] ||
		    xk_scope_replay_of(sp, in->variant[0].value))
			continue;
		for (int j = 0; j < t->nr_spans; j++)
			if (t->spans[j].emulate == XK_EMULATE_REPLAY &&
			    !strcmp(t->spans[j].object, sp->object) &&
			    !strcmp(t->spans[j].func, sp->func))
				idx[n++] = j;
		f = gen_span_function(&base, sp);
		if (!f || !f->twin) {
			snprintf(why, sizeof(why), "%s is not in both builds", sp->func);
			err = -ENOTSUP;
		} else {
			err = replay_point_function(&base, f, &var, f->twin, t, idx,
						    n, out, why, sizeof(why));
		}
		if (err == -ENOTSUP)
			err = xk_err(-ENOTSUP, "%s = %lld cannot be retuned: span %d "
					       "(%s+%#llx, replayed form): %s",
				     t->constant, (long long)in->variant[0].value,
				     i, sp->func, (unsigned long long)sp->start, why);
		for (int m = 0; m < n && !err; m++) {
			out[idx[m]].n = in->variant[0].value;
			got[idx[m]] = true;
		}
	}
	xk_obj_close(&var);
	xk_obj_close(&base);
	free(idx);
	return err;
}

/*
 * The replayed form of one object's functions with refused spans in t,
 * from builds with values[v] (paths[v]; "" when that value did not build):
 * appended to redo (replay_function).
 */
static int replay_object(const struct gen_input *in, int nr, const int64_t *values,
			 char (*paths)[XK_PATH_MAX], const struct xk_scope *t,
			 struct xk_scope *redo)
{
	struct xk_obj base, *var = calloc(nr ? nr : 1, sizeof(*var));
	const struct xk_sym **fv = calloc(nr ? nr : 1, sizeof(*fv));
	const struct xk_obj **vobj = calloc(nr ? nr : 1, sizeof(*vobj));
	bool *open = calloc(nr ? nr : 1, sizeof(bool));
	int err;

	if (!var || !fv || !open || !vobj) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out_free;
	}
	err = xk_obj_open(&base, in->base_path);
	if (err)
		goto out_free;
	for (int v = 0; v < nr && !err; v++) {
		vobj[v] = &var[v];
		if (paths[v][0]) {
			err = xk_obj_open(&var[v], paths[v]);
			open[v] = !err;
		}
	}
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		struct xk_sym *f;
		bool refused = false;

		if (strcmp(sp->object, in->object) ||
		    (i && gen_same_function(&t->spans[i - 1], sp)))
			continue;
		for (int j = i; j < i + gen_function_spans(t, i); j++)
			refused |= t->spans[j].cls == XK_SPAN_UNSUPPORTED;
		f = refused ? gen_span_function(&base, sp) : NULL;
		if (!f)
			continue;
		for (int v = 0; v < nr; v++) {
			fv[v] = NULL;
			if (!open[v])
				continue;
			xk_obj_correlate(&base, &var[v]);
			fv[v] = f->twin;
			for (size_t k = 0; k < base.nr_syms; k++)
				base.syms[k].twin = NULL;
			for (size_t k = 0; k < var[v].nr_syms; k++)
				var[v].syms[k].twin = NULL;
		}
		err = replay_function(in, &base, f, nr, vobj, fv, values, redo);
	}
	for (int v = 0; v < nr; v++)
		if (open[v])
			xk_obj_close(&var[v]);
	xk_obj_close(&base);
out_free:
	free(var);
	free(fv);
	free(vobj);
	free(open);
	return err;
}

/*
 * The replayed form, for the functions still refused after the analysis
 * by shape: their builds with the fit, check and by-shape values (all
 * cached by then) are diffed against the baseline; a function whose
 * builds differ in straight-line regions only is replayed there, at every
 * value whose regions replay (others are built and checked when they are
 * set). Only the objects of those functions are built.
 */
static int retry_replayed(const struct form_table *ft, struct xk_scope *t)
{
	const struct xk_kernel *k = ft->k;
	const struct xk_constant *c = ft->c;
	const struct xk_build_result *b = ft->b;
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true);
	int64_t values[2 * GEN_NR_VARIANTS + 1];
	struct xk_build_result *res[2 * GEN_NR_VARIANTS + 1] = { NULL };
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	char (*paths)[XK_PATH_MAX] = NULL;
	int nr = 0, err = 0;

	if (gen_replay_off)
		return 0;
	err = gen_refused_objects(c, t, &only, "the replayed form");
	if (err || !only.objects[0])
		return err;
	{
		/* the fit and check values, the by-shape family, and N-1:
		 * bounds that stop at the default leave few others */
		long long cand[2 * GEN_NR_VARIANTS + 1] = {
			b->value[0], b->value[1], b->value[2], 0, 0, 0, c->def - 1,
		};
		bool family = gen_shape_family(c->def, &cand[GEN_NR_VARIANTS]);

		for (int i = 0; i < 2 * GEN_NR_VARIANTS + 1; i++) {
			bool dup = false;

			for (int j = 0; j < nr; j++)
				dup |= values[j] == cand[i];
			if (!dup && cand[i] != c->def && cand[i] >= c->min &&
			    cand[i] <= c->max && (family || i < GEN_NR_VARIANTS ||
						  i == 2 * GEN_NR_VARIANTS))
				values[nr++] = cand[i];
		}
	}
	for (int v = 0; v < nr && !err; v++) {
		res[v] = calloc(1, sizeof(*res[v]));
		if (!res[v]) {
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
			break;
		}
		o.value = values[v];
		err = xk_build(k, &only, &o, res[v]);
		if (err && err != -ENOMEM) {
			res[v]->nr_objects = 0;	/* did not build: not a value */
			xk_err_clear();
			err = 0;
		}
	}
	paths = calloc(nr ? nr : 1, sizeof(*paths));
	if (!err && !paths)
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
	for (int v0 = 0; !err && v0 < nr; v0++) {
		const struct xk_build_result *r0 = res[v0];

		if (!r0->nr_objects)
			continue;
		for (int i = 0; i < r0->nr_objects && !err; i++) {
			struct gen_input in = { .object = r0->object[i], .def = c->def,
						.min = c->min, .max = c->max };
			char module[64];

			in.module = gen_module_name(r0->module[i], module, sizeof(module));
			xk_strlcpy(in.base_path, r0->base[i], sizeof(in.base_path));
			for (int v = 0; v < nr; v++) {
				paths[v][0] = '\0';
				for (int j = 0; j < res[v]->nr_objects; j++)
					if (!strcmp(res[v]->object[j], in.object))
						xk_strlcpy(paths[v], res[v]->variant[j][0],
							   sizeof(paths[v]));
			}
			err = replay_object(&in, nr, values, paths, t, &redo);
		}
		break;	/* every object once, from the first value that built */
	}
	err = err ?: gen_merge_redo(t, &redo, "replayed");
	xk_scope_free(&redo);
	free(paths);
	for (int v = 0; v < nr; v++)
		free(res[v]);
	return err;
}

const struct gen_form form_replayed = {
	.name = "replayed",
	.retry = retry_replayed,
	.replays = replays_at,
};
