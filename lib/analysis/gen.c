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
#include "spans.h"


/* Whether word is one of the space-separated words of list. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* The module of a module's object (net/ipv4/tcp_bbr.ko: tcp_bbr, as
 * kallsyms writes it: - as _), or NULL for vmlinux. */
static const char *module_name(const char *ko, char *buf, size_t size)
{
	const char *base = strrchr(ko, '/');

	if (!ko[0])
		return NULL;
	xk_snprintf(buf, size, "%.*s", (int)strcspn(base ? base + 1 : ko, "."),
		    base ? base + 1 : ko);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
	return buf;
}

/* Whether two spans are of one function of one object. */
static bool same_function(const struct xk_scope_span *a,
			  const struct xk_scope_span *b)
{
	return !strcmp(a->object, b->object) && !strcmp(a->func, b->func) &&
	       a->func_size == b->func_size;
}

/* The index of object in build b, or -1. */
static int object_index(const struct xk_build_result *b, const char *object)
{
	for (int j = 0; j < b->nr_objects; j++)
		if (!strcmp(b->object[j], object))
			return j;
	return -1;
}

/* Span i of t and the next ones of the same function: how many. */
static int function_spans(const struct xk_scope *t, int i)
{
	int n = 1;

	while (i + n < t->nr_spans && same_function(&t->spans[i + n], &t->spans[i]))
		n++;
	return n;
}

/* Appends what a later analysis (what) found to the first refusal among
 * the n spans of one function; puts it first instead when it is that the
 * value sizes a heap object (XK_WHY_HEAP), which the runtime looks for
 * and a long reason must not cut off. */
static void note_refusal(struct xk_scope_span *sp, int n, const char *what,
			 const char *why)
{
	for (int j = 0; j < n; j++) {
		size_t len = strlen(sp[j].why);
		char old[sizeof(sp[j].why)];

		if (sp[j].cls != XK_SPAN_UNSUPPORTED)
			continue;
		if (strstr(why, XK_WHY_HEAP) && !strstr(sp[j].why, XK_WHY_HEAP)) {
			memcpy(old, sp[j].why, sizeof(old));
			len = (size_t)snprintf(sp[j].why, sizeof(sp[j].why),
					       "%.64s: %.400s; ", what, why);
			xk_strlcpy(sp[j].why + len, old, sizeof(sp[j].why) - len);
			return;
		}
		snprintf(sp[j].why + len, sizeof(sp[j].why) - len, "; %s: %s",
			 what, why);
		return;
	}
}

/*
 * Merges a later analysis (redo's spans, function by function) into t: a
 * function all of whose spans redo supports takes redo's spans in place
 * of its own; any other keeps its own, the first refusal naming what the
 * later analysis (what) found. Spans of one function are adjacent. The
 * spans not taken are freed.
 */
static int merge_redo(struct xk_scope *t, struct xk_scope *redo,
		      const char *what)
{
	struct xk_scope_span *out;
	int n = 0, cap = t->nr_spans + redo->nr_spans;

	out = calloc(cap ? cap : 1, sizeof(*out));
	if (!out)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	for (int i = 0; i < t->nr_spans;) {
		int nt = function_spans(t, i), r, nr = 0;
		const char *why = NULL;		/* redo's first refusal */

		for (r = 0; r < redo->nr_spans; r++)
			if (same_function(&redo->spans[r], &t->spans[i]))
				break;
		if (r < redo->nr_spans)
			nr = function_spans(redo, r);
		for (int j = r; j < r + nr && !why; j++)
			if (redo->spans[j].cls == XK_SPAN_UNSUPPORTED)
				why = redo->spans[j].why;
		if (nr && !why) {	/* every span of redo's supported */
			memcpy(&out[n], &redo->spans[r], nr * sizeof(*out));
			for (int j = r; j < r + nr; j++)
				redo->spans[j].replays = NULL;	/* moved */
			for (int j = i; j < i + nt; j++)
				free(t->spans[j].replays);
			n += nr;
		} else {
			memcpy(&out[n], &t->spans[i], nt * sizeof(*out));
			if (nr)
				note_refusal(&out[n], nt, what, why);
			n += nt;
		}
		i += nt;
	}
	free(t->spans);
	t->spans = out;
	t->nr_spans = n;
	return 0;
}

/* The analysis by shape could not run: every function's first refusal
 * says why. */
static void annotate_refusals(struct xk_scope *t, const char *what,
			      const char *why)
{
	for (int i = 0; i < t->nr_spans; i += function_spans(t, i))
		note_refusal(&t->spans[i], function_spans(t, i), what, why);
}

/*
 * The values of the default's kind the analysis by shape builds: 2N, 4N
 * and N/2 (8N for an odd default) in fam[0..2]. false when there are none
 * (a default below 2 or past 2^40).
 */
static bool shape_family(long long def, long long *fam)
{
	if (def < 2 || def > (1LL << 40))
		return false;
	fam[0] = def * 2;
	fam[1] = def * 4;
	fam[2] = def % 2 ? def * 8 : def / 2;
	return true;
}

/*
 * The objects with a refused span in t, into only->objects (space
 * separated, each once): what a later analysis (who) builds. A list too
 * long for the field is refused, naming who.
 */
static int refused_objects(const struct xk_constant *c, const struct xk_scope *t,
			   struct xk_constant *only, const char *who)
{
	only->objects[0] = '\0';
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		size_t len = strlen(only->objects);
		int err;

		/* a reader refused in a shipped module (.ko): no build
		 * of it could tell more */
		if (sp->cls != XK_SPAN_UNSUPPORTED || has_word(only->objects, sp->object) ||
		    (strlen(sp->object) > 3 &&
		     !strcmp(sp->object + strlen(sp->object) - 3, ".ko")))
			continue;
		err = xk_snprintf(only->objects + len, sizeof(only->objects) - len,
				  "%s%s", len ? " " : "", sp->object);
		if (err)
			return xk_err(err, "%s: too many objects with refused "
				      "spans for %s", c->name, who);
	}
	return 0;
}

/*
 * The analysis by shape, for the functions the first analysis refused a
 * span of: a constant whose default is a power of two (a batch of 32, a
 * shift of 6) compiles to shifts and masks there and to multiplies and
 * divisions at the fit values next to it, so no build shares the
 * baseline's instructions. Builds of values of the default's kind (2N, 4N
 * and N/2, or 8N for an odd default) often do: each such function is
 * analysed again with them, every span per value (points from the builds
 * of the baseline's shape; any other value is built and checked when it
 * is asked for, and refused by name when its build has another shape).
 * Only the objects of those functions are built.
 */
static int gen_by_shape(const struct xk_kernel *k, const struct xk_constant *c,
			struct xk_scope *t)
{
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true);
	struct xk_build_result *fb[GEN_NR_VARIANTS] = { NULL };
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	long long fam[GEN_NR_VARIANTS];
	char what[96];
	int err = 0;

	if (!shape_family(c->def, fam))
		return 0;
	snprintf(what, sizeof(what), "by shape (N=%lld, %lld, %lld)", fam[0],
		 fam[1], fam[2]);
	err = refused_objects(c, t, &only, "the analysis by shape");
	if (err || !only.objects[0])
		return err;
	for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
		fb[v] = calloc(1, sizeof(*fb[v]));
		if (!fb[v]) {
			err = xk_err(-ENOMEM, "%s: out of memory", __func__);
			break;
		}
		o.value = fam[v];
		err = xk_build(k, &only, &o, fb[v]);
		/* a value of the default's kind that does not compile (a
		 * BUILD_BUG_ON, a field too narrow): the first analysis stands,
		 * its refusals saying so */
		if (err && err != -ENOMEM) {
			char why[200];

			snprintf(why, sizeof(why), "no build with N=%lld (%s)", fam[v],
				 xk_last_error());
			annotate_refusals(t, what, why);
			err = 0;
			goto out;
		}
	}
	for (int i = 0; !err && i < fb[0]->nr_objects; i++) {
		struct gen_input in = { .object = fb[0]->object[i], .def = c->def,
					.min = c->min, .max = c->max,
					.by_shape = true, .redo = t };
		char module[64];

		in.module = module_name(fb[0]->module[i], module, sizeof(module));
		xk_strlcpy(in.base_path, fb[0]->base[i], sizeof(in.base_path));
		for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
			if (strcmp(fb[v]->object[i], in.object))
				err = xk_err(-EIO, "%s: builds by shape disagree on "
					     "object %d", c->name, i);
			in.variant[v].value = fam[v];
			xk_strlcpy(in.variant[v].path, fb[v]->variant[i][0],
				   sizeof(in.variant[v].path));
		}
		err = err ?: gen_object(&in, &redo);
	}
	err = err ?: merge_redo(t, &redo, what);
out:
	xk_scope_free(&redo);
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		free(fb[v]);
	return err;
}

/* Whether t refuses a span of sp's function because the check build has
 * another shape there. */
static bool check_lost(const struct xk_scope *t, const struct xk_scope_span *sp)
{
	for (int i = 0; i < t->nr_spans; i++)
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    same_function(&t->spans[i], sp) &&
		    strstr(t->spans[i].why, WHY_CHECK_SHAPE))
			return true;
	return false;
}

/*
 * A function whose frame the constant sizes (an array on the stack: every
 * span of it state of the call, spans.c: whole_function) never takes a
 * value above the default (bound_call_state). When its check build, above
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
	err = refused_objects(c, t, &only, "the check below the default");
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
		int j = object_index(b, in.object);

		if (j < 0)
			continue;
		in.module = module_name(b->module[j], module, sizeof(module));
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
		n = function_spans(&redo, i);
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
	err = err ?: merge_redo(t, &redo, what);
out:
	xk_scope_free(&redo);
	free(below);
	return err;
}

/*
 * The replayed form of one object's functions with refused spans in t,
 * from builds with values[v] (paths[v]; "" when that value did not build):
 * appended to redo (replay_function, replay.c).
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
		    (i && same_function(&t->spans[i - 1], sp)))
			continue;
		for (int j = i; j < i + function_spans(t, i); j++)
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

/* Why heap_in_one_call did not take sp's function, right after the heap
 * finding (the reason's first part, which the runtime looks for). */
static void note_as_one_call(struct xk_scope_span *sp, const char *why)
{
	char old[sizeof(sp->why)];
	size_t cut = strcspn(sp->why, ";");

	memcpy(old, sp->why, sizeof(old));
	snprintf(sp->why, sizeof(sp->why), "%.*s; as one call: %.200s%s",
		 (int)cut, old, why, old + cut);
}

/*
 * A constant every use of which lies in one function, where it sizes heap
 * objects (io_ring_ctx_alloc: kvmalloc_array(IO_ALLOC_CACHE_MAX) and
 * cache->max_cached = IO_ALLOC_CACHE_MAX; skb_page_frag_refill:
 * alloc_pages(SKB_FRAG_PAGE_ORDER) and pfrag->size). The heap rule
 * (df_slice_forward) refused the allocation: nothing follows the object,
 * and code running another value could use it. Here no other code uses
 * the constant at all, so an object is used under another value only if
 * the value changed while its allocating call ran, between the size and
 * what the call records, or if the call reads the value against an
 * object another call made (golden G_HEAPLAZY: a table allocated once and
 * bounded by N in every call). The function is analysed again with
 * df_limits.allocations_in_call: the allocators' size arguments taken as
 * any call's, and the value allowed nothing but arithmetic, stores and
 * those sizes (heap_call_use: no compare read, index, other callee or
 * return), every span state of the call (whole_function: the value
 * changes only when no thread is in the function). It replaces the
 * table's spans when each of its spans is supported so. Nothing else
 * qualifies: a use in another function, a variable, a boot-time use (a
 * note), a frame the constant sizes too, a macro another header names
 * (named_in_other_headers: its users are not all known). Runs once the
 * other passes are done, before the checks of the whole table (overlaps,
 * bounds).
 */
static int heap_in_one_call(const struct xk_kernel *k, const struct xk_constant *c,
			    const struct xk_build_result *b, struct xk_scope *t)
{
	const struct xk_scope_span *h = NULL;
	struct gen_input in = { .def = c->def, .min = c->min, .max = c->max };
	struct xk_scope redo;
	char module[64], header[128];
	const char *name;
	int err, i, obj = -1;

	for (i = 0; i < t->nr_spans && !h; i++)
		if (t->spans[i].cls == XK_SPAN_UNSUPPORTED &&
		    strstr(t->spans[i].why, XK_WHY_HEAP))
			h = &t->spans[i];
	if (!h || t->nr_notes)
		return 0;
	for (i = 0; i < t->nr_spans; i++)
		if (!same_function(&t->spans[i], h))
			return 0;
	/* the objects are those whose .c names the macro: a header that
	 * names it too may carry it into others, unseen */
	err = named_in_other_headers(k, c, header, sizeof(header));
	if (err < 0)
		return err;
	if (err) {
		char why[200];

		snprintf(why, sizeof(why), "%.100s names it too (its users are "
			 "not all known)", header);
		note_as_one_call(&t->spans[h - t->spans], why);
		return 0;
	}
	obj = object_index(b, h->object);
	if (obj < 0)
		return 0;
	in.object = b->object[obj];
	in.module = module_name(b->module[obj], module, sizeof(module));
	in.ko = b->module[obj];
	in.kernel = k;
	name = strchr(h->func, ':');
	in.heap_call = name ? name + 1 : h->func;
	xk_strlcpy(in.base_path, b->base[obj], sizeof(in.base_path));
	for (int v = 0; v < GEN_NR_VARIANTS; v++) {
		in.variant[v].value = b->value[v];
		xk_strlcpy(in.variant[v].path, b->variant[obj][v],
			   sizeof(in.variant[v].path));
	}
	redo = *t;
	redo.spans = NULL;
	redo.nr_spans = 0;
	df_limits.allocations_in_call = true;
	err = gen_object(&in, &redo);
	df_limits.allocations_in_call = false;
	if (!err && redo.nr_spans &&
	    xk_scope_nr_supported(&redo) == redo.nr_spans) {
		for (i = 0; i < redo.nr_spans; i++)
			if (!redo.spans[i].call_state)
				break;
		if (i == redo.nr_spans) {
			xk_scope_free(t);
			*t = redo;
			return 0;
		}
	}
	/* why not, right after the heap finding (which stays first) */
	for (i = 0; !err && i < redo.nr_spans; i++) {
		if (redo.spans[i].cls != XK_SPAN_UNSUPPORTED)
			continue;
		note_as_one_call(&t->spans[h - t->spans], redo.spans[i].why);
		break;
	}
	xk_scope_free(&redo);
	return err;
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
 * spans.c: whole_function): the compiled-in frame holds what a smaller
 * value needs, a larger one would need more stack than the function has.
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
	int use, j = object_index(b, sp->object);

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

static int gen_replay(const struct xk_kernel *k, const struct xk_constant *c,
		      const struct xk_build_result *b, struct xk_scope *t)
{
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true);
	int64_t values[2 * GEN_NR_VARIANTS + 1];
	struct xk_build_result *res[2 * GEN_NR_VARIANTS + 1] = { NULL };
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	char (*paths)[XK_PATH_MAX] = NULL;
	int nr = 0, err = 0;

	if (gen_replay_off)
		return 0;
	err = refused_objects(c, t, &only, "the replayed form");
	if (err || !only.objects[0])
		return err;
	{
		/* the fit and check values, the by-shape family, and N-1:
		 * bounds that stop at the default leave few others */
		long long cand[2 * GEN_NR_VARIANTS + 1] = {
			b->value[0], b->value[1], b->value[2], 0, 0, 0, c->def - 1,
		};
		bool family = shape_family(c->def, &cand[GEN_NR_VARIANTS]);

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

			in.module = module_name(r0->module[i], module, sizeof(module));
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
	err = err ?: merge_redo(t, &redo, "replayed");
	xk_scope_free(&redo);
	free(paths);
	for (int v = 0; v < nr; v++)
		free(res[v]);
	return err;
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

		in.module = module_name(b->module[i], module, sizeof(module));
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
	err = err ?: gen_by_shape(k, c, t);
	err = err ?: gen_replay(k, c, b, t);
	err = err ?: heap_in_one_call(k, c, b, t);
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

		if (xk_scope_span_has_value(sp, value, t->def) || has_word(only.objects, sp->object))
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
		err = gen_point_object(&in, t, rows) ?:
		      gen_replay_point_object(&in, t, reps, got);
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
		if (has_word(only.objects, sp->object))
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
		int j = object_index(b, in.object);

		if (j < 0)
			continue;
		in.module = module_name(b->module[j], module, sizeof(module));
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
