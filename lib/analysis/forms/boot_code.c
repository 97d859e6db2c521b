// SPDX-License-Identifier: GPL-2.0
/*
 * Form: boot-time code (.init.text, freed after boot; .exit.text) that no
 * earlier form claimed. What it computed keeps the compiled-in value, so
 * the function is refused by name, with what the boot-data form found and
 * whether the value sized a heap object that lives on (which the runtime
 * must know to refuse every other value).
 */
#include <stdlib.h>

#include "form.h"

/*
 * Boot-time code is refused before its spans are analysed; but a value it
 * passed to an allocator sized a heap object that lives on (bio_integrity_
 * init's kmem_cache_create: BIO_INLINE_VECS's slab), which the runtime must
 * know to refuse every other value (XK_WHY_HEAP). So each seed is analysed
 * as a span of its own, and the first such finding is put in why ("" when
 * none); the spans are dropped.
 */
static int boot_heap_use(struct form_fn *fn, struct xk_scope *t, char *why,
			 size_t size)
{
	int first = t->nr_spans, err = 0;

	why[0] = '\0';
	if (!fn->analyse_span)	/* no form analyses spans: nothing to find */
		return 0;
	for (size_t i = 0; i < fn->base->nr && !err && !why[0]; i++) {
		struct xk_scope_span *sp;
		const char *heap;

		if (!fn->seed[i])
			continue;
		err = gen_add_span(t, fn->in, fn->fb, &sp) ?:
		      fn->analyse_span(fn, i, i, false, sp);
		heap = !err && sp->cls == XK_SPAN_UNSUPPORTED ?
		       strstr(sp->why, XK_WHY_HEAP) : NULL;
		if (heap)
			snprintf(why, size, "; +0x%llx: its value %.*s",
				 (unsigned long long)fn->base->insn[i].off,
				 (int)strcspn(heap, ";"), heap);
	}
	for (int k = first; k < t->nr_spans; k++)
		free(t->spans[k].replays);
	t->nr_spans = first;
	return err;
}

/* Claims every boot-time function that differs: one refused span. */
static int claim_boot_code(struct form_fn *fn, struct xk_scope *t)
{
	struct xk_scope_span *sp;
	char why[sizeof(t->notes[0])];
	int err;

	if (!gen_init_code(fn->fb) || !(fn->nr_seeds || fn->other_diff))
		return 0;
	err = boot_heap_use(fn, t, why, sizeof(why)) ?:
	      gen_add_span(t, fn->in, fn->fb, &sp);
	if (err)
		return err;
	span_refuse(sp, "%s is boot-time code (%s, freed after boot): "
		    "what it computed keeps the compiled-in value%s%s%s",
		    fn->fb->name, fn->fb->sec->name, why,
		    fn->found[0] ? "; as variables it derives: " : "", fn->found);
	return 1;
}

const struct gen_form form_boot_code = {
	.name = "boot code",
	.claim = claim_boot_code,
};
