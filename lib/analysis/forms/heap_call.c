// SPDX-License-Identifier: GPL-2.0
/*
 * Form: the heap of one call. A constant every use of which lies in one
 * function, where it sizes heap objects: that function analysed again,
 * every span state of the call.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "dataflow.h"
#include "form.h"
#include "redo.h"

/* Why the heap of one call did not take sp's function, right after the heap
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
static int retry_heap_call(const struct form_table *ft, struct xk_scope *t)
{
	const struct xk_kernel *k = ft->k;
	const struct xk_constant *c = ft->c;
	const struct xk_build_result *b = ft->b;
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
		if (!gen_same_function(&t->spans[i], h))
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
	obj = gen_object_index(b, h->object);
	if (obj < 0)
		return 0;
	in.object = b->object[obj];
	in.module = gen_module_name(b->module[obj], module, sizeof(module));
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
	err = ft->analyse_object(&in, &redo);
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

const struct gen_form form_heap_call = {
	.name = "heap of one call",
	.retry = retry_heap_call,
};
