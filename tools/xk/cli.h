/* SPDX-License-Identifier: GPL-2.0 */
/* Shared state and helpers of the xk command-line tool. */
#ifndef XK_CLI_H
#define XK_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "json.h"
#include "banned.h"
#include "xk/xk.h"

/* exit statuses of xk itself (a guest command's own status passes through) */
#define XK_EXIT_OK 0
#define XK_EXIT_FAIL 1
#define XK_EXIT_USAGE 2
#define XK_EXIT_TIMEOUT 124
#define XK_EXIT_HARNESS 125

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern bool json_output;
extern bool quiet;
extern struct json *jw;

/* One place where errors are reported: text on stderr, or JSON on stdout. */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While buf is set, p_err keeps the first error there instead of printing
 * it (xk apply names the constant with the cause); NULL: print again.
 * Returns the capture it replaces, to be set again after. */
struct err_capture {
	char *buf;
	size_t size;
};
struct err_capture p_err_capture(char *buf, size_t size);
/* Reports the library's last error after a failed call: XK_EXIT_FAIL. */
int p_lib_err(const char *what, int err);
/* Usage error: names the problem and the help topic; returns XK_EXIT_USAGE. */
int p_usage(const char *topic, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Options (opts.c): each command describes its options in a table, and one
 * parser reads them, anywhere on the command line, together with the global
 * ones (-j/--json, -q/--quiet, -h/--help: that command's help page).
 * A value goes to the field at .off in the command's .args, or to .var.
 */
enum cli_kind {
	CLI_FLAG,	/* bool: true when given */
	CLI_STR,	/* const char *: the argument */
	CLI_INT,	/* int: a decimal number from .min to .max */
	CLI_NUM,	/* struct cli_num: any number (strtoll base 0) */
	CLI_ENUM,	/* int: the index of the argument in .names */
	CLI_LIST,	/* struct cli_list: each argument appended */
	CLI_HELP,	/* prints the command's help page; it does not run */
};

struct cli_opt {
	const char *name;		/* --name */
	char short_name;		/* -c, or 0 */
	enum cli_kind kind;
	size_t off;			/* of the field in the command's args */
	long long min, max;		/* CLI_INT */
	const char *const *names;	/* CLI_ENUM: NULL-terminated */
	const char *range;		/* CLI_INT: "1 to 60000 ms": says
					   "--name is RANGE" when out of it */
	bool *var;			/* CLI_FLAG: this instead of .off */
};

struct cli_num {
	long long n;
	bool given;
};

#define CLI_LIST_MAX 32
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

struct cli_cmd {
	const char *topic;	/* its words ("vm run"), and its help page */
	/* argv: the positional arguments, options taken out */
	int (*fn)(void *args, int argc, char **argv);
	const struct cli_opt *opts;	/* ends with { NULL }; NULL: none */
	void *args;		/* where the options go, with the defaults */
	int max_args;		/* more positionals are a usage error; -1: any */
	bool args_end_options;	/* the first positional ends the options:
				   the rest is a command line (vm run) */
};

/*
 * Reads the words after a command's own: options into c->args and the global
 * flags, positionals moved to the front of argv (NULL after them), *argc
 * set to their number.
 * Returns CLI_RUN when the command is to run, else xk's exit status (a usage
 * error reported, or the help page printed).
 */
#define CLI_RUN (-1)
int cli_parse(const struct cli_cmd *c, int *argc, char **argv);
/* The command of a topic ("vm run"; "": xk itself), or NULL. */
const struct cli_cmd *cli_command(const char *topic);
/* Its options, then the global ones, one a line: --name, --name= when it
 * takes a value, --name=a|b|c for a choice (for shell completion). */
void cli_print_options(const struct cli_cmd *c);
/* Parses a number as options do: 0, or a usage error of topic reported. */
int cli_number(const char *topic, const char *s, long long *v);

/* the commands, one per cmd_*.c */
extern const struct cli_cmd cmd_kernel_fetch, cmd_kernel_info, cmd_kernel_list,
	cmd_kernel_use, cmd_kernel_exec, cmd_vm_run,
	cmd_vm_shell, cmd_build, cmd_gen, cmd_load, cmd_set, cmd_unload,
	cmd_status, cmd_settle, cmd_apply, cmd_tune, cmd_doctor, cmd_help,
	cmd_version;

/*
 * The runtime half: xk load, set, unload and status (cmd_load.c, cmd_set.c,
 * cmd_unload.c, cmd_status.c) and the cache of scope tables (table_cache.c).
 */
struct xk_scope;
struct xk_rt_result;

#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* --mode and --timeout (at most the module's XK_MAX_TIMEOUT_MS), for a
 * command whose options struct has mode and timeout_ms (load, set, apply,
 * tune) */
#define CLI_MODE_TIMEOUT_OPTS(TYPE, MODE_NAMES)                                \
	{ "mode", 'm', CLI_ENUM, offsetof(TYPE, mode), .names = MODE_NAMES },   \
	{ "timeout", 't', CLI_INT, offsetof(TYPE, timeout_ms), 1,               \
	  XK_MAX_TIMEOUT_MS, .range = "1 to " CLI_STR(XK_MAX_TIMEOUT_MS) " ms" }
/* ... and --partial (load, set, apply) */
#define CLI_TRANSITION_OPTS(TYPE, MODE_NAMES)                                  \
	CLI_MODE_TIMEOUT_OPTS(TYPE, MODE_NAMES),                                \
	{ "partial", 0, CLI_FLAG, offsetof(TYPE, partial) }

/* The options of load and set. */
struct load_args {
	const char *catalog;
	struct cli_num value;		/* --value */
	int mode;			/* enum xk_mode */
	int timeout_ms;
	const char *policy;		/* load: a BPF object */
	struct cli_list params;		/* load --param NAME=VALUE */
	bool partial;			/* accept refused uses (half-applied) */
	bool no_build;			/* a value not prepared is refused */
	bool settle;			/* set --settle: then settle it */
	bool silent;			/* load_table: no report of the load */
};
extern const struct cli_opt load_opts[];
extern const struct cli_opt set_opts[];
/* cmd_settle.c: a settle's figures, into the caller's JSON object or text */
void json_settle_fields(const struct xk_rt_settle_result *r);
void print_settled(const char *name, long long value,
		   const struct xk_rt_settle_result *r);
const char *mode_name(int mode);
/* /dev/xkernel; when missing, modprobe xkernel, then (development tree
 * only) insmod kmod/xkernel.ko beside build/xk. Reports the cause itself. */
int open_runtime(void);
/* Arms the table arg names (see table_load); xk's exit status. */
int load_table(const char *arg, const struct load_args *a);
/*
 * One transaction of several constants, the path of xk set A=1 B=2, xk
 * apply and xk tune: each constant not loaded yet is loaded at its
 * compiled-in value (its table made when missing), then all switch
 * together. keep_going: a constant that cannot be loaded, or whose value
 * is out of its bounds or chosen by a policy, is left out with the cause
 * in its why and the rest still switch; else it fails them all (reported).
 * When the commit fails, the constants loaded for it are unloaded again.
 * Returns 0, or XK_EXIT_FAIL with the cause reported.
 */
struct tx_item {
	const char *name;
	long long value;
	char why[512];		/* why it was left out; "" when it is in */
	bool loaded;		/* loaded by this transaction */
};
int set_transaction(const struct load_args *a, struct tx_item *it, int n,
		    bool keep_going, struct xk_rt_result *r);
/* Whether constant name is loaded; its status in *st when it is. */
struct xk_ioc_status;
bool is_loaded(const char *name, struct xk_ioc_status *st);
/* Prints what a load or set changed. */
void report_change(const char *verb, const char *name, long long from,
		   long long to, const struct xk_rt_result *r, int mode,
		   const struct xk_rt_settle_result *settled);

/* Where the cache keeps constant name's table; its directory made. */
void table_cache_path(const struct xk_kernel *k, const char *name,
		      char *path, size_t size);
/* Where packages ship tables: XK_SHIPPED_SCOPES/RELEASE/NAME.scope and
 * .../RELEASE/build-id ($XK_SCOPES_DIR instead when set). */
#define XK_SHIPPED_SCOPES "/usr/lib/xkernel/scopes"
/* The table of constant name for the running kernel: the cache's when it
 * has one (false), else a shipped one when there is one (true); path is
 * the cache's when neither exists. */
bool running_table_path(const char *name, char *path, size_t size);
/* A value for the table's per-value spans, built if needed (table_cache.c). */
int table_prepare_value(struct xk_scope *t, const char *path,
			const char *catalog, long long value, int fd,
			bool no_build);
bool table_has_value(const struct xk_scope *t, long long value);
/* The values t takes as a JSON array name of [from, to] ranges: its
 * proof's ranges, or its bounds (table_cache.c). */
void json_table_values(const char *name, const struct xk_scope *t);
/* A loaded constant's per-value spans given value (xk set's retry). */
int prepare_loaded(const char *name, const struct load_args *a,
		   long long value, int fd);
/* The table arg names, for the running kernel (table_cache.c). */
int table_load(const char *arg, const char *catalog, struct xk_scope *t,
	       char *path, size_t size);

/*
 * Child processes (spawn.c), from an argument vector, never a shell line:
 * cli_spawn starts one with the given descriptors (stdin -1: /dev/null,
 * stdout/stderr -1: inherited) through xk_spawn; cli_wait: its exit status,
 * 128 when a signal killed it, or -errno; cli_run: runs it to its end with
 * stdout and stderr captured (their last size - 1 bytes in out), its exit
 * status.
 */
int cli_spawn(const char *const *argv, int in_fd, int out_fd, int err_fd,
	      pid_t *pid);
int cli_wait(pid_t pid);
int cli_run(const char *const *argv, char *out, size_t size);

/* Prints the help page of a topic ("vm run"); -ENOENT if there is none. */
int print_help(const char *topic);

/* Where a packaged xk finds its catalog, and root's cache (main.c). */
#define XK_SYSTEM_CATALOG "/usr/share/xkernel/catalog/constants.conf"
#define XK_SYSTEM_CACHE "/var/lib/xkernel"
/* Whether xk runs from a development tree's build/ (a catalog/ beside it);
 * top: that tree. */
bool dev_tree(char *top, size_t size);

/* Common option: --release R (parsed by each command). */
int kernel_for_command(const char *release, struct xk_kernel *k);
const char *catalog_path(const char *opt);

#endif
