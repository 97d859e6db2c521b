// SPDX-License-Identifier: GPL-2.0
/*
 * libxk: the eBPF glue of a scope table (xk gen --glue). A C header that a
 * policy (Xk-tune) includes: per span, the code that turns a chosen value
 * into the span's state (the table's update programs, compiled to C from
 * the registers at the probe point) and hands it to xk_write_kernel; the
 * registers holding the function's arguments there; and one macro that
 * instantiates every program of a policy around the author's choose().
 * The module checks each write against the same table, so glue made from
 * another table is refused, not obeyed.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "xk/analysis.h"

/* struct pt_regs fields, in enum xk_reg order */
static const char *const pt_regs_field[XK_NR_REGS] = {
	"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

/*
 * The C of each operation, as xk_prog_run (xk/abi/xk_expr.h) computes it:
 * $a $b $c the operands' temporaries, $w the width, $W width - 1, $m the
 * width's mask, $i and $j the immediates, $r the register's pt_regs field.
 * The result is then truncated to the width (flags excepted).
 */
static const char *const op_c[XK_OP_MAX] = {
	[XK_OP_CONST] = "(__u64)$iLL",
	[XK_OP_REG] = "ctx->$r",
	[XK_OP_PARAM] = "(__u64)$iLL * (__u64)n + (__u64)$jLL",
	[XK_OP_ADD] = "$a + $b",
	[XK_OP_SUB] = "$a - $b",
	[XK_OP_AND] = "$a & $b",
	[XK_OP_OR] = "$a | $b",
	[XK_OP_XOR] = "$a ^ $b",
	[XK_OP_MUL] = "$a * $b",
	[XK_OP_SHL] = "($b & 63) >= $w ? 0 : $a << ($b & 63)",
	[XK_OP_SHR] = "($b & 63) >= $w ? 0 : ($a & $m) >> ($b & 63)",
	[XK_OP_SAR] = "(__u64)(xk_signed($a, $w) >> (($b & 63) >= $w ? $W : ($b & 63)))",
	[XK_OP_NEG] = "-$a",
	[XK_OP_NOT] = "~$a",
	[XK_OP_SEXT] = "(__u64)xk_signed($a, $i)",
	[XK_OP_LTU] = "($a & $m) < ($b & $m)",
	[XK_OP_LTS] = "xk_signed($a, $w) < xk_signed($b, $w)",
	[XK_OP_EQ] = "($a & $m) == ($b & $m)",
	[XK_OP_SELECT] = "($c & 1) ? $a : $b",
	[XK_OP_FLAGS_SUB] = "xk_flags_sub($a, $b, $w)",
	[XK_OP_FLAGS_LOGIC] = "xk_flags_logic($a, $b, $w)",
};

/* Writes one operation's C, its placeholders filled in. */
static void emit_op(FILE *f, const struct xk_expr_insn *in, const int *opnd)
{
	unsigned int w = in->width;

	for (const char *p = op_c[in->op]; *p; p++) {
		if (*p != '$' || !p[1]) {
			fputc(*p, f);
			continue;
		}
		switch (*++p) {
		case 'a': fprintf(f, "t%d", opnd[0]); break;
		case 'b': fprintf(f, "t%d", opnd[1]); break;
		case 'c': fprintf(f, "t%d", opnd[2]); break;
		case 'w': fprintf(f, "%u", w); break;
		case 'W': fprintf(f, "%u", w - 1); break;
		case 'm': fprintf(f, "0x%" PRIx64 "ULL", (uint64_t)xk_mask(w)); break;
		case 'i': fprintf(f, "%lld", (long long)in->imm); break;
		case 'j': fprintf(f, "%lld", (long long)in->imm2); break;
		case 'r': fputs(pt_regs_field[in->reg % XK_NR_REGS], f); break;
		}
	}
}

/*
 * One statement per instruction of a program: t<k> = ..., truncated to the
 * instruction's width as xk_prog_run does. Returns the result's temporary.
 */
static int emit_expr(FILE *f, const struct xk_expr *e, const char *indent)
{
	int stack[XK_EXPR_MAX_STACK], sp = 0;

	if (xk_expr_validate(e))
		return xk_err(-EINVAL, "a malformed update program");
	for (uint32_t i = 0; i < e->len; i++) {
		const struct xk_expr_insn *in = &e->insn[i];
		int arity = xk_expr_arity(in->op), opnd[3] = { -1, -1, -1 };
		bool flags = in->op == XK_OP_FLAGS_SUB || in->op == XK_OP_FLAGS_LOGIC;

		/* operands in the order they were pushed: c, a, b for select */
		if (arity == 3) {
			opnd[1] = stack[--sp];
			opnd[0] = stack[--sp];
			opnd[2] = stack[--sp];
		} else {
			for (int k = arity - 1; k >= 0; k--)
				opnd[k] = stack[--sp];
		}
		fprintf(f, "%s__u64 t%u = (", indent, i);
		emit_op(f, in, opnd);
		if (flags)
			fputs(");\n", f);
		else
			fprintf(f, ") & 0x%" PRIx64 "ULL;\n", (uint64_t)xk_mask(in->width));
		stack[sp++] = i;
	}
	return stack[0];
}

static int emit_span(FILE *f, const struct xk_scope *t, int idx,
		     const struct xk_scope_span *s)
{
	const char *k = t->constant;

	fprintf(f, "/* span %d: %s+0x%" PRIx64 " (%s), %s */\n", idx, s->func,
		s->probe, s->object, xk_span_class_name(s->cls));
	for (int l = 0; l < s->nr_locs; l++)
		fprintf(f, "/*   state: %s */\n", s->locs[l].text);
	for (int a = 0; a < XK_MAX_ARGS; a++)
		if (s->arg_reg[a] >= 0)
			fprintf(f, "#define %s_SPAN%d_ARG%d(ctx) ((ctx)->%s)\n", k, idx,
				a, pt_regs_field[s->arg_reg[a]]);
	fprintf(f, "static __always_inline int\n%s_write%d(struct pt_regs *ctx, __s64 n)\n{\n",
		k, idx);
	fprintf(f, "\tstruct xk_write w[%d] = {};\n\n", s->nr_locs);
	for (int l = 0; l < s->nr_locs; l++) {
		const struct xk_scope_loc *loc = &s->locs[l];
		int r;

		fprintf(f, "\t{\n");
		r = emit_expr(f, &loc->expr, "\t\t");
		if (r < 0)
			return xk_err(r, "%s: span %d: invalid update program",
				      k, idx);
		fprintf(f, "\t\tw[%d].kind = %d;\n\t\tw[%d].base = %d;\n"
			   "\t\tw[%d].disp = %" PRId64 "LL;\n\t\tw[%d].content = t%d;\n\t}\n",
			l, loc->kind, l, loc->kind == XK_LOC_MEM ? loc->base : 0,
			l, loc->kind == XK_LOC_MEM ? loc->disp : 0, l, r);
	}
	fputs("\treturn xk_write_kernel(ctx, n, w, sizeof(w));\n}\n\n", f);
	return 0;
}

/* Lines of the policy macro: each ends with a continuation. */
static void macro_line(FILE *f, const char *fmt, ...) __printf(2, 3);
static void macro_line(FILE *f, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(f, "%-72s\\\n", line);
}

/* The program of one span: choose, xk_set, write unless compiled-in. */
static void emit_span_program(FILE *f, const struct xk_scope *t, int idx,
			      const struct xk_scope_span *s)
{
	const char *k = t->constant;

	macro_line(f, "SEC(\"kprobe/%s+0x%" PRIx64 "\")", s->func, s->probe);
	macro_line(f, "int %s_span%d(struct pt_regs *ctx)", k, idx);
	macro_line(f, "{");
	macro_line(f, "\tchar label[XK_LABEL_MAX] = {};");
	macro_line(f, "\t__s64 n = choose(ctx, %d, label);", idx);
	macro_line(f, "%s", "");
	macro_line(f, "\tif (n == XK_KEEP)");
	macro_line(f, "\t\tn = %s_DEFAULT;", k);
	macro_line(f, "\tif (xk_set(ctx, &n, label, sizeof(label)) == 0 &&");
	macro_line(f, "\t    n != %s_DEFAULT)", k);
	macro_line(f, "\t\t%s_write%d(ctx, n);", k, idx);
	macro_line(f, "\treturn 0;");
	macro_line(f, "}");
}

/* A safe-span exit: the thread's pinned value is released. */
static void emit_exit_program(FILE *f, const struct xk_scope *t, int idx,
			      const struct xk_scope_span *s, int e)
{
	macro_line(f, "SEC(\"kprobe/%s+0x%" PRIx64 "\")", s->func, s->exits[e]);
	macro_line(f, "int %s_exit%d_%d(struct pt_regs *ctx)", t->constant, idx, e);
	macro_line(f, "{");
	macro_line(f, "\txk_transition_done(ctx);");
	macro_line(f, "\treturn 0;");
	macro_line(f, "}");
}

static int xk_glue_write_impl(const struct xk_scope *t, const char *path)
{
	int nr = 0, err = 0;
	const char *k = t->constant;
	bool nest = xk_scope_spans_nest(t);
	FILE *f;

	for (int i = 0; i < t->nr_spans; i++) {
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED)
			continue;
		/* the module refuses such tables for a policy, too */
		if (t->spans[i].nr_mem_in)
			return xk_err(-ENOTSUP, "%s: span %d reads memory at its probe "
					       "point (a memory input): policies do "
					       "not drive such spans yet", k, i);
		nr++;
	}
	if (!nr)
		return xk_err(-ENOTSUP, "%s: no supported span: nothing for a policy "
				       "to drive", k);
	f = fopen(path, "w");
	if (!f)
		return xk_err(-errno, "cannot write %s: %s", path, strerror(errno));
	fprintf(f, "/* SPDX-License-Identifier: GPL-2.0 */\n"
		   "/*\n * Generated by `xk gen %s --glue` from its scope table (%s, %s)\n"
		   " * for kernel %s (%s). Do not edit: made again with the table.\n"
		   " *\n * Include after vmlinux.h and xk_policy.h, define\n"
		   " *   static __always_inline __s64 choose(struct pt_regs *ctx, int span,\n"
		   " *                                       char *label)\n"
		   " * returning the value for this execution (XK_KEEP: the compiled-in one;\n"
		   " * label: up to XK_LABEL_MAX - 1 characters naming the context),\n"
		   " * then write XK_POLICY_%s(choose) once.\n */\n",
		k, t->kind, t->source, t->release, t->version, k);
	fprintf(f, "#ifndef XK_GLUE_%s_H\n#define XK_GLUE_%s_H\n\n", k, k);
	fprintf(f, "#define %s_DEFAULT %" PRId64 "LL\n#define %s_MIN %" PRId64 "LL\n"
		   "#define %s_MAX %" PRId64 "LL\n#define %s_NR_SPANS %d\n\n",
		k, t->def, k, t->min, k, t->max, k, nr);
	fprintf(f, "/* a parameter holding a value of %s: xk load checks its bounds */\n"
		   "typedef __s64 xk_%s_t;\n\n", k, k);
	for (int i = 0; i < t->nr_spans && !err; i++)
		if (t->spans[i].cls != XK_SPAN_UNSUPPORTED)
			err = emit_span(f, t, i, &t->spans[i]);
	if (err) {
		fclose(f);
		unlink(path);
		return err;
	}

	fprintf(f, "/*\n * Every program of a policy for %s: one at each critical span%s.\n */\n",
		k, nest ? ";\n * a thread inside a safe span may reach another span, so one at "
			  "each safe-span\n * exit too, where the thread's value (pinned by "
			  "xk_set) is released" : "");
	macro_line(f, "#define XK_POLICY_%s(choose)", k);
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *s = &t->spans[i];

		if (s->cls == XK_SPAN_UNSUPPORTED)
			continue;
		emit_span_program(f, t, i, s);
		/* an exit at the function's end (the path falls off it, as
		 * into a noreturn call) has no instruction to probe */
		for (int e = 0; e < s->nr_exits && nest; e++)
			if (s->exits[e] < s->func_size)
				emit_exit_program(f, t, i, s, e);
	}
	fputs("/* end of XK_POLICY_", f);
	fprintf(f, "%s */\n", k);
	fprintf(f, "\n#endif\n");
	if (fclose(f))
		return xk_err(-EIO, "cannot write %s", path);
	return 0;
}

int xk_glue_write(const struct xk_scope *t, const char *path)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_glue_write_impl(t, path));
}
