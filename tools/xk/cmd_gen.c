// SPDX-License-Identifier: GPL-2.0
/* xk build | gen: the offline half, from a constant to its scope table. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "xk/scope.h"

bool dev_tree(char *top, size_t size)
{
	char exe[PATH_MAX], catalog[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(catalog, sizeof(catalog), "%s/../catalog/constants.conf", exe);
	if (access(catalog, R_OK))
		return false;
	snprintf(top, size, "%s/..", exe);
	return true;
}

/* The catalog: --catalog, $XK_CATALOG, or catalog/ beside the build. */
const char *catalog_path(const char *opt)
{
	static char path[PATH_MAX + 64];
	const char *env = getenv("XK_CATALOG");
	char top[PATH_MAX];

	if (opt)
		return opt;
	if (env && *env)
		return env;
	if (dev_tree(top, sizeof(top))) {
		snprintf(path, sizeof(path), "%s/catalog/constants.conf", top);
		return path;
	}
	return XK_SYSTEM_CATALOG;
}

struct gen_args {
	bool gen;		/* xk gen, else xk build */
	const char *release, *catalog, *output, *glue;
	bool explain, list, no_identity, prove;
	int jobs;
	struct cli_list prepare;	/* values for the per-value spans */
	struct cli_list verify;		/* values to check the table at */
};

/* build and gen take the same options */
static const struct cli_opt gen_opts[] = {
	{ "release", 'r', CLI_STR, offsetof(struct gen_args, release) },
	{ "catalog", 'c', CLI_STR, offsetof(struct gen_args, catalog) },
	{ "output", 'o', CLI_STR, offsetof(struct gen_args, output) },
	{ "explain", 'e', CLI_FLAG, offsetof(struct gen_args, explain) },
	{ "list", 'l', CLI_FLAG, offsetof(struct gen_args, list) },
	{ "jobs", 'J', CLI_INT, offsetof(struct gen_args, jobs), 0, 4096 },
	{ "no-identity", 0, CLI_FLAG, offsetof(struct gen_args, no_identity) },
	{ "glue", 0, CLI_STR, offsetof(struct gen_args, glue) },
	{ "prepare", 0, CLI_LIST, offsetof(struct gen_args, prepare) },
	{ "verify", 0, CLI_LIST, offsetof(struct gen_args, verify) },
	{ "prove", 0, CLI_FLAG, offsetof(struct gen_args, prove) },
	{ NULL },
};

static int list_catalog(const char *catalog)
{
	char *names = NULL;
	int err = xk_catalog_list(catalog, &names);

	if (err)
		return p_lib_err("catalog", err);
	if (json_output) {
		json_begin_array(jw, NULL);
		for (char *p = names; *p;) {
			char *e = strchr(p, '\n');

			if (!e)
				break;
			*e = '\0';
			json_str(jw, NULL, p);
			p = e + 1;
		}
		json_end_array(jw);
	} else {
		fputs(names, stdout);
	}
	free(names);
	return 0;
}

/* Common to build and gen: the one constant named, its kernel, its build. */
static int build_constant(const char *topic, const struct gen_args *a,
			  int argc, char **argv, struct xk_kernel *k,
			  struct xk_constant *c, struct xk_build_result *b)
{
	XK_OPTS(xk_build_opts, bo, .jobs = a->jobs, .progress = !quiet && !json_output,
		.skip_identity = a->no_identity);
	int err;

	if (argc != 1)
		return p_usage(topic, "name one constant");
	if (kernel_for_command(a->release, k))
		return XK_EXIT_FAIL;
	if (!quiet && !json_output)
		fprintf(stderr, "xk: kernel %s (%s)\n", k->release,
			xk_target_why_text(k->why));
	err = xk_constant_resolve(catalog_path(a->catalog), argv[0], c);
	if (err)
		return p_lib_err("constant", err);
	err = xk_build(k, c, &bo, b);
	if (err)
		return p_lib_err("build", err);
	return 0;
}

static void json_build(const struct xk_constant *c, const struct xk_build_result *b)
{
	json_str(jw, "constant", c->name);
	json_str(jw, "source", c->file);
	json_int(jw, "line", c->line);
	json_int(jw, "default", c->def);
	if (c->unit[0])
		json_str(jw, "value", c->unit);
	json_begin_array(jw, "values");
	for (int v = 0; v < XK_BUILD_VARIANTS; v++)
		json_int(jw, NULL, b->value[v]);
	json_end_array(jw);
	json_begin_array(jw, "objects");
	for (int i = 0; i < b->nr_objects; i++) {
		json_begin_object(jw, NULL);
		json_str(jw, "object", b->object[i]);
		json_str(jw, "baseline", b->base[i]);
		json_begin_array(jw, "variants");
		for (int v = 0; v < XK_BUILD_VARIANTS; v++)
			json_str(jw, NULL, b->variant[i][v]);
		json_end_array(jw);
		json_end_object(jw);
	}
	json_end_array(jw);
	json_int(jw, "compiled", b->compiled);
	json_int(jw, "cached", b->cached);
	json_int(jw, "identical_functions", b->identical);
	json_double(jw, "build_seconds", b->seconds);
}

/* xk build's report */
static int print_build(const struct xk_constant *c,
		       const struct xk_build_result *b)
{
	if (json_output) {
		json_begin_object(jw, NULL);
		json_build(c, b);
		json_end_object(jw);
		return 0;
	}
	printf("%s (%s:%d, default %lld): %d object%s, values %lld %lld %lld; "
	       "%d compiled, %d cached, %d functions identical to the shipped "
	       "kernel, %.1f s\n",
	       c->name, c->file, c->line, c->def, b->nr_objects,
	       b->nr_objects == 1 ? "" : "s", b->value[0], b->value[1], b->value[2],
	       b->compiled, b->cached, b->identical, b->seconds);
	if (c->unit[0])
		printf("value: %s\n", c->unit);
	for (int i = 0; i < b->nr_objects; i++)
		printf("  %s\n", b->object[i]);
	return 0;
}

static void explain_span(const struct xk_build_result *b,
			 const struct xk_scope_span *s)
{
	char *text = NULL;
	int obj = -1;

	for (int i = 0; i < b->nr_objects; i++)
		if (!strcmp(b->object[i], s->object))
			obj = i;
	if (obj < 0 || xk_disasm_range(b->base[obj], s->func, s->start,
				       s->probe + 16, &text))
		return;
	for (char *line = text; *line;) {
		char *end = strchr(line, '\n');
		unsigned long long off = strtoull(line, NULL, 16);
		const char *mark = off < s->probe ? "span " :
				   off == s->probe ? "probe" : "     ";

		if (!end)
			break;
		*end = '\0';
		printf("    %s %s\n", mark, line);
		line = end + 1;
	}
	free(text);
}

static void print_span(const struct xk_build_result *b, int i,
		       const struct xk_scope_span *s, bool explain)
{
	if (!strcmp(s->func, XK_SPAN_EVERY_USE))
		printf("span %d: %s, every use  %s", i, xk_scope_left_out_name(s),
		       xk_span_class_name(s->cls));
	else
		printf("span %d: %s %s+0x%llx  %s", i, s->object, s->func,
		       (unsigned long long)s->start, xk_span_class_name(s->cls));
	if (s->cls == XK_SPAN_UNSUPPORTED) {
		printf("\n    why: %s\n", s->why);
		return;
	}
	if (s->cls == XK_SPAN_DATA && s->nr_points > 0) {
		printf(", %llu bytes of the %llu-byte variable\n"
		       "    a variable boot code derives from it: written as the "
		       "build with the value computes it (no probe, no cost)\n"
		       "    per value (other values are built when set):",
		       (unsigned long long)(s->probe - s->start),
		       (unsigned long long)s->func_size);
		for (int j = 0; j < s->nr_points; j++)
			printf(" N=%lld:%lld", (long long)s->points[j].n,
			       (long long)s->points[j].p[0]);
		printf("\n");
		return;
	}
	if (s->cls == XK_SPAN_DATA) {
		printf(", %llu bytes of the %llu-byte variable\n"
		       "    a variable it initialises: written as the build with "
		       "the value holds it (no probe, no cost)\n"
		       "    fit: field = %lld*N %+lld\n",
		       (unsigned long long)(s->probe - s->start),
		       (unsigned long long)s->func_size, (long long)s->fit[0][0],
		       (long long)s->fit[0][1]);
		return;
	}
	printf(", probe +0x%llx (%s)\n", (unsigned long long)s->probe,
	       s->optimizable ? "jump-optimizable" : "int3");
	if (s->post_len)
		printf("    rewritten after the span's last instruction, +0x%llx (the "
		       "probe point is a branch target, a site kprobes refuses, or "
		       "an alternative's site)\n",
		       (unsigned long long)(s->probe - s->post_len));
	if (s->emulate == XK_EMULATE_REPLAY) {
		printf("    replayed: probed at +0x%llx, what the build with the value "
		       "computes there written and the span skipped; values:",
		       (unsigned long long)s->start);
		for (int j = 0; j < s->nr_replays; j++)
			printf(" %lld", (long long)s->replays[j].n);
		printf(" (others are built when set)\n");
	} else if (s->emulate) {
		printf("    emulated: probed at +0x%llx, the span's state written "
		       "there and the span skipped\n", (unsigned long long)s->start);
	}
	if (s->call_state)
		printf("    state of the call: %s %s; the value changes only when "
		       "no thread is in the function (global or per task, never "
		       "immediate; no policy)\n", s->func,
		       s->call_state == XK_CALL_STATE_HEAP ?
		       "allocates heap objects the constant sizes and records "
		       "their size" : "has a frame the constant sizes");
	for (int k = 0; k < s->nr_params && !s->nr_points; k++)
		printf("    fit: P%d = %lld*N %+lld\n", k, (long long)s->fit[k][0],
		       (long long)s->fit[k][1]);
	if (s->nr_points) {
		printf("    per value (not a*N+b; other values are built when set):");
		for (int j = 0; j < s->nr_points; j++) {
			printf(" N=%lld:", (long long)s->points[j].n);
			for (int k = 0; k < s->nr_params; k++)
				printf("%s%lld", k ? "," : "P=",
				       (long long)s->points[j].p[k]);
		}
		putchar('\n');
	}
	for (int l = 0; l < s->nr_locs; l++)
		printf("    state: %s\n", s->locs[l].text);
	for (int g = 0; g < XK_MAX_ARGS; g++)
		if (s->arg_reg[g] >= 0)
			printf("    argument %d of %s in %s\n", g, s->func,
			       xk_reg_name(s->arg_reg[g]));
	printf("    safe span: %u instructions, exits at", s->slice_len);
	for (int e = 0; e < s->nr_exits; e++)
		printf(" +0x%llx", (unsigned long long)s->exits[e]);
	printf("%s%s%s\n", s->escapes & XK_ESCAPE_STORE ? "; escapes to memory" : "",
	       s->escapes & XK_ESCAPE_CALL ? "; passed to a call" : "",
	       s->escapes & XK_ESCAPE_RET ? "; returned" : "");
	if (explain)
		explain_span(b, s);
}

static void json_span(const struct xk_scope_span *s)
{
	json_begin_object(jw, NULL);
	json_str(jw, "object", s->object);
	json_str(jw, "function", s->func);
	json_int(jw, "start", s->start);
	json_str(jw, "class", xk_span_class_name(s->cls));
	if (s->cls == XK_SPAN_UNSUPPORTED) {
		json_str(jw, "why", s->why);
		json_end_object(jw);
		return;
	}
	json_int(jw, "probe", s->probe);
	json_bool(jw, "optimizable", s->optimizable);
	json_int(jw, "post_len", s->post_len);
	if (s->emulate)
		json_bool(jw, "emulate", true);
	if (s->call_state)
		json_bool(jw, "call_state", true);
	if (s->call_state == XK_CALL_STATE_HEAP)
		json_bool(jw, "call_state_heap", true);
	if (s->emulate == XK_EMULATE_REPLAY) {
		json_begin_array(jw, "replayed");
		for (int j = 0; j < s->nr_replays; j++)
			json_int(jw, NULL, s->replays[j].n);
		json_end_array(jw);
	}
	json_begin_array(jw, "fit");
	for (int p = 0; p < s->nr_params; p++) {
		json_begin_array(jw, NULL);
		json_int(jw, NULL, s->fit[p][0]);
		json_int(jw, NULL, s->fit[p][1]);
		json_end_array(jw);
	}
	json_end_array(jw);
	if (s->nr_points) {
		json_begin_array(jw, "points");
		for (int j = 0; j < s->nr_points; j++) {
			json_begin_object(jw, NULL);
			json_int(jw, "n", s->points[j].n);
			json_begin_array(jw, "params");
			for (int k = 0; k < s->nr_params; k++)
				json_int(jw, NULL, s->points[j].p[k]);
			json_end_array(jw);
			json_end_object(jw);
		}
		json_end_array(jw);
	}
	json_begin_array(jw, "state");
	for (int l = 0; l < s->nr_locs; l++)
		json_str(jw, NULL, s->locs[l].text);
	json_end_array(jw);
	json_int(jw, "safe_span_insns", s->slice_len);
	json_end_object(jw);
}

static void json_verified(const struct xk_verify_result *r)
{
	json_begin_object(jw, NULL);
	json_int(jw, "value", r->value);
	json_int(jw, "agree", r->nr_checked);
	json_int(jw, "disagree", r->nr_failed);
	json_int(jw, "per_value", r->nr_per_value);
	json_int(jw, "other", r->nr_other);
	json_begin_array(jw, "why");
	for (int i = 0; i < r->nr_failed && i < XK_VERIFY_MAX_WHY; i++)
		json_str(jw, NULL, r->why[i]);
	json_end_array(jw);
	json_end_object(jw);
}

static void print_verified(const struct xk_verify_result *r)
{
	printf("verify N=%lld: %d affine span%s agree%s with the kernel built "
	       "with it, %d disagree; %d per-value or replayed (built when "
	       "set); %d not compared (other forms, or other code there)\n",
	       r->value, r->nr_checked, r->nr_checked == 1 ? "" : "s",
	       r->nr_checked == 1 ? "s" : "", r->nr_failed, r->nr_per_value,
	       r->nr_other);
	for (int i = 0; i < r->nr_failed && i < XK_VERIFY_MAX_WHY; i++)
		printf("    %s\n", r->why[i]);
}

static void json_proved(const struct xk_scope *t, const struct xk_prove_result *r)
{
	json_begin_object(jw, "prove");
	json_bool(jw, "every", r->every);
	json_int(jw, "values", r->nr_values);
	json_int(jw, "refused", r->nr_refused);
	json_begin_array(jw, "bounds_before");
	json_int(jw, NULL, r->min);
	json_int(jw, NULL, r->max);
	json_end_array(jw);
	json_begin_array(jw, "bounds");
	json_int(jw, NULL, t->min);
	json_int(jw, NULL, t->max);
	json_end_array(jw);
	json_table_values("values_accepted", t);
	json_begin_array(jw, "why");
	for (int i = 0; i < r->nr_refused && i < XK_PROVE_MAX_WHY; i++) {
		json_begin_object(jw, NULL);
		json_int(jw, "value", r->refused[i].value);
		json_str(jw, "why", r->refused[i].why);
		json_end_object(jw);
	}
	json_end_array(jw);
	json_end_object(jw);
}

static void json_bounds_check(const struct xk_scope *t,
			      const struct xk_bounds_check *r)
{
	json_begin_object(jw, "bounds_check");
	json_bool(jw, "ends_checked", t->ends_checked);
	json_int(jw, "affine_spans", r->nr_affine);
	json_int(jw, "built", r->nr_built);
	json_bool(jw, "narrowed", r->narrowed);
	json_begin_array(jw, "bounds_before");
	json_int(jw, NULL, r->min);
	json_int(jw, NULL, r->max);
	json_end_array(jw);
	if (r->narrowed) {
		json_int(jw, "refused", r->refused);
		json_str(jw, "why", r->why);
	}
	json_end_object(jw);
}

/* Where the bounds come from: the ends built and checked, or why not. */
static void print_bounds_check(const struct xk_scope *t,
			       const struct xk_bounds_check *r)
{
	if (r->narrowed)
		printf("bounds: %lld..%lld of %lld..%lld: refused at %lld (the "
		       "note bounds: says why; %d value%s built)\n",
		       (long long)t->min, (long long)t->max, r->min, r->max,
		       r->refused, r->nr_built, r->nr_built == 1 ? "" : "s");
	else if (t->ends_checked && r->nr_built)
		printf("bounds: %lld..%lld, the fits checked at %s by the "
		       "kernel built with %s\n", (long long)t->min,
		       (long long)t->max, r->nr_built == 1 ? "one end" : "both ends",
		       r->nr_built == 1 ? "it" : "each");
	else if (t->ends_checked && !r->nr_affine)
		printf("bounds: %lld..%lld, no fitted span to check at the ends\n",
		       (long long)t->min, (long long)t->max);
	else if (t->ends_checked)
		printf("bounds: %lld..%lld, within the values xk gen built\n",
		       (long long)t->min, (long long)t->max);
}

static void print_proved(const struct xk_scope *t, const struct xk_prove_result *r)
{
	char values[400];

	xk_scope_values_text(t, values, sizeof(values));
	printf("prove: %d value%s of %lld..%lld built (%s), %d refused; "
	       "values: %s\n", r->nr_values, r->nr_values == 1 ? "" : "s",
	       r->min, r->max, r->every ? "every one" : "a sample",
	       r->nr_refused, values);
	for (int i = 0; i < r->nr_refused && i < XK_PROVE_MAX_WHY; i++)
		printf("    %lld: %s\n", r->refused[i].value, r->refused[i].why);
	if (r->nr_refused > XK_PROVE_MAX_WHY)
		printf("    and %d more\n", r->nr_refused - XK_PROVE_MAX_WHY);
}

/* xk gen: the constant built, analysed into its scope table */
static int gen(const struct gen_args *a, struct xk_kernel *k,
	       struct xk_constant *c, struct xk_build_result *b)
{
	static struct xk_verify_result verified[CLI_LIST_MAX];
	static struct xk_prove_result proved;
	struct xk_scope t;
	char out[XK_PATH_MAX + 256];
	double t0 = xk_now(), gen_s;
	static struct xk_bounds_check ends;
	int err = xk_gen(k, c, b, &t), disagree = 0;

	if (err)
		return p_lib_err("gen", err);
	/* --prepare: values of the per-value spans built now, not at set */
	for (int i = 0; i < a->prepare.n && !err; i++) {
		long long v;
		int added;

		err = cli_number("gen", a->prepare.v[i], &v) ? -EINVAL :
		      xk_gen_point(k, c, &t, v, &added);
		if (err) {
			xk_scope_free(&t);
			return err == -EINVAL ? XK_EXIT_USAGE : p_lib_err("gen", err);
		}
	}
	gen_s = xk_now() - t0;
	/* --verify: the table against the kernel compiled with each value */
	for (int i = 0; i < a->verify.n && !err; i++) {
		long long v;

		err = cli_number("gen", a->verify.v[i], &v) ? -EINVAL :
		      xk_gen_verify(k, c, &t, v, &verified[i]);
		if (err) {
			xk_scope_free(&t);
			return err == -EINVAL ? XK_EXIT_USAGE : p_lib_err("gen", err);
		}
		disagree += verified[i].nr_failed;
	}
	/* the bounds' ends built and the fits checked there (after --verify,
	 * which checks the table as analysed), unless proved */
	if (!a->prove) {
		err = xk_gen_check_bounds(k, c, b, &t, &ends);
		if (err) {
			xk_scope_free(&t);
			return p_lib_err("gen", err);
		}
	}
	/* --prove: the values of the bounds built, the bounds narrowed */
	if (a->prove) {
		if (!json_output)
			fprintf(stderr, "%s: proving the values of %lld..%lld "
				"(each one built and checked)\n", c->name,
				(long long)t.min, (long long)t.max);
		err = xk_gen_prove(k, c, &t, &proved);
		if (err) {
			xk_scope_free(&t);
			return p_lib_err("gen", err);
		}
	}
	if (a->output)
		snprintf(out, sizeof(out), "%s", a->output);
	else
		table_cache_path(k, c->name, out, sizeof(out));
	err = xk_scope_write(&t, out);
	if (!err && a->glue)
		err = xk_glue_write(&t, a->glue);
	if (err) {
		xk_scope_free(&t);
		return p_lib_err("gen", err);
	}
	if (json_output) {
		json_begin_object(jw, NULL);
		json_build(c, b);
		json_str(jw, "scope_table", out);
		if (a->glue)
			json_str(jw, "glue", a->glue);
		json_double(jw, "analysis_seconds", gen_s);
		json_int(jw, "spans", t.nr_spans);
		json_int(jw, "supported", xk_scope_nr_supported(&t));
		json_begin_array(jw, "bounds");
		json_int(jw, NULL, t.min);
		json_int(jw, NULL, t.max);
		json_end_array(jw);
		json_begin_array(jw, "span_list");
		for (int i = 0; i < t.nr_spans; i++)
			json_span(&t.spans[i]);
		json_end_array(jw);
		json_begin_array(jw, "notes");
		for (int i = 0; i < t.nr_notes; i++)
			json_str(jw, NULL, t.notes[i]);
		json_end_array(jw);
		if (a->verify.n) {
			json_begin_array(jw, "verify");
			for (int i = 0; i < a->verify.n; i++)
				json_verified(&verified[i]);
			json_end_array(jw);
		}
		if (a->prove)
			json_proved(&t, &proved);
		else
			json_bounds_check(&t, &ends);
		json_end_object(jw);
	} else {
		printf("%s = %lld (%s:%d): %d span%s, %d supported; build %.1f s, "
		       "analysis %.2f s\n",
		       c->name, c->def, c->file, c->line, t.nr_spans,
		       t.nr_spans == 1 ? "" : "s", xk_scope_nr_supported(&t),
		       b->seconds, gen_s);
		/* a body that is an expression: what the value counts */
		if (c->unit[0])
			printf("value: %s\n", c->unit);
		for (int i = 0; i < t.nr_spans; i++)
			print_span(b, i, &t.spans[i], a->explain);
		for (int i = 0; i < t.nr_notes; i++)
			printf("note: %s\n", t.notes[i]);
		for (int i = 0; i < a->verify.n; i++)
			print_verified(&verified[i]);
		if (a->prove)
			print_proved(&t, &proved);
		else
			print_bounds_check(&t, &ends);
		printf("scope table: %s\n", out);
		if (a->glue)
			printf("policy glue: %s\n", a->glue);
	}
	xk_scope_free(&t);
	/* a span that disagrees with the kernel built with the value */
	return disagree ? 1 : 0;
}

static int do_build_gen(void *args, int argc, char **argv)
{
	const struct gen_args *a = args;
	struct xk_build_result b;
	struct xk_constant c;
	struct xk_kernel k;
	int err;

	if (a->list)
		return list_catalog(catalog_path(a->catalog));
	err = build_constant(a->gen ? "gen" : "build", a, argc, argv, &k, &c, &b);
	if (err)
		return err;
	return a->gen ? gen(a, &k, &c, &b) : print_build(&c, &b);
}

static struct gen_args build_args, gen_args = { .gen = true };

const struct cli_cmd cmd_build = {
	"build", do_build_gen, gen_opts, &build_args, -1,
};
const struct cli_cmd cmd_gen = {
	"gen", do_build_gen, gen_opts, &gen_args, -1,
};
