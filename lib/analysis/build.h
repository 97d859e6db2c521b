/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the variant builds (xk build): where a constant's sources
 * are (locate.c) and how its objects are rebuilt (variants.c).
 */
#ifndef XK_ANALYSIS_BUILD_H
#define XK_ANALYSIS_BUILD_H

#include "internal.h"
#include "xk/analysis.h"

/*
 * A constant of the kernel lives in the prepared source tree, where Kbuild
 * runs; one of an out-of-tree module (module= in the catalog) lives in the
 * module's directory, built by Kbuild from the headers with M=.
 */
struct tree {
	char src[XK_PATH_MAX];	/* file=, objects= and .cmd files are here */
	char cwd[XK_PATH_MAX];	/* recorded commands run here */
	bool module;
};

int tree_of(const struct xk_kernel *k, const struct xk_constant *c,
	    struct tree *t);
/* Whether line is "#define name ..."; *body is what follows the name. */
bool is_define_of(const char *line, const char *name, const char **body);
/* Fills a macro's file, line, template and default from its definition. */
/* A literal's or variable's line: the nearest of file's lines that holds
 * the catalog's code= (the line= hint otherwise, checked), text in it. */
int locate_line(const struct tree *t, struct xk_constant *c);
int locate_macro(const struct xk_kernel *k, const struct tree *t,
		 struct xk_constant *c);
/* The objects of this configuration whose code may use the constant. */
int find_objects(const struct xk_kernel *k, const struct tree *t,
		 const struct xk_constant *c, struct xk_build_result *res);

/*
 * Whether a header other than the macro's own names it (a static inline
 * or another macro that may carry it into objects find_objects does not
 * list): 1 with the first such header in hit, 0, or -errno. 0 for a
 * literal or a variable (one file's).
 */
int named_in_other_headers(const struct xk_kernel *k, const struct xk_constant *c,
			   char *hit, size_t size);

/* Shared with klp.c (the livepatch built for bench/compare.sh): */
/* The compile command Kbuild recorded for obj, without -c -o and the
 * dependency file; src is the source it compiles. */
int recorded_command(const struct tree *t, const char *obj, char **cmd,
		     char *src, size_t src_size);
/* The preprocessed unit with the constant's value replaced (malloc'd). */
int patch_unit(const struct xk_constant *c, const char *unit,
	       long long value, char **out);

#endif
