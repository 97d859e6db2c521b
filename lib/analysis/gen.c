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

