// SPDX-License-Identifier: GPL-2.0
/*
 * The eBPF glue (xk gen --glue): for real scope tables of every class
 * (register, flags, memory, inverse, folded), the generated C is compiled
 * on the host with a struct pt_regs like the kernel's, a recording
 * xk_choose and a choose() of the test's; each span's program must call
 * xk_choose exactly once, with the value chosen (the compiled-in one for
 * XK_KEEP) and the label, and return 0 (no perf sample). Each program sits
 * at its span's probe point, under the name xk load binds it by
 * (CONSTANT_span<i>); there is no other program. Also: the registers that
 * hold a function's arguments at the probe point. Needs the fetched kernel.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "forms/form.h"
#include "spans.h"
#include "internal.h"
#include "unit.h"
#include "unit_kernel.h"
#include "xk/scope.h"

/* pt_regs field order, as the kernel's struct (x86-64) */
static const char *const regs_order =
	"unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, "
	"si, di, orig_ax, ip, cs, flags, sp, ss;";

/* Occurrences of needle in the file at path. */
static int count_in(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len = 0;
	int n = 0;

	if (xk_read_file(path, &text, &len))
		return -1;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

/*
 * Writes a harness that includes the glue and runs each span's program
 * twice (choose returns a value, then XK_KEEP), checking the calls; the
 * programs' sections are checked in the text. 0 if all held.
 */
static int check_glue(const char *catalog, const char *name)
{
	char dir[] = "/tmp/xk-glue-XXXXXX", glue[64], src[64], bin[64];
	char cwd[XK_PATH_MAX], hdr[XK_PATH_MAX + 32], log[64];
	struct xk_scope t;
	FILE *f;
	int err, st, nr = 0;

	CHECK(gen(catalog, name, &t) == 0);
	CHECK(mkdtemp(dir));
	snprintf(glue, sizeof(glue), "%s/glue.h", dir);
	snprintf(src, sizeof(src), "%s/h.c", dir);
	snprintf(bin, sizeof(bin), "%s/h", dir);
	snprintf(log, sizeof(log), "%s/cc.log", dir);
	CHECK(xk_glue_write(&t, glue) == 0);
	for (int i = 0; i < t.nr_spans; i++) {
		const struct xk_scope_span *s = &t.spans[i];
		char want[256];

		if (s->cls == XK_SPAN_UNSUPPORTED)
			continue;
		nr++;
		snprintf(want, sizeof(want), "SEC(\"kprobe/%s+0x%llx\")", s->func,
			 (unsigned long long)s->probe);
		CHECK(count_in(glue, want) == 1);
		snprintf(want, sizeof(want), "int %s_span%d(struct pt_regs *ctx)",
			 t.constant, i);
		CHECK(count_in(glue, want) == 1);
	}
	CHECK(count_in(glue, "SEC(") == nr);
	CHECK(count_in(glue, "xk_write_kernel") == 0);
	f = fopen(src, "w");
	CHECK(f);
	fprintf(f, "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"
		   "typedef uint8_t __u8; typedef int8_t __s8; typedef uint16_t __u16;\n"
		   "typedef int16_t __s16; typedef uint32_t __u32; typedef int32_t __s32;\n"
		   "typedef uint64_t __u64; typedef int64_t __s64;\n"
		   "#define __bpf__ 1\n#define SEC(x)\n#define __ksym\n"
		   "struct pt_regs { %s };\n"
		   "#include \"xk_policy.h\"\n"
		   "static int calls; static __s64 got; static char got_label[XK_LABEL_MAX];\n"
		   "int xk_choose(struct pt_regs *c, __s64 v, const char *l, __u32 sz)\n"
		   "{ (void)c; calls++; got = v; if (sz == XK_LABEL_MAX) memcpy(got_label, l, sz); return 0; }\n"
		   "static __s64 want; static int want_span;\n"
		   "static __s64 choose(struct pt_regs *ctx, int span, char *label)\n"
		   "{ (void)ctx; want_span = span; xk_label(label, \"ctx\"); return want; }\n"
		   "#include \"%s\"\n"
		   "XK_POLICY_%s(choose)\n"
		   "static int run(int (*prog)(struct pt_regs *), int span, __s64 v, __s64 expect)\n"
		   "{\n\tstruct pt_regs regs = { 0 };\n\tint ret;\n"
		   "\tcalls = 0; want = v; want_span = -1; got_label[0] = 0;\n"
		   "\tret = prog(&regs);\n"
		   "\tif (ret || calls != 1 || got != expect || want_span != span ||\n"
		   "\t    strcmp(got_label, \"ctx\")) {\n"
		   "\t\tprintf(\"#   span %%d: returned %%d, %%d calls, value %%lld (want %%lld)\\n\",\n"
		   "\t\t       span, ret, calls, (long long)got, (long long)expect);\n"
		   "\t\treturn 1;\n\t}\n\treturn 0;\n}\n"
		   "int main(void)\n{\n\tint bad = 0;\n\n",
		regs_order, glue, t.constant);
	for (int i = 0; i < t.nr_spans; i++) {
		if (t.spans[i].cls == XK_SPAN_UNSUPPORTED)
			continue;
		fprintf(f, "\tbad += run(%s_span%d, %d, %lldLL, %lldLL);\n", t.constant, i,
			i, (long long)t.min, (long long)t.min);
		fprintf(f, "\tbad += run(%s_span%d, %d, XK_KEEP, %lldLL);\n", t.constant, i,
			i, (long long)t.def);
	}
	fprintf(f, "\treturn bad != 0;\n}\n");
	fclose(f);
	CHECK(getcwd(cwd, sizeof(cwd)));
	snprintf(hdr, sizeof(hdr), "-I%s/include/xk/abi", cwd);
	{
		char bpfdir[XK_PATH_MAX + 32];
		const char *argv[] = { "gcc", "-std=gnu11", "-Wall", "-Werror",
				       "-Wno-unused-function", "-Wno-unknown-pragmas", hdr, bpfdir, "-o", bin,
				       src, NULL };
		struct xk_cmd cmd = { .argv = argv, .log_path = log };

		snprintf(bpfdir, sizeof(bpfdir), "-I%s/bpf", cwd);
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
		printf("#   %s: a program does not call xk_choose once with its value "
		       "(kept in %s)\n", name, dir);
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

	gen_replay_off = true;	/* replayed, it would be supported */
	CHECK(gen(GOLDEN, "G_SPILL", &t) == 0);
	gen_replay_off = false;
	CHECK(xk_scope_nr_supported(&t) == 0);
	CHECK(xk_glue_write(&t, "/tmp/xk-glue-none.h") == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "no supported span"));
	CHECK(access("/tmp/xk-glue-none.h", F_OK) != 0);
	xk_scope_free(&t);
	return 0;
}

/* a variable has one value for every device and flow: no glue */
static int no_glue_for_a_variable(void)
{
	struct xk_scope t;

	CHECK(gen(GOLDEN, "G_INIT", &t) == 0);
	CHECK(t.nr_spans == 1 && t.spans[0].cls == XK_SPAN_DATA);
	CHECK(xk_glue_write(&t, "/tmp/xk-glue-var.h") == -ENOTSUP);
	CHECK(strstr(xk_last_error(), "is a variable (golden_initial_limit)"));
	CHECK(access("/tmp/xk-glue-var.h", F_OK) != 0);
	xk_scope_free(&t);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		T(glue_register_sbb), T(glue_flags), T(glue_inverse),
		T(glue_lea_inverse), T(glue_memory), T(glue_folded),
		T(glue_many_spans), T(arguments_at_the_probe),
		T(no_glue_without_a_supported_span), T(no_glue_for_a_variable),
	};

	if (find_kernel())
		return 1;
	return unit_main("glue", tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
