// SPDX-License-Identifier: GPL-2.0
/*
 * Form: the bounds a compare keeps. A check of the finished table, no
 * spans of its own: the register forms' flags spans hold while their
 * compare immediate does not wrap, so the table's bounds narrow to the
 * values that keep it in range.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "form.h"
#include "redo.h"

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
 * the finished table, after the call-state bounds.
 */
static int check_compare_bounds(const struct form_table *ft, struct xk_scope *t)
{
	const struct xk_build_result *b = ft->b;
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
	gen_drop_outside_bounds(t);
	return gen_add_note(t, note);
}

const struct gen_form form_compare_bounds = {
	.name = "compare bounds",
	.check = check_compare_bounds,
};
