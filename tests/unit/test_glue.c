// SPDX-License-Identifier: GPL-2.0
/*
 * The eBPF glue (xk gen --glue) computes what the module checks: for real
 * scope tables of every class (register, flags, memory, inverse, folded),
 * the generated C is compiled on the host with a struct pt_regs like the
 * kernel's and a recording xk_write_kernel, run on random registers and
 * values, and each write compared with the table's program run by the one
 * interpreter (xk_expr_eval), target and content. Also: the registers that
 * hold a function's arguments at the probe point. Needs the fetched kernel.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "spans.h"
#include "internal.h"
#include "unit.h"
#include "unit_kernel.h"
#include "xk/scope.h"

#define TRIALS 64

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* pt_regs field order, as the kernel's struct (x86-64) */
static const char *const regs_order =
	"unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, "
	"si, di, orig_ax, ip, cs, flags, sp, ss;";
static const int field_of[XK_NR_REGS] = {
	[XK_RAX] = 10, [XK_RCX] = 11, [XK_RDX] = 12, [XK_RBX] = 5, [XK_RSP] = 19,
	[XK_RBP] = 4, [XK_RSI] = 13, [XK_RDI] = 14, [XK_R8] = 9, [XK_R9] = 8,
	[XK_R10] = 7, [XK_R11] = 6, [XK_R12] = 3, [XK_R13] = 2, [XK_R14] = 1,
	[XK_R15] = 0,
};

/*
 * Writes a harness that includes the glue, calls each span's write
 * function on TRIALS inputs and compares with the expected writes computed
 * here; compiles and runs it. 0 if every write matched.
 */
static int check_glue(const char *catalog, const char *name)
{
	char dir[] = "/tmp/xk-glue-XXXXXX", glue[64], src[64], bin[64];
	char cwd[XK_PATH_MAX], hdr[XK_PATH_MAX + 32], log[64];
	struct xk_scope t;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	FILE *f;
	int err, st;

	CHECK(gen(catalog, name, &t) == 0);
	CHECK(mkdtemp(dir));
	snprintf(glue, sizeof(glue), "%s/glue.h", dir);
	snprintf(src, sizeof(src), "%s/h.c", dir);
	snprintf(bin, sizeof(bin), "%s/h", dir);
	snprintf(log, sizeof(log), "%s/cc.log", dir);
	CHECK(xk_glue_write(&t, glue) == 0);
	f = fopen(src, "w");
	CHECK(f);
	fprintf(f, "#include <stdint.h>\n#include <stdio.h>\n"
		   "typedef uint8_t __u8; typedef int8_t __s8; typedef uint16_t __u16;\n"
		   "typedef int16_t __s16; typedef uint32_t __u32; typedef int32_t __s32;\n"
		   "typedef uint64_t __u64; typedef int64_t __s64;\n"
		   "#define __bpf__ 1\n#define SEC(x)\n"
		   "struct pt_regs { %s };\n"
		   "#include \"xk_expr.h\"\n#include \"xk_kfunc.h\"\n"
		   "static struct xk_write got[2]; static int nr_got;\n"
		   "static int xk_write_kernel(struct pt_regs *c, __s64 v, const struct xk_write *w, __u32 sz)\n"
		   "{ (void)c; (void)v; nr_got = sz / sizeof(*w); for (int i = 0; i < nr_got; i++) got[i] = w[i]; return 0; }\n"
		   "#include \"%s\"\n"
		   "struct trial { unsigned long r[21]; __s64 n; int span; int nr; struct xk_write want[2]; __u64 mask[2]; };\n"
		   "static const struct trial trials[] = {\n", regs_order, glue);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];

		if (s->cls == XK_SPAN_UNSUPPORTED)
			continue;
		for (int k = 0; k < TRIALS; k++) {
			__u64 regs[XK_NR_REGS];
			uint64_t r[21] = { 0 };
			/* values around the default and the bounds */
			int64_t n = k < 4 ? (k & 1 ? t.min : t.max) :
				    t.min + (int64_t)(rnd(&seed) % (uint64_t)(t.max - t.min + 1));

			for (int g = 0; g < XK_NR_REGS; g++) {
				regs[g] = k & 2 ? rnd(&seed) : rnd(&seed) & 0x3ff;
				r[field_of[g]] = regs[g];
			}
			fprintf(f, "{ {");
			for (int j = 0; j < 21; j++)
				fprintf(f, "%#llxUL,", (unsigned long long)r[j]);
			fprintf(f, "}, %lldLL, %d, %d, {", (long long)n, i, s->nr_locs);
			for (int l = 0; l < s->nr_locs; l++) {
				const struct xk_scope_loc *loc = &s->locs[l];
				bool mem = loc->kind == XK_LOC_MEM;

				fprintf(f, "{ %d, %d, %lldLL, %#llxULL },", loc->kind,
					mem ? loc->base : 0, mem ? (long long)loc->disp : 0,
					(unsigned long long)xk_expr_eval(&loc->expr, regs, n));
			}
			fprintf(f, "}, {");
			for (int l = 0; l < s->nr_locs; l++)
				fprintf(f, "%#llxULL,", (unsigned long long)
					(s->locs[l].kind == XK_LOC_FLAGS ? XK_EFLAGS_ARITH :
					 xk_mask(s->locs[l].width)));
			fprintf(f, "} },\n");
		}
	}
	fprintf(f, "};\nint main(void)\n{\n\tint bad = 0;\n"
		   "\tfor (unsigned i = 0; i < sizeof(trials) / sizeof(trials[0]); i++) {\n"
		   "\t\tconst struct trial *x = &trials[i];\n"
		   "\t\tstruct pt_regs regs;\n\t\t__builtin_memcpy(&regs, x->r, sizeof(regs));\n"
		   "\t\tnr_got = 0;\n\t\tswitch (x->span) {\n");
	for (int i = 0; i < t.nr_spans; i++)
		if (t.spans[i].cls != XK_SPAN_UNSUPPORTED)
			fprintf(f, "\t\tcase %d: %s_write%d(&regs, x->n); break;\n", i,
				t.constant, i);
	fprintf(f, "\t\t}\n\t\tif (nr_got != x->nr) bad++;\n"
		   "\t\tfor (int l = 0; l < x->nr && l < nr_got; l++)\n"
		   "\t\t\tif (got[l].kind != x->want[l].kind || got[l].base != x->want[l].base ||\n"
		   "\t\t\t    got[l].disp != x->want[l].disp ||\n"
		   "\t\t\t    ((got[l].content ^ x->want[l].content) & x->mask[l])) {\n"
		   "\t\t\t\tif (bad++ < 3) printf(\"#   span %%d n=%%lld loc %%d: %%#llx, want %%#llx\\n\",\n"
		   "\t\t\t\t\tx->span, (long long)x->n, l, (unsigned long long)got[l].content,\n"
		   "\t\t\t\t\t(unsigned long long)x->want[l].content);\n\t\t\t}\n\t}\n"
		   "\treturn bad != 0;\n}\n");
	fclose(f);
	CHECK(getcwd(cwd, sizeof(cwd)));
	snprintf(hdr, sizeof(hdr), "-I%s/include/xk/abi", cwd);
	{
		const char *argv[] = { "gcc", "-std=gnu11", "-Wall", "-Werror",
				       "-Wno-unused-function", hdr, "-o", bin, src, NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		err = xk_run(&cmd);
	}
	if (err)
		printf("#   %s: the glue does not compile (kept in %s)\n", name, dir);
	CHECK(err == 0);
	{
		const char *argv[] = { bin, NULL };
		struct xk_cmd cmd = { .argv = argv };

		st = xk_run(&cmd);
	}
	if (st)
		printf("#   %s: the glue's writes differ from the table's (kept in %s)\n",
		       name, dir);
	CHECK(st == 0);
	xk_rm_rf(dir);
	xk_scope_free(&t);
	return 0;
}

static int glue_register_sbb(void) { return check_glue(STOCK, "BLK_MAX_REQUEST_COUNT"); }
static int glue_flags(void) { return check_glue(STOCK, "HYSTART_MIN_SAMPLES"); }
static int glue_inverse(void) { return check_glue(STOCK, "MAX_SOFTIRQ_TIME"); }
static int glue_lea_inverse(void) { return check_glue(STOCK, "TCP_BACKLOG_SLACK"); }
static int glue_memory(void) { return check_glue(GOLDEN, "G_STORE"); }
static int glue_folded(void) { return check_glue(GOLDEN, "G_FOLD"); }
static int glue_many_spans(void) { return check_glue(STOCK, "MAX_RW_COUNT"); }

static const struct xk_scope_span *span_in(const struct xk_scope *t, const char *func)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (!strcmp(t->spans[i].func, func))
			return &t->spans[i];
	return NULL;
}

/* blk_add_rq_to_plug(plug, rq): plug moved to rbx, rq to rbp; rdx reused */
static int arguments_at_the_probe(void)
{
	const struct xk_scope_span *s;
	struct xk_scope t;

	CHECK(gen(STOCK, "BLK_MAX_REQUEST_COUNT", &t) == 0);
	s = span_in(&t, "blk_add_rq_to_plug");
	CHECK(s);
	CHECK(s->arg_reg[0] == XK_RBX);
	CHECK(s->arg_reg[1] == XK_RBP);
	CHECK(s->arg_reg[2] == -1);	/* movzwl 0x2a(%rdi),%edx */
	xk_scope_free(&t);
	/* cubictcp_acked(sk, sample): sk in rbx past the calls it makes */
	CHECK(gen(STOCK, "HYSTART_DELAY_MAX", &t) == 0);
	s = span_in(&t, "cubictcp_acked");
	CHECK(s);
	CHECK(s->arg_reg[0] == XK_RBX);
	CHECK(s->arg_reg[1] == -1);
	xk_scope_free(&t);
	return 0;
}

static int no_glue_without_a_supported_span(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_DIV", &t) == 0);
	CHECK(xk_scope_nr_supported(&t) == 0);
	CHECK(xk_glue_write(&t, "/tmp/xk-glue-none.h") == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "no supported span"));
	CHECK(access("/tmp/xk-glue-none.h", F_OK) != 0);
	xk_scope_free(&t);
	return 0;
}

int main(void)
{
	static const struct unit_test tests[] = {
		T(glue_register_sbb), T(glue_flags), T(glue_inverse),
		T(glue_lea_inverse), T(glue_memory), T(glue_folded),
		T(glue_many_spans), T(arguments_at_the_probe),
		T(no_glue_without_a_supported_span),
	};

	if (find_kernel())
		return 1;
	return unit_main("glue", tests, sizeof(tests) / sizeof(tests[0]));
}
