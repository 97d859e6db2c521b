/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the livepatch built the kpatch way (klp.c), for the
 * comparison of bench/compare.sh: how a relocation of a function taken out
 * of its object is resolved once the function lives in a livepatch module.
 */
#ifndef XK_KLP_INTERNAL_H
#define XK_KLP_INTERNAL_H

#include "object.h"
#include "xk/klp.h"

/* What vmlinux offers a module: its kallsyms and its exports. */
struct klp_vmlinux {
	struct xk_kallsyms ks;	/* every symbol, sorted by name then address */
	char *symvers;		/* Module.symvers, the names point into it */
	const char **exports;	/* vmlinux's exported names, sorted */
	size_t nr_exports;
};

int klp_vmlinux_load(const struct xk_kernel *k, struct klp_vmlinux *vm);
void klp_vmlinux_free(struct klp_vmlinux *vm);
bool klp_exported(const struct klp_vmlinux *vm, const char *name);

enum klp_ref_kind {
	KLP_REF_SECTION,	/* a section copied into the patch: resolved
				   when the module is linked */
	KLP_REF_EXPORTED,	/* an exported symbol: the module loader */
	KLP_REF_KLP,		/* anything else of vmlinux: a livepatch
				   relocation, .klp.sym.vmlinux.NAME,POS */
};

struct klp_ref {
	enum klp_ref_kind kind;
	const struct xk_sec *sec;	/* KLP_REF_SECTION */
	char name[192];			/* EXPORTED: the name; KLP: .klp.sym... */
	int64_t addend;			/* relative to sec or to the symbol */
};

/*
 * Resolves relocation r of a section copied from object o into the patch;
 * copied[i] says whether section i of o is copied. A reference to a section
 * that is not copied goes to the one symbol that section holds
 * (-fdata-sections, -ffunction-sections), or in a named section holding
 * several, to the one whose bytes the reference reads. A local name vmlinux
 * lists more than once gets its position from orig, the same unit compiled
 * as the kernel compiled it (NULL: refused). Refuses (-ENOTSUP, the cause
 * recorded) a relocation type the module loader does not apply, and a
 * symbol vmlinux does not list or whose position cannot be told.
 */
int klp_classify(const struct klp_vmlinux *vm, const struct xk_obj *o,
		 const struct xk_obj *orig, const bool *copied,
		 const struct xk_rela *r, struct klp_ref *ref);

#endif
