/* SPDX-License-Identifier: GPL-2.0 */
/* libxk core: helpers every part of libxk shares; not part of the public API. */
#ifndef XK_LIB_INTERNAL_H
#define XK_LIB_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "xk/core.h"
#include "banned.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define XK_STR_(x) #x
#define XK_STR(x) XK_STR_(x)
#define __printf(a, b) __attribute__((format(printf, a, b)))

/*
 * Options structs: a caller built against a newer header may pass a larger
 * struct, but the fields we do not know must then be zero.
 */
#define OPTS_VALID(opts, type)                                                 \
	(!(opts) || xk_opts_valid((const char *)(opts), sizeof(struct type),   \
				  (opts)->sz))
#define offsetofend(TYPE, FIELD) \
	(offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
#define OPTS_GET(opts, field, fallback)                                        \
	((opts) && (opts)->sz >= offsetofend(typeof(*(opts)), field) ?          \
		 (opts)->field : (fallback))
bool xk_opts_valid(const char *opts, size_t known, size_t user_sz);

/* Diagnostics through the callback set by xk_set_print(). */
void xk_print(enum xk_print_level level, const char *fmt, ...) __printf(2, 3);
#define pr_warn(fmt, ...) xk_print(XK_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) xk_print(XK_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) xk_print(XK_DEBUG, fmt, ##__VA_ARGS__)

/*
 * Records the cause of a failure for xk_last_error() and returns err, so
 * that a failing step reads: return xk_err(-ENOENT, "no such thing: %s", x);
 */
int xk_err(int err, const char *fmt, ...) __printf(2, 3);

/*
 * The public boundary: every function of include/xk/ clears the last error
 * when it is entered (xk_err_clear) and returns through xk_api_return, which
 * gives a failure that recorded no cause one naming the function and errno:
 * a failure is never reported with an earlier call's message, nor without one.
 */
void xk_err_clear(void);
int xk_api_return(const char *fn, int err);

/* Bounded string helpers: return -ENAMETOOLONG instead of truncating. */
int xk_strlcpy(char *dst, const char *src, size_t size);
int xk_snprintf(char *dst, size_t size, const char *fmt, ...) __printf(3, 4);

/* Strips leading and trailing white space in place. */
char *xk_trim(char *s);

/* Files. */
int xk_mkdir_p(const char *path);
int xk_rm_rf(const char *path);
bool xk_exists(const char *path);
int xk_read_file(const char *path, char **buf, size_t *len);
int xk_write_file(const char *path, const void *buf, size_t len, int mode);
int xk_copy_file(const char *src, const char *dst, int mode);
int xk_file_tail(const char *path, int lines, char *out, size_t size);
/*
 * An exclusive lock on path (created if missing) for what two xk processes
 * must not do at once in one place; what names it in the one line said
 * when another holds it and this one waits. A signal ends the wait
 * (-EINTR). Held until close(*fd) or the process ends. 0 or -errno.
 */
int xk_lock_file(const char *path, const char *what, int *fd);
double xk_now(void);


/* Finds an executable in PATH (or at an absolute path). */
int xk_which(const char *name, char *out, size_t size);

/* ---- the kernel's listings (proc.c) ---- */

struct xk_ksym {
	unsigned long long addr;
	char type;		/* t, T, d, ... */
	const char *name;
	const char *module;	/* NULL: vmlinux */
};

struct xk_kallsyms {
	struct xk_ksym *syms;	/* sorted by name, then address */
	size_t nr;
	unsigned long long text_addr;	/* _text, 0 if not listed */
	char *text;		/* the names point into it */
};

/* Reads a kallsyms listing (text_only: functions); -EINVAL if it lists none. */
int xk_kallsyms_read(const char *path, bool text_only, struct xk_kallsyms *ks);
/* The entries named name, *first the first of them; 0 if none. */
size_t xk_kallsyms_lookup(const struct xk_kallsyms *ks, const char *name,
			  const struct xk_ksym **first);
void xk_kallsyms_free(struct xk_kallsyms *ks);

#define XK_KPROBES_LIST "/sys/kernel/debug/kprobes/list"
#define XK_KPROBE_SYM_MAX 128

struct xk_kprobe {
	unsigned long long addr;
	char type;		/* k, r, ... */
	char sym[XK_KPROBE_SYM_MAX];
	unsigned long long offset;
	bool disabled, optimized, gone;
};

/* Every registered kprobe, from debugfs (malloc'd array). */
int xk_kprobes_list(struct xk_kprobe **list, size_t *nr);

#endif
