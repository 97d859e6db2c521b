/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk analysis: the offline half (xk build, xk gen): the catalog, the
 * variant builds, and the analysis of their machine code into a scope table.
 */
#ifndef XK_ANALYSIS_H
#define XK_ANALYSIS_H

#include "xk/core.h"
#include "xk/provision.h"
#include "xk/scope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Constants: the catalog, the variant builds, the analysis           */
/* ------------------------------------------------------------------ */

/* A constant as named by the catalog (catalog/constants.conf) or by hand. */
struct xk_constant {
	char name[64];
	char kind[16];		/* macro | literal | variable */
	char file[256];		/* source file; "" to locate a macro */
	int line;		/* literal, variable: the line of its text */
	char text[128];		/* literal, variable: the text replaced */
	/* literal, variable: text of the line itself; when given, line is
	 * the nearest line of file that holds it (a hint: a kernel update
	 * moves lines), and text must be in that line */
	char code[160];
	char tmpl[128];		/* macro: its body with %lld for the value */
	/* a macro whose template xk_build() derived from a body that is an
	 * expression, (2*HZ): what the value counts, as "2 in units of HZ
	 * (250 jiffies each here): ..." (empty otherwise) */
	char unit[256];
	long long def, min, max;
	bool has_def, has_bounds;
	char objects[512];	/* space-separated objects; "" to find them */
	char module_dir[256];	/* an out-of-tree module's directory, or "" */
	char description[256];
};

/* Finds a constant in a catalog file; -ENOENT names the catalog. */
int xk_catalog_find(const char *catalog, const char *name,
		    struct xk_constant *c);
/*
 * The constant a user names: the catalog's entry, else, for a name that can
 * be a macro's (capitals, digits, _), a macro that xk_build() locates in the
 * source by its name alone (its bounds then 1 .. 16 x the default).
 */
int xk_constant_resolve(const char *catalog, const char *name,
			struct xk_constant *c);
/* Names of all constants of a catalog, newline-separated (malloc'd). */
int xk_catalog_list(const char *catalog, char **names);

#define XK_BUILD_MAX_OBJECTS 16
#define XK_BUILD_VARIANTS 3

struct xk_build_result {
	int nr_objects;
	char object[XK_BUILD_MAX_OBJECTS][128];
	char base[XK_BUILD_MAX_OBJECTS][XK_PATH_MAX];
	/* an object of a module: the module's .ko in the tree, else "" */
	char module[XK_BUILD_MAX_OBJECTS][128];
	long long value[XK_BUILD_VARIANTS];	/* fit, fit, check */
	char variant[XK_BUILD_MAX_OBJECTS][XK_BUILD_VARIANTS][XK_PATH_MAX];
	int compiled, cached;	/* variant objects built now / reused */
	int identical;		/* functions checked equal to the shipped kernel */
	double seconds;
};

struct xk_build_opts {
	size_t sz;
	int jobs;		/* parallel compiles; 0: the number of CPUs */
	bool progress;		/* report each compile through the print callback */
	bool skip_identity;	/* do not compare baselines with the shipped kernel */
	/* one variant only, built with value (xk_gen_point), instead of the
	 * two fit variants and the check variant */
	bool one_value;
	long long value;
};

/*
 * Locates the constant in the target's source (a macro's definition, a
 * literal's text), finds the objects whose code may depend on it, builds
 * the baseline objects with Kbuild and variants with other values by
 * compiling the preprocessed unit with the definition changed (never the
 * whole kernel; cached by content). Fills the default value from the
 * source when the catalog gives none.
 */
int xk_build(const struct xk_kernel *k, struct xk_constant *c,
	     const struct xk_build_opts *opts, struct xk_build_result *res);

/* Analyses the built objects into a scope table (see include/xk/scope.h). */
int xk_gen(const struct xk_kernel *k, const struct xk_constant *c,
	   const struct xk_build_result *b, struct xk_scope *out);

/*
 * Prepares value for the table's per-value spans (docs/scope-table.md): the
 * objects holding them are built with value, and each span takes the
 * immediates of that build as its parameters at value (a point), when the
 * build's function has the baseline's shape and reproduces the span's
 * program by value; else nothing changes and the error names the span and
 * why. 0 at once when every span has the point already (or none is per
 * value); *added: spans that took a new point.
 */
int xk_gen_point(const struct xk_kernel *k, const struct xk_constant *c,
		 struct xk_scope *t, long long value, int *added);

/*
 * Checks table t at value against the kernel compiled with it: the objects
 * of its affine spans (a*N + b) are built with value, and each such span
 * must find the baseline's shape there, the immediates its fit gives, and
 * compute what that build's own span computes (the checks of xk gen, at
 * that value). Per-value and replayed spans are built and checked when a
 * value is set (xk_gen_point); the other forms are counted apart.
 * Returns -errno when the check cannot run (a build failed), else 0 with
 * the counts in res.
 */
#define XK_VERIFY_MAX_WHY 4
struct xk_verify_result {
	long long value;
	int nr_checked;		/* affine spans that agree with the build */
	int nr_failed;		/* ... that do not (why: the first ones) */
	int nr_per_value;	/* per-value and replayed: checked when set */
	int nr_other;		/* other forms, or another code at value: not compared */
	char why[XK_VERIFY_MAX_WHY][400];
	/* of nr_other: affine spans whose code at value has another form */
	int nr_other_code;
	char other_why[400];	/* the first of them */
};
int xk_gen_verify(const struct xk_kernel *k, const struct xk_constant *c,
		  const struct xk_scope *t, long long value,
		  struct xk_verify_result *res);

/*
 * xk gen --prove: the values of t's bounds built and checked, every one
 * when the bounds hold at most XK_PROVE_EVERY values, else at most
 * XK_PROVE_SAMPLES spread geometrically from the default out to both
 * bounds: the affine spans as xk_gen_verify checks them, the per-value
 * and replayed spans built as xk_gen_point builds them (their points kept
 * in no table). t's bounds then narrow to the values around the default
 * where every affine span agrees with the build and the kernel compiles
 * (a policy may choose any value of the bounds), and its values to those
 * accepted (a value some per-value or replayed span refused is a hole:
 * the module refuses it too, having no point for it), with a "bounds: "
 * and a "values: " note naming the first refusal of each kind. In a
 * sample the values between two accepted samples are taken as accepted
 * (their affine programs interpolate; a per-value span builds them at
 * set). Returns -errno when a step cannot run (not for a refused value).
 */
#define XK_PROVE_EVERY 256
#define XK_PROVE_SAMPLES 32
#define XK_PROVE_MAX_WHY 8
struct xk_prove_result {
	long long min, max;	/* the table's bounds before */
	bool every;		/* every value built, else a sample */
	int nr_values;		/* values built and checked, the default's not */
	int nr_refused;		/* ... refused (why: the first ones) */
	struct {
		long long value;
		char why[400];
	} refused[XK_PROVE_MAX_WHY];
};
int xk_gen_prove(const struct xk_kernel *k, const struct xk_constant *c,
		 struct xk_scope *t, struct xk_prove_result *res);

/*
 * xk gen's check of the bounds: the fits of t's affine spans hold where
 * xk gen built (b: the default, two values next to it and the check
 * value), and a policy may choose any value of the bounds; so each end of
 * the bounds that is none of those values is built too and the affine
 * spans checked there as xk_gen_verify checks them. An end where a span
 * disagrees (or has another code, or the kernel does not compile) moves
 * in to the value nearest to it found to hold, searched between it and
 * the values built with at most XK_BOUNDS_STEPS builds more a side
 * (outward from the end, then halving the gap), with a "bounds: " note
 * naming the refusal nearest to it. Then
 * t->ends_checked. Nothing is built for a table without affine spans or
 * a proved one. -errno when a step cannot run.
 */
#define XK_BOUNDS_STEPS 8
struct xk_bounds_check {
	long long min, max;	/* the table's bounds before */
	int nr_affine;		/* affine spans (none: nothing to check) */
	int nr_built;		/* values built and checked */
	bool narrowed;
	long long refused;	/* the refusal nearest a bound that moved */
	char why[400];
};
int xk_gen_check_bounds(const struct xk_kernel *k, const struct xk_constant *c,
			const struct xk_build_result *b, struct xk_scope *t,
			struct xk_bounds_check *res);

/* Disassembly of [from, to) of a function, one instruction a line. */
int xk_disasm_range(const char *obj_path, const char *func,
		    unsigned long long from, unsigned long long to, char **text);

/* The eBPF glue a policy includes for a table (docs/policies.md). */
int xk_glue_write(const struct xk_scope *t, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* XK_ANALYSIS_H */
