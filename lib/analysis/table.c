// SPDX-License-Identifier: GPL-2.0
/*
 * libxk analysis: the table an object's analysis appends to, and what
 * every form asks of the object (which code the running kernel keeps,
 * which function a span names). Calls neither the pipeline nor a form.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "table.h"

/* A new span of the table (zeroed, no argument registers), in *sp. */
int gen_append_span(struct xk_scope *t, const char *object, const char *func,
		    uint64_t func_size, struct xk_scope_span **sp)
{
	struct xk_scope_span *bigger;

	bigger = realloc(t->spans, (t->nr_spans + 1) * sizeof(*bigger));
	if (!bigger)
		return xk_err(-ENOMEM, "%s: out of memory", __func__);
	t->spans = bigger;
	*sp = &t->spans[t->nr_spans++];
	memset(*sp, 0, sizeof(**sp));
	memset((*sp)->arg_reg, -1, sizeof((*sp)->arg_reg));
	xk_strlcpy((*sp)->object, object, sizeof((*sp)->object));
	xk_strlcpy((*sp)->func, func, sizeof((*sp)->func));
	(*sp)->func_size = func_size;
	return 0;
}

/* A new span of the table, in function f of the object being analysed. */
int gen_add_span(struct xk_scope *t, const struct gen_input *in,
		 const struct xk_sym *f, struct xk_scope_span **sp)
{
	char func[sizeof((*sp)->func)];

	/* a module's function is named module:function, as kallsyms and
	 * kprobes resolve it */
	if (in->module)
		xk_snprintf(func, sizeof(func), "%s:%s", in->module, f->name);
	else
		xk_strlcpy(func, f->name, sizeof(func));
	return gen_append_span(t, in->object, func, f->sym.st_size, sp);
}

/* A note for table t (what the analysis left out, and why); -E2BIG when
 * the table has XK_SCOPE_MAX_NOTES already. */
int gen_add_note(struct xk_scope *t, const char *text)
{
	for (int i = 0; i < t->nr_notes; i++)
		if (!strcmp(t->notes[i], text))
			return 0;	/* another pass said it */
	if (t->nr_notes >= XK_SCOPE_MAX_NOTES)
		return xk_err(-E2BIG, "%s: more than %d notes (%s)", t->constant,
			      XK_SCOPE_MAX_NOTES, text);
	xk_strlcpy(t->notes[t->nr_notes++], text, sizeof(t->notes[0]));
	return 0;
}

/* Code the running kernel no longer has, or never keeps: __init text is
 * freed after boot (kprobes refuses its addresses), __exit text of
 * built-in code is discarded. What it computed at boot keeps the
 * compiled-in value (a pool sized then), so such a use is refused. */
bool gen_init_code(const struct xk_sym *f)
{
	const char *s = f->sec ? f->sec->name : "";

	return !strncmp(s, ".init.text", 10) || !strncmp(s, ".exit.text", 10);
}

/* Whether span sp is one of function f of object (module:name or name). */
bool gen_span_of(const struct xk_scope_span *sp, const char *object,
		 const struct xk_sym *f)
{
	const char *name = strchr(sp->func, ':') ? strchr(sp->func, ':') + 1 :
						    sp->func;

	return !strcmp(name, f->name) && sp->func_size == f->sym.st_size &&
	       !strcmp(sp->object, object);
}

/* The baseline's function of a span: its name (less module:) and size. */
struct xk_sym *gen_span_function(struct xk_obj *o, const struct xk_scope_span *sp)
{
	const char *name = strchr(sp->func, ':') ? strchr(sp->func, ':') + 1 :
						    sp->func;

	for (size_t i = 0; i < o->nr_syms; i++) {
		struct xk_sym *f = &o->syms[i];

		if (f->is_func && f->sym.st_size == sp->func_size &&
		    !strcmp(f->name, name))
			return f;
	}
	return NULL;
}

/* Marks a span unsupported with the reason. */
void span_refuse(struct xk_scope_span *sp, const char *fmt, ...)
{
	va_list ap;

	sp->cls = XK_SPAN_UNSUPPORTED;
	va_start(ap, fmt);
	vsnprintf(sp->why, sizeof(sp->why), fmt, ap);
	va_end(ap);
}

int gen_add_variable_span(struct xk_scope *t, const struct gen_input *in,
			  const struct xk_sym *y, uint64_t off, uint32_t w,
			  const uint8_t *expect, int64_t a, int64_t b,
			  struct xk_scope_span **out)
{
	struct xk_scope_span *sp;
	int err = gen_add_span(t, in, y, &sp);

	if (err)
		return err;
	sp->cls = XK_SPAN_DATA;
	sp->emulate = XK_EMULATE_DATA;
	sp->start = off;
	sp->probe = off + w;
	sp->expect_len = w;
	memcpy(sp->expect, expect, w);
	memset(sp->expect_mask, 0xff, w);
	sp->nr_params = 1;
	sp->fit[0][0] = a;
	sp->fit[0][1] = b;
	sp->nr_imms = 1;
	sp->imm[0].insn = sp->imm[0].field = off;
	sp->imm[0].insn_len = sp->imm[0].size = w;
	sp->imm[0].width = w * 8;
	sp->copies = 0;	/* the module picks the copy by its bytes */
	*out = sp;
	return 0;
}
