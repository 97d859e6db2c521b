/* SPDX-License-Identifier: GPL-2.0 */
/* The analysis of one object and its variants (gen.c), for build.c. */
#ifndef XK_GEN_H
#define XK_GEN_H

#include "analysis.h"
#include "xk/scope.h"

struct gen_variant {
	int64_t value;
	char path[XK_PATH_MAX];
};

struct gen_jump_label {
	size_t sec;
	uint64_t off;
};

struct gen_input {
	const char *object;		/* e.g. block/blk-mq.o */
	char base_path[XK_PATH_MAX];
	int64_t def;			/* the value the baseline was built with */
	struct gen_variant variant[GEN_NR_VARIANTS];	/* fit, fit, check */
	struct gen_jump_label *jump_labels;	/* set by gen_object */
	size_t nr_jump_labels;
};

/* Appends the spans found in one object to the table. */
int gen_object(const struct gen_input *in, struct xk_scope *t);
int gen_collect_jump_labels(struct xk_obj *o, struct gen_input *in);
/* Compares a baseline object with the shipped kernel; -ESTALE names the
 * functions that differ. */
int xk_identity_check(const struct xk_kernel *k, const char *obj_path,
		      const char *obj_name, int *checked);
/* Each span's number of same-named functions in the target kernel. */
void xk_count_copies(const struct xk_kernel *k, struct xk_scope *t);
bool gen_jump_label_at(const struct gen_input *in, const struct xk_sym *f,
		       uint64_t off);

#endif
