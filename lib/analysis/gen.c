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
#include "forms/form.h"
#include "redo.h"
#include "spans.h"

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
	/* the forms that build values of their own: what it refused */
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->retry)
			err = (*f)->retry(&ft, t);
	/* then their checks of the finished table */
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->check)
			err = (*f)->check(&ft, t);
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
 * as the call-state form's check below the default does. An affine span
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
		struct gen_input in;
		char module[64];
		int j = gen_object_index(b, at->object[i]);

		if (j < 0)
			continue;
		gen_input_checked(k, c, b, j, value, at->variant[i][0], &in,
				  module, sizeof(module));
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
