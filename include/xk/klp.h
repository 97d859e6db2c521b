/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk-klp: the livepatch bench/compare.sh measures xkernel against, built
 * the kpatch way (tools/klp-build). Not part of the product's path: it
 * sits on the analysis's object model (lib/klp may read lib/analysis's
 * internals; nothing of the product links it).
 */
#ifndef XK_KLP_H
#define XK_KLP_H

#include "analysis.h"

/*
 * A livepatch module that compiles the constant's value in, built the kpatch
 * way, for comparisons (bench/compare.sh, docs/compare.md): the objects
 * holding the table's spans rebuilt with value and -ffunction-sections, the
 * functions that changed (which must be the table's) taken out into one
 * object whose references to vmlinux's unexported symbols become livepatch
 * relocations, linked by Kbuild with a generated klp_patch.
 */
#define XK_KLP_MAX_FUNCS 32
struct xk_klp_result {
	char ko[XK_PATH_MAX];	/* the module */
	char name[64];		/* its name (/sys/kernel/livepatch/NAME) */
	int nr_funcs;
	char func[XK_KLP_MAX_FUNCS][128];
	char object[XK_KLP_MAX_FUNCS][128];
	size_t sympos[XK_KLP_MAX_FUNCS];	/* old_sympos: 0 unique, else 1.. */
	int relocs_section, relocs_exported, relocs_klp;
	int special_entries;	/* __jump_table, __bug_table, ... entries */
	int fresh_statics;	/* once-flags and the like, the patch's own */
	double seconds;
};
int xk_klp_build(const struct xk_kernel *k, struct xk_constant *c,
		 const struct xk_scope *t, long long value, const char *dir,
		 struct xk_klp_result *res);

#endif
