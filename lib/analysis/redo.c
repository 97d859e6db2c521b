// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: what the analyses after the first one share. Each
 * (by shape, replayed, heap of one call, the check below the default)
 * analyses again, with builds of its own, the objects whose spans the
 * first analysis refused, into a second table; a function whose spans the
 * second table all supports takes them in place of its own
 * (gen_merge_redo), any other keeps its refusal, naming what the later
 * analysis found.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "redo.h"

/* Whether word is one of the space-separated words of list. */
bool gen_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* The module of a module's object (net/ipv4/tcp_bbr.ko: tcp_bbr, as
 * kallsyms writes it: - as _), or NULL for vmlinux. */
const char *gen_module_name(const char *ko, char *buf, size_t size)
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
bool gen_same_function(const struct xk_scope_span *a,
		       const struct xk_scope_span *b)
{
	return !strcmp(a->object, b->object) && !strcmp(a->func, b->func) &&
	       a->func_size == b->func_size;
}

/* The index of object in build b, or -1. */
int gen_object_index(const struct xk_build_result *b, const char *object)
{
	for (int j = 0; j < b->nr_objects; j++)
		if (!strcmp(b->object[j], object))
			return j;
	return -1;
}

/* Span i of t and the next ones of the same function: how many. */
int gen_function_spans(const struct xk_scope *t, int i)
{
	int n = 1;

	while (i + n < t->nr_spans && gen_same_function(&t->spans[i + n], &t->spans[i]))
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
int gen_merge_redo(struct xk_scope *t, struct xk_scope *redo,
		   const char *what)
{
	struct xk_scope_span *out;
	int n = 0, cap = t->nr_spans + redo->nr_spans;

	out = calloc(cap ? cap : 1, sizeof(*out));
	if (!out)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	for (int i = 0; i < t->nr_spans;) {
		int nt = gen_function_spans(t, i), r, nr = 0;
		const char *why = NULL;		/* redo's first refusal */

		for (r = 0; r < redo->nr_spans; r++)
			if (gen_same_function(&redo->spans[r], &t->spans[i]))
				break;
		if (r < redo->nr_spans)
			nr = gen_function_spans(redo, r);
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

/* A later analysis could not run: every function's first refusal
 * says why. */
void gen_annotate_refusals(struct xk_scope *t, const char *what,
			   const char *why)
{
	for (int i = 0; i < t->nr_spans; i += gen_function_spans(t, i))
		note_refusal(&t->spans[i], gen_function_spans(t, i), what, why);
}

/*
 * The values of the default's kind the analysis by shape builds: 2N, 4N
 * and N/2 (8N for an odd default) in fam[0..2]. false when there are none
 * (a default below 2 or past 2^40).
 */
bool gen_shape_family(long long def, long long *fam)
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
int gen_refused_objects(const struct xk_constant *c, const struct xk_scope *t,
			struct xk_constant *only, const char *who)
{
	only->objects[0] = '\0';
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];
		size_t len = strlen(only->objects);
		int err;

		/* a reader refused in a shipped module (.ko): no build
		 * of it could tell more */
		if (sp->cls != XK_SPAN_UNSUPPORTED || gen_has_word(only->objects, sp->object) ||
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

/* The points and replays of t's spans outside its bounds go. */
void gen_drop_outside_bounds(struct xk_scope *t)
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

void gen_input_checked(const struct xk_kernel *k, const struct xk_constant *c,
		       const struct xk_build_result *b, int j, long long value,
		       const char *path, struct gen_input *in, char *module,
		       size_t size)
{
	*in = (struct gen_input){ .object = b->object[j], .def = c->def,
				  .min = c->min, .max = c->max, .kernel = k };
	in->module = gen_module_name(b->module[j], module, size);
	in->ko = b->module[j];
	xk_strlcpy(in->base_path, b->base[j], sizeof(in->base_path));
	for (int v = 0; v < GEN_FIT_VARIANTS; v++) {
		in->variant[v].value = b->value[v];
		xk_strlcpy(in->variant[v].path, b->variant[j][v],
			   sizeof(in->variant[v].path));
	}
	in->variant[GEN_FIT_VARIANTS].value = value;
	xk_strlcpy(in->variant[GEN_FIT_VARIANTS].path, path,
		   sizeof(in->variant[GEN_FIT_VARIANTS].path));
}
