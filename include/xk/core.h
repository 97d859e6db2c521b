/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libxk core: what every part of the library shares (errors, printing,
 * options). xk/xk.h includes every part of the public API.
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
#ifndef XK_CORE_H
#define XK_CORE_H

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

#define XK_PATH_MAX 4096

/* The cache directory: override, else $XK_CACHE, else ~/.cache/xkernel. */
const char *xk_cache_dir(const char *override);

#ifdef __cplusplus
}
#endif
#endif /* XK_CORE_H */
