// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the entry points of `xk gen`: the built objects of a
 * constant analysed into a scope table (spans.c per object), and the
 * disassembly listing of a range (xk gen --explain).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "build.h"
#include "identity.h"
#include "dataflow.h"
#include "forms/form.h"
#include "redo.h"
#include "spans.h"

/* Whether t refuses a span of sp's function because the check build has
 * another shape there. */
static bool check_lost(const struct xk_scope *t, const struct xk_scope_span *sp)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    gen_same_function(&t->spans[i], sp) &&
		    strstr(t->spans[i].why, WHY_CHECK_SHAPE))
			return true;
	return false;
}

/*
 * A function whose frame the constant sizes (an array on the stack: every
 * span of it state of the call, forms/call_state.c) never takes a value
 * above the default (bound_call_state). When its check build, above
 * the fit, has another shape there (FQ_GC_MAX's fq_gc is no longer
 * inlined into fq_enqueue at 16), the check is made where its values lie
 * instead: at the default minus one. Each object with such a refusal is
 * analysed again with that check build; a function takes the new spans
 * (merge_redo) when it had such a refusal and every new span of it is
 * supported and of a frame. Runs after the first analysis.
 */
static int gen_check_below(const struct xk_kernel *k, const struct xk_constant *c,
			   const struct xk_build_result *b, struct xk_scope *t)
{
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true,
		.value = c->def - 1);
	struct xk_build_result *below = NULL;
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	bool any = false;
	char what[64];
	int err = 0;

	for (int i = 0; i < t->nr_spans && !any; i++)
		any = t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		      strstr(t->spans[i].why, WHY_CHECK_SHAPE);
	if (!any || c->def - 1 < c->min || c->def - 1 == b->value[0] ||
	    c->def - 1 == b->value[1])
		return 0;
	snprintf(what, sizeof(what), "checked at N=%lld", c->def - 1);
	err = gen_refused_objects(c, t, &only, "the check below the default");
	if (err || !only.objects[0])
		return err;
	below = calloc(1, sizeof(*below));
	if (!below)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = xk_build(k, &only, &o, below);
	if (err && err != -ENOMEM) {	/* no such build: the refusals stand */
		xk_err_clear();
		err = 0;
		goto out;
	}
	for (int i = 0; !err && i < below->nr_objects; i++) {
		struct gen_input in = { .object = below->object[i], .def = c->def,
					.min = c->min, .max = c->max, .kernel = k };
		char module[64];
		int j = gen_object_index(b, in.object);

		if (j < 0)
			continue;
		in.module = gen_module_name(b->module[j], module, sizeof(module));
		in.ko = b->module[j];
		xk_strlcpy(in.base_path, b->base[j], sizeof(in.base_path));
		for (int v = 0; v < GEN_FIT_VARIANTS; v++) {
			in.variant[v].value = b->value[v];
			xk_strlcpy(in.variant[v].path, b->variant[j][v],
				   sizeof(in.variant[v].path));
		}
		in.variant[GEN_FIT_VARIANTS].value = c->def - 1;
		xk_strlcpy(in.variant[GEN_FIT_VARIANTS].path, below->variant[i][0],
			   sizeof(in.variant[GEN_FIT_VARIANTS].path));
		err = gen_object(&in, &redo);
	}
	/* only the functions whose check was lost stay, and take the new
	 * spans when every one is a supported span of a frame */
	for (int i = 0, n, kept = 0; !err; i += n) {
		bool frame = true;

		if (i == redo.nr_spans) {
			redo.nr_spans = kept;
			break;
		}
		n = gen_function_spans(&redo, i);
		if (!check_lost(t, &redo.spans[i])) {
			for (int j = i; j < i + n; j++)
				free(redo.spans[j].replays);
			continue;
		}
		for (int j = i; j < i + n; j++)
			frame &= redo.spans[j].cls == XK_SPAN_UNSUPPORTED ||
				 redo.spans[j].call_state == XK_CALL_STATE_FRAME;
		if (!frame)
			span_refuse(&redo.spans[i], "the function's frame is not "
				    "sized by the constant (values above the "
				    "default stay possible)");
		memmove(&redo.spans[kept], &redo.spans[i], n * sizeof(redo.spans[0]));
		kept += n;
	}
	err = err ?: gen_merge_redo(t, &redo, what);
out:
	xk_scope_free(&redo);
	free(below);
	return err;
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
 * the exception: the span's rewrite handler takes it. Runs on the finished table;
 * such an emulated span is refused here, naming the other probe, instead
 * of the whole table at load.
 */
static void refuse_emulated_overlaps(struct xk_scope *t)
{
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
}

/* The points and replays of t's spans outside its bounds go. */
static void drop_outside_bounds(struct xk_scope *t)
{
	for (int i = 0; i < t->nr_spans; i++) {
		struct xk_scope_span *s = &t->spans[i];
		int keep = 0;

		for (int k = 0; k < s->nr_points; k++)
			if (s->points[k].n >= t->min && s->points[k].n <= t->max)
				s->points[keep++] = s->points[k];
		s->nr_points = keep;
		keep = 0;
		for (int k = 0; k < s->nr_replays; k++)
			if (s->replays[k].n >= t->min && s->replays[k].n <= t->max)
				s->replays[keep++] = s->replays[k];
		s->nr_replays = keep;
	}
}

/*
 * A table with spans of call state (a frame the constant sizes,
 * forms/call_state.c): the compiled-in frame holds what a smaller value
 * needs, a larger one would need more stack than the function has.
 * The upper bound becomes the compiled-in value, whichever pass found
 * the frame, with a note naming the functions ("bounds: ...", which a
 * refusal of a value above quotes); the points and replays of values
 * above go. Runs on the finished table.
 */
static int bound_call_state(struct xk_scope *t, long long def)
{
	char note[sizeof(t->notes[0])], funcs[120] = "";
	int nr = 0, named = 0;

	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];
		bool seen = false;

		if (s->call_state != XK_CALL_STATE_FRAME ||
		    s->cls == XK_SPAN_UNSUPPORTED)
			continue;
		for (int k = 0; k < i && !seen; k++)
			seen = t->spans[k].call_state && !strcmp(t->spans[k].func, s->func);
		if (seen)
			continue;
		nr++;
		if (strlen(funcs) + strlen(s->func) + 2 < sizeof(funcs)) {
			size_t len = strlen(funcs);

			snprintf(funcs + len, sizeof(funcs) - len, "%s%s",
				 named++ ? ", " : "", s->func);
		}
	}
	if (!nr)
		return 0;
	if (t->max > def)
		t->max = def;
	drop_outside_bounds(t);
	snprintf(note, sizeof(note), "bounds: at most the compiled-in %lld: the "
		 "constant sizes the frame of %s%s, which holds a smaller "
		 "value's array, not a larger one's", def, funcs,
		 nr > named ? " and others" : "");
	return gen_add_note(t, note);
}


/* floor(x / y) and ceil(x / y), y > 0 */
static __int128 div_floor(__int128 x, __int128 y)
{
	return x / y - (x % y != 0 && x < 0);
}

static __int128 div_ceil(__int128 x, __int128 y)
{
	return x / y + (x % y != 0 && x > 0);
}

/* How the flags a compare leaves are read: its condition codes' kinds. */
enum flags_use { USE_EQUAL = 1, USE_UNSIGNED = 2, USE_SIGNED = 4, USE_OTHER = 8 };

/* The kind of condition instruction in tests (jcc, setcc, cmovcc; sbb and
 * adc read the carry), 0 when it reads no flags. */
static int condition_kind(const struct xk_insn *in)
{
	static const char *const uns[] = { "a", "ae", "b", "be", "c", "nc", "na",
					   "nae", "nb", "nbe" };
	static const char *const sig[] = { "g", "ge", "l", "le", "s", "ns", "o",
					   "no", "ng", "nge", "nl", "nle" };
	const char *m = in->text, *cc;
	char name[16];

	if (!strncmp(m, "sbb ", 4) || !strncmp(m, "adc ", 4))
		return USE_UNSIGNED;
	if (m[0] == 'j' && strncmp(m, "jmp", 3))
		cc = m + 1;
	else if (!strncmp(m, "set", 3))
		cc = m + 3;
	else if (!strncmp(m, "cmov", 4))
		cc = m + 4;
	else
		return 0;
	xk_snprintf(name, sizeof(name), "%.*s", (int)strcspn(cc, " "), cc);
	if (!strcmp(name, "e") || !strcmp(name, "ne") || !strcmp(name, "z") ||
	    !strcmp(name, "nz"))
		return USE_EQUAL;
	for (size_t k = 0; k < ARRAY_SIZE(uns); k++)
		if (!strcmp(name, uns[k]))
			return USE_UNSIGNED;
	for (size_t k = 0; k < ARRAY_SIZE(sig); k++)
		if (!strcmp(name, sig[k]))
			return USE_SIGNED;
	return USE_OTHER;
}

/* Whether in leaves the flags as they were (and stays in its block). */
static bool keeps_flags(const struct xk_insn *in)
{
	return in->id == X86_INS_MOV || in->id == X86_INS_LEA ||
	       in->id == X86_INS_NOP || in->id == X86_INS_MOVZX ||
	       in->id == X86_INS_MOVSX || in->id == X86_INS_MOVSXD ||
	       !strncmp(in->text, "set", 3) || !strncmp(in->text, "cmov", 4);
}

/* The kinds of the conditions that read the flags from instruction i of
 * code on, up to the next instruction that may change them or leave the
 * block; a conditional jump's target is read the same way, one level
 * (deeper: USE_OTHER). */
static int readers_from(const struct xk_func_code *code, ssize_t i, int depth)
{
	int use = 0;

	for (; i >= 0 && (size_t)i < code->nr; i++) {
		const struct xk_insn *in = &code->insn[i];
		int kind = condition_kind(in);

		use |= kind;
		if (kind && in->is_branch && in->is_cond) {
			ssize_t t = in->target >= 0 ? xk_code_index(code, (uint64_t)in->target) : -1;

			use |= t < 0 || depth ? USE_OTHER : readers_from(code, t, 1);
			continue;
		}
		if (!keeps_flags(in))
			break;
	}
	return use;
}

/*
 * How the flags of span sp are read after its probe point, in the
 * baseline object of b that holds it: the kinds of the conditions that
 * read them (readers_from; USE_OTHER when it cannot tell), and in *w the
 * width of the compare that sets them (the last instruction of the span
 * that does; 0 when none is found).
 */
static int flags_use(const struct xk_build_result *b, const struct xk_scope_span *sp,
		     int *w)
{
	static const unsigned int setters[] = {
		X86_INS_CMP, X86_INS_TEST, X86_INS_SUB, X86_INS_ADD, X86_INS_AND,
		X86_INS_OR, X86_INS_XOR, X86_INS_INC, X86_INS_DEC, X86_INS_NEG,
		X86_INS_SBB, X86_INS_ADC,
	};
	struct xk_func_code code = { 0 };
	struct xk_obj o;
	struct xk_sym *f;
	ssize_t i;
	int use, j = gen_object_index(b, sp->object);

	*w = 0;
	if (j < 0 || xk_obj_open(&o, b->base[j])) {
		xk_err_clear();
		return USE_OTHER;
	}
	f = gen_span_function(&o, sp);
	if (!f || xk_disasm_func(f, &code)) {
		xk_err_clear();
		xk_obj_close(&o);
		return USE_OTHER;
	}
	i = xk_code_index(&code, sp->probe);
	for (ssize_t k = i - 1; i > 0 && k >= 0 && code.insn[k].off >= sp->start &&
	     !*w; k--)
		for (size_t m = 0; m < ARRAY_SIZE(setters); m++)
			if (code.insn[k].id == setters[m] && code.insn[k].x86.op_count)
				*w = code.insn[k].x86.operands[0].size * 8;
	use = readers_from(&code, i, 0);
	xk_func_code_free(&code);
	xk_obj_close(&o);
	return use ? use : USE_OTHER;
}

/*
 * A compare's immediate the compiler derived from the constant means the
 * source's test only while it does not wrap at the compare's width: x < N
 * is compiled as x <= N - 1 (cmp $N-1; jbe), and at N = 0 the unsigned
 * x <= 0xffffffff always holds where x < 0 never does (UTIL_EST_MARGIN's
 * util_est_update, a catalog minimum of 0). The fit is checked at built
 * values, never at the bounds. For each supported span whose outcome is
 * flags (class flags or dual) with a fit, the immediate a*N + b must stay
 * in the range its readers take without a wrap: 0 to 2^w - 1 for unsigned
 * conditions (or below 0 when the default's is), -2^(w-1) to 2^(w-1) - 1
 * for signed ones, the w-bit values for equality; all of them for readers
 * of several kinds or unknown ones. The bounds narrow to the values of N
 * that keep it there, with a note naming the span ("bounds: ..."). Runs on
 * the finished table.
 */
static int bound_wrapping_compares(struct xk_scope *t, const struct xk_build_result *b)
{
	char note[sizeof(t->notes[0])] = "";
	long long min = t->min, max = t->max;

	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];
		int use = -1, w = 0;

		if ((s->cls != XK_SPAN_FLAGS && s->cls != XK_SPAN_DUAL) ||
		    s->nr_points || s->emulate == XK_EMULATE_REPLAY)
			continue;
		for (int k = 0; k < s->nr_params; k++) {
			__int128 a = s->fit[k][0], b0 = s->fit[k][1], half, lo, hi,
				 nlo, nhi, at_def = a * t->def + b0;
			bool neg;

			if (!a)
				continue;
			if (use < 0)
				use = flags_use(b, s, &w);
			if (w < 8 || w > 64)
				continue;	/* no compare found: nothing to say */
			half = (__int128)1 << (w - 1);
			neg = at_def < 0;
			if (use == USE_EQUAL) {
				lo = -half;
				hi = 2 * half - 1;
			} else if (use == USE_SIGNED) {
				lo = -half;
				hi = half - 1;
			} else {
				/* unsigned: no crossing of 0; mixed: no crossing
				 * of either boundary */
				lo = neg ? -half : 0;
				hi = neg ? -1 : use == USE_UNSIGNED ? 2 * half - 1 : half - 1;
			}
			/* an immediate kept in another form than the reader's
			 * (0xffffffff read signed): no range to tell */
			if (at_def < lo || at_def > hi)
				continue;
			if (a > 0) {
				nlo = div_ceil(lo - b0, a);
				nhi = div_floor(hi - b0, a);
			} else {
				nlo = div_ceil(b0 - hi, -a);
				nhi = div_floor(b0 - lo, -a);
			}
			if (nlo > min || nhi < max)
				snprintf(note, sizeof(note), "bounds: %lld to %lld: "
					 "span %d's compare immediate (%s+0x%llx, "
					 "%lld*N %+lld, %d bits, %s) would wrap past "
					 "them", nlo > min ? (long long)nlo : min,
					 nhi < max ? (long long)nhi : max, i, s->func,
					 (unsigned long long)s->start,
					 (long long)s->fit[k][0], (long long)s->fit[k][1], w,
					 use == USE_UNSIGNED ? "read unsigned" :
					 use == USE_SIGNED ? "read signed" :
					 use == USE_EQUAL ? "read for equality" :
					 "read as signed and unsigned");
			if (nlo > min)
				min = (long long)nlo;
			if (nhi < max)
				max = (long long)nhi;
		}
	}
	if (!note[0])
		return 0;
	if (min > t->def || max < t->def)	/* cannot be: the default holds */
		return xk_err(-EINVAL, "%s: bounds %lld to %lld miss the default",
			      t->constant, min, max);
	t->min = min;
	t->max = max;
	drop_outside_bounds(t);
	return gen_add_note(t, note);
}

/* How many names a ", "-separated list holds. */
static int names_in(const char *list)
{
	int nr = list[0] != '\0';

	for (const char *p = list; (p = strstr(p, ", ")); p += 2)
		nr++;
	return nr;
}

/*
 * A catalog's objects= that leaves out objects using the macro (MAX_RW_COUNT
 * lists fs/read_write.o; splice and io_uring name it too): a note naming
 * them, since the table retunes none of their uses.
 */
static int note_objects_left_out(const struct xk_kernel *k,
				 const struct xk_constant *c, struct xk_scope *t)
{
	char list[600], more[24] = "", note[sizeof(t->notes[0])];
	int nr = objects_left_out(k, c, list, sizeof(list));

	if (nr <= 0)
		return nr;
	/* the note holds about 120 characters of names: whole ones */
	if (strlen(list) > 120) {
		char *cut = list + 120;
		int names = names_in(list);

		while (cut > list && strncmp(cut, ", ", 2))
			cut--;
		*cut = '\0';
		snprintf(more, sizeof(more), "%s%d more", list[0] ? " and " : "",
			 names - names_in(list));
	}
	snprintf(note, sizeof(note), "objects= leaves out %s%d object%s that "
		 "name%s it or a macro defined from it%s%s%s%s: their uses "
		 "keep the compiled-in value",
		 nr > XK_BUILD_MAX_OBJECTS ? "more than " : "",
		 nr > XK_BUILD_MAX_OBJECTS ? XK_BUILD_MAX_OBJECTS : nr,
		 nr == 1 ? "" : "s", nr == 1 ? "s" : "",
		 list[0] || more[0] ? " (" : "", list, more,
		 list[0] || more[0] ? ")" : "");
	return gen_add_note(t, note);
}

static int xk_gen_impl(const struct xk_kernel *k, const struct xk_constant *c,
		       const struct xk_build_result *b, struct xk_scope *t)
{
	const struct form_table ft = { .k = k, .c = c, .b = b,
				       .analyse_object = gen_object };
	int err = 0;

	memset(t, 0, sizeof(*t));
	xk_strlcpy(t->constant, c->name, sizeof(t->constant));
	xk_strlcpy(t->kind, c->kind, sizeof(t->kind));
	xk_snprintf(t->source, sizeof(t->source), "%s:%d", c->file, c->line);
	xk_strlcpy(t->release, k->release, sizeof(t->release));
	xk_strlcpy(t->version, k->version, sizeof(t->version));
	t->def = c->def;
	t->min = c->min;
	t->max = c->max;
	for (int i = 0; i < b->nr_objects && !err; i++) {
		struct gen_input in = { .object = b->object[i], .def = c->def,
					.min = c->min, .max = c->max };
		char module[64];

		in.module = gen_module_name(b->module[i], module, sizeof(module));
		in.ko = b->module[i];
		in.kernel = k;

		xk_strlcpy(in.base_path, b->base[i], sizeof(in.base_path));
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			in.variant[v].value = b->value[v];
			xk_strlcpy(in.variant[v].path, b->variant[i][v],
				   sizeof(in.variant[v].path));
		}
		err = gen_object(&in, t);
	}
	err = err ?: gen_check_below(k, c, b, t);
	/* the forms that build values of their own: what it refused */
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->retry)
			err = (*f)->retry(&ft, t);
	if (!err)
		refuse_emulated_overlaps(t);
	err = err ?: bound_call_state(t, c->def);
	err = err ?: bound_wrapping_compares(t, b);
	if (!err && !c->module_dir[0])	/* a module's names are not recorded */
		err = xk_count_copies(k, t);
	err = err ?: note_objects_left_out(k, c, t);
	if (err)
		xk_scope_free(t);
	return err;
}

int xk_gen(const struct xk_kernel *k, const struct xk_constant *c,
	   const struct xk_build_result *b, struct xk_scope *t)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_gen_impl(k, c, b, t));
}

/* Disassembly of [from, to) of a function of an object, one line each. */
static int xk_disasm_range_impl(const char *obj_path, const char *func,
				unsigned long long from, unsigned long long to, char **text)
{
	struct xk_obj o;
	struct xk_func_code code;
	struct xk_sym *f;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	err = xk_obj_open(&o, obj_path);
	if (err)
		return err;
	f = xk_obj_find_func(&o, func, NULL);
	if (!f) {
		xk_obj_close(&o);
		return xk_err(-ENOENT, "%s has no function %s", obj_path, func);
	}
	err = xk_disasm_func(f, &code);
	if (err) {
		xk_obj_close(&o);
		return err;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
	} else {
		for (size_t i = 0; i < code.nr; i++) {
			const struct xk_insn *in = &code.insn[i];
			char hex[48] = "";

			if (in->off < from || in->off >= to)
				continue;
			for (int b = 0; b < in->len && b < 15; b++)
				snprintf(hex + strlen(hex), sizeof(hex) - strlen(hex),
					 "%02x ", in->bytes[b]);
			fprintf(m, "%6llx:  %-30s %s\n", (unsigned long long)in->off,
				hex, in->text);
		}
		fclose(m);
		*text = buf;
	}
	xk_func_code_free(&code);
	xk_obj_close(&o);
	return err;
}

int xk_disasm_range(const char *obj_path, const char *func,
		    unsigned long long from, unsigned long long to, char **text)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_disasm_range_impl(obj_path, func, from, to, text));
}


/* Whether word is one of the space-separated words of list. */


/* Appends a point to sp; a full span drops its oldest point but the default's. */
static void add_point(struct xk_scope_span *sp, long long def, long long n,
		      const __s64 *params)
{
	if (sp->nr_points == XK_MAX_POINTS) {
		int drop = sp->points[0].n == def ? 1 : 0;

		memmove(&sp->points[drop], &sp->points[drop + 1],
			(XK_MAX_POINTS - drop - 1) * sizeof(sp->points[0]));
		sp->nr_points--;
	}
	sp->points[sp->nr_points].n = n;
	memcpy(sp->points[sp->nr_points].p, params, sizeof(sp->points[0].p));
	sp->nr_points++;
}

static int xk_gen_point_impl(const struct xk_kernel *k, const struct xk_constant *c,
			     struct xk_scope *t, long long value, int *added)
{
	XK_OPTS(xk_build_opts, o, .one_value = true, .value = value,
		.skip_identity = true);
	struct xk_build_result *b = NULL;
	__s64 (*rows)[XK_MAX_PARAMS] = NULL;
	struct xk_scope_replay *reps = NULL;
	bool *got = NULL;
	struct xk_constant only = *c;
	size_t len = 0;
	int err = 0;

	*added = 0;
	err = xk_scope_check_value(t, value);
	if (err)
		return err;
	/* the objects of the per-value spans without the point: only they */
	only.objects[0] = '\0';
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		if (xk_scope_span_has_value(sp, value, t->def) || gen_has_word(only.objects, sp->object))
			continue;
		len = strlen(only.objects);
		err = xk_snprintf(only.objects + len, sizeof(only.objects) - len,
				  "%s%s", len ? " " : "", sp->object);
		if (err)
			return xk_err(err, "%s: too many objects", t->constant);
	}
	if (!only.objects[0])
		return 0;
	b = calloc(1, sizeof(*b));
	rows = calloc(t->nr_spans, sizeof(*rows));
	reps = calloc(t->nr_spans, sizeof(*reps));
	got = calloc(t->nr_spans, sizeof(*got));
	if (!b || !rows || !reps || !got) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	err = xk_build(k, &only, &o, b);
	for (int i = 0; i < b->nr_objects && !err; i++) {
		struct gen_input in = { .object = b->object[i], .def = t->def,
					.kernel = k,
					.min = t->min, .max = t->max };

		xk_strlcpy(in.base_path, b->base[i], sizeof(in.base_path));
		in.variant[0].value = value;
		xk_strlcpy(in.variant[0].path, b->variant[i][0],
			   sizeof(in.variant[0].path));
		err = gen_point_object(&in, t, rows);
		for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
			if ((*f)->replays)
				err = (*f)->replays(&in, t, reps, got);
	}
	/* every span could take it: all take it */
	for (int i = 0; i < t->nr_spans && !err; i++) {
		struct xk_scope_span *sp = &t->spans[i];
		bool built = false;

		if (xk_scope_span_has_value(sp, value, t->def))
			continue;
		for (int j = 0; j < b->nr_objects; j++)
			built |= !strcmp(b->object[j], sp->object);
		if (!built) {
			err = xk_err(-ENOENT, "%s: span %d's object %s was not built",
				     t->constant, i, sp->object);
			break;
		}
		if (sp->emulate == XK_EMULATE_REPLAY) {
			if (!got[i]) {
				err = xk_err(-ENOENT, "%s: span %d has no replay for %lld",
					     t->constant, i, value);
				break;
			}
			err = xk_scope_add_replay(sp, &reps[i]);
		} else {
			add_point(sp, t->def, value, rows[i]);
		}
		(*added)++;
	}
out:
	free(reps);
	free(got);
	free(rows);
	free(b);
	return err;
}

/* The span of redo at sp's function and start, or NULL. */
static const struct xk_scope_span *same_span(const struct xk_scope *redo,
					     const struct xk_scope_span *sp)
{
	for (int i = 0; i < redo->nr_spans; i++)
		if (!strcmp(redo->spans[i].func, sp->func) &&
		    redo->spans[i].start == sp->start)
			return &redo->spans[i];
	return NULL;
}

/* One affine span of t against the analysis checked at value (redo). */
static void verify_span(const struct xk_scope *t, int i,
			const struct xk_scope *redo, struct xk_verify_result *res)
{
	const struct xk_scope_span *sp = &t->spans[i], *r = same_span(redo, sp);
	char why[400] = "";
	bool same_fit = r && r->nr_params == sp->nr_params;

	for (int k = 0; same_fit && k < sp->nr_params; k++)
		same_fit = r->fit[k][0] == sp->fit[k][0] &&
			   r->fit[k][1] == sp->fit[k][1];
	if (r && r->cls != XK_SPAN_UNSUPPORTED && same_fit) {
		res->nr_checked++;
		return;
	}
	if (!r)
		snprintf(why, sizeof(why), "no such span when checked there");
	else if (r->cls == XK_SPAN_UNSUPPORTED &&
		 (strstr(r->why, WHY_CHECK_SHAPE) ||
		  strstr(r->why, WHY_CHECK_INPUTS))) {
		/* that build's code there has another form: not compared */
		res->nr_other++;
		return;
	} else if (r->cls == XK_SPAN_UNSUPPORTED)
		snprintf(why, sizeof(why), "%.380s", r->why);
	else
		snprintf(why, sizeof(why), "another fit when checked there");
	if (res->nr_failed < XK_VERIFY_MAX_WHY)
		snprintf(res->why[res->nr_failed], sizeof(res->why[0]),
			 "span %d (%.60s+%#llx): %.280s", i, sp->func,
			 (unsigned long long)sp->start, why);
	res->nr_failed++;
}

/*
 * xk gen --verify: the objects of t's affine spans analysed again with the
 * build with value as the check variant (the fit builds stay those of b),
 * as the check below the default does (gen_check_below). An affine span
 * agrees when the same span comes out supported with the same fit: its
 * program, fitted on the two near builds, computed on 256 inputs what the
 * build with value computes there.
 */
static int xk_gen_verify_impl(const struct xk_kernel *k,
			      const struct xk_constant *c,
			      const struct xk_scope *t, long long value,
			      struct xk_verify_result *res)
{
	XK_OPTS(xk_build_opts, o, .one_value = true, .value = value,
		.skip_identity = true);
	struct xk_build_result *b = NULL, *at = NULL;
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	int err, affine = 0;
	size_t len;

	memset(res, 0, sizeof(*res));
	res->value = value;
	err = xk_scope_check_value(t, value);
	if (err)
		return err;
	/* the objects of the affine spans; the others counted */
	only.objects[0] = '\0';
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		if (sp->cls == XK_SPAN_UNSUPPORTED)
			continue;
		if (sp->nr_points > 0 || sp->emulate == XK_EMULATE_REPLAY) {
			res->nr_per_value++;
			continue;
		}
		if (sp->cls == XK_SPAN_DATA || !sp->nr_params) {
			res->nr_other++;
			continue;
		}
		affine++;
		if (gen_has_word(only.objects, sp->object))
			continue;
		len = strlen(only.objects);
		err = xk_snprintf(only.objects + len, sizeof(only.objects) - len,
				  "%s%s", len ? " " : "", sp->object);
		if (err)
			return xk_err(err, "%s: too many objects", t->constant);
	}
	if (value == t->def)	/* the baseline itself */
		res->nr_checked = affine;
	if (!only.objects[0] || value == t->def)
		return 0;
	b = calloc(1, sizeof(*b));
	at = calloc(1, sizeof(*at));
	if (!b || !at) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	err = xk_build(k, &only, NULL, b) ?: xk_build(k, &only, &o, at);
	for (int i = 0; i < at->nr_objects && !err; i++) {
		struct gen_input in = { .object = at->object[i], .def = c->def,
					.min = c->min, .max = c->max, .kernel = k };
		char module[64];
		int j = gen_object_index(b, in.object);

		if (j < 0)
			continue;
		in.module = gen_module_name(b->module[j], module, sizeof(module));
		in.ko = b->module[j];
		xk_strlcpy(in.base_path, b->base[j], sizeof(in.base_path));
		for (int v = 0; v < GEN_FIT_VARIANTS; v++) {
			in.variant[v].value = b->value[v];
			xk_strlcpy(in.variant[v].path, b->variant[j][v],
				   sizeof(in.variant[v].path));
		}
		in.variant[GEN_FIT_VARIANTS].value = value;
		xk_strlcpy(in.variant[GEN_FIT_VARIANTS].path, at->variant[i][0],
			   sizeof(in.variant[GEN_FIT_VARIANTS].path));
		err = gen_object(&in, &redo);
	}
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		if (sp->cls != XK_SPAN_UNSUPPORTED && sp->nr_points <= 0 &&
		    sp->emulate != XK_EMULATE_REPLAY && sp->cls != XK_SPAN_DATA &&
		    sp->nr_params)
			verify_span(t, i, &redo, res);
	}
out:
	xk_scope_free(&redo);
	free(at);
	free(b);
	return err;
}

int xk_gen_verify(const struct xk_kernel *k, const struct xk_constant *c,
		  const struct xk_scope *t, long long value,
		  struct xk_verify_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_gen_verify_impl(k, c, t, value, res));
}

int xk_gen_point(const struct xk_kernel *k, const struct xk_constant *c,
		 struct xk_scope *t, long long value, int *added)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_gen_point_impl(k, c, t, value, added));
}
