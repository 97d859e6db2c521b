/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk: the public API of xkernel's user-space library.
 *
 * Conventions (as in libbpf):
 *  - every function returns 0 or a negative errno; the library never prints
 *    and never exits; a one-line explanation of the last failure of the
 *    calling thread is available from xk_last_error();
 *  - options come in structs whose first member is their size (sz), so that
 *    fields can be added without breaking callers: declare them with
 *    XK_OPTS(type, name, .field = value, ...);
 *  - progress and diagnostics go to the print callback set by xk_set_print().
 */
#ifndef XK_XK_H
#define XK_XK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XK_VERSION "0.1.0"

enum xk_print_level {
	XK_WARN,
	XK_INFO,
	XK_DEBUG,
};

typedef int (*xk_print_fn_t)(enum xk_print_level level, const char *fmt,
			     va_list ap);

/* Sets the callback for progress and diagnostics; returns the old one. */
xk_print_fn_t xk_set_print(xk_print_fn_t fn);

/* One line naming the cause of the last failure of this thread. */
const char *xk_last_error(void);

/* Monotonic seconds, for timing what the library does. */
double xk_now(void);

#define XK_OPTS(TYPE, NAME, ...)                                               \
	struct TYPE NAME = ({                                                  \
		struct TYPE __o;                                               \
		__builtin_memset(&__o, 0, sizeof(__o));                        \
		__o = (struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
		__o;                                                           \
	})

/* ------------------------------------------------------------------ */
/* Target kernel provisioning                                         */
/* ------------------------------------------------------------------ */

#define XK_PATH_MAX 4096

/* A target kernel as unpacked in the cache. */
struct xk_kernel {
	char release[128];	/* uname -r, e.g. 6.12.117+deb12-cloud-amd64 */
	char version[128];	/* Debian package version, e.g. 6.12.117-1~deb12u1 */
	char dir[XK_PATH_MAX];	/* $XK_CACHE/kernels/<release> */
	char root[XK_PATH_MAX];	/* dir/root: the unpacked packages */
	char vmlinuz[XK_PATH_MAX];
	char config[XK_PATH_MAX];
	char headers[XK_PATH_MAX];	/* for out-of-tree modules (Kbuild) */
	char modules[XK_PATH_MAX];	/* dir/root/lib/modules/<release> */
	char source[XK_PATH_MAX];	/* prepared source tree, "" if none */
	bool source_prepared;
};

struct xk_kernel_opts {
	size_t sz;
	/* uname -r of the target; NULL: the current Debian 6.12 cloud kernel */
	const char *release;
	/* cache directory; NULL: $XK_CACHE or ~/.cache/xkernel */
	const char *cache_dir;
	/* also fetch and prepare the source tree for single-object builds */
	bool with_source;
	/* only look in the cache, never download (xk_kernel_find) */
	bool offline;
};

/*
 * Resolves, downloads, unpacks and prepares a target kernel. Idempotent:
 * every step leaves a stamp and is skipped when its stamp is present.
 */
int xk_kernel_fetch(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* Finds an already fetched kernel in the cache; -ENOENT if there is none. */
int xk_kernel_find(const struct xk_kernel_opts *opts, struct xk_kernel *k);

/* The cache directory in use (for messages). */
const char *xk_cache_dir(const char *override);

/* ------------------------------------------------------------------ */
/* Guest harness                                                      */
/* ------------------------------------------------------------------ */

struct xk_vm_opts {
	size_t sz;
	const char *const *argv;	/* command to run in the guest; NULL: shell */
	int timeout_s;			/* 0: no timeout */
	int mem_mb;			/* 0: 2048 */
	int smp;			/* 0: 2 */
	bool interactive;		/* attach the terminal (xk vm shell) */
	bool deterministic;		/* single-threaded TCG with -icount */
	int out_fd;			/* where the command's output goes (0: stdout);
					 * -1: captured only (in the result) */
	const char *cwd;		/* guest working directory; NULL: ours */
};

struct xk_vm_result {
	int exit_status;		/* of the command in the guest */
	double wall_s;			/* qemu start to exit, host time */
	double boot_s;			/* guest uptime when the command started */
	char accel[16];			/* "kvm" or "tcg" */
	char run_dir[XK_PATH_MAX];	/* console.log lives here */
	char *output;			/* captured output (malloc'd), may be NULL */
	size_t output_len;
};

/*
 * Boots the kernel under QEMU, runs the command as root with the host's root
 * file system mounted read-only under a writable overlay, and returns when the
 * guest powers off. Returns 0 when the command ran (its status is in res),
 * -ETIMEDOUT when the guest hung, -EIO when it died without a status.
 */
int xk_vm_run(const struct xk_kernel *k, const struct xk_vm_opts *opts,
	      struct xk_vm_result *res);
void xk_vm_result_free(struct xk_vm_result *res);

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
	char tmpl[128];		/* macro: its body with %lld for the value */
	long long def, min, max;
	bool has_def, has_bounds;
	char objects[512];	/* space-separated objects; "" to find them */
	char module_dir[256];	/* an out-of-tree module's directory, or "" */
	char description[256];
};

/* Finds a constant in a catalog file; -ENOENT names the catalog. */
int xk_catalog_find(const char *catalog, const char *name,
		    struct xk_constant *c);
/* Names of all constants of a catalog, newline-separated (malloc'd). */
int xk_catalog_list(const char *catalog, char **names);

#define XK_BUILD_MAX_OBJECTS 16
#define XK_BUILD_VARIANTS 3

struct xk_build_result {
	int nr_objects;
	char object[XK_BUILD_MAX_OBJECTS][128];
	char base[XK_BUILD_MAX_OBJECTS][XK_PATH_MAX];
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

struct xk_scope;
/* Analyses the built objects into a scope table (see include/xk/scope.h). */
int xk_gen(const struct xk_kernel *k, const struct xk_constant *c,
	   const struct xk_build_result *b, struct xk_scope *out);

/* Disassembly of [from, to) of a function, one instruction a line. */
int xk_disasm_range(const char *obj_path, const char *func,
		    unsigned long long from, unsigned long long to, char **text);

#ifdef __cplusplus
}
#endif
#endif /* XK_XK_H */
