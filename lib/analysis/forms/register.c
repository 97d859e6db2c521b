// SPDX-License-Identifier: GPL-2.0
/*
 * Form: the register forms, for a function no more specific form claimed.
 *
 * Seeds of one basic block, a few instructions apart, form one span; each
 * is tried, in this order, as: the exact form (the span grown backwards
 * until its inputs are live at the probe; each location a*N + b of them),
 * the inverse form (the seeds alone, the result corrected by what the
 * parameters add), the exact form with the memory the span reads as
 * inputs the module reads at the probe, and last, for a single seed, the
 * emulated form (an int3 that runs the span's program and skips it). A
 * group that fails as one span is tried as one span per seed. A parameter
 * that is no a*N + b but keeps its instruction is taken per value from the
 * builds (per value; by shape when the builds are of the default's kind).
 * Instructions that change with the value outside every span, a region no
 * immediate carries, are a multiply span when the region multiplies by a
 * factor a*N + b, else refused by name. One span's analysis is span.c's.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "form.h"
#include "span.h"

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
		err = span_run_stores(&c->base, c->seed, start, end, true, true,
				      &w.s);
		if (err == -ENOTSUP)
			span_refuse(sp, "symbolic execution: %s", w.s.why);
		err = err ?: span_choose_emulated(c, &w, sp);
	} else if (inverse) {
		err = span_run(&c->base, c->seed, start, end, false, &w.s);
		if (err == -ENOTSUP)
			span_refuse(sp, "symbolic execution: %s", w.s.why);
		else if (!err && w.s.flags_read_first)
			err = -ENOTSUP;
	} else {
		err = span_grow(c, &w, sp);
	}
	err = err ?: emulate ? 0 : span_choose_locations(c, &w, sp);
	err = err ?: span_fit_params(c, &w, sp);
	err = err ?: span_compile_locations(c, &w, sp);
	err = err ?: span_place_probe(c, &w, sp);
	cls = sp->cls;
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
		if (w.per_value && !w.usable[v])
			continue;
		err = emulate ? span_check_emulated(c, &w, sp, v) :
				span_check_variant(c, &w, sp, v);
		/* per value: a build of another shape gives no point; one of
		 * the baseline's shape that the program misses refuses it */
		if (err == -ENOTSUP && w.per_value &&
		    span_same_shape(c, v, why_not, sizeof(why_not))) {
			w.usable[v] = false;
			sp->why[0] = '\0';
			sp->cls = cls;
			err = 0;
		}
	}
	for (int v = 0; v < GEN_NR_VARIANTS && !err && w.per_value; v++)
		if (w.usable[v] && span_same_shape(c, v, why_not, sizeof(why_not)))
			w.usable[v] = false;
	if (!err && w.per_value)
		err = span_record_points(c, &w, sp, why_not);
	err = err ?: df_slice_forward(&c->base, c->fb->sym.st_size, sp, w.end + 1);
	err = err ?: span_locate_imms(c, &w, sp);
	err = err ?: span_obey_rules(sp);
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
	int err = span_run_stores(code, NULL, from, to, false, true, &s);

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
				in[q] = span_rnd(&st);
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

	err = span_run_stores(&c->base, NULL, from, to, false, true, &w.s);
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
	err = span_place_probe(c, &w, sp);
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++)
		err = span_check_emulated(c, &w, sp, v);
	err = err ?: df_slice_forward(&c->base, c->fb->sym.st_size, sp, w.end + 1);
	err = err ?: span_obey_rules(sp);
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

/*
 * Claims every function with seeds or other changed instructions that no
 * earlier form took: its seed groups as spans, then its changed regions.
 */
static int claim_register(struct form_fn *fn, struct xk_scope *t)
{
	struct func_ctx *c = fn->ctx;
	int err = 0;

	if (!fn->nr_seeds && !fn->other_diff)
		return 0;
	/* seeds of one basic block, a few instructions apart, form one span */
	for (size_t i = 0; i < c->base.nr && !err; i++) {
		struct xk_scope_span *sp;
		size_t end = i;

		if (!c->seed[i])
			continue;
		for (size_t j = i + 1; j < c->base.nr && j <= end + 4; j++) {
			if (c->leader[j])
				break;
			if (c->seed[j])
				end = j;
		}
		err = gen_add_span(t, fn->in, fn->fb, &sp);
		if (err)
			break;
		/* a group is emulated only when no split works: an emulated
		 * probe is int3 and never optimized */
		err = analyse_span(c, i, end, end == i, sp);
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
				if (!c->seed[j])
					continue;
				err = gen_add_span(t, fn->in, fn->fb, &sp);
				if (err)
					break;
				err = analyse_span(c, j, j, true, sp);
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
				err = analyse_span(c, i, end, true, sp);
				if (!err && sp->cls == XK_SPAN_UNSUPPORTED)
					*sp = group;
			}
		}
		i = end;
	}
	if (!err && fn->other_diff)
		err = analyse_regions(c, t, fn->first_span);
	return err ?: 1;
}

/* The register forms on [start, end] for another form (boot code: what a
 * seed's value sizes). */
static int span_register(struct form_fn *fn, size_t start, size_t end,
			 bool emulate, struct xk_scope_span *sp)
{
	return analyse_span(fn->ctx, start, end, emulate, sp);
}

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
	if (span_same_shape_in(&c, 0, t, false, shape, sizeof(shape))) {
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
	err = span_run(&c.base, seed, w.start, w.end, sp->nr_mem_in > 0, &w.s);
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
		    !span_insn_value(&c.var[0].insn[j], &y)) {
			snprintf(why, why_size, "parameter %d (+0x%llx) has no "
				 "immediate in that build", k,
				 (unsigned long long)sp->param_insn[k]);
			err = -ENOTSUP;
			goto out;
		}
		w.pv[0][k] = span_param_value(y, w.s.param_width[k]);
	}
	err = span_check_variant(&c, &w, &check, 0);
	if (err == -ENOTSUP) {
		snprintf(why, why_size, "%s", check.why);
		goto out;
	}
	if (!err)
		memcpy(params, w.pv[0], sizeof(w.pv[0]));
out:
	sx_free(&w.s);
	free(seed);
	span_free_ctx(&c);
	return err;
}

/* Every span with points but the variables boot code derives (class
 * data) is a register form's per-value span. */
static bool owns_register(const struct xk_scope_span *sp)
{
	return sp->cls != XK_SPAN_DATA;
}

static int point_register(const struct gen_input *in, const struct xk_scope *t,
			  struct xk_obj *base, struct xk_obj *var,
			  const struct xk_scope_span *sp, __s64 *params,
			  char *why, size_t size)
{
	(void)var;	/* base is correlated with it: each function's twin */
	return point_of_span(in, base, t, sp, params, why, size);
}

/* Whether off lies in [from, to). */
static bool within(uint64_t off, uint64_t from, uint64_t to)
{
	return off >= from && off < to;
}

/*
 * The module arms an emulated span only when no other probe of the
 * constant (a rewrite probe, a span's entry, an exit of a safe span) sits
 * in the bytes it emulates, [start, probe): kprobes would never run that
 * probe (kmod/xk_table.c, emulated_alone). An exit at its first byte is
 * the exception: the span's rewrite handler takes it. Runs on the
 * finished table (the form's check); such an emulated span is refused
 * here, naming the other probe, instead of the whole table at load.
 */
static int check_register(const struct form_table *ft, struct xk_scope *t)
{
	(void)ft;
	for (int i = 0; i < t->nr_spans; i++) {
		struct xk_scope_span *e = &t->spans[i];
		const char *what = NULL;
		uint64_t at = 0;
		int by = -1;

		if (e->cls == XK_SPAN_UNSUPPORTED || !e->emulate ||
		    e->emulate == XK_EMULATE_DATA)
			continue;
		for (int j = 0; j < t->nr_spans && !what; j++) {
			const struct xk_scope_span *s = &t->spans[j];

			if (s->cls == XK_SPAN_UNSUPPORTED || s->emulate == XK_EMULATE_DATA ||
			    strcmp(s->func, e->func) || strcmp(s->object, e->object))
				continue;
			by = j;
			at = s->emulate ? s->start : s->probe - s->post_len;
			if (j != i && within(at, e->start, e->probe)) {
				what = "its rewrite probe";
				break;
			}
			at = s->start;
			if (!s->emulate && within(at, e->start, e->probe)) {
				what = "its entry";
				break;
			}
			/* an exit at the emulated span's first byte is taken
			 * by its rewrite handler (kmod/xk_probe.c, exits_at) */
			for (int k = 0; k < s->nr_exits && !what; k++) {
				at = s->exits[k];
				if (at < s->func_size && at != e->start &&
				    within(at, e->start, e->probe))
					what = "an exit of its safe span";
			}
		}
		if (what)
			span_refuse(e, "span %d's probe at +0x%llx (%s) would sit in "
				    "the bytes this emulated span skips (+0x%llx to "
				    "+0x%llx): the module arms neither", by,
				    (unsigned long long)at, what,
				    (unsigned long long)e->start,
				    (unsigned long long)e->probe);
	}
	return 0;
}

const struct gen_form form_register = {
	.name = "register",
	.claim = claim_register,
	.span = span_register,
	.owns = owns_register,
	.point = point_register,
	.check = check_register,
};
