// SPDX-License-Identifier: GPL-2.0
/*
 * xk: the xkernel command-line tool.
 *
 *   xk [-j] [-q] OBJECT COMMAND [ARGS]
 *
 * Objects follow the flow of one constant: kernel (provision the target),
 * vm (the guest harness). Every command has a help page (xk help OBJECT
 * COMMAND, or xk OBJECT COMMAND -h) and a JSON form of its output (-j);
 * options may stand anywhere (opts.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

bool json_output;
bool quiet;
static struct json json_writer;
struct json *jw = &json_writer;

static char *err_capture;
static size_t err_capture_size;

struct err_capture p_err_capture(char *buf, size_t size)
{
	struct err_capture prev = { err_capture, err_capture_size };

	err_capture = buf;
	err_capture_size = size;
	if (buf && size)
		buf[0] = '\0';
	return prev;
}

void p_err(const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err_capture) {
		if (!err_capture[0])
			snprintf(err_capture, err_capture_size, "%s", msg);
		return;
	}
	if (json_output) {
		struct json j = { .f = stdout };

		json_begin_object(&j, NULL);
		json_str(&j, "error", msg);
		json_end_object(&j);
	} else {
		fprintf(stderr, "xk: error: %s\n", msg);
	}
}

int p_lib_err(const char *what, int err)
{
	p_err("%s: %s", what, xk_last_error()[0] && err ? xk_last_error()
							 : strerror(-err));
	return XK_EXIT_FAIL;
}

int p_usage(const char *topic, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p_err("%s (see 'xk help%s%s')", msg, topic[0] ? " " : "", topic);
	return XK_EXIT_USAGE;
}

static int print_level(enum xk_print_level level, const char *fmt, va_list ap)
{
	if (level == XK_DEBUG && !getenv("XK_DEBUG"))
		return 0;
	if (quiet && level != XK_WARN)
		return 0;
	fputs("xk: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

static int do_version(void *args, int argc, char **argv)
{
	(void)args;
	(void)argc;
	(void)argv;
	if (json_output) {
		json_begin_object(jw, NULL);
		json_str(jw, "version", XK_VERSION);
		json_end_object(jw);
	} else {
		printf("xk %s\n", XK_VERSION);
	}
	return 0;
}

const struct cli_cmd cmd_version = { "version", do_version, .max_args = 0 };

/* xk itself and the objects with commands: the options before a command */
static struct { bool version; } root_args;
static const struct cli_opt root_opts[] = {
	{ "version", 'V', CLI_FLAG, offsetof(typeof(root_args), version) },
	{ NULL },
};
static const struct cli_cmd root = { "", .opts = root_opts, .args = &root_args,
				     .max_args = -1, .args_end_options = true };
static const struct cli_cmd group_kernel = { "kernel", .max_args = -1,
					     .args_end_options = true };
static const struct cli_cmd group_vm = { "vm", .max_args = -1,
					 .args_end_options = true };

static const struct cli_cmd *const commands[] = {
	&group_kernel, &cmd_kernel_fetch, &cmd_kernel_info, &cmd_kernel_list,
	&cmd_kernel_use, &cmd_kernel_exec,
	&group_vm, &cmd_vm_run, &cmd_vm_shell,
	&cmd_build, &cmd_gen, &cmd_load, &cmd_set, &cmd_unload, &cmd_status,
	&cmd_settle,
	&cmd_apply, &cmd_tune, &cmd_doctor,
	&cmd_help, &cmd_version,
};

const struct cli_cmd *cli_command(const char *topic)
{
	if (!topic[0])
		return &root;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i]->topic, topic))
			return commands[i];
	return NULL;
}

/* The command named by the words of an object's topic and then word. */
static const struct cli_cmd *find_command(const char *object, const char *word)
{
	char topic[128];

	snprintf(topic, sizeof(topic), "%s%s%s", object, object[0] ? " " : "",
		 word);
	return cli_command(topic);
}

/*
 * The cache of an installed xk run by root is /var/lib/xkernel (made by the
 * package), so that xk apply at boot and an administrator share the scope
 * tables; $XK_CACHE always wins, and a development tree's build/xk (a
 * catalog/ beside it) keeps ~/.cache/xkernel.
 */
static void default_cache(void)
{
	const char *env = getenv("XK_CACHE");
	char top[4096];
	struct stat sb;

	if ((env && *env) || geteuid() != 0 || stat(XK_SYSTEM_CACHE, &sb) ||
	    !S_ISDIR(sb.st_mode) || dev_tree(top, sizeof(top)))
		return;
	setenv("XK_CACHE", XK_SYSTEM_CACHE, 0);
}

int main(int argc, char **argv)
{
	const struct cli_cmd *c = &root, *next;

	json_writer.f = stdout;
	default_cache();
	xk_set_print(print_level);
	argc--;
	argv++;
	for (;;) {
		int st = cli_parse(c, &argc, argv);

		if (st != CLI_RUN)
			return st;
		if (root_args.version)
			return do_version(NULL, 0, NULL);
		if (c->fn)
			return c->fn(c->args, argc, argv);
		if (argc < 1 && c == &root) {
			print_help("");
			return XK_EXIT_USAGE;
		}
		if (argc < 1)
			return p_usage(c->topic, "'xk %s' needs a command", c->topic);
		next = find_command(c->topic, argv[0]);
		if (!next)
			return p_usage(c->topic, "unknown command '%s%s%s'", c->topic,
				       c->topic[0] ? " " : "", argv[0]);
		c = next;
		argc--;
		argv++;
	}
}
