/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the variant builds (xk build): where a constant's sources
 * are (locate.c), each object's recorded command and unit (unit.c), how
 * its objects are rebuilt (variants.c).
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
	char toolchain[XK_PATH_MAX];	/* where they run: the kernel's (xk_cmd.root) */
	bool module;
};

int tree_of(const struct xk_kernel *k, const struct xk_constant *c,
	    struct tree *t);
/* Whether line is "#define name ..."; *body is what follows the name. */
bool is_define_of(const char *line, const char *name, const char **body);
/* Fills a macro's file, line, template and default from its definition;
 * a body that is not a number leaves the template empty, for
 * evaluate_macro once an object that uses it is known. */
/* A literal's or variable's line: the nearest of file's lines that holds
 * the catalog's code= (the line= hint otherwise, checked), text in it. */
int locate_line(const struct tree *t, struct xk_constant *c);
int locate_macro(const struct xk_kernel *k, const struct tree *t,
		 struct xk_constant *c);
/* The objects of this configuration whose code may use the constant. */
int find_objects(const struct xk_kernel *k, const struct tree *t,
		 const struct xk_constant *c, struct xk_build_result *res);

/*
 * The objects of this configuration that name a header macro, or a macro
 * defined from it, and that the catalog's objects= leaves out (their uses
 * keep the compiled-in value): their number, listed in list (past a
 * build's limit of objects: that limit + 1, list empty); 0 without
 * objects= or for a literal or a variable; -errno.
 */
int objects_left_out(const struct xk_kernel *k, const struct xk_constant *c,
		     char *list, size_t size);

/*
 * Whether a header other than the macro's own names it (a static inline
 * or another macro that may carry it into objects find_objects does not
 * list): 1 with the first such header in hit, 0, or -errno. 0 for a
 * literal or a variable (one file's).
 */
int named_in_other_headers(const struct xk_kernel *k, const struct xk_constant *c,
			   char *hit, size_t size);

/*
 * The compile command of obj and its unit (includes expanded, #define lines
 * kept: -E -fdirectives-only), cached in cache_dir; the baseline object
 * (its path in base) is built first when the tree lacks it. *cmd is
 * malloc'd; src is the source it compiles.
 */
int object_unit(const struct tree *t, const char *obj, const char *ccvar,
		const char *cache_dir, const char *log, bool progress,
		char *base, char **cmd, char *src, size_t src_size,
		char *unit_path);
/* "CC=<the compiler the kernel was built with>", for make. */
int kernel_cc_var(const struct xk_kernel *k, char *out, size_t size);
/* The recorded command made one that compiles such a unit (malloc'd). */
int unit_command(const char *cmd, char **out);
/* FNV-1a over n bytes at p, from h: a cache key. */
uint64_t unit_hash(uint64_t h, const void *p, size_t n);

/*
 * A macro's body split at its top level (evaluate.c): a product with one
 * integer literal, "(2*HZ)", is that literal in units of the other factors;
 * a sum with one, "(MAX_HEADER + 64)", the literal added to the other
 * terms; anything else is one value as a whole ("HPAGE_PMD_NR", "(HZ / 50)").
 */
enum body_form { BODY_WHOLE, BODY_SCALED, BODY_OFFSET };

struct body_shape {
	enum body_form form;
	long long literal;	/* SCALED, OFFSET: the literal's value */
	char tmpl[128];		/* SCALED, OFFSET: the body, %lld for the literal */
	char rest[128];		/* SCALED: the other factors; OFFSET: terms */
};

int body_shape(const char *body, struct body_shape *s);
/*
 * The template, default and unit of a macro whose body is not a number,
 * from its definition in obj's unit, evaluated by the kernel's compiler
 * with obj's flags; a body it cannot evaluate is refused naming the part
 * of it that stopped the compiler.
 */
int evaluate_macro(const struct tree *t, struct xk_constant *c,
		   const char *obj, const char *ccvar, const char *cache_dir,
		   const char *log, bool progress);

/* Shared with klp.c (the livepatch built for bench/compare.sh): */
/* The compile command Kbuild recorded for obj, without -c -o and the
 * dependency file; src is the source it compiles. */
int recorded_command(const struct tree *t, const char *obj, char **cmd,
		     char *src, size_t src_size);
/* The preprocessed unit with the constant's value replaced (malloc'd). */
int patch_unit(const struct xk_constant *c, const char *unit,
	       long long value, char **out);

#endif
