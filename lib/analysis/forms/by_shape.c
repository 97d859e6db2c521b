// SPDX-License-Identifier: GPL-2.0
/*
 * Form: per value, by shape. A second analysis of the functions the first
 * one refused, from builds of values of the default's kind (the register
 * forms with in->by_shape: span.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "form.h"
#include "redo.h"

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
static int retry_by_shape(const struct form_table *ft, struct xk_scope *t)
{
	const struct xk_kernel *k = ft->k;
	const struct xk_constant *c = ft->c;
	XK_OPTS(xk_build_opts, o, .one_value = true, .skip_identity = true);
	struct xk_build_result *fb[GEN_NR_VARIANTS] = { NULL };
	struct xk_scope redo = { .nr_spans = 0 };
	struct xk_constant only = *c;
	long long fam[GEN_NR_VARIANTS];
	char what[96];
	int err = 0;

	if (!gen_shape_family(c->def, fam))
		return 0;
	snprintf(what, sizeof(what), "by shape (N=%lld, %lld, %lld)", fam[0],
		 fam[1], fam[2]);
	err = gen_refused_objects(c, t, &only, "the analysis by shape");
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
			gen_annotate_refusals(t, what, why);
			err = 0;
			goto out;
		}
	}
	for (int i = 0; !err && i < fb[0]->nr_objects; i++) {
		struct gen_input in = { .object = fb[0]->object[i], .def = c->def,
					.min = c->min, .max = c->max,
					.by_shape = true, .redo = t };
		char module[64];

		in.module = gen_module_name(fb[0]->module[i], module, sizeof(module));
		xk_strlcpy(in.base_path, fb[0]->base[i], sizeof(in.base_path));
		for (int v = 0; v < GEN_NR_VARIANTS && !err; v++) {
			if (strcmp(fb[v]->object[i], in.object))
				err = xk_err(-EIO, "%s: builds by shape disagree on "
					     "object %d", c->name, i);
			in.variant[v].value = fam[v];
			xk_strlcpy(in.variant[v].path, fb[v]->variant[i][0],
				   sizeof(in.variant[v].path));
		}
		err = err ?: ft->analyse_object(&in, &redo);
	}
	err = err ?: gen_merge_redo(t, &redo, what);
out:
	xk_scope_free(&redo);
	for (int v = 0; v < GEN_NR_VARIANTS; v++)
		free(fb[v]);
	return err;
}

const struct gen_form form_by_shape = {
	.name = "by shape",
	.retry = retry_by_shape,
};
