// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the entry points of `xk gen`: the built objects of a
 * constant analysed into a scope table (spans.c per object), and the
 * disassembly listing of a range (xk gen --explain).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "identity.h"
#include "spans.h"


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

		/* net/ipv4/tcp_bbr.ko: tcp_bbr (kallsyms writes - as _) */
		if (b->module[i][0]) {
			const char *base = strrchr(b->module[i], '/');

			xk_snprintf(module, sizeof(module), "%.*s",
				    (int)strcspn(base ? base + 1 : b->module[i], "."),
				    base ? base + 1 : b->module[i]);
			for (char *p = module; *p; p++)
				if (*p == '-')
					*p = '_';
			in.module = module;
		}

		xk_strlcpy(in.base_path, b->base[i], sizeof(in.base_path));
		for (int v = 0; v < GEN_NR_VARIANTS; v++) {
			in.variant[v].value = b->value[v];
			xk_strlcpy(in.variant[v].path, b->variant[i][v],
				   sizeof(in.variant[v].path));
		}
		err = gen_object(&in, t);
	}
	if (!err && !c->module_dir[0])	/* a module's names are not recorded */
		err = xk_count_copies(k, t);
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
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* Whether span sp has a point at value n (affine spans need none). */
static bool has_point(const struct xk_scope_span *sp, long long n)
{
	if (sp->cls == XK_SPAN_UNSUPPORTED || sp->nr_points <= 0)
		return true;
	for (int j = 0; j < sp->nr_points; j++)
		if (sp->points[j].n == n)
			return true;
	return false;
}

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
	struct xk_constant only = *c;
	size_t len = 0;
	int err = 0;

	*added = 0;
	if (value < t->min || value > t->max)
		return xk_err(-ERANGE, "%s: value %lld is out of bounds [%lld, %lld]",
			      t->constant, value, (long long)t->min,
			      (long long)t->max);
	/* the objects of the per-value spans without the point: only they */
	only.objects[0] = '\0';
	for (int i = 0; i < t->nr_spans; i++) {
		const struct xk_scope_span *sp = &t->spans[i];

		if (has_point(sp, value) || has_word(only.objects, sp->object))
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
	if (!b || !rows) {
		err = xk_err(-ENOMEM, "%s: out of memory", __func__);
		goto out;
	}
	err = xk_build(k, &only, &o, b);
	for (int i = 0; i < b->nr_objects && !err; i++) {
		struct gen_input in = { .object = b->object[i], .def = t->def,
					.min = t->min, .max = t->max };

		xk_strlcpy(in.base_path, b->base[i], sizeof(in.base_path));
		in.variant[0].value = value;
		xk_strlcpy(in.variant[0].path, b->variant[i][0],
			   sizeof(in.variant[0].path));
		err = gen_point_object(&in, t, rows);
	}
	/* every span could take it: all take it */
	for (int i = 0; i < t->nr_spans && !err; i++) {
		struct xk_scope_span *sp = &t->spans[i];
		bool built = false;

		if (has_point(sp, value))
			continue;
		for (int j = 0; j < b->nr_objects; j++)
			built |= !strcmp(b->object[j], sp->object);
		if (!built) {
			err = xk_err(-ENOENT, "%s: span %d's object %s was not built",
				     t->constant, i, sp->object);
			break;
		}
		add_point(sp, t->def, value, rows[i]);
		(*added)++;
	}
out:
	free(rows);
	free(b);
	return err;
}

int xk_gen_point(const struct xk_kernel *k, const struct xk_constant *c,
		 struct xk_scope *t, long long value, int *added)
{
	xk_err_clear();
	return xk_api_return(__func__, xk_gen_point_impl(k, c, t, value, added));
}
