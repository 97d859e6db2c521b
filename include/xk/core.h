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
#include <sys/types.h>

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

/* ------------------------------------------------------------------ */
/* Child processes                                                    */
/* ------------------------------------------------------------------ */

/*
 * A child process, started one way for the library and its tools (no shell
 * unless argv names one). argv[0] is searched in PATH. Standard input is
 * in_fd when > 0, else ours with inherit_stdin, else /dev/null; standard
 * error goes to err_fd when > 0, else is appended to log_path when given,
 * else is inherited; standard output goes to out_fd when > 0, else to
 * log_path, else is inherited; xk_run can capture it instead. A failure's
 * cause goes to xk_last_error(); being the library's own helpers too, these
 * do not clear an earlier one when they succeed.
 */
struct xk_cmd {
	const char *const *argv;
	const char *cwd;
	const char *log_path;
	char **capture;			/* xk_run: standard output (malloc'd) */
	const char *const *env_add;	/* extra NAME=value strings */
	/*
	 * NULL or "": on this host. Else a Debian system root the command
	 * runs in (chroot), the host's directories outside /usr, /etc, /var
	 * and the like seen at the same paths (a kernel's toolchain)
	 */
	const char *root;
	bool inherit_stdin;
	int in_fd, out_fd, err_fd;
};

/* Starts a child; capture is not allowed (use xk_run). */
int xk_spawn(const struct xk_cmd *cmd, pid_t *pid);
/*
 * Waits for pid (-1: any child; *reaped says which). Returns its exit
 * status (>= 0), or a negative errno when it was killed by a signal.
 */
int xk_wait(pid_t pid, pid_t *reaped);
/* Sends sig to a child and reaps it; nothing for pid <= 0. */
void xk_stop(pid_t pid, int sig);
/* Runs a child to its end: its exit status, or a negative errno. */
int xk_run(const struct xk_cmd *cmd);
/* Runs and turns a non-zero status into an error naming the step. */
int xk_run_step(const char *what, const struct xk_cmd *cmd);

#ifdef __cplusplus
}
#endif
#endif /* XK_CORE_H */
