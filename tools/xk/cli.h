/* SPDX-License-Identifier: GPL-2.0 */
/* Shared state and helpers of the xk command-line tool. */
#ifndef XK_CLI_H
#define XK_CLI_H

#include <stdbool.h>

#include "json.h"
#include "banned.h"
#include "xk/xk.h"

/* exit statuses of xk itself (a guest command's own status passes through) */
#define XK_EXIT_OK 0
#define XK_EXIT_FAIL 1
#define XK_EXIT_USAGE 2
#define XK_EXIT_TIMEOUT 124
#define XK_EXIT_HARNESS 125

extern bool json_output;
extern bool quiet;
extern struct json *jw;

/* One place where errors are reported: text on stderr, or JSON on stdout. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports the library's last error after a failed call; returns XK_EXIT_FAIL. */
int p_lib_err(const char *what, int err);
/* Usage error: names the problem and the help topic. */
int p_usage(const char *topic, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};
/* Runs the entry of cmds named by argv[0]; topic names the help page. */
int cmd_select(const struct cmd *cmds, int argc, char **argv,
	       const char *topic);

int do_kernel(int argc, char **argv);
int do_vm(int argc, char **argv);
int do_help(int argc, char **argv);
int do_build_cmd(int argc, char **argv);
int do_gen_cmd(int argc, char **argv);
int do_load_cmd(int argc, char **argv);
int do_set_cmd(int argc, char **argv);
int do_unload_cmd(int argc, char **argv);
int do_status_cmd(int argc, char **argv);
const char *catalog_path(const char *opt);

/* Prints the help page of a topic ("vm run"); -ENOENT if there is none. */
int print_help(const char *topic);

/* Common option: --release R (parsed by each command). */
int kernel_for_command(const char *release, struct xk_kernel *k);

#endif
