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

/*
 * A catalog's objects= that leaves out objects using the macro (NAPI_POLL_
 * WEIGHT lists dev.o, veth.o and tun.o; virtio_net and eventpoll name it
 * too): their uses keep the compiled-in value, so each is a refused span
 * of the table (function "*": every use of the object), naming it; more
 * than a build takes: one such span for all of them (object "*").
 */
static int refuse_objects_left_out(const struct xk_kernel *k,
				   const struct xk_constant *c, struct xk_scope *t)
{
	/* whole names: every object name fits (128 bytes and ", ") */
	char list[XK_BUILD_MAX_OBJECTS * 130], *save = NULL;
	int nr = objects_left_out(k, c, list, sizeof(list));

	if (nr <= 0)
		return nr;
	if (nr > XK_BUILD_MAX_OBJECTS)
		xk_strlcpy(list, "*", sizeof(list));
	for (char *o = strtok_r(list, ", ", &save); o;
	     o = strtok_r(NULL, ", ", &save)) {
		struct xk_scope_span *sp;
		int err = gen_append_span(t, o, XK_SPAN_EVERY_USE, 0, &sp);

		if (err)
			return err;
		sp->cls = XK_SPAN_UNSUPPORTED;
		if (nr > XK_BUILD_MAX_OBJECTS)
			snprintf(sp->why, sizeof(sp->why), "the catalog's objects= "
				 "leaves out other objects that name %s or a macro "
				 "or inline function carrying it (more than the %d "
				 "a build takes): their uses keep the compiled-in "
				 "value", c->name, XK_BUILD_MAX_OBJECTS);
		else
			snprintf(sp->why, sizeof(sp->why), "the catalog's objects= "
				 "leaves out this object, which names %s or a macro "
				 "or inline function carrying it: its uses keep the "
				 "compiled-in value", c->name);
	}
	return 0;
}

/*
 * The table t once every object had its first analysis (gen_object): the
 * forms' retries (what it refused, analysed again, some from builds of
 * their own), then their checks of the whole table. For xk gen, and for
 * xk gen --verify on its analysis with the value's build as the check.
 */
static int finish_table(const struct xk_kernel *k, const struct xk_constant *c,
			const struct xk_build_result *b, struct xk_scope *t)
{
	const struct form_table ft = { .k = k, .c = c, .b = b,
				       .analyse_object = gen_object };
	int err = 0;

	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->retry)
			err = (*f)->retry(&ft, t);
	for (const struct gen_form *const *f = gen_forms; *f && !err; f++)
		if ((*f)->check)
			err = (*f)->check(&ft, t);
	return err;
}

static int xk_gen_impl(const struct xk_kernel *k, const struct xk_constant *c,
		       const struct xk_build_result *b, struct xk_scope *t)
{
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
	err = err ?: finish_table(k, c, b, t);
	if (!err && !c->module_dir[0])	/* a module's names are not recorded */
		err = xk_count_copies(k, t);
	err = err ?: refuse_objects_left_out(k, c, t);
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

/* A deep copy of t (its spans and their replays), into copy. */
static int copy_table(const struct xk_scope *t, struct xk_scope *copy)
{
	*copy = *t;
	copy->spans = calloc(t->nr_spans ? t->nr_spans : 1, sizeof(*t->spans));
	if (!copy->spans) {
		copy->nr_spans = 0;
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	}
	for (int i = 0; i < t->nr_spans; i++) {
		struct xk_scope_span *sp = &copy->spans[i];

		*sp = t->spans[i];
		sp->replays = NULL;
		if (!t->spans[i].replays)
			continue;
		sp->replays = calloc(XK_MAX_POINTS, sizeof(*sp->replays));
		if (!sp->replays) {
			copy->nr_spans = i;
			xk_scope_free(copy);
			return xk_err(-ENOMEM, "%s: out of memory", __func__);
		}
		memcpy(sp->replays, t->spans[i].replays,
		       XK_MAX_POINTS * sizeof(*sp->replays));
	}
	return 0;
}

/* Whether r, span sp as analysed at another value, is sp: supported,
 * affine, with the same fit. */
static bool agrees(const struct xk_scope_span *sp, const struct xk_scope_span *r)
{
	bool same_fit = r && r->nr_params == sp->nr_params && !r->nr_points &&
			r->emulate != XK_EMULATE_REPLAY;

	for (int k = 0; same_fit && k < sp->nr_params; k++)
		same_fit = r->fit[k][0] == sp->fit[k][0] &&
			   r->fit[k][1] == sp->fit[k][1];
	return r && r->cls != XK_SPAN_UNSUPPORTED && same_fit;
}

/*
 * Span i of t against the analysis with the value's build as the check:
 * redo, each object's own, and finished, after the forms' retries and
 * checks. It agrees when either has it supported with the same fit (a
 * retry takes the heap of one call); else the first analysis's reason
 * says whether that build has other code there (not compared) or the
 * span disagrees (a retry that takes it per value is no agreement).
 */
static void verify_span(const struct xk_scope *t, int i,
			const struct xk_scope *redo, const struct xk_scope *finished,
			struct xk_verify_result *res)
{
	const struct xk_scope_span *sp = &t->spans[i], *r = same_span(redo, sp);
	char why[400] = "";

	if (agrees(sp, r) || agrees(sp, same_span(finished, sp))) {
		res->nr_checked++;
		return;
	}
	if (!r)
		snprintf(why, sizeof(why), "no such span when checked there");
	else if (r->cls == XK_SPAN_UNSUPPORTED &&
		 (strstr(r->why, WHY_CHECK_SHAPE) ||
		  strstr(r->why, WHY_CHECK_INPUTS))) {
		/* that build's code there has another form: not compared */
		if (!res->nr_other_code++)
			snprintf(res->other_why, sizeof(res->other_why),
				 "span %d (%.60s+%#llx): not compared: %.280s", i,
				 sp->func, (unsigned long long)sp->start, r->why);
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
	struct xk_scope redo = { .nr_spans = 0 }, finished = { .nr_spans = 0 };
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
	/* then, on a copy, every form's retry and check, as xk gen runs them
	 * (the heap of one call takes alloc_pipe_info's spans only after the
	 * replayed form's retry), with the value's build as the check */
	for (int i = 0; i < at->nr_objects && !err; i++) {
		int j = gen_object_index(b, at->object[i]);

		if (j >= 0)
			xk_strlcpy(b->variant[j][GEN_FIT_VARIANTS],
				   at->variant[i][0], XK_PATH_MAX);
	}
	b->value[GEN_FIT_VARIANTS] = value;
	err = err ?: copy_table(&redo, &finished);
	err = err ?: finish_table(k, c, b, &finished);
	for (int i = 0; i < t->nr_spans && !err; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		if (sp->cls != XK_SPAN_UNSUPPORTED && sp->nr_points <= 0 &&
		    sp->emulate != XK_EMULATE_REPLAY && sp->cls != XK_SPAN_DATA &&
		    sp->nr_params)
			verify_span(t, i, &redo, &finished, res);
	}
out:
	xk_scope_free(&finished);
	xk_scope_free(&redo);
	free(at);
	free(b);
	return err;
}

/* What building one value of the bounds found. */
enum proof {
	PROOF_ACCEPTED,
	PROOF_HOLE,	/* a per-value or replayed span refuses it */
	PROOF_CUT,	/* an affine span disagrees, is not compared, or the
			 * kernel does not compile with it */
};

/*
 * Whether t's affine spans hold at value: checked against the kernel built
 * with it (xk_gen_verify, into r). A span that disagrees or has another
 * code there, or a unit that does not compile with the value, is the
 * refusal written to why; "" when they hold. -errno only when a step
 * cannot run at all.
 */
static int check_affine(const struct xk_kernel *k, const struct xk_constant *c,
			const struct xk_scope *t, long long value,
			struct xk_verify_result *r, char *why, size_t size)
{
	int err = xk_gen_verify_impl(k, c, t, value, r);

	why[0] = '\0';
	if (err == -EIO) {	/* a unit did not compile with the value */
		snprintf(why, size, "the kernel does not compile with it (%.300s)",
			 xk_last_error());
		xk_err_clear();
		return 0;
	}
	if (!err && (r->nr_failed || r->nr_other_code))
		snprintf(why, size, "%s", r->nr_failed ? r->why[0] : r->other_why);
	return err;
}

/*
 * One value of xk_gen_prove: the affine spans checked against the build
 * with it (xk_gen_verify), then the per-value and replayed spans built
 * with it on a copy of t (xk_gen_point). A refusal goes to *proof and why;
 * -errno only when a step cannot run at all.
 */
static int prove_value(const struct xk_kernel *k, const struct xk_constant *c,
		       const struct xk_scope *t, long long value,
		       enum proof *proof, char *why, size_t size)
{
	struct xk_verify_result *r = calloc(1, sizeof(*r));
	struct xk_scope copy;
	int added, err;

	*proof = PROOF_ACCEPTED;
	why[0] = '\0';
	if (!r)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	err = check_affine(k, c, t, value, r, why, size);
	if (err)
		goto out;
	if (why[0]) {
		*proof = PROOF_CUT;
		goto out;
	}
	err = copy_table(t, &copy);
	if (err)
		goto out;
	err = xk_gen_point_impl(k, c, &copy, value, &added);
	xk_scope_free(&copy);
	if (err && err != -ENOMEM) {
		*proof = err == -EIO ? PROOF_CUT : PROOF_HOLE;
		snprintf(why, size, "%s", xk_last_error());
		err = 0;
	}
out:
	if (!err)
		xk_err_clear();
	free(r);
	return err;
}

/*
 * The values xk_gen_prove builds, sorted, the default left out: every one
 * of [min, max] when there are at most XK_PROVE_EVERY, else distances from
 * the default growing by one factor out to each bound (the bound itself
 * last), at most XK_PROVE_SAMPLES / 2 a side. How many in *nr.
 */
static bool prove_values(long long min, long long max, long long def,
			 long long *v, int *nr)
{
	int side = XK_PROVE_SAMPLES / 2, n = 0;

	if ((unsigned long long)max - (unsigned long long)min < XK_PROVE_EVERY) {
		for (long long x = min; x <= max; x++)
			if (x != def)
				v[n++] = x;
		*nr = n;
		return true;
	}
	for (int s = 0; s < 2; s++) {
		/* below the default, outward, then reversed into order */
		unsigned long long far = s ? (unsigned long long)max - def :
				       (unsigned long long)def - min;
		double lo = 1, hi = (double)far, q, d = 1;
		long long got[XK_PROVE_SAMPLES / 2];
		int g = 0;

		if (!far)
			continue;
		/* q with q^(side - 1) = far, by bisection */
		for (int it = 0; it < 200 && side > 1; it++) {
			double mid = (lo + hi) / 2, p = 1;

			for (int e = 0; e < side - 1; e++)
				p *= mid;
			if (p < (double)far)
				lo = mid;
			else
				hi = mid;
		}
		q = hi;
		for (int i = 0; i < side; i++, d *= q) {
			unsigned long long dist = i == side - 1 ? far :
						  (unsigned long long)(d + 0.5);

			if (dist > far)
				dist = far;
			if (g && (unsigned long long)llabs(got[g - 1] - def) >= dist)
				continue;
			got[g++] = s ? def + (long long)dist : def - (long long)dist;
		}
		if (!s)
			for (int i = g - 1; i >= 0; i--)
				v[n++] = got[i];
		else
			for (int i = 0; i < g; i++)
				v[n++] = got[i];
	}
	*nr = n;
	return false;
}

/* Appends a refusal to res (the first XK_PROVE_MAX_WHY kept). */
static void note_refused(struct xk_prove_result *res, long long value,
			 const char *why)
{
	if (res->nr_refused < XK_PROVE_MAX_WHY) {
		res->refused[res->nr_refused].value = value;
		snprintf(res->refused[res->nr_refused].why,
			 sizeof(res->refused[0].why), "%s", why);
	}
	res->nr_refused++;
}

/* Puts text first among t's notes (the bounds' reason xk set quotes). */
static int add_note_first(struct xk_scope *t, const char *text)
{
	int err = gen_add_note(t, text);

	if (err)
		return err;
	for (int i = t->nr_notes - 1; i > 0 && strcmp(t->notes[0], text); i--) {
		char keep[sizeof(t->notes[0])];

		memcpy(keep, t->notes[i], sizeof(keep));
		memcpy(t->notes[i], t->notes[i - 1], sizeof(keep));
		memcpy(t->notes[i - 1], keep, sizeof(keep));
	}
	return 0;
}

/* A ")" after text when it fits (a reason cut short has none). */
static void close_paren(char *text, size_t size)
{
	size_t len = strlen(text);

	if (len + 1 < size) {
		text[len] = ')';
		text[len + 1] = '\0';
	}
}

/*
 * The table's new bounds and values from the verdicts of xk_gen_prove:
 * the run of values around the default up to the first cut each side
 * (its ends accepted values), holes left out of the ranges; more than
 * XK_SCOPE_MAX_RANGES ranges: the bound nearer a hole on the side farther
 * from the default moves in past it. The notes name the refusal just
 * outside a narrowed bound (the lower one when both moved), and the holes.
 */
static int narrow_to_proof(struct xk_scope *t, const long long *v,
			   const enum proof *p, char (*why)[400], int nr)
{
	long long old_min = t->min, old_max = t->max;
	char note[sizeof(t->notes[0])];
	int lo = 0, hi = nr - 1, holes, err = 0;

	/* after the last cut below the default, before the first above */
	for (int i = 0; i < nr; i++)
		if (v[i] < t->def && p[i] == PROOF_CUT)
			lo = i + 1;
	for (int i = nr - 1; i >= 0; i--)
		if (v[i] > t->def && p[i] == PROOF_CUT)
			hi = i - 1;
	for (;;) {
		long long from;

		/* the ends: accepted values (or the default) inside the cuts */
		while (lo < nr && v[lo] < t->def && p[lo] != PROOF_ACCEPTED)
			lo++;
		while (hi >= 0 && v[hi] > t->def && p[hi] != PROOF_ACCEPTED)
			hi--;
		t->min = lo < nr && v[lo] < t->def ? v[lo] : t->def;
		t->max = hi >= 0 && v[hi] > t->def ? v[hi] : t->def;
		/* the ranges: [min, max] less the holes; too many: the
		 * outermost range on the side farther from the default goes */
		t->nr_ranges = 0;
		from = t->min;
		for (int i = 0; i < nr; i++) {
			if (v[i] <= t->min || v[i] >= t->max || p[i] != PROOF_HOLE)
				continue;
			if (v[i] > from && t->nr_ranges < XK_SCOPE_MAX_RANGES) {
				t->ranges[t->nr_ranges][0] = from;
				t->ranges[t->nr_ranges][1] = v[i] - 1;
			}
			if (v[i] > from)
				t->nr_ranges++;
			from = v[i] + 1;
		}
		if (t->nr_ranges < XK_SCOPE_MAX_RANGES) {
			t->ranges[t->nr_ranges][0] = from;
			t->ranges[t->nr_ranges][1] = t->max;
		}
		t->nr_ranges++;
		if (t->nr_ranges <= XK_SCOPE_MAX_RANGES)
			break;
		if (t->def - t->ranges[0][1] > t->ranges[XK_SCOPE_MAX_RANGES - 1][0] -
					       t->def) {
			while (v[lo] <= t->ranges[0][1])
				lo++;
		} else {
			/* the last range is past the stored ones: the
			 * highest hole below max bounds it */
			hi--;
			while (p[hi] != PROOF_HOLE)
				hi--;
		}
	}
	holes = t->nr_ranges > 1;
	if (t->nr_ranges == 1)
		t->nr_ranges = 0;	/* every value of the bounds */
	if (t->min != old_min || t->max != old_max) {
		/* the refusal just outside the bound that moved */
		int at = t->min != old_min ? lo - 1 : hi + 1;

		snprintf(note, sizeof(note), "bounds: %lld..%lld of %lld..%lld, "
			 "the values around the default that builds proved (at "
			 "%lld: %s", (long long)t->min, (long long)t->max, old_min,
			 old_max, v[at], why[at]);
		close_paren(note, sizeof(note));
		err = add_note_first(t, note);
	}
	if (!err && holes) {
		char list[120] = "";
		int n = 0, first = -1;

		for (int i = 0; i < nr; i++)
			if (v[i] > t->min && v[i] < t->max && p[i] == PROOF_HOLE) {
				if (first < 0)
					first = i;
				if (n++ < 12)
					snprintf(list + strlen(list),
						 sizeof(list) - strlen(list),
						 "%s%lld", n > 1 ? ", " : "", v[i]);
			}
		snprintf(note, sizeof(note), "values: %s%s refused (at %lld: %s",
			 list, n > 12 ? ", ..." : "", v[first], why[first]);
		close_paren(note, sizeof(note));
		err = gen_add_note(t, note);
	}
	return err;
}

/* The points and replays of values the proof left out of t, dropped. */
static void drop_refused_values(struct xk_scope *t)
{
	for (int i = 0; i < t->nr_spans; i++) {
		struct xk_scope_span *sp = &t->spans[i];
		int n = 0;

		for (int j = 0; j < sp->nr_points; j++)
			if (xk_scope_takes_value(t, sp->points[j].n))
				sp->points[n++] = sp->points[j];
		if (sp->nr_points > 0)
			sp->nr_points = n;
		n = 0;
		for (int j = 0; j < sp->nr_replays; j++)
			if (xk_scope_takes_value(t, sp->replays[j].n))
				sp->replays[n++] = sp->replays[j];
		sp->nr_replays = n;
	}
}

static int xk_gen_prove_impl(const struct xk_kernel *k,
			     const struct xk_constant *c, struct xk_scope *t,
			     struct xk_prove_result *res)
{
	long long *v = calloc(XK_PROVE_EVERY + XK_PROVE_SAMPLES, sizeof(*v));
	enum proof *p = calloc(XK_PROVE_EVERY + XK_PROVE_SAMPLES, sizeof(*p));
	char (*why)[400] = calloc(XK_PROVE_EVERY + XK_PROVE_SAMPLES, sizeof(*why));
	int nr = 0, err = 0;

	memset(res, 0, sizeof(*res));
	res->min = t->min;
	res->max = t->max;
	if (!v || !p || !why) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	if (t->nr_proved) {
		err = xk_err(-EALREADY, "%s: the table was proved already (its "
					"bounds %lld..%lld are the proof's)",
			     t->constant, (long long)t->min, (long long)t->max);
		goto out;
	}
	res->every = prove_values(t->min, t->max, t->def, v, &nr);
	for (int i = 0; i < nr && !err; i++) {
		err = prove_value(k, c, t, v[i], &p[i], why[i], sizeof(why[0]));
		if (!err && p[i] != PROOF_ACCEPTED)
			note_refused(res, v[i], why[i]);
	}
	res->nr_values = nr;
	if (err)
		goto out;
	if (!nr)	/* bounds of the default alone: nothing to build */
		goto out;
	t->nr_proved = nr;
	t->proved_every = res->every;
	err = narrow_to_proof(t, v, p, why, nr);
	if (!err)
		drop_refused_values(t);
out:
	free(why);
	free(p);
	free(v);
	return err;
}

/* The integer square root of x (the largest r with r * r <= x). */
static unsigned long long isqrt(unsigned long long x)
{
	unsigned long long r = 0;

	for (int bit = 31; bit >= 0; bit--) {
		unsigned long long c = r | 1ULL << bit;

		if (c <= x / c)
			r = c;
	}
	return r;
}

/* About the geometric mean of a + 1 and b + 1, less one. */
static unsigned long long mean_distance(unsigned long long a,
					unsigned long long b)
{
	if (a < 1ULL << 31 && b < 1ULL << 31)
		return isqrt((a + 1) * (b + 1)) - 1;
	return isqrt(a + 1) * isqrt(b + 1) - 1;
}

/*
 * One end of t's bounds for xk_gen_check_bounds: end itself checked, and
 * when it does not hold, the value nearest to it found to hold between it
 * and good (a value the builds of xk gen hold at), in at most
 * XK_BOUNDS_STEPS builds more: outward from the end first, its distance
 * growing eightfold (a build often differs only at the very end: 0, 1, a
 * power of two), then halving the gap geometrically. *at: where the end
 * goes; *bad and why: the refusal nearest to it.
 */
static int check_end(const struct xk_kernel *k, const struct xk_constant *c,
		     const struct xk_scope *t, long long good, long long end,
		     struct xk_bounds_check *res, long long *at, long long *bad,
		     char *why, size_t size)
{
	struct xk_verify_result *r = calloc(1, sizeof(*r));
	long long toward = end < good ? 1 : -1;
	unsigned long long good_d = (unsigned long long)llabs(good - end);
	unsigned long long bad_d = 0, d = 1;
	char w[400];
	int err, steps = 0;

	if (!r)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	*at = *bad = end;
	err = check_affine(k, c, t, end, r, why, size);
	res->nr_built++;
	if (err || !why[0])
		goto out;
	while (!err && steps < XK_BOUNDS_STEPS && good_d - bad_d > 1) {
		unsigned long long m;

		if (d) {	/* outward from the end */
			m = d < good_d ? d : 0;
			d = m ? d * 8 : 0;
		} else {
			m = 0;
		}
		if (!m) {	/* between the two */
			m = mean_distance(bad_d, good_d);
			if (m <= bad_d || m >= good_d)
				m = bad_d + (good_d - bad_d) / 2;
		}
		err = check_affine(k, c, t, end + toward * (long long)m, r, w,
				   sizeof(w));
		res->nr_built++;
		steps++;
		if (err)
			break;
		if (w[0]) {
			bad_d = m;
			snprintf(why, size, "%s", w);
		} else {
			good_d = m;
			d = 0;
		}
	}
	*at = end + toward * (long long)good_d;
	*bad = end + toward * (long long)bad_d;
out:
	free(r);
	return err;
}

static int xk_gen_check_bounds_impl(const struct xk_kernel *k,
				    const struct xk_constant *c,
				    const struct xk_build_result *b,
				    struct xk_scope *t, struct xk_bounds_check *res)
{
	long long lo = t->def, hi = t->def, at, bad = 0;
	char why[2][400] = { "", "" }, note[sizeof(t->notes[0])];
	long long bads[2] = { 0, 0 };
	int affine = 0, err = 0;

	memset(res, 0, sizeof(*res));
	res->min = t->min;
	res->max = t->max;
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		affine += sp->cls != XK_SPAN_UNSUPPORTED && sp->nr_points <= 0 &&
			  sp->emulate != XK_EMULATE_REPLAY &&
			  sp->cls != XK_SPAN_DATA && sp->nr_params;
	}
	if (t->nr_proved)
		return 0;
	res->nr_affine = affine;
	t->ends_checked = !affine;	/* no fit: nothing to check */
	if (!affine)
		return 0;
	/* the values built nearest each end inside the bounds: an end that
	 * is no value built is built, even between two (a build beyond it
	 * says nothing of it: CAPACITY_GREATER_MARGIN's check build at 2156
	 * agrees, its upper bound 2048 has another code) */
	for (int v = 0; v < XK_BUILD_VARIANTS; v++) {
		if (b->value[v] >= t->min && b->value[v] < lo)
			lo = b->value[v];
		if (b->value[v] <= t->max && b->value[v] > hi)
			hi = b->value[v];
	}
	if (t->min < lo) {
		err = check_end(k, c, t, lo, t->min, res, &at, &bad, why[0],
				sizeof(why[0]));
		bads[0] = bad;
		if (!err)
			t->min = at;
	}
	if (!err && t->max > hi) {
		err = check_end(k, c, t, hi, t->max, res, &at, &bad, why[1],
				sizeof(why[1]));
		bads[1] = bad;
		if (!err)
			t->max = at;
	}
	if (err)
		return err;
	t->ends_checked = true;
	if (t->min == res->min && t->max == res->max)
		return 0;
	res->narrowed = true;
	/* the refusal nearest to a bound that moved (the lower one first) */
	{
		int s = t->min != res->min ? 0 : 1;

		res->refused = bads[s];
		snprintf(res->why, sizeof(res->why), "%s", why[s]);
		snprintf(note, sizeof(note), "bounds: %lld..%lld of %lld..%lld, "
			 "where the fits agree with the kernel built with the "
			 "value (at %lld: %s", (long long)t->min,
			 (long long)t->max, res->min, res->max, bads[s], why[s]);
	}
	close_paren(note, sizeof(note));
	err = add_note_first(t, note);
	if (!err)
		drop_refused_values(t);
	return err;
}

int xk_gen_check_bounds(const struct xk_kernel *k, const struct xk_constant *c,
			const struct xk_build_result *b, struct xk_scope *t,
			struct xk_bounds_check *res)
{
	xk_err_clear();
	return xk_api_return(__func__,
			     xk_gen_check_bounds_impl(k, c, b, t, res));
}

int xk_gen_prove(const struct xk_kernel *k, const struct xk_constant *c,
		 struct xk_scope *t, struct xk_prove_result *res)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_gen_prove_impl(k, c, t, res));
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
