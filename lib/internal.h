/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the files of libxk; not part of the public API. */
#ifndef XK_INTERNAL_H
#define XK_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "xk/xk.h"
#include "banned.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
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

/* Bounded string helpers: return -ENAMETOOLONG instead of truncating. */
int xk_strlcpy(char *dst, const char *src, size_t size);
int xk_snprintf(char *dst, size_t size, const char *fmt, ...) __printf(3, 4);

/* Files. */
int xk_mkdir_p(const char *path);
int xk_rm_rf(const char *path);
bool xk_exists(const char *path);
int xk_read_file(const char *path, char **buf, size_t *len);
int xk_write_file(const char *path, const void *buf, size_t len, int mode);
int xk_copy_file(const char *src, const char *dst, int mode);
int xk_file_tail(const char *path, int lines, char *out, size_t size);
double xk_now(void);

/*
 * Runs argv[0] (searched in PATH) and waits for it. Its standard output and
 * error are appended to log_path when given (else they are inherited); with
 * capture, standard output is returned in *capture (malloc'd, NUL
 * terminated). Returns the exit status (>= 0), or a negative errno when it
 * could not be started or was killed by a signal.
 */
struct xk_cmd {
	const char *const *argv;
	const char *cwd;
	const char *log_path;
	char **capture;
	const char *const *env_add;	/* extra NAME=value strings */
};
int xk_run(const struct xk_cmd *cmd);

/* Runs and turns a non-zero status into an error naming the step. */
int xk_run_step(const char *what, const struct xk_cmd *cmd);

/* Finds an executable in PATH (or at an absolute path). */
int xk_which(const char *name, char *out, size_t size);

#endif
